"""Vision encoders (src/arch/vision.c) against transformers: ViTModel (last_hidden_state and the
pooler's output, or no pooler where the checkpoint has none), ViTForImageClassification,
CLIPVisionModel (the post-normed class token), CLIPVisionModelWithProjection (image_embeds) and
SiglipVisionModel (its attention-pooling head, or none).

Checkpoints are tiny (hidden 32) over real-size images: 224 × 224 pixels in patches of 16 (197
tokens) from each model's image processor (ViTImageProcessor, CLIPImageProcessor,
SiglipImageProcessor) on random pixel arrays of other sizes, batch 2. Every output within 1e-4 of transformers in ONNX
Runtime, OpenVINO, torch (.pt2) and ExecuTorch; the config fields that change the graph (qkv_bias,
hidden_act, layer_norm_eps, image and patch size, channels) each in a variant; bad configs refused
by name."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from conftest import (assert_logits_close, built_once, cached_exports, call_pt2, describe, load_pt2, run_forward,
                      run_hfx)
from initutil import init_weights

BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=224,
            patch_size=16, num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


@dataclasses.dataclass(frozen=True)
class Variant:
    head: str  # "model" (ViTModel) or "classifier" (ViTForImageClassification); CLIP's class names
    config: dict
    pooler: bool = True  # ViTModel saved with its pooler
    config_class: str = "ViTConfig"
    processor: str = "ViTImageProcessor"
    image: int | None = None  # the processor's image size, saved as preprocessor_config.json (None: the config's)


CLIP = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=224,
            patch_size=16, projection_dim=24)


DINOV2 = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, image_size=112, patch_size=16, mlp_ratio=3,
              layerscale_value=0.5, num_labels=3)

DINOV3 = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=112,
              patch_size=16, num_register_tokens=4, layerscale_value=0.5)

VARIANTS = {
    "vit_classifier": Variant("classifier", BASE),
    "vit_model": Variant("model", BASE),
    "vit_model_no_pooler": Variant("model", BASE, pooler=False),
    # no q/k/v biases, tanh-approximated GELU, another eps, 32-pixel patches on a 64-pixel image,
    # one channel, a pooler of its own width and activation
    "vit_variant": Variant("model", {**BASE, "qkv_bias": False, "hidden_act": "gelu_new", "layer_norm_eps": 1e-6,
                                     "image_size": 64, "patch_size": 32, "num_channels": 1, "pooler_output_size": 24,
                                     "pooler_act": "relu"}),
    # CLIP's tower: no patch bias, class token and position table as vectors, a LayerNorm before
    # the layers, quick_gelu, the class token post-normed (and projected)
    "clip_vision": Variant("CLIPVisionModel", CLIP, config_class="CLIPVisionConfig", processor="CLIPImageProcessor"),
    "clip_vision_projection": Variant("CLIPVisionModelWithProjection", {**CLIP, "hidden_act": "gelu"},
                                      config_class="CLIPVisionConfig", processor="CLIPImageProcessor"),
    # SigLIP's tower: no class token, a final LayerNorm over every token, the attention-pooling head
    # (a probe attending over the tokens through nn.MultiheadAttention's fused in_proj), or none
    "siglip_vision": Variant("SiglipVisionModel", CLIP, config_class="SiglipVisionConfig",
                             processor="SiglipImageProcessor"),
    "siglip_vision_no_head": Variant("SiglipVisionModel", {**CLIP, "vision_use_head": False},
                                     config_class="SiglipVisionConfig", processor="SiglipImageProcessor"),
    # DINOv2: layer scales, an MLP of mlp_ratio, the final LayerNorm; its position grid (7 × 7, the
    # config's 112 pixels) resampled bicubically to the 224-pixel images its processor makes
    # (BitImageProcessor: shortest edge 256, center crop 224), as transformers interpolates
    "dinov2_model": Variant("Dinov2Model", DINOV2, config_class="Dinov2Config", processor="BitImageProcessor",
                            image=224),
    # the SwiGLU MLP, at the config's own image size (no processor config: no resampling)
    "dinov2_swiglu": Variant("Dinov2Model", {**DINOV2, "use_swiglu_ffn": True, "image_size": 224},
                             config_class="Dinov2Config", processor="BitImageProcessor"),
    # DINOv3: a 2-D rotary of the patch centers (made for the processor's 224-pixel images, not the config's 112),
    # four register tokens, no key bias, layer scales, up/down MLP
    "dinov3_model": Variant("DINOv3ViTModel", DINOV3, config_class="DINOv3ViTConfig", processor="DINOv3", image=224),
    # the gated MLP (hidden_act), biases the other way round, another rope base, no registers
    "dinov3_gated": Variant("DINOv3ViTModel", {**DINOV3, "use_gated_mlp": True, "hidden_act": "silu", "key_bias": True,
                                               "proj_bias": False, "mlp_bias": False, "num_register_tokens": 0,
                                               "rope_theta": 50.0, "image_size": 64},
                            config_class="DINOv3ViTConfig", processor="DINOv3"),
    # the classifier over the class token and the patches' mean
    "dinov2_classifier": Variant("Dinov2ForImageClassification", DINOV2, config_class="Dinov2Config",
                                 processor="BitImageProcessor", image=224),
}


def model_class(v: Variant):
    import transformers
    return getattr(transformers, {"classifier": "ViTForImageClassification", "model": "ViTModel"}.get(v.head, v.head))


def _init(model: torch.nn.Module, seed: int) -> None:
    """Random tables and norms, linears at 1/√fan-in: the class token and positions at 0.5, the
    rest of the embeddings (the patch convolution, CLIP's position table) small."""
    def table_std(name):
        return 0.5 if name.endswith(("cls_token", "position_embeddings", "register_tokens")) else 0.1 if "embeddings" in name else None
    init_weights(model, seed, table_std)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("vision")
    def make(name):
        v = VARIANTS[name]
        cls = model_class(v)
        torch.manual_seed(0)
        kwargs = {"add_pooling_layer": v.pooler} if v.head == "model" else {}
        config = getattr(transformers, v.config_class)(**v.config, attn_implementation="eager")
        model = cls(config, **kwargs).eval()
        _init(model, seed=1)
        model.save_pretrained(root / name)
        if v.image:
            processor(name).save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("vision-exports"), ckpt)


