"""Audio language models (src/arch/vlm.c's audio family, src/arch/audio_tower.c) against transformers, exported for
generation as audio_encoder (input_features, and the feature mask where the lineage reads one → audio_features and
their lengths), embed_tokens and decode over inputs_embeds: Qwen2-Audio (Whisper's encoder under Whisper's config
keys, each window's padded frames hidden, pooled by two, one linear into Qwen2), Voxtral (whole windows, four frames
a token through an unbiased MLP into Llama) and Audio Flamingo 3 (Qwen2-Audio's tower, an MLP into Qwen2).

Checkpoints are tiny (hidden 32, 16 mel bins) over 1-second windows (Voxtral: 2 seconds) of WAV files read and turned
into log-mel features by WhisperFeatureExtractor as each model's processor calls it (Qwen2-Audio: one window padded to
its length with the real frames masked; Audio Flamingo 3: the file cut into windows, each so; Voxtral: the file padded
to whole windows, the features cut into them):
  * the audio features as transformers writes them over the audio tokens (its own inputs_embeds, captured) within 1e-4,
    two files of different lengths in one call, ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from an audio file and a prompt by examples/generate_vlm.py equal to transformers'
    generate() token for token, each step's logits within 1e-4: every layout on Qwen2-Audio (ONNX multi-token decode,
    prefill + decode, a static cache; OpenVINO stateful; .pt2; ExecuTorch), ONNX and OpenVINO on the others; a
    left-padded batch of 2 prompts with a file each;
  * the config fields that change the graph in variants (projector_bias, projector_hidden_act, the tower's
    activation_function, Voxtral's frames per token, the language model), transformers 5's tensor names as well as
    the Hub's, and what hfx does not build refused by name with exit code 2."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest
import torch

from conftest import PARITY_ATOL, REPO, assert_logits_close, built_once, cached_exports, describe, run_hfx
from genutil import compare_generation, left_pad
from initutil import init_weights
from mmutil import eager_models, expand_tokens, run_example_executorch, save_processor_parts, write_wav

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

AUDIO_TOKEN = 150
VOCAB = 160
NEW_TOKENS = 32
MELS = 16
TEXT = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256, bos_token_id=1, eos_token_id=2)
# Whisper's config keys (Qwen2-Audio's), transformers 5's (Voxtral's, Audio Flamingo 3's)
WHISPER_TOWER = dict(d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=48, num_mel_bins=MELS,
                     max_source_positions=50)
V5_TOWER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, num_mel_bins=MELS,
                max_source_positions=50)
# Qwen3-ASR's: Whisper's keys, chunks of 100 frames, 8 Conv2d channels; a window of one chunk (the 1.61-second file
# spans two)
QWEN3_ASR_TOWER = dict(d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=48, num_mel_bins=MELS,
                       downsample_hidden_size=8, n_window=50, n_window_infer=100, output_dim=32)
# (its config's pad and end ids are the released vocabulary's: these are the tiny one's)
QWEN3_ASR_TOP = {"audio_token_id": AUDIO_TOKEN, "pad_token_id": 0, "eos_token_id": 2}


# Gemma 4's (E2B's and E4B's form, small): its own conformer over 16 mel bins (16 and 8 subsampling channels), chunks of
# 4 frames attending 4 back and 1 ahead, clipped linears; a tiny vision encoder beside it; Gemma 4's text model with
# per-layer inputs
GEMMA4_AUDIO = dict(model_type="gemma4_audio", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    subsampling_conv_channels=[MELS, 8], conv_kernel_size=5, attention_chunk_size=4,
                    attention_context_left=5, attention_context_right=2, output_proj_dims=24)
GEMMA4_TOP = {"vision_config": {"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 48,
                                "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 4,
                                "head_dim": 8, "patch_size": 4, "pooling_kernel_size": 3,
                                "position_embedding_size": 64},
              "audio_token_id": AUDIO_TOKEN, "image_token_id": 151, "boi_token_id": 152, "eoi_token_id": 153,
              "video_token_id": 154, "boa_token_id": 155, "eoa_token_index": 156}
GEMMA4_TEXT = {**TEXT, "model_type": "gemma4_text", "head_dim": 8, "global_head_dim": 16, "sliding_window": 4,
               "num_hidden_layers": 3, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
               "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": VOCAB, "pad_token_id": 0,
               "use_bidirectional_attention": "vision"}


@dataclasses.dataclass(frozen=True)
class Variant:
    arch: str     # transformers' <arch>Config and <arch>ForConditionalGeneration
    audio: dict   # audio_config
    text: dict    # text_config (with its model_type)
    top: dict     # the model config's own fields
    seconds: int = 1  # the feature extractor's window (chunk_length)
    table_std: float = 1.0  # the token table's (Qwen3's tied head copies the last token at 1: a constant run)


VARIANTS = {
    "qwen2_audio": Variant("Qwen2Audio", WHISPER_TOWER, {**TEXT, "model_type": "qwen2"},
                           {"audio_token_index": AUDIO_TOKEN}),
    # 100 frames after the strided convolution, 4 a token (intermediate_size 128 over hidden 32): 25 tokens a window
    "voxtral": Variant("Voxtral", {**V5_TOWER, "intermediate_size": 128, "max_source_positions": 100},
                       {**TEXT, "model_type": "llama", "head_dim": 8}, {"audio_token_id": AUDIO_TOKEN}, seconds=2),
    # 2 frames a token, a ReLU projector, a GELU-tanh tower
    "voxtral_variant": Variant("Voxtral", {**V5_TOWER, "intermediate_size": 64, "activation_function": "gelu_new"},
                               {**TEXT, "model_type": "llama", "head_dim": 8},
                               {"audio_token_id": AUDIO_TOKEN, "projector_hidden_act": "relu"}),
    "audioflamingo3": Variant("AudioFlamingo3", V5_TOWER, {**TEXT, "model_type": "qwen2"},
                              {"audio_token_id": AUDIO_TOKEN}),
    # an unbiased SiLU projector into Llama
    "audioflamingo3_variant": Variant("AudioFlamingo3", V5_TOWER, {**TEXT, "model_type": "llama", "head_dim": 8},
                                      {"audio_token_id": AUDIO_TOKEN, "projector_bias": False,
                                       "projector_hidden_act": "silu"}),
    "qwen3_asr": Variant("Qwen3ASR", QWEN3_ASR_TOWER, {**TEXT, "model_type": "qwen3", "head_dim": 8},
                         QWEN3_ASR_TOP, table_std=0.2),
    "gemma4": Variant("Gemma4", GEMMA4_AUDIO, GEMMA4_TEXT, GEMMA4_TOP, table_std=0.125),
    # causal windows as released (attention_context_right 0): chunks of 3 over 3 frames back, a wider light
    # convolution, another residual weight and a logit cap that bites
    "gemma4_causal": Variant("Gemma4", {**GEMMA4_AUDIO, "attention_chunk_size": 3, "attention_context_left": 4,
                                        "attention_context_right": 0, "conv_kernel_size": 7, "residual_weight": 0.7,
                                        "attention_logit_cap": 2.0}, GEMMA4_TEXT, GEMMA4_TOP, table_std=0.125),
    # windows of two chunks, a ReLU tower (its projector's activation too)
    "qwen3_asr_variant": Variant("Qwen3ASR", {**QWEN3_ASR_TOWER, "n_window_infer": 200, "activation_function": "relu"},
                                 {**TEXT, "model_type": "qwen3", "head_dim": 8}, QWEN3_ASR_TOP, table_std=0.2),
}


def feature_extractor(v: Variant):
    from transformers import Gemma4AudioFeatureExtractor, Qwen3ASRFeatureExtractor, WhisperFeatureExtractor
    if v.arch == "Gemma4":
        return Gemma4AudioFeatureExtractor(feature_size=MELS)
    if v.arch == "Qwen3ASR":
        return Qwen3ASRFeatureExtractor(feature_size=MELS, n_window=v.audio["n_window"])
    return WhisperFeatureExtractor(feature_size=MELS, chunk_length=v.seconds)


def gemma4_image_processor():
    """Gemma 4's image processor for GEMMA4_TOP's tower: patches of 4 pixels, up to 70 tokens of 3 × 3 patches."""
    from transformers import Gemma4ImageProcessor
    return Gemma4ImageProcessor(patch_size=4, max_soft_tokens=70, pooling_kernel_size=3)


def model_class(v: Variant):
    import transformers
    return getattr(transformers, f"{v.arch}ForConditionalGeneration")


def _config(v: Variant):
    import transformers
    return getattr(transformers, f"{v.arch}Config")(audio_config=v.audio, text_config=v.text, **v.top)


def _build(v: Variant):
    """The variant's model, its weights seeded (the same for every variant of one shape)."""
    torch.manual_seed(0)
    model = model_class(v)(_config(v)).eval()
    init_weights(model, 1, lambda n: (v.table_std if "embed_tokens" in n else 0.5) if "embed" in n else None)
    with torch.no_grad():  # Gemma 4's clipped linears: bounds its activations reach
        for n, b in model.named_buffers():
            if n.endswith(("input_min", "input_max", "output_min", "output_max")):
                b.fill_((-1.0 if n.endswith("_min") else 1.0) * (2.0 if "input" in n else 1.5))
    return model


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio_lm")

    def make(name):
        v = VARIANTS[name]
        model = _build(v)
        model.save_pretrained(root / name)
        feature_extractor(v).save_pretrained(root / name)
        if v.arch == "Gemma4":  # its processor's parts nested in processor_config.json, as transformers 5 saves them
            save_processor_parts(root / name, image_processor=gemma4_image_processor(),
                                 feature_extractor=feature_extractor(v))
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("audio-lm-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    return eager_models(ckpt, lambda name: model_class(VARIANTS[name]))


def audio_files(tmp_path, n, seconds=(0.73, 1.61)):
    """n 16-bit mono WAV files at 16 kHz: chirps with noise, of different lengths (the second longer than a 1-second
    window)."""
    rng = np.random.default_rng(3)
    paths = []
    for i, s in enumerate(seconds[:n]):
        t = np.arange(int(16000 * s)) / 16000
        x = 0.4 * np.sin(2 * np.pi * (200 + 300 * i + 900 * t) * t) + 0.05 * rng.standard_normal(len(t))
        paths.append(write_wav(tmp_path / f"audio{i}.wav", x))
    return paths


def audio_kwargs(name, paths):
    """The model's audio keyword arguments for `paths` (in order) and each file's window count, as its processor
    makes them (the example's own reading: generate_vlm.audio_features)."""
    v = VARIANTS[name]
    fe = feature_extractor(v)
    windows, masks, counts = [], [], []
    if v.arch == "Gemma4":  # Gemma4Processor: the files in one batch, padded to the longest, with their mask
        out = fe([generate_vlm.read_wav(p, 16000) for p in paths], sampling_rate=16000, padding="longest",
                 return_tensors="np")
        return {"input_features": torch.from_numpy(out["input_features"]),
                "input_features_mask": torch.from_numpy(out["input_features_mask"])}, [1] * len(paths)
    if v.arch == "Qwen3ASR":  # Qwen3ASRProcessor: the files in one batch, padded to whole chunks
        out = fe([generate_vlm.read_wav(p, 16000) for p in paths], sampling_rate=16000, return_attention_mask=True,
                 return_tensors="np")
        return {"input_features": torch.from_numpy(out["input_features"]),
                "input_features_mask": torch.from_numpy(out["attention_mask"].astype(np.int64))}, [1] * len(paths)
    for p in paths:
        wav = generate_vlm.read_wav(p, 16000)
        if v.arch == "Voxtral":  # VoxtralProcessor: padded to whole windows, the features cut into them
            x = fe(wav, sampling_rate=16000, padding=True, truncation=False, pad_to_multiple_of=fe.n_samples,
                   return_tensors="np")["input_features"][0]
            x = x.reshape(MELS, -1, fe.nb_max_frames).transpose(1, 0, 2)
            windows.append(x)
            counts.append(len(x))
            continue
        chunks = [wav[i:i + fe.n_samples] for i in range(0, len(wav), fe.n_samples)]
        if v.arch == "Qwen2Audio":  # Qwen2AudioProcessor: one window, the rest cut
            chunks = chunks[:1]
        out = fe(chunks, sampling_rate=16000, return_attention_mask=True, padding="max_length", return_tensors="np")
        windows.append(out["input_features"])
        masks.append(out["attention_mask"])
        counts.append(len(chunks))
    kwargs = {"input_features": torch.from_numpy(np.concatenate(windows))}
    if masks:
        key = "feature_attention_mask" if v.arch == "Qwen2Audio" else "input_features_mask"
        kwargs[key] = torch.from_numpy(np.concatenate(masks).astype(np.int64))
    return kwargs, counts


def token_counts(reference, name, paths):
    """Each file's audio tokens, as transformers counts them."""
    kwargs, windows = audio_kwargs(name, paths)
    model = reference(name)
    if VARIANTS[name].arch == "Gemma4":  # the encoder's real frames
        with torch.no_grad():
            per_window = model.model.audio_tower(kwargs["input_features"], kwargs["input_features_mask"]).attention_mask.sum(-1)
    elif VARIANTS[name].arch == "Qwen3ASR":  # (a module function there)
        from transformers.models.qwen3_asr.modeling_qwen3_asr import _get_feat_extract_output_lengths
        per_window = _get_feat_extract_output_lengths(kwargs["input_features_mask"].sum(-1), VARIANTS[name].audio["n_window"])
    elif "input_features_mask" in kwargs or "feature_attention_mask" in kwargs:
        mask = kwargs.get("input_features_mask", kwargs.get("feature_attention_mask"))
        _, per_window = model.model.audio_tower._get_feat_extract_output_lengths(mask.sum(-1))
    else:
        v = VARIANTS[name]
        per_window = torch.full((len(kwargs["input_features"]),),
                                v.audio["max_source_positions"] * v.audio["hidden_size"] // v.audio["intermediate_size"])
    counts, start = [], 0
    for n in windows:
        counts.append(int(per_window[start:start + n].sum()))
        start += n
    return counts


def batch(rows, counts):
    """The prompts, each audio token expanded to its file's count, left-padded: (ids, mask) as torch tensors."""
    ids, mask = left_pad(expand_tokens(rows, AUDIO_TOKEN, counts), 0)
    return torch.from_numpy(ids), torch.from_numpy(mask)


def want_features(reference, name, paths):
    """transformers' audio features of the files [tokens, hidden]: what its forward writes over the audio tokens of a
    prompt holding them all (its language model's inputs_embeds there)."""
    model = reference(name)
    kwargs, _ = audio_kwargs(name, paths)
    ids, mask = batch([[1] + [AUDIO_TOKEN] * len(paths) + [5]], token_counts(reference, name, paths))
    seen = {}
    hook = model.model.language_model.register_forward_pre_hook(
        lambda mod, args, kw: seen.update(embeds=kw["inputs_embeds"]), with_kwargs=True)
    try:
        with torch.no_grad():
            model(input_ids=ids, attention_mask=mask, **kwargs)
    finally:
        hook.remove()
    return seen["embeds"][0][ids[0] == AUDIO_TOKEN].numpy()


def prompts(n):
    return [[1, 7, AUDIO_TOKEN, 33, 90, 4], [1, AUDIO_TOKEN, 12, 5]][:n]


def want_generation(reference, name, rows, paths):
    """transformers' greedy generate() on the expanded, left-padded prompts (one file each, in order)."""
    ids, mask = batch(rows, token_counts(reference, name, paths))
    kwargs, _ = audio_kwargs(name, paths)
    with torch.no_grad():
        out = reference(name).generate(ids, attention_mask=mask, **kwargs, max_new_tokens=NEW_TOKENS,
                                       do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "onnx-static": ("--format", "onnx", "--dynamic", "--multi-token-decode", "--cache", "static",
                    "--max-cache-len", "128"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 128}}}}),
        "--multi-token-decode", "--max-cache-len", "128"),
    # Gemma 4's frames bounded too
    "executorch-gemma4": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 128}},
        "input_features": {"1": {"name": "audio_frames", "max": 256}},
        "pixel_values": {"0": {"name": "num_images", "max": 2}, "1": {"name": "num_patches", "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "128"),
}


def run_example(out, paths, rows, mode, tmp_path):
    """examples/generate_vlm.py's greedy search: in this process, or (ExecuTorch) as a command in the executorch
    virtualenv, with its --print-logits."""
    if not mode.startswith("executorch"):
        return generate_vlm.generate(out, [], rows, NEW_TOKENS, audio=paths)
    return run_example_executorch(out, rows, NEW_TOKENS, [a for p in paths for a in ("--audio", p)], tmp_path)


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_audio_features(name, fmt, export_dir, reference, tmp_path):
    """Two files of different lengths in one call (the longer cut into windows where the processor cuts it)."""
    out = export_dir(name, "--format", fmt, "--dynamic")
    paths = audio_files(tmp_path, 2)
    runtime = generate_vlm.runtime_of(out)
    got, counts = generate_vlm.audio_features(generate_vlm.audio_encoder_of(runtime.Export(out)), out, paths)
    assert counts == token_counts(reference, name, paths), counts
    assert_logits_close(got, want_features(reference, name, paths), f"{name} {fmt} audio features")


GENERATION_CASES = [("qwen2_audio", mode) for mode in MODES if mode != "executorch-gemma4"]
GENERATION_CASES += [(name, mode) for name in VARIANTS if name != "qwen2_audio" for mode in ("onnx-mtd", "openvino")]
# Gemma 4's conformer (its chunks a derived count of the frames) in the torch-side formats
GENERATION_CASES += [("gemma4", "dynamo"), ("gemma4", "executorch-gemma4")]


@pytest.mark.parametrize("name,mode", GENERATION_CASES)
def test_generation(name, mode, export_dir, reference, tmp_path):
    out = export_dir(name, *MODES[mode])
    paths = audio_files(tmp_path, 1)
    rows = prompts(1)
    want_tokens, want_logits = want_generation(reference, name, rows, paths)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = run_example(out, paths, rows, mode, tmp_path)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


@pytest.mark.parametrize("name", ["qwen2_audio", "voxtral", "audioflamingo3", "qwen3_asr", "gemma4"])
def test_generation_batch_of_two(name, export_dir, reference, tmp_path):
    """Two prompts of different lengths, left-padded, a file each (of different lengths: other token counts)."""
    out = export_dir(name, *MODES["onnx-mtd"])
    paths = audio_files(tmp_path, 2)
    want_tokens, want_logits = want_generation(reference, name, prompts(2), paths)
    tokens, logits = generate_vlm.generate(out, [], prompts(2), NEW_TOKENS, audio=paths)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} batch 2")


