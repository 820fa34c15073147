/* The small builders every decoder block shares: tensor names, linears, norms, head reshapes. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* "<layer i>.<block>.<leaf>" (block NULL or "": "<layer i>.<leaf>") into buf. */
const char *hfx_dec_name(const layer_ctx *c, int64_t i, const char *block, const char *leaf, char *buf,
                               size_t size) {
    if (block && !*block) block = NULL; /* a block on the layer itself (OPT's fc1) */
    int k = snprintf(buf, size, c->n.layer, (long long)i);
    if (k > 0 && (size_t)k < size) snprintf(buf + k, size - (size_t)k, block ? ".%s.%s" : ".%s%s", block ? block : leaf,
                                            block ? leaf : "");
    return buf;
}

/* x [B,S,in] → [B,S,out] through `<prefix>.weight` [out,in] (+ `<prefix>.bias` [out]). */
/* A linear's weight as [out, in]: GPT-2's Conv1D stores [in, out], read through a transposed view. */
hfx_value *hfx_dec_weight_out_in(layer_ctx *c, int64_t in, int64_t out, const char *prefix) {
    if (c->d->linears_in_out) return hfx_const_transpose2d(c->g, hfx_weight(c->w, 2, (int64_t[]){in, out}, "%s.weight", prefix));
    return hfx_weight(c->w, 2, (int64_t[]){out, in}, "%s.weight", prefix);
}

hfx_value *hfx_dec_proj(layer_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias,
                       const char *prefix) {
    hfx_value *w = hfx_dec_weight_out_in(c, in, out, prefix);
    hfx_value *b = bias ? hfx_weight(c->w, 1, &out, "%s.bias", prefix) : NULL;
    return hfx_weight_lora(c->w, x, hfx_linear(c->g, x, w, b), in, out, prefix);
}

/* x · k in x's dtype (x itself when k is 1). */
hfx_value *hfx_dec_scaled(hfx_graph *g, hfx_value *x, double k) {
    return k == 1.0 ? x : hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, x->dtype, k));
}

/* [B,S,n·d] → [B,n,S,d] */
hfx_value *hfx_dec_split_heads(layer_ctx *c, hfx_value *x, int64_t n, int64_t d) {
    hfx_dim dims[4] = {c->batch, c->seq, hfx_dim_const(n), hfx_dim_const(d)};
    return hfx_reshape(c->g, x, 4, dims);
}

