/* The payload of an XNNPACK delegate (program.h): XNNPACK's header, then an XNNGraph flatbuffer
 * (ExecuTorch's backends/xnnpack/serialization/runtime_schema.fbs, file identifier "XN01") of
 * one fully-connected node. Its values: the input and the output (external values 0 and 1, the
 * DelegateCall's two arguments, sized at their upper bounds: the delegate reshapes them to each
 * call's sizes), and the filter and bias, constants whose bytes are the program's named data
 * (constant_data entries with an offset of UINT64_MAX and the named key). A quantized filter
 * (XNNPACK's qc8w, qc4w or qb4w: codes with per-channel or per-group scales, the scales named
 * data too) reads its input quantized at run time, per token (qd8): a Convert node makes that
 * int8 input first, as ExecuTorch's partitioner writes torchao's dynamically quantized linears. */
#include <stdlib.h>
#include <string.h>

#include "fmt/executorch/flatbuf.h"
#include "fmt/executorch/program.h"

enum {
    XNN_FP32 = 1,                 /* XNNDatatype: xnn_datatype_fp32 */
    XNN_QCINT8 = 6,               /* int8, a scale per output channel */
    XNN_QCINT4 = 8,               /* int4 (nibbles offset by 8), a scale per output channel */
    XNN_QDINT8 = 9,               /* int8 quantized at run time, a scale and zero point per token */
    XNN_QBINT4 = 10,              /* int4, a bfloat16 scale per group of inputs */
    XNN_EXTERNAL_INPUT = 1,       /* XNNTensorValue.flags */
    XNN_EXTERNAL_OUTPUT = 2,
    XNODE_FULLY_CONNECTED = 2,    /* XNodeUnion's type codes */
    XNODE_CONVERT = 18,
    XVALUE_TENSOR = 1,            /* XValueUnion's */
    XVALUE_QUANTIZED = 2,
    XQUANT_PER_CHANNEL = 1,       /* XNNQuantParams' */
    XQUANT_PER_TOKEN = 3,
    XQUANT_PER_GROUP = 4,
    HEADER_LEN = 30,              /* zeros(4) "XH00" length(2) fb offset(4) fb size(4) data offset(4) data size(8) */
    FB_ALIGN = 16
};
static const uint32_t NONE = 0xffffffffu; /* an absent value id, external id */

/* An XNNTensorValue of `datatype`: `dims` of its rank; constant buffer `buffer` (0: none). */
static hfx_fb_ref tensor_table(hfx_fb *b, int datatype, uint32_t id, int rank, const int64_t *dims, uint32_t buffer,
                               uint32_t external, uint32_t flags) {
    uint32_t d[HFX_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = (uint32_t)dims[i];
    hfx_fb_ref rd = hfx_fb_vector(b, d, (size_t)rank, 4, 4);
    hfx_fb_begin(b);
    hfx_fb_u16(b, 0, (uint16_t)datatype);
    hfx_fb_u32(b, 1, (uint32_t)rank);
    hfx_fb_ref_field(b, 2, rd);
    hfx_fb_u32(b, 3, buffer);
    hfx_fb_u32(b, 4, external);
    hfx_fb_u32(b, 5, flags);
    hfx_fb_u32(b, 6, id);
    return hfx_fb_end(b);
}

/* A table whose one field is a union (an XValue, an XNode): its type `kind`, then table t. */
static hfx_fb_ref union_of(hfx_fb *b, int kind, hfx_fb_ref t) {
    hfx_fb_begin(b);
    hfx_fb_u8(b, 0, (uint8_t)kind);
    hfx_fb_ref_field(b, 1, t);
    return hfx_fb_end(b);
}

/* One float32 XNNTensorValue in its XValue. */
static hfx_fb_ref tensor_value(hfx_fb *b, uint32_t id, int rank, const int64_t *dims, uint32_t buffer,
                               uint32_t external, uint32_t flags) {
    return union_of(b, XVALUE_TENSOR, tensor_table(b, XNN_FP32, id, rank, dims, buffer, external, flags));
}

/* An XNNQuantizedTensorValue in its XValue: the tensor, then its quantization (union type
 * `qkind`, table q). */
static hfx_fb_ref quantized_value(hfx_fb *b, hfx_fb_ref tensor, int qkind, hfx_fb_ref q) {
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, tensor);
    hfx_fb_u8(b, 1, (uint8_t)qkind);
    hfx_fb_ref_field(b, 2, q);
    return union_of(b, XVALUE_QUANTIZED, hfx_fb_end(b));
}

