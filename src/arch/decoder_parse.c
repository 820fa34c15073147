/* The decoder-only template's config.json: the descriptor's rules applied to the config, into a
 * hfx_decoder_cfg (the blocks' own fields are read by moe.c, mla.c and decoder_mixers.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/half.h"
#include "base/status.h"

/* ---- config.json ---- */

/* GPT-Neo's layer n (when there is one) of kind t: "global", or "local" windowed by `window`; false for
 * another name. */
static bool set_attention_kind(hfx_decoder_cfg *m, int64_t n, const char *t, int64_t window) {
    if (!t || (strcmp(t, "global") != 0 && strcmp(t, "local") != 0)) return false;
    if (n < m->layers) m->window[n] = strcmp(t, "local") == 0 ? window : 0;
    return true;
}

/* GPT-Neo's layers: attention_layers ("global" / "local"), else attention_types [[[types...], repeat], ...]
 * expanded as its config does; local layers windowed by window_size. */
static hfx_status parse_attention_types(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t window, n = 0;
    hfx_status st = hfx_cfg_int_in_or(c, "window_size", 256, 1, INT32_MAX, &window, err);
    if (st) return st;
    const json_t *list = json_object_get(c.obj, "attention_layers");
    if (json_is_array(list)) {
        for (size_t i = 0; i < json_array_size(list) && n <= m->layers; i++, n++)
            if (!set_attention_kind(m, n, json_string_value(json_array_get(list, i)), window))
                return hfx_fail(err, HFX_ERR_INVALID, "%s: attention_layers[%zu] must be \"global\" or \"local\"",
                                c.where, i);
    } else {
        const json_t *types = json_object_get(c.obj, "attention_types");
        static const char dflt[] = "[[[\"global\", \"local\"], 12]]";
        json_t *owned = types ? NULL : json_loads(dflt, 0, NULL);
        if (!types) types = owned;
        for (size_t g = 0; json_is_array(types) && g < json_array_size(types) && n <= m->layers; g++) {
            const json_t *item = json_array_get(types, g), *names = json_array_get(item, 0);
            const json_t *repeat = json_array_get(item, 1);
            if (!json_is_array(names) || !json_is_integer(repeat) || json_integer_value(repeat) < 0) {
                json_decref(owned);
                return hfx_fail(err, HFX_ERR_INVALID, "%s: attention_types[%zu] must be [[\"global\" | \"local\", ...], "
                                                      "repeat]", c.where, g);
            }
            for (json_int_t r = 0; r < json_integer_value(repeat) && n <= m->layers; r++)
                for (size_t k = 0; k < json_array_size(names) && n <= m->layers; k++, n++) {
                    const char *t = json_string_value(json_array_get(names, k));
                    if (!set_attention_kind(m, n, t, window)) {
                        json_decref(owned);
                        return hfx_fail(err, HFX_ERR_INVALID, "%s: attention_types[%zu] names \"%s\" (global, local)",
                                        c.where, g, t ? t : "(not a string)");
                    }
                }
        }
        json_decref(owned);
    }
    if (n != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: attention_layers / attention_types give %s%lld layers, not "
                                              "num_layers (%lld)", c.where, n > m->layers ? "more than " : "",
                        (long long)(n > m->layers ? m->layers : n), (long long)m->layers);
    return HFX_OK;
}

/* Llama 4's chunked layers (m->chunked, allocated): layer_types' "chunked_attention" ones, else the rotary
 * layers when attention_chunk_size (default 8192) is set; no windows. */
static hfx_status parse_chunks(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *size = json_object_get(c.obj, "attention_chunk_size");
    hfx_status st = size && json_is_null(size) ? HFX_OK
                                               : hfx_cfg_int_in_or(c, "attention_chunk_size", 8192, 1, INT32_MAX, &m->chunk, err);
    if (st) return st;
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (types && !json_is_null(types) && (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) strings",
                        c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        m->window[i] = 0;
        m->chunked[i] = m->chunk > 0 && !m->no_rope[i];
        if (!types || json_is_null(types)) continue;
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        if (!t || (strcmp(t, "full_attention") != 0 && strcmp(t, "chunked_attention") != 0))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layer_types[%lld] = '%s' (supported: full_attention, "
                                                      "chunked_attention)", c.where, (long long)i, t ? t : "(not a string)");
        m->chunked[i] = strcmp(t, "chunked_attention") == 0;
        if (m->chunked[i] && m->chunk <= 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer_types[%lld] is chunked_attention but attention_chunk_size is "
                                                  "null", c.where, (long long)i);
    }
    return HFX_OK;
}

/* Each layer's window from layer_types: sliding_attention layers windowed, full_attention (and a short-convolution
 * model's conv) layers not. */
static hfx_status windows_of_layer_types(const hfx_decoder_desc *d, hfx_cfg c, const json_t *types, int64_t window,
                                         hfx_decoder_cfg *m, hfx_error *err) {
    if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) strings",
                        c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        bool conv = d->mixers.kind == HFX_MIXERS_SHORT_CONV || d->mixers.kind == HFX_MIXERS_SHORT_CONV_SLIDING;
        bool recurrent = d->mixers.kind == HFX_MIXERS_RG_LRU_BY_TYPE && t && strcmp(t, "linear_attention") == 0;
        if (t && (strcmp(t, "full_attention") == 0 || (conv && strcmp(t, "conv") == 0) || recurrent)) m->window[i] = 0;
        else if (t && strcmp(t, "sliding_attention") == 0) {
            if (window <= 0)
                return hfx_fail(err, HFX_ERR_INVALID,
                                "%s: layer_types[%lld] is sliding_attention but no sliding_window is in effect",
                                c.where, (long long)i);
            m->window[i] = window;
        } else
            return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                            "%s: layer_types[%lld] = '%s' (supported: full_attention, sliding_attention)",
                            c.where, (long long)i, t ? t : "(not a string)");
    }
    return HFX_OK;
}

