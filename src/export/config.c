/* Export config from JSON: the seed's field names, unknown keys refused. */
#include "export/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/format.h"

static const char *const dtype_names[][2] = {
    {"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"}};

static hfx_status check_dynamic_shapes(const json_t *v, hfx_error *err) {
    if (json_is_null(v)) return HFX_OK;
    if (!json_is_object(v))
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'dynamic_shapes' must be an object "
                                              "{input: {axis: {\"name\", \"min\", \"max\"}}}");
    const char *input;
    json_t *axes;
    json_object_foreach((json_t *)v, input, axes) {
        if (!json_is_object(axes))
            return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] must be an object of axes", input);
        const char *axis;
        json_t *spec;
        json_object_foreach(axes, axis, spec) {
            char *end;
            long a = strtol(axis, &end, 10);
            if (!*axis || *end || a < 0 || a > 7)
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']: axis '%s' is not an axis number", input, axis);
            if (json_is_null(spec)) continue; /* static axis */
            if (!json_is_object(spec) || !json_is_string(json_object_get(spec, "name")))
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']['%s'] must be {\"name\": str, \"min\": int, \"max\": int}", input, axis);
            const char *k;
            json_t *x;
            json_object_foreach(spec, k, x) {
                if (strcmp(k, "name") == 0) continue;
                if ((strcmp(k, "min") != 0 && strcmp(k, "max") != 0))
                    return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']['%s']: unknown key '%s' (known: name, min, max)", input, axis, k);
                if (!json_is_null(x) && (!json_is_integer(x) || json_integer_value(x) < 0))
                    return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']['%s']['%s'] must be a non-negative integer", input, axis, k);
            }
            json_t *mn = json_object_get(spec, "min"), *mx = json_object_get(spec, "max");
            if (json_is_integer(mn) && json_is_integer(mx) && json_integer_value(mn) > json_integer_value(mx))
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']['%s']: min > max", input, axis);
        }
    }
    return HFX_OK;
}

/* A boolean, or null for the default (as the seed's dataclasses take None). */
static hfx_status expect_bool(const char *key, const json_t *v, hfx_error *err) {
    if (!json_is_boolean(v) && !json_is_null(v))
        return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be true or false", key);
    return HFX_OK;
}

/* A "pooling" value: 0 for "auto", -1 for "none", the count of modes filled into p->modes, or -2
 * when it is none of these. */
int hfx_cfg_pooling_of(const json_t *v, hfx_pooling *p) {
    memset(p, 0, sizeof *p);
    const char *s = json_string_value(v);
    if (s && strcmp(s, "auto") == 0) return 0;
    if (s && strcmp(s, "none") == 0) return -1;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if ((!s && !json_is_array(v)) || n == 0 || n > HFX_POOL_MODES_) return -2;
    for (size_t i = 0; i < n; i++)
        if (!hfx_pool_mode_from_name(json_string_value(json_is_array(v) ? json_array_get(v, i) : v), &p->modes[p->n++]))
            return -2;
    return p->n;
}

/* Validate a value of one of a format's own keys. */
static hfx_status check_format_option(const hfx_format_option *o, const json_t *v, hfx_error *err) {
    switch (o->kind) {
    case HFX_OPTION_BOOL: return expect_bool(o->key, v, err);
    case HFX_OPTION_INT: {
        if (json_is_null(v)) return HFX_OK;
        json_int_t x = json_is_integer(v) ? json_integer_value(v) : o->min - 1;
        if (x < o->min || x > o->max)
            return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be an integer in [%lld, %lld]", o->key,
                            (long long)o->min, (long long)o->max);
        return HFX_OK;
    }
    case HFX_OPTION_TRUE:
        return json_is_true(v) ? HFX_OK : hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s' %s", o->key, o->why);
    case HFX_OPTION_REFUSED: return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' %s", o->key, o->why);
    case HFX_OPTION_CHOICE: {
        const char *s = json_string_value(v);
        for (int i = 0; s && o->choices[i]; i++)
            if (strcmp(s, o->choices[i]) == 0) return HFX_OK;
        if (json_is_null(v)) return HFX_OK;
        char list[256];
        size_t k = 0;
        list[0] = 0;
        for (int i = 0; o->choices[i] && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "", o->choices[i]);
        return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be null or one of %s", o->key, list);
    }
    }
    return hfx_fail(err, HFX_ERR_INTERNAL, "export config: '%s': unknown option kind", o->key);
}

