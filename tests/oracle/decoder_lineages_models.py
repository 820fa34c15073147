"""Tiny checkpoints of decoder-only lineages whose layers differ from Llama's in their biases, activations,
norms, windows, masks, experts or latent attention: Seed-OSS, Ministral, Ministral 3, Llama 4, Arcee,
Apertus, Helium, VaultGemma, NanoChat, HunYuan (dense, MoE), Nemotron, Youtu, MiniCPM3, FlexOlmo,
GLM-4.5, dots.llm1, Solar Open, GraniteMoE-Shared, MiniMax-M2, EXAONE-MoE, ERNIE 4.5 MoE, GPTBigCode,
GPT-J, GPT-Neo, Gemma 4, GLM-4.7-Flash, Apertus 1.5, HY3, AFMoE, Mistral 4, OPT, BLOOM,
Phi-3.5-MoE, BitNet, Falcon, MPT, DBRX, GraniteSWA, GraniteMoeSWA, Cohere2-MoE, MiMo-V2-Flash, JetMoE.

These are data only. decoders_encoders_models.py builds each spec exactly as it builds its own
decoders (an explicit config, fixed seeds, weights drawn so that a missing feature cannot hide under
the tolerance, loaded back by transformers to the very model that was saved) and lists them in its
SPECS, so that test_decoders_encoders.py runs every suite over them: forward parity through ONNX
Runtime, OpenVINO, torch.export and ExecuTorch (portable and XNNPACK), the signatures, stray config
keys, and greedy generation in every mode for GEN_SPECS. FEATURES shows that each config field a
spec sets moves transformers' own logits; BAD_CONFIGS are malformed fields refused by name.
"""

from __future__ import annotations

from transformers import (
    ApertusConfig,
    ApertusForCausalLM,
    ArceeConfig,
    ArceeForCausalLM,
    BitNetConfig,
    BitNetForCausalLM,
    DeepseekV32Config,
    DeepseekV32ForCausalLM,
    DeepseekV4Config,
    DeepseekV4ForCausalLM,
    HYV4Config,
    HYV4ForCausalLM,
    GlmMoeDsaConfig,
    GlmMoeDsaForCausalLM,
    AXK1Config,
    AXK1ForCausalLM,
    AXK2Config,
    AXK2ForCausalLM,
    CwmConfig,
    CwmForCausalLM,
    HyperCLOVAXConfig,
    HyperCLOVAXForCausalLM,
    PersimmonConfig,
    PersimmonForCausalLM,
    FlintConfig,
    FlintForCausalLM,
    Kolibri1Config,
    Kolibri1ForCausalLM,
    Jais2Config,
    Jais2ForCausalLM,
    Dots1Config,
    Dots1ForCausalLM,
    AfmoeConfig,
    AfmoeForCausalLM,
    BloomConfig,
    BloomForCausalLM,
    Apertus1p5TextConfig,
    Apertus1p5TextForCausalLM,
    Gemma4ForCausalLM,
    Gemma4TextConfig,
    Gemma3nForCausalLM,
    Gemma3nTextConfig,
    Glm4MoeLiteConfig,
    Glm4MoeLiteForCausalLM,
    HYV3Config,
    HYV3ForCausalLM,
    Glm4MoeConfig,
    Glm4MoeForCausalLM,
    GraniteMoeSharedConfig,
    GraniteMoeSharedForCausalLM,
    SolarOpenConfig,
    SolarOpenForCausalLM,
    YoutuConfig,
    YoutuForCausalLM,
    Cohere2MoeConfig,
    Cohere2MoeForCausalLM,
    DbrxConfig,
    DbrxForCausalLM,
    Ernie4_5_MoeConfig,
    Ernie4_5_MoeForCausalLM,
    FalconConfig,
    FalconForCausalLM,
    GraniteMoeSWAConfig,
    GraniteMoeSWAForCausalLM,
    GraniteSWAConfig,
    GraniteSWAForCausalLM,
    JetMoeConfig,
    LongcatFlashConfig,
    LongcatFlashForCausalLM,
    JetMoeForCausalLM,
    MiMoV2FlashConfig,
    MiMoV2FlashForCausalLM,
    MptConfig,
    MptForCausalLM,
    ExaoneMoeConfig,
    ExaoneMoeForCausalLM,
    FlexOlmoConfig,
    GPTJConfig,
    GPTJForCausalLM,
    GPTNeoConfig,
    GPTNeoForCausalLM,
    GPTBigCodeConfig,
    GPTBigCodeForCausalLM,
    FlexOlmoForCausalLM,
    HeliumConfig,
    HeliumForCausalLM,
    HunYuanDenseV1Config,
    HunYuanDenseV1ForCausalLM,
    HunYuanMoEV1Config,
    HunYuanMoEV1ForCausalLM,
    Ministral3Config,
    Ministral3ForCausalLM,
    Mistral4Config,
    Mistral4ForCausalLM,
    Llama4ForCausalLM,
    Llama4TextConfig,
    MiniCPM3Config,
    MiniCPM3ForCausalLM,
    ModernBertDecoderConfig,
    ModernBertDecoderForCausalLM,
    ModernBertDecoderForSequenceClassification,
    MiniMaxM2Config,
    MiniMaxM2ForCausalLM,
    NemotronConfig,
    NemotronForCausalLM,
    NanoChatConfig,
    NanoChatForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    PhimoeConfig,
    PhimoeForCausalLM,
    MinistralConfig,
    MinistralForCausalLM,
    SeedOssConfig,
    SeedOssForCausalLM,
    VaultGemmaConfig,
    VaultGemmaForCausalLM,
)

import models

# arch key: (config class, model class, kind), as decoders_encoders_models.ARCHS
ARCHS = {
    "modernbert_decoder": (ModernBertDecoderConfig, ModernBertDecoderForCausalLM, "causal"),
    "modernbert_decoder_cls": (ModernBertDecoderConfig, ModernBertDecoderForSequenceClassification, "dec_classifier"),
    "seed_oss": (SeedOssConfig, SeedOssForCausalLM, "causal"),
    "ministral": (MinistralConfig, MinistralForCausalLM, "causal"),
    "arcee": (ArceeConfig, ArceeForCausalLM, "causal"),
    "helium": (HeliumConfig, HeliumForCausalLM, "causal"),
    "vaultgemma": (VaultGemmaConfig, VaultGemmaForCausalLM, "causal"),
    "flex_olmo": (FlexOlmoConfig, FlexOlmoForCausalLM, "causal"),
    "glm4_moe": (Glm4MoeConfig, Glm4MoeForCausalLM, "causal"),
    "dots1": (Dots1Config, Dots1ForCausalLM, "causal"),
    "solar_open": (SolarOpenConfig, SolarOpenForCausalLM, "causal"),
    "youtu": (YoutuConfig, YoutuForCausalLM, "causal"),
    "ministral3": (Ministral3Config, Ministral3ForCausalLM, "causal"),
    "nanochat": (NanoChatConfig, NanoChatForCausalLM, "causal"),
    "hunyuan_dense": (HunYuanDenseV1Config, HunYuanDenseV1ForCausalLM, "causal"),
    "apertus": (ApertusConfig, ApertusForCausalLM, "causal"),
    "granitemoeshared": (GraniteMoeSharedConfig, GraniteMoeSharedForCausalLM, "causal"),
    "minimax_m2": (MiniMaxM2Config, MiniMaxM2ForCausalLM, "causal"),
    "exaone_moe": (ExaoneMoeConfig, ExaoneMoeForCausalLM, "causal"),
    "ernie4_5_moe": (Ernie4_5_MoeConfig, Ernie4_5_MoeForCausalLM, "causal"),
    "hunyuan_moe": (HunYuanMoEV1Config, HunYuanMoEV1ForCausalLM, "causal"),
    "nemotron": (NemotronConfig, NemotronForCausalLM, "causal"),
    "gpt_bigcode": (GPTBigCodeConfig, GPTBigCodeForCausalLM, "causal"),
    "gptj": (GPTJConfig, GPTJForCausalLM, "causal"),
    "gpt_neo": (GPTNeoConfig, GPTNeoForCausalLM, "causal"),
    "minicpm3": (MiniCPM3Config, MiniCPM3ForCausalLM, "causal"),
    "llama4": (Llama4TextConfig, Llama4ForCausalLM, "causal"),
    "gemma4": (Gemma4TextConfig, Gemma4ForCausalLM, "causal"),
    "gemma3n": (Gemma3nTextConfig, Gemma3nForCausalLM, "causal"),
    "glm4_moe_lite": (Glm4MoeLiteConfig, Glm4MoeLiteForCausalLM, "causal"),
    "apertus1p5": (Apertus1p5TextConfig, Apertus1p5TextForCausalLM, "causal"),
    "hy_v3": (HYV3Config, HYV3ForCausalLM, "causal"),
    "afmoe": (AfmoeConfig, AfmoeForCausalLM, "causal"),
    "mistral4": (Mistral4Config, Mistral4ForCausalLM, "causal"),
    "opt": (OPTConfig, OPTForCausalLM, "causal"),
    "bloom": (BloomConfig, BloomForCausalLM, "causal"),
    "phimoe": (PhimoeConfig, PhimoeForCausalLM, "causal"),
    "bitnet": (BitNetConfig, BitNetForCausalLM, "causal"),
    "falcon": (FalconConfig, FalconForCausalLM, "causal"),
    "mpt": (MptConfig, MptForCausalLM, "causal"),
    "dbrx": (DbrxConfig, DbrxForCausalLM, "causal"),
    "granite_swa": (GraniteSWAConfig, GraniteSWAForCausalLM, "causal"),
    "granitemoe_swa": (GraniteMoeSWAConfig, GraniteMoeSWAForCausalLM, "causal"),
    "cohere2_moe": (Cohere2MoeConfig, Cohere2MoeForCausalLM, "causal"),
    "mimo_v2_flash": (MiMoV2FlashConfig, MiMoV2FlashForCausalLM, "causal"),
    "jetmoe": (JetMoeConfig, JetMoeForCausalLM, "causal"),
    "longcat_flash": (LongcatFlashConfig, LongcatFlashForCausalLM, "causal"),
    "deepseek_v32": (DeepseekV32Config, DeepseekV32ForCausalLM, "causal"),
    "hy_v4": (HYV4Config, HYV4ForCausalLM, "causal"),
    "deepseek_v4": (DeepseekV4Config, DeepseekV4ForCausalLM, "causal"),
    "glm_moe_dsa": (GlmMoeDsaConfig, GlmMoeDsaForCausalLM, "causal"),
    "axk1": (AXK1Config, AXK1ForCausalLM, "causal"),
    "axk2": (AXK2Config, AXK2ForCausalLM, "causal"),
    "jais2": (Jais2Config, Jais2ForCausalLM, "causal"),
    "cwm": (CwmConfig, CwmForCausalLM, "causal"),
    "hyperclovax": (HyperCLOVAXConfig, HyperCLOVAXForCausalLM, "causal"),
    "persimmon": (PersimmonConfig, PersimmonForCausalLM, "causal"),
    "flint": (FlintConfig, FlintForCausalLM, "causal"),
    "kolibri": (Kolibri1Config, Kolibri1ForCausalLM, "causal"),
}

SMALL = dict(vocab_size=168, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)
_ROPE = {"rope_type": "default", "rope_theta": 10000.0}

SEED_OSS = dict(SMALL, head_dim=16, tie_word_embeddings=False, rope_parameters=_ROPE)
_SWA = ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"]
MINISTRAL = dict(SMALL, head_dim=16, sliding_window=4, layer_types=_SWA, rope_parameters={"rope_type": "default", "rope_theta": 1e6})
ARCEE = dict(SMALL, rope_parameters=_ROPE)
HELIUM = dict(SMALL, head_dim=16, rope_parameters={"rope_type": "default", "rope_theta": 100000.0})
VAULTGEMMA = dict(SMALL, vocab_size=224, head_dim=16, sliding_window=4, query_pre_attn_scalar=24,
                  attn_logit_softcapping=8.0, final_logit_softcapping=5.0, rope_parameters=_ROPE)
