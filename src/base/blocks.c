#include "base/blocks.h"

#include <math.h>
#include <string.h>

#include "base/half.h"

/* Each decoder follows the layout ggml defines for its block (ggml-common.h) and gguf-py's order of float operations:
 * a product of two floats is one rounding, a sum another (the build has -ffp-contract=off, so no fused multiply-add
 * merges them). */

static float f16_at(const uint8_t *p) { return hfx_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

/* the 4-bit code of element e of a 32-element block whose 16 bytes hold elements e and e + 16 */
static unsigned nibble32(const uint8_t *qs, int e) { return e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4; }

/* Q4_0: d (f16), 16 bytes of codes; x = d · (q − 8) */
static void q4_0(const uint8_t *s, float *out) {
    float d = f16_at(s);
    for (int e = 0; e < 32; e++) out[e] = d * (float)((int)nibble32(s + 2, e) - 8);
}

static void q4_0_split(const uint8_t *s, float *scale, uint8_t *codes) {
    *scale = f16_at(s);
    for (int e = 0; e < 32; e++) codes[e] = (uint8_t)nibble32(s + 2, e);
}

/* Q4_1: d, m (f16), codes; x = d · q + m */
static void q4_1(const uint8_t *s, float *out) {
    float d = f16_at(s), m = f16_at(s + 2);
    for (int e = 0; e < 32; e++) out[e] = d * (float)nibble32(s + 4, e) + m;
}

/* the fifth bits of Q5_0's and Q5_1's codes: a little-endian 32-bit mask, bit e for element e */
static uint32_t high_bits(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Q5_0: d, 4 bytes of fifth bits, codes; x = d · (q − 16) */
static void q5_0(const uint8_t *s, float *out) {
    float d = f16_at(s);
    uint32_t h = high_bits(s + 2);
    for (int e = 0; e < 32; e++) out[e] = d * (float)((int)(nibble32(s + 6, e) | ((h >> e) & 1) << 4) - 16);
}

/* Q5_1: d, m, fifth bits, codes; x = d · q + m */
static void q5_1(const uint8_t *s, float *out) {
    float d = f16_at(s), m = f16_at(s + 2);
    uint32_t h = high_bits(s + 4);
    for (int e = 0; e < 32; e++) out[e] = d * (float)(nibble32(s + 8, e) | ((h >> e) & 1) << 4) + m;
}

/* Q8_0: d, 32 signed bytes; x = q · d */
static void q8_0(const uint8_t *s, float *out) {
    float d = f16_at(s);
    for (int e = 0; e < 32; e++) out[e] = (float)(int8_t)s[2 + e] * d;
}

static void q8_0_split(const uint8_t *s, float *scale, uint8_t *codes) { /* (q · d = d · (q + 128 − 128)) */
    *scale = f16_at(s);
    for (int e = 0; e < 32; e++) codes[e] = (uint8_t)((int8_t)s[2 + e] + 128);
}

/* IQ4_NL: d, codes indexing a fixed non-linear table; x = d · table[q] */
static void iq4_nl(const uint8_t *s, float *out) {
    static const int8_t table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    float d = f16_at(s);
    for (int e = 0; e < 32; e++) out[e] = d * (float)table[nibble32(s + 2, e)];
}

/* MXFP4: an e8m0 exponent (as half its power of two), codes of e2m1 values (doubled); x = d · table[q] */
static void mxfp4(const uint8_t *s, float *out) {
    static const int8_t table[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    uint32_t e8 = s[0];
    float d = hfx_f32_from_bits(e8 < 2 ? 0x00200000u << e8 : (e8 - 1) << 23);
    for (int e = 0; e < 32; e++) out[e] = d * (float)table[nibble32(s + 1, e)];
}

/* The "K" formats' blocks of 256: codes of 2..6 bits in planes, where element e = 128·half + 32·plane + j reads bits
 * `plane` of byte j of its half's run (Q2_K, Q3_K, Q6_K) */

/* Q2_K: 16 bytes of (scale | min << 4), 64 bytes of 2-bit codes, d, dmin; x = (d · scale) · q − dmin · min */
static void q2_k(const uint8_t *s, float *out) {
    const uint8_t *scales = s, *qs = s + 16;
    float d = f16_at(s + 80), dmin = f16_at(s + 82);
    for (int e = 0; e < 256; e++) {
        int half = e / 128, plane = e % 128 / 32, j = e % 32;
        unsigned q = qs[half * 32 + j] >> (2 * plane) & 3, sc = scales[e / 16];
        float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
        out[e] = dl * (float)q - ml;
    }
}

/* Q3_K: 32 bytes of third bits (inverted), 64 bytes of 2-bit codes, 12 bytes of 6-bit scales, d;
 * x = (d · (scale − 32)) · (q − 4·!bit) */
static void q3_k(const uint8_t *s, float *out) {
    const uint8_t *hmask = s, *qs = s + 32, *sc = s + 96;
    float d = f16_at(s + 108);
    for (int e = 0; e < 256; e++) {
        int k = e / 16; /* the scale: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11 */
        int low = sc[k % 8] >> (4 * (k / 8)) & 0xF, high = sc[8 + k % 4] >> (2 * (k / 4)) & 3;
        float dl = d * (float)((int8_t)(uint8_t)(low | high << 4) - 32);
        int half = e / 128, plane = e % 128 / 32, j = e % 32;
        int q = qs[half * 32 + j] >> (2 * plane) & 3;
        int bit = hmask[j] >> (e / 32) & 1;
        out[e] = dl * (float)(q - ((bit ^ 1) << 2));
    }
}

/* Q4_K's and Q5_K's 12 bytes of eight 6-bit scales and mins */
static void scale_min(const uint8_t *p, int k, unsigned *sc, unsigned *m) {
    if (k < 4) {
        *sc = p[k] & 63;
        *m = p[4 + k] & 63;
    } else {
        *sc = (p[8 + k - 4] & 0xF) | (p[k - 4] >> 2 & 0x30);
        *m = (p[8 + k - 4] >> 4) | (p[k] >> 2 & 0x30);
    }
}

/* Q4_K: d, dmin, scales, 128 bytes of codes (32-element groups: byte j of run g/2, low nibble for even g);
 * x = (d · scale) · q − dmin · min */
static void q4_k(const uint8_t *s, float *out) {
    float d = f16_at(s), dmin = f16_at(s + 2);
    const uint8_t *qs = s + 16;
    for (int g = 0; g < 8; g++) {
        unsigned sc, m;
        scale_min(s + 4, g, &sc, &m);
        float dl = d * (float)sc, ml = dmin * (float)m;
        for (int j = 0; j < 32; j++) out[g * 32 + j] = dl * (float)(qs[g / 2 * 32 + j] >> (4 * (g % 2)) & 0xF) - ml;
    }
}

/* Q5_K: d, dmin, scales, 32 bytes of fifth bits (bit g of byte j for group g), codes as Q4_K's */
static void q5_k(const uint8_t *s, float *out) {
    float d = f16_at(s), dmin = f16_at(s + 2);
    const uint8_t *qh = s + 16, *qs = s + 48;
    for (int g = 0; g < 8; g++) {
        unsigned sc, m;
        scale_min(s + 4, g, &sc, &m);
        float dl = d * (float)sc, ml = dmin * (float)m;
        for (int j = 0; j < 32; j++) {
            unsigned q = (qs[g / 2 * 32 + j] >> (4 * (g % 2)) & 0xF) | (qh[j] >> g & 1) << 4;
            out[g * 32 + j] = dl * (float)q - ml;
        }
    }
}

/* Q6_K: 128 bytes of low nibbles (byte j of half h's 64: elements j and j + 64), 64 bytes of 2-bit high parts, 16
 * signed scales, d; x = (d · scale) · (q − 32) */
static void q6_k(const uint8_t *s, float *out) {
    const uint8_t *ql = s, *qh = s + 128;
    const int8_t *scales = (const int8_t *)(s + 192);
    float d = f16_at(s + 208);
    for (int e = 0; e < 256; e++) {
        int half = e / 128, r = e % 128;
        unsigned low = ql[half * 64 + r % 64] >> (4 * (r / 64)) & 0xF;
        unsigned high = qh[half * 32 + r % 32] >> (2 * (r / 32)) & 3;
        float dl = d * (float)scales[e / 16];
        out[e] = dl * (float)((int)(low | high << 4) - 32);
    }
}

/* plain floats less one (x − 1 in float32, as numpy subtracts from a float32 array) */
static void f32_less_one(const uint8_t *s, float *out) {
    float x;
    memcpy(&x, s, 4);
    *out = x - 1.0f;
}
static void f16_less_one(const uint8_t *s, float *out) { *out = f16_at(s) - 1.0f; }
static void bf16_less_one(const uint8_t *s, float *out) { *out = hfx_bf16_to_f32((uint16_t)(s[0] | s[1] << 8)) - 1.0f; }

#define FORMAT(n, t, b, by, d) .name = n, .ggml_type = t, .block = b, .bytes = by, .decode = d
static const hfx_block_format formats[] = {
    {FORMAT("Q4_0", 2, 32, 18, q4_0), .symmetric_bits = 4, .split = q4_0_split},
    {FORMAT("Q4_1", 3, 32, 20, q4_1)},
    {FORMAT("Q5_0", 6, 32, 22, q5_0)},
    {FORMAT("Q5_1", 7, 32, 24, q5_1)},
    {FORMAT("Q8_0", 8, 32, 34, q8_0), .symmetric_bits = 8, .split = q8_0_split},
    {FORMAT("Q2_K", 10, 256, 84, q2_k)},
    {FORMAT("Q3_K", 11, 256, 110, q3_k)},
    {FORMAT("Q4_K", 12, 256, 144, q4_k)},
    {FORMAT("Q5_K", 13, 256, 176, q5_k)},
    {FORMAT("Q6_K", 14, 256, 210, q6_k)},
    {FORMAT("IQ4_NL", 20, 32, 18, iq4_nl)},
    {FORMAT("MXFP4", 39, 32, 17, mxfp4)},
};

const hfx_block_format *hfx_block_format_less_one(uint32_t type) {
    static const hfx_block_format less_one[] = {{FORMAT("F32 - 1", 0, 1, 4, f32_less_one)},
                                                {FORMAT("F16 - 1", 1, 1, 2, f16_less_one)},
                                                {FORMAT("BF16 - 1", 30, 1, 2, bf16_less_one)}};
    for (size_t i = 0; i < sizeof less_one / sizeof less_one[0]; i++)
        if (less_one[i].ggml_type == type) return &less_one[i];
    return NULL;
}

const hfx_block_format *hfx_block_format_of(uint32_t type) {
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].ggml_type == type) return &formats[i];
    return NULL;
}

/* every type ggml defines: its name, elements and bytes per block */
static const struct {
    uint32_t type;
    const char *name;
    uint32_t block, bytes;
} types[] = {
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},      {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},      {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 40},
    {10, "Q2_K", 256, 84},    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},   {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},   {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
    {40, "NVFP4", 64, 36},    {41, "Q1_0", 128, 18},
};

