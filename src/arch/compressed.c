/* DeepSeek V4's attention (HFX_ATTN_COMPRESSED). One key head that is also the value (K = V), normed and turned by the
 * rotary on the last rotary dims of each head (pairs); the queries a low-rank projection, each head normed without a
 * weight; learned sinks; the output turned back by the rotary, then a grouped low-rank projection. Every layer
 * attends within sliding_window; a compressed layer also attends to entries that each pool a window of compress_rate
 * raw tokens (padding counted): a heavily compressed layer's (HCA) pool one window each, a sparse one's (CSA) a window
 * and the first series of the one before, and each query keeps those an indexer of its own entries scores highest.
 *
 * transformers' cache buffers the raw projections of an unfinished window and emits an entry as each one fills. A
 * graph has no such state machine, so hfx's cache keeps every token's raw projections (the values' slot: the
 * compressor's, the index keys' slot: the indexer's; a window-only layer's values are its keys) and each call pools
 * every complete window again: the same entries, from the same tokens at the same positions. The entries axis is
 * T / rate + 1 long (a symbol derived from T's, hfx_graph_symbol_derived), its last entry never complete, so that it
 * is never empty; incomplete ones are hidden from every query. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "arch/rope.h"
#include "base/status.h"

/* layer_types' names, by kind */
static const char *const kind_names[] = {[HFX_KV_WINDOW] = "sliding_attention",
                                         [HFX_KV_HEAVY] = "heavily_compressed_attention",
                                         [HFX_KV_SPARSE] = "compressed_sparse_attention"};

/* compress_rates: {"compressed_sparse_attention": m, "heavily_compressed_attention": m'} (absent: 4 and 128). */
static hfx_status parse_rates(hfx_cfg c, hfx_decoder_compressed *k, hfx_error *err) {
    const json_t *rates = json_object_get(c.obj, "compress_rates");
    k->sparse_rate = 4, k->heavy_rate = 128;
    if (!rates || json_is_null(rates)) return HFX_OK;
    if (!json_is_object(rates))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'compress_rates' must be an object of rates by layer type", c.where);
    hfx_cfg in = {rates, c.where};
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(in, kind_names[HFX_KV_SPARSE], 4, 1, 1 << 16, &k->sparse_rate, err)) ||
        (st = hfx_cfg_int_in_or(in, kind_names[HFX_KV_HEAVY], 128, 1, 1 << 16, &k->heavy_rate, err)))
        return st;
    return HFX_OK;
}

/* Each layer's kind from layer_types (the view's: decoder_derived.c fills it in from compress_ratios or the default). */
static hfx_status parse_kinds(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layer_types' must be a list of num_hidden_layers (%lld) strings",
                        c.where, (long long)m->layers);
    if (!(m->compressed.kind = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->compressed.kind)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) {
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        int k = 0;
        while (k < 3 && !(t && strcmp(t, kind_names[k]) == 0)) k++;
        if (k == 3)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: layer_types[%lld] = '%s' (supported: sliding_attention, "
                                                  "compressed_sparse_attention, heavily_compressed_attention)",
                            c.where, (long long)i, t ? t : "(not a string)");
        m->compressed.kind[i] = (hfx_kv_compression)k;
    }
    return HFX_OK;
}

