/* The ONNX backend: lowers an IR graph to standard ONNX ops (default domain only) and writes a
 * ModelProto with our own protobuf encoder. Large weights go to an external data file, streamed
 * from the checkpoint mapping in bounded chunks; small constants are embedded. */
#ifndef HFX_FMT_ONNX_ONNX_H
#define HFX_FMT_ONNX_ONNX_H

#include <stdbool.h>

#include "export/outdir.h"
#include "ir/graph.h"

#define HFX_ONNX_OPSET_MIN 17
#define HFX_ONNX_OPSET_MAX 23
#define HFX_ONNX_OPSET_DEFAULT 18

typedef struct hfx_onnx_options {
    int opset;
    bool external_data;    /* false: every weight inside the .onnx (must stay under 2 GiB) */
    const char *basename;  /* "model" → model.onnx + model.onnx_data */
} hfx_onnx_options;

/* Lower and write `g` into `out` (temporary files, renamed when the export commits). */
hfx_status hfx_onnx_write(const hfx_graph *g, const hfx_onnx_options *o, hfx_outdir *out,
                          hfx_error *err);

#endif
