/* ModelProto serialization and the external data file. The .onnx holds the graph and small
 * constants; weights stream from the checkpoint mapping into <file>.data (model.onnx.data; model.onnx_data where
 * several graphs share them) through one bounded buffer, at offsets fixed before any byte is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "io/bulk.h"
#include "fmt/onnx/lower.h"
#include "fmt/onnx/onnx.h"
#include "fmt/onnx/onnx_proto.h"
#include "fmt/onnx/pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hfx writes little-endian tensor data by memcpy; big-endian hosts are not supported"
#endif

enum {
    EMBED_LIMIT = 1024,        /* constants up to this many bytes stay inside the .onnx */
    CHUNK = 2 << 20,           /* bytes per read/convert/write step */
    ALIGN_SMALL = 64,          /* external offsets: cache-line aligned ... */
    ALIGN_LARGE = 4096,        /* ... and page aligned from 64 KiB, so runtimes can mmap */
    PROTO_LIMIT = 2000000000   /* protobuf messages must stay under 2 GiB */
};

static int ir_version_for(int opset) {
    if (opset <= 18) return 8;
    if (opset <= 20) return 9;
    if (opset <= 22) return 10;
    return 11;
}

static void dim_text(const hfx_graph *g, hfx_dim d, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < d.n && k < n; i++) {
        const char *name = g->symbols[d.sym[i]].name;
        if (d.coef[i] == 1) k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? " + " : "", name);
        else k += (size_t)snprintf(buf + k, n - k, "%s%lld*%s", i ? " + " : "", (long long)d.coef[i], name);
    }
    if (d.c && k < n) snprintf(buf + k, n - k, " %c %lld", d.c < 0 ? '-' : '+', (long long)(d.c < 0 ? -d.c : d.c));
}

static void value_info(hfx_buf *graph, int field, const hfx_graph *g, const hfx_value *v) {
    hfx_buf vi = {0}, type = {0}, tensor = {0}, shape = {0}, dim = {0};
    pb_int(&tensor, TENSOR_TYPE_ELEM, hfx_onnx_dtype(v->dtype));
    for (int i = 0; i < v->rank; i++) {
        if (hfx_dim_is_const(v->dims[i])) {
            pb_int(&dim, DIM_VALUE, v->dims[i].c);
        } else {
            char text[256];
            dim_text(g, v->dims[i], text, sizeof text);
            pb_string(&dim, DIM_PARAM, text);
        }
        pb_message(&shape, SHAPE_DIM, &dim);
    }
    pb_message(&tensor, TENSOR_TYPE_SHAPE, &shape);
    pb_message(&type, TYPE_TENSOR, &tensor);
    pb_string(&vi, VALUE_INFO_NAME, v->name);
    pb_message(&vi, VALUE_INFO_TYPE, &type);
    pb_message(graph, (uint32_t)field, &vi);
    if (vi.oom || type.oom || tensor.oom || shape.oom || dim.oom) graph->oom = 1;
    hfx_buf_free(&vi), hfx_buf_free(&type), hfx_buf_free(&tensor), hfx_buf_free(&shape), hfx_buf_free(&dim);
}

static void entry(hfx_buf *b, uint32_t field, const char *key, const char *value) {
    hfx_buf e = {0};
    pb_string(&e, ENTRY_KEY, key);
    pb_string(&e, ENTRY_VALUE, value);
    pb_message(b, field, &e);
    if (e.oom) b->oom = 1;
    hfx_buf_free(&e);
}

/* Bytes of an initializer: lowering-time bytes, or pulled (converted, transposed) from its
 * source, in one call for small ones. */
static hfx_status init_bytes(const onnx_init *in, uint64_t first_byte, uint64_t n, void *dst,
                             hfx_error *err) {
    if (!in->src) {
        memcpy(dst, in->bytes + first_byte, n);
        return HFX_OK;
    }
    size_t es = hfx_dtype_is_packed(in->dtype) ? 1 : hfx_dtype_size(in->dtype); /* packed codes: bytes */
    return hfx_init_read(in->src, first_byte / es, n / es, dst, err);
}