hfx_status hfx_dec_parse_compressed(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                    hfx_error *err) {
    (void)d;
    hfx_decoder_compressed *k = &m->compressed;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "q_lora_rank", 1024, 1, 1 << 20, &k->q_lora, err)) ||
        (st = hfx_cfg_int_in_or(c, "o_groups", 8, 1, 4096, &k->groups, err)) ||
        (st = hfx_cfg_int_in_or(c, "o_lora_rank", 1024, 1, 1 << 20, &k->group_rank, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_n_heads", 64, 1, 4096, &k->index_heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_head_dim", 128, 1, 4096, &k->index_dim, err)) ||
        (st = hfx_cfg_int_in_or(c, "index_topk", 512, 1, 1 << 20, &k->index_topk, err)) ||
        (st = parse_rates(c, k, err)) || (st = parse_kinds(c, arena, m, err)))
        return st;
    if ((m->heads * m->head_dim) % k->groups)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_attention_heads · head_dim (%lld) is not a multiple of o_groups (%lld)",
                        c.where, (long long)(m->heads * m->head_dim), (long long)k->groups);
    m->kv_heads = 1; /* (one key head whatever num_key_value_heads says: the class never reads it) */
    /* two rotaries: "main" for the window-only layers, "compress" (its own base, YaRN where given) for the others, their
     * compressors and indexers; both on int(head_dim · partial_rotary_factor) dims */
    hfx_rope_source main = {.layer_type = "main", .default_theta = 10000.0, .theta_key = "rope_theta", .partial = true,
                            .default_partial = 0.125, .partial_key = "partial_rotary_factor"};
    hfx_rope_source compress = {.layer_type = "compress", .default_theta = 160000.0, .theta_key = "compress_rope_theta",
                                .scaling = true, .partial = true, .default_partial = 0.125,
                                .partial_key = "partial_rotary_factor"};
    hfx_rope comp;
    if ((st = hfx_rope_parse(c, &main, m->head_dim, m->max_position, arena, &m->rope, err)) ||
        (st = hfx_rope_parse(c, &compress, m->head_dim, m->max_position, arena, &comp, err)))
        return st;
    m->rope.interleaved = comp.interleaved = true;
    if (comp.dim != m->rope.dim || comp.dim % 2 || comp.dim > k->index_dim)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the rotary dims (%lld, int(head_dim · partial_rotary_factor)) must be "
                                              "even, the same in rope_parameters' main and compress, and no more than "
                                              "index_head_dim (%lld)", c.where, (long long)comp.dim,
                        (long long)k->index_dim);
    if (!(m->layer_rope = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *m->layer_rope)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) m->layer_rope[i] = k->kind[i] == HFX_KV_WINDOW ? m->rope : comp;
    return HFX_OK;
}

/* x [B,H,S,D] with its last r dims turned by cos, sin [.., S, r] (pairs), the first D − r as they are. */
static hfx_value *rotated_last(hfx_graph *g, hfx_value *x, hfx_value *cos, hfx_value *sin) {
    int64_t d = x->dims[3].c, r = cos->dims[cos->rank - 1].c;
    hfx_value *rot = hfx_rope_apply(g, hfx_slice(g, x, -1, d - r, d), cos, sin, true);
    if (r == d) return rot;
    hfx_value *parts[2] = {hfx_slice(g, x, -1, 0, d - r), rot};
    return hfx_concat(g, 2, parts, -1);
}

/* [E, rate] i64: window e's raw slots e·rate + r, `back` windows earlier, clamped into [0, T) (the windows before the
 * first and past the last are never seen: their gates are −∞, or their entry hidden). */
static hfx_value *window_slots(hfx_graph *g, hfx_value *entries, int64_t rate, int64_t back, hfx_value *t_len) {
    int64_t shape[2] = {1, rate};
    int64_t *offsets = hfx_arena_alloc(g->arena, (size_t)rate * sizeof *offsets);
    if (!offsets) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_i64(g, 0);
    }
    for (int64_t r = 0; r < rate; r++) offsets[r] = r - back * rate;
    hfx_value *slots = hfx_op2(g, HFX_OP_ADD, hfx_unsqueeze(g, hfx_op2(g, HFX_OP_MUL, entries, hfx_const_i64(g, rate)), 1),
                               hfx_const_bytes(g, HFX_DTYPE_I64, 2, shape, offsets));
    slots = hfx_op2(g, HFX_OP_MAX, slots, hfx_const_i64(g, 0));
    return hfx_op2(g, HFX_OP_MIN, slots, hfx_op2(g, HFX_OP_SUB, t_len, hfx_const_i64(g, 1)));
}

