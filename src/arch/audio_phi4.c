/* Phi-4-multimodal's audio encoder (transformers' Phi4MultimodalAudioModel, audio_tower.h): the features normalized by
 * the stored global mean and inverse deviation, NeMo's striding subsampling (conformer.h), then conformer layers of its
 * own form — a gated feed-forward (gate_up_proj: up, then the gate) at half weight, self-attention under a learned
 * bias per clipped distance, a convolution module (a gated pointwise convolution with two learned offsets, a causal
 * depthwise convolution, a pointwise one, the activation, another pointwise one), the other half feed-forward and a
 * LayerNorm.
 *
 * transformers runs an audio of more than 500 frames (after subsampling) in chunks of 500, the last padded with zero
 * frames that attend and are attended to like the others, and a shorter one whole. Both are one graph here: the frames
 * always in chunks of 500, the padding's keys hidden where there is one chunk (where transformers has no padding:
 * causal convolutions and per-frame layers leave the real frames as they are) and visible where there are more.
 *
 * Its attention "mask" is added, not applied: transformers adds the boolean mask of each key (a real frame of the clip,
 * within the streaming chunks of chunk_size frames and left_chunk before) to the distance bias, so a key it names gets
 * 1 more than one it does not. That is what is written, as transformers computes it when given audio_attention_mask —
 * except for one clip whose mask is all ones, computed as transformers computes it without a mask (which its processor
 * passes for one clip): the same but for audio of more than one chunk, whose last chunk's padding it names then. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/audio_tower.h"
#include "arch/relative.h"
#include "base/status.h"

enum { CHUNK = 500 }; /* transformers' max_seq_len: the frames attending together */

/* The fields its forward pins to one value: each refused by name where another would change it or break it */
static hfx_status fixed_fields(hfx_cfg c, const hfx_phi4_audio *t, int64_t reduction, hfx_error *err) {
    int64_t ext, dsoc, downsample;
    const char *nemo;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "ext_pw_out_channel", t->hidden, 1, 1 << 16, &ext, err)) ||
        (st = hfx_cfg_int_in_or(c, "depthwise_separable_out_channel", t->hidden, 1, 1 << 16, &dsoc, err)) ||
        (st = hfx_cfg_int_in_or(c, "downsample_rate", 1, 1, 64, &downsample, err)) ||
        (st = hfx_cfg_str_or(c, "nemo_activation", "relu", &nemo, err)))
        return st;
    if (ext != t->hidden || dsoc != t->hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: ext_pw_out_channel %lld and depthwise_separable_out_channel %lld must "
                        "be hidden_size %lld (the convolution module's convolutions chain through that width)", c.where,
                        (long long)ext, (long long)dsoc, (long long)t->hidden);
    if (downsample != 1)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: downsample_rate %lld: transformers' encoder gives hidden_size "
                        "frames, which its projection reads as hidden_size × downsample_rate", c.where,
                        (long long)downsample);
    if (reduction != (int64_t)1 << t->subsampling.steps)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: time_reduction %lld is not a power of two (the subsampling's "
                        "strides and the mask's length disagree)", c.where, (long long)reduction);
    if (strcmp(nemo, "relu") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: nemo_activation '%s' is not written (relu)", c.where, nemo);
    return HFX_OK;
}

