/* The token mixers other than attention (LFM2's short convolution, Mamba, Mamba2, gated delta-nets)
 * in a decoder layer: which layers have them (config.json), their states' dims, and the glue that
 * reads and leaves those states. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* LFM2: which layers are short convolutions (layer_types "conv", or every layer not in
 * full_attn_idxs), the kernel, and the MLP width block_auto_adjust_ff_dim makes of
 * intermediate_size (⅔ of it, times block_ffn_dim_multiplier, rounded up to block_multiple_of). */
hfx_status hfx_dec_parse_short_conv(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                    hfx_error *err) {
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
            bool sliding = d->mixers.kind == HFX_MIXERS_SHORT_CONV_SLIDING && t && strcmp(t, "sliding_attention") == 0;
            if (!t || (strcmp(t, "conv") != 0 && strcmp(t, "full_attention") != 0 && !sliding))
                return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layer_types[%lld] = '%s' (supported: conv, %sfull_attention)",
                                c.where, (long long)i, t ? t : "(not a string)",
                                d->mixers.kind == HFX_MIXERS_SHORT_CONV_SLIDING ? "sliding_attention, " : "");
            m->mixer[i] = strcmp(t, "conv") == 0 ? HFX_MIXER_SHORT_CONV : HFX_MIXER_ATTENTION;
            continue;
        }
        bool attention = !json_is_array(full);
        for (size_t k = 0; json_is_array(full) && k < json_array_size(full); k++)
            attention |= json_is_integer(json_array_get(full, k)) && json_integer_value(json_array_get(full, k)) == i;
        m->mixer[i] = attention ? HFX_MIXER_ATTENTION : HFX_MIXER_SHORT_CONV;
    }
    bool adjust = false;
    double multiplier;
    int64_t multiple;
    if ((st = hfx_cfg_int_in_or(c, "conv_L_cache", 3, 2, 64, &m->conv_len, err)) ||
        (st = hfx_cfg_bool_or(c, "conv_bias", false, &m->conv_bias, err)) ||
        (d->mixers.ff_adjust_key && (st = hfx_cfg_bool_or(c, d->mixers.ff_adjust_key, true, &adjust, err))) ||
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

/* RWKV-4: its blocks' widths (attention_hidden_size and intermediate_size, null or absent: hidden and 4·hidden) and
 * rescale_every; its final norm (ln_out, built without an ε) at nn.LayerNorm's 1e-5 whatever layer_norm_epsilon says. */
static hfx_status parse_rwkv(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    static const char *const keys[2] = {"attention_hidden_size", "intermediate_size"};
    int64_t *width[2] = {&m->rwkv.width, &m->rwkv.intermediate}, dflt[2] = {m->hidden, 4 * m->hidden};
    hfx_status st;
    for (int k = 0; k < 2; k++) {
        *width[k] = dflt[k];
        const json_t *v = json_object_get(c.obj, keys[k]);
        if (v && !json_is_null(v) && (st = hfx_cfg_int_in(c, keys[k], 1, 1 << 24, width[k], err))) return st;
    }
    if ((st = hfx_cfg_int_in_or(c, "rescale_every", 6, INT32_MIN, INT32_MAX, &m->rwkv.rescale, err))) return st;
    if (m->rwkv.rescale < 0) m->rwkv.rescale = 0; /* (transformers rescales only when it is positive) */
    m->intermediate = m->rwkv.intermediate, m->final_eps = 1e-5;
    return HFX_OK;
}

/* xLSTM: its MLP's width (hidden · ffn_proj_factor rounded up to ffn_round_up_to_multiple_of), its logits' soft cap,
 * the mLSTM's keys; the forms hfx does not write yet refused by name. */
static hfx_status parse_mlstm(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    bool bias, f32_norms;
    const char *mode;
    double factor, cap;
    int64_t multiple;
    hfx_status st;
    if ((st = hfx_cfg_bool_or(c, "use_bias", false, &bias, err)) ||
        (st = hfx_cfg_str_or(c, "weight_mode", "single", &mode, err)) ||
        (st = hfx_cfg_bool_or(c, "norm_reduction_force_float32", true, &f32_norms, err)) ||
        (st = hfx_cfg_num_or(c, "ffn_proj_factor", 2.667, &factor, err)) ||
        (st = hfx_cfg_int_in_or(c, "ffn_round_up_to_multiple_of", 64, 1, 1 << 20, &multiple, err)) ||
        (st = hfx_cfg_num_or(c, "output_logit_soft_cap", 30.0, &cap, err)))
        return st;
    if (bias) return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: use_bias true (RMS norms with biases) is not supported yet", c.where);
    if (strcmp(mode, "single") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: weight_mode '%s' (supported: single)", c.where, mode);
    if (!f32_norms)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: norm_reduction_force_float32 false is not supported yet (hfx's "
                                                  "norms reduce in float32)", c.where);
    double width = floor(((double)m->hidden * factor + (double)multiple - 1) / (double)multiple) * (double)multiple;
    if (!(width >= 1 && width < (double)(1 << 24)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: ffn_proj_factor %g gives an MLP %g wide", c.where, factor, width);
    const json_t *capped = json_object_get(c.obj, "output_logit_soft_cap");
    if (!(cap >= 0 && cap < 1e6)) return hfx_fail(err, HFX_ERR_INVALID, "%s: output_logit_soft_cap %g", c.where, cap);
    m->intermediate = (int64_t)width, m->final_softcap = capped && json_is_null(capped) ? 0 : cap;
    return hfx_mlstm_parse(c, m->hidden, &m->mlstm, err);
}

/* A model whose every layer is a recurrent mixer (Mamba, Mamba2 alone; RWKV and xLSTM with an MLP after it): the
 * template's width, depth, vocabulary, norm and tying, and the mixer's own fields; no attention or positions. */
hfx_status hfx_dec_parse_attention_free(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, "hidden_size", 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, "num_hidden_layers", 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_num_or(c, d->eps_key, d->defaults.eps > 0 ? d->defaults.eps : 1e-5, &m->eps, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", d->defaults.tied, &m->tied, err)))
        return st;
    bool rwkv = d->mixers.kind == HFX_MIXERS_RWKV, mlstm = d->mixers.kind == HFX_MIXERS_MLSTM;
    m->residual_f32 = false;
    if (!rwkv && !mlstm && (st = hfx_cfg_bool_or(c, "residual_in_fp32", true, &m->residual_f32, err))) return st;
    if (!(m->eps > 0 && m->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %g out of range", c.where, d->eps_key, m->eps);
    m->final_eps = m->eps;
    m->heads = m->kv_heads = 1, m->head_dim = m->hidden, m->intermediate = 0, m->max_position = INT32_MAX;
    m->head_rows = m->vocab, m->embed_dim = m->hidden, m->no_final_norm = false;
    m->scale = m->mult.embed = m->mult.residual = m->mult.logits_div = m->mult.logits = 1.0;
    m->layout = HFX_LAYOUT_PRE, m->no_mlp = !rwkv && !mlstm, m->pad_id = -1;
    m->mult.attn_in = m->mult.attn_out = m->mult.ssm_out = m->mult.key = m->mult.gate = m->mult.down = 1.0;
    m->window = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->window);
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    m->sparse = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->sparse); /* (no experts: every MLP dense) */
    if (!m->window || !m->mixer || !m->sparse) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_mixer_kind kind = rwkv ? HFX_MIXER_RWKV : mlstm ? HFX_MIXER_MLSTM
                          : d->mixers.kind == HFX_MIXERS_MAMBA_ONLY ? HFX_MIXER_MAMBA1 : HFX_MIXER_MAMBA2;
    for (int64_t i = 0; i < m->layers; i++) m->window[i] = 0, m->mixer[i] = kind;
    if (rwkv) return parse_rwkv(c, m, err);
    if (mlstm) return parse_mlstm(c, m, err);
    return d->mixers.kind == HFX_MIXERS_MAMBA_ONLY ? hfx_mamba1_parse(c, d->mixers.mamba1, m->hidden, &m->ssm1, err)
                     : hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
}

/* A hybrid's layer pattern: layer_types (transformers 4's layers_block_type) naming recurrent and
 * attention layers, in transformers' new words or the older ones; absent: every layer Mamba2
 * (Granite 4.0), or every full_attention_interval-th layer attention (a gated delta-net's family).
 * The recurrent layers are Mamba2 mixers, or gated delta-nets where the descriptor says so. */
/* Bamba's pattern: the layers attn_layer_indices lists attend, the others (all, when it is null) are Mamba2. */
static hfx_status attention_by_index(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *list = json_object_get(c.obj, "attn_layer_indices");
    for (int64_t i = 0; i < m->layers; i++) m->mixer[i] = HFX_MIXER_MAMBA2;
    if (!list || json_is_null(list)) return HFX_OK;
    if (!json_is_array(list))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'attn_layer_indices' must be a list of layer indices", c.where);
    for (size_t j = 0; j < json_array_size(list); j++) {
        const json_t *v = json_array_get(list, j);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: attn_layer_indices[%zu] is not a layer index in [0, %lld)",
                            c.where, j, (long long)m->layers);
        m->mixer[json_integer_value(v)] = HFX_MIXER_ATTENTION;
    }
    return HFX_OK;
}

/* Jamba's pattern: attention where layer % attn_layer_period == attn_layer_offset (8, 4), Mamba elsewhere. */
static hfx_status attention_by_period(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    int64_t period, offset;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "attn_layer_period", 8, 1, 1 << 20, &period, err)) ||
        (st = hfx_cfg_int_in_or(c, "attn_layer_offset", 4, 0, period - 1, &offset, err)))
        return st;
    for (int64_t i = 0; i < m->layers; i++) m->mixer[i] = i % period == offset ? HFX_MIXER_ATTENTION : HFX_MIXER_MAMBA1;
    return HFX_OK;
}

/* RecurrentGemma: layer_types' linear_attention layers RG-LRU blocks, the sliding_attention ones attention. */
static hfx_status rglru_layers(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "layer_types");
    for (int64_t i = 0; i < m->layers; i++) { /* (parse_sliding checked the list) */
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        m->mixer[i] = t && strcmp(t, "linear_attention") == 0 ? HFX_MIXER_RG_LRU : HFX_MIXER_ATTENTION;
    }
    return hfx_rglru_parse(c, m->hidden, m->heads, &m->rglru, err);
}

