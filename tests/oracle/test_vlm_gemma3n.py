"""Gemma3nForConditionalGeneration (src/arch/vlm_gemma3n.c over vision_mobilenet.c, audio_usm.c and the decoder's Gemma
3n text model) against transformers, exported for generation as image_encoder (pixel_values → image_features: 256
tokens of MobileNet-V5's map through embed_vision), audio_encoder (input_features, input_features_mask →
audio_features: the USM conformer's frames through embed_audio, padded to audio_soft_tokens_per_image with the audio
vocabulary's embedding), embed_tokens (the text table, and the vision and audio vocabularies' ids through their
embedders) and the language model over inputs_embeds and input_ids (its per-layer inputs).

The checkpoint is tiny and of Gemma 3n's every part: Gemma3nVisionConfig's 84-block MobileNet-V5 with its channels
scaled by 0.125, a two-layer USM conformer over 16 mel bins, the text model of test_decoders_encoders' gemma3n (AltUp,
LAuReL, shared keys and values, per-layer inputs), vision and audio vocabularies of 20 ids each; its processor's parts
saved nested as transformers 5 does (SiglipImageProcessor at 256 × 256, Gemma3nAudioFeatureExtractor):
  * image features of two images, audio features of two clips of other lengths, and embed_tokens over the special
    ids (the image's end and the audio's, ids of both vocabularies) within 1e-4, ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens by examples/generate_vlm.py equal to transformers' generate() token for token, each
    step's logits within 1e-4: from an image (ONNX multi-token decode, OpenVINO, .pt2), an audio file (ONNX prefill +
    decode, a static cache, ExecuTorch), both in one prompt (ONNX), and a left-padded batch of two prompts (ONNX);
  * bad configs refused by name."""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_config_refused, assert_logits_close, built_once, cached_exports
from decoder_lineages_models import GEMMA3N
from genutil import compare_generation, left_pad
from initutil import init_weights
from mmutil import eager_models, expand_tokens, run_example_executorch, save_processor_parts, write_wav

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

NEW_TOKENS = 32
MELS = 16
VISION_OFFSET, AUDIO_OFFSET, MEDIA_VOCAB = 200, 220, 20
IMAGE_TOKEN, AUDIO_TOKEN = 201, 221
TOP = dict(audio_soft_tokens_per_image=12, boi_token_id=190, eoi_token_id=VISION_OFFSET, image_token_id=IMAGE_TOKEN,
           boa_token_id=191, eoa_token_id=AUDIO_OFFSET, audio_token_id=AUDIO_TOKEN)
TEXT = dict(GEMMA3N, vocab_size=AUDIO_OFFSET + MEDIA_VOCAB, model_type="gemma3n_text")
VISION = dict(model_type="gemma3n_vision", architecture="mobilenetv5_300m_enc", model_args={"channel_multiplier": 0.125},
              vocab_offset=VISION_OFFSET, vocab_size=MEDIA_VOCAB)
AUDIO = dict(model_type="gemma3n_audio", hidden_size=32, conf_num_hidden_layers=2, conf_num_attention_heads=4,
             input_feat_size=MELS, sscp_conv_channel_size=[8, 6], conf_attention_chunk_size=4,
             conf_attention_context_left=5, conf_attention_context_right=2, conf_conv_kernel_size=3,
             vocab_offset=AUDIO_OFFSET, vocab_size=MEDIA_VOCAB)
MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "onnx-static": ("--format", "onnx", "--dynamic", "--multi-token-decode", "--cache", "static", "--max-cache-len",
                    "300"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 128}},
        "input_features": {"1": {"name": "audio_frames", "max": 256}},
        "pixel_values": {"0": {"name": "num_images", "max": 2}}}}), "--multi-token-decode", "--max-cache-len",
        "128"),
}


def image_processor():
    import transformers
    return transformers.SiglipImageProcessor(size={"height": 256, "width": 256}, do_normalize=False)


