/* Converting transposes of squares. Whole 8×8 squares of 2-byte elements and 4×4 squares of
 * 4-byte ones go through SSE2 registers (every x86-64 has them): the square is transposed as
 * bits, then each of its rows widened or narrowed in registers and stored as one run of dst, so
 * the output is written once, in runs, with no tile in between. F16C's conversions are used where
 * the CPU has them (picked once, by an ifunc); they round and quiet NaNs exactly as base/half.h's
 * scalar conversions, which do the squares' ragged edges and every other target.
 *
 * The squares are visited along dst rows (the r loop outside): a dst row's cache lines are then
 * written whole by consecutive stores, while the few source lines each step reads stay in L1.
 * Visited down dst columns instead, the 64 dst lines of a column of squares are written 16 bytes
 * at a time, and with power-of-two strides they share one L1 set and are evicted between
 * writes: that order cost 40% more time on a weight read from memory. */
#include "ir/transpose.h"

#include <string.h>

#include "base/cpu.h"
#include "base/half.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The elements of [0, nr) × [0, nc) outside the full squares [0, full_r) × [0, full_c). */
static void edges(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride,
                  hfx_dtype ddt, int nr, int nc, int full_r, int full_c) {
    size_t ss = hfx_dtype_size(sdt), ds = hfx_dtype_size(ddt);
    for (int c = 0; c < nc; c++)
    for (int r = c < full_c ? full_r : 0; r < nr; r++) {
        const uint8_t *s = src + ((uint64_t)c * (uint64_t)sstride + (uint64_t)r) * ss;
        uint8_t *d = dst + ((uint64_t)r * (uint64_t)dstride + (uint64_t)c) * ds;
        if (sdt == ddt) memcpy(d, s, ss);
        else hfx_float_store(ddt, d, hfx_float_load(sdt, s));
    }
}

#ifdef __SSE2__
/* Rows i of the 8×8 square of 2-byte elements at s (rows sb bytes apart), transposed: t[i] holds
 * column i, 8 elements. */
static inline void transpose8x16(const uint8_t *s, size_t sb, __m128i t[8]) {
    __m128i a[8], p[8], q[8];
    for (int i = 0; i < 8; i++) a[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + i * sb));
    for (int i = 0; i < 4; i++) {
        p[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        p[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) { /* rows 0-3, then 4-7 */
        __m128i *pp = p + 4 * h, *qq = q + 4 * h;
        qq[0] = _mm_unpacklo_epi32(pp[0], pp[2]), qq[1] = _mm_unpackhi_epi32(pp[0], pp[2]);
        qq[2] = _mm_unpacklo_epi32(pp[1], pp[3]), qq[3] = _mm_unpackhi_epi32(pp[1], pp[3]);
    }
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm_unpacklo_epi64(q[i], q[i + 4]);
        t[2 * i + 1] = _mm_unpackhi_epi64(q[i], q[i + 4]);
    }
}

/* The same for a 4×4 square of 4-byte elements. */
static inline void transpose4x32(const uint8_t *s, size_t sb, __m128i t[4]) {
    __m128i a[4], p[4];
    for (int i = 0; i < 4; i++) a[i] = _mm_loadu_si128((const __m128i *)(const void *)(s + i * sb));
    p[0] = _mm_unpacklo_epi32(a[0], a[1]), p[1] = _mm_unpackhi_epi32(a[0], a[1]);
    p[2] = _mm_unpacklo_epi32(a[2], a[3]), p[3] = _mm_unpackhi_epi32(a[2], a[3]);
    t[0] = _mm_unpacklo_epi64(p[0], p[2]), t[1] = _mm_unpackhi_epi64(p[0], p[2]);
    t[2] = _mm_unpacklo_epi64(p[1], p[3]), t[3] = _mm_unpackhi_epi64(p[1], p[3]);
}

static inline void store128(uint8_t *d, __m128i v) { _mm_storeu_si128((__m128i *)(void *)d, v); }
#endif

/* What one kernel does: whole squares for the pairs it knows; false for the others. */
typedef bool square_fn(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride,
                       hfx_dtype ddt, int nr, int nc);

