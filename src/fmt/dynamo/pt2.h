/* The .pt2 archive writer (torch.export.save's layout) for an ATen program, and how the program
 * is called (its pytree specs and sample inputs). Internal to the dynamo backend. */
#ifndef HFX_FMT_DYNAMO_PT2_H
#define HFX_FMT_DYNAMO_PT2_H

#include <jansson.h>

#include "fmt/aten.h"
#include "fmt/dynamo/pickle.h"
#include "io/outdir.h"
#include "ir/cache.h"

/* How a program is called, as torch.export records it: the pytree specs of its arguments and
 * result (treespec JSON texts), the user part of the graph's inputs in flattened order (a
 * tensor per user input, {"as_none": true} per None leaf, {"as_bool"/"as_int": v} per other constant), the forward's
 * parameter names, and
 * sample inputs of the same structure. */
typedef struct hfx_pt2_call {
    json_t *in_spec, *out_spec; /* strings */
    json_t *graph_inputs;       /* Arguments */
    json_t *arg_names;          /* strings */
    json_t *constant_names;     /* per constant among graph_inputs, in order: the keyword it is (a constant input of
                                   the signature), or null (a dict's None entry: no spec); NULL: none */
    hfx_pickle sample;          /* ((args...), {kwargs}) */
} hfx_pt2_call;

/* Whether a structured keyword's entries ("name.0", "name.1", ... as keys[n]) are a list's (indices in order), not a
 * dict's. */
bool hfx_pt2_entries_are_list(const char *const *keys, int n);

/* forward(*user_inputs) returning one tensor or a tuple (hfx's own profiles). */
hfx_status hfx_pt2_positional_call(const hfx_aten_program *p, hfx_pt2_call *call, hfx_error *err);

/* forward(**user_inputs) returning transformers' `output_class` over the outputs, named as the graph names them:
 * a plain forward called as the model (transformers.exporters' calls of its own programs). */
hfx_status hfx_pt2_keyword_call(const hfx_aten_program *p, const char *output_class, hfx_pt2_call *call,
                                hfx_error *err);

/* The Python system's call of a generation program (seed_call.c): keywords, the cache a
 * transformers Cache object, the result a ModelOutput with logits and cache. Names the program's
 * user inputs, puts them in the order the call flattens them, and sets the hints of its batch
 * (1) and cache-length symbols as that system does. */
hfx_status hfx_pt2_seed_call(hfx_aten_program *p, const hfx_seed_call *sc, hfx_pt2_call *call, hfx_error *err);

/* The same call's pytree specs from the graph alone (export.json's ExportMetadata in every format: the Python system's
 * loader reads them): *in_spec ((), {kwargs}) and *out_spec (the ModelOutput with its cache), as torch's
 * treespec_dumps writes them; owned by the caller. HFX_ERR_UNSUPPORTED where hfx_pt2_seed_call writes no such call
 * (sliding-window or recurrent layers, an encoder-decoder) or the graph returns no logits. */
hfx_status hfx_pt2_seed_specs(const hfx_graph *g, const hfx_seed_call *sc, json_t **in_spec, json_t **out_spec,
                              hfx_error *err);

void hfx_pt2_call_free(hfx_pt2_call *call);

/* Write p as the archive `file` in out, its records under the folder `root` (the archive's
 * name without ".pt2", as torch.export.save names it), called as `call` says (its sample is
 * written, so consumed). Parameters stream
 * from their checkpoint views; their shapes must be constant. */
hfx_status hfx_pt2_write(const hfx_aten_program *p, hfx_pt2_call *call, const char *root, hfx_outdir *out,
                         const char *file, hfx_error *err);

/* ---- treespec building blocks (the JSON torch's pytree serializer writes) ---- */

/* A leaf: {"type": null, "context": null, "children_spec": []}. */
json_t *hfx_pt2_leaf_spec(void);

/* A node of `type` (a registered type name) with `context` (a JSON string of its dumped
 * context, or NULL for "null") and `children` (consumed). */
json_t *hfx_pt2_spec_node(const char *type, json_t *context, json_t *children);

/* j dumped as Python's json.dumps writes it (", " and ": " separators), as a JSON string;
 * consumes j. */
json_t *hfx_pt2_dumps(json_t *j);

/* The spec text of a call ((), {keys[i]: children[i]}) and of a result `node`; consume them. */
json_t *hfx_pt2_kwargs_spec(json_t *keys, json_t *children);

/* The specs of a call (), {names[i]: tensor} and of a result <output_class>(names[i]: tensor); consume names. */
json_t *hfx_pt2_flat_in_spec(json_t *names);
json_t *hfx_pt2_class_spec(const char *output_class, json_t *names);

/* output_classes.c: the registered type name of transformers' output class `cls` ("CausalLMOutputWithPast" →
 * "transformers.modeling_outputs.CausalLMOutputWithPast"; a model module's own class under its module) in buf; whether
 * `cls` is one hfx knows and each of names[n] is one of its fields. */
const char *hfx_pt2_output_type(const char *cls, char *buf, size_t size);
bool hfx_pt2_output_fields(const char *cls, const char *const *names, int n);
json_t *hfx_pt2_spec_text(json_t *node);

/* {"as_tensor": {"name": <value's name>}} */
json_t *hfx_pt2_tensor_arg(const hfx_aten_program *p, int value);

#endif