/* A ConstantDataOffset: `key`'s named data (NULL: the empty entry 0). */
static hfx_fb_ref constant_data(hfx_fb *b, const char *key, uint64_t size) {
    hfx_fb_ref k = key ? hfx_fb_string(b, key) : hfx_fb_string(b, "");
    hfx_fb_begin(b);
    if (key) hfx_fb_i64(b, 0, -1); /* UINT64_MAX: the bytes are named data, not in the payload */
    hfx_fb_i64(b, 1, (int64_t)size);
    hfx_fb_ref_field(b, 2, k);
    return hfx_fb_end(b);
}

/* The quantized filter (value 2, constant buffer 1, its scales buffer 2) of delegate d: XNNPACK's
 * datatype and quantization for the rule's storage (quant.h HFX_QUANT_RULE_TORCHAO). */
static hfx_fb_ref quantized_filter(hfx_fb *b, const hfx_et_delegate *d) {
    const hfx_quant *q = d->quant;
    int64_t filter[2] = {d->n, d->k}, group = hfx_quant_block_size(q, d->k);
    bool grouped = hfx_et_blockwise(q);
    int datatype = q->bits == 8 ? XNN_QCINT8 : grouped ? XNN_QBINT4 : XNN_QCINT4;
    hfx_fb_ref t = tensor_table(b, datatype, 2, 2, filter, 1, NONE, 0);
    hfx_fb_ref none = hfx_fb_vector(b, NULL, 0, 4, 4); /* `scale`: the scales are named data */
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, none); /* channel_dim 0: the output channels */
    if (grouped) {
        hfx_fb_i32(b, 2, (int32_t)group);
        hfx_fb_u32(b, 4, 2); /* scale_buffer_idx */
        hfx_fb_u32(b, 5, (uint32_t)(d->n * hfx_quant_blocks(q, d->k)));
    } else {
        hfx_fb_u32(b, 2, 2);
        hfx_fb_u32(b, 3, (uint32_t)d->n);
    }
    return quantized_value(b, t, grouped ? XQUANT_PER_GROUP : XQUANT_PER_CHANNEL, hfx_fb_end(b));
}

