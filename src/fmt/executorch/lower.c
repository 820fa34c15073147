/* ATen program → ExecuTorch execution plan (program.h). Each ATen call becomes the call of its
 * out-variant kernel ("aten::add.out"), its arguments in that kernel's schema order with every
 * default written out (a kernel reads all of its arguments), then its out tensors, then its
 * returns (the same tensors), as ExecuTorch's emitter lays a KernelCall out. SymInt arithmetic
 * becomes executorch_prim's scalar kernels. matmul, which has no kernel, becomes bmm or mm over
 * views. Tensor sizes are upper bounds: each dim's expression at its symbols' maxima. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/executorch/program.h"
#include "fmt/op_table.h"

/* The out variant of each ATen op: its kernel, and its arguments before the outs. `args` lists
 * them in the kernel's order: "k" is the ATen call's argument k, "k=D" the same with default D
 * where the call leaves it out, "=D" an argument the ATen call has no counterpart of (the out
 * tensor's dtype replaces the call's dtype arguments). D: iN an int, bN a bool, n None. */
typedef struct kernel {
    const char *name, *overload, *args;
} kernel;

static const kernel kernels[HFX_OPS_COUNT_] = {
    [HFX_ATEN_ADD] = {"aten::add", "out", "0 1 2=i1"},
    [HFX_ATEN_SUB] = {"aten::sub", "out", "0 1 2=i1"},
    [HFX_ATEN_MUL] = {"aten::mul", "out", "0 1"},
    [HFX_ATEN_DIV] = {"aten::div", "out", "0 1"},
    [HFX_ATEN_FLOOR_DIVIDE] = {"aten::floor_divide", "out", "0 1"},
    [HFX_ATEN_POW_SCALAR] = {"aten::pow", "Tensor_Scalar_out", "0 1"},
    [HFX_ATEN_POW] = {"aten::pow", "Tensor_Tensor_out", "0 1"},
    [HFX_ATEN_MINIMUM] = {"aten::minimum", "out", "0 1"},
    [HFX_ATEN_MAXIMUM] = {"aten::maximum", "out", "0 1"},
    [HFX_ATEN_BITWISE_XOR] = {"aten::bitwise_xor", "Tensor_out", "0 1"},
    [HFX_ATEN_EQ] = {"aten::eq", "Tensor_out", "0 1"},
    [HFX_ATEN_LT] = {"aten::lt", "Tensor_out", "0 1"},
    [HFX_ATEN_LE] = {"aten::le", "Tensor_out", "0 1"},
    [HFX_ATEN_GT] = {"aten::gt", "Tensor_out", "0 1"},
    [HFX_ATEN_GE] = {"aten::ge", "Tensor_out", "0 1"},
    [HFX_ATEN_LOGICAL_AND] = {"aten::logical_and", "out", "0 1"},
    [HFX_ATEN_LOGICAL_OR] = {"aten::logical_or", "out", "0 1"},
    [HFX_ATEN_LOGICAL_NOT] = {"aten::logical_not", "out", "0"},
    [HFX_ATEN_WHERE] = {"aten::where", "self_out", "0 1 2"},
    [HFX_ATEN_NEG] = {"aten::neg", "out", "0"},
    [HFX_ATEN_SQRT] = {"aten::sqrt", "out", "0"},
    [HFX_ATEN_RSQRT] = {"aten::rsqrt", "out", "0"},
    [HFX_ATEN_RECIPROCAL] = {"aten::reciprocal", "out", "0"},
    [HFX_ATEN_EXP] = {"aten::exp", "out", "0"},
    [HFX_ATEN_LOG] = {"aten::log", "out", "0"},
    [HFX_ATEN_SIGMOID] = {"aten::sigmoid", "out", "0"},
    [HFX_ATEN_TANH] = {"aten::tanh", "out", "0"},
    [HFX_ATEN_ERF] = {"aten::erf", "out", "0"},
    [HFX_ATEN_COS] = {"aten::cos", "out", "0"},
    [HFX_ATEN_SIN] = {"aten::sin", "out", "0"},
    [HFX_ATEN_TO_COPY] = {"aten::_to_copy", "out", "0 =b0 =n"},
    [HFX_ATEN_LINEAR] = {"aten::linear", "out", "0 1 2=n"},
    [HFX_ATEN_EMBEDDING] = {"aten::embedding", "out", "0 1 2=i-1 3=b0 4=b0"},
    [HFX_ATEN_SOFTMAX] = {"aten::_softmax", "out", "0 1 =b0"},
    [HFX_ATEN_CUMSUM] = {"aten::cumsum", "out", "0 1 =n"},
    [HFX_ATEN_CONVOLUTION] = {"aten::convolution", "out", "0 1 2 3 4 5 6 7 8"},
    [HFX_ATEN_TOPK] = {"aten::topk", "values", "0 1 2=i-1 3=b1 4=b1"},
    [HFX_ATEN_SCATTER] = {"aten::scatter", "src_out", "0 1 2 3"},
    [HFX_ATEN_GATHER] = {"aten::gather", "out", "0 1 2 3=b0"},
    [HFX_ATEN_MEAN] = {"aten::mean", "out", "0 1 2=b0 =n"},
    [HFX_ATEN_AMAX] = {"aten::amax", "out", "0 1 2=b0"},
    [HFX_ATEN_SUM] = {"aten::sum", "IntList_out", "0 1 2=b0 =n"},
    [HFX_ATEN_VIEW] = {"aten::view_copy", "out", "0 1"},
    [HFX_ATEN_RESHAPE] = {"aten::view_copy", "out", "0 1"},
    [HFX_ATEN_PERMUTE] = {"aten::permute_copy", "out", "0 1"},
    [HFX_ATEN_UNSQUEEZE] = {"aten::unsqueeze_copy", "out", "0 1"},
    [HFX_ATEN_CAT] = {"aten::cat", "out", "0 1=i0"},
    [HFX_ATEN_SLICE] = {"aten::slice_copy", "Tensor_out", "0 1=i0 2=n 3=n 4=i1"},
    [HFX_ATEN_INDEX_SELECT] = {"aten::index_select", "out", "0 1 2"},
    [HFX_ATEN_EXPAND] = {"aten::expand_copy", "out", "0 1 2=b0"},
    [HFX_ATEN_ARANGE] = {"aten::arange", "start_out", "0 1 2=i1"},
    [HFX_ATEN_SCALAR_TENSOR] = {"aten::scalar_tensor", "out", "0"},
    /* SymInt arithmetic: (a, b) -> the result value */
    [HFX_ATEN_SYM_SIZE] = {"aten::sym_size", "int", "0 1"},
    [HFX_SYM_ADD] = {"executorch_prim::add", "Scalar", "0 1"},
    [HFX_SYM_SUB] = {"executorch_prim::sub", "Scalar", "0 1"},
    [HFX_SYM_MUL] = {"executorch_prim::mul", "Scalar", "0 1"},
    [HFX_SYM_FLOORDIV] = {"executorch_prim::floordiv", "Scalar", "0 1"},
};

