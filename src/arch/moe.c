/* Mixture-of-experts feed-forward blocks: the config's experts and routers, and the two exact forms
 * (every expert batched, or each token's k gathered) of every router and expert layout. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* ---- the lineages ---- */

/* transformers 5 writes num_local_experts; older Qwen3-MoE configs num_experts, OLMoE's the other way */
const hfx_moe_desc hfx_moe_mixtral = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .block = "block_sparse_moe"};
const hfx_moe_desc hfx_moe_qwen3 = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG, .experts_key = "num_local_experts",
    .experts_alt_key = "num_experts"};
const hfx_moe_desc hfx_moe_qwen2 = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_GATED,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG, .experts_key = "num_local_experts",
    .experts_alt_key = "num_experts"};
const hfx_moe_desc hfx_moe_qwen3_next = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_GATED,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_local_experts",
    .experts_alt_key = "num_experts"};
/* Qwen3-VL-MoE's language model: Qwen3-MoE's layers, the router always renormalising, the Hub's fused experts
 * transposed */
const hfx_moe_desc hfx_moe_qwen3_vl = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP_EITHER, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .experts_alt_key = "num_experts"};
/* Qwen3.5-MoE: decoder_sparse_step, mlp_only_layers and norm_topk_prob unread (the router always
 * renormalizes) */
const hfx_moe_desc hfx_moe_qwen3_5 = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_GATED,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .experts_alt_key = "num_experts"};
/* Qwen4-Exp: Qwen3.5-MoE's, renormalised as norm_topk_prob says (absent: true) */
const hfx_moe_desc hfx_moe_qwen4_exp = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_GATED,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_experts"};
const hfx_moe_desc hfx_moe_granite = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_LINEAR, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .block = "block_sparse_moe"};
const hfx_moe_desc hfx_moe_granite_hybrid = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_LINEAR, .shared = HFX_SHARED_LINEAR,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .shared_default = 1024,
    .block = "block_sparse_moe"};
const hfx_moe_desc hfx_moe_granite_shared = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_LINEAR, .shared = HFX_SHARED_LINEAR,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts", .shared_default = 0,
    .block = "block_sparse_moe"};
const hfx_moe_desc hfx_moe_olmoe = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_CONFIG, .experts_key = "num_experts",
    .experts_alt_key = "num_local_experts"};
const hfx_moe_desc hfx_moe_deepseek_v2 = {
    .router = HFX_ROUTER_GROUPED_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG, .experts_key = "n_routed_experts", .first_dense = 0,
    .shared_default = 2};
const hfx_moe_desc hfx_moe_deepseek_v3 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts", .first_dense = 3,
    .shared_default = 1, .defaults = {8, 4, 2.5}};
/* V3's router and shared experts under other defaults: GLM-4.5 (one dense layer first), dots.llm1 (none,
 * no renormalisation, the shared experts' count required), Solar Open (every layer sparse) */
const hfx_moe_desc hfx_moe_glm4 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts", .first_dense = 1,
    .shared_default = 1};
const hfx_moe_desc hfx_moe_dots1 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG, .experts_key = "n_routed_experts", .first_dense = 0,
    .shared_default = 0};
/* V3's router, experts and one shared expert by default (n_routed_experts, or num_local_experts), the sparse layers by
 * mlp_layer_types: the lineages from DeepSeek V3.2 on differ in their defaults and an option (a router of another kind
 * spells its fields out: A.X K2's) */
#define V3_BY_LAYER_TYPES                                                                                      \
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,              \
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",           \
    .experts_alt_key = "num_local_experts", .shared_default = 1
/* GLM-4.7-Flash (glm4_moe_lite): V3's router and shared experts over mlp_layer_types' sparse layers (else all but
 * the first) */
const hfx_moe_desc hfx_moe_glm4_lite = {
    V3_BY_LAYER_TYPES, .first_dense = 1, .defaults = {1, 1, 1.8}};
/* DeepSeek V3.2: V3's router and shared experts, the sparse layers by mlp_layer_types (absent: after
 * first_k_dense_replace, 3) */
const hfx_moe_desc hfx_moe_deepseek_v32 = {
    V3_BY_LAYER_TYPES, .first_dense = 3, .defaults = {8, 4, 2.5}};
/* Flint: sigmoid scores over num_experts, the k best renormalised (norm_topk_prob, on when absent), an ungated shared
 * expert of shared_expert_intermediate_size, dense MLPs on mlp_only_layers */
const hfx_moe_desc hfx_moe_flint = {
    .router = HFX_ROUTER_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_SIZED, .layers = HFX_MOE_BY_STEP,
    .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_experts", .experts_alt_key = "num_local_experts"};
/* Kolibri-1: the k largest logits + their correction bias chosen, weighed by sigmoids (norm_topk_prob), over
 * num_experts in every layer, an ungated shared MLP of shared_expert_intermediate_size (shared_experts) */
const hfx_moe_desc hfx_moe_kolibri = {
    .router = HFX_ROUTER_LOGITS_CORRECTED, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_SIZED,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_CONFIG, .experts_key = "num_experts",
    .experts_alt_key = "num_local_experts", .shared_name = "shared_experts"};
/* A.X K1: V3's router (8 groups, 4 kept, x 2.5) and shared experts, the sparse layers by mlp_layer_types, its output
 * RMS-normed (post_mlp_layernorm, stored on the layer) */
const hfx_moe_desc hfx_moe_axk1 = {
    V3_BY_LAYER_TYPES, .first_dense = 1, .defaults = {8, 4, 2.5},
    .out_norm = "post_mlp_layernorm"};
/* A.X K2: V3.2's, no groups by default (n_group null), the groups not kept scoring 0 */
const hfx_moe_desc hfx_moe_axk2 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts", .first_dense = 1, .shared_default = 1, .defaults = {1, 1, 2.5}};
/* GLM-5: V3.2's, one group by default */
const hfx_moe_desc hfx_moe_glm_moe_dsa = {
    V3_BY_LAYER_TYPES, .first_dense = 3, .defaults = {1, 1, 2.5}};
/* HY V4: V3's router (one group by default, x 2.827) and shared experts, the sparse layers by mlp_layer_types (absent:
 * after the first), its experts' gate and up clamped at swiglu_limit (10) */
const hfx_moe_desc hfx_moe_hy_v4 = {
    V3_BY_LAYER_TYPES, .first_dense = 1, .defaults = {1, 1, 2.827, 10.0},
    .clamp_key = "swiglu_limit"};
/* DeepSeek V4: scoring_func's scores (√softplus by default) + the correction bias chosen, or (mlp_layer_types'
 * "hash_moe") each token id's experts from gate.tid2eid, × 1.5; experts in every layer, theirs and the shared MLP's gate
 * and up clamped at swiglu_limit (10). transformers saves its experts as the checkpoints have them, per expert under
 * ffn (w1/w3/w2, the router's bias gate.bias); the model's fused ones under mlp are read too. */
const hfx_moe_desc hfx_moe_deepseek_v4 = {
    .router = HFX_ROUTER_SCORED, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_CLAMPED,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_RENORM, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts", .defaults = {1, 1, 1.5, 10.0}, .clamp_key = "swiglu_limit", .block = "ffn",
    .correction_bias = "gate.bias"};
/* Kimi-Linear: V3's router (one group by default, x 2.446) and shared experts over num_local_experts (w1/w3/w2 as
 * saved), the sparse layers by mlp_layer_types (absent: after first_k_dense_replace, 1) */
const hfx_moe_desc hfx_moe_kimi = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_local_experts",
    .first_dense = 1, .shared_default = 1, .defaults = {1, 1, 2.446}};
/* BailingHybrid (Ling 3): V3's router (8 groups, 4 kept, x 2.5) and shared experts under its config's names (as Kimi's),
 * the correction bias saved as gate.expert_bias, the sparse layers by mlp_layer_types (absent: after
 * first_k_dense_replace, 2) */
const hfx_moe_desc hfx_moe_bailing_hybrid = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_local_experts",
    .correction_bias = "gate.expert_bias", .first_dense = 2, .shared_default = 1, .defaults = {8, 4, 2.5}};
/* MiniMax-M2: V3's sigmoid scores and correction bias (the block's own buffer) over Mixtral's experts, one
 * group, always renormalised, no shared expert */
const hfx_moe_desc hfx_moe_minimax_m2 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .correction_bias = "e_score_correction_bias",
    .block = "block_sparse_moe"};
/* EXAONE-MoE: V3's router (num_experts, num_shared_experts) over the layers mlp_layer_types makes sparse */
const hfx_moe_desc hfx_moe_exaone = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_experts", .first_dense = 1,
    .shared_default = 1, .correction_bias = "e_score_correction_bias", .shared_key = "num_shared_experts",
    .defaults = {1, 1, 2.5}};
/* ERNIE 4.5 MoE: softmax scores corrected for the choice (moe_statics), renormalised, shared experts, the
 * sparse layers a range of indices */
const hfx_moe_desc hfx_moe_ernie4_5 = {
    .router = HFX_ROUTER_SOFTMAX_CORRECTED, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_INDEX_RANGE, .topk = HFX_TOPK_RENORM, .experts_key = "moe_num_experts",
    .experts_alt_key = "num_experts", .correction_bias = "moe_statics.e_score_correction_bias",
    .shared_key = "moe_num_shared_experts", .shared_default = 2, .top_k_key = "moe_k"};
/* HunYuan MoE: softmax top-k renormalised (mlp.gate.wg), experts of intermediate_size and a shared MLP as
 * wide beside them in every layer */
const hfx_moe_desc hfx_moe_hunyuan = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_MLP_FULL,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_experts",
    .experts_alt_key = "num_local_experts", .top_k_key = "moe_topk", .router_name = "gate.wg.weight"};
/* Llama 4: the sigmoid of the top-k logits scales each chosen expert's input; a shared expert beside them; the
 * sparse layers moe_layers (or every interleave_moe_layer_step-th); experts of intermediate_size */
const hfx_moe_desc hfx_moe_llama4 = {
    .router = HFX_ROUTER_SIGMOID_TOP_LOGITS, .experts = HFX_EXPERTS_INPUT_SCALED, .shared = HFX_SHARED_EXPERT,
    .layers = HFX_MOE_LIST_OR_STEP, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .width_key = "intermediate_size"};
