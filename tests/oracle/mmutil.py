"""What the multimodal tests share (test_vlm.py, test_audio_lm.py and their kin): an encoder component run once, prompts
whose one media token per image or audio file becomes its feature count, transformers' models loaded once with eager
attention, and examples/generate_vlm.py run in the executorch virtualenv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from conftest import REPO


def write_wav(path: Path, samples, rate: int = 16000) -> Path:
    """`samples` (floats in [-1, 1)) as a 16-bit mono PCM WAV file at `rate`."""
    import wave
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(rate)
        f.writeframes((np.clip(samples, -1, 1 - 2 ** -15) * 32768).astype("<i2").tobytes())
    return path


def save_processor_parts(folder: Path, **parts) -> None:
    """A processor's parts (image_processor=..., feature_extractor=...) saved nested in processor_config.json, as
    transformers 5 saves a processor of several parts."""
    nested = {name: json.loads(part.to_json_string()) for name, part in parts.items()}
    (folder / "processor_config.json").write_text(json.dumps(nested, indent=2))


def sine_sweeps() -> list:
    """Two rising sine sweeps at 16 kHz, of 0.9 and 0.6 seconds (a batch whose second row the feature extractors pad)."""
    out = []
    for r, seconds in enumerate((0.9, 0.6)):
        t = np.arange(int(seconds * 16000)) / 16000
        out.append((0.5 * np.sin(2 * np.pi * (150 + 300 * r + (1500 + 700 * r) * t) * t)).astype(np.float32))
    return out


def expand_tokens(rows, token: int, counts) -> list:
    """Each `token` in the rows (in order) made counts[k] tokens."""
    sizes = iter(counts)
    return [[t for tok in r for t in ([tok] * int(next(sizes)) if tok == token else [tok])] for r in rows]


def eager_models(ckpt, model_class_of):
    """get(name): the variant's transformers model from its checkpoint (model_class_of(name) loads it), eager
    attention, in eval mode, loaded once."""
    models = {}

    def get(name):
        if name not in models:
            models[name] = model_class_of(name).from_pretrained(str(ckpt(name)), attn_implementation="eager").eval()
        return models[name]
    return get


def run_example_executorch(out: Path, rows, new_tokens: int, media: list, tmp_path: Path):
    """(tokens, logits) of examples/generate_vlm.py on the export in the executorch virtualenv: the prompts as one
    batch, `media` its --image / --audio arguments, the logits through --print-logits."""
    import etutil
    logits_file = tmp_path / "logits.npz"
    cmd = [str(etutil.PYTHON), str(REPO / "examples" / "generate_vlm.py"), str(out), "--prompt-ids",
           ";".join(",".join(map(str, r)) for r in rows), "--max-new-tokens", str(new_tokens),
           "--print-logits", str(logits_file), *map(str, media)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with np.load(logits_file) as npz:
        return npz["tokens"], npz["logits"]


def run_component(out: Path, fmt: str, component: str, feed: dict, output: str) -> np.ndarray:
    """The export's `component` (its file as export.json names it) run once in ONNX Runtime or OpenVINO (f32) on feed:
    its output `output`."""
    path = out / json.loads((out / "export.json").read_text())["components"][component]["file"]
    if fmt == "onnx":
        import onnxruntime as ort
        return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run([output], feed)[0]
    import openvino as ov
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.array(compiled(feed)[compiled.output(output)])