/* ---- the op table ---- */

#define ROW(op, fate, how) {HFX_OP_##op, HFX_OP_##fate, how}

/* Every IR op in ExecuTorch, in ops.def's order: the kernel (or delegate) its node runs on, through
 * the ATen operator the shared lowering makes of it (aten_lower.c's table). The dispatch above is
 * on those operators (`kernels`); the writer checks the graph against this table before the ATen
 * lowering. */
static const hfx_op_support et_ops[] = {
    ROW(ADD, LOWERED, "aten::add.out"),
    ROW(SUB, LOWERED, "aten::sub.out"),
    ROW(MUL, LOWERED, "aten::mul.out"),
    ROW(DIV, LOWERED, "aten::div.out (integers: aten::floor_divide.out)"),
    ROW(POW, LOWERED, "aten::pow.Tensor_Tensor_out"),
    ROW(MIN, LOWERED, "aten::minimum.out"),
    ROW(MAX, LOWERED, "aten::maximum.out"),
    ROW(BITWISE_XOR, LOWERED, "aten::bitwise_xor.Tensor_out"),
    ROW(EQUAL, LOWERED, "aten::eq.Tensor_out"),
    ROW(LESS, LOWERED, "aten::lt.Tensor_out"),
    ROW(LESS_EQUAL, LOWERED, "aten::le.Tensor_out"),
    ROW(GREATER, LOWERED, "aten::gt.Tensor_out"),
    ROW(GREATER_EQUAL, LOWERED, "aten::ge.Tensor_out"),
    ROW(AND, LOWERED, "aten::logical_and.out"),
    ROW(OR, LOWERED, "aten::logical_or.out"),
    ROW(WHERE, LOWERED, "aten::where.self_out"),
    ROW(NEG, LOWERED, "aten::neg.out"),
    ROW(NOT, LOWERED, "aten::logical_not.out"),
    ROW(SQRT, LOWERED, "aten::sqrt.out"),
    ROW(RECIPROCAL, LOWERED, "aten::reciprocal.out"),
    ROW(EXP, LOWERED, "aten::exp.out"),
    ROW(LOG, LOWERED, "aten::log.out"),
    ROW(SIGMOID, LOWERED, "aten::sigmoid.out"),
    ROW(TANH, LOWERED, "aten::tanh.out"),
    ROW(ERF, LOWERED, "aten::erf.out"),
    ROW(COS, LOWERED, "aten::cos.out"),
    ROW(SIN, LOWERED, "aten::sin.out"),
    ROW(CAST, LOWERED, "aten::_to_copy.out"),
    ROW(MATMUL, LOWERED, "aten::mm.out, or aten::bmm.out over views (aten::expand_copy, aten::view_copy)"),
    ROW(LINEAR, LOWERED, "an XNNPACK fully-connected delegate (backend xnnpack), else aten::linear.out"),
    ROW(RMS_NORM, EXPANDED, "aten::pow, aten::mean, aten::add, aten::sqrt, aten::div, aten::mul"),
    ROW(SOFTMAX, LOWERED, "aten::_softmax.out"),
    ROW(CUMSUM, LOWERED, "aten::cumsum.out"),
    ROW(CONV, LOWERED, "aten::convolution.out"),
    /* the portable kernels have no attention: et_keeps keeps none */
    ROW(ATTENTION, EXPANDED, "aten::bmm, aten::mul, aten::add, aten::_softmax, aten::bmm"),
    ROW(TOP_K, LOWERED, "aten::topk.values"),
    ROW(TOP_K_MASK, EXPANDED, "aten::topk, aten::scatter"),
    ROW(GATHER_ELEMENTS, LOWERED, "aten::gather.out"),
    ROW(SCATTER_ELEMENTS, LOWERED, "aten::scatter.src_out"),
    ROW(REDUCE_MEAN, LOWERED, "aten::mean.out"),
    ROW(REDUCE_MAX, LOWERED, "aten::amax.out"),
    ROW(REDUCE_SUM, LOWERED, "aten::sum.IntList_out"),
    ROW(RESHAPE, LOWERED, "aten::view_copy.out"),
    ROW(TRANSPOSE, LOWERED, "aten::permute_copy.out"),
    ROW(UNSQUEEZE, LOWERED, "aten::unsqueeze_copy.out"),
    ROW(CONCAT, LOWERED, "aten::cat.out"),
    ROW(SLICE, LOWERED, "aten::slice_copy.Tensor_out"),
    ROW(GATHER, LOWERED, "aten::embedding.out, or aten::index_select.out"),
    ROW(SHAPE, LOWERED, "aten::sym_size.int (aten::scalar_tensor.out where a tensor reads a size)"),
    ROW(RANGE, LOWERED, "aten::arange.start_out"),
    ROW(EXPAND, LOWERED, "aten::expand_copy.out"),
    /* in place when the cache is an input only it writes */
    ROW(CACHE_WRITE, LOWERED, "aten::index_put_, or aten::index_put.out"),
};
HFX_OP_TABLE_COVERS(et_ops, "executorch");

#undef ROW