static hfx_status parse_sliding(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                                hfx_error *err) {
    hfx_status st;
    int64_t window = 0;
    if (d->sliding == HFX_SLIDING_NONE) return HFX_OK;
    if (d->sliding == HFX_SLIDING_ATTENTION_TYPES) return parse_attention_types(c, m, err);
    if (d->sliding == HFX_SLIDING_CHUNKED) return parse_chunks(c, m, err);
    if (!json_object_get(c.obj, "sliding_window")) window = d->defaults.window; /* absent, not null */
    else if ((st = hfx_cfg_int_or(c, "sliding_window", 0, &window, err))) return st;
    if ((st = hfx_cfg_check_range(c, "sliding_window", window, 0, INT32_MAX, err))) return st;
    if (d->sliding == HFX_SLIDING_ALL) {
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = window;
        return HFX_OK;
    }
    bool use_sliding = false;
    bool gated_max_rule = d->sliding == HFX_SLIDING_MAX_WINDOW || d->sliding == HFX_SLIDING_EVEN_BELOW_MAX;
    bool max_rule = gated_max_rule || d->sliding == HFX_SLIDING_FROM_MAX_WINDOW;
    if (gated_max_rule || d->sliding == HFX_SLIDING_NO_ROPE) {
        if ((st = hfx_cfg_bool_or(c, "use_sliding_window", false, &use_sliding, err))) return st;
        /* SmolLM3's eager masks window every sliding_attention layer, use_sliding_window or not */
        if (!use_sliding && gated_max_rule) window = 0;
    }
    /* explicit layer_types win; otherwise transformers derives them */
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (types && !json_is_null(types)) return windows_of_layer_types(d, c, types, window, m, err);
    if (d->sliding == HFX_SLIDING_TYPES_OR_ALL) {
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = window;
        return HFX_OK;
    }
    if (d->sliding == HFX_SLIDING_NO_ROPE) { /* the config derives sliding_attention for the no-rope layers */
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = use_sliding && window > 0 && m->no_rope[i] ? window : 0;
        return HFX_OK;
    }
    if (max_rule) {
        int64_t max_window_layers;
        bool from = d->sliding != HFX_SLIDING_EVEN_BELOW_MAX;
        int64_t dflt = d->sliding == HFX_SLIDING_FROM_MAX_WINDOW ? d->sliding_pattern : 28;
        if ((st = hfx_cfg_int_or(c, "max_window_layers", dflt, &max_window_layers, err))) return st;
        for (int64_t i = 0; i < m->layers; i++)
            m->window[i] = window > 0 && (from ? i >= max_window_layers : (i + 1) % 2 && i < max_window_layers)
                               ? window : 0;
        return HFX_OK;
    }
    if (d->sliding == HFX_SLIDING_FIRST_OF_PATTERN) {
        if (window <= 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: sliding_window must be set (transformers builds the sliding "
                                                  "layers' mask from it)", c.where);
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = i % d->sliding_pattern ? window : 0;
        return HFX_OK;
    }
    int64_t pattern;
    pattern = d->sliding_pattern;
    if ((d->sliding == HFX_SLIDING_PATTERN_OR_CONFIG || d->sliding == HFX_SLIDING_EVERY_NTH_GLOBAL) &&
        (st = hfx_cfg_int_in_or(c, d->sliding == HFX_SLIDING_EVERY_NTH_GLOBAL ? "global_attn_every_n_layers"
                                                                              : "sliding_window_pattern",
                                d->sliding_pattern, 1, 1 << 20, &pattern, err)))
        return st;
    for (int64_t i = 0; i < m->layers; i++) m->window[i] = (i + 1) % pattern ? window : 0;
    return HFX_OK;
}

static hfx_status parse_activation(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                                   hfx_error *err) {
    const char *act;
    const json_t *named = json_object_get(c.obj, d->act.key);
    hfx_status st;
    if (named && json_is_object(named)) { /* {"name": "silu", ...} (DBRX's ffn_act_fn) */
        hfx_cfg inner = {named, c.where};
        if ((st = hfx_cfg_str_or(inner, "name", d->act.dflt, &act, err))) return st;
        if (json_object_size(named) > 1)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s has arguments beside its name, which are not supported",
                            c.where, d->act.key);
    } else if ((st = hfx_cfg_str_or(c, d->act.key, d->act.dflt, &act, err))) {
        return st;
    }
    if (d->act.legacy_gelu_tanh && strcmp(act, "gelu") == 0) act = "gelu_pytorch_tanh";
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)",
                        c.where, d->act.key, act, hfx_activation_names());
    return HFX_OK;
}

static hfx_status parse_biases(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                               hfx_error *err) {
    bool attention_bias = false, mlp_bias = false;
    hfx_status st = HFX_OK;
    bool qkv_bias = d->bias.rule == HFX_BIAS_QKV;
    if (d->bias.rule == HFX_BIAS_FROM_CONFIG)
        st = hfx_cfg_bool_or(c, "attention_bias", d->bias.default_on, &attention_bias, err);
    if (d->bias.rule == HFX_BIAS_QKV_FROM_CONFIG || (d->bias.rule == HFX_BIAS_O_ONLY && d->bias.qkv_key))
        st = hfx_cfg_bool_or(c, d->bias.qkv_key, d->bias.default_on, &qkv_bias, err);
    if (!st && d->bias.rule == HFX_BIAS_USE_BIAS) {
        st = hfx_cfg_bool_or(c, d->bias.qkv_key ? d->bias.qkv_key : "use_bias", d->bias.default_on, &attention_bias, err);
        mlp_bias = attention_bias;
    }
    if (!st && (d->bias.mlp == HFX_MLP_BIAS_FROM_CONFIG || d->bias.mlp == HFX_MLP_BIAS_FROM_CONFIG_ON))
        st = hfx_cfg_bool_or(c, "mlp_bias", d->bias.mlp == HFX_MLP_BIAS_FROM_CONFIG_ON, &mlp_bias, err);
    m->bias.q = m->bias.k = m->bias.v = attention_bias || qkv_bias;
    m->bias.o = attention_bias || d->bias.rule == HFX_BIAS_O_ONLY;
    if (!st && d->bias.o_key) st = hfx_cfg_bool_or(c, d->bias.o_key, false, &m->bias.o, err);
    m->bias.mlp = mlp_bias || d->bias.mlp == HFX_MLP_BIAS_ALWAYS;
    m->bias.down = m->bias.mlp || d->bias.mlp == HFX_MLP_BIAS_DOWN;
    m->bias.head = d->head == HFX_HEAD_LM_BIASED || d->head == HFX_HEAD_LM_TRANSFORM ||
                   (d->head == HFX_HEAD_LM_USE_BIAS && attention_bias);
    if (!st && (d->head == HFX_HEAD_LM_BIAS_KEY || (d->head == HFX_HEAD_LM_TRANSFORM && d->head_bias_key)))
        st = hfx_cfg_bool_or(c, d->head_bias_key, d->head == HFX_HEAD_LM_TRANSFORM, &m->bias.head, err);
    return st;
}

/* The prediction-head transform's activation and dense bias (HFX_HEAD_LM_TRANSFORM, HFX_HEAD_TRANSFORM_CLASSIFIER):
 * act.head_key's value (act.head its default), act.head's, or hidden_act's; biased as act.head_dense_bias_key says. */
