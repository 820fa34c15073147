/* Sentence-embedding pooling (pooling.h). The first and last kept tokens are picked by one-hot
 * masks from a running count of kept tokens, so no arg-max op is needed and a row without any
 * kept token gives what sentence-transformers gives. */
#include "arch/pooling.h"

#include <math.h>

/* sum over the sequence axis: [B,S,H] → [B,H] */
static hfx_value *sum_tokens(hfx_graph *g, hfx_value *x, hfx_dim batch, int64_t hidden) {
    return hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, x, 1, (int64_t[]){1}), 2,
                       (hfx_dim[]){batch, hfx_dim_const(hidden)});
}

/* x at the tokens where `pick` [B,S] bool is true (at most one per row; none gives zeros) */
static hfx_value *pick_token(hfx_graph *g, hfx_value *x, hfx_value *pick, hfx_dim batch, int64_t hidden) {
    hfx_value *w = hfx_unsqueeze(g, hfx_cast(g, pick, x->dtype), 2);
    return sum_tokens(g, hfx_op2(g, HFX_OP_MUL, x, w), batch, hidden);
}

/* e [B, width] through p's Dense modules (sentence-transformers' Dense: act(linear(e))), in float32. */
static hfx_value *dense_modules(hfx_graph *g, hfx_weights *w, const hfx_pooling *p, hfx_value *e, int64_t width) {
    for (int i = 0; i < p->n_dense && !g->failed; i++) {
        const hfx_dense *d = &p->dense[i];
        if (!w || d->in != width) {
            hfx_graph_fail(g, HFX_ERR_INVALID, "%s/config.json: in_features %lld, but what reaches it is %lld wide",
                           d->module, d->in, (long long)width);
            break;
        }
        int64_t out = d->out;
        hfx_value *wt = hfx_cast(g, hfx_weight(w, 2, (int64_t[]){out, width}, "%s/linear.weight", d->module),
                                 HFX_DTYPE_F32);
        e = hfx_op2(g, HFX_OP_MATMUL, e, hfx_transpose(g, wt, 2, (int64_t[]){1, 0}));
        if (d->bias)
            e = hfx_op2(g, HFX_OP_ADD, e, hfx_cast(g, hfx_weight(w, 1, &out, "%s/linear.bias", d->module), HFX_DTYPE_F32));
        if (d->tanh) e = hfx_op1(g, HFX_OP_TANH, e);
        width = out;
    }
    return e;
}

