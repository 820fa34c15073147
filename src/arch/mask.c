#include "arch/mask.h"

#include <float.h>
#include <math.h>

hfx_value *hfx_mask_slots_after_past(hfx_graph *g, hfx_value *attention_mask, hfx_dim seq,
                                     hfx_value *seq_len) {
    hfx_value *total = hfx_dim_of(g, attention_mask, 1);
    hfx_value *past = hfx_op2(g, HFX_OP_SUB, total, seq_len);
    return hfx_range(g, past, total, hfx_const_i64(g, 1), seq);
}

void hfx_mask_init(hfx_graph *g, hfx_mask_builder *m, hfx_value *attention_mask,
                   hfx_value *q_slots) {
    m->attention_mask = attention_mask;
    m->unwritten_slots = false;
    m->both_ways = false;
    m->beyond_window = NULL;
    m->windowed = NULL;
    hfx_value *total = hfx_dim_of(g, attention_mask, 1);
    m->q_idx = hfx_unsqueeze(g, q_slots, 1);
    m->kv_idx = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), total, hfx_const_i64(g, 1),
                                           attention_mask->dims[1]), 0);
    m->causal = hfx_op2(g, HFX_OP_LESS_EQUAL, m->kv_idx, m->q_idx); /* [S,T] */
    hfx_value *keep = hfx_cast(g, attention_mask, HFX_DTYPE_BOOL);
    m->keep = hfx_unsqueeze(g, hfx_unsqueeze(g, keep, 1), 1); /* [B,1,1,T] */
    m->visible = hfx_op2(g, HFX_OP_AND, m->keep, m->causal);  /* [B,1,S,T] */
}

void hfx_mask_both_ways(hfx_graph *g, hfx_mask_builder *m) {
    hfx_value *zero = hfx_const_i64(g, 0);
    m->causal = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_GREATER_EQUAL, m->kv_idx, zero),
                        hfx_op2(g, HFX_OP_GREATER_EQUAL, m->q_idx, zero)); /* [S,T]: all */
    m->visible = hfx_op2(g, HFX_OP_AND, m->keep, m->causal);
    m->both_ways = true;
}

void hfx_mask_add_blocks(hfx_graph *g, hfx_mask_builder *m, hfx_value *token_type_ids, hfx_mask_blocks kind) {
    hfx_value *zero = hfx_const_i64(g, 0), *block; /* [B,T]: each key's block, -1 for none */
    if (kind == HFX_BLOCKS_PREFIX) {
        block = hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, token_type_ids, zero), zero, hfx_const_i64(g, -1));
    } else {
        hfx_value *image = kind == HFX_BLOCKS_VISION_RUNS_WINDOWED
                               ? hfx_op2(g, HFX_OP_OR, hfx_op2(g, HFX_OP_EQUAL, token_type_ids, hfx_const_i64(g, 1)),
                                         hfx_op2(g, HFX_OP_EQUAL, token_type_ids, hfx_const_i64(g, 2)))
                               : hfx_op2(g, HFX_OP_EQUAL, token_type_ids, hfx_const_i64(g, 1)); /* [B,T] */
        /* a run of image tokens is one block: its tokens have seen the same number of text tokens, and
         * runs differ in it (a text token lies between two); text tokens get -1 */
        hfx_value *texts = hfx_cumsum(g, hfx_cast(g, hfx_op1(g, HFX_OP_NOT, image), HFX_DTYPE_I64), 1);
        block = hfx_where(g, image, texts, hfx_const_i64(g, -1));
    }
    /* each query's block: the one at its slot, picked by a one-hot sum */
    hfx_value *at = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, m->kv_idx, m->q_idx), HFX_DTYPE_I64); /* [S,T] */
    int64_t axis = 2;
    hfx_value *q_block = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, block, 1), at), 1,
                                    &axis); /* [B,S,1] */
    hfx_value *same = hfx_op2(g, HFX_OP_EQUAL, q_block, hfx_unsqueeze(g, block, 1)); /* [B,S,T] */
    same = hfx_op2(g, HFX_OP_AND, same, hfx_op2(g, HFX_OP_GREATER_EQUAL, q_block, zero));
    hfx_value *blocked = hfx_op2(g, HFX_OP_AND, m->keep, hfx_op2(g, HFX_OP_OR, m->causal, hfx_unsqueeze(g, same, 1)));
    if (kind == HFX_BLOCKS_VISION_RUNS_WINDOWED) {
        m->windowed = blocked;
        return;
    }
    m->visible = blocked;
    if (kind == HFX_BLOCKS_PREFIX) m->beyond_window = hfx_op2(g, HFX_OP_AND, m->keep, hfx_unsqueeze(g, same, 1));
}

