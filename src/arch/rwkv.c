/* RWKV-4's blocks (ssm.h): the time mix, a per-channel linear attention whose decay and bonus are learned
 * (transformers' rwkv_linear_attention_cpu), and the channel mix, a squared-ReLU MLP gated by a receptance; both read
 * the previous token's input through a token shift. The recurrence is written in closed form over a call (no loop),
 * stabilized by the maximum exponent as transformers' is. */
#include <float.h>
#include <stdint.h>

#include "arch/ssm.h"

static hfx_value *op(hfx_graph *g, hfx_op o, hfx_value *a, hfx_value *b) { return hfx_op2(g, o, a, b); }
static hfx_value *f32(hfx_graph *g, double v) { return hfx_const_scalar(g, HFX_DTYPE_F32, v); }
static hfx_value *i64(hfx_graph *g, int64_t v) { return hfx_const_i64(g, v); }

/* Below every real exponent: an empty state's and a later token's weight, exp(this − max) = 0. */
#define NO_WEIGHT (-1e38)

/* The previous token's input at each position [B,S,H]: past [B,1,H] (NULL: zeros, a prompt) before the first, then
 * h [B,S,H] less its last row, which *next gets [B,1,H] (transformers' time_shift and its state). */
static hfx_value *token_shift(hfx_graph *g, hfx_value *h, hfx_value *past, hfx_value **next) {
    int64_t H = h->dims[2].c;
    if (!past) past = hfx_zero_state(g, h, h->dtype, 2, (int64_t[]){1, H});
    hfx_value *both[2] = {past, h};
    hfx_value *all = hfx_concat(g, 2, both, 1); /* [B,S+1,H] */
    hfx_value *first = hfx_range(g, i64(g, 0), hfx_dim_of(g, h, 1), i64(g, 1), h->dims[1]);
    *next = hfx_slice(g, h, 1, -1, INT64_MAX);
    return hfx_gather(g, all, first, 1);
}

/* h·μ + shifted·(1 − μ), μ the checkpoint's "<prefix>.<name>" [1,1,H]. */
static hfx_value *mixed(hfx_graph *g, hfx_weights *w, const char *prefix, const char *name, hfx_value *h,
                        hfx_value *shifted) {
    int64_t H = h->dims[2].c;
    hfx_value *mu = hfx_weight(w, 3, (int64_t[]){1, 1, H}, "%s.%s", prefix, name);
    hfx_value *rest = op(g, HFX_OP_SUB, hfx_const_scalar(g, mu->dtype, 1.0), mu);
    return op(g, HFX_OP_ADD, op(g, HFX_OP_MUL, h, mu), op(g, HFX_OP_MUL, shifted, rest));
}

/* x·W where W is "<prefix>.<name>.weight" [out, in]. */
static hfx_value *linear(hfx_graph *g, hfx_weights *w, const char *prefix, const char *name, hfx_value *x,
                         int64_t in, int64_t out) {
    return hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){out, in}, "%s.%s.weight", prefix, name), NULL);
}

/* The WKV over one call, all f32: k, v [B,S,A], rate = exp(time_decay) and bonus = time_first [A], the state past
 * [B,3,A] (its rows num, den and max, as transformers keeps them: the sums are num·e^max and den·e^max; zeros, or
 * NULL, is empty). With N_t = e^{−t·rate}·N_0 + Σ_{i<t} e^{k_i − (t−1−i)·rate}·v_i (D_t the same with 1 for v),
 * out_t = (N_t + e^{bonus + k_t}·v_t) / (D_t + e^{bonus + k_t}): each output a weighted mean over the state and the
 * call's tokens up to it, every weight's exponent taken less their maximum; *next the state after the call. */
