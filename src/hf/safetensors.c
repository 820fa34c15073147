#include "hf/safetensors.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static const struct {
    const char *name;
    hfx_dtype dtype;
} dtype_names[] = {
    {"F64", HFX_DTYPE_F64}, {"F32", HFX_DTYPE_F32}, {"F16", HFX_DTYPE_F16},
    {"BF16", HFX_DTYPE_BF16}, {"I64", HFX_DTYPE_I64}, {"I32", HFX_DTYPE_I32},
    {"I16", HFX_DTYPE_I16}, {"I8", HFX_DTYPE_I8}, {"U8", HFX_DTYPE_U8},
    {"BOOL", HFX_DTYPE_BOOL}, {"F8_E4M3", HFX_DTYPE_F8E4M3}, {"F8_E5M2", HFX_DTYPE_F8E5M2},
    {"F8_E8M0", HFX_DTYPE_F8E8M0},
};

#define SUPPORTED_DTYPES "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2, F8_E8M0"

hfx_dtype hfx_safetensors_dtype_from_string(const char *s) {
    if (!s) return HFX_DTYPE_UNDEFINED;
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strcmp(s, dtype_names[i].name) == 0) return dtype_names[i].dtype;
    return HFX_DTYPE_UNDEFINED;
}

/* What every check needs to validate an entry and word its message. */
typedef struct parse_ctx {
    const char *path;       /* for messages (borrowed) */
    const uint8_t *bytes;   /* the whole image (borrowed) */
    uint64_t data_start;    /* file offset of the data section: 8 + N */
    uint64_t data_size;     /* len - data_start */
    hfx_error *err;
} parse_ctx;

/* Read the 8-byte header length and check that the header fits the limit and the file. */
static hfx_status read_prefix(const uint8_t *bytes, size_t len, const char *path, uint64_t *n,
                              hfx_error *err) {
    if (len < 8)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: file is %zu bytes, shorter than the 8-byte header length", path, len);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | bytes[i]; /* little-endian on every host */
    if (v > HFX_SAFETENSORS_MAX_HEADER)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: header length %" PRIu64 " (file offset 0) exceeds the %u-byte limit",
                        path, v, HFX_SAFETENSORS_MAX_HEADER);
    if (v > (uint64_t)len - 8)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: header length %" PRIu64 " runs past the end of the file "
                        "(header ends at file offset %" PRIu64 ", file is %zu bytes)",
                        path, v, v + 8, len);
    *n = v;
    return HFX_OK;
}

/* Decode the header; JSON_DECODE_ANY so that a scalar header gets the "not an object" message. */
static hfx_status load_header(const parse_ctx *c, json_t **root) {
    json_error_t je;
    *root = json_loadb((const char *)c->bytes + 8, c->data_start - 8,
                       JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!*root && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(c->err, HFX_ERR_NOMEM, "out of memory");
    if (!*root) {
        /* jansson does not say which key repeats: take the last string before the position */
        char key[256] = "";
        const char *h = (const char *)c->bytes + 8;
        size_t end = (size_t)je.position < c->data_start - 8 ? (size_t)je.position : c->data_start - 8;
        if (strstr(je.text, "duplicate")) {
            size_t close = end;
            while (close > 0 && h[close - 1] != '"') close--;
            size_t open = close > 0 ? close - 1 : 0;
            while (open > 0 && h[open - 1] != '"') open--;
            if (close > open + 1 && close - open - 1 < sizeof key)
                snprintf(key, sizeof key, " '%.*s'", (int)(close - 1 - open), h + open);
        }
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: malformed header JSON at line %d, column %d (file offset %" PRIu64
                        "): %s%s",
                        c->path, je.line, je.column, (uint64_t)8 + (uint64_t)je.position, je.text, key);
    }
    if (!json_is_object(*root))
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: header (file offsets 8..%" PRIu64 ") is not a JSON object", c->path,
                        c->data_start);
    return HFX_OK;
}

static hfx_status check_metadata(const parse_ctx *c, json_t *meta) {
    if (!json_is_object(meta))
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: \"__metadata__\" is not a JSON object",
                        c->path);
    const char *key;
    json_t *v;
    json_object_foreach(meta, key, v) {
        if (!json_is_string(v))
            return hfx_fail(c->err, HFX_ERR_INVALID,
                            "%s: \"__metadata__\" entry '%s' is not a string", c->path, key);
    }
    return HFX_OK;
}

