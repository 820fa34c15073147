/* hfx_gguf_parse on GGUF images built in memory: a valid file read back, then one test per rule of the reader's
 * contract (each checking the status and that the message names the file and the culprit), every truncation of a
 * valid file refused; and the block decoders on blocks whose values are worked out by hand from ggml's layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/blocks.h"
#include "hf/gguf.h"

#define PATH "models/x.gguf"

/* a growing image */
typedef struct image {
    uint8_t b[4096];
    size_t n;
} image;

static void put(image *im, const void *p, size_t n) {
    assert_true(im->n + n <= sizeof im->b);
    memcpy(im->b + im->n, p, n);
    im->n += n;
}
static void u32(image *im, uint32_t v) { put(im, &v, 4); } /* (little-endian hosts only, as hfx) */
static void u64(image *im, uint64_t v) { put(im, &v, 8); }
static void str(image *im, const char *s) {
    u64(im, strlen(s));
    put(im, s, strlen(s));
}

/* header: version, counts */
static void header(image *im, uint32_t version, uint64_t tensors, uint64_t kvs) {
    put(im, "GGUF", 4);
    u32(im, version);
    u64(im, tensors);
    u64(im, kvs);
}

/* a tensor info: name, dims (innermost first), type, offset */
static void tensor(image *im, const char *name, int n_dims, const uint64_t *ne, uint32_t type, uint64_t offset) {
    str(im, name);
    u32(im, (uint32_t)n_dims);
    for (int d = 0; d < n_dims; d++) u64(im, ne[d]);
    u32(im, type);
    u64(im, offset);
}

/* pad to the 32-byte data section, then n bytes of data */
static void data(image *im, size_t n) {
    while (im->n % 32) im->b[im->n++] = 0;
    for (size_t i = 0; i < n; i++) im->b[im->n++] = (uint8_t)i;
}

/* A valid file: a string, an f32, an array of two strings; an F32 [2, 4] tensor and a Q8_0 row of 32. */
static void valid(image *im) {
    im->n = 0;
    header(im, 3, 2, 3);
    str(im, "general.architecture");
    u32(im, HFX_GGUF_STRING);
    str(im, "llama");
    str(im, "llama.rope.freq_base");
    u32(im, HFX_GGUF_F32);
    float theta = 10000.0f;
    put(im, &theta, 4);
    str(im, "tokenizer.ggml.tokens");
    u32(im, HFX_GGUF_ARRAY);
    u32(im, HFX_GGUF_STRING);
    u64(im, 2);
    str(im, "a");
    str(im, "bc");
    tensor(im, "w", 2, (uint64_t[]){4, 2}, 0, 0);
    tensor(im, "q", 1, (uint64_t[]){32}, 8, 32);
    data(im, 32 + 34);
}

static hfx_status parse(const image *im, hfx_arena *arena, hfx_gguf *g, hfx_error *err) {
    return hfx_gguf_parse(im->b, im->n, PATH, arena, g, err);
}

static void expect_error(const image *im, hfx_status want, const char *words) {
    hfx_arena *arena = hfx_arena_new();
    hfx_gguf g;
    hfx_error err = {0};
    hfx_status got = parse(im, arena, &g, &err);
    if (got != want) fail_msg("status %d, want %d: %s", got, want, err.message);
    if (!strstr(err.message, PATH) || !strstr(err.message, words))
        fail_msg("'%s' or the path not in: %s", words, err.message);
    hfx_arena_free(arena);
}

