/* IR → ONNX nodes. The decomposition pass (ir/decompose.c) has expanded every high-level op
 * except linear, which ONNX keeps: its weight is written transposed (a view, no copy), or a tied
 * head reads the stored embedding through Gemm. Every other IR op is one or a few standard ONNX
 * ops; the op table (`rules`, op_table.h) says which, and holds each op's lowering. */
#include "fmt/onnx/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/onnx/onnx_proto.h"
#include "fmt/onnx/pb.h"
#include "fmt/op_table.h"

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


/* A name the lowering makes; out of memory, the model fails and "" stands in (never NULL). */
static const char *made(onnx_model *m, const char *name) {
    if (name) return name;
    hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    return "";
}

static const char *tmp_name(onnx_model *m) { return made(m, hfx_arena_printf(m->arena, "/t%d", m->counter++)); }

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
    in->name = made(m, hfx_arena_printf(m->arena, "/c%d", m->counter++));
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

static const char *int_scalar(onnx_model *m, int64_t v) { return inline_const(m, HFX_DTYPE_I64, 0, NULL, &v); }

/* The initializer's name: a checkpoint tensor's own when read as-is (so the graph reads like the
 * model), a weight's quantized parts its name with onnxruntime's quantizer's suffixes, others
 * numbered. */
static const char *init_name(onnx_model *m, const hfx_init *init) {
    if (init->quant) { /* the standard form's: onnxruntime's quantizer's QDQ names */
        static const char *const suffix[] = {[HFX_QUANT_CODES] = "_Q%d", [HFX_QUANT_SCALES] = "_scales",
                                             [HFX_QUANT_ZEROS] = "_zero_points"};
        static const char *const dynamic[] = {[HFX_QUANT_CODES] = "_quantized", [HFX_QUANT_SCALES] = "_scale",
                                              [HFX_QUANT_ZEROS] = "_zero_point"}; /* quantize_dynamic's */
        char sfx[32];
        int k = init->quant->layout == HFX_QUANT_COLUMNS && init->quant->rule == HFX_QUANT_RULE_ORT
                    ? snprintf(sfx, sizeof sfx, "_DQ")
                    : 0;
        if (init->quant->rule == HFX_QUANT_RULE_ORT_DYNAMIC) snprintf(sfx, sizeof sfx, "%s", dynamic[init->quant_part]);
        else snprintf(sfx + k, sizeof sfx - (size_t)k, suffix[init->quant_part], init->quant->bits);
        const char *name = hfx_arena_printf(m->arena, "%s%s", init->source, sfx);
        for (int i = 0; name && i < m->n_inits - 1; i++) /* slices of one tensor (fused q/k/v): numbered */
            if (strcmp(m->inits[i].name, name) == 0) {
                name = hfx_arena_printf(m->arena, "%s/%d%s", init->source, m->counter++, sfx);
                i = -1;
            }
        return made(m, name);
    }
    bool plain = init->n_parts == 1 && init->parts[0].offset == 0 &&
                 init->parts[0].rank == init->rank &&
                 (init->rank < 2 || init->parts[0].strides[init->rank - 1] == 1);
    bool taken = false;
    for (int i = 0; plain && i < m->n_inits - 1; i++)
        if (strcmp(m->inits[i].name, init->source) == 0) taken = true;
    for (int i = 0; plain && i < m->g->n_inputs; i++) /* a graph input or output of that name (a weight an output */
        if (strcmp(m->g->inputs[i]->name, init->source) == 0) taken = true; /* is made from: LLaVA-Next's newline) */
    for (int i = 0; plain && i < m->g->n_outputs; i++)
        if (strcmp(m->g->outputs[i]->name, init->source) == 0) taken = true;
    bool mapped = hfx_init_is_mapped(init);
    return plain && !taken && mapped
               ? init->source
               : made(m, hfx_arena_printf(m->arena, "%s/%s%d", mapped ? init->source : "",
                                          init->rank == 2 && init->parts[0].strides[1] != 1 ? "T" : "c",
                                          m->counter++));
}

