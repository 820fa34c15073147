/* Alternating updates (AltUp, Gemma 3n): the residual is altup_num_inputs streams x [B,S,N,D]. The layers run on one
 * of them (the active one, altup_active_idx); before a layer, each stream is predicted as itself plus a mix of all of
 * them whose coefficients the active stream routes; after it, every prediction is corrected by the layer's innovation
 * (its output less the active prediction), each by a routed coefficient + 1. The layer's sandwich gains a learned
 * low-rank residual (LAuReL). In the model's dtype, as transformers computes them (the router's tanh in f32). */
#include <math.h>
#include <stdio.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

hfx_status hfx_dec_parse_altup(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "altup_num_inputs", 4, 2, 64, &m->altup.streams, err)) ||
        (st = hfx_cfg_int_in_or(c, "altup_active_idx", 0, 0, m->altup.streams - 1, &m->altup.active, err)) ||
        (st = hfx_cfg_bool_or(c, "altup_correct_scale", true, &m->altup.correct_scale, err)) ||
        (st = hfx_cfg_int_in_or(c, "laurel_rank", 64, 1, 1 << 16, &m->altup.laurel_rank, err)))
        return st;
    return HFX_OK;
}

/* mean(x²) over the last axis: [B,S,D] → [B,S,1] */
static hfx_value *mean_square(hfx_graph *g, hfx_value *x) {
    int64_t axis = -1;
    return hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_MUL, x, x), 1, &axis);
}

/* x · target / √max(mean(x²), 1e-5): x [B,S,D] brought to the magnitude target [B,S,1] (transformers' order). */
static hfx_value *at_magnitude(hfx_graph *g, hfx_value *x, hfx_value *target) {
    hfx_value *floor = hfx_const_scalar(g, x->dtype, 1e-5);
    hfx_value *magnitude = hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_MAX, mean_square(g, x), floor));
    return hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_MUL, x, target), magnitude);
}

/* √mean(x²) over the last axis: [B,S,D] → [B,S,1] */
static hfx_value *magnitude_of(hfx_graph *g, hfx_value *x) {
    return hfx_op1(g, HFX_OP_SQRT, mean_square(g, x));
}

/* Stream n of x [B,S,N,D] → [B,S,D]. */
static hfx_value *stream(layer_ctx *c, hfx_value *x, int64_t n) {
    return hfx_reshape(c->g, hfx_slice(c->g, x, 2, n, n + 1), 3,
                       (hfx_dim[]){c->batch, c->seq, hfx_dim_const(c->m->hidden)});
}

/* The streams [B,S,N,D] from x [B,S,D]: x, then each of its projections `<list>.<n − 1>` at x's magnitude (the
 * layers' input: altup_projections; the head's, from streams 1.. of x: altup_unembed_projections). */
static hfx_value *projected_streams(layer_ctx *c, hfx_value *first, hfx_value *from, const char *list) {
    hfx_graph *g = c->g;
    int64_t N = c->m->altup.streams, D = c->m->hidden;
    hfx_value *target = magnitude_of(g, first), *parts[64];
    parts[0] = hfx_unsqueeze(g, first, 2);
    for (int64_t n = 1; n < N; n++) {
        char name[96];
        snprintf(name, sizeof name, "model.%s.%lld", list, (long long)(n - 1));
        hfx_value *p = hfx_dec_proj(c, from ? stream(c, from, n) : first, D, D, false, name);
        parts[n] = hfx_unsqueeze(g, at_magnitude(g, p, target), 2);
    }
    return hfx_concat(g, (int)N, parts, 2);
}

hfx_value *hfx_dec_altup_expand(layer_ctx *c, hfx_value *x) {
    return projected_streams(c, x, NULL, "altup_projections");
}

/* the streams back into one: stream 0 and the others' projections at its magnitude, averaged → [B,S,D] */
hfx_value *hfx_dec_altup_head(layer_ctx *c, hfx_value *x) {
    int64_t axis = 2;
    hfx_value *all = projected_streams(c, stream(c, x, 0), x, "altup_unembed_projections");
    return hfx_reshape(c->g, hfx_reduce(c->g, HFX_OP_REDUCE_MEAN, all, 1, &axis), 3,
                       (hfx_dim[]){c->batch, c->seq, hfx_dim_const(c->m->hidden)});
}