static hfx_status tensor_proto(hfx_buf *graph, const onnx_init *in, const char *data_file,
                               hfx_error *err) {
    hfx_buf t = {0};
    hfx_status st = HFX_OK;
    for (int i = 0; i < in->rank; i++) pb_int(&t, TENSOR_DIMS, in->shape[i]);
    pb_int(&t, TENSOR_DATA_TYPE, hfx_onnx_dtype(in->dtype));
    pb_string(&t, TENSOR_NAME, in->name);
    if (in->external) {
        char num[32];
        entry(&t, TENSOR_EXTERNAL_DATA, "location", data_file);
        snprintf(num, sizeof num, "%llu", (unsigned long long)in->offset);
        entry(&t, TENSOR_EXTERNAL_DATA, "offset", num);
        snprintf(num, sizeof num, "%llu", (unsigned long long)in->nbytes);
        entry(&t, TENSOR_EXTERNAL_DATA, "length", num);
        pb_int(&t, TENSOR_DATA_LOCATION, DATA_LOCATION_EXTERNAL);
    } else {
        void *raw = malloc(in->nbytes ? in->nbytes : 1);
        if (!raw) {
            hfx_buf_free(&t);
            return hfx_fail(err, HFX_ERR_NOMEM, "out of memory for tensor '%s'", in->name);
        }
        st = init_bytes(in, 0, in->nbytes, raw, err);
        pb_bytes(&t, TENSOR_RAW_DATA, raw, in->nbytes);
        free(raw);
    }
    pb_message(graph, GRAPH_INITIALIZER, &t);
    if (t.oom) graph->oom = 1;
    hfx_buf_free(&t);
    return st;
}

/* Where each distinct external weight lives in the shared data file. */
typedef struct placement {
    const onnx_init *init; /* the first component's record: the bytes to write */
    uint64_t offset;
} placement;

static hfx_status write_external(const placement *pl, int n, FILE *f, hfx_outdir *out,
                                 const char *name, hfx_error *err) {
    hfx_bulk *bulk;
    hfx_status st = hfx_bulk_open(out, f, CHUNK, &bulk, err);
    if (st) return st;
    for (int i = 0; i < n && st == HFX_OK; i++) {
        const onnx_init *in = pl[i].init;
        hfx_bulk_pad_to(bulk, pl[i].offset);
        st = hfx_bulk_stream(bulk, in->src, in->bytes, in->nbytes, err);
    }
    hfx_status wst = hfx_bulk_close(bulk, name, err);
    return st ? st : wst;
}

/* Decide which initializers go to the data file and at which offsets, sharing one copy of
 * every weight between components. Returns the placements in file order. */
static hfx_status place(onnx_model *ms, int n, bool external_data, placement **out_pl,
                        int *out_n, uint64_t *size, hfx_error *err) {
    int cap = 0, count = 0;
    for (int c = 0; c < n; c++) cap += ms[c].n_inits;
    placement *pl = malloc((size_t)(cap ? cap : 1) * sizeof *pl);
    if (!pl) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    uint64_t end = 0;
    for (int c = 0; c < n; c++) {
        uint64_t embedded = 0;
        for (int i = 0; i < ms[c].n_inits; i++) {
            onnx_init *in = &ms[c].inits[i];
            in->external = external_data && in->nbytes > EMBED_LIMIT;
            if (!in->external) {
                embedded += in->nbytes;
                continue;
            }
            int j;
            for (j = 0; j < count; j++)
                if (in->src && pl[j].init->src && hfx_init_same(in->src, pl[j].init->src)) break;
            if (j == count) {
                uint64_t align = in->nbytes >= 65536 ? ALIGN_LARGE : ALIGN_SMALL;
                end = (end + align - 1) / align * align;
                pl[count++] = (placement){in, end};
                end += in->nbytes;
            }
            in->offset = pl[j].offset;
        }
        if (embedded > PROTO_LIMIT) {
            free(pl);
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%llu bytes of weights cannot be embedded (protobuf's 2 GiB limit); "
                            "export with external_data true", (unsigned long long)embedded);
        }
    }
    *out_pl = pl;
    *out_n = count;
    *size = end;
    return HFX_OK;
}

