/* `hfx inspect` of an .onnx file: a small bounds-checked protobuf reader that prints the graph's
 * inputs, outputs, opset and an op histogram. */
#ifndef HFX_TOOLS_INSPECT_H
#define HFX_TOOLS_INSPECT_H

#include <stdio.h>

#include "hfx/hfx.h"

/* 0 on success; otherwise fills err (naming the file and byte offset) and returns -1. */
int inspect_onnx(const char *path, FILE *out, hfx_error *err);

/* The same for an OpenVINO IR .xml: Parameters, Results, state variables, layer histogram. */
int inspect_openvino(const char *path, FILE *out, hfx_error *err);

/* A torch.export archive (.pt2): what it is and how to read it (its program is JSON for
 * torch.export.load; hfx inspect does not parse it). */
int inspect_pt2(const char *path, FILE *out, hfx_error *err);

/* An ExecuTorch program (.pte, inspect_pte.c): its header and each method's inputs, outputs,
 * instructions, delegates and planned arena, read bounds-checked from its flatbuffer. */
int inspect_pte(const char *path, FILE *out, hfx_error *err);

#endif
