#include "hf/gguf.h"

#include <stdlib.h>
#include <string.h>

#include "base/blocks.h"
#include "base/status.h"

enum {
    MAX_KEY = 65535,        /* bytes in a key (the format allows more; no writer does) */
    MAX_NAME = 4096,        /* bytes in a tensor name (ggml's own limit is 64) */
    DEFAULT_ALIGNMENT = 32, /* the data section's alignment when general.alignment is absent */
};

/* A reading position in the file: every read checks the bytes left first. */
typedef struct cursor {
    const uint8_t *b;
    size_t len, pos;
    const char *path;
    hfx_error *err;
} cursor;

static hfx_status truncated(cursor *c, const char *what) {
    return hfx_fail(c->err, HFX_ERR_INVALID, "%s: truncated at byte %zu (reading %s; the file has %zu bytes)", c->path,
                    c->pos, what, c->len);
}

static hfx_status take(cursor *c, size_t n, const char *what, const uint8_t **at) {
    *at = c->b; /* (unread on failure) */
    if (n > c->len - c->pos) return truncated(c, what);
    *at = c->b + c->pos;
    c->pos += n;
    return HFX_OK;
}

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static hfx_status u32(cursor *c, const char *what, uint32_t *v) {
    const uint8_t *p;
    hfx_status st = take(c, 4, what, &p);
    if (!st) *v = (uint32_t)le(p, 4);
    return st;
}

static hfx_status u64(cursor *c, const char *what, uint64_t *v) {
    const uint8_t *p;
    hfx_status st = take(c, 8, what, &p);
    if (!st) *v = le(p, 8);
    return st;
}

/* a string (u64 length, bytes): its bytes at *s */
static hfx_status string(cursor *c, const char *what, uint64_t max, const uint8_t **s, uint64_t *n) {
    size_t at = c->pos;
    hfx_status st = u64(c, what, n);
    if (st) return st;
    if (*n > max)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: %s at byte %zu is %llu bytes long (at most %llu)", c->path, what,
                        at, (unsigned long long)*n, (unsigned long long)max);
    return take(c, (size_t)*n, what, s);
}

static size_t scalar_size(uint32_t type) {
    static const size_t size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type <= HFX_GGUF_F64 ? size[type] : 0;
}

/* one value of `type` (not an array); key names it in messages */
static hfx_status skip_value(cursor *c, uint32_t type, const char *key) {
    const uint8_t *p;
    uint64_t n;
    if (type == HFX_GGUF_STRING) return string(c, key, UINT64_MAX, &p, &n);
    size_t size = scalar_size(type);
    if (!size)
        return hfx_fail(c->err, HFX_ERR_UNSUPPORTED, "%s: key '%s' at byte %zu has value type %u, which GGUF does not "
                                                     "define", c->path, key, c->pos, type);
    hfx_status st = take(c, size, key, &p);
    if (!st && type == HFX_GGUF_BOOL && *p > 1)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: key '%s': a bool of value %u at byte %zu", c->path, key, *p,
                        c->pos - 1);
    return st;
}

/* a string that names something (`what`: "a key", "a tensor name"), copied into the arena NUL-terminated; one
 * holding a NUL byte is refused (the name would read shorter than it is) */
static hfx_status name_string(cursor *c, hfx_arena *arena, const char *what, uint64_t max, const char **out) {
    size_t at = c->pos;
    const uint8_t *s = NULL;
    uint64_t n = 0;
    hfx_status st = string(c, what, max, &s, &n);
    if (st) return st;
    char *name = hfx_arena_alloc(arena, (size_t)n + 1);
    if (!name) return hfx_fail(c->err, HFX_ERR_NOMEM, "out of memory");
    memcpy(name, s, (size_t)n);
    name[n] = 0;
    if (strlen(name) != n)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: %s at byte %zu holds a NUL byte", c->path, what, at);
    *out = name;
    return HFX_OK;
}

