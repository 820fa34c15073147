/* Bulk f32 → f16 narrowing: the --dtype fp16 export narrows every weight, and the portable
 * hfx_f32_to_f16, even vectorized, was half of that export's CPU time. Where the CPU has F16C,
 * vcvtps2ph narrows 8 floats per instruction. Both paths round to nearest-even and quiet NaNs
 * the same way (sign, 0x7e00, the top payload bits), so an export is byte-identical whichever
 * CPU made it; tests/unit/test_ir.c checks the two against each other. */
#include "base/half.h"

#include "base/cpu.h"

#ifdef HFX_HAVE_IFUNC
#include <immintrin.h>

/* Narrows a prefix of src (whole groups of 8) and returns its length; the caller does the rest. */
typedef size_t narrow_prefix_fn(const float *src, uint16_t *dst, size_t n);

__attribute__((target("avx,f16c"))) static size_t narrow_f16c(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    return i;
}

static size_t narrow_none(const float *src, uint16_t *dst, size_t n) {
    (void)src, (void)dst, (void)n;
    return 0;
}

/* The CPU is asked once, when the library is loaded (an ifunc: the dynamic linker binds
 * narrow_prefix to what this returns), not per call. */
__attribute__((used)) HFX_UNINSTRUMENTED static narrow_prefix_fn *pick_narrow_prefix(void) {
    return hfx_cpu_has_f16c() ? narrow_f16c : narrow_none;
}

static size_t narrow_prefix(const float *src, uint16_t *dst, size_t n) __attribute__((ifunc("pick_narrow_prefix")));
#endif

void hfx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n, bool allow_f16c) {
    size_t i = 0;
#ifdef HFX_HAVE_IFUNC
    if (allow_f16c) i = narrow_prefix(src, dst, n);
#else
    (void)allow_f16c;
#endif
    for (; i < n; i++) dst[i] = hfx_f32_to_f16(src[i]);
}
