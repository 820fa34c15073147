"""Vision-language models (src/arch/vlm.c) against transformers, exported for generation as
image_encoder (pixel_values → image_features), embed_tokens (input_ids → inputs_embeds) and decode
(with prefill before a one-token decode) over inputs_embeds: LLaVA with a CLIP or SigLIP tower and
a Llama, Mistral (sliding window) or Qwen2 language model; Idefics3 and SmolVLM (SigLIP's tower
post-normed, pixel shuffle, Llama), each image split by their processor into tiles; Gemma 3; Qwen2-VL
and Qwen2.5-VL (grid towers of any image size: pixel_values [patches, ·] and image_grid_thw in,
Qwen2.5-VL's windowed layers; M-RoPE positions [3, B, S] for the language model).

Checkpoints are tiny (hidden 32) over real-size images: 224 × 224 pixels in patches of 32 through
CLIPImageProcessor / SiglipImageProcessor from random images of other sizes; Idefics3's and
SmolVLM's 256-pixel tiles (4 of a 512-pixel image and the image itself); Qwen2-VL's images resized
by its processor to 16 × 14 and 10 × 24 patches of 14 pixels (56 and 60 tokens).
  * image_features within 1e-4 of transformers' get_image_features (two images; one image's
    tiles), ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from an image and a prompt by examples/generate_vlm.py equal to
    transformers' generate() token for token, each step's logits within 1e-4: ONNX (multi-token
    decode; prefill + decode; a static cache), OpenVINO (stateful; stateless), torch.export (.pt2)
    and ExecuTorch for LLaVA, Idefics3 and Qwen2-VL, ONNX and OpenVINO for the other variants (.pt2
    and ExecuTorch for Qwen2.5-VL too), batch 1, and a left-padded batch of 2 prompts with an image
    each (LLaVA, Qwen2-VL);
  * OpenVINO GenAI's VLMPipeline on the stateful export, from a raw image and a text prompt;
  * the config fields that change the graph (vision_feature_layer as one index or a list,
    vision_feature_select_strategy, projector_hidden_act, multimodal_projector_bias, scale_factor,
    the tower and the language model) each in a variant, transformers 5's own tensor names as well
    as the Hub's (Qwen2-VL's flat Hub config too), and what hfx does not build refused by name with exit
    code 2;
  * Qwen2-VL: one export run on images of two sizes (the patch count changes), and the M-RoPE
    positions shown to matter (plain positions give other logits)."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest
import torch

import genaiutil
import ovutil
from conftest import REPO, assert_logits_close, built_once, cached_exports, describe, run_hfx
from initutil import init_weights
from genutil import compare_generation, left_pad
from mmutil import eager_models, expand_tokens, run_example_executorch

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

IMAGE_TOKEN = 150
VOCAB = 160
NEW_TOKENS = 32
TOWER = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48, image_size=224,
             patch_size=32)
TEXT = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256)
# Qwen2-VL's language model: heads of 8 dims, 4 frequencies, 1 turned by the temporal position, 1
# by the row, 2 by the column
QWEN_TEXT = {**TEXT, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]},
             "bos_token_id": 1, "eos_token_id": 2}  # (Qwen's own ids are past the tiny vocabulary)
QWEN_TOP = {"video_token_id": 151, "vision_start_token_id": 152, "vision_end_token_id": 153}
GRID = dict(patch_size=14, spatial_merge_size=2, temporal_patch_size=2, num_heads=2, depth=3)
QWEN3_GRID = {**GRID, "hidden_size": 32, "intermediate_size": 48, "out_hidden_size": 32, "num_position_embeddings": 20}
QWEN3_5_TEXT = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=32, linear_num_key_heads=2, linear_num_value_heads=2,
                    linear_key_head_dim=8, linear_value_head_dim=8, linear_conv_kernel_dim=3,
                    max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)


@dataclasses.dataclass(frozen=True)
class Variant:
    vision: dict      # vision_config (with its model_type)
    text: dict        # text_config (with its model_type)
    top: dict         # the model config's own fields
    processor: str = "CLIPImageProcessor"
    arch: str = "Llava"  # transformers' <arch>Config and <arch>ForConditionalGeneration


VARIANTS = {
    # CLIP's tower, the default choice: the second-to-last hidden states without the class token;
    # Llama
    "llava": Variant({**TOWER, "model_type": "clip_vision_model"}, {**TEXT, "model_type": "llama"},
                     {"vision_feature_layer": -2, "vision_feature_select_strategy": "default",
                      "projector_hidden_act": "gelu"}),
    # two layers' states concatenated (the embeddings' and the last layer's), every token kept, a
    # projector without biases and another activation; Mistral with a window (8) shorter than the
    # 49 image tokens
    "llava_layers": Variant({**TOWER, "model_type": "clip_vision_model", "hidden_act": "gelu"},
                            {**TEXT, "model_type": "mistral", "sliding_window": 8},
                            {"vision_feature_layer": [0, -1], "vision_feature_select_strategy": "full",
                             "projector_hidden_act": "silu", "multimodal_projector_bias": False}),
    # SigLIP's tower (no class token: "default" still drops the first patch, as transformers does);
    # Qwen2 (q/k/v biases)
    "llava_siglip": Variant({**TOWER, "model_type": "siglip_vision_model"}, {**TEXT, "model_type": "qwen2"},
                            {"vision_feature_layer": -1, "vision_feature_select_strategy": "default",
                             "projector_hidden_act": "gelu"}, processor="SiglipImageProcessor"),
    # Idefics3: SigLIP's tower post-normed, pixel shuffle (scale 2: 8 × 8 patches of a 256-pixel
    # tile become 16 tokens, 4× as wide), one linear; each image split by its processor into tiles
    # and the whole image resized (5 tiles of 256 for a 512-pixel image); Llama
    "idefics3": Variant({**TOWER, "image_size": 256}, {**TEXT, "model_type": "llama"}, {"scale_factor": 2},
                        processor="Idefics3ImageProcessor", arch="Idefics3"),
    # Gemma 3: SigLIP's tower post-normed (8 × 8 patches of 28), average-pooled to 16 tokens, Gemma's
    # RMSNorm and projection; Gemma 3's language model (scaled tied embeddings, sliding and global
    # layers with their own rope, a window of 8 shorter than the image) seeing each image's tokens
    # both ways
    "gemma3": Variant({**TOWER, "patch_size": 28, "model_type": "siglip_vision_model", "vision_use_head": False},
                      {**TEXT, "model_type": "gemma3_text", "num_hidden_layers": 3, "head_dim": 8,
                       "sliding_window": 8, "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]},
                      {"mm_tokens_per_image": 16, "boi_token_index": 151, "eoi_token_index": 152},
                      processor="Gemma3ImageProcessor", arch="Gemma3"),
    # SmolVLM (Idefics3's architecture under its own names), scale 4 on 8 × 8 patches
    "smolvlm": Variant({**TOWER, "image_size": 256}, {**TEXT, "model_type": "llama"}, {"scale_factor": 4},
                       processor="SmolVLMImageProcessor", arch="SmolVLM"),
    # Qwen2-VL: a grid tower (LayerNorms, fused q/k/v, 2-D rotary, an fc1/fc2 MLP of mlp_ratio), each
    # image's patches attending within the image, the merger (2 × 2 patches a token) into Qwen2's width
    "qwen2_vl": Variant({**GRID, "embed_dim": 32, "hidden_size": 32, "mlp_ratio": 2}, QWEN_TEXT, QWEN_TOP,
                        processor="Qwen2VLImageProcessor", arch="Qwen2VL"),
    # Qwen2.5-VL: RMSNorms, a gated MLP, windows of 2 × 2 merged tokens (56 pixels) in every layer but
    # layer 1 (fullatt_block_indexes), the merger's RMSNorm
    "qwen2_5_vl": Variant({**GRID, "hidden_size": 32, "intermediate_size": 48, "out_hidden_size": 32,
                           "window_size": 56, "fullatt_block_indexes": [1]}, QWEN_TEXT, QWEN_TOP,
                          processor="Qwen2VLImageProcessor", arch="Qwen2_5_VL"),
    # Qwen3-VL: a biased patch embedding, learned positions (a 4 × 4 grid in a table of 20 rows) resampled
    # bilinearly to each image, LayerNorms, a GELU-tanh fc1/fc2 MLP, the merger's LayerNorm; DeepStack after
    # layers 0 and 2 (listed the other way round: each takes the merger of its place in the list) added into the
    # language model's first two layers; Qwen3's language model (q/k norms, heads of 16) with interleaved M-RoPE
    # (frequencies 1, 4, 7 by the row, 2 and 5 by the column)
    "qwen3_vl": Variant({**QWEN3_GRID, "deepstack_visual_indexes": [2, 0]},
                        {**QWEN_TEXT, "head_dim": 16, "rope_parameters": {
                            "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                            "mrope_interleaved": True}}, QWEN_TOP, processor="Qwen2VLImageProcessor", arch="Qwen3VL"),
    # Qwen3.5: the same tower without DeepStack; its hybrid language model (gated delta-nets and gated
    # attention, a quarter of each 32-wide head rotated: frequency 0 by the frame, 1 by the row, 2 by the
    # column, 3 by the frame, transformers' default sections)
    "qwen3_5": Variant(QWEN3_GRID, {**QWEN3_5_TEXT}, QWEN_TOP, processor="Qwen2VLImageProcessor", arch="Qwen3_5"),
    # Qwen3-VL-MoE: Qwen3-VL's tower (DeepStack after layer 1 only) and Qwen3-MoE's layers (top-2 of 4 experts,
    # the router always renormalising; layer 1 dense by mlp_only_layers)
    "qwen3_vl_moe": Variant({**QWEN3_GRID, "deepstack_visual_indexes": [1]},
                            {**QWEN_TEXT, "head_dim": 16, "moe_intermediate_size": 24, "num_experts": 4,
                             "num_experts_per_tok": 2, "mlp_only_layers": [1], "rope_parameters": {
                                 "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                 "mrope_interleaved": True}}, QWEN_TOP, processor="Qwen2VLImageProcessor",
                            arch="Qwen3VLMoe"),
    # Qwen3.5-MoE: Qwen3.5's tower and its hybrid language model with experts and the gated shared expert
    "qwen3_5_moe": Variant(QWEN3_GRID, {**{k: v for k, v in QWEN3_5_TEXT.items() if k != "intermediate_size"},
                                        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 24,
                                        "shared_expert_intermediate_size": 40}, QWEN_TOP,
                           processor="Qwen2VLImageProcessor", arch="Qwen3_5Moe"),
    # PaliGemma: SigLIP's tower post-normed (49 tokens; its pooling head, built by vision_use_head, unread), one
    # linear; Gemma seeing the whole prompt both ways and what it generates causally (token_type_ids), positions
    # from 1
    # (an untied head: the tiny tied ones repeat one token)
    "paligemma": Variant({**TOWER, "model_type": "siglip_vision_model"},
                         {**TEXT, "model_type": "gemma", "head_dim": 8, "num_hidden_layers": 3,
                          "tie_word_embeddings": False},
                         {"projection_dim": 32, "tie_word_embeddings": False}, processor="SiglipImageProcessor",
                         arch="PaliGemma"),
    # PaliGemma 2 (as the Hub's: no pooling head): Gemma 2 (a window of 8 shorter than the image, soft caps, sandwich
    # norms)
    "paligemma2": Variant({**TOWER, "model_type": "siglip_vision_model", "vision_use_head": False},
                          {**TEXT, "model_type": "gemma2", "head_dim": 8, "sliding_window": 8,
                           "tie_word_embeddings": False},
                          {"projection_dim": 32, "tie_word_embeddings": False}, processor="SiglipImageProcessor",
                          arch="PaliGemma"),
    # Mistral3: Pixtral's tower (RMSNorms, no biases, a gated MLP, 2-D axial rotary, patches of 14) over images of any
    # size (resized by PixtralImageProcessor to whole 28-pixel blocks), each image's patches attending within it,
    # the last layer's states RMS-normed, merged 2 × 2 channel by channel, an unbiased GELU MLP; Mistral
    "mistral3": Variant({**TOWER, "patch_size": 14, "model_type": "pixtral"}, {**TEXT, "model_type": "mistral"},
                        {"spatial_merge_size": 2, "tie_word_embeddings": False}, processor="PixtralImageProcessor",
                        arch="Mistral3"),
    # the second-to-last layer's states, a biased SiLU projector; Llama
    "mistral3_variant": Variant({**TOWER, "patch_size": 14, "model_type": "pixtral", "hidden_act": "silu"},
                                {**TEXT, "model_type": "llama"},
                                {"spatial_merge_size": 2, "vision_feature_layer": -2, "multimodal_projector_bias": True,
                                 "projector_hidden_act": "silu", "tie_word_embeddings": False},
                                processor="PixtralImageProcessor", arch="Mistral3"),
    # LLaVA-Next: CLIP's tower over the whole image and its any-resolution grid's 64-pixel tiles (up to 2 × 2), the
    # second-to-last layer's states without the class token, LLaVA's projector; the example packs the tiles as
    # transformers does (the grid laid out, the resize's padding cropped, image_newline after each row); Llama
    "llava_next": Variant({**TOWER, "image_size": 64, "patch_size": 16, "model_type": "clip_vision_model"},
                          {**TEXT, "model_type": "llama"},
                          {"image_grid_pinpoints": [[64, 128], [128, 64], [128, 128]], "vision_feature_layer": -2,
                           "vision_feature_select_strategy": "default", "tie_word_embeddings": False},
                          processor="LlavaNextImageProcessor", arch="LlavaNext"),
    # LLaVA-OneVision: the same over SigLIP's tower (every token kept), the grid of a 2 × 2 image shrunk bilinearly to
    # fit anyres_max_1's one tile of features; Qwen2
    "llava_onevision": Variant({**TOWER, "image_size": 64, "patch_size": 16, "model_type": "siglip_vision_model"},
                               {**TEXT, "model_type": "qwen2"},
                               {"image_grid_pinpoints": [[64, 128], [128, 64], [128, 128]], "vision_feature_layer": -1,
                                "vision_feature_select_strategy": "full", "vision_aspect_ratio": "anyres_max_1",
                                "tie_word_embeddings": False},
                               processor="LlavaOnevisionImageProcessor", arch="LlavaOnevision"),
    # Llama 4: its tower over 64-pixel tiles in patches of 8 (an unfolded patch linear, the class token last, learned
    # positions, pre/post LayerNorms, a 2-D rotary of pairs), the pixel-shuffle adapter (fc1 → GELU → fc2 → GELU)
    # and one linear; each image cut by Llama4ImageProcessor into tiles and the whole image; Llama 4's language model
    # (chunked attention, NoPE layers, a top-1 MoE with a shared expert on layer 1)
    "llama4": Variant({"model_type": "llama4_vision_model", "hidden_size": 32, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "intermediate_size": 128, "image_size": 64, "patch_size": 8,
                       "pixel_shuffle_ratio": 0.5, "projector_input_dim": 40, "projector_output_dim": 40,
                       "vision_output_dim": 40, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
                      {**TEXT, "model_type": "llama4_text", "head_dim": 8, "intermediate_size": 32,
                       "intermediate_size_mlp": 64, "num_local_experts": 2, "num_experts_per_tok": 1,
                       "interleave_moe_layer_step": 2, "attention_chunk_size": 16, "tie_word_embeddings": False,
                       "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
                      {"tie_word_embeddings": False}, processor="Llama4ImageProcessor", arch="Llama4"),
    # LLaVA over a Pixtral tower (Pixtral-12B's form): every patch of each image a token through LLaVA's projector
    "llava_pixtral": Variant({**TOWER, "patch_size": 14, "model_type": "pixtral"}, {**TEXT, "model_type": "mistral"},
                             {"vision_feature_layer": -1, "vision_feature_select_strategy": "full",
                              "projector_hidden_act": "gelu", "tie_word_embeddings": False},
                             processor="PixtralImageProcessor"),
    # LFM2-VL: SigLIP 2's NaFlex tower (patches of 16, a 4 × 4 position grid resized to each tile), each tile's 2 × 2
    # blocks of patches one token, LayerNorm and a GELU MLP (48 wide); each image cut by its processor into 64-pixel
    # tiles and a thumbnail of its own aspect; LFM2 (short convolutions and attention)
    "lfm2_vl": Variant({"model_type": "siglip2_vision_model", "hidden_size": 32, "num_hidden_layers": 2,
                        "num_attention_heads": 4, "intermediate_size": 48, "patch_size": 16, "num_patches": 16},
                       {**TEXT, "model_type": "lfm2", "num_hidden_layers": 3, "layer_types": ["conv", "full_attention",
                                                                                             "conv"],
                        "conv_L_cache": 3, "block_multiple_of": 16, "tie_word_embeddings": False},
                       {"projector_hidden_size": 48, "tie_word_embeddings": False},
                       processor="Lfm2VlImageProcessor", arch="Lfm2Vl"),
    # no projector LayerNorm, no biases, a SiLU projector, unshuffled by 4, no tiles
    "lfm2_vl_variant": Variant({"model_type": "siglip2_vision_model", "hidden_size": 32, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "intermediate_size": 48, "patch_size": 16,
                                "num_patches": 16},
                               {**TEXT, "model_type": "lfm2", "num_hidden_layers": 3,
                                "layer_types": ["conv", "full_attention", "conv"], "conv_L_cache": 3,
                                "block_multiple_of": 16, "tie_word_embeddings": False},
                               {"projector_hidden_size": 40, "projector_use_layernorm": False, "projector_bias": False,
                                "projector_hidden_act": "silu", "downsample_factor": 4, "tie_word_embeddings": False},
                               processor="Lfm2VlImageProcessor-whole", arch="Lfm2Vl"),
    # Gemma 4 (its 31B's and 26B-A4B's form): its own encoder (sandwich RMSNorms, q/k/v norms, an axial 2-D rotary,
    # gated MLP, each linear's input and output clamped to its buffers, the pooled tokens standardized) over each image's patches of 4 pixels in its own aspect (up to 630, as Gemma4ImageProcessor pads
    # them), 3 × 3 blocks pooled into a token, a weight-less RMSNorm and a projection into Gemma 4's text model, whose
    # sliding layers see an image's tokens both ways
    "gemma4": Variant({"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "patch_size": 4,
                       "pooling_kernel_size": 3, "position_embedding_size": 64, "use_clipped_linears": True,
                       "standardize": True,
                       "rope_parameters": {"rope_type": "axial", "rope_theta": 100.0}},
                      {**TEXT, "model_type": "gemma4_text", "head_dim": 8, "global_head_dim": 16, "sliding_window": 4,
                       "num_hidden_layers": 3, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                       "hidden_size_per_layer_input": 0, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
                       "use_bidirectional_attention": "vision"},
                      {"audio_config": None, "boi_token_id": 151, "eoi_token_id": 152, "video_token_id": 153,
                       "audio_token_id": 154, "boa_token_id": 155, "eoa_token_index": 156},
                      processor="Gemma4ImageProcessor", arch="Gemma4"),
    # Gemma 4 with per-layer inputs of 8 (as E2B and E4B, here without their audio encoder): the language model
    # reads the prompt's ids beside its embeddings, the image tokens' as the pad token's
    "gemma4_ple": Variant({"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 48,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 8,
                           "patch_size": 4,
                           "pooling_kernel_size": 3, "position_embedding_size": 64},
                          {**TEXT, "model_type": "gemma4_text", "head_dim": 8, "global_head_dim": 16, "sliding_window": 4,
                           "num_hidden_layers": 3,
                           "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                           "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": VOCAB, "pad_token_id": 0,
                           "bos_token_id": 1, "eos_token_id": 2, "use_bidirectional_attention": "vision"},
                          {"audio_config": None, "boi_token_id": 151, "eoi_token_id": 152, "video_token_id": 153,
                           "audio_token_id": 154, "boa_token_id": 155, "eoa_token_index": 156},
                          processor="Gemma4ImageProcessor", arch="Gemma4"),
    # InternVL: InternViT (LayerNorms, layer scales, the class token and learned positions, no final norm: it pools
    # by its mean) over 64-pixel tiles in patches of 8, the last state without the class token pixel-shuffled by 2
    # (16 tokens a tile), LayerNorm and an MLP; each image cut by its processor into tiles and a thumbnail; Qwen2
    "internvl": Variant({**TOWER, "image_size": 64, "patch_size": 8, "model_type": "internvl_vision"},
                        {**TEXT, "model_type": "qwen2"}, {"tie_word_embeddings": False}, processor="GotOcr2ImageProcessor",
                        arch="InternVL"),
    # RMSNorms, q/k RMS-normed over every head, biased q/k/v, no learned positions, the final norm on the last
    # state (no mean pooling), a shuffle by 4, a SiLU projector
    "internvl_variant": Variant({**TOWER, "image_size": 64, "patch_size": 8, "model_type": "internvl_vision",
                                 "norm_type": "rms_norm", "use_qk_norm": True, "attention_bias": True,
                                 "use_absolute_position_embeddings": False, "use_mean_pooling": False},
                                {**TEXT, "model_type": "qwen2"}, {"downsample_ratio": 0.25, "projector_hidden_act": "silu", "tie_word_embeddings": False},
                                processor="GotOcr2ImageProcessor", arch="InternVL"),
    # the second-to-last state: a bare hidden state, no final norm though the tower has one; Llama
    "internvl_layer": Variant({**TOWER, "image_size": 64, "patch_size": 8, "model_type": "internvl_vision",
                               "use_mean_pooling": False}, {**TEXT, "model_type": "llama"},
                              {"vision_feature_layer": -2, "tie_word_embeddings": False},
                              processor="GotOcr2ImageProcessor", arch="InternVL"),
}
QWEN_GRID_ARCHS = ("Qwen2VL", "Qwen2_5_VL", "Qwen3VL", "Qwen3_5", "Qwen3VLMoe", "Qwen3_5Moe")
GRID_ARCHS = QWEN_GRID_ARCHS + ("Mistral3",)  # (Mistral3's patches laid out as Qwen2-VL's by the example)


def pixtral(name):
    """Whether the variant's tower is Pixtral's (its patches laid out as Qwen2-VL's by the example)."""
    return VARIANTS[name].vision.get("model_type") == "pixtral"


def grid(name):
    """Whether the variant's tower takes images of any size (pixel_values [patches, ·] and
    image_grid_thw)."""
    return VARIANTS[name].arch in GRID_ARCHS or pixtral(name)


def _init(model: torch.nn.Module, seed: int) -> None:
    """Random tables and norms, linears at 1/√fan-in. Gemma's norms scale by 1 + w (w around 0) and
    its tied table is scaled by √hidden (a small table keeps the logits in range), as models.py
    builds Gemma."""
    gemma = "Gemma" in type(model).__name__
    offset = gemma and "Gemma4" not in type(model).__name__  # (Gemma 4's norms scale by w itself)

    def table_std(name):
        if "embed" not in name:
            return None
        return (0.125 if gemma else 1.0) if "embed_tokens" in name else 0.5
    init_weights(model, seed, table_std, offset_norm=lambda name: offset and "vision" not in name)
    # Qwen3.5's gated delta-nets: decays around exp(−0.5) per unit of softplus (A_log around −0.5) — in the range
    # init_weights gives them (around 0) transformers' own float32 chunked recurrence is 1e-4 to 2e-4 from float64
    # over a 60-token prompt; here it and hfx stay within 8e-5 of it
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("linear_attn.A_log"):
                p.copy_(-0.5 + 0.2 * torch.randn(p.shape, generator=g))
            if name == "lm_head.weight" and any(n.endswith("linear_attn.A_log") for n, _ in model.named_parameters()):
                p.mul_(0.5)
        for name, b in model.named_buffers():  # Gemma 4's clipped linears: bounds the activations reach
            if name.endswith(("input_min", "input_max", "output_min", "output_max")):
                b.fill_((-1.0 if name.endswith("_min") else 1.0) * (2.0 if "input" in name else 1.5))
            if name.endswith(("std_bias", "std_scale")):  # Gemma 4's standardization (torch.empty as built)
                b.copy_((1.0 if name.endswith("scale") else 0.0) + 0.3 * torch.randn(b.shape, generator=g))


def processor(v: Variant):
    import transformers
    if v.processor == "Qwen2VLImageProcessor":  # images of up to 64 tokens, of any shape
        return transformers.Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=28 * 28 * 64)
    size = v.vision.get("image_size")
    if v.processor in ("Idefics3ImageProcessor", "SmolVLMImageProcessor"):  # tiles of the tower's size
        return getattr(transformers, v.processor)(size={"longest_edge": 2 * size}, max_image_size={"longest_edge": size},
                                                  do_image_splitting=True)
    if v.processor.startswith("Lfm2VlImageProcessor"):  # 64-pixel tiles of 4 × 4 patches and a thumbnail (or none)
        factor = v.top.get("downsample_factor", 2)
        return transformers.Lfm2VlImageProcessor(
            tile_size=64, encoder_patch_size=16, downsample_factor=factor, min_image_tokens=1,
            max_image_tokens=64 // (factor * factor), min_tiles=2, max_tiles=4,
            do_image_splitting=not v.processor.endswith("-whole"), max_num_patches=64)
    if v.processor == "LlavaOnevisionImageProcessor":
        return transformers.LlavaOnevisionImageProcessor(size={"height": size, "width": size},
                                                         image_grid_pinpoints=v.top["image_grid_pinpoints"])
    if v.processor == "LlavaNextImageProcessor":
        return transformers.LlavaNextImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size},
                                                    image_grid_pinpoints=v.top["image_grid_pinpoints"])
    if v.processor == "Llama4ImageProcessor":  # tiles of the tower's size (up to 4) and the whole image
        return transformers.Llama4ImageProcessor(size={"height": size, "width": size}, max_patches=4)
    if v.processor == "PixtralImageProcessor":  # whole merge blocks of patches of 14, up to 112 pixels a side
        block = 14 * v.top.get("spatial_merge_size", 1)
        return transformers.PixtralImageProcessor(size={"longest_edge": 112}, patch_size={"height": block, "width": block})
    if v.processor == "GotOcr2ImageProcessor":  # InternVL's: tiles of the tower's size and a thumbnail
        return transformers.GotOcr2ImageProcessor(size={"height": size, "width": size}, crop_to_patches=True,
                                                  max_patches=4)
    if v.processor == "Gemma4ImageProcessor":  # patches of 4 pixels, up to 70 tokens of 3 × 3 patches
        return transformers.Gemma4ImageProcessor(patch_size=4, max_soft_tokens=70, pooling_kernel_size=3)
    if v.processor == "Gemma3ImageProcessor":
        return transformers.Gemma3ImageProcessor(size={"height": size, "width": size})
    if v.processor == "SiglipImageProcessor":
        return transformers.SiglipImageProcessor(size={"height": size, "width": size})
    return transformers.CLIPImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size})


