/* Hashed n-gram embeddings added to the residual streams (Qwen4-Exp's PLE layers, on the layers ple_layer_ids names).
 * Each token's n-grams of orders 2..ngram_size (the tokens before it within its document: an EOS token ends one, and
 * the ids before a sequence's start read as EOS) hash, per order, into heads_per_ngram tables of prime sizes: the ids
 * times odd multipliers (products below 2^63: the multipliers are below 2^63 / vocab), XORed, modulo each head's
 * prime. The graph computes those 63-bit values in digits whose every intermediate stays below 2^31, as OpenVINO's CPU
 * plugin computes int64 tensors in int32. The heads' rows, concatenated, give a key per stream and one value; each
 * stream gates the value by σ(signed √ of its normed key·query), and a dilated depthwise convolution (dilation
 * ngram_size) of the gated values, normed, adds local context. Its states: the last ngram_size − 1 ids (less the EOS
 * id, so that zeros, an empty state, read as EOS; int32, which OpenVINO's CPU plugin keeps as a variable) and the
 * convolution's last (kernel − 1)·ngram_size inputs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

enum { MAX_ORDER = 16 };

static bool is_prime(int64_t v) {
    if (v < 2) return false;
    if (v % 2 == 0) return v == 2;
    for (int64_t d = 3; d * d <= v; d += 2)
        if (v % d == 0) return false;
    return true;
}

/* transformers' _splitmix64 over 64-bit words */
static uint64_t splitmix64(uint64_t v) {
    v += 0x9E3779B97F4A7C15ull;
    v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
    v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
    return v ^ (v >> 31);
}

hfx_status hfx_dec_parse_ngram(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_decoder_ngram *n = &m->ngram;
    *n = (hfx_decoder_ngram){0};
    const json_t *ids = json_object_get(c.obj, "ple_layer_ids");
    if (!ids || json_is_null(ids) || (json_is_array(ids) && json_array_size(ids) == 0)) return HFX_OK;
    if (!json_is_array(ids))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: ple_layer_ids must be a list of 1-based layer ids", c.where);
    if (!(n->index = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *n->index)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m->layers; i++) n->index[i] = -1;
    for (size_t k = 0; k < json_array_size(ids); k++) {
        const json_t *v = json_array_get(ids, k);
        json_int_t id = json_is_integer(v) ? json_integer_value(v) : 0;
        if (id < 1 || id > m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: ple_layer_ids[%zu] must be a 1-based layer id in [1, %lld]",
                            c.where, k, (long long)m->layers);
        if (!m->mixer || m->mixer[id - 1] != HFX_MIXER_DELTA)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: ple_layer_ids[%zu] = %lld is not a linear_attention layer (the "
                                                  "n-gram embeddings are only on those)", c.where, k, (long long)id);
        n->index[id - 1] = 0; /* (its ordinal below: the ids sorted, duplicates once) */
    }
    int64_t ordinal = 0;
    for (int64_t i = 0; i < m->layers; i++)
        if (n->index[i] >= 0) n->index[i] = ordinal++;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "ngram_size", 3, 2, MAX_ORDER, &n->n, err)) ||
        (st = hfx_cfg_int_in_or(c, "heads_per_ngram", 8, 1, 4096, &n->heads_per, err)) ||
        (st = hfx_cfg_int_in_or(c, "ple_embed_dim", m->hidden, 1, 1 << 20, &n->width, err)) ||
        (st = hfx_cfg_int_in_or(c, "ple_conv_kernel_size", 4, 2, 64, &n->kernel, err)) ||
        (st = hfx_cfg_int_in_or(c, "ngram_vocab_size_base", 20000000, 1, 1 << 30, &n->vocab_base, err)) ||
        (st = hfx_cfg_int_in_or(c, "make_ngram_vocab_size_divisible_by", 128, 1, 1 << 20, &n->divisor, err)) ||
        (st = hfx_cfg_int_in_or(c, "seed", 1234, INT64_MIN / 2, INT64_MAX / 2, &n->seed, err)))
        return st;
    int64_t heads = (n->n - 1) * n->heads_per;
    if (n->width % heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: ple_embed_dim (%lld) is not a multiple of the n-gram heads "
                                              "((ngram_size − 1)·heads_per_ngram = %lld)", c.where, (long long)n->width,
                        (long long)heads);
    if (ordinal * heads > 1 << 16)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %lld hashed n-gram tables (ple_layer_ids · (ngram_size − 1) · "
                                                  "heads_per_ngram) is more than 65536", c.where,
                        (long long)(ordinal * heads));
    const json_t *eos = json_object_get(c.obj, "eos_token_id");
    if (json_is_array(eos)) eos = json_array_get(eos, 0);
    if (!json_is_integer(eos) || json_integer_value(eos) < 0 || json_integer_value(eos) >= m->vocab)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: eos_token_id must be a token id (or a list whose first is one): the "
                                              "n-gram hashes start each document at it", c.where);
    n->eos = json_integer_value(eos);
    /* each table's prime: the layers' heads in turn from ngram_vocab_size_base (transformers' _find_nth_prime_after) */
    if (!(n->primes = hfx_arena_alloc(arena, (size_t)(ordinal * heads) * sizeof *n->primes)))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t k = 0, p = n->vocab_base - 1; k < ordinal * heads; k++) {
        do p++;
        while (!is_prime(p));
        n->primes[k] = p;
    }
    return HFX_OK;
}

