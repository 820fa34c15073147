/* The dynamo format's descriptor and its write: per component, the ATen program and its .pt2
 * archive (records under the file's stem, as torch.export.save names them). A growing cache is
 * plain inputs and outputs; a static cache is the new content of its inputs (input mutation). */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/aten_lower.h"
#include "fmt/dynamo/dynamo.h"
#include "fmt/dynamo/pt2.h"

/* An example size for each symbol (torch.export's hint): 2 × 16 like the default sample, kept
 * inside the symbol's range. */
static void symbol_hints(const hfx_graph *g, int64_t *hints) {
    for (int s = 0; s < g->n_symbols; s++) {
        int64_t h = s == 0 ? 2 : 16;
        if (h < g->symbols[s].min) h = g->symbols[s].min;
        if (h > g->symbols[s].max) h = g->symbols[s].max;
        hints[s] = h;
    }
}

static hfx_status dynamo_write(const hfx_format_graph *gs, int n, hfx_outdir *out, hfx_error *err) {
    hfx_status st = HFX_OK;
    for (int c = 0; c < n && !st; c++) {
        int64_t hints[16];
        symbol_hints(gs[c].g, hints);
        hfx_aten_program *p;
        st = hfx_aten_lower(gs[c].g, hints, &p, err);
        if (st) break;
        char root[96];
        size_t len = strlen(gs[c].file);
        if (len > 4 && !strcmp(gs[c].file + len - 4, ".pt2")) len -= 4;
        snprintf(root, sizeof root, "%.*s", (int)len, gs[c].file);
        st = hfx_pt2_write(p, root, out, gs[c].file, err);
        hfx_aten_program_free(p);
    }
    return st;
}

const hfx_format hfx_format_dynamo = {
    .name = "dynamo", .summary = "torch.export program (.pt2), for torch.export.load",
    .graph_ext = ".pt2", .keeps = hfx_aten_keeps, .write = dynamo_write};
