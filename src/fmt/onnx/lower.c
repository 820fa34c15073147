/* IR → ONNX nodes. Each IR op becomes one or a few standard ONNX ops; high-level ops
 * (linear, rms_norm, attention) are decomposed here the way transformers' eager code computes
 * them, so that ONNX Runtime reproduces its numbers. */
#include "fmt/onnx/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/onnx/onnx_proto.h"
#include "fmt/onnx/pb.h"

int hfx_onnx_dtype(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_F32: return ONNX_FLOAT;
    case HFX_DTYPE_F16: return ONNX_FLOAT16;
    case HFX_DTYPE_BF16: return ONNX_BFLOAT16;
    case HFX_DTYPE_F64: return ONNX_DOUBLE;
    case HFX_DTYPE_I64: return ONNX_INT64;
    case HFX_DTYPE_I32: return ONNX_INT32;
    case HFX_DTYPE_I16: return ONNX_INT16;
    case HFX_DTYPE_I8: return ONNX_INT8;
    case HFX_DTYPE_U8: return ONNX_UINT8;
    case HFX_DTYPE_BOOL: return ONNX_BOOL;
    case HFX_DTYPE_I4: return ONNX_INT4;
    case HFX_DTYPE_U4: return ONNX_UINT4;
    default: return 0;
    }
}


static const char *tmp_name(onnx_model *m) {
    return hfx_arena_printf(m->arena, "/t%d", m->counter++);
}

static onnx_init *add_init(onnx_model *m) {
    if (m->n_inits == m->cap_inits) {
        int cap = m->cap_inits ? m->cap_inits * 2 : 64;
        onnx_init *p = realloc(m->inits, (size_t)cap * sizeof *p);
        if (!p) {
            hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
            return NULL;
        }
        m->inits = p;
        m->cap_inits = cap;
    }
    onnx_init *in = &m->inits[m->n_inits++];
    memset(in, 0, sizeof *in);
    return in;
}

/* An initializer from lowering-time bytes (shape vectors, axes, scalars). */
static const char *inline_const(onnx_model *m, hfx_dtype dt, int rank, const int64_t *shape,
                                const void *data) {
    onnx_init *in = add_init(m);
    if (!in) return "";
    uint64_t n = hfx_dtype_nbytes(dt, hfx_numel(rank, shape));
    uint8_t *copy = hfx_arena_alloc(m->arena, n ? n : 1);
    if (!copy) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return "";
    }
    if (n) memcpy(copy, data, n);
    in->name = hfx_arena_printf(m->arena, "/c%d", m->counter++);
    in->dtype = dt;
    in->rank = rank;
    for (int i = 0; i < rank; i++) in->shape[i] = shape[i];
    in->bytes = copy;
    in->nbytes = n;
    return in->name;
}

static const char *ints_const(onnx_model *m, int n, const int64_t *v) {
    int64_t shape = n;
    return inline_const(m, HFX_DTYPE_I64, 1, &shape, v);
}

static const char *scalar_const(onnx_model *m, hfx_dtype dt, double v) {
    if (dt == HFX_DTYPE_F32) {
        float f = (float)v;
        return inline_const(m, dt, 0, NULL, &f);
    }
    if (dt == HFX_DTYPE_I64) {
        int64_t i = (int64_t)v;
        return inline_const(m, dt, 0, NULL, &i);
    }
    /* other float dtypes: store f32 and cast at run time would cost a node; convert now */
    hfx_init *init = hfx_arena_alloc(m->arena, sizeof *init);
    hfx_init_part *p = hfx_arena_alloc(m->arena, sizeof *p);
    float *f = hfx_arena_alloc(m->arena, sizeof *f);
    if (!init || !p || !f) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return "";
    }
    *f = (float)v;
    *p = (hfx_init_part){.base = (const uint8_t *)f, .src_dtype = HFX_DTYPE_F32};
    *init = (hfx_init){.dtype = dt, .n_parts = 1, .parts = p, .source = "scalar"};
    onnx_init *in = add_init(m);
    if (!in) return "";
    in->name = hfx_arena_printf(m->arena, "/c%d", m->counter++);
    in->dtype = dt;
    in->src = init;
    in->nbytes = hfx_dtype_nbytes(dt, 1);
    return in->name;
}

