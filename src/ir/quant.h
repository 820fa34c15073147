/* Block-wise weight quantization, round to nearest, as data the writers stream. A linear's weight
 * [rows, cols] (out, in) is cut along its input axis into blocks (groups) of weights; each block
 * gets a scale, a zero point and one code per weight. The three are initializers (hfx_init.quant)
 * computed block by block while a writer pulls them, so no tensor is held whole, and each rule
 * reproduces a reference quantizer's arithmetic exactly (docs/QUANTIZATION.md). */
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
     * clamp(round(w · (1 / scale) + zero point)), 1 / 0 taken as 0; the scale as stored (the
     * activations' type). A last block that the input size does not fill is padded: the padding
     * is outside its range and has code 0. Zero points are packed per row, a 4-bit row's unused
     * last nibble holding 2^(bits−1). */
    HFX_QUANT_RULE_ORT,
    /* NNCF's data-free weight compression (nncf.compress_weights; float32 arithmetic, round half
     * to even). Symmetric: scale = (|min| if |min| ≥ max, else −max) / 2^(bits−1), codes signed,
     * clip(round(w / scale)) in [−2^(bits−1), 2^(bits−1) − 1]. Asymmetric: the range widened to
     * hold 0, scale = (max − min) / (2^bits − 1), zero point = clip(−round(min / scale)), codes
     * clip(round(w / scale + zero point)) in [0, 2^bits − 1]. A scale under float32's epsilon
     * becomes epsilon. The codes use the float32 scale; it is stored as float16. Blocks divide
     * the row exactly (8 bits: a whole row); zero points are packed over all blocks of all rows
     * in order. */
    HFX_QUANT_RULE_NNCF,
    /* onnxruntime's quantizer for an embedding table read by a Gather (its numpy routine,
     * MatMulNBitsQuantizer's quantize_ndarray, for GatherBlockQuantized): 4 bits, arithmetic in
     * the table's own dtype (float16 rounds after every operation), round half to even, blocks
     * along the row of which the last may be short (no padding). Symmetric: m = max if |max| >
     * |min|, else min; scale = m / −8; signed codes clip(round(w / scale)) in [−8, 7], 0 where
     * the scale is 0. Asymmetric: the range widened to hold 0, scale = (max − min) / 15, zero
     * point = clip(round(−min / scale)), codes clip(round(w / scale + zero point)) in [0, 15];
     * a zero scale gives zero point and codes 8. Codes [rows, cols] int4/uint4 and zero points
     * [rows, blocks] uint4, each packed over the whole tensor; scales in the table's dtype. */
    HFX_QUANT_RULE_ORT_TABLE,
    /* onnxruntime's dynamic quantization (quantize_dynamic; its numpy routine quantize_data): 8
     * bits, a scale per tensor (block HFX_QUANT_TENSOR) or per row (block 0: per channel).
     * Symmetric (int8 codes): the range [−a, a], a = max(|min|, |max|), over [−127, 127]; zero
     * point 0. Asymmetric (uint8): [min, max] widened to hold 0, over [0, 255], zero point
     * round(0 − min / scale). reduce_range: [−64, 64] and [0, 127]. The scale is
     * (max − min) / (qmax − qmin) in float64, stored float32 (1, zero point 0, when under
     * float32's smallest normal); codes clip(round(w / scale) + zero point) in the type's full
     * range; round halves to even. The ranges come from hfx_quant_measure. */
    HFX_QUANT_RULE_ORT_DYNAMIC,
    /* torchao's affine quantization as ExecuTorch's XNNPACK flow applies it
     * (Int8DynamicActivationIntxWeightConfig: quantize_affine over choose_qparams_affine,
     * float32 arithmetic, round half to even): symmetric only, signed codes in
     * [−2^(bits−1), 2^(bits−1) − 1]. Per block, a = max(−min(lo, 0), max(hi, 0)), scale =
     * a / ((2^bits − 1) / 2) (7.5 for 4 bits, 127.5 for 8), at least float32's smallest normal;
     * code = clamp(round(w · (1 / scale))). The codes use that float32 scale; it is stored in
     * the scale dtype (XNNPACK's blockwise int4 reads bfloat16 scales, rounded to nearest even).
     * Blocks divide the row. Stored as XNNPACK reads them: 8-bit codes in two's complement, 4-bit
     * codes offset by 8 (unsigned nibbles, its implied zero point), packed low nibble first. */
    HFX_QUANT_RULE_TORCHAO
} hfx_quant_rule;

/* hfx_quant.block for one scale over the whole tensor */
#define HFX_QUANT_TENSOR (-1)

/* Where the quantized parts put a weight's [rows, cols] elements. */
typedef enum hfx_quant_layout {
    HFX_QUANT_ROWS,   /* as the weight: blocks along each row, the parts row by row */
    /* transposed, a MatMul's [K, N]: codes [cols, rows] packed over the whole tensor; scales
     * and zero points [blocks, rows]. With HFX_QUANT_RULE_ORT, onnxruntime's quantizer's QDQ
     * form (ONNX DequantizeLinear, axis 0): the rule's scale and zero point, a code
     * round(w · (1 / scale)) + zero point (rounded before the shift), signed in
     * [−2^(bits−1), 2^(bits−1) − 1] when symmetric (zero point 0). With
     * HFX_QUANT_RULE_ORT_DYNAMIC, that rule's codes, and its scales and zero points per tensor
     * or per row. */
    HFX_QUANT_COLUMNS
} hfx_quant_layout;

