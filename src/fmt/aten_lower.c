/* IR → ATen (aten_lower.h). Every IR value becomes a tensor value of the program and/or, when
 * it is i64 shape arithmetic, a list of sizes (constants or SymInt values) known at lowering
 * time: Shape gives sizes, Gather/Unsqueeze/Concat/Add/Sub/Mul of sizes give sizes, and Range,
 * Reshape and Expand read them as SymInt arguments. A size list is turned into a tensor only
 * where a tensor op reads it (scalar_tensor). The op table (`rules`, op_table.h) says which ATen
 * operator each IR op becomes and holds its lowering. */
#include "fmt/aten_lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/op_table.h"

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
    bool dequantize;  /* quantized weights as stored codes and scales dequantized in the graph (HFX_ATEN_DEQUANTIZE) */
    hfx_status st;
    hfx_error *err;
} lowering;

static bool fail(lowering *l, hfx_status st, const char *fmt, const char *what) {
    if (!l->st) l->st = hfx_fail(l->err, st, fmt, what);
    return false;
}

static hfx_aten_arg T(int v) { return hfx_arg_tensor(v); }

/* ---- symbols and sizes ---- */

static hfx_aten_size dim_size(lowering *l, hfx_dim d);

/* The SymInt of symbol `s`: the size of a user input axis that is exactly that symbol, or (derived) ⌊of / div⌋ + add
 * of theirs. */