static hfx_status head_keys(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const char *name = d->act.head;
    hfx_status st;
    m->head_act = m->act, m->head_dense_bias = true;
    if (d->act.head_key && (st = hfx_cfg_str_or(c, d->act.head_key, d->act.head ? d->act.head : "gelu", &name, err)))
        return st;
    if (name && !hfx_activation_from_name(name, &m->head_act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (%s)", c.where,
                        d->act.head_key ? d->act.head_key : "the head's activation", name, hfx_activation_names());
    if (d->act.head_dense_bias_key && (st = hfx_cfg_bool_or(c, d->act.head_dense_bias_key, false, &m->head_dense_bias, err)))
        return st;
    return HFX_OK;
}

/* The multipliers some families add: an optional positive number, 1 (or 0: none) otherwise. */
static hfx_status positive_or(hfx_cfg c, const char *key, double dflt, double *out, hfx_error *err) {
    hfx_status st = hfx_cfg_num_or(c, key, dflt, out, err);
    if (!st && !(*out > 0) && *out != dflt)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' = %g must be > 0", c.where, key, *out);
    return st;
}

/* MiniCPM's scalings: scale_emb on the embeddings, scale_depth / √layers on what each block adds, the
 * logits divided by hidden / dim_model_base; a null scale_depth or dim_model_base scales by nothing. */
static hfx_status parse_scale_emb_depth(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    double depth, base, root = sqrt((double)m->layers);
    const json_t *d = json_object_get(c.obj, "scale_depth"), *b = json_object_get(c.obj, "dim_model_base");
    hfx_status st;
    if ((st = positive_or(c, "scale_emb", 12.0, &m->mult.embed, err)) ||
        (st = positive_or(c, "scale_depth", d && json_is_null(d) ? root : 1.4, &depth, err)) ||
        (st = positive_or(c, "dim_model_base", b && json_is_null(b) ? (double)m->hidden : 256.0, &base, err)))
        return st;
    m->mult.residual = depth / root;
    m->mult.logits_div = (double)m->hidden / base;
    return HFX_OK;
}

static hfx_status parse_scales(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                               hfx_error *err) {
    hfx_status st = HFX_OK;
    m->scale = d->scores.scale == HFX_SCALE_ONE ? 1.0 : 1.0 / sqrt((double)m->head_dim);
    m->mult.embed = m->mult.residual = m->mult.logits_div = 1.0;
    if (d->scores.scale == HFX_SCALE_BY_CONFIG_LAYER || d->scores.scale == HFX_SCALE_BY_CONFIG) {
        bool by_dim, by_layer = false;
        if ((st = hfx_cfg_bool_or(c, "scale_attn_weights", true, &by_dim, err)) ||
            (d->scores.scale == HFX_SCALE_BY_CONFIG_LAYER &&
             (st = hfx_cfg_bool_or(c, "scale_attn_by_inverse_layer_idx", false, &by_layer, err))))
            return st;
        if (!by_dim) m->scale = 1.0;
        m->scale_by_layer = by_layer;
    }
    if (d->scores.scale == HFX_SCALE_QUERY_PRE_ATTN) {
        double q;
        if ((st = positive_or(c, "query_pre_attn_scalar", 256, &q, err))) return st;
        m->scale = pow(q, -0.5);
    } else if (d->scores.scale == HFX_SCALE_ATTN_MULTIPLIER || d->scores.scale == HFX_SCALE_ATTN_MULTIPLIER_OR_HEAD_DIM) {
        double dflt = d->scores.scale == HFX_SCALE_ATTN_MULTIPLIER ? 1.0 : m->scale; /* (m->scale: head_dim^-0.5) */
        if ((st = positive_or(c, "attention_multiplier", dflt, &m->scale, err))) return st;
    } else if (d->scores.scale == HFX_SCALE_SOFTMAX_SCALE) {
        if ((st = positive_or(c, "attn_config.softmax_scale", m->scale, &m->scale, err))) return st;
    } else if (d->scores.scale == HFX_SCALE_HALF_HEAD_DIM) {
        m->scale = pow((double)m->head_dim / 2.0, -0.5);
    }
    if (d->multipliers == HFX_MULT_SCALE_EMB_DEPTH && (st = parse_scale_emb_depth(c, m, err))) return st;
    if (d->embed_scale == HFX_EMBED_SQRT_HIDDEN_BF16) /* (a bf16 buffer, read in the model's dtype) */
        m->mult.embed = hfx_bf16_to_f32(hfx_f32_to_bf16((float)sqrt((double)m->hidden)));
    if (d->multipliers == HFX_MULT_MUP_EMBED) {
        bool mup;
        if ((st = hfx_cfg_bool_or(c, "mup_enabled", false, &mup, err))) return st;
        if (mup) m->mult.embed = sqrt((double)m->hidden);
    }
    if ((d->multipliers == HFX_MULT_EMBED_RESIDUAL_LOGITS || d->multipliers == HFX_MULT_EMBED_RESIDUAL_LOGITS_TIMES) &&
        ((st = positive_or(c, "embedding_multiplier", 1.0, &m->mult.embed, err)) ||
         (st = positive_or(c, "residual_multiplier", 1.0, &m->mult.residual, err)) ||
         (st = positive_or(c, "logits_scaling", 1.0, &m->mult.logits_div, err))))
        return st;
    /* an absent key takes the family's default, an explicit null means none */
    if (d->scores.softcaps == HFX_SOFTCAP_ATTN_AND_FINAL &&
        (st = positive_or(c, "attn_logit_softcapping", json_object_get(c.obj, "attn_logit_softcapping") ? 0 : d->defaults.attn_softcap,
                          &m->attn_softcap, err)))
        return st;
    if (d->scores.softcaps != HFX_SOFTCAP_NONE &&
        (st = positive_or(c, "final_logit_softcapping", json_object_get(c.obj, "final_logit_softcapping") ? 0 : d->defaults.final_softcap,
                          &m->final_softcap, err)))
        return st;
    return HFX_OK;
}

/* SmolLM3's layers without rotary: `no_rope_layers` (1: rope, 0: none), else every
 * `no_rope_layer_interval`-th layer (its config's own default). */
static hfx_status parse_no_rope(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                hfx_error *err) {
    m->no_rope = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->no_rope);
    if (!m->no_rope) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = d->positions == HFX_POSITIONS_NONE || m->alibi.on;
    if (d->no_rope == HFX_NO_ROPE_UNLESS_ROPE_TYPE) {
        const char *type;
        hfx_status st = hfx_cfg_str_or(c, "position_embedding_type", "none", &type, err);
        if (st) return st;
        for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = strcmp(type, "rope") != 0;
        return HFX_OK;
    }
    if (d->no_rope == HFX_NO_ROPE_NULL_THETA) {
        const json_t *params = json_object_get(c.obj, "rope_parameters");
        const json_t *theta = json_is_object(params) ? json_object_get(params, "rope_theta") : NULL;
        for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = theta && json_is_null(theta);
        return HFX_OK;
    }
    if (d->no_rope != HFX_NO_ROPE_LIST) return HFX_OK; /* the other rules read the windows (decoder_parse) */
    const json_t *list = json_object_get(c.obj, "no_rope_layers");
    if (!list || json_is_null(list)) {
        int64_t interval;
        hfx_status st = hfx_cfg_int_in_or(c, "no_rope_layer_interval", 4, 1, 1 << 20, &interval, err);
        if (st) return st;
        for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = (i + 1) % interval == 0;
        return HFX_OK;
    }
    if (!json_is_array(list) || (int64_t)json_array_size(list) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'no_rope_layers' must be a list of num_hidden_layers (%lld) 0/1 flags",
                        c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        const json_t *v = json_array_get(list, (size_t)i);
        if (!json_is_integer(v) && !json_is_boolean(v))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: no_rope_layers[%lld] is not 0 or 1", c.where, (long long)i);
        m->no_rope[i] = json_is_integer(v) ? json_integer_value(v) == 0 : json_is_false(v);
    }
    return HFX_OK;
}

