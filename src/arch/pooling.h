/* Sentence-embedding pooling as sentence-transformers computes it (its Pooling module's padded
 * path, then Normalize): what an encoder export appends when asked for a sentence embedding. */
#ifndef HFX_ARCH_POOLING_H
#define HFX_ARCH_POOLING_H

#include "hf/sentence.h"
#include "ir/graph.h"

/* x [B,S,H] the token embeddings, mask [B,S] i64 the attention mask → [B, H·p->n]: each mode's
 * pooled vector, concatenated in order, then L2-normalized when p->normalize. */
hfx_value *hfx_sentence_embedding(hfx_graph *g, const hfx_pooling *p, hfx_value *x, hfx_value *mask, hfx_dim batch,
                                  int64_t hidden);

#endif
