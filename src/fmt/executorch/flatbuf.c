/* FlatBuffers builder (flatbuf.h). The buffer's bytes sit at the end of `buf`: data is
 * buf[cap - size, cap), and a position `p` (a reference) is the byte at buf[cap - p]. */
#include "fmt/executorch/flatbuf.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_BYTES = 1u << 31 };

struct hfx_fb {
    uint8_t *buf;
    size_t cap, size;
    size_t min_align;
    bool failed;
    /* the open table */
    bool open;
    size_t start;
    int n_fields;
    int field_id[HFX_FB_MAX_FIELDS];
    size_t field_pos[HFX_FB_MAX_FIELDS];
};

hfx_fb *hfx_fb_new(void) {
    hfx_fb *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->cap = 4096;
    b->buf = malloc(b->cap);
    b->min_align = 1;
    if (!b->buf) {
        free(b);
        return NULL;
    }
    return b;
}

void hfx_fb_free(hfx_fb *b) {
    if (!b) return;
    free(b->buf);
    free(b);
}

/* Room for n more bytes in front of the data. */
static bool reserve(hfx_fb *b, size_t n) {
    if (b->failed) return false;
    if (n > MAX_BYTES || b->size + n > MAX_BYTES) return !(b->failed = true);
    if (b->size + n <= b->cap) return true;
    size_t cap = b->cap * 2;
    while (cap < b->size + n) cap *= 2;
    uint8_t *nb = malloc(cap);
    if (!nb) return !(b->failed = true);
    memcpy(nb + cap - b->size, b->buf + b->cap - b->size, b->size);
    free(b->buf);
    b->buf = nb, b->cap = cap;
    return true;
}

static void push(hfx_fb *b, const void *bytes, size_t n) {
    if (!reserve(b, n)) return;
    b->size += n;
    if (bytes) memcpy(b->buf + b->cap - b->size, bytes, n);
    else memset(b->buf + b->cap - b->size, 0, n);
}

/* Zero padding so that, once `len` more bytes are pushed, the data is aligned to `align`. */
static void prealign(hfx_fb *b, size_t len, size_t align) {
    if (align > b->min_align) b->min_align = align;
    push(b, NULL, (align - (b->size + len) % align) % align);
}

static void push_le(hfx_fb *b, uint64_t v, int width) {
    uint8_t le[8];
    for (int i = 0; i < width; i++) le[i] = (uint8_t)(v >> (8 * i));
    prealign(b, (size_t)width, (size_t)width);
    push(b, le, (size_t)width);
}

/* The offset to store at the next 4-byte slot so that it points at position r. */
static uint32_t refer(hfx_fb *b, hfx_fb_ref r) {
    prealign(b, 4, 4);
    return (uint32_t)(b->size + 4 - r);
}

hfx_fb_ref hfx_fb_string(hfx_fb *b, const char *s) {
    size_t n = strlen(s);
    prealign(b, n + 1, 4);
    push(b, NULL, 1);
    push(b, s, n);
    push_le(b, n, 4);
    return (hfx_fb_ref)b->size;
}

hfx_fb_ref hfx_fb_vector(hfx_fb *b, const void *items, size_t n, int width, int align) {
    if (n > MAX_BYTES / 8) {
        b->failed = true;
        return 0;
    }
    prealign(b, n * (size_t)width, 4);
    prealign(b, n * (size_t)width, (size_t)(align > width ? align : width));
    const uint8_t *p = items;
    for (size_t i = n; i-- > 0;) {
        uint64_t v = 0;
        if (width == 1) v = p[i];
        else if (width == 4) {
            uint32_t x;
            memcpy(&x, p + 4 * i, 4);
            v = x;
        } else memcpy(&v, p + 8 * i, 8);
        push_le(b, v, width);
    }
    push_le(b, n, 4);
    return (hfx_fb_ref)b->size;
}

hfx_fb_ref hfx_fb_vector_refs(hfx_fb *b, const hfx_fb_ref *items, size_t n) {
    if (n > MAX_BYTES / 4) {
        b->failed = true;
        return 0;
    }
    prealign(b, n * 4, 4);
    for (size_t i = n; i-- > 0;) push_le(b, refer(b, items[i]), 4);
    push_le(b, n, 4);
    return (hfx_fb_ref)b->size;
}

void hfx_fb_begin(hfx_fb *b) {
    if (b->open) b->failed = true; /* tables do not nest */
    b->open = true;
    b->start = b->size;
    b->n_fields = 0;
}

static void field(hfx_fb *b, int id, uint64_t v, int width) {
    if (!b->open || b->n_fields == HFX_FB_MAX_FIELDS || id < 0 || id >= HFX_FB_MAX_FIELDS) {
        b->failed = true;
        return;
    }
    push_le(b, v, width);
    b->field_id[b->n_fields] = id;
    b->field_pos[b->n_fields++] = b->size;
}

void hfx_fb_u8(hfx_fb *b, int id, uint8_t v) {
    if (v) field(b, id, v, 1);
}
void hfx_fb_u16(hfx_fb *b, int id, uint16_t v) {
    if (v) field(b, id, v, 2);
}
void hfx_fb_i32(hfx_fb *b, int id, int32_t v) {
    if (v) field(b, id, (uint32_t)v, 4);
}
void hfx_fb_u32(hfx_fb *b, int id, uint32_t v) {
    if (v) field(b, id, v, 4);
}
void hfx_fb_i64(hfx_fb *b, int id, int64_t v) {
    if (v) field(b, id, (uint64_t)v, 8);
}
void hfx_fb_f64(hfx_fb *b, int id, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    if (bits) field(b, id, bits, 8); /* +0.0 is the default; -0.0 is kept */
}
void hfx_fb_ref_field(hfx_fb *b, int id, hfx_fb_ref r) {
    if (r) field(b, id, refer(b, r), 4);
}

hfx_fb_ref hfx_fb_end(hfx_fb *b) {
    if (!b->open) b->failed = true;
    b->open = false;
    push_le(b, 0, 4); /* the offset to the vtable, patched below */
    size_t table = b->size;
    int count = 0;
    for (int i = 0; i < b->n_fields; i++)
        if (b->field_id[i] + 1 > count) count = b->field_id[i] + 1;
    uint16_t vt[2 + HFX_FB_MAX_FIELDS] = {(uint16_t)(4 + 2 * count), (uint16_t)(table - b->start)};
    for (int i = 0; i < b->n_fields; i++) vt[2 + b->field_id[i]] = (uint16_t)(table - b->field_pos[i]);
    for (int i = 1 + count; i >= 0; i--) push_le(b, vt[i], 2);
    if (b->failed) return 0;
    int32_t to_vtable = (int32_t)(b->size - table); /* vtable = table - this */
    uint8_t *at = b->buf + b->cap - table;
    for (int i = 0; i < 4; i++) at[i] = (uint8_t)((uint32_t)to_vtable >> (8 * i));
    return (hfx_fb_ref)table;
}

bool hfx_fb_finish(hfx_fb *b, hfx_fb_ref root, const char ident[4], size_t gap, uint8_t **data, size_t *len) {
    prealign(b, 8 + gap, b->min_align > 4 ? b->min_align : 4);
    push(b, NULL, gap);
    push(b, ident, 4);
    push_le(b, refer(b, root), 4);
    if (b->failed || b->open) return false;
    *data = b->buf + b->cap - b->size;
    *len = b->size;
    return true;
}

void hfx_fb_put_le(uint8_t *p, uint64_t v, int width) {
    for (int i = 0; i < width; i++) p[i] = (uint8_t)(v >> (8 * i));
}
