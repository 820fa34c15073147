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

/* Block b of row `row`: read its weights in the weight's dtype (the values the unquantized
 * graph would hold: a float32 checkpoint exported as float16 is rounded first), widen, quantize. */
static hfx_status block_of(const hfx_init *init, int64_t row, int64_t b, float *w, float *scale, uint8_t *zp,
                           uint8_t *codes, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    int64_t cols = weight->shape[1], start = b * q->block;
    int64_t n = cols - start < q->block ? cols - start : q->block;
    hfx_status st = hfx_init_read(weight, (uint64_t)(row * cols + start), (uint64_t)n, w, err);
    if (!st && weight->dtype != HFX_DTYPE_F32) { /* 16-bit values, read into w's front: widen from the back */
        const uint16_t *h = (const uint16_t *)w;
        for (int64_t i = n - 1; i >= 0; i--) {
            uint16_t x;
            memcpy(&x, h + i, 2);
            w[i] = weight->dtype == HFX_DTYPE_F16 ? hfx_f16_to_f32(x) : hfx_bf16_to_f32(x);
        }
    }
    if (!st) ort_block(q, w, n, q->block, scale, zp, codes);
    return st;
}

hfx_status hfx_quant_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst, hfx_error *err) {
    const hfx_quant *q = init->quant;
    const hfx_init *weight = init->quant_of;
    if ((weight->dtype != HFX_DTYPE_F32 && weight->dtype != HFX_DTYPE_F16 && weight->dtype != HFX_DTYPE_BF16) ||
        weight->rank != 2 || q->rule != HFX_QUANT_RULE_ORT)
        return hfx_fail(err, HFX_ERR_INTERNAL, "'%s': a quantized part of a weight that is not a float matrix",
                        init->source);
    int64_t cols = weight->shape[1], blocks = hfx_quant_blocks(q, cols);
    hfx_quant_part part = (hfx_quant_part)init->quant_part;
    uint64_t per_row = row_size(q, part, cols);
    float *w = malloc(sizeof(float) * (size_t)q->block);
    uint8_t *codes = malloc((size_t)q->block);
    if (!w || !codes) {
        free(w), free(codes);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    uint8_t *out = dst;
    hfx_status st = HFX_OK;
    /* one block at a time: the block that holds element e, its element range in the part */
    for (uint64_t e = first; e < first + count && !st;) {
        int64_t row = (int64_t)(e / per_row);
        uint64_t at = e % per_row;
        int64_t b;
        uint64_t lo, hi; /* the part's elements, within the row, this block (or block pair) fills */
        if (part == HFX_QUANT_CODES) {
            uint64_t bytes = (uint64_t)q->block * (uint64_t)q->bits / 8;
            b = (int64_t)(at / bytes), lo = (uint64_t)b * bytes, hi = lo + bytes;
        } else if (part == HFX_QUANT_SCALES || q->bits == 8) {
            b = (int64_t)at, lo = at, hi = at + 1;
        } else { /* a byte of 4-bit zero points: two blocks */
            b = (int64_t)at * 2, lo = at, hi = at + 1;
        }
        float scale;
        uint8_t zp, zp2 = (uint8_t)(1 << (q->bits - 1));
        st = block_of(init, row, b, w, &scale, &zp, codes, err);
        if (!st && part == HFX_QUANT_ZEROS && q->bits == 4 && b + 1 < blocks) {
            float s2;
            uint8_t *c2 = malloc((size_t)q->block);
            st = c2 ? block_of(init, row, b + 1, w, &s2, &zp2, c2, err) : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
            free(c2);
        }
        if (st) break;
        uint8_t bytes[8]; /* this block's part elements, when not codes */
        const uint8_t *src = bytes;
        if (part == HFX_QUANT_CODES) {
            if (q->bits == 4)
                for (int64_t i = 0; i < q->block; i += 2) codes[i / 2] = (uint8_t)(codes[i] | codes[i + 1] << 4);
            src = codes;
        } else if (part == HFX_QUANT_SCALES) {
            if (q->scale_dtype == HFX_DTYPE_F16) {
                uint16_t h = hfx_f32_to_f16(scale);
                memcpy(bytes, &h, 2);
            } else {
                memcpy(bytes, &scale, 4);
            }
        } else {
            bytes[0] = q->bits == 4 ? (uint8_t)((zp & 0xF) | (zp2 & 0xF) << 4) : zp;
        }
        size_t es = part == HFX_QUANT_SCALES ? hfx_dtype_size(init->dtype) : 1;
        uint64_t from = at - lo, n = hi - at < first + count - e ? hi - at : first + count - e;
        memcpy(out, src + from * es, (size_t)(n * es));
        out += n * es;
        e += n;
    }
    free(w), free(codes);
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
