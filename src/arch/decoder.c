/* The decoder-only template: config parsing and the forward graph. */
#include "arch/decoder.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/mask.h"
#include "arch/weights.h"
#include "base/status.h"

/* ---- config.json ---- */

static hfx_status parse_sliding(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                                hfx_error *err) {
    hfx_status st;
    int64_t window = 0;
    if (d->sliding == HFX_SLIDING_NONE) return HFX_OK;
    if (!json_object_get(c.obj, "sliding_window")) window = d->default_window; /* absent, not null */
    else if ((st = hfx_cfg_int_or(c, "sliding_window", 0, &window, err))) return st;
    if ((st = hfx_cfg_check_range(c, "sliding_window", window, 0, INT32_MAX, err))) return st;
    if (d->sliding == HFX_SLIDING_ALL) {
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = window;
        return HFX_OK;
    }
    bool use_sliding = false;
    bool max_rule = d->sliding == HFX_SLIDING_MAX_WINDOW || d->sliding == HFX_SLIDING_EVEN_BELOW_MAX;
    if (max_rule || d->sliding == HFX_SLIDING_NO_ROPE) {
        if ((st = hfx_cfg_bool_or(c, "use_sliding_window", false, &use_sliding, err))) return st;
        /* SmolLM3's eager masks window every sliding_attention layer, use_sliding_window or not */
        if (!use_sliding && max_rule) window = 0;
    }
    /* explicit layer_types win; otherwise transformers derives them */
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (types && !json_is_null(types)) {
        if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) strings",
                            c.where, (long long)m->layers);
        for (int64_t i = 0; i < m->layers; i++) {
            const char *t = json_string_value(json_array_get(types, (size_t)i));
            if (t && (strcmp(t, "full_attention") == 0 || (d->short_conv && strcmp(t, "conv") == 0))) m->window[i] = 0;
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
    if (d->sliding == HFX_SLIDING_NO_ROPE) { /* the config derives sliding_attention for the no-rope layers */
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = use_sliding && window > 0 && m->no_rope[i] ? window : 0;
        return HFX_OK;
    }
    if (max_rule) {
        int64_t max_window_layers;
        if ((st = hfx_cfg_int_or(c, "max_window_layers", 28, &max_window_layers, err))) return st;
        for (int64_t i = 0; i < m->layers; i++)
            m->window[i] = window > 0 && (d->sliding == HFX_SLIDING_MAX_WINDOW ? i >= max_window_layers
                                                                            : (i + 1) % 2 && i < max_window_layers)
                               ? window : 0;
        return HFX_OK;
    }
    int64_t pattern;
    pattern = d->sliding_pattern;
    if (d->pattern_from_config &&
        (st = hfx_cfg_int_in_or(c, "sliding_window_pattern", d->sliding_pattern, 1, 1 << 20, &pattern, err)))
        return st;
    for (int64_t i = 0; i < m->layers; i++) m->window[i] = (i + 1) % pattern ? window : 0;
    return HFX_OK;
}

static hfx_status parse_activation(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                                   hfx_error *err) {
    const char *act;
    hfx_status st = hfx_cfg_str_or(c, d->act_key, d->default_act, &act, err);
    if (st) return st;
    if (d->gelu_means_tanh && strcmp(act, "gelu") == 0) act = "gelu_pytorch_tanh";
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)",
                        c.where, d->act_key, act, hfx_activation_names());
    return HFX_OK;
}

static hfx_status parse_biases(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                               hfx_error *err) {
    bool attention_bias = false, mlp_bias = false;
    hfx_status st = HFX_OK;
    bool qkv_bias = d->attn_bias == HFX_BIAS_QKV;
    if (d->attn_bias == HFX_BIAS_FROM_CONFIG)
        st = hfx_cfg_bool_or(c, "attention_bias", d->attention_bias_default, &attention_bias, err);
    if (d->attn_bias == HFX_BIAS_QKV_FROM_CONFIG)
        st = hfx_cfg_bool_or(c, d->qkv_bias_key, d->attention_bias_default, &qkv_bias, err);
    if (!st && d->attn_bias == HFX_BIAS_USE_BIAS) {
        st = hfx_cfg_bool_or(c, "use_bias", d->attention_bias_default, &attention_bias, err);
        mlp_bias = attention_bias;
    }
    if (!st && d->mlp_bias_from_config) st = hfx_cfg_bool_or(c, "mlp_bias", false, &mlp_bias, err);
    m->q_bias = m->k_bias = m->v_bias = attention_bias || qkv_bias;
    m->o_bias = attention_bias;
    m->mlp_bias = mlp_bias || d->mlp_bias_always;
    return st;
}

/* The multipliers some families add: an optional positive number, 1 (or 0: none) otherwise. */
static hfx_status positive_or(hfx_cfg c, const char *key, double dflt, double *out, hfx_error *err) {
    hfx_status st = hfx_cfg_num_or(c, key, dflt, out, err);
    if (!st && !(*out > 0) && *out != dflt)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' = %g must be > 0", c.where, key, *out);
    return st;
}

static hfx_status parse_scales(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m,
                               hfx_error *err) {
    hfx_status st = HFX_OK;
    m->scale = 1.0 / sqrt((double)m->head_dim);
    m->embed_mult = m->residual_mult = m->logits_div = 1.0;
    if (d->gpt2_scaling) {
        bool by_dim, by_layer;
        if ((st = hfx_cfg_bool_or(c, "scale_attn_weights", true, &by_dim, err)) ||
            (st = hfx_cfg_bool_or(c, "scale_attn_by_inverse_layer_idx", false, &by_layer, err)))
            return st;
        if (!by_dim) m->scale = 1.0;
        m->scale_by_layer = by_layer;
    }
    if (d->scale == HFX_SCALE_QUERY_PRE_ATTN) {
        double q;
        if ((st = positive_or(c, "query_pre_attn_scalar", 256, &q, err))) return st;
        m->scale = pow(q, -0.5);
    } else if (d->scale == HFX_SCALE_ATTN_MULTIPLIER) {
        if ((st = positive_or(c, "attention_multiplier", 1.0, &m->scale, err))) return st;
    }
    if (d->granite_multipliers &&
        ((st = positive_or(c, "embedding_multiplier", 1.0, &m->embed_mult, err)) ||
         (st = positive_or(c, "residual_multiplier", 1.0, &m->residual_mult, err)) ||
         (st = positive_or(c, "logits_scaling", 1.0, &m->logits_div, err))))
        return st;
    /* an absent key takes the family's default, an explicit null means none */
    if (d->attn_softcap &&
        (st = positive_or(c, "attn_logit_softcapping", json_object_get(c.obj, "attn_logit_softcapping") ? 0 : d->default_attn_softcap,
                          &m->attn_softcap, err)))
        return st;
    if (d->final_softcap &&
        (st = positive_or(c, "final_logit_softcapping", json_object_get(c.obj, "final_logit_softcapping") ? 0 : d->default_final_softcap,
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
    for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = false;
    if (d->no_rope == HFX_NO_ROPE_UNLESS_ROPE_TYPE) {
        const char *type;
        hfx_status st = hfx_cfg_str_or(c, "position_embedding_type", "none", &type, err);
        if (st) return st;
        for (int64_t i = 0; i < m->layers; i++) m->no_rope[i] = strcmp(type, "rope") != 0;
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

/* DeepSeek's MoE: dense layers first, shared experts, the group-limited router's settings. */
static hfx_status parse_deepseek_router(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t first_dense, shared;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "first_k_dense_replace", 0, 0, m->layers, &first_dense, err)) ||
        (st = hfx_cfg_int_in_or(c, "n_shared_experts", 1, 1, 1024, &shared, err)) ||
        (st = hfx_cfg_num_or(c, "routed_scaling_factor", 1.0, &m->routed_scale, err)))
        return st;
    if (!isfinite(m->routed_scale))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: routed_scaling_factor %g is not a finite number", c.where,
                        m->routed_scale);
    for (int64_t i = 0; i < first_dense; i++) m->sparse[i] = false;
    m->shared_intermediate = m->moe_intermediate * shared;
    bool grouped = d->deepseek_v3_router;
    if (!d->deepseek_v3_router) { /* V2: the router never renormalises; topk_method picks the grouping */
        const char *method;
        m->norm_topk = false;
        if ((st = hfx_cfg_str_or(c, "topk_method", "greedy", &method, err))) return st;
        if (strcmp(method, "greedy") != 0 && strcmp(method, "group_limited_greedy") != 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: topk_method '%s' is not supported (greedy, "
                            "group_limited_greedy)", c.where, method);
        grouped = strcmp(method, "group_limited_greedy") == 0;
    }
    if (!grouped) return HFX_OK;
    if ((st = hfx_cfg_int_in_or(c, "n_group", 1, 1, m->experts, &m->groups, err)) ||
        (st = hfx_cfg_int_in_or(c, "topk_group", m->groups, 1, m->groups, &m->top_groups, err)))
        return st;
    if (m->experts % m->groups)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: n_routed_experts %lld is not a multiple of n_group %lld", c.where,
                        (long long)m->experts, (long long)m->groups);
    int64_t per_group = m->experts / m->groups;
    if (d->deepseek_v3_router && per_group < 2) /* groups are ranked by their two best experts */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: n_group %lld leaves fewer than 2 experts per group", c.where,
                        (long long)m->groups);
    if (m->top_k > m->top_groups * per_group)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_experts_per_tok %lld exceeds the experts of topk_group %lld "
                        "groups", c.where, (long long)m->top_k, (long long)m->top_groups);
    return HFX_OK;
}

static hfx_status parse_moe(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                            hfx_error *err) {
    hfx_status st;
    m->sparse = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->sparse);
    if (!m->sparse) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (d->moe == HFX_MOE_NONE) return HFX_OK;
    /* every layer, intermediate_size wide */
    bool mixtral = d->moe == HFX_MOE_MIXTRAL || d->moe == HFX_MOE_GRANITE || d->moe == HFX_MOE_GPT_OSS ||
                   d->moe == HFX_MOE_OLMOE;
    /* transformers 5 writes num_local_experts for both; older Qwen3-MoE configs num_experts */
    const char *experts_key = mixtral || hfx_cfg_has(c, "num_local_experts") ? "num_local_experts" : "num_experts";
    if (d->moe == HFX_MOE_DEEPSEEK) experts_key = "n_routed_experts";
    if (d->moe == HFX_MOE_OLMOE) experts_key = hfx_cfg_has(c, "num_experts") ? "num_experts" : "num_local_experts";
    if (d->granite_shared_mlp) { /* the shared MLP's width; experts optional (0: the shared MLP alone) */
        if ((st = hfx_cfg_int_in_or(c, "shared_intermediate_size", 1024, 1, 1 << 24, &m->shared_intermediate, err)) ||
            (st = hfx_cfg_int_in_or(c, experts_key, 8, 0, 4096, &m->experts, err)))
            return st;
        if (m->experts == 0) return HFX_OK;
    }
    if ((st = m->experts ? HFX_OK : hfx_cfg_int_in(c, experts_key, 1, 4096, &m->experts, err)) ||
        (st = hfx_cfg_int_in(c, "num_experts_per_tok", 1, m->experts, &m->top_k, err)))
        return st;
    m->moe_intermediate = m->intermediate;
    m->norm_topk = true;
    if (d->moe == HFX_MOE_OLMOE && (st = hfx_cfg_bool_or(c, "norm_topk_prob", false, &m->norm_topk, err))) return st;
    int64_t step = 1;
    if (!mixtral &&
        ((st = hfx_cfg_int_in(c, "moe_intermediate_size", 1, 1 << 24, &m->moe_intermediate, err)) ||
         (!d->experts_only && (st = hfx_cfg_bool_or(c, "norm_topk_prob", d->norm_topk_default, &m->norm_topk, err))) ||
         (!d->experts_only && (st = hfx_cfg_int_in_or(c, "decoder_sparse_step", 1, 1, 4096, &step, err)))))
        return st;
    if (d->moe == HFX_MOE_QWEN2 &&
        (st = hfx_cfg_int_in(c, "shared_expert_intermediate_size", 1, 1 << 24, &m->shared_intermediate, err)))
        return st;
    if (d->moe == HFX_MOE_GPT_OSS && /* softmax over the k largest logits = the renormalised top-k */
        ((st = hfx_cfg_num_or(c, "swiglu_alpha", 1.702, &m->swiglu_alpha, err)) ||
         (st = hfx_cfg_num_or(c, "swiglu_limit", 7.0, &m->swiglu_limit, err))))
        return st;
    for (int64_t i = 0; i < m->layers; i++) m->sparse[i] = (i + 1) % step == 0;
    m->groups = m->top_groups = 1;
    m->routed_scale = 1.0;
    if (d->moe == HFX_MOE_DEEPSEEK && (st = parse_deepseek_router(d, c, m, err))) return st;
    const json_t *dense = json_object_get(c.obj, "mlp_only_layers");
    if (!mixtral && !d->experts_only && dense && !json_is_null(dense)) {
        if (!json_is_array(dense))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'mlp_only_layers' must be a list of layer indices", c.where);
        for (size_t j = 0; j < json_array_size(dense); j++) {
            const json_t *v = json_array_get(dense, j);
            if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= m->layers)
                return hfx_fail(err, HFX_ERR_INVALID, "%s: mlp_only_layers[%zu] is not a layer index", c.where, j);
            m->sparse[json_integer_value(v)] = false;
        }
    }
    return HFX_OK;
}

/* Multi-head latent attention's widths; the rotary runs on qk_rope_head_dim dims (its head_dim). */
static hfx_status parse_mla(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "q_lora_rank", 0, 0, 1 << 20, &m->q_lora, err)) ||
        (st = hfx_cfg_int_in(c, "kv_lora_rank", 1, 1 << 20, &m->kv_lora, err)) ||
        (st = hfx_cfg_int_in(c, "qk_nope_head_dim", 0, 4096, &m->qk_nope, err)) ||
        (st = hfx_cfg_int_in(c, "qk_rope_head_dim", 2, 4096, &m->qk_rope, err)) ||
        (st = hfx_cfg_int_in(c, "v_head_dim", 1, 4096, &m->v_dim, err)) ||
        /* V3's rope_interleave (absent: true); V2 has no such key and rotates pairs in place */
        (st = hfx_cfg_bool_or(c, "rope_interleave", d->deepseek_v3_router, &m->rope_deinterleave, err)))
        return st;
    if (m->qk_rope % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: qk_rope_head_dim %lld is odd: the rotary pairs dims", c.where,
                        (long long)m->qk_rope);
    m->head_dim = m->qk_rope;
    return HFX_OK;
}

