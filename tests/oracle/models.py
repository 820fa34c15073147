"""Tiny-checkpoint factory for the oracle tests.

Every variant is a small decoder-only causal LM (hidden 64, 2 layers (3 for gemma2_layer_types and
the Gemma 3 ones), 4 heads, vocab ~200)
built with transformers from an explicit config, with fixed seeds, saved with
`save_pretrained` (plus `generation_config.json`) and, for the "old format" variants, with its
config.json rewritten by hand the way transformers 4.x wrote it (`rope_scaling` + top-level
`rope_theta`, `torch_dtype`, no `head_dim` / `layer_types`).

Weights are NOT transformers' default init (normal(0, 0.02)): with that init attention is almost
uniform and logits are ~1e-2, so a wrong RoPE, a missing norm weight or a missing bias would
change the logits by less than the 1e-4 parity tolerance. `_init_weights` draws weights so that
activations are O(1), attention is peaked (q/k gain), norm weights are not 1 and biases are
not 0. `test_parity.py::test_variant_is_distinguishable` proves, for every feature, that the
reference logits move by far more than the tolerance when the feature is toggled.

Every builder checks itself: after saving (and rewriting config.json), the checkpoint is loaded
back with `AutoModelForCausalLM.from_pretrained` and must give exactly the logits of the model
that was saved (upcast for the fp16/bf16 checkpoints).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import torch

import transformers
from transformers import (
    AutoModelForCausalLM,
    Gemma2Config,
    Gemma2ForCausalLM,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GemmaConfig,
    GemmaForCausalLM,
    GenerationConfig,
    GraniteConfig,
    GraniteForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    Olmo2Config,
    Olmo2ForCausalLM,
    Starcoder2Config,
    Starcoder2ForCausalLM,
)

ARCHS = {
    "llama": (LlamaConfig, LlamaForCausalLM),
    "mistral": (MistralConfig, MistralForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM),
    # the decoder template's other families
    "granite": (GraniteConfig, GraniteForCausalLM),
    "olmo2": (Olmo2Config, Olmo2ForCausalLM),
    "starcoder2": (Starcoder2Config, Starcoder2ForCausalLM),
    "gemma": (GemmaConfig, GemmaForCausalLM),
    "gemma2": (Gemma2Config, Gemma2ForCausalLM),
    "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM),
}

# The architectures hfx must support; an unsupported-architecture error lists them.
SUPPORTED_ARCHITECTURES = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
                           "GraniteForCausalLM", "Olmo2ForCausalLM", "Starcoder2ForCausalLM",
                           "GemmaForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM", "OlmoForCausalLM",
                           "SmolLM3ForCausalLM", "PhiForCausalLM", "StableLmForCausalLM", "GlmForCausalLM",
                           "Glm4ForCausalLM", "Ernie4_5ForCausalLM", "Exaone4ForCausalLM", "CohereForCausalLM",
                           "Cohere2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM")

# The Gemma family's RMSNorm multiplies by (1 + weight) and its configs default head_dim to 256:
# an old-format rewrite must keep head_dim even when it is hidden_size / heads.
GEMMA_FAMILY = ("gemma", "gemma2", "gemma3")

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

PAD_TOKEN = 0


# ---- input cases ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One ORT / transformers input: `batch` rows of `seq` tokens; row r is left-padded with
    pads[r] padding tokens (attention_mask 0). pads=() means no padding."""

    batch: int
    seq: int
    pads: tuple = ()
    gapped: bool = False  # position_ids with random gaps (steps 1..3) instead of 0, 1, 2, ...

    @property
    def id(self) -> str:
        s = f"b{self.batch}s{self.seq}"
        if any(self.pads):
            s += "-leftpad" + "_".join(str(p) for p in self.pads)
        if self.gapped:
            s += "-gappedpos"
        return s