static int type_index(uint32_t type) {
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == type) return (int)i;
    return -1;
}

const char *hfx_ggml_type_name(uint32_t type) {
    int i = type_index(type);
    return i < 0 ? NULL : types[i].name;
}

bool hfx_ggml_type_size(uint32_t type, uint32_t *block, uint32_t *bytes) {
    int i = type_index(type);
    if (i < 0) return false;
    *block = types[i].block;
    *bytes = types[i].bytes;
    return true;
}

/* Every byte's value as float8_e4m3fn and float8_e5m2, worked out by the compiler (each an exact product of powers
 * of two) */
#define E4M3_MAG(b)                                                                                                   \
    (((b) >> 3 & 15) == 15 && ((b) & 7) == 7 ? NAN                                                                    \
     : ((b) >> 3 & 15) == 0 ? (float)((b) & 7) / 512.0f                                                               \
                            : (1.0f + (float)((b) & 7) / 8.0f) * (float)(1 << ((b) >> 3 & 15)) / 128.0f)
#define E5M2_MAG(b)                                                                                                   \
    (((b) >> 2 & 31) == 31 ? (((b) & 3) ? NAN : INFINITY)                                                             \
     : ((b) >> 2 & 31) == 0 ? (float)((b) & 3) / 65536.0f                                                             \
                            : (1.0f + (float)((b) & 3) / 4.0f) * (float)(1 << ((b) >> 2 & 31)) / 32768.0f)