static const char *init_const(onnx_model *m, const hfx_init *init) {
    for (int i = 0; i < m->n_inits; i++)
        if (m->inits[i].src && hfx_init_same(m->inits[i].src, init)) return m->inits[i].name;
    onnx_init *in = add_init(m);
    if (!in) return "";
    /* checkpoint tensors keep their names when read as-is, so the graph reads like the model */
    bool plain = init->n_parts == 1 && init->parts[0].offset == 0 &&
                 init->parts[0].rank == init->rank &&
                 (init->rank < 2 || init->parts[0].strides[init->rank - 1] == 1);
    bool taken = false;
    for (int i = 0; plain && i < m->n_inits - 1; i++)
        if (strcmp(m->inits[i].name, init->source) == 0) taken = true;
    bool mapped = hfx_init_is_mapped(init);
    in->name = plain && !taken && mapped
                   ? init->source
                   : hfx_arena_printf(m->arena, "%s/%s%d", mapped ? init->source : "",
                                      init->rank == 2 && init->parts[0].strides[1] != 1 ? "T" : "c",
                                      m->counter++);
    in->dtype = init->dtype;
    in->rank = init->rank;
    memcpy(in->shape, init->shape, sizeof in->shape);
    in->src = init;
    in->nbytes = hfx_init_nbytes(init);
    return in->name;
}

static const char *name_of(onnx_model *m, const hfx_value *v) {
    if (!m->names[v->id]) {
        if (v->init) m->names[v->id] = init_const(m, v->init);
        else if (v->name) m->names[v->id] = v->name;
        else m->names[v->id] = hfx_arena_printf(m->arena, "/v%d", v->id);
    }
    return m->names[v->id];
}

/* ---- node emission ---- */

typedef struct attrs {
    hfx_buf buf; /* serialized AttributeProto fields of one node */
} attrs;

static void attr_int(attrs *a, const char *name, int64_t v) {
    hfx_buf t = {0};
    pb_string(&t, ATTR_NAME, name);
    pb_int(&t, ATTR_I, v);
    pb_int(&t, ATTR_TYPE, ATTR_TYPE_INT);
    pb_message(&a->buf, NODE_ATTRIBUTE, &t);
    hfx_buf_free(&t);
}

static void attr_ints(attrs *a, const char *name, int n, const int64_t *v) {
    hfx_buf t = {0};
    pb_string(&t, ATTR_NAME, name);
    for (int i = 0; i < n; i++) pb_int(&t, ATTR_INTS, v[i]);
    pb_int(&t, ATTR_TYPE, ATTR_TYPE_INTS);
    pb_message(&a->buf, NODE_ATTRIBUTE, &t);
    hfx_buf_free(&t);
}

/* Emit one node; `a` may be NULL. Its buffer is consumed. */
static void emit(onnx_model *m, const char *op, int n_in, const char *const *in, const char *out,
                 attrs *a) {
    hfx_buf n = {0};
    for (int i = 0; i < n_in; i++) pb_string(&n, NODE_INPUT, in[i] ? in[i] : "");
    pb_string(&n, NODE_OUTPUT, out);
    pb_string(&n, NODE_NAME, hfx_arena_printf(m->arena, "%s%s", op, out));
    pb_string(&n, NODE_OP_TYPE, op);
    if (a) {
        hfx_buf_append(&n, a->buf.data, a->buf.len);
        hfx_buf_free(&a->buf);
    }
    if (n.oom) hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    pb_message(&m->nodes, GRAPH_NODE, &n);
    hfx_buf_free(&n);
}

