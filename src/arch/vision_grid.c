/* Grid towers: Qwen2-VL's, Qwen2.5-VL's, Qwen3-VL's and Qwen3.5's image encoders, which take images of any size.
 * The processor cuts each image into frames of temporal_patch_size and patches of patch_size, orders
 * the patches so that each spatial_merge_size² block is consecutive, and flattens them into rows:
 * pixel_values [num_patches, C·T·P·P], with image_grid_thw [num_images, 3] giving each image's
 * frames, rows and columns in patches.
 *
 * What transformers precomputes from the grid outside its graph (vision_utils: each patch's 2-D
 * position, the cumulative sequence lengths of the per-frame attention, Qwen2.5-VL's window index,
 * Qwen3-VL's interpolation taps and weights) is computed here in the graph, from image_grid_thw, so the
 * caller feeds the processor's outputs as they are. Attention is masked rather than split: a patch sees the
 * patches of its own frame of its own image — and in Qwen2.5-VL's windowed layers, of its own window — which
 * is exactly what the per-segment attention computes. A masked attention gives each token the same result in
 * any token order, so Qwen2.5-VL's window permutation (and its inverse after the layers) is not needed:
 * tokens stay in the processor's order throughout.
 *
 * The layers are vision.c's (a layout per lineage: fused q/k/v, LayerNorm or RMSNorm, fc1/fc2 or a
 * gated MLP); the merger (each merge² block's states side by side, normed first, then an MLP) is
 * here, and Qwen3-VL's DeepStack mergers (the same over an inner layer's states, normed after the
 * merge). */
#include "arch/vision_grid.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/rope.h"
#include "base/status.h"

static const hfx_grid_merger_names qwen2_merger = {"ln_q", "mlp.0", "mlp.2"};
static const hfx_grid_merger_names qwen3_merger = {"norm", "linear_fc1", "linear_fc2"}; /* (DeepStack's mergers' too) */

/* DeepStack's layers from deepstack_visual_indexes (transformers' default [8, 16, 24]): each layer of the tower
 * that the list names, in the tower's order, with the merger of its first mention (as `index()` finds it). */
static hfx_status parse_deepstack(hfx_cfg c, hfx_grid_tower *out, hfx_error *err) {
    static const int64_t dflt[] = {8, 16, 24};
    const json_t *list = json_object_get(c.obj, "deepstack_visual_indexes");
    int64_t idx[HFX_GRID_MAX_DEEPSTACK];
    size_t n = 3;
    if (!list || json_is_null(list)) {
        memcpy(idx, dflt, sizeof dflt);
    } else if (!json_is_array(list) || json_array_size(list) > HFX_GRID_MAX_DEEPSTACK) {
        return hfx_fail(err, HFX_ERR_INVALID, "%s: deepstack_visual_indexes must be a list of at most %d layer indices",
                        c.where, HFX_GRID_MAX_DEEPSTACK);
    } else {
        n = json_array_size(list);
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(list, i);
            if (!json_is_integer(e))
                return hfx_fail(err, HFX_ERR_INVALID, "%s: deepstack_visual_indexes[%zu] is not an integer", c.where, i);
            idx[i] = json_integer_value(e);
        }
    }
    out->n_deepstack_mergers = (int)n;
    out->n_deepstack = 0;
    for (int64_t layer = 0; layer < out->tower.cfg.layers; layer++)
        for (size_t k = 0; k < n; k++)
            if (idx[k] == layer) { /* (an index past the layers, or negative, names none, as in transformers) */
                out->deepstack_layer[out->n_deepstack] = layer;
                out->deepstack_merger[out->n_deepstack++] = (int)k;
                break;
            }
    return HFX_OK;
}

