#include "hf/prequant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static const char SCALE_SUFFIX[] = "_scale_inv"; /* "X.weight_scale_inv" scales "X.weight" */

const char *hfx_prequant_methods(void) { return "fp8, mxfp4"; }

static int by_name(const void *key, const void *elem) {
    return strcmp(key, ((const hfx_tensor_info *)elem)->name);
}

static hfx_tensor_info *find(hfx_tensor_info *t, size_t n, const char *name) {
    return n ? bsearch(name, t, n, sizeof *t, by_name) : NULL;
}

static bool is_f8(hfx_dtype dt) { return dt == HFX_DTYPE_F8E4M3 || dt == HFX_DTYPE_F8E5M2; }

static const char *dtype_label(hfx_dtype dt) {
    return dt == HFX_DTYPE_F8E4M3 ? "F8_E4M3" : dt == HFX_DTYPE_F8E5M2 ? "F8_E5M2" : "FP4";
}

static size_t ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0 ? n - k : 0;
}

/* weight_block_size: [b0, b1] positive (*tile), or null / absent (tile[0] = 0: one scale for the tensor) */
static hfx_status block_size(const json_t *q, const char *where, int64_t tile[2], hfx_error *err) {
    const json_t *b = json_object_get(q, "weight_block_size");
    tile[0] = tile[1] = 0;
    if (!b || json_is_null(b)) return HFX_OK;
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_array_get(b, i);
        if (!json_is_array(b) || json_array_size(b) != 2 || !json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > (1 << 20))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: quantization_config.weight_block_size must be two positive "
                                                  "integers (rows, columns of a scale's tile) or null", where);
        tile[i] = json_integer_value(v);
    }
    return HFX_OK;
}

/* The tiles of a rows × cols matrix scaled by a grid of [sr, sc]: weight_block_size's (tile[0] > 0) when the grid is
 * its ⌈rows / b0⌉ × ⌈cols / b1⌉ (the author's, partial last tiles included), else the grid's even division of the
 * matrix (as transformers derives them); false when neither */
static bool tiles_of(int64_t rows, int64_t cols, int64_t sr, int64_t sc, const int64_t tile[2], int64_t out[2]) {
    if (tile[0] && sr == (rows + tile[0] - 1) / tile[0] && sc == (cols + tile[1] - 1) / tile[1]) {
        out[0] = tile[0], out[1] = tile[1];
        return true;
    }
    if (sr < 1 || sc < 1 || rows % sr || cols % sc) return false;
    out[0] = rows / sr, out[1] = cols / sc;
    return true;
}

static bool is_scale_dtype(hfx_dtype dt) {
    return dt == HFX_DTYPE_F32 || dt == HFX_DTYPE_F16 || dt == HFX_DTYPE_BF16 || dt == HFX_DTYPE_U8 ||
           dt == HFX_DTYPE_F8E8M0;
}

/* The grid of weight w (codes [..., rows, cols]; I8: FP4 codes two a byte, [..., rows, cols / 2], as DeepSeek V4's
 * experts: read as [..., rows, cols]) under scale s ([..., sr, sc], the same leading axes; or one scale), set as w's
 * decoding. */