/* The router's modalities: tanh(modality_router(router_norm(h) / D)) [B,S,N], the tanh in f32. */
static hfx_value *modalities(layer_ctx *c, int64_t i, hfx_value *h) {
    hfx_graph *g = c->g;
    int64_t N = c->m->altup.streams, D = c->m->hidden;
    char p[160];
    hfx_value *r = hfx_dec_norm(c, h, D, hfx_dec_name(c, i, "altup", "router_norm", p, sizeof p));
    r = hfx_op2(g, HFX_OP_MUL, r, hfx_const_scalar(g, r->dtype, 1.0 / (double)D));
    r = hfx_dec_proj(c, r, D, N, false, hfx_dec_name(c, i, "altup", "modality_router", p, sizeof p));
    return hfx_cast(g, hfx_op1(g, HFX_OP_TANH, hfx_cast(g, r, HFX_DTYPE_F32)), h->dtype);
}

hfx_value *hfx_dec_altup_predict(layer_ctx *c, int64_t i, hfx_value *x, hfx_value **active) {
    hfx_graph *g = c->g;
    int64_t N = c->m->altup.streams;
    char p[160];
    hfx_value *route = modalities(c, i, stream(c, x, c->m->altup.active));
    hfx_value *coefs = hfx_dec_proj(c, route, N, N * N, false, hfx_dec_name(c, i, "altup", "prediction_coefs", p, sizeof p));
    coefs = hfx_reshape(g, coefs, 4, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(N), hfx_dim_const(N)}); /* [B,S,N,N] */
    hfx_value *pred = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MATMUL, coefs, x), x); /* stream n: Σ_j C[n,j]·x_j + x_n */
    *active = stream(c, pred, c->m->altup.active);
    return pred;
}

hfx_value *hfx_dec_altup_correct(layer_ctx *c, int64_t i, hfx_value *pred, hfx_value *y) {
    hfx_graph *g = c->g;
    int64_t N = c->m->altup.streams;
    char p[160];
    hfx_value *coefs = hfx_dec_proj(c, modalities(c, i, y), N, N, false,
                                    hfx_dec_name(c, i, "altup", "correction_coefs", p, sizeof p));
    coefs = hfx_op2(g, HFX_OP_ADD, coefs, hfx_const_scalar(g, coefs->dtype, 1.0)); /* [B,S,N] */
    hfx_value *innovation = hfx_op2(g, HFX_OP_SUB, y, stream(c, pred, c->m->altup.active));
    hfx_value *x = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, innovation, 2), hfx_unsqueeze(g, coefs, -1)),
                           pred);
    if (!c->per_layer_inputs) return x;
    /* every stream but the first gains the per-layer term of the corrected active stream (scaled where the config
     * says): x + mask·term, mask [N,1] 0 then 1s (an exact add of 0 to stream 0) */
    hfx_value *first = stream(c, x, c->m->altup.active);
    if (c->m->altup.correct_scale) {
        int64_t D = c->m->hidden;
        first = hfx_op2(g, HFX_OP_MUL, first,
                        hfx_weight(c->w, 1, &D, "%s", hfx_dec_name(c, i, "altup", "correct_output_scale", p, sizeof p)));
    }
    hfx_value *term = hfx_dec_per_layer_term(c, i, first);
    float ones[64];
    for (int64_t n = 0; n < N; n++) ones[n] = n ? 1.0f : 0.0f;
    hfx_value *mask = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){N, 1}, ones), term->dtype);
    return hfx_op2(g, HFX_OP_ADD, x, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, term, 2), mask));
}

hfx_value *hfx_dec_laurel(layer_ctx *c, int64_t i, hfx_value *h) {
    int64_t D = c->m->hidden, R = c->m->altup.laurel_rank;
    char p[160];
    hfx_value *y = hfx_dec_proj(c, h, D, R, false, hfx_dec_name(c, i, "laurel", "linear_left", p, sizeof p));
    y = hfx_dec_proj(c, y, R, D, false, hfx_dec_name(c, i, "laurel", "linear_right", p, sizeof p));
    return hfx_op2(c->g, HFX_OP_ADD, h, hfx_dec_norm(c, y, D, hfx_dec_name(c, i, "laurel", "post_laurel_norm", p, sizeof p)));
}
