/* Block-wise quantization (quant.h): each rule's arithmetic, and the reader that computes a
 * quantized part's bytes from the weight's float view, a row's needed blocks at a time. Built
 * with floating-point contraction off (CMakeLists.txt): w · (1 / scale) + zp must round twice,
 * as the references compute it, never once in a fused multiply-add. */
#include "ir/quant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/half.h"
#include "ir/init.h"

int64_t hfx_quant_block_size(const hfx_quant *q, int64_t cols) { return q->block > 0 ? q->block : cols; }

int64_t hfx_quant_blocks(const hfx_quant *q, int64_t cols) {
    int64_t b = hfx_quant_block_size(q, cols);
    return b > 0 ? (cols + b - 1) / b : 0;
}

bool hfx_quant_valid(const hfx_quant *q, int64_t cols, const char **why) {
    const char *w = NULL;
    if (q->rule == HFX_QUANT_RULE_ORT_DYNAMIC) {
        if (q->bits != 8) w = "8 bits (onnxruntime's dynamic quantization)";
        else if (q->block != 0 && q->block != HFX_QUANT_TENSOR)
            w = "a scale per tensor or per row (--group-size 0) (onnxruntime's dynamic quantization)";
        if (why) *why = w;
        return !w;
    }
    if (q->rule == HFX_QUANT_RULE_TORCHAO) { /* what XNNPACK's quantized fully-connected layers take (and torch.export's
                                                weight-only programs, written alike) */
        if (q->bits != 4 && q->bits != 8) w = "4 or 8 bits";
        else if (!q->symmetric) w = "symmetric weights (torchao's, as XNNPACK's quantized linears and torch.export's "
                                    "weight-only programs read them): --sym";
        else if (q->block == HFX_QUANT_TENSOR) w = "groups or whole rows, not one scale per tensor";
        else if (q->bits == 8 && q->block > 0 && q->block != cols)
            w = "8-bit weights per output channel (XNNPACK's qc8w): --group-size 0";
        else if (q->bits == 4 && q->block > 0 && (q->block % 32 || cols % q->block))
            w = "a group size that is a multiple of 32 and divides the layer's inputs (XNNPACK's blockwise int4), or "
                "--group-size 0";
        else if (q->bits == 4 && cols % 2) w = "an even row (two codes a byte)";
        if (why) *why = w;
        return !w;
    }
    if (q->block == HFX_QUANT_TENSOR) w = "blocks or whole rows, not one scale per tensor";
    else if (q->bits != 4 && q->bits != 8) w = "4 or 8 bits";
    else if (q->rule != HFX_QUANT_RULE_NNCF && (q->block < 16 || (q->block & (q->block - 1))))
        w = "a block of a power of two of at least 16 weights (onnxruntime's MatMulNBits and GatherBlockQuantized)";
    else if (q->rule == HFX_QUANT_RULE_NNCF && q->bits == 8 && q->block > 0)
        w = "8-bit weights per row (NNCF's int8 modes): --group-size 0";
    else if (q->rule == HFX_QUANT_RULE_NNCF && q->block > 0 && cols % q->block)
        w = "a group size that divides the layer's inputs (NNCF's groups), or the whole row (--group-size 0)";
    else if (q->rule == HFX_QUANT_RULE_ORT_TABLE && q->bits != 4)
        w = "4 bits (onnxruntime's GatherBlockQuantized quantizer)";
    else if (q->rule == HFX_QUANT_RULE_ORT_TABLE && cols % 2)
        w = "an even row (its codes are packed over the whole table)";
    else if (hfx_quant_block_size(q, cols) * q->bits % 16) /* whole bytes per block, codes in pairs */
        w = "an even block";
    if (why) *why = w;
    return !w;
}

/* Whether the zero points are one element per block over all rows, packed across rows (NNCF's,
 * a table's), rather than packed per row (MatMulNBits'). */
static bool zeros_flat(const hfx_quant *q) { return q->rule != HFX_QUANT_RULE_ORT; }

/* per row: bytes (codes; onnxruntime's zero points) or elements (scales; flat zero points) */
static uint64_t row_size(const hfx_quant *q, hfx_quant_part part, int64_t cols) {
    uint64_t blocks = (uint64_t)hfx_quant_blocks(q, cols), size = (uint64_t)hfx_quant_block_size(q, cols);
    switch (part) {
    case HFX_QUANT_CODES: /* a table's rows are not padded to whole blocks */
        return (q->rule == HFX_QUANT_RULE_ORT_TABLE ? (uint64_t)cols : blocks * size) * (uint64_t)q->bits / 8;
    case HFX_QUANT_SCALES: return blocks;
    default: return zeros_flat(q) ? blocks : (blocks * (uint64_t)q->bits + 7) / 8;
    }
}

