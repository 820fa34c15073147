/* DaViT, Florence-2's vision tower (transformers' Florence2VisionBackbone), and Florence-2's projector over it.
 *
 * Each stage: a strided convolution (convs.{s}: its LayerNorm over the channels before it, over its input, or after
 * it), then blocks of a spatial block and a channel block. Both kinds are two residual halves, each behind a
 * depthwise 3 × 3 convolution added to its input (conv1, conv2): the spatial block's first half attends within
 * windows of window_size × window_size tokens (the grid padded with zeros at its right and bottom to whole windows,
 * the padding attended to as transformers does, then cut), the channel block's across the channels of each of
 * num_groups groups (each channel a query over the tokens, scaled by tokens^-½); the second halves are the MLP.
 *
 * The image is of a fixed size (the processor's), so every grid is a constant: tokens live as [N, h·w, C] for the
 * norms, attention and MLPs and as [N, C, h, w] for the convolutions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/vision.h"
#include "base/status.h"

/* An integer list `key` of n entries (one per stage) within [lo, hi]. */
static hfx_status int_list(hfx_cfg c, const char *key, int n, int64_t lo, int64_t hi, int64_t *out, hfx_error *err) {
    const json_t *a = json_object_get(c.obj, key);
    if (!json_is_array(a) || (int)json_array_size(a) != n)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of %d integers (one per stage of "
                                              "embed_dim)", c.where, key, n);
    for (int i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, (size_t)i);
        if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s'[%d] must be an integer in [%lld, %lld]", c.where, key,
                            i, (long long)lo, (long long)hi);
        out[i] = json_integer_value(v);
    }
    return HFX_OK;
}

hfx_status hfx_davit_parse(hfx_cfg c, hfx_davit *t, hfx_error *err) {
    memset(t, 0, sizeof *t);
    if (json_object_get(c.obj, "dim_embed")) /* (microsoft/Florence-2-*'s DaViT config, its own modeling code's) */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: 'dim_embed': the original remote-code Florence-2 checkpoint; "
                                                  "export one converted for transformers' Florence2 classes "
                                                  "(vision_config.embed_dim)", c.where);
    const json_t *dims = json_object_get(c.obj, "embed_dim"), *pre = json_object_get(c.obj, "patch_prenorm");
    if (!json_is_array(dims) || json_array_size(dims) < 1 || json_array_size(dims) > HFX_DAVIT_STAGES)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'embed_dim' must be a list of 1 to %d stage widths", c.where,
                        HFX_DAVIT_STAGES);
    int n = t->stages = (int)json_array_size(dims);
    const char *act;
    hfx_status st;
    if ((st = int_list(c, "embed_dim", n, 1, 1 << 16, t->dim, err)) ||
        (st = int_list(c, "num_heads", n, 1, 4096, t->heads, err)) ||
        (st = int_list(c, "num_groups", n, 1, 4096, t->groups, err)) ||
        (st = int_list(c, "depths", n, 0, 4096, t->depth, err)) ||
        (st = int_list(c, "patch_size", n, 1, 64, t->kernel, err)) ||
        (st = int_list(c, "patch_stride", n, 1, 64, t->stride, err)) ||
        (st = int_list(c, "patch_padding", n, 0, 64, t->padding, err)) ||
        (st = hfx_cfg_int_in_or(c, "in_channels", 3, 1, 64, &t->in_channels, err)) ||
        (st = hfx_cfg_int_in_or(c, "window_size", 12, 1, 1024, &t->window, err)) ||
        (st = hfx_cfg_num_or(c, "mlp_ratio", 4.0, &t->mlp_ratio, err)) ||
        (st = hfx_cfg_bool_or(c, "qkv_bias", true, &t->qkv_bias, err)) ||
        (st = hfx_cfg_str_or(c, "activation_function", "gelu", &act, err)) ||
        (st = hfx_cfg_int_in(c, "projection_dim", 1, 1 << 20, &t->projection, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_position_embeddings", 50, 1, 1 << 16, &t->positions, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_temporal_embeddings", 100, 1, 1 << 20, &t->temporal, err)))
        return st;
    if (!json_is_array(pre) || (int)json_array_size(pre) != n)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'patch_prenorm' must be a list of %d booleans", c.where, n);
    for (int i = 0; i < n; i++) {
        const json_t *v = json_array_get(pre, (size_t)i);
        if (!json_is_boolean(v))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'patch_prenorm'[%d] must be a boolean", c.where, i);
        t->prenorm[i] = json_is_true(v);
        if (t->dim[i] % t->heads[i] || t->dim[i] % t->groups[i])
            return hfx_fail(err, HFX_ERR_INVALID, "%s: embed_dim[%d] %lld is not a multiple of num_heads %lld and "
                                                  "num_groups %lld", c.where, i, (long long)t->dim[i],
                            (long long)t->heads[i], (long long)t->groups[i]);
    }
    if (!(t->mlp_ratio > 0) || t->mlp_ratio * (double)t->dim[n - 1] > (double)(1 << 24))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: mlp_ratio %g out of range", c.where, t->mlp_ratio);
    if (t->dim[n - 1] % 2) /* its temporal table writes sines in the even columns, as many cosines in the odd */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the last embed_dim %lld is odd: Florence-2's temporal embedding "
                                              "needs an even width", c.where, (long long)t->dim[n - 1]);
    if (!hfx_activation_from_name(act, &t->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: activation_function '%s' is not supported (known: %s)", c.where,
                        act, hfx_activation_names());
    return HFX_OK;
}

