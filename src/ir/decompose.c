/* The decomposition pass: the IR's high-level ops become primitive ops, once, for every
 * backend. Each expansion computes what transformers' eager code computes, op for op (the
 * oracle tests hold every backend to 1e-4 of it), and the RMSNorm spelling is the one ONNX
 * Runtime fuses into SimplifiedLayerNormalization (test_ort_fusion.py checks that it does).
 * A backend names the high-level nodes it writes itself (hfx_keep_fn); everything else it sees
 * is primitive. */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "ir/graph.h"

/* x·rsqrt(mean(x²) + eps) in float32, written Pow → ReduceMean → Add → Sqrt → Div; then the
 * weight: w·(that, cast back) (Llama), or (that)·(w + offset) in float32, cast back (Gemma). */
static hfx_value *rms_norm(hfx_graph *g, const hfx_node *n) {
    hfx_value *x = n->in[0], *w = n->in[1];
    hfx_dtype dt = x->dtype;
    int64_t last = -1;
    x = hfx_cast(g, x, HFX_DTYPE_F32);
    hfx_value *var = hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_POW, x, hfx_const_f32(g, 2.0f)), 1, &last);
    hfx_value *denom = hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, var, hfx_const_f32(g, (float)n->attrs.f0)));
    hfx_value *y = hfx_op2(g, HFX_OP_DIV, x, denom);
    if (n->attrs.f1 != 0) {
        w = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, w, HFX_DTYPE_F32), hfx_const_f32(g, (float)n->attrs.f1));
        y = hfx_op2(g, HFX_OP_MUL, y, w);
        return hfx_cast(g, y, dt);
    }
    return hfx_op2(g, HFX_OP_MUL, w, hfx_cast(g, y, dt));
}

/* softmax_f32(q·kᵀ·scale [soft-capped] + bias)·v. Grouped heads without copies: q as
 * [B,KV,G,S,D] against k, v and the bias with a broadcast axis at 2. */
static hfx_value *attention(hfx_graph *g, const hfx_node *n) {
    hfx_value *q = n->in[0], *k = n->in[1], *v = n->in[2], *bias = n->in[3];
    const hfx_value *out = n->out[0];
    hfx_dtype dt = q->dtype;
    int64_t kv = k->dims[1].c, group = q->dims[1].c / kv;
    if (group > 1) {
        hfx_dim grouped[5] = {q->dims[0], hfx_dim_const(kv), hfx_dim_const(group), q->dims[2], q->dims[3]};
        q = hfx_reshape(g, q, 5, grouped);
        k = hfx_unsqueeze(g, k, 2);
        v = hfx_unsqueeze(g, v, 2);
        bias = hfx_unsqueeze(g, bias, 2);
    }
    int r = q->rank;
    int64_t perm[5] = {0, 1, 2, 3, 4};
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    hfx_value *s = hfx_op2(g, HFX_OP_MATMUL, q, hfx_transpose(g, k, r, perm));
    s = hfx_op2(g, HFX_OP_MUL, s, hfx_const_scalar(g, dt, n->attrs.f0));
    if (n->attrs.f1 > 0) { /* cap·tanh(s / cap) */
        hfx_value *cap = hfx_const_scalar(g, dt, n->attrs.f1);
        s = hfx_op2(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_TANH, hfx_op2(g, HFX_OP_DIV, s, cap)), cap);
    }
    s = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, s, HFX_DTYPE_F32), bias);
    hfx_value *p;
    if (n->n_in == 5 && n->in[4]) { /* softmax over [s, sink] without the sink's column:
                                       exp(s − m) / (Σ exp(s − m) + exp(sink − m)), m the row's max of both */
        hfx_dim sink_dims[5] = {hfx_dim_const(1), hfx_dim_const(kv), hfx_dim_const(group), hfx_dim_const(1),
                                hfx_dim_const(1)};
        hfx_value *sink = group > 1 ? hfx_reshape(g, n->in[4], 5, sink_dims)
                                    : hfx_reshape(g, n->in[4], 4, (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(kv),
                                                                              hfx_dim_const(1), hfx_dim_const(1)});
        int64_t last = -1;
        hfx_value *m = hfx_op2(g, HFX_OP_MAX, hfx_reduce(g, HFX_OP_REDUCE_MAX, s, 1, &last), sink);
        hfx_value *e = hfx_op1(g, HFX_OP_EXP, hfx_op2(g, HFX_OP_SUB, s, m));
        hfx_value *den = hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_SUM, e, 1, &last),
                                 hfx_op1(g, HFX_OP_EXP, hfx_op2(g, HFX_OP_SUB, sink, m)));
        p = hfx_cast(g, hfx_op2(g, HFX_OP_DIV, e, den), dt);
    } else {
        p = hfx_cast(g, hfx_softmax(g, s, -1), dt);
    }
    hfx_value *o = hfx_op2(g, HFX_OP_MATMUL, p, v);
    return group > 1 ? hfx_reshape(g, o, 4, out->dims) : o;
}

/* x·wᵀ (+ bias): the product stays a linear when the backend keeps it (its weight layout is the
 * backend's business), else a MatMul against the transposed view; the bias is always an Add. */
