/* IR → ATen (aten_lower.h). Every IR value becomes a tensor value of the program and/or, when
 * it is i64 shape arithmetic, a list of sizes (constants or SymInt values) known at lowering
 * time: Shape gives sizes, Gather/Unsqueeze/Concat/Add/Sub/Mul of sizes give sizes, and Range,
 * Reshape and Expand read them as SymInt arguments. A size list is turned into a tensor only
 * where a tensor op reads it (scalar_tensor). */
#include "fmt/aten_lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

enum { MAX_SIZES = HFX_MAX_RANK };

/* An i64 value's elements as sizes (rank 0: one element). */
typedef struct sizes {
    int n;
    hfx_aten_size s[MAX_SIZES];
    hfx_dim e[MAX_SIZES]; /* each one's expression */
} sizes;

typedef struct lowering {
    const hfx_graph *g;
    hfx_aten_program *p;
    int *tensor;      /* per IR value: its tensor value, -1 none yet */
    sizes **shape;    /* per IR value: its sizes, NULL when not shape arithmetic */
    int *symbol;      /* per symbol: its SymInt value, -1 none yet */
    hfx_status st;
    hfx_error *err;
} lowering;

static bool fail(lowering *l, hfx_status st, const char *fmt, const char *what) {
    if (!l->st) l->st = hfx_fail(l->err, st, fmt, what);
    return false;
}

static hfx_aten_arg T(int v) { return hfx_arg_tensor(v); }

/* ---- symbols and sizes ---- */

/* The SymInt of symbol `s`: the size of a user input axis that is exactly that symbol. */
static int symbol_value(lowering *l, int s) {
    if (l->symbol[s] >= 0) return l->symbol[s];
    for (int i = 0; i < l->g->n_inputs; i++) {
        const hfx_value *in = l->g->inputs[i];
        for (int d = 0; d < in->rank; d++)
            if (in->dims[d].n == 1 && in->dims[d].c == 0 && in->dims[d].sym[0] == s && in->dims[d].coef[0] == 1)
                return l->symbol[s] = hfx_aten_sym_size(l->p, l->tensor[in->id], d);
    }
    fail(l, HFX_ERR_UNSUPPORTED, "torch.export: symbol '%s' is no input's size", l->g->symbols[s].name);
    return 0;
}

/* A dim as a size: its constant, or a SymInt built from its symbols (c + Σ coef·symbol). */
static hfx_aten_size dim_size(lowering *l, hfx_dim d) {
    if (hfx_dim_is_const(d)) return (hfx_aten_size){-1, d.c};
    hfx_dim acc = {0};
    hfx_aten_size cur = {-1, 0};
    for (int t = 0; t < d.n; t++) {
        hfx_dim term = {.n = 1, .sym = {d.sym[t]}, .coef = {d.coef[t]}};
        hfx_aten_size s = {symbol_value(l, d.sym[t]), 0};
        if (d.coef[t] != 1) s = (hfx_aten_size){hfx_aten_sym_op(l->p, HFX_SYM_MUL, s, (hfx_aten_size){-1, d.coef[t]}, term), 0};
        bool ok = true;
        acc = t ? hfx_dim_add(acc, term, &ok) : term;
        cur = t ? (hfx_aten_size){hfx_aten_sym_op(l->p, HFX_SYM_ADD, cur, s, acc), 0} : s;
    }
    if (d.c) {
        bool ok = true;
        acc = hfx_dim_add(acc, hfx_dim_const(d.c), &ok);
        cur = (hfx_aten_size){hfx_aten_sym_op(l->p, HFX_SYM_ADD, cur, (hfx_aten_size){-1, d.c}, acc), 0};
    }
    return cur;
}

static sizes *new_sizes(lowering *l, int n) {
    sizes *s = hfx_arena_alloc(l->p->arena, sizeof *s);
    if (!s) {
        fail(l, HFX_ERR_NOMEM, "%s", "out of memory");
        return NULL;
    }
    s->n = n;
    return s;
}

/* A tensor's dims as an argument list (one symbolic dim as -1, as torch.export writes it). */
static hfx_aten_arg dims_arg(lowering *l, const hfx_value *v) {
    hfx_aten_size s[HFX_MAX_RANK];
    int symbolic = 0;
    for (int d = 0; d < v->rank; d++) symbolic += !hfx_dim_is_const(v->dims[d]);
    for (int d = 0; d < v->rank; d++)
        s[d] = symbolic == 1 && !hfx_dim_is_const(v->dims[d]) ? (hfx_aten_size){-1, -1} : dim_size(l, v->dims[d]);
    return hfx_arg_sizes(l->p, v->rank, s);
}

