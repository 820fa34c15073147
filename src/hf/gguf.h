/* One GGUF file (llama.cpp's format, versions 2 and 3, little-endian): "GGUF", a u32 version, the tensor and
 * key-value counts (u64), the key-value pairs (a string key, a u32 type, the value), the tensor infos (name, rank,
 * dims innermost first, ggml type, offset into the data section), then the data section at the next multiple of
 * `general.alignment` (32 when absent).
 *
 * hfx_gguf_parse validates everything before anything is used: every count, length and offset against the bytes
 * left (overflow checked), value types known, arrays of scalars or strings (not of arrays), keys unique, tensor
 * names unique, ranks ≤ 4, ggml types known, rows whole blocks, each tensor aligned and inside the data section,
 * no two overlapping. Errors name the file, the key or tensor and the byte offset. Values stay in the mapping:
 * nothing is copied but the names. */
#ifndef HFX_HF_GGUF_H
#define HFX_HF_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "hfx/hfx.h"

enum { HFX_GGUF_MAX_DIMS = 4 };

typedef enum hfx_gguf_type {
    HFX_GGUF_U8 = 0, HFX_GGUF_I8 = 1, HFX_GGUF_U16 = 2, HFX_GGUF_I16 = 3, HFX_GGUF_U32 = 4, HFX_GGUF_I32 = 5,
    HFX_GGUF_F32 = 6, HFX_GGUF_BOOL = 7, HFX_GGUF_STRING = 8, HFX_GGUF_ARRAY = 9, HFX_GGUF_U64 = 10,
    HFX_GGUF_I64 = 11, HFX_GGUF_F64 = 12,
} hfx_gguf_type;

typedef struct hfx_gguf_kv {
    const char *key;         /* arena, NUL-terminated */
    hfx_gguf_type type;
    hfx_gguf_type item_type; /* an array's */
    uint64_t count;          /* an array's items; 1 otherwise */
    const uint8_t *value;    /* the value's bytes in the file (a string's: its u64 length first) */
    uint64_t offset;         /* of the pair, for messages */
} hfx_gguf_kv;

typedef struct hfx_gguf_tensor {
    const char *name;        /* arena */
    uint32_t ggml_type;
    int n_dims;
    uint64_t ne[HFX_GGUF_MAX_DIMS]; /* innermost first, as ggml counts them */
    const uint8_t *data;     /* in the file */
    uint64_t nbytes;
    uint64_t file_offset;
} hfx_gguf_tensor;

typedef struct hfx_gguf {
    const char *path;
    uint32_t version;
    size_t n_kv, n_tensors;
    hfx_gguf_kv *kv;         /* arena, in file order */
    hfx_gguf_tensor *tensors;
} hfx_gguf;

/* Whether bytes[0..len) starts as a GGUF file does ("GGUF"). */
bool hfx_gguf_is(const uint8_t *bytes, size_t len);

/* Parse and validate the GGUF image bytes[0..len) read from `path` (for messages) into *out; names and arrays from
 * `arena`; values and tensors point into bytes. Never reads outside bytes. HFX_ERR_INVALID for malformed input,
 * HFX_ERR_UNSUPPORTED for a version, a value type or a ggml type hfx does not know (named), HFX_ERR_NOMEM. */
hfx_status hfx_gguf_parse(const uint8_t *bytes, size_t len, const char *path, hfx_arena *arena, hfx_gguf *out,
                          hfx_error *err);

/* The pair `key`, or NULL. */
const hfx_gguf_kv *hfx_gguf_find(const hfx_gguf *f, const char *key);

/* A numeric or boolean scalar as a double (an f32 widened exactly), or item i of such an array; false for any other
 * value or i out of range. */
bool hfx_gguf_number(const hfx_gguf_kv *kv, uint64_t i, double *out);

/* A string scalar, or item i of an array of strings, as (pointer into the file, length): not NUL-terminated; false
 * for any other value. Items are found by walking the array: O(i). */
bool hfx_gguf_string(const hfx_gguf_kv *kv, uint64_t i, const char **s, uint64_t *len);

/* Whether kv (NULL: false) is a string scalar equal to `want`. */
bool hfx_gguf_text_is(const hfx_gguf_kv *kv, const char *want);

/* Iterate an array of strings in order: *at starts at 0 and is advanced past each item. */
bool hfx_gguf_next_string(const hfx_gguf_kv *kv, uint64_t *at, const char **s, uint64_t *len);

#endif
