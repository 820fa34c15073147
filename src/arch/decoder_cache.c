/* A decoder's cache I/O: attention's keys and values joined with the cache (hfx's profile and the
 * seed's: transformers.exporters' names, counters and masks), and the recurrent states' names. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "arch/io_names.h"
#include "base/status.h"

/* How this graph's profile names its states (io_names.h). */
static hfx_state_naming naming(const layer_ctx *c) {
    return (hfx_state_naming){.io = hfx_dec_seed_profile(c) ? HFX_IO_SEED : HFX_IO_OPTIMUM,
                              .is_static = c->o->cache == HFX_CACHE_STATIC, .continues = hfx_dec_continues(c)};
}

/* Join this step's k or v [B,KV,S,D] with the layer's cache, per docs/GENERATION.md; returns
 * what attention reads and records the cache output at `slot` (0: keys, 1: values, 2: an indexer's keys). */
hfx_value *hfx_dec_kv_cache(layer_ctx *c, int64_t i, hfx_value *x, int slot) {
    const hfx_build_opts *o = c->o;
    if (o->cache == HFX_CACHE_NONE) return x;
    char name[128], input[160];
    hfx_dim kv = x->dims[1], hd = x->dims[3]; /* the cached heads and width (MLA: one latent "head") */
    hfx_state_naming n = naming(c);
    hfx_state_part part = slot == 2 ? HFX_PART_INDEX_KEY : slot ? HFX_PART_VALUE : HFX_PART_KEY;
    hfx_state_name(&n, i, part, HFX_NAME_STATE, name, sizeof name);
    bool dynamic = o->cache == HFX_CACHE_DYNAMIC;
    int state = hfx_graph_state(c->g, name, dynamic ? HFX_STATE_APPEND : HFX_STATE_WRITE, 2);
    if (dynamic) {
        if (o->has_past) {
            hfx_value *past = hfx_state_read(c->g, state, name, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->past, hd});
            hfx_value *parts[2] = {past, x};
            x = hfx_concat(c->g, 2, parts, 2);
        }
    } else {
        hfx_state_name(&n, i, part, HFX_NAME_INPUT, input, sizeof input);
        hfx_value *cache = hfx_state_read(c->g, state, input, x->dtype, 4, (hfx_dim[]){c->batch, kv, o->max_cache, hd});
        x = hfx_cache_write(c->g, cache, x, c->cache_position);
    }
    c->cache_out[CACHE_PARTS * i + slot] = x;
    c->cache_state[CACHE_PARTS * i + slot] = state;
    return x;
}

/* A sliding layer's static cache in the seed's profile: transformers' StaticSlidingWindowLayer, without its
 * Python branches. Its W slots hold the last W keys (values) in order. The call's x [B,KV,S,D] joins what the
 * cache holds — slots [lo, min(n, W)) for counter n, lo 1 once the cache is full (transformers then drops the
 * oldest) — padded with zeros to T = max(W, that length): the keys attention reads, under the caller's
 * [B,1,S,T] mask (generate's sizes); the cache keeps the last W of them. A prefill's cache holds nothing. */
static void seed_sliding_cache(layer_ctx *c, int64_t i, hfx_value **x, hfx_value *cache, hfx_value *n, int p) {
    hfx_graph *g = c->g;
    hfx_value *one = hfx_const_i64(g, 1), *joined = *x;
    hfx_value *w = cache ? hfx_dim_of(g, cache, 2) : hfx_const_i64(g, c->seed_window_slots.c);
    if (cache) {
        hfx_value *lo = hfx_cast(g, hfx_op2(g, HFX_OP_GREATER_EQUAL, n, w), HFX_DTYPE_I64);
        hfx_dim held = hfx_dim_sym(hfx_graph_symbol(g, "sliding_window_held", 0, c->m->window[i]));
        hfx_value *rows = hfx_range(g, lo, hfx_op2(g, HFX_OP_MIN, n, w), one, held);
        joined = hfx_concat(g, 2, (hfx_value *[]){hfx_gather(g, cache, rows, 2), *x}, 2);
    }
    hfx_value *t = hfx_op2(g, HFX_OP_MAX, w, hfx_dim_of(g, joined, 2));
    hfx_value *padded = hfx_concat(g, 2, (hfx_value *[]){joined, hfx_zeros_resized(g, *x, 2, c->m->window[i])}, 2);
    *x = hfx_gather(g, padded, hfx_range(g, hfx_const_i64(g, 0), t, one, c->seed_window_keys), 2);
    c->cache_out[CACHE_PARTS * i + p] =
        hfx_gather(g, padded, hfx_range(g, hfx_op2(g, HFX_OP_SUB, t, w), t, one, c->seed_window_slots), 2);
}

/* The seed profile's static cache of layer i: k and v [B,KV,S,D] written at the slots its counter
 * input.cache.layers.{i}.cumulative_length says (then counter + S) into the M-slot cache it reads, or, in a prefill,
 * into a zero cache it starts; a sliding layer's W-slot cache as seed_sliding_cache keeps it. */