static const char *init_const(onnx_model *m, const hfx_init *init) {
    for (int i = 0; i < m->n_inits; i++)
        if (m->inits[i].src && hfx_init_same(m->inits[i].src, init)) return m->inits[i].name;
    onnx_init *in = add_init(m);
    if (!in) return "";
    in->name = init_name(m, init);
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
        else m->names[v->id] = made(m, hfx_arena_printf(m->arena, "/v%d", v->id));
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

/* Emit one node with n_out outputs; `a` may be NULL. Its buffer is consumed. An op named
 * "com.microsoft.X" is onnxruntime's contrib op X. */
static void emit_outputs(onnx_model *m, const char *op, int n_in, const char *const *in, int n_out,
                         const char *const *outs, attrs *a) {
    hfx_buf n = {0};
    static const char contrib[] = "com.microsoft.";
    bool is_contrib = strncmp(op, contrib, sizeof contrib - 1) == 0;
    if (is_contrib) {
        op += sizeof contrib - 1;
        m->contrib = true;
    }
    for (int i = 0; i < n_in; i++) pb_string(&n, NODE_INPUT, in[i] ? in[i] : "");
    for (int i = 0; i < n_out; i++) pb_string(&n, NODE_OUTPUT, outs[i]);
    pb_string(&n, NODE_NAME, made(m, hfx_arena_printf(m->arena, "%s%s", op, outs[0])));
    pb_string(&n, NODE_OP_TYPE, op);
    if (is_contrib) pb_string(&n, NODE_DOMAIN, "com.microsoft");
    if (a) {
        hfx_buf_append(&n, a->buf.data, a->buf.len);
        if (a->buf.oom) n.oom = 1; /* an attribute that could not be written */
        hfx_buf_free(&a->buf);
    }
    if (n.oom) hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    pb_message(&m->nodes, GRAPH_NODE, &n);
    hfx_buf_free(&n);
}

static void emit(onnx_model *m, const char *op, int n_in, const char *const *in, const char *out, attrs *a) {
    emit_outputs(m, op, n_in, in, 1, &out, a);
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

/* Reshape to the shape the decomposition pass computed at run time (a second input), or with a
 * constant shape vector: a symbolic target dim is written as 0 (copy the input dim at the same
 * index) when it matches that dim, or as -1 for the one remaining dim (hfx_reshape_plan). */
static void reshape(onnx_model *m, const hfx_node *n, const char *const *in, const char *out) {
    int64_t shape[HFX_MAX_RANK];
    int source[HFX_MAX_RANK];
    const hfx_attrs *a = &n->attrs;
    if (n->n_in == 2) {
        op2(m, "Reshape", in[0], in[1], out);
    } else if (hfx_reshape_plan(n->in[0], a->rank, a->dims, shape, source) <= 1) {
        op2(m, "Reshape", in[0], ints_const(m, a->rank, shape), out);
    } else {
        hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "onnx: a reshape that needs its shape at run time was not decomposed");
    }
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

/* A linear reading its weight as stored, [out, in]: Gemm with transB over x flattened to 2-D,
 * then x's leading dims back. `stored` names the weight's initializer. */
static void linear_gemm(onnx_model *m, const hfx_node *n, const char *stored, const char *out) {
    const hfx_init *w = n->in[1]->init;
    const hfx_value *xv = n->in[0];
    int64_t in = w->shape[1], outf = w->shape[0], flat[2] = {-1, in}, zero = 0, last = -1;
    const char *x = name_of(m, xv);
    const char *x2 = op2(m, "Reshape", x, ints_const(m, 2, flat), NULL);
    attrs ga = {0};
    attr_int(&ga, "transB", 1);
    const char *gin[2] = {x2, stored};
    const char *y2 = tmp_name(m);
    emit(m, "Gemm", 2, gin, y2, &ga);
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
}

/* A weight the graph already stores as it is (a tied LM head reading the embedding table) is
 * read through Gemm on that one initializer instead of a transposed second copy — for
 * Qwen3-0.6B's tied head that is 600 MB less to write. */
static bool linear_on_stored(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_init *w = n->in[1]->init;
    const char *stored = NULL;
    for (int i = 0; i < m->n_inits && !stored; i++)
        if (m->inits[i].src && hfx_init_same(m->inits[i].src, w)) stored = m->inits[i].name;
    if (!stored) return false;
    linear_gemm(m, n, stored, out);
    return true;
}

/* An activation quantized at run time: DynamicQuantizeLinear's codes, scale and zero point. */
typedef struct onnx_dynq {
    const char *x, *out[3];
    struct onnx_dynq *next;
} onnx_dynq;

/* The quantized parts of w as q computes them — codes, scales and zero points (NULL for a
 * symmetric block rule, whose op implies them) — after measuring the ranges its rule needs. */
static bool quant_parts(onnx_model *m, const hfx_init *w, hfx_quant *q, const hfx_init *parts[3]) {
    hfx_status st = hfx_quant_measure(m->arena, w, q, m->err);
    if (st) {
        if (!m->st) m->st = st;
        return false;
    }
    bool zeros = !q->symmetric || q->rule == HFX_QUANT_RULE_ORT_DYNAMIC; /* MatMulInteger takes its zero point */
    parts[0] = hfx_quant_init(m->arena, w, q, HFX_QUANT_CODES);
    parts[1] = hfx_quant_init(m->arena, w, q, HFX_QUANT_SCALES);
    parts[2] = zeros ? hfx_quant_init(m->arena, w, q, HFX_QUANT_ZEROS) : NULL;
    if (parts[0] && parts[1] && (parts[2] || !zeros)) return true;
    hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
    return false;
}

/* A quantized linear: onnxruntime's MatMulNBits over the weight's codes [N, blocks, block·bits/8],
 * scales [N, blocks] (the activations' type) and, asymmetric, zero points; the weight keeps
 * its [out, in] layout. */
static void linear_nbits(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_init *w = n->in[1]->init;
    hfx_dtype act = n->in[0]->dtype;
    if (act != HFX_DTYPE_F32 && act != HFX_DTYPE_F16) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: MatMulNBits takes float32 or float16 activations, not %s",
                      hfx_dtype_name(act));
        return;
    }
    hfx_quant q = *n->attrs.quant;
    q.scale_dtype = act;
    if (q.block < 16 || (q.block & (q.block - 1))) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: MatMulNBits takes blocks of a power of two of at least "
                      "16 weights, not %lld", (long long)q.block);
        return;
    }
    const hfx_init *parts[3];
    if (!quant_parts(m, w, &q, parts)) return;
    const hfx_init *codes = parts[0], *scales = parts[1], *zeros = parts[2];
    const char *in[4] = {name_of(m, n->in[0]), init_const(m, codes), init_const(m, scales),
                         zeros ? init_const(m, zeros) : NULL};
    attrs a = {0};
    attr_int(&a, "K", w->shape[1]);
    attr_int(&a, "N", w->shape[0]);
    attr_int(&a, "bits", q.bits);
    attr_int(&a, "block_size", q.block);
    if (m->accuracy_level) attr_int(&a, "accuracy_level", m->accuracy_level);
    emit(m, "com.microsoft.MatMulNBits", zeros ? 4 : 3, in, out, &a);
}

