/* The decoder-only transformer template (Llama and its relatives): embeddings, N pre-norm
 * layers of rotary self-attention + gated MLP, a final norm and the LM head. A descriptor says
 * how one architecture differs; the template reads config.json and builds the graph. */
#ifndef HFX_ARCH_DECODER_H
#define HFX_ARCH_DECODER_H

#include "arch/arch.h"
#include "arch/rope.h"

typedef enum {
    HFX_BIAS_FROM_CONFIG, /* `attention_bias` switches q/k/v/o biases (Llama, Qwen3) */
    HFX_BIAS_QKV,         /* q/k/v always biased, o never (Qwen2) */
    HFX_BIAS_NONE         /* never (Mistral) */
} hfx_attn_bias_rule;

typedef enum {
    HFX_SLIDING_NONE,
    HFX_SLIDING_ALL,        /* `sliding_window` on every layer when set (Mistral) */
    HFX_SLIDING_LAYER_TYPES /* `layer_types`, or derived from use_sliding_window and
                               max_window_layers (Qwen2, Qwen3) */
} hfx_sliding_rule;

typedef struct hfx_decoder_desc {
    const char *architecture;
    hfx_attn_bias_rule attn_bias;
    bool mlp_bias_from_config;   /* `mlp_bias` (Llama) */
    bool qk_norm;                /* per-head RMSNorm of q and k before rotary (Qwen3) */
    hfx_sliding_rule sliding;
} hfx_decoder_desc;

typedef struct hfx_decoder_cfg {
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate, max_position;
    double eps;
    bool tied;
    bool q_bias, k_bias, v_bias, o_bias, mlp_bias;
    int64_t *window;             /* (layers) 0 = full attention; arena-owned */
    hfx_rope rope;
} hfx_decoder_cfg;

extern const hfx_arch_family hfx_decoder_family;

#endif
