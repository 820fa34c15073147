"""Models whose layers mix tokens by a recurrent state, alone or beside attention (docs/GENERATION.md,
"Convolution and recurrent state"), against transformers' torch path (eager attention):
LFM2 (Lfm2ForCausalLM: attention layers and gated short convolutions chosen by layer_types; LFM2-MoE,
sigmoid-routed experts after its dense layers; LFM3, sliding and full attention layers each with its rotary,
sandwich norms and a gate per head),
Mamba2 (Mamba2ForCausalLM: every layer a Mamba2 mixer, its SSD scan transformers' chunked one),
Mamba (MambaForCausalLM: every layer a selective scan, decays per channel and state; FalconMamba, its
dt, B and C normed),
Granite 4.0 (GraniteMoeHybridForCausalLM: Mamba2 and attention layers, experts beside a shared MLP),
Bamba (BambaForCausalLM: Mamba2 layers and the attention layers attn_layer_indices lists),
Jamba (JambaForCausalLM: Mamba layers with normed dt/B/C, attention without positions, experts by period),
Falcon-H1 (FalconH1ForCausalLM: Mamba2 beside attention in every layer, muP multipliers),
Nemotron-H (NemotronHForCausalLM: every layer one block, a Mamba2 mixer, attention, a relu² MLP or experts),
OLMo-Hybrid (OlmoHybridForCausalLM: pre-normed gated delta-nets beside OLMo 3's post-normed attention),
RecurrentGemma (RecurrentGemmaForCausalLM: RG-LRU blocks beside local multi-query attention),
Zamba2 (Zamba2ForCausalLM: a Mamba2 mixer in every layer, fed in the hybrid layers by shared transformer blocks
over [x; embeddings] with per-use LoRA adapters), MiniMax-01 (MiniMaxForCausalLM: lightning attention, a linear
attention decaying per head, beside full attention, each residual its normed input), RWKV-4 (RwkvForCausalLM: time
mixes, a linear attention per channel, and token-shifted channel mixes; no padding mask, as in transformers),
BailingHybrid (BailingHybridForCausalLM: Kimi delta attention with full-rank gates and a bounded decay, latent attention
gated per head, V3's experts), xLSTM (xLSTMForCausalLM: mLSTM layers, a matrix memory per head with exponential input
and sigmoid forget gates, and gated MLPs; no padding mask, as in transformers), and
Qwen3-Next / Qwen3.5 (Qwen3NextForCausalLM, Qwen3_5ForCausalLM, Qwen3_5MoeForCausalLM: gated
delta-nets and gated attention).

  * logits of a batch of 3 left-padded prompts longer than the convolution's kernel and than
    Mamba2's chunk_size within 1e-4 of transformers (padding included), ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from those prompts equal to transformers' generate() token for
    token, each step's logits within 1e-4, through the examples' loops: ONNX (multi-token decode;
    prefill + decode), OpenVINO (stateful; stateless), torch.export (.pt2) and ExecuTorch — the
    convolution state past.{i}.conv [batch, channels, kernel − 1] and Mamba2's SSM state
    past.{i}.ssm [batch, heads, head_dim, state] next to the attention layers' cache;
  * config variants: LFM2's layer pattern by layer_types or by full_attn_idxs (attention first and
    last), conv_L_cache 3 and 4, conv_bias, block_ffn_dim_multiplier; Mamba2's n_groups 1, 2 and
    one per head, head counts and widths, d_state, conv_kernel 3 and 4, biases, tied embeddings,
    a time_step_limit that binds; Mamba's d_state, kernel, expand, time_step_rank, biases and tied
    embeddings; Granite 4.0 with rotary or none ("nope"), experts or the shared
    MLP alone, mamba_d_head "auto" or given, the pattern as layer_types or as the older
    layers_block_type, Granite's multipliers; Falcon-H1 with or without its gated norm (either
    order), mamba_d_ssm given or null, every multiplier, biases; Qwen3-Next's value heads sharing key
    heads, its pattern from layer_types or full_attention_interval, experts and dense layers,
    attention biases and rotary fractions; Qwen3.5's separate projections, dense or all experts; a
    prompt fed in two pieces, and a 150-token prompt in one call (transformers' delta rule: three
    chunks);
  * onnxruntime-genai running the multi-token decode export through its genai_config.json;
  * a static cache too (ONNX, OpenVINO stateless, .pt2, ExecuTorch): the attention layers' slots,
    the states replaced;
  * io "seed": the states under transformers.exporters' names and layout, compared with its own
    ONNX and OpenVINO exports, and its prefill-then-decode loops giving generate's tokens;
  * io "seed" in .pt2: the cache objects' recurrent layers as transformers' LinearAttentionLayer, specs equal to
    the seed's own export's, generating transformers' tokens; what is not written yet refused by name, and
    malformed configs with a clear error."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_logits_close, built_once, cached_exports, describe, run_hfx
from genutil import compare_generation, genai_greedy

sys.path.insert(0, str(REPO / "examples"))
import decode_loop  # noqa: E402

VOCAB = 160
NEW_TOKENS = 32
PROMPTS = [[5, 6, 7, 8, 9, 10, 11, 3], [12, 13, 14, 15], [1, 20, 30, 40, 50, 60]]


@dataclasses.dataclass(frozen=True)
class Variant:
    config: dict
    full_attn_idxs: tuple | None = None  # written in place of layer_types (the Hub's older configs)
    family: str = "Lfm2"                 # transformers' {family}ForCausalLM and {family}Config
    legacy_block_types: bool = False     # layer_types written as transformers 4's layers_block_type
                                         # in its words ("mamba", "attention")
    no_layer_types: bool = False         # layer_types left out: the pattern is full_attention_interval's
    config_class: str | None = None      # transformers' config class, if not {family}Config
    pattern: str | None = None           # written as hybrid_override_pattern in place of layers_block_type (Nemotron-H)
    embed_std: float = 1.0               # the embeddings' scale: a tied head reads them as its weights, and a smaller
                                         # table keeps its logits (and their float error) at an untied head's size
    rewrite: object = None               # config.json's dict edited after saving (a config in its release's form)
    drop: tuple = ()                     # tensors (name suffixes) left out of the checkpoint: buffers transformers
                                         # computes when a checkpoint has none
    linear_gain: float = 1.0             # the linears' scale: below 1 where blocks compound (Zamba2's attention over
                                         # [x; embeddings] with adapters), so that transformers' own float32 logits
                                         # stay within 1e-5 of float64 and 1e-4 can tell a wrong graph from rounding


BASE = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256, block_multiple_of=16, pad_token_id=0,
            bos_token_id=1, eos_token_id=2)

VARIANTS = {
    # one attention layer among short convolutions of 3 taps; the MLP ⅔ · 64 rounded up to 48
    "lfm2": Variant({**BASE, "layer_types": ["conv", "full_attention", "conv", "conv"], "conv_L_cache": 3}),
    # attention first and last (full_attn_idxs), 4 taps with biases, a wider MLP (× 1.5, rounded)
    "lfm2_bias": Variant({**BASE, "layer_types": ["full_attention", "conv", "conv", "full_attention"],
                          "conv_L_cache": 4, "conv_bias": True, "block_ffn_dim_multiplier": 1.5},
                         full_attn_idxs=(0, 3)),
}
LFM2_MOE = dict({k: v for k, v in BASE.items() if k != "block_multiple_of"}, moe_intermediate_size=16, num_experts=4,
                num_experts_per_tok=2)
VARIANTS.update({
    # LFM2-MoE: a dense first layer (num_dense_layers 1), then top-2 of 4 experts by sigmoid scores + expert_bias
    # (drawn non-zero), renormalised; the dense MLP intermediate_size wide as is
    "lfm2_moe": Variant({**LFM2_MOE, "layer_types": ["conv", "full_attention", "conv", "conv"], "num_dense_layers": 1},
                        family="Lfm2Moe"),
    # no expert_bias (use_expert_bias false), no renormalisation, routed_scaling_factor 1.5, two dense layers (the
    # default), 4 taps, untied (a tied random model repeats its last token)
    "lfm2_moe_plain": Variant({**LFM2_MOE, "layer_types": ["full_attention", "conv", "conv", "full_attention"],
                               "use_expert_bias": False, "norm_topk_prob": False, "routed_scaling_factor": 1.5,
                               "conv_L_cache": 4, "tie_word_embeddings": False}, family="Lfm2Moe"),
})
LFM3 = dict({k: v for k, v in BASE.items() if k != "block_multiple_of"}, head_dim=8, num_hidden_layers=6,
            sliding_window=3, conv_L_cache=3)
VARIANTS.update({
    # LFM3: transformers' own pattern (no layer_types in config.json: conv, conv, full, conv, sliding, conv), windows
    # of 3, its default rotary per type (proportional on half of the full heads), sandwich norms, a gate per head
    "lfm3": Variant(dict(LFM3), family="Lfm3", no_layer_types=True),
    # a sliding layer first, no sandwich norms, no gate, biases in attention and convolutions, 4 taps, one rotary
    # base per type given, untied
    "lfm3_plain": Variant({**LFM3, "num_hidden_layers": 4,
                           "layer_types": ["sliding_attention", "conv", "full_attention", "sliding_attention"],
                           "use_sandwich_norm": False, "use_attention_gate": False, "attention_bias": True,
                           "conv_bias": True, "conv_L_cache": 4, "tie_word_embeddings": False,
                           "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                                               "full_attention": {"rope_type": "default", "rope_theta": 5000.0}}},
                          family="Lfm3"),
})
NEMOTRON_H = dict(vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                  intermediate_size=48, mamba_num_heads=4, mamba_head_dim=16, ssm_state_size=8, n_groups=2, chunk_size=4,
                  conv_kernel=4, pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
VARIANTS.update({
    # Nemotron-H's older config: hybrid_override_pattern "M*-M-" (Mamba2, attention, MLP, Mamba2, MLP), 4 Mamba2 heads
    # of 16 (their width 64, not expand · hidden), relu² MLPs, attention without positions
    "nemotron_h": Variant({**NEMOTRON_H, "layers_block_type": ["linear_attention", "full_attention", "mlp",
                                                               "linear_attention", "mlp"]},
                          family="NemotronH", pattern="M*-M-"),
    # experts: top-2 of 4 by sigmoid + correction bias within 1 of 2 groups, x 3, ungated, an ungated shared expert;
    # biases in the MLPs and the Mamba2 projections; 3 taps
    "nemotron_h_moe": Variant({**NEMOTRON_H, "layers_block_type": ["linear_attention", "moe", "full_attention", "mlp"],
                               "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
                               "moe_shared_expert_intermediate_size": 24, "n_group": 2, "topk_group": 1,
                               "routed_scaling_factor": 3.0, "mlp_bias": True, "use_bias": True, "conv_kernel": 3},
                              family="NemotronH"),
})
OLMO_HYBRID = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                   max_position_embeddings=256, linear_conv_kernel_dim=3, pad_token_id=0, bos_token_id=1, eos_token_id=2)
VARIANTS.update({
    # OLMo-Hybrid as released: no rotary (rope_theta null), its own pattern (layer 3 attends) and delta-net widths (4
    # heads, keys 6 wide, values 12), beta doubled (linear_allow_neg_eigval)
    "olmo_hybrid": Variant({**OLMO_HYBRID, "rope_parameters": {"rope_type": "default", "rope_theta": None}},
                           family="OlmoHybrid", no_layer_types=True),
    # rotary, attention first and last, 2 key/value heads, 2 key heads for 4 value heads of 8, beta not doubled,
    # attention biases, gelu (the convolution's and the MLP's)
    "olmo_hybrid_rope": Variant({**OLMO_HYBRID, "layer_types": ["full_attention", "linear_attention", "linear_attention",
                                                                "full_attention"],
                                 "num_key_value_heads": 2, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                                 "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_allow_neg_eigval": False,
                                 "attention_bias": True, "intermediate_size": 64, "hidden_act": "gelu",
                                 "rope_parameters": {"rope_type": "default", "rope_theta": 100.0}},
                                family="OlmoHybrid"),
})
RECURRENT_GEMMA = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
                       num_key_value_heads=1, attention_window_size=4, conv1d_width=4, pad_token_id=0, bos_token_id=2,
                       eos_token_id=1)
VARIANTS.update({
    # RecurrentGemma: recurrent, recurrent, attention (block_types' default, cycled), 4 gate blocks of 8, local
    # multi-query attention over windows of 4 with half of each head rotated, biased MLPs of 48, logits capped at 30,
    # untied
    "recurrent_gemma": Variant({**RECURRENT_GEMMA, "tie_word_embeddings": False}, family="RecurrentGemma"),
    # tied, as released (compared on logits: a tied random model repeats its last token)
    "recurrent_gemma_tied": Variant(dict(RECURRENT_GEMMA), family="RecurrentGemma"),
    # attention first, then recurrence, an RG-LRU 48 wide, 3 taps, q/k/v biases, 2 key/value heads, untied
    "recurrent_gemma_bias": Variant({**RECURRENT_GEMMA, "block_types": ["attention", "recurrent"], "lru_width": 48,
                                     "conv1d_width": 3, "attention_bias": True, "num_key_value_heads": 2,
                                     "tie_word_embeddings": False, "num_hidden_layers": 4}, family="RecurrentGemma"),
})
MAMBA2 = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, expand=2, pad_token_id=0, bos_token_id=1,
              eos_token_id=2)
VARIANTS.update({
    # 8 heads of 8 in 2 groups, d_state 16, 4 taps; chunks of 4 (the 8-token prompt spans two)
    "mamba2": Variant({**MAMBA2, "num_heads": 8, "head_dim": 8, "state_size": 16, "n_groups": 2, "chunk_size": 4,
                       "conv_kernel": 4}, family="Mamba2"),
    # one group, 4 heads of 16, d_state 8, 3 taps, in/out biases and no conv bias, 3 layers
    "mamba2_g1": Variant({**MAMBA2, "num_hidden_layers": 3, "num_heads": 4, "head_dim": 16, "state_size": 8,
                          "n_groups": 1, "chunk_size": 2, "conv_kernel": 3, "use_bias": True, "use_conv_bias": False},
                         family="Mamba2"),
    # a group per head, tied embeddings; dt clamped to [0.3, 1.5] (transformers clamps in its chunked
    # scan only, not in its one-token step, so this one is compared on logits, not generation)
    "mamba2_limit": Variant({**MAMBA2, "num_heads": 4, "head_dim": 16, "state_size": 4, "n_groups": 4,
                             "chunk_size": 3, "time_step_limit": (0.3, 1.5), "tie_word_embeddings": True},
                            family="Mamba2"),
})
MAMBA = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, expand=2, pad_token_id=0, bos_token_id=1,
             eos_token_id=2, tie_word_embeddings=False)
VARIANTS.update({
    # Mamba (Mamba1): d_state 8, 4 taps, the time-step rank ⌈32 / 16⌉ = 2
    "mamba": Variant({**MAMBA, "state_size": 8, "conv_kernel": 4}, family="Mamba"),
    # 3 layers, d_state 4, 3 taps, expand 3 (inner 96), rank 5, in/out biases, no conv bias
    "mamba_bias": Variant({**MAMBA, "num_hidden_layers": 3, "state_size": 4, "conv_kernel": 3, "expand": 3,
                           "time_step_rank": 5, "use_bias": True, "use_conv_bias": False}, family="Mamba"),
    # tied embeddings (compared on logits: a tied random model repeats its last token)
    "mamba_tied": Variant({**MAMBA, "state_size": 8, "tie_word_embeddings": True}, family="Mamba"),
    # FalconMamba: Mamba's mixer with dt, B and C each RMS-normed without a weight (mixer_rms_eps 1e-3)
    "falcon_mamba": Variant({**MAMBA, "state_size": 8, "conv_kernel": 4, "mixer_rms_eps": 1e-3}, family="FalconMamba"),
})
GRANITE4 = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, shared_intermediate_size=40, mamba_n_heads=8, mamba_d_state=16,
                mamba_n_groups=2, mamba_chunk_size=4, embedding_multiplier=1.5, residual_multiplier=0.7,
                logits_scaling=2.0, attention_multiplier=0.3, pad_token_id=0, bos_token_id=1, eos_token_id=2)
VARIANTS.update({
    # Granite 4.0: Mamba2 layers around an attention layer with rotary; top-2 of 4 experts beside the
    # shared MLP; Granite's multipliers; mamba_d_head "auto" (64 / 8)
    "granite4": Variant({**GRANITE4, "num_local_experts": 4, "num_experts_per_tok": 2, "position_embedding_type": "rope",
                         "layer_types": ["linear_attention", "full_attention", "linear_attention"]},
                        family="GraniteMoeHybrid"),
    # Granite 4.0-H's shape: no positions ("nope"), attention first, no experts (the shared MLP alone),
    # 4 Mamba heads of 16 in 2 groups, 3 taps and biases; the pattern as layers_block_type
    "granite4_dense": Variant({**GRANITE4, "num_local_experts": 0, "position_embedding_type": "nope",
                               "layer_types": ["full_attention", "linear_attention", "linear_attention"],
                               "mamba_n_heads": 4, "mamba_d_head": 16, "mamba_d_conv": 3, "mamba_proj_bias": True},
                              family="GraniteMoeHybrid", legacy_block_types=True),
})
BAMBA = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2, mamba_n_heads=8, mamba_d_state=16, mamba_n_groups=2, mamba_chunk_size=4,
             pad_token_id=0, bos_token_id=1, eos_token_id=2)
VARIANTS.update({
    # Bamba: Mamba2 layers around an attention layer (attn_layer_indices [1]) with half of each head rotated (its
    # config's own default), dense MLPs
    "bamba": Variant({**BAMBA, "attn_layer_indices": [1]}, family="Bamba"),
    # attention first and last, the whole head rotated, attention and MLP biases, 4 Mamba heads of 16, 3 taps
    "bamba_bias": Variant({**BAMBA, "attn_layer_indices": [0, 2], "attention_bias": True, "mlp_bias": True,
                           "mamba_n_heads": 4, "mamba_d_conv": 3,
                           "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                               "partial_rotary_factor": 1.0}}, family="Bamba"),
})
JAMBA = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
             num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, mamba_d_state=8, mamba_d_conv=4,
             pad_token_id=0, bos_token_id=1, eos_token_id=2)
VARIANTS.update({
    # Jamba: Mamba mixers whose dt, B and C are RMS-normed with weights, attention without positions on layers 1 and 3
    # (attn_layer_period 2, offset 1), top-2 of 4 experts never renormalised on layers 0 and 2, dense MLPs between
    "jamba": Variant({**JAMBA, "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
                      "expert_layer_offset": 0}, family="Jamba"),
    # attention on layer 2 alone, experts on layer 3, 3 taps, expand 3, in/out biases, an explicit dt rank
    "jamba_bias": Variant({**JAMBA, "attn_layer_period": 4, "attn_layer_offset": 2, "expert_layer_period": 4,
                           "expert_layer_offset": 3, "mamba_d_conv": 3, "mamba_expand": 3, "mamba_proj_bias": True,
                           "mamba_dt_rank": 5}, family="Jamba"),
})
FALCON_H1 = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, mamba_n_heads=8, mamba_d_state=16, mamba_n_groups=2, mamba_chunk_size=4,
                 embedding_multiplier=1.3, lm_head_multiplier=0.8, mlp_multipliers=[0.9, 1.2], key_multiplier=0.7,
                 attention_in_multiplier=1.1, attention_out_multiplier=0.6, ssm_multipliers=[1.1, 0.9, 1.2, 0.8, 1.3],
                 ssm_in_multiplier=1.4, ssm_out_multiplier=0.5, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                 mamba_d_ssm=None)  # null: the width is mamba_expand · hidden (transformers' default is 1024)
VARIANTS.update({
    # Falcon-H1: Mamba2 beside attention in every layer, every muP multiplier away from 1, no gated norm
    "falcon_h1": Variant(FALCON_H1, family="FalconH1"),
    # the gated norm, normalizing first; mamba_d_ssm 48 (not expand · hidden) in 6 heads of 3 groups; in_proj
    # biased, out_proj not; attention and MLP biases
    "falcon_h1_norm": Variant({**FALCON_H1, "mamba_rms_norm": True, "mamba_norm_before_gate": True, "mamba_d_ssm": 48,
                               "mamba_n_heads": 6, "mamba_n_groups": 3, "mamba_proj_bias": True,
                               "projectors_bias": False, "attention_bias": True, "mlp_bias": True},
                              family="FalconH1"),
    # the gate before the norm; out_proj biased
    "falcon_h1_gate_first": Variant({**FALCON_H1, "mamba_rms_norm": True, "mamba_norm_before_gate": False,
                                     "projectors_bias": True}, family="FalconH1"),
})
QWEN3_NEXT = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                  linear_key_head_dim=8, linear_value_head_dim=12, linear_conv_kernel_dim=4, num_experts=4,
                  num_experts_per_tok=2, moe_intermediate_size=24, shared_expert_intermediate_size=40,
                  max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
QWEN3_5 = {k: v for k, v in QWEN3_NEXT.items() if not k.startswith(("num_experts", "moe_", "shared_expert"))}
VARIANTS.update({
    # Qwen3-Next: gated delta-nets (2 key heads, each serving 2 value heads; k 8 wide, v 12) and gated
    # attention with a quarter of each head rotated; top-2 of 4 experts beside the gated shared expert
    "qwen3_next": Variant({**QWEN3_NEXT, "layer_types": ["linear_attention", "full_attention", "linear_attention",
                                                         "full_attention"]}, family="Qwen3Next"),
    # the pattern from full_attention_interval (layer_types left out), experts on every layer but
    # layer 1 (mlp_only_layers), the top-k weights not renormalized, attention biases, half of
    # each head rotated, 3 taps
    "qwen3_next_interval": Variant({**QWEN3_NEXT, "full_attention_interval": 2, "decoder_sparse_step": 1,
                                    "mlp_only_layers": [1], "norm_topk_prob": False, "attention_bias": True,
                                    "partial_rotary_factor": 0.5, "linear_conv_kernel_dim": 3},
                                   family="Qwen3Next", no_layer_types=True),
    # Qwen3.5 (text): separate in_proj_qkv / z / b / a, as many key heads as value heads, dense MLPs,
    # transformers' default pattern (the 4th layer attends)
    "qwen3_5": Variant({**QWEN3_5, "linear_num_value_heads": 2, "linear_value_head_dim": 8, "linear_conv_kernel_dim": 3},
                       family="Qwen3_5", config_class="Qwen3_5TextConfig"),
    # Qwen3.5-MoE (text): experts and the gated shared expert in every layer (no dense MLP, no
    # intermediate_size), the router always renormalizing
    "qwen3_5_moe": Variant({k: v for k, v in QWEN3_NEXT.items() if k != "intermediate_size"},
                           family="Qwen3_5Moe", config_class="Qwen3_5MoeTextConfig"),
})
QWEN4_EXP = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                 head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                 linear_value_head_dim=8, linear_conv_kernel_dim=4, num_experts=8, num_experts_per_tok=2,
                 moe_intermediate_size=24, shared_expert_intermediate_size=40, hc_count=3, hc_lowrank=8,
                 ple_layer_ids=[1, 3], ple_embed_dim=16, ple_conv_kernel_size=3, ngram_size=3, heads_per_ngram=2,
                 ngram_vocab_size_base=40, make_ngram_vocab_size_divisible_by=8, split_ngram_parts=4,
                 indexer_n_heads=8, indexer_kv_heads=1, indexer_head_dim=16, indexer_budget=4, indexer_compress_ratio=2,
                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
                 max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=7)


def _qwen4_exp_released(cfg: dict) -> None:
    """Qwen4-Exp's config.json as released: the indexed layers written "full_attention"."""
    cfg["layer_types"] = ["full_attention" if t == "indexed_attention" else t for t in cfg["layer_types"]]


