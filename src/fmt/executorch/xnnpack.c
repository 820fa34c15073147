/* The payload of an XNNPACK delegate (program.h): XNNPACK's header, then an XNNGraph flatbuffer
 * (ExecuTorch's backends/xnnpack/serialization/runtime_schema.fbs, file identifier "XN01") of
 * one fully-connected node. Its values: the input and the output (external values 0 and 1, the
 * DelegateCall's two arguments, sized at their upper bounds: the delegate reshapes them to each
 * call's sizes), and the filter and bias, constants whose bytes are the program's named data
 * (constant_data entries with an offset of UINT64_MAX and the named key). */
#include <stdlib.h>
#include <string.h>

#include "fmt/executorch/flatbuf.h"
#include "fmt/executorch/program.h"

enum {
    XNN_FP32 = 1,                 /* XNNDatatype xnn_datatype_fp32 */
    XNN_EXTERNAL_INPUT = 1,       /* XNNTensorValue.flags */
    XNN_EXTERNAL_OUTPUT = 2,
    XNODE_FULLY_CONNECTED = 2,    /* XNodeUnion's type code */
    XVALUE_TENSOR = 1,            /* XValueUnion's */
    HEADER_LEN = 30,              /* zeros(4) "XH00" length(2) fb offset(4) fb size(4) data offset(4) data size(8) */
    FB_ALIGN = 16
};
static const uint32_t NONE = 0xffffffffu; /* an absent value id, external id */

/* One XNNTensorValue in its XValue: `dims` of its rank; constant buffer `buffer` (0: none). */
static hfx_fb_ref tensor_value(hfx_fb *b, uint32_t id, int rank, const int64_t *dims, uint32_t buffer,
                               uint32_t external, uint32_t flags) {
    uint32_t d[HFX_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = (uint32_t)dims[i];
    hfx_fb_ref rd = hfx_fb_vector(b, d, (size_t)rank, 4, 4);
    hfx_fb_begin(b);
    hfx_fb_u16(b, 0, XNN_FP32);
    hfx_fb_u32(b, 1, (uint32_t)rank);
    hfx_fb_ref_field(b, 2, rd);
    hfx_fb_u32(b, 3, buffer);
    hfx_fb_u32(b, 4, external);
    hfx_fb_u32(b, 5, flags);
    hfx_fb_u32(b, 6, id);
    hfx_fb_ref t = hfx_fb_end(b);
    hfx_fb_begin(b);
    hfx_fb_u8(b, 0, XVALUE_TENSOR);
    hfx_fb_ref_field(b, 1, t);
    return hfx_fb_end(b);
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

bool hfx_et_xnnpack_payload(const hfx_et_program *e, const hfx_et_delegate *d, const char *weight_key,
                            const char *bias_key, uint8_t **data, size_t *len) {
    *data = NULL;
    hfx_fb *b = hfx_fb_new();
    if (!b) return false;
    const hfx_et_value *in = &e->values[d->input], *out = &e->values[d->output];
    int64_t filter[2] = {d->n, d->k}, bias[1] = {d->n};
    /* ids: 0 input, 1 filter, 2 bias (when there is one), then the output */
    uint32_t out_id = d->bias ? 3 : 2;
    hfx_fb_ref values[4];
    int nv = 0;
    values[nv++] = tensor_value(b, 0, in->rank, in->sizes, 0, 0, XNN_EXTERNAL_INPUT);
    values[nv++] = tensor_value(b, 1, 2, filter, 1, NONE, 0);
    if (d->bias) values[nv++] = tensor_value(b, 2, 1, bias, 2, NONE, 0);
    values[nv++] = tensor_value(b, out_id, out->rank, out->sizes, 0, 1, XNN_EXTERNAL_OUTPUT);
    hfx_fb_ref xvalues = hfx_fb_vector_refs(b, values, (size_t)nv);

    hfx_fb_begin(b);
    hfx_fb_u32(b, 1, 1); /* filter_id; input1_id 0 is the default */
    hfx_fb_u32(b, 2, d->bias ? 2 : NONE);
    hfx_fb_u32(b, 3, out_id);
    hfx_fb_ref fc = hfx_fb_end(b);
    hfx_fb_begin(b);
    hfx_fb_u8(b, 0, XNODE_FULLY_CONNECTED);
    hfx_fb_ref_field(b, 1, fc);
    hfx_fb_ref node = hfx_fb_end(b);
    hfx_fb_ref xnodes = hfx_fb_vector_refs(b, &node, 1);

    uint64_t elem = 4; /* float32 */
    hfx_fb_ref cds[3];
    int nc = 0;
    cds[nc++] = constant_data(b, NULL, 0);
    cds[nc++] = constant_data(b, weight_key, (uint64_t)(d->n * d->k) * elem);
    if (d->bias) cds[nc++] = constant_data(b, bias_key, (uint64_t)d->n * elem);
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
