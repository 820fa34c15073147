/* A small FlatBuffers builder: what ExecuTorch's Program schema needs (tables with vtables,
 * scalars, strings, vectors of scalars and of tables, unions as a type byte plus a table), and
 * what the XNNPACK delegate's XNNGraph needs of the same. Debian 12 packages no C FlatBuffers
 * library (flatcc is not in it), and the subset is small.
 *
 * Like every FlatBuffers builder it writes back to front: children before their parents, the
 * root last. A reference (hfx_fb_ref) is a position counted from the end of the buffer, so it
 * stays valid as the buffer grows. Field ids are the schema's field order, a union taking two
 * (its `_type` byte, then its value). Scalars equal to zero are left out, as the schema's
 * defaults are zero; readers see the default. Tests decode the result with flatc --json against
 * ExecuTorch's program.fbs (tests/oracle/test_executorch.py). */
#ifndef HFX_FMT_EXECUTORCH_FLATBUF_H
#define HFX_FMT_EXECUTORCH_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hfx_fb hfx_fb;
typedef uint32_t hfx_fb_ref;

enum { HFX_FB_MAX_FIELDS = 16 };

/* An empty builder, NULL when out of memory. Every later failure to allocate is remembered and
 * reported by hfx_fb_finish. */
hfx_fb *hfx_fb_new(void);
void hfx_fb_free(hfx_fb *b);

hfx_fb_ref hfx_fb_string(hfx_fb *b, const char *s);
/* Vectors of n scalars of `width` bytes (1, 4 or 8), little-endian, the vector's data aligned to
 * `align` (at least the width). */
hfx_fb_ref hfx_fb_vector(hfx_fb *b, const void *items, size_t n, int width, int align);
/* A vector of n references (tables or strings). */
hfx_fb_ref hfx_fb_vector_refs(hfx_fb *b, const hfx_fb_ref *items, size_t n);

/* A table: begin, add fields (any order, each id once), end. Tables do not nest: build the
 * children first. */
void hfx_fb_begin(hfx_fb *b);
void hfx_fb_u8(hfx_fb *b, int field, uint8_t v);
void hfx_fb_u16(hfx_fb *b, int field, uint16_t v);
void hfx_fb_i32(hfx_fb *b, int field, int32_t v);
void hfx_fb_u32(hfx_fb *b, int field, uint32_t v);
void hfx_fb_i64(hfx_fb *b, int field, int64_t v);
void hfx_fb_f64(hfx_fb *b, int field, double v);
void hfx_fb_ref_field(hfx_fb *b, int field, hfx_fb_ref r); /* r == 0: absent */
hfx_fb_ref hfx_fb_end(hfx_fb *b);

/* Finish with `root` and the 4-byte file identifier, reserving `gap` zero bytes (a multiple of
 * the buffer's alignment) right after the identifier for a header the caller fills in (the .pte
 * extended header). *data points into the builder (valid until hfx_fb_free), *len is its size.
 * false when an allocation failed or a size passed 2 GiB. */
bool hfx_fb_finish(hfx_fb *b, hfx_fb_ref root, const char ident[4], size_t gap, uint8_t **data, size_t *len);

/* v as `width` little-endian bytes at p: the headers around a flatbuffer (.pte's, XNNPACK's). */
void hfx_fb_put_le(uint8_t *p, uint64_t v, int width);

#endif
