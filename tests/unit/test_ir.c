/* IR unit tests: fp16/bf16 conversion, symbolic dims, shape inference, lazy initializer views,
 * and the bulk writer's panels of transposed views. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h>

#include "base/half.h"
#include "io/bulk.h"
#include "io/outdir.h"
#include "ir/graph.h"

/* Every finite half survives f16 → f32 → f16, and the f32 value matches the IEEE definition. */
static void test_half_roundtrip_all_patterns(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
        float f = hfx_f16_to_f32((uint16_t)h);
        if (exp == 0x1f) {
            assert_true(man ? isnan(f) : isinf(f));
            continue;
        }
        double want = exp ? ldexp(1.0 + man / 1024.0, (int)exp - 15) : ldexp(man / 1024.0, -14);
        if (h & 0x8000) want = -want;
        assert_true((double)f == want);
        assert_int_equal(hfx_f32_to_f16(f), h);
    }
}

/* The nearest half to f by the definition, ties to the even pattern: searched among the
 * neighbours of a candidate using the widening conversion checked above. */
static uint16_t nearest_half(float f) {
    if (isnan(f)) return 0;
    double x = fabs((double)f);
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (x >= 65520.0) return sign | 0x7c00; /* halfway past the largest half and beyond: inf */
    uint16_t lo = 0;
    for (int bit = 14; bit >= 0; bit--) /* the largest pattern whose value is <= x */
        if ((double)hfx_f16_to_f32((uint16_t)(lo | (1u << bit))) <= x) lo |= (uint16_t)(1u << bit);
    if (lo == 0x7bff) return sign | lo;
    double below = x - hfx_f16_to_f32(lo), above = hfx_f16_to_f32((uint16_t)(lo + 1)) - x;
    uint16_t h = below < above ? lo : above < below ? (uint16_t)(lo + 1) : (lo & 1) ? (uint16_t)(lo + 1) : lo;
    return sign | h;
}

/* f32 → f16 against that definition over 2^22 bit patterns: the top 22 bits enumerated (every
 * exponent, and with the low bits zero every halfway case, normal and subnormal), the low 10
 * bits zero or random; NaNs stay NaNs. */
static void test_half_narrowing_all_exponents(void **state) {
    (void)state;
    uint32_t rng = 12345;
    for (uint32_t top = 0; top < (1u << 22); top++) {
        rng = rng * 1664525u + 1013904223u;
        uint32_t u = (top << 10) | ((top & 1) ? rng >> 22 : 0);
        float f;
        memcpy(&f, &u, 4);
        uint16_t got = hfx_f32_to_f16(f);
        if (isnan(f)) {
            assert_true((got & 0x7c00) == 0x7c00 && (got & 0x3ff));
            continue;
        }
        if (got != nearest_half(f)) fail_msg("f32 0x%08x: got 0x%04x want 0x%04x", u, got, nearest_half(f));
    }
}

/* The bulk narrowing (F16C where this CPU has it) gives the scalar path's bits over the same
 * 2^22 patterns, NaN payloads included, fed in runs whose lengths take every value modulo 8, so
 * the 8-wide body and every length of scalar tail see every kind of value: an export is
 * byte-identical on any x86-64. (On a CPU without F16C both calls take the portable path.) */
static void test_half_bulk_narrowing_matches_scalar(void **state) {
    (void)state;
    enum { RUN = 1021 };
    float f[RUN];
    uint16_t fast[RUN], scalar[RUN];
    uint32_t rng = 777, top = 0;
    for (size_t run = 0; top < (1u << 22); run++) {
        size_t n = 0, want = RUN - run % 8;
        for (; n < want && top < (1u << 22); n++, top++) {
            rng = rng * 1664525u + 1013904223u;
            uint32_t u = (top << 10) | (rng >> 22);
            memcpy(&f[n], &u, 4);
        }
        hfx_f32_to_f16_n(f, fast, n, true);
        hfx_f32_to_f16_n(f, scalar, n, false);
        for (size_t i = 0; i < n; i++)
            if (fast[i] != scalar[i] || scalar[i] != hfx_f32_to_f16(f[i])) {
                uint32_t u;
                memcpy(&u, &f[i], 4);
                fail_msg("f32 0x%08x: bulk 0x%04x, scalar 0x%04x", u, fast[i], scalar[i]);
            }
    }
}

