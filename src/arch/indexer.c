/* DeepSeek V3.2's lightning indexer (HFX_MLA_KEYS_INDEXED): which keys each query of a latent attention layer reads.
 * Its own small attention scores every visible key, index[s,t] = Σ_h w[s,h]·relu(q[s,h]·k[t]·D^-½) + the mask's bias,
 * and the query keeps the index_topk best; its keys [B,1,T,D] are cached beside the layer's latent. Without
 * data-dependent shapes: the scores are padded with index_topk −∞ columns, so TopK(index_topk) always has its k and
 * keeps every key while there are no more than that (latent attention as DeepSeek V3's), and the picks are scattered
 * into a mask. HY V4's and GLM-5's differ as `forms` says, and its "shared" layers run no indexer:
 * they read the last full layer's picks (layer_ctx.index_kept) and cache no keys of their own. */
#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "arch/rope.h"
#include "base/status.h"

/* Which layers share another's picks. */
typedef enum {
    SHARED_NONE,                 /* every layer its own indexer */
    SHARED_EVERY_FOURTH,         /* indexer_types; absent: full at layer 0 and every 4th from layer 1 (HY V4) */
    SHARED_PATTERN_OR_FREQUENCY  /* indexer_types; absent: index_topk_pattern ("FSSF…" or a list), else full where
                                    max(i − index_skip_topk_offset + 1, 0) is a multiple of index_topk_freq (2, 1: every
                                    layer) (GLM-5) */
} shared_rule;

/* How a lineage's indexer departs from DeepSeek V3.2's (hfx_mla_keys). */
typedef struct indexer_form {
    bool rotary_last;            /* the rotary on its heads' last qk_rope_head_dim dims (V3.2: the first) */
    bool rotary_pairs;           /* its rotary dims' pairs (0,1), (2,3), ... regrouped into halves first */
    bool eps_from_config;        /* its keys' LayerNorm at rms_norm_eps (V3.2: 1e-6, built without one) */
    shared_rule shared;
    int heads;                   /* index_n_heads when config.json has none (the config class's default) */
} indexer_form;

static const indexer_form forms[] = {
    [HFX_MLA_KEYS_INDEXED] = {false, false, false, SHARED_NONE, 64},
    [HFX_MLA_KEYS_INDEXED_ROTARY_LAST] = {true, false, true, SHARED_EVERY_FOURTH, 16},
    [HFX_MLA_KEYS_INDEXED_PAIRS] = {false, true, false, SHARED_PATTERN_OR_FREQUENCY, 32},
};
_Static_assert(sizeof forms / sizeof forms[0] == HFX_MLA_KEYS_INDEXED_PAIRS + 1, "a form for every indexed kind");

/* One layer's kind by name: "full" / "shared" (a list's), "F" / "S" (a pattern's). */
static hfx_status layer_kind(hfx_cfg c, const char *field, int64_t i, const char *t, hfx_decoder_cfg *m,
                             hfx_error *err) {
    bool full = t && (strcmp(t, "full") == 0 || strcmp(t, "F") == 0);
    bool shared = t && (strcmp(t, "shared") == 0 || strcmp(t, "S") == 0);
    if (!full && !shared)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s[%lld] must be \"full\" or \"shared\"", c.where, field,
                        (long long)i);
    if (shared && i == 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s makes layer 0 \"shared\": a shared layer reads the picks of an "
                                              "earlier full one", c.where, field);
    m->mla.index_shared[i] = shared;
    return HFX_OK;
}

