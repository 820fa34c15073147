/* Audio language models' towers (audio_tower.h): Whisper's encoder under a lineage's config keys, pooled or not. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/audio_tower.h"
#include "base/status.h"

/* What a lineage's tower does beyond Whisper's encoder. */
static const struct {
    const char *model_type;
    bool pool;
    hfx_audio_form form;
} lineages[] = {{"qwen2_audio_encoder", true, HFX_AUDIO_WHISPER}, {"voxtral_encoder", false, HFX_AUDIO_WHISPER},
                {"audioflamingo3_encoder", true, HFX_AUDIO_WHISPER}, {"qwen3_asr_encoder", false, HFX_AUDIO_CHUNKED}};

/* A Conv2d's (3×3, stride 2, padding 1) output length of n: (n − 1)//2 + 1, as (n + 1)//2 (n ≥ 0) */
static int64_t halved(int64_t n) { return (n + 1) / 2; }

/* Qwen3-ASR's chunks: n_window (half a chunk), n_window_infer (a window's frames), the convolutions' channels, and the
 * sinusoids' rows (max_position_embeddings), which must cover a chunk's frames. */
static hfx_status parse_chunked(hfx_cfg c, hfx_audio_tower *out, hfx_error *err) {
    int64_t half, infer, rows;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "n_window", 50, 1, 1 << 16, &half, err)) ||
        (st = hfx_cfg_int_in_or(c, "n_window_infer", 800, 1, 1 << 20, &infer, err)) ||
        (st = hfx_cfg_int_in_or(c, "downsample_hidden_size", 480, 1, 1 << 16, &out->channels, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_position_embeddings", 13, 1, 1 << 20, &rows, err)))
        return st;
    out->chunk = 2 * half;
    out->positions = halved(halved(halved(out->chunk)));
    out->per_window = infer / out->chunk;
    if (out->positions != 13) /* _get_feat_extract_output_lengths' constant: the tokens it counts a whole chunk */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: n_window %lld: a chunk of %lld frames leaves %lld, and "
                        "transformers counts 13 tokens a chunk (n_window 49 to 52)", c.where, (long long)half,
                        (long long)out->chunk, (long long)out->positions);
    if (out->per_window < 1 || out->per_window > 1024)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: n_window_infer %lld: windows of 1 to 1024 chunks of 2 × n_window "
                        "(%lld) frames", c.where, (long long)infer, (long long)out->chunk);
    if (rows < out->positions)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: max_position_embeddings %lld is fewer than a chunk's %lld frames",
                        c.where, (long long)rows, (long long)out->positions);
    if (out->layers.cfg.hidden % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: d_model %lld: its sinusoids need an even width", c.where,
                        (long long)out->layers.cfg.hidden);
    return HFX_OK;
}

hfx_status hfx_audio_tower_parse(const char *model_type, hfx_cfg c, hfx_audio_tower *out, hfx_error *err) {
    hfx_status st;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; model_type && i < sizeof lineages / sizeof lineages[0]; i++)
        if (strcmp(model_type, lineages[i].model_type) == 0)
            out->pool = lineages[i].pool, out->form = lineages[i].form;
    if ((st = hfx_vision_tower_parse(model_type, c, HFX_TOWER_AUDIO, &out->layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_mel_bins", 128, 1, 1 << 12, &out->mels, err)))
        return st;
    if (out->form == HFX_AUDIO_CHUNKED) return parse_chunked(c, out, err);
    if ((st = hfx_cfg_int_in_or(c, "max_source_positions", 1500, 1, 1 << 16, &out->positions, err))) return st;
    if (out->pool && out->positions < 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: max_source_positions %lld leaves no frame after the tower's pooling "
                                              "of two", c.where, (long long)out->positions);
    return HFX_OK;
}

int64_t hfx_audio_tower_frames(const hfx_audio_tower *t) {
    if (t->form == HFX_AUDIO_CHUNKED) return t->per_window * t->positions;
    return t->pool ? t->positions / 2 : t->positions;
}

void hfx_audio_tower_inputs(const hfx_audio_tower *t, hfx_graph *g, hfx_dim batch, hfx_dtype dtype,
                            const char *mask_name, hfx_value **features, hfx_value **mask) {
    bool chunked = t->form == HFX_AUDIO_CHUNKED;
    int64_t frames = chunked ? t->per_window * t->chunk : 2 * t->positions;
    hfx_dim whole[3] = {batch, hfx_dim_const(t->mels), hfx_dim_const(frames)};
    hfx_dim chunks[4] = {batch, hfx_dim_const(t->per_window), hfx_dim_const(t->mels), hfx_dim_const(t->chunk)};
    *features = hfx_graph_input(g, "input_features", dtype, chunked ? 4 : 3, chunked ? chunks : whole);
    *mask = mask_name ? hfx_graph_input(g, mask_name, HFX_DTYPE_I64, 2, (hfx_dim[]){batch, hfx_dim_const(frames)}) : NULL;
}

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

hfx_value *hfx_audio_sinusoids(hfx_graph *g, int64_t rows, int64_t channels, int64_t first, int64_t step_t,
                               hfx_dtype dtype) {
    int64_t half = channels / 2;
    float *table = malloc((size_t)(rows * channels) * sizeof *table);
    if (!table) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_f32(g, 0.0f);
    }
    float step = (float)(log(10000.0) / (double)(half > 1 ? half - 1 : 1));
    for (int64_t j = 0; j < half; j++) {
        float inv = expf(-step * (float)j);
        for (int64_t r = 0; r < rows; r++) {
            float angle = (float)(first + step_t * r) * inv;
            table[r * channels + j] = sinf(angle), table[r * channels + half + j] = cosf(angle);
        }
    }
    hfx_value *v = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){rows, channels}, table), dtype);
    free(table);
    return v;
}