def test_gemma4_image_and_audio(export_dir, reference, tmp_path):
    """Gemma 4 (E2B's form) from an image and an audio file in one prompt: each encoder's features over its own
    tokens, the image's tokens a block on the sliding layers, the audio's causal; generate()'s tokens and logits."""
    from PIL import Image
    out = export_dir("gemma4", *MODES["onnx-mtd"])
    wav = audio_files(tmp_path, 1)
    picture = tmp_path / "image.png"
    Image.fromarray(np.random.default_rng(4).integers(0, 256, (60, 90, 3), dtype=np.uint8)).save(picture)
    image_token = GEMMA4_TOP["image_token_id"]
    rows = [[1, 7, image_token, 33, AUDIO_TOKEN, 90, 4]]
    pixels = gemma4_image_processor()(images=[Image.open(picture).convert("RGB")], return_tensors="pt")
    model = reference("gemma4")
    with torch.no_grad():
        n_image = int(model.model.get_image_features(pixels["pixel_values"], pixels["image_position_ids"])
                      .pooler_output[0].shape[0])
    rows = expand_tokens(expand_tokens(rows, AUDIO_TOKEN, token_counts(reference, "gemma4", wav)), image_token, [n_image])
    ids, mask = left_pad(rows, 0)
    kwargs, _ = audio_kwargs("gemma4", wav)
    with torch.no_grad():
        want = model.generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **kwargs,
                              pixel_values=pixels["pixel_values"], image_position_ids=pixels["image_position_ids"],
                              mm_token_type_ids=torch.from_numpy((ids == image_token).astype(np.int64)),
                              max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                              return_dict_in_generate=True)
    want_tokens, want_logits = want.sequences[:, ids.shape[1]:].numpy(), torch.stack(want.logits).numpy()
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = generate_vlm.generate(out, [picture], [[1, 7, image_token, 33, AUDIO_TOKEN, 90, 4]], NEW_TOKENS,
                                           audio=wav)
    compare_generation(tokens, logits, want_tokens, want_logits, "gemma4 image and audio")


