/* The dynamo format's descriptor and its write: per component, the ATen program and its .pt2
 * archive (records under the file's stem, as torch.export.save names them). A growing cache is
 * plain inputs and outputs; a static cache is the new content of its inputs (input mutation).
 * In the Python system's profile ("io": "seed") each program is called as that system's are:
 * keywords, transformers' cache objects, a ModelOutput (seed_call.c). */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/aten_lower.h"
#include "fmt/dynamo/dynamo.h"
#include "fmt/dynamo/pt2.h"

static hfx_status dynamo_write(const hfx_format_graph *gs, int n, hfx_outdir *out, hfx_error *err) {
    hfx_status st = HFX_OK;
    for (int c = 0; c < n && !st; c++) {
        int64_t hints[16];
        hfx_aten_default_hints(gs[c].g, hints); /* the Python system's call sets its own (hfx_pt2_seed_call) */
        const hfx_seed_call *seed = gs[c].seed_call;
        hfx_aten_program *p;
        st = hfx_aten_lower(gs[c].g, hints, (seed ? HFX_ATEN_RETURNS_UPDATED_STATE : 0) | HFX_ATEN_DEQUANTIZE, &p, err);
        if (st) break;
        hfx_pt2_call call;
        st = seed                    ? hfx_pt2_seed_call(p, seed, &call, err)
             : gs[c].output_class ? hfx_pt2_keyword_call(p, gs[c].output_class, &call, err)
                                  : hfx_pt2_positional_call(p, &call, err);
        char root[96];
        size_t len = strlen(gs[c].file);
        if (len > 4 && !strcmp(gs[c].file + len - 4, ".pt2")) len -= 4;
        snprintf(root, sizeof root, "%.*s", (int)len, gs[c].file);
        if (!st) {
            st = hfx_pt2_write(p, &call, root, out, gs[c].file, err);
            hfx_pt2_call_free(&call);
        }
        hfx_aten_program_free(p);
    }
    return st;
}

const hfx_format hfx_format_dynamo = {
    .name = "dynamo", .summary = "torch.export program (.pt2), for torch.export.load",
    .graph_ext = ".pt2", .seed_io = true, .seed_prefix = "", .keeps = hfx_aten_keeps, .write = dynamo_write,
    /* weight-only int8 and int4 as PT2E's programs read them (symmetric; per output channel, or int4 in groups): the
       codes and float32 scales, dequantized by quantized_decomposed before each linear (aten_lower.c) */
    .quant = {true, HFX_QUANT_RULE_TORCHAO, HFX_QUANT_RULE_TORCHAO, 32, 0, true, false, false}};