/* An entry is an object with exactly the keys dtype, shape and data_offsets. */
static hfx_status check_keys(const parse_ctx *c, const char *name, json_t *entry) {
    if (!json_is_object(entry))
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': entry is not a JSON object",
                        c->path, name);
    static const char *const required[] = {"dtype", "shape", "data_offsets"};
    for (size_t i = 0; i < 3; i++)
        if (!json_object_get(entry, required[i]))
            return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': missing \"%s\"", c->path,
                            name, required[i]);
    if (json_object_size(entry) != 3) {
        const char *key;
        json_t *v;
        json_object_foreach(entry, key, v) {
            if (strcmp(key, "dtype") != 0 && strcmp(key, "shape") != 0 &&
                strcmp(key, "data_offsets") != 0)
                return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': unexpected key \"%s\"",
                                c->path, name, key);
        }
    }
    return HFX_OK;
}

static hfx_status parse_dtype(const parse_ctx *c, const char *name, json_t *v, hfx_dtype *out) {
    if (!json_is_string(v))
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': \"dtype\" is not a string",
                        c->path, name);
    *out = hfx_safetensors_dtype_from_string(json_string_value(v));
    if (*out == HFX_DTYPE_UNDEFINED)
        return hfx_fail(c->err, HFX_ERR_UNSUPPORTED,
                        "%s: tensor '%s': dtype '%s' is not supported (supported: %s)", c->path,
                        name, json_string_value(v), SUPPORTED_DTYPES);
    return HFX_OK;
}

static hfx_status parse_shape(const parse_ctx *c, const char *name, json_t *v,
                              hfx_tensor_info *t) {
    if (!json_is_array(v))
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': \"shape\" is not an array",
                        c->path, name);
    size_t rank = json_array_size(v);
    if (rank > HFX_MAX_RANK)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': rank %zu exceeds the limit %d",
                        c->path, name, rank, HFX_MAX_RANK);
    for (size_t i = 0; i < rank; i++) {
        json_t *d = json_array_get(v, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return hfx_fail(c->err, HFX_ERR_INVALID,
                            "%s: tensor '%s': shape[%zu] is not a non-negative integer", c->path,
                            name, i);
        t->shape[i] = (int64_t)json_integer_value(d);
    }
    t->rank = (int)rank;
    return HFX_OK;
}

/* Bytes the dtype and shape need. The product of the non-zero dims times the element size must
 * fit in int64, so that callers may multiply any subset of dims without overflow checks. */
static hfx_status shape_nbytes(const parse_ctx *c, const char *name, const hfx_tensor_info *t,
                               uint64_t *out) {
    uint64_t n = hfx_dtype_size(t->dtype);
    int empty = 0;
    for (int i = 0; i < t->rank; i++) {
        uint64_t d = (uint64_t)t->shape[i];
        if (d == 0) {
            empty = 1;
            continue;
        }
        if (n > (uint64_t)INT64_MAX / d)
            return hfx_fail(c->err, HFX_ERR_INVALID,
                            "%s: tensor '%s': byte size of the shape overflows int64 at shape[%d]",
                            c->path, name, i);
        n *= d;
    }
    *out = empty ? 0 : n;
    return HFX_OK;
}

static hfx_status parse_offsets(const parse_ctx *c, const char *name, json_t *v, uint64_t *begin,
                                uint64_t *end) {
    json_t *b = json_array_get(v, 0), *e = json_array_get(v, 1);
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_integer(b) ||
        !json_is_integer(e) || json_integer_value(b) < 0 || json_integer_value(e) < 0)
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: tensor '%s': \"data_offsets\" is not two non-negative integers",
                        c->path, name);
    *begin = (uint64_t)json_integer_value(b);
    *end = (uint64_t)json_integer_value(e);
    if (*begin > *end)
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                        "] begin after end (data section at file offset %" PRIu64 ")",
                        c->path, name, *begin, *end, c->data_start);
    if (*end > c->data_size)
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                        "] end past the data section (%" PRIu64 " bytes, file offset %" PRIu64 ")",
                        c->path, name, *begin, *end, c->data_size, c->data_start);
    return HFX_OK;
}

/* Validate one header entry and fill *t, except `name` and `file`. */
static hfx_status parse_entry(const parse_ctx *c, const char *name, json_t *entry,
                              hfx_tensor_info *t) {
    hfx_status st = check_keys(c, name, entry);
    if (!st) st = parse_dtype(c, name, json_object_get(entry, "dtype"), &t->dtype);
    if (!st) st = parse_shape(c, name, json_object_get(entry, "shape"), t);
    uint64_t begin = 0, end = 0, need = 0;
    if (!st) st = parse_offsets(c, name, json_object_get(entry, "data_offsets"), &begin, &end);
    if (!st) st = shape_nbytes(c, name, t, &need);
    if (st) return st;
    if (end - begin != need)
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                        " bytes but dtype %s and the shape need %" PRIu64 " (file offset %" PRIu64
                        ")",
                        c->path, name, begin, end, end - begin,
                        json_string_value(json_object_get(entry, "dtype")), need,
                        c->data_start + begin);
    t->nbytes = need;
    t->file_offset = c->data_start + begin;
    t->data = c->bytes + t->file_offset;
    return HFX_OK;
}