hfx_status hfx_phi4_audio_parse(hfx_cfg c, hfx_phi4_audio *out, hfx_error *err) {
    hfx_phi4_audio t = {0};
    int64_t reduction;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "hidden_size", 1024, 1, 1 << 16, &t.hidden, err)) ||
        (st = hfx_cfg_int_in_or(c, "intermediate_size", 1536, 1, 1 << 20, &t.intermediate, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_blocks", 24, 0, 4096, &t.layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_attention_heads", 16, 1, 4096, &t.heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "input_size", 80, 1, 1 << 12, &t.mels, err)) ||
        (st = hfx_cfg_int_in_or(c, "chunk_size", -1, -1, 1 << 20, &t.chunk, err)) ||
        (st = hfx_cfg_int_in_or(c, "left_chunk", 18, 0, 1 << 20, &t.left, err)) ||
        (st = hfx_cfg_int_in_or(c, "kernel_size", 3, 1, 1 << 10, &t.kernel, err)) ||
        (st = hfx_cfg_int_in_or(c, "depthwise_multiplier", 1, 1, 64, &t.multiplier, err)) ||
        (st = hfx_cfg_int_in_or(c, "time_reduction", 8, 2, 256, &reduction, err)) ||
        (st = hfx_cfg_int_in_or(c, "nemo_conv_channels", 1024, 1, 1 << 16, &t.subsampling.channels, err)) ||
        (st = hfx_cfg_int_in_or(c, "bias_max_distance", 1000, 1, 1 << 16, &t.max_distance, err)) ||
        (st = hfx_cfg_bool_or(c, "bias_symmetric", false, &t.symmetric, err)) ||
        (st = hfx_cfg_activation(c, "activation", "swish", &t.act, err)) ||
        (st = hfx_cfg_activation(c, "conv_activation", "swish", &t.conv_act, err)) ||
        (st = hfx_cfg_activation(c, "conv_glu_type", "swish", &t.glu_act, err)))
        return st;
    while ((int64_t)1 << (t.subsampling.steps + 1) <= reduction) t.subsampling.steps++; /* int(math.log2(factor)) */
    t.subsampling.kernel = 3, t.subsampling.stride = 2, t.subsampling.hidden = t.hidden;
    t.subsampling.convs = "embed.conv", t.subsampling.linear = "embed.out";
    if ((st = fixed_fields(c, &t, reduction, err))) return st;
    if (t.hidden % t.heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld",
                        c.where, (long long)t.hidden, (long long)t.heads);
    if (t.chunk == 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: chunk_size 0 (streaming chunks need a positive size; -1: none)",
                        c.where);
    if (t.symmetric && t.max_distance < CHUNK) /* |−max_distance| would be past its table */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: bias_symmetric with bias_max_distance %lld: transformers' table "
                        "has no row for the distance %lld that %d frames reach", c.where, (long long)t.max_distance,
                        (long long)t.max_distance, CHUNK);
    *out = t;
    return HFX_OK;
}

typedef struct phi4_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const hfx_phi4_audio *t;
    char layer[192];  /* "<prefix>encoders.<i>" */
    hfx_value *bias;  /* [N, chunks · heads, CHUNK, CHUNK] of the frames' dtype */
} phi4_ctx;

/* A kernel-1 Conv1d `<layer>.<name>` [out, in, 1] as a linear over x [..., in] */
static hfx_value *pointwise(phi4_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    hfx_value *wt = hfx_const_flatten(c->g, hfx_weight(c->w, 3, (int64_t[]){out, in, 1}, "%s.%s.weight", c->layer, name),
                                      1);
    return hfx_linear(c->g, x, wt, hfx_weight(c->w, 1, &out, "%s.%s.bias", c->layer, name));
}

/* x's last axis [from, from + n) */
static hfx_value *part(hfx_graph *g, hfx_value *x, int64_t from, int64_t n) {
    return hfx_slice(g, x, x->rank - 1, from, from + n);
}

/* feed_forward_in / feed_forward_out: LayerNorm, gate_up_proj, up · act(gate), down_proj */
static hfx_value *feed_forward(phi4_ctx *c, hfx_value *x, const char *name) {
    int64_t D = c->t->hidden, I = c->t->intermediate;
    hfx_value *h = hfx_layer_norm_named(c->w, x, D, 1e-5, "%s.%s.layer_norm", c->layer, name);
    h = hfx_linear_named(c->w, h, D, 2 * I, true, "%s.%s.gate_up_proj", c->layer, name);
    h = hfx_op2(c->g, HFX_OP_MUL, part(c->g, h, 0, I), hfx_activate(c->g, c->t->act, part(c->g, h, I, I)));
    return hfx_linear_named(c->w, h, I, D, true, "%s.%s.down_proj", c->layer, name);
}

/* self_attn over x [N, chunks, CHUNK, hidden]: q, k, v, o biased, the bias added to the scores (the chunks and heads
 * on one axis: a rank-4 attention) */
