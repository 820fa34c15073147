/* IR → OpenVINO opsets. The decomposition pass (ir/decompose.c) has expanded every high-level
 * op except the ones hfx_ov_keeps names: linear is MatMul with transpose_b (the weight stays
 * [out, in]); attention, where SDPA's semantics cover it exactly, is ScaledDotProductAttention
 * (opset13). Elementwise ops map one to one. The op table (`rules`, op_table.h) says what each IR
 * op becomes and holds its lowering; docs/OPENVINO.md has the table. */
#include "fmt/openvino/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

const char *hfx_ov_type(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_F32: return "f32";
    case HFX_DTYPE_F16: return "f16";
    case HFX_DTYPE_BF16: return "bf16";
    case HFX_DTYPE_F64: return "f64";
    case HFX_DTYPE_I64: return "i64";
    case HFX_DTYPE_I32: return "i32";
    case HFX_DTYPE_I16: return "i16";
    case HFX_DTYPE_I8: return "i8";
    case HFX_DTYPE_U8: return "u8";
    case HFX_DTYPE_BOOL: return "boolean";
    case HFX_DTYPE_I4: return "i4";
    case HFX_DTYPE_U4: return "u4";
    default: return "undefined";
    }
}


static bool grow(ov_model *m, void **p, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int nc = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, (size_t)nc * size);
    if (!q) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return false;
    }
    *p = q;
    *cap = nc;
    return true;
}

/* Add a layer fed by `in` (n_in outputs of earlier layers); its output ports follow its input
 * ports, as IR v11 numbers them. Returns output port 0. */
static ov_ref layer(ov_model *m, const char *type, const char *version, const char *data, int n_in,
                    const ov_ref *in, int n_out) {
    ov_ref none = {0, 0};
    if (m->st || !grow(m, (void **)&m->layers, &m->cap_layers, m->n_layers, sizeof *m->layers)) return none;
    int id = m->n_layers++;
    /* the output element type: what most ops keep, with the exceptions spelled out */
    static const char *const to_bool[] = {"Equal", "Less", "LessEqual", "Greater", "GreaterEqual",
                                          "LogicalAnd", "LogicalOr", "LogicalNot"};
    hfx_dtype dt = n_in > 0 ? m->layers[in[strcmp(type, "Select") == 0 ? 1 : 0].layer].out_dtype
                            : HFX_DTYPE_UNDEFINED;
    for (size_t i = 0; i < sizeof to_bool / sizeof to_bool[0]; i++)
        if (strcmp(type, to_bool[i]) == 0) dt = HFX_DTYPE_BOOL;
    if (strcmp(type, "ShapeOf") == 0 || strcmp(type, "Range") == 0) dt = HFX_DTYPE_I64;
    const char *name = hfx_arena_printf(m->arena, "%s_%d", type, id);
    const char *copy = data ? hfx_arena_strdup(m->arena, data) : NULL;
    if (!name || (data && !copy)) {
        m->n_layers--;
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return none;
    }
    m->layers[id] = (ov_layer){name, type, version, copy, NULL, n_in, n_out,
                               NULL, -1, m->n_edges, dt};
    for (int i = 0; i < n_in; i++) {
        if (!grow(m, (void **)&m->edges, &m->cap_edges, m->n_edges, sizeof *m->edges)) return none;
        m->edges[m->n_edges++] = (ov_edge){in[i].layer, in[i].port, id, i};
    }
    return (ov_ref){id, n_in};
}

static ov_ref op1(ov_model *m, const char *type, ov_ref a) { return layer(m, type, "opset1", NULL, 1, &a, 1); }

static ov_ref op2(ov_model *m, const char *type, ov_ref a, ov_ref b) {
    ov_ref in[2] = {a, b};
    bool broadcasting = strcmp(type, "MatMul") != 0;
    return layer(m, type, "opset1", broadcasting ? "auto_broadcast=\"numpy\"" : NULL, 2, in, 1);
}

/* ---- constants ---- */

static int add_blob(ov_model *m, const hfx_init *src, const uint8_t *bytes, hfx_dtype dt, uint64_t nbytes) {
    ov_blobs *b = m->blobs;
    for (int i = 0; src && i < b->n; i++)
        if (b->items[i].src && hfx_init_same(b->items[i].src, src)) return i;
    for (int i = 0; !src && i < b->n; i++) /* small lowering-time constants repeat a lot */
        if (!b->items[i].src && b->items[i].dtype == dt && b->items[i].nbytes == nbytes &&
            memcmp(b->items[i].bytes, bytes, nbytes) == 0)
            return i;
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 256;
        ov_blob *p = realloc(b->items, (size_t)nc * sizeof *p);
        if (!p) {
            hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
            return 0;
        }
        b->items = p;
        b->cap = nc;
    }
    uint64_t align = nbytes >= 65536 ? 4096 : 64;
    b->size = (b->size + align - 1) / align * align;
    b->items[b->n] = (ov_blob){src, bytes, dt, nbytes, b->size};
    b->size += nbytes;
    return b->n++;
}

