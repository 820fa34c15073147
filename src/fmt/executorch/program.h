/* An ExecuTorch execution plan in memory: the values (EValues) its kernels read and write, one
 * chain of kernel calls, its operators, and the memory plan, as program.fbs describes them. It is
 * made from an ATen program (lower.c), planned (plan.c) and serialized (pte.c). Tensors that vary
 * in size carry their upper-bound sizes, the way ExecuTorch plans them (DYNAMIC_BOUND). */
#ifndef HFX_FMT_EXECUTORCH_PROGRAM_H
#define HFX_FMT_EXECUTORCH_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"
#include "fmt/aten.h"
#include "fmt/op_table.h"
#include "ir/cache.h"
#include "io/outdir.h"

/* EValue kinds: the KernelTypes union's type codes in program.fbs. */
typedef enum hfx_et_kind {
    HFX_ET_NULL = 1,
    HFX_ET_INT,
    HFX_ET_BOOL,
    HFX_ET_DOUBLE,
    HFX_ET_TENSOR,
    HFX_ET_STRING,
    HFX_ET_INT_LIST,
    HFX_ET_DOUBLE_LIST,
    HFX_ET_BOOL_LIST,
    HFX_ET_TENSOR_LIST,
    HFX_ET_OPTIONAL_TENSOR_LIST
} hfx_et_kind;

typedef struct hfx_et_value {
    hfx_et_kind kind;
    int64_t i;          /* INT, BOOL */
    double f;           /* DOUBLE */
    /* TENSOR */
    hfx_dtype dtype;
    int rank;
    int64_t sizes[HFX_MAX_RANK]; /* the upper bound of each dim */
    bool dynamic;       /* some dim varies (DYNAMIC_BOUND) */
    uint32_t buffer;    /* its constant data (1-based, in the constant segment); 0: none */
    const hfx_aten_input *constant; /* where that data comes from */
    bool planned;       /* has memory in the arena at `offset` */
    bool persistent;    /* a mutable buffer: state kept in the arena from call to call */
    uint64_t offset;
    int first, last;    /* liveness: the first and last instruction that touch it (-1: none) */
    /* lists: value indices (-1 in an optional list: None) */
    int *items;
    int n;
} hfx_et_value;

typedef struct hfx_et_call {
    int op;       /* index in operators (a KernelCall) */
    int delegate; /* >= 0: a DelegateCall of delegates[delegate] instead */
    int *args;    /* value indices, in the kernel's argument order, outputs last (a delegate's: its
                     inputs, then its outputs) */
    int n;
} hfx_et_call;

/* A linear layer delegated to XNNPACK (backend "xnnpack"): an XNNGraph of one fully-connected
 * node over [.., K] → [.., N], its filter (and bias) the named data the delegate reads, stored
 * as the checkpoint has them ([N, K], [N]), or quantized: the filter's codes and scales
 * (quant.h HFX_QUANT_RULE_TORCHAO, computed from the weight while they stream), the input then
 * quantized per token at run time. */
typedef struct hfx_et_delegate {
    int input, output;                   /* their EValues */
    const hfx_aten_input *weight, *bias; /* bias NULL: none */
    int64_t n, k;
    const hfx_quant *quant;              /* NULL: a float32 filter */
    const hfx_aten_input *codes, *scales; /* quantized: the named data of its parts */
} hfx_et_delegate;

typedef struct hfx_et_operator {
    const char *name, *overload; /* "aten::add", "out" */
} hfx_et_operator;

typedef struct hfx_et_program {
    hfx_arena *arena;
    hfx_et_value *values;
    int n_values, cap_values;
    hfx_et_call *calls;
    int n_calls, cap_calls;
    hfx_et_operator *ops;
    int n_ops, cap_ops;
    hfx_et_delegate *delegates;
    int n_delegates, cap_delegates;
    int *inputs, n_inputs;
    int *outputs, n_outputs;
    uint32_t n_buffers;  /* constant tensors (data_buffer_idx 1..n_buffers) */
    uint64_t arena_size; /* the planned memory (memory id 1) */
    bool oom;
} hfx_et_program;

/* Memory-plan flags, the seed's ExecutorchConfig alloc_* keys. */
typedef struct hfx_et_alloc {
    bool graph_input, graph_output;
} hfx_et_alloc;