/* The quantized linear reading table w (a tied head) as MatMulNBits alike to the lookup's
 * quantization t (bits, blocks and symmetry; blocks that divide the row, so its codes carry no
 * padding), whose codes the lookup can read; NULL when none. */
static const hfx_node *head_sharing(const onnx_model *m, const hfx_value *w, const hfx_quant *t) {
    for (int i = 0; i < m->g->n_nodes; i++) {
        const hfx_node *l = m->g->nodes[i];
        const hfx_quant *q = l->attrs.quant;
        if (l->op == HFX_OP_LINEAR && l->in[1] == w && q && q->rule == HFX_QUANT_RULE_ORT && q->bits == t->bits &&
            q->block == t->block && q->symmetric == t->symmetric && w->init->shape[1] % q->block == 0 &&
            l->in[0]->dtype == w->init->dtype)
            return l;
    }
    return NULL;
}

/* A lookup in a table a tied head stores as MatMulNBits alike: GatherBlockQuantized reads the
 * head's codes [rows, blocks, block / 2] as [rows, cols / 2] bytes (bits 4, the implied zero
 * point 8) and its scales — one stored table, as onnxruntime-genai's builder writes it. The
 * table's values are then the head's rule's (MatMulNBits'). */
static void gather_shared(onnx_model *m, const hfx_node *head, const char *idx, const char *out) {
    const hfx_init *w = head->in[1]->init;
    hfx_quant q = *head->attrs.quant;
    q.scale_dtype = head->in[0]->dtype;
    const hfx_init *parts[3];
    if (!quant_parts(m, w, &q, parts)) return;
    const hfx_init *codes = parts[0], *scales = parts[1], *zeros = parts[2];
    int64_t shape[2] = {w->shape[0], w->shape[1] * q.bits / 8};
    const char *in[4] = {op2(m, "Reshape", init_const(m, codes), ints_const(m, 2, shape), NULL), idx,
                         init_const(m, scales), zeros ? init_const(m, zeros) : NULL};
    attrs a = {0};
    attr_int(&a, "bits", q.bits);
    attr_int(&a, "block_size", q.block);
    attr_int(&a, "gather_axis", 0);
    attr_int(&a, "quantize_axis", 1);
    emit(m, "com.microsoft.GatherBlockQuantized", zeros ? 4 : 3, in, out, &a);
}

