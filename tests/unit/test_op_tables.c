/* The per-format op tables (fmt/op_table.h) against ops.def and against the lowerings: each
 * format's table has a row per IR op in ops.def's order, and a one-node graph of every op,
 * decomposed as the exporter decomposes it for that format, lowers through the format's entry
 * points exactly as its row says — lowered, refused with the row's reason, or expanded by
 * decompose.c (and, given to the lowering unexpanded, refused with the table's message). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fmt/aten_lower.h"
#include "fmt/executorch/program.h"
#include "fmt/format.h"
#include "fmt/onnx/lower.h"
#include "fmt/op_table.h"
#include "fmt/openvino/lower.h"
#include "ir/graph.h"

/* ---- the formats, through their lowering entry points ---- */

static hfx_status lower_onnx(const hfx_graph *g, hfx_error *err) {
    onnx_model m;
    hfx_onnx_lowering how = {.opset = 18};
    hfx_status st = hfx_onnx_lower(g, &how, &m, err);
    hfx_onnx_model_free(&m);
    return st;
}

static hfx_status lower_openvino(const hfx_graph *g, hfx_error *err) {
    ov_blobs blobs = {0};
    ov_model m;
    hfx_ov_options o = {0};
    hfx_status st = hfx_ov_lower(g, &o, &blobs, &m, err);
    hfx_ov_model_free(&m);
    free(blobs.items);
    return st;
}

static hfx_status lower_dynamo(const hfx_graph *g, hfx_error *err) {
    int64_t hints[16];
    hfx_aten_program *p;
    hfx_aten_default_hints(g, hints);
    hfx_status st = hfx_aten_lower(g, hints, 0, &p, err);
    if (!st) hfx_aten_program_free(p);
    return st;
}

/* as the writer does: the graph against ExecuTorch's table, then its ATen program, then the kernels */
static hfx_status lower_executorch(const hfx_graph *g, hfx_error *err) {
    int64_t hints[16];
    hfx_aten_program *p;
    hfx_et_program *e;
    hfx_aten_default_hints(g, hints);
    hfx_status st = hfx_op_table_check(g, "executorch", hfx_et_op_support, err);
    if (!st) st = hfx_aten_lower(g, hints, 0, &p, err);
    if (st) return st;
    hfx_et_options opt = {.xnnpack = true};
    st = hfx_et_lower(p, &opt, &e, err);
    if (!st) hfx_et_program_free(e);
    hfx_aten_program_free(p);
    return st;
}

typedef struct format_case {
    const char *name; /* the registry's: its keep function decides what decompose.c expands */
    hfx_op_table_fn rows;
    hfx_status (*lower)(const hfx_graph *g, hfx_error *err);
} format_case;

static const format_case formats[] = {
    {"onnx", hfx_onnx_op_support, lower_onnx},
    {"openvino", hfx_ov_op_support, lower_openvino},
    {"dynamo", hfx_aten_op_support, lower_dynamo},
    {"executorch", hfx_et_op_support, lower_executorch},
};
enum { N_FORMATS = sizeof formats / sizeof formats[0] };

/* ---- one-node graphs ---- */

static hfx_value *in(hfx_graph *g, const char *name, hfx_dtype dt, int rank, const hfx_dim *dims) {
    return hfx_graph_input(g, name, dt, rank, dims);
}

/* A graph of one node of `op` as the builders make one: its data inputs graph inputs with a
 * dynamic batch B in [1, 8], a linear's weight, an embedding table, Range's bounds and Expand's
 * shape constants; its outputs graph outputs. NULL for an op this test has no graph for. */