/* What the method does with each user input of the ATen program. */
typedef enum hfx_et_role {
    HFX_ET_ARG,       /* an argument of the method */
    HFX_ET_BUFFER,    /* a mutable buffer: state the program keeps in its planned memory (no initial
                         data is stored, as ExecuTorch's emitter stores none for a zero buffer: the
                         runtime's planned memory starts as it allocates it); its new content, an
                         output of the ATen program, is no output of the method */
    HFX_ET_POSITIONS, /* [1, S]: the argument `positions_of` ([S]) viewed with a batch of 1 */
    HFX_ET_ONES       /* a constant of ones */
} hfx_et_role;

typedef struct hfx_et_inputs {
    const hfx_et_role *role; /* per user input, in the ATen program's order */
    const int *order;        /* the method's arguments: user input indices, in call order */
    int n_order;
    int positions_of;        /* the user input HFX_ET_POSITIONS views */
} hfx_et_inputs;

typedef struct hfx_et_options {
    const hfx_et_inputs *inputs; /* NULL: each user input is an argument, in order */
    bool xnnpack;                /* float32 linears with stored weights delegated to XNNPACK */
    bool export_order;           /* outputs as torch.export orders them (the input mutations, then the user
                                    outputs: the Python system's programs); false: the program's order */
    const int *constant_before;  /* (n_constants, without `inputs`) arguments passed as constants, as the Python
                                    system's call has them: each before user input constant_before[k] (past the last:
                                    at the end) */
    const hfx_keyword_constant *const *constants; /* [n_constants]: what each is (None, False, an int) */
    int n_constants;
} hfx_et_options;

/* What ExecuTorch makes of `op` (op_table.h): the row of lower.c's table, which the writer checks
 * every node of a graph against before lowering it (hfx_op_table_check). */
const hfx_op_support *hfx_et_op_support(hfx_op op);

/* Lower an ATen program (fmt/aten.h) to ExecuTorch's out-variant kernels (and, as `opt` says,
 * XNNPACK delegates); `opt->inputs` says what becomes of its user inputs. Stored tensors only
 * delegates read are not constants of the program. Every dynamic dim must have an upper bound
 * (the symbol's max below 2^31); else HFX_ERR_UNSUPPORTED naming it and the dynamic_shapes entry
 * that bounds it. Ops without a kernel are HFX_ERR_UNSUPPORTED naming them. */
hfx_status hfx_et_lower(const hfx_aten_program *p, const hfx_et_options *opt, hfx_et_program **out,
                        hfx_error *err);

/* ---- the XNNPACK delegate's payload (xnnpack.c) ---- */

/* The XNNGraph of delegate d, behind XNNPACK's own header ("XH00"), as the delegate's segment:
 * malloc'd bytes in *data (the caller frees), *len. Its named data are keyed by their `target`s.
 * false when out of memory. */
bool hfx_et_xnnpack_payload(const hfx_et_program *e, const hfx_et_delegate *d, uint8_t **data, size_t *len);

/* Whether XNNPACK reads quantized weights q blockwise (qb4w: int4 in groups, bfloat16 scales) rather
 * than per output channel (qc4w, qc8w: float32 scales). */
static inline bool hfx_et_blockwise(const hfx_quant *q) { return q->bits == 4 && q->block > 0; }
void hfx_et_program_free(hfx_et_program *e);

/* Liveness-based greedy memory planning into one arena (memory id 1): each tensor that needs
 * memory gets the lowest 16-byte-aligned offset not used by a tensor alive at the same time,
 * largest tensors first. Inputs and outputs are planned only as `alloc` says (else the caller
 * provides their memory); mutable buffers always, alive throughout. */
void hfx_et_plan(hfx_et_program *e, hfx_et_alloc alloc);

/* Bytes of a tensor value at its upper-bound sizes. */
uint64_t hfx_et_nbytes(const hfx_et_value *v);

/* A method that only returns constants (ExecuTorch's constant methods: "get_max_seq_len"):
 * n ints, or bools; several are returned as a list. */
typedef struct hfx_et_constant_method {
    const char *name;
    bool is_bool;
    int64_t values[8];
    int n;
} hfx_et_constant_method;

/* The .pte file: the program's flatbuffer with its extended header, then the constant segment
 * streamed from the checkpoint. `method` names the execution plan ("forward"); the constant
 * methods follow it. */
hfx_status hfx_et_write(const hfx_et_program *e, const char *method, const hfx_et_constant_method *consts,
                        int n_consts, hfx_outdir *out, const char *file, hfx_error *err);

#endif