/* Layer i's tables: sizes [heads] (its primes), offsets [heads], their rows padded to the divisor; multipliers
 * [ngram_size] from the seed and the layer's ordinal (transformers' _build_layer_multipliers). */
typedef struct hash_tables {
    int64_t *sizes, *offsets, rows;
    int64_t multipliers[MAX_ORDER];
    int64_t digit_bits;          /* the hashes' digits' width (below) */
} hash_tables;

enum { MAX_DIGIT_BITS = 16 };

static bool tables_of(const hfx_decoder_cfg *m, int64_t i, hfx_arena *arena, hash_tables *t) {
    const hfx_decoder_ngram *n = &m->ngram;
    int64_t heads = (n->n - 1) * n->heads_per, total = 0;
    t->sizes = hfx_arena_alloc(arena, 2 * (size_t)heads * sizeof *t->sizes);
    if (!t->sizes) return false;
    t->offsets = t->sizes + heads;
    for (int64_t h = 0; h < heads; h++) {
        t->sizes[h] = n->primes[n->index[i] * heads + h], t->offsets[h] = total;
        total += t->sizes[h];
    }
    t->rows = (total + n->divisor - 1) / n->divisor * n->divisor;
    uint64_t half = (uint64_t)(INT64_MAX / (m->vocab > 1 ? m->vocab : 1)) / 2;
    if (!half) half = 1;
    uint64_t base = (uint64_t)n->seed + 10007u * (uint64_t)n->index[i];
    for (int64_t k = 0; k < n->n; k++)
        t->multipliers[k] = (int64_t)(2 * (splitmix64(base + 0x9E3779B97F4A7C15ull * (uint64_t)(k + 1)) % half) + 1);
    return true;
}

/* The layer's table [rows, width / heads]: one tensor, or the shards transformers saves (split_ngram_parts of them,
 * shard_0 … in order, concatenated). */
