/* The torch.save writer (pickle.h). The pickle is what torch.save's own pickler emits for these
 * values (protocol 2; tensors as torch._utils._rebuild_tensor_v2 over a persistent-id storage
 * tuple); the archive is torch.save's zip layout (data.pkl, the storages as data/<key>, version
 * records), written through a scratch file so a big sample (a static cache) never sits in
 * memory. */
#include "fmt/dynamo/pickle.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/zip.h"

enum { CHUNK = 1 << 20 };

void hfx_pickle_begin(hfx_pickle *pk) {
    memset(pk, 0, sizeof *pk);
    hfx_buf_append(&pk->code, "\x80\x02", 2);
}

void hfx_pickle_op(hfx_pickle *pk, const char *ops) { hfx_buf_puts(&pk->code, ops); }

void hfx_pickle_global(hfx_pickle *pk, const char *module, const char *name) {
    hfx_buf_printf(&pk->code, "c%s\n%s\n", module, name);
}

void hfx_pickle_text(hfx_pickle *pk, const char *s) { /* BINUNICODE: a 4-byte length, UTF-8 */
    uint32_t n = (uint32_t)strlen(s);
    uint8_t h[5] = {'X', (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    hfx_buf_append(&pk->code, h, 5);
    hfx_buf_append(&pk->code, s, n);
}

void hfx_pickle_int(hfx_pickle *pk, int64_t v) {
    uint64_t u = (uint64_t)v;
    if (v >= INT32_MIN && v <= INT32_MAX) { /* BININT: 4 bytes, signed */
        uint8_t h[5] = {'J', (uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        hfx_buf_append(&pk->code, h, 5);
        return;
    }
    uint8_t h[10] = {0x8a, 8}; /* LONG1: 8 bytes, two's complement, little-endian */
    for (int i = 0; i < 8; i++) h[2 + i] = (uint8_t)(u >> (8 * i));
    hfx_buf_append(&pk->code, h, 10);
}

void hfx_pickle_bool(hfx_pickle *pk, bool v) { hfx_pickle_op(pk, v ? HFX_PK_TRUE : HFX_PK_FALSE); }

void hfx_pickle_cpu(hfx_pickle *pk) {
    hfx_pickle_global(pk, "torch", "device");
    hfx_pickle_text(pk, "cpu");
    hfx_pickle_op(pk, HFX_PK_TUPLE1 HFX_PK_REDUCE);
}

static const char *storage_class(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_I64: return "LongStorage";
    case HFX_DTYPE_I32: return "IntStorage";
    case HFX_DTYPE_F32: return "FloatStorage";
    case HFX_DTYPE_F16: return "HalfStorage";
    case HFX_DTYPE_BF16: return "BFloat16Storage";
    case HFX_DTYPE_BOOL: return "BoolStorage";
    default: return NULL;
    }
}

void hfx_pickle_tensor(hfx_pickle *pk, hfx_dtype dtype, int rank, const int64_t *sizes) {
    const char *storage = storage_class(dtype);
    if (!storage) {
        pk->unsupported = true;
        return;
    }
    int64_t numel = 1, strides[HFX_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) strides[d] = numel, numel *= sizes[d];
    char key[24];
    snprintf(key, sizeof key, "%zu", pk->storages.len / sizeof(uint64_t));
    uint64_t bytes = (uint64_t)numel * hfx_dtype_size(dtype);
    hfx_buf_append(&pk->storages, &bytes, sizeof bytes);
    hfx_pickle_global(pk, "torch._utils", "_rebuild_tensor_v2");
    hfx_pickle_op(pk, HFX_PK_MARK HFX_PK_MARK);
    hfx_pickle_text(pk, "storage");
    hfx_pickle_global(pk, "torch", storage);
    hfx_pickle_text(pk, key);
    hfx_pickle_text(pk, "cpu");
    hfx_pickle_int(pk, numel);
    hfx_pickle_op(pk, HFX_PK_TUPLE "Q"); /* the storage tuple, as a persistent id */
    hfx_pickle_int(pk, 0);               /* storage offset */
    hfx_pickle_op(pk, HFX_PK_MARK);
    for (int d = 0; d < rank; d++) hfx_pickle_int(pk, sizes[d]);
    hfx_pickle_op(pk, HFX_PK_TUPLE HFX_PK_MARK);
    for (int d = 0; d < rank; d++) hfx_pickle_int(pk, strides[d]);
    hfx_pickle_op(pk, HFX_PK_TUPLE HFX_PK_FALSE); /* requires_grad */
    hfx_pickle_global(pk, "collections", "OrderedDict");
    hfx_pickle_op(pk, HFX_PK_EMPTY_TUPLE HFX_PK_REDUCE HFX_PK_TUPLE HFX_PK_REDUCE); /* backward hooks; the call */
}

/* The archive into f: data.pkl, the version records, each storage zero-filled. */
static hfx_status archive(const hfx_pickle *pk, hfx_outdir *out, FILE *f, hfx_error *err) {
    hfx_zip *z = NULL;
    hfx_status st = hfx_zip_open(out, f, CHUNK, &z, err);
    if (!st) st = hfx_zip_add(z, "archive/data.pkl", pk->code.data, pk->code.len, err);
    static const char *const records[][2] = {{"archive/.format_version", "1"}, {"archive/.storage_alignment", "64"},
                                             {"archive/byteorder", "little"}};
    for (size_t i = 0; !st && i < sizeof records / sizeof records[0]; i++)
        st = hfx_zip_add(z, records[i][0], records[i][1], strlen(records[i][1]), err);
    const uint64_t *bytes = (const uint64_t *)pk->storages.data;
    for (size_t k = 0; !st && k < pk->storages.len / sizeof *bytes; k++) {
        char name[48];
        snprintf(name, sizeof name, "archive/data/%zu", k);
        st = hfx_zip_begin(z, name, err);
        if (!st) hfx_bulk_pad_to(hfx_zip_bulk(z), hfx_bulk_offset(hfx_zip_bulk(z)) + bytes[k]); /* zeros */
        if (!st) st = hfx_zip_end(z, err);
    }
    if (!st) st = hfx_zip_add(z, "archive/version", "3\n", 2, err);
    if (!st) st = hfx_zip_add(z, "archive/.data/serialization_id", "0000000000000000000000000000000000000000", 40, err);
    return z ? hfx_zip_close(z, st, "sample inputs", err) : st;
}

hfx_status hfx_pickle_save(hfx_pickle *pk, hfx_outdir *out, const char *what, FILE **f, hfx_error *err) {
    *f = NULL;
    hfx_pickle_op(pk, ".");
    if (pk->code.oom || pk->storages.oom) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (pk->unsupported) return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: a sample input of a type torch.save cannot hold", what);
    hfx_status st = hfx_outdir_scratch(out, f, err);
    if (!st) st = archive(pk, out, *f, err);
    if (!st && (fflush(*f) != 0 || ferror(*f) || fseek(*f, 0, SEEK_SET) != 0))
        st = hfx_fail(err, HFX_ERR_IO, "%s: the sample inputs' scratch file failed", what);
    if (st && *f) {
        fclose(*f);
        *f = NULL;
    }
    return st;
}

void hfx_pickle_free(hfx_pickle *pk) {
    hfx_buf_free(&pk->code);
    hfx_buf_free(&pk->storages);
}
