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
    HFX_CONFORMER_POS_RELATIVE  /* sinusoids of every distance, projected by linear_pos, scored against q + pos_bias_v
                                   and shifted into place; q + pos_bias_u scores the keys */
} hfx_conformer_pos;

typedef struct hfx_conformer {
    int64_t hidden, heads, intermediate;
    int64_t kernel;                /* the depthwise convolution's, odd ("same" padding) */
    hfx_activation act;            /* the feed-forwards' and the convolution module's */
    hfx_conformer_pos pos;
    double rotary_base;
} hfx_conformer;

/* position_embeddings_type ("relative", "rotary" or null), rotary_embedding_base and conv_depthwise_kernel_size of
 * config `c` into *out, whose hidden, heads, intermediate and act the caller has set. */
hfx_status hfx_conformer_parse(hfx_cfg c, hfx_conformer *out, hfx_error *err);

/* What every layer reads, made once from the frames x [B,F,hidden]. */
typedef struct hfx_conformer_inputs {
    hfx_value *pad;        /* [B,1,1,F] f32 attention bias: 0, or the float minimum for padded frames */
    hfx_value *cos, *sin;  /* rotary: [1,F,1,head_dim] */
    hfx_value *pe;         /* relative: the encodings [1, 2F − 1, hidden] of distances F − 1 down to 1 − F */
    hfx_value *shift;      /* relative: [B,heads,F,F] i64, the column of distance i − j in row i */
} hfx_conformer_inputs;

/* inv_freq: the rotary's frequencies [head_dim/2] f32 as the checkpoint stores them (a persistent buffer), NULL:
 * θ^(−2j/head_dim) computed. */
void hfx_conformer_prepare(const hfx_conformer *cf, hfx_graph *g, hfx_value *x, hfx_value *pad, hfx_value *inv_freq,
                           hfx_conformer_inputs *out);

/* Layer `layer` ("wav2vec2_conformer.encoder.layers.3") over x [B,F,hidden]: [B,F,hidden]. */
hfx_value *hfx_conformer_layer(const hfx_conformer *cf, hfx_graph *g, hfx_weights *w, const char *layer,
                               const hfx_conformer_inputs *in, hfx_value *x);

#endif
