/* The quantization pass (graph.h: hfx_quantize_weights): which weights are stored quantized. A
 * weight qualifies when it is a checkpoint matrix (a computed table has no reference
 * quantizer) read only by linears and Gathers. Each reader is marked on its own: a head tied to
 * the embeddings can be quantized for its product while the lookup reads the float table, or
 * both read one quantized table (the plan's head_follows_table); the backends store one copy
 * per distinct quantization of a weight. */
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

/* The checkpoint matrix node n reads as a weight (a linear's, or the table of a lookup along
 * its rows), when it qualifies; NULL otherwise. */
static const hfx_value *weight_of(const hfx_graph *g, const hfx_node *n) {
    const hfx_value *w = n->op == HFX_OP_LINEAR                            ? n->in[1]
                         : n->op == HFX_OP_GATHER && n->attrs.axis == 0 ? n->in[0]
                                                                          : NULL;
    if (!w || !w->init || w->init->rank != 2 || !hfx_init_is_mapped(w->init) || read_otherwise(g, w)) return NULL;
    return w;
}

/* Whether a Gather of g looks rows up in w. */
static bool is_table(const hfx_graph *g, const hfx_value *w) {
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == HFX_OP_GATHER && weight_of(g, g->nodes[i]) == w) return true;
    return false;
}

/* Marks n to read its weight w as q (none when q->bits is 0; q->from_blocks: as its own blocks, where it has some a
 * quantized linear holds exactly, else float). */
static hfx_status mark(hfx_graph *g, hfx_node *n, const hfx_value *w, const hfx_quant *q, const char *what,
                       hfx_error *err) {
    hfx_quant stored;
    if (q->from_blocks && n->op == HFX_OP_LINEAR && hfx_quant_from_blocks(w->init, q->rule, q->layout, &stored))
        q = &stored;
    if (!q->bits) return HFX_OK;
    const char *why;
    if (!q->from_blocks && !hfx_quant_valid(q, w->init->shape[1], &why)) /* (stored blocks are what they are) */
        return hfx_fail(err, HFX_ERR_INVALID, "quantization: %d bits in blocks of %lld cannot be applied to %s '%s' "
                        "(%lld per row): it takes %s",
                        q->bits, (long long)q->block, what, w->init->source, (long long)w->init->shape[1], why);
    hfx_quant *copy = hfx_arena_alloc(g->arena, sizeof *copy);
    if (!copy) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    *copy = *q;
    n->attrs.quant = copy;
    return HFX_OK;
}

hfx_status hfx_quantize_weights(hfx_graph *g, const hfx_quant_plan *plan, hfx_quant_done *done, hfx_error *err) {
    memset(done, 0, sizeof *done);
    if (g->failed) return hfx_graph_status(g, err);
    int head = -1; /* the last linear that qualifies */
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == HFX_OP_LINEAR && weight_of(g, g->nodes[i])) head = i;
    hfx_status st = HFX_OK;
    for (int i = 0; i < g->n_nodes && !st; i++) {
        hfx_node *n = g->nodes[i];
        const hfx_value *w = weight_of(g, n);
        if (!w) continue;
        if (n->op == HFX_OP_GATHER) {
            st = mark(g, n, w, &plan->tables, "the table", err);
            done->tables += plan->tables.bits != 0;
            done->has_table = true;
            done->table = plan->tables;
        } else if (i == head) {
            const hfx_quant *q = plan->head_follows_table && is_table(g, w) ? &plan->tables : &plan->head;
            st = mark(g, n, w, q, "the head", err);
            done->has_head = true;
            done->head = n->attrs.quant ? *n->attrs.quant : (hfx_quant){0};
        } else {
            st = mark(g, n, w, &plan->linears, "the weight", err);
            done->linears += n->attrs.quant != NULL;
        }
    }
    return st;
}