/* (qk_nope + qk_rope)^-0.5, times mscale(factor, mscale_all_dim)² for a scaled rotary (YaRN). */
static hfx_status mla_scale(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    m->scale = 1.0 / sqrt((double)(m->qk_nope + m->qk_rope));
    if (m->rope.type == HFX_ROPE_DEFAULT) return HFX_OK;
    const json_t *p = json_object_get(c.obj, "rope_parameters");
    if (!json_is_object(p)) p = json_object_get(c.obj, "rope_scaling");
    hfx_cfg rc = {p, c.where};
    double mscale_all = 0;
    hfx_status st = json_is_object(p) ? hfx_cfg_num_or(rc, "mscale_all_dim", 0, &mscale_all, err) : HFX_OK;
    if (st) return st;
    if (mscale_all != 0 && m->rope.factor > 1) {
        double ms = 0.1 * mscale_all * log(m->rope.factor) + 1.0;
        m->scale *= ms * ms;
    }
    return HFX_OK;
}

static hfx_status parse_config(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                               hfx_error *err);

/* The keys of the template that this architecture's transformers class never reads (a GPT-2
 * config.json may carry a stray num_key_value_heads) are hidden from the parse, so that they
 * change nothing here either. */
static hfx_status decoder_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    return hfx_decoder_parse(desc_, c, arena, cfg, err);
}

hfx_status hfx_decoder_parse(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *cfg,
                             hfx_error *err) {
    if (!d->ignored_keys) return parse_config(d, c, arena, cfg, err);
    json_t *view = json_copy((json_t *)c.obj); /* shallow: values shared, keys its own */
    if (!view) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (const char *const *k = d->ignored_keys; *k; k++) json_object_del(view, *k);
    hfx_cfg filtered = {view, c.where};
    hfx_status st = parse_config(d, filtered, arena, cfg, err);
    json_decref(view);
    return st;
}

/* LFM2: which layers are short convolutions (layer_types "conv", or every layer not in
 * full_attn_idxs), the kernel, and the MLP width block_auto_adjust_ff_dim makes of
 * intermediate_size (⅔ of it, times block_ffn_dim_multiplier, rounded up to block_multiple_of). */
static hfx_status parse_short_conv(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const json_t *types = json_object_get(c.obj, "layer_types"), *full = json_object_get(c.obj, "full_attn_idxs");
    if (full && !json_is_null(full) && !json_is_array(full))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'full_attn_idxs' must be a list of layer indices", c.where);
    if (types && !json_is_null(types) && (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) "
                                              "strings", c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        if (json_is_array(types)) {
            const char *t = json_string_value(json_array_get(types, (size_t)i));
            if (!t || (strcmp(t, "conv") != 0 && strcmp(t, "full_attention") != 0))
                return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layer_types[%lld] = '%s' (supported: conv, "
                                                          "full_attention)", c.where, (long long)i,
                                t ? t : "(not a string)");
            m->mixer[i] = strcmp(t, "conv") == 0 ? HFX_MIXER_SHORT_CONV : HFX_MIXER_ATTENTION;
            continue;
        }
        bool attention = !json_is_array(full);
        for (size_t k = 0; json_is_array(full) && k < json_array_size(full); k++)
            attention |= json_is_integer(json_array_get(full, k)) && json_integer_value(json_array_get(full, k)) == i;
        m->mixer[i] = attention ? HFX_MIXER_ATTENTION : HFX_MIXER_SHORT_CONV;
    }
    bool adjust;
    double multiplier;
    int64_t multiple;
    if ((st = hfx_cfg_int_in_or(c, "conv_L_cache", 3, 2, 64, &m->conv_len, err)) ||
        (st = hfx_cfg_bool_or(c, "conv_bias", false, &m->conv_bias, err)) ||
        (st = hfx_cfg_bool_or(c, "block_auto_adjust_ff_dim", true, &adjust, err)) ||
        (st = hfx_cfg_num_or(c, "block_ffn_dim_multiplier", 1.0, &multiplier, err)) ||
        (st = hfx_cfg_int_in_or(c, "block_multiple_of", 256, 1, 1 << 20, &multiple, err)))
        return st;
    if (!adjust) return HFX_OK;
    int64_t size = (int64_t)(2.0 * (double)m->intermediate / 3.0);
    const json_t *mult = json_object_get(c.obj, "block_ffn_dim_multiplier");
    if (!json_is_null(mult)) { /* absent: transformers' default 1.0, which still rounds */
        if (!(multiplier > 0 && multiplier * (double)size < (double)(1 << 24)))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: block_ffn_dim_multiplier %g is out of range", c.where, multiplier);
        size = (int64_t)(multiplier * (double)size);
        size = multiple * ((size + multiple - 1) / multiple);
    }
    if (size < 1) return hfx_fail(err, HFX_ERR_INVALID, "%s: the adjusted MLP width is 0", c.where);
    m->intermediate = size;
    return HFX_OK;
}

/* A model whose every layer is a state-space mixer alone (Mamba2): the template's width, depth,
 * vocabulary, norm and tying, and the mixer's own fields; no attention, MLP or positions. */
static hfx_status parse_attention_free(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, "hidden_size", 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, "num_hidden_layers", 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_num_or(c, d->eps_key, d->default_eps > 0 ? d->default_eps : 1e-5, &m->eps, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", d->default_tied, &m->tied, err)) ||
        (st = hfx_cfg_bool_or(c, "residual_in_fp32", true, &m->residual_f32, err)))
        return st;
    if (!(m->eps > 0 && m->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g out of range", c.where, d->eps_key, m->eps);
    m->heads = m->kv_heads = 1, m->head_dim = m->hidden, m->intermediate = 0, m->max_position = INT32_MAX;
    m->scale = m->embed_mult = m->residual_mult = m->logits_div = m->logits_mul = 1.0;
    m->layout = HFX_LAYOUT_PRE, m->no_mlp = true, m->pad_id = -1;
    m->attn_in_mult = m->attn_out_mult = m->ssm_out_mult = m->key_mult = m->gate_mult = m->down_mult = 1.0;
    m->window = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->window);
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->window || !m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) m->window[i] = 0, m->mixer[i] = d->mamba1 ? HFX_MIXER_MAMBA1 : HFX_MIXER_MAMBA2;
    return d->mamba1 ? hfx_mamba1_parse(c, m->hidden, &m->ssm1, err)
                     : hfx_mamba2_parse(c, d->mamba2, m->hidden, m->eps, &m->ssm, err);
}

/* A hybrid's layer pattern: layer_types (transformers 4's layers_block_type) naming recurrent and
 * attention layers, in transformers' new words or the older ones; absent: every layer Mamba2
 * (Granite 4.0), or every full_attention_interval-th layer attention (a gated delta-net's family).
 * The recurrent layers are Mamba2 mixers, or gated delta-nets where the descriptor says so. */
static hfx_status parse_hybrid_layers(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                      hfx_error *err) {
    hfx_status st;
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const char *key = hfx_cfg_has(c, "layer_types") || !hfx_cfg_has(c, "layers_block_type") ? "layer_types"
                                                                                              : "layers_block_type";
    const json_t *types = json_object_get(c.obj, key);
    if (types && !json_is_null(types) && (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of num_hidden_layers (%lld) strings",
                        c.where, key, (long long)m->layers);
    int64_t interval = 0;
    if (d->delta && !json_is_array(types) &&
        (st = hfx_cfg_int_in_or(c, "full_attention_interval", 4, 1, m->layers + 1, &interval, err)))
        return st;
    hfx_mixer_kind recurrent = d->delta ? HFX_MIXER_DELTA : HFX_MIXER_MAMBA2;
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_is_array(types) ? json_string_value(json_array_get(types, (size_t)i))
                        : interval && (i + 1) % interval == 0 ? "full_attention" : d->delta ? "linear_attention"
                                                                                            : "mamba";
        if (t && (strcmp(t, "linear_attention") == 0 || (!d->delta && strcmp(t, "mamba") == 0))) m->mixer[i] = recurrent;
        else if (t && (strcmp(t, "attention") == 0 || strcmp(t, "full_attention") == 0)) m->mixer[i] = HFX_MIXER_ATTENTION;
        else
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s[%lld] = '%s' (supported: %slinear_attention, %s"
                                                      "full_attention)", c.where, key, (long long)i,
                            t ? t : "(not a string)", d->delta ? "" : "mamba, ", d->delta ? "" : "attention, ");
    }
    return d->delta ? hfx_delta_parse(c, m->eps, m->max_position, d->delta == HFX_DELTA_GROUPED, &m->delta, err)
                    : hfx_mamba2_parse(c, d->mamba2, m->hidden, m->eps, &m->ssm, err);
}

/* A number from a two-element list (Falcon-H1's mlp_multipliers), or dflt when the key is absent. */
static hfx_status list_number(hfx_cfg c, const char *key, size_t n, size_t at, double dflt, double *out, hfx_error *err) {
    const json_t *list = json_object_get(c.obj, key);
    *out = dflt;
    if (!list || json_is_null(list)) return HFX_OK;
    if (!json_is_array(list) || json_array_size(list) != n || !json_is_number(json_array_get(list, at)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be %zu numbers", c.where, key, n);
    *out = json_number_value(json_array_get(list, at));
    return HFX_OK;
}

/* Falcon-H1: Mamba2 beside attention in every layer, and its multipliers. */
static hfx_status parse_parallel_mamba(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err) {
    hfx_status st;
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) m->mixer[i] = HFX_MIXER_PARALLEL;
    if ((st = hfx_cfg_num_or(c, "attention_in_multiplier", 1.0, &m->attn_in_mult, err)) ||
        (st = hfx_cfg_num_or(c, "attention_out_multiplier", 1.0, &m->attn_out_mult, err)) ||
        (st = hfx_cfg_num_or(c, "ssm_out_multiplier", 1.0, &m->ssm_out_mult, err)) ||
        (st = hfx_cfg_num_or(c, "key_multiplier", 1.0, &m->key_mult, err)) ||
        (st = hfx_cfg_num_or(c, "embedding_multiplier", 1.0, &m->embed_mult, err)) ||
        (st = hfx_cfg_num_or(c, "lm_head_multiplier", 1.0, &m->logits_mul, err)) ||
        (st = list_number(c, "mlp_multipliers", 2, 0, 1.0, &m->gate_mult, err)) ||
        (st = list_number(c, "mlp_multipliers", 2, 1, 1.0, &m->down_mult, err)))
        return st;
    double all[] = {m->attn_in_mult, m->attn_out_mult, m->ssm_out_mult, m->key_mult, m->embed_mult, m->logits_mul,
                    m->gate_mult, m->down_mult};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (!isfinite(all[k])) return hfx_fail(err, HFX_ERR_INVALID, "%s: a multiplier is not a finite number", c.where);
    return hfx_mamba2_parse(c, d->mamba2, m->hidden, m->eps, &m->ssm, err);
}

static hfx_status parse_config(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                               hfx_error *err) {
    hfx_status st;
    if (d->attention_free) return parse_attention_free(d, c, arena, m, err);
    hfx_decoder_keys k = {"hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings",
                          "intermediate_size"};
    if (d->keys) k = *d->keys;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, k.hidden, 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, k.layers, 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, k.heads, 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_key_value_heads", d->default_kv_heads ? d->default_kv_heads : m->heads, 1,
                                m->heads, &m->kv_heads, err)) ||
        /* GPT-2's n_inner may be null: 4 × hidden */
        (st = d->experts_only ? HFX_OK /* no dense MLP to size */
              : d->keys       ? hfx_cfg_int_or(c, k.intermediate, 4 * m->hidden, &m->intermediate, err)
                              : hfx_cfg_int(c, k.intermediate, &m->intermediate, err)) ||
        (st = d->experts_only ? HFX_OK : hfx_cfg_check_range(c, k.intermediate, m->intermediate, 1, 1 << 24, err)) ||
        (st = hfx_cfg_int_in_or(c, k.positions, 2048, 1, INT32_MAX, &m->max_position, err)) ||
        (st = hfx_cfg_num_or(c, d->eps_key, d->default_eps > 0 ? d->default_eps : d->norm == HFX_NORM_LAYER ? 1e-5 : 1e-6,
                             &m->eps, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", d->default_tied, &m->tied, err)))
        return st;
    if (m->heads % m->kv_heads)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: num_attention_heads (%lld) is not a multiple of num_key_value_heads (%lld)",
                        c.where, (long long)m->heads, (long long)m->kv_heads);
    if (!(m->eps > 0 && m->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g out of range", c.where, d->eps_key, m->eps);
    int64_t dflt_head_dim = m->hidden / m->heads; /* absent or null; some families default it when absent */
    if (d->default_head_dim && !json_object_get(c.obj, "head_dim")) dflt_head_dim = d->default_head_dim;
    if ((st = hfx_cfg_int_in_or(c, "head_dim", dflt_head_dim, 2, 4096, &m->head_dim, err)) ||
        (st = parse_activation(d, c, m, err)) || (st = parse_biases(d, c, m, err)) ||
        (st = parse_scales(d, c, m, err)))
        return st;

    m->layout = d->layout;
    m->layer_types = d->masks_by_layer_type;
    if (d->parallel_from_config) {
        bool parallel;
        if ((st = hfx_cfg_bool_or(c, "use_parallel_residual", d->parallel_default, &parallel, err))) return st;
        m->layout = !parallel ? HFX_LAYOUT_PRE : d->layout == HFX_LAYOUT_PRE ? HFX_LAYOUT_PARALLEL : d->layout;
    }
    m->window = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->window);
    if (!m->window) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    int64_t config_window = 0; /* the config's sliding_window, for the no-rope rules that read it */
    if ((st = parse_no_rope(d, c, arena, m, err)) || (st = parse_sliding(d, c, m, err)) ||
        (st = parse_moe(d, c, arena, m, err)) ||
        (d->no_rope == HFX_NO_ROPE_FULL_IF_WINDOW && (st = hfx_cfg_int_or(c, "sliding_window", 0, &config_window, err))))
        return st;
    if (d->short_conv && (st = parse_short_conv(c, arena, m, err))) return st;
    if ((d->mamba_layers || d->delta) && (st = parse_hybrid_layers(d, c, arena, m, err))) return st;
    for (int64_t i = 0; i < m->layers; i++) /* the rules read the windows: after parse_sliding */
        if (d->no_rope == HFX_NO_ROPE_FULL_LAYERS || (d->no_rope == HFX_NO_ROPE_FULL_IF_WINDOW && config_window > 0))
            m->no_rope[i] = m->window[i] == 0;
    m->logits_mul = 1.0;
    if (d->logit_scale && (st = hfx_cfg_num_or(c, "logit_scale", d->default_logit_scale, &m->logits_mul, err))) return st;
    if (!isfinite(m->logits_mul))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: logit_scale %g is not a finite number", c.where, m->logits_mul);
    m->attn_in_mult = m->attn_out_mult = m->ssm_out_mult = m->key_mult = m->gate_mult = m->down_mult = 1.0;
    if (d->parallel_mamba && (st = parse_parallel_mamba(d, c, arena, m, err))) return st;
    m->qk_norm = d->qk_norm;
    if (d->qk_norm_key) {
        bool on;
        if ((st = hfx_cfg_bool_or(c, d->qk_norm_key, false, &on, err))) return st;
        if (!on) m->qk_norm = HFX_QK_NORM_NONE;
    }
    if (d->seq_classifier && ((st = hfx_cfg_num_labels(c, &m->labels, err)) ||
                              (st = hfx_cfg_int_in_or(c, "pad_token_id", -1, -1, m->vocab - 1, &m->pad_id, err))))
        return st;
    m->clip_qkv = 0;
    if (d->clip_qkv && (st = hfx_cfg_num_or(c, "clip_qkv", 0, &m->clip_qkv, err))) return st;
    if (!(m->clip_qkv >= 0) || m->clip_qkv > 1e30)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: clip_qkv %g must be positive (or null)", c.where, m->clip_qkv);
    double theta = d->default_theta > 0 ? d->default_theta : 10000.0;
    const char *partial_key = d->partial_key ? d->partial_key : "partial_rotary_factor";
    hfx_rope_source full = {d->local_rope ? "full_attention" : NULL, theta, d->theta_key ? d->theta_key : "rope_theta",
                            true, d->partial_rotary, d->default_partial, partial_key, d->phi3_rope_names,
                            d->legacy_rope_type};
    hfx_rope_source local = {"sliding_attention", 10000.0, "rope_local_base_freq", false, d->partial_rotary,
                             d->default_partial, partial_key, false, d->legacy_rope_type};
    if (d->mla && (st = parse_mla(d, c, m, err))) return st;
    if (!d->learned_positions &&
        (st = hfx_rope_parse(c, &full, m->head_dim, m->max_position, arena, &m->rope, err)))
        return st;
    m->rope.interleaved = d->interleaved_rope;
    if (d->mla && (st = mla_scale(c, m, err))) return st;
    if (d->local_rope &&
        (st = hfx_rope_parse(c, &local, m->head_dim, m->max_position, arena, &m->local_rope, err)))
        return st;
    return HFX_OK;
}

/* Layer i's cache: its keys' and values' geometry where it attends, its states' dims where it
 * has a recurrent mixer (Falcon-H1's layers both) — the one place the states' dims are written. */
static hfx_layer_cache layer_cache(const hfx_decoder_cfg *m, int64_t i) {
    hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
    hfx_layer_cache l = {0};
    if (kind == HFX_MIXER_ATTENTION || kind == HFX_MIXER_PARALLEL)
        l = m->kv_lora /* MLA caches the latent and the rotary key part, one "head" each */
                ? (hfx_layer_cache){1, m->kv_lora, m->qk_rope, m->window[i], NULL, 0, {{0}}}
                : (hfx_layer_cache){m->kv_heads, m->head_dim, m->head_dim, m->window[i],
                                    !m->layer_types ? NULL : m->window[i] ? "sliding_attention" : "full_attention",
                                    0, {{0}}};
    switch (kind) {
    case HFX_MIXER_SHORT_CONV:
        l.n_states = 1, l.states[0] = (hfx_layer_state){"conv", 2, {m->hidden, m->conv_len - 1}};
        break;
    case HFX_MIXER_MAMBA1:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->ssm1.inner, m->ssm1.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 2, {m->ssm1.inner, m->ssm1.state}};
        break;
    case HFX_MIXER_MAMBA2:
    case HFX_MIXER_PARALLEL:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->ssm.conv_dim, m->ssm.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 3, {m->ssm.heads, m->ssm.head_dim, m->ssm.state}};
        break;
    case HFX_MIXER_DELTA:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->delta.conv_dim, m->delta.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 3, {m->delta.v_heads, m->delta.k_dim, m->delta.v_dim}};
        break;
    case HFX_MIXER_ATTENTION: break;
    }
    return l;
}