/* A lookup in a quantized table: onnxruntime's GatherBlockQuantized over the table's codes
 * [rows, cols] (int4 signed, symmetric; uint4 with uint4 zero points [rows, blocks]) and
 * scales [rows, blocks] in the table's dtype, blocks along the row (quantize_axis 1). */
/* A lookup in a table quantized as quantize_dynamic quantizes one (an activation: uint8,
 * asymmetric, one scale): Gather of the codes, then DequantizeLinear. */
static void gather_integer(onnx_model *m, const hfx_node *n, const char *idx, const char *out) {
    const hfx_init *w = n->in[0]->init;
    hfx_quant q = *n->attrs.quant;
    const hfx_init *parts[3];
    if (w->dtype != HFX_DTYPE_F32) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: dynamic int8 quantization takes a float32 "
                      "table ('%s'), not %s", w->source, hfx_dtype_name(w->dtype));
        return;
    }
    q.scale_dtype = HFX_DTYPE_F32;
    if (!quant_parts(m, w, &q, parts)) return;
    attrs a = {0};
    attr_int(&a, "axis", 0);
    const char *gin[2] = {init_const(m, parts[0]), idx}, *rows = tmp_name(m);
    emit(m, "Gather", 2, gin, rows, &a);
    const char *din[3] = {rows, init_const(m, parts[1]), init_const(m, parts[2])};
    emit(m, "DequantizeLinear", 3, din, out, NULL);
}