VARIANTS.update({
    # Qwen4-Exp (text): gated residuals over 3 streams (a rank-8 sigmoid mix each), Qwen3.5-MoE's delta-nets and
    # experts, its attention (layer 3: transformers' default pattern) with the QSA indexer (8 heads, blocks of 2, the 2
    # best of them), n-gram layers 0 and 2 (orders 2 and 3, 2 heads each, primes from 40, a 3-tap convolution dilated
    # by 3, the table in 4 shards); EOS 7 (the first prompt's 3rd token: a document boundary for the hashes)
    "qwen4_exp": Variant(dict(QWEN4_EXP), family="Qwen4Exp", config_class="Qwen4ExpTextConfig", embed_std=0.1,
                         linear_gain=2.0),
    # two indexed layers written "full_attention" (as released), blocks of 3 (2 picked), bigrams only (3 heads), the
    # sigmoid output gate, the top-k weights not renormalized, 2 streams of rank 4, attention biases, one shard; the
    # hashes' constants not saved (transformers derives them from config.json: seed 7)
    "qwen4_exp_b": Variant({**QWEN4_EXP, "layer_types": ["linear_attention", "indexed_attention", "linear_attention",
                                                         "indexed_attention"], "ple_layer_ids": [3], "ngram_size": 2,
                            "heads_per_ngram": 3, "ple_embed_dim": 12, "ple_conv_kernel_size": 2, "seed": 7,
                            "split_ngram_parts": 1, "indexer_budget": 6, "indexer_compress_ratio": 3,
                            "output_gate_type": "sigmoid", "norm_topk_prob": False, "hc_count": 2, "hc_lowrank": 4,
                            "attention_bias": True}, family="Qwen4Exp", config_class="Qwen4ExpTextConfig",
                           rewrite=_qwen4_exp_released,
                           drop=("layer_multipliers", "ngram_heads_vocab_sizes", "ngram_heads_offsets")),
})
ZAMBA2 = dict(vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, intermediate_size=40, n_mamba_heads=4,
              mamba_d_state=8, mamba_ngroups=2, chunk_size=4, adapter_rank=4, pad_token_id=0, bos_token_id=1,
              eos_token_id=2)