hfx_status hfx_dec_mixers_by_name(hfx_cfg c, const char *field, int n, const hfx_layer_name *names, hfx_decoder_cfg *m,
                                   hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "layer_types"); /* (decoder_derived.c made it when absent) */
    if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of num_hidden_layers (%lld) strings", c.where,
                        field, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        int k = 0;
        while (k < n && !(t && strcmp(t, names[k].name) == 0)) k++;
        if (k < n) {
            m->mixer[i] = names[k].kind;
            continue;
        }
        char supported[256];
        size_t len = 0;
        for (k = 0; k < n && len < sizeof supported; k++)
            len += (size_t)snprintf(supported + len, sizeof supported - len, "%s%s", k ? ", " : "", names[k].name);
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s[%lld] = '%s' (supported: %s)", c.where, field, (long long)i,
                        t ? t : "(not a string)", supported);
    }
    return HFX_OK;
}

/* MiniMax: layer_types' linear_attention layers lightning attention, the full_attention ones attention; the residual
 * factors of each kind and of the MLP. */
static hfx_status lightning_layers(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    static const hfx_layer_name names[] = {{"linear_attention", HFX_MIXER_LIGHTNING},
                                           {"full_attention", HFX_MIXER_ATTENTION}};
    hfx_status st = hfx_dec_mixers_by_name(c, "layer_types", 2, names, m, err);
    if (st) return st;
    static const char *const keys[6] = {"full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor",
                                        "linear_attn_beta_factor", "mlp_alpha_factor", "mlp_beta_factor"};
    double *factor[6] = {&m->mult.full_alpha, &m->mult.full_beta, &m->mult.linear_alpha, &m->mult.linear_beta,
                         &m->mult.mlp_alpha, &m->mult.mlp_beta};
    for (int k = 0; k < 6; k++) {
        if ((st = hfx_cfg_num_or(c, keys[k], 1.0, factor[k], err))) return st;
        if (!isfinite(*factor[k])) return hfx_fail(err, HFX_ERR_INVALID, "%s: %s is not a finite number", c.where, keys[k]);
    }
    m->lightning = (hfx_lightning_cfg){m->heads, m->head_dim, m->layers, 256, m->act};
    return hfx_cfg_int_in_or(c, "block_size", 256, 1, 1 << 20, &m->lightning.block, err);
}