/* ---- values ---- */

static bool plain_view(const hfx_init *init) {
    if (init->n_parts != 1 || !init->parts[0].mapping || init->parts[0].offset) return false;
    const hfx_init_part *part = &init->parts[0];
    int64_t stride = 1;
    for (int d = part->rank - 1; d >= 0; d--) {
        if (part->strides[d] != stride && part->shape[d] != 1) return false;
        stride *= part->shape[d];
    }
    return true;
}

/* The tensor of IR value v: a constant becomes a parameter or a lifted constant on first use; a
 * size list a scalar_tensor (rank 0). */
static int tensor_of(lowering *l, const hfx_value *v) {
    if (l->tensor[v->id] >= 0) return l->tensor[v->id];
    if (v->init) {
        const hfx_init *init = v->init;
        if (plain_view(init)) { /* a checkpoint tensor: a parameter, once per tensor */
            for (int i = 0; i < l->p->n_inputs; i++)
                if (l->p->inputs[i].init && hfx_init_same(l->p->inputs[i].init, init))
                    return l->tensor[v->id] = l->p->inputs[i].value;
            bool taken = false;
            for (int i = 0; i < l->p->n_inputs; i++)
                taken |= l->p->inputs[i].target && !strcmp(l->p->inputs[i].target, init->source);
            if (!taken)
                return l->tensor[v->id] = hfx_aten_parameter(l->p, init->source, v->dtype, v->rank, v->dims, init, NULL);
        }
        return l->tensor[v->id] = hfx_aten_constant(l->p, v->dtype, v->rank, v->dims, init, NULL);
    }
    const sizes *s = l->shape[v->id];
    if (s && v->rank <= 1) { /* each size as a 0-d tensor; a list is their concatenation */
        int parts[MAX_SIZES];
        hfx_dim one = hfx_dim_const(1);
        for (int i = 0; i < s->n; i++) {
            hfx_aten_arg a[2] = {s->s[i].value >= 0 ? hfx_arg_symint(s->s[i].value) : hfx_arg_int(s->s[i].c),
                                 {.kind = HFX_ARG_DTYPE, .dtype = v->dtype}};
            parts[i] = hfx_aten_call(l->p, HFX_ATEN_SCALAR_TENSOR, a, 2, v->dtype, 0, NULL);
            if (v->rank == 1) {
                hfx_aten_arg u[2] = {T(parts[i]), hfx_arg_int(0)};
                parts[i] = hfx_aten_call(l->p, HFX_ATEN_UNSQUEEZE, u, 2, v->dtype, 1, &one);
            }
        }
        if (v->rank == 0) return l->tensor[v->id] = parts[0];
        int *vals = hfx_arena_alloc(l->p->arena, (size_t)(s->n ? s->n : 1) * sizeof *vals);
        if (!vals) {
            fail(l, HFX_ERR_NOMEM, "%s", "out of memory");
            return 0;
        }
        memcpy(vals, parts, (size_t)s->n * sizeof *vals);
        hfx_aten_arg c[2] = {{.kind = HFX_ARG_TENSORS, .values = vals, .n = s->n}, hfx_arg_int(0)};
        return l->tensor[v->id] = hfx_aten_call(l->p, HFX_ATEN_CAT, c, 2, v->dtype, 1, v->dims);
    }
    fail(l, HFX_ERR_INTERNAL, "torch.export: IR value %s has no tensor", v->name ? v->name : "(intermediate)");
    return 0;
}

/* The sizes an i64 value holds, or NULL: shape arithmetic, or a small i64 constant. */
static const sizes *sizes_of(lowering *l, const hfx_value *v) {
    if (l->shape[v->id]) return l->shape[v->id];
    if (v->init && v->dtype == HFX_DTYPE_I64 && v->rank <= 1 && hfx_init_numel(v->init) <= MAX_SIZES) {
        int n = (int)hfx_init_numel(v->init);
        int64_t vals[MAX_SIZES];
        hfx_error e;
        if (hfx_init_read(v->init, 0, (uint64_t)n, vals, &e)) return NULL;
        sizes *s = new_sizes(l, n);
        for (int i = 0; s && i < n; i++) s->s[i] = (hfx_aten_size){-1, vals[i]}, s->e[i] = hfx_dim_const(vals[i]);
        return l->shape[v->id] = s;
    }
    return NULL;
}

