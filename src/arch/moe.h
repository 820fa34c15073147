/* A mixture-of-experts lineage as data: how its router scores and picks experts, how its experts'
 * tensors are laid out, what runs beside them, and which layers are sparse. moe.c holds one
 * descriptor per lineage and builds every combination from them; a decoder descriptor points at
 * one (NULL: dense MLPs only). */
#ifndef HFX_ARCH_MOE_H
#define HFX_ARCH_MOE_H

typedef enum {
    HFX_ROUTER_SOFTMAX,        /* softmax over the router's logits, top-k (Mixtral, Qwen, OLMoE, Granite) */
    HFX_ROUTER_SOFTMAX_BIASED, /* mlp.router with a bias, softmax over the k largest logits (GPT-OSS) */
    HFX_ROUTER_GROUPED_SOFTMAX, /* softmax scores, topk_method greedy or group_limited_greedy (groups
                                   ranked by their best score), never renormalised (DeepSeek V2) */
    HFX_ROUTER_GROUPED_SIGMOID, /* sigmoid scores + e_score_correction_bias, groups ranked by their top-2
                                   sum (DeepSeek V3) */
    HFX_ROUTER_GROUPED_SIGMOID_ZERO_FILL, /* ... the groups not kept scoring 0 for the choice, not −∞ (A.X K2) */
    HFX_ROUTER_GROUPED_SOFTMAX_TOP2, /* softmax scores, groups ranked by their top-2 sum (the others' scores 0 for the
                                        choice), the chosen scores renormalised as norm_topk_prob says, ×
                                        routed_scaling_factor (Mistral 4) */
    HFX_ROUTER_SOFTMAX_CORRECTED, /* softmax scores + e_score_correction_bias ([E] or [1, E]) for the choice, the
                                     chosen scores renormalised (ERNIE 4.5 MoE) */
    HFX_ROUTER_SIGMOID_TOP_LOGITS, /* sigmoid of the k largest logits, weighing the experts' input (Llama 4) */
    HFX_ROUTER_SPARSEMIXER,   /* sparsemixer at inference, always top-2: the best logit's expert, weighed by the softmax
                                 over the logits within 2·router_jitter_noise of it (relative to max(|logit|, best));
                                 then the same over the others for the second (Phi-3.5-MoE) */
    HFX_ROUTER_TOPK_THEN_SCORE, /* the k largest logits, then a softmax over them (f32), or (expert_selection_fn
                                   "sigmoid") their sigmoids, renormalised as norm_topk_prob says, in the weights' dtype
                                   (Cohere2-MoE) */
    HFX_ROUTER_LOGITS_CORRECTED, /* the k largest logits + e_score_correction_bias (f32) chosen, each weighed by its
                                    logit's sigmoid, renormalised as norm_topk_prob says (Kolibri-1) */
    HFX_ROUTER_SIGMOID,       /* sigmoid scores (the k largest logits'), renormalised as norm_topk_prob says (Flint) */
    HFX_ROUTER_SCORED,        /* scoring_func's scores (hfx_moe_score) + e_score_correction_bias chosen, or on the layers
                                 mlp_layer_types calls "hash_moe" the experts gate.tid2eid [vocab, k] gives each token id;
                                 the chosen scores renormalised (+1e-20), × routed_scaling_factor (DeepSeek V4) */
    HFX_ROUTER_SOFTMAX_SCALED /* its input normed without a weight, times router.scale / √hidden; softmax top-k
                                 renormalised, each weight times its expert's per_expert_scale (Gemma 4) */
} hfx_moe_router;

