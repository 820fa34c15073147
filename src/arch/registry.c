/* The one list of supported architectures: name → family + descriptor. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/decoder.h"
#include "hf/prequant.h"
#include "base/status.h"

/* The decoder-only families, as differences from Llama (decoder.h says what each field means):
 * each descriptor starts from a base and overrides the fields that differ, so overriding a
 * designated initializer is the point here, not a mistake. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
#define LLAMA_LIKE                                                                                 \
    .rope.names = HFX_ROPE_NAMES_LEGACY, .bias.rule = HFX_BIAS_FROM_CONFIG, .norm = HFX_NORM_RMS, .layout = HFX_LAYOUT_PRE,            \
    .mlp = HFX_MLP_GATED, .act.key = "hidden_act", .act.dflt = "silu", .eps_key = "rms_norm_eps", \
    .scores.scale = HFX_SCALE_HEAD_DIM

/* each family with a sequence-classification head too: its fields once, two descriptors */
#define LLAMA LLAMA_LIKE, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG
#define MISTRAL LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .sliding = HFX_SLIDING_ALL
#define QWEN2 LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV, .sliding = HFX_SLIDING_MAX_WINDOW, .masks_by_layer_type = true
#define QWEN3 QWEN2, .bias.rule = HFX_BIAS_FROM_CONFIG, .qk_norm = HFX_QK_NORM_PER_HEAD
/* Qwen3Config's own classes: head_dim 128 where config.json has none (as transformers reads a GGUF file's metadata) */
#define QWEN3_CLASS QWEN3, .defaults.head_dim = 128
/* classes with no tied keys: transformers never ties their head to the embeddings, whatever tie_word_embeddings says */
static const char *const never_tied[] = {"tie_word_embeddings", NULL};
static const hfx_decoder_desc LlamaForCausalLM_desc = {"LlamaForCausalLM", LLAMA};
static const hfx_decoder_desc MistralForCausalLM_desc = {"MistralForCausalLM", MISTRAL};
static const hfx_decoder_desc Qwen2ForCausalLM_desc = {"Qwen2ForCausalLM", QWEN2};
/* Llama 4 (text): interleaved rotary in f32 with weight-less q/k norms on the rotary layers, which attend in
 * chunks; every no_rope_layer_interval-th layer without rotary, its queries' temperature tuned by position; experts
 * (input-scaled, a shared expert) on the moe_layers, dense MLPs of intermediate_size_mlp elsewhere */
static const hfx_decoder_keys llama4_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                             "max_position_embeddings", "intermediate_size_mlp", .embed_dim = NULL};
static const hfx_decoder_names llama4_names = {.mlp = "feed_forward"};
static const hfx_decoder_desc Llama4ForCausalLM_desc = {
    "Llama4ForCausalLM", LLAMA_LIKE, .rope.pairs = HFX_ROTARY_PAIRS_F32, .no_rope = HFX_NO_ROPE_LIST,
    .qk_norm = HFX_QK_NORM_L2_ROPE_LAYERS, .qk_norm_key = "use_qk_norm", .sliding = HFX_SLIDING_CHUNKED,
    .scores.temperature = HFX_QTEMP_NOPE_FLOOR, .keys = &llama4_keys, .names = &llama4_names, .defaults.eps = 1e-5,
    .defaults.head_dim = 128, .moe = &hfx_moe_llama4, .model_type_alias = "llama4_text"};
/* Ministral 3: Mistral's layers (one window for all when set), queries scaled by position (rope_parameters'
 * llama_4_scaling_beta) */
static const hfx_decoder_desc Ministral3ForCausalLM_desc = {"Ministral3ForCausalLM", MISTRAL,
                                                            .scores.temperature = HFX_QTEMP_ROPE_BETA, .defaults.eps = 1e-5,
                                                            .defaults.head_dim = 128, .rope.theta = 1000000.0};
/* Ministral: Mistral's layers, sliding or full by layer_types (all sliding when absent, window 4096) */
static const hfx_decoder_desc MinistralForCausalLM_desc = {"MinistralForCausalLM", MISTRAL,
                                                           .sliding = HFX_SLIDING_TYPES_OR_ALL,
                                                           .defaults.window = 4096, .masks_by_layer_type = true};
static const hfx_decoder_desc MixtralForCausalLM_desc = {"MixtralForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE,
                                                         .sliding = HFX_SLIDING_ALL, .moe = &hfx_moe_mixtral,
                                                         .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc Qwen3MoeForCausalLM_desc = {"Qwen3MoeForCausalLM", LLAMA_LIKE,
                                                          .qk_norm = HFX_QK_NORM_PER_HEAD,
                                                          .sliding = HFX_SLIDING_MAX_WINDOW, .moe = &hfx_moe_qwen3,
                                                          .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc Qwen3ForCausalLM_desc = {"Qwen3ForCausalLM", QWEN3_CLASS};
/* EuroBERT: Llama's layers attending both ways (an encoder built of decoder layers), a forward pass only; the
 * masked-LM head biased as mlp_bias says; EuroBertModel its base model under its own names */
static const hfx_decoder_desc EuroBertForMaskedLM_desc = {"EuroBertForMaskedLM", LLAMA, .scores.mask = HFX_MASK_BOTH_WAYS,
                                                          .head = HFX_HEAD_LM_BIAS_KEY, .head_bias_key = "mlp_bias",
                                                          .output_class = "MaskedLMOutput"};
static const hfx_decoder_desc EuroBertForSequenceClassification_desc = {
    "EuroBertForSequenceClassification", LLAMA, .scores.mask = HFX_MASK_BOTH_WAYS, .head = HFX_HEAD_POOLED_CLASSIFIER,
    .output_class = "SequenceClassifierOutput"};
static const hfx_decoder_base EuroBertModel_base = {&EuroBertForMaskedLM_desc, "EuroBertModel", "BaseModelOutput", NULL, NULL};
/* GTE: post-LN layers (LayerNorms with biases) attending both ways, rotary, q/k/v/o biased, a gated MLP whose down
 * projection alone is biased; the embeddings plus token type 0's row, LayerNormed; no final norm; the masked LM's
 * head dense → GELU → LayerNorm → the decoder (biased, tied by default); GteModel its base under its own names */
/* (the Hub's layer names, which transformers' saving writes back through its conversion mapping; the head model's
 * backbone "gte." as transformers saves it, "new." as the Hub's checkpoints store it) */
static const hfx_weight_rename gte_stored[] = {{"gte.", "new."}, {NULL, NULL}};
static const hfx_decoder_names gte_names = {
    .embed = "gte.embeddings.word_embeddings.weight", .layer = "gte.encoder.layer.%lld", .attn = "attention",
    .norm1 = "attn_ln", .norm2 = "mlp_ln", .embed_norm = "gte.embeddings.LayerNorm",
    .token_types = "gte.embeddings.token_type_embeddings.weight", .lm_head = "lm_head.decoder.weight",
    .head_dense = "lm_head.dense", .head_norm = "lm_head.norm", .pooler = "gte.pooler.dense", .stored = gte_stored};
#define GTE_LIKE                                                                                                      \
    LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_POST_LN, .embed_scale = HFX_EMBED_OWN_NORM,             \
    .qkv = HFX_QKV_CONCAT, .mlp = HFX_MLP_UP_GATE_FUSED, .bias.rule = HFX_BIAS_FROM_CONFIG, .bias.default_on = true,   \
    .bias.mlp = HFX_MLP_BIAS_DOWN, .eps_key = "layer_norm_eps", .act.dflt = "gelu", .scores.mask = HFX_MASK_BOTH_WAYS, \
    .names = &gte_names
static const hfx_decoder_desc GteForMaskedLM_desc = {"GteForMaskedLM", GTE_LIKE, .head = HFX_HEAD_LM_TRANSFORM,
                                                     .act.head = "gelu", .defaults.tied = true,
                                                     .output_class = "MaskedLMOutput"};
/* ... its sequence classifier (the pooler's tanh of the first token) and token classifier */
static const hfx_decoder_desc GteForSequenceClassification_desc = {"GteForSequenceClassification", GTE_LIKE,
                                                                   .head = HFX_HEAD_POOLER_CLASSIFIER,
                                                                   .output_class = "SequenceClassifierOutput"};
static const hfx_decoder_desc GteForTokenClassification_desc = {"GteForTokenClassification", GTE_LIKE,
                                                                .head = HFX_HEAD_TOKEN_CLASSIFIER,
                                                                .output_class = "TokenClassifierOutput"};
#undef GTE_LIKE
/* NomicBERT (nomic-embed-text): GTE's post-LN layers without biases, fused Wqkv, a SiLU-gated MLP of separate
 * fc12 (gate), fc11 (up) and fc2 (down), rotary (θ 1000), token types (several rows: a token_type_ids input); BERT's
 * heads: the masked LM's transform (hidden_act) and tied decoder with cls.predictions.bias, the pooler's classifier,
 * the token classifier; NomicBertModel its base. transformers saves the Hub's names. */
static const hfx_decoder_names nomic_names = {
    .embed = "nomic_bert.embeddings.word_embeddings.weight", .layer = "nomic_bert.encoder.layers.%lld", .attn = "attn",
    .qkv = "Wqkv", .o = "out_proj", .gate = "fc12", .up = "fc11", .down = "fc2", .norm1 = "norm1", .norm2 = "norm2",
    .embed_norm = "nomic_bert.emb_ln", .token_types = "nomic_bert.embeddings.token_type_embeddings.weight",
    .lm_head = "cls.predictions.decoder.weight", .lm_head_bias = "cls.predictions.bias",
    .head_dense = "cls.predictions.transform.dense", .head_norm = "cls.predictions.transform.layer_norm",
    .pooler = "nomic_bert.pooler.dense"};
#define NOMIC_BERT                                                                                                    \
    LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_POST_LN, .embed_scale = HFX_EMBED_OWN_NORM,             \
    .qkv = HFX_QKV_CONCAT, .eps_key = "layer_norm_eps", .act.dflt = "silu", .scores.mask = HFX_MASK_BOTH_WAYS,        \
    .rope.theta = 1000.0, .defaults.eps = 1e-12, .names = &nomic_names
static const hfx_decoder_desc NomicBertForMaskedLM_desc = {"NomicBertForMaskedLM", NOMIC_BERT,
                                                           .head = HFX_HEAD_LM_TRANSFORM, .defaults.tied = true,
                                                           .output_class = "MaskedLMOutput"};
static const hfx_decoder_desc NomicBertForSequenceClassification_desc = {
    "NomicBertForSequenceClassification", NOMIC_BERT, .head = HFX_HEAD_POOLER_CLASSIFIER,
    .output_class = "SequenceClassifierOutput"};
static const hfx_decoder_desc NomicBertForTokenClassification_desc = {
    "NomicBertForTokenClassification", NOMIC_BERT, .head = HFX_HEAD_TOKEN_CLASSIFIER,
    .output_class = "TokenClassifierOutput"};
#undef NOMIC_BERT
static const hfx_decoder_base NomicBertModel_base = {&NomicBertForMaskedLM_desc, "NomicBertModel",
                                                     "BaseModelOutputWithPooling", "nomic_bert.", NULL};
/* JinaEmbeddingsV3 (jina-embeddings-v3's backbone, as transformers has it: no task adapters): XLM-RoBERTa's
 * embeddings and heads over GTE-style post-LN layers, every linear biased, fused Wqkv, a plain fc1/fc2 MLP, rotary
 * (θ 20000 by default); the masked LM's head dense → GELU → layer_norm → the tied decoder with lm_head.bias;
 * RoBERTa's classifier (classifier.dense, tanh, classifier.out_proj), token classifier and QA head; its base model's
 * pooler where saved with one. transformers saves the Hub's names under "roberta.". */
static const hfx_decoder_names jina_v3_names = {
    .embed = "roberta.embeddings.word_embeddings.weight", .layer = "roberta.encoder.layers.%lld", .attn = "mixer",
    .qkv = "Wqkv", .o = "out_proj", .fc_in = "fc1", .fc_out = "fc2", .norm1 = "norm1", .norm2 = "norm2",
    .embed_norm = "roberta.emb_ln", .token_types = "roberta.embeddings.token_type_embeddings.weight",
    .lm_head = "lm_head.decoder.weight", .lm_head_bias = "lm_head.bias", .head_dense = "lm_head.dense",
    .head_norm = "lm_head.layer_norm", .pooler = "roberta.pooler.dense", .class_dense = "classifier.dense",
    .class_out = "classifier.out_proj"};
#define JINA_V3                                                                                                       \
    LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_POST_LN, .embed_scale = HFX_EMBED_OWN_NORM,             \
    .qkv = HFX_QKV_CONCAT, .mlp = HFX_MLP_PLAIN, .bias.rule = HFX_BIAS_USE_BIAS, .bias.default_on = true,             \
    .eps_key = "layer_norm_eps", .act.dflt = "gelu", .scores.mask = HFX_MASK_BOTH_WAYS, .rope.theta = 20000.0,        \
    .names = &jina_v3_names
static const hfx_decoder_desc JinaEmbeddingsV3ForMaskedLM_desc = {"JinaEmbeddingsV3ForMaskedLM", JINA_V3,
                                                                  .head = HFX_HEAD_LM_TRANSFORM, .act.head = "gelu",
                                                                  .defaults.tied = true,
                                                                  .output_class = "MaskedLMOutput"};
static const hfx_decoder_desc JinaEmbeddingsV3ForSequenceClassification_desc = {
    "JinaEmbeddingsV3ForSequenceClassification", JINA_V3, .head = HFX_HEAD_POOLER_CLASSIFIER,
    .output_class = "SequenceClassifierOutput"};
static const hfx_decoder_desc JinaEmbeddingsV3ForTokenClassification_desc = {
    "JinaEmbeddingsV3ForTokenClassification", JINA_V3, .head = HFX_HEAD_TOKEN_CLASSIFIER,
    .output_class = "TokenClassifierOutput"};
static const hfx_decoder_desc JinaEmbeddingsV3ForQuestionAnswering_desc = {
    "JinaEmbeddingsV3ForQuestionAnswering", JINA_V3, .head = HFX_HEAD_QA,
    .output_class = "QuestionAnsweringModelOutput"};
#undef JINA_V3
static const hfx_decoder_base JinaEmbeddingsV3Model_base = {&JinaEmbeddingsV3ForMaskedLM_desc, "JinaEmbeddingsV3Model",
                                                            "BaseModelOutputWithPooling", "roberta.", NULL};
static const hfx_decoder_base GteModel_base = {&GteForMaskedLM_desc, "GteModel", "BaseModelOutputWithPooling", "gte.", NULL};
/* ModernBERT's decoder (Ettin): pre-norm layers, layer 0's input un-normed, LayerNorms biased as norm_bias says, q/k/v
 * and Wo biased as attention_bias says, the GLU MLP (Wi's [input; gate] halves, Wo) biased as mlp_bias says, rotary with
 * a base per layer type and sliding layers (layer_types, sliding_window), the embeddings normed; the LM head BERT's
 * transform (lm_head.dense biased as classifier_bias says, classifier_activation, lm_head.norm) before the tied decoder
 * (its bias as decoder_bias says); the classifier the same transform (head.*) on the last real token, then classifier;
 * ModernBertDecoderModel its base */
static const hfx_decoder_names modernbert_decoder_names = {
    .embed = "model.embeddings.tok_embeddings.weight", .attn = "attn", .o = "Wo", .norm1 = "attn_norm",
    .norm2 = "mlp_norm", .fused_mlp = "Wi", .down = "Wo", .final_norm = "model.final_norm",
    .embed_norm = "model.embeddings.norm", .lm_head = "decoder.weight", .head_dense = "lm_head.dense",
    .head_norm = "lm_head.norm", .class_dense = "head.dense", .class_norm = "head.norm", .class_out = "classifier"};
#define MODERNBERT_DECODER                                                                                          \
    LLAMA_LIKE, .norm = HFX_NORM_LAYER_BIAS_BY_CONFIG, .layout = HFX_LAYOUT_PRE_BARE_FIRST, .mlp = HFX_MLP_GATED_FUSED, \
    .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG, .embed_scale = HFX_EMBED_OWN_NORM, .eps_key = "norm_eps",                   \
    .act.key = "hidden_activation", .act.dflt = "gelu", .act.head_key = "classifier_activation",                       \
    .act.head_dense_bias_key = "classifier_bias", .sliding = HFX_SLIDING_PATTERN_OR_CONFIG, .sliding_pattern = 3,      \
    .rope.local = HFX_LOCAL_ROPE_OWN_BASE, .rope.theta = 160000.0, .rope.names = HFX_ROPE_NAMES_CURRENT,              \
    .masks_by_layer_type = true, .defaults.tied = true, .names = &modernbert_decoder_names,                          \
    .ignored_keys = modernbert_decoder_ignores
static const char *const modernbert_decoder_ignores[] = {"num_key_value_heads", NULL}; /* (every head its keys) */
static const hfx_decoder_desc ModernBertDecoderForCausalLM_desc = {
    "ModernBertDecoderForCausalLM", MODERNBERT_DECODER, .head = HFX_HEAD_LM_TRANSFORM, .head_bias_key = "decoder_bias"};
static const hfx_decoder_desc ModernBertDecoderForSequenceClassification_desc = {
    "ModernBertDecoderForSequenceClassification", MODERNBERT_DECODER, .head = HFX_HEAD_TRANSFORM_CLASSIFIER,
    .output_class = "SequenceClassifierOutputWithPast"};
#undef MODERNBERT_DECODER
/* Qwen3-VL-MoE's language model (no causal LM of its own: vlm.c's host reads it) */
const hfx_decoder_desc hfx_qwen3_vl_moe_text = {"Qwen3VLMoeTextModel", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_PER_HEAD,
                                                .moe = &hfx_moe_qwen3_vl, .output_class = "MoeCausalLMOutputWithPast"};
/* Arcee (AFM): Llama with an ungated MLP, up_proj → relu² → down_proj */
static const hfx_decoder_names arcee_names = {.fc_in = "up_proj", .fc_out = "down_proj"};
static const hfx_decoder_desc ArceeForCausalLM_desc = {"ArceeForCausalLM", LLAMA, .mlp = HFX_MLP_PLAIN,
                                                       .names = &arcee_names, .act.dflt = "relu2", .defaults.eps = 1e-5};
/* Helium: RMSNorms that multiply their weight in f32, interleaved rotary pairs, q/k/v biased by
 * attention_bias and o_proj never */
static const hfx_decoder_desc HeliumForCausalLM_desc = {
    "HeliumForCausalLM", LLAMA, .norm = HFX_NORM_RMS_F32, .rope.pairs = HFX_ROTARY_PAIRS,
    .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias", .defaults.eps = 1e-8,
    .defaults.head_dim = 128, .rope.theta = 100000.0};
/* NanoChat: weight-less RMSNorms everywhere (the embeddings normed too), rotary turned by −θ, weight-less
 * per-head q/k norms after it, an ungated relu² MLP (fc1, fc2), the logits soft-capped */
static const hfx_decoder_names nanochat_names = {.fc_in = "fc1", .fc_out = "fc2"};
static const hfx_decoder_desc NanoChatForCausalLM_desc = {
    "NanoChatForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_PLAIN, .embed_scale = HFX_EMBED_FINAL_NORM,
    .rope.pairs = HFX_ROTARY_HALVES_BACKWARD, .qk_norm = HFX_QK_NORM_AFTER_ROPE, .mlp = HFX_MLP_PLAIN,
    .names = &nanochat_names, .act.dflt = "relu2", .scores.softcaps = HFX_SOFTCAP_FINAL, .defaults.final_softcap = 15.0};
/* HunYuan dense: per-head q/k norms after rotary (query_layernorm, key_layernorm); its checkpoints' "dynamic"
 * rope with an alpha is a fixed NTK base */
static const hfx_decoder_names hunyuan_names = {.q_norm = "query_layernorm", .k_norm = "key_layernorm"};
#define HUNYUAN LLAMA_LIKE, .qk_norm = HFX_QK_NORM_AFTER_ROPE, .names = &hunyuan_names, \
    .rope.names = HFX_ROPE_NAMES_NTK_ALPHA, .defaults.eps = 1e-5
static const hfx_decoder_desc HunYuanDenseV1ForCausalLM_desc = {"HunYuanDenseV1ForCausalLM", HUNYUAN};
/* HunYuan MoE: the dense model's attention, softmax experts beside a shared MLP in every layer */
static const hfx_decoder_desc HunYuanMoEV1ForCausalLM_desc = {"HunYuanMoEV1ForCausalLM", HUNYUAN, .moe = &hfx_moe_hunyuan,
                                                              .output_class = "MoeCausalLMOutputWithPast"};
/* Apertus: an ungated MLP with the learned xIELU, per-head q/k norms, its own norm names; llama3 rotary
 * when the config names none */
static const hfx_decoder_names apertus_names = {.norm1 = "attention_layernorm", .norm2 = "feedforward_layernorm",
                                                .fc_in = "up_proj", .fc_out = "down_proj"};
#define APERTUS_ROPE                                                                                        \
    "{\"rope_type\": \"llama3\", \"rope_theta\": 12000000.0, \"factor\": 8.0, "                                 \
    "\"original_max_position_embeddings\": 8192, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0}"
static const hfx_decoder_desc ApertusForCausalLM_desc = {
    "ApertusForCausalLM", LLAMA_LIKE, .mlp = HFX_MLP_PLAIN, .names = &apertus_names, .act.dflt = "xielu",
    .qk_norm = HFX_QK_NORM_PER_HEAD, .defaults.eps = 1e-5, .rope.theta = 12000000.0,
    .rope.absent = APERTUS_ROPE};
/* Apertus 1.5's text model: Apertus, its LM head pruned to output_vocab_size rows where the config says */
static const hfx_decoder_keys apertus1p5_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                                 "max_position_embeddings", "intermediate_size", .head_rows = "output_vocab_size"};
static const hfx_decoder_desc Apertus1p5TextForCausalLM_desc = {
    "Apertus1p5TextForCausalLM", LLAMA_LIKE, .mlp = HFX_MLP_PLAIN, .names = &apertus_names, .act.dflt = "xielu",
    .qk_norm = HFX_QK_NORM_PER_HEAD, .defaults.eps = 1e-5, .rope.theta = 12000000.0, .keys = &apertus1p5_keys,
    .rope.absent = APERTUS_ROPE, .model_type_alias = "apertus1p5_text"};
/* BitNet (its float checkpoints; the packed ternary ones carry a quantization_config hfx refuses): Llama with the
 * attention's output and the MLP's product RMS-normed before their last projections, relu² */
static const hfx_decoder_desc BitNetForCausalLM_desc = {
    "BitNetForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_SUB_NORMED, .mlp = HFX_MLP_GATED_SUB_NORMED,
    .act.dflt = "relu2", .defaults.eps = 1e-5, .defaults.kv_heads = 5};
/* Nemotron: LayerNorm1P (weights stored less one, with bias), an ungated relu² MLP, half of each head rotated */
static const hfx_decoder_names nemotron_names = {.fc_in = "up_proj", .fc_out = "down_proj"};
static const hfx_decoder_desc NemotronForCausalLM_desc = {
    "NemotronForCausalLM", LLAMA, .norm = HFX_NORM_LAYER_1P, .eps_key = "norm_eps", .defaults.eps = 1e-5,
    .mlp = HFX_MLP_PLAIN, .names = &nemotron_names, .act.dflt = "relu2", .rope.partial_rotary = true,
    .rope.partial = 0.5};
/* Jais-2: Llama's attention (attention_bias, absent: on), LayerNorms at layer_norm_eps, Nemotron's MLP (up, relu²,
 * down; mlp_bias, absent: on) */
static const hfx_decoder_desc Jais2ForCausalLM_desc = {
    "Jais2ForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .eps_key = "layer_norm_eps", .defaults.eps = 1e-5,
    .mlp = HFX_MLP_PLAIN, .names = &nemotron_names, .act.dflt = "relu2", .bias.default_on = true,
    .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG_ON};
/* CWM (Code World Model): Llama's layers without attention biases, sliding windows (8192) but at every 4th layer from
 * the first (layer_types), a llama3 rotary when config.json has none */
#define CWM_ROPE                                                                                            \
    "{\"rope_type\": \"llama3\", \"rope_theta\": 1000000.0, \"factor\": 16.0, "                                 \
    "\"original_max_position_embeddings\": 8192, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0}"
static const hfx_decoder_desc CwmForCausalLM_desc = {
    "CwmForCausalLM", LLAMA, .bias.rule = HFX_BIAS_NONE, .sliding = HFX_SLIDING_FIRST_OF_PATTERN, .sliding_pattern = 4,
    .defaults.window = 8192, .defaults.head_dim = 128, .defaults.kv_heads = 8, .defaults.eps = 1e-5,
    .rope.theta = 1000000.0, .rope.absent = CWM_ROPE, .masks_by_layer_type = true};
/* Persimmon: GPT-NeoX's fused q/k/v per head, every linear biased, a LayerNorm over head_dim on the queries and keys
 * (qk_layernorm, on when absent), partial rotary (0.5), an ungated relu² MLP, LayerNorms; head_dim always hidden /
 * heads, no bias switch */
static const hfx_decoder_names persimmon_names = {.qkv = "query_key_value", .o = "dense", .fc_in = "dense_h_to_4h",
                                                  .fc_out = "dense_4h_to_h", .q_norm = "q_layernorm",
                                                  .k_norm = "k_layernorm", .final_norm = "model.final_layernorm"};
static const char *const persimmon_ignores[] = {"attention_bias", "head_dim", "num_key_value_heads", NULL};
static const hfx_decoder_desc PersimmonForCausalLM_desc = {
    "PersimmonForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .eps_key = "layer_norm_eps", .defaults.eps = 1e-5,
    .mlp = HFX_MLP_PLAIN, .act.dflt = "relu2", .bias.default_on = true, .bias.mlp = HFX_MLP_BIAS_ALWAYS,
    .qkv = HFX_QKV_PER_HEAD, .qk_norm = HFX_QK_NORM_PER_HEAD, .qk_norm_key = "qk_layernorm", .defaults.qk_norm = true,
    .rope.partial_rotary = true, .rope.partial = 0.5, .names = &persimmon_names, .ignored_keys = persimmon_ignores};
/* Seed-OSS: q/k/v biased by attention_bias (default on), o_proj by attention_out_bias */
static const hfx_decoder_desc SeedOssForCausalLM_desc = {
    "SeedOssForCausalLM", LLAMA, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias",
    .bias.default_on = true, .bias.o_key = "attention_out_bias", .defaults.head_dim = 128};
static const hfx_decoder_desc GraniteForCausalLM_desc = {"GraniteForCausalLM", LLAMA_LIKE,
    .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
                                                         .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
                                                         .scores.scale = HFX_SCALE_ATTN_MULTIPLIER};
/* Flint: Qwen3-MoE's layers with sinks in every layer, rotary on the sliding layers only (layer_types; absent: full
 * at layers 0, 1, every 4k + 1 and the last; windows of 513), GPT-OSS's norms (the weight in f32), its sigmoid router
 * and an ungated shared expert, dense MLPs on mlp_only_layers (absent: 0 and 1); its sinks as saved (softmax_offset) */
static const char *const flint_ignores[] = {"use_sliding_window", "max_window_layers", "decoder_sparse_step", NULL};
static const hfx_weight_rename flint_stored[] = {{".sinks", ".softmax_offset"}, {NULL, NULL}};
static const hfx_decoder_names flint_names = {.stored = flint_stored};
static const hfx_decoder_desc FlintForCausalLM_desc = {
    "FlintForCausalLM", QWEN3, .names = &flint_names, .norm = HFX_NORM_RMS_F32, .attention = HFX_ATTN_SINKS, .sliding = HFX_SLIDING_TYPES_OR_ALL,
    .no_rope = HFX_NO_ROPE_FULL_LAYERS, .derive = HFX_DERIVE_FLINT, .defaults.window = 513, .defaults.head_dim = 128,
    .defaults.kv_heads = 4, .moe = &hfx_moe_flint, .ignored_keys = flint_ignores,
    .output_class = "MoeCausalLMOutputWithPast",
    .scores.eager_only = true};
/* HyperCLOVAX: Granite's layers and multipliers (the logits times logits_scaling, attention_multiplier head_dim^-0.5
 * when null) with a norm after each block (Peri-LN: post_norm1, post_norm2) unless use_post_norm is false */
static const hfx_decoder_names hyperclovax_names = {.norm2 = "post_norm1", .pre2 = "post_attention_layernorm",
                                                    .post2 = "post_norm2"};
static const hfx_decoder_keys hyperclovax_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                                  "max_position_embeddings", "intermediate_size",
                                                  .post_norms = "use_post_norm"};