/* ---- the graph ---- */

typedef struct layer_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const hfx_decoder_desc *d;
    const hfx_decoder_cfg *m;
    const hfx_build_opts *o;
    hfx_dim batch, seq;
    hfx_decoder_names n;        /* the checkpoint's tensor names, Llama's where the family has none */
    hfx_value *cache_position;  /* static cache: [S] slots written this step */
    hfx_value **cache_out;      /* (layers, CACHE_PARTS): key, value (and the seed's write counter) cache
                                   outputs, then a recurrent mixer's states, named at the end */
    int *cache_state;           /* (layers, CACHE_PARTS): their state declarations */
    hfx_value *seed_mask;       /* seed profile: the attention bias [B|1,1,S,T], made at the first layer
                                   (from the 4-D mask input, or from the cache it sees) */
    hfx_value *seed_window_mask; /* ... and a dynamic cache's sliding layers' (within the window) */
    hfx_value *new_mask;        /* recurrent layers: [B,S,1] 1 at this call's real tokens, 0 at padding */
} layer_ctx;

/* per layer: keys, values, and the seed profile's write counter (static cache) or window tensor
 * (a dynamic cache's sliding layer); then a recurrent mixer's states (conv, ssm) */
enum { SEED_PARTS = 3, STATE_SLOT = 3, CACHE_PARTS = 5 };

static hfx_decoder_names resolve_names(const hfx_decoder_desc *d) {
    hfx_decoder_names n = {.embed = "model.embed_tokens.weight", .layer = "model.layers.%lld", .attn = "self_attn",
                           .qkv = "qkv_proj", .o = "o_proj", .fc_in = "c_fc", .fc_out = "c_proj",
                           .norm1 = "input_layernorm", .norm2 = "post_attention_layernorm", .final_norm = "model.norm",
                           .lm_head = "lm_head.weight", .pre2 = "pre_feedforward_layernorm",
                           .post2 = "post_feedforward_layernorm", .q_norm = "q_norm", .k_norm = "k_norm",
                           .mlp = "mlp", .gate = "gate_proj", .up = "up_proj", .down = "down_proj", .conv = "conv",
                           .ssm = "mixer"};
    const hfx_decoder_names *f = d->names;
    if (!f) return n;
#define TAKE(field) if (f->field) n.field = f->field
    TAKE(embed); TAKE(layer); TAKE(attn); TAKE(qkv); TAKE(o); TAKE(fc_in); TAKE(fc_out); TAKE(norm1);
    TAKE(norm2); TAKE(pos_embed); TAKE(final_norm); TAKE(lm_head); TAKE(pre2); TAKE(post2); TAKE(q_norm);
    TAKE(k_norm); TAKE(mlp); TAKE(gate); TAKE(up); TAKE(down); TAKE(conv); TAKE(ssm); TAKE(embed_alt);
#undef TAKE
    return n;
}

/* "<layer i>.<block>.<leaf>" (block may be NULL) into buf. */
static const char *tensor_name(const layer_ctx *c, int64_t i, const char *block, const char *leaf, char *buf,
                               size_t size) {
    int k = snprintf(buf, size, c->n.layer, (long long)i);
    if (k > 0 && (size_t)k < size) snprintf(buf + k, size - (size_t)k, block ? ".%s.%s" : ".%s%s", block ? block : leaf,
                                            block ? leaf : "");
    return buf;
}

/* Join this step's k or v [B,KV,S,D] with the layer's cache, per docs/GENERATION.md; returns
 * what attention reads and records the cache output. `which` is "key" or "value". */
static hfx_value *with_cache(layer_ctx *c, int64_t i, hfx_value *x, const char *which, int slot) {
    const hfx_build_opts *o = c->o;
    if (o->cache == HFX_CACHE_NONE) return x;
    char name[128], input[160];
    hfx_dim kv = x->dims[1], hd = x->dims[3]; /* the cached heads and width (MLA: one latent "head") */
    snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, which);
    bool dynamic = o->cache == HFX_CACHE_DYNAMIC;
    int state = hfx_graph_state(c->g, name, dynamic ? HFX_STATE_APPEND : HFX_STATE_WRITE, 2);
    if (dynamic) {
        if (o->has_past) {
            hfx_value *past = hfx_state_read(c->g, state, name, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->past, hd});
            hfx_value *parts[2] = {past, x};
            x = hfx_concat(c->g, 2, parts, 2);
        }
    } else {
        snprintf(input, sizeof input, "input.%s", name);
        hfx_value *cache = hfx_state_read(c->g, state, input, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->max_cache, hd});
        x = hfx_cache_write(c->g, cache, x, c->cache_position);
    }
    c->cache_out[CACHE_PARTS * i + slot] = x;
    c->cache_state[CACHE_PARTS * i + slot] = state;
    return x;
}

/* The seed profile's cache of layer i (transformers.exporters' names): k and v [B,KV,S,D] joined
 * with it, in place. A dynamic cache appends to input.cache.layers.{i}.keys/values; a static one
 * writes at the slots its counter input.cache.layers.{i}.cumulative_length says (then counter + S)
 * into the M-slot cache it reads, or, in a prefill, into a zero cache it starts. */
static void seed_cache(layer_ctx *c, int64_t i, hfx_value **k, hfx_value **v) {
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    static const char *const parts[SEED_PARTS] = {"keys", "values", "cumulative_length"};
    char name[SEED_PARTS][96], input[128];
    for (int p = 0; p < SEED_PARTS; p++) snprintf(name[p], sizeof name[p], "cache.layers.%lld.%s", (long long)i, parts[p]);
    hfx_value **x[2] = {k, v}; /* each [B,KV,S,D], their own KV and D (MLA: 1 and unequal widths) */
    if (o->cache == HFX_CACHE_DYNAMIC) {
        for (int p = 0; p < 2; p++) {
            int s = hfx_graph_state(g, name[p], HFX_STATE_APPEND, 2);
            if (o->has_past) {
                snprintf(input, sizeof input, "input.%.96s", name[p]);
                hfx_value *past = hfx_state_read(g, s, input, (*x[p])->dtype, 4,
                                                 (hfx_dim[]){c->batch, (*x[p])->dims[1], o->past, (*x[p])->dims[3]});
                hfx_value *both[2] = {past, *x[p]};
                *x[p] = hfx_concat(g, 2, both, 2);
            }
            c->cache_out[CACHE_PARTS * i + p] = *x[p];
            c->cache_state[CACHE_PARTS * i + p] = s;
        }
        if (c->m->window[i]) { /* the seed's sliding layer carries its window as a tensor, through */
            snprintf(name[2], sizeof name[2], "cache.layers.%lld._sliding_window_tensor", (long long)i);
            snprintf(input, sizeof input, "input.%.96s", name[2]);
            int s = hfx_graph_state(g, name[2], HFX_STATE_REPLACE, 0);
            hfx_value *in = hfx_state_read(g, s, input, HFX_DTYPE_I64, 0, NULL);
            c->cache_out[CACHE_PARTS * i + 2] = hfx_op2(g, HFX_OP_ADD, in, hfx_const_i64(g, 0)); /* a value of its own */
            c->cache_state[CACHE_PARTS * i + 2] = s;
        }
        return;
    }
    int s[SEED_PARTS];
    hfx_value *cache[2];
    hfx_dim cache_dims[2][4] = {{c->batch, (*k)->dims[1], o->max_cache, (*k)->dims[3]},
                                {c->batch, (*v)->dims[1], o->max_cache, (*v)->dims[3]}};
    for (int p = 0; p < SEED_PARTS; p++) {
        s[p] = hfx_graph_state(g, name[p], p < 2 ? HFX_STATE_WRITE : HFX_STATE_REPLACE, 2);
        if (p < 2 && !o->reads_state) continue;
        snprintf(input, sizeof input, "input.%.96s", name[p]);
        hfx_value *in = p < 2 ? hfx_state_read(g, s[p], input, (*x[p])->dtype, 4, cache_dims[p])
                              : hfx_state_read(g, s[p], input, HFX_DTYPE_I64, 0, NULL);
        if (p < 2) cache[p] = in;
        else c->cache_out[CACHE_PARTS * i + p] = in; /* the counter, for now */
    }
    hfx_value *counter = c->cache_out[CACHE_PARTS * i + 2];
    hfx_value *len = hfx_dim_of(g, *k, 2);
    hfx_value *slots = hfx_range(g, counter, hfx_op2(g, HFX_OP_ADD, counter, len), hfx_const_i64(g, 1), o->seq);
    if (!o->reads_state) { /* a prefill starts the cache: zeros [B,KV,M,D] */
        if (!hfx_dim_is_const(o->max_cache)) {
            hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "io seed: a static-cache prefill needs max_cache_len fixed "
                                                   "(a number, not a dynamic dim)");
            return;
        }
        hfx_value *shape = NULL;
        for (int p = 0; p < 2; p++) {
            bool same = p == 1 && hfx_dim_eq(cache_dims[1][1], cache_dims[0][1]) &&
                        hfx_dim_eq(cache_dims[1][3], cache_dims[0][3]);
            if (!same) { /* keys and values of one shape share it */
                hfx_value *dims[4] = {hfx_dim_of(g, *k, 0), hfx_const_i64(g, cache_dims[p][1].c),
                                      hfx_const_i64(g, o->max_cache.c), hfx_const_i64(g, cache_dims[p][3].c)};
                hfx_value *shape_parts[4];
                for (int d = 0; d < 4; d++) shape_parts[d] = hfx_unsqueeze(g, dims[d], 0);
                shape = hfx_concat(g, 4, shape_parts, 0);
            }
            cache[p] = hfx_expand(g, hfx_const_scalar(g, (*x[p])->dtype, 0.0), shape, 4, cache_dims[p]);
        }
    }
    for (int p = 0; p < 2; p++) {
        *x[p] = hfx_cache_write(g, cache[p], *x[p], slots);
        c->cache_out[CACHE_PARTS * i + p] = *x[p];
    }
    c->cache_out[CACHE_PARTS * i + 2] = hfx_op2(g, HFX_OP_ADD, counter, len);
    for (int p = 0; p < SEED_PARTS; p++) c->cache_state[CACHE_PARTS * i + p] = s[p];
    if (!c->seed_mask && !o->reads_state) { /* the prefill's causal mask over the M slots */
        hfx_value *kv_idx = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, cache[0], 2),
                                                       hfx_const_i64(g, 1), o->max_cache), 0); /* [1,M] */
        hfx_value *visible = hfx_op2(g, HFX_OP_LESS_EQUAL, kv_idx, hfx_unsqueeze(g, slots, 1)); /* [S,M] */
        c->seed_mask = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_where(g, visible, hfx_const_f32(g, 0.0f),
                                                                  hfx_const_f32(g, -FLT_MAX)), 0), 0);
    }
}