static void test_half_rounding(void **state) {
    (void)state;
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0) */
    assert_int_equal(hfx_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(hfx_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    assert_int_equal(hfx_f32_to_f16(65520.0f), 0x7c00); /* rounds to infinity */
    assert_int_equal(hfx_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(hfx_f32_to_f16(0x1p-25f), 0x0000);          /* halfway to the smallest subnormal: even */
    assert_int_equal(hfx_f32_to_f16(0x1p-25f + 0x1p-30f), 0x0001);
    assert_int_equal(hfx_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);   /* tie to even */
    assert_int_equal(hfx_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-12f), 0x3f81);
    assert_true(hfx_bf16_to_f32(0x3f81) == 1.0f + 0x1p-7f);
}

static void test_dims(void **state) {
    (void)state;
    bool ok;
    hfx_dim past = hfx_dim_sym(1), seq = hfx_dim_sym(0);
    hfx_dim total = hfx_dim_add(past, seq, &ok);
    assert_true(ok);
    assert_int_equal(total.n, 2);
    assert_int_equal(total.sym[0], 0); /* normalized: ascending symbols */
    assert_true(hfx_dim_eq(total, hfx_dim_add(seq, past, &ok)));
    hfx_dim back = hfx_dim_add(total, hfx_dim_scale(seq, -1), &ok);
    assert_true(ok && hfx_dim_eq(back, past));
    hfx_dim three = hfx_dim_add(total, hfx_dim_sym(2), &ok); /* past + seq + a third (DeepSeek V4's entries) */
    assert_true(ok && three.n == 3 && three.sym[2] == 2);
    hfx_dim four = hfx_dim_add(three, hfx_dim_sym(3), &ok);
    (void)four;
    assert_false(ok); /* more terms than a dim holds */
    /* a symbol derived from others: ⌊(past + seq) / 4⌋ + 1, its range theirs so divided */
    hfx_graph *g = hfx_graph_new();
    hfx_dim s = hfx_dim_sym(hfx_graph_symbol(g, "seq", 1, 64)), p = hfx_dim_sym(hfx_graph_symbol(g, "past", 0, 63));
    int e = hfx_graph_symbol_derived(g, "entries", hfx_dim_add(s, p, &ok), 4, 1);
    assert_true(ok && e == 2 && g->symbols[e].div == 4 && g->symbols[e].add == 1);
    assert_int_equal(g->symbols[e].min, 1);       /* ⌊1 / 4⌋ + 1 */
    assert_int_equal(g->symbols[e].max, 127 / 4 + 1);
    assert_int_equal(hfx_graph_symbol_derived(g, "entries", s, 2, 0), e); /* (a name is one symbol) */
    hfx_graph_free(g);
}

static void test_shapes(void **state) {
    (void)state;
    hfx_graph *g = hfx_graph_new();
    hfx_dim b = hfx_dim_sym(hfx_graph_symbol(g, "batch", 1, 64));
    hfx_dim s = hfx_dim_sym(hfx_graph_symbol(g, "seq", 1, 4096));
    hfx_value *x = hfx_graph_input(g, "x", HFX_DTYPE_F32, 3, (hfx_dim[]){b, s, hfx_dim_const(8)});
    float w[8 * 4] = {0};
    hfx_value *wv = hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){4, 8}, w);
    hfx_value *y = hfx_linear(g, x, wv, NULL);
    assert_int_equal(y->rank, 3);
    assert_true(hfx_dim_eq(y->dims[1], s));
    assert_int_equal(y->dims[2].c, 4);
    hfx_value *r = hfx_reshape(g, y, 4, (hfx_dim[]){b, s, hfx_dim_const(2), hfx_dim_const(2)});
    hfx_value *t = hfx_transpose(g, r, 4, (int64_t[]){0, 2, 1, 3});
    assert_true(hfx_dim_eq(t->dims[2], s));
    hfx_value *bcast = hfx_op2(g, HFX_OP_ADD, t, hfx_const_f32(g, 1.0f));
    assert_int_equal(bcast->rank, 4);
    hfx_graph_output(g, bcast, "out");
    hfx_error err;
    assert_int_equal(hfx_graph_verify(g, &err), HFX_OK);
    /* a symbolic dim does not broadcast against a different one */
    hfx_op2(g, HFX_OP_ADD, x, hfx_graph_input(g, "z", HFX_DTYPE_F32, 3, (hfx_dim[]){s, s, hfx_dim_const(8)}));
    assert_int_equal(hfx_graph_status(g, &err), HFX_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "broadcast"));
    hfx_graph_free(g);
}

