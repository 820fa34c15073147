#include "arch/rope.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const supported = "default, linear, dynamic, llama3, yarn, proportional, longrope (Phi-3)";

void hfx_rope_default_inv_freq(double theta, int64_t dim, float *inv) {
    for (int64_t i = 0; i < dim / 2; i++) {
        float e = (float)(2 * i) / (float)dim;
        inv[i] = 1.0f / powf((float)theta, e);
    }
}

/* yarn's find_correction_dim, in double as Python computes it */
static double correction_dim(double rotations, int64_t dim, double base, double max_pos) {
    return ((double)dim * log(max_pos / (rotations * 2 * M_PI))) / (2 * log(base));
}

static double yarn_mscale(double scale, double mscale) {
    return scale <= 1 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

/* The object holding a layer type's rope settings: transformers 5 keeps everything in
 * rope_parameters (nested per layer type for models whose layer types differ); 4.x split rope_theta
 * (or another theta key) and rope_scaling. *params NULL: none; `where` names it for messages. */
static hfx_status rope_params(hfx_cfg c, const hfx_rope_source *src, char *where, size_t size, const json_t **params,
                              hfx_error *err) {
    const json_t *p = json_object_get(c.obj, "rope_parameters");
    const char *params_key = "rope_parameters";
    if (p && json_is_object(p) && src->layer_type && json_is_object(json_object_get(p, src->layer_type))) {
        p = json_object_get(p, src->layer_type);
        snprintf(where, size, "%s: rope_parameters.%s", c.where, src->layer_type);
    } else {
        if (!p || json_is_null(p)) {
            p = src->scaling ? json_object_get(c.obj, "rope_scaling") : NULL;
            params_key = "rope_scaling";
        }
        snprintf(where, size, "%s: %s", c.where, params_key);
    }
    if (p && json_is_null(p)) p = NULL;
    if (p && !json_is_object(p)) return hfx_fail(err, HFX_ERR_INVALID, "%s must be an object", where);
    *params = p;
    return HFX_OK;
}

/* The rope type, base and rotated dims (int(head_dim · partial_rotary_factor), as transformers)
 * into out; *theta the base. */
static hfx_status rope_type_and_dims(hfx_cfg c, hfx_cfg p, const hfx_rope_source *src, hfx_rope *out, double *theta,
                                     hfx_error *err) {
    hfx_status st;
    const char *type = "default";
    if (src->legacy_type && (st = hfx_cfg_str_or(p, "type", "default", &type, err))) return st;
    if ((st = hfx_cfg_str_or(p, "rope_type", type, &type, err))) return st;
    if ((st = hfx_cfg_num_or(c, src->theta_key, src->default_theta, theta, err))) return st;
    if ((st = hfx_cfg_num_or(p, "rope_theta", *theta, theta, err))) return st;
    if (!(*theta > 1.0)) return hfx_fail(err, HFX_ERR_INVALID, "%s: rope_theta %g must be > 1", c.where, *theta);
    double alpha = 0;
    if (src->ntk_alpha && strcmp(type, "dynamic") == 0 && (st = hfx_cfg_num_or(p, "alpha", 0, &alpha, err))) return st;
    if (alpha != 0) { /* a fixed NTK base over the whole head */
        if (!(alpha > 0) || !isfinite(alpha) || out->dim < 4)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: alpha %g must be a positive number (head_dim %lld)", p.where,
                            alpha, (long long)out->dim);
        *theta *= pow(alpha, (double)out->dim / (double)(out->dim - 2));
        type = "default";
    }
    out->theta = *theta;
    double partial = src->default_partial > 0 ? src->default_partial : 1.0;
    int64_t rotary_dim = 0; /* rotary_dim / head_dim, where the config gives no factor (GPT-J, MiniMax-M2) */
    if (src->dim_key && !hfx_cfg_has(c, src->partial_key) && !hfx_cfg_has(p, "partial_rotary_factor")) {
        if ((st = hfx_cfg_int_in_or(c, src->dim_key, 0, 0, out->dim, &rotary_dim, err))) return st;
        if (rotary_dim) partial = (double)rotary_dim / (double)out->dim;
    }
    if (strcmp(type, "proportional") == 0) { /* its own partial_rotary_factor, over the whole head */
        double share;
        if ((st = hfx_cfg_num_or(p, "partial_rotary_factor", 1.0, &share, err))) return st;
        if (!(share >= 0 && share <= 1))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: partial_rotary_factor %g must be in [0, 1]", p.where, share);
        out->type = HFX_ROPE_PROPORTIONAL;
        out->turning = (int64_t)floor(share * (double)out->dim / 2); /* int(share · head_dim // 2) */
        return HFX_OK;
    }
    if ((st = hfx_cfg_num_or(c, src->partial_key, partial, &partial, err))) return st;
    if ((st = hfx_cfg_num_or(p, "partial_rotary_factor", partial, &partial, err))) return st;
    /* an architecture without partial rotary computes its default frequencies over the whole head,
     * whatever the config says; the scaled types' shared initialisers would read the factor */
    if (partial != 1.0 && !src->partial && strcmp(type, "default") == 0) partial = 1.0;
    if (partial != 1.0 && !src->partial)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: partial_rotary_factor %g is not supported for this architecture",
                        p.where, partial);
    if (!(partial > 0 && partial <= 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: partial_rotary_factor %g must be in (0, 1]", p.where, partial);
    int64_t dim = (int64_t)((double)out->dim * partial);
    out->dim = dim;
    if (src->phi3_names && (strcmp(type, "su") == 0 || strcmp(type, "yarn") == 0)) type = "longrope";
    /* "mrope" (Qwen2-VL's configs before transformers 5) has the default frequencies; the family
     * reads its sections (hfx_rope_parse_mrope) */
    if (strcmp(type, "default") == 0 || strcmp(type, "mrope") == 0) out->type = HFX_ROPE_DEFAULT;
    else if (strcmp(type, "linear") == 0) out->type = HFX_ROPE_LINEAR;
    else if (strcmp(type, "dynamic") == 0) out->type = HFX_ROPE_DYNAMIC;
    else if (strcmp(type, "llama3") == 0) out->type = HFX_ROPE_LLAMA3;
    else if (strcmp(type, "yarn") == 0) out->type = HFX_ROPE_YARN;
    else if (strcmp(type, "longrope") == 0 && src->phi3_names) out->type = HFX_ROPE_LONGROPE;
    else if (strcmp(type, "longrope") == 0 && src->longrope_mscale) out->type = HFX_ROPE_LONGROPE_MSCALE;
    else
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: rope type '%s' is not supported (supported: %s)", p.where, type,
                        supported);
    /* an odd count d (a partial factor's int(head_dim · factor)): transformers' ⌈d/2⌉ frequencies of exponent 2i/d
     * turn d + 1 dims; only where the frequencies are the default ones (or those scaled linearly) */
    if (dim % 2 && dim > 1 && (out->type == HFX_ROPE_DEFAULT || out->type == HFX_ROPE_LINEAR)) out->freq_dim = dim++;
    out->dim = dim;
    if (dim < 2 || dim % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rotary dimension %lld must be even and ≥ 2 (odd only with the default "
                        "or linear frequencies)", p.where, (long long)dim);
    return HFX_OK;
}

/* Longrope: inv = 1 / (ext · θ^(2i/dim)), ext the short or the long factors; cos and sin scaled by
 * √(1 + ln(factor)/ln(original max)) with factor = max_position / original max. */
static hfx_status longrope_freqs(hfx_cfg p, double theta, int64_t orig_max, hfx_rope *out, hfx_error *err) {
    int64_t dim = out->dim, half = dim / 2;
    const json_t *lists[2] = {json_object_get(p.obj, "short_factor"), json_object_get(p.obj, "long_factor")};
    float *dst[2] = {out->inv_freq, out->inv_freq_long};
    for (int l = 0; l < 2; l++) {
        if (!json_is_array(lists[l]) || (int64_t)json_array_size(lists[l]) != half)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: '%s' must list rotary_dim/2 = %lld numbers", p.where,
                            l ? "long_factor" : "short_factor", (long long)half);
        for (int64_t i = 0; i < half; i++) {
            const json_t *f = json_array_get(lists[l], (size_t)i);
            if (!json_is_number(f))
                return hfx_fail(err, HFX_ERR_INVALID, "%s: '%s'[%lld] is not a number", p.where,
                                l ? "long_factor" : "short_factor", (long long)i);
            float ext = (float)json_number_value(f);
            dst[l][i] = 1.0f / (ext * powf((float)theta, (float)(2 * i) / (float)dim));
        }
    }
    double factor_given, attn;
    hfx_status st = hfx_cfg_num_or(p, "factor", (double)out->max_position / (double)orig_max, &factor_given, err);
    if (st) return st;
    double dflt = factor_given <= 1.0 ? 1.0 : sqrt(1 + log(factor_given) / log((double)orig_max));
    if ((st = hfx_cfg_num_or(p, "attention_factor", dflt, &attn, err))) return st;
    out->attention_scaling = (float)attn;
    out->switch_len = orig_max;
    return HFX_OK;
}

