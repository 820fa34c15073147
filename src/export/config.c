/* Export config from JSON: the seed's field names, every key checked against its row (the common
 * keys' table, export/options.def, or the format's), unknown keys refused; then read once into
 * typed settings. */
#include "export/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/format.h"

struct hfx_export_config {
    json_t *obj;            /* owned; every key validated; what export_config.json holds */
    bool per_component;     /* obj is {component name: config} */
    hfx_settings *settings; /* owned: obj read, one per component in obj's order (one for a single config) */
};

static hfx_status check_dynamic_shapes(const json_t *v, hfx_error *err) {
    if (json_is_null(v)) return HFX_OK;
    if (!json_is_object(v))
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'dynamic_shapes' must be an object "
                                              "{input: {axis: {\"name\", \"min\", \"max\"}}}");
    if (json_object_size(v) > HFX_SHAPES_MAX_INPUTS)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'dynamic_shapes' names more than %d inputs",
                        HFX_SHAPES_MAX_INPUTS);
    const char *input;
    json_t *axes;
    json_object_foreach((json_t *)v, input, axes) {
        if (!json_is_object(axes))
            return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] must be an object of axes", input);
        if (json_object_size(axes) > HFX_SHAPES_MAX_AXES) /* axis numbers are 0 to 7: a duplicate spelled otherwise */
            return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] has more than %d axes", input,
                            HFX_SHAPES_MAX_AXES);
        const char *axis;
        json_t *spec;
        json_object_foreach(axes, axis, spec) {
            char *end;
            long a = strtol(axis, &end, 10);
            if (!*axis || *end || a < 0 || a > 7)
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']: axis '%s' is not an axis number", input, axis);
            if (json_is_null(spec)) continue; /* static axis */
            const json_t *name = json_is_object(spec) ? json_object_get(spec, "name") : NULL;
            if (!json_is_object(spec) || (name && !json_is_null(name) && !json_is_string(name)))
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s']['%s'] must be null (static) "
                                                      "or {\"name\": str, \"min\": int, \"max\": int} (each optional)",
                                input, axis);
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

/* The common keys' rows (export/options.def). */
static const hfx_format_option common_options[HFX_KEY_COUNT] = {
#define X(id, ...) [HFX_KEY_##id] = {__VA_ARGS__},
#include "export/options.def"
#undef X
};

const hfx_format_option *hfx_key_option(int k) { return k >= 0 && k < HFX_KEY_COUNT ? &common_options[k] : NULL; }

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

/* The 1-based index of string v in o's choices; 0 when it is none of them. */
static int choice_of(const hfx_format_option *o, const json_t *v) {
    const char *s = json_string_value(v);
    for (int i = 0; s && o->choices[i]; i++)
        if (strcmp(s, o->choices[i]) == 0) return i + 1;
    return 0;
}

