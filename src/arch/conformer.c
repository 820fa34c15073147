/* The conformer block (conformer.h), as transformers' Wav2Vec2ConformerEncoderLayer computes it. */
#include "arch/conformer.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/rope.h"
#include "base/status.h"

const hfx_conformer_names hfx_conformer_wav2vec2_names = {
    {"ffn1", "ffn2"}, "intermediate_dense", "output_dense", {"ffn1_layer_norm", "ffn2_layer_norm"},
    "self_attn_layer_norm", {"self_attn.linear_q", "self_attn.linear_k", "self_attn.linear_v", "self_attn.linear_out"},
    "self_attn.linear_pos", {"self_attn.pos_bias_u", "self_attn.pos_bias_v"},
    "conv_module.layer_norm", {"conv_module.pointwise_conv1", "conv_module.depthwise_conv", "conv_module.pointwise_conv2"},
    "conv_module.batch_norm", "final_layer_norm"};

hfx_status hfx_conformer_parse(hfx_cfg c, hfx_conformer *out, hfx_error *err) {
    const json_t *pos = json_object_get(c.obj, "position_embeddings_type");
    hfx_status st;
    if (!pos || json_is_string(pos)) {
        const char *kind = pos ? json_string_value(pos) : "relative";
        if (strcmp(kind, "relative") == 0) out->pos = HFX_CONFORMER_POS_RELATIVE;
        else if (strcmp(kind, "rotary") == 0) out->pos = HFX_CONFORMER_POS_ROTARY;
        else
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: position_embeddings_type '%s' is not supported (relative, "
                            "rotary, null)", c.where, kind);
    } else if (json_is_null(pos)) {
        out->pos = HFX_CONFORMER_POS_NONE;
    } else {
        return hfx_fail(err, HFX_ERR_INVALID, "%s: position_embeddings_type must be a string or null", c.where);
    }
    if ((st = hfx_cfg_num_or(c, "rotary_embedding_base", 10000.0, &out->rotary_base, err)) ||
        (st = hfx_cfg_int_in_or(c, "conv_depthwise_kernel_size", 31, 1, 1 << 12, &out->kernel, err)))
        return st;
    if (out->kernel % 2 == 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: conv_depthwise_kernel_size %lld must be odd (\"same\" padding)",
                        c.where, (long long)out->kernel);
    if (!(out->rotary_base > 0))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rotary_embedding_base must be positive", c.where);
    if ((out->hidden / out->heads) % 2 || out->hidden % 2)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: the positions need an even head width", c.where);
    return HFX_OK;
}

/* i64 0, 1, ..., n − 1 [n] for the scalar n of dim d. */
static hfx_value *count(hfx_graph *g, hfx_value *n, hfx_dim d) {
    return hfx_range(g, hfx_const_i64(g, 0), n, hfx_const_i64(g, 1), d);
}

/* A constant f32 vector [n] of v. */
static hfx_value *f32_vector(hfx_graph *g, int64_t n, const float *v) {
    return hfx_const_bytes(g, HFX_DTYPE_F32, 1, &n, v);
}

/* Shaw's blocks: their count, which query-key pairs are both frames, each distance's row */
static void shaw_prepare(const hfx_conformer *cf, hfx_graph *g, hfx_value *frames, hfx_dim F,
                         hfx_conformer_inputs *out) {
    int64_t C = cf->block;
    out->blocks = hfx_blocks_of(g, F, C, "conformer_blocks");
    hfx_value *nb = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, frames, hfx_const_i64(g, C - 1)), hfx_const_i64(g, C));
    hfx_value *index = hfx_reshape(g, count(g, hfx_op2(g, HFX_OP_MUL, nb, hfx_const_i64(g, C)),
                                            hfx_dim_scale(out->blocks, C)),
                                   2, (hfx_dim[]){out->blocks, hfx_dim_const(C)}); /* [nb, C] */
    hfx_value *real = hfx_op2(g, HFX_OP_LESS, index, frames);
    hfx_value *both = hfx_op2(g, HFX_OP_AND, hfx_unsqueeze(g, real, 2), hfx_unsqueeze(g, real, 1)); /* [nb, C, C] */
    out->block_real = hfx_unsqueeze(g, hfx_unsqueeze(g, both, 1), 0);
    int64_t *rows = hfx_arena_alloc(g->arena, (size_t)(C * C) * sizeof *rows);
    if (!rows) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return;
    }
    for (int64_t i = 0; i < C; i++) /* (i − j within ±C: the clamp to ±C never bites) */
        for (int64_t j = 0; j < C; j++) rows[i * C + j] = i - j + cf->max_distance;
    out->distance = hfx_const_bytes(g, HFX_DTYPE_I64, 2, (int64_t[]){C, C}, rows);
}