def make_inputs(case: Case, vocab_size: int, seed: int = 0) -> dict:
    """input_ids / attention_mask / position_ids (int64 numpy) for `case`.

    position_ids are what generate() computes: cumsum(mask) - 1, padded positions set to 0
    (transformers 5.24 `_prepare_position_ids_for_generation`: masked_fill(mask == 0, 0))."""
    rng = np.random.default_rng([seed, case.batch, case.seq, *case.pads])
    ids = rng.integers(3, vocab_size, size=(case.batch, case.seq), dtype=np.int64)
    mask = np.ones((case.batch, case.seq), dtype=np.int64)
    for row, pad in enumerate(case.pads):
        assert 0 <= pad < case.seq, case
        mask[row, :pad] = 0
        ids[row, :pad] = PAD_TOKEN
    if case.gapped:
        # RoPE attention only sees position differences, so uniformly shifted positions (e.g.
        # arange instead of the left-padding-aware ids) change the logits by ~1e-6: gaps make
        # a graph that ignores position_ids fail.
        assert not any(case.pads), case
        steps = rng.integers(1, 4, size=(case.batch, case.seq), dtype=np.int64)
        steps[:, 0] = 0
        pos = np.cumsum(steps, axis=-1)
    else:
        pos = np.clip(np.cumsum(mask, axis=-1) - 1, 0, None).astype(np.int64)
    return {"input_ids": ids, "attention_mask": mask, "position_ids": pos}


# (1,1) single token, (1,7), (2,5), (3,12), and two left-padded batches (one row with a single
# real token, so most of its query rows are fully masked).
DEFAULT_CASES = (
    Case(1, 1),
    Case(1, 7),
    Case(2, 5),
    Case(3, 12),
    Case(3, 12, (0, 3, 11)),
    Case(2, 9, (4, 1)),
    Case(2, 10, gapped=True),
)


# ---- variants -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    arch: str                       # key of ARCHS
    config: dict                    # kwargs of the transformers config class
    doc: str = ""
    dtype: str = "float32"          # dtype of the saved checkpoint
    config_format: str = "new"      # "new": as save_pretrained writes it; "old": 4.x style
    old_rope_type_key: str = "rope_type"  # "type" for the legacy spelling in rope_scaling
    old_drop_rope_theta: bool = False     # old format without rope_theta (defaults to 10000)
    shard_size: str | None = None   # save_pretrained(max_shard_size=...) -> shards + index
    embed_std: float = 1.0
    seed: int = 0
    cases: tuple = DEFAULT_CASES
    twin: str | None = None         # a variant that must give identical reference logits
    # norm weights are drawn from norm_offset + U(0, 1): 0.5 gives 0.5..1.5 for x*w norms; the
    # Gemma family's x*(1+w) norms use -0.5 (effective 0.5..1.5 too)
    norm_offset: float = 0.5
    # old format only: keys set (value not None) or removed (value None) after the generic rewrite
    old_extra: dict | None = None

    @property
    def vocab_size(self) -> int:
        return self.config["vocab_size"]

    @property
    def architecture(self) -> str:
        return ARCHS[self.arch][1].__name__


LLAMA = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-6,
    bos_token_id=1,
    eos_token_id=2,
)

MISTRAL = dict(
    vocab_size=192,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-5,
    bos_token_id=1,
    eos_token_id=2,
)

QWEN2 = dict(
    vocab_size=200,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-6,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    bos_token_id=1,
    eos_token_id=2,
)

QWEN3 = dict(QWEN2, head_dim=32)


# Tied embeddings are also the output projection: scale them like one (logits O(1), not O(10)).
TIED_EMBED_STD = 0.125


def _llama(**kw):
    return dict(LLAMA, **kw)


LLAMA3_ROPE = {
    # head_dim 16, theta 1e4: wavelengths 6.3, 19.9, 62.8, ... With original 32 -> high_freq_wavelen
    # 8, low_freq_wavelen 32: one frequency kept, one smoothed, the rest divided by factor.
    "rope_type": "llama3",
    "rope_theta": 10000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 32,
}

DYNAMIC_CASES = (
    Case(1, 1),
    Case(1, 7),
    Case(2, 12),                  # below max_position_embeddings (16): no scaling
    Case(1, 16),                  # max position + 1 == 16: still no scaling
    Case(1, 17),                  # just past it: scaled
    Case(1, 24),
    Case(2, 24, (2, 5)),          # scaled by max(position_ids)+1 = 22 over the whole batch, not 24
    Case(3, 20, (0, 9, 19)),
    Case(2, 10, gapped=True),     # positions up to ~27: scaled by max(position_ids)+1, not by 10
)

