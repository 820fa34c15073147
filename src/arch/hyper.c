/* Hyper-connections: the residual is hc_mult streams x [B,S,N,D], the embeddings copied into each. Before a sublayer,
 * mixes computed from all streams weigh them into its input (pre), and its output is added to each stream times its
 * own weight (post); the head weighs them into one at the end. HY V4's form (HFX_LAYOUT_HYPER) adds the output to the
 * streams as they are; DeepSeek V4's (HFX_LAYOUT_HYPER_SINKHORN) to the streams mixed by a third weight, an N×N matrix
 * Sinkhorn-Knopp's rounds make doubly stochastic, its post weights 2·σ without hc_eps. The weights in f32, as
 * transformers keeps these parameters and computes them. Qwen4-Exp's gated residuals (HFX_LAYOUT_HYPER_GATED) read
 * the streams normed one by one instead: a sublayer's input is the mean of the normed streams, each gated by a
 * low-rank sigmoid mix of all of them, its output added to each stream by 2·σ of a weight; in the model's dtype, as
 * its linears are. */
#include <stdio.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

hfx_status hfx_dec_parse_hyper(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "hc_mult", 4, 1, 64, &m->hyper.streams, err)) ||
        (st = hfx_cfg_num_or(c, "hc_magnitude", 2.0, &m->hyper.magnitude, err)) ||
        (st = hfx_cfg_num_or(c, "hc_eps", 1e-6, &m->hyper.eps, err)))
        return st;
    m->hyper.sinkhorn = m->hyper.lowrank = 0;
    if (m->layout == HFX_LAYOUT_HYPER_GATED) {
        if ((st = hfx_cfg_int_in_or(c, "hc_count", 4, 2, 64, &m->hyper.streams, err)) ||
            (st = hfx_cfg_int_in_or(c, "hc_lowrank", 320, 1, 1 << 20, &m->hyper.lowrank, err)))
            return st;
        m->no_final_norm = true; /* (the streams' mixer takes its place) */
        return HFX_OK;
    }
    if (m->layout != HFX_LAYOUT_HYPER_SINKHORN) return HFX_OK;
    m->hyper.magnitude = 2.0; /* (its post weights' fixed scale: no hc_magnitude read) */
    return hfx_cfg_int_in_or(c, "hc_sinkhorn_iters", 20, 1, 1000, &m->hyper.sinkhorn, err);
}

/* [B,S,D] → [B,S,N,D]: the stream copied N times (the expand's target read at run time for the torch formats). */
hfx_value *hfx_dec_hyper_expand(layer_ctx *c, hfx_value *x) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams;
    hfx_value *parts[4] = {hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0), hfx_unsqueeze(g, hfx_dim_of(g, x, 1), 0),
                           hfx_unsqueeze(g, hfx_const_i64(g, N), 0), hfx_unsqueeze(g, hfx_dim_of(g, x, 2), 0)};
    return hfx_expand(g, hfx_unsqueeze(g, x, 2), hfx_concat(g, 4, parts, 0), 4,
                      (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(N), x->dims[2]});
}

/* σ(mixes·scale + base) times magnitude, + eps (the weights of one kind: [B,S,N] f32). */
static hfx_value *gates(hfx_graph *g, hfx_value *mixes, hfx_value *scale, hfx_value *base, double magnitude, double eps) {
    hfx_value *s = hfx_op1(g, HFX_OP_SIGMOID, hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, mixes, scale), base));
    if (magnitude != 1.0) s = hfx_op2(g, HFX_OP_MUL, s, hfx_const_f32(g, (float)magnitude));
    return eps != 0 ? hfx_op2(g, HFX_OP_ADD, s, hfx_const_f32(g, (float)eps)) : s;
}

/* The streams' mixes: x [B,S,N,D] → fn(flat x) · rsqrt(mean(flat x²) + ε) [B,S,rows] f32, ε the model's norm epsilon
 * (an unweighted RMS norm's factor), and fn's [rows, N·D] read at prefix.fn (or the head's prefix.hc_fn). */
static hfx_value *mixes(layer_ctx *c, hfx_value *xf, int64_t rows, const char *fn) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams, D = c->m->hidden;
    hfx_value *flat = hfx_reshape(g, xf, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(N * D)});
    hfx_value *r = hfx_rms_factor(g, flat, c->m->eps); /* [B,S,1] */
    hfx_value *w = hfx_weight_f32(c->w, 2, (int64_t[]){rows, N * D}, fn);
    return hfx_op2(g, HFX_OP_MUL, hfx_linear(g, flat, w, NULL), r);
}

/* Σ_n pre[n]·x[n]: [B,S,N] f32, [B,S,N,D] f32 → [B,S,D] in the stream's dtype. */
static hfx_value *weighed(layer_ctx *c, hfx_value *pre, hfx_value *xf, hfx_dtype dtype) {
    int64_t axis = 2;
    hfx_value *y = hfx_op2(c->g, HFX_OP_MUL, hfx_unsqueeze(c->g, pre, -1), xf);
    hfx_value *sum = hfx_reduce(c->g, HFX_OP_REDUCE_SUM, y, 1, &axis); /* [B,S,1,D] */
    return hfx_cast(c->g, hfx_reshape(c->g, sum, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(c->m->hidden)}), dtype);
}