hfx_status hfx_grid_tower_parse(const char *model_type, hfx_cfg c, hfx_grid_tower *out, hfx_error *err) {
    bool windows = model_type && strncmp(model_type, "qwen2_5_vl", 10) == 0;
    bool qwen3 = model_type && (strncmp(model_type, "qwen3_vl", 8) == 0 || strncmp(model_type, "qwen3_5", 7) == 0);
    bool pixtral = model_type && strcmp(model_type, "pixtral") == 0;
    hfx_status st = hfx_vision_tower_parse(model_type, c, HFX_TOWER_GRID, &out->tower, err);
    if (st) return st;
    const hfx_vision_cfg *v = &out->tower.cfg;
    if ((st = hfx_cfg_int_in_or(c, "spatial_merge_size", 2, 1, 64, &out->merge, err)) ||
        (!pixtral && (st = hfx_cfg_int_in_or(c, "temporal_patch_size", 2, 1, 64, &out->temporal, err))) ||
        (st = hfx_cfg_int_in(c, windows || qwen3 ? "out_hidden_size" : "hidden_size", 1, 1 << 20, &out->out, err)))
        return st;
    if (pixtral) out->temporal = 0;
    out->odd_columns = pixtral;
    /* transformers 5 keeps the base in rope_parameters, older configs nowhere (10000) */
    const json_t *rope = json_object_get(c.obj, "rope_parameters");
    hfx_cfg r = {json_is_object(rope) ? rope : c.obj, c.where};
    if ((st = hfx_cfg_num_or(r, "rope_theta", 10000.0, &out->theta, err))) return st;
    int64_t hd = v->hidden / v->heads;
    if (hd % 4 || !(out->theta > 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the 2-D rotary needs a head size that is a multiple of 4 (it is "
                                              "%lld) and rope_theta > 1", c.where, (long long)hd);
    out->window = 0;
    out->merger = pixtral ? NULL : qwen3 ? &qwen3_merger : &qwen2_merger;
    out->position_rows = out->position_side = 0;
    out->n_deepstack = out->n_deepstack_mergers = 0;
    memset(out->full, 0, sizeof out->full);
    if (qwen3) {
        if ((st = hfx_cfg_int_in_or(c, "num_position_embeddings", 2304, 1, 1 << 24, &out->position_rows, err)))
            return st;
        out->position_side = (int64_t)sqrt((double)out->position_rows); /* int(n ** 0.5), as transformers */
        return strncmp(model_type, "qwen3_vl", 8) == 0 ? parse_deepstack(c, out, err) : HFX_OK;
    }
    if (!windows) return HFX_OK;
    int64_t size;
    if ((st = hfx_cfg_int_in_or(c, "window_size", 112, 1, 1 << 20, &size, err))) return st;
    out->window = size / out->merge / v->patch; /* merged tokens per window side, as vision_utils divides */
    if (out->window < 1)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: window_size %lld is smaller than one merged token (%lld pixels)",
                        c.where, (long long)size, (long long)(out->merge * v->patch));
    const json_t *full = json_object_get(c.obj, "fullatt_block_indexes");
    if (!full) { /* transformers' default, whatever the depth */
        static const int64_t dflt[] = {7, 15, 23, 31};
        for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++)
            if (dflt[i] < v->layers) out->full[dflt[i]] = true;
        return HFX_OK;
    }
    if (!json_is_array(full))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: fullatt_block_indexes must be a list of layer indices", c.where);
    for (size_t i = 0; i < json_array_size(full); i++) {
        const json_t *e = json_array_get(full, i);
        if (!json_is_integer(e)) /* an index past the layers names no layer, as in transformers */
            return hfx_fail(err, HFX_ERR_INVALID, "%s: fullatt_block_indexes[%zu] is not an integer", c.where, i);
        int64_t k = json_integer_value(e);
        if (k >= 0 && k < v->layers) out->full[k] = true;
    }
    return HFX_OK;
}

static hfx_value *i64(hfx_graph *g, int64_t v) { return hfx_const_i64(g, v); }
static hfx_value *op(hfx_graph *g, hfx_op o, hfx_value *a, hfx_value *b) { return hfx_op2(g, o, a, b); }

/* a [N] against itself: [N, N] bool, a[i] == a[j] */
static hfx_value *same(hfx_graph *g, hfx_value *a) {
    return op(g, HFX_OP_EQUAL, hfx_unsqueeze(g, a, 1), hfx_unsqueeze(g, a, 0));
}

