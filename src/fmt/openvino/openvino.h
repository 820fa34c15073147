/* The OpenVINO backend: lowers an IR graph to OpenVINO opsets and writes IR v11 (.xml + .bin).
 * Port shapes are left to OpenVINO's own shape inference at load (the IR only needs Parameter
 * shapes and Const shapes); weights stream from the checkpoint mapping into the .bin. */
#ifndef HFX_FMT_OPENVINO_OPENVINO_H
#define HFX_FMT_OPENVINO_OPENVINO_H

#include <stdbool.h>

#include "io/outdir.h"
#include "ir/graph.h"

typedef struct hfx_ov_options {
    bool compress_to_fp16; /* float32 weights stored as f16 Const + Convert (a decompression) */
    bool stateful;         /* cache pairs past_key_values.{i}.* / present.{i}.* become
                              ReadValue/Assign variables, plus a beam_idx input */
} hfx_ov_options;

typedef struct hfx_ov_component {
    const hfx_graph *g;
    const char *xml_file, *bin_file; /* "model.xml", "model.bin" */
} hfx_ov_component;

/* Lower and write the components into `out`. Weights shared by components are stored once: every
 * component's .bin is the same blob (hard-linked when the file system allows). */
hfx_status hfx_ov_write(const hfx_ov_component *cs, int n, const hfx_ov_options *o,
                        hfx_outdir *out, hfx_error *err);

#endif
