/* hfx_checkpoint_open on checkpoint directories written into a fresh temporary directory per
 * test: single file, shards + index, and each way the files can disagree. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hf/checkpoint.h"

/* The temporary checkpoint directory of the running test. */
typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->dir, "/tmp/hfx_ckpt_XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* Remove `path` and, when it is a directory, everything under it. */
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[512];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int teardown(void **state) {
    fixture *f = *state;
    remove_tree(f->dir);
    free(f);
    return 0;
}

static void write_bytes(const char *dir, const char *name, const void *p, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void write_text(const char *dir, const char *name, const char *text) {
    write_bytes(dir, name, text, strlen(text));
}

/* A safetensors file: the header, then data_len bytes all equal to `fill`. */
static void write_st(const char *dir, const char *name, const char *header, size_t data_len,
                     uint8_t fill) {
    size_t n = strlen(header), len = 8 + n + data_len;
    uint8_t *b = malloc(len);
    assert_non_null(b);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(b + 8, header, n);
    memset(b + 8 + n, fill, data_len);
    write_bytes(dir, name, b, len);
    free(b);
}

static void write_config(const char *dir) {
    write_text(dir, "config.json",
               "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8}");
}

/* Open `dir` expecting failure with `want`; the message must hold every string of the
 * NULL-terminated list. */
static void expect_open_error(const char *dir, hfx_status want, ...) {
    static char sentinel;
    hfx_checkpoint *ck = (hfx_checkpoint *)(void *)&sentinel; /* open must reset it to NULL */
    hfx_error err = {0};
    hfx_status got = hfx_checkpoint_open(dir, &ck, &err);
    if (got != want) fail_msg("status %d, want %d: %s", got, want, err.message);
    assert_null(ck);
    assert_int_equal(err.status, want);
    va_list ap;
    va_start(ap, want);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err.message, s)) fail_msg("'%s' not in: %s", s, err.message);
    va_end(ap);
}

static hfx_checkpoint *open_ok(const char *dir) {
    hfx_checkpoint *ck = NULL;
    hfx_error err = {0};
    hfx_status st = hfx_checkpoint_open(dir, &ck, &err);
    if (st != HFX_OK) fail_msg("open %s: %s", dir, err.message);
    assert_non_null(ck);
    return ck;
}

/* Path of `name` inside the fixture directory, in a static buffer. */
static const char *in_dir(const fixture *f, const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return path;
}

#define T(name, dtype, shape, b, e)                                                             \
    "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static void test_single_file(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    write_text(f->dir, "generation_config.json", "{\"max_new_tokens\": 4}");
    write_st(f->dir, "model.safetensors",
             "{" T("model.norm.weight", "F32", "[2]", 0, 8) ","
                 T("lm_head.weight", "BF16", "[2,2]", 8, 16) ","
                 T("model.embed.weight", "F16", "[]", 16, 18) "}",
             18, 0x5a);
    hfx_checkpoint *ck = open_ok(f->dir);
    assert_string_equal(hfx_checkpoint_dir(ck), f->dir);
    const json_t *cfg = hfx_checkpoint_config(ck);
    assert_true(json_is_object(cfg));
    assert_int_equal(json_integer_value(json_object_get(cfg, "hidden_size")), 8);
    assert_non_null(hfx_checkpoint_generation_config(ck));
    assert_int_equal(hfx_checkpoint_tensor_count(ck), 3);
    static const char *const sorted[] = {"lm_head.weight", "model.embed.weight",
                                         "model.norm.weight"};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(hfx_checkpoint_tensor_at(ck, i)->name, sorted[i]);
        assert_int_equal(hfx_checkpoint_index_of(ck, sorted[i]), (long)i);
        assert_ptr_equal(hfx_checkpoint_find(ck, sorted[i]), hfx_checkpoint_tensor_at(ck, i));
    }
    assert_null(hfx_checkpoint_tensor_at(ck, 3));
    const hfx_tensor_info *t = hfx_checkpoint_find(ck, "lm_head.weight");
    assert_int_equal(t->dtype, HFX_DTYPE_BF16);
    assert_int_equal(t->nbytes, 8);
    assert_int_equal(t->data[7], 0x5a);
    assert_string_equal(t->file, in_dir(f, "model.safetensors"));
    assert_int_equal(hfx_checkpoint_find(ck, "model.embed.weight")->rank, 0);
    assert_null(hfx_checkpoint_find(ck, "missing"));
    assert_null(hfx_checkpoint_find(ck, ""));
    assert_int_equal(hfx_checkpoint_index_of(ck, "missing"), -1);
    hfx_checkpoint_close(ck);
    hfx_checkpoint_close(NULL);
}