static hfx_value *attention(phi4_ctx *c, hfx_value *x) {
    hfx_graph *g = c->g;
    int64_t D = c->t->hidden, H = c->t->heads, hd = D / H;
    hfx_dim N = x->dims[0], chunks = x->dims[1];
    const char *proj[3] = {"q_proj", "k_proj", "v_proj"};
    hfx_value *qkv[3];
    for (int i = 0; i < 3; i++) {
        hfx_value *y = hfx_linear_named(c->w, x, D, D, true, "%s.self_attn.%s", c->layer, proj[i]);
        y = hfx_reshape(g, y, 5, (hfx_dim[]){N, chunks, hfx_dim_const(CHUNK), hfx_dim_const(H), hfx_dim_const(hd)});
        y = hfx_transpose(g, y, 5, (int64_t[]){0, 1, 3, 2, 4}); /* [N, chunks, H, CHUNK, hd] */
        qkv[i] = hfx_reshape(g, y, 4, (hfx_dim[]){N, hfx_dim_scale(chunks, H), hfx_dim_const(CHUNK), hfx_dim_const(hd)});
    }
    hfx_value *o = hfx_attend_any_rank(g, qkv[0], qkv[1], qkv[2], c->bias, 1.0 / sqrt((double)hd));
    o = hfx_reshape(g, o, 5, (hfx_dim[]){N, chunks, hfx_dim_const(H), hfx_dim_const(CHUNK), hfx_dim_const(hd)});
    o = hfx_reshape(g, hfx_transpose(g, o, 5, (int64_t[]){0, 1, 3, 2, 4}), 4,
                    (hfx_dim[]){N, chunks, hfx_dim_const(CHUNK), hfx_dim_const(D)});
    return hfx_linear_named(c->w, o, D, D, true, "%s.self_attn.o_proj", c->layer);
}

/* conv: LayerNorm, the gated pointwise convolution (+ b1, × act(· + b2)), the causal depthwise convolution (padded
 * kernel − 1 each side, the last kernel − 1 outputs dropped), the pointwise one, the activation, ext_pw_conv_1d */
static hfx_value *convolution(phi4_ctx *c, hfx_value *x) {
    hfx_graph *g = c->g;
    int64_t D = c->t->hidden, k = c->t->kernel, M = D * c->t->multiplier;
    hfx_value *h = hfx_layer_norm_named(c->w, x, D, 1e-5, "%s.conv.layer_norm", c->layer);
    h = pointwise(c, h, D, 2 * D, "conv.glu.ext_pw_conv_1d");
    hfx_value *b[2];
    for (int i = 0; i < 2; i++)
        b[i] = hfx_reshape(g, hfx_weight(c->w, 3, (int64_t[]){1, D, 1}, "%s.conv.glu.b%d", c->layer, i + 1), 1,
                           (hfx_dim[]){hfx_dim_const(D)});
    h = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, part(g, h, 0, D), b[0]),
                hfx_activate(g, c->t->glu_act, hfx_op2(g, HFX_OP_ADD, part(g, h, D, D), b[1])));
    /* the depthwise convolution over each chunk's frames: [N, D, chunks, CHUNK], a (1, k) kernel */
    hfx_value *dw = hfx_reshape(g, hfx_weight(c->w, 3, (int64_t[]){M, 1, k}, "%s.conv.dw_sep_conv_1d.dw_conv.weight",
                                              c->layer),
                                4, (hfx_dim[]){hfx_dim_const(M), hfx_dim_const(1), hfx_dim_const(1), hfx_dim_const(k)});
    h = hfx_conv2d(g, hfx_transpose(g, h, 4, (int64_t[]){0, 3, 1, 2}), dw,
                   hfx_weight(c->w, 1, &M, "%s.conv.dw_sep_conv_1d.dw_conv.bias", c->layer), (int64_t[]){1, 1},
                   (int64_t[]){0, k - 1}, D, (const char *const[]){NULL, NULL});
    h = hfx_transpose(g, hfx_slice(g, h, 3, 0, CHUNK), 4, (int64_t[]){0, 2, 3, 1}); /* [N, chunks, CHUNK, M] */
    h = hfx_activate(g, c->t->conv_act, pointwise(c, h, M, D, "conv.dw_sep_conv_1d.pw_conv"));
    return pointwise(c, h, D, D, "conv.ext_pw_conv_1d");
}