def _config(v: Variant):
    import transformers
    return getattr(transformers, f"{v.arch}Config")(vision_config=v.vision, text_config=v.text,
                                                    image_token_id=IMAGE_TOKEN, **v.top)


def model_class(v: Variant):
    import transformers
    return getattr(transformers, f"{v.arch}ForConditionalGeneration")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("vlm")
    def make(name):
        v = VARIANTS[name]
        torch.manual_seed(0)
        model = model_class(v)(_config(v)).eval()
        _init(model, seed=1)
        model.save_pretrained(root / name)
        processor(v).save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("vlm-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    return eager_models(ckpt, lambda name: model_class(VARIANTS[name]))


def images(tmp_path, n):
    """n random PNG images of other sizes than the tower's."""
    from PIL import Image
    rng = np.random.default_rng(5)
    paths = []
    for i, (h, w) in enumerate(((300, 260), (180, 411))[:n]):
        paths.append(tmp_path / f"image{i}.png")
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(paths[-1])
    return paths


def image_inputs(name, paths):
    """The model's image keyword arguments for `paths` (one sample), as its processor makes them:
    {"pixel_values": [N, C, S, S]}, or Idefics3's [1, tiles, C, S, S] with its pixel_attention_mask, or
    Qwen2-VL's [patches, C·T·P·P] with image_grid_thw [N, 3]."""
    from PIL import Image
    out = generate_vlm.as_numpy(processor(VARIANTS[name]), [Image.open(p).convert("RGB") for p in paths])
    return {k: torch.from_numpy(np.asarray(out[k]))
            for k in ("pixel_values", "pixel_attention_mask", "image_grid_thw", "image_sizes", "spatial_shapes",
                      "image_position_ids")
            if k in out}


def encoder_feed(name, paths):
    """What the exported image encoder takes: the images (or all their tiles), pixel_values
    [N, C, S, S]; a grid tower's patches and image_grid_thw."""
    if pixtral(name):  # each image's patches as the example lays them out
        merge = VARIANTS[name].top.get("spatial_merge_size", 1)
        parts = [generate_vlm.grid_patches(p, {k: v.numpy() for k, v in image_inputs(name, [p]).items()}, 14, merge)
                 for p in paths]
        return {"pixel_values": np.concatenate([x for x, _ in parts]),
                "image_grid_thw": np.concatenate([g for _, g in parts])}
    inputs = image_inputs(name, paths)
    x = inputs["pixel_values"].numpy().astype(np.float32)
    if grid(name):
        return {"pixel_values": x, "image_grid_thw": inputs["image_grid_thw"].numpy()}
    return {"pixel_values": x.reshape(-1, *x.shape[-3:])}


def want_features(reference, name, paths):
    """transformers' image features of the images at `paths`: [N (images or tiles), tokens, hidden];
    a grid tower's [tokens, hidden], every image's in order."""
    inputs = image_inputs(name, paths)
    with torch.no_grad():
        res = reference(name).get_image_features(**inputs)
        out = res.pooler_output
        if out is None:  # Llama 4's: the adapter's output, which its forward projects
            out = reference(name).multi_modal_projector(res.last_hidden_state)
    out = torch.cat([f.reshape(-1, f.shape[-1]) for f in out]).numpy()
    if grid(name) or naflex(name) or anyres(name):
        return out
    n = encoder_feed(name, paths)["pixel_values"].shape[0]
    return out.reshape(n, -1, out.shape[-1])


def anyres(name):
    """Whether the variant's images are any-resolution tiles its example packs (LLaVA-Next's)."""
    return VARIANTS[name].arch in ("LlavaNext", "LlavaOnevision")


def naflex(name):
    """Whether the variant's encoder takes patches of each image's own shape (LFM2-VL's NaFlex tiles, Gemma 4's
    positioned patches): its features padded, their lengths beside."""
    return VARIANTS[name].arch in ("Lfm2Vl", "Gemma4")


def deepstack(name):
    """The DeepStack features the variant's tower makes (Qwen3-VL's), 0 for others."""
    return (len(VARIANTS[name].vision.get("deepstack_visual_indexes", ()))
            if VARIANTS[name].arch in ("Qwen3VL", "Qwen3VLMoe") else 0)


def want_deepstack(reference, name, paths):
    """transformers' DeepStack features of the images: [features, tokens, hidden], every image's tokens in order."""
    with torch.no_grad():
        out = reference(name).get_image_features(**image_inputs(name, paths)).deepstack_features
    return np.stack([torch.cat(list(f)).numpy() for f in out])


# optimum-intel's inputs of the Qwen-VL lineages' merger graphs, in its order
MERGER_INPUTS = {arch: ["hidden_states", "attention_mask", "rotary_pos_emb"] for arch in QWEN_GRID_ARCHS}
MERGER_INPUTS["Qwen2_5_VL"] = ["hidden_states", "attention_mask", "window_attention_mask", "window_index",
                               "rotary_pos_emb"]


def run_grid_parts(out, name, feed):
    """OpenVINO's stateful layout of the Qwen-VL lineages: the tower in optimum-intel's graphs (GenAI's VLMPipeline's
    files, their inputs and outputs by optimum-intel's names; Qwen3-VL's and Qwen3.5's learned position table a graph
    of its own), run by the example as GenAI runs them."""
    import generate_openvino
    manifest = json.loads((out / "export.json").read_text())["components"]
    assert "image_encoder" not in manifest
    stems = ["vision_embeddings", "vision_embeddings_merger"] + (["vision_embeddings_pos"] if qwen3_grid(name) else [])
    assert all(manifest[s]["file"] == f"openvino_{s}_model.xml" for s in stems), manifest
    export = generate_openvino.Export(out)
    assert list(export.patch_embedding.inputs) == ["hidden_states"]
    assert list(export.vision_merger.inputs) == MERGER_INPUTS[VARIANTS[name].arch]
    assert list(export.vision_merger.outputs) == ["last_hidden_state"] + (["deepstack_feature_lists"] if deepstack(name)
                                                                           else [])
    assert (export.position_table is not None) == qwen3_grid(name)
    return generate_vlm.image_encoder_of(export, out).run(feed)


def qwen3_grid(name):
    """Whether the variant's tower is Qwen3-VL's (learned positions)."""
    return "num_position_embeddings" in VARIANTS[name].vision


def run_image_encoder(out, fmt, feed, outputs=("image_features",)):
    """The image encoder's outputs, by name (`outputs`: all it has, in order)."""
    manifest = json.loads((out / "export.json").read_text())["components"]
    path = out / manifest["image_encoder"]["file"]
    if fmt == "onnx":
        import onnxruntime as ort
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        assert [i.name for i in sess.get_inputs()] == list(feed)
        assert [o.name for o in sess.get_outputs()] == list(outputs)
        return dict(zip(outputs, sess.run(None, feed)))
    import openvino as ov
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feed)
    assert [o.get_any_name() for o in compiled.outputs] == list(outputs)
    return {o.get_any_name(): np.array(result[o]) for o in compiled.outputs}


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_image_features(name, fmt, export_dir, reference, tmp_path):
    out = export_dir(name, "--format", fmt, "--dynamic")
    paths = images(tmp_path, 1 if VARIANTS[name].arch in ("Idefics3", "SmolVLM") else 2)  # Idefics3's: one's tiles
    feed = encoder_feed(name, paths)
    x = feed["pixel_values"]
    if anyres(name):  # each image's tiles through the encoder, packed by the example
        got, counts = generate_vlm.anyres_features(generate_vlm.runtime_of(out).Export(out), out, paths)
        assert len(counts) == 2 and counts[0] != counts[1], counts
        assert_logits_close(got, want_features(reference, name, paths), f"{name} {fmt} image_features")
        return
    if naflex(name):  # two images' tiles (and thumbnails) of other shapes in one call, padded to 64 patches
        feed = {k: v.numpy() for k, v in image_inputs(name, paths).items()}
        if "image_position_ids" in feed:  # Gemma 4's: padded to 630 patches, two images of other grids
            positions = feed["image_position_ids"]
            assert feed["pixel_values"].shape[1] == 630 and positions[0].max(0).tolist() != positions[1].max(0).tolist()
        else:
            feed["pixel_attention_mask"] = feed["pixel_attention_mask"].astype(np.int32)
            assert feed["pixel_values"].shape[1] == 64 and len(set(map(tuple, feed["spatial_shapes"].tolist()))) > 1
        if fmt == "openvino":  # the stateful layout's (optimum-intel's, GenAI's) one output: the real rows, in order
            real = run_image_encoder(out, fmt, feed, ("image_features",))["image_features"]
        else:
            got = run_image_encoder(out, fmt, feed, ("image_features", "image_feature_lengths"))
            real = np.concatenate([f[:n] for f, n in zip(got["image_features"], got["image_feature_lengths"])])
        assert_logits_close(real, want_features(reference, name, paths), f"{name} {fmt} image_features")
        return
    if pixtral(name):  # two images of different grids in one call
        grids = feed["image_grid_thw"]
        assert len(grids) == 2 and grids[0].tolist() != grids[1].tolist(), grids
        assert x.shape == (int((grids[:, 1] * grids[:, 2]).sum()), 3 * 14 * 14)
    elif grid(name):  # two images of different grids in one call
        assert feed["image_grid_thw"].tolist() == [[1, 16, 14], [1, 10, 24]], feed["image_grid_thw"]
        assert x.shape == (16 * 14 + 10 * 24, 3 * 2 * 14 * 14)
    else:
        size = VARIANTS[name].vision["image_size"]
        assert x.shape[1:] == (3, size, size) and x.shape[0] >= 2
    outputs = ("image_features", "deepstack_features") if deepstack(name) else ("image_features",)
    got = (run_grid_parts(out, name, feed) if fmt == "openvino" and VARIANTS[name].arch in MERGER_INPUTS
           else run_image_encoder(out, fmt, feed, outputs))
    assert_logits_close(got["image_features"], want_features(reference, name, paths), f"{name} {fmt} image_features")
    if deepstack(name):
        want = want_deepstack(reference, name, paths)
        assert want.shape[0] == deepstack(name)
        assert_logits_close(got["deepstack_features"], want, f"{name} {fmt} deepstack_features")