/* index_topk_pattern's string or list, else the frequency and offset (GLM-5's config class's defaults). */
static hfx_status pattern_or_frequency(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *pattern = json_object_get(c.obj, "index_topk_pattern");
    hfx_status st;
    bool text = json_is_string(pattern) && (int64_t)json_string_length(pattern) >= m->layers;
    if (text || (json_is_array(pattern) && (int64_t)json_array_size(pattern) >= m->layers)) {
        for (int64_t i = 0; i < m->layers; i++) {
            char one[2] = {text ? json_string_value(pattern)[i] : 0, 0}; /* a string's i-th letter, or a list's item */
            const char *kind = text ? one : json_string_value(json_array_get(pattern, (size_t)i));
            if ((st = layer_kind(c, "index_topk_pattern", i, kind, m, err))) return st;
        }
        return HFX_OK;
    }
    if (pattern && !json_is_null(pattern))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: index_topk_pattern must be a string of F and S, or a list of \"full\" "
                                              "or \"shared\", one per layer (%lld)", c.where, (long long)m->layers);
    int64_t freq, offset;
    if ((st = hfx_cfg_int_in_or(c, "index_topk_freq", 1, INT32_MIN, INT32_MAX, &freq, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_skip_topk_offset", 2, INT32_MIN, INT32_MAX, &offset, err)))
        return st;
    if (freq < 1) freq = 1;
    for (int64_t i = 0; i < m->layers; i++) {
        int64_t k = i - offset + 1;
        if ((st = layer_kind(c, "index_topk_freq", i, (k > 0 ? k : 0) % freq == 0 ? "full" : "shared", m, err)))
            return st;
    }
    return HFX_OK;
}

/* Each layer full or shared: indexer_types, else the form's rule. */
static hfx_status parse_shared_layers(const indexer_form *f, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                      hfx_error *err) {
    if (!(m->mla.index_shared = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->mla.index_shared)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const json_t *types = json_object_get(c.obj, "indexer_types");
    hfx_status st;
    if (types && !json_is_null(types)) {
        if (!json_is_array(types) || (int64_t)json_array_size(types) < m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: indexer_types must be a list of \"full\" or \"shared\", one per "
                                                  "layer (%lld)", c.where, (long long)m->layers);
        for (int64_t i = 0; i < m->layers; i++)
            if ((st = layer_kind(c, "indexer_types", i, json_string_value(json_array_get(types, (size_t)i)), m, err)))
                return st;
        return HFX_OK;
    }
    if (f->shared == SHARED_PATTERN_OR_FREQUENCY) return pattern_or_frequency(c, m, err);
    for (int64_t i = 0; i < m->layers; i++) m->mla.index_shared[i] = !(i == 0 || (i - 1) % 4 == 0);
    return HFX_OK;
}

hfx_status hfx_dec_parse_indexer(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                 hfx_error *err) {
    const indexer_form *f = &forms[d->latent.keys];
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "index_n_heads", f->heads, 1, 4096, &m->mla.index_heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_head_dim", 128, 1, 4096, &m->mla.index_dim, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_topk", 2048, 1, 1 << 20, &m->mla.index_topk, err)))
        return st;
    if (m->mla.index_dim < m->mla.qk_rope)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: index_head_dim %lld is narrower than qk_rope_head_dim %lld (the "
                                              "indexer rotates that many of its dims)", c.where,
                        (long long)m->mla.index_dim, (long long)m->mla.qk_rope);
    if (!m->mla.q_lora)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: q_lora_rank must be set: the indexer's queries come from the "
                                              "queries' low-rank part", c.where);
    m->mla.index_eps = f->eps_from_config ? m->eps : 1e-6;
    return f->shared != SHARED_NONE ? parse_shared_layers(f, c, arena, m, err) : HFX_OK;
}

/* [A,B,n] of `value`, A and B x's first two axes (each its length read at run time, as the torch formats want an
 * expand's target). */
static hfx_value *filled(hfx_graph *g, hfx_value *x, hfx_dim n, hfx_value *n_value, double value) {
    hfx_value *parts[3] = {hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0), hfx_unsqueeze(g, hfx_dim_of(g, x, 1), 0),
                           hfx_unsqueeze(g, n_value, 0)};
    return hfx_expand(g, hfx_const_scalar(g, HFX_DTYPE_F32, value), hfx_concat(g, 3, parts, 0), 3,
                      (hfx_dim[]){x->dims[0], x->dims[1], n});
}

/* x [..., D] with the rotary on its first cos-width dims or on its last ones, their pairs regrouped into halves first
 * where the form says (the scores are dot products of queries and keys alike: the order of dims is free) */
static hfx_value *rotated(layer_ctx *c, hfx_value *x, hfx_value *cos, hfx_value *sin) {
    const indexer_form *f = &forms[c->d->latent.keys];
    hfx_graph *g = c->g;
    int64_t d = x->dims[x->rank - 1].c, r = cos->dims[cos->rank - 1].c, at = f->rotary_last ? d - r : 0;
    hfx_value *rot = hfx_slice(g, x, -1, at, at + r);
    if (f->rotary_pairs) rot = hfx_dec_pairs_to_halves(c, rot);
    rot = hfx_rope_apply(g, rot, cos, sin, false);
    if (r == d) return rot;
    hfx_value *pass = f->rotary_last ? hfx_slice(g, x, -1, 0, d - r) : hfx_slice(g, x, -1, r, d);
    hfx_value *parts[2] = {f->rotary_last ? pass : rot, f->rotary_last ? rot : pass};
    return hfx_concat(g, 2, parts, -1);
}