hfx_init *hfx_quant_init(hfx_arena *arena, const hfx_init *weight, const hfx_quant *q, hfx_quant_part part) {
    hfx_init *init = hfx_arena_alloc(arena, sizeof *init);
    hfx_quant *copy = hfx_arena_alloc(arena, sizeof *copy);
    if (!init || !copy) return NULL;
    *copy = *q;
    memset(init, 0, sizeof *init);
    int64_t rows = weight->shape[0], cols = weight->shape[1], blocks = hfx_quant_blocks(q, cols);
    init->dtype = part == HFX_QUANT_SCALES ? q->scale_dtype : HFX_DTYPE_U8;
    if (q->rule == HFX_QUANT_RULE_ORT_DYNAMIC) { /* int8/uint8 codes; a scale per tensor or per row */
        if (part != HFX_QUANT_SCALES) init->dtype = q->symmetric ? HFX_DTYPE_I8 : HFX_DTYPE_U8;
        bool columns = q->layout == HFX_QUANT_COLUMNS;
        if (part == HFX_QUANT_CODES) {
            init->rank = 2;
            init->shape[0] = columns ? cols : rows, init->shape[1] = columns ? rows : cols;
        } else if (q->block != HFX_QUANT_TENSOR) {
            init->rank = 1;
            init->shape[0] = rows;
        } /* else a scalar: rank 0 */
    } else if (q->layout == HFX_QUANT_COLUMNS) { /* [K, N] codes, [blocks, N] scales and zero points */
        bool signed_codes = part == HFX_QUANT_CODES && q->symmetric;
        if (part != HFX_QUANT_SCALES)
            init->dtype = q->bits == 4 ? (signed_codes ? HFX_DTYPE_I4 : HFX_DTYPE_U4)
                                       : (signed_codes ? HFX_DTYPE_I8 : HFX_DTYPE_U8);
        init->rank = 2;
        init->shape[0] = part == HFX_QUANT_CODES ? cols : blocks, init->shape[1] = rows;
    } else if (q->rule == HFX_QUANT_RULE_ORT_TABLE && part != HFX_QUANT_SCALES) { /* int4/uint4 tensors */
        init->dtype = part == HFX_QUANT_CODES && q->symmetric ? HFX_DTYPE_I4 : HFX_DTYPE_U4;
        init->rank = 2;
        init->shape[0] = rows, init->shape[1] = part == HFX_QUANT_CODES ? cols : blocks;
    } else if (part == HFX_QUANT_CODES) {
        init->rank = 3;
        init->shape[0] = rows, init->shape[1] = blocks;
        init->shape[2] = hfx_quant_block_size(q, cols) * q->bits / 8;
    } else if (part == HFX_QUANT_SCALES || q->rule == HFX_QUANT_RULE_ORT) {
        init->rank = 2;
        init->shape[0] = rows, init->shape[1] = (int64_t)row_size(q, part, cols);
    } else { /* NNCF's zero points: packed over every block of every row */
        init->rank = 1;
        init->shape[0] = (rows * blocks * q->bits + 7) / 8;
    }
    init->source = weight->source;
    init->quant = copy;
    init->quant_part = part;
    init->quant_of = weight;
    return init;
}

/* ---- the rules: one block of n weights → scale, zero point, one code per weight ---- */

/* x clamped to [lo, hi]; NaN (a checkpoint's NaN weight) to lo: a code, never an undefined
 * conversion. */
static inline float clamp_code(float x, float lo, float hi) { return x >= lo ? (x <= hi ? x : hi) : lo; }

/* Rounding without a libm call per weight (x86-64's baseline has no rounding instruction). Both
 * are exact for |x| < 2^22, which every code computation here stays within (|w / scale| is at
 * most 2^(bits−1) plus a zero point, or 0 for a zero scale): adding 1.5·2^23 leaves no fraction
 * bits, so the sum rounds x to an integer in the current mode, to nearest even. */
static inline float round_even(float x) {
    const float magic = 12582912.0f; /* 1.5 · 2^23 */
    return (x + magic) - magic;
}

static inline float round_away(float x) { /* roundf: a half goes away from zero */
    float r = round_even(x), d = x - r; /* exact */
    r = d == 0.5f && x > 0.0f ? r + 1.0f : r; /* selects, not branches: the loops vectorize */
    return d == -0.5f && x < 0.0f ? r - 1.0f : r;
}

/* The block's minimum and maximum as a loop in order finds them (`w < lo` replaces lo: on equal
 * values the first stays, which decides the sign of a zero). Eight lanes first, which the
 * compiler vectorizes; when a zero is among the results, the sign the in-order loop gives
 * matters (a scale of −0.0 is not +0.0), so that case is redone in order. */
static void block_range(const float *w, int64_t n, float lo0, float hi0, float *lo, float *hi) {
    float l[8], h[8];
    for (int k = 0; k < 8; k++) l[k] = lo0, h[k] = hi0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            l[k] = w[i + k] < l[k] ? w[i + k] : l[k];
            h[k] = w[i + k] > h[k] ? w[i + k] : h[k];
        }
    float a = lo0, b = hi0;
    for (int k = 0; k < 8; k++) {
        a = l[k] < a ? l[k] : a;
        b = h[k] > b ? h[k] : b;
    }
    for (; i < n; i++) {
        a = w[i] < a ? w[i] : a;
        b = w[i] > b ? w[i] : b;
    }
    if (a == 0.0f || b == 0.0f || a != a || b != b) { /* a zero's sign, or a NaN: in order */
        a = lo0, b = hi0;
        for (i = 0; i < n; i++) {
            if (w[i] < a) a = w[i];
            if (w[i] > b) b = w[i];
        }
    }
    *lo = a, *hi = b;
}

/* onnxruntime's (quant.h). `size` − n padding codes are 0; codes NULL: the scale and zero point
 * only. */
