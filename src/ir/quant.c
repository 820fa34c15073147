/* Block-wise quantization (quant.h): each rule's arithmetic, and the reader that computes a
 * quantized part's bytes block by block from the weight's float view. Built with floating-point
 * contraction off (CMakeLists.txt): w · (1 / scale) + zp must round twice, as the references
 * compute it, never once in a fused multiply-add. */
#include "ir/quant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/half.h"
#include "ir/graph.h"

int64_t hfx_quant_blocks(const hfx_quant *q, int64_t cols) { return (cols + q->block - 1) / q->block; }

bool hfx_quant_valid(const hfx_quant *q, int64_t cols) {
    bool pow2 = q->block >= 16 && (q->block & (q->block - 1)) == 0;
    return (q->bits == 4 || q->bits == 8) && q->block > 0 && (pow2 || q->block == cols);
}

/* bytes (codes, zero points) or elements (scales) of one weight row's part */
static uint64_t row_size(const hfx_quant *q, hfx_quant_part part, int64_t cols) {
    uint64_t blocks = (uint64_t)hfx_quant_blocks(q, cols);
    switch (part) {
    case HFX_QUANT_CODES: return blocks * (uint64_t)q->block * (uint64_t)q->bits / 8;
    case HFX_QUANT_SCALES: return blocks;
    default: return (blocks * (uint64_t)q->bits + 7) / 8;
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
    init->rank = part == HFX_QUANT_CODES ? 3 : 2;
    init->shape[0] = rows;
    init->shape[1] = part == HFX_QUANT_CODES ? blocks : (int64_t)row_size(q, part, cols);
    init->shape[2] = q->block * q->bits / 8;
    init->source = weight->source;
    init->quant = copy;
    init->quant_part = part;
    init->quant_of = weight;
    return init;
}

/* One block by HFX_QUANT_RULE_ORT: `n` weights of a block of `size` → its scale (as stored in
 * q->scale_dtype, and read back: the codes use the stored scale), zero point and codes. The
 * reference quantizes the weights that exist: a last block's padding takes no part in its range
 * and keeps code 0. */
static void ort_block(const hfx_quant *q, const float *w, int64_t n, int64_t size, float *scale, uint8_t *zp,
                      uint8_t *codes) {
    const int kmax = (1 << q->bits) - 1, mid = 1 << (q->bits - 1);
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int64_t i = 0; i < n; i++) {
        if (w[i] < lo) lo = w[i];
        if (w[i] > hi) hi = w[i];
    }
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
        z = zf < 0.0f ? 0 : zf > (float)kmax ? kmax : (int)roundf(zf);
    }
    if (q->scale_dtype == HFX_DTYPE_F16) s = hfx_f16_to_f32(hfx_f32_to_f16(s));
    *scale = s;
    *zp = (uint8_t)z;
    float r = s != 0.0f ? 1.0f / s : 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float c = roundf(w[i] * r + (float)z);
        codes[i] = (uint8_t)(c < 0.0f ? 0.0f : c > (float)kmax ? (float)kmax : c);
    }
    memset(codes + n, 0, (size_t)(size - n));
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

/* The blocks of a row that hold its part elements [at, stop). */
static void blocks_for(const hfx_quant *q, hfx_quant_part part, int64_t blocks, uint64_t at, uint64_t stop,
                       int64_t *b0, int64_t *b1) {
    uint64_t bytes = (uint64_t)q->block * (uint64_t)q->bits / 8;
    if (part == HFX_QUANT_CODES) {
        *b0 = (int64_t)(at / bytes), *b1 = (int64_t)((stop - 1) / bytes);
    } else if (part == HFX_QUANT_SCALES || q->bits == 8) {
        *b0 = (int64_t)at, *b1 = (int64_t)stop - 1;
    } else { /* 4-bit zero points: two blocks a byte */
        *b0 = (int64_t)at * 2, *b1 = (int64_t)(stop - 1) * 2 + 1;
        if (*b1 >= blocks) *b1 = blocks - 1;
    }
}