static ov_ref const_layer(ov_model *m, hfx_dtype dt, int rank, const int64_t *shape, int blob) {
    char data[512];
    size_t k = (size_t)snprintf(data, sizeof data, "element_type=\"%s\" shape=\"", hfx_ov_type(dt));
    for (int i = 0; i < rank && k < sizeof data - 32; i++)
        k += (size_t)snprintf(data + k, sizeof data - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    const ov_blob *b = m->st ? NULL : &m->blobs->items[blob];
    snprintf(data + k, sizeof data - k, "\" offset=\"%llu\" size=\"%llu\"",
             (unsigned long long)(b ? b->offset : 0), (unsigned long long)(b ? b->nbytes : 0));
    ov_ref r = layer(m, "Const", "opset1", data, 0, NULL, 1);
    if (!m->st) {
        m->layers[r.layer].blob = blob;
        m->layers[r.layer].out_dtype = dt;
    }
    return r;
}

static ov_ref bytes_const(ov_model *m, hfx_dtype dt, int rank, const int64_t *shape, const void *data) {
    uint64_t n = hfx_dtype_nbytes(dt, hfx_numel(rank, shape));
    uint8_t *copy = hfx_arena_alloc(m->arena, n ? n : 1);
    if (!copy) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return (ov_ref){0, 0};
    }
    if (n) memcpy(copy, data, n);
    return const_layer(m, dt, rank, shape, add_blob(m, NULL, copy, dt, n));
}

static ov_ref ints(ov_model *m, int n, const int64_t *v) {
    int64_t shape = n;
    return bytes_const(m, HFX_DTYPE_I64, 1, &shape, v);
}

static ov_ref int_scalar(ov_model *m, int64_t v) { return bytes_const(m, HFX_DTYPE_I64, 0, NULL, &v); }

static ov_ref convert(ov_model *m, ov_ref x, hfx_dtype to);

static ov_ref float_scalar(ov_model *m, hfx_dtype dt, double v) {
    float f = (float)v;
    ov_ref r = bytes_const(m, HFX_DTYPE_F32, 0, NULL, &f);
    if (dt == HFX_DTYPE_F32) return r;
    return convert(m, r, dt);
}

static ov_ref init_const(ov_model *m, const hfx_init *init) {
    uint64_t n = hfx_init_nbytes(init);
    if (m->o->compress_to_fp16 && init->dtype == HFX_DTYPE_F32 && hfx_init_is_mapped(init)) {
        /* f16 storage, widened at load: OpenVINO marks such a Convert as a decompression */
        hfx_init *half = hfx_arena_alloc(m->arena, sizeof *half);
        if (!half) {
            hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
            return (ov_ref){0, 0};
        }
        *half = *init;
        half->dtype = HFX_DTYPE_F16;
        ov_ref c = const_layer(m, HFX_DTYPE_F16, init->rank, init->shape, add_blob(m, half, NULL, HFX_DTYPE_F16, n / 2));
        ov_ref r = convert(m, c, HFX_DTYPE_F32);
        if (!m->st) m->layers[r.layer].rt_info = "<attribute name=\"decompression\" version=\"0\" />";
        return r;
    }
    return const_layer(m, init->dtype, init->rank, init->shape, add_blob(m, init, NULL, init->dtype, n));
}

static ov_ref val(ov_model *m, const hfx_value *v) {
    if (m->val[v->id].layer < 0) {
        if (v->init) m->val[v->id] = init_const(m, v->init);
        else hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "openvino: value %d used before it is produced", v->id);
    }
    return m->val[v->id];
}

static ov_ref convert(ov_model *m, ov_ref x, hfx_dtype to) {
    char data[64];
    snprintf(data, sizeof data, "destination_type=\"%s\"", hfx_ov_type(to));
    ov_ref r = layer(m, "Convert", "opset1", data, 1, &x, 1);
    if (!m->st) m->layers[r.layer].out_dtype = to;
    return r;
}

static ov_ref reduce(ov_model *m, const char *type, ov_ref x, int n, const int64_t *axes) {
    ov_ref in[2] = {x, ints(m, n, axes)};
    return layer(m, type, "opset1", "keep_dims=\"true\"", 2, in, 1);
}

static ov_ref unsqueeze(ov_model *m, ov_ref x, int64_t axis) {
    ov_ref in[2] = {x, ints(m, 1, &axis)};
    return layer(m, "Unsqueeze", "opset1", NULL, 2, in, 1);
}

static ov_ref reshape(ov_model *m, ov_ref x, int rank, const int64_t *shape) {
    ov_ref in[2] = {x, ints(m, rank, shape)};
    return layer(m, "Reshape", "opset1", "special_zero=\"true\"", 2, in, 1);
}

static ov_ref transpose(ov_model *m, ov_ref x, int rank, const int64_t *perm) {
    ov_ref in[2] = {x, ints(m, rank, perm)};
    return layer(m, "Transpose", "opset1", NULL, 2, in, 1);
}

/* ---- high-level ops ---- */

/* A quantized weight's subgraph, made once for its readers (a tied head and the lookup). */
typedef struct ov_compressed {
    const hfx_value *w;
    hfx_quant q;
    hfx_dtype to;
    ov_ref out;
    struct ov_compressed *next;
} ov_compressed;

/* A quantized weight (a linear's [out, in], or a table [rows, cols] a Gather reads), in NNCF's
 * pattern (what optimum-intel writes, and what the CPU plugin recognises as compressed weights):
 * codes u4/i4/u8/i8 [out, groups, group] (or [out, in] per row) → Convert f16 → (− zero
 * point, u4/u8 [out, groups, 1] → Convert f16) → × scale f16 [out, groups, 1] → (Reshape
 * [out, in]) → (Convert to the graph's float type). One subgraph per weight, quantization and
 * type, shared by its readers, as NNCF compresses a shared constant once. */
