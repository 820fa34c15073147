/* Architectures: config.json's "architectures"[0] → a builder that emits the same computation
 * as transformers' modeling file. The registry (registry.c) is the one list of what hfx
 * supports; each family file holds a table of descriptors that differ only in data. */
#ifndef HFX_ARCH_ARCH_H
#define HFX_ARCH_ARCH_H

#include "hf/checkpoint.h"
#include "ir/graph.h"

/* What the caller fixes about a graph: the dtype weights and activations use, and the dims of
 * the batch and sequence axes (constants, or symbols already registered in the graph). */
typedef struct hfx_build_opts {
    hfx_dtype dtype;
    hfx_dim batch, seq;
} hfx_build_opts;

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

/* Comma-separated list of supported architectures. */
const char *hfx_arch_supported(void);

/* ---- for family files ---- */

typedef struct hfx_arch_family {
    hfx_status (*parse)(const void *desc, const hfx_checkpoint *ck, hfx_arena *arena,
                        void **cfg, hfx_error *err);
    hfx_status (*build_forward)(const void *desc, const void *cfg, const hfx_checkpoint *ck,
                                const hfx_build_opts *opts, hfx_graph *g, hfx_error *err);
} hfx_arch_family;

#endif