/* m / (Σ of m over `axis` + ε): one of Sinkhorn-Knopp's normalisations of m [B,S,N,N] (axis 3: rows, 2: columns). */
static hfx_value *normalised(hfx_graph *g, hfx_value *m, int64_t axis, float eps) {
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, m, 1, &axis);
    return hfx_op2(g, HFX_OP_DIV, m, hfx_op2(g, HFX_OP_ADD, sum, hfx_const_f32(g, eps)));
}

/* The streams' mixing matrix [B,S,N,N] f32 from its mixes [B,S,N·N]: softmax(mixes·scale + base) over each row,
 * + hc_eps, its columns normalised, then hc_sinkhorn_iters − 1 rounds of rows then columns. */
static hfx_value *sinkhorn(layer_ctx *c, hfx_value *mix, hfx_value *scale, hfx_value *base) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams;
    float eps = (float)c->m->hyper.eps;
    hfx_value *m = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, mix, scale), base);
    m = hfx_reshape(g, m, 4, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(N), hfx_dim_const(N)});
    m = hfx_op2(g, HFX_OP_ADD, hfx_softmax(g, m, -1), hfx_const_f32(g, eps));
    m = normalised(g, m, 2, eps);
    for (int64_t r = 1; r < c->m->hyper.sinkhorn; r++) m = normalised(g, normalised(g, m, 3, eps), 2, eps);
    return m;
}

hfx_value *hfx_dec_hyper_read(layer_ctx *c, int64_t i, hfx_value *x, const char *block, hfx_value **post,
                              hfx_value **comb) {
    hfx_graph *g = c->g;
    bool mixed = c->m->layout == HFX_LAYOUT_HYPER_SINKHORN;
    int64_t N = c->m->hyper.streams, rows = mixed ? (2 + N) * N : 2 * N, parts = mixed ? 3 : 2;
    char p[192], fn[224], bn[224], sn[224];
    hfx_dec_name(c, i, NULL, block, p, sizeof p);
    snprintf(fn, sizeof fn, "%s.fn", p);
    snprintf(bn, sizeof bn, "%s.base", p);
    snprintf(sn, sizeof sn, "%s.scale", p);
    hfx_value *xf = hfx_cast(g, x, HFX_DTYPE_F32);
    hfx_value *mix = mixes(c, xf, rows, fn); /* [B,S,rows]: pre's, post's (then the matrix's) */
    hfx_value *base = hfx_weight_f32(c->w, 1, &rows, bn), *scale = hfx_weight_f32(c->w, 1, &parts, sn);
    hfx_value *pre = gates(g, hfx_slice(g, mix, 2, 0, N), hfx_const_slice(g, scale, 0, 0, 1),
                           hfx_const_slice(g, base, 0, 0, N), 1.0, c->m->hyper.eps);
    *post = gates(g, hfx_slice(g, mix, 2, N, 2 * N), hfx_const_slice(g, scale, 0, 1, 1),
                  hfx_const_slice(g, base, 0, N, N), c->m->hyper.magnitude, mixed ? 0.0 : c->m->hyper.eps);
    *comb = mixed ? sinkhorn(c, hfx_slice(g, mix, 2, 2 * N, rows), hfx_const_slice(g, scale, 0, 2, 1),
                             hfx_const_slice(g, base, 0, 2 * N, N * N))
                  : NULL;
    return weighed(c, pre, xf, x->dtype);
}

hfx_value *hfx_dec_hyper_write(layer_ctx *c, hfx_value *x, hfx_value *post, hfx_value *comb, hfx_value *y) {
    hfx_graph *g = c->g;
    if (comb) { /* in the streams' dtype, as transformers mixes them: post·y + combᵀ·x */
        hfx_value *spread = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, post, x->dtype), -1), hfx_unsqueeze(g, y, 2));
        hfx_value *ct = hfx_transpose(g, hfx_cast(g, comb, x->dtype), 4, (int64_t[]){0, 1, 3, 2});
        return hfx_op2(g, HFX_OP_ADD, spread, hfx_op2(g, HFX_OP_MATMUL, ct, x));
    }
    hfx_value *spread = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, post, -1),
                                hfx_unsqueeze(g, hfx_cast(g, y, HFX_DTYPE_F32), 2)); /* [B,S,N,D] */
    return hfx_cast(g, hfx_op2(g, HFX_OP_ADD, spread, hfx_cast(g, x, HFX_DTYPE_F32)), x->dtype);
}

static hfx_value *gated_mix(layer_ctx *c, hfx_value *x, const char *p, hfx_value **inject);

