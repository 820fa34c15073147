/* One safetensors file: an 8-byte little-endian header length N, N bytes of JSON header, then
 * the data section. The header maps tensor names to {dtype, shape, data_offsets: [begin, end]}
 * (offsets relative to the data section) plus an optional "__metadata__" string map.
 *
 * hfx_safetensors_parse validates everything before anything is used:
 *   - the file holds at least 8 bytes; 8 + N ≤ file size; N ≤ HFX_SAFETENSORS_MAX_HEADER;
 *   - the header is one well-formed JSON object (no duplicate keys); every entry has a known
 *     dtype string, a shape of non-negative integers (rank ≤ HFX_MAX_RANK) and two offsets;
 *   - begin ≤ end ≤ data-section size; end - begin = dtype size × product(shape) (overflow checked);
 *   - tensors neither overlap nor leave holes in the data section (as the format requires).
 * Errors name the file, the tensor and the byte offset. */
#ifndef HFX_HF_SAFETENSORS_H
#define HFX_HF_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/blocks.h"
#include "base/dtype.h" /* HFX_MAX_RANK */
#include "base/mapping.h"
#include "hfx/hfx.h"

#define HFX_SAFETENSORS_MAX_HEADER (100u * 1024u * 1024u) /* as the reference implementation */

typedef struct hfx_tensor_info {
    const char *name;               /* owned by the arena passed to the parser */
    hfx_dtype dtype;
    int rank;
    int64_t shape[HFX_MAX_RANK];    /* outermost first */
    const uint8_t *data;            /* borrowed: points into the file's mapping */
    uint64_t nbytes;                /* dtype size × product(shape) */
    const char *file;               /* path of the file holding it (owned by the arena) */
    uint64_t file_offset;           /* absolute byte offset of `data` in that file */
    const hfx_mapping *mapping;     /* the file's mapping, checked before reads (set by the checkpoint;
                                       NULL for a parse of bare bytes) */
    const hfx_block_format *blocks; /* non-NULL: `data` holds llama.cpp blocks of this format along the last axis
                                       (a GGUF file's), read as dtype F32; nbytes counts the blocks' bytes */
    int64_t rotary_heads;           /* > 0: rows stored in llama.cpp's rotary order for that many heads (each
                                       head's halves interleaved pairwise), which reads undo */
} hfx_tensor_info;

typedef struct hfx_safetensors {
    const char *path;               /* owned by the arena */
    size_t n_tensors;
    hfx_tensor_info *tensors;       /* owned by the arena; in header order */
} hfx_safetensors;

/* Parse and validate the safetensors image `bytes[0..len)` (normally a whole-file mapping) that
 * came from `path` (used in messages). Allocations come from `arena`; on success *out describes
 * the file and its tensors point into `bytes`, which must outlive them. Never reads outside
 * `bytes`. Errors: HFX_ERR_INVALID for malformed input, HFX_ERR_UNSUPPORTED for an unknown
 * dtype string, HFX_ERR_NOMEM. */
hfx_status hfx_safetensors_parse(const uint8_t *bytes, size_t len, const char *path,
                                 hfx_arena *arena, hfx_safetensors *out, hfx_error *err);

/* Map a safetensors dtype string ("F32", "BF16", ...) to hfx_dtype; HFX_DTYPE_UNDEFINED when
 * unknown. */
hfx_dtype hfx_safetensors_dtype_from_string(const char *s);

#endif
