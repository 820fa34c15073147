"""Tiny checkpoints of test_decoders_encoders.py: Phi-3, GPT-NeoX, GPT-2, Mixtral, Qwen3-MoE and the
BERT-style encoders (BERT, RoBERTa, XLM-RoBERTa, bare and with a sequence-classification head);
the later decoders (OLMo, SmolLM3, Phi, StableLM, GLM, GLM-4, ERNIE 4.5, EXAONE 4, Cohere, Cohere 2, Qwen2-MoE,
GraniteMoE), the decoders' sequence classifiers and the encoders' token-classification, QA and masked-LM heads.

As models.py: each checkpoint is built by transformers from an explicit config with fixed seeds,
its weights drawn so that activations are O(1) and attention is peaked (not transformers' 0.02
init, under which a wrong rotary or a missing bias would hide below the 1e-4 tolerance), saved,
and loaded back by transformers, which must give exactly the outputs of the model that was saved.

Besides save_pretrained, checkpoints are written the ways real ones come:
  * "fused": model.state_dict() through safetensors.torch.save_file + config.json: transformers
    5's own module names, i.e. the MoE experts as 3-D tensors (mlp.experts.gate_up_proj [E, 2I, H],
    mlp.experts.down_proj [E, H, I], router mlp.gate.weight), where save_pretrained writes one
    tensor per expert and projection (Mixtral block_sparse_moe.experts.{e}.w1/w2/w3, Qwen3-MoE
    mlp.experts.{e}.gate_proj/up_proj/down_proj);
  * GPT-2 with the legacy causal-mask buffers attn.bias [1, 1, P, P] and attn.masked_bias [] in
    the safetensors (old GPT-2 checkpoints have them; transformers ignores them), with and without
    the "transformer." prefix (the hub's gpt2 checkpoints are GPT2Model-named);
  * config.json rewritten the transformers-4 way (rope_scaling "su" / "yarn" for Phi-3's
    longrope; GPT-NeoX's rotary_pct / rotary_emb_base, or no rotary key at all).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import torch

from transformers import (
    AutoModel,
    MPNetConfig,
    MPNetForMaskedLM,
    MPNetForQuestionAnswering,
    MPNetForSequenceClassification,
    MPNetForTokenClassification,
    MPNetModel,
    CohereConfig,
    CohereForCausalLM,
    Cohere2Config,
    Cohere2ForCausalLM,
    Ernie4_5Config,
    Ernie4_5ForCausalLM,
    Exaone4Config,
    Exaone4ForCausalLM,
    GlmConfig,
    GlmForCausalLM,
    Glm4Config,
    Glm4ForCausalLM,
    PhiConfig,
    PhiForCausalLM,
    StableLmConfig,
    StableLmForCausalLM,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForTokenClassification,
    RobertaForMaskedLM,
    RobertaForQuestionAnswering,
    RobertaForTokenClassification,
    XLMRobertaForMaskedLM,
    XLMRobertaForQuestionAnswering,
    XLMRobertaForTokenClassification,
    DebertaV2Config,
    DebertaV2ForMaskedLM,
    DebertaV2ForQuestionAnswering,
    DebertaV2ForSequenceClassification,
    DebertaV2ForTokenClassification,
    DebertaV2Model,
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForQuestionAnswering,
    DistilBertForSequenceClassification,
    DistilBertForTokenClassification,
    DistilBertModel,
    ModernBertConfig,
    ModernBertForMaskedLM,
    ModernBertForQuestionAnswering,
    ModernBertForSequenceClassification,
    ModernBertForTokenClassification,
    ModernBertModel,
    BertConfig,
    BertForSequenceClassification,
    BertModel,
    GenerationConfig,
    GemmaConfig,
    GemmaForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    DeepseekV2Config,
    DeepseekV2ForCausalLM,
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    GptOssConfig,
    GptOssForCausalLM,
    OlmoeConfig,
    OlmoeForCausalLM,
    GraniteMoeConfig,
    GraniteMoeForCausalLM,
    LlamaConfig,
    LlamaForSequenceClassification,
    MistralConfig,
    MistralForSequenceClassification,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
    OlmoConfig,
    Olmo3Config,
    OlmoForCausalLM,
    Olmo3ForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    Qwen2Config,
    Qwen2ForSequenceClassification,
    Qwen2MoeConfig,
    Qwen2MoeForCausalLM,
    Qwen3Config,
    Qwen3ForSequenceClassification,
    Qwen3MoeConfig,
    Qwen3MoeForCausalLM,
    RobertaConfig,
    RobertaForSequenceClassification,
    RobertaModel,
    SmolLM3Config,
    SmolLM3ForCausalLM,
    XLMRobertaConfig,
    XLMRobertaForSequenceClassification,
    XLMRobertaModel,
)

import decoder_lineages_models
import models

# arch key: (config class, model class, kind)   kind: "causal" | "encoder" | "classifier" (an encoder's) |
# "dec_classifier" (a decoder's *ForSequenceClassification: decoder inputs, logits [B, labels])
ARCHS = {
    "phi3": (Phi3Config, Phi3ForCausalLM, "causal"),
    "gpt_neox": (GPTNeoXConfig, GPTNeoXForCausalLM, "causal"),
    "gpt2": (GPT2Config, GPT2LMHeadModel, "causal"),
    "mixtral": (MixtralConfig, MixtralForCausalLM, "causal"),
    "qwen3_moe": (Qwen3MoeConfig, Qwen3MoeForCausalLM, "causal"),
    "olmo": (OlmoConfig, OlmoForCausalLM, "causal"),
    "olmo3": (Olmo3Config, Olmo3ForCausalLM, "causal"),
    "smollm3": (SmolLM3Config, SmolLM3ForCausalLM, "causal"),
    "qwen2_moe": (Qwen2MoeConfig, Qwen2MoeForCausalLM, "causal"),
    "granitemoe": (GraniteMoeConfig, GraniteMoeForCausalLM, "causal"),
    "gpt_oss": (GptOssConfig, GptOssForCausalLM, "causal"),
    "olmoe": (OlmoeConfig, OlmoeForCausalLM, "causal"),
    "deepseek_v2": (DeepseekV2Config, DeepseekV2ForCausalLM, "causal"),
    "deepseek_v3": (DeepseekV3Config, DeepseekV3ForCausalLM, "causal"),
    "phi": (PhiConfig, PhiForCausalLM, "causal"),
    "stablelm": (StableLmConfig, StableLmForCausalLM, "causal"),
    "glm": (GlmConfig, GlmForCausalLM, "causal"),
    "glm4": (Glm4Config, Glm4ForCausalLM, "causal"),
    "ernie4_5": (Ernie4_5Config, Ernie4_5ForCausalLM, "causal"),
    "exaone4": (Exaone4Config, Exaone4ForCausalLM, "causal"),
    "cohere": (CohereConfig, CohereForCausalLM, "causal"),
    "cohere2": (Cohere2Config, Cohere2ForCausalLM, "causal"),
    "llama_cls": (LlamaConfig, LlamaForSequenceClassification, "dec_classifier"),
    "mistral_cls": (MistralConfig, MistralForSequenceClassification, "dec_classifier"),
    "qwen2_cls": (Qwen2Config, Qwen2ForSequenceClassification, "dec_classifier"),
    "qwen3_cls": (Qwen3Config, Qwen3ForSequenceClassification, "dec_classifier"),
    "gemma_cls": (GemmaConfig, GemmaForSequenceClassification, "dec_classifier"),
    "bert": (BertConfig, BertModel, "encoder"),
    "bert_nopool": (BertConfig, lambda config: BertModel(config, add_pooling_layer=False), "encoder"),
    "bert_cls": (BertConfig, BertForSequenceClassification, "classifier"),
    "roberta": (RobertaConfig, RobertaModel, "encoder"),
    "roberta_cls": (RobertaConfig, RobertaForSequenceClassification, "classifier"),
    "xlmr": (XLMRobertaConfig, XLMRobertaModel, "encoder"),
    "xlmr_cls": (XLMRobertaConfig, XLMRobertaForSequenceClassification, "classifier"),
    "bert_tok": (BertConfig, BertForTokenClassification, "token_classifier"),
    "bert_qa": (BertConfig, BertForQuestionAnswering, "qa"),
    "bert_mlm": (BertConfig, BertForMaskedLM, "masked_lm"),
    "roberta_qa": (RobertaConfig, RobertaForQuestionAnswering, "qa"),
    "roberta_mlm": (RobertaConfig, RobertaForMaskedLM, "masked_lm"),
    "xlmr_tok": (XLMRobertaConfig, XLMRobertaForTokenClassification, "token_classifier"),
    "roberta_tok": (RobertaConfig, RobertaForTokenClassification, "token_classifier"),
    "xlmr_qa": (XLMRobertaConfig, XLMRobertaForQuestionAnswering, "qa"),
    "xlmr_mlm": (XLMRobertaConfig, XLMRobertaForMaskedLM, "masked_lm"),
    "distilbert": (DistilBertConfig, DistilBertModel, "encoder"),
    "distilbert_cls": (DistilBertConfig, DistilBertForSequenceClassification, "classifier"),
    "distilbert_tok": (DistilBertConfig, DistilBertForTokenClassification, "token_classifier"),
    "distilbert_qa": (DistilBertConfig, DistilBertForQuestionAnswering, "qa"),
    "distilbert_mlm": (DistilBertConfig, DistilBertForMaskedLM, "masked_lm"),
    "modernbert": (ModernBertConfig, ModernBertModel, "encoder"),
    "modernbert_cls": (ModernBertConfig, ModernBertForSequenceClassification, "classifier"),
    "modernbert_tok": (ModernBertConfig, ModernBertForTokenClassification, "token_classifier"),
    "modernbert_qa": (ModernBertConfig, ModernBertForQuestionAnswering, "qa"),
    "modernbert_mlm": (ModernBertConfig, ModernBertForMaskedLM, "masked_lm"),
    "mpnet": (MPNetConfig, MPNetModel, "encoder"),
    "mpnet_cls": (MPNetConfig, MPNetForSequenceClassification, "classifier"),
    "mpnet_tok": (MPNetConfig, MPNetForTokenClassification, "token_classifier"),
    "mpnet_qa": (MPNetConfig, MPNetForQuestionAnswering, "qa"),
    "mpnet_mlm": (MPNetConfig, MPNetForMaskedLM, "masked_lm"),
    "deberta": (DebertaV2Config, DebertaV2Model, "encoder"),
    "deberta_cls": (DebertaV2Config, DebertaV2ForSequenceClassification, "classifier"),
    "deberta_tok": (DebertaV2Config, DebertaV2ForTokenClassification, "token_classifier"),
    "deberta_qa": (DebertaV2Config, DebertaV2ForQuestionAnswering, "qa"),
    "deberta_mlm": (DebertaV2Config, DebertaV2ForMaskedLM, "masked_lm"),
    **decoder_lineages_models.ARCHS,
}
# encoders without token types: their graphs take input_ids and attention_mask only
UNTYPED = ("distilbert", "modernbert", "mpnet")

Case = models.Case


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    arch: str                 # key of ARCHS
    config: dict              # kwargs of the config class
    doc: str = ""
    layout: str = "save_pretrained"  # | "fused" (state_dict + save_file) | "legacy_buffers" | "hub_names"
    config_rewrite: str | None = None  # a key of CONFIG_REWRITES: config.json the transformers-4 way
    twin: str | None = None   # same weights and meaning as this spec (a layout / config-format twin)
    seed: int = 0
    embed_std: float = 1.0
    norm_offset: float = 0.5
    cases: tuple = ()         # forward cases (decoders: models.Case; encoders: EncCase)

    @property
    def kind(self) -> str:
        return ARCHS[self.arch][2]

    @property
    def architecture(self) -> str:
        return "BertModel" if self.arch == "bert_nopool" else ARCHS[self.arch][1].__name__

    @property
    def decoder_inputs(self) -> bool:
        """input_ids, attention_mask, position_ids (else an encoder's, with token_type_ids)."""
        return self.kind in ("causal", "dec_classifier")

    @property
    def token_types(self) -> bool:
        """An encoder with a token_type_ids input."""
        if self.arch.startswith("deberta"):  # as its config says (DeBERTa-v3 has none)
            return self.config.get("type_vocab_size", 0) > 0
        return not self.decoder_inputs and self.arch.split("_")[0] not in UNTYPED

    @property
    def vocab_size(self) -> int:
        return self.config["vocab_size"]


# ---- encoder inputs -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EncCase:
    """`batch` rows of `seq` tokens; row r has lengths[r] real tokens, right-padded (left-padded
    when `left`). types: token_type_ids 0 for the first half of each row's real tokens and 1 for
    the rest (a sentence pair), else all 0. pad_inside: a real token (mask 1) equal to
    pad_token_id in row 0 (RoBERTa's positions skip it, as transformers computes them from ids)."""

    batch: int
    seq: int
    lengths: tuple = ()
    types: bool = False
    left: bool = False
    pad_inside: bool = False
    pad_last: bool = False    # row 0's last real token is pad_token_id (a decoder classifier pools before it)

    @property
    def id(self) -> str:
        s = f"b{self.batch}s{self.seq}"
        if self.lengths and any(n != self.seq for n in self.lengths):
            s += ("-leftpad" if self.left else "-rightpad") + "_".join(str(self.seq - n) for n in self.lengths)
        if self.types:
            s += "-types"
        if self.pad_inside:
            s += "-padinside"
        if self.pad_last:
            s += "-padlast"
        return s


def make_encoder_inputs(case: EncCase, vocab_size: int, pad_id: int, seed: int = 0) -> dict:
    lengths = case.lengths or (case.seq,) * case.batch
    assert len(lengths) == case.batch and all(1 <= n <= case.seq for n in lengths), case
    rng = np.random.default_rng([seed, case.batch, case.seq, *lengths, case.types, case.left, case.pad_inside])
    ids = rng.integers(3, vocab_size, size=(case.batch, case.seq), dtype=np.int64)
    ids[ids == pad_id] = pad_id + 3  # no accidental pad tokens
    mask = np.zeros((case.batch, case.seq), np.int64)
    types = np.zeros((case.batch, case.seq), np.int64)
    for r, n in enumerate(lengths):
        real = slice(case.seq - n, case.seq) if case.left else slice(0, n)
        mask[r, real] = 1
        if case.types:
            start = (case.seq - n if case.left else 0) + (n + 1) // 2
            types[r, start:real.stop] = 1
    ids[mask == 0] = pad_id
    if case.pad_inside:
        row = np.flatnonzero(mask[0])
        assert len(row) >= 4, case
        ids[0, row[len(row) // 2]] = pad_id
    if case.pad_last:
        ids[0, np.flatnonzero(mask[0])[-1]] = pad_id
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


# ---- configs --------------------------------------------------------------------------------------

LONG_FACTOR = [1.3, 2.9, 7.7, 21.5]
SHORT_FACTOR = [1.0, 1.2, 1.9, 3.1]

PHI3 = dict(
    vocab_size=184,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    original_max_position_embeddings=16,
    rms_norm_eps=1e-5,
    tie_word_embeddings=False,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)

# head_dim 16, partial_rotary_factor 0.5: rotary dim 8, 4 factors. original 16, max 64: factor 4,
# attention_factor sqrt(1 + ln 4 / ln 16) = sqrt(1.5).
PHI3_LONGROPE = dict(rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.5,
                     short_factor=SHORT_FACTOR, long_factor=LONG_FACTOR, original_max_position_embeddings=16)

# max(position_ids)+1 vs original_max_position_embeddings 16, per forward call over the batch
LONGROPE_CASES = (
    Case(1, 1),
    Case(1, 7),
    Case(3, 12, (0, 3, 11)),
    Case(1, 16),                  # max position + 1 == 16: short factors
    Case(1, 17),                  # 17 > 16: long factors
    Case(2, 20, (5, 8)),          # 20 tokens, but max position + 1 = 15: short
    Case(2, 20, (3, 8)),          # max position + 1 = 17: long for both rows
    Case(3, 40, (0, 10, 30)),     # long
    Case(2, 10, gapped=True),     # 10 tokens, gapped positions up to ~27: long by position, not length
)
LONGROPE_TWIN_CASES = (Case(2, 12, (0, 3)), Case(1, 16), Case(2, 20, (3, 8)), Case(2, 20, (5, 8)))

NEOX = dict(
    vocab_size=168,
    hidden_size=64,
    intermediate_size=160,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=64,
    layer_norm_eps=1e-5,
    hidden_act="gelu",
    tie_word_embeddings=False,
    bos_token_id=1,
    eos_token_id=2,
)

GPT2 = dict(
    vocab_size=152,
    n_embd=64,
    n_layer=2,
    n_head=4,
    n_positions=64,
    activation_function="gelu_new",
    layer_norm_epsilon=1e-5,
    bos_token_id=1,
    eos_token_id=2,
)

MIXTRAL = dict(
    vocab_size=136,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    num_local_experts=4,
    num_experts_per_tok=2,
    sliding_window=4,
    rms_norm_eps=1e-5,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    tie_word_embeddings=False,
    bos_token_id=1,
    eos_token_id=2,
)

QWEN3_MOE = dict(
    vocab_size=216,
    hidden_size=64,
    intermediate_size=112,
    moe_intermediate_size=48,
    num_hidden_layers=3,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=32,
    num_experts=4,
    num_experts_per_tok=2,
    norm_topk_prob=False,
    decoder_sparse_step=1,
    mlp_only_layers=[1],
    max_position_embeddings=64,
    rms_norm_eps=1e-6,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    tie_word_embeddings=False,
    bos_token_id=1,
    eos_token_id=2,
)

# one small shape, each family's own keys on top
SMALL = dict(
    vocab_size=168,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)

OLMO = dict(SMALL, vocab_size=176, num_hidden_layers=2, tie_word_embeddings=False,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0})

# OLMo 3: OLMo 2's post-norm layers with q/k norms over the whole projection; three sliding layers
# (window 4) then a full one, each layer type with its own rotary (a larger theta on the full layers)
OLMO3 = dict(SMALL, tie_word_embeddings=False, sliding_window=4,
             layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
             rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                              "full_attention": {"rope_type": "default", "rope_theta": 500000.0}})
OLMO3_YARN_FULL = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 32.0,
                   "beta_slow": 1.0, "rope_theta": 500000.0}