def prompts(batch):
    """Prompts with one image token each (the example expands it), of different lengths."""
    rows = [[1, 7, IMAGE_TOKEN, 33, 90, 4], [1, IMAGE_TOKEN, 12, 5]][:batch]
    return rows


def _llama4_generation(model, reference, name, ids, mask, paths):
    """Llama 4's reference: transformers 5.24's Llama4ForConditionalGeneration.forward fails after its language model
    has run (it reads image_outputs from the language model's output), so its own language model generates from the
    embeddings that forward merges: the table's rows, the projected image features over the image tokens."""
    with torch.no_grad():
        embeds = model.get_input_embeddings()(torch.from_numpy(ids))
        features = torch.cat([torch.from_numpy(want_features(reference, name, [p])).reshape(-1, embeds.shape[-1])
                              for p in paths])
        embeds[torch.from_numpy(ids == IMAGE_TOKEN)] = features.to(embeds.dtype)
        out = model.language_model.generate(inputs_embeds=embeds, attention_mask=torch.from_numpy(mask),
                                            max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                                            return_dict_in_generate=True)
    return out.sequences.numpy(), torch.stack(out.logits).numpy()


def want_generation(reference, name, rows, paths):
    """transformers' greedy generate() on the expanded, left-padded prompts (one image each, in
    order): (tokens, logits)."""
    model = reference(name)
    # its tiles × tokens, or a grid tower's tokens
    rows = expand_tokens(rows, IMAGE_TOKEN, [np.prod(want_features(reference, name, [p]).shape[:-1]) for p in paths])
    ids, mask = left_pad(rows, 0)
    length = ids.shape[1]
    if VARIANTS[name].arch != "Idefics3" and VARIANTS[name].arch != "SmolVLM":
        kwargs = image_inputs(name, paths)
        if VARIANTS[name].arch == "Gemma3":  # which tokens are an image's, as its processor says
            kwargs["token_type_ids"] = torch.from_numpy((ids == IMAGE_TOKEN).astype(np.int64))
        if VARIANTS[name].arch == "PaliGemma":  # the prompt is the prefix (its processor's, without a suffix)
            kwargs["token_type_ids"] = torch.zeros_like(torch.from_numpy(ids))
        if VARIANTS[name].arch in QWEN_GRID_ARCHS + ("Gemma4",):  # the same (M-RoPE's positions; Gemma 4's blocks)
            kwargs["mm_token_type_ids"] = torch.from_numpy((ids == IMAGE_TOKEN).astype(np.int64))
    else:  # Idefics3: [samples, images, ...], a sample's images padded with zero images
        per = [image_inputs(name, [p]) for p in paths]
        most = max(k["pixel_values"].shape[1] for k in per)
        kwargs = {k: torch.cat([torch.nn.functional.pad(d[k], (0, 0) * (d[k].dim() - 2) + (0, most - d[k].shape[1]))
                                for d in per]) for k in per[0]}
    if VARIANTS[name].arch == "Llama4":
        return _llama4_generation(model, reference, name, ids, mask, paths)
    with torch.no_grad():
        out = model.generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **kwargs,
                             max_new_tokens=NEW_TOKENS,
                             do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, length:].numpy(), torch.stack(out.logits).numpy()


MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "onnx-static": ("--format", "onnx", "--dynamic", "--multi-token-decode", "--cache", "static",
                    "--max-cache-len", "160"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    # ExecuTorch plans memory for the largest size of each dim: batch (an image encoder's: the tiles of
    # Idefics3's images) and sequence bounded
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 8}, "1": {"name": "sequence", "min": 1, "max": 160}}}}),
        "--multi-token-decode", "--max-cache-len", "160"),
    # a grid tower's patches and images bounded too
    "executorch-grid": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 8}, "1": {"name": "sequence", "min": 1, "max": 160}},
        "pixel_values": {"0": {"name": "num_patches", "max": 1024}},
        "image_grid_thw": {"0": {"name": "num_images", "max": 4}}}}),
        "--multi-token-decode", "--max-cache-len", "160"),
    # NaFlex tiles and patches bounded
    "executorch-naflex": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 8}, "1": {"name": "sequence", "min": 1, "max": 160}},
        "pixel_values": {"0": {"name": "num_images", "max": 8}, "1": {"name": "num_patches", "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "160"),
    # Gemma 4's patches bounded
    "executorch-gemma4": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 8}, "1": {"name": "sequence", "min": 1, "max": 160}},
        "pixel_values": {"0": {"name": "num_images", "max": 4}, "1": {"name": "num_patches", "max": 630}}}}),
        "--multi-token-decode", "--max-cache-len", "160"),
}


