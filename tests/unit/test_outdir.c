/* The output-directory transaction's names: plain files and one level of folders
 * ("1_Pooling/config.json"), what is refused, and a folder replaced whole by the next export. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/outdir.h"

typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    strcpy(f->dir, "/tmp/hfx_outdir_XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

static bool exists(const char *dir, const char *name, bool folder) {
    char path[256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &sb) == 0 && (folder ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

static void write_ok(hfx_outdir *o, const char *name) {
    hfx_error err = {0};
    assert_int_equal(hfx_outdir_write(o, name, "x", 1, &err), HFX_OK);
}

static void write_refused(hfx_outdir *o, const char *name) {
    hfx_error err = {0};
    assert_int_not_equal(hfx_outdir_write(o, name, "x", 1, &err), HFX_OK);
    assert_true(err.message[0] != 0);
}

static void test_folders_of_files(void **state) {
    fixture *f = *state;
    char out[128];
    snprintf(out, sizeof out, "%s/out", f->dir);
    hfx_error err = {0};
    hfx_outdir *o;
    assert_int_equal(hfx_outdir_open(out, NULL, &o, &err), HFX_OK);
    write_ok(o, "a.json");
    write_ok(o, "m/x.json");
    write_ok(o, "m/y.json");
    write_refused(o, "m/x.json");  /* twice */
    write_refused(o, "a.json/z");  /* a file used as a folder */
    write_refused(o, "m");         /* a folder used as a file */
    write_refused(o, "m/n/o");     /* one level only */
    write_refused(o, "../x");
    write_refused(o, "m/.hidden");
    write_refused(o, ".m/x");
    write_refused(o, "m/");
    write_refused(o, "/x");
    assert_int_not_equal(hfx_outdir_link(o, "m", "m2", &err), HFX_OK);  /* a folder is not linked */
    assert_int_not_equal(hfx_outdir_link(o, "a.json", "m/z", &err), HFX_OK);
    assert_int_equal(hfx_outdir_link(o, "a.json", "b.json", &err), HFX_OK);
    assert_string_equal(hfx_outdir_file(o, 1), "m"); /* the folder is one of the export's names, once */
    assert_string_equal(hfx_outdir_file(o, 2), "b.json");
    assert_null(hfx_outdir_file(o, 3));
    assert_int_equal(hfx_outdir_commit(o, &err), HFX_OK);
    assert_true(exists(out, "m/x.json", false) && exists(out, "m/y.json", false) && exists(out, "b.json", false));

    /* the next export writes the folder again with one file: the folder is replaced whole */
    assert_int_equal(hfx_outdir_open(out, NULL, &o, &err), HFX_OK);
    const char *previous[] = {"a.json", "m", "b.json"};
    assert_int_equal(hfx_outdir_set_previous(o, previous, 3, &err), HFX_OK);
    write_ok(o, "m/z.json");
    assert_int_equal(hfx_outdir_commit(o, &err), HFX_OK);
    assert_true(exists(out, "m/z.json", false));
    assert_false(exists(out, "m/x.json", false));
    assert_false(exists(out, "a.json", false));

    /* and an export without it removes it */
    assert_int_equal(hfx_outdir_open(out, NULL, &o, &err), HFX_OK);
    const char *previous2[] = {"m"};
    assert_int_equal(hfx_outdir_set_previous(o, previous2, 1, &err), HFX_OK);
    write_ok(o, "c.json");
    assert_int_equal(hfx_outdir_commit(o, &err), HFX_OK);
    assert_false(exists(out, "m", true));
    assert_true(exists(out, "c.json", false));
}

static void test_folder_where_a_file_is(void **state) {
    fixture *f = *state;
    char out[128], path[160];
    snprintf(out, sizeof out, "%s/out", f->dir);
    mkdir(out, 0777);
    snprintf(path, sizeof path, "%s/m", out);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    hfx_error err = {0};
    hfx_outdir *o;
    assert_int_equal(hfx_outdir_open(out, NULL, &o, &err), HFX_OK);
    write_ok(o, "m/x.json");
    assert_int_equal(hfx_outdir_commit(o, &err), HFX_ERR_INVALID);
    assert_non_null(strstr(err.message, "not a folder"));
    assert_true(exists(out, "m", false)); /* untouched */
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {TEST(test_folders_of_files), TEST(test_folder_where_a_file_is)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
