/* The decoder-only transformer template: embeddings, N layers of rotary self-attention and an
 * MLP, a final norm and the LM head. A descriptor says, as data, how one architecture differs
 * from Llama (norms and where they sit, biases, MLP shape, scalings, windows, tensor names); the
 * template reads config.json through it and builds the graph. */
#ifndef HFX_ARCH_DECODER_H
#define HFX_ARCH_DECODER_H

#include "arch/arch.h"
#include "arch/mask.h"
#include "arch/moe.h"
#include "arch/nn.h"
#include "arch/rope.h"
#include "arch/ssm.h"
#include "arch/weights.h"

typedef enum {
    HFX_BIAS_FROM_CONFIG, /* `attention_bias` switches q/k/v/o biases (Llama, Qwen3, Gemma, OLMo-2) */
    HFX_BIAS_QKV,         /* q/k/v always biased, o never (Qwen2) */
    HFX_BIAS_NONE,        /* never (Mistral) */
    HFX_BIAS_USE_BIAS,    /* `use_bias` (or qkv_key; default: default_on) switches every linear, MLP included
                             (StarCoder2, ERNIE 4.5; OPT's enable_bias) */
    HFX_BIAS_QKV_FROM_CONFIG, /* desc `qkv_bias_key` switches q/k/v, o never (GLM, StableLM) */
    HFX_BIAS_O_ONLY          /* o_proj always biased, q/k/v never (GPT-Neo), or as qkv_key says (RecurrentGemma's
                                attention_bias) */
} hfx_attn_bias_rule;

typedef enum {
    HFX_SLIDING_NONE,
    HFX_SLIDING_ALL,         /* `sliding_window` on every layer when set (Mistral, StarCoder2) */
    HFX_SLIDING_MAX_WINDOW,  /* layer_types, else use_sliding_window + max_window_layers (Qwen2/3) */
    HFX_SLIDING_PATTERN,     /* layer_types, else every `pattern`-th layer global (Gemma 2) */
    HFX_SLIDING_PATTERN_OR_CONFIG, /* ... that period, or `sliding_window_pattern` (Gemma 3, Cohere 2, EXAONE 4) */
    HFX_SLIDING_EVERY_NTH_GLOBAL,  /* layer_types, else every global_attn_every_n_layers-th layer (default `pattern`)
                                      global (AFMoE) */
    HFX_SLIDING_PATTERN_LAST_FULL, /* layer_types, else every `pattern`-th layer global; the last layer global
                                      whatever layer_types says (Gemma 4's config forces it) */
    HFX_SLIDING_NO_ROPE,     /* layer_types, else the layers without rope when use_sliding_window
                                (SmolLM3); sliding_window applies to every sliding_attention layer */
    HFX_SLIDING_EVEN_BELOW_MAX, /* layer_types, else the even-indexed layers below max_window_layers
                                   when use_sliding_window (Qwen2-MoE) */
    HFX_SLIDING_TYPES_OR_ALL,   /* layer_types, else every layer when sliding_window is set (Ministral) */
    HFX_SLIDING_FROM_MAX_WINDOW, /* layer_types, else the layers from max_window_layers on when sliding_window is
                                    set, no use_sliding_window (dots.llm1) */
    HFX_SLIDING_ATTENTION_TYPES, /* attention_layers' "local" layers, or attention_types' [[types], repeat] expanded,
                                    windowed by window_size (GPT-Neo) */
    HFX_SLIDING_FIRST_OF_PATTERN, /* layer_types, else layer i global when i % pattern == 0, the others windowed by
                                     sliding_window, which must be set (GraniteSWA) */
    HFX_SLIDING_CHUNKED         /* not windows: layer_types' "chunked_attention" layers (else the rotary ones when
                                   attention_chunk_size is set) attend within chunks of attention_chunk_size
                                   (Llama 4) */
} hfx_sliding_rule;

typedef enum {
    HFX_NORM_RMS,          /* x·rsqrt(mean(x²)+ε), then w·(that, cast back) */
    HFX_NORM_RMS_OFFSET,   /* Gemma: (that in f32)·(1 + w), cast back */
    HFX_NORM_RMS_F32,      /* (that in f32)·w in f32, cast back (Helium, Gemma 4) */
    HFX_NORM_RMS_PLAIN,    /* x·rsqrt(mean(x²)+ε) in f32, cast back: no weight anywhere (NanoChat) */
    HFX_NORM_LAYER,        /* nn.LayerNorm with bias */
    HFX_NORM_LAYER_NO_BIAS, /* nn.LayerNorm with a weight, its bias None (MPT, DBRX) */
    HFX_NORM_LAYER_BIAS_BY_CONFIG, /* LAYER, or LAYER_NO_BIAS where `norm_bias` is false (ModernBERT's decoder; the parse
                                      picks one) */
    HFX_NORM_LAYER_1P,     /* ... whose weight is stored less one: (1 + w), with bias (Nemotron's LayerNorm1P) */
    HFX_NORM_LAYER_PLAIN,  /* LayerNorm without weight or bias, in f32, ε 1e-5 whatever the config (OLMo) */
    HFX_NORM_LAYER_WEIGHT, /* LayerNorm with a weight, no bias, in f32 (Cohere) */
    HFX_NORM_RMS_LAYERS_1E6, /* RMS; the layers' norms at 1e-6 whatever the config says (built without one), the final
                                norm at the eps key's (JetMoE) */
    HFX_NORM_RMS_OR_LAYER_WEIGHT, /* RMS with rms_norm_eps when the config sets it, else LAYER_WEIGHT with the eps key's
                                    (Cohere2-MoE) */
    HFX_NORM_RMS_GATED     /* RMS; where the checkpoint stores a norm as `<prefix>.norm` beside `<prefix>.mlp.fc1` [r, n] and
                              `.fc2` [n, r] (r gated_norm_rank, 16), y = that RMS times σ(fc2(silu(fc1(y)))) in f32
                              (A.X K2's layer norms) */
} hfx_norm_kind;

typedef enum {
    HFX_LAYOUT_PRE,      /* x += attn(norm1(x)); x += mlp(norm2(x)) */
    HFX_LAYOUT_PRE_BARE_FIRST, /* PRE's, layer 0's input not normed (its attn_norm an Identity: ModernBERT's decoder) */
    HFX_LAYOUT_PARALLEL, /* x = mlp(norm2(x)) + attn(norm1(x)) + x (GPT-NeoX use_parallel_residual) */
    HFX_LAYOUT_SANDWICH, /* x += post1(attn(norm1(x))); x += post2(mlp(pre2(x))) (Gemma 2/3) */
    HFX_LAYOUT_POST,     /* x += norm1(attn(x)); x += norm2(mlp(x)) (OLMo-2) */
    HFX_LAYOUT_PARALLEL_SHARED, /* h = norm1(x); x = x + attn(h) + mlp(h) (Phi, Cohere, StableLM) */
    HFX_LAYOUT_POST_LN,  /* x = norm1(x + attn(x)); x = norm2(x + mlp(x)) (OPT-350m) */
    HFX_LAYOUT_PRE_OR_POST_LN, /* do_layer_norm_before (default true): PRE, else POST_LN and no final norm; a final norm
                                  also not with _remove_final_layer_norm (OPT) */
    HFX_LAYOUT_SANDWICH_PER_LAYER, /* the sandwich, then (hidden_size_per_layer_input) x += norm(proj(act(gate(x)) ·
                                     the layer's per-layer input)), then x · layer_scalar (Gemma 4) */
    HFX_LAYOUT_POST_OR_PRE_BY_MIXER, /* the attention layers POST's (OLMo 2's), the recurrent ones PRE's (OLMo-Hybrid) */
    HFX_LAYOUT_SANDWICH_BY_CONFIG, /* use_sandwich_norm (default true): SANDWICH; else its post-norms are identities,
                                      norm1 and pre2 alone (LFM3) */
    HFX_LAYOUT_PARALLEL_OR_PRE, /* new_decoder_architecture: PARALLEL (names.parallel_norms) when num_ln_in_parallel_attn
                                  is 2 (its default), PARALLEL_SHARED when 1; else parallel_attn (default true) picks
                                  PARALLEL_SHARED over PRE (Falcon) */
    HFX_LAYOUT_PAIRED_SHORTCUT, /* each config layer two PRE sublayers (hfx's layers 2l and 2l + 1: each its cache, its
                                   weights at index .0 or .1 of layer l's self_attn, input_layernorm,
                                   post_attention_layernorm and mlps lists), and the experts (layer l's mlp) over the
                                   first sublayer's MLP input, their output added after the second (LongCat-Flash) */
    HFX_LAYOUT_NORMED_RESIDUAL, /* h = norm1(x); x = α·h + β·mixer(h); h = norm2(x); x = α'·h + β'·mlp(h): the normed
                                   input is the residual, α and β its mixer kind's (MiniMax) */
    HFX_LAYOUT_HYPER,    /* hyper-connections (hyper.c): the residual hc_mult streams; each sublayer's input their
                            mix, normed, its output added to each stream by its weight; the head mixes them into one
                            before the final norm (HY V4) */
    HFX_LAYOUT_HYPER_SINKHORN, /* HYPER's streams, but the post weights 2·σ without hc_eps, and the residual the streams
                                  mixed by a matrix Sinkhorn-Knopp makes doubly stochastic (hc_sinkhorn_iters) before
                                  each sublayer's output is added (DeepSeek V4's manifold-constrained form) */
    HFX_LAYOUT_HYPER_GATED, /* gated residuals (hyper.c): hc_count streams; each sublayer's input their mean, each stream
                               normed in groups and gated by a low-rank sigmoid mix; its output added to each stream by
                               2·σ of a weight; a mixer of the same form (no output) takes the final norm's place; the
                               n-gram layers (ngram.c) add to the streams first (Qwen4-Exp) */
    HFX_LAYOUT_SHARED_BLOCKS,  /* PRE's mixer alone; a HFX_MIXER_SHARED_BLOCK layer x += mixer(norm1(x + linear(shared
                                  block(x, the embeddings)))), its norm and mixer under mamba_decoder (Zamba2) */
    HFX_LAYOUT_ALTUP     /* alternating updates (altup.c): the residual altup_num_inputs streams, the first the
                            embeddings, the others their projections at its magnitude; each layer predicts the streams
                            from their mix, runs the sandwich with a low-rank augmented residual (LAuReL) on the active
                            one, corrects every stream by its output and adds its per-layer input's term to all but the
                            first; the head projects them back and averages them (Gemma 3n) */
} hfx_layer_layout;