typedef enum {
    HFX_EXPERTS_MLP,      /* mlp.experts.{e}.gate/up/down_proj, or transformers 5's fused
                             mlp.experts.gate_up_proj [E, 2I, H] and down_proj [E, H, I] */
    HFX_EXPERTS_W123,     /* block_sparse_moe.experts.{e}.w1/w3/w2 (or the fused form under mlp) */
    HFX_EXPERTS_LINEAR,   /* block_sparse_moe.input_linear [E, 2I, H] (gate; up), output_linear, router.layer
                             (or router, experts.gate_up_proj under mlp) */
    HFX_EXPERTS_INTERLEAVED, /* mlp.experts.gate_up_proj [E, H, 2I] (gate and up interleaved) and down_proj
                                [E, I, H], both biased, a clamped SwiGLU (up + 1)·gate·σ(α·gate) */
    HFX_EXPERTS_INPUT_SCALED, /* <mlp>.experts.gate_up_proj [E, H, 2I] (gate half, then up) and down_proj [E, I, H],
                                each chosen expert's input scaled by its router weight (Llama 4) */
    HFX_EXPERTS_ON_LAYER,    /* <layer>.experts.gate_up_proj [E, 2I, H] and down_proj [E, H, I], the router
                                <layer>.router: on the layer itself, not under its MLP (Gemma 4) */
    HFX_EXPERTS_UP_DOWN,     /* <mlp>.experts.{e}.up_proj/down_proj, or the fused experts.up_proj [E, I, H] and
                                down_proj [E, H, I]: down(act(up(x))), no gate (Nemotron-H) */
    HFX_EXPERTS_FLAT,        /* <mlp>.experts.mlp.w1 (gate), v1 (up) and w2 (down, each expert's [I, H] read as
                                a·w2) each [E·I, H], the router <mlp>.router.layer (DBRX) */
    HFX_EXPERTS_MLP_EITHER   /* HFX_EXPERTS_MLP's fused form as the module holds it, or as the Hub's checkpoints
                                store it, transposed ([E, H, 2I] and [E, I, H]): told apart by shape as transformers'
                                conversion does (a shape that is both is the module's) (Qwen3-VL-MoE) */
} hfx_moe_experts;

/* HFX_ROUTER_SCORED's scores of the router's logits, by scoring_func. */
typedef enum {
    HFX_SCORE_SQRT_SOFTPLUS,     /* "sqrtsoftplus": √softplus(logit) */
    HFX_SCORE_SIGMOID            /* "sigmoid" */
} hfx_moe_score;

/* What runs beside the routed experts, its output added to theirs. */
typedef enum {
    HFX_SHARED_NONE,
    HFX_SHARED_GATED,   /* mlp.shared_expert (shared_expert_intermediate_size), scaled by
                           sigmoid(shared_expert_gate(h)) */
    HFX_SHARED_PLAIN,   /* mlp.shared_experts: moe_intermediate_size · n_shared_experts wide */
    HFX_SHARED_LINEAR,  /* shared_mlp.input_linear [gate; up] / output_linear of shared_intermediate_size,
                           in every layer (none when that is 0), alone when num_local_experts is 0 */
    HFX_SHARED_MLP_FULL, /* mlp.shared_mlp: a gated MLP of intermediate_size, always (HunYuan MoE) */
    HFX_SHARED_EXPERT,   /* <mlp>.shared_expert: a gated MLP of the experts' width, ungated (Llama 4) */
    HFX_SHARED_SIZED,    /* <mlp>.shared_expert: a gated MLP of shared_expert_intermediate_size, its output added
                            ungated (Flint) */
    HFX_SHARED_CLAMPED,  /* <mlp>.shared_experts: a gated MLP of the experts' width, its gate and up clamped as theirs
                            (clamp_key) (DeepSeek V4) */
    HFX_SHARED_UP_DOWN   /* <mlp>.shared_experts: up_proj/down_proj of moe_shared_expert_intermediate_size, no gate,
                            biased as the MLPs are (Nemotron-H) */
} hfx_moe_shared;