static void gather_quantized(onnx_model *m, const hfx_node *n, const char *idx, const char *out) {
    const hfx_init *w = n->in[0]->init;
    if (n->attrs.quant->rule == HFX_QUANT_RULE_ORT_DYNAMIC) {
        gather_integer(m, n, idx, out);
        return;
    }
    const hfx_node *head = m->standard_ops ? NULL : head_sharing(m, n->in[0], n->attrs.quant);
    if (head) {
        gather_shared(m, head, idx, out);
        return;
    }
    if (m->standard_ops) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: a quantized embedding table ('%s') has no standard "
                      "form (onnxruntime's quantizer writes none): keep tables float (--quantize-embeddings none) "
                      "or use the contrib ops", w->source);
        return;
    }
    hfx_quant q = *n->attrs.quant;
    q.scale_dtype = w->dtype;
    if (w->dtype != HFX_DTYPE_F32 && w->dtype != HFX_DTYPE_F16) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: a quantized table ('%s') is float32 or float16, not %s",
                      w->source, hfx_dtype_name(w->dtype));
        return;
    }
    const hfx_init *parts[3];
    if (!quant_parts(m, w, &q, parts)) return;
    const hfx_init *codes = parts[0], *scales = parts[1], *zeros = parts[2];
    const char *in[4] = {init_const(m, codes), idx, init_const(m, scales), zeros ? init_const(m, zeros) : NULL};
    attrs a = {0};
    attr_int(&a, "block_size", q.block);
    attr_int(&a, "gather_axis", 0);
    attr_int(&a, "quantize_axis", 1);
    emit(m, "com.microsoft.GatherBlockQuantized", zeros ? 4 : 3, in, out, &a);
}

/* A quantized linear in standard ops (onnxruntime's quantizer's QDQ form): DequantizeLinear
 * (axis 0, block_size) of the codes [K, N] with scales [blocks, N] (the activations' type) and,
 * asymmetric, zero points, then MatMul. */
static void linear_dequantized(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_init *w = n->in[1]->init;
    hfx_quant q = *n->attrs.quant;
    q.scale_dtype = n->in[0]->dtype;
    q.layout = HFX_QUANT_COLUMNS;
    if (m->opset < 21) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: quantized weights in standard ops need "
                      "DequantizeLinear with blocks, opset 21: export with opset_version (--opset) 21 or later");
        return;
    }
    const hfx_init *parts[3];
    if (!quant_parts(m, w, &q, parts)) return;
    const hfx_init *codes = parts[0], *scales = parts[1], *zeros = parts[2];
    const char *in[3] = {init_const(m, codes), init_const(m, scales), zeros ? init_const(m, zeros) : NULL};
    const char *weight = tmp_name(m);
    attrs a = {0};
    attr_int(&a, "axis", 0);
    attr_int(&a, "block_size", q.block);
    emit(m, "DequantizeLinear", zeros ? 3 : 2, in, weight, &a);
    op2(m, "MatMul", name_of(m, n->in[0]), weight, out);
}

/* A linear with dynamic int8 weights (onnxruntime's quantize_dynamic form): the activation
 * quantized at run time by DynamicQuantizeLinear (once per activation, shared by its linears),
 * MatMulInteger against the codes [K, N] and their zero point, Cast to float, times the product
 * of the two scales. */
static void linear_integer(onnx_model *m, const hfx_node *n, const char *out) {
    const hfx_init *w = n->in[1]->init;
    if (n->in[0]->dtype != HFX_DTYPE_F32) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: dynamic int8 quantization takes float32 activations "
                      "(DynamicQuantizeLinear), not %s", hfx_dtype_name(n->in[0]->dtype));
        return;
    }
    hfx_quant q = *n->attrs.quant;
    q.scale_dtype = HFX_DTYPE_F32;
    q.layout = HFX_QUANT_COLUMNS;
    const hfx_init *parts[3];
    if (!quant_parts(m, w, &q, parts)) return;
    const char *x = name_of(m, n->in[0]);
    onnx_dynq *d = m->dynq;
    while (d && strcmp(d->x, x) != 0) d = d->next;
    if (!d) {
        d = hfx_arena_alloc(m->arena, sizeof *d);
        if (!d) {
            hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
            return;
        }
        d->x = x;
        for (int i = 0; i < 3; i++) d->out[i] = tmp_name(m);
        d->next = m->dynq;
        m->dynq = d;
        emit_outputs(m, "DynamicQuantizeLinear", 1, &x, 3, d->out, NULL);
    }
    const char *in[4] = {d->out[0], init_const(m, parts[0]), d->out[2], init_const(m, parts[2])};
    const char *product = tmp_name(m);
    emit(m, "MatMulInteger", 4, in, product, NULL);
    const char *scales = op2(m, "Mul", d->out[1], init_const(m, parts[1]), NULL);
    op2(m, "Mul", cast(m, product, HFX_DTYPE_F32, NULL), scales, out);
}