/* The seed profile's dynamic-cache mask: no mask input (batch 1, no padding), so causal by cache
 * index over the T = past + S keys the layer sees. */
static hfx_value *seed_causal_mask(layer_ctx *c, hfx_value *q, hfx_value *k, int64_t window) {
    hfx_graph *g = c->g;
    hfx_value *total = hfx_dim_of(g, k, 2), *q_len = hfx_dim_of(g, q, 2);
    hfx_value *q_idx = hfx_unsqueeze(g, hfx_range(g, hfx_op2(g, HFX_OP_SUB, total, q_len), total, hfx_const_i64(g, 1),
                                                  c->seq), 1); /* [S,1]: past + i */
    hfx_value *kv_idx = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), total, hfx_const_i64(g, 1), k->dims[2]), 0);
    hfx_value *visible = hfx_op2(g, HFX_OP_LESS_EQUAL, kv_idx, q_idx); /* [S,T] */
    if (window) /* and within the window: key > query - window (transformers' sliding_window_overlay) */
        visible = hfx_op2(g, HFX_OP_AND, visible,
                          hfx_op2(g, HFX_OP_GREATER, kv_idx, hfx_op2(g, HFX_OP_SUB, q_idx, hfx_const_i64(g, window))));
    return hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX)), 0), 0);
}

/* x [B,S,in] → [B,S,out] through `<prefix>.weight` [out,in] (+ `<prefix>.bias` [out]). */
/* A linear's weight as [out, in]: GPT-2's Conv1D stores [in, out], read through a transposed view. */
static hfx_value *weight_out_in(layer_ctx *c, int64_t in, int64_t out, const char *prefix) {
    if (c->d->conv1d) return hfx_const_transpose2d(c->g, hfx_weight(c->w, 2, (int64_t[]){in, out}, "%s.weight", prefix));
    return hfx_weight(c->w, 2, (int64_t[]){out, in}, "%s.weight", prefix);
}

static hfx_value *proj(layer_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias,
                       const char *prefix) {
    hfx_value *w = weight_out_in(c, in, out, prefix);
    hfx_value *b = bias ? hfx_weight(c->w, 1, &out, "%s.bias", prefix) : NULL;
    return hfx_linear(c->g, x, w, b);
}

/* x · k in x's dtype (x itself when k is 1). */
static hfx_value *scaled(hfx_graph *g, hfx_value *x, double k) {
    return k == 1.0 ? x : hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, x->dtype, k));
}

/* [B,S,n·d] → [B,n,S,d] */
static hfx_value *split_heads(layer_ctx *c, hfx_value *x, int64_t n, int64_t d) {
    hfx_dim dims[4] = {c->batch, c->seq, hfx_dim_const(n), hfx_dim_const(d)};
    return hfx_reshape(c->g, x, 4, dims);
}

static hfx_value *to_bhsd(layer_ctx *c, hfx_value *x) {
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

/* The descriptor's norm over the last axis of x, weights `<prefix>.weight` (+ `.bias`) of size n. */
static hfx_value *norm(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix) {
    if (c->d->norm == HFX_NORM_LAYER_PLAIN) /* no weights: transformers hard-codes ε and computes in f32 */
        return hfx_cast(c->g, hfx_layer_norm(c->g, hfx_cast(c->g, x, HFX_DTYPE_F32), NULL, NULL, 1e-5), x->dtype);
    hfx_value *w = hfx_weight(c->w, 1, &n, "%s.weight", prefix);
    switch (c->d->norm) {
    case HFX_NORM_RMS: return hfx_rms_norm(c->g, x, w, c->m->eps, 0);
    case HFX_NORM_RMS_OFFSET: return hfx_rms_norm(c->g, x, w, c->m->eps, 1.0);
    case HFX_NORM_LAYER: return hfx_layer_norm(c->g, x, w, hfx_weight(c->w, 1, &n, "%s.bias", prefix), c->m->eps);
    case HFX_NORM_LAYER_WEIGHT: /* in f32, cast back */
        return hfx_cast(c->g, hfx_layer_norm(c->g, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, w, HFX_DTYPE_F32),
                                             NULL, c->m->eps), x->dtype);
    case HFX_NORM_LAYER_PLAIN: break;
    }
    return x;
}

/* x [B,S,heads,hd] normalized over hd, times each head's weight [heads, hd] (no bias) */
static hfx_value *head_weighted_norm(layer_ctx *c, hfx_value *x, int64_t heads, int64_t hd, const char *prefix) {
    hfx_graph *g = c->g;
    char probe[192];
    snprintf(probe, sizeof probe, "%s.norms.0.weight", prefix);
    hfx_value *w;
    if (hfx_weight_exists(c->w, probe)) { /* StableLM: nn.LayerNorm(hd, bias=False) per head */
        hfx_value **ws = hfx_arena_alloc(g->arena, (size_t)heads * sizeof *ws);
        if (!ws) {
            hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            return x;
        }
        for (int64_t h = 0; h < heads; h++) ws[h] = hfx_weight(c->w, 1, &hd, "%s.norms.%lld.weight", prefix, (long long)h);
        w = hfx_const_stack(g, (int)heads, ws);
    } else {
        w = hfx_weight(c->w, 2, (int64_t[]){heads, hd}, "%s.weight", prefix);
    }
    if (c->d->norm == HFX_NORM_LAYER_WEIGHT) /* Cohere: in f32, the weight too, cast back */
        return hfx_cast(g, hfx_op2(g, HFX_OP_MUL, hfx_layer_norm(g, hfx_cast(g, x, HFX_DTYPE_F32), NULL, NULL, c->m->eps),
                                   hfx_cast(g, w, HFX_DTYPE_F32)), x->dtype);
    return hfx_op2(g, HFX_OP_MUL, hfx_layer_norm(g, x, NULL, NULL, c->m->eps), w);
}

/* x [..., d] with its rotary pairs (0,1), (2,3), ... regrouped as halves: evens, then odds */
static hfx_value *pairs_to_halves(layer_ctx *c, hfx_value *x) {
    int64_t d = x->dims[x->rank - 1].c;
    int64_t *order = hfx_arena_alloc(c->g->arena, (size_t)d * sizeof *order);
    if (!order) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    for (int64_t j = 0; j < d; j++) order[j] = j < d / 2 ? 2 * j : 2 * (j - d / 2) + 1;
    hfx_value *idx = hfx_const_bytes(c->g, HFX_DTYPE_I64, 1, &d, order);
    return hfx_gather(c->g, x, idx, x->rank - 1);
}

/* Multi-head latent attention (DeepSeek V2/V3): q from a low-rank projection (q_a, RMSNorm, q_b)
 * or q_proj; one shared latent kv_a → (RMSNorm'd latent [B,1,S,R], rotary key part [B,1,S,r]),
 * which is what the cache holds; kv_b expands the latent of every cached position into per-head
 * keys (no-rope part) and values, and the rotary key part is shared by all heads. */
static hfx_value *mla_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->heads, nope = m->qk_nope, rope = m->qk_rope, qk = nope + rope, R = m->kv_lora, V = m->v_dim;
    char p[160];
#define P(name) tensor_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *q;
    if (m->q_lora) {
        q = proj(c, h, m->hidden, m->q_lora, m->q_bias, P("q_a_proj"));
        q = norm(c, q, m->q_lora, P("q_a_layernorm"));
        q = proj(c, q, m->q_lora, H * qk, false, P("q_b_proj"));
    } else {
        q = proj(c, h, m->hidden, H * qk, false, P("q_proj"));
    }
    q = to_bhsd(c, split_heads(c, q, H, qk));                           /* [B,H,S,qk] */
    hfx_value *q_pass = hfx_slice(g, q, 3, 0, nope), *q_rot = hfx_slice(g, q, 3, nope, qk);
    hfx_value *ckv = proj(c, h, m->hidden, R + rope, m->q_bias, P("kv_a_proj_with_mqa")); /* [B,S,R+r] */
    hfx_value *latent = norm(c, hfx_slice(g, ckv, 2, 0, R), R, P("kv_a_layernorm"));
    latent = hfx_unsqueeze(g, latent, 1);                               /* [B,1,S,R] */
    hfx_value *k_rot = hfx_unsqueeze(g, hfx_slice(g, ckv, 2, R, R + rope), 1); /* [B,1,S,r] */
    if (m->rope_deinterleave) q_rot = pairs_to_halves(c, q_rot), k_rot = pairs_to_halves(c, k_rot);
    q_rot = hfx_rope_apply(g, q_rot, cos, sin, m->rope.interleaved);
    k_rot = hfx_rope_apply(g, k_rot, cos, sin, m->rope.interleaved);
    if (c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE) {
        seed_cache(c, i, &latent, &k_rot);
        if (!c->seed_mask) c->seed_mask = seed_causal_mask(c, q, latent, 0);
        bias = c->seed_mask;
    } else {
        latent = with_cache(c, i, latent, "key", 0);                    /* [B,1,T,R] */
        k_rot = with_cache(c, i, k_rot, "value", 1);                    /* [B,1,T,r] */
    }
    hfx_dim T = latent->dims[2];
    hfx_value *kv = proj(c, hfx_reshape(g, latent, 3, (hfx_dim[]){c->batch, T, hfx_dim_const(R)}), R, H * (nope + V),
                         false, P("kv_b_proj"));
    kv = to_bhsd(c, hfx_reshape(g, kv, 4, (hfx_dim[]){c->batch, T, hfx_dim_const(H), hfx_dim_const(nope + V)}));
    hfx_value *k_nope = hfx_slice(g, kv, 3, 0, nope), *v = hfx_slice(g, kv, 3, nope, nope + V); /* [B,H,T,·] */
    /* the shared rotary part broadcast over the heads: + 0 of [1,H,1,1] (exact) */
    int64_t zeros_shape[4] = {1, H, 1, 1};
    float *zeros = hfx_arena_alloc(g->arena, (size_t)H * sizeof *zeros);
    if (!zeros) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return h;
    }
    memset(zeros, 0, (size_t)H * sizeof *zeros);
    hfx_value *heads0 = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 4, zeros_shape, zeros), k_rot->dtype);
    hfx_value *k_rot_h = hfx_op2(g, HFX_OP_ADD, k_rot, heads0);
    hfx_value *qs[2] = {q_pass, q_rot}, *ks[2] = {k_nope, k_rot_h};
    hfx_value *a = hfx_attention(g, hfx_concat(g, 2, qs, 3), hfx_concat(g, 2, ks, 3), v, bias, m->scale, 0,
                                 m->window[i]);                          /* [B,H,S,V] */
    a = hfx_reshape(g, hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3}), 3,
                    (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H * V)});
    return proj(c, a, H * V, m->hidden, m->o_bias, P(c->n.o));
#undef P
}