#define E4M3(b) ((b) & 0x80 ? -E4M3_MAG(b) : E4M3_MAG(b))
#define E5M2(b) ((b) & 0x80 ? -E5M2_MAG(b) : E5M2_MAG(b))
#define BYTES_4(f, b) f(b), f((b) + 1), f((b) + 2), f((b) + 3)
#define BYTES_16(f, b) BYTES_4(f, b), BYTES_4(f, (b) + 4), BYTES_4(f, (b) + 8), BYTES_4(f, (b) + 12)
#define BYTES_64(f, b) BYTES_16(f, b), BYTES_16(f, (b) + 16), BYTES_16(f, (b) + 32), BYTES_16(f, (b) + 48)
#define BYTES_256(f) BYTES_64(f, 0), BYTES_64(f, 64), BYTES_64(f, 128), BYTES_64(f, 192)
static const float F8E4M3_VALUES[256] = {BYTES_256(E4M3)}, F8E5M2_VALUES[256] = {BYTES_256(E5M2)};

float hfx_f8_to_f32(hfx_dtype dt, uint8_t code) {
    return dt == HFX_DTYPE_F8E5M2 ? F8E5M2_VALUES[code] : F8E4M3_VALUES[code];
}

/* FP4 (E2M1) codes: sign, two exponent bits, one mantissa bit */
static const float E2M1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                               -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