/* Validate a value of one key against its row: one error form per kind, naming the key. */
static hfx_status check_value(const hfx_format_option *o, const json_t *v, hfx_error *err) {
    if (json_is_null(v) && !o->not_null && o->kind != HFX_OPTION_TRUE && o->kind != HFX_OPTION_REFUSED) return HFX_OK;
    const char *or_null = o->not_null ? "" : " or null";
    switch (o->kind) {
    case HFX_OPTION_BOOL:
        return json_is_boolean(v) ? HFX_OK : hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be true, false%s",
                                                      o->key, o->not_null ? "" : " or null");
    case HFX_OPTION_INT: {
        json_int_t x = json_is_integer(v) ? json_integer_value(v) : o->min - 1;
        if (x < o->min || x > o->max)
            return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be an integer in [%lld, %lld]%s", o->key,
                            (long long)o->min, (long long)o->max, or_null);
        return HFX_OK;
    }
    case HFX_OPTION_TRUE:
        return json_is_true(v) ? HFX_OK : hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s' %s", o->key, o->why);
    case HFX_OPTION_REFUSED: return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' %s", o->key, o->why);
    case HFX_OPTION_NULL: return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s' %s", o->key, o->why);
    case HFX_OPTION_CHOICE: {
        if (choice_of(o, v)) return HFX_OK;
        char list[256];
        size_t k = 0;
        list[0] = 0;
        for (int i = 0; o->choices[i] && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "", o->choices[i]);
        return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' must be %sone of %s", o->key,
                        o->not_null ? "" : "null or ", list);
    }
    case HFX_OPTION_SHAPES: return check_dynamic_shapes(v, err);
    case HFX_OPTION_POOLING: {
        hfx_pooling p;
        if (hfx_cfg_pooling_of(v, &p) != -2) return HFX_OK;
        return hfx_fail(err, HFX_ERR_INVALID,
                        "export config: 'pooling' must be \"auto\", \"none\", a mode or a list of 1 to %d modes (%s)%s",
                        HFX_POOL_MODES_, hfx_pool_mode_names(), or_null);
    }
    }
    return hfx_fail(err, HFX_ERR_INTERNAL, "export config: '%s': unknown option kind", o->key);
}

/* The row of `key` for format f: a common key's (its HFX_KEY_* in *common, else -1) or one of
 * f's (its index in f's table in *own, else -1); NULL when neither has it. */
static const hfx_format_option *find_key(const hfx_format *f, const char *key, int *common, int *own) {
    *common = *own = -1;
    for (int k = 0; k < HFX_KEY_COUNT; k++)
        if (strcmp(common_options[k].key, key) == 0) return &common_options[(*common = k)];
    *own = hfx_format_option_index(f, key);
    return *own >= 0 ? &f->options[*own] : NULL;
}

/* Validate one key for format f; HFX_OK means it may be stored. */
static hfx_status check_key(const hfx_format *f, const char *key, const json_t *v, hfx_error *err) {
    int common, own;
    const hfx_format_option *o = find_key(f, key, &common, &own);
    if (o) return check_value(o, v, err);
    char known[1024];
    size_t k = (size_t)snprintf(known, sizeof known, "export_format");
    for (int j = 0; j < HFX_KEY_COUNT && k < sizeof known; j++)
        k += (size_t)snprintf(known + k, sizeof known - k, ", %s", common_options[j].key);
    for (int j = 0; j < f->n_options && k < sizeof known; j++)
        if (f->options[j].kind != HFX_OPTION_REFUSED)
            k += (size_t)snprintf(known + k, sizeof known - k, ", %s", f->options[j].key);
    return hfx_fail(err, HFX_ERR_INVALID, "export config: unknown key '%s' for export_format '%s' (known: %s)", key,
                    f->name, known);
}

/* The bits a "int4" / "int8" / "none" value asks for: 4, 8, 0; -1 when unset (null). */
static int bits_of(const hfx_format_option *o, const json_t *v) {
    static const int bits[] = {-1, 4, 8, 0};
    return bits[choice_of(o, v)];
}

/* A boolean's value: 1 or 0, -1 when unset or null. */
static int tristate(const json_t *v) { return json_is_boolean(v) ? json_is_true(v) : -1; }

/* A validated dynamic_shapes value into s. */
static void settle_shapes(hfx_settings *s, const json_t *v) {
    s->dynamic_shapes = json_is_object(v);
    s->n_shapes = 0;
    const char *input, *axis;
    json_t *axes, *x;
    json_object_foreach((json_t *)v, input, axes) {
        hfx_input_spec *in = &s->shapes[s->n_shapes++];
        *in = (hfx_input_spec){.input = input};
        json_object_foreach(axes, axis, x) {
            const json_t *mn = json_object_get(x, "min"), *mx = json_object_get(x, "max");
            in->axes[in->n_axes++] = (hfx_axis_spec){axis, json_string_value(json_object_get(x, "name")),
                                                     json_is_integer(mn) ? json_integer_value(mn) : 1,
                                                     json_is_integer(mx) ? json_integer_value(mx) : INT32_MAX,
                                                     json_is_object(x)};
        }
    }
}