static hfx_value *table_of(layer_ctx *c, const char *p, int64_t rows, int64_t dim) {
    hfx_graph *g = c->g;
    char name[320];
    snprintf(name, sizeof name, "%s.ngram_embedding.shard_0.weight", p);
    if (!hfx_weight_exists(c->w, name)) return hfx_weight(c->w, 2, (int64_t[]){rows, dim}, "%s.ngram_embedding.weight", p);
    int64_t parts = 0;
    for (; parts < 1 << 16; parts++) {
        snprintf(name, sizeof name, "%s.ngram_embedding.shard_%lld.weight", p, (long long)parts);
        if (!hfx_weight_exists(c->w, name)) break;
    }
    hfx_value **shards = hfx_arena_alloc(g->arena, (size_t)parts * sizeof *shards);
    if (!shards) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return hfx_weight(c->w, 2, (int64_t[]){rows, dim}, "%s.ngram_embedding.weight", p);
    }
    int64_t total = 0;
    for (int64_t k = 0; k < parts; k++) { /* (torch.chunk's: the last may have fewer rows) */
        snprintf(name, sizeof name, "%s.ngram_embedding.shard_%lld.weight", p, (long long)k);
        int64_t r = hfx_weight_dim(c->w, name, 0);
        shards[k] = hfx_weight(c->w, 2, (int64_t[]){r > 0 ? r : 1, dim}, "%s", name);
        total += r > 0 ? r : 1;
    }
    if (total != rows) {
        hfx_graph_fail(g, HFX_ERR_INVALID, "%s: %s.ngram_embedding's %lld shards hold %lld rows, but config.json implies "
                                           "%lld", c->d->architecture, p, (long long)parts, (long long)total, (long long)rows);
        return shards[0];
    }
    return hfx_const_concat_rows(g, (int)parts, shards);
}

/* x[:, from : from + S] of hist [B, K + S] (S the call's tokens, read at run time) */
static hfx_value *window_at(hfx_graph *g, hfx_value *hist, hfx_value *ids, int64_t from) {
    hfx_value *len = hfx_dim_of(g, ids, 1);
    hfx_value *at = hfx_range(g, hfx_const_i64(g, from), hfx_op2(g, HFX_OP_ADD, len, hfx_const_i64(g, from)),
                              hfx_const_i64(g, 1), ids->dims[1]);
    return hfx_gather(g, hist, at, 1);
}

/* The digits (digit_bits wide, least significant first) of ids [B,S] times multiplier k: each digit of the multiplier
 * times the ids, the carries passed up. The exact 63-bit product (the multipliers are below 2^63 / vocab) with every
 * intermediate below 2^31: OpenVINO's CPU plugin computes int64 tensors in int32. */
static void product_digits(hfx_graph *g, const hash_tables *t, hfx_value *ids, int64_t k, hfx_value **out) {
    int64_t w = t->digit_bits, D = (63 + w - 1) / w, base = (int64_t)1 << w;
    uint64_t m = (uint64_t)t->multipliers[k];
    hfx_value *carry = NULL, *radix = hfx_const_i64(g, base);
    for (int64_t j = 0; j < D; j++) {
        int64_t digit = (int64_t)((m >> (w * j)) & (uint64_t)(base - 1));
        hfx_value *v = hfx_op2(g, HFX_OP_MUL, ids, hfx_const_i64(g, digit));
        if (carry) v = hfx_op2(g, HFX_OP_ADD, v, carry);
        carry = hfx_op2(g, HFX_OP_DIV, v, radix);
        out[j] = hfx_op2(g, HFX_OP_SUB, v, hfx_op2(g, HFX_OP_MUL, carry, radix));
    }
}