static hfx_status fp8_grid(hfx_tensor_info *w, const hfx_tensor_info *s, const int64_t tile[2], hfx_arena *arena,
                           hfx_error *err) {
    if (w->rank < 2 || hfx_numel(w->rank, w->shape) == 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' (%s, scaled by '%s') has rank %d and %llu "
                        "elements; FP8 weights are matrices", w->file, w->name, dtype_label(w->dtype), s->name, w->rank,
                        (unsigned long long)hfx_numel(w->rank, w->shape));
    if (!is_scale_dtype(s->dtype))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; FP8 scales are F32, F16, BF16 or "
                        "E8M0 exponents (F8_E8M0, U8)", s->file, s->name, hfx_dtype_name(s->dtype));
    int r = w->rank;
    bool fp4 = w->dtype == HFX_DTYPE_I8;
    if (fp4) w->shape[r - 1] *= 2; /* (its codes' count, which the safetensors header bounded) */
    int64_t rows = w->shape[r - 2], cols = w->shape[r - 1], t[2] = {rows, cols}, grid[2] = {1, 1};
    bool one = hfx_numel(s->rank, s->shape) == 1, fits = one; /* one scale for the whole tensor */
    if (one) rows = t[0] = (int64_t)(hfx_numel(w->rank, w->shape) / (uint64_t)cols); /* (one matrix of all rows) */
    if (!one && s->rank == r) {
        fits = memcmp(s->shape, w->shape, (size_t)(r - 2) * sizeof *s->shape) == 0 &&
               tiles_of(rows, cols, s->shape[r - 2], s->shape[r - 1], tile, t);
        grid[0] = s->shape[r - 2], grid[1] = s->shape[r - 1];
    }
    if (!fits)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (rank %d) does not tile '%s' (%lld × %lld matrices%s): "
                        "want the weight's leading axes and a grid of %s", s->file, s->name, s->rank, w->name,
                        (long long)rows, (long long)cols, tile[0] ? " in weight_block_size's tiles" : "",
                        tile[0] ? "⌈rows / b0⌉ × ⌈columns / b1⌉ scales" : "scales dividing each matrix evenly");
    hfx_block_grid *g = hfx_arena_alloc(arena, sizeof *g);
    hfx_block_format *f = hfx_arena_alloc(arena, sizeof *f);
    if (!g || !f) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    *g = (hfx_block_grid){.codes = fp4 ? HFX_DTYPE_UNDEFINED : w->dtype, .scales = s->dtype, .scale_data = s->data,
                          .rows = (uint64_t)rows, .cols = (uint64_t)cols, .tile_rows = (uint64_t)t[0],
                          .tile_cols = (uint64_t)t[1], .grid_rows = (uint64_t)grid[0], .grid_cols = (uint64_t)grid[1]};
    *f = (hfx_block_format){.name = dtype_label(w->dtype), .block = fp4 ? 2 : 1, .bytes = 1, .grid = g};
    w->blocks = f;
    w->dtype = HFX_DTYPE_F32;
    return HFX_OK;
}

static hfx_status read_fp8(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                           bool *drop, hfx_error *err) {
    const char *scheme = json_string_value(json_object_get(q, "activation_scheme"));
    if (scheme && strcmp(scheme, "dynamic") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.activation_scheme '%s': hfx reads FP8 "
                        "weights with float activations (\"dynamic\", as transformers dequantizes them), not static "
                        "activation scales", where, scheme);
    int64_t tile[2];
    hfx_status st = block_size(q, where, tile, err);
    for (size_t i = 0; !st && i < n; i++) {
        size_t base = ends_with(t[i].name, SCALE_SUFFIX);
        if (!base) continue;
        char name[512];
        if (base >= sizeof name)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor name '%.64s...' is too long", t[i].file, t[i].name);
        memcpy(name, t[i].name, base);
        name[base] = '\0';
        hfx_tensor_info *w = find(t, n, name);
        if (!w || (!is_f8(w->dtype) && w->dtype != HFX_DTYPE_I8))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' scales '%s', which %s", t[i].file, t[i].name,
                            name, w ? "is not F8_E4M3, F8_E5M2 or I8 (FP4 codes)" : "the checkpoint does not hold");
        st = fp8_grid(w, &t[i], tile, arena, err);
        drop[i] = true;
    }
    return st;
}

/* MXFP4 (gpt-oss): "X_blocks" U8 [E, rows, groups, 16] (32 FP4 codes a group) and "X_scales" E8M0 [E, rows, groups]
 * become "X" [E, groups · 32, rows], as transformers' convert_moe_packed_tensors transposes them */
