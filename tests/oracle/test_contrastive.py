"""Contrastive image-text models (src/arch/contrastive.c) against transformers: CLIPModel and
SiglipModel — logits_per_image, logits_per_text, text_embeds and image_embeds within 1e-4.

Checkpoints are tiny (hidden 32) over real-size images (224 × 224 in patches of 32, through
CLIPImageProcessor / SiglipImageProcessor from random images of other sizes), two images against
three texts of different lengths, right-padded as their tokenizers pad, so that the image and text
batches differ. Variants: CLIP with a current eos_token_id (the first end-of-text token pooled,
padding of the same id after it) and with the legacy eos_token_id 2 (the highest id pooled); text
and vision towers of different widths and depths, each projected to projection_dim; SigLIP (its
text tower bidirectional, the last token through its head, the image attention-pooled, logit_bias).
ONNX Runtime, OpenVINO, torch (.pt2) and ExecuTorch. The text towers alone (CLIPTextModel,
CLIPTextModelWithProjection, SiglipTextModel) in ONNX Runtime and OpenVINO, one in .pt2 and one in
ExecuTorch."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import (assert_logits_close, built_once, cached_exports, call_pt2, describe, load_pt2, run_forward,
                      run_hfx)
from initutil import init_weights

VOCAB = 99
EOS = 98
VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=224,
              patch_size=32)
TEXT = dict(vocab_size=VOCAB, hidden_size=24, num_hidden_layers=3, num_attention_heads=2, intermediate_size=40,
            max_position_embeddings=16)

VARIANTS = {
    "clip": ("CLIPModel", "CLIPConfig", {"text_config": {**TEXT, "eos_token_id": EOS, "pad_token_id": EOS},
                                        "vision_config": VISION, "projection_dim": 20}),
    "clip_legacy_eos": ("CLIPModel", "CLIPConfig", {"text_config": {**TEXT, "eos_token_id": 2, "hidden_act": "gelu"},
                                                    "vision_config": {**VISION, "hidden_act": "gelu"},
                                                    "projection_dim": 16}),
    "siglip": ("SiglipModel", "SiglipConfig", {"text_config": {**TEXT, "hidden_size": 32, "projection_size": 32},
                                              "vision_config": VISION}),
}

# the text towers alone (a diffusion pipeline's text encoder, a retrieval index's query encoder):
# class, config class, config, outputs
TEXT_VARIANTS = {
    "clip_text": ("CLIPTextModel", "CLIPTextConfig", {**TEXT, "eos_token_id": EOS, "pad_token_id": EOS},
                  ["last_hidden_state", "pooler_output"]),
    "clip_text_legacy_eos": ("CLIPTextModel", "CLIPTextConfig", {**TEXT, "eos_token_id": 2},
                             ["last_hidden_state", "pooler_output"]),
    "clip_text_projection": ("CLIPTextModelWithProjection", "CLIPTextConfig",
                             {**TEXT, "eos_token_id": EOS, "pad_token_id": EOS, "projection_dim": 20},
                             ["text_embeds", "last_hidden_state"]),
    "siglip_text": ("SiglipTextModel", "SiglipTextConfig", {**TEXT, "projection_size": 12},
                    ["last_hidden_state", "pooler_output"]),
}


def _init(model: torch.nn.Module, seed: int) -> None:
    """Random tables (0.5) and norms, linears at 1/√fan-in, a fixed logit scale (and bias)."""
    init_weights(model, seed, lambda name: 0.5 if "embedding" in name else None,
                 fixed={"logit_scale": 0.7, "logit_bias": -1.5})


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("contrastive")
    def make(name):
        cls, config_cls, cfg = VARIANTS[name] if name in VARIANTS else TEXT_VARIANTS[name][:3]
        torch.manual_seed(0)
        model = getattr(transformers, cls)(getattr(transformers, config_cls)(**cfg)).eval()
        _init(model, seed=2)
        model.save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("contrastive-exports"), ckpt)


def inputs(name):
    """(input_ids [3, S], attention_mask [3, S], pixel_values [2, 3, 224, 224]): three texts ending in
    the end-of-text token, right-padded (with the pad id, EOS for CLIP), and two images."""
    import transformers
    rng = np.random.default_rng(4)
    cfg = VARIANTS[name][2]["text_config"] if name in VARIANTS else TEXT_VARIANTS[name][2]
    eos, pad = cfg.get("eos_token_id", 1), cfg.get("pad_token_id", 0)
    rows = [list(rng.integers(3, 90, n)) + [eos] for n in (9, 4, 6)]
    if eos == 2:  # the legacy pooling takes the highest id: the end-of-text token is CLIP's highest
        rows = [r[:-1] + [VOCAB - 1] for r in rows]
    length = max(map(len, rows))
    ids = np.full((3, length), pad, np.int64)
    mask = np.zeros((3, length), np.int64)
    for i, r in enumerate(rows):
        ids[i, :len(r)], mask[i, :len(r)] = r, 1
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in ((300, 260), (180, 411))]
    if name.startswith("siglip"):
        proc = transformers.SiglipImageProcessor(size={"height": 224, "width": 224})
    else:
        proc = transformers.CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    x = proc(images, return_tensors="np", input_data_format="channels_last").pixel_values.astype(np.float32)
    return ids, mask, x


OUTPUTS = ["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"]


def reference(ckpt, name, ids, mask, x):
    import transformers
    model = getattr(transformers, VARIANTS[name][0]).from_pretrained(str(ckpt(name)),
                                                                      attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), pixel_values=torch.from_numpy(x),
                    attention_mask=torch.from_numpy(mask))
    return {k: getattr(out, k).numpy() for k in OUTPUTS}


def compare(got, want, label):
    assert list(got) == OUTPUTS, f"{label}: outputs {list(got)}"
    for k in OUTPUTS:
        assert_logits_close(got[k], want[k], f"{label} {k}")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_onnx(name, ckpt, export_dir):
    import onnxruntime as ort
    out = export_dir(name, "--format", "onnx", "--dynamic")
    ids, mask, x = inputs(name)
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input_ids", "pixel_values", "attention_mask"]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"input_ids": ids, "pixel_values": x, "attention_mask": mask})))
    compare(got, reference(ckpt, name, ids, mask, x), f"{name} onnx")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's ONNX export, called as the model: its
    output class (CLIPOutput, SiglipOutput), the four outputs transformers' within 1e-4."""
    from transformers.exporters import ExportedModel
    out = export_dir(name, "--format", "onnx", "--dynamic")
    ids, mask, x = inputs(name)
    got = ExportedModel.from_pretrained(out)(input_ids=torch.from_numpy(ids), pixel_values=torch.from_numpy(x),
                                             attention_mask=torch.from_numpy(mask))
    compare({k: np.asarray(getattr(got, k)) for k in OUTPUTS}, reference(ckpt, name, ids, mask, x),
            f"{name} (the seed's loader)")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_openvino(name, ckpt, export_dir):
    import openvino as ov
    out = export_dir(name, "--format", "openvino", "--dynamic")
    ids, mask, x = inputs(name)
    compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = compiled({"input_ids": ids, "pixel_values": x, "attention_mask": mask})
    got = {o.get_any_name(): np.array(res[o]) for o in compiled.outputs}
    compare(got, reference(ckpt, name, ids, mask, x), f"{name} openvino")