/* [S,T]: the key is within the query's causal window (`window` 0: all earlier keys) */
static hfx_value *causal_window(hfx_graph *g, const hfx_mask_builder *m, int64_t window) {
    if (window <= 0) return m->causal;
    hfx_value *oldest = hfx_op2(g, HFX_OP_SUB, m->q_idx, hfx_const_i64(g, window));
    return hfx_op2(g, HFX_OP_AND, m->causal, hfx_op2(g, HFX_OP_GREATER, m->kv_idx, oldest));
}

hfx_value *hfx_mask_bias_where_then_add(hfx_graph *g, const hfx_mask_builder *m, int64_t window) {
    /* hidden by the where (outside the causal window) and by the added mask (later, or padding) */
    hfx_value *by_where = hfx_op1(g, HFX_OP_NOT, causal_window(g, m, window));        /* [S,T] */
    hfx_value *by_mask = hfx_op1(g, HFX_OP_NOT, m->visible);                           /* [B,1,S,T] */
    hfx_value *either = hfx_where(g, hfx_op2(g, HFX_OP_AND, by_where, by_mask), hfx_const_f32(g, -INFINITY),
                                  hfx_const_f32(g, -FLT_MAX));
    return hfx_where(g, hfx_op2(g, HFX_OP_OR, by_where, by_mask), either, hfx_const_f32(g, 0.0f));
}

hfx_value *hfx_mask_bias_chunked(hfx_graph *g, const hfx_mask_builder *m, int64_t chunk) {
    int64_t axis = 1;
    hfx_value *zero = hfx_const_i64(g, 0);
    /* lp [B]: the row's leading padding; one chunk iff ⌊(q − lp)/c⌋ = ⌊(k − lp)/c⌋, compared as the
     * non-negative (q + (c − 1)·lp) / c, where truncating division floors */
    hfx_value *lead = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, hfx_cumsum(g, m->attention_mask, 1), zero), HFX_DTYPE_I64);
    hfx_value *lp = hfx_reduce(g, HFX_OP_REDUCE_SUM, lead, 1, &axis); /* [B,1] */
    hfx_value *off = hfx_op2(g, HFX_OP_MUL, lp, hfx_const_i64(g, chunk - 1));
    off = hfx_unsqueeze(g, hfx_unsqueeze(g, off, 2), 3); /* [B,1,1,1] */
    hfx_value *c = hfx_const_i64(g, chunk);
    hfx_value *qc = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, m->q_idx, off), c);  /* [B,1,S,1] */
    hfx_value *kc = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, m->kv_idx, off), c); /* [B,1,1,T] */
    hfx_value *visible = hfx_op2(g, HFX_OP_AND, m->visible, hfx_op2(g, HFX_OP_EQUAL, qc, kc));
    return hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
}

hfx_value *hfx_mask_bias(hfx_graph *g, const hfx_mask_builder *m, int64_t window) {
    hfx_value *visible = window > 0 && m->windowed ? m->windowed : m->visible;
    if (window > 0) {
        hfx_value *oldest = hfx_op2(g, HFX_OP_SUB, m->q_idx, hfx_const_i64(g, window));
        visible = hfx_op2(g, HFX_OP_AND, visible, hfx_op2(g, HFX_OP_GREATER, m->kv_idx, oldest));
        if (m->both_ways) { /* and as near after it */
            hfx_value *newest = hfx_op2(g, HFX_OP_ADD, m->q_idx, hfx_const_i64(g, window));
            visible = hfx_op2(g, HFX_OP_AND, visible, hfx_op2(g, HFX_OP_LESS, m->kv_idx, newest));
        }
        if (m->beyond_window) visible = hfx_op2(g, HFX_OP_OR, visible, m->beyond_window);
    }
    /* a static cache's slots past this call's last are −∞, not −FLT_MAX: a query that sees no key (padding) then
     * spreads over the keys so far, as a growing cache's does (RecurrentGemma's convolution reads those rows) */
    if (!m->unwritten_slots) return hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
    int64_t axis = 0;
    hfx_value *unwritten = hfx_op2(g, HFX_OP_GREATER, m->kv_idx, hfx_reduce(g, HFX_OP_REDUCE_MAX, m->q_idx, 1, &axis));
    hfx_value *hidden = hfx_where(g, unwritten, hfx_const_f32(g, -INFINITY), hfx_const_f32(g, -FLT_MAX));
    return hfx_where(g, visible, hfx_const_f32(g, 0.0f), hidden);
}