GRANITE = dict(
    LLAMA,
    vocab_size=160,
    embedding_multiplier=3.0,
    residual_multiplier=0.5,
    attention_multiplier=0.2,
    logits_scaling=4.0,
)

OLMO2 = dict(
    vocab_size=176,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-6,
    rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)

STARCODER2 = dict(
    vocab_size=144,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    norm_epsilon=1e-5,
    rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
    sliding_window=4,
    use_bias=True,
    tie_word_embeddings=False,
    bos_token_id=1,
    eos_token_id=2,
)

_GEMMA_COMMON = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)

GEMMA = dict(
    _GEMMA_COMMON,
    vocab_size=208,
    num_key_value_heads=1,
    head_dim=32,
    hidden_act="gelu_pytorch_tanh",
    rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
)

GEMMA2 = dict(
    _GEMMA_COMMON,
    vocab_size=224,
    head_dim=16,
    hidden_activation="gelu_pytorch_tanh",
    rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    sliding_window=4,
    query_pre_attn_scalar=24,
    attn_logit_softcapping=8.0,
    final_logit_softcapping=5.0,
)

GEMMA3 = dict(
    _GEMMA_COMMON,
    vocab_size=240,
    num_hidden_layers=3,
    head_dim=16,
    hidden_activation="gelu_pytorch_tanh",
    rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 200000.0},
                     "sliding_attention": {"rope_type": "default", "rope_theta": 5000.0}},
    sliding_window=4,
    sliding_window_pattern=3,
    query_pre_attn_scalar=12,
)

GEMMA3_LINEAR_ROPE = {
    "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1000000.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
}