typedef enum {
    HFX_QK_NORM_NONE,
    HFX_QK_NORM_PER_HEAD,      /* one norm over head_dim shared by the heads (Qwen3) */
    HFX_QK_NORM_PER_HEAD_AND_V, /* ... and the values normed over head_dim too, without a weight (Gemma 4) */
    HFX_QK_NORM_WHOLE,         /* over the whole projection (OLMo-2) */
    HFX_QK_NORM_AFTER_ROPE,    /* one norm over head_dim shared by the heads, after rotary (HunYuan's
                                  query_layernorm / key_layernorm, NanoChat's weight-less ones) */
    HFX_QK_NORM_L2_ROPE_LAYERS, /* a weight-less RMS norm over head_dim after rotary, on the rotary layers only
                                   (Llama 4's L2Norm) */
    HFX_QK_NORM_HEAD_WEIGHTS   /* a LayerNorm over head_dim with each head's own weight: [heads, head_dim]
                                  (Cohere's q_norm.weight) or one norm per head (StableLM's
                                  q_layernorm.norms.{h}.weight); in f32 with HFX_NORM_LAYER_WEIGHT */
} hfx_qk_norm;

typedef enum {
    HFX_QKV_SEPARATE,   /* q_proj, k_proj, v_proj */
    HFX_QKV_CONCAT,     /* one weight [q; k; v] (Phi-3 qkv_proj) */
    HFX_QKV_PER_HEAD,   /* one weight, per head [q_h; k_h; v_h] (GPT-NeoX query_key_value) */
    HFX_QKV_GROUPED,    /* one weight, per key/value group g [the queries of g; k_g; v_g] (Falcon's new decoder) */
    HFX_QKV_BY_MULTI_QUERY /* GROUPED when new_decoder_architecture; else `multi_query` (default true): one key/value
                              head, [q; k; v] rows; else per head, as many key/value heads as heads (GPTBigCode c_attn,
                              Falcon query_key_value) */
} hfx_qkv_layout;

/* config.json keys, where a family departs from Llama's (NULL fields take Llama's). */
typedef struct hfx_decoder_keys {
    const char *hidden, *layers, *heads, *positions, *intermediate; /* GPT-2: n_embd, n_layer, ... */
    const char *embed_dim;  /* the token embeddings' own width, projected in to hidden and out before the head (OPT's
                               word_embed_proj_dim; absent or null: hidden); NULL: hidden */
    const char *head_rows;  /* the untied LM head's rows where a key prunes them (Apertus 1.5's output_vocab_size;
                               absent or null: vocab_size); NULL: vocab_size */
    const char *kv_heads;   /* "num_key_value_heads" (Falcon: num_kv_heads) */
    const char *head_dim;   /* "head_dim" (JetMoE: kv_channels) */
    const char *post_norms; /* HFX_LAYOUT_SANDWICH_BY_CONFIG's switch: "use_sandwich_norm" (HyperCLOVAX: "use_post_norm") */
    const char *const *nested; /* NULL-terminated: objects whose keys the parse reads as "object.key", so that the
                                  descriptor's keys and messages name them so (MPT's "attn_config.clip_qkv") */
} hfx_decoder_keys;

/* Checkpoint tensor names, where a family departs from Llama's (NULL fields take Llama's). */
typedef struct hfx_decoder_names {
    const char *embed;      /* "model.embed_tokens.weight" */
    const char *layer;      /* "model.layers.%lld" */
    const char *attn;       /* "self_attn" */
    const char *qkv;        /* fused q/k/v: "qkv_proj" */
    const char *o;          /* "o_proj" */
    const char *fc_in;      /* plain MLP: "c_fc" */
    const char *fc_out;     /* plain MLP: "c_proj" */
    const char *norm1;      /* "input_layernorm" */
    const char *norm2;      /* "post_attention_layernorm" */
    const char *pos_embed;  /* learned positions: "transformer.wpe.weight" */
    const char *final_norm; /* "model.norm" */
    const char *lm_head;    /* "lm_head.weight" */
    const char *pre2;       /* the sandwich's pre-MLP norm: "pre_feedforward_layernorm" */
    const char *post2;      /* ... and post-MLP norm: "post_feedforward_layernorm" */
    const char *q_norm;     /* per-head q/k norms: "q_norm" */
    const char *k_norm;     /* "k_norm" */
    const char *mlp;        /* the MLP block: "mlp" ("": on the layer itself, OPT's fc1) */
    const char *gate, *up, *down; /* its gated projections: "gate_proj", "up_proj", "down_proj" */
    const char *conv;       /* a short-conv mixer's block (LFM2): "conv" */
    const char *ssm;        /* a recurrent mixer's block: "mixer" (Mamba2), "mamba" (hybrids), "linear_attn"
                               (a gated delta-net) */
    const char *embed_alt;  /* the embedding's older name, read where `embed` is absent
                               (transformers' load hook: Mamba2's "backbone.embedding.weight") */
    const char *optional_prefix; /* names start with it, or not (GPT-2 on the Hub has no "transformer.") */
    const char *project_in, *project_out; /* the embeddings' projections where their width is not hidden (OPT) */
    const char *embed_norm; /* HFX_EMBED_OWN_NORM's norm: "transformer.word_embeddings_layernorm" */
    const char *token_types; /* a token-type table whose first row every token gets, before the embedding norm (GTE's
                                "embeddings.token_type_embeddings.weight": transformers' default token_type_ids 0);
                                absent where type_vocab_size is 0 */
    const char *head_dense, *head_norm; /* HFX_HEAD_LM_TRANSFORM's: "lm_head.dense", "lm_head.layer_norm" */
    const char *lm_head_bias; /* the LM head's bias where it is not "<lm_head>.bias" (NomicBERT's decoder reads
                                 "cls.predictions.bias") */
    const char *pooler;     /* the base model's pooler on the first token ("gte.pooler.dense"): pooler_output where
                               the checkpoint has one; HFX_HEAD_POOLER_CLASSIFIER's dense layer */
    const char *class_dense, *class_out; /* HFX_HEAD_POOLER_CLASSIFIER's dense layer and classifier where they are not
                                            the pooler and "classifier" (RoBERTa's "classifier.dense",
                                            "classifier.out_proj") */
    const char *class_norm; /* HFX_HEAD_TRANSFORM_CLASSIFIER's transform: class_dense, the head's activation, this norm */
    const char *fused_mlp;  /* the fused MLP's weight (HFX_MLP_GATED_FUSED: "gate_up_proj"; HFX_MLP_UP_GATE_FUSED:
                               "up_gate_proj"; ModernBERT's decoder: "Wi") */
    const char *parallel_norm1, *parallel_norm2; /* HFX_LAYOUT_PARALLEL's norms where their names differ from the
                                                    sequential layout's (Falcon's ln_attn, ln_mlp) */
    const hfx_weight_rename *stored; /* the other names transformers loads these tensors by, as parts of a name
                                        (weights.h: hfx_weights.stored; HY V4's "hc_attn_layer.hc_fn") */
} hfx_decoder_names;

typedef enum {
    HFX_NO_ROPE_NONE,
    HFX_NO_ROPE_LIST,        /* `no_rope_layers` (1: rope, 0: none), else every
                                `no_rope_layer_interval`-th layer (SmolLM3) */
    HFX_NO_ROPE_FULL_LAYERS, /* rope on the sliding layers only (Cohere 2) */
    HFX_NO_ROPE_FULL_IF_WINDOW, /* ... when the config has a sliding_window; else rope everywhere (EXAONE 4) */
    HFX_NO_ROPE_UNLESS_ROPE_TYPE, /* rope only when `position_embedding_type` is "rope" (Granite 4.0's "nope") */
    HFX_NO_ROPE_FULL_BUT_DENSE_PREFIX, /* rope on the sliding layers, and on the dense ones too when
                                          prefix_dense_sliding_window_pattern is 1 (its default) (Cohere2-MoE) */
    HFX_NO_ROPE_NULL_THETA,      /* no rotary anywhere when rope_parameters' rope_theta is null (OLMo-Hybrid's released
                                    checkpoints); else rope on every attention layer */
    HFX_NO_ROPE_LAYER_THETA      /* layer_rope_theta: each layer's rope base (0: no rotary), the rope otherwise
                                    rope_parameters' (absent: its rope_theta everywhere) (GraniteSWA) */
} hfx_no_rope_rule;