/* Nemotron-H: each layer one block after its norm, as layers_block_type names it (decoder_derived.c fills it in). */
static hfx_status one_block_layers(const hfx_decoder_desc *d, hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "layers_block_type");
    if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layers_block_type' must be a list of num_hidden_layers (%lld) "
                                              "strings", c.where, (long long)m->layers);
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        bool moe = t && strcmp(t, "moe") == 0 && m->moe.experts;
        m->sparse[i] = moe;
        if (t && (strcmp(t, "linear_attention") == 0 || strcmp(t, "mamba") == 0)) m->mixer[i] = HFX_MIXER_MAMBA2;
        else if (t && (strcmp(t, "full_attention") == 0 || strcmp(t, "attention") == 0)) m->mixer[i] = HFX_MIXER_ATTENTION;
        else if (moe || (t && strcmp(t, "mlp") == 0)) m->mixer[i] = HFX_MIXER_FFN;
        else
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layers_block_type[%lld] = '%s' (supported: linear_attention, "
                                                      "full_attention, mlp, moe)", c.where, (long long)i,
                            t ? t : "(not a string)");
    }
    m->no_mlp = true;
    return hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
}

hfx_status hfx_dec_parse_hybrid_layers(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                      hfx_error *err) {
    hfx_status st;
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (d->mixers.kind == HFX_MIXERS_ONE_BLOCK_BY_TYPE) return one_block_layers(d, c, m, err);
    if (d->mixers.kind == HFX_MIXERS_RG_LRU_BY_TYPE) return rglru_layers(c, m, err);
    if (d->mixers.kind == HFX_MIXERS_SHARED_BLOCKS_BY_TYPE) return hfx_dec_parse_shared_blocks(d, c, arena, m, err);
    if (d->mixers.kind == HFX_MIXERS_LIGHTNING_BY_TYPE) return lightning_layers(c, m, err);
    if (d->mixers.kind == HFX_MIXERS_MAMBA2_BY_INDEX)
        return (st = attention_by_index(c, m, err)) ? st : hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
    if (d->mixers.kind == HFX_MIXERS_MAMBA_BY_PERIOD)
        return (st = attention_by_period(c, m, err)) ? st : hfx_mamba1_parse(c, d->mixers.mamba1, m->hidden, &m->ssm1, err);
    const char *key = hfx_cfg_has(c, "layer_types") || !hfx_cfg_has(c, "layers_block_type") ? "layer_types"
                                                                                              : "layers_block_type";
    const json_t *types = json_object_get(c.obj, key);
    if (types && !json_is_null(types) && (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must be a list of num_hidden_layers (%lld) strings",
                        c.where, key, (long long)m->layers);
    int64_t interval = 0;
    if (d->mixers.delta && !json_is_array(types) &&
        (st = hfx_cfg_int_in_or(c, "full_attention_interval", 4, 1, m->layers + 1, &interval, err)))
        return st;
    hfx_mixer_kind recurrent = d->mixers.delta ? HFX_MIXER_DELTA : HFX_MIXER_MAMBA2;
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_is_array(types) ? json_string_value(json_array_get(types, (size_t)i))
                        : interval && (i + 1) % interval == 0 ? "full_attention" : d->mixers.delta ? "linear_attention"
                                                                                            : "mamba";
        if (t && (strcmp(t, "linear_attention") == 0 || (!d->mixers.delta && strcmp(t, "mamba") == 0))) m->mixer[i] = recurrent;
        else if (t && (strcmp(t, "attention") == 0 || strcmp(t, "full_attention") == 0)) m->mixer[i] = HFX_MIXER_ATTENTION;
        else
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s[%lld] = '%s' (supported: %slinear_attention, %s"
                                                      "full_attention)", c.where, key, (long long)i,
                            t ? t : "(not a string)", d->mixers.delta ? "" : "mamba, ", d->mixers.delta ? "" : "attention, ");
    }
    return d->mixers.delta ? hfx_delta_parse(c, m->eps, m->max_position, d->mixers.delta, &m->delta, err)
                    : hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
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
hfx_status hfx_dec_parse_parallel_mamba(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err) {
    hfx_status st;
    m->mixer = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mixer);
    if (!m->mixer) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) m->mixer[i] = HFX_MIXER_PARALLEL;
    if ((st = hfx_cfg_num_or(c, "attention_in_multiplier", 1.0, &m->mult.attn_in, err)) ||
        (st = hfx_cfg_num_or(c, "attention_out_multiplier", 1.0, &m->mult.attn_out, err)) ||
        (st = hfx_cfg_num_or(c, "ssm_out_multiplier", 1.0, &m->mult.ssm_out, err)) ||
        (st = hfx_cfg_num_or(c, "key_multiplier", 1.0, &m->mult.key, err)) ||
        (st = hfx_cfg_num_or(c, "embedding_multiplier", 1.0, &m->mult.embed, err)) ||
        (st = hfx_cfg_num_or(c, "lm_head_multiplier", 1.0, &m->mult.logits, err)) ||
        (st = list_number(c, "mlp_multipliers", 2, 0, 1.0, &m->mult.gate, err)) ||
        (st = list_number(c, "mlp_multipliers", 2, 1, 1.0, &m->mult.down, err)))
        return st;
    double all[] = {m->mult.attn_in, m->mult.attn_out, m->mult.ssm_out, m->mult.key, m->mult.embed, m->mult.logits,
                    m->mult.gate, m->mult.down};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (!isfinite(all[k])) return hfx_fail(err, HFX_ERR_INVALID, "%s: a multiplier is not a finite number", c.where);
    return hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
}

