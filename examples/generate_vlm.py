#!/usr/bin/env python3
"""Greedy generation from images (or audio) and a prompt with an `hfx export --for-generation` directory of a
vision-language model (LLaVA, LLaVA-Next, LLaVA-OneVision, Gemma 3, Gemma 3n, Gemma 4, PaliGemma, Idefics3, SmolVLM, InternVL, LFM2-VL, Llama 4, Mistral3, Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5) or an audio
language model (Qwen2-Audio, Voxtral, Audio Flamingo 3, Qwen3-ASR, Gemma 3n, Gemma 4's E2B and E4B, Granite Speech), or
Florence-2 (an encoder-decoder: the image features and the prompt's embeddings go to its encoder,
decode_loop.generate_seq2seq), in ONNX Runtime or OpenVINO (also torch and ExecuTorch: the export's format says which).

    python examples/generate_vlm.py OUT_DIR --image cat.png --prompt-ids "1,32000,415,3" --max-new-tokens 32
    python examples/generate_vlm.py OUT_DIR --audio speech.wav --prompt-ids "1,151646,415,3"

The command-line contract of examples/generate_onnx.py: each `;`-separated prompt is a row of ONE
left-padded batch; the new token ids are printed as one JSON list per prompt, one line each;
--print-logits FILE.npz saves each step's last-position logits [steps, batch, vocab] and the tokens;
exit code 2 for bad input. Here the prompts also hold the image token (config.json's
image_token_id) where the images go, in order: once per image (it is expanded to the image's
feature count: Idefics3's and SmolVLM's processors make several tiles of one image) or already
expanded. (Their processors also put markers around each tile; the model reads only the image
tokens' positions, so a prompt without them is a different prompt, not a wrong one.) Audio works the same way
with config.json's audio_token_id (audio_token_index).

hfx exports graphs, not processors: the images are turned into pixel_values by transformers' image
processor, read from the export's preprocessor_config.json (or transformers 5's nested processor_config.json, copied
from the checkpoint). Then:
  * image_encoder: pixel_values [N, C, S, S] → image_features [N, T, hidden]; Qwen2-VL's (any image
    size): pixel_values [patches, C·T·P·P] and image_grid_thw [N, 3] → image_features [tokens, hidden];
  * embed_tokens: the prompt's ids → inputs_embeds, the image features written over the image
    tokens' (transformers' masked_scatter; decode_loop.embed_prompt);
  * decode (and prefill): the causal LM's loop of examples/generate_onnx.py / generate_openvino.py
    on inputs_embeds, each new token embedded by embed_tokens; Qwen2-VL's positions are M-RoPE's
    [3, B, S] (mrope_positions: transformers' get_rope_index).
  * audio_encoder (in image_encoder's place): 16-bit mono WAV files become input_features [N, mels, frames] by the
    export's feature extractor (WhisperFeatureExtractor): each file one window, padded, and where the encoder takes
    a feature mask (Qwen2-Audio's feature_attention_mask) its real frames; Voxtral's files of any length cut into
    windows as its processor cuts them → audio_features [N, tokens, hidden] and, with a mask,
    audio_feature_lengths [N]: each window's first that many features are its tokens.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import decode_loop  # noqa: E402
from decode_loop import UsageError, read_wav  # noqa: E402

PROG = "generate_vlm"


def runtime_of(out_dir: Path):
    """The example module that runs this export's format."""
    fmt = decode_loop.read_manifest(out_dir).get("export_format")
    if fmt == "onnx":
        import generate_onnx as runtime
    elif fmt == "openvino":
        import generate_openvino as runtime
    elif fmt == "dynamo":
        import generate_torch as runtime
    elif fmt == "executorch":
        import generate_executorch as runtime
    else:
        raise UsageError(f"{out_dir}: export_format {fmt!r} is not one this example runs")
    return runtime


def image_token_id(out_dir: Path, modality: str = "image") -> int:
    config = json.loads((out_dir / "config.json").read_text())
    for key in (f"{modality}_token_id", f"{modality}_token_index"):
        if config.get(key) is not None:
            return int(config[key])
    tower = config.get("vision_config" if modality == "image" else "audio_config") or {}
    if tower.get(f"{modality}_token_id") is not None:  # (Phi-4-multimodal's are its towers')
        return int(tower[f"{modality}_token_id"])
    if modality == "audio" and config.get("model_type") == "voxtral":
        return 24  # (VoxtralProcessor's, where the config has none)
    raise UsageError(f"{out_dir}/config.json names no {modality}_token_id")


def audio_encoder_of(export):
    """The export's audio encoder: an audio LM's one encoder, or Gemma 4's beside its image encoder (None: a VLM's)."""
    if export.audio_encoder is not None:
        return export.audio_encoder
    encoder = export.image_encoder
    return encoder if encoder is not None and list(encoder.inputs)[0] == "input_features" else None


