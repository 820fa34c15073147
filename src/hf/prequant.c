#include "hf/prequant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static const char SCALE_SUFFIX[] = "_scale_inv"; /* "X.weight_scale_inv" scales "X.weight" */

const char *hfx_prequant_methods(void) { return "fp8, mxfp4, compressed-tensors"; }

/* A name looked up as its first len bytes of `prefix` followed by `suffix`, never built. */
typedef struct split_name {
    const char *prefix, *suffix;
    size_t len;
} split_name;

static int by_name(const void *key, const void *elem) { /* (strcmp's order of the joined name) */
    const split_name *k = key;
    const char *name = ((const hfx_tensor_info *)elem)->name;
    int c = strncmp(k->prefix, name, k->len); /* (equal: name holds those len bytes, the prefix has no NUL there) */
    return c ? c : strcmp(k->suffix, name + k->len);
}

/* The tensor of t[0..n) (sorted by name) named prefix[0..len) + suffix, or NULL. */
static hfx_tensor_info *find_split(hfx_tensor_info *t, size_t n, const char *prefix, size_t len, const char *suffix) {
    split_name key = {prefix, suffix, len};
    return n ? bsearch(&key, t, n, sizeof *t, by_name) : NULL;
}

static hfx_tensor_info *find(hfx_tensor_info *t, size_t n, const char *name) {
    return find_split(t, n, name, strlen(name), "");
}

static hfx_grid_codes f8_codes(hfx_dtype dt) { return dt == HFX_DTYPE_F8E4M3 ? HFX_GRID_F8E4M3 : HFX_GRID_F8E5M2; }

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

/* The grid of codes shaped [..., rows, cols] (`shape`, rank r ≥ 2, of tensor w as read) under scale s ([..., sr, sc],
 * the same leading axes; or one scale): its geometry and scales into *g (codes, zero points and rounding the
 * caller's). `tile`: the tiles the config names ({0, 0}: none), a hint tiles_of checks against the grid. */
static hfx_status scaled_grid(const hfx_tensor_info *w, int r, const int64_t *shape, const hfx_tensor_info *s,
                              const int64_t tile[2], hfx_block_grid *g, hfx_error *err) {
    if (r < 2 || hfx_numel(r, shape) == 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' (scaled by '%s') has rank %d and %llu elements; "
                        "quantized weights are matrices", w->file, w->name, s->name, r,
                        (unsigned long long)hfx_numel(r, shape));
    if (!is_scale_dtype(s->dtype))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; scales are F32, F16, BF16 or E8M0 "
                        "exponents (F8_E8M0, U8)", s->file, s->name, hfx_dtype_name(s->dtype));
    int64_t rows = shape[r - 2], cols = shape[r - 1], t[2] = {rows, cols}, grid[2] = {1, 1};
    bool one = hfx_numel(s->rank, s->shape) == 1, fits = one; /* one scale for the whole tensor */
    if (one) rows = t[0] = (int64_t)(hfx_numel(r, shape) / (uint64_t)cols); /* (one matrix of all rows) */
    if (!one && s->rank == r) {
        fits = memcmp(s->shape, shape, (size_t)(r - 2) * sizeof *s->shape) == 0 &&
               tiles_of(rows, cols, s->shape[r - 2], s->shape[r - 1], tile, t);
        grid[0] = s->shape[r - 2], grid[1] = s->shape[r - 1];
    }
    if (!fits)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (rank %d) does not tile '%s' (%lld × %lld matrices%s): "
                        "want the weight's leading axes and a grid of %s", s->file, s->name, s->rank, w->name,
                        (long long)rows, (long long)cols, tile[0] ? " in the config's tiles" : "",
                        tile[0] ? "⌈rows / tile rows⌉ × ⌈columns / tile columns⌉ scales"
                                : "scales dividing each matrix evenly");
    *g = (hfx_block_grid){.scales = s->dtype, .scale_data = s->data, .round_to = HFX_DTYPE_F32, .rows = (uint64_t)rows,
                          .cols = (uint64_t)cols, .tile_rows = (uint64_t)t[0], .tile_cols = (uint64_t)t[1],
                          .grid_rows = (uint64_t)grid[0], .grid_cols = (uint64_t)grid[1]};
    return HFX_OK;
}