def run_example(out, paths, rows, fmt, tmp_path):
    """examples/generate_vlm.py's greedy search: in this process, or (ExecuTorch) as a command in
    the executorch virtualenv, with its --print-logits."""
    if not fmt.startswith("executorch"):
        return generate_vlm.generate(out, paths, rows, NEW_TOKENS)
    return run_example_executorch(out, rows, NEW_TOKENS, [a for p in paths for a in ("--image", p)], tmp_path)


# every layout for one model of each lineage; the other variants (their towers, feature choices and
# language models) in ONNX Runtime and OpenVINO, the layouts being the language model's, shared
GENERATION_CASES = [(name, mode) for name in VARIANTS for mode in MODES
                    if (name in ("llava", "idefics3", "qwen2_vl") and mode not in ("executorch-grid", "executorch-naflex",
                                                                                  "executorch-gemma4")) or
                    mode in ("onnx-mtd", "openvino")]
GENERATION_CASES = [(n, "executorch-grid" if grid(n) and m == "executorch" else m) for n, m in GENERATION_CASES]
# Gemma 3's image blocks over a static cache's slots are not written (test_gemma3_static_refused)
GENERATION_CASES += [("gemma3", "onnx-prefill"), ("gemma3", "dynamo")]
# Qwen2.5-VL's windows in the torch-side formats
GENERATION_CASES += [("qwen2_5_vl", "dynamo"), ("qwen2_5_vl", "executorch-grid")]
# Qwen3-VL's DeepStack input in every layout; Qwen3.5 in .pt2 too (its hybrid language model's layouts are
# test_hybrid.py's, the tower's Qwen3-VL's)
GENERATION_CASES += [("qwen3_vl", mode) for mode in ("onnx-prefill", "onnx-static", "dynamo", "executorch-grid")]
GENERATION_CASES += [("qwen3_5", "dynamo")]
# InternViT's tower in the torch-side formats (its q/k norms and RMSNorms in .pt2)
GENERATION_CASES += [("internvl", "executorch"), ("internvl_variant", "dynamo")]
# LLaVA-Next's newline output in the torch-side formats
GENERATION_CASES += [("llava_next", "dynamo"), ("llava_next", "executorch")]
# Llama 4's tower (the class token last, the rotary of pairs) and adapter in .pt2
GENERATION_CASES += [("llama4", "dynamo")]
# LFM2-VL's NaFlex tower and token gather in the torch-side formats
GENERATION_CASES += [("lfm2_vl", "dynamo"), ("lfm2_vl", "executorch-naflex")]
# Mistral3's Pixtral tower in the torch-side formats
GENERATION_CASES += [("mistral3", "dynamo"), ("mistral3", "executorch-grid")]
# Gemma 4's encoder and its windowed image blocks in the torch-side formats
GENERATION_CASES += [("gemma4", "dynamo"), ("gemma4", "executorch-gemma4"), ("gemma4_ple", "dynamo")]
# PaliGemma's prefix blocks in .pt2 and ExecuTorch, and its left-padded batch
GENERATION_CASES += [("paligemma", "dynamo"), ("paligemma2", "executorch")]


@pytest.mark.parametrize("name,mode", GENERATION_CASES)
def test_generation(name, mode, export_dir, reference, tmp_path):
    out = export_dir(name, *MODES[mode])
    paths = images(tmp_path, 1)
    rows = prompts(1)
    want_tokens, want_logits = want_generation(reference, name, rows, paths)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = run_example(out, paths, rows, mode, tmp_path)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


@pytest.mark.parametrize("name", ["llava", "qwen2_vl", "qwen3_vl", "paligemma", "mistral3", "lfm2_vl", "llava_next",
                                  "llava_onevision", "gemma4"])
@pytest.mark.parametrize("mode", ["onnx-mtd", "openvino"])
def test_generation_batch_of_two(name, mode, export_dir, reference, tmp_path):
    """Two prompts of different lengths, left-padded, an image each: the second image's features go
    to the second row's image tokens (Qwen2-VL's: an image of another size, and M-RoPE positions
    that skip the padding)."""
    out = export_dir(name, *MODES[mode])
    paths = images(tmp_path, 2)
    want_tokens, want_logits = want_generation(reference, name, prompts(2), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(2), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode} batch 2")


def test_qwen2_vl_two_image_sizes(export_dir, reference, tmp_path):
    """One export, run on an image of 16 × 14 patches and then on one of 10 × 24: the patch count, the
    token count and the positions change; the tokens are transformers' each time."""
    out = export_dir("qwen2_vl", *MODES["onnx-mtd"])
    for path in images(tmp_path, 2):
        want_tokens, want_logits = want_generation(reference, "qwen2_vl", prompts(1), [path])
        tokens, logits = generate_vlm.generate(out, [path], prompts(1), NEW_TOKENS)
        compare_generation(tokens, logits, want_tokens, want_logits, f"qwen2_vl {path.name}")


def test_qwen2_vl_positions_matter(export_dir, reference, tmp_path, monkeypatch):
    """The M-RoPE positions are what the test checks: the same export fed plain positions (every
    axis cumsum(mask) − 1, as a text-only model's) gives logits far from transformers'."""
    out = export_dir("qwen2_vl", *MODES["onnx-mtd"])
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, "qwen2_vl", prompts(1), paths)

    def plain(token, grid_thw, merge):
        def positions(ids, mask):
            p = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
            return np.broadcast_to(p, (3, *p.shape)).copy(), np.zeros(len(ids), np.int64)
        return positions
    monkeypatch.setattr(generate_vlm, "mrope_positions", plain)
    _, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    assert np.abs(logits[0] - want_logits[0]).max() > 0.1


def test_gemma4_image_blocks_matter(reference, tmp_path):
    """Gemma 4's windowed image blocks are what the generation tests check: transformers' own logits move when its
    text config's use_bidirectional_attention is "none" instead of "vision" (each image's tokens then causal on the
    sliding layers too)."""
    model, paths = reference("gemma4"), images(tmp_path, 1)
    _, want_logits = want_generation(reference, "gemma4", prompts(1), paths)
    text = model.config.get_text_config()
    text.use_bidirectional_attention = None
    try:
        _, causal_logits = want_generation(reference, "gemma4", prompts(1), paths)
    finally:
        text.use_bidirectional_attention = "vision"
    assert np.abs(causal_logits[0] - want_logits[0]).max() > 0.01


def test_gemma4_standardize_matters(reference, tmp_path):
    """The vision config's standardize (the pooled tokens less std_bias, times std_scale) is what test_image_features
    checks: transformers' features move without it."""
    model, paths = reference("gemma4"), images(tmp_path, 1)
    want = want_features(reference, "gemma4", paths)
    vision = model.config.vision_config
    tower_configs = {id(m.config): m.config for m in model.modules() if getattr(m, "config", None) is not None
                     and getattr(m.config, "model_type", None) == "gemma4_vision"}
    try:
        for c in [vision, *tower_configs.values()]:
            c.standardize = False
        plain = want_features(reference, "gemma4", paths)
    finally:
        for c in [vision, *tower_configs.values()]:
            c.standardize = True
    assert np.abs(plain - want).max() > 0.01


def test_gemma4_per_layer_inputs_matter(reference, tmp_path):
    """Gemma 4's per-layer inputs under the image encoder (gemma4_ple) are what its generation test checks:
    transformers' logits move when they are gated off (per_layer_input_gate zeroed: GELU(0)·input adds nothing)."""
    model, paths = reference("gemma4_ple"), images(tmp_path, 1)
    _, want_logits = want_generation(reference, "gemma4_ple", prompts(1), paths)
    gates = {n: p.clone() for n, p in model.named_parameters() if "per_layer_input_gate" in n}
    assert gates
    try:
        with torch.no_grad():
            for n, p in model.named_parameters():
                if n in gates:
                    p.zero_()
        _, off_logits = want_generation(reference, "gemma4_ple", prompts(1), paths)
    finally:
        with torch.no_grad():
            for n, p in model.named_parameters():
                if n in gates:
                    p.copy_(gates[n])
    assert np.abs(off_logits[0] - want_logits[0]).max() > 0.01


def test_gemma4_clipped_linears_matter(reference, tmp_path):
    """The bounds of Gemma 4's clipped linears are what test_image_features checks: transformers' features move when
    they are lifted (±inf, as a checkpoint without use_clipped_linears has them)."""
    model, paths = reference("gemma4"), images(tmp_path, 1)
    want = want_features(reference, "gemma4", paths)
    saved = {n: b.clone() for n, b in model.named_buffers() if n.endswith(("_min", "_max"))}
    assert saved
    try:
        for name, b in model.named_buffers():
            if name in saved:
                b.fill_(float("-inf") if name.endswith("_min") else float("inf"))
        lifted = want_features(reference, "gemma4", paths)
    finally:
        for name, b in model.named_buffers():
            if name in saved:
                b.copy_(saved[name])
    assert np.abs(lifted - want).max() > 0.01


def test_qwen3_vl_deepstack_matters(export_dir, reference, tmp_path, monkeypatch):
    """DeepStack's features are what the test checks: the same export fed zeros for them gives logits far from
    transformers'."""
    out = export_dir("qwen3_vl", *MODES["onnx-mtd"])
    paths = images(tmp_path, 1)
    _, want_logits = want_generation(reference, "qwen3_vl", prompts(1), paths)
    features = generate_vlm.grid_features

    def without(*args):
        f, counts, grid, stacked = features(*args)
        assert stacked is not None and stacked.shape[0] == 2
        return f, counts, grid, np.zeros_like(stacked)
    monkeypatch.setattr(generate_vlm, "grid_features", without)
    _, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    assert np.abs(logits[0] - want_logits[0]).max() > 0.1