def feature_extractor():
    import transformers
    return transformers.Gemma3nAudioFeatureExtractor(feature_size=MELS)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("gemma3n")

    def make(name):
        import transformers
        torch.manual_seed(0)
        config = transformers.Gemma3nConfig(text_config=TEXT, vision_config=VISION, audio_config=AUDIO, **TOP)
        model = transformers.Gemma3nForConditionalGeneration(config).eval()
        init_weights(model, 1, lambda n: (0.125 if "embed_tokens" in n else 0.5) if "embed" in n else None)
        model.save_pretrained(root / name)
        feature_extractor().save_pretrained(root / name)
        save_processor_parts(root / name, image_processor=image_processor(), feature_extractor=feature_extractor())
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("gemma3n-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    import transformers
    return eager_models(ckpt, lambda name: transformers.Gemma3nForConditionalGeneration)


def media(tmp_path, n_images=0, n_audio=0):
    """PNG images of other sizes and WAV chirps of other lengths."""
    from PIL import Image
    rng = np.random.default_rng(3)
    images = []
    for i, shape in enumerate([(60, 90, 3), (120, 70, 3)][:n_images]):
        images.append(tmp_path / f"image{i}.png")
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(images[-1])
    clips = []
    for i, s in enumerate((0.73, 1.61)[:n_audio]):
        t = np.arange(int(16000 * s)) / 16000
        x = 0.4 * np.sin(2 * np.pi * (200 + 300 * i + 900 * t) * t) + 0.05 * rng.standard_normal(len(t))
        clips.append(write_wav(tmp_path / f"audio{i}.wav", x))
    return images, clips


def model_inputs(images, clips):
    """The model's pixel_values and audio inputs as Gemma3nProcessor makes them."""
    from PIL import Image
    kwargs = {}
    if images:
        pictures = [Image.open(p).convert("RGB") for p in images]
        kwargs["pixel_values"] = image_processor()(images=pictures, return_tensors="pt")["pixel_values"]
    if clips:
        out = feature_extractor()([generate_vlm.read_wav(p, 16000) for p in clips], sampling_rate=16000,
                                  padding="longest", return_tensors="pt")
        kwargs["input_features"], kwargs["input_features_mask"] = out["input_features"], out["input_features_mask"]
    return kwargs


def expanded(rows, images, clips):
    """Each image token 256 tokens, each audio token audio_soft_tokens_per_image, as the processor expands them."""
    rows = expand_tokens(rows, IMAGE_TOKEN, [256] * len(images))
    return expand_tokens(rows, AUDIO_TOKEN, [TOP["audio_soft_tokens_per_image"]] * len(clips))


def want_generation(model, rows, images, clips):
    ids, mask = left_pad(expanded(rows, images, clips), 0)
    with torch.no_grad():
        out = model.generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **model_inputs(images, clips),
                             max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


def merged_embeds(model, rows, images, clips):
    """transformers' inputs_embeds of its language model for one prompt (captured): the merge hfx's loop rebuilds."""
    ids, mask = left_pad(expanded(rows, images, clips), 0)
    seen = {}
    hook = model.model.language_model.register_forward_pre_hook(
        lambda mod, args, kw: seen.update(embeds=kw["inputs_embeds"]), with_kwargs=True)
    try:
        with torch.no_grad():
            model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **model_inputs(images, clips))
    finally:
        hook.remove()
    return ids[0], seen["embeds"][0].numpy()


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_encoders_and_embeddings(fmt, export_dir, reference, tmp_path):
    """Two images' features, two clips' (other lengths: other padding), and embed_tokens over a prompt of special ids,
    each where transformers' merged inputs_embeds hold them."""
    out = export_dir("gemma3n", "--format", fmt, "--dynamic")
    export = generate_vlm.runtime_of(out).Export(out)
    images, clips = media(tmp_path, 2, 2)
    row = [1, 190, IMAGE_TOKEN, VISION_OFFSET, IMAGE_TOKEN, VISION_OFFSET, 191, AUDIO_TOKEN, AUDIO_OFFSET, AUDIO_TOKEN,
           AUDIO_OFFSET, 210, 235, 7]
    ids, want = merged_embeds(reference("gemma3n"), [row], images, clips)
    pixels = np.concatenate(generate_vlm.pixel_values(out, images))
    got_images = np.array(export.image_encoder.run({"pixel_values": pixels})["image_features"])
    assert_logits_close(got_images.reshape(-1, want.shape[-1]), want[ids == IMAGE_TOKEN], f"{fmt} image features")
    got_audio, counts = generate_vlm.audio_features(generate_vlm.audio_encoder_of(export), out, clips)
    assert counts == [TOP["audio_soft_tokens_per_image"]] * 2
    assert_logits_close(got_audio, want[ids == AUDIO_TOKEN], f"{fmt} audio features")
    embeds = np.array(export.embed.run({"input_ids": ids[None]})["inputs_embeds"])[0]
    text = (ids != IMAGE_TOKEN) & (ids != AUDIO_TOKEN)
    assert_logits_close(embeds[text], want[text], f"{fmt} embed_tokens")


CASES = [("onnx-mtd", 1, 0), ("openvino", 1, 0), ("dynamo", 1, 0), ("onnx-prefill", 0, 1), ("executorch", 0, 1),
         ("onnx-mtd", 1, 1), ("onnx-static", 0, 1)]