static void ort_block(const hfx_quant *q, const float *w, int64_t n, int64_t size, float *scale, uint8_t *zp,
                      uint8_t *codes) {
    const int kmax = (1 << q->bits) - 1, mid = 1 << (q->bits - 1);
    float lo, hi;
    block_range(w, n, FLT_MAX, -FLT_MAX, &lo, &hi);
    float s;
    int z = mid;
    if (q->symmetric) {
        float m = fabsf(hi) > fabsf(lo) ? hi : lo;
        s = m / (float)-mid;
    } else {
        lo = 0.0f < lo ? 0.0f : lo;
        hi = hi < 0.0f ? 0.0f : hi;
        s = (hi - lo) / (float)kmax;
        float zf = lo;
        if (s != 0.0f) zf = 0.0f - lo / s;
        z = (int)clamp_code(roundf(zf), 0.0f, (float)kmax); /* roundf of a clamped value is the same */
    }
    if (q->scale_dtype == HFX_DTYPE_F16) s = hfx_f16_to_f32(hfx_f32_to_f16(s)); /* the codes use the stored scale */
    *scale = s;
    *zp = (uint8_t)z;
    if (!codes) return;
    float r = s != 0.0f ? 1.0f / s : 0.0f;
    for (int64_t i = 0; i < n; i++) {
        codes[i] = (uint8_t)clamp_code(round_away(w[i] * r + (float)z), 0.0f, (float)kmax);
    }
    memset(codes + n, 0, (size_t)(size - n));
}

/* onnxruntime's QDQ form (MLAS's blockwise QDQ quantizer), from ort_block's scale (as stored)
 * and zero point: code = round(w · (1 / scale)) + zero point, rounded before the shift (halves
 * away from zero), clamped; signed when symmetric (zero point 0, [−2^(bits−1), 2^(bits−1) − 1]),
 * in two's complement. */
static void qdq_codes(const hfx_quant *q, const float *w, int64_t n, float scale, int zp, uint8_t *codes) {
    const float r = scale != 0.0f ? 1.0f / scale : 0.0f;
    const float lo = q->symmetric ? (float)-(1 << (q->bits - 1)) : 0.0f;
    const float hi = q->symmetric ? (float)((1 << (q->bits - 1)) - 1) : (float)((1 << q->bits) - 1);
    const float z = q->symmetric ? 0.0f : (float)zp;
    for (int64_t i = 0; i < n; i++) codes[i] = (uint8_t)(int8_t)clamp_code(round_away(w[i] * r) + z, lo, hi);
}

/* NNCF's (quant.h); codes NULL: the scale and zero point only. */
static void nncf_block(const hfx_quant *q, const float *w, int64_t n, float *scale, uint8_t *zp, uint8_t *codes) {
    float lo, hi;
    block_range(w + 1, n - 1, w[0], w[0], &lo, &hi);
    float s;
    if (q->symmetric) {
        const int half = 1 << (q->bits - 1);
        float abs_lo = fabsf(lo);
        s = (abs_lo >= hi ? abs_lo : -hi) / (float)half;
        if (fabsf(s) < FLT_EPSILON) s = FLT_EPSILON;
        for (int64_t i = 0; codes && i < n; i++) {
            float c = clamp_code(round_even(w[i] / s), (float)-half, (float)(half - 1));
            codes[i] = (uint8_t)(int8_t)c; /* two's complement; a 4-bit code keeps its low nibble */
        }
        *zp = 0;
    } else {
        const int high = (1 << q->bits) - 1;
        lo = lo < 0.0f ? lo : 0.0f;
        hi = hi > 0.0f ? hi : 0.0f;
        s = (hi - lo) / (float)high;
        if (fabsf(s) < FLT_EPSILON) s = FLT_EPSILON;
        int z = (int)clamp_code(0.0f - rintf(lo / s), 0.0f, (float)high);
        for (int64_t i = 0; codes && i < n; i++) {
            codes[i] = (uint8_t)clamp_code(round_even(w[i] / s + (float)z), 0.0f, (float)high);
        }
        *zp = (uint8_t)z;
    }
    *scale = s;
}

/* torchao's (quant.h); codes NULL: the scale only. 4-bit codes come out offset by 8; the zero
 * point is 0. */
static void torchao_block(const hfx_quant *q, const float *w, int64_t n, float *scale, uint8_t *zp, uint8_t *codes) {
    const int qmin = -(1 << (q->bits - 1)), qmax = (1 << (q->bits - 1)) - 1;
    float lo, hi;
    block_range(w, n, 0.0f, 0.0f, &lo, &hi); /* min(amin, 0), max(amax, 0) */
    float a = -lo > hi ? -lo : hi;
    float s = a / ((float)(qmax - qmin) / 2.0f);
    s = s >= FLT_MIN ? s : FLT_MIN; /* torch.clamp(scale, min=eps): a NaN scale stays NaN there, 0 codes here */
    const float r = 1.0f / s, offset = q->bits == 4 ? 8.0f : 0.0f;
    for (int64_t i = 0; codes && i < n; i++)
        codes[i] = (uint8_t)(int8_t)(clamp_code(round_even(w[i] * r), (float)qmin, (float)qmax) + offset);
    *scale = s;
    *zp = 0;
}

/* x rounded to float16 when the arithmetic is float16's (numpy's float16 operations: computed
 * in float32, each result rounded). */
static inline float in_type(float x, bool half) { return half ? hfx_f16_to_f32(hfx_f32_to_f16(x)) : x; }

/* onnxruntime's for a table (quant.h); `size` − n padding codes are 0 (not stored: the row's
 * bytes end with the short block); codes NULL: the scale and zero point only. */
