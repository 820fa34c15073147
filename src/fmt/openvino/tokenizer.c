/* openvino_tokenizer.xml / openvino_detokenizer.xml (+ .bin) from hfx_tokenizer: the graphs
 * OpenVINO GenAI loads beside a model to take text, built from the string ops of
 * openvino_tokenizers' runtime extension (version="extension"; the op contracts are in
 * docs/OPENVINO.md). A string tensor is carried unpacked, as the ops take it: begins and ends
 * (i32) into a chars buffer (u8); a ragged batch adds row begins and ends, and a skip flag per
 * string marks the added tokens that later steps leave alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/status.h"
#include "fmt/openvino/lower.h"

enum { MAX_IN = 3 * HFX_TOK_MAX_SEGMENTS + 1, MAX_OUT = 6 }; /* CombineSegments: 3 per segment + ids */

typedef struct ref {
    int node, out; /* output `out` of node `node` */
} ref;

typedef struct tnode {
    const char *type, *version;
    char *data;                 /* <data> attributes, heap; NULL: none */
    ref in[MAX_IN];
    int n_in, n_out;
    const char *prec[MAX_OUT];  /* element type of each output */
    const char *out_name;       /* Result: the tensor's name */
} tnode;

typedef struct tgraph {
    tnode *nodes;
    int n, cap;
    hfx_buf bin;
    bool oom;
} tgraph;

static int add_node(tgraph *g, const char *type, const char *version, char *data, const ref *in, int n_in,
                    const char *const *prec, int n_out) {
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        tnode *p = realloc(g->nodes, (size_t)cap * sizeof *p);
        if (!p) {
            g->oom = true;
            free(data);
            return 0;
        }
        g->nodes = p;
        g->cap = cap;
    }
    tnode *t = &g->nodes[g->n];
    memset(t, 0, sizeof *t);
    t->type = type;
    t->version = version;
    t->data = data;
    t->n_in = n_in;
    t->n_out = n_out;
    if (n_in) memcpy(t->in, in, (size_t)n_in * sizeof *in);
    for (int i = 0; i < n_out; i++) t->prec[i] = prec[i];
    return g->n++;
}

static char *attrs(tgraph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *attrs(tgraph *g, const char *fmt, ...) {
    hfx_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        g->oom = true;
        return NULL;
    }
    hfx_buf_append(&b, tmp, (size_t)n + 1);
    if (b.oom) g->oom = true;
    return (char *)b.data;
}

static ref R(int node, int out) { return (ref){node, out}; }

/* A constant of element type `et` (OpenVINO's spelling; `prec` the port's) and shape text `shape`,
 * its `size` bytes appended to the .bin. */