def test_onevision_shrink_matters(export_dir, reference, tmp_path, monkeypatch):
    """LLaVA-OneVision's shrink of a grid of too many features is what the test checks: packed without it, an image
    gives more features than transformers'."""
    out = export_dir("llava_onevision", *MODES["onnx-mtd"])
    paths = images(tmp_path, 1)
    want = want_features(reference, "llava_onevision", paths)
    monkeypatch.setattr(generate_vlm, "bilinear", lambda grid, h, w: grid)
    got, _ = generate_vlm.anyres_features(generate_vlm.runtime_of(out).Export(out), out, paths)
    assert len(got) > len(want), (len(got), len(want))


def test_paligemma_prefix_matters(export_dir, reference, tmp_path, monkeypatch):
    """PaliGemma's prefix LM is what the test checks: the same export run as a plain causal LM (every token_type_id
    the suffix's, positions from 0) gives logits far from transformers'."""
    import generate_onnx
    out = export_dir("paligemma", *MODES["onnx-mtd"])
    paths = images(tmp_path, 1)
    _, want_logits = want_generation(reference, "paligemma", prompts(1), paths)
    real = generate_onnx.generate
    monkeypatch.setattr(generate_onnx, "generate", lambda *a, **k: real(*a, **{**k, "prefix_lm": False}))
    _, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    assert np.abs(logits[0] - want_logits[0]).max() > 0.1


@pytest.mark.parametrize("name,module", [("qwen3_vl", "Qwen3VLTextRotaryEmbedding"),
                                         ("qwen3_5", "Qwen3_5TextRotaryEmbedding")])
def test_interleaved_mrope_matters(name, module, reference, tmp_path, monkeypatch):
    """Interleaved M-RoPE is visible: transformers' model with its frequencies taken in contiguous sections
    instead (Qwen2-VL's layout) gives other logits than the one the exports are checked against."""
    import importlib
    paths = images(tmp_path, 1)
    _, want_logits = want_generation(reference, name, prompts(1), paths)
    rotary = getattr(importlib.import_module(type(reference(name)).__module__), module)

    def contiguous(self, freq):
        parts, start = [], 0
        for axis, n in enumerate(self.mrope_section):
            parts.append(freq[axis, ..., start:start + n])
            start += n
        half = torch.cat(parts, dim=-1)[..., :freq.shape[-1]]
        half = torch.cat([half, freq[0, ..., half.shape[-1]:]], dim=-1)
        return torch.cat((half, half), dim=-1)
    monkeypatch.setattr(rotary, "recomposition_frequencies", contiguous)
    _, logits = want_generation(reference, name, prompts(1), paths)
    steps = min(len(logits), len(want_logits))
    assert np.abs(logits[:steps] - want_logits[:steps]).max() > 0.1


def test_qwen3_vl_moe_hub_experts(ckpt, export_dir, reference, tmp_path):
    """The Hub's Qwen3-VL-MoE checkpoints store the fused experts transposed (gate_up_proj [E, hidden, 2·I],
    down_proj [E, I, hidden]; transformers transposes what is not its module's shape on load): the same
    model so stored generates transformers' tokens."""
    import shutil
    from safetensors.numpy import load_file, save_file
    dst = tmp_path / "hub"
    shutil.copytree(ckpt("qwen3_vl_moe"), dst)
    tensors = load_file(str(dst / "model.safetensors"))
    moved = [k for k in tensors if k.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj"))]
    assert len(moved) == 2  # layer 0's (layer 1 is dense)
    for k in moved:
        tensors[k] = np.ascontiguousarray(tensors[k].transpose(0, 2, 1))
    assert tensors[moved[0]].shape[1:] in ((32, 48), (24, 32)), tensors[moved[0]].shape
    save_file(tensors, str(dst / "model.safetensors"), metadata={"format": "pt"})
    out = export_dir("qwen3_vl_moe", *MODES["onnx-mtd"], checkpoint=dst)
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, "qwen3_vl_moe", prompts(1), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "qwen3_vl_moe Hub experts")


def test_openvino_stateless(export_dir, reference, tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"export_format": "openvino", "dynamic": True, "stateful": False}))
    out = export_dir("llava", "--config", str(cfg))
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, "llava", prompts(1), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "llava openvino stateless")


