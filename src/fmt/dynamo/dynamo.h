/* The torch.export backend (export_format "dynamo", the Python system's DynamoExporter): each
 * component graph lowered to ATen (fmt/aten_lower.h) and written as a .pt2 archive (pt2.c). */
#ifndef HFX_FMT_DYNAMO_DYNAMO_H
#define HFX_FMT_DYNAMO_DYNAMO_H

#include "fmt/format.h"

extern const hfx_format hfx_format_dynamo;

#endif