/* w read through grid g (an arena copy), as float32 of `shape` (rank r): a block of `block` codes in `bytes` bytes */
static hfx_status set_grid(hfx_tensor_info *w, const hfx_block_grid *g, const char *label, int r,
                           const int64_t *shape, uint32_t block, uint32_t bytes, hfx_arena *arena, hfx_error *err) {
    hfx_block_grid *kept = hfx_arena_alloc(arena, sizeof *kept);
    hfx_block_format *f = hfx_arena_alloc(arena, sizeof *f);
    if (!kept || !f) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    *kept = *g;
    *f = (hfx_block_format){.name = label, .block = block, .bytes = bytes, .grid = kept};
    w->blocks = f;
    w->dtype = HFX_DTYPE_F32;
    w->rank = r;
    memmove(w->shape, shape, (size_t)r * sizeof *shape);
    return HFX_OK;
}

/* The grid of FP8 weight w (codes [..., rows, cols]; I8: FP4 codes two a byte, [..., rows, cols / 2], as DeepSeek V4's
 * experts: read as [..., rows, cols]) under scale s, set as w's decoding. */
static hfx_status fp8_grid(hfx_tensor_info *w, const hfx_tensor_info *s, const int64_t tile[2], hfx_arena *arena,
                           hfx_error *err) {
    bool fp4 = w->dtype == HFX_DTYPE_I8;
    int64_t shape[HFX_MAX_RANK];
    memcpy(shape, w->shape, sizeof shape);
    if (fp4 && w->rank) shape[w->rank - 1] *= 2; /* (its codes' count, which the safetensors header bounded) */
    hfx_block_grid g;
    hfx_status st = scaled_grid(w, w->rank, shape, s, tile, &g, err);
    if (st) return st;
    g.codes = fp4 ? HFX_GRID_E2M1 : f8_codes(w->dtype);
    return set_grid(w, &g, dtype_label(w->dtype), w->rank, shape, fp4 ? 2 : 1, 1, arena, err);
}

static hfx_status read_fp8(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                           bool *drop, const char **renamed, hfx_error *err) {
    (void)renamed;
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
        hfx_tensor_info *w = find_split(t, n, t[i].name, base, "");
        if (!w || (!is_f8(w->dtype) && w->dtype != HFX_DTYPE_I8))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' scales '%.*s', which %s", t[i].file, t[i].name,
                            (int)base, t[i].name,
                            w ? "is not F8_E4M3, F8_E5M2 or I8 (FP4 codes)" : "the checkpoint does not hold");
        st = fp8_grid(w, &t[i], tile, arena, err);
        drop[i] = true;
    }
    return st;
}

/* MXFP4 (gpt-oss): "X_blocks" U8 [E, rows, groups, 16] (32 FP4 codes a group) and "X_scales" E8M0 [E, rows, groups]
 * become "X" [E, groups · 32, rows], as transformers' convert_moe_packed_tensors transposes them */