static hfx_value *attention_block(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos,
                                  hfx_value *sin, hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_desc *d = c->d;
    hfx_graph *g = c->g;
    if (d->mla) return mla_attention(c, i, h, cos, sin, bias);
    int64_t hd = m->head_dim, window = m->window[i];
    char p[160];
#define P(name) tensor_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *q, *k, *v, *gate = NULL;
    if (d->qkv != HFX_QKV_SEPARATE) { /* one fused weight: a view of it per projection, no copy */
        int64_t nq = m->heads * hd, nkv = m->kv_heads * hd;
        hfx_value *w = weight_out_in(c, m->hidden, nq + 2 * nkv, P(c->n.qkv));
        hfx_value *b = m->q_bias ? hfx_weight(c->w, 1, (int64_t[]){nq + 2 * nkv}, "%s.bias", P(c->n.qkv)) : NULL;
        hfx_value *part[3];
        for (int j = 0; j < 3; j++) {
            hfx_value *wj, *bj = NULL;
            if (d->qkv == HFX_QKV_CONCAT) { /* rows [q; k; v] */
                int64_t start = j == 0 ? 0 : nq + (j - 1) * nkv, len = j == 0 ? nq : nkv;
                wj = hfx_const_slice(g, w, 0, start, len);
                if (b) bj = hfx_const_slice(g, b, 0, start, len);
            } else { /* per head h: rows [q_h; k_h; v_h] (MHA) */
                wj = hfx_const_interleaved_rows(g, w, m->heads, 3, j, hd);
                if (b) bj = hfx_const_interleaved_rows(g, b, m->heads, 3, j, hd);
            }
            part[j] = hfx_linear(g, h, wj, bj);
        }
        q = part[0], k = part[1], v = part[2];
    } else if (d->attn_output_gate) { /* q_proj's rows per head: [query_h; gate_h] */
        hfx_value *w = weight_out_in(c, m->hidden, 2 * m->heads * hd, P("q_proj"));
        hfx_value *b = m->q_bias ? hfx_weight(c->w, 1, (int64_t[]){2 * m->heads * hd}, "%s.bias", P("q_proj")) : NULL;
        q = hfx_linear(g, h, hfx_const_interleaved_rows(g, w, m->heads, 2, 0, hd),
                       b ? hfx_const_interleaved_rows(g, b, m->heads, 2, 0, hd) : NULL);
        gate = hfx_linear(g, h, hfx_const_interleaved_rows(g, w, m->heads, 2, 1, hd),
                          b ? hfx_const_interleaved_rows(g, b, m->heads, 2, 1, hd) : NULL);
        k = proj(c, h, m->hidden, m->kv_heads * hd, m->k_bias, P("k_proj"));
        v = proj(c, h, m->hidden, m->kv_heads * hd, m->v_bias, P("v_proj"));
    } else {
        q = proj(c, h, m->hidden, m->heads * hd, m->q_bias, P("q_proj"));
        k = proj(c, h, m->hidden, m->kv_heads * hd, m->k_bias, P("k_proj"));
        v = proj(c, h, m->hidden, m->kv_heads * hd, m->v_bias, P("v_proj"));
    }
    if (m->qk_norm == HFX_QK_NORM_WHOLE) { /* over the whole projection (OLMo-2, OLMoE) */
        q = norm(c, q, m->heads * hd, P(c->n.q_norm));
        k = norm(c, k, m->kv_heads * hd, P(c->n.k_norm));
    }
    if (m->clip_qkv > 0) { /* clamp_(-c, c), after the norms (OLMoE; OLMo has none) */
        hfx_value **x[3] = {&q, &k, &v};
        for (int j = 0; j < 3; j++) {
            hfx_value *lo = hfx_const_scalar(g, (*x[j])->dtype, -m->clip_qkv), *hi = hfx_const_scalar(g, (*x[j])->dtype, m->clip_qkv);
            *x[j] = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, *x[j], lo), hi);
        }
    }
    k = scaled(g, k, m->key_mult); /* Falcon-H1's key_multiplier */
    q = split_heads(c, q, m->heads, hd);
    k = split_heads(c, k, m->kv_heads, hd);
    v = split_heads(c, v, m->kv_heads, hd);
    if (m->qk_norm == HFX_QK_NORM_PER_HEAD) { /* over head_dim, per head, before rotary */
        q = norm(c, q, hd, P(c->n.q_norm));
        k = norm(c, k, hd, P(c->n.k_norm));
    }
    if (m->qk_norm == HFX_QK_NORM_HEAD_WEIGHTS) {
        q = head_weighted_norm(c, q, m->heads, hd, P(c->n.q_norm));
        k = head_weighted_norm(c, k, m->kv_heads, hd, P(c->n.k_norm));
    }
    q = to_bhsd(c, q);
    k = to_bhsd(c, k);
    if (cos && !m->no_rope[i]) { /* rotary; learned absolute positions were added to the embeddings instead */
        hfx_dtype dt = q->dtype; /* ERNIE 4.5 rotates in f32 (its cos/sin are f32 too) */
        if (d->rope_f32) q = hfx_cast(g, q, HFX_DTYPE_F32), k = hfx_cast(g, k, HFX_DTYPE_F32);
        q = hfx_cast(g, hfx_rope_apply(g, q, cos, sin, m->rope.interleaved), dt);
        k = hfx_cast(g, hfx_rope_apply(g, k, cos, sin, m->rope.interleaved), dt);
    }
    if (c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE) {
        v = to_bhsd(c, v);
        seed_cache(c, i, &k, &v);
        if (window) { /* a dynamic cache's sliding layer: causal within the window */
            if (!c->seed_window_mask) c->seed_window_mask = seed_causal_mask(c, q, k, window);
            bias = c->seed_window_mask;
        } else {
            if (!c->seed_mask) c->seed_mask = seed_causal_mask(c, q, k, 0); /* a dynamic cache: causal */
            bias = c->seed_mask;
        }
    } else {
        k = with_cache(c, i, k, "key", 0);
        v = with_cache(c, i, to_bhsd(c, v), "value", 1);
    }
    double scale = m->scale_by_layer ? m->scale / (double)(i + 1) : m->scale;
    hfx_value *a; /* [B,H,S,hd] */
    if (c->d->attn_sinks) {
        char sp[160];
        hfx_value *sinks = hfx_weight(c->w, 1, &m->heads, "%s", tensor_name(c, i, c->n.attn, "sinks", sp, sizeof sp));
        a = hfx_attention_with_sinks(g, q, k, v, bias, hfx_cast(g, sinks, HFX_DTYPE_F32), scale, window);
    } else {
        a = hfx_attention(g, q, k, v, bias, scale, m->attn_softcap, window);
    }
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->heads * hd)});
    if (gate) a = hfx_op2(g, HFX_OP_MUL, a, hfx_op1(g, HFX_OP_SIGMOID, gate));
    return proj(c, a, m->heads * hd, m->hidden, m->o_bias, P(c->n.o));
#undef P
}

static hfx_value *moe_block(layer_ctx *c, int64_t i, hfx_value *h);

/* Granite 4.0's shared MLP: input_linear [gate; up] of shared_intermediate_size, output_linear. */
static hfx_value *granite_shared_mlp(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    int64_t S = m->shared_intermediate, H = m->hidden;
    char p[160];
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * S, H}, "%s", tensor_name(c, i, "shared_mlp", "input_linear.weight", p, sizeof p));
    hfx_value *gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, S), NULL);
    hfx_value *up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, S, S), NULL);
    hfx_value *a = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
    return proj(c, a, S, H, false, tensor_name(c, i, "shared_mlp", "output_linear", p, sizeof p));
}

static hfx_value *mlp_block(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    if (c->d->granite_shared_mlp) /* the experts (if any) + the shared MLP, in transformers' order */
        return m->sparse[i] ? hfx_op2(c->g, HFX_OP_ADD, moe_block(c, i, h), granite_shared_mlp(c, i, h))
                            : granite_shared_mlp(c, i, h);
    if (m->sparse[i]) return moe_block(c, i, h);
    char p[160];
#define P(name) tensor_name(c, i, c->n.mlp, name, p, sizeof p)
    if (!c->d->gated_mlp) {
        hfx_value *up = proj(c, h, m->hidden, m->intermediate, m->mlp_bias, P(c->n.fc_in));
        return proj(c, hfx_activate(c->g, m->act, up), m->intermediate, m->hidden, m->mlp_bias, P(c->n.fc_out));
    }
    hfx_value *gate, *up;
    if (c->d->fused_gate_up) { /* one [gate; up] weight (Phi-3) */
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * m->intermediate, m->hidden}, "%s.weight", P("gate_up_proj"));
        gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, m->intermediate), NULL);
        up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, m->intermediate, m->intermediate), NULL);
    } else {
        gate = proj(c, h, m->hidden, m->intermediate, m->mlp_bias, P(c->n.gate));
        up = proj(c, h, m->hidden, m->intermediate, m->mlp_bias, P(c->n.up));
    }
    gate = scaled(c->g, gate, m->gate_mult); /* Falcon-H1's mlp_multipliers */
    hfx_value *act = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
    return scaled(c->g, proj(c, act, m->intermediate, m->hidden, m->mlp_bias, P(c->n.down)), m->down_mult);
#undef P
}

/* The experts' weights of one kind as [E, rows, cols], from the fused 3-D tensor when the
 * checkpoint has it, else stacked from the per-expert tensors (views either way). */
static hfx_value *expert_weights(layer_ctx *c, int64_t i, const char *block, const char *per_expert,
                                 int64_t rows, int64_t cols) {
    const hfx_decoder_cfg *m = c->m;
    char p[192];
    hfx_value **ws = hfx_arena_alloc(c->g->arena, (size_t)m->experts * sizeof *ws);
    if (!ws) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_f32(c->g, 0.0f);
    }
    for (int64_t e = 0; e < m->experts; e++) {
        char leaf[96];
        snprintf(leaf, sizeof leaf, "experts.%lld.%s.weight", (long long)e, per_expert);
        ws[e] = hfx_weight(c->w, 2, (int64_t[]){rows, cols}, "%s", tensor_name(c, i, block, leaf, p, sizeof p));
    }
    return hfx_const_stack(c->g, (int)m->experts, ws);
}

/* DeepSeek's router, in f32: scores sigmoid(logits) (V3) or softmax(logits) (V2); the experts are
 * chosen among the top_groups groups ranked by the sum of their two best scores + the correction
 * bias (V3) or their best score (V2), others masked; the chosen experts' scores (V3: without the
 * bias; V2: as masked) renormalised when norm_topk_prob (V3), times routed_scaling_factor. One-hot
 * comparisons against the expert index stand in for gathers along the last axis. */
static void deepseek_route(layer_ctx *c, int64_t i, hfx_value *h, bool gather, hfx_value **w_out, hfx_value **idx_out,
                           hfx_value **dense_out) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    bool v3 = c->d->deepseek_v3_router;
    int64_t E = m->experts, K = m->top_k, G = m->groups, per = E / G, axis = -1;
    char p[192];
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, m->hidden}, "%s", tensor_name(c, i, "mlp", "gate.weight", p, sizeof p));
    hfx_value *logits = hfx_cast(g, hfx_linear(g, h, router, NULL), HFX_DTYPE_F32); /* [B,S,E] */
    hfx_value *scores = v3 ? hfx_op1(g, HFX_OP_SIGMOID, logits) : hfx_softmax(g, logits, -1);
    hfx_value *choice = scores;
    if (v3) {
        hfx_value *corr = hfx_weight(c->w, 1, &E, "%s", tensor_name(c, i, "mlp", "gate.e_score_correction_bias", p, sizeof p));
        choice = hfx_op2(g, HFX_OP_ADD, scores, hfx_cast(g, corr, HFX_DTYPE_F32));
    }
    hfx_dim bs[2] = {c->batch, c->seq};
    if (G > 1 || m->top_groups < G) {
        hfx_dim grouped[4] = {bs[0], bs[1], hfx_dim_const(G), hfx_dim_const(per)};
        hfx_value *gs = hfx_reshape(g, choice, 4, grouped);             /* [B,S,G,per] */
        hfx_value *rank;                                                 /* [B,S,G,1] */
        if (v3) {
            hfx_value *best2, *unused;
            hfx_top_k(g, gs, 2, &best2, &unused);
            rank = hfx_reduce(g, HFX_OP_REDUCE_SUM, best2, 1, &axis);
        } else {
            rank = hfx_reduce(g, HFX_OP_REDUCE_MAX, gs, 1, &axis);
        }
        rank = hfx_reshape(g, rank, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(G)});
        hfx_value *kept_vals, *kept;                                     /* [B,S,top_groups] */
        hfx_top_k(g, rank, m->top_groups, &kept_vals, &kept);
        hfx_value *group_ids = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, G), hfx_const_i64(g, 1), hfx_dim_const(G));
        hfx_value *hit = hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, kept, -1), group_ids); /* [B,S,tg,G] */
        int64_t tg_axis = 2;
        hfx_value *keep = hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_cast(g, hit, HFX_DTYPE_F32), 1, &tg_axis); /* [B,S,1,G] */
        keep = hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, keep, 4, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(G),
                                                                              hfx_dim_const(1)}),
                       hfx_const_f32(g, 0.0f));                          /* [B,S,G,1] */
        hfx_value *fill = hfx_const_f32(g, v3 ? -INFINITY : 0.0f);
        choice = hfx_reshape(g, hfx_where(g, keep, gs, fill), 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(E)});
    }
    hfx_value *vals, *idx;
    hfx_top_k(g, choice, K, &vals, &idx);                                /* [B,S,K] */
    hfx_value *expert_ids = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, E), hfx_const_i64(g, 1), hfx_dim_const(E));
    hfx_value *onehot = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, idx, -1), expert_ids), HFX_DTYPE_F32);
    hfx_value *source = v3 ? scores : choice;                            /* [B,S,E] */
    hfx_value *w = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, onehot, hfx_unsqueeze(g, source, 2)), 1, &axis);
    w = hfx_reshape(g, w, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(K)}); /* [B,S,K] */
    if (m->norm_topk)
        w = hfx_op2(g, HFX_OP_DIV, w, hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis),
                                              hfx_const_f32(g, 1e-20f)));
    w = hfx_op2(g, HFX_OP_MUL, w, hfx_const_f32(g, (float)m->routed_scale));
    if (gather) {
        *w_out = w, *idx_out = idx;
        return;
    }
    int64_t k_axis = 2; /* dense: Σ_k onehot_k · w_k → [B,S,E] */
    hfx_value *dense = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, onehot, hfx_unsqueeze(g, w, -1)), 1, &k_axis);
    *dense_out = hfx_reshape(g, dense, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(E)});
}

/* Mixture of experts without data-dependent shapes: the router's top-k weights as a dense
 * [B,S,E] (zero outside the top k), every expert computed as one batched MatMul per
 * projection, and the outputs summed with those weights. Equal to transformers' gather of the
 * chosen experts, since the others are weighted by an exact zero. */