/* Falcon's layouts: the new decoder's parallel blocks with one norm or two, else parallel_attn's shared norm or
 * the sequential layer. */
static hfx_status parse_parallel_or_pre(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    bool new_decoder, parallel;
    int64_t norms;
    hfx_status st;
    if ((st = hfx_cfg_bool_or(c, "new_decoder_architecture", false, &new_decoder, err)) ||
        (st = hfx_cfg_bool_or(c, "parallel_attn", true, &parallel, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_ln_in_parallel_attn", new_decoder ? 2 : 1, 1, 2, &norms, err)))
        return st;
    if (new_decoder && !parallel && norms == 1) /* transformers' layer has no MLP input then */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: new_decoder_architecture with parallel_attn false and "
                                                  "num_ln_in_parallel_attn 1 is not a layout transformers builds", c.where);
    m->layout = new_decoder ? (norms == 2 ? HFX_LAYOUT_PARALLEL : HFX_LAYOUT_PARALLEL_SHARED)
                : parallel  ? HFX_LAYOUT_PARALLEL_SHARED
                            : HFX_LAYOUT_PRE;
    return HFX_OK;
}

/* ALiBi's form: Bloom's, Falcon's when its `alibi` says so, MPT's. */
static hfx_status parse_alibi(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->alibi = (hfx_decoder_alibi){d->positions == HFX_POSITIONS_ALIBI || d->positions == HFX_POSITIONS_ALIBI_MAX_BIAS,
                                   0, false};
    if (d->positions == HFX_POSITIONS_ROTARY_OR_ALIBI) {
        if ((st = hfx_cfg_bool_or(c, "alibi", false, &m->alibi.on, err))) return st;
        m->alibi.bf16 = m->alibi.on;
    }
    if (d->positions == HFX_POSITIONS_ALIBI_MAX_BIAS) m->alibi.max_bias = 8; /* MptModel passes no alibi_bias_max */
    return HFX_OK;
}

/* The layer layout, where the config picks it. */
static hfx_status parse_layout(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->layout = d->layout;
    m->no_final_norm = d->layout == HFX_LAYOUT_POST_LN; /* (its layers end normed: GTE) */
    if (d->positions == HFX_POSITIONS_ALIBI) { /* (Bloom's other residual, which no released checkpoint sets) */
        bool normed_residual;
        if ((st = hfx_cfg_bool_or(c, "apply_residual_connection_post_layernorm", false, &normed_residual, err))) return st;
        if (normed_residual)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: apply_residual_connection_post_layernorm true is not supported "
                                                      "for %s", c.where, d->architecture);
    }
    if (d->layout == HFX_LAYOUT_PRE_OR_POST_LN) {
        bool before, remove_final, affine;
        if ((st = hfx_cfg_bool_or(c, "do_layer_norm_before", true, &before, err)) ||
            (st = hfx_cfg_bool_or(c, "_remove_final_layer_norm", false, &remove_final, err)) ||
            (st = hfx_cfg_bool_or(c, "layer_norm_elementwise_affine", true, &affine, err))) /* (OPT's switches) */
            return st;
        if (!affine)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layer_norm_elementwise_affine false (norms without weights) is "
                                                      "not supported for %s", c.where, d->architecture);
        m->layout = before ? HFX_LAYOUT_PRE : HFX_LAYOUT_POST_LN;
        m->no_final_norm = !before || remove_final;
    }
    if (d->parallel_from_config) {
        bool parallel;
        if ((st = hfx_cfg_bool_or(c, "use_parallel_residual", false, &parallel, err))) return st;
        m->layout = !parallel ? HFX_LAYOUT_PRE : d->layout == HFX_LAYOUT_PRE ? HFX_LAYOUT_PARALLEL : d->layout;
    }
    if (d->layout == HFX_LAYOUT_PARALLEL_OR_PRE) return parse_parallel_or_pre(c, m, err);
    m->hyper.streams = 0;
    if (d->layout == HFX_LAYOUT_ALTUP && (st = hfx_dec_parse_altup(c, m, err))) return st;
    if ((d->layout == HFX_LAYOUT_HYPER || d->layout == HFX_LAYOUT_HYPER_SINKHORN || d->layout == HFX_LAYOUT_HYPER_GATED) &&
        (st = hfx_dec_parse_hyper(c, m, err)))
        return st;
    bool post_norms = true;
    if (d->layout == HFX_LAYOUT_SANDWICH_BY_CONFIG &&
        (st = hfx_cfg_bool_or(c, d->keys && d->keys->post_norms ? d->keys->post_norms : "use_sandwich_norm", true,
                              &post_norms, err)))
        return st;
    m->no_post_norms = !post_norms;
    return HFX_OK;
}

