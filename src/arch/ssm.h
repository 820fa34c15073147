/* State-space token mixers: what a layer computes instead of attention when its memory of the
 * past is a fixed-size state rather than a growing cache. The Mamba2 mixer (SSD: a selective,
 * per-head scalar decay) and the depthwise causal convolution it shares with LFM2's short
 * convolution. A family's config names the mixer's fields its own way (Mamba2's `num_heads`,
 * Granite 4's `mamba_n_heads`): a key table says which, so one parser and one graph serve them
 * all. The math is transformers' torch path (modeling_mamba2.py: torch_forward / the chunk scan). */
#ifndef HFX_ARCH_SSM_H
#define HFX_ARCH_SSM_H

#include "arch/nn.h"
#include "arch/weights.h"
#include "hf/config.h"

/* config.json keys of a Mamba2 mixer, and transformers' defaults where a key is absent
 * (default_head_dim 0: expand · hidden / heads, as a head_dim of "auto" also says). */
typedef struct hfx_mamba2_keys {
    const char *heads, *head_dim, *state, *kernel, *expand, *groups, *conv_bias, *proj_bias, *act, *limit;
    int64_t default_heads, default_head_dim, default_state, default_kernel, default_groups;
    double default_expand;
    bool default_conv_bias, default_proj_bias;
    /* Falcon-H1's additions (NULL: the family has none) */
    const char *inner;        /* the inner width itself when set ("mamba_d_ssm"), else expand · hidden */
    const char *norm_switch;  /* whether the gated RMSNorm is there ("mamba_rms_norm", default false):
                                 without it y · silu(gate) */
    const char *norm_first;   /* normalize before the gate ("mamba_norm_before_gate", default true) */
    const char *out_bias;     /* out_proj's bias, apart from in_proj's ("projectors_bias") */
    const char *in_mult;      /* the mixer's input scaled ("ssm_in_multiplier") */
    const char *section_mults; /* in_proj's five sections (gate, x, B, C, dt) scaled ("ssm_multipliers") */
    const char *chunk;        /* the chunked scan's length ("chunk_size", "mamba_chunk_size"): the prompt piece */
    int64_t default_chunk;
    /* Nemotron-H's (expand NULL: the inner width is heads · head_dim, head_dim given) */
    const char *floor;        /* dt's lower clamp alone ("time_step_min"), where limit is NULL ... */
    double default_floor;     /* ... when config.json has none */
    double norm_eps;          /* the gated norm's ε whatever the model's (Zamba2's 1e-5); 0: the model's */
} hfx_mamba2_keys;

typedef struct hfx_mamba2_cfg {
    int64_t heads, head_dim, state, kernel, groups; /* SSM heads of head_dim channels, d_state, conv taps */
    int64_t inner;      /* expand · hidden = heads · head_dim */
    int64_t conv_dim;   /* inner + 2 · groups · state: x, B and C go through the convolution */
    bool conv_bias, proj_bias;
    bool out_bias;      /* out_proj biased (proj_bias unless the family names it apart) */
    bool norm;          /* the gated RMSNorm (else y · silu(gate)) */
    bool norm_first;    /* normalize y, then the gate (Falcon-H1's default), else gate, then normalize */
    double in_mult;     /* h · in_mult before in_proj (1: none) */
    double section_mult[5]; /* in_proj's gate, x, B, C and dt parts scaled (1: none) */
    hfx_activation act; /* after the convolution (silu) */
    double dt_min, dt_max; /* time_step_limit: dt clamped to it (0, ∞ by default: no clamp) */
    double eps;         /* the gated RMSNorm's */
    int64_t chunk;      /* transformers' chunk_size: the prompt piece a caller feeds (hfx_arch_prompt_piece) */
} hfx_mamba2_cfg;

/* Read a Mamba2 mixer's config through `keys`; hidden is the model's width, eps its norms'. */
hfx_status hfx_mamba2_parse(hfx_cfg c, const hfx_mamba2_keys *keys, int64_t hidden, double eps,
                            hfx_mamba2_cfg *out, hfx_error *err);

/* How a Mamba mixer's dt, B and C are normed after x_proj. */
typedef enum {
    HFX_DT_BC_NONE,
    HFX_DT_BC_PLAIN,   /* each RMS-normed without a weight (FalconMamba) */
    HFX_DT_BC_WEIGHTED /* ... and times dt_layernorm / b_layernorm / c_layernorm's weights (Jamba) */
} hfx_dt_bc_norm;