VARIANTS.update({
    # Zamba2: a Mamba2 mixer in every layer, three hybrid layers taking 2 shared blocks in turn over [x; embeddings]
    # (tied embeddings, its default, tie the blocks too: the third reads the first's weights), heads 16 wide scaled by
    # 8^-0.5, LoRA adapters on q/k/v and gate_up per use, rotary (use_mem_rope)
    "zamba2": Variant({**ZAMBA2, "num_hidden_layers": 6,
                       "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"],
                       "num_mem_blocks": 2, "use_shared_attention_adapter": True, "use_mem_rope": True},
                      family="Zamba2", embed_std=0.2, linear_gain=0.7),
    # untied (each hybrid layer its own block, its unused adapter slots loaded and left), a hybrid layer first, one
    # block, adapters on gate_up alone, no rotary, 2 key/value heads, biased linears
    # (add_bias_linear), intermediate_size null (4 · hidden), 3 taps, expand 3 (heads 24 wide), tanh GELU, the
    # pattern in transformers 4's words
    "zamba2_plain": Variant({**ZAMBA2, "num_hidden_layers": 4, "layers_block_type": ["hybrid", "mamba", "mamba", "hybrid"],
                             "tie_word_embeddings": False,
                             "num_key_value_heads": 2, "add_bias_linear": True, "intermediate_size": None,
                             "mamba_d_conv": 3, "mamba_expand": 3, "hidden_act": "gelu_pytorch_tanh"},
                            family="Zamba2", legacy_block_types=True),
})
MINIMAX = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=24, num_attention_heads=4, num_key_value_heads=2,
               head_dim=8, num_local_experts=4, num_experts_per_tok=2, block_size=4, pad_token_id=0, bos_token_id=1,
               eos_token_id=2, tie_word_embeddings=False)
VARIANTS.update({
    # MiniMax-01: its own pattern (layer_types left out: full attention at even layers, lightning attention at odd
    # ones), lightning blocks of 4 (transformers' prompt path crosses blocks), every residual factor away from 1,
    # top-2 of 4 Mixtral experts
    "minimax": Variant({**MINIMAX, "num_hidden_layers": 4, "full_attn_alpha_factor": 0.9, "full_attn_beta_factor": 1.1,
                        "linear_attn_alpha_factor": 1.2, "linear_attn_beta_factor": 0.8, "mlp_alpha_factor": 0.7,
                        "mlp_beta_factor": 1.3}, family="MiniMax", no_layer_types=True),
    # lightning first and last, a window of 3 on the attention layer, GELU, blocks of 2, the slope buffers left out
    # of the checkpoint (computed as transformers' get_slope_rate does)
    "minimax_window": Variant({**MINIMAX, "num_hidden_layers": 3, "sliding_window": 3, "hidden_act": "gelu",
                               "block_size": 2,
                               "layer_types": ["linear_attention", "full_attention", "linear_attention"]},
                              family="MiniMax", drop=("slope_rate", "query_decay", "key_decay", "diagonal_decay")),
})
KIMI = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, num_attention_heads=4,
            num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8, v_head_dim=8, qk_nope_head_dim=8,
            num_local_experts=4, num_experts_per_tok=2, linear_head_dim=8, linear_num_heads=4, linear_conv_kernel_dim=4,
            pad_token_id=0, bos_token_id=1, eos_token_id=2)
RWKV = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=4, context_length=256, pad_token_id=0, bos_token_id=1,
            eos_token_id=2)
VARIANTS.update({
    # RWKV-4: time mixes (a linear attention per channel) and channel mixes, 4·hidden wide; rescale_every 2 (blocks 2
    # and 3 divided by 2, the stream halved after blocks 1 and 3) made visible by a wide layer_norm_epsilon (a LayerNorm
    # undoes a scale but for its ε)
    "rwkv": Variant({**RWKV, "rescale_every": 2, "layer_norm_epsilon": 0.05}, family="Rwkv"),
    # the time mix 24 wide (attention_hidden_size; transformers' own cache is then hidden wide and fails, so no
    # use_cache: compared stepwise), the channel mix 48, never rescaled
    "rwkv_narrow": Variant({**RWKV, "attention_hidden_size": 24, "intermediate_size": 48,
                            "rescale_every": 0, "use_cache": False}, family="Rwkv"),
    # tied embeddings (compared on logits: a tied random model repeats its last token)
    "rwkv_tied": Variant({**RWKV, "tie_word_embeddings": True}, family="Rwkv"),
})
XLSTM = dict(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2, num_heads=4, pad_token_id=0, bos_token_id=1,
             eos_token_id=2)
VARIANTS.update({
    # xLSTM (xLSTM-7B's form): mLSTM layers of 4 heads (keys 16 wide: qk_dim_factor 0.5, values 32), gates soft-capped at
    # 15, logits at 30, gated MLPs 384 wide (2.667 · hidden rounded up to 64)
    "xlstm": Variant(dict(XLSTM), family="xLSTM"),
    # 3 blocks by num_blocks (which transformers builds, whatever num_hidden_layers says), 2 heads with keys as wide as
    # values (qk_dim_factor 1), an MLP of 1.5 · hidden rounded to 32, caps that bind (5 and 10), the cell's eps 0.5 made
    # visible by norms at 0.1 (the heads' LayerNorm undoes the scale eps puts on a head but for its own ε)
    "xlstm_blocks": Variant({**XLSTM, "hidden_size": 64, "num_blocks": 3, "num_hidden_layers": 5, "num_heads": 2,
                             "qk_dim_factor": 1.0, "ffn_proj_factor": 1.5, "ffn_round_up_to_multiple_of": 32,
                             "gate_soft_cap": 5.0, "output_logit_soft_cap": 10.0, "eps": 0.5, "norm_eps": 0.1},
                            family="xLSTM"),
    # tie_word_embeddings true, which transformers' xLSTM never reads (no tied keys: its lm_head stays its own, saved)
    "xlstm_tied": Variant({**XLSTM, "tie_word_embeddings": True}, family="xLSTM"),
})
BAILING = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, num_attention_heads=4,
               num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8, v_head_dim=8,
               qk_nope_head_dim=8, head_dim=16, num_local_experts=4, num_experts_per_tok=2, n_group=2, topk_group=1,
               short_conv_kernel_size=3, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _bailing_released(cfg: dict) -> None:
    """BailingHybrid's config.json as released: head_dim the delta-nets' width (its config class turns it into
    qk_rope_head_dim before saving, and so cannot read back what it saved), no linear_* keys."""
    cfg["head_dim"] = cfg.pop("linear_head_dim")
    for key in ("linear_num_heads", "linear_conv_kernel_dim"):
        cfg.pop(key)


VARIANTS.update({
    # BailingHybrid (Ling 3): its own pattern (layer_types left out, layer_group_size 2: layers 1 and 3 latent attention
    # with a gate per head, the others Kimi delta attention with full-rank gates and its bounded decay, 16 wide by
    # head_dim), a dense first layer, then V3's router over 4 experts in 2 groups (gate.expert_bias as saved)
    "bailing_hybrid": Variant({**BAILING, "num_hidden_layers": 4, "layer_group_size": 2, "first_k_dense_replace": 1},
                              family="BailingHybrid", no_layer_types=True, rewrite=_bailing_released),
    # the decay unbounded (kda_safe_gate false: Kimi's softplus form), q LoRA, full attention first, every MLP the
    # experts, x 1.5, not renormalised (saved as moe_renormalize), 4 taps
    "bailing_hybrid_plain": Variant({**BAILING, "num_hidden_layers": 3, "kda_safe_gate": False, "q_lora_rank": 16,
                                     "layer_types": ["full_attention", "linear_attention", "linear_attention"],
                                     "mlp_layer_types": ["sparse"] * 3, "routed_scaling_factor": 1.5,
                                     "norm_topk_prob": False,
                                     "short_conv_kernel_size": 4}, family="BailingHybrid", rewrite=_bailing_released),
})


def _kimi_released(cfg: dict) -> None:
    """Kimi-Linear's config.json as released: the pattern and the delta-nets' widths in linear_attn_config (1-based
    layer lists), not layer_types and linear_*."""
    types = cfg.pop("layer_types")
    cfg["linear_attn_config"] = {"full_attn_layers": [i + 1 for i, t in enumerate(types) if t == "full_attention"],
                                 "kda_layers": [i + 1 for i, t in enumerate(types) if t == "linear_attention"],
                                 "head_dim": cfg.pop("linear_head_dim"), "num_heads": cfg.pop("linear_num_heads"),
                                 "short_conv_kernel_size": cfg.pop("linear_conv_kernel_dim")}


