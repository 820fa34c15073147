/* The ONNX backend: lowers an IR graph to standard ONNX ops (default domain only) and writes a
 * ModelProto with our own protobuf encoder. Large weights go to an external data file, streamed
 * from the checkpoint mapping in bounded chunks; small constants are embedded. */
#ifndef HFX_FMT_ONNX_ONNX_H
#define HFX_FMT_ONNX_ONNX_H

#include <stdbool.h>

#include "io/outdir.h"
#include "ir/graph.h"

#define HFX_ONNX_OPSET_MIN 17
#define HFX_ONNX_OPSET_MAX 23
#define HFX_ONNX_OPSET_DEFAULT 18

typedef struct hfx_onnx_options {
    bool external_data;    /* false: every weight inside the .onnx (must stay under 2 GiB) */
    const char *data_file; /* the external data file all components share: "model.onnx_data" */
} hfx_onnx_options;

/* One graph and its file name ("model.onnx", "prefill.onnx"). */
typedef struct hfx_onnx_component {
    const hfx_graph *g;
    const char *file;
    int opset;
} hfx_onnx_component;

/* Lower and write the components into `out` (temporary files, renamed when the export commits).
 * Weights that several components read are stored once in the shared data file. */
hfx_status hfx_onnx_write(const hfx_onnx_component *components, int n,
                          const hfx_onnx_options *o, hfx_outdir *out, hfx_error *err);

#endif