VARIANTS_LIST = [
    # --- Llama: RoPE flavours ---
    Variant("llama_default", "llama", _llama(), "default RoPE, GQA 4 heads / 2 kv heads",
            cases=DEFAULT_CASES + (Case(1, 72),)),  # positions past max_position_embeddings
    Variant("llama_theta", "llama", _llama(rope_parameters={"rope_type": "default", "rope_theta": 50000.0}),
            "default RoPE with rope_theta 50000 (new format: rope_parameters)"),
    Variant("llama_linear", "llama", _llama(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}),
            "linear RoPE scaling, factor 2"),
    Variant("llama_dynamic", "llama",
            _llama(max_position_embeddings=16,
                   rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}),
            "dynamic NTK RoPE, factor 2, max_position_embeddings 16", cases=DYNAMIC_CASES),
    Variant("llama_llama3", "llama", _llama(max_position_embeddings=128, rope_parameters=dict(LLAMA3_ROPE)),
            "llama3 RoPE: factor 8, low/high_freq_factor 1/4, original_max_position_embeddings 32"),
    Variant("llama_yarn", "llama",
            _llama(rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0,
                                    "original_max_position_embeddings": 16}),
            "YaRN: factor 4, original_max_position_embeddings 16, beta_fast/slow defaults, "
            "attention_factor default 0.1*ln(4)+1",
            cases=DEFAULT_CASES + (Case(1, 40),)),
    Variant("llama_yarn_explicit", "llama",
            _llama(rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0,
                                    "original_max_position_embeddings": 16, "beta_fast": 16.0,
                                    "beta_slow": 2.0, "attention_factor": 1.25, "truncate": False}),
            "YaRN with explicit beta_fast 16, beta_slow 2, attention_factor 1.25, truncate false"),
    # --- Llama: structure ---
    Variant("llama_tied", "llama", _llama(tie_word_embeddings=True),
            "tie_word_embeddings: no lm_head.weight in the checkpoint", embed_std=TIED_EMBED_STD),
    Variant("llama_bias", "llama", _llama(attention_bias=True, mlp_bias=True),
            "attention_bias and mlp_bias (q/k/v/o and gate/up/down biases)"),
    Variant("llama_mha", "llama", _llama(num_key_value_heads=4), "MHA: 4 heads, 4 kv heads"),
    Variant("llama_mqa", "llama", _llama(num_key_value_heads=1), "MQA: 4 heads, 1 kv head"),
    Variant("llama_gqa", "llama", _llama(num_attention_heads=8, num_key_value_heads=2),
            "GQA 8 heads / 2 kv heads (head_dim 8, 4 query heads per kv head)"),
    Variant("llama_head_dim", "llama", _llama(head_dim=32),
            "explicit head_dim 32 != hidden 64 / 4 heads (q_proj 64->128, o_proj 128->64)"),
    Variant("llama_eps5", "llama", _llama(rms_norm_eps=1e-5), "rms_norm_eps 1e-5 (small embeddings)",
            embed_std=0.003),
    Variant("llama_eps6", "llama", _llama(rms_norm_eps=1e-6), "rms_norm_eps 1e-6 (small embeddings)",
            embed_std=0.003),
    # --- Llama: config.json written the transformers 4.x way ---
    Variant("llama_oldcfg", "llama", _llama(rope_parameters={"rope_type": "default", "rope_theta": 50000.0}),
            "old format: top-level rope_theta 50000, rope_scaling null, torch_dtype, no head_dim",
            config_format="old", twin="llama_theta"),
    Variant("llama_oldcfg_linear", "llama",
            _llama(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}),
            'old format: rope_scaling {"type": "linear", "factor": 2.0}, no rope_theta (default 10000)',
            config_format="old", old_rope_type_key="type", old_drop_rope_theta=True, twin="llama_linear"),
    Variant("llama_oldcfg_llama3", "llama", _llama(max_position_embeddings=128, rope_parameters=dict(LLAMA3_ROPE)),
            'old format: rope_scaling {"rope_type": "llama3", ...} + top-level rope_theta',
            config_format="old", twin="llama_llama3"),
    # --- Llama: checkpoint dtypes and sharding (same weights as llama_default) ---
    Variant("llama_bf16", "llama", _llama(), "llama_default saved as bfloat16", dtype="bfloat16"),
    Variant("llama_fp16", "llama", _llama(), "llama_default saved as float16", dtype="float16"),
    Variant("llama_sharded", "llama", _llama(), "llama_default in 5 shards + model.safetensors.index.json",
            shard_size="100KB", twin="llama_default"),
    # --- Mistral ---
    Variant("mistral_swa", "mistral", dict(MISTRAL, sliding_window=4),
            "sliding_window 4 (every layer), shorter than the test sequences"),
    Variant("mistral_noswa", "mistral", dict(MISTRAL, sliding_window=None), "sliding_window null"),
    # --- Qwen2 ---
    Variant("qwen2", "qwen2", dict(QWEN2), "q/k/v bias (no o bias), rope_theta 1e6"),
    Variant("qwen2_swa", "qwen2",
            dict(QWEN2, use_sliding_window=True, sliding_window=4, max_window_layers=1),
            "use_sliding_window, sliding_window 4, max_window_layers 1: layer 0 full, layer 1 sliding "
            "(config.json has layer_types as save_pretrained writes it)"),
    Variant("qwen2_swa_derived", "qwen2",
            dict(QWEN2, use_sliding_window=True, sliding_window=4, max_window_layers=1),
            "qwen2_swa in the old format: no layer_types (derive from max_window_layers), top-level rope_theta",
            config_format="old", twin="qwen2_swa"),
    # --- Qwen3 ---
    Variant("qwen3", "qwen3", dict(QWEN3), "q_norm/k_norm, explicit head_dim 32"),
    Variant("qwen3_tied", "qwen3", dict(QWEN3, tie_word_embeddings=True), "qwen3 with tied embeddings",
            embed_std=TIED_EMBED_STD),
    # --- Granite, OLMo-2, StarCoder2, Gemma, Gemma 2, Gemma 3 text (test_gemma_granite_olmo2_starcoder2.py proves
    # that each listed feature moves the reference logits by >> the tolerance) ---
    Variant("granite", "granite", dict(GRANITE),
            "embedding_multiplier 3, residual_multiplier 0.5, attention_multiplier 0.2 (the attention "
            "scale, not head_dim^-0.5 = 0.25), logits_scaling 4 (divides the logits); GQA 4/2"),
    Variant("olmo2", "olmo2", dict(OLMO2),
            "no pre-norms: RMSNorm on the attention and MLP outputs inside the residual; q_norm/k_norm "
            "over the whole q/k projection (64 and 32 wide); GQA 4/2; rope_theta 500000"),
    Variant("starcoder2", "starcoder2", dict(STARCODER2),
            "LayerNorm with bias (norm_epsilon 1e-5), use_bias: q/k/v/o and c_fc/c_proj biases, "
            "c_fc -> gelu_pytorch_tanh -> c_proj MLP, sliding_window 4 on every layer, untied"),
    Variant("starcoder2_nobias", "starcoder2",
            dict(STARCODER2, use_bias=False, sliding_window=None, tie_word_embeddings=True),
            "use_bias false (no linear bias; the LayerNorms keep theirs), sliding_window null, tied",
            embed_std=TIED_EMBED_STD),
    Variant("gemma", "gemma", dict(GEMMA),
            "RMSNorm x*(1+w) in f32, embeddings * sqrt(64), gelu tanh gated MLP, head_dim 32 != 64/4, "
            "MQA (1 kv head), tied", embed_std=TIED_EMBED_STD, norm_offset=-0.5),
    Variant("gemma_oldcfg", "gemma", dict(GEMMA),
            'gemma in the old format: top-level rope_theta, torch_dtype, hidden_act "gelu" (which Gemma '
            "reads as the tanh approximation)", embed_std=TIED_EMBED_STD, norm_offset=-0.5,
            config_format="old", old_extra={"hidden_act": "gelu"}, twin="gemma"),
    Variant("gemma2", "gemma2", dict(GEMMA2),
            "four norms per layer, attn_logit_softcapping 8, final_logit_softcapping 5, "
            "query_pre_attn_scalar 24 != head_dim 16, sliding_window 4, layers [sliding, full] "
            "(the default pattern, written out as layer_types)", embed_std=TIED_EMBED_STD, norm_offset=-0.5),
    Variant("gemma2_oldcfg", "gemma2", dict(GEMMA2),
            "gemma2 in the old format: no layer_types (transformers derives sliding, full, ...), "
            'top-level rope_theta, cache_implementation "hybrid" as Gemma 2 checkpoints have it',
            embed_std=TIED_EMBED_STD, norm_offset=-0.5, config_format="old",
            old_extra={"cache_implementation": "hybrid", "hidden_act": "gelu_pytorch_tanh"}, twin="gemma2"),
    Variant("gemma2_layer_types", "gemma2",
            dict(GEMMA2, num_hidden_layers=3,
                 layer_types=["full_attention", "sliding_attention", "sliding_attention"]),
            "explicit layer_types [full, sliding, sliding] (not the default [sliding, full, sliding])",
            embed_std=TIED_EMBED_STD, norm_offset=-0.5),
    Variant("gemma3", "gemma3", dict(GEMMA3),
            "per-head q_norm/k_norm x*(1+w), sliding_window 4, sliding_window_pattern 3 -> layers "
            "[sliding, sliding, full], rope_theta 200000 (global) vs 5000 (local), "
            "query_pre_attn_scalar 12", embed_std=TIED_EMBED_STD, norm_offset=-0.5),
    Variant("gemma3_final_softcap", "gemma3", dict(GEMMA3, final_logit_softcapping=4.0),
            "gemma3 with final_logit_softcapping 4 (transformers' Gemma 3 applies it; its attention "
            "ignores attn_logit_softcapping, see test_gemma_granite_olmo2_starcoder2.py)", embed_std=TIED_EMBED_STD, norm_offset=-0.5),
    Variant("gemma3_linear", "gemma3", dict(GEMMA3, rope_parameters=dict(GEMMA3_LINEAR_ROPE)),
            "rope_parameters: full_attention linear factor 4 (theta 1e6), sliding_attention default "
            "(theta 10000, unscaled)", embed_std=TIED_EMBED_STD, norm_offset=-0.5,
            cases=DEFAULT_CASES + (Case(1, 40),)),
    Variant("gemma3_oldcfg_linear", "gemma3", dict(GEMMA3, rope_parameters=dict(GEMMA3_LINEAR_ROPE)),
            'gemma3_linear in the old format: rope_scaling {"rope_type": "linear", "factor": 4} + '
            "rope_theta 1e6 + rope_local_base_freq 10000, sliding_window_pattern 3, no layer_types",
            embed_std=TIED_EMBED_STD, norm_offset=-0.5, config_format="old", twin="gemma3_linear",
            old_extra={"_sliding_window_pattern": None, "use_bidirectional_attention": None,
                       "cache_implementation": "hybrid"},
            cases=DEFAULT_CASES + (Case(1, 40),)),
]