/* [N, N] bool → the attention bias [1, 1, N, N] f32: 0 where true, the float minimum where not */
static hfx_value *bias_of(hfx_graph *g, hfx_value *visible) {
    hfx_value *b = hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
    hfx_dim n = visible->dims[0];
    return hfx_reshape(g, b, 4, (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(1), n, n});
}

/* Each patch's place, from the grid: which image and frame it is in, and its row and column in
 * patches and (merged) in tokens. */
typedef struct patch_place {
    hfx_value *image, *frame;  /* [N] i64 */
    hfx_value *row, *col;      /* [N] i64: in patches */
    hfx_value *trow, *tcol;    /* [N] i64: in merged tokens (row / merge) */
    hfx_value *rows, *cols;    /* [N] i64: its image's rows and columns in patches */
} patch_place;

/* Patch p of image i (whose rows start after the earlier images' t·h·w) is, within it, at
 * l = p − start: in frame l / (h·w); r = l mod h·w is in block r / merge² of the frame (w / merge
 * blocks to a row) at offset r mod merge² (merge to a row), as transformers' position ids lay out
 * the processor's order. */
static patch_place place(const hfx_grid_tower *t, hfx_graph *g, hfx_value *grid, hfx_value *pixels) {
    hfx_value *m = i64(g, t->merge), *mm = i64(g, t->merge * t->merge);
    hfx_value *thw[3];
    for (int j = 0; j < 3; j++) thw[j] = hfx_gather(g, grid, i64(g, j), 1); /* [I]: frames, rows, columns */
    hfx_value *area = op(g, HFX_OP_MUL, thw[1], thw[2]);
    hfx_value *count = op(g, HFX_OP_MUL, thw[0], area);                          /* [I] */
    hfx_value *p = hfx_range(g, i64(g, 0), hfx_dim_of(g, pixels, 0), i64(g, 1), pixels->dims[0]); /* [N] */
    patch_place o;
    hfx_value *l;
    o.image = hfx_segment_of(g, p, count, &l);
    hfx_value *a = hfx_gather(g, area, o.image, 0), *cols = hfx_gather(g, thw[2], o.image, 0);
    o.rows = hfx_gather(g, thw[1], o.image, 0), o.cols = cols;
    o.frame = op(g, HFX_OP_DIV, l, a);
    hfx_value *r = op(g, HFX_OP_SUB, l, op(g, HFX_OP_MUL, o.frame, a));
    hfx_value *block = op(g, HFX_OP_DIV, r, mm), *within = op(g, HFX_OP_SUB, r, op(g, HFX_OP_MUL, block, mm));
    hfx_value *per_row = op(g, HFX_OP_DIV, cols, m);
    o.trow = op(g, HFX_OP_DIV, block, per_row);
    o.tcol = op(g, HFX_OP_SUB, block, op(g, HFX_OP_MUL, o.trow, per_row));
    hfx_value *dr = op(g, HFX_OP_DIV, within, m), *dc = op(g, HFX_OP_SUB, within, op(g, HFX_OP_MUL, dr, m));
    o.row = op(g, HFX_OP_ADD, op(g, HFX_OP_MUL, o.trow, m), dr);
    o.col = op(g, HFX_OP_ADD, op(g, HFX_OP_MUL, o.tcol, m), dc);
    return o;
}

/* The angles emb [N, hd] of each patch's head → cos and sin [1, 1, N, hd] */
static void cos_sin(hfx_graph *g, hfx_value *emb, hfx_dim n, int64_t hd, hfx_value **cos, hfx_value **sin) {
    hfx_dim shape[4] = {hfx_dim_const(1), hfx_dim_const(1), n, hfx_dim_const(hd)};
    *cos = hfx_reshape(g, hfx_op1(g, HFX_OP_COS, emb), 4, shape);
    *sin = hfx_reshape(g, hfx_op1(g, HFX_OP_SIN, emb), 4, shape);
}

/* The 2-D rotary of head size hd: frequencies 1/θ^(2i/(hd/2)) for i < hd/4, turned by the row
 * and by the column, [row's, column's] twice: cos and sin [1, 1, N, hd]. */
