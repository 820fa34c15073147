/* The encoder-decoder family's audio front ends (seq2seq.h): Whisper's two convolutions over log-mel features and
 * its stored positions; Moonshine's three over the waveform, GroupNorm and the frames' mask. */
#include <stdlib.h>

#include "arch/seq2seq.h"

#include "arch/nn.h"
#include "arch/weights.h"

/* nn.Conv1d(kernel 3, padding 1, `stride`) + bias over x [B,F,C] (frames first), as three linears
 * over shifted frames — y[t] = Σₖ x[stride·t + k − 1]·W[:, :, k]ᵀ + b, a zero frame at each end —
 * then GELU: [B,F',O]. The same sum as the convolution's, in another order (≤ 1 ulp per term). */
static hfx_value *conv3_gelu(s2s_ctx *c, hfx_value *x, int64_t in, int64_t out, int64_t stride, const char *name) {
    hfx_graph *g = c->g;
    int64_t F = x->dims[1].c, Fo = (F - 1) / stride + 1;
    hfx_value *zero = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, x, 1, 0, 1), hfx_const_scalar(g, x->dtype, 0.0)); /* [B,1,C] */
    hfx_value *padded = hfx_concat(g, 3, (hfx_value *[]){zero, x, zero}, 1);                                  /* [B,F+2,C] */
    hfx_value *w = hfx_weight(c->w, 3, (int64_t[]){out, in, 3}, "%s.weight", name);
    int64_t *frames = hfx_arena_alloc(g->arena, (size_t)Fo * sizeof *frames);
    if (!frames) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    hfx_value *y = NULL;
    for (int64_t k = 0; k < 3; k++) {
        for (int64_t t = 0; t < Fo; t++) frames[t] = stride * t + k; /* padded frame of input frame stride·t + k − 1 */
        hfx_value *taps = hfx_gather(g, padded, hfx_const_bytes(g, HFX_DTYPE_I64, 1, &Fo, frames), 1);
        hfx_value *yk = hfx_linear(g, taps, hfx_const_select(g, w, 2, k), NULL);
        y = y ? hfx_op2(g, HFX_OP_ADD, y, yk) : yk;
    }
    y = hfx_op2(g, HFX_OP_ADD, y, hfx_weight(c->w, 1, &out, "%s.bias", name));
    return hfx_activate(g, HFX_ACT_GELU, y);
}

/* Whisper's encoder over input_features [B, mels, 2·max_source_positions]: the two convolutions,
 * every position's row of the stored table added, the layers unmasked. */
hfx_value *hfx_s2s_encode_log_mel(s2s_ctx *c, hfx_value *features) {
    hfx_graph *g = c->g;
    const seq2seq_cfg *m = c->m;
    int64_t H = m->hidden, P = m->source_positions;
    hfx_value *x = hfx_transpose(g, features, 3, (int64_t[]){0, 2, 1}); /* [B,F,mels] */
    x = conv3_gelu(c, x, m->mels, H, 1, "model.encoder.conv1");
    x = conv3_gelu(c, x, H, H, 2, "model.encoder.conv2");               /* [B,P,H] */
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_weight(c->w, 2, (int64_t[]){P, H}, "model.encoder.embed_positions.weight"));
    return hfx_s2s_encoder_layers(c, x, hfx_s2s_no_mask(c, P));
}

/* Moonshine's three convolutions over the waveform: kernel and stride each (transformers' constants). */
static const int64_t waveform_convs[3][2] = {{127, 64}, {7, 3}, {3, 2}};

/* The frames of n samples through them (0 where n is too short for one). */
int64_t hfx_s2s_waveform_frames(int64_t n) {
    for (int i = 0; i < 3; i++) n = n < waveform_convs[i][0] ? 0 : (n - waveform_convs[i][0]) / waveform_convs[i][1] + 1;
    return n;
}

/* The fewest samples that make one frame. */
int64_t hfx_s2s_waveform_receptive_field(void) {
    int64_t n = 1;
    for (int i = 2; i >= 0; i--) n = (n - 1) * waveform_convs[i][1] + waveform_convs[i][0];
    return n;
}

/* Moonshine's encoder over input_values and attention_mask [B,N]: conv1 (no bias), tanh, GroupNorm of one
 * group, conv2 + GELU, conv3 + GELU → [B,F,hidden]; the frame mask [B,F] (i64, also returned in *frame_mask)
 * every 384th sample's (the strides' product), as transformers downsamples it; then the layers. */
hfx_value *hfx_s2s_encode_waveform(s2s_ctx *c, hfx_value *values, hfx_value *mask, hfx_value **frame_mask) {
    hfx_graph *g = c->g;
    int64_t H = c->m->hidden, width[4] = {1, H, 2 * H, H};
    static const char *const frames[3] = {"conv1_frames", "conv2_frames", "encoder_sequence_length"};
    hfx_value *x = hfx_unsqueeze(g, values, 1); /* [B,1,N] */
    for (int i = 0; i < 3 && !g->failed; i++) {
        hfx_value *w = hfx_weight(c->w, 3, (int64_t[]){width[i + 1], width[i], waveform_convs[i][0]},
                                  "model.encoder.conv%d.weight", i + 1);
        hfx_value *b = i ? hfx_weight(c->w, 1, &width[i + 1], "model.encoder.conv%d.bias", i + 1) : NULL;
        x = hfx_conv1d(g, x, w, b, waveform_convs[i][1], 0, 1, frames[i]);
        if (i == 0)
            x = hfx_group_norm(g, hfx_op1(g, HFX_OP_TANH, x), 1, hfx_weight(c->w, 1, &H, "model.encoder.groupnorm.weight"),
                               hfx_weight(c->w, 1, &H, "model.encoder.groupnorm.bias"), 1e-5);
        else
            x = hfx_activate(g, HFX_ACT_GELU, x);
    }
    x = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1}); /* [B,F,H] */
    int64_t stride = waveform_convs[0][1] * waveform_convs[1][1] * waveform_convs[2][1];
    hfx_value *at = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, x, 1), hfx_const_i64(g, 1), x->dims[1]);
    *frame_mask = hfx_gather(g, mask, hfx_op2(g, HFX_OP_MUL, at, hfx_const_i64(g, stride)), 1);
    return hfx_s2s_encoder_layers(c, x, hfx_s2s_padding_bias(c, *frame_mask));
}
