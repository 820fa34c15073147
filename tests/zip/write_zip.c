/* Writes a zip archive with io/zip.c for tests/oracle/test_zip.py to read back with Python's
 * zipfile and PyTorch's archive reader.
 *
 * usage: write_zip OUT_DIR FILE CHUNK ENTRY ...
 * An ENTRY NAME:BYTES:SEED holds BYTES bytes, byte i = (i * 31 + SEED) mod 256, streamed through
 * the bulk writer in CHUNK-byte buffers (so a CRC spans chunks); NAME=TEXT holds TEXT. Exit 0
 * when the export committed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/zip.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s OUT_DIR FILE CHUNK NAME:BYTES:SEED ...\n", argv[0]);
        return 2;
    }
    hfx_error err = {0};
    hfx_outdir *o;
    FILE *f = NULL;
    hfx_zip *z = NULL;
    hfx_status st = hfx_outdir_open(argv[1], NULL, &o, &err);
    if (st) goto out;
    st = hfx_outdir_create(o, argv[2], &f, &err);
    if (!st) st = hfx_zip_open(o, f, (size_t)atol(argv[3]), &z, &err);
    for (int i = 4; !st && i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (eq && (!strchr(argv[i], ':') || eq < strchr(argv[i], ':'))) { /* NAME=TEXT */
            char name[512];
            snprintf(name, sizeof name, "%.*s", (int)(eq - argv[i]), argv[i]);
            st = hfx_zip_add(z, name, eq + 1, strlen(eq + 1), &err);
            continue;
        }
        char name[512];
        unsigned long long n = 0;
        unsigned seed = 0;
        const char *colon = strchr(argv[i], ':');
        if (!colon || (size_t)(colon - argv[i]) >= sizeof name || sscanf(colon, ":%llu:%u", &n, &seed) != 2) {
            fprintf(stderr, "bad entry '%s'\n", argv[i]);
            return 2;
        }
        memcpy(name, argv[i], (size_t)(colon - argv[i]));
        name[colon - argv[i]] = 0;
        uint8_t *data = malloc(n ? n : 1);
        if (!data) return 1;
        for (unsigned long long k = 0; k < n; k++) data[k] = (uint8_t)(k * 31 + seed);
        st = hfx_zip_begin(z, name, &err);
        if (!st) st = hfx_bulk_stream(hfx_zip_bulk(z), NULL, data, n, &err);
        if (!st) st = hfx_zip_end(z, &err);
        free(data);
    }
    if (z) st = hfx_zip_close(z, st, argv[2], &err);
    if (f) {
        hfx_status cst = hfx_outdir_close(o, f, argv[2], st ? NULL : &err);
        if (!st) st = cst;
    }
    if (!st) st = hfx_outdir_commit(o, &err);
    else hfx_outdir_abort(o);
out:
    if (st) fprintf(stderr, "write_zip: %s\n", err.message);
    return st ? 1 : 0;
}