static void table_block(const hfx_quant *q, const float *w, int64_t n, int64_t size, float *scale, uint8_t *zp,
                        uint8_t *codes) {
    const bool half = q->scale_dtype == HFX_DTYPE_F16;
    float lo, hi;
    block_range(w, n, FLT_MAX, -FLT_MAX, &lo, &hi);
    float s;
    int z = 0;
    if (q->symmetric) {
        s = in_type((fabsf(hi) > fabsf(lo) ? hi : lo) / -8.0f, half);
        for (int64_t i = 0; codes && i < n; i++) {
            float c = s != 0.0f ? clamp_code(round_even(in_type(w[i] / s, half)), -8.0f, 7.0f) : 0.0f;
            codes[i] = (uint8_t)(int8_t)c; /* two's complement; the low nibble is the code */
        }
    } else {
        lo = lo < 0.0f ? lo : 0.0f;
        hi = hi > 0.0f ? hi : 0.0f;
        s = in_type(in_type(hi - lo, half) / 15.0f, half);
        z = s != 0.0f ? (int)clamp_code(round_even(in_type(-lo / s, half)), 0.0f, 15.0f) : 8;
        for (int64_t i = 0; codes && i < n; i++) {
            float c = in_type(in_type(w[i] / s, half) + (float)z, half);
            codes[i] = s != 0.0f ? (uint8_t)clamp_code(round_even(c), 0.0f, 15.0f) : 8;
        }
    }
    if (codes) memset(codes + n, 0, (size_t)(size - n));
    *scale = s;
    *zp = (uint8_t)z;
}

/* ---- reading ---- */

/* `count` bytes of 4-bit elements, elements 2j and 2j + 1 → byte j, the first in the low nibble;
 * elements past the n given read 0. */
static void pack_nibbles(const uint8_t *elements, uint64_t n, uint64_t count, uint8_t *bytes) {
    for (uint64_t j = 0; j < count; j++) {
        uint64_t k = 2 * j;
        uint8_t a = k < n ? elements[k] : 0, b = k + 1 < n ? elements[k + 1] : 0;
        bytes[j] = (uint8_t)((a & 0xF) | (b & 0xF) << 4);
    }
}

/* A scale as stored (the scale dtype: float16, bfloat16 or float32) at out; the byte after it. */
static uint8_t *put_scale(const hfx_quant *q, float s, uint8_t *out) {
    if (q->scale_dtype == HFX_DTYPE_F16 || q->scale_dtype == HFX_DTYPE_BF16) {
        uint16_t h = q->scale_dtype == HFX_DTYPE_F16 ? hfx_f32_to_f16(s) : hfx_f32_to_bf16(s);
        memcpy(out, &h, 2);
        return out + 2;
    }
    memcpy(out, &s, 4);
    return out + 4;
}

/* Weights [c0, c1) of row `row` as float32, in the weight's dtype first (the values the
 * unquantized graph would hold: a float32 checkpoint exported as float16 is rounded first). */
static hfx_status read_row(const hfx_init *weight, int64_t row, int64_t c0, int64_t c1, float *w, hfx_error *err) {
    int64_t cols = weight->shape[1], n = c1 - c0;
    hfx_status st = hfx_init_read(weight, (uint64_t)(row * cols + c0), (uint64_t)n, w, err);
    if (!st && weight->dtype != HFX_DTYPE_F32) { /* 16-bit values at w's front: widen from the back */
        const uint8_t *h = (const uint8_t *)w;
        for (int64_t i = n - 1; i >= 0; i--) {
            uint16_t x;
            memcpy(&x, h + 2 * i, 2);
            w[i] = weight->dtype == HFX_DTYPE_F16 ? hfx_f16_to_f32(x) : hfx_bf16_to_f32(x);
        }
    }
    return st;
}

/* Transposed layouts read a slice of every row per band of columns, and a page holds parts of
 * several rows: the rows read since `*kept` are let go every RELEASE_BYTES (and at `last`), so
 * resident memory stays bounded by that, not by the tensor — the next band maps them again
 * from the page cache. */
enum { RELEASE_BYTES = 4 << 20 };

static void release_rows(const hfx_init *weight, int64_t row, bool last, int64_t *kept) {
    const int64_t cols = weight->shape[1];
    if ((uint64_t)(row + 1 - *kept) * (uint64_t)cols * hfx_dtype_size(weight->dtype) >= RELEASE_BYTES || last) {
        hfx_init_release_range(weight, (uint64_t)*kept * (uint64_t)cols, (uint64_t)(row + 1 - *kept) * (uint64_t)cols);
        *kept = row + 1;
    }
}

/* A row's blocks b0..b1 quantized: scales, zero points and packed codes (block k's at
 * codes + k · size · bits / 8). */
typedef struct row_blocks {
    float *w, *scales;
    uint8_t *codes, *zps;
} row_blocks;

/* The source element where row `row` of a from-blocks weight starts: its one part's rows are the view's leading axes
 * (a rotary row order is a view of several), its columns the last, of stride 1. */
static int64_t row_start(const hfx_init_part *p, int64_t row) {
    int64_t off = p->offset;
    for (int d = p->rank - 2; d >= 0; d--) {
        off += row % p->shape[d] * p->strides[d];
        row /= p->shape[d];
    }
    return off;
}

/* The bits a block format's or grid's blocks hold as a quantized linear's, its block, and whether it has zero points */
static int stored_bits(const hfx_block_format *f, int64_t *block, bool *zeros) {
    if (!f->grid) {
        *block = f->block, *zeros = false;
        return f->symmetric_bits;
    }
    *block = (int64_t)f->grid->tile_cols, *zeros = f->grid->zero_data != NULL;
    return hfx_grid_int_bits(f->grid);
}