/* Read one validated key into s. */
static void settle(hfx_settings *s, int k, const json_t *v) {
    const hfx_format_option *o = &common_options[k];
    switch ((hfx_key)k) {
    case HFX_KEY_DYNAMIC: s->dynamic = json_is_true(v); break;
    case HFX_KEY_DYNAMIC_SHAPES: settle_shapes(s, v); break;
    case HFX_KEY_DTYPE: { /* float32, float16, bfloat16, then their short names */
        static const hfx_dtype by_index[3] = {HFX_DTYPE_F32, HFX_DTYPE_F16, HFX_DTYPE_BF16};
        s->dtype = by_index[(choice_of(o, v) - 1) % 3];
        break;
    }
    case HFX_KEY_CACHE_IMPLEMENTATION: s->cache = choice_of(o, v); break;
    case HFX_KEY_MAX_CACHE_LEN: s->max_cache_len = json_is_integer(v) ? json_integer_value(v) : 0; break;
    case HFX_KEY_LOGITS_TO_KEEP: s->logits_to_keep = (int)json_integer_value(v); break;
    case HFX_KEY_IO: s->io_seed = choice_of(o, v) == 2; break;
    case HFX_KEY_MOE_EXPERTS: s->moe = choice_of(o, v); break;
    case HFX_KEY_QUANTIZE: s->quantize = choice_of(o, v); break;
    case HFX_KEY_REDUCE_RANGE: s->reduce_range = tristate(v); break;
    case HFX_KEY_QUANTIZE_EMBEDDINGS: s->tables_bits = bits_of(o, v); break;
    case HFX_KEY_QUANTIZE_LM_HEAD: s->head_bits = bits_of(o, v); break;
    case HFX_KEY_GROUP_SIZE: s->group_size = json_is_integer(v) ? json_integer_value(v) : -1; break;
    case HFX_KEY_SYMMETRIC: s->symmetric = tristate(v); break;
    case HFX_KEY_POOLING:
        if (json_is_null(v)) memset(&s->pool, 0, sizeof s->pool), s->pooling = 0;
        else s->pooling = hfx_cfg_pooling_of(v, &s->pool);
        break;
    case HFX_KEY_NORMALIZE: s->normalize = tristate(v); break;
    case HFX_KEY_STRICT:
    case HFX_KEY_PREFER_DEFERRED:
    case HFX_KEY_OPTIMIZE:
    case HFX_KEY_QUANTIZER:
    case HFX_KEY_COUNT: break; /* no effect here */
    }
}

/* The settings of one validated config object (with export_format). */
static void settle_all(const json_t *obj, hfx_settings *s) {
    const hfx_format *f = hfx_format_find(json_string_value(json_object_get(obj, "export_format")));
    *s = (hfx_settings){.json = obj, .format = f, .dtype = HFX_DTYPE_F32, .logits_to_keep = -1, .tables_bits = -1,
                        .head_bits = -1, .group_size = -1, .symmetric = -1, .reduce_range = -1, .normalize = -1};
    for (int i = 0; i < f->n_options; i++) s->opt[i] = f->options[i].dflt;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int common, own;
        const hfx_format_option *o = find_key(f, key, &common, &own);
        if (common >= 0) settle(s, common, v);
        if (own < 0) continue;
        if (json_is_integer(v)) s->opt[own] = json_integer_value(v);
        else if (json_is_boolean(v)) s->opt[own] = json_is_true(v);
        else if (o->kind == HFX_OPTION_CHOICE && json_is_string(v)) s->opt[own] = choice_of(o, v);
    }
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
    const hfx_format *f = st ? NULL : hfx_format_find(json_string_value(fmt));
    const char *key;
    json_t *v;
    if (!st) json_object_foreach((json_t *)obj, key, v) {
        if (strcmp(key, "export_format") == 0) continue;
        if ((st = check_key(f, key, v, err))) break;
    }
    for (int i = 0; f && i < f->n_options && !st; i++) {
        const hfx_format_option *o = &f->options[i];
        const json_t *v2 = json_object_get(obj, o->key);
        if (o->requires && v2 && !json_is_null(v2) && json_is_false(json_object_get(obj, o->requires)))
            st = hfx_fail(err, HFX_ERR_INVALID, "export config: '%s' requires '%s' true", o->key, o->requires);
    }
    if (st && *where) hfx_error_prefix(err, "component%s", where);
    return st;
}