/* Layer i's cache: its keys' and values' geometry where it attends, its states' dims where it
 * has a recurrent mixer (Falcon-H1's layers both) — the one place the states' dims are written. */
hfx_layer_cache hfx_decoder_layer_cache(const hfx_decoder_cfg *m, int64_t i) {
    hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
    hfx_layer_cache l = {0};
    hfx_layer_shape s = hfx_dec_shape(m, i);
    if (s.kv_from != i) return l; /* it attends to an earlier layer's keys and values: it keeps nothing */
    /* an indexer's keys where the layer runs its own */
    int64_t index_dim = m->mla.index_shared && m->mla.index_shared[i] ? 0 : m->mla.index_dim;
    if (hfx_mixer_attends(kind) && m->compressed.kind) { /* DeepSeek V4: its keys (the values too), and the compressors' raw
                                                            projections as the values and the index keys */
        hfx_kv_compression k = m->compressed.kind[i];
        int64_t D = m->head_dim, values = k == HFX_KV_WINDOW ? D : k == HFX_KV_HEAVY ? 2 * D : 4 * D;
        return (hfx_layer_cache){1, D, values, m->window[i], NULL, 0, {{0}},
                                 k == HFX_KV_SPARSE ? 4 * m->compressed.index_dim : 0};
    }
    if (hfx_mixer_attends(kind))
        l = m->mla.kv_lora /* MLA caches the latent and the rotary key part, one "head" each */
                ? (hfx_layer_cache){1, m->mla.kv_lora, m->mla.qk_rope, m->window[i], NULL, 0, {{0}}, index_dim}
                : (hfx_layer_cache){s.kv_heads, s.head_dim, s.v_dim, m->window[i],
                                    !m->layer_types ? NULL : m->window[i] ? "sliding_attention" : "full_attention",
                                    0, {{0}}, 0};
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
    case HFX_MIXER_SHARED_BLOCK:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->ssm.conv_dim, m->ssm.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 3, {m->ssm.heads, m->ssm.head_dim, m->ssm.state}};
        break;
    case HFX_MIXER_DELTA:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->delta.conv_dim, m->delta.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 3, {m->delta.v_heads, m->delta.k_dim, m->delta.v_dim}};
        break;
    case HFX_MIXER_RG_LRU:
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {m->rglru.width, m->rglru.kernel - 1}};
        l.states[1] = (hfx_layer_state){"ssm", 1, {m->rglru.width}};
        break;
    case HFX_MIXER_LIGHTNING: /* its one state: keys times values, decayed */
        l.n_states = 1, l.states[0] = (hfx_layer_state){"ssm", 3, {m->lightning.heads, m->lightning.head_dim,
                                                                   m->lightning.head_dim}};
        break;
    case HFX_MIXER_MLSTM: /* the cell's memory C [DK, DV], its normalizer as a last column, its stabilizer a last row */
        l.n_states = 1, l.states[0] = (hfx_layer_state){"ssm", 3, {m->mlstm.heads, m->mlstm.qk_dim / m->mlstm.heads + 1,
                                                                   m->mlstm.v_dim / m->mlstm.heads + 1}};
        break;
    case HFX_MIXER_RWKV: /* the time and channel mixes' last inputs; the WKV sums num, den and their max */
        l.n_states = 2, l.states[0] = (hfx_layer_state){"conv", 2, {2, m->hidden}};
        l.states[1] = (hfx_layer_state){"ssm", 2, {3, m->rwkv.width}};
        break;
    case HFX_MIXER_ATTENTION: case HFX_MIXER_FFN: break;
    }
    if (m->qsa.heads && hfx_mixer_attends(kind)) l.index_dim = m->qsa.dim + 1; /* its raw keys, then their positions */
    if (m->ngram.index && m->ngram.index[i] >= 0) { /* an n-gram layer's convolution and last ids */
        int64_t kept = (m->ngram.kernel - 1) * m->ngram.n;
        l.states[l.n_states++] = (hfx_layer_state){"ple_conv", 2, {m->hyper.streams * m->hidden, kept}};
        l.states[l.n_states++] = (hfx_layer_state){"ngram", 1, {m->ngram.n - 1}};
    }
    return l;
}