/* What one compressor pools. */
typedef struct pool {
    int64_t rate, width;   /* the window's raw tokens; an entry's width (each series') */
    bool overlap;          /* CSA's: two series, the entry over its window's second and the one before's first */
    const char *prefix;    /* "<attn>.compressor" or "<attn>.compressor.indexer" */
} pool;

/* A layer's windows, the same for its compressor and its indexer: entries [E] i64 (0, 1, ..., E − 1), each one's raw
 * slots [E, rate] and the window before's (CSA's: NULL for HCA), and the rotary at each one's start [1,1,E,r]. */
typedef struct windows {
    hfx_value *entries, *now, *before, *cos, *sin;
} windows;

static windows windows_of(layer_ctx *c, hfx_value *entries, int64_t rate, bool overlap, hfx_value *t_len,
                          const hfx_rope *rope) {
    hfx_graph *g = c->g;
    windows w = {entries, window_slots(g, entries, rate, 0, t_len), overlap ? window_slots(g, entries, rate, 1, t_len) : NULL,
                 NULL, NULL};
    hfx_value *at = hfx_unsqueeze(g, hfx_op2(g, HFX_OP_MUL, entries, hfx_const_i64(g, rate)), 0); /* [1,E] */
    hfx_rope_cos_sin(g, rope, at, c->o->dtype, &w.cos, &w.sin);
    return w;
}

/* The entries [B,1,E,width] of raw [B,1,T,2·series] (each token's kv then its gate, as projected; a series is `width`,
 * CSA's two of them): for entry e the softmax over the window's tokens of gate + position_bias weighs their kv (each
 * channel its own, in f32), CSA's over the window's second series and the one before's first (none before window 0);
 * then kv_norm, then the rotary at position e·rate. */
static hfx_value *pooled(layer_ctx *c, const pool *p, hfx_value *raw, const windows *win) {
    hfx_graph *g = c->g;
    int64_t W = p->width, R = p->rate, series = p->overlap ? 2 * W : W;
    hfx_value *entries = win->entries;
    char name[224];
    snprintf(name, sizeof name, "%s.position_bias", p->prefix);
    hfx_value *bias = hfx_weight_f32(c->w, 2, (int64_t[]){R, series}, name); /* (f32 in transformers' model too) */
    hfx_value *now = hfx_gather(g, raw, win->now, 2); /* [B,1,E,R,2·series] */
    hfx_value *kv = hfx_slice(g, now, -1, p->overlap ? W : 0, series);
    hfx_value *gate = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, hfx_slice(g, now, -1, series + (p->overlap ? W : 0), 2 * series),
                                                      HFX_DTYPE_F32),
                              hfx_const_slice(g, bias, 1, p->overlap ? W : 0, W));
    if (p->overlap) { /* the window before's first series, first: [B,1,E,2R,W] */
        hfx_value *before = hfx_gather(g, raw, win->before, 2);
        hfx_value *first = hfx_op2(g, HFX_OP_EQUAL, entries, hfx_const_i64(g, 0)); /* [E] */
        hfx_value *bgate = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, hfx_slice(g, before, -1, series, series + W), HFX_DTYPE_F32),
                                   hfx_const_slice(g, bias, 1, 0, W));
        bgate = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, first, -1), -1), hfx_const_f32(g, -INFINITY), bgate);
        hfx_value *kvs[2] = {hfx_slice(g, before, -1, 0, W), kv}, *gates[2] = {bgate, gate};
        kv = hfx_concat(g, 2, kvs, 3), gate = hfx_concat(g, 2, gates, 3);
    }
    int64_t axis = 3;
    hfx_value *weights = hfx_cast(g, hfx_softmax(g, gate, 3), kv->dtype);
    hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, kv, weights), 1, &axis); /* [B,1,E,1,W] */
    sum = hfx_reshape(g, sum, 4, (hfx_dim[]){c->batch, hfx_dim_const(1), entries->dims[0], hfx_dim_const(W)});
    snprintf(name, sizeof name, "%s.kv_norm", p->prefix);
    sum = hfx_dec_norm(c, sum, W, name);
    return rotated_last(g, sum, win->cos, win->sin);
}

