/* Layers whose shapes differ: each layer's heads and widths from per_layer_config, values that are the keys'
 * projection, layers that attend to an earlier layer's keys and values, and the per-layer embeddings' widths (Gemma 4's
 * config.json, HFX_SHAPES_PER_LAYER_CONFIG); the sliding layers' doubled key/value heads and every layer's value width
 * (MiMo-V2-Flash, HFX_SHAPES_SLIDING_DOUBLE_KV). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* per_layer_config's overrides of layer i (the keys transformers' Gemma 4 attention reads) into s. */
static hfx_status layer_override(hfx_cfg c, const json_t *all, int64_t i, const hfx_decoder_cfg *m, hfx_layer_shape *s,
                                 hfx_error *err) {
    char key[24], where[256];
    snprintf(key, sizeof key, "%lld", (long long)i);
    const json_t *o = json_object_get(all, key);
    if (!o) return HFX_OK;
    snprintf(where, sizeof where, "%s: per_layer_config.%s", c.where, key);
    if (!json_is_object(o)) return hfx_fail(err, HFX_ERR_INVALID, "%s must be an object", where);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (strcmp(k, "head_dim") != 0 && strcmp(k, "num_key_value_heads") != 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: '%s' per layer is not supported (supported: head_dim, "
                                                      "num_key_value_heads)", where, k);
    }
    hfx_cfg lc = {o, where};
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(lc, "head_dim", s->head_dim, 2, 4096, &s->head_dim, err)) ||
        (st = hfx_cfg_int_in_or(lc, "num_key_value_heads", s->kv_heads, 1, m->heads, &s->kv_heads, err)))
        return st;
    return HFX_OK;
}

/* per_layer_config, checked: NULL when the config has none, its keys layer indices below m->layers. */
static hfx_status overrides_of(hfx_cfg c, const hfx_decoder_cfg *m, const json_t **out, hfx_error *err) {
    const json_t *o = json_object_get(c.obj, "per_layer_config");
    *out = NULL;
    if (!o || json_is_null(o)) return HFX_OK;
    if (!json_is_object(o))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'per_layer_config' must be an object of layer indices", c.where);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        char *end;
        long long i = strtoll(k, &end, 10);
        if (!*k || *end || i < 0 || i >= m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: per_layer_config key '%s' is not a layer index in [0, %lld)",
                            c.where, k, (long long)m->layers);
    }
    *out = o;
    return HFX_OK;
}

/* Every layer's head width and key/value heads: per_layer_config where the config has it, else (as
 * transformers' config derives it) the full layers' global_head_dim (default 512) and, with
 * attention_k_eq_v, num_global_key_value_heads. One rotary table per layer type: a type's layers
 * must share their width. */
static hfx_status layer_geometry(hfx_cfg c, hfx_decoder_cfg *m, bool k_eq_v, hfx_error *err) {
    hfx_status st;
    const json_t *overrides;
    int64_t global_head_dim = 512, global_kv = m->kv_heads;
    if ((st = overrides_of(c, m, &overrides, err)) ||
        (!overrides && ((st = hfx_cfg_int_in_or(c, "global_head_dim", 512, 2, 4096, &global_head_dim, err)) ||
                        (k_eq_v && (st = hfx_cfg_int_in_or(c, "num_global_key_value_heads", m->kv_heads, 1, m->heads,
                                                           &global_kv, err))))))
        return st;
    for (int64_t i = 0; i < m->layers; i++) {
        hfx_layer_shape *s = &m->shape[i];
        bool full = m->window[i] == 0;
        *s = (hfx_layer_shape){m->head_dim, m->kv_heads, m->intermediate, i, full && k_eq_v, m->head_dim, 0.0};
        if (!overrides && full) s->head_dim = global_head_dim, s->kv_heads = global_kv;
        if ((st = layer_override(c, overrides, i, m, s, err))) return st;
        s->v_dim = s->head_dim;
        if (m->heads % s->kv_heads)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer %lld: num_attention_heads (%lld) is not a multiple of its "
                                                  "num_key_value_heads (%lld)", c.where, (long long)i,
                            (long long)m->heads, (long long)s->kv_heads);
    }
    for (int64_t i = 1; i < m->layers; i++)
        for (int64_t j = 0; j < i; j++)
            if ((m->window[j] == 0) == (m->window[i] == 0) && m->shape[j].head_dim != m->shape[i].head_dim)
                return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layers %lld and %lld are of one type but their head_dim "
                                                          "differ (%lld, %lld)", c.where, (long long)j, (long long)i,
                                (long long)m->shape[j].head_dim, (long long)m->shape[i].head_dim);
    return HFX_OK;
}

