/* The conformer block (Gulati et al.; transformers' Wav2Vec2ConformerEncoderLayer): half a feed-forward, self-attention
 * (positions by a rotary of the layer's input, or Transformer-XL's relative encodings with their two biases), the
 * convolution module (pointwise to twice the width, GLU, a depthwise convolution, BatchNorm, the activation,
 * pointwise back), the other half feed-forward and a LayerNorm; every sub-block pre-normed and residual. A speech
 * family builds its frames, then runs these layers over them. */
#ifndef HFX_ARCH_CONFORMER_H
#define HFX_ARCH_CONFORMER_H

#include "arch/nn.h"
#include "arch/weights.h"
#include "hf/config.h"

typedef enum {
    HFX_CONFORMER_POS_NONE,
    HFX_CONFORMER_POS_ROTARY,   /* the layer's input turned per head before q and k are projected */
    HFX_CONFORMER_POS_RELATIVE, /* sinusoids of every distance, projected by linear_pos, scored against q + pos_bias_v
                                   and shifted into place; q + pos_bias_u scores the keys */
    HFX_CONFORMER_POS_SHAW_BLOCKS /* Shaw's (Granite Speech): the frames in blocks of `block` (the last padded), each
                                     attending within itself; q scored against a learned embedding of each distance
                                     (names' pos: [2·max_distance + 1, head_dim]) besides the keys */
} hfx_conformer_pos;

/* A lineage's tensor names under a layer, and which linears have biases. */
typedef struct hfx_conformer_names {
    const char *ffn[2], *ffn_in, *ffn_out, *ffn_norm[2]; /* the two half feed-forwards, their linears and norms */
    const char *attn_norm, *proj[4], *pos, *pos_bias[2]; /* q, k, v, out (v NULL: k the fused [k; v]); the distances'
                                                            projection (Shaw's: their embedding table); u, v */
    const char *conv_norm, *conv[3], *batch_norm;        /* pointwise, depthwise, pointwise; BatchNorm */
    const char *final_norm;
} hfx_conformer_names;

extern const hfx_conformer_names hfx_conformer_wav2vec2_names; /* Wav2Vec2ConformerEncoderLayer's */

typedef struct hfx_conformer {
    int64_t hidden, heads, intermediate;
    int64_t kernel;                /* the depthwise convolution's, odd ("same" padding) */
    hfx_activation act;            /* the feed-forwards' and the convolution module's */
    hfx_conformer_pos pos;
    double rotary_base;
    const hfx_conformer_names *names; /* NULL: Wav2Vec2-Conformer's */
    bool linear_bias;              /* the feed-forwards' and attention's linears (Wav2Vec2-Conformer's always) */
    bool conv_bias;                /* the convolution module's three convolutions (Wav2Vec2-Conformer's never) */
    bool pow_freqs;                /* the relative encodings' frequencies as 1/10000^(2j/hidden) (Parakeet), not
                                      exp(2j·−ln 10000/hidden) */
    bool qkv_unbiased;             /* q, k and v without biases where linear_bias gives the others theirs */
    bool depthwise_unbiased;       /* the depthwise convolution without a bias where conv_bias gives the others theirs */
    int64_t conv_inner;            /* the convolution module's width between its pointwise convolutions (0: hidden) */
    int64_t block, max_distance;   /* Shaw's: the frames a block holds; the distances' table spans ±max_distance */
} hfx_conformer;

/* position_embeddings_type ("relative", "rotary" or null), rotary_embedding_base and conv_depthwise_kernel_size of
 * config `c` into *out, whose hidden, heads, intermediate and act the caller has set. (Shaw's lineage sets its own.) */
hfx_status hfx_conformer_parse(hfx_cfg c, hfx_conformer *out, hfx_error *err);

/* What every layer reads, made once from the frames x [B,F,hidden]. */
typedef struct hfx_conformer_inputs {
    hfx_value *pad;        /* [B,1,1,F] (or [B,1,F,F]) f32 attention bias: 0, or the float minimum where masked */
    hfx_value *keep;       /* [B,F,1] of x's dtype, 1 on real frames, 0 on padding: the convolution module zeroes
                              padded frames before its depthwise convolution (Parakeet); NULL: none */
    hfx_value *cos, *sin;  /* rotary: [1,F,1,head_dim] */
    hfx_value *pe;         /* relative: the encodings [1, 2F − 1, hidden] of distances F − 1 down to 1 − F */
    hfx_value *shift;      /* relative: [B,heads,F,F] i64, the column of distance i − j in row i */
    hfx_dim blocks;        /* Shaw's: ⌈F / block⌉ */
    hfx_value *block_real; /* Shaw's: [1, blocks, 1, block, block] bool: false where the query or key is past the frames
                              (the last block's padding) */
    hfx_value *distance;   /* Shaw's: [block, block] i64, the table's row of each query-key distance */
} hfx_conformer_inputs;

/* inv_freq: the rotary's frequencies [head_dim/2] f32 as the checkpoint stores them (a persistent buffer), NULL:
 * θ^(−2j/head_dim) computed. */
void hfx_conformer_prepare(const hfx_conformer *cf, hfx_graph *g, hfx_value *x, hfx_value *pad, hfx_value *inv_freq,
                           hfx_conformer_inputs *out);

/* Layer `layer` ("wav2vec2_conformer.encoder.layers.3") over x [B,F,hidden]: [B,F,hidden]. */
hfx_value *hfx_conformer_layer(const hfx_conformer *cf, hfx_graph *g, hfx_weights *w, const char *layer,
                               const hfx_conformer_inputs *in, hfx_value *x);

/* NeMo's striding subsampling (subsampling.c: Parakeet's, Phi-4-multimodal's): a Conv2d from one channel, then
 * (depthwise, pointwise) pairs, each strided over time and frequency with ReLU after, then a linear from channels ×
 * the remaining bins to the width. Its tensors: <prefix><convs>.<i> (0, then 2, 3, 5, 6, ...: the Sequential's
 * indices), <prefix><linear>. */
typedef struct hfx_nemo_subsampling {
    int64_t channels, kernel, stride, steps, hidden; /* steps: the strided convolutions, log2(subsampling_factor) */
    const char *convs, *linear;
} hfx_nemo_subsampling;

/* The subsampling over features [B,T,mels]: [B,F,hidden]. n [B,1] (i64), each row's real frames, or NULL: where given,
 * every padded step is zeroed after each convolution (Parakeet's masking) and *keep [B,F] bool marks the real frames.
 * Failures are the graph's (NULL). */
hfx_value *hfx_nemo_subsample(const hfx_nemo_subsampling *s, hfx_graph *g, hfx_weights *w, const char *prefix,
                              hfx_value *features, hfx_value *n, hfx_value **keep);

#endif