static hfx_graph *one_node(hfx_op op) {
    hfx_graph *g = hfx_graph_new();
    hfx_dim B = hfx_dim_sym(hfx_graph_symbol(g, "batch", 1, 8));
    hfx_dim c2 = hfx_dim_const(2), c3 = hfx_dim_const(3), c4 = hfx_dim_const(4), c5 = hfx_dim_const(5);
    const hfx_dim bx3[2] = {B, c3};
    static const float w12[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, table[15] = {0};
    hfx_value *y = NULL, *outs[HFX_MAX_OUTPUTS] = {NULL, NULL};
    switch (op) {
    case HFX_OP_ADD: case HFX_OP_SUB: case HFX_OP_MUL: case HFX_OP_DIV: case HFX_OP_POW: case HFX_OP_MIN:
    case HFX_OP_MAX: case HFX_OP_EQUAL: case HFX_OP_LESS: case HFX_OP_LESS_EQUAL: case HFX_OP_GREATER:
    case HFX_OP_GREATER_EQUAL:
        y = hfx_op2(g, op, in(g, "x", HFX_DTYPE_F32, 2, bx3), in(g, "y", HFX_DTYPE_F32, 2, bx3));
        break;
    case HFX_OP_AND: case HFX_OP_OR:
        y = hfx_op2(g, op, in(g, "x", HFX_DTYPE_BOOL, 2, bx3), in(g, "y", HFX_DTYPE_BOOL, 2, bx3));
        break;
    case HFX_OP_BITWISE_XOR:
        y = hfx_op2(g, op, in(g, "x", HFX_DTYPE_I64, 2, bx3), in(g, "y", HFX_DTYPE_I64, 2, bx3));
        break;
    case HFX_OP_WHERE:
        y = hfx_where(g, in(g, "c", HFX_DTYPE_BOOL, 2, bx3), in(g, "x", HFX_DTYPE_F32, 2, bx3),
                      in(g, "y", HFX_DTYPE_F32, 2, bx3));
        break;
    case HFX_OP_NOT: y = hfx_op1(g, op, in(g, "x", HFX_DTYPE_BOOL, 2, bx3)); break;
    case HFX_OP_NEG: case HFX_OP_SQRT: case HFX_OP_RECIPROCAL: case HFX_OP_EXP: case HFX_OP_LOG:
    case HFX_OP_SIGMOID: case HFX_OP_TANH: case HFX_OP_ERF: case HFX_OP_COS: case HFX_OP_SIN:
        y = hfx_op1(g, op, in(g, "x", HFX_DTYPE_F32, 2, bx3));
        break;
    case HFX_OP_CAST: y = hfx_cast(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), HFX_DTYPE_F16); break;
    case HFX_OP_MATMUL:
        y = hfx_op2(g, op, in(g, "x", HFX_DTYPE_F32, 2, bx3), in(g, "y", HFX_DTYPE_F32, 2, (hfx_dim[]){c3, c4}));
        break;
    case HFX_OP_LINEAR: /* w [4, 3] */
        y = hfx_linear(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){4, 3}, w12),
                       NULL);
        break;
    case HFX_OP_RMS_NORM:
        y = hfx_rms_norm(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){3}, w12),
                         1e-6, 0);
        break;
    case HFX_OP_SOFTMAX: y = hfx_softmax(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), -1); break;
    case HFX_OP_CUMSUM: y = hfx_cumsum(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), 1); break;
    case HFX_OP_CONV: /* 1-D: two groups of [2 → 1] channels, kernel 3, stride 2, over 5 samples: [B, 2, 3];
                         2-D: it again as [B, 2, 3, 1], three rows over its rows, kernel 2×1, stride 1×1, padding 0×1:
                         [B, 3, 2, 3]; their sum broadcast: [B, 3, 2, 3] */
        y = hfx_conv1d(g, in(g, "x", HFX_DTYPE_F32, 3, (hfx_dim[]){B, c4, c5}),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 3, (int64_t[]){2, 2, 3}, w12),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){2}, w12), 2, 1, 2, NULL);
        y = hfx_op2(g, HFX_OP_ADD, hfx_unsqueeze(g, y, 1),
                    hfx_conv2d(g, hfx_unsqueeze(g, y, 3), hfx_const_bytes(g, HFX_DTYPE_F32, 4, (int64_t[]){3, 2, 2, 1}, w12),
                               NULL, (int64_t[]){1, 1}, (int64_t[]){0, 1}, 1, (const char *const[]){NULL, NULL}));
        break;
    case HFX_OP_ATTENTION: /* two heads over one key/value head, as kept where a format keeps it */
        y = hfx_attention(g, in(g, "q", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c2, c3, c4}),
                          in(g, "k", HFX_DTYPE_F32, 4, (hfx_dim[]){B, hfx_dim_const(1), c5, c4}),
                          in(g, "v", HFX_DTYPE_F32, 4, (hfx_dim[]){B, hfx_dim_const(1), c5, c4}),
                          in(g, "bias", HFX_DTYPE_F32, 4, (hfx_dim[]){B, hfx_dim_const(1), c3, c5}), 0.5, 0, 0);
        break;
    case HFX_OP_TOP_K:
        hfx_top_k(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){B, c5}), 2, &outs[0], &outs[1]);
        break;
    case HFX_OP_TOP_K_MASK: y = hfx_top_k_mask(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){B, c5}), 2); break;
    case HFX_OP_GATHER_ELEMENTS:
        y = hfx_gather_elements(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), in(g, "i", HFX_DTYPE_I64, 2, (hfx_dim[]){B, c2}),
                                1);
        break;
    case HFX_OP_SCATTER_ELEMENTS:
        y = hfx_scatter_elements(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), in(g, "i", HFX_DTYPE_I64, 2, (hfx_dim[]){B, c2}),
                                 in(g, "u", HFX_DTYPE_F32, 2, (hfx_dim[]){B, c2}), 1);
        break;
    case HFX_OP_REDUCE_MEAN: case HFX_OP_REDUCE_MAX: case HFX_OP_REDUCE_SUM:
        y = hfx_reduce(g, op, in(g, "x", HFX_DTYPE_F32, 2, bx3), 1, (int64_t[]){1});
        break;
    case HFX_OP_RESHAPE: /* [B, 6] → [B, 2, 3] */
        y = hfx_reshape(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){B, hfx_dim_const(6)}), 3, (hfx_dim[]){B, c2, c3});
        break;
    case HFX_OP_TRANSPOSE: y = hfx_transpose(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), 2, (int64_t[]){1, 0}); break;
    case HFX_OP_UNSQUEEZE: y = hfx_unsqueeze(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), 1); break;
    case HFX_OP_CONCAT: {
        hfx_value *xs[2] = {in(g, "x", HFX_DTYPE_F32, 2, bx3), in(g, "y", HFX_DTYPE_F32, 2, bx3)};
        y = hfx_concat(g, 2, xs, 1);
        break;
    }
    case HFX_OP_SLICE: y = hfx_slice(g, in(g, "x", HFX_DTYPE_F32, 2, bx3), 1, 0, 2); break;
    case HFX_OP_GATHER: /* rows of a [5, 3] table */
        y = hfx_gather(g, hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){5, 3}, table),
                       in(g, "ids", HFX_DTYPE_I64, 2, (hfx_dim[]){B, c2}), 0);
        break;
    case HFX_OP_SHAPE: y = hfx_shape_of(g, in(g, "x", HFX_DTYPE_F32, 2, bx3)); break;
    case HFX_OP_RANGE:
        y = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, 4), hfx_const_i64(g, 1), c4);
        break;
    case HFX_OP_EXPAND: { /* [1, 3] → [2, 3] */
        static const int64_t shape[2] = {2, 3};
        y = hfx_expand(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){hfx_dim_const(1), c3}),
                       hfx_const_bytes(g, HFX_DTYPE_I64, 1, (int64_t[]){2}, shape), 2, (hfx_dim[]){c2, c3});
        break;
    }
    case HFX_OP_CACHE_WRITE: /* 3 positions written into 8 slots */
        y = hfx_cache_write(g, in(g, "cache", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c2, hfx_dim_const(8), c4}),
                            in(g, "update", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c2, c3, c4}),
                            in(g, "slots", HFX_DTYPE_I64, 1, (hfx_dim[]){c3}));
        break;
    default: break;
    }
    if (y) outs[0] = y;
    if (!outs[0]) {
        hfx_graph_free(g);
        return NULL;
    }
    hfx_graph_output(g, outs[0], "out");
    if (outs[1]) hfx_graph_output(g, outs[1], "out1");
    return g;
}