static void test_valid_file_reads_back(void **state) {
    (void)state;
    image im;
    valid(&im);
    hfx_arena *arena = hfx_arena_new();
    hfx_gguf g;
    hfx_error err = {0};
    assert_int_equal(parse(&im, arena, &g, &err), HFX_OK);
    assert_int_equal(g.n_kv, 3);
    assert_int_equal(g.n_tensors, 2);
    const char *s;
    uint64_t n;
    double v;
    assert_true(hfx_gguf_string(hfx_gguf_find(&g, "general.architecture"), 0, &s, &n));
    assert_true(n == 5 && !memcmp(s, "llama", 5));
    assert_true(hfx_gguf_number(hfx_gguf_find(&g, "llama.rope.freq_base"), 0, &v) && v == 10000.0);
    assert_true(hfx_gguf_string(hfx_gguf_find(&g, "tokenizer.ggml.tokens"), 1, &s, &n));
    assert_true(n == 2 && !memcmp(s, "bc", 2));
    assert_false(hfx_gguf_string(hfx_gguf_find(&g, "tokenizer.ggml.tokens"), 2, &s, &n));
    assert_false(hfx_gguf_number(hfx_gguf_find(&g, "general.architecture"), 0, &v));
    assert_null(hfx_gguf_find(&g, "missing"));
    const hfx_gguf_tensor *w = &g.tensors[0], *q = &g.tensors[1];
    assert_int_equal(w->nbytes, 32);
    assert_int_equal(q->nbytes, 34);
    assert_int_equal(q->data - w->data, 32);
    assert_int_equal(w->ne[0], 4);
    assert_int_equal(w->ne[1], 2);
    assert_int_equal(w->file_offset % 32, 0);
    hfx_arena_free(arena);
}

static void test_every_truncation_is_refused(void **state) {
    (void)state;
    image im;
    valid(&im);
    size_t full = im.n;
    for (size_t n = 0; n < full; n++) {
        hfx_arena *arena = hfx_arena_new();
        hfx_gguf g;
        hfx_error err = {0};
        if (hfx_gguf_parse(im.b, n, PATH, arena, &g, &err) != HFX_ERR_INVALID)
            fail_msg("a file cut to %zu of %zu bytes: %s", n, full, err.message);
        hfx_arena_free(arena);
    }
}

static void test_magic_and_version(void **state) {
    (void)state;
    image im;
    valid(&im);
    im.b[0] = 'X';
    expect_error(&im, HFX_ERR_INVALID, "not a GGUF file");
    valid(&im);
    im.b[4] = 1;
    expect_error(&im, HFX_ERR_UNSUPPORTED, "version 1");
    valid(&im);
    im.b[4] = 0, im.b[7] = 3; /* a big-endian writer's version 3 */
    expect_error(&im, HFX_ERR_UNSUPPORTED, "big-endian");
}

static void test_counts_the_file_cannot_hold(void **state) {
    (void)state;
    image im = {.n = 0};
    header(&im, 3, (uint64_t)1 << 60, 0);
    expect_error(&im, HFX_ERR_INVALID, "cannot fit");
}

static void test_value_rules(void **state) {
    (void)state;
    image im = {.n = 0};
    header(&im, 3, 0, 1);
    str(&im, "k");
    u32(&im, 13); /* no such type */
    expect_error(&im, HFX_ERR_UNSUPPORTED, "value type 13");
    im.n = 0;
    header(&im, 3, 0, 1);
    str(&im, "k");
    u32(&im, HFX_GGUF_ARRAY);
    u32(&im, HFX_GGUF_ARRAY);
    u64(&im, 0);
    expect_error(&im, HFX_ERR_UNSUPPORTED, "array of arrays");
    im.n = 0;
    header(&im, 3, 0, 1);
    str(&im, "k");
    u32(&im, HFX_GGUF_BOOL);
    put(&im, "\2", 1);
    expect_error(&im, HFX_ERR_INVALID, "bool of value 2");
    im.n = 0;
    header(&im, 3, 0, 2);
    for (int i = 0; i < 2; i++) {
        str(&im, "twice");
        u32(&im, HFX_GGUF_U8);
        put(&im, "\1", 1);
    }
    expect_error(&im, HFX_ERR_INVALID, "key 'twice' is there twice");
    im.n = 0;
    header(&im, 3, 0, 1);
    str(&im, "general.alignment");
    u32(&im, HFX_GGUF_U32);
    u32(&im, 48);
    expect_error(&im, HFX_ERR_INVALID, "not a power of two");
}