FLEX_OLMO = dict(SMALL, num_experts=4, num_experts_per_tok=2, norm_topk_prob=False,
                 rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
# DeepSeek V3's router: sigmoid scores + e_score_correction_bias (drawn non-zero), 8 experts in 4 groups
V3_ROUTER = dict(moe_intermediate_size=32, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=4,
                 topk_group=2, routed_scaling_factor=2.5, norm_topk_prob=True)
GLM4_MOE = dict(SMALL, head_dim=16, **V3_ROUTER, first_k_dense_replace=1, use_qk_norm=True, attention_bias=True,
                rope_parameters=dict(_ROPE, partial_rotary_factor=0.5))
DOTS1 = dict(SMALL, **dict(V3_ROUTER, n_shared_experts=2, norm_topk_prob=False), first_k_dense_replace=1,
             sliding_window=4, max_window_layers=2, attention_bias=True, rope_parameters=_ROPE)
SOLAR_OPEN = dict(SMALL, head_dim=16, **dict(V3_ROUTER, n_group=2, topk_group=1), attention_bias=True,
                  rope_parameters={"rope_type": "default", "rope_theta": 1e6})
# no pad_token_id: transformers' Youtu zeroes that embedding row at every load (its _init_weights writes through
# .data, which the loaded-weights flag does not cover), so a saved model would not load back as saved
YOUTU = dict(SMALL, pad_token_id=None, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8,
             v_head_dim=12, rope_parameters=_ROPE)
# Ministral 3 as released: YaRN, and the queries scaled by 1 + beta * ln(1 + floor(pos / 8)) (8: the original length)
MINISTRAL3_YARN = {"rope_type": "yarn", "rope_theta": 1e6, "factor": 2.0, "original_max_position_embeddings": 8,
                   "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                   "llama_4_scaling_beta": 0.5}
MINISTRAL3 = dict(SMALL, head_dim=16, rope_parameters=MINISTRAL3_YARN)
NANOCHAT = dict(SMALL, final_logit_softcapping=5.0, rope_parameters=_ROPE)
HUNYUAN_NTK = {"rope_type": "dynamic", "factor": 1.0, "alpha": 1000.0, "rope_theta": 10000.0}
HUNYUAN = dict(SMALL, head_dim=16, rope_parameters=HUNYUAN_NTK)
APERTUS_LLAMA3 = {"rope_type": "llama3", "rope_theta": 12000000.0, "factor": 8.0,
                  "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
APERTUS = dict(SMALL, rope_parameters=dict(APERTUS_LLAMA3, rope_theta=10000.0, original_max_position_embeddings=32))
GRANITEMOE_SHARED = dict(SMALL, num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=48,
                         embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.2,
                         logits_scaling=4.0, rope_parameters=_ROPE)
MINIMAX_M2 = dict(SMALL, head_dim=16, rotary_dim=8, num_local_experts=4, num_experts_per_tok=2,
                  rope_parameters={"rope_type": "default", "rope_theta": 5e6, "partial_rotary_factor": 0.5})

EXAONE_MOE = dict(SMALL, num_experts=8, num_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=32,
                  n_group=4, topk_group=2, routed_scaling_factor=2.5, norm_topk_prob=True, sliding_window=4,
                  sliding_window_pattern=4, mlp_layer_types=["dense", "sparse", "dense", "sparse"],
                  rope_parameters=_ROPE)
ERNIE_MOE = dict(SMALL, moe_intermediate_size=32, moe_k=2, moe_num_experts=8, moe_num_shared_experts=1,
                 rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
HUNYUAN_MOE = dict(HUNYUAN, intermediate_size=48, num_experts=4, moe_topk=2)
NEMOTRON = dict(SMALL, rope_parameters=dict(_ROPE, partial_rotary_factor=0.5))
GPT_BIGCODE = dict(vocab_size=160, n_embd=64, n_layer=3, n_head=4, n_positions=64, n_inner=96,
                   pad_token_id=0, bos_token_id=1, eos_token_id=2)
GPTJ = dict(vocab_size=176, n_embd=64, n_layer=3, n_head=4, n_positions=64, rotary_dim=8, pad_token_id=0,
            bos_token_id=1, eos_token_id=2)
GPT_NEO = dict(vocab_size=168, hidden_size=64, num_layers=4, num_heads=4, max_position_embeddings=64, window_size=4,
               attention_types=[[["global", "local"], 2]], pad_token_id=0, bos_token_id=1, eos_token_id=2)
MINICPM3 = dict(SMALL, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8,
                v_head_dim=12, scale_emb=3.0, scale_depth=3.0, dim_model_base=16, rope_parameters=_ROPE)
# Llama 4: layer 3 without rotary (interval 4), its queries' temperature 1 + 0.5 ln(1 + floor((slot + 1) / 4));
# layers 0-2 attend in chunks of 4 with weight-less q/k norms; experts (top-1 of 4) on layers 1 and 3
LLAMA4 = dict(SMALL, head_dim=16, intermediate_size=32, intermediate_size_mlp=128, num_local_experts=4,
              num_experts_per_tok=1, interleave_moe_layer_step=2, attention_chunk_size=4, floor_scale=4,
              attn_scale=0.5, rope_parameters={"rope_type": "default", "rope_theta": 500000.0})

# Gemma 4 as E2B/E4B are built: sliding layers of head_dim 16, full ones of global_head_dim 32 (per_layer_config in
# the saved config.json), the last 3 layers attending to the keys and values of layers 1 (sliding) and 2 (full) with
# double-wide MLPs, per-layer inputs of width 8, the final soft-cap; transformers' default rotary (proportional over a
# quarter of the full heads' pairs)
_G4_TYPES = ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
             "full_attention"]
GEMMA4 = dict(SMALL, vocab_size=200, intermediate_size=96, num_hidden_layers=6, head_dim=16, global_head_dim=32,
              sliding_window=4, layer_types=_G4_TYPES, hidden_size_per_layer_input=8, vocab_size_per_layer_input=200,
              num_kv_shared_layers=3, use_double_wide_mlp=True, final_logit_softcapping=5.0)
# ... as the 31B is: values that are the keys' projection on the full layers, which have one key/value head, no
# per-layer inputs, no shared keys and values
GEMMA4_K_EQ_V = dict(SMALL, vocab_size=200, intermediate_size=96, num_hidden_layers=4, head_dim=16, global_head_dim=32,
                     sliding_window=4, layer_types=["sliding_attention", "full_attention"] * 2, attention_k_eq_v=True,
                     num_global_key_value_heads=1, hidden_size_per_layer_input=0, tie_word_embeddings=False)

# Gemma 3n as E2B/E4B are built, small: three AltUp streams (the layers on stream 1), LAuReL of rank 8, MLP widths per
# layer, Gaussian top-k sparsity on the first two layers, per-layer inputs of width 8 from a table smaller than the
# vocabulary (ids 150.. read row 0), the last 3 layers attending to layers 1 and 2's keys and values, the final soft-cap
GEMMA3N = dict(SMALL, vocab_size=200, num_hidden_layers=6, head_dim=16, sliding_window=4,
               layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2,
               intermediate_size=[96, 128, 96, 96, 128, 96], hidden_size_per_layer_input=8, vocab_size_per_layer_input=150,
               num_kv_shared_layers=3, laurel_rank=8, altup_num_inputs=3, altup_active_idx=1,
               activation_sparsity_pattern=[0.95, 0.6, 0.0, 0.0, 0.0, 0.0], final_logit_softcapping=5.0)

# GLM-4.7-Flash: V3's latent attention and router, the sparse layers by mlp_layer_types
GLM4_LITE = dict(SMALL, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8,
                 v_head_dim=12, **V3_ROUTER, mlp_layer_types=["dense", "sparse", "sparse", "dense"], rope_parameters=_ROPE)

# HY3: per-head q/k norms; V3's sigmoid router (expert_bias) over one group, always renormalised, x 2.5; a shared MLP
HY_V3 = dict(SMALL, head_dim=16, num_experts=8, num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=32,
             router_scaling_factor=2.5, mlp_layer_types=["dense", "sparse", "dense", "sparse"], rope_parameters=_ROPE)

# AFMoE: a sandwich of f32 norms, rotary on the sliding layers only (every 2nd layer global), the output gated; a dense
# first layer, then V3's sigmoid router over one group (expert_bias), always renormalised, x route_scale 2, beside a
# shared expert
AFMOE = dict(SMALL, head_dim=16, num_experts=8, num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=32,
             route_scale=2.0, num_dense_layers=1, sliding_window=4, global_attn_every_n_layers=2, rope_parameters=_ROPE)

# Mistral 4: V3's latent attention, the rotary of a 16-dim head turning its last 8 (partial_rotary_factor 0.5) with
# YaRN, the queries scaled by 1 + 0.5 ln(1 + floor(pos / 8)); V3's router over softmax scores (2 of 4 groups by their
# top-2 sum), renormalised, x 2, beside a shared expert, after one dense layer
MISTRAL4_YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0, "original_max_position_embeddings": 8,
                 "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                 "llama_4_scaling_beta": 0.5, "partial_rotary_factor": 0.5}
MISTRAL4 = dict(SMALL, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8,
                v_head_dim=12, **V3_ROUTER, first_k_dense_replace=1, rope_parameters=MISTRAL4_YARN)

# OPT: learned positions two rows in, pre-LN LayerNorms, fc1 -> relu -> fc2, every linear biased, tied
OPT = dict(vocab_size=168, hidden_size=64, ffn_dim=96, num_hidden_layers=3, num_attention_heads=4,
           max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)

# BLOOM: ALiBi (no positions), the embeddings LayerNormed, per-head fused q/k/v, every linear biased, tied
BLOOM = dict(vocab_size=168, hidden_size=64, n_layer=3, n_head=4, pad_token_id=0, bos_token_id=1, eos_token_id=2)

# Phi-3.5-MoE: longrope whose factors stay short and whose scale switches past 8 positions; sparsemixer's top-2 of 4
PHIMOE_ROPE = {"rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 8,
               "short_factor": [1.0, 1.1, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0],
               "long_factor": [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0, 12.0], "short_mscale": 1.1,
               "long_mscale": 1.3}
PHIMOE = dict(SMALL, intermediate_size=48, num_local_experts=4, num_experts_per_tok=2, router_jitter_noise=0.3,
              sliding_window=6, attention_bias=True, rope_parameters=PHIMOE_ROPE)

# Falcon: the new decoder (Falcon-40B/180B: per-group fused q/k/v, two norms in parallel), Falcon-7B's multi-query
# parallel layers, Falcon-RW's ALiBi in sequential layers
FALCON = dict(vocab_size=168, hidden_size=64, num_hidden_layers=3, num_attention_heads=4, num_kv_heads=2,
              new_decoder_architecture=True, ffn_hidden_size=96, max_position_embeddings=64,
              rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, pad_token_id=0, bos_token_id=1,
              eos_token_id=2)
FALCON_7B = dict(FALCON, new_decoder_architecture=False, multi_query=True, parallel_attn=True, num_kv_heads=None)
FALCON_RW = dict(FALCON, new_decoder_architecture=False, multi_query=False, parallel_attn=False, alibi=True,
                 bias=True, num_kv_heads=None)

# MPT: ALiBi (slopes of alibi_bias_max 8), LayerNorms without biases, Wqkv, a 4x MLP, attention keys in attn_config
MPT = dict(vocab_size=168, d_model=64, n_layers=3, n_heads=4, max_seq_len=64, pad_token_id=0, bos_token_id=1,
           eos_token_id=2, attn_config={"softmax_scale": 0.3, "clip_qkv": 0.8})

# DBRX: grouped keys and values, clipped q/k/v, every layer top-2 of 4 flat experts divided by their p-norm
DBRX = dict(vocab_size=168, d_model=64, n_layers=3, n_heads=4, max_seq_len=64, pad_token_id=0, bos_token_id=1,
            eos_token_id=2, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            attn_config={"kv_n_heads": 2, "clip_qkv": 0.8, "rope_theta": 500000.0},  # (a rope_theta transformers 5
                                                                                      # keeps but never reads)
            ffn_config={"ffn_hidden_size": 48, "moe_num_experts": 4, "moe_top_k": 2,
                        "moe_normalize_expert_weights": 2.0})

# GraniteSWA: Granite's multipliers, attention sinks, windows but on every 4th layer from the first, a rope base per
# layer (0: none)
GRANITE_SWA = dict(SMALL, num_hidden_layers=5, sliding_window=4, embedding_multiplier=1.5, residual_multiplier=0.7,
                   logits_scaling=2.0, attention_multiplier=0.2, rope_parameters=_ROPE,
                   layer_rope_theta=[10000.0, 0.0, 500.0, 10000.0, 500.0])

# Cohere2-MoE: Cohere 2's parallel layers, a dense prefix (first_k_dense_replace, popped by its config into
# layer_types and mlp_layer_types), top-2 of 4 experts of intermediate_size, a shared expert averaged in
COHERE2_MOE = dict(SMALL, num_hidden_layers=5, head_dim=16, intermediate_size=32, prefix_dense_intermediate_size=96,
                   num_experts=4, num_experts_per_tok=2, num_shared_experts=1, sliding_window=4,
                   sliding_window_pattern=2, first_k_dense_replace=1, rope_parameters=_ROPE)

# MiMo-V2-Flash: keys 24 wide and values 16, twice the key/value heads and sinks on the sliding layers (all but 0 and
# 5), rotary on a third of each head per layer type, DeepSeek V3's router after a dense layer
MIMO_V2 = dict(SMALL, num_hidden_layers=7, head_dim=24, v_head_dim=16, sliding_window=4, intermediate_size=96,
               moe_intermediate_size=16, n_routed_experts=4, num_experts_per_tok=2)

# JetMoE: each token's queries from its top-2 of 4 attention experts over 2 shared key/value heads (4 query heads),
# top-2 of 4 MLP experts, biases after both mixtures
JETMOE = dict(vocab_size=168, hidden_size=64, num_hidden_layers=3, num_key_value_heads=2, kv_channels=16,
              num_local_experts=4, num_experts_per_tok=2, intermediate_size=32, max_position_embeddings=64,
              rms_norm_eps=1e-5, pad_token_id=0, bos_token_id=1, eos_token_id=2)


DEEPSEEK_V32 = dict(SMALL, num_hidden_layers=3, num_key_value_heads=4, moe_intermediate_size=32, n_shared_experts=1,
                    n_routed_experts=8, n_group=2, topk_group=1, num_experts_per_tok=2, routed_scaling_factor=2.0,
                    kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8,
                    index_topk=4, index_head_dim=16, index_n_heads=16, first_k_dense_replace=1)
HY_V4 = dict(SMALL, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8, n_group=2, topk_group=1,
             num_experts_per_tok=2, routed_scaling_factor=2.0, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8,
             v_head_dim=16, qk_nope_head_dim=8, index_topk=4, index_head_dim=16, index_n_heads=8, hc_mult=3,
             swiglu_limit=0.6, tie_word_embeddings=False, rope_parameters=_ROPE)
_V4_TYPES = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention", "compressed_sparse_attention"]
DEEPSEEK_V4 = dict(vocab_size=168, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, head_dim=16, q_lora_rank=24,
                   moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2, routed_scaling_factor=2.0,
                   sliding_window=6, o_groups=2, o_lora_rank=16, index_n_heads=8, index_head_dim=16, index_topk=3,
                   hc_mult=3, hc_sinkhorn_iters=5, hc_eps=0.05, layer_types=_V4_TYPES,
                   compress_rates={"compressed_sparse_attention": 2, "heavily_compressed_attention": 4},
                   mlp_layer_types=["hash_moe", "moe", "moe", "moe"], partial_rotary_factor=0.5, compress_rope_theta=100.0,
                   swiglu_limit=0.6, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   tie_word_embeddings=False)
LONGCAT = dict(vocab_size=168, hidden_size=64, num_layers=2, num_attention_heads=4, ffn_hidden_size=96, q_lora_rank=24,
               kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=16, head_dim=8, n_routed_experts=4,
               zero_expert_num=2, moe_topk=2, expert_ffn_hidden_size=32, routed_scaling_factor=1.5,
               max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)


def _cohere2_moe_derived(c: dict) -> dict:
    """No layer_types, mlp_layer_types or prefix_dense_intermediate_size: the config derives them from
    first_k_dense_replace 2, the two patterns and intermediate_size."""
    c = {k: v for k, v in c.items() if k not in ("layer_types", "mlp_layer_types", "prefix_dense_intermediate_size")}
    c["first_k_dense_replace"] = 2
    return c


def _glm4_lite_derived(c: dict) -> dict:
    """No mlp_layer_types (the config derives one dense layer, then sparse ones) and a first_k_dense_replace the
    class never reads."""
    c = {k: v for k, v in c.items() if k != "mlp_layer_types"}
    c["first_k_dense_replace"] = 3
    return c


def _gemma4_released(c: dict) -> dict:
    """Gemma 4's config.json as released: the full layers' global_head_dim and num_global_key_value_heads at the top
    (no per_layer_config), no rope_parameters (the config's defaults)."""
    c = {k: v for k, v in c.items() if k not in ("per_layer_config", "rope_parameters")}
    c["global_head_dim"] = 32
    if c.get("attention_k_eq_v"):
        c["num_global_key_value_heads"] = 1
    return c


_V4_RATIOS = {"sliding_attention": 0, "compressed_sparse_attention": 4, "heavily_compressed_attention": 128}


def _deepseek_v4_legacy(c: dict) -> dict:
    """DeepSeek V4's config.json as its checkpoints ship it: compress_ratios (0, 4, 128) for layer_types, num_hash_layers
    for mlp_layer_types, qk_rope_head_dim for partial_rotary_factor, rope_theta / compress_rope_theta and the compressed
    layers' YaRN as rope_scaling for the nested rope_parameters."""
    c = dict(c)
    assert c.pop("compress_rates") == {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}, c
    c["compress_ratios"] = [_V4_RATIOS[t] for t in c.pop("layer_types")]
    mlp = c.pop("mlp_layer_types")
    c["num_hash_layers"] = mlp.count("hash_moe")
    assert mlp == ["hash_moe"] * c["num_hash_layers"] + ["moe"] * (len(mlp) - c["num_hash_layers"]), mlp
    c["qk_rope_head_dim"] = int(c["head_dim"] * c.pop("partial_rotary_factor"))
    rope = c.pop("rope_parameters")
    c["rope_theta"], c["compress_rope_theta"] = rope["main"]["rope_theta"], rope["compress"]["rope_theta"]
    c["rope_scaling"] = {k: v for k, v in rope["compress"].items()
                         if k not in ("rope_theta", "partial_rotary_factor", "attention_factor")}
    return c


def _rotary_dim_only(c: dict) -> dict:
    """MiniMax-M2's released config.json: rope_theta and rotary_dim at the top, no rope_parameters."""
    c = dict(c)
    rope = c.pop("rope_parameters")
    c["rope_theta"] = rope["rope_theta"]
    return c


# config.json as a hand-written one may come: the per-layer list left for the config to derive
CONFIG_REWRITES = {
    "no_layer_types": lambda c: {k: v for k, v in c.items() if k != "layer_types"},
    "rotary_dim_only": _rotary_dim_only,
    "no_mlp_layer_types": lambda c: {k: v for k, v in c.items() if k != "mlp_layer_types"},
    "no_attention_layers": lambda c: {k: v for k, v in c.items() if k != "attention_layers"},
    "no_rope": lambda c: {k: v for k, v in c.items() if k not in ("rope_parameters", "rope_scaling", "rope_theta")},
    "gemma4_released": _gemma4_released,
    "glm4_lite_derived": _glm4_lite_derived,
    "cohere2_moe_derived": _cohere2_moe_derived,
    "no_indexer_types": lambda c: {k: v for k, v in c.items() if k != "indexer_types"},
    # A.X K1's and K2's config.json the older way: the sparse layers by first_k_dense_replace 1 and moe_layer_freq 2
    "sparse_by_freq": lambda c: {**{k: v for k, v in c.items() if k != "mlp_layer_types"}, "first_k_dense_replace": 1,
                              "moe_layer_freq": 2},
    "no_bias_keys": lambda c: {k: v for k, v in c.items() if k not in ("attention_bias", "mlp_bias")},
    "no_attention_multiplier": lambda c: {k: v for k, v in c.items() if k != "attention_multiplier"},
    "flint_derived": lambda c: {k: v for k, v in c.items() if k not in ("layer_types", "mlp_only_layers")},
    "deepseek_v4_legacy": _deepseek_v4_legacy,
    "no_router_groups": lambda c: {k: v for k, v in c.items() if k not in ("n_group", "topk_group", "routed_scaling_factor")},
}

# Spec(**entry) in decoders_encoders_models.py
SPECS = [
    dict(name="seed_oss", arch="seed_oss", config=dict(SEED_OSS),
         doc="q/k/v biased (attention_bias, its default on), o_proj not (attention_out_bias off), head_dim 16",
         cases=models.DEFAULT_CASES),
    dict(name="seed_oss_biases", arch="seed_oss",
         config=dict(SEED_OSS, attention_bias=False, attention_out_bias=True, mlp_bias=True, head_dim=24),
         doc="attention_bias off with attention_out_bias on (o_proj alone biased), MLP biases, head_dim 24",
         seed=1, cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="ministral", arch="ministral", config=dict(MINISTRAL),
         doc="layer_types: sliding window 4 on layers 0, 2, 3, full attention on layer 1; no biases; theta 1e6",
         cases=models.DEFAULT_CASES),
    dict(name="ministral_all", arch="ministral", config=dict(MINISTRAL, layer_types=["sliding_attention"] * 4),
         doc="every layer sliding (what the config derives when layer_types is absent)", seed=1,
         cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
    dict(name="ministral_derived", arch="ministral", config=dict(MINISTRAL, layer_types=["sliding_attention"] * 4),
         doc="ministral_all with no layer_types in config.json (derived: all sliding)", seed=1,
         config_rewrite="no_layer_types", twin="ministral_all", cases=(models.Case(3, 12, (0, 3, 11)),)),
]
SPECS += [
    dict(name="arcee", arch="arcee", config=dict(ARCEE),
         doc="ungated MLP up_proj -> relu2 -> down_proj (relu2 the config's default)", cases=models.DEFAULT_CASES),
    dict(name="arcee_biases", arch="arcee", config=dict(ARCEE, attention_bias=True, mlp_bias=True, rms_norm_eps=1e-3),
         doc="attention and MLP biases, rms_norm_eps 1e-3", seed=1, cases=models.DEFAULT_CASES),
    dict(name="helium", arch="helium", config=dict(HELIUM),
         doc="interleaved rotary pairs, RMSNorm weights multiplied in f32, theta 1e5", cases=models.DEFAULT_CASES),
    dict(name="helium_bias", arch="helium", config=dict(HELIUM, attention_bias=True, mlp_bias=True),
         doc="attention_bias on q/k/v (o_proj never biased), MLP biases", seed=1, cases=models.DEFAULT_CASES),
    dict(name="vaultgemma", arch="vaultgemma", config=dict(VAULTGEMMA),
         doc="Gemma 2 without post-norms: (1 + w) RMSNorms before attention and before the MLP, embeddings x sqrt(64), "
             "attention soft-cap 8, final soft-cap 5, query_pre_attn_scalar 24, sliding window 4 on even layers",
         embed_std=models.TIED_EMBED_STD, norm_offset=-0.5, cases=models.DEFAULT_CASES),
    dict(name="flex_olmo", arch="flex_olmo", config=dict(FLEX_OLMO),
         doc="OLMo 2's post-norm layers (q/k norms over the whole projection) with top-2 of 4 experts in every layer, "
             "norm_topk_prob false", cases=models.DEFAULT_CASES),
    dict(name="flex_olmo_norm", arch="flex_olmo", config=dict(FLEX_OLMO, norm_topk_prob=True, attention_bias=True),
         doc="norm_topk_prob true (the post-norm cancels it, up to eps), attention biases", seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="glm4_moe", arch="glm4_moe", config=dict(GLM4_MOE),
         doc="one dense layer, then V3's sigmoid router with e_score_correction_bias, group-limited top-2 (2 of 4 "
             "groups), norm_topk_prob, routed_scaling_factor 2.5, a shared expert; per-head q/k norms (use_qk_norm); "
             "half of each head rotated; q/k/v biases, o_proj none", cases=models.DEFAULT_CASES),
    dict(name="glm4_moe_plain", arch="glm4_moe",
         config=dict(GLM4_MOE, use_qk_norm=False, attention_bias=False, norm_topk_prob=False, n_group=1, topk_group=1,
                     first_k_dense_replace=0, rope_parameters=dict(_ROPE, partial_rotary_factor=0.25)),
         doc="no q/k norms, no biases, no renormalisation, one group, every layer sparse, a quarter of each head "
             "rotated", seed=1, cases=models.DEFAULT_CASES),
    dict(name="dots1", arch="dots1", config=dict(DOTS1),
         doc="Qwen3's attention (per-head q/k norms) with q/k/v/o biases, sliding window 4 from max_window_layers 2; "
             "one dense layer, then V3's router with two shared experts, no renormalisation",
         cases=models.DEFAULT_CASES),
    dict(name="dots1_derived", arch="dots1", config=dict(DOTS1),
         doc="dots1 with no layer_types in config.json (derived from max_window_layers)",
         config_rewrite="no_layer_types", twin="dots1", cases=(models.Case(3, 12, (0, 3, 11)),)),
    dict(name="solar_open", arch="solar_open", config=dict(SOLAR_OPEN),
         doc="V3's router (top-2 within the best of 2 groups, renormalised, x2.5) and a shared expert in every layer; "
             "q/k/v biases, o_proj none; head_dim 16", cases=models.DEFAULT_CASES),
    dict(name="youtu", arch="youtu", config=dict(YOUTU),
         doc="DeepSeek V3's latent attention (q_lora_rank 24, kv_lora_rank 16, rope_interleave) over dense MLPs, "
             "tied head", embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="ministral3", arch="ministral3", config=dict(MINISTRAL3),
         doc="YaRN (factor 2 over 8 positions) and the queries scaled by 1 + 0.5 ln(1 + floor(pos / 8)) after rotary",
         cases=models.DEFAULT_CASES),
    dict(name="ministral3_swa", arch="ministral3",
         config=dict(MINISTRAL3, sliding_window=4, rope_parameters={
             "rope_type": "default", "rope_theta": 1e6, "original_max_position_embeddings": 4,
             "llama_4_scaling_beta": 0.25}),
         doc="sliding window 4 on every layer, default rotary, beta 0.25 over 4 positions", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="nanochat", arch="nanochat", config=dict(NANOCHAT),
         doc="weight-less RMSNorms (the embeddings normed too), rotary by -theta, weight-less q/k norms after it, "
             "fc1 -> relu2 -> fc2, final soft-cap 5", cases=models.DEFAULT_CASES),
    dict(name="nanochat_bias", arch="nanochat", config=dict(NANOCHAT, attention_bias=True, final_logit_softcapping=None),
         doc="attention biases, no soft-cap", seed=1, cases=models.DEFAULT_CASES),
    dict(name="hunyuan_dense", arch="hunyuan_dense", config=dict(HUNYUAN),
         doc="per-head q/k norms after rotary (query_layernorm, key_layernorm); \"dynamic\" rope with alpha 1000: a "
             "fixed NTK base 1e4 * 1000^(16/14)", cases=models.DEFAULT_CASES),
    dict(name="hunyuan_dense_bias", arch="hunyuan_dense",
         config=dict(HUNYUAN, attention_bias=True, rope_parameters=_ROPE),
         doc="attention biases, default rotary", seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="apertus", arch="apertus", config=dict(APERTUS),
         doc="up_proj -> xIELU (alpha_p, alpha_n learned, beta and eps buffers) -> down_proj, per-head q/k norms, "
             "attention_layernorm / feedforward_layernorm, llama3 rotary (factor 8 over 32 positions)",
         cases=models.DEFAULT_CASES),
    dict(name="apertus_default", arch="apertus", config=dict(SMALL, rope_parameters=APERTUS_LLAMA3),
         doc="the config's default rotary written out: llama3, theta 1.2e7, factor 8 over 8192 positions", seed=2,
         cases=(models.Case(3, 12, (0, 3, 11)),)),
    dict(name="apertus_bias", arch="apertus", config=dict(APERTUS, attention_bias=True, rope_parameters=_ROPE),
         doc="attention biases, default rotary", seed=1, cases=models.DEFAULT_CASES),
    dict(name="apertus_no_rope", arch="apertus", config=dict(SMALL, rope_parameters=APERTUS_LLAMA3), seed=2,
         doc="apertus without rotary settings in config.json: the config's own llama3 default",
         config_rewrite="no_rope", twin="apertus_default", cases=(models.Case(3, 12, (0, 3, 11)),)),
]
SPECS += [
    dict(name="granitemoeshared", arch="granitemoeshared", config=dict(GRANITEMOE_SHARED),
         doc="top-2 of 4 fused experts (block_sparse_moe.input_linear / output_linear / router.layer) plus a shared "
             "MLP of 48 (shared_mlp.input_linear / output_linear), Granite's multipliers", cases=models.DEFAULT_CASES),
    dict(name="granitemoeshared_none", arch="granitemoeshared",
         config=dict(GRANITEMOE_SHARED, shared_intermediate_size=0, attention_bias=True),
         doc="shared_intermediate_size 0: no shared MLP; attention biases", seed=1,
         cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="minimax_m2", arch="minimax_m2", config=dict(MINIMAX_M2),
         doc="q/k RMSNorms over the whole projections, rotary_dim 8 of 16; sigmoid router + the block's "
             "e_score_correction_bias (drawn non-zero), top-2 of 4 renormalised, Mixtral's w1/w3/w2 experts",
         cases=models.DEFAULT_CASES),
    dict(name="minimax_m2_legacy", arch="minimax_m2", config=dict(MINIMAX_M2),
         doc="minimax_m2's config.json as released: rope_theta and rotary_dim, no rope_parameters",
         config_rewrite="rotary_dim_only", twin="minimax_m2", cases=(models.Case(3, 12, (0, 3, 11)),)),
]
SPECS += [
    dict(name="exaone_moe", arch="exaone_moe", config=dict(EXAONE_MOE),
         doc="per-head q/k norms, sliding window 4 on layers 0-2 and no rotary on full layer 3; V3's router "
             "(group-limited top-2, x2.5, a shared expert) on the mlp_layer_types sparse layers 1 and 3",
         cases=models.DEFAULT_CASES),
    dict(name="exaone_moe_first_k", arch="exaone_moe",
         config=dict(EXAONE_MOE, mlp_layer_types=None, first_k_dense_replace=2, num_shared_experts=2,
                     norm_topk_prob=False, n_group=1, topk_group=1,
                     layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"]),
         doc="first_k_dense_replace 2 (no mlp_layer_types), two shared experts, no renormalisation, one group, "
             "explicit layer_types (layer 2 full, without rotary)", seed=1, cases=models.DEFAULT_CASES),
    dict(name="exaone_moe_derived", arch="exaone_moe",
         config=dict(EXAONE_MOE, mlp_layer_types=None, first_k_dense_replace=2, num_shared_experts=2,
                     norm_topk_prob=False, n_group=1, topk_group=1,
                     layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"]),
         doc="exaone_moe_first_k without mlp_layer_types in config.json (derived from first_k_dense_replace 2)",
         seed=1, config_rewrite="no_mlp_layer_types", twin="exaone_moe_first_k", cases=(models.Case(3, 12, (0, 3, 11)),)),
]
SPECS += [
    dict(name="ernie4_5_moe", arch="ernie4_5_moe", config=dict(ERNIE_MOE),
         doc="layer 0 dense, then softmax experts chosen with moe_statics' correction bias [1, 8], top-2 "
             "renormalised, a shared expert; interleaved rotary in f32; tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="ernie4_5_moe_bias", arch="ernie4_5_moe",
         config=dict(ERNIE_MOE, use_bias=True, tie_word_embeddings=False, moe_layer_start_index=0,
                     moe_layer_interval=2, moe_num_shared_experts=0),
         doc="use_bias (every linear, shared experts and the head too), sparse layers 1 and 3 (interval 2 from 0), "
             "no shared expert, untied", seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="hunyuan_moe", arch="hunyuan_moe", config=dict(HUNYUAN_MOE),
         doc="HunYuan's attention (q/k norms after rotary, the NTK alpha base); softmax top-2 of 4 experts "
             "(mlp.gate.wg) renormalised, beside a shared MLP as wide, in every layer", cases=models.DEFAULT_CASES),
    dict(name="hunyuan_moe_list", arch="hunyuan_moe",
         config=dict(HUNYUAN_MOE, moe_topk=[3, 3, 3, 3], attention_bias=True, rope_parameters=_ROPE),
         doc="moe_topk a list of one count per layer (3), attention biases, default rotary", seed=1,
         cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="nemotron", arch="nemotron", config=dict(NEMOTRON),
         doc="LayerNorm1P (1 + w, with bias), up_proj -> relu2 -> down_proj, half of each head rotated",
         norm_offset=-0.5, cases=models.DEFAULT_CASES),
    dict(name="nemotron_bias", arch="nemotron",
         config=dict(NEMOTRON, attention_bias=True, mlp_bias=True, norm_eps=1e-3,
                     rope_parameters=dict(_ROPE, partial_rotary_factor=0.25)),
         doc="attention and MLP biases, norm_eps 1e-3, a quarter of each head rotated", seed=1, norm_offset=-0.5,
         cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="gpt_bigcode", arch="gpt_bigcode", config=dict(GPT_BIGCODE),
         doc="multi-query attention (one key/value head, c_attn rows [q; k; v]), learned positions, gelu-tanh "
             "c_fc/c_proj MLP, every linear biased, tied head", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="gpt_bigcode_mha", arch="gpt_bigcode",
         config=dict(GPT_BIGCODE, multi_query=False, scale_attn_weights=False, activation_function="gelu",
                     tie_word_embeddings=False),
         doc="multi_query false (c_attn per head [q_h; k_h; v_h]), scale_attn_weights false, exact gelu, untied",
         seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="gptj", arch="gptj", config=dict(GPTJ),
         doc="one LayerNorm feeding attention and MLP in parallel, rotary_dim 8 of 16 in interleaved pairs, "
             "unbiased q/k/v/out_proj, biased fc_in/fc_out and lm_head, gelu_new, n_inner 4 x 64",
         cases=models.DEFAULT_CASES),
    dict(name="gptj_full", arch="gptj", config=dict(GPTJ, rotary_dim=16, n_inner=80, activation_function="gelu"),
         doc="rotary over the whole head (rotary_dim 16), n_inner 80, exact gelu", seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="gpt_neo", arch="gpt_neo", config=dict(GPT_NEO),
         doc="learned positions, unscaled scores, local (window 4) and global layers alternating, unbiased q/k/v, "
             "biased out_proj and MLP, gelu_new, intermediate 4 x 64, tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="gpt_neo_types", arch="gpt_neo",
         config=dict(GPT_NEO, attention_types=[[["local"], 1], [["global"], 1], [["local"], 2]], window_size=3,
                     intermediate_size=96, activation_function="gelu", tie_word_embeddings=False),
         doc="attention_types [local, global, local, local], window 3, intermediate 96, exact gelu, untied", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="gpt_neo_types_only", arch="gpt_neo",
         config=dict(GPT_NEO, attention_types=[[["local"], 1], [["global"], 1], [["local"], 2]], window_size=3,
                     intermediate_size=96, activation_function="gelu", tie_word_embeddings=False),
         doc="gpt_neo_types with attention_types alone in config.json (no expanded attention_layers)", seed=1,
         config_rewrite="no_attention_layers", twin="gpt_neo_types", cases=(models.Case(3, 12, (0, 3, 11)),)),
]
SPECS += [
    dict(name="minicpm3", arch="minicpm3", config=dict(MINICPM3),
         doc="latent attention (q_lora_rank 24, kv_lora_rank 16) rotating halves as they come; embeddings x "
             "scale_emb 3, each block's output x scale_depth 3 / sqrt(4), logits / (64 / dim_model_base 16); tied",
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    dict(name="minicpm3_plain_q", arch="minicpm3",
         config=dict(MINICPM3, q_lora_rank=None, scale_depth=None, dim_model_base=None, tie_word_embeddings=False),
         doc="q_proj (no q_lora_rank); scale_depth and dim_model_base null (no residual or logit scaling); untied",
         seed=1, cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="llama4", arch="llama4", config=dict(LLAMA4),
         doc="rotary layers 0-2 (interleaved pairs in f32, weight-less q/k norms) attending in chunks of 4 from each "
             "row's first real token; layer 3 without rotary, its queries scaled by 1 + 0.5 ln(1 + floor((slot + 1) / "
             "4)); top-1 of 4 experts, the sigmoid of the chosen logit scaling the expert's input, and a shared "
             "expert, on layers 1 and 3; dense MLPs of 128 on 0 and 2", cases=models.DEFAULT_CASES),
    dict(name="llama4_moe", arch="llama4",
         config=dict(LLAMA4, num_experts_per_tok=2, moe_layers=[0, 3], use_qk_norm=False,
                     attn_temperature_tuning=False, attention_bias=True, no_rope_layers=[1, 0, 1, 1]),
         doc="top-2 experts on moe_layers [0, 3], no q/k norms, no temperature tuning, attention biases, "
             "no_rope_layers [1, 0, 1, 1]", seed=1, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="gemma4", arch="gemma4", config=dict(GEMMA4),
         doc="sliding layers 0, 1, 3, 4 (window 4, head_dim 16), full layers 2, 5 (head_dim 32, a quarter of the pairs "
             "turning); layers 3-5 attend to layers 1 and 2's keys and values, their MLPs 192 wide; per-layer inputs "
             "of 8; value norms; layer scalars; final soft-cap 5; tied (norm weights in [0.2, 1.2): with no score "
             "scale, larger ones make attention peaked enough that float reassociation nears the tolerance)",
         embed_std=models.TIED_EMBED_STD, norm_offset=0.2,
         cases=models.DEFAULT_CASES),
    dict(name="gemma4_k_eq_v", arch="gemma4", config=dict(GEMMA4_K_EQ_V),
         doc="the full layers' values are their keys' projection, one key/value head; no per-layer inputs, no shared "
             "keys and values; untied; config.json as released (global_head_dim, no rope_parameters)", seed=1,
         norm_offset=0.2, config_rewrite="gemma4_released", cases=models.DEFAULT_CASES),
    dict(name="gemma3n", arch="gemma3n", config=dict(GEMMA3N),
         doc="three AltUp streams, the layers on stream 1 (its prediction routed from all three, every stream corrected "
             "by the layer's output); LAuReL beside the attention; MLPs of 96 and 128; Gaussian top-k keeping the top 5% "
             "and 40% of the gates on layers 0 and 1; per-layer inputs of 8 from a table of 150 rows; layers 3-5 attend "
             "to layers 1 and 2's keys and values; value norms; final soft-cap 5; tied",
         embed_std=models.TIED_EMBED_STD, norm_offset=0.2, cases=models.DEFAULT_CASES),
    dict(name="gemma4_moe", arch="gemma4",
         config=dict(GEMMA4_K_EQ_V, enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=32),
         doc="gemma4_k_eq_v with experts beside every dense MLP (as the 26B-A4B): top-2 of 4 (width 32) routed from the "
             "layer's stream by the scaled softmax router, per-expert scales, their own pre/post norms", seed=2,
         norm_offset=0.2, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="glm4_moe_lite", arch="glm4_moe_lite", config=dict(GLM4_LITE),
         doc="latent attention (q_lora_rank 24, kv_lora_rank 16, interleaved rotary pairs); V3's router (8 experts in 4 "
             "groups, 2 kept, top-2, routed_scaling_factor 2.5) and a shared expert on mlp_layer_types' sparse layers "
             "1 and 2", cases=models.DEFAULT_CASES),
    dict(name="glm4_moe_lite_derived", arch="glm4_moe_lite",
         config={k: v for k, v in GLM4_LITE.items() if k != "mlp_layer_types"},
         doc="no mlp_layer_types in config.json (layer 0 dense, the rest sparse, as the config derives them) and a "
             "first_k_dense_replace of 3 the class never reads", seed=1, config_rewrite="glm4_lite_derived",
         cases=(models.Case(3, 12, (0, 3, 11)),)),
    dict(name="apertus1p5", arch="apertus1p5", config=dict(APERTUS, output_vocab_size=150),
         doc="Apertus 1.5's text model: apertus with its LM head pruned to output_vocab_size 150 of 168 rows (logits "
             "150 wide)", cases=(models.Case(3, 12, (0, 3, 11)), models.Case(1, 7))),
]
SPECS += [
    dict(name="hy_v3", arch="hy_v3", config=dict(HY_V3),
         doc="per-head q/k norms; top-2 of 8 experts by sigmoid scores + expert_bias, renormalised, x "
             "router_scaling_factor 2.5, beside a shared MLP (shared_mlp) of one expert's width, on mlp_layer_types' "
             "layers 1 and 3", cases=models.DEFAULT_CASES),
    dict(name="hy_v3_bias", arch="hy_v3",
         config=dict({k: v for k, v in HY_V3.items() if k != "mlp_layer_types"}, attention_bias=True, mlp_bias=True,
                     num_shared_experts=2),
         doc="attention and MLP biases (the shared MLP's too), a shared MLP two experts wide; no mlp_layer_types in "
             "config.json (layer 0 dense, the rest sparse, as the config derives them)", seed=1,
         config_rewrite="no_mlp_layer_types", cases=(models.Case(3, 12, (0, 3, 11)), models.Case(1, 7))),
]
SPECS += [
    dict(name="afmoe", arch="afmoe", config=dict(AFMOE),
         doc="sandwich norms (pre/post attention, pre/post MLP) weighted in f32, per-head q/k norms, rotary on the "
             "sliding layers 0 and 2 alone (window 4), the attention output times sigmoid(gate_proj); layer 0 dense, "
             "then top-2 of 8 experts by sigmoid + expert_bias, renormalised, x route_scale 2, beside a shared expert",
         cases=models.DEFAULT_CASES),
    dict(name="afmoe_mup", arch="afmoe",
         config=dict(AFMOE, mup_enabled=True, num_dense_layers=2, num_shared_experts=2, global_attn_every_n_layers=4,
                     attention_bias=True, tie_word_embeddings=True),
         doc="muP's embedding scale (x sqrt(hidden)), two dense layers, two shared experts' width, attention biases, the "
             "last layer global (layer_types derived from global_attn_every_n_layers 4), tied", seed=1,
         embed_std=models.TIED_EMBED_STD, config_rewrite="no_layer_types",
         cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="mistral4", arch="mistral4", config=dict(MISTRAL4, routed_scaling_factor=2.0),
         doc="latent attention (q_lora_rank 24, interleaved pairs), YaRN (factor 2 over 8 positions, mscale_all_dim 1) "
             "on the last 8 of 16 head dims, queries x (1 + 0.5 ln(1 + floor(pos / 8))); top-2 of 8 experts by softmax "
             "scores within 2 of 4 groups (ranked by their top-2 sum), renormalised, x 2, and a shared expert, after "
             "one dense layer", cases=models.DEFAULT_CASES),
    dict(name="mistral4_default_rope", arch="mistral4",
         config=dict({k: v for k, v in MISTRAL4.items() if k != "rope_parameters"}, q_lora_rank=None,
                     rope_interleave=False, norm_topk_prob=False),
         doc="no rope_parameters in config.json: the config's YaRN (factor 128 over 8192, beta 0.1), the rotary share "
             "qk_rope / (qk_nope + qk_rope); q_proj, halves rotary, no renormalisation", seed=1,
         config_rewrite="no_rope", cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="opt", arch="opt", config=dict(OPT),
         doc="learned positions (position p at row p + 2), LayerNorms before attention and MLP and a final one, "
             "fc1 -> relu -> fc2, every linear biased, tied", embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    dict(name="opt_350m", arch="opt",
         config=dict(OPT, do_layer_norm_before=False, word_embed_proj_dim=32, activation_function="gelu"),
         doc="as opt-350m: LayerNorms after each block and no final one, embeddings 32 wide projected in to 64 and out "
             "before the tied head; gelu", seed=1, embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="bloom", arch="bloom", config=dict(BLOOM),
         doc="ALiBi over 4 heads (each key's index among its row's real tokens), word_embeddings_layernorm, "
             "query_key_value per head, biases, a 4x MLP with the tanh gelu, tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="bloom_6heads", arch="bloom", config=dict(BLOOM, hidden_size=48, n_head=6),
         doc="6 heads: ALiBi's slopes of 4 (the largest power of two) and 2 odd powers of the next base", seed=1,
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
]
SPECS += [
    dict(name="phimoe", arch="phimoe", config=dict(PHIMOE),
         doc="LayerNorms with biases, a window of 6 on every layer, attention biases, longrope (the short factors "
             "always, cos and sin x 1.1, or x 1.3 once the positions pass 8); sparsemixer's top-2 of 4 experts "
             "(router_jitter_noise 0.3)", cases=models.DEFAULT_CASES + (models.Case(2, 20, (3, 8)),)),
    dict(name="phimoe_head_bias", arch="phimoe", config=dict(PHIMOE, lm_head_bias=True, router_jitter_noise=0.01),
         doc="the LM head biased (lm_head_bias), router_jitter_noise 0.01", seed=1,
         cases=(models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True))),
]
SPECS += [
    dict(name="bitnet", arch="bitnet", config=dict(SMALL, rope_parameters=_ROPE),
         doc="BitNet's float layers: the attention output RMS-normed (attn_sub_norm) before o_proj, relu2(gate) * up "
             "RMS-normed (ffn_sub_norm) before down_proj", cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="falcon", arch="falcon", config=dict(FALCON),
         doc="the new decoder: query_key_value per key/value group (2 queries, a key, a value), ln_attn and ln_mlp in "
             "parallel, a plain gelu MLP of 96, no biases, tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="falcon_7b", arch="falcon", config=dict(FALCON_7B),
         doc="Falcon-7B's layers: one key/value head ([q; k; v] rows), attention and MLP from one input_layernorm",
         seed=1, embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    dict(name="falcon_rw", arch="falcon", config=dict(FALCON_RW),
         doc="Falcon-RW: ALiBi (slopes and bias rounded to bf16, divided by sqrt(head_dim)), per-head q/k/v triples, "
             "sequential layers, every linear biased; rows without padding (the reference is transformers' sdpa "
             "path, models.reference_attention, whose fully padded query rows are its kernel's own)", seed=2,
         embed_std=models.TIED_EMBED_STD, cases=tuple(c for c in models.DEFAULT_CASES if not c.pads)),
    dict(name="falcon_one_norm", arch="falcon", config=dict(FALCON, num_ln_in_parallel_attn=1, bias=True),
         doc="the new decoder with one input_layernorm (Falcon 2), biases", seed=3, embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="mpt", arch="mpt", config=dict(MPT),
         doc="ALiBi (2^-2h over 4 heads, each key's slot less the last), softmax_scale 0.3, clip_qkv 0.8, LayerNorms "
             "without biases, up -> gelu -> down of 256, tied", embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    dict(name="mpt_6heads", arch="mpt", config=dict(MPT, d_model=48, n_heads=6, attn_config={}),
         doc="6 heads: slopes of 8 (the next power of two), the even ones first; the default scale", seed=1,
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="dbrx", arch="dbrx", config=dict(DBRX),
         doc="Wqkv with 2 key/value heads, clip_qkv 0.8, LayerNorms without biases; every layer top-2 of 4 experts "
             "(w1/v1/w2 flat), softmax weights divided by their 2-norm", cases=models.DEFAULT_CASES),
    dict(name="dbrx_sum", arch="dbrx",
         config=dict(DBRX, attn_config={"kv_n_heads": 1, "clip_qkv": 8.0, "rope_theta": 10000.0},
                     ffn_config=dict(DBRX["ffn_config"], moe_normalize_expert_weights=1.0, moe_top_k=1,
                                     ffn_act_fn={"name": "gelu"})),
         doc="one key/value head, top-1 divided by its sum (1), gelu experts", seed=1, cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="granite_swa", arch="granite_swa", config=dict(GRANITE_SWA),
         doc="sinks in every layer, windows of 4 on layers 1-3 (0 and 4 full: transformers' pattern), rope bases "
             "10000, none, 500, 10000, 500; Granite's multipliers; tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="granite_swa_types", arch="granite_swa",
         config=dict({k: v for k, v in GRANITE_SWA.items() if k != "layer_rope_theta"}, num_hidden_layers=4,
                     layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"],
                     attention_bias=True, mlp_bias=True, tie_word_embeddings=False),
         doc="layer_types given, one rope base everywhere, attention and MLP biases, untied", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="granitemoe_swa", arch="granitemoe_swa",
         config=dict(GRANITE_SWA, intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
                     shared_intermediate_size=48),
         doc="GraniteMoeShared's top-2 of 4 experts and shared MLP with GraniteSWA's sinks, windows and rope bases",
         cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="cohere2_moe", arch="cohere2_moe", config=dict(COHERE2_MOE),
         doc="layer 0 dense (96 wide) and full with rope, then windows of 4 on every other layer, rope on the sliding "
             "ones alone; top-2 of 4 experts by a softmax over the top-2 logits, a shared expert averaged in; Cohere's "
             "LayerNorms, interleaved rotary, logit_scale; tied", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    dict(name="cohere2_moe_derived", arch="cohere2_moe",
         config=dict(COHERE2_MOE, first_k_dense_replace=2, prefix_dense_sliding_window_pattern=2,
                     prefix_dense_intermediate_size=None, expert_selection_fn="sigmoid", norm_topk_prob=False,
                     shared_expert_combination_strategy="sum", num_shared_experts=2, rms_norm_eps=1e-5,
                     attention_bias=True, tie_word_embeddings=False),
         doc="layer_types and mlp_layer_types left to the config (two dense layers, the first sliding: no rope on the "
             "full dense one), sigmoid experts not renormalised, two shared experts summed in, RMS norms "
             "(rms_norm_eps), attention biases, untied", seed=1, config_rewrite="cohere2_moe_derived",
         cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="mimo_v2_flash", arch="mimo_v2_flash", config=dict(MIMO_V2),
         doc="layers 0 and 5 full (2 key/value heads), the others windowed by 4 with 4 key/value heads and sinks; keys "
             "24 wide, values 16 scaled by 0.707; each type's default rotary (8 of 24 dims, bases 5e6 and 1e4); layer 0 "
             "dense, then top-2 of 4 experts by sigmoid + correction bias, renormalised", cases=models.DEFAULT_CASES),
    dict(name="mimo_v2_flash_given", arch="mimo_v2_flash",
         config=dict(MIMO_V2, num_hidden_layers=4, sliding_window_size=2, attention_value_scale=None,
                     attention_bias=True, norm_topk_prob=False, routed_scaling_factor=2.0,
                     layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                     mlp_layer_types=["sparse", "dense", "sparse", "sparse"],
                     rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 500.0,
                                                         "partial_rotary_factor": 0.5},
                                      "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}}),
         doc="layer_types and mlp_layer_types given, a window of sliding_window_size 2 + 1, values unscaled (null), "
             "q/k/v biases, the weights not renormalised, x 2; the full layers' rotary on half of each head, the "
             "sliding ones' on a third (its default)", seed=1, cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="jetmoe", arch="jetmoe", config=dict(JETMOE),
         doc="queries from each token's top-2 of 4 attention experts (query head j*2 + h reading key head h), their "
             "outputs through the same experts, gated, + a bias; top-2 of 4 MLP experts (input_linear [gate; up]) + a "
             "bias; the layers' norms at 1e-6, the final one at rms_norm_eps 1e-5; tied",
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    dict(name="jetmoe_wide", arch="jetmoe", config=dict(JETMOE, num_local_experts=8, num_key_value_heads=1,
                                                        kv_channels=32, tie_word_embeddings=False),
         doc="top-2 of 8 experts over one key/value head of 32 (2 query heads), untied", seed=1,
         cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="longcat_flash", arch="longcat_flash", config=dict(LONGCAT),
         doc="2 layers of two sublayers each (latent attention with q_lora_rank 24, its queries and latent scaled by "
             "sqrt(hidden / rank), rotary pairs regrouped; a dense MLP of 96), and a shortcut: top-2 of 4 experts "
             "and 2 zero-compute ones by softmax + the router's e_score_correction_bias, never renormalised, x 1.5, "
             "over the first sublayer's MLP input, added after the second",
         cases=models.DEFAULT_CASES),
    dict(name="longcat_flash_plain", arch="longcat_flash",
         config=dict(LONGCAT, zero_expert_num=0, attention_bias=True, moe_topk=3, routed_scaling_factor=1.0),
         doc="no zero-compute experts (0), attention biases, top-3", seed=1, cases=models.DEFAULT_CASES),
]

SPECS += [
    dict(name="deepseek_v32", arch="deepseek_v32", config=dict(DEEPSEEK_V32),
         doc="DeepSeek sparse attention: each query reads the 4 keys a lightning indexer (16 heads of 16, LayerNormed "
             "keys, half-split rotary on the first 8 dims, relu'd scores weighed per head) scores highest, its keys "
             "cached beside the latent; V3's latent attention, a dense first layer, V3's router over 2 groups",
         cases=models.DEFAULT_CASES),
    dict(name="deepseek_v32_all_keys", arch="deepseek_v32",
         config=dict(DEEPSEEK_V32, index_topk=64, attention_bias=True, mlp_layer_types=["sparse", "dense", "sparse"]),
         doc="index_topk 64, more than any call's keys (every key read, as V3), attention biases, the sparse layers "
             "by mlp_layer_types", seed=1, cases=models.DEFAULT_CASES),
    dict(name="axk1", arch="axk1",
         config=dict(SMALL, num_key_value_heads=4, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8,
                     n_group=2, topk_group=1, num_experts_per_tok=2, routed_scaling_factor=2.0, kv_lora_rank=16,
                     q_lora_rank=24, qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8,
                     mlp_layer_types=["dense", "dense", "sparse", "dense"]),
         doc="A.X K1: DeepSeek V3's latent attention (rotary pairs regrouped) and experts, the sparse layer's output "
             "RMS-normed (post_mlp_layernorm, saved on the layer); config.json the older way (first_k_dense_replace 1, "
             "moe_layer_freq 2: layer 2 sparse)", config_rewrite="sparse_by_freq", cases=models.DEFAULT_CASES),
    dict(name="axk2", arch="axk2",
         config=dict(SMALL, num_key_value_heads=4, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8,
                     num_experts_per_tok=2, routed_scaling_factor=2.0, kv_lora_rank=16, q_lora_rank=24,
                     qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8, index_topk=4, index_head_dim=16,
                     index_n_heads=8, gated_norm_rank=8, mlp_layer_types=["dense", "sparse", "dense", "sparse"]),
         doc="A.X K2: V3.2's sparse attention, the queries and a sigmoid output gate one projection (q_b_proj as saved) "
             "over the low-rank part normed and as projected; the input norms and the sparse layers' second norms "
             "gated by a rank-8 MLP (W_down / W_up as saved); the router without groups (n_group null)",
         cases=models.DEFAULT_CASES),
    dict(name="axk2_groups", arch="axk2",
         config=dict(SMALL, num_key_value_heads=4, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8,
                     n_group=2, topk_group=1, num_experts_per_tok=2, kv_lora_rank=16, q_lora_rank=24,
                     qk_rope_head_dim=8, v_head_dim=16, qk_nope_head_dim=8, index_topk=64, index_head_dim=16,
                     index_n_heads=8, attention_bias=True, mlp_layer_types=["dense", "dense", "sparse", "dense"]),
         doc="2 groups (1 kept, the others scoring 0), every key read (index_topk 64), attention biases, gated_norm_rank "
             "16 (its default), config.json the older way (first_k_dense_replace 1, moe_layer_freq 2)",
         config_rewrite="sparse_by_freq", seed=1, cases=models.DEFAULT_CASES),
    dict(name="jais2", arch="jais2", config=dict(SMALL, tie_word_embeddings=False, rope_parameters=_ROPE),
         doc="Jais-2: LayerNorms, an ungated relu² MLP, attention and MLP biases (config.json without attention_bias and "
             "mlp_bias: both on by default)", config_rewrite="no_bias_keys", cases=models.DEFAULT_CASES),
    dict(name="jais2_plain", arch="jais2",
         config=dict(SMALL, attention_bias=False, mlp_bias=False, layer_norm_eps=0.1, hidden_act="gelu"),
         doc="no biases, layer_norm_eps 0.1, gelu, tied", seed=1, cases=models.DEFAULT_CASES),
    dict(name="cwm", arch="cwm", config=dict(SMALL, head_dim=16, sliding_window=4, tie_word_embeddings=False,
                                              rope_parameters=_ROPE),
         doc="CWM: windows of 4 on every layer but each 4th from the first (config.json without layer_types)",
         config_rewrite="no_layer_types", cases=models.DEFAULT_CASES),
    dict(name="cwm_rope", arch="cwm", config=dict(SMALL, head_dim=16, sliding_window=6, mlp_bias=True,
                                                   layer_types=["full_attention", "sliding_attention", "full_attention",
                                                                "sliding_attention"]),
         doc="its llama3 rotary (config.json without rope_parameters), layer_types given, MLP biases",
         config_rewrite="no_rope", seed=1, cases=models.DEFAULT_CASES),
    dict(name="hyperclovax", arch="hyperclovax",
         config=dict(SMALL, embedding_multiplier=2.0, residual_multiplier=0.5, logits_scaling=0.3, attention_bias=True,
                     tie_word_embeddings=False, rope_parameters=_ROPE),
         doc="HyperCLOVAX: Granite's multipliers (embeddings x 2, blocks x 0.5), the logits times 0.3, a norm after "
             "each block (Peri-LN), attention biases; config.json without attention_multiplier (head_dim^-0.5)",
         config_rewrite="no_attention_multiplier", cases=models.DEFAULT_CASES),
    dict(name="hyperclovax_plain", arch="hyperclovax",
         config=dict(SMALL, use_post_norm=False, attention_multiplier=0.2, mlp_bias=True),
         doc="use_post_norm off, attention_multiplier 0.2, MLP biases, tied", seed=1, cases=models.DEFAULT_CASES),
    dict(name="persimmon", arch="persimmon", config=dict(SMALL, tie_word_embeddings=False),
         doc="Persimmon: GPT-NeoX's fused q/k/v per head, every linear biased, LayerNorms over head_dim on the queries "
             "and keys, rotary on half of each head, relu²; num_key_value_heads 2 in config.json, which its class never "
             "reads", cases=models.DEFAULT_CASES),
    dict(name="persimmon_plain", arch="persimmon",
         config=dict(SMALL, qk_layernorm=False, hidden_act="gelu", layer_norm_eps=0.1,
                     rope_parameters={"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.25}),
         doc="qk_layernorm off, gelu, layer_norm_eps 0.1, rotary on a quarter of each head (θ 100), tied", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="flint", arch="flint",
         config=dict(SMALL, num_hidden_layers=6, head_dim=16, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                     num_experts=8, num_experts_per_tok=2, sliding_window=4, tie_word_embeddings=False,
                     rope_parameters=_ROPE),
         doc="Flint: q/k norms, sinks in every layer, windows of 4 with rotary on the sliding layers only (config.json "
             "without layer_types: full at 0, 1, 5), a sigmoid router over 8 experts (top 2 renormalised) and an ungated "
             "shared expert of 48, dense MLPs on layers 0 and 1 (without mlp_only_layers); sinks saved as softmax_offset",
         config_rewrite="flint_derived", cases=models.DEFAULT_CASES),
    dict(name="flint_plain", arch="flint",
         config=dict(SMALL, head_dim=16, moe_intermediate_size=32, shared_expert_intermediate_size=24, num_experts=4,
                     num_experts_per_tok=2, sliding_window=6, norm_topk_prob=False, attention_bias=True,
                     mlp_only_layers=[1], layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                                       "full_attention"]),
         doc="layer_types and mlp_only_layers given, norm_topk_prob off, attention biases, tied", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="kolibri", arch="kolibri",
         config=dict({k: v for k, v in SMALL.items() if k != "intermediate_size"}, num_hidden_layers=5, head_dim=16,
                     moe_intermediate_size=32, shared_expert_intermediate_size=48, num_experts=8, num_experts_per_tok=2,
                     sliding_window=4, tie_word_embeddings=False, rope_parameters=_ROPE),
         doc="Kolibri-1: q/k norms, GLM-4's four norms per layer (saved as post_attn_norm / post_ffn_norm), windows of 4 "
             "with rotary on the sliding layers only (config.json without layer_types: layer 4 full), experts in every "
             "layer chosen by their logits + correction bias (saved as moe.router.expert_bias) and weighed by sigmoids, "
             "an ungated shared MLP of 48", config_rewrite="no_layer_types", cases=models.DEFAULT_CASES),
    dict(name="kolibri_plain", arch="kolibri",
         config=dict({k: v for k, v in SMALL.items() if k != "intermediate_size"}, head_dim=16, moe_intermediate_size=32,
                     shared_expert_intermediate_size=24, num_experts=4, num_experts_per_tok=2, sliding_window=6,
                     norm_topk_prob=True, layer_types=["sliding_attention", "full_attention", "full_attention",
                                                       "sliding_attention"]),
         doc="layer_types given, windows of 6, the sigmoids renormalised (norm_topk_prob), tied", seed=1,
         cases=models.DEFAULT_CASES),
    dict(name="glm_moe_dsa", arch="glm_moe_dsa",
         config=dict(DEEPSEEK_V32, index_n_heads=8, index_topk_freq=2, index_skip_topk_offset=1, first_k_dense_replace=1),
         doc="GLM-5: V3.2's sparse attention with the indexer's rotary pairs regrouped into halves, layer 1 reusing layer "
             "0's picks (index_topk_freq 2, index_skip_topk_offset 1: config.json without indexer_types); a dense first "
             "layer, V3's router over 2 groups", config_rewrite="no_indexer_types", cases=models.DEFAULT_CASES),
    dict(name="glm_moe_dsa_pattern", arch="glm_moe_dsa",
         config=dict(DEEPSEEK_V32, index_n_heads=8, index_topk_pattern="FSS", mlp_layer_types=["sparse", "dense", "sparse"],
                     n_group=1, topk_group=1, attention_bias=True),
         doc="index_topk_pattern FSS (no indexer_types), mlp_layer_types, one group, attention biases",
         config_rewrite="no_indexer_types", seed=1, cases=models.DEFAULT_CASES),
    dict(name="hy_v4", arch="hy_v4", config=dict(HY_V4),
         doc="hyper-connections: 3 residual streams, each sublayer's input their mix by sigmoid weights from the "
             "streams' RMS-scaled projection, its output added to each stream by its own (x 2), the head's mix before the "
             "final norm; latent attention with learned sinks and an elementwise sigmoid output gate, the indexer's "
             "rotary on its last 8 dims, layers 2 and 3 reusing layer 1's picks (indexer_types' default); a dense first "
             "layer, V3's router over 2 groups, the experts' gate and up clamped at 0.6",
         cases=models.DEFAULT_CASES),
    dict(name="hy_v4_b", arch="hy_v4",
         config=dict(HY_V4, hc_mult=2, hc_magnitude=1.5, hc_eps=0.05, indexer_types=["full", "shared", "full", "shared"],
                     mlp_layer_types=["sparse", "dense", "sparse", "dense"], attention_bias=True, n_group=1,
                     topk_group=1, tie_word_embeddings=True,
                     rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0,
                                      "original_max_position_embeddings": 32, "mscale_all_dim": 1.0}),
         doc="2 streams, hc_magnitude 1.5, hc_eps 0.05, indexer_types and mlp_layer_types given, attention biases, one "
             "group, a tied head, YaRN (the scores' scale times mscale²); its tensors by the model's own names "
             "(attn_hc.fn, sinks, gate_proj: its state_dict)", layout="fused", seed=1, cases=models.DEFAULT_CASES),
    dict(name="deepseek_v4", arch="deepseek_v4", config=dict(DEEPSEEK_V4),
         doc="DeepSeek V4: hyper-connections over 3 streams, the residual mixed by a Sinkhorn-Knopp matrix (5 rounds); "
             "one key head that is the value, sinks, windows of 6 everywhere, rotary on the last 8 dims of each head "
             "(pairs) turned back on the output, a grouped output (2 groups of rank 16); layer 2 heavily compressed "
             "(entries pooling windows of 4), layers 1 and 3 sparse (windows of 2 overlapping, 3 entries an indexer "
             "picks), their rotary base 100; layer 0 routed by token id, the others by sqrt-softplus scores + "
             "correction bias, experts and shared MLP clamped at 0.6; saved under its checkpoints' names",
         cases=models.DEFAULT_CASES),
    dict(name="deepseek_v4_b", arch="deepseek_v4",
         config=dict(DEEPSEEK_V4, hc_mult=2, scoring_func="sigmoid", mlp_layer_types=["hash_moe", "hash_moe", "moe", "moe"],
                     layer_types=["heavily_compressed_attention", "compressed_sparse_attention", "sliding_attention",
                                  "compressed_sparse_attention"], compress_rates=None, mlp_bias=True, o_groups=1,
                     rope_parameters={"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32}),
         doc="config.json as released (compress_ratios, num_hash_layers, qk_rope_head_dim, rope_scaling: YaRN on the "
             "compressed layers), 2 streams, sigmoid scores, two hashed layers, sparse layers over windows of 4, a "
             "biased shared MLP, one output group; its tensors by the model's own names",
         config_rewrite="deepseek_v4_legacy", layout="fused", seed=1, cases=models.DEFAULT_CASES),
]

# ModernBERT's decoder (Ettin): layer 0's input un-normed, LayerNorms without bias (norm_bias false), local layers of
# window 3 (local_attention 6) with their own rope base beside the global ones (every third), the GLU MLP (Wi), the
# embeddings normed, BERT's transform before the tied, biased decoder
MODERNBERT_DECODER = dict(SMALL, local_attention=6, cls_token_id=1, sep_token_id=2,
                          layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"])
SPECS += [
    dict(name="modernbert_decoder", arch="modernbert_decoder", config=dict(MODERNBERT_DECODER),
         doc="ModernBertDecoderForCausalLM: ModernBERT's layers causal, layer 0's input un-normed, windows of 3 on the "
             "local layers (their rope base 10000), the LM head's transform (dense, gelu, norm) and tied decoder",
         cases=models.DEFAULT_CASES),
    dict(name="modernbert_decoder_biased", arch="modernbert_decoder",
         config=dict(MODERNBERT_DECODER, norm_bias=True, attention_bias=True, mlp_bias=True, classifier_bias=True,
                     decoder_bias=False, classifier_activation="silu", hidden_activation="gelu_new"),
         doc="every LayerNorm, attention and MLP projection and the head's dense biased, the decoder not; silu head, "
             "gelu_new MLP", seed=2, cases=models.DEFAULT_CASES),
]
# transformers' static-cache generate of these differs from its dynamic one by rounding beyond 1e-5 (its windowed
# layers attend over a cache of another length): their reference consistency is held to the parity tolerance instead
STATIC_REFERENCE_ROUNDING = ("modernbert_decoder",)

# the specs of the generation matrix: every mode with the left-padded batch 3, batch 1 in GEN_BATCH1_MODE (a
# padded row's tokens equal the row's alone in transformers: test_reference_generation_is_consistent)
GEN_SPECS = ("seed_oss", "ministral", "arcee", "helium", "vaultgemma", "flex_olmo", "glm4_moe", "dots1", "solar_open",
             "youtu", "ministral3", "nanochat", "hunyuan_dense", "apertus", "granitemoeshared", "minimax_m2", "exaone_moe", "ernie4_5_moe", "hunyuan_moe", "nemotron", "gpt_bigcode", "gptj", "minicpm3", "llama4",
             "gemma4", "gemma4_k_eq_v", "gemma4_moe", "gemma3n", "glm4_moe_lite", "apertus1p5", "hy_v3", "afmoe", "mistral4", "opt", "opt_350m", "bloom", "phimoe", "bitnet", "falcon", "mpt", "dbrx",
             "granite_swa", "granitemoe_swa", "cohere2_moe", "mimo_v2_flash", "jetmoe", "longcat_flash", "deepseek_v32",
             "hy_v4", "glm_moe_dsa", "axk1", "axk2", "jais2", "cwm", "hyperclovax", "persimmon", "flint", "kolibri",
             "deepseek_v4", "modernbert_decoder")
# ... and one graph for prompt and steps (--multi-token-decode) through ONNX Runtime and OpenVINO: the lineages
# onnxruntime-genai cannot run (GENAI_SPECS runs the others' that way)
GEN_SPECS_MULTI_TOKEN = ("gemma4", "gemma3n", "deepseek_v4")
# ... and those whose transformers static-cache generate is not the model (GPT-Neo's local layers slice their
# window from the cache length, so a static cache of max_cache_len moves it; Falcon's ALiBi reads a 2-D mask, which a
# static-cache generate does not pass it): the dynamic-cache modes only
GEN_SPECS_DYNAMIC = ("gpt_neo", "falcon_rw")
# onnxruntime-genai runs their multi-token export (genai_config.json's type: genai's own name where it has one,
# else its generic "decoder")
GENAI_SPECS = ("seed_oss", "nemotron", "glm4_moe", "gpt_neo", "llama4", "ministral3")

GEN_BATCH1_MODE = "onnx-dyncache"

# GEN_SPECS whose generation adds nothing to a representative's but their forward graph (checked by parity in every
# format): a plain key/value cache (no windows, sinks, ALiBi or learned positions: test_sampled_specs_have_plain_caches
# checks) as the Llama-family representatives' (test_generation.py, and mixtral, qwen3_moe above), or latent attention
# with an indexer's keys as deepseek_v32's, or without as deepseek_v3's, which run every mode. Each runs generation in
# two modes of the matrix, taken in turn down this list, so every mode still sees several of them.
GEN_SAMPLED = ("seed_oss", "arcee", "helium", "flex_olmo", "glm4_moe", "solar_open", "nanochat",
               "hunyuan_dense", "apertus", "granitemoeshared", "minimax_m2", "ernie4_5_moe", "hunyuan_moe", "nemotron",
               "apertus1p5", "hy_v3", "bitnet", "glm_moe_dsa", "axk1", "axk2", "jais2",
               "hyperclovax", "persimmon")
# second variants whose forward adds config values, not blocks, to their lineage's first spec (which runs every format):
# parity through ONNX Runtime and OpenVINO only (test_torch_sampled_specs_have_a_representative checks the first spec)
TORCH_SAMPLED = ("modernbert_decoder_biased", "hy_v4_b", "glm_moe_dsa_pattern", "axk2_groups", "jais2_plain", "cwm_rope", "hyperclovax_plain",
                 "persimmon_plain", "flint_plain", "kolibri_plain")
# the representatives of the latent caches the sampled ones share
GEN_SAMPLED_LATENT = {"glm_moe_dsa": "deepseek_v32", "axk2": "deepseek_v32", "axk1": "deepseek_v3"}

# one spec per expert form added (router, expert layout): both exact forms (all experts, or each token's k gathered)
MOE_FORMS = ("deepseek_v4", "kolibri", "flint", "hy_v4", "longcat_flash", "jetmoe", "dbrx", "cohere2_moe_derived", "mimo_v2_flash", "gemma4_moe", "hy_v3", "afmoe", "mistral4", "phimoe", "llama4", "ernie4_5_moe", "minimax_m2", "hunyuan_moe", "glm4_moe")

# specs whose transformers outputs depend on a row's left padding (Llama 4's query temperature counts cache slots,
# padding included; Phi-3.5-MoE's rotary scale switches by the batch's longest positions): a padded row need not
# generate what it generates alone
PADDING_DEPENDENT = ("llama4", "phimoe", "deepseek_v4")
# (DeepSeek V4's compressors pool windows of raw cache slots, padding counted)

# specs whose transformers generate() has no static cache (DeepSeek V4's compressor state lives in its own dynamic cache
# layers): the static-cache modes' reference is the dynamic-cache generate, which a static cache must reproduce
DYNAMIC_REFERENCE = ("deepseek_v4",)


_PAD3 = models.Case(3, 12, (0, 3, 11))


def _v4_rope(theta: float, partial: float = 0.5) -> dict:
    """One of DeepSeek V4's two rotaries (rope_parameters' main or compress), unscaled."""
    return {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": partial}
_LONG = models.Case(2, 20, (3, 8))

# (spec, case, what the feature is, config overrides that switch it off or change it)
FEATURES = [
    ("modernbert_decoder", _PAD3, "windows of 3 on the local layers", {"layer_types": ["full_attention"] * 4}),
    ("modernbert_decoder_biased", _PAD3, "LayerNorm biases", {"norm_bias": False}),
    ("modernbert_decoder_biased", _PAD3, "silu head transform", {"classifier_activation": "gelu"}),
    ("seed_oss", _PAD3, "q/k/v biases", {"attention_bias": False}),
    ("seed_oss_biases", _PAD3, "o_proj bias alone", {"attention_out_bias": False}),
    ("seed_oss_biases", _PAD3, "MLP biases", {"mlp_bias": False}),
    ("ministral", _PAD3, "sliding window 4 on layers 0, 2, 3", {"layer_types": ["full_attention"] * 4}),
    ("arcee", _PAD3, "relu2 (not silu)", {"hidden_act": "silu"}),
    ("arcee_biases", _PAD3, "MLP biases", {"mlp_bias": False}),
    ("helium_bias", _PAD3, "q/k/v biases", {"attention_bias": False}),
    ("vaultgemma", _PAD3, "sliding window 4 on even layers", {"layer_types": ["full_attention"] * 4}),
    ("vaultgemma", _PAD3, "attention soft-cap 8", {"attn_logit_softcapping": None}),
    ("vaultgemma", _PAD3, "final soft-cap 5", {"final_logit_softcapping": None}),
    ("vaultgemma", _PAD3, "query_pre_attn_scalar 24", {"query_pre_attn_scalar": 16}),
    ("flex_olmo", _PAD3, "top-2 routing (not top-1)", {"num_experts_per_tok": 1}),
    # (norm_topk_prob scales each token's MLP output by one factor, which the post-norm cancels: invisible)
    ("flex_olmo_norm", _PAD3, "attention biases", {"attention_bias": False}),
    ("glm4_moe", _PAD3, "use_qk_norm", {"use_qk_norm": False}),
    ("glm4_moe", _PAD3, "q/k/v biases", {"attention_bias": False}),
    ("glm4_moe", _PAD3, "group-limited routing (2 of 4 groups)", {"n_group": 1, "topk_group": 1}),
    ("glm4_moe", _PAD3, "routed_scaling_factor 2.5", {"routed_scaling_factor": 1.0}),
    ("glm4_moe", _PAD3, "norm_topk_prob", {"norm_topk_prob": False}),
    ("glm4_moe", _PAD3, "the dense first layer", {"first_k_dense_replace": 0}),
    ("glm4_moe_plain", _PAD3, "a quarter of each head rotated", {"rope_parameters": dict(_ROPE, partial_rotary_factor=1.0)}),
    ("dots1", _PAD3, "sliding window 4 on layers 2, 3", {"layer_types": ["full_attention"] * 4}),
    ("dots1", _PAD3, "q/k/v/o biases", {"attention_bias": False}),
    ("dots1", _PAD3, "norm_topk_prob false", {"norm_topk_prob": True}),
    ("solar_open", _PAD3, "group-limited routing (1 of 2 groups)", {"n_group": 1, "topk_group": 1}),
    ("solar_open", _PAD3, "q/k/v biases", {"attention_bias": False}),
    ("youtu", _PAD3, "rope_interleave", {"rope_interleave": False}),
    ("ministral3", _LONG, "query temperature (beta 0.5)", {"rope_parameters": dict(MINISTRAL3_YARN, llama_4_scaling_beta=0.0)}),
    ("ministral3", _LONG, "YaRN factor 2", {"rope_parameters": dict(MINISTRAL3_YARN, factor=1.0)}),
    ("ministral3_swa", _PAD3, "sliding window 4", {"sliding_window": None}),
    ("nanochat", _PAD3, "final soft-cap 5", {"final_logit_softcapping": None}),
    ("nanochat_bias", _PAD3, "attention biases", {"attention_bias": False}),
    ("hunyuan_dense", _PAD3, "the NTK alpha", {"rope_parameters": dict(HUNYUAN_NTK, alpha=1.0)}),
    ("hunyuan_dense_bias", _PAD3, "attention biases", {"attention_bias": False}),
    ("apertus", _PAD3, "xIELU (not relu2)", {"hidden_act": "relu2"}),
    ("apertus", _PAD3, "llama3 rotary", {"rope_parameters": _ROPE}),
    ("apertus_bias", _PAD3, "attention biases", {"attention_bias": False}),
    ("granitemoeshared", _PAD3, "the shared MLP", {"shared_intermediate_size": 0}),
    ("granitemoeshared", _PAD3, "attention_multiplier 0.2", {"attention_multiplier": 1.0}),
    ("minimax_m2", _PAD3, "rotary on 8 of 16 dims",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 5e6, "partial_rotary_factor": 1.0}}),
    ("exaone_moe", _PAD3, "no rope on the full layer 3", {"layer_types": ["sliding_attention"] * 4}),
    ("exaone_moe", _PAD3, "mlp_layer_types", {"mlp_layer_types": ["dense", "sparse", "sparse", "sparse"]}),
    ("ernie4_5_moe", _PAD3, "the dense first layer", {"moe_layer_start_index": 0}),
    ("ernie4_5_moe_bias", _PAD3, "moe_layer_interval 2", {"moe_layer_interval": 1}),
    ("hunyuan_moe", _PAD3, "top-2 routing (not top-1)", {"moe_topk": 1}),
    ("nemotron", _PAD3, "half of each head rotated", {"rope_parameters": dict(_ROPE, partial_rotary_factor=1.0)}),
    ("nemotron_bias", _PAD3, "MLP biases", {"mlp_bias": False}),
    ("gpt_bigcode_mha", _PAD3, "scale_attn_weights false", {"scale_attn_weights": True}),
    ("gptj", _PAD3, "rotary_dim 8", {"rotary_dim": 16}),
    ("gpt_neo", _PAD3, "local layers (window 4)", {"window_size": 64}),
    ("minicpm3", _PAD3, "scale_emb 3", {"scale_emb": 1.0}),
    ("minicpm3", _PAD3, "scale_depth 3 (x 1.5)", {"scale_depth": 2.0}),
    ("minicpm3", _PAD3, "dim_model_base 16", {"dim_model_base": 64}),
    ("llama4", _LONG, "chunks of 4", {"attention_chunk_size": 64,
                                      "layer_types": ["chunked_attention"] * 3 + ["full_attention"]}),
    ("llama4", _LONG, "the query temperature", {"attn_temperature_tuning": False}),
    ("llama4", _PAD3, "weight-less q/k norms", {"use_qk_norm": False}),
    ("llama4", _PAD3, "experts on layers 1 and 3", {"moe_layers": [1]}),
    ("llama4_moe", _PAD3, "top-2 routing (not top-1)", {"num_experts_per_tok": 1}),
    ("gemma4", _PAD3, "sliding window 4", {"sliding_window": 64}),
    ("gemma4", _PAD3, "final soft-cap 5", {"final_logit_softcapping": None}),
    ("gemma4", _PAD3, "proportional rotary on a quarter of the full heads' pairs",
     {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                          "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 1.0,
                                             "rope_theta": 1000000.0}}}),
    # (num_kv_shared_layers and use_double_wide_mlp shape the checkpoint: layers 3-5 have no k/v weights and MLPs of
    # 192, so an export that ignored either would not read it)
    ("gemma4_k_eq_v", _PAD3, "values that are the keys' projection", {"attention_k_eq_v": False}),
    ("gemma4_moe", _PAD3, "top-2 routing (not top-1)", {"top_k_experts": 1}),
    ("gemma3n", _PAD3, "the layers on AltUp stream 1 (not 0)", {"altup_active_idx": 0}),
    ("gemma3n", _PAD3, "the corrected stream's scale", {"altup_correct_scale": False}),
    ("gemma3n", _PAD3, "Gaussian top-k on layers 0 and 1", {"activation_sparsity_pattern": [0.0] * 6}),
    ("gemma3n", _PAD3, "sliding window 4", {"sliding_window": 64}),
    ("glm4_moe_lite", _PAD3, "group-limited routing (2 of 4 groups)", {"n_group": 1, "topk_group": 1}),
    ("glm4_moe_lite", _PAD3, "routed_scaling_factor 2.5", {"routed_scaling_factor": 1.0}),
    ("hy_v3", _PAD3, "router_scaling_factor 2.5", {"router_scaling_factor": 1.0}),
    ("hy_v3_bias", _PAD3, "attention biases", {"attention_bias": False}),
    ("afmoe", _PAD3, "sliding window 4 on layers 0 and 2", {"sliding_window": 64}),
    ("afmoe", _PAD3, "route_scale 2", {"route_scale": 1.0}),
    ("afmoe_mup", _PAD3, "muP's embedding scale", {"mup_enabled": False}),
    ("mistral4", _LONG, "query temperature (beta 0.5)", {"rope_parameters": dict(MISTRAL4_YARN, llama_4_scaling_beta=0.0)}),
    ("mistral4", _PAD3, "group-limited routing (2 of 4 groups)", {"n_group": 1, "topk_group": 1}),
    ("mistral4", _PAD3, "routed_scaling_factor 2", {"routed_scaling_factor": 1.0}),
    ("opt", _PAD3, "biases", {"enable_bias": False}),
    ("opt_350m", _PAD3, "LayerNorms after each block", {"do_layer_norm_before": True}),
    ("phimoe", _PAD3, "router_jitter_noise 0.3", {"router_jitter_noise": 0.0}),
    ("phimoe", _LONG, "long_mscale 1.3", {"rope_parameters": dict(PHIMOE_ROPE, long_mscale=1.1)}),
    ("phimoe", _PAD3, "the window of 6", {"sliding_window": None}),
    ("bitnet", _PAD3, "relu2 (not silu)", {"hidden_act": "silu"}),
    ("falcon_rw", _PAD3, "ALiBi (not rotary)", {"alibi": False}),
    ("falcon", _PAD3, "rope_theta 10000", {"rope_parameters": {"rope_type": "default", "rope_theta": 100.0}}),
    ("mpt", _PAD3, "softmax_scale 0.3", {"attn_config.softmax_scale": None}),
    ("mpt", _PAD3, "clip_qkv 0.8", {"attn_config.clip_qkv": None}),
    ("dbrx", _PAD3, "clip_qkv 0.8", {"attn_config.clip_qkv": 100.0}),
    ("granite_swa", _PAD3, "rope bases per layer", {"layer_rope_theta": [10000.0] * 5}),
    ("granite_swa", _PAD3, "windows of 4", {"sliding_window": 64}),
    ("cohere2_moe", _PAD3, "the shared expert averaged (not summed)", {"shared_expert_combination_strategy": "sum"}),
    ("cohere2_moe", _PAD3, "windows of 4", {"sliding_window": 64}),
    ("cohere2_moe_derived", _PAD3, "sigmoid expert scores", {"expert_selection_fn": "softmax"}),
    ("cohere2_moe_derived", _PAD3, "RMS norms", {"rms_norm_eps": None}),
    ("mimo_v2_flash", _PAD3, "values scaled by 0.707", {"attention_value_scale": None}),
    ("mimo_v2_flash", _PAD3, "windows of 4", {"sliding_window": 64}),
    ("jetmoe", _PAD3, "top-2 experts (not top-1)", {"num_experts_per_tok": 1}),
    ("dbrx", _PAD3, "top-2 routing (not top-1)", {"ffn_config.moe_top_k": 1}),
    ("dbrx", _PAD3, "weights divided by their 2-norm (not their sum)", {"ffn_config.moe_normalize_expert_weights": 1.0}),
    ("longcat_flash", _PAD3, "routed_scaling_factor 1.5", {"routed_scaling_factor": 1.0}),
    ("longcat_flash", _PAD3, "top-2 routing (not top-3)", {"moe_topk": 3}),
    ("deepseek_v32", _PAD3, "the indexer's top 4 keys", {"index_topk": 64}),
    ("hy_v4", _PAD3, "the indexer's top 4 keys", {"index_topk": 64}),
    ("hy_v4", _PAD3, "hc_magnitude 2", {"hc_magnitude": 1.0}),
    ("hy_v4", _PAD3, "the experts clamped at 0.6", {"swiglu_limit": 10.0}),
    ("hy_v4", _PAD3, "group-limited routing (1 of 2 groups)", {"n_group": 1, "topk_group": 1}),
    ("hy_v4", _PAD3, "routed_scaling_factor 2", {"routed_scaling_factor": 1.0}),
    ("hy_v4_b", _PAD3, "hc_eps 0.05", {"hc_eps": 1e-6}),
    ("hy_v4_b", _PAD3, "layer 2's own indexer", {"indexer_types": ["full", "shared", "shared", "shared"]}),
    ("hy_v4_b", _PAD3, "attention biases", {"attention_bias": False}),
    ("hy_v4_b", _PAD3, "YaRN (factor 2, mscale_all_dim 1)", {"rope_parameters": {"rope_type": "default",
                                                                                 "rope_theta": 10000.0}}),
    ("glm_moe_dsa", _PAD3, "the indexer's top 4 keys", {"index_topk": 64}),
    ("glm_moe_dsa", _PAD3, "layer 2 its own indexer (index_topk_freq 2)", {"indexer_types": ["full", "shared", "shared"]}),
    ("axk1", _PAD3, "rotary pairs regrouped (rope_interleave)", {"rope_interleave": False}),
    ("axk1", _PAD3, "routed_scaling_factor 2", {"routed_scaling_factor": 1.0}),
    ("axk1", _PAD3, "group-limited routing (1 of 2 groups)", {"n_group": 1, "topk_group": 1}),
    ("axk2", _PAD3, "the indexer's top 4 keys", {"index_topk": 64}),
    ("axk2", _PAD3, "routed_scaling_factor 2", {"routed_scaling_factor": 1.0}),
    ("axk2_groups", _PAD3, "group-limited routing (1 of 2 groups)", {"n_group": None, "topk_group": None}),
    ("jais2", _PAD3, "relu² (not silu)", {"hidden_act": "silu"}),
    ("jais2_plain", _PAD3, "layer_norm_eps 0.1", {"layer_norm_eps": 1e-5}),
    ("cwm", _PAD3, "windows of 4 on layers 1-3", {"sliding_window": 64}),
    # (its default rotary against θ 1e4: llama3's scaling alone moves these short prompts by 0.008, 76 times the
    # tolerance, which cwm_rope's parity holds; the feature test asks for 100)
    ("cwm_rope", _PAD3, "its default rotary (llama3, θ 1e6; config.json without rope_parameters)",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}),
    ("hyperclovax", _PAD3, "the logits times 0.3", {"logits_scaling": 1.0}),
    ("hyperclovax", _PAD3, "a norm after each block (use_post_norm)", {"use_post_norm": False}),
    ("hyperclovax", _PAD3, "residual_multiplier 0.5", {"residual_multiplier": 1.0}),
    ("hyperclovax", _PAD3, "embedding_multiplier 2", {"embedding_multiplier": 1.0}),
    ("hyperclovax_plain", _PAD3, "attention_multiplier 0.2 (not head_dim^-0.5)", {"attention_multiplier": 0.25}),
    ("persimmon", _PAD3, "q/k LayerNorms (qk_layernorm)", {"qk_layernorm": False}),
    ("persimmon_plain", _PAD3, "layer_norm_eps 0.1", {"layer_norm_eps": 1e-5}),
    ("persimmon_plain", _PAD3, "rotary on a quarter of each head", {"rope_parameters": {"rope_type": "default",
                                                                   "rope_theta": 100.0, "partial_rotary_factor": 1.0}}),
    ("flint", _PAD3, "windows of 4", {"sliding_window": 64}),
    ("flint_plain", _PAD3, "norm_topk_prob off", {"norm_topk_prob": True}),
    ("kolibri", _PAD3, "windows of 4", {"sliding_window": 64}),
    ("kolibri_plain", _PAD3, "the sigmoids renormalised (norm_topk_prob)", {"norm_topk_prob": False}),
    ("deepseek_v4", _PAD3, "windows of 6", {"sliding_window": 64}),
    ("deepseek_v4", _PAD3, "the compressed layers (HCA, CSA)", {"layer_types": ["sliding_attention"] * 4}),
    ("deepseek_v4", _PAD3, "the indexer's top 3", {"index_topk": 64}),
    ("deepseek_v4", _PAD3, "the compressed layers' rotary base 100",
     {"rope_parameters": {"main": _v4_rope(10000.0), "compress": _v4_rope(10000.0)}}),
    ("deepseek_v4", _PAD3, "the rotary on half of each head", {"partial_rotary_factor": 1.0, "rope_parameters": {
        "main": _v4_rope(10000.0, 1.0), "compress": _v4_rope(100.0, 1.0)}}),
    ("deepseek_v4", _PAD3, "5 Sinkhorn-Knopp rounds", {"hc_sinkhorn_iters": 1}),
    ("deepseek_v4", _PAD3, "hc_eps 0.05", {"hc_eps": 1e-6}),
    ("deepseek_v4", _PAD3, "layer 0 routed by token id", {"mlp_layer_types": ["moe"] * 4}),
    ("deepseek_v4", _PAD3, "sqrt-softplus scores", {"scoring_func": "sigmoid"}),
    ("deepseek_v4", _PAD3, "routed_scaling_factor 2", {"routed_scaling_factor": 1.0}),
    ("deepseek_v4", _PAD3, "the experts and shared MLP clamped at 0.6", {"swiglu_limit": 10.0}),
    ("deepseek_v4_b", _PAD3, "sigmoid scores", {"scoring_func": "sqrtsoftplus"}),
    ("deepseek_v4_b", _PAD3, "the shared MLP's biases", {"mlp_bias": False}),
    ("deepseek_v4_b", _PAD3, "YaRN on the compressed layers",
     {"rope_parameters": {"main": _v4_rope(10000.0), "compress": _v4_rope(100.0)}}),
]

# (spec, a buffer the checkpoint carries, no config switch: a router's e_score_correction_bias, Gemma 4's
# layer_scalar): zeroing it must move the logits
CORRECTION_BIASES = [("mimo_v2_flash", "e_score_correction_bias"), ("gemma4", "layer_scalar"), ("glm4_moe_lite", "e_score_correction_bias"),
                     ("hy_v3", "e_score_correction_bias"), ("afmoe", "expert_bias"), ("glm4_moe", "e_score_correction_bias"), ("minimax_m2", "e_score_correction_bias"),
                     ("solar_open", "e_score_correction_bias"), ("dots1", "e_score_correction_bias"),
                     ("exaone_moe", "e_score_correction_bias"), ("ernie4_5_moe", "e_score_correction_bias"),
                     ("longcat_flash", "e_score_correction_bias"), ("hy_v4", "e_score_correction_bias"),
                     ("axk1", "e_score_correction_bias"), ("axk2", "e_score_correction_bias"),
                     ("kolibri", "e_score_correction_bias"), ("deepseek_v4", "e_score_correction_bias")]

# (spec, config edit, what the message must name)
BAD_CONFIGS = [
    ("modernbert_decoder", {"classifier_activation": "prelu"}, "classifier_activation"),
    ("seed_oss", {"attention_out_bias": "yes"}, "attention_out_bias"),
    ("arcee", {"hidden_act": "prelu"}, "prelu"),
    ("flex_olmo", {"num_experts_per_tok": 9}, "num_experts_per_tok"),
    ("glm4_moe", {"use_qk_norm": 1.5}, "use_qk_norm"),
    ("dots1", {"n_shared_experts": None}, "n_shared_experts"),
    ("solar_open", {"n_group": 3}, "n_group"),
    ("ministral3", {"rope_parameters": {k: v for k, v in MINISTRAL3_YARN.items() if k != "llama_4_scaling_beta"}},
     "llama_4_scaling_beta"),
    ("hunyuan_dense", {"rope_parameters": dict(HUNYUAN_NTK, alpha=-2.0)}, "alpha"),
    ("granitemoeshared", {"shared_intermediate_size": -1}, "shared_intermediate_size"),
    ("ernie4_5_moe", {"moe_layer_interval": 0}, "moe_layer_interval"),
    ("llama4", {"layer_types": ["chunked_attention", "full_attention", "sliding_attention", "full_attention"]},
     "layer_types[2]"),
    ("llama4", {"moe_layers": [1, 7]}, "moe_layers[1]"),
    ("gpt_neo", {"attention_layers": ["global", "local", "sparse", "local"]}, "attention_layers[2]"),
    ("gemma4", {"num_kv_shared_layers": 6}, "num_kv_shared_layers"),
    ("gemma4", {"per_layer_config": {"2": {"head_dim": 32, "sliding_window": 8}}}, "sliding_window"),
    ("gemma4", {"per_layer_config": {"9": {"head_dim": 32}}}, "per_layer_config"),
    ("gemma4", {"use_bidirectional_attention": "all"}, "use_bidirectional_attention"),
    ("gemma4", {"enable_moe_block": True}, "num_experts"),
    ("gemma4_moe", {"top_k_experts": 9}, "top_k_experts"),
    ("gemma3n", {"activation_sparsity_pattern": [0.95, 1.0, 0.0, 0.0, 0.0, 0.0]}, "activation_sparsity_pattern[1]"),
    ("gemma3n", {"intermediate_size": [96, 128, 96]}, "intermediate_size"),
    ("gemma3n", {"altup_active_idx": 3}, "altup_active_idx"),
    ("glm4_moe_lite", {"mlp_layer_types": ["dense", "moe", "sparse", "dense"]}, "mlp_layer_types[1]"),
    ("apertus1p5", {"output_vocab_size": 999}, "output_vocab_size"),
    ("hy_v3", {"num_shared_experts": -1}, "num_shared_experts"),
    ("afmoe", {"global_attn_every_n_layers": 0, "layer_types": None}, "global_attn_every_n_layers"),
    ("afmoe", {"mup_enabled": "on"}, "mup_enabled"),
    ("mistral4", {"rope_parameters": dict(MISTRAL4_YARN, partial_rotary_factor=0.25)}, "qk_rope_head_dim"),
    ("opt", {"layer_norm_elementwise_affine": False}, "layer_norm_elementwise_affine"),
    ("bloom", {"apply_residual_connection_post_layernorm": True}, "apply_residual_connection_post_layernorm"),
    ("phimoe", {"rope_parameters": {k: v for k, v in PHIMOE_ROPE.items() if k != "long_mscale"}}, "long_mscale"),
    ("opt", {"word_embed_proj_dim": 0}, "word_embed_proj_dim"),
    ("mistral4", {"rope_parameters": {k: v for k, v in MISTRAL4_YARN.items() if k != "llama_4_scaling_beta"}},
     "llama_4_scaling_beta"),
    ("hunyuan_moe", {"moe_topk": [1, 2, 1, 2]}, "moe_topk[1]"),
    ("exaone_moe", {"mlp_layer_types": ["dense", "moe", "dense", "sparse"]}, "mlp_layer_types[1]"),
    ("ministral", {"layer_types": ["sliding_attention", "full_attention", "chunked_attention", "full_attention"]},
     "layer_types[2]"),
    ("falcon_7b", {"multi_query": False, "num_kv_heads": 2}, "num_kv_heads"),
    ("falcon", {"num_ln_in_parallel_attn": 3}, "num_ln_in_parallel_attn"),
    ("mpt", {"attn_config": [1, 2]}, "attn_config"),
    ("dbrx", {"ffn_config": dict(DBRX["ffn_config"], moe_normalize_expert_weights=-1.0)}, "moe_normalize_expert_weights"),
    ("granite_swa", {"layer_rope_theta": [10000.0, 0.0]}, "layer_rope_theta"),
    ("granite_swa", {"sliding_window": None}, "sliding_window"),
    ("cohere2_moe", {"expert_selection_fn": "relu"}, "expert_selection_fn"),
    ("cohere2_moe", {"shared_expert_combination_strategy": "max"}, "shared_expert_combination_strategy"),
    ("dbrx", {"ffn_config": dict(DBRX["ffn_config"], ffn_act_fn={"name": "silu", "inplace": True})}, "ffn_act_fn"),
    ("longcat_flash", {"zero_expert_num": -1}, "zero_expert_num"),
    ("longcat_flash", {"q_lora_rank": None}, "q_lora_rank"),
    ("deepseek_v32", {"index_head_dim": 4}, "index_head_dim"),
    ("deepseek_v32", {"index_topk": 0}, "index_topk"),
    ("hy_v4", {"indexer_types": ["shared", "full", "full", "full"]}, "indexer_types"),
    ("hy_v4", {"indexer_types": ["full", "sparse", "full", "full"]}, "indexer_types"),
    ("hy_v4", {"hc_mult": 0}, "hc_mult"),
    ("glm_moe_dsa", {"index_topk_pattern": "SFF"}, "index_topk_pattern"),
    ("glm_moe_dsa", {"index_topk_pattern": "FX"}, "index_topk_pattern"),
    ("axk2", {"gated_norm_rank": 0}, "gated_norm_rank"),
    ("deepseek_v4", {"layer_types": ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"]},
     "layer_types"),
    ("deepseek_v4", {"mlp_layer_types": ["hash_moe", "dense", "moe", "moe"]}, "mlp_layer_types"),
    ("deepseek_v4", {"scoring_func": "relu"}, "scoring_func"),
    ("deepseek_v4", {"scoring_func": "softmax"}, "scoring_func"),  # (transformers' class has no softmax activation)
    ("deepseek_v4", {"o_groups": 3}, "o_groups"),
    ("deepseek_v4", {"compress_rates": {"compressed_sparse_attention": 0, "heavily_compressed_attention": 4}},
     "compressed_sparse_attention"),
    ("deepseek_v4", {"hc_sinkhorn_iters": 0}, "hc_sinkhorn_iters"),
    ("deepseek_v4", {"index_head_dim": 4}, "index_head_dim"),
]


# A lineage's first spec runs every forward case; its further specs (config variants of the same graph
# function) the two that see the most: a left-padded batch and gapped positions, and a single row.
VARIANT_CASES = (models.Case(3, 12, (0, 3, 11)), models.Case(2, 10, gapped=True), models.Case(1, 7))
_seen = set()
for _entry in SPECS:
    if _entry["arch"] in _seen and _entry.get("cases") == models.DEFAULT_CASES:
        _entry["cases"] = VARIANT_CASES
    _seen.add(_entry["arch"])