/* The cases of an op whose lowering (or whether decompose.c keeps it) takes another path: the
 * k-th (from 1), NULL past the last. */
static hfx_graph *other_node(hfx_op op, int k) {
    hfx_graph *g = hfx_graph_new();
    hfx_dim B = hfx_dim_sym(hfx_graph_symbol(g, "batch", 1, 8)), S = hfx_dim_sym(hfx_graph_symbol(g, "seq", 1, 8));
    hfx_dim c1 = hfx_dim_const(1), c2 = hfx_dim_const(2), c3 = hfx_dim_const(3), c4 = hfx_dim_const(4);
    static const float w12[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, sinks[2] = {0.5f, -0.5f};
    hfx_value *y = NULL;
    switch (op * 8 + k) {
    case HFX_OP_DIV * 8 + 1: /* of integers */
        y = hfx_op2(g, op, in(g, "x", HFX_DTYPE_I64, 2, (hfx_dim[]){B, c3}), in(g, "y", HFX_DTYPE_I64, 2, (hfx_dim[]){B, c3}));
        break;
    case HFX_OP_LINEAR * 8 + 1: /* with a bias, over [B, S, 3] */
        y = hfx_linear(g, in(g, "x", HFX_DTYPE_F32, 3, (hfx_dim[]){B, S, c3}),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 2, (int64_t[]){4, 3}, w12),
                       hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){4}, w12));
        break;
    case HFX_OP_ATTENTION * 8 + 1: /* soft-capped in a sliding window, over a growing past */
    case HFX_OP_ATTENTION * 8 + 2: /* with sinks */ {
        hfx_dim T = hfx_dim_sym(hfx_graph_symbol(g, "total", 1, 16));
        hfx_value *q = in(g, "q", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c2, S, c4});
        hfx_value *kk = in(g, "k", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c1, T, c4});
        hfx_value *v = in(g, "v", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c1, T, c4});
        hfx_value *bias = in(g, "bias", HFX_DTYPE_F32, 4, (hfx_dim[]){B, c1, S, T});
        y = k == 1 ? hfx_attention(g, q, kk, v, bias, 0.5, 30.0, 2)
                   : hfx_attention_with_sinks(g, q, kk, v, bias, hfx_const_bytes(g, HFX_DTYPE_F32, 1, (int64_t[]){2}, sinks),
                                              0.5, 0);
        break;
    }
    case HFX_OP_RESHAPE * 8 + 1: /* [B, S, 6] → [S, B, 2, 3]: two symbolic dims moved, its target computed at run time */
        y = hfx_reshape(g, in(g, "x", HFX_DTYPE_F32, 3, (hfx_dim[]){B, S, hfx_dim_const(6)}), 4, (hfx_dim[]){S, B, c2, c3});
        break;
    case HFX_OP_GATHER * 8 + 1: /* columns of an input, not rows of a table */
        y = hfx_gather(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){B, hfx_dim_const(5)}),
                       in(g, "i", HFX_DTYPE_I64, 2, (hfx_dim[]){c2, c2}), 1);
        break;
    case HFX_OP_GATHER * 8 + 2: /* a dim of a shape (shape arithmetic) read as a tensor */
        y = hfx_op2(g, HFX_OP_ADD, hfx_cast(g, hfx_dim_of(g, in(g, "x", HFX_DTYPE_F32, 2, (hfx_dim[]){B, S}), 1),
                                            HFX_DTYPE_F32),
                    in(g, "y", HFX_DTYPE_F32, 0, NULL));
        break;
    default: break;
    }
    if (!y) {
        hfx_graph_free(g);
        return NULL;
    }
    hfx_graph_output(g, y, "out");
    return g;
}