bool hfx_quant_from_blocks(const hfx_init *weight, hfx_quant_rule rule, hfx_quant_layout layout, hfx_quant *q) {
    const hfx_init_part *p = weight->n_parts == 1 ? &weight->parts[0] : NULL;
    int64_t block;
    bool zeros;
    int bits = p && p->blocks ? stored_bits(p->blocks, &block, &zeros) : 0;
    if (!bits || weight->rank != 2 || weight->quant || p->strides[p->rank - 1] != 1 ||
        p->shape[p->rank - 1] != weight->shape[1] || weight->shape[1] % block ||
        (rule != HFX_QUANT_RULE_ORT && rule != HFX_QUANT_RULE_NNCF))
        return false;
    /* every row starts a block: a whole stored row for a grid (whose blocks are its rows' tiles) */
    int64_t unit = p->blocks->grid ? (int64_t)p->blocks->grid->cols : block;
    for (int d = 0; d + 1 < p->rank; d++)
        if (p->strides[d] % unit) return false;
    if (p->offset % unit || (p->blocks->grid && weight->shape[1] != unit)) return false;
    if (rule == HFX_QUANT_RULE_ORT && (block < 16 || (block & (block - 1)))) return false; /* MatMulNBits' blocks */
    *q = (hfx_quant){.rule = rule, .bits = bits, .block = block, .symmetric = !zeros, .scale_dtype = HFX_DTYPE_F32,
                     .layout = layout, .from_blocks = true};
    return true;
}

/* Blocks b0..b1 of row `row` of a from-blocks weight: the stored scales, zero points and codes, signed for NNCF's
 * symmetric rule */
static void stored_row(const hfx_init *init, int64_t row, int64_t b0, int64_t b1, bool codes, row_blocks *r) {
    const hfx_init_part *p = &init->quant_of->parts[0];
    const hfx_block_format *f = p->blocks;
    int64_t block;
    bool zeros;
    const int bits = stored_bits(f, &block, &zeros), half = 1 << (bits - 1);
    const int64_t start = row_start(p, row);
    for (int64_t b = b0; b <= b1; b++) {
        int64_t k = b - b0;
        uint8_t *c = r->codes + k * block;
        if (f->grid) {
            hfx_grid_split(f->grid, p->base, (uint64_t)(start / init->quant_of->shape[1]), (uint64_t)b, &r->scales[k],
                           &r->zps[k], c);
        } else {
            f->split(p->base + (uint64_t)(start / block + b) * f->bytes, &r->scales[k], c);
            r->zps[k] = (uint8_t)half;
        }
        if (init->quant->rule == HFX_QUANT_RULE_NNCF && !zeros) /* its symmetric codes are signed: code − 2^(bits−1) */
            for (int64_t i = 0; i < block; i++) c[i] = (uint8_t)((int)c[i] - half);
        if (codes && bits == 4) {
            for (int64_t i = 0; i < block; i += 2) c[i / 2] = (uint8_t)((c[i] & 0xF) | (c[i + 1] & 0xF) << 4);
            memmove(r->codes + k * block / 2, c, (size_t)(block / 2));
        }
    }
}

static hfx_status quantize_row(const hfx_init *init, int64_t row, int64_t b0, int64_t b1, bool codes, row_blocks *r,
                               hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    if (q->from_blocks) {
        if (!hfx_mapping_intact(weight->parts[0].mapping))
            return hfx_fail(err, HFX_ERR_IO, "'%s': its file changed size while being read", weight->source);
        stored_row(init, row, b0, b1, codes, r);
        return HFX_OK;
    }
    const int64_t cols = weight->shape[1], size = hfx_quant_block_size(q, cols);
    int64_t c0 = b0 * size, c1 = (b1 + 1) * size < cols ? (b1 + 1) * size : cols;
    hfx_status st = read_row(weight, row, c0, c1, r->w, err);
    for (int64_t b = b0; b <= b1 && !st; b++) {
        int64_t k = b - b0, n = c1 - b * size < size ? c1 - b * size : size;
        uint8_t *c = codes ? r->codes + k * size : NULL; /* one code a byte, then packed in place */
        if (q->rule == HFX_QUANT_RULE_ORT) ort_block(q, r->w + k * size, n, size, &r->scales[k], &r->zps[k], c);
        else if (q->rule == HFX_QUANT_RULE_ORT_TABLE)
            table_block(q, r->w + k * size, n, size, &r->scales[k], &r->zps[k], c);
        else if (q->rule == HFX_QUANT_RULE_TORCHAO) torchao_block(q, r->w + k * size, n, &r->scales[k], &r->zps[k], c);
        else nncf_block(q, r->w + k * size, n, &r->scales[k], &r->zps[k], c);
        if (c && q->bits == 4) {
            for (int64_t i = 0; i < size; i += 2) c[i / 2] = (uint8_t)((c[i] & 0xF) | (c[i + 1] & 0xF) << 4);
            memmove(r->codes + k * size / 2, c, (size_t)(size / 2));
        }
    }
    return st;
}

/* The blocks of a row that its part elements [at, stop) need. */
static void blocks_for(const hfx_quant *q, hfx_quant_part part, int64_t cols, uint64_t at, uint64_t stop, int64_t *b0,
                       int64_t *b1) {
    int64_t blocks = hfx_quant_blocks(q, cols);
    uint64_t bytes = (uint64_t)hfx_quant_block_size(q, cols) * (uint64_t)q->bits / 8;
    if (part == HFX_QUANT_CODES) {
        *b0 = (int64_t)(at / bytes), *b1 = (int64_t)((stop - 1) / bytes);
    } else if (part == HFX_QUANT_SCALES || q->bits == 8 || zeros_flat(q)) {
        *b0 = (int64_t)at, *b1 = (int64_t)stop - 1;
    } else { /* onnxruntime's 4-bit zero points: two blocks a byte */
        *b0 = (int64_t)at * 2, *b1 = (int64_t)(stop - 1) * 2 + 1;
        if (*b1 >= blocks) *b1 = blocks - 1;
    }
}