static const char *op1(onnx_model *m, const char *op, const char *x, const char *out) {
    if (!out) out = tmp_name(m);
    emit(m, op, 1, &x, out, NULL);
    return out;
}

static const char *op2(onnx_model *m, const char *op, const char *a, const char *b,
                       const char *out) {
    const char *in[2] = {a, b};
    if (!out) out = tmp_name(m);
    emit(m, op, 2, in, out, NULL);
    return out;
}

static const char *cast(onnx_model *m, const char *x, hfx_dtype to, const char *out) {
    attrs a = {0};
    attr_int(&a, "to", hfx_onnx_dtype(to));
    if (!out) out = tmp_name(m);
    emit(m, "Cast", 1, &x, out, &a);
    return out;
}

static const char *unsqueeze(onnx_model *m, const char *x, int64_t axis, const char *out) {
    return op2(m, "Unsqueeze", x, ints_const(m, 1, &axis), out);
}

/* Reshape with a constant shape vector: a symbolic target dim is written as 0 (copy the input
 * dim at the same index) when it matches that dim, or as -1 for at most one remaining dim. */
static const char *reshape(onnx_model *m, const char *x, const hfx_value *in, int rank,
                           const hfx_dim *dims, const char *out) {
    int64_t shape[HFX_MAX_RANK];
    int source[HFX_MAX_RANK];
    if (hfx_reshape_plan(in, rank, dims, shape, source) <= 1) return op2(m, "Reshape", x, ints_const(m, rank, shape), out);
    /* symbolic dims that moved: build the target shape at run time from the input's */
    const char *shape_of = op1(m, "Shape", x, NULL), *pieces[HFX_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        if (hfx_dim_is_const(dims[i])) {
            pieces[i] = ints_const(m, 1, &dims[i].c);
            continue;
        }
        if (source[i] < 0) {
            hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "onnx: reshape to a dim the input does not have");
            return "";
        }
        int64_t j = source[i];
        attrs ga = {0};
        attr_int(&ga, "axis", 0);
        const char *gin[2] = {shape_of, ints_const(m, 1, &j)};
        pieces[i] = tmp_name(m);
        emit(m, "Gather", 2, gin, pieces[i], &ga);
    }
    attrs ca = {0};
    attr_int(&ca, "axis", 0);
    const char *target = tmp_name(m);
    emit(m, "Concat", rank, pieces, target, &ca);
    return op2(m, "Reshape", x, target, out);
}

static const char *reduce(onnx_model *m, const char *op, const char *x, int n,
                          const int64_t *axes, const char *out) {
    attrs a = {0};
    attr_int(&a, "keepdims", 1);
    if (!out) out = tmp_name(m);
    if (m->opset >= 18) {
        const char *in[2] = {x, ints_const(m, n, axes)};
        emit(m, op, 2, in, out, &a);
    } else {
        attr_ints(&a, "axes", n, axes);
        emit(m, op, 1, &x, out, &a);
    }
    return out;
}

/* ---- high-level ops ---- */

/* A weight the graph already stores as it is (a tied LM head reading the embedding table): Gemm
 * with transB on that one initializer, over x flattened to 2-D, instead of a transposed second
 * copy — for Qwen3-0.6B's tied head that is 600 MB less to write. */