const hfx_op_support *hfx_et_op_support(hfx_op op) { return (unsigned)op < HFX_OP_COUNT_ ? &et_ops[op] : NULL; }

/* ExecuTorch's ScalarType codes (scalar_type.fbs). */
static int scalar_type(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_U8: return 0;
    case HFX_DTYPE_I8: return 1;
    case HFX_DTYPE_I16: return 2;
    case HFX_DTYPE_I32: return 3;
    case HFX_DTYPE_I64: return 4;
    case HFX_DTYPE_F16: return 5;
    case HFX_DTYPE_F32: return 6;
    case HFX_DTYPE_F64: return 7;
    case HFX_DTYPE_BOOL: return 11;
    case HFX_DTYPE_BF16: return 15;
    default: return -1;
    }
}

typedef struct lowering {
    const hfx_aten_program *p;
    hfx_et_program *e;
    bool xnnpack;
    int *value;  /* per ATen value: its EValue */
    int *symbol; /* per symbol: an Int EValue holding it, -1 none yet */
    hfx_status st;
    hfx_error *err;
} lowering;

static bool fail(lowering *l, hfx_status st, const char *fmt, const char *a, const char *b) {
    if (!l->st) l->st = hfx_fail(l->err, st, fmt, a, b);
    return false;
}

static bool grow(hfx_et_program *e, void **items, int n, int *cap, size_t size) {
    if (e->oom) return false;
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 256;
    void *q = realloc(*items, (size_t)c * size);
    if (!q) return !(e->oom = true);
    *items = q;
    *cap = c;
    return true;
}

static int new_value(lowering *l, hfx_et_kind kind) {
    hfx_et_program *e = l->e;
    if (!grow(e, (void **)&e->values, e->n_values, &e->cap_values, sizeof *e->values)) return 0;
    e->values[e->n_values] = (hfx_et_value){.kind = kind, .first = -1, .last = -1};
    return e->n_values++;
}

static int lit(lowering *l, hfx_et_kind kind, int64_t i, double f) {
    int v = new_value(l, kind);
    if (!l->e->oom) l->e->values[v].i = i, l->e->values[v].f = f;
    return v;
}

/* A constant argument of the method (the Python system's keyword passed as None, False or an int). */
static int constant_input(lowering *l, const hfx_keyword_constant *k) {
    return k->kind == HFX_CONSTANT_NONE    ? lit(l, HFX_ET_NULL, 0, 0)
           : k->kind == HFX_CONSTANT_FALSE ? lit(l, HFX_ET_BOOL, 0, 0)
                                           : lit(l, HFX_ET_INT, k->value, 0);
}

static int *copy_ints(lowering *l, const int *items, int n) {
    int *q = hfx_arena_alloc(l->e->arena, (size_t)(n ? n : 1) * sizeof *q);
    if (!q) {
        l->e->oom = true;
        return NULL;
    }
    if (n) memcpy(q, items, (size_t)n * sizeof *q);
    return q;
}

static int list(lowering *l, hfx_et_kind kind, const int *items, int n) {
    int *q = copy_ints(l, items, n);
    int v = new_value(l, kind);
    if (!l->e->oom) l->e->values[v].items = q, l->e->values[v].n = n;
    return v;
}

/* The upper bound of a dim: its expression at each symbol's extreme. */
static bool upper_bound(lowering *l, hfx_dim d, int64_t *ub) {
    const hfx_graph *g = l->p->g;
    int64_t u = d.c;
    for (int t = 0; t < d.n; t++) {
        const hfx_symbol *s = &g->symbols[d.sym[t]];
        if (d.coef[t] > 0 && s->max >= INT32_MAX) {
            /* name the user input and axis that carry the symbol, as dynamic_shapes spells them */
            const char *input = "<input>";
            int axis = -1;
            for (int i = 0; i < l->p->n_inputs && axis < 0; i++) {
                const hfx_aten_value *v = &l->p->values[l->p->inputs[i].value];
                if (l->p->inputs[i].kind != HFX_INPUT_USER) continue;
                for (int k = 0; k < v->rank && axis < 0; k++)
                    if (v->dims[k].n == 1 && v->dims[k].sym[0] == d.sym[t]) input = v->name, axis = k;
            }
            char hint[256];
            snprintf(hint, sizeof hint, "{\"%s\": {\"%d\": {\"name\": \"%s\", \"max\": N}}}", input, axis, s->name);
            return fail(l, HFX_ERR_UNSUPPORTED,
                        "executorch: the dynamic dim '%s' has no upper bound, and ExecuTorch plans memory for the "
                        "largest size; bound it in the export config's dynamic_shapes: %s",
                        s->name, hint);
        }
        u += d.coef[t] * (d.coef[t] > 0 ? s->max : s->min);
    }
    *ub = u < 0 ? 0 : u;
    return true;
}

static int tensor(lowering *l, hfx_dtype dtype, int rank, const int64_t *sizes, bool dynamic) {
    if (scalar_type(dtype) < 0) {
        fail(l, HFX_ERR_UNSUPPORTED, "executorch: tensors of %s are not written yet%s", hfx_dtype_name(dtype), "");
        return 0;
    }
    int v = new_value(l, HFX_ET_TENSOR);
    if (l->e->oom) return v;
    hfx_et_value *x = &l->e->values[v];
    x->dtype = dtype, x->rank = rank, x->dynamic = dynamic;
    memcpy(x->sizes, sizes, (size_t)rank * sizeof *sizes);
    return v;
}

static int tensor_of_dims(lowering *l, hfx_dtype dtype, int rank, const hfx_dim *dims) {
    int64_t sizes[HFX_MAX_RANK] = {0};
    bool dynamic = false;
    for (int d = 0; d < rank; d++) {
        if (!upper_bound(l, dims[d], &sizes[d])) return 0;
        dynamic |= !hfx_dim_is_const(dims[d]);
    }
    return tensor(l, dtype, rank, sizes, dynamic);
}

