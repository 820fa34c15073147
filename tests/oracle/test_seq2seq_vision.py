"""Vision encoder-decoders (src/arch/seq2seq.c's SRC_IMAGE_TEXT, src/arch/vision_davit.c): Florence-2 against
transformers, exported for generation as image_encoder (pixel_values → image_features: DaViT and Florence-2's
projector), embed_tokens (input_ids → the encoder's token embeddings), encoder (inputs_embeds — the caller writes the
image features over the image tokens' — and attention_mask) and BART's decoder (prefill + decode, or one multi-token
decode).

Checkpoints are tiny (d_model 24, two DaViT stages of 16 and 32 channels) over 48 × 48-pixel images made by
CLIPImageProcessor (Florence-2's) from random images of other sizes: 6 × 6 = 36 grid tokens and their mean, 37 image
tokens. The first variant's windows of 5 pad the 12 × 12 and 6 × 6 grids (the padding attended to, as transformers
does); the second has three stages, windows of 3 that need none, no q/k/v bias, gelu_new, mlp_ratio 2, scaled
embeddings, its own head.
  * image_features within 1e-4 of transformers' get_image_features (two images), ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from an image and a prompt by examples/generate_vlm.py equal to transformers'
    generate() token for token, each step's logits within 1e-4: ONNX (multi-token decode), OpenVINO (stateful),
    torch.export (.pt2) and ExecuTorch for the first variant, ONNX for the second (BART's prefill + decode layout is
    test_seq2seq.py's);
    a batch of two prompts (right-padded sources) with an image each;
  * each config field the graph reads shown to move transformers' outputs, and bad configs refused by name (exit 2,
    nothing written)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_config_refused, assert_logits_close, built_once, cached_exports, run_hfx, describe
from genutil import compare_generation
from initutil import init_weights
from mmutil import eager_models, expand_tokens, run_component, run_example_executorch

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

IMAGE_TOKEN = 98
VOCAB = 100
NEW_TOKENS = 32
SIZE = 48
TOKENS = 37  # (48 / 4 / 2)² grid tokens and their mean
VISION = dict(embed_dim=[16, 32], num_heads=[2, 4], num_groups=[2, 4], depths=[1, 1], patch_size=[7, 3],
              patch_stride=[4, 2], patch_padding=[3, 1], patch_prenorm=[False, True], window_size=5, projection_dim=24,
              max_position_embeddings=20, max_temporal_embeddings=4, drop_path_rate=0.0)
TEXT = dict(model_type="bart", vocab_size=VOCAB, d_model=24, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=2, decoder_attention_heads=3, encoder_ffn_dim=32, decoder_ffn_dim=40,
            max_position_embeddings=128, bos_token_id=0, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2)
VARIANTS = {
    "florence2": (VISION, TEXT, {}),
    # three stages (the last with two blocks), windows that need no padding, every switch the other way
    "florence2_variant": ({**VISION, "embed_dim": [8, 16, 24], "num_heads": [1, 2, 3], "num_groups": [2, 2, 4],
                           "depths": [1, 1, 2], "patch_size": [4, 3, 3], "patch_stride": [4, 2, 1],
                           "patch_padding": [0, 1, 1], "patch_prenorm": [True, False, True], "window_size": 3,
                           "qkv_bias": False, "activation_function": "gelu_new", "mlp_ratio": 2.0},
                          {**TEXT, "scale_embedding": True, "activation_function": "relu"},
                          {"tie_word_embeddings": False}),
}


def _config(name, vision=None, text=None, top=None):
    import transformers
    v, t, o = VARIANTS[name]
    return transformers.Florence2Config(vision_config={**v, **(vision or {})}, text_config={**t, **(text or {})},
                                        image_token_id=IMAGE_TOKEN, **{**o, **(top or {})})


# seeds whose greedy runs are not constant
SEEDS = {"florence2": 5, "florence2_variant": 2}


def _model(config, seed=5):
    import transformers
    torch.manual_seed(0)
    model = transformers.Florence2ForConditionalGeneration(config).eval()
    init_weights(model, seed, lambda n: 1.0 if "embed" in n or "shared" in n else None)
    return model


def processor():
    import transformers
    return transformers.CLIPImageProcessor(size={"height": SIZE, "width": SIZE}, do_center_crop=False)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("florence2")

    def make(name):
        _model(_config(name), SEEDS[name]).save_pretrained(root / name)
        processor().save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("florence2-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    import transformers
    return eager_models(ckpt, lambda name: transformers.Florence2ForConditionalGeneration)


def images(tmp_path, n):
    """n random PNG images of other sizes than the processor's."""
    from PIL import Image
    rng = np.random.default_rng(5)
    paths = []
    for i, (h, w) in enumerate(((70, 61), (40, 93))[:n]):
        paths.append(tmp_path / f"image{i}.png")
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(paths[-1])
    return paths


def pixels(paths):
    from PIL import Image
    return torch.from_numpy(np.asarray(processor()(images=[Image.open(p).convert("RGB") for p in paths],
                                                   return_tensors="np")["pixel_values"]))


def prompts(batch):
    """Florence-2's processor's layout: the image's tokens (one here: the example expands it), then BOS, the text
    and EOS."""
    return [[IMAGE_TOKEN, 0, 33, 90, 4, 57, 2], [IMAGE_TOKEN, 0, 12, 2]][:batch]