/* Gemma 4: experts beside every layer's dense MLP (enable_moe_block), on the layer itself, routed from the layer's
 * input by a scaled softmax router */
const hfx_moe_desc hfx_moe_gemma4 = {
    .router = HFX_ROUTER_SOFTMAX_SCALED, .experts = HFX_EXPERTS_ON_LAYER, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_BESIDE_MLP, .topk = HFX_TOPK_RENORM, .experts_key = "num_experts",
    .top_k_key = "top_k_experts", .router_name = "router.proj.weight"};
/* LFM2-MoE: V3's sigmoid scores over one group, the correction bias (expert_bias, the block's own) as use_expert_bias
 * says, renormalised with +1e-6; Mixtral's w1/w3/w2 experts under the MLP; the sparse layers from num_dense_layers */
const hfx_moe_desc hfx_moe_lfm2 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_AFTER_DENSE, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_experts", .first_dense = 2,
    .correction_bias = "expert_bias", .correction_key = "use_expert_bias", .renorm_eps = 1e-6};
/* HY3: V3's sigmoid scores and correction bias (the block's expert_bias) over one group, always renormalised, times
 * router_scaling_factor (default 2.826); a shared MLP (shared_mlp) of num_shared_experts experts' width; the sparse
 * layers by mlp_layer_types (else all but the first) */
const hfx_moe_desc hfx_moe_hy_v3 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_RENORM, .experts_key = "num_experts", .first_dense = 1,
    .shared_default = 1, .shared_key = "num_shared_experts", .correction_bias = "expert_bias",
    .router_name = "router.gate.weight", .shared_name = "shared_mlp", .scale_key = "router_scaling_factor",
    .defaults = {1, 1, 2.826}};
/* AFMoE: V3's sigmoid scores and correction bias (the block's expert_bias) over one group, always renormalised, times
 * route_scale; shared experts; the sparse layers from num_dense_layers */
const hfx_moe_desc hfx_moe_afmoe = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_AFTER_DENSE, .topk = HFX_TOPK_RENORM, .experts_key = "num_experts", .first_dense = 1,
    .shared_default = 2, .shared_key = "num_shared_experts", .correction_bias = "expert_bias",
    .router_name = "router.gate.weight", .scale_key = "route_scale"};
/* Mistral 4: V3's shape of router over softmax scores without a correction bias (groups by their top-2 sum) */
const hfx_moe_desc hfx_moe_mistral4 = {
    .router = HFX_ROUTER_GROUPED_SOFTMAX_TOP2, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_STEP, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts", .first_dense = 0, .shared_default = 1};
/* Jamba: softmax top-k never renormalised (feed_forward.router), experts of intermediate_size on every
 * expert_layer_period-th layer */
const hfx_moe_desc hfx_moe_jamba = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_PERIOD_OFFSET, .topk = HFX_TOPK_CONFIG, .experts_key = "num_experts",
    .experts_alt_key = "num_local_experts", .router_name = "router.weight", .width_key = "intermediate_size"};
/* Phi-3.5-MoE: sparsemixer's top-2 over Mixtral's w1/w3/w2 experts in every layer */
const hfx_moe_desc hfx_moe_phimoe = {
    .router = HFX_ROUTER_SPARSEMIXER, .experts = HFX_EXPERTS_W123, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts",
    .router_name = "gate.weight", .block = "block_sparse_moe"};
/* DBRX: ffn_config's keys; softmax top-k divided by the weights' p-norm; the experts flat under experts.mlp */
const hfx_moe_desc hfx_moe_dbrx = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_FLAT, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_P_NORM, .experts_key = "ffn_config.moe_num_experts",
    .top_k_key = "ffn_config.moe_top_k", .width_key = "ffn_config.ffn_hidden_size", .router_name = "router.layer.weight"};
/* Cohere2-MoE: top-k logits scored by softmax or sigmoid, dense layers by mlp_layer_types, shared experts averaged
 * with the routed ones by default; the experts intermediate_size wide */
const hfx_moe_desc hfx_moe_cohere2 = {
    .router = HFX_ROUTER_TOPK_THEN_SCORE, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "num_experts",
    .width_key = "intermediate_size", .shared_key = "num_shared_experts",
    .combine_key = "shared_expert_combination_strategy"};
/* MiMo-V2-Flash: DeepSeek V3's router (n_group 1 by default) without shared experts, layer 0 dense by mlp_layer_types */
const hfx_moe_desc hfx_moe_mimo_v2 = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_BY_TYPE_LIST, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts", .first_dense = 1};
/* JetMoE: GraniteMoE's fused experts under mlp (input_linear, output_linear, router.layer), a bias after their sum */
const hfx_moe_desc hfx_moe_jetmoe = {
    .router = HFX_ROUTER_SOFTMAX, .experts = HFX_EXPERTS_LINEAR, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts", .out_bias = "bias"};
/* Nemotron-H: DeepSeek V3's router over ungated experts and an ungated shared expert, on the layers its pattern makes
 * experts */
const hfx_moe_desc hfx_moe_nemotron_h = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_UP_DOWN, .shared = HFX_SHARED_UP_DOWN,
    .layers = HFX_MOE_BY_BLOCK_TYPE, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts"};
const hfx_moe_desc hfx_moe_solar = {
    .router = HFX_ROUTER_GROUPED_SIGMOID, .experts = HFX_EXPERTS_MLP, .shared = HFX_SHARED_PLAIN,
    .layers = HFX_MOE_EVERY_LAYER_OWN, .topk = HFX_TOPK_CONFIG_TRUE, .experts_key = "n_routed_experts",
    .experts_alt_key = "num_local_experts", .shared_default = 1};
/* LongCat-Flash: softmax scores over the routed and the zero-compute experts, the choice corrected by
 * router.e_score_correction_bias, the chosen scores never renormalised, × routed_scaling_factor (6) */
const hfx_moe_desc hfx_moe_longcat = {
    .router = HFX_ROUTER_SOFTMAX_CORRECTED, .experts = HFX_EXPERTS_MLP, .layers = HFX_MOE_SHORTCUT,
    .topk = HFX_TOPK_NEVER, .experts_key = "n_routed_experts", .top_k_key = "moe_topk",
    .width_key = "expert_ffn_hidden_size", .router_name = "router.classifier.weight",
    .correction_bias = "router.e_score_correction_bias", .zero_key = "zero_expert_num", .defaults = {0, 0, 6.0}};
const hfx_moe_desc hfx_moe_gpt_oss = {
    .router = HFX_ROUTER_SOFTMAX_BIASED, .experts = HFX_EXPERTS_INTERLEAVED, .shared = HFX_SHARED_NONE,
    .layers = HFX_MOE_EVERY_LAYER, .topk = HFX_TOPK_RENORM, .experts_key = "num_local_experts"};

static bool grouped_router(const hfx_moe_desc *l) {
    return l->router == HFX_ROUTER_GROUPED_SOFTMAX || l->router == HFX_ROUTER_GROUPED_SIGMOID ||
           l->router == HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL || l->router == HFX_ROUTER_SOFTMAX_CORRECTED ||
           l->router == HFX_ROUTER_GROUPED_SOFTMAX_TOP2 || l->router == HFX_ROUTER_SCORED;
}

/* A router whose scores are corrected by a bias for the choice alone (V3's, ERNIE's, V4's). */
static bool corrected_router(const hfx_moe_desc *l) {
    return l->router == HFX_ROUTER_GROUPED_SIGMOID || l->router == HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL ||
           l->router == HFX_ROUTER_SOFTMAX_CORRECTED || l->router == HFX_ROUTER_SCORED;
}

/* A grouped router that ranks groups by their two best scores and weighs the chosen experts by their plain scores
 * (V3's and its kin), not by their best score and masked scores (V2's). */
static bool ranks_by_top2(const hfx_moe_desc *l) {
    return corrected_router(l) || l->router == HFX_ROUTER_GROUPED_SOFTMAX_TOP2;
}

/* ---- config.json ---- */

/* DeepSeek's MoE: dense layers first, shared experts, the group-limited router's settings. */
static hfx_status parse_deepseek_router(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const hfx_moe_desc *l = d->moe;
    int64_t first_dense = 0, shared = 0; /* (MiniMax-M2: no shared expert) */
    hfx_status st;
    const char *shared_key = l->shared_key ? l->shared_key : "n_shared_experts";
    bool first_dense_read = l->layers == HFX_MOE_BY_STEP || l->layers == HFX_MOE_BY_TYPE_LIST;
    if ((first_dense_read && /* past the last layer: every layer dense, as transformers builds it */
         (st = hfx_cfg_int_in_or(c, "first_k_dense_replace", l->first_dense < m->layers ? l->first_dense : m->layers,
                                 0, m->layers, &first_dense, err))) ||
        (l->shared == HFX_SHARED_PLAIN &&
         (st = l->shared_default ? hfx_cfg_int_in_or(c, shared_key, l->shared_default, 0, 1024, &shared, err)
                                 : hfx_cfg_int_in(c, shared_key, 0, 1024, &shared, err))) ||
        (st = hfx_cfg_num_or(c, l->scale_key ? l->scale_key : "routed_scaling_factor",
                             l->defaults.routed_scale > 0 ? l->defaults.routed_scale : 1.0, &m->moe.routed_scale, err)))
        return st;
    if (!isfinite(m->moe.routed_scale))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: routed_scaling_factor %g is not a finite number", c.where,
                        m->moe.routed_scale);
    for (int64_t i = 0; i < first_dense; i++) m->sparse[i] = false;
    if (l->shared == HFX_SHARED_PLAIN) m->moe.shared_intermediate = m->moe.moe_intermediate * shared;
    if (l->router == HFX_ROUTER_SCORED) return HFX_OK; /* (no groups) */
    bool v3 = ranks_by_top2(d->moe), grouped = v3;
    if (!v3) { /* V2: the router never renormalises; topk_method picks the grouping */
        const char *method;
        m->moe.norm_topk = false;
        if ((st = hfx_cfg_str_or(c, "topk_method", "greedy", &method, err))) return st;
        if (strcmp(method, "greedy") != 0 && strcmp(method, "group_limited_greedy") != 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: topk_method '%s' is not supported (greedy, "
                            "group_limited_greedy)", c.where, method);
        grouped = strcmp(method, "group_limited_greedy") == 0;
    }
    if (!grouped) return HFX_OK;
    int64_t dflt_groups = l->defaults.groups > 0 ? l->defaults.groups : 1;
    if ((st = hfx_cfg_int_in_or(c, "n_group", dflt_groups, 1, m->moe.experts, &m->moe.groups, err)) ||
        (st = hfx_cfg_int_in_or(c, "topk_group", l->defaults.top_groups > 0 ? l->defaults.top_groups : m->moe.groups,
                                1, m->moe.groups, &m->moe.top_groups, err)))
        return st;
    if (m->moe.zero && m->moe.groups > 1)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: n_group %lld with zero-compute experts is not supported", c.where,
                        (long long)m->moe.groups);
    if (m->moe.experts % m->moe.groups)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: n_routed_experts %lld is not a multiple of n_group %lld", c.where,
                        (long long)m->moe.experts, (long long)m->moe.groups);
    int64_t per_group = m->moe.experts / m->moe.groups;
    if (v3 && per_group < 2) /* groups are ranked by their two best experts */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: n_group %lld leaves fewer than 2 experts per group", c.where,
                        (long long)m->moe.groups);
    if (m->moe.top_k > m->moe.top_groups * per_group)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_experts_per_tok %lld exceeds the experts of topk_group %lld "
                        "groups", c.where, (long long)m->moe.top_k, (long long)m->moe.top_groups);
    return HFX_OK;
}