/* What mixes tokens in a layer. */
typedef enum {
    HFX_MIXER_ATTENTION,
    HFX_MIXER_SHORT_CONV, /* LFM2's gated short convolution */
    HFX_MIXER_MAMBA2,     /* a Mamba2 mixer (ssm.h) */
    HFX_MIXER_MAMBA1,     /* a Mamba (Mamba1) mixer (ssm.h) */
    HFX_MIXER_PARALLEL,   /* a Mamba2 mixer and attention side by side, their outputs summed (Falcon-H1) */
    HFX_MIXER_DELTA,      /* a gated delta-net (ssm.h: Qwen3-Next, Qwen3.5) */
    HFX_MIXER_RG_LRU,     /* RecurrentGemma's recurrent block (ssm.h: hfx_rglru_mixer) */
    HFX_MIXER_FFN,        /* none: the layer is its MLP (or, sparse, its experts) alone (Nemotron-H) */
    HFX_MIXER_LIGHTNING,  /* MiniMax's lightning attention (ssm.h: a linear attention decaying by a rate per head) */
    HFX_MIXER_SHARED_BLOCK, /* a Mamba2 mixer fed by one of the shared transformer blocks (shared_block.c): attention's
                              cache and Mamba2's states (Zamba2's hybrid layers) */
    HFX_MIXER_MLSTM,      /* xLSTM's mLSTM layer (ssm.h), its one state the cell's memory, normalizer and stabilizer */
    HFX_MIXER_RWKV        /* RWKV-4's time mix (ssm.h), the layer's MLP its channel mix (HFX_MLP_CHANNEL_MIX): their
                             token shifts one state, the WKV sums the other */
} hfx_mixer_kind;

/* Whether a layer of this kind keeps a recurrent state across calls. */
static inline bool hfx_mixer_recurrent(hfx_mixer_kind k) {
    return k != HFX_MIXER_ATTENTION && k != HFX_MIXER_FFN;
}

/* Whether a layer of this kind attends (and keeps keys and values). */
static inline bool hfx_mixer_attends(hfx_mixer_kind k) {
    return k == HFX_MIXER_ATTENTION || k == HFX_MIXER_PARALLEL || k == HFX_MIXER_SHARED_BLOCK;
}

/* Whether a layer of this kind has a Mamba2 mixer. */
static inline bool hfx_mixer_mamba2(hfx_mixer_kind k) {
    return k == HFX_MIXER_MAMBA2 || k == HFX_MIXER_PARALLEL || k == HFX_MIXER_SHARED_BLOCK;
}

/* How the MLP of a dense layer is built. */
typedef enum {
    HFX_MLP_PLAIN,      /* fc_in → act → fc_out (StarCoder2, GPT-2, GPT-NeoX, Phi) */
    HFX_MLP_GATED,      /* act(gate) · up → down (Llama) */
    HFX_MLP_GATED_FUSED, /* ... from one `gate_up_proj` [gate; up] (Phi-3, GLM) */
    HFX_MLP_UP_GATE_FUSED, /* ... from one `up_gate_proj` [up; gate] (GTE) */
    HFX_MLP_GATED_SUB_NORMED, /* act(gate) · up normed (mlp.ffn_sub_norm, over the width) → down (BitNet) */
    HFX_MLP_CHANNEL_MIX      /* RWKV-4's channel mix (ssm.h), token-shifted: its state with the time mix's */
} hfx_mlp_kind;

/* What a layer's attention block is, besides grouped heads. */
typedef enum {
    HFX_ATTN_PLAIN,
    HFX_ATTN_OUTPUT_GATED, /* q_proj gives each head its query and a gate [q_h; gate_h]; the output is
                              scaled by sigmoid(gate) before o_proj (Qwen3-Next) */
    HFX_ATTN_OUTPUT_GATED_QSA, /* OUTPUT_GATED's, each query reading the keys its block indexer picks (qsa.c:
                                  Qwen4-Exp's QSA) */
    HFX_ATTN_SINKS,        /* self_attn.sinks [heads]: one more logit per head in the softmax (GPT-OSS) */
    HFX_ATTN_SINKS_SLIDING, /* ... on the sliding layers alone, self_attn.sinks or (as the Hub names it)
                               self_attn.attention_sink_bias (MiMo-V2-Flash) */
    HFX_ATTN_SUB_NORMED,   /* the output normed (self_attn.attn_sub_norm, over heads·hd) before o_proj (BitNet) */
    HFX_ATTN_GATE_PROJ,    /* self_attn.gate_proj [heads·hd, hidden] (no bias): the output times sigmoid(gate_proj(h)),
                              element by element, before o_proj (AFMoE) */
    HFX_ATTN_HEAD_GATE,    /* self_attn.gate_proj (or g_proj) [heads, hidden], no bias, when use_attention_gate (default
                              true): each head's output times sigmoid(gate_proj(h)) of its head, before o_proj (LFM3) */
    HFX_ATTN_MIXTURE,      /* a mixture of attention heads (JetMoE): kv_proj [2·kv·hd, hidden] gives k and v; each token's
                              top-k experts (the MoE's count and k; experts.router.layer, a softmax over the k logits)
                              project its queries (experts.input_linear [E, kv·hd, hidden]): num_attention_heads is
                              kv·k, query head j·kv + h reading key head h; the heads' outputs go through the same
                              experts' output_linear [E, hidden, kv·hd], weighted by the gates, summed, + experts.bias */
    HFX_ATTN_COMPRESSED,   /* DeepSeek V4's (compressed.c): one key head that is its value too, learned sinks, a grouped
                              low-rank output; every layer within sliding_window, the compressed layers also over entries
                              each pooling a window of raw tokens (HCA's; CSA's overlapping, picked by an indexer) */
    HFX_ATTN_LATENT        /* multi-head latent attention (mla.c): low-rank q and kv, rotary on
                              qk_rope_head_dim dims, the cache holding the normalized kv latent and the
                              rotated key part, as transformers' cache does (DeepSeek V2/V3) */
} hfx_attention_kind;

/* How latent attention scales its low-rank parts. */
typedef enum {
    HFX_MLA_SCALE_NONE,
    HFX_MLA_SCALE_LORA_RANKS     /* queries × √(hidden / q_lora_rank), the normed latent × √(hidden / kv_lora_rank)
                                    (LongCat-Flash) */
} hfx_mla_scaling;

/* Which keys latent attention reads. */
typedef enum {
    HFX_MLA_KEYS_ALL,
    HFX_MLA_KEYS_INDEXED,        /* each query's index_topk keys a lightning indexer scores highest (indexer.c: DeepSeek
                                    V3.2's sparse attention) */
    HFX_MLA_KEYS_INDEXED_ROTARY_LAST, /* ... its rotary on its last qk_rope_head_dim dims, its keys' LayerNorm at
                                    rms_norm_eps, and the layers indexer_types calls "shared" reading the keys the
                                    last "full" layer picked (HY V4) */
    HFX_MLA_KEYS_INDEXED_PAIRS   /* V3.2's, its rotary pairs regrouped into halves first, and shared layers as
                                    indexer_types, index_topk_pattern or index_topk_freq / index_skip_topk_offset
                                    say (GLM-5) */
} hfx_mla_keys;

/* What gates latent attention's heads. */
typedef enum {
    HFX_MLA_GATE_NONE,
    HFX_MLA_GATE_PER_HEAD,       /* g_proj [heads, hidden]: each head's output times sigmoid(g_proj(h)) of its head before
                                    the output projection (BailingHybrid) */
    HFX_MLA_GATE_ELEMENTWISE,    /* gate_proj [heads·v_head_dim, hidden]: the heads' outputs times sigmoid(gate_proj(h)),
                                    element by element (HY V4) */
    HFX_MLA_GATE_FROM_QUERY      /* the queries and the gates one projection, q_gate_proj [heads·(qk + v_head_dim),
                                    2·q_lora_rank] over the low-rank part normed and as projected: each head's query,
                                    then its gate; the heads' outputs times its sigmoid (in f32) (A.X K2) */
} hfx_mla_gate;

/* What else latent attention's softmax weighs. */
typedef enum {
    HFX_MLA_SINKS_NONE,
    HFX_MLA_SINKS_LEARNED        /* <attn>.sinks [heads] f32: one more logit per head in the softmax, dropped after it
                                    (HY V4) */
} hfx_mla_sinks;

/* How a lineage's latent attention departs from DeepSeek V3's. */
typedef struct hfx_decoder_latent {
    hfx_mla_scaling scaling;     /* the scaling of its low-rank parts */
    hfx_mla_keys keys;           /* the keys it reads */
    hfx_mla_gate gate;           /* its heads' gate */
    hfx_mla_sinks sinks;         /* its softmax's sinks */
} hfx_decoder_latent;

