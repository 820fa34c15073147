/* The quantization pass (graph.h: hfx_quantize_linears): which linears store their weights
 * quantized. A weight qualifies when it is a checkpoint matrix: a computed table has no
 * reference quantizer. Other readers of the same weight keep its float form — a head tied to
 * the embeddings is quantized for its product while the embedding lookup (a Gather) reads the
 * float table — unless one is neither a Gather nor a linear. */
#include <string.h>

#include "base/status.h"
#include "ir/graph.h"

/* Whether value v feeds a node other than a linear or a Gather, or is a graph output. */
static bool read_otherwise(const hfx_graph *g, const hfx_value *v) {
    for (int i = 0; i < g->n_nodes; i++) {
        const hfx_node *n = g->nodes[i];
        if (n->op == HFX_OP_LINEAR || n->op == HFX_OP_GATHER) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v) return true;
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return true;
    return false;
}

hfx_status hfx_quantize_linears(hfx_graph *g, const hfx_quant *q, int *count, hfx_error *err) {
    *count = 0;
    if (g->failed) return hfx_graph_status(g, err);
    hfx_quant *copy = hfx_arena_alloc(g->arena, sizeof *copy);
    if (!copy) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    *copy = *q;
    for (int i = 0; i < g->n_nodes; i++) {
        hfx_node *n = g->nodes[i];
        const hfx_value *w = n->op == HFX_OP_LINEAR ? n->in[1] : NULL;
        if (!w || !w->init || w->init->rank != 2 || !hfx_init_is_mapped(w->init) || read_otherwise(g, w)) continue;
        const char *why;
        if (!hfx_quant_valid(q, w->init->shape[1], &why))
            return hfx_fail(err, HFX_ERR_INVALID, "quantization: %d bits in blocks of %lld cannot be applied to '%s' "
                            "(%lld inputs): it takes %s",
                            q->bits, (long long)q->block, w->init->source, (long long)w->init->shape[1], why);
        n->attrs.quant = copy;
        ++*count;
    }
    return HFX_OK;
}