static ref konst(tgraph *g, const char *et, const char *prec, const char *shape, const void *data, size_t size) {
    size_t off = g->bin.len;
    if (size) hfx_buf_append(&g->bin, data, size);
    else hfx_buf_append(&g->bin, "\0\0\0\0", 4); /* an empty tensor still points at a byte */
    char *d = attrs(g, "element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"", et, shape, off, size ? size : 4);
    const char *p[1] = {prec};
    return R(add_node(g, "Const", "opset1", d, NULL, 0, p, 1), 0);
}

static ref i64_scalar(tgraph *g, int64_t v) { return konst(g, "i64", "I64", "", &v, sizeof v); }
static ref i32_scalar(tgraph *g, int32_t v) { return konst(g, "i32", "I32", "", &v, sizeof v); }
static ref bool_scalar(tgraph *g, bool v) {
    uint8_t b = v;
    return konst(g, "boolean", "BOOL", "", &b, 1);
}
static ref i32_vector(tgraph *g, const int32_t *v, int n) {
    char shape[24];
    snprintf(shape, sizeof shape, "%d", n);
    return konst(g, "i32", "I32", shape, v, (size_t)n * sizeof *v);
}
/* One string as bytes (a pattern, a replacement, a mode name). */
static ref text(tgraph *g, const void *p, size_t n) {
    char shape[24];
    snprintf(shape, sizeof shape, "%zu", n);
    return konst(g, "u8", "U8", shape, p, n);
}
static ref text0(tgraph *g, const char *s) { return text(g, s, strlen(s)); }

/* A list of strings as the ops take it: begins [n], ends [n] (i32) and the chars (u8). */
static void strings(tgraph *g, const hfx_bytes *v, int n, ref out[3]) {
    int32_t *b = malloc((size_t)(n ? n : 1) * sizeof *b), *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    hfx_buf chars = {0};
    if (!b || !e) g->oom = true;
    for (int i = 0; b && e && i < n; i++) {
        if (chars.len + v[i].n > INT32_MAX) {
            g->oom = true; /* the ops index with i32 */
            break;
        }
        b[i] = (int32_t)chars.len;
        hfx_buf_append(&chars, v[i].p, v[i].n);
        e[i] = (int32_t)chars.len;
    }
    if (chars.oom) g->oom = true;
    if (g->oom) {
        out[0] = out[1] = out[2] = R(0, 0);
    } else {
        out[0] = i32_vector(g, b, n);
        out[1] = i32_vector(g, e, n);
        out[2] = text(g, chars.data, chars.len);
    }
    free(b);
    free(e);
    hfx_buf_free(&chars);
}

static const char *const STR3[] = {"I32", "I32", "U8"};
static const char *const STR4[] = {"I32", "I32", "U8", "BOOL"};
static const char *const RAGGED5[] = {"I32", "I32", "I32", "I32", "U8"};
static const char *const RAGGED6[] = {"I32", "I32", "I32", "I32", "U8", "BOOL"};
static const char *const IDS3[] = {"I32", "I32", "I32"};

static int ext(tgraph *g, const char *type, char *data, const ref *in, int n_in, const char *const *prec, int n_out) {
    return add_node(g, type, "extension", data, in, n_in, prec, n_out);
}

/* The pieces of text flowing through the tokenizer. */
typedef struct flow {
    ref rb, re;        /* row begins, ends: which strings belong to which batch row */
    ref b, e, c, skip; /* the strings, and whether each is an added token */
} flow;

static void replace_step(tgraph *g, flow *f, const char *pattern, const char *replace, bool with_skip) {
    ref in[6] = {f->b, f->e, f->c, f->skip, text0(g, pattern), text0(g, replace)};
    if (!with_skip) {
        in[3] = in[4];
        in[4] = in[5];
    }
    int n = ext(g, "RegexNormalization", attrs(g, "global_replace=\"true\""), in, with_skip ? 6 : 5,
                with_skip ? STR4 : STR3, with_skip ? 4 : 3);
    f->b = R(n, 0);
    f->e = R(n, 1);
    f->c = R(n, 2);
    if (with_skip) f->skip = R(n, 3);
}

static void step(tgraph *g, flow *f, const hfx_tok_step *s) {
    if (s->kind == HFX_TOK_REPLACE) {
        replace_step(g, f, s->pattern, s->replace, true);
    } else if (s->kind == HFX_TOK_UNICODE) {
        ref in[4] = {f->b, f->e, f->c, f->skip};
        int n = ext(g, "CharsMapNormalization",
                    attrs(g, "add_dummy_prefix=\"false\" remove_extra_whitespaces=\"false\" escape_whitespaces=\"false\" "
                             "normalization_form=\"%s\" case_fold=\"%s\" nmt=\"false\"",
                          s->form, s->case_fold ? "true" : "false"),
                    in, 4, STR4, 4);
        f->b = R(n, 0);
        f->e = R(n, 1);
        f->c = R(n, 2);
        f->skip = R(n, 3);
    } else {
        ref in[7] = {f->rb, f->re, f->b, f->e, f->c, f->skip, text0(g, s->pattern)};
        int n = ext(g, "RegexSplit",
                    attrs(g, "behaviour=\"%s\" invert=\"%s\" max_splits=\"-1\"", s->behaviour, s->invert ? "true" : "false"),
                    in, 7, RAGGED6, 6);
        *f = (flow){R(n, 0), R(n, 1), R(n, 2), R(n, 3), R(n, 4), R(n, 5)};
    }
}

static ref result(tgraph *g, ref r, const char *name) {
    static const char *const none[1] = {NULL};
    int n = add_node(g, "Result", "opset1", NULL, &r, 1, none, 0);
    if (!g->oom) g->nodes[n].out_name = name;
    return R(n, 0);
}

static ref convert(tgraph *g, ref r, const char *to, const char *prec) {
    const char *p[1] = {prec};
    return R(add_node(g, "Convert", "opset1", attrs(g, "destination_type=\"%s\"", to), &r, 1, p, 1), 0);
}

static void build_tokenizer(const hfx_tokenizer *t, tgraph *g) {
    static const char *const S[] = {"STRING"}, *const I64[] = {"I64"}, *const I32[] = {"I32"}, *const B[] = {"BOOL"};
    ref in[MAX_IN];
    ref p = R(add_node(g, "Parameter", "opset1", attrs(g, "shape=\"?\" element_type=\"string\""), NULL, 0, S, 1), 0);
    int un = add_node(g, "StringTensorUnpack", "opset15", NULL, &p, 1, STR3, 3);
    flow f = {.b = R(un, 0), .e = R(un, 1), .c = R(un, 2)};
    /* one string per batch row: rows [i, i + 1) */
    ref shape = R(add_node(g, "ShapeOf", "opset3", attrs(g, "output_type=\"i64\""), &f.b, 1, I64, 1), 0);
    in[0] = shape, in[1] = i64_scalar(g, 0), in[2] = i64_scalar(g, 0);
    ref batch = R(add_node(g, "Gather", "opset8", attrs(g, "batch_dims=\"0\""), in, 3, I64, 1), 0);
    in[0] = i64_scalar(g, 0), in[1] = batch, in[2] = i64_scalar(g, 1);
    f.rb = R(add_node(g, "Range", "opset4", attrs(g, "output_type=\"i32\""), in, 3, I32, 1), 0);
    in[0] = batch, in[1] = i64_scalar(g, 1);
    ref batch1 = R(add_node(g, "Add", "opset1", attrs(g, "auto_broadcast=\"numpy\""), in, 2, I64, 1), 0);
    in[0] = i64_scalar(g, 1), in[1] = batch1, in[2] = i64_scalar(g, 1);
    f.re = R(add_node(g, "Range", "opset4", attrs(g, "output_type=\"i32\""), in, 3, I32, 1), 0);

    for (int i = 0; i < t->n_first; i++) replace_step(g, &f, t->first[i].pattern, t->first[i].replace, false);

    in[0] = f.rb, in[1] = f.re, in[2] = f.b, in[3] = f.e, in[4] = f.c, in[5] = text0(g, t->added_pattern);
    int sp = ext(g, "SpecialTokensSplit", NULL, in, 6, RAGGED6, 6);
    f = (flow){R(sp, 0), R(sp, 1), R(sp, 2), R(sp, 3), R(sp, 4), R(sp, 5)};
    for (int i = 0; i < t->n_steps; i++) step(g, &f, &t->steps[i]);

    /* the model */
    int n_in = 0;
    in[n_in++] = f.rb, in[n_in++] = f.re, in[n_in++] = f.b, in[n_in++] = f.e, in[n_in++] = f.c;
    strings(g, t->vocab, t->n_vocab, &in[n_in]);
    n_in += 3;
    int model;
    if (t->model == HFX_TOK_BPE) {
        strings(g, t->merge_left, t->n_merges, &in[n_in]);
        strings(g, t->merge_right, t->n_merges, &in[n_in + 3]);
        strings(g, t->added, t->n_added, &in[n_in + 6]);
        in[n_in + 9] = i32_vector(g, t->added_id, t->n_added);
        n_in += 10;
        hfx_buf a = {0};
        hfx_buf_puts(&a, "unk_token=\"");
        hfx_ov_xml_escaped(&a, t->unk_token ? t->unk_token : "");
        hfx_buf_printf(&a, "\" fuse_unk=\"%s\" suffix_indicator=\"\" end_suffix=\"\" byte_fallback=\"%s\" cache_capacity=\"%d\"",
                       t->fuse_unk ? "true" : "false", t->byte_fallback ? "true" : "false",
                       t->n_vocab / 5 > 20000 ? t->n_vocab / 5 : 20000);
        hfx_buf_append(&a, "", 1);
        if (a.oom) g->oom = true;
        model = ext(g, "BPETokenizer", (char *)a.data, in, n_in, IDS3, 3);
    } else if (t->model == HFX_TOK_WORDPIECE) {
        in[n_in++] = i32_scalar(g, t->unk_id);
        hfx_buf a = {0};
        hfx_buf_puts(&a, "suffix_indicator=\"");
        hfx_ov_xml_escaped(&a, t->subword_prefix);
        hfx_buf_printf(&a, "\" max_bytes_per_word=\"%d\"", t->max_word_chars);
        hfx_buf_append(&a, "", 1);
        if (a.oom) g->oom = true;
        model = ext(g, "WordpieceTokenizer", (char *)a.data, in, n_in, IDS3, 3);
    } else {
        char vshape[24];
        snprintf(vshape, sizeof vshape, "%d", t->n_vocab);
        in[n_in++] = konst(g, "f32", "FP32", vshape, t->scores, (size_t)t->n_vocab * sizeof *t->scores);
        model = ext(g, "UnigramTokenizer",
                    attrs(g, "byte_fallback=\"%s\" unk_token_id=\"%d\" fuse_unk=\"true\" min_score=\"inf\"",
                          t->byte_fallback ? "true" : "false", t->unk_id),
                    in, n_in, IDS3, 3);
    }

    /* truncation, off unless GenAI switches its variable on; room for the template's tokens */
    int added = 0;
    for (int i = 0; i < t->n_segments; i++) added += t->segments[i].sequence ? 0 : t->segments[i].n_ids;
    ref flag = bool_scalar(g, false);
    int rv = add_node(g, "ReadValue", "opset6",
                      attrs(g, "variable_id=\"truncation\" variable_type=\"dynamic\" variable_shape=\"...\""), &flag, 1, B, 1);
    in[0] = R(rv, 0), in[1] = i32_scalar(g, INT32_MAX - added), in[2] = i32_scalar(g, INT32_MAX - 64);
    ref max_len = R(add_node(g, "Select", "opset1", attrs(g, "auto_broadcast=\"numpy\""), in, 3, I32, 1), 0);
    in[0] = R(model, 0), in[1] = R(model, 1), in[2] = R(model, 2), in[3] = max_len;
    in[4] = text0(g, "right"), in[5] = text0(g, "longest_first");
    int tr = ext(g, "Truncate", attrs(g, "m_num_inputs=\"1\""), in, 6, IDS3, 3);
    ref state = R(rv, 0);
    add_node(g, "Assign", "opset6", attrs(g, "variable_id=\"truncation\""), &state, 1, B, 1);

    /* the template: the sequence and the special tokens around it */
    n_in = 0;
    int32_t seg_ids[HFX_TOK_MAX_SEGMENTS] = {0};
    for (int i = 0; i < t->n_segments; i++) { /* n_segments ≤ HFX_TOK_MAX_SEGMENTS: the reader's bound */
        const hfx_tok_segment *s = &t->segments[i];
        if (s->sequence) {
            in[n_in++] = R(tr, 0), in[n_in++] = R(tr, 1), in[n_in++] = R(tr, 2);
        } else {
            in[n_in++] = i32_scalar(g, 0), in[n_in++] = i32_scalar(g, s->n_ids);
            in[n_in++] = i32_vector(g, s->ids, s->n_ids);
        }
    }
    in[n_in++] = i32_vector(g, seg_ids, t->n_segments);
    static const char *const COMBINE[] = {"I32", "I32", "I32", "I32", "I32", "I32"};
    int cs = ext(g, "CombineSegments", NULL, in, n_in, COMBINE, 6);

    in[0] = R(cs, 1), in[1] = R(cs, 0);
    ref len = R(add_node(g, "Subtract", "opset1", attrs(g, "auto_broadcast=\"numpy\""), in, 2, I32, 1), 0);
    in[0] = len, in[1] = i32_scalar(g, 0);
    ref longest = R(add_node(g, "ReduceMax", "opset1", attrs(g, "keep_dims=\"false\""), in, 2, I32, 1), 0);
    in[0] = R(cs, 0), in[1] = R(cs, 1), in[2] = R(cs, 2), in[3] = longest;
    in[4] = i32_scalar(g, t->pad_id >= 0 ? (int32_t)t->pad_id : 0);
    static const char *const DENSE[] = {"I32", "BOOL"};
    int dense = ext(g, "RaggedToDense", attrs(g, "pad_right=\"true\" m_pad_max_length=\"false\""), in, 5, DENSE, 2);
    ref ids = convert(g, R(dense, 0), "i64", "I64");
    ref mask = convert(g, convert(g, R(dense, 1), "i32", "I32"), "i64", "I64");
    result(g, ids, "input_ids");
    result(g, mask, "attention_mask");
}

static void build_detokenizer(const hfx_tokenizer *t, tgraph *g) {
    static const char *const I64[] = {"I64"}, *const S[] = {"STRING"};
    ref in[8];
    ref p = R(add_node(g, "Parameter", "opset1", attrs(g, "shape=\"?,?\" element_type=\"i64\""), NULL, 0, I64, 1), 0);
    in[0] = convert(g, p, "i32", "I32");
    strings(g, t->dvocab, t->n_vocab, &in[1]);
    in[4] = i32_vector(g, t->skip_ids, t->n_skip);
    int vd = ext(g, "VocabDecoder", attrs(g, "skip_tokens=\"\""), in, 5, RAGGED5, 5);
    ref b = R(vd, 2), e = R(vd, 3), c = R(vd, 4);
    if (t->decode_byte_fallback) {
        in[0] = b, in[1] = e, in[2] = c;
        int bf = ext(g, "ByteFallback", NULL, in, 3, STR3, 3);
        b = R(bf, 0), e = R(bf, 1), c = R(bf, 2);
    }
    in[0] = R(vd, 0), in[1] = R(vd, 1), in[2] = b, in[3] = e;
    static const char *const FUSED[] = {"I32", "I32"};
    int fz = ext(g, "FuzeRagged", NULL, in, 4, FUSED, 2);
    flow f = {.b = R(fz, 0), .e = R(fz, 1), .c = c};
    for (int i = 0; i < t->n_dsteps; i++) replace_step(g, &f, t->dsteps[i].pattern, t->dsteps[i].replace, false);
    in[0] = f.b, in[1] = f.e, in[2] = f.c;
    int v = ext(g, "UTF8Validate", attrs(g, "replace_mode=\"true\""), in, 3, STR3, 3);
    in[0] = R(v, 0), in[1] = R(v, 1), in[2] = R(v, 2);
    ref s = R(add_node(g, "StringTensorPack", "opset15", NULL, in, 3, S, 1), 0);
    result(g, s, "string_output");
}

static void rt(hfx_buf *b, const char *key, const char *value) {
    hfx_buf_printf(b, "\t\t<%s value=\"", key);
    hfx_ov_xml_escaped(b, value);
    hfx_buf_puts(b, "\" />\n");
}

static void rt_id(hfx_buf *b, const char *key, int64_t id) {
    char v[24];
    snprintf(v, sizeof v, "%lld", (long long)id);
    if (id >= 0) rt(b, key, v);
}

static void xml(const tgraph *g, const hfx_tokenizer *t, const char *name, hfx_buf *b) {
    hfx_buf_printf(b, "<?xml version=\"1.0\"?>\n<net name=\"%s\" version=\"11\">\n\t<layers>\n", name);
    for (int i = 0; i < g->n; i++) {
        const tnode *n = &g->nodes[i];
        hfx_buf_printf(b, "\t\t<layer id=\"%d\" name=\"%s_%d\" type=\"%s\" version=\"%s\"", i, n->type, i, n->type, n->version);
        if (n->out_name) hfx_buf_printf(b, " output_names=\"%s\"", n->out_name);
        hfx_buf_puts(b, ">\n");
        if (n->data) hfx_buf_printf(b, "\t\t\t<data %s />\n", n->data);
        if (n->n_in) {
            hfx_buf_puts(b, "\t\t\t<input>\n");
            for (int p = 0; p < n->n_in; p++)
                hfx_buf_printf(b, "\t\t\t\t<port id=\"%d\" precision=\"%s\" />\n", p,
                               g->nodes[n->in[p].node].prec[n->in[p].out]);
            hfx_buf_puts(b, "\t\t\t</input>\n");
        }
        if (n->n_out) {
            hfx_buf_puts(b, "\t\t\t<output>\n");
            for (int p = 0; p < n->n_out; p++) {
                /* the tensor a Result reads is named after it, as OpenVINO's own writer does */
                const char *tname = NULL;
                for (int j = i + 1; j < g->n; j++)
                    if (g->nodes[j].out_name && g->nodes[j].in[0].node == i && g->nodes[j].in[0].out == p)
                        tname = g->nodes[j].out_name;
                hfx_buf_printf(b, "\t\t\t\t<port id=\"%d\" precision=\"%s\"", n->n_in + p, n->prec[p]);
                if (tname) hfx_buf_printf(b, " names=\"%s\"", tname);
                hfx_buf_puts(b, " />\n");
            }
            hfx_buf_puts(b, "\t\t\t</output>\n");
        }
        hfx_buf_puts(b, "\t\t</layer>\n");
    }
    hfx_buf_puts(b, "\t</layers>\n\t<edges>\n");
    for (int i = 0; i < g->n; i++)
        for (int p = 0; p < g->nodes[i].n_in; p++) {
            ref r = g->nodes[i].in[p];
            hfx_buf_printf(b, "\t\t<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\" />\n", r.node,
                           g->nodes[r.node].n_in + r.out, i, p);
        }
    hfx_buf_puts(b, "\t</edges>\n\t<rt_info>\n");
    rt(b, "add_attention_mask", "True");
    rt(b, "add_special_tokens", "True");
    rt_id(b, "bos_token_id", t->bos_id);
    if (t->chat_template) rt(b, "chat_template", t->chat_template);
    rt(b, "detokenizer_input_type", "i64");
    rt_id(b, "eos_token_id", t->eos_id);
    rt(b, "number_of_inputs", "1");
    rt_id(b, "pad_token_id", t->pad_id);
    rt(b, "skip_special_tokens", "True");
    rt(b, "tokenizer_output_type", "i64");
    hfx_buf_puts(b, "\t</rt_info>\n</net>\n");
}

static hfx_status write_graph(const hfx_tokenizer *t, bool detokenizer, hfx_outdir *out, hfx_error *err) {
    const char *name = detokenizer ? "openvino_detokenizer" : "openvino_tokenizer";
    tgraph g = {0};
    if (detokenizer) build_detokenizer(t, &g);
    else build_tokenizer(t, &g);
    hfx_buf x = {0};
    if (!g.oom) xml(&g, t, detokenizer ? "detokenizer" : "tokenizer", &x);
    hfx_status st = g.oom || x.oom || g.bin.oom ? hfx_fail(err, HFX_ERR_NOMEM, "%s: out of memory", name) : HFX_OK;
    char file[64];
    if (!st) {
        snprintf(file, sizeof file, "%s.xml", name);
        st = hfx_outdir_write(out, file, x.data, x.len, err);
    }
    if (!st) {
        snprintf(file, sizeof file, "%s.bin", name);
        st = hfx_outdir_write(out, file, g.bin.data ? (const void *)g.bin.data : "", g.bin.len, err);
    }
    for (int i = 0; i < g.n; i++) free(g.nodes[i].data);
    free(g.nodes);
    hfx_buf_free(&g.bin);
    hfx_buf_free(&x);
    return st;
}

hfx_status hfx_ov_write_tokenizer(const hfx_tokenizer *t, hfx_outdir *out, hfx_error *err) {
    hfx_status st = write_graph(t, false, out, err);
    return st ? st : write_graph(t, true, out, err);
}