/* Llama 3: long wavelengths divided by the factor, short ones kept, a smooth ramp between. */
static hfx_status llama3_freqs(hfx_cfg p, int64_t orig_max, hfx_rope *out, hfx_error *err) {
    double low, high, factor = out->factor;
    float *inv = out->inv_freq;
    hfx_status st;
    if ((st = hfx_cfg_num(p, "low_freq_factor", &low, err))) return st;
    if ((st = hfx_cfg_num(p, "high_freq_factor", &high, err))) return st;
    if (high == low || orig_max <= 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: llama3 needs high_freq_factor != low_freq_factor and original_max_position_embeddings > 0", p.where);
    double low_wl = (double)orig_max / low, high_wl = (double)orig_max / high;
    for (int64_t i = 0; i < out->dim / 2; i++) {
        float wavelen = (float)(2 * M_PI) / inv[i];
        float scaled = wavelen > (float)low_wl ? inv[i] / (float)factor : inv[i];
        float smooth = ((float)orig_max / wavelen - (float)low) / (float)(high - low);
        float smoothed = (1 - smooth) * scaled / (float)factor + smooth * scaled;
        bool medium = !(wavelen < (float)high_wl) && !(wavelen > (float)low_wl);
        inv[i] = medium ? smoothed : scaled;
    }
    return HFX_OK;
}

/* YaRN: each frequency between interpolation (÷ factor) and extrapolation by a ramp over the
 * correction dims of beta_fast and beta_slow; cos and sin scaled by the attention factor. */
static hfx_status yarn_freqs(hfx_cfg p, double theta, int64_t orig_max, hfx_rope *out, hfx_error *err) {
    hfx_status st;
    int64_t dim = out->dim;
    double factor;
    if (hfx_cfg_has(p, "factor")) {
        if ((st = hfx_cfg_num(p, "factor", &factor, err))) return st;
    } else {
        factor = (double)out->max_position / (double)orig_max;
    }
    if (!(factor > 0) || orig_max <= 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: yarn needs factor > 0 and original_max_position_embeddings > 0", p.where);
    out->factor = factor;
    double attn_factor, mscale = 0, mscale_all = 0, beta_fast, beta_slow;
    bool truncate;
    if ((st = hfx_cfg_num_or(p, "mscale", 0, &mscale, err))) return st;
    if ((st = hfx_cfg_num_or(p, "mscale_all_dim", 0, &mscale_all, err))) return st;
    double dflt_attn = (mscale != 0 && mscale_all != 0) ? yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all)
                                                        : yarn_mscale(factor, 1);
    if ((st = hfx_cfg_num_or(p, "attention_factor", dflt_attn, &attn_factor, err))) return st;
    /* transformers uses `x or default`, so 0 also means the default */
    if ((st = hfx_cfg_num_or(p, "beta_fast", 32, &beta_fast, err))) return st;
    if ((st = hfx_cfg_num_or(p, "beta_slow", 1, &beta_slow, err))) return st;
    if (beta_fast == 0) beta_fast = 32;
    if (beta_slow == 0) beta_slow = 1;
    if ((st = hfx_cfg_bool_or(p, "truncate", true, &truncate, err))) return st;
    double lo = correction_dim(beta_fast, dim, theta, (double)orig_max);
    double hi = correction_dim(beta_slow, dim, theta, (double)orig_max);
    if (truncate) {
        lo = floor(lo);
        hi = ceil(hi);
    }
    if (lo < 0) lo = 0;
    if (hi > (double)(dim - 1)) hi = (double)(dim - 1);
    if (lo == hi) hi += 0.001;
    for (int64_t i = 0; i < dim / 2; i++) {
        float pos = powf((float)theta, (float)(2 * i) / (float)dim);
        float extrapolation = 1.0f / pos;
        float interpolation = 1.0f / ((float)factor * pos);
        float ramp = ((float)i - (float)lo) / (float)(hi - lo);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        float extra_factor = 1 - ramp;
        out->inv_freq[i] = interpolation * (1 - extra_factor) + extrapolation * extra_factor;
    }
    out->attention_scaling = (float)attn_factor;
    return HFX_OK;
}

/* The frequencies of out's type (its dims and base already read), from settings p. */
static hfx_status rope_freqs(hfx_cfg c, hfx_cfg p, const hfx_rope_source *src, double theta, hfx_arena *arena,
                             hfx_rope *out, hfx_error *err) {
    hfx_status st;
    int64_t dim = out->dim;
    out->inv_freq = hfx_arena_alloc(arena, (size_t)(dim / 2) * sizeof(float));
    out->inv_freq_long = hfx_arena_alloc(arena, (size_t)(dim / 2) * sizeof(float));
    if (!out->inv_freq || !out->inv_freq_long) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    double factor = 1.0;
    if (out->type == HFX_ROPE_PROPORTIONAL) {
        if ((st = hfx_cfg_num_or(p, "factor", 1.0, &factor, err))) return st;
        if (!(factor > 0)) return hfx_fail(err, HFX_ERR_INVALID, "%s: factor %g must be > 0", p.where, factor);
    } else if (out->type != HFX_ROPE_DEFAULT && out->type != HFX_ROPE_YARN && out->type != HFX_ROPE_LONGROPE &&
               out->type != HFX_ROPE_LONGROPE_MSCALE) {
        if ((st = hfx_cfg_num(p, "factor", &factor, err))) return st;
        if (!(factor > 0)) return hfx_fail(err, HFX_ERR_INVALID, "%s: factor %g must be > 0", p.where, factor);
    }
    out->factor = factor;
    int64_t orig_max;
    if (src->phi3_names) { /* Phi3Config's own field (default 4096) wins over the rope dict's */
        if ((st = hfx_cfg_int_or(c, "original_max_position_embeddings", 4096, &orig_max, err))) return st;
    } else {
        if ((st = hfx_cfg_int_or(c, "original_max_position_embeddings", out->max_position, &orig_max, err))) return st;
        if ((st = hfx_cfg_int_or(p, "original_max_position_embeddings", orig_max, &orig_max, err))) return st;
    }
    if (orig_max < 1) return hfx_fail(err, HFX_ERR_INVALID, "%s: original_max_position_embeddings must be ≥ 1", p.where);
    hfx_rope_default_inv_freq(theta, dim, out->inv_freq);
    for (int64_t i = 0; out->freq_dim && i < dim / 2; i++) /* an odd count's exponents */
        out->inv_freq[i] = 1.0f / powf((float)theta, (float)(2 * i) / (float)out->freq_dim);
    switch (out->type) {
    case HFX_ROPE_LONGROPE: return longrope_freqs(p, theta, orig_max, out, err);
    case HFX_ROPE_LONGROPE_MSCALE: { /* Phi-3.5-MoE: cos and sin scaled by its own mscales, both required */
        double lo, hi;
        if ((st = longrope_freqs(p, theta, orig_max, out, err)) || (st = hfx_cfg_num(p, "short_mscale", &lo, err)) ||
            (st = hfx_cfg_num(p, "long_mscale", &hi, err)))
            return st;
        out->attention_scaling = (float)lo, out->mscale_long = (float)hi;
        return HFX_OK;
    }
    case HFX_ROPE_DEFAULT:
    case HFX_ROPE_DYNAMIC: /* the graph rescales past max_position */
        return HFX_OK;
    case HFX_ROPE_LINEAR:
        for (int64_t i = 0; i < dim / 2; i++) out->inv_freq[i] = out->inv_freq[i] / (float)factor;
        return HFX_OK;
    case HFX_ROPE_PROPORTIONAL: /* the default frequencies of the whole head for the turning pairs, 0 beyond */
        for (int64_t i = 0; i < dim / 2; i++) out->inv_freq[i] = i < out->turning ? out->inv_freq[i] / (float)factor : 0.0f;
        return HFX_OK;
    case HFX_ROPE_LLAMA3: return llama3_freqs(p, orig_max, out, err);
    case HFX_ROPE_YARN: return yarn_freqs(p, theta, orig_max, out, err);
    }
    return HFX_OK;
}

hfx_status hfx_rope_parse(hfx_cfg c, const hfx_rope_source *src, int64_t dim,
                          int64_t max_position, hfx_arena *arena, hfx_rope *out, hfx_error *err) {
    static const hfx_rope_source flat = {NULL, 10000.0, "rope_theta", true, false, 0, "partial_rotary_factor", NULL, false, true,
                                         false, false};
    if (!src) src = &flat;
    memset(out, 0, sizeof *out);
    out->dim = dim;
    out->max_position = max_position;
    out->attention_scaling = 1.0f;
    if (dim < 2 || dim % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rotary dimension %lld must be even and ≥ 2",
                        c.where, (long long)dim);
    char where[1024];
    const json_t *params;
    hfx_status st = rope_params(c, src, where, sizeof where, &params, err);
    if (st) return st;
    hfx_cfg p = {params ? params : json_object(), where};
    json_t *empty = params ? NULL : (json_t *)p.obj; /* no settings: an empty object of our own */
    double theta;
    if (!(st = rope_type_and_dims(c, p, src, out, &theta, err))) st = rope_freqs(c, p, src, theta, arena, out, err);
    if (empty) json_decref(empty);
    return st;
}

hfx_status hfx_rope_parse_mrope(hfx_cfg c, const hfx_mrope_form *form, hfx_rope *r, hfx_error *err) {
    const char *key = "rope_parameters";
    const json_t *p = json_object_get(c.obj, key);
    if (!json_is_object(p) || !json_object_get(p, "mrope_section")) p = json_object_get(c.obj, key = "rope_scaling");
    const json_t *s = json_is_object(p) ? json_object_get(p, "mrope_section") : NULL;
    int64_t sum = 0, half = r->dim / 2;
    if (!s || json_is_null(s)) {
        for (int i = 0; i < 3; i++) sum += r->mrope_section[i] = form->sections[i];
    } else if (!json_is_array(s) || json_array_size(s) != 3) {
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s.mrope_section must list 3 numbers (temporal, height, width)",
                        c.where, key);
    } else {
        for (size_t i = 0; i < 3; i++) {
            const json_t *e = json_array_get(s, i);
            if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > half)
                return hfx_fail(err, HFX_ERR_INVALID, "%s: %s.mrope_section[%zu] is not a count of frequencies "
                                                      "(0 to %lld)", c.where, key, i, (long long)half);
            sum += r->mrope_section[i] = json_integer_value(e);
        }
    }
    r->mrope_interleaved = form->interleaved;
    if (!form->interleaved && sum != half)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s.mrope_section adds up to %lld frequencies; the heads rotate %lld",
                        c.where, key, (long long)sum, (long long)half);
    if (!r->mrope_section[0] && !r->mrope_section[1] && !r->mrope_section[2]) /* (one position per token) */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s.mrope_section turns no frequency", c.where, key);
    if (r->type != HFX_ROPE_DEFAULT || r->interleaved)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: M-RoPE is written with the default frequencies only", c.where);
    return HFX_OK;
}