static bool linear_on_stored(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_init *w = n->in[1]->init;
    const char *stored = NULL;
    for (int i = 0; i < m->n_inits && !stored; i++)
        if (m->inits[i].src && hfx_init_same(m->inits[i].src, w)) stored = m->inits[i].name;
    if (!stored) return false;
    const hfx_value *xv = n->in[0];
    int64_t in = w->shape[1], outf = w->shape[0], flat[2] = {-1, in}, zero = 0, last = -1;
    const char *x = name_of(m, xv);
    const char *x2 = op2(m, "Reshape", x, ints_const(m, 2, flat), NULL);
    attrs ga = {0};
    attr_int(&ga, "transB", 1);
    const char *gin[3] = {x2, stored, n->n_in == 3 ? name_of(m, n->in[2]) : NULL};
    const char *y2 = tmp_name(m);
    emit(m, "Gemm", n->n_in == 3 ? 3 : 2, gin, y2, &ga);
    /* back to [..., out]: x's leading dims, then out */
    const char *sin[3] = {op1(m, "Shape", x, NULL), ints_const(m, 1, &zero), ints_const(m, 1, &last)};
    const char *lead = tmp_name(m);
    emit(m, "Slice", 3, sin, lead, NULL);
    const char *cin[2] = {lead, ints_const(m, 1, &outf)};
    attrs ca = {0};
    attr_int(&ca, "axis", 0);
    const char *shape = tmp_name(m);
    emit(m, "Concat", 2, cin, shape, &ca);
    op2(m, "Reshape", y2, shape, out);
    return true;
}

static void lower_linear(onnx_model *m, const hfx_node *n, const char *out) {
    if (linear_on_stored(m, n, out)) return;
    /* MatMul against the weight transposed to [in, out]: the transpose is a view, done while
     * the bytes stream out, never in the graph */
    const hfx_init *w = n->in[1]->init;
    hfx_init *t = hfx_arena_alloc(m->arena, sizeof *t);
    hfx_init_part *p = hfx_arena_alloc(m->arena, sizeof *p);
    if (!t || !p || w->n_parts != 1 || w->rank != 2) {
        hfx_fail_once(&m->st, m->err, t && p ? HFX_ERR_INTERNAL : HFX_ERR_NOMEM, "onnx: cannot transpose weight '%s'", w->source);
        return;
    }
    /* the view's last axis is the in-features; its leading axes (one, or more for an
     * interleaved view) enumerate the out-features: move the last axis to the front */
    *t = *w;
    const hfx_init_part *q = &w->parts[0];
    *p = *q;
    int r = q->rank;
    p->shape[0] = q->shape[r - 1];
    p->strides[0] = q->strides[r - 1];
    for (int d = 1; d < r; d++) {
        p->shape[d] = q->shape[d - 1];
        p->strides[d] = q->strides[d - 1];
    }
    t->parts = p;
    t->shape[0] = w->shape[1];
    t->shape[1] = w->shape[0];
    const char *x = name_of(m, n->in[0]);
    if (n->n_in == 3) {
        const char *y = op2(m, "MatMul", x, init_const(m, t), NULL);
        op2(m, "Add", y, name_of(m, n->in[2]), out);
    } else {
        op2(m, "MatMul", x, init_const(m, t), out);
    }
}

static void lower_rms_norm(onnx_model *m, const hfx_node *n, const char *out) {
    /* transformers: x32 = x.float(); x32 * rsqrt(mean(x32²) + eps), cast back, times weight.
     * Written as Pow(x, 2) → ReduceMean → Add → Sqrt → Div(x, ·) → Mul(weight), the form ONNX
     * Runtime's optimizer fuses into one SimplifiedLayerNormalization kernel (and, with the
     * residual Add before it, SkipSimplifiedLayerNormalization); x / sqrt(v) and x · rsqrt(v)
     * differ by an ulp. */
    hfx_dtype dt = n->in[0]->dtype;
    const char *x = name_of(m, n->in[0]);
    if (dt != HFX_DTYPE_F32) x = cast(m, x, HFX_DTYPE_F32, NULL);
    int64_t axis = -1;
    const char *var = reduce(m, "ReduceMean", op2(m, "Pow", x, scalar_const(m, HFX_DTYPE_F32, 2.0), NULL), 1, &axis, NULL);
    const char *denom = op1(m, "Sqrt", op2(m, "Add", var, scalar_const(m, HFX_DTYPE_F32, n->attrs.f0), NULL), NULL);
    const char *y = op2(m, "Div", x, denom, NULL);
    const char *w = name_of(m, n->in[1]);
    if (n->attrs.f1 != 0) { /* Gemma: (offset + w) in float32, product in float32 */
        w = op2(m, "Add", dt != HFX_DTYPE_F32 ? cast(m, w, HFX_DTYPE_F32, NULL) : w,
                scalar_const(m, HFX_DTYPE_F32, n->attrs.f1), NULL);
        y = op2(m, "Mul", y, w, dt != HFX_DTYPE_F32 ? NULL : out);
        if (dt != HFX_DTYPE_F32) cast(m, y, dt, out);
        return;
    }
    if (dt != HFX_DTYPE_F32) y = cast(m, y, dt, NULL);
    op2(m, "Mul", w, y, out);
}

