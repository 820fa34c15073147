/* IR → OpenVINO layers, kept as structs until every component is lowered, so output tensor
 * names and shared constants can be settled before any XML is written. Internal. */
#ifndef HFX_FMT_OPENVINO_LOWER_H
#define HFX_FMT_OPENVINO_LOWER_H

#include "base/arena.h"
#include "base/buf.h"
#include "fmt/op_table.h"
#include "fmt/openvino/openvino.h"

typedef struct hfx_ov_options {
    bool compress_to_fp16; /* float32 weights stored as f16 Const + Convert (a decompression) */
    bool stateful;         /* the graph's declared state becomes ReadValue/Assign variables, plus
                              a beam_idx input */
} hfx_ov_options;

typedef struct ov_ref {
    int layer, port; /* an output port */
} ov_ref;

typedef struct ov_layer {
    const char *name, *type, *version; /* arena */
    const char *data;                  /* attributes of <data>, arena; NULL: none */
    const char *rt_info;               /* inner XML of <rt_info>, or NULL */
    int n_in, n_out;
    const char *out_names;             /* tensor names of output port 0, or NULL */
    int blob;                          /* Const: index into the blob table, else -1 */
    int first_edge;                    /* edges[first_edge + p] feeds input port p */
    hfx_dtype out_dtype;               /* element type of the output ports (port precision) */
} ov_layer;

typedef struct ov_edge {
    int from_layer, from_port, to_layer, to_port;
} ov_edge;

/* A constant's bytes in the shared .bin. */
typedef struct ov_blob {
    const hfx_init *src;   /* pulled from here, or ... */
    const uint8_t *bytes;  /* ... lowering-time bytes (arena) */
    hfx_dtype dtype;
    uint64_t nbytes, offset;
} ov_blob;

/* Blobs shared by all components of one export. */
typedef struct ov_blobs {
    ov_blob *items; /* owned */
    int n, cap;
    uint64_t size;
} ov_blobs;

typedef struct ov_model {
    hfx_arena *arena;      /* owned */
    ov_layer *layers;      /* owned */
    int n_layers, cap_layers;
    ov_edge *edges;        /* owned */
    int n_edges, cap_edges;
    ov_ref *val;           /* owned: per IR value id; layer -1 when not lowered yet */
    struct ov_compressed *compressed; /* arena: the quantized weights' subgraphs made so far */
    ov_blobs *blobs;       /* borrowed: shared across components */
    const hfx_ov_options *o;
    const hfx_graph *g;    /* borrowed: the graph being lowered */
    hfx_status st;
    hfx_error *err;
} ov_model;

const char *hfx_ov_type(hfx_dtype dt);
/* `s` as XML attribute text: & < > " and line breaks/tabs as character references. */
void hfx_ov_xml_escaped(hfx_buf *b, const char *s);
/* The high-level nodes OpenVINO writes itself (hfx_keep_fn): linear (MatMul transpose_b), and
 * float32 attention without soft-capping in a graph without sliding windows, as
 * ScaledDotProductAttention (see lower.c). */
bool hfx_ov_keeps(const hfx_graph *g, const hfx_node *n);
/* What OpenVINO makes of `op` (op_table.h): the row of lower.c's table, which its lowering reads. */
const hfx_op_support *hfx_ov_op_support(hfx_op op);
hfx_status hfx_ov_lower(const hfx_graph *g, const hfx_ov_options *o, ov_blobs *blobs,
                        ov_model *m, hfx_error *err);
void hfx_ov_model_free(ov_model *m);

#endif