/* Each layer's blocks: the layout, windows, rotary or not, experts or not, and its token mixer. */
static hfx_status parse_layers(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->layer_types = d->masks_by_layer_type;
    if ((st = parse_layout(d, c, m, err)) || (st = parse_alibi(d, c, m, err))) return st;
    m->window = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->window);
    if (!m->window) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    int64_t config_window = 0; /* the config's sliding_window, for the no-rope rules that read it */
    m->chunk = 0;
    m->chunked = NULL;
    if (d->sliding == HFX_SLIDING_CHUNKED && !(m->chunked = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->chunked)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if ((st = parse_no_rope(d, c, arena, m, err)) || (st = parse_sliding(d, c, m, err))) return st;
    if (d->sliding == HFX_SLIDING_PATTERN_LAST_FULL) m->window[m->layers - 1] = 0; /* whatever layer_types said */
    m->both_ways = false;
    if (d->scores.both_ways_key && (st = hfx_cfg_bool_or(c, d->scores.both_ways_key, false, &m->both_ways, err)))
        return st;
    hfx_both_ways_window ww = d->scores.both_ways_window; /* (the mask keeps |i − j| < window) */
    for (int64_t i = 0; (m->both_ways || d->scores.mask == HFX_MASK_BOTH_WAYS) && i < m->layers; i++)
        if (m->window[i] > 0)
            m->window[i] = ww == HFX_BOTH_WAYS_WINDOW_HALVED      ? m->window[i] / 2 + 1
                           : ww == HFX_BOTH_WAYS_WINDOW_INCLUSIVE ? m->window[i] + 1
                                                                  : m->window[i];
    if ((st = hfx_dec_parse_moe(d, c, arena, m, err)) ||
        (d->no_rope == HFX_NO_ROPE_FULL_IF_WINDOW && (st = hfx_cfg_int_or(c, "sliding_window", 0, &config_window, err))))
        return st;
    if ((d->mixers.kind == HFX_MIXERS_SHORT_CONV || d->mixers.kind == HFX_MIXERS_SHORT_CONV_SLIDING) &&
        (st = hfx_dec_parse_short_conv(d, c, arena, m, err)))
        return st;
    if ((d->mixers.kind == HFX_MIXERS_MAMBA2_BY_TYPE || d->mixers.kind == HFX_MIXERS_MAMBA2_BY_INDEX ||
         d->mixers.kind == HFX_MIXERS_MAMBA_BY_PERIOD || d->mixers.kind == HFX_MIXERS_ONE_BLOCK_BY_TYPE ||
         d->mixers.kind == HFX_MIXERS_RG_LRU_BY_TYPE || d->mixers.kind == HFX_MIXERS_SHARED_BLOCKS_BY_TYPE ||
         d->mixers.kind == HFX_MIXERS_LIGHTNING_BY_TYPE ||
         d->mixers.kind == HFX_MIXERS_DELTA_BY_TYPE) && (st = hfx_dec_parse_hybrid_layers(d, c, arena, m, err)))
        return st;
    if (m->layout == HFX_LAYOUT_HYPER_GATED && (st = hfx_dec_parse_ngram(c, arena, m, err))) return st;
    int64_t prefix_pattern = 1;
    if (d->no_rope == HFX_NO_ROPE_FULL_BUT_DENSE_PREFIX &&
        (st = hfx_cfg_int_in_or(c, "prefix_dense_sliding_window_pattern", 1, 1, 1 << 20, &prefix_pattern, err)))
        return st;
    for (int64_t i = 0; i < m->layers; i++) /* the rules read the windows (and the experts): after their parse */
        if (d->no_rope == HFX_NO_ROPE_FULL_LAYERS || (d->no_rope == HFX_NO_ROPE_FULL_IF_WINDOW && config_window > 0) ||
            d->no_rope == HFX_NO_ROPE_FULL_BUT_DENSE_PREFIX)
            m->no_rope[i] = m->window[i] == 0 && !(d->no_rope == HFX_NO_ROPE_FULL_BUT_DENSE_PREFIX && !m->sparse[i] &&
                                                   prefix_pattern == 1);
    return HFX_OK;
}

/* The options of the blocks: multipliers, q/k norms, the classifier's head, q/k/v clipping. */
static hfx_status parse_block_options(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->mult.logits = 1.0;
    if (d->multipliers == HFX_MULT_EMBED_RESIDUAL_LOGITS_TIMES) /* (logits_scaling, read with the others) */
        m->mult.logits = m->mult.logits_div, m->mult.logits_div = 1.0;
    if (d->multipliers == HFX_MULT_LOGIT_SCALE && (st = hfx_cfg_num_or(c, "logit_scale", d->defaults.logit_scale, &m->mult.logits, err))) return st;
    if (!isfinite(m->mult.logits))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: logit_scale %g is not a finite number", c.where, m->mult.logits);
    m->mult.attn_in = m->mult.attn_out = m->mult.ssm_out = m->mult.key = m->mult.gate = m->mult.down = 1.0;
    if (d->mixers.kind == HFX_MIXERS_PARALLEL_MAMBA2 && (st = hfx_dec_parse_parallel_mamba(d, c, arena, m, err))) return st;
    if (d->attention == HFX_ATTN_MIXTURE && (!m->moe.experts || m->heads != m->kv_heads * m->moe.top_k))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_attention_heads (%lld) must be num_key_value_heads · "
                                              "num_experts_per_tok (%lld · %lld), as %s derives it", c.where,
                        (long long)m->heads, (long long)m->kv_heads, (long long)m->moe.top_k, d->architecture);
    m->head_gate = d->attention == HFX_ATTN_LATENT && d->latent.gate == HFX_MLA_GATE_PER_HEAD;
    if (d->attention == HFX_ATTN_HEAD_GATE && (st = hfx_cfg_bool_or(c, "use_attention_gate", true, &m->head_gate, err)))
        return st;
    m->qk_norm = d->qk_norm;
    if (d->qk_norm_key) {
        bool on;
        if ((st = hfx_cfg_bool_or(c, d->qk_norm_key, d->defaults.qk_norm, &on, err))) return st;
        if (!on) m->qk_norm = HFX_QK_NORM_NONE;
    }
    if (d->head == HFX_HEAD_CLASSIFIER && ((st = hfx_cfg_num_labels(c, &m->labels, err)) ||
                              (st = hfx_cfg_int_in_or(c, "pad_token_id", -1, -1, m->vocab - 1, &m->pad_id, err))))
        return st;
    m->token_types = 0;
    if (d->names && d->names->token_types && /* (one row: every token gets it, as transformers' default ids 0) */
        (st = hfx_cfg_int_in_or(c, "type_vocab_size", 1, 0, 1 << 20, &m->token_types, err)))
        return st;
    if (d->head == HFX_HEAD_TRANSFORM_CLASSIFIER &&
        ((st = hfx_cfg_num_labels(c, &m->labels, err)) ||
         (st = hfx_cfg_int_in_or(c, "pad_token_id", -1, -1, m->vocab - 1, &m->pad_id, err))))
        return st;
    if ((d->head == HFX_HEAD_POOLER_CLASSIFIER || d->head == HFX_HEAD_TOKEN_CLASSIFIER || d->head == HFX_HEAD_QA) &&
        (st = hfx_cfg_num_labels(c, &m->labels, err)))
        return st;
    if (d->head == HFX_HEAD_QA && m->labels != 2) /* transformers splits the two columns: start, end */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: a question-answering head has num_labels 2 (start, end), not %lld",
                        c.where, (long long)m->labels);
    if ((st = head_keys(d, c, m, err))) return st;
    if (d->head == HFX_HEAD_POOLED_CLASSIFIER) {
        const char *pooling;
        if ((st = hfx_cfg_num_labels(c, &m->labels, err)) ||
            (st = hfx_cfg_str_or(c, "classifier_pooling", "late", &pooling, err)))
            return st;
        m->class_pooling = strcmp(pooling, "late") == 0 ? HFX_CLASS_LATE
                           : strcmp(pooling, "mean") == 0 ? HFX_CLASS_MEAN
                                                          : HFX_CLASS_BOS;
        if (m->class_pooling == HFX_CLASS_BOS && strcmp(pooling, "bos") != 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: classifier_pooling '%s' is not one transformers has (bos, "
                                                      "mean, late)", c.where, pooling);
    }
    m->clip_qkv = 0;
    if (d->clip_qkv_key && (st = hfx_cfg_num_or(c, d->clip_qkv_key, 0, &m->clip_qkv, err))) return st;
    if (!(m->clip_qkv >= 0) || m->clip_qkv > 1e30)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g must be positive (or null)", c.where, d->clip_qkv_key,
                        m->clip_qkv);
    return HFX_OK;
}

