/* The additive attention bias transformers' eager attention uses: 0 where query i may attend to
 * key j, the float32 minimum elsewhere. A key is visible when it is not padding
 * (attention_mask[b, j] = 1), not in the future (j ≤ past + i, by index in the cache, as
 * transformers' cache_position — not by position_ids), and, with a sliding window w, recent
 * enough (j > past + i − w). */
#ifndef HFX_ARCH_MASK_H
#define HFX_ARCH_MASK_H

#include <stdbool.h>

#include "ir/graph.h"

typedef struct hfx_mask_builder {
    hfx_value *attention_mask; /* [B,T] i64, T = past + S */
    hfx_value *q_idx;          /* [S,1] i64: past + i */
    hfx_value *kv_idx;         /* [1,T] i64: j */
    hfx_value *keep;           /* [B,1,1,T] bool: not padding */
    hfx_value *causal;         /* [S,T] bool: not in the future (or, with blocks, in the query's block) */
    hfx_value *visible;        /* [B,1,S,T] bool: padding and causality */
    bool unwritten_slots;      /* keys past the last query's slot exist (a static cache's): hfx_mask_bias
                                * makes them −∞; hfx_mask_init clears it, the caller sets it */
    bool both_ways;            /* hfx_mask_both_ways: a window reaches as far after the query as before it */
    hfx_value *beyond_window;  /* [B,1,S,T] bool: keys a query sees whatever its window (PaliGemma's prefix block,
                                  which transformers ORs after the sliding window); NULL: none */
    hfx_value *windowed;       /* [B,1,S,T] bool: what the windowed biases start from where it differs from `visible`
                                  (HFX_BLOCKS_VISION_RUNS_WINDOWED's blocks); NULL: `visible` */
} hfx_mask_builder;

/* Prepare the shared parts from attention_mask [B,T] and the cache slots of the S queries,
 * `q_slots` [S] i64 (past + i for a growing cache; cache_position for a static one). */
void hfx_mask_init(hfx_graph *g, hfx_mask_builder *m, hfx_value *attention_mask,
                   hfx_value *q_slots);

/* Let every query see every key that is not padding, both ways (an encoder's attention: EuroBERT's, transformers'
 * create_bidirectional_mask); a window of w then keeps the keys with |i − j| < w. */
void hfx_mask_both_ways(hfx_graph *g, hfx_mask_builder *m);

/* Which tokens see each other both ways, by token_type_ids (transformers' block_sequence_ids). */
typedef enum {
    HFX_BLOCKS_NONE,
    HFX_BLOCKS_IMAGE_RUNS, /* each run of type-1 tokens (an image's) is a block (Gemma 3) */
    HFX_BLOCKS_VISION_RUNS_WINDOWED, /* each run of type-1 or type-2 tokens (an image's, a video's) is a block on the
                                        sliding layers alone, the full ones causal (Gemma 4) */
    HFX_BLOCKS_PREFIX      /* every type-0 token (the prompt: image and text) is one block, type-1 tokens (the
                              generated suffix) none (PaliGemma's prefix LM) */
} hfx_mask_blocks;

/* Add blocks of `kind` from token_type_ids [B,T] i64 over the same keys: a query in a block also sees the block's
 * later tokens (transformers' OR of the causal and the blockwise mask). A sliding window then applies to Gemma 3's
 * image runs (its AND of the window and that OR), not to PaliGemma's prefix (an OR after the windowed mask). */
void hfx_mask_add_blocks(hfx_graph *g, hfx_mask_builder *m, hfx_value *token_type_ids, hfx_mask_blocks kind);

/* The slots of S new tokens appended to a cache of T - S: range(T - S, T) as [S] i64, where T
 * is attention_mask's length and `seq_len` = S as an i64 scalar. */
hfx_value *hfx_mask_slots_after_past(hfx_graph *g, hfx_value *attention_mask, hfx_dim seq,
                                     hfx_value *seq_len);

/* The bias [B,1,S,T] f32 for full attention (window 0) or a sliding window of `window` keys: −FLT_MAX where hidden,
 * and, with m->unwritten_slots, −∞ at the slots past the last query's. */
hfx_value *hfx_mask_bias(hfx_graph *g, const hfx_mask_builder *m, int64_t window);

/* The bias [B,1,S,T] of chunked attention (Llama 4): causal, and the key in the query's chunk of `chunk`
 * slots, chunks counted from each row's first real token as transformers' left-padding offset does. */
hfx_value *hfx_mask_bias_chunked(hfx_graph *g, const hfx_mask_builder *m, int64_t chunk);

/* The same bias as GPT-Neo's eager attention makes it: where(causal window, scores, min) + the causal
 * padding mask, so a key hidden by both is −∞, by one −FLT_MAX. Rows that see no real key (padding
 * queries) then average over the keys hidden one way only, as transformers' do. */
hfx_value *hfx_mask_bias_where_then_add(hfx_graph *g, const hfx_mask_builder *m, int64_t window);

#endif