@pytest.mark.parametrize("name", ["clip", "siglip"])
def test_torch_program(name, ckpt, export_dir):
    out = export_dir(name, "--format", "dynamo", "--dynamic")
    ids, mask, x = inputs(name)
    got = call_pt2(load_pt2(out / "model.pt2"), {"input_ids": ids, "pixel_values": x, "attention_mask": mask})
    compare(dict(zip(OUTPUTS, (t.numpy() for t in got))), reference(ckpt, name, ids, mask, x), f"{name} .pt2")


@pytest.mark.parametrize("name", ["clip", "siglip"])
def test_executorch(name, ckpt, export_dir, tmp_path):
    """ExecuTorch fixes the batches (3 texts, 3 images: one dim without --dynamic) and bounds the
    text length."""
    import etutil
    cfg = tmp_path / "et.json"
    cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"1": {"name": "sequence", "min": 1, "max": 16}}}}))
    out = export_dir(name, "--config", str(cfg), "--batch-size", "3")
    ids, mask, x = inputs(name)
    x = np.concatenate([x, x[:1]])  # three images, as the fixed batch says
    got = etutil.worker().run(out / "model.pte", [ids, x, mask])
    compare(dict(zip(OUTPUTS, got)), reference(ckpt, name, ids, mask, x), f"{name} executorch")


