/* Shape and dtype inference, one rule per op. Dims compare structurally (dim.c), so a symbolic
 * `sequence_length` only broadcasts against itself or a constant 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "ir/graph.h"

static const struct {
    int lo, hi;
} arity[HFX_OP_COUNT_] = {
#define X(e, name, lo_, hi_, outs, std) [HFX_OP_##e] = {lo_, hi_},
#include "ir/ops.def"
#undef X
};

static void dim_str(const hfx_graph *g, hfx_dim d, char *buf, size_t n) {
    int k = snprintf(buf, n, "%s", "");
    for (int i = 0; i < d.n && k >= 0 && (size_t)k < n; i++) {
        const char *name = d.sym[i] < g->n_symbols ? g->symbols[d.sym[i]].name : "?";
        k += d.coef[i] == 1 ? snprintf(buf + k, n - (size_t)k, "%s%s", i ? "+" : "", name)
                            : snprintf(buf + k, n - (size_t)k, "%s%lld*%s", i ? "+" : "",
                                       (long long)d.coef[i], name);
    }
    if (k >= 0 && (size_t)k < n && (d.c || d.n == 0))
        snprintf(buf + k, n - (size_t)k, d.n ? "%+lld" : "%lld", (long long)d.c);
}

static void shape_str(const hfx_graph *g, const hfx_value *v, char *buf, size_t n) {
    size_t k = 0;
    buf[k++] = '[';
    for (int i = 0; i < v->rank && k + 40 < n; i++) {
        if (i) buf[k++] = ',';
        dim_str(g, v->dims[i], buf + k, n - k);
        k += strlen(buf + k);
    }
    buf[k++] = ']';
    buf[k] = 0;
}

static hfx_status bad(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in, hfx_error *err,
                      const char *why) {
    char shapes[512] = "";
    size_t k = 0;
    for (int i = 0; i < n_in && in[i] && k + 80 < sizeof shapes; i++) {
        char s[160];
        shape_str(g, in[i], s, sizeof s);
        k += (size_t)snprintf(shapes + k, sizeof shapes - k, " %s%s", hfx_dtype_name(in[i]->dtype), s);
    }
    return hfx_fail(err, HFX_ERR_INTERNAL, "graph builder: %s: %s (inputs:%s)", hfx_op_name(op),
                    why, shapes);
}

/* numpy broadcasting of a and b into out (rank and dims). */
static bool broadcast(const hfx_value *a, const hfx_value *b, int *rank, hfx_dim *dims) {
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        hfx_dim da = ia >= 0 ? a->dims[ia] : hfx_dim_const(1);
        hfx_dim db = ib >= 0 ? b->dims[ib] : hfx_dim_const(1);
        if (hfx_dim_eq(da, db) || (hfx_dim_is_const(db) && db.c == 1)) dims[i] = da;
        else if (hfx_dim_is_const(da) && da.c == 1) dims[i] = db;
        else return false;
    }
    *rank = r;
    return true;
}

static int norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

/* ---- the rules: each checks an op's inputs and attributes and fills its outputs, already
 * holding x's dtype, rank and dims; NULL when they fit, else what is wrong ---- */

#define RULE_PARAMS hfx_op op, hfx_value *const *in, int n_in, const hfx_attrs *a, hfx_value *const *outs

static const char *elementwise(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    if (in[0]->dtype != in[1]->dtype) return "dtype mismatch";
    if (!broadcast(in[0], in[1], &out->rank, out->dims)) return "shapes do not broadcast";
    if (op >= HFX_OP_EQUAL && op <= HFX_OP_OR) out->dtype = HFX_DTYPE_BOOL;
    if ((op == HFX_OP_AND || op == HFX_OP_OR) && x->dtype != HFX_DTYPE_BOOL) return "needs bool inputs";
    return NULL;
}

static const char *bitwise(RULE_PARAMS) {
    if (in[0]->dtype != HFX_DTYPE_I64 && in[0]->dtype != HFX_DTYPE_I32) return "needs integer inputs";
    return elementwise(op, in, n_in, a, outs);
}