/* linear names its own inputs: its weight is stored transposed, so the untransposed view must
 * not become an initializer. `type` is the float form's operator. */
static void lower_linear(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    if (n->n_in != 2) { /* the decomposition pass splits biases off */
        hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "onnx: a linear with a bias was not decomposed");
        return;
    }
    if (n->attrs.quant) {
        if (n->attrs.quant->rule == HFX_QUANT_RULE_ORT_DYNAMIC) linear_integer(m, n, out);
        else if (m->standard_ops) linear_dequantized(m, n, out);
        else linear_nbits(m, n, out);
        return;
    }
    if (linear_on_stored(m, n, out)) return;
    if (m->weights_as_stored) { /* no transpose at all: the checkpoint's rows stream out as they are */
        linear_gemm(m, n, init_const(m, n->in[1]->init), out);
        return;
    }
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
    op2(m, type, name_of(m, n->in[0]), init_const(m, t), out);
}

/* ---- the op table ---- */

/* The lowerings the table names: `type` is the row's ONNX operator, `out` the node's output. */
typedef void onnx_lower_fn(onnx_model *m, const hfx_node *n, const char *type, const char *out);

/* The names of n's inputs ("" for an absent optional one). */
static void input_names(onnx_model *m, const hfx_node *n, const char **in) {
    for (int i = 0; i < n->n_in; i++) in[i] = n->in[i] ? name_of(m, n->in[i]) : "";
}

/* The same op with the same inputs and no attributes (ops.def's standard name). */
static void standard(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    input_names(m, n, in);
    emit(m, type, n->n_in, in, out, NULL);
}

/* BitwiseXor came in opset 18 (the n-gram hashes of Qwen4-Exp's per-layer embeddings) */
static void lower_bitwise(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    if (m->opset < 18) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED, "onnx: this graph hashes token ids with BitwiseXor, "
                      "opset 18: export with opset_version (--opset) 18 or later");
        return;
    }
    standard(m, n, "BitwiseXor", out);
    (void)type;
}

static void with_axis(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    attr_int(&a, "axis", n->attrs.axis);
    emit(m, type, n->n_in, in, out, &a);
}

static void lower_gather(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    if (n->attrs.quant) { /* nor a quantized table's float form */
        gather_quantized(m, n, name_of(m, n->in[1]), out);
        return;
    }
    with_axis(m, n, type, out);
}

static void lower_cast(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    (void)type;
    input_names(m, n, in);
    cast(m, in[0], n->attrs.to, out);
}

static void lower_reduce(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    input_names(m, n, in);
    reduce(m, type, in[0], n->attrs.n_ints, n->attrs.ints, out);
}

/* ReduceSum has taken axes as an input since opset 13 */
static void lower_reduce_sum(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    const char *rin[2] = {in[0], ints_const(m, n->attrs.n_ints, n->attrs.ints)};
    attr_int(&a, "keepdims", 1);
    emit(m, type, 2, rin, out, &a);
}

static void lower_reshape(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    (void)type;
    input_names(m, n, in);
    reshape(m, n, in, out);
}

static void lower_transpose(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    attr_ints(&a, "perm", n->attrs.n_ints, n->attrs.ints);
    emit(m, type, 1, in, out, &a);
}

static void lower_unsqueeze(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    input_names(m, n, in);
    op2(m, type, in[0], ints_const(m, n->attrs.n_ints, n->attrs.ints), out);
}

static void lower_slice(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    const hfx_attrs *at = &n->attrs;
    input_names(m, n, in);
    const char *sin[4] = {in[0], ints_const(m, 1, &at->start), ints_const(m, 1, &at->end),
                          ints_const(m, 1, &at->axis)};
    emit(m, type, 4, sin, out, NULL);
}