/* [B,S,E] bool: entry e's window ends before query s — e < (position + 1) / rate, transformers' causal limit. */
static hfx_value *before_query(layer_ctx *c, hfx_value *entries, int64_t rate) {
    hfx_graph *g = c->g;
    hfx_value *limit = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, c->positions, hfx_const_i64(g, 1)), hfx_const_i64(g, rate));
    return hfx_op2(g, HFX_OP_LESS, hfx_unsqueeze(g, hfx_unsqueeze(g, entries, 0), 0), hfx_unsqueeze(g, limit, -1));
}

/* [1,1,E] bool: entry e's window complete, (e + 1)·rate ≤ the raw tokens seen (the others are not entries yet). */
static hfx_value *complete_windows(hfx_graph *g, hfx_value *entries, int64_t rate, hfx_value *seen) {
    hfx_value *e = hfx_unsqueeze(g, hfx_unsqueeze(g, entries, 0), 0);
    hfx_value *end = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, e, hfx_const_i64(g, 1)), hfx_const_i64(g, rate));
    return hfx_op2(g, HFX_OP_LESS_EQUAL, end, seen);
}

/* The bias [B,1,S,E] hiding entry e from query s: where it is not complete, and where it is not before the query
 * (before_query) — HCA's only when the call has more than one token, as transformers builds its block bias; CSA's
 * where the indexer does not keep it. */
static hfx_value *entries_bias(layer_ctx *c, hfx_value *complete, hfx_value *causal, hfx_value *kept_by) {
    hfx_graph *g = c->g;
    hfx_value *visible;
    if (kept_by) {
        visible = hfx_op2(g, HFX_OP_AND, kept_by, causal);
    } else { /* HCA: the causal limit only where S > 1 */
        hfx_value *one_token = hfx_op2(g, HFX_OP_EQUAL, hfx_dim_of(g, c->positions, 1), hfx_const_i64(g, 1));
        visible = hfx_op2(g, HFX_OP_OR, causal, one_token);
    }
    visible = hfx_op2(g, HFX_OP_AND, visible, complete);
    return hfx_unsqueeze(g, hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX)), 1);
}

/* The indexer's picks [B,S,E] bool: each query's index_topk entries of its own compressor, among those it may see
 * (`allowed`: complete, and before it), that score highest: Σ_h w[s,h]·relu(q[s,h]·k[e])·D^-½, w = weights_proj(h)
 * ·heads^-½, its queries from the queries' low-rank part. */
static hfx_value *indexed(layer_ctx *c, hfx_value *h, hfx_value *q_resid, hfx_value *cos, hfx_value *sin,
                          hfx_value *keys, hfx_value *allowed, const char *prefix) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t NH = m->compressed.index_heads, D = m->compressed.index_dim;
    char p[224];
#define P(leaf) (snprintf(p, sizeof p, "%s.%s", prefix, leaf), p)
    hfx_value *q = hfx_dec_proj(c, q_resid, m->compressed.q_lora, NH * D, false, P("q_b_proj"));
    q = rotated_last(g, hfx_dec_to_bhsd(c, hfx_dec_split_heads(c, q, NH, D)), cos, sin);       /* [B,NH,S,D] */
    hfx_value *kt = hfx_transpose(g, hfx_cast(g, keys, HFX_DTYPE_F32), 4, (int64_t[]){0, 1, 3, 2}); /* [B,1,D,E] */
    hfx_value *scores = hfx_op2(g, HFX_OP_MATMUL, hfx_cast(g, q, HFX_DTYPE_F32), kt);             /* [B,NH,S,E] */
    scores = hfx_op2(g, HFX_OP_MUL, hfx_activate(g, HFX_ACT_RELU, scores), hfx_const_f32(g, (float)pow((double)D, -0.5)));
    hfx_value *w = hfx_cast(g, hfx_dec_proj(c, h, m->hidden, NH, false, P("scorer.weights_proj")), HFX_DTYPE_F32);
    w = hfx_op2(g, HFX_OP_MUL, w, hfx_const_f32(g, (float)pow((double)NH, -0.5)));               /* [B,S,NH] */