/* Dynamic NTK: inv_freq recomputed from L = max(position_ids) + 1 when L > max_position:
 * base' = θ·(factor·L/max − (factor − 1))^(dim/(dim−2)); inv = 1/base'^(2i/dim). */
static hfx_value *dynamic_inv_freq(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids) {
    int64_t half = r->dim / 2, all = 0;
    (void)all;
    float exps[4096];
    if (half > 4096) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "head_dim %lld too large for dynamic rope", (long long)r->dim);
        half = 1;
    }
    for (int64_t i = 0; i < half; i++) exps[i] = (float)(2 * i) / (float)r->dim;
    int64_t axes[2] = {0, 1};
    hfx_value *len = hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_MAX, position_ids, 2, axes),
                             hfx_const_i64(g, 1)); /* [1,1] */
    hfx_value *lenf = hfx_cast(g, len, HFX_DTYPE_F32);
    /* factor·L/max − (factor − 1), in the order transformers evaluates it */
    hfx_value *t = hfx_op2(g, HFX_OP_MUL, hfx_const_f32(g, (float)r->factor), lenf);
    t = hfx_op2(g, HFX_OP_DIV, t, hfx_const_f32(g, (float)r->max_position));
    t = hfx_op2(g, HFX_OP_SUB, t, hfx_const_f32(g, (float)(r->factor - 1)));
    t = hfx_op2(g, HFX_OP_POW, t, hfx_const_f32(g, (float)((double)r->dim / (double)(r->dim - 2))));
    hfx_value *base = hfx_op2(g, HFX_OP_MUL, hfx_const_f32(g, (float)r->theta), t); /* [1,1] */
    int64_t shape = half;
    hfx_value *e = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &shape, exps);
    hfx_value *scaled = hfx_op1(g, HFX_OP_RECIPROCAL,
                                hfx_op2(g, HFX_OP_POW, hfx_reshape(g, base, 1, (hfx_dim[]){hfx_dim_const(1)}), e));
    hfx_value *orig = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &shape, r->inv_freq);
    hfx_value *grown = hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, len, 1, (hfx_dim[]){hfx_dim_const(1)}),
                               hfx_const_i64(g, r->max_position));
    return hfx_where(g, grown, scaled, orig); /* [dim/2] */
}