def test_example_command_line(export_dir, tmp_path):
    """The example as a user runs it: one JSON list of NEW_TOKENS ids per prompt on stdout."""
    import subprocess
    out = export_dir("llava", *MODES["onnx-mtd"])
    path = images(tmp_path, 1)[0]
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "generate_vlm.py"), str(out), "--image", str(path),
                           "--prompt-ids", ",".join(map(str, prompts(1)[0])), "--max-new-tokens", "5"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 1 and len(rows[0]) == 5
    bad = subprocess.run([sys.executable, str(REPO / "examples" / "generate_vlm.py"), str(out), "--image", str(path),
                          "--prompt-ids", "1,2,3", "--max-new-tokens", "5"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "image tokens" in bad.stderr, bad.stderr


def _llava_v5_name(k):
    if k.startswith("language_model.model."):
        return "model.language_model." + k[len("language_model.model."):]
    if k.startswith("language_model.lm_head."):
        return k[len("language_model."):]
    return "model." + k


def _qwen_v5_name(k):
    if k.startswith("visual."):
        return "model." + k
    if k.startswith("model."):
        return "model.language_model." + k[len("model."):]
    return k


@pytest.mark.parametrize("name,rename", [("llava", _llava_v5_name), ("qwen2_vl", _qwen_v5_name)])
def test_transformers5_tensor_names(name, rename, ckpt, export_dir, reference, tmp_path):
    """A checkpoint under transformers 5's module names (LLaVA's model.language_model.*,
    model.vision_tower.*, model.multi_modal_projector.*, lm_head.*; Qwen2-VL's model.visual.*,
    model.language_model.*) exports the same graphs."""
    import shutil
    from safetensors.torch import load_file, save_file
    src = ckpt(name)
    dst = tmp_path / "v5"
    shutil.copytree(src, dst)
    tensors = load_file(str(dst / "model.safetensors"))
    renamed = {rename(k): t for k, t in tensors.items()}
    assert set(renamed) != set(tensors)
    save_file(renamed, str(dst / "model.safetensors"), metadata={"format": "pt"})
    out = export_dir(name, "--format", "onnx", "--dynamic", "--multi-token-decode", checkpoint=dst)
    paths = images(tmp_path, 1)
    assert_logits_close(run_image_encoder(out, "onnx", encoder_feed(name, paths))["image_features"], want_features(reference, name, paths),
                        "v5 names")
    want_tokens, want_logits = want_generation(reference, name, prompts(1), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} v5 names")


def test_qwen2_vl_flat_hub_config(ckpt, export_dir, reference, tmp_path):
    """Qwen2-VL's config as the Hub has it (written before transformers 5): the language model's
    settings at the top level, rope_scaling {"type": "mrope", "mrope_section"} and rope_theta there,
    the vision config's model_type "qwen2_vl"; transformers reads it as the same model."""
    import shutil
    dst = tmp_path / "flat"
    shutil.copytree(ckpt("qwen2_vl"), dst)
    config = json.loads((dst / "config.json").read_text())
    text = config.pop("text_config")
    rope = text.pop("rope_parameters")
    text.pop("model_type")
    config.update(text, rope_theta=rope["rope_theta"],
                  rope_scaling={"type": "mrope", "mrope_section": rope["mrope_section"]})
    config["vision_config"]["model_type"] = "qwen2_vl"
    (dst / "config.json").write_text(json.dumps(config))
    out = export_dir("qwen2_vl", "--format", "openvino", "--dynamic", checkpoint=dst)
    paths = images(tmp_path, 1)
    want_tokens, want_logits = want_generation(reference, "qwen2_vl", prompts(1), paths)
    tokens, logits = generate_vlm.generate(out, paths, prompts(1), NEW_TOKENS)
    compare_generation(tokens, logits, want_tokens, want_logits, "qwen2_vl flat config")


def _edited(ckpt, tmp_path, edit, name="llava"):
    import shutil
    dst = tmp_path / "edited"
    shutil.copytree(ckpt(name), dst)
    config = json.loads((dst / "config.json").read_text())
    edit(config)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


@pytest.mark.parametrize("name,edit,flags,message", [
    ("llava", lambda c: None, ("--format", "onnx"), "generation"),
    # (the seed's split is written for LLaVA's lineage: test_vlm_seed.py; Gemma 3's language model takes more)
    ("gemma3", lambda c: None, ("--format", "onnx", "--for-generation", "--config-json", '{"export_format": "onnx", "dynamic": true, "io": "seed"}'),
     "io \"seed\" does not cover"),
    ("llava", lambda c: c["text_config"].update(model_type="bert"), ("--format", "onnx", "--for-generation"), "model_type 'bert'"),
    ("llava", lambda c: c["vision_config"].update(model_type="vit"), ("--format", "onnx", "--for-generation"), "model_type 'vit'"),
    ("llava", lambda c: c.update(vision_feature_layer=7), ("--format", "onnx", "--for-generation"), "vision_feature_layer"),
    ("llava", lambda c: c.update(vision_feature_select_strategy="cls"), ("--format", "onnx", "--for-generation"),
     "vision_feature_select_strategy 'cls'"),
    ("llava", lambda c: c.pop("text_config"), ("--format", "onnx", "--for-generation"), "text_config"),
    # a grid tower is Qwen2-VL's, not LLaVA's
    ("llava", lambda c: c["vision_config"].update(model_type="qwen2_vl"), ("--format", "onnx", "--for-generation"),
     "model_type 'qwen2_vl'"),
    ("qwen2_vl", lambda c: c["text_config"]["rope_parameters"].update(mrope_section=[1, 1, 1]),
     ("--format", "onnx", "--for-generation"), "mrope_section adds up to 3"),
    ("qwen2_vl", lambda c: c["vision_config"].update(hidden_size=48), ("--format", "onnx", "--for-generation"),
     "merger's width 48"),
    ("qwen2_vl", lambda c: c["vision_config"].update(model_type="clip_vision_model"),
     ("--format", "onnx", "--for-generation"), "model_type 'clip_vision_model'"),
    ("qwen2_5_vl", lambda c: c["vision_config"].update(window_size=14), ("--format", "onnx", "--for-generation"),
     "window_size 14"),
    ("qwen3_vl", lambda c: c["vision_config"].update(deepstack_visual_indexes=3), ("--format", "onnx", "--for-generation"),
     "deepstack_visual_indexes must be a list"),
    ("qwen3_vl", lambda c: c["text_config"]["rope_parameters"].update(mrope_section=[1, -1, 1]),
     ("--format", "onnx", "--for-generation"), "mrope_section[1] is not a count"),
    ("qwen3_vl", lambda c: c["vision_config"].update(num_position_embeddings=0), ("--format", "onnx", "--for-generation"),
     "num_position_embeddings"),
    ("qwen3_vl", lambda c: c["vision_config"].update(out_hidden_size=48), ("--format", "onnx", "--for-generation"),
     "merger's width 48"),
    ("qwen3_5", lambda c: c["vision_config"].update(model_type="qwen3_omni_moe_vision_encoder"),
     ("--format", "onnx", "--for-generation"), "model_type 'qwen3_omni_moe_vision_encoder'"),
    ("llama4", lambda c: c["vision_config"].update(pixel_shuffle_ratio=0.3), ("--format", "onnx", "--for-generation"),
     "pixel_shuffle_ratio 0.3"),
    ("llama4", lambda c: c["vision_config"].update(projector_output_dim=48), ("--format", "onnx", "--for-generation"),
     "the adapter reads"),
    ("llava_pixtral", lambda c: c.update(vision_feature_select_strategy="default"),
     ("--format", "onnx", "--for-generation"), "a Pixtral tower's features"),
    ("lfm2_vl", lambda c: c.update(downsample_factor=0), ("--format", "onnx", "--for-generation"), "downsample_factor"),
    ("lfm2_vl", lambda c: c.update(projector_hidden_act="nope"), ("--format", "onnx", "--for-generation"),
     "projector_hidden_act 'nope'"),
    ("mistral3", lambda c: c.update(vision_feature_layer=[-1, -2]), ("--format", "onnx", "--for-generation"),
     "vision_feature_layer as a list"),
    ("mistral3", lambda c: c["vision_config"].update(hidden_size=36, num_attention_heads=6),
     ("--format", "onnx", "--for-generation"), "multiple of 4"),
    ("paligemma", lambda c: c.update(projection_dim=48), ("--format", "onnx", "--for-generation"), "projection_dim 48"),
    ("paligemma", lambda c: None, ("--format", "onnx", "--for-generation", "--cache", "static", "--max-cache-len", "64"),
     "static cache"),
    ("internvl", lambda c: c.update(downsample_ratio=0.3), ("--format", "onnx", "--for-generation"),
     "downsample_ratio 0.3"),
    ("internvl", lambda c: c.update(vision_feature_select_strategy="full"), ("--format", "onnx", "--for-generation"),
     "vision_feature_select_strategy 'full'"),
    ("internvl", lambda c: c.update(vision_feature_layer=[-1, -2]), ("--format", "onnx", "--for-generation"),
     "vision_feature_layer as a list"),
    ("internvl", lambda c: c["vision_config"].update(norm_type="group_norm"), ("--format", "onnx", "--for-generation"),
     "norm_type 'group_norm'"),
    ("gemma4", lambda c: c.update(audio_config={"model_type": "gemma4_audio", "subsampling_conv_channels": [6, 8]}),
     ("--format", "onnx", "--for-generation"), "subsampling_conv_channels"),
    ("gemma4", lambda c: c["vision_config"].update(rope_parameters={"rope_type": "default", "rope_theta": 100.0}),
     ("--format", "onnx", "--for-generation"), "rope_type 'default'"),
    ("gemma4", lambda c: c["vision_config"].update(head_dim=6), ("--format", "onnx", "--for-generation"), "head_dim 6"),
    # the grid encoder's dims bounded under another name than the graph's
    ("qwen2_vl", lambda c: None, ("--format", "onnx", "--for-generation", "--config-json", json.dumps(
        {"export_format": "onnx", "dynamic_shapes": {"pixel_values": {"0": {"name": "patches", "max": 64}}}})),
     "calls that dim 'num_patches'"),
    ("qwen2_vl", lambda c: None, ("--format", "onnx", "--for-generation", "--config-json", json.dumps(
        {"export_format": "onnx", "dynamic_shapes": {"pixel_valuez": {"0": {"name": "num_patches", "max": 64}}}})),
     "'pixel_valuez', which this model does not take"),
])
def test_refused(name, edit, flags, message, ckpt, tmp_path):
    src = _edited(ckpt, tmp_path, edit, name)
    out = tmp_path / "out"
    args = ["export", src, out]
    flags = list(flags)
    if "--config-json" in flags:  # the export config as a file
        i = flags.index("--config-json")
        cfg = tmp_path / "cfg.json"
        cfg.write_text(flags[i + 1])
        flags[i:i + 2] = ["--config", str(cfg)]
        flags.remove("--format"), flags.remove("onnx")
    proc = run_hfx(args + flags)
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not out.exists()


# LLaVA's tokens (config.json's ids)
DEFAULT_SPECIAL = {1: "<s>", 2: "</s>", IMAGE_TOKEN: "<image>"}


# GenAI's LLaVA preprocessing reads CLIP's preprocessor_config.json (shortest_edge, crop_size): a
# SigLIP tower's processor config (a fixed height and width) is not read, so llava_siglip is not run
@pytest.mark.parametrize("name", ["llava", "llava_layers"])
def test_vlm_pipeline(name, ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful OpenVINO export (optimum-intel's file names:
    openvino_language_model.xml, openvino_text_embeddings_model.xml,
    openvino_vision_embeddings_model.xml, and hfx's tokenizer graphs from the checkpoint's
    tokenizer.json): from a raw image and a text prompt, the token ids it streams are transformers'
    greedy tokens on the prompt GenAI builds (each <image> expanded to the image's feature count and
    followed by "\\n") and the image processor's pixel values. The image is 224 × 224, the tower's
    size, so that GenAI's resize (its own Pillow-like bicubic) and transformers' are both the
    identity; no chat template (apply_chat_template false: the tiny tokenizer has none)."""
    pipe, tok, out = genaiutil.pipeline(ckpt(name), tmp_path, VOCAB, DEFAULT_SPECIAL)
    for f in ("openvino_language_model.xml", "openvino_text_embeddings_model.xml",
              "openvino_vision_embeddings_model.xml", "openvino_tokenizer.xml", "preprocessor_config.json"):
        assert (out / f).is_file(), f
    image = np.random.default_rng(9).integers(0, 256, (224, 224, 3), dtype=np.uint8)
    got = genaiutil.streamed(pipe, "acat<image>ishere", image)
    x = processor(VARIANTS[name])(images=[image], return_tensors="np").pixel_values.astype(np.float32)
    path = tmp_path / "image.png"
    from PIL import Image
    Image.fromarray(image).save(path)
    per_image = want_features(reference, name, [path]).shape[1]
    ids = tok.encode("acat" + "<image>" * per_image + "\n" + "ishere").ids
    assert ids.count(IMAGE_TOKEN) == per_image and len(ids) == 4 + per_image + 1 + 6, ids
    want = genaiutil.greedy_through_eos(reference(name), ids, NEW_TOKENS, pixel_values=torch.from_numpy(x))
    assert got == want, f"VLMPipeline streamed {got}, transformers {want}"


def test_vlm_pipeline_llava_next(ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of LLaVA-Next (optimum-intel's forms: the image encoder's
    one output, the tiles' features; image_newline in config.json, the checkpoint's values exactly): from a raw image
    and a prompt, the ids it streams are transformers' greedy tokens on the prompt GenAI builds (<image> as many times
    as the packed features, then "\\n") with the processor's tiles. The image is 64 × 128, the grid pinpoint it fills
    exactly (no padding; the whole image squeezed to a 64 × 64 tile by both resizes alike). GenAI reads the pinpoints
    as (width, height), transformers as (height, width): an image that ties two of them (a square one against 64 × 128
    and 128 × 64) gets another grid there, which this image does not."""
    from PIL import Image
    from safetensors.numpy import load_file
    pipe, tok, out = genaiutil.pipeline(ckpt("llava_next"), tmp_path, VOCAB, DEFAULT_SPECIAL)
    newline = [v for k, v in load_file(ckpt("llava_next") / "model.safetensors").items() if "image_newline" in k]
    assert np.array_equal(np.asarray(json.loads((out / "config.json").read_text())["image_newline"], np.float32),
                          newline[0])
    image = np.random.default_rng(9).integers(0, 256, (64, 128, 3), dtype=np.uint8)
    inputs = processor(VARIANTS["llava_next"])(images=[image], return_tensors="pt")
    Image.fromarray(image).save(tmp_path / "image.png")
    per_image = len(want_features(reference, "llava_next", [tmp_path / "image.png"]))
    assert per_image == 16 + 4 * (8 + 1)  # the whole image's tile, then the 1 × 2 grid's rows, a newline each
    for before, after in (("look", "tell me"), ("ok", "")):
        got = genaiutil.streamed(pipe, before + "<image>" + after, image, NEW_TOKENS)
        ids = tok.encode(before + "<image>" * per_image + "\n" + after).ids
        want = genaiutil.greedy_through_eos(reference("llava_next"), ids, NEW_TOKENS,
                                            pixel_values=inputs["pixel_values"], image_sizes=inputs["image_sizes"])
        assert got == want, f"VLMPipeline streamed {got}, transformers {want}"


# Qwen2-VL's tokens as GenAI's VLMPipeline spells them (config.json's ids)
QWEN_SPECIAL = {1: "<s>", 2: "</s>", IMAGE_TOKEN: "<|image_pad|>", QWEN_TOP["video_token_id"]: "<|video_pad|>",
                QWEN_TOP["vision_start_token_id"]: "<|vision_start|>", QWEN_TOP["vision_end_token_id"]: "<|vision_end|>"}


@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_5"])
def test_vlm_pipeline_grid(name, ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5 (optimum-
    intel's split of the tower: GenAI computes the masks, rotary angles, window order and learned positions the merger
    graph takes, the M-RoPE positions — Qwen3.5's with a row of text positions first — and feeds Qwen3-VL's DeepStack
    features as the image tokens' rows):
    from a raw image and a prompt with GenAI's image tag, the token ids it streams are transformers' greedy tokens on
    the prompt GenAI builds (the tag as <|vision_start|>, an <|image_pad|> per merged token, <|vision_end|>) and the
    processor's patches, the EOS it stops at streamed too. The image is 84 × 112, whole 28-pixel blocks inside the
    processor's pixel bounds, so that GenAI's resize and transformers' are both the identity."""
    pipe, tok, _ = genaiutil.pipeline(ckpt(name), tmp_path, VOCAB, QWEN_SPECIAL)
    image = np.random.default_rng(9).integers(0, 256, (84, 112, 3), dtype=np.uint8)
    got = genaiutil.streamed(pipe, "acat<ov_genai_image_0>ishere", image)
    inputs = processor(VARIANTS[name])(images=[image], return_tensors="pt")
    assert inputs["image_grid_thw"].tolist() == [[1, 6, 8]]  # (no resize)
    ids = tok.encode("acat<|vision_start|>" + "<|image_pad|>" * 12 + "<|vision_end|>ishere").ids
    want = genaiutil.greedy_through_eos(reference(name), ids, NEW_TOKENS, pixel_values=inputs["pixel_values"],
                              image_grid_thw=inputs["image_grid_thw"],
                              mm_token_type_ids=(torch.tensor([ids]) == IMAGE_TOKEN).long())
    assert got == want, f"VLMPipeline streamed {got}, transformers {want}"


# Gemma 3's tokens as GenAI's VLMPipeline spells them (its defaults; config.json's ids)
GEMMA3_SPECIAL = {1: "<s>", 2: "</s>", IMAGE_TOKEN: "<image_soft_token>", 151: "<start_of_image>", 152: "<end_of_image>"}


def test_vlm_pipeline_gemma3(ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of Gemma 3 (token_type_ids: the image's
    tokens see each other both ways): from a raw image and a prompt with GenAI's image tag, the ids it
    streams are transformers' greedy tokens on the prompt GenAI builds (the tag as "\\n\\n<start_of_image>",
    a soft token per feature, "<end_of_image>\\n\\n") at the positions GenAI feeds: the prompt's from 1
    (optimum-intel's convention, from transformers 4.50's Gemma 3), the new tokens' from the prompt's
    length, so the first new token repeats the prompt's last position. transformers 5 counts from 0
    without the repeat: near-ties may then differ (here they do: the control), a property of GenAI's
    loop that any export meets. The image is the tower's 224 × 224 (both resizes the identity)."""
    pipe, tok, _ = genaiutil.pipeline(ckpt("gemma3"), tmp_path, VOCAB, GEMMA3_SPECIAL)
    image = np.random.default_rng(9).integers(0, 256, (224, 224, 3), dtype=np.uint8)
    pixels = processor(VARIANTS["gemma3"])(images=[image], return_tensors="pt").pixel_values
    model = reference("gemma3")
    for before, after in (("Describe", "in detail please"), ("x", "y")):
        got = genaiutil.streamed(pipe, before + "<start_of_image>" + after, image)
        ids = tok.encode(before + "\n\n<start_of_image>" + "<image_soft_token>" * 16 + "<end_of_image>\n\n" + after).ids
        assert ids.count(IMAGE_TOKEN) == 16, ids
        want = genaiutil.greedy_at_positions(model, ids, 1, NEW_TOKENS, IMAGE_TOKEN, pixel_values=pixels)
        assert len(set(want)) > 3, "the reference must not be a constant run of tokens"
        assert got == want, f"VLMPipeline streamed {got}, transformers {want}"
    # the control: the second prompt's tokens at transformers' own positions differ (the comparison sees positions)
    assert genaiutil.greedy_at_positions(model, ids, 0, NEW_TOKENS, IMAGE_TOKEN, pixel_values=pixels) != want


# Gemma 4's tokens as GenAI's VLMPipeline spells them (its defaults; config.json's ids)
GEMMA4_SPECIAL = {1: "<s>", 2: "</s>", IMAGE_TOKEN: "<|image|>", 151: "<|image>", 152: "<image|>", 153: "<|video|>"}


# (a prompt each whose greedy tokens vary)
@pytest.mark.parametrize("name, before, after", [("gemma4", "look", "tell me"), ("gemma4_ple", "hello world ", " describe")])
def test_vlm_pipeline_gemma4(name, before, after, ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of Gemma 4 (the image encoder's one output: the image's
    real features, optimum-intel's form; token_type_ids, as use_bidirectional_attention "vision" asks; per-layer
    inputs, as E2B's and E4B's, whose tokens' half GenAI computes with openvino_text_embeddings_per_layer_model.xml on
    the prompt's ids, the image tokens' read as the pad token's, and feeds the language model): from a raw
    image and a prompt with GenAI's image tag, the ids it streams are transformers' greedy tokens on the prompt GenAI
    builds (<|image>, an <|image|> per feature, <image|>) and the processor's patches, the EOS it stops at streamed
    too. The image is 72 × 132, whole 12-pixel blocks that the aspect-preserving size keeps (594 of the 630 patches),
    so that GenAI's resize and transformers' are both the identity."""
    pipe, tok, out = genaiutil.pipeline(ckpt(name), tmp_path, VOCAB, GEMMA4_SPECIAL)
    if VARIANTS[name].text["hidden_size_per_layer_input"]:
        assert (out / "openvino_text_embeddings_per_layer_model.xml").is_file()
    image = np.random.default_rng(9).integers(0, 256, (72, 132, 3), dtype=np.uint8)
    inputs = processor(VARIANTS[name])(images=[image], return_tensors="pt")
    assert inputs["num_soft_tokens_per_image"].tolist() == [6 * 11]  # (no resize: 72 / 12 × 132 / 12)
    got = genaiutil.streamed(pipe, before + "<|image|>" + after, image)
    ids = tok.encode(before + "<|image>" + "<|image|>" * 66 + "<image|>" + after).ids
    want = genaiutil.greedy_through_eos(reference(name), ids, NEW_TOKENS, pixel_values=inputs["pixel_values"],
                              image_position_ids=inputs["image_position_ids"],
                              mm_token_type_ids=(torch.tensor([ids]) == IMAGE_TOKEN).long())
    assert got == want, f"VLMPipeline streamed {got}, transformers {want}"


def test_vlm_pipeline_gemma4_video(ckpt, reference, tmp_path):
    """OpenVINO GenAI's VLMPipeline on hfx's stateful export of Gemma 4 with a video: each frame through the image
    encoder (the frames as Gemma4ImageProcessor makes images: GenAI's video config falls back to the image
    processor's), the prompt GenAI builds ("MM:SS <|image>", a <|video|> per feature, "<image|>" a frame, at GenAI's
    24 frames a second without metadata), each frame's tokens a block (token_type_ids 1, as GenAI marks video tokens;
    transformers' runs of 1 or 2 alike): the ids it streams are transformers' greedy tokens given the frames as
    pixel_values_videos. Frames of 72 × 132, whole blocks (no resize)."""
    import openvino as ov
    pipe, tok, _ = genaiutil.pipeline(ckpt("gemma4"), tmp_path, VOCAB, GEMMA4_SPECIAL)
    frames = np.random.default_rng(4).integers(0, 256, (2, 72, 132, 3), dtype=np.uint8)
    tokens = ovutil.token_streamer()
    pipe.generate("look<|video|>tell me", videos=[ov.Tensor(frames)], max_new_tokens=NEW_TOKENS, streamer=tokens,
                  apply_chat_template=False)
    per_frame = [processor(VARIANTS["gemma4"])(images=[f], return_tensors="pt") for f in frames]
    assert all(x["num_soft_tokens_per_image"].tolist() == [66] for x in per_frame)
    frame = "00:00 <|image>" + "<|video|>" * 66 + "<image|>"
    ids = tok.encode("look" + frame + " " + frame + "tell me").ids
    assert ids.count(VARIANTS["gemma4"].top["video_token_id"]) == 2 * 66, ids
    types = (torch.tensor([ids]) == VARIANTS["gemma4"].top["video_token_id"]).long() * 2  # (transformers' video type)
    want = genaiutil.greedy_through_eos(reference("gemma4"), ids, NEW_TOKENS,
                                        pixel_values_videos=torch.cat([x["pixel_values"] for x in per_frame]),
                                        video_position_ids=torch.cat([x["image_position_ids"] for x in per_frame]),
                                        num_frames_per_video=torch.tensor([2]), mm_token_type_ids=types)
    assert tokens.ids == want, f"VLMPipeline streamed {tokens.ids}, transformers {want}"


def test_llava_next_config_newline_refused(ckpt, tmp_path):
    """A LLaVA-Next config.json that holds image_newline already (which OpenVINO's stateful layout writes from the
    tensor): refused naming the field, exit 2, nothing written; the other layouts copy it as it is."""
    import shutil
    folder = tmp_path / "ckpt"
    shutil.copytree(ckpt("llava_next"), folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "image_newline": [0.0] * 32}))
    out = tmp_path / "out"
    proc = run_hfx(["export", folder, out, "--format", "openvino", "--dynamic", "--for-generation"])
    assert proc.returncode == 2 and '"image_newline" already' in proc.stderr, describe(proc)
    assert not out.exists()
    proc = run_hfx(["export", folder, out, "--format", "onnx", "--dynamic", "--for-generation"])
    assert proc.returncode == 0, describe(proc)
    assert (out / "config.json").read_bytes() == (folder / "config.json").read_bytes()


def test_gemma3_static_refused(ckpt, tmp_path):
    """Gemma 3's language model with a static cache (its image blocks over the cache's slots): refused
    by name, exit 2, nothing written."""
    out = tmp_path / "out"
    proc = run_hfx(["export", ckpt("gemma3"), out, "--format", "onnx", "--for-generation", "--dynamic",
                    "--cache", "static", "--max-cache-len", "64"])
    assert proc.returncode == 2 and "static cache" in proc.stderr and "Gemma3" in proc.stderr, describe(proc)
    assert not out.exists()
