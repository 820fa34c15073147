/* The backend-neutral graph.
 *
 * A graph owns an arena; values, nodes, names and attributes live in it and die with it. Op
 * constructors (hfx_op_*) only record: they check the inputs, infer the output shape and return
 * the new value; nothing is computed. An error inside a constructor (a shape mismatch) is a bug
 * in an architecture builder or an unchecked config value: the graph records the first one,
 * returns a placeholder value so the builder can go on, and hfx_graph_status reports it.
 *
 * Dims are constants, symbols (a name with min/max, e.g. batch_size in [1, 2^31)) or small
 * affine sums of symbols (past_sequence_length + sequence_length), so each backend can print
 * its own form: ONNX dim_param, OpenVINO -1 or 1..32, torch.export sympy expressions. */
#ifndef HFX_IR_GRAPH_H
#define HFX_IR_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/dtype.h"
#include "base/mapping.h"
#include "hfx/hfx.h"
#include "ir/dim.h"
#include "ir/init.h"
#include "ir/quant.h"

/* ---- Ops ---- */

typedef enum hfx_op {
#define X(e, name, lo, hi, outs, std) HFX_OP_##e,
#include "ir/ops.def"
#undef X
    HFX_OP_COUNT_
} hfx_op;

const char *hfx_op_name(hfx_op op);
/* The ONNX operator that computes the op from the same inputs with no attributes ("Add"), NULL
 * where there is none (ops.def). */
const char *hfx_op_standard_name(hfx_op op);
/* How many outputs the op's nodes have (ops.def). */
int hfx_op_outputs(hfx_op op);

enum { HFX_MAX_OUTPUTS = 2 };

/* One struct for every op's attributes; ops.def says which fields each reads. */
typedef struct hfx_attrs {
    int64_t ints[HFX_MAX_RANK]; /* perm, axes */
    int n_ints;
    int64_t axis, start, end;
    int64_t k;                  /* top_k, top_k_mask: how many */
    int64_t window;             /* attention: the sliding window its bias applies (0: none) */
    double f0, f1;              /* eps / scale, weight offset / soft-cap */
    hfx_dtype to;               /* cast target */
    int rank;                   /* reshape target rank, range length (rank 1) */
    hfx_dim dims[HFX_MAX_RANK];
    const hfx_quant *quant;     /* linear, gather: read the weight (table) stored quantized so
                                   (NULL: as it is) */
} hfx_attrs;

/* ---- Values and nodes ---- */

typedef struct hfx_node hfx_node;

typedef struct hfx_value {
    int id;                      /* index in the graph's value list */
    const char *name;            /* arena; NULL for intermediates (a backend names them) */
    hfx_dtype dtype;
    int rank;
    hfx_dim dims[HFX_MAX_RANK];
    hfx_node *producer;          /* NULL for graph inputs and constants */
    const hfx_init *init;        /* non-NULL for constants */
} hfx_value;

struct hfx_node {
    int id;
    hfx_op op;
    int n_in;
    hfx_value *in[16];           /* NULL marks an absent optional input */
    int n_out;                   /* hfx_op_outputs(op) */
    hfx_value *out[HFX_MAX_OUTPUTS]; /* out[0] is what the constructors return */
    hfx_attrs attrs;
};

/* ---- State: values a graph carries from one call to the next ----
 *
 * A KV cache, a convolution or recurrent state: declared once, read through a graph input (none
 * when this graph starts it, as a prefill does) and written through a graph output. Backends
 * take the declaration as it is: ONNX as input/output pairs, OpenVINO as ReadValue/Assign
 * variables, torch.export and ExecuTorch as mutated buffers. No backend reads names for it. */