static void lower_attention(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_value *q = n->in[0], *k = n->in[1], *v = n->in[2];
    hfx_dtype dt = q->dtype;
    int64_t heads = q->dims[1].c, kv = k->dims[1].c, group = heads / kv;
    const char *qn = name_of(m, q), *kn = name_of(m, k), *vn = name_of(m, v),
               *bias = name_of(m, n->in[3]);
    int rank = 4;
    if (group > 1) { /* [B,H,S,D] → [B,KV,G,S,D]; k, v, bias get a broadcast axis at 2 */
        int64_t shape[5] = {0, kv, group, -1, q->dims[3].c};
        qn = op2(m, "Reshape", qn, ints_const(m, 5, shape), NULL);
        kn = unsqueeze(m, kn, 2, NULL);
        vn = unsqueeze(m, vn, 2, NULL);
        bias = unsqueeze(m, bias, 2, NULL);
        rank = 5;
    }
    attrs a = {0};
    int64_t perm[5] = {0, 1, 2, 3, 4};
    perm[rank - 2] = rank - 1;
    perm[rank - 1] = rank - 2;
    attr_ints(&a, "perm", rank, perm);
    const char *kt = tmp_name(m);
    emit(m, "Transpose", 1, &kn, kt, &a);
    const char *s = op2(m, "Mul", op2(m, "MatMul", qn, kt, NULL), scalar_const(m, dt, n->attrs.f0), NULL);
    if (n->attrs.f1 > 0) {
        const char *cap = scalar_const(m, dt, n->attrs.f1);
        s = op2(m, "Mul", op1(m, "Tanh", op2(m, "Div", s, cap, NULL), NULL), cap, NULL);
    }
    if (dt != HFX_DTYPE_F32) s = cast(m, s, HFX_DTYPE_F32, NULL);
    s = op2(m, "Add", s, bias, NULL);
    attrs sa = {0};
    attr_int(&sa, "axis", -1);
    const char *p = tmp_name(m);
    emit(m, "Softmax", 1, &s, p, &sa);
    if (dt != HFX_DTYPE_F32) p = cast(m, p, dt, NULL);
    if (group > 1) {
        const char *o = op2(m, "MatMul", p, vn, NULL);
        int64_t shape[4] = {0, heads, -1, v->dims[3].c};
        op2(m, "Reshape", o, ints_const(m, 4, shape), out);
    } else {
        op2(m, "MatMul", p, vn, out);
    }
}

/* TopK over the last axis (largest, sorted: ties keep the lower index): both outputs. */
static void top_k(onnx_model *m, const char *x, int64_t k, const char **vals, const char **idx) {
    const char *in[2] = {x, ints_const(m, 1, &k)};
    *vals = tmp_name(m);
    *idx = tmp_name(m);
    hfx_buf nb = {0};
    for (int i = 0; i < 2; i++) pb_string(&nb, NODE_INPUT, in[i]);
    pb_string(&nb, NODE_OUTPUT, *vals);
    pb_string(&nb, NODE_OUTPUT, *idx);
    pb_string(&nb, NODE_NAME, hfx_arena_printf(m->arena, "TopK%s", *vals));
    pb_string(&nb, NODE_OP_TYPE, "TopK");
    attrs ta = {0};
    attr_int(&ta, "axis", -1);
    hfx_buf_append(&nb, ta.buf.data, ta.buf.len);
    hfx_buf_free(&ta.buf);
    if (nb.oom) hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    pb_message(&m->nodes, GRAPH_NODE, &nb);
    hfx_buf_free(&nb);
}