static const char *where(RULE_PARAMS) {
    hfx_value *out = outs[0];
    hfx_value tmp;
    if (in[0]->dtype != HFX_DTYPE_BOOL) return "cond must be bool";
    if (in[1]->dtype != in[2]->dtype) return "dtype mismatch";
    if (!broadcast(in[1], in[2], &tmp.rank, tmp.dims) ||
        !broadcast(in[0], &tmp, &out->rank, out->dims))
        return "shapes do not broadcast";
    out->dtype = in[1]->dtype;
    return NULL;
}

static const char *logical_not(RULE_PARAMS) {
    hfx_value *x = in[0];
    if (x->dtype != HFX_DTYPE_BOOL) return "needs bool";
    return NULL;
}

static const char *as_input(RULE_PARAMS) { return NULL; /* x's dtype and shape */ }

static const char *float_unary(RULE_PARAMS) {
    hfx_value *x = in[0];
    if (!hfx_dtype_is_float(x->dtype)) return "needs a float input";
    return NULL;
}

static const char *cast(RULE_PARAMS) {
    hfx_value *out = outs[0];
    if (a->to <= HFX_DTYPE_UNDEFINED || a->to >= HFX_DTYPE_COUNT_) return "bad target dtype";
    out->dtype = a->to;
    return NULL;
}

static const char *matmul(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    hfx_value *b = in[1];
    if (x->rank < 2 || b->rank < 2 || x->dtype != b->dtype) return "needs two rank≥2 operands of one dtype";
    if (!hfx_dim_eq(x->dims[x->rank - 1], b->dims[b->rank - 2])) return "inner dims differ";
    hfx_value ba = *x, bb = *b;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!broadcast(&ba, &bb, &out->rank, out->dims)) return "batch dims do not broadcast";
    out->dims[out->rank++] = x->dims[x->rank - 2];
    out->dims[out->rank++] = b->dims[b->rank - 1];
    return NULL;
}

static const char *linear(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    hfx_value *w = in[1];
    if (!w->init || w->rank != 2 || x->rank < 1 || w->dtype != x->dtype)
        return "needs x [..., in] and a constant w [out, in]";
    if (!hfx_dim_eq(x->dims[x->rank - 1], w->dims[1])) return "in-features differ";
    if (n_in == 3 && (in[2]->rank != 1 || !hfx_dim_eq(in[2]->dims[0], w->dims[0]) ||
                      in[2]->dtype != x->dtype))
        return "bias must be [out]";
    out->dims[out->rank - 1] = w->dims[0];
    return NULL;
}

static const char *rms_norm(RULE_PARAMS) {
    hfx_value *x = in[0];
    if (!hfx_dtype_is_float(x->dtype) || x->rank < 1 || in[1]->rank != 1 ||
        !hfx_dim_eq(in[1]->dims[0], x->dims[x->rank - 1]) || in[1]->dtype != x->dtype)
        return "needs x [..., n] and w [n] of x's dtype";
    return NULL;
}

static const char *axis_of_float(RULE_PARAMS) {
    hfx_value *x = in[0];
    int ax = norm_axis(a->axis, x->rank);
    if (ax < 0 || ax >= x->rank || !hfx_dtype_is_float(x->dtype)) return "bad axis or dtype";
    return NULL;
}