/* Transposed and sliced views read the right elements, converting bf16 to f32. */
static void test_init_views(void **state) {
    (void)state;
    hfx_graph *g = hfx_graph_new();
    uint16_t src[3 * 4];
    for (int i = 0; i < 12; i++) src[i] = hfx_f32_to_bf16((float)i);
    hfx_value *w = hfx_const_mapped(g, "w", NULL, (const uint8_t *)src, HFX_DTYPE_BF16, 2, (int64_t[]){3, 4}, HFX_DTYPE_F32);
    hfx_value *wt = hfx_const_transpose2d(g, w);
    float out[12];
    hfx_error err;
    assert_int_equal(hfx_init_read(wt->init, 0, 12, out, &err), HFX_OK);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++) assert_true(out[r * 3 + c] == (float)(c * 4 + r));
    /* partial reads across rows */
    assert_int_equal(hfx_init_read(wt->init, 4, 5, out, &err), HFX_OK);
    for (int i = 0; i < 5; i++) assert_true(out[i] == (float)(((4 + i) % 3) * 4 + (4 + i) / 3));
    hfx_value *rows = hfx_const_slice(g, w, 0, 1, 2); /* rows 1..2 */
    assert_int_equal(hfx_init_read(rows->init, 0, 8, out, &err), HFX_OK);
    for (int i = 0; i < 8; i++) assert_true(out[i] == (float)(4 + i));
    assert_int_not_equal(hfx_init_read(rows->init, 4, 5, out, &err), HFX_OK); /* past the end */
    hfx_graph_free(g);
}

/* GPT-NeoX's fused weight: rows laid out per head as [q_h; k_h; v_h]; a part's view picks one. */
static void test_interleaved_rows(void **state) {
    (void)state;
    hfx_graph *g = hfx_graph_new();
    enum { HEADS = 2, PARTS = 3, LEN = 2, COLS = 3, ROWS = HEADS * PARTS * LEN };
    float src[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) src[i] = (float)i;
    hfx_value *w = hfx_const_mapped(g, "qkv", NULL, (const uint8_t *)src, HFX_DTYPE_F32, 2, (int64_t[]){ROWS, COLS}, HFX_DTYPE_F32);
    hfx_value *k = hfx_const_interleaved_rows(g, w, HEADS, PARTS, 1, LEN); /* the k rows */
    assert_int_equal(k->rank, 2);
    assert_int_equal(k->dims[0].c, HEADS * LEN);
    float out[HEADS * LEN * COLS];
    hfx_error err;
    assert_int_equal(hfx_init_read(k->init, 0, HEADS * LEN * COLS, out, &err), HFX_OK);
    for (int h = 0; h < HEADS; h++)
        for (int r = 0; r < LEN; r++)
            for (int c = 0; c < COLS; c++) {
                int src_row = h * PARTS * LEN + 1 * LEN + r;
                assert_true(out[(h * LEN + r) * COLS + c] == src[src_row * COLS + c]);
            }
    hfx_graph_free(g);
}

/* Releasing a mapped weight's pages is only a hint: the bytes read back the same afterwards
 * (they refault from the file). */