int hfx_dec_state_part(const hfx_layer_state *s) {
    static const char *const names[STATE_PARTS] = {"conv", "ssm", "ple_conv", "ngram"};
    for (int k = 0; k < STATE_PARTS; k++)
        if (strcmp(s->name, names[k]) == 0) return k;
    return 0;
}

/* State k of layer i as an earlier call left it, by input `name`: [B, the dims layer_cache gives],
 * the convolution's holding one input more in the seed profile (transformers' cache keeps the
 * kernel's whole window, hfx the kernel − 1 inputs the next call reads). */
static hfx_value *read_state(layer_ctx *c, int64_t i, int k, int state, const char *name, hfx_dtype dt) {
    hfx_layer_cache l = hfx_decoder_layer_cache(c->m, i);
    hfx_dim dims[4] = {c->batch};
    for (int d = 0; d < l.states[k].rank && d < 3; d++) dims[d + 1] = hfx_dim_const(l.states[k].dims[d]);
    if (hfx_dec_seed_profile(c) && k == 0) dims[l.states[k].rank] = hfx_dim_const(l.states[k].dims[l.states[k].rank - 1] + 1);
    return hfx_state_read(c->g, state, name, dt, l.states[k].rank + 1, dims);
}

/* Layer i's recurrent states as this call carries them, by part (0: conv, 1: ssm). */
typedef struct layer_states {
    int state[2];       /* their declarations (-1: no cache, or no such part) */
    hfx_value *past[2]; /* what an earlier call left (NULL: a prompt, zeros; or no such part) */
} layer_states;

