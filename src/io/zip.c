/* The zip writer (io/zip.h). Record layouts are PKWARE's APPNOTE (local file header 0x04034b50,
 * data descriptor 0x08074b50, central directory header 0x02014b50, zip64 end record 0x06064b50
 * and its locator 0x07064b50, end record 0x06054b50); the choices within them (version 0, flag
 * bit 3 for the descriptor and bit 11 for UTF-8 names, zero times, the "FB" padding field, zip64
 * end records always) are the ones PyTorch's writer makes, so its reader sees familiar archives. */
#include "io/zip.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/status.h"

enum {
    ALIGN = 64,              /* data offsets: what PyTorch's reader maps tensors at */
    FLAGS = 0x0808,          /* bit 3: sizes in the data descriptor; bit 11: UTF-8 names */
    PAD_ID = 0x4246,         /* "FB": the padding extra field */
    MAX_NAME = 0xFFFF - 64   /* a name and its padding fit the header's 16-bit lengths */
};

typedef struct entry {
    char *name;              /* owned */
    uint64_t offset, size;   /* of the local header; of the data */
    uint32_t crc;
} entry;

struct hfx_zip {
    hfx_bulk *bulk;
    entry *entries;          /* owned */
    size_t n, cap;
    uint64_t data_start;     /* the current entry's first data byte; 0: none open */
    hfx_status failed;       /* set once a write of the records failed (out of memory) */
};

static void le16(hfx_buf *b, uint32_t v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    hfx_buf_append(b, x, 2);
}

static void le32(hfx_buf *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    hfx_buf_append(b, x, 4);
}

static void le64(hfx_buf *b, uint64_t v) {
    le32(b, (uint32_t)v);
    le32(b, (uint32_t)(v >> 32));
}

/* Queue the records in b (from memory, CRC untouched by the caller's entry). */
static hfx_status put(hfx_zip *z, hfx_buf *b, hfx_error *err) {
    hfx_status st = b->oom ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory")
                           : hfx_bulk_stream(z->bulk, NULL, b->data, b->len, err);
    hfx_buf_free(b);
    return st;
}

hfx_status hfx_zip_open(hfx_outdir *out, FILE *f, size_t chunk, hfx_zip **z, hfx_error *err) {
    *z = calloc(1, sizeof **z);
    if (!*z) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = hfx_bulk_open(out, f, chunk, &(*z)->bulk, err);
    if (st) {
        free(*z);
        *z = NULL;
    }
    return st;
}

hfx_bulk *hfx_zip_bulk(hfx_zip *z) { return z->bulk; }

hfx_status hfx_zip_begin(hfx_zip *z, const char *name, hfx_error *err) {
    size_t n = strlen(name);
    if (z->data_start) return hfx_fail(err, HFX_ERR_INTERNAL, "zip: entry '%s' begun inside another", name);
    if (!n || n > MAX_NAME) return hfx_fail(err, HFX_ERR_INTERNAL, "zip: entry name of %zu bytes", n);
    if (z->n == z->cap) {
        size_t cap = z->cap ? 2 * z->cap : 32;
        entry *p = realloc(z->entries, cap * sizeof *p);
        if (!p) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        z->entries = p;
        z->cap = cap;
    }
    entry *e = &z->entries[z->n];
    if (!(e->name = malloc(n + 1))) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    memcpy(e->name, name, n + 1);
    e->offset = hfx_bulk_offset(z->bulk);
    e->size = 0;
    e->crc = 0;
    z->n++;
    /* the padding field's 4-byte head, then as many pad bytes as reach the next multiple of 64 */
    uint64_t data = e->offset + 30 + n + 4;
    size_t pad = (size_t)((ALIGN - data % ALIGN) % ALIGN);
    hfx_buf b = {0};
    le32(&b, 0x04034b50);
    le16(&b, 0);              /* version needed */
    le16(&b, FLAGS);
    le16(&b, 0);              /* stored */
    le16(&b, 0), le16(&b, 0); /* time, date */
    le32(&b, 0), le32(&b, 0), le32(&b, 0); /* crc, sizes: in the descriptor */
    le16(&b, (uint32_t)n);
    le16(&b, (uint32_t)(4 + pad));
    hfx_buf_append(&b, name, n);
    le16(&b, PAD_ID);
    le16(&b, (uint32_t)pad);
    for (size_t i = 0; i < pad; i++) hfx_buf_append(&b, "Z", 1);
    hfx_status st = put(z, &b, err);
    if (st) return st;
    z->data_start = hfx_bulk_offset(z->bulk);
    hfx_bulk_crc_start(z->bulk);
    return HFX_OK;
}