/* Which token mixers the layers have. */
typedef enum {
    HFX_MIXERS_ATTENTION,     /* attention in every layer */
    HFX_MIXERS_SHORT_CONV,    /* layer_types may name "conv" layers: LFM2's gated short convolution
                                 (in_proj → B·x → depthwise causal conv1d → C·conv → out_proj), its state
                                 the last conv_L_cache − 1 inputs; block_auto_adjust_ff_dim sizes the MLP */
    HFX_MIXERS_SHORT_CONV_SLIDING, /* ... "conv", "sliding_attention" and "full_attention" layers (LFM3) */
    HFX_MIXERS_MAMBA2_ONLY,   /* every layer a Mamba2 mixer and nothing else: no attention, no MLP, no
                                 positions; `residual_in_fp32` read (Mamba2) */
    HFX_MIXERS_MAMBA_ONLY,    /* ... a Mamba mixer (MambaConfig's keys) */
    HFX_MIXERS_MAMBA2_BY_TYPE, /* layer_types (or layers_block_type) name "mamba" / "linear_attention" layers,
                                  Mamba2 mixers, and "attention" / "full_attention" ones; absent: every layer
                                  Mamba2 (Granite 4.0) */
    HFX_MIXERS_MAMBA_BY_PERIOD, /* attention where layer % attn_layer_period == attn_layer_offset, Mamba mixers (mamba1
                                   keys) elsewhere (Jamba) */
    HFX_MIXERS_MAMBA2_BY_INDEX, /* the layers attn_layer_indices lists attend, the others are Mamba2 mixers (null: every
                                   layer Mamba2) (Bamba) */
    HFX_MIXERS_PARALLEL_MAMBA2, /* every layer both: Mamba2 beside attention, with the muP multipliers
                                   (attention_in/out, ssm_out, key, mlp_multipliers, lm_head, embedding:
                                   Falcon-H1) */
    HFX_MIXERS_ONE_BLOCK_BY_TYPE, /* every layer one block after its norm, as layers_block_type says: Mamba2 mixers
                                     ("linear_attention", "mamba"), attention ("full_attention", "attention"), MLPs
                                     ("mlp") or experts ("moe"); no position embeddings (Nemotron-H) */
    HFX_MIXERS_RG_LRU_BY_TYPE, /* layer_types' "linear_attention" layers are RG-LRU blocks, the "sliding_attention" ones
                                  attend (RecurrentGemma's block_types, decoder_derived.c) */
    HFX_MIXERS_DELTA_BY_TYPE,  /* layer_types' "linear_attention" layers are gated delta-nets (projections
                                 as `delta` says); absent, every full_attention_interval-th layer (default 4)
                                 attends (Qwen3-Next, Qwen3.5) */
    HFX_MIXERS_SHARED_BLOCKS_BY_TYPE, /* layer_types' "linear_attention" layers are Mamba2 mixers, its "hybrid" ones
                                        HFX_MIXER_SHARED_BLOCK (Zamba2) */
    HFX_MIXERS_LIGHTNING_BY_TYPE, /* layer_types' "linear_attention" layers are lightning attention, the "full_attention"
                                    ones attend (MiniMax) */
    HFX_MIXERS_RWKV,            /* every layer RWKV-4's time mix and channel mix (RwkvConfig's keys: no heads, no
                                   positions, the attention mask unread) */
    HFX_MIXERS_MLSTM            /* every layer xLSTM's mLSTM layer and its gated MLP (xLSTMConfig's keys: no positions,
                                   the attention mask unread, the logits soft-capped by output_logit_soft_cap) */
} hfx_mixers_kind;

/* What mixes tokens in the layers, and the recurrent mixers' settings. */
typedef struct hfx_decoder_mixers {
    hfx_mixers_kind kind;
    const hfx_mamba2_keys *mamba2; /* the Mamba2 mixers' config keys */
    hfx_delta_proj delta;        /* HFX_MIXERS_DELTA_BY_TYPE: how the delta-nets' projections are stored */
    const char *ff_adjust_key;   /* short convolutions' models: the key that, true by default, resizes the MLP from
                                    intermediate_size (LFM2's block_auto_adjust_ff_dim); NULL: intermediate_size as is */
    const hfx_mamba1_keys *mamba1; /* the Mamba mixers' config keys (NULL: MambaConfig's) */
} hfx_decoder_mixers;

/* Whether the layers' shapes differ, and how config.json says so. */
typedef enum {
    HFX_SHAPES_UNIFORM,         /* every layer the same heads and widths, its own keys and values */
    HFX_SHAPES_SLIDING_DOUBLE_KV, /* the sliding layers twice num_key_value_heads key/value heads; every layer's values
                                     v_head_dim wide (default 128) and scaled by attention_value_scale (default 0.707;
                                     null: 1) as projected, before the cache (MiMo-V2-Flash) */
    HFX_SHAPES_PER_LAYER_CONFIG, /* per_layer_config {"<layer>": {head_dim, num_key_value_heads}}, else the full
                                   layers' global_head_dim and (attention_k_eq_v) num_global_key_value_heads;
                                   attention_k_eq_v: the full layers' values are their keys' projection (no
                                   v_proj); the last num_kv_shared_layers layers attend to the keys and values of
                                   the last earlier layer of their type (no k/v weights, no cache of their own),
                                   their MLP twice as wide when use_double_wide_mlp (Gemma 4) */
    HFX_SHAPES_PER_LAYER_MLP    /* intermediate_size a width per layer (or one for all) and activation_sparsity_pattern
                                   a sparsity per layer; PER_LAYER_CONFIG's shared keys and values, every layer
                                   head_dim wide (Gemma 3n) */
} hfx_layer_shapes;

/* How the attention scores are scaled. */
typedef enum {
    HFX_SCALE_HEAD_DIM,          /* head_dim^-0.5 */
    HFX_SCALE_ONE,               /* none: scores are q·k (GPT-Neo; Gemma 4, whose q/k norms scale) */
    HFX_SCALE_QUERY_PRE_ATTN,    /* query_pre_attn_scalar^-0.5 (Gemma 2/3) */
    HFX_SCALE_ATTN_MULTIPLIER,   /* attention_multiplier (Granite) */
    HFX_SCALE_ATTN_MULTIPLIER_OR_HEAD_DIM, /* ... absent or null: head_dim^-0.5 (HyperCLOVAX) */
    HFX_SCALE_BY_CONFIG_LAYER,   /* head_dim^-0.5 unless scale_attn_weights is false, and divided by layer
                                    index + 1 when scale_attn_by_inverse_layer_idx (GPT-2) */
    HFX_SCALE_BY_CONFIG,         /* head_dim^-0.5 unless scale_attn_weights is false (GPTBigCode) */
    HFX_SCALE_SOFTMAX_SCALE,     /* attn_config.softmax_scale (null: head_dim^-0.5) (MPT) */
    HFX_SCALE_HALF_HEAD_DIM      /* (head_dim / 2)^-0.5: heads as wide as two streams' (Zamba2's [x; embeddings]) */
} hfx_attn_scale;

/* The multipliers a lineage scales its activations with (each 1 when absent). */
typedef enum {
    HFX_MULT_NONE,
    HFX_MULT_EMBED_RESIDUAL_LOGITS, /* embedding_multiplier, residual_multiplier, logits_scaling (Granite) */
    HFX_MULT_EMBED_RESIDUAL_LOGITS_TIMES, /* ... the logits times logits_scaling, not divided (HyperCLOVAX) */
    HFX_MULT_LOGIT_SCALE,           /* logits · `logit_scale` (defaults.logit_scale when absent: Cohere) */
    HFX_MULT_MUP_EMBED,             /* embeddings · √hidden when mup_enabled (AFMoE) */
    HFX_MULT_SCALE_EMB_DEPTH        /* embeddings · scale_emb (12), each block's output · scale_depth (1.4; null:
                                       √layers) / √layers, logits ÷ hidden / dim_model_base (256; null: hidden)
                                       (MiniCPM3) */
} hfx_multipliers;

/* A scale on the queries that grows with the position, after rotary (Llama 4's temperature tuning). */
typedef enum {
    HFX_QTEMP_NONE,
    HFX_QTEMP_ROPE_BETA, /* q·(1 + β·ln(1 + ⌊pos / n⌋)), β rope_parameters' llama_4_scaling_beta and n its
                            original_max_position_embeddings, both required (Ministral 3) */
    HFX_QTEMP_NOPE_FLOOR /* on the layers without rotary, when attn_temperature_tuning (default on):
                            q·(1 + attn_scale·ln(1 + ⌊(slot + 1) / floor_scale⌋)), slot the token's cache position
                            (Llama 4) */
} hfx_query_temperature;

/* What hides a key from a query in the attention bias. */
typedef enum {
    HFX_MASK_MIN,        /* −FLT_MAX wherever the key is hidden (transformers' additive masks) */
    HFX_MASK_WHERE_THEN_ADD, /* where(causal window, scores, min) + the causal padding mask: −FLT_MAX where the key
                               is hidden one way, −∞ where both (GPT-Neo's eager attention; padding rows differ) */
    HFX_MASK_BOTH_WAYS   /* −FLT_MAX where the key is padding, every other key seen both ways: an encoder built of
                            decoder layers (EuroBERT), a forward pass only */
} hfx_mask_fill;

/* Which soft-caps the config's keys switch on. */
typedef enum {
    HFX_SOFTCAP_NONE,
    HFX_SOFTCAP_FINAL,         /* final_logit_softcapping (Gemma 3: its attention ignores the other) */
    HFX_SOFTCAP_ATTN_AND_FINAL /* ... and attn_logit_softcapping (Gemma 2) */
} hfx_softcaps;

/* The attention scores: their scale, soft-caps, the queries' temperature and how keys are hidden. */
/* A sliding window where the layers attend both ways: which keys it keeps of query i. */
typedef enum {
    HFX_BOTH_WAYS_WINDOW_EXCLUSIVE, /* |i − j| < sliding_window */
    HFX_BOTH_WAYS_WINDOW_HALVED,    /* |i − j| < sliding_window / 2 + 1 (Gemma 3's config halves it) */
    HFX_BOTH_WAYS_WINDOW_INCLUSIVE  /* |i − j| ≤ sliding_window (transformers' bidirectional sliding mask: T5Gemma) */
} hfx_both_ways_window;