static hfx_value *wkv(hfx_graph *g, hfx_value *rate, hfx_value *bonus, hfx_value *k, hfx_value *v, hfx_value *past,
                      hfx_value **next) {
    int64_t axis_i = 2, axis_s = 1;
    hfx_value *len = hfx_dim_of(g, k, 1);
    hfx_value *pos = hfx_range(g, i64(g, 0), len, i64(g, 1), k->dims[1]); /* [S] */
    hfx_value *t = hfx_unsqueeze(g, pos, 1), *i = hfx_unsqueeze(g, pos, 0); /* [S,1], [1,S] */
    /* the exponents [B,S(t),S(i),A]: k_i − (t−1−i)·rate below the diagonal, bonus + k_t on it, none above */
    hfx_value *steps = hfx_cast(g, op(g, HFX_OP_SUB, op(g, HFX_OP_SUB, t, i), i64(g, 1)), HFX_DTYPE_F32);
    hfx_value *e = op(g, HFX_OP_SUB, hfx_unsqueeze(g, k, 1), op(g, HFX_OP_MUL, hfx_unsqueeze(g, steps, -1), rate));
    e = hfx_where(g, hfx_unsqueeze(g, op(g, HFX_OP_EQUAL, t, i), -1), hfx_unsqueeze(g, op(g, HFX_OP_ADD, k, bonus), 2), e);
    e = hfx_where(g, hfx_unsqueeze(g, op(g, HFX_OP_GREATER, i, t), -1), f32(g, NO_WEIGHT), e);
    hfx_value *top = hfx_reduce(g, HFX_OP_REDUCE_MAX, e, 1, &axis_i); /* [B,S,1,A] */
    hfx_value *num0 = NULL, *den0 = NULL, *start = NULL, *from_state = NULL;
    if (past) { /* the state's exponent at t: max − t·rate where it holds anything */
        num0 = hfx_slice(g, past, 1, 0, 1), den0 = hfx_slice(g, past, 1, 1, 2); /* [B,1,A] */
        start = hfx_where(g, op(g, HFX_OP_GREATER, den0, f32(g, 0.0)), hfx_slice(g, past, 1, 2, 3), f32(g, NO_WEIGHT));
        hfx_value *at = op(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, pos, HFX_DTYPE_F32), -1), rate); /* [S,A] */
        from_state = hfx_unsqueeze(g, op(g, HFX_OP_SUB, start, at), 2); /* [B,S,1,A] */
        top = op(g, HFX_OP_MAX, top, from_state);
    }
    hfx_value *weight = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, e, top));
    hfx_value *num = hfx_reduce(g, HFX_OP_REDUCE_SUM, op(g, HFX_OP_MUL, weight, hfx_unsqueeze(g, v, 1)), 1, &axis_i);
    hfx_value *den = hfx_reduce(g, HFX_OP_REDUCE_SUM, weight, 1, &axis_i); /* [B,S,1,A] */
    if (past) {
        hfx_value *ws = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, from_state, top));
        num = op(g, HFX_OP_ADD, num, op(g, HFX_OP_MUL, ws, hfx_unsqueeze(g, num0, 1)));
        den = op(g, HFX_OP_ADD, den, op(g, HFX_OP_MUL, ws, hfx_unsqueeze(g, den0, 1)));
    }
    hfx_value *out = hfx_reshape(g, op(g, HFX_OP_DIV, num, den), 3, k->dims);
    if (!next) return out;
    /* the state after the call: every token's exponent k_i − (S−1−i)·rate, the old state's max − S·rate */
    hfx_value *left = hfx_cast(g, op(g, HFX_OP_SUB, op(g, HFX_OP_SUB, len, pos), i64(g, 1)), HFX_DTYPE_F32); /* [S] */
    hfx_value *ef = op(g, HFX_OP_SUB, k, op(g, HFX_OP_MUL, hfx_unsqueeze(g, left, -1), rate)); /* [B,S,A] */
    hfx_value *last = hfx_reduce(g, HFX_OP_REDUCE_MAX, ef, 1, &axis_s); /* [B,1,A] */
    hfx_value *old = NULL;
    if (past) {
        old = op(g, HFX_OP_SUB, start, op(g, HFX_OP_MUL, hfx_cast(g, len, HFX_DTYPE_F32), rate));
        last = op(g, HFX_OP_MAX, last, old);
    }
    hfx_value *wf = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, ef, last));
    hfx_value *num_s = hfx_reduce(g, HFX_OP_REDUCE_SUM, op(g, HFX_OP_MUL, wf, v), 1, &axis_s);
    hfx_value *den_s = hfx_reduce(g, HFX_OP_REDUCE_SUM, wf, 1, &axis_s);
    if (past) {
        hfx_value *wo = hfx_op1(g, HFX_OP_EXP, op(g, HFX_OP_SUB, old, last));
        num_s = op(g, HFX_OP_ADD, num_s, op(g, HFX_OP_MUL, wo, num0));
        den_s = op(g, HFX_OP_ADD, den_s, op(g, HFX_OP_MUL, wo, den0));
    }
    hfx_value *rows[3] = {num_s, den_s, last};
    *next = hfx_concat(g, 3, rows, 1);
    return out;
}

hfx_value *hfx_rwkv_time_mix(hfx_graph *g, hfx_weights *w, const hfx_rwkv_cfg *m, const char *prefix, hfx_value *h,
                             hfx_rwkv_state *s) {
    int64_t H = h->dims[2].c, A = m->width;
    hfx_value *shifted = token_shift(g, h, s->shift, &s->shift_next);
    hfx_value *k = linear(g, w, prefix, "key", mixed(g, w, prefix, "time_mix_key", h, shifted), H, A);
    hfx_value *v = linear(g, w, prefix, "value", mixed(g, w, prefix, "time_mix_value", h, shifted), H, A);
    hfx_value *r = hfx_op1(g, HFX_OP_SIGMOID,
                           linear(g, w, prefix, "receptance", mixed(g, w, prefix, "time_mix_receptance", h, shifted), H, A));
    hfx_value *rate = hfx_op1(g, HFX_OP_EXP, hfx_cast(g, hfx_weight(w, 1, &A, "%s.time_decay", prefix), HFX_DTYPE_F32));
    hfx_value *bonus = hfx_cast(g, hfx_weight(w, 1, &A, "%s.time_first", prefix), HFX_DTYPE_F32);
    hfx_value *y = wkv(g, rate, bonus, hfx_cast(g, k, HFX_DTYPE_F32), hfx_cast(g, v, HFX_DTYPE_F32), s->wkv,
                       s->keep ? &s->wkv_next : NULL);
    return linear(g, w, prefix, "output", op(g, HFX_OP_MUL, r, hfx_cast(g, y, h->dtype)), A, H);
}

hfx_value *hfx_rwkv_channel_mix(hfx_graph *g, hfx_weights *w, const hfx_rwkv_cfg *m, const char *prefix, hfx_value *h,
                                hfx_value *past, hfx_value **next) {
    int64_t H = h->dims[2].c, I = m->intermediate;
    hfx_value *shifted = token_shift(g, h, past, next);
    hfx_value *k = linear(g, w, prefix, "key", mixed(g, w, prefix, "time_mix_key", h, shifted), H, I);
    hfx_value *r = hfx_op1(g, HFX_OP_SIGMOID,
                           linear(g, w, prefix, "receptance", mixed(g, w, prefix, "time_mix_receptance", h, shifted), H, H));
    hfx_value *v = linear(g, w, prefix, "value", hfx_activate(g, HFX_ACT_RELU2, k), I, H);
    return op(g, HFX_OP_MUL, r, v);
}