VARIANTS.update({
    # Kimi-Linear: its own pattern (layer_types left out: Kimi delta attention, full latent attention at layer 4),
    # KDA's decay per key channel, latent attention without positions (q_proj, no q LoRA), a dense first layer, then
    # V3's router over 4 experts (w1/w3/w2 as saved) beside a shared expert
    "kimi_linear": Variant({**KIMI, "num_hidden_layers": 6}, family="KimiLinear", no_layer_types=True),
    # full attention at layers 0 and 2 as linear_attn_config lists them (1-based), q LoRA, attention biases, every
    # layer's MLP the experts (mlp_layer_types), x 1.5
    "kimi_linear_lora": Variant({**KIMI, "num_hidden_layers": 4, "q_lora_rank": 16, "attention_bias": True,
                                 "routed_scaling_factor": 1.5,
                                 "layer_types": ["full_attention", "linear_attention", "full_attention",
                                                 "linear_attention"], "mlp_layer_types": ["sparse"] * 4},
                                family="KimiLinear", rewrite=_kimi_released),
})


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("hybrid")
    def make(name):
        v = VARIANTS[name]
        torch.manual_seed(0)
        config = getattr(transformers, v.config_class or f"{v.family}Config")(**v.config)
        model = getattr(transformers, f"{v.family}ForCausalLM")(config).eval()
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():  # norms around 1, tables and linears large enough to matter
            for n, p in model.named_parameters():
                if "norm" in n:  # Qwen3-Next's scale by 1 + w: w around 0 (its gated norm's by w)
                    centre = 0 if v.family.startswith(("Qwen3", "Qwen4")) and "linear_attn.norm" not in n else 1
                    p.copy_(centre + 0.2 * torch.randn(p.shape, generator=g))
                elif "embed" in n:  # (Qwen4-Exp's n-gram tables at 1: the streams' start is the token embeddings)
                    p.copy_((1.0 if "ngram_embedding" in n else v.embed_std) * torch.randn(p.shape, generator=g))
                elif n.endswith(("A_log", "dt_bias", ".D", "dt_proj.bias")):  # the decays, steps and skips
                    p.copy_(0.5 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(v.linear_gain * torch.randn(p.shape, generator=g) / p[0].numel() ** 0.5)
            for n, b in model.named_buffers():  # a sigmoid router's correction bias, zero at init
                if n.endswith(("expert_bias", "e_score_correction_bias")):
                    b.copy_(0.3 * torch.randn(b.shape, generator=g))
        model.save_pretrained(root / name)
        if v.rewrite is not None:
            cfg = json.loads((root / name / "config.json").read_text())
            v.rewrite(cfg)
            (root / name / "config.json").write_text(json.dumps(cfg))
        if v.drop:
            from safetensors.torch import load_file, save_file
            tensors = load_file(str(root / name / "model.safetensors"))
            save_file({k: t for k, t in tensors.items() if not k.endswith(v.drop)}, str(root / name / "model.safetensors"),
                      metadata={"format": "pt"})
        if v.pattern is not None:  # Nemotron-H's older configs: the layers as a string
            cfg = json.loads((root / name / "config.json").read_text())
            cfg.pop("layers_block_type")
            cfg["hybrid_override_pattern"] = v.pattern
            (root / name / "config.json").write_text(json.dumps(cfg))
        if v.full_attn_idxs is not None or v.legacy_block_types or v.no_layer_types:
            cfg = json.loads((root / name / "config.json").read_text())
            types = cfg.pop("layer_types") if "layer_types" in cfg else cfg.pop("layers_block_type")
            if v.no_layer_types and "full_attention_interval" in v.config:
                cfg["full_attention_interval"] = v.config["full_attention_interval"]
            elif v.no_layer_types:  # the config class's own pattern (LFM3)
                pass
            elif v.full_attn_idxs is not None:
                cfg["full_attn_idxs"] = list(v.full_attn_idxs)
            else:
                old = {"linear_attention": "mamba", "full_attention": "attention", "hybrid": "hybrid"}
                cfg["layers_block_type"] = [old[t] for t in types]
            (root / name / "config.json").write_text(json.dumps(cfg))
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("hybrid-exports"), ckpt, prefix=("--quiet",))


@pytest.fixture(scope="module")
def reference(ckpt):
    import transformers
    models = {}

    def get(name):
        if name not in models:
            models[name] = transformers.AutoModelForCausalLM.from_pretrained(str(ckpt(name)),
                                                                            attn_implementation="eager").eval()
        return models[name]
    return get


def padded():
    length = max(map(len, PROMPTS))
    ids, mask = decode_loop.left_pad(PROMPTS, 0, length)
    return ids, mask, np.clip(np.cumsum(mask, axis=1) - 1, 0, None)


def test_layers_block_type_written(ckpt):
    """The Granite variant that names its layers by layers_block_type in the older words has no
    layer_types, and transformers reads the same pattern from it."""
    import transformers
    cfg = json.loads((ckpt("granite4_dense") / "config.json").read_text())
    assert "layer_types" not in cfg and cfg["layers_block_type"] == ["attention", "mamba", "mamba"]
    assert transformers.AutoConfig.from_pretrained(str(ckpt("granite4_dense"))).layer_types == \
        VARIANTS["granite4_dense"].config["layer_types"]


def test_full_attn_idxs_written(ckpt):
    """The variant that names its attention layers by full_attn_idxs has no layer_types, and
    transformers reads the same pattern from it."""
    import transformers
    cfg = json.loads((ckpt("lfm2_bias") / "config.json").read_text())
    assert "layer_types" not in cfg and cfg["full_attn_idxs"] == [0, 3]
    assert transformers.AutoConfig.from_pretrained(str(ckpt("lfm2_bias"))).layer_types == \
        VARIANTS["lfm2_bias"].config["layer_types"]


def test_lfm2_moe_expert_bias_is_visible(reference):
    """Harness sanity: LFM2-MoE's expert_bias (a buffer, no config switch) changes which experts transformers
    picks, moving its logits by >> the tolerance when zeroed."""
    import copy
    ids, mask, _ = padded()
    feed = dict(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    model = copy.deepcopy(reference("lfm2_moe"))
    with torch.no_grad():
        base = model(**feed).logits
        for n, b in model.named_buffers():
            if n.endswith("expert_bias"):
                b.zero_()
        diff = (base - model(**feed).logits).abs().max().item()
    assert diff > 100 * 1e-4, diff


def test_lfm3_layer_types_derived(ckpt):
    """The LFM3 variant has no layer_types in config.json: transformers derives conv, sliding and full layers."""
    import transformers
    cfg = json.loads((ckpt("lfm3") / "config.json").read_text())
    assert "layer_types" not in cfg
    assert transformers.AutoConfig.from_pretrained(str(ckpt("lfm3"))).layer_types == \
        ["conv", "conv", "full_attention", "conv", "sliding_attention", "conv"]


@pytest.mark.parametrize("name,overrides", [
    ("lfm3", {"use_attention_gate": False}), ("lfm3", {"use_sandwich_norm": False}), ("lfm3", {"sliding_window": 64}),
    ("lfm3", {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                  "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}}}),
    ("lfm3_plain", {"use_sandwich_norm": True}),
    ("olmo_hybrid", {"linear_allow_neg_eigval": False}),
    ("olmo_hybrid_rope", {"rope_parameters": {"rope_type": "default", "rope_theta": None}}),
    ("nemotron_h_moe", {"n_group": 1, "topk_group": 1}), ("nemotron_h_moe", {"routed_scaling_factor": 1.0}),
    ("zamba2", {"use_shared_attention_adapter": False}), ("zamba2", {"use_mem_rope": False}),
    ("zamba2_plain", {"add_bias_linear": False}),
    ("minimax", {"linear_attn_beta_factor": 1.0}), ("minimax", {"mlp_alpha_factor": 2.0}),
    ("minimax_window", {"sliding_window": None}),
    ("kimi_linear", {"routed_scaling_factor": 1.0}),
    ("rwkv", {"rescale_every": 0}),
    ("xlstm_blocks", {"gate_soft_cap": 15.0}), ("xlstm_blocks", {"output_logit_soft_cap": 30.0}),
    ("xlstm_blocks", {"eps": 1e-6}), ("xlstm_blocks", {"norm_eps": 1e-6}), ("bailing_hybrid_plain", {"norm_topk_prob": True}),
    ("bailing_hybrid", {"kda_safe_gate": False}), ("bailing_hybrid", {"kda_lower_bound": -2.0}),
    ("bailing_hybrid_plain", {"routed_scaling_factor": 1.0}),
    ("qwen4_exp", {"output_gate_type": "sigmoid"}), ("qwen4_exp", {"norm_topk_prob": False}),
    ("qwen4_exp", {"indexer_budget": 64}), ("qwen4_exp", {"indexer_compress_ratio": 4}),
    ("qwen4_exp_b", {"seed": 8}), ("qwen4_exp", {"eos_token_id": 2}),
])
def test_features_are_visible(name, overrides, ckpt, reference):
    """Harness sanity: each switch the newer variants set (LFM3's head gate, sandwich norms, windows and the full layers'
    proportional rotary; OLMo-Hybrid's doubled beta and its rotary; Nemotron-H's expert groups and scale) moves
    transformers' logits by >> the tolerance when flipped."""
    import transformers
    ids, mask, _ = padded()
    feed = dict(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    other = transformers.AutoModelForCausalLM.from_pretrained(str(ckpt(name)), attn_implementation="eager",
                                                              **overrides).eval()
    with torch.no_grad():
        diff = (reference(name)(**feed).logits - other(**feed).logits).abs().max().item()
    assert diff > 100 * 1e-4, diff


def test_falcon_mamba_norms_are_visible(ckpt, reference):
    """Harness sanity: FalconMamba's weight-less norms on dt, B and C move transformers' logits: the same
    checkpoint read as a MambaForCausalLM (no such norms) gives logits farther than 100x the tolerance."""
    import transformers
    ids, mask, _ = padded()
    feed = dict(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    plain = transformers.MambaForCausalLM.from_pretrained(str(ckpt("falcon_mamba"))).eval()
    with torch.no_grad():
        diff = (reference("falcon_mamba")(**feed).logits - plain(**feed).logits).abs().max().item()
    assert diff > 100 * 1e-4, diff


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_logits(name, fmt, export_dir, reference):
    out = export_dir(name, "--format", fmt, "--dynamic")
    ids, mask, pos = padded()
    with torch.no_grad():
        want = reference(name)(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                               position_ids=torch.from_numpy(pos)).logits.numpy()
    feed = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    if fmt == "onnx":
        import onnxruntime as ort
        session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
        inputs = {i.name for i in session.get_inputs()}
        got = session.run(["logits"], {n: v for n, v in feed.items() if n in inputs})[0]
    else:
        import openvino as ov
        compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        inputs = {n for i in compiled.inputs for n in i.get_names()}
        got = np.array(compiled({n: v for n, v in feed.items() if n in inputs})["logits"])
    # Mamba's and Mamba2's forward take no positions: the graph has none
    assert ("position_ids" in inputs) == (VARIANTS[name].family not in ("Mamba", "Mamba2", "FalconMamba", "Rwkv", "xLSTM")), \
        inputs
    assert_logits_close(got, want, f"{name} {fmt}")


@pytest.mark.parametrize("name", ["qwen3_5", "kimi_linear"])
def test_delta_net_repetitive_prompt(name, export_dir, reference):
    """A 64-token prompt of one token repeated (a delta-net's keys then all but parallel, as repeated text's or an
    image's patches are) in one call: transformers' logits at every position. The delta rule's (I + N)⁻¹ is
    computed by recursive block inversion; the product (I + N)(I + N²)(I + N⁴)… it replaced is exact too but lost
    every digit here (N's powers grow past float32 before they vanish)."""
    import onnxruntime as ort
    out = export_dir(name, "--format", "onnx", "--dynamic")
    ids = np.array([[1] + [37] * 63, [1] + [5, 90] * 31 + [5]], np.int64)
    mask = np.ones_like(ids)
    pos = np.broadcast_to(np.arange(64), ids.shape).copy()
    with torch.no_grad():
        want = reference(name)(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                               position_ids=torch.from_numpy(pos)).logits.numpy()
    session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    feed = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    got = session.run(["logits"], {n: v for n, v in feed.items() if n in inputs})[0]
    assert_logits_close(got, want, f"{name} repetitive prompt")


MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "openvino-stateless": ("--config-json", json.dumps({"export_format": "openvino", "dynamic": True,
                                                        "stateful": False})),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    # a static cache: the attention layers' M slots written in place, the recurrent states replaced
    "onnx-static": ("--format", "onnx", "--dynamic", "--cache", "static", "--max-cache-len", "64"),
    "openvino-static": ("--config-json", json.dumps({"export_format": "openvino", "dynamic": True, "stateful": False}),
                        "--cache", "static", "--max-cache-len", "64"),
    "dynamo-static": ("--format", "dynamo", "--dynamic", "--cache", "static", "--max-cache-len", "64"),
    "executorch-static": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 64}}}}),
        "--cache", "static", "--max-cache-len", "64"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "64"),
}
RUNTIMES = {"onnx": "generate_onnx", "openvino": "generate_openvino", "dynamo": "generate_torch",
            "executorch": "generate_executorch"}