static hfx_status read_kv(cursor *c, hfx_arena *arena, hfx_gguf_kv *kv) {
    kv->offset = c->pos;
    uint32_t type;
    hfx_status st = name_string(c, arena, "a key", MAX_KEY, &kv->key);
    if (st) return st;
    const char *key = kv->key;
    if ((st = u32(c, key, &type))) return st;
    kv->type = (hfx_gguf_type)type;
    kv->value = c->b + c->pos;
    kv->count = 1;
    if (type != HFX_GGUF_ARRAY) return skip_value(c, type, key);
    uint32_t item;
    if ((st = u32(c, key, &item)) || (st = u64(c, key, &kv->count))) return st;
    kv->item_type = (hfx_gguf_type)item;
    kv->value = c->b + c->pos;
    if (item == HFX_GGUF_ARRAY)
        return hfx_fail(c->err, HFX_ERR_UNSUPPORTED, "%s: key '%s' is an array of arrays, which hfx does not read",
                        c->path, key);
    size_t size = scalar_size(item);
    if (size) { /* scalars: one bounds check for all */
        if (kv->count > (c->len - c->pos) / size) return truncated(c, key);
        c->pos += (size_t)kv->count * size;
        for (uint64_t i = 0; item == HFX_GGUF_BOOL && i < kv->count; i++)
            if (kv->value[i] > 1)
                return hfx_fail(c->err, HFX_ERR_INVALID, "%s: key '%s': item %llu is a bool of value %u", c->path,
                                key, (unsigned long long)i, kv->value[i]);
        return HFX_OK;
    }
    if (item != HFX_GGUF_STRING) return skip_value(c, item, key); /* (an unknown type: its refusal) */
    if (kv->count > (c->len - c->pos) / 8) return truncated(c, key); /* each string is at least its length */
    for (uint64_t i = 0; i < kv->count; i++)
        if ((st = skip_value(c, HFX_GGUF_STRING, key))) return st;
    return HFX_OK;
}

static hfx_status read_tensor(cursor *c, hfx_arena *arena, hfx_gguf_tensor *t, uint64_t *offset) {
    uint32_t dims, type;
    hfx_status st = name_string(c, arena, "a tensor name", MAX_NAME, &t->name);
    if (st) return st;
    const char *name = t->name;
    if ((st = u32(c, name, &dims))) return st;
    if (dims < 1 || dims > HFX_GGUF_MAX_DIMS)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s' has %u dimensions (1 to %d)", c->path, name, dims,
                        HFX_GGUF_MAX_DIMS);
    t->n_dims = (int)dims;
    for (uint32_t d = 0; d < dims; d++) {
        if ((st = u64(c, name, &t->ne[d]))) return st;
        if (t->ne[d] > (uint64_t)INT64_MAX)
            return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': dimension %u is %llu", c->path, name, d,
                            (unsigned long long)t->ne[d]);
    }
    if ((st = u32(c, name, &type)) || (st = u64(c, name, offset))) return st;
    t->ggml_type = type;
    uint32_t block, bytes;
    if (!hfx_ggml_type_size(type, &block, &bytes))
        return hfx_fail(c->err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has ggml type %u, which hfx does not know",
                        c->path, name, type);
    if (t->ne[0] % block)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': rows of %llu elements are not whole %s blocks of %u",
                        c->path, name, (unsigned long long)t->ne[0], hfx_ggml_type_name(type), block);
    uint64_t total = t->ne[0] / block * bytes; /* a row's bytes (ne[0]/block·bytes ≤ ne[0]·bytes: no overflow) */
    if (t->ne[0] && total / bytes != t->ne[0] / block) total = UINT64_MAX;
    for (int d = 1; d < t->n_dims; d++)
        total = t->ne[d] && total > UINT64_MAX / t->ne[d] ? UINT64_MAX : total * t->ne[d];
    if (total == UINT64_MAX)
        return hfx_fail(c->err, HFX_ERR_INVALID, "%s: tensor '%s': its size overflows", c->path, name);
    t->nbytes = total;
    return HFX_OK;
}