def test_feature_mask_matters(export_dir, reference, tmp_path, monkeypatch):
    """The feature mask is what the test checks: the same export told every frame is real gives features far from
    transformers'."""
    out = export_dir("qwen2_audio", *MODES["onnx-mtd"])
    paths = audio_files(tmp_path, 1)
    want = want_features(reference, "qwen2_audio", paths)
    encoder = generate_vlm.audio_encoder_of(generate_vlm.runtime_of(out).Export(out))
    run = encoder.run

    def unmasked(feed):
        feed = dict(feed)
        feed["feature_attention_mask"] = np.ones_like(feed["feature_attention_mask"])
        return run(feed)
    monkeypatch.setattr(encoder, "run", unmasked)
    got, _ = generate_vlm.audio_features(encoder, out, paths)
    assert np.abs(got[:len(want)] - want).max() > 0.1


# each field of Gemma 4's audio encoder the graph reads, changed from the first variant's
GEMMA4_AUDIO_FIELDS = [{"attention_chunk_size": 3}, {"attention_context_left": 3}, {"attention_context_right": 0},
                       {"conv_kernel_size": 3}, {"residual_weight": 0.7}, {"attention_logit_cap": 0.5},
                       {"attention_invalid_logits_value": -5.0}, {"gradient_clipping": 0.5}, {"hidden_act": "gelu"},
                       {"output_proj_dims": 16}]