/* Bits [bit, bit + bits) of `p` as an unsigned integer (bits ≤ 8: at most two bytes, the second read only when the
 * field reaches it). */
static unsigned bit_field(const uint8_t *p, uint64_t bit, int bits) {
    unsigned v = p[bit / 8];
    if (bit % 8 + (unsigned)bits > 8) v |= (unsigned)p[bit / 8 + 1] << 8;
    return v >> (bit % 8) & ((1u << bits) - 1);
}

/* Row r of matrix m of packed codes (rows start at a word), and the offset its integers are stored plus. */
static const uint8_t *packed_row(const hfx_block_grid *g, const uint8_t *base, uint64_t m, uint64_t r) {
    return base + (m * g->rows + r) * ((g->cols * (uint64_t)g->bits + 31) / 32 * 4);
}

static int packed_offset(const hfx_block_grid *g) { return 1 << (g->bits - 1); }

/* The code at (matrix m, row r, column c), widened (a packed integer less its offset). */
static float grid_code(const hfx_block_grid *g, const uint8_t *codes, uint64_t m, uint64_t r, uint64_t c) {
    uint64_t at = (m * g->rows + r) * g->cols + c;
    switch (g->codes) {
    case HFX_GRID_F8E4M3: return F8E4M3_VALUES[codes[at]];
    case HFX_GRID_F8E5M2: return F8E5M2_VALUES[codes[at]];
    case HFX_GRID_E2M1: return E2M1[codes[at / 2] >> (at % 2 * 4) & 15];
    case HFX_GRID_I8: return (float)(int8_t)codes[at];
    default: return (float)((int)bit_field(packed_row(g, codes, m, r), c * (uint64_t)g->bits, g->bits) -
                            packed_offset(g));
    }
}