static void test_release_keeps_data(void **state) {
    (void)state;
    enum { N = 3 * 4096 };
    char path[] = "/tmp/hfx-test-release-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    float vals[N];
    for (int i = 0; i < N; i++) vals[i] = (float)i * 0.5f;
    assert_int_equal(write(fd, vals, sizeof vals), (ssize_t)sizeof vals);
    void *map = mmap(NULL, sizeof vals, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_true(map != MAP_FAILED);
    hfx_graph *g = hfx_graph_new();
    hfx_mapping m = {fd, sizeof vals, path};
    hfx_value *w = hfx_const_mapped(g, "w", &m, map, HFX_DTYPE_F32, 2, (int64_t[]){3, 4096}, HFX_DTYPE_F32);
    static float out[N];
    hfx_error err;
    hfx_init_release_range(w->init, 100, 5000);
    hfx_init_release(hfx_const_transpose2d(g, w)->init);
    assert_int_equal(hfx_init_check_files(w->init, &err), HFX_OK);
    assert_int_equal(hfx_init_read(w->init, 0, N, out, &err), HFX_OK);
    assert_memory_equal(out, vals, sizeof vals);
    /* a file that shrinks under its mapping is an error before any page is touched */
    assert_int_equal(ftruncate(fd, 100), 0);
    assert_int_equal(hfx_init_check_files(w->init, &err), HFX_ERR_IO);
    assert_non_null(strstr(err.message, "shrank"));
    hfx_graph_free(g);
    munmap(map, sizeof vals);
    close(fd);
    unlink(path);
}

/* A weight file for the transposed-view tests: O×I elements of `dt`, mapped read-only as a
 * checkpoint is. */
typedef struct mapped_weight {
    char path[64];
    int fd;
    void *map;
    size_t size;
    hfx_mapping m;
} mapped_weight;

static void map_weight(mapped_weight *w, hfx_dtype dt, int64_t n) {
    strcpy(w->path, "/tmp/hfx-test-panels-XXXXXX");
    w->fd = mkstemp(w->path);
    assert_true(w->fd >= 0);
    w->size = (size_t)n * hfx_dtype_size(dt);
    uint8_t *bytes = malloc(w->size);
    assert_non_null(bytes);
    /* every 7th element special: NaNs with payloads, infinities, -0, values that round to inf or
     * to a half subnormal, ties: the converting kernels must give the scalar conversions' bits */
    const uint32_t special[] = {0x7fc00001u, 0xffa12345u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x477ff000u,
                                0x477fefffu, 0x33800000u, 0x33000001u, 0x387fe000u, 0x3f801000u, 0x3f803000u};
    for (int64_t i = 0; i < n; i++) {
        float v = (float)((i * 37) % 2001 - 1000) * 0.25f;
        if (i % 7 == 3) v = hfx_f32_from_bits(special[(i / 7) % (int64_t)(sizeof special / sizeof special[0])]);
        uint16_t h = dt == HFX_DTYPE_BF16 ? hfx_f32_to_bf16(v) : hfx_f32_to_f16(v);
        if (dt == HFX_DTYPE_F32) memcpy(bytes + 4 * i, &v, 4);
        else memcpy(bytes + 2 * i, &h, 2);
    }
    assert_int_equal(write(w->fd, bytes, w->size), (ssize_t)w->size);
    free(bytes);
    w->map = mmap(NULL, w->size, PROT_READ, MAP_PRIVATE, w->fd, 0);
    assert_true(w->map != MAP_FAILED);
    w->m = (hfx_mapping){w->fd, w->size, w->path};
}

static void unmap_weight(mapped_weight *w) {
    munmap(w->map, w->size);
    close(w->fd);
    unlink(w->path);
}

/* Block reads of a transposed view (whole, sliced, odd shapes, every float pair) give what the
 * element-order reader gives; and the bulk writer's panel path (a piece of every output row per
 * panel, written a row apart) puts the same bytes in the file as an in-order write, padding and
 * the stream after it included, down to a buffer that holds a single piece. */
static void test_transposed_panels(void **state) {
    (void)state;
    const hfx_dtype types[] = {HFX_DTYPE_F32, HFX_DTYPE_BF16, HFX_DTYPE_F16};
    enum { O = 203, I = 77 }; /* the weight is [O, I]; its transposed view [I, O] */
    char dir[] = "/tmp/hfx-test-bulk-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int si = 0; si < 3; si++)
    for (int di = 0; di < 3; di++) {
        mapped_weight mw;
        map_weight(&mw, types[si], (int64_t)O * I);
        hfx_graph *g = hfx_graph_new();
        hfx_value *w = hfx_const_mapped(g, "w", &mw.m, mw.map, types[si], 2, (int64_t[]){O, I}, types[di]);
        hfx_value *views[2] = {hfx_const_transpose2d(g, w), hfx_const_transpose2d(g, hfx_const_slice(g, w, 0, 5, 190))};
        size_t es = hfx_dtype_size(types[di]);
        for (int vi = 0; vi < 2; vi++) {
            const hfx_init *t = views[vi]->init;
            assert_true(hfx_init_is_transposed(t));
            int64_t rows = t->shape[0], cols = t->shape[1];
            uint64_t nbytes = (uint64_t)(rows * cols) * es;
            uint8_t *whole = malloc(nbytes), *block = malloc(nbytes), *file = malloc(nbytes + 300);
            hfx_error err;
            /* the reference: one element per read, which converts element by element (the
             * scalar conversions of base/half.h, checked above) with no transposing kernel */
            for (int64_t e = 0; e < rows * cols; e++)
                assert_int_equal(hfx_init_read(t, (uint64_t)e, 1, whole + (uint64_t)e * es, &err), HFX_OK);
            assert_int_equal(hfx_init_read(t, 0, (uint64_t)(rows * cols), block, &err), HFX_OK); /* whole rows at once */
            assert_memory_equal(block, whole, nbytes);
            /* rectangles at odd places and sizes, the full one included */
            const int64_t rects[][4] = {{0, rows, 0, cols}, {3, 9, 7, 70}, {0, 1, 0, 1}, {64, rows - 64, 8, cols - 8}, {70, 7, 190 - 9 * vi, 9}};
            for (size_t k = 0; k < sizeof rects / sizeof rects[0]; k++) {
                int64_t r0 = rects[k][0], nr = rects[k][1], c0 = rects[k][2], nc = rects[k][3];
                assert_int_equal(hfx_init_read_block(t, r0, nr, c0, nc, block, &err), HFX_OK);
                for (int64_t r = 0; r < nr; r++)
                    assert_memory_equal(block + (uint64_t)(r * nc) * es, whole + (uint64_t)((r0 + r) * cols + c0) * es, (size_t)nc * es);
            }
            assert_int_not_equal(hfx_init_read_block(t, 1, rows, 0, 1, block, &err), HFX_OK); /* past the end */
            /* through the bulk writer: small chunks force many panels and many jobs per panel */
            /* buffer bytes, and source bytes per panel: one-element panels and jobs, pieces of
             * several rows per job, a panel of the whole weight */
            const size_t chunks[] = {es, 7 * es, 96, 4096, 4096, 1 << 20, 96};
            const uint64_t panels[] = {1, 2 * I, 1000, 20000, 1, 24 << 20, 24 << 20};
            for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
                hfx_outdir *o;
                FILE *f;
                hfx_bulk *b;
                assert_int_equal(hfx_outdir_open(dir, NULL, &o, &err), HFX_OK);
                assert_int_equal(hfx_outdir_scratch(o, &f, &err), HFX_OK);
                assert_int_equal(fwrite("head", 1, 4, f), 4);
                assert_int_equal(hfx_bulk_open(o, f, chunks[k], &b, &err), HFX_OK);
                hfx_bulk_set_panel_source(b, panels[k]);
                hfx_bulk_pad_to(b, 64);
                assert_int_equal(hfx_bulk_stream(b, t, NULL, nbytes, &err), HFX_OK);
                assert_int_equal(hfx_bulk_offset(b), 64 + nbytes);
                assert_int_equal(hfx_bulk_stream(b, NULL, (const uint8_t *)"tail", 4, &err), HFX_OK);
                assert_int_equal(hfx_bulk_close(b, "scratch", &err), HFX_OK);
                assert_int_equal(fwrite("!", 1, 1, f), 1); /* stdio goes on after the bulk bytes */
                assert_int_equal(fflush(f), 0);
                assert_int_equal(pread(fileno(f), file, nbytes + 69, 0), (ssize_t)(nbytes + 69));
                assert_memory_equal(file, "head", 4);
                for (int i = 4; i < 64; i++) assert_int_equal(file[i], 0);
                assert_memory_equal(file + 64, whole, nbytes);
                assert_memory_equal(file + 64 + nbytes, "tail!", 5);
                fclose(f);
                hfx_outdir_abort(o);
            }
            /* a zip entry's CRC needs its bytes in order: the in-order path, same bytes */
            {
                hfx_outdir *o;
                FILE *f;
                hfx_bulk *b;
                assert_int_equal(hfx_outdir_open(dir, NULL, &o, &err), HFX_OK);
                assert_int_equal(hfx_outdir_scratch(o, &f, &err), HFX_OK);
                assert_int_equal(hfx_bulk_open(o, f, 96, &b, &err), HFX_OK);
                hfx_bulk_crc_start(b);
                assert_int_equal(hfx_bulk_stream(b, t, NULL, nbytes, &err), HFX_OK);
                uint32_t crc = hfx_bulk_crc(b);
                assert_int_equal(hfx_bulk_close(b, "scratch", &err), HFX_OK);
                assert_int_equal(pread(fileno(f), file, nbytes, 0), (ssize_t)nbytes);
                assert_memory_equal(file, whole, nbytes);
                assert_int_equal(crc, (uint32_t)crc32(0, whole, (uInt)nbytes));
                fclose(f);
                hfx_outdir_abort(o);
            }
            free(whole), free(block), free(file);
        }
        hfx_graph_free(g);
        unmap_weight(&mw);
    }
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_roundtrip_all_patterns),
        cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_half_narrowing_all_exponents),
        cmocka_unit_test(test_half_bulk_narrowing_matches_scalar),
        cmocka_unit_test(test_dims),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_init_views),
        cmocka_unit_test(test_interleaved_rows),
        cmocka_unit_test(test_release_keeps_data),
        cmocka_unit_test(test_transposed_panels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