typedef struct hfx_decoder_scores {
    hfx_attn_scale scale;
    hfx_softcaps softcaps;
    hfx_query_temperature temperature;
    hfx_mask_fill mask;
    const char *both_ways_key; /* a config boolean that makes every layer attend both ways (Gemma 3's
                                  use_bidirectional_attention: EmbeddingGemma) */
    hfx_both_ways_window both_ways_window; /* where the layers attend both ways, what sliding_window means */
    bool eager_only;           /* transformers' class has no sdpa path (_supports_sdpa False: soft-capping, sinks,
                                  ALiBi): generate() makes additive float masks for every call, and the seed's
                                  static-cache profile takes them so */
} hfx_decoder_scores;

/* The embedding's scale. */
typedef enum {
    HFX_EMBED_PLAIN,
    HFX_EMBED_SQRT_HIDDEN,         /* · √hidden (in the weights' dtype) in the model's forward (T5Gemma's encoder) */
    HFX_EMBED_SQRT_HIDDEN_IN_TABLE, /* ... done by the embedding module (Gemma 3's scaled embedding), so that
                                       embeddings given to the model are not scaled again */
    HFX_EMBED_FINAL_NORM,          /* normed by the final norm before the first layer (NanoChat's, weight-less) */
    HFX_EMBED_SQRT_HIDDEN_BF16,    /* · √hidden rounded to bf16, whatever the dtype (RecurrentGemma's normalizer buffer),
                                      given embeddings too */
    HFX_EMBED_OWN_NORM             /* normed by its own norm (names.embed_norm: Bloom's word_embeddings_layernorm) */
} hfx_embed_scale;

/* How the model knows positions. */
typedef enum {
    HFX_POSITIONS_ROTARY,  /* rotary in the attention layers */
    HFX_POSITIONS_LEARNED, /* absolute position embeddings added to the token embeddings (GPT-2) */
    HFX_POSITIONS_NONE,    /* none: the attention layers rotate nothing (Jamba) */
    HFX_POSITIONS_LEARNED_OFFSET2, /* learned, position p at the table's row p + 2 (OPT's two leading rows) */
    HFX_POSITIONS_ALIBI,   /* ALiBi: each head's scores + slope_h · (the key's index among its row's real tokens), the
                              slopes transformers' _get_alibi_slopes (Bloom) */
    HFX_POSITIONS_ROTARY_OR_ALIBI, /* `alibi` (default false): ALiBi as Bloom's, but slopes and bias rounded to bf16
                                      and the bias divided by √head_dim; else rotary (Falcon) */
    HFX_POSITIONS_ALIBI_MAX_BIAS   /* ALiBi: slope_h · (the key's slot − the last slot), padding counted, the slopes
                                      2^(−8·i/p) over p the next power of two, the even i first (MPT: its model
                                      passes no alibi_bias_max, so 8 whatever the config says) */
} hfx_positions;

/* How the rotary dims of a head are paired. */
typedef enum {
    HFX_ROTARY_HALVES,    /* dims (i, i + d/2) */
    HFX_ROTARY_PAIRS,     /* (2i, 2i+1) (GLM, Cohere, DeepSeek V2) */
    HFX_ROTARY_PAIRS_F32, /* ... applied in f32 whatever the weights' dtype (ERNIE 4.5) */
    HFX_ROTARY_HALVES_BACKWARD /* halves turned by −θ: rotate_half is (x2, −x1) (NanoChat) */
} hfx_rotary_pairs;

/* Which names a config's rope type goes by. */
typedef enum {
    HFX_ROPE_NAMES_CURRENT, /* rope_parameters' rope_type, or rope_scaling's rope_type */
    HFX_ROPE_NAMES_LEGACY,  /* ... or a `rope_scaling` "type" key (transformers 5 ignores it for Gemma 3, so
                               hfx does too) */
    HFX_ROPE_NAMES_SU_YARN, /* ... and "su"/"yarn" mean longrope (Phi-3) */
    HFX_ROPE_NAMES_MSCALE_LONGROPE, /* ... and "longrope" is Phi-3.5-MoE's (HFX_ROPE_LONGROPE_MSCALE) */
    HFX_ROPE_NAMES_NTK_ALPHA /* ... and "dynamic" with an `alpha` is a fixed base θ·alpha^(d/(d−2)) (HunYuan) */
} hfx_rope_names;

/* The sliding layers' own rotary, where a lineage gives them one: rope_parameters.sliding_attention
 * (transformers 5); in a flat transformers 4 config, the base and scaling below. */
typedef enum hfx_local_rope {
    HFX_LOCAL_ROPE_NONE,        /* every layer the same rotary */
    HFX_LOCAL_ROPE_OWN_BASE,    /* its own base, rope_local_base_freq (default 10000), unscaled (Gemma 3) */
    HFX_LOCAL_ROPE_SHARED_BASE  /* the full layers' rope_theta, unscaled: rope_scaling is the full
                                   layers' only (OLMo 3) */
} hfx_local_rope;

/* Rotary settings a lineage reads (the values themselves are hfx_rope_parse's). */
typedef struct hfx_decoder_rope {
    double theta;             /* rope base when the config names none (0: 10000) */
    const char *theta_key;    /* transformers 4 name of the rope base (NULL: "rope_theta") */
    bool partial_rotary;      /* `partial_rotary_factor` honoured (Phi-3) */
    double partial;           /* partial_rotary_factor when the config names none (0: 1) */
    const char *partial_key;  /* ... its transformers 4 name (NULL: "partial_rotary_factor") */
    const char *dim_key;      /* the rotated dims by number, where no factor is given ("rotary_dim"); NULL: none */
    hfx_rope_names names;
    hfx_rotary_pairs pairs;
    hfx_local_rope local;     /* the sliding layers' own rope */
    const char *interleave_key; /* latent attention: the key saying the rotary dims come as interleaved pairs, to
                                   regroup into halves (V3's "rope_interleave", absent: true); NULL: as `pairs` says */
    const char *absent;       /* rope_parameters (JSON) when config.json has no rope_parameters, rope_scaling or
                                 rope_theta: transformers' config fills it in (Apertus's llama3); NULL: none */
} hfx_decoder_rope;

/* The activation: config key, default, and a legacy name's meaning. */
typedef struct hfx_decoder_act {
    const char *key;          /* "hidden_act" or "hidden_activation" */
    const char *dflt;
    bool legacy_gelu_tanh;    /* a legacy "gelu" means the tanh approximation (Gemma) */
    const char *head;         /* HFX_HEAD_LM_TRANSFORM's activation ("gelu": GTE's exact GELU); NULL: the config's
                                 (NomicBERT's BERT transform reads hidden_act) */
    const char *head_key;     /* ... read from this config key instead, `head` its default (ModernBERT's decoder:
                                 classifier_activation) */
    const char *head_dense_bias_key; /* the transform's dense layer (and a transform classifier's) biased as this key
                                        says (classifier_bias); NULL: biased */
} hfx_decoder_act;

typedef enum {
    HFX_MLP_BIAS_NONE,
    HFX_MLP_BIAS_FROM_CONFIG, /* `mlp_bias` (Llama) */
    HFX_MLP_BIAS_FROM_CONFIG_ON, /* ... absent: true (Jais-2) */
    HFX_MLP_BIAS_ALWAYS,      /* MLP linears always biased (GPT-NeoX, Phi) */
    HFX_MLP_BIAS_DOWN         /* the down projection alone (GTE) */
} hfx_mlp_bias;

/* Which linears have biases. */
typedef struct hfx_decoder_bias {
    hfx_attn_bias_rule rule;
    const char *qkv_key;      /* HFX_BIAS_QKV_FROM_CONFIG's key ("attention_bias", "use_qkv_bias", ...) */
    bool default_on;          /* the rule's key when absent (GPT-NeoX: true) */
    const char *o_key;        /* a key that switches o_proj's bias by itself, default off (Seed-OSS
                                 `attention_out_bias`); NULL: the rule decides */
    hfx_mlp_bias mlp;
} hfx_decoder_bias;

/* What config.json may leave out, and what hfx takes then. */
typedef struct hfx_decoder_defaults {
    bool tied;                /* tie_word_embeddings */
    double eps;               /* the norm's epsilon (0: 1e-6, LayerNorm 1e-5) */
    int64_t kv_heads;         /* num_key_value_heads (0: one per head) */
    int64_t head_dim;         /* head_dim when the key is absent (0: hidden / heads; null also gives that) */
    int64_t window;           /* sliding_window (absent: none) */
    double attn_softcap, final_softcap; /* when the key is absent (null: none) */
    double logit_scale;       /* HFX_MULT_LOGIT_SCALE's */
    bool qk_norm;             /* qk_norm_key when absent (Persimmon's qk_layernorm: on) */
} hfx_decoder_defaults;

/* The keys a lineage's config class derives when config.json leaves them out, which the template would otherwise read
 * differently (decoder_derived.c has each rule). */