/* Whether max(position_ids) + 1 passes the original length (longrope's switch, per call): bool [1]. */
static hfx_value *past_switch(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids) {
    int64_t axes[2] = {0, 1};
    hfx_value *len = hfx_op2(g, HFX_OP_ADD, hfx_reduce(g, HFX_OP_REDUCE_MAX, position_ids, 2, axes),
                             hfx_const_i64(g, 1));
    return hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, len, 1, (hfx_dim[]){hfx_dim_const(1)}),
                   hfx_const_i64(g, r->switch_len));
}

/* Longrope: the long factors once past the switch. */
static hfx_value *longrope_inv_freq(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids) {
    int64_t half = r->dim / 2;
    return hfx_where(g, past_switch(g, r, position_ids), hfx_const_bytes(g, HFX_DTYPE_F32, 1, &half, r->inv_freq_long),
                     hfx_const_bytes(g, HFX_DTYPE_F32, 1, &half, r->inv_freq));
}

/* Phi-3.5-MoE's scale of cos and sin [1]: long_mscale once max(position_ids) + 1 passes the original length, else
 * short_mscale. */
static hfx_value *longrope_mscale(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids) {
    return hfx_where(g, past_switch(g, r, position_ids), hfx_const_f32(g, r->mscale_long),
                     hfx_const_f32(g, r->attention_scaling));
}