static void test_single_file_no_generation_config(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    write_st(f->dir, "model.safetensors", "{}", 0, 0);
    char dir[128]; /* a trailing slash is accepted and does not double in paths */
    snprintf(dir, sizeof dir, "%s/", f->dir);
    hfx_checkpoint *ck = open_ok(dir);
    assert_null(hfx_checkpoint_generation_config(ck));
    assert_int_equal(hfx_checkpoint_tensor_count(ck), 0);
    assert_null(hfx_checkpoint_find(ck, "a"));
    assert_null(hfx_checkpoint_tensor_at(ck, 0));
    hfx_checkpoint_close(ck);
}

static const char *const S1 = "model-00001-of-00002.safetensors";
static const char *const S2 = "model-00002-of-00002.safetensors";
static const char *const INDEX = "model.safetensors.index.json";

/* Two shards: s1 holds a.w and c.w, s2 holds b.w and d.w. */
static void write_two_shards(const fixture *f) {
    write_config(f->dir);
    write_st(f->dir, S1, "{" T("c.w", "F32", "[1]", 0, 4) "," T("a.w", "F32", "[2]", 4, 12) "}",
             12, 1);
    write_st(f->dir, S2, "{" T("b.w", "I64", "[1]", 0, 8) "," T("d.w", "U8", "[0]", 8, 8) "}",
             8, 2);
}

static void test_sharded(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX,
               "{\"metadata\": {\"total_size\": 20}, \"weight_map\": {"
               "\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00002-of-00002.safetensors\","
               "\"c.w\": \"model-00001-of-00002.safetensors\","
               "\"d.w\": \"model-00002-of-00002.safetensors\"}}");
    hfx_checkpoint *ck = open_ok(f->dir);
    assert_int_equal(hfx_checkpoint_tensor_count(ck), 4);
    static const char *const names[] = {"a.w", "b.w", "c.w", "d.w"};
    for (size_t i = 0; i < 4; i++) {
        const hfx_tensor_info *t = hfx_checkpoint_tensor_at(ck, i);
        assert_string_equal(t->name, names[i]);
        assert_ptr_equal(hfx_checkpoint_find(ck, names[i]), t);
        assert_int_equal(hfx_checkpoint_index_of(ck, names[i]), (long)i);
        assert_string_equal(t->file, in_dir(f, i % 2 ? S2 : S1));
    }
    const hfx_tensor_info *b = hfx_checkpoint_find(ck, "b.w");
    assert_int_equal(b->dtype, HFX_DTYPE_I64);
    assert_int_equal(b->data[0], 2);
    assert_int_equal(hfx_checkpoint_find(ck, "a.w")->data[7], 1);
    assert_null(hfx_checkpoint_find(ck, "e.w"));
    assert_int_equal(hfx_checkpoint_index_of(ck, "0"), -1);
    hfx_checkpoint_close(ck);
}

static void test_single_file_wins_over_index(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    write_st(f->dir, "model.safetensors", "{" T("x", "U8", "[1]", 0, 1) "}", 1, 0);
    write_text(f->dir, INDEX, "not even JSON");
    hfx_checkpoint *ck = open_ok(f->dir);
    assert_int_equal(hfx_checkpoint_tensor_count(ck), 1);
    hfx_checkpoint_close(ck);
}

static void test_index_missing_shard(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"c.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00003-of-00003.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'b.w'", "model-00003-of-00003.safetensors",
                      "does not exist", NULL);
}

static void test_index_tensor_absent_from_shard(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00002-of-00002.safetensors\","
               "\"c.w\": \"model-00001-of-00002.safetensors\","
               "\"d.w\": \"model-00002-of-00002.safetensors\","
               "\"e.w\": \"model-00002-of-00002.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'e.w'", S2, "does not hold it", NULL);
}

static void test_index_names_wrong_shard(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00002-of-00002.safetensors\","
               "\"b.w\": \"model-00002-of-00002.safetensors\","
               "\"c.w\": \"model-00001-of-00002.safetensors\","
               "\"d.w\": \"model-00002-of-00002.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'a.w'", S1, S2, NULL);
}

static void test_shard_tensor_not_in_index(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00002-of-00002.safetensors\","
               "\"d.w\": \"model-00002-of-00002.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'c.w'", S1, "not in the weight_map", NULL);
}

static void test_tensor_in_two_shards(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    write_st(f->dir, S1, "{" T("a.w", "U8", "[1]", 0, 1) "," T("b.w", "U8", "[1]", 1, 2) "}",
             2, 1);
    write_st(f->dir, S2, "{" T("b.w", "U8", "[1]", 0, 1) "," T("c.w", "U8", "[1]", 1, 2) "}",
             2, 2);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00001-of-00002.safetensors\","
               "\"c.w\": \"model-00002-of-00002.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, "duplicate tensor 'b.w'", S1, S2, NULL);
}

static void test_shard_path_traversal(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    static const char *const bad[] = {"../model-00001-of-00002.safetensors", "sub/x.safetensors",
                                      "/etc/passwd", "..", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char index[256];
        snprintf(index, sizeof index, "{\"weight_map\": {\"a.w\": \"%s\"}}", bad[i]);
        write_text(f->dir, INDEX, index);
        char want[128];
        snprintf(want, sizeof want, "'%s'", bad[i]);
        expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'a.w'", want, "plain file name", NULL);
    }
}