def audio_features(encoder, out_dir: Path, paths: list, with_images: bool = False):
    """The audio encoder's features of the WAV files [tokens, hidden], every file's in order, and each file's
    token count (Phi-4-multimodal's through its projection for prompts with images where with_images)."""
    from transformers import AutoFeatureExtractor

    if not (out_dir / "preprocessor_config.json").is_file():
        raise UsageError(f"{out_dir} has no preprocessor_config.json (the checkpoint had none to copy)")
    try:
        extractor = AutoFeatureExtractor.from_pretrained(str(out_dir))
    except ImportError as e:  # (Granite Speech's needs torchaudio)
        raise UsageError(f"the export's feature extractor: {e}")
    inputs = list(encoder.inputs)
    config = json.loads((out_dir / "config.json").read_text())
    if config.get("model_type") == "granite_speech":  # its mask is over the projected tokens, each clip's first
        out = extractor([read_wav(p, extractor.sampling_rate) for p in paths])
        feed = {"input_features": np.asarray(out["input_features"], np.float32)}
        features = np.array(encoder.run(feed)["audio_features"])
        keep = np.asarray(out["input_features_mask"], bool)
        return features[:, :keep.shape[1]][keep], [int(k.sum()) for k in keep]
    audio_config = config["audio_config"]
    if "audio_attention_mask" in inputs:  # Phi-4-multimodal's: frames [N, T, mels]; each clip's first audio_embed_sizes
        out = extractor([read_wav(p, extractor.sampling_rate) for p in paths], sampling_rate=extractor.sampling_rate,
                        return_tensors="np")
        x = np.asarray(out["audio_input_features"], np.float32)
        mask = np.asarray(out["audio_attention_mask"], np.int64) if "audio_attention_mask" in out else np.ones(
            x.shape[:2], np.int64)  # (its extractor gives none for one clip)
        result = encoder.run({"input_features": x, "audio_attention_mask": mask})
        features = np.array(result["audio_features_with_image" if with_images else "audio_features"])
        sizes = [int(n) for n in np.asarray(out["audio_embed_sizes"]).reshape(-1)]
        return np.concatenate([features[i, :n] for i, n in enumerate(sizes)]), sizes
    if "n_window" in audio_config:  # Qwen3-ASR's chunks
        return chunked_features(encoder, extractor, audio_config, paths, inputs)
    if "input_features_mask" in extractor.model_input_names:  # Gemma 4's: frames [N, T, mels], padded to the longest
        out = extractor([read_wav(p, extractor.sampling_rate) for p in paths], sampling_rate=extractor.sampling_rate,
                        padding="longest", return_tensors="np")
        feed = {"input_features": np.asarray(out["input_features"], np.float32),
                "input_features_mask": np.asarray(out["input_features_mask"], np.int64)}
        return encoded_rows(encoder, feed, [1] * len(paths))
    frames = 2 * int(audio_config.get("max_source_positions", 1500))
    if extractor.nb_max_frames != frames:
        raise UsageError(f"the feature extractor makes windows of {extractor.nb_max_frames} frames; the audio encoder "
                         f"takes {frames}")
    single = json.loads((out_dir / "config.json").read_text()).get("model_type") == "qwen2_audio"
    windows, masks, per_file = [], [], []
    for path in paths:
        wav = read_wav(path, extractor.sampling_rate)
        if len(inputs) > 1:  # windows of real frames and padding (Audio Flamingo 3's processor: the file cut into
            # windows; Qwen2-Audio's: its first window only)
            n = extractor.n_samples
            chunks = [wav[i:i + n] for i in range(0, max(len(wav), 1), n)][:1 if single else None]
            out = extractor(chunks, sampling_rate=extractor.sampling_rate, return_attention_mask=True,
                            padding="max_length", return_tensors="np")
            windows.append(out["input_features"])
            masks.append(np.asarray(out["attention_mask"], np.int64))
            per_file.append(len(chunks))
        else:  # Voxtral: padded to whole windows, the features cut into them
            out = extractor(wav, sampling_rate=extractor.sampling_rate, padding=True, truncation=False,
                            pad_to_multiple_of=extractor.n_samples, return_tensors="np")
            x = out["input_features"][0]  # [mels, k·frames]
            x = x.reshape(x.shape[0], -1, frames).transpose(1, 0, 2)
            windows.append(x)
            per_file.append(len(x))
    feed = {inputs[0]: np.concatenate(windows).astype(np.float32)}
    if len(inputs) > 1:
        feed[inputs[1]] = np.concatenate(masks)
    return encoded_rows(encoder, feed, per_file)


