/* Architectures: config.json's "architectures"[0] → a builder that emits the same computation
 * as transformers' modeling file. The registry (registry.c) is the one list of what hfx
 * supports; each family file holds a table of descriptors that differ only in data. */
#ifndef HFX_ARCH_ARCH_H
#define HFX_ARCH_ARCH_H

#include "hf/checkpoint.h"
#include "hf/sentence.h"
#include "ir/cache.h"
#include "ir/graph.h"

typedef enum hfx_cache_kind {
    HFX_CACHE_NONE,    /* plain forward: no cache inputs or outputs */
    HFX_CACHE_DYNAMIC, /* present.{i}.key/value out; past_key_values.{i}.* in when has_past */
    HFX_CACHE_STATIC   /* input./output.past_key_values.{i}.* pairs [B,KV,M,D], cache_position */
} hfx_cache_kind;

/* Whose input/output names and cache contract a generation graph follows (docs/GENERATION.md):
 * optimum's (past_key_values.{i}.key / present.{i}.key, a [B, T] padding mask, cache_position for
 * a static cache: what onnxruntime-genai and transformers.js run), or the Python system's,
 * transformers.exporters' (cache.layers.{i}.keys/values, a per-layer write counter
 * cumulative_length, a 4-D boolean attention mask: what its documented decode loops run). */
typedef enum hfx_io_profile { HFX_IO_OPTIMUM, HFX_IO_SEED } hfx_io_profile;

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
    hfx_io_profile io;   /* the names and cache contract of generation graphs */
    bool reads_state;    /* the component reads the cache an earlier call wrote (the seed's static
                            prefill starts one instead) */
    hfx_pooling pooling; /* a sentence embedding after the encoder (n = 0: none); only for
                            families whose `pools` is set */
    bool states_only;    /* a bare encoder's last_hidden_state alone, its pooler unused (a runtime's embedding
                            pipeline pools): `pooling` then only says how, for the export's metadata */
    const char *component; /* the component being built (hfx_component.name); NULL: a plain forward */
    hfx_dim source_seq;  /* the sequence length the export chose before a decode step fixed `seq` to
                            1: the encoder's length in an encoder-decoder's decoder components of a
                            static export */
    bool stateful;       /* the format keeps state inside the model (OpenVINO's variables), so what
                            the first call computes can stay there (HFX_STATE_ONCE) */
    bool one_graph;      /* the export's decoder serves prompt and steps (HFX_EXPORT_GENERATION_ONE_GRAPH,
                            a multi-token decode) */
} hfx_build_opts;

/* What an export writes: the plain forward pass, the two graphs of a generation loop (the prompt,
 * then one token per call), or one graph that serves prompt and steps alike. */
typedef enum hfx_export_kind {
    HFX_EXPORT_FORWARD,
    HFX_EXPORT_GENERATION,
    HFX_EXPORT_GENERATION_ONE_GRAPH,
    HFX_EXPORT_GENERATION_MULTI, /* the prompt graph and a step of any query length (the seed's
                                    multi_token_decode) */
    HFX_EXPORT_KINDS_
} hfx_export_kind;

/* One graph of an export, as its family declares it; the exporter loops over these. */
/* The layouts a component is written in (a family whose OpenVINO stateful layout splits a graph as optimum-intel's
 * loaders want it) */
typedef enum hfx_component_when {
    HFX_WHEN_ALWAYS,       /* every layout */
    HFX_WHEN_STATEFUL,     /* only where the state lives inside the graphs (OpenVINO's stateful layout) */
    HFX_WHEN_NOT_STATEFUL, /* only where it does not */
    HFX_WHEN_SEED,         /* only in the Python system's profile (io "seed": its split of a multimodal model) */
    HFX_WHEN_NOT_SEED,     /* only outside it */
} hfx_component_when;

typedef struct hfx_component {
    const char *name;          /* export.json's key, the per-component config's key, the file stem */
    const char *role;          /* the export metadata's role */
    bool single_token;         /* the query length is 1 (a decode step) */
    bool reads_state;          /* takes the state an earlier call wrote (a growing cache's past) */
    int logits_to_keep;        /* default of the config key: 1 the last position, 0 every one;
                                  -1: every position, the key not read (a plain forward) */
    const char *stateful_stem; /* its file in a stateful layout of several graphs, optimum-intel's
                                  openvino_<stem>_model.xml (a VLM's "language"); NULL: its name */
    hfx_component_when when;
} hfx_component;

typedef struct hfx_component_set {
    const hfx_component *items;
    int n;                     /* 0: the family has no export of this kind */
} hfx_component_set;

typedef struct hfx_arch_model hfx_arch_model; /* a parsed config for one builder */

/* Parse config.json for the architecture it names, or, where its `architectures` is missing or null, the class
 * transformers' Auto class for `task` builds from its model_type (task NULL: the one class hfx exports for it, if only
 * one). A task the named class does not serve is HFX_ERR_INVALID. Unknown architectures and unsupported config
 * values are errors that list what is supported. Allocations come from `arena`. */
hfx_status hfx_arch_open(const hfx_checkpoint *ck, const char *task, hfx_arena *arena, const hfx_arch_model **out,
                         hfx_error *err);

/* optimum's task names (auto_class.c): whether `task` is one hfx knows ("-with-past" forms too); their list for
 * messages, into buf; the class transformers' Auto class for `task` builds from `model_type`, among those hfx exports
 * (task NULL: the only one hfx exports for model_type; NULL: none, or several); every "--task T (Class)" for
 * model_type, into buf. */
bool hfx_task_known(const char *task);
const char *hfx_task_names(char *buf, size_t size);
const char *hfx_auto_class(const char *model_type, const char *task);
const char *hfx_auto_choices(const char *model_type, char *buf, size_t size);

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

