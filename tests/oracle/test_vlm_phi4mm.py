"""Phi4MultimodalForCausalLM (src/arch/vlm_phi4mm.c over vision.c's SigLIP layers, audio_phi4.c and the decoder's Phi-3)
against transformers, exported for generation as image_encoder (each image's crops and their patch masks →
image_features: the tower's hidden_states[feature_layer], 2 × 2-averaged, projected; image_separators: the two
extensors projected), audio_encoder (input_features, audio_attention_mask → audio_features through the speech projection,
audio_features_with_image through the vision-speech one), embed_tokens and the Phi-3 language model over inputs_embeds.

The checkpoint is tiny and of every part: a three-layer SigLIP tower at Phi-4's 448-pixel crops of 14-pixel patches
(feature_layer −2), a two-layer audio conformer over 80 mel bins (NeMo subsampling by 8, distance bias clipped at 20),
a two-layer Phi-3; its processor's parts (Phi4MultimodalImageProcessor with at most 4 HD crops,
Phi4MultimodalFeatureExtractor) saved as transformers 5 saves them. A variant with streaming chunks (chunk_size 4,
left_chunk 1) is shown to move transformers' audio features, and one of every other field that shapes the encoders
(feature_layer, kernel_size, depthwise_multiplier, bias_symmetric, the three activations) each shown to move its
features:
  * image features of two images of other aspect ratios (HD crops with padded patches: their positions and masked
    keys), laid out by examples/generate_vlm.py as transformers lays them out; audio features of a batch of two clips
    (audio_attention_mask), of one clip past 500 encoder frames (transformers' chunks of 500, without a mask as its
    processor passes one clip) and of the streaming variant; embed_tokens: each within 1e-4 of transformers' merged
    inputs_embeds, ONNX Runtime and OpenVINO;
  * greedy generation of 24 tokens by examples/generate_vlm.py equal to transformers' generate() token for token, each
    step's logits within 1e-4: from an image (ONNX multi-token decode, a static cache), an audio file (ONNX prefill +
    decode, .pt2), both in one prompt (OpenVINO, ExecuTorch: the vision-speech projection), a left-padded batch of
    two prompts with an image each (ONNX), and with a LoRA adapter on the language model's fused and plain linears
    (the Hub's vision-lora's targets) at the folder's root (ONNX);
  * bad configs refused by name."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_config_refused, assert_logits_close, built_once, cached_exports
from genutil import compare_generation, left_pad
from initutil import init_weights
from mmutil import eager_models, expand_tokens, run_example_executorch, save_processor_parts, write_wav

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

NEW_TOKENS = 24
IMAGE_TOKEN, AUDIO_TOKEN = 250, 251
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4, image_size=448,
              patch_size=14, crop_size=448, image_token_id=IMAGE_TOKEN, feature_layer=-2)
AUDIO = dict(hidden_size=32, intermediate_size=48, num_blocks=2, num_attention_heads=4, input_size=80,
             nemo_conv_channels=8, ext_pw_out_channel=32, depthwise_separable_out_channel=32, bias_max_distance=20,
             kernel_size=3, audio_token_id=AUDIO_TOKEN)
VARIANTS = {"phi4mm": {}, "phi4mm_streaming": dict(chunk_size=4, left_chunk=1)}
# every other field that shapes the encoders, changed at once (test_fields_variant; each shown to move transformers'
# features on its own by test_each_field_moves_the_features): the tower's last state, a wider depthwise convolution
# of 2 channels per input, symmetric distance bias (its table past the 500-frame chunks), other activations
FIELDS = dict(kernel_size=5, depthwise_multiplier=2, bias_symmetric=True, bias_max_distance=600, activation="gelu",
              conv_activation="relu", conv_glu_type="sigmoid")
VISION_FIELDS = dict(feature_layer=-1)
VARIANTS["phi4mm_fields"] = FIELDS
TEXT = dict(vocab_size=300, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=512, original_max_position_embeddings=512, bos_token_id=1,
            eos_token_id=2, pad_token_id=0)
MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "onnx-static": ("--format", "onnx", "--dynamic", "--multi-token-decode", "--cache", "static", "--max-cache-len",
                    "1200"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 2}, "1": {"name": "sequence", "min": 1, "max": 1024}},
        "input_features": {"1": {"name": "audio_frames", "max": 512}},
        "pixel_values": {"0": {"name": "num_crops", "max": 5}}}}), "--multi-token-decode", "--max-cache-len",
        "1100"),
}


def image_processor():
    import transformers
    return transformers.Phi4MultimodalImageProcessor(dynamic_hd=4)


def feature_extractor():
    import transformers
    return transformers.Phi4MultimodalFeatureExtractor()


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("phi4mm")

    def make(name):
        import transformers
        torch.manual_seed(0)
        vision = dict(VISION, **(VISION_FIELDS if name == "phi4mm_fields" else {}))
        config = transformers.Phi4MultimodalConfig(vision_config=vision, audio_config=dict(AUDIO, **VARIANTS[name]),
                                                   **TEXT)
        model = transformers.Phi4MultimodalForCausalLM(config).eval()
        init_weights(model, 1, lambda n: 0.5 if n == "model.embed_tokens.weight" or "position_embedding" in n
                     or "bias_values" in n else None)
        model.save_pretrained(root / name)
        feature_extractor().save_pretrained(root / name)
        save_processor_parts(root / name, image_processor=image_processor(), feature_extractor=feature_extractor())
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("phi4mm-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    import transformers
    return eager_models(ckpt, lambda name: transformers.Phi4MultimodalForCausalLM)


def media(tmp_path, n_images=0, seconds=()):
    """PNG images of other aspect ratios (HD crops of 2 × 2 and 1 × 2, padded patches in the last row or column) and
    WAV chirps of the given lengths."""
    from PIL import Image
    rng = np.random.default_rng(3)
    images = []
    for i, shape in enumerate([(500, 800, 3), (300, 640, 3)][:n_images]):
        images.append(tmp_path / f"image{i}.png")
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(images[-1])
    clips = []
    for i, s in enumerate(seconds):
        t = np.arange(int(16000 * s)) / 16000
        x = 0.4 * np.sin(2 * np.pi * (200 + 300 * i + 900 * t) * t) + 0.05 * rng.standard_normal(len(t))
        clips.append(write_wav(tmp_path / f"audio{i}.wav", x))
    return images, clips


def model_inputs(images, clips):
    """The model's image and audio inputs as Phi4MultimodalProcessor makes them, and each medium's token count."""
    from PIL import Image
    kwargs, counts = {}, {IMAGE_TOKEN: [], AUDIO_TOKEN: []}
    if images:
        out = image_processor()(images=[Image.open(p).convert("RGB") for p in images], return_tensors="pt")
        kwargs.update(image_pixel_values=out["image_pixel_values"], image_sizes=out["image_sizes"],
                      image_attention_mask=out["image_attention_mask"])
        counts[IMAGE_TOKEN] = [int(n) for n in out["num_img_tokens"]]
    if clips:
        out = feature_extractor()([generate_vlm.read_wav(p, 16000) for p in clips], sampling_rate=16000,
                                  return_tensors="pt")
        kwargs.update(audio_input_features=out["audio_input_features"], audio_embed_sizes=out["audio_embed_sizes"])
        if "audio_attention_mask" in out:
            kwargs["audio_attention_mask"] = out["audio_attention_mask"]
        counts[AUDIO_TOKEN] = [int(n) for n in out["audio_embed_sizes"]]
    return kwargs, counts


def expanded(rows, counts):
    return expand_tokens(expand_tokens(rows, IMAGE_TOKEN, counts[IMAGE_TOKEN]), AUDIO_TOKEN, counts[AUDIO_TOKEN])


def want_generation(model, rows, images, clips):
    kwargs, counts = model_inputs(images, clips)
    ids, mask = left_pad(expanded(rows, counts), 0)
    with torch.no_grad():
        out = model.generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **kwargs,
                             max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


def merged_embeds(model, row, images, clips):
    """transformers' inputs_embeds of its decoder layers for one prompt (captured): the merge hfx's loop rebuilds."""
    kwargs, counts = model_inputs(images, clips)
    ids = np.array(expanded([row], counts)[0])
    seen = {}
    hook = model.model.layers[0].register_forward_pre_hook(
        lambda mod, args, kw: seen.update(embeds=args[0] if args else kw["hidden_states"]), with_kwargs=True)
    try:
        with torch.no_grad():
            model(input_ids=torch.from_numpy(ids[None]), **kwargs)
    finally:
        hook.remove()
    return ids, seen["embeds"][0].numpy()


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_encoders_and_embeddings(fmt, export_dir, reference, tmp_path):
    """Two images' features (HD crops of two layouts), a batch of two clips' (other lengths: a mask), and embed_tokens,
    each where transformers' merged inputs_embeds hold them (audio with images: the vision-speech projection)."""
    out = export_dir("phi4mm", "--format", fmt, "--dynamic")
    export = generate_vlm.runtime_of(out).Export(out)
    images, clips = media(tmp_path, 2, (0.73, 1.61))
    row = [1, IMAGE_TOKEN, 9, IMAGE_TOKEN, 7, AUDIO_TOKEN, 8, AUDIO_TOKEN, 210, 5]
    ids, want = merged_embeds(reference("phi4mm"), row, images, clips)
    got_images, counts = generate_vlm.hd_features(export, out, images)
    assert counts == model_inputs(images, [])[1][IMAGE_TOKEN]
    assert_logits_close(got_images, want[ids == IMAGE_TOKEN], f"{fmt} image features")
    got_audio, counts = generate_vlm.audio_features(export.audio_encoder, out, clips, with_images=True)
    assert_logits_close(got_audio, want[ids == AUDIO_TOKEN], f"{fmt} audio features")
    embeds = np.array(export.embed.run({"input_ids": ids[None]})["inputs_embeds"])[0]
    text = (ids != IMAGE_TOKEN) & (ids != AUDIO_TOKEN)
    assert_logits_close(embeds[text], want[text], f"{fmt} embed_tokens")