/* Interleaved M-RoPE's frequencies [B,S,dim/2] of each axis's freqs [3,B,S,dim/2]: frequency j the height's where
 * j mod 3 = 1 and j < 3·section[1], the width's where j mod 3 = 2 and j < 3·section[2], else the temporal's
 * (transformers' strided overwrite, as a choice per frequency). */
static hfx_value *interleaved_mrope(hfx_graph *g, const hfx_rope *r, hfx_value *freqs, const hfx_dim *bs) {
    int64_t half = r->dim / 2, axis[2048];
    if (half > 2048) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "M-RoPE over %lld frequencies is beyond hfx's 2048", (long long)half);
        return freqs;
    }
    for (int64_t j = 0; j < half; j++) axis[j] = j % 3 == 1 && j < 3 * r->mrope_section[1]   ? 1
                                                 : j % 3 == 2 && j < 3 * r->mrope_section[2] ? 2
                                                                                             : 0;
    hfx_value *of = hfx_const_bytes(g, HFX_DTYPE_I64, 1, &half, axis); /* [dim/2]: each frequency's axis */
    hfx_value *f = hfx_reshape(g, hfx_slice(g, freqs, 0, 0, 1), 3, bs);
    for (int a = 1; a <= 2; a++)
        f = hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, of, hfx_const_i64(g, a)),
                      hfx_reshape(g, hfx_slice(g, freqs, 0, a, a + 1), 3, bs), f);
    return f;
}

