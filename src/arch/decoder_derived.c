/* The keys a lineage's transformers config class derives in its __post_init__ when config.json leaves them out, where
 * the template would otherwise read something else (hfx_derived_keys): LFM3's layer pattern, Cohere2-MoE's layer and
 * MLP patterns from its dense prefix, MiMo-V2-Flash's patterns and window, Nemotron-H's block list, OLMo-Hybrid's
 * pattern and delta-net widths, RecurrentGemma's pattern and the keys its config renames or forces. The parse reads them from a view of the
 * config (decoder_parse.c), as if config.json had them. */
#include "arch/decoder_blocks.h"

#include <stdint.h>
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

/* MiMo-V2-Flash: full attention at layer 0 and every 6th layer, sliding elsewhere; layer 0's MLP dense. */
static const char *mimo_v2_type(json_int_t i, hfx_cfg c) {
    (void)c;
    return i == 0 || (i + 1) % 6 == 0 ? "full_attention" : "sliding_attention";
}

/* A.X K1: sparse from first_k_dense_replace (1) on, at every moe_layer_freq-th (1) layer. */
static const char *axk1_mlp(json_int_t i, hfx_cfg c) {
    return i >= int_or(c, "first_k_dense_replace", 1, 0, 4096) && i % int_or(c, "moe_layer_freq", 1, 1, 4096) == 0
               ? "sparse" : "dense";
}

/* Kolibri-1: full attention at every 5th layer, sliding elsewhere. */
static const char *kolibri_type(json_int_t i, hfx_cfg c) {
    (void)c;
    return (i + 1) % 5 == 0 ? "full_attention" : "sliding_attention";
}

/* Flint: full attention at layers 0 and 1, every 4k + 1 and the last, sliding elsewhere. */
static const char *flint_type(json_int_t i, hfx_cfg c) {
    json_int_t n = int_or(c, "num_hidden_layers", 0, 1, 4096);
    return i < 2 || i % 4 == 1 || i == n - 1 ? "full_attention" : "sliding_attention";
}

static bool derive_flint(hfx_cfg c, json_t *out) {
    if (!derive_list(c, "layer_types", flint_type, out)) return false;
    if (!absent(c, "mlp_only_layers")) return true;
    json_t *dense = json_pack("[ii]", 0, 1);
    return dense && json_object_set_new(out, "mlp_only_layers", dense) == 0;
}

static const char *first_dense_mlp(json_int_t i, hfx_cfg c) {
    (void)c;
    return i == 0 ? "dense" : "sparse";
}

/* Each value of `from` (an object, or not one: nothing) under its pairs' first name into out under their second. */
static bool renamed(const json_t *from, const char *const (*pairs)[2], size_t n, json_t *out) {
    for (size_t k = 0; json_is_object(from) && k < n; k++) {
        json_t *v = json_object_get(from, pairs[k][0]);
        if (v && json_object_set(out, pairs[k][1], v)) return false;
    }
    return true;
}

/* Nemotron-H: layers_block_type (or its alias layer_types; else hybrid_override_pattern's M, *, - and E; else its
 * config's default), num_hidden_layers its length, and the mamba_* names its config still takes, which win. */
static bool derive_nemotron_h(hfx_cfg c, json_t *out) {
    static const char *const legacy[][2] = {{"mamba_n_groups", "n_groups"}, {"mamba_d_conv", "conv_kernel"},
                                           {"mamba_dt_min", "time_step_min"}, {"mamba_conv_bias", "use_conv_bias"},
                                           {"mamba_chunk_size", "chunk_size"}};
    if (!renamed(c.obj, legacy, sizeof legacy / sizeof legacy[0], out)) return false;
    const json_t *list = json_object_get(c.obj, "layers_block_type");
    if (!json_is_array(list)) list = json_object_get(c.obj, "layer_types");
    json_t *made = NULL;
    const char *pattern = json_string_value(json_object_get(c.obj, "hybrid_override_pattern"));
    if (!json_is_array(list)) {
        static const char *const kinds[] = {"linear_attention", "moe", "full_attention", "mlp"}; /* its default */
        made = json_array();
        size_t n = pattern ? strlen(pattern) : 4;
        for (size_t i = 0; made && i < n && i < 4096; i++) {
            char one[2] = {pattern ? pattern[i] : 0, 0};
            const char *kind = !pattern ? kinds[i] : one[0] == 'M' ? "linear_attention" : one[0] == '*' ? "full_attention"
                             : one[0] == '-' ? "mlp" : one[0] == 'E' ? "moe" : one; /* (the parse names it) */
            if (json_array_append_new(made, json_string(kind))) break;
        }
        list = made;
    }
    bool ok = list && json_object_set(out, "layers_block_type", (json_t *)list) == 0 &&
              json_object_set_new(out, "num_hidden_layers", json_integer((json_int_t)json_array_size(list))) == 0;
    json_decref(made);
    return ok;
}