/* The last num_kv_shared_layers layers read the keys and values of the last earlier layer of their
 * type (transformers' kv_sharing_modes "reuse" and "store"), their MLP twice as wide with
 * use_double_wide_mlp; only the layers before them cache. */
static hfx_status kv_sharing(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t shared;
    bool double_wide;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "num_kv_shared_layers", 0, 0, m->layers - 1, &shared, err)) ||
        (st = hfx_cfg_bool_or(c, "use_double_wide_mlp", false, &double_wide, err)))
        return st;
    int64_t first = m->layers - shared;
    for (int64_t i = first; i < m->layers; i++) {
        int64_t from = -1;
        for (int64_t j = first - 1; j >= 0 && from < 0; j--)
            if ((m->window[j] == 0) == (m->window[i] == 0)) from = j;
        if (from < 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer %lld shares the keys and values of an earlier %s layer, "
                                                  "but none of the first %lld layers is one (num_kv_shared_layers %lld)",
                            c.where, (long long)i, m->window[i] ? "sliding_attention" : "full_attention",
                            (long long)first, (long long)shared);
        hfx_layer_shape *s = &m->shape[i];
        if (m->shape[from].kv_heads != s->kv_heads) /* (one type: one window, one width) */
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer %lld shares layer %lld's keys and values but its "
                                                  "num_key_value_heads differ", c.where, (long long)i, (long long)from);
        s->kv_from = from;
        s->values_are_keys = m->shape[from].values_are_keys;
        if (double_wide) s->intermediate = 2 * m->intermediate;
    }
    return HFX_OK;
}

/* Per-layer embeddings: hidden_size_per_layer_input (default 256; 0 or null: none) and their table's
 * vocabulary (default 262144). */
static hfx_status per_layer_inputs(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    const json_t *w = json_object_get(c.obj, "hidden_size_per_layer_input");
    m->ple.width = 0;
    if (!(w && json_is_null(w)) &&
        (st = hfx_cfg_int_in_or(c, "hidden_size_per_layer_input", 256, 0, 1 << 16, &m->ple.width, err)))
        return st;
    if (m->ple.width * m->layers > (int64_t)1 << 24)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size_per_layer_input × num_hidden_layers is out of range",
                        c.where);
    return hfx_cfg_int_in_or(c, "vocab_size_per_layer_input", 262144, 1, INT32_MAX, &m->ple.vocab, err);
}

/* Layer i's entry of config.json's per-layer list `key` (NULL where the key is absent or null), checked an array of one
 * per layer. */
static hfx_status layer_list(hfx_cfg c, const char *key, const hfx_decoder_cfg *m, const json_t **out, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) return HFX_OK;
    if (!json_is_array(v) || (int64_t)json_array_size(v) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of one value per layer (%lld)", c.where, key,
                        (long long)m->layers);
    *out = v;
    return HFX_OK;
}

/* Gemma 3n: each layer's MLP width (intermediate_size a list, or one number for all) and activation sparsity
 * (activation_sparsity_pattern, in [0, 1); absent: 0.95 on the first 10 layers where there are more than 10, as
 * transformers' config derives it); every layer head_dim wide with num_key_value_heads. */