static int find_op(lowering *l, const char *name, const char *overload) {
    hfx_et_program *e = l->e;
    for (int i = 0; i < e->n_ops; i++)
        if (!strcmp(e->ops[i].name, name) && !strcmp(e->ops[i].overload, overload)) return i;
    if (!grow(e, (void **)&e->ops, e->n_ops, &e->cap_ops, sizeof *e->ops)) return 0;
    e->ops[e->n_ops] = (hfx_et_operator){name, overload};
    return e->n_ops++;
}

static void call(lowering *l, const char *name, const char *overload, const int *args, int n) {
    hfx_et_program *e = l->e;
    int op = find_op(l, name, overload);
    int *a = copy_ints(l, args, n);
    if (!a || !grow(e, (void **)&e->calls, e->n_calls, &e->cap_calls, sizeof *e->calls)) return;
    e->calls[e->n_calls++] = (hfx_et_call){op, -1, a, n};
}

/* A kernel call with outs `outs`: the out arguments, then the return (the out tensor, or a
 * TensorList of the outs when there are several, as ExecuTorch's emitter writes a tuple). */
static void kernel_call(lowering *l, const char *name, const char *overload, const int *args, int n, const int *outs,
                        int n_out) {
    int all[32];
    if (n + n_out + 1 > 32) {
        fail(l, HFX_ERR_INTERNAL, "executorch: %s.%s has too many arguments", name, overload);
        return;
    }
    memcpy(all, args, (size_t)n * sizeof *args);
    memcpy(all + n, outs, (size_t)n_out * sizeof *outs);
    all[n + n_out] = n_out == 1 ? outs[0] : list(l, HFX_ET_TENSOR_LIST, outs, n_out);
    call(l, name, overload, all, n + n_out + 1);
}

/* ---- sizes at run time ---- */

static int dim_int(lowering *l, hfx_dim d);
static int prim(lowering *l, const char *op, int a, int b);

/* An Int holding symbol s: the size of a user input's axis that is exactly s (aten::sym_size), or (derived)
 * ⌊of / div⌋ + add of theirs. */
static int symbol_int(lowering *l, int s) {
    if (l->symbol[s] >= 0) return l->symbol[s];
    const hfx_aten_program *p = l->p;
    const hfx_symbol *derived = &p->g->symbols[s];
    if (derived->div > 0) {
        int q = prim(l, "executorch_prim::floordiv", dim_int(l, derived->of), lit(l, HFX_ET_INT, derived->div, 0));
        return l->symbol[s] = derived->add ? prim(l, "executorch_prim::add", q, lit(l, HFX_ET_INT, derived->add, 0)) : q;
    }
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].kind != HFX_INPUT_USER) continue;
        const hfx_aten_value *v = &p->values[p->inputs[i].value];
        for (int d = 0; d < v->rank; d++) {
            hfx_dim x = v->dims[d];
            if (x.n == 1 && x.c == 0 && x.sym[0] == s && x.coef[0] == 1) {
                int out = lit(l, HFX_ET_INT, 0, 0);
                int args[3] = {l->value[p->inputs[i].value], lit(l, HFX_ET_INT, d, 0), out};
                call(l, "aten::sym_size", "int", args, 3);
                return l->symbol[s] = out;
            }
        }
    }
    fail(l, HFX_ERR_UNSUPPORTED, "executorch: the symbol '%s' is no input's size%s", p->g->symbols[s].name, "");
    return 0;
}

static int prim(lowering *l, const char *op, int a, int b) {
    int out = lit(l, HFX_ET_INT, 0, 0);
    int args[3] = {a, b, out};
    call(l, op, "Scalar", args, 3);
    return out;
}

/* An Int holding dim d at run time: c + Σ coef·symbol. */
static int dim_int(lowering *l, hfx_dim d) {
    if (hfx_dim_is_const(d)) return lit(l, HFX_ET_INT, d.c, 0);
    int acc = -1;
    for (int t = 0; t < d.n; t++) {
        int s = symbol_int(l, d.sym[t]);
        if (d.coef[t] != 1) s = prim(l, "executorch_prim::mul", s, lit(l, HFX_ET_INT, d.coef[t], 0));
        acc = acc < 0 ? s : prim(l, "executorch_prim::add", acc, s);
    }
    if (d.c) acc = prim(l, "executorch_prim::add", acc, lit(l, HFX_ET_INT, d.c, 0));
    return acc;
}

/* An IntList of dims; `flat` >= 0: that position is -1 (the rest of the elements). */
static int dims_list(lowering *l, const hfx_dim *dims, int n, int flat) {
    int items[HFX_MAX_RANK];
    for (int i = 0; i < n; i++) items[i] = i == flat ? lit(l, HFX_ET_INT, -1, 0) : dim_int(l, dims[i]);
    return list(l, HFX_ET_INT_LIST, items, n);
}

/* ---- calls ---- */

static int default_value(lowering *l, const char *d) {
    switch (d[0]) {
    case 'i': return lit(l, HFX_ET_INT, strtoll(d + 1, NULL, 10), 0);
    case 'b': return lit(l, HFX_ET_BOOL, d[1] == '1', 0);
    case 'n': return lit(l, HFX_ET_NULL, 0, 0);
    default: fail(l, HFX_ERR_INTERNAL, "executorch: bad default '%s'%s", d, ""); return 0;
    }
}