bool hfx_davit_grid(const hfx_davit *t, int64_t height, int64_t width, int64_t *h, int64_t *w) {
    *h = height, *w = width;
    for (int s = 0; s < t->stages; s++) {
        int64_t k = t->kernel[s], p = t->padding[s];
        if (*h + 2 * p < k || *w + 2 * p < k) return false;
        *h = (*h + 2 * p - k) / t->stride[s] + 1, *w = (*w + 2 * p - k) / t->stride[s] + 1;
    }
    return true;
}

typedef struct davit_ctx {
    const hfx_davit *t;
    hfx_graph *g;
    hfx_weights *w;
    const char *prefix; /* "model.vision_tower." */
    hfx_dim N;
} davit_ctx;

static hfx_value *layer_norm(davit_ctx *c, hfx_value *x, int64_t C, const char *name) {
    return hfx_layer_norm_named(c->w, x, C, 1e-5, "%s%s", c->prefix, name);
}

static hfx_value *dense(davit_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name, bool bias) {
    return hfx_linear_named(c->w, x, in, out, bias, "%s%s", c->prefix, name);
}

/* One of q, k, v (which = 0, 1, 2) of the fused `name` [3C, C] (and its bias): its rows which·C .. */
static hfx_value *qkv_part(davit_ctx *c, hfx_value *x, int64_t C, const char *name, int which) {
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){3 * C, C}, "%s%s.weight", c->prefix, name);
    hfx_value *b = c->t->qkv_bias ? hfx_weight(c->w, 1, (int64_t[]){3 * C}, "%s%s.bias", c->prefix, name) : NULL;
    return hfx_linear(c->g, x, hfx_const_slice(c->g, w, 0, which * C, C),
                      b ? hfx_const_slice(c->g, b, 0, which * C, C) : NULL);
}

/* tokens [N, h·w, C] ↔ the grid [N, C, h, w] */
static hfx_value *to_grid(davit_ctx *c, hfx_value *x, int64_t C, int64_t h, int64_t w) {
    x = hfx_transpose(c->g, x, 3, (int64_t[]){0, 2, 1});
    return hfx_reshape(c->g, x, 4, (hfx_dim[]){c->N, hfx_dim_const(C), hfx_dim_const(h), hfx_dim_const(w)});
}
static hfx_value *to_tokens(davit_ctx *c, hfx_value *x, int64_t C, int64_t h, int64_t w) {
    x = hfx_reshape(c->g, x, 3, (hfx_dim[]){c->N, hfx_dim_const(C), hfx_dim_const(h * w)});
    return hfx_transpose(c->g, x, 3, (int64_t[]){0, 2, 1});
}