/* OLMo-Hybrid: full attention at 4k + 3, the last layer when none is; the delta-nets' heads and widths. */
static const char *olmo_hybrid_type(json_int_t i, hfx_cfg c) {
    json_int_t n = int_or(c, "num_hidden_layers", 0, 1, 4096);
    return i % 4 == 3 || (n < 4 && i == n - 1) ? "full_attention" : "linear_attention";
}

static bool derive_olmo_hybrid(hfx_cfg c, json_t *out) {
    json_int_t heads = int_or(c, "num_attention_heads", 0, 1, 4096), hidden = int_or(c, "hidden_size", 0, 1, 1 << 20);
    if (!derive_list(c, "layer_types", olmo_hybrid_type, out)) return false;
    if (!heads || !hidden) return true; /* (the parse reports them) */
    json_int_t k_heads = int_or(c, "linear_num_key_heads", heads, 1, 1 << 12);
    json_int_t k_dim = absent(c, "linear_key_head_dim") ? (json_int_t)(0.75 * (double)hidden / (double)k_heads)
                                                         : int_or(c, "linear_key_head_dim", 1, 1, 1 << 12);
    const struct { const char *key; json_int_t value; } dflt[] = {
        {"linear_num_key_heads", heads}, {"linear_num_value_heads", heads}, {"linear_key_head_dim", k_dim},
        {"linear_value_head_dim", 2 * k_dim}};
    for (size_t k = 0; k < sizeof dflt / sizeof dflt[0]; k++)
        if (absent(c, dflt[k].key) && json_object_set_new(out, dflt[k].key, json_integer(dflt[k].value))) return false;
    return true;
}

/* RecurrentGemma: block_types cycled over the layers ("recurrent": linear_attention, else sliding_attention); the keys its
 * config maps (attention_window_size, logits_soft_cap) and forces (head_dim; the MLP half intermediate_size). */
static bool derive_recurrent_gemma(hfx_cfg c, json_t *out) {
    const json_t *blocks = json_object_get(c.obj, "block_types");
    json_int_t n = int_or(c, "num_hidden_layers", 26, 1, 4096), heads = int_or(c, "num_attention_heads", 10, 1, 4096);
    json_int_t hidden = int_or(c, "hidden_size", 2560, 1, 1 << 20), mlp = int_or(c, "intermediate_size", 3 * 2560, 2, 1 << 26);
    size_t period = json_is_array(blocks) ? json_array_size(blocks) : 3;
    json_t *types = json_array();
    for (json_int_t i = 0; types && period && i < n; i++) {
        const char *b = json_is_array(blocks) ? json_string_value(json_array_get(blocks, (size_t)i % period))
                                              : i % 3 == 2 ? "attention" : "recurrent";
        if (json_array_append_new(types, json_string(b && strcmp(b, "recurrent") == 0 ? "linear_attention"
                                                                                       : "sliding_attention")))
            break;
    }
    const json_t *window = json_object_get(c.obj, "attention_window_size"), *cap = json_object_get(c.obj, "logits_soft_cap");
    return types && json_object_set_new(out, "layer_types", types) == 0 &&
           json_object_set_new(out, "sliding_window", window ? json_incref((json_t *)window) : json_integer(2048)) == 0 &&
           json_object_set_new(out, "final_logit_softcapping", cap ? json_incref((json_t *)cap) : json_real(30.0)) == 0 &&
           json_object_set_new(out, "head_dim", json_integer(hidden / heads)) == 0 &&
           json_object_set_new(out, "intermediate_size", json_integer(mlp / 2)) == 0;
}

/* LongCat-Flash: its sublayers as the layers (num_layers of two each: num_hidden_layers, which its config also takes,
 * halved), its MLP width's own name, latent attention's widths where absent (its config's defaults), interleaved
 * rotary pairs (its attention always regroups them). */
