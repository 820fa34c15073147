/* The keys a lineage's transformers config class derives in its __post_init__ when config.json leaves them out, where
 * the template would otherwise read something else: LFM3's layer pattern, Cohere2-MoE's layer and MLP patterns from
 * its dense prefix. The parse reads them from a view of the config (decoder_parse.c), as if config.json had them. */
#include "arch/decoder_blocks.h"

#include <string.h>

/* config.json's integer `key` within [lo, hi], else `dflt` (a malformed value is the parse's to report). */
static json_int_t int_or(hfx_cfg c, const char *key, json_int_t dflt, json_int_t lo, json_int_t hi) {
    const json_t *v = json_object_get(c.obj, key);
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi ? json_integer_value(v)
                                                                                            : dflt;
}

static bool absent(hfx_cfg c, const char *key) {
    const json_t *v = json_object_get(c.obj, key);
    return !v || json_is_null(v);
}

/* LFM3: layer i full when i % 4 == 2, sliding when i % 4 == 0 and i > 0, else a convolution. */
static const char *lfm3_type(json_int_t i, hfx_cfg c) {
    (void)c;
    return i % 4 == 2 ? "full_attention" : i % 4 == 0 && i > 0 ? "sliding_attention" : "conv";
}

/* Cohere2-MoE: the first first_k_dense_replace layers sliding but every prefix_dense_sliding_window_pattern-th (default
 * 1: all full), the rest but every sliding_window_pattern-th (default 4), counted from the prefix's end. */
static const char *cohere2_moe_type(json_int_t i, hfx_cfg c) {
    json_int_t dense = int_or(c, "first_k_dense_replace", 0, 0, 4096);
    json_int_t period = i < dense ? int_or(c, "prefix_dense_sliding_window_pattern", 1, 1, 1 << 20)
                                  : int_or(c, "sliding_window_pattern", 4, 1, 1 << 20);
    json_int_t j = i < dense ? i : i - dense;
    return (j + 1) % period ? "sliding_attention" : "full_attention";
}

static const char *cohere2_moe_mlp(json_int_t i, hfx_cfg c) {
    return i < int_or(c, "first_k_dense_replace", 0, 0, 4096) ? "dense" : "sparse";
}

/* A list of one string per layer into `out` under `key`, unless config.json has one. */
static bool derive_list(hfx_cfg c, const char *key, const char *(*type)(json_int_t, hfx_cfg), json_t *out) {
    json_int_t n = int_or(c, "num_hidden_layers", 0, 1, 4096);
    if (!absent(c, key) || n == 0) return true;
    json_t *list = json_array();
    for (json_int_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, json_string(type(i, c)))) {
            json_decref(list);
            return false;
        }
    return list && json_object_set_new(out, key, list) == 0;
}

json_t *hfx_dec_derived_keys(const hfx_decoder_desc *d, hfx_cfg c) {
    json_t *out = json_object();
    bool ok = out != NULL;
    if (ok && d->mixers.kind == HFX_MIXERS_SHORT_CONV_SLIDING) ok = derive_list(c, "layer_types", lfm3_type, out);
    if (ok && d->sliding == HFX_SLIDING_DENSE_PREFIX) {
        ok = derive_list(c, "layer_types", cohere2_moe_type, out) && derive_list(c, "mlp_layer_types", cohere2_moe_mlp, out);
        /* the dense layers' width, intermediate_size when null */
        const json_t *width = json_object_get(c.obj, "intermediate_size");
        if (ok && absent(c, "prefix_dense_intermediate_size") && width)
            ok = json_object_set(out, "prefix_dense_intermediate_size", (json_t *)width) == 0;
    }
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    return out;
}