static int arg_value(lowering *l, const hfx_aten_arg *a, const char *dflt) {
    switch (a->kind) {
    case HFX_ARG_DEFAULT:
        if (dflt) return default_value(l, dflt);
        fail(l, HFX_ERR_INTERNAL, "executorch: a required argument is missing%s%s", "", "");
        return 0;
    case HFX_ARG_NONE: return lit(l, HFX_ET_NULL, 0, 0);
    case HFX_ARG_TENSOR:
    case HFX_ARG_SYMINT: return l->value[a->value];
    case HFX_ARG_TENSORS: {
        int items[64];
        if (a->n > 64) {
            fail(l, HFX_ERR_UNSUPPORTED, "executorch: a list of over %s tensors%s", "64", "");
            return 0;
        }
        for (int i = 0; i < a->n; i++) items[i] = l->value[a->values[i]];
        return list(l, HFX_ET_TENSOR_LIST, items, a->n);
    }
    case HFX_ARG_INT: return lit(l, HFX_ET_INT, a->i, 0);
    case HFX_ARG_BOOL: return lit(l, HFX_ET_BOOL, a->i != 0, 0);
    case HFX_ARG_FLOAT: return lit(l, HFX_ET_DOUBLE, 0, a->f);
    case HFX_ARG_INTS: {
        int items[HFX_MAX_RANK];
        if (a->n > HFX_MAX_RANK) {
            fail(l, HFX_ERR_INTERNAL, "executorch: an int list of over %s items%s", "8", "");
            return 0;
        }
        for (int i = 0; i < a->n; i++)
            items[i] = a->sizes[i].value >= 0 ? l->value[a->sizes[i].value] : lit(l, HFX_ET_INT, a->sizes[i].c, 0);
        return list(l, HFX_ET_INT_LIST, items, a->n);
    }
    case HFX_ARG_DTYPE: return lit(l, HFX_ET_INT, scalar_type(a->dtype), 0);
    case HFX_ARG_DEVICE: break;
    }
    fail(l, HFX_ERR_INTERNAL, "executorch: an argument kind without an EValue%s%s", "", "");
    return 0;
}

/* A call through the kernel table. */
static void table_call(lowering *l, const hfx_aten_node *n) {
    const kernel *k = &kernels[n->op];
    int args[HFX_ATEN_MAX_ARGS + 4], na = 0;
    for (const char *s = k->args; *s && !l->st;) {
        char tok[16];
        size_t len = strcspn(s, " ");
        snprintf(tok, sizeof tok, "%.*s", (int)len, s);
        s += len + (s[len] == ' ');
        const char *eq = strchr(tok, '=');
        if (tok[0] == '=') args[na++] = default_value(l, tok + 1);
        else args[na++] = arg_value(l, &n->args[atoi(tok)], eq ? eq + 1 : NULL);
    }
    int outs[2] = {l->value[n->out[0]], n->n_out > 1 ? l->value[n->out[1]] : 0};
    if (n->op == HFX_ATEN_SYM_SIZE || n->op >= HFX_ATEN_COUNT_) { /* scalar kernels: the result last, once */
        args[na++] = outs[0];
        call(l, k->name, k->overload, args, na);
        return;
    }
    kernel_call(l, k->name, k->overload, args, na, outs, n->n_out);
}

static int64_t product(const int64_t *s, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= s[i];
    return p;
}

/* a @ b (numpy's matmul, both operands of rank ≥ 2): mm for two matrices; otherwise the
 * operands expanded to the output's batch dims, viewed as [batch, rows, cols], bmm, and the
 * result viewed as the output. */
static void matmul(lowering *l, const hfx_aten_node *n) {
    const hfx_aten_program *p = l->p;
    const hfx_aten_value *a = &p->values[n->args[0].value], *b = &p->values[n->args[1].value];
    const hfx_aten_value *o = &p->values[n->out[0]];
    int out = l->value[n->out[0]];
    if (a->rank < 2 || b->rank < 2 || o->rank < 2) {
        fail(l, HFX_ERR_UNSUPPORTED, "executorch: matmul of a vector is not lowered yet%s%s", "", "");
        return;
    }
    const hfx_et_value *ov = &l->e->values[out];
    int64_t osz[HFX_MAX_RANK];
    memcpy(osz, ov->sizes, sizeof osz);
    bool dyn = ov->dynamic;
    if (a->rank == 2 && b->rank == 2) {
        int args[2] = {l->value[n->args[0].value], l->value[n->args[1].value]};
        kernel_call(l, "aten::mm", "out", args, 2, &out, 1);
        return;
    }
    int nb = o->rank - 2;
    int64_t batch = product(osz, nb);
    int flat[2];
    const hfx_aten_value *xs[2] = {a, b};
    for (int k = 0; k < 2 && !l->st; k++) {
        const hfx_aten_value *x = xs[k];
        int cur = l->value[n->args[k].value];
        const hfx_et_value *xv = &l->e->values[cur];
        int64_t r = xv->sizes[x->rank - 2], c = xv->sizes[x->rank - 1];
        bool xdyn = xv->dynamic;
        if (k == 1 && b->rank == 2) { /* x @ W: W stays a matrix */
            flat[k] = cur;
            break;
        }
        bool same = x->rank == o->rank;
        for (int d = 0; same && d < nb; d++) same = hfx_dim_eq(x->dims[d], o->dims[d]);
        if (!same) { /* broadcast the batch dims */
            hfx_dim dims[HFX_MAX_RANK];
            int64_t sz[HFX_MAX_RANK];
            for (int d = 0; d < nb; d++) dims[d] = o->dims[d], sz[d] = osz[d];
            dims[nb] = x->dims[x->rank - 2], dims[nb + 1] = x->dims[x->rank - 1];
            sz[nb] = r, sz[nb + 1] = c;
            int t = tensor(l, x->dtype, o->rank, sz, dyn || xdyn);
            int args[3] = {cur, dims_list(l, dims, o->rank, -1), lit(l, HFX_ET_BOOL, 0, 0)};
            kernel_call(l, "aten::expand_copy", "out", args, 3, &t, 1);
            cur = t;
        }
        /* a @ W flattens every batch dim into the rows: [-1, K] */
        bool rows = b->rank == 2;
        hfx_dim dims[3] = {hfx_dim_const(-1), x->dims[x->rank - 2], x->dims[x->rank - 1]};
        int64_t sz[3] = {batch, r, c};
        if (rows) dims[1] = dims[2], sz[0] = batch * r, sz[1] = c;
        int t = tensor(l, x->dtype, rows ? 2 : 3, sz, dyn || xdyn);
        int args[2] = {cur, dims_list(l, dims, rows ? 2 : 3, 0)};
        kernel_call(l, "aten::view_copy", "out", args, 2, &t, 1);
        flat[k] = t;
    }
    if (l->st) return;
    bool mm = b->rank == 2;
    int64_t psz[3] = {mm ? batch * osz[nb] : batch, mm ? osz[nb + 1] : osz[nb], osz[nb + 1]};
    int prod = tensor(l, o->dtype, mm ? 2 : 3, psz, dyn);
    kernel_call(l, mm ? "aten::mm" : "aten::bmm", "out", flat, 2, &prod, 1);
    int args[2] = {prod, dims_list(l, o->dims, o->rank, -1)};
    kernel_call(l, "aten::view_copy", "out", args, 2, &out, 1);
}