/* Each token's row ids [B,S,heads] in the layer's table. */
static hfx_value *row_ids(layer_ctx *c, int64_t i, const hash_tables *t, hfx_value *ids) {
    const hfx_decoder_ngram *n = &c->m->ngram;
    hfx_graph *g = c->g;
    int64_t K = n->n - 1, hp = n->heads_per;
    hfx_value *eos = hfx_const_i64(g, n->eos);
    /* the ids before the call: the state (less eos), or all EOS at a sequence's start */
    hfx_value *ctx;
    hfx_state_names names = hfx_dec_state_names(c, i, 3);
    int state = c->o->cache != HFX_CACHE_NONE ? hfx_graph_state(g, names.state, HFX_STATE_REPLACE, 1) : -1;
    if (hfx_dec_continues(c))
        ctx = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, hfx_state_read(g, state, names.input, HFX_DTYPE_I32, 2,
                                                                 (hfx_dim[]){c->batch, hfx_dim_const(K)}), HFX_DTYPE_I64), eos);
    else
        ctx = hfx_op2(g, HFX_OP_ADD, hfx_zero_state(g, ids, HFX_DTYPE_I64, 1, &K), eos);
    hfx_value *hist = hfx_concat(g, 2, (hfx_value *[]){ctx, ids}, 1); /* [B, K + S] */
    if (state >= 0) {
        c->cache_out[CACHE_PARTS * i + STATE_SLOT + 3] = hfx_cast(g, hfx_op2(g, HFX_OP_SUB, hfx_slice(g, hist, 1, -K, INT64_MAX), eos),
                                                                  HFX_DTYPE_I32);
        c->cache_state[CACHE_PARTS * i + STATE_SLOT + 3] = state;
    }
    /* the token s back within its document: EOS once an EOS lies after it (an EOS ends its document: the token after
     * it starts the next) */
    hfx_value *shifted = NULL, *mixed[64];
    product_digits(g, t, ids, 0, mixed);
    hfx_value *orders[MAX_ORDER];
    int64_t w = t->digit_bits, D = (63 + w - 1) / w;
    for (int64_t s = 1; s <= K; s++) {
        hfx_value *back = window_at(g, hist, ids, K - s);
        shifted = shifted ? hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, shifted, eos), eos, back) : back;
        hfx_value *term[64];
        product_digits(g, t, shifted, s, term);
        for (int64_t j = 0; j < D; j++) mixed[j] = hfx_op2(g, HFX_OP_BITWISE_XOR, mixed[j], term[j]);
        /* order s + 1: its heads' rows, the mix mod each prime by Horner's rule over the digits, + offset */
        int64_t shape[1] = {hp};
        hfx_value *p = hfx_const_bytes(g, HFX_DTYPE_I64, 1, shape, t->sizes + (s - 1) * hp);
        hfx_value *o = hfx_const_bytes(g, HFX_DTYPE_I64, 1, shape, t->offsets + (s - 1) * hp);
        hfx_value *r = NULL;                                                                 /* [B,S,hp] */
        for (int64_t j = D - 1; j >= 0; j--) {
            hfx_value *d = hfx_unsqueeze(g, mixed[j], -1);                                   /* [B,S,1] */
            hfx_value *x = r ? hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, r, hfx_const_i64(g, (int64_t)1 << w)), d) : d;
            r = hfx_op2(g, HFX_OP_SUB, x, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, x, p), p)); /* x mod p, x ≥ 0 */
        }
        orders[s - 1] = hfx_op2(g, HFX_OP_ADD, r, o);
    }
    return K == 1 ? orders[0] : hfx_concat(g, (int)K, orders, 2);
}

/* The dilated depthwise convolution over x [B,S,C] (its past in the layer's "ple_conv" state) → [B,S,C], silu. */
static hfx_value *dilated_conv(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *weight) {
    const hfx_decoder_ngram *n = &c->m->ngram;
    hfx_graph *g = c->g;
    int64_t C = weight->dims[0].c, kept = (n->kernel - 1) * n->n;
    hfx_state_names names = hfx_dec_state_names(c, i, 2);
    int state = c->o->cache != HFX_CACHE_NONE ? hfx_graph_state(g, names.state, HFX_STATE_REPLACE, 2) : -1;
    hfx_value *past = hfx_dec_continues(c) ? hfx_state_read(g, state, names.input, x->dtype, 3,
                                                             (hfx_dim[]){c->batch, hfx_dim_const(C), hfx_dim_const(kept)})
                                           : NULL;
    hfx_value *next = NULL;
    hfx_value *xt = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1});                           /* [B,C,S] */
    hfx_value *all = hfx_conv_window(g, past, xt, kept + 1, kept, state >= 0 ? &next : NULL); /* [B,C,kept+S] */
    if (state >= 0) {
        c->cache_out[CACHE_PARTS * i + STATE_SLOT + 2] = next;
        c->cache_state[CACHE_PARTS * i + STATE_SLOT + 2] = state;
    }
    hfx_value *y = hfx_causal_conv_dilated(g, all, weight, NULL, n->n);                      /* [B,C,S] */
    return hfx_activate(g, HFX_ACT_SILU, hfx_transpose(g, y, 3, (int64_t[]){0, 2, 1}));
}