/* Row `row`'s part elements [at, stop) from its quantized blocks b0..; flat zero points come out
 * one element a byte (packed by the caller). */
static uint8_t *emit(const hfx_quant *q, hfx_quant_part part, int64_t cols, const row_blocks *r, int64_t b0,
                     uint64_t at, uint64_t stop, uint8_t *out) {
    const int64_t size = hfx_quant_block_size(q, cols), blocks = hfx_quant_blocks(q, cols);
    const uint64_t bytes = (uint64_t)size * (uint64_t)q->bits / 8;
    if (part == HFX_QUANT_CODES) { /* the blocks' packed codes lie in order */
        memcpy(out, r->codes + (at - (uint64_t)b0 * bytes), (size_t)(stop - at));
        return out + (stop - at);
    }
    for (uint64_t i = at; i < stop; i++) {
        if (part == HFX_QUANT_SCALES) {
            out = put_scale(q, r->scales[i - (uint64_t)b0], out);
        } else if (q->bits == 8 || zeros_flat(q)) {
            *out++ = r->zps[i - (uint64_t)b0];
        } else { /* blocks 2i and 2i + 1; a missing second one reads 8, as onnxruntime writes it */
            int64_t lo = (int64_t)i * 2 - b0;
            uint8_t hi = (int64_t)i * 2 + 1 < blocks ? r->zps[lo + 1] : (uint8_t)(1 << (q->bits - 1));
            *out++ = (uint8_t)((r->zps[lo] & 0xF) | (hi & 0xF) << 4);
        }
    }
    return out;
}

/* ---- onnxruntime's dynamic quantization ---- */

/* quantize_dynamic's scale (as stored, float32) and zero point for the range [lo, hi]. */
static void dynamic_params(const hfx_quant *q, float lo, float hi, float *scale, int *zp) {
    const double qmin = q->reduce_range ? (q->symmetric ? -64.0 : 0.0) : (q->symmetric ? -127.0 : 0.0);
    const double qmax = q->reduce_range ? (q->symmetric ? 64.0 : 127.0) : (q->symmetric ? 127.0 : 255.0);
    lo = lo < 0.0f ? lo : 0.0f;
    hi = hi > 0.0f ? hi : 0.0f;
    if (q->symmetric) {
        float a = fabsf(lo) > fabsf(hi) ? fabsf(lo) : fabsf(hi);
        lo = -a, hi = a;
    }
    double s = ((double)hi - (double)lo) / (qmax - qmin);
    if (s < (double)FLT_MIN) { /* float32's smallest normal: scale 1, zero point 0 */
        *scale = 1.0f, *zp = 0;
        return;
    }
    *scale = (float)s;
    *zp = q->symmetric ? 0 : (int)nearbyint(qmin - (double)lo / s); /* float64, halves to even */
}

/* quantize_dynamic's codes: clip(round(w / scale) + zero point) in the type's full range. */
static void dynamic_codes(const hfx_quant *q, const float *w, int64_t n, float scale, int zp, uint8_t *codes) {
    const float lo = q->symmetric ? -128.0f : 0.0f, hi = q->symmetric ? 127.0f : 255.0f;
    for (int64_t i = 0; i < n; i++)
        codes[i] = (uint8_t)(int8_t)(int)clamp_code(round_even(w[i] / scale) + (float)zp, lo, hi);
}

hfx_status hfx_quant_measure(hfx_arena *arena, const hfx_init *weight, hfx_quant *q, hfx_error *err) {
    if (q->rule != HFX_QUANT_RULE_ORT_DYNAMIC) return HFX_OK;
    const int64_t rows = weight->shape[0], cols = weight->shape[1], n = q->block == HFX_QUANT_TENSOR ? 1 : rows;
    float *lo = hfx_arena_alloc(arena, sizeof(float) * (size_t)n), *hi = hfx_arena_alloc(arena, sizeof(float) * (size_t)n);
    float *w = malloc(sizeof(float) * (size_t)(cols + 1));
    hfx_status st = lo && hi && w ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n && !st; i++) lo[i] = FLT_MAX, hi[i] = -FLT_MAX;
    int64_t kept = 0;
    for (int64_t r = 0; r < rows && !st; r++) {
        st = read_row(weight, r, 0, cols, w, err);
        if (st) break;
        int64_t k = n == 1 ? 0 : r;
        block_range(w, cols, lo[k], hi[k], &lo[k], &hi[k]);
        release_rows(weight, r, r + 1 == rows, &kept);
    }
    free(w);
    q->lo = lo, q->hi = hi;
    return st;
}

/* A dynamic part's elements [e0, e1): codes as the weight ([rows, cols]) or transposed
 * ([cols, rows], read a band of columns at a time), scales and zero points per tensor or per
 * row, from the measured ranges. */
