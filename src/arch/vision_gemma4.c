/* Gemma 4's vision encoder (transformers' Gemma4VisionModel): each image's patches of any aspect ratio, padded to the
 * processor's count (pixel_values [N, P, 3·patch²] and image_position_ids [N, P, 2], (x, y) or (−1, −1) for padding),
 * projected from 2·(pixels − ½) with learned x and y positions added; Gemma's sandwich layers attending to the image's
 * real patches, q/k norms and weight-less value norms without a score scale, an axial 2-D rotary (the first half of a
 * head turned by x, the second by y); then every k × k block of patches averaged into one token (the pooled grid's
 * tokens first, row by row), × √hidden in f32, standardized where the config says. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/rope.h"
#include "arch/vision.h"
#include "base/status.h"

hfx_status hfx_gemma4_vision_parse(hfx_cfg c, hfx_gemma4_vision *t, hfx_error *err) {
    const char *act, *rope_type = "axial";
    hfx_cfg rope = {NULL, c.where};
    hfx_status st;
    memset(t, 0, sizeof *t);
    if ((st = hfx_cfg_int_in_or(c, "hidden_size", 768, 1, 1 << 16, &t->hidden, err)) ||
        (st = hfx_cfg_int_in_or(c, "intermediate_size", 3072, 1, 1 << 20, &t->intermediate, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_hidden_layers", 16, 1, 1024, &t->layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_attention_heads", 12, 1, 1024, &t->heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_key_value_heads", t->heads, 1, t->heads, &t->kv_heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "head_dim", 64, 4, 4096, &t->head_dim, err)) ||
        (st = hfx_cfg_int_in_or(c, "patch_size", 16, 1, 1024, &t->patch, err)) ||
        (st = hfx_cfg_int_in_or(c, "pooling_kernel_size", 3, 1, 64, &t->kernel, err)) ||
        (st = hfx_cfg_int_in_or(c, "position_embedding_size", 10240, 1, 1 << 20, &t->positions, err)) ||
        (st = hfx_cfg_num_or(c, "rms_norm_eps", 1e-6, &t->eps, err)) ||
        (st = hfx_cfg_str_or(c, "hidden_activation", "gelu_pytorch_tanh", &act, err)) ||
        (st = hfx_cfg_bool_or(c, "use_clipped_linears", false, &t->clipped, err)) ||
        (st = hfx_cfg_bool_or(c, "standardize", false, &t->standardize, err)))
        return st;
    if (t->heads % t->kv_heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_attention_heads %lld is not a multiple of num_key_value_heads %lld",
                        c.where, (long long)t->heads, (long long)t->kv_heads);
    if (t->head_dim % 4)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: head_dim %lld: the axial rotary turns two quarters of a head per axis",
                        c.where, (long long)t->head_dim);
    if (!hfx_activation_from_name(act, &t->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: hidden_activation '%s' is not supported (known: %s)", c.where, act,
                        hfx_activation_names());
    t->theta = 100.0;
    const json_t *r = json_object_get(c.obj, "rope_parameters");
    if (r && !json_is_null(r)) {
        if (!json_is_object(r))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'rope_parameters' must be an object", c.where);
        rope.obj = r;
        if ((st = hfx_cfg_str_or(rope, "rope_type", "axial", &rope_type, err)) ||
            (st = hfx_cfg_num_or(rope, "rope_theta", 100.0, &t->theta, err)))
            return st;
    }
    if (strcmp(rope_type, "axial") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: rope_parameters.rope_type '%s' (Gemma 4's vision encoder turns "
                                                  "\"axial\" only)", c.where, rope_type);
    if (!(t->theta > 0) || !(t->eps > 0 && t->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rope_theta %g or rms_norm_eps %g out of range", c.where, t->theta,
                        t->eps);
    return HFX_OK;
}

typedef struct tower_ctx {
    const hfx_gemma4_vision *t;
    hfx_graph *g;
    hfx_weights *w;
    const char *prefix;
    hfx_dim N, P;
} tower_ctx;

/* Gemma's RMSNorm `name` over x's last axis (n wide): x·w in f32, back in x's dtype; no weight: none read. */
static hfx_value *norm(tower_ctx *c, hfx_value *x, int64_t n, const char *name) {
    if (!name) return hfx_rms_plain(c->g, x, c->t->eps);
    return hfx_rms_norm(c->g, x, hfx_weight(c->w, 1, &n, "%s%s.weight", c->prefix, name), c->t->eps, 0.0);
}

