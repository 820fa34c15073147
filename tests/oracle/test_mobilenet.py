"""MobileNet-V5's encoder (timm's "mobilenetv5_300m_enc", Gemma 3n's vision tower; src/arch/vision_mobilenet.c) as
transformers' TimmWrapperModel holds it, against transformers (over timm): last_hidden_state, the 2048 × 16 × 16 feature
map TimmWrapperModel returns without pooling.

Checkpoints are Gemma3nVisionConfig's (the full 84-block layout) with the channels scaled down by
model_args.channel_multiplier (0.125, and 0.2 whose channels timm rounds to multiples of 8), built by transformers with a
fixed seed; pixel_values of two random images through SiglipImageProcessor (Gemma 3n's, at 256 × 256: the fusion
adapter's map is already 16 × 16; and at 512 × 512: averaged 2 × 2), batch 2. Every element within 1e-4 of
transformers in ONNX Runtime and OpenVINO for both, torch (.pt2) and ExecuTorch (XNNPACK) for the first;
other timm architectures, a pooling head, other model_args and images the adapter cannot average are refused by
name."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import initutil
from conftest import assert_logits_close, built_once, cached_exports, run_forward, run_hfx, describe

# (channel_multiplier, image size)
VARIANTS = {"mnv5": (0.125, 256), "mnv5_wide": (0.2, 512)}
RUNS = ([(n, f, "") for n in VARIANTS for f in ("onnx", "openvino")] + [("mnv5", "dynamo", "")] +
        [("mnv5", "executorch", "xnnpack")])  # (the portable backend's kernels are the other towers' tests')


def processor(name):
    import transformers
    size = VARIANTS[name][1]
    return transformers.SiglipImageProcessor(size={"height": size, "width": size}, do_normalize=False)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("mobilenet")

    def make(name):
        import transformers
        torch.manual_seed(0)
        config = transformers.Gemma3nVisionConfig(model_args={"channel_multiplier": VARIANTS[name][0]})
        model = transformers.TimmWrapperModel(config).eval()
        initutil.init_weights(model, 1, lambda n: None)
        model.save_pretrained(root / name)
        processor(name).save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("mobilenet-exports"), ckpt)


def pixels(name):
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (300, 420, 3), dtype=np.uint8), rng.integers(0, 256, (280, 200, 3), dtype=np.uint8)]
    return processor(name)(images=images, return_tensors="np").pixel_values.astype(np.float32)


def reference(ckpt, name, x):
    import transformers
    model = transformers.TimmWrapperModel.from_pretrained(str(ckpt(name))).eval()
    with torch.no_grad():
        return {"last_hidden_state": model(pixel_values=torch.from_numpy(x), do_pooling=False).last_hidden_state.numpy()}


@pytest.mark.parametrize("name", sorted({n for n, _, _ in RUNS}))
def test_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's ONNX export, called as the model: its
    output class, last_hidden_state transformers' within 1e-4."""
    from transformers.exporters import ExportedModel
    x = pixels(name)
    got = ExportedModel.from_pretrained(export_dir(name, "--format", "onnx", "--dynamic"))(pixel_values=torch.from_numpy(x))
    want = reference(ckpt, name, x)
    assert_logits_close(np.asarray(got.last_hidden_state), want["last_hidden_state"], f"{name} (the seed's loader)")


@pytest.mark.parametrize("name,fmt,backend", RUNS, ids=[f"{n}-{f}{'-' + b if b else ''}" for n, f, b in RUNS])
def test_parity(name, fmt, backend, ckpt, export_dir):
    x = pixels(name)
    if fmt == "executorch":
        out = export_dir(name, "--config-json", json.dumps({"export_format": "executorch", "backend": backend,
                                                            "dynamic_shapes": {"pixel_values": {
                                                                "0": {"name": "batch_size", "min": 1, "max": 4}}}}))
    else:
        out = export_dir(name, "--format", fmt, "--dynamic")
    want = reference(ckpt, name, x)
    got = run_forward(fmt, out, {"pixel_values": x}, list(want))
    assert list(got) == list(want)
    assert_logits_close(got["last_hidden_state"], want["last_hidden_state"], f"{name} {fmt} {backend}")


@pytest.mark.parametrize("edit,words", [
    ({"architecture": "resnet50"}, "architecture 'resnet50'"),
    ({"do_pooling": True}, "do_pooling"),
    ({"model_args": {"channel_multiplier": 0.125, "drop_rate": 0.1}}, "model_args.drop_rate"),
])
def test_refused(edit, words, ckpt, tmp_path):
    from conftest import assert_config_refused
    assert_config_refused(ckpt("mnv5"), tmp_path, edit, words)


def test_image_the_adapter_cannot_average_is_refused(ckpt, tmp_path):
    """At 384 × 384 the fusion adapter's map is 24 × 24, which timm interpolates to 16 × 16 (bilinear): refused."""
    import shutil
    src = tmp_path / "ck"
    shutil.copytree(ckpt("mnv5"), src)
    pre = json.loads((src / "preprocessor_config.json").read_text())
    pre["size"] = {"height": 384, "width": 384}
    (src / "preprocessor_config.json").write_text(json.dumps(pre))
    proc = run_hfx(["export", src, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and "multiple of 256" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()