/* The experts per token: a number, or a list of one per layer whose values agree (HunYuan's moe_topk). */
static hfx_status parse_top_k(hfx_cfg c, const char *key, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (!json_is_array(v)) return hfx_cfg_int_in(c, key, 1, m->moe.experts, &m->moe.top_k, err);
    if ((int64_t)json_array_size(v) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a number or a list of num_hidden_layers (%lld) "
                                              "numbers", c.where, key, (long long)m->layers);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *k = json_array_get(v, i);
        if (!json_is_integer(k) || json_integer_value(k) < 1 || json_integer_value(k) > m->moe.experts ||
            (i && json_integer_value(k) != m->moe.top_k))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s[%zu] must be one experts count for every layer, in "
                                                      "[1, %lld]", c.where, key, i, (long long)m->moe.experts);
        m->moe.top_k = json_integer_value(k);
    }
    return HFX_OK;
}

/* The layers a list of indices names (config.json's `key`, an array) marked sparse or dense. */
static hfx_status mark_listed_layers(hfx_cfg c, const json_t *list, const char *key, bool sparse, hfx_decoder_cfg *m,
                                     hfx_error *err) {
    if (!json_is_array(list))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of layer indices", c.where, key);
    for (size_t j = 0; j < json_array_size(list); j++) {
        const json_t *v = json_array_get(list, j);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: %s[%zu] is not a layer index", c.where, key, j);
        m->sparse[json_integer_value(v)] = sparse;
    }
    return HFX_OK;
}

/* Llama 4's sparse layers: moe_layers (indices), else every interleave_moe_layer_step-th. */
static hfx_status parse_moe_layers(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *list = json_object_get(c.obj, "moe_layers");
    if (!list || json_is_null(list)) {
        int64_t step;
        hfx_status st = hfx_cfg_int_in_or(c, "interleave_moe_layer_step", 1, 1, INT32_MAX, &step, err);
        for (int64_t i = 0; !st && i < m->layers; i++) m->sparse[i] = (i + 1) % step == 0;
        return st;
    }
    for (int64_t i = 0; i < m->layers; i++) m->sparse[i] = false;
    return mark_listed_layers(c, list, "moe_layers", true, m, err);
}

/* ERNIE 4.5 MoE's sparse layers: (i + 1) % moe_layer_interval == 0, start ≤ i ≤ end (end −1: the last). */
static hfx_status parse_layer_range(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t start, end, interval;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "moe_layer_start_index", 1, 0, INT32_MAX, &start, err)) ||
        (st = hfx_cfg_int_in_or(c, "moe_layer_end_index", -1, -1, INT32_MAX, &end, err)) ||
        (st = hfx_cfg_int_in_or(c, "moe_layer_interval", 1, 1, INT32_MAX, &interval, err)))
        return st;
    if (end == -1) end = m->layers - 1;
    for (int64_t i = 0; i < m->layers; i++) m->sparse[i] = (i + 1) % interval == 0 && i >= start && i <= end;
    return HFX_OK;
}

/* mlp_layer_types, one of two words per layer: out[i] whether layer i's is `yes` (not `no`). */
static hfx_status mlp_layer_words(hfx_cfg c, const char *no, const char *yes, const hfx_decoder_cfg *m, bool *out,
                                  hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "mlp_layer_types");
    if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'mlp_layer_types' must be a list of num_hidden_layers (%lld) "
                                              "strings", c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        if (!t || (strcmp(t, no) != 0 && strcmp(t, yes) != 0))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: mlp_layer_types[%lld] = '%s' (supported: %s, %s)", c.where,
                            (long long)i, t ? t : "(not a string)", no, yes);
        out[i] = strcmp(t, yes) == 0;
    }
    return HFX_OK;
}

/* mlp_layer_types: "dense" or "sparse" per layer, where the config lists them (HFX_MOE_BY_TYPE_LIST). */
static hfx_status parse_mlp_layer_types(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "mlp_layer_types");
    if (!types || json_is_null(types)) return HFX_OK;
    return mlp_layer_words(c, "dense", "sparse", m, m->sparse, err);
}

/* The sparse layers counted by the config: Jamba's period and offset, LFM2-MoE's and AFMoE's dense prefix. */
static hfx_status parse_counted_layers(const hfx_moe_desc *l, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    if (l->layers == HFX_MOE_PERIOD_OFFSET) {
        int64_t period, offset;
        if ((st = hfx_cfg_int_in_or(c, "expert_layer_period", 2, 1, 1 << 20, &period, err)) ||
            (st = hfx_cfg_int_in_or(c, "expert_layer_offset", 1, 0, period - 1, &offset, err)))
            return st;
        for (int64_t i = 0; i < m->layers; i++) m->sparse[i] = i % period == offset;
    }
    if (l->layers == HFX_MOE_AFTER_DENSE) {
        int64_t dense;
        if ((st = hfx_cfg_int_in_or(c, "num_dense_layers", l->first_dense < m->layers ? l->first_dense : m->layers, 0,
                                    m->layers, &dense, err)))
            return st;
        for (int64_t i = 0; i < m->layers; i++) m->sparse[i] = i >= dense;
    }
    return HFX_OK;
}

/* Cohere2-MoE's expert_selection_fn: a softmax over the top-k logits (always renormalised) or their sigmoids. */
static hfx_status parse_selection(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const char *fn;
    hfx_status st = hfx_cfg_str_or(c, "expert_selection_fn", "softmax", &fn, err);
    if (st) return st;
    if (strcmp(fn, "softmax") != 0 && strcmp(fn, "sigmoid") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: expert_selection_fn '%s' is not supported (softmax, sigmoid)",
                        c.where, fn);
    m->moe.sigmoid_select = strcmp(fn, "sigmoid") == 0;
    if (!m->moe.sigmoid_select) m->moe.norm_topk = true; /* (the softmax over the k is their renormalisation) */
    return HFX_OK;
}

/* The shared experts' count (0 by default: none) and how their output joins the routed experts': sum or average. */
static hfx_status parse_shared_combination(const hfx_moe_desc *l, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t shared;
    const char *how;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, l->shared_key, l->shared_default, 0, 1024, &shared, err)) ||
        (st = hfx_cfg_str_or(c, l->combine_key, "average", &how, err)))
        return st;
    if (strcmp(how, "sum") != 0 && strcmp(how, "average") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (sum, average)", c.where, l->combine_key,
                        how);
    m->moe.shared_intermediate = m->moe.moe_intermediate * shared;
    m->moe.shared_average = strcmp(how, "average") == 0;
    return HFX_OK;
}

/* HFX_ROUTER_SCORED's scoring_func, and its layers routed by token id: mlp_layer_types' "hash_moe" ("moe" the others). */
static hfx_status parse_scored(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    const char *fn;
    hfx_status st = hfx_cfg_str_or(c, "scoring_func", "sqrtsoftplus", &fn, err);
    if (st) return st;
    /* (its config names "softmax" too, but its router scores by ACT2FN, which has no softmax: transformers cannot build
     * that model, so there is nothing to be exact to) */
    if (strcmp(fn, "sqrtsoftplus") != 0 && strcmp(fn, "sigmoid") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: scoring_func '%s' is not supported (sqrtsoftplus, sigmoid; "
                                                  "transformers' DeepSeek V4 router scores by ACT2FN, which has no softmax)",
                        c.where, fn);
    m->moe.score = strcmp(fn, "sigmoid") == 0 ? HFX_SCORE_SIGMOID : HFX_SCORE_SQRT_SOFTPLUS;
    if (!(m->moe.hashed = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->moe.hashed)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    return mlp_layer_words(c, "moe", "hash_moe", m, m->moe.hashed, err);
}

/* A router's own switches: sparsemixer's jitter (and its fixed top 2), a correction bias the config turns off. */
static hfx_status parse_router_options(const hfx_moe_desc *l, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->moe.uncorrected = false;
    if (l->router == HFX_ROUTER_SPARSEMIXER) { /* always the top 2, whatever num_experts_per_tok says */
        if ((st = hfx_cfg_num_or(c, "router_jitter_noise", 0.01, &m->moe.jitter, err))) return st;
        if (!(m->moe.jitter >= 0 && m->moe.jitter < 1e6) || m->moe.experts < 2)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: router_jitter_noise %g must be ≥ 0, with 2 experts or more", c.where,
                            m->moe.jitter);
        m->moe.top_k = 2;
    }
    m->moe.sigmoid_select = m->moe.shared_average = false;
    if (l->router == HFX_ROUTER_TOPK_THEN_SCORE && (st = parse_selection(c, m, err))) return st;
    if (l->router == HFX_ROUTER_SIGMOID) m->moe.sigmoid_select = true;
    if (l->combine_key && (st = parse_shared_combination(l, c, m, err))) return st;
    if (l->correction_key) {
        bool on;
        if ((st = hfx_cfg_bool_or(c, l->correction_key, true, &on, err))) return st;
        m->moe.uncorrected = !on;
    }
    return HFX_OK;
}

/* DBRX's moe_normalize_expert_weights: the p of the norm the top-k weights are divided by (null: none). */
static hfx_status parse_norm_p(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    static const char key[] = "ffn_config.moe_normalize_expert_weights";
    const json_t *v = json_object_get(c.obj, key);
    if (v && json_is_null(v)) {
        m->moe.norm_topk = false;
        return HFX_OK;
    }
    hfx_status st = hfx_cfg_num_or(c, key, 1.0, &m->moe.norm_p, err);
    if (!st && !(m->moe.norm_p > 0 && m->moe.norm_p <= 64))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: ffn_config.moe_normalize_expert_weights %g is not a p in (0, 64] (or null)",
                        c.where, m->moe.norm_p);
    return st;
}