static void test_tensor_rules(void **state) {
    (void)state;
    struct {
        int n_dims;
        uint64_t ne0;
        uint32_t type;
        uint64_t offset, second_offset;
        hfx_status want;
        const char *words;
    } cases[] = {
        {5, 4, 0, 0, 64, HFX_ERR_INVALID, "5 dimensions"},
        {1, 4, 99, 0, 64, HFX_ERR_UNSUPPORTED, "ggml type 99"},
        {1, 33, 8, 0, 64, HFX_ERR_INVALID, "not whole Q8_0 blocks of 32"},
        {1, 4, 0, 16, 64, HFX_ERR_INVALID, "not a multiple of the alignment"},
        {1, 64, 0, 0, 32, HFX_ERR_INVALID, "overlap"},
        {1, 4, 0, 1 << 20, 64, HFX_ERR_INVALID, "pass the end of the file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        image im = {.n = 0};
        header(&im, 3, 2, 0);
        uint64_t ne[5] = {cases[i].ne0, 1, 1, 1, 1};
        tensor(&im, "a", cases[i].n_dims, ne, cases[i].type, cases[i].offset);
        tensor(&im, "b", 1, (uint64_t[]){4}, 0, cases[i].second_offset);
        data(&im, 256);
        expect_error(&im, cases[i].want, cases[i].words);
    }
    image im = {.n = 0};
    header(&im, 3, 2, 0);
    tensor(&im, "same", 1, (uint64_t[]){4}, 0, 0);
    tensor(&im, "same", 1, (uint64_t[]){4}, 0, 32);
    data(&im, 64);
    expect_error(&im, HFX_ERR_INVALID, "tensor 'same' is there twice");
    im.n = 0;
    header(&im, 3, 1, 0);
    tensor(&im, "huge", 2, (uint64_t[]){(uint64_t)1 << 40, (uint64_t)1 << 40}, 0, 0);
    data(&im, 0);
    expect_error(&im, HFX_ERR_INVALID, "overflows");
}

/* Blocks whose values follow from ggml's layout by hand */
static void test_blocks_decode_by_hand(void **state) {
    (void)state;
    float out[256];
    uint8_t q8[34] = {0x00, 0x3C}; /* d = 1.0 (f16 0x3C00) */
    for (int i = 0; i < 32; i++) q8[2 + i] = (uint8_t)(int8_t)(i - 16);
    hfx_blocks_decode(hfx_block_format_of(8), q8, 0, 32, out);
    for (int i = 0; i < 32; i++) assert_true(out[i] == (float)(i - 16));
    uint8_t q4[18] = {0x00, 0x40}; /* d = 2.0; byte j: element j low nibble, element j + 16 high */
    for (int j = 0; j < 16; j++) q4[2 + j] = (uint8_t)(j | (15 - j) << 4);
    hfx_blocks_decode(hfx_block_format_of(2), q4, 0, 32, out);
    for (int j = 0; j < 16; j++) assert_true(out[j] == 2.0f * (float)(j - 8) && out[16 + j] == 2.0f * (float)(7 - j));
    uint8_t q6[210] = {0}; /* all codes 0 but element 200: low nibble 5 (byte 64 + 8, high half), high bits 2 */
    q6[64 + 8] = 0x50;             /* element 128 + 64 + 8 = 200: the second half's run, its high nibble */
    q6[128 + 32 + 8] = 2 << 4;     /* its high bits: byte 32 + 8 of the second half, plane 200 % 128 / 32 = 2 */
    q6[192 + 200 / 16] = (uint8_t)-3; /* its scale */
    q6[208] = 0x00, q6[209] = 0x3C;   /* d = 1 */
    hfx_blocks_decode(hfx_block_format_of(14), q6, 0, 256, out);
    assert_true(out[200] == -3.0f * (float)((5 | 2 << 4) - 32));
    assert_true(out[0] == (float)q6[192] * -32.0f);
    /* a run that starts and ends inside blocks */
    float part[5];
    hfx_blocks_decode(hfx_block_format_of(8), (uint8_t[68]){0x00, 0x3C, [2 ... 33] = 1, 0x00, 0x40, [36 ... 67] = 3},
                      30, 5, part);
    assert_true(part[0] == 1 && part[1] == 1 && part[2] == 6 && part[4] == 6);
    assert_null(hfx_block_format_of(16)); /* IQ2_XXS: known, not decoded */
    uint32_t block, bytes;
    assert_true(hfx_ggml_type_size(16, &block, &bytes) && block == 256 && bytes == 66);
    assert_false(hfx_ggml_type_size(5, &block, &bytes)); /* (types 4 and 5 were removed from ggml) */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_file_reads_back),  cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_magic_and_version),      cmocka_unit_test(test_counts_the_file_cannot_hold),
        cmocka_unit_test(test_value_rules),            cmocka_unit_test(test_tensor_rules),
        cmocka_unit_test(test_blocks_decode_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
