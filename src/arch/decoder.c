/* The decoder-only template: config parsing and the forward graph. */
#include "arch/decoder.h"

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
    if ((st = hfx_cfg_int_or(c, "sliding_window", 0, &window, err))) return st;
    if ((st = hfx_cfg_check_range(c, "sliding_window", window, 0, INT32_MAX, err))) return st;
    if (d->sliding == HFX_SLIDING_ALL) {
        for (int64_t i = 0; i < m->layers; i++) m->window[i] = window;
        return HFX_OK;
    }
    /* HFX_SLIDING_LAYER_TYPES: explicit layer_types win; otherwise transformers derives them */
    bool use_sliding;
    if ((st = hfx_cfg_bool_or(c, "use_sliding_window", false, &use_sliding, err))) return st;
    if (!use_sliding) window = 0;
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (types && !json_is_null(types)) {
        if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) strings",
                            c.where, (long long)m->layers);
        for (int64_t i = 0; i < m->layers; i++) {
            const char *t = json_string_value(json_array_get(types, (size_t)i));
            if (t && strcmp(t, "full_attention") == 0) m->window[i] = 0;
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
    int64_t max_window_layers;
    if ((st = hfx_cfg_int_or(c, "max_window_layers", 28, &max_window_layers, err))) return st;
    for (int64_t i = 0; i < m->layers; i++) m->window[i] = window > 0 && i >= max_window_layers ? window : 0;
    return HFX_OK;
}

static hfx_status decoder_parse(const void *desc_, const hfx_checkpoint *ck, hfx_arena *arena,
                                void **out, hfx_error *err) {
    const hfx_decoder_desc *d = desc_;
    char where[1100];
    snprintf(where, sizeof where, "%s/config.json", hfx_checkpoint_dir(ck));
    hfx_cfg c = {hfx_checkpoint_config(ck), where};
    hfx_decoder_cfg *m = hfx_arena_alloc(arena, sizeof *m);
    if (!m) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st;
    if ((st = hfx_cfg_int(c, "vocab_size", &m->vocab, err)) ||
        (st = hfx_cfg_check_range(c, "vocab_size", m->vocab, 1, INT32_MAX, err)) ||
        (st = hfx_cfg_int(c, "hidden_size", &m->hidden, err)) ||
        (st = hfx_cfg_check_range(c, "hidden_size", m->hidden, 1, 1 << 20, err)) ||
        (st = hfx_cfg_int(c, "num_hidden_layers", &m->layers, err)) ||
        (st = hfx_cfg_check_range(c, "num_hidden_layers", m->layers, 1, 4096, err)) ||
        (st = hfx_cfg_int(c, "num_attention_heads", &m->heads, err)) ||
        (st = hfx_cfg_check_range(c, "num_attention_heads", m->heads, 1, 4096, err)) ||
        (st = hfx_cfg_int_or(c, "num_key_value_heads", m->heads, &m->kv_heads, err)) ||
        (st = hfx_cfg_check_range(c, "num_key_value_heads", m->kv_heads, 1, m->heads, err)) ||
        (st = hfx_cfg_int(c, "intermediate_size", &m->intermediate, err)) ||
        (st = hfx_cfg_check_range(c, "intermediate_size", m->intermediate, 1, 1 << 24, err)) ||
        (st = hfx_cfg_int_or(c, "max_position_embeddings", 2048, &m->max_position, err)) ||
        (st = hfx_cfg_check_range(c, "max_position_embeddings", m->max_position, 1, INT32_MAX, err)) ||
        (st = hfx_cfg_num_or(c, "rms_norm_eps", 1e-6, &m->eps, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", false, &m->tied, err)))
        return st;
    if (m->heads % m->kv_heads)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s: num_attention_heads (%lld) is not a multiple of num_key_value_heads (%lld)",
                        where, (long long)m->heads, (long long)m->kv_heads);
    if (!(m->eps > 0 && m->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: rms_norm_eps %g out of range", where, m->eps);
    int64_t dflt_head_dim = m->hidden / m->heads;
    if ((st = hfx_cfg_int_or(c, "head_dim", dflt_head_dim, &m->head_dim, err)) ||
        (st = hfx_cfg_check_range(c, "head_dim", m->head_dim, 2, 4096, err)))
        return st;

    const char *act;
    if ((st = hfx_cfg_str_or(c, "hidden_act", "silu", &act, err))) return st;
    if (strcmp(act, "silu") != 0 && strcmp(act, "swish") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "%s: hidden_act '%s' is not supported for %s (supported: silu)", where,
                        act, d->architecture);

    bool attention_bias = false, mlp_bias = false;
    if (d->attn_bias == HFX_BIAS_FROM_CONFIG &&
        (st = hfx_cfg_bool_or(c, "attention_bias", false, &attention_bias, err)))
        return st;
    if (d->mlp_bias_from_config && (st = hfx_cfg_bool_or(c, "mlp_bias", false, &mlp_bias, err)))
        return st;
    m->q_bias = m->k_bias = m->v_bias = attention_bias || d->attn_bias == HFX_BIAS_QKV;
    m->o_bias = attention_bias;
    m->mlp_bias = mlp_bias;

    m->window = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->window);
    if (!m->window) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if ((st = parse_sliding(d, c, m, err))) return st;
    if ((st = hfx_rope_parse(c, m->head_dim, m->max_position, arena, &m->rope, err))) return st;
    *out = m;
    return HFX_OK;
}

/* ---- the graph ---- */

typedef struct layer_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const hfx_decoder_desc *d;
    const hfx_decoder_cfg *m;
    const hfx_build_opts *o;
    hfx_dim batch, seq;
    hfx_value *cache_position;  /* static cache: [S] slots written this step */
    hfx_value **cache_out;      /* (layers, 2): key and value cache outputs, named at the end */
} layer_ctx;

/* Join this step's k or v [B,KV,S,D] with the layer's cache, per docs/GENERATION.md; returns
 * what attention reads and records the cache output. `which` is "key" or "value". */
static hfx_value *with_cache(layer_ctx *c, int64_t i, hfx_value *x, const char *which, int slot) {
    const hfx_build_opts *o = c->o;
    if (o->cache == HFX_CACHE_NONE) return x;
    char name[128];
    hfx_dim kv = hfx_dim_const(c->m->kv_heads), hd = x->dims[3];
    if (o->cache == HFX_CACHE_DYNAMIC) {
        if (o->has_past) {
            snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, which);
            hfx_value *past = hfx_graph_input(c->g, name, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->past, hd});
            hfx_value *parts[2] = {past, x};
            x = hfx_concat(c->g, 2, parts, 2);
        }
    } else {
        snprintf(name, sizeof name, "input.past_key_values.%lld.%s", (long long)i, which);
        hfx_value *cache = hfx_graph_input(c->g, name, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->max_cache, hd});
        x = hfx_cache_write(c->g, cache, x, c->cache_position);
    }
    c->cache_out[2 * i + slot] = x;
    return x;
}