@pytest.mark.parametrize("edit", GEMMA4_AUDIO_FIELDS, ids=[next(iter(e)) for e in GEMMA4_AUDIO_FIELDS])
def test_gemma4_audio_fields_move_transformers(edit, tmp_path):
    """The generation and feature tests could not catch hfx ignoring a field that does not change transformers'
    audio encoder: each one does."""
    kwargs, _ = audio_kwargs("gemma4", audio_files(tmp_path, 2))
    base = VARIANTS["gemma4"]
    outs = []
    for v in (base, dataclasses.replace(base, audio={**base.audio, **edit})):
        with torch.no_grad():
            outs.append(_build(v).model.audio_tower(kwargs["input_features"], kwargs["input_features_mask"]).last_hidden_state)
    a, b = outs
    assert a.shape != b.shape or (a - b).abs().max() > 1e-3, f"{edit} does not move the audio encoder's output"


def test_qwen3_asr_windows_matter(ckpt, reference, tmp_path):
    """Qwen3-ASR's attention windows are what the variant's n_window_infer says: the same checkpoint told a window of
    one chunk (the base variant's) gives the 1.61-second file's features far from its own windows of two, so parity
    of both variants proves the window is read."""
    import transformers
    paths = audio_files(tmp_path, 2)
    want = want_features(reference, "qwen3_asr_variant", paths)
    config = transformers.AutoConfig.from_pretrained(str(ckpt("qwen3_asr_variant")))
    config.audio_config.n_window_infer = 100
    other = model_class(VARIANTS["qwen3_asr_variant"]).from_pretrained(
        str(ckpt("qwen3_asr_variant")), config=config, attn_implementation="eager").eval()
    got = want_features(lambda name: other, "qwen3_asr_variant", paths)
    assert np.abs(got - want).max() > 100 * PARITY_ATOL