static ov_ref compressed_weight(ov_model *m, const hfx_value *wv, const hfx_quant *quant, hfx_dtype to) {
    for (const ov_compressed *c = m->compressed; c; c = c->next)
        if (c->w == wv && c->to == to && c->q.rule == quant->rule && c->q.bits == quant->bits &&
            c->q.block == quant->block && c->q.symmetric == quant->symmetric &&
            c->q.from_blocks == quant->from_blocks)
            return c->out;
    const hfx_init *w = wv->init;
    hfx_quant q = *quant;
    /* a GGUF file's blocks (q.from_blocks) decompress in float32: its float16 scale times a code is exact there, not
     * in float16 */
    const hfx_dtype work = q.from_blocks ? HFX_DTYPE_F32 : HFX_DTYPE_F16;
    q.scale_dtype = work;
    int64_t rows = w->shape[0], cols = w->shape[1], size = hfx_quant_block_size(&q, cols);
    int64_t groups = hfx_quant_blocks(&q, cols);
    bool grouped = q.block > 0; /* NNCF keeps a group size's shape even when one group spans the row */
    int rank = grouped ? 3 : 2;
    int64_t shape[3] = {rows, grouped ? groups : cols, size}, meta[3] = {rows, grouped ? groups : 1, 1};
    hfx_dtype code_t = q.bits == 4 ? (q.symmetric ? HFX_DTYPE_I4 : HFX_DTYPE_U4)
                                   : (q.symmetric ? HFX_DTYPE_I8 : HFX_DTYPE_U8);
    const hfx_init *codes = hfx_quant_init(m->arena, w, &q, HFX_QUANT_CODES);
    const hfx_init *scales = hfx_quant_init(m->arena, w, &q, HFX_QUANT_SCALES);
    const hfx_init *zeros = q.symmetric ? NULL : hfx_quant_init(m->arena, w, &q, HFX_QUANT_ZEROS);
    if (!codes || !scales || (!q.symmetric && !zeros)) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return (ov_ref){0, 0};
    }
    /* named after the checkpoint tensor, as NNCF names its constants: "<tensor>", "/zero_point", "/scale" */
    const char *base = w->source;
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].name && strcmp(m->layers[i].name, base) == 0) { /* a slice of a fused tensor: numbered */
            base = hfx_arena_printf(m->arena, "%s/%d", w->source, m->n_layers);
            break;
        }
    ov_ref c = const_layer(m, code_t, rank, shape, add_blob(m, codes, NULL, HFX_DTYPE_U8, hfx_init_nbytes(codes)));
    if (!m->st) m->layers[c.layer].name = base;
    ov_ref x = convert(m, c, work);
    if (zeros) {
        hfx_dtype zp_t = q.bits == 4 ? HFX_DTYPE_U4 : HFX_DTYPE_U8;
        ov_ref zp = const_layer(m, zp_t, rank, meta, add_blob(m, zeros, NULL, HFX_DTYPE_U8, hfx_init_nbytes(zeros)));
        if (!m->st) m->layers[zp.layer].name = hfx_arena_printf(m->arena, "%s/zero_point", base);
        x = op2(m, "Subtract", x, convert(m, zp, work));
    }
    ov_ref scale = const_layer(m, work, rank, meta, add_blob(m, scales, NULL, work, hfx_init_nbytes(scales)));
    if (!m->st) m->layers[scale.layer].name = hfx_arena_printf(m->arena, "%s/scale", base);
    x = op2(m, "Multiply", x, scale);
    if (grouped) {
        int64_t flat[2] = {rows, cols};
        ov_ref in[2] = {x, ints(m, 2, flat)};
        x = layer(m, "Reshape", "opset1", "special_zero=\"false\"", 2, in, 1);
    }
    x = to == work ? x : convert(m, x, to);
    ov_compressed *made = hfx_arena_alloc(m->arena, sizeof *made);
    if (!made) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    made->w = wv, made->q = *quant, made->to = to, made->out = x, made->next = m->compressed;
    m->compressed = made;
    return x;
}

/* Whether any attention of g applies a sliding window through its mask. */
static bool windowed(const hfx_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == HFX_OP_ATTENTION && g->nodes[i]->attrs.window > 0) return true;
    return false;
}

/* Attention stays ScaledDotProductAttention where that is exact and OpenVINO GenAI's
 * paged-attention conversion keeps it right: float32 scores, no soft-capping, no sinks, and no sliding
 * window anywhere in the graph (the conversion keeps causality but drops the mask, so a windowed
 * graph takes the decomposed form, which it leaves alone: GenAI then runs it as written). */
bool hfx_ov_keeps(const hfx_graph *g, const hfx_node *n) {
    if (n->op == HFX_OP_LINEAR) return true;
    return n->op == HFX_OP_ATTENTION && n->in[0]->dtype == HFX_DTYPE_F32 && n->attrs.f1 == 0 && n->n_in == 4 &&
           !windowed(g);
}

static const hfx_state *kept_once(const hfx_graph *g, const hfx_value *v);
static const hfx_state *variable_of(const hfx_graph *g, const hfx_value *v, bool is_input);

