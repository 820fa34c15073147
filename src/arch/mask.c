#include "arch/mask.h"

#include <float.h>

hfx_value *hfx_mask_slots_after_past(hfx_graph *g, hfx_value *attention_mask, hfx_dim seq,
                                     hfx_value *seq_len) {
    hfx_value *total = hfx_dim_of(g, attention_mask, 1);
    hfx_value *past = hfx_op2(g, HFX_OP_SUB, total, seq_len);
    return hfx_range(g, past, total, hfx_const_i64(g, 1), seq);
}

void hfx_mask_init(hfx_graph *g, hfx_mask_builder *m, hfx_value *attention_mask,
                   hfx_value *q_slots) {
    m->attention_mask = attention_mask;
    hfx_value *total = hfx_dim_of(g, attention_mask, 1);
    m->q_idx = hfx_unsqueeze(g, q_slots, 1);
    m->kv_idx = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), total, hfx_const_i64(g, 1),
                                           attention_mask->dims[1]), 0);
    hfx_value *causal = hfx_op2(g, HFX_OP_LESS_EQUAL, m->kv_idx, m->q_idx); /* [S,T] */
    hfx_value *keep = hfx_cast(g, attention_mask, HFX_DTYPE_BOOL);
    keep = hfx_unsqueeze(g, hfx_unsqueeze(g, keep, 1), 1); /* [B,1,1,T] */
    m->visible = hfx_op2(g, HFX_OP_AND, keep, causal);     /* [B,1,S,T] */
}

hfx_value *hfx_mask_bias(hfx_graph *g, const hfx_mask_builder *m, int64_t window) {
    hfx_value *visible = m->visible;
    if (window > 0) {
        hfx_value *oldest = hfx_op2(g, HFX_OP_SUB, m->q_idx, hfx_const_i64(g, window));
        visible = hfx_op2(g, HFX_OP_AND, visible, hfx_op2(g, HFX_OP_GREATER, m->kv_idx, oldest));
    }
    return hfx_where(g, visible, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
}