/* x clamped to the scalar buffers `<prefix><name>.<low>` and `.<high>` */
static hfx_value *clamped(hfx_graph *g, hfx_weights *w, hfx_value *x, const char *prefix, const char *name,
                          const char *low, const char *high) {
    hfx_value *lo = hfx_cast(g, hfx_weight(w, 0, NULL, "%s%s.%s", prefix, name, low), x->dtype);
    hfx_value *hi = hfx_cast(g, hfx_weight(w, 0, NULL, "%s%s.%s", prefix, name, high), x->dtype);
    return hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, x, lo), hi);
}

hfx_value *hfx_gemma4_linear(hfx_graph *g, hfx_weights *w, bool clipped, hfx_value *x, int64_t in, int64_t out,
                             const char *prefix, const char *name) {
    if (clipped) x = clamped(g, w, x, prefix, name, "input_min", "input_max");
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){out, in}, "%s%s.linear.weight", prefix, name), NULL);
    return clipped ? clamped(g, w, x, prefix, name, "output_min", "output_max") : x;
}

static hfx_value *linear(tower_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    return hfx_gemma4_linear(c->g, c->w, c->t->clipped, x, in, out, c->prefix, name);
}

/* The axial rotary's tables of one axis: coordinate [N,P] i64 → cos and sin [N,1,P,hd/2] in dtype (each of the hd/4
 * frequencies twice, as halves), as transformers computes them in f32. */
static void axis_tables(tower_ctx *c, hfx_value *coord, hfx_dtype dtype, hfx_value **cos, hfx_value **sin) {
    int64_t quarter = c->t->head_dim / 4, spatial = c->t->head_dim / 2;
    float *inv = hfx_arena_alloc(c->g->arena, (size_t)quarter * sizeof *inv);
    if (!inv) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        *cos = *sin = hfx_const_f32(c->g, 0.0f);
        return;
    }
    for (int64_t j = 0; j < quarter; j++) inv[j] = (float)(1.0 / pow(c->t->theta, (double)(2 * j) / (double)spatial));
    hfx_value *f = hfx_op2(c->g, HFX_OP_MUL, hfx_unsqueeze(c->g, hfx_cast(c->g, coord, HFX_DTYPE_F32), -1),
                           hfx_const_bytes(c->g, HFX_DTYPE_F32, 1, &quarter, inv)); /* [N,P,hd/4] */
    f = hfx_unsqueeze(c->g, hfx_concat(c->g, 2, (hfx_value *[]){f, f}, 2), 1);    /* [N,1,P,hd/2] */
    *cos = hfx_cast(c->g, hfx_op1(c->g, HFX_OP_COS, f), dtype);
    *sin = hfx_cast(c->g, hfx_op1(c->g, HFX_OP_SIN, f), dtype);
}

/* x [N,H,P,hd] turned: its first half by x's tables, its second by y's */
static hfx_value *turned(tower_ctx *c, hfx_value *x, hfx_value *const tables[4]) {
    int64_t half = c->t->head_dim / 2;
    hfx_value *a = hfx_rope_apply(c->g, hfx_slice(c->g, x, 3, 0, half), tables[0], tables[1], false);
    hfx_value *b = hfx_rope_apply(c->g, hfx_slice(c->g, x, 3, half, 2 * half), tables[2], tables[3], false);
    return hfx_concat(c->g, 2, (hfx_value *[]){a, b}, 3);
}

/* x [N,P,hidden] → [N, n, P, hd] through `proj`, normed per head by `norm_name` (NULL: without a weight) */
static hfx_value *heads(tower_ctx *c, hfx_value *x, const char *layer, const char *proj, const char *norm_name,
                        int64_t n) {
    char name[192], nn[192];
    int64_t hd = c->t->head_dim;
    snprintf(name, sizeof name, "%s.self_attn.%s", layer, proj);
    hfx_value *h = linear(c, x, c->t->hidden, n * hd, name);
    h = hfx_reshape(c->g, h, 4, (hfx_dim[]){c->N, c->P, hfx_dim_const(n), hfx_dim_const(hd)});
    if (norm_name) snprintf(nn, sizeof nn, "%s.self_attn.%s", layer, norm_name);
    h = norm(c, h, hd, norm_name ? nn : NULL);
    return hfx_transpose(c->g, h, 4, (int64_t[]){0, 2, 1, 3});
}