/* 4-D SDPA with k and v repeated to H heads (Unsqueeze, Broadcast, Reshape: transformers'
 * repeat_kv), the form OpenVINO's paged-attention conversion recognises. Over keys read as they
 * are from a variable (an encoder-decoder's cross-attention cache) the scale multiplies the queries
 * first and SDPA's is 1: given a scale, the CPU plugin moves the multiply onto the stored keys and
 * transposes them at every step (1.6x the step time of Whisper-small's decoder). */
static ov_ref lower_attention(ov_model *m, const hfx_node *n, const char *type) {
    const hfx_value *q = n->in[0], *k = n->in[1], *v = n->in[2];
    int64_t heads = q->dims[1].c, kv = k->dims[1].c, group = heads / kv;
    ov_ref qn = val(m, q), kn = val(m, k), vn = val(m, v), bias = val(m, n->in[3]);
    double scale = n->attrs.f0;
    if (m->o->stateful && (kept_once(m->g, k) || variable_of(m->g, k, true))) {
        qn = op2(m, "Multiply", qn, float_scalar(m, HFX_DTYPE_F32, scale));
        scale = 1.0;
    }
    if (group > 1) {
        int64_t reps[5] = {1, 1, group, 1, 1}, heads_shape[4] = {0, heads, -1, k->dims[3].c};
        ov_ref r = ints(m, 5, reps);
        ov_ref kin[2] = {unsqueeze(m, kn, 2), r}, vin[2] = {unsqueeze(m, vn, 2), r};
        kn = reshape(m, layer(m, "Broadcast", "opset3", "mode=\"bidirectional\"", 2, kin, 1), 4, heads_shape);
        heads_shape[3] = v->dims[3].c;
        vn = reshape(m, layer(m, "Broadcast", "opset3", "mode=\"bidirectional\"", 2, vin, 1), 4, heads_shape);
    }
    ov_ref in[5] = {qn, kn, vn, bias, float_scalar(m, HFX_DTYPE_F32, scale)};
    return layer(m, type, "opset13", "causal=\"false\"", 5, in, 1);
}

/* ---- the op table ---- */

/* The lowerings the table names: `type` is the row's layer type; returns the node's output
 * port 0 (its output k is port k after it). */
typedef ov_ref ov_lower_fn(ov_model *m, const hfx_node *n, const char *type);

/* A layer of the same inputs, numpy broadcasting for two. */
static ov_ref simple(ov_model *m, const hfx_node *n, const char *type) {
    if (n->n_in == 1) return op1(m, type, val(m, n->in[0]));
    return op2(m, type, val(m, n->in[0]), val(m, n->in[1]));
}

/* BitwiseXor is opset13's */
static ov_ref lower_bitwise(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref in[2] = {val(m, n->in[0]), val(m, n->in[1])};
    return layer(m, type, "opset13", "auto_broadcast=\"numpy\"", 2, in, 1);
}

static ov_ref lower_where(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[3] = {x, val(m, n->in[1]), val(m, n->in[2])};
    return layer(m, type, "opset1", "auto_broadcast=\"numpy\"", 3, in, 1);
}

static ov_ref lower_reciprocal(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    return op2(m, type, float_scalar(m, n->in[0]->dtype, 1.0), x);
}

static ov_ref lower_cast(ov_model *m, const hfx_node *n, const char *type) {
    (void)type;
    ov_ref x = val(m, n->in[0]);
    return convert(m, x, n->attrs.to);
}

static ov_ref lower_matmul(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    return op2(m, type, x, val(m, n->in[1]));
}

/* the weight stays [out, in] (a quantized one decompressed); the decomposition pass split any
 * bias off */
static ov_ref lower_linear(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref in[2] = {val(m, n->in[0]), {0, 0}};
    in[1] = n->attrs.quant ? compressed_weight(m, n->in[1], n->attrs.quant, n->in[0]->dtype) : val(m, n->in[1]);
    return layer(m, type, "opset1", "transpose_a=\"false\" transpose_b=\"true\"", 2, in, 1);
}

static ov_ref lower_softmax(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    char data[256];
    snprintf(data, sizeof data, "axis=\"%lld\"", (long long)n->attrs.axis);
    return layer(m, type, "opset8", data, 1, &x, 1);
}

static ov_ref lower_reduce(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    return reduce(m, type, x, n->attrs.n_ints, n->attrs.ints);
}

/* to the shape computed at run time, or the same 0 (copy) / -1 (infer) encoding as ONNX */
static ov_ref lower_reshape(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    const hfx_attrs *at = &n->attrs;
    int64_t shape[HFX_MAX_RANK];
    int source[HFX_MAX_RANK];
    if (n->n_in == 2) {
        ov_ref rin[2] = {x, val(m, n->in[1])};
        return layer(m, type, "opset1", "special_zero=\"false\"", 2, rin, 1);
    }
    if (hfx_reshape_plan(n->in[0], at->rank, at->dims, shape, source) <= 1) return reshape(m, x, at->rank, shape);
    hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "openvino: a reshape that needs its shape at run time was not decomposed");
    return (ov_ref){0, 0};
}