static bool has_op(const hfx_graph *g, hfx_op op) {
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == op) return true;
    return false;
}

/* ---- tests ---- */

/* Every table has a row per op, in ops.def's order, each saying something. */
static void test_rows_follow_ops_def(void **state) {
    (void)state;
    for (int f = 0; f < N_FORMATS; f++)
        for (int op = 0; op < HFX_OP_COUNT_; op++) {
            const hfx_op_support *row = formats[f].rows((hfx_op)op);
            assert_non_null(row);
            if (row->op != (hfx_op)op)
                fail_msg("%s: the row at '%s' is '%s'", formats[f].name, hfx_op_name((hfx_op)op), hfx_op_name(row->op));
            assert_true(row->fate == HFX_OP_LOWERED || row->fate == HFX_OP_EXPANDED || row->fate == HFX_OP_REFUSED);
            assert_non_null(row->how);
            assert_true(row->how[0] != 0);
        }
    for (int f = 0; f < N_FORMATS; f++) assert_null(formats[f].rows(HFX_OP_COUNT_));
}

/* ONNX writes an op with a standard name (ops.def) as that operator; torch.export's rows name the
 * ATen operator they call; ExecuTorch lowers what torch.export's lowering makes. */
static void test_rows_agree(void **state) {
    (void)state;
    for (int op = 0; op < HFX_OP_COUNT_; op++) {
        const char *standard = hfx_op_standard_name((hfx_op)op);
        const hfx_op_support *onnx = hfx_onnx_op_support((hfx_op)op);
        if (standard) assert_string_equal(onnx->how, standard);
        const hfx_op_support *aten = hfx_aten_op_support((hfx_op)op);
        hfx_aten_op a = hfx_aten_op_of((hfx_op)op);
        assert_true((aten->fate == HFX_OP_LOWERED) == (a != HFX_ATEN_COUNT_));
        if (a != HFX_ATEN_COUNT_) {
            const hfx_aten_info *info = hfx_aten_info_of(a);
            char name[128];
            snprintf(name, sizeof name, "aten.%s.%s", info->op, info->overload ? info->overload : "default");
            if (strncmp(aten->how, name, strlen(name)) != 0)
                fail_msg("torch.export: the row of '%s' says '%s', its operator is %s", hfx_op_name((hfx_op)op),
                         aten->how, name);
        }
        if (hfx_et_op_support((hfx_op)op)->fate == HFX_OP_LOWERED) assert_int_equal(aten->fate, HFX_OP_LOWERED);
    }
}