/* layer i over x [N,P,hidden]: the sandwich around attention and the gated MLP */
static hfx_value *layer(tower_ctx *c, int64_t i, hfx_value *x, hfx_value *bias, hfx_value *const tables[4]) {
    const hfx_gemma4_vision *t = c->t;
    hfx_graph *g = c->g;
    int64_t D = t->hidden, I = t->intermediate, hd = t->head_dim;
    char L[96], n[192];
    snprintf(L, sizeof L, "encoder.layers.%lld", (long long)i);
#define N(leaf) (snprintf(n, sizeof n, "%s.%s", L, leaf), n)
    hfx_value *h = norm(c, x, D, N("input_layernorm"));
    hfx_value *q = turned(c, heads(c, h, L, "q_proj", "q_norm", t->heads), tables);
    hfx_value *k = turned(c, heads(c, h, L, "k_proj", "k_norm", t->kv_heads), tables);
    hfx_value *v = heads(c, h, L, "v_proj", NULL, t->kv_heads);
    hfx_value *a = hfx_transpose(g, hfx_attention(g, q, k, v, bias, 1.0, 0.0, 0), 4, (int64_t[]){0, 2, 1, 3});
    a = linear(c, hfx_reshape(g, a, 3, (hfx_dim[]){c->N, c->P, hfx_dim_const(t->heads * hd)}), t->heads * hd, D,
               N("self_attn.o_proj"));
    x = hfx_op2(g, HFX_OP_ADD, x, norm(c, a, D, N("post_attention_layernorm")));
    h = norm(c, x, D, N("pre_feedforward_layernorm"));
    hfx_value *gate = hfx_activate(g, t->act, linear(c, h, D, I, N("mlp.gate_proj"))); /* (a name a statement) */
    hfx_value *up = linear(c, h, D, I, N("mlp.up_proj"));
    hfx_value *f = linear(c, hfx_op2(g, HFX_OP_MUL, gate, up), I, D, N("mlp.down_proj"));
    return hfx_op2(g, HFX_OP_ADD, x, norm(c, f, D, N("post_feedforward_layernorm")));
#undef N
}

/* The k × k average of x [N,P,D] (padding zeroed) by the patches' clamped coordinates cx, cy [N,P]: token
 * cx/k + (max cx + 1)/k · cy/k of the P/k² the pool makes, in f32 → [N, P/k², D] */
static hfx_value *pooled(tower_ctx *c, hfx_value *x, hfx_value *cx, hfx_value *cy, hfx_dim L) {
    hfx_graph *g = c->g;
    int64_t k = c->t->kernel, axis = 1;
    hfx_value *kv = hfx_const_i64(g, k);
    hfx_value *wide = hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_MAX, cx, 1, &axis), hfx_const_i64(g, 1)); /* [N,1] */
    hfx_value *idx = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_DIV, cx, kv),
                             hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, wide, kv), hfx_op2(g, HFX_OP_DIV, cy, kv)));
    hfx_value *count = hfx_op2(g, HFX_OP_DIV, hfx_dim_of(g, x, 1), hfx_const_i64(g, k * k));
    hfx_value *slots = hfx_range(g, hfx_const_i64(g, 0), count, hfx_const_i64(g, 1), L);
    hfx_value *onehot = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, idx, -1), slots), HFX_DTYPE_F32); /* [N,P,L] */
    onehot = hfx_op2(g, HFX_OP_DIV, onehot, hfx_const_f32(g, (float)(k * k)));
    return hfx_op2(g, HFX_OP_MATMUL, hfx_transpose(g, onehot, 3, (int64_t[]){0, 2, 1}), hfx_cast(g, x, HFX_DTYPE_F32));
}