void hfx_conformer_prepare(const hfx_conformer *cf, hfx_graph *g, hfx_value *x, hfx_value *pad, hfx_value *inv_freq,
                           hfx_conformer_inputs *out) {
    memset(out, 0, sizeof *out);
    out->pad = pad;
    hfx_value *frames = hfx_dim_of(g, x, 1);
    hfx_dim F = x->dims[1];
    float table[2048];
    if (cf->pos == HFX_CONFORMER_POS_ROTARY) { /* cos, sin of t·θ^(−2j/hd), the half repeated, in float32 */
        int64_t hd = cf->hidden / cf->heads, half = hd / 2;
        if (half > 2048) {
            hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "conformer: a head over 4096 wide");
            return;
        }
        for (int64_t j = 0; j < half; j++)
            table[j] = 1.0f / powf((float)cf->rotary_base, (float)(2 * j) / (float)hd);
        hfx_value *t = hfx_unsqueeze(g, hfx_cast(g, count(g, frames, F), HFX_DTYPE_F32), 1);   /* [F,1] */
        hfx_value *freqs = hfx_op2(g, HFX_OP_MUL, t, inv_freq ? inv_freq : f32_vector(g, half, table)); /* [F,hd/2] */
        hfx_value *angles = hfx_concat(g, 2, (hfx_value *[]){freqs, freqs}, 1);                /* [F,hd] */
        hfx_dim shape[4] = {hfx_dim_const(1), F, hfx_dim_const(1), hfx_dim_const(hd)};
        out->cos = hfx_cast(g, hfx_reshape(g, hfx_op1(g, HFX_OP_COS, angles), 4, shape), x->dtype);
        out->sin = hfx_cast(g, hfx_reshape(g, hfx_op1(g, HFX_OP_SIN, angles), 4, shape), x->dtype);
    } else if (cf->pos == HFX_CONFORMER_POS_RELATIVE) {
        int64_t half = cf->hidden / 2;
        if (half > 2048) {
            hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "conformer: a width over 4096");
            return;
        }
        float step = (float)(-(log(10000.0) / (double)cf->hidden));
        for (int64_t j = 0; j < half; j++)
            table[j] = cf->pow_freqs ? 1.0f / powf(10000.0f, (float)(2 * j) / (float)cf->hidden) : expf((float)(2 * j) * step);
        bool ok;
        hfx_dim span = hfx_dim_add(hfx_dim_scale(F, 2), hfx_dim_const(-1), &ok); /* 2F − 1 distances */
        hfx_value *n = hfx_op2(g, HFX_OP_SUB, hfx_op2(g, HFX_OP_MUL, frames, hfx_const_i64(g, 2)), hfx_const_i64(g, 1));
        hfx_value *last = hfx_op2(g, HFX_OP_SUB, frames, hfx_const_i64(g, 1));
        hfx_value *r = hfx_op2(g, HFX_OP_SUB, last, count(g, n, span));                         /* F−1 .. 1−F */
        hfx_value *angles = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, r, HFX_DTYPE_F32), 1),
                                    f32_vector(g, half, table));                                /* [2F−1, H/2] */
        hfx_value *pair[2] = {hfx_unsqueeze(g, hfx_op1(g, HFX_OP_SIN, angles), 2),
                              hfx_unsqueeze(g, hfx_op1(g, HFX_OP_COS, angles), 2)};             /* sin, cos interleaved */
        out->pe = hfx_cast(g, hfx_reshape(g, hfx_concat(g, 2, pair, 2), 3,
                                          (hfx_dim[]){hfx_dim_const(1), span, hfx_dim_const(cf->hidden)}),
                           x->dtype);
        /* row i's scores are over distances F−1 .. 1−F: the key j's column is F − 1 − i + j */
        hfx_value *i = hfx_unsqueeze(g, count(g, frames, F), 1), *j = hfx_unsqueeze(g, count(g, frames, F), 0);
        hfx_value *col = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_SUB, last, i), j);            /* [F,F] */
        hfx_value *shape = hfx_concat(g, 4, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                             hfx_unsqueeze(g, hfx_const_i64(g, cf->heads), 0),
                                                             hfx_unsqueeze(g, frames, 0), hfx_unsqueeze(g, frames, 0)}, 0);
        out->shift = hfx_expand(g, hfx_unsqueeze(g, hfx_unsqueeze(g, col, 0), 0), shape, 4,
                                (hfx_dim[]){x->dims[0], hfx_dim_const(cf->heads), F, F});
    } else if (cf->pos == HFX_CONFORMER_POS_SHAW_BLOCKS) {
        shaw_prepare(cf, g, frames, F, out);
    }
}