static bool derive_longcat(hfx_cfg c, json_t *out) {
    json_int_t layers = int_or(c, "num_layers", int_or(c, "num_hidden_layers", 56, 0, 8192) / 2, 0, 4096);
    const json_t *ffn = json_object_get(c.obj, "ffn_hidden_size");
    static const struct { const char *key; json_int_t value; } dflt[] = {
        {"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64},
        {"v_head_dim", 128}, {"ffn_hidden_size", 12288}, {"expert_ffn_hidden_size", 2048}, {"n_routed_experts", 512},
        {"moe_topk", 12}, {"zero_expert_num", 256}};
    for (size_t k = 0; k < sizeof dflt / sizeof dflt[0]; k++)
        if (!json_object_get(c.obj, dflt[k].key) && json_object_set_new(out, dflt[k].key, json_integer(dflt[k].value)))
            return false;
    return json_object_set_new(out, "num_hidden_layers", json_integer(2 * layers)) == 0 &&
           json_object_set_new(out, "intermediate_size", ffn ? json_incref((json_t *)ffn) : json_integer(12288)) == 0 &&
           json_object_set_new(out, "rope_interleave", json_true()) == 0;
}

/* Kimi-Linear: full attention at 4k (k > 0), Kimi delta attention elsewhere. */
static const char *kimi_type(json_int_t i, hfx_cfg c) {
    (void)c;
    return i && i % 4 == 0 ? "full_attention" : "linear_attention";
}

/* The names Kimi-Linear's and BailingHybrid's configs save (their attribute_map's), as the template reads them. */
static const char *const ling_saved[][2] = {{"model_max_length", "max_position_embeddings"},
                                            {"moe_renormalize", "norm_topk_prob"}, {"num_expert_group", "n_group"},
                                            {"num_experts", "num_local_experts"},
                                            {"num_experts_per_token", "num_experts_per_tok"},
                                            {"num_shared_experts", "n_shared_experts"}};

/* Kimi-Linear: the saved names; linear_attn_config's head_dim, num_heads and short_conv_kernel_size over the linear_*
 * keys; its full_attn_layers and kda_layers (1-based) as layer_types where config.json has none (a layer neither lists:
 * null, which the parse names). */
static bool derive_kimi_linear(hfx_cfg c, json_t *out) {
    const json_t *lin = json_object_get(c.obj, "linear_attn_config");
    static const char *const keys[][2] = {{"head_dim", "linear_head_dim"}, {"num_heads", "linear_num_heads"},
                                          {"short_conv_kernel_size", "linear_conv_kernel_dim"}};
    if (!renamed(c.obj, ling_saved, sizeof ling_saved / sizeof ling_saved[0], out) ||
        !renamed(lin, keys, sizeof keys / sizeof keys[0], out))
        return false;
    const json_t *full = json_is_object(lin) ? json_object_get(lin, "full_attn_layers") : NULL;
    const json_t *kda = json_is_object(lin) ? json_object_get(lin, "kda_layers") : NULL;
    if (!absent(c, "layer_types") || !json_is_array(full) || !json_is_array(kda))
        return derive_list(c, "layer_types", kimi_type, out);
    json_int_t n = int_or(c, "num_hidden_layers", 27, 1, 4096);
    json_t *types = json_array();
    for (json_int_t i = 0; types && i < n; i++)
        if (json_array_append_new(types, json_null())) break;
    const json_t *lists[2] = {full, kda};
    for (int l = 0; types && l < 2; l++)
        for (size_t j = 0; j < json_array_size(lists[l]); j++) {
            json_int_t at = json_integer_value(json_array_get(lists[l], j)) - 1;
            if (at >= 0 && at < n)
                json_array_set_new(types, (size_t)at, json_string(l ? "linear_attention" : "full_attention"));
        }
    return types && json_object_set_new(out, "layer_types", types) == 0;
}

/* BailingHybrid: the last layer of every layer_group_size (6) full attention, Kimi delta attention before it. */
static const char *bailing_type(json_int_t i, hfx_cfg c) {
    return (i + 1) % int_or(c, "layer_group_size", 6, 1, 1 << 20) ? "linear_attention" : "full_attention";
}

/* BailingHybrid: the saved names; its pattern; interleaved rotary pairs (its attention always regroups them). (The
 * delta-nets' widths are its config's head_dim, num_attention_heads and short_conv_kernel_size, read as they are:
 * HFX_DELTA_KDA_FULL_RANK.) */
static bool derive_bailing_hybrid(hfx_cfg c, json_t *out) {
    if (!renamed(c.obj, ling_saved, sizeof ling_saved / sizeof ling_saved[0], out)) return false;
    return derive_list(c, "layer_types", bailing_type, out) &&
           json_object_set_new(out, "rope_interleave", json_true()) == 0;
}

/* xLSTM: as many blocks as num_blocks says where set (else num_hidden_layers), hidden_size embedding_dim where null. */
static bool derive_xlstm(hfx_cfg c, json_t *out) {
    const json_t *blocks = json_object_get(c.obj, "num_blocks"), *width = json_object_get(c.obj, "embedding_dim");
    if (!absent(c, "num_blocks") && json_object_set(out, "num_hidden_layers", (json_t *)blocks)) return false;
    return !(absent(c, "hidden_size") && !absent(c, "embedding_dim") && json_object_set(out, "hidden_size", (json_t *)width));
}

/* MiniMax: full attention at the even layers, lightning attention at the odd ones. */
static const char *minimax_type(json_int_t i, hfx_cfg c) {
    (void)c;
    return i % 2 ? "linear_attention" : "full_attention";
}

/* Zamba2: layers_block_type (alias layer_types; its config's 54 layers by default) with the older "mamba" renamed, and
 * num_hidden_layers its length, as transformers builds one layer per entry; the keys its config computes whatever
 * config.json says (the attention's heads as wide as [x; embeddings]) or from others (intermediate_size, mlp_bias), and
 * the rotary switch in the words the template reads. */
static bool derive_zamba2(hfx_cfg c, json_t *out) {
    const json_t *list = json_object_get(c.obj, "layers_block_type");
    if (!list || json_is_null(list)) list = json_object_get(c.obj, "layer_types");
    json_t *types = json_array();
    size_t n = json_is_array(list) ? json_array_size(list) : 54;
    for (size_t i = 0; types && i < n && i < 4096; i++) {
        bool hybrid = (i > 0 && i <= 42 && i % 6 == 0) || i == 47 || i == 51; /* (its default: every 6th to 42, 47, 51) */
        const char *t = json_is_array(list) ? json_string_value(json_array_get(list, i))
                                            : hybrid ? "hybrid" : "linear_attention";
        if (json_array_append_new(types, json_string(t && strcmp(t, "mamba") == 0 ? "linear_attention" : t ? t : "")))
            break;
    }
    json_int_t heads = int_or(c, "num_attention_heads", 32, 1, 4096), hidden = int_or(c, "hidden_size", 2560, 1, 1 << 20);
    const json_t *width = json_object_get(c.obj, "intermediate_size"), *bias = json_object_get(c.obj, "add_bias_linear");
    const json_t *rope = json_object_get(c.obj, "use_mem_rope"), *longer = json_object_get(c.obj, "use_long_context");
    bool ok = types && json_array_size(types) == n && json_object_set_new(out, "layer_types", types) == 0 &&
              json_object_set_new(out, "num_hidden_layers", json_integer((json_int_t)n)) == 0 &&
              json_object_set_new(out, "head_dim", json_integer(2 * hidden / heads)) == 0 &&
              json_object_set_new(out, "mlp_bias", json_boolean(json_is_true(bias))) == 0 &&
              json_object_set_new(out, "position_embedding_type", json_string(json_is_true(rope) ? "rope" : "none")) == 0;
    if (!types || json_array_size(types) != n) json_decref(types);
    if (ok && (!width || json_is_null(width) || (json_is_integer(width) && json_integer_value(width) == 0)))
        ok = json_object_set_new(out, "intermediate_size", json_integer(4 * hidden)) == 0;
    if (ok && json_is_true(longer)) ok = json_object_set_new(out, "max_position_embeddings", json_integer(16384)) == 0;
    return ok;
}

/* DeepSeek V4: layer i by compress_ratios[i] (0, 4, 128), else two heavily compressed layers, then sparse at odd i and
 * heavy at even. */
static const char *deepseek_v4_type(json_int_t i, hfx_cfg c) {
    const json_t *ratios = json_object_get(c.obj, "compress_ratios");
    if (json_is_array(ratios)) {
        const json_t *v = json_array_get(ratios, (size_t)i);
        json_int_t r = json_is_integer(v) ? json_integer_value(v) : -1;
        return r == 0 ? "sliding_attention" : r == 4 ? "compressed_sparse_attention"
               : r == 128 ? "heavily_compressed_attention" : "(a compress_ratios value not 0, 4 or 128)";
    }
    return i < 2 || i % 2 == 0 ? "heavily_compressed_attention" : "compressed_sparse_attention";
}

static const char *deepseek_v4_mlp(json_int_t i, hfx_cfg c) {
    return i < int_or(c, "num_hash_layers", 3, 0, 4096) ? "hash_moe" : "moe";
}

/* DeepSeek V4's config class: its layer and MLP patterns, compress_rates from the older scalar keys, and its two
 * rotaries: rope_parameters {main: the default at rope_theta, compress: the config's own rope (YaRN's attention_factor 1
 * unless given) at compress_rope_theta}, both over partial_rotary_factor (else qk_rope_head_dim / head_dim, else 1/8). */
/* Qwen4-Exp: its config class reads layer_types' "full_attention" as "indexed_attention" (every attention layer has
 * the indexer): both are the template's "full_attention"; output_gate_type hidden_act where null. */
static bool derive_qwen4_exp(hfx_cfg c, json_t *out) {
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (json_is_array(types)) {
        json_t *list = json_array();
        for (size_t i = 0; list && i < json_array_size(types); i++) {
            const json_t *t = json_array_get(types, i);
            bool indexed = json_is_string(t) && strcmp(json_string_value(t), "indexed_attention") == 0;
            if (json_array_append_new(list, indexed ? json_string("full_attention") : json_copy((json_t *)t))) {
                json_decref(list);
                return false;
            }
        }
        if (!list || json_object_set_new(out, "layer_types", list)) return false;
    }
    if (!absent(c, "output_gate_type")) return true;
    const json_t *act = json_object_get(c.obj, "hidden_act");
    return json_object_set_new(out, "output_gate_type", json_is_string(act) ? json_copy((json_t *)act) : json_string("silu")) == 0;
}

static bool derive_deepseek_v4(hfx_cfg c, json_t *out) {
    bool ok = derive_list(c, "layer_types", deepseek_v4_type, out) && derive_list(c, "mlp_layer_types", deepseek_v4_mlp, out);
    if (ok && absent(c, "compress_rates") && (!absent(c, "compress_rate_csa") || !absent(c, "compress_rate_hca")))
        ok = json_object_set_new(out, "compress_rates",
                                 json_pack("{s:I, s:I}", "compressed_sparse_attention",
                                           (json_int_t)int_or(c, "compress_rate_csa", 4, 1, 1 << 16),
                                           "heavily_compressed_attention",
                                           (json_int_t)int_or(c, "compress_rate_hca", 128, 1, 1 << 16))) == 0;
    const json_t *rp = json_object_get(c.obj, "rope_parameters");
    if (!ok || (json_is_object(json_object_get(rp, "main")) && json_is_object(json_object_get(rp, "compress")))) return ok;
    const json_t *share = json_object_get(c.obj, "partial_rotary_factor");
    double partial = json_is_number(share) ? json_number_value(share) : 0.125;
    json_int_t rope_dims = int_or(c, "qk_rope_head_dim", 0, 1, 1 << 20), head_dim = int_or(c, "head_dim", 512, 1, 1 << 20);
    if (!json_is_number(share) && rope_dims) partial = (double)rope_dims / (double)head_dim;
    const json_t *flat = json_is_object(rp) ? rp : json_object_get(c.obj, "rope_scaling");
    json_t *compress = json_is_object(flat) ? json_deep_copy(flat) : json_object();
    if (!compress) return false;
    json_object_del(compress, "main");
    json_object_del(compress, "compress");
    const json_t *legacy = json_object_get(compress, "type");
    if (!json_object_get(compress, "rope_type"))
        ok = json_object_set_new(compress, "rope_type", json_is_string(legacy) ? json_copy((json_t *)legacy) : json_string("default")) == 0;
    const json_t *theta = json_object_get(c.obj, "rope_theta"), *ctheta = json_object_get(c.obj, "compress_rope_theta");
    ok = ok && json_object_set_new(compress, "rope_theta", json_is_number(ctheta) ? json_copy((json_t *)ctheta) : json_real(160000.0)) == 0 &&
         json_object_set_new(compress, "partial_rotary_factor", json_real(partial)) == 0;
    const char *type = json_string_value(json_object_get(compress, "rope_type"));
    if (ok && type && strcmp(type, "yarn") == 0 && !json_object_get(compress, "attention_factor"))
        ok = json_object_set_new(compress, "attention_factor", json_real(1.0)) == 0;
    json_t *main = json_is_number(theta) ? json_copy((json_t *)theta) : json_real(10000.0);
    if (!ok || !main) {
        json_decref(compress);
        json_decref(main);
        return false;
    }
    /* (json_pack takes its "o" references, failing or not) */
    json_t *rope = json_pack("{s:{s:s, s:o, s:f}, s:o}", "main", "rope_type", "default", "rope_theta", main,
                             "partial_rotary_factor", partial, "compress", compress);
    return rope && json_object_set_new(out, "rope_parameters", rope) == 0;
}

json_t *hfx_dec_derived_keys(const hfx_decoder_desc *d, hfx_cfg c) {
    json_t *out = json_object();
    bool ok = out != NULL;
    switch (d->derive) {
    case HFX_DERIVE_NONE: break;
    case HFX_DERIVE_LFM3: ok = ok && derive_list(c, "layer_types", lfm3_type, out); break;
    case HFX_DERIVE_COHERE2_MOE: {
        ok = ok && derive_list(c, "layer_types", cohere2_moe_type, out) &&
             derive_list(c, "mlp_layer_types", cohere2_moe_mlp, out);
        const json_t *width = json_object_get(c.obj, "intermediate_size"); /* the dense layers' when theirs is null */
        if (ok && absent(c, "prefix_dense_intermediate_size") && width)
            ok = json_object_set(out, "prefix_dense_intermediate_size", (json_t *)width) == 0;
        break;
    }
    case HFX_DERIVE_NEMOTRON_H: ok = ok && derive_nemotron_h(c, out); break;
    case HFX_DERIVE_OLMO_HYBRID: ok = ok && derive_olmo_hybrid(c, out); break;
    case HFX_DERIVE_RECURRENT_GEMMA: ok = ok && derive_recurrent_gemma(c, out); break;
    case HFX_DERIVE_ZAMBA2: ok = ok && derive_zamba2(c, out); break;
    case HFX_DERIVE_MINIMAX: ok = ok && derive_list(c, "layer_types", minimax_type, out); break;
    case HFX_DERIVE_LONGCAT: ok = ok && derive_longcat(c, out); break;
    case HFX_DERIVE_KIMI_LINEAR: ok = ok && derive_kimi_linear(c, out); break;
    case HFX_DERIVE_BAILING_HYBRID: ok = ok && derive_bailing_hybrid(c, out); break;
    case HFX_DERIVE_XLSTM: ok = ok && derive_xlstm(c, out); break;
    case HFX_DERIVE_DEEPSEEK_V32: ok = ok && json_object_set_new(out, "rope_interleave", json_true()) == 0; break;
    case HFX_DERIVE_AXK1: ok = ok && derive_list(c, "mlp_layer_types", axk1_mlp, out); break;
    case HFX_DERIVE_FLINT: ok = ok && derive_flint(c, out); break;
    case HFX_DERIVE_KOLIBRI: ok = ok && derive_list(c, "layer_types", kolibri_type, out); break;
    case HFX_DERIVE_DEEPSEEK_V4: ok = ok && derive_deepseek_v4(c, out); break;
    case HFX_DERIVE_QWEN4_EXP: ok = ok && derive_qwen4_exp(c, out); break;
    case HFX_DERIVE_AXK2:
        ok = ok && derive_list(c, "mlp_layer_types", axk1_mlp, out) &&
             json_object_set_new(out, "rope_interleave", json_true()) == 0;
        break;
    case HFX_DERIVE_MIMO_V2: { /* (the reference implementation attends to sliding_window_size tokens and the query) */
        const json_t *size = json_object_get(c.obj, "sliding_window_size");
        ok = ok && derive_list(c, "layer_types", mimo_v2_type, out) && derive_list(c, "mlp_layer_types", first_dense_mlp, out);
        if (ok && json_is_integer(size) && json_integer_value(size) >= 0 && json_integer_value(size) < INT32_MAX)
            ok = json_object_set_new(out, "sliding_window", json_integer(json_integer_value(size) + 1)) == 0;
        break;
    }
    }
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    return out;
}