@pytest.mark.parametrize("name,seconds", [("phi4mm", 45.0), ("phi4mm_streaming", 2.3)])
def test_audio_alone(name, seconds, export_dir, reference, tmp_path):
    """One clip through the speech projection: 45 s (563 encoder frames: transformers' two chunks of 500, the second
    padded, without a mask as its processor passes one clip), and the streaming variant's, which must differ from the
    other model's (its chunks moved transformers' features)."""
    out = export_dir(name, "--format", "onnx", "--dynamic")
    export = generate_vlm.runtime_of(out).Export(out)
    _, clips = media(tmp_path, 0, (seconds,))
    ids, want = merged_embeds(reference(name), [1, AUDIO_TOKEN, 5], [], clips)
    got, counts = generate_vlm.audio_features(export.audio_encoder, out, clips)
    assert counts == [int((ids == AUDIO_TOKEN).sum())]
    assert_logits_close(got, want[ids == AUDIO_TOKEN], f"{name} audio features")
    if name == "phi4mm_streaming":
        _, other = merged_embeds(reference("phi4mm"), [1, AUDIO_TOKEN, 5], [], clips)
        assert np.abs(other[ids == AUDIO_TOKEN] - want[ids == AUDIO_TOKEN]).max() > 1e-2, "chunk_size moved nothing"