static void rotary(const hfx_grid_tower *t, hfx_graph *g, const patch_place *pl, hfx_dim n, hfx_value **cos,
                   hfx_value **sin) {
    int64_t hd = t->tower.cfg.hidden / t->tower.cfg.heads, q = hd / 4;
    float inv[1024];
    if (q > 1024) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "a vision head of %lld dims is beyond hfx's 4096", (long long)hd);
        return;
    }
    float rows[1024], cols[1024], whole[2048];
    if (t->odd_columns) { /* the head's own frequencies, the even ones the rows', the odd ones the columns' */
        hfx_rope_default_inv_freq(t->theta, hd, whole);
        for (int64_t i = 0; i < q; i++) rows[i] = whole[2 * i], cols[i] = whole[2 * i + 1];
    } else {
        hfx_rope_default_inv_freq(t->theta, hd / 2, inv);
        memcpy(rows, inv, (size_t)q * sizeof *inv), memcpy(cols, inv, (size_t)q * sizeof *inv);
    }
    hfx_value *fr = op(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, pl->row, HFX_DTYPE_F32), 1),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 1, &q, rows)); /* [N, hd/4] */
    hfx_value *fc = op(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, pl->col, HFX_DTYPE_F32), 1),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 1, &q, cols));
    cos_sin(g, hfx_concat(g, 4, (hfx_value *[]){fr, fc, fr, fc}, 1), n, hd, cos, sin);
}

/* One axis of the learned grid's bilinear resampling (corners aligned): a patch at `pos` of `size` patches reads
 * the grid's side at src = pos·(side − 1) / max(size − 1, 1), from taps ⌊src⌋ and ⌊src⌋ + 1 (the border's
 * clamped) weighted 1 − d and 1 − |d − 1| (d = src − ⌊src⌋), in transformers' float32 steps. ⌊src⌋ is the integer
 * quotient: a non-integer quotient of integers below 2^24 is at least 1/(size − 1) from the next integer, far
 * beyond float32's rounding, so the two floors agree. */
static void bilinear_axis(const hfx_grid_tower *t, hfx_graph *g, hfx_value *pos, hfx_value *size, hfx_value **taps,
                          hfx_value **weights) {
    hfx_value *den = op(g, HFX_OP_MAX, op(g, HFX_OP_SUB, size, i64(g, 1)), i64(g, 1));
    hfx_value *num = op(g, HFX_OP_MUL, pos, i64(g, t->position_side - 1));
    hfx_value *src = op(g, HFX_OP_DIV, op(g, HFX_OP_MUL, hfx_cast(g, pos, HFX_DTYPE_F32),
                                          hfx_const_f32(g, (float)(t->position_side - 1))),
                        hfx_cast(g, den, HFX_DTYPE_F32));
    hfx_value *floor = op(g, HFX_OP_DIV, num, den);
    hfx_value *d = op(g, HFX_OP_SUB, src, hfx_cast(g, floor, HFX_DTYPE_F32));
    hfx_value *one = hfx_const_f32(g, 1.0f), *zero = hfx_const_f32(g, 0.0f);
    taps[0] = floor;
    taps[1] = op(g, HFX_OP_MIN, op(g, HFX_OP_ADD, floor, i64(g, 1)), i64(g, t->position_side - 1));
    weights[0] = op(g, HFX_OP_MAX, op(g, HFX_OP_SUB, one, d), zero);
    weights[1] = op(g, HFX_OP_MAX, op(g, HFX_OP_SUB, one, hfx_op1(g, HFX_OP_NEG, op(g, HFX_OP_SUB, d, one))), zero);
}

/* Qwen3-VL's learned square grid of positions pos_embed [position_rows, E] */
static hfx_value *position_table(const hfx_grid_tower *t, hfx_weights *w, const char *prefix) {
    return hfx_weight(w, 2, (int64_t[]){t->position_rows, t->tower.cfg.hidden}, "%spos_embed.weight", prefix);
}

/* Qwen3-VL's learned positions of each patch [N, E]: the square grid pos_embed [position_rows, E] resampled to
 * its image's rows and columns, 4 taps (row-major) weighted by the product of their axes' weights. */