/* ---- nodes ---- */

static int out_call(lowering *l, const hfx_node *n, hfx_aten_op op, const hfx_aten_arg *a, int k) {
    const hfx_value *o = n->out[0];
    return l->tensor[o->id] = hfx_aten_call(l->p, op, a, k, o->dtype, o->rank, o->dims);
}

/* The ATen call just made for n reads its weight as n's quantization says (hfx_aten_node.quant). */
static void keep_quant(lowering *l, const hfx_node *n) {
    if (n->attrs.quant && !l->p->oom && l->p->n_nodes) l->p->nodes[l->p->n_nodes - 1].quant = n->attrs.quant;
}

/* Shape arithmetic: true when the node was lowered as sizes. */
static bool lower_sizes(lowering *l, const hfx_node *n) {
    const hfx_value *o = n->out[0];
    if (o->dtype != HFX_DTYPE_I64 || o->rank > 1) return false;
    const sizes *a = n->n_in > 0 ? sizes_of(l, n->in[0]) : NULL, *b = n->n_in > 1 ? sizes_of(l, n->in[1]) : NULL;
    sizes *r = NULL;
    switch (n->op) {
    case HFX_OP_SHAPE: {
        const hfx_value *x = n->in[0];
        if (!(r = new_sizes(l, x->rank))) return true;
        for (int d = 0; d < x->rank; d++) {
            r->e[d] = x->dims[d];
            r->s[d] = hfx_dim_is_const(x->dims[d]) ? (hfx_aten_size){-1, x->dims[d].c}
                                                   : (hfx_aten_size){hfx_aten_sym_size(l->p, tensor_of(l, x), d), 0};
        }
        break;
    }
    case HFX_OP_GATHER: /* elements of a size list at constant indices */
        if (!a || !b || n->in[1]->rank > 1) return false;
        for (int j = 0; j < b->n; j++)
            if (b->s[j].value >= 0 || b->s[j].c < -a->n || b->s[j].c >= a->n) return false;
        if (!(r = new_sizes(l, b->n))) return true;
        for (int j = 0; j < b->n; j++) {
            int64_t i = b->s[j].c < 0 ? b->s[j].c + a->n : b->s[j].c;
            r->s[j] = a->s[i], r->e[j] = a->e[i];
        }
        break;
    case HFX_OP_UNSQUEEZE:
        if (!a || !(r = new_sizes(l, a->n))) return false;
        memcpy(r->s, a->s, sizeof r->s), memcpy(r->e, a->e, sizeof r->e);
        break;
    case HFX_OP_CONCAT: {
        int total = 0;
        for (int i = 0; i < n->n_in; i++) {
            const sizes *p = sizes_of(l, n->in[i]);
            if (!p || total + p->n > MAX_SIZES) return false;
            total += p->n;
        }
        if (!(r = new_sizes(l, 0))) return true;
        for (int i = 0; i < n->n_in; i++) {
            const sizes *p = sizes_of(l, n->in[i]);
            for (int j = 0; j < p->n; j++) r->s[r->n] = p->s[j], r->e[r->n++] = p->e[j];
        }
        break;
    }
    case HFX_OP_ADD:
    case HFX_OP_SUB:
    case HFX_OP_MUL: {
        if (!a || !b || a->n != 1 || b->n != 1) return false;
        if (!(r = new_sizes(l, 1))) return true;
        hfx_aten_size x = a->s[0], y = b->s[0];
        bool ok = true;
        hfx_dim e = n->op == HFX_OP_ADD ? hfx_dim_add(a->e[0], b->e[0], &ok)
                    : n->op == HFX_OP_SUB ? hfx_dim_add(a->e[0], hfx_dim_scale(b->e[0], -1), &ok)
                    : hfx_dim_is_const(a->e[0]) ? hfx_dim_scale(b->e[0], a->e[0].c)
                    : hfx_dim_is_const(b->e[0]) ? hfx_dim_scale(a->e[0], b->e[0].c)
                                                 : (ok = false, a->e[0]);
        if (!ok) return false; /* not affine: leave it to the tensor ops */
        r->e[0] = e;
        if (x.value < 0 && y.value < 0) r->s[0] = (hfx_aten_size){-1, e.c};
        else {
            hfx_aten_op op = n->op == HFX_OP_ADD ? HFX_SYM_ADD : n->op == HFX_OP_SUB ? HFX_SYM_SUB : HFX_SYM_MUL;
            r->s[0] = (hfx_aten_size){hfx_aten_sym_op(l->p, op, x, y, e), 0};
        }
        break;
    }
    default: return false;
    }
    l->shape[o->id] = r;
    return true;
}