CASES = [("onnx-mtd", 1, 0), ("onnx-static", 1, 0), ("onnx-prefill", 0, 1), ("dynamo", 0, 1), ("executorch", 1, 1),
         ("openvino", 1, 1)]


@pytest.mark.parametrize("mode,n_images,n_audio", CASES, ids=[f"{m}-{i}image-{a}audio" for m, i, a in CASES])
def test_generation(mode, n_images, n_audio, export_dir, reference, tmp_path):
    out = export_dir("phi4mm", *MODES[mode])
    images, clips = media(tmp_path, n_images, (1.2,) * n_audio)
    row = [1, 7] + [IMAGE_TOKEN, 9] * n_images + [33] + [AUDIO_TOKEN, 8] * n_audio + [4]
    want_tokens, want_logits = want_generation(reference("phi4mm"), [row], images, clips)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    if mode == "executorch":
        flags = [a for p in images for a in ("--image", p)] + [a for p in clips for a in ("--audio", p)]
        tokens, logits = run_example_executorch(out, [row], NEW_TOKENS, flags, tmp_path)
    else:
        tokens, logits = generate_vlm.generate(out, images, [row], NEW_TOKENS, audio=clips)
    compare_generation(tokens, logits, want_tokens, want_logits, f"phi4mm {mode}")


def test_generation_batch_of_two(export_dir, reference, tmp_path):
    """Two prompts of different lengths, left-padded, an image each (HD grids of two layouts)."""
    out = export_dir("phi4mm", *MODES["onnx-mtd"])
    images, _ = media(tmp_path, 2)
    rows = [[1, 7, IMAGE_TOKEN, 9, 33, 90, 4], [1, IMAGE_TOKEN, 12, 5]]
    want_tokens, want_logits = want_generation(reference("phi4mm"), rows, images, [])
    tokens, logits = generate_vlm.generate(out, images, rows, NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "phi4mm batch 2")