static hfx_value *learned_positions(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                    const patch_place *pl) {
    hfx_value *table = position_table(t, w, prefix);
    hfx_value *rt[2], *rw[2], *ct[2], *cw[2];
    bilinear_axis(t, g, pl->row, pl->rows, rt, rw);
    bilinear_axis(t, g, pl->col, pl->cols, ct, cw);
    hfx_value *sum = NULL;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            hfx_value *idx = op(g, HFX_OP_ADD, op(g, HFX_OP_MUL, rt[a], i64(g, t->position_side)), ct[b]);
            hfx_value *wt = hfx_unsqueeze(g, op(g, HFX_OP_MUL, rw[a], cw[b]), 1); /* [N, 1] */
            hfx_value *tap = op(g, HFX_OP_MUL, hfx_gather(g, table, idx, 0), hfx_cast(g, wt, table->dtype));
            sum = sum ? op(g, HFX_OP_ADD, sum, tap) : tap;
        }
    return sum;
}

/* A merger under `prefix` ("visual.merger.", "visual.deepstack_merger_list.0."), its parts named as the lineage
 * names them: the norm over each patch's states (or, after_merge, over each merge² block's side by side:
 * DeepStack's), Linear, GELU, Linear into `out`. x [1, N, E] → [tokens, out]. */
static hfx_value *merger(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix, bool after_merge,
                         hfx_value *x, hfx_dim tokens) {
    const hfx_grid_merger_names *names = t->merger;
    int64_t E = t->tower.cfg.hidden * t->merge * t->merge;
    char name[256];
    snprintf(name, sizeof name, "%s%s", prefix, names->norm);
    if (!after_merge) x = hfx_vision_norm(&t->tower, g, w, name, x);
    x = hfx_reshape(g, x, 2, (hfx_dim[]){tokens, hfx_dim_const(E)});
    if (after_merge) x = hfx_vision_norm(&t->tower, g, w, name, x);
    snprintf(name, sizeof name, "%s%s", prefix, names->fc1);
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){E, E}, "%s.weight", name),
                   hfx_weight(w, 1, (int64_t[]){E}, "%s.bias", name));
    x = hfx_activate(g, HFX_ACT_GELU, x);
    snprintf(name, sizeof name, "%s%s", prefix, names->fc2);
    return hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){t->out, E}, "%s.weight", name),
                      hfx_weight(w, 1, (int64_t[]){t->out}, "%s.bias", name));
}

/* The patches embedded [1, N, E] (their positions added, pre-normed where the lineage has either) and how they
 * attend: their image's (and frame's, and window's) patches, turned by their 2-D rotary. */
/* The patch embedding: a Conv3d (Pixtral's: Conv2d) whose kernel is its stride, over rows already cut to one patch
 * each in its weight's (c, t, kh, kw) order: the linear it is. pixels [N, C·T·P·P] → [N, E]. */
static hfx_value *patch_embedding(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *pixels) {
    const hfx_vision_cfg *v = &t->tower.cfg;
    int64_t E = v->hidden, C = v->channels, P = v->patch, T = t->temporal;
    char name[256];
    snprintf(name, sizeof name, "%s%s", prefix, hfx_vision_patch_name(&t->tower));
    hfx_value *proj = T ? hfx_weight(w, 5, (int64_t[]){E, C, T, P, P}, "%s.weight", name)
                        : hfx_weight(w, 4, (int64_t[]){E, C, P, P}, "%s.weight", name);
    hfx_value *bias = hfx_vision_patch_biased(&t->tower) ? hfx_weight(w, 1, &E, "%s.bias", name) : NULL;
    return hfx_linear(g, pixels, hfx_const_flatten(g, proj, 1), bias);
}

/* x [N, E] → [1, N, E], pre-normed where the lineage has a norm before the layers */
static hfx_value *before_layers(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                hfx_value *x) {
    char name[256];
    x = hfx_reshape(g, x, 3, (hfx_dim[]){hfx_dim_const(1), x->dims[0], x->dims[1]});
    if (!hfx_vision_pre_norm(&t->tower)) return x;
    snprintf(name, sizeof name, "%s%s", prefix, hfx_vision_pre_norm(&t->tower));
    return hfx_vision_norm(&t->tower, g, w, name, x);
}

