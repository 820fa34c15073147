/* The .pt2 archive writer (torch.export.save's layout) for an ATen program. Internal to the
 * dynamo backend. */
#ifndef HFX_FMT_DYNAMO_PT2_H
#define HFX_FMT_DYNAMO_PT2_H

#include "fmt/aten.h"
#include "io/outdir.h"

/* Write p as the archive `file` in out, its records under the folder `root` (the archive's
 * name without ".pt2", as torch.export.save names it). Parameters stream from their
 * checkpoint views; their shapes must be constant. */
hfx_status hfx_pt2_write(const hfx_aten_program *p, const char *root, hfx_outdir *out, const char *file,
                         hfx_error *err);

#endif