void hfx_rope_cos_sin(hfx_graph *g, const hfx_rope *r, hfx_value *position_ids, hfx_dtype dt,
                      hfx_value **cos, hfx_value **sin) {
    int64_t half = r->dim / 2;
    hfx_value *inv = r->type == HFX_ROPE_DYNAMIC    ? dynamic_inv_freq(g, r, position_ids)
                     : r->type == HFX_ROPE_LONGROPE ? longrope_inv_freq(g, r, position_ids)
                                                    : hfx_const_bytes(g, HFX_DTYPE_F32, 1, &half, r->inv_freq);
    /* freqs [B,S,dim/2] = position · inv_freq; emb = [freqs, freqs] */
    hfx_value *pos = hfx_unsqueeze(g, hfx_cast(g, position_ids, HFX_DTYPE_F32), -1);
    hfx_value *freqs = hfx_op2(g, HFX_OP_MUL, pos, inv);
    if (r->mrope_section[0] || r->mrope_section[1] || r->mrope_section[2]) {
        /* M-RoPE: freqs [3,B,S,dim/2] from each axis's positions; each section of frequencies
         * taken from its axis (temporal, height, width), as transformers' recomposition */
        hfx_dim bs[3] = {position_ids->dims[1], position_ids->dims[2], hfx_dim_const(half)};
        if (r->mrope_interleaved) {
            freqs = interleaved_mrope(g, r, freqs, bs);
        } else {
            hfx_value *parts[3];
            int n = 0;
            for (int64_t a = 0, off = 0; a < 3; off += r->mrope_section[a], a++)
                if (r->mrope_section[a])
                    parts[n++] = hfx_slice(g, hfx_slice(g, freqs, 0, a, a + 1), 3, off, off + r->mrope_section[a]);
            freqs = hfx_reshape(g, n == 1 ? parts[0] : hfx_concat(g, n, parts, 3), 3, bs);
        }
    }
    hfx_value *emb;
    if (r->interleaved) { /* [B,S,dim/2,2] → [B,S,dim]: each frequency twice in a row */
        hfx_value *f1 = hfx_unsqueeze(g, freqs, -1), *pair[2] = {f1, f1};
        emb = hfx_reshape(g, hfx_concat(g, 2, pair, -1), 3,
                          (hfx_dim[]){freqs->dims[0], freqs->dims[1], hfx_dim_const(r->dim)});
    } else {
        hfx_value *halves[2] = {freqs, freqs};
        emb = hfx_concat(g, 2, halves, -1);
    }
    hfx_value *c = hfx_op1(g, HFX_OP_COS, emb), *s = hfx_op1(g, HFX_OP_SIN, emb);
    if (r->attention_scaling != 1.0f || r->type == HFX_ROPE_LONGROPE_MSCALE) {
        hfx_value *k = r->type == HFX_ROPE_LONGROPE_MSCALE ? longrope_mscale(g, r, position_ids)
                                                           : hfx_const_f32(g, r->attention_scaling);
        c = hfx_op2(g, HFX_OP_MUL, c, k);
        s = hfx_op2(g, HFX_OP_MUL, s, k);
    }
    *cos = hfx_unsqueeze(g, hfx_cast(g, c, dt), 1);
    *sin = hfx_unsqueeze(g, hfx_cast(g, s, dt), 1);
}

