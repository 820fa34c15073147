/* Protocol-buffer encoding primitives: varints, tags and length-delimited fields appended to an
 * hfx_buf. Messages are built bottom-up: a child message is encoded into its own buffer and then
 * appended to its parent as a length-delimited field. */
#ifndef HFX_FMT_ONNX_PB_H
#define HFX_FMT_ONNX_PB_H

#include <stdint.h>
#include <string.h>

#include "base/buf.h"

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

static inline void pb_varint(hfx_buf *b, uint64_t v) {
    uint8_t tmp[10];
    int n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    hfx_buf_append(b, tmp, (size_t)n);
}

static inline void pb_tag(hfx_buf *b, uint32_t field, int wire) {
    pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

/* int32/int64/enum fields: negative values take ten bytes, as protobuf requires. */
static inline void pb_int(hfx_buf *b, uint32_t field, int64_t v) {
    pb_tag(b, field, PB_VARINT);
    pb_varint(b, (uint64_t)v);
}

static inline void pb_float(hfx_buf *b, uint32_t field, float f) {
    pb_tag(b, field, PB_I32);
    hfx_buf_append(b, &f, 4); /* little-endian hosts only: checked at build time in pb.c */
}

static inline void pb_bytes(hfx_buf *b, uint32_t field, const void *p, size_t n) {
    pb_tag(b, field, PB_LEN);
    pb_varint(b, n);
    hfx_buf_append(b, p, n);
}

static inline void pb_string(hfx_buf *b, uint32_t field, const char *s) {
    pb_bytes(b, field, s, strlen(s));
}

/* Append `child` as a length-delimited field and reset it for reuse. */
static inline void pb_message(hfx_buf *b, uint32_t field, hfx_buf *child) {
    pb_bytes(b, field, child->data, child->len);
    if (child->oom) b->oom = 1;
    child->len = 0;
}

#endif