CASES = ([(name, m) for name in ("lfm2", "lfm3", "nemotron_h", "olmo_hybrid", "recurrent_gemma", "mamba2", "mamba", "granite4", "falcon_h1", "qwen3_next",
                                 "jamba", "zamba2", "minimax", "rwkv", "bailing_hybrid", "xlstm", "qwen4_exp")
          for m in MODES]
         + [(name, m) for name in ("recurrent_gemma_bias", "olmo_hybrid_rope", "nemotron_h_moe", "lfm3_plain", "lfm2_moe", "lfm2_moe_plain", "bamba", "bamba_bias", "jamba_bias", "lfm2_bias", "mamba2_g1", "mamba_bias", "granite4_dense",
                                   "falcon_h1_norm",
                                   "falcon_h1_gate_first", "qwen3_next_interval", "qwen3_5", "qwen3_5_moe", "zamba2_plain",
                                   "kimi_linear_lora", "bailing_hybrid_plain", "xlstm_blocks", "qwen4_exp_b",
                                   # sampled: their blocks run every mode above (FalconMamba's mixer is Mamba's with
                                   # three weight-less norms; Kimi-Linear's delta rule and latent attention are
                                   # BailingHybrid's, its low-rank gates two linears each)
                                   "falcon_mamba", "kimi_linear")
            for m in ("onnx-mtd", "openvino")]
         + [("qwen3_5", m) for m in ("onnx-static", "openvino-static", "dynamo", "executorch")]
         + [(name, m) for name in ("minimax_window", "rwkv_narrow") for m in ("onnx-mtd", "openvino")])

# Compared with transformers' forward over the whole sequence at each step (want_stepwise), not with its generate(),
# which is wrong for them: MiniMax with a lightning layer first (generate takes the cache's length from layer 0, which
# a lightning layer never fills, so its steps mask and place the token as if nothing came before); RWKV with a batch
# (its one-token step broadcasts the [B,H] token shift against the [B,1,H] input: [B,B,vocab] logits, every row
# reading the last row's shift) and with attention_hidden_size ≠ hidden_size (its cache is hidden wide and fails).
STEPWISE = {"minimax_window", "rwkv", "rwkv_narrow"}


def want_generation(reference, name):
    ids, mask, _ = padded()
    with torch.no_grad():
        out = reference(name).generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                                       max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                                       return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


def run_loop(out, mode, tmp_path):
    """The examples' greedy loop on the export: in this process, or (ExecuTorch) in its venv."""
    fmt = decode_loop.read_manifest(out)["export_format"]
    if fmt != "executorch":
        runtime = __import__(RUNTIMES[fmt])
        eos, pad = decode_loop.read_generation_config(out)
        return runtime.generate(runtime.Export(out), PROMPTS, NEW_TOKENS, eos, pad)
    import subprocess
    import etutil
    logits_file = tmp_path / "logits.npz"
    proc = subprocess.run([str(etutil.PYTHON), str(REPO / "examples" / "generate_executorch.py"), str(out),
                           "--input-ids", ";".join(",".join(map(str, p)) for p in PROMPTS),
                           "--max-new-tokens", str(NEW_TOKENS), "--print-logits", str(logits_file)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with np.load(logits_file) as npz:
        return npz["tokens"], npz["logits"]


@pytest.mark.parametrize("name,mode", CASES)
def test_generation(name, mode, export_dir, reference, tmp_path):
    out = export_dir(name, "--for-generation", *MODES[mode])
    want_tokens, want_logits = (want_stepwise if name in STEPWISE else want_generation)(reference, name)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = run_loop(out, mode, tmp_path)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


def want_stepwise(reference, name):
    """Greedy decoding by transformers' forward over the whole sequence so far at each step, no cache (rows past
    their end of sequence fed the pad token, as generate() does): tokens [B, steps], logits [steps, B, vocab]."""
    ids, mask, _ = padded()
    seq, m = torch.from_numpy(ids), torch.from_numpy(mask)
    done = torch.zeros(len(seq), dtype=torch.bool)
    tokens, logits = [], []
    with torch.no_grad():
        for _ in range(NEW_TOKENS):
            pos = (m.cumsum(-1) - 1).clamp(min=0)
            out = reference(name)(seq, attention_mask=m, position_ids=pos, use_cache=False).logits[:, -1]
            nxt = torch.where(done, torch.tensor(0), out.argmax(-1))
            done |= nxt == 2
            tokens.append(nxt), logits.append(out)
            seq, m = torch.cat([seq, nxt[:, None]], 1), torch.cat([m, torch.ones_like(m[:, :1])], 1)
            if done.all():
                break
    return torch.stack(tokens, 1).numpy(), torch.stack(logits).numpy()


def test_rwkv_stepwise_is_generate_alone(reference):
    """Harness sanity for STEPWISE: on a prompt alone (no batch, so no broadcast), transformers' generate() for RWKV
    gives the tokens and logits of its forward over the whole sequence at each step — the row of the stepwise reference
    whose prompt has no padding."""
    want_tokens, want_logits = want_stepwise(reference, "rwkv")
    with torch.no_grad():
        out = reference("rwkv").generate(torch.tensor([PROMPTS[0]]), max_new_tokens=NEW_TOKENS, do_sample=False,
                                         output_logits=True, return_dict_in_generate=True)
    tokens = out.sequences[0, len(PROMPTS[0]):].numpy()
    assert np.array_equal(tokens, want_tokens[0, :len(tokens)]), (tokens, want_tokens[0])
    steps = min(len(out.logits), len(want_logits))
    assert np.abs(torch.stack(out.logits)[:steps, 0].numpy() - want_logits[:steps, 0]).max() < 1e-4


def test_state_inputs(export_dir):
    """The convolution layers' state is past.{i}.conv [batch, hidden, kernel − 1] in, present.{i}.conv
    out (onnxruntime-genai's names); the attention layer's cache is past_key_values.{i}.*; the
    metadata describes both, and genai_config.json maps them with genai's LFM2 pattern."""
    import onnx
    out = export_dir("lfm2", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    for layer in (0, 2, 3):
        assert dims[f"past.{layer}.conv"][1:] == [32, 2], dims
    assert "past_key_values.1.key" in dims and "past.1.conv" not in dims
    assert {o.name for o in graph.output} >= {"present.0.conv", "present.1.key", "present.3.conv"}
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[0] == {"conv": [32, 2]} and layers[1]["heads"] == 2
    decoder = json.loads((out / "genai_config.json").read_text())["model"]["decoder"]
    assert decoder["inputs"]["past_conv_names"] == "past.%d.conv" and decoder["conv_cache_size"] == 2
    assert decoder["layer_types"] == ["conv", "full_attention", "conv", "conv"]


@pytest.mark.parametrize("name", ["lfm2", "mamba2", "mamba2_g1", "mamba", "mamba_bias", "granite4", "falcon_h1",
                                  "qwen3_next", "qwen3_5", "rwkv", "xlstm"])
def test_prompt_in_pieces(name, export_dir, reference):
    """A prompt fed in two calls of the multi-token decode graph, the second continuing from the
    first's states (a chunked prefill: how a long prompt can be fed piece by piece), gives
    transformers' logits for the whole prompt at the second piece's positions."""
    import onnxruntime as ort
    out = export_dir(name, "--for-generation", *MODES["onnx-mtd"])
    session = ort.InferenceSession(str(out / "decode.onnx"), providers=["CPUExecutionProvider"])
    ids, mask, pos = padded()
    cut = 5
    with torch.no_grad():
        want = reference(name)(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                               position_ids=torch.from_numpy(pos)).logits.numpy()[:, cut:]
    feed = {}
    for i in session.get_inputs():  # empty caches and zero states before the first piece
        if decode_loop.is_state(i.name) or i.name.startswith("past_key_values."):
            shape = [len(PROMPTS) if k == 0 else 0 if not isinstance(d, int) else d for k, d in enumerate(i.shape)]
            feed[i.name] = np.zeros(shape, np.float32)
    names = [o.name for o in session.get_outputs()]
    inputs = {i.name for i in session.get_inputs()}
    got = None
    for lo, hi in ((0, cut), (cut, ids.shape[1])):
        step = {"input_ids": ids[:, lo:hi], "attention_mask": mask[:, :hi], "position_ids": pos[:, lo:hi], **feed}
        result = dict(zip(names, session.run(None, {n: v for n, v in step.items() if n in inputs})))
        feed = {n: result[decode_loop.present_of(n)] for n in feed}
        got = result["logits"]
    assert_logits_close(got, want, f"{name} in two pieces")


def test_mamba2_state_inputs(export_dir):
    """A Mamba2 layer's states: past.{i}.conv [batch, conv_dim, kernel − 1] (x, B and C go through the
    convolution: expand·hidden + 2·n_groups·d_state channels) and past.{i}.ssm [batch, heads,
    head_dim, d_state] in f32, replaced by present.{i}.*; no attention cache, no position_ids."""
    import onnx
    out = export_dir("mamba2", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    f32 = onnx.TensorProto.FLOAT
    types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
    assert set(dims) == {"input_ids", "attention_mask", "past.0.conv", "past.0.ssm", "past.1.conv", "past.1.ssm"}, dims
    assert dims["past.1.conv"][1:] == [64 + 2 * 2 * 16, 3] and dims["past.1.ssm"][1:] == [8, 8, 16], dims
    assert types["past.0.ssm"] == f32
    assert {o.name for o in graph.output} == {"logits", "present.0.conv", "present.0.ssm", "present.1.conv",
                                              "present.1.ssm"}
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers == [{"conv": [128, 3], "ssm": [8, 8, 16]}] * 2


def test_mamba2_older_embedding_name(ckpt, tmp_path, reference):
    """Checkpoints that name the table backbone.embedding.weight (transformers' load hook renames it)
    export the same model."""
    import shutil
    from safetensors.numpy import load_file, save_file
    src = tmp_path / "ckpt"
    shutil.copytree(ckpt("mamba2"), src)
    tensors = load_file(str(src / "model.safetensors"))
    tensors["backbone.embedding.weight"] = tensors.pop("backbone.embeddings.weight")
    save_file(tensors, str(src / "model.safetensors"), metadata={"format": "pt"})
    out = tmp_path / "out"
    proc = run_hfx(["export", src, out, "--format", "onnx", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    import onnxruntime as ort
    ids, mask, _ = padded()
    got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["logits"], {"input_ids": ids, "attention_mask": mask})[0]
    with torch.no_grad():
        want = reference("mamba2")(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
    assert_logits_close(got, want, "mamba2 older embedding name")


@pytest.fixture(scope="module")
def seed_dynamo_exports(tmp_path_factory, ckpt):
    """transformers.exporters' own DynamoExporter export of a variant, per cache mode (made once)."""
    from seedutil import seed_exporter
    return seed_exporter(tmp_path_factory, ckpt, "dynamo")


# LFM2: a convolution state alone; Mamba2: convolution and SSM states; Falcon-H1: both beside attention in one layer
# (transformers' LinearAttentionAnd[Static]FullAttentionLayer); Qwen3-Next and Granite 4.0: recurrent and attention
# layers apart; Nemotron-H: MLP layers that cache nothing too (transformers' DummyLayer)
@pytest.mark.parametrize("name,mode", [("lfm2", "dynamic"), ("mamba2", "static"), ("mamba2", "dynamic"), ("mamba", "dynamic"),
                                       ("falcon_h1", "dynamic"), ("qwen3_next", "dynamic"), ("qwen3_5", "dynamic"),
                                       ("granite4", "dynamic"), ("nemotron_h", "dynamic")])
def test_seed_dynamo(name, mode, ckpt, reference, seed_dynamo_exports, tmp_path):
    """io "seed" in torch.export: prefill.pt2 and decode.pt2 called as the seed's DynamoExporter programs are, each
    recurrent layer a transformers LinearAttentionLayer (its conv_states / recurrent_states dicts, kernel and dtype)
    in the cache object — the same input and output specs, user inputs and argument names as the seed's own export
    of the same model — and, run through those cache objects, generate's 24 greedy tokens."""
    from seedutil import hfx_seed_export, pt2_call, pt2_prefill_then_decode
    seed = seed_dynamo_exports(name, mode)
    ours = hfx_seed_export(ckpt(name), tmp_path / "hfx", "dynamo", mode)
    for comp in ("prefill", "decode"):
        got, want = pt2_call(ours / f"{comp}.pt2"), pt2_call(seed / f"{comp}.pt2")
        for key in want:
            assert got[key] == want[key], f"{comp}: {key}"
    prompt = torch.tensor([PROMPTS[0]])
    with torch.no_grad():
        want = reference(name).generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=24,
                                        min_new_tokens=24, do_sample=False)[0, prompt.shape[1]:].tolist()
    assert pt2_prefill_then_decode(ours, prompt, 24, mode == "static") == want


@pytest.mark.parametrize("name", ["lfm2", "falcon_h1"])
def test_seed_dynamo_static_beside_attention_refused(name, ckpt, tmp_path):
    """A static cache over recurrent layers beside attention (LFM2's "conv" layers, Falcon-H1's hybrid ones): the
    seed's mask is then a dict per layer type, the recurrent ones' too, keyed in a Python set's order; refused by
    name, nothing written."""
    from seedutil import MODES
    cfg = json.dumps({"export_format": "dynamo", "dynamic": True, "io": "seed"})
    refused(name, ("--for-generation", "--config-json", cfg, *MODES["static"][0]), "layer_types", ckpt, tmp_path)


@pytest.mark.parametrize("name,message", [("zamba2", "io \"seed\" has no names for the hybrid layers' caches"),
                                          ("minimax", "io \"seed\" has no names for the lightning attention layers'"),
                                          ("rwkv", "io \"seed\" has no names for RWKV's states"),
                                          ("xlstm", "io \"seed\" has no names for the mLSTM layers' states"),
                                          ("qwen4_exp", "io \"seed\" has no names for the n-gram layers' states"),
                                          ("qwen4_exp_b", "io \"seed\" has no names for the QSA indexer's cache")])
def test_seed_refused(name, message, ckpt, tmp_path):
    """io "seed" has no names yet for a Zamba2 hybrid layer's caches or a lightning layer's state: refused by name,
    exit 2, nothing written."""
    refused(name, ("--for-generation", "--format", "onnx", "--dynamic", "--io", "seed"), message, ckpt, tmp_path)


def refused(name, flags, message, ckpt, tmp_path):
    out = tmp_path / "out"
    flags = list(flags)
    if "--config-json" in flags:
        i = flags.index("--config-json")
        cfg = tmp_path / "cfg.json"
        cfg.write_text(flags[i + 1])
        flags[i:i + 2] = ["--config", str(cfg)]
    proc = run_hfx(["export", ckpt(name), out, *flags])
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not out.exists()


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(layer_types=["conv", "full_attention"]), "layer_types' must be a list of num_hidden_layers"),
    (lambda c: c.update(layer_types=["conv", 7, "conv", "conv"]), "layer_types[1] = '(not a string)'"),
    (lambda c: c.update(layer_types=["conv", "sliding_attention", "conv", "conv"]),
     "layer_types[1] = 'sliding_attention'"),
    (lambda c: c.update(conv_L_cache=1), "conv_L_cache"),
    (lambda c: (c.pop("layer_types"), c.update(full_attn_idxs="all")), "full_attn_idxs"),
])
def test_bad_config(edit, message, ckpt, tmp_path):
    """A config that names other layer kinds, or malformed ones: a clear error, exit 2, no output."""
    bad_config("lfm2", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(num_heads=6), "expand · hidden_size (64) must equal num_heads · head_dim"),
    (lambda c: c.update(n_groups=3), "num_heads (8) is not a multiple of n_groups (3)"),
    (lambda c: c.update(conv_kernel=1), "conv_kernel"),
    (lambda c: c.update(time_step_limit=[0.0]), "time_step_limit' must be two numbers"),
    (lambda c: c.update(time_step_limit=[2.0, 1.0]), "time_step_limit' is not a range"),
    (lambda c: c.update(hidden_act="swoosh"), "hidden_act 'swoosh'"),
])
def test_mamba2_bad_config(edit, message, ckpt, tmp_path):
    """Mamba2 configs transformers would refuse or hfx cannot honour: a clear error, exit 2, no output."""
    bad_config("mamba2", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(attn_layer_offset=2), "attn_layer_offset"),
    (lambda c: c.update(expert_layer_period=0), "expert_layer_period"),
    (lambda c: c.update(mamba_dt_rank="big"), "mamba_dt_rank 'big'"),
])
def test_jamba_bad_config(edit, message, ckpt, tmp_path):
    """Jamba configs transformers would refuse or hfx cannot honour: a clear error, exit 2, no output."""
    bad_config("jamba", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(attn_layer_indices=[1, 3]), "attn_layer_indices[1] is not a layer index in [0, 3)"),
    (lambda c: c.update(attn_layer_indices="1"), "attn_layer_indices' must be a list"),
    (lambda c: c.update(mlp_bias="yes"), "mlp_bias"),
])
def test_bamba_bad_config(edit, message, ckpt, tmp_path):
    """Bamba configs transformers would refuse or hfx cannot honour: a clear error, exit 2, no output."""
    bad_config("bamba", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(layer_types=["linear_attention", "sliding_attention", "linear_attention"]),
     "layer_types[1] = 'sliding_attention'"),
    (lambda c: c.update(layer_types=["mamba", "attention"]), "layer_types' must be a list of num_hidden_layers (3)"),
    (lambda c: c.update(mamba_n_groups=3), "mamba_n_heads (8) is not a multiple of mamba_n_groups (3)"),
    (lambda c: c.update(mamba_d_head=7), "must equal mamba_n_heads · mamba_d_head"),
    (lambda c: c.update(position_embedding_type=3), "position_embedding_type"),
])
def test_granite4_bad_config(edit, message, ckpt, tmp_path):
    """Granite 4.0 configs naming other layer kinds or inconsistent Mamba sizes: exit 2, no output."""
    bad_config("granite4", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(ssm_multipliers=[1.0, 1.0]), "ssm_multipliers' must be five numbers"),
    (lambda c: c.update(mlp_multipliers=[1.0, "x"]), "mlp_multipliers' must be 2 numbers"),
    (lambda c: c.update(mamba_d_ssm=40), "mamba_d_ssm (40) must equal mamba_n_heads · mamba_d_head"),
    (lambda c: c.update(mamba_d_ssm=0), "mamba_d_ssm"),
])
def test_falcon_h1_bad_config(edit, message, ckpt, tmp_path):
    """Falcon-H1 configs with malformed multipliers or inconsistent Mamba sizes: exit 2, no output."""
    bad_config("falcon_h1", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(time_step_rank="big"), "time_step_rank 'big'"),
    (lambda c: c.update(conv_kernel=100), "conv_kernel"),
    (lambda c: c.update(expand=-1), "expand -1 is out of range"),
])
def test_mamba_bad_config(edit, message, ckpt, tmp_path):
    """Mamba configs hfx cannot honour: exit 2, the field named, no output."""
    bad_config("mamba", edit, message, ckpt, tmp_path)