static int symbol_value(lowering *l, int s) {
    if (l->symbol[s] >= 0) return l->symbol[s];
    const hfx_symbol *sym = &l->g->symbols[s];
    if (sym->div > 0) {
        hfx_dim quot = {.c = -sym->add, .n = 1, .sym = {s}, .coef = {1}}; /* (each SymInt's expression, as a dim) */
        int q = hfx_aten_sym_op(l->p, HFX_SYM_FLOORDIV, dim_size(l, sym->of), (hfx_aten_size){-1, sym->div}, quot);
        return l->symbol[s] = sym->add ? hfx_aten_sym_op(l->p, HFX_SYM_ADD, (hfx_aten_size){q, 0},
                                                         (hfx_aten_size){-1, sym->add}, hfx_dim_sym(s))
                                       : q;
    }
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
        /* a checkpoint tensor: a parameter, once per tensor (an index table is no parameter: parameters take gradients,
         * which torch allows floats alone; it is a constant) */
        if (plain_view(init) && hfx_dtype_is_float(v->dtype)) {
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

/* ---- the op table ---- */

typedef struct aten_rule aten_rule;
/* The lowerings the table names: r is the node's row (its ATen operator). */
typedef void aten_lower_fn(lowering *l, const hfx_node *n, const aten_rule *r);

/* A row of the table: its op's support, the ATen operator of a lowering that calls one with
 * the node's inputs, and, lowered, its lowering. */
struct aten_rule {
    hfx_op_support s;
    hfx_aten_op aten;
    aten_lower_fn *lower;
};

/* The row's operator over the node's inputs as tensors. aten.div divides integers into floats;
 * the IR's integer division keeps integers (its operands are never negative, so flooring is
 * truncating). */
static void tensors(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[HFX_ATEN_MAX_ARGS];
    const hfx_value *o = n->out[0];
    for (int i = 0; i < n->n_in; i++) a[i] = T(tensor_of(l, n->in[i]));
    bool int_div = n->op == HFX_OP_DIV && (o->dtype == HFX_DTYPE_I64 || o->dtype == HFX_DTYPE_I32);
    out_call(l, n, int_div ? HFX_ATEN_FLOOR_DIVIDE : r->aten, a, n->n_in);
}

/* The row's operator over (x, axis). */
static void tensor_axis(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[2] = {T(tensor_of(l, n->in[0])), hfx_arg_int(n->attrs.axis)};
    out_call(l, n, r->aten, a, 2);
}

static void lower_cast(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[2] = {T(tensor_of(l, n->in[0])), {.kind = HFX_ARG_DTYPE, .dtype = n->attrs.to}};
    out_call(l, n, r->aten, a, 2);
}

/* A scalar tensor of value c and dtype dt. */
static int scalar(lowering *l, int64_t c, hfx_dtype dt) {
    hfx_aten_arg a[2] = {hfx_arg_int(c), {.kind = HFX_ARG_DTYPE, .dtype = dt}};
    return hfx_aten_call(l->p, HFX_ATEN_SCALAR_TENSOR, a, 2, dt, 0, NULL);
}

/* 4-bit codes stored two a byte offset by 8, low nibble first ([rows, cols / 2] uint8: the torchao rule's layout), as
 * one signed int8 code a byte [rows, cols]: hi = c // 16, lo = c − 16·hi, interleaved, each minus 8. */
static int unpacked_codes(lowering *l, int packed, int64_t rows, int64_t cols) {
    hfx_aten_program *p = l->p;
    hfx_dim half[3] = {hfx_dim_const(rows), hfx_dim_const(cols / 2), hfx_dim_const(1)};
    int sixteen = scalar(l, 16, HFX_DTYPE_U8);
    hfx_aten_arg d[2] = {T(packed), T(sixteen)};
    int hi = hfx_aten_call(p, HFX_ATEN_FLOOR_DIVIDE, d, 2, HFX_DTYPE_U8, 2, half);
    hfx_aten_arg m[2] = {T(hi), T(sixteen)};
    hfx_aten_arg s[2] = {T(packed), T(hfx_aten_call(p, HFX_ATEN_MUL, m, 2, HFX_DTYPE_U8, 2, half))};
    int lo = hfx_aten_call(p, HFX_ATEN_SUB, s, 2, HFX_DTYPE_U8, 2, half);
    int *pair = hfx_arena_alloc(p->arena, 2 * sizeof *pair);
    if (!pair) {
        p->oom = true;
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        hfx_aten_arg u[2] = {T(k ? hi : lo), hfx_arg_int(2)};
        pair[k] = hfx_aten_call(p, HFX_ATEN_UNSQUEEZE, u, 2, HFX_DTYPE_U8, 3, half);
    }
    hfx_dim both[3] = {half[0], half[1], hfx_dim_const(2)}, shape[2] = {half[0], hfx_dim_const(cols)};
    hfx_aten_arg c[2] = {{.kind = HFX_ARG_TENSORS, .values = pair, .n = 2}, hfx_arg_int(2)};
    hfx_aten_size size[2] = {{-1, rows}, {-1, cols}};
    hfx_aten_arg v[2] = {T(hfx_aten_call(p, HFX_ATEN_CAT, c, 2, HFX_DTYPE_U8, 3, both)), hfx_arg_sizes(p, 2, size)};
    hfx_aten_arg t[2] = {T(hfx_aten_call(p, HFX_ATEN_VIEW, v, 2, HFX_DTYPE_U8, 2, shape)),
                         {.kind = HFX_ARG_DTYPE, .dtype = HFX_DTYPE_I8}};
    hfx_aten_arg z[2] = {T(hfx_aten_call(p, HFX_ATEN_TO_COPY, t, 2, HFX_DTYPE_I8, 2, shape)),
                         T(scalar(l, 8, HFX_DTYPE_I8))};
    return hfx_aten_call(p, HFX_ATEN_SUB, z, 2, HFX_DTYPE_I8, 2, shape);
}

/* A linear's weight w [out, in] stored quantized, as PT2E's weight-only programs read theirs: signed int8 or int4 codes
 * (int4 stored two a byte and unpacked in the program) and float32 scales per output channel (with int64 zero points
 * of 0) or per group along the input (symmetric), dequantized by quantized_decomposed into w's dtype. Asymmetric
 * weights are refused. */
static int dequantized_weight(lowering *l, const hfx_node *n) {
    const hfx_quant *q = n->attrs.quant;
    const hfx_value *w = n->in[1];
    int64_t rows = w->rank == 2 ? w->dims[0].c : 0, cols = w->rank == 2 ? w->dims[1].c : 0;
    if (!w->init || w->rank != 2 || (q->bits != 8 && q->bits != 4) || !q->symmetric ||
        q->scale_dtype != HFX_DTYPE_F32 || cols % 2) {
        fail(l, HFX_ERR_UNSUPPORTED, "dynamo: '%s' is quantized as torch.export's programs are not written yet: "
                                     "symmetric int8 and int4 weights are (--sym)",
             w->init ? w->init->source : "a linear's weight");
        return -1;
    }
    int64_t blocks = hfx_quant_blocks(q, cols);
    bool per_channel = blocks == 1, nibbles = q->bits == 4;
    const hfx_init *codes = hfx_quant_init(l->p->arena, w->init, q, HFX_QUANT_CODES);
    const hfx_init *scales = hfx_quant_init(l->p->arena, w->init, q, HFX_QUANT_SCALES);
    /* zero points: a row's 0 per channel (inductor's lowering reads them); none in groups (PT2E's op takes None) */
    uint8_t *zeros = per_channel ? hfx_arena_alloc(l->p->arena, (size_t)rows * sizeof(int64_t)) : NULL;
    if (!codes || !scales || (per_channel && !zeros)) {
        l->p->oom = true;
        return -1;
    }
    if (zeros) memset(zeros, 0, (size_t)rows * sizeof(int64_t));
    hfx_dim shape[2] = {hfx_dim_const(rows), hfx_dim_const(cols)}, stored[2] = {shape[0], hfx_dim_const(cols / 2)};
    hfx_dim per[2] = {shape[0], hfx_dim_const(blocks)};
    int code = nibbles ? unpacked_codes(l, hfx_aten_constant(l->p, HFX_DTYPE_U8, 2, stored, codes, NULL), rows, cols)
                       : hfx_aten_constant(l->p, HFX_DTYPE_I8, 2, shape, codes, NULL);
    hfx_aten_arg a[8] = {T(code), T(hfx_aten_constant(l->p, HFX_DTYPE_F32, per_channel ? 1 : 2, per, scales, NULL)),
                         zeros ? T(hfx_aten_constant(l->p, HFX_DTYPE_I64, 1, per, NULL, zeros))
                               : (hfx_aten_arg){.kind = HFX_ARG_NONE}};
    int k = 3;
    if (per_channel) a[k++] = hfx_arg_int(0); /* axis */
    a[k++] = hfx_arg_int(nibbles ? -8 : -128), a[k++] = hfx_arg_int(nibbles ? 7 : 127);
    a[k++] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = HFX_DTYPE_I8};
    if (!per_channel) a[k++] = hfx_arg_int(hfx_quant_block_size(q, cols));
    a[k++] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = w->dtype}; /* out_dtype, output_dtype */
    return hfx_aten_call(l->p, per_channel ? HFX_QD_DEQUANTIZE_PER_CHANNEL : HFX_QD_DEQUANTIZE_PER_CHANNEL_GROUP, a, k,
                         w->dtype, 2, shape);
}