static hfx_status read_mxfp4(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                             bool *drop, hfx_error *err) {
    (void)q, (void)where;
    if (!n) return HFX_OK;
    const char **renamed = hfx_arena_alloc(arena, n * sizeof *renamed); /* (set after the loop: finds need the order) */
    if (!renamed) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        renamed[i] = NULL;
        size_t base = ends_with(t[i].name, "_blocks");
        if (!base) continue;
        hfx_tensor_info *b = &t[i];
        char *name = hfx_arena_printf(arena, "%.*s", (int)base, b->name);
        char *scales = hfx_arena_printf(arena, "%s_scales", name ? name : "");
        if (!name || !scales) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        hfx_tensor_info *s = find(t, n, scales);
        if (find(t, n, name))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensors '%s' and '%s' both hold '%s'", b->file, name, b->name,
                            name);
        if (!s || b->dtype != HFX_DTYPE_U8 || b->rank != 4 || b->shape[3] != 16 || b->shape[2] < 1 ||
            b->shape[1] < 1 || b->shape[0] < 1)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) is not MXFP4 blocks beside its "
                            "scales '%s': want U8 [experts, rows, groups, 16] and [experts, rows, groups]%s", b->file,
                            b->name, hfx_dtype_name(b->dtype), b->rank, scales, s ? "" : " (missing)");
        if ((s->dtype != HFX_DTYPE_U8 && s->dtype != HFX_DTYPE_F8E8M0) || s->rank != 3 ||
            memcmp(s->shape, b->shape, 3 * sizeof *s->shape) != 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) does not scale '%s': want E8M0 "
                            "exponents (U8) [%lld, %lld, %lld]", s->file, s->name, hfx_dtype_name(s->dtype), s->rank,
                            b->name, (long long)b->shape[0], (long long)b->shape[1], (long long)b->shape[2]);
        hfx_block_grid *g = hfx_arena_alloc(arena, sizeof *g);
        hfx_block_format *f = hfx_arena_alloc(arena, sizeof *f);
        if (!g || !f) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        uint64_t rows = (uint64_t)b->shape[1], groups = (uint64_t)b->shape[2];
        *g = (hfx_block_grid){.codes = HFX_DTYPE_UNDEFINED, .scales = s->dtype, .scale_data = s->data, .rows = rows,
                              .cols = groups * 32, .tile_rows = 1, .tile_cols = 32, .grid_rows = rows,
                              .grid_cols = groups, .transposed = true};
        *f = (hfx_block_format){.name = "MXFP4", .block = 2, .bytes = 1, .grid = g};
        renamed[i] = name;
        b->blocks = f;
        b->dtype = HFX_DTYPE_F32;
        b->rank = 3;
        b->shape[1] = (int64_t)groups * 32, b->shape[2] = (int64_t)rows;
        drop[s - t] = true;
    }
    for (size_t i = 0; i < n; i++)
        if (renamed[i]) t[i].name = renamed[i];
    return HFX_OK;
}

static const struct {
    const char *method;
    hfx_status (*read)(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                       bool *drop, hfx_error *err);
} methods[] = {
    {"fp8", read_fp8},
    {"mxfp4", read_mxfp4},
};

static int by_info_name(const void *a, const void *b) {
    return strcmp(((const hfx_tensor_info *)a)->name, ((const hfx_tensor_info *)b)->name);
}

hfx_status hfx_prequant_apply(const json_t *config, const char *where, hfx_arena *arena, hfx_tensor_info *tensors,
                              size_t *n, const char **method, hfx_error *err) {
    *method = NULL;
    const json_t *q = json_object_get(config, "quantization_config");
    const char *name = json_string_value(json_object_get(q, "quant_method"));
    bool *drop = *n ? calloc(*n, sizeof *drop) : NULL;
    if (*n && !drop) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = HFX_OK;
    for (size_t m = 0; name && m < sizeof methods / sizeof methods[0]; m++)
        if (strcmp(name, methods[m].method) == 0) {
            st = methods[m].read(q, where, arena, tensors, *n, drop, err);
            *method = methods[m].method;
        }
    size_t k = 0;
    for (size_t i = 0; !st && i < *n; i++) {
        if (drop[i]) continue;
        if (is_f8(tensors[i].dtype) && *method)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' is %s without a scale ('%s%s')", tensors[i].file,
                          tensors[i].name, dtype_label(tensors[i].dtype), tensors[i].name, SCALE_SUFFIX);
        else if (is_f8(tensors[i].dtype) && !name)
            st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' is %s, but config.json has no "
                          "quantization_config saying how it is scaled", tensors[i].file, tensors[i].name,
                          dtype_label(tensors[i].dtype));
        tensors[k++] = tensors[i];
    }
    if (!st && *method) { /* (a method may rename what it reads: sorted again) */
        *n = k;
        if (k) qsort(tensors, k, sizeof *tensors, by_info_name);
    }
    free(drop);
    if (st) *method = NULL;
    return st;
}