/* How many prompt tokens one call of a generation graph should take at most, for speed: a
 * recurrent mixer's scan costs the square (or cube) of a call's tokens, so a caller feeds a long
 * prompt in pieces of this many through a graph that carries its state (the same result as one
 * call); 0 when a prompt goes in one call. */
int64_t hfx_arch_prompt_piece(const hfx_arch_model *m);

/* transformers' forward of the model as a torch caller sees it (the Python system's torch
 * programs are called so): its keyword parameters among the graph inputs, in the forward's
 * order, and the transformers.modeling_outputs class it returns. */
typedef struct hfx_torch_signature {
    const char *const *args;  /* NULL-terminated: "input_ids", "attention_mask", "position_ids", "cache" */
    const char *output_class; /* "CausalLMOutputWithPast"; NULL: not recorded (a family without a signature) */
    const char *const *step_nones; /* NULL-terminated or NULL: keywords the model's generate passes as None
                                      at a step, which the graph does not take (Mamba's attention_mask) */
    const hfx_keyword_constant *constants; /* NULL or ended by a NULL name: keywords the caller passes as one
                                              constant at every call, which the program takes as constant inputs (a
                                              multimodal model's call of its language model: input_ids=None) */
    bool bare;                     /* the call returns its tensors as they are, one or a tuple (a module's, not a
                                      ModelOutput: lm_head), and takes no cache */
    const char *encoder_outputs;   /* the ModelOutput class of its encoder_outputs keyword (an encoder-decoder's
                                      decoder graphs: the encoder's own result); NULL: none */
} hfx_torch_signature;
hfx_torch_signature hfx_arch_torch_signature(const hfx_arch_model *m);
/* The call of one generation component as the Python system's split makes it (its submodule's forward), where the
 * family's components are called differently (a multimodal model's language_model and lm_head); args NULL: the
 * component is not one of that system's (called positionally); args set but neither output_class nor bare: its call
 * is not recorded for this model. Else hfx_arch_torch_signature. */
hfx_torch_signature hfx_arch_component_signature(const hfx_arch_model *m, const char *component);

/* The components of an export of `kind` (n = 0: this model has none, e.g. an encoder asked for
 * generation), those of every layout (each one's `when` says which it is written in). */
hfx_component_set hfx_arch_components(const hfx_arch_model *m, hfx_export_kind kind);

/* The graph inputs shaped [batch, sequence] (they share both axes), NULL-terminated; the first
 * is the one sample shapes are taken from. */
const char *const *hfx_arch_sequence_inputs(const hfx_arch_model *m);

/* Whether the architecture can end in a sentence embedding (hfx_build_opts.pooling): the bare
 * encoders, whose token embeddings sentence-transformers pools. */
bool hfx_arch_pools(const hfx_arch_model *m);

/* How onnxruntime-genai runs the family's one-graph generation export (genai_config.json). */
typedef enum hfx_genai_layout {
    HFX_GENAI_DECODER, /* one decoder graph for prompt and steps: a causal LM's */
    HFX_GENAI_WHISPER, /* an audio encoder that computes the cross-attention cache, then its decoder */
    HFX_GENAI_NONE     /* genai runs none of the family's exports */
} hfx_genai_layout;

hfx_genai_layout hfx_arch_genai(const hfx_arch_model *m);

/* onnxruntime-genai's model type for a model with recurrent layers (the type whose runtime holds
 * the same states); NULL where genai has none, or the model has no recurrent layers. */
const char *hfx_arch_genai_type(const hfx_arch_model *m);

/* The supported architectures a message about `name` lists, into buf (size ≥ 64); returns buf: those with name's
 * class suffix as "*ForCausalLM: Llama, Mistral, ..." (every name where name is NULL or has no suffix of theirs),
 * ending in ", and N more (README.md lists them)" when buf cannot hold them all. */
const char *hfx_arch_supported(const char *name, char *buf, size_t size);

/* ---- for family files ---- */

typedef struct hfx_arch_family {
    size_t cfg_size; /* the family's parsed config; the registry allocates it zeroed for parse */
    /* Read config.json (c) into cfg; further allocations from `arena`. */
    hfx_status (*parse)(const void *desc, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err);
    hfx_status (*build_forward)(const void *desc, const void *cfg, const hfx_checkpoint *ck,
                                const hfx_build_opts *opts, hfx_graph *g, hfx_error *err);
    int (*cache_layers)(const void *cfg, hfx_layer_cache *layers, int max); /* NULL: no cache */
    int64_t (*recompute_at)(const void *cfg);                               /* NULL: never */
    hfx_component_set exports[HFX_EXPORT_KINDS_]; /* the components of each kind of export */
    const char *const *sequence_inputs;           /* see hfx_arch_sequence_inputs */
    hfx_torch_signature (*torch_signature)(const void *desc); /* NULL: a Llama-like causal LM's */
    hfx_torch_signature (*component_signature)(const void *desc, const char *component); /* see
                                                                      hfx_arch_component_signature; NULL: the same */
    bool (*pools)(const void *desc); /* builds a sentence embedding (opts.pooling); NULL: never */
    const char *const *(*sequence_inputs_of)(const void *cfg); /* the inputs as the config says; NULL:
                                                                  sequence_inputs */
    int64_t (*prompt_piece)(const void *cfg); /* see hfx_arch_prompt_piece; NULL: 0 */
    hfx_component_set (*components_of)(const void *cfg, hfx_export_kind kind); /* the components as the config says
                                                                                  (a second encoder); NULL: exports */
    hfx_genai_layout genai;                   /* see hfx_arch_genai */
    const char *(*genai_type)(const void *desc); /* see hfx_arch_genai_type; NULL: none */
} hfx_arch_family;

#endif