typedef struct layer_ctx {
    const hfx_conformer *cf;
    const hfx_conformer_names *n;
    hfx_graph *g;
    hfx_weights *w;
    const char *layer;
} layer_ctx;

static hfx_value *W(layer_ctx *c, int rank, const int64_t *shape, const char *leaf) {
    return hfx_weight(c->w, rank, shape, "%s.%s", c->layer, leaf);
}

static hfx_value *linear(layer_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias, const char *name) {
    char n[160];
    snprintf(n, sizeof n, "%s.weight", name);
    hfx_value *w = W(c, 2, (int64_t[]){out, in}, n);
    snprintf(n, sizeof n, "%s.bias", name);
    return hfx_linear(c->g, x, w, bias ? W(c, 1, &out, n) : NULL);
}

/* nn.LayerNorm(hidden) at its default eps 1e-5 (the block's norms read no config eps) */
static hfx_value *norm(layer_ctx *c, hfx_value *x, const char *name) {
    char wn[160], bn[160];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    int64_t h = c->cf->hidden;
    return hfx_layer_norm(c->g, x, W(c, 1, &h, wn), W(c, 1, &h, bn), 1e-5);
}

/* x + ½·feed_forward(norm(x)), the first (0) or second (1) */
static hfx_value *half_ffn(layer_ctx *c, hfx_value *x, int which) {
    hfx_graph *g = c->g;
    int64_t h = c->cf->hidden, I = c->cf->intermediate;
    char n[96];
    snprintf(n, sizeof n, "%s.%s", c->n->ffn[which], c->n->ffn_in);
    hfx_value *y = hfx_activate(g, c->cf->act, linear(c, norm(c, x, c->n->ffn_norm[which]), h, I, c->cf->linear_bias, n));
    snprintf(n, sizeof n, "%s.%s", c->n->ffn[which], c->n->ffn_out);
    y = linear(c, y, I, h, c->cf->linear_bias, n);
    return hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, y, hfx_const_scalar(g, y->dtype, 0.5)), x);
}

/* t [B,F,hidden] as heads [B,heads,F,hd] */
static hfx_value *heads(layer_ctx *c, hfx_value *t) {
    int64_t H = c->cf->heads, hd = c->cf->hidden / H;
    t = hfx_reshape(c->g, t, 4, (hfx_dim[]){t->dims[0], t->dims[1], hfx_dim_const(H), hfx_dim_const(hd)});
    return hfx_transpose(c->g, t, 4, (int64_t[]){0, 2, 1, 3});
}