static int by_offset(const void *a, const void *b) {
    const hfx_gguf_tensor *x = *(const hfx_gguf_tensor *const *)a, *y = *(const hfx_gguf_tensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the first name of names[0..n) that is there twice, or NULL (names reordered) */
static const char *twice(const char **names, size_t n) {
    if (n > 1) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(names[i - 1], names[i])) return names[i];
    return NULL;
}

static hfx_status check_unique(const hfx_gguf *f, hfx_error *err) {
    size_t n = f->n_kv > f->n_tensors ? f->n_kv : f->n_tensors;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < f->n_kv; i++) names[i] = f->kv[i].key;
    const char *dup = twice(names, f->n_kv);
    hfx_status st = HFX_OK;
    if (dup) st = hfx_fail(err, HFX_ERR_INVALID, "%s: key '%s' is there twice", f->path, dup);
    for (size_t i = 0; !st && i < f->n_tensors; i++) names[i] = f->tensors[i].name;
    if (!st && (dup = twice(names, f->n_tensors)))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' is there twice", f->path, dup);
    free(names);
    return st;
}

/* The data section's alignment: general.alignment, a u32 power of two, else 32. */
static hfx_status alignment(const hfx_gguf *f, uint64_t *align, hfx_error *err) {
    const hfx_gguf_kv *kv = hfx_gguf_find(f, "general.alignment");
    *align = DEFAULT_ALIGNMENT;
    if (!kv) return HFX_OK;
    if (kv->type != HFX_GGUF_U32)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: general.alignment is not a u32", f->path);
    *align = le(kv->value, 4);
    if (*align == 0 || (*align & (*align - 1)) || *align > 1u << 20)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: general.alignment is %llu, not a power of two up to 2^20", f->path,
                        (unsigned long long)*align);
    return HFX_OK;
}

/* Place each tensor in the data section that starts at `start`: aligned, inside the file, none overlapping. */
static hfx_status place(hfx_gguf *f, const uint8_t *bytes, size_t len, size_t start, uint64_t align,
                        const uint64_t *offsets, hfx_error *err) {
    for (size_t i = 0; i < f->n_tensors; i++) {
        hfx_gguf_tensor *t = &f->tensors[i];
        uint64_t data = len - start;
        if (offsets[i] % align)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: tensor '%s': offset %llu is not a multiple of the alignment %llu", f->path, t->name,
                            (unsigned long long)offsets[i], (unsigned long long)align);
        if (offsets[i] > data || t->nbytes > data - offsets[i])
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s': bytes [%llu, +%llu) of the data section at byte "
                                                  "%zu pass the end of the file (%zu bytes)",
                            f->path, t->name, (unsigned long long)offsets[i], (unsigned long long)t->nbytes, start,
                            len);
        t->data = bytes + start + offsets[i];
        t->file_offset = start + offsets[i];
    }
    const hfx_gguf_tensor **order = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *order);
    if (!order) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < f->n_tensors; i++) order[i] = &f->tensors[i];
    if (f->n_tensors > 1) qsort(order, f->n_tensors, sizeof *order, by_offset);
    hfx_status st = HFX_OK;
    for (size_t i = 1; !st && i < f->n_tensors; i++)
        if (order[i - 1]->data + order[i - 1]->nbytes > order[i]->data)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: tensors '%s' and '%s' overlap at byte %llu", f->path,
                          order[i - 1]->name, order[i]->name, (unsigned long long)order[i]->file_offset);
    free(order);
    return st;
}

bool hfx_gguf_is(const uint8_t *bytes, size_t len) { return len >= 4 && memcmp(bytes, "GGUF", 4) == 0; }

