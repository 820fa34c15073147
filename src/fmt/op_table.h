/* Per-format op support: every format keeps one table over the IR's ops (ir/ops.def), a row per
 * op in ops.def's order, that says what becomes of each op in that format — what it is lowered
 * to, that the decomposition pass (ir/decompose.c) always expands it first, or why the format
 * refuses it. Where a format dispatches on the op, its table also holds the lowering, so the
 * table cannot say one thing while the code does another.
 *
 * Each table is held to ops.def at compile time (HFX_OP_TABLE_COVERS: a new op in ops.def fails
 * every format's build until it has a row), its rows' order by tests/unit/test_op_tables.c, which
 * also lowers a one-node graph of every op in every format against its row. */
#ifndef HFX_FMT_OP_TABLE_H
#define HFX_FMT_OP_TABLE_H

#include "base/status.h"
#include "ir/graph.h"

typedef enum hfx_op_fate {
    HFX_OP_LOWERED,  /* `how`: what the format writes for it ("Add", "aten.add.Tensor") */
    HFX_OP_EXPANDED, /* the decomposition pass always expands it for this format (the format's
                        keep function never keeps it): `how` says into what; the lowering never
                        sees it */
    HFX_OP_REFUSED   /* `how`: why the format cannot write it, the reason its error gives */
} hfx_op_fate;

/* One op's row. Rows that can be lowered may still refuse some of their nodes (an attribute or
 * a dtype the format lacks): those errors name the node's case themselves. */
typedef struct hfx_op_support {
    hfx_op op; /* the row's op: tables follow ops.def's order */
    hfx_op_fate fate;
    const char *how;
} hfx_op_support;

/* A compile-time check that `table` (an array of rows) has one row per op of ops.def. */
#define HFX_OP_TABLE_COVERS(table, format)                                                                        \
    _Static_assert(sizeof(table) / sizeof((table)[0]) == HFX_OP_COUNT_,                                           \
                   format ": the op table needs one row per IR op, in ops.def's order")

/* A format's rows: the row of `op` (NULL past the ops). */
typedef const hfx_op_support *(*hfx_op_table_fn)(hfx_op op);

/* The error for a node of `op` that `format` does not lower (its row is not HFX_OP_LOWERED):
 * HFX_ERR_UNSUPPORTED with the row's reason, or HFX_ERR_INTERNAL for an op the decomposition pass
 * should have expanded. */
hfx_status hfx_op_not_lowered(const char *format, const hfx_op_support *row, hfx_error *err);

/* HFX_OK when every node of g has a row of `rows` that is HFX_OP_LOWERED; else the first other
 * one's error (hfx_op_not_lowered). For a format whose lowering dispatches on something else (ExecuTorch:
 * on ATen operators), checked before lowering. */
hfx_status hfx_op_table_check(const hfx_graph *g, const char *format, hfx_op_table_fn rows, hfx_error *err);

#endif