typedef enum {
    HFX_DERIVE_NONE,
    HFX_DERIVE_LFM3,        /* layer_types: full at 4k + 2, sliding at 4k > 0, else conv */
    HFX_DERIVE_COHERE2_MOE, /* layer_types and mlp_layer_types over first_k_dense_replace's dense prefix;
                               prefix_dense_intermediate_size null: intermediate_size */
    HFX_DERIVE_MIMO_V2,     /* layer_types: full at layer 0 and every 6th; mlp_layer_types: layer 0 dense;
                               sliding_window: sliding_window_size + 1 where that is set */
    HFX_DERIVE_RECURRENT_GEMMA, /* layer_types from block_types (cycled), sliding_window attention_window_size,
                                   final_logit_softcapping logits_soft_cap (30), head_dim hidden / heads, the MLP
                                   intermediate_size // 2 wide */
    HFX_DERIVE_OLMO_HYBRID, /* layer_types: full at 4k + 3 (else the last), the delta-nets' heads num_attention_heads,
                               their key width int(0.75 · hidden / heads), their value width twice that */
    HFX_DERIVE_NEMOTRON_H,  /* layers_block_type from hybrid_override_pattern (M, *, -, E) or layer_types;
                               num_hidden_layers its length; the older mamba_* names where given */
    HFX_DERIVE_KIMI_LINEAR, /* layer_types from linear_attn_config's 1-based full_attn_layers and kda_layers, else full
                               at every 4th layer but the first; the delta-nets' widths from linear_attn_config */
    HFX_DERIVE_DEEPSEEK_V32, /* rope_interleave true (its attention always regroups the rotary pairs) */
    HFX_DERIVE_AXK1,        /* mlp_layer_types: sparse from first_k_dense_replace (1) on where i % moe_layer_freq (1) is
                               0 */
    HFX_DERIVE_AXK2,        /* AXK1's, and rope_interleave true (its attention always regroups the rotary pairs) */
    HFX_DERIVE_KOLIBRI,     /* layer_types: full at every 5th layer, else sliding */
    HFX_DERIVE_FLINT,       /* layer_types: full at layers 0, 1, every 4k + 1 and the last, else sliding; mlp_only_layers
                               [0, 1] */
    HFX_DERIVE_LONGCAT,     /* num_hidden_layers 2·num_layers (its sublayers), intermediate_size ffn_hidden_size,
                               rope_interleave true, the latent widths' defaults */
    HFX_DERIVE_MINIMAX,     /* layer_types: full attention at even layers, lightning at odd ones */
    HFX_DERIVE_BAILING_HYBRID, /* the names its config saves (as Kimi-Linear's); layer_types full at every
                                  layer_group_size-th (6) layer; rope_interleave true */
    HFX_DERIVE_XLSTM,       /* num_hidden_layers num_blocks where set (its blocks' count), hidden_size embedding_dim where
                                   null */
    HFX_DERIVE_DEEPSEEK_V4, /* layer_types from compress_ratios (0, 4, 128), else 2 heavily compressed layers then
                               sparse and heavy in turn; mlp_layer_types num_hash_layers (3) "hash_moe" then "moe";
                               compress_rates from compress_rate_csa / compress_rate_hca; partial_rotary_factor
                               qk_rope_head_dim / head_dim; rope_parameters as {main, compress} (compress_rope_theta,
                               YaRN's attention_factor 1) */
    HFX_DERIVE_QWEN4_EXP,   /* layer_types' "indexed_attention" read as "full_attention" (its attention always has the
                               indexer); output_gate_type hidden_act where null */
    HFX_DERIVE_ZAMBA2       /* layer_types from layers_block_type (its default 54 layers), num_hidden_layers its length;
                               head_dim 2·hidden / heads; intermediate_size 4·hidden where null or 0; mlp_bias
                               add_bias_linear; position_embedding_type "rope" with use_mem_rope; max_position_embeddings
                               16384 with use_long_context */
} hfx_derived_keys;

/* The head on the final hidden states. */
typedef enum {
    HFX_HEAD_LM,              /* lm_head [vocab, hidden] */
    HFX_HEAD_LM_BIASED,       /* ... with lm_head.bias (Phi) */
    HFX_HEAD_LM_USE_BIAS,     /* ... biased as `use_bias` says (ERNIE 4.5 MoE) */
    HFX_HEAD_LM_TRANSFORM,    /* lm_head(LayerNorm(GELU(dense(x)))), the decoder biased and tied as the config says
                                 (GTE's masked LM) */
    HFX_HEAD_LM_BIAS_KEY,     /* ... biased as the config's head_bias_key says (Phi-3.5-MoE: lm_head_bias; EuroBERT:
                                 mlp_bias) */
    HFX_HEAD_CLASSIFIER,      /* *ForSequenceClassification: `score` on the last token that is not
                                 pad_token_id (hfx_decoder_classifier_family) */
    HFX_HEAD_POOLED_CLASSIFIER, /* an encoder's: classifier(GELU(dense(·))) of the first token ("bos") or the masked
                                  mean ("mean"), or the masked mean of every token's ("late"), as classifier_pooling
                                  says (EuroBERT) */
    HFX_HEAD_POOLER_CLASSIFIER, /* BERT's: classifier(tanh(pooler(the first token))) (GTE, NomicBERT) */
    HFX_HEAD_TOKEN_CLASSIFIER,  /* classifier on every token: logits [B,S,labels] */
    HFX_HEAD_QA,                /* qa_outputs on every token, split: start_logits, end_logits [B,S] */
    HFX_HEAD_TRANSFORM_CLASSIFIER /* HFX_HEAD_CLASSIFIER's last real token through the transform (names.class_dense,
                                     the head's activation, names.class_norm), then names.class_out (ModernBERT's
                                     decoder) */
} hfx_decoder_head;

typedef struct hfx_decoder_desc {
    const char *architecture;
    const char *output_class;    /* transformers.modeling_outputs' class its forward returns;
                                    NULL: "CausalLMOutputWithPast" */
    const char *const *forward_args; /* its forward's keywords among the graph's, in order (GPT-2
                                        takes the cache second); NULL: Llama's */
    const char *const *step_nones;   /* NULL-terminated: keywords its generate passes as None at a step
                                        (hfx_torch_signature); NULL: none */
    const char *model_type_alias; /* a model_type a composite config names it by ("gemma3_text") */
    const char *genai_type;      /* recurrent layers: onnxruntime-genai's model type whose runtime holds
                                    these states (its own where genai has one); NULL: none does */
    const hfx_decoder_names *names; /* NULL: Llama's */
    const hfx_decoder_keys *keys;   /* NULL: Llama's */
    const char *const *ignored_keys; /* NULL-terminated: template keys this architecture's transformers
                                        class never reads, hidden from the parse (GPT-2's
                                        num_key_value_heads) */
    const char *unused_stack;    /* checkpoint tensors under it transformers drops on load ("mtp": Qwen3-Next's
                                    multi-token-prediction head) */
    hfx_decoder_defaults defaults;
    hfx_derived_keys derive;     /* keys its config class derives when config.json has none */
    hfx_decoder_bias bias;
    hfx_decoder_act act;
    hfx_decoder_rope rope;
    const char *eps_key;         /* "rms_norm_eps", "norm_epsilon", ... */
    hfx_norm_kind norm;
    hfx_layer_layout layout;
    bool parallel_from_config;   /* `use_parallel_residual` (absent: false) picks PARALLEL over PRE */
    hfx_decoder_mixers mixers;
    hfx_layer_shapes shapes;     /* whether the layers' heads and widths differ, and how config.json says so */
    hfx_attention_kind attention;
    hfx_decoder_latent latent;   /* latent attention's departures from DeepSeek V3's */
    hfx_qkv_layout qkv;
    hfx_qk_norm qk_norm;
    const char *qk_norm_key;     /* a boolean that switches the descriptor's qk_norm on (Phi `qk_layernorm`) */
    const char *clip_qkv_key;    /* the key that clamps q, k and v after their projections ("clip_qkv": OLMo;
                                    "attn_config.clip_qkv": MPT, DBRX); NULL: none */
    hfx_sliding_rule sliding;
    int sliding_pattern;         /* HFX_SLIDING_PATTERN*: the period of global layers; HFX_SLIDING_FROM_MAX_WINDOW:
                                    max_window_layers when absent (the other max rules: 28) */
    hfx_no_rope_rule no_rope;    /* which layers have no rotary */
    bool masks_by_layer_type;    /* transformers' config has `layer_types`: the seed's profile names
                                    its mask per type, "attention_mask.full_attention" */
    hfx_positions positions;
    hfx_decoder_scores scores;
    hfx_multipliers multipliers;
    hfx_embed_scale embed_scale;
    bool linears_in_out;         /* linear weights stored [in, out] (GPT-2's Conv1D) */
    hfx_mlp_kind mlp;
    const hfx_moe_desc *moe;     /* the sparse layers' experts (moe.h); NULL: none */
    hfx_decoder_head head;
    const char *head_bias_key; /* HFX_HEAD_LM_BIAS_KEY's config key */
} hfx_decoder_desc;

/* Whether every layer is a recurrent mixer (alone, or with an MLP: RWKV, xLSTM): no attention, no positions. */
static inline bool hfx_decoder_mixers_only(const hfx_decoder_desc *d) {
    return d->mixers.kind == HFX_MIXERS_MAMBA2_ONLY || d->mixers.kind == HFX_MIXERS_MAMBA_ONLY ||
           d->mixers.kind == HFX_MIXERS_RWKV || d->mixers.kind == HFX_MIXERS_MLSTM;
}

/* A mixture of experts' sizes and router settings (moe.c). */
typedef struct hfx_decoder_moe_cfg {
    int64_t experts, top_k, moe_intermediate; /* E, k and each expert's width I */
    int64_t zero;                /* zero-compute (identity) experts after the E routed ones (moe.h's zero_key) */
    int64_t shared_intermediate;  /* the shared expert's (moe.h) */
    bool norm_topk;              /* renormalise the top-k router weights ... */
    double norm_p;               /* ... by their p-norm (1: their sum) */
    double swiglu_alpha, swiglu_limit; /* HFX_EXPERTS_INTERLEAVED's gate */
    int64_t groups, top_groups;  /* a grouped router's expert groups and how many are kept (1, 1: plain top-k) */
    double routed_scale;         /* ... its routed_scaling_factor */
    bool uncorrected;            /* a sigmoid router without its correction bias (the descriptor's correction_key off) */
    double jitter;               /* HFX_ROUTER_SPARSEMIXER's router_jitter_noise */
    bool sigmoid_select;         /* HFX_ROUTER_TOPK_THEN_SCORE: sigmoids, not a softmax */
    bool shared_average;         /* the shared experts' output averaged with the routed one, not added */
    hfx_moe_score score;         /* HFX_ROUTER_SCORED's scoring_func */
    bool *hashed;                /* (layers) HFX_ROUTER_SCORED's layers routed by gate.tid2eid[input_ids]; arena-owned */
} hfx_decoder_moe_cfg;

