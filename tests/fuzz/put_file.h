/* What the directory harnesses share: writing one input file into the process's directory. */
#ifndef HFX_TESTS_FUZZ_PUT_FILE_H
#define HFX_TESTS_FUZZ_PUT_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* dir/name holds exactly `n` bytes of `bytes` (abort on any failure: the harness is broken). */
static void put(const char *dir, const char *name, const void *bytes, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(bytes, 1, n, f) != n) abort();
    fclose(f);
}

#endif