static void lower_cumsum(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    input_names(m, n, in);
    op2(m, type, in[0], int_scalar(m, n->attrs.axis), out);
}

/* Conv over the node's 1 or 2 spatial axes: pads as every axis' beginning, then every axis' end */
static void lower_conv(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    int rank = n->attrs.rank;
    int64_t k[2], strides[2], pads[4], ones[2] = {1, 1};
    for (int i = 0; i < rank; i++) {
        k[i] = n->in[1]->dims[2 + i].c, strides[i] = n->attrs.ints[1 + 2 * i];
        pads[i] = pads[rank + i] = n->attrs.ints[2 + 2 * i];
    }
    attr_ints(&a, "kernel_shape", rank, k);
    attr_ints(&a, "strides", rank, strides);
    attr_ints(&a, "pads", 2 * rank, pads);
    attr_ints(&a, "dilations", rank, ones);
    attr_int(&a, "group", n->attrs.ints[0]);
    emit(m, type, n->n_in, in, out, &a);
}

/* over the last axis, largest first, sorted (ties: the lower index) */
static void lower_top_k(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    const char *tin[2] = {in[0], ints_const(m, 1, &n->attrs.k)}, *outs[2] = {out, name_of(m, n->out[1])};
    attr_int(&a, "axis", -1);
    emit_outputs(m, type, 2, tin, 2, outs, &a);
}

/* ScatterElements(axis 2) with indices[b,h,s,d] = slots[s]; it checks the bounds, so a slot past
 * the cache end is a runtime error, never an overwrite */
static void lower_cache_write(onnx_model *m, const hfx_node *n, const char *type, const char *out) {
    const char *in[16];
    attrs a = {0};
    input_names(m, n, in);
    int64_t shape4[4] = {1, 1, -1, 1};
    const char *idx = op2(m, "Reshape", in[2], ints_const(m, 4, shape4), NULL);
    idx = op2(m, "Expand", idx, op1(m, "Shape", in[1], NULL), NULL);
    const char *sin[3] = {in[0], idx, in[1]};
    attr_int(&a, "axis", 2);
    emit(m, type, 3, sin, out, &a);
}

/* A row of the table: its op's support and, lowered, its lowering. */
typedef struct onnx_rule {
    hfx_op_support s;
    onnx_lower_fn *lower;
} onnx_rule;

#define ROW(op, fate, how, lower) {{HFX_OP_##op, HFX_OP_##fate, how}, lower}