/* A Mamba mixer's config keys (MambaConfig's, or a hybrid's mamba_* ones) and its dt/B/C norms. */
typedef struct hfx_mamba1_keys {
    const char *expand, *state, *kernel, *dt_rank, *conv_bias, *proj_bias, *act;
    hfx_dt_bc_norm dt_bc_norm;
    const char *dt_bc_eps;   /* the norms' ε key (default 1e-6) */
} hfx_mamba1_keys;

/* A Mamba (Mamba1) mixer: a selective scan whose decay exp(dt·A) differs per channel and per state. */
typedef struct hfx_mamba1_cfg {
    int64_t inner;      /* int(expand · hidden) (transformers recomputes it, whatever intermediate_size says) */
    int64_t state, kernel, dt_rank; /* d_state, the convolution's taps, time_step_rank ("auto": ⌈hidden / 16⌉) */
    bool conv_bias, proj_bias;
    hfx_activation act;
    hfx_dt_bc_norm dt_bc_norm; /* dt, B and C normed after x_proj ... */
    double dt_bc_eps;          /* ... with this ε */
} hfx_mamba1_cfg;

/* Read a Mamba mixer's config for a model of width hidden, by `keys` (NULL: MambaConfig's). */
hfx_status hfx_mamba1_parse(hfx_cfg c, const hfx_mamba1_keys *keys, int64_t hidden, hfx_mamba1_cfg *out, hfx_error *err);

/* How a gated delta-net's projections are stored. */
typedef enum {
    HFX_DELTA_NONE,
    HFX_DELTA_GROUPED,  /* in_proj_qkvz, in_proj_ba, laid out per key head (Qwen3-Next) */
    HFX_DELTA_SEPARATE, /* in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, out_proj, norm (Qwen3.5) */
    HFX_DELTA_PER_PROJECTION, /* q_proj, k_proj, v_proj, g_proj (the gate), b_proj, a_proj, o_proj, o_norm at 1e-5;
                                conv1d, or q_conv1d, k_conv1d and v_conv1d one after the other; beta doubled when
                                linear_allow_neg_eigval (default true) (OLMo-Hybrid) */
    HFX_DELTA_KDA,           /* Kimi delta attention: q_proj, k_proj, v_proj, a decay per key channel (forget_gate's
                                f_b_proj(f_a_proj(x)) + dt_bias, times −exp(A_log) of its head after softplus), b_proj,
                                the gate g_b_proj(g_a_proj(x)) through a sigmoid, o_norm (its weight in f32), o_proj;
                                linear_num_heads heads of linear_head_dim for q, k and v (Kimi-Linear) */
    HFX_DELTA_KDA_FULL_RANK  /* Kimi delta attention with full-rank gates, num_attention_heads heads of head_dim (its
                                config's widths, whatever linear_* config.json saved; short_conv_kernel_size taps): f_proj
                                for the decay (A_log one per head),
                                g_proj for the output; the decay bounded, kda_lower_bound·sigmoid(exp(A_log)·(f + dt_bias)),
                                when kda_safe_gate (default true); the output projection "dense" as saved (transformers'
                                o_proj) (BailingHybrid) */
} hfx_delta_proj;

/* A gated delta-net mixer (Qwen3-Next, Qwen3.5's "linear_attention" layers): a depthwise causal
 * convolution over q, k and v, then the gated delta rule on a [k_dim, v_dim] state per value head,
 * S_t = (I − β_t k_t k_tᵀ)·exp(g_t)·S_{t−1} + β_t k_t v_tᵀ, read by o_t = S_tᵀ q_t, and a gated
 * RMSNorm per value head. */