/* A one-node graph of every op in every format, as its row says. */
static void test_every_op_in_every_format(void **state) {
    (void)state;
    int count[N_FORMATS][3] = {{0}};
    for (int f = 0; f < N_FORMATS; f++) {
        const format_case *fc = &formats[f];
        const hfx_format *fmt = hfx_format_find(fc->name);
        assert_non_null(fmt);
        for (int op = 0; op < HFX_OP_COUNT_; op++) {
            const hfx_op_support *row = fc->rows((hfx_op)op);
            const char *name = hfx_op_name((hfx_op)op);
            hfx_error err = {0};
            hfx_graph *g = one_node((hfx_op)op);
            if (!g) fail_msg("no one-node graph of '%s' in this test: add one", name);
            if (hfx_graph_verify(g, &err)) fail_msg("%s: %s", name, err.message);
            if (hfx_decompose(g, fmt->keeps, &err)) fail_msg("%s: decompose: %s", name, err.message);
            if (row->fate == HFX_OP_EXPANDED && has_op(g, (hfx_op)op))
                fail_msg("%s: '%s' says expanded, and decompose.c kept it", fc->name, name);
            if (row->fate != HFX_OP_EXPANDED && !has_op(g, (hfx_op)op))
                fail_msg("%s: decompose.c expanded '%s', whose row says it is not", fc->name, name);
            hfx_status st = fc->lower(g, &err);
            hfx_graph_free(g);
            count[f][row->fate]++;
            if (row->fate == HFX_OP_REFUSED) {
                if (st != HFX_ERR_UNSUPPORTED || !strstr(err.message, row->how))
                    fail_msg("%s: '%s' should be refused (%s), got %d: %s", fc->name, name, row->how, st,
                             st ? err.message : "lowered");
                continue;
            }
            if (st) fail_msg("%s: '%s' did not lower: %s", fc->name, name, err.message);
            if (row->fate != HFX_OP_EXPANDED) continue;
            /* given to the lowering unexpanded, it is refused by the table, not by accident */
            g = one_node((hfx_op)op);
            st = fc->lower(g, &err);
            hfx_graph_free(g);
            if (st != HFX_ERR_INTERNAL || !strstr(err.message, "decompose.c") || !strstr(err.message, row->how))
                fail_msg("%s: unexpanded '%s' gave %d: %s", fc->name, name, st, st ? err.message : "lowered");
        }
    }
    for (int f = 0; f < N_FORMATS; f++)
        printf("op tables: %-10s %d ops: %d lowered, %d refused, %d expanded by decompose.c\n", formats[f].name,
               HFX_OP_COUNT_, count[f][HFX_OP_LOWERED], count[f][HFX_OP_REFUSED], count[f][HFX_OP_EXPANDED]);
}