hfx_value *hfx_gemma4_vision_tower(const hfx_gemma4_vision *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, hfx_value *positions, hfx_value **lengths) {
    tower_ctx c = {t, g, w, prefix, pixels->dims[0], pixels->dims[1]};
    int64_t D = t->hidden, in = 3 * t->patch * t->patch, S = t->positions, k2 = t->kernel * t->kernel;
    hfx_dim N = c.N, P = c.P;
    hfx_value *px = hfx_reshape(g, hfx_slice(g, positions, 2, 0, 1), 2, (hfx_dim[]){N, P});
    hfx_value *py = hfx_reshape(g, hfx_slice(g, positions, 2, 1, 2), 2, (hfx_dim[]){N, P});
    hfx_value *minus = hfx_const_i64(g, -1), *zero = hfx_const_i64(g, 0);
    hfx_value *pad = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_EQUAL, px, minus), hfx_op2(g, HFX_OP_EQUAL, py, minus));
    hfx_value *cx = hfx_op2(g, HFX_OP_MAX, px, zero), *cy = hfx_op2(g, HFX_OP_MAX, py, zero);
    /* the patches' projection and learned positions (0 on padding) */
    hfx_value *x = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_SUB, pixels, hfx_const_scalar(g, pixels->dtype, 0.5)),
                           hfx_const_scalar(g, pixels->dtype, 2.0));
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){D, in}, "%spatch_embedder.input_proj.weight", prefix), NULL);
    hfx_value *table = hfx_weight(w, 3, (int64_t[]){2, S, D}, "%spatch_embedder.position_embedding_table", prefix);
    hfx_dim rows[2] = {hfx_dim_const(S), hfx_dim_const(D)};
    hfx_value *xt = hfx_reshape(g, hfx_const_slice(g, table, 0, 0, 1), 2, rows);
    hfx_value *yt = hfx_reshape(g, hfx_const_slice(g, table, 0, 1, 1), 2, rows);
    hfx_value *pe = hfx_op2(g, HFX_OP_ADD, hfx_gather(g, xt, cx, 0), hfx_gather(g, yt, cy, 0)); /* [N,P,D] */
    pe = hfx_where(g, hfx_unsqueeze(g, pad, -1), hfx_const_scalar(g, pe->dtype, 0.0), pe);
    x = hfx_op2(g, HFX_OP_ADD, x, pe);
    /* the real patches' keys visible; the rotary of the raw coordinates */
    hfx_value *bias = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, pad, 1), 1), hfx_const_f32(g, -FLT_MAX),
                                hfx_const_f32(g, 0.0f)); /* [N,1,1,P] */
    hfx_value *tables[4];
    axis_tables(&c, px, x->dtype, &tables[0], &tables[1]);
    axis_tables(&c, py, x->dtype, &tables[2], &tables[3]);
    for (int64_t i = 0; i < t->layers && !g->failed; i++) x = layer(&c, i, x, bias, tables);
    /* the pool: each image's real tokens (its patches / k²) first */
    x = hfx_where(g, hfx_unsqueeze(g, pad, -1), hfx_const_scalar(g, x->dtype, 0.0), x);
    if (hfx_dim_is_const(P) && P.c % k2)
        hfx_graph_fail(g, HFX_ERR_INVALID, "Gemma 4's vision encoder: %lld patches do not pool by %lld × %lld",
                       (long long)P.c, (long long)t->kernel, (long long)t->kernel);
    hfx_dim L = hfx_dim_is_const(P) ? hfx_dim_const(P.c / k2)
                                    : hfx_dim_sym(hfx_graph_symbol_derived(g, "num_image_tokens", P, k2, 0));
    hfx_value *y = k2 > 1 ? pooled(&c, x, cx, cy, L) : hfx_cast(g, x, HFX_DTYPE_F32);
    y = hfx_op2(g, HFX_OP_MUL, y, hfx_const_f32(g, (float)sqrt((double)D)));
    if (t->standardize) {
        y = hfx_op2(g, HFX_OP_SUB, y, hfx_weight_f32(w, 1, &D, hfx_arena_printf(g->arena, "%sstd_bias", prefix)));
        y = hfx_op2(g, HFX_OP_MUL, y, hfx_weight_f32(w, 1, &D, hfx_arena_printf(g->arena, "%sstd_scale", prefix)));
    }
    int64_t axis = 1;
    hfx_value *real = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, hfx_op1(g, HFX_OP_NOT, pad), HFX_DTYPE_I64), 1, &axis);
    *lengths = hfx_reshape(g, hfx_op2(g, HFX_OP_DIV, real, hfx_const_i64(g, k2)), 1, &N);
    return hfx_cast(g, y, pixels->dtype);
}