hfx_status hfx_dec_parse_moe(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                            hfx_error *err) {
    hfx_status st;
    m->sparse = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->sparse);
    if (!m->sparse) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const hfx_moe_desc *l = d->moe;
    if (!l) return HFX_OK;
    m->moe.shared_intermediate = 0; /* (each shared form reads its own width below) */
    bool beside = false;
    if (l->layers == HFX_MOE_BESIDE_MLP && ((st = hfx_cfg_bool_or(c, "enable_moe_block", false, &beside, err)) || !beside))
        return st; /* (no experts: m->moe.experts stays 0) */
    bool own_width = l->layers != HFX_MOE_EVERY_LAYER, by_step = l->layers == HFX_MOE_BY_STEP;
    const char *experts_key =
        !l->experts_alt_key || hfx_cfg_has(c, l->experts_key) ? l->experts_key : l->experts_alt_key;
    if (l->shared == HFX_SHARED_LINEAR) { /* the shared MLP's width; experts optional (0: the shared MLP alone) */
        if ((st = hfx_cfg_int_in_or(c, "shared_intermediate_size", l->shared_default, l->shared_default ? 1 : 0, 1 << 24,
                                    &m->moe.shared_intermediate, err)) ||
            (st = hfx_cfg_int_in_or(c, experts_key, 8, 0, 4096, &m->moe.experts, err)))
            return st;
        if (m->moe.experts == 0) return HFX_OK;
    }
    if ((st = m->moe.experts ? HFX_OK : hfx_cfg_int_in(c, experts_key, 1, 4096, &m->moe.experts, err)) ||
        (st = parse_top_k(c, l->top_k_key ? l->top_k_key : "num_experts_per_tok", m, err)))
        return st;
    m->moe.moe_intermediate = m->intermediate;
    m->moe.norm_topk = l->topk != HFX_TOPK_NEVER;
    if (l->zero_key && (st = hfx_cfg_int_in_or(c, l->zero_key, 0, 0, 4096, &m->moe.zero, err))) return st;
    m->moe.norm_p = 1.0;
    if (l->topk == HFX_TOPK_P_NORM && (st = parse_norm_p(c, m, err))) return st;
    bool topk_default = l->topk == HFX_TOPK_CONFIG_TRUE;
    if (!own_width && l->topk != HFX_TOPK_RENORM && l->topk != HFX_TOPK_NEVER &&
        (st = hfx_cfg_bool_or(c, "norm_topk_prob", topk_default, &m->moe.norm_topk, err)))
        return st;
    int64_t step = 1;
    if (own_width &&
        ((st = hfx_cfg_int_in(c, l->width_key ? l->width_key : "moe_intermediate_size", 1, 1 << 24,
                              &m->moe.moe_intermediate, err)) ||
         (l->topk != HFX_TOPK_RENORM && l->topk != HFX_TOPK_P_NORM && l->topk != HFX_TOPK_NEVER &&
          (st = hfx_cfg_bool_or(c, "norm_topk_prob", topk_default, &m->moe.norm_topk, err))) ||
         (by_step && (st = hfx_cfg_int_in_or(c, "decoder_sparse_step", 1, 1, 4096, &step, err)))))
        return st;
    if ((l->shared == HFX_SHARED_GATED || l->shared == HFX_SHARED_SIZED) &&
        (st = hfx_cfg_int_in(c, "shared_expert_intermediate_size", 1, 1 << 24, &m->moe.shared_intermediate, err)))
        return st;
    if (l->experts == HFX_EXPERTS_UP_DOWN && hfx_cfg_has(c, "moe_latent_size"))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: moe_latent_size (experts in a projected latent space) is not "
                                                  "supported yet", c.where);
    if (l->shared == HFX_SHARED_UP_DOWN &&
        (st = hfx_cfg_int_in(c, "moe_shared_expert_intermediate_size", 1, 1 << 24, &m->moe.shared_intermediate, err)))
        return st;
    if (l->clamp_key && (st = hfx_cfg_num_or(c, l->clamp_key, l->defaults.limit, &m->moe.swiglu_limit, err))) return st;
    if (l->experts == HFX_EXPERTS_INTERLEAVED && /* softmax over the k largest logits = the renormalised top-k */
        ((st = hfx_cfg_num_or(c, "swiglu_alpha", 1.702, &m->moe.swiglu_alpha, err)) ||
         (st = hfx_cfg_num_or(c, "swiglu_limit", 7.0, &m->moe.swiglu_limit, err))))
        return st;
    for (int64_t i = 0; i < m->layers; i++) /* (beside, or a shortcut: dense MLPs) */
        m->sparse[i] = !beside && l->layers != HFX_MOE_SHORTCUT && (i + 1) % step == 0;
    m->moe.groups = m->moe.top_groups = 1;
    m->moe.routed_scale = 1.0;
    if (grouped_router(l) && (st = parse_deepseek_router(d, c, m, err))) return st;
    if (l->layers == HFX_MOE_BY_TYPE_LIST && (st = parse_mlp_layer_types(c, m, err))) return st;
    if (l->layers == HFX_MOE_BY_INDEX_RANGE && (st = parse_layer_range(c, m, err))) return st;
    if (l->layers == HFX_MOE_LIST_OR_STEP && (st = parse_moe_layers(c, m, err))) return st;
    if ((st = parse_counted_layers(l, c, m, err)) || (st = parse_router_options(l, c, m, err))) return st;
    m->moe.hashed = NULL;
    if (l->router == HFX_ROUTER_SCORED && (st = parse_scored(c, arena, m, err))) return st;
    const json_t *dense = json_object_get(c.obj, "mlp_only_layers");
    if (by_step && dense && !json_is_null(dense)) return mark_listed_layers(c, dense, "mlp_only_layers", false, m, err);
    return HFX_OK;
}

/* The experts' weights of one kind as [E, rows, cols], from the fused 3-D tensor when the
 * checkpoint has it, else stacked from the per-expert tensors (views either way). */
static hfx_value *expert_weights(layer_ctx *c, int64_t i, const char *block, const char *per_expert,
                                 int64_t rows, int64_t cols) {
    const hfx_decoder_cfg *m = c->m;
    char p[192];
    hfx_value **ws = hfx_arena_alloc(c->g->arena, (size_t)m->moe.experts * sizeof *ws);
    if (!ws) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_f32(c->g, 0.0f);
    }
    for (int64_t e = 0; e < m->moe.experts; e++) {
        char leaf[96];
        snprintf(leaf, sizeof leaf, "experts.%lld.%s.weight", (long long)e, per_expert);
        ws[e] = hfx_weight(c->w, 2, (int64_t[]){rows, cols}, "%s", hfx_dec_name(c, i, block, leaf, p, sizeof p));
    }
    return hfx_const_stack(c->g, (int)m->moe.experts, ws);
}

/* source [B,S,E] at each token's k picks (onehot [B,S,K,E], one-hot products: exact) → [B,S,K] */
static hfx_value *picked(layer_ctx *c, hfx_value *onehot, hfx_value *source) {
    int64_t axis = -1;
    hfx_value *w = hfx_reduce(c->g, HFX_OP_REDUCE_SUM, hfx_op2(c->g, HFX_OP_MUL, onehot, hfx_unsqueeze(c->g, source, 2)), 1,
                              &axis);
    return hfx_reshape(c->g, w, 3, (hfx_dim[]){c->batch, c->seq, onehot->dims[2]});
}

/* w [B,S,K] back over the E experts by the picks' onehot [B,S,K,E]: Σ_k onehot_k·w_k → [B,S,E], zero elsewhere */
static hfx_value *spread(layer_ctx *c, hfx_value *onehot, hfx_value *w, int64_t E) {
    int64_t k_axis = 2;
    hfx_value *dense = hfx_reduce(c->g, HFX_OP_REDUCE_SUM, hfx_op2(c->g, HFX_OP_MUL, onehot, hfx_unsqueeze(c->g, w, -1)), 1,
                                  &k_axis);
    return hfx_reshape(c->g, dense, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(E)});
}

/* DeepSeek's router, in f32: scores sigmoid(logits) (V3) or softmax(logits) (V2, Mistral 4); the experts
 * are chosen among the top_groups groups ranked by the sum of their two best scores + the correction
 * bias (V3; Mistral 4 without one) or their best score (V2), others masked; the chosen experts' scores
 * (V3, Mistral 4: as scored; V2: as masked) renormalised when norm_topk_prob (V3), times
 * routed_scaling_factor. One-hot comparisons against the expert index stand in for gathers along the
 * last axis. */