/* Declare layer i's states (its cache description's) and read them where the call continues: the convolution's
 * (or token shift's) in conv_dtype, the recurrent one in f32. */
static layer_states open_states(layer_ctx *c, int64_t i, hfx_dtype conv_dtype) {
    hfx_layer_cache l = hfx_decoder_layer_cache(c->m, i);
    layer_states s = {{-1, -1}, {NULL, NULL}};
    for (int k = 0; k < l.n_states; k++) {
        int part = hfx_dec_state_part(&l.states[k]);
        if (part > 1) continue; /* an n-gram layer's: ngram.c opens those */
        hfx_state_names n = hfx_dec_state_names(c, i, part);
        if (c->o->cache != HFX_CACHE_NONE) s.state[part] = hfx_graph_state(c->g, n.state, HFX_STATE_REPLACE, 2);
        if (hfx_dec_continues(c))
            s.past[part] = read_state(c, i, k, s.state[part], n.input, part ? HFX_DTYPE_F32 : conv_dtype);
    }
    return s;
}

/* Record what layer i leaves of the states `s` opened (NULL: a part it has not). */
static void close_states(layer_ctx *c, int64_t i, const layer_states *s, hfx_value *conv_next, hfx_value *ssm_next) {
    c->cache_out[CACHE_PARTS * i + STATE_SLOT] = conv_next, c->cache_state[CACHE_PARTS * i + STATE_SLOT] = s->state[0];
    c->cache_out[CACHE_PARTS * i + STATE_SLOT + 1] = ssm_next;
    c->cache_state[CACHE_PARTS * i + STATE_SLOT + 1] = s->state[1];
}

