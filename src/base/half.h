/* IEEE half and bfloat16 <-> float conversions, bit-exact and portable (no _Float16, which clang
 * 14 rejects on x86_64). Narrowing rounds to nearest-even, as torch's .to() does. */
#ifndef HFX_BASE_HALF_H
#define HFX_BASE_HALF_H

#include <stdint.h>
#include <string.h>

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

static inline uint16_t hfx_f32_to_f16(float f) {
    uint32_t u = hfx_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu); /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u; /* rounds to inf (>= 65520) or is inf */
    if (a < 0x38800000u) {                       /* below the smallest normal half: 2^-14 */
        if (a < 0x33000000u) return sign;        /* below half of the smallest subnormal */
        uint32_t exp = a >> 23, man = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exp; /* 14..24: aligns to units of 2^-24 */
        uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u))) q++;
        return sign | (uint16_t)q;
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u); /* round mantissa to 10 bits, nearest-even */
    return sign | (uint16_t)((r - 0x38000000u) >> 13);
}

#endif