/* Validate one key for `format`; HFX_OK means it may be stored. */
static hfx_status check_key(const char *format, const char *key, const json_t *v, hfx_error *err) {
    if (strcmp(key, "dynamic") == 0 || strcmp(key, "strict") == 0 ||
        strcmp(key, "prefer_deferred_runtime_asserts_over_guards") == 0 ||
        strcmp(key, "optimize") == 0)
        return expect_bool(key, v, err); /* strict/prefer_deferred/optimize: tracing knobs, no effect here */
    if (strcmp(key, "dynamic_shapes") == 0) return check_dynamic_shapes(v, err);
    if (strcmp(key, "quantizer") == 0) { /* the seed's post-training quantizers are Python objects */
        if (json_is_null(v)) return HFX_OK;
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: 'quantizer' is not supported: hfx writes the "
                                                  "checkpoint's weights unquantized (null: none)");
    }
    /* generation (hfx_export_for_generation); the names generation_config.json uses */
    if (strcmp(key, "cache_implementation") == 0) {
        const char *c = json_string_value(v);
        if (json_is_null(v) || (c && (strcmp(c, "dynamic") == 0 || strcmp(c, "static") == 0))) return HFX_OK;
        return hfx_fail(err, c ? HFX_ERR_UNSUPPORTED : HFX_ERR_INVALID,
                        "export config: 'cache_implementation' must be \"dynamic\" or \"static\"%s%s",
                        c ? ", not " : "", c ? c : "");
    }
    if (strcmp(key, "max_cache_len") == 0) {
        if (json_is_null(v) || (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= INT32_MAX))
            return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'max_cache_len' must be a positive integer");
    }
    if (strcmp(key, "io") == 0) { /* hfx: whose names and cache contract generation graphs follow */
        const char *s = json_string_value(v);
        if (json_is_null(v) || (s && (strcmp(s, "optimum") == 0 || strcmp(s, "seed") == 0))) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'io' must be \"optimum\" or \"seed\"");
    }
    if (strcmp(key, "quantize") == 0) { /* hfx: weight quantization */
        const char *s = json_string_value(v);
        if (json_is_null(v) || (s && (strcmp(s, "int4") == 0 || strcmp(s, "int8") == 0 || strcmp(s, "int8-dynamic") == 0)))
            return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'quantize' must be \"int4\", \"int8\", \"int8-dynamic\" or null");
    }
    if (strcmp(key, "reduce_range") == 0) {
        if (json_is_null(v) || json_is_boolean(v)) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'reduce_range' must be true, false or null");
    }
    if (strcmp(key, "quantize_embeddings") == 0 || strcmp(key, "quantize_lm_head") == 0) {
        const char *s = json_string_value(v);
        if (json_is_null(v) || (s && (strcmp(s, "int4") == 0 || strcmp(s, "int8") == 0 || strcmp(s, "none") == 0)))
            return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be \"int4\", \"int8\", \"none\" or null", key);
    }
    if (strcmp(key, "group_size") == 0) {
        if (json_is_null(v) || (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= INT32_MAX))
            return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'group_size' must be a positive integer, 0 (a whole row) or null");
    }
    if (strcmp(key, "symmetric") == 0) {
        if (json_is_null(v) || json_is_boolean(v)) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'symmetric' must be true, false or null");
    }
    if (strcmp(key, "moe_experts") == 0) { /* hfx: how mixture-of-experts layers run */
        const char *v2 = json_string_value(v);
        if (v2 && (strcmp(v2, "auto") == 0 || strcmp(v2, "all") == 0 || strcmp(v2, "gathered") == 0)) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'moe_experts' must be \"auto\", \"all\" or \"gathered\"");
    }
    if (strcmp(key, "pooling") == 0) { /* hfx: a sentence embedding appended to an encoder */
        hfx_pooling p;
        if (json_is_null(v) || hfx_cfg_pooling_of(v, &p) != -2) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID,
                        "export config: 'pooling' must be \"auto\", \"none\", a mode or a list of 1 to %d modes (%s)",
                        HFX_POOL_MODES_, hfx_pool_mode_names());
    }
    if (strcmp(key, "normalize") == 0) return expect_bool(key, v, err);
    if (strcmp(key, "logits_to_keep") == 0) {
        if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'logits_to_keep' must be 0 (every position) or 1 (the last)");
    }
    if (strcmp(key, "dtype") == 0) {
        const char *s = json_string_value(v);
        for (size_t i = 0; s && i < 3; i++)
            if (strcmp(s, dtype_names[i][0]) == 0 || strcmp(s, dtype_names[i][1]) == 0) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'dtype' must be one of float32, float16, bfloat16");
    }
    const hfx_format *f = hfx_format_find(format);
    int i = f ? hfx_format_option_index(f, key) : -1;
    if (i >= 0) return check_format_option(&f->options[i], v, err);
    char known[1024];
    size_t k = (size_t)snprintf(known, sizeof known, "export_format, dynamic, dynamic_shapes");
    for (int j = 0; f && j < f->n_options && k < sizeof known; j++)
        if (f->options[j].kind != HFX_OPTION_REFUSED)
            k += (size_t)snprintf(known + k, sizeof known - k, ", %s", f->options[j].key);
    return hfx_fail(err, HFX_ERR_INVALID,
                    "export config: unknown key '%s' for export_format '%s' (known: %s, dtype, cache_implementation, "
                    "max_cache_len, logits_to_keep, moe_experts, io, pooling, normalize, quantize, quantize_embeddings, quantize_lm_head, "
                    "group_size, symmetric, reduce_range, strict, prefer_deferred_runtime_asserts_over_guards, "
                    "optimize, quantizer)",
                    key, format, known);
}

