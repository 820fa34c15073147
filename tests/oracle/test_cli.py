"""The command line: --help, `hfx inspect` (checkpoints and exports), the files an export writes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import onnx
import pytest

import models
from conftest import describe, export, has_number, hfx_bin, run_hfx

BASE_OUTPUTS = {
    "model.onnx",
    "model.onnx.data",
    "config.json",
    "generation_config.json",
    "export_config.json",
    "export.json",
}

DTYPE_SPELLINGS = {
    "F32": ("f32", "float32", "fp32"),
    "F16": ("f16", "float16", "fp16"),
    "BF16": ("bf16", "bfloat16"),
}

EXPORT_FLAGS = ["--format", "--dynamic", "--config", "--batch-size", "--sequence-length", "--opset",
                "--dtype", "--quiet"]


def _tree_digest(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _token_re(word: str) -> re.Pattern:
    return re.compile(r"(?<![\w.\-])" + re.escape(word) + r"(?![\w\-]|\.\w)")


# ---- help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--help"], ["export", "--help"], ["inspect", "--help"]],
                         ids=["hfx", "export", "inspect"])
def test_help(args):
    proc = run_hfx(args)
    assert proc.returncode == 0, describe(proc)
    text = proc.stdout + proc.stderr
    assert text.strip(), f"`hfx {' '.join(args)}` printed nothing"
    if args == ["--help"]:
        for cmd in ("export", "inspect"):
            assert cmd in text, f"`hfx --help` does not mention `{cmd}`:\n{text}"
    if args[0] == "export":
        missing = [f for f in EXPORT_FLAGS if f not in text]
        assert not missing, f"`hfx export --help` does not mention {missing}:\n{text}"


# ---- inspect a checkpoint -----------------------------------------------------------------------


def _tensor_table(model_dir: Path) -> dict:
    """name -> (dtype string, shape, nbytes), over all safetensors files."""
    table = {}
    for f in sorted(model_dir.glob("*.safetensors")):
        header, _ = models.read_safetensors(f)
        for name, info in header.items():
            if name == "__metadata__":
                continue
            b, e = info["data_offsets"]
            table[name] = (info["dtype"], info["shape"], e - b)
    return table


def _line_with(text: str, word: str) -> str | None:
    pat = _token_re(word)
    for line in text.splitlines():
        if pat.search(line):
            return line
    return None


def _has_shape(line: str, shape: list) -> bool:
    if not shape:
        return True
    pat = r"(?<!\d)" + r"\D{1,4}".join(str(d) for d in shape) + r"(?!\d)"
    return re.search(pat, line) is not None


@pytest.mark.parametrize("name", ["llama_default", "llama_tied", "llama_bf16", "llama_sharded", "qwen3_tied",
                                  "mistral_swa", "llama_oldcfg_linear"])
def test_inspect_checkpoint(checkpoints, name):
    variant = models.VARIANTS[name]
    model_dir = checkpoints(name)
    proc = run_hfx(["inspect", model_dir])
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout
    assert variant.architecture in out, f"architecture {variant.architecture} not in inspect output:\n{out}"

    n_params = checkpoints.num_parameters(name)
    assert has_number(out, n_params), (
        f"parameter count {n_params} (transformers' sum of p.numel(), tied weights once) "
        f"not in inspect output:\n{out}"
    )

    problems = []
    for tensor, (dtype, shape, nbytes) in _tensor_table(model_dir).items():
        line = _line_with(out, tensor)
        if line is None:
            problems.append(f"{tensor}: not listed")
            continue
        low = line.lower()
        if not any(re.search(r"(?<![a-z0-9])" + s + r"(?![a-z0-9])", low) for s in DTYPE_SPELLINGS[dtype]):
            problems.append(f"{tensor}: dtype {dtype} not on its line: {line!r}")
        if not _has_shape(line, shape):
            problems.append(f"{tensor}: shape {shape} not on its line: {line!r}")
        if not has_number(line, nbytes):
            problems.append(f"{tensor}: byte size {nbytes} not on its line: {line!r}")
    assert not problems, "inspect output:\n" + out + "\nproblems:\n" + "\n".join(problems[:10])


# ---- inspect an export --------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["dir", "file"])
def test_inspect_export(exports, target):
    exported = exports("llama_default")
    path = exported.out_dir if target == "dir" else exported.onnx_path
    proc = run_hfx(["inspect", path])
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout
    for io_name in ("input_ids", "attention_mask", "position_ids", "logits"):
        assert _token_re(io_name).search(out), f"{io_name} not in `hfx inspect {path}`:\n{out}"
    for dim in ("batch_size", "sequence_length"):
        assert dim in out, f"symbolic dim {dim} not in `hfx inspect {path}`:\n{out}"
    graph = onnx.load(str(exported.onnx_path), load_external_data=False).graph
    histogram = Counter(node.op_type for node in graph.node)
    missing = []
    for op, count in sorted(histogram.items()):
        line = _line_with(out, op)
        if line is None or not has_number(line, count):
            missing.append(f"{op} x{count}")
    assert not missing, f"op histogram entries missing from `hfx inspect {path}`: {missing}\n{out}"


# ---- what an export writes ------------------------------------------------------------------------


def test_export_outputs(checkpoints, tmp_path):
    model_dir = checkpoints("llama_default")
    before = _tree_digest(model_dir)
    out = tmp_path / "out"
    export(model_dir, out)
    files = {p.name for p in out.iterdir()}
    assert files == BASE_OUTPUTS, f"export wrote {sorted(files)}, expected {sorted(BASE_OUTPUTS)}"
    assert not [p for p in out.iterdir() if p.is_dir()], "export wrote subdirectories"
    assert json.loads((out / "config.json").read_text()) == json.loads((model_dir / "config.json").read_text())
    assert json.loads((out / "generation_config.json").read_text()) == json.loads(
        (model_dir / "generation_config.json").read_text())
    cfg = json.loads((out / "export_config.json").read_text())
    assert isinstance(cfg, dict) and cfg.get("export_format") == "onnx", f"export_config.json: {cfg}"
    assert cfg.get("dynamic") is True, f"export_config.json after --dynamic: {cfg}"
    meta = json.loads((out / "export.json").read_text())
    assert isinstance(meta, dict) and meta, f"export.json: {meta}"
    assert _tree_digest(model_dir) == before, "export modified the checkpoint directory"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "out"]
    assert not leftovers, f"export left files beside the output directory: {leftovers}"


def test_export_without_generation_config(checkpoints, tmp_path):
    model_dir = tmp_path / "ckpt"
    shutil.copytree(checkpoints("llama_default"), model_dir)
    (model_dir / "generation_config.json").unlink()
    out = tmp_path / "out"
    export(model_dir, out)
    files = {p.name for p in out.iterdir()}
    assert files == BASE_OUTPUTS - {"generation_config.json"}, f"export wrote {sorted(files)}"


TOKENIZER_FILES = {
    "tokenizer.json": json.dumps({"version": "1.0", "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1},
                                                               "unk_token": "<unk>"}}, indent=2),
    "tokenizer_config.json": json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 64,
                                         "bos_token": "<s>", "eos_token": "</s>"}, indent=2),
    "special_tokens_map.json": json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}),
}


def test_tokenizer_files_are_copied(checkpoints, tmp_path):
    model_dir = tmp_path / "ckpt"
    shutil.copytree(checkpoints("llama_default"), model_dir)
    for fname, text in TOKENIZER_FILES.items():
        (model_dir / fname).write_text(text + "\n")
    out = tmp_path / "out"
    export(model_dir, out)
    files = {p.name for p in out.iterdir()}
    assert files == BASE_OUTPUTS | set(TOKENIZER_FILES), f"export wrote {sorted(files)}"
    for fname in TOKENIZER_FILES:
        assert (out / fname).read_bytes() == (model_dir / fname).read_bytes(), f"{fname} not copied verbatim"


def test_quiet(checkpoints, tmp_path):
    proc = export(checkpoints("llama_default"), tmp_path / "out", "--quiet")
    assert proc.stdout == "" and proc.stderr == "", f"--quiet printed:\n{describe(proc)}"



def test_example_checkpoint_is_reproducible(tmp_path):
    """examples/make_tiny_llama.py rewrites the committed examples/tiny-llama byte for byte."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    committed = repo / "examples" / "tiny-llama"
    proc = subprocess.run([sys.executable, str(repo / "examples" / "make_tiny_llama.py"), str(tmp_path / "t")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    want = _tree_digest(committed)
    assert set(want) == {"config.json", "generation_config.json", "model.safetensors"}, sorted(want)
    assert _tree_digest(tmp_path / "t") == want, "make_tiny_llama.py no longer reproduces examples/tiny-llama"
    assert sum((committed / f).stat().st_size for f in want) < 200 * 1024


# ---- hostile files for inspect (issue 12) ---------------------------------------------------------


def _ld(field: int, payload: bytes) -> bytes:
    """A protobuf length-delimited field."""
    def varint(v: int) -> bytes:
        out = b""
        while True:
            out += bytes([(v & 0x7F) | (0x80 if v > 0x7F else 0)])
            v >>= 7
            if not v:
                return out
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def test_inspect_survives_oversized_dim_names(tmp_path):
    """An input whose one dim carries two 600-byte dim_param fields overflowed a 512-byte shape
    buffer (stack corruption); the shape is now cut to fit. Run under ASan by oracle-sanitized."""
    dim = _ld(2, b"A" * 600) + _ld(2, b"B" * 600)
    tensor = b"\x08\x01" + _ld(2, _ld(1, dim))  # elem_type 1, shape {dim}
    value_info = _ld(1, b"x") + _ld(2, _ld(1, tensor))
    model = b"\x08\x08" + _ld(7, _ld(11, value_info))  # ir_version 8, graph {input}
    path = tmp_path / "crafted.onnx"
    path.write_bytes(model)
    proc = run_hfx(["inspect", path])
    assert proc.returncode in (0, 2), describe(proc)
    assert proc.returncode == 0 and "AAAA" in proc.stdout, describe(proc)


def test_inspect_refuses_a_fifo(tmp_path):
    """A FIFO named like a graph file is refused at once instead of blocking the open."""
    path = tmp_path / "model.onnx"
    os.mkfifo(path)
    proc = run_hfx(["inspect", path], timeout=30)
    assert proc.returncode == 2, describe(proc)
    assert "model.onnx" in proc.stderr, describe(proc)


def test_config_is_read_in_few_calls(checkpoints, tmp_path):
    """A 4 MB config.json is read whole, not one byte per read() (jansson's json_loadfd did:
    a 50 MB config took 23 s). Counted with strace, not timed."""
    import shutil
    import subprocess

    ck = tmp_path / "ckpt"
    shutil.copytree(checkpoints("llama_default"), ck)
    cfg = json.loads((ck / "config.json").read_text())
    cfg["padding_notes"] = "x" * (4 << 20)
    (ck / "config.json").write_text(json.dumps(cfg))
    strace = shutil.which("strace")
    assert strace, "strace is missing (scripts/install-deps.sh installs it)"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # LeakSanitizer cannot run under ptrace
    proc = subprocess.run([strace, "-f", "-c", "-e", "trace=read", str(hfx_bin()), "inspect", str(ck)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = [int(line.split()[3]) for line in proc.stderr.splitlines() if line.strip().endswith(" read")]
    assert calls and calls[0] < 10000, proc.stderr[-2000:]


@pytest.mark.parametrize("name, fmt, want", [("llama_default", "openvino", "fused"),
                                             ("mistral_swa", "openvino", "decomposed"),
                                             ("llama_default", "onnx", "decomposed")])
def test_manifest_says_whether_attention_is_fused(checkpoints, tmp_path, name, fmt, want):
    """OpenVINO GenAI's continuous batching needs every attention as ScaledDotProductAttention;
    export.json says whether it is (a sliding window keeps it decomposed: docs/OPENVINO.md)."""
    out = tmp_path / "out"
    proc = run_hfx(["export", checkpoints(name), out, "--format", fmt, "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    meta = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]
    assert meta["attention"] == want, meta
    if fmt == "openvino":
        xml = (out / "model.xml").read_text()
        assert ("ScaledDotProductAttention" in xml) == (want == "fused")
