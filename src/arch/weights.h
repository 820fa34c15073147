/* Fetching checkpoint tensors for a builder: each fetch checks presence, rank and shape against
 * what config.json implies and marks the tensor used; hfx_weights_finish then reports tensors
 * the builder never used (a checkpoint with weights we would silently drop is refused), except
 * those known to be unused (rotary inv_freq buffers, a tied lm_head). */
#ifndef HFX_ARCH_WEIGHTS_H
#define HFX_ARCH_WEIGHTS_H

#include "hf/checkpoint.h"
#include "ir/graph.h"

/* A rewrite of the names a builder asks for into the checkpoint's: a name starting with `from`
 * has that part replaced by `to` (the first rule that matches applies). A model nested in another
 * (a VLM's language model) is built with its own names and read from under the outer one's. */
typedef struct hfx_weight_rename {
    const char *from, *to;
} hfx_weight_rename;

typedef struct hfx_weights {
    const hfx_checkpoint *ck;  /* borrowed */
    hfx_graph *g;              /* borrowed */
    hfx_dtype dtype;           /* weights are read as this dtype */
    unsigned char *used;       /* owned: one flag per checkpoint tensor (name order) */
    const char *architecture;  /* for messages */
    const hfx_weight_rename *rename; /* NULL-`from`-terminated, or NULL: names are the checkpoint's */
    const hfx_weight_rename *stored; /* NULL-`from`-terminated, or NULL: where the renamed name is not in the checkpoint,
                                        the first rule whose `from` occurs in it and gives a name the checkpoint has
                                        replaces that part (the first occurrence) by `to` — the older names
                                        transformers' loader renames (WeightRenaming), and the forms its saving
                                        writes back */
    const hfx_weight_rename *const *alias; /* NULL-terminated, or NULL: other names of the same tensors (another
                                              transformers' module paths), where an adapter's names may follow them */
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

/* y (the linear `linear`'s output over x [..., in], [..., out]) plus its LoRA update where the checkpoint's adapter
 * (hfx_checkpoint_add_lora) targets it: y + scale·(x·Aᵀ)·Bᵀ, as peft computes it unmerged; y itself otherwise.
 * `linear` is the builder's name ("model.layers.0.self_attn.q_proj"), renamed as hfx_weight renames. */
hfx_value *hfx_weight_lora(hfx_weights *w, hfx_value *x, hfx_value *y, int64_t in, int64_t out, const char *linear);

/* The LoRA update alone, scale·(x·Aᵀ)·Bᵀ [..., out], or NULL where the adapter does not target `linear`: for a fused
 * weight read as parts (Phi-3's qkv_proj and gate_up_proj), each part adding its columns (hfx_weight_lora_part). */
hfx_value *hfx_weight_lora_update(hfx_weights *w, hfx_value *x, int64_t in, int64_t out, const char *linear);

/* y [..., len] plus columns [start, start + len) of `update` (hfx_weight_lora_update's; NULL: y itself). */
hfx_value *hfx_weight_lora_part(hfx_graph *g, hfx_value *y, hfx_value *update, int64_t start, int64_t len);

/* nn.Linear named by fmt...: `<name>.weight` [out, in] and, where bias, `<name>.bias` [out], over x [..., in] →
 * [..., out], with its LoRA update where the checkpoint's adapter targets it (hfx_weight_lora): the encoders',
 * encoder-decoders', towers' and projectors' linears. */
hfx_value *hfx_linear_named(hfx_weights *w, hfx_value *x, int64_t in, int64_t out, bool bias, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* nn.LayerNorm named by fmt... over x's last axis of width n: `<name>.weight` and `<name>.bias`, at eps. */
hfx_value *hfx_layer_norm_named(hfx_weights *w, hfx_value *x, int64_t n, double eps, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Whether the checkpoint has the tensor (does not mark it used). */
bool hfx_weight_exists(const hfx_weights *w, const char *name);

/* The rank of the checkpoint's tensor `name` (renames applied), or -1 when it has none. */
int hfx_weight_rank(const hfx_weights *w, const char *name);

/* The tensor `name` as hfx_weight reads it, but in f32 whatever the export's dtype (the parameters transformers keeps
 * in f32 in a half-precision model: its _keep_in_fp32_modules). */
hfx_value *hfx_weight_f32(hfx_weights *w, int rank, const int64_t *shape, const char *name);

/* An index table: the tensor `name` of that shape, I64, every value in [0, bound), as an I64 constant (DeepSeek V4's
 * token id → experts table). Anything else fails the graph naming the tensor (and the first value out of range). */
hfx_value *hfx_weight_indices(hfx_weights *w, int64_t bound, int rank, const int64_t *shape, const char *name);

/* A buffer transformers derives from config.json and saves, then loads as saved (Qwen4-Exp's n-gram hash constants):
 * where the checkpoint has `name`, I64 [n], its values into `values` (marked used); absent, `values` as they were.
 * false (the graph failed, naming it) when it is there but of another shape or dtype. */
bool hfx_weight_i64_values(hfx_weights *w, const char *name, int64_t n, int64_t *values);

/* The float tensor `name` [n] (renames applied) read now into `values` as f32, marked used (a value the export writes
 * outside the graphs: LLaVA-Next's image_newline in config.json). false: the graph failed, naming it. */
bool hfx_weight_float_values(hfx_weights *w, int64_t n, float *values, const char *name);

/* Axis `axis` of the checkpoint's tensor `name` (renames applied), or -1 when it has none (or not that axis). */
int64_t hfx_weight_dim(const hfx_weights *w, const char *name, int axis);

/* Mark a tensor as deliberately unused (e.g. lm_head.weight of a tied model). */
void hfx_weight_ignore(hfx_weights *w, const char *name);

/* Mark every tensor under `stack` ("encoder": "encoder.*"), and one named `stack` itself, as unused: the part of
 * the checkpoint another component of the export reads. Names are the checkpoint's (no rename). */
void hfx_weights_ignore_stack(hfx_weights *w, const char *stack);

/* Mark every tensor not fetched yet as unused: a component that reads a small part of a
 * checkpoint whose other components check the rest. */
void hfx_weights_ignore_rest(hfx_weights *w);

/* Mark as read every tensor of a layer numbered `first` or more, the layers named by `layer_fmt`
 * ("model.layers.%lld": the text around one %lld): a checkpoint's layers past num_hidden_layers,
 * multi-token-prediction heads (DeepSeek V3, GLM-4.5) that transformers drops on load. */
void hfx_weights_ignore_layers_from(hfx_weights *w, const char *layer_fmt, long long first);

/* HFX_OK when every tensor was used or is known to be unused; otherwise HFX_ERR_UNSUPPORTED
 * naming the first few leftovers. */
hfx_status hfx_weights_finish(hfx_weights *w, hfx_error *err);

#endif