hfx_status hfx_quant_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    if ((weight->dtype != HFX_DTYPE_F32 && weight->dtype != HFX_DTYPE_F16 && weight->dtype != HFX_DTYPE_BF16) ||
        weight->rank != 2 || q->rule != HFX_QUANT_RULE_ORT)
        return hfx_fail(err, HFX_ERR_INTERNAL, "'%s': a quantized part of a weight that is not a float matrix",
                        init->source);
    const int64_t cols = weight->shape[1], blocks = hfx_quant_blocks(q, cols), size = q->block;
    const hfx_quant_part part = (hfx_quant_part)init->quant_part;
    const uint64_t per_row = row_size(q, part, cols), bytes = (uint64_t)size * (uint64_t)q->bits / 8;
    /* a row's weights, codes (one per byte, then packed in place), scales and zero points */
    float *w = malloc(sizeof(float) * (size_t)(blocks * size)), *scales = malloc(sizeof(float) * (size_t)blocks);
    uint8_t *codes = malloc((size_t)(blocks * size)), *zps = malloc((size_t)blocks);
    hfx_status st = w && scales && codes && zps ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    uint8_t *out = dst;
    /* row by row: the blocks the requested elements of the row need, read in one go */
    for (uint64_t e = first, end = first + count; e < end && !st;) {
        int64_t row = (int64_t)(e / per_row), b0, b1;
        uint64_t at = e % per_row, stop = per_row - at < end - e ? per_row : at + (end - e);
        blocks_for(q, part, blocks, at, stop, &b0, &b1);
        int64_t c0 = b0 * size, c1 = (b1 + 1) * size < cols ? (b1 + 1) * size : cols;
        st = read_row(weight, row, c0, c1, w, err);
        for (int64_t b = b0; b <= b1 && !st; b++) {
            int64_t k = b - b0, n = c1 - b * size < size ? c1 - b * size : size;
            uint8_t *c = codes + k * size;
            ort_block(q, w + k * size, n, size, &scales[k], &zps[k], c);
            if (q->bits == 4)
                for (int64_t i = 0; i < size; i += 2) c[i / 2] = (uint8_t)(c[i] | c[i + 1] << 4);
        }
        if (st) break;
        for (uint64_t i = at; i < stop; i++) { /* the part's elements, in order */
            switch (part) {
            case HFX_QUANT_CODES: {
                uint64_t k = i / bytes - (uint64_t)b0;
                *out++ = codes[k * (uint64_t)size + i % bytes];
                break;
            }
            case HFX_QUANT_SCALES: {
                float sc = scales[i - (uint64_t)b0];
                if (q->scale_dtype == HFX_DTYPE_F16) {
                    uint16_t h = hfx_f32_to_f16(sc);
                    memcpy(out, &h, 2);
                    out += 2;
                } else {
                    memcpy(out, &sc, 4);
                    out += 4;
                }
                break;
            }
            default:
                if (q->bits == 8) {
                    *out++ = zps[i - (uint64_t)b0];
                } else { /* blocks 2i and 2i + 1; a missing second one reads 8, as onnxruntime writes it */
                    int64_t lo = (int64_t)i * 2 - b0;
                    uint8_t hi = (int64_t)i * 2 + 1 < blocks ? zps[lo + 1] : (uint8_t)(1 << (q->bits - 1));
                    *out++ = (uint8_t)((zps[lo] & 0xF) | (hi & 0xF) << 4);
                }
            }
        }
        e += stop - at;
    }
    free(w), free(scales), free(codes), free(zps);
    return st;
}

void hfx_quant_source_range(const hfx_init *init, uint64_t first, uint64_t count, uint64_t *src_first,
                            uint64_t *src_count) {
    int64_t cols = init->quant_of->shape[1];
    uint64_t per_row = row_size(init->quant, (hfx_quant_part)init->quant_part, cols);
    uint64_t r0 = first / per_row, r1 = (first + count) / per_row; /* whole rows done */
    *src_first = r0 * (uint64_t)cols;
    *src_count = r1 > r0 ? (r1 - r0) * (uint64_t)cols : 0;
}