static hfx_status read_mxfp4(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                             bool *drop, const char **renamed, hfx_error *err) {
    (void)q, (void)where;
    for (size_t i = 0; i < n; i++) {
        size_t base = ends_with(t[i].name, "_blocks");
        if (!base) continue;
        hfx_tensor_info *b = &t[i];
        char *name = hfx_arena_printf(arena, "%.*s", (int)base, b->name);
        if (!name) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        hfx_tensor_info *s = find_split(t, n, name, base, "_scales");
        if (find(t, n, name))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensors '%s' and '%s' both hold '%s'", b->file, name, b->name,
                            name);
        if (!s || b->dtype != HFX_DTYPE_U8 || b->rank != 4 || b->shape[3] != 16 || b->shape[2] < 1 ||
            b->shape[1] < 1 || b->shape[0] < 1)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) is not MXFP4 blocks beside its "
                            "scales '%s_scales': want U8 [experts, rows, groups, 16] and [experts, rows, groups]%s",
                            b->file, b->name, hfx_dtype_name(b->dtype), b->rank, name, s ? "" : " (missing)");
        if ((s->dtype != HFX_DTYPE_U8 && s->dtype != HFX_DTYPE_F8E8M0) || s->rank != 3 ||
            memcmp(s->shape, b->shape, 3 * sizeof *s->shape) != 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) does not scale '%s': want E8M0 "
                            "exponents (U8) [%lld, %lld, %lld]", s->file, s->name, hfx_dtype_name(s->dtype), s->rank,
                            b->name, (long long)b->shape[0], (long long)b->shape[1], (long long)b->shape[2]);
        uint64_t rows = (uint64_t)b->shape[1], groups = (uint64_t)b->shape[2];
        hfx_block_grid g = {.codes = HFX_GRID_E2M1, .scales = s->dtype, .scale_data = s->data,
                            .round_to = HFX_DTYPE_F32, .rows = rows, .cols = groups * 32, .tile_rows = 1,
                            .tile_cols = 32, .grid_rows = rows, .grid_cols = groups, .transposed = true};
        renamed[i] = name;
        hfx_status st = set_grid(b, &g, "MXFP4", 3, (int64_t[]){b->shape[0], (int64_t)groups * 32, (int64_t)rows}, 2,
                                 1, arena, err);
        if (st) return st;
        drop[s - t] = true;
    }
    return HFX_OK;
}


/* ---- compressed-tensors (llm-compressor's checkpoints: W4A16, W8A16, FP8 weights) ---------------------------- */

/* One config group's weights: how every quantized module of the checkpoint is stored. */
typedef struct ct_scheme {
    const char *format;     /* "pack-quantized", "naive-quantized" / "int-quantized", "float-quantized" */
    int bits;
    bool is_float, symmetric;
    const char *strategy;   /* "tensor", "channel", "group", "block" */
    int64_t tile[2];        /* group: [1, group_size]; block: block_structure; else 0 */
} ct_scheme;

/* A JSON value that must be null or absent for hfx to read the checkpoint (what it would make of the model that hfx
 * does not): refused naming it. */
static hfx_status ct_absent(const json_t *obj, const char *key, const char *where, const char *what, hfx_error *err) {
    const json_t *v = json_object_get(obj, key);
    bool empty = !v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) || json_is_false(v);
    return empty ? HFX_OK
                 : hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config %s%s is set: %s, which hfx does not "
                            "export", where, what, key, what[0] ? "(in a config group)" : "its model quantizes more "
                            "than the weights or transforms them");
}