static hfx_value *routed_experts(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    bool mixtral = c->d->moe == HFX_MOE_MIXTRAL, granite = c->d->moe == HFX_MOE_GRANITE;
    char p[192];
    /* transformers 5's own layout: mlp.gate + fused mlp.experts.{gate_up,down}_proj; saved
     * checkpoints: per-expert tensors (Mixtral's under block_sparse_moe, as w1/w3/w2) */
    /* transformers 5's own layout: mlp.gate + fused mlp.experts.{gate_up,down}_proj; saved
     * checkpoints: per-expert tensors (Mixtral's under block_sparse_moe, as w1/w3/w2), or
     * GraniteMoE's fused input_linear / output_linear with router.layer */
    const char *block = mixtral || granite ? "block_sparse_moe" : "mlp";
    bool fused = hfx_weight_exists(c->w, tensor_name(c, i, "mlp", "experts.gate_up_proj", p, sizeof p));
    if (fused) block = "mlp";
    if (granite) fused = true; /* Granite's experts come fused, under either name */
    bool hub_granite = granite && hfx_weight_exists(c->w, tensor_name(c, i, block, "input_linear.weight", p, sizeof p));
    int64_t E = m->experts, I = m->moe_intermediate, H = m->hidden, K = m->top_k, axis = -1;
    /* the routing: gathered, each token's k weights and experts [B,S,K]; else a dense [B,S,E] */
    hfx_value *w = NULL, *idx = NULL, *top = NULL;
    if (c->d->moe == HFX_MOE_DEEPSEEK) {
        deepseek_route(c, i, h, c->o->moe_gather, &w, &idx, &top);
    } else {
        const char *router_name = granite ? (hub_granite ? "router.layer.weight" : "router.weight") : "gate.weight";
        hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", tensor_name(c, i, block, router_name, p, sizeof p));
        hfx_value *probs = hfx_softmax(g, hfx_cast(g, hfx_linear(g, h, router, NULL), HFX_DTYPE_F32), -1);
        if (c->o->moe_gather) {
            hfx_top_k(g, probs, K, &w, &idx);
            if (m->norm_topk) w = hfx_op2(g, HFX_OP_DIV, w, hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis));
        } else {
            top = hfx_top_k_mask(g, probs, K);
            if (m->norm_topk) top = hfx_op2(g, HFX_OP_DIV, top, hfx_reduce(g, HFX_OP_REDUCE_SUM, top, 1, &axis));
        }
    }

    hfx_value *gate, *up, *down; /* [E, I, H], [E, I, H], [E, H, I] */
    if (fused) {
        hfx_value *gu = hfx_weight(c->w, 3, (int64_t[]){E, 2 * I, H}, "%s",
                                   tensor_name(c, i, block, hub_granite ? "input_linear.weight" : "experts.gate_up_proj",
                                               p, sizeof p));
        gate = hfx_const_slice(g, gu, 1, 0, I);
        up = hfx_const_slice(g, gu, 1, I, I);
        down = hfx_weight(c->w, 3, (int64_t[]){E, H, I}, "%s",
                          tensor_name(c, i, block, hub_granite ? "output_linear.weight" : "experts.down_proj", p, sizeof p));
    } else {
        gate = expert_weights(c, i, block, mixtral ? "w1" : "gate_proj", I, H);
        up = expert_weights(c, i, block, mixtral ? "w3" : "up_proj", I, H);
        down = expert_weights(c, i, block, mixtral ? "w2" : "down_proj", H, I);
    }
    if (c->o->moe_gather) {
        /* each token's k experts gathered by index: [B,S,K,I,H] @ [B,S,1,H,1] → [B,S,K,I,1] */
        w = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, w, h->dtype), -1), -1); /* [B,S,K,1,1] */
        hfx_value *x5 = hfx_unsqueeze(g, hfx_unsqueeze(g, h, 2), -1);             /* [B,S,1,H,1] */
        hfx_value *g5 = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, gate, idx, 0), x5);
        hfx_value *u5 = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, up, idx, 0), x5);
        hfx_value *a5 = hfx_op2(g, HFX_OP_MUL, hfx_activate(g, m->act, g5), u5);
        hfx_value *y5 = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, down, idx, 0), a5); /* [B,S,K,H,1] */
        int64_t k_axis = 2;
        hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y5, w), 1, &k_axis);
        return hfx_reshape(g, sum, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H)});
    }
    /* every expert at once: [1,B,S,H] @ [E,1,H,I] → [E,B,S,I], weighted by the dense top-k mask */
    top = hfx_cast(g, top, h->dtype);
    static const int64_t swap_last[3] = {0, 2, 1};
    hfx_value *x4 = hfx_unsqueeze(g, h, 0);
    hfx_value *g4 = hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, hfx_const_permute(g, gate, swap_last), 1));
    hfx_value *u4 = hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, hfx_const_permute(g, up, swap_last), 1));
    hfx_value *a4 = hfx_op2(g, HFX_OP_MUL, hfx_activate(g, m->act, g4), u4);
    hfx_value *y4 = hfx_op2(g, HFX_OP_MATMUL, a4, hfx_unsqueeze(g, hfx_const_permute(g, down, swap_last), 1)); /* [E,B,S,H] */
    hfx_value *w4 = hfx_unsqueeze(g, hfx_transpose(g, top, 3, (int64_t[]){2, 0, 1}), -1);       /* [E,B,S,1] */
    int64_t axis0 = 0;
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y4, w4), 1, &axis0); /* [1,B,S,H] */
    return hfx_reshape(g, sum, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H)});
}

/* GPT-OSS's gate on [.., 2I] with gate and up interleaved: (clamp(up, ±limit) + 1)·g·σ(α·g),
 * g = min(gate, limit) → [.., I]. `dims` is the input's shape with I last. */
static hfx_value *clamped_swiglu(layer_ctx *c, hfx_value *gu, int rank, const hfx_dim *dims) {
    hfx_graph *g = c->g;
    const hfx_decoder_cfg *m = c->m;
    hfx_dim pairs[HFX_MAX_RANK + 1];
    for (int a = 0; a < rank; a++) pairs[a] = dims[a];
    pairs[rank] = hfx_dim_const(2);
    hfx_value *p = hfx_reshape(g, gu, rank + 1, pairs); /* [.., I, 2]: (gate, up) */
    hfx_value *gate = hfx_gather(g, p, hfx_const_i64(g, 0), rank);
    hfx_value *up = hfx_gather(g, p, hfx_const_i64(g, 1), rank);
    hfx_dtype dt = gu->dtype;
    hfx_value *limit = hfx_const_scalar(g, dt, m->swiglu_limit);
    gate = hfx_op2(g, HFX_OP_MIN, gate, limit);
    up = hfx_op2(g, HFX_OP_MAX, hfx_op2(g, HFX_OP_MIN, up, limit), hfx_const_scalar(g, dt, -m->swiglu_limit));
    hfx_value *glu = hfx_op2(g, HFX_OP_MUL, gate,
                             hfx_op1(g, HFX_OP_SIGMOID, hfx_op2(g, HFX_OP_MUL, gate, hfx_const_scalar(g, dt, m->swiglu_alpha))));
    return hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, up, hfx_const_scalar(g, dt, 1.0)), glu);
}

/* GPT-OSS's experts: the router's logits (with bias), softmax over the k largest, and every
 * expert (or, gathered, each token's k) as x·W + b with the clamped SwiGLU between. */
static hfx_value *gpt_oss_experts(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->experts, I = m->moe_intermediate, H = m->hidden, K = m->top_k, axis = -1;
    char p[192];
#define P(name) tensor_name(c, i, "mlp", name, p, sizeof p)
    hfx_value *rw = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("router.weight"));
    hfx_value *rb = hfx_weight(c->w, 1, &E, "%s", P("router.bias"));
    hfx_value *probs = hfx_softmax(g, hfx_cast(g, hfx_linear(g, h, rw, rb), HFX_DTYPE_F32), -1);
    hfx_value *gu = hfx_weight(c->w, 3, (int64_t[]){E, H, 2 * I}, "%s", P("experts.gate_up_proj"));
    hfx_value *gub = hfx_weight(c->w, 2, (int64_t[]){E, 2 * I}, "%s", P("experts.gate_up_proj_bias"));
    hfx_value *down = hfx_weight(c->w, 3, (int64_t[]){E, I, H}, "%s", P("experts.down_proj"));
    hfx_value *db = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("experts.down_proj_bias"));
#undef P
    static const int64_t swap_last[3] = {0, 2, 1};
    hfx_dim bs[2] = {c->batch, c->seq};
    if (c->o->moe_gather) { /* each token's k experts: [B,S,K,2I,H] @ [B,S,1,H,1] */
        hfx_value *w, *idx;
        hfx_top_k(g, probs, K, &w, &idx);
        w = hfx_op2(g, HFX_OP_DIV, w, hfx_reduce(g, HFX_OP_REDUCE_SUM, w, 1, &axis));
        w = hfx_unsqueeze(g, hfx_cast(g, w, h->dtype), -1); /* [B,S,K,1] */
        hfx_value *x5 = hfx_unsqueeze(g, hfx_unsqueeze(g, h, 2), -1);
        hfx_dim bsk2i[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(2 * I)};
        hfx_value *a = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, gu, swap_last), idx, 0), x5);
        a = hfx_op2(g, HFX_OP_ADD, hfx_reshape(g, a, 4, bsk2i), hfx_gather(g, gub, idx, 0));
        hfx_dim bski[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(I)};
        a = hfx_unsqueeze(g, clamped_swiglu(c, a, 4, bski), -1);                        /* [B,S,K,I,1] */
        hfx_value *y = hfx_op2(g, HFX_OP_MATMUL, hfx_gather(g, hfx_const_permute(g, down, swap_last), idx, 0), a);
        hfx_dim bskh[4] = {bs[0], bs[1], hfx_dim_const(K), hfx_dim_const(H)};
        y = hfx_op2(g, HFX_OP_ADD, hfx_reshape(g, y, 4, bskh), hfx_gather(g, db, idx, 0)); /* [B,S,K,H] */
        int64_t k_axis = 2;
        hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y, w), 1, &k_axis);
        return hfx_reshape(g, sum, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(H)});
    }
    /* every expert: [1,B,S,H] @ [E,1,H,2I] + b → [E,B,S,2I], weighted by the dense top-k mask */
    hfx_value *top = hfx_top_k_mask(g, probs, K);
    top = hfx_cast(g, hfx_op2(g, HFX_OP_DIV, top, hfx_reduce(g, HFX_OP_REDUCE_SUM, top, 1, &axis)), h->dtype);
    hfx_value *x4 = hfx_unsqueeze(g, h, 0);
    hfx_value *a = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MATMUL, x4, hfx_unsqueeze(g, gu, 1)),
                           hfx_unsqueeze(g, hfx_unsqueeze(g, gub, 1), 1));
    hfx_dim ebsi[4] = {hfx_dim_const(E), bs[0], bs[1], hfx_dim_const(I)};
    a = clamped_swiglu(c, a, 4, ebsi);
    hfx_value *y = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MATMUL, a, hfx_unsqueeze(g, down, 1)),
                           hfx_unsqueeze(g, hfx_unsqueeze(g, db, 1), 1));                 /* [E,B,S,H] */
    hfx_value *w4 = hfx_unsqueeze(g, hfx_transpose(g, top, 3, (int64_t[]){2, 0, 1}), -1); /* [E,B,S,1] */
    int64_t axis0 = 0;
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, y, w4), 1, &axis0);
    return hfx_reshape(g, sum, 3, (hfx_dim[]){bs[0], bs[1], hfx_dim_const(H)});
}

/* The experts, plus Qwen2-MoE's shared expert: a gated MLP of shared_expert_intermediate_size
 * scaled by sigmoid(shared_expert_gate(h)), in the activations' dtype. */
static hfx_value *moe_block(layer_ctx *c, int64_t i, hfx_value *h) {
    if (c->d->moe == HFX_MOE_GPT_OSS) return gpt_oss_experts(c, i, h);
    hfx_value *y = routed_experts(c, i, h);
    if (c->d->moe == HFX_MOE_DEEPSEEK) { /* shared_experts: a plain gated MLP beside the routed ones */
        const hfx_decoder_cfg *m = c->m;
        int64_t H = m->hidden, S = m->shared_intermediate;
        char p[192];
#define P(name) tensor_name(c, i, "mlp", name, p, sizeof p)
        hfx_value *gate = proj(c, h, H, S, false, P("shared_experts.gate_proj"));
        hfx_value *up = proj(c, h, H, S, false, P("shared_experts.up_proj"));
        hfx_value *a = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
        hfx_value *shared = proj(c, a, S, H, false, P("shared_experts.down_proj"));
#undef P
        return hfx_op2(c->g, HFX_OP_ADD, y, shared);
    }
    if (c->d->moe != HFX_MOE_QWEN2) return y;
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden, S = m->shared_intermediate;
    char p[192];
#define P(name) tensor_name(c, i, "mlp", name, p, sizeof p)
    hfx_value *gate = proj(c, h, H, S, false, P("shared_expert.gate_proj"));
    hfx_value *up = proj(c, h, H, S, false, P("shared_expert.up_proj"));
    hfx_value *shared = proj(c, hfx_op2(g, HFX_OP_MUL, hfx_activate(g, m->act, gate), up), S, H, false,
                             P("shared_expert.down_proj"));
    hfx_value *scale = hfx_op1(g, HFX_OP_SIGMOID, proj(c, h, H, 1, false, P("shared_expert_gate")));
#undef P
    return hfx_op2(g, HFX_OP_ADD, y, hfx_op2(g, HFX_OP_MUL, scale, shared));
}

/* Whether this call continues from an earlier one's recurrent state: a growing cache's step, or
 * (a static cache) any component that reads what an earlier call wrote. A prompt starts from zeros. */
static bool continues(const layer_ctx *c) {
    return c->o->has_past || (c->o->cache == HFX_CACHE_STATIC && c->o->reads_state);
}

/* Whether the graph takes and returns its cache in the Python system's profile (io "seed"). */
static bool seed_profile(const layer_ctx *c) { return c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE; }

/* The names of layer i's recurrent state k (0: the convolution's, 1: the recurrent one): the state
 * itself, the graph input an earlier call's value comes in by, and the output the call leaves.
 * hfx's: past.{i}.conv / past.{i}.ssm in, present.{i}.* out (onnxruntime-genai's layout); the
 * seed's: cache.layers.{i}.conv_states.0 / recurrent_states.0 (transformers' cache layer's lists)
 * out of a prompt, input.* in and output.* out of a step. */
typedef struct state_names {
    char state[96], input[104], output[104];
} state_names;

static state_names names_of_state(const layer_ctx *c, int64_t i, int k) {
    state_names n;
    if (seed_profile(c)) {
        snprintf(n.state, sizeof n.state, "cache.layers.%lld.%s.0", (long long)i, k ? "recurrent_states" : "conv_states");
        snprintf(n.input, sizeof n.input, "input.%s", n.state);
        snprintf(n.output, sizeof n.output, "%s%s", continues(c) ? "output." : "", n.state);
    } else {
        snprintf(n.state, sizeof n.state, "past.%lld.%s", (long long)i, k ? "ssm" : "conv");
        snprintf(n.input, sizeof n.input, "%s", n.state);
        snprintf(n.output, sizeof n.output, "present.%lld.%s", (long long)i, k ? "ssm" : "conv");
    }
    return n;
}

/* State k of layer i as an earlier call left it, by input `name`: [B, the dims layer_cache gives],
 * the convolution's holding one input more in the seed profile (transformers' cache keeps the
 * kernel's whole window, hfx the kernel − 1 inputs the next call reads). */