static void seed_static_cache(layer_ctx *c, int64_t i, hfx_value **x[2], char name[SEED_PARTS][96]) {
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    static const hfx_state_part parts[SEED_PARTS] = {HFX_PART_KEY, HFX_PART_VALUE, HFX_PART_COUNTER};
    hfx_state_naming n = naming(c);
    char input[128];
    bool sliding = c->m->window[i] > 0;
    int s[SEED_PARTS];
    hfx_value *cache[2] = {NULL, NULL}, *counter = NULL;
    for (int p = 0; p < SEED_PARTS; p++) {
        s[p] = hfx_graph_state(g, name[p], p < 2 ? HFX_STATE_WRITE : HFX_STATE_REPLACE, 2);
        c->cache_state[CACHE_PARTS * i + p] = s[p];
        if (p < 2 && !o->reads_state) continue;
        hfx_state_name(&n, i, parts[p], HFX_NAME_INPUT, input, sizeof input);
        if (p == 2) {
            counter = hfx_state_read(g, s[p], input, HFX_DTYPE_I64, 0, NULL);
            continue;
        }
        hfx_dim dims[4] = {c->batch, (*x[p])->dims[1], sliding ? c->seed_window_slots : o->max_cache, (*x[p])->dims[3]};
        cache[p] = hfx_state_read(g, s[p], input, (*x[p])->dtype, 4, dims);
    }
    /* (the new counter is the last node that reads the old: the seed's loops bind both to one buffer) */
    hfx_value *len = hfx_dim_of(g, *x[0], 2);
    if (sliding) {
        for (int p = 0; p < 2; p++) seed_sliding_cache(c, i, x[p], cache[p], counter, p);
        c->cache_out[CACHE_PARTS * i + 2] = hfx_op2(g, HFX_OP_ADD, counter, len);
        return;
    }
    hfx_value *slots = NULL; /* (a prefill starts the cache: zeros [B,KV,M,D]) */
    for (int p = 0; p < 2; p++) {
        *x[p] = hfx_static_layer_write(g, cache[p], *x[p], counter, o->max_cache, &slots);
        c->cache_out[CACHE_PARTS * i + p] = *x[p];
    }
    if (g->failed) return;
    c->cache_out[CACHE_PARTS * i + 2] = hfx_op2(g, HFX_OP_ADD, counter, len);
    if (!c->seed_mask && !o->reads_state) { /* the prefill's causal mask over the M slots */
        hfx_value *kv_idx = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, *x[0], 2),
                                                       hfx_const_i64(g, 1), o->max_cache), 0); /* [1,M] */
        hfx_value *visible = hfx_op2(g, HFX_OP_LESS_EQUAL, kv_idx, hfx_unsqueeze(g, slots, 1)); /* [S,M] */
        c->seed_mask = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_where(g, visible, hfx_const_f32(g, 0.0f),
                                                                  hfx_const_f32(g, -FLT_MAX)), 0), 0);
    }
}

/* The seed profile's cache of layer i (transformers.exporters' names): k and v [B,KV,S,D] joined
 * with it, in place. A dynamic cache appends to input.cache.layers.{i}.keys/values; a static one is
 * seed_static_cache's. */
void hfx_dec_seed_cache(layer_ctx *c, int64_t i, hfx_value **k, hfx_value **v) {
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    static const hfx_state_part parts[SEED_PARTS] = {HFX_PART_KEY, HFX_PART_VALUE, HFX_PART_COUNTER};
    hfx_state_naming n = naming(c);
    char name[SEED_PARTS][96], input[128];
    for (int p = 0; p < SEED_PARTS; p++) hfx_state_name(&n, i, parts[p], HFX_NAME_STATE, name[p], sizeof name[p]);
    hfx_value **x[2] = {k, v}; /* each [B,KV,S,D], their own KV and D (MLA: 1 and unequal widths) */
    if (o->cache == HFX_CACHE_STATIC) {
        seed_static_cache(c, i, x, name);
        return;
    }
    for (int p = 0; p < 2; p++) {
        int s = hfx_graph_state(g, name[p], HFX_STATE_APPEND, 2);
        if (o->has_past) {
            hfx_state_name(&n, i, parts[p], HFX_NAME_INPUT, input, sizeof input);
            hfx_value *past = hfx_state_read(g, s, input, (*x[p])->dtype, 4,
                                             (hfx_dim[]){c->batch, (*x[p])->dims[1], o->past, (*x[p])->dims[3]});
            hfx_value *both[2] = {past, *x[p]};
            *x[p] = hfx_concat(g, 2, both, 2);
        }
        c->cache_out[CACHE_PARTS * i + p] = *x[p];
        c->cache_state[CACHE_PARTS * i + p] = s;
    }
    if (c->m->window[i]) { /* the seed's sliding layer carries its window as a tensor, through */
        hfx_state_name(&n, i, HFX_PART_WINDOW, HFX_NAME_STATE, name[2], sizeof name[2]);
        hfx_state_name(&n, i, HFX_PART_WINDOW, HFX_NAME_INPUT, input, sizeof input);
        int s = hfx_graph_state(g, name[2], HFX_STATE_REPLACE, 0);
        hfx_value *in = hfx_state_read(g, s, input, HFX_DTYPE_I64, 0, NULL);
        c->cache_out[CACHE_PARTS * i + 2] = hfx_op2(g, HFX_OP_ADD, in, hfx_const_i64(g, 0)); /* a value of its own */
        c->cache_state[CACHE_PARTS * i + 2] = s;
    }
}