static void deepseek_route(layer_ctx *c, int64_t i, const char *block, hfx_value *h, bool gather, hfx_value **w_out,
                           hfx_value **idx_out,
                           hfx_value **dense_out) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_moe_router kind = c->d->moe->router;
    bool v3 = ranks_by_top2(c->d->moe);
    bool scored = kind == HFX_ROUTER_SCORED, hashed = scored && m->moe.hashed[i];
    bool sigmoid = kind == HFX_ROUTER_GROUPED_SIGMOID || kind == HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL ||
                   (scored && m->moe.score == HFX_SCORE_SIGMOID);
    bool corrected = corrected_router(c->d->moe) && !m->moe.uncorrected && !hashed;
    /* (the zero-compute experts are scored and picked as the others) */
    int64_t E = m->moe.experts + m->moe.zero, K = m->moe.top_k, G = m->moe.groups, per = E / G, axis = -1;
    char p[192];
    const char *router_name = c->d->moe->router_name ? c->d->moe->router_name : "gate.weight";
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, m->hidden}, "%s", hfx_dec_name(c, i, block, router_name, p, sizeof p));
    hfx_value *logits = hfx_cast(g, hfx_linear(g, h, router, NULL), HFX_DTYPE_F32); /* [B,S,E] */
    hfx_value *scores = sigmoid ? hfx_op1(g, HFX_OP_SIGMOID, logits)
                        : scored ? hfx_op1(g, HFX_OP_SQRT, hfx_softplus(g, logits))
                                 : hfx_softmax(g, logits, -1);
    hfx_value *choice = scores;
    if (corrected) {
        const char *bias = c->d->moe->correction_bias; /* as checkpoints name it, else as transformers' module does */
        if (!bias || !hfx_weight_exists(c->w, hfx_dec_name(c, i, block, bias, p, sizeof p))) bias = "gate.e_score_correction_bias";
        hfx_dec_name(c, i, block, bias, p, sizeof p);
        hfx_value *corr = hfx_weight_rank(c->w, p) == 2 /* ERNIE's [1, E] */
                              ? hfx_reshape(g, hfx_weight(c->w, 2, (int64_t[]){1, E}, "%s", p), 1, (hfx_dim[]){hfx_dim_const(E)})
                              : hfx_weight(c->w, 1, &E, "%s", p);
        choice = hfx_op2(g, HFX_OP_ADD, scores, hfx_cast(g, corr, HFX_DTYPE_F32));
    }
    hfx_dim bs[2] = {c->batch, c->seq};
    if (G > 1 || m->moe.top_groups < G) {
        hfx_dim grouped[4] = {bs[0], bs[1], hfx_dim_const(G), hfx_dim_const(per)};
        hfx_value *gs = hfx_reshape(g, choice, 4, grouped);             /* [B,S,G,per] */
        hfx_value *rank;                                                 /* [B,S,G,1] */
        if (v3) {
            hfx_value *best2, *unused;
            hfx_top_k(g, gs, 2, &best2, &unused);
            rank = hfx_reduce(g, HFX_OP_REDUCE_SUM, best2, 1, &axis);
        } else {
            rank = hfx_reduce(g, HFX_OP_REDUCE_MAX, gs, 1, &axis);
        }
        rank = hfx_reshape(g, rank, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(G)});
        hfx_value *kept_vals, *kept;                                     /* [B,S,top_groups] */
        hfx_top_k(g, rank, m->moe.top_groups, &kept_vals, &kept);
        hfx_value *group_ids = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, G), hfx_const_i64(g, 1), hfx_dim_const(G));
        hfx_value *hit = hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, kept, -1), group_ids); /* [B,S,tg,G] */
        int64_t tg_axis = 2;
        hfx_value *keep = hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_cast(g, hit, HFX_DTYPE_F32), 1, &tg_axis); /* [B,S,1,G] */
        keep = hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, keep, 4, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(G),
                                                                              hfx_dim_const(1)}),
                       hfx_const_f32(g, 0.0f));                          /* [B,S,G,1] */
        /* (V3's masked_fill -inf; V2's, Mistral 4's, A.X K2's 0) */
        hfx_value *fill = hfx_const_f32(g, corrected && kind != HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL ? -INFINITY : 0.0f);
        choice = hfx_reshape(g, hfx_where(g, keep, gs, fill), 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(E)});
    }
    if (hashed && !c->ids) { /* (failed: the rest of the graph stays well-formed) */
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: layer %lld routes by token id (hash_moe): it needs input_ids, not "
                                               "embeddings", c->d->architecture, (long long)i);
        hashed = false;
    }
    hfx_value *vals, *idx;
    if (hashed) /* each token id's experts, as the table says (hfx_weight_indices checked each < E) */
        idx = hfx_gather(g, hfx_weight_indices(c->w, E, 2, (int64_t[]){m->vocab, K},
                                               hfx_dec_name(c, i, block, "gate.tid2eid", p, sizeof p)), c->ids, 0);
    else
        hfx_top_k(g, choice, K, &vals, &idx);                            /* [B,S,K] */
    hfx_value *onehot = hfx_one_hot(g, idx, E, HFX_DTYPE_F32);           /* [B,S,K,E] */
    hfx_value *w = picked(c, onehot, v3 ? scores : choice);              /* [B,S,K] */
    if (m->moe.norm_topk)
        w = hfx_op2(g, HFX_OP_DIV, w, hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis),
                                              hfx_const_f32(g, c->d->moe->renorm_eps > 0 ? (float)c->d->moe->renorm_eps
                                                                                          : 1e-20f)));
    w = hfx_op2(g, HFX_OP_MUL, w, hfx_const_f32(g, (float)m->moe.routed_scale));
    if (gather) {
        *w_out = w, *idx_out = idx;
        return;
    }
    *dense_out = spread(c, onehot, w, E);
}

/* Gemma 4's router input: x normed without a weight, times router.scale [H] and 1/√hidden. */
static hfx_value *scaled_router_input(layer_ctx *c, int64_t i, const char *block, hfx_value *x) {
    const hfx_decoder_cfg *m = c->m;
    char p[192];
    hfx_value *scale = hfx_weight(c->w, 1, &m->hidden, "%s", hfx_dec_name(c, i, block, "router.scale", p, sizeof p));
    hfx_value *r = hfx_op2(c->g, HFX_OP_MUL, hfx_dec_rms_plain(c, x), scale);
    return hfx_op2(c->g, HFX_OP_MUL, r, hfx_const_scalar(c->g, r->dtype, pow((double)m->hidden, -0.5)));
}

/* What the chosen weights w [B,S,K] (or [B,S,E], zero elsewhere; all ≥ 0) are divided by: their sum, or their p-norm
 * (DBRX: torch.norm's, √ of the squares' sum for p 2) → [B,S,1]. */
static hfx_value *top_k_norm(layer_ctx *c, hfx_value *w) {
    hfx_graph *g = c->g;
    int64_t axis = -1;
    double p = c->m->moe.norm_p;
    if (p == 1.0) return hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis);
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_POW, w, hfx_const_f32(g, (float)p)), 1, &axis);
    if (p == 2.0) return hfx_op1(g, HFX_OP_SQRT, sum);
    return hfx_op2(g, HFX_OP_POW, sum, hfx_const_f32(g, (float)(1.0 / p)));
}

/* HFX_ROUTER_LOGITS_CORRECTED over logits [B,S,E]: gathered, each token's k weights and experts [B,S,K]; else a dense
 * [B,S,E], zero outside the k chosen. */
static void corrected_logits_route(layer_ctx *c, int64_t i, const char *block, hfx_value *logits, hfx_value **w,
                                   hfx_value **idx, hfx_value **top) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->moe.experts, K = m->moe.top_k;
    char p[192];
    logits = hfx_cast(g, logits, HFX_DTYPE_F32);
    hfx_value *bias = hfx_weight(c->w, 1, &E, "%s", hfx_dec_name(c, i, block, "gate.e_score_correction_bias", p, sizeof p));
    hfx_value *vals, *k_idx;
    hfx_top_k(g, hfx_op2(g, HFX_OP_ADD, logits, hfx_cast(g, bias, HFX_DTYPE_F32)), K, &vals, &k_idx); /* [B,S,K] */
    hfx_value *onehot = hfx_one_hot(g, k_idx, E, HFX_DTYPE_F32);                                      /* [B,S,K,E] */
    hfx_value *wk = picked(c, onehot, hfx_op1(g, HFX_OP_SIGMOID, logits));                          /* [B,S,K] */
    if (m->moe.norm_topk) wk = hfx_op2(g, HFX_OP_DIV, wk, top_k_norm(c, wk));
    if (c->o->moe_gather) *w = wk, *idx = k_idx;
    else *top = spread(c, onehot, wk, E);
}

/* A softmax router over x [B,S,H] (f32 probabilities): gathered, each token's k weights and experts [B,S,K];
 * else a dense [B,S,E], zero outside the top k. Renormalised as the lineage says; Gemma 4's weights times their
 * experts' per_expert_scale. */
static void softmax_route(layer_ctx *c, int64_t i, const char *block, const char *router_name, hfx_value *x,
                          hfx_value **w, hfx_value **idx, hfx_value **top) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->moe.experts, H = m->hidden, K = m->moe.top_k;
    bool scaled = c->d->moe->router == HFX_ROUTER_SOFTMAX_SCALED;
    char p[192];
    if (scaled) x = scaled_router_input(c, i, block, x);
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", hfx_dec_name(c, i, block, router_name, p, sizeof p));
    hfx_value *logits = hfx_linear(g, x, router, NULL);
    if (c->d->moe->router == HFX_ROUTER_LOGITS_CORRECTED) {
        corrected_logits_route(c, i, block, logits, w, idx, top);
        return;
    }
    /* (sigmoid selection: the k largest sigmoids are the k largest logits', scored in the weights' dtype) */
    hfx_value *probs = m->moe.sigmoid_select ? hfx_op1(g, HFX_OP_SIGMOID, logits)
                                             : hfx_softmax(g, hfx_cast(g, logits, HFX_DTYPE_F32), -1);
    hfx_value *per_expert = scaled ? hfx_cast(g, hfx_weight(c->w, 1, &E, "%s", hfx_dec_name(c, i, block, "router.per_expert_scale",
                                                                                          p, sizeof p)), HFX_DTYPE_F32)
                                   : NULL; /* [E] */
    if (c->o->moe_gather) {
        hfx_top_k(g, probs, K, w, idx);
        if (m->moe.norm_topk) *w = hfx_op2(g, HFX_OP_DIV, *w, top_k_norm(c, *w));
        if (per_expert) *w = hfx_op2(g, HFX_OP_MUL, *w, hfx_gather(g, per_expert, *idx, 0));
    } else {
        *top = hfx_top_k_mask(g, probs, K);
        if (m->moe.norm_topk) *top = hfx_op2(g, HFX_OP_DIV, *top, top_k_norm(c, *top));
        if (per_expert) *top = hfx_op2(g, HFX_OP_MUL, *top, per_expert);
    }
}