static hfx_value *embedded(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                           hfx_value *pixels, hfx_value *grid, hfx_vision_attend *at) {
    hfx_value *x = patch_embedding(t, g, w, prefix, pixels); /* [N, E] */
    hfx_dim n = pixels->dims[0];
    patch_place pl = place(t, g, grid, pixels);
    if (t->position_rows) x = op(g, HFX_OP_ADD, x, hfx_cast(g, learned_positions(t, g, w, prefix, &pl), x->dtype));
    x = before_layers(t, g, w, prefix, x);
    hfx_value *visible = op(g, HFX_OP_AND, same(g, pl.image), same(g, pl.frame)); /* [N, N] */
    at->bias = bias_of(g, visible);
    if (t->window) { /* and the same window of merged tokens */
        hfx_value *ws = i64(g, t->window);
        hfx_value *in_row = same(g, op(g, HFX_OP_DIV, pl.trow, ws)), *in_col = same(g, op(g, HFX_OP_DIV, pl.tcol, ws));
        at->window_bias = bias_of(g, op(g, HFX_OP_AND, visible, op(g, HFX_OP_AND, in_row, in_col)));
        at->full = t->full;
    }
    rotary(t, g, &pl, n, &at->cos, &at->sin);
    return x;
}

/* The symbol of a merge² of the patches n (as many as the patches' bound allows: ExecuTorch plans for it). */
static hfx_dim merged_tokens(const hfx_grid_tower *t, hfx_graph *g, hfx_dim n) {
    int64_t mm = t->merge * t->merge, most = n.n == 1 ? g->symbols[n.sym[0]].max : INT32_MAX;
    return hfx_dim_sym(hfx_graph_symbol(g, "num_image_tokens", 1, most >= INT32_MAX ? INT32_MAX : most / mm));
}

hfx_value *hfx_grid_tower_states(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                 hfx_value *pixels, hfx_value *grid, int64_t upto, hfx_dim *tokens) {
    hfx_vision_attend at = {0};
    hfx_value *x = embedded(t, g, w, prefix, pixels, grid, &at);
    if (g->failed) return NULL;
    x = hfx_vision_layers_attending(&t->tower, g, w, prefix, x, &at, upto, NULL);
    hfx_vision_tower_skip_rest(&t->tower, w, prefix, upto);
    *tokens = merged_tokens(t, g, pixels->dims[0]);
    return hfx_reshape(g, x, 2, (hfx_dim[]){pixels->dims[0], hfx_dim_const(t->tower.cfg.hidden)});
}

/* The layers over x [1, N, E] attending as `at` says, the merger into [tokens, out], and the first deepstack_used
 * DeepStack features into *deepstack (NULL: none wanted) */
static hfx_value *layers_merged(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix, hfx_value *x,
                                const hfx_vision_attend *at, hfx_dim tokens, int deepstack_used, hfx_value **deepstack) {
    const hfx_vision_cfg *v = &t->tower.cfg;
    char name[256];
    if (!t->merger) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "this grid tower has no merger of its own");
        return NULL;
    }
    int used = deepstack ? (deepstack_used < t->n_deepstack ? deepstack_used : t->n_deepstack) : 0;
    hfx_value **states = used ? hfx_arena_alloc(g->arena, (size_t)(v->layers + 1) * sizeof *states) : NULL;
    if (used && !states) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    x = hfx_vision_layers_attending(&t->tower, g, w, prefix, x, at, v->layers, states);
    snprintf(name, sizeof name, "%smerger.", prefix);
    hfx_value *features = merger(t, g, w, name, false, x, tokens);
    /* DeepStack: the states after each chosen layer, through its own merger (normed after the merge) */
    bool read[HFX_GRID_MAX_DEEPSTACK] = {0};
    hfx_value *picked[HFX_GRID_MAX_DEEPSTACK];
    for (int k = 0; k < used && !g->failed; k++) {
        snprintf(name, sizeof name, "%sdeepstack_merger_list.%d.", prefix, t->deepstack_merger[k]);
        read[t->deepstack_merger[k]] = true;
        picked[k] = hfx_unsqueeze(g, merger(t, g, w, name, true, states[t->deepstack_layer[k] + 1], tokens), 0);
    }
    for (int k = 0; k < t->n_deepstack_mergers; k++) /* the language model adds no more than its layers */
        if (!read[k]) {
            snprintf(name, sizeof name, "%sdeepstack_merger_list.%d", prefix, k);
            hfx_weights_ignore_stack(w, name);
        }
    if (used && !g->failed) *deepstack = used == 1 ? picked[0] : hfx_concat(g, used, picked, 0);
    return features;
}