/* x [N, a, b, C] with `extra` zero rows appended along axis 1 (as F.pad does: at the end) */
static hfx_value *zero_padded(davit_ctx *c, hfx_value *x, int axis, int64_t extra) {
    if (!extra) return x;
    hfx_value *zero = hfx_op2(c->g, HFX_OP_MUL, hfx_slice(c->g, x, axis, 0, 1), hfx_const_scalar(c->g, x->dtype, 0.0));
    hfx_value *parts[1 + 1024];
    parts[0] = x;
    for (int64_t i = 0; i < extra; i++) parts[1 + i] = zero; /* extra < window ≤ 1024 */
    return hfx_concat(c->g, (int)(1 + extra), parts, axis);
}

/* The windowed attention of Florence2VisionWindowAttention over t [N, h·w, C] (normed) → [N, h·w, C] */
static hfx_value *window_attention(davit_ctx *c, hfx_value *t, int s, const char *blk, int64_t h, int64_t w) {
    hfx_graph *g = c->g;
    int64_t C = c->t->dim[s], H = c->t->heads[s], hd = C / H, ws = c->t->window;
    int64_t ph = (ws - h % ws) % ws, pw = (ws - w % ws) % ws, nh = (h + ph) / ws, nw = (w + pw) / ws, T = ws * ws;
    hfx_dim N = c->N;
    hfx_value *x = hfx_reshape(g, t, 4, (hfx_dim[]){N, hfx_dim_const(h), hfx_dim_const(w), hfx_dim_const(C)});
    x = zero_padded(c, zero_padded(c, x, 2, pw), 1, ph); /* [N, h+ph, w+pw, C] */
    /* windows [N, nh·nw, ws·ws, C]: rows of a window's tokens, channels kept together */
    x = hfx_reshape(g, x, 5, (hfx_dim[]){N, hfx_dim_const(nh), hfx_dim_const(ws), hfx_dim_const(nw),
                                         hfx_dim_const(ws * C)});
    x = hfx_transpose(g, x, 5, (int64_t[]){0, 1, 3, 2, 4});
    x = hfx_reshape(g, x, 4, (hfx_dim[]){N, hfx_dim_const(nh * nw), hfx_dim_const(T), hfx_dim_const(C)});
    char n[192];
    snprintf(n, sizeof n, "%s.window_attn.qkv", blk);
    hfx_value *qkv[3];
    for (int i = 0; i < 3; i++) { /* [N, windows, heads, T, hd] */
        hfx_value *p = hfx_reshape(g, qkv_part(c, x, C, n, i), 5, (hfx_dim[]){N, hfx_dim_const(nh * nw),
                                                                               hfx_dim_const(T), hfx_dim_const(H),
                                                                               hfx_dim_const(hd)});
        qkv[i] = hfx_transpose(g, p, 5, (int64_t[]){0, 1, 3, 2, 4});
    }
    hfx_value *a = hfx_attend_any_rank(g, qkv[0], qkv[1], qkv[2], NULL, 1.0 / sqrt((double)hd));
    a = hfx_reshape(g, hfx_transpose(g, a, 5, (int64_t[]){0, 1, 3, 2, 4}), 4,
                    (hfx_dim[]){N, hfx_dim_const(nh * nw), hfx_dim_const(T), hfx_dim_const(C)});
    snprintf(n, sizeof n, "%s.window_attn.proj", blk);
    a = dense(c, a, C, C, n, true);
    /* the windows back into the grid, the padding cut */
    a = hfx_reshape(g, a, 5, (hfx_dim[]){N, hfx_dim_const(nh), hfx_dim_const(nw), hfx_dim_const(ws),
                                         hfx_dim_const(ws * C)});
    a = hfx_transpose(g, a, 5, (int64_t[]){0, 1, 3, 2, 4});
    a = hfx_reshape(g, a, 4, (hfx_dim[]){N, hfx_dim_const(nh * ws), hfx_dim_const(nw * ws), hfx_dim_const(C)});
    if (ph) a = hfx_slice(g, a, 1, 0, h);
    if (pw) a = hfx_slice(g, a, 2, 0, w);
    return hfx_reshape(g, a, 3, (hfx_dim[]){N, hfx_dim_const(h * w), hfx_dim_const(C)});
}