typedef enum hfx_state_update {
    HFX_STATE_APPEND,  /* output = input with this call's entries appended on `axis` (growing cache) */
    HFX_STATE_WRITE,   /* output = input with this call's entries written in place (static cache) */
    HFX_STATE_REPLACE, /* output replaces input (a recurrent or convolution state) */
    HFX_STATE_ONCE     /* computed from the first call's inputs, then kept as it is (an encoder-
                          decoder's cross-attention keys and values): no input; only a format that
                          keeps state inside the model (OpenVINO) stores it, others return the
                          output each call */
} hfx_state_update;

typedef struct hfx_state {
    const char *name;          /* arena: what the state is ("past_key_values.0.key") */
    hfx_state_update update;
    int axis;                  /* APPEND: the axis that grows */
    hfx_value *in;             /* graph input with the value before the call; NULL: starts here */
    hfx_value *out;            /* graph output with the value after it */
} hfx_state;

/* How the Python system's torch-side callers hold a graph's states (io "seed"): declared by the
 * family with the states, so that no format recovers it from their names. */
typedef enum hfx_state_holder {
    HFX_HOLDER_CACHE,           /* one transformers Cache: a DynamicCache, or a StaticCache for a
                                   static build */
    HFX_HOLDER_ENCODER_DECODER  /* an EncoderDecoderCache: every layer's self-attention cache, then
                                   every layer's cross-attention cache */
} hfx_state_holder;

typedef struct hfx_meta {
    const char *key, *value;     /* arena */
} hfx_meta;

typedef struct hfx_graph {
    hfx_arena *arena;            /* owned */
    hfx_value **values;          /* owned array of arena values */
    int n_values, cap_values;
    hfx_node **nodes;            /* owned array, topological (construction) order */
    int n_nodes, cap_nodes;
    hfx_value **inputs, **outputs; /* owned arrays */
    int n_inputs, n_outputs, cap_inputs, cap_outputs;
    hfx_symbol symbols[16];
    int n_symbols;
    hfx_state *states;           /* owned array, declaration order */
    int n_states, cap_states;
    hfx_state_holder state_holder;
    hfx_meta meta[32];           /* key/values that travel inside the artifact */
    int n_meta;
    hfx_meta config[4];          /* fields the export adds to config.json beside the graph: key, JSON text of the value
                                    (optimum-intel's forms: LLaVA-Next's image_newline) */
    int n_config;
    bool failed;
    hfx_error err;               /* the first construction error */
} hfx_graph;

hfx_graph *hfx_graph_new(void);
void hfx_graph_free(hfx_graph *g);

/* HFX_OK, or the first error any constructor hit (copied into *err). */
hfx_status hfx_graph_status(const hfx_graph *g, hfx_error *err);