static const hfx_decoder_desc HyperCLOVAXForCausalLM_desc = {
    "HyperCLOVAXForCausalLM", LLAMA, .names = &hyperclovax_names, .keys = &hyperclovax_keys,
    .layout = HFX_LAYOUT_SANDWICH_BY_CONFIG, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS_TIMES,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER_OR_HEAD_DIM};
/* GraniteSWA: Granite's layers with attention sinks in every layer, windows on all layers but every 4th from the first,
 * each layer's rope base its own (layer_rope_theta; 0: none); tied */
static const hfx_decoder_desc GraniteSWAForCausalLM_desc = {
    "GraniteSWAForCausalLM", LLAMA_LIKE, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER, .attention = HFX_ATTN_SINKS, .sliding = HFX_SLIDING_FIRST_OF_PATTERN,
    .sliding_pattern = 4, .no_rope = HFX_NO_ROPE_LAYER_THETA, .defaults.window = 128, .defaults.tied = true,
    .defaults.eps = 1e-5, .defaults.kv_heads = 4, .rope.names = HFX_ROPE_NAMES_CURRENT, .masks_by_layer_type = true,
    .scores.eager_only = true};
static const hfx_decoder_desc Olmo2ForCausalLM_desc = {"Olmo2ForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_WHOLE,
                                                       .layout = HFX_LAYOUT_POST, .defaults.eps = 1e-5};
static const hfx_decoder_desc Olmo3ForCausalLM_desc = {
    "Olmo3ForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_WHOLE, .layout = HFX_LAYOUT_POST, .defaults.eps = 1e-5,
    .sliding = HFX_SLIDING_PATTERN, .sliding_pattern = 4, .defaults.window = 4096, .rope.theta = 500000.0,
    .rope.local = HFX_LOCAL_ROPE_SHARED_BASE, .masks_by_layer_type = true};
/* FlexOlmo: OLMo 2's post-norm layers with OLMoE's experts in every layer */
static const hfx_decoder_desc FlexOlmoForCausalLM_desc = {"FlexOlmoForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_WHOLE,
                                                          .layout = HFX_LAYOUT_POST, .rope.theta = 500000.0,
                                                          .moe = &hfx_moe_olmoe,
                                                          .output_class = "MoeCausalLMOutputWithPast"};
/* GLM-4.5/4.6: V3's router and shared experts after one dense layer, half of each head rotated,
 * optional per-head q/k norms, q/k/v biased by attention_bias and o_proj never */
static const hfx_decoder_desc Glm4MoeForCausalLM_desc = {
    "Glm4MoeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias",
    .qk_norm = HFX_QK_NORM_PER_HEAD, .qk_norm_key = "use_qk_norm", .rope.partial_rotary = true, .rope.partial = 0.5,
    .defaults.eps = 1e-5, .moe = &hfx_moe_glm4, .output_class = "MoeCausalLMOutputWithPast"};
/* dots.llm1: Qwen3's attention (per-head q/k norms, windows from max_window_layers) and V3's experts */
static const hfx_decoder_desc Dots1ForCausalLM_desc = {
    "Dots1ForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_PER_HEAD, .sliding = HFX_SLIDING_FROM_MAX_WINDOW,
    .sliding_pattern = 62, .defaults.window = 4096, .defaults.kv_heads = 32, .masks_by_layer_type = true,
    .moe = &hfx_moe_dots1, .output_class = "MoeCausalLMOutputWithPast"};
