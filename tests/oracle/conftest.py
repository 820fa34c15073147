"""Shared machinery of the oracle suite: where hfx is, how to run it, tiny checkpoints built once
per session, exports cached per session, ONNX Runtime sessions, and the comparison helper.

hfx is found through $HFX_BIN (default <repo>/build/hfx). A missing binary FAILS every test that
needs it; nothing is ever skipped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# Offline, quiet, and light on a 2-core machine. Set before transformers / torch are imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest
import torch

import transformers

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()

sys.path.insert(0, str(Path(__file__).resolve().parent))

import models  # noqa: E402  (tests/oracle/models.py)

REPO = Path(__file__).resolve().parents[2]
HFX_BIN = Path(os.environ.get("HFX_BIN") or REPO / "build" / "hfx")

# Every logit of the ONNX model must be within this of transformers' eager float32 logits.
PARITY_ATOL = 1e-4

HFX_TIMEOUT_S = 300


def hfx_bin() -> Path:
    """The hfx binary; fails (never skips) the calling test when it is not there."""
    if not HFX_BIN.is_file() or not os.access(HFX_BIN, os.X_OK):
        pytest.fail(
            f"hfx binary not found or not executable: {HFX_BIN} "
            "(build it with `make build`, or point HFX_BIN at it)",
            pytrace=False,
        )
    return HFX_BIN


def run_hfx(args, *, timeout: float = HFX_TIMEOUT_S, cwd=None) -> subprocess.CompletedProcess:
    """Run `hfx ARGS...`; returns the CompletedProcess (text stdout/stderr), whatever the exit code."""
    cmd = [str(hfx_bin())] + [str(a) for a in args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`{' '.join(cmd)}` did not finish in {timeout} s\nstderr:\n{e.stderr}", pytrace=False)


def assert_config_refused(src, tmp_path, edit: dict, words: str, *flags) -> None:
    """`hfx export` of a copy of checkpoint `src` with `edit` merged into its config.json exits 2 naming `words` and
    config.json, and writes nothing (flags: the export's, e.g. --dynamic)."""
    import shutil
    bad, out = tmp_path / "bad", tmp_path / "out"
    shutil.copytree(src, bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, **edit}))
    proc = run_hfx(["export", bad, out, "--format", "onnx", *flags])
    assert proc.returncode == 2 and words in proc.stderr and "config.json" in proc.stderr, describe(proc)
    assert not out.exists()


def built_once(make):
    """`make(name)` memoized: a module's checkpoints (or reference models), each built the first
    time a test asks for it and the same one after. The module fixtures that hold them all take
    this one shape, so a test file says only how one checkpoint is made."""
    made = {}

    def get(name):
        if name not in made:
            made[name] = make(name)
        return made[name]
    return get


def describe(proc: subprocess.CompletedProcess) -> str:
    cmd = " ".join(str(a) for a in proc.args)
    return (f"`{cmd}` exited {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}"
            f"\n--- stderr ---\n{proc.stderr[-4000:]}")


def export(model_dir, out_dir, *extra, dynamic: bool = True) -> subprocess.CompletedProcess:
    """`hfx export MODEL_DIR OUT_DIR --format onnx [--dynamic] EXTRA...`, which must succeed."""
    args = ["export", model_dir, out_dir, "--format", "onnx"]
    if dynamic:
        args.append("--dynamic")
    proc = run_hfx(args + list(extra))
    assert proc.returncode == 0, "export failed:\n" + describe(proc)
    return proc


def cached_exports(root: Path, checkpoint_of, *, prefix=()):
    """get(name, *flags, checkpoint=None): `hfx export CHECKPOINT OUT *prefix *flags` of checkpoint_of(name)
    (or `checkpoint`), made once per arguments under `root`; a failed export fails every test that
    asks for it. "--config-json", TEXT among the flags is written to a file passed as --config."""
    done = {}

    def get(name, *flags, checkpoint=None):
        key = (name, flags, str(checkpoint))
        if key not in done:
            out = root / f"{name}-{len(done)}"
            if "--config-json" in flags:
                i = flags.index("--config-json")
                cfg = root / f"{out.name}-cfg.json"
                cfg.write_text(flags[i + 1])
                flags = flags[:i] + ("--config", str(cfg)) + flags[i + 2:]
            proc = run_hfx(["export", checkpoint or checkpoint_of(name), out, *prefix, *flags])
            done[key] = out if proc.returncode == 0 else "export failed:\n" + describe(proc)
        if isinstance(done[key], str):
            pytest.fail(done[key], pytrace=False)
        return done[key]
    return get


# ---- checkpoints ------------------------------------------------------------------------------