/* Record an error (first one wins) and return its status. */
hfx_status hfx_graph_fail(hfx_graph *g, hfx_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A symbol (returns its id; the same name returns the existing one). */
int hfx_graph_symbol(hfx_graph *g, const char *name, int64_t min, int64_t max);
/* A symbol derived from the others, ⌊of / div⌋ + add (div > 0, `of` ≥ 0 as sizes are), its range theirs so divided. */
int hfx_graph_symbol_derived(hfx_graph *g, const char *name, hfx_dim of, int64_t div, int64_t add);

hfx_value *hfx_graph_input(hfx_graph *g, const char *name, hfx_dtype dt, int rank,
                           const hfx_dim *dims);
/* Mark `v` as graph output `name` (renames it). */
void hfx_graph_output(hfx_graph *g, hfx_value *v, const char *name);
void hfx_graph_set_meta(hfx_graph *g, const char *key, const char *value);
/* Ask the export to add `key` to the config.json it writes, its value the JSON text `json` (copied). */
void hfx_graph_add_config(hfx_graph *g, const char *key, const char *json);

/* Declare state `name`; returns its index in g->states (-1 after an error). */
int hfx_graph_state(hfx_graph *g, const char *name, hfx_state_update update, int axis);
/* The state's value before the call, as graph input `input_name`. */
hfx_value *hfx_state_read(hfx_graph *g, int state, const char *input_name, hfx_dtype dt, int rank,
                          const hfx_dim *dims);
/* Its value after the call: `v` becomes graph output `output_name`. */
void hfx_state_write(hfx_graph *g, int state, hfx_value *v, const char *output_name);
/* The state whose input (is_input) or output is `v`, or NULL. */
const hfx_state *hfx_graph_state_of(const hfx_graph *g, const hfx_value *v, bool is_input);

/* ---- Constants ---- */

/* A constant over a mapped checkpoint tensor `name` (in mapping `m`, whose path messages name):
 * `data` holds `shape` elements of `src`, read as `dt` (float↔float conversion only). */
hfx_value *hfx_const_mapped(hfx_graph *g, const char *name, const hfx_mapping *m, const uint8_t *data,
                            hfx_dtype src, int rank, const int64_t *shape, hfx_dtype dt);
/* The same over llama.cpp blocks of `blocks` (a GGUF tensor), decoded while read. */
hfx_value *hfx_const_blocks(hfx_graph *g, const char *name, const hfx_mapping *m, const uint8_t *data,
                            const hfx_block_format *blocks, int rank, const int64_t *shape, hfx_dtype dt);
/* A constant from bytes computed now (copied into the arena). */
hfx_value *hfx_const_bytes(hfx_graph *g, hfx_dtype dt, int rank, const int64_t *shape,
                           const void *data);
hfx_value *hfx_const_f32(hfx_graph *g, float v);   /* scalar */
hfx_value *hfx_const_i64(hfx_graph *g, int64_t v); /* scalar */
hfx_value *hfx_const_scalar(hfx_graph *g, hfx_dtype dt, double v);
/* View edits of a constant (new value, same bytes). */
hfx_value *hfx_const_transpose2d(hfx_graph *g, hfx_value *c);
hfx_value *hfx_const_slice(hfx_graph *g, hfx_value *c, int axis, int64_t start, int64_t len);
/* Index `index` of axis `axis` of a constant, that axis gone (a view: a Conv1d weight's tap). */
hfx_value *hfx_const_select(hfx_graph *g, hfx_value *c, int axis, int64_t index);
/* Axes `axis`.. of a constant merged into one, where they are laid out one after the other (a
 * view: a Conv2d weight [out, in, kh, kw] as the [out, in·kh·kw] of a linear over patches). */
hfx_value *hfx_const_flatten(hfx_graph *g, hfx_value *c, int axis);
/* Constants of one shape stacked on a new axis 0 (per-expert weights → [experts, ...]). */
hfx_value *hfx_const_stack(hfx_graph *g, int n, hfx_value *const *cs);
/* Constants of one trailing shape one after the other along axis 0 (a table saved in shards). */
hfx_value *hfx_const_concat_rows(hfx_graph *g, int n, hfx_value *const *cs);
/* Axes of a constant reordered (a view); a stacked constant keeps its axis 0 in place. */
hfx_value *hfx_const_permute(hfx_graph *g, hfx_value *c, const int64_t *perm);
/* Rows of a constant whose axis 0 is laid out as [groups, parts, len]: part `which` of every
 * group, as [groups·len, ...] (GPT-NeoX's per-head [q; k; v]). Still a view. */
hfx_value *hfx_const_interleaved_rows(hfx_graph *g, hfx_value *c, int64_t groups, int64_t parts,
                                      int64_t which, int64_t len);
/* The rows of a [heads·2·half, in] constant stored in llama.cpp's rotary order (each head's two halves interleaved
 * pairwise: stored row 2j + k is row k·half + j) read in torch's order. Still a view. */
hfx_value *hfx_const_rotary_rows(hfx_graph *g, hfx_value *c, int64_t heads);
/* Axis 0 of a constant [n·r, ...] split into [n, r, ...] (a view: DBRX's experts stored one after the other). */
hfx_value *hfx_const_split_rows(hfx_graph *g, hfx_value *c, int64_t n);
/* Rows [start, start + len) of each of `groups` groups of `group_rows` rows along axis 0, as
 * [groups·len, ...] (Falcon's per key/value group [queries; k; v]). Still a view. */
hfx_value *hfx_const_group_rows(hfx_graph *g, hfx_value *c, int64_t groups, int64_t group_rows, int64_t start,
                                int64_t len);

/* ---- Op constructors: each records one node and returns its output ---- */

hfx_value *hfx_node_add(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in, const hfx_attrs *a);
/* The same for an op with several outputs: fills outs[0 .. hfx_op_outputs(op)). */
void hfx_node_add_outputs(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in, const hfx_attrs *a,
                          hfx_value **outs);
hfx_value *hfx_op1(hfx_graph *g, hfx_op op, hfx_value *x);
hfx_value *hfx_op2(hfx_graph *g, hfx_op op, hfx_value *a, hfx_value *b);
hfx_value *hfx_where(hfx_graph *g, hfx_value *c, hfx_value *a, hfx_value *b);
hfx_value *hfx_cast(hfx_graph *g, hfx_value *x, hfx_dtype to);
hfx_value *hfx_linear(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias);
hfx_value *hfx_rms_norm(hfx_graph *g, hfx_value *x, hfx_value *w, double eps, double offset);
hfx_value *hfx_softmax(hfx_graph *g, hfx_value *x, int axis);
hfx_value *hfx_attention(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v,
                         hfx_value *bias, double scale, double softcap, int64_t window);
/* The same with attention sinks: sinks [H] f32, one extra logit per head in the softmax whose
 * probability is dropped (GPT-OSS). */
hfx_value *hfx_attention_with_sinks(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias,
                                    hfx_value *sinks, double scale, int64_t window);
hfx_value *hfx_reduce(hfx_graph *g, hfx_op op, hfx_value *x, int n_axes, const int64_t *axes);
hfx_value *hfx_reshape(hfx_graph *g, hfx_value *x, int rank, const hfx_dim *dims);
hfx_value *hfx_transpose(hfx_graph *g, hfx_value *x, int rank, const int64_t *perm);
hfx_value *hfx_unsqueeze(hfx_graph *g, hfx_value *x, int64_t axis);
hfx_value *hfx_concat(hfx_graph *g, int n, hfx_value *const *xs, int axis);
hfx_value *hfx_slice(hfx_graph *g, hfx_value *x, int axis, int64_t start, int64_t end);
hfx_value *hfx_gather(hfx_graph *g, hfx_value *data, hfx_value *indices, int axis);
hfx_value *hfx_shape_of(hfx_graph *g, hfx_value *x);
/* x.shape[axis] as an i64 scalar. */
hfx_value *hfx_dim_of(hfx_graph *g, hfx_value *x, int axis);
hfx_value *hfx_range(hfx_graph *g, hfx_value *start, hfx_value *limit, hfx_value *delta,
                     hfx_dim length);
/* x broadcast to `shape` (i64 [rank], computed at run time), which is `dims`. */
hfx_value *hfx_expand(hfx_graph *g, hfx_value *x, hfx_value *shape, int rank, const hfx_dim *dims);
hfx_value *hfx_cache_write(hfx_graph *g, hfx_value *cache, hfx_value *update, hfx_value *slots);
/* Zeros of x's dtype and shape but `length` long on `axis` (a static cache's empty slots, shaped
 * from the keys a step writes into it); x's dynamic dims are read at run time. */
hfx_value *hfx_zeros_resized(hfx_graph *g, hfx_value *x, int axis, int64_t length);
hfx_value *hfx_top_k_mask(hfx_graph *g, hfx_value *x, int64_t k);
/* The k largest values of x's last axis and their indices, from one node. */
void hfx_top_k(hfx_graph *g, hfx_value *x, int64_t k, hfx_value **values, hfx_value **indices);
/* data's elements at `indices` along `axis` (same rank; the output is shaped as indices) */
hfx_value *hfx_gather_elements(hfx_graph *g, hfx_value *data, hfx_value *indices, int axis);
hfx_value *hfx_scatter_elements(hfx_graph *g, hfx_value *data, hfx_value *indices, hfx_value *updates,
                                int axis);
hfx_value *hfx_cumsum(hfx_graph *g, hfx_value *x, int axis);
/* torch's conv1d (dilation 1) of x [B,Cin,T] by w [Cout, Cin/groups, k] plus bias [Cout] (NULL: none), with
 * `padding` zeros at each end, one window every `stride` samples: [B, Cout, T'], T' = ⌊(T + 2·padding −
 * k)/stride⌋ + 1. T' is a constant where T is; T shifted where stride is 1; else the symbol `frames`,
 * derived from T's (T must be one symbol then, plus a constant ≥ 0 where zeros were added to it, at least
 * k − 2·padding long, which its minimum is raised to). */
hfx_value *hfx_conv1d(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias, int64_t stride, int64_t padding,
                      int64_t groups, const char *frames);
/* torch's conv2d (dilation 1) of x [B,Cin,H,W] by w [Cout, Cin/groups, kh, kw] plus bias [Cout] (NULL: none): each
 * spatial axis a as hfx_conv1d's length, with stride[a], padding[a] and, for a strided symbolic axis, the derived
 * symbol named frames[a]: [B, Cout, H', W']. */
hfx_value *hfx_conv2d(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias, const int64_t stride[2],
                      const int64_t padding[2], int64_t groups, const char *const frames[2]);

/* How a backend writes reshape(x → dims) with a constant shape vector: shape[i] is the dim when
 * constant, 0 for "copy the input's dim at the same index", -1 for "infer". Returns how many -1s
 * that takes; with more than one the backend must build the shape at run time, and source[i]
 * then names the input axis each symbolic dim comes from (-1: none). */
int hfx_reshape_plan(const hfx_value *in, int rank, const hfx_dim *dims, int64_t *shape, int *source);

/* ---- Passes ---- */

/* Check every node: arity, input dtypes, shapes against a fresh inference, that every input is
 * produced before use, and that every output is reachable. */
hfx_status hfx_graph_verify(const hfx_graph *g, hfx_error *err);

/* Shape inference for one node (fills each output's dtype/rank/dims); used by constructors and
 * verify. */
hfx_status hfx_infer_shape(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in,
                           const hfx_attrs *a, hfx_value *const *outs, hfx_error *err);

/* What the quantization pass marked: how many linears took plan->linears, and whether a head
 * and tables were found and how each is stored (bits 0: float). */
typedef struct hfx_quant_done {
    int linears, tables;
    bool has_head, has_table;
    hfx_quant head, table;
} hfx_quant_done;

/* The quantization pass (quantize.c): every linear and every Gather whose weight is a checkpoint
 * matrix is marked to read it quantized as the plan says (attrs.quant); a reader of the same
 * weight that is neither keeps it float (and so does every reader of a weight that also feeds
 * something else). The head is the last linear in the graph's order.
 * A weight a plan's entry cannot cut into blocks is HFX_ERR_INVALID naming it. */
hfx_status hfx_quantize_weights(hfx_graph *g, const hfx_quant_plan *plan, hfx_quant_done *done, hfx_error *err);

/* Which high-level nodes a backend writes as they are; the decomposition pass expands the rest. */
typedef bool (*hfx_keep_fn)(const hfx_graph *g, const hfx_node *n);

/* The decomposition pass (decompose.c): every attention, rms_norm, linear (its bias always; the
 * product unless kept), top_k_mask and every reshape whose target needs the input's shape at run
 * time becomes primitive ops, in place, computed the way transformers' eager code does. Nodes
 * `keep` accepts stay (NULL: none do). Values keep their identity: a replaced node's output is
 * produced by the last node of its expansion. */
hfx_status hfx_decompose(hfx_graph *g, hfx_keep_fn keep, hfx_error *err);

#endif
