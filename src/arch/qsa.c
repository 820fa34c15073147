/* Qwen4-Exp's QSA indexer (HFX_ATTN_OUTPUT_GATED_QSA): which keys each query of an attention layer reads. A row's
 * visible tokens, in order, make blocks of indexer_compress_ratio; a block's key is the mean of its tokens' raw index
 * keys, normed and rotated at its first token's position. Each query scores the blocks it sees whole,
 * Σ_h relu(q_h·k_b) / √D, keeps the indexer_budget / ratio best, and reads their tokens and its tokens after the last
 * whole block. Without data-dependent shapes: a token's block is its rank among the row's visible tokens divided by
 * the ratio (the visible keys of a causal, padded row are a prefix of the last query's, so one rank per row serves
 * every query); the blocks axis is T / ratio + 1 long (a symbol derived from T's), pooled by a one-hot matmul, the
 * incomplete ones never picked. The cache keeps each token's raw key and, as one more column, its position (f32,
 * exact below 2^24): a block's rotary needs the position of a token an earlier call saw. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "arch/decoder_blocks.h"
#include "arch/rope.h"
#include "base/status.h"

hfx_status hfx_dec_parse_qsa(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    static const char *const keys[] = {"indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget",
                                       "indexer_compress_ratio"};
    int64_t v[5];
    hfx_status st;
    m->qsa = (hfx_decoder_qsa){0};
    bool attends = false;
    for (int64_t i = 0; i < m->layers; i++) attends |= !m->mixer || hfx_mixer_attends(m->mixer[i]);
    if (!attends) return HFX_OK;
    for (int k = 0; k < 5; k++) {
        if (!hfx_cfg_has(c, keys[k]) || json_is_null(json_object_get(c.obj, keys[k])))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: %s must be set: every attention layer has the QSA indexer",
                            c.where, keys[k]);
        if ((st = hfx_cfg_int_in_or(c, keys[k], 1, 1, 1 << 20, &v[k], err))) return st;
    }
    if (v[1] != 1)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: indexer_kv_heads must be 1 (its one key head), not %lld", c.where,
                        (long long)v[1]);
    if (v[3] % v[4])
        return hfx_fail(err, HFX_ERR_INVALID, "%s: indexer_budget (%lld) is not a multiple of indexer_compress_ratio "
                                              "(%lld)", c.where, (long long)v[3], (long long)v[4]);
    if (m->rope.dim > v[2])
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the rotary's %lld dims do not fit the indexer's heads "
                                              "(indexer_head_dim %lld)", c.where, (long long)m->rope.dim, (long long)v[2]);
    m->qsa = (hfx_decoder_qsa){.heads = v[0], .dim = v[2], .budget = v[3], .ratio = v[4]};
    return HFX_OK;
}

hfx_value *hfx_dec_qsa_bias(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin, hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t NH = m->qsa.heads, D = m->qsa.dim, r = m->qsa.ratio, H = m->hidden;
    if (hfx_dec_seed_profile(c) || !bias || !c->positions) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" has no names for the QSA indexer's cache yet; export "
                                               "with io \"optimum\"", c->d->architecture);
        return bias;
    }
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *qk = hfx_dec_proj(c, h, H, (NH + 1) * D, false, P("indexer.index_qk_proj"));  /* [B,S,(NH+1)·D] */
    hfx_value *q = hfx_dec_split_heads(c, hfx_slice(g, qk, 2, 0, NH * D), NH, D);
    q = hfx_dec_to_bhsd(c, hfx_dec_norm(c, q, D, P("indexer.q_layernorm")));
    q = hfx_rope_apply(g, q, cos, sin, false);                                               /* [B,NH,S,D] */
    /* this call's raw keys and positions into the cache: [B,1,T,D+1] f32 */
    hfx_value *pos = hfx_unsqueeze(g, hfx_cast(g, c->positions, HFX_DTYPE_F32), -1);
    hfx_value *entry = hfx_concat(g, 2, (hfx_value *[]){hfx_cast(g, hfx_slice(g, qk, 2, NH * D, (NH + 1) * D), HFX_DTYPE_F32),
                                                       pos}, 2);
    hfx_value *all = hfx_dec_kv_cache(c, i, hfx_unsqueeze(g, entry, 1), 2);
    hfx_dim B = c->batch, T = all->dims[2];
    hfx_value *keys = hfx_reshape(g, hfx_slice(g, all, 3, 0, D), 3, (hfx_dim[]){B, T, hfx_dim_const(D)});
    hfx_value *key_pos = hfx_reshape(g, hfx_slice(g, all, 3, D, D + 1), 3, (hfx_dim[]){B, T, hfx_dim_const(1)});
    /* each key's rank among its row's visible ones (the last query's), and its block */
    hfx_value *visible = hfx_op2(g, HFX_OP_GREATER, bias, hfx_const_scalar(g, bias->dtype, -1.0)); /* [B,1,S,T] */
    hfx_value *row = hfx_reshape(g, hfx_slice(g, hfx_cast(g, visible, HFX_DTYPE_I64), 2, -1, INT64_MAX), 2, (hfx_dim[]){B, T});
    hfx_value *one = hfx_const_i64(g, 1), *zero = hfx_const_i64(g, 0), *ratio = hfx_const_i64(g, r);
    hfx_value *rank = hfx_op2(g, HFX_OP_SUB, hfx_cumsum(g, row, 1), one);                     /* [B,T] */
    hfx_value *rank0 = hfx_op2(g, HFX_OP_MAX, rank, zero);
    hfx_value *block = hfx_op2(g, HFX_OP_DIV, rank0, ratio);
    char name[48];
    snprintf(name, sizeof name, "qsa_blocks_%lld", (long long)r);
    hfx_dim NB = hfx_dim_is_const(T) ? hfx_dim_const(T.c / r + 1) : hfx_dim_sym(hfx_graph_symbol_derived(g, name, T, r, 1));
    hfx_value *count = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_DIV, hfx_dim_of(g, all, 2), ratio), one);
    hfx_value *blocks = hfx_range(g, zero, count, one, NB);                                  /* [NB] */
    hfx_value *member = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_EQUAL, hfx_unsqueeze(g, block, 1), hfx_unsqueeze(g, blocks, -1)),
                                hfx_op2(g, HFX_OP_GREATER, hfx_unsqueeze(g, row, 1), zero)); /* [B,NB,T] */
    hfx_value *starts = hfx_op2(g, HFX_OP_EQUAL, hfx_op2(g, HFX_OP_SUB, rank0, hfx_op2(g, HFX_OP_MUL, block, ratio)), zero);
    hfx_value *first = hfx_cast(g, hfx_op2(g, HFX_OP_AND, member, hfx_unsqueeze(g, starts, 1)), HFX_DTYPE_F32);
    hfx_value *member_f = hfx_cast(g, member, HFX_DTYPE_F32);
    /* the blocks' keys [B,1,NB,D]: the mean of their raw keys (f32, as transformers pools), normed, rotated at the
     * first token's position */
    hfx_value *pooled = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_MATMUL, member_f, keys), hfx_const_f32(g, 1.0f / (float)r));
    pooled = hfx_dec_norm(c, hfx_unsqueeze(g, hfx_cast(g, pooled, h->dtype), 1), D, P("indexer.k_layernorm"));
    hfx_value *at = hfx_cast(g, hfx_reshape(g, hfx_op2(g, HFX_OP_MATMUL, first, key_pos), 2, (hfx_dim[]){B, NB}), HFX_DTYPE_I64);
    hfx_value *bcos, *bsin;
    hfx_rope_cos_sin(g, &m->rope, at, cos->dtype, &bcos, &bsin);
    hfx_value *kb = hfx_rope_apply(g, pooled, bcos, bsin, false);                             /* [B,1,NB,D] */