class Checkpoints:
    """Tiny checkpoints, each built (and verified against transformers) on first use."""

    def __init__(self, root: Path):
        self.root = root
        self._dirs: dict[str, Path] = {}
        self._param_counts: dict[str, int] = {}

    def __call__(self, name: str) -> Path:
        if name not in self._dirs:
            variant = models.VARIANTS[name]
            self._dirs[name] = models.save_checkpoint(variant, self.root / name)
        return self._dirs[name]

    def num_parameters(self, name: str) -> int:
        if name not in self._param_counts:
            self._param_counts[name] = models.num_parameters(self(name))
        return self._param_counts[name]


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory) -> Checkpoints:
    return Checkpoints(tmp_path_factory.mktemp("checkpoints"))


# ---- exports ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Exported:
    name: str
    model_dir: Path
    out_dir: Path
    proc: subprocess.CompletedProcess

    @property
    def onnx_path(self) -> Path:
        return self.out_dir / "model.onnx"


class Exports:
    """`hfx export --dynamic` of each variant, run once per session. A failed export is
    remembered and fails every test that asks for it, with hfx's message."""

    def __init__(self, root: Path, checkpoints: Checkpoints):
        self.root = root
        self.checkpoints = checkpoints
        self._done: dict[tuple, Exported | str] = {}
        self._sessions: dict[Path, object] = {}

    def __call__(self, name: str, *extra: str, dynamic: bool = True) -> Exported:
        key = (name, dynamic, extra)
        if key not in self._done:
            model_dir = self.checkpoints(name)
            out_dir = self.root / f"{name}-{len(self._done)}"
            args = ["export", model_dir, out_dir, "--format", "onnx"]
            if dynamic:
                args.append("--dynamic")
            proc = run_hfx(args + list(extra))
            if proc.returncode != 0:
                self._done[key] = "export failed:\n" + describe(proc)
            elif not (out_dir / "model.onnx").is_file():
                self._done[key] = f"export exited 0 but wrote no {out_dir / 'model.onnx'}\n" + describe(proc)
            else:
                self._done[key] = Exported(name, model_dir, out_dir, proc)
        result = self._done[key]
        if isinstance(result, str):
            pytest.fail(result, pytrace=False)
        return result

    def session(self, exported: Exported):
        path = exported.onnx_path
        if path not in self._sessions:
            self._sessions[path] = ort_session(path)
        return self._sessions[path]


@pytest.fixture(scope="session")
def exports(tmp_path_factory, checkpoints) -> Exports:
    return Exports(tmp_path_factory.mktemp("exports"), checkpoints)


# ---- ONNX Runtime -----------------------------------------------------------------------------


def ort_session(onnx_path: Path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(onnx_path), sess_options=opts, providers=["CPUExecutionProvider"])


def run_ort(session, inputs: dict) -> np.ndarray:
    """Feed input_ids / attention_mask / position_ids; return `logits`."""
    feed = {k: np.ascontiguousarray(v, dtype=np.int64) for k, v in inputs.items()}
    (logits,) = session.run(["logits"], feed)
    return logits


def run_exported(exported_dir: Path, inputs: dict) -> np.ndarray:
    """Run the model.onnx in an exported directory (a fresh session) on numpy inputs."""
    return run_ort(ort_session(Path(exported_dir) / "model.onnx"), inputs)


