/* Block-wise weight quantization, round to nearest, as data the writers stream. A linear's weight
 * [rows, cols] (out, in) is cut along its input axis into blocks of `block` weights (the last one
 * padded); each block gets a scale, a zero point and one code per weight. The three
 * are initializers (hfx_init.quant) computed block by block while a writer pulls them, so no
 * tensor is held whole, and each rule reproduces a reference quantizer's arithmetic exactly
 * (docs/QUANTIZATION.md). */
#ifndef HFX_IR_QUANT_H
#define HFX_IR_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"

typedef enum hfx_quant_rule {
    /* onnxruntime's MatMulNBits quantizer (MLAS's block-wise quantizer, float32 arithmetic,
     * round half away from zero). Codes are unsigned, in [0, 2^bits − 1]. Symmetric: the
     * block's value of largest magnitude m, scale = m / −2^(bits−1), zero point 2^(bits−1).
     * Asymmetric: the range [min, max] widened to hold 0, scale = (max − min) / (2^bits − 1),
     * zero point = round(−min / scale) clamped to the code range. Code =
     * clamp(round(w · (1 / scale) + zero point)), 1 / 0 taken as 0. A last block's padding is
     * outside its range and has code 0. */
    HFX_QUANT_RULE_ORT
} hfx_quant_rule;

/* How a weight is to be stored (a linear's request, hfx_attrs.quant). */
typedef struct hfx_quant {
    hfx_quant_rule rule;
    int bits;        /* 4 or 8 */
    int64_t block;   /* weights per block along the input axis */
    bool symmetric;  /* no zero points stored (the rule's implied one) */
    hfx_dtype scale_dtype; /* F32 or F16: the scales as stored (the codes use the stored value) */
} hfx_quant;

typedef enum hfx_quant_part {
    HFX_QUANT_CODES,  /* bytes [rows, blocks, block·bits/8]: codes packed two to a byte (4 bits) low
                         nibble first, in input order */
    HFX_QUANT_SCALES, /* [rows, blocks] in the initializer's float dtype */
    HFX_QUANT_ZEROS   /* bytes [rows, ceil(blocks·bits/8)]: zero points packed like the codes (a
                         4-bit row's unused last nibble holds 2^(bits−1), as onnxruntime writes) */
} hfx_quant_part;

struct hfx_init;
struct hfx_arena;

/* Blocks per row of a weight with `cols` inputs. */
int64_t hfx_quant_blocks(const hfx_quant *q, int64_t cols);

/* Whether q is one hfx can compute: 4 or 8 bits, a block of at least 16 that is a power of two
 * (what MatMulNBits takes) or a whole row. */
bool hfx_quant_valid(const hfx_quant *q, int64_t cols);

/* The initializer holding `part` of `weight` (a [rows, cols] float32, float16 or bfloat16 view:
 * the values quantized are the weight's in that dtype) quantized as q; its
 * shape is the part's layout above. Scales are q->scale_dtype; codes and zero points U8. NULL
 * when out of memory. */
struct hfx_init *hfx_quant_init(struct hfx_arena *arena, const struct hfx_init *weight, const hfx_quant *q,
                                hfx_quant_part part);

/* Elements [first, first + count) of a quantized part into dst (init.c calls this for an
 * initializer with `quant` set). */
hfx_status hfx_quant_read(const struct hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err);

/* The source elements of the weight that elements [first, first + count) of the part need
 * (whole rows): for releasing checkpoint pages behind the reader. */
void hfx_quant_source_range(const struct hfx_init *init, uint64_t first, uint64_t count, uint64_t *src_first,
                            uint64_t *src_count);

#endif