/* io "seed" names no state of these mixers yet (transformers keeps them outside its cache classes): refused by name. */
static void refuse_seed(layer_ctx *c, const char *states, const char *why) {
    if (hfx_dec_seed_profile(c))
        hfx_graph_fail(c->g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" has no names for %s%s; export with io \"optimum\"",
                       c->d->architecture, states, why);
}

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
#define P(name) hfx_dec_name(c, i, c->n.conv, name, p, sizeof p)
    if (c->new_mask) h = hfx_op2(g, HFX_OP_MUL, h, c->new_mask);
    hfx_value *bcx = hfx_dec_proj(c, h, H, 3 * H, m->conv_bias, P("in_proj")); /* [B,S,3·hidden] */
    hfx_value *b = hfx_slice(g, bcx, 2, 0, H), *gate = hfx_slice(g, bcx, 2, H, 2 * H), *x = hfx_slice(g, bcx, 2, 2 * H, 3 * H);
    x = hfx_transpose(g, hfx_op2(g, HFX_OP_MUL, b, x), 3, (int64_t[]){0, 2, 1}); /* [B,hidden,S] */
    layer_states st = open_states(c, i, x->dtype);
    hfx_value *next = NULL;
    hfx_value *all = hfx_conv_window(g, st.past[0], x, L, hfx_dec_seed_profile(c) ? L : L - 1,
                                     o->cache != HFX_CACHE_NONE ? &next : NULL);
    hfx_value *out = hfx_causal_conv(g, all, hfx_weight(c->w, 3, (int64_t[]){H, 1, L}, "%s.weight", P("conv")),
                                     m->conv_bias ? hfx_weight(c->w, 1, &H, "%s.bias", P("conv")) : NULL);
    close_states(c, i, &st, next, NULL);
    hfx_value *y = hfx_op2(g, HFX_OP_MUL, gate, hfx_transpose(g, out, 3, (int64_t[]){0, 2, 1}));
    return hfx_dec_proj(c, y, H, H, m->conv_bias, P("out_proj"));
#undef P
}

/* A Mamba2, Mamba or gated delta-net mixer (ssm.h) with its two states as cache: past.{i}.conv
 * [B, conv_dim, kernel − 1] and past.{i}.ssm (layer_cache's dims) in f32, replaced each call by
 * present.{i}.*. */
static hfx_value *recurrent_block(layer_ctx *c, int64_t i, hfx_value *h, hfx_mixer_kind kind) {
    hfx_graph *g = c->g;
    char prefix[160];
    hfx_dec_name(c, i, NULL, c->n.ssm, prefix, sizeof prefix);
    layer_states st = open_states(c, i, h->dtype);
    hfx_ssm_state s = {.conv = st.past[0], .ssm = st.past[1], .keep = c->o->cache != HFX_CACHE_NONE,
                       .whole_window = hfx_dec_seed_profile(c)};
    if (kind == HFX_MIXER_RG_LRU) refuse_seed(c, "the RG-LRU layers' states", ""); /* (on its modules, in transformers) */
    if (kind == HFX_MIXER_MLSTM) refuse_seed(c, "the mLSTM layers' states", " (transformers' xLSTMCache)");
    hfx_value *y = kind == HFX_MIXER_RG_LRU ? hfx_rglru_mixer(g, c->w, &c->m->rglru, prefix, h, c->positions, c->m->act, &s)
                   : kind == HFX_MIXER_MLSTM  ? hfx_mlstm_mixer(g, c->w, &c->m->mlstm, prefix, h, &s)
                   : kind == HFX_MIXER_MAMBA1  ? hfx_mamba1_mixer(g, c->w, &c->m->ssm1, prefix, h, c->new_mask, &s)
                   : kind == HFX_MIXER_DELTA ? hfx_delta_mixer(g, c->w, &c->m->delta, prefix, c->n.o, h, c->new_mask, &s)
                                             : hfx_mamba2_mixer(g, c->w, &c->m->ssm, prefix, h, c->new_mask, &s);
    close_states(c, i, &st, s.conv_next, s.ssm_next);
    return y;
}

/* Lightning attention (ssm.h) with its one state as cache: past.{i}.ssm [B, heads, head_dim, head_dim] f32, replaced
 * each call by present.{i}.ssm. */
static hfx_value *lightning_block(layer_ctx *c, int64_t i, hfx_value *h) {
    char prefix[160];
    hfx_dec_name(c, i, NULL, c->n.attn, prefix, sizeof prefix);
    layer_states st = open_states(c, i, h->dtype);
    hfx_ssm_state s = {.ssm = st.past[1], .keep = c->o->cache != HFX_CACHE_NONE};
    refuse_seed(c, "the lightning attention layers' states", " yet");
    hfx_value *y = hfx_lightning_mixer(c->g, c->w, &c->m->lightning, prefix, h, i, c->new_mask, &s);
    close_states(c, i, &st, NULL, s.ssm_next);
    return y;
}

/* RWKV-4's time mix (ssm.h) with its states as cache: past.{i}.conv [B, 2, hidden] (the time mix's last input, then
 * the channel mix's, which hfx_dec_channel_mix reads and completes) and past.{i}.ssm [B, 3, A] f32, replaced each call
 * by present.{i}.*; block i's output divided by 2^(i / rescale_every) as transformers' eval weights are. */