hfx_value *hfx_grid_tower_features(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, hfx_value *grid, int deepstack_used, hfx_value **deepstack) {
    hfx_vision_attend at = {0};
    hfx_value *x = embedded(t, g, w, prefix, pixels, grid, &at);
    if (g->failed) return NULL;
    return layers_merged(t, g, w, prefix, x, &at, merged_tokens(t, g, pixels->dims[0]), deepstack_used, deepstack);
}

hfx_value *hfx_grid_tower_patches(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *pixels) {
    return patch_embedding(t, g, w, prefix, pixels);
}

/* x [N, D] in window order: each merge² block of rows (a merged token) moved to its place in index [tokens] */
static hfx_value *in_window_order(const hfx_grid_tower *t, hfx_graph *g, hfx_value *x, hfx_value *index) {
    hfx_dim n = x->dims[0], d = x->dims[1];
    x = hfx_reshape(g, x, 3, (hfx_dim[]){index->dims[0], hfx_dim_const(t->merge * t->merge), d});
    return hfx_reshape(g, hfx_gather(g, x, index, 0), 2, (hfx_dim[]){n, d});
}

hfx_value *hfx_grid_tower_position_table(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                        hfx_value *taps) {
    return hfx_gather(g, position_table(t, w, prefix), taps, 0);
}

hfx_value *hfx_grid_tower_merged_parts(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                       const hfx_grid_parts *in, int deepstack_used, hfx_value **deepstack) {
    const hfx_vision_cfg *v = &t->tower.cfg;
    int64_t hd = v->hidden / v->heads;
    if (!t->merger || (t->window != 0) != (in->window_index != NULL) || (t->window && deepstack_used)) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "the merger's parts are the Qwen-VL lineages' (windows for windows)");
        return NULL;
    }
    hfx_value *x = in->states, *rotary = in->rotary;
    hfx_dim n = x->dims[0], tokens = in->window_index ? in->window_index->dims[0] : merged_tokens(t, g, n);
    if (in->window_index) { /* the layers run over the windows' order, as transformers runs them */
        x = in_window_order(t, g, x, in->window_index);
        rotary = in_window_order(t, g, rotary, in->window_index);
    }
    hfx_vision_attend at = {0};
    hfx_dim square[4] = {hfx_dim_const(1), hfx_dim_const(1), n, n};
    at.bias = hfx_reshape(g, in->mask, 4, square);
    if (in->window_index) {
        at.window_bias = hfx_reshape(g, in->window_mask, 4, square);
        at.full = t->full;
    }
    cos_sin(g, hfx_concat(g, 2, (hfx_value *[]){rotary, rotary}, 1), n, hd, &at.cos, &at.sin);
    x = before_layers(t, g, w, prefix, x);
    hfx_value *features = layers_merged(t, g, w, prefix, x, &at, tokens, deepstack_used, deepstack);
    if (!in->window_index || g->failed) return features;
    /* back to the processor's order: the token at window place k is token index[k], so token j is at place
       inverse[j], inverse[index[k]] = k (every place written: index is a permutation) */
    hfx_value *index = in->window_index;
    hfx_value *places = hfx_range(g, i64(g, 0), hfx_dim_of(g, index, 0), i64(g, 1), tokens);
    return hfx_gather(g, features, hfx_scatter_elements(g, index, index, places, 0), 0);
}
