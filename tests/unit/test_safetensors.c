/* hfx_safetensors_parse on images built in memory: the valid layouts the format allows, and one
 * test per rule of the header contract, each checking the status and the message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hf/safetensors.h"

#define PATH "weights/x.safetensors"

/* A safetensors image: the 8-byte length of `header`, the header, then data_len bytes holding
 * their own index (mod 251) so that tests can tell tensors apart. Caller frees. */
static uint8_t *st_image(const char *header, size_t data_len, size_t *len) {
    size_t n = strlen(header);
    *len = 8 + n + data_len;
    uint8_t *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(b + 8, header, n);
    for (size_t i = 0; i < data_len; i++) b[8 + n + i] = (uint8_t)(i % 251);
    return b;
}

/* Parse bytes[0..len) and check the status and that the message names the file and holds every
 * string of the NULL-terminated list. */
static void expect_bytes_error(const uint8_t *bytes, size_t len, hfx_status want, ...) {
    hfx_arena *arena = hfx_arena_new();
    hfx_safetensors st;
    hfx_error err = {0};
    hfx_status got = hfx_safetensors_parse(bytes, len, PATH, arena, &st, &err);
    if (got != want) fail_msg("status %d, want %d: %s", got, want, err.message);
    assert_int_equal(err.status, want);
    if (!strstr(err.message, PATH)) fail_msg("no path in: %s", err.message);
    va_list ap;
    va_start(ap, want);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err.message, s)) fail_msg("'%s' not in: %s", s, err.message);
    va_end(ap);
    hfx_arena_free(arena);
}

#define expect_error(header, data_len, want, ...)                                               \
    do {                                                                                        \
        size_t len_;                                                                            \
        uint8_t *b_ = st_image(header, data_len, &len_);                                        \
        expect_bytes_error(b_, len_, want, __VA_ARGS__, NULL);                                  \
        free(b_);                                                                               \
    } while (0)

static void test_dtype_strings(void **state) {
    (void)state;
    assert_int_equal(hfx_safetensors_dtype_from_string("F64"), HFX_DTYPE_F64);
    assert_int_equal(hfx_safetensors_dtype_from_string("F32"), HFX_DTYPE_F32);
    assert_int_equal(hfx_safetensors_dtype_from_string("F16"), HFX_DTYPE_F16);
    assert_int_equal(hfx_safetensors_dtype_from_string("BF16"), HFX_DTYPE_BF16);
    assert_int_equal(hfx_safetensors_dtype_from_string("I64"), HFX_DTYPE_I64);
    assert_int_equal(hfx_safetensors_dtype_from_string("I32"), HFX_DTYPE_I32);
    assert_int_equal(hfx_safetensors_dtype_from_string("I16"), HFX_DTYPE_I16);
    assert_int_equal(hfx_safetensors_dtype_from_string("I8"), HFX_DTYPE_I8);
    assert_int_equal(hfx_safetensors_dtype_from_string("U8"), HFX_DTYPE_U8);
    assert_int_equal(hfx_safetensors_dtype_from_string("BOOL"), HFX_DTYPE_BOOL);
    assert_int_equal(hfx_safetensors_dtype_from_string("f32"), HFX_DTYPE_UNDEFINED);
    assert_int_equal(hfx_safetensors_dtype_from_string("F8_E4M3"), HFX_DTYPE_F8E4M3);
    assert_int_equal(hfx_safetensors_dtype_from_string("F8_E5M2"), HFX_DTYPE_F8E5M2);
    assert_int_equal(hfx_safetensors_dtype_from_string("F8_E8M0"), HFX_DTYPE_F8E8M0);
    assert_int_equal(hfx_safetensors_dtype_from_string("F4"), HFX_DTYPE_UNDEFINED);
    assert_int_equal(hfx_safetensors_dtype_from_string(""), HFX_DTYPE_UNDEFINED);
    assert_int_equal(hfx_safetensors_dtype_from_string(NULL), HFX_DTYPE_UNDEFINED);
}

/* Header order differs from data order; trailing spaces pad the header, as writers do. */
static const char VALID[] =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"h\":{\"dtype\":\"F16\",\"shape\":[1,2],\"data_offsets\":[32,36]},"
    "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
    "\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]},"
    "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[36,40]},"
    "\"e\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[40,40]}}    ";