/* Qwen3-ASR: each window's chunks [N, R, mels, chunk] through the Conv2d front end, [N, R·positions, hidden]; *bias
 * [N,1,1,R·positions] hides each chunk's frames past its real ones (⌈n/8⌉ of its n real mel frames),
 * *lengths [N] counts the real ones (a window's real frames come first: only its last real chunk is partial). */
static hfx_value *chunked_front(const hfx_audio_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                hfx_value *features, hfx_value *mask, hfx_value **bias, hfx_value **lengths) {
    int64_t H = t->layers.cfg.hidden, R = t->per_window, P = t->positions, C = t->channels, in = 1, freq = t->mels;
    hfx_dim N = features->dims[0];
    hfx_value *x = hfx_reshape(g, features, 4, (hfx_dim[]){hfx_dim_scale(N, R), hfx_dim_const(1), hfx_dim_const(t->mels),
                                                            hfx_dim_const(t->chunk)}); /* [N·R, 1, mels, chunk] */
    for (int i = 1; i <= 3; i++, in = C, freq = halved(freq)) {
        hfx_value *k = hfx_weight(w, 4, (int64_t[]){C, in, 3, 3}, "%sconv2d%d.weight", prefix, i);
        hfx_value *b = hfx_weight(w, 1, &C, "%sconv2d%d.bias", prefix, i);
        x = hfx_activate(g, HFX_ACT_GELU, hfx_conv2d(g, x, k, b, (int64_t[]){2, 2}, (int64_t[]){1, 1}, 1,
                                                      (const char *const[]){NULL, NULL}));
    }
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 3, 1, 2}); /* [N·R, P, C, freq] */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){x->dims[0], hfx_dim_const(P), hfx_dim_const(C * freq)});
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){H, C * freq}, "%sconv_out.weight", prefix), NULL);
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_audio_sinusoids(g, P, H, 0, 1, x->dtype)); /* (restarting per chunk) */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(R * P), hfx_dim_const(H)});
    /* each chunk's real mel frames [N,R,1]: differences of the mask's running sum at the chunks' ends (a reshape
     * and a sum over each chunk, then a division, miscount rows past the first in OpenVINO's CPU plugin) */
    int64_t *ends = hfx_arena_alloc(g->arena, (size_t)R * sizeof *ends), axis = 1;
    if (!ends) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    for (int64_t r = 0; r < R; r++) ends[r] = (r + 1) * t->chunk - 1;
    hfx_value *upto = hfx_gather(g, hfx_cumsum(g, hfx_cast(g, mask, HFX_DTYPE_I64), 1),
                                 hfx_const_bytes(g, HFX_DTYPE_I64, 1, &R, ends), 1); /* [N,R] */
    hfx_value *n = upto;
    if (R > 1) {
        hfx_value *zero = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, upto, 1, 0, 1), hfx_const_i64(g, 0));
        n = hfx_op2(g, HFX_OP_SUB, upto, hfx_concat(g, 2, (hfx_value *[]){zero, hfx_slice(g, upto, 1, 0, R - 1)}, 1));
    }
    n = hfx_unsqueeze(g, n, 2);
    /* three halvings rounding up are one division by 8 rounding up (⌈⌈n/a⌉/b⌉ = ⌈n/ab⌉) */
    n = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, n, hfx_const_i64(g, 7)), hfx_const_i64(g, 8));
    hfx_value *idx = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, P), hfx_const_i64(g, 1), hfx_dim_const(P));
    hfx_value *real = hfx_reshape(g, hfx_op2(g, HFX_OP_LESS, idx, n), 2, (hfx_dim[]){N, hfx_dim_const(R * P)});
    /* (each chunk's ⌈n/8⌉ ≤ P: the sum of the counts) */
    *lengths = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, n, 1, &axis), 1, &N);
    *bias = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, real, 1), 1), hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
    return x;
}

hfx_value *hfx_audio_tower_states(const hfx_audio_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *features, hfx_value *mask, hfx_value **lengths) {
    const hfx_vision_cfg *v = &t->layers.cfg;
    if (t->form == HFX_AUDIO_CHUNKED) {
        hfx_value *bias = NULL, *x = chunked_front(t, g, w, prefix, features, mask, &bias, lengths);
        x = hfx_vision_layers(&t->layers, g, w, prefix, x, bias);
        char n[160];
        snprintf(n, sizeof n, "%sln_post", prefix);
        return hfx_vision_norm(&t->layers, g, w, n, x);
    }
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