static hfx_status per_layer_mlp(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *widths, *sparsity;
    hfx_status st;
    if ((st = layer_list(c, "intermediate_size", m, &widths, err)) ||
        (st = layer_list(c, "activation_sparsity_pattern", m, &sparsity, err)))
        return st;
    if (!widths && !m->intermediate) return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'intermediate_size' is missing", c.where);
    int64_t widest = m->intermediate;
    for (int64_t i = 0; i < m->layers; i++) {
        hfx_layer_shape *s = &m->shape[i];
        *s = (hfx_layer_shape){m->head_dim, m->kv_heads, m->intermediate, i, false, m->head_dim, 0.0};
        const json_t *w = widths ? json_array_get(widths, (size_t)i) : NULL, *f = sparsity ? json_array_get(sparsity, (size_t)i) : NULL;
        if (w && (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 1 << 24))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: intermediate_size[%lld] must be an integer in [1, %d]", c.where,
                            (long long)i, 1 << 24);
        if (w) s->intermediate = json_integer_value(w);
        if (f && (!json_is_number(f) || !(json_number_value(f) >= 0 && json_number_value(f) < 1)))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: activation_sparsity_pattern[%lld] must be a number in [0, 1)",
                            c.where, (long long)i);
        s->sparsity = f ? json_number_value(f) : !sparsity && m->layers > 10 && i < 10 ? 0.95 : 0.0;
        if (s->intermediate > widest) widest = s->intermediate;
    }
    m->intermediate = widest;
    return HFX_OK;
}

/* MiMo-V2-Flash: twice the key/value heads on the sliding layers, values of their own width, scaled. */
static hfx_status sliding_double_kv(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t v_dim;
    hfx_status st;
    const json_t *scale = json_object_get(c.obj, "attention_value_scale");
    if ((st = hfx_cfg_int_in_or(c, "v_head_dim", 128, 1, 4096, &v_dim, err)) ||
        (!(scale && json_is_null(scale)) &&
         (st = hfx_cfg_num_or(c, "attention_value_scale", 0.707, &m->value_scale, err))))
        return st;
    if (!isfinite(m->value_scale))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: attention_value_scale %g is not a finite number", c.where,
                        m->value_scale);
    if (!(m->shape = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->shape)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) {
        int64_t kv = m->window[i] ? 2 * m->kv_heads : m->kv_heads;
        if (kv > m->heads || m->heads % kv)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: num_attention_heads (%lld) is not a multiple of the sliding "
                                                  "layers' 2 · num_key_value_heads (%lld)", c.where,
                            (long long)m->heads, (long long)kv);
        m->shape[i] = (hfx_layer_shape){m->head_dim, kv, m->intermediate, i, false, v_dim, 0.0};
    }
    return HFX_OK;
}

hfx_status hfx_dec_parse_shapes(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                hfx_error *err) {
    m->shape = NULL;
    m->ple = (hfx_decoder_ple){0, 0};
    hfx_status st;
    if ((m->layout == HFX_LAYOUT_SANDWICH_PER_LAYER || m->layout == HFX_LAYOUT_ALTUP) && (st = per_layer_inputs(c, m, err)))
        return st;
    m->value_scale = 1.0;
    if (d->shapes == HFX_SHAPES_UNIFORM) return HFX_OK;
    if (d->shapes == HFX_SHAPES_SLIDING_DOUBLE_KV) return sliding_double_kv(c, arena, m, err);
    if (d->shapes == HFX_SHAPES_PER_LAYER_MLP) {
        if (!(m->shape = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->shape)))
            return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        return (st = per_layer_mlp(c, m, err)) ? st : kv_sharing(c, m, err);
    }
    bool k_eq_v;
    const char *bidirectional;
    if ((st = hfx_cfg_bool_or(c, "attention_k_eq_v", false, &k_eq_v, err)) ||
        (st = hfx_cfg_str_or(c, "use_bidirectional_attention", "none", &bidirectional, err)))
        return st;
    if (strcmp(bidirectional, "all") == 0) /* "vision": the image tokens', which a text model has none of */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: use_bidirectional_attention \"all\" (every token attending both "
                                                  "ways) is not supported for %s", c.where, d->architecture);
    if (strcmp(bidirectional, "none") != 0 && strcmp(bidirectional, "vision") != 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: use_bidirectional_attention '%s' (known: \"all\", \"vision\", null)",
                        c.where, bidirectional);
    m->shape = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->shape);
    if (!m->shape) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if ((st = layer_geometry(c, m, k_eq_v, err)) || (st = kv_sharing(c, m, err))) return st;
    return HFX_OK;
}