/* x [B,S,in] → [B,S,out] through `<prefix>.weight` [out,in] (+ `<prefix>.bias` [out]). */
static hfx_value *proj(layer_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias,
                       const char *prefix) {
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){out, in}, "%s.weight", prefix);
    hfx_value *b = bias ? hfx_weight(c->w, 1, &out, "%s.bias", prefix) : NULL;
    return hfx_linear(c->g, x, w, b);
}

/* [B,S,n·d] → [B,n,S,d] */
static hfx_value *split_heads(layer_ctx *c, hfx_value *x, int64_t n, int64_t d) {
    hfx_dim dims[4] = {c->batch, c->seq, hfx_dim_const(n), hfx_dim_const(d)};
    return hfx_reshape(c->g, x, 4, dims);
}

static hfx_value *to_bhsd(layer_ctx *c, hfx_value *x) {
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

static hfx_value *attention_block(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos,
                                  hfx_value *sin, hfx_value *bias) {
    int64_t window = c->m->window[i];
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t hd = m->head_dim;
    char p[160];
#define P(name) (snprintf(p, sizeof p, "model.layers.%lld.self_attn.%s", (long long)i, name), p)
    hfx_value *q = split_heads(c, proj(c, h, m->hidden, m->heads * hd, m->q_bias, P("q_proj")), m->heads, hd);
    hfx_value *k = split_heads(c, proj(c, h, m->hidden, m->kv_heads * hd, m->k_bias, P("k_proj")), m->kv_heads, hd);
    hfx_value *v = split_heads(c, proj(c, h, m->hidden, m->kv_heads * hd, m->v_bias, P("v_proj")), m->kv_heads, hd);
    if (c->d->qk_norm) { /* RMSNorm over head_dim, per head, before rotary */
        q = hfx_rms_norm(g, q, hfx_weight(c->w, 1, &hd, "%s.weight", P("q_norm")), m->eps, 0);
        k = hfx_rms_norm(g, k, hfx_weight(c->w, 1, &hd, "%s.weight", P("k_norm")), m->eps, 0);
    }
    q = hfx_rope_apply(g, to_bhsd(c, q), cos, sin);
    k = with_cache(c, i, hfx_rope_apply(g, to_bhsd(c, k), cos, sin), "key", 0);
    v = with_cache(c, i, to_bhsd(c, v), "value", 1);
    hfx_value *a = hfx_attention(g, q, k, v, bias, 1.0 / sqrt((double)hd), 0, window); /* [B,H,S,hd] */
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->heads * hd)});
    return proj(c, a, m->heads * hd, m->hidden, m->o_bias, P("o_proj"));
#undef P
}

static hfx_value *mlp_block(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    char p[160];
#define P(name) (snprintf(p, sizeof p, "model.layers.%lld.mlp.%s", (long long)i, name), p)
    hfx_value *gate = proj(c, h, m->hidden, m->intermediate, m->mlp_bias, P("gate_proj"));
    hfx_value *up = proj(c, h, m->hidden, m->intermediate, m->mlp_bias, P("up_proj"));
    hfx_value *act = hfx_op2(c->g, HFX_OP_MUL, gate, hfx_op1(c->g, HFX_OP_SIGMOID, gate)); /* silu */
    return proj(c, hfx_op2(c->g, HFX_OP_MUL, act, up), m->intermediate, m->hidden, m->mlp_bias, P("down_proj"));
#undef P
}