static hfx_status dynamic_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    const hfx_quant_part part = (hfx_quant_part)init->quant_part;
    const int64_t rows = weight->shape[0], cols = weight->shape[1];
    const bool per_tensor = q->block == HFX_QUANT_TENSOR, columns = q->layout == HFX_QUANT_COLUMNS;
    uint8_t *out = dst;
    if (!q->lo || !q->hi) return hfx_fail(err, HFX_ERR_INTERNAL, "'%s': dynamic quantization unmeasured", init->source);
    if (part != HFX_QUANT_CODES) { /* one element per tensor or per row */
        for (uint64_t e = first; e < first + count; e++) {
            int64_t k = per_tensor ? 0 : (int64_t)e;
            float scale;
            int zp;
            dynamic_params(q, q->lo[k], q->hi[k], &scale, &zp);
            if (part == HFX_QUANT_SCALES) out = put_scale(q, scale, out);
            else *out++ = (uint8_t)(int8_t)zp;
        }
        return HFX_OK;
    }
    enum { BAND = 64 }; /* columns read per pass down the rows (transposed codes) */
    const int64_t width = columns ? BAND : cols;
    float *w = malloc(sizeof(float) * (size_t)(width + 1));
    uint8_t *codes = malloc((size_t)(width + 1));
    uint8_t *band = columns ? malloc((size_t)(BAND * rows)) : NULL;
    hfx_status st = w && codes && (!columns || band) ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (uint64_t e = first; e < first + count && !st;) {
        /* rows of the stored layout: a weight row (as-is), or a band of weight columns */
        int64_t r0 = columns ? (int64_t)(e / (uint64_t)rows) / BAND * BAND : (int64_t)(e / (uint64_t)cols);
        int64_t r1 = columns ? (r0 + BAND < cols ? r0 + BAND : cols) : r0 + 1;
        uint64_t start = columns ? (uint64_t)r0 * (uint64_t)rows : (uint64_t)r0 * (uint64_t)cols;
        uint64_t end = columns ? (uint64_t)r1 * (uint64_t)rows : start + (uint64_t)cols;
        uint8_t *src = columns ? band : codes;
        int64_t kept = 0;
        for (int64_t n = 0; n < (columns ? rows : 1) && !st; n++) {
            int64_t row = columns ? n : r0, c0 = columns ? r0 : 0, c1 = columns ? r1 : cols;
            st = read_row(weight, row, c0, c1, w, err);
            if (st) break;
            int64_t k = per_tensor ? 0 : row;
            float scale;
            int zp;
            dynamic_params(q, q->lo[k], q->hi[k], &scale, &zp);
            dynamic_codes(q, w, c1 - c0, scale, zp, codes);
            for (int64_t j = 0; columns && j < c1 - c0; j++) band[j * rows + n] = codes[j];
            if (columns) release_rows(weight, n, n + 1 == rows, &kept);
        }
        uint64_t stop = end < first + count ? end : first + count;
        if (!st) memcpy(out, src + (e - start), (size_t)(stop - e));
        out += stop - e;
        e = stop;
    }
    free(w), free(codes), free(band);
    return st;
}

/* The transposed layout (HFX_QUANT_COLUMNS): element e of the codes is weight (e % rows,
 * e / rows), of the scales and zero points block (e % rows, e / rows). Codes come a band of
 * `size` columns at a time: every row's block of the band, quantized, then read down the
 * columns; a band holds size · rows codes (a byte each). Each band reads a slice of every
 * row, letting the rows' pages go as it passes them (release_rows). */
static hfx_status columns_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    const hfx_quant_part part = (hfx_quant_part)init->quant_part;
    const int64_t rows = weight->shape[0], cols = weight->shape[1], size = hfx_quant_block_size(q, cols);
    const bool packed = q->bits == 4 && part != HFX_QUANT_SCALES; /* two elements a byte */
    const uint64_t total = (uint64_t)rows * (uint64_t)(part == HFX_QUANT_CODES ? cols : hfx_quant_blocks(q, cols));
    uint64_t e0 = packed ? 2 * first : first, e1 = packed ? 2 * (first + count) : first + count;
    if (e1 > total) e1 = total; /* an odd count's last byte holds one element */
    float *w = malloc(sizeof(float) * (size_t)size), scale;
    uint8_t *block = malloc((size_t)size), zp;
    uint8_t *band = part == HFX_QUANT_CODES ? malloc((size_t)(size * rows)) : NULL;
    uint8_t *elements = part != HFX_QUANT_SCALES ? malloc((size_t)(e1 - e0 + 1)) : NULL;
    hfx_status st = w && block && (part != HFX_QUANT_CODES || band) && (part == HFX_QUANT_SCALES || elements)
                        ? HFX_OK
                        : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    uint8_t *out = dst;
    int64_t kept = 0; /* scales and zero points: the first row read since the last release */
    for (uint64_t e = e0; e < e1 && !st;) {
        if (part == HFX_QUANT_CODES) {
            int64_t b = (int64_t)(e / (uint64_t)rows) / size, k0 = b * size, k1 = k0 + size < cols ? k0 + size : cols;
            int64_t band_kept = 0;
            for (int64_t n = 0; n < rows && !st; n++) {
                st = read_row(weight, n, k0, k1, w, err);
                if (st) break;
                ort_block(q, w, k1 - k0, size, &scale, &zp, NULL);
                qdq_codes(q, w, k1 - k0, scale, zp, block);
                for (int64_t j = 0; j < k1 - k0; j++) band[j * rows + n] = block[j];
                release_rows(weight, n, n + 1 == rows, &band_kept);
            }
            uint64_t band_end = (uint64_t)k1 * (uint64_t)rows, stop = band_end < e1 ? band_end : e1;
            if (!st) memcpy(elements + (e - e0), band + (e - (uint64_t)k0 * (uint64_t)rows), (size_t)(stop - e));
            e = stop;
            continue;
        }
        int64_t n = (int64_t)(e % (uint64_t)rows), b = (int64_t)(e / (uint64_t)rows);
        int64_t k0 = b * size, k1 = k0 + size < cols ? k0 + size : cols;
        st = read_row(weight, n, k0, k1, w, err);
        if (st) break;
        if (n < kept) kept = n; /* a new band of blocks started over the rows */
        release_rows(weight, n, n + 1 == rows || e + 1 == e1, &kept);
        ort_block(q, w, k1 - k0, size, &scale, &zp, NULL);
        if (part == HFX_QUANT_ZEROS) elements[e - e0] = zp;
        else out = put_scale(q, scale, out);
        e++;
    }
    if (!st && part != HFX_QUANT_SCALES) {
        if (packed) pack_nibbles(elements, e1 - e0, count, dst);
        else memcpy(dst, elements, (size_t)(e1 - e0));
    }
    free(w), free(block), free(band), free(elements);
    return st;
}

