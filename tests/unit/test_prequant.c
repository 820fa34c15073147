/* hfx_prequant_apply on tensor lists built in memory: an FP8 weight and its scales become one float32 tensor whose
 * values are worked out by hand (tiles of weight_block_size with a partial last one, stacked matrices, one scale for
 * a whole tensor, E8M0 scales), the scales leave the list; and one test per refusal, each checking the status and that
 * the message names the culprit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/blocks.h"
#include "base/arena.h"
#include "hf/prequant.h"

static hfx_tensor_info info(const char *name, hfx_dtype dt, int rank, const int64_t *shape, const void *data) {
    hfx_tensor_info t = {.name = name, .dtype = dt, .rank = rank, .data = data, .file = "ck/model.safetensors"};
    memcpy(t.shape, shape, (size_t)rank * sizeof *shape);
    return t;
}

/* apply under {"quant_method": "fp8", ...extra} (or `extra` the whole quantization_config, when it starts with '{')
 * to n tensors (sorted by name); each tensor left that decodes (its blocks) decoded into got[i] while the arena
 * lives */
static hfx_status apply_in(hfx_arena *arena, const char *extra, hfx_tensor_info *t, size_t *n, float (*got)[64],
                           hfx_error *err) {
    char text[640];
    if (extra[0] == '{')
        snprintf(text, sizeof text, "{\"quantization_config\": %s}", extra);
    else
        snprintf(text, sizeof text, "{\"quantization_config\": {\"quant_method\": \"fp8\"%s}}", extra);
    json_t *config = json_loads(text, 0, NULL);
    assert_non_null(config);
    const char *method;
    hfx_status st = hfx_prequant_apply(config, "ck/config.json", arena, t, n, &method, err);
    json_decref(config);
    for (size_t i = 0; !st && i < *n; i++) {
        assert_non_null(method);
        uint64_t numel = hfx_numel(t[i].rank, t[i].shape);
        if (t[i].blocks && got && numel <= 64) hfx_blocks_decode(t[i].blocks, t[i].data, 0, numel, got[i]);
    }
    return st;
}

/* the same in an arena of its own, freed before returning (the tensors' names and decodings with it) */
static hfx_status apply(const char *extra, hfx_tensor_info *t, size_t *n, float (*got)[64], hfx_error *err) {
    hfx_arena *arena = hfx_arena_new();
    hfx_status st = apply_in(arena, extra, t, n, got, err);
    hfx_arena_free(arena);
    return st;
}

/* e4m3 codes: 0x38 = 1.0, 0x40 = 2.0, 0xB8 = −1.0, 0x01 = 2^−9 (the smallest subnormal), 0x7E = 448 */
static void test_f8_values(void **state) {
    (void)state;
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0x38) == 1.0f);
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0x40) == 2.0f);
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0xB8) == -1.0f);
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0x01) == ldexpf(1.0f, -9));
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0x7E) == 448.0f);
    assert_true(isnan(hfx_f8_to_f32(HFX_DTYPE_F8E4M3, 0x7F)));
    /* e5m2: 0x3C = 1.0, 0x7B = 57344 (the largest), 0x7C = infinity */
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E5M2, 0x3C) == 1.0f);
    assert_true(hfx_f8_to_f32(HFX_DTYPE_F8E5M2, 0x7B) == 57344.0f);
    assert_true(isinf(hfx_f8_to_f32(HFX_DTYPE_F8E5M2, 0x7C)));
}

/* Byte `code` as an 8-bit float built from its bits: e5m2 a half's top byte; e4m3 rebiased by hand (no infinities,
 * S.1111.111 NaN) — the reference the compiler-built tables are held to */
static float f8_by_bits(hfx_dtype dt, uint8_t code) {
    if (dt == HFX_DTYPE_F8E5M2) {
        uint16_t h = (uint16_t)(code << 8);
        uint32_t e = h >> 10 & 31, m = h & 1023, bits;
        float v;
        if (e == 31) return m ? NAN : (code & 0x80 ? -INFINITY : INFINITY);
        if (e == 0) {
            v = (float)m * 0x1p-24f;
        } else {
            bits = (e + 127 - 15) << 23 | m << 13;
            memcpy(&v, &bits, 4);
        }
        return code & 0x80 ? -v : v;
    }
    uint32_t e = code >> 3 & 15, m = code & 7, bits;
    float v;
    if (e == 15 && m == 7) return NAN;
    if (e == 0) {
        v = (float)m * 0x1p-9f; /* subnormal: m/8 · 2^−6 */
    } else {
        bits = (e + 127 - 7) << 23 | m << 20;
        memcpy(&v, &bits, 4);
    }
    return code & 0x80 ? -v : v;
}