hfx_status hfx_gguf_parse(const uint8_t *bytes, size_t len, const char *path, hfx_arena *arena, hfx_gguf *out,
                          hfx_error *err) {
    memset(out, 0, sizeof *out);
    out->path = path;
    cursor c = {.b = bytes, .len = bytes ? len : 0, .path = path, .err = err};
    const uint8_t *magic;
    uint64_t n_tensors, n_kv;
    hfx_status st = take(&c, 4, "the magic", &magic);
    if (st) return st;
    if (memcmp(magic, "GGUF", 4))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: not a GGUF file (it does not start with \"GGUF\")", path);
    if ((st = u32(&c, "the version", &out->version))) return st;
    if (out->version != 2 && out->version != 3)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: GGUF version %u%s; hfx reads versions 2 and 3", path,
                        out->version, out->version > 0xFFFF ? " (a big-endian file?)" : "");
    if ((st = u64(&c, "the tensor count", &n_tensors)) || (st = u64(&c, "the key-value count", &n_kv))) return st;
    /* each pair takes at least 12 bytes, each tensor info 28: counts beyond what the file can hold are lies */
    if (n_kv > (c.len - c.pos) / 12 || n_tensors > (c.len - c.pos) / 28)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %llu key-value pairs and %llu tensors cannot fit in %zu bytes",
                        path, (unsigned long long)n_kv, (unsigned long long)n_tensors, len);
    out->kv = hfx_arena_alloc(arena, (size_t)(n_kv ? n_kv : 1) * sizeof *out->kv);
    out->tensors = hfx_arena_alloc(arena, (size_t)(n_tensors ? n_tensors : 1) * sizeof *out->tensors);
    uint64_t *offsets = malloc((size_t)(n_tensors ? n_tensors : 1) * sizeof *offsets);
    if (!out->kv || !out->tensors || !offsets) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; !st && i < n_kv; i++, out->n_kv++) st = read_kv(&c, arena, &out->kv[i]);
    for (uint64_t i = 0; !st && i < n_tensors; i++, out->n_tensors++)
        st = read_tensor(&c, arena, &out->tensors[i], &offsets[i]);
    uint64_t align = DEFAULT_ALIGNMENT;
    if (!st) st = check_unique(out, err);
    if (!st) st = alignment(out, &align, err);
    if (!st) {
        uint64_t start = (c.pos + align - 1) / align * align;
        if (n_tensors && start > c.len)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: the data section would start at byte %llu, past the end (%zu)",
                          path, (unsigned long long)start, len);
        else st = place(out, bytes, c.len, (size_t)(start < c.len ? start : c.len), align, offsets, err);
    }
    free(offsets);
    return st;
}

const hfx_gguf_kv *hfx_gguf_find(const hfx_gguf *f, const char *key) {
    for (size_t i = 0; i < f->n_kv; i++)
        if (!strcmp(f->kv[i].key, key)) return &f->kv[i];
    return NULL;
}

bool hfx_gguf_number(const hfx_gguf_kv *kv, uint64_t i, double *out) {
    hfx_gguf_type type = kv->type == HFX_GGUF_ARRAY ? kv->item_type : kv->type;
    size_t size = scalar_size(type);
    if (!size || i >= kv->count) return false;
    uint64_t v = le(kv->value + i * size, (int)size);
    switch (type) {
    case HFX_GGUF_I8: *out = (int8_t)v; break;
    case HFX_GGUF_I16: *out = (int16_t)v; break;
    case HFX_GGUF_I32: *out = (int32_t)v; break;
    case HFX_GGUF_I64: *out = (double)(int64_t)v; break;
    case HFX_GGUF_F32: {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, 4);
        *out = f;
        break;
    }
    case HFX_GGUF_F64: memcpy(out, &v, 8); break;
    default: *out = (double)v; break; /* unsigned and bool */
    }
    return true;
}

bool hfx_gguf_next_string(const hfx_gguf_kv *kv, uint64_t *at, const char **s, uint64_t *len) {
    if (kv->type != HFX_GGUF_STRING && !(kv->type == HFX_GGUF_ARRAY && kv->item_type == HFX_GGUF_STRING)) return false;
    /* (the parser walked these bytes: every length fits) */
    *len = le(kv->value + *at, 8);
    *s = (const char *)kv->value + *at + 8;
    *at += 8 + *len;
    return true;
}

bool hfx_gguf_text_is(const hfx_gguf_kv *kv, const char *want) {
    const char *s;
    uint64_t n;
    return kv && kv->type == HFX_GGUF_STRING && hfx_gguf_string(kv, 0, &s, &n) && n == strlen(want) &&
           !memcmp(s, want, n);
}

bool hfx_gguf_string(const hfx_gguf_kv *kv, uint64_t i, const char **s, uint64_t *len) {
    if (i >= kv->count) return false;
    uint64_t at = 0;
    for (uint64_t k = 0; k <= i; k++)
        if (!hfx_gguf_next_string(kv, &at, s, len)) return false;
    return true;
}