static const char *attention(RULE_PARAMS) {
    hfx_value *out = outs[0];
    hfx_value *q = in[0], *k = in[1], *v = in[2], *bias = in[3];
    if (q->rank != 4 || k->rank != 4 || v->rank != 4 || bias->rank != 4)
        return "q, k, v, bias must be rank 4";
    if (k->dtype != q->dtype || v->dtype != q->dtype || bias->dtype != HFX_DTYPE_F32)
        return "q/k/v share a float dtype; bias is f32";
    if (!hfx_dim_eq(q->dims[3], k->dims[3]) || !hfx_dim_eq(k->dims[2], v->dims[2]) ||
        !hfx_dim_eq(k->dims[1], v->dims[1]) || !hfx_dim_is_const(q->dims[1]) ||
        !hfx_dim_is_const(k->dims[1]) || k->dims[1].c <= 0 ||
        q->dims[1].c % k->dims[1].c != 0)
        return "head counts or head dims disagree";
    bool rows = hfx_dim_eq(bias->dims[2], q->dims[2]) || (hfx_dim_is_const(bias->dims[2]) && bias->dims[2].c == 1);
    if (!rows || !hfx_dim_eq(bias->dims[3], k->dims[2])) return "bias must be [B,1,S,T] or [B,1,1,T]";
    if (n_in == 5 && (in[4]->rank != 1 || in[4]->dtype != HFX_DTYPE_F32 || !hfx_dim_eq(in[4]->dims[0], q->dims[1])))
        return "sinks must be f32 [heads]";
    out->dims[3] = v->dims[3];
    return NULL;
}

static const char *reduce(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    for (int i = 0; i < a->n_ints; i++) {
        int ax = norm_axis(a->ints[i], x->rank);
        if (ax < 0 || ax >= x->rank) return "bad axis";
        out->dims[ax] = hfx_dim_const(1);
    }
    return NULL;
}

static const char *reshape(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    /* element counts must agree where both are known; symbols must be preserved */
    int64_t cin = 1, cout = 1;
    bool sym_in = false, sym_out = false, overflow = false;
    for (int i = 0; i < x->rank; i++) {
        if (hfx_dim_is_const(x->dims[i])) overflow |= __builtin_mul_overflow(cin, x->dims[i].c, &cin);
        else sym_in = true;
    }
    for (int i = 0; i < a->rank && i < HFX_MAX_RANK; i++) {
        if (hfx_dim_is_const(a->dims[i])) overflow |= __builtin_mul_overflow(cout, a->dims[i].c, &cout);
        else sym_out = true;
    }
    if (overflow) return "more elements than a tensor can hold";
    if (a->rank < 0 || a->rank > HFX_MAX_RANK || (!sym_in && !sym_out && cin != cout))
        return "element counts differ";
    if (n_in == 2 && (in[1]->dtype != HFX_DTYPE_I64 || in[1]->rank != 1 ||
                      !hfx_dim_eq(in[1]->dims[0], hfx_dim_const(a->rank))))
        return "a run-time shape must be i64 [rank]";
    out->rank = a->rank;
    memcpy(out->dims, a->dims, (size_t)a->rank * sizeof *a->dims);
    return NULL;
}

static const char *transpose(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    if (a->n_ints != x->rank) return "perm length != rank";
    unsigned seen = 0;
    for (int i = 0; i < x->rank; i++) {
        if (a->ints[i] < 0 || a->ints[i] >= x->rank || (seen >> a->ints[i] & 1)) return "bad perm";
        seen |= 1u << a->ints[i];
        out->dims[i] = x->dims[a->ints[i]];
    }
    return NULL;
}

static const char *unsqueeze(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    int ax = (int)a->ints[0];
    if (a->n_ints != 1 || ax < 0 || ax > x->rank || x->rank >= HFX_MAX_RANK) return "bad axis";
    out->rank = x->rank + 1;
    for (int i = 0, j = 0; i < out->rank; i++)
        out->dims[i] = i == ax ? hfx_dim_const(1) : x->dims[j++];
    return NULL;
}

static const char *concat(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    int ax = norm_axis(a->axis, x->rank);
    if (ax < 0 || ax >= x->rank) return "bad axis";
    hfx_dim sum = x->dims[ax];
    for (int i = 1; i < n_in; i++) {
        if (in[i]->rank != x->rank || in[i]->dtype != x->dtype) return "rank or dtype mismatch";
        for (int d = 0; d < x->rank; d++)
            if (d != ax && !hfx_dim_eq(in[i]->dims[d], x->dims[d])) return "non-axis dims differ";
        bool ok;
        sum = hfx_dim_add(sum, in[i]->dims[ax], &ok);
        if (!ok) return "concatenated dim too complex";
    }
    out->dims[ax] = sum;
    return NULL;
}