def test_mamba_state_inputs(export_dir):
    """A Mamba layer's states: past.{i}.conv [batch, inner, kernel − 1] and past.{i}.ssm [batch,
    inner, d_state] (f32), its inner expand · hidden."""
    import onnx
    out = export_dir("mamba_bias", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    assert dims["past.2.conv"][1:] == [96, 2] and dims["past.2.ssm"][1:] == [96, 4], dims
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers == [{"conv": [96, 2], "ssm": [96, 4]}] * 3


def test_falcon_h1_state_inputs(export_dir):
    """A Falcon-H1 layer keeps both: its attention's past_key_values.{i}.* and its Mamba2 states
    past.{i}.conv / past.{i}.ssm; the metadata's layer has the heads and the states."""
    import onnx
    out = export_dir("falcon_h1", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    names = {i.name for i in graph.input}
    for layer in (0, 1):
        assert {f"past_key_values.{layer}.key", f"past_key_values.{layer}.value", f"past.{layer}.conv",
                f"past.{layer}.ssm"} <= names, names
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[0]["heads"] == 2 and layers[0]["conv"] == [64 + 2 * 2 * 16, 3] and layers[0]["ssm"] == [8, 8, 16]


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(layers_block_type=["mamba", "attention", "mamba", "hybrid", "mamba", "hybrid"]),
     "layers_block_type[1] = 'attention'"),
    (lambda c: c.update(num_key_value_heads=2), "use_shared_attention_adapter adds adapters 2·hidden_size (64) wide"),
    (lambda c: c.update(n_mamba_heads=3), "mamba_expand · hidden_size (64) must equal n_mamba_heads"),
    (lambda c: c.update(num_mem_blocks=0), "num_mem_blocks"),
])
def test_zamba2_bad_config(edit, message, ckpt, tmp_path):
    """Zamba2 configs that name other layer kinds, or adapters transformers could not add: exit 2, no output."""
    bad_config("zamba2", edit, message, ckpt, tmp_path)