VARIANTS = {v.name: v for v in VARIANTS_LIST}
assert len(VARIANTS) == len(VARIANTS_LIST), "duplicate variant name"

# Pairs built from the same weights that differ in exactly one graph-relevant feature: their
# reference logits must differ by far more than the parity tolerance (else the oracle is blind
# to that feature). (a, b, case)
DISTINGUISHABLE = [
    ("llama_default", "llama_theta", Case(2, 12)),
    ("llama_default", "llama_linear", Case(2, 12)),
    ("llama_default", "llama_dynamic", Case(1, 24)),
    ("llama_default", "llama_llama3", Case(2, 12)),
    ("llama_default", "llama_yarn", Case(2, 12)),
    ("llama_yarn", "llama_yarn_explicit", Case(2, 12)),
    ("llama_eps5", "llama_eps6", Case(2, 12)),
    ("mistral_swa", "mistral_noswa", Case(2, 12)),
    ("qwen2", "qwen2_swa", Case(2, 12)),
]


# ---- building -------------------------------------------------------------------------------


def _init_weights(model: torch.nn.Module, seed: int, embed_std: float, norm_offset: float = 0.5) -> None:
    """Deterministic weights with O(1) activations and peaked attention (see module doc)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied parameters are listed once
            if name.endswith("norm.weight"):
                p.copy_(norm_offset + torch.rand(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                p.copy_(embed_std * torch.randn(p.shape, generator=g))
            elif p.ndim == 2:
                gain = 1.7 if (".q_proj" in name or ".k_proj" in name) else 1.0
                p.copy_(gain / math.sqrt(p.shape[1]) * torch.randn(p.shape, generator=g))
            else:
                raise AssertionError(f"unexpected parameter {name} {tuple(p.shape)}")


def build_model(variant: Variant) -> torch.nn.Module:
    config_cls, model_cls = ARCHS[variant.arch]
    kwargs = json.loads(json.dumps(variant.config))  # deep copy (rope dicts are mutated)
    config = config_cls(**kwargs)
    torch.manual_seed(variant.seed)
    model = model_cls(config)
    _init_weights(model, variant.seed, variant.embed_std, variant.norm_offset)
    # the oracle is eager attention (sdpa differs at fully-masked padded query rows)
    model.set_attn_implementation("eager")
    model.eval()
    return model


def _to_old_format(cfg: dict, variant: Variant) -> dict:
    """Rewrite a transformers-5 config.json the way transformers 4.x checkpoints look."""
    cfg = dict(cfg)
    rope = dict(cfg.pop("rope_parameters"))
    if "full_attention" in rope:
        # Gemma 3 (4.50+ configs): rope_theta + rope_scaling for the global layers, the local
        # layers' base in rope_local_base_freq (no scaling there)
        local = dict(rope.pop("sliding_attention"))
        assert local.pop("rope_type") == "default" and set(local) == {"rope_theta"}, local
        cfg["rope_local_base_freq"] = local["rope_theta"]
        rope = dict(rope.pop("full_attention"))
    theta = rope.pop("rope_theta")
    if not variant.old_drop_rope_theta:
        cfg["rope_theta"] = theta
    else:
        assert theta == 10000.0, "dropping rope_theta only works for the default 10000"
    rope_type = rope.pop("rope_type")
    if rope_type == "default" and not rope:
        cfg["rope_scaling"] = None
    else:
        cfg["rope_scaling"] = {variant.old_rope_type_key: rope_type, **rope}
    cfg["torch_dtype"] = cfg.pop("dtype")
    if cfg.get("head_dim") == cfg["hidden_size"] // cfg["num_attention_heads"] and variant.arch not in GEMMA_FAMILY:
        del cfg["head_dim"]
    cfg.pop("layer_types", None)
    cfg["transformers_version"] = "4.46.3"
    for key, value in (variant.old_extra or {}).items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    return dict(sorted(cfg.items()))


def _probe_logits(model: torch.nn.Module, vocab_size: int) -> torch.Tensor:
    inputs = make_inputs(Case(2, 10, (0, 3)), vocab_size, seed=12345)
    with torch.no_grad():
        return model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, use_cache=False).logits


def reference_attention(config: dict) -> str:
    """The attention implementation whose outputs are transformers' model: eager, except where transformers 5.24's
    eager path is known to compute something else than its default. Falcon with ALiBi: the model folds ALiBi into
    the mask, which FalconAttention's eager branch adds to scores that already carry it (twice); its default (sdpa)
    adds it once, as Falcon-RW was trained."""
    if config.get("model_type") == "falcon" and config.get("alibi"):
        return "sdpa"
    return "eager"


def checkpoint_attention(model_dir: os.PathLike) -> str:
    """reference_attention of a checkpoint directory's config.json."""
    import json
    from pathlib import Path

    return reference_attention(json.loads((Path(model_dir) / "config.json").read_text()))