hfx_status hfx_zip_end(hfx_zip *z, hfx_error *err) {
    if (!z->data_start) return hfx_fail(err, HFX_ERR_INTERNAL, "zip: no entry to end");
    entry *e = &z->entries[z->n - 1];
    e->size = hfx_bulk_offset(z->bulk) - z->data_start;
    e->crc = hfx_bulk_crc(z->bulk);
    z->data_start = 0;
    if (e->size >= 0xFFFFFFFFu)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "zip: entry '%s' is %llu bytes; entries of 4 GiB or more are "
                                                  "not written yet", e->name, (unsigned long long)e->size);
    hfx_buf b = {0};
    le32(&b, 0x08074b50);
    le32(&b, e->crc);
    le32(&b, (uint32_t)e->size);
    le32(&b, (uint32_t)e->size);
    return put(z, &b, err);
}

hfx_status hfx_zip_add(hfx_zip *z, const char *name, const void *data, size_t n, hfx_error *err) {
    hfx_status st = hfx_zip_begin(z, name, err);
    if (!st && n) st = hfx_bulk_stream(z->bulk, NULL, data, n, err);
    return st ? st : hfx_zip_end(z, err);
}

/* The central directory, the zip64 end record and locator, and the end record. */
static hfx_status directory(hfx_zip *z, hfx_error *err) {
    uint64_t start = hfx_bulk_offset(z->bulk);
    hfx_buf b = {0};
    for (size_t i = 0; i < z->n; i++) {
        const entry *e = &z->entries[i];
        size_t n = strlen(e->name);
        bool far = e->offset >= 0xFFFFFFFFu;
        le32(&b, 0x02014b50);
        le16(&b, 0), le16(&b, 0); /* version made by, needed */
        le16(&b, FLAGS);
        le16(&b, 0);
        le16(&b, 0), le16(&b, 0);
        le32(&b, e->crc);
        le32(&b, (uint32_t)e->size);
        le32(&b, (uint32_t)e->size);
        le16(&b, (uint32_t)n);
        le16(&b, far ? 12 : 0); /* zip64 extra: the offset */
        le16(&b, 0), le16(&b, 0), le16(&b, 0); /* comment, disk, internal attributes */
        le32(&b, 0);                           /* external attributes */
        le32(&b, far ? 0xFFFFFFFFu : (uint32_t)e->offset);
        hfx_buf_append(&b, e->name, n);
        if (far) {
            le16(&b, 0x0001), le16(&b, 8);
            le64(&b, e->offset);
        }
    }
    uint64_t end = start + b.len;
    le32(&b, 0x06064b50);   /* zip64 end of central directory */
    le64(&b, 44);           /* the rest of this record */
    le16(&b, 45), le16(&b, 45);
    le32(&b, 0), le32(&b, 0);
    le64(&b, z->n), le64(&b, z->n);
    le64(&b, end - start);
    le64(&b, start);
    le32(&b, 0x07064b50);   /* its locator */
    le32(&b, 0);
    le64(&b, end);
    le32(&b, 1);
    le32(&b, 0x06054b50);   /* end of central directory */
    le16(&b, 0), le16(&b, 0);
    le16(&b, z->n >= 0xFFFF ? 0xFFFF : (uint32_t)z->n);
    le16(&b, z->n >= 0xFFFF ? 0xFFFF : (uint32_t)z->n);
    le32(&b, end - start >= 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)(end - start));
    le32(&b, start >= 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)start);
    le16(&b, 0);
    return put(z, &b, err);
}

hfx_status hfx_zip_close(hfx_zip *z, hfx_status failed, const char *name, hfx_error *err) {
    hfx_status st = failed;
    if (!st && z->data_start) st = hfx_fail(err, HFX_ERR_INTERNAL, "zip: entry '%s' not ended", z->entries[z->n - 1].name);
    if (!st) st = directory(z, err);
    hfx_status cst = hfx_bulk_close(z->bulk, name, st ? NULL : err); /* keep the first reason */
    for (size_t i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    free(z);
    return st ? st : cst;
}