def pixels(name, batch=2):
    """pixel_values [batch, channels, size, size]: random uint8 images of other sizes through the
    model's image processor (ViT's resizes to the size; CLIP's resizes the shortest edge and crops
    the center), rescaled and normalized."""
    import transformers
    v = VARIANTS[name]
    channels, size = v.config.get("num_channels", 3), v.image or v.config["image_size"]
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (h, w, channels), dtype=np.uint8) for h, w in ((300, 260), (180, 411))[:batch]]
    out = processor(name)(images, return_tensors="np", input_data_format="channels_last").pixel_values.astype(np.float32)
    assert out.shape == (batch, channels, size, size)
    return out


def processor(name):
    """The model's image processor at the variant's image size."""
    import transformers
    v = VARIANTS[name]
    channels, size = v.config.get("num_channels", 3), v.image or v.config["image_size"]
    if v.processor == "DINOv3":  # DINOv3ViTImageProcessor's steps (it needs torchvision, absent here): resize to the
        # square, rescale, ImageNet's mean and std
        proc = transformers.ViTImageProcessor(size={"height": size, "width": size}, image_mean=[0.485, 0.456, 0.406],
                                              image_std=[0.229, 0.224, 0.225])
    elif v.processor == "BitImageProcessor":  # DINOv2's: the shortest edge to 256/224 of the crop, center crop
        proc = transformers.BitImageProcessor(size={"shortest_edge": size * 256 // 224},
                                              crop_size={"height": size, "width": size})
    elif v.processor == "CLIPImageProcessor":
        proc = transformers.CLIPImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size})
    elif v.processor == "SiglipImageProcessor":
        proc = transformers.SiglipImageProcessor(size={"height": size, "width": size})
    else:
        proc = transformers.ViTImageProcessor(size={"height": size, "width": size}, image_mean=[0.5] * channels,
                                              image_std=[0.5] * channels)
    return proc


def reference(ckpt, name, x):
    v = VARIANTS[name]
    # a checkpoint saved without its pooler: transformers would make a random one; hfx exports none
    kwargs = {"add_pooling_layer": v.pooler} if v.head == "model" else {}
    model = model_class(v).from_pretrained(str(ckpt(name)), attn_implementation="eager", **kwargs).eval()
    with torch.no_grad():
        out = model(pixel_values=torch.from_numpy(x))
    if v.head in ("classifier", "Dinov2ForImageClassification"):
        return {"logits": out.logits.numpy()}
    if v.head == "CLIPVisionModelWithProjection":
        return {"image_embeds": out.image_embeds.numpy(), "last_hidden_state": out.last_hidden_state.numpy()}
    ref = {"last_hidden_state": out.last_hidden_state.numpy()}
    if out.pooler_output is not None:
        ref["pooler_output"] = out.pooler_output.numpy()
    return ref