static hfx_value *read_state(layer_ctx *c, int64_t i, int k, int state, const char *name, hfx_dtype dt) {
    hfx_layer_cache l = layer_cache(c->m, i);
    hfx_dim dims[4] = {c->batch};
    for (int d = 0; d < l.states[k].rank && d < 3; d++) dims[d + 1] = hfx_dim_const(l.states[k].dims[d]);
    if (seed_profile(c) && k == 0) dims[l.states[k].rank] = hfx_dim_const(l.states[k].dims[l.states[k].rank - 1] + 1);
    return hfx_state_read(c->g, state, name, dt, l.states[k].rank + 1, dims);
}

/* x + block·residual_multiplier (Granite scales what each block adds). */
static hfx_value *residual(layer_ctx *c, hfx_value *x, hfx_value *block) {
    if (c->m->residual_mult != 1.0)
        block = hfx_op2(c->g, HFX_OP_MUL, block, hfx_const_scalar(c->g, block->dtype, c->m->residual_mult));
    return hfx_op2(c->g, HFX_OP_ADD, x, block);
}

/* One decoder layer in the descriptor's layout. */
/* LFM2's gated short convolution over h [B,S,hidden] (padding zeroed first, as transformers'
 * apply_mask_to_padding_states): in_proj's three parts B, C, x; B·x through a depthwise causal
 * convolution of conv_len taps over the layer's state (the L − 1 inputs before this call: zeros at
 * a prompt) and this call's inputs; C times that; out_proj. The state becomes the last L − 1
 * inputs, present.{i}.conv [B, hidden, L − 1] (onnxruntime-genai's names and layout). */
static hfx_value *short_conv_block(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    int64_t H = m->hidden, L = m->conv_len;
    char p[160];
#define P(name) tensor_name(c, i, c->n.conv, name, p, sizeof p)
    if (c->new_mask) h = hfx_op2(g, HFX_OP_MUL, h, c->new_mask);
    hfx_value *bcx = proj(c, h, H, 3 * H, m->conv_bias, P("in_proj")); /* [B,S,3·hidden] */
    hfx_value *b = hfx_slice(g, bcx, 2, 0, H), *gate = hfx_slice(g, bcx, 2, H, 2 * H), *x = hfx_slice(g, bcx, 2, 2 * H, 3 * H);
    x = hfx_transpose(g, hfx_op2(g, HFX_OP_MUL, b, x), 3, (int64_t[]){0, 2, 1}); /* [B,hidden,S] */
    state_names n = names_of_state(c, i, 0);
    int state = o->cache == HFX_CACHE_NONE ? -1 : hfx_graph_state(g, n.state, HFX_STATE_REPLACE, 2);
    hfx_value *past = continues(c) ? read_state(c, i, 0, state, n.input, x->dtype) : NULL; /* NULL: a prompt, zeros */
    hfx_value *all = hfx_conv_window(g, past, x, L, seed_profile(c) ? L : L - 1,
                                     o->cache != HFX_CACHE_NONE ? &c->cache_out[CACHE_PARTS * i + STATE_SLOT] : NULL);
    hfx_value *out = hfx_causal_conv(g, all, hfx_weight(c->w, 3, (int64_t[]){H, 1, L}, "%s.weight", P("conv")),
                                     m->conv_bias ? hfx_weight(c->w, 1, &H, "%s.bias", P("conv")) : NULL);
    c->cache_state[CACHE_PARTS * i + STATE_SLOT] = state;
    hfx_value *y = hfx_op2(g, HFX_OP_MUL, gate, hfx_transpose(g, out, 3, (int64_t[]){0, 2, 1}));
    return proj(c, y, H, H, m->conv_bias, P("out_proj"));
#undef P
}

/* A Mamba2, Mamba or gated delta-net mixer (ssm.h) with its two states as cache: past.{i}.conv
 * [B, conv_dim, kernel − 1] and past.{i}.ssm (layer_cache's dims) in f32, replaced each call by
 * present.{i}.*. */
static hfx_value *recurrent_block(layer_ctx *c, int64_t i, hfx_value *h, hfx_mixer_kind kind) {
    hfx_graph *g = c->g;
    char prefix[160];
    tensor_name(c, i, NULL, c->n.ssm, prefix, sizeof prefix);
    state_names conv = names_of_state(c, i, 0), ssm = names_of_state(c, i, 1);
    bool cached = c->o->cache != HFX_CACHE_NONE;
    int conv_state = cached ? hfx_graph_state(g, conv.state, HFX_STATE_REPLACE, 2) : -1;
    int ssm_state = cached ? hfx_graph_state(g, ssm.state, HFX_STATE_REPLACE, 2) : -1;
    hfx_ssm_state s = {.keep = cached, .whole_window = seed_profile(c)};
    if (continues(c)) {
        s.conv = read_state(c, i, 0, conv_state, conv.input, h->dtype);
        s.ssm = read_state(c, i, 1, ssm_state, ssm.input, HFX_DTYPE_F32);
    }
    hfx_value *y = kind == HFX_MIXER_MAMBA1  ? hfx_mamba1_mixer(g, c->w, &c->m->ssm1, prefix, h, c->new_mask, &s)
                   : kind == HFX_MIXER_DELTA ? hfx_delta_mixer(g, c->w, &c->m->delta, prefix, h, c->new_mask, &s)
                                             : hfx_mamba2_mixer(g, c->w, &c->m->ssm, prefix, h, c->new_mask, &s);
    c->cache_out[CACHE_PARTS * i + STATE_SLOT] = s.conv_next, c->cache_state[CACHE_PARTS * i + STATE_SLOT] = conv_state;
    c->cache_out[CACHE_PARTS * i + STATE_SLOT + 1] = s.ssm_next;
    c->cache_state[CACHE_PARTS * i + STATE_SLOT + 1] = ssm_state;
    return y;
}

/* The layer's token mixer: attention, a short convolution (LFM2's "conv" layers) or a Mamba2 mixer. */
static hfx_value *mixer_block(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                              hfx_value *bias) {
    switch (c->m->mixer ? c->m->mixer[i] : HFX_MIXER_ATTENTION) {
    case HFX_MIXER_SHORT_CONV: return short_conv_block(c, i, h);
    case HFX_MIXER_MAMBA2:
    case HFX_MIXER_MAMBA1:
    case HFX_MIXER_DELTA: return recurrent_block(c, i, h, c->m->mixer[i]);
    case HFX_MIXER_PARALLEL: { /* mamba(h)·ssm_out + attention(h·attn_in)·attn_out, in transformers' order */
        const hfx_decoder_cfg *m = c->m;
        hfx_graph *g = c->g;
        hfx_value *ssm = scaled(g, recurrent_block(c, i, h, HFX_MIXER_MAMBA2), m->ssm_out_mult);
        hfx_value *attn = attention_block(c, i, scaled(g, h, m->attn_in_mult), cos, sin, bias);
        return hfx_op2(g, HFX_OP_ADD, ssm, scaled(g, attn, m->attn_out_mult));
    }
    case HFX_MIXER_ATTENTION: break;
    }
    return attention_block(c, i, h, cos, sin, bias);
}

static hfx_value *decoder_layer(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *cos,
                                hfx_value *sin, hfx_value *bias) {
    int64_t n = c->m->hidden;
    char p[160];
#define P(name) tensor_name(c, i, NULL, name, p, sizeof p)
    switch (c->m->layout) {
    case HFX_LAYOUT_PARALLEL: { /* mlp(norm2(x)) + attn(norm1(x)) + x, in transformers' order */
        hfx_value *a = mixer_block(c, i, norm(c, x, n, P(c->n.norm1)), cos, sin, bias);
        hfx_value *f = mlp_block(c, i, norm(c, x, n, P(c->n.norm2)));
        return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, f, a), x);
    }
    case HFX_LAYOUT_PARALLEL_SHARED: { /* x + attn(h) + mlp(h), h = norm1(x) */
        hfx_value *h = norm(c, x, n, P(c->n.norm1));
        hfx_value *a = mixer_block(c, i, h, cos, sin, bias);
        return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, x, a), mlp_block(c, i, h));
    }
    case HFX_LAYOUT_PRE:
        if (c->m->residual_f32 && c->o->dtype != HFX_DTYPE_F32) { /* the stream in f32, each block in the weights' dtype */
            hfx_value *block = mixer_block(c, i, norm(c, hfx_cast(c->g, x, c->o->dtype), n, P(c->n.norm1)), cos, sin, bias);
            x = hfx_op2(c->g, HFX_OP_ADD, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, block, HFX_DTYPE_F32));
        } else {
            x = residual(c, x, mixer_block(c, i, norm(c, x, n, P(c->n.norm1)), cos, sin, bias));
        }
        return c->m->no_mlp ? x : residual(c, x, mlp_block(c, i, norm(c, x, n, P(c->n.norm2))));
    case HFX_LAYOUT_SANDWICH: {
        hfx_value *a = mixer_block(c, i, norm(c, x, n, P(c->n.norm1)), cos, sin, bias);
        x = residual(c, x, norm(c, a, n, P(c->n.norm2)));
        hfx_value *f = mlp_block(c, i, norm(c, x, n, P(c->n.pre2)));
        return residual(c, x, norm(c, f, n, P(c->n.post2)));
    }
    case HFX_LAYOUT_POST:
        x = residual(c, x, norm(c, mixer_block(c, i, x, cos, sin, bias), n, P(c->n.norm2)));
        return residual(c, x, norm(c, mlp_block(c, i, x), n, P(c->n.post2)));
    }
    return x;
#undef P
}

/* The LM head over the final hidden states: [B,S,hidden] → [B,S,vocab]. */
static hfx_value *lm_logits(layer_ctx *c, hfx_value *x, hfx_value *embed) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *head;
    if (m->tied) {
        head = embed;
        hfx_weight_ignore(c->w, c->n.lm_head); /* transformers ties it to the embeddings */
    } else {
        head = hfx_weight(c->w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", c->n.lm_head);
    }
    hfx_value *bias = NULL;
    if (c->d->lm_head_bias) { /* "<head>.bias" beside "<head>.weight" */
        char name[160];
        size_t n = strlen(c->n.lm_head), w = strlen(".weight");
        if (n > w && strcmp(c->n.lm_head + n - w, ".weight") == 0) n -= w;
        snprintf(name, sizeof name, "%.*s.bias", (int)n, c->n.lm_head);
        bias = hfx_weight(c->w, 1, &m->vocab, "%s", name);
    }
    hfx_value *logits = hfx_linear(g, x, head, bias);
    if (m->logits_mul != 1.0)
        logits = hfx_op2(g, HFX_OP_MUL, logits, hfx_const_scalar(g, c->o->dtype, m->logits_mul));
    if (m->logits_div != 1.0)
        logits = hfx_op2(g, HFX_OP_DIV, logits, hfx_const_scalar(g, c->o->dtype, m->logits_div));
    if (m->final_softcap > 0) { /* cap·tanh(logits / cap) */
        hfx_value *cap = hfx_const_scalar(g, c->o->dtype, m->final_softcap);
        logits = hfx_op2(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_TANH, hfx_op2(g, HFX_OP_DIV, logits, cap)), cap);
    }
    return logits;
}

/* A sequence classifier's logits [B, labels]: `score` on the hidden state of each row's
 * rightmost token that is not pad_token_id (transformers' argmax of index·(id != pad), which is
 * that index, or 0 when the row is all padding), or of the last token when the config has no pad
 * token. The row is picked before `score`, by a one-hot sum: equal to scoring every position and
 * picking after. */
static hfx_value *classify(layer_ctx *c, hfx_value *x, hfx_value *ids) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *pooled; /* [B,hidden] */
    if (m->pad_id < 0) {
        pooled = hfx_slice(g, x, 1, -1, INT64_MAX);
    } else {
        hfx_value *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
        hfx_value *index = hfx_range(g, zero, hfx_dim_of(g, ids, 1), one, c->seq);                 /* [S] */
        hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad_id))),
                                   HFX_DTYPE_I64);                                                 /* [B,S] */
        int64_t axis = -1;
        hfx_value *last = hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_op2(g, HFX_OP_MUL, index, real), 1, &axis); /* [B,1] */
        hfx_value *pick = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, index, last), x->dtype);           /* [B,S] */
        int64_t seq_axis = 1;
        pooled = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, x, hfx_unsqueeze(g, pick, -1)), 1, &seq_axis);
    }
    pooled = hfx_reshape(g, pooled, 2, (hfx_dim[]){c->batch, hfx_dim_const(m->hidden)});
    hfx_value *score = hfx_weight(c->w, 2, (int64_t[]){m->labels, m->hidden}, "score.weight");
    return hfx_linear(g, pooled, score, NULL);
}

/* x [B,S,hidden] times √hidden (Gemma's embedding scale: a float32 tensor, then in the weights'
 * dtype). */
static hfx_value *embed_scaled(hfx_graph *g, const hfx_decoder_cfg *m, const hfx_build_opts *o, hfx_value *x) {
    return hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, o->dtype, (float)sqrt((double)m->hidden)));
}

/* The weights a decoder reads: its own, or its host's (a dry run of the whole model), through the
 * host's renames and with the other components' stacks set aside; *w points at them. */
static hfx_status open_weights(const hfx_decoder_desc *d, const hfx_checkpoint *ck, const hfx_build_opts *o,
                               const hfx_decoder_host *host, hfx_graph *g, hfx_weights *own, hfx_weights **w,
                               hfx_error *err) {
    *w = host && host->weights ? host->weights : own;
    if (*w == own) {
        hfx_status st = hfx_weights_init(own, ck, g, o->dtype, host ? host->architecture : d->architecture, err);
        if (st) return st;
        for (const char *const *f = host ? host->foreign : NULL; f && *f; f++) hfx_weights_ignore_stack(own, *f);
        if (d->unused_stack) hfx_weights_ignore_stack(own, d->unused_stack);
    }
    if (host) (*w)->rename = host->rename;
    return HFX_OK;
}

/* The end of a build's reads: its own weights checked for leftovers and freed, the host's given
 * back with their names as they were. */
static hfx_status close_weights(hfx_weights *own, hfx_weights *w, hfx_status st, hfx_error *err) {
    if (w != own) {
        w->rename = NULL;
        return st;
    }
    if (st == HFX_OK) st = hfx_weights_finish(own, err);
    hfx_weights_free(own);
    return st;
}