static hfx_aten_arg size_or_int(hfx_aten_size s) { return s.value >= 0 ? hfx_arg_symint(s.value) : hfx_arg_int(s.c); }

static void lower_node(lowering *l, const hfx_node *n) {
    /* ATen op + 1 (0: none) */
    static const int binary[HFX_OP_COUNT_] = {
        [HFX_OP_ADD] = HFX_ATEN_ADD + 1, [HFX_OP_SUB] = HFX_ATEN_SUB + 1, [HFX_OP_MUL] = HFX_ATEN_MUL + 1,
        [HFX_OP_DIV] = HFX_ATEN_DIV + 1, [HFX_OP_POW] = HFX_ATEN_POW + 1, [HFX_OP_MIN] = HFX_ATEN_MINIMUM + 1,
        [HFX_OP_MAX] = HFX_ATEN_MAXIMUM + 1, [HFX_OP_EQUAL] = HFX_ATEN_EQ + 1, [HFX_OP_LESS] = HFX_ATEN_LT + 1,
        [HFX_OP_LESS_EQUAL] = HFX_ATEN_LE + 1, [HFX_OP_GREATER] = HFX_ATEN_GT + 1, [HFX_OP_GREATER_EQUAL] = HFX_ATEN_GE + 1,
        [HFX_OP_AND] = HFX_ATEN_LOGICAL_AND + 1, [HFX_OP_OR] = HFX_ATEN_LOGICAL_OR + 1};
    static const int unary[HFX_OP_COUNT_] = {
        [HFX_OP_NEG] = HFX_ATEN_NEG + 1, [HFX_OP_NOT] = HFX_ATEN_LOGICAL_NOT + 1, [HFX_OP_SQRT] = HFX_ATEN_SQRT + 1,
        [HFX_OP_RECIPROCAL] = HFX_ATEN_RECIPROCAL + 1, [HFX_OP_EXP] = HFX_ATEN_EXP + 1, [HFX_OP_LOG] = HFX_ATEN_LOG + 1,
        [HFX_OP_SIGMOID] = HFX_ATEN_SIGMOID + 1, [HFX_OP_TANH] = HFX_ATEN_TANH + 1, [HFX_OP_ERF] = HFX_ATEN_ERF + 1,
        [HFX_OP_COS] = HFX_ATEN_COS + 1, [HFX_OP_SIN] = HFX_ATEN_SIN + 1};
    if (lower_sizes(l, n)) return;
    const hfx_attrs *at = &n->attrs;
    const hfx_value *o = n->out[0];
    hfx_aten_arg a[HFX_ATEN_MAX_ARGS];
    if (binary[n->op] && n->n_in == 2) {
        a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
        /* aten.div divides integers into floats; the IR's integer division keeps integers (its
         * operands are never negative, so flooring is truncating) */
        bool int_div = n->op == HFX_OP_DIV && (o->dtype == HFX_DTYPE_I64 || o->dtype == HFX_DTYPE_I32);
        out_call(l, n, int_div ? HFX_ATEN_FLOOR_DIVIDE : (hfx_aten_op)(binary[n->op] - 1), a, 2);
        return;
    }
    if (unary[n->op]) {
        a[0] = T(tensor_of(l, n->in[0]));
        out_call(l, n, (hfx_aten_op)(unary[n->op] - 1), a, 1);
        return;
    }
    switch (n->op) {
    case HFX_OP_WHERE:
        for (int i = 0; i < 3; i++) a[i] = T(tensor_of(l, n->in[i]));
        out_call(l, n, HFX_ATEN_WHERE, a, 3);
        return;
    case HFX_OP_CAST:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = at->to};
        out_call(l, n, HFX_ATEN_TO_COPY, a, 2);
        return;
    case HFX_OP_MATMUL:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
        out_call(l, n, HFX_ATEN_MATMUL, a, 2);
        return;
    case HFX_OP_LINEAR:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
        a[2] = n->n_in > 2 && n->in[2] ? T(tensor_of(l, n->in[2])) : (hfx_aten_arg){.kind = HFX_ARG_DEFAULT};
        out_call(l, n, HFX_ATEN_LINEAR, a, 3);
        keep_quant(l, n);
        return;
    case HFX_OP_SOFTMAX:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->axis);
        out_call(l, n, HFX_ATEN_SOFTMAX, a, 2);
        return;
    case HFX_OP_CUMSUM:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->axis);
        out_call(l, n, HFX_ATEN_CUMSUM, a, 2);
        return;
    case HFX_OP_REDUCE_MEAN:
    case HFX_OP_REDUCE_MAX:
    case HFX_OP_REDUCE_SUM:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_ints(l->p, at->n_ints, at->ints), a[2] = hfx_arg_bool(true);
        out_call(l, n, n->op == HFX_OP_REDUCE_MEAN ? HFX_ATEN_MEAN : n->op == HFX_OP_REDUCE_MAX ? HFX_ATEN_AMAX : HFX_ATEN_SUM,
                 a, 3);
        return;
    case HFX_OP_RESHAPE: {
        a[0] = T(tensor_of(l, n->in[0]));
        const sizes *s = n->n_in > 1 ? sizes_of(l, n->in[1]) : NULL;
        if (n->n_in > 1 && !s) {
            const hfx_node *from = n->in[1]->producer;
            fail(l, HFX_ERR_UNSUPPORTED, "torch.export: a Reshape to a shape computed by '%s' is not lowered yet",
                 from ? hfx_op_name(from->op) : "a graph input");
            return;
        }
        a[1] = s ? hfx_arg_sizes(l->p, s->n, s->s) : dims_arg(l, o);
        out_call(l, n, HFX_ATEN_RESHAPE, a, 2);
        return;
    }
    case HFX_OP_EXPAND: {
        const sizes *s = sizes_of(l, n->in[1]);
        a[0] = T(tensor_of(l, n->in[0]));
        a[1] = s ? hfx_arg_sizes(l->p, s->n, s->s) : dims_arg(l, o);
        out_call(l, n, HFX_ATEN_EXPAND, a, 2);
        return;
    }
    case HFX_OP_TRANSPOSE:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_ints(l->p, at->n_ints, at->ints);
        out_call(l, n, HFX_ATEN_PERMUTE, a, 2);
        return;
    case HFX_OP_UNSQUEEZE: { /* one axis at a time, in increasing order (axes of the output) */
        int cur = tensor_of(l, n->in[0]);
        hfx_dim dims[HFX_MAX_RANK];
        int rank = n->in[0]->rank;
        memcpy(dims, n->in[0]->dims, sizeof dims);
        for (int i = 0; i < at->n_ints && rank < HFX_MAX_RANK; i++) {
            int64_t ax = at->ints[i];
            memmove(&dims[ax + 1], &dims[ax], (size_t)(rank - ax) * sizeof dims[0]);
            dims[ax] = hfx_dim_const(1);
            rank++;
            hfx_aten_arg u[2] = {T(cur), hfx_arg_int(ax)};
            cur = hfx_aten_call(l->p, HFX_ATEN_UNSQUEEZE, u, 2, o->dtype, rank, dims);
        }
        l->tensor[o->id] = cur;
        return;
    }
    case HFX_OP_CONCAT: {
        int *vals = hfx_arena_alloc(l->p->arena, (size_t)n->n_in * sizeof *vals);
        if (!vals) {
            fail(l, HFX_ERR_NOMEM, "%s", "out of memory");
            return;
        }
        for (int i = 0; i < n->n_in; i++) vals[i] = tensor_of(l, n->in[i]);
        a[0] = (hfx_aten_arg){.kind = HFX_ARG_TENSORS, .values = vals, .n = n->n_in}, a[1] = hfx_arg_int(at->axis);
        out_call(l, n, HFX_ATEN_CAT, a, 2);
        return;
    }
    case HFX_OP_SLICE:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->axis), a[2] = hfx_arg_int(at->start);
        a[3] = hfx_arg_int(at->end);
        out_call(l, n, HFX_ATEN_SLICE, a, 4);
        return;
    case HFX_OP_GATHER:
        if (at->axis == 0 && n->in[0]->rank == 2) { /* rows of a table: an embedding lookup */
            a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
            out_call(l, n, HFX_ATEN_EMBEDDING, a, 2);
            keep_quant(l, n);
            return;
        }
        { /* numpy take: index_select over the flattened indices, then the output's shape */
            const hfx_value *idx = n->in[1];
            int flat = tensor_of(l, idx);
            hfx_dim numel = hfx_dim_const(1); /* the index count: affine while one dim is symbolic */
            for (int d = 0; d < idx->rank; d++) {
                if (hfx_dim_is_const(idx->dims[d])) numel = hfx_dim_scale(numel, idx->dims[d].c);
                else if (hfx_dim_is_const(numel)) numel = hfx_dim_scale(idx->dims[d], numel.c);
                else {
                    fail(l, HFX_ERR_UNSUPPORTED, "torch.export: %s with two dynamic index dims is not lowered yet",
                         "gather");
                    return;
                }
            }
            if (idx->rank != 1) {
                hfx_aten_arg r[2] = {T(flat), hfx_arg_ints(l->p, 1, (int64_t[]){-1})};
                flat = hfx_aten_call(l->p, HFX_ATEN_RESHAPE, r, 2, idx->dtype, 1, &numel);
            }
            hfx_dim sel[HFX_MAX_RANK];
            const hfx_value *x = n->in[0];
            memcpy(sel, x->dims, sizeof sel);
            sel[at->axis] = numel;
            hfx_aten_arg g[3] = {T(tensor_of(l, x)), hfx_arg_int(at->axis), T(flat)};
            int picked = hfx_aten_call(l->p, HFX_ATEN_INDEX_SELECT, g, 3, o->dtype, x->rank, sel);
            if (idx->rank == 1) {
                l->tensor[o->id] = picked;
                return;
            }
            a[0] = T(picked), a[1] = dims_arg(l, o);
            out_call(l, n, HFX_ATEN_RESHAPE, a, 2);
        }
        return;
    case HFX_OP_RANGE: {
        const sizes *s[3] = {sizes_of(l, n->in[0]), sizes_of(l, n->in[1]), sizes_of(l, n->in[2])};
        bool unit_step = s[2] && s[2]->s[0].value < 0 && s[2]->s[0].c == 1;
        if ((!s[0] || !s[1]) && unit_step && o->rank == 1) {
            /* from a tensor (a static cache's write counter): arange(length) + start, the length
             * being the output's dim, as transformers' StaticLayer computes its slots */
            a[0] = hfx_arg_int(0), a[1] = size_or_int(dim_size(l, o->dims[0])), a[2] = hfx_arg_int(1);
            a[3] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = o->dtype};
            int steps = hfx_aten_call(l->p, HFX_ATEN_ARANGE, a, 4, o->dtype, 1, o->dims);
            hfx_aten_arg b[2] = {T(steps), T(tensor_of(l, n->in[0]))};
            out_call(l, n, HFX_ATEN_ADD, b, 2);
            return;
        }
        if (!s[0] || !s[1] || !s[2]) {
            fail(l, HFX_ERR_UNSUPPORTED, "torch.export: %s with bounds that are not sizes is not lowered yet", "range");
            return;
        }
        a[0] = size_or_int(s[0]->s[0]), a[1] = size_or_int(s[1]->s[0]), a[2] = size_or_int(s[2]->s[0]);
        a[3] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = o->dtype};
        out_call(l, n, HFX_ATEN_ARANGE, a, 4);
        return;
    }
    case HFX_OP_ATTENTION: { /* softmax(q·kᵀ·scale + bias)·v, k/v shared by groups of heads */
        const hfx_value *q = n->in[0], *k = n->in[1];
        for (int i = 0; i < 4; i++) a[i] = T(tensor_of(l, n->in[i]));
        a[4] = (hfx_aten_arg){.kind = HFX_ARG_DEFAULT}, a[5] = (hfx_aten_arg){.kind = HFX_ARG_DEFAULT};
        a[6] = hfx_arg_float(at->f0);
        a[7] = hfx_arg_bool(q->dims[1].c != k->dims[1].c);
        out_call(l, n, HFX_ATEN_SDPA, a, 8);
        return;
    }
    case HFX_OP_TOP_K: /* the k largest along the last axis, largest first, and their indices */
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->k), a[2] = hfx_arg_int(-1), a[3] = hfx_arg_bool(true);
        a[4] = hfx_arg_bool(true);
        out_call(l, n, HFX_ATEN_TOPK, a, 5);
        l->tensor[n->out[1]->id] = hfx_aten_extra_output(l->p, n->out[1]->dtype, n->out[1]->rank, n->out[1]->dims);
        return;
    case HFX_OP_SCATTER_ELEMENTS:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->axis), a[2] = T(tensor_of(l, n->in[1]));
        a[3] = T(tensor_of(l, n->in[2]));
        out_call(l, n, HFX_ATEN_SCATTER, a, 4);
        return;
    case HFX_OP_GATHER_ELEMENTS:
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(at->axis), a[2] = T(tensor_of(l, n->in[1]));
        out_call(l, n, HFX_ATEN_GATHER, a, 3);
        return;
    case HFX_OP_CACHE_WRITE: /* the update's positions written at the slots, on the cache axis */
        a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(2), a[2] = T(tensor_of(l, n->in[2]));
        a[3] = T(tensor_of(l, n->in[1]));
        out_call(l, n, HFX_ATEN_INDEX_COPY, a, 4);
        return;
    default: fail(l, HFX_ERR_UNSUPPORTED, "torch.export: the IR op '%s' is not lowered yet", hfx_op_name(n->op));
    }
}