def compare(got: dict, want: dict, label: str):
    assert list(got) == list(want), f"{label}: outputs {list(got)}, transformers {list(want)}"
    for k in want:
        assert_logits_close(got[k], want[k], f"{label} {k}")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_onnx(name, ckpt, export_dir):
    import onnxruntime as ort
    out = export_dir(name, "--format", "onnx", "--dynamic")
    x = pixels(name)
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["pixel_values"]
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"pixel_values": x})))
    compare(got, reference(ckpt, name, x), f"{name} onnx")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_openvino(name, ckpt, export_dir):
    import openvino as ov
    out = export_dir(name, "--format", "openvino", "--dynamic")
    x = pixels(name)
    compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = compiled({"pixel_values": x})
    got = {o.get_any_name(): np.array(res[o]) for o in compiled.outputs}
    compare(got, reference(ckpt, name, x), f"{name} openvino")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's ONNX export, called as the model
    (pixel_values by keyword): the model's output class, its outputs transformers' within 1e-4."""
    from transformers.exporters import ExportedModel
    out = export_dir(name, "--format", "onnx", "--dynamic")
    x = pixels(name)
    got = ExportedModel.from_pretrained(out)(pixel_values=torch.from_numpy(x))
    want = reference(ckpt, name, x)
    compare({k: np.asarray(getattr(got, k)) for k in want}, want, f"{name} (the seed's loader)")


@pytest.mark.parametrize("name", ["vit_classifier", "vit_model", "vit_variant", "clip_vision_projection",
                                  "siglip_vision", "dinov2_model", "dinov2_classifier", "dinov3_model"])
def test_torch_program(name, ckpt, export_dir):
    out = export_dir(name, "--format", "dynamo", "--dynamic")
    x = pixels(name)
    got = call_pt2(load_pt2(out / "model.pt2"), {"pixel_values": x})  # (the model's output class's fields, in order)
    want = reference(ckpt, name, x)
    compare(dict(zip(want, (t.numpy() for t in got))), want, f"{name} .pt2")


@pytest.mark.parametrize("backend", ["xnnpack", "portable"])
@pytest.mark.parametrize("name", ["vit_classifier", "vit_model", "clip_vision", "siglip_vision", "dinov2_model",
                                  "dinov3_gated"])
def test_executorch(name, backend, ckpt, export_dir, tmp_path):
    import etutil
    cfg = tmp_path / "et.json"
    cfg.write_text(json.dumps({"export_format": "executorch", "backend": backend, "dynamic_shapes": {
        "pixel_values": {"0": {"name": "batch_size", "min": 1, "max": 4}}}}))
    out = export_dir(name, "--config", str(cfg))
    x = pixels(name)
    got = etutil.worker().run(out / "model.pte", [x])
    want = reference(ckpt, name, x)
    compare(dict(zip(want, got)), want, f"{name} executorch {backend}")


def test_fixed_batch(ckpt, export_dir):
    """Without --dynamic the batch is the sample's (2): the graph's pixel_values are fixed."""
    import onnxruntime as ort
    out = export_dir("vit_classifier", "--format", "onnx")
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [2, 3, 224, 224]
    x = pixels("vit_classifier")
    compare({"logits": sess.run(None, {"pixel_values": x})[0]}, reference(ckpt, "vit_classifier", x), "fixed batch")


@pytest.mark.parametrize("edit,words", [
    ({"image_size": 230}, "not a multiple of patch_size"),
    ({"hidden_act": "swiglu"}, "hidden_act"),
    ({"image_size": [224, 160]}, "square"),
    ({"hidden_size": 30}, "num_attention_heads"),
    ({"image_size": 65536, "patch_size": 1}, "patches"),
    ({"patch_size": 0}, "patch_size"),
])
def test_bad_configs(ckpt, tmp_path, edit, words):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(ckpt("vit_classifier"), bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, **edit}))
    proc = run_hfx(["export", bad, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and words in proc.stderr and "config.json" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("crop,words", [({"height": 230, "width": 230}, "not whole patches"),
                                        ({"height": 224, "width": 160}, "equal height and width")])
def test_bad_processor_size(ckpt, tmp_path, crop, words):
    """DINOv2 takes the image its processor makes: one that is not square, or not whole patches, is
    refused by name (preprocessor_config.json), nothing written."""
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(ckpt("dinov2_model"), bad)
    pre = json.loads((bad / "preprocessor_config.json").read_text())
    (bad / "preprocessor_config.json").write_text(json.dumps({**pre, "crop_size": crop}))
    proc = run_hfx(["export", bad, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and words in proc.stderr and "preprocessor_config.json" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def test_dinov3_rotary_needs_quarter_heads(ckpt, tmp_path):
    """DINOv3's 2-D rotary splits each head in four: a head width that is not a multiple of 4 is refused by name."""
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(ckpt("dinov3_gated"), bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "hidden_size": 24, "num_attention_heads": 4}))
    proc = run_hfx(["export", bad, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and "multiple of 4" in proc.stderr and "config.json" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


# ---- SigLIP 2's NaFlex tower (src/arch/vision_naflex.c) ----

NAFLEX = {
    # a 4 × 4 position grid resized to each image's patch grid (6 × 4 and 2 × 9: rows and columns up- and
    # down-sampled), padded to the processor's 24 patches, the attention-pooling head over the real ones
    "siglip2": (dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_patches=16,
                     patch_size=8), 24),
    # no head, exact GELU, a 5 × 5 grid, 30 patches
    "siglip2_no_head": (dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                             num_patches=25, patch_size=8, vision_use_head=False, hidden_act="gelu"), 30),
}