/* One step of sparsemixer over s [B,S,E] (f32): the best of `choice` (s, or s with the first pick at −inf), weighed
 * by the softmax of `choice` over the logits whose gap to that best, relative to max(|s|, best), is within 2ε.
 * *w, *idx [B,S,1]; returns the pick's one-hot [B,S,E]. */
static hfx_value *sparsemixer_pick(layer_ctx *c, hfx_value *s, hfx_value *choice, hfx_value **w, hfx_value **idx) {
    hfx_graph *g = c->g;
    int64_t E = c->m->moe.experts, axis = -1;
    hfx_value *best;
    hfx_top_k(g, choice, 1, &best, idx);                                                        /* [B,S,1] */
    hfx_value *abs = hfx_op2(g, HFX_OP_MAX, s, hfx_op1(g, HFX_OP_NEG, s));
    hfx_value *factor = hfx_op2(g, HFX_OP_MAX, abs, best);
    hfx_value *far = hfx_op2(g, HFX_OP_GREATER, hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_SUB, best, s), factor),
                             hfx_const_f32(g, (float)(2 * c->m->moe.jitter)));
    hfx_value *gates = hfx_softmax(g, hfx_where(g, far, hfx_const_f32(g, -INFINITY), choice), -1);
    hfx_value *onehot = hfx_one_hot(g, hfx_reshape(g, *idx, 2, (*idx)->dims), E, HFX_DTYPE_F32); /* [B,S,E] */
    *w = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, gates, onehot), 1, &axis);  /* [B,S,1] */
    return onehot;
}

/* Phi-3.5-MoE's sparsemixer router over x [B,S,H]: gathered, the two picks' weights and experts [B,S,2]; else a dense
 * [B,S,E] of those weights, zero elsewhere. */
static void sparsemixer_route(layer_ctx *c, int64_t i, const char *block, const char *router_name, hfx_value *x,
                              hfx_value **w, hfx_value **idx, hfx_value **top) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    char p[192];
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){m->moe.experts, m->hidden}, "%s",
                                   hfx_dec_name(c, i, block, router_name, p, sizeof p));
    hfx_value *s = hfx_cast(g, hfx_linear(g, x, router, NULL), HFX_DTYPE_F32); /* [B,S,E] */
    hfx_value *w1, *i1, *w2, *i2;
    hfx_value *first = sparsemixer_pick(c, s, s, &w1, &i1);
    hfx_value *rest = hfx_where(g, hfx_op2(g, HFX_OP_GREATER, first, hfx_const_f32(g, 0.0f)), hfx_const_f32(g, -INFINITY), s);
    hfx_value *second = sparsemixer_pick(c, s, rest, &w2, &i2);
    if (c->o->moe_gather) {
        hfx_value *ws[2] = {w1, w2}, *is[2] = {i1, i2};
        *w = hfx_concat(g, 2, ws, -1), *idx = hfx_concat(g, 2, is, -1);
    } else {
        *top = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, first, w1), hfx_op2(g, HFX_OP_MUL, second, w2));
    }
}

/* The experts' weights [E, I, H] (gate; NULL: ungated), [E, I, H] (up) and [E, H, I] (down), views of the checkpoint's
 * tensors in whichever layout it has them (moe.h's hfx_moe_experts). */
static void expert_tensors(layer_ctx *c, int64_t i, const char *block, bool fused, bool hub_granite, hfx_value **gate,
                           hfx_value **up, hfx_value **down) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_moe_experts layout = c->d->moe->experts;
    bool mixtral = layout == HFX_EXPERTS_W123, ungated = layout == HFX_EXPERTS_UP_DOWN;
    int64_t E = m->moe.experts, I = m->moe.moe_intermediate, H = m->hidden;
    char p[192];
    *gate = NULL;
    if (ungated) {
        *up = fused ? hfx_weight(c->w, 3, (int64_t[]){E, I, H}, "%s", hfx_dec_name(c, i, block, "experts.up_proj", p, sizeof p))
                   : expert_weights(c, i, block, "up_proj", I, H);
        *down = fused ? hfx_weight(c->w, 3, (int64_t[]){E, H, I}, "%s",
                                  hfx_dec_name(c, i, block, "experts.down_proj", p, sizeof p))
                     : expert_weights(c, i, block, "down_proj", H, I);
    } else if (fused) {
        hfx_dec_name(c, i, block, hub_granite ? "input_linear.weight" : "experts.gate_up_proj", p, sizeof p);
        int64_t rows = m->moe.zero && hfx_weight_dim(c->w, p, 0) == E + m->moe.zero ? E + m->moe.zero : E; /* (LongCat
                                                                     sizes it for the zero-compute experts too) */
        static const int64_t swap_last[3] = {0, 2, 1};
        bool hub = layout == HFX_EXPERTS_MLP_EITHER && hfx_weight_dim(c->w, p, 1) != 2 * I; /* [E, H, 2I] */
        hfx_value *gu = hub ? hfx_const_permute(g, hfx_weight(c->w, 3, (int64_t[]){E, H, 2 * I}, "%s", p), swap_last)
                            : hfx_const_slice(g, hfx_weight(c->w, 3, (int64_t[]){rows, 2 * I, H}, "%s", p), 0, 0, E);
        *gate = hfx_const_slice(g, gu, 1, 0, I);
        *up = hfx_const_slice(g, gu, 1, I, I);
        hfx_dec_name(c, i, block, hub_granite ? "output_linear.weight" : "experts.down_proj", p, sizeof p);
        hub = layout == HFX_EXPERTS_MLP_EITHER && hfx_weight_dim(c->w, p, 1) != H;       /* [E, I, H] */
        *down = hub ? hfx_const_permute(g, hfx_weight(c->w, 3, (int64_t[]){E, I, H}, "%s", p), swap_last)
                    : hfx_weight(c->w, 3, (int64_t[]){E, H, I}, "%s", p);
    } else if (layout == HFX_EXPERTS_FLAT) { /* [E·I, H] each, the experts one after the other */
        static const int64_t swap_last[3] = {0, 2, 1};
        hfx_value *flat[3];
        static const char *const leaf[3] = {"experts.mlp.w1", "experts.mlp.v1", "experts.mlp.w2"};
        for (int j = 0; j < 3; j++)
            flat[j] = hfx_const_split_rows(g, hfx_weight(c->w, 2, (int64_t[]){E * I, H}, "%s",
                                                         hfx_dec_name(c, i, block, leaf[j], p, sizeof p)), E);
        *gate = flat[0], *up = flat[1], *down = hfx_const_permute(g, flat[2], swap_last);
    } else {
        *gate = expert_weights(c, i, block, mixtral ? "w1" : "gate_proj", I, H);
        *up = expert_weights(c, i, block, mixtral ? "w3" : "up_proj", I, H);
        *down = expert_weights(c, i, block, mixtral ? "w2" : "down_proj", H, I);
    }
}

/* The zero-compute experts' part of the routing (their indices E and up): the sum of their weights [B,S,1], taken out
 * of *w and *idx (gathered: weight 0, index 0) or *top (dense: its first E columns). */
static hfx_value *zero_experts(layer_ctx *c, hfx_value **w, hfx_value **idx, hfx_value **top) {
    hfx_graph *g = c->g;
    int64_t E = c->m->moe.experts, axis = -1;
    if (*top) {
        hfx_value *ident = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_slice(g, *top, 2, E, INT64_MAX), 1, &axis);
        *top = hfx_slice(g, *top, 2, 0, E);
        return ident;
    }
    hfx_value *routed = hfx_op2(g, HFX_OP_LESS, *idx, hfx_const_i64(g, E)); /* [B,S,K] */
    hfx_value *zero = hfx_const_scalar(g, (*w)->dtype, 0.0);
    hfx_value *ident = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_where(g, routed, zero, *w), 1, &axis);
    *w = hfx_where(g, routed, *w, zero);
    *idx = hfx_where(g, routed, *idx, hfx_const_i64(g, 0));
    return ident;
}

/* *gate clamped to ≤ swiglu_limit and *up to ±swiglu_limit (GPT-OSS's, and the lineages with a clamp_key) */
static void clamp_gate_up(layer_ctx *c, hfx_value **gate, hfx_value **up) {
    hfx_graph *g = c->g;
    double limit = c->m->moe.swiglu_limit;
    *gate = hfx_op2(g, HFX_OP_MIN, *gate, hfx_const_scalar(g, (*gate)->dtype, limit));
    *up = hfx_op2(g, HFX_OP_MAX, hfx_op2(g, HFX_OP_MIN, *up, hfx_const_scalar(g, (*up)->dtype, limit)),
                  hfx_const_scalar(g, (*up)->dtype, -limit));
}

/* act(gate)·up, gate and up clamped first where the lineage clamps them (clamp_key) */
static hfx_value *gated(layer_ctx *c, hfx_value *gate, hfx_value *up) {
    if (c->d->moe->clamp_key) clamp_gate_up(c, &gate, &up);
    return hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, c->m->act, gate), up);
}

/* Each token's k experts gathered by index: [B,S,K,I,H] @ [B,S,1,H,1] → [B,S,K,I,1], weighed by w [B,S,K]. */
static hfx_value *gathered_experts(layer_ctx *c, hfx_value *h, hfx_value *w, hfx_value *idx, hfx_value *gate,
                                   hfx_value *up, hfx_value *down) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden, k_axis = 2;
    w = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, w, h->dtype), -1), -1); /* [B,S,K,1,1] */
    hfx_value *x5 = hfx_unsqueeze(g, hfx_unsqueeze(g, h, 2), -1);             /* [B,S,1,H,1] */
    hfx_value *u5 = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, up, idx, 0), x5);
    hfx_value *a5 = gate ? gated(c, hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, gate, idx, 0), x5), u5)
                         : hfx_activate(g, m->act, u5);
    hfx_value *y5 = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, down, idx, 0), a5); /* [B,S,K,H,1] */
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y5, w), 1, &k_axis);
    return hfx_reshape(g, sum, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H)});
}