/* A grid's values for every byte (the tables the compiler works out), and hfx_f8_to_f32's, equal the bit
 * construction, both kinds, NaNs as NaNs */
static void test_f8_tables(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        uint8_t codes[256];
        for (int v = 0; v < 256; v++) codes[v] = (uint8_t)v;
        const float scale[1] = {1.0f};
        hfx_dtype dt = k ? HFX_DTYPE_F8E5M2 : HFX_DTYPE_F8E4M3;
        hfx_tensor_info t[2] = {info("a.weight", dt, 2, (int64_t[]){4, 64}, codes),
                                info("a.weight_scale_inv", HFX_DTYPE_F32, 2, (int64_t[]){1, 1}, scale)};
        size_t n = 2;
        hfx_error err;
        float got[2][64 * 4];
        hfx_arena *arena = hfx_arena_new();
        assert_int_equal(apply_in(arena, "", t, &n, NULL, &err), HFX_OK);
        hfx_blocks_decode(t[0].blocks, t[0].data, 0, 256, got[0]);
        for (int v = 0; v < 256; v++) {
            float want = f8_by_bits(dt, (uint8_t)v), direct = hfx_f8_to_f32(dt, (uint8_t)v);
            if (isnan(want) ? !isnan(got[0][v]) || !isnan(direct)
                            : memcmp(&want, &got[0][v], 4) != 0 || memcmp(&want, &direct, 4) != 0)
                fail_msg("%s byte 0x%02x: %g (grid), %g, want %g", k ? "e5m2" : "e4m3", v, (double)got[0][v],
                         (double)direct, (double)want);
        }
        hfx_arena_free(arena);
    }
}

/* a 3 × 5 weight of codes 1.0 in tiles of 2 × 2: scales [2, 3] = 1..6; row 2 and column 4 are partial tiles */
static void test_partial_tiles(void **state) {
    (void)state;
    uint8_t codes[15];
    memset(codes, 0x38, sizeof codes);
    const float scales[6] = {1, 2, 3, 4, 5, 6};
    hfx_tensor_info t[3] = {
        info("a.bias", HFX_DTYPE_F32, 1, (int64_t[]){3}, scales),
        info("a.weight", HFX_DTYPE_F8E4M3, 2, (int64_t[]){3, 5}, codes),
        info("a.weight_scale_inv", HFX_DTYPE_F32, 2, (int64_t[]){2, 3}, scales),
    };
    size_t n = 3;
    hfx_error err;
    float got[3][64];
    assert_int_equal(apply(", \"weight_block_size\": [2, 2]", t, &n, got, &err), HFX_OK);
    assert_int_equal(n, 2); /* the scale left the list */
    assert_string_equal(t[1].name, "a.weight");
    assert_int_equal(t[1].dtype, HFX_DTYPE_F32);
    const float want[15] = {1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6};
    assert_memory_equal(got[1], want, sizeof want);
}

/* two stacked 2 × 2 matrices (experts), a scale each (tiles derived from the grid: no weight_block_size); and one
 * E8M0 scale (2^(130 − 127) = 8) for a whole stacked tensor */
