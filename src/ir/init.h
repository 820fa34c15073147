/* Initializers: constants that hold no bytes until a writer pulls them.
 *
 * An initializer is the concatenation along axis 0 of parts; each part is a strided view of
 * source elements (a checkpoint tensor in the mmap, or bytes computed at build time held by the
 * arena), converted to the initializer's dtype while read. Transpose and slice only edit the
 * view, so no transform ever needs a copy of the tensor. */
#ifndef HFX_IR_INIT_H
#define HFX_IR_INIT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/blocks.h"
#include "base/dtype.h"
#include "base/mapping.h"
#include "hfx/hfx.h"
#include "ir/quant.h"

typedef struct hfx_init_part {
    const uint8_t *base;            /* borrowed: mmap or arena */
    hfx_dtype src_dtype;
    int rank;
    int64_t shape[HFX_MAX_RANK];    /* the view, outermost first */
    int64_t strides[HFX_MAX_RANK];  /* in source elements */
    int64_t offset;                 /* in source elements */
    const hfx_mapping *mapping;     /* base is inside this read-only file mapping (a checkpoint
                                       tensor), checked before reads; NULL: computed bytes */
    const hfx_block_format *blocks; /* non-NULL: base holds llama.cpp blocks of this format (a GGUF
                                       tensor's), element i of the source at block i / block; src_dtype
                                       is F32, what they decode to; a run along the last axis whose
                                       stride is 1 decodes whole blocks */
} hfx_init_part;

typedef struct hfx_init {
    hfx_dtype dtype;                /* what readers get */
    int rank;
    int64_t shape[HFX_MAX_RANK];
    int n_parts;
    hfx_init_part *parts;           /* arena */
    const char *source;             /* description for messages: a tensor name (arena) */
    const hfx_quant *quant;         /* non-NULL: no parts; part `quant_part` of the weight `quant_of`
                                       quantized as `quant` (ir/quant.h), computed while read */
    int quant_part;                 /* hfx_quant_part */
    const struct hfx_init *quant_of;
} hfx_init;

uint64_t hfx_init_numel(const hfx_init *init);

/* Bytes the initializer's elements take as init->dtype (packed for sub-byte types). */
uint64_t hfx_init_nbytes(const hfx_init *init);

/* Whether every part reads a mapped checkpoint tensor (a weight), not bytes computed at build time. */
bool hfx_init_is_mapped(const hfx_init *init);

/* HFX_OK while every file the initializer reads still has its mapped size; else HFX_ERR_IO naming
 * the file (it shrank under the export: reading on would raise SIGBUS). */
hfx_status hfx_init_check_files(const hfx_init *init, hfx_error *err);

/* Two views of the same bytes (same source, view and dtype): a writer stores them once. */
bool hfx_init_same(const hfx_init *a, const hfx_init *b);

/* Tell the kernel the mapped checkpoint pages behind `init` are done with (MADV_DONTNEED): they
 * are re-read from the page cache if touched again, and resident memory stays bounded by what
 * is being written rather than growing to the checkpoint's size. No-op for computed constants. */
void hfx_init_release(const hfx_init *init);

/* The same for the pages behind elements [first, first + count) only, where the view reads its
 * source contiguously (a plain or sliced weight, not a transposed one): called after each chunk,
 * it keeps resident memory at about a chunk even for the largest tensor. */
void hfx_init_release_range(const hfx_init *init, uint64_t first, uint64_t count);

/* Write elements [first, first + count) of `init`, in row-major order of its shape, into `dst`
 * as init->dtype. Float types convert among themselves (round to nearest-even); ints copy. A
 * quantized part of a 4-bit type is read in bytes: first and count count bytes. */
hfx_status hfx_init_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst,
                         hfx_error *err);

/* Whether `init` reads one mapped matrix transposed: out[r][c] = W[c][r] with W's rows contiguous
 * in the checkpoint (ONNX's MatMul layout of a linear's [out, in] weight). A writer can then
 * produce it in panels of columns, each reading whole source rows (hfx_init_read_block), and let
 * each panel's checkpoint pages go once it is done, instead of touching every page of the weight
 * for every output row. False for any other view, computed bytes and quantized parts. */
bool hfx_init_is_transposed(const hfx_init *init);

/* Rows [r0, r0 + nr) × columns [c0, c0 + nc) of a rank-2 initializer, into dst as a row-major
 * [nr, nc] block of init->dtype, converted as hfx_init_read converts. Any view; transposed ones
 * read cache-blocked tiles of whole source runs. */
hfx_status hfx_init_read_block(const hfx_init *init, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                               void *dst, hfx_error *err);

/* For a transposed initializer, the checkpoint pages behind columns [c0, c0 + nc) (source rows):
 * `needed`, about to be read (MADV_WILLNEED, so the disk reads ahead of the strided reads);
 * else done with (MADV_DONTNEED on the whole pages inside them). A hint; no-op for other views. */
void hfx_init_advise_columns(const hfx_init *init, int64_t c0, int64_t nc, bool needed);

#endif
