/* Relative position buckets and the attention bias they index (transformers' T5 _relative_position_bucket: T5,
 * UMT5, WavLM): distance j − i of key j from query i, half the buckets exact, the rest logarithmic up to
 * max_distance, where they saturate; bidirectional: half of them per sign. */
#ifndef HFX_ARCH_RELATIVE_H
#define HFX_ARCH_RELATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/graph.h"

/* The bucket of distance `rel` (key − query), in float32 as torch computes it. */
int64_t hfx_relative_bucket(int64_t rel, bool bidirectional, int64_t buckets, int64_t max_distance);

/* The bias [1,heads,S,T] f32 from `table` [buckets, heads] (the checkpoint's embedding): for the query at position
 * q_pos[i] ([S] i64) and key j < T (key_len: T as an i64 scalar; key_dim its dim), the row of the bucket of
 * j − q_pos[i], which `buckets` [2·max_distance + 1] gives by distance clamped to ±max_distance. Gathered
 * element-wise over the rows repeated per query (no 2-D dynamic index: torch.export has no lowering of one). */
hfx_value *hfx_relative_bias(hfx_graph *g, hfx_value *table, const int64_t *buckets, int64_t max_distance,
                             hfx_value *q_pos, hfx_value *key_len, hfx_dim key_dim);

#endif