/* Read every component's settings again (after a parse or a change). */
static void settle_config(hfx_export_config *c) {
    if (!c->per_component) {
        settle_all(c->obj, &c->settings[0]);
        return;
    }
    size_t i = 0;
    for (void *it = json_object_iter(c->obj); it; it = json_object_iter_next(c->obj, it))
        settle_all(json_object_iter_value(it), &c->settings[i++]);
}

/* A config of obj (owned), its settings read. */
static hfx_status new_config(json_t *obj, bool per_component, hfx_export_config **out, hfx_error *err) {
    hfx_export_config *c = calloc(1, sizeof *c);
    size_t n = per_component ? json_object_size(obj) : 1;
    if (c) c->settings = calloc(n, sizeof *c->settings);
    if (!c || !c->settings) {
        if (c) free(c);
        json_decref(obj);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    c->obj = obj;
    c->per_component = per_component;
    settle_config(c);
    *out = c;
    return HFX_OK;
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
    return new_config(obj, per_component, out, err);
}

hfx_status hfx_export_config_set(hfx_export_config *c, const char *key, const char *json_value,
                                 hfx_error *err) {
    json_error_t je;
    json_t *v = json_loads(json_value, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!v && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!v) return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s': bad JSON value: %s", key, je.text);
    bool format = strcmp(key, "export_format") == 0;
    hfx_status st = format ? check_format(v, err) : check_key(c->settings[0].format, key, v, err);
    /* a per-component config gets the value in every component */
    size_t n = c->per_component ? json_object_size(c->obj) : 1;
    void *it = c->per_component ? json_object_iter(c->obj) : NULL;
    /* a new format must accept every key already set (an OpenVINO-only key under onnx is refused,
     * not carried into an export_config.json that hfx itself would reject) */
    const hfx_format *to = format && !st ? hfx_format_find(json_string_value(v)) : NULL;
    for (size_t i = 0; i < n && !st && format; i++) {
        const json_t *target = c->per_component ? json_object_iter_value(it) : c->obj;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)target, k, x) if (strcmp(k, "export_format") != 0 &&
                                                        (st = check_key(to, k, x, err))) break;
        if (it) it = json_object_iter_next(c->obj, it);
    }
    it = c->per_component ? json_object_iter(c->obj) : NULL;
    for (size_t i = 0; i < n && !st; i++) {
        json_t *target = c->per_component ? json_object_iter_value(it) : c->obj;
        if (json_object_set(target, key, v) != 0) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        if (it) it = json_object_iter_next(c->obj, it);
    }
    json_decref(v);
    settle_config(c); /* what was set, in every component (a failed set leaves earlier ones set) */
    return st;
}

const hfx_settings *hfx_export_config_settings(const hfx_export_config *c, const char *name) {
    if (!c->per_component || !name) return &c->settings[0];
    size_t i = 0;
    for (void *it = json_object_iter(c->obj); it; it = json_object_iter_next(c->obj, it), i++)
        if (strcmp(json_object_iter_key(it), name) == 0) return &c->settings[i];
    return NULL;
}