static void check_tensor(const hfx_tensor_info *t, const uint8_t *bytes, uint64_t data_start,
                         const char *name, hfx_dtype dtype, int rank, const int64_t *shape,
                         uint64_t begin, uint64_t nbytes) {
    assert_string_equal(t->name, name);
    assert_int_equal(t->dtype, dtype);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->shape[i], shape[i]);
    assert_int_equal(t->nbytes, nbytes);
    assert_int_equal(t->file_offset, data_start + begin);
    assert_ptr_equal(t->data, bytes + data_start + begin);
    assert_string_equal(t->file, PATH);
}

static void test_valid_single_file(void **state) {
    (void)state;
    size_t len;
    uint8_t *b = st_image(VALID, 40, &len);
    hfx_arena *arena = hfx_arena_new();
    hfx_safetensors st;
    hfx_error err = {0};
    assert_int_equal(hfx_safetensors_parse(b, len, PATH, arena, &st, &err), HFX_OK);
    uint64_t ds = 8 + strlen(VALID);
    assert_string_equal(st.path, PATH);
    assert_int_equal(st.n_tensors, 5);
    check_tensor(&st.tensors[0], b, ds, "h", HFX_DTYPE_F16, 2, (int64_t[]){1, 2}, 32, 4);
    check_tensor(&st.tensors[1], b, ds, "w", HFX_DTYPE_F32, 2, (int64_t[]){2, 3}, 0, 24);
    check_tensor(&st.tensors[2], b, ds, "b", HFX_DTYPE_BF16, 1, (int64_t[]){4}, 24, 8);
    check_tensor(&st.tensors[3], b, ds, "s", HFX_DTYPE_F32, 0, NULL, 36, 4);
    check_tensor(&st.tensors[4], b, ds, "e", HFX_DTYPE_I64, 2, (int64_t[]){0, 5}, 40, 0);
    assert_int_equal(st.tensors[2].data[0], 24); /* the fill pattern: byte i holds i */
    /* names live in the arena, not in the image */
    for (size_t i = 0; i < st.n_tensors; i++)
        assert_true(st.tensors[i].name < (const char *)b ||
                    st.tensors[i].name >= (const char *)b + len);
    free(b);
    assert_string_equal(st.tensors[1].name, "w");
    hfx_arena_free(arena);
}

static void test_valid_empty_and_edge(void **state) {
    (void)state;
    static const char *const ok[] = {
        "{}",
        "{\"__metadata__\":{}}",
        /* two empty tensors at the same offset, one at the very end */
        ("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
         "\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]},"
         "\"c\":{\"dtype\":\"I8\",\"shape\":[0,0],\"data_offsets\":[0,0]},"
         "\"d\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[2,2]}}"),
        /* a zero dim makes huge other dims harmless as long as their product fits */
        ("{\"a\":{\"dtype\":\"I32\",\"shape\":[1000000000000,0],\"data_offsets\":[0,0]},"
         "\"b\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}}"),
    };
    static const size_t data[] = {0, 0, 2, 2};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t len;
        uint8_t *b = st_image(ok[i], data[i], &len);
        hfx_arena *arena = hfx_arena_new();
        hfx_safetensors st;
        hfx_error err = {0};
        hfx_status s = hfx_safetensors_parse(b, len, PATH, arena, &st, &err);
        if (s != HFX_OK) fail_msg("%s: %s", ok[i], err.message);
        free(b);
        hfx_arena_free(arena);
    }
}

static void test_truncated(void **state) {
    (void)state;
    expect_bytes_error(NULL, 0, HFX_ERR_INVALID, "0 bytes", NULL);
    expect_bytes_error((const uint8_t *)"\x02\0\0\0\0", 5, HFX_ERR_INVALID, "5 bytes", NULL);
    /* the length says 100 bytes of header, the file holds 20 */
    uint8_t b[28] = {100};
    memcpy(b + 8, "{}", 2);
    expect_bytes_error(b, sizeof b, HFX_ERR_INVALID, "header length 100", "past the end",
                       "28 bytes", NULL);
    /* every prefix of a valid file fails cleanly */
    size_t len;
    uint8_t *full = st_image(VALID, 40, &len);
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n ? n : 1); /* exact size, so ASan sees any over-read */
        memcpy(cut, full, n);
        expect_bytes_error(n ? cut : NULL, n, HFX_ERR_INVALID, NULL);
        free(cut);
    }
    free(full);
}