/* Ministral 3's query temperature: β and the positions it steps by, from the rope parameters. */
static hfx_status parse_query_temperature(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    m->q_temp_beta = 0;
    m->q_temp_step = 1;
    if (d->scores.temperature == HFX_QTEMP_NONE) return HFX_OK;
    if (d->scores.temperature == HFX_QTEMP_NOPE_FLOOR) { /* Llama 4: attn_temperature_tuning, floor_scale, attn_scale */
        bool on;
        hfx_status st;
        if ((st = hfx_cfg_bool_or(c, "attn_temperature_tuning", true, &on, err)) ||
            (st = hfx_cfg_int_in_or(c, "floor_scale", 8192, 1, INT32_MAX, &m->q_temp_step, err)) ||
            (st = hfx_cfg_num_or(c, "attn_scale", 0.1, &m->q_temp_beta, err)))
            return st;
        if (!isfinite(m->q_temp_beta) || fabs(m->q_temp_beta) > 1e6)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: attn_scale %g is not a usable number", c.where, m->q_temp_beta);
        if (!on) m->q_temp_beta = 0;
        return HFX_OK;
    }
    const json_t *p = json_object_get(c.obj, "rope_parameters");
    if (!json_is_object(p)) p = json_object_get(c.obj, "rope_scaling");
    if (!json_is_object(p))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rope_parameters with llama_4_scaling_beta and "
                                              "original_max_position_embeddings is required", c.where);
    char where[256];
    snprintf(where, sizeof where, "%s: rope_parameters", c.where);
    hfx_cfg rc = {p, where};
    hfx_status st;
    if ((st = hfx_cfg_num(rc, "llama_4_scaling_beta", &m->q_temp_beta, err)) ||
        (st = hfx_cfg_int_in(rc, "original_max_position_embeddings", 1, INT32_MAX, &m->q_temp_step, err)))
        return st;
    if (!isfinite(m->q_temp_beta) || fabs(m->q_temp_beta) > 1e6)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: llama_4_scaling_beta %g is not a usable number", where, m->q_temp_beta);
    return HFX_OK;
}

/* One layer's rotary at base θ: the config's rope with its rope_theta replaced (a view of the config). */
static hfx_status rope_at_theta(hfx_cfg c, const hfx_rope_source *src, int64_t dim, double theta, hfx_arena *arena,
                                hfx_decoder_cfg *m, hfx_rope *out, hfx_error *err) {
    json_t *view = json_copy((json_t *)c.obj), *params = json_object_get(c.obj, "rope_parameters");
    json_t *own = json_is_object(params) ? json_copy(params) : NULL;
    bool ok = view && json_object_set_new(view, src->theta_key, json_real(theta)) == 0 &&
              (!json_is_object(params) || (own && json_object_set_new(own, "rope_theta", json_real(theta)) == 0 &&
                                           json_object_set(view, "rope_parameters", own) == 0));
    hfx_status st = ok ? hfx_rope_parse((hfx_cfg){view, c.where}, src, dim, m->max_position, arena, out, err)
                       : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    json_decref(own);
    json_decref(view);
    return st;
}

/* GraniteSWA's layer_rope_theta: each layer its rotary at its own base, none at 0 (absent: the config's rope). */
static hfx_status parse_layer_theta(const hfx_decoder_desc *d, hfx_cfg c, const hfx_rope_source *src, int64_t dim,
                                    hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    m->layer_rope = NULL;
    const json_t *list = json_object_get(c.obj, "layer_rope_theta");
    if (d->no_rope != HFX_NO_ROPE_LAYER_THETA || !list || json_is_null(list)) return HFX_OK;
    if (!json_is_array(list) || (int64_t)json_array_size(list) < m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layer_rope_theta' must be a list of num_hidden_layers (%lld) "
                                              "numbers", c.where, (long long)m->layers);
    if (!(m->layer_rope = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->layer_rope)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) {
        const json_t *v = json_array_get(list, (size_t)i);
        double theta = json_number_value(v);
        if (!json_is_number(v) || !(theta >= 0 && theta < 1e30))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer_rope_theta[%lld] is not a base ≥ 0", c.where, (long long)i);
        m->no_rope[i] = theta == 0;
        m->layer_rope[i] = m->rope;
        if (theta == 0 || theta == m->rope.theta) continue;
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++)
            if (!m->no_rope[j] && m->layer_rope[j].theta == theta) m->layer_rope[i] = m->layer_rope[j], seen = true;
        hfx_status st;
        if (!seen && (st = rope_at_theta(c, src, dim, theta, arena, m, &m->layer_rope[i], err))) return st;
    }
    return HFX_OK;
}