/* Solar Open: V3's router and shared experts in every layer, q/k/v biased by attention_bias, o_proj never */
static const hfx_decoder_desc SolarOpenForCausalLM_desc = {
    "SolarOpenForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias",
    .defaults.eps = 1e-5, .defaults.head_dim = 128, .rope.theta = 1000000.0, .moe = &hfx_moe_solar,
    .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc OlmoeForCausalLM_desc = {"OlmoeForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_WHOLE,
                                                       .clip_qkv_key = "clip_qkv", .defaults.eps = 1e-5, .moe = &hfx_moe_olmoe,
                                                       .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc OlmoForCausalLM_desc = {"OlmoForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER_PLAIN,
                                                      .clip_qkv_key = "clip_qkv"};
static const hfx_decoder_desc SmolLM3ForCausalLM_desc = {"SmolLM3ForCausalLM", LLAMA_LIKE,
    .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
                                                         .defaults.tied = true, .no_rope = HFX_NO_ROPE_LIST,
                                                         .sliding = HFX_SLIDING_NO_ROPE, .masks_by_layer_type = true};
static const hfx_decoder_names phi_names = {.o = "dense", .fc_in = "fc1", .fc_out = "fc2",
                                            .final_norm = "model.final_layernorm", .q_norm = "q_layernorm",
                                            .k_norm = "k_layernorm"};
static const hfx_decoder_desc PhiForCausalLM_desc = {
    "PhiForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PARALLEL_SHARED, .mlp = HFX_MLP_PLAIN,
    .act.dflt = "gelu_new", .eps_key = "layer_norm_eps", .rope.partial_rotary = true, .rope.partial = 0.5,
    .bias.default_on = true, .bias.mlp = HFX_MLP_BIAS_ALWAYS, .head = HFX_HEAD_LM_BIASED,
    .qk_norm = HFX_QK_NORM_PER_HEAD,
    .qk_norm_key = "qk_layernorm", .names = &phi_names};
static const hfx_decoder_names stablelm_names = {.q_norm = "q_layernorm", .k_norm = "k_layernorm"};
/* LFM2: attention or a short convolution per layer (layer_types), its own block names */
static const hfx_decoder_names lfm2_names = {.o = "out_proj", .norm1 = "operator_norm", .norm2 = "ffn_norm",
                                             .final_norm = "model.embedding_norm", .q_norm = "q_layernorm",
                                             .k_norm = "k_layernorm", .mlp = "feed_forward", .gate = "w1",
                                             .up = "w3", .down = "w2"};
static const hfx_decoder_desc Lfm2ForCausalLM_desc = {
    "Lfm2ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_PER_HEAD, .names = &lfm2_names,
    .eps_key = "norm_eps", .defaults.eps = 1e-5, .defaults.tied = true, .rope.theta = 1000000.0,
    .mixers.kind = HFX_MIXERS_SHORT_CONV, .mixers.ff_adjust_key = "block_auto_adjust_ff_dim",
    .rope.names = HFX_ROPE_NAMES_CURRENT, .genai_type = "lfm2",
    .masks_by_layer_type = true};
/* LFM2-MoE: LFM2's layers, dense MLPs of intermediate_size first, then sigmoid-routed experts */
static const hfx_decoder_desc Lfm2MoeForCausalLM_desc = {
    "Lfm2MoeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_PER_HEAD, .names = &lfm2_names,
    .eps_key = "norm_eps", .defaults.eps = 1e-5, .defaults.tied = true, .rope.theta = 1000000.0,
    .mixers.kind = HFX_MIXERS_SHORT_CONV, .rope.names = HFX_ROPE_NAMES_CURRENT, .moe = &hfx_moe_lfm2,
    .output_class = "MoeCausalLMOutputWithPast", .genai_type = "lfm2"};
/* LFM3: LFM2's convolutions beside sliding and full attention layers (each type its rotary: proportional on half the
 * full heads by default), sandwich norms, a sigmoid gate per head on the attention output, q/k norms */
static const hfx_decoder_names lfm3_names = {.norm1 = "operator_norm", .norm2 = "post_operator_norm",
                                             .pre2 = "ffn_norm", .post2 = "post_ffn_norm",
                                             .final_norm = "model.embedding_norm", .mlp = "feed_forward", .gate = "w1",
                                             .up = "w3", .down = "w2"};
static const char lfm3_rope[] = "{\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}, "
                                "\"full_attention\": {\"rope_type\": \"proportional\", \"rope_theta\": 1000000.0, "
                                "\"partial_rotary_factor\": 0.5}}";
static const hfx_decoder_desc Lfm3ForCausalLM_desc = {
    "Lfm3ForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_PER_HEAD, .names = &lfm3_names, .eps_key = "norm_eps",
    .defaults.eps = 1e-5, .defaults.tied = true, .defaults.head_dim = 128, .defaults.window = 256,
    .mixers.kind = HFX_MIXERS_SHORT_CONV_SLIDING, .sliding = HFX_SLIDING_TYPES_OR_ALL, .derive = HFX_DERIVE_LFM3,
    .layout = HFX_LAYOUT_SANDWICH_BY_CONFIG, .attention = HFX_ATTN_HEAD_GATE, .rope.local = HFX_LOCAL_ROPE_OWN_BASE,
    .rope.absent = lfm3_rope, .rope.names = HFX_ROPE_NAMES_CURRENT, .masks_by_layer_type = true,
    .genai_type = "lfm2"};
/* Mamba2: every layer a Mamba2 mixer alone, under backbone.* */
static const hfx_decoder_names mamba2_names = {.embed = "backbone.embeddings.weight",
                                               .embed_alt = "backbone.embedding.weight",
                                               .layer = "backbone.layers.%lld",
                                               .norm1 = "norm", .final_norm = "backbone.norm_f", .ssm = "mixer"};
static const hfx_mamba2_keys mamba2_keys = {
    .heads = "num_heads", .head_dim = "head_dim", .state = "state_size", .kernel = "conv_kernel",
    .expand = "expand", .groups = "n_groups", .conv_bias = "use_conv_bias", .proj_bias = "use_bias",
    .act = "hidden_act", .limit = "time_step_limit", .default_heads = 128, .default_head_dim = 64,
    .default_state = 128, .default_kernel = 4, .default_groups = 8, .default_expand = 2.0,
    .default_conv_bias = true, .default_proj_bias = false, .chunk = "chunk_size", .default_chunk = 256};
static const char *const mamba2_forward_args[] = {"input_ids", "cache", "attention_mask", NULL};
/* Nemotron-H: every layer one block after its norm (backbone.layers.{i}.norm, .mixer): Mamba2 mixers whose width is
 * their heads' (dt floored at time_step_min), attention without positions, relu² MLPs, experts by DeepSeek V3's router */
static const hfx_mamba2_keys nemotron_h_keys = {
    .heads = "mamba_num_heads", .head_dim = "mamba_head_dim", .state = "ssm_state_size", .kernel = "conv_kernel",
    .groups = "n_groups", .conv_bias = "use_conv_bias", .proj_bias = "use_bias", .act = "mamba_hidden_act",
    .default_heads = 128, .default_head_dim = 64, .default_state = 128, .default_kernel = 4, .default_groups = 8,
    .default_conv_bias = true, .default_proj_bias = false, .chunk = "chunk_size", .default_chunk = 128,
    .floor = "time_step_min", .default_floor = 0.001};
static const hfx_decoder_names nemotron_h_names = {
    .embed = "backbone.embeddings.weight", .layer = "backbone.layers.%lld", .attn = "mixer", .mlp = "mixer",
    .norm1 = "norm", .fc_in = "up_proj", .fc_out = "down_proj", .final_norm = "backbone.norm_f"};
static const hfx_decoder_desc NemotronHForCausalLM_desc = {
    "NemotronHForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_F32, .eps_key = "layer_norm_epsilon", .defaults.eps = 1e-5,
    .mixers.kind = HFX_MIXERS_ONE_BLOCK_BY_TYPE, .mixers.mamba2 = &nemotron_h_keys, .derive = HFX_DERIVE_NEMOTRON_H,
    .positions = HFX_POSITIONS_NONE, .bias.rule = HFX_BIAS_NONE, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
    .mlp = HFX_MLP_PLAIN, .act.key = "mlp_hidden_act", .act.dflt = "relu2", .defaults.head_dim = 128,
    .defaults.kv_heads = 8, .names = &nemotron_h_names, .moe = &hfx_moe_nemotron_h, .unused_stack = "mtp",
    .ignored_keys = never_tied, .masks_by_layer_type = true, /* (layer_types is its layers_block_type) */
    .rope.names = HFX_ROPE_NAMES_CURRENT, .output_class = "MoeCausalLMOutputWithPast", .genai_type = "granitemoehybrid"};
static const char *const mamba_step_nones[] = {"attention_mask", NULL}; /* Mamba's and Mamba2's generate */
static const hfx_decoder_desc Mamba2ForCausalLM_desc = {
    "Mamba2ForCausalLM", .norm = HFX_NORM_RMS, .layout = HFX_LAYOUT_PRE, .eps_key = "layer_norm_epsilon",
    .defaults.eps = 1e-5, .names = &mamba2_names, .mixers.mamba2 = &mamba2_keys, .mixers.kind = HFX_MIXERS_MAMBA2_ONLY,
    .output_class = "Mamba2CausalLMOutput", .forward_args = mamba2_forward_args, .step_nones = mamba_step_nones,
    .genai_type = "granitemoehybrid"}; /* genai has no Mamba2: Granite 4.0's runtime holds the same states */
/* Granite 4.0: Mamba2 and attention layers (layer_types), Granite's multipliers, optional experts
 * beside a shared MLP, no positions unless position_embedding_type is "rope" */
static const hfx_decoder_names granite_hybrid_names = {.ssm = "mamba"};
static const hfx_mamba2_keys granite_hybrid_keys = {
    .heads = "mamba_n_heads", .head_dim = "mamba_d_head", .state = "mamba_d_state", .kernel = "mamba_d_conv",
    .expand = "mamba_expand", .groups = "mamba_n_groups", .conv_bias = "mamba_conv_bias",
    .proj_bias = "mamba_proj_bias", .act = "hidden_act", .limit = "time_step_limit", .default_heads = 128,
    .default_head_dim = 0, .default_state = 256, .default_kernel = 4, .default_groups = 1,
    .default_expand = 2.0, .default_conv_bias = true, .default_proj_bias = false, .chunk = "mamba_chunk_size",
    .default_chunk = 256};
static const hfx_decoder_desc GraniteMoeHybridForCausalLM_desc = {
    "GraniteMoeHybridForCausalLM", LLAMA_LIKE, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER,
    .moe = &hfx_moe_granite_hybrid, .mixers.mamba2 = &granite_hybrid_keys, .mixers.kind = HFX_MIXERS_MAMBA2_BY_TYPE,
    .names = &granite_hybrid_names, .no_rope = HFX_NO_ROPE_UNLESS_ROPE_TYPE,
    .output_class = "MoeCausalLMOutputWithPast", .genai_type = "granitemoehybrid",
    .masks_by_layer_type = true};
/* Bamba: Mamba2 layers and attention layers (attn_layer_indices) with half of each head rotated, dense MLPs,
 * Granite 4.0's mixer keys */
static const hfx_decoder_names bamba_names = {.norm2 = "pre_ff_layernorm", .mlp = "feed_forward",
                                              .final_norm = "model.final_layernorm", .ssm = "mamba"};
static const hfx_decoder_desc BambaForCausalLM_desc = {
    "BambaForCausalLM", LLAMA_LIKE, .mixers.mamba2 = &granite_hybrid_keys, .mixers.kind = HFX_MIXERS_MAMBA2_BY_INDEX,
    .names = &bamba_names, .rope.partial_rotary = true, .rope.partial = 0.5, .defaults.kv_heads = 8,
    .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
    .defaults.eps = 1e-5, .genai_type = "granitemoehybrid",
    .masks_by_layer_type = true};
/* Zamba2: a Mamba2 mixer in every layer (its gated norm at 1e-5, its convolution always biased, dt floored at
 * time_step_min); in the hybrid layers one of num_mem_blocks shared transformer blocks over [x; embeddings] (heads
 * 2·hidden / heads wide, scaled by (head_dim / 2)^-0.5, rotary with use_mem_rope) with per-use LoRA adapters, through
 * the layer's linear into the mixer's input */
static const hfx_decoder_names zamba2_names = {.final_norm = "model.final_layernorm", .ssm = "mamba"};
static const hfx_mamba2_keys zamba2_keys = {
    .heads = "n_mamba_heads", .state = "mamba_d_state", .kernel = "mamba_d_conv", .expand = "mamba_expand",
    .groups = "mamba_ngroups", .proj_bias = "add_bias_linear", .default_heads = 8, .default_state = 64,
    .default_kernel = 4, .default_groups = 1, .default_expand = 2.0, .default_conv_bias = true,
    .default_proj_bias = false, .chunk = "chunk_size", .default_chunk = 256, .floor = "time_step_min",
    .default_floor = 0.001, .norm_eps = 1e-5};
static const hfx_decoder_desc Zamba2ForCausalLM_desc = {
    "Zamba2ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
    .mlp = HFX_MLP_GATED_FUSED, .act.dflt = "gelu", .defaults.tied = true, .defaults.eps = 1e-5,
    .layout = HFX_LAYOUT_SHARED_BLOCKS, .mixers.kind = HFX_MIXERS_SHARED_BLOCKS_BY_TYPE, .mixers.mamba2 = &zamba2_keys,
    .names = &zamba2_names, .derive = HFX_DERIVE_ZAMBA2, .no_rope = HFX_NO_ROPE_UNLESS_ROPE_TYPE,
    .scores.scale = HFX_SCALE_HALF_HEAD_DIM, .rope.names = HFX_ROPE_NAMES_CURRENT};
/* Jamba: Mamba mixers (mamba_* keys, dt/B/C norms with weights) and attention layers without positions
 * (attn_layer_period/offset), experts on every expert_layer_period-th layer, dense MLPs elsewhere */
static const hfx_mamba1_keys jamba_keys = {"mamba_expand", "mamba_d_state", "mamba_d_conv", "mamba_dt_rank",
                                           "mamba_conv_bias", "mamba_proj_bias", "hidden_act", HFX_DT_BC_WEIGHTED,
                                           "rms_norm_eps"};
static const char *const jamba_ignores[] = {"norm_topk_prob", NULL};
static const hfx_decoder_desc JambaForCausalLM_desc = {
    "JambaForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .mixers.kind = HFX_MIXERS_MAMBA_BY_PERIOD,
    .mixers.mamba1 = &jamba_keys, .names = &bamba_names, .positions = HFX_POSITIONS_NONE, .moe = &hfx_moe_jamba,
    .defaults.kv_heads = 8, .ignored_keys = jamba_ignores, .output_class = "MoeCausalLMOutputWithPast",
    .masks_by_layer_type = true};
/* Falcon-H1: Mamba2 beside attention in every layer (the mixer's inner width mamba_d_ssm, its gated
 * norm optional and normalizing first, its muP multipliers), and the layer's own multipliers */
static const hfx_decoder_names falcon_h1_names = {.norm2 = "pre_ff_layernorm", .mlp = "feed_forward",
                                                  .final_norm = "model.final_layernorm", .ssm = "mamba"};
static const hfx_mamba2_keys falcon_h1_keys = {
    .heads = "mamba_n_heads", .head_dim = "mamba_d_head", .state = "mamba_d_state", .kernel = "mamba_d_conv",
    .expand = "mamba_expand", .groups = "mamba_n_groups", .conv_bias = "mamba_conv_bias",
    .proj_bias = "mamba_proj_bias", .act = "hidden_act", .limit = "time_step_limit", .default_heads = 128,
    .default_head_dim = 0, .default_state = 256, .default_kernel = 4, .default_groups = 1,
    .default_expand = 2.0, .default_conv_bias = true, .default_proj_bias = false, .inner = "mamba_d_ssm",
    .norm_switch = "mamba_rms_norm", .norm_first = "mamba_norm_before_gate", .out_bias = "projectors_bias",
    .in_mult = "ssm_in_multiplier", .section_mults = "ssm_multipliers", .chunk = "mamba_chunk_size",
    .default_chunk = 256};
static const hfx_decoder_desc FalconH1ForCausalLM_desc = {
    "FalconH1ForCausalLM", LLAMA, .eps_key = "rms_norm_eps", .defaults.eps = 1e-5, .names = &falcon_h1_names,
    .mixers.mamba2 = &falcon_h1_keys, .mixers.kind = HFX_MIXERS_PARALLEL_MAMBA2, .defaults.kv_heads = 8,
    .genai_type = "granitemoehybrid",
    .masks_by_layer_type = true}; /* (genai has no Falcon-H1: Mamba2's conv and SSM states, any mix) */
/* Mamba: every layer a Mamba mixer alone, under Mamba2's names */
static const char *const mamba_forward_args[] = {"input_ids", "attention_mask", "cache", NULL};
static const hfx_decoder_desc MambaForCausalLM_desc = {
    "MambaForCausalLM", .norm = HFX_NORM_RMS, .layout = HFX_LAYOUT_PRE, .eps_key = "layer_norm_epsilon",
    .defaults.eps = 1e-5, .defaults.tied = true, .names = &mamba2_names, .mixers.kind = HFX_MIXERS_MAMBA_ONLY,
    .output_class = "MambaCausalLMOutput", .forward_args = mamba_forward_args, .step_nones = mamba_step_nones,
    .genai_type = "granitemoehybrid"}; /* (genai has no Mamba either) */
/* FalconMamba: Mamba, its mixers' dt, B and C each RMS-normed without a weight (mixer_rms_eps) */
static const hfx_mamba1_keys falcon_mamba_keys = {"expand", "state_size", "conv_kernel", "time_step_rank",
                                                  "use_conv_bias", "use_bias", "hidden_act", HFX_DT_BC_PLAIN,
                                                  "mixer_rms_eps"};
static const hfx_decoder_desc FalconMambaForCausalLM_desc = {
    "FalconMambaForCausalLM", .norm = HFX_NORM_RMS, .layout = HFX_LAYOUT_PRE, .eps_key = "layer_norm_epsilon",
    .defaults.eps = 1e-5, .defaults.tied = true, .names = &mamba2_names, .mixers.kind = HFX_MIXERS_MAMBA_ONLY,
    .mixers.mamba1 = &falcon_mamba_keys, .output_class = "FalconMambaCausalLMOutput",
    .forward_args = mamba_forward_args, .step_nones = mamba_step_nones, .genai_type = "granitemoehybrid"};
/* RWKV-4: every layer a time mix (per-channel linear attention, token-shifted k/v/r) and a channel mix (a
 * token-shifted squared-ReLU MLP gated by its receptance) after LayerNorms, the embeddings normed by block 0's pre_ln;
 * no positions, no attention mask read (transformers' model ignores it: padding tokens are tokens) */
static const hfx_decoder_names rwkv_names = {
    .embed = "rwkv.embeddings.weight", .layer = "rwkv.blocks.%lld", .attn = "attention", .mlp = "feed_forward",
    .norm1 = "ln1", .norm2 = "ln2", .final_norm = "rwkv.ln_out", .lm_head = "head.weight",
    .embed_norm = "rwkv.blocks.0.pre_ln"};
static const char *const rwkv_forward_args[] = {"input_ids", "attention_mask", "cache", NULL};
static const hfx_decoder_desc RwkvForCausalLM_desc = {
    "RwkvForCausalLM", .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PRE, .eps_key = "layer_norm_epsilon",
    .defaults.eps = 1e-5, .names = &rwkv_names, .mixers.kind = HFX_MIXERS_RWKV, .mlp = HFX_MLP_CHANNEL_MIX,
    .embed_scale = HFX_EMBED_OWN_NORM, .output_class = "RwkvCausalLMOutput", .forward_args = rwkv_forward_args,
    .genai_type = "granitemoehybrid"}; /* (genai has no RWKV: Granite 4.0's runtime carries any conv and SSM states) */
/* xLSTM (xLSTM-7B's): every layer an mLSTM layer (a matrix memory per head with exponential input and sigmoid forget
 * gates) and a gated MLP after RMS norms; no positions, no attention mask read; logits soft-capped */
static const hfx_decoder_names xlstm_names = {
    .embed = "backbone.embeddings.weight", .layer = "backbone.blocks.%lld", .ssm = "mlstm_layer", .mlp = "ffn",
    .norm1 = "norm_mlstm", .norm2 = "norm_ffn", .final_norm = "backbone.out_norm", .gate = "proj_up_gate",
    .up = "proj_up", .down = "proj_down"};
static const char *const xlstm_forward_args[] = {"input_ids", "attention_mask", "cache", NULL};
static const hfx_decoder_desc xLSTMForCausalLM_desc = {
    "xLSTMForCausalLM", .norm = HFX_NORM_RMS, .layout = HFX_LAYOUT_PRE, .eps_key = "norm_eps", .defaults.eps = 1e-6,
    .names = &xlstm_names, .mixers.kind = HFX_MIXERS_MLSTM, .mlp = HFX_MLP_GATED, .derive = HFX_DERIVE_XLSTM,
    .output_class = "xLSTMCausalLMOutput", .forward_args = xlstm_forward_args,
    .ignored_keys = never_tied}; /* (no genai type: genai has no xLSTM, and Granite 4.0's runtime wants conv states) */
/* Qwen3-Next and Qwen3.5: gated delta-nets and gated attention (layer_types), Gemma's (1 + w) norms,
 * a quarter of each head rotated; Qwen3-Next's MLPs are Qwen2-MoE's experts and shared expert */
static const hfx_decoder_names qwen3_next_names = {.ssm = "linear_attn"};
#define QWEN3_NEXT_LIKE                                                                                  \
    LLAMA_LIKE, .norm = HFX_NORM_RMS_OFFSET, .qk_norm = HFX_QK_NORM_PER_HEAD, .attention = HFX_ATTN_OUTPUT_GATED,  \
    .rope.partial_rotary = true, .rope.partial = 0.25, .names = &qwen3_next_names, .rope.names = HFX_ROPE_NAMES_CURRENT, \
    .masks_by_layer_type = true, .unused_stack = "mtp"
static const hfx_decoder_desc Qwen3NextForCausalLM_desc = {
    "Qwen3NextForCausalLM", QWEN3_NEXT_LIKE, .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE, .mixers.delta = HFX_DELTA_GROUPED,
    .moe = &hfx_moe_qwen3_next, .output_class = "MoeCausalLMOutputWithPast",
    .genai_type = "qwen3_5_moe_text"}; /* genai has no Qwen3-Next: Qwen3.5's delta-net states */
static const hfx_decoder_desc Qwen3_5ForCausalLM_desc = {"Qwen3_5ForCausalLM", QWEN3_NEXT_LIKE,
                                                         .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE,
                                                         .mixers.delta = HFX_DELTA_SEPARATE,
                                                         .model_type_alias = "qwen3_5_text",
                                                         .genai_type = "qwen3_5_text"};
static const hfx_decoder_desc Qwen3_5MoeForCausalLM_desc = {
    "Qwen3_5MoeForCausalLM", QWEN3_NEXT_LIKE, .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE, .mixers.delta = HFX_DELTA_SEPARATE,
    .moe = &hfx_moe_qwen3_5,
    .model_type_alias = "qwen3_5_moe_text", .output_class = "MoeCausalLMOutputWithPast",
    .genai_type = "qwen3_5_moe_text"};
/* Qwen4-Exp: Qwen3.5-MoE's blocks under gated residuals over hc_count streams, its attention with a QSA block
 * indexer, hashed n-gram embeddings on the ple_layer_ids layers; no final norm (the streams' mixer) */
static const hfx_decoder_desc Qwen4ExpForCausalLM_desc = {
    "Qwen4ExpForCausalLM", QWEN3_NEXT_LIKE, .attention = HFX_ATTN_OUTPUT_GATED_QSA, .layout = HFX_LAYOUT_HYPER_GATED,
    .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE, .mixers.delta = HFX_DELTA_SEPARATE, .moe = &hfx_moe_qwen4_exp,
    .derive = HFX_DERIVE_QWEN4_EXP, .model_type_alias = "qwen4_exp_text", .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc StableLmForCausalLM_desc = {
    "StableLmForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PARALLEL_SHARED,
    .parallel_from_config = true, .eps_key = "layer_norm_eps", .rope.partial_rotary = true,
    .rope.partial = 0.25, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "use_qkv_bias",
    .qk_norm = HFX_QK_NORM_HEAD_WEIGHTS, .qk_norm_key = "qk_layernorm", .names = &stablelm_names};
#define GLM_LIKE                                                                                             \
    LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias", .bias.default_on = true, \
    .defaults.eps = 1.5625e-07, .defaults.kv_heads = 2, .defaults.head_dim = 128, .rope.partial_rotary = true,     \
    .rope.partial = 0.5, .rope.pairs = HFX_ROTARY_PAIRS, .mlp = HFX_MLP_GATED_FUSED
static const hfx_decoder_desc GlmForCausalLM_desc = {"GlmForCausalLM", GLM_LIKE};
static const hfx_decoder_names glm4_names = {.norm2 = "post_self_attn_layernorm", .pre2 = "post_attention_layernorm",
                                             .post2 = "post_mlp_layernorm"};
static const hfx_decoder_desc Glm4ForCausalLM_desc = {"Glm4ForCausalLM", GLM_LIKE, .layout = HFX_LAYOUT_SANDWICH,
                                                      .names = &glm4_names};
/* Kolibri-1: EXAONE 4's attention (q/k norms, no biases, rotary on the sliding layers only when a window is set) in
 * GLM-4's sandwich, experts in every layer (HFX_ROUTER_LOGITS_CORRECTED, an ungated shared MLP); layer_types, else full
 * at every 5th layer, windows of 513; its checkpoints' names (post_attn_norm, post_ffn_norm, moe.router.expert_bias) */
static const char *const kolibri_ignores[] = {"attention_bias", "use_sliding_window", "decoder_sparse_step",
                                              "mlp_only_layers", "intermediate_size", NULL};
static const hfx_weight_rename kolibri_stored[] = {
    {"post_self_attn_layernorm", "post_attn_norm"}, {"post_mlp_layernorm", "post_ffn_norm"},
    {"mlp.gate.e_score_correction_bias", "moe.router.expert_bias"}, {NULL, NULL}};
static const hfx_decoder_names kolibri_names = {.norm2 = "post_self_attn_layernorm", .pre2 = "post_attention_layernorm",
                                                .post2 = "post_mlp_layernorm", .stored = kolibri_stored};
static const hfx_decoder_desc Kolibri1ForCausalLM_desc = {
    "Kolibri1ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_PER_HEAD,
    .layout = HFX_LAYOUT_SANDWICH, .names = &kolibri_names, .sliding = HFX_SLIDING_TYPES_OR_ALL,
    .no_rope = HFX_NO_ROPE_FULL_IF_WINDOW, .derive = HFX_DERIVE_KOLIBRI, .defaults.window = 513,
    .defaults.head_dim = 128, .defaults.kv_heads = 4, .masks_by_layer_type = true, .moe = &hfx_moe_kolibri,
    .ignored_keys = kolibri_ignores, .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc Ernie4_5ForCausalLM_desc = {
    "Ernie4_5ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_USE_BIAS, .defaults.eps = 1e-5, .defaults.kv_heads = 2,
    .defaults.head_dim = 128, .rope.theta = 500000.0, .defaults.tied = true, .rope.pairs = HFX_ROTARY_PAIRS,
    .rope.pairs = HFX_ROTARY_PAIRS_F32};
static const hfx_decoder_desc Exaone4ForCausalLM_desc = {
    "Exaone4ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_PER_HEAD,
    .layout = HFX_LAYOUT_POST, .defaults.eps = 1e-5, .defaults.kv_heads = 32,
    .sliding = HFX_SLIDING_PATTERN_OR_CONFIG,
    .sliding_pattern = 4, .defaults.window = 4096, .no_rope = HFX_NO_ROPE_FULL_IF_WINDOW,
    .masks_by_layer_type = true};
#define COHERE_LIKE                                                                                          \
    LLAMA_LIKE, .norm = HFX_NORM_LAYER_WEIGHT, .layout = HFX_LAYOUT_PARALLEL_SHARED, .eps_key = "layer_norm_eps", \
    .defaults.tied = true, .rope.pairs = HFX_ROTARY_PAIRS, .multipliers = HFX_MULT_LOGIT_SCALE, .defaults.logit_scale = 0.0625
static const hfx_decoder_desc CohereForCausalLM_desc = {"CohereForCausalLM", COHERE_LIKE, .rope.theta = 500000.0,
                                                        .qk_norm = HFX_QK_NORM_HEAD_WEIGHTS,
                                                        .qk_norm_key = "use_qk_norm"};
static const hfx_decoder_desc Cohere2ForCausalLM_desc = {
    "Cohere2ForCausalLM", COHERE_LIKE, .sliding = HFX_SLIDING_PATTERN_OR_CONFIG, .sliding_pattern = 4,
    .defaults.window = 4096, .no_rope = HFX_NO_ROPE_FULL_LAYERS, .masks_by_layer_type = true};
/* Cohere2-MoE: Cohere 2's parallel layers with experts after a dense prefix (mlp_layer_types), the norms RMS when
 * rms_norm_eps is set, rope on the sliding layers and the dense prefix, head_dim a key of its own (128) */
static const hfx_decoder_keys cohere2_moe_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                                  "max_position_embeddings", "prefix_dense_intermediate_size",
                                                  .embed_dim = NULL};
static const char *const cohere2_moe_ignores[] = {"rope_scaling", NULL}; /* (its config class drops it) */
static const hfx_decoder_desc Cohere2MoeForCausalLM_desc = {
    "Cohere2MoeForCausalLM", COHERE_LIKE, .norm = HFX_NORM_RMS_OR_LAYER_WEIGHT, .sliding = HFX_SLIDING_PATTERN_OR_CONFIG,
    .sliding_pattern = 4, .defaults.window = 4096, .derive = HFX_DERIVE_COHERE2_MOE,
    .no_rope = HFX_NO_ROPE_FULL_BUT_DENSE_PREFIX, .masks_by_layer_type = true,
    .defaults.head_dim = 128, .keys = &cohere2_moe_keys, .moe = &hfx_moe_cohere2, .rope.names = HFX_ROPE_NAMES_CURRENT,
    .ignored_keys = cohere2_moe_ignores, .output_class = "MoeCausalLMOutputWithPast"};
/* MiMo-V2-Flash: Llama's layers with values of their own width (scaled), twice the key/value heads and sinks on the
 * sliding layers, a partial rotary per layer type (rope_parameters only), DeepSeek V3's router after a dense layer */
static const char mimo_v2_rope[] = "{\"full_attention\": {\"rope_type\": \"default\", \"rope_theta\": 5000000.0, "
                                   "\"partial_rotary_factor\": 0.334}, \"sliding_attention\": {\"rope_type\": "
                                   "\"default\", \"rope_theta\": 10000.0, \"partial_rotary_factor\": 0.334}}";
/* (its config class reads no flat rope keys, no first_k_dense_replace and no shared experts) */
static const char *const mimo_v2_ignores[] = {"rope_theta", "rope_scaling", "partial_rotary_factor", "first_k_dense_replace",
                                              "n_shared_experts", NULL};
static const hfx_decoder_desc MiMoV2FlashForCausalLM_desc = {
    "MiMoV2FlashForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "attention_bias",
    .shapes = HFX_SHAPES_SLIDING_DOUBLE_KV, .attention = HFX_ATTN_SINKS_SLIDING, .sliding = HFX_SLIDING_TYPES_OR_ALL,
    .derive = HFX_DERIVE_MIMO_V2, .defaults.window = 129, .defaults.head_dim = 192, .defaults.eps = 1e-5,
    .defaults.kv_heads = 4, .rope.local = HFX_LOCAL_ROPE_OWN_BASE, .rope.partial_rotary = true, .rope.partial = 0.334,
    .rope.absent = mimo_v2_rope, .rope.names = HFX_ROPE_NAMES_CURRENT, .masks_by_layer_type = true,
    .ignored_keys = mimo_v2_ignores, .moe = &hfx_moe_mimo_v2, .unused_stack = "model.mtp",
    .output_class = "MoeCausalLMOutputWithPast",
    .scores.eager_only = true};
/* JetMoE: a mixture of attention heads and a mixture of MLP experts (both top-k of num_local_experts), RMS norms whose
 * layers' epsilon is 1e-6, kv_channels the head width; tied */
static const hfx_decoder_names jetmoe_names = {.attn = "self_attention"};
static const hfx_decoder_keys jetmoe_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                             "max_position_embeddings", "intermediate_size", .head_dim = "kv_channels"};
static const hfx_decoder_desc JetMoeForCausalLM_desc = {
    "JetMoeForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_LAYERS_1E6, .attention = HFX_ATTN_MIXTURE,
    .bias.rule = HFX_BIAS_NONE, .act.key = "activation_function", .defaults.tied = true, .names = &jetmoe_names,
    .keys = &jetmoe_keys, .moe = &hfx_moe_jetmoe, .rope.names = HFX_ROPE_NAMES_CURRENT,
    .output_class = "MoeCausalLMOutputWithPast"};
/* OLMo-Hybrid: gated delta-nets (their own projections, beta doubled) pre-normed beside OLMo 3's post-normed attention
 * layers (q/k norms over the whole projection; no rotary when rope_theta is null); the Hub's norm names */
static const hfx_decoder_names olmo_hybrid_names = {.norm1 = "attention_layer_norm", .norm2 = "feedforward_layer_norm",
                                                    .ssm = "linear_attn"};
static const hfx_decoder_desc OlmoHybridForCausalLM_desc = {
    "OlmoHybridForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_F32, .qk_norm = HFX_QK_NORM_WHOLE,
    .layout = HFX_LAYOUT_POST_OR_PRE_BY_MIXER, .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE,
    .mixers.delta = HFX_DELTA_PER_PROJECTION, .derive = HFX_DERIVE_OLMO_HYBRID, .no_rope = HFX_NO_ROPE_NULL_THETA,
    .names = &olmo_hybrid_names, .unused_stack = "mtp", .rope.names = HFX_ROPE_NAMES_CURRENT,
    .genai_type = "qwen3_5_text",
    .masks_by_layer_type = true}; /* (genai has no OLMo-Hybrid: Qwen3.5's delta-net states) */
/* RecurrentGemma (Griffin): RG-LRU blocks and local multi-query attention by block_types, Gemma's norms, biased MLPs
 * half intermediate_size wide, the embeddings times a bf16 √hidden, the logits soft-capped */
static const hfx_decoder_names recurrent_gemma_names = {
    .attn = "temporal_block", .ssm = "temporal_block", .mlp = "mlp_block", .norm1 = "temporal_pre_norm",
    .norm2 = "channel_pre_norm", .final_norm = "model.final_norm"};
static const char *const recurrent_gemma_forward_args[] = {"input_ids", "position_ids", "attention_mask", "cache", NULL};
static const hfx_decoder_desc RecurrentGemmaForCausalLM_desc = {
    "RecurrentGemmaForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_OFFSET, .act.key = "hidden_activation",
    .act.dflt = "gelu_pytorch_tanh", .defaults.tied = true, .bias.rule = HFX_BIAS_O_ONLY, .bias.qkv_key = "attention_bias",
    .bias.mlp = HFX_MLP_BIAS_ALWAYS, .mixers.kind = HFX_MIXERS_RG_LRU_BY_TYPE, .derive = HFX_DERIVE_RECURRENT_GEMMA,
    .sliding = HFX_SLIDING_TYPES_OR_ALL, .defaults.window = 2048, .embed_scale = HFX_EMBED_SQRT_HIDDEN_BF16,
    .scores.softcaps = HFX_SOFTCAP_FINAL, .rope.partial_rotary = true, .rope.partial = 0.5,
    .rope.names = HFX_ROPE_NAMES_CURRENT, .names = &recurrent_gemma_names, .output_class = "CausalLMOutput",
    .forward_args = recurrent_gemma_forward_args};
static const hfx_decoder_desc Qwen2MoeForCausalLM_desc = {
    "Qwen2MoeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_QKV_FROM_CONFIG, .bias.qkv_key = "qkv_bias",
    .bias.default_on = true, .sliding = HFX_SLIDING_EVEN_BELOW_MAX, .masks_by_layer_type = true,
    .defaults.kv_heads = 16, .moe = &hfx_moe_qwen2, .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc GraniteMoeForCausalLM_desc = {
    "GraniteMoeForCausalLM", LLAMA_LIKE, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER,
    .moe = &hfx_moe_granite, .output_class = "MoeCausalLMOutputWithPast"};
/* GraniteMoE with a shared MLP beside the experts (shared_intermediate_size; 0: none) */
static const hfx_decoder_desc GraniteMoeSharedForCausalLM_desc = {
    "GraniteMoeSharedForCausalLM", LLAMA_LIKE, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER, .moe = &hfx_moe_granite_shared, .output_class = "MoeCausalLMOutputWithPast"};
/* GraniteMoeSWA: GraniteMoeShared's experts with GraniteSWA's sinks, windows and per-layer rope bases */
static const hfx_decoder_desc GraniteMoeSWAForCausalLM_desc = {
    "GraniteMoeSWAForCausalLM", LLAMA_LIKE, .multipliers = HFX_MULT_EMBED_RESIDUAL_LOGITS,
    .scores.scale = HFX_SCALE_ATTN_MULTIPLIER, .moe = &hfx_moe_granite_shared, .output_class = "MoeCausalLMOutputWithPast",
    .attention = HFX_ATTN_SINKS, .sliding = HFX_SLIDING_FIRST_OF_PATTERN, .sliding_pattern = 4,
    .no_rope = HFX_NO_ROPE_LAYER_THETA, .defaults.window = 128, .rope.names = HFX_ROPE_NAMES_CURRENT,
    .masks_by_layer_type = true,
    .scores.eager_only = true};
/* MiniMax-M2: q/k norms over the whole projections, `rotary_dim` of each head rotated, a sigmoid router with
 * the block's correction bias over Mixtral's experts */
static const hfx_decoder_desc MiniMaxM2ForCausalLM_desc = {
    "MiniMaxM2ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_WHOLE,
    .rope.partial_rotary = true, .rope.dim_key = "rotary_dim", .defaults.head_dim = 128, .rope.theta = 5000000.0,
    .moe = &hfx_moe_minimax_m2, .output_class = "MoeCausalLMOutputWithPast"};
/* MiniMax-01: lightning attention layers (layer_types' linear_attention) beside full attention ones, each layer's
 * residual its normed input with the kind's α and β factors, Mixtral's experts */
static const hfx_decoder_desc MiniMaxForCausalLM_desc = {
    "MiniMaxForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .sliding = HFX_SLIDING_ALL, .moe = &hfx_moe_mixtral,
    .layout = HFX_LAYOUT_NORMED_RESIDUAL, .mixers.kind = HFX_MIXERS_LIGHTNING_BY_TYPE, .derive = HFX_DERIVE_MINIMAX,
    .rope.theta = 1000000.0, .output_class = "MoeCausalLMOutputWithPast"};
/* EXAONE-MoE: EXAONE 4's attention (per-head q/k norms, windows by pattern, no rope on the full layers) in
 * pre-norm layers, V3's router over the mlp_layer_types sparse layers */
static const hfx_decoder_desc ExaoneMoeForCausalLM_desc = {
    "ExaoneMoeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .qk_norm = HFX_QK_NORM_PER_HEAD,
    .defaults.eps = 1e-5, .defaults.kv_heads = 32, .sliding = HFX_SLIDING_PATTERN_OR_CONFIG, .sliding_pattern = 4,
    .defaults.window = 4096, .no_rope = HFX_NO_ROPE_FULL_IF_WINDOW, .masks_by_layer_type = true,
    .moe = &hfx_moe_exaone, .output_class = "MoeCausalLMOutputWithPast"};
/* ERNIE 4.5 MoE: ERNIE 4.5's layers, softmax experts corrected for the choice on a range of layers, the head
 * biased with use_bias */
static const hfx_decoder_desc Ernie4_5_MoeForCausalLM_desc = {
    "Ernie4_5_MoeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_USE_BIAS, .defaults.eps = 1e-5,
    .defaults.kv_heads = 4, .defaults.tied = true, .rope.theta = 500000.0, .rope.pairs = HFX_ROTARY_PAIRS_F32,
    .head = HFX_HEAD_LM_USE_BIAS, .moe = &hfx_moe_ernie4_5, .output_class = "MoeCausalLMOutputWithPast",
    .unused_stack = "mtp"};
/* GPT-OSS: biased attention with sinks, sliding and full layers alternating, YaRN (its default),
 * and clamped-SwiGLU experts with biases. */
static const hfx_decoder_desc GptOssForCausalLM_desc = {
    "GptOssForCausalLM", LLAMA_LIKE, .bias.default_on = true, .sliding = HFX_SLIDING_PATTERN,
    .sliding_pattern = 2, .defaults.window = 128, .masks_by_layer_type = true, .rope.theta = 150000.0,
    .defaults.eps = 1e-5, .attention = HFX_ATTN_SINKS, .moe = &hfx_moe_gpt_oss,
    .output_class = "MoeCausalLMOutputWithPast",
    .scores.eager_only = true};
/* DeepSeek V2/V3: multi-head latent attention, dense layers then shared + routed experts. V2 rotates
 * interleaved pairs in place; V3 regroups them into halves (rope_interleave). */
static const hfx_decoder_desc DeepseekV2ForCausalLM_desc = {
    "DeepseekV2ForCausalLM", LLAMA_LIKE, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG, .attention = HFX_ATTN_LATENT,
    .rope.pairs = HFX_ROTARY_PAIRS,
    .moe = &hfx_moe_deepseek_v2, .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_desc DeepseekV3ForCausalLM_desc = {
    "DeepseekV3ForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .moe = &hfx_moe_deepseek_v3,
    .rope.interleave_key = "rope_interleave",
    .output_class = "MoeCausalLMOutputWithPast"};
/* LongCat-Flash: each layer two sublayers of latent attention (its low-rank parts scaled by √(hidden / rank)) and a
 * dense MLP, and a shortcut of experts beside zero-compute ones (HFX_LAYOUT_PAIRED_SHORTCUT) */
static const hfx_decoder_desc LongcatFlashForCausalLM_desc = {
    "LongcatFlashForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .latent.scaling = HFX_MLA_SCALE_LORA_RANKS,
    .moe = &hfx_moe_longcat, .layout = HFX_LAYOUT_PAIRED_SHORTCUT, .derive = HFX_DERIVE_LONGCAT,
    .rope.interleave_key = "rope_interleave", .rope.theta = 10000000.0, .output_class = "MoeCausalLMOutputWithPast"};
/* DeepSeek V3.2: V3's latent attention (always its rotary pairs regrouped) reading each query's index_topk keys a
 * lightning indexer picks (indexer.c), V3's experts by mlp_layer_types */
static const hfx_decoder_desc DeepseekV32ForCausalLM_desc = {
    "DeepseekV32ForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .latent.keys = HFX_MLA_KEYS_INDEXED,
    .moe = &hfx_moe_deepseek_v32, .rope.interleave_key = "rope_interleave", .derive = HFX_DERIVE_DEEPSEEK_V32,
    .defaults.eps = 1e-6, .output_class = "MoeCausalLMOutputWithPast"};
/* A.X K1: DeepSeek V3's, always a low-rank query, the sparse MLPs' output RMS-normed (post_mlp_layernorm, which its
 * checkpoints keep on the layer) */
static const hfx_weight_rename axk1_stored[] = {{".mlp.post_mlp_layernorm.", ".post_mlp_layernorm."}, {NULL, NULL}};
static const hfx_decoder_names axk1_names = {.stored = axk1_stored};
static const hfx_decoder_desc AXK1ForCausalLM_desc = {
    "AXK1ForCausalLM", LLAMA_LIKE, .names = &axk1_names, .attention = HFX_ATTN_LATENT, .moe = &hfx_moe_axk1,
    .rope.interleave_key = "rope_interleave", .derive = HFX_DERIVE_AXK1, .defaults.eps = 1e-6,
    .output_class = "MoeCausalLMOutputWithPast"};
/* A.X K2: DeepSeek V3.2's sparse attention, its queries and an output gate one projection over the low-rank part
 * normed and not; the layer norms gated (the input norm everywhere, the second on the sparse layers); V3's router
 * without groups unless n_group says, the groups not kept scoring 0 */
static const hfx_weight_rename axk2_stored[] = {
    {".mlp.fc1.", ".W_down."}, {".mlp.fc2.", ".W_up."}, {".q_gate_proj.", ".q_b_proj."}, {NULL, NULL}};
static const hfx_decoder_names axk2_names = {.stored = axk2_stored};
static const hfx_decoder_desc AXK2ForCausalLM_desc = {
    "AXK2ForCausalLM", LLAMA_LIKE, .names = &axk2_names, .norm = HFX_NORM_RMS_GATED, .attention = HFX_ATTN_LATENT,
    .latent = {.keys = HFX_MLA_KEYS_INDEXED, .gate = HFX_MLA_GATE_FROM_QUERY}, .moe = &hfx_moe_axk2,
    .rope.interleave_key = "rope_interleave", .derive = HFX_DERIVE_AXK2, .defaults.eps = 1e-6,
    .output_class = "MoeCausalLMOutputWithPast"};
/* GLM-5: DeepSeek V3.2's, the indexer's rotary pairs regrouped as the attention's are, and the layers indexer_types
 * (or index_topk_pattern, or index_topk_freq and index_skip_topk_offset) calls "shared" reusing the last full layer's
 * picks */
static const hfx_decoder_desc GlmMoeDsaForCausalLM_desc = {
    "GlmMoeDsaForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .latent.keys = HFX_MLA_KEYS_INDEXED_PAIRS,
    .moe = &hfx_moe_glm_moe_dsa, .rope.interleave_key = "rope_interleave", .derive = HFX_DERIVE_DEEPSEEK_V32,
    .defaults.eps = 1e-5, .output_class = "MoeCausalLMOutputWithPast"};
/* Kimi-Linear: Kimi delta attention layers (a gated delta rule decaying per key channel) beside latent attention
 * without positions, V3's experts by mlp_layer_types */
static const hfx_decoder_names kimi_names = {.ssm = "self_attn", .mlp = "block_sparse_moe"}; /* (as saved) */
static const hfx_decoder_desc KimiLinearForCausalLM_desc = {
    "KimiLinearForCausalLM", LLAMA_LIKE, .names = &kimi_names, .attention = HFX_ATTN_LATENT, .positions = HFX_POSITIONS_NONE,
    .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE, .mixers.delta = HFX_DELTA_KDA, .moe = &hfx_moe_kimi,
    .derive = HFX_DERIVE_KIMI_LINEAR, .ignored_keys = never_tied, .output_class = "MoeCausalLMOutputWithPast",
    .masks_by_layer_type = true};
/* BailingHybrid (Ling 3): Kimi delta attention with full-rank gates and a bounded decay, and latent attention whose
 * heads are gated (g_proj), the last layer of every group; V3's experts; its tensors as saved (word_embeddings, the
 * layers' "attention" and "dense") */
static const hfx_decoder_names bailing_hybrid_names = {.embed = "model.word_embeddings.weight", .attn = "attention",
                                                       .o = "dense", .ssm = "attention"};
static const hfx_decoder_desc BailingHybridForCausalLM_desc = {
    "BailingHybridForCausalLM", LLAMA_LIKE, .names = &bailing_hybrid_names, .attention = HFX_ATTN_LATENT,
    .latent.gate = HFX_MLA_GATE_PER_HEAD, .rope.interleave_key = "rope_interleave", .rope.theta = 6000000.0,
    .mixers.kind = HFX_MIXERS_DELTA_BY_TYPE, .mixers.delta = HFX_DELTA_KDA_FULL_RANK, .moe = &hfx_moe_bailing_hybrid,
    .derive = HFX_DERIVE_BAILING_HYBRID, .ignored_keys = never_tied, .output_class = "MoeCausalLMOutputWithPast",
    .masks_by_layer_type = true};
/* HY V4: hyper-connections (hc_mult streams); latent attention with learned sinks and an elementwise output gate,
 * reading the keys an indexer picks (its rotary on its last dims; "shared" layers reuse the last full one's picks);
 * V3's router over experts clamped at swiglu_limit. Its tensors as its checkpoints and transformers' saving name them
 * (hc_attn_layer.hc_fn, learnable_sink_param, linear_gate) or as the model does. */
static const hfx_weight_rename hy_v4_stored[] = {
    {".attn_hc.", ".hc_pre.hc_attn_layer.hc_"}, {".ffn_hc.", ".hc_pre.hc_mlp_layer.hc_"},
    {".attn_hc.", ".hc_attn_layer.hc_"}, {".ffn_hc.", ".hc_mlp_layer.hc_"},
    {"hc_head.hc_", "hc_pre.hc_head.hc_head_"}, {"hc_head.hc_", "hc_head.hc_head_"},
    {".sinks", ".learnable_sink_param"}, {".gate_proj.", ".linear_gate."}, {NULL, NULL}};
static const hfx_decoder_names hy_v4_names = {.stored = hy_v4_stored};
/* (the config class sets num_key_value_heads to the heads and reads no first_k_dense_replace) */
static const char *const hy_v4_ignores[] = {"num_key_value_heads", "first_k_dense_replace", NULL};
static const hfx_decoder_desc HYV4ForCausalLM_desc = {
    "HYV4ForCausalLM", LLAMA_LIKE, .names = &hy_v4_names, .layout = HFX_LAYOUT_HYPER, .attention = HFX_ATTN_LATENT,
    .latent = {.keys = HFX_MLA_KEYS_INDEXED_ROTARY_LAST, .gate = HFX_MLA_GATE_ELEMENTWISE, .sinks = HFX_MLA_SINKS_LEARNED},
    .moe = &hfx_moe_hy_v4, .defaults.eps = 1e-5, .unused_stack = "model.mtp_layers", .ignored_keys = hy_v4_ignores,
    .output_class = "MoeCausalLMOutputWithPast",
    .scores.eager_only = true};
/* DeepSeek V4: hyper-connections whose residual a Sinkhorn-Knopp matrix mixes; compressed attention (compressed.c): one
 * key head that is also the value, sinks, a window in every layer and, in the compressed ones, the pooled entries
 * (HCA's; CSA's with its indexer); experts in every layer, routed by √softplus scores or, in the first layers, by token
 * id, theirs and the shared MLP's gate and up clamped. Its linears unbiased but the shared MLP's (mlp_bias). */
static const hfx_weight_rename deepseek_v4_stored[] = {
    {".self_attn.q_a_proj.", ".attn.wq_a."}, {".self_attn.q_a_norm.", ".attn.q_norm."},
    {".self_attn.q_b_proj.", ".attn.wq_b."}, {".self_attn.kv_proj.", ".attn.wkv."}, {".self_attn.kv_norm.", ".attn.norm."},
    {".self_attn.o_a_proj.", ".attn.wo_a."}, {".self_attn.o_b_proj.", ".attn.wo_b."}, {".self_attn.sinks", ".attn.attn_sink"},
    {".self_attn.compressor.position_bias", ".attn.compressor.ape"},
    {".self_attn.compressor.kv_proj.", ".attn.compressor.wkv."},
    {".self_attn.compressor.gate_proj.", ".attn.compressor.wgate."},
    {".self_attn.compressor.kv_norm.", ".attn.compressor.norm."},
    {".self_attn.compressor.indexer.position_bias", ".attn.indexer.compressor.ape"},
    {".self_attn.compressor.indexer.kv_proj.", ".attn.indexer.compressor.wkv."},
    {".self_attn.compressor.indexer.gate_proj.", ".attn.indexer.compressor.wgate."},
    {".self_attn.compressor.indexer.kv_norm.", ".attn.indexer.compressor.norm."},
    {".self_attn.compressor.indexer.q_b_proj.", ".attn.indexer.wq_b."},
    {".self_attn.compressor.indexer.scorer.weights_proj.", ".attn.indexer.weights_proj."},
    {".input_layernorm.", ".attn_norm."}, {".post_attention_layernorm.", ".ffn_norm."},
    {".attn_hc.", ".hc_attn_"}, {".ffn_hc.", ".hc_ffn_"},
    {".mlp.shared_experts.gate_proj.", ".ffn.shared_experts.w1."}, {".mlp.shared_experts.up_proj.", ".ffn.shared_experts.w3."},
    {".mlp.shared_experts.down_proj.", ".ffn.shared_experts.w2."}, {"lm_head.", "head."}, {NULL, NULL}};
static const hfx_decoder_names deepseek_v4_names = {.stored = deepseek_v4_stored};
static const char *const deepseek_v4_ignores[] = {"num_key_value_heads", "attention_bias", NULL};
static const hfx_decoder_desc DeepseekV4ForCausalLM_desc = {
    "DeepseekV4ForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_F32, .layout = HFX_LAYOUT_HYPER_SINKHORN,
    .attention = HFX_ATTN_COMPRESSED, .sliding = HFX_SLIDING_ALL, .defaults = {.window = 128, .kv_heads = 1},
    .bias = {.rule = HFX_BIAS_NONE, .mlp = HFX_MLP_BIAS_FROM_CONFIG}, .moe = &hfx_moe_deepseek_v4,
    .derive = HFX_DERIVE_DEEPSEEK_V4, .unused_stack = "mtp", .names = &deepseek_v4_names, .ignored_keys = deepseek_v4_ignores,
    .output_class = "MoeCausalLMOutputWithPast",
    .scores.eager_only = true};
/* GLM-4.7-Flash: V3's latent attention and experts, the sparse layers by mlp_layer_types (its config never reads
 * first_k_dense_replace) */
static const char *const glm4_lite_ignores[] = {"first_k_dense_replace", NULL};
static const hfx_decoder_desc Glm4MoeLiteForCausalLM_desc = {
    "Glm4MoeLiteForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .moe = &hfx_moe_glm4_lite,
    .rope.interleave_key = "rope_interleave", .defaults.eps = 1e-5, .ignored_keys = glm4_lite_ignores,
    .output_class = "MoeCausalLMOutputWithPast"};
/* HY3 (Tencent Hunyuan 3): Llama's attention with per-head q/k norms, V3's sigmoid router over one group beside a
 * shared MLP; its config has no group or dense-prefix keys (hidden from the parse) */
static const char *const hy_v3_ignores[] = {"first_k_dense_replace", "n_group", "topk_group", "routed_scaling_factor",
                                            "norm_topk_prob", NULL};
static const hfx_decoder_desc HYV3ForCausalLM_desc = {
    "HYV3ForCausalLM", LLAMA_LIKE, .qk_norm = HFX_QK_NORM_PER_HEAD, .bias.mlp = HFX_MLP_BIAS_FROM_CONFIG,
    .rope.theta = 11158840.0, .defaults.eps = 1e-5, .defaults.head_dim = 128, .defaults.kv_heads = 8,
    .moe = &hfx_moe_hy_v3, .ignored_keys = hy_v3_ignores, .output_class = "MoeCausalLMOutputWithPast"};
/* AFMoE (Arcee's Trinity): a sandwich of f32-weighted RMS norms, per-head q/k norms, rotary on the sliding layers
 * alone (every global_attn_every_n_layers-th layer global), the output gated by its own gate_proj; V3's sigmoid
 * router over one group beside shared experts after num_dense_layers dense ones; muP's embedding scale */
static const hfx_decoder_names afmoe_names = {.pre2 = "pre_mlp_layernorm", .post2 = "post_mlp_layernorm"};
static const char *const afmoe_ignores[] = {"first_k_dense_replace", "n_group", "topk_group", "routed_scaling_factor",
                                            "norm_topk_prob", NULL};
static const hfx_decoder_desc AfmoeForCausalLM_desc = {
    "AfmoeForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_RMS_F32, .layout = HFX_LAYOUT_SANDWICH, .names = &afmoe_names,
    .qk_norm = HFX_QK_NORM_PER_HEAD, .attention = HFX_ATTN_GATE_PROJ, .sliding = HFX_SLIDING_EVERY_NTH_GLOBAL,
    .sliding_pattern = 4, .no_rope = HFX_NO_ROPE_FULL_LAYERS, .multipliers = HFX_MULT_MUP_EMBED,
    .defaults.window = 1024, .defaults.head_dim = 128, .defaults.eps = 1e-5, .masks_by_layer_type = true,
    .moe = &hfx_moe_afmoe, .ignored_keys = afmoe_ignores, .output_class = "MoeCausalLMOutputWithPast"};
/* Mistral 4: V3's latent attention whose rotary is the head's (qk_nope + qk_rope, a partial_rotary_factor turning
 * the qk_rope dims), its queries scaled by 1 + β·ln(1 + ⌊pos / n⌋) (llama_4_scaling_beta); V3's router over softmax
 * scores without a correction bias */
static const char *const mistral4_ignores[] = {"decoder_sparse_step", "mlp_only_layers", NULL};
static const hfx_decoder_desc Mistral4ForCausalLM_desc = {
    "Mistral4ForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .moe = &hfx_moe_mistral4,
    .rope.interleave_key = "rope_interleave", .rope.partial_rotary = true, .scores.temperature = HFX_QTEMP_ROPE_BETA,
    .ignored_keys = mistral4_ignores, .output_class = "MoeCausalLMOutputWithPast",
    .rope.absent = "{\"type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 128.0, "
                   "\"original_max_position_embeddings\": 8192, \"beta_fast\": 32.0, \"beta_slow\": 1.0, "
                   "\"mscale_all_dim\": 1.0, \"mscale\": 1.0, \"llama_4_scaling_beta\": 0.1}"};
/* Phi-3.5-MoE: LayerNorms with biases, a window on every layer, longrope whose scale switches (not its factors),
 * sparsemixer's top-2 experts in every layer, the head biased as lm_head_bias says */
static const hfx_decoder_desc PhimoeForCausalLM_desc = {
    "PhimoeForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .sliding = HFX_SLIDING_ALL, .defaults.eps = 1e-5,
    .rope.theta = 1000000.0, .rope.names = HFX_ROPE_NAMES_MSCALE_LONGROPE, .moe = &hfx_moe_phimoe,
    .head = HFX_HEAD_LM_BIAS_KEY, .head_bias_key = "lm_head_bias", .output_class = "MoeCausalLMOutputWithPast"};
/* Youtu-LLM: DeepSeek V3's latent attention over dense MLPs, tied by default */
static const hfx_decoder_desc YoutuForCausalLM_desc = {"YoutuForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT,
                                                       .rope.interleave_key = "rope_interleave", .defaults.tied = true};
/* MiniCPM3: DeepSeek V2's latent attention rotating halves as they come, over dense MLPs; MiniCPM's scalings */
static const hfx_decoder_desc MiniCPM3ForCausalLM_desc = {
    "MiniCPM3ForCausalLM", LLAMA_LIKE, .attention = HFX_ATTN_LATENT, .multipliers = HFX_MULT_SCALE_EMB_DEPTH,
    .defaults.tied = true, .defaults.eps = 1e-5, .embed_scale = HFX_EMBED_PLAIN};
static const hfx_decoder_desc Starcoder2ForCausalLM_desc = {
    "Starcoder2ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_USE_BIAS, .bias.default_on = true,
    .sliding = HFX_SLIDING_ALL,
    .norm = HFX_NORM_LAYER, .mlp = HFX_MLP_PLAIN, .act.dflt = "gelu_pytorch_tanh", .eps_key = "norm_epsilon",
    .defaults.tied = true, .defaults.kv_heads = 2};
static const hfx_decoder_desc Phi3ForCausalLM_desc = {"Phi3ForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE,
                                                      .sliding = HFX_SLIDING_ALL, .rope.partial_rotary = true,
                                                      .rope.names = HFX_ROPE_NAMES_SU_YARN, .qkv = HFX_QKV_CONCAT,
                                                      .mlp = HFX_MLP_GATED_FUSED};
/* template keys GPT-NeoX's and GPT-2's transformers classes never read */
static const char *const gpt_neox_ignores[] = {"num_key_value_heads", NULL};
static const char *const gpt2_ignores[] = {"num_key_value_heads", "head_dim", "use_bias", NULL};
static const hfx_decoder_names gpt_neox_names = {
    .embed = "gpt_neox.embed_in.weight", .layer = "gpt_neox.layers.%lld", .attn = "attention",
    .qkv = "query_key_value", .o = "dense", .fc_in = "dense_h_to_4h", .fc_out = "dense_4h_to_h",
    .final_norm = "gpt_neox.final_layer_norm", .lm_head = "embed_out.weight"};
static const hfx_decoder_names gpt2_names = {
    .embed = "transformer.wte.weight", .layer = "transformer.h.%lld", .attn = "attn", .qkv = "c_attn",
    .o = "c_proj", .fc_in = "c_fc", .fc_out = "c_proj", .norm1 = "ln_1", .norm2 = "ln_2",
    .pos_embed = "transformer.wpe.weight", .final_norm = "transformer.ln_f", .optional_prefix = "transformer."};
static const hfx_decoder_keys gpt2_keys = {"n_embd", "n_layer", "n_head", "n_positions", "n_inner", .embed_dim = NULL};
static const char *const gpt2_forward_args[] = {"input_ids", "cache", "attention_mask", "position_ids", NULL};
static const hfx_decoder_desc GPT2LMHeadModel_desc = {
    "GPT2LMHeadModel", LLAMA_LIKE, .bias.rule = HFX_BIAS_USE_BIAS, .bias.default_on = true, .norm = HFX_NORM_LAYER,
    .mlp = HFX_MLP_PLAIN,
    .act.key = "activation_function", .act.dflt = "gelu_new", .eps_key = "layer_norm_epsilon",
    .defaults.tied = true, .qkv = HFX_QKV_CONCAT, .names = &gpt2_names, .keys = &gpt2_keys,
    .positions = HFX_POSITIONS_LEARNED, .linears_in_out = true, .scores.scale = HFX_SCALE_BY_CONFIG_LAYER,
    .output_class = "CausalLMOutputWithCrossAttentions", .forward_args = gpt2_forward_args,
    .ignored_keys = gpt2_ignores};
/* GPT-J: one LayerNorm feeding attention and MLP in parallel, rotary_dim of each head rotated in interleaved
 * pairs (base 10000, no rope keys read), unbiased attention, a biased MLP and head */
static const char *const gptj_ignores[] = {"num_key_value_heads", "head_dim", "rope_theta", "rope_scaling",
                                           "rope_parameters", "partial_rotary_factor", "attention_bias", NULL};
static const hfx_decoder_names gptj_names = {
    .embed = "transformer.wte.weight", .layer = "transformer.h.%lld", .attn = "attn", .o = "out_proj",
    .fc_in = "fc_in", .fc_out = "fc_out", .norm1 = "ln_1", .final_norm = "transformer.ln_f"};
static const hfx_decoder_desc GPTJForCausalLM_desc = {
    "GPTJForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_NONE, .bias.mlp = HFX_MLP_BIAS_ALWAYS, .norm = HFX_NORM_LAYER,
    .layout = HFX_LAYOUT_PARALLEL_SHARED, .mlp = HFX_MLP_PLAIN, .act.key = "activation_function",
    .act.dflt = "gelu_new", .eps_key = "layer_norm_epsilon", .rope.partial_rotary = true, .rope.dim_key = "rotary_dim",
    .rope.pairs = HFX_ROTARY_PAIRS, .names = &gptj_names, .keys = &gpt2_keys, .head = HFX_HEAD_LM_BIASED,
    .forward_args = gpt2_forward_args, .ignored_keys = gptj_ignores};
/* GPT-Neo: GPT-2's layers with separate unbiased q/k/v (attn.attention), a biased out_proj, unscaled scores,
 * local layers windowed by window_size */
static const char *const gpt_neo_ignores[] = {"num_key_value_heads", "head_dim", "sliding_window", "use_bias",
                                              "attention_bias", NULL};
static const hfx_decoder_names gpt_neo_names = {
    .embed = "transformer.wte.weight", .layer = "transformer.h.%lld", .attn = "attn.attention", .o = "out_proj",
    .norm1 = "ln_1", .norm2 = "ln_2", .pos_embed = "transformer.wpe.weight", .final_norm = "transformer.ln_f"};
/* OPT: learned positions two rows in, LayerNorms with biases before (or, do_layer_norm_before false, after) each
 * block, a plain MLP (fc1 → relu → fc2), every linear biased (enable_bias), the embeddings of their own width
 * projected in and out (word_embed_proj_dim), tied */
static const hfx_decoder_names opt_names = {
    .embed = "model.decoder.embed_tokens.weight", .layer = "model.decoder.layers.%lld", .o = "out_proj", .mlp = "",
    .fc_in = "fc1", .fc_out = "fc2", .norm1 = "self_attn_layer_norm", .norm2 = "final_layer_norm",
    .pos_embed = "model.decoder.embed_positions.weight", .final_norm = "model.decoder.final_layer_norm",
    .project_in = "model.decoder.project_in", .project_out = "model.decoder.project_out"};
static const hfx_decoder_keys opt_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                          "max_position_embeddings", "ffn_dim", "word_embed_proj_dim", .head_rows = NULL};
static const char *const opt_ignores[] = {"num_key_value_heads", "head_dim", "layer_norm_eps", NULL};
static const hfx_decoder_desc OPTForCausalLM_desc = {
    "OPTForCausalLM", .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PRE_OR_POST_LN, .mlp = HFX_MLP_PLAIN,
    .positions = HFX_POSITIONS_LEARNED_OFFSET2, .act.key = "activation_function", .act.dflt = "relu",
    .bias.rule = HFX_BIAS_USE_BIAS, .bias.qkv_key = "enable_bias", .bias.default_on = true, .eps_key = "layer_norm_eps",
    .defaults.tied = true, .names = &opt_names, .keys = &opt_keys, .ignored_keys = opt_ignores,
    .scores.scale = HFX_SCALE_HEAD_DIM, .rope.names = HFX_ROPE_NAMES_CURRENT};
/* BLOOM: ALiBi instead of positions, the embeddings LayerNormed, GPT-NeoX's per-head fused q/k/v (query_key_value),
 * every linear biased, a 4 × hidden MLP with the tanh gelu, tied */
static const hfx_decoder_names bloom_names = {
    .embed = "transformer.word_embeddings.weight", .layer = "transformer.h.%lld", .attn = "self_attention",
    .qkv = "query_key_value", .o = "dense", .fc_in = "dense_h_to_4h", .fc_out = "dense_4h_to_h",
    .final_norm = "transformer.ln_f", .embed_norm = "transformer.word_embeddings_layernorm"};
static const hfx_decoder_keys bloom_keys = {"hidden_size", "n_layer", "n_head", "max_position_embeddings", "n_inner",
                                            .embed_dim = NULL};
static const char *const bloom_ignores[] = {"num_key_value_heads", "head_dim", "n_inner", "hidden_act", "use_bias", NULL};
static const hfx_decoder_desc BloomForCausalLM_desc = {
    "BloomForCausalLM", .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PRE, .mlp = HFX_MLP_PLAIN,
    .positions = HFX_POSITIONS_ALIBI, .qkv = HFX_QKV_PER_HEAD, .act.key = "hidden_act", .act.dflt = "gelu_pytorch_tanh",
    .bias.rule = HFX_BIAS_USE_BIAS, .bias.default_on = true, .eps_key = "layer_norm_epsilon", .defaults.tied = true,
    .names = &bloom_names, .keys = &bloom_keys, .ignored_keys = bloom_ignores, .embed_scale = HFX_EMBED_OWN_NORM,
    .scores.scale = HFX_SCALE_HEAD_DIM, .rope.names = HFX_ROPE_NAMES_CURRENT,
    .scores.eager_only = true};
/* Falcon: one fused query_key_value (per key/value group in the new decoder, else multi-query or per head), parallel
 * attention and MLP with one norm or two (or sequential layers), a plain MLP, every linear biased by `bias`, rotary or
 * ALiBi (Falcon-RW), tied */
static const hfx_decoder_names falcon_names = {
    .embed = "transformer.word_embeddings.weight", .layer = "transformer.h.%lld", .attn = "self_attention",
    .qkv = "query_key_value", .o = "dense", .fc_in = "dense_h_to_4h", .fc_out = "dense_4h_to_h",
    .final_norm = "transformer.ln_f", .parallel_norm1 = "ln_attn", .parallel_norm2 = "ln_mlp"};
static const hfx_decoder_keys falcon_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                             "max_position_embeddings", "ffn_hidden_size", .kv_heads = "num_kv_heads"};
static const char *const falcon_ignores[] = {"num_key_value_heads", "head_dim", NULL};
static const hfx_decoder_desc FalconForCausalLM_desc = {
    "FalconForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .layout = HFX_LAYOUT_PARALLEL_OR_PRE, .mlp = HFX_MLP_PLAIN,
    .positions = HFX_POSITIONS_ROTARY_OR_ALIBI, .qkv = HFX_QKV_BY_MULTI_QUERY, .act.key = "activation",
    .act.dflt = "gelu", .bias.rule = HFX_BIAS_USE_BIAS, .bias.qkv_key = "bias", .eps_key = "layer_norm_epsilon",
    .defaults.tied = true, .names = &falcon_names, .keys = &falcon_keys, .ignored_keys = falcon_ignores,
    .forward_args = gpt2_forward_args};
/* MPT: ALiBi with its own slopes, LayerNorms without biases, a fused Wqkv (clip_qkv), a 4 × hidden MLP with
 * the exact gelu, no biases, tied; its attention keys under attn_config */
static const hfx_decoder_names mpt_names = {
    .embed = "transformer.wte.weight", .layer = "transformer.blocks.%lld", .attn = "attn", .qkv = "Wqkv",
    .o = "out_proj", .mlp = "ffn", .fc_in = "up_proj", .fc_out = "down_proj", .norm1 = "norm_1", .norm2 = "norm_2",
    .final_norm = "transformer.norm_f"};
static const char *const mpt_nested[] = {"attn_config", NULL};
static const hfx_decoder_keys mpt_keys = {"d_model", "n_layers", "n_heads", "max_seq_len", "intermediate_size",
                                          .nested = mpt_nested};
/* (MptForCausalLM's MLP is 4 × hidden whatever expansion_ratio says; its class reads no biases, positions or
 * heads of keys and values) */
static const char *const mpt_ignores[] = {"num_key_value_heads", "head_dim", "intermediate_size", "hidden_act", NULL};
static const hfx_decoder_desc MptForCausalLM_desc = {
    "MptForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER_NO_BIAS, .mlp = HFX_MLP_PLAIN, .act.dflt = "gelu",
    .positions = HFX_POSITIONS_ALIBI_MAX_BIAS, .qkv = HFX_QKV_CONCAT, .bias.rule = HFX_BIAS_NONE,
    .clip_qkv_key = "attn_config.clip_qkv",
    .eps_key = "layer_norm_epsilon", .defaults.tied = true, .names = &mpt_names, .keys = &mpt_keys,
    .ignored_keys = mpt_ignores, .scores.scale = HFX_SCALE_SOFTMAX_SCALE, .forward_args = gpt2_forward_args,
    .scores.eager_only = true};
/* DBRX: MPT's names and norms with rotary, grouped keys and values (attn_config's kv_n_heads, clip_qkv) and every
 * layer's MLP the experts (ffn_config: softmax top-k divided by their p-norm, the experts flat); not tied.
 * transformers 5 reads no attn_config.rope_theta (its rope is rope_parameters'), nor a norm epsilon (1e-5) */
static const hfx_decoder_names dbrx_names = {
    .embed = "transformer.wte.weight", .layer = "transformer.blocks.%lld", .attn = "norm_attn_norm.attn",
    .qkv = "Wqkv", .o = "out_proj", .mlp = "ffn", .norm1 = "norm_attn_norm.norm_1", .norm2 = "norm_attn_norm.norm_2",
    .final_norm = "transformer.norm_f"};
static const char *const dbrx_nested[] = {"attn_config", "ffn_config", NULL};
static const hfx_decoder_keys dbrx_keys = {"d_model", "n_layers", "n_heads", "max_seq_len", "intermediate_size",
                                           .kv_heads = "attn_config.kv_n_heads", .nested = dbrx_nested};
static const char *const dbrx_ignores[] = {"num_key_value_heads", "head_dim", "layer_norm_epsilon", NULL};
static const hfx_decoder_desc DbrxForCausalLM_desc = {
    "DbrxForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER_NO_BIAS, .act.key = "ffn_config.ffn_act_fn", .act.dflt = "silu",
    .qkv = HFX_QKV_CONCAT, .bias.rule = HFX_BIAS_NONE, .clip_qkv_key = "attn_config.clip_qkv", .eps_key = "layer_norm_epsilon",
    .defaults.kv_heads = 1, .names = &dbrx_names, .keys = &dbrx_keys, .ignored_keys = dbrx_ignores,
    .moe = &hfx_moe_dbrx, .rope.names = HFX_ROPE_NAMES_CURRENT, .output_class = "MoeCausalLMOutputWithPast"};
static const hfx_decoder_keys gpt_neo_keys = {"hidden_size", "num_layers", "num_heads", "max_position_embeddings",
                                              "intermediate_size", .embed_dim = NULL};
static const hfx_decoder_desc GPTNeoForCausalLM_desc = {
    "GPTNeoForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_O_ONLY, .bias.mlp = HFX_MLP_BIAS_ALWAYS,
    .norm = HFX_NORM_LAYER, .mlp = HFX_MLP_PLAIN, .act.key = "activation_function", .act.dflt = "gelu_new",
    .eps_key = "layer_norm_epsilon", .defaults.tied = true, .names = &gpt_neo_names, .keys = &gpt_neo_keys,
    .positions = HFX_POSITIONS_LEARNED, .scores.scale = HFX_SCALE_ONE, .scores.mask = HFX_MASK_WHERE_THEN_ADD,
    .sliding = HFX_SLIDING_ATTENTION_TYPES,
    .forward_args = gpt2_forward_args, .ignored_keys = gpt_neo_ignores,
    .scores.eager_only = true};
/* GPTBigCode (StarCoder 1, SantaCoder): GPT-2's layers with nn.Linear weights, multi-query attention by default */
static const char *const gpt_bigcode_ignores[] = {"num_key_value_heads", "head_dim", "use_bias", "attention_bias", NULL};
static const hfx_decoder_desc GPTBigCodeForCausalLM_desc = {
    "GPTBigCodeForCausalLM", LLAMA_LIKE, .bias.rule = HFX_BIAS_USE_BIAS, .bias.default_on = true,
    .norm = HFX_NORM_LAYER, .mlp = HFX_MLP_PLAIN, .act.key = "activation_function", .act.dflt = "gelu_pytorch_tanh",
    .eps_key = "layer_norm_epsilon", .defaults.tied = true, .qkv = HFX_QKV_BY_MULTI_QUERY, .names = &gpt2_names,
    .keys = &gpt2_keys, .positions = HFX_POSITIONS_LEARNED, .scores.scale = HFX_SCALE_BY_CONFIG,
    .output_class = "CausalLMOutputWithCrossAttentions", .forward_args = gpt2_forward_args,
    .ignored_keys = gpt_bigcode_ignores};
static const hfx_decoder_desc GPTNeoXForCausalLM_desc = {
    "GPTNeoXForCausalLM", LLAMA_LIKE, .norm = HFX_NORM_LAYER, .mlp = HFX_MLP_PLAIN, .act.dflt = "gelu",
    .eps_key = "layer_norm_eps", .rope.partial_rotary = true, .rope.partial = 0.25,
    .rope.theta_key = "rotary_emb_base",
    .rope.partial_key = "rotary_pct", .bias.default_on = true, .bias.mlp = HFX_MLP_BIAS_ALWAYS,
    .parallel_from_config = true, .qkv = HFX_QKV_PER_HEAD, .names = &gpt_neox_names,
    .ignored_keys = gpt_neox_ignores};
/* the embeddings scaled by √hidden in the table (transformers 5's scaled embedding module: embeddings given to the
 * model are not scaled again) */
#define GEMMA_LIKE                                                                                         \
    LLAMA_LIKE, .norm = HFX_NORM_RMS_OFFSET, .act.dflt = "gelu_pytorch_tanh", .defaults.tied = true,     \
    .embed_scale = HFX_EMBED_SQRT_HIDDEN_IN_TABLE
static const hfx_decoder_desc GemmaForCausalLM_desc = {"GemmaForCausalLM", GEMMA_LIKE, .act.legacy_gelu_tanh = true};
/* VaultGemma: Gemma 2 without the post-norms (pre_feedforward_layernorm before the MLP alone) */
static const hfx_decoder_names vaultgemma_names = {.norm2 = "pre_feedforward_layernorm"};
static const hfx_decoder_desc VaultGemmaForCausalLM_desc = {
    "VaultGemmaForCausalLM", GEMMA_LIKE, .sliding = HFX_SLIDING_PATTERN, .sliding_pattern = 2,
    .names = &vaultgemma_names, .act.key = "hidden_activation", .scores.scale = HFX_SCALE_QUERY_PRE_ATTN,
    .scores.softcaps = HFX_SOFTCAP_ATTN_AND_FINAL, .defaults.attn_softcap = 50.0, .defaults.final_softcap = 30.0,
    .defaults.window = 4096, .defaults.head_dim = 256, .masks_by_layer_type = true,
    .embed_scale = HFX_EMBED_SQRT_HIDDEN_IN_TABLE,
    .scores.eager_only = true};
static const hfx_decoder_desc LlamaForSequenceClassification_desc = {"LlamaForSequenceClassification", LLAMA,
                                                                     .head = HFX_HEAD_CLASSIFIER};
static const hfx_decoder_desc MistralForSequenceClassification_desc = {"MistralForSequenceClassification", MISTRAL,
                                                                       .head = HFX_HEAD_CLASSIFIER};
static const hfx_decoder_desc Qwen2ForSequenceClassification_desc = {"Qwen2ForSequenceClassification", QWEN2,
                                                                     .head = HFX_HEAD_CLASSIFIER};
static const hfx_decoder_desc Qwen3ForSequenceClassification_desc = {"Qwen3ForSequenceClassification", QWEN3_CLASS,
                                                                     .head = HFX_HEAD_CLASSIFIER};
static const hfx_decoder_desc GemmaForSequenceClassification_desc = {"GemmaForSequenceClassification", GEMMA_LIKE,
                                                                     .act.legacy_gelu_tanh = true,
                                                                     .head = HFX_HEAD_CLASSIFIER};
static const hfx_decoder_desc Gemma2ForCausalLM_desc = {
    "Gemma2ForCausalLM", GEMMA_LIKE, .sliding = HFX_SLIDING_PATTERN, .sliding_pattern = 2,
    .layout = HFX_LAYOUT_SANDWICH, .act.key = "hidden_activation", .scores.scale = HFX_SCALE_QUERY_PRE_ATTN,
    .scores.softcaps = HFX_SOFTCAP_ATTN_AND_FINAL, .defaults.attn_softcap = 50.0, .defaults.final_softcap = 30.0,
    .defaults.window = 4096, .masks_by_layer_type = true,
    .scores.eager_only = true};
static const hfx_decoder_desc Gemma3ForCausalLM_desc = {
    "Gemma3ForCausalLM", GEMMA_LIKE, .qk_norm = HFX_QK_NORM_PER_HEAD, .sliding = HFX_SLIDING_PATTERN_OR_CONFIG,
    .sliding_pattern = 6, .layout = HFX_LAYOUT_SANDWICH,
    .act.key = "hidden_activation", .scores.scale = HFX_SCALE_QUERY_PRE_ATTN, .scores.softcaps = HFX_SOFTCAP_FINAL,
    .rope.local = HFX_LOCAL_ROPE_OWN_BASE,
    .rope.theta = 1000000.0, .defaults.window = 4096, .rope.names = HFX_ROPE_NAMES_CURRENT,
    .masks_by_layer_type = true, .scores.both_ways_key = "use_bidirectional_attention",
    .scores.both_ways_window = HFX_BOTH_WAYS_WINDOW_HALVED,
    .embed_scale = HFX_EMBED_SQRT_HIDDEN_IN_TABLE, .model_type_alias = "gemma3_text"};
/* T5Gemma's encoder alone (T5GemmaEncoderModel, its config under "encoder"): Gemma 2's sandwiched layers attending
 * both ways (a sliding window of sliding_window on each side, inclusive), the embeddings times √hidden */
static const hfx_decoder_names t5gemma_encoder_names = {
    .embed = "encoder.embed_tokens.weight", .layer = "encoder.layers.%lld", .norm1 = "pre_self_attn_layernorm",
    .norm2 = "post_self_attn_layernorm", .final_norm = "encoder.norm"};
static const hfx_decoder_desc T5GemmaEncoder_desc = {
    "T5GemmaEncoderModel", GEMMA_LIKE, .sliding = HFX_SLIDING_PATTERN_OR_CONFIG, .sliding_pattern = 2,
    .layout = HFX_LAYOUT_SANDWICH, .act.key = "hidden_activation", .scores.scale = HFX_SCALE_QUERY_PRE_ATTN,
    .scores.softcaps = HFX_SOFTCAP_ATTN_AND_FINAL, .defaults.attn_softcap = 50.0, .defaults.final_softcap = 30.0,
    .defaults.window = 4096, .scores.mask = HFX_MASK_BOTH_WAYS, .scores.both_ways_window = HFX_BOTH_WAYS_WINDOW_INCLUSIVE,
    .names = &t5gemma_encoder_names, .embed_scale = HFX_EMBED_SQRT_HIDDEN /* (in its forward) */};
static const hfx_decoder_base T5GemmaEncoderModel_base = {&T5GemmaEncoder_desc, "T5GemmaEncoderModel", "BaseModelOutput",
                                                          NULL, "encoder"};
/* Gemma3TextModel, Gemma 3's text model alone: EmbeddingGemma's backbone (attending both ways) */
static const hfx_decoder_base Gemma3TextModel_base = {&Gemma3ForCausalLM_desc, "Gemma3TextModel",
                                                      "BaseModelOutputWithPast", NULL, NULL};
/* Gemma 4's text model: Gemma 3's sandwich with plain (f32) RMS norms, no score scale (the q/k norms scale) and
 * weight-less value norms; layers of two widths (per_layer_config), the last ones attending to an earlier layer's
 * keys and values, values that are the keys' projection on the full layers (attention_k_eq_v); each layer's own
 * input (per-layer embeddings) and scalar; the full layers' proportional rotary; experts beside the dense MLP
 * (enable_moe_block). */
static const char gemma4_rope[] = "{\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}, "
                                  "\"full_attention\": {\"rope_type\": \"proportional\", \"partial_rotary_factor\": 0.25, "
                                  "\"rope_theta\": 1000000.0}}";
static const hfx_decoder_desc Gemma4ForCausalLM_desc = {
    "Gemma4ForCausalLM", GEMMA_LIKE, .norm = HFX_NORM_RMS_F32, .qk_norm = HFX_QK_NORM_PER_HEAD_AND_V,
    .sliding = HFX_SLIDING_PATTERN_LAST_FULL, .sliding_pattern = 6, .layout = HFX_LAYOUT_SANDWICH_PER_LAYER,
    .shapes = HFX_SHAPES_PER_LAYER_CONFIG, .act.key = "hidden_activation", .scores.scale = HFX_SCALE_ONE,
    .scores.softcaps = HFX_SOFTCAP_FINAL, .rope.local = HFX_LOCAL_ROPE_OWN_BASE, .rope.absent = gemma4_rope,
    .defaults.window = 512, .defaults.head_dim = 256, .defaults.kv_heads = 4, .masks_by_layer_type = true,
    .moe = &hfx_moe_gemma4, .embed_scale = HFX_EMBED_SQRT_HIDDEN_IN_TABLE, .model_type_alias = "gemma4_text"};

/* Gemma 3n's text model: Gemma 4's plain (f32) RMS norms, q/k norms and weight-less value norms, no score scale,
 * per-layer inputs and shared keys and values, inside alternating updates (AltUp's streams, LAuReL's residual); an MLP
 * width and an activation sparsity per layer; Gemma 3's rotary per layer type; every fifth layer full by default. */
static const hfx_decoder_desc Gemma3nForCausalLM_desc = {
    "Gemma3nForCausalLM", GEMMA_LIKE, .norm = HFX_NORM_RMS_F32, .qk_norm = HFX_QK_NORM_PER_HEAD_AND_V,
    .sliding = HFX_SLIDING_PATTERN, .sliding_pattern = 5, .layout = HFX_LAYOUT_ALTUP,
    .shapes = HFX_SHAPES_PER_LAYER_MLP, .act.key = "hidden_activation", .scores.scale = HFX_SCALE_ONE,
    .scores.softcaps = HFX_SOFTCAP_FINAL, .defaults.final_softcap = 30.0, .rope.local = HFX_LOCAL_ROPE_OWN_BASE,
    .rope.theta = 1000000.0, .rope.names = HFX_ROPE_NAMES_CURRENT, .defaults.window = 512, .defaults.head_dim = 256,
    .defaults.kv_heads = 2, .masks_by_layer_type = true, .model_type_alias = "gemma3n_text"};

/* The encoder-decoder family (seq2seq.c). */
typedef struct seq2seq_desc seq2seq_desc;
extern const hfx_arch_family hfx_seq2seq_family, hfx_seq2seq_forward_family, hfx_seq2seq_audio_family,
    hfx_seq2seq_waveform_family, hfx_seq2seq_vision_family;
extern const seq2seq_desc hfx_bart, hfx_mbart, hfx_marian, hfx_m2m100, hfx_t5, hfx_mt5, hfx_umt5, hfx_bart_classifier,
    hfx_mbart_classifier, hfx_whisper, hfx_moonshine, hfx_florence2, hfx_bart_model, hfx_mbart_model, hfx_marian_model,
    hfx_m2m100_model, hfx_t5_model, hfx_mt5_model, hfx_umt5_model, hfx_t5_encoder, hfx_mt5_encoder, hfx_umt5_encoder,
    hfx_whisper_model, hfx_moonshine_model;

/* The vision family (vision.c). */
typedef struct vision_desc vision_desc;
extern const hfx_arch_family hfx_vision_family;
extern const vision_desc hfx_vit_model, hfx_vit_classifier, hfx_clip_vision_model, hfx_clip_vision_projection,
    hfx_siglip_vision_model, hfx_dinov2_model, hfx_dinov2_classifier, hfx_dinov3_model;

/* The Parakeet family (parakeet.c). */
typedef struct parakeet_desc parakeet_desc;
extern const hfx_arch_family hfx_parakeet_family;
extern const parakeet_desc hfx_parakeet_ctc, hfx_parakeet_encoder;

/* transformers' TimmWrapperModel over MobileNet-V5's encoder (timm.c). */
extern const hfx_arch_family hfx_timm_family;
extern const char hfx_timm_wrapper_model[];

/* Gemma's audio encoders on their own (usm.c). */
typedef struct usm_desc usm_desc;
extern const hfx_arch_family hfx_usm_family;
extern const usm_desc hfx_gemma3n_audio_encoder, hfx_gemma4_audio_model;

/* The speech family (speech.c). */
typedef struct speech_desc speech_desc;
extern const hfx_arch_family hfx_speech_family;
extern const speech_desc hfx_wav2vec2_ctc, hfx_wav2vec2_model, hfx_wav2vec2_classifier, hfx_hubert_ctc,
    hfx_hubert_model, hfx_hubert_classifier, hfx_unispeech_ctc, hfx_unispeech_model, hfx_unispeech_classifier,
    hfx_unispeech_sat_ctc, hfx_unispeech_sat_model, hfx_unispeech_sat_classifier, hfx_wavlm_ctc, hfx_wavlm_model,
    hfx_wavlm_classifier, hfx_wav2vec2_conformer_ctc, hfx_wav2vec2_conformer_model, hfx_wav2vec2_conformer_classifier,
    hfx_data2vec_audio_ctc,
    hfx_data2vec_audio_model, hfx_data2vec_audio_classifier;

/* SigLIP 2's NaFlex image encoder (vision_naflex.c). */
typedef struct naflex_desc naflex_desc;
extern const hfx_arch_family hfx_naflex_family;
extern const naflex_desc hfx_siglip2_vision_model;

/* The contrastive image-text family (contrastive.c). */
typedef struct dual_desc dual_desc;
extern const hfx_arch_family hfx_dual_family;
extern const dual_desc hfx_clip_model, hfx_siglip_model, hfx_clip_text_model, hfx_clip_text_projection,
    hfx_siglip_text_model, hfx_siglip2_model, hfx_siglip2_text_model;

/* The vision-language family (vlm.c). */
typedef struct vlm_desc vlm_desc;
extern const hfx_arch_family hfx_vlm_family;
extern const vlm_desc hfx_llava, hfx_gemma3, hfx_idefics3, hfx_smolvlm, hfx_qwen2_vl, hfx_qwen2_5_vl, hfx_qwen3_vl,
    hfx_qwen3_vl_moe, hfx_qwen3_5, hfx_qwen3_5_moe, hfx_internvl, hfx_paligemma, hfx_mistral3, hfx_lfm2_vl, hfx_llama4, hfx_llava_next, hfx_llava_onevision, hfx_gemma4,
    hfx_gemma3n, hfx_phi4mm;
/* Audio language models: the same family's code, the encoder named audio_encoder (vlm.c). */
extern const hfx_arch_family hfx_audio_lm_family;
extern const vlm_desc hfx_qwen2_audio, hfx_voxtral, hfx_audioflamingo3, hfx_qwen3_asr, hfx_granite_speech;

/* The encoder family (encoder.c). */
typedef struct encoder_desc encoder_desc;
extern const hfx_arch_family hfx_encoder_family;
extern const encoder_desc hfx_bert_model, hfx_bert_classifier, hfx_roberta_model, hfx_roberta_classifier,
    hfx_xlmr_model, hfx_xlmr_classifier, hfx_bert_token_classifier, hfx_bert_qa, hfx_bert_mlm,
    hfx_roberta_token_classifier, hfx_roberta_qa, hfx_roberta_mlm, hfx_xlmr_token_classifier, hfx_xlmr_qa, hfx_xlmr_mlm;
extern const hfx_arch_family hfx_untyped_encoder_family, hfx_deberta_family;
extern const encoder_desc hfx_deberta_model, hfx_deberta_classifier, hfx_deberta_token_classifier, hfx_deberta_qa,
    hfx_deberta_mlm;
extern const encoder_desc hfx_mpnet_model, hfx_mpnet_classifier, hfx_mpnet_token_classifier, hfx_mpnet_qa,
    hfx_mpnet_mlm;
extern const encoder_desc hfx_distilbert_model, hfx_distilbert_classifier, hfx_distilbert_token_classifier,
    hfx_distilbert_qa, hfx_distilbert_mlm, hfx_modernbert_model, hfx_modernbert_classifier,
    hfx_modernbert_token_classifier, hfx_modernbert_qa, hfx_modernbert_mlm;

static const struct entry {
    const char *name;
    const hfx_arch_family *family;
    const void *desc;
} registry[] = {
    {"LlamaForCausalLM", &hfx_decoder_family, &LlamaForCausalLM_desc},
    {"MistralForCausalLM", &hfx_decoder_family, &MistralForCausalLM_desc},
    {"MinistralForCausalLM", &hfx_decoder_family, &MinistralForCausalLM_desc},
    {"Ministral3ForCausalLM", &hfx_decoder_family, &Ministral3ForCausalLM_desc},
    {"Llama4ForCausalLM", &hfx_decoder_family, &Llama4ForCausalLM_desc},
    {"NanoChatForCausalLM", &hfx_decoder_family, &NanoChatForCausalLM_desc},
    {"HunYuanDenseV1ForCausalLM", &hfx_decoder_family, &HunYuanDenseV1ForCausalLM_desc},
    {"HunYuanMoEV1ForCausalLM", &hfx_decoder_family, &HunYuanMoEV1ForCausalLM_desc},
    {"Qwen2ForCausalLM", &hfx_decoder_family, &Qwen2ForCausalLM_desc},
    {"Lfm2ForCausalLM", &hfx_decoder_family, &Lfm2ForCausalLM_desc},
    {"Lfm2MoeForCausalLM", &hfx_decoder_family, &Lfm2MoeForCausalLM_desc},
    {"Lfm3ForCausalLM", &hfx_decoder_family, &Lfm3ForCausalLM_desc},
    {"Mamba2ForCausalLM", &hfx_decoder_family, &Mamba2ForCausalLM_desc},
    {"MambaForCausalLM", &hfx_decoder_family, &MambaForCausalLM_desc},
    {"FalconMambaForCausalLM", &hfx_decoder_family, &FalconMambaForCausalLM_desc},
    {"RwkvForCausalLM", &hfx_decoder_family, &RwkvForCausalLM_desc},
    {"xLSTMForCausalLM", &hfx_decoder_family, &xLSTMForCausalLM_desc},
    {"BambaForCausalLM", &hfx_decoder_family, &BambaForCausalLM_desc},
    {"Zamba2ForCausalLM", &hfx_decoder_family, &Zamba2ForCausalLM_desc},
    {"JambaForCausalLM", &hfx_decoder_family, &JambaForCausalLM_desc},
    {"GraniteMoeHybridForCausalLM", &hfx_decoder_family, &GraniteMoeHybridForCausalLM_desc},
    {"FalconH1ForCausalLM", &hfx_decoder_family, &FalconH1ForCausalLM_desc},
    {"Qwen3NextForCausalLM", &hfx_decoder_family, &Qwen3NextForCausalLM_desc},
    {"Qwen3_5ForCausalLM", &hfx_decoder_family, &Qwen3_5ForCausalLM_desc},
    {"Qwen3_5MoeForCausalLM", &hfx_decoder_family, &Qwen3_5MoeForCausalLM_desc},
    {"Qwen4ExpForCausalLM", &hfx_decoder_family, &Qwen4ExpForCausalLM_desc},
    {"Qwen3ForCausalLM", &hfx_decoder_family, &Qwen3ForCausalLM_desc},
    {"ArceeForCausalLM", &hfx_decoder_family, &ArceeForCausalLM_desc},
    {"ApertusForCausalLM", &hfx_decoder_family, &ApertusForCausalLM_desc},
    {"Apertus1p5TextForCausalLM", &hfx_decoder_family, &Apertus1p5TextForCausalLM_desc},
    {"NemotronForCausalLM", &hfx_decoder_family, &NemotronForCausalLM_desc},
    {"HeliumForCausalLM", &hfx_decoder_family, &HeliumForCausalLM_desc},
    {"FlexOlmoForCausalLM", &hfx_decoder_family, &FlexOlmoForCausalLM_desc},
    {"Glm4MoeForCausalLM", &hfx_decoder_family, &Glm4MoeForCausalLM_desc},
    {"Dots1ForCausalLM", &hfx_decoder_family, &Dots1ForCausalLM_desc},
    {"SolarOpenForCausalLM", &hfx_decoder_family, &SolarOpenForCausalLM_desc},
    {"YoutuForCausalLM", &hfx_decoder_family, &YoutuForCausalLM_desc},
    {"MiniCPM3ForCausalLM", &hfx_decoder_family, &MiniCPM3ForCausalLM_desc},
    {"VaultGemmaForCausalLM", &hfx_decoder_family, &VaultGemmaForCausalLM_desc},
    {"SeedOssForCausalLM", &hfx_decoder_family, &SeedOssForCausalLM_desc},
    {"MixtralForCausalLM", &hfx_decoder_family, &MixtralForCausalLM_desc},
    {"Qwen3MoeForCausalLM", &hfx_decoder_family, &Qwen3MoeForCausalLM_desc},
    {"EuroBertForMaskedLM", &hfx_decoder_encoder_family, &EuroBertForMaskedLM_desc},
    {"EuroBertModel", &hfx_decoder_base_family, &EuroBertModel_base},
    {"EuroBertForSequenceClassification", &hfx_decoder_encoder_family, &EuroBertForSequenceClassification_desc},
    {"GteForMaskedLM", &hfx_decoder_encoder_family, &GteForMaskedLM_desc},
    {"GteModel", &hfx_decoder_base_family, &GteModel_base},
    {"GteForSequenceClassification", &hfx_decoder_encoder_family, &GteForSequenceClassification_desc},
    {"GteForTokenClassification", &hfx_decoder_encoder_family, &GteForTokenClassification_desc},
    {"NomicBertModel", &hfx_decoder_base_family, &NomicBertModel_base},
    {"JinaEmbeddingsV3Model", &hfx_decoder_base_family, &JinaEmbeddingsV3Model_base},
    {"JinaEmbeddingsV3ForMaskedLM", &hfx_decoder_encoder_family, &JinaEmbeddingsV3ForMaskedLM_desc},
    {"JinaEmbeddingsV3ForSequenceClassification", &hfx_decoder_encoder_family,
     &JinaEmbeddingsV3ForSequenceClassification_desc},
    {"JinaEmbeddingsV3ForTokenClassification", &hfx_decoder_encoder_family, &JinaEmbeddingsV3ForTokenClassification_desc},
    {"JinaEmbeddingsV3ForQuestionAnswering", &hfx_decoder_encoder_family, &JinaEmbeddingsV3ForQuestionAnswering_desc},
    {"NomicBertForMaskedLM", &hfx_decoder_encoder_family, &NomicBertForMaskedLM_desc},
    {"NomicBertForSequenceClassification", &hfx_decoder_encoder_family, &NomicBertForSequenceClassification_desc},
    {"NomicBertForTokenClassification", &hfx_decoder_encoder_family, &NomicBertForTokenClassification_desc},
    {"GraniteForCausalLM", &hfx_decoder_family, &GraniteForCausalLM_desc},
    {"GraniteSWAForCausalLM", &hfx_decoder_family, &GraniteSWAForCausalLM_desc},
    {"Olmo2ForCausalLM", &hfx_decoder_family, &Olmo2ForCausalLM_desc},
    {"Olmo3ForCausalLM", &hfx_decoder_family, &Olmo3ForCausalLM_desc},
    {"Starcoder2ForCausalLM", &hfx_decoder_family, &Starcoder2ForCausalLM_desc},
    {"OlmoForCausalLM", &hfx_decoder_family, &OlmoForCausalLM_desc},
    {"SmolLM3ForCausalLM", &hfx_decoder_family, &SmolLM3ForCausalLM_desc},
    {"Qwen2MoeForCausalLM", &hfx_decoder_family, &Qwen2MoeForCausalLM_desc},
    {"GraniteMoeForCausalLM", &hfx_decoder_family, &GraniteMoeForCausalLM_desc},
    {"GraniteMoeSharedForCausalLM", &hfx_decoder_family, &GraniteMoeSharedForCausalLM_desc},
    {"GraniteMoeSWAForCausalLM", &hfx_decoder_family, &GraniteMoeSWAForCausalLM_desc},
    {"MiniMaxM2ForCausalLM", &hfx_decoder_family, &MiniMaxM2ForCausalLM_desc},
    {"MiniMaxForCausalLM", &hfx_decoder_family, &MiniMaxForCausalLM_desc},
    {"LongcatFlashForCausalLM", &hfx_decoder_family, &LongcatFlashForCausalLM_desc},
    {"DeepseekV32ForCausalLM", &hfx_decoder_family, &DeepseekV32ForCausalLM_desc},
    {"HYV4ForCausalLM", &hfx_decoder_family, &HYV4ForCausalLM_desc},
    {"DeepseekV4ForCausalLM", &hfx_decoder_family, &DeepseekV4ForCausalLM_desc},
    {"GlmMoeDsaForCausalLM", &hfx_decoder_family, &GlmMoeDsaForCausalLM_desc},
    {"AXK1ForCausalLM", &hfx_decoder_family, &AXK1ForCausalLM_desc},
    {"AXK2ForCausalLM", &hfx_decoder_family, &AXK2ForCausalLM_desc},
    {"Jais2ForCausalLM", &hfx_decoder_family, &Jais2ForCausalLM_desc},
    {"CwmForCausalLM", &hfx_decoder_family, &CwmForCausalLM_desc},
    {"HyperCLOVAXForCausalLM", &hfx_decoder_family, &HyperCLOVAXForCausalLM_desc},
    {"PersimmonForCausalLM", &hfx_decoder_family, &PersimmonForCausalLM_desc},
    {"FlintForCausalLM", &hfx_decoder_family, &FlintForCausalLM_desc},
    {"Kolibri1ForCausalLM", &hfx_decoder_family, &Kolibri1ForCausalLM_desc},
    {"KimiLinearForCausalLM", &hfx_decoder_family, &KimiLinearForCausalLM_desc},
    {"BailingHybridForCausalLM", &hfx_decoder_family, &BailingHybridForCausalLM_desc},
    {"ExaoneMoeForCausalLM", &hfx_decoder_family, &ExaoneMoeForCausalLM_desc},
    {"Ernie4_5_MoeForCausalLM", &hfx_decoder_family, &Ernie4_5_MoeForCausalLM_desc},
    {"PhiForCausalLM", &hfx_decoder_family, &PhiForCausalLM_desc},
    {"StableLmForCausalLM", &hfx_decoder_family, &StableLmForCausalLM_desc},
    {"GlmForCausalLM", &hfx_decoder_family, &GlmForCausalLM_desc},
    {"Glm4ForCausalLM", &hfx_decoder_family, &Glm4ForCausalLM_desc},
    {"Ernie4_5ForCausalLM", &hfx_decoder_family, &Ernie4_5ForCausalLM_desc},
    {"Exaone4ForCausalLM", &hfx_decoder_family, &Exaone4ForCausalLM_desc},
    {"CohereForCausalLM", &hfx_decoder_family, &CohereForCausalLM_desc},
    {"Cohere2ForCausalLM", &hfx_decoder_family, &Cohere2ForCausalLM_desc},
    {"Cohere2MoeForCausalLM", &hfx_decoder_family, &Cohere2MoeForCausalLM_desc},
    {"MiMoV2FlashForCausalLM", &hfx_decoder_family, &MiMoV2FlashForCausalLM_desc},
    {"JetMoeForCausalLM", &hfx_decoder_family, &JetMoeForCausalLM_desc},
    {"NemotronHForCausalLM", &hfx_decoder_family, &NemotronHForCausalLM_desc},
    {"OlmoHybridForCausalLM", &hfx_decoder_family, &OlmoHybridForCausalLM_desc},
    {"RecurrentGemmaForCausalLM", &hfx_decoder_family, &RecurrentGemmaForCausalLM_desc},
    {"GptOssForCausalLM", &hfx_decoder_family, &GptOssForCausalLM_desc},
    {"OlmoeForCausalLM", &hfx_decoder_family, &OlmoeForCausalLM_desc},
    {"DeepseekV2ForCausalLM", &hfx_decoder_family, &DeepseekV2ForCausalLM_desc},
    {"DeepseekV3ForCausalLM", &hfx_decoder_family, &DeepseekV3ForCausalLM_desc},
    {"Glm4MoeLiteForCausalLM", &hfx_decoder_family, &Glm4MoeLiteForCausalLM_desc},
    {"HYV3ForCausalLM", &hfx_decoder_family, &HYV3ForCausalLM_desc},
    {"Mistral4ForCausalLM", &hfx_decoder_family, &Mistral4ForCausalLM_desc},
    {"PhimoeForCausalLM", &hfx_decoder_family, &PhimoeForCausalLM_desc},
    {"AfmoeForCausalLM", &hfx_decoder_family, &AfmoeForCausalLM_desc},
    {"Phi3ForCausalLM", &hfx_decoder_family, &Phi3ForCausalLM_desc},
    {"GPTNeoXForCausalLM", &hfx_decoder_family, &GPTNeoXForCausalLM_desc},
    {"GPT2LMHeadModel", &hfx_decoder_family, &GPT2LMHeadModel_desc},
    {"GPTBigCodeForCausalLM", &hfx_decoder_family, &GPTBigCodeForCausalLM_desc},
    {"GPTJForCausalLM", &hfx_decoder_family, &GPTJForCausalLM_desc},
    {"GPTNeoForCausalLM", &hfx_decoder_family, &GPTNeoForCausalLM_desc},
    {"OPTForCausalLM", &hfx_decoder_family, &OPTForCausalLM_desc},
    {"BitNetForCausalLM", &hfx_decoder_family, &BitNetForCausalLM_desc},
    {"BloomForCausalLM", &hfx_decoder_family, &BloomForCausalLM_desc},
    {"FalconForCausalLM", &hfx_decoder_family, &FalconForCausalLM_desc},
    {"MptForCausalLM", &hfx_decoder_family, &MptForCausalLM_desc},
    {"DbrxForCausalLM", &hfx_decoder_family, &DbrxForCausalLM_desc},
    {"GemmaForCausalLM", &hfx_decoder_family, &GemmaForCausalLM_desc},
    {"Gemma2ForCausalLM", &hfx_decoder_family, &Gemma2ForCausalLM_desc},
    {"Gemma3ForCausalLM", &hfx_decoder_family, &Gemma3ForCausalLM_desc},
    {"Gemma3TextModel", &hfx_decoder_base_family, &Gemma3TextModel_base},
    {"ModernBertDecoderForCausalLM", &hfx_decoder_family, &ModernBertDecoderForCausalLM_desc},
    {"ModernBertDecoderForSequenceClassification", &hfx_decoder_classifier_family,
     &ModernBertDecoderForSequenceClassification_desc},
    {"T5GemmaEncoderModel", &hfx_decoder_base_family, &T5GemmaEncoderModel_base},
    {"Gemma4ForCausalLM", &hfx_decoder_family, &Gemma4ForCausalLM_desc},
    {"Gemma3nForCausalLM", &hfx_decoder_family, &Gemma3nForCausalLM_desc},
    {"LlamaForSequenceClassification", &hfx_decoder_classifier_family, &LlamaForSequenceClassification_desc},
    {"MistralForSequenceClassification", &hfx_decoder_classifier_family, &MistralForSequenceClassification_desc},
    {"Qwen2ForSequenceClassification", &hfx_decoder_classifier_family, &Qwen2ForSequenceClassification_desc},
    {"Qwen3ForSequenceClassification", &hfx_decoder_classifier_family, &Qwen3ForSequenceClassification_desc},
    {"GemmaForSequenceClassification", &hfx_decoder_classifier_family, &GemmaForSequenceClassification_desc},
    {"BertModel", &hfx_encoder_family, &hfx_bert_model},
    {"BertForSequenceClassification", &hfx_encoder_family, &hfx_bert_classifier},
    {"RobertaModel", &hfx_encoder_family, &hfx_roberta_model},
    {"RobertaForSequenceClassification", &hfx_encoder_family, &hfx_roberta_classifier},
    {"XLMRobertaModel", &hfx_encoder_family, &hfx_xlmr_model},
    {"XLMRobertaForSequenceClassification", &hfx_encoder_family, &hfx_xlmr_classifier},
    {"BertForTokenClassification", &hfx_encoder_family, &hfx_bert_token_classifier},
    {"BertForQuestionAnswering", &hfx_encoder_family, &hfx_bert_qa},
    {"BertForMaskedLM", &hfx_encoder_family, &hfx_bert_mlm},
    {"RobertaForTokenClassification", &hfx_encoder_family, &hfx_roberta_token_classifier},
    {"RobertaForQuestionAnswering", &hfx_encoder_family, &hfx_roberta_qa},
    {"RobertaForMaskedLM", &hfx_encoder_family, &hfx_roberta_mlm},
    {"XLMRobertaForTokenClassification", &hfx_encoder_family, &hfx_xlmr_token_classifier},
    {"XLMRobertaForQuestionAnswering", &hfx_encoder_family, &hfx_xlmr_qa},
    {"XLMRobertaForMaskedLM", &hfx_encoder_family, &hfx_xlmr_mlm},
    {"MPNetModel", &hfx_untyped_encoder_family, &hfx_mpnet_model},
    {"MPNetForSequenceClassification", &hfx_untyped_encoder_family, &hfx_mpnet_classifier},
    {"MPNetForTokenClassification", &hfx_untyped_encoder_family, &hfx_mpnet_token_classifier},
    {"MPNetForQuestionAnswering", &hfx_untyped_encoder_family, &hfx_mpnet_qa},
    {"MPNetForMaskedLM", &hfx_untyped_encoder_family, &hfx_mpnet_mlm},
    {"DistilBertModel", &hfx_untyped_encoder_family, &hfx_distilbert_model},
    {"DistilBertForSequenceClassification", &hfx_untyped_encoder_family, &hfx_distilbert_classifier},
    {"DistilBertForTokenClassification", &hfx_untyped_encoder_family, &hfx_distilbert_token_classifier},
    {"DistilBertForQuestionAnswering", &hfx_untyped_encoder_family, &hfx_distilbert_qa},
    {"DistilBertForMaskedLM", &hfx_untyped_encoder_family, &hfx_distilbert_mlm},
    {"ModernBertModel", &hfx_untyped_encoder_family, &hfx_modernbert_model},
    {"ModernBertForSequenceClassification", &hfx_untyped_encoder_family, &hfx_modernbert_classifier},
    {"ModernBertForTokenClassification", &hfx_untyped_encoder_family, &hfx_modernbert_token_classifier},
    {"ModernBertForQuestionAnswering", &hfx_untyped_encoder_family, &hfx_modernbert_qa},
    {"ModernBertForMaskedLM", &hfx_untyped_encoder_family, &hfx_modernbert_mlm},
    {"DebertaV2Model", &hfx_deberta_family, &hfx_deberta_model},
    {"DebertaV2ForSequenceClassification", &hfx_deberta_family, &hfx_deberta_classifier},
    {"DebertaV2ForTokenClassification", &hfx_deberta_family, &hfx_deberta_token_classifier},
    {"DebertaV2ForQuestionAnswering", &hfx_deberta_family, &hfx_deberta_qa},
    {"DebertaV2ForMaskedLM", &hfx_deberta_family, &hfx_deberta_mlm},
    {"BartForConditionalGeneration", &hfx_seq2seq_family, &hfx_bart},
    {"MBartForConditionalGeneration", &hfx_seq2seq_family, &hfx_mbart},
    {"MarianMTModel", &hfx_seq2seq_family, &hfx_marian},
    {"M2M100ForConditionalGeneration", &hfx_seq2seq_family, &hfx_m2m100},
    {"T5ForConditionalGeneration", &hfx_seq2seq_family, &hfx_t5},
    {"MT5ForConditionalGeneration", &hfx_seq2seq_family, &hfx_mt5},
    {"UMT5ForConditionalGeneration", &hfx_seq2seq_family, &hfx_umt5},
    {"WhisperForConditionalGeneration", &hfx_seq2seq_audio_family, &hfx_whisper},
    {"MoonshineForConditionalGeneration", &hfx_seq2seq_waveform_family, &hfx_moonshine},
    {"Florence2ForConditionalGeneration", &hfx_seq2seq_vision_family, &hfx_florence2},
    {"BartModel", &hfx_seq2seq_forward_family, &hfx_bart_model},
    {"MBartModel", &hfx_seq2seq_forward_family, &hfx_mbart_model},
    {"MarianModel", &hfx_seq2seq_forward_family, &hfx_marian_model},
    {"M2M100Model", &hfx_seq2seq_forward_family, &hfx_m2m100_model},
    {"T5Model", &hfx_seq2seq_forward_family, &hfx_t5_model},
    {"MT5Model", &hfx_seq2seq_forward_family, &hfx_mt5_model},
    {"UMT5Model", &hfx_seq2seq_forward_family, &hfx_umt5_model},
    {"T5EncoderModel", &hfx_seq2seq_forward_family, &hfx_t5_encoder},
    {"MT5EncoderModel", &hfx_seq2seq_forward_family, &hfx_mt5_encoder},
    {"UMT5EncoderModel", &hfx_seq2seq_forward_family, &hfx_umt5_encoder},
    {"WhisperModel", &hfx_seq2seq_forward_family, &hfx_whisper_model},
    {"MoonshineModel", &hfx_seq2seq_forward_family, &hfx_moonshine_model},
    {"BartForSequenceClassification", &hfx_seq2seq_forward_family, &hfx_bart_classifier},
    {"MBartForSequenceClassification", &hfx_seq2seq_forward_family, &hfx_mbart_classifier},
    {"ViTModel", &hfx_vision_family, &hfx_vit_model},
    {"ViTForImageClassification", &hfx_vision_family, &hfx_vit_classifier},
    {"CLIPVisionModel", &hfx_vision_family, &hfx_clip_vision_model},
    {"CLIPVisionModelWithProjection", &hfx_vision_family, &hfx_clip_vision_projection},
    {"SiglipVisionModel", &hfx_vision_family, &hfx_siglip_vision_model},
    {"Dinov2Model", &hfx_vision_family, &hfx_dinov2_model},
    {"Dinov2ForImageClassification", &hfx_vision_family, &hfx_dinov2_classifier},
    {"DINOv3ViTModel", &hfx_vision_family, &hfx_dinov3_model},
    {"Siglip2VisionModel", &hfx_naflex_family, &hfx_siglip2_vision_model},
    {"ParakeetForCTC", &hfx_parakeet_family, &hfx_parakeet_ctc},
    {"ParakeetEncoder", &hfx_parakeet_family, &hfx_parakeet_encoder},
    {"Gemma3nAudioEncoder", &hfx_usm_family, &hfx_gemma3n_audio_encoder},
    {"Gemma4AudioModel", &hfx_usm_family, &hfx_gemma4_audio_model},
    {"TimmWrapperModel", &hfx_timm_family, hfx_timm_wrapper_model},
    {"Wav2Vec2ForCTC", &hfx_speech_family, &hfx_wav2vec2_ctc},
    {"Wav2Vec2Model", &hfx_speech_family, &hfx_wav2vec2_model},
    {"Wav2Vec2ForSequenceClassification", &hfx_speech_family, &hfx_wav2vec2_classifier},
    {"HubertForCTC", &hfx_speech_family, &hfx_hubert_ctc},
    {"HubertModel", &hfx_speech_family, &hfx_hubert_model},
    {"HubertForSequenceClassification", &hfx_speech_family, &hfx_hubert_classifier},
    {"UniSpeechForCTC", &hfx_speech_family, &hfx_unispeech_ctc},
    {"UniSpeechModel", &hfx_speech_family, &hfx_unispeech_model},
    {"UniSpeechForSequenceClassification", &hfx_speech_family, &hfx_unispeech_classifier},
    {"UniSpeechSatForCTC", &hfx_speech_family, &hfx_unispeech_sat_ctc},
    {"UniSpeechSatModel", &hfx_speech_family, &hfx_unispeech_sat_model},
    {"UniSpeechSatForSequenceClassification", &hfx_speech_family, &hfx_unispeech_sat_classifier},
    {"WavLMForCTC", &hfx_speech_family, &hfx_wavlm_ctc},
    {"WavLMModel", &hfx_speech_family, &hfx_wavlm_model},
    {"WavLMForSequenceClassification", &hfx_speech_family, &hfx_wavlm_classifier},
    {"Wav2Vec2ConformerForCTC", &hfx_speech_family, &hfx_wav2vec2_conformer_ctc},
    {"Wav2Vec2ConformerModel", &hfx_speech_family, &hfx_wav2vec2_conformer_model},
    {"Wav2Vec2ConformerForSequenceClassification", &hfx_speech_family, &hfx_wav2vec2_conformer_classifier},
    {"Data2VecAudioForCTC", &hfx_speech_family, &hfx_data2vec_audio_ctc},
    {"Data2VecAudioModel", &hfx_speech_family, &hfx_data2vec_audio_model},
    {"Data2VecAudioForSequenceClassification", &hfx_speech_family, &hfx_data2vec_audio_classifier},
    {"CLIPModel", &hfx_dual_family, &hfx_clip_model},
    {"SiglipModel", &hfx_dual_family, &hfx_siglip_model},
    {"CLIPTextModel", &hfx_dual_family, &hfx_clip_text_model},
    {"CLIPTextModelWithProjection", &hfx_dual_family, &hfx_clip_text_projection},
    {"SiglipTextModel", &hfx_dual_family, &hfx_siglip_text_model},
    {"Siglip2Model", &hfx_dual_family, &hfx_siglip2_model},
    {"Siglip2TextModel", &hfx_dual_family, &hfx_siglip2_text_model},
    {"Qwen2AudioForConditionalGeneration", &hfx_audio_lm_family, &hfx_qwen2_audio},
    {"VoxtralForConditionalGeneration", &hfx_audio_lm_family, &hfx_voxtral},
    {"AudioFlamingo3ForConditionalGeneration", &hfx_audio_lm_family, &hfx_audioflamingo3},
    {"Qwen3ASRForConditionalGeneration", &hfx_audio_lm_family, &hfx_qwen3_asr},
    {"GraniteSpeechForConditionalGeneration", &hfx_audio_lm_family, &hfx_granite_speech},
    {"LlavaForConditionalGeneration", &hfx_vlm_family, &hfx_llava},
    {"LlavaNextForConditionalGeneration", &hfx_vlm_family, &hfx_llava_next},
    {"LlavaOnevisionForConditionalGeneration", &hfx_vlm_family, &hfx_llava_onevision},
    {"InternVLForConditionalGeneration", &hfx_vlm_family, &hfx_internvl},
    {"PaliGemmaForConditionalGeneration", &hfx_vlm_family, &hfx_paligemma},
    {"Mistral3ForConditionalGeneration", &hfx_vlm_family, &hfx_mistral3},
    {"Lfm2VlForConditionalGeneration", &hfx_vlm_family, &hfx_lfm2_vl},
    {"Llama4ForConditionalGeneration", &hfx_vlm_family, &hfx_llama4},
    {"Gemma3ForConditionalGeneration", &hfx_vlm_family, &hfx_gemma3},
    {"Gemma4ForConditionalGeneration", &hfx_vlm_family, &hfx_gemma4},
    {"Gemma3nForConditionalGeneration", &hfx_vlm_family, &hfx_gemma3n},
    {"Phi4MultimodalForCausalLM", &hfx_vlm_family, &hfx_phi4mm},
    {"Idefics3ForConditionalGeneration", &hfx_vlm_family, &hfx_idefics3},
    {"SmolVLMForConditionalGeneration", &hfx_vlm_family, &hfx_smolvlm},
    {"Qwen2VLForConditionalGeneration", &hfx_vlm_family, &hfx_qwen2_vl},
    {"Qwen2_5_VLForConditionalGeneration", &hfx_vlm_family, &hfx_qwen2_5_vl},
    {"Qwen3VLForConditionalGeneration", &hfx_vlm_family, &hfx_qwen3_vl},
    {"Qwen3VLMoeForConditionalGeneration", &hfx_vlm_family, &hfx_qwen3_vl_moe},
    {"Qwen3_5ForConditionalGeneration", &hfx_vlm_family, &hfx_qwen3_5},
    {"Qwen3_5MoeForConditionalGeneration", &hfx_vlm_family, &hfx_qwen3_5_moe},
};

struct hfx_arch_model {
    const struct entry *entry;
    void *cfg; /* family-specific, arena-owned */
};

/* The class-name suffix `name` shares with hfx's architectures ("ForCausalLM"), or "" when none. */
static const char *kind_of(const char *name) {
    static const char *const kinds[] = {"ForCausalLM", "ForConditionalGeneration", "ForSequenceClassification",
                                        "LMHeadModel", "Model"};
    size_t n = name ? strlen(name) : 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t s = strlen(kinds[k]);
        if (n > s && strcmp(name + n - s, kinds[k]) == 0) return kinds[k];
    }
    return "";
}

const char *hfx_arch_supported(const char *name, char *buf, size_t size) {
    const char *kind = kind_of(name);
    size_t k = 0, n = sizeof registry / sizeof registry[0], shown = 0, total = 0;
    if (size) buf[0] = 0;
    if (*kind && size) k += (size_t)snprintf(buf, size, "*%s: ", kind);
    for (size_t i = 0; i < n; i++) { /* those of its kind by their prefix (every one when it has no kind) */
        const char *entry = registry[i].name;
        if (*kind && strcmp(kind_of(entry), kind) != 0) continue;
        total++;
        size_t len = strlen(entry) - strlen(kind);
        if (k + len + 48 >= size) continue; /* (room kept for the count below) */
        k += (size_t)snprintf(buf + k, size - k, "%s%.*s", shown++ ? ", " : "", (int)len, entry);
    }
    if (shown < total && k < size)
        snprintf(buf + k, size - k, ", and %zu more (README.md lists them)", total - shown);
    return buf;
}

/* The decoder whose base model "<stem>Model" is ("<stem>ForCausalLM"), or NULL. */
static const hfx_decoder_desc *causal_of_base(const char *name) {
    static const char model[] = "Model", causal[] = "ForCausalLM";
    size_t n = strlen(name), stem = n - (sizeof model - 1);
    if (n <= sizeof model - 1 || strcmp(name + stem, model) != 0) return NULL;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        const char *a = registry[i].name;
        if (registry[i].family == &hfx_decoder_family && strlen(a) == stem + sizeof causal - 1 &&
            strncmp(a, name, stem) == 0 && strcmp(a + stem, causal) == 0)
            return registry[i].desc;
    }
    return NULL;
}