typedef struct hfx_delta_cfg {
    int64_t k_heads, v_heads, k_dim, v_dim, kernel; /* linear_num_key_heads, ..., linear_conv_kernel_dim */
    int64_t key_dim, value_dim, conv_dim;           /* k_heads·k_dim, v_heads·v_dim, 2·key_dim + value_dim */
    hfx_delta_proj proj; /* how its projections are stored */
    double beta_scale;  /* beta's factor after its sigmoid (OLMo-Hybrid's 2: negative eigenvalues allowed) */
    bool channel_decay; /* a log decay per key channel [.., k_dim], not one per head (HFX_DELTA_KDA*) */
    double decay_floor; /* the bounded decay's lower bound, floor·sigmoid(exp(A)·x) (0: −exp(A)·softplus(x)) */
    hfx_activation act; /* after the convolution (hidden_act) */
    bool sigmoid_gate;  /* the gated RMSNorm's gate a sigmoid (Kimi's; output_gate_type "sigmoid", Qwen4-Exp's), else
                           silu */
    double eps;         /* the gated RMSNorm's */
    int factors;        /* the scan's triangular inverse is a product of this many factors: exact for a
                           call of up to 2^factors tokens (the model's max_position_embeddings; a graph
                           whose calls are bounded takes fewer) */
} hfx_delta_cfg;

/* Read a gated delta-net's config (linear_* keys, hidden_act) for a model whose calls are at most
 * max_len tokens; eps is the model's norms'. */
hfx_status hfx_delta_parse(hfx_cfg c, double eps, int64_t max_len, hfx_delta_proj proj, hfx_delta_cfg *out,
                           hfx_error *err);

/* RecurrentGemma's recurrent block: linear_x and linear_y of lru_width, a biased depthwise causal convolution
 * (conv1d_width taps) on x, the RG-LRU (block-diagonal input and recurrence gates, one block per head, a decay per
 * channel), gated by act(y), linear_out. */
typedef struct hfx_rglru_cfg {
    int64_t width, heads, kernel; /* lru_width (absent: hidden), num_attention_heads, conv1d_width */
} hfx_rglru_cfg;

/* Read it for a model of width hidden with `heads` attention heads. */
hfx_status hfx_rglru_parse(hfx_cfg c, int64_t hidden, int64_t heads, hfx_rglru_cfg *out, hfx_error *err);

/* MiniMax's lightning attention: qkv_proj [3·heads·head_dim, hidden] laid out per head [q_h; k_h; v_h], act, padding
 * zeroed; per head a linear attention whose state S_t = λ·S_{t−1} + v_t k_tᵀ is read by o_t = S_t q_t, λ = exp(−slope),
 * slope = 2^(−8(h+1)/heads) · (1 − layer / (layers − 1 + 1e-5) + 1e-5) (transformers' get_slope_rate); the heads'
 * outputs RMS-normed together (norm.weight, ε 1e-6), times sigmoid(output_gate(x)), out_proj. */
typedef struct hfx_lightning_cfg {
    int64_t heads, head_dim, layers; /* num_attention_heads, head_dim, num_hidden_layers */
    int64_t block;                   /* block_size: transformers' piece of a prompt (hfx_arch_prompt_piece) */
    hfx_activation act;              /* hidden_act, on q, k and v */
} hfx_lightning_cfg;

/* xLSTM's mLSTM layer (weight_mode "single"): q, k, v and ogate_preact, the input and forget gates' preactivations
 * (igate_preact, fgate_preact: biased, one per head, soft-capped), the mLSTM cell per head (its matrix memory C, its
 * normalizer n and their stabilizer m), a LayerNorm per head, times sigmoid(ogate), out_proj. */
typedef struct hfx_mlstm_cfg {
    int64_t heads, qk_dim, v_dim; /* num_heads; int(hidden·qk_dim_factor), int(hidden·v_dim_factor) over them */
    double gate_cap;              /* gate_soft_cap: cap·tanh(x / cap) on the gates' preactivations (0: none) */
    double eps, norm_eps;         /* the normalizer's eps; the heads' LayerNorm's norm_eps */
} hfx_mlstm_cfg;

/* Read it (xLSTMConfig's keys) for a model of width hidden. */
hfx_status hfx_mlstm_parse(hfx_cfg c, int64_t hidden, hfx_mlstm_cfg *out, hfx_error *err);

/* RWKV-4's blocks (rwkv.c): the widths its config gives and how its eval-mode forward rescales. */
typedef struct hfx_rwkv_cfg {
    int64_t width;        /* attention_hidden_size (absent or null: hidden): k, v and r of the time mix */
    int64_t intermediate; /* intermediate_size (absent or null: 4·hidden): the channel mix's key */
    int64_t rescale;      /* rescale_every (0: never): transformers' eval forward halves the stream after every
                             rescale-th block and divides block b's output and value weights by 2^(b / rescale) */
} hfx_rwkv_cfg;

