/* Per-format op support (op_table.h): the errors a table's rows give. */
#include "fmt/op_table.h"

hfx_status hfx_op_not_lowered(const char *format, const hfx_op_support *row, hfx_error *err) {
    const char *name = hfx_op_name(row->op);
    switch (row->fate) {
    case HFX_OP_REFUSED:
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: the IR op '%s' is refused: %s", format, name, row->how);
    case HFX_OP_EXPANDED:
        return hfx_fail(err, HFX_ERR_INTERNAL,
                        "%s: the IR op '%s' reached the lowering, but decompose.c expands it for this format (%s)",
                        format, name, row->how);
    default: return hfx_fail(err, HFX_ERR_INTERNAL, "%s: the IR op '%s' is lowered, not refused", format, name);
    }
}

hfx_status hfx_op_table_check(const hfx_graph *g, const char *format, hfx_op_table_fn rows, hfx_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        const hfx_op_support *row = rows(g->nodes[i]->op);
        if (!row || row->op != g->nodes[i]->op)
            return hfx_fail(err, HFX_ERR_INTERNAL, "%s: no row for the IR op '%s' in its op table", format,
                            hfx_op_name(g->nodes[i]->op));
        if (row->fate != HFX_OP_LOWERED) return hfx_op_not_lowered(format, row, err);
    }
    return HFX_OK;
}