static const char *slice(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    int ax = norm_axis(a->axis, x->rank);
    if (ax < 0 || ax >= x->rank) return "bad axis";
    if (a->start < 0) { /* from the end: x[..., start:] with a known length */
        if (a->end != INT64_MAX) return "negative start needs an open end";
        out->dims[ax] = hfx_dim_const(-a->start);
        return NULL;
    }
    if (a->end < a->start) return "bad bounds";
    hfx_dim d = x->dims[ax];
    if (!hfx_dim_is_const(d)) {
        /* the whole dim, or its last -start elements (logits of the last position) */
        if (a->start == 0 && a->end == INT64_MAX) return NULL;
        return "static slice of a symbolic dim";
    }
    int64_t end = a->end < d.c ? a->end : d.c, start = a->start < d.c ? a->start : d.c;
    out->dims[ax] = hfx_dim_const(end - start);
    return NULL;
}

static const char *gather(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    hfx_value *idx = in[1];
    int ax = norm_axis(a->axis, x->rank);
    if (ax < 0 || ax >= x->rank || (idx->dtype != HFX_DTYPE_I64 && idx->dtype != HFX_DTYPE_I32))
        return "bad axis or index dtype";
    if (x->rank - 1 + idx->rank > HFX_MAX_RANK) return "rank";
    out->rank = 0;
    for (int i = 0; i < ax; i++) out->dims[out->rank++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) out->dims[out->rank++] = idx->dims[i];
    for (int i = ax + 1; i < x->rank; i++) out->dims[out->rank++] = x->dims[i];
    return NULL;
}

static const char *shape_of(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    out->dtype = HFX_DTYPE_I64;
    out->rank = 1;
    out->dims[0] = hfx_dim_const(x->rank);
    return NULL;
}

static const char *range_(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    for (int i = 0; i < 3; i++)
        if (in[i]->rank != 0 || in[i]->dtype != x->dtype) return "needs three scalars of one dtype";
    out->rank = 1;
    out->dims[0] = a->dims[0];
    return NULL;
}

static const char *expand(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    if (in[1]->dtype != HFX_DTYPE_I64 || in[1]->rank != 1 || a->rank < x->rank || a->rank > HFX_MAX_RANK ||
        !hfx_dim_eq(in[1]->dims[0], hfx_dim_const(a->rank)))
        return "needs a shape i64 [rank] with rank >= x's";
    for (int i = 0; i < x->rank; i++) { /* numpy broadcasting: x's dims are 1 or the target's */
        hfx_dim xd = x->dims[i], td = a->dims[a->rank - x->rank + i];
        if (!(hfx_dim_is_const(xd) && xd.c == 1) && !hfx_dim_eq(xd, td))
            return "x does not broadcast to the shape";
    }
    out->rank = a->rank;
    memcpy(out->dims, a->dims, (size_t)a->rank * sizeof *a->dims);
    return NULL;
}

static const char *axis_only(RULE_PARAMS) {
    hfx_value *x = in[0];
    int ax = norm_axis(a->axis, x->rank);
    if (ax < 0 || ax >= x->rank) return "bad axis";
    return NULL;
}

/* n ≥ k whatever its symbols are: a constant part of k or more and sizes added, never subtracted. */
static bool at_least(hfx_dim n, int64_t k) {
    for (int t = 0; t < n.n; t++)
        if (n.coef[t] < 0) return false;
    return n.c >= k;
}

