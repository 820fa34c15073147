/* Small building blocks shared by architecture builders: activations by transformers' names
 * (ACT2FN) and LayerNorm, written with the same operation order as PyTorch computes them. */
#ifndef HFX_ARCH_NN_H
#define HFX_ARCH_NN_H

#include "hf/config.h"
#include "ir/graph.h"

typedef enum {
    HFX_ACT_SILU,      /* "silu", "swish": x·sigmoid(x) */
    HFX_ACT_GELU,      /* "gelu": 0.5·x·(1 + erf(x/√2)) */
    HFX_ACT_GELU_TANH, /* "gelu_pytorch_tanh", "gelu_new": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
    HFX_ACT_RELU,      /* "relu" */
    HFX_ACT_TANH,      /* "tanh" (DeBERTa's pooler) */
    HFX_ACT_QUICK_GELU, /* "quick_gelu" (CLIP): x·sigmoid(1.702·x) */
    HFX_ACT_RELU2,      /* "relu2": relu(x)² (Arcee, NanoChat) */
    HFX_ACT_SIGMOID,    /* "sigmoid" (a GLU's gate: Phi-4-multimodal's conv_glu_type) */
    HFX_ACT_XIELU       /* "xielu" (Apertus): learned, its parameters the MLP's act_fn.* weights; a decoder's
                           dense MLP builds it (arch/ffn.c), hfx_activate refuses it */
} hfx_activation;

/* The activation transformers names `name`; false when hfx does not know it. */
bool hfx_activation_from_name(const char *name, hfx_activation *out);

/* Comma-separated names hfx_activation_from_name accepts, for messages. */
const char *hfx_activation_names(void);

/* The activation config `c` names under `key` (`fallback` where it names none); one hfx does not know is refused by
 * name (HFX_ERR_UNSUPPORTED). */
hfx_status hfx_cfg_activation(hfx_cfg c, const char *key, const char *fallback, hfx_activation *out, hfx_error *err);

hfx_value *hfx_activate(hfx_graph *g, hfx_activation act, hfx_value *x);

/* nn.LayerNorm over the last axis: (x − mean)·1/√(var + eps)·w + b (w and b may be NULL: OLMo's has
 * neither). */
hfx_value *hfx_layer_norm(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *b, double eps);

/* nn.BatchNorm1d in eval over the channels of x [B,C,F]: (x − mean)/√(var + eps)·w + b, each statistic and
 * parameter given as [C,1] (its running statistics). */
hfx_value *hfx_batch_norm(hfx_graph *g, hfx_value *x, hfx_value *mean, hfx_value *var, hfx_value *w, hfx_value *b,
                          double eps);

/* nn.GroupNorm over x [B,C,F]: the channels in `groups` runs, each run normalized over its channels and frames
 * together ((x − mean)/√(var + eps)), then each channel scaled by w [C] and shifted by b [C]. */
hfx_value *hfx_group_norm(hfx_graph *g, hfx_value *x, int64_t groups, hfx_value *w, hfx_value *b, double eps);

/* Holds a waveform's sample axis `seq` (a constant, or one symbol) to the `need` samples `what` makes one frame of:
 * a constant below it is HFX_ERR_INVALID, a symbol whose maximum is below it HFX_ERR_UNSUPPORTED; a symbol's minimum
 * is raised to it (every row then has a frame, and each strided convolution's derived length is at least one). */
hfx_status hfx_samples_at_least(hfx_graph *g, hfx_dim seq, int64_t need, const char *what, hfx_error *err);

/* RMSNorm without a weight over the last axis: x·1/√(mean(x²) + eps) computed in f32, cast back to x's
 * dtype (NanoChat's norms, Llama 4's L2Norm, Gemma 4's value norm, FalconMamba's dt/B/C). */
hfx_value *hfx_rms_plain(hfx_graph *g, hfx_value *x, double eps);

/* Its factor alone: x f32 [..., n] → 1/√(mean(x²) + eps) [..., 1] f32 (HY V4's hyper-connections scale their mixes by
 * it). */
hfx_value *hfx_rms_factor(hfx_graph *g, hfx_value *x, double eps);

/* softplus as torch computes it: ln(1 + eˣ), x itself above 20 (its threshold). */
hfx_value *hfx_softplus(hfx_graph *g, hfx_value *x);

/* [..., n] of `dtype`: 1 where the last axis' index equals idx [...] (i64), 0 elsewhere (a pick by one-hot products or
 * sums: exact, the others weigh 0). */
hfx_value *hfx_one_hot(hfx_graph *g, hfx_value *idx, int64_t n, hfx_dtype dtype);

/* Of positions at [S] (i64) over consecutive segments of counts [N] (i64, in order): each one's segment [S] (how many
 * segments end at or before it), and in *within its offset in that segment [S]. */
hfx_value *hfx_segment_of(hfx_graph *g, hfx_value *at, hfx_value *counts, hfx_value **within);

/* softmax(q·kᵀ·scale + bias)·v over the last two axes, as transformers' eager attention computes it, for any rank
 * (2..8; the batch axes broadcast as matmul's do) and any bias (of q's dtype, broadcastable to the scores; NULL:
 * none): attention hfx_attention's rank-4 form cannot hold (windows beside a symbolic batch, channel groups). */
hfx_value *hfx_attend_any_rank(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias, double scale);

/* ⌈n / block⌉: a constant, or the symbol `name` derived from n. */
hfx_dim hfx_blocks_of(hfx_graph *g, hfx_dim n, int64_t block, const char *name);

/* x [B, T, W] zero-padded at the end of axis 1 to whole blocks of `block` rows: [B, ⌈T/block⌉·block, W], the block
 * count (hfx_blocks_of, symbol `name`) in *blocks (Granite Speech's attention blocks and projector windows). */
hfx_value *hfx_pad_to_blocks(hfx_graph *g, hfx_value *x, int64_t block, const char *name, hfx_dim *blocks);

/* transformers' StaticLayer.update: x [B,H,S,D] written at slots n .. n+S−1 (n its write counter, an i64 scalar) of
 * `cache` [B,H,M,D], or (NULL: a prefill starts it) of `slots` zeros, which must be a number (else fails g and
 * returns x). *written: those slots [S], made at the first call (NULL) and reused by the next (keys, then values).
 * The caller advances the counter after (the seed's loops bind its old and new value to one buffer). */
hfx_value *hfx_static_layer_write(hfx_graph *g, hfx_value *cache, hfx_value *x, hfx_value *n, hfx_dim slots,
                                  hfx_value **written);

#endif