/* An RWKV time mix's state across calls (NULL inputs: a prompt, empty). */
typedef struct hfx_rwkv_state {
    hfx_value *shift;      /* [B,1,H]: the previous token's normed input */
    hfx_value *wkv;        /* [B,3,A] f32: the WKV sums num, den and their exponent max, as transformers keeps them
                              (zeros: empty) */
    bool keep;             /* the caller wants them after this call */
    hfx_value *shift_next, *wkv_next; /* out: the same after this call (shift_next always) */
} hfx_rwkv_state;

/* RWKV-4's time mix over h [B,S,hidden] (the block's normed input) → [B,S,hidden], weights under `prefix`
 * ("rwkv.blocks.0.attention"): k, v, r of the token-shifted mixes, the WKV over k and v (a linear attention per channel,
 * its past decayed by exp(time_decay) a token, the current token raised by time_first), sigmoid(r)·wkv, output.
 * Its closed form holds [B,S,S,A] exponents: a caller feeds long prompts in pieces. No padding mask: transformers'
 * RWKV reads none, its padding tokens are tokens. */
hfx_value *hfx_rwkv_time_mix(hfx_graph *g, hfx_weights *w, const hfx_rwkv_cfg *m, const char *prefix, hfx_value *h,
                             hfx_rwkv_state *s);

/* RWKV-4's channel mix over h [B,S,hidden] → [B,S,hidden], weights under `prefix` ("rwkv.blocks.0.feed_forward"):
 * sigmoid(receptance(mix_r))·value(relu(key(mix_k))²), the mixes token-shifted from past [B,1,H] (NULL: zeros); *next
 * the last row of h. */
hfx_value *hfx_rwkv_channel_mix(hfx_graph *g, hfx_weights *w, const hfx_rwkv_cfg *m, const char *prefix, hfx_value *h,
                                hfx_value *past, hfx_value **next);

/* A mixer's state across calls: what it read (NULL: a prompt, zeros) and what it leaves. */
typedef struct hfx_ssm_state {
    hfx_value *conv;      /* [B, conv_dim, kernel − 1]: the convolution's last inputs */
    hfx_value *ssm;       /* [B, heads, head_dim, state] f32: the recurrent state (Mamba1: [B, inner, state];
                             a delta-net: [B, v_heads, k_dim, v_dim]) */
    bool keep;            /* the caller wants the states after this call (a forward pass does not) */
    bool whole_window;    /* conv holds the last kernel inputs, as transformers' cache does (the seed
                             profile), not the kernel − 1 the next call reads */
    hfx_value *conv_next; /* out, when keep: the same after this call */
    hfx_value *ssm_next;
} hfx_ssm_state;

/* The Mamba2 mixer over h [B,S,hidden] → [B,S,hidden], weights under `prefix` ("…layers.3.mixer").
 * real [B,S,1] (1 at this call's real tokens, 0 at padding) zeroes padding as transformers'
 * apply_mask_to_padding_states does; NULL: none. The scan is the SSD form as one chunk (exact for
 * any length; quadratic in S like attention) continued from s->ssm; s->*_next are set when s->keep. */
hfx_value *hfx_mamba2_mixer(hfx_graph *g, hfx_weights *w, const hfx_mamba2_cfg *m, const char *prefix,
                            hfx_value *h, hfx_value *real, hfx_ssm_state *s);

/* The Mamba mixer over h [B,S,hidden] → [B,S,hidden], weights under `prefix`, as hfx_mamba2_mixer.
 * Its scan in one chunk holds [B, inner, state, S, S] decays: a caller feeds long prompts in short
 * pieces (the examples: 16 tokens), continuing from s->ssm. */
hfx_value *hfx_mamba1_mixer(hfx_graph *g, hfx_weights *w, const hfx_mamba1_cfg *m, const char *prefix,
                            hfx_value *h, hfx_value *real, hfx_ssm_state *s);