/* Every expert at once: [1,B,S,H] @ [E,1,H,I] → [E,B,S,I], weighted by the dense top-k mask top [B,S,E]. */
static hfx_value *all_experts(layer_ctx *c, hfx_value *h, hfx_value *top, hfx_value *gate, hfx_value *up,
                              hfx_value *down) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden;
    top = hfx_cast(g, top, h->dtype);
    static const int64_t swap_last[3] = {0, 2, 1};
    hfx_value *x4 = hfx_unsqueeze(g, h, 0);
    hfx_value *u4 = hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, hfx_const_permute(g, up, swap_last), 1));
    hfx_value *a4 = gate ? gated(c, hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, hfx_const_permute(g, gate, swap_last), 1)),
                                 u4)
                         : hfx_activate(g, m->act, u4);
    hfx_value *y4 = hfx_op2(g, HFX_OP_MATMUL, a4, hfx_unsqueeze(g, hfx_const_permute(g, down, swap_last), 1)); /* [E,B,S,H] */
    hfx_value *w4 = hfx_unsqueeze(g, hfx_transpose(g, top, 3, (int64_t[]){2, 0, 1}), -1);       /* [E,B,S,1] */
    int64_t axis0 = 0;
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y4, w4), 1, &axis0); /* [1,B,S,H] */
    return hfx_reshape(g, sum, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H)});
}

/* Mixture of experts without data-dependent shapes: the router's top-k weights as a dense
 * [B,S,E] (zero outside the top k), every expert computed as one batched MatMul per
 * projection, and the outputs summed with those weights. Equal to transformers' gather of the
 * chosen experts, since the others are weighted by an exact zero. */
static hfx_value *routed_experts(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *x_router) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_moe_experts layout = c->d->moe->experts;
    bool granite = layout == HFX_EXPERTS_LINEAR;
    char p[192];
    /* transformers 5's own layout: mlp.gate + fused mlp.experts.{gate_up,down}_proj; saved
     * checkpoints: per-expert tensors (Mixtral's under block_sparse_moe, as w1/w3/w2), or
     * GraniteMoE's fused input_linear / output_linear with router.layer; Gemma 4's on the layer */
    const char *block = c->d->moe->block ? c->d->moe->block : c->n.mlp;
    bool ungated = layout == HFX_EXPERTS_UP_DOWN;
    bool fused = hfx_weight_exists(c->w, hfx_dec_name(c, i, c->n.mlp, ungated ? "experts.up_proj" : "experts.gate_up_proj",
                                                      p, sizeof p));
    if (fused) block = c->n.mlp;
    if (layout == HFX_EXPERTS_ON_LAYER) block = NULL, fused = true;
    if (granite) fused = true; /* Granite's experts come fused, under either name */
    bool hub_granite = granite && hfx_weight_exists(c->w, hfx_dec_name(c, i, block, "input_linear.weight", p, sizeof p));
    /* the routing: gathered, each token's k weights and experts [B,S,K]; else a dense [B,S,E] */
    hfx_value *w = NULL, *idx = NULL, *top = NULL;
    if (grouped_router(c->d->moe))
        deepseek_route(c, i, block, x_router, c->o->moe_gather, &w, &idx, &top);
    else if (c->d->moe->router == HFX_ROUTER_SPARSEMIXER)
        sparsemixer_route(c, i, block, c->d->moe->router_name, x_router, &w, &idx, &top);
    else
        softmax_route(c, i, block, granite ? (hub_granite ? "router.layer.weight" : "router.weight")
                                   : c->d->moe->router_name ? c->d->moe->router_name : "gate.weight",
                      x_router, &w, &idx, &top);

    hfx_value *gate, *up, *down; /* [E, I, H] (NULL: ungated), [E, I, H], [E, H, I] */
    expert_tensors(c, i, block, fused, hub_granite, &gate, &up, &down);
    for (int64_t e = m->moe.experts; !fused && e < m->moe.experts + m->moe.zero; e++) { /* (LongCat's checkpoints store the
                                                                            zero-compute experts' unused gate and up) */
        char leaf[96];
        for (int j = 0; j < 2; j++) {
            snprintf(leaf, sizeof leaf, "experts.%lld.%s.weight", (long long)e, j ? "up_proj" : "gate_proj");
            hfx_weight_ignore(c->w, hfx_dec_name(c, i, block, leaf, p, sizeof p));
        }
    }
    hfx_value *identity = m->moe.zero ? zero_experts(c, &w, &idx, &top) : NULL; /* [B,S,1]: their weights' sum */
    hfx_value *y = c->o->moe_gather ? gathered_experts(c, h, w, idx, gate, up, down) : all_experts(c, h, top, gate, up, down);
    return identity ? hfx_op2(g, HFX_OP_ADD, y, hfx_op2(g, HFX_OP_MUL, h, hfx_cast(g, identity, h->dtype))) : y;
}

/* GPT-OSS's gate on [.., 2I] with gate and up interleaved: (clamp(up, ±limit) + 1)·g·σ(α·g),
 * g = min(gate, limit) → [.., I]. `dims` is the input's shape with I last. */
static hfx_value *clamped_swiglu(layer_ctx *c, hfx_value *gu, int rank, const hfx_dim *dims) {
    hfx_graph *g = c->g;
    const hfx_decoder_cfg *m = c->m;
    hfx_dim pairs[HFX_MAX_RANK + 1];
    for (int a = 0; a < rank; a++) pairs[a] = dims[a];
    pairs[rank] = hfx_dim_const(2);
    hfx_value *p = hfx_reshape(g, gu, rank + 1, pairs); /* [.., I, 2]: (gate, up) */
    hfx_value *gate = hfx_gather(g, p, hfx_const_i64(g, 0), rank);
    hfx_value *up = hfx_gather(g, p, hfx_const_i64(g, 1), rank);
    hfx_dtype dt = gu->dtype;
    clamp_gate_up(c, &gate, &up);
    hfx_value *glu = hfx_op2(g, HFX_OP_MUL, gate,
                             hfx_op1(g, HFX_OP_SIGMOID, hfx_op2(g, HFX_OP_MUL, gate, hfx_const_scalar(g, dt, m->moe.swiglu_alpha))));
    return hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, up, hfx_const_scalar(g, dt, 1.0)), glu);
}

/* GPT-OSS's experts: the router's logits (with bias), softmax over the k largest, and every
 * expert (or, gathered, each token's k) as x·W + b with the clamped SwiGLU between. */
static hfx_value *gpt_oss_experts(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->moe.experts, I = m->moe.moe_intermediate, H = m->hidden, K = m->moe.top_k, axis = -1;
    char p[192];
#define P(name) hfx_dec_name(c, i, "mlp", name, p, sizeof p)
    hfx_value *rw = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("router.weight"));
    hfx_value *rb = hfx_weight(c->w, 1, &E, "%s", P("router.bias"));
    hfx_value *probs = hfx_softmax(g, hfx_cast(g, hfx_linear(g, h, rw, rb), HFX_DTYPE_F32), -1);
    hfx_value *gu = hfx_weight(c->w, 3, (int64_t[]){E, H, 2 * I}, "%s", P("experts.gate_up_proj"));
    hfx_value *gub = hfx_weight(c->w, 2, (int64_t[]){E, 2 * I}, "%s", P("experts.gate_up_proj_bias"));
    hfx_value *down = hfx_weight(c->w, 3, (int64_t[]){E, I, H}, "%s", P("experts.down_proj"));
    hfx_value *db = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("experts.down_proj_bias"));
#undef P
    static const int64_t swap_last[3] = {0, 2, 1};
    hfx_dim bs[2] = {c->batch, c->seq};
    if (c->o->moe_gather) { /* each token's k experts: [B,S,K,2I,H] @ [B,S,1,H,1] */
        hfx_value *w, *idx;
        hfx_top_k(g, probs, K, &w, &idx);
        w = hfx_op2(g, HFX_OP_DIV, w, hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis));
        w = hfx_unsqueeze(g, hfx_cast(g, w, h->dtype), -1); /* [B,S,K,1] */
        hfx_value *x5 = hfx_unsqueeze(g, hfx_unsqueeze(g, h, 2), -1);
        hfx_dim bsk2i[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(2 * I)};
        hfx_value *a = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, gu, swap_last), idx, 0), x5);
        a = hfx_op2(g, HFX_OP_ADD, hfx_reshape(g, a, 4, bsk2i), hfx_gather(g, gub, idx, 0));
        hfx_dim bski[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(I)};
        a = hfx_unsqueeze(g, clamped_swiglu(c, a, 4, bski), -1);                        /* [B,S,K,I,1] */
        hfx_value *y = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, down, swap_last), idx, 0), a);
        hfx_dim bskh[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(H)};
        y = hfx_op2(g, HFX_OP_ADD, hfx_reshape(g, y, 4, bskh), hfx_gather(g, db, idx, 0)); /* [B,S,K,H] */
        int64_t k_axis = 2;
        hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y, w), 1, &k_axis);
        return hfx_reshape(g, sum, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(H)});
    }
    /* every expert: [1,B,S,H] @ [E,1,H,2I] + b → [E,B,S,2I], weighted by the dense top-k mask */
    hfx_value *top = hfx_top_k_mask(g, probs, K);
    top = hfx_cast(g, hfx_op2(g, HFX_OP_DIV, top, hfx_reduce(g, HFX_OP_REDUCE_SUM, top, 1, &axis)), h->dtype);
    hfx_value *x4 = hfx_unsqueeze(g, h, 0);
    hfx_value *a = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, gu, 1)),
                           hfx_unsqueeze(g, hfx_unsqueeze(g, gub, 1), 1));
    hfx_dim ebsi[4] = {hfx_dim_const(E), bs[0], bs[1], hfx_dim_const(I)};
    a = clamped_swiglu(c, a, 4, ebsi);
    hfx_value *y = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MATMUL, a, hfx_unsqueeze(g, down, 1)),
                           hfx_unsqueeze(g, hfx_unsqueeze(g, db, 1), 1));                 /* [E,B,S,H] */
    hfx_value *w4 = hfx_unsqueeze(g, hfx_transpose(g, top, 3, (int64_t[]){2, 0, 1}), -1); /* [E,B,S,1] */
    int64_t axis0 = 0;
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y, w4), 1, &axis0);
    return hfx_reshape(g, sum, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(H)});
}