static void lower_linear(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[3];
    bool dequantized = l->dequantize && n->attrs.quant;
    a[0] = T(tensor_of(l, n->in[0])), a[1] = T(dequantized ? dequantized_weight(l, n) : tensor_of(l, n->in[1]));
    a[2] = n->n_in > 2 && n->in[2] ? T(tensor_of(l, n->in[2])) : (hfx_aten_arg){.kind = HFX_ARG_DEFAULT};
    if (l->st) return;
    out_call(l, n, r->aten, a, 3);
    if (!dequantized) keep_quant(l, n);
}

/* convolution(x, w, bias?, stride, padding, dilation, transposed, output_padding, groups) over the node's 1 or 2
 * spatial axes */
static void lower_conv(lowering *l, const hfx_node *n, const aten_rule *r) {
    static const int64_t ones[2] = {1, 1}, zeros[2] = {0, 0};
    int rank = n->attrs.rank;
    int64_t stride[2], padding[2];
    for (int i = 0; i < rank; i++) stride[i] = n->attrs.ints[1 + 2 * i], padding[i] = n->attrs.ints[2 + 2 * i];
    hfx_aten_arg a[9];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
    a[2] = n->n_in > 2 ? T(tensor_of(l, n->in[2])) : (hfx_aten_arg){.kind = HFX_ARG_NONE};
    a[3] = hfx_arg_ints(l->p, rank, stride), a[4] = hfx_arg_ints(l->p, rank, padding);
    a[5] = hfx_arg_ints(l->p, rank, ones), a[6] = hfx_arg_bool(false), a[7] = hfx_arg_ints(l->p, rank, zeros);
    a[8] = hfx_arg_int(n->attrs.ints[0]);
    out_call(l, n, r->aten, a, 9);
}

