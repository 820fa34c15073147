#include "arch/nn.h"

#include <math.h>
#include <string.h>

#include "base/status.h"

/* C11 has no M_* constants */
static const double SQRT1_2 = 0.70710678118654752440, SQRT2 = 1.41421356237309504880,
                    TWO_OVER_SQRT_PI = 1.12837916709551257390;

static const struct {
    const char *name;
    hfx_activation act;
} activations[] = {
    {"silu", HFX_ACT_SILU},      {"swish", HFX_ACT_SILU},
    {"gelu", HFX_ACT_GELU},      {"gelu_pytorch_tanh", HFX_ACT_GELU_TANH},
    {"gelu_new", HFX_ACT_GELU_TANH}, {"relu", HFX_ACT_RELU}, {"tanh", HFX_ACT_TANH},
    {"quick_gelu", HFX_ACT_QUICK_GELU}, {"relu2", HFX_ACT_RELU2}, {"xielu", HFX_ACT_XIELU},
    {"sigmoid", HFX_ACT_SIGMOID},
};

bool hfx_activation_from_name(const char *name, hfx_activation *out) {
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++)
        if (strcmp(activations[i].name, name) == 0) {
            *out = activations[i].act;
            return true;
        }
    return false;
}

const char *hfx_activation_names(void) {
    return "silu, swish, gelu, gelu_pytorch_tanh, gelu_new, relu, tanh, quick_gelu, relu2, xielu, sigmoid";
}

static hfx_value *scalar_like(hfx_graph *g, hfx_value *x, double v) {
    return hfx_const_scalar(g, x->dtype, v);
}

hfx_status hfx_cfg_activation(hfx_cfg c, const char *key, const char *fallback, hfx_activation *out, hfx_error *err) {
    const char *name;
    hfx_status st = hfx_cfg_str_or(c, key, fallback, &name, err);
    if (st) return st;
    if (!hfx_activation_from_name(name, out))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)", c.where, key, name,
                        hfx_activation_names());
    return HFX_OK;
}

hfx_value *hfx_activate(hfx_graph *g, hfx_activation act, hfx_value *x) {
    switch (act) {
    case HFX_ACT_SILU:
        return hfx_op2(g, HFX_OP_MUL, x, hfx_op1(g, HFX_OP_SIGMOID, x));
    case HFX_ACT_GELU: {
        hfx_value *e = hfx_op1(g, HFX_OP_ERF, hfx_op2(g, HFX_OP_MUL, x, scalar_like(g, x, SQRT1_2)));
        hfx_value *half_x = hfx_op2(g, HFX_OP_MUL, x, scalar_like(g, x, 0.5));
        return hfx_op2(g, HFX_OP_MUL, half_x, hfx_op2(g, HFX_OP_ADD, e, scalar_like(g, x, 1.0)));
    }
    case HFX_ACT_GELU_TANH: {
        /* PyTorch: 0.5·x·(1 + tanh(β·(x + κ·x³))), β = √2·(2/√π)·0.5, x³ = x·x·x */
        hfx_value *cube = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_MUL, x, x), x);
        hfx_value *inner = hfx_op2(g, HFX_OP_ADD, x, hfx_op2(g, HFX_OP_MUL, cube, scalar_like(g, x, 0.044715)));
        hfx_value *t = hfx_op1(g, HFX_OP_TANH, hfx_op2(g, HFX_OP_MUL, inner, scalar_like(g, x, SQRT2 * TWO_OVER_SQRT_PI * 0.5)));
        hfx_value *half_x = hfx_op2(g, HFX_OP_MUL, x, scalar_like(g, x, 0.5));
        return hfx_op2(g, HFX_OP_MUL, half_x, hfx_op2(g, HFX_OP_ADD, t, scalar_like(g, x, 1.0)));
    }
    case HFX_ACT_RELU:
        return hfx_op2(g, HFX_OP_MAX, x, scalar_like(g, x, 0.0));
    case HFX_ACT_TANH:
        return hfx_op1(g, HFX_OP_TANH, x);
    case HFX_ACT_SIGMOID:
        return hfx_op1(g, HFX_OP_SIGMOID, x);
    case HFX_ACT_QUICK_GELU: /* torch: input * sigmoid(1.702 * input) */
        return hfx_op2(g, HFX_OP_MUL, x, hfx_op1(g, HFX_OP_SIGMOID, hfx_op2(g, HFX_OP_MUL, x, scalar_like(g, x, 1.702))));
    case HFX_ACT_XIELU: /* needs its weights: only a decoder's dense MLP has them */
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "the xielu activation is supported in a decoder's dense MLP only");
        return x;
    case HFX_ACT_RELU2: { /* torch.square(relu(x)) */
        hfx_value *r = hfx_op2(g, HFX_OP_MAX, x, scalar_like(g, x, 0.0));
        return hfx_op2(g, HFX_OP_MUL, r, r);
    }
    }
    return x;
}