static const char *top_k(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    if (x->dtype != HFX_DTYPE_F32 || x->rank < 1 || a->k < 1 || !at_least(x->dims[x->rank - 1], a->k))
        return "needs f32 [..., n] with n ≥ k ≥ 1 (a constant, or symbols plus a constant of k or more)";
    if (op == HFX_OP_TOP_K) { /* values, then their i64 indices, both [..., k] */
        out->dims[x->rank - 1] = hfx_dim_const(a->k);
        outs[1]->dtype = HFX_DTYPE_I64;
        outs[1]->rank = out->rank;
        memcpy(outs[1]->dims, out->dims, sizeof out->dims);
    }
    return NULL;
}

static const char *gather_elements(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *out = outs[0];
    int ax = norm_axis(a->axis, x->rank);
    hfx_value *idx = in[1];
    if (ax < 0 || ax >= x->rank || idx->dtype != HFX_DTYPE_I64 || idx->rank != x->rank)
        return "needs data and i64 indices of one rank, and an axis";
    for (int d = 0; d < x->rank; d++) out->dims[d] = idx->dims[d];
    return NULL;
}

static const char *scatter_elements(RULE_PARAMS) {
    hfx_value *x = in[0];
    int ax = norm_axis(a->axis, x->rank);
    hfx_value *idx = in[1], *upd = in[2];
    if (ax < 0 || ax >= x->rank || idx->dtype != HFX_DTYPE_I64 || upd->dtype != x->dtype ||
        idx->rank != x->rank || upd->rank != x->rank)
        return "needs data, i64 indices and updates of one rank, and an axis";
    for (int d = 0; d < x->rank; d++)
        if (!hfx_dim_eq(idx->dims[d], upd->dims[d])) return "indices and updates differ in shape";
    return NULL;
}

static const char *conv(RULE_PARAMS) {
    hfx_value *x = in[0], *w = in[1], *b = n_in > 2 ? in[2] : NULL;
    int rank = a->rank;
    int64_t groups = a->ints[0];
    if ((rank != 1 && rank != 2) || x->rank != 2 + rank || w->rank != 2 + rank || a->n_ints != 1 + 2 * rank ||
        groups < 1 || !hfx_dtype_is_float(x->dtype) || w->dtype != x->dtype)
        return "needs float x [B,Cin,*S] and w [Cout,Cin/groups,*K] of one dtype over 1 or 2 spatial axes, groups ≥ 1";
    for (int d = 0; d < w->rank; d++)
        if (!hfx_dim_is_const(w->dims[d])) return "needs a weight of constant shape";
    int64_t cout = w->dims[0].c;
    if (!hfx_dim_is_const(x->dims[1]) || x->dims[1].c != w->dims[1].c * groups || cout % groups)
        return "x's channels are not the weight's times groups, or groups do not divide its outputs";
    if (b && (b->rank != 1 || !hfx_dim_eq(b->dims[0], w->dims[0]) || b->dtype != x->dtype))
        return "needs a bias [Cout] of x's dtype";
    outs[0]->dims[1] = w->dims[0];
    for (int i = 0; i < rank; i++) {
        int64_t stride = a->ints[1 + 2 * i], pad = a->ints[2 + 2 * i], k = w->dims[2 + i].c;
        hfx_dim t = x->dims[2 + i];
        if (stride < 1 || pad < 0) return "needs strides ≥ 1 and paddings ≥ 0";
        if (hfx_dim_is_const(t) &&
            !(t.c + 2 * pad >= k && hfx_dim_eq(a->dims[i], hfx_dim_const((t.c + 2 * pad - k) / stride + 1))))
            return "an output length is not the window count";
        outs[0]->dims[2 + i] = a->dims[i];
    }
    return NULL;
}

static const char *cache_write(RULE_PARAMS) {
    hfx_value *x = in[0];
    hfx_value *u = in[1], *slots = in[2];
    if (x->rank != 4 || u->rank != 4 || slots->rank != 1 || slots->dtype != HFX_DTYPE_I64 ||
        u->dtype != x->dtype)
        return "needs cache [B,KV,M,D], update [B,KV,S,D], slots [S] i64";
    if (!hfx_dim_eq(x->dims[0], u->dims[0]) || !hfx_dim_eq(x->dims[1], u->dims[1]) ||
        !hfx_dim_eq(x->dims[3], u->dims[3]) || !hfx_dim_eq(u->dims[2], slots->dims[0]))
        return "cache and update disagree";
    return NULL;
}