/* softmax(q·kᵀ·scale + bias)·v, k/v shared by groups of heads */
static void lower_attention(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[8];
    const hfx_value *q = n->in[0], *k = n->in[1];
    for (int i = 0; i < 4; i++) a[i] = T(tensor_of(l, n->in[i]));
    a[4] = (hfx_aten_arg){.kind = HFX_ARG_DEFAULT}, a[5] = (hfx_aten_arg){.kind = HFX_ARG_DEFAULT};
    a[6] = hfx_arg_float(n->attrs.f0);
    a[7] = hfx_arg_bool(q->dims[1].c != k->dims[1].c);
    out_call(l, n, r->aten, a, 8);
}

/* the k largest along the last axis, largest first, and their indices */
static void lower_top_k(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[5];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(n->attrs.k), a[2] = hfx_arg_int(-1), a[3] = hfx_arg_bool(true);
    a[4] = hfx_arg_bool(true);
    out_call(l, n, r->aten, a, 5);
    l->tensor[n->out[1]->id] = hfx_aten_extra_output(l->p, n->out[1]->dtype, n->out[1]->rank, n->out[1]->dims);
}

/* (data, axis, indices[, updates]): gather, scatter */
static void elements(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[4];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(n->attrs.axis), a[2] = T(tensor_of(l, n->in[1]));
    if (n->n_in > 2) a[3] = T(tensor_of(l, n->in[2]));
    out_call(l, n, r->aten, a, n->n_in + 1);
}

static void lower_reduce(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[3];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_ints(l->p, n->attrs.n_ints, n->attrs.ints), a[2] = hfx_arg_bool(true);
    out_call(l, n, r->aten, a, 3);
}

static void lower_reshape(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[2];
    a[0] = T(tensor_of(l, n->in[0]));
    const sizes *s = n->n_in > 1 ? sizes_of(l, n->in[1]) : NULL;
    if (n->n_in > 1 && !s) {
        const hfx_node *from = n->in[1]->producer;
        fail(l, HFX_ERR_UNSUPPORTED, "torch.export: a Reshape to a shape computed by '%s' is not lowered yet",
             from ? hfx_op_name(from->op) : "a graph input");
        return;
    }
    a[1] = s ? hfx_arg_sizes(l->p, s->n, s->s) : dims_arg(l, n->out[0]);
    out_call(l, n, r->aten, a, 2);
}

static void lower_expand(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[2];
    const sizes *s = sizes_of(l, n->in[1]);
    a[0] = T(tensor_of(l, n->in[0]));
    a[1] = s ? hfx_arg_sizes(l->p, s->n, s->s) : dims_arg(l, n->out[0]);
    out_call(l, n, r->aten, a, 2);
}

static void lower_transpose(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[2] = {T(tensor_of(l, n->in[0])), hfx_arg_ints(l->p, n->attrs.n_ints, n->attrs.ints)};
    out_call(l, n, r->aten, a, 2);
}

/* one axis at a time, in increasing order (axes of the output) */
static void lower_unsqueeze(lowering *l, const hfx_node *n, const aten_rule *r) {
    const hfx_attrs *at = &n->attrs;
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
        cur = hfx_aten_call(l->p, r->aten, u, 2, n->out[0]->dtype, rank, dims);
    }
    l->tensor[n->out[0]->id] = cur;
}

static void lower_concat(lowering *l, const hfx_node *n, const aten_rule *r) {
    int *vals = hfx_arena_alloc(l->p->arena, (size_t)n->n_in * sizeof *vals);
    if (!vals) {
        fail(l, HFX_ERR_NOMEM, "%s", "out of memory");
        return;
    }
    for (int i = 0; i < n->n_in; i++) vals[i] = tensor_of(l, n->in[i]);
    hfx_aten_arg a[2] = {{.kind = HFX_ARG_TENSORS, .values = vals, .n = n->n_in}, hfx_arg_int(n->attrs.axis)};
    out_call(l, n, r->aten, a, 2);
}