bool hfx_et_xnnpack_payload(const hfx_et_program *e, const hfx_et_delegate *d, uint8_t **data, size_t *len) {
    *data = NULL;
    hfx_fb *b = hfx_fb_new();
    if (!b) return false;
    const hfx_et_value *in = &e->values[d->input], *out = &e->values[d->output];
    const bool quantized = d->quant != NULL;
    int64_t filter[2] = {d->n, d->k}, bias[1] = {d->n};
    /* ids: 0 input, [1 the input quantized per token,] then the filter, the bias (when there is
     * one), the output; constant buffers: 1 the filter, [2 its scales,] then the bias */
    uint32_t filter_id = quantized ? 2 : 1, bias_id = filter_id + 1, out_id = bias_id + (d->bias != NULL);
    uint32_t bias_buffer = quantized ? 3 : 2;
    hfx_fb_ref values[5];
    int nv = 0;
    values[nv++] = tensor_value(b, 0, in->rank, in->sizes, 0, 0, XNN_EXTERNAL_INPUT);
    if (quantized) {
        hfx_fb_ref t = tensor_table(b, XNN_QDINT8, 1, in->rank, in->sizes, 0, NONE, 0);
        hfx_fb_begin(b);
        hfx_fb_i32(b, 0, 1); /* num_nonbatch_dims: a scale per row of the last dim */
        values[nv++] = quantized_value(b, t, XQUANT_PER_TOKEN, hfx_fb_end(b));
        values[nv++] = quantized_filter(b, d);
    } else {
        values[nv++] = tensor_value(b, filter_id, 2, filter, 1, NONE, 0);
    }
    if (d->bias) values[nv++] = tensor_value(b, bias_id, 1, bias, bias_buffer, NONE, 0);
    values[nv++] = tensor_value(b, out_id, out->rank, out->sizes, 0, 1, XNN_EXTERNAL_OUTPUT);
    hfx_fb_ref xvalues = hfx_fb_vector_refs(b, values, (size_t)nv);

    hfx_fb_ref nodes[2];
    int nn = 0;
    if (quantized) {
        hfx_fb_begin(b);
        hfx_fb_u32(b, 1, 1); /* input_id 0 (the default) → output_id 1 */
        nodes[nn++] = union_of(b, XNODE_CONVERT, hfx_fb_end(b));
    }
    hfx_fb_begin(b);
    hfx_fb_u32(b, 0, quantized ? 1 : 0); /* input1_id */
    hfx_fb_u32(b, 1, filter_id);
    hfx_fb_u32(b, 2, d->bias ? bias_id : NONE);
    hfx_fb_u32(b, 3, out_id);
    nodes[nn++] = union_of(b, XNODE_FULLY_CONNECTED, hfx_fb_end(b));
    hfx_fb_ref xnodes = hfx_fb_vector_refs(b, nodes, (size_t)nn);

    hfx_fb_ref cds[4];
    int nc = 0;
    cds[nc++] = constant_data(b, NULL, 0);
    if (quantized) {
        cds[nc++] = constant_data(b, d->codes->target, hfx_init_nbytes(d->codes->init));
        cds[nc++] = constant_data(b, d->scales->target, hfx_init_nbytes(d->scales->init));
    } else {
        cds[nc++] = constant_data(b, d->weight->target, (uint64_t)(d->n * d->k) * 4); /* float32 */
    }
    if (d->bias) cds[nc++] = constant_data(b, d->bias->target, (uint64_t)d->n * 4);
    hfx_fb_ref cdata = hfx_fb_vector_refs(b, cds, (size_t)nc);
    uint32_t ins[1] = {0}, outs[1] = {out_id};
    hfx_fb_ref rin = hfx_fb_vector(b, ins, 1, 4, 4), rout = hfx_fb_vector(b, outs, 1, 4, 4);
    hfx_fb_ref version = hfx_fb_string(b, "0");
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, version);
    hfx_fb_ref_field(b, 1, xnodes);
    hfx_fb_ref_field(b, 2, xvalues);
    hfx_fb_u32(b, 3, 2); /* num_externs */
    hfx_fb_ref_field(b, 4, rin);
    hfx_fb_ref_field(b, 5, rout);
    hfx_fb_ref_field(b, 8, cdata);
    hfx_fb_ref root = hfx_fb_end(b);
    uint8_t *fb;
    size_t fb_len;
    bool ok = hfx_fb_finish(b, root, "XN01", 0, &fb, &fb_len);
    size_t fb_at = (HEADER_LEN + FB_ALIGN - 1) / FB_ALIGN * FB_ALIGN;
    size_t total = fb_at + fb_len;
    uint8_t *p = ok ? calloc(1, total) : NULL;
    if (p) {
        memcpy(p + 4, "XH00", 4);
        hfx_fb_put_le(p + 8, HEADER_LEN, 2);
        hfx_fb_put_le(p + 10, fb_at, 4);  /* the flatbuffer */
        hfx_fb_put_le(p + 14, fb_len, 4);
        hfx_fb_put_le(p + 18, total, 4);  /* the constant data: none here, its bytes are named data */
        hfx_fb_put_le(p + 22, 0, 8);
        memcpy(p + fb_at, fb, fb_len);
        *data = p, *len = total;
    }
    hfx_fb_free(b);
    return p != NULL;
}