static hfx_status check_format(const json_t *v, hfx_error *err) {
    const hfx_format *f = hfx_format_find(json_string_value(v));
    char names[256];
    if (!f)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'export_format' must be one of %s",
                        hfx_format_names(true, names, sizeof names));
    if (!f->write)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: export_format '%s' is not available in hfx yet (available: %s)",
                        f->name, hfx_format_names(false, names, sizeof names));
    return HFX_OK;
}

/* Validate one config object (with export_format). */
static hfx_status check_config(const json_t *obj, const char *where, hfx_error *err) {
    if (!json_is_object(obj)) return hfx_fail(err, HFX_ERR_INVALID, "export config%s: must be a JSON object", where);
    json_t *fmt = json_object_get(obj, "export_format");
    if (!fmt) return hfx_fail(err, HFX_ERR_INVALID, "export config%s: 'export_format' is required", where);
    hfx_status st = check_format(fmt, err);
    const char *key;
    json_t *v;
    if (!st) json_object_foreach((json_t *)obj, key, v) {
        if (strcmp(key, "export_format") == 0) continue;
        if ((st = check_key(json_string_value(fmt), key, v, err))) break;
    }
    const hfx_format *f = st ? NULL : hfx_format_find(json_string_value(fmt));
    for (int i = 0; f && i < f->n_options && !st; i++) {
        const hfx_format_option *o = &f->options[i];
        const json_t *v2 = json_object_get(obj, o->key);
        if (o->requires && v2 && !json_is_null(v2) && json_is_false(json_object_get(obj, o->requires)))
            st = hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' requires '%s' true", o->key, o->requires);
    }
    if (st && *where) hfx_error_prefix(err, "component%s", where);
    return st;
}

hfx_status hfx_export_config_from_json(const char *json_text, hfx_export_config **out,
                                       hfx_error *err) {
    json_error_t je;
    json_t *obj = json_loads(json_text, JSON_REJECT_DUPLICATES, &je);
    if (!obj && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!obj)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: line %d, column %d: %s", je.line,
                        je.column, je.text);
    hfx_status st = HFX_OK;
    bool per_component = json_is_object(obj) && !json_object_get(obj, "export_format") && json_object_size(obj) > 0;
    if (!per_component) {
        st = check_config(obj, "", err);
    } else {
        /* {component: config}: every component a full config, all of one format */
        const char *name, *format = NULL;
        json_t *v;
        json_object_foreach(obj, name, v) {
            char where[160];
            snprintf(where, sizeof where, " '%.100s'", name);
            if ((st = check_config(v, where, err))) break;
            const char *f = json_string_value(json_object_get(v, "export_format"));
            if (format && strcmp(format, f) != 0) {
                st = hfx_fail(err, HFX_ERR_INVALID, "export config: components use different export formats (%s, %s)", format, f);
                break;
            }
            format = f;
        }
    }
    if (st) {
        json_decref(obj);
        return st;
    }
    hfx_export_config *c = calloc(1, sizeof *c);
    if (!c) {
        json_decref(obj);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    c->obj = obj;
    c->per_component = per_component;
    *out = c;
    return HFX_OK;
}

