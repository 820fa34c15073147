"""Helpers of test_openvino.py: OpenVINO exports cached per session, compiled models (CPU, f32
inference precision), running examples/generate_openvino.py, and comparing generations.

The OpenVINO export's contract is the ONNX one (docs/GENERATION.md for generation) with .xml/.bin
files; a stateful generation export (the default of `--format openvino --for-generation`) keeps
its KV cache in ReadValue/Assign variables and has a beam_idx input, as optimum-intel writes it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import PARITY_ATOL, REPO, assert_logits_close, describe, run_hfx
from genutil import LoopResult
from genutil import compare_generation as genutil_compare

GENERATE_OV_SCRIPT = REPO / "examples" / "generate_openvino.py"

# The CPU plugin's defaults: bf16 inference precision on CPUs that have it (AMX / AVX512-BF16), and
# a u8-quantised KV cache where it fuses a stateful cache into its attention node (a 4-D
# ScaledDotProductAttention: the MHA exports). Parity needs both in f32.
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}

_core = None


def core():
    import openvino as ov

    global _core
    if _core is None:
        _core = ov.Core()
    return _core


def token_streamer():
    """An OpenVINO GenAI streamer that keeps the token ids a pipeline streams (.ids)."""
    import openvino_genai

    class Tokens(openvino_genai.StreamerBase):
        def __init__(self):
            super().__init__()
            self.ids = []

        def write(self, token):
            self.ids += token if isinstance(token, list) else [token]
            return openvino_genai.StreamingStatus.RUNNING

        def end(self):
            pass
    return Tokens()


def compile_model(xml: Path, config: dict | None = None):
    return core().compile_model(core().read_model(str(xml)), "CPU", dict(OV_CONFIG, **(config or {})))


def run_forward(compiled, inputs: dict) -> np.ndarray:
    """Feed input_ids / attention_mask / position_ids (int64); return a copy of `logits`."""
    request = compiled.create_infer_request()
    request.infer({k: np.ascontiguousarray(v, dtype=np.int64) for k, v in inputs.items()})
    return np.array(request.get_tensor("logits").data)


class OVExports:
    """`hfx export MODEL OUT --format openvino --quiet FLAGS...` per (model dir, flags), once per
    session; a failed export fails every test that asks for it, with hfx's message."""

    def __init__(self, root: Path, checkpoints):
        self.root, self.checkpoints = root, checkpoints
        self._done: dict = {}
        self._regen: dict = {}
        self._compiled: dict = {}

    def __call__(self, name_or_dir, *flags: str) -> Path:
        model_dir = Path(name_or_dir) if isinstance(name_or_dir, Path) else self.checkpoints(name_or_dir)
        key = (str(model_dir), flags)
        if key not in self._done:
            out = self.root / f"{model_dir.name}-{len(self._done)}"
            proc = run_hfx(["export", model_dir, out, "--format", "openvino", "--quiet", *flags])
            if proc.returncode != 0:
                self._done[key] = "openvino export failed:\n" + describe(proc)
            elif not (out / "export.json").is_file():
                self._done[key] = "openvino export exited 0 but wrote no export.json\n" + describe(proc)
            else:
                self._done[key] = out
        result = self._done[key]
        if isinstance(result, str):
            pytest.fail(result, pytrace=False)
        return result

    def compiled(self, xml: Path):
        """The compiled model of `xml` (CPU, f32), once per session."""
        if xml not in self._compiled:
            self._compiled[xml] = compile_model(xml)
        return self._compiled[xml]

    def with_generation_config(self, out_dir: Path, gen: dict) -> Path:
        """A copy of the export directory whose generation_config.json is `gen` (the decode loop
        reads EOS / pad from there)."""
        key = (str(out_dir), json.dumps(gen, sort_keys=True))
        if key not in self._regen:
            dst = self.root / f"{out_dir.name}-gen{len(self._regen)}"
            shutil.copytree(out_dir, dst)
            (dst / "generation_config.json").write_text(json.dumps(gen) + "\n")
            self._regen[key] = dst
        return self._regen[key]


def manifest(out_dir: Path) -> dict:
    return json.loads((out_dir / "export.json").read_text())


def ir_version(xml: Path) -> str | None:
    import xml.etree.ElementTree as ET

    return ET.parse(xml).getroot().get("version")


def run_loop(out_dir: Path, rows, max_new_tokens: int, logits_file: Path | None = None,
             timeout: float = 120) -> LoopResult:
    """`python examples/generate_openvino.py OUT_DIR --input-ids ... --max-new-tokens N` (this
    venv's python). Parses stdout when it exits 0."""
    cmd = [sys.executable, str(GENERATE_OV_SCRIPT), str(out_dir),
           "--input-ids", ";".join(",".join(str(t) for t in row) for row in rows),
           "--max-new-tokens", str(max_new_tokens)]
    if logits_file is not None:
        cmd += ["--print-logits", str(logits_file)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`{' '.join(cmd)}` did not finish in {timeout} s\nstderr:\n{e.stderr}", pytrace=False)
    result = LoopResult(proc)
    if proc.returncode == 0:
        result.tokens = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        if logits_file is not None:
            with np.load(logits_file) as npz:
                result.logits = npz["logits"]
    return result


def load_loop_module():
    """examples/generate_openvino.py as a module (to drive its Export / generate in-process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate_openvino", GENERATE_OV_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compare_generation(got_tokens, got_logits, want_tokens, want_logits, label: str,
                       atol: float = PARITY_ATOL) -> None:
    """genutil.compare_generation, with OpenVINO named in the messages."""
    genutil_compare(got_tokens, got_logits, want_tokens, want_logits, label, atol, runtime="openvino")