/* The other cases of lowered ops (other_node): each lowers, expanded or kept as the format's keep
 * function decides. */
static void test_other_cases_in_every_format(void **state) {
    (void)state;
    int cases = 0;
    for (int f = 0; f < N_FORMATS; f++) {
        const format_case *fc = &formats[f];
        const hfx_format *fmt = hfx_format_find(fc->name);
        for (int op = 0; op < HFX_OP_COUNT_; op++) {
            const hfx_op_support *row = fc->rows((hfx_op)op);
            hfx_graph *g;
            for (int k = 1; (g = other_node((hfx_op)op, k)); k++) {
                hfx_error err = {0};
                const char *name = hfx_op_name((hfx_op)op);
                if (hfx_graph_verify(g, &err)) fail_msg("%s case %d: %s", name, k, err.message);
                if (hfx_decompose(g, fmt->keeps, &err)) fail_msg("%s case %d: decompose: %s", name, k, err.message);
                hfx_status st = row->fate == HFX_OP_REFUSED ? HFX_OK : fc->lower(g, &err);
                hfx_graph_free(g);
                if (st) fail_msg("%s: '%s' case %d did not lower: %s", fc->name, name, k, err.message);
                cases++;
            }
        }
    }
    printf("op tables: %d other cases lowered\n", cases);
}

/* A table row that is not lowered gives its own message; a graph is checked node by node. */
static void test_refusal_messages(void **state) {
    (void)state;
    hfx_error err;
    const hfx_op_support refused = {HFX_OP_CUMSUM, HFX_OP_REFUSED, "no kernel for running sums"};
    assert_int_equal(hfx_op_not_lowered("fmt", &refused, &err), HFX_ERR_UNSUPPORTED);
    assert_string_equal(err.message, "fmt: the IR op 'cumsum' is refused: no kernel for running sums");
    hfx_graph *g = one_node(HFX_OP_RMS_NORM);
    assert_int_equal(hfx_op_table_check(g, "executorch", hfx_et_op_support, &err), HFX_ERR_INTERNAL);
    assert_non_null(strstr(err.message, "executorch: the IR op 'rms_norm'"));
    hfx_graph_free(g);
    g = one_node(HFX_OP_ADD);
    assert_int_equal(hfx_op_table_check(g, "executorch", hfx_et_op_support, &err), HFX_OK);
    hfx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_follow_ops_def),
        cmocka_unit_test(test_rows_agree),
        cmocka_unit_test(test_every_op_in_every_format),
        cmocka_unit_test(test_other_cases_in_every_format),
        cmocka_unit_test(test_refusal_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
