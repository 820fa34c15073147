/* What a generation graph caches, beyond its tensors: each layer's geometry, and the cache as
 * the Python system's callers hold it (a transformers Cache object), which the torch-side
 * formats describe in their call signatures and sample inputs. Plain data; no functions. */
#ifndef HFX_IR_CACHE_H
#define HFX_IR_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Cache geometry of one layer. */
/* A recurrent layer's state: inputs past.{i}.<name>, outputs present.{i}.<name>. */
typedef struct hfx_layer_state {
    const char *name;   /* "conv", "ssm"; an n-gram layer's "ple_conv", "ngram" (I32) */
    int rank;           /* dims after the batch */
    int64_t dims[3];    /* [channels, kernel − 1], [heads, head_dim, state] */
} hfx_layer_state;

typedef struct hfx_layer_cache {
    int64_t kv_heads, key_dim, value_dim;
    int64_t sliding_window; /* 0: full attention */
    const char *layer_type; /* transformers' layer_types entry ("full_attention"), NULL when the
                               architecture's config has no layer_types */
    int n_states;           /* a recurrent layer's states (kv_heads 0): LFM2's short convolution
                               has one, a Mamba2 mixer two; 0 for attention */
    hfx_layer_state states[4];
    int64_t index_dim;      /* a lightning indexer's keys [B, 1, T, index_dim] beside the keys and values (DeepSeek
                               V3.2's sparse attention); 0: none */
} hfx_layer_cache;

/* A keyword the caller passes as one Python constant at every call, which a torch program takes as a constant input
 * (a multimodal model's call of its language model: input_ids=None, logits_to_keep=0, output_router_logits=False). */
typedef enum hfx_constant_kind { HFX_CONSTANT_NONE, HFX_CONSTANT_FALSE, HFX_CONSTANT_INT } hfx_constant_kind;
typedef struct hfx_keyword_constant {
    const char *name; /* NULL: the end of a list */
    hfx_constant_kind kind;
    int64_t value;    /* HFX_CONSTANT_INT's */
} hfx_keyword_constant;

/* A generation graph in the Python system's I/O profile ("io": "seed"), as its torch-side
 * callers see it: keyword arguments, the cache a transformers StaticCache or DynamicCache
 * object, the result a transformers ModelOutput holding `logits` and `cache`. */
typedef struct hfx_seed_call {
    const char *output_class; /* the ModelOutput class (hfx_pt2_output_type names its module):
                                 "CausalLMOutputWithPast"; NULL with !bare: the call is not recorded (refused) */
    const char *const *forward_args; /* the forward's keywords in its order, NULL-terminated */
    bool is_static;           /* StaticCache (fixed slots, a write counter per layer), else DynamicCache */
    bool filled;              /* the call takes a cache an earlier call wrote (a decode step) */
    int64_t max_cache_len;    /* a static cache's slots */
    int n_layers;
    const hfx_layer_cache *layers;
    const hfx_keyword_constant *constants; /* NULL or ended by a NULL name: keywords passed as constants (constant
                                              inputs) */
    const char *const *step_nones; /* ... and those a step is passed as None (Mamba's generate: attention_mask) */
    bool bare;                /* returns its tensors (one, or a tuple), no ModelOutput, and takes no cache (lm_head) */
    const char *encoder_outputs; /* the ModelOutput class its encoder_outputs keyword holds; NULL: none */
} hfx_seed_call;

/* Where keyword key[0, len) comes in sc's forward (forward_args' index; unknown ones last): the order of the call's
 * arguments, which the torch formats' writers follow. */
static inline int hfx_seed_call_rank(const hfx_seed_call *sc, const char *key, size_t len) {
    int i = 0;
    for (; sc->forward_args && sc->forward_args[i]; i++)
        if (strlen(sc->forward_args[i]) == len && !strncmp(sc->forward_args[i], key, len)) return i;
    return i;
}

/* Whether any of sc's layers has a sliding window (transformers' sliding-window cache layers). */
static inline bool hfx_seed_call_slides(const hfx_seed_call *sc) {
    for (int i = 0; i < sc->n_layers; i++)
        if (sc->layers[i].sliding_window) return true;
    return false;
}

#endif