# GPT-OSS: a small swiglu_limit so that the clamps bite; sinks drawn around 0 (norm_offset -0.5)
GPT_OSS = dict(SMALL, head_dim=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=4, swiglu_limit=0.6,
               max_position_embeddings=256, rms_norm_eps=1e-5,
               rope_parameters={"rope_type": "yarn", "factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                "truncate": False, "original_max_position_embeddings": 64, "rope_theta": 150000.0})

# DeepSeek: MLA (kv latent 16, rotary 8 of 8 + 8 dims, values 12 wide), layer 0 dense, then 1 shared + top-2
# of 8 routed experts in 4 groups of which 2 are kept
DEEPSEEK = dict(SMALL, num_key_value_heads=4, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8,
                num_experts_per_tok=2, n_group=4, topk_group=2, first_k_dense_replace=1, kv_lora_rank=16,
                qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12, rms_norm_eps=1e-6, max_position_embeddings=256)
DEEPSEEK_YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "beta_fast": 32.0,
                 "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "rope_theta": 10000.0}

# four layers: the default no_rope_layer_interval 4 leaves layer 3 without rope
SMOLLM3 = dict(SMALL, vocab_size=200, rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 50000.0})

BERT = dict(
    vocab_size=120,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    max_position_embeddings=64,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
    hidden_act="gelu",
    pad_token_id=0,
)
# RoBERTa: positions pad+1.. (max_position_embeddings = 64 + pad + 1), pad 1, two token types
ROBERTA = dict(BERT, vocab_size=128, max_position_embeddings=66, pad_token_id=1, bos_token_id=0, eos_token_id=2,
               layer_norm_eps=1e-5)
# XLM-R: one token type, as the real ones
XLMR = dict(ROBERTA, vocab_size=144, type_vocab_size=1)

LABELS3 = {"id2label": {0: "neg", 1: "neu", 2: "pos"}, "label2id": {"neg": 0, "neu": 1, "pos": 2}}

ENC_CASES = (
    EncCase(1, 1),
    EncCase(1, 7, types=True),
    EncCase(2, 5),
    EncCase(3, 12, (12, 9, 1), types=True),   # right-padded, one row of a single real token
    EncCase(2, 9, (9, 4)),
    EncCase(2, 8, (8, 5), left=True, types=True),
    EncCase(2, 11, (11, 8), pad_inside=True),
)
# a decoder classifier's batches: padded on either side, and a pad id inside row 0's text (transformers
# pools on ids, not the mask)
DEC_CLS_CASES = (
    EncCase(1, 1),
    EncCase(1, 7),
    EncCase(3, 12, (12, 9, 1)),
    EncCase(2, 8, (8, 5), left=True),
    EncCase(2, 11, (11, 8), pad_inside=True),
    EncCase(2, 9, (9, 6), pad_last=True),
)
ENC_CASES_NO_TYPES = tuple(dataclasses.replace(c, types=False) for c in ENC_CASES)

# MPNet: RoBERTa's positions from padding index 1, no token types, the relative bias (32 buckets, 8 exact per sign:
# rows of 12 tokens reach the logarithmic ones); a table of more rows than the 32 it reads
MPNET = dict(vocab_size=120, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             max_position_embeddings=66, pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5)

# DeBERTa-v3: no token types, no absolute positions, shared c2p + p2c projections over LayerNorm'd
# relative embeddings, log buckets 4 up to 8 (rows of 12 tokens reach past both)
DEBERTA_V3 = dict(BERT, type_vocab_size=0, position_biased_input=False, relative_attention=True, position_buckets=4,
                  max_relative_positions=8, pos_att_type=["p2c", "c2p"], share_att_key=True, norm_rel_ebd="layer_norm",
                  layer_norm_eps=1e-7)
# DeBERTa-v2: token types, absolute positions, its own pos_key_proj / pos_query_proj, plain distances up to 6,
# narrower embeddings projected up
DEBERTA_V2 = dict(BERT, type_vocab_size=2, position_biased_input=True, relative_attention=True, max_relative_positions=6,
                  pos_att_type="c2p|p2c", share_att_key=False, embedding_size=48, layer_norm_eps=1e-7)

# DistilBERT: no token types, LayerNorm eps fixed at 1e-12
DISTILBERT = dict(vocab_size=120, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=64,
                  activation="gelu", pad_token_id=0)
# ModernBERT: 4 layers, global every 3rd (layers 0 and 3), local window |i - j| <= 2 (local_attention 4), two
# rope bases; no biases by default
MODERNBERT = dict(vocab_size=120, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=96,
                  max_position_embeddings=64, hidden_activation="gelu", local_attention=4, global_attn_every_n_layers=3,
                  global_rope_theta=160000.0, local_rope_theta=10000.0, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  cls_token_id=1, sep_token_id=2, norm_eps=1e-5, classifier_activation="gelu")


def _phi3(**kw):
    return dict(PHI3, **kw)


SPECS_LIST = [
    # --- Phi-3 ---
    Spec("phi3_longrope", "phi3", _phi3(rope_parameters=dict(PHI3_LONGROPE)),
         "fused qkv_proj / gate_up_proj, GQA 4/2, partial_rotary_factor 0.5, longrope (short/long factors, "
         "original 16, max 64 -> attention_factor sqrt(1 + ln 4 / ln 16))", cases=LONGROPE_CASES),
    Spec("phi3_su", "phi3", _phi3(rope_parameters=dict(PHI3_LONGROPE)),
         'phi3_longrope in the 4.x format: rope_scaling {"type": "su", short/long, original 16} + top-level '
         "rope_theta, partial_rotary_factor, original_max_position_embeddings",
         config_rewrite="phi3_su", twin="phi3_longrope", cases=LONGROPE_TWIN_CASES),
    Spec("phi3_yarn", "phi3", _phi3(rope_parameters=dict(PHI3_LONGROPE)),
         'phi3_longrope with rope_scaling {"type": "yarn", short/long} (Phi-3\'s legacy name for longrope; '
         "original_max_position_embeddings only at the top level)",
         config_rewrite="phi3_yarn", twin="phi3_longrope", cases=LONGROPE_TWIN_CASES),
    Spec("phi3_factor", "phi3", _phi3(rope_parameters=dict(PHI3_LONGROPE, factor=2.0)),
         "longrope with an explicit factor 2 (attention_factor sqrt(1 + ln 2 / ln 16), not from 64/16)",
         cases=LONGROPE_TWIN_CASES),
    Spec("phi3_attn_factor", "phi3", _phi3(rope_parameters=dict(PHI3_LONGROPE, attention_factor=0.75)),
         "longrope with an explicit attention_factor 0.75", cases=LONGROPE_TWIN_CASES),
    Spec("phi3_swa", "phi3",
         _phi3(sliding_window=4, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                  "partial_rotary_factor": 1.0}),
         "default rope over the full head, sliding_window 4", cases=models.DEFAULT_CASES),
    # --- GPT-NeoX ---
    Spec("neox_parallel", "gpt_neox",
         dict(NEOX, use_parallel_residual=True, attention_bias=True,
              rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}),
         "per-head interleaved query_key_value with bias, parallel residual, rotary 0.25 of head_dim 16, "
         "LayerNorm, gelu, untied embed_out", cases=models.DEFAULT_CASES),
    Spec("neox_default_pct", "gpt_neox",
         dict(NEOX, use_parallel_residual=True, attention_bias=True,
              rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}),
         "neox_parallel in the 4.x format without rotary_pct (transformers' default 0.25) nor rotary_emb_base",
         config_rewrite="neox_no_rotary", twin="neox_parallel", cases=(Case(2, 12, (0, 3)),)),
    Spec("neox_sequential", "gpt_neox",
         dict(NEOX, use_parallel_residual=False, attention_bias=False,
              rope_parameters={"rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.5}),
         "sequential residual, no attention bias, rope_parameters.partial_rotary_factor 0.5, theta 20000",
         cases=models.DEFAULT_CASES),
    Spec("neox_rotary_pct", "gpt_neox",
         dict(NEOX, use_parallel_residual=False, attention_bias=False,
              rope_parameters={"rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.5}),
         "neox_sequential in the 4.x format: rotary_pct 0.5, rotary_emb_base 20000",
         config_rewrite="neox_rotary_pct", twin="neox_sequential", cases=(Case(2, 12, (0, 3)),)),
    # --- GPT-2 ---
    Spec("gpt2", "gpt2", dict(GPT2),
         "Conv1D weights, fused c_attn, learned positions (wpe), gelu_new, tied head, n_inner 4*64",
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("gpt2_scaled", "gpt2", dict(GPT2, scale_attn_by_inverse_layer_idx=True, n_inner=96),
         "scale_attn_by_inverse_layer_idx (layer i's scores / (i+1)), n_inner 96",
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("gpt2_noscale", "gpt2", dict(GPT2, scale_attn_weights=False, activation_function="gelu", n_inner=80),
         "scale_attn_weights false (no 1/sqrt(head_dim)), exact gelu, n_inner 80", seed=2,
         embed_std=models.TIED_EMBED_STD, cases=(Case(1, 7), Case(3, 12, (0, 3, 11)), Case(2, 10, gapped=True))),
    Spec("gpt2_legacy_buffers", "gpt2", dict(GPT2),
         "gpt2 with attn.bias [1,1,64,64] and attn.masked_bias [] in the safetensors",
         layout="legacy_buffers", twin="gpt2", embed_std=models.TIED_EMBED_STD, cases=(Case(3, 12, (0, 3, 11)),)),
    Spec("gpt2_hub_names", "gpt2", dict(GPT2),
         "gpt2 named as the hub's GPT-2 checkpoints: no 'transformer.' prefix (h.0.attn.c_attn.weight, wte, "
         "wpe, ln_f), no lm_head, attn.bias / attn.masked_bias buffers",
         layout="hub_names", twin="gpt2", embed_std=models.TIED_EMBED_STD, cases=(Case(3, 12, (0, 3, 11)),)),
    # --- Mixtral ---
    Spec("mixtral", "mixtral", dict(MIXTRAL),
         "top-2 of 4 experts (softmax, top-k, renormalised), sliding_window 4, GQA 4/2; per-expert "
         "block_sparse_moe.experts.{e}.w1/w2/w3 as save_pretrained writes", cases=models.DEFAULT_CASES),
    Spec("mixtral_fused", "mixtral", dict(MIXTRAL),
         "mixtral with transformers 5's fused 3-D experts (mlp.experts.gate_up_proj / down_proj, mlp.gate)",
         layout="fused", twin="mixtral", cases=(Case(3, 12, (0, 3, 11)), Case(2, 10, gapped=True))),
    # --- Qwen3-MoE ---
    Spec("qwen3_moe", "qwen3_moe", dict(QWEN3_MOE),
         "top-2 of 4 experts, norm_topk_prob false, mlp_only_layers [1] (layers 0, 2 sparse, 1 dense), "
         "q/k norms, head_dim 32; per-expert mlp.experts.{e}.gate_proj/up_proj/down_proj",
         cases=models.DEFAULT_CASES),
    Spec("qwen3_moe_fused", "qwen3_moe", dict(QWEN3_MOE),
         "qwen3_moe with fused 3-D experts (transformers 5 module names)",
         layout="fused", twin="qwen3_moe", cases=(Case(3, 12, (0, 3, 11)), Case(2, 10, gapped=True))),
    Spec("qwen3_moe_norm_step2", "qwen3_moe",
         dict(QWEN3_MOE, norm_topk_prob=True, decoder_sparse_step=2, mlp_only_layers=[]),
         "norm_topk_prob true, decoder_sparse_step 2 (layer 1 sparse, layers 0 and 2 dense), fused experts",
         layout="fused", seed=1, cases=models.DEFAULT_CASES),
    # --- OLMo ---
    Spec("olmo", "olmo", dict(OLMO),
         "LayerNorm without weight or bias (f32, eps 1e-5 whatever the config), GQA 4/2, no clip_qkv",
         cases=models.DEFAULT_CASES),
    Spec("olmo_clip", "olmo", dict(OLMO, clip_qkv=0.6, attention_bias=True),
         "clip_qkv 0.6 (q, k, v clamped after the projections), attention biases", seed=1,
         cases=models.DEFAULT_CASES),
    # --- OLMo 3 ---
    Spec("olmo3", "olmo3", dict(OLMO3),
         "layer_types: sliding window 4 on layers 0-2, full attention on layer 3; rope_parameters per layer type "
         "(theta 1e4 sliding, 5e5 full); q/k RMS norms over all heads; post-norm", cases=models.DEFAULT_CASES),
    Spec("olmo3_yarn", "olmo3",
         dict(OLMO3, attention_bias=True, rope_parameters={
             "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
             "full_attention": OLMO3_YARN_FULL}),
         "YaRN (factor 4 over 16 positions) on the full layer only, the sliding layers' rotary plain; attention "
         "biases", seed=1, cases=models.DEFAULT_CASES),
    # --- SmolLM3 ---
    Spec("smollm3", "smollm3", dict(SMOLLM3),
         "no_rope_layers derived (interval 4: layer 3 without rope), tied embeddings",
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("smollm3_swa", "smollm3",
         dict(SMOLLM3, no_rope_layers=[0, 1, 0, 1], use_sliding_window=True, sliding_window=4,
              tie_word_embeddings=False, mlp_bias=True),
         "explicit no_rope_layers [0, 1, 0, 1], sliding_window 4 on the no-rope layers (derived layer_types), "
         "untied head, MLP biases", seed=1, cases=models.DEFAULT_CASES),
    Spec("smollm3_derived", "smollm3", dict(SMOLLM3),
         "smollm3 with neither no_rope_layers nor layer_types in config.json (derived: interval 4)",
         config_rewrite="smollm3_no_lists", twin="smollm3", embed_std=models.TIED_EMBED_STD,
         cases=(Case(3, 12, (0, 3, 11)),)),
    Spec("smollm3_swa_derived", "smollm3",
         dict(SMOLLM3, no_rope_layers=[0, 1, 0, 1], use_sliding_window=True, sliding_window=4,
              tie_word_embeddings=False, mlp_bias=True),
         "smollm3_swa without layer_types in config.json (sliding on the no-rope layers, derived)",
         config_rewrite="smollm3_no_types", twin="smollm3_swa", seed=1, cases=(Case(3, 12, (0, 3, 11)),)),
    # --- Phi, StableLM, GLM, GLM-4, ERNIE 4.5, EXAONE 4, Cohere, Cohere 2 ---
    Spec("phi", "phi", dict(SMALL, num_key_value_heads=4),
         "phi-2's block: one LayerNorm feeding attention and MLP in parallel, fc1/gelu_new/fc2, every linear biased "
         "(dense, lm_head too), partial rotary 0.5, final_layernorm", cases=models.DEFAULT_CASES),
    Spec("phi_qk", "phi", dict(SMALL, qk_layernorm=True, partial_rotary_factor=0.375),
         "qk_layernorm (LayerNorm with bias over head_dim, shared by the heads), GQA 4/2, partial rotary 0.375",
         seed=1, cases=models.DEFAULT_CASES),
    Spec("stablelm", "stablelm", dict(SMALL),
         "LayerNorm with bias, sequential block, partial rotary 0.25 (default), no q/k/v bias",
         cases=models.DEFAULT_CASES),
    Spec("stablelm_par", "stablelm", dict(SMALL, use_parallel_residual=True, use_qkv_bias=True, tie_word_embeddings=True),
         "use_parallel_residual (one norm for both branches), use_qkv_bias, tied head", seed=1,
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("stablelm_qk", "stablelm", dict(SMALL, qk_layernorm=True),
         "qk_layernorm: a LayerNorm per head (q_layernorm.norms.{h}), 4 for q and 2 for k", seed=2,
         cases=models.DEFAULT_CASES),
    Spec("glm", "glm", dict(SMALL, head_dim=16),
         "interleaved partial rotary (pairs, 0.5 of the head), fused gate_up_proj, q/k/v biases (attention_bias "
         "default true), o without", cases=models.DEFAULT_CASES),
    Spec("glm4", "glm4", dict(SMALL, head_dim=32, partial_rotary_factor=0.25),
         "GLM-4's four norms (post_self_attn / post_attention (pre-MLP) / post_mlp), head_dim 32, rotary 0.25",
         seed=1, cases=models.DEFAULT_CASES),
    Spec("ernie4_5", "ernie4_5", dict(SMALL, head_dim=16),
         "interleaved rotary over the whole head, theta 500000, tied head, no biases", embed_std=models.TIED_EMBED_STD,
         cases=models.DEFAULT_CASES),
    Spec("ernie4_5_bias", "ernie4_5", dict(SMALL, head_dim=16, use_bias=True, tie_word_embeddings=False),
         "use_bias: every linear but the head biased, untied", seed=1, cases=models.DEFAULT_CASES),
    Spec("exaone4", "exaone4", dict(SMALL, sliding_window=4, sliding_window_pattern=2),
         "norms after the blocks (no input norm), per-head q/k RMSNorm, sliding window 4 on every other layer, "
         "full layers without rope", cases=models.DEFAULT_CASES),
    Spec("cohere", "cohere", dict(SMALL, logit_scale=0.25),
         "LayerNorm with a weight only (f32), parallel block, interleaved rotary, theta 500000, logit_scale 0.25, "
         "tied head", embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("cohere_qk", "cohere", dict(SMALL, use_qk_norm=True),
         "use_qk_norm: q_norm / k_norm weights [heads, head_dim], LayerNorm in f32", seed=2,
         embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    Spec("cohere2", "cohere2", dict(SMALL, sliding_window=4, sliding_window_pattern=2, attention_bias=True),
         "sliding window 4 on every other layer, rope on the sliding layers only, attention biases, "
         "logit_scale 0.0625 (default)", seed=1, embed_std=models.TIED_EMBED_STD, cases=models.DEFAULT_CASES),
    # --- Qwen2-MoE, GraniteMoE ---
    Spec("qwen2_moe", "qwen2_moe",
         dict(SMALL, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=48, shared_expert_intermediate_size=80,
              mlp_only_layers=[1], norm_topk_prob=False),
         "top-2 of 4 experts plus the shared expert scaled by sigmoid(shared_expert_gate), layer 1 dense, q/k/v "
         "biases (qkv_bias default), per-expert tensors", cases=models.DEFAULT_CASES),
    Spec("qwen2_moe_fused", "qwen2_moe",
         dict(SMALL, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=48, shared_expert_intermediate_size=80,
              mlp_only_layers=[1], norm_topk_prob=False),
         "qwen2_moe with transformers 5's fused 3-D experts", layout="fused", twin="qwen2_moe",
         cases=(Case(3, 12, (0, 3, 11)),)),
    Spec("qwen2_moe_swa", "qwen2_moe",
         dict(SMALL, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=48, shared_expert_intermediate_size=80,
              use_sliding_window=True, sliding_window=4, max_window_layers=3, norm_topk_prob=True, qkv_bias=False),
         "sliding window 4 on layers 0 and 2 (even layers below max_window_layers 3), norm_topk_prob, no qkv bias",
         seed=1, cases=models.DEFAULT_CASES),
    Spec("granitemoe", "granitemoe",
         dict(SMALL, num_local_experts=4, num_experts_per_tok=2, embedding_multiplier=2.0, residual_multiplier=0.5,
              attention_multiplier=0.2, logits_scaling=4.0),
         "top-2 of 4 fused experts (block_sparse_moe.input_linear / output_linear / router.layer, as the Hub's), "
         "Granite's multipliers", cases=models.DEFAULT_CASES),
    Spec("granitemoe_native", "granitemoe",
         dict(SMALL, num_local_experts=4, num_experts_per_tok=2, embedding_multiplier=2.0, residual_multiplier=0.5,
              attention_multiplier=0.2, logits_scaling=4.0),
         "granitemoe with transformers 5's names (experts.gate_up_proj / down_proj, router.weight)", layout="fused",
         twin="granitemoe", cases=(Case(3, 12, (0, 3, 11)),)),
    # --- OLMoE ---
    Spec("olmoe", "olmoe", dict(SMALL, num_experts=4, num_experts_per_tok=2, clip_qkv=0.6,
                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
         "q/k RMSNorms over the whole projections, then clip_qkv 0.6; top-2 of 4 experts, no renormalisation",
         seed=1, cases=models.DEFAULT_CASES),
    Spec("olmoe_norm", "olmoe", dict(SMALL, num_experts=4, num_experts_per_tok=3, norm_topk_prob=True,
                                     rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
         "norm_topk_prob over top-3 of 4, no clipping", seed=2, cases=models.DEFAULT_CASES),
    # --- GPT-OSS ---
    Spec("gpt_oss", "gpt_oss", GPT_OSS,
         "attention sinks, biased attention, sliding window 4 on layers 0 and 2, YaRN (factor 4), top-2 of 4 biased "
         "experts with gate/up interleaved and the SwiGLU clamped at 0.6", seed=1, norm_offset=-0.5,
         cases=models.DEFAULT_CASES),
    # --- DeepSeek V2 / V3 ---
    Spec("deepseek_v3", "deepseek_v3", dict(DEEPSEEK, q_lora_rank=24, routed_scaling_factor=2.5),
         "MLA with q_lora_rank 24, rope_interleave (pairs regrouped), sigmoid router with e_score_correction_bias, "
         "group-limited top-2 (2 of 4 groups by their top-2 sum), norm_topk_prob, routed_scaling_factor 2.5",
         seed=1, cases=models.DEFAULT_CASES),
    Spec("deepseek_v3_yarn", "deepseek_v3",
         dict(DEEPSEEK, q_lora_rank=None, rope_interleave=False, n_group=1, topk_group=1, norm_topk_prob=False,
              attention_bias=True, rope_parameters=DEEPSEEK_YARN),
         "q_proj (no q_lora), halves rotary, YaRN with mscale_all_dim (scaled attention), one group, no "
         "renormalisation, attention biases", seed=2, cases=models.DEFAULT_CASES),
    Spec("deepseek_v3_router_defaults", "deepseek_v3",
         dict(DEEPSEEK, q_lora_rank=24, n_routed_experts=16, n_group=8, topk_group=4, routed_scaling_factor=2.5),
         "16 experts; n_group, topk_group and routed_scaling_factor left out of config.json: DeepseekV3Config's "
         "defaults (8 groups, 4 kept, 2.5)", seed=5, config_rewrite="no_router_groups",
         cases=(Case(3, 12, (0, 3, 11)),)),
    Spec("deepseek_v2", "deepseek_v2", dict(DEEPSEEK, q_lora_rank=None, topk_method="group_limited_greedy",
                                            topk_group=1, routed_scaling_factor=1.5),
         "MLA without q_lora, interleaved rotary in place, softmax router, group_limited_greedy (both experts from "
         "the group with the best expert)",
         seed=3, cases=models.DEFAULT_CASES),
    Spec("deepseek_v2_greedy", "deepseek_v2", dict(DEEPSEEK, q_lora_rank=24, topk_method="greedy", first_k_dense_replace=2),
         "q_lora_rank 24, greedy top-2 over all experts, two dense layers", seed=4, cases=models.DEFAULT_CASES),
    # --- decoders' sequence-classification heads (score on the last token that is not pad) ---
    Spec("llama_cls", "llama_cls", dict(models.LLAMA, pad_token_id=0, **LABELS3),
         "LlamaForSequenceClassification, 3 labels, pad 0: left- and right-padded rows, a pad id inside the text",
         cases=DEC_CLS_CASES),
    Spec("llama_cls_nopad", "llama_cls", dict(models.LLAMA, pad_token_id=None),
         "no pad_token_id: the last token (transformers refuses batches > 1), num_labels 2 by default", seed=1,
         cases=(EncCase(1, 1), EncCase(1, 7))),
    Spec("mistral_cls", "mistral_cls", dict(models.MISTRAL, pad_token_id=0, **LABELS3),
         "MistralForSequenceClassification, sliding_window 4", cases=DEC_CLS_CASES),
    Spec("qwen2_cls", "qwen2_cls", dict(models.QWEN2, pad_token_id=0, num_labels=5),
         "Qwen2ForSequenceClassification, num_labels 5, q/k/v biases", cases=DEC_CLS_CASES),
    Spec("qwen3_cls", "qwen3_cls", dict(models.QWEN3, pad_token_id=0, **LABELS3),
         "Qwen3ForSequenceClassification, q/k norms", cases=DEC_CLS_CASES),
    Spec("modernbert_decoder_cls", "modernbert_decoder_cls",
         dict(decoder_lineages_models.MODERNBERT_DECODER, num_labels=3, classifier_bias=True),
         "ModernBertDecoderForSequenceClassification: the last real token through head (dense, gelu, norm), then "
         "classifier (biased)", seed=3, cases=DEC_CLS_CASES),
    Spec("gemma_cls", "gemma_cls", dict(models.GEMMA, pad_token_id=0, **LABELS3),
         "GemmaForSequenceClassification: (1 + w) norms, embeddings scaled", norm_offset=-0.5, cases=DEC_CLS_CASES),
    # --- encoders ---
    Spec("bert", "bert", dict(BERT), "BertModel: last_hidden_state and pooler_output", cases=ENC_CASES),
    Spec("bert_nopool", "bert_nopool", dict(BERT), "BertModel(add_pooling_layer=False): last_hidden_state only",
         seed=3, cases=(EncCase(1, 7, types=True), EncCase(3, 12, (12, 9, 1), types=True))),
    Spec("bert_cls", "bert_cls", dict(BERT, **LABELS3), "BertForSequenceClassification, 3 labels (bert. prefix)",
         cases=ENC_CASES),
    Spec("roberta", "roberta", dict(ROBERTA), "RobertaModel: positions from input_ids and pad_token_id 1",
         cases=ENC_CASES),
    Spec("roberta_cls", "roberta_cls", dict(ROBERTA, **LABELS3),
         "RobertaForSequenceClassification: classifier.dense -> tanh -> out_proj, no pooler", cases=ENC_CASES),
    Spec("xlmr", "xlmr", dict(XLMR), "XLMRobertaModel (type_vocab_size 1)", cases=ENC_CASES_NO_TYPES),
    Spec("bert_tok", "bert_tok", dict(BERT, **LABELS3), "BertForTokenClassification, 3 labels, no pooler",
         seed=4, cases=ENC_CASES),
    Spec("bert_qa", "bert_qa", dict(BERT), "BertForQuestionAnswering: start/end logits", seed=5, cases=ENC_CASES),
    Spec("bert_mlm", "bert_mlm", dict(BERT), "BertForMaskedLM: transform (dense, gelu, LayerNorm), decoder tied to "
         "the word embeddings, its own bias", seed=6, cases=ENC_CASES),
    Spec("bert_mlm_untied", "bert_mlm", dict(BERT, tie_word_embeddings=False, hidden_act="gelu_new"),
         "BertForMaskedLM with its own decoder weight (tie_word_embeddings false), gelu_new", seed=7,
         cases=ENC_CASES),
    Spec("roberta_qa", "roberta_qa", dict(ROBERTA), "RobertaForQuestionAnswering", seed=5, cases=ENC_CASES),
    Spec("roberta_mlm", "roberta_mlm", dict(ROBERTA), "RobertaForMaskedLM: lm_head (dense, exact gelu, layer_norm), "
         "tied decoder", seed=6, cases=ENC_CASES),
    Spec("xlmr_tok", "xlmr_tok", dict(XLMR, **LABELS3), "XLMRobertaForTokenClassification", seed=4,
         cases=ENC_CASES_NO_TYPES),
    Spec("roberta_tok", "roberta_tok", dict(ROBERTA, **LABELS3), "RobertaForTokenClassification", seed=4,
         cases=ENC_CASES),
    Spec("xlmr_qa", "xlmr_qa", dict(XLMR), "XLMRobertaForQuestionAnswering", seed=5, cases=ENC_CASES_NO_TYPES),
    Spec("xlmr_mlm", "xlmr_mlm", dict(XLMR), "XLMRobertaForMaskedLM", seed=6, cases=ENC_CASES_NO_TYPES),
    Spec("xlmr_cls", "xlmr_cls", dict(XLMR, **LABELS3), "XLMRobertaForSequenceClassification",
         cases=ENC_CASES_NO_TYPES),
    # --- DistilBERT and ModernBERT, bare and with their heads ---
    Spec("distilbert", "distilbert", dict(DISTILBERT), "DistilBertModel: transformer.layer.{i} q_lin/k_lin/v_lin",
         cases=ENC_CASES_NO_TYPES),
    Spec("distilbert_relu", "distilbert", dict(DISTILBERT, activation="relu", sinusoidal_pos_embds=True),
         "DistilBertModel with relu and sinusoidal position embeddings (stored in the checkpoint)", seed=2,
         cases=ENC_CASES_NO_TYPES),
    Spec("distilbert_cls", "distilbert_cls", dict(DISTILBERT, **LABELS3),
         "DistilBertForSequenceClassification: pre_classifier -> relu -> classifier on the first token",
         cases=ENC_CASES_NO_TYPES),
    Spec("distilbert_tok", "distilbert_tok", dict(DISTILBERT, **LABELS3), "DistilBertForTokenClassification", seed=4,
         cases=ENC_CASES_NO_TYPES),
    Spec("distilbert_qa", "distilbert_qa", dict(DISTILBERT), "DistilBertForQuestionAnswering", seed=5,
         cases=ENC_CASES_NO_TYPES),
    Spec("distilbert_mlm", "distilbert_mlm", dict(DISTILBERT),
         "DistilBertForMaskedLM: vocab_transform, gelu, vocab_layer_norm, vocab_projector tied", seed=6,
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert", "modernbert", dict(MODERNBERT),
         "ModernBertModel: pre-norm, Wqkv, GeGLU, local/global layers with two rope bases, final norm",
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_biased", "modernbert", dict(MODERNBERT, attention_bias=True, mlp_bias=True, norm_bias=True,
                                                 layer_types=["full_attention", "sliding_attention",
                                                              "full_attention", "sliding_attention"],
                                                 hidden_activation="gelu_new", local_attention=6),
         "ModernBertModel with every bias, explicit layer_types, gelu_new, window 3", seed=2,
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_cls", "modernbert_cls", dict(MODERNBERT, **LABELS3),
         "ModernBertForSequenceClassification: head (dense, gelu, norm) on the first token", cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_cls_mean", "modernbert_cls", dict(MODERNBERT, classifier_pooling="mean", classifier_bias=True,
                                                       classifier_activation="silu", **LABELS3),
         "ModernBertForSequenceClassification: mean over the mask, biased silu head", seed=3, cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_tok", "modernbert_tok", dict(MODERNBERT, **LABELS3), "ModernBertForTokenClassification", seed=4,
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_qa", "modernbert_qa", dict(MODERNBERT), "ModernBertForQuestionAnswering", seed=5,
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_mlm", "modernbert_mlm", dict(MODERNBERT), "ModernBertForMaskedLM: head, tied decoder with bias",
         seed=6, cases=ENC_CASES_NO_TYPES),
    # --- MPNet ---
    Spec("mpnet", "mpnet", dict(MPNET), "MPNetModel: attention.attn.q/k/v/o, a relative bias shared by every layer",
         cases=ENC_CASES_NO_TYPES),
    Spec("mpnet_variant", "mpnet", dict(MPNET, relative_attention_num_buckets=40, hidden_act="gelu_new",
                                        layer_norm_eps=1e-12),
         "MPNetModel: a 40-row relative table (32 read), gelu_new, eps 1e-12", seed=2, cases=ENC_CASES_NO_TYPES),
    Spec("mpnet_cls", "mpnet_cls", dict(MPNET, **LABELS3),
         "MPNetForSequenceClassification: classifier.dense, tanh, classifier.out_proj on the first token",
         seed=3, cases=ENC_CASES_NO_TYPES),
    Spec("mpnet_tok", "mpnet_tok", dict(MPNET, **LABELS3), "MPNetForTokenClassification", seed=4,
         cases=ENC_CASES_NO_TYPES),
    Spec("mpnet_qa", "mpnet_qa", dict(MPNET), "MPNetForQuestionAnswering", seed=5, cases=ENC_CASES_NO_TYPES),
    Spec("mpnet_mlm", "mpnet_mlm", dict(MPNET), "MPNetForMaskedLM: lm_head (dense, exact gelu, layer_norm), tied "
         "decoder with the head's bias", seed=6, cases=ENC_CASES_NO_TYPES),
    # --- DeBERTa-v2/v3 ---
    Spec("deberta_v3", "deberta", dict(DEBERTA_V3), "DebertaV2Model, v3-style: disentangled attention with log buckets",
         cases=ENC_CASES_NO_TYPES),
    Spec("deberta_v2", "deberta", dict(DEBERTA_V2), "DebertaV2Model, v2-style: types, positions, pos_*_proj, "
         "embed_proj", seed=2, cases=ENC_CASES),
    Spec("deberta_norel", "deberta", dict(BERT, type_vocab_size=0, relative_attention=False),
         "DebertaV2Model without relative attention", seed=3, cases=ENC_CASES_NO_TYPES),
    Spec("deberta_cls", "deberta_cls", dict(DEBERTA_V3, pooler_hidden_act="tanh", **LABELS3),
         "DebertaV2ForSequenceClassification: pooler (dense, tanh) on the first token", seed=4, cases=ENC_CASES_NO_TYPES),
    Spec("deberta_tok", "deberta_tok", dict(DEBERTA_V2, embedding_size=64, **LABELS3), "DebertaV2ForTokenClassification",
         seed=5, cases=ENC_CASES),
    Spec("deberta_qa", "deberta_qa", dict(DEBERTA_V3), "DebertaV2ForQuestionAnswering", seed=6, cases=ENC_CASES_NO_TYPES),
    Spec("deberta_mlm", "deberta_mlm", dict(DEBERTA_V3), "DebertaV2ForMaskedLM (legacy head, tied decoder)", seed=7,
         cases=ENC_CASES_NO_TYPES),
    Spec("modernbert_mlm_nobias", "modernbert_mlm", dict(MODERNBERT, decoder_bias=False, tie_word_embeddings=False),
         "ModernBertForMaskedLM: untied decoder without a bias", seed=7, cases=ENC_CASES_NO_TYPES),
]

SPECS_LIST += [Spec(**entry) for entry in decoder_lineages_models.SPECS]
SPECS = {s.name: s for s in SPECS_LIST}
assert len(SPECS) == len(SPECS_LIST), "duplicate spec name"

DECODERS = [s.name for s in SPECS_LIST if s.kind == "causal"]
ENCODERS = [s.name for s in SPECS_LIST if s.kind != "causal"]


# ---- building -------------------------------------------------------------------------------------

_QK = (".q_proj.", ".k_proj.", "qkv_proj.", "query_key_value.", "c_attn.", "self.query.", "self.key.", ".q_lin.",
       ".k_lin.", ".Wqkv.")
_WORD_EMB = ("embed_tokens.", "embed_in.", "wte.", "word_embeddings.", "tok_embeddings.")
_POS_EMB = ("wpe.", "position_embeddings.", "token_type_embeddings.")


def init_weights(model: torch.nn.Module, spec: Spec) -> None:
    """O(1) activations, peaked attention, norm weights != 1, biases != 0 (see the module doc)."""
    from transformers.pytorch_utils import Conv1D

    conv1d = {f"{n}.weight" if n else "weight" for n, m in model.named_modules() if isinstance(m, Conv1D)}
    g = torch.Generator().manual_seed(spec.seed)
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied parameters are listed once
            if name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            elif p.ndim == 1:  # RMSNorm / LayerNorm weight
                p.copy_(spec.norm_offset + torch.rand(p.shape, generator=g))
            elif any(k in name for k in _WORD_EMB):
                p.copy_(spec.embed_std * torch.randn(p.shape, generator=g))
            elif any(k in name for k in _POS_EMB):
                p.copy_(0.7 * torch.randn(p.shape, generator=g))
            elif p.ndim == 3:  # fused experts [E, out, in]
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[2]))
            elif p.ndim == 2:
                fan_in = p.shape[0] if name in conv1d else p.shape[1]
                gain = 1.7 if any(k in name for k in _QK) else 1.0
                p.copy_(gain / math.sqrt(fan_in) * torch.randn(p.shape, generator=g))
            else:
                raise AssertionError(f"unexpected parameter {name} {tuple(p.shape)}")
        for name, b in model.named_buffers():  # DeepSeek V3's router correction is a buffer, zero at init
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.2 * torch.randn(b.shape, generator=g))
            elif name.endswith("layer_scalar"):  # Gemma 4's, ones at init
                b.copy_(0.5 + torch.rand(b.shape, generator=g))
            elif name.endswith("tid2eid"):  # DeepSeek V4's token id -> experts table, zeros at init: k distinct experts
                experts = model.config.n_routed_experts
                b.copy_(torch.argsort(torch.rand(b.shape[0], experts, generator=g), dim=-1)[:, :b.shape[1]])


def build_model(spec: Spec) -> torch.nn.Module:
    config_cls, model_cls, _ = ARCHS[spec.arch]
    config = config_cls(**json.loads(json.dumps(spec.config)))
    torch.manual_seed(spec.seed)
    attention = models.reference_attention(config.to_dict())
    model = model_cls(config)
    if attention == "eager":
        model.set_attn_implementation("eager")
    if getattr(model.config, "_attn_implementation", attention) != attention:  # Falcon cannot switch afterwards
        torch.manual_seed(spec.seed)
        model = model_cls._from_config(config, attn_implementation=attention)
    init_weights(model, spec)
    model.eval()
    return model


def load_reference(model_dir: os.PathLike, spec: Spec) -> torch.nn.Module:
    """transformers' eager float32 model of a checkpoint directory."""
    auto = {"causal": AutoModelForCausalLM, "encoder": AutoModel,
            "classifier": AutoModelForSequenceClassification,
            "dec_classifier": AutoModelForSequenceClassification, "token_classifier": AutoModelForTokenClassification,
            "qa": AutoModelForQuestionAnswering, "masked_lm": AutoModelForMaskedLM}[spec.kind]
    if spec.kind == "causal":
        auto = models.causal_lm_class(model_dir)
    model = auto.from_pretrained(str(model_dir), dtype=torch.float32,
                                 attn_implementation=models.checkpoint_attention(model_dir))
    with torch.no_grad():  # the file's mapping places a tensor at any 8-byte offset, and torch's kernels sum in another
        for p in model.parameters():  # order on unaligned data (HY V4's experts: 5e-7): each in memory of its own
            p.data = p.data.clone()
    model.eval()
    return model


def probe_inputs(spec: Spec) -> dict:
    if spec.kind == "causal":
        return models.make_inputs(Case(2, 20, (0, 3)), spec.vocab_size, seed=12345)
    if spec.kind == "dec_classifier":  # one row without a pad token: transformers refuses more
        padded = spec.config.get("pad_token_id") is not None
        return dec_classifier_inputs(EncCase(2, 10, (10, 6)) if padded else EncCase(1, 10), spec, seed=12345)
    inputs = make_encoder_inputs(EncCase(2, 10, (10, 6), types=spec.config.get("type_vocab_size", 2) > 1),
                                 spec.vocab_size, spec.config["pad_token_id"], seed=12345)
    return inputs if spec.token_types else {k: v for k, v in inputs.items() if k != "token_type_ids"}


def outputs(model: torch.nn.Module, spec: Spec, inputs: dict) -> dict:
    """{output name: float32 numpy} as the export names them."""
    feed = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inputs.items()}
    with torch.no_grad():
        if spec.kind == "causal":
            return {"logits": model(**feed, use_cache=False).logits.float().numpy()}
        out = model(**feed)
    if spec.kind in ("classifier", "dec_classifier", "token_classifier", "masked_lm"):
        return {"logits": out.logits.float().numpy()}
    if spec.kind == "qa":
        return {"start_logits": out.start_logits.float().numpy(), "end_logits": out.end_logits.float().numpy()}
    res = {"last_hidden_state": out.last_hidden_state.float().numpy()}
    # a checkpoint saved without a pooler loads into a BertModel with a freshly initialised one
    if getattr(out, "pooler_output", None) is not None and spec.arch != "bert_nopool":
        res["pooler_output"] = out.pooler_output.float().numpy()
    return res


# config.json rewrites (the transformers 4.x spellings)


def _phi3_legacy(cfg: dict, rope_type: str, nested_original: bool) -> dict:
    cfg = dict(cfg)
    rope = dict(cfg.pop("rope_parameters"))
    assert rope.pop("rope_type") == "longrope", rope
    cfg["rope_theta"] = rope.pop("rope_theta")
    cfg["partial_rotary_factor"] = rope.pop("partial_rotary_factor")
    original = rope.pop("original_max_position_embeddings")
    assert original == cfg["original_max_position_embeddings"], (original, cfg)
    scaling = {"type": rope_type, "short_factor": rope.pop("short_factor"), "long_factor": rope.pop("long_factor")}
    if nested_original:
        # transformers 5.24 needs it there for "su" (it only copies the top-level value for the
        # rope types "longrope" / "yarn"); Phi-3.5-style configs have it at the top level only
        scaling["original_max_position_embeddings"] = original
    assert not rope, rope
    cfg["rope_scaling"] = scaling
    return cfg


def _neox_legacy(cfg: dict, rotary_pct: bool) -> dict:
    cfg = dict(cfg)
    rope = dict(cfg.pop("rope_parameters"))
    assert rope.pop("rope_type") == "default", rope
    theta, pct = rope.pop("rope_theta"), rope.pop("partial_rotary_factor")
    assert not rope, rope
    if rotary_pct:
        cfg["rotary_pct"], cfg["rotary_emb_base"] = pct, theta
    else:
        assert pct == 0.25 and theta == 10000.0, "only transformers' defaults can be left out"
    return cfg


CONFIG_REWRITES = {
    "phi3_su": lambda c: _phi3_legacy(c, "su", nested_original=True),
    "phi3_yarn": lambda c: _phi3_legacy(c, "yarn", nested_original=False),
    "neox_rotary_pct": lambda c: _neox_legacy(c, rotary_pct=True),
    "neox_no_rotary": lambda c: _neox_legacy(c, rotary_pct=False),
    # SmolLM3 configs written by hand: the per-layer lists left for the config to derive
    "smollm3_no_lists": lambda c: {k: v for k, v in c.items() if k not in ("no_rope_layers", "layer_types")},
    "smollm3_no_types": lambda c: {k: v for k, v in c.items() if k != "layer_types"},
    **decoder_lineages_models.CONFIG_REWRITES,
}


def _old_common(cfg: dict) -> dict:
    cfg = dict(cfg)
    cfg["torch_dtype"] = cfg.pop("dtype", "float32")
    cfg["transformers_version"] = "4.46.3"
    return dict(sorted(cfg.items()))


def _rewrite_safetensors(path: Path, edit) -> None:
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(path))
    tensors = edit(tensors)
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path), metadata={"format": "pt"})


def _gpt2_buffers(tensors: dict, n_layer: int, n_pos: int, prefix: str) -> dict:
    tril = torch.tril(torch.ones(n_pos, n_pos, dtype=torch.float32)).view(1, 1, n_pos, n_pos)
    for i in range(n_layer):
        tensors[f"{prefix}h.{i}.attn.bias"] = tril.clone()
        tensors[f"{prefix}h.{i}.attn.masked_bias"] = torch.tensor(-1e4, dtype=torch.float32)
    return tensors


def save_checkpoint(spec: Spec, out_dir: os.PathLike) -> Path:
    """Build `spec`, write it to out_dir, verify that transformers loads it back to the same model."""
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build_model(spec)
    expected = outputs(model, spec, probe_inputs(spec))

    if spec.layout == "fused":
        # transformers 5's module names: what model.state_dict() holds
        sd = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
        assert any(k.endswith("experts.gate_up_proj") for k in sd), sorted(sd)[:20]
        save_file(sd, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
        model.config.architectures = [spec.architecture]
        model.config.save_pretrained(str(out_dir))
    else:
        model.save_pretrained(str(out_dir))
    if spec.layout in ("legacy_buffers", "hub_names"):
        c = spec.config

        def edit(t):
            if spec.layout == "hub_names":
                assert all(k.startswith("transformer.") for k in t), sorted(t)
                t = {k[len("transformer."):]: v for k, v in t.items()}
            return _gpt2_buffers(t, c["n_layer"], c["n_positions"], "" if spec.layout == "hub_names" else "transformer.")

        _rewrite_safetensors(out_dir / "model.safetensors", edit)
    if spec.kind == "causal":
        GenerationConfig(bos_token_id=model.config.bos_token_id, eos_token_id=model.config.eos_token_id,
                         max_new_tokens=8, do_sample=False).save_pretrained(str(out_dir))
    if spec.config_rewrite:
        path = out_dir / "config.json"
        cfg = CONFIG_REWRITES[spec.config_rewrite](json.loads(path.read_text()))
        path.write_text(json.dumps(_old_common(cfg), indent=2) + "\n")
    _verify(spec, out_dir, expected)
    return out_dir


def _verify(spec: Spec, out_dir: Path, expected: dict) -> None:
    from safetensors import safe_open

    cfg = json.loads((out_dir / "config.json").read_text())
    assert cfg["architectures"] == [spec.architecture], cfg["architectures"]
    with safe_open(str(out_dir / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    if spec.arch == "mixtral":
        want = "model.layers.0.mlp.experts.gate_up_proj" if spec.layout == "fused" else \
            "model.layers.0.block_sparse_moe.experts.3.w2.weight"
        assert want in keys, sorted(keys)
    if spec.arch == "qwen2_moe":  # layer 0 is sparse in every spec
        want = "model.layers.0.mlp.experts.gate_up_proj" if spec.layout == "fused" else \
            "model.layers.0.mlp.experts.3.up_proj.weight"
        assert want in keys and "model.layers.0.mlp.shared_expert_gate.weight" in keys, sorted(keys)
    if spec.arch == "granitemoe":
        want = "model.layers.0.block_sparse_moe.experts.gate_up_proj" if spec.layout == "fused" else \
            "model.layers.0.block_sparse_moe.input_linear.weight"
        assert want in keys, sorted(keys)
    if spec.arch == "qwen3_moe":
        sparse = 1 if spec.config["decoder_sparse_step"] == 2 else 0
        want = f"model.layers.{sparse}.mlp.experts.down_proj" if spec.layout == "fused" else \
            f"model.layers.{sparse}.mlp.experts.3.up_proj.weight"
        assert want in keys, sorted(keys)
    if spec.arch == "axk1":  # the norm as its checkpoints keep it, on the layer
        assert "model.layers.2.post_mlp_layernorm.weight" in keys and "model.layers.2.mlp.experts.0.up_proj.weight" in keys, sorted(keys)
    if spec.arch == "axk2":  # the names its checkpoints and transformers' saving use
        assert {"model.layers.0.input_layernorm.W_down.weight", "model.layers.0.self_attn.q_b_proj.weight"} <= keys, sorted(keys)
    if spec.arch == "hy_v4":  # the names HY V4's checkpoints and transformers' saving use, or the model's own
        want = ("model.layers.1.attn_hc.fn", "model.hc_head.hc_fn", "model.layers.0.self_attn.sinks") \
            if spec.layout == "fused" else ("model.layers.1.hc_pre.hc_attn_layer.hc_fn", "model.hc_pre.hc_head.hc_head_fn",
                                            "model.layers.0.self_attn.learnable_sink_param")
        assert set(want) <= keys, sorted(keys)
    if spec.arch == "deepseek_v4":  # the names its checkpoints and transformers' saving use, or the model's own
        want = ("model.layers.1.attn_hc.fn", "model.layers.0.mlp.gate.tid2eid", "model.layers.1.mlp.experts.gate_up_proj",
                "model.layers.1.self_attn.compressor.indexer.q_b_proj.weight") if spec.layout == "fused" else \
            ("model.layers.1.hc_attn_fn", "model.layers.0.ffn.gate.tid2eid", "model.layers.1.ffn.experts.3.w2.weight",
             "model.layers.1.attn.indexer.wq_b.weight", "head.weight")
        assert set(want) <= keys, sorted(keys)
    if spec.layout in ("legacy_buffers", "hub_names"):
        assert ("h.1.attn.masked_bias" if spec.layout == "hub_names" else "transformer.h.1.attn.masked_bias") in keys
        assert not any(k.startswith("transformer.") for k in keys) or spec.layout != "hub_names", sorted(keys)
    if spec.config_rewrite in ("smollm3_no_lists", "smollm3_no_types"):
        assert "layer_types" not in cfg and ("no_rope_layers" in cfg) == (spec.config_rewrite == "smollm3_no_types"), cfg
    elif spec.config_rewrite in ("no_layer_types", "no_mlp_layer_types", "no_attention_layers", "no_indexer_types"):
        assert spec.config_rewrite[3:] not in cfg, cfg
    elif spec.config_rewrite == "no_router_groups":
        assert not {"n_group", "topk_group", "routed_scaling_factor"} & set(cfg), cfg
    elif spec.config_rewrite == "cohere2_moe_derived":
        assert not {"layer_types", "mlp_layer_types"} & set(cfg) and cfg["first_k_dense_replace"] == 2, cfg
    elif spec.config_rewrite == "glm4_lite_derived":
        assert "mlp_layer_types" not in cfg and cfg["first_k_dense_replace"] == 3, cfg
    elif spec.config_rewrite == "gemma4_released":
        assert "per_layer_config" not in cfg and "rope_parameters" not in cfg and "global_head_dim" in cfg, cfg
    elif spec.config_rewrite == "no_attention_multiplier":
        assert "attention_multiplier" not in cfg, cfg
    elif spec.config_rewrite == "flint_derived":
        assert not {"layer_types", "mlp_only_layers"} & set(cfg), cfg
    elif spec.config_rewrite == "no_bias_keys":
        assert not {"attention_bias", "mlp_bias"} & set(cfg), cfg
    elif spec.config_rewrite == "sparse_by_freq":
        assert "mlp_layer_types" not in cfg and cfg["moe_layer_freq"] == 2, cfg
    elif spec.config_rewrite == "deepseek_v4_legacy":
        assert not {"layer_types", "mlp_layer_types", "compress_rates", "rope_parameters"} & set(cfg), cfg
        assert {"compress_ratios", "num_hash_layers", "qk_rope_head_dim", "rope_scaling"} <= set(cfg), cfg
    elif spec.config_rewrite == "no_rope":
        assert not {"rope_parameters", "rope_scaling", "rope_theta"} & set(cfg), cfg
    elif spec.config_rewrite:  # the transformers-4 format
        assert "rope_parameters" not in cfg, cfg
    model = load_reference(out_dir, spec)
    got = outputs(model, spec, probe_inputs(spec))
    assert set(got) == set(expected), (set(got), set(expected))
    for k in expected:
        assert np.array_equal(got[k], expected[k]), (
            f"{spec.name}: transformers does not load {out_dir} back to the model that was saved "
            f"({k}: max abs diff {np.abs(got[k] - expected[k]).max():.3g})")
    if spec.config_rewrite:
        want_cfg = build_model(spec).config
        for key in ("rope_parameters", "use_parallel_residual", "attention_bias", "original_max_position_embeddings"):
            if hasattr(want_cfg, key):
                got_v, want_v = getattr(model.config, key), getattr(want_cfg, key)
                if key == "rope_parameters":  # (the legacy "type" key, a copy of rope_type, either side)
                    got_v = {k: v for k, v in got_v.items() if k != "type"}
                    want_v = {k: v for k, v in want_v.items() if k != "type"}
                assert got_v == want_v, f"{spec.name}: {key} loads as {got_v!r}, built with {want_v!r}"


class Checkpoints:
    """Each spec's checkpoint, built on first use (session-wide)."""

    def __init__(self, root: Path):
        self.root = root
        self._dirs: dict = {}

    def __call__(self, name: str) -> Path:
        if name not in self._dirs:
            self._dirs[name] = save_checkpoint(SPECS[name], self.root / name)
        return self._dirs[name]


class References:
    """transformers' outputs per (spec, inputs), one model per spec (the longrope update is stateless
    per call: it copies the short or long inv_freq from max(position_ids) each forward)."""

    def __init__(self, checkpoints: Checkpoints):
        self.checkpoints = checkpoints
        self._models: dict = {}
        self._outs: dict = {}

    def model(self, name: str):
        if name not in self._models:
            self._models[name] = load_reference(self.checkpoints(name), SPECS[name])
        return self._models[name]

    def __call__(self, name: str, case, inputs: dict) -> dict:
        key = (name, case)
        if key not in self._outs:
            self._outs[key] = outputs(self.model(name), SPECS[name], inputs)
        return self._outs[key]


def dec_classifier_inputs(case: EncCase, spec: Spec, seed: int = 0) -> dict:
    """A decoder classifier's feed: an encoder case's ids and mask (padding with pad_token_id, or 0
    without one), positions as generate() computes them."""
    pad = spec.config.get("pad_token_id")
    e = make_encoder_inputs(case, spec.vocab_size, 0 if pad is None else pad, seed=seed)
    mask = e["attention_mask"]
    return {"input_ids": e["input_ids"], "attention_mask": mask,
            "position_ids": np.clip(np.cumsum(mask, axis=-1) - 1, 0, None).astype(np.int64)}


def inputs_for(spec: Spec, case) -> dict:
    if spec.kind == "causal":
        return models.make_inputs(case, spec.vocab_size)
    if spec.kind == "dec_classifier":
        return dec_classifier_inputs(case, spec)
    inputs = make_encoder_inputs(case, spec.vocab_size, spec.config["pad_token_id"])
    return inputs if spec.token_types else {k: v for k, v in inputs.items() if k != "token_type_ids"}
