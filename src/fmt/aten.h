/* An ATen program: a graph of ATen operator calls (aten.def) over named tensor and SymInt
 * values, with its parameters and user inputs, as the torch-side formats write it (the .pt2
 * archive's ExportedProgram now; ExecuTorch later). Sizes are hfx_dim: affine expressions over
 * the IR graph's symbols, so a dynamic dim is the same symbol everywhere it appears. Everything
 * lives in `arena`. */
#ifndef HFX_FMT_ATEN_H
#define HFX_FMT_ATEN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "ir/graph.h"

typedef enum hfx_aten_op {
#define X(id, op, overload, args, returns) HFX_ATEN_##id,
#include "fmt/aten.def"
#undef X
    HFX_ATEN_COUNT_,
    /* SymInt arithmetic (Python's operator module, as torch.export records it): (a, b) -> int */
    HFX_SYM_ADD = HFX_ATEN_COUNT_,
    HFX_SYM_SUB,
    HFX_SYM_MUL,
    HFX_SYM_FLOORDIV,
    /* PT2E's weight dequantization (torch.ops.quantized_decomposed, which torch.ao.quantization.fx._decomposed
       registers): int8 codes, float scales and zero points per channel or per group -> the float weight */
    HFX_QD_DEQUANTIZE_PER_CHANNEL,
    HFX_QD_DEQUANTIZE_PER_CHANNEL_GROUP,
    HFX_OPS_COUNT_
} hfx_aten_op;

/* The table row of `op`: its name, overload, arguments and returns as aten.def spells them; the
 * SymInt operators have `module` "_operator" and no overload. */
typedef struct hfx_aten_info {
    const char *op, *overload, *args, *returns;
    const char *module; /* NULL: torch.ops.aten */
} hfx_aten_info;
const hfx_aten_info *hfx_aten_info_of(hfx_aten_op op);

typedef enum hfx_aten_arg_kind {
    HFX_ARG_DEFAULT,  /* not passed: the schema's default */
    HFX_ARG_NONE,     /* None */
    HFX_ARG_TENSOR,   /* value */
    HFX_ARG_TENSORS,  /* values[n] */
    HFX_ARG_INT,      /* i */
    HFX_ARG_INTS,     /* sizes[n]: each a constant or a SymInt value */
    HFX_ARG_SYMINT,   /* value (a SymInt) */
    HFX_ARG_FLOAT,    /* f */
    HFX_ARG_BOOL,     /* i != 0 */
    HFX_ARG_DTYPE,    /* dtype */
    HFX_ARG_DEVICE    /* the CPU */
} hfx_aten_arg_kind;

typedef struct hfx_aten_size {
    int value;        /* a SymInt value, or -1 */
    int64_t c;        /* the constant when value < 0 */
} hfx_aten_size;

typedef struct hfx_aten_arg {
    hfx_aten_arg_kind kind;
    int value;
    int64_t i;
    double f;
    hfx_dtype dtype;
    const int *values;
    const hfx_aten_size *sizes;
    int n;
} hfx_aten_arg;

enum { HFX_ATEN_MAX_ARGS = 10 };

typedef struct hfx_aten_node {
    hfx_aten_op op;
    hfx_aten_arg args[HFX_ATEN_MAX_ARGS]; /* in schema order; trailing ones HFX_ARG_DEFAULT */
    int out[2], n_out;
    const hfx_quant *quant; /* linear, embedding: the weight (table) read stored quantized (the IR node's
                               attrs.quant; formats that store quantized weights write it); NULL: float */
} hfx_aten_node;

typedef struct hfx_aten_value {
    const char *name;  /* unique in the program: "mul_3", "p_model_norm_weight", "x" */
    bool symint;       /* a SymInt (its expression in `expr`), else a tensor */
    hfx_dim expr;
    hfx_dtype dtype;
    int rank;
    hfx_dim dims[HFX_MAX_RANK];
} hfx_aten_value;

typedef enum hfx_aten_input_kind {
    HFX_INPUT_PARAMETER, /* a weight: state-dict name `target` */
    HFX_INPUT_CONSTANT,  /* a table computed at build time (rotary frequencies, masks' constants) */
    HFX_INPUT_USER
} hfx_aten_input_kind;