#undef P
    hfx_value *scores = hfx_op2(g, HFX_OP_MATMUL, hfx_cast(g, q, HFX_DTYPE_F32),
                                hfx_transpose(g, hfx_cast(g, kb, HFX_DTYPE_F32), 4, (int64_t[]){0, 1, 3, 2}));
    int64_t heads_axis = 1, keys_axis = 3;
    scores = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_activate(g, HFX_ACT_RELU, scores), 1, &heads_axis);
    scores = hfx_op2(g, HFX_OP_MUL, scores, hfx_const_f32(g, (float)(1.0 / sqrt((double)D))));  /* [B,1,S,NB] */
    /* the blocks a query sees whole: (b + 1)·r ≤ its visible keys */
    hfx_value *seen = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, visible, HFX_DTYPE_I64), 1, &keys_axis); /* [B,1,S,1] */
    hfx_value *ends = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, blocks, one), ratio);
    hfx_value *whole = hfx_op2(g, HFX_OP_LESS_EQUAL, ends, seen);                              /* [B,1,S,NB] */
    hfx_dim bsn[3] = {B, c->seq, NB};
    hfx_value *index = hfx_reshape(g, hfx_where(g, whole, scores, hfx_const_f32(g, -INFINITY)), 3, bsn);
    hfx_value *picked = hfx_op2(g, HFX_OP_AND, hfx_dec_top_keys(g, index, m->qsa.budget / r), hfx_reshape(g, whole, 3, bsn));
    hfx_value *kept = hfx_op2(g, HFX_OP_GREATER, hfx_op2(g, HFX_OP_MATMUL, hfx_cast(g, picked, HFX_DTYPE_F32), member_f),
                              hfx_const_f32(g, 0.5f));                                      /* [B,S,T] */
    /* and the tokens after the last whole block */
    hfx_value *tail = hfx_op2(g, HFX_OP_GREATER_EQUAL, hfx_unsqueeze(g, hfx_unsqueeze(g, rank, 1), 1),
                              hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, seen, ratio), ratio)); /* [B,1,S,T] */
    hfx_value *read = hfx_op2(g, HFX_OP_AND, visible, hfx_op2(g, HFX_OP_OR, hfx_unsqueeze(g, kept, 1), tail));
    /* (a static cache's unwritten slots stay −∞: mask.c) */
    return hfx_where(g, read, bias, hfx_op2(g, HFX_OP_MIN, bias, hfx_const_scalar(g, bias->dtype, -FLT_MAX)));
}