/* t [B, nb·C, H] as each block's heads [B, nb, heads, C, hd] */
static hfx_value *block_heads(layer_ctx *c, const hfx_conformer_inputs *in, hfx_value *t) {
    int64_t C = c->cf->block, nh = c->cf->heads, hd = c->cf->hidden / nh;
    t = hfx_reshape(c->g, t, 5, (hfx_dim[]){t->dims[0], in->blocks, hfx_dim_const(C), hfx_dim_const(nh),
                                            hfx_dim_const(hd)});
    return hfx_transpose(c->g, t, 5, (int64_t[]){0, 1, 3, 2, 4});
}

/* Shaw's block attention over h [B,F,H] (normed): the frames zero-padded to whole blocks, each block's queries scored
 * against its keys and against the embedding of each distance (both × head_dim^-½), the padding hidden: [B,F,H] before
 * the output projection */
static hfx_value *shaw_attention(layer_ctx *c, const hfx_conformer_inputs *in, hfx_value *h, hfx_value *q,
                                 hfx_value *k, hfx_value *v) {
    hfx_graph *g = c->g;
    int64_t H = c->cf->hidden, nh = c->cf->heads, hd = H / nh, C = c->cf->block;
    double scale = 1.0 / sqrt((double)hd);
    hfx_dim B = h->dims[0], padded = hfx_dim_scale(in->blocks, C), blocks;
    hfx_value *t[3] = {q, k, v};
    for (int i = 0; i < 3; i++) t[i] = block_heads(c, in, hfx_pad_to_blocks(g, t[i], C, "conformer_blocks", &blocks));
    /* pos[b,n,h,c,r] = Σ_d q[b,n,h,c,d]·E[dist(c,r), d]: the queries by row c against its distances' rows */
    hfx_value *table = hfx_weight(c->w, 2, (int64_t[]){2 * c->cf->max_distance + 1, hd}, "%s.%s.weight", c->layer,
                                  c->n->pos);
    hfx_value *rel = hfx_transpose(g, hfx_gather(g, table, in->distance, 0), 3, (int64_t[]){0, 2, 1}); /* [C, hd, C] */
    hfx_value *qc = hfx_transpose(g, t[0], 5, (int64_t[]){3, 0, 1, 2, 4});                              /* [C,B,nb,nh,hd] */
    hfx_value *pos = hfx_op2(g, HFX_OP_MATMUL, qc, hfx_unsqueeze(g, hfx_unsqueeze(g, rel, 1), 1));   /* [C,B,nb,nh,C] */
    pos = hfx_transpose(g, pos, 5, (int64_t[]){1, 2, 3, 0, 4});                                         /* [B,nb,nh,C,C] */
    pos = hfx_op2(g, HFX_OP_MUL, pos, hfx_const_scalar(g, pos->dtype, scale));
    hfx_value *bias = hfx_where(g, in->block_real, hfx_cast(g, pos, HFX_DTYPE_F32), hfx_const_f32(g, -FLT_MAX));
    hfx_value *a = hfx_attend_any_rank(g, t[0], t[1], t[2], hfx_cast(g, bias, t[0]->dtype), scale);                 /* [B,nb,nh,C,hd] */
    a = hfx_reshape(g, hfx_transpose(g, a, 5, (int64_t[]){0, 1, 3, 2, 4}), 3, (hfx_dim[]){B, padded, hfx_dim_const(H)});
    return hfx_gather(g, a, count(g, hfx_dim_of(g, h, 1), h->dims[1]), 1);
}