typedef struct hfx_aten_input {
    hfx_aten_input_kind kind;
    int value;
    const char *target;         /* a parameter's state-dict name ("model.norm.weight"), a constant's
                                   ("lifted_tensor_0") */
    const hfx_init *init;       /* a parameter's bytes, streamed at write time, or ... */
    const uint8_t *bytes;       /* ... these (arena) */
} hfx_aten_input;

typedef struct hfx_aten_program {
    hfx_arena *arena;           /* owned */
    const hfx_graph *g;         /* its symbols (names, ranges) */
    hfx_aten_value *values;
    int n_values, cap_values;
    hfx_aten_node *nodes;
    int n_nodes, cap_nodes;
    hfx_aten_input *inputs;     /* parameters first, then user inputs, as torch.export orders them */
    int n_inputs, cap_inputs;
    int *outputs;               /* values */
    int *mutates;               /* per output: the user input value it is the new content of
                                   (torch.export's USER_INPUT_MUTATION), or -1 for a user output */
    int n_outputs, cap_outputs;
    int64_t *hints;             /* per symbol of g: an example size */
    int n_constants;
    bool oom;
} hfx_aten_program;

/* A program over g's symbols (each hinted by `hints[symbol]`, copied); NULL when out of memory. */
hfx_aten_program *hfx_aten_program_new(const hfx_graph *g, const int64_t *hints);
void hfx_aten_program_free(hfx_aten_program *p);

/* A tensor value named `name` (made unique with a numeric suffix) of the given type; its id. */
int hfx_aten_tensor(hfx_aten_program *p, const char *name, hfx_dtype dtype, int rank, const hfx_dim *dims);

/* A parameter (its state-dict name `target`) or a user input; returns its value. */
int hfx_aten_parameter(hfx_aten_program *p, const char *target, hfx_dtype dtype, int rank, const hfx_dim *dims,
                       const hfx_init *init, const uint8_t *bytes);
int hfx_aten_user_input(hfx_aten_program *p, const char *name, hfx_dtype dtype, int rank, const hfx_dim *dims);

/* A constant tensor (fixed shape) read from init or bytes; returns its value. */
int hfx_aten_constant(hfx_aten_program *p, hfx_dtype dtype, int rank, const hfx_dim *dims, const hfx_init *init,
                      const uint8_t *bytes);

/* A SymInt for size `dim` of tensor value `tensor` (aten.sym_size.int); its expression is that
 * dim. Returns the SymInt's value. */
int hfx_aten_sym_size(hfx_aten_program *p, int tensor, int dim);

/* a op b for SymInt operators (HFX_SYM_*), each operand a SymInt value or a constant
 * (hfx_aten_size); `expr` is the result's expression. Returns the SymInt's value. */
int hfx_aten_sym_op(hfx_aten_program *p, hfx_aten_op op, hfx_aten_size a, hfx_aten_size b, hfx_dim expr);

/* A call of `op` with `args` (n of them, the rest default); its output value is a new tensor of
 * the given type named after the op. Returns the output's value. */
int hfx_aten_call(hfx_aten_program *p, hfx_aten_op op, const hfx_aten_arg *args, int n, hfx_dtype dtype, int rank,
                  const hfx_dim *dims);

/* A second output of the last call (aten.topk's indices): a new tensor value; returns it. */
int hfx_aten_extra_output(hfx_aten_program *p, hfx_dtype dtype, int rank, const hfx_dim *dims);

/* Mark a value as a program output; with `mutated` >= 0, as the new content of that user input
 * (what the caller's tensor holds after the call: a cache written in place). */
void hfx_aten_output(hfx_aten_program *p, int value, int mutated);

/* The sizes of a value at the program's hints (its example shape). */
void hfx_aten_hinted_sizes(const hfx_aten_program *p, const hfx_aten_value *v, int64_t *sizes);

/* Argument helpers. */
hfx_aten_arg hfx_arg_tensor(int value);
hfx_aten_arg hfx_arg_int(int64_t i);
hfx_aten_arg hfx_arg_float(double f);
hfx_aten_arg hfx_arg_bool(bool b);
hfx_aten_arg hfx_arg_ints(hfx_aten_program *p, int n, const int64_t *v);
hfx_aten_arg hfx_arg_sizes(hfx_aten_program *p, int n, const hfx_aten_size *v); /* copied */
hfx_aten_arg hfx_arg_symint(int value);

#endif