/* The zero point of grid cell (matrix m, grid row gr, grid column gc). */
static float grid_zero(const hfx_block_grid *g, uint64_t m, uint64_t gr, uint64_t gc) {
    if (!g->zero_data) return 0.0f;
    uint64_t at = (m * g->grid_rows + gr) * g->grid_cols + gc;
    if (g->zero_codes == HFX_GRID_I8) return (float)(int8_t)g->zero_data[at];
    if (g->zero_codes == HFX_GRID_I32) {
        int32_t v;
        memcpy(&v, g->zero_data + at * 4, 4);
        return (float)v;
    }
    /* packed down the columns: word w of column gc at [m][w][gc], the field straddling into the next word's low bits */
    uint64_t words = (g->grid_rows * (uint64_t)g->bits + 31) / 32, bit = gr * (uint64_t)g->bits;
    const uint8_t *col = g->zero_data + (m * words * g->grid_cols + gc) * 4;
    uint64_t w = bit / 32, off = bit % 32;
    uint32_t lo, hi = 0;
    memcpy(&lo, col + w * g->grid_cols * 4, 4);
    if (off + (uint64_t)g->bits > 32) memcpy(&hi, col + (w + 1) * g->grid_cols * 4, 4);
    uint64_t v = ((uint64_t)hi << 32 | lo) >> off & ((1u << g->bits) - 1);
    return (float)((int)v - packed_offset(g));
}

/* The scale of grid cell (m, gr, gc): an E8M0 exponent as the power of two it is (exact; the byte 255, E8M0's NaN,
 * as infinity). */
static float grid_scale(const hfx_block_grid *g, uint64_t m, uint64_t gr, uint64_t gc) {
    uint64_t s = (m * g->grid_rows + gr) * g->grid_cols + gc;
    if (g->scales == HFX_DTYPE_U8 || g->scales == HFX_DTYPE_F8E8M0) return ldexpf(1.0f, (int)g->scale_data[s] - 127);
    return hfx_float_load(g->scales, g->scale_data + s * hfx_dtype_size(g->scales));
}

/* n consecutive values of row r of matrix m from column c, (code − zero) · scale in float32 under one zero point and
 * scale, rounded to the grid's dtype when `round`: the code's kind and the rounding picked once for the run */
static void grid_run(const hfx_block_grid *g, const uint8_t *base, uint64_t m, uint64_t r, uint64_t c, uint64_t n,
                     float zero, float scale, bool round, float *out) {
    uint64_t at = (m * g->rows + r) * g->cols + c;
    switch (g->codes) {
    case HFX_GRID_PACKED: {
        const uint8_t *row = packed_row(g, base, m, r);
        float half = (float)packed_offset(g);
        if (g->bits == 4)
            for (uint64_t j = 0; j < n; j++) out[j] = (float)(row[(c + j) / 2] >> ((c + j) % 2 * 4) & 15) - half;
        else
            for (uint64_t j = 0; j < n; j++)
                out[j] = (float)bit_field(row, (c + j) * (uint64_t)g->bits, g->bits) - half;
        break;
    }
    case HFX_GRID_I8:
        for (uint64_t j = 0; j < n; j++) out[j] = (float)(int8_t)base[at + j];
        break;
    case HFX_GRID_F8E4M3:
    case HFX_GRID_F8E5M2: {
        const float *values = g->codes == HFX_GRID_F8E4M3 ? F8E4M3_VALUES : F8E5M2_VALUES;
        for (uint64_t j = 0; j < n; j++) out[j] = values[base[at + j]];
        break;
    }
    default:
        for (uint64_t j = 0; j < n; j++) out[j] = grid_code(g, base, m, r, c + j);
    }
    for (uint64_t j = 0; j < n; j++) out[j] = (out[j] - zero) * scale;
    if (round && g->round_to == HFX_DTYPE_BF16)
        for (uint64_t j = 0; j < n; j++) out[j] = hfx_bf16_to_f32(hfx_f32_to_bf16(out[j]));
    else if (round && g->round_to == HFX_DTYPE_F16)
        for (uint64_t j = 0; j < n; j++) out[j] = hfx_f16_to_f32(hfx_f32_to_f16(out[j]));
}

