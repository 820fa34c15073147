/* IR v11 serialization: <net> with layers, edges and rt_info (hfx's metadata), and the .bin of
 * constants streamed from the checkpoint in bounded chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/status.h"
#include "io/bulk.h"
#include "fmt/openvino/lower.h"

enum { CHUNK = 1 << 20 }; /* bytes per read/convert/write step: stays in L2 for the kernel's copy */

void hfx_ov_xml_escaped(hfx_buf *b, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': hfx_buf_puts(b, "&amp;"); break;
        case '<': hfx_buf_puts(b, "&lt;"); break;
        case '>': hfx_buf_puts(b, "&gt;"); break;
        case '"': hfx_buf_puts(b, "&quot;"); break;
        case '\n': hfx_buf_puts(b, "&#10;"); break;
        case '\r': hfx_buf_puts(b, "&#13;"); break;
        case '\t': hfx_buf_puts(b, "&#9;"); break;
        default: hfx_buf_append(b, s, 1);
        }
    }
}

static const char *precision(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_F32: return "FP32";
    case HFX_DTYPE_F16: return "FP16";
    case HFX_DTYPE_BF16: return "BF16";
    case HFX_DTYPE_F64: return "FP64";
    case HFX_DTYPE_I64: return "I64";
    case HFX_DTYPE_I32: return "I32";
    case HFX_DTYPE_I16: return "I16";
    case HFX_DTYPE_I8: return "I8";
    case HFX_DTYPE_U8: return "U8";
    case HFX_DTYPE_BOOL: return "BOOL";
    case HFX_DTYPE_I4: return "I4";
    case HFX_DTYPE_U4: return "U4";
    default: return "UNSPECIFIED";
    }
}

static void net_xml(const hfx_graph *g, const ov_model *m, hfx_buf *b) {
    hfx_buf_puts(b, "<?xml version=\"1.0\"?>\n<net name=\"");
    hfx_ov_xml_escaped(b, "main_graph");
    hfx_buf_puts(b, "\" version=\"11\">\n\t<layers>\n");
    for (int i = 0; i < m->n_layers; i++) {
        const ov_layer *l = &m->layers[i];
        bool result = strcmp(l->type, "Result") == 0;
        hfx_buf_printf(b, "\t\t<layer id=\"%d\" name=\"", i);
        hfx_ov_xml_escaped(b, l->name);
        hfx_buf_printf(b, "\" type=\"%s\" version=\"%s\"", l->type, l->version);
        if (result && l->out_names) {
            hfx_buf_puts(b, " output_names=\"");
            hfx_ov_xml_escaped(b, l->out_names);
            hfx_buf_puts(b, "\"");
        }
        hfx_buf_puts(b, ">\n");
        if (l->data) hfx_buf_printf(b, "\t\t\t<data %s />\n", l->data);
        if (l->rt_info) hfx_buf_printf(b, "\t\t\t<rt_info>\n\t\t\t\t%s\n\t\t\t</rt_info>\n", l->rt_info);
        if (l->n_in) {
            hfx_buf_puts(b, "\t\t\t<input>\n");
            for (int p = 0; p < l->n_in; p++)
                hfx_buf_printf(b, "\t\t\t\t<port id=\"%d\" precision=\"%s\" />\n", p,
                               precision(m->layers[m->edges[l->first_edge + p].from_layer].out_dtype));
            hfx_buf_puts(b, "\t\t\t</input>\n");
        }
        if (l->n_out) {
            hfx_buf_puts(b, "\t\t\t<output>\n");
            for (int p = 0; p < l->n_out; p++) {
                /* TopK's second output holds its i64 indices; every other port shares the layer's type */
                hfx_dtype pdt = p == 1 && strcmp(l->type, "TopK") == 0 ? HFX_DTYPE_I64 : l->out_dtype;
                hfx_buf_printf(b, "\t\t\t\t<port id=\"%d\" precision=\"%s\"", l->n_in + p, precision(pdt));
                if (p == 0 && l->out_names && !result) {
                    hfx_buf_puts(b, " names=\"");
                    hfx_ov_xml_escaped(b, l->out_names);
                    hfx_buf_puts(b, "\"");
                }
                hfx_buf_puts(b, " />\n");
            }
            hfx_buf_puts(b, "\t\t\t</output>\n");
        }
        hfx_buf_puts(b, "\t\t</layer>\n");
    }
    hfx_buf_puts(b, "\t</layers>\n\t<edges>\n");
    for (int i = 0; i < m->n_edges; i++) {
        const ov_edge *e = &m->edges[i];
        hfx_buf_printf(b, "\t\t<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\" />\n",
                       e->from_layer, e->from_port, e->to_layer, e->to_port);
    }
    hfx_buf_puts(b, "\t</edges>\n\t<rt_info>\n");
    for (int i = 0; i < g->n_meta; i++) {
        hfx_buf_puts(b, "\t\t<");
        hfx_buf_puts(b, g->meta[i].key); /* keys are hfx's own identifiers */
        hfx_buf_puts(b, " value=\"");
        hfx_ov_xml_escaped(b, g->meta[i].value);
        hfx_buf_puts(b, "\" />\n");
    }
    hfx_buf_puts(b, "\t</rt_info>\n</net>\n");
}

