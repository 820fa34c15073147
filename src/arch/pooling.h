/* Sentence-embedding pooling as sentence-transformers computes it (its Pooling module's padded
 * path, then Normalize): what an encoder export appends when asked for a sentence embedding. */
#ifndef HFX_ARCH_POOLING_H
#define HFX_ARCH_POOLING_H

#include "arch/weights.h"
#include "hf/sentence.h"
#include "ir/graph.h"

/* x [B,S,H] the token embeddings, mask [B,S] i64 the attention mask → [B, E]: each mode's pooled vector,
 * concatenated in order (E = H·p->n), through p's Dense modules (their weights from w, which must then be given:
 * E their last out_features), then L2-normalized when p->normalize. */
hfx_value *hfx_sentence_embedding(hfx_graph *g, hfx_weights *w, const hfx_pooling *p, hfx_value *x, hfx_value *mask,
                                  hfx_dim batch, int64_t hidden);

#endif