static void test_bad_weight_map(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_text(f->dir, INDEX, "{\"weight_map\": {\"a.w\": 3}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "'a.w'", "not a string", NULL);
    write_text(f->dir, INDEX, "{\"metadata\": {}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "weight_map", NULL);
    write_text(f->dir, INDEX, "{\"weight_map\": {}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "weight_map", NULL);
    write_text(f->dir, INDEX, "{\"weight_map\": {\"a\": \"x\", \"a\": \"y\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, INDEX, "duplicate", NULL);
}

static void test_bad_shard_header(void **state) {
    fixture *f = *state;
    write_two_shards(f);
    write_st(f->dir, S2, "{" T("b.w", "I64", "[1]", 0, 9) "}", 9, 2);
    write_text(f->dir, INDEX,
               "{\"weight_map\": {\"a.w\": \"model-00001-of-00002.safetensors\","
               "\"b.w\": \"model-00002-of-00002.safetensors\","
               "\"c.w\": \"model-00001-of-00002.safetensors\"}}");
    expect_open_error(f->dir, HFX_ERR_INVALID, S2, "tensor 'b.w'", "[0, 9]", NULL);
}

static void test_bad_single_file(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    write_bytes(f->dir, "model.safetensors", "", 0);
    expect_open_error(f->dir, HFX_ERR_INVALID, "model.safetensors", "0 bytes", NULL);
    write_bytes(f->dir, "model.safetensors", "\x10\0\0", 3);
    expect_open_error(f->dir, HFX_ERR_INVALID, "model.safetensors", "3 bytes", NULL);
    write_st(f->dir, "model.safetensors", "{" T("q", "F8_E5M2", "[1]", 0, 1) "}", 1, 0);
    expect_open_error(f->dir, HFX_ERR_UNSUPPORTED, "model.safetensors", "'q'", "F8_E5M2", NULL);
    unlink(in_dir(f, "model.safetensors"));
    assert_int_equal(mkdir(in_dir(f, "model.safetensors"), 0700), 0);
    expect_open_error(f->dir, HFX_ERR_INVALID, "model.safetensors", "not a regular file", NULL);
}

static void test_missing_config(void **state) {
    fixture *f = *state;
    write_st(f->dir, "model.safetensors", "{}", 0, 0);
    expect_open_error(f->dir, HFX_ERR_INVALID, in_dir(f, "config.json"), "not found", NULL);
}

static void test_malformed_config(void **state) {
    fixture *f = *state;
    write_st(f->dir, "model.safetensors", "{}", 0, 0);
    write_text(f->dir, "config.json", "{\n  \"a\": 1,\n  \"b\": }\n");
    expect_open_error(f->dir, HFX_ERR_INVALID, in_dir(f, "config.json"), "line 3", "column",
                      NULL);
    write_text(f->dir, "config.json", "[1, 2]");
    expect_open_error(f->dir, HFX_ERR_INVALID, "config.json", "not a JSON object", NULL);
    write_text(f->dir, "config.json", "{\"a\": 1, \"a\": 2}");
    expect_open_error(f->dir, HFX_ERR_INVALID, "config.json", "duplicate", NULL);
    write_config(f->dir);
    write_text(f->dir, "generation_config.json", "{\"max_new_tokens\": ");
    expect_open_error(f->dir, HFX_ERR_INVALID, "generation_config.json", "line 1", NULL);
}

static void test_no_weights(void **state) {
    fixture *f = *state;
    write_config(f->dir);
    expect_open_error(f->dir, HFX_ERR_INVALID, f->dir,
                      "no model.safetensors or model.safetensors.index.json", NULL);
    write_text(f->dir, "pytorch_model.bin", "PK");
    expect_open_error(f->dir, HFX_ERR_UNSUPPORTED, f->dir, "pytorch_model.bin",
                      "not supported", NULL);
}

static void test_not_a_directory(void **state) {
    fixture *f = *state;
    expect_open_error(in_dir(f, "nope"), HFX_ERR_INVALID, "nope", "No such file", NULL);
    write_config(f->dir);
    expect_open_error(in_dir(f, "config.json"), HFX_ERR_INVALID, "not a directory", NULL);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_single_file),
        TEST(test_single_file_no_generation_config),
        TEST(test_sharded),
        TEST(test_single_file_wins_over_index),
        TEST(test_index_missing_shard),
        TEST(test_index_tensor_absent_from_shard),
        TEST(test_index_names_wrong_shard),
        TEST(test_shard_tensor_not_in_index),
        TEST(test_tensor_in_two_shards),
        TEST(test_shard_path_traversal),
        TEST(test_bad_weight_map),
        TEST(test_bad_shard_header),
        TEST(test_bad_single_file),
        TEST(test_missing_config),
        TEST(test_malformed_config),
        TEST(test_no_weights),
        TEST(test_not_a_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