def causal_lm_class(model_dir: os.PathLike):
    """transformers' AutoModelForCausalLM; for a model_type it does not map (Mistral 4's text model, which ships
    inside Mistral3ForConditionalGeneration), the class config.json's `architectures` names."""
    import json
    from pathlib import Path

    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    if cfg.get("model_type") in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return AutoModelForCausalLM
    return getattr(transformers, cfg["architectures"][0])


def load_reference_model(model_dir: os.PathLike) -> torch.nn.Module:
    """The oracle: transformers' eager implementation in float32 (checkpoints of other dtypes
    are upcast). Always a fresh instance: the dynamic-NTK rotary embedding keeps state between
    calls (see reference_logits)."""
    model = causal_lm_class(model_dir).from_pretrained(
        str(model_dir), dtype=torch.float32, attn_implementation=checkpoint_attention(model_dir)
    )
    model.eval()
    return model


def reference_logits(model_dir: os.PathLike, inputs: dict) -> np.ndarray:
    """transformers' logits for numpy `inputs` (input_ids, attention_mask, position_ids).

    A fresh model per call: `dynamic_rope_update` caches the grown inv_freq and only resets it
    when a later call is shorter than max_position_embeddings, so a 20-token call after a
    24-token call would silently reuse the 24-token frequencies. A stateless graph must match
    a fresh model."""
    model = load_reference_model(model_dir)
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inputs.items()},
                    use_cache=False)
    return out.logits.detach().to(torch.float32).numpy()