/* Florence2VisionChannelAttention over t [N, h·w, C] (normed): each group's channels attend to each other over the
 * tokens → [N, h·w, C] */
static hfx_value *channel_attention(davit_ctx *c, hfx_value *t, int s, const char *blk, int64_t hw) {
    hfx_graph *g = c->g;
    int64_t C = c->t->dim[s], G = c->t->groups[s], cg = C / G;
    char n[192];
    snprintf(n, sizeof n, "%s.channel_attn.qkv", blk);
    hfx_value *qkv[3];
    for (int i = 0; i < 3; i++) { /* [N, G, C/G, h·w] */
        hfx_value *p = hfx_reshape(g, qkv_part(c, t, C, n, i), 4, (hfx_dim[]){c->N, hfx_dim_const(hw), hfx_dim_const(G),
                                                                               hfx_dim_const(cg)});
        qkv[i] = hfx_transpose(g, p, 4, (int64_t[]){0, 2, 3, 1});
    }
    hfx_value *a = hfx_attend_any_rank(g, qkv[0], qkv[1], qkv[2], NULL, 1.0 / sqrt((double)hw)); /* [N, G, C/G, h·w] */
    a = hfx_reshape(g, hfx_transpose(g, a, 4, (int64_t[]){0, 3, 1, 2}), 3,
                    (hfx_dim[]){c->N, hfx_dim_const(hw), hfx_dim_const(C)});
    snprintf(n, sizeof n, "%s.channel_attn.proj", blk);
    return dense(c, a, C, C, n, true);
}

/* One spatial or channel block (kind "spatial_block" / "channel_block") over the grid x [N, C, h, w] */
static hfx_value *block(davit_ctx *c, hfx_value *x, int s, int64_t i, bool spatial, int64_t h, int64_t w) {
    hfx_graph *g = c->g;
    int64_t C = c->t->dim[s], F = (int64_t)((double)C * c->t->mlp_ratio);
    char blk[128], n[192];
    snprintf(blk, sizeof blk, "blocks.%d.%lld.%s", s, (long long)i, spatial ? "spatial_block" : "channel_block");
    for (int half = 0; half < 2 && !g->failed; half++) {
        snprintf(n, sizeof n, "%s%s.conv%d", c->prefix, blk, half + 1);
        hfx_value *k = hfx_weight(c->w, 4, (int64_t[]){C, 1, 3, 3}, "%s.weight", n);
        hfx_value *b = hfx_weight(c->w, 1, &C, "%s.bias", n);
        x = hfx_op2(g, HFX_OP_ADD, hfx_conv2d(g, x, k, b, (int64_t[]){1, 1}, (int64_t[]){1, 1}, C,
                                              (const char *const[]){NULL, NULL}), x);
        hfx_value *t = to_tokens(c, x, C, h, w);
        snprintf(n, sizeof n, "%s.norm%d", blk, half + 1);
        hfx_value *y = layer_norm(c, t, C, n);
        if (half == 0) {
            y = spatial ? window_attention(c, y, s, blk, h, w) : channel_attention(c, y, s, blk, h * w);
        } else {
            snprintf(n, sizeof n, "%s.ffn.fc1", blk);
            y = hfx_activate(g, c->t->act, dense(c, y, C, F, n, true));
            snprintf(n, sizeof n, "%s.ffn.fc2", blk);
            y = dense(c, y, F, C, n, true);
        }
        x = to_grid(c, hfx_op2(g, HFX_OP_ADD, t, y), C, h, w);
    }
    return x;
}