@pytest.mark.parametrize("edit,words", [
    (lambda c: c.pop("text_config"), "text_config"),
    (lambda c: c["text_config"].update(projection_size=16), "projection_size"),
])
def test_bad_configs(ckpt, tmp_path, edit, words):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(ckpt("siglip"), bad)
    cfg = json.loads((bad / "config.json").read_text())
    edit(cfg)
    (bad / "config.json").write_text(json.dumps(cfg))
    proc = run_hfx(["export", bad, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and words in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def text_reference(ckpt, name, ids, mask):
    import transformers
    cls, _, _, outputs = TEXT_VARIANTS[name]
    model = getattr(transformers, cls).from_pretrained(str(ckpt(name)), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    # padded rows' states past their end are transformers' too: every element compared
    return {k: getattr(out, k).numpy() for k in outputs}


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(TEXT_VARIANTS))
def test_text_tower(name, fmt, ckpt, export_dir):
    """The text towers alone: their outputs within 1e-4 over three right-padded texts."""
    out = export_dir(name, "--format", fmt, "--dynamic")
    ids, mask, _ = inputs(name)
    feed = {"input_ids": ids, "attention_mask": mask}
    if fmt == "onnx":
        import onnxruntime as ort
        sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
    else:
        import openvino as ov
        compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        res = compiled(feed)
        got = {o.get_any_name(): np.array(res[o]) for o in compiled.outputs}
    want = text_reference(ckpt, name, ids, mask)
    assert list(got) == list(want), f"{name} {fmt}: outputs {list(got)}"
    for k in want:
        assert_logits_close(got[k], want[k], f"{name} {fmt} {k}")


def test_text_tower_torch_program(ckpt, export_dir):
    out = export_dir("clip_text_projection", "--format", "dynamo", "--dynamic")
    ids, mask, _ = inputs("clip_text_projection")
    got = call_pt2(load_pt2(out / "model.pt2"), {"input_ids": ids, "attention_mask": mask})
    want = text_reference(ckpt, "clip_text_projection", ids, mask)
    for k, t in zip(want, got):
        assert_logits_close(t.numpy(), want[k], f"clip_text_projection .pt2 {k}")


def test_text_tower_executorch(ckpt, export_dir, tmp_path):
    """CLIP's text tower alone in ExecuTorch: the batch fixed (3), the text length bounded."""
    import etutil
    cfg = tmp_path / "et.json"
    cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"1": {"name": "sequence", "min": 1, "max": 16}}}}))
    out = export_dir("clip_text", "--config", str(cfg), "--batch-size", "3")
    ids, mask, _ = inputs("clip_text")
    got = etutil.worker().run(out / "model.pte", [ids, mask])
    want = text_reference(ckpt, "clip_text", ids, mask)
    for k, t in zip(want, got):
        assert_logits_close(t, want[k], f"clip_text executorch {k}")


# ---- SigLIP 2 (its NaFlex image tower: src/arch/vision_naflex.c) ----

SIGLIP2_VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                      num_patches=16, patch_size=8)