/* Same dtype (bits) and bf16 -> f32 (a bfloat16 is a float's top half: zeros interleaved below). */
static bool square_sse2(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride,
                        hfx_dtype ddt, int nr, int nc) {
    size_t ss = hfx_dtype_size(sdt);
    bool same = sdt == ddt && (ss == 2 || ss == 4), widen = sdt == HFX_DTYPE_BF16 && ddt == HFX_DTYPE_F32;
    if (!same && !widen) return false;
    int full_r = 0, full_c = 0;
#ifdef __SSE2__
    int sq = ss == 2 ? 8 : 4;
    size_t sb = (size_t)sstride * ss, db = (size_t)dstride * hfx_dtype_size(ddt);
    full_r = nr / sq * sq, full_c = nc / sq * sq;
    const __m128i zero = _mm_setzero_si128();
    for (int r = 0; r < full_r; r += sq)
    for (int c = 0; c < full_c; c += sq) {
        const uint8_t *s = src + ((uint64_t)c * (uint64_t)sstride + (uint64_t)r) * ss;
        uint8_t *d = dst + (uint64_t)r * db + (uint64_t)c * hfx_dtype_size(ddt);
        __m128i t[8];
        if (ss == 4) {
            transpose4x32(s, sb, t);
            for (int i = 0; i < 4; i++) store128(d + i * db, t[i]);
        } else if (same) {
            transpose8x16(s, sb, t);
            for (int i = 0; i < 8; i++) store128(d + i * db, t[i]);
        } else {
            transpose8x16(s, sb, t);
            for (int i = 0; i < 8; i++) {
                store128(d + i * db, _mm_unpacklo_epi16(zero, t[i]));
                store128(d + i * db + 16, _mm_unpackhi_epi16(zero, t[i]));
            }
        }
    }
#endif
    edges(src, sstride, sdt, dst, dstride, ddt, nr, nc, full_r, full_c);
    return true;
}

#ifdef HFX_HAVE_IFUNC
#include <immintrin.h>

enum { NEAREST = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* an immediate even at -O0 */

/* square_sse2's pairs, and f16 -> f32, bf16 -> f16, f32 -> f16 through F16C (round to
 * nearest-even, as hfx_f32_to_f16). */
__attribute__((target("avx,f16c"))) static bool square_f16c(const uint8_t *src, int64_t sstride, hfx_dtype sdt,
                                                            uint8_t *dst, int64_t dstride, hfx_dtype ddt, int nr,
                                                            int nc) {
    bool widen_f16 = sdt == HFX_DTYPE_F16 && ddt == HFX_DTYPE_F32;
    bool to_f16 = (sdt == HFX_DTYPE_BF16 || sdt == HFX_DTYPE_F32) && ddt == HFX_DTYPE_F16;
    if (!widen_f16 && !to_f16) return square_sse2(src, sstride, sdt, dst, dstride, ddt, nr, nc);
    size_t ss = hfx_dtype_size(sdt), ds = hfx_dtype_size(ddt);
    int sq = ss == 2 ? 8 : 4;
    size_t sb = (size_t)sstride * ss, db = (size_t)dstride * ds;
    int full_r = nr / sq * sq, full_c = nc / sq * sq;
    const __m128i zero = _mm_setzero_si128();
    for (int r = 0; r < full_r; r += sq)
    for (int c = 0; c < full_c; c += sq) {
        const uint8_t *s = src + ((uint64_t)c * (uint64_t)sstride + (uint64_t)r) * ss;
        uint8_t *d = dst + (uint64_t)r * db + (uint64_t)c * ds;
        __m128i t[8];
        if (ss == 4) { /* f32 -> f16: four floats per output row */
            transpose4x32(s, sb, t);
            for (int i = 0; i < 4; i++) _mm_storel_epi64((__m128i *)(void *)(d + i * db), _mm_cvtps_ph(_mm_castsi128_ps(t[i]), NEAREST));
            continue;
        }
        transpose8x16(s, sb, t);
        for (int i = 0; i < 8; i++) {
            __m256 f = sdt == HFX_DTYPE_F16
                           ? _mm256_cvtph_ps(t[i])
                           : _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, t[i]))),
                                                  _mm_castsi128_ps(_mm_unpackhi_epi16(zero, t[i])), 1);
            if (ddt == HFX_DTYPE_F32) _mm256_storeu_ps((float *)(void *)(d + i * db), f);
            else store128(d + i * db, _mm256_cvtps_ph(f, NEAREST));
        }
    }
    edges(src, sstride, sdt, dst, dstride, ddt, nr, nc, full_r, full_c);
    return true;
}

__attribute__((used)) HFX_UNINSTRUMENTED static square_fn *pick_square(void) {
    return hfx_cpu_has_f16c() ? square_f16c : square_sse2;
}

static bool square(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride, hfx_dtype ddt,
                   int nr, int nc) __attribute__((ifunc("pick_square")));
#else
#define square square_sse2
#endif

bool hfx_transpose_square(const uint8_t *src, int64_t sstride, hfx_dtype sdt, uint8_t *dst, int64_t dstride,
                          hfx_dtype ddt, int nr, int nc) {
    return square(src, sstride, sdt, dst, dstride, ddt, nr, nc);
}