/* The seed profile's dynamic-cache mask: no mask input (batch 1, no padding), so causal by cache
 * index over the T = past + S keys the layer sees. */
hfx_value *hfx_dec_seed_causal_mask(layer_ctx *c, hfx_value *q, hfx_value *k, int64_t window) {
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

/* Whether this call continues from an earlier one's recurrent state: a growing cache's step, or
 * (a static cache) any component that reads what an earlier call wrote. A prompt starts from zeros. */
bool hfx_dec_continues(const layer_ctx *c) {
    return c->o->has_past || (c->o->cache == HFX_CACHE_STATIC && c->o->reads_state);
}

/* Whether the graph takes and returns its cache in the Python system's profile (io "seed"). */
bool hfx_dec_seed_profile(const layer_ctx *c) { return c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE; }

/* The names of layer i's recurrent state k (0: the convolution's, 1: the recurrent one; an n-gram layer's 2: its
 * convolution's, 3: its last ids): the state
 * itself, the graph input an earlier call's value comes in by, and the output the call leaves.
 * hfx's: past.{i}.conv / past.{i}.ssm in, present.{i}.* out (onnxruntime-genai's layout); the
 * seed's: cache.layers.{i}.conv_states.0 / recurrent_states.0 (transformers' cache layer's lists)
 * out of a prompt, input.* in and output.* out of a step. */
hfx_state_names hfx_dec_state_names(const layer_ctx *c, int64_t i, int k) {
    hfx_state_names names;
    hfx_state_naming n = naming(c);
    static const hfx_state_part parts[STATE_PARTS] = {HFX_PART_CONV, HFX_PART_SSM, HFX_PART_PLE_CONV, HFX_PART_NGRAM};
    hfx_state_part part = parts[k >= 0 && k < STATE_PARTS ? k : 0];
    hfx_state_name(&n, i, part, HFX_NAME_STATE, names.state, sizeof names.state);
    hfx_state_name(&n, i, part, HFX_NAME_INPUT, names.input, sizeof names.input);
    hfx_state_name(&n, i, part, HFX_NAME_OUTPUT, names.output, sizeof names.output);
    return names;
}

/* A recurrent layer's state outputs, each at its part's slot (conv 0, ssm 1). */
static void write_states(layer_ctx *c, int64_t i) {
    hfx_layer_cache l = hfx_decoder_layer_cache(c->m, i);
    for (int s = 0; s < l.n_states; s++) {
        int k = hfx_dec_state_part(&l.states[s]);
        hfx_state_write(c->g, c->cache_state[CACHE_PARTS * i + STATE_SLOT + k],
                        c->cache_out[CACHE_PARTS * i + STATE_SLOT + k], hfx_dec_state_names(c, i, k).output);
    }
}

/* Every cache and state output, named by the profile: hfx's present.{i}.key/value (a growing cache)
 * or output.past_key_values.{i}.* (a static one); the seed's cache.layers.{i}.* out of a prefill and
 * output.cache.layers.{i}.* out of a step, with the write counter or the window tensor; a
 * recurrent layer's states as hfx_dec_state_names says. */
void hfx_dec_write_caches(layer_ctx *c) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    bool seed = hfx_dec_seed_profile(c);
    hfx_state_naming n = naming(c);
    for (int64_t i = 0; i < m->layers && o->cache != HFX_CACHE_NONE && !g->failed; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        if (hfx_dec_shape(m, i).kv_from != i || kind == HFX_MIXER_FFN) continue; /* it keeps nothing of its own */
        bool states = kind != HFX_MIXER_ATTENTION, attends = hfx_mixer_attends(kind);
        /* a hybrid layer's (Falcon-H1's, Zamba2's): the states first, or (the seed's) its attention half's parts, as
           transformers' LinearAttentionAnd*AttentionLayer holds them */
        if (states && !seed) write_states(c, i);
        /* the seed's counter or window; an indexer's keys */
        bool third = (seed && (o->cache == HFX_CACHE_STATIC || m->window[i])) || (!seed && hfx_decoder_layer_cache(m, i).index_dim);
        hfx_state_part parts[3] = {HFX_PART_KEY, HFX_PART_VALUE, !seed ? HFX_PART_INDEX_KEY
                                   : o->cache == HFX_CACHE_STATIC ? HFX_PART_COUNTER : HFX_PART_WINDOW};
        for (int kv = 0; attends && kv < (third ? 3 : 2); kv++) {
            char name[128];
            hfx_state_name(&n, i, parts[kv], HFX_NAME_OUTPUT, name, sizeof name);
            hfx_state_write(g, c->cache_state[CACHE_PARTS * i + kv], c->cache_out[CACHE_PARTS * i + kv], name);
        }
        if (states && seed) write_states(c, i);
    }
}