static hfx_value *layer(phi4_ctx *c, hfx_value *x) {
    hfx_graph *g = c->g;
    int64_t D = c->t->hidden;
    hfx_value *half = hfx_const_scalar(g, x->dtype, 0.5);
    hfx_value *r = hfx_op2(g, HFX_OP_ADD, x, hfx_op2(g, HFX_OP_MUL, half, feed_forward(c, x, "feed_forward_in")));
    x = hfx_op2(g, HFX_OP_ADD, r, attention(c, hfx_layer_norm_named(c->w, r, D, 1e-5, "%s.layer_norm_att", c->layer)));
    x = hfx_op2(g, HFX_OP_ADD, x, convolution(c, x));
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_op2(g, HFX_OP_MUL, half, feed_forward(c, x, "feed_forward_out")));
    return hfx_layer_norm_named(c->w, x, D, 1e-5, "%s.layer_norm", c->layer);
}

/* The learned bias of each query-key distance within a chunk [1, 1, heads, CHUNK, CHUNK] f32: the distance clipped to
 * [−max_distance, max_distance − 1], its row |d| (symmetric) or d + max_distance */
static hfx_value *distance_bias(const hfx_phi4_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix) {
    int64_t D = t->max_distance, rows = t->symmetric ? D : 2 * D;
    int64_t *buckets = hfx_arena_alloc(g->arena, (size_t)(2 * D + 1) * sizeof *buckets);
    if (!buckets) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t d = -D; d <= D; d++) {
        int64_t clipped = d > D - 1 ? D - 1 : d, row = t->symmetric ? (clipped < 0 ? -clipped : clipped) : clipped + D;
        buckets[d + D] = row < rows ? row : rows - 1; /* (symmetric, |−D|: past the table, a distance no chunk reaches) */
    }
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){rows, t->heads}, "%srelative_attention_bias_layer.bias_values.weight",
                                  prefix);
    hfx_value *pos = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, CHUNK), hfx_const_i64(g, 1), hfx_dim_const(CHUNK));
    return hfx_unsqueeze(g, hfx_relative_bias(g, table, buckets, D, pos, hfx_const_i64(g, CHUNK), hfx_dim_const(CHUNK)),
                         0);
}

/* Whether key s is in query t's streaming window [CHUNK, CHUNK] bool (chunk_size > 0): its chunk from left_chunk
 * before t's up to t's */
static hfx_value *streaming(const hfx_phi4_audio *t, hfx_graph *g) {
    int64_t *chunk = hfx_arena_alloc(g->arena, CHUNK * sizeof *chunk);
    if (!chunk) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < CHUNK; i++) chunk[i] = i / t->chunk;
    hfx_value *key = hfx_unsqueeze(g, hfx_const_bytes(g, HFX_DTYPE_I64, 1, (int64_t[]){CHUNK}, chunk), 0);
    hfx_value *query = hfx_unsqueeze(g, hfx_const_bytes(g, HFX_DTYPE_I64, 1, (int64_t[]){CHUNK}, chunk), 1);
    return hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_LESS_EQUAL, key, query),
                   hfx_op2(g, HFX_OP_GREATER_EQUAL, key, hfx_op2(g, HFX_OP_SUB, query, hfx_const_i64(g, t->left))));
}

/* The scores' bias [N, chunks · heads, CHUNK, CHUNK] in dtype: the distance bias plus 1 on each key the mask names (a
 * real frame of its clip — of its real features lengths [N] i64 — in the query's streaming window; where `unmasked` (bool, one element),
 * the chunks' padding too); the padding of a lone chunk hidden. */