@pytest.fixture(scope="module")
def siglip2_ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("siglip2")

    def make(name):
        torch.manual_seed(0)
        if name == "siglip2":
            model = transformers.Siglip2Model(transformers.Siglip2Config(
                text_config={**TEXT, "hidden_size": 32, "projection_size": 32}, vision_config=SIGLIP2_VISION))
        else:
            model = transformers.Siglip2TextModel(transformers.Siglip2TextConfig(**TEXT, projection_size=12))
        _init(model.eval(), seed=2)
        model.save_pretrained(root / name)
        transformers.Siglip2ImageProcessorPil(max_num_patches=24, patch_size=8).save_pretrained(root / name)
        return root / name
    return built_once(make)


def siglip2_feed():
    """Three right-padded texts and two images of other aspect ratios through Siglip2ImageProcessor."""
    import transformers
    ids, mask, _ = inputs("siglip")
    rng = np.random.default_rng(5)
    images = [rng.integers(0, 256, (70, 40, 3), dtype=np.uint8), rng.integers(0, 256, (20, 90, 3), dtype=np.uint8)]
    px = transformers.Siglip2ImageProcessorPil(max_num_patches=24, patch_size=8)(images, return_tensors="np")
    return {"input_ids": ids, "pixel_values": px.pixel_values.astype(np.float32),
            "pixel_attention_mask": px.pixel_attention_mask, "spatial_shapes": px.spatial_shapes,
            "attention_mask": mask}


@pytest.mark.parametrize("fmt", ["onnx", "openvino", "dynamo"])
def test_siglip2(fmt, siglip2_ckpt, tmp_path_factory):
    """Siglip2Model: its logits and embeddings within 1e-4 of transformers, three texts against two images of other
    aspect ratios (each its own patch grid, padded to the processor's count)."""
    import transformers
    feed = siglip2_feed()
    model = transformers.Siglip2Model.from_pretrained(str(siglip2_ckpt("siglip2")), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in feed.items()})
    want = {k: getattr(out, k).numpy() for k in OUTPUTS}
    exports = cached_exports(tmp_path_factory.mktemp("siglip2-exports"), siglip2_ckpt)
    got = run_forward(fmt, exports("siglip2", "--format", fmt, "--dynamic"), feed, OUTPUTS)
    compare(got, want, f"siglip2 {fmt}")


def test_siglip2_text_tower(siglip2_ckpt, tmp_path_factory):
    """Siglip2TextModel alone: last_hidden_state and pooler_output within 1e-4 (ONNX Runtime)."""
    import onnxruntime as ort
    import transformers
    ids, mask, _ = inputs("siglip")
    model = transformers.Siglip2TextModel.from_pretrained(str(siglip2_ckpt("siglip2_text")),
                                                          attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    exports = cached_exports(tmp_path_factory.mktemp("siglip2-text-exports"), siglip2_ckpt)
    sess = ort.InferenceSession(str(exports("siglip2_text", "--format", "onnx", "--dynamic") / "model.onnx"),
                                providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"input_ids": ids, "attention_mask": mask})))
    for k in ("last_hidden_state", "pooler_output"):
        assert_logits_close(got[k], getattr(out, k).numpy(), f"siglip2_text {k}")


def test_siglip2_executorch(siglip2_ckpt, tmp_path_factory, tmp_path):
    """Siglip2Model in ExecuTorch (portable kernels): every output within 1e-4 of transformers."""
    import etutil
    import transformers
    feed = siglip2_feed()
    model = transformers.Siglip2Model.from_pretrained(str(siglip2_ckpt("siglip2")), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in feed.items()})
    cfg = tmp_path / "et.json"
    cfg.write_text(json.dumps({"export_format": "executorch", "backend": "portable", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch_size", "max": 4}, "1": {"name": "sequence_length", "max": 16}},
        "pixel_values": {"0": {"name": "image_batch_size", "max": 4}, "1": {"name": "num_patches", "max": 24}}}}))
    exports = cached_exports(tmp_path_factory.mktemp("siglip2-et"), siglip2_ckpt)
    got = etutil.worker().run(exports("siglip2", "--config", str(cfg)) / "model.pte", list(feed.values()))
    compare(dict(zip(OUTPUTS, got)), {k: getattr(out, k).numpy() for k in OUTPUTS}, "siglip2 executorch")
