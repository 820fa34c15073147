/* The ExecuTorch backend (export_format "executorch", the Python system's ExecutorchExporter):
 * each component graph lowered to ATen (fmt/aten_lower.h), then to ExecuTorch's out-variant
 * kernels with a memory plan (lower.c, plan.c), and written as a .pte program (pte.c) with a
 * FlatBuffers builder of our own (flatbuf.c). */
#ifndef HFX_FMT_EXECUTORCH_EXECUTORCH_H
#define HFX_FMT_EXECUTORCH_EXECUTORCH_H

#include "fmt/format.h"

extern const hfx_format hfx_format_executorch;

#endif