/* x + self_attention(norm(x)) */
static hfx_value *attention(layer_ctx *c, const hfx_conformer_inputs *in, hfx_value *x) {
    const hfx_conformer *cf = c->cf;
    hfx_graph *g = c->g;
    int64_t H = cf->hidden, nh = cf->heads, hd = H / nh;
    double scale = 1.0 / sqrt((double)hd);
    const hfx_conformer_names *nm = c->n;
    bool qkv_bias = cf->linear_bias && !cf->qkv_unbiased;
    hfx_value *h = norm(c, x, nm->attn_norm), *qk_in = h;
    if (cf->pos == HFX_CONFORMER_POS_ROTARY) { /* the input turned per head, then projected to q and k */
        hfx_dim per_head[4] = {h->dims[0], h->dims[1], hfx_dim_const(nh), hfx_dim_const(hd)};
        qk_in = hfx_rope_apply(g, hfx_reshape(g, h, 4, per_head), in->cos, in->sin, false);
        qk_in = hfx_reshape(g, qk_in, 3, (hfx_dim[]){h->dims[0], h->dims[1], hfx_dim_const(H)});
    }
    hfx_value *q = linear(c, qk_in, H, H, qkv_bias, nm->proj[0]), *k, *v;
    if (nm->proj[2]) {
        k = linear(c, qk_in, H, H, qkv_bias, nm->proj[1]);
        v = linear(c, h, H, H, qkv_bias, nm->proj[2]);
    } else { /* one linear [k; v] */
        hfx_value *kv = linear(c, h, H, 2 * H, qkv_bias, nm->proj[1]);
        k = hfx_slice(g, kv, 2, 0, H), v = hfx_slice(g, kv, 2, H, 2 * H);
    }
    if (cf->pos == HFX_CONFORMER_POS_SHAW_BLOCKS)
        return hfx_op2(g, HFX_OP_ADD, linear(c, shaw_attention(c, in, h, q, k, v), H, H, cf->linear_bias, nm->proj[3]),
                       x);
    q = heads(c, q), k = heads(c, k), v = heads(c, v);
    hfx_value *bias = in->pad;
    if (cf->pos == HFX_CONFORMER_POS_RELATIVE) { /* Transformer-XL: (q + v_bias)·pos shifted into place, q + u_bias */
        hfx_value *p = linear(c, in->pe, H, H, false, nm->pos); /* [1, 2F−1, H] */
        p = hfx_reshape(g, p, 4, (hfx_dim[]){hfx_dim_const(1), p->dims[1], hfx_dim_const(nh), hfx_dim_const(hd)});
        p = hfx_transpose(g, p, 4, (int64_t[]){0, 2, 3, 1});                    /* [1, heads, hd, 2F−1] */
        hfx_value *u = hfx_reshape(g, W(c, 2, (int64_t[]){nh, hd}, nm->pos_bias[0]), 3,
                                   (hfx_dim[]){hfx_dim_const(nh), hfx_dim_const(1), hfx_dim_const(hd)});
        hfx_value *vb = hfx_reshape(g, W(c, 2, (int64_t[]){nh, hd}, nm->pos_bias[1]), 3,
                                    (hfx_dim[]){hfx_dim_const(nh), hfx_dim_const(1), hfx_dim_const(hd)});
        hfx_value *bd = hfx_op2(g, HFX_OP_MATMUL, hfx_op2(g, HFX_OP_ADD, q, vb), p); /* [B, heads, F, 2F−1] */
        bd = hfx_gather_elements(g, bd, in->shift, 3);                               /* [B, heads, F, F] */
        bd = hfx_op2(g, HFX_OP_MUL, bd, hfx_const_scalar(g, bd->dtype, scale));
        bias = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, bd, HFX_DTYPE_F32), in->pad);
        q = hfx_op2(g, HFX_OP_ADD, q, u);
    }
    hfx_value *a = hfx_attention(g, q, k, v, bias, scale, 0.0, 0);
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(H)});
    return hfx_op2(g, HFX_OP_ADD, linear(c, a, H, H, cf->linear_bias, nm->proj[3]), x);
}