/* Llama 4's experts for every token at once: each expert's input h·s_e [E,B,S,H], s_e the sigmoid of its logit
 * among the token's k largest, else 0 (an unchosen expert sees 0 and, unbiased, gives 0). */
static hfx_value *llama4_all_experts(layer_ctx *c, hfx_value *h, hfx_value *logits, hfx_value *gu, hfx_value *down) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t I = m->moe.moe_intermediate, axis = -1, axis0 = 0;
    /* which logits are among the k largest: a top-k mask over them shifted to ≥ 1 (a kept 0 would be lost) */
    hfx_value *low = hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_op1(g, HFX_OP_NEG, logits), 1, &axis);
    hfx_value *shifted = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_ADD, logits, low), hfx_const_scalar(g, logits->dtype, 1.0));
    hfx_value *chosen = hfx_op2(g, HFX_OP_GREATER, hfx_top_k_mask(g, shifted, m->moe.top_k),
                                hfx_const_scalar(g, logits->dtype, 0.0));
    hfx_value *sig = hfx_cast(g, hfx_op1(g, HFX_OP_SIGMOID, hfx_cast(g, logits, HFX_DTYPE_F32)), h->dtype);
    hfx_value *s = hfx_where(g, chosen, sig, hfx_const_scalar(g, h->dtype, 0.0));          /* [B,S,E] */
    hfx_value *x = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, h, 0),
                           hfx_unsqueeze(g, hfx_transpose(g, s, 3, (int64_t[]){2, 0, 1}), -1)); /* [E,B,S,H] */
    hfx_value *a = hfx_op2(g, HFX_OP_MATMUL, x, hfx_unsqueeze(g, gu, 1));                  /* [E,B,S,2I] */
    hfx_value *act = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, a, -1, I, 2 * I), hfx_activate(g, m->act, hfx_slice(g, a, -1, 0, I)));
    hfx_value *y = hfx_op2(g, HFX_OP_MATMUL, act, hfx_unsqueeze(g, down, 1));              /* [E,B,S,H] */
    return hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, y, 1, &axis0), 3,
                       (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->hidden)});
}

/* Llama 4's experts: the sigmoid of each token's k largest router logits weighs the chosen experts' input
 * (not their output); experts.gate_up_proj [E, H, 2I] (gate, then up) and down_proj [E, I, H]. Decode graphs
 * gather each token's k experts (moe_gather), the others run every expert. */
static hfx_value *llama4_experts(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->moe.experts, I = m->moe.moe_intermediate, H = m->hidden, K = m->moe.top_k;
    static const int64_t swap_last[3] = {0, 2, 1};
    char p[192];
#define P(name) hfx_dec_name(c, i, c->n.mlp, name, p, sizeof p)
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("router.weight"));
    hfx_value *gu = hfx_weight(c->w, 3, (int64_t[]){E, H, 2 * I}, "%s", P("experts.gate_up_proj"));
    hfx_value *down = hfx_weight(c->w, 3, (int64_t[]){E, I, H}, "%s", P("experts.down_proj"));
#undef P
    hfx_value *logits = hfx_linear(g, h, router, NULL); /* [B,S,E] */
    if (!c->o->moe_gather) return llama4_all_experts(c, h, logits, gu, down);
    hfx_value *top, *idx; /* [B,S,K] */
    hfx_top_k(g, logits, K, &top, &idx);
    hfx_value *score = hfx_cast(g, hfx_op1(g, HFX_OP_SIGMOID, hfx_cast(g, top, HFX_DTYPE_F32)), h->dtype);
    hfx_value *x = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, h, 2), hfx_unsqueeze(g, score, -1)); /* [B,S,K,H] */
    hfx_dim bs[2] = {c->batch, c->seq};
    hfx_value *a = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, gu, swap_last), idx, 0),
                           hfx_unsqueeze(g, x, -1));                                      /* [B,S,K,2I,1] */
    a = hfx_reshape(g, a, 4, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(2 * I)});
    hfx_value *act = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, a, -1, I, 2 * I),
                             hfx_activate(g, m->act, hfx_slice(g, a, -1, 0, I)));         /* [B,S,K,I] */
    hfx_value *y = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, down, swap_last), idx, 0),
                           hfx_unsqueeze(g, act, -1));                                    /* [B,S,K,H,1] */
    y = hfx_reshape(g, y, 4, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(H)});
    int64_t k_axis = 2;
    return hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, y, 1, &k_axis), 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(H)});
}

/* A gated MLP beside the experts: <mlp>.<name>.{gate,up,down}_proj of width S, its gate and up clamped as the experts'
 * where the lineage says (HFX_SHARED_CLAMPED). */
static hfx_value *shared_mlp(layer_ctx *c, int64_t i, hfx_value *h, const char *name, int64_t S, bool bias) {
    const hfx_decoder_cfg *m = c->m;
    int64_t H = m->hidden;
    char leaf[64], p[192];
#define P(proj) (snprintf(leaf, sizeof leaf, "%s.%s", name, proj), hfx_dec_name(c, i, c->n.mlp, leaf, p, sizeof p))
    hfx_value *gate = hfx_dec_proj(c, h, H, S, bias, P("gate_proj"));
    hfx_value *up = hfx_dec_proj(c, h, H, S, bias, P("up_proj"));
    if (c->d->moe->shared == HFX_SHARED_CLAMPED) clamp_gate_up(c, &gate, &up);
    hfx_value *a = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
    return hfx_dec_proj(c, a, S, H, bias, P("down_proj"));
#undef P
}

/* The experts, plus what runs beside them (moe.h's hfx_moe_shared): shared experts of their own width,
 * HunYuan's MLP as wide as a dense one, Llama 4's of the experts' width, or Qwen2-MoE's scaled by
 * sigmoid(shared_expert_gate(h)), in the activations' dtype. */
hfx_value *hfx_dec_moe(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_moe_desc *l = c->d->moe;
    const hfx_decoder_cfg *m = c->m;
    if (l->experts == HFX_EXPERTS_INTERLEAVED) return gpt_oss_experts(c, i, h);
    hfx_value *y = l->experts == HFX_EXPERTS_INPUT_SCALED ? llama4_experts(c, i, h) : routed_experts(c, i, h, h);
    hfx_value *shared = NULL;
    switch (l->shared) {
    case HFX_SHARED_PLAIN:
        if (m->moe.shared_intermediate)
            shared = shared_mlp(c, i, h, l->shared_name ? l->shared_name : "shared_experts", m->moe.shared_intermediate,
                                m->bias.mlp);
        break;
    case HFX_SHARED_MLP_FULL: shared = shared_mlp(c, i, h, "shared_mlp", m->intermediate, m->bias.mlp); break;
    case HFX_SHARED_EXPERT: shared = shared_mlp(c, i, h, "shared_expert", m->moe.moe_intermediate, false); break;
    case HFX_SHARED_CLAMPED: shared = shared_mlp(c, i, h, "shared_experts", m->moe.moe_intermediate, m->bias.mlp); break;
    case HFX_SHARED_SIZED:
        shared = shared_mlp(c, i, h, l->shared_name ? l->shared_name : "shared_expert", m->moe.shared_intermediate, false);
        break;
    case HFX_SHARED_GATED: {
        char p[192];
        hfx_value *gate = hfx_dec_proj(c, h, m->hidden, 1, false, hfx_dec_name(c, i, c->n.mlp, "shared_expert_gate", p, sizeof p));
        shared = hfx_op2(c->g, HFX_OP_MUL, hfx_op1(c->g, HFX_OP_SIGMOID, gate),
                         shared_mlp(c, i, h, "shared_expert", m->moe.shared_intermediate, false));
        break;
    }
    case HFX_SHARED_UP_DOWN: {
        char leaf[64], p[192];
        int64_t S = m->moe.shared_intermediate;
#define P(proj) (snprintf(leaf, sizeof leaf, "shared_experts.%s", proj), hfx_dec_name(c, i, c->n.mlp, leaf, p, sizeof p))
        hfx_value *a = hfx_activate(c->g, m->act, hfx_dec_proj(c, h, m->hidden, S, m->bias.mlp, P("up_proj")));
        shared = hfx_dec_proj(c, a, S, m->hidden, m->bias.mlp, P("down_proj"));
#undef P
        break;
    }
    case HFX_SHARED_NONE: case HFX_SHARED_LINEAR: break; /* (LINEAR: ffn.c's, beside the experts) */
    }
    if (l->out_bias) {
        char p[192];
        y = hfx_op2(c->g, HFX_OP_ADD, y, hfx_weight(c->w, 1, &m->hidden, "%s", hfx_dec_name(c, i, c->n.mlp, l->out_bias, p,
                                                                                          sizeof p)));
    }
    if (shared && m->moe.shared_average)
        return hfx_op2(c->g, HFX_OP_DIV, hfx_op2(c->g, HFX_OP_ADD, y, shared), hfx_const_scalar(c->g, y->dtype, 2.0));
    y = shared ? hfx_op2(c->g, HFX_OP_ADD, y, shared) : y;
    char p[192];
    return l->out_norm ? hfx_dec_norm(c, y, m->hidden, hfx_dec_name(c, i, c->n.mlp, l->out_norm, p, sizeof p)) : y;
}

/* Gemma 4's experts beside the dense MLP, from the layer's stream x [B,S,H] before the MLP's norm:
 * post_feedforward_layernorm_1(mlp) + post_feedforward_layernorm_2(experts(pre_feedforward_layernorm_2(x))),
 * routed from x itself. */
hfx_value *hfx_dec_moe_beside(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *mlp) {
    const hfx_decoder_cfg *m = c->m;
    char p[192];
#define NORM(v, leaf) hfx_dec_norm(c, v, m->hidden, hfx_dec_name(c, i, NULL, leaf, p, sizeof p))
    hfx_value *dense = NORM(mlp, "post_feedforward_layernorm_1");
    hfx_value *experts = routed_experts(c, i, NORM(x, "pre_feedforward_layernorm_2"), x);
    return hfx_op2(c->g, HFX_OP_ADD, dense, NORM(experts, "post_feedforward_layernorm_2"));
#undef NORM
}