hfx_status hfx_quant_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    if ((weight->dtype != HFX_DTYPE_F32 && weight->dtype != HFX_DTYPE_F16 && weight->dtype != HFX_DTYPE_BF16) ||
        weight->rank != 2)
        return hfx_fail(err, HFX_ERR_INTERNAL, "'%s': a quantized part of a weight that is not a float matrix",
                        init->source);
    if (q->rule == HFX_QUANT_RULE_ORT_DYNAMIC) return dynamic_read(init, first, count, dst, err);
    if (q->layout == HFX_QUANT_COLUMNS) return columns_read(init, first, count, dst, err);
    const int64_t cols = weight->shape[1], blocks = hfx_quant_blocks(q, cols), size = hfx_quant_block_size(q, cols);
    const hfx_quant_part part = (hfx_quant_part)init->quant_part;
    /* flat 4-bit zero points are packed across rows: read their elements, then pack */
    const bool flat = part == HFX_QUANT_ZEROS && zeros_flat(q) && q->bits == 4;
    const uint64_t per_row = row_size(q, part, cols);
    uint64_t lo = first, hi = first + count;
    if (flat) {
        uint64_t total = (uint64_t)weight->shape[0] * (uint64_t)blocks;
        lo = 2 * first, hi = 2 * (first + count) < total ? 2 * (first + count) : total;
    }
    row_blocks r = {malloc(sizeof(float) * (size_t)(blocks * size + 1)), malloc(sizeof(float) * (size_t)(blocks + 1)),
                    malloc((size_t)(blocks * size + 1)), malloc((size_t)(blocks + 1))};
    uint8_t *elements = flat ? malloc((size_t)(hi - lo + 1)) : NULL;
    hfx_status st = r.w && r.scales && r.codes && r.zps && (!flat || elements) ? HFX_OK
                                                                             : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    uint8_t *out = flat ? elements : dst;
    /* row by row: the blocks the requested elements of the row need, read in one go. A part
     * small per row (scales) covers many rows per call: the checkpoint pages behind the rows
     * read are let go every RELEASE_BYTES, so resident memory stays bounded by that, not by
     * the call */
    const uint64_t row_bytes = (uint64_t)cols * hfx_dtype_size(weight->dtype);
    int64_t kept = -1; /* the first row read since the last release */
    for (uint64_t e = lo; e < hi && !st;) {
        int64_t row = (int64_t)(e / per_row), b0, b1;
        uint64_t at = e % per_row, stop = per_row - at < hi - e ? per_row : at + (hi - e);
        blocks_for(q, part, cols, at, stop, &b0, &b1);
        st = quantize_row(init, row, b0, b1, part == HFX_QUANT_CODES, &r, err);
        if (!st) out = emit(q, part, cols, &r, b0, at, stop, out);
        e += stop - at;
        if (kept < 0) kept = row;
        if (!st && (uint64_t)(row + 1 - kept) * row_bytes >= RELEASE_BYTES) {
            hfx_init_release_range(weight, (uint64_t)kept * (uint64_t)cols, (uint64_t)(row + 1 - kept) * (uint64_t)cols);
            kept = -1;
        }
    }
    if (!st && flat) pack_nibbles(elements, hi - lo, count, dst);
    free(r.w), free(r.scales), free(r.codes), free(r.zps), free(elements);
    return st;
}

void hfx_quant_source_range(const hfx_init *init, uint64_t first, uint64_t count, uint64_t *src_first,
                            uint64_t *src_count) {
    const hfx_quant *q = init->quant;
    int64_t cols = init->quant_of->shape[1];
    if (q->layout == HFX_QUANT_COLUMNS || (q->rule == HFX_QUANT_RULE_ORT_DYNAMIC && init->quant_part != HFX_QUANT_CODES)) {
        *src_first = *src_count = 0; /* the transposed layouts let rows go as they read them; a dynamic
                                        scale or zero point reads none */
        return;
    }
    uint64_t per_row = row_size(q, (hfx_quant_part)init->quant_part, cols);
    if (init->quant_part == HFX_QUANT_ZEROS && zeros_flat(q) && q->bits == 4)
        first *= 2, count *= 2; /* two elements a byte */
    uint64_t r0 = first / per_row, r1 = (first + count) / per_row; /* whole rows done */
    *src_first = r0 * (uint64_t)cols;
    *src_count = r1 > r0 ? (r1 - r0) * (uint64_t)cols : 0;
}