#undef P
    int64_t heads = 2;
    hfx_value *index = hfx_op2(g, HFX_OP_MUL, hfx_transpose(g, scores, 4, (int64_t[]){0, 2, 1, 3}), hfx_unsqueeze(g, w, -1));
    index = hfx_reduce(g, HFX_OP_REDUCE_SUM, index, 1, &heads); /* [B,S,1,E] */
    hfx_dim E = keys->dims[2];
    index = hfx_reshape(g, index, 3, (hfx_dim[]){c->batch, c->seq, E});
    index = hfx_where(g, allowed, index, hfx_const_f32(g, -INFINITY)); /* (the others never kept: picked last, or not) */
    return hfx_dec_top_keys(g, index, m->compressed.index_topk);
}

/* The query heads' grouped low-rank output: a [B,S,H·D] in G groups, each through its own block of o_a_proj
 * [G·R, H·D/G], then o_b_proj [hidden, G·R]. */
static hfx_value *grouped_out(layer_ctx *c, int64_t i, hfx_value *a) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t G = m->compressed.groups, R = m->compressed.group_rank, in = m->heads * m->head_dim / G;
    char p[192];
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){G * R, in}, "%s.weight", hfx_dec_name(c, i, c->n.attn, "o_a_proj", p, sizeof p));
    w = hfx_const_permute(g, hfx_const_split_rows(g, w, G), (int64_t[]){0, 2, 1}); /* [G, in, R] */
    hfx_value *x = hfx_reshape(g, a, 5, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(G), hfx_dim_const(1), hfx_dim_const(in)});
    x = hfx_op2(g, HFX_OP_MATMUL, x, w);                                                     /* [B,S,G,1,R] */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(G * R)});
    return hfx_dec_proj(c, x, G * R, m->hidden, false, hfx_dec_name(c, i, c->n.attn, "o_b_proj", p, sizeof p));
}

/* [B,1,S,2w]: a compressor's raw projections of h, kv then gate, each w wide. */
static hfx_value *raw_projections(layer_ctx *c, hfx_value *h, int64_t w, const char *prefix) {
    char p[224];
    snprintf(p, sizeof p, "%s.kv_proj", prefix);
    hfx_value *kv = hfx_dec_proj(c, h, c->m->hidden, w, false, p);
    snprintf(p, sizeof p, "%s.gate_proj", prefix);
    hfx_value *parts[2] = {kv, hfx_dec_proj(c, h, c->m->hidden, w, false, p)};
    return hfx_unsqueeze(c->g, hfx_concat(c->g, 2, parts, -1), 1);
}