def test_fields_variant(export_dir, reference, tmp_path):
    """The variant of every other encoder field: two images' and two clips' features (ONNX Runtime, within 1e-4 of
    transformers' merged inputs_embeds), and greedy generation from an image and an audio file in one prompt."""
    out = export_dir("phi4mm_fields", *MODES["onnx-mtd"])
    export = generate_vlm.runtime_of(out).Export(out)
    images, clips = media(tmp_path, 2, (0.73, 1.61))
    row = [1, IMAGE_TOKEN, 9, IMAGE_TOKEN, 7, AUDIO_TOKEN, 8, AUDIO_TOKEN, 210, 5]
    ids, want = merged_embeds(reference("phi4mm_fields"), row, images, clips)
    got_images, _ = generate_vlm.hd_features(export, out, images)
    assert_logits_close(got_images, want[ids == IMAGE_TOKEN], "fields variant image features")
    got_audio, _ = generate_vlm.audio_features(export.audio_encoder, out, clips, with_images=True)
    assert_logits_close(got_audio, want[ids == AUDIO_TOKEN], "fields variant audio features")
    row = [1, 7, IMAGE_TOKEN, 9, 33, AUDIO_TOKEN, 8, 4]
    want_tokens, want_logits = want_generation(reference("phi4mm_fields"), [row], images[:1], clips[:1])
    tokens, logits = generate_vlm.generate(out, images[:1], [row], NEW_TOKENS, audio=clips[:1])
    compare_generation(tokens, logits, want_tokens, want_logits, "phi4mm fields variant")


def test_each_field_moves_the_features(tmp_path):
    """Each field of the fields variant alone, in transformers, moves the merged inputs_embeds of an image and a clip
    (the symmetric bias against the same table size), so the variant's parity catches any of them ignored."""
    import transformers
    images, clips = media(tmp_path, 1, (1.61,))
    row = [1, IMAGE_TOKEN, 9, AUDIO_TOKEN, 5]

    def embeds(vision_change, audio_change):
        torch.manual_seed(0)
        config = transformers.Phi4MultimodalConfig(vision_config=dict(VISION, **vision_change),
                                                   audio_config=dict(AUDIO, **audio_change), **TEXT)
        model = transformers.Phi4MultimodalForCausalLM(config).eval()
        init_weights(model, 1, lambda n: 0.5 if n == "model.embed_tokens.weight" or "position_embedding" in n
                     or "bias_values" in n else None)
        return merged_embeds(model, row, images, clips)[1]

    changes = [(dict(VISION_FIELDS), {})] + [({}, {k: v}) for k, v in FIELDS.items() if k != "bias_max_distance"]
    for vision_change, audio_change in changes:
        base = {"bias_max_distance": 600} if "bias_symmetric" in audio_change else {}
        moved = np.abs(embeds(vision_change, {**base, **audio_change}) - embeds({}, base)).max()
        assert moved > 1e-3, f"{vision_change or audio_change} moved transformers' embeddings by only {moved}"


# Phi-4-multimodal's vision-lora and speech-lora adapters' targets: the language model's linears
LORA_TARGETS = r"model\.layers\.\d+\.((self_attn\.(qkv_proj|o_proj))|(mlp\.(gate_up_proj|down_proj)))"


def test_generation_with_adapter(ckpt, export_dir, reference, tmp_path):
    """An adapter at the folder's root on the language model's linears (as the Hub's vision-lora targets them: fused
    qkv_proj and gate_up_proj too), as peft applies it: generation from an image equal to the adapted model's, which
    the adapter moved off the base model's tokens."""
    import shutil

    import transformers
    from initutil import inject_lora
    folder = tmp_path / "phi4mm_lora"
    shutil.copytree(ckpt("phi4mm"), folder)
    model = transformers.Phi4MultimodalForCausalLM.from_pretrained(str(folder), attn_implementation="eager").eval()
    model = inject_lora(model, folder, target_modules=LORA_TARGETS, lora_alpha=1).eval()  # (scale 1/4: a trained
    # adapter's size; the default 2 makes updates far past the weights, whose float rounding over 900 image tokens
    # passes 1e-4)
    images, _ = media(tmp_path, 1)
    row = [1, 7, IMAGE_TOKEN, 9, 33, 4]
    want_tokens, want_logits = want_generation(model, [row], images, [])
    base_tokens, _ = want_generation(reference("phi4mm"), [row], images, [])
    assert (want_tokens != base_tokens).any(), "the adapter must move the tokens"
    out = export_dir("phi4mm_lora", *MODES["onnx-mtd"], checkpoint=folder)
    tokens, logits = generate_vlm.generate(out, images, [row], NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "phi4mm with an adapter")


@pytest.mark.parametrize("edit,words", [
    (lambda c: c["audio_config"].update(downsample_rate=2), "downsample_rate 2"),
    (lambda c: c["audio_config"].update(ext_pw_out_channel=16), "ext_pw_out_channel 16"),
    (lambda c: c["audio_config"].update(time_reduction=6), "time_reduction 6"),
    (lambda c: c["audio_config"].update(chunk_size=0), "chunk_size 0"),
    (lambda c: c["vision_config"].update(patch_size=16), "28 patches a side"),
])
def test_refused(edit, words, ckpt, tmp_path):
    cfg = json.loads((ckpt("phi4mm") / "config.json").read_text())
    edit(cfg)
    assert_config_refused(ckpt("phi4mm"), tmp_path, cfg, words, "--for-generation")