/* How a weight is to be stored (a linear's request, hfx_attrs.quant). */
typedef struct hfx_quant {
    hfx_quant_rule rule;
    int bits;              /* 4 or 8 */
    int64_t block;         /* weights per block along the input axis; 0: the whole row;
                              HFX_QUANT_TENSOR: the whole tensor (HFX_QUANT_RULE_ORT_DYNAMIC) */
    bool symmetric;        /* no zero points stored (the rule's implied one; dynamic: int8 codes,
                              zero point 0, stored) */
    hfx_dtype scale_dtype; /* F32, F16 or BF16 (torchao's): the scales as stored (a table's: its arithmetic too) */
    hfx_quant_layout layout;
    bool reduce_range;     /* HFX_QUANT_RULE_ORT_DYNAMIC: 7-bit ranges */
    /* the weight's own blocks (a GGUF tensor whose format is symmetric, base/blocks.h: Q4_0, Q8_0), stored in the
     * rule's layout without a float round trip: each block's scale and codes as the file has them (symmetric,
     * blocks of the format's size, `bits` its width); hfx_quant_from_blocks says which weights can */
    bool from_blocks;
    /* HFX_QUANT_RULE_ORT_DYNAMIC: the weight's range, per tensor (lo[0], hi[0]) or per row
     * ([rows] each), filled by hfx_quant_measure */
    const float *lo, *hi;
} hfx_quant;

/* Which weights a graph stores quantized, and how (the quantization pass's request). bits 0:
 * kept float. */
typedef struct hfx_quant_plan {
    hfx_quant linears;       /* every linear reading a checkpoint matrix, but the last */
    hfx_quant head;          /* the last linear (a model's head) */
    hfx_quant tables;        /* checkpoint tables a Gather reads (embeddings) */
    bool head_follows_table; /* a head reading a table a Gather reads (tied) takes the table's
                                quantization: one stored weight, as NNCF compresses it */
} hfx_quant_plan;

typedef enum hfx_quant_part {
    HFX_QUANT_CODES,  /* bytes of [rows, blocks, block] codes, packed two to a byte (4 bits) low
                         nibble first, in input order; signed codes in two's complement (a
                         table's: [rows, cols] I4/U4, no padding) */
    HFX_QUANT_SCALES, /* [rows, blocks] in the scale dtype */
    HFX_QUANT_ZEROS   /* bytes of the zero points, packed like the codes (per row or over all,
                         as the rule says) */
} hfx_quant_part;

struct hfx_init;
struct hfx_arena;

/* The block size a weight with `cols` inputs takes (q->block, or cols for a whole row), and its
 * blocks per row. */
int64_t hfx_quant_block_size(const hfx_quant *q, int64_t cols);
int64_t hfx_quant_blocks(const hfx_quant *q, int64_t cols);

/* The quantization that stores `weight` (a [rows, cols] view) as its own blocks under `rule` (q->from_blocks): false
 * when it is not one part of a symmetric block format read along its rows. */
bool hfx_quant_from_blocks(const struct hfx_init *weight, hfx_quant_rule rule, hfx_quant_layout layout, hfx_quant *q);

/* Whether q can quantize a weight of `cols` inputs: 4 or 8 bits, and a block its rule takes
 * (onnxruntime: a power of two of at least 16; NNCF: one that divides the row, or the row).
 * When not, *why says what is wrong. */
bool hfx_quant_valid(const hfx_quant *q, int64_t cols, const char **why);

/* The initializer holding `part` of `weight` (a [rows, cols] float32, float16 or bfloat16 view:
 * the values quantized are the weight's in that dtype) quantized as q, shaped [rows, blocks,
 * block·bits/8] (codes), [rows, blocks] (scales) or [bytes] (zero points). Scales are
 * q->scale_dtype; codes and zero points U8 bytes — for HFX_QUANT_RULE_ORT_TABLE, codes I4/U4
 * [rows, cols] and zero points U4 [rows, blocks]; for HFX_QUANT_COLUMNS, codes I4/U4/I8/U8
 * [cols, rows], scales [blocks, rows], zero points U4/U8 [blocks, rows]. NULL when out of
 * memory. */
struct hfx_init *hfx_quant_init(struct hfx_arena *arena, const struct hfx_init *weight, const hfx_quant *q,
                                hfx_quant_part part);

/* The ranges q's rule needs before any part can be read (HFX_QUANT_RULE_ORT_DYNAMIC: the
 * weight's minimum and maximum, per tensor or per row), read in one pass over `weight` and set
 * in q (arena arrays); nothing for the other rules. */
hfx_status hfx_quant_measure(struct hfx_arena *arena, const struct hfx_init *weight, hfx_quant *q, hfx_error *err);

/* Elements [first, first + count) of a quantized part into dst (init.c calls this for an
 * initializer with `quant` set). */
hfx_status hfx_quant_read(const struct hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err);

/* The source elements of the weight that elements [first, first + count) of the part need
 * (whole rows): for releasing checkpoint pages behind the reader. None for a transposed layout,
 * whose reader lets the rows go itself, and for a part that reads no weight. */
void hfx_quant_source_range(const struct hfx_init *init, uint64_t first, uint64_t count, uint64_t *src_first,
                            uint64_t *src_count);

#endif