hfx_status hfx_export_config_set(hfx_export_config *c, const char *key, const char *json_value,
                                 hfx_error *err) {
    json_error_t je;
    json_t *v = json_loads(json_value, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!v && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!v) return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s': bad JSON value: %s", key, je.text);
    bool format = strcmp(key, "export_format") == 0;
    hfx_status st = format ? check_format(v, err) : check_key(hfx_cfg_format(c), key, v, err);
    /* a per-component config gets the value in every component */
    size_t n = c->per_component ? json_object_size(c->obj) : 1;
    void *it = c->per_component ? json_object_iter(c->obj) : NULL;
    /* a new format must accept every key already set (an OpenVINO-only key under onnx is refused,
     * not carried into an export_config.json that hfx itself would reject) */
    for (size_t i = 0; i < n && !st && format; i++) {
        const json_t *target = c->per_component ? json_object_iter_value(it) : c->obj;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)target, k, x) if (strcmp(k, "export_format") != 0 &&
                                                        (st = check_key(json_string_value(v), k, x, err))) break;
        if (it) it = json_object_iter_next(c->obj, it);
    }
    it = c->per_component ? json_object_iter(c->obj) : NULL;
    for (size_t i = 0; i < n && !st; i++) {
        json_t *target = c->per_component ? json_object_iter_value(it) : c->obj;
        if (json_object_set(target, key, v) != 0) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        if (it) it = json_object_iter_next(c->obj, it);
    }
    json_decref(v);
    return st;
}

const hfx_export_config *hfx_export_config_component(const hfx_export_config *c, const char *name,
                                                     hfx_export_config *tmp) {
    if (!c->per_component) return c;
    tmp->obj = json_object_get(c->obj, name);
    tmp->per_component = false;
    return tmp->obj ? tmp : NULL;
}

char *hfx_export_config_to_json(const hfx_export_config *c) {
    return json_dumps(c->obj, JSON_INDENT(2) | JSON_SORT_KEYS);
}

void hfx_export_config_free(hfx_export_config *c) {
    if (!c) return;
    json_decref(c->obj);
    free(c);
}

hfx_export_config *hfx_export_config_clone(const hfx_export_config *c) {
    hfx_export_config *n = calloc(1, sizeof *n);
    if (n && !(n->obj = json_deep_copy(c->obj))) {
        free(n);
        n = NULL;
    }
    if (n) n->per_component = c->per_component;
    return n;
}

const char *hfx_cfg_format(const hfx_export_config *c) {
    const json_t *obj = c->obj;
    if (c->per_component) obj = json_object_iter_value(json_object_iter((json_t *)obj));
    return json_string_value(json_object_get(obj, "export_format"));
}

const char *hfx_cfg_cache(const hfx_export_config *c) {
    return json_string_value(json_object_get(c->obj, "cache_implementation"));
}