@pytest.mark.parametrize("mode,n_images,n_audio", CASES, ids=[f"{m}-{i}image-{a}audio" for m, i, a in CASES])
def test_generation(mode, n_images, n_audio, export_dir, reference, tmp_path):
    out = export_dir("gemma3n", *MODES[mode])
    images, clips = media(tmp_path, n_images, n_audio)
    row = [1, 7] + [190, IMAGE_TOKEN, VISION_OFFSET] * n_images + [33] + [191, AUDIO_TOKEN, AUDIO_OFFSET] * n_audio + [4]
    want_tokens, want_logits = want_generation(reference("gemma3n"), [row], images, clips)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    if mode == "executorch":
        flags = [a for p in images for a in ("--image", p)] + [a for p in clips for a in ("--audio", p)]
        tokens, logits = run_example_executorch(out, [row], NEW_TOKENS, flags, tmp_path)
    else:
        tokens, logits = generate_vlm.generate(out, images, [row], NEW_TOKENS, audio=clips)
    compare_generation(tokens, logits, want_tokens, want_logits, f"gemma3n {mode}")


def test_generation_batch_of_two(export_dir, reference, tmp_path):
    """Two prompts of different lengths, left-padded, an image each."""
    out = export_dir("gemma3n", *MODES["onnx-mtd"])
    images, _ = media(tmp_path, 2)
    rows = [[1, 7, 190, IMAGE_TOKEN, VISION_OFFSET, 33, 90, 4], [1, 190, IMAGE_TOKEN, VISION_OFFSET, 12, 5]]
    want_tokens, want_logits = want_generation(reference("gemma3n"), rows, images, [])
    tokens, logits = generate_vlm.generate(out, images, rows, NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "gemma3n batch 2")


# Gemma 3n's media tokens as GenAI's VLMPipeline spells them (its defaults; config.json's ids)
GENAI_SPECIAL = {1: "<s>", 2: "</s>", TOP["boi_token_id"]: "<start_of_image>", TOP["eoi_token_id"]: "<end_of_image>",
                 IMAGE_TOKEN: "<image_soft_token>"}


def test_vlm_pipeline(ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of Gemma 3n (its per-layer inputs' tokens' half from
    openvino_text_embeddings_per_layer_model.xml, which GenAI runs on the ids): from a raw 256 × 256 image (the
    processor's size: both resizes the identity) and a prompt with GenAI's image tag, the ids it streams are
    transformers' greedy tokens on the prompt GenAI builds ("\\n\\n<start_of_image>", 256 soft tokens,
    "<end_of_image>\\n\\n") at the positions it feeds (a 1-based prompt, then the count of tokens before each new one:
    Gemma 3's loop, test_vlm.py's test_vlm_pipeline_gemma3). The folder's preprocessor_config.json holds the image
    processor's fields beside the feature extractor's, as the Hub's Gemma 3n folders do (GenAI reads that file, or a
    processor_config.json with a video processor too)."""
    import genaiutil
    folder = tmp_path / "hub"
    shutil.copytree(ckpt("gemma3n"), folder)
    merged = {**json.loads(feature_extractor().to_json_string()), **json.loads(image_processor().to_json_string())}
    (folder / "preprocessor_config.json").write_text(json.dumps(merged))
    pipe, tok, _ = genaiutil.pipeline(folder, tmp_path, TEXT["vocab_size"], GENAI_SPECIAL)
    image = np.random.default_rng(9).integers(0, 256, (256, 256, 3), dtype=np.uint8)
    pixels = image_processor()(images=[image], return_tensors="pt")["pixel_values"]
    model = reference("gemma3n")
    before, after = "look", "tell me"
    got = genaiutil.streamed(pipe, before + "<image_soft_token>" + after, image, NEW_TOKENS)
    ids = tok.encode(before + "\n\n<start_of_image>" + "<image_soft_token>" * 256 + "<end_of_image>\n\n" + after).ids
    assert ids.count(IMAGE_TOKEN) == 256, ids
    want = genaiutil.greedy_at_positions(model, ids, 1, NEW_TOKENS, pixel_values=pixels)
    assert len(set(want)) > 3, "the reference must not be a constant run of tokens"
    assert got == want, f"VLMPipeline streamed {got}, transformers {want}"


@pytest.mark.parametrize("edit,words", [
    (lambda c: c["vision_config"].update(hidden_size=1024), "vision_config.hidden_size 1024"),
    (lambda c: c.update(vision_soft_tokens_per_image=64), "vision_soft_tokens_per_image 64"),
    (lambda c: c["text_config"].update(vocab_size=210), "text vocab_size 210"),
    (lambda c: c["vision_config"].update(architecture="mobilenetv4_conv_small"), "mobilenetv4_conv_small"),
    (lambda c: c["audio_config"].update(conf_num_attention_heads=5), "conf_num_attention_heads 5"),
])
def test_refused(edit, words, ckpt, tmp_path):
    cfg = json.loads((ckpt("gemma3n") / "config.json").read_text())
    edit(cfg)
    assert_config_refused(ckpt("gemma3n"), tmp_path, cfg, words, "--for-generation")
