/* Audio language models' towers (audio_tower.h): Whisper's encoder under a lineage's config keys, pooled or not. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/audio_tower.h"
#include "base/status.h"

/* What a lineage's tower does beyond Whisper's encoder. */
static const struct {
    const char *model_type;
    bool pool;
} lineages[] = {{"qwen2_audio_encoder", true}, {"voxtral_encoder", false}, {"audioflamingo3_encoder", true}};

hfx_status hfx_audio_tower_parse(const char *model_type, hfx_cfg c, hfx_audio_tower *out, hfx_error *err) {
    hfx_status st;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; model_type && i < sizeof lineages / sizeof lineages[0]; i++)
        if (strcmp(model_type, lineages[i].model_type) == 0) out->pool = lineages[i].pool;
    if ((st = hfx_vision_tower_parse(model_type, c, HFX_TOWER_AUDIO, &out->layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_mel_bins", 128, 1, 1 << 12, &out->mels, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_source_positions", 1500, 1, 1 << 16, &out->positions, err)))
        return st;
    if (out->pool && out->positions < 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: max_source_positions %lld leaves no frame after the tower's pooling "
                                              "of two", c.where, (long long)out->positions);
    return HFX_OK;
}

int64_t hfx_audio_tower_frames(const hfx_audio_tower *t) { return t->pool ? t->positions / 2 : t->positions; }

/* nn.Conv1d(kernel 3, padding 1, stride) + bias, then GELU, over x [N, in, F]: [N, out, F'] */
static hfx_value *conv_gelu(hfx_graph *g, hfx_weights *w, hfx_value *x, int64_t in, int64_t out, int64_t stride,
                            const char *prefix, const char *name) {
    hfx_value *k = hfx_weight(w, 3, (int64_t[]){out, in, 3}, "%s%s.weight", prefix, name);
    hfx_value *b = hfx_weight(w, 1, &out, "%s%s.bias", prefix, name);
    return hfx_activate(g, HFX_ACT_GELU, hfx_conv1d(g, x, k, b, stride, 1, 1, NULL));
}

/* [N,1,1,P] f32 from the feature mask [N, 2P]: 0 for a clip's first ⌈real/2⌉ frames (transformers' (n − 1)//2 + 1),
 * the float minimum past them; *lengths [N] the frames the tower outputs of them (halved again where it pools) */
static hfx_value *frame_bias(const hfx_audio_tower *t, hfx_graph *g, hfx_value *mask, hfx_value **lengths) {
    int64_t axis = 1, P = t->positions;
    hfx_value *real = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, mask, HFX_DTYPE_I64), 1, &axis); /* [N,1] */
    /* (n − 1)//2 + 1 as (n + 1)//2: the same for n ≥ 0, without a negative dividend */
    hfx_value *frames = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, real, hfx_const_i64(g, 1)), hfx_const_i64(g, 2));
    /* (f − 2)//2 + 1 as f//2 */
    hfx_value *out = t->pool ? hfx_op2(g, HFX_OP_DIV, frames, hfx_const_i64(g, 2)) : frames;
    *lengths = hfx_reshape(g, out, 1, (hfx_dim[]){mask->dims[0]});
    hfx_value *idx = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, P), hfx_const_i64(g, 1), hfx_dim_const(P));
    hfx_value *hidden = hfx_op2(g, HFX_OP_GREATER_EQUAL, hfx_unsqueeze(g, idx, 0), frames); /* [N,P] */
    return hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, hidden, 1), 1), hfx_const_f32(g, -FLT_MAX),
                     hfx_const_f32(g, 0.0f));
}

/* [1,1,1,P] f32 zeros: every frame visible (a tower without a mask reads whole windows) */
static hfx_value *visible(hfx_graph *g, int64_t P) {
    float *zeros = calloc((size_t)P, sizeof *zeros);
    if (!zeros) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_f32(g, 0.0f);
    }
    hfx_value *bias = hfx_const_bytes(g, HFX_DTYPE_F32, 4, (int64_t[]){1, 1, 1, P}, zeros);
    free(zeros);
    return bias;
}

hfx_value *hfx_audio_tower_states(const hfx_audio_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *features, hfx_value *mask, hfx_value **lengths) {
    const hfx_vision_cfg *v = &t->layers.cfg;
    int64_t H = v->hidden, P = t->positions;
    hfx_value *x = conv_gelu(g, w, features, t->mels, H, 1, prefix, "conv1");
    x = conv_gelu(g, w, x, H, H, 2, prefix, "conv2");
    x = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1}); /* [N,P,H] */
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_weight(w, 2, (int64_t[]){P, H}, "%sembed_positions.weight", prefix));
    hfx_value *bias = mask ? frame_bias(t, g, mask, lengths) : visible(g, P);
    x = hfx_vision_layers(&t->layers, g, w, prefix, x, bias);
    if (t->pool) { /* AvgPool1d(2) over the frames: an odd last one dropped */
        hfx_dim N = x->dims[0];
        if (P % 2) x = hfx_slice(g, x, 1, 0, P - 1);
        x = hfx_reshape(g, x, 4, (hfx_dim[]){N, hfx_dim_const(P / 2), hfx_dim_const(2), hfx_dim_const(H)});
        x = hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 1, (int64_t[]){2}); /* [N,P/2,1,H] */
        x = hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(P / 2), hfx_dim_const(H)});
    }
    char n[160];
    snprintf(n, sizeof n, "%slayer_norm", prefix);
    return hfx_vision_norm(&t->layers, g, w, n, x);
}