bool hfx_aten_keeps(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    return n->op == HFX_OP_LINEAR || (n->op == HFX_OP_ATTENTION && n->attrs.f1 == 0 && n->n_in == 4); /* SDPA: no sinks */
}

hfx_status hfx_aten_lower(const hfx_graph *g, const int64_t *hints, bool returns_updated_state,
                          hfx_aten_program **out, hfx_error *err) {
    *out = NULL;
    lowering l = {.g = g, .err = err};
    l.p = hfx_aten_program_new(g, hints);
    l.tensor = malloc((size_t)(g->n_values ? g->n_values : 1) * sizeof *l.tensor);
    l.shape = calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *l.shape);
    l.symbol = malloc(sizeof(int) * 16);
    if (!l.p || !l.tensor || !l.shape || !l.symbol) {
        hfx_aten_program_free(l.p);
        free(l.tensor), free(l.shape), free(l.symbol);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_values; i++) l.tensor[i] = -1;
    for (int s = 0; s < 16; s++) l.symbol[s] = -1;
    /* a growing cache is plain inputs and outputs; state written back whole is the new content
     * of its input (the caller's tensor is updated by the call) */
    for (int i = 0; i < g->n_inputs && !l.st; i++) {
        const hfx_value *v = g->inputs[i];
        l.tensor[v->id] = hfx_aten_user_input(l.p, v->name, v->dtype, v->rank, v->dims);
    }
    for (int i = 0; i < g->n_nodes && !l.st && !l.p->oom; i++) {
        lower_node(&l, g->nodes[i]);
        if (l.st == HFX_ERR_INTERNAL) hfx_error_prefix(err, "lowering %s", hfx_op_name(g->nodes[i]->op));
    }
    for (int i = 0; i < g->n_outputs && !l.st; i++) {
        const hfx_state *state = hfx_graph_state_of(g, g->outputs[i], false);
        int mutated = state && state->update != HFX_STATE_APPEND && state->in ? l.tensor[state->in->id] : -1;
        int value = tensor_of(&l, g->outputs[i]);
        hfx_aten_output(l.p, value, mutated);
        if (mutated >= 0 && returns_updated_state) hfx_aten_output(l.p, value, -1);
    }
    free(l.tensor), free(l.shape), free(l.symbol);
    /* a failed allocation leaves values unmade, which later steps report as missing: the
     * allocation is the cause */
    if (l.p->oom) l.st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (l.st) {
        hfx_aten_program_free(l.p);
        return l.st;
    }
    *out = l.p;
    return HFX_OK;
}

void hfx_aten_default_hints(const hfx_graph *g, int64_t *hints) {
    for (int s = 0; s < g->n_symbols; s++) {
        int64_t h = s == 0 ? 2 : 16;
        if (h < g->symbols[s].min) h = g->symbols[s].min;
        if (h > g->symbols[s].max) h = g->symbols[s].max;
        hints[s] = h;
    }
}