static hfx_value *linear(hfx_graph *g, const hfx_node *n, bool keep_product) {
    hfx_value *x = n->in[0], *w = n->in[1];
    if (n->attrs.quant && !keep_product) { /* a quantized weight is the format's own node */
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "this format has no quantized form of a linear yet");
        return NULL;
    }
    hfx_value *y = keep_product ? hfx_linear(g, x, w, NULL)
                                : hfx_op2(g, HFX_OP_MATMUL, x, hfx_const_transpose2d(g, w));
    if (y && y->producer && n->attrs.quant) y->producer->attrs.quant = n->attrs.quant;
    return n->n_in == 3 ? hfx_op2(g, HFX_OP_ADD, y, n->in[2]) : y;
}

/* x where it is among the k largest of its row, 0 elsewhere: TopK scattered back into zeros. */
static hfx_value *top_k_mask(hfx_graph *g, const hfx_node *n) {
    hfx_value *x = n->in[0], *values, *indices;
    hfx_top_k(g, x, n->attrs.k, &values, &indices);
    hfx_value *zeros = hfx_op2(g, HFX_OP_MUL, x, hfx_const_f32(g, 0.0f));
    return hfx_scatter_elements(g, zeros, indices, values, -1);
}

/* A reshape whose target moves more than one symbolic dim: the target shape built at run time
 * from the input's (Shape → Gather per symbolic dim, constants for the rest → Concat). */
static hfx_value *runtime_reshape(hfx_graph *g, const hfx_node *n) {
    hfx_value *x = n->in[0];
    const hfx_attrs *a = &n->attrs;
    int64_t plan[HFX_MAX_RANK];
    int source[HFX_MAX_RANK];
    hfx_reshape_plan(x, a->rank, a->dims, plan, source);
    hfx_value *shape = hfx_shape_of(g, x), *pieces[HFX_MAX_RANK];
    const int64_t one = 1;
    for (int i = 0; i < a->rank; i++) {
        if (hfx_dim_is_const(a->dims[i])) {
            pieces[i] = hfx_const_bytes(g, HFX_DTYPE_I64, 1, &one, &a->dims[i].c);
            continue;
        }
        if (source[i] < 0) {
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "decompose: reshape to a dim its input does not have");
            return x;
        }
        int64_t j = source[i];
        pieces[i] = hfx_gather(g, shape, hfx_const_bytes(g, HFX_DTYPE_I64, 1, &one, &j), 0);
    }
    hfx_value *in[2] = {x, hfx_concat(g, a->rank, pieces, 0)};
    return hfx_node_add(g, HFX_OP_RESHAPE, 2, in, a);
}

static bool needs_runtime_shape(const hfx_node *n) {
    int64_t plan[HFX_MAX_RANK];
    int source[HFX_MAX_RANK];
    return n->op == HFX_OP_RESHAPE && n->n_in == 1 &&
           hfx_reshape_plan(n->in[0], n->attrs.rank, n->attrs.dims, plan, source) > 1;
}

/* Whether the pass rewrites node n (given whether the backend keeps it). */
static bool expands(const hfx_node *n, bool kept) {
    switch (n->op) {
    case HFX_OP_LINEAR: return n->n_in == 3 || !kept;
    case HFX_OP_RMS_NORM: case HFX_OP_ATTENTION: case HFX_OP_TOP_K_MASK: return !kept;
    case HFX_OP_RESHAPE: return needs_runtime_shape(n);
    default: return false;
    }
}

static bool push_node(hfx_graph *g, hfx_node *n) {
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
        hfx_node **p = realloc(g->nodes, (size_t)cap * sizeof *p);
        if (!p) return false;
        g->nodes = p;
        g->cap_nodes = cap;
    }
    n->id = g->n_nodes;
    g->nodes[g->n_nodes++] = n;
    return true;
}

hfx_status hfx_decompose(hfx_graph *g, hfx_keep_fn keep, hfx_error *err) {
    if (g->failed) return hfx_graph_status(g, err);
    int n_old = g->n_nodes;
    hfx_node **old = g->nodes;
    bool *kept = calloc((size_t)n_old + 1, sizeof *kept);
    if (!kept) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    /* decided on the whole graph as built: a backend may look at every node (OpenVINO asks
     * whether any attention is windowed) */
    for (int i = 0; i < n_old; i++) kept[i] = keep && keep(g, old[i]);
    g->nodes = NULL;
    g->n_nodes = g->cap_nodes = 0;
    for (int i = 0; i < n_old && !g->failed; i++) {
        hfx_node *n = old[i];
        if (!expands(n, kept[i])) {
            if (!push_node(g, n)) hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            continue;
        }
        int before = g->n_nodes;
        hfx_value *r;
        switch (n->op) {
        case HFX_OP_LINEAR: r = linear(g, n, kept[i]); break;
        case HFX_OP_RMS_NORM: r = rms_norm(g, n); break;
        case HFX_OP_ATTENTION: r = attention(g, n); break;
        case HFX_OP_TOP_K_MASK: r = top_k_mask(g, n); break;
        default: r = runtime_reshape(g, n); break;
        }
        if (g->failed) break;
        /* the expansion's last node now produces the old output, so its users need no change */
        hfx_node *last = g->n_nodes > before ? g->nodes[g->n_nodes - 1] : NULL;
        if (!last || last->out[0] != r) {
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "decompose: the expansion of %s ends in no new node",
                           hfx_op_name(n->op));
            break;
        }
        last->out[0] = n->out[0];
        n->out[0]->producer = last;
    }
    free(old);
    free(kept);
    return hfx_graph_status(g, err);
}