def test_zamba2_hybrid_layer_states(export_dir):
    """A Zamba2 hybrid layer keeps its shared block's keys and values (its own: the blocks share weights, not caches)
    and its Mamba2 states; a Mamba2 layer its states alone."""
    import onnx
    out = export_dir("zamba2", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    for layer in (1, 3, 5):
        assert dims[f"past_key_values.{layer}.key"][1] == 4 and dims[f"past_key_values.{layer}.key"][3] == 16, dims
        assert dims[f"past.{layer}.ssm"][1:] == [4, 16, 8], dims
    assert "past_key_values.0.key" not in dims and dims["past.0.conv"][1:] == [64 + 2 * 2 * 8, 3], dims


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(layer_types=["full_attention", "sliding_attention", "full_attention", "linear_attention"]),
     "layer_types[1] = 'sliding_attention' (supported: linear_attention, full_attention)"),
    (lambda c: c.update(mlp_beta_factor="x"), "mlp_beta_factor"),
    (lambda c: c.update(block_size=0), "block_size"),
])
def test_minimax_bad_config(edit, message, ckpt, tmp_path):
    """MiniMax configs naming other layer kinds or malformed factors: exit 2, the field named, no output."""
    bad_config("minimax", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(attention_hidden_size=0), "attention_hidden_size"),
    (lambda c: c.update(intermediate_size="wide"), "intermediate_size"),
    (lambda c: c.update(rescale_every=1.5), "rescale_every"),
    (lambda c: c.pop("hidden_size"), "hidden_size"),
])
def test_rwkv_bad_config(edit, message, ckpt, tmp_path):
    """RWKV configs with malformed widths or rescaling: exit 2, the field named, no output."""
    bad_config("rwkv", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(kda_lower_bound=1.0), "kda_lower_bound 1 must be negative"),
    (lambda c: c.update(layer_types=["linear_attention", "mamba", "linear_attention", "full_attention"]),
     "layer_types[1] = 'mamba'"),
    (lambda c: c.update(short_conv_kernel_size=1), "short_conv_kernel_size"),
])
def test_bailing_hybrid_bad_config(edit, message, ckpt, tmp_path):
    """BailingHybrid configs with a decay floor above 0, other layer kinds or a one-tap convolution: exit 2, the field
    named, no output."""
    bad_config("bailing_hybrid", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(weight_mode="fused"), "weight_mode 'fused' (supported: single)"),
    (lambda c: c.update(use_bias=True), "use_bias true"),
    (lambda c: c.update(num_heads=3), "not multiples of num_heads (3)"),
    (lambda c: c.update(ffn_proj_factor=-1.0), "ffn_proj_factor"),
])
def test_xlstm_bad_config(edit, message, ckpt, tmp_path):
    """xLSTM configs in a form hfx does not write yet (fused weights, biased norms) or malformed: exit 2, the field
    named, no output."""
    bad_config("xlstm", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("name", ["nemotron_h", "kimi_linear", "bailing_hybrid"])
def test_never_tied(name, ckpt, tmp_path):
    """Classes without tied keys (Nemotron-H, Kimi-Linear, BailingHybrid; xLSTM's spec is xlstm_tied): transformers
    keeps their lm_head its own whatever tie_word_embeddings says, and so does hfx — config.json saying true, the logits
    are transformers' within 1e-4."""
    import shutil
    import onnxruntime as ort
    import transformers
    src = tmp_path / "ckpt"
    shutil.copytree(ckpt(name), src)
    cfg = json.loads((src / "config.json").read_text())
    cfg["tie_word_embeddings"] = True
    (src / "config.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = run_hfx(["export", src, out, "--format", "onnx", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(src), attn_implementation="eager").eval()
    assert model.lm_head.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr()
    ids, mask, pos = padded()
    with torch.no_grad():
        want = model(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), position_ids=torch.from_numpy(pos)).logits
    session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    got = session.run(["logits"], {i.name: feed[i.name] for i in session.get_inputs()})[0]
    assert_logits_close(got, want.numpy(), f"{name} tie_word_embeddings true")


def test_xlstm_long_prompt(export_dir, reference):
    """A 70-token prompt, which transformers runs through its chunkwise kernel (a chunk of 64, its own stabilizer per
    chunk) and then its recurrence: hfx's closed form gives its logits within 1e-4."""
    import onnxruntime as ort
    out = export_dir("xlstm", "--format", "onnx", "--dynamic")
    ids = np.random.default_rng(0).integers(3, VOCAB, (2, 70))
    with torch.no_grad():
        want = reference("xlstm")(torch.from_numpy(ids)).logits.numpy()
    got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["logits"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
    assert_logits_close(got, want, "xlstm 70 tokens")


def test_xlstm_state(export_dir):
    """An mLSTM layer keeps one state, past.{i}.ssm [batch, heads, DK + 1, DV + 1] f32: the cell's memory with its
    normalizer as a last column and its stabilizer in a last row; no positions."""
    import onnx
    out = export_dir("xlstm", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    assert dims["past.0.ssm"][1:] == [4, 17, 33] and dims["past.1.ssm"][1:] == [4, 17, 33], dims
    assert "past.0.conv" not in dims and "position_ids" not in dims, dims


def test_rwkv_states(export_dir):
    """An RWKV layer keeps two states: past.{i}.conv [batch, 2, hidden] (the time mix's and the channel mix's last
    inputs) and past.{i}.ssm [batch, 3, attention_hidden_size] f32 (the WKV sums num, den and their max); no attention
    cache, no positions, and the metadata says so."""
    import onnx
    out = export_dir("rwkv_narrow", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    for layer in range(4):
        assert dims[f"past.{layer}.conv"][1:] == [2, 32] and dims[f"past.{layer}.ssm"][1:] == [3, 24], dims
    assert not any(n.startswith("past_key_values") for n in dims) and "position_ids" not in dims, dims
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[0] == {"conv": [2, 32], "ssm": [3, 24]}, layers


def test_minimax_lightning_state(export_dir):
    """A lightning attention layer keeps one state, past.{i}.ssm [batch, heads, head_dim, head_dim] (no convolution);
    the attention layers their keys and values."""
    import onnx
    out = export_dir("minimax", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    assert dims["past.1.ssm"][1:] == [4, 8, 8] and dims["past.3.ssm"][1:] == [4, 8, 8], dims
    assert "past.1.conv" not in dims and "past_key_values.1.key" not in dims and "past_key_values.0.key" in dims
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[1] == {"ssm": [4, 8, 8]} and layers[0]["heads"] == 2


def bad_config(name, edit, message, ckpt, tmp_path):
    import shutil
    src = tmp_path / "ckpt"
    shutil.copytree(ckpt(name), src)
    cfg = json.loads((src / "config.json").read_text())
    edit(cfg)
    (src / "config.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = run_hfx(["export", src, out, "--format", "onnx", "--for-generation", "--dynamic"])
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not out.exists()


def test_layer_pattern_written(ckpt):
    """The Qwen3-Next variant without layer_types: transformers makes every full_attention_interval-th
    layer attend, and so does hfx (its logits are compared above)."""
    import transformers
    cfg = json.loads((ckpt("qwen3_next_interval") / "config.json").read_text())
    assert "layer_types" not in cfg and cfg["full_attention_interval"] == 2
    assert transformers.AutoConfig.from_pretrained(str(ckpt("qwen3_next_interval"))).layer_types == \
        ["linear_attention", "full_attention"] * 2


@pytest.mark.parametrize("name", ["qwen3_next", "qwen3_5"])
def test_delta_long_prompt(name, export_dir, reference):
    """One call over a 150-token prompt (transformers' chunked rule: three chunks of 64) gives its
    logits: the in-graph inverse of the chunk's triangular system is exact past 64 tokens."""
    import onnxruntime as ort
    out = export_dir(name, "--format", "onnx", "--dynamic")
    rng = np.random.default_rng(3)
    ids = rng.integers(3, VOCAB, size=(2, 150))
    mask = np.ones_like(ids)
    mask[1, :17] = 0  # the second row left-padded
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    with torch.no_grad():
        want = reference(name)(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                               position_ids=torch.from_numpy(pos)).logits.numpy()
    got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["logits"], {"input_ids": ids, "attention_mask": mask, "position_ids": pos})[0]
    assert_logits_close(got, want, f"{name} 150 tokens")


def test_delta_state_inputs(export_dir):
    """A gated delta-net layer's states: past.{i}.conv [batch, 2·key heads·k + value heads·v, kernel − 1]
    (q, k and v go through the convolution) and past.{i}.ssm [batch, value heads, k, v] in f32, next
    to the attention layers' cache; the decode metadata says the prompt piece, 64."""
    import onnx
    out = export_dir("qwen3_next", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
    assert dims["past.0.conv"][1:] == [2 * 2 * 8 + 4 * 12, 3] and dims["past.2.ssm"][1:] == [4, 8, 12], dims
    assert types["past.2.ssm"] == onnx.TensorProto.FLOAT
    assert "past_key_values.1.key" in dims and "past.1.conv" not in dims and "past_key_values.0.key" not in dims
    meta = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]
    assert meta["cache"]["layers"][0] == {"conv": [80, 3], "ssm": [4, 8, 12]} and meta["cache"]["layers"][1]["heads"] == 2
    assert meta["prompt_piece"] == 64


@pytest.mark.parametrize("name,piece", [("mamba2", 4), ("mamba", 16), ("granite4", 4), ("falcon_h1", 4),
                                        ("lfm2", None)])
def test_prompt_piece_written(name, piece, export_dir):
    """The exporter writes each recurrent model's prompt piece (its scan's chunk) where the examples'
    loops read it: Mamba2's chunk_size, a hybrid's mamba_chunk_size, Mamba's 16; none for LFM2."""
    out = export_dir(name, "--for-generation", *MODES["onnx-mtd"])
    meta = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]
    assert meta.get("prompt_piece") == piece


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(linear_num_value_heads=3), "linear_num_value_heads (3) is not a multiple of linear_num_key_heads"),
    (lambda c: c.update(layer_types=["linear_attention", "mamba", "linear_attention", "full_attention"]),
     "layer_types[1] = 'mamba'"),
    (lambda c: c.update(linear_conv_kernel_dim=1), "linear_conv_kernel_dim"),
    (lambda c: (c.pop("layer_types"), c.update(full_attention_interval=0)), "full_attention_interval"),
])
def test_qwen3_next_bad_config(edit, message, ckpt, tmp_path):
    """Qwen3-Next configs with inconsistent delta-net heads or other layer kinds: exit 2, no output."""
    bad_config("qwen3_next", edit, message, ckpt, tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(ple_layer_ids=[4]), "ple_layer_ids[0] = 4 is not a linear_attention layer"),
    (lambda c: c.update(ple_layer_ids=[0]), "ple_layer_ids[0] must be a 1-based layer id in [1, 4]"),
    (lambda c: c.update(ple_embed_dim=10), "ple_embed_dim (10) is not a multiple of the n-gram heads"),
    (lambda c: c.update(eos_token_id=None), "eos_token_id must be a token id"),
    (lambda c: c.update(ple_conv_kernel_size=1), "ple_conv_kernel_size"),
    (lambda c: c.update(ngram_size=1), "ngram_size"),
    (lambda c: c.update(indexer_kv_heads=2), "indexer_kv_heads must be 1"),
    (lambda c: c.update(indexer_budget=5), "indexer_budget (5) is not a multiple of indexer_compress_ratio (2)"),
    (lambda c: c.pop("indexer_head_dim"), "indexer_head_dim must be set"),
    (lambda c: c.update(indexer_head_dim=4), "do not fit the indexer's heads"),
    (lambda c: c.update(output_gate_type="gelu"), "output_gate_type 'gelu'"),
    (lambda c: c.update(hc_count=1), "hc_count"),
    (lambda c: c.update(layer_types=["linear_attention", "sliding_attention", "linear_attention", "indexed_attention"]),
     "layer_types[1] = 'sliding_attention'"),
    (lambda c: c.update(ngram_vocab_size_base=60), "ngram_embedding"),
])
def test_qwen4_exp_bad_config(edit, message, ckpt, tmp_path):
    """Qwen4-Exp configs transformers refuses (n-gram layers on attention layers, heads that do not divide the
    embeddings, no EOS, a second indexer key head, a budget of partial blocks, a rotary wider than the indexer's heads),
    or whose tables the checkpoint does not hold: exit 2, no output."""
    bad_config("qwen4_exp", edit, message, ckpt, tmp_path)


def test_qwen4_exp_states(export_dir):
    """An n-gram layer's states beside its delta-net's: past.{i}.ple_conv [batch, streams·hidden, (taps − 1)·ngram_size]
    and past.{i}.ngram [batch, ngram_size − 1] int32 (the ids less EOS); the indexed layer's index key holds its raw keys
    and their positions, [batch, 1, T, indexer_head_dim + 1] f32; the metadata says each."""
    import onnx
    out = export_dir("qwen4_exp", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
    assert dims["past.0.ple_conv"][1:] == [3 * 32, 6] and dims["past.2.ngram"][1:] == [2], dims
    assert types["past.2.ngram"] == onnx.TensorProto.INT32 and "past.1.ngram" not in dims
    assert dims["past_key_values.3.index_key"][1::2] == [1, 17] and types["past_key_values.3.index_key"] == onnx.TensorProto.FLOAT
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[0] == {"conv": [2 * 2 * 8 + 4 * 8, 3], "ssm": [4, 8, 8], "ple_conv": [96, 6], "ngram": [2]}, layers[0]
    assert layers[1] == {"conv": [64, 3], "ssm": [4, 8, 8]} and layers[3]["index_dim"] == 17
    assert not (out / "genai_config.json").exists()


def test_qwen4_exp_documents(export_dir, reference):
    """The n-gram hashes restart after each EOS (7 here) and see EOS before a sequence's start: a batch whose rows hold
    EOS at several places, one of them a row's first token, gives transformers' logits."""
    import onnxruntime as ort
    out = export_dir("qwen4_exp", "--format", "onnx", "--dynamic")
    ids = np.array([[7, 30, 31, 7, 7, 32, 33, 34, 35], [0, 0, 40, 41, 42, 7, 43, 44, 7], [50, 51, 52, 53, 7, 54, 55, 56, 57]])
    mask = (ids != 0).astype(np.int64)
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    with torch.no_grad():
        want = reference("qwen4_exp")(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                                      position_ids=torch.from_numpy(pos)).logits.numpy()
    got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["logits"], {"input_ids": ids, "attention_mask": mask, "position_ids": pos})[0]
    assert_logits_close(got, want, "qwen4_exp documents")


