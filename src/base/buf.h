/* A growable byte buffer (owned heap memory). Appends after a failed growth are ignored and the
 * buffer remembers the failure in `oom`, so a writer checks once at the end. */
#ifndef HFX_BASE_BUF_H
#define HFX_BASE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct hfx_buf {
    uint8_t *data; /* owned */
    size_t len, cap;
    int oom;
} hfx_buf;

void hfx_buf_free(hfx_buf *b);
void hfx_buf_reserve(hfx_buf *b, size_t extra);
void hfx_buf_append(hfx_buf *b, const void *p, size_t n);
void hfx_buf_puts(hfx_buf *b, const char *s);
void hfx_buf_printf(hfx_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