/* self.index_copy(dim, index, source) (a cache written at slots) as index_put with the indices
 * [None × dim, index], which has a kernel: in place (aten::index_put_, only the slots written,
 * the result the input itself) when `in_place`, else into the out tensor. */
static void index_copy(lowering *l, const hfx_aten_node *n, bool in_place) {
    int dim = (int)n->args[1].i;
    int items[HFX_MAX_RANK];
    if (n->args[1].kind != HFX_ARG_INT || dim < 0 || dim >= HFX_MAX_RANK) {
        fail(l, HFX_ERR_INTERNAL, "executorch: index_copy on a dim that is not a constant%s%s", "", "");
        return;
    }
    for (int d = 0; d < dim; d++) items[d] = -1;
    items[dim] = l->value[n->args[2].value];
    int self = l->value[n->args[0].value];
    int args[5] = {self, list(l, HFX_ET_OPTIONAL_TENSOR_LIST, items, dim + 1), l->value[n->args[3].value],
                   lit(l, HFX_ET_BOOL, 0, 0), self};
    if (in_place) {
        l->value[n->out[0]] = self;
        call(l, "aten::index_put_", "", args, 5);
        return;
    }
    int out = l->value[n->out[0]];
    kernel_call(l, "aten::index_put", "out", args, 4, &out, 1);
}

/* Whether ATen value v is a user output (not only an input's new content). */
static bool returned(const hfx_aten_program *p, int v) {
    for (int o = 0; o < p->n_outputs; o++)
        if (p->mutates[o] < 0 && p->outputs[o] == v) return true;
    return false;
}

/* Per node: whether it is an index_copy that can write its input in place — the input is a user
 * input whose new content (torch.export's input mutation) is that node's result, no later node
 * reads the old content, and the result is not also returned (a caller may bind that output to
 * memory of its own). The caller frees the array. */
static bool *in_place_nodes(lowering *l) {
    const hfx_aten_program *p = l->p;
    bool *in_place = calloc((size_t)(p->n_nodes ? p->n_nodes : 1), sizeof *in_place);
    if (!in_place) return NULL;
    for (int o = 0; o < p->n_outputs; o++) {
        if (p->mutates[o] < 0) continue;
        int k = -1;
        for (int i = 0; i < p->n_nodes && k < 0; i++)
            if (p->nodes[i].out[0] == p->outputs[o] && p->nodes[i].op == HFX_ATEN_INDEX_COPY &&
                p->nodes[i].args[0].kind == HFX_ARG_TENSOR && p->nodes[i].args[0].value == p->mutates[o])
                k = i;
        bool read_later = k < 0;
        for (int i = k + 1; i < p->n_nodes && !read_later; i++)
            for (int a = 0; a < HFX_ATEN_MAX_ARGS && !read_later; a++) {
                const hfx_aten_arg *x = &p->nodes[i].args[a];
                read_later = x->kind == HFX_ARG_TENSOR ? x->value == p->mutates[o] : false;
                for (int t = 0; x->kind == HFX_ARG_TENSORS && t < x->n; t++) read_later |= x->values[t] == p->mutates[o];
            }
        if (!read_later && !returned(p, p->outputs[o])) in_place[k] = true;
    }
    return in_place;
}

/* ---- XNNPACK ---- */

/* The stored tensor (parameter or constant) ATen value v is, or NULL. */
static const hfx_aten_input *stored(const hfx_aten_program *p, int v) {
    for (int i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].value == v && p->inputs[i].kind != HFX_INPUT_USER) return &p->inputs[i];
    return NULL;
}

/* Part `part` of stored weight w quantized as q, as named data keyed by the weight's name and the
 * quantization (two readers quantizing one weight alike share it); NULL when out of memory. */
static const hfx_aten_input *quantized_part(lowering *l, const hfx_aten_input *w, const hfx_quant *q,
                                            hfx_quant_part part) {
    hfx_aten_input *t = hfx_arena_alloc(l->e->arena, sizeof *t);
    const hfx_init *init = hfx_quant_init(l->e->arena, w->init, q, part);
    const char *key = hfx_arena_printf(l->e->arena, "%s.int%d_g%lld.%s", w->target, q->bits,
                                       (long long)hfx_quant_block_size(q, w->init->shape[1]),
                                       part == HFX_QUANT_CODES ? "codes" : "scales");
    if (!t || !init || !key) return NULL;
    *t = (hfx_aten_input){HFX_INPUT_PARAMETER, -1, key, init, NULL};
    return t;
}

/* linear(x, W, b) as an XNNPACK delegate when it is float32 with stored W [N, K] (and b [N]), W
 * read as stored or quantized as the node says (its codes and scales then computed from W);
 * false: left to the portable kernel. */