static ov_ref lower_transpose(ov_model *m, const hfx_node *n, const char *type) {
    (void)type;
    ov_ref x = val(m, n->in[0]);
    return transpose(m, x, n->attrs.n_ints, n->attrs.ints);
}

static ov_ref lower_unsqueeze(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[2] = {x, ints(m, n->attrs.n_ints, n->attrs.ints)};
    return layer(m, type, "opset1", NULL, 2, in, 1);
}

static ov_ref lower_concat(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref in[16];
    char data[256];
    for (int i = 0; i < n->n_in; i++) in[i] = val(m, n->in[i]);
    snprintf(data, sizeof data, "axis=\"%lld\"", (long long)n->attrs.axis);
    return layer(m, type, "opset1", data, n->n_in, in, 1);
}

static ov_ref lower_slice(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    const hfx_attrs *at = &n->attrs;
    int64_t one = 1;
    ov_ref in[5] = {x, ints(m, 1, &at->start), ints(m, 1, &at->end), ints(m, 1, &one), ints(m, 1, &at->axis)};
    return layer(m, type, "opset8", NULL, 5, in, 1);
}

/* a quantized table is looked up in its decompressed form */
static ov_ref lower_gather(ov_model *m, const hfx_node *n, const char *type) {
    const hfx_attrs *at = &n->attrs;
    ov_ref x = at->quant ? compressed_weight(m, n->in[0], at->quant, n->in[0]->dtype) : val(m, n->in[0]);
    ov_ref in[3] = {x, val(m, n->in[1]), int_scalar(m, at->axis)};
    return layer(m, type, "opset8", "batch_dims=\"0\"", 3, in, 1);
}

static ov_ref lower_shape(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    return layer(m, type, "opset3", "output_type=\"i64\"", 1, &x, 1);
}

static ov_ref lower_range(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[3] = {x, val(m, n->in[1]), val(m, n->in[2])};
    return layer(m, type, "opset4", "output_type=\"i64\"", 3, in, 1);
}

static ov_ref lower_expand(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[2] = {x, val(m, n->in[1])};
    return layer(m, type, "opset3", "mode=\"numpy\"", 2, in, 1);
}

static ov_ref lower_cumsum(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[2] = {x, int_scalar(m, n->attrs.axis)};
    return layer(m, type, "opset3", "exclusive=\"false\" reverse=\"false\"", 2, in, 1);
}

/* Convolution over the node's 1 or 2 spatial axes, or GroupConvolution over the weight as
 * [groups, Cout/groups, Cin/groups, *k]; the bias added as [1, Cout, 1(, 1)] */
static ov_ref lower_conv(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]), w = val(m, n->in[1]);
    const hfx_value *wv = n->in[1];
    int rank = n->attrs.rank;
    int64_t cout = wv->dims[0].c, groups = n->attrs.ints[0], s[2] = {1, 1}, p[2] = {0, 0};
    for (int i = 0; i < rank; i++) s[i] = n->attrs.ints[1 + 2 * i], p[i] = n->attrs.ints[2 + 2 * i];
    char attr[256];
    if (rank == 1)
        snprintf(attr, sizeof attr, "strides=\"%lld\" dilations=\"1\" pads_begin=\"%lld\" pads_end=\"%lld\" "
                 "auto_pad=\"explicit\"", (long long)s[0], (long long)p[0], (long long)p[0]);
    else
        snprintf(attr, sizeof attr, "strides=\"%lld,%lld\" dilations=\"1,1\" pads_begin=\"%lld,%lld\" "
                 "pads_end=\"%lld,%lld\" auto_pad=\"explicit\"", (long long)s[0], (long long)s[1], (long long)p[0],
                 (long long)p[1], (long long)p[0], (long long)p[1]);
    if (groups > 1) { /* [Cout, Cin/g, *k] → [g, Cout/g, Cin/g, *k] */
        int64_t shape[5] = {groups, cout / groups, wv->dims[1].c, wv->dims[2].c, rank == 2 ? wv->dims[3].c : 0};
        w = reshape(m, w, 3 + rank, shape);
    }
    ov_ref in[2] = {x, w};
    ov_ref y = layer(m, groups > 1 ? "GroupConvolution" : type, "opset1", attr, 2, in, 1);
    if (n->n_in < 3) return y;
    return op2(m, "Add", y, reshape(m, val(m, n->in[2]), 2 + rank, (int64_t[]){1, cout, 1, 1}));
}

/* largest first, stable: port 0 the values, port 1 the i64 indices */
static ov_ref lower_top_k(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[2] = {x, int_scalar(m, n->attrs.k)};
    ov_ref tk = layer(m, type, "opset11",
                      "axis=\"-1\" mode=\"max\" sort=\"value\" index_element_type=\"i64\" stable=\"true\"", 2, in, 2);
    if (!m->st) m->layers[tk.layer].out_dtype = HFX_DTYPE_F32;
    return tk;
}

static ov_ref lower_gather_elements(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref gin[2] = {x, val(m, n->in[1])};
    char attr[32];
    snprintf(attr, sizeof attr, "axis=\"%lld\"", (long long)n->attrs.axis);
    return layer(m, type, "opset6", attr, 2, gin, 1);
}

static ov_ref lower_scatter_elements(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref sin[4] = {x, val(m, n->in[1]), val(m, n->in[2]), int_scalar(m, n->attrs.axis)};
    return layer(m, type, "opset12", "reduction=\"none\" use_init_val=\"true\"", 4, sin, 1);
}