/* Which layers are sparse, and how wide their experts are. */
typedef enum {
    HFX_MOE_EVERY_LAYER,      /* every layer, experts of intermediate_size */
    HFX_MOE_BY_STEP,          /* every decoder_sparse_step-th layer not in mlp_only_layers (and, for a
                                 grouped router, from first_k_dense_replace), of moe_intermediate_size */
    HFX_MOE_EVERY_LAYER_OWN,  /* every layer, of moe_intermediate_size: no dense MLP, intermediate_size
                                 unread */
    HFX_MOE_BY_TYPE_LIST,     /* mlp_layer_types' "sparse" layers, else all after first_k_dense_replace, of
                                 moe_intermediate_size (EXAONE-MoE) */
    HFX_MOE_BY_INDEX_RANGE,   /* every moe_layer_interval-th layer (1-based) from moe_layer_start_index to
                                 moe_layer_end_index (−1: the last), of moe_intermediate_size (ERNIE 4.5 MoE) */
    HFX_MOE_LIST_OR_STEP,     /* moe_layers, else every interleave_moe_layer_step-th layer (Llama 4) */
    HFX_MOE_PERIOD_OFFSET,    /* layer % expert_layer_period == expert_layer_offset (default 2, 1) (Jamba) */
    HFX_MOE_AFTER_DENSE,      /* every layer from num_dense_layers (default: the descriptor's first_dense) on, of
                                 moe_intermediate_size (LFM2-MoE) */
    HFX_MOE_BY_BLOCK_TYPE,    /* the layers the mixers' pattern makes experts (HFX_MIXERS_ONE_BLOCK_BY_TYPE's "moe"), of
                                 moe_intermediate_size (Nemotron-H) */
    HFX_MOE_SHORTCUT,         /* no MLP is sparse: the layout runs the experts itself, of moe_intermediate_size
                                 (LongCat-Flash's shortcut, HFX_LAYOUT_PAIRED_SHORTCUT) */
    HFX_MOE_BESIDE_MLP        /* when enable_moe_block: every layer, beside its dense MLP (the layout combines them:
                                 hfx_dec_moe_beside), of moe_intermediate_size (Gemma 4) */
} hfx_moe_layers;

typedef enum {
    HFX_TOPK_RENORM,     /* the top-k weights always renormalised */
    HFX_TOPK_CONFIG,     /* as norm_topk_prob says (absent: false) */
    HFX_TOPK_CONFIG_TRUE, /* ... (absent: true) */
    HFX_TOPK_NEVER,      /* never renormalised, whatever norm_topk_prob says (LongCat-Flash) */
    HFX_TOPK_P_NORM      /* divided by their p-norm, p ffn_config.moe_normalize_expert_weights (absent: 1, the sum;
                            null: not at all) (DBRX) */
} hfx_moe_topk;

/* A grouped router's settings when config.json leaves them out (each 0: n_group 1, topk_group n_group,
 * routed_scaling_factor 1): the config class's own defaults. */
typedef struct hfx_moe_defaults {
    int groups, top_groups;
    double routed_scale;
    double limit;                /* clamp_key's value when config.json has none */
} hfx_moe_defaults;

