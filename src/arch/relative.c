/* Relative position buckets and their attention bias (relative.h). */
#include "arch/relative.h"

#include <math.h>

int64_t hfx_relative_bucket(int64_t rel, bool bidirectional, int64_t buckets, int64_t max_distance) {
    int64_t base = 0;
    if (bidirectional) {
        buckets /= 2;
        if (rel > 0) base = buckets;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;
    }
    int64_t max_exact = buckets / 2;
    if (rel < max_exact) return base + rel;
    float ratio = logf((float)rel / (float)max_exact) / (float)log((double)max_distance / (double)max_exact);
    int64_t large = max_exact + (int64_t)(ratio * (float)(buckets - max_exact));
    return base + (large < buckets - 1 ? large : buckets - 1);
}

hfx_value *hfx_relative_bias(hfx_graph *g, hfx_value *table, const int64_t *buckets, int64_t max_distance,
                             hfx_value *q_pos, hfx_value *key_len, hfx_dim key_dim) {
    int64_t D = max_distance, n = 2 * D + 1, heads = table->dims[1].c;
    hfx_value *by_dist = hfx_gather(g, table, hfx_const_bytes(g, HFX_DTYPE_I64, 1, &n, buckets), 0); /* [n, heads] */
    by_dist = hfx_transpose(g, hfx_cast(g, by_dist, HFX_DTYPE_F32), 2, (int64_t[]){1, 0});        /* [heads, n] */
    hfx_value *kv = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), key_len, hfx_const_i64(g, 1), key_dim), 0);
    hfx_value *q = hfx_transpose(g, hfx_unsqueeze(g, q_pos, 0), 2, (int64_t[]){1, 0}); /* [S,1] */
    hfx_value *dist = hfx_op2(g, HFX_OP_SUB, kv, q);                                     /* [S,T] */
    dist = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, dist, hfx_const_i64(g, -D)), hfx_const_i64(g, D));
    dist = hfx_op2(g, HFX_OP_ADD, dist, hfx_const_i64(g, D));
    hfx_dim S = q_pos->dims[0];
    hfx_value *s = hfx_unsqueeze(g, hfx_dim_of(g, q_pos, 0), 0), *h = hfx_unsqueeze(g, hfx_const_i64(g, heads), 0);
    hfx_value *idx_shape = hfx_concat(g, 3, (hfx_value *[]){h, s, hfx_unsqueeze(g, key_len, 0)}, 0);
    hfx_value *idx = hfx_expand(g, hfx_unsqueeze(g, dist, 0), idx_shape, 3, (hfx_dim[]){hfx_dim_const(heads), S, key_dim});
    hfx_value *row_shape = hfx_concat(g, 3, (hfx_value *[]){h, s, hfx_unsqueeze(g, hfx_const_i64(g, n), 0)}, 0);
    hfx_value *rows = hfx_expand(g, hfx_unsqueeze(g, by_dist, 1), row_shape, 3, (hfx_dim[]){hfx_dim_const(heads), S,
                                                                                           hfx_dim_const(n)});
    return hfx_unsqueeze(g, hfx_gather_elements(g, rows, idx, 2), 0); /* [1,heads,S,T] */
}
