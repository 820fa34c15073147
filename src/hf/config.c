#include "hf/config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/status.h"

static const char *kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static const json_t *get(hfx_cfg c, const char *key) {
    const json_t *v = json_object_get(c.obj, key);
    return v && !json_is_null(v) ? v : NULL;
}

bool hfx_cfg_has(hfx_cfg c, const char *key) { return get(c, key) != NULL; }

static hfx_status missing(hfx_cfg c, const char *key, hfx_error *err) {
    return hfx_fail(err, HFX_ERR_INVALID, "%s: required field '%s' is missing", c.where, key);
}

static hfx_status wrong(hfx_cfg c, const char *key, const char *want, const json_t *v,
                        hfx_error *err) {
    return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s': expected %s, got %s", c.where, key,
                    want, kind(v));
}

static hfx_status read_int(hfx_cfg c, const char *key, const json_t *v, int64_t *out,
                           hfx_error *err) {
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return HFX_OK;
    }
    /* configs written by Python sometimes hold 4096.0 for an integer field */
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 9.0e15) {
            *out = (int64_t)d;
            return HFX_OK;
        }
    }
    return wrong(c, key, "an integer", v, err);
}

hfx_status hfx_cfg_int(hfx_cfg c, const char *key, int64_t *out, hfx_error *err) {
    const json_t *v = get(c, key);
    return v ? read_int(c, key, v, out, err) : missing(c, key, err);
}

hfx_status hfx_cfg_num(hfx_cfg c, const char *key, double *out, hfx_error *err) {
    const json_t *v = get(c, key);
    if (!v) return missing(c, key, err);
    if (!json_is_number(v)) return wrong(c, key, "a number", v, err);
    *out = json_number_value(v);
    return HFX_OK;
}

hfx_status hfx_cfg_int_or(hfx_cfg c, const char *key, int64_t dflt, int64_t *out, hfx_error *err) {
    const json_t *v = get(c, key);
    if (!v) {
        *out = dflt;
        return HFX_OK;
    }
    return read_int(c, key, v, out, err);
}

hfx_status hfx_cfg_num_or(hfx_cfg c, const char *key, double dflt, double *out, hfx_error *err) {
    if (!hfx_cfg_has(c, key)) {
        *out = dflt;
        return HFX_OK;
    }
    return hfx_cfg_num(c, key, out, err);
}

hfx_status hfx_cfg_bool_or(hfx_cfg c, const char *key, bool dflt, bool *out, hfx_error *err) {
    const json_t *v = get(c, key);
    if (!v) {
        *out = dflt;
        return HFX_OK;
    }
    if (!json_is_boolean(v)) return wrong(c, key, "a boolean", v, err);
    *out = json_is_true(v);
    return HFX_OK;
}

hfx_status hfx_cfg_str_or(hfx_cfg c, const char *key, const char *dflt, const char **out,
                          hfx_error *err) {
    const json_t *v = get(c, key);
    if (!v) {
        *out = dflt;
        return HFX_OK;
    }
    if (!json_is_string(v)) return wrong(c, key, "a string", v, err);
    *out = json_string_value(v);
    return HFX_OK;
}

hfx_status hfx_cfg_check_range(hfx_cfg c, const char *key, int64_t v, int64_t lo, int64_t hi,
                               hfx_error *err) {
    if (v < lo || v > hi)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' = %lld is out of range [%lld, %lld]",
                        c.where, key, (long long)v, (long long)lo, (long long)hi);
    return HFX_OK;
}

hfx_status hfx_cfg_int_in(hfx_cfg c, const char *key, int64_t lo, int64_t hi, int64_t *out, hfx_error *err) {
    hfx_status st = hfx_cfg_int(c, key, out, err);
    return st ? st : hfx_cfg_check_range(c, key, *out, lo, hi, err);
}

hfx_status hfx_cfg_int_in_or(hfx_cfg c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out,
                             hfx_error *err) {
    hfx_status st = hfx_cfg_int_or(c, key, dflt, out, err);
    return st ? st : hfx_cfg_check_range(c, key, *out, lo, hi, err);
}

hfx_status hfx_cfg_num_labels(hfx_cfg c, int64_t *out, hfx_error *err) {
    const json_t *id2label = json_object_get(c.obj, "id2label");
    if (json_is_object(id2label) && json_object_size(id2label) > 0) {
        *out = (int64_t)json_object_size(id2label);
        return hfx_cfg_check_range(c, "id2label", *out, 1, 1 << 20, err);
    }
    return hfx_cfg_int_in_or(c, "num_labels", 2, 1, 1 << 20, out, err);
}

hfx_status hfx_cfg_object(hfx_cfg c, const char *key, hfx_arena *arena, hfx_cfg *out, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (!json_is_object(v))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be an object (a part's config)", c.where, key);
    size_t n = strlen(c.where) + strlen(key) + 3;
    char *where = hfx_arena_alloc(arena, n);
    if (!where) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    snprintf(where, n, "%s: %s", c.where, key);
    *out = (hfx_cfg){v, where};
    return HFX_OK;
}