/* Serialize one lowered graph as a ModelProto. */
static hfx_status model_proto(const hfx_graph *g, onnx_model *m, int opset, const char *data_file,
                              hfx_buf *model, hfx_error *err) {
    hfx_buf graph = {0}, sub = {0};
    hfx_status st = HFX_OK;
    hfx_buf_append(&graph, m->nodes.data, m->nodes.len);
    pb_string(&graph, GRAPH_NAME, "main_graph");
    for (int i = 0; i < m->n_inits && st == HFX_OK; i++) st = tensor_proto(&graph, &m->inits[i], data_file, err);
    for (int i = 0; i < g->n_inputs; i++) value_info(&graph, GRAPH_INPUT, g, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) value_info(&graph, GRAPH_OUTPUT, g, g->outputs[i]);
    int ir = ir_version_for(opset);
    for (int i = 0; i < m->n_inits; i++) /* int4 and uint4 tensors came with IR version 10 */
        if (hfx_dtype_is_packed(m->inits[i].dtype) && ir < 10) ir = 10;
    pb_int(model, MODEL_IR_VERSION, ir);
    pb_string(model, MODEL_PRODUCER_NAME, "hfx");
    pb_string(model, MODEL_PRODUCER_VERSION, HFX_VERSION_STRING);
    pb_message(model, MODEL_GRAPH, &graph);
    pb_string(&sub, OPSET_DOMAIN, "");
    pb_int(&sub, OPSET_VERSION, opset);
    pb_message(model, MODEL_OPSET_IMPORT, &sub);
    if (m->contrib) { /* onnxruntime's contrib ops (MatMulNBits) */
        hfx_buf_free(&sub);
        pb_string(&sub, OPSET_DOMAIN, "com.microsoft");
        pb_int(&sub, OPSET_VERSION, 1);
        pb_message(model, MODEL_OPSET_IMPORT, &sub);
    }
    for (int i = 0; i < g->n_meta; i++) entry(model, MODEL_METADATA_PROPS, g->meta[i].key, g->meta[i].value);
    if (st == HFX_OK && (model->oom || graph.oom || sub.oom)) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_buf_free(&graph);
    hfx_buf_free(&sub);
    return st;
}

/* Several components' weights share one data file (external_data is a shared option), unless each has its own;
 * a graph alone, or one with weights of its own, writes them to "<file>.data" (model.onnx.data), as the seed names
 * and its loader looks for them. */
static const char SHARED_DATA_FILE[] = "model.onnx_data";

/* Write n lowered components whose external weights go to one file, `data_file`. */
static hfx_status write_group(const hfx_format_graph *cs, onnx_model *ms, int n, const char *data_file,
                              hfx_outdir *out, hfx_error *err) {
    placement *pl = NULL;
    int n_pl = 0;
    uint64_t data_size = 0;
    hfx_status st = place(ms, n, cs[0].opt[ONNX_OPT_EXTERNAL_DATA] != 0, &pl, &n_pl, &data_size, err);
    for (int c = 0; c < n && st == HFX_OK; c++) {
        hfx_buf model = {0};
        st = model_proto(cs[c].g, &ms[c], (int)cs[c].opt[ONNX_OPT_OPSET], data_file, &model, err);
        if (st == HFX_OK) st = hfx_outdir_write(out, cs[c].file, model.data, model.len, err);
        hfx_buf_free(&model);
    }
    if (st == HFX_OK && n_pl > 0) {
        FILE *f;
        hfx_outdir_progress_total(out, data_size);
        st = hfx_outdir_create(out, data_file, &f, err);
        if (st == HFX_OK) {
            st = write_external(pl, n_pl, f, out, data_file, err);
            hfx_status cst = hfx_outdir_close(out, f, data_file, st ? NULL : err); /* keep the first reason */
            if (st == HFX_OK) st = cst;
        }
    }
    free(pl);
    return st;
}

static hfx_status onnx_write(const hfx_format_graph *cs, int n, hfx_outdir *out, hfx_error *err) {
    onnx_model *ms = calloc((size_t)n, sizeof *ms);
    if (!ms) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = HFX_OK;
    for (int c = 0; c < n && st == HFX_OK; c++) {
        hfx_onnx_lowering how = {(int)cs[c].opt[ONNX_OPT_OPSET], (int)cs[c].opt[ONNX_OPT_ACCURACY_LEVEL],
                                 cs[c].opt[ONNX_OPT_OPS] == 2, cs[c].opt[ONNX_OPT_WEIGHT_LAYOUT] == 2};
        st = hfx_onnx_lower(cs[c].g, &how, &ms[c], err);
        if (st) hfx_error_prefix(err, "%s", cs[c].file);
    }
    bool shared = !cs[0].own_weights && n > 1;
    if (st == HFX_OK && shared) st = write_group(cs, ms, n, SHARED_DATA_FILE, out, err);
    for (int c = 0; c < n && st == HFX_OK && !shared; c++) {
        char data_file[160];
        snprintf(data_file, sizeof data_file, "%.140s.data", cs[c].file);
        st = write_group(&cs[c], &ms[c], 1, data_file, out, err);
    }
    for (int c = 0; c < n; c++) hfx_onnx_model_free(&ms[c]);
    free(ms);
    return st;
}

