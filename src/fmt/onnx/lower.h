/* IR → ONNX lowering result: serialized NodeProtos plus the initializer list, consumed by the
 * writer (write.c). Internal to fmt/onnx. */
#ifndef HFX_FMT_ONNX_LOWER_H
#define HFX_FMT_ONNX_LOWER_H

#include "base/arena.h"
#include "base/buf.h"
#include "fmt/op_table.h"
#include "ir/graph.h"

typedef struct onnx_init {
    const char *name;              /* arena */
    hfx_dtype dtype;
    int rank;
    int64_t shape[HFX_MAX_RANK];
    const hfx_init *src;           /* bytes pulled from here, or ... */
    const uint8_t *bytes;          /* ... lowering-time bytes (arena) when src is NULL */
    uint64_t nbytes;
    uint64_t offset;               /* in the external data file; set by the writer */
    bool external;
} onnx_init;

typedef struct onnx_model {
    const hfx_graph *g;            /* borrowed: the graph being lowered */
    hfx_arena *arena;              /* owned: names, lowering-time constants */
    hfx_buf nodes;                 /* GraphProto `node` fields, in order */
    onnx_init *inits;              /* owned array */
    int n_inits, cap_inits;
    const char **names;            /* owned array: ONNX name per IR value id */
    int opset, counter;
    bool contrib;                  /* a node of onnxruntime's com.microsoft domain was written */
    int accuracy_level;            /* MatMulNBits' accuracy_level (0: unset, float compute) */
    bool standard_ops;             /* quantized linears as DequantizeLinear + MatMul, not MatMulNBits */
    bool weights_as_stored;        /* float linears as Gemm(transB) on [out, in], not MatMul on [in, out] */
    struct onnx_dynq *dynq;        /* arena: activations quantized at run time so far, shared by
                                      the linears that read them */
    hfx_status st;
    hfx_error *err;
} onnx_model;

int hfx_onnx_dtype(hfx_dtype dt);
/* The high-level nodes ONNX writes itself (hfx_keep_fn): linear, for its transposed weight view. */
bool hfx_onnx_keeps(const hfx_graph *g, const hfx_node *n);
/* How a graph is lowered (the format's options). */
typedef struct hfx_onnx_lowering {
    int opset;
    int accuracy_level;     /* MatMulNBits' (0: unset) */
    bool standard_ops;      /* quantized weights as DequantizeLinear (opset 21 or later) + MatMul */
    bool weights_as_stored; /* float linears as Gemm(transB) on the checkpoint's [out, in] rows */
} hfx_onnx_lowering;

/* What ONNX makes of `op` (op_table.h): the row of lower.c's table, which its lowering reads. */
const hfx_op_support *hfx_onnx_op_support(hfx_op op);

/* Lowers g as `how` says. */
hfx_status hfx_onnx_lower(const hfx_graph *g, const hfx_onnx_lowering *how, onnx_model *m, hfx_error *err);
void hfx_onnx_model_free(onnx_model *m);

#endif