def save_checkpoint(variant: Variant, out_dir: os.PathLike) -> Path:
    """Build `variant` and write its checkpoint to out_dir (created); verify that transformers
    loads it back to the same model. Returns out_dir as a Path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build_model(variant)
    dtype = TORCH_DTYPES[variant.dtype]
    if dtype != torch.float32:
        # round the weights to the checkpoint dtype: the upcast checkpoint computes this
        # (rounding a copy, not model.to(dtype), keeps the fp32 rotary inv_freq buffer exact)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(dtype).to(torch.float32))
    expected = _probe_logits(model, variant.vocab_size)
    if dtype != torch.float32:
        model = model.to(dtype)

    save_kwargs = {}
    if variant.shard_size:
        save_kwargs["max_shard_size"] = variant.shard_size
    model.save_pretrained(str(out_dir), **save_kwargs)

    gen = GenerationConfig(
        bos_token_id=model.config.bos_token_id,
        eos_token_id=model.config.eos_token_id,
        max_new_tokens=8,
        do_sample=False,
    )
    gen.save_pretrained(str(out_dir))

    cfg_path = out_dir / "config.json"
    if variant.config_format == "old":
        cfg = json.loads(cfg_path.read_text())
        cfg_path.write_text(json.dumps(_to_old_format(cfg, variant), indent=2) + "\n")
    else:
        assert variant.config_format == "new", variant

    _verify_checkpoint(variant, out_dir, expected)
    return out_dir


def _verify_checkpoint(variant: Variant, out_dir: Path, expected: torch.Tensor) -> None:
    cfg = json.loads((out_dir / "config.json").read_text())
    assert cfg["architectures"] == [variant.architecture], cfg["architectures"]
    if variant.config_format == "old":
        assert "rope_parameters" not in cfg and "dtype" not in cfg and "torch_dtype" in cfg, cfg
        assert "layer_types" not in cfg, cfg
    else:
        assert "rope_parameters" in cfg and "dtype" in cfg and "rope_scaling" not in cfg, cfg
    files = sorted(p.name for p in out_dir.iterdir())
    if variant.shard_size:
        shards = [f for f in files if f.endswith(".safetensors")]
        assert len(shards) >= 2 and "model.safetensors.index.json" in files, files
    else:
        assert "model.safetensors" in files, files
    assert "generation_config.json" in files, files

    model = load_reference_model(out_dir)
    got = _probe_logits(model, variant.vocab_size)
    assert torch.equal(got, expected), (
        f"{variant.name}: transformers does not load {out_dir} back to the model that was saved "
        f"(max abs diff {(got - expected).abs().max().item():.3g})"
    )
    # the old-format rewrite must mean the same config
    want = build_model(variant).config
    for key in ("rope_parameters", "head_dim", "sliding_window", "layer_types", "num_key_value_heads",
                "tie_word_embeddings", "rms_norm_eps", "max_position_embeddings",
                # these families' own settings
                "hidden_act", "hidden_activation", "norm_epsilon", "use_bias", "embedding_multiplier",
                "residual_multiplier", "attention_multiplier", "logits_scaling", "query_pre_attn_scalar",
                "attn_logit_softcapping", "final_logit_softcapping"):
        if hasattr(want, key):
            got_value, want_value = getattr(model.config, key), getattr(want, key)
            if key == "rope_parameters":  # the legacy "type" spelling is kept beside rope_type
                got_value = {k: v for k, v in got_value.items() if k != "type"}
            assert got_value == want_value, (
                f"{variant.name}: {key} loads as {getattr(model.config, key)!r}, "
                f"built with {getattr(want, key)!r}"
            )


def num_parameters(model_dir: os.PathLike) -> int:
    """Parameter count as transformers reports it (tied weights once)."""
    model = load_reference_model(model_dir)
    return sum(p.numel() for p in model.parameters())


# ---- raw safetensors ------------------------------------------------------------------------


def read_safetensors(path: os.PathLike) -> tuple[dict, bytes]:
    """(header dict in file order, data section bytes)."""
    raw = Path(path).read_bytes()
    (n,) = np.frombuffer(raw[:8], dtype="<u8")
    n = int(n)
    header = json.loads(raw[8 : 8 + n])
    return header, raw[8 + n :]


def encode_safetensors(header: dict | str | bytes, data: bytes, header_len: int | None = None) -> bytes:
    """File bytes for `header` (dict, or raw JSON text to allow e.g. duplicate keys) and `data`.
    The header is space-padded to a multiple of 8 as safetensors does; `header_len` overrides the
    8-byte length prefix (to lie about it)."""
    if isinstance(header, dict):
        header = json.dumps(header, separators=(",", ":"))
    if isinstance(header, str):
        header = header.encode()
    header += b" " * (-len(header) % 8)
    n = len(header) if header_len is None else header_len
    return int(n).to_bytes(8, "little") + header + data


def drop_tensor(header: dict, data: bytes, name: str) -> tuple[dict, bytes]:
    """Remove tensor `name` and repack the data section so the file stays valid."""
    tensors = [(k, v) for k, v in header.items() if k != "__metadata__"]
    assert any(k == name for k, _ in tensors), name
    out_header = {"__metadata__": header["__metadata__"]} if "__metadata__" in header else {}
    chunks, off = [], 0
    for k, v in sorted(tensors, key=lambda kv: kv[1]["data_offsets"][0]):
        if k == name:
            continue
        b, e = v["data_offsets"]
        chunks.append(data[b:e])
        out_header[k] = dict(v, data_offsets=[off, off + (e - b)])
        off += e - b
    return out_header, b"".join(chunks)


def transformers_version() -> str:
    return transformers.__version__