@pytest.mark.parametrize("name", ["lfm2", "lfm2_bias", "lfm2_moe", "lfm3", "olmo_hybrid", "mamba2", "mamba", "granite4", "falcon_h1", "bamba",
                                  "qwen3_next",
                                  "qwen3_5", "qwen3_5_moe", "rwkv"])
def test_genai(name, ckpt, reference, tmp_path):
    """onnxruntime-genai runs the multi-token decode export as it is, its genai_config.json mapping the
    states (past_conv_names, past_recurrent_names) beside the attention cache: greedy generation
    equals transformers' generate token for token."""
    import onnxruntime_genai as og
    out = tmp_path / "genai"
    proc = run_hfx(["export", ckpt(name), out, "--for-generation", *MODES["onnx-mtd"], "--quiet"])
    assert proc.returncode == 0, describe(proc)
    model = og.Model(str(out))
    eos = reference(name).generation_config.eos_token_id
    varied = False
    for prompt in PROMPTS:
        got = genai_greedy(model, prompt, 24)
        with torch.no_grad():
            want = reference(name).generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                            max_new_tokens=24, do_sample=False)[0, len(prompt):].tolist()
        if want and want[-1] == eos:  # genai ends the sequence before the EOS it stopped at
            want = want[:-1]
        assert got == want, f"{name} prompt {prompt}: genai {got} != transformers {want}"
        varied |= len(set(want)) > 2
    assert varied, "the references must not all be constant runs of tokens"


@pytest.fixture(scope="module")
def seed_exports(tmp_path_factory, ckpt):
    """transformers.exporters' own ONNX export of a variant, per cache mode (made once)."""
    from seedutil import seed_exporter
    return seed_exporter(tmp_path_factory, ckpt, "onnx")


def _io_lists(path):
    import onnx
    graph = onnx.load(str(path), load_external_data=False).graph

    def side(vs):
        return [(v.name, v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim)) for v in vs]
    return side(graph.input), side(graph.output)


@pytest.mark.parametrize("name,mode", [("lfm2", "dynamic"), ("mamba2", "static"), ("mamba2", "dynamic-multi"),
                                       ("granite4", "dynamic"), ("mamba", "dynamic"), ("falcon_h1", "dynamic"),
                                       ("lfm2", "static"), ("granite4", "static"), ("falcon_h1", "static"),
                                       ("nemotron_h", "dynamic"), ("nemotron_h", "static")])
def test_seed_io_lists(name, mode, ckpt, seed_exports, tmp_path):
    """io "seed": each recurrent layer's states under transformers' cache names, as the Python
    system's own ONNX export of the same model writes them — cache.layers.{i}.conv_states.0 [batch,
    channels, kernel] (the kernel's whole window) and recurrent_states.0 out of the prefill,
    input.* into and output.* out of decode — beside the attention layers' keys and values: the
    same inputs and outputs, in order, with the same dtypes and ranks, and the same call keywords (and specs: a
    growing cache's)."""
    from seedutil import hfx_seed_export
    seed = seed_exports(name, mode)
    ours = hfx_seed_export(ckpt(name), tmp_path / "hfx", "onnx", mode)
    for graph in ("prefill.onnx", "decode.onnx"):
        assert _io_lists(ours / graph) == _io_lists(seed / graph), graph
    theirs = json.loads((seed / "export.json").read_text())["components"]
    mine = json.loads((ours / "export.json").read_text())["components"]
    for comp, entry in theirs.items():
        assert set(mine[comp]["metadata"]["kwargs"]) == set(entry["metadata"]["kwargs"]), comp
    # the call's pytree specs too (its cache object: NemotronH's MLP layers transformers' DummyLayer), where hfx
    # writes them (a static cache of recurrent layers beside attention: none, the seed's mask dict keyed by a set)
    from torch.utils._pytree import treespec_loads
    from transformers.exporters.metadata import register_treespec_types
    for comp, entry in theirs.items() if "in_spec" in mine["decode"]["metadata"] else ():
        for field in ("in_spec", "out_spec"):
            register_treespec_types(want := entry["metadata"][field])
            assert treespec_loads(mine[comp]["metadata"][field]) == treespec_loads(want), (comp, field)
    assert "in_spec" in mine["decode"]["metadata"] or mode == "static"


@pytest.mark.parametrize("name,mode", [(n, "dynamic") for n in ("lfm2", "mamba2", "mamba", "granite4", "falcon_h1",
                                                                 "qwen3_next", "qwen3_5")]
                         + [("granite4", "static"), ("qwen3_next", "static")])
def test_seed_prefill_then_decode(name, mode, ckpt, reference, tmp_path):
    """io "seed", run as the Python system's callers run it: prefill.onnx starts the cache (the
    states and the attention layers' keys and values), decode.onnx continues it a token at a time
    (input.* in, output.* out); 24 greedy tokens equal transformers' generate."""
    import onnxruntime as ort
    from seedutil import MAX_CACHE_LEN, hfx_seed_export
    out = hfx_seed_export(ckpt(name), tmp_path / "hfx", "onnx", mode)
    prefill = ort.InferenceSession(str(out / "prefill.onnx"), providers=["CPUExecutionProvider"])
    decode = ort.InferenceSession(str(out / "decode.onnx"), providers=["CPUExecutionProvider"])
    prompt = np.array([PROMPTS[0]], np.int64)
    n = prompt.shape[1]

    def run(session, feed):
        inputs = {i.name for i in session.get_inputs()}
        names = [o.name for o in session.get_outputs()]
        res = dict(zip(names, session.run(None, {k: v for k, v in feed.items() if k in inputs})))
        return res["logits"], {k.removeprefix("output."): v for k, v in res.items() if k != "logits"}

    feed = {"input_ids": prompt, "position_ids": np.arange(n)[None]}
    feed.update({i.name: np.array(0, np.int64) for i in prefill.get_inputs() if i.name.endswith("cumulative_length")})
    logits, cache = run(prefill, feed)
    tokens = [int(logits[0, -1].argmax())]
    for position in range(n, n + 23):
        feed = {"input_ids": np.array([[tokens[-1]]]), "position_ids": np.array([[position]]),
                **{f"input.{k}": v for k, v in cache.items()}}
        if mode == "static":
            mask = (np.arange(MAX_CACHE_LEN) <= position)[None, None, None]
            feed.update({i.name: mask for i in decode.get_inputs() if i.name.startswith("attention_mask")})
        logits, cache = run(decode, feed)
        tokens.append(int(logits[0, -1].argmax()))
    with torch.no_grad():
        want = reference(name).generate(torch.from_numpy(prompt), attention_mask=torch.ones_like(torch.from_numpy(prompt)),
                                        max_new_tokens=24, min_new_tokens=24, do_sample=False)[0, n:].tolist()
    assert tokens == want, f"{name} {mode}: {tokens} != {want}"


@pytest.mark.parametrize("name,compare", [("lfm2", True), ("granite4", False), ("qwen3_next", False)])
def test_seed_openvino(name, compare, ckpt, reference, tmp_path):
    """--format openvino --io seed: openvino_prefill.xml returns the states and keys and values,
    openvino_decode.xml keeps them in variables started from them; the I/O and variable ids equal
    the Python system's own OpenVINO export (LFM2), and the seed's loop gives transformers' greedy
    tokens."""
    from test_seed_io import _ov_io, _ov_prefill_then_stateful_decode, _seed_ov_export
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": "openvino", "dynamic": True, "io": "seed"}))
    proc = run_hfx(["export", ckpt(name), tmp_path / "hfx", "--config", cfg, "--for-generation", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    if compare:
        seed = _seed_ov_export(ckpt(name), tmp_path / "seed")
        for comp in ("prefill", "decode"):
            assert _ov_io(tmp_path / "hfx" / f"openvino_{comp}.xml") == _ov_io(seed / f"openvino_{comp}.xml"), comp
    prompt = np.array([PROMPTS[0]], np.int64)
    with torch.no_grad():
        want = reference(name).generate(torch.from_numpy(prompt), attention_mask=torch.ones_like(torch.from_numpy(prompt)),
                                        max_new_tokens=24, min_new_tokens=24, do_sample=False)[0, prompt.shape[1]:].tolist()
    assert _ov_prefill_then_stateful_decode(tmp_path / "hfx", prompt, 24) == want


# a vocabulary a byte-level BPE tokenizer can fill (its 256 bytes, three specials, merges)
RUNNER_VARIANTS = {"lfm2": 320, "mamba2": 320, "qwen3_5": 320}


@pytest.mark.parametrize("name", list(RUNNER_VARIANTS))
def test_llm_runner(name, tmp_path):
    """--llm-runner on a recurrent model: ExecuTorch's LLM runner layout, forward(tokens, input_pos)
    with the attention layers' slots and the recurrent states in mutable buffers (the states
    replaced by each call); its context the slots, or (Mamba2, no attention) max_cache_len. The
    runner's own TextLLMRunner prints, piece by piece, the text of transformers' greedy generate()."""
    import transformers
    from test_executorch import RUNNER, RUNNER_NEW_TOKENS, _byte_level_tokenizer
    from etutil import worker
    v = VARIANTS[name]
    vocab = RUNNER_VARIANTS[name]
    torch.manual_seed(0)
    config = getattr(transformers, v.config_class or f"{v.family}Config")(**{**v.config, "vocab_size": vocab})
    model = getattr(transformers, f"{v.family}ForCausalLM")(config).eval()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for n, p in model.named_parameters():
            centre = 0 if v.family.startswith("Qwen3") and "linear_attn.norm" not in n else 1
            p.copy_(centre + 0.2 * torch.randn(p.shape, generator=g) if "norm" in n
                    else 0.5 * torch.randn(p.shape, generator=g) if n.endswith(("A_log", "dt_bias", ".D"))
                    else torch.randn(p.shape, generator=g) / (1 if "embed" in n else p[0].numel() ** 0.5))
    ckpt = tmp_path / "ckpt"
    model.save_pretrained(ckpt)
    tok = _byte_level_tokenizer(vocab)
    tok.save(str(ckpt / "tokenizer.json"))
    (ckpt / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": [2]}))
    out = tmp_path / "out"
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"export_format": "executorch",
                               "dynamic_shapes": {"input_ids": {"1": {"name": "sequence", "min": 1, "max": 64}}}}))
    proc = run_hfx(["export", ckpt, out, "--config", cfg, "--for-generation", "--cache", "static", "--max-cache-len",
                    "64", "--multi-token-decode", "--batch-size", "1", "--llm-runner", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    pte = out / json.loads((out / "export.json").read_text())["components"]["decode"]["file"]
    prompt = "the quick brown fox"
    ids = tok.encode(prompt).ids
    with torch.no_grad():
        seq = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             max_new_tokens=RUNNER_NEW_TOKENS, do_sample=False, eos_token_id=[2], pad_token_id=2)
    want = seq[0, len(ids):].tolist()
    if want[-1] == 2:  # the runner stops at an EOS id without printing it
        want = want[:-1]
    want_pieces = [tok.decode([t]) for t in want]
    got = worker().python(RUNNER, [str(pte), str(out / "tokenizer.json"), prompt, RUNNER_NEW_TOKENS])
    assert got["metadata"]["get_max_context_len"] == [64] and got["metadata"]["get_vocab_size"] == [vocab]
    assert len(set(want)) > 2, want
    assert got["pieces"] == want_pieces, (got["pieces"], want_pieces, want)