/* Every IR op in ONNX, in ops.def's order: the operator its node becomes, and how. */
static const onnx_rule rules[] = {
    ROW(ADD, LOWERED, "Add", standard),
    ROW(SUB, LOWERED, "Sub", standard),
    ROW(MUL, LOWERED, "Mul", standard),
    ROW(DIV, LOWERED, "Div", standard),
    ROW(POW, LOWERED, "Pow", standard),
    ROW(MIN, LOWERED, "Min", standard),
    ROW(MAX, LOWERED, "Max", standard),
    ROW(BITWISE_XOR, LOWERED, "BitwiseXor (opset 18)", lower_bitwise),
    ROW(EQUAL, LOWERED, "Equal", standard),
    ROW(LESS, LOWERED, "Less", standard),
    ROW(LESS_EQUAL, LOWERED, "LessOrEqual", standard),
    ROW(GREATER, LOWERED, "Greater", standard),
    ROW(GREATER_EQUAL, LOWERED, "GreaterOrEqual", standard),
    ROW(AND, LOWERED, "And", standard),
    ROW(OR, LOWERED, "Or", standard),
    ROW(WHERE, LOWERED, "Where", standard),
    ROW(NEG, LOWERED, "Neg", standard),
    ROW(NOT, LOWERED, "Not", standard),
    ROW(SQRT, LOWERED, "Sqrt", standard),
    ROW(RECIPROCAL, LOWERED, "Reciprocal", standard),
    ROW(EXP, LOWERED, "Exp", standard),
    ROW(LOG, LOWERED, "Log", standard),
    ROW(SIGMOID, LOWERED, "Sigmoid", standard),
    ROW(TANH, LOWERED, "Tanh", standard),
    ROW(ERF, LOWERED, "Erf", standard),
    ROW(COS, LOWERED, "Cos", standard),
    ROW(SIN, LOWERED, "Sin", standard),
    ROW(CAST, LOWERED, "Cast", lower_cast),
    ROW(MATMUL, LOWERED, "MatMul", standard),
    /* MatMul on the weight's transposed view; Gemm(transB) on a stored one; quantized:
     * MatMulNBits, DequantizeLinear + MatMul (standard ops) or MatMulInteger (dynamic int8) */
    ROW(LINEAR, LOWERED, "MatMul", lower_linear),
    ROW(RMS_NORM, EXPANDED, "Pow, ReduceMean, Add, Sqrt, Div, Mul", NULL),
    ROW(SOFTMAX, LOWERED, "Softmax", with_axis),
    ROW(CUMSUM, LOWERED, "CumSum", lower_cumsum),
    ROW(CONV, LOWERED, "Conv", lower_conv),
    ROW(ATTENTION, EXPANDED, "MatMul, Mul, Add, Softmax, MatMul", NULL),
    ROW(TOP_K, LOWERED, "TopK", lower_top_k),
    ROW(TOP_K_MASK, EXPANDED, "TopK, ScatterElements", NULL),
    ROW(GATHER_ELEMENTS, LOWERED, "GatherElements", with_axis),
    ROW(SCATTER_ELEMENTS, LOWERED, "ScatterElements", with_axis),
    ROW(REDUCE_MEAN, LOWERED, "ReduceMean", lower_reduce),
    ROW(REDUCE_MAX, LOWERED, "ReduceMax", lower_reduce),
    ROW(REDUCE_SUM, LOWERED, "ReduceSum", lower_reduce_sum),
    ROW(RESHAPE, LOWERED, "Reshape", lower_reshape),
    ROW(TRANSPOSE, LOWERED, "Transpose", lower_transpose),
    ROW(UNSQUEEZE, LOWERED, "Unsqueeze", lower_unsqueeze),
    ROW(CONCAT, LOWERED, "Concat", with_axis),
    ROW(SLICE, LOWERED, "Slice", lower_slice),
    /* quantized tables: GatherBlockQuantized, or Gather + DequantizeLinear (dynamic int8) */
    ROW(GATHER, LOWERED, "Gather", lower_gather),
    ROW(SHAPE, LOWERED, "Shape", standard),
    ROW(RANGE, LOWERED, "Range", standard),
    ROW(EXPAND, LOWERED, "Expand", standard),
    ROW(CACHE_WRITE, LOWERED, "ScatterElements", lower_cache_write),
};
HFX_OP_TABLE_COVERS(rules, "onnx");

#undef ROW

const hfx_op_support *hfx_onnx_op_support(hfx_op op) {
    return (unsigned)op < HFX_OP_COUNT_ ? &rules[op].s : NULL;
}

static void lower_node(onnx_model *m, const hfx_node *n) {
    const onnx_rule *r = &rules[n->op];
    if (r->s.fate != HFX_OP_LOWERED) {
        if (!m->st) m->st = hfx_op_not_lowered("onnx", &r->s, m->err);
        return;
    }
    r->lower(m, n, r->s.how, name_of(m, n->out[0]));
}

bool hfx_onnx_keeps(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    return n->op == HFX_OP_LINEAR;
}

hfx_status hfx_onnx_lower(const hfx_graph *g, const hfx_onnx_lowering *how, onnx_model *m, hfx_error *err) {
    int opset = how->opset;
    memset(m, 0, sizeof *m);
    m->err = err;
    m->opset = opset;
    m->g = g;
    m->accuracy_level = how->accuracy_level;
    m->standard_ops = how->standard_ops;
    m->weights_as_stored = how->weights_as_stored;
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