/* ---- the op table ---- */

static const char *simple_op(hfx_op op) {
    switch (op) {
    case HFX_OP_ADD: return "Add";
    case HFX_OP_SUB: return "Sub";
    case HFX_OP_MUL: return "Mul";
    case HFX_OP_DIV: return "Div";
    case HFX_OP_POW: return "Pow";
    case HFX_OP_MIN: return "Min";
    case HFX_OP_MAX: return "Max";
    case HFX_OP_EQUAL: return "Equal";
    case HFX_OP_LESS: return "Less";
    case HFX_OP_LESS_EQUAL: return "LessOrEqual";
    case HFX_OP_GREATER: return "Greater";
    case HFX_OP_GREATER_EQUAL: return "GreaterOrEqual";
    case HFX_OP_AND: return "And";
    case HFX_OP_OR: return "Or";
    case HFX_OP_WHERE: return "Where";
    case HFX_OP_NEG: return "Neg";
    case HFX_OP_NOT: return "Not";
    case HFX_OP_SQRT: return "Sqrt";
    case HFX_OP_RECIPROCAL: return "Reciprocal";
    case HFX_OP_EXP: return "Exp";
    case HFX_OP_LOG: return "Log";
    case HFX_OP_SIGMOID: return "Sigmoid";
    case HFX_OP_TANH: return "Tanh";
    case HFX_OP_ERF: return "Erf";
    case HFX_OP_COS: return "Cos";
    case HFX_OP_SIN: return "Sin";
    case HFX_OP_MATMUL: return "MatMul";
    case HFX_OP_GATHER: return "Gather";
    case HFX_OP_SHAPE: return "Shape";
    case HFX_OP_RANGE: return "Range";
    default: return NULL;
    }
}