static void test_stacked_and_one_scale(void **state) {
    (void)state;
    uint8_t codes[8] = {0x38, 0x40, 0x38, 0x40, 0x38, 0x40, 0x38, 0xB8};
    const float scales[2] = {3, 5};
    const uint8_t e8m0[1] = {130};
    hfx_tensor_info t[4] = {
        info("e.weight", HFX_DTYPE_F8E4M3, 3, (int64_t[]){2, 2, 2}, codes),
        info("e.weight_scale_inv", HFX_DTYPE_F32, 3, (int64_t[]){2, 1, 1}, scales),
        info("f.weight", HFX_DTYPE_F8E4M3, 3, (int64_t[]){2, 2, 2}, codes),
        info("f.weight_scale_inv", HFX_DTYPE_F8E8M0, 0, (int64_t[]){0}, e8m0),
    };
    size_t n = 4;
    hfx_error err;
    float got[4][64];
    assert_int_equal(apply(", \"weight_block_size\": null", t, &n, got, &err), HFX_OK);
    assert_int_equal(n, 2);
    const float want_e[8] = {3, 6, 3, 6, 5, 10, 5, -5}, want_f[8] = {8, 16, 8, 16, 8, 16, 8, -8};
    assert_memory_equal(got[0], want_e, sizeof want_e);
    assert_memory_equal(got[1], want_f, sizeof want_f);
}

/* MXFP4: two rows of 32 FP4 codes (their bytes: 0x21 → 0.5 then 1.0; 0xF7 → 6.0 then −6.0; the rest zeros), scales
 * 2^1 and 2^−1, read transposed as "e" [1, 32, 2] */
static void test_mxfp4_transposed(void **state) {
    (void)state;
    uint8_t blocks[32] = {0x21, [16] = 0xF7};
    const uint8_t scales[2] = {128, 126};
    hfx_tensor_info t[2] = {
        info("e_blocks", HFX_DTYPE_U8, 4, (int64_t[]){1, 2, 1, 16}, blocks),
        info("e_scales", HFX_DTYPE_U8, 3, (int64_t[]){1, 2, 1}, scales),
    };
    size_t n = 2;
    hfx_error err;
    float got[2][64];
    hfx_arena *arena = hfx_arena_new();
    assert_int_equal(apply_in(arena, "{\"quant_method\": \"mxfp4\"}", t, &n, got, &err), HFX_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].name, "e"); /* (renamed: a name of the arena's) */
    hfx_arena_free(arena);
    assert_int_equal(t[0].rank, 3);
    assert_true(t[0].shape[0] == 1 && t[0].shape[1] == 32 && t[0].shape[2] == 2);
    float want[64] = {[0] = 1.0f, [1] = 3.0f, [2] = 2.0f, [3] = -3.0f}; /* [column][row] */
    assert_memory_equal(got[0], want, sizeof want);
}

/* DeepSeek V4's FP4 experts under "fp8": I8 [1, 16] (32 codes) and one E8M0 scale per 32 columns */
static void test_fp4_codes(void **state) {
    (void)state;
    uint8_t codes[16] = {0x7F, 0x10};
    const uint8_t scales[1] = {129};
    hfx_tensor_info t[2] = {
        info("a.weight", HFX_DTYPE_I8, 2, (int64_t[]){1, 16}, codes),
        info("a.weight_scale_inv", HFX_DTYPE_U8, 2, (int64_t[]){1, 1}, scales),
    };
    size_t n = 2;
    hfx_error err;
    float got[2][64];
    assert_int_equal(apply("", t, &n, got, &err), HFX_OK);
    assert_int_equal(n, 1);
    assert_int_equal(t[0].shape[1], 32);
    float want[64] = {[0] = -24.0f, [1] = 24.0f, [2] = 0.0f, [3] = 2.0f};
    assert_memory_equal(got[0], want, 32 * sizeof *want);
}

/* compressed-tensors' pack-quantized 3-bit codes: a row of 16 (code k = k mod 8 at bit 3k, the 11th straddling the
 * two words), stored plus 4, one float16 scale 0.5 per row (channel); rows of 2 words */