static hfx_status write_blobs(const ov_blobs *blobs, FILE *f, hfx_outdir *out, const char *name,
                              hfx_error *err) {
    hfx_bulk *bulk;
    hfx_status st = hfx_bulk_open(out, f, CHUNK, &bulk, err);
    if (st) return st;
    for (int i = 0; i < blobs->n && st == HFX_OK; i++) {
        const ov_blob *bl = &blobs->items[i];
        hfx_bulk_pad_to(bulk, bl->offset);
        st = hfx_bulk_stream(bulk, bl->src, bl->bytes, bl->nbytes, err);
    }
    hfx_status wst = hfx_bulk_close(bulk, name, err);
    return st ? st : wst;
}

/* Every component reads one blob: the first component's .bin, hard-linked under each other
 * component's name (name.xml → name.bin). */
static hfx_status ov_write(const hfx_format_graph *cs, int n, hfx_outdir *out, hfx_error *err) {
    ov_blobs blobs = {0};
    ov_model *ms = calloc((size_t)n, sizeof *ms);
    char(*bins)[256] = calloc((size_t)n, sizeof *bins);
    if (!ms || !bins) {
        free(ms);
        free(bins);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    hfx_status st = HFX_OK;
    for (int c = 0; c < n; c++) {
        size_t len = strlen(cs[c].file);
        if (len > 4 && strcmp(cs[c].file + len - 4, ".xml") == 0) len -= 4;
        snprintf(bins[c], sizeof bins[c], "%.*s.bin", (int)len, cs[c].file);
    }
    hfx_ov_options *os = calloc((size_t)n, sizeof *os); /* lowered models keep a pointer to theirs */
    for (int c = 0; c < n && os; c++) /* stateful per graph: the seed's prefill returns what its decode keeps */
        os[c] = (hfx_ov_options){cs[c].opt[OV_OPT_COMPRESS_TO_FP16] != 0, cs[c].opt[OV_OPT_STATEFUL] != 0};
    if (!os) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int c = 0; c < n && !st; c++) {
        st = hfx_ov_lower(cs[c].g, &os[c], &blobs, &ms[c], err);
        if (st) hfx_error_prefix(err, "%s", cs[c].file);
    }
    for (int c = 0; c < n && !st; c++) {
        hfx_buf xml = {0};
        net_xml(cs[c].g, &ms[c], &xml);
        st = xml.oom ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory")
                     : hfx_outdir_write(out, cs[c].file, xml.data, xml.len, err);
        hfx_buf_free(&xml);
    }
    if (!st) {
        FILE *f;
        hfx_outdir_progress_total(out, blobs.size);
        st = hfx_outdir_create(out, bins[0], &f, err);
        if (!st) {
            st = write_blobs(&blobs, f, out, bins[0], err);
            hfx_status cst = hfx_outdir_close(out, f, bins[0], st ? NULL : err); /* keep the first reason */
            if (!st) st = cst;
        }
        /* every component reads the same blob: one copy on disk */
        for (int c = 1; c < n && !st; c++) st = hfx_outdir_link(out, bins[0], bins[c], err);
    }
    for (int c = 0; c < n; c++) hfx_ov_model_free(&ms[c]);
    free(os);
    free(ms);
    free(bins);
    free(blobs.items);
    return st;
}

#define OV_GROUP "openvino (docs/OPENVINO.md)"
static const hfx_format_option ov_options[OV_N_OPTIONS] = {
    [OV_OPT_STATEFUL] = {"stateful", HFX_OPTION_BOOL, 1, 0, 1, true, NULL, .seed_default = "true",
                         .flag_off = "--stateless", .scope = HFX_SCOPE_GENERATION, .group = OV_GROUP,
                         .help = "generation with explicit cache inputs/outputs instead of the default "
                                 "ReadValue/Assign state (openvino_model.xml + beam_idx)"},
    [OV_OPT_COMPRESS_TO_FP16] = {"compress_to_fp16", HFX_OPTION_BOOL, 0, 0, 1, true, NULL, .seed_default = "false",
                                 .flag = "--compress-to-fp16", .group = OV_GROUP,
                                 .help = "store float32 weights as float16 (decompressed at load)"},
    [OV_OPT_GENAI_EMBEDDING] = {"genai_embedding", HFX_OPTION_BOOL, 0, 0, 1, true, NULL, .flag = "--genai-embedding",
                                .scope = HFX_SCOPE_FORWARD, .group = OV_GROUP,
                                .help = "a bare encoder as OpenVINO GenAI's TextEmbeddingPipeline loads it: "
                                        "openvino_model.xml, last_hidden_state alone (the pipeline pools)"},
};

/* Generation state lives in variables unless `stateful` is false: one graph then serves prompt
 * and steps (openvino_model.xml, as optimum-intel names it). */
const hfx_format hfx_format_openvino = {
    .name = "openvino", .summary = "OpenVINO IR v11 (.xml + .bin), for OpenVINO and openvino-genai",
    .graph_ext = ".xml", .options = ov_options, .n_options = OV_N_OPTIONS, .state_option = "stateful",
    .stateful_file = "openvino_model.xml", .embedding_option = "genai_embedding", .seed_io = true, .seed_prefix = "openvino_", .keeps = hfx_ov_keeps,
    /* nncf.compress_weights' defaults (INT4_ASYM, INT8_ASYM backup for embeddings and the head) */
    .quant = {true, HFX_QUANT_RULE_NNCF, HFX_QUANT_RULE_NNCF, 128, 0, false, true, false},
    .write = ov_write,
    .write_tokenizer = hfx_ov_write_tokenizer};