def want_generation(model, rows, paths):
    """transformers' greedy generate() on the expanded prompts, right-padded as the example pads the sources."""
    rows = expand_tokens(rows, IMAGE_TOKEN, [TOKENS] * len(rows))
    length = max(map(len, rows))
    ids = torch.tensor([r + [1] * (length - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in rows])
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, pixel_values=pixels(paths), max_new_tokens=NEW_TOKENS,
                             do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, 1:].numpy(), torch.stack(out.logits).numpy()


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_image_features(name, fmt, export_dir, reference, tmp_path):
    out = export_dir(name, "--format", fmt, "--dynamic")
    px = pixels(images(tmp_path, 2))
    with torch.no_grad():
        want = reference(name).get_image_features(px).pooler_output.numpy()
    assert want.shape == (2, TOKENS, 24)
    got = run_component(out, fmt, "image_encoder", {"pixel_values": px.numpy()}, "image_features")
    assert_logits_close(got, want, f"{name} {fmt} image_features")


MODES = {
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "64"),
}
# Florence-2's own parts are upstream of BART's decoder, whose layouts test_seq2seq.py runs in every mode: the first
# variant in four (prefill + decode is BART's), the second's generation in one (its features in both runtimes)
GENERATION_CASES = [("florence2", m) for m in MODES if m != "onnx-prefill"] + [("florence2_variant", "onnx-mtd")]


@pytest.mark.parametrize("name,mode", GENERATION_CASES)
def test_generation(name, mode, export_dir, reference, tmp_path):
    out = export_dir(name, *MODES[mode])
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference(name), prompts(1), paths)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    if mode == "executorch":
        tokens, logits = run_example_executorch(out, prompts(1), NEW_TOKENS, ["--image", paths[0]], tmp_path)
    else:
        tokens, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


@pytest.mark.parametrize("mode", ["onnx-mtd", "openvino"])
def test_generation_batch_of_two(mode, export_dir, reference, tmp_path):
    """Two prompts of different lengths (the shorter's source padded on the right), an image each: the second
    image's features go to the second row's image tokens."""
    out = export_dir("florence2", *MODES[mode])
    paths = images(tmp_path, 2)
    want_tokens, want_logits = want_generation(reference("florence2"), prompts(2), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(2), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"florence2 {mode} batch 2")


# each field the graph reads, changed from the first variant: transformers' image features or logits move
FIELDS = [("vision", {"window_size": 4}), ("vision", {"patch_prenorm": [True, True]}),
          ("vision", {"qkv_bias": False}), ("vision", {"activation_function": "relu"}), ("vision", {"mlp_ratio": 2.0}),
          ("vision", {"num_heads": [1, 2]}), ("vision", {"num_groups": [1, 2]}),
          ("vision", {"patch_stride": [3, 2]}), ("vision", {"patch_padding": [2, 1]}),
          ("text", {"scale_embedding": True}), ("top", {"tie_word_embeddings": False})]


@pytest.mark.parametrize("where,edit", FIELDS, ids=[next(iter(e)) for _, e in FIELDS])
def test_fields_move_transformers(where, edit, tmp_path):
    """The reference would not catch hfx ignoring a field that does not change transformers' outputs."""
    base, changed = _model(_config("florence2")), _model(_config("florence2", **{where: edit}))
    px = pixels(images(tmp_path, 1))
    ids = torch.tensor([[IMAGE_TOKEN] * TOKENS + [0, 5, 2]])
    with torch.no_grad():
        a = base.get_image_features(px).pooler_output
        b = changed.get_image_features(px).pooler_output
        if a.shape == b.shape and where != "vision":
            la = base(input_ids=ids, pixel_values=px, decoder_input_ids=torch.tensor([[2, 7]])).logits
            lb = changed(input_ids=ids, pixel_values=px, decoder_input_ids=torch.tensor([[2, 7]])).logits
            assert (la - lb).abs().max() > 1e-3, f"{edit} does not move the logits"
            return
    assert a.shape != b.shape or (a - b).abs().max() > 1e-3, f"{edit} does not move the image features"


@pytest.mark.parametrize("edit,words", [
    ({"image_token_id": 500}, "image_token_id 500"),
    ({"vision_config": {**VISION, "projection_dim": 16}}, "projection_dim 16"),
    ({"vision_config": {**VISION, "num_heads": [2]}}, "'num_heads' must be a list of 2"),
    ({"vision_config": {**VISION, "embed_dim": [16, 33], "num_heads": [2, 3], "num_groups": [2, 3]}}, "odd"),
    ({"vision_config": {**VISION, "embed_dim": [16, 30]}}, "not a multiple of num_heads"),
    ({"vision_config": {**VISION, "activation_function": "bogus"}}, "activation_function 'bogus'"),
    ({"vision_config": {**VISION, "max_position_embeddings": 4}}, "max_position_embeddings 4"),
    ({"vision_config": {**VISION, "dim_embed": [16, 32]}}, "original remote-code Florence-2"),
])
def test_bad_configs(edit, words, ckpt, tmp_path):
    assert_config_refused(ckpt("florence2"), tmp_path, edit, words, "--for-generation")


def test_forward_and_seed_refused(ckpt, tmp_path):
    """A plain forward is not one of its exports (the caller merges the image features), nor is the seed's profile."""
    for flags, words in ((("--format", "onnx"), "for-generation"),
                         (("--format", "onnx", "--for-generation", "--io", "seed"), "io \"seed\"")):
        out = tmp_path / f"out{len(flags)}"
        proc = run_hfx(["export", ckpt("florence2"), out, *flags])
        assert proc.returncode == 2 and words in proc.stderr, describe(proc)
        assert not out.exists()
