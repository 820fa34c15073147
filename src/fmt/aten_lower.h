/* The IR → ATen lowering shared by the torch-side formats (fmt/aten.h): after the format's
 * decomposition, each IR node becomes ATen calls; shape arithmetic on i64 values (Shape, Gather
 * of a dim, Range bounds, computed Reshape targets) becomes SymInt values (aten.sym_size.int and
 * Python's operator module), the way torch.export records it. Weights that are plain views of a
 * checkpoint tensor become parameters named by that tensor; computed tables become lifted
 * constants. */
#ifndef HFX_FMT_ATEN_LOWER_H
#define HFX_FMT_ATEN_LOWER_H

#include "fmt/aten.h"
#include "fmt/op_table.h"

enum {
    HFX_ATEN_RETURNS_UPDATED_STATE = 1, /* state written back whole is also a user output */
    HFX_ATEN_DEQUANTIZE = 2,            /* quantized linears' weights as codes and scales dequantized in the program */
};

/* Lower g (verified, decomposed for the format). `hints` gives an example size for each of g's
 * symbols. State the graph reads and writes back whole (a static cache written at slots, a
 * counter or a recurrent state replaced) becomes the new content of its input (the caller's
 * tensor is updated by the call); with HFX_ATEN_RETURNS_UPDATED_STATE in `flags` that new content is also a user
 * output, as the Python system's programs return their cache. A node read stored quantized keeps its hfx_quant
 * (hfx_aten_node.quant: the format's kernels read the codes), or with HFX_ATEN_DEQUANTIZE its weight is int8 codes and
 * float32 scales dequantized by PT2E's quantized_decomposed ops (other quantizations refused). Ops the table does not
 * lower, and cases of lowered ops without an ATen form yet, are HFX_ERR_UNSUPPORTED naming them. */
hfx_status hfx_aten_lower(const hfx_graph *g, const int64_t *hints, unsigned flags, hfx_aten_program **out,
                          hfx_error *err);

/* What torch.export makes of `op` (op_table.h): the row of aten_lower.c's table, which the
 * lowering reads. */
const hfx_op_support *hfx_aten_op_support(hfx_op op);

/* The ATen operator a node of `op` becomes (HFX_ATEN_COUNT_: none, or not lowered). */
hfx_aten_op hfx_aten_op_of(hfx_op op);

/* An example size for each of g's symbols (torch.export's hint; hfx_aten_lower needs one): 2 for
 * the first (the batch), 16 for the others, like the default sample, kept inside each symbol's
 * range. `hints` holds g->n_symbols entries. */
void hfx_aten_default_hints(const hfx_graph *g, int64_t *hints);
/* The derived symbols' hints (hfx_graph_symbol_derived) from the others' in `hints` (default_hints calls it; so must
 * whoever sets hints of their own). */
void hfx_aten_derived_hints(const hfx_graph *g, int64_t *hints);

/* The high-level IR nodes the torch-side formats keep (hfx_keep_fn): linear, and attention
 * without soft-capping (scaled_dot_product_attention). */
bool hfx_aten_keeps(const hfx_graph *g, const hfx_node *n);

#endif