hfx_value *hfx_sentence_embedding(hfx_graph *g, hfx_weights *w, const hfx_pooling *p, hfx_value *x, hfx_value *mask,
                                  hfx_dim batch, int64_t hidden) {
    /* sums accumulate in float32 as sentence-transformers' do for half types; the result comes
     * back in the model's dtype */
    hfx_dtype out_dt = x->dtype, dt = HFX_DTYPE_F32;
    if (out_dt != dt) x = hfx_cast(g, x, dt);
    hfx_value *keep = hfx_cast(g, mask, HFX_DTYPE_BOOL);                  /* [B,S] */
    hfx_value *kept = hfx_cumsum(g, hfx_cast(g, keep, HFX_DTYPE_I64), 1);  /* [B,S]: kept tokens so far */
    hfx_value *total = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, keep, HFX_DTYPE_I64), 1, (int64_t[]){1}); /* [B,1] */
    hfx_value *mf = hfx_unsqueeze(g, hfx_cast(g, mask, dt), 2);           /* [B,S,1]: mask.to(dtype) */
    hfx_value *tiny = hfx_const_scalar(g, dt, 1e-9);
    hfx_value *parts[HFX_POOL_MODES_];
    for (int i = 0; i < p->n; i++) {
        hfx_value *v = NULL;
        switch (p->modes[i]) {
        case HFX_POOL_CLS: { /* mask.argmax(1): the first kept token; position 0 when none is */
            hfx_value *first = hfx_op2(g, HFX_OP_AND, keep, hfx_op2(g, HFX_OP_EQUAL, kept, hfx_const_i64(g, 1)));
            hfx_value *len = hfx_dim_of(g, mask, 1);
            hfx_value *pos = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), mask->dims[1]), 0);
            hfx_value *none = hfx_op2(g, HFX_OP_EQUAL, total, hfx_const_i64(g, 0)); /* [B,1] */
            hfx_value *at0 = hfx_op2(g, HFX_OP_AND, none, hfx_op2(g, HFX_OP_EQUAL, pos, hfx_const_i64(g, 0)));
            v = pick_token(g, x, hfx_op2(g, HFX_OP_OR, first, at0), batch, hidden);
            break;
        }
        case HFX_POOL_LAST_TOKEN: /* the last kept token (x·mask there); zeros when none is */
            v = pick_token(g, x, hfx_op2(g, HFX_OP_AND, keep, hfx_op2(g, HFX_OP_EQUAL, kept, total)), batch, hidden);
            break;
        case HFX_POOL_MAX: { /* masked_fill(mask == 0, -inf).max(1) */
            hfx_value *filled = hfx_where(g, hfx_unsqueeze(g, keep, 2), x, hfx_const_scalar(g, dt, -INFINITY));
            v = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_MAX, filled, 1, (int64_t[]){1}), 2,
                            (hfx_dim[]){batch, hfx_dim_const(hidden)});
            break;
        }
        case HFX_POOL_MEAN:
        case HFX_POOL_MEAN_SQRT_LEN: { /* sum(x·mask) / clamp(sum(mask), 1e-9) (or its square root) */
            hfx_value *sum = sum_tokens(g, hfx_op2(g, HFX_OP_MUL, x, mf), batch, hidden);
            hfx_value *count = hfx_op2(g, HFX_OP_MAX, sum_tokens(g, mf, batch, 1), tiny); /* [B,1] */
            if (p->modes[i] == HFX_POOL_MEAN_SQRT_LEN) count = hfx_op1(g, HFX_OP_SQRT, count);
            v = hfx_op2(g, HFX_OP_DIV, sum, count);
            break;
        }
        case HFX_POOL_WEIGHTED_MEAN: { /* weights 1..S, less the leading padding (mask.argmax(1)) */
            hfx_value *len = hfx_dim_of(g, mask, 1);
            hfx_value *pos1 = hfx_range(g, hfx_const_i64(g, 1), hfx_op2(g, HFX_OP_ADD, len, hfx_const_i64(g, 1)),
                                        hfx_const_i64(g, 1), mask->dims[1]); /* [S] */
            hfx_value *lead = hfx_reduce(g, HFX_OP_REDUCE_SUM,
                                         hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, kept, hfx_const_i64(g, 0)), HFX_DTYPE_I64),
                                         1, (int64_t[]){1}); /* [B,1] */
            hfx_value *weights = hfx_cast(g, hfx_op2(g, HFX_OP_SUB, hfx_unsqueeze(g, pos1, 0), lead), dt); /* [B,S] */
            hfx_value *wm = hfx_op2(g, HFX_OP_MUL, mf, hfx_unsqueeze(g, weights, 2));                     /* [B,S,1] */
            hfx_value *sum = sum_tokens(g, hfx_op2(g, HFX_OP_MUL, x, wm), batch, hidden);
            v = hfx_op2(g, HFX_OP_DIV, sum, hfx_op2(g, HFX_OP_MAX, sum_tokens(g, wm, batch, 1), tiny));
            break;
        }
        case HFX_POOL_MODES_:
            break;
        }
        parts[i] = v;
    }
    hfx_value *e = p->n == 1 ? parts[0] : hfx_concat(g, p->n, parts, 1);
    e = dense_modules(g, w, p, e, hidden * p->n);
    if (p->normalize) { /* F.normalize: x / max(‖x‖₂, 1e-12) */
        hfx_value *norm = hfx_op1(g, HFX_OP_SQRT, hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, e, e), 1,
                                                              (int64_t[]){1}));
        e = hfx_op2(g, HFX_OP_DIV, e, hfx_op2(g, HFX_OP_MAX, norm, hfx_const_scalar(g, dt, 1e-12)));
    }
    return out_dt == dt ? e : hfx_cast(g, e, out_dt);
}
