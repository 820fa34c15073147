/* The OpenVINO backend: lowers an IR graph to OpenVINO opsets and writes IR v11 (.xml + .bin).
 * Port shapes are left to OpenVINO's own shape inference at load (the IR only needs Parameter
 * shapes and Const shapes); weights stream from the checkpoint mapping into the .bin. */
#ifndef HFX_FMT_OPENVINO_OPENVINO_H
#define HFX_FMT_OPENVINO_OPENVINO_H

#include "fmt/format.h"

/* Its options, in the order of hfx_format_openvino.options. */
enum { OV_OPT_STATEFUL, OV_OPT_COMPRESS_TO_FP16, OV_OPT_GENAI_EMBEDDING, OV_N_OPTIONS };

extern const hfx_format hfx_format_openvino;

/* openvino_tokenizer.xml/.bin and openvino_detokenizer.xml/.bin (tokenizer.c). */
hfx_status hfx_ov_write_tokenizer(const hfx_tokenizer *t, hfx_outdir *out, hfx_error *err);

#endif