/* ScatterUpdate on axis 2: cache[:, :, slots[s]] = update[:, :, s] */
static ov_ref lower_cache_write(ov_model *m, const hfx_node *n, const char *type) {
    ov_ref x = val(m, n->in[0]);
    ov_ref in[4] = {x, val(m, n->in[2]), val(m, n->in[1]), int_scalar(m, 2)};
    return layer(m, type, "opset3", NULL, 4, in, 1);
}

/* A row of the table: its op's support and, lowered, its lowering. */
typedef struct ov_rule {
    hfx_op_support s;
    ov_lower_fn *lower;
} ov_rule;

#define ROW(op, fate, how, lower) {{HFX_OP_##op, HFX_OP_##fate, how}, lower}

/* Every IR op in OpenVINO, in ops.def's order: the layer type its node becomes, and how. */
static const ov_rule rules[] = {
    ROW(ADD, LOWERED, "Add", simple),
    ROW(SUB, LOWERED, "Subtract", simple),
    ROW(MUL, LOWERED, "Multiply", simple),
    ROW(DIV, LOWERED, "Divide", simple),
    ROW(POW, LOWERED, "Power", simple),
    ROW(MIN, LOWERED, "Minimum", simple),
    ROW(MAX, LOWERED, "Maximum", simple),
    ROW(BITWISE_XOR, LOWERED, "BitwiseXor", lower_bitwise),
    ROW(EQUAL, LOWERED, "Equal", simple),
    ROW(LESS, LOWERED, "Less", simple),
    ROW(LESS_EQUAL, LOWERED, "LessEqual", simple),
    ROW(GREATER, LOWERED, "Greater", simple),
    ROW(GREATER_EQUAL, LOWERED, "GreaterEqual", simple),
    ROW(AND, LOWERED, "LogicalAnd", simple),
    ROW(OR, LOWERED, "LogicalOr", simple),
    ROW(WHERE, LOWERED, "Select", lower_where),
    ROW(NEG, LOWERED, "Negative", simple),
    ROW(NOT, LOWERED, "LogicalNot", simple),
    ROW(SQRT, LOWERED, "Sqrt", simple),
    ROW(RECIPROCAL, LOWERED, "Divide", lower_reciprocal), /* 1 / x */
    ROW(EXP, LOWERED, "Exp", simple),
    ROW(LOG, LOWERED, "Log", simple),
    ROW(SIGMOID, LOWERED, "Sigmoid", simple),
    ROW(TANH, LOWERED, "Tanh", simple),
    ROW(ERF, LOWERED, "Erf", simple),
    ROW(COS, LOWERED, "Cos", simple),
    ROW(SIN, LOWERED, "Sin", simple),
    ROW(CAST, LOWERED, "Convert", lower_cast),
    ROW(MATMUL, LOWERED, "MatMul", lower_matmul),
    /* MatMul transpose_b; a quantized weight in NNCF's decompression pattern */
    ROW(LINEAR, LOWERED, "MatMul", lower_linear),
    ROW(RMS_NORM, EXPANDED, "Power, ReduceMean, Add, Sqrt, Divide, Multiply", NULL),
    ROW(SOFTMAX, LOWERED, "SoftMax", lower_softmax),
    ROW(CUMSUM, LOWERED, "CumSum", lower_cumsum),
    ROW(CONV, LOWERED, "Convolution", lower_conv),
    /* where hfx_ov_keeps keeps it (float32, no soft-cap, no sinks, no sliding window in the
     * graph); else expanded into MatMul, Multiply, Add, SoftMax, MatMul */
    ROW(ATTENTION, LOWERED, "ScaledDotProductAttention", lower_attention),
    ROW(TOP_K, LOWERED, "TopK", lower_top_k),
    ROW(TOP_K_MASK, EXPANDED, "TopK, ScatterElementsUpdate", NULL),
    ROW(GATHER_ELEMENTS, LOWERED, "GatherElements", lower_gather_elements),
    ROW(SCATTER_ELEMENTS, LOWERED, "ScatterElementsUpdate", lower_scatter_elements),
    ROW(REDUCE_MEAN, LOWERED, "ReduceMean", lower_reduce),
    ROW(REDUCE_MAX, LOWERED, "ReduceMax", lower_reduce),
    ROW(REDUCE_SUM, LOWERED, "ReduceSum", lower_reduce),
    ROW(RESHAPE, LOWERED, "Reshape", lower_reshape),
    ROW(TRANSPOSE, LOWERED, "Transpose", lower_transpose),
    ROW(UNSQUEEZE, LOWERED, "Unsqueeze", lower_unsqueeze),
    ROW(CONCAT, LOWERED, "Concat", lower_concat),
    ROW(SLICE, LOWERED, "Slice", lower_slice),
    ROW(GATHER, LOWERED, "Gather", lower_gather),
    ROW(SHAPE, LOWERED, "ShapeOf", lower_shape),
    ROW(RANGE, LOWERED, "Range", lower_range),
    ROW(EXPAND, LOWERED, "Broadcast", lower_expand),
    ROW(CACHE_WRITE, LOWERED, "ScatterUpdate", lower_cache_write),
};
HFX_OP_TABLE_COVERS(rules, "openvino");