/* The RG-LRU block over h [B,S,hidden] → [B,S,hidden], weights under `prefix`, act the y branch's activation. The
 * recurrence h_t = a_t·h_{t−1} + √(1 − a_t²)·(i_t·x_t) starts over (a = 0, no √) where pos [B,S] is 0, as transformers
 * resets it; no padding mask (transformers reads none). States: s->conv [B, width, kernel − 1], s->ssm [B, width] f32. */
hfx_value *hfx_rglru_mixer(hfx_graph *g, hfx_weights *w, const hfx_rglru_cfg *m, const char *prefix, hfx_value *h,
                           hfx_value *pos, hfx_activation act, hfx_ssm_state *s);

/* The gated delta-net over h [B,S,hidden] → [B,S,hidden], weights under `prefix` ("…layers.0.linear_attn"),
 * as hfx_mamba2_mixer: s->conv [B, conv_dim, kernel − 1], s->ssm [B, v_heads, k_dim, v_dim] f32. The
 * call is one chunk of transformers' chunked rule, its unit-triangular system inverted by recursive block inversion
 * (factors rounds, each joining pairs of diagonal blocks), exact once 2^factors ≥ S: no loop, no solve. Its cost grows as S³: a caller feeds long prompts in pieces (64). `out` names the
 * output projection where q, k and v are each their own linear (the descriptor's: o_proj, BailingHybrid's dense); the
 * fused layouts' is out_proj. */
hfx_value *hfx_delta_mixer(hfx_graph *g, hfx_weights *w, const hfx_delta_cfg *m, const char *prefix, const char *out,
                           hfx_value *h, hfx_value *real, hfx_ssm_state *s);

/* Lightning attention over h [B,S,hidden] → [B,S,hidden] in layer `layer`, weights under `prefix`, as hfx_mamba2_mixer
 * (Mamba2's scan with dt 1 and A −slope): s->ssm [B, heads, head_dim (values), head_dim (keys)] f32, no convolution. */
hfx_value *hfx_lightning_mixer(hfx_graph *g, hfx_weights *w, const hfx_lightning_cfg *m, const char *prefix,
                               hfx_value *h, int64_t layer, hfx_value *real, hfx_ssm_state *s);

/* The mLSTM layer over h [B,S,hidden] → [B,S,hidden], weights under `prefix` ("backbone.blocks.0.mlstm_layer"), as
 * transformers' recurrent kernels compute it (mlstm_recurrent_step_native, step by step) in closed form over the call:
 * s->ssm [B, heads, DK + 1, DV + 1] f32 holds C [DK, DV], n as its last column and m at [DK, 0] (zeros: the start, as
 * transformers' cache begins). No padding mask: transformers' xLSTM reads none. */
hfx_value *hfx_mlstm_mixer(hfx_graph *g, hfx_weights *w, const hfx_mlstm_cfg *m, const char *prefix, hfx_value *h,
                           hfx_ssm_state *s);

/* Zeros [B, dims...] for a state whose batch is like's axis 0. */
hfx_value *hfx_zero_state(hfx_graph *g, hfx_value *like, hfx_dtype dt, int rank, const int64_t *dims);

/* A convolution's window over a call: its state (the last `kept` inputs before the call; NULL: zeros,
 * a prompt) then x [B,C,S] → [B,C,K−1+S] for hfx_causal_conv, and in *next (when non-NULL) the
 * state after the call, its last `kept` inputs. kept is K − 1 (what the next call reads) or K
 * (transformers' cache keeps the whole window). */
hfx_value *hfx_conv_window(hfx_graph *g, hfx_value *state, hfx_value *x, int64_t K, int64_t kept, hfx_value **next);

/* A depthwise causal convolution: all [B,C,K−1+S] (the state, then this call's S inputs), weight
 * [C,1,K], bias [C] or NULL → [B,C,S], out[:,c,t] = Σ_k weight[c,0,k]·all[:,c,t+k] + bias[c]. */
hfx_value *hfx_causal_conv(hfx_graph *g, hfx_value *all, hfx_value *weight, hfx_value *bias);
/* The same with the taps `dilation` apart: all [B,C,(K−1)·dilation+S], out[:,c,t] = Σ_k weight[c,0,k]·all[:,c,t+k·dilation]
 * (+ bias[c]). */
hfx_value *hfx_causal_conv_dilated(hfx_graph *g, hfx_value *all, hfx_value *weight, hfx_value *bias, int64_t dilation);

#endif