def load_pt2(path) -> torch.export.ExportedProgram:
    """torch.export.load of an hfx .pt2, the transformers output classes its export.json's specs name registered first,
    as transformers.exporters' loader registers them (a plain forward returns its model's output class)."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (the ops a quantized program dequantizes with)
    from transformers.exporters.metadata import register_treespec_types
    manifest = Path(path).parent / "export.json"
    if manifest.is_file():
        for component in json.loads(manifest.read_text())["components"].values():
            if component["metadata"].get("out_spec"):
                register_treespec_types(component["metadata"]["out_spec"])
    return torch.export.load(str(path))


def call_pt2(program: torch.export.ExportedProgram, feed: dict) -> tuple:
    """A loaded .pt2 run on feed (its inputs by name, arrays or tensors): with keywords where it is called as the model
    (a plain forward of a family that records its output class: that class's fields come back in order), else
    positionally over its user inputs; its outputs as a tuple of tensors."""
    tensors = {n: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for n, v in feed.items()}
    keys = program.call_spec.in_spec.child(1).context
    module = program.module()
    with torch.no_grad():
        if keys:
            got = module(**{k: tensors[k] for k in keys})
        else:
            user = [s.arg.name for s in program.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
            got = module(*[tensors[n] for n in user])
    if hasattr(got, "to_tuple"):
        return got.to_tuple()
    return (got,) if isinstance(got, torch.Tensor) else tuple(got)


def run_forward(fmt: str, out: Path, feed: dict, want_names=None) -> dict:
    """A forward export's `model` graph in `out` run in its format's runtime on `feed` (the graph's inputs by name, in
    its order): {output name: array}. ONNX Runtime, OpenVINO (f32 inference), torch (.pt2: its outputs named as
    want_names, in order), ExecuTorch (portable or XNNPACK, as exported: named by export.json)."""
    out = Path(out)
    if fmt == "onnx":
        sess = ort_session(out / "model.onnx")
        names = [i.name for i in sess.get_inputs()]
        assert names == [n for n in feed if n in names] and set(names) <= set(feed), f"the graph takes {names}"
        return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {n: feed[n] for n in names})))
    if fmt == "openvino":
        import openvino as ov
        compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        res = compiled({i.get_any_name(): feed[i.get_any_name()] for i in compiled.inputs})
        return {o.get_any_name(): np.array(res[o]) for o in compiled.outputs}
    if fmt == "dynamo":
        return dict(zip(want_names, (t.numpy() for t in call_pt2(load_pt2(out / "model.pt2"), feed))))
    import etutil
    meta = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]
    return dict(zip(meta["output_names"], etutil.worker().run(out / "model.pte", [feed[n] for n in meta["input_names"]])))


# ---- comparison -------------------------------------------------------------------------------


def padded_feed(vocab: int, batch: int = 2, seq: int = 16, pad: int = 3) -> dict:
    """A causal LM's inputs (fixed seed): random ids, the second row left-padded by `pad`, positions counting the real
    tokens."""
    ids = np.random.default_rng(7).integers(0, vocab - 3, (batch, seq)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, :pad] = 0
    return {"input_ids": ids, "attention_mask": mask, "position_ids": np.clip(mask.cumsum(1) - 1, 0, None)}


def eager_logits(model, feed: dict) -> np.ndarray:
    """The logits of transformers' `model` on a numpy feed."""
    with torch.no_grad():
        return model(**{k: torch.from_numpy(v) for k, v in feed.items()}).logits.numpy()


def real_token_diff(got: np.ndarray, want: np.ndarray, feed: dict) -> float:
    """The largest difference over the real tokens (a padded row's pad positions attend to nothing: undefined)."""
    real = feed["attention_mask"].astype(bool)
    assert np.abs(want[real]).max() > 1e-2
    return float(np.abs(got[real] - want[real]).max())


def assert_export_refused(src, out: Path, words: str, *flags) -> None:
    """`hfx export SRC OUT FLAGS...` exits 2 naming `words` on stderr and writes nothing."""
    proc = run_hfx(["export", src, out, *flags])
    assert proc.returncode == 2 and words in proc.stderr, describe(proc)
    assert not Path(out).exists()


def assert_export_logits(src, model, fmt: str, out: Path, *flags) -> None:
    """`hfx export SRC OUT --format FMT FLAGS...` succeeds, and its forward's logits on a padded batch are within 1e-4
    of transformers' `model` over the real tokens."""
    proc = run_hfx(["export", src, out, "--format", fmt, *flags])
    assert proc.returncode == 0, describe(proc)
    feed = padded_feed(model.config.vocab_size)
    got = run_forward(fmt, out, feed, want_names=["logits"])["logits"]
    assert real_token_diff(got, eager_logits(model, feed), feed) <= 1e-4


def assert_logits_close(got: np.ndarray, want: np.ndarray, label: str, atol: float = PARITY_ATOL) -> float:
    """Every element within atol (padded positions included). Prints and returns the max diff."""
    assert got.shape == want.shape, f"{label}: ONNX logits shape {got.shape}, transformers {want.shape}"
    assert got.dtype == np.float32, f"{label}: ONNX logits dtype {got.dtype}, expected float32"
    assert np.isfinite(want).all(), f"{label}: the reference itself is not finite (harness bug)"
    bad = ~np.isfinite(got)
    assert not bad.any(), (
        f"{label}: {int(bad.sum())} non-finite ONNX logits, first at (batch, position, vocab) "
        f"{tuple(int(i) for i in np.argwhere(bad)[0])}"
    )
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    max_diff = float(diff.max()) if diff.size else 0.0
    print(f"{label}: max abs diff {max_diff:.3g} (tolerance {atol:g})")
    if max_diff > atol:
        b, s, v = (int(i) for i in np.unravel_index(int(diff.argmax()), diff.shape))
        per_pos = diff.max(axis=-1)
        worst = ", ".join(
            f"(b{int(i)},s{int(j)})={per_pos[i, j]:.3g}"
            for i, j in zip(*np.unravel_index(np.argsort(per_pos, axis=None)[::-1][:6], per_pos.shape))
        )
        pytest.fail(
            f"{label}: max abs diff {max_diff:.6g} > {atol:g} at (batch {b}, position {s}, token {v}): "
            f"onnx {got[b, s, v]:.6g} vs transformers {want[b, s, v]:.6g}; worst positions: {worst}",
            pytrace=False,
        )
    return max_diff


# ---- text matching helpers (for messages and `inspect` output) -------------------------------


def number_forms(n: int) -> list[str]:
    """How an integer may be printed: 1234567, 1,234,567, 1_234_567, 0x12d687."""
    return [str(n), f"{n:,}", f"{n:_}", f"0x{n:x}"]


def has_number(text: str, n: int) -> bool:
    for form in number_forms(n):
        if re.search(r"(?<![\w.,])" + re.escape(form) + r"(?![\w]|[.,]\d)", text):
            return True
    return False