hfx_value *hfx_dec_to_bhsd(layer_ctx *c, hfx_value *x) {
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

/* x·rsqrt(mean(x²) + ε) over the last axis, in f32, cast back: an RMS norm without a weight. */
hfx_value *hfx_dec_rms_plain(layer_ctx *c, hfx_value *x) { return hfx_rms_plain(c->g, x, c->m->eps); }

hfx_value *hfx_dec_lora(layer_ctx *c, hfx_value *y, hfx_value *h, int64_t in, int64_t out, const char *list) {
    int64_t r = c->m->shared.rank;
    hfx_value *a = hfx_weight(c->w, 2, (int64_t[]){r, in}, "%s.%lld.0.weight", list, (long long)c->adapter);
    hfx_value *b = hfx_weight(c->w, 2, (int64_t[]){out, r}, "%s.%lld.1.weight", list, (long long)c->adapter);
    hfx_value *lora = hfx_linear(c->g, hfx_linear(c->g, h, a, NULL), b, NULL);
    return y ? hfx_op2(c->g, HFX_OP_ADD, y, lora) : lora;
}

hfx_value *hfx_dec_norm(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix) {
    return hfx_dec_norm_eps(c, x, n, prefix, c->m->eps);
}

/* Whether the checkpoint stores the norm at prefix gated (HFX_NORM_RMS_GATED: `<prefix>.norm.weight`). */
static bool gated_here(layer_ctx *c, const char *prefix) {
    char name[192];
    int k = snprintf(name, sizeof name, "%s.norm.weight", prefix);
    return k > 0 && (size_t)k < sizeof name && hfx_weight_exists(c->w, name);
}

/* y = RMS(x)·`<prefix>.norm.weight`, times σ(fc2(silu(fc1(y)))) in f32 (the gate's rank `norm_gate_rank`). */
static hfx_value *gated_rms(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix, double eps) {
    int64_t r = c->m->norm_gate_rank;
    hfx_value *y = hfx_rms_norm(c->g, x, hfx_weight(c->w, 1, &n, "%s.norm.weight", prefix), eps, 0);
    hfx_value *a = hfx_linear(c->g, y, hfx_weight(c->w, 2, (int64_t[]){r, n}, "%s.mlp.fc1.weight", prefix), NULL);
    a = hfx_linear(c->g, hfx_activate(c->g, HFX_ACT_SILU, a),
                   hfx_weight(c->w, 2, (int64_t[]){n, r}, "%s.mlp.fc2.weight", prefix), NULL);
    hfx_value *gate = hfx_op1(c->g, HFX_OP_SIGMOID, hfx_cast(c->g, a, HFX_DTYPE_F32));
    return hfx_cast(c->g, hfx_op2(c->g, HFX_OP_MUL, hfx_cast(c->g, y, HFX_DTYPE_F32), gate), y->dtype);
}

/* The descriptor's norm over the last axis of x, weights `<prefix>.weight` (+ `.bias`) of size n. */
hfx_value *hfx_dec_norm_eps(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix, double eps) {
    if (c->m->norm == HFX_NORM_LAYER_PLAIN) /* no weights: transformers hard-codes ε and computes in f32 */
        return hfx_cast(c->g, hfx_layer_norm(c->g, hfx_cast(c->g, x, HFX_DTYPE_F32), NULL, NULL, 1e-5), x->dtype);
    if (c->m->norm == HFX_NORM_RMS_PLAIN) return hfx_dec_rms_plain(c, x);
    if (c->m->norm == HFX_NORM_RMS_GATED && gated_here(c, prefix)) return gated_rms(c, x, n, prefix, eps);
    hfx_value *w = hfx_weight(c->w, 1, &n, "%s.weight", prefix);
    switch (c->m->norm) {
    case HFX_NORM_RMS: case HFX_NORM_RMS_GATED: return hfx_rms_norm(c->g, x, w, eps, 0);
    case HFX_NORM_RMS_OFFSET: return hfx_rms_norm(c->g, x, w, eps, 1.0);
    case HFX_NORM_RMS_F32: /* the weight multiplies in f32 too */
        return hfx_cast(c->g, hfx_rms_norm(c->g, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, w, HFX_DTYPE_F32),
                                           eps, 0), x->dtype);
    case HFX_NORM_LAYER: return hfx_layer_norm(c->g, x, w, hfx_weight(c->w, 1, &n, "%s.bias", prefix), eps);
    case HFX_NORM_LAYER_NO_BIAS: return hfx_layer_norm(c->g, x, w, NULL, eps);
    case HFX_NORM_LAYER_1P:
        return hfx_layer_norm(c->g, x, hfx_op2(c->g, HFX_OP_ADD, w, hfx_const_scalar(c->g, w->dtype, 1.0)),
                              hfx_weight(c->w, 1, &n, "%s.bias", prefix), eps);
    case HFX_NORM_LAYER_WEIGHT: /* in f32, cast back */
        return hfx_cast(c->g, hfx_layer_norm(c->g, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, w, HFX_DTYPE_F32),
                                             NULL, eps), x->dtype);
    case HFX_NORM_LAYER_PLAIN: case HFX_NORM_RMS_PLAIN: case HFX_NORM_RMS_OR_LAYER_WEIGHT: case HFX_NORM_RMS_LAYERS_1E6:
    case HFX_NORM_LAYER_BIAS_BY_CONFIG:
        break; /* (the parse picks one) */
    }
    return x;
}