hfx_status hfx_decoder_build(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                             const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g, hfx_error *err) {
    hfx_weights own, *w;
    hfx_status st = open_weights(d, ck, o, host, g, &own, &w, err);
    if (st) return st;
    bool embeds_in = host && host->embeds_in;
    hfx_value **cache_out = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_out);
    int *cache_state = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_state);
    if (!cache_out || !cache_state) {
        free(cache_out);
        free(cache_state);
        close_weights(&own, w, HFX_OK, err);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    layer_ctx c = {g, w, d, m, o, o->batch, o->seq, resolve_names(d), NULL, cache_out, cache_state, NULL, NULL, NULL};
    bool seed = o->io == HFX_IO_SEED && o->cache != HFX_CACHE_NONE;
    bool states = false, attends = false, rotary = false; /* recurrent layers (their state as cache), attention
                                                            layers, attention layers with rotary */
    for (int64_t i = 0; i < m->layers; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        bool attention = kind == HFX_MIXER_ATTENTION || kind == HFX_MIXER_PARALLEL;
        states |= kind != HFX_MIXER_ATTENTION, attends |= attention;
        rotary |= attention && !(m->no_rope && m->no_rope[i]);
    }
    for (int64_t i = 0; seed && o->cache == HFX_CACHE_STATIC && i < m->layers; i++)
        if (m->window[i]) {
            free(cache_out);
            free(cache_state);
            close_weights(&own, w, HFX_OK, err);
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" with a static cache does not cover sliding-window "
                                                      "layers yet (the seed keeps a window-sized cache per sliding layer); "
                                                      "export with a dynamic cache or io \"optimum\"",
                            d->architecture);
        }
    const char *opt = d->names ? d->names->optional_prefix : NULL;
    size_t opt_len = opt ? strlen(opt) : 0;
    if (c.n.embed_alt && !hfx_weight_exists(w, c.n.embed) && hfx_weight_exists(w, c.n.embed_alt)) c.n.embed = c.n.embed_alt;
    if (opt && !hfx_weight_exists(w, c.n.embed) && hfx_weight_exists(w, c.n.embed + opt_len)) {
        const char **fields[] = {&c.n.embed, &c.n.layer, &c.n.pos_embed, &c.n.final_norm};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            if (*fields[f] && strncmp(*fields[f], opt, opt_len) == 0) *fields[f] += opt_len;
    }

    /* attention_mask spans what attention sees: the prompt, the past plus the new tokens, or the
     * static cache's M slots */
    hfx_dim mask_len = o->seq;
    if (o->cache == HFX_CACHE_STATIC) mask_len = o->max_cache;
    else if (o->cache == HFX_CACHE_DYNAMIC && o->has_past) {
        bool ok;
        mask_len = hfx_dim_add(o->past, o->seq, &ok);
    }
    hfx_dim bs[2] = {o->batch, o->seq};
    /* [B,S] token ids, or the caller's [B,S,hidden] embeddings (a VLM's, images spliced in) */
    hfx_value *ids = embeds_in ? NULL : hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *x = embeds_in ? hfx_graph_input(g, "inputs_embeds", o->dtype, 3,
                                               (hfx_dim[]){o->batch, o->seq, hfx_dim_const(m->hidden)})
                             : NULL;
    hfx_value *attn_mask = NULL, *pos, *slots = NULL;
    if (seed) { /* the seed's inputs: a 4-D boolean mask in a static-cache step only */
        if (o->cache == HFX_CACHE_STATIC && o->reads_state && attends) {
            hfx_value *mask4 = hfx_graph_input(g, m->layer_types ? "attention_mask.full_attention" : "attention_mask",
                                               HFX_DTYPE_BOOL, 4,
                                               (hfx_dim[]){o->batch, hfx_dim_const(1), o->seq, o->max_cache});
            c.seed_mask = hfx_where(g, mask4, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
        }
    } else {
        attn_mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, mask_len});
    }
    /* [B,S], or M-RoPE's [3,B,S]: temporal, height and width positions (the caller's, as
     * transformers' get_rope_index makes them) */
    bool mrope = m->rope.mrope_section[0] || m->rope.mrope_section[1] || m->rope.mrope_section[2];
    pos = d->attention_free ? NULL /* no positions: Mamba2's forward takes none */
          : mrope ? hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 3, (hfx_dim[]){hfx_dim_const(3), o->batch, o->seq})
                  : hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 2, bs);
    if (!seed && o->cache == HFX_CACHE_STATIC) {
        c.cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &o->seq);
        slots = c.cache_position;
    } else if (!seed) {
        slots = hfx_mask_slots_after_past(g, attn_mask, o->seq, hfx_dim_of(g, ids ? ids : x, 1));
    }

    /* the table, read here also by a tied head; the embed_tokens component reads it otherwise */
    hfx_value *embed = NULL;
    if (!embeds_in || m->tied) embed = hfx_weight(w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", c.n.embed);
    else hfx_weight_ignore(w, c.n.embed);
    if (!embeds_in) x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden] */
    /* Gemma's scale: here, unless the caller's embeddings already carry it (Gemma 3's scaled table) */
    if (d->embed_sqrt_hidden && !(embeds_in && d->embed_scale_in_table)) x = embed_scaled(g, m, o, x);
    if (m->embed_mult != 1.0) x = hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, o->dtype, m->embed_mult));

    hfx_value *cos = NULL, *sin = NULL, *local_cos = NULL, *local_sin = NULL;
    if (d->learned_positions) {
        hfx_value *wpe = hfx_weight(w, 2, (int64_t[]){m->max_position, m->hidden}, "%s", c.n.pos_embed);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, wpe, pos, 0));
    } else if (rotary) {
        hfx_rope_cos_sin(g, &m->rope, pos, d->rope_f32 ? HFX_DTYPE_F32 : o->dtype, &cos, &sin);
    }
    if (d->local_rope) hfx_rope_cos_sin(g, &m->local_rope, pos, o->dtype, &local_cos, &local_sin);
    hfx_mask_builder mb;
    if (!seed && attends) hfx_mask_init(g, &mb, attn_mask, slots);
    if (states && !seed) /* [B,S,1]: which of this call's tokens are real (the mask at their slots) */
        c.new_mask = hfx_unsqueeze(g, hfx_cast(g, hfx_gather(g, attn_mask, slots, 1), o->dtype), -1);
    if (!seed && host && host->image_blocks)
        hfx_mask_add_blocks(g, &mb, hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, mask_len}));
    hfx_value *full_bias = NULL, *window_bias = NULL;
    int64_t bias_window = -1;

    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        hfx_value *bias = NULL; /* the seed profile's is made in the first layer (seed_cache) */
        bool sliding = m->window[i] != 0;
        if (m->mixer && m->mixer[i] != HFX_MIXER_ATTENTION && m->mixer[i] != HFX_MIXER_PARALLEL) {
            /* no attention bias: the layer's own state */
        } else if (!seed && !sliding) {
            if (!full_bias) full_bias = hfx_mask_bias(g, &mb, 0);
            bias = full_bias;
        } else if (!seed) {
            if (bias_window != m->window[i]) { /* one window size per model in practice */
                window_bias = hfx_mask_bias(g, &mb, m->window[i]);
                bias_window = m->window[i];
            }
            bias = window_bias;
        }
        bool local = d->local_rope && sliding;
        x = decoder_layer(&c, i, x, local ? local_cos : cos, local ? local_sin : sin, bias);
    }
    if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX); /* [B,1,hidden]: transformers' logits_to_keep=1 */
    x = norm(&c, hfx_cast(g, x, o->dtype), m->hidden, c.n.final_norm); /* an f32 residual stream: cast back */
    hfx_graph_output(g, d->seq_classifier ? classify(&c, x, ids) : lm_logits(&c, x, embed), "logits");
    for (int64_t i = 0; i < m->layers && o->cache != HFX_CACHE_NONE && !g->failed; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        if (kind != HFX_MIXER_ATTENTION) { /* a recurrent layer's states */
            for (int k = 0; k < (kind == HFX_MIXER_SHORT_CONV ? 1 : 2); k++)
                hfx_state_write(g, cache_state[CACHE_PARTS * i + STATE_SLOT + k],
                                cache_out[CACHE_PARTS * i + STATE_SLOT + k], names_of_state(&c, i, k).output);
            if (kind != HFX_MIXER_PARALLEL) continue; /* (Falcon-H1's layers attend too) */
        }
        bool third = seed && (o->cache == HFX_CACHE_STATIC || m->window[i]); /* the counter, or the window */
        for (int kv = 0; kv < (third ? 3 : 2); kv++) {
            char name[128];
            if (seed) { /* a prefill's new cache is cache.layers.*; what a step updates output.cache.layers.* */
                const char *const parts[3] = {"keys", "values",
                                              o->cache == HFX_CACHE_STATIC ? "cumulative_length" : "_sliding_window_tensor"};
                bool updated = kv == 2 || (o->cache == HFX_CACHE_DYNAMIC ? o->has_past : o->reads_state);
                snprintf(name, sizeof name, "%scache.layers.%lld.%s", updated ? "output." : "", (long long)i, parts[kv]);
            } else if (o->cache == HFX_CACHE_DYNAMIC) {
                snprintf(name, sizeof name, "present.%lld.%s", (long long)i, kv ? "value" : "key");
            } else {
                snprintf(name, sizeof name, "output.past_key_values.%lld.%s", (long long)i, kv ? "value" : "key");
            }
            hfx_state_write(g, cache_state[CACHE_PARTS * i + kv], cache_out[CACHE_PARTS * i + kv], name);
        }
    }
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);

    st = hfx_graph_status(g, err);
    st = close_weights(&own, w, st, err);
    free(cache_out);
    free(cache_state);
    return st;
}

hfx_status hfx_decoder_build_embed(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                   const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g,
                                   hfx_error *err) {
    hfx_weights own, *w;
    hfx_status st = open_weights(d, ck, o, host, g, &own, &w, err);
    if (st) return st;
    hfx_decoder_names n = resolve_names(d);
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
    hfx_value *embed = hfx_weight(w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", n.embed);
    hfx_value *x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden], and the table's own scale */
    hfx_graph_output(g, d->embed_sqrt_hidden && d->embed_scale_in_table ? embed_scaled(g, m, o, x) : x, "inputs_embeds");
    if (w == &own) hfx_weights_ignore_rest(w); /* the language model's component checks every other weight */
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);
    return close_weights(&own, w, hfx_graph_status(g, err), err);
}

static hfx_status decoder_build_forward(const void *desc_, const void *cfg_, const hfx_checkpoint *ck,
                                        const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    return hfx_decoder_build(desc_, cfg_, ck, o, NULL, g, err);
}

static int decoder_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const hfx_decoder_cfg *m = cfg_;
    for (int64_t i = 0; i < m->layers && i < max; i++) layers[i] = layer_cache(m, i);
    return (int)m->layers;
}

/* Phi-3's generate re-encodes everything at original_max_position_embeddings + 1 tokens, so that
 * keys cached with the short longrope factors are recomputed with the long ones. */
static int64_t decoder_recompute_at(const void *cfg_) {
    const hfx_decoder_cfg *m = cfg_;
    return m->rope.type == HFX_ROPE_LONGROPE ? m->rope.switch_len + 1 : 0;
}

static hfx_torch_signature decoder_torch_signature(const void *desc) {
    static const char *const llama[] = {"input_ids", "attention_mask", "position_ids", "cache", NULL};
    const hfx_decoder_desc *d = desc;
    return (hfx_torch_signature){d->forward_args ? d->forward_args : llama,
                                 d->output_class ? d->output_class : "CausalLMOutputWithPast", d->step_nones};
}

/* A causal LM exports its forward pass, or a prompt graph and a one-token step that reads the
 * cache the previous call wrote, or one graph for both (docs/GENERATION.md). */
/* The prompt piece (hfx_arch_prompt_piece): the scan's chunk of the model's recurrent layers —
 * Mamba2's chunk_size, 64 for a gated delta-net (transformers' chunk), 16 for Mamba (its decays
 * are [B, inner, state, S, S]); 0 without them (LFM2's convolutions cost what attention does). */
static int64_t decoder_prompt_piece(const void *cfg_) {
    const hfx_decoder_cfg *m = cfg_;
    int64_t piece = 0;
    for (int64_t i = 0; m->mixer && i < m->layers; i++) {
        int64_t p = m->mixer[i] == HFX_MIXER_MAMBA2 || m->mixer[i] == HFX_MIXER_PARALLEL ? m->ssm.chunk
                    : m->mixer[i] == HFX_MIXER_DELTA                                  ? 64
                    : m->mixer[i] == HFX_MIXER_MAMBA1                                 ? 16
                                                                                      : 0;
        if (p && (!piece || p < piece)) piece = p;
    }
    return piece;
}

static const hfx_component forward[] = {{"model", "model", false, false, -1, NULL}};
static const hfx_component generation[] = {{"prefill", "prefill", false, false, 1, NULL}, {"decode", "decode", true, true, 1, NULL}};
static const hfx_component one_graph[] = {{"decode", "decode", false, true, 0, NULL}};
static const hfx_component generation_multi[] = {{"prefill", "prefill", false, false, 0, NULL}, {"decode", "decode", false, true, 0, NULL}};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", "position_ids", NULL};

static hfx_torch_signature classifier_torch_signature(const void *desc) {
    static const char *const args[] = {"input_ids", "attention_mask", "position_ids", NULL};
    (void)desc;
    return (hfx_torch_signature){args, "SequenceClassifierOutputWithPast", NULL};
}

const hfx_arch_family hfx_decoder_classifier_family = {
    sizeof(hfx_decoder_cfg), decoder_parse, decoder_build_forward, NULL, NULL,
    {[HFX_EXPORT_FORWARD] = {forward, 1}}, sequence_inputs, classifier_torch_signature, NULL, NULL, NULL};

const hfx_arch_family hfx_decoder_family = {
    sizeof(hfx_decoder_cfg), decoder_parse, decoder_build_forward, decoder_cache_layers, decoder_recompute_at,
    {[HFX_EXPORT_FORWARD] = {forward, 1}, [HFX_EXPORT_GENERATION] = {generation, 2},
     [HFX_EXPORT_GENERATION_ONE_GRAPH] = {one_graph, 1}, [HFX_EXPORT_GENERATION_MULTI] = {generation_multi, 2}},
    sequence_inputs, decoder_torch_signature, NULL, NULL, decoder_prompt_piece};