hfx_value *hfx_dec_compressed_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                        hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_compressed *k = &m->compressed;
    hfx_graph *g = c->g;
    int64_t H = m->heads, D = m->head_dim;
    hfx_kv_compression kind = k->kind[i];
    char p[192];
    if (hfx_dec_seed_profile(c)) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" has no names for the compressors' caches; export with io "
                                               "\"optimum\"", c->d->architecture);
        return h;
    }
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    /* (one name buffer: a statement per name) */
    hfx_value *q_resid = hfx_dec_proj(c, h, m->hidden, k->q_lora, false, P("q_a_proj"));
    q_resid = hfx_dec_norm(c, q_resid, k->q_lora, P("q_a_norm"));
    hfx_value *q = hfx_dec_proj(c, q_resid, k->q_lora, H * D, false, P("q_b_proj"));
    q = hfx_dec_to_bhsd(c, hfx_dec_rms_plain(c, hfx_dec_split_heads(c, q, H, D)));
    q = rotated_last(g, q, cos, sin);                                                                /* [B,H,S,D] */
    hfx_value *kv = hfx_dec_proj(c, h, m->hidden, D, false, P("kv_proj"));
    kv = hfx_dec_norm(c, kv, D, P("kv_norm"));
    kv = rotated_last(g, hfx_unsqueeze(g, kv, 1), cos, sin);                                         /* [B,1,S,D] */
    hfx_value *step = kv;
    kv = hfx_dec_kv_cache(c, i, step, 0);                                                           /* [B,1,T,D] */
    if (kind == HFX_KV_WINDOW) { /* its values are its keys, cached again (a value of its own: outputs are one name each) */
        hfx_dec_kv_cache(c, i, hfx_op2(g, HFX_OP_ADD, step, hfx_const_scalar(g, step->dtype, 0.0)), 1);
    } else {
        bool sparse = kind == HFX_KV_SPARSE;
        int64_t rate = sparse ? k->sparse_rate : k->heavy_rate;
        char comp[160], idx[176];
        snprintf(comp, sizeof comp, "%s", P("compressor"));
        snprintf(idx, sizeof idx, "%s.indexer", comp);
        pool own = {rate, D, sparse, comp}, index = {rate, k->index_dim, true, idx};
        hfx_value *raw = hfx_dec_kv_cache(c, i, raw_projections(c, h, sparse ? 2 * D : D, comp), 1); /* [B,1,T,·] */
        /* the entries: T / rate + 1 of them, the last never complete (a constant count where T is: a static cache) */
        hfx_dim T = raw->dims[2];
        char name[48];
        snprintf(name, sizeof name, "compressed_entries_%lld", (long long)rate);
        hfx_dim E = hfx_dim_is_const(T) ? hfx_dim_const(T.c / rate + 1)
                                         : hfx_dim_sym(hfx_graph_symbol_derived(g, name, T, rate, 1));
        hfx_value *t_len = hfx_dim_of(g, raw, 2);
        hfx_value *count = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_DIV, t_len, hfx_const_i64(g, rate)), hfx_const_i64(g, 1));
        hfx_value *entries = hfx_range(g, hfx_const_i64(g, 0), count, hfx_const_i64(g, 1), E);   /* [E] */
        windows win = windows_of(c, entries, rate, sparse, t_len, &m->layer_rope[i]);
        /* the raw tokens seen: T, or (a static cache) the last slot written + 1 */
        hfx_value *last = c->o->cache == HFX_CACHE_STATIC
                              ? hfx_op2(g, HFX_OP_SUB, hfx_dim_of(g, c->cache_position, 0), hfx_const_i64(g, 1)) : NULL;
        hfx_value *seen = last ? hfx_op2(g, HFX_OP_ADD, hfx_gather(g, c->cache_position, last, 0), hfx_const_i64(g, 1))
                               : t_len;
        hfx_value *kept = NULL, *causal = before_query(c, entries, rate), *complete = complete_windows(g, entries, rate, seen);
        if (sparse) {
            hfx_value *iraw = hfx_dec_kv_cache(c, i, raw_projections(c, h, 2 * k->index_dim, idx), 2);
            hfx_value *ikeys = pooled(c, &index, iraw, &win);
            kept = indexed(c, h, q_resid, cos, sin, ikeys, hfx_op2(g, HFX_OP_AND, causal, complete), idx);
        }
        hfx_value *keys = pooled(c, &own, raw, &win);                                           /* [B,1,E,D] */
        hfx_value *kvs[2] = {kv, keys}, *biases[2] = {bias, entries_bias(c, complete, causal, kept)};
        kv = hfx_concat(g, 2, kvs, 2);
        bias = hfx_concat(g, 2, biases, 3);
    }
    hfx_value *sinks = hfx_weight_f32(c->w, 1, &H, P("sinks"));
#undef P
    hfx_value *a = hfx_attention_with_sinks(g, q, kv, kv, bias, sinks, m->scale, 0);              /* [B,H,S,D] */
    a = rotated_last(g, a, cos, hfx_op1(g, HFX_OP_NEG, sin)); /* the values' rotary turned back at the query's position */
    a = hfx_reshape(g, hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3}), 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H * D)});
    return grouped_out(c, i, a);
}