char *hfx_export_config_to_json(const hfx_export_config *c) {
    return json_dumps(c->obj, JSON_INDENT(2) | JSON_SORT_KEYS);
}

void hfx_export_config_free(hfx_export_config *c) {
    if (!c) return;
    json_decref(c->obj);
    free(c->settings);
    free(c);
}

hfx_export_config *hfx_export_config_clone(const hfx_export_config *c) {
    json_t *obj = json_deep_copy(c->obj);
    hfx_export_config *n = NULL;
    if (obj && new_config(obj, c->per_component, &n, NULL)) n = NULL;
    return n;
}

/* A head's or tables' quantization of `bits` under the primary one p: p's blocks and symmetry
 * at p's width, the format's defaults at another (NNCF's int8 backup: per row, asymmetric). */
static hfx_quant derived(const hfx_format *f, const hfx_quant *p, hfx_quant_rule rule, int bits) {
    hfx_quant q = {.rule = rule, .bits = bits, .block = p->block, .symmetric = p->symmetric,
                   .scale_dtype = p->scale_dtype};
    if (bits != p->bits) q.block = bits == 4 ? f->quant.block4 : f->quant.block8, q.symmetric = f->quant.symmetric;
    return q;
}

int hfx_settings_quant(const hfx_settings *s, const hfx_format *f, hfx_quant_plan *plan) {
    int tables = s->tables_bits, head = s->head_bits;
    if (!s->quantize)
        return s->group_size >= 0 || s->symmetric >= 0 || s->reduce_range >= 0 || tables >= 0 || head >= 0 ? -1 : 0;
    int bits = s->quantize == HFX_QUANTIZE_INT4 ? 4 : 8;
    if (s->quantize == HFX_QUANTIZE_GGUF || s->quantize == HFX_QUANTIZE_STORED) {
        /* the blocks as stored, under the format's rule (the pass picks them) */
        if (s->group_size >= 0 || s->symmetric >= 0 || s->reduce_range >= 0 || tables >= 0 || head >= 0) return -3;
        plan->linears = plan->head = (hfx_quant){.rule = f->quant.rule, .from_blocks = true};
        plan->tables = (hfx_quant){0};
        plan->head_follows_table = false;
        return 1;
    }
    if (s->quantize == HFX_QUANTIZE_INT8_DYNAMIC) { /* onnxruntime's quantize_dynamic: the format checks it can */
        hfx_quant p = {.rule = HFX_QUANT_RULE_ORT_DYNAMIC, .bits = 8,
                       .block = s->group_size >= 0 ? s->group_size : HFX_QUANT_TENSOR,
                       .symmetric = s->symmetric >= 0 ? s->symmetric == 1 : true, /* int8 weights */
                       .scale_dtype = HFX_DTYPE_F32, .reduce_range = s->reduce_range == 1};
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
    if (s->reduce_range >= 0) return -2;
    hfx_quant p = {.rule = f->quant.rule, .bits = bits,
                   .block = s->group_size >= 0 ? s->group_size : bits == 4 ? f->quant.block4 : f->quant.block8,
                   .symmetric = s->symmetric >= 0 ? s->symmetric == 1 : f->quant.symmetric,
                   .scale_dtype = HFX_DTYPE_F32};
    bool nncf = f->quant.int8_tables_and_head;
    if (tables < 0) tables = nncf ? 8 : 0;
    plan->linears = p;
    plan->tables = derived(f, &p, f->quant.table_rule, tables);
    plan->head = derived(f, &p, f->quant.rule, head >= 0 ? head : nncf ? 8 : bits);
    plan->head_follows_table = head < 0 && nncf;
    return 1;
}

bool hfx_settings_moe_gather(const hfx_settings *s, bool single_token) {
    if (s->moe == HFX_MOE_ALL) return false;
    if (s->moe == HFX_MOE_GATHERED) return true;
    return single_token; /* auto: measured in docs/ARCHITECTURE.md */
}