static hfx_value *scores_bias(const hfx_phi4_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                              hfx_value *lengths, hfx_value *unmasked, hfx_value *frames, hfx_dim chunks,
                              hfx_dtype dtype) {
    hfx_value *n = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, frames, hfx_const_i64(g, CHUNK - 1)),
                           hfx_const_i64(g, CHUNK));
    hfx_value *pos = hfx_range(g, hfx_const_i64(g, 0), hfx_op2(g, HFX_OP_MUL, n, hfx_const_i64(g, CHUNK)),
                               hfx_const_i64(g, 1), hfx_dim_scale(chunks, CHUNK));
    pos = hfx_reshape(g, pos, 2, (hfx_dim[]){chunks, hfx_dim_const(CHUNK)}); /* each key's frame [chunks, CHUNK] */
    /* frame s is one of a clip's ⌈L / time_reduction⌉ where s · time_reduction < L (no integer division: OpenVINO's
     * CPU plugin rounds one over a tensor) */
    hfx_value *scaled = hfx_op2(g, HFX_OP_MUL, pos, hfx_const_i64(g, (int64_t)1 << t->subsampling.steps));
    hfx_value *named = hfx_op2(g, HFX_OP_LESS, hfx_unsqueeze(g, scaled, 0),
                               hfx_unsqueeze(g, hfx_unsqueeze(g, lengths, 1), 2));
    named = hfx_op2(g, HFX_OP_OR, named, hfx_op2(g, HFX_OP_AND, unmasked, hfx_op2(g, HFX_OP_GREATER_EQUAL, pos, frames)));
    named = hfx_unsqueeze(g, hfx_unsqueeze(g, named, 2), 3); /* [N, chunks, 1, 1, CHUNK] */
    if (t->chunk > 0) named = hfx_op2(g, HFX_OP_AND, named, streaming(t, g));
    hfx_value *bias = hfx_op2(g, HFX_OP_ADD, distance_bias(t, g, w, prefix), hfx_cast(g, named, HFX_DTYPE_F32));
    hfx_value *hidden = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_EQUAL, n, hfx_const_i64(g, 1)),
                                hfx_op2(g, HFX_OP_GREATER_EQUAL, pos, frames)); /* [chunks, CHUNK] */
    hidden = hfx_unsqueeze(g, hfx_unsqueeze(g, hidden, 1), 2);             /* [chunks, 1, 1, CHUNK] */
    bias = hfx_where(g, hidden, hfx_const_f32(g, -3.4028234663852886e38f), bias); /* [N, chunks, heads, CHUNK, CHUNK] */
    bias = hfx_reshape(g, bias, 4, (hfx_dim[]){lengths->dims[0], hfx_dim_scale(chunks, t->heads), hfx_dim_const(CHUNK),
                                               hfx_dim_const(CHUNK)});
    return hfx_cast(g, bias, dtype);
}

hfx_value *hfx_phi4_audio_tower(const hfx_phi4_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                hfx_value *features, hfx_value *mask) {
    int64_t D = t->hidden, one = 1, both[2] = {0, 1};
    hfx_value *mean = hfx_weight(w, 1, &t->mels, "%sencoder_embedding.global_mean", prefix);
    hfx_value *invstd = hfx_weight(w, 1, &t->mels, "%sencoder_embedding.global_invstd", prefix);
    hfx_value *x = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_SUB, features, mean), invstd);
    x = hfx_nemo_subsample(&t->subsampling, g, w, prefix, x, NULL, NULL); /* [N, F, D] */
    if (!x) return NULL;
    hfx_dim F = x->dims[1], chunks;
    hfx_value *frames = hfx_dim_of(g, x, 1);
    hfx_value *lengths = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, mask, HFX_DTYPE_I64), 1, &one); /* [N, 1] */
    /* one clip, all of it real: what transformers computes without a mask (its processor passes none for one clip) */
    hfx_value *whole = hfx_op2(g, HFX_OP_EQUAL, hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, mask, HFX_DTYPE_I64), 2, both),
                               hfx_dim_of(g, mask, 1));
    hfx_value *unmasked = hfx_op2(g, HFX_OP_AND, whole, hfx_op2(g, HFX_OP_EQUAL, hfx_dim_of(g, mask, 0),
                                                                hfx_const_i64(g, 1)));
    x = hfx_pad_to_blocks(g, x, CHUNK, "audio_chunks", &chunks);
    x = hfx_reshape(g, x, 4, (hfx_dim[]){x->dims[0], chunks, hfx_dim_const(CHUNK), hfx_dim_const(D)});
    phi4_ctx c = {g, w, t, "", scores_bias(t, g, w, prefix, hfx_reshape(g, lengths, 1, (hfx_dim[]){x->dims[0]}),
                                           unmasked, frames, chunks, x->dtype)};
    for (int64_t i = 0; i < t->layers && !g->failed; i++) {
        snprintf(c.layer, sizeof c.layer, "%sencoders.%lld", prefix, (long long)i);
        x = layer(&c, x);
    }
    x = hfx_reshape(g, x, 3, (hfx_dim[]){x->dims[0], hfx_dim_scale(chunks, CHUNK), hfx_dim_const(D)});
    return hfx_gather(g, x, hfx_range(g, hfx_const_i64(g, 0), frames, hfx_const_i64(g, 1), F), 1);
}