/* The hashes' constants as the checkpoint saved them, where it did (transformers loads them over what config.json
 * derives): every row they reach within the table, every product of an id and a multiplier below 2^63. */
static bool saved_tables(layer_ctx *c, const char *q, hash_tables *t) {
    const hfx_decoder_ngram *n = &c->m->ngram;
    int64_t heads = (n->n - 1) * n->heads_per, id_max = c->m->vocab > 1 ? c->m->vocab - 1 : 1;
    char name[288];
    snprintf(name, sizeof name, "%s.layer_multipliers", q);
    if (!hfx_weight_i64_values(c->w, name, n->n, t->multipliers)) return false;
    for (int64_t k = 0; k < n->n; k++)
        if (t->multipliers[k] < 0 || t->multipliers[k] > INT64_MAX / id_max) {
            hfx_graph_fail(c->g, HFX_ERR_INVALID, "%s: element %lld (%lld) is not a multiplier whose products with the "
                                                  "token ids stay below 2^63", name, (long long)k,
                           (long long)t->multipliers[k]);
            return false;
        }
    snprintf(name, sizeof name, "%s.ngram_heads_vocab_sizes", q);
    if (!hfx_weight_i64_values(c->w, name, heads, t->sizes)) return false;
    snprintf(name, sizeof name, "%s.ngram_heads_offsets", q);
    if (!hfx_weight_i64_values(c->w, name, heads, t->offsets)) return false;
    for (int64_t h = 0; h < heads; h++)
        if (t->sizes[h] < 1 || t->offsets[h] < 0 || t->offsets[h] > t->rows - t->sizes[h]) {
            hfx_graph_fail(c->g, HFX_ERR_INVALID, "%s: head %lld's rows [%lld, %lld + %lld) are not within the table's "
                                                  "%lld (ngram_heads_vocab_sizes, ngram_heads_offsets)", q, (long long)h,
                           (long long)t->offsets[h], (long long)t->offsets[h], (long long)t->sizes[h], (long long)t->rows);
            return false;
        }
    /* digits as wide as every intermediate allows below 2^31: id·digit + carry < vocab·2^w, and Horner's r·2^w + digit
     * < size·2^w */
    int64_t top = c->m->vocab;
    for (int64_t h = 0; h < heads; h++) top = t->sizes[h] > top ? t->sizes[h] : top;
    t->digit_bits = 0;
    while (t->digit_bits < MAX_DIGIT_BITS && top <= ((int64_t)1 << (31 - (t->digit_bits + 1)))) t->digit_bits++;
    return true;
}

