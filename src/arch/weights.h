/* Fetching checkpoint tensors for a builder: each fetch checks presence, rank and shape against
 * what config.json implies and marks the tensor used; hfx_weights_finish then reports tensors
 * the builder never used (a checkpoint with weights we would silently drop is refused), except
 * those known to be unused (rotary inv_freq buffers, a tied lm_head). */
#ifndef HFX_ARCH_WEIGHTS_H
#define HFX_ARCH_WEIGHTS_H

#include "hf/checkpoint.h"
#include "ir/graph.h"

typedef struct hfx_weights {
    const hfx_checkpoint *ck;  /* borrowed */
    hfx_graph *g;              /* borrowed */
    hfx_dtype dtype;           /* weights are read as this dtype */
    unsigned char *used;       /* owned: one flag per checkpoint tensor (name order) */
    const char *architecture;  /* for messages */
} hfx_weights;

hfx_status hfx_weights_init(hfx_weights *w, const hfx_checkpoint *ck, hfx_graph *g,
                            hfx_dtype dtype, const char *architecture, hfx_error *err);
void hfx_weights_free(hfx_weights *w);

/* The tensor named by fmt..., required to have `rank` dims equal to `shape`; on failure the
 * graph records the error and a placeholder comes back. */
hfx_value *hfx_weight(hfx_weights *w, int rank, const int64_t *shape, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Whether the checkpoint has the tensor (does not mark it used). */
bool hfx_weight_exists(const hfx_weights *w, const char *name);

/* Mark a tensor as deliberately unused (e.g. lm_head.weight of a tied model). */
void hfx_weight_ignore(hfx_weights *w, const char *name);

/* HFX_OK when every tensor was used or is known to be unused; otherwise HFX_ERR_UNSUPPORTED
 * naming the first few leftovers. */
hfx_status hfx_weights_finish(hfx_weights *w, hfx_error *err);

#endif
