/* The element-type table behind hfx_dtype (public header): names, widths in bits, kinds.
 * Sizes of tensors are computed from bits, so that sub-byte types (int4: two per byte) have
 * exact sizes; hfx_dtype_size is only for types of whole bytes. */
#ifndef HFX_BASE_DTYPE_H
#define HFX_BASE_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "hfx/hfx.h"

#define HFX_MAX_RANK 8 /* the highest tensor rank anywhere in hfx: checkpoints, IR, writers */

/* Width of one element in bits (4 for int4); 0 for HFX_DTYPE_UNDEFINED. */
unsigned hfx_dtype_bits(hfx_dtype dt);

/* Bytes that `numel` elements occupy, packed (sub-byte elements two to a byte, the last byte
 * padded); UINT64_MAX when that overflows. */
uint64_t hfx_dtype_nbytes(hfx_dtype dt, uint64_t numel);

/* Elements in a tensor of this shape (1 for rank 0). */
static inline uint64_t hfx_numel(int rank, const int64_t *shape) {
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) n *= (uint64_t)shape[i];
    return n;
}

/* f64, f32, f16, bf16: the types weights convert among. */
bool hfx_dtype_is_float(hfx_dtype dt);

/* Narrower than a byte (int4, uint4): no element has an address of its own. */
static inline bool hfx_dtype_is_packed(hfx_dtype dt) { return hfx_dtype_bits(dt) % 8 != 0; }

#endif