def chunked_features(encoder, extractor, audio_config: dict, paths: list, inputs: list):
    """Qwen3-ASR's audio_features (audio_features' contract): each file's log-mel features (its processor's, padded to
    whole chunks of 2·n_window frames) cut into those chunks, n_window_infer / chunk of them a window (the last padded
    with empty chunks), as its encoder attends; the encoder counts each window's real frames."""
    chunk = 2 * int(audio_config.get("n_window", 50))
    per = max(int(audio_config.get("n_window_infer", 800)) // chunk, 1)
    windows, masks, per_file = [], [], []
    for path in paths:
        out = extractor(read_wav(path, extractor.sampling_rate), sampling_rate=extractor.sampling_rate,
                        return_attention_mask=True, return_tensors="np")
        x, m = out["input_features"][0], np.asarray(out["attention_mask"][0], np.int64)  # [mels, T], [T]
        n = -(-x.shape[1] // chunk)
        a = -(-n // per)  # windows
        x = np.pad(x, ((0, 0), (0, a * per * chunk - x.shape[1])))
        m = np.pad(m, (0, a * per * chunk - m.shape[0]))
        windows.append(x.reshape(x.shape[0], a, per, chunk).transpose(1, 2, 0, 3))  # [a, per, mels, chunk]
        masks.append(m.reshape(a, per * chunk))
        per_file.append(a)
    feed = {inputs[0]: np.concatenate(windows).astype(np.float32), inputs[1]: np.concatenate(masks)}
    return encoded_rows(encoder, feed, per_file)


def encoded_rows(encoder, feed: dict, per_file: list):
    """The encoder on `feed`: the real features of every window in order [tokens, hidden], and each file's count
    (per_file: its windows)."""
    outputs = encoder.run(feed)
    features = np.array(outputs["audio_features"])  # [windows, tokens, hidden]
    lengths = (np.array(outputs["audio_feature_lengths"]) if "audio_feature_lengths" in outputs
               else np.full(len(features), features.shape[1]))
    rows = [features[i, :lengths[i]] for i in range(len(features))]
    counts, start = [], 0
    for n in per_file:
        counts.append(int(sum(lengths[start:start + n])))
        start += n
    return np.concatenate(rows), counts


def processed(out_dir: Path, images: list):
    """Each image through the model's image processor: its outputs, one dict per image."""
    from PIL import Image
    from transformers import AutoImageProcessor

    if not (out_dir / "preprocessor_config.json").is_file():
        raise UsageError(f"{out_dir} has no preprocessor_config.json (the checkpoint had none to copy)")
    processor = AutoImageProcessor.from_pretrained(str(out_dir))
    for path in images:
        try:
            picture = Image.open(path).convert("RGB")
        except OSError as e:
            raise UsageError(f"--image {path}: {e}")
        yield path, as_numpy(processor, [picture])


def as_numpy(processor, pictures) -> dict:
    """The processor's outputs for the pictures as numpy arrays: a processor that computes in bfloat16 (Llama 4's, as
    the original does) returns torch tensors, whose values are taken in float32."""
    try:
        return dict(processor(images=pictures, return_tensors="np"))
    except ValueError as e:
        if "BFloat16" not in str(e):
            raise
    out = processor(images=pictures, return_tensors="pt")
    return {k: (v.float() if v.is_floating_point() else v).numpy() if hasattr(v, "numpy") else v for k, v in out.items()}


def pixel_values(out_dir: Path, images: list) -> list:
    """Each image as the model's image processor prepares it: [n, C, S, S] float32 — one image, or
    (Idefics3, SmolVLM, InternVL) its tiles and the whole image resized."""
    result = []
    for path, out in processed(out_dir, images):
        pixels = np.asarray(out["pixel_values"], np.float32)
        if pixels.ndim == 5:  # Idefics3 / SmolVLM: [1, tiles (padded with zeros), C, S, S]
            pixels = pixels.reshape(-1, *pixels.shape[2:])
            real = ~(pixels == 0).all(axis=(1, 2, 3))  # as the model drops the all-zero padding images
            mask = out.get("pixel_attention_mask")
            if mask is not None and not np.asarray(mask).reshape(-1, *pixels.shape[2:])[real].all():
                raise UsageError(f"--image {path}: the processor padded it (pixel_attention_mask): the exported image "
                                 "encoder takes full images of its size only")
            pixels = pixels[real]
        result.append(pixels)
    return result


def unpad(grid, original):
    """The rows (or columns) the processor's resize padded cropped off grid [D, H, W], as transformers' unpad_image."""
    oh, ow = original
    _, h, w = grid.shape
    if ow / oh > w / h:
        pad = (h - int(round(oh * (w / ow), 7))) // 2
        return grid[:, pad:h - pad, :]
    pad = (w - int(round(ow * (h / oh), 7))) // 2
    return grid[:, :, pad:w - pad]


def bilinear(grid, height: int, width: int):
    """grid [D, H, W] resized to [D, height, width] as torch's interpolate(mode="bilinear", align_corners=False)."""
    def taps(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = src - lo
        return lo, hi, 1.0 - frac, frac
    r0, r1, a0, a1 = taps(grid.shape[1], height)
    c0, c1, b0, b1 = taps(grid.shape[2], width)
    g = grid.astype(np.float64)
    rows = g[:, r0] * a0[None, :, None] + g[:, r1] * a1[None, :, None]
    return (rows[:, :, c0] * b0 + rows[:, :, c1] * b1).astype(grid.dtype)


def anyres_features(export, out_dir: Path, images: list):
    """LLaVA-Next's (LLaVA-OneVision's) features [tokens, hidden] of the images and each image's count: each image's
    tiles (the whole image resized, then its any-resolution grid's) through the encoder, packed as transformers packs
    them: the grid tiles' features laid out as the grid, the rows or columns the resize padded cropped off (OneVision:
    then shrunk bilinearly where more than 1.1² times its vision_aspect_ratio's anyres_max_N tiles of features),
    image_newline after each row, all behind the whole image's (an image of one tile: its features and one
    newline). image_newline is the encoder's output, or (OpenVINO's stateful layout, optimum-intel's) config.json's."""
    from transformers.image_processing_utils import select_best_resolution

    config = json.loads((out_dir / "config.json").read_text())
    size = int(config["vision_config"].get("image_size", 224))
    side = size // int(config["vision_config"].get("patch_size", 32))
    rows, counts = [], []
    for path, out in processed(out_dir, images):
        pixels = np.asarray(out["pixel_values"], np.float32)
        result = export.image_encoder.run({"pixel_values": pixels.reshape(-1, *pixels.shape[-3:])})
        features = np.array(result["image_features"])
        newline = np.array(result["image_newline"] if "image_newline" in result else config["image_newline"],
                           features.dtype)
        if len(features) == 1:
            packed = np.concatenate([features[0], newline[None]])
        else:
            original = [int(v) for v in np.asarray(out["image_sizes"]).reshape(-1)[:2]]
            height, width = select_best_resolution(original, config["image_grid_pinpoints"])
            grid_h, grid_w = height // size, width // size
            if features.shape[1] != side * side or len(features) != 1 + grid_h * grid_w:
                raise UsageError(f"--image {path}: {len(features)} tiles of {features.shape[1]} features, not the "
                                 f"whole image and a {grid_h} × {grid_w} grid of {side} × {side}")
            grid = features[1:].reshape(grid_h, grid_w, side, side, -1).transpose(4, 0, 2, 1, 3)
            grid = unpad(grid.reshape(grid.shape[0], grid_h * side, grid_w * side), original)
            if config.get("model_type") == "llava_onevision":  # too many features: shrunk
                most = int(config.get("vision_aspect_ratio", "anyres_max_9").removeprefix("anyres_max_"))
                ratio = math.sqrt(grid.shape[1] * grid.shape[2] / (most * side * side))
                if ratio > 1.1:
                    grid = bilinear(grid, int(grid.shape[1] // ratio), int(grid.shape[2] // ratio))
            grid = np.concatenate([grid, np.broadcast_to(newline[:, None, None], (*grid.shape[:2], 1))], axis=2)
            packed = np.concatenate([features[0], grid.reshape(grid.shape[0], -1).T])
        rows.append(packed)
        counts.append(len(packed))
    return np.concatenate(rows), counts


def hd_features(export, out_dir: Path, images: list):
    """Phi-4-multimodal's features [tokens, hidden] of the images and each image's count: each image's crops (the global
    view, then the HD crops) through the encoder, laid out as transformers lays them out: the HD crops' tokens as their
    grid, cut to the rows and columns with real patches, the first separator after each row, then the second separator,
    then the global view's tokens with the first separator after each row."""
    config = json.loads((out_dir / "config.json").read_text())
    crop = int(config["vision_config"].get("crop_size", 448))
    rows, counts = [], []
    for _, out in processed(out_dir, images):
        pixels = np.asarray(out["image_pixel_values"], np.float32)[0]
        mask = np.asarray(out["image_attention_mask"], np.int64)[0]
        result = export.image_encoder.run({"pixel_values": pixels, "image_attention_mask": mask})
        features, separators = np.array(result["image_features"]), np.array(result["image_separators"])
        side, width = math.isqrt(features.shape[1]), features.shape[-1]
        height_crops, width_crops = (int(v) // crop for v in np.asarray(out["image_sizes"]).reshape(-1)[:2])
        area = height_crops * width_crops
        grid = features[1:1 + area].reshape(height_crops, width_crops, side, side, width).transpose(0, 2, 1, 3, 4)
        grid = grid.reshape(height_crops * side, width_crops * side, width)
        real = mask[1:1 + area, 0::2, 0::2].reshape(height_crops, width_crops, side, side).transpose(0, 2, 1, 3)
        real = real.reshape(height_crops * side, width_crops * side)
        used_h, used_w = int(real[:, 0].sum()), int(real[0, :].sum())
        grid = np.concatenate([grid[:used_h, :used_w], np.broadcast_to(separators[0], (used_h, 1, width))], axis=1)
        whole = np.concatenate([features[0].reshape(side, side, width),
                                np.broadcast_to(separators[0], (side, 1, width))], axis=1)
        packed = np.concatenate([grid.reshape(-1, width), separators[1][None], whole.reshape(-1, width)])
        rows.append(packed)
        counts.append(len(packed))
    return np.concatenate(rows), counts


# what a patch encoder takes from its processor, in the dtype it takes it
PATCH_INPUTS = {"pixel_values": np.float32, "pixel_attention_mask": np.int32, "spatial_shapes": np.int64,
                "image_position_ids": np.int64}


def patch_features(export, out_dir: Path, images: list):
    """A patch encoder's features [tokens, hidden] of the images and each image's count: each image as its processor
    makes it (LFM2-VL's NaFlex tiles and a thumbnail: patches [n, P, ·], pixel_attention_mask, spatial_shapes; Gemma
    4's patches [1, P, ·] and their image_position_ids), of each the first image_feature_lengths features (OpenVINO's
    stateful layout, optimum-intel's: the real features alone, [tokens, hidden])."""
    rows, counts = [], []
    for _, out in processed(out_dir, images):
        feed = {name: np.asarray(out[name], dtype) for name, dtype in PATCH_INPUTS.items()
                if name in export.image_encoder.inputs}
        result = export.image_encoder.run(feed)
        features = np.array(result["image_features"])
        if "image_feature_lengths" not in result:
            rows.append(features)
            counts.append(len(features))
            continue
        lengths = np.array(result["image_feature_lengths"])
        rows += [features[i, :lengths[i]] for i in range(len(features))]
        counts.append(int(lengths.sum()))
    return np.concatenate(rows), counts


def expand_image_tokens(prompts, token: int, per_image: list, what: str = "image"):
    """Each image's one token made per_image[k] tokens (its feature count), unless the prompts
    already hold them all."""
    count = sum(p.count(token) for p in prompts)
    if count == sum(per_image):
        return prompts
    if count != len(per_image):
        raise UsageError(f"the prompts hold {count} {what} tokens ({token}) for {len(per_image)} {what}(s): put one per "
                         f"{what}, or {sum(per_image)} in all")
    sizes = iter(per_image)
    return [[t for tok in p for t in ([tok] * next(sizes) if tok == token else [tok])] for p in prompts]


def spatial_merge_size(out_dir: Path) -> int:
    config = json.loads((out_dir / "config.json").read_text())
    if "spatial_merge_size" in config:  # (Mistral3's, at the top)
        return int(config["spatial_merge_size"])
    if config.get("model_type") == "llava":  # a Pixtral tower in LLaVA (Pixtral-12B's): every patch a token
        return 1
    return int((config.get("vision_config") or {}).get("spatial_merge_size", 2))


def grid_patches(path, out, patch: int, merge: int):
    """An image as PixtralImageProcessor makes it (pixel_values [1, C, H, W], image_sizes [[h, w]]) laid out as a grid
    processor lays out its patches: [rows·cols, C·P·P] (each patch's channels, then its rows and columns of
    pixels), each merge × merge block of patches consecutive, row-major within a block and among the blocks, and its
    grid [[1, rows, cols]] — the same numbers in another order."""
    h, w = (int(v) for v in np.asarray(out["image_sizes"]).reshape(-1, 2)[0])
    x = np.asarray(out["pixel_values"], np.float32)[0, :, :h, :w]
    channels, rows, cols = x.shape[0], h // patch, w // patch
    if rows % merge or cols % merge or h % patch or w % patch:
        raise UsageError(f"--image {path}: the processor made {h} × {w} pixels, not whole {merge} × {merge} blocks of "
                         f"{patch}-pixel patches")
    x = x.reshape(channels, rows // merge, merge, patch, cols // merge, merge, patch)
    x = x.transpose(1, 4, 2, 5, 0, 3, 6).reshape(rows * cols, channels * patch * patch)
    return x, np.array([[1, rows, cols]], np.int64)


def grid_features(export, out_dir: Path, images: list):
    """A grid encoder's (Qwen2-VL's, Mistral3's) image features [tokens, hidden] of the images, each image's
    feature count and the grids [N, 3] (frames, rows, columns in patches)."""
    pixels, grids = [], []
    config = json.loads((out_dir / "config.json").read_text())
    for path, out in processed(out_dir, images):
        if "image_grid_thw" not in out:  # Pixtral's processor: whole images
            patch = int((config.get("vision_config") or {}).get("patch_size", 16))
            x, grid = grid_patches(path, out, patch, spatial_merge_size(out_dir))
            pixels.append(x), grids.append(grid)
            continue
        pixels.append(np.asarray(out["pixel_values"], np.float32))
        grids.append(np.asarray(out["image_grid_thw"], np.int64).reshape(-1, 3))
    grid = np.concatenate(grids)
    outputs = export.image_encoder.run({"pixel_values": np.concatenate(pixels), "image_grid_thw": grid})
    features = np.array(outputs["image_features"])
    # Qwen3-VL: the DeepStack features [n, tokens, hidden] its language model adds into its first layers
    deepstack = np.array(outputs["deepstack_features"]) if "deepstack_features" in outputs else None
    merge = spatial_merge_size(out_dir)
    return features, [int(np.prod(g)) // merge ** 2 for g in grid], grid, deepstack


class GridParts:
    """The Qwen-VL lineages' towers as optimum-intel splits them in OpenVINO's stateful layout (the files GenAI's
    VLMPipeline reads): the patch embedding (vision_embeddings), Qwen3-VL's learned position table
    (vision_embeddings_pos), then the layers and merger (vision_embeddings_merger) over what GenAI computes from the
    grids outside them — each patch's learned position (the table's four bilinear taps, weighed and added to its patch
    embedding), each frame's attention mask, each patch's rotary angles (its row's, then its column's), Qwen2.5-VL's
    window order and window mask — computed here as GenAI does. Run as the whole tower's image_encoder is:
    pixel_values and image_grid_thw → image_features (and Qwen3-VL's deepstack_features)."""

    inputs = ("pixel_values", "image_grid_thw")

    def __init__(self, export, out_dir: Path):
        self.patches, self.merger = export.patch_embedding, export.vision_merger
        self.table = getattr(export, "position_table", None)
        vision = json.loads((out_dir / "config.json").read_text()).get("vision_config") or {}
        self.side = int(math.sqrt(int(vision.get("num_position_embeddings", 2304))))
        self.merge = spatial_merge_size(out_dir)
        self.theta = float((vision.get("rope_parameters") or {}).get("rope_theta", 10000.0))
        # a window's side in merged tokens (Qwen2.5-VL), as GenAI reads it from config.json
        self.window = (int(vision["window_size"]) // self.merge // int(vision.get("patch_size", 14))
                       if "window_index" in self.merger.inputs else 0)

    def block_order(self, t, h, w):
        """An image's patches in the processor's order (merge × merge blocks, row-major), as their row-major index
        among its h × w, each of its t frames alike."""
        m = self.merge
        return np.tile(np.arange(h * w).reshape(h // m, m, w // m, m).transpose(0, 2, 1, 3).ravel(), int(t))

    def positions(self, grid):
        """Each patch's row and column [2, N], the processor's order."""
        out = []
        for t, h, w in grid:
            order = self.block_order(t, h, w)
            out.append(np.stack([order // w, order % w]))
        return np.concatenate(out, axis=1)

    def rotary(self, grid):
        """rotary_pos_emb [N, dim]: angles position · θ^(−i / (dim / 2)) in float32, the row's then the column's."""
        half = self.merger.graph_dim("rotary_pos_emb", 1) // 2
        inv = np.float32(1) / np.power(np.float32(self.theta), np.arange(half, dtype=np.float32) / np.float32(half))
        rows, cols = self.positions(grid).astype(np.float32)
        return np.concatenate([rows[:, None] * inv, cols[:, None] * inv], axis=1)

    def windows(self, grid):
        """Qwen2.5-VL's window order of the merged tokens [tokens] and the window lengths in patches."""
        index, lengths, base, s = [], [], 0, self.window
        for t, h, w in grid:
            h, w = h // self.merge, w // self.merge
            for f in range(t):
                for r in range(0, h, s):
                    for c in range(0, w, s):
                        tokens = [f * h * w + i * w + j for i in range(r, min(r + s, h)) for j in range(c, min(c + s, w))]
                        index += [base + k for k in tokens]
                        lengths.append(len(tokens) * self.merge ** 2)
            base += t * h * w
        return np.array(index, np.int64), lengths

    def learned_positions(self, grid):
        """Qwen3-VL's learned positions [N, hidden] in the processor's order: each patch's four taps of the square
        table (corners aligned), weighed in float32 as GenAI weighs them."""
        taps, weights = [], []
        for t, h, w in grid:
            def axis(n):
                scale = np.float32(self.side - 1) / np.float32(n - 1) if n > 1 else np.float32(0)
                at = np.arange(n, dtype=np.float32) * scale
                lo = at.astype(np.int64)
                return lo, np.minimum(lo + 1, self.side - 1), at - lo.astype(np.float32)
            h0, h1, dh = (a[:, None] for a in axis(h))
            w0, w1, dw = (a[None, :] for a in axis(w))
            one = np.float32(1)
            corners = [(h0, w0, (one - dh) * (one - dw)), (h0, w1, (one - dh) * dw), (h1, w0, dh * (one - dw)),
                       (h1, w1, dh * dw)]
            order = self.block_order(t, h, w)  # (the taps are row-major over the image)
            taps.append(np.stack([(r * self.side + c).ravel()[order] for r, c, _ in corners]))
            weights.append(np.stack([np.broadcast_to(x, (h, w)).ravel()[order] for _, _, x in corners]))
        taps, weights = np.concatenate(taps, axis=1), np.concatenate(weights, axis=1)
        rows = self.table.run({"input": taps})["position_embeddings"]  # [4, N, hidden]
        return sum(rows[k] * weights[k][:, None] for k in range(4))

    def run(self, feed: dict) -> dict:
        grid = np.asarray(feed["image_grid_thw"], np.int64)
        states = self.patches.run({"hidden_states": feed["pixel_values"]})["last_hidden_state"]
        if self.table is not None:
            states = states + self.learned_positions(grid)
        frames = [int(h * w) for t, h, w in grid for _ in range(int(t))]
        inputs = {"hidden_states": states, "attention_mask": block_mask(frames), "rotary_pos_emb": self.rotary(grid)}
        if self.window:
            index, lengths = self.windows(grid)
            inputs.update(window_index=index, window_attention_mask=block_mask(lengths))
        out = self.merger.run(inputs)
        features = {"image_features": out["last_hidden_state"]}
        if "deepstack_feature_lists" in out:
            features["deepstack_features"] = out["deepstack_feature_lists"]
        return features


def block_mask(lengths: list):
    """[1, N, N] float32: 0 within each run of `lengths`, −inf across them."""
    n = sum(lengths)
    mask = np.full((1, n, n), -np.inf, np.float32)
    start = 0
    for length in lengths:
        mask[0, start:start + length, start:start + length] = 0
        start += length
    return mask


def image_encoder_of(export, out_dir: Path):
    """The export's image encoder: its image_encoder, or Qwen2-VL's tower in optimum-intel's two graphs."""
    if getattr(export, "vision_merger", None) is not None:
        return GridParts(export, out_dir)
    return export.image_encoder


def mrope_positions(token: int, grid, merge: int):
    """mrope(ids, mask) for decode_loop.generate: transformers' get_rope_index for images. Per row,
    over its real tokens: a run of text counts on from the last position on all three axes; a run
    of image tokens (the next image's) takes its merged grid's (frame, row, column) plus the run's
    start, and the text after it starts at that plus the grid's larger side. The delta is the
    largest position + 1 − the row's real tokens (padding stays at 0)."""
    def mrope(ids, mask):
        batch, length = ids.shape
        positions = np.zeros((3, batch, length), np.int64)
        deltas = np.zeros(batch, np.int64)
        images = iter(grid)
        for b in range(batch):
            real = np.flatnonzero(mask[b])
            kinds = ids[b, real] == token
            pos, parts, i = 0, [], 0
            while i < len(real):
                j = i
                while j < len(real) and kinds[j] == kinds[i]:
                    j += 1
                if not kinds[i]:
                    parts.append(np.broadcast_to(np.arange(j - i) + pos, (3, j - i)))
                    pos += j - i
                else:
                    try:
                        t, h, w = next(images)
                    except StopIteration:
                        raise UsageError("more runs of image tokens than images") from None
                    h, w = h // merge, w // merge
                    tt, hh, ww = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
                    part = np.stack([tt.ravel(), hh.ravel(), ww.ravel()]) + pos
                    if part.shape[1] != j - i:
                        raise UsageError(f"a run of {j - i} image tokens for an image of {part.shape[1]} features")
                    parts.append(part)
                    pos += max(h, w)
                i = j
            row = np.concatenate(parts, axis=1) if parts else np.zeros((3, 0), np.int64)
            positions[:, b, real] = row
            deltas[b] = (row.max() + 1 if row.size else 0) - len(real)
        return positions, deltas
    return mrope


def generate(out_dir: Path, images: list, prompts, max_new_tokens: int, audio: list = ()):
    """(tokens [B, n], logits [n, B, vocab]) of greedy search from the images (or audio files) and prompts."""
    runtime = runtime_of(out_dir)
    export = runtime.Export(out_dir)
    export.image_encoder = image_encoder_of(export, out_dir)
    if export.embed is None or export.image_encoder is None:
        raise UsageError(f"{out_dir} is not a multimodal export (no embed_tokens and image_encoder or audio_encoder)")
    # the encoders: an audio LM's one (audio), a VLM's (images), or Gemma 4's two
    hearing = audio_encoder_of(export)
    seeing = export.image_encoder if export.image_encoder is not hearing else None
    if (images and seeing is None) or (audio and hearing is None):
        raise UsageError(f"{out_dir}'s encoder takes {'audio' if hearing else 'images'}")
    more = []
    if images and audio:  # (Gemma 4's) the audio's features over its own tokens, beside the images'
        heard, counts = audio_features(hearing, out_dir, list(audio), with_images=True)
        audio_token = image_token_id(out_dir, "audio")
        prompts = expand_image_tokens(prompts, audio_token, counts, "audio")
        more.append((heard, audio_token))
    token = image_token_id(out_dir, "audio" if (audio and not images) or seeing is None else "image")
    features, mrope, deepstack = None, None, None
    grid_encoder = "image_grid_thw" in export.image_encoder.inputs
    if audio and not images:
        features, counts = audio_features(hearing, out_dir, list(audio))
        prompts = expand_image_tokens(prompts, token, counts, "audio")
    elif grid_encoder:  # Qwen2-VL: images of any size, M-RoPE positions (text only: every axis the same)
        grid = np.zeros((0, 3), np.int64)
        if images:
            features, counts, grid, deepstack = grid_features(export, out_dir, images)
            prompts = expand_image_tokens(prompts, token, counts)
        if json.loads((out_dir / "config.json").read_text()).get("model_type", "").startswith("qwen"):  # (M-RoPE)
            mrope = mrope_positions(token, grid, spatial_merge_size(out_dir))
    elif images and json.loads((out_dir / "config.json").read_text()).get("model_type") in ("llava_next",
                                                                                          "llava_onevision"):
        features, counts = anyres_features(export, out_dir, images)
        prompts = expand_image_tokens(prompts, token, counts)
    elif images and "image_attention_mask" in export.image_encoder.inputs:  # Phi-4-multimodal: crops, laid out here
        features, counts = hd_features(export, out_dir, images)
        prompts = expand_image_tokens(prompts, token, counts)
    elif images and ("spatial_shapes" in export.image_encoder.inputs  # LFM2-VL: NaFlex patches of each tile
                     or "image_position_ids" in export.image_encoder.inputs):  # Gemma 4: patches and their positions
        features, counts = patch_features(export, out_dir, images)
        prompts = expand_image_tokens(prompts, token, counts)
    elif images:
        pixels = pixel_values(out_dir, images)
        features = np.array(export.image_encoder.run({"pixel_values": np.concatenate(pixels)})["image_features"])
        prompts = expand_image_tokens(prompts, token, [len(p) * features.shape[1] for p in pixels])
    eos_ids, pad_id = decode_loop.read_generation_config(out_dir)
    prefix_lm = json.loads((out_dir / "config.json").read_text()).get("model_type") == "paligemma"
    # the runs token_type_ids marks are the images' (Gemma 4's audio tokens see each other causally)
    block = image_token_id(out_dir, "image") if audio and not images and seeing is not None else None
    return runtime.generate(export, prompts, max_new_tokens, eos_ids, pad_id, image_features=features,
                            image_token_id=token, mrope=mrope, deepstack=deepstack, prefix_lm=prefix_lm,
                            block_token_id=block, more_media=more)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="a directory written by `hfx export --for-generation` of a VLM")
    ap.add_argument("--image", action="append", default=[], type=Path, help="an image file (repeat for more)")
    ap.add_argument("--audio", action="append", default=[], type=Path,
                    help="a 16-bit mono WAV file at the feature extractor's rate (repeat for more)")
    ap.add_argument("--prompt-ids", required=True, help='prompts: "1,32000,5;4,32000" (one batch, left-padded)')
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--print-logits", type=Path, metavar="FILE.npz")
    args = ap.parse_args(argv)
    try:
        if args.max_new_tokens < 1:
            raise UsageError("--max-new-tokens must be at least 1")
        prompts = decode_loop.parse_prompts(args.prompt_ids)
        tokens, logits = generate(args.out_dir, args.image, prompts, args.max_new_tokens, args.audio)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    return decode_loop.report(tokens, logits, args.print_logits)


if __name__ == "__main__":
    sys.exit(main())