/* The tower over pixels [N, in, H, W]: the last stage's grid [N, C, h, w] (*h, *w its sides) */
static hfx_value *tower(davit_ctx *c, hfx_value *x, int64_t *h, int64_t *w) {
    const hfx_davit *t = c->t;
    hfx_graph *g = c->g;
    int64_t in = t->in_channels;
    char n[96];
    for (int s = 0; s < t->stages && !g->failed; s++) {
        int64_t C = t->dim[s], k = t->kernel[s], st = t->stride[s], p = t->padding[s];
        int64_t oh = (*h + 2 * p - k) / st + 1, ow = (*w + 2 * p - k) / st + 1; /* (hfx_davit_grid checked them) */
        snprintf(n, sizeof n, "convs.%d.norm", s);
        if (t->prenorm[s]) x = to_grid(c, layer_norm(c, to_tokens(c, x, in, *h, *w), in, n), in, *h, *w);
        x = hfx_conv2d(g, x, hfx_weight(c->w, 4, (int64_t[]){C, in, k, k}, "%sconvs.%d.conv.weight", c->prefix, s),
                       hfx_weight(c->w, 1, &C, "%sconvs.%d.conv.bias", c->prefix, s), (int64_t[]){st, st},
                       (int64_t[]){p, p}, 1, (const char *const[]){NULL, NULL});
        *h = oh, *w = ow, in = C;
        if (!t->prenorm[s]) x = to_grid(c, layer_norm(c, to_tokens(c, x, C, oh, ow), C, n), C, oh, ow);
        for (int64_t i = 0; i < t->depth[s] && !g->failed; i++) {
            x = block(c, x, s, i, true, oh, ow);
            x = block(c, x, s, i, false, oh, ow);
        }
    }
    return x;
}

hfx_value *hfx_florence2_features(const hfx_davit *t, hfx_graph *g, hfx_weights *w, const char *tower_prefix,
                                  const char *projector, hfx_value *pixels) {
    davit_ctx c = {t, g, w, tower_prefix, pixels->dims[0]};
    int64_t h = pixels->dims[2].c, wd = pixels->dims[3].c, D = t->dim[t->stages - 1], P = t->projection;
    hfx_value *x = tower(&c, pixels, &h, &wd);
    if (g->failed) return x;
    x = to_tokens(&c, x, D, h, wd); /* [N, h·w, D] */
    /* each token's learned position: its column's embedding (D/2 wide) then its row's */
    int64_t hw = h * wd, *cols = hfx_arena_alloc(g->arena, 2 * (size_t)hw * sizeof *cols), *rows = cols + hw;
    if (!cols) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    for (int64_t i = 0; i < hw; i++) cols[i] = i % wd, rows[i] = i / wd;
    c.prefix = projector;
    hfx_value *col = hfx_weight(w, 2, (int64_t[]){t->positions, D / 2}, "%simage_position_embed.column_embeddings.weight",
                                projector);
    hfx_value *row = hfx_weight(w, 2, (int64_t[]){t->positions, D - D / 2}, "%simage_position_embed.row_embeddings.weight",
                                projector);
    hfx_value *pos = hfx_concat(g, 2, (hfx_value *[]){hfx_gather(g, col, hfx_const_bytes(g, HFX_DTYPE_I64, 1, &hw, cols), 0),
                                                     hfx_gather(g, row, hfx_const_bytes(g, HFX_DTYPE_I64, 1, &hw, rows), 0)},
                                1); /* [h·w, D] */
    x = hfx_op2(g, HFX_OP_ADD, x, pos);
    /* the first frame's temporal embedding: the stored table's row 0 (sin 0 = 0 in the even columns, cos 0 = 1 in the
     * odd, where the checkpoint has no table) */
    char table[192];
    snprintf(table, sizeof table, "%svisual_temporal_embed.pos_idx_to_embed", projector);
    hfx_value *first;
    if (hfx_weight_exists(w, table)) {
        first = hfx_const_slice(g, hfx_weight(w, 2, (int64_t[]){t->temporal, D}, "%s", table), 0, 0, 1);
    } else {
        float *ones = hfx_arena_alloc(g->arena, (size_t)D * sizeof *ones);
        if (!ones) {
            hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            return x;
        }
        for (int64_t j = 0; j < D; j++) ones[j] = (float)(j % 2);
        first = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 1, &D, ones), x->dtype);
    }
    x = hfx_op2(g, HFX_OP_ADD, x, first);
    /* the mean of the tokens, then the tokens (one frame: their mean over frames is themselves) */
    int64_t axis = 1;
    x = hfx_concat(g, 2, (hfx_value *[]){hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 1, &axis), x}, 1);
    x = dense(&c, x, D, P, "image_projection", false);
    return layer_norm(&c, x, P, "image_proj_norm");
}
