/* Pre-quantized Hub checkpoints (config.json's quantization_config), read as transformers' dequantizing loaders read
 * them: each quantized weight presented as the float tensor those loaders make (hfx_tensor_info.blocks: decoded while
 * read, nothing converted here), the tensors only the decoding reads (scales) taken out of the list.
 *
 * Methods read (quant_method):
 *   "fp8": FineGrainedFP8 (DeepSeek V3, Qwen3-FP8, ...): `X.weight` float8_e4m3fn (or e5m2) [rows, cols] and
 *          `X.weight_scale_inv` [⌈rows / b0⌉, ⌈cols / b1⌉] (weight_block_size [b0, b1]; null: one scale), float32,
 *          float16, bfloat16 or E8M0 exponents (uint8); the weight is code · scale in float32, as transformers'
 *          Fp8Dequantize. Activations stay float (activation_scheme "dynamic": quantized only by GPU kernels);
 *          "static" activation scales are refused by name.
 *   "mxfp4": gpt-oss's experts, "X_blocks" (FP4 codes) and "X_scales" (E8M0) read as "X" transposed, as
 *          Mxfp4Config(dequantize=True) makes them.
 *   "compressed-tensors": llm-compressor's checkpoints, one weight scheme over the config groups: pack-quantized
 *          1–8-bit integers (weight_packed, weight_shape), naive-quantized int8 and float-quantized FP8 weights, per
 *          tensor, channel, group or block, symmetric or with zero points; each value (q − z) · s rounded to the
 *          scales' dtype, as compressed-tensors' decompression. Activation quantization, activation-ordered groups,
 *          sparsity, transforms and KV-cache schemes are refused by name.
 * Another method is left to the caller (which refuses it by name); an 8-bit float tensor outside a method that reads
 * it is HFX_ERR_UNSUPPORTED naming it. */
#ifndef HFX_HF_PREQUANT_H
#define HFX_HF_PREQUANT_H

#include <jansson.h>

#include "base/arena.h"
#include "hf/safetensors.h"

/* Read tensors[0..*n) (sorted by name) under `config`'s quantization_config, `where` naming config.json in messages:
 * weights given their decoding, scale tensors removed (*n lowered, the order kept). *method: the quant_method read
 * ("fp8"), or NULL when the config has none or one hfx does not read (tensors untouched). Errors name the tensor or
 * the field. */
hfx_status hfx_prequant_apply(const json_t *config, const char *where, hfx_arena *arena, hfx_tensor_info *tensors,
                              size_t *n, const char **method, hfx_error *err);

/* The quant_method names hfx reads, for messages: "fp8". */
const char *hfx_prequant_methods(void);

#endif
