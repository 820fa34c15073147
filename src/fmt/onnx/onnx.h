/* The ONNX backend: lowers an IR graph to standard ONNX ops (default domain only) and writes a
 * ModelProto with our own protobuf encoder. Large weights go to an external data file, streamed
 * from the checkpoint mapping in bounded chunks; small constants are embedded. */
#ifndef HFX_FMT_ONNX_ONNX_H
#define HFX_FMT_ONNX_ONNX_H

#include "fmt/format.h"

#define HFX_ONNX_OPSET_MIN 17
#define HFX_ONNX_OPSET_MAX 23
#define HFX_ONNX_OPSET_DEFAULT 18

/* Its options, in the order of hfx_format_onnx.options. */
enum {
    ONNX_OPT_OPSET, ONNX_OPT_EXTERNAL_DATA, ONNX_OPT_EXPORT_PARAMS, ONNX_OPT_OUTPUT_PATH, ONNX_OPT_ORT_FUSIONS,
    ONNX_OPT_ACCURACY_LEVEL, ONNX_OPT_OPS, ONNX_OPT_WEIGHT_LAYOUT, ONNX_N_OPTIONS
};

extern const hfx_format hfx_format_onnx;

#endif