typedef struct hfx_moe_desc {
    hfx_moe_router router;
    hfx_moe_experts experts;
    hfx_moe_shared shared;
    hfx_moe_layers layers;
    hfx_moe_topk topk;
    const char *experts_key;     /* the experts' count in config.json ... */
    const char *experts_alt_key; /* ... or this one when that is absent (NULL: none) */
    const char *correction_bias; /* a sigmoid router's e_score_correction_bias under the experts' block, as
                                    checkpoints name it (NULL or absent: "gate.e_score_correction_bias", V3's) */
    const char *shared_key;      /* HFX_SHARED_PLAIN's count (NULL: "n_shared_experts"; 0 means none) */
    const char *top_k_key;       /* the experts per token (NULL: "num_experts_per_tok"); a list of one value per
                                    layer is taken when its values agree */
    const char *router_name;     /* the router's weight under the block (NULL: "gate.weight") */
    const char *width_key;       /* the experts' width where it is not moe_intermediate_size ("intermediate_size":
                                    Llama 4, whose dense MLPs read the descriptor's keys.intermediate) */
    int first_dense;             /* a grouped router's first_k_dense_replace when absent (HFX_MOE_BY_STEP) */
    int shared_default;          /* the shared part's size when config.json has none: HFX_SHARED_PLAIN's
                                    n_shared_experts (0: required), HFX_SHARED_LINEAR's shared_intermediate_size
                                    (0: no shared MLP, and the config may say 0 too) */
    hfx_moe_defaults defaults;
    const char *block;           /* the experts' block under the layer where it is not the MLP's name
                                    ("block_sparse_moe": Mixtral's and GraniteMoE's per-expert tensors); NULL: the MLP's */
    const char *correction_key;  /* a boolean that switches a sigmoid router's correction bias (LFM2-MoE's
                                    use_expert_bias, default true); NULL: always there */
    double renorm_eps;           /* added to the top-k sum when a sigmoid router renormalises (0: 1e-20, V3's) */
    const char *shared_name;     /* HFX_SHARED_PLAIN's block (NULL: "shared_experts"; HY3's "shared_mlp"), HFX_SHARED_SIZED's
                                    (NULL: "shared_expert"; Kolibri-1's "shared_experts") */
    const char *scale_key;       /* a grouped router's routed_scaling_factor by another name (HY3's
                                    router_scaling_factor); NULL: "routed_scaling_factor" */
    const char *out_bias;        /* a bias [hidden] under the block added to the experts' sum (JetMoE's "bias"); NULL:
                                    none */
    const char *zero_key;        /* the count of zero-compute experts after the routed ones ("zero_expert_num", null: 0):
                                    the router scores them too, each passes its input on, weighed (LongCat-Flash);
                                    NULL: none */
    const char *combine_key;     /* "sum" or "average" (the default) of the experts' and the shared experts' outputs
                                    (Cohere2-MoE's shared_expert_combination_strategy); NULL: their sum. A router that
                                    is not grouped reads shared_key then, 0 by default: none */
    const char *out_norm;        /* a norm (the model's) under the block over its output, the experts' and the shared
                                    experts' sum ("post_mlp_layernorm": A.X K1); NULL: none */
    const char *clamp_key;       /* a limit that clamps each routed expert's gate from above and its up both ways
                                    before the gated activation ("swiglu_limit": HY V4); NULL: none */
} hfx_moe_desc;

extern const hfx_moe_desc hfx_moe_mixtral, hfx_moe_qwen3, hfx_moe_qwen3_vl, hfx_moe_qwen2, hfx_moe_qwen3_next, hfx_moe_qwen3_5, hfx_moe_qwen4_exp,
    hfx_moe_granite, hfx_moe_granite_hybrid, hfx_moe_olmoe, hfx_moe_deepseek_v2, hfx_moe_deepseek_v3,
    hfx_moe_gpt_oss, hfx_moe_glm4, hfx_moe_dots1, hfx_moe_solar, hfx_moe_granite_shared, hfx_moe_minimax_m2, hfx_moe_exaone, hfx_moe_ernie4_5, hfx_moe_hunyuan, hfx_moe_llama4,
    hfx_moe_gemma4, hfx_moe_glm4_lite, hfx_moe_lfm2, hfx_moe_hy_v3, hfx_moe_afmoe,
    hfx_moe_mistral4, hfx_moe_jamba, hfx_moe_phimoe, hfx_moe_dbrx, hfx_moe_cohere2, hfx_moe_mimo_v2, hfx_moe_jetmoe, hfx_moe_nemotron_h, hfx_moe_longcat, hfx_moe_deepseek_v32, hfx_moe_kimi, hfx_moe_bailing_hybrid, hfx_moe_hy_v4, hfx_moe_glm_moe_dsa, hfx_moe_axk1, hfx_moe_axk2, hfx_moe_flint, hfx_moe_kolibri, hfx_moe_deepseek_v4;

#endif