/* Multi-head latent attention's widths (mla.c). */
typedef struct hfx_decoder_mla_cfg {
    int64_t q_lora, kv_lora, qk_nope, qk_rope, v_dim; /* q_lora 0 is a plain q_proj */
    bool rope_deinterleave;      /* (V3 rope_interleave): rotary pairs regrouped into halves first */
    double q_scale, latent_scale; /* the queries and the normed kv latent times these (1: none) */
    int64_t index_heads, index_dim, index_topk; /* HFX_MLA_KEYS_INDEXED's indexer (indexer.c) ... */
    double index_eps;            /* ... its keys' LayerNorm epsilon */
    bool *index_shared;          /* (layers) the layer reads the keys the last full indexer picked; arena-owned, NULL:
                                    every layer its own indexer */
} hfx_decoder_mla_cfg;

/* The scalings a lineage multiplies activations by (each 1: none). */
typedef struct hfx_decoder_mults {
    double embed, residual, logits_div, logits; /* embeddings, what each block adds, logits ÷ and × */
    double attn_in, attn_out, ssm_out, key;     /* Falcon-H1's mixers' */
    double gate, down;           /* the MLP's gate before its activation, its output (Falcon-H1) */
    double full_alpha, full_beta, linear_alpha, linear_beta, mlp_alpha, mlp_beta; /* HFX_LAYOUT_NORMED_RESIDUAL's */
} hfx_decoder_mults;

/* Which linears have biases. */
typedef struct hfx_decoder_biases {
    bool q, k, v, o, mlp, head;
    bool down; /* the MLP's down projection alone (HFX_MLP_BIAS_DOWN) */
} hfx_decoder_biases;

/* One layer's attention and MLP shapes (hfx_dec_shape: uniform models have none stored). */
typedef struct hfx_layer_shape {
    int64_t head_dim, kv_heads, intermediate;
    int64_t kv_from;             /* the layer whose keys and values this one attends to: itself, or an earlier
                                    one (the layer then has no k/v weights and no cache) */
    bool values_are_keys;        /* attention_k_eq_v: the values are k_proj's output (before k_norm) */
    int64_t v_dim;               /* the values' head width (head_dim but where the config gives them their own) */
    double sparsity;             /* the MLP's activation sparsity s: its gate less mean + σ·Φ⁻¹(s) over the width, at
                                    least 0, before the activation (Gemma 3n's Gaussian top-k); 0: none */
} hfx_layer_shape;

/* ALiBi's form where the model has it (hfx_positions). */
typedef struct hfx_decoder_alibi {
    bool on;
    double max_bias;             /* MPT's slopes' maximal bias, and its keys' index: slot − last slot, padding
                                    counted (0: _get_alibi_slopes' slopes over the row's real tokens) */
    bool bf16;                   /* slopes and bias rounded to bf16, the bias then divided by √head_dim (Falcon) */
} hfx_decoder_alibi;

/* Shared transformer blocks (Zamba2): num_mem_blocks weight sets, the hybrid layers taking them in turn, each use
 * with its own LoRA adapters (shared_block.c). */
typedef struct hfx_decoder_shared {
    int64_t blocks;              /* num_mem_blocks (0: none) */
    int64_t rank;                /* adapter_rank */
    bool qkv_adapters;           /* use_shared_attention_adapter: q, k and v adapted too (the MLP always is) */
    int64_t *use;                /* (layers) a hybrid layer's ordinal among them, its adapters' index; -1 elsewhere */
    int64_t *source;             /* (blocks) the layer whose name block b's weights are stored under where transformers
                                    ties the uses (tie_word_embeddings, its one switch for every tie); untied, each
                                    hybrid layer has its own block (and adapter slots at its block's indices) */
} hfx_decoder_shared;

/* HFX_LAYOUT_HYPER's streams (hyper.c). */
typedef struct hfx_decoder_hyper {
    int64_t streams;             /* hc_mult (0: one plain stream) */
    double magnitude, eps;       /* hc_magnitude: the post weights' scale; hc_eps: added to each weight */
    int64_t sinkhorn;            /* HFX_LAYOUT_HYPER_SINKHORN's hc_sinkhorn_iters */
    int64_t lowrank;             /* HFX_LAYOUT_HYPER_GATED's hc_lowrank: its input mix's rank */
} hfx_decoder_hyper;

/* HFX_LAYOUT_ALTUP's streams (altup.c). */
typedef struct hfx_decoder_altup {
    int64_t streams;             /* altup_num_inputs (0: one plain stream) */
    int64_t active;              /* altup_active_idx: the stream the layers run on */
    bool correct_scale;          /* altup_correct_scale: the corrected active stream scaled before the per-layer term */
    int64_t laurel_rank;         /* laurel_rank: the augmented residual's width */
} hfx_decoder_altup;

/* Hashed n-gram embeddings into the streams (ngram.c, Qwen4-Exp's PLE layers). */
typedef struct hfx_decoder_ngram {
    int64_t *index;              /* (layers) the layer's ordinal among ple_layer_ids, its hashes' seed; -1: none;
                                    arena-owned, NULL: no n-gram layers */
    int64_t n;                   /* ngram_size: the longest n-gram, the convolution's dilation */
    int64_t heads_per;           /* heads_per_ngram: hashed tables per order (orders 2..n) */
    int64_t width;               /* ple_embed_dim: the heads' embeddings concatenated */
    int64_t kernel;              /* ple_conv_kernel_size */
    int64_t vocab_base;          /* ngram_vocab_size_base: each head's table the next prime after it */
    int64_t divisor;             /* make_ngram_vocab_size_divisible_by: the tables' rows padded to it */
    int64_t seed;                /* the multipliers' seed */
    int64_t eos;                 /* eos_token_id (its first): what the hashes see across a document's start */
    int64_t *primes;             /* (n-gram layers · heads) each table's size, in turn from vocab_base; arena-owned */
} hfx_decoder_ngram;

/* A block indexer beside attention (qsa.c: Qwen4-Exp's QSA): each query's budget of keys in whole blocks. */
typedef struct hfx_decoder_qsa {
    int64_t heads, dim;          /* indexer_n_heads (0: none), indexer_head_dim */
    int64_t budget, ratio;       /* indexer_budget keys, in blocks of indexer_compress_ratio */
} hfx_decoder_qsa;

/* How much a layer of HFX_ATTN_COMPRESSED compresses. */
typedef enum {
    HFX_KV_WINDOW,               /* the window alone ("sliding_attention") */
    HFX_KV_HEAVY,                /* and entries of one window each ("heavily_compressed_attention") */
    HFX_KV_SPARSE                /* and entries of a window and half the one before, picked by an indexer
                                    ("compressed_sparse_attention") */
} hfx_kv_compression;

/* HFX_ATTN_COMPRESSED's widths (compressed.c). */
typedef struct hfx_decoder_compressed {
    int64_t q_lora, groups, group_rank; /* q_lora_rank; o_groups, o_lora_rank */
    int64_t index_heads, index_dim, index_topk;
    int64_t heavy_rate, sparse_rate;    /* compress_rates' */
    hfx_kv_compression *kind;    /* (layers); arena-owned */
} hfx_decoder_compressed;

/* Per-layer embeddings (Gemma 4's PLE): a [vocab, layers·width] table and a projection of the
 * embeddings, both split into a [width] input per layer. */
typedef struct hfx_decoder_ple {
    int64_t width, vocab;        /* hidden_size_per_layer_input (0: none), vocab_size_per_layer_input */
} hfx_decoder_ple;