static int by_offset(const void *pa, const void *pb) {
    const hfx_tensor_info *a = *(const hfx_tensor_info *const *)pa;
    const hfx_tensor_info *b = *(const hfx_tensor_info *const *)pb;
    if (a->file_offset != b->file_offset) return a->file_offset < b->file_offset ? -1 : 1;
    if (a->nbytes != b->nbytes) return a->nbytes < b->nbytes ? -1 : 1;
    return 0;
}

/* Walk the tensors in offset order: each must start exactly where the data covered so far ends,
 * and the last must end at the end of the file. `order` is n scratch pointers. */
static hfx_status check_layout(const parse_ctx *c, hfx_tensor_info *tensors, size_t n,
                               const hfx_tensor_info **order) {
    for (size_t i = 0; i < n; i++) order[i] = &tensors[i];
    if (n) qsort(order, n, sizeof *order, by_offset);
    uint64_t cursor = c->data_start; /* absolute offset up to which the data is covered */
    const hfx_tensor_info *prev = NULL; /* the non-empty tensor that ends at `cursor` */
    for (size_t i = 0; i < n; i++) {
        const hfx_tensor_info *t = order[i];
        uint64_t b = t->file_offset - c->data_start;
        if (t->file_offset < cursor)
            return hfx_fail(c->err, HFX_ERR_INVALID,
                            "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                            "] overlap tensor '%s' (file offsets %" PRIu64 "..%" PRIu64 ")",
                            c->path, t->name, b, b + t->nbytes, prev->name, t->file_offset,
                            cursor);
        if (t->file_offset > cursor)
            return hfx_fail(c->err, HFX_ERR_INVALID,
                            "%s: tensor '%s': hole in the data section before data_offsets"
                            " [%" PRIu64 ", %" PRIu64 "] (file offsets %" PRIu64 "..%" PRIu64
                            " belong to no tensor)",
                            c->path, t->name, b, b + t->nbytes, cursor, t->file_offset);
        if (t->nbytes) prev = t;
        cursor += t->nbytes;
    }
    if (cursor != c->data_start + c->data_size)
        return hfx_fail(c->err, HFX_ERR_INVALID,
                        "%s: hole at the end of the data section (file offsets %" PRIu64
                        "..%" PRIu64 " belong to no tensor)",
                        c->path, cursor, c->data_start + c->data_size);
    return HFX_OK;
}

/* Parse every entry of the header object into the arena, then check the layout. */
static hfx_status parse_tensors(const parse_ctx *c, json_t *root, hfx_arena *arena,
                                hfx_safetensors *out) {
    json_t *meta = json_object_get(root, "__metadata__");
    hfx_status st = meta ? check_metadata(c, meta) : HFX_OK;
    if (st) return st;
    size_t n = json_object_size(root) - (meta ? 1 : 0);
    const char *file = hfx_arena_strdup(arena, c->path);
    hfx_tensor_info *tensors = n ? hfx_arena_alloc(arena, n * sizeof *tensors) : NULL;
    if (!file || (n && !tensors))
        return hfx_fail(c->err, HFX_ERR_NOMEM, "%s: out of memory", c->path);
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "__metadata__") == 0) continue;
        hfx_tensor_info *t = &tensors[i++];
        if ((st = parse_entry(c, key, v, t))) return st;
        t->file = file;
        if (!(t->name = hfx_arena_strdup(arena, key)))
            return hfx_fail(c->err, HFX_ERR_NOMEM, "%s: out of memory", c->path);
    }
    const hfx_tensor_info **order = n ? malloc(n * sizeof *order) : NULL;
    if (n && !order) return hfx_fail(c->err, HFX_ERR_NOMEM, "%s: out of memory", c->path);
    st = check_layout(c, tensors, n, order);
    free(order);
    if (st) return st;
    *out = (hfx_safetensors){.path = file, .n_tensors = n, .tensors = tensors};
    return HFX_OK;
}

hfx_status hfx_safetensors_parse(const uint8_t *bytes, size_t len, const char *path,
                                 hfx_arena *arena, hfx_safetensors *out, hfx_error *err) {
    if (!path) path = "<memory>";
    uint64_t n = 0;
    hfx_status st = read_prefix(bytes, len, path, &n, err);
    if (st) return st;
    parse_ctx c = {.path = path, .bytes = bytes, .data_start = 8 + n,
                   .data_size = (uint64_t)len - 8 - n, .err = err};
    json_t *root = NULL;
    st = load_header(&c, &root);
    if (!st) st = parse_tensors(&c, root, arena, out);
    json_decref(root);
    return st;
}