int64_t hfx_cfg_max_cache_len(const hfx_export_config *c) {
    const json_t *v = json_object_get(c->obj, "max_cache_len");
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

/* The bits a "int4" / "int8" / "none" value asks for: 4, 8, 0; -1 when unset (null). */
static int bits_of(const json_t *v) {
    const char *s = json_string_value(v);
    return !s ? -1 : strcmp(s, "int4") == 0 ? 4 : strcmp(s, "int8") == 0 ? 8 : 0;
}

/* A head's or tables' quantization of `bits` under the primary one p: p's blocks and symmetry
 * at p's width, the format's defaults at another (NNCF's int8 backup: per row, asymmetric). */
static hfx_quant derived(const hfx_format *f, const hfx_quant *p, hfx_quant_rule rule, int bits) {
    hfx_quant q = {.rule = rule, .bits = bits, .block = p->block, .symmetric = p->symmetric,
                   .scale_dtype = p->scale_dtype};
    if (bits != p->bits) q.block = bits == 4 ? f->quant.block4 : f->quant.block8, q.symmetric = f->quant.symmetric;
    return q;
}

int hfx_cfg_quant(const hfx_export_config *c, const hfx_format *f, hfx_quant_plan *plan) {
    const char *s = json_string_value(json_object_get(c->obj, "quantize"));
    const json_t *block = json_object_get(c->obj, "group_size"), *sym = json_object_get(c->obj, "symmetric");
    const json_t *reduce = json_object_get(c->obj, "reduce_range");
    int tables = bits_of(json_object_get(c->obj, "quantize_embeddings"));
    int head = bits_of(json_object_get(c->obj, "quantize_lm_head"));
    if (!s)
        return (block && !json_is_null(block)) || (sym && !json_is_null(sym)) || (reduce && !json_is_null(reduce)) ||
                       tables >= 0 || head >= 0
                   ? -1
                   : 0;
    int bits = strcmp(s, "int4") == 0 ? 4 : 8;
    if (strcmp(s, "int8-dynamic") == 0) { /* onnxruntime's quantize_dynamic: the format checks it can */
        hfx_quant p = {.rule = HFX_QUANT_RULE_ORT_DYNAMIC, .bits = 8,
                       .block = json_is_integer(block) ? json_integer_value(block) : HFX_QUANT_TENSOR,
                       .symmetric = json_is_boolean(sym) ? json_is_true(sym) : true, /* int8 weights */
                       .scale_dtype = HFX_DTYPE_F32, .reduce_range = json_is_true(reduce)};
        plan->linears = p;
        plan->head = head == 0 ? (hfx_quant){0} : p;
        if (head > 0) plan->head.bits = head;
        /* a table is quantized as an activation: uint8, asymmetric, per tensor, full range */
        plan->tables = tables == 0 ? (hfx_quant){0}
                                   : (hfx_quant){.rule = HFX_QUANT_RULE_ORT_DYNAMIC, .bits = tables > 0 ? tables : 8,
                                                 .block = HFX_QUANT_TENSOR, .scale_dtype = HFX_DTYPE_F32};
        plan->head_follows_table = false;
        return 1;
    }
    if (reduce && !json_is_null(reduce)) return -2;
    hfx_quant p = {.rule = f->quant.rule, .bits = bits,
                   .block = json_is_integer(block) ? json_integer_value(block) : bits == 4 ? f->quant.block4 : f->quant.block8,
                   .symmetric = json_is_boolean(sym) ? json_is_true(sym) : f->quant.symmetric,
                   .scale_dtype = HFX_DTYPE_F32};
    bool nncf = f->quant.int8_tables_and_head;
    if (tables < 0) tables = nncf ? 8 : 0;
    plan->linears = p;
    plan->tables = derived(f, &p, f->quant.table_rule, tables);
    plan->head = derived(f, &p, f->quant.rule, head >= 0 ? head : nncf ? 8 : bits);
    plan->head_follows_table = head < 0 && nncf;
    return 1;
}

bool hfx_cfg_io_seed(const hfx_export_config *c) {
    const char *s = json_string_value(json_object_get(c->obj, "io"));
    return s && strcmp(s, "seed") == 0;
}

int hfx_cfg_logits_to_keep(const hfx_export_config *c, int dflt) {
    const json_t *v = json_object_get(c->obj, "logits_to_keep");
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

bool hfx_cfg_dynamic(const hfx_export_config *c) {
    return json_is_true(json_object_get(c->obj, "dynamic"));
}

const json_t *hfx_cfg_dynamic_shapes(const hfx_export_config *c) {
    const json_t *v = json_object_get(c->obj, "dynamic_shapes");
    return v && json_is_object(v) ? v : NULL;
}

bool hfx_cfg_is_set(const hfx_export_config *c, const char *key) { return json_object_get(c->obj, key) != NULL; }

void hfx_cfg_format_options(const hfx_export_config *c, const hfx_format *f, int64_t *out) {
    for (int i = 0; i < f->n_options; i++) {
        const hfx_format_option *o = &f->options[i];
        const json_t *v = json_object_get(c->obj, o->key);
        out[i] = json_is_integer(v) ? json_integer_value(v) : json_is_boolean(v) ? json_is_true(v) : o->dflt;
        for (int k = 0; o->kind == HFX_OPTION_CHOICE && json_is_string(v) && o->choices[k]; k++)
            if (strcmp(json_string_value(v), o->choices[k]) == 0) out[i] = k + 1;
    }
}

hfx_dtype hfx_cfg_dtype(const hfx_export_config *c) {
    const char *s = json_string_value(json_object_get(c->obj, "dtype"));
    if (!s) return HFX_DTYPE_F32;
    if (strcmp(s, "float16") == 0 || strcmp(s, "f16") == 0) return HFX_DTYPE_F16;
    if (strcmp(s, "bfloat16") == 0 || strcmp(s, "bf16") == 0) return HFX_DTYPE_BF16;
    return HFX_DTYPE_F32;
}

bool hfx_cfg_moe_gather(const hfx_export_config *c, bool single_token) {
    const char *v = json_string_value(json_object_get(c->obj, "moe_experts"));
    if (v && strcmp(v, "all") == 0) return false;
    if (v && strcmp(v, "gathered") == 0) return true;
    return single_token; /* auto: measured in docs/ARCHITECTURE.md */
}

int hfx_cfg_pooling(const hfx_export_config *c, hfx_pooling *p) {
    const json_t *v = json_object_get(c->obj, "pooling");
    if (!v || json_is_null(v)) {
        memset(p, 0, sizeof *p);
        return 0;
    }
    return hfx_cfg_pooling_of(v, p);
}

int hfx_cfg_normalize(const hfx_export_config *c) {
    const json_t *v = json_object_get(c->obj, "normalize");
    return json_is_boolean(v) ? json_is_true(v) : -1;
}