hfx_value *hfx_dec_top_keys(hfx_graph *g, hfx_value *index, int64_t K) {
    hfx_value *k = hfx_const_i64(g, K);
    hfx_value *cols[2] = {index, filled(g, index, hfx_dim_const(K), k, -INFINITY)};
    hfx_value *padded = hfx_concat(g, 2, cols, 2); /* [B,S,T+K] */
    hfx_value *values, *picks;
    hfx_top_k(g, padded, K, &values, &picks);   /* [B,S,K] */
    hfx_value *zeros = filled(g, padded, padded->dims[2], hfx_dim_of(g, padded, 2), 0.0);
    hfx_value *ones = filled(g, picks, hfx_dim_const(K), k, 1.0);
    hfx_value *hit = hfx_scatter_elements(g, zeros, picks, ones, 2); /* [B,S,T+K] */
    hfx_value *keys = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, index, 2), hfx_const_i64(g, 1), index->dims[2]);
    hit = hfx_gather(g, hit, keys, 2); /* [B,S,T]: the pad's columns dropped */
    return hfx_op2(g, HFX_OP_GREATER, hit, hfx_const_f32(g, 0.5f));
}

hfx_value *hfx_dec_indexed_bias(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *q_resid, hfx_value *cos,
                                hfx_value *sin, hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t NH = m->mla.index_heads, D = m->mla.index_dim, H = m->hidden;
    char p[160];
    if (m->mla.index_shared && m->mla.index_shared[i]) /* the last full layer's picks (parse: layer 0 is one) */
        return c->index_kept ? hfx_where(g, c->index_kept, bias, hfx_const_f32(g, -FLT_MAX)) : bias;
    if (hfx_dec_seed_profile(c)) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" has no names for the indexer's key cache yet; export "
                                               "with io \"optimum\"", c->d->architecture);
        return bias;
    }
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *q = hfx_dec_proj(c, q_resid, m->mla.q_lora, NH * D, false, P("indexer.wq_b"));
    q = rotated(c, hfx_dec_to_bhsd(c, hfx_dec_split_heads(c, q, NH, D)), cos, sin); /* [B,NH,S,D] */
    hfx_value *k = hfx_dec_proj(c, h, H, D, false, P("indexer.wk"));                        /* [B,S,D] */
    hfx_value *kw = hfx_weight(c->w, 1, &D, "%s.weight", P("indexer.k_norm"));
    k = hfx_layer_norm(g, k, kw, hfx_weight(c->w, 1, &D, "%s.bias", P("indexer.k_norm")), m->mla.index_eps);
    k = hfx_dec_kv_cache(c, i, rotated(c, hfx_unsqueeze(g, k, 1), cos, sin), 2);      /* [B,1,T,D] */
    hfx_value *kt = hfx_transpose(g, hfx_cast(g, k, HFX_DTYPE_F32), 4, (int64_t[]){0, 1, 3, 2});
    hfx_value *scores = hfx_op2(g, HFX_OP_MATMUL, hfx_cast(g, q, HFX_DTYPE_F32), kt);           /* [B,NH,S,T] */
    scores = hfx_activate(g, HFX_ACT_RELU, hfx_op2(g, HFX_OP_MUL, scores, hfx_const_f32(g, (float)pow((double)D, -0.5))));
    hfx_value *w = hfx_cast(g, hfx_dec_proj(c, h, H, NH, false, P("indexer.weights_proj")), HFX_DTYPE_F32);
    w = hfx_op2(g, HFX_OP_MUL, w, hfx_const_f32(g, (float)pow((double)NH, -0.5)));           /* [B,S,NH] */
#undef P
    hfx_value *index = hfx_op2(g, HFX_OP_MATMUL, hfx_unsqueeze(g, w, 2),
                               hfx_transpose(g, scores, 4, (int64_t[]){0, 2, 1, 3}));          /* [B,S,1,T] */
    hfx_dim T = k->dims[2];
    index = hfx_reshape(g, index, 3, (hfx_dim[]){c->batch, c->seq, T});
    index = hfx_op2(g, HFX_OP_ADD, index, hfx_reshape(g, bias, 3, (hfx_dim[]){c->batch, c->seq, T}));
    hfx_value *kept = c->index_kept = hfx_unsqueeze(g, hfx_dec_top_keys(g, index, m->mla.index_topk), 1); /* [B,1,S,T] */
    return hfx_where(g, kept, bias, hfx_const_f32(g, -FLT_MAX));
}