typedef const char *(*shape_rule)(RULE_PARAMS);

static const shape_rule rules[HFX_OP_COUNT_] = {
    [HFX_OP_ADD] = elementwise,
    [HFX_OP_SUB] = elementwise,
    [HFX_OP_MUL] = elementwise,
    [HFX_OP_DIV] = elementwise,
    [HFX_OP_POW] = elementwise,
    [HFX_OP_MIN] = elementwise,
    [HFX_OP_MAX] = elementwise,
    [HFX_OP_BITWISE_XOR] = bitwise,
    [HFX_OP_EQUAL] = elementwise,
    [HFX_OP_LESS] = elementwise,
    [HFX_OP_LESS_EQUAL] = elementwise,
    [HFX_OP_GREATER] = elementwise,
    [HFX_OP_GREATER_EQUAL] = elementwise,
    [HFX_OP_AND] = elementwise,
    [HFX_OP_OR] = elementwise,
    [HFX_OP_WHERE] = where,
    [HFX_OP_NOT] = logical_not,
    [HFX_OP_NEG] = as_input,
    [HFX_OP_SQRT] = float_unary,
    [HFX_OP_RECIPROCAL] = float_unary,
    [HFX_OP_EXP] = float_unary,
    [HFX_OP_LOG] = float_unary,
    [HFX_OP_SIGMOID] = float_unary,
    [HFX_OP_TANH] = float_unary,
    [HFX_OP_ERF] = float_unary,
    [HFX_OP_COS] = float_unary,
    [HFX_OP_SIN] = float_unary,
    [HFX_OP_CAST] = cast,
    [HFX_OP_MATMUL] = matmul,
    [HFX_OP_LINEAR] = linear,
    [HFX_OP_RMS_NORM] = rms_norm,
    [HFX_OP_SOFTMAX] = axis_of_float,
    [HFX_OP_ATTENTION] = attention,
    [HFX_OP_REDUCE_MEAN] = reduce,
    [HFX_OP_REDUCE_MAX] = reduce,
    [HFX_OP_REDUCE_SUM] = reduce,
    [HFX_OP_RESHAPE] = reshape,
    [HFX_OP_TRANSPOSE] = transpose,
    [HFX_OP_UNSQUEEZE] = unsqueeze,
    [HFX_OP_CONCAT] = concat,
    [HFX_OP_SLICE] = slice,
    [HFX_OP_GATHER] = gather,
    [HFX_OP_SHAPE] = shape_of,
    [HFX_OP_RANGE] = range_,
    [HFX_OP_EXPAND] = expand,
    [HFX_OP_CUMSUM] = axis_only,
    [HFX_OP_CONV] = conv,
    [HFX_OP_TOP_K] = top_k,
    [HFX_OP_TOP_K_MASK] = top_k,
    [HFX_OP_GATHER_ELEMENTS] = gather_elements,
    [HFX_OP_SCATTER_ELEMENTS] = scatter_elements,
    [HFX_OP_CACHE_WRITE] = cache_write,
};

hfx_status hfx_infer_shape(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in,
                           const hfx_attrs *a, hfx_value *const *outs, hfx_error *err) {
    if ((unsigned)op >= HFX_OP_COUNT_ || n_in < arity[op].lo || n_in > arity[op].hi)
        return bad(g, op, 0, in, err, "wrong number of inputs");
    for (int i = 0; i < n_in; i++)
        if (!in[i]) return bad(g, op, 0, in, err, "missing input");
    if (!rules[op]) return bad(g, op, n_in, in, err, "no shape rule");
    hfx_value *x = in[0], *out = outs[0];
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
    const char *why = rules[op](op, in, n_in, a, outs);
    return why ? bad(g, op, n_in, in, err, why) : HFX_OK;
}