#undef ROW

const hfx_op_support *hfx_ov_op_support(hfx_op op) {
    return (unsigned)op < HFX_OP_COUNT_ ? &rules[op].s : NULL;
}

static ov_ref lower_node(ov_model *m, const hfx_node *n) {
    const ov_rule *r = &rules[n->op];
    if (r->s.fate != HFX_OP_LOWERED) {
        if (!m->st) m->st = hfx_op_not_lowered("openvino", &r->s, m->err);
        return (ov_ref){0, 0};
    }
    return r->lower(m, n, r->s.how);
}

/* ---- inputs, outputs, state ---- */

static void shape_text(const hfx_graph *g, const hfx_value *v, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < v->rank && k < n - 48; i++) {
        hfx_dim d = v->dims[i];
        if (i) buf[k++] = ',';
        if (hfx_dim_is_const(d)) {
            k += (size_t)snprintf(buf + k, n - k, "%lld", (long long)d.c);
        } else if (d.n == 1 && d.coef[0] == 1 && d.c == 0 &&
                   (g->symbols[d.sym[0]].min > 1 || g->symbols[d.sym[0]].max < INT32_MAX)) {
            const hfx_symbol *s = &g->symbols[d.sym[0]];
            k += (size_t)snprintf(buf + k, n - k, "%lld..%lld", (long long)s->min, (long long)s->max);
        } else {
            buf[k++] = '?';
            buf[k] = 0;
        }
    }
}

static ov_ref parameter(ov_model *m, const hfx_graph *g, const hfx_value *v) {
    char shape[512], data[640];
    shape_text(g, v, shape, sizeof shape);
    snprintf(data, sizeof data, "shape=\"%s\" element_type=\"%s\"", shape, hfx_ov_type(v->dtype));
    ov_ref r = layer(m, "Parameter", "opset1", data, 0, NULL, 1);
    if (!m->st) {
        m->layers[r.layer].out_dtype = v->dtype;
        m->layers[r.layer].name = v->name;
        m->layers[r.layer].out_names = v->name;
    }
    return r;
}

/* A declared state read and written by this graph: it becomes a variable. */
static const hfx_state *variable_of(const hfx_graph *g, const hfx_value *v, bool is_input) {
    const hfx_state *s = hfx_graph_state_of(g, v, is_input);
    return s && s->in && s->out ? s : NULL;
}

/* A state the first call computes and later calls keep (HFX_STATE_ONCE) whose value is `v`. */
static const hfx_state *kept_once(const hfx_graph *g, const hfx_value *v) {
    const hfx_state *s = hfx_graph_state_of(g, v, false);
    return s && s->update == HFX_STATE_ONCE ? s : NULL;
}

/* `r` (the computed value of a kept state) through a variable initialised with it: ReadValue
 * returns the computation's result after a reset and the stored one afterwards, and Assign stores
 * what it returned, as optimum-intel's stateful seq2seq decoders do (OpenVINO's CPU plugin then
 * skips the initialising subgraph while the variable is set). */
static ov_ref keep_once(ov_model *m, const hfx_value *v, ov_ref r) {
    char data[640], shape[256];
    size_t k = 0;
    shape[0] = 0;
    for (int i = 0; i < v->rank && k < sizeof shape - 32; i++) /* batch and length vary: "?" */
        k += hfx_dim_is_const(v->dims[i]) ? (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", i ? "," : "",
                                                             (long long)v->dims[i].c)
                                          : (size_t)snprintf(shape + k, sizeof shape - k, "%s?", i ? "," : "");
    snprintf(data, sizeof data, "variable_id=\"%s\" variable_type=\"%s\" variable_shape=\"%s\"", v->name,
             hfx_ov_type(v->dtype), shape);
    ov_ref rv = layer(m, "ReadValue", "opset6", data, 1, &r, 1);
    snprintf(data, sizeof data, "variable_id=\"%s\"", v->name);
    layer(m, "Assign", "opset6", data, 1, &rv, 0);
    return rv;
}

/* The variable that replaces a past input: ReadValue initialised to zeros of its shape, the batch
 * taken from input_ids and every other symbolic dim (a growing cache's length) 0 — an empty
 * [B, KV, 0, D] cache, or a convolution's zero state [B, C, K − 1] — reordered by beam_idx as beam
 * search needs. */