/* Positions: the rotary tables' settings (the sliding layers' own too), MLA's widths and scale. */
static hfx_status parse_positions(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    double theta = d->rope.theta > 0 ? d->rope.theta : 10000.0;
    const char *partial_key = d->rope.partial_key ? d->rope.partial_key : "partial_rotary_factor";
    hfx_rope_source full = {.layer_type = d->rope.local ? "full_attention" : NULL, .default_theta = theta,
                            .theta_key = d->rope.theta_key ? d->rope.theta_key : "rope_theta", .scaling = true,
                            .partial = d->rope.partial_rotary, .default_partial = d->rope.partial,
                            .partial_key = partial_key, .dim_key = d->rope.dim_key,
                            .phi3_names = d->rope.names == HFX_ROPE_NAMES_SU_YARN,
                            .legacy_type = d->rope.names != HFX_ROPE_NAMES_CURRENT,
                            .ntk_alpha = d->rope.names == HFX_ROPE_NAMES_NTK_ALPHA,
                            .longrope_mscale = d->rope.names == HFX_ROPE_NAMES_MSCALE_LONGROPE};
    bool own_base = d->rope.local == HFX_LOCAL_ROPE_OWN_BASE;
    hfx_rope_source local = {.layer_type = "sliding_attention", .default_theta = own_base ? 10000.0 : theta,
                             .theta_key = own_base ? "rope_local_base_freq" : full.theta_key,
                             .partial = d->rope.partial_rotary, .default_partial = d->rope.partial,
                             .partial_key = partial_key, .dim_key = d->rope.dim_key,
                             .legacy_type = d->rope.names != HFX_ROPE_NAMES_CURRENT};
    if (d->attention == HFX_ATTN_LATENT && (st = hfx_dec_parse_mla(d, c, arena, m, err))) return st;
    if (d->attention == HFX_ATTN_COMPRESSED) return hfx_dec_parse_compressed(d, c, arena, m, err); /* (its two ropes) */
    int64_t full_dim = m->head_dim, local_dim = m->head_dim; /* each type's layers' width (decoder_shapes.c) */
    for (int64_t i = m->layers - 1; i >= 0; i--) *(m->window[i] ? &local_dim : &full_dim) = hfx_dec_shape(m, i).head_dim;
    bool mla_partial = d->attention == HFX_ATTN_LATENT && d->rope.partial_rotary;
    if (mla_partial) { /* Mistral 4: the rotary of a head of qk_nope + qk_rope dims, the last qk_rope of them turning
                          (partial_rotary_factor; absent: that share) */
        full_dim = m->mla.qk_nope + m->mla.qk_rope;
        full.default_partial = (double)m->mla.qk_rope / (double)full_dim;
    }
    bool rotary = d->positions == HFX_POSITIONS_ROTARY || (d->positions == HFX_POSITIONS_ROTARY_OR_ALIBI && !m->alibi.on);
    if (d->no_rope == HFX_NO_ROPE_NULL_THETA && m->no_rope[0]) rotary = false; /* (a null base: nothing to parse) */
    if (rotary &&
        (st = hfx_rope_parse(c, &full, full_dim, m->max_position, arena, &m->rope, err)))
        return st;
    if (mla_partial && m->rope.dim != m->mla.qk_rope)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the rotary dims int((qk_nope_head_dim + qk_rope_head_dim) · "
                                              "partial_rotary_factor) = %lld are not qk_rope_head_dim (%lld)", c.where,
                        (long long)m->rope.dim, (long long)m->mla.qk_rope);
    m->rope.interleaved = d->rope.pairs == HFX_ROTARY_PAIRS || d->rope.pairs == HFX_ROTARY_PAIRS_F32;
    if (d->attention == HFX_ATTN_LATENT && (st = hfx_dec_mla_scale(c, m, err))) return st;
    if (d->rope.local &&
        (st = hfx_rope_parse(c, &local, local_dim, m->max_position, arena, &m->local_rope, err)))
        return st;
    if (d->attention == HFX_ATTN_OUTPUT_GATED_QSA && (st = hfx_dec_parse_qsa(c, m, err))) return st;
    return parse_layer_theta(d, c, &full, full_dim, arena, m, err);
}

/* GPTBigCode's and Falcon's fused q/k/v: per key/value group (Falcon's new decoder), one key/value head and
 * [q; k; v], or per-head triples with a key/value head per head. */
static hfx_status parse_multi_query(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    bool mq, grouped;
    hfx_status st;
    if ((st = hfx_cfg_bool_or(c, "new_decoder_architecture", false, &grouped, err)) ||
        (st = hfx_cfg_bool_or(c, "multi_query", true, &mq, err)))
        return st;
    if (grouped) {
        m->qkv = HFX_QKV_GROUPED;
        return HFX_OK;
    }
    const char *kv_key = d->keys && d->keys->kv_heads ? d->keys->kv_heads : NULL;
    if (!mq && kv_key && m->kv_heads != m->heads) /* transformers' split gives a key per head, then reshapes them */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s %lld with multi_query false needs the new decoder "
                                                  "(new_decoder_architecture true): %s splits a key per head",
                        c.where, kv_key, (long long)m->kv_heads, d->architecture);
    m->kv_heads = mq ? 1 : m->heads;
    m->qkv = mq ? HFX_QKV_CONCAT : HFX_QKV_PER_HEAD;
    return HFX_OK;
}