static void test_packed_3_bits(void **state) {
    (void)state;
    uint32_t words[4] = {0};
    for (int r = 0; r < 2; r++)
        for (unsigned k = 0; k < 16; k++) {
            uint64_t v = (uint64_t)(k % 8) << (3 * k);
            words[2 * r] |= (uint32_t)v, words[2 * r + 1] |= (uint32_t)(v >> 32);
        }
    const uint16_t scales[2] = {0x3800, 0x3800}; /* 0.5 */
    const int64_t shape[2] = {2, 16};
    char text[] = "{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", \"config_groups\": "
                  "{\"g\": {\"targets\": [\"Linear\"], \"weights\": {\"num_bits\": 3, \"type\": \"int\", "
                  "\"symmetric\": true, \"strategy\": \"channel\"}}}}";
    hfx_tensor_info t[3] = {
        info("a.weight_packed", HFX_DTYPE_I32, 2, (int64_t[]){2, 2}, words),
        info("a.weight_scale", HFX_DTYPE_F16, 2, (int64_t[]){2, 1}, scales),
        info("a.weight_shape", HFX_DTYPE_I64, 1, (int64_t[]){2}, shape),
    };
    size_t n = 3;
    hfx_error err;
    float got[3][64];
    hfx_arena *arena = hfx_arena_new();
    assert_int_equal(apply_in(arena, text, t, &n, got, &err), HFX_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].name, "a.weight");
    assert_true(t[0].rank == 2 && t[0].shape[0] == 2 && t[0].shape[1] == 16);
    for (int k = 0; k < 32; k++) assert_true(got[0][k] == (float)(k % 8 - 4) * 0.5f);
    hfx_arena_free(arena);
}

static void refused(const char *extra, hfx_tensor_info *t, size_t n, hfx_status want, const char *words) {
    hfx_error err = {0};
    assert_int_equal(apply(extra, t, &n, NULL, &err), want);
    if (!strstr(err.message, words)) fail_msg("'%s' does not name '%s'", err.message, words);
}

static void test_refusals(void **state) {
    (void)state;
    uint8_t codes[16] = {0};
    const float scales[4] = {1, 1, 1, 1};
    hfx_tensor_info grid[2] = {info("a.weight", HFX_DTYPE_F8E4M3, 2, (int64_t[]){4, 4}, codes),
                               info("a.weight_scale_inv", HFX_DTYPE_F32, 2, (int64_t[]){3, 1}, scales)};
    refused("", grid, 2, HFX_ERR_INVALID, "'a.weight_scale_inv' (rank 2) does not tile 'a.weight'");
    hfx_tensor_info lone[1] = {info("a.weight_scale_inv", HFX_DTYPE_F32, 2, (int64_t[]){1, 1}, scales)};
    refused("", lone, 1, HFX_ERR_INVALID, "scales 'a.weight', which the checkpoint does not hold");
    hfx_tensor_info bare[1] = {info("a.weight", HFX_DTYPE_F8E5M2, 2, (int64_t[]){4, 4}, codes)};
    refused("", bare, 1, HFX_ERR_INVALID, "'a.weight' is F8_E5M2 without a scale");
    hfx_tensor_info vector[2] = {info("a.weight", HFX_DTYPE_F8E4M3, 1, (int64_t[]){16}, codes),
                                 info("a.weight_scale_inv", HFX_DTYPE_F32, 1, (int64_t[]){1}, scales)};
    refused("", vector, 2, HFX_ERR_UNSUPPORTED, "has rank 1");
    hfx_tensor_info i32[2] = {info("a.weight", HFX_DTYPE_F8E4M3, 2, (int64_t[]){4, 4}, codes),
                              info("a.weight_scale_inv", HFX_DTYPE_I32, 2, (int64_t[]){1, 1}, scales)};
    refused("", i32, 2, HFX_ERR_UNSUPPORTED, "scales are F32, F16, BF16");
    hfx_tensor_info ok[2] = {info("a.weight", HFX_DTYPE_F8E4M3, 2, (int64_t[]){4, 4}, codes),
                             info("a.weight_scale_inv", HFX_DTYPE_F32, 2, (int64_t[]){1, 1}, scales)};
    refused(", \"activation_scheme\": \"static\"", ok, 2, HFX_ERR_UNSUPPORTED, "activation_scheme 'static'");
    refused(", \"weight_block_size\": [0, 128]", ok, 2, HFX_ERR_INVALID, "weight_block_size");
    refused(", \"weight_block_size\": [128]", ok, 2, HFX_ERR_INVALID, "weight_block_size");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f8_values),
        cmocka_unit_test(test_f8_tables),
        cmocka_unit_test(test_partial_tiles),
        cmocka_unit_test(test_stacked_and_one_scale),
        cmocka_unit_test(test_mxfp4_transposed),
        cmocka_unit_test(test_fp4_codes),
        cmocka_unit_test(test_packed_3_bits),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