/* config group `g`'s scheme (its format, or the config's) */
static hfx_status ct_group(const json_t *q, const char *name, const json_t *g, const char *where, ct_scheme *out,
                           hfx_error *err) {
    hfx_status st = ct_absent(g, "input_activations", where, "", err);
    if (!st) st = ct_absent(g, "output_activations", where, "", err);
    if (st) return st;
    const json_t *w = json_object_get(g, "weights");
    const char *format = json_string_value(json_object_get(g, "format"));
    out->format = format ? format : json_string_value(json_object_get(q, "format"));
    const char *type = json_string_value(json_object_get(w, "type"));
    const json_t *bits = json_object_get(w, "num_bits"), *sym = json_object_get(w, "symmetric");
    out->strategy = json_string_value(json_object_get(w, "strategy"));
    out->is_float = type && strcmp(type, "float") == 0;
    out->bits = json_is_integer(bits) ? (int)json_integer_value(bits) : 0;
    out->symmetric = !sym || json_is_true(sym);
    if (!json_is_object(w) || !out->format || !out->strategy || !type || (!out->is_float && strcmp(type, "int")) ||
        out->bits < 1 || out->bits > 8 || (sym && !json_is_boolean(sym)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: quantization_config.config_groups.%s: want weights with type "
                        "\"int\" or \"float\", num_bits 1 to 8, a strategy, and a format", where, name);
    const json_t *dyn = json_object_get(w, "dynamic"), *order = json_object_get(w, "actorder");
    const char *actorder = json_string_value(order);
    if ((dyn && !json_is_false(dyn)) || (actorder && strcmp(actorder, "weight") != 0) || (order && !actorder &&
                                                                                          !json_is_null(order)))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.config_groups.%s.weights: dynamic or "
                        "activation-ordered (actorder \"%s\": columns reordered by weight_g_idx) weights are not read",
                        where, name, actorder ? actorder : "?");
    out->tile[0] = out->tile[1] = 0;
    const json_t *gs = json_object_get(w, "group_size"), *bs = json_object_get(w, "block_structure");
    if (strcmp(out->strategy, "group") == 0 && json_is_integer(gs) && json_integer_value(gs) > 0)
        out->tile[0] = 1, out->tile[1] = json_integer_value(gs);
    else if (strcmp(out->strategy, "block") == 0 && json_array_size(bs) == 2 &&
             json_integer_value(json_array_get(bs, 0)) > 0 && json_integer_value(json_array_get(bs, 1)) > 0)
        out->tile[0] = json_integer_value(json_array_get(bs, 0)),
        out->tile[1] = json_integer_value(json_array_get(bs, 1));
    else if (strcmp(out->strategy, "tensor") != 0 && strcmp(out->strategy, "channel") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.config_groups.%s.weights: strategy '%s'%s "
                        "(hfx reads tensor, channel, group and block)", where, name, out->strategy,
                        strcmp(out->strategy, "group") == 0 || strcmp(out->strategy, "block") == 0
                            ? " without its group_size or block_structure" : "");
    bool packed = strcmp(out->format, "pack-quantized") == 0;
    bool naive = strcmp(out->format, "naive-quantized") == 0 || strcmp(out->format, "int-quantized") == 0;
    bool fp8 = strcmp(out->format, "float-quantized") == 0;
    if (!(packed && !out->is_float) && !(naive && !out->is_float && out->bits == 8) &&
        !(fp8 && out->is_float && out->bits == 8))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.config_groups.%s: format '%s' with %d-bit "
                        "%s weights is not read (hfx reads pack-quantized integers, naive-quantized 8-bit integers "
                        "and float-quantized FP8)", where, name, out->format, out->bits, type);
    return HFX_OK;
}

/* The one weight scheme of every config group (groups differing in how weights are stored are refused). */
static hfx_status ct_scheme_of(const json_t *q, const char *where, ct_scheme *out, hfx_error *err) {
    const char *status = json_string_value(json_object_get(q, "quantization_status"));
    if (status && strcmp(status, "compressed") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.quantization_status '%s': the weights are "
                        "stored float beside their quantization parameters; hfx reads \"compressed\" checkpoints",
                        where, status);
    static const char *const extras[] = {"sparsity_config", "transform_config", "kv_cache_scheme"};
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
        hfx_status st = ct_absent(q, extras[i], where, "", err);
        if (st) return st;
    }
    const json_t *groups = json_object_get(q, "config_groups"), *g;
    const char *name;
    size_t k = 0;
    json_object_foreach((json_t *)groups, name, g) {
        ct_scheme one;
        hfx_status st = ct_group(q, name, g, where, &one, err);
        if (st) return st;
        if (k++ && (strcmp(one.format, out->format) || one.bits != out->bits || one.symmetric != out->symmetric ||
                    strcmp(one.strategy, out->strategy) || one.tile[0] != out->tile[0] || one.tile[1] != out->tile[1]))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: quantization_config.config_groups: groups that store "
                            "weights differently ('%s' and another) are not read yet", where, name);
        *out = one;
    }
    if (!k)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: quantization_config.config_groups: want an object of one or more "
                        "config groups", where);
    return HFX_OK;
}

static bool is_float_dtype(hfx_dtype dt) { return dt == HFX_DTYPE_F32 || dt == HFX_DTYPE_F16 || dt == HFX_DTYPE_BF16; }