static hfx_status decoder_build_forward(const void *desc_, const void *cfg_,
                                        const hfx_checkpoint *ck, const hfx_build_opts *o,
                                        hfx_graph *g, hfx_error *err) {
    const hfx_decoder_desc *d = desc_;
    const hfx_decoder_cfg *m = cfg_;
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    hfx_value **cache_out = calloc((size_t)m->layers * 2 + 1, sizeof *cache_out);
    if (!cache_out) {
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    layer_ctx c = {g, &w, d, m, o, o->batch, o->seq, NULL, cache_out};

    /* attention_mask spans what attention sees: the prompt, the past plus the new tokens, or the
     * static cache's M slots */
    hfx_dim mask_len = o->seq;
    if (o->cache == HFX_CACHE_STATIC) mask_len = o->max_cache;
    else if (o->cache == HFX_CACHE_DYNAMIC && o->has_past) {
        bool ok;
        mask_len = hfx_dim_add(o->past, o->seq, &ok);
    }
    hfx_dim bs[2] = {o->batch, o->seq};
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *attn_mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, mask_len});
    hfx_value *pos = hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *slots;
    if (o->cache == HFX_CACHE_STATIC) {
        c.cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &o->seq);
        slots = c.cache_position;
    } else {
        slots = hfx_mask_slots_after_past(g, attn_mask, o->seq, hfx_dim_of(g, ids, 1));
    }

    hfx_value *embed = hfx_weight(&w, 2, (int64_t[]){m->vocab, m->hidden}, "model.embed_tokens.weight");
    hfx_value *x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden] */

    hfx_value *cos, *sin;
    hfx_rope_cos_sin(g, &m->rope, pos, o->dtype, &cos, &sin);
    hfx_mask_builder mb;
    hfx_mask_init(g, &mb, attn_mask, slots);
    hfx_value *full_bias = NULL, *window_bias = NULL;
    int64_t bias_window = -1;

    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        hfx_value *bias;
        if (m->window[i] == 0) {
            if (!full_bias) full_bias = hfx_mask_bias(g, &mb, 0);
            bias = full_bias;
        } else {
            if (bias_window != m->window[i]) { /* one window size per model in practice */
                window_bias = hfx_mask_bias(g, &mb, m->window[i]);
                bias_window = m->window[i];
            }
            bias = window_bias;
        }
        hfx_value *ln1 = hfx_weight(&w, 1, &m->hidden, "model.layers.%lld.input_layernorm.weight", (long long)i);
        hfx_value *ln2 = hfx_weight(&w, 1, &m->hidden, "model.layers.%lld.post_attention_layernorm.weight", (long long)i);
        x = hfx_op2(g, HFX_OP_ADD, x, attention_block(&c, i, hfx_rms_norm(g, x, ln1, m->eps, 0), cos, sin, bias));
        x = hfx_op2(g, HFX_OP_ADD, x, mlp_block(&c, i, hfx_rms_norm(g, x, ln2, m->eps, 0)));
    }
    if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX); /* [B,1,hidden]: transformers' logits_to_keep=1 */
    hfx_value *norm = hfx_weight(&w, 1, &m->hidden, "model.norm.weight");
    x = hfx_rms_norm(g, x, norm, m->eps, 0);
    hfx_value *head;
    if (m->tied) {
        head = embed;
        hfx_weight_ignore(&w, "lm_head.weight"); /* transformers ties it to the embeddings */
    } else {
        head = hfx_weight(&w, 2, (int64_t[]){m->vocab, m->hidden}, "lm_head.weight");
    }
    hfx_graph_output(g, hfx_linear(g, x, head, NULL), "logits");
    for (int64_t i = 0; i < m->layers && o->cache != HFX_CACHE_NONE && !g->failed; i++) {
        for (int kv = 0; kv < 2; kv++) {
            char name[128];
            snprintf(name, sizeof name, "%spast_key_values.%lld.%s",
                     o->cache == HFX_CACHE_STATIC ? "output." : "", (long long)i, kv ? "value" : "key");
            if (o->cache == HFX_CACHE_DYNAMIC)
                snprintf(name, sizeof name, "present.%lld.%s", (long long)i, kv ? "value" : "key");
            hfx_graph_output(g, cache_out[2 * i + kv], name);
        }
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);

    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    free(cache_out);
    return st;
}

static int decoder_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const hfx_decoder_cfg *m = cfg_;
    for (int64_t i = 0; i < m->layers && i < max; i++)
        layers[i] = (hfx_layer_cache){m->kv_heads, m->head_dim, m->head_dim, m->window[i]};
    return (int)m->layers;
}

const hfx_arch_family hfx_decoder_family = {decoder_parse, decoder_build_forward, decoder_cache_layers};