hfx_value *hfx_layer_norm(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *b, double eps) {
    int64_t axis = -1;
    hfx_value *mean = hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 1, &axis);
    hfx_value *d = hfx_op2(g, HFX_OP_SUB, x, mean);
    hfx_value *var = hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_MUL, d, d), 1, &axis);
    hfx_value *rstd = hfx_op1(g, HFX_OP_RECIPROCAL,
                              hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, var, scalar_like(g, x, eps))));
    hfx_value *y = hfx_op2(g, HFX_OP_MUL, d, rstd);
    if (w) y = hfx_op2(g, HFX_OP_MUL, y, w);
    return b ? hfx_op2(g, HFX_OP_ADD, y, b) : y;
}

hfx_value *hfx_batch_norm(hfx_graph *g, hfx_value *x, hfx_value *mean, hfx_value *var, hfx_value *w, hfx_value *b,
                          double eps) {
    hfx_value *y = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_SUB, x, mean),
                           hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, var, scalar_like(g, x, eps))));
    return hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, y, w), b);
}

/* The mean over the last two axes of x [B,G,C/G,F], [B,G,1,1]: over the frames, then over the channels (the same
 * value; sums of a channel's frames, not of every element at once, keep a runtime's float accumulation close to
 * torch's pairwise one). */
static hfx_value *run_mean(hfx_graph *g, hfx_value *x) {
    int64_t frames = 3, channels = 2;
    return hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 1, &frames), 1, &channels);
}

hfx_value *hfx_group_norm(hfx_graph *g, hfx_value *x, int64_t groups, hfx_value *w, hfx_value *b, double eps) {
    int64_t C = x->dims[1].c;
    hfx_dim runs[4] = {x->dims[0], hfx_dim_const(groups), hfx_dim_const(C / groups), x->dims[2]}; /* [B,G,C/G,F] */
    hfx_value *r = hfx_reshape(g, x, 4, runs);
    hfx_value *d = hfx_op2(g, HFX_OP_SUB, r, run_mean(g, r));
    hfx_value *var = run_mean(g, hfx_op2(g, HFX_OP_MUL, d, d));
    hfx_value *y = hfx_op2(g, HFX_OP_DIV, d, hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, var, scalar_like(g, x, eps))));
    hfx_dim column[2] = {hfx_dim_const(C), hfx_dim_const(1)};
    y = hfx_reshape(g, y, 3, x->dims);
    return hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, y, hfx_reshape(g, w, 2, column)), hfx_reshape(g, b, 2, column));
}

hfx_status hfx_samples_at_least(hfx_graph *g, hfx_dim seq, int64_t need, const char *what, hfx_error *err) {
    if (hfx_dim_is_const(seq)) {
        if (seq.c >= need) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "input_values: %lld samples are fewer than one frame of %s (%lld samples); "
                        "export with a longer sample, or dynamic", (long long)seq.c, what, (long long)need);
    }
    if (seq.n != 1 || seq.c != 0 || seq.coef[0] != 1)
        return hfx_fail(err, HFX_ERR_INTERNAL, "input_values: the sample axis is not one symbol");
    hfx_symbol *s = &g->symbols[seq.sym[0]];
    if (s->max < need)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "input_values: one frame of %s takes %lld samples, more than the "
                        "axis' maximum %lld: it never yields a frame", what, (long long)need, (long long)s->max);
    if (s->min < need) s->min = need;
    return HFX_OK;
}

hfx_value *hfx_rms_factor(hfx_graph *g, hfx_value *x, double eps) {
    int64_t axis = -1;
    hfx_value *ms = hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_MUL, x, x), 1, &axis);
    return hfx_op1(g, HFX_OP_RECIPROCAL,
                   hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, ms, hfx_const_scalar(g, HFX_DTYPE_F32, eps))));
}

hfx_value *hfx_rms_plain(hfx_graph *g, hfx_value *x, double eps) {
    hfx_value *f = hfx_cast(g, x, HFX_DTYPE_F32);
    return hfx_cast(g, hfx_op2(g, HFX_OP_MUL, f, hfx_rms_factor(g, f, eps)), x->dtype);
}