static const hfx_format_option onnx_options[ONNX_N_OPTIONS] = {
    [ONNX_OPT_OPSET] = {"opset_version", HFX_OPTION_INT, HFX_ONNX_OPSET_DEFAULT, HFX_ONNX_OPSET_MIN,
                        HFX_ONNX_OPSET_MAX, false, NULL, .seed_default = "null", .flag = "--opset N",
                        .help = "ONNX opset, 17..23 (default 18)"},
    [ONNX_OPT_EXTERNAL_DATA] = {"external_data", HFX_OPTION_BOOL, 1, 0, 1, true, NULL, .flag_off = "--embed-weights",
                                .help = "keep every weight inside model.onnx (models under 2 GB)"},
    [ONNX_OPT_EXPORT_PARAMS] = {"export_params", HFX_OPTION_TRUE, 1, 1, 1, false,
                                "false is not supported: hfx always writes the weights"},
    [ONNX_OPT_OUTPUT_PATH] = {"output_path", HFX_OPTION_REFUSED, 0, 0, 0, false,
                              "is not used by hfx; give the output directory to hfx export"},
    /* the seed's ONNX Runtime contrib-op fusion: accepted, no effect — hfx writes standard ops in
     * the patterns ONNX Runtime fuses when it loads the graph (README, "Export config") */
    [ONNX_OPT_ORT_FUSIONS] = {"ort_fusions", HFX_OPTION_CHOICE, 0, 0, 0, false, NULL,
                              (const char *const[]){"cpu", "cuda", "webgpu", "dml", NULL}, "optimize",
                              .seed_default = "null"},
    /* hfx: MatMulNBits' accuracy_level for quantized weights: 4 (int8 activations: onnxruntime's
     * fast CPU kernels, the default of onnxruntime-genai's builder on CPU), or 0 (unset: float
     * compute, exact against the dequantized weights) to 3 */
    [ONNX_OPT_ACCURACY_LEVEL] = {"accuracy_level", HFX_OPTION_INT, 4, 0, 4, false, NULL,
                                 .flag = "--accuracy-level N", .group = HFX_GROUP_QUANT,
                                 .help = "ONNX MatMulNBits: 4 (default; int8 activations, fast on CPUs) or 0 (float "
                                         "compute: exactly the dequantized weights' products)"},
    /* hfx: quantized weights as onnxruntime's contrib ops (null, "contrib") or as standard
     * DequantizeLinear + MatMul ("standard": opset 21, for runtimes without contrib ops) */
    [ONNX_OPT_OPS] = {"onnx_ops", HFX_OPTION_CHOICE, 0, 0, 0, false, NULL,
                      (const char *const[]){"contrib", "standard", NULL}, NULL, .flag = "--onnx-ops OPS",
                      .group = HFX_GROUP_QUANT,
                      .help = "ONNX: contrib (default: MatMulNBits, GatherBlockQuantized) or standard "
                              "(DequantizeLinear + MatMul, opset 21; tables stay float)"},
    /* hfx: float linears as MatMul on the weight transposed to [in, out] (null, "transposed": the
     * layout torch.onnx and optimum write, and onnxruntime's quantizers take), or as Gemm
     * (transB) on the checkpoint's own [out, in] rows ("stored": no transpose while exporting) */
    [ONNX_OPT_WEIGHT_LAYOUT] = {"weight_layout", HFX_OPTION_CHOICE, 0, 0, 0, false, NULL,
                                (const char *const[]){"transposed", "stored", NULL}, NULL,
                                .flag = "--weight-layout L",
                                .help = "ONNX: transposed (default: MatMul on [in, out], what onnxruntime's "
                                        "quantizers take) or stored (Gemm on the checkpoint's [out, in]: no "
                                        "transpose, constant memory)"},
};

const hfx_format hfx_format_onnx = {
    .name = "onnx", .summary = "ONNX (.onnx + .onnx.data), for ONNX Runtime and onnxruntime-genai",
    .graph_ext = ".onnx", .options = onnx_options, .n_options = ONNX_N_OPTIONS, .genai_config = true, .seed_io = true, .seed_prefix = "",
    /* onnxruntime-genai's builder's defaults; tables by onnxruntime's quantizer for Gather */
    .quant = {true, HFX_QUANT_RULE_ORT, HFX_QUANT_RULE_ORT_TABLE, 32, 32, true, false, true},
    .keeps = hfx_onnx_keeps, .write = onnx_write};