@pytest.fixture(scope="module")
def naflex_ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("naflex")

    def make(name):
        config, max_patches = NAFLEX[name]
        torch.manual_seed(0)
        model = transformers.Siglip2VisionModel(transformers.Siglip2VisionConfig(**config)).eval()
        init_weights(model, 1, lambda n: 0.5 if n.endswith(("position_embedding.weight", "probe")) else None)
        model.save_pretrained(root / name)
        transformers.Siglip2ImageProcessorPil(max_num_patches=max_patches, patch_size=config["patch_size"]
                                              ).save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def naflex_exports(naflex_ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("naflex-exports"), naflex_ckpt)


def naflex_inputs(ckpt):
    """The processor's patches of two images of other aspect ratios (tall and wide)."""
    import transformers
    proc = transformers.Siglip2ImageProcessorPil.from_pretrained(str(ckpt))
    rng = np.random.default_rng(4)
    images = [rng.integers(0, 256, (70, 40, 3), dtype=np.uint8), rng.integers(0, 256, (20, 90, 3), dtype=np.uint8)]
    out = proc(images, return_tensors="np")
    return {"pixel_values": out.pixel_values.astype(np.float32), "pixel_attention_mask": out.pixel_attention_mask,
            "spatial_shapes": out.spatial_shapes}


def naflex_reference(ckpt, feed):
    import transformers
    model = transformers.Siglip2VisionModel.from_pretrained(str(ckpt), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in feed.items()})
    ref = {"last_hidden_state": out.last_hidden_state.numpy()}
    if out.pooler_output is not None:
        ref["pooler_output"] = out.pooler_output.numpy()
    return ref


# every variant in ONNX Runtime and OpenVINO, the first in the torch formats too (the same graph code)
NAFLEX_RUNS = [(n, f) for n in NAFLEX for f in ("onnx", "openvino")] + [("siglip2", "dynamo"), ("siglip2", "executorch")]


@pytest.mark.parametrize("name,fmt", NAFLEX_RUNS)
def test_siglip2_naflex(name, fmt, naflex_ckpt, naflex_exports, tmp_path):
    """Siglip2VisionModel on the processor's inputs: every output within 1e-4 of transformers."""
    feed = naflex_inputs(naflex_ckpt(name))
    assert list(feed["spatial_shapes"][0]) != list(feed["spatial_shapes"][1]) and feed["pixel_attention_mask"].min() == 0
    want = naflex_reference(naflex_ckpt(name), feed)
    if fmt == "executorch":
        cfg = tmp_path / "et.json"
        cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {
            "pixel_values": {"0": {"name": "batch_size", "min": 1, "max": 4}}}}))
        out = naflex_exports(name, "--config", str(cfg))
    else:
        out = naflex_exports(name, "--format", fmt, "--dynamic")
    got = run_forward(fmt, out, feed, list(want))
    compare(got, want, f"{name} {fmt}")


def test_siglip2_fixed_patches(naflex_ckpt, naflex_exports):
    """Without --dynamic the patch count is the processor's max_num_patches (24): the graph's inputs say so."""
    import onnxruntime as ort
    sess = ort.InferenceSession(str(naflex_exports("siglip2", "--format", "onnx") / "model.onnx"),
                                providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [2, 24, 192]
    feed = naflex_inputs(naflex_ckpt("siglip2"))
    compare(dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed))),
            naflex_reference(naflex_ckpt("siglip2"), feed), "siglip2 fixed")