static bool delegate_linear(lowering *l, const hfx_aten_node *n) {
    const hfx_aten_program *p = l->p;
    const hfx_aten_arg *x = &n->args[0], *w = &n->args[1], *b = &n->args[2];
    if (x->kind != HFX_ARG_TENSOR || w->kind != HFX_ARG_TENSOR) return false;
    const hfx_aten_value *xv = &p->values[x->value], *wv = &p->values[w->value], *ov = &p->values[n->out[0]];
    const hfx_aten_input *weight = stored(p, w->value), *bias = NULL;
    if (!weight || xv->dtype != HFX_DTYPE_F32 || wv->dtype != HFX_DTYPE_F32 || ov->dtype != HFX_DTYPE_F32 ||
        wv->rank != 2 || !hfx_dim_is_const(wv->dims[0]) || !hfx_dim_is_const(wv->dims[1]) || xv->rank < 1)
        return false;
    if (b->kind == HFX_ARG_TENSOR) {
        const hfx_aten_value *bv = &p->values[b->value];
        bias = stored(p, b->value);
        if (!bias || bv->dtype != HFX_DTYPE_F32 || bv->rank != 1) return false;
    } else if (b->kind != HFX_ARG_DEFAULT && b->kind != HFX_ARG_NONE) return false;
    hfx_et_program *e = l->e;
    hfx_quant *q = NULL;
    const hfx_aten_input *codes = NULL, *scales = NULL;
    if (n->quant) {
        if (!weight->init || weight->init->rank != 2) return false;
        if (!(q = hfx_arena_alloc(e->arena, sizeof *q))) return !(e->oom = true);
        *q = *n->quant;
        q->scale_dtype = hfx_et_blockwise(q) ? HFX_DTYPE_BF16 : HFX_DTYPE_F32;
        codes = quantized_part(l, weight, q, HFX_QUANT_CODES);
        scales = quantized_part(l, weight, q, HFX_QUANT_SCALES);
        if (!codes || !scales) return !(e->oom = true);
    }
    if (!grow(e, (void **)&e->delegates, e->n_delegates, &e->cap_delegates, sizeof *e->delegates)) return true;
    int args[2] = {l->value[x->value], l->value[n->out[0]]};
    int *a = copy_ints(l, args, 2);
    if (!a || !grow(e, (void **)&e->calls, e->n_calls, &e->cap_calls, sizeof *e->calls)) return true;
    e->delegates[e->n_delegates] =
        (hfx_et_delegate){args[0], args[1], weight, bias, wv->dims[0].c, wv->dims[1].c, q, codes, scales};
    e->calls[e->n_calls++] = (hfx_et_call){-1, e->n_delegates++, a, 2};
    return true;
}

static void mark_read(const hfx_et_program *e, int v, bool *read) {
    const hfx_et_value *x = &e->values[v];
    if (x->kind == HFX_ET_TENSOR_LIST || x->kind == HFX_ET_OPTIONAL_TENSOR_LIST) {
        for (int i = 0; i < x->n; i++)
            if (x->items[i] >= 0) read[x->items[i]] = true;
    } else read[v] = true;
}

/* Stored tensors that only delegates read as their weights (named data) are no constants of
 * the program: the constant segment's buffers are renumbered over those a call takes as an
 * argument (a delegate's input may be stored too: DeBERTa's relative embeddings). */
static void drop_delegated_constants(hfx_et_program *e) {
    bool *read = calloc((size_t)(e->n_values ? e->n_values : 1), sizeof *read);
    if (!read) {
        e->oom = true;
        return;
    }
    for (int c = 0; c < e->n_calls; c++)
        for (int a = 0; a < e->calls[c].n; a++) mark_read(e, e->calls[c].args[a], read);
    for (int i = 0; i < e->n_outputs; i++) read[e->outputs[i]] = true;
    uint32_t n = 0;
    for (int i = 0; i < e->n_values; i++) {
        hfx_et_value *v = &e->values[i];
        if (v->kind == HFX_ET_TENSOR && v->buffer) v->buffer = read[i] ? ++n : 0;
    }
    e->n_buffers = n;
    free(read);
}

static void lower_node(lowering *l, const hfx_aten_node *n, bool in_place) {
    if (n->op == HFX_ATEN_LINEAR && l->xnnpack && delegate_linear(l, n)) return;
    if (n->quant) { /* no portable kernel reads quantized weights */
        bool linear = n->op == HFX_ATEN_LINEAR;
        const hfx_aten_input *w = stored(l->p, n->args[linear ? 1 : 0].value);
        fail(l, HFX_ERR_UNSUPPORTED, linear ? "executorch: '%s' is stored quantized, and %s"
                                            : "executorch: '%s' is a quantized embedding table, and %s",
             w ? w->target : "?", linear ? "quantized weights are read by XNNPACK's quantized linears only (backend "
                                           "xnnpack, float32 activations)"
                                         : "quantized embedding tables are not written yet: keep them float "
                                           "(--quantize-embeddings none)");
        return;
    }
    if (n->op == HFX_ATEN_MATMUL) {
        matmul(l, n);
        return;
    }
    if (n->op == HFX_ATEN_INDEX_COPY) {
        index_copy(l, n, in_place);
        return;
    }
    if (!kernels[n->op].name) {
        const hfx_aten_info *info = hfx_aten_info_of(n->op);
        fail(l, HFX_ERR_UNSUPPORTED, "executorch: aten.%s.%s has no ExecuTorch kernel hfx writes yet", info->op,
             info->overload ? info->overload : "default");
        return;
    }
    table_call(l, n);
}

void hfx_et_program_free(hfx_et_program *e) {
    if (!e) return;
    free(e->values);
    free(e->calls);
    free(e->ops);
    free(e->delegates);
    hfx_arena_free(e->arena);
    free(e);
}

/* A constant input of ones (HFX_ET_ONES): its bytes, in the arena. */
static const hfx_aten_input *ones(lowering *l, const hfx_et_value *v) {
    static const int64_t one_i64 = 1;
    static const int32_t one_i32 = 1;
    static const float one_f32 = 1;
    static const uint8_t one_u8 = 1;
    const void *one = NULL;
    switch (v->dtype) {
    case HFX_DTYPE_I64: one = &one_i64; break;
    case HFX_DTYPE_I32: one = &one_i32; break;
    case HFX_DTYPE_F32: one = &one_f32; break;
    case HFX_DTYPE_BOOL: one = &one_u8; break;
    default: break;
    }
    uint64_t n = hfx_et_nbytes(v), size = hfx_dtype_nbytes(v->dtype, 1);
    hfx_aten_input *in = hfx_arena_alloc(l->e->arena, sizeof *in);
    uint8_t *bytes = hfx_arena_alloc(l->e->arena, n ? n : 1);
    if (!one) {
        fail(l, HFX_ERR_INTERNAL, "executorch: a constant of ones of %s%s", hfx_dtype_name(v->dtype), "");
        return NULL;
    }
    if (!in || !bytes) {
        l->e->oom = true;
        return NULL;
    }
    for (uint64_t k = 0; k < n; k += size) memcpy(bytes + k, one, size);
    *in = (hfx_aten_input){.kind = HFX_INPUT_CONSTANT, .target = "ones", .bytes = bytes};
    return in;
}