/* The weight shape a pack-quantized module records (its weight_shape, I64 or I32, rank 2 or more) into shape. */
static hfx_status ct_shape(const hfx_tensor_info *ws, int64_t *shape, int *rank, hfx_error *err) {
    int64_t r = ws->rank == 1 ? ws->shape[0] : 0;
    if ((ws->dtype != HFX_DTYPE_I64 && ws->dtype != HFX_DTYPE_I32) || r < 2 || r > HFX_MAX_RANK)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) is not a weight's shape: want I64 "
                        "[2..%d]", ws->file, ws->name, hfx_dtype_name(ws->dtype), ws->rank, HFX_MAX_RANK);
    for (int64_t d = 0; d < r; d++) {
        int64_t v;
        if (ws->dtype == HFX_DTYPE_I64) {
            memcpy(&v, ws->data + 8 * d, 8);
        } else {
            int32_t v32;
            memcpy(&v32, ws->data + 4 * d, 4);
            v = v32;
        }
        if (v < 1 || v > ((int64_t)1 << 40))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' element %lld is %lld: not a dimension", ws->file,
                            ws->name, (long long)d, (long long)v);
        shape[d] = v;
    }
    *rank = (int)r;
    return HFX_OK;
}

/* Module `m` (its name len bytes of `m`) whose scale is t[si]: its codes (pack-quantized: "weight_packed" I32 with
 * "weight_shape", renamed "weight"; naive: "weight" I8; float: "weight" FP8) read through the grid of its scales and
 * zero points, each value rounded to the scales' dtype as compressed-tensors dequantizes in it. */
static hfx_status ct_module(const ct_scheme *k, hfx_tensor_info *t, size_t n, size_t si, size_t len, hfx_arena *arena,
                            bool *drop, const char **renamed, hfx_error *err) {
    const char *m = t[si].name;
    bool packed = strcmp(k->format, "pack-quantized") == 0;
    hfx_tensor_info *w = find_split(t, n, m, len, packed ? ".weight_packed" : ".weight");
    hfx_tensor_info *ws = packed ? find_split(t, n, m, len, ".weight_shape") : NULL;
    hfx_tensor_info *zp = find_split(t, n, m, len, ".weight_zero_point");
    hfx_dtype want = packed ? HFX_DTYPE_I32 : k->is_float ? HFX_DTYPE_F8E4M3 : HFX_DTYPE_I8;
    if (!w || (packed && !ws) || (w->dtype != want && !(k->is_float && w->dtype == HFX_DTYPE_F8E5M2)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' scales module '%.*s', whose %s%s is %s (format '%s')",
                        t[si].file, t[si].name, (int)len, m, packed ? "weight_packed" : "weight",
                        packed ? " and weight_shape" : "", w && (!packed || ws) ? "of another dtype" : "missing",
                        k->format);
    if (!k->symmetric && !zp)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: module '%.*s' is quantized asymmetrically but has no "
                        "weight_zero_point", t[si].file, (int)len, m);
    int r = w->rank;
    int64_t shape[HFX_MAX_RANK];
    memcpy(shape, w->shape, sizeof shape);
    hfx_status st = packed ? ct_shape(ws, shape, &r, err) : HFX_OK;
    if (!st && packed && (r != w->rank || memcmp(shape, w->shape, (size_t)(r - 1) * sizeof *shape) != 0 ||
                          w->shape[r - 1] != (shape[r - 1] * k->bits + 31) / 32))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (rank %d) does not hold the %d-bit codes of '%s'",
                      w->file, w->name, w->rank, k->bits, ws->name);
    hfx_block_grid g;
    if (!st) st = scaled_grid(w, r, shape, &t[si], k->tile, &g, err);
    if (st) return st;
    if (!is_float_dtype(t[si].dtype))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; compressed-tensors scales are F32, "
                        "F16 or BF16", t[si].file, t[si].name, hfx_dtype_name(t[si].dtype));
    g.codes = packed ? HFX_GRID_PACKED : k->is_float ? f8_codes(w->dtype) : HFX_GRID_I8;
    g.bits = k->bits;
    g.round_to = t[si].dtype;
    if (zp) { /* packed down the rows for pack-quantized groups and channels; else one integer per scale */
        bool down = packed && t[si].rank >= 2 && (strcmp(k->strategy, "group") == 0 ||
                                                  strcmp(k->strategy, "channel") == 0);
        int64_t zshape[HFX_MAX_RANK];
        memcpy(zshape, t[si].shape, sizeof zshape);
        if (down) zshape[t[si].rank - 2] = (int64_t)((g.grid_rows * (uint64_t)k->bits + 31) / 32);
        bool ok = zp->rank == t[si].rank && memcmp(zp->shape, zshape, (size_t)zp->rank * sizeof *zshape) == 0 &&
                  (down ? zp->dtype == HFX_DTYPE_I32 : zp->dtype == HFX_DTYPE_I8 || zp->dtype == HFX_DTYPE_I32);
        if (!ok || k->is_float)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' (%s, rank %d) is not the zero points of '%s': "
                            "want %s %s its scales' shape", zp->file, zp->name, hfx_dtype_name(zp->dtype), zp->rank,
                            t[si].name, down ? "I32" : "I8 or I32", down ? "packed down the rows of" : "in");
        g.zero_data = zp->data;
        g.zero_codes = down ? HFX_GRID_PACKED : zp->dtype == HFX_DTYPE_I8 ? HFX_GRID_I8 : HFX_GRID_I32;
        drop[zp - t] = true;
    }
    drop[si] = true;
    if (ws) drop[ws - t] = true;
    if (packed && !(renamed[w - t] = hfx_arena_printf(arena, "%.*s.weight", (int)len, m)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const char *label = k->is_float ? dtype_label(w->dtype) : hfx_arena_printf(arena, "int%d", k->bits);
    if (!label) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    /* (packed: a block is 32 codes in `bits` words of a row) */
    return set_grid(w, &g, label, r, shape, packed ? 32 : 1, packed ? 4 * (uint32_t)k->bits : 1, arena, err);
}

static hfx_status read_compressed(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                                  bool *drop, const char **renamed, hfx_error *err) {
    ct_scheme k;
    hfx_status st = ct_scheme_of(q, where, &k, err);
    for (size_t i = 0; !st && i < n; i++) {
        size_t len = ends_with(t[i].name, ".weight_scale");
        if (len) st = ct_module(&k, t, n, i, len, arena, drop, renamed, err);
        else if (ends_with(t[i].name, ".weight_g_idx") || ends_with(t[i].name, ".weight_global_scale"))
            st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s': activation-ordered groups (g_idx) and global "
                          "scales are not read", t[i].file, t[i].name);
    }
    return st;
}

