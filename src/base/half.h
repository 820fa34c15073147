/* IEEE half and bfloat16 <-> float conversions, bit-exact and portable (no _Float16, which clang
 * 14 rejects on x86_64). Narrowing rounds to nearest-even, as torch's .to() does. */
#ifndef HFX_BASE_HALF_H
#define HFX_BASE_HALF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/dtype.h"

static inline uint32_t hfx_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float hfx_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float hfx_bf16_to_f32(uint16_t h) { return hfx_f32_from_bits((uint32_t)h << 16); }

static inline uint16_t hfx_f32_to_bf16(float f) {
    uint32_t u = hfx_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float hfx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return hfx_f32_from_bits(sign | 0x7f800000u | (man << 13)); /* inf/nan */
    if (exp == 0) {
        if (man == 0) return hfx_f32_from_bits(sign);
        /* subnormal: value = man * 2^-24, exact in float */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return hfx_f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

/* Branch-free, so a loop of them vectorizes (the --dtype fp16 export converts every weight).
 * Needs IEEE single arithmetic without excess precision (SSE or any 64-bit target), in the
 * default rounding mode. */
static inline uint16_t hfx_f32_to_f16(float f) {
    uint32_t u = hfx_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* normal halves: round the mantissa to 10 bits, nearest-even, and rebias the exponent */
    uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
    /* below 2^-14, the smallest normal half: in |f| + 0.5 the float's unit is 2^-24, the
     * subnormal half's unit, so the add itself rounds to nearest-even and the bits above 0.5
     * are the half's pattern (0x400, the smallest normal, when it rounds up that far) */
    uint32_t small = hfx_f32_bits(hfx_f32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu); /* quiet, top payload bits kept */
    /* select with masks, not ?: — a compiler must keep a conditional float add as a branch
     * (it could trap), which stops vectorization */
    uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000u);
    uint32_t is_inf = ~is_nan & (0u - (uint32_t)(a >= 0x477ff000u)); /* >= 65520 rounds to inf */
    uint32_t is_small = 0u - (uint32_t)(a < 0x38800000u);
    uint32_t is_normal = ~(is_nan | is_inf | is_small);
    uint32_t h = (nan & is_nan) | (0x7c00u & is_inf) | (small & is_small) | (normal & is_normal);
    return (uint16_t)(sign | h);
}

/* One element of a float dtype (f16, bf16, f32 or f64; anything else reads as f32) at p, as a
 * float: exact except f64, which rounds. */
static inline float hfx_float_load(hfx_dtype dt, const uint8_t *p) {
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case HFX_DTYPE_F16: memcpy(&h, p, 2); return hfx_f16_to_f32(h);
    case HFX_DTYPE_BF16: memcpy(&h, p, 2); return hfx_bf16_to_f32(h);
    case HFX_DTYPE_F64: memcpy(&d, p, 8); return (float)d;
    default: memcpy(&f, p, 4); return f;
    }
}

/* f stored at p as a float dtype (the same ones), narrowed to nearest-even. */
static inline void hfx_float_store(hfx_dtype dt, uint8_t *p, float f) {
    uint16_t h;
    switch (dt) {
    case HFX_DTYPE_F16: h = hfx_f32_to_f16(f); memcpy(p, &h, 2); break;
    case HFX_DTYPE_BF16: h = hfx_f32_to_bf16(f); memcpy(p, &h, 2); break;
    case HFX_DTYPE_F64: { double d = f; memcpy(p, &d, 8); break; }
    default: memcpy(p, &f, 4); break;
    }
}

/* Narrow n floats to halves, exactly as hfx_f32_to_f16 one by one would: through F16C when
 * allow_f16c and the CPU has it (tests turn it off to compare the two). src and dst must not
 * overlap. */
void hfx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n, bool allow_f16c);

#endif