/* The model of entry e: its family's config, parsed from the checkpoint's. */
static hfx_status open_entry(const struct entry *e, const hfx_checkpoint *ck, hfx_arena *arena, const hfx_arch_model **out,
                             hfx_error *err) {
    hfx_arch_model *m = hfx_arena_alloc(arena, sizeof *m);
    if (m) m->cfg = hfx_arena_alloc(arena, e->family->cfg_size);
    if (!m || !m->cfg) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    m->entry = e;
    hfx_status st = e->family->parse(e->desc, hfx_checkpoint_cfg(ck), arena, m->cfg, err);
    if (st) return st;
    *out = m;
    return HFX_OK;
}

/* The class to build: config.json's `architectures`, or where that is missing, null or empty the one the Auto class for
 * `task` builds from model_type (with no task, the only one hfx exports for it); a task the class does not serve is
 * refused. */
static hfx_status class_of(const hfx_checkpoint *ck, const char *task, const char **name, hfx_error *err) {
    char choices[1536]; /* fits hfx_error.message (2048) with the path */
    const json_t *cfg = hfx_checkpoint_config(ck), *archs = json_object_get(cfg, "architectures");
    const char *model_type = json_string_value(json_object_get(cfg, "model_type"));
    *name = json_string_value(json_array_get(archs, 0));
    if (task && !hfx_task_known(task))
        return hfx_fail(err, HFX_ERR_INVALID, "--task '%s' is not a task hfx knows (known: %s)", task,
                        hfx_task_names(choices, sizeof choices));
    const char *by_task = hfx_auto_class(model_type, task);
    if (*name && task && (!by_task || strcmp(by_task, *name) != 0))
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json names %s, which is not what transformers builds for "
                                              "--task %s from model_type '%s' (%s): drop --task, or export that class "
                                              "from its own checkpoint", hfx_checkpoint_dir(ck), *name, task,
                        model_type ? model_type : "missing", by_task ? by_task : "a class hfx does not export");
    if (*name) return HFX_OK;
    if (archs && !json_is_null(archs) && !json_is_array(archs))
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: field 'architectures' must be a list holding the model "
                                              "class name", hfx_checkpoint_dir(ck));
    if ((*name = by_task)) return HFX_OK;
    hfx_auto_choices(model_type, choices, sizeof choices);
    if (!choices[0])
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: 'architectures' is missing and model_type '%s' names no "
                                              "class hfx exports: write the class into 'architectures' (supported: %s)",
                        hfx_checkpoint_dir(ck), model_type ? model_type : "(missing)",
                        hfx_arch_supported(NULL, choices, sizeof choices));
    if (task)
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: 'architectures' is missing and model_type '%s' has no "
                                              "class hfx exports for --task %s; it exports as %s",
                        hfx_checkpoint_dir(ck), model_type, task, choices);
    return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: 'architectures' is missing; model_type '%s' exports as %s",
                    hfx_checkpoint_dir(ck), model_type, choices);
}