typedef struct hfx_decoder_cfg {
    hfx_norm_kind norm;          /* the descriptor's, or as the config picks it (HFX_NORM_RMS_OR_LAYER_WEIGHT) */
    double final_eps;            /* the final norm's epsilon (eps but for HFX_NORM_RMS_LAYERS_1E6) */
    int64_t head_rows;           /* the LM head's rows (the logits' width): vocab unless a key prunes them */
    int64_t embed_dim;           /* the token embeddings' width (hidden, or projected in and out) */
    bool no_final_norm;          /* the final norm left out (OPT's post-LN layers) */
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate, max_position;
    double eps;
    bool tied;
    hfx_decoder_biases bias;
    hfx_activation act;
    hfx_activation head_act;     /* HFX_HEAD_LM_TRANSFORM's */
    bool head_dense_bias;        /* ... its dense layer's bias (act.head_dense_bias_key) */
    int64_t *window;             /* (layers) 0 = full attention; arena-owned */
    double scale;                /* attention score scale */
    bool scale_by_layer;         /* GPT-2: divided again by layer index + 1 */
    hfx_decoder_mults mult;
    double attn_softcap, final_softcap;           /* 0: none */
    double q_temp_beta;          /* hfx_query_temperature's β (0: none) ... */
    int64_t q_temp_step;         /* ... and the positions it divides by */
    bool both_ways;              /* scores.both_ways_key set: attention both ways, windows on each side */
    int64_t chunk;               /* HFX_SLIDING_CHUNKED's attention_chunk_size (0: none) ... */
    bool *chunked;               /* (layers) ... and its layers; arena-owned, NULL: none */
    hfx_rope rope;               /* full-attention layers (all layers without rope.local) */
    hfx_rope *layer_rope;        /* (layers) each layer's own where its base is its own (HFX_NO_ROPE_LAYER_THETA);
                                    arena-owned, NULL: rope and local_rope */
    hfx_rope local_rope;         /* sliding layers when the descriptor has rope.local */
    hfx_layer_layout layout;     /* the descriptor's, or chosen by config (use_parallel_residual) */
    bool layer_types;            /* the descriptor's masks_by_layer_type */
    hfx_decoder_moe_cfg moe;
    hfx_decoder_mla_cfg mla;
    bool *sparse;                /* (layers) this layer's MLP is the experts; arena-owned */
    bool *no_rope;               /* (layers) this layer's attention has no rotary; arena-owned */
    hfx_mixer_kind *mixer;       /* (layers) what mixes tokens in each layer; arena-owned, NULL: attention
                                    everywhere */
    hfx_mamba2_cfg ssm;          /* the Mamba2 layers' mixer */
    hfx_mamba1_cfg ssm1;         /* the Mamba layers' mixer */
    hfx_delta_cfg delta;         /* the gated delta-net layers' mixer */
    hfx_rglru_cfg rglru;         /* the RG-LRU layers' block */
    hfx_lightning_cfg lightning; /* the lightning attention layers' mixer */
    hfx_rwkv_cfg rwkv;           /* RWKV-4's blocks */
    hfx_mlstm_cfg mlstm;         /* xLSTM's mLSTM layers */
    bool no_mlp;                 /* layers are the mixer alone (Mamba2) */
    bool residual_f32;           /* the residual stream stays in f32 whatever the weights' dtype
                                    (Mamba2's residual_in_fp32) */
    int64_t conv_len;            /* the convolution's kernel (conv_L_cache): its state keeps conv_len − 1 */
    bool conv_bias;
    double clip_qkv;             /* 0: none; else q, k, v clamped to [-clip_qkv, clip_qkv] */
    hfx_qk_norm qk_norm;         /* the descriptor's, or none when its qk_norm_key is false */
    hfx_qkv_layout qkv;          /* the descriptor's, or as multi_query says (never HFX_QKV_BY_MULTI_QUERY) */
    int64_t labels, pad_id;      /* a sequence classifier's width and pad token (-1: none) */
    enum { HFX_CLASS_BOS, HFX_CLASS_MEAN, HFX_CLASS_LATE } class_pooling; /* HFX_HEAD_POOLED_CLASSIFIER's */
    int64_t token_types;         /* names.token_types' rows (type_vocab_size: 0 or 1) */
    hfx_layer_shape *shape;      /* (layers) where the layers' shapes differ (HFX_SHAPES_PER_LAYER_CONFIG); NULL:
                                    every layer the sizes above; arena-owned */
    hfx_decoder_ple ple;
    hfx_decoder_hyper hyper;
    hfx_decoder_altup altup;
    hfx_decoder_compressed compressed;
    hfx_decoder_ngram ngram;
    hfx_decoder_qsa qsa;
    hfx_decoder_alibi alibi;
    double value_scale;          /* the values times it as projected (1: none) */
    bool no_post_norms;          /* HFX_LAYOUT_SANDWICH_BY_CONFIG without them */
    bool head_gate;              /* HFX_ATTN_HEAD_GATE switched on, or HFX_MLA_GATE_PER_HEAD */
    int64_t norm_gate_rank;      /* HFX_NORM_RMS_GATED's gates' rank */
    int64_t attn_width;          /* the attention's input width where it is not hidden (Zamba2's 2·hidden); 0: hidden */
    hfx_decoder_shared shared;
} hfx_decoder_cfg;

/* Layer i's shape: its own where the config gives layers their own, else the model's. */
static inline hfx_layer_shape hfx_dec_shape(const hfx_decoder_cfg *m, int64_t i) {
    if (m->shape) return m->shape[i];
    return (hfx_layer_shape){m->head_dim, m->kv_heads, m->intermediate, i, false, m->head_dim, 0.0};
}

extern const hfx_arch_family hfx_decoder_family;

/* ---- for models that hold a decoder (a VLM's language model) ---- */

/* How the outer model has its decoder built: the decoder's tensor names under its own, the parts
 * of the checkpoint other components read, and embeddings from the caller. */
typedef struct hfx_decoder_host {
    const char *architecture;        /* the outer model's, for metadata and messages */
    const hfx_weight_rename *rename; /* the checkpoint's names for the decoder's (NULL: the same) */
    const hfx_weight_rename *const *alias; /* NULL-terminated (or NULL): the host's other naming schemes, where a LoRA
                                              adapter's names may follow another transformers' module paths */
    const char *const *foreign;      /* NULL-terminated: stacks ("vision_tower") other components read */
    bool embeds_in;                  /* take inputs_embeds [B,S,hidden] instead of input_ids */
    hfx_mask_blocks blocks;          /* take token_type_ids [B, attention_mask's length]: the tokens of a block
                                        see each other both ways (Gemma 3's images, PaliGemma's prompt); a
                                        growing cache only */
    hfx_weights *weights;            /* the host's, shared (a dry run of the whole model: it checks what is
                                        left over); NULL: the build reads and checks its own */
    bool base;                       /* the base model alone (Qwen3Model): its final states, no head */
    int64_t deepstack;               /* DeepStack (Qwen3-VL): take deepstack_embeds [n, B, S, hidden] (each image
                                        token's features from the vision tower, 0 elsewhere) and add [i] to the
                                        states layer i leaves, i < n; 0: none */
    const int64_t *placeholders;     /* (n_placeholders) token ids embed_tokens reads as `placeholder_as` (Gemma 4's
                                        image, video and audio tokens, which its forward embeds as the pad token) */
    int n_placeholders;
    int64_t placeholder_as;
    /* OpenVINO GenAI's Qwen3-VL and Qwen3.5 paths (the stateful layout): DeepStack's features as visual_pos_masks [B, S]
       bool and deepstack_visual_embeds [n, image tokens, hidden] rather than deepstack_embeds; M-RoPE's position_ids
       [4, B, S], a row of text positions first (Qwen3.5's) */
    bool deepstack_at_positions;
    bool text_position_row;
    /* per-layer inputs (Gemma 3n's, Gemma 4's) given as per_layer_inputs [B,S,layers,width], the tokens' half
       (hfx_decoder_build_embed's per_layer graph), not read from input_ids beside the embeddings: GenAI's form */
    bool per_layer_in;
} hfx_decoder_host;

/* A causal LM's base model ("Qwen3Model" beside "Qwen3ForCausalLM", its tensors without "model."): the states its
 * final norm leaves, last_hidden_state, or pooled into a sentence embedding (a sentence-transformers folder). */
typedef struct hfx_decoder_base {
    const hfx_decoder_desc *causal;
    const char *architecture;        /* the base model's class name */
    const char *output_class;        /* its forward's output (NULL: BaseModelOutputWithPast) */
    const char *prefix;              /* what the head model's names start with, which the base model's do not
                                        (NULL: "model.") */
    const char *config_key;          /* the config object its keys are in ("encoder": T5Gemma's); NULL: the top */
} hfx_decoder_base;
extern const hfx_arch_family hfx_decoder_base_family;
/* The template with its head as an encoder's (EuroBertForMaskedLM: layers that attend both ways): a forward pass
 * only, returning the descriptor's output_class. */
extern const hfx_arch_family hfx_decoder_encoder_family;

/* Read a decoder's config (the outer model's text_config) for descriptor d. */
hfx_status hfx_decoder_parse(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                             hfx_error *err);

/* The decoder's graph (a plain forward or a generation component, as opts say); host NULL: the
 * decoder is the whole model. */
hfx_status hfx_decoder_build(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                             const hfx_build_opts *opts, const hfx_decoder_host *host, hfx_graph *g, hfx_error *err);

/* The embedding of token ids alone: input_ids [B,S] → inputs_embeds [B,S,hidden], as the model's
 * embedding module computes it (what a host splices other features into); with per_layer, the per-layer inputs'
 * tokens' half instead: per_layer_inputs [B,S,layers,width] (the host's media tokens read as it embeds them). */
hfx_status hfx_decoder_build_embed(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                   const hfx_build_opts *opts, const hfx_decoder_host *host, bool per_layer,
                                   hfx_graph *g, hfx_error *err);

/* The lm_head module alone (the Python system's split of a multimodal model): input [B,S,hidden] → output
 * [B,S,vocab], its Linear and bias as transformers' module computes them; the logits' multipliers and soft-cap, which
 * the model's forward applies after it, are not in it. Refused where the head reads more than the final states. */
hfx_status hfx_decoder_build_lm_head(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                     const hfx_build_opts *opts, const hfx_decoder_host *host, hfx_graph *g,
                                     hfx_error *err);

/* The causal-LM descriptor of a config's model_type ("llama", "qwen2", "qwen3_moe"): the registry's
 * architecture that is the model_type's CamelCase + "ForCausalLM", case and underscores aside;
 * NULL when hfx has none. */
const hfx_decoder_desc *hfx_decoder_of_model_type(const char *model_type);
/* The same template with a sequence-classification head: a forward pass only. */
extern const hfx_arch_family hfx_decoder_classifier_family;

#endif