hfx_status hfx_et_lower(const hfx_aten_program *p, const hfx_et_options *opt, hfx_et_program **out,
                        hfx_error *err) {
    *out = NULL;
    const hfx_et_inputs *layout = opt ? opt->inputs : NULL;
    hfx_et_program *e = calloc(1, sizeof *e);
    lowering l = {.p = p, .e = e, .xnnpack = opt && opt->xnnpack, .err = err};
    if (e) e->arena = hfx_arena_new();
    l.value = malloc((size_t)(p->n_values ? p->n_values : 1) * sizeof *l.value);
    l.symbol = malloc((size_t)(p->g->n_symbols ? p->g->n_symbols : 1) * sizeof *l.symbol);
    int *user = malloc((size_t)(p->n_inputs + 1) * sizeof *user);     /* user input k: its ATen value */
    int *role = malloc((size_t)(p->n_values ? p->n_values : 1) * sizeof *role); /* per ATen value; -1: none */
    if (!e || !e->arena || !l.value || !l.symbol || !user || !role) {
        hfx_et_program_free(e);
        free(l.value), free(l.symbol), free(user), free(role);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < p->n_values; i++) role[i] = -1;
    for (int s = 0; s < p->g->n_symbols; s++) l.symbol[s] = -1;
    /* every ATen value, in order: tensors at their upper bounds, SymInts as Ints */
    for (int i = 0; i < p->n_values && !l.st; i++) {
        const hfx_aten_value *v = &p->values[i];
        l.value[i] = v->symint ? lit(&l, HFX_ET_INT, 0, 0) : tensor_of_dims(&l, v->dtype, v->rank, v->dims);
    }
    /* stored tensors (parameters, constants) are the constant segment's buffers, in input order;
     * user inputs are the plan's inputs, or what `layout` makes of them */
    int n_constants = opt && !layout ? opt->n_constants : 0, next = 0;
    int *inputs = hfx_arena_alloc(e->arena, (size_t)(p->n_inputs + n_constants + 1) * sizeof *inputs);
    int *outputs = hfx_arena_alloc(e->arena, (size_t)(p->n_outputs + 1) * sizeof *outputs);
    if (!inputs || !outputs) e->oom = true;
    int n_user = 0;
    for (int i = 0; i < p->n_inputs && !l.st && !e->oom; i++) {
        const hfx_aten_input *in = &p->inputs[i];
        hfx_et_value *v = &e->values[l.value[in->value]];
        if (in->kind == HFX_INPUT_USER) {
            for (; next < n_constants && opt->constant_before[next] <= n_user; next++)
                inputs[e->n_inputs++] = constant_input(&l, opt->constants[next]);
            int r = layout ? layout->role[n_user] : HFX_ET_ARG;
            role[in->value] = r;
            user[n_user++] = in->value;
            if (!layout) inputs[e->n_inputs++] = l.value[in->value];
            else if (r == HFX_ET_BUFFER) v->persistent = true;
            else if (r == HFX_ET_ONES && (v->constant = ones(&l, v))) v->buffer = ++e->n_buffers;
        } else {
            if (v->dynamic) l.st = hfx_fail(err, HFX_ERR_INTERNAL, "executorch: a stored tensor of varying size");
            v->buffer = ++e->n_buffers;
            v->constant = in;
        }
    }
    for (; next < n_constants && !e->oom; next++) inputs[e->n_inputs++] = constant_input(&l, opt->constants[next]);
    for (int k = 0; layout && k < layout->n_order && !e->oom; k++)
        inputs[e->n_inputs++] = l.value[user[layout->order[k]]];
    for (int k = 0; layout && k < n_user && !l.st && !e->oom; k++) {
        if (layout->role[k] != HFX_ET_POSITIONS) continue;
        int items[2] = {lit(&l, HFX_ET_INT, 1, 0), lit(&l, HFX_ET_INT, -1, 0)};
        int args[2] = {l.value[user[layout->positions_of]], list(&l, HFX_ET_INT_LIST, items, 2)};
        kernel_call(&l, "aten::view_copy", "out", args, 2, &l.value[user[k]], 1);
    }
    bool *in_place = in_place_nodes(&l);
    if (!in_place) e->oom = true;
    for (int i = 0; i < p->n_nodes && !l.st && !e->oom; i++) lower_node(&l, &p->nodes[i], in_place[i]);
    free(in_place);
    /* an input's new content (a static cache) is that input, updated by the call: written in place
     * above, or copied back into it (aten::copy_) as ExecuTorch's emitter writes an input mutation;
     * it is also an output, so a runtime that copies inputs into its own memory returns it */
    bool export_order = opt && opt->export_order; /* (torch.export's: the mutations in a first pass) */
    for (int pass = 0; pass < (export_order ? 2 : 1); pass++)
        for (int i = 0; i < p->n_outputs && !l.st && !e->oom; i++) {
            if (export_order && (p->mutates[i] >= 0) != (pass == 0)) continue;
            int v = l.value[p->outputs[i]];
            if (p->mutates[i] >= 0 && v != l.value[p->mutates[i]]) {
                int self = l.value[p->mutates[i]];
                int args[4] = {self, v, lit(&l, HFX_ET_BOOL, 0, 0), self};
                call(&l, "aten::copy_", "", args, 4);
                v = self;
            }
            if (p->mutates[i] < 0 || role[p->mutates[i]] != HFX_ET_BUFFER) outputs[e->n_outputs++] = v;
        }
    e->inputs = inputs, e->outputs = outputs;
    if (!l.st && !e->oom && e->n_delegates) drop_delegated_constants(e);
    free(l.value), free(l.symbol), free(user), free(role);
    if (!l.st && e->oom) l.st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (l.st) {
        hfx_et_program_free(e);
        return l.st;
    }
    *out = e;
    return HFX_OK;
}