hfx_status hfx_arch_open(const hfx_checkpoint *ck, const char *task, hfx_arena *arena, const hfx_arch_model **out,
                         hfx_error *err) {
    char supported[1536]; /* the names of its kind: fits hfx_error.message (2048) with the path */
    const char *name;
    hfx_status st = class_of(ck, task, &name, err);
    if (st) return st;
    /* a pre-quantized checkpoint hfx does not read (GPTQ, AWQ, bitsandbytes, ...) stores other tensors than the
     * float ones every builder reads: refused by name instead of as missing weights */
    const json_t *quant = json_object_get(hfx_checkpoint_config(ck), "quantization_config");
    if (quant && !json_is_null(quant) && !hfx_checkpoint_quant_method(ck)) {
        const char *method = json_string_value(json_object_get(quant, "quant_method"));
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "%s/config.json: quantization_config (quant_method '%s'): hfx reads the pre-quantized "
                        "checkpoints of quant_method %s only; export the float checkpoint (hfx quantizes with "
                        "--quantize)", hfx_checkpoint_dir(ck), method ? method : "?", hfx_prequant_methods());
    }
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].name, name) == 0) return open_entry(&registry[i], ck, arena, out, err);
    const hfx_decoder_desc *causal = causal_of_base(name);
    if (causal) { /* a causal LM's base model: an entry of its own, in the arena */
        size_t n = strlen(name) + 1;
        hfx_decoder_base *b = hfx_arena_alloc(arena, sizeof *b);
        struct entry *e = hfx_arena_alloc(arena, sizeof *e);
        char *copy = hfx_arena_alloc(arena, n);
        if (!b || !e || !copy) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        memcpy(copy, name, n);
        *b = (hfx_decoder_base){causal, copy, NULL, NULL, NULL};
        *e = (struct entry){copy, &hfx_decoder_base_family, b};
        return open_entry(e, ck, arena, out, err);
    }
    return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                    "%s/config.json: architecture '%s' is not supported (supported: %s; a causal LM's base model as "
                    "<its stem>Model)",
                    hfx_checkpoint_dir(ck), name, hfx_arch_supported(name, supported, sizeof supported));
}