static ov_ref state_read(ov_model *m, const hfx_graph *g, const hfx_value *in, const hfx_value *out,
                         ov_ref input_ids, ov_ref beam_idx) {
    char data[640], shape[256];
    int64_t zero_idx = 0, rest[HFX_MAX_RANK];
    if (in->rank < 1) { /* no batch axis to start it from, and zeros would not be its first value */
        hfx_fail_once(&m->st, m->err, HFX_ERR_UNSUPPORTED,
                      "openvino: the state '%s' is a scalar (io \"seed\" carries a sliding layer's window so), which "
                      "a stateful model cannot start from zeros; export it with \"stateful\": false", in->name);
        return (ov_ref){0, 0};
    }
    size_t k = (size_t)snprintf(shape, sizeof shape, "?");
    for (int d = 1; d < in->rank; d++) {
        bool fixed = hfx_dim_is_const(in->dims[d]);
        rest[d - 1] = fixed ? in->dims[d].c : 0;
        if (k < sizeof shape) {
            if (fixed) k += (size_t)snprintf(shape + k, sizeof shape - k, ",%lld", (long long)in->dims[d].c);
            else k += (size_t)snprintf(shape + k, sizeof shape - k, ",?");
        }
    }
    ov_ref shp = layer(m, "ShapeOf", "opset3", "output_type=\"i64\"", 1, &input_ids, 1);
    ov_ref gin[3] = {shp, ints(m, 1, &zero_idx), int_scalar(m, 0)};
    ov_ref batch = layer(m, "Gather", "opset8", "batch_dims=\"0\"", 3, gin, 1);
    ov_ref cin[2] = {batch, ints(m, in->rank - 1, rest)};
    ov_ref full = layer(m, "Concat", "opset1", "axis=\"0\"", 2, cin, 1);
    ov_ref bin[2] = {float_scalar(m, in->dtype, 0.0), full};
    ov_ref init = layer(m, "Broadcast", "opset3", "mode=\"numpy\"", 2, bin, 1);
    snprintf(data, sizeof data, "variable_id=\"%s%s\" variable_type=\"%s\" variable_shape=\"%s\"",
             in->name, out->name, hfx_ov_type(in->dtype), shape);
    ov_ref rv = layer(m, "ReadValue", "opset6", data, 1, &init, 1);
    ov_ref gin2[3] = {rv, beam_idx, int_scalar(m, 0)};
    (void)g;
    return layer(m, "Gather", "opset8", "batch_dims=\"0\"", 3, gin2, 1);
}

hfx_status hfx_ov_lower(const hfx_graph *g, const hfx_ov_options *o, ov_blobs *blobs,
                        ov_model *m, hfx_error *err) {
    memset(m, 0, sizeof *m);
    m->o = o;
    m->g = g;
    m->blobs = blobs;
    m->err = err;
    m->arena = hfx_arena_new();
    m->val = malloc(((size_t)g->n_values + 1) * sizeof *m->val);
    if (!m->arena || !m->val) {
        hfx_fail_once(&m->st, m->err, HFX_ERR_NOMEM, "out of memory");
        return m->st;
    }
    for (int i = 0; i < g->n_values; i++) m->val[i] = (ov_ref){-1, 0};

    /* inputs; in a stateful graph the cache inputs become variables, fed after the others */
    ov_ref input_ids = {-1, 0}, beam_idx = {-1, 0};
    bool stateful = false;
    for (int i = 0; i < g->n_inputs; i++) {
        const hfx_value *in = g->inputs[i];
        if (o->stateful && variable_of(g, in, true)) {
            stateful = true;
            continue;
        }
        m->val[in->id] = parameter(m, g, in);
        /* the batch of the variables' initial value: the token ids' (an encoder-decoder's in the seed's
         * profile are decoder_input_ids; a VLM's language model takes embeddings) */
        if (!strcmp(in->name, "input_ids") || !strcmp(in->name, "decoder_input_ids") || !strcmp(in->name, "inputs_embeds"))
            input_ids = m->val[in->id];
    }
    if (stateful) {
        if (input_ids.layer < 0) hfx_fail_once(&m->st, m->err, HFX_ERR_INTERNAL, "openvino: a stateful graph needs input_ids");
        hfx_value beam = {.name = "beam_idx", .dtype = HFX_DTYPE_I32, .rank = 1,
                          .dims = {g->inputs[0]->dims[0]}};
        beam_idx = parameter(m, g, &beam);
        for (int i = 0; i < g->n_inputs && !m->st; i++) {
            const hfx_state *s = variable_of(g, g->inputs[i], true);
            if (s) m->val[g->inputs[i]->id] = state_read(m, g, s->in, s->out, input_ids, beam_idx);
        }
    }
    for (int i = 0; i < g->n_nodes && !m->st; i++) { /* output k of a node is port k after its first */
        const hfx_node *n = g->nodes[i];
        ov_ref r = lower_node(m, n);
        for (int k = 0; k < n->n_out && !m->st; k++) {
            ov_ref out = {r.layer, r.port + k};
            m->val[n->out[k]->id] = stateful && kept_once(g, n->out[k]) ? keep_once(m, n->out[k], out) : out;
        }
    }

    /* outputs: a Result each, or an Assign for a stateful cache output */
    for (int i = 0; i < g->n_outputs && !m->st; i++) {
        const hfx_value *v = g->outputs[i];
        ov_ref r = val(m, v);
        if (stateful && kept_once(g, v)) continue; /* its Assign is in place */
        const hfx_state *s = stateful ? variable_of(g, v, false) : NULL;
        const hfx_value *past = s ? s->in : NULL;
        if (past) {
            char data[256];
            snprintf(data, sizeof data, "variable_id=\"%s%s\"", past->name, v->name);
            layer(m, "Assign", "opset6", data, 1, &r, 0);
            continue;
        }
        if (m->st) break;
        m->layers[r.layer].out_names = v->name;
        ov_ref res = layer(m, "Result", "opset1", NULL, 1, &r, 0);
        if (!m->st) m->layers[res.layer].out_names = v->name; /* written as output_names */
    }
    return m->st;
}

void hfx_ov_model_free(ov_model *m) {
    free(m->layers);
    free(m->edges);
    free(m->val);
    hfx_arena_free(m->arena);
    memset(m, 0, sizeof *m);
}