/* The convolution module's pointwise Conv1d `which` (0 or 2) as a linear over x [B,F,in]: [B,F,out] */
static hfx_value *pointwise(layer_ctx *c, hfx_value *x, int64_t out, int64_t in, int which) {
    char n[160];
    snprintf(n, sizeof n, "%s.weight", c->n->conv[which]);
    hfx_value *w = hfx_const_flatten(c->g, W(c, 3, (int64_t[]){out, in, 1}, n), 1);
    snprintf(n, sizeof n, "%s.bias", c->n->conv[which]);
    return hfx_linear(c->g, x, w, c->cf->conv_bias ? W(c, 1, &out, n) : NULL);
}

/* The BatchNorm's parameter `leaf` [C] as [C,1], to scale x [B,C,F] */
static hfx_value *column(layer_ctx *c, int64_t C, const char *leaf) {
    char n[160];
    snprintf(n, sizeof n, "%s.%s", c->n->batch_norm, leaf);
    return hfx_reshape(c->g, W(c, 1, &C, n), 2, (hfx_dim[]){hfx_dim_const(C), hfx_dim_const(1)});
}

/* x + the convolution module of x: its depthwise convolution over the frames padded k/2 before and k/2 − 1 after
 * where k is even (Granite Speech's), ⌊k/2⌋ both sides where odd */
static hfx_value *convolution(layer_ctx *c, const hfx_conformer_inputs *in, hfx_value *x) {
    const hfx_conformer *cf = c->cf;
    hfx_graph *g = c->g;
    int64_t H = cf->hidden, I = cf->conv_inner ? cf->conv_inner : H, k = cf->kernel;
    hfx_value *h = pointwise(c, norm(c, x, c->n->conv_norm), 2 * I, H, 0); /* [B,F,2I] */
    h = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, h, 2, 0, I), hfx_op1(g, HFX_OP_SIGMOID, hfx_slice(g, h, 2, I, 2 * I)));
    if (in->keep) h = hfx_op2(g, HFX_OP_MUL, h, in->keep);
    h = hfx_transpose(g, h, 3, (int64_t[]){0, 2, 1}); /* [B,I,F] */
    char n[160];
    snprintf(n, sizeof n, "%s.weight", c->n->conv[1]);
    hfx_value *dw = W(c, 3, (int64_t[]){I, 1, k}, n);
    snprintf(n, sizeof n, "%s.bias", c->n->conv[1]);
    h = hfx_conv1d(g, h, dw, cf->conv_bias && !cf->depthwise_unbiased ? W(c, 1, &I, n) : NULL, 1, k / 2, I, NULL);
    if (k % 2 == 0) /* one frame too many: the one the shorter right padding drops */
        h = hfx_gather(g, h, count(g, hfx_dim_of(g, x, 1), x->dims[1]), 2);
    snprintf(n, sizeof n, "%s.%s.num_batches_tracked", c->layer, c->n->batch_norm);
    if (hfx_weight_exists(c->w, n)) hfx_weight_ignore(c->w, n);
    h = hfx_batch_norm(g, h, column(c, I, "running_mean"), column(c, I, "running_var"), column(c, I, "weight"),
                       column(c, I, "bias"), 1e-5);
    h = hfx_transpose(g, hfx_activate(g, cf->act, h), 3, (int64_t[]){0, 2, 1}); /* [B,F,I] */
    return hfx_op2(g, HFX_OP_ADD, pointwise(c, h, H, I, 2), x);
}

hfx_value *hfx_conformer_layer(const hfx_conformer *cf, hfx_graph *g, hfx_weights *w, const char *layer,
                               const hfx_conformer_inputs *in, hfx_value *x) {
    layer_ctx c = {cf, cf->names ? cf->names : &hfx_conformer_wav2vec2_names, g, w, layer};
    x = half_ffn(&c, x, 0);
    x = attention(&c, in, x);
    x = convolution(&c, in, x);
    x = half_ffn(&c, x, 1);
    return norm(&c, x, c.n->final_norm);
}