const char *hfx_arch_name(const hfx_arch_model *m) { return m->entry->name; }

const hfx_decoder_desc *hfx_decoder_of_model_type(const char *model_type) {
    static const char suffix[] = "ForCausalLM";
    for (size_t i = 0; model_type && i < sizeof registry / sizeof registry[0]; i++) {
        if (registry[i].family != &hfx_decoder_family) continue;
        const char *a = registry[i].name, *t = model_type;
        size_t stem = strlen(a) - (sizeof suffix - 1);
        if (strlen(a) <= sizeof suffix - 1 || strcmp(a + stem, suffix) != 0) continue;
        size_t k = 0;
        for (; *t && k < stem; t++) { /* "qwen3_moe" against "Qwen3Moe" */
            if (*t == '_') continue;
            if (tolower((unsigned char)*t) != tolower((unsigned char)a[k])) break;
            k++;
        }
        const char *alias = ((const hfx_decoder_desc *)registry[i].desc)->model_type_alias;
        if ((!*t && k == stem) || (alias && strcmp(alias, model_type) == 0)) return registry[i].desc;
    }
    return NULL;
}

hfx_status hfx_arch_build_forward(const hfx_arch_model *m, const hfx_checkpoint *ck,
                                  const hfx_build_opts *opts, hfx_graph *g, hfx_error *err) {
    return m->entry->family->build_forward(m->entry->desc, m->cfg, ck, opts, g, err);
}

