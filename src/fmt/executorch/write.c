/* The executorch format's descriptor and its write: per component, the ATen program, its
 * ExecuTorch plan on the portable kernels, the memory plan, and the .pte file. */
#include <string.h>

#include "base/status.h"
#include "fmt/aten_lower.h"
#include "fmt/executorch/executorch.h"
#include "fmt/executorch/program.h"

enum { ET_OPT_BACKEND, ET_OPT_ALLOC_GRAPH_INPUT, ET_OPT_ALLOC_GRAPH_OUTPUT, ET_OPT_ALLOC_MUTABLE_BUFFERS, ET_N_OPTIONS };
enum { BACKEND_DEFAULT, BACKEND_PORTABLE, BACKEND_XNNPACK }; /* choice values: 1-based, 0 null */

static const hfx_format_option et_options[ET_N_OPTIONS] = {
    /* the seed's default is "xnnpack"; hfx writes the portable kernels until its XNNPACK delegate
     * lands, so null means "portable" and "xnnpack" is refused by name */
    [ET_OPT_BACKEND] = {"backend", HFX_OPTION_CHOICE, 0, 0, 0, false, NULL,
                        (const char *const[]){"portable", "xnnpack", NULL}, NULL},
    [ET_OPT_ALLOC_GRAPH_INPUT] = {"alloc_graph_input", HFX_OPTION_BOOL, 1, 0, 1, false, NULL},
    [ET_OPT_ALLOC_GRAPH_OUTPUT] = {"alloc_graph_output", HFX_OPTION_BOOL, 1, 0, 1, false, NULL},
    [ET_OPT_ALLOC_MUTABLE_BUFFERS] = {"alloc_mutable_buffers", HFX_OPTION_BOOL, 1, 0, 1, false, NULL},
};

/* An example size per symbol for the ATen lowering (it needs one; the plan uses upper bounds). */
static void symbol_hints(const hfx_graph *g, int64_t *hints) {
    for (int s = 0; s < g->n_symbols; s++) {
        int64_t h = s == 0 ? 2 : 16;
        if (h < g->symbols[s].min) h = g->symbols[s].min;
        if (h > g->symbols[s].max) h = g->symbols[s].max;
        hints[s] = h;
    }
}

/* ExecuTorch has no attention kernel among its portable ones: only linear is kept. */
static bool et_keeps(const hfx_graph *g, const hfx_node *n) {
    (void)g;
    return n->op == HFX_OP_LINEAR;
}

static hfx_status et_write(const hfx_format_graph *gs, int n, hfx_outdir *out, hfx_error *err) {
    hfx_status st = HFX_OK;
    for (int c = 0; c < n && !st; c++) {
        const hfx_graph *g = gs[c].g;
        if (gs[c].opt[ET_OPT_BACKEND] == BACKEND_XNNPACK)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                            "executorch: backend 'xnnpack' is not written yet; 'portable' (the default) runs the "
                            "same program on ExecuTorch's portable kernels");
        if (g->n_symbols > 16) return hfx_fail(err, HFX_ERR_UNSUPPORTED, "executorch: over 16 dynamic dims");
        int64_t hints[16];
        symbol_hints(g, hints);
        hfx_aten_program *p;
        st = hfx_aten_lower(g, hints, false, &p, err);
        if (st) break;
        hfx_et_program *e;
        st = hfx_et_lower(p, &e, err);
        if (!st) {
            hfx_et_plan(e, (hfx_et_alloc){gs[c].opt[ET_OPT_ALLOC_GRAPH_INPUT] != 0,
                                          gs[c].opt[ET_OPT_ALLOC_GRAPH_OUTPUT] != 0});
            st = e->oom ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory") : hfx_et_write(e, "forward", out, gs[c].file, err);
            hfx_et_program_free(e);
        }
        hfx_aten_program_free(p);
    }
    return st;
}

const hfx_format hfx_format_executorch = {
    .name = "executorch", .summary = "ExecuTorch program (.pte) on the portable kernels, for the ExecuTorch runtime",
    .graph_ext = ".pte", .bounded_dims = true, .options = et_options, .n_options = ET_N_OPTIONS, .keeps = et_keeps, .write = et_write};