static void lower_slice(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[4];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(n->attrs.axis), a[2] = hfx_arg_int(n->attrs.start);
    a[3] = hfx_arg_int(n->attrs.end);
    out_call(l, n, r->aten, a, 4);
}

/* A size of value v's dim d: its constant, else the value's own size there at run time. */
static hfx_aten_size size_of(lowering *l, int v, hfx_dim d, int axis) {
    return hfx_dim_is_const(d) ? (hfx_aten_size){-1, d.c} : (hfx_aten_size){hfx_aten_sym_size(l->p, v, axis), 0};
}

/* numpy take of x along `axis` by an index whose count is no affine dim (two dynamic dims): torch.gather over x
 * viewed with the index's leading dims (unsqueezed, then expanded to them) by the index unsqueezed over x's other dims
 * and expanded to the output — out[..., i..., ...] = x[..., idx[i...], ...], every size an input's own. */
static void take_by_gather(lowering *l, const hfx_node *n) {
    const hfx_value *x = n->in[0], *idx = n->in[1], *o = n->out[0];
    int axis = n->attrs.axis, k = idx->rank, rank = o->rank;
    if (rank > HFX_MAX_RANK || rank != x->rank - 1 + k || idx->dtype != HFX_DTYPE_I64) {
        fail(l, HFX_ERR_UNSUPPORTED, "torch.export: a gather by %s with two dynamic dims is not lowered",
             idx->dtype == HFX_DTYPE_I64 ? "an index of that rank" : "a non-int64 index");
        return;
    }
    int xv = tensor_of(l, x), iv = tensor_of(l, idx), from_x[HFX_MAX_RANK], from_i[HFX_MAX_RANK];
    hfx_dim xd[HFX_MAX_RANK], id[HFX_MAX_RANK];
    for (int d = 0; d < rank; d++) { /* output dim d: x's dim from_x[d], or the index's from_i[d] */
        bool index_dim = d >= axis && d < axis + k;
        from_i[d] = index_dim ? d - axis : -1;
        from_x[d] = index_dim ? (d == axis + k - 1 ? axis : -1) : d < axis ? d : d - k + 1;
    }
    /* x [..., 1 × (k-1), x_axis, ...] expanded to [..., idx[:k-1], x_axis, ...]; idx [1 × axis, idx..., 1 ...] to o */
    int xe = xv, ie = iv, xr = x->rank, ir = k;
    memcpy(xd, x->dims, sizeof xd);
    memcpy(id, idx->dims, sizeof id);
    for (int j = 0; j < k - 1; j++) {
        memmove(&xd[axis + 1], &xd[axis], sizeof xd[0] * (size_t)(xr - axis)), xd[axis] = hfx_dim_const(1), xr++;
        hfx_aten_arg u[2] = {T(xe), hfx_arg_int(axis)};
        xe = hfx_aten_call(l->p, HFX_ATEN_UNSQUEEZE, u, 2, x->dtype, xr, xd);
    }
    for (int d = 0; d < rank; d++) {
        if (from_i[d] >= 0) continue;
        memmove(&id[d + 1], &id[d], sizeof id[0] * (size_t)(ir - d)), id[d] = hfx_dim_const(1), ir++;
        hfx_aten_arg u[2] = {T(ie), hfx_arg_int(d)};
        ie = hfx_aten_call(l->p, HFX_ATEN_UNSQUEEZE, u, 2, idx->dtype, ir, id);
    }
    hfx_aten_size xs[HFX_MAX_RANK], is[HFX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        hfx_aten_size keep = {-1, -1};
        xs[d] = from_x[d] >= 0 ? keep : size_of(l, iv, idx->dims[from_i[d]], from_i[d]);
        is[d] = from_i[d] >= 0 ? keep : size_of(l, xv, x->dims[from_x[d]], from_x[d]);
        xd[d] = o->dims[d];
    }
    xd[axis + k - 1] = x->dims[axis];
    hfx_aten_arg ex[2] = {T(xe), hfx_arg_sizes(l->p, rank, xs)}, ei[2] = {T(ie), hfx_arg_sizes(l->p, rank, is)};
    int wide = hfx_aten_call(l->p, HFX_ATEN_EXPAND, ex, 2, x->dtype, rank, xd);
    int where = hfx_aten_call(l->p, HFX_ATEN_EXPAND, ei, 2, idx->dtype, rank, o->dims);
    hfx_aten_arg g[3] = {T(wide), hfx_arg_int(axis + k - 1), T(where)};
    l->tensor[o->id] = hfx_aten_call(l->p, HFX_ATEN_GATHER, g, 3, o->dtype, rank, o->dims);
}