int hfx_arch_cache_layers(const hfx_arch_model *m, hfx_layer_cache *layers, int max) {
    return m->entry->family->cache_layers ? m->entry->family->cache_layers(m->cfg, layers, max) : -1;
}

int64_t hfx_arch_prompt_piece(const hfx_arch_model *m) {
    return m->entry->family->prompt_piece ? m->entry->family->prompt_piece(m->cfg) : 0;
}

int64_t hfx_arch_recompute_at(const hfx_arch_model *m) {
    return m->entry->family->recompute_at ? m->entry->family->recompute_at(m->cfg) : 0;
}

hfx_torch_signature hfx_arch_torch_signature(const hfx_arch_model *m) {
    static const char *const causal_lm[] = {"input_ids", "attention_mask", "position_ids", "cache", NULL};
    const hfx_arch_family *f = m->entry->family;
    return f->torch_signature ? f->torch_signature(m->entry->desc) : (hfx_torch_signature){.args = causal_lm};
}

hfx_torch_signature hfx_arch_component_signature(const hfx_arch_model *m, const char *component) {
    const hfx_arch_family *f = m->entry->family;
    return f->component_signature ? f->component_signature(m->entry->desc, component) : hfx_arch_torch_signature(m);
}

hfx_component_set hfx_arch_components(const hfx_arch_model *m, hfx_export_kind kind) {
    const hfx_arch_family *f = m->entry->family;
    return f->components_of ? f->components_of(m->cfg, kind) : f->exports[kind];
}

const char *const *hfx_arch_sequence_inputs(const hfx_arch_model *m) {
    const hfx_arch_family *f = m->entry->family;
    return f->sequence_inputs_of ? f->sequence_inputs_of(m->cfg) : f->sequence_inputs;
}

hfx_genai_layout hfx_arch_genai(const hfx_arch_model *m) { return m->entry->family->genai; }

const char *hfx_arch_genai_type(const hfx_arch_model *m) {
    return m->entry->family->genai_type ? m->entry->family->genai_type(m->entry->desc) : NULL;
}

bool hfx_arch_pools(const hfx_arch_model *m) {
    return m->entry->family->pools && m->entry->family->pools(m->entry->desc);
}
