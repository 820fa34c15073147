/* Architectures: config.json's "architectures"[0] → a builder that emits the same computation
 * as transformers' modeling file. The registry (registry.c) is the one list of what hfx
 * supports; each family file holds a table of descriptors that differ only in data. */
#ifndef HFX_ARCH_ARCH_H
#define HFX_ARCH_ARCH_H

#include "hf/checkpoint.h"
#include "ir/graph.h"

typedef enum hfx_cache_kind {
    HFX_CACHE_NONE,    /* plain forward: no cache inputs or outputs */
    HFX_CACHE_DYNAMIC, /* present.{i}.key/value out; past_key_values.{i}.* in when has_past */
    HFX_CACHE_STATIC   /* input./output.past_key_values.{i}.* pairs [B,KV,M,D], cache_position */
} hfx_cache_kind;

/* What the caller fixes about a graph: the dtype weights and activations use, the dims of the
 * batch and sequence axes (constants, or symbols already registered in the graph) and, for
 * generation, the cache layout (docs/GENERATION.md). */
typedef struct hfx_build_opts {
    hfx_dtype dtype;
    hfx_dim batch, seq;
    hfx_cache_kind cache;
    bool has_past;       /* dynamic cache: take past_key_values inputs of length `past` */
    hfx_dim past;
    hfx_dim max_cache;   /* static cache: M */
    bool logits_last;    /* logits of the last position only: [B,1,V] */
    bool moe_gather;     /* mixture of experts: gather each token's k experts (few tokens per
                            call) instead of running every expert (many) */
} hfx_build_opts;

/* Cache geometry of one layer, for metadata. */
typedef struct hfx_layer_cache {
    int64_t kv_heads, key_dim, value_dim;
    int64_t sliding_window; /* 0: full attention */
} hfx_layer_cache;

typedef struct hfx_arch_model hfx_arch_model; /* a parsed config for one builder */

/* Parse config.json for the architecture it names. Unknown architectures and unsupported config
 * values are errors that list what is supported. Allocations come from `arena`. */
hfx_status hfx_arch_open(const hfx_checkpoint *ck, hfx_arena *arena, const hfx_arch_model **out,
                         hfx_error *err);

/* The architecture string ("LlamaForCausalLM"). */
const char *hfx_arch_name(const hfx_arch_model *m);

/* Build the plain forward graph into `g`: inputs, weights (checked against the checkpoint,
 * leftovers refused), outputs and metadata. */
hfx_status hfx_arch_build_forward(const hfx_arch_model *m, const hfx_checkpoint *ck,
                                  const hfx_build_opts *opts, hfx_graph *g, hfx_error *err);

/* Whether the architecture can be exported for generation (a causal LM with a KV cache), and
 * its cache geometry: fills up to `max` layers and returns the layer count; -1 when the
 * architecture has no cache. */
int hfx_arch_cache_layers(const hfx_arch_model *m, hfx_layer_cache *layers, int max);

/* transformers' generate re-encodes the whole sequence once it reaches this many tokens (Phi-3
 * with longrope: original_max_position_embeddings + 1); 0 when it never does. */
int64_t hfx_arch_recompute_at(const hfx_arch_model *m);

/* Comma-separated list of supported architectures. */
const char *hfx_arch_supported(void);

/* ---- for family files ---- */

typedef struct hfx_arch_family {
    hfx_status (*parse)(const void *desc, const hfx_checkpoint *ck, hfx_arena *arena,
                        void **cfg, hfx_error *err);
    hfx_status (*build_forward)(const void *desc, const void *cfg, const hfx_checkpoint *ck,
                                const hfx_build_opts *opts, hfx_graph *g, hfx_error *err);
    int (*cache_layers)(const void *cfg, hfx_layer_cache *layers, int max); /* NULL: no cache */
    int64_t (*recompute_at)(const void *cfg);                               /* NULL: never */
} hfx_arch_family;

#endif