/* rows of a table: an embedding lookup; else numpy take: index_select over the flattened
 * indices, then the output's shape */
static void lower_gather(lowering *l, const hfx_node *n, const aten_rule *r) {
    const hfx_attrs *at = &n->attrs;
    const hfx_value *o = n->out[0];
    hfx_aten_arg a[2];
    if (at->axis == 0 && n->in[0]->rank == 2) {
        if (l->dequantize && n->attrs.quant) {
            fail(l, HFX_ERR_UNSUPPORTED, "dynamo: '%s' is a quantized embedding table, which torch.export's programs "
                                         "do not read yet: keep tables float (--quantize-embeddings none)",
                 n->in[0]->init ? n->in[0]->init->source : "?");
            return;
        }
        a[0] = T(tensor_of(l, n->in[0])), a[1] = T(tensor_of(l, n->in[1]));
        out_call(l, n, r->aten, a, 2);
        keep_quant(l, n);
        return;
    }
    const hfx_value *idx = n->in[1];
    int flat = tensor_of(l, idx);
    hfx_dim numel = hfx_dim_const(1); /* the index count: affine while one dim is symbolic */
    for (int d = 0; d < idx->rank; d++) {
        if (hfx_dim_is_const(idx->dims[d])) numel = hfx_dim_scale(numel, idx->dims[d].c);
        else if (hfx_dim_is_const(numel)) numel = hfx_dim_scale(idx->dims[d], numel.c);
        else { /* (B·S: no affine dim) */
            take_by_gather(l, n);
            return;
        }
    }
    if (idx->rank != 1) {
        hfx_aten_arg f[2] = {T(flat), hfx_arg_ints(l->p, 1, (int64_t[]){-1})};
        flat = hfx_aten_call(l->p, HFX_ATEN_RESHAPE, f, 2, idx->dtype, 1, &numel);
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

/* Shape's output is i64 [rank]: lower_sizes always takes it. */
static void sizes_only(lowering *l, const hfx_node *n, const aten_rule *r) {
    (void)r;
    fail(l, HFX_ERR_INTERNAL, "torch.export: %s is not i64 sizes", hfx_op_name(n->op));
}

static void lower_range(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[4];
    const hfx_value *o = n->out[0];
    const sizes *s[3] = {sizes_of(l, n->in[0]), sizes_of(l, n->in[1]), sizes_of(l, n->in[2])};
    bool unit_step = s[2] && s[2]->s[0].value < 0 && s[2]->s[0].c == 1;
    if ((!s[0] || !s[1]) && unit_step && o->rank == 1) {
        /* from a tensor (a static cache's write counter): arange(length) + start, the length
         * being the output's dim, as transformers' StaticLayer computes its slots */
        a[0] = hfx_arg_int(0), a[1] = size_or_int(dim_size(l, o->dims[0])), a[2] = hfx_arg_int(1);
        a[3] = (hfx_aten_arg){.kind = HFX_ARG_DTYPE, .dtype = o->dtype};
        int steps = hfx_aten_call(l->p, r->aten, a, 4, o->dtype, 1, o->dims);
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
    out_call(l, n, r->aten, a, 4);
}

/* the update's positions written at the slots, on the cache axis */
static void lower_cache_write(lowering *l, const hfx_node *n, const aten_rule *r) {
    hfx_aten_arg a[4];
    a[0] = T(tensor_of(l, n->in[0])), a[1] = hfx_arg_int(2), a[2] = T(tensor_of(l, n->in[2]));
    a[3] = T(tensor_of(l, n->in[1]));
    out_call(l, n, r->aten, a, 4);
}

#define ROW(op, fate, how, aten, lower) {{HFX_OP_##op, HFX_OP_##fate, how}, HFX_ATEN_##aten, lower}

/* Every IR op in torch.export's ATen (the ExecuTorch format's own table, in executorch/lower.c,
 * says what its kernels make of these), in ops.def's order: the operator its node becomes. Shape
 * arithmetic on i64 values (Shape, and Gather, Unsqueeze, Concat, Add, Sub, Mul of sizes) is
 * SymInts first (lower_sizes). */
static const aten_rule rules[] = {
    ROW(ADD, LOWERED, "aten.add.Tensor", ADD, tensors),
    ROW(SUB, LOWERED, "aten.sub.Tensor", SUB, tensors),
    ROW(MUL, LOWERED, "aten.mul.Tensor", MUL, tensors),
    ROW(DIV, LOWERED, "aten.div.Tensor (integers: aten.floor_divide.default)", DIV, tensors),
    ROW(POW, LOWERED, "aten.pow.Tensor_Tensor", POW, tensors),
    ROW(MIN, LOWERED, "aten.minimum.default", MINIMUM, tensors),
    ROW(MAX, LOWERED, "aten.maximum.default", MAXIMUM, tensors),
    ROW(BITWISE_XOR, LOWERED, "aten.bitwise_xor.Tensor", BITWISE_XOR, tensors),
    ROW(EQUAL, LOWERED, "aten.eq.Tensor", EQ, tensors),
    ROW(LESS, LOWERED, "aten.lt.Tensor", LT, tensors),
    ROW(LESS_EQUAL, LOWERED, "aten.le.Tensor", LE, tensors),
    ROW(GREATER, LOWERED, "aten.gt.Tensor", GT, tensors),
    ROW(GREATER_EQUAL, LOWERED, "aten.ge.Tensor", GE, tensors),
    ROW(AND, LOWERED, "aten.logical_and.default", LOGICAL_AND, tensors),
    ROW(OR, LOWERED, "aten.logical_or.default", LOGICAL_OR, tensors),
    ROW(WHERE, LOWERED, "aten.where.self", WHERE, tensors),
    ROW(NEG, LOWERED, "aten.neg.default", NEG, tensors),
    ROW(NOT, LOWERED, "aten.logical_not.default", LOGICAL_NOT, tensors),
    ROW(SQRT, LOWERED, "aten.sqrt.default", SQRT, tensors),
    ROW(RECIPROCAL, LOWERED, "aten.reciprocal.default", RECIPROCAL, tensors),
    ROW(EXP, LOWERED, "aten.exp.default", EXP, tensors),
    ROW(LOG, LOWERED, "aten.log.default", LOG, tensors),
    ROW(SIGMOID, LOWERED, "aten.sigmoid.default", SIGMOID, tensors),
    ROW(TANH, LOWERED, "aten.tanh.default", TANH, tensors),
    ROW(ERF, LOWERED, "aten.erf.default", ERF, tensors),
    ROW(COS, LOWERED, "aten.cos.default", COS, tensors),
    ROW(SIN, LOWERED, "aten.sin.default", SIN, tensors),
    ROW(CAST, LOWERED, "aten._to_copy.default", TO_COPY, lower_cast),
    ROW(MATMUL, LOWERED, "aten.matmul.default", MATMUL, tensors),
    ROW(LINEAR, LOWERED, "aten.linear.default", LINEAR, lower_linear),
    ROW(RMS_NORM, EXPANDED, "aten.pow, aten.mean, aten.add, aten.sqrt, aten.div, aten.mul", COUNT_, NULL),
    ROW(SOFTMAX, LOWERED, "aten.softmax.int", SOFTMAX, tensor_axis),
    ROW(CUMSUM, LOWERED, "aten.cumsum.default", CUMSUM, tensor_axis),
    ROW(CONV, LOWERED, "aten.convolution.default", CONVOLUTION, lower_conv),
    /* where hfx_aten_keeps keeps it (no soft-cap, no sinks); else expanded into matmul, mul,
     * add, softmax, matmul */
    ROW(ATTENTION, LOWERED, "aten.scaled_dot_product_attention.default", SDPA, lower_attention),
    ROW(TOP_K, LOWERED, "aten.topk.default", TOPK, lower_top_k),
    ROW(TOP_K_MASK, EXPANDED, "aten.topk, aten.scatter", COUNT_, NULL),
    ROW(GATHER_ELEMENTS, LOWERED, "aten.gather.default", GATHER, elements),
    ROW(SCATTER_ELEMENTS, LOWERED, "aten.scatter.src", SCATTER, elements),
    ROW(REDUCE_MEAN, LOWERED, "aten.mean.dim", MEAN, lower_reduce),
    ROW(REDUCE_MAX, LOWERED, "aten.amax.default", AMAX, lower_reduce),
    ROW(REDUCE_SUM, LOWERED, "aten.sum.dim_IntList", SUM, lower_reduce),
    ROW(RESHAPE, LOWERED, "aten.reshape.default", RESHAPE, lower_reshape),
    ROW(TRANSPOSE, LOWERED, "aten.permute.default", PERMUTE, lower_transpose),
    ROW(UNSQUEEZE, LOWERED, "aten.unsqueeze.default", UNSQUEEZE, lower_unsqueeze),
    ROW(CONCAT, LOWERED, "aten.cat.default", CAT, lower_concat),
    ROW(SLICE, LOWERED, "aten.slice.Tensor", SLICE, lower_slice),
    /* rows of a table; other gathers: aten.index_select over flattened indices, aten.reshape */
    ROW(GATHER, LOWERED, "aten.embedding.default", EMBEDDING, lower_gather),
    ROW(SHAPE, LOWERED, "aten.sym_size.int", SYM_SIZE, sizes_only),
    ROW(RANGE, LOWERED, "aten.arange.start_step", ARANGE, lower_range),
    ROW(EXPAND, LOWERED, "aten.expand.default", EXPAND, lower_expand),
    ROW(CACHE_WRITE, LOWERED, "aten.index_copy.default", INDEX_COPY, lower_cache_write),
};
HFX_OP_TABLE_COVERS(rules, "torch.export");

#undef ROW

const hfx_op_support *hfx_aten_op_support(hfx_op op) {
    return (unsigned)op < HFX_OP_COUNT_ ? &rules[op].s : NULL;
}

hfx_aten_op hfx_aten_op_of(hfx_op op) {
    return (unsigned)op < HFX_OP_COUNT_ && rules[op].s.fate == HFX_OP_LOWERED ? rules[op].aten : HFX_ATEN_COUNT_;
}

static void lower_node(lowering *l, const hfx_node *n) {
    const aten_rule *r = &rules[n->op];
    if (r->s.fate != HFX_OP_LOWERED) {
        if (!l->st) l->st = hfx_op_not_lowered("torch.export", &r->s, l->err);
        return;
    }
    if (lower_sizes(l, n)) return;
    r->lower(l, n, r);
}

bool hfx_aten_keeps(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    return n->op == HFX_OP_LINEAR || (n->op == HFX_OP_ATTENTION && n->attrs.f1 == 0 && n->n_in == 4); /* SDPA: no sinks */
}

hfx_status hfx_aten_lower(const hfx_graph *g, const int64_t *hints, unsigned flags, hfx_aten_program **out,
                          hfx_error *err) {
    *out = NULL;
    bool returns_updated_state = flags & HFX_ATEN_RETURNS_UPDATED_STATE;
    lowering l = {.g = g, .dequantize = flags & HFX_ATEN_DEQUANTIZE, .err = err};
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
    hfx_aten_derived_hints(g, hints);
}

void hfx_aten_derived_hints(const hfx_graph *g, int64_t *hints) {
    for (int s = 0; s < g->n_symbols; s++) { /* (a derived symbol comes after those it is derived from) */
        const hfx_symbol *d = &g->symbols[s];
        if (d->div <= 0) continue;
        int64_t of = hfx_dim_at(d->of, hints);
        hints[s] = (of > 0 ? of : 0) / d->div + d->add;
    }
}