static void test_oversized_header(void **state) {
    (void)state;
    uint8_t b[16] = {0};
    uint64_t n = (uint64_t)HFX_SAFETENSORS_MAX_HEADER + 1;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(n >> (8 * i));
    expect_bytes_error(b, sizeof b, HFX_ERR_INVALID, "104857601", "limit", NULL);
    memset(b, 0xff, 8);
    expect_bytes_error(b, sizeof b, HFX_ERR_INVALID, "18446744073709551615", "limit", NULL);
}

static void test_malformed_json(void **state) {
    (void)state;
    expect_error("{\"a\":", 0, HFX_ERR_INVALID, "malformed header JSON", "line 1", "column");
    expect_error("{\n\"a\": {,}}", 0, HFX_ERR_INVALID, "line 2", "file offset");
    expect_error("{} x", 0, HFX_ERR_INVALID, "malformed header JSON");
    expect_error("", 0, HFX_ERR_INVALID, "malformed header JSON");
    size_t len;
    uint8_t *b = st_image("{\"a\"XX}", 0, &len);
    b[12] = 0; /* a NUL byte inside the header */
    expect_bytes_error(b, len, HFX_ERR_INVALID, "malformed header JSON", NULL);
    free(b);
}

static void test_non_object_header(void **state) {
    (void)state;
    expect_error("[1, 2]", 0, HFX_ERR_INVALID, "not a JSON object");
    expect_error("5", 0, HFX_ERR_INVALID, "not a JSON object");
    expect_error("{\"a\": [1]}", 0, HFX_ERR_INVALID, "tensor 'a'", "not a JSON object");
}

static void test_duplicate_key(void **state) {
    (void)state;
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                 "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
                 2, HFX_ERR_INVALID, "duplicate", "line 1");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                 1, HFX_ERR_INVALID, "duplicate");
}

static void test_metadata(void **state) {
    (void)state;
    expect_error("{\"__metadata__\":[]}", 0, HFX_ERR_INVALID, "__metadata__", "not a JSON object");
    expect_error("{\"__metadata__\":{\"n\":1}}", 0, HFX_ERR_INVALID, "__metadata__", "'n'",
                 "not a string");
}

static void test_entry_keys(void **state) {
    (void)state;
    expect_error("{\"t.w\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, HFX_ERR_INVALID,
                 "tensor 't.w'", "missing \"dtype\"");
    expect_error("{\"t.w\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, HFX_ERR_INVALID,
                 "tensor 't.w'", "missing \"shape\"");
    expect_error("{\"t.w\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, HFX_ERR_INVALID, "tensor 't.w'",
                 "missing \"data_offsets\"");
    expect_error("{\"t.w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1,
                 HFX_ERR_INVALID, "tensor 't.w'", "unexpected key \"x\"");
}

static void test_bad_dtype(void **state) {
    (void)state;
    expect_error("{\"m.q\":{\"dtype\":\"F8_E4M3FNUZ\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
                 HFX_ERR_UNSUPPORTED, "tensor 'm.q'", "'F8_E4M3FNUZ'", "BF16", "BOOL");
    expect_error("{\"m.q\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2,
                 HFX_ERR_UNSUPPORTED, "tensor 'm.q'", "'U16'");
    expect_error("{\"m.q\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                 HFX_ERR_INVALID, "tensor 'm.q'", "\"dtype\" is not a string");
}

static void test_bad_shape(void **state) {
    (void)state;
    expect_error("{\"m.k\":{\"dtype\":\"U8\",\"shape\":[2,-1],\"data_offsets\":[0,0]}}", 0,
                 HFX_ERR_INVALID, "tensor 'm.k'", "shape[1]", "non-negative integer");
    expect_error("{\"m.k\":{\"dtype\":\"U8\",\"shape\":[2.0],\"data_offsets\":[0,2]}}", 2,
                 HFX_ERR_INVALID, "tensor 'm.k'", "shape[0]");
    expect_error("{\"m.k\":{\"dtype\":\"U8\",\"shape\":[\"2\"],\"data_offsets\":[0,2]}}", 2,
                 HFX_ERR_INVALID, "tensor 'm.k'", "shape[0]");
    expect_error("{\"m.k\":{\"dtype\":\"U8\",\"shape\":2,\"data_offsets\":[0,2]}}", 2,
                 HFX_ERR_INVALID, "tensor 'm.k'", "\"shape\" is not an array");
}