hfx_status hfx_graph_verify(const hfx_graph *g, hfx_error *err) {
    if (g->failed) return hfx_graph_status(g, err);
    /* a value is usable once it is an input, a constant, or an earlier node's output */
    char *ready = calloc((size_t)g->n_values + 1, 1);
    if (!ready) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i]->init) ready[i] = 1;
    for (int i = 0; i < g->n_inputs; i++) ready[g->inputs[i]->id] = 1;
    hfx_status st = HFX_OK;
    for (int n = 0; n < g->n_nodes && st == HFX_OK; n++) {
        const hfx_node *node = g->nodes[n];
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] && !ready[node->in[i]->id])
                st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: node %d (%s) uses value %d before it is produced",
                              n, hfx_op_name(node->op), node->in[i]->id);
        if (st != HFX_OK) break;
        hfx_value check[HFX_MAX_OUTPUTS] = {{0}};
        hfx_value *checks[HFX_MAX_OUTPUTS] = {&check[0], &check[1]};
        if (node->n_out != hfx_op_outputs(node->op))
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: node %d (%s) has %d outputs", n, hfx_op_name(node->op),
                          node->n_out);
        if (st == HFX_OK)
            st = hfx_infer_shape((hfx_graph *)g, node->op, node->n_in, node->in, &node->attrs, checks, err);
        for (int k = 0; st == HFX_OK && k < node->n_out; k++) {
            const hfx_value *o = node->out[k];
            if (check[k].dtype != o->dtype || check[k].rank != o->rank || o->producer != node ||
                o->id < 0 || o->id >= g->n_values || g->values[o->id] != o || ready[o->id])
                st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: node %d (%s) output %d changed type", n,
                              hfx_op_name(node->op), k);
            for (int d = 0; st == HFX_OK && d < check[k].rank; d++)
                if (!hfx_dim_eq(check[k].dims[d], o->dims[d]))
                    st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: node %d (%s) output %d dim %d changed", n,
                                  hfx_op_name(node->op), k, d);
            ready[o->id] = 1;
        }
    }
    for (int i = 0; st == HFX_OK && i < g->n_outputs; i++)
        if (!ready[g->outputs[i]->id])
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: output '%s' is never produced",
                          g->outputs[i]->name);
    /* every state is written, and its value keeps its type from call to call */
    for (int i = 0; st == HFX_OK && i < g->n_states; i++) {
        const hfx_state *s = &g->states[i];
        if (!s->out)
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: state '%s' is never written", s->name);
        else if (s->update == HFX_STATE_ONCE && s->in)
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: state '%s' is computed once and has no input", s->name);
        else if (s->in && (s->in->dtype != s->out->dtype || s->in->rank != s->out->rank))
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: state '%s' changes type from input to output", s->name);
        else if (s->update == HFX_STATE_APPEND && (s->axis < 0 || s->axis >= s->out->rank))
            st = hfx_fail(err, HFX_ERR_INTERNAL, "verify: state '%s' appends on axis %d of rank %d", s->name, s->axis,
                          s->out->rank);
    }
    free(ready);
    return st;
}

/* Lives with the shapes, not the dims: it reads a value (graph.h says what it returns). */
int hfx_reshape_plan(const hfx_value *in, int rank, const hfx_dim *dims, int64_t *shape, int *source) {
    int inferred = 0;
    for (int i = 0; i < rank; i++) {
        source[i] = -1;
        for (int k = 0; k < in->rank && source[i] < 0 && !hfx_dim_is_const(dims[i]); k++)
            if (hfx_dim_eq(in->dims[k], dims[i])) source[i] = k;
        if (hfx_dim_is_const(dims[i]) && dims[i].c != 0) shape[i] = dims[i].c;
        else if (i < in->rank && hfx_dim_eq(in->dims[i], dims[i])) shape[i] = 0;
        else shape[i] = -1, inferred++;
    }
    return inferred;
}