bool hfx_rope_same(const hfx_rope *a, const hfx_rope *b) {
    if (a->type != b->type || a->theta != b->theta || a->factor != b->factor || a->dim != b->dim ||
        a->attention_scaling != b->attention_scaling || a->interleaved != b->interleaved || a->turning != b->turning ||
        a->switch_len != b->switch_len || a->mscale_long != b->mscale_long || a->freq_dim != b->freq_dim)
        return false;
    if (!a->inv_freq != !b->inv_freq || !a->inv_freq_long != !b->inv_freq_long ||
        memcmp(a->mrope_section, b->mrope_section, sizeof a->mrope_section) ||
        a->mrope_interleaved != b->mrope_interleaved)
        return false;
    for (int64_t k = 0; k < a->dim / 2; k++) /* (the frequencies YaRN, longrope and the others compute) */
        if ((a->inv_freq && a->inv_freq[k] != b->inv_freq[k]) || (a->inv_freq_long && a->inv_freq_long[k] != b->inv_freq_long[k]))
            return false;
    return true;
}

hfx_value *hfx_rope_apply(hfx_graph *g, hfx_value *x, hfx_value *cos, hfx_value *sin, bool interleaved) {
    int64_t d = x->dims[x->rank - 1].c, rd = cos->dims[cos->rank - 1].c;
    if (rd < d) { /* partial rotary: rotate the first rd dims, pass the rest */
        hfx_value *parts[2] = {hfx_rope_apply(g, hfx_slice(g, x, -1, 0, rd), cos, sin, interleaved),
                               hfx_slice(g, x, -1, rd, d)};
        return hfx_concat(g, 2, parts, -1);
    }
    hfx_value *rot;
    if (interleaved) { /* [B,H,S,d/2,2]: each pair (a, b) → (−b, a) */
        hfx_dim pairs[5] = {x->dims[0], x->dims[1], x->dims[2], hfx_dim_const(d / 2), hfx_dim_const(2)};
        hfx_value *p = hfx_reshape(g, x, 5, pairs);
        hfx_value *parts[2] = {hfx_op1(g, HFX_OP_NEG, hfx_slice(g, p, -1, 1, 2)), hfx_slice(g, p, -1, 0, 1)};
        rot = hfx_reshape(g, hfx_concat(g, 2, parts, -1), 4, x->dims);
    } else {
        hfx_value *x1 = hfx_slice(g, x, -1, 0, d / 2), *x2 = hfx_slice(g, x, -1, d / 2, d);
        hfx_value *parts[2] = {hfx_op1(g, HFX_OP_NEG, x2), x1};
        rot = hfx_concat(g, 2, parts, -1);
    }
    return hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, x, cos), hfx_op2(g, HFX_OP_MUL, rot, sin));
}
