/* The public view of the format registry (fmt/registry.c): the formats that can be written. */
#include <string.h>

#include "fmt/format.h"

/* The i-th registered format that has a writer. */
static const hfx_format *writable(int i) {
    for (int k = 0, seen = 0; hfx_format_at(k); k++)
        if (hfx_format_at(k)->write && seen++ == i) return hfx_format_at(k);
    return NULL;
}

const char *hfx_format_name(int i) { return writable(i) ? writable(i)->name : NULL; }

const char *hfx_format_summary(int i) { return writable(i) ? writable(i)->summary : NULL; }

const char *hfx_format_of_file(const char *path) {
    size_t n = strlen(path);
    for (int i = 0; writable(i); i++) {
        const char *ext = writable(i)->graph_ext;
        size_t e = strlen(ext);
        if (n > e && strcmp(path + n - e, ext) == 0) return writable(i)->name;
    }
    return NULL;
}