static void lower_node(onnx_model *m, const hfx_node *n) {
    const char *out = name_of(m, n->out);
    const hfx_attrs *at = &n->attrs;
    /* the high-level ops name their own inputs: linear's weight is stored transposed, so its
     * untransposed view must not become an initializer */
    switch (n->op) {
    case HFX_OP_LINEAR: lower_linear(m, n, out); return;
    case HFX_OP_RMS_NORM: lower_rms_norm(m, n, out); return;
    case HFX_OP_ATTENTION: lower_attention(m, n, out); return;
    default: break;
    }
    const char *in[16];
    for (int i = 0; i < n->n_in; i++) in[i] = n->in[i] ? name_of(m, n->in[i]) : "";
    const char *simple = simple_op(n->op);
    if (simple) {
        attrs a = {0};
        if (n->op == HFX_OP_GATHER) attr_int(&a, "axis", at->axis);
        emit(m, simple, n->n_in, in, out, n->op == HFX_OP_GATHER ? &a : NULL);
        return;
    }
    attrs a = {0};
    switch (n->op) {
    case HFX_OP_CAST: cast(m, in[0], at->to, out); return;
    case HFX_OP_SOFTMAX:
        attr_int(&a, "axis", at->axis);
        emit(m, "Softmax", 1, in, out, &a);
        return;
    case HFX_OP_REDUCE_MEAN: reduce(m, "ReduceMean", in[0], at->n_ints, at->ints, out); return;
    case HFX_OP_REDUCE_MAX: reduce(m, "ReduceMax", in[0], at->n_ints, at->ints, out); return;
    case HFX_OP_REDUCE_SUM: { /* ReduceSum has taken axes as an input since opset 13 */
        const char *rin[2] = {in[0], ints_const(m, at->n_ints, at->ints)};
        attr_int(&a, "keepdims", 1);
        emit(m, "ReduceSum", 2, rin, out, &a);
        return;
    }
    case HFX_OP_RESHAPE: reshape(m, in[0], n->in[0], at->rank, at->dims, out); return;
    case HFX_OP_TRANSPOSE:
        attr_ints(&a, "perm", at->n_ints, at->ints);
        emit(m, "Transpose", 1, in, out, &a);
        return;
    case HFX_OP_UNSQUEEZE: op2(m, "Unsqueeze", in[0], ints_const(m, at->n_ints, at->ints), out); return;
    case HFX_OP_CONCAT:
        attr_int(&a, "axis", at->axis);
        emit(m, "Concat", n->n_in, in, out, &a);
        return;
    case HFX_OP_SLICE: {
        const char *sin[4] = {in[0], ints_const(m, 1, &at->start), ints_const(m, 1, &at->end),
                              ints_const(m, 1, &at->axis)};
        emit(m, "Slice", 4, sin, out, NULL);
        return;
    }
    case HFX_OP_CUMSUM: op2(m, "CumSum", in[0], scalar_const(m, HFX_DTYPE_I64, (double)at->axis), out); return;
    case HFX_OP_TOP_K: {
        const char *vals, *idx;
        top_k(m, in[0], at->start, &vals, &idx);
        op1(m, "Identity", at->end ? idx : vals, out);
        return;
    }
    case HFX_OP_TOP_K_MASK: {
        /* TopK scattered back into zeros */
        const char *vals, *idx;
        top_k(m, in[0], at->start, &vals, &idx);
        const char *zeros = op2(m, "Mul", in[0], scalar_const(m, HFX_DTYPE_F32, 0.0), NULL);
        const char *sin[3] = {zeros, idx, vals};
        attr_int(&a, "axis", -1);
        emit(m, "ScatterElements", 3, sin, out, &a);
        return;
    }
    case HFX_OP_CACHE_WRITE: {
        /* ScatterElements(axis 2) with indices[b,h,s,d] = slots[s]; it checks the bounds, so a
         * slot past the cache end is a runtime error, never an overwrite */
        int64_t shape4[4] = {1, 1, -1, 1};
        const char *idx = op2(m, "Reshape", in[2], ints_const(m, 4, shape4), NULL);
        idx = op2(m, "Expand", idx, op1(m, "Shape", in[1], NULL), NULL);
        const char *sin[3] = {in[0], idx, in[1]};
        attr_int(&a, "axis", 2);
        emit(m, "ScatterElements", 3, sin, out, &a);
        return;
    }
    default:
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: no lowering for IR op '%s'", hfx_op_name(n->op));
    }
}

hfx_status hfx_onnx_lower(const hfx_graph *g, int opset, onnx_model *m, hfx_error *err) {
    memset(m, 0, sizeof *m);
    m->err = err;
    m->opset = opset;
    m->arena = hfx_arena_new();
    m->names = calloc((size_t)g->n_values + 1, sizeof *m->names);
    if (!m->arena || !m->names) return hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes && !m->st; i++) lower_node(m, g->nodes[i]);
    for (int i = 0; i < g->n_outputs && !m->st; i++) {
        /* an output that is not produced by a node (an input or a constant) needs an Identity */
        const hfx_value *v = g->outputs[i];
        if (!v->producer || strcmp(name_of(m, v), v->name) != 0) op1(m, "Identity", name_of(m, v), v->name);
    }
    if (m->nodes.oom) hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    return m->st;
}

void hfx_onnx_model_free(onnx_model *m) {
    hfx_buf_free(&m->nodes);
    free(m->inits);
    free(m->names);
    hfx_arena_free(m->arena);
    memset(m, 0, sizeof *m);
}