static void grid_decode(const hfx_block_grid *g, const uint8_t *base, uint64_t first, uint64_t n, float *out) {
    if (g->transposed) { /* a presented run walks down a stored column: element by element, its place stepped */
        uint64_t r = first % g->rows, c = first / g->rows % g->cols, m = first / g->rows / g->cols;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t gr = r / g->tile_rows, gc = c / g->tile_cols;
            grid_run(g, base, m, r, c, 1, grid_zero(g, m, gr, gc), grid_scale(g, m, gr, gc), true, out + i);
            if (++r == g->rows && (r = 0, ++c == g->cols)) c = 0, m++;
        }
        return;
    }
    for (uint64_t i = 0; i < n;) { /* runs within one tile's row share a scale and a zero point */
        uint64_t at = first + i, r = at / g->cols % g->rows, c = at % g->cols, m = at / g->cols / g->rows;
        uint64_t run = g->tile_cols - c % g->tile_cols;
        if (run > g->cols - c) run = g->cols - c; /* (a partial last tile ends with the row) */
        if (run > n - i) run = n - i;
        uint64_t gr = r / g->tile_rows, gc = c / g->tile_cols;
        grid_run(g, base, m, r, c, run, grid_zero(g, m, gr, gc), grid_scale(g, m, gr, gc), true, out + i);
        i += run;
    }
}

int hfx_grid_int_bits(const hfx_block_grid *g) {
    bool ints = (g->codes == HFX_GRID_PACKED && (g->bits == 4 || g->bits == 8)) || g->codes == HFX_GRID_I8;
    return ints && !g->transposed && g->tile_cols > 0 && g->cols % g->tile_cols == 0
               ? (g->codes == HFX_GRID_I8 ? 8 : g->bits) : 0;
}

void hfx_grid_split(const hfx_block_grid *g, const uint8_t *base, uint64_t row, uint64_t b, float *scale, uint8_t *zero,
                    uint8_t *codes) {
    int half = 1 << (hfx_grid_int_bits(g) - 1);
    uint64_t m = row / g->rows, r = row % g->rows;
    *scale = grid_scale(g, m, r / g->tile_rows, b);
    *zero = (uint8_t)((int)grid_zero(g, m, r / g->tile_rows, b) + half);
    float v[HFX_BLOCK_MAX];
    for (uint64_t i = 0; i < g->tile_cols; i += HFX_BLOCK_MAX) { /* the integers themselves: zero 0, scale 1 */
        uint64_t k = g->tile_cols - i < HFX_BLOCK_MAX ? g->tile_cols - i : HFX_BLOCK_MAX;
        grid_run(g, base, m, r, b * g->tile_cols + i, k, 0.0f, 1.0f, false, v);
        for (uint64_t j = 0; j < k; j++) codes[i + j] = (uint8_t)((int)v[j] + half);
    }
}

void hfx_blocks_decode(const hfx_block_format *f, const uint8_t *base, uint64_t first, uint64_t n, float *out) {
    if (f->grid) {
        grid_decode(f->grid, base, first, n, out);
        return;
    }
    float block[HFX_BLOCK_MAX];
    while (n > 0) {
        uint64_t b = first / f->block, in = first % f->block, k = f->block - in < n ? f->block - in : n;
        const uint8_t *src = base + b * f->bytes;
        if (in == 0 && k == f->block) {
            f->decode(src, out);
        } else {
            f->decode(src, block);
            memcpy(out, block + in, (size_t)k * sizeof *out);
        }
        out += k;
        first += k;
        n -= k;
    }
}
