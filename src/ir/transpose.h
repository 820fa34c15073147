/* Transposing small squares of a weight while converting its dtype: the inner kernel of the
 * ONNX MatMul layout (a linear's [out, in] weight written as [in, out]). */
#ifndef HFX_IR_TRANSPOSE_H
#define HFX_IR_TRANSPOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

enum { HFX_TRANSPOSE_SQUARE = 64 }; /* the largest square one call takes */

/* dst[r][c] = src[c][r] converted from sdt to ddt (round to nearest-even, NaNs quieted as
 * base/half.h does, so the bytes equal an element-by-element conversion), for r < nr, c < nc
 * (both <= HFX_TRANSPOSE_SQUARE); src rows are sstride elements apart, dst rows dstride. Moves
 * bits only when the dtypes match. False, with nothing written, for a pair of dtypes this has no
 * kernel for: the caller converts another way. Float types of 2 and 4 bytes (f16, bf16, f32):
 * every same-dtype pair and bf16/f16 -> f32 everywhere; bf16/f32 -> f16 where the CPU has F16C. */
bool hfx_transpose_square(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride,
                          hfx_dtype ddt, int nr, int nc);

#endif