static void test_rank_too_big(void **state) {
    (void)state;
    expect_error("{\"m.r\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                 "\"data_offsets\":[0,1]}}",
                 1, HFX_ERR_INVALID, "tensor 'm.r'", "rank 9");
}

static void test_offsets_out_of_range(void **state) {
    (void)state;
    /* 28-byte data section right after a header of 80 bytes: file offset 88 */
    const char *h = "{\"model.norm.weight\":{\"dtype\":\"F32\",\"shape\":[7],"
                    "\"data_offsets\":[12,40]}}        ";
    assert_int_equal(strlen(h), 80);
    expect_error(h, 28, HFX_ERR_INVALID, "tensor 'model.norm.weight'", "[12, 40]",
                 "end past the data section (28 bytes, file offset 88)");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", 1,
                 HFX_ERR_INVALID, "tensor 'a'", "two non-negative integers");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[-1,0]}}", 1,
                 HFX_ERR_INVALID, "tensor 'a'", "two non-negative integers");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1,
                 HFX_ERR_INVALID, "tensor 'a'", "two non-negative integers");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":{}}}", 1,
                 HFX_ERR_INVALID, "tensor 'a'", "two non-negative integers");
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
                 "\"data_offsets\":[9223372036854775806,9223372036854775807]}}",
                 1, HFX_ERR_INVALID, "tensor 'a'", "end past the data section");
}

static void test_begin_after_end(void **state) {
    (void)state;
    expect_error("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,4]}}", 8,
                 HFX_ERR_INVALID, "tensor 'a'", "[8, 4]", "begin after end");
}

static void test_overlap(void **state) {
    (void)state;
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                 12, HFX_ERR_INVALID, "tensor 'b'", "[4, 12]", "overlap tensor 'a'");
    /* an empty tensor strictly inside another one */
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
                 8, HFX_ERR_INVALID, "tensor 'e'", "overlap tensor 'a'");
    /* the same range twice */
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                 8, HFX_ERR_INVALID, "overlap tensor");
}

static void test_hole(void **state) {
    (void)state;
    /* header of 120 bytes: data section at file offset 128, hole at 136..140 */
    const char *h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}"
                    "           ";
    assert_int_equal(strlen(h), 120);
    expect_error(h, 20, HFX_ERR_INVALID, "tensor 'b'", "hole", "[12, 20]", "136..140");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
                 HFX_ERR_INVALID, "tensor 'a'", "hole");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
                 HFX_ERR_INVALID, "hole at the end");
    expect_error("{}", 3, HFX_ERR_INVALID, "hole at the end");
}

static void test_length_mismatch(void **state) {
    (void)state;
    expect_error("{\"m.v\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
                 HFX_ERR_INVALID, "tensor 'm.v'", "[0, 8]", "hold 8 bytes", "need 12");
    expect_error("{\"m.v\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[0,4]}}", 4,
                 HFX_ERR_INVALID, "tensor 'm.v'", "need 2");
}

static void test_shape_overflow(void **state) {
    (void)state;
    expect_error("{\"m.o\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                 "\"data_offsets\":[0,0]}}",
                 0, HFX_ERR_INVALID, "tensor 'm.o'", "overflow");
    expect_error("{\"m.o\":{\"dtype\":\"F64\",\"shape\":[9223372036854775807],"
                 "\"data_offsets\":[0,8]}}",
                 8, HFX_ERR_INVALID, "tensor 'm.o'", "overflow");
    /* the zero dim comes last: the others still overflow, which is an error */
    expect_error("{\"m.o\":{\"dtype\":\"F32\",\"shape\":[9223372036854775807,3,0],"
                 "\"data_offsets\":[0,0]}}",
                 0, HFX_ERR_INVALID, "tensor 'm.o'", "overflow");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_strings),      cmocka_unit_test(test_valid_single_file),
        cmocka_unit_test(test_valid_empty_and_edge), cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_oversized_header),   cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_non_object_header),  cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_metadata),           cmocka_unit_test(test_entry_keys),
        cmocka_unit_test(test_bad_dtype),          cmocka_unit_test(test_bad_shape),
        cmocka_unit_test(test_rank_too_big),       cmocka_unit_test(test_offsets_out_of_range),
        cmocka_unit_test(test_begin_after_end),    cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_hole),               cmocka_unit_test(test_length_mismatch),
        cmocka_unit_test(test_shape_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