hfx_value *hfx_softplus(hfx_graph *g, hfx_value *x) {
    hfx_value *one = hfx_const_scalar(g, x->dtype, 1.0), *big = hfx_const_scalar(g, x->dtype, 20.0);
    hfx_value *soft = hfx_op1(g, HFX_OP_LOG, hfx_op2(g, HFX_OP_ADD, hfx_op1(g, HFX_OP_EXP, x), one));
    return hfx_where(g, hfx_op2(g, HFX_OP_GREATER, x, big), x, soft);
}

hfx_value *hfx_one_hot(hfx_graph *g, hfx_value *idx, int64_t n, hfx_dtype dtype) {
    hfx_value *ids = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, n), hfx_const_i64(g, 1), hfx_dim_const(n));
    return hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, idx, -1), ids), dtype);
}

hfx_value *hfx_segment_of(hfx_graph *g, hfx_value *at, hfx_value *counts, hfx_value **within) {
    hfx_value *end = hfx_cumsum(g, counts, 0), *start = hfx_op2(g, HFX_OP_SUB, end, counts); /* [N] */
    hfx_value *before = hfx_cast(g, hfx_op2(g, HFX_OP_GREATER_EQUAL, hfx_unsqueeze(g, at, 1), hfx_unsqueeze(g, end, 0)),
                                 HFX_DTYPE_I64);                                                  /* [S, N] */
    int64_t axis = 1;
    hfx_value *segment = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, before, 1, &axis), 1, &at->dims[0]);
    *within = hfx_op2(g, HFX_OP_SUB, at, hfx_gather(g, start, segment, 0));
    return segment;
}

hfx_value *hfx_attend_any_rank(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias, double scale) {
    int r = k->rank;
    if (r < 2 || r > 8) {
        hfx_graph_fail(g, HFX_ERR_INVALID, "attention over rank %d", r);
        return q;
    }
    int64_t perm[8];
    for (int i = 0; i < r; i++) perm[i] = i;
    perm[r - 2] = r - 1, perm[r - 1] = r - 2;
    hfx_value *s = hfx_op2(g, HFX_OP_MATMUL, q, hfx_transpose(g, k, r, perm));
    s = hfx_op2(g, HFX_OP_MUL, s, hfx_const_scalar(g, s->dtype, scale));
    if (bias) s = hfx_op2(g, HFX_OP_ADD, s, bias);
    return hfx_op2(g, HFX_OP_MATMUL, hfx_softmax(g, s, -1), v);
}

hfx_dim hfx_blocks_of(hfx_graph *g, hfx_dim n, int64_t block, const char *name) {
    bool ok;
    return hfx_dim_is_const(n) ? hfx_dim_const((n.c + block - 1) / block)
                               : hfx_dim_sym(hfx_graph_symbol_derived(g, name, hfx_dim_add(n, hfx_dim_const(block - 1), &ok),
                                                                      block, 0));
}

hfx_value *hfx_pad_to_blocks(hfx_graph *g, hfx_value *x, int64_t block, const char *name, hfx_dim *blocks) {
    *blocks = hfx_blocks_of(g, x->dims[1], block, name);
    hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                         hfx_unsqueeze(g, hfx_const_i64(g, block), 0),
                                                         hfx_unsqueeze(g, hfx_dim_of(g, x, 2), 0)}, 0);
    hfx_value *zeros = hfx_expand(g, hfx_const_scalar(g, x->dtype, 0.0), shape, 3,
                                  (hfx_dim[]){x->dims[0], hfx_dim_const(block), x->dims[2]});
    hfx_value *padded = hfx_concat(g, 2, (hfx_value *[]){x, zeros}, 1); /* block zero rows after the last */
    hfx_value *n = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, hfx_dim_of(g, x, 1), hfx_const_i64(g, block - 1)),
                           hfx_const_i64(g, block));
    hfx_value *len = hfx_op2(g, HFX_OP_MUL, n, hfx_const_i64(g, block));
    return hfx_gather(g, padded, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), hfx_dim_scale(*blocks, block)),
                      1);
}

hfx_value *hfx_static_layer_write(hfx_graph *g, hfx_value *cache, hfx_value *x, hfx_value *n, hfx_dim slots,
                                  hfx_value **written) {
    if (!*written)
        *written = hfx_range(g, n, hfx_op2(g, HFX_OP_ADD, n, hfx_dim_of(g, x, 2)), hfx_const_i64(g, 1), x->dims[2]);
    if (!cache && !hfx_dim_is_const(slots)) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "io seed: a static-cache prefill needs max_cache_len fixed (a number, "
                                               "not a dynamic dim)");
        return x;
    }
    return hfx_cache_write(g, cache ? cache : hfx_zeros_resized(g, x, 2, slots.c), x, *written);
}