static hfx_status parse_config(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                               hfx_error *err) {
    hfx_status st;
    bool no_dense = d->moe && d->moe->layers == HFX_MOE_EVERY_LAYER_OWN; /* every layer's MLP the experts */
    m->intermediate = 0; /* (a width per layer: the shapes' parse reads them) */
    m->shape = NULL;
    m->ple = (hfx_decoder_ple){0, 0};
    m->compressed = (hfx_decoder_compressed){0};
    m->ngram = (hfx_decoder_ngram){0};
    m->qsa = (hfx_decoder_qsa){0};
    m->altup = (hfx_decoder_altup){0};
    m->norm = d->norm;
    if (hfx_decoder_mixers_only(d)) {
        return hfx_dec_parse_attention_free(d, c, arena, m, err);
    }
    hfx_decoder_keys k = {"hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings",
                          "intermediate_size", .embed_dim = NULL};
    if (d->keys) k = *d->keys;
    if (d->shapes == HFX_SHAPES_PER_LAYER_MLP && json_is_array(json_object_get(c.obj, k.intermediate))) no_dense = true;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, k.hidden, 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, k.layers, 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, k.heads, 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_int_in_or(c, k.kv_heads ? k.kv_heads : "num_key_value_heads",
                                d->defaults.kv_heads ? d->defaults.kv_heads : m->heads, 1, m->heads, &m->kv_heads, err)) ||
        /* GPT-2's n_inner may be null: 4 × hidden */
        (st = no_dense ? HFX_OK /* no dense MLP to size */
              : d->keys       ? hfx_cfg_int_or(c, k.intermediate, 4 * m->hidden, &m->intermediate, err)
                              : hfx_cfg_int(c, k.intermediate, &m->intermediate, err)) ||
        (st = no_dense ? HFX_OK : hfx_cfg_check_range(c, k.intermediate, m->intermediate, 1, 1 << 24, err)) ||
        (st = hfx_cfg_int_in_or(c, k.positions, 2048, 1, INT32_MAX, &m->max_position, err)) ||
        (st = hfx_cfg_num_or(c, d->eps_key, d->defaults.eps > 0 ? d->defaults.eps : d->norm == HFX_NORM_LAYER || d->norm == HFX_NORM_LAYER_NO_BIAS ||
                                                             d->norm == HFX_NORM_LAYER_BIAS_BY_CONFIG ? 1e-5 : 1e-6,
                             &m->eps, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", d->defaults.tied, &m->tied, err)))
        return st;
    m->head_rows = m->vocab;
    m->embed_dim = m->hidden;
    if (k.embed_dim && !(json_is_null(json_object_get(c.obj, k.embed_dim))) &&
        (st = hfx_cfg_int_in_or(c, k.embed_dim, m->hidden, 1, 1 << 20, &m->embed_dim, err)))
        return st;
    if (k.head_rows && !m->tied && (st = hfx_cfg_int_in_or(c, k.head_rows, m->vocab, 1, m->vocab, &m->head_rows, err)))
        return st;
    m->qkv = d->qkv;
    if (d->qkv == HFX_QKV_BY_MULTI_QUERY && (st = parse_multi_query(d, c, m, err))) return st;
    if (m->heads % m->kv_heads)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: num_attention_heads (%lld) is not a multiple of num_key_value_heads (%lld)",
                        c.where, (long long)m->heads, (long long)m->kv_heads);
    if (d->norm == HFX_NORM_LAYER_BIAS_BY_CONFIG) {
        bool norm_bias;
        if ((st = hfx_cfg_bool_or(c, "norm_bias", true, &norm_bias, err))) return st;
        m->norm = norm_bias ? HFX_NORM_LAYER : HFX_NORM_LAYER_NO_BIAS;
    }
    if (d->norm == HFX_NORM_RMS_OR_LAYER_WEIGHT) { /* rms_norm_eps set: RMS norms with it */
        m->norm = hfx_cfg_has(c, "rms_norm_eps") ? HFX_NORM_RMS : HFX_NORM_LAYER_WEIGHT;
        if (m->norm == HFX_NORM_RMS && (st = hfx_cfg_num(c, "rms_norm_eps", &m->eps, err))) return st;
    }
    m->norm_gate_rank = 0;
    if (d->norm == HFX_NORM_RMS_GATED &&
        (st = hfx_cfg_int_in_or(c, "gated_norm_rank", 16, 1, 1 << 16, &m->norm_gate_rank, err)))
        return st;
    m->final_eps = m->eps;
    if (d->norm == HFX_NORM_RMS_LAYERS_1E6) m->norm = HFX_NORM_RMS, m->eps = 1e-6; /* (checked as the final norm's) */
    if (!(m->final_eps > 0 && m->final_eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g out of range", c.where,
                        m->norm == HFX_NORM_RMS && d->norm == HFX_NORM_RMS_OR_LAYER_WEIGHT ? "rms_norm_eps" : d->eps_key,
                        m->final_eps);
    int64_t dflt_head_dim = m->hidden / m->heads; /* absent or null; some families default it when absent */
    if (d->defaults.head_dim && !json_object_get(c.obj, "head_dim")) dflt_head_dim = d->defaults.head_dim;
    if ((st = hfx_cfg_int_in_or(c, k.head_dim ? k.head_dim : "head_dim", dflt_head_dim, 2, 4096, &m->head_dim, err)) ||
        (st = parse_activation(d, c, m, err)) || (st = parse_biases(d, c, m, err)) ||
        (st = parse_scales(d, c, m, err)))
        return st;

    if ((st = parse_layers(d, c, arena, m, err)) || (st = parse_block_options(d, c, arena, m, err)) ||
        (st = parse_query_temperature(d, c, m, err)) || (st = hfx_dec_parse_shapes(d, c, arena, m, err)))
        return st;
    return parse_positions(d, c, arena, m, err);
}

/* The keys of the template that this architecture's transformers class never reads (a GPT-2
 * config.json may carry a stray num_key_value_heads) are hidden from the parse, so that they
 * change nothing here either. */

/* Whether config.json names a rope the lineage reads (the keys it ignores aside). */
static bool names_rope(const hfx_decoder_desc *d, hfx_cfg c) {
    static const char *const keys[] = {"rope_parameters", "rope_scaling", "rope_theta"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(c.obj, keys[i]);
        bool ignored = false;
        for (const char *const *k = d->ignored_keys; k && *k && !ignored; k++) ignored = strcmp(*k, keys[i]) == 0;
        if (v && !json_is_null(v) && !ignored) return true;
    }
    return false;
}

/* The keys of a nested object (MPT's attn_config) into view as "object.key". */
static hfx_status hoist_nested(hfx_cfg c, const char *object, json_t *view, hfx_error *err) {
    const json_t *inner = json_object_get(c.obj, object);
    if (!inner || json_is_null(inner)) return HFX_OK;
    if (!json_is_object(inner)) return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be an object", c.where, object);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)inner, key, value) {
        char name[256];
        if (snprintf(name, sizeof name, "%s.%s", object, key) >= (int)sizeof name) continue; /* (no key that long is read) */
        if (json_object_set(view, name, value)) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    return HFX_OK;
}

hfx_status hfx_decoder_parse(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *cfg,
                             hfx_error *err) {
    bool fill_rope = d->rope.absent && !names_rope(d, c);
    const char *const *nested = d->keys ? d->keys->nested : NULL;
    json_t *derived = hfx_dec_derived_keys(d, c);
    if (!derived) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!d->ignored_keys && !fill_rope && !nested && !json_object_size(derived)) {
        json_decref(derived);
        return parse_config(d, c, arena, cfg, err);
    }
    json_t *view = json_copy((json_t *)c.obj); /* shallow: values shared, keys its own */
    if (!view || json_object_update(view, derived)) {
        json_decref(derived);
        json_decref(view);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    json_decref(derived);
    for (const char *const *k = d->ignored_keys; k && *k; k++) json_object_del(view, *k);
    hfx_status st = HFX_OK;
    for (const char *const *n = nested; n && *n && !st; n++) st = hoist_nested(c, *n, view, err);
    if (st) {
        json_decref(view);
        return st;
    }
    json_t *rope = fill_rope ? json_loads(d->rope.absent, 0, NULL) : NULL;
    if (fill_rope && (!rope || json_object_set_new(view, "rope_parameters", rope))) {
        json_decref(view);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    hfx_cfg filtered = {view, c.where};
    st = parse_config(d, filtered, arena, cfg, err);
    json_decref(view);
    return st;
}