hfx_value *hfx_dec_hyper_head(layer_ctx *c, hfx_value *x) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams, one = 1;
    char p[192], fn[224], bn[224], sn[224];
    /* beside the final norm: "model.norm" → "model.hc_head" (the gated form's: "model.hyper_connection_mixer", the
     * layers' mix without an output) */
    const char *dot = strrchr(c->n.final_norm, '.');
    int stem = dot ? (int)(dot - c->n.final_norm) + 1 : 0;
    bool gated = c->m->layout == HFX_LAYOUT_HYPER_GATED;
    snprintf(p, sizeof p, "%.*s%s", stem, c->n.final_norm, gated ? "hyper_connection_mixer" : "hc_head");
    if (gated) return gated_mix(c, x, p, NULL);
    snprintf(fn, sizeof fn, "%s.hc_fn", p);
    snprintf(bn, sizeof bn, "%s.hc_base", p);
    snprintf(sn, sizeof sn, "%s.hc_scale", p);
    hfx_value *xf = hfx_cast(g, x, HFX_DTYPE_F32);
    hfx_value *base = hfx_weight_f32(c->w, 1, &N, bn), *scale = hfx_weight_f32(c->w, 1, &one, sn);
    hfx_value *pre = gates(g, mixes(c, xf, N, fn), scale, base, 1.0, c->m->hyper.eps);
    return weighed(c, pre, xf, x->dtype);
}

/* ---- gated residuals (HFX_LAYOUT_HYPER_GATED) ---- */

hfx_value *hfx_dec_grouped_norm(layer_ctx *c, hfx_value *x, const char *prefix) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams, D = c->m->hidden;
    hfx_value *w = hfx_weight(c->w, 1, (int64_t[]){N * D}, "%s.weight", prefix);
    w = hfx_op2(g, HFX_OP_ADD, hfx_reshape(g, hfx_cast(g, w, HFX_DTYPE_F32), 2, (hfx_dim[]){hfx_dim_const(N), hfx_dim_const(D)}),
                hfx_const_f32(g, 1.0f));
    hfx_value *y = hfx_op2(g, HFX_OP_MUL, hfx_rms_plain(g, hfx_cast(g, x, HFX_DTYPE_F32), c->m->eps), w);
    return hfx_cast(g, y, x->dtype);
}

/* The streams' mix at prefix (a layer's "attn_hyper_connection", the head's mixer): x [B,S,N,D] → [B,S,D], and in
 * *inject (where non-NULL) the weights [B,S,N] write adds the sublayer's output by. */
static hfx_value *gated_mix(layer_ctx *c, hfx_value *x, const char *p, hfx_value **inject) {
    hfx_graph *g = c->g;
    int64_t N = c->m->hyper.streams, D = c->m->hidden, R = c->m->hyper.lowrank;
    hfx_dim flat_dims[3] = {c->batch, c->seq, hfx_dim_const(N * D)};
    char name[224];
    snprintf(name, sizeof name, "%s.hc_norm", p);
    hfx_value *normed = hfx_dec_grouped_norm(c, x, name);                                     /* [B,S,N,D] */
    hfx_value *flat = hfx_reshape(g, normed, 3, flat_dims);
    snprintf(name, sizeof name, "%s.input_mix_weight_down", p);
    hfx_value *mix = hfx_dec_scaled(g, hfx_dec_proj(c, flat, N * D, R, false, name), 1.0 / (double)N);
    snprintf(name, sizeof name, "%s.input_mix_weight_up", p);
    mix = hfx_op1(g, HFX_OP_SIGMOID, hfx_dec_proj(c, hfx_activate(g, HFX_ACT_SILU, mix), R, N * D, false, name));
    mix = hfx_op2(g, HFX_OP_MUL, hfx_reshape(g, mix, 4, normed->dims), normed);
    int64_t streams_axis = 2;
    hfx_value *mixed = hfx_reduce(g, HFX_OP_REDUCE_MEAN, mix, 1, &streams_axis);            /* [B,S,1,D] */
    if (inject) {
        snprintf(name, sizeof name, "%s.block_inject_weight", p);
        hfx_value *w = hfx_dec_scaled(g, hfx_dec_proj(c, flat, N * D, N, false, name), 1.0 / (double)N);
        *inject = hfx_dec_scaled(g, hfx_op1(g, HFX_OP_SIGMOID, w), 2.0);                    /* [B,S,N] */
    }
    return hfx_reshape(g, mixed, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(D)});
}

hfx_value *hfx_dec_gated_read(layer_ctx *c, int64_t i, hfx_value *x, const char *block, hfx_value **inject) {
    char p[192];
    return gated_mix(c, x, hfx_dec_name(c, i, NULL, block, p, sizeof p), inject);
}

hfx_value *hfx_dec_gated_write(layer_ctx *c, hfx_value *x, hfx_value *inject, hfx_value *y) {
    hfx_graph *g = c->g;
    return hfx_op2(g, HFX_OP_ADD, x, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, y, 2), hfx_unsqueeze(g, inject, -1)));
}