hfx_value *hfx_dec_ngram_block(layer_ctx *c, int64_t i, hfx_value *x) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_ngram *n = &m->ngram;
    hfx_graph *g = c->g;
    int64_t N = m->hyper.streams, D = m->hidden, W = n->width, heads = (n->n - 1) * n->heads_per;
    if (hfx_dec_seed_profile(c) || !c->ids || !c->new_mask) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, !c->ids ? "%s: the n-gram layers (ple_layer_ids) hash the token ids: export "
                                                         "with input_ids, not inputs_embeds"
                                                       : "%s: io \"seed\" has no names for the n-gram layers' states yet; "
                                                         "export with io \"optimum\"", c->d->architecture);
        return x;
    }
    hash_tables t;
    if (!tables_of(m, i, g->arena, &t)) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }

    char p[192], q[224];
    hfx_dec_name(c, i, NULL, "ple", p, sizeof p);
    snprintf(q, sizeof q, "%s.ple_embedding", p);
    char name[288];
    if (!saved_tables(c, q, &t)) return x;
    if (!t.digit_bits) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: the n-gram hashes of layer %lld need tables (ngram_vocab_size_base's "
                                               "primes) and a vocab_size below 2^30", c->d->architecture, (long long)i);
        return x;
    }
    /* padding reads as EOS (transformers' conv mask on the ids) */
    hfx_value *real = hfx_reshape(g, c->new_mask, 2, (hfx_dim[]){c->batch, c->seq});
    real = hfx_op2(g, HFX_OP_GREATER, real, hfx_const_scalar(g, real->dtype, 0.5));
    hfx_value *ids = hfx_where(g, real, c->ids, hfx_const_i64(g, n->eos));
    hfx_value *rows = row_ids(c, i, &t, ids);                                                /* [B,S,heads] */
    hfx_value *e = hfx_gather(g, table_of(c, q, t.rows, W / heads), rows, 0);               /* [B,S,heads,W/heads] */
    e = hfx_reshape(g, e, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(W)});
    hfx_dim streams[4] = {c->batch, c->seq, hfx_dim_const(N), hfx_dim_const(D)};
    snprintf(name, sizeof name, "%s.key_proj", p);
    hfx_value *key = hfx_reshape(g, hfx_dec_proj(c, e, W, N * D, false, name), 4, streams);
    snprintf(name, sizeof name, "%s.norm_key", p);
    key = hfx_dec_grouped_norm(c, key, name);
    snprintf(name, sizeof name, "%s.value_proj", p);
    hfx_value *value = hfx_unsqueeze(g, hfx_dec_proj(c, e, W, D, false, name), 2);         /* [B,S,1,D] */
    snprintf(name, sizeof name, "%s.norm_query", p);
    hfx_value *query = hfx_dec_grouped_norm(c, x, name);
    int64_t last = -1;
    hfx_value *gate = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, key, query), 1, &last);
    gate = hfx_dec_scaled(g, gate, 1.0 / sqrt((double)D));                                   /* [B,S,N,1] */
    hfx_value *zero = hfx_const_scalar(g, gate->dtype, 0.0);
    hfx_value *mag = hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_MAX, hfx_op2(g, HFX_OP_MAX, gate, hfx_op1(g, HFX_OP_NEG, gate)),
                                                    hfx_const_scalar(g, gate->dtype, 1e-6)));
    hfx_value *sign = hfx_op2(g, HFX_OP_SUB, hfx_cast(g, hfx_op2(g, HFX_OP_GREATER, gate, zero), gate->dtype),
                              hfx_cast(g, hfx_op2(g, HFX_OP_LESS, gate, zero), gate->dtype));
    hfx_value *gated = hfx_op2(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_SIGMOID, hfx_op2(g, HFX_OP_MUL, mag, sign)), value);
    snprintf(name, sizeof name, "%s.norm_conv", p);
    hfx_value *normed = hfx_dec_grouped_norm(c, gated, name);
    hfx_value *pad = hfx_unsqueeze(g, c->new_mask, -1);                                     /* [B,S,1,1] */
    hfx_dim flat[3] = {c->batch, c->seq, hfx_dim_const(N * D)};
    gated = hfx_reshape(g, hfx_op2(g, HFX_OP_MUL, gated, pad), 3, flat);
    normed = hfx_reshape(g, hfx_op2(g, HFX_OP_MUL, normed, pad), 3, flat);
    snprintf(name, sizeof name, "%s.conv1d.weight", p);
    hfx_value *w = hfx_weight(c->w, 3, (int64_t[]){N * D, 1, n->kernel}, "%s", name);
    hfx_value *y = hfx_op2(g, HFX_OP_ADD, gated, dilated_conv(c, i, normed, w));
    return hfx_op2(g, HFX_OP_ADD, x, hfx_reshape(g, y, 4, streams));
}