static hfx_value *rwkv_block(layer_ctx *c, int64_t i, hfx_value *h) {
    hfx_graph *g = c->g;
    char prefix[160];
    hfx_dec_name(c, i, NULL, c->n.attn, prefix, sizeof prefix);
    layer_states st = open_states(c, i, h->dtype);
    hfx_rwkv_state s = {.wkv = st.past[1], .keep = c->o->cache != HFX_CACHE_NONE};
    c->shift_past = NULL;
    if (st.past[0]) /* [B,2,H]: the time mix's row, then the channel mix's */
        s.shift = hfx_slice(g, st.past[0], 1, 0, 1), c->shift_past = hfx_slice(g, st.past[0], 1, 1, 2);
    refuse_seed(c, "RWKV's states", " (transformers passes them as its `state` list)");
    hfx_value *y = hfx_rwkv_time_mix(g, c->w, &c->m->rwkv, prefix, h, &s);
    close_states(c, i, &st, s.shift_next, s.wkv_next);
    return hfx_dec_rescaled(c, i, y);
}

hfx_value *hfx_dec_rescaled(layer_ctx *c, int64_t i, hfx_value *y) {
    int64_t r = c->m->rwkv.rescale;
    return r && i >= r ? hfx_dec_scaled(c->g, y, ldexp(1.0, -(int)(i / r))) : y;
}

hfx_value *hfx_dec_channel_mix(layer_ctx *c, int64_t i, hfx_value *h) {
    char prefix[160];
    hfx_value *next = NULL, **shift = &c->cache_out[CACHE_PARTS * i + STATE_SLOT];
    hfx_value *y = hfx_rwkv_channel_mix(c->g, c->w, &c->m->rwkv, hfx_dec_name(c, i, NULL, c->n.mlp, prefix, sizeof prefix),
                                        h, c->shift_past, &next);
    if (*shift) *shift = hfx_concat(c->g, 2, (hfx_value *[]){*shift, next}, 1); /* [B,2,H]: the time mix's, then this */
    return hfx_dec_rescaled(c, i, y);
}

/* The layer's token mixer: attention, a short convolution (LFM2's "conv" layers) or a Mamba2 mixer. */
hfx_value *hfx_dec_mixer(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                              hfx_value *bias) {
    switch (c->m->mixer ? c->m->mixer[i] : HFX_MIXER_ATTENTION) {
    case HFX_MIXER_SHORT_CONV: return short_conv_block(c, i, h);
    case HFX_MIXER_MAMBA2:
    case HFX_MIXER_MAMBA1:
    case HFX_MIXER_DELTA:
    case HFX_MIXER_RG_LRU:
    case HFX_MIXER_MLSTM: return recurrent_block(c, i, h, c->m->mixer[i]);
    case HFX_MIXER_SHARED_BLOCK: return recurrent_block(c, i, h, HFX_MIXER_MAMBA2); /* (the layer ran the block first) */
    case HFX_MIXER_LIGHTNING: return lightning_block(c, i, h);
    case HFX_MIXER_RWKV: return rwkv_block(c, i, h);
    case HFX_MIXER_PARALLEL: { /* mamba(h)·ssm_out + attention(h·attn_in)·attn_out, in transformers' order */
        const hfx_decoder_cfg *m = c->m;
        hfx_graph *g = c->g;
        /* built attention first in the seed's profile: its cache inputs then come as transformers' hybrid cache
           layer flattens (its attention half's keys and values, then the states) */
        hfx_value *ssm = NULL, *attn = NULL;
        bool seed = hfx_dec_seed_profile(c);
        if (!seed) ssm = recurrent_block(c, i, h, HFX_MIXER_MAMBA2);
        attn = hfx_dec_attention(c, i, hfx_dec_scaled(g, h, m->mult.attn_in), cos, sin, bias);
        if (seed) ssm = recurrent_block(c, i, h, HFX_MIXER_MAMBA2);
        ssm = hfx_dec_scaled(g, ssm, m->mult.ssm_out);
        return hfx_op2(g, HFX_OP_ADD, ssm, hfx_dec_scaled(g, attn, m->mult.attn_out));
    }
    case HFX_MIXER_FFN: return hfx_dec_ffn(c, i, h); /* (the MLP as the layer's one block) */
    case HFX_MIXER_ATTENTION: break;
    }
    return hfx_dec_attention(c, i, h, cos, sin, bias);
}