static const struct {
    const char *method;
    /* each tensor the method decodes given its grid; drop[i]: tensor i only serves another's decoding; renamed[i]: its
     * name from now on (applied after the method, whose lookups need the sorted names) */
    hfx_status (*read)(const json_t *q, const char *where, hfx_arena *arena, hfx_tensor_info *t, size_t n,
                       bool *drop, const char **renamed, hfx_error *err);
} methods[] = {
    {"fp8", read_fp8},
    {"mxfp4", read_mxfp4},
    {"compressed-tensors", read_compressed},
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
    const char **renamed = *n ? calloc(*n, sizeof *renamed) : NULL;
    hfx_status st = *n && (!drop || !renamed) ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory") : HFX_OK;
    for (size_t m = 0; !st && name && m < sizeof methods / sizeof methods[0]; m++)
        if (strcmp(name, methods[m].method) == 0) {
            st = methods[m].read(q, where, arena, tensors, *n, drop, renamed, err);
            *method = methods[m].method;
        }
    for (size_t i = 0; !st && i < *n; i++)
        if (renamed[i]) tensors[i].name = renamed[i];
    size_t k = 0;
    for (size_t i = 0; !st && i < *n; i++) {
        if (drop[i]) continue;
        if (is_f8(tensors[i].dtype) && *method)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' is %s without a scale (quant_method '%s')",
                          tensors[i].file, tensors[i].name, dtype_label(tensors[i].dtype), name);
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
    free(renamed);
    if (st) *method = NULL;
    return st;
}
