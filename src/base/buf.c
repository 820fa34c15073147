#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hfx_buf_free(hfx_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void hfx_buf_reserve(hfx_buf *b, size_t extra) {
    if (b->oom) return;
    if (extra > SIZE_MAX - b->len) {
        b->oom = 1;
        return;
    }
    size_t need = b->len + extra;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->data = p;
    b->cap = cap;
}

void hfx_buf_append(hfx_buf *b, const void *p, size_t n) {
    if (n == 0) return;
    hfx_buf_reserve(b, n);
    if (b->oom) return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void hfx_buf_puts(hfx_buf *b, const char *s) { hfx_buf_append(b, s, strlen(s)); }

void hfx_buf_printf(hfx_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    hfx_buf_reserve(b, (size_t)n + 1);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