def test_example_command_line(export_dir, tmp_path):
    """The example as a user runs it: one JSON list of ids per prompt; an image given to an audio model refused."""
    import subprocess
    out = export_dir("voxtral", *MODES["onnx-mtd"])
    path = audio_files(tmp_path, 1)[0]
    cmd = [sys.executable, str(REPO / "examples" / "generate_vlm.py"), str(out), "--prompt-ids",
           ",".join(map(str, prompts(1)[0])), "--max-new-tokens", "5"]
    proc = subprocess.run(cmd + ["--audio", str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 1 and len(rows[0]) == 5
    bad = subprocess.run(cmd + ["--image", str(path)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "takes audio" in bad.stderr, bad.stderr
    bad = subprocess.run(cmd[:4] + ["1,2,3", "--audio", str(path)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "audio tokens" in bad.stderr, bad.stderr


def _v5_name(k):
    if k.startswith("language_model.model."):
        return "model.language_model." + k[len("language_model.model."):]
    if k.startswith("language_model.lm_head."):
        return k[len("language_model."):]
    return "model." + k


def test_transformers5_tensor_names(ckpt, export_dir, reference, tmp_path):
    """The checkpoint under transformers 5's module names (model.audio_tower.*, model.multi_modal_projector.*,
    model.language_model.*, lm_head.*; save_pretrained writes the Hub's audio_tower.*, language_model.model.*,
    language_model.lm_head.*) exports the same graphs."""
    rename = _v5_name
    import shutil
    from safetensors.torch import load_file, save_file
    dst = tmp_path / "renamed"
    shutil.copytree(ckpt("audioflamingo3"), dst)
    tensors = load_file(str(dst / "model.safetensors"))
    renamed = {rename(k): t for k, t in tensors.items()}
    assert any(k.startswith("audio_tower.") for k in tensors) and set(renamed) != set(tensors)
    save_file(renamed, str(dst / "model.safetensors"), metadata={"format": "pt"})
    out = export_dir("audioflamingo3", *MODES["onnx-mtd"], checkpoint=dst)
    paths = audio_files(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, "audioflamingo3", prompts(1), paths)
    tokens, logits = generate_vlm.generate(out, [], prompts(1), NEW_TOKENS, audio=paths)
    compare_generation(tokens, logits, want_tokens, want_logits, "audioflamingo3 v5 names")


def _edited(ckpt, tmp_path, name, edit):
    import shutil
    dst = tmp_path / "edited"
    shutil.copytree(ckpt(name), dst)
    config = json.loads((dst / "config.json").read_text())
    edit(config)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


@pytest.mark.parametrize("name,edit,message", [
    ("qwen2_audio", lambda c: c["audio_config"].update(model_type="whisper"), "model_type 'whisper'"),
    ("qwen2_audio", lambda c: c.pop("audio_config"), "audio_config"),
    ("qwen2_audio", lambda c: c["text_config"].update(model_type="bert"), "model_type 'bert'"),
    ("qwen2_audio", lambda c: c["audio_config"].update(encoder_attention_heads=5), "encoder_attention_heads 5"),
    ("voxtral", lambda c: c["audio_config"].update(intermediate_size=96), "intermediate_size 96"),
    ("audioflamingo3", lambda c: c.update(projector_hidden_act="swishy"), "projector_hidden_act 'swishy'"),
    ("audioflamingo3", lambda c: c["audio_config"].update(max_source_positions=1), "max_source_positions 1"),
    ("audioflamingo3", lambda c: c.update(audio_token_id=VOCAB), "audio_token_id"),
    ("qwen3_asr", lambda c: c["audio_config"].update(n_window=40), "n_window 40"),
    ("qwen3_asr", lambda c: c["audio_config"].update(n_window_infer=50), "n_window_infer 50"),
    ("gemma4", lambda c: c["audio_config"].update(subsampling_conv_channels=[14, 8]), "subsampling_conv_channels"),
    ("gemma4", lambda c: c["audio_config"].update(num_attention_heads=5), "num_attention_heads 5"),
    ("gemma4", lambda c: c["audio_config"].update(hidden_act="swishy"), "hidden_act 'swishy'"),
])
def test_refused(name, edit, message, ckpt, tmp_path):
    src = _edited(ckpt, tmp_path, name, edit)
    out = tmp_path / "out"
    proc = run_hfx(["export", src, out, "--format", "onnx", "--for-generation"])
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not out.exists()
