/* An ATen program as a torch.export archive (.pt2): the serialized ExportedProgram
 * (`models/model.json`, torch/_export/serde/schema.py's dataclasses as JSON, schema 8.20), the
 * parameters as raw little-endian tensors (`data/weights/weight_<k>` + their config), an empty
 * constants config and sample inputs, and the archive's version records, all under one root
 * folder in a zip (io/zip.c) that PyTorch's reader maps. The program is the pre-dispatch
 * ("TRAINING" verifier) form, as torch.export.export produces and the Python system saves. */
#include "fmt/dynamo/pt2.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/status.h"
#include "io/zip.h"

enum { CHUNK = 1 << 20, SCHEMA_MAJOR = 8, SCHEMA_MINOR = 20, LAYOUT_STRIDED = 7 };

/* torch/_export/serde/schema.py's ScalarType codes. */
static int scalar_type(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_U8: return 1;
    case HFX_DTYPE_I8: return 2;
    case HFX_DTYPE_I16: return 3;
    case HFX_DTYPE_I32: return 4;
    case HFX_DTYPE_I64: return 5;
    case HFX_DTYPE_F16: return 6;
    case HFX_DTYPE_F32: return 7;
    case HFX_DTYPE_F64: return 8;
    case HFX_DTYPE_BOOL: return 12;
    case HFX_DTYPE_BF16: return 13;
    default: return 0;
    }
}

/* A symbol as sympy reads it: torch's names (s<id>) with its assumptions, so every occurrence
 * parses to the same symbol. */
static void symbol_text(hfx_buf *b, int id) {
    hfx_buf_printf(b, "Symbol('s%d', positive=True, integer=True)", id);
}

/* A product of affine dims as a sympy expression (its hint in *hint); false when constant. */
static bool product_text(const hfx_aten_program *p, const hfx_dim *dims, int n, hfx_buf *b, int64_t *hint,
                         int64_t *constant) {
    int64_t c = 1, h = 1;
    bool any = false;
    for (int d = 0; d < n; d++) {
        int64_t dh = dims[d].c;
        for (int t = 0; t < dims[d].n; t++) dh += dims[d].coef[t] * p->hints[dims[d].sym[t]];
        h *= dh;
        if (!dims[d].n) {
            c *= dims[d].c;
            continue;
        }
        hfx_buf_puts(b, any ? "*(" : "(");
        any = true;
        for (int t = 0; t < dims[d].n; t++) {
            if (t) hfx_buf_puts(b, " + ");
            if (dims[d].coef[t] != 1) hfx_buf_printf(b, "%lld*", (long long)dims[d].coef[t]);
            symbol_text(b, dims[d].sym[t]);
        }
        if (dims[d].c) hfx_buf_printf(b, " + %lld", (long long)dims[d].c);
        hfx_buf_puts(b, ")");
    }
    if (any && c != 1) hfx_buf_printf(b, "*%lld", (long long)c);
    *hint = h;
    *constant = c;
    return any;
}

/* {"as_int": n} or {"as_expr": {"expr_str": ..., "hint": {"as_int": h}}} for the product of dims. */
static json_t *sym_int(const hfx_aten_program *p, const hfx_dim *dims, int n) {
    hfx_buf b = {0};
    int64_t hint, c;
    json_t *j = json_object();
    if (!product_text(p, dims, n, &b, &hint, &c)) {
        json_object_set_new(j, "as_int", json_integer(c));
    } else {
        hfx_buf_append(&b, "", 1);
        json_t *e = json_object(), *h = json_object();
        json_object_set_new(e, "expr_str", json_string(b.oom ? "" : (const char *)b.data));
        json_object_set_new(h, "as_int", json_integer(hint));
        json_object_set_new(e, "hint", h);
        json_object_set_new(j, "as_expr", e);
    }
    hfx_buf_free(&b);
    return j;
}

static json_t *device_cpu(void) {
    json_t *d = json_object();
    json_object_set_new(d, "type", json_string("cpu"));
    json_object_set_new(d, "index", json_null());
    return d;
}

/* TensorMeta: dtype, sizes, contiguous strides (products of the later sizes), device, layout. */
static json_t *tensor_meta(const hfx_aten_program *p, const hfx_aten_value *v, bool requires_grad) {
    json_t *m = json_object(), *sizes = json_array(), *strides = json_array(), *zero = json_object();
    for (int d = 0; d < v->rank; d++) {
        json_array_append_new(sizes, sym_int(p, &v->dims[d], 1));
        json_array_append_new(strides, sym_int(p, &v->dims[d + 1], v->rank - d - 1));
    }
    json_object_set_new(zero, "as_int", json_integer(0));
    json_object_set_new(m, "dtype", json_integer(scalar_type(v->dtype)));
    json_object_set_new(m, "sizes", sizes);
    json_object_set_new(m, "requires_grad", json_boolean(requires_grad));
    json_object_set_new(m, "device", device_cpu());
    json_object_set_new(m, "strides", strides);
    json_object_set_new(m, "storage_offset", zero);
    json_object_set_new(m, "layout", json_integer(LAYOUT_STRIDED));
    return m;
}

static json_t *named(const char *key, const char *name) {
    json_t *inner = json_object(), *outer = json_object();
    json_object_set_new(inner, "name", json_string(name));
    json_object_set_new(outer, key, inner);
    return outer;
}

static json_t *one(const char *key, json_t *value) {
    json_t *o = json_object();
    json_object_set_new(o, key, value);
    return o;
}

/* An Argument of the serialized graph. */
static json_t *argument(const hfx_aten_program *p, const hfx_aten_arg *a) {
    switch (a->kind) {
    case HFX_ARG_NONE: return one("as_none", json_true());
    case HFX_ARG_TENSOR: return named("as_tensor", p->values[a->value].name);
    case HFX_ARG_TENSORS: {
        json_t *l = json_array();
        for (int i = 0; i < a->n; i++) {
            json_t *t = json_object();
            json_object_set_new(t, "name", json_string(p->values[a->values[i]].name));
            json_array_append_new(l, t);
        }
        return one("as_tensors", l);
    }
    case HFX_ARG_INT: return one("as_int", json_integer(a->i));
    case HFX_ARG_INTS: {
        bool sym = false;
        for (int i = 0; i < a->n; i++) sym |= a->sizes[i].value >= 0;
        json_t *l = json_array();
        for (int i = 0; i < a->n; i++) {
            const hfx_aten_size *s = &a->sizes[i];
            if (!sym) json_array_append_new(l, json_integer(s->c));
            else if (s->value >= 0) json_array_append_new(l, one("as_name", json_string(p->values[s->value].name)));
            else json_array_append_new(l, one("as_int", json_integer(s->c)));
        }
        return one(sym ? "as_sym_ints" : "as_ints", l);
    }
    case HFX_ARG_SYMINT: return one("as_sym_int", one("as_name", json_string(p->values[a->value].name)));
    case HFX_ARG_FLOAT: return one("as_float", json_real(a->f));
    case HFX_ARG_BOOL: return one("as_bool", json_boolean(a->i));
    case HFX_ARG_DTYPE: return one("as_scalar_type", json_integer(scalar_type(a->dtype)));
    case HFX_ARG_DEVICE: return one("as_device", device_cpu());
    default: return json_null();
    }
}

/* The node's named inputs, in schema order, from aten.def's argument list. */
static json_t *node_inputs(const hfx_aten_program *p, const hfx_aten_node *n) {
    const char *spec = hfx_aten_info_of(n->op)->args;
    json_t *ins = json_array();
    for (int i = 0; *spec && i < HFX_ATEN_MAX_ARGS; i++) {
        while (*spec == ' ') spec++;
        const char *end = strchr(spec, ' ');
        size_t len = end ? (size_t)(end - spec) : strlen(spec);
        bool keyword = *spec == '*';
        const char *name = spec + keyword, *colon = memchr(name, ':', len - keyword);
        if (colon && n->args[i].kind != HFX_ARG_DEFAULT) {
            json_t *in = json_object();
            json_object_set_new(in, "name", json_stringn(name, (size_t)(colon - name)));
            json_object_set_new(in, "arg", argument(p, &n->args[i]));
            json_object_set_new(in, "kind", json_integer(keyword ? 2 : 1));
            json_array_append_new(ins, in);
        }
        spec += len;
    }
    return ins;
}

/* A pytree spec string (torch's treespec JSON): `head`, n leaves, `tail`. */
static json_t *spec_text(const char *head, int n, const char *tail) {
    hfx_buf b = {0};
    hfx_buf_puts(&b, head);
    for (int i = 0; i < n; i++)
        hfx_buf_puts(&b, i ? ", {\"type\": null, \"context\": null, \"children_spec\": []}"
                          : "{\"type\": null, \"context\": null, \"children_spec\": []}");
    hfx_buf_puts(&b, tail);
    hfx_buf_append(&b, "", 1);
    json_t *s = b.oom ? NULL : json_string((const char *)b.data);
    hfx_buf_free(&b);
    return s;
}

#define TUPLE_OPEN "{\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": ["

/* The call's spec: ((n positional leaves), {}) */
static json_t *call_spec(int n_args) {
    return spec_text("[1, " TUPLE_OPEN TUPLE_OPEN, n_args,
                     "]}, {\"type\": \"builtins.dict\", \"context\": \"[]\", \"children_spec\": []}]}]");
}

/* The outputs' spec: one leaf, or a tuple of n */
static json_t *outputs_spec(int n) {
    return n == 1 ? spec_text("[1, ", 1, "]") : spec_text("[1, " TUPLE_OPEN, n, "]}]");
}

static json_t *exported_program(const hfx_aten_program *p) {
    json_t *graph = json_object(), *inputs = json_array(), *outputs = json_array(), *nodes = json_array();
    json_t *tensors = json_object(), *symints = json_object(), *in_specs = json_array(), *out_specs = json_array();
    json_t *arg_names = json_array();
    int n_user = 0;
    for (int i = 0; i < p->n_values; i++) {
        const hfx_aten_value *v = &p->values[i];
        if (v->symint) json_object_set_new(symints, v->name, sym_int(p, &v->expr, 1));
        else {
            bool param = false;
            for (int k = 0; k < p->n_inputs; k++)
                param |= p->inputs[k].value == i && p->inputs[k].kind == HFX_INPUT_PARAMETER;
            json_object_set_new(tensors, v->name, tensor_meta(p, v, param));
        }
    }
    static const hfx_aten_input_kind order[3] = {HFX_INPUT_PARAMETER, HFX_INPUT_CONSTANT, HFX_INPUT_USER};
    for (int kk = 0; kk < 3 * p->n_inputs; kk++) { /* torch.export's order: parameters, constants, user inputs */
        const hfx_aten_input *in = &p->inputs[kk % p->n_inputs];
        if (in->kind != order[kk / p->n_inputs]) continue;
        const char *name = p->values[in->value].name;
        json_array_append_new(inputs, named("as_tensor", name));
        json_t *spec = json_object();
        if (in->kind != HFX_INPUT_USER) {
            bool param = in->kind == HFX_INPUT_PARAMETER;
            json_t *par = json_object(), *arg = json_object();
            json_object_set_new(arg, "name", json_string(name));
            json_object_set_new(par, "arg", arg);
            json_object_set_new(par, param ? "parameter_name" : "tensor_constant_name", json_string(in->target));
            json_object_set_new(spec, param ? "parameter" : "tensor_constant", par);
        } else {
            json_object_set_new(spec, "user_input", one("arg", named("as_tensor", name)));
            json_array_append_new(arg_names, json_string(name));
            n_user++;
        }
        json_array_append_new(in_specs, spec);
    }
    int n_user_out = 0;
    for (int pass = 0; pass < 2; pass++) /* torch.export's order: input mutations, then user outputs */
        for (int k = 0; k < p->n_outputs; k++) {
            if ((p->mutates[k] >= 0) != (pass == 0)) continue;
            const char *name = p->values[p->outputs[k]].name;
            json_array_append_new(outputs, named("as_tensor", name));
            if (p->mutates[k] >= 0) {
                json_t *m = json_object(), *arg = json_object(); /* a TensorArgument, not an Argument */
                json_object_set_new(arg, "name", json_string(name));
                json_object_set_new(m, "arg", arg);
                json_object_set_new(m, "user_input_name", json_string(p->values[p->mutates[k]].name));
                json_array_append_new(out_specs, one("user_input_mutation", m));
            } else {
                json_array_append_new(out_specs, one("user_output", one("arg", named("as_tensor", name))));
                n_user_out++;
            }
        }
    for (int i = 0; i < p->n_nodes; i++) {
        const hfx_aten_node *n = &p->nodes[i];
        const hfx_aten_info *info = hfx_aten_info_of(n->op);
        char target[160];
        if (info->module) snprintf(target, sizeof target, "%s.%s", info->module, info->op);
        else snprintf(target, sizeof target, "torch.ops.aten.%s.%s", info->op, info->overload);
        json_t *node = json_object(), *outs = json_array();
        for (int o = 0; o < n->n_out; o++) {
            const hfx_aten_value *v = &p->values[n->out[o]];
            json_array_append_new(outs, v->symint ? one("as_sym_int", one("as_name", json_string(v->name)))
                                                  : named("as_tensor", v->name));
        }
        json_object_set_new(node, "target", json_string(target));
        json_object_set_new(node, "inputs", node_inputs(p, n));
        json_object_set_new(node, "outputs", outs);
        json_object_set_new(node, "metadata", json_object());
        json_object_set_new(node, "is_hop_single_tensor_return", json_null());
        char node_name[256]; /* a tuple result is a node of its own; its items are the outputs */
        snprintf(node_name, sizeof node_name, n->n_out > 1 ? "%s_tuple" : "%s", p->values[n->out[0]].name);
        json_object_set_new(node, "name", json_string(node_name));
        json_array_append_new(nodes, node);
    }
    json_object_set_new(graph, "inputs", inputs);
    json_object_set_new(graph, "outputs", outputs);
    json_object_set_new(graph, "nodes", nodes);
    json_object_set_new(graph, "tensor_values", tensors);
    json_object_set_new(graph, "sym_int_values", symints);
    json_object_set_new(graph, "sym_bool_values", json_object());
    json_object_set_new(graph, "is_single_tensor_return", json_false());
    json_object_set_new(graph, "custom_obj_values", json_object());
    json_object_set_new(graph, "sym_float_values", json_object());

    json_t *signature = json_object();
    json_object_set_new(signature, "input_specs", in_specs);
    json_object_set_new(signature, "output_specs", out_specs);
    json_t *root_sig = json_object(), *root = json_object(), *call_graph = json_array();
    json_object_set_new(root_sig, "inputs", json_array());
    json_object_set_new(root_sig, "outputs", json_array());
    json_object_set_new(root_sig, "in_spec", call_spec(n_user));
    json_object_set_new(root_sig, "out_spec", outputs_spec(n_user_out));
    json_object_set_new(root_sig, "forward_arg_names", arg_names);
    json_object_set_new(root, "fqn", json_string(""));
    json_object_set_new(root, "signature", root_sig);
    json_array_append_new(call_graph, root);

    json_t *module = json_object();
    json_object_set_new(module, "graph", graph);
    json_object_set_new(module, "signature", signature);
    json_object_set_new(module, "module_call_graph", call_graph);
    json_object_set_new(module, "metadata", json_object());
    json_object_set_new(module, "treespec_namedtuple_fields", json_object());

    json_t *ranges = json_object();
    bool used[16] = {0}; /* the symbols some tensor's size names: the others are left out */
    for (int i = 0; i < p->n_values; i++)
        for (int d = 0; d < p->values[i].rank; d++)
            for (int t = 0; t < p->values[i].dims[d].n; t++) used[p->values[i].dims[d].sym[t] & 15] = true;
    for (int s = 0; s < p->g->n_symbols; s++) {
        if (!used[s]) continue;
        char name[24];
        snprintf(name, sizeof name, "s%d", s);
        json_t *r = json_object();
        json_object_set_new(r, "min_val", json_integer(p->g->symbols[s].min));
        json_object_set_new(r, "max_val", p->g->symbols[s].max >= INT32_MAX ? json_null()
                                                                           : json_integer(p->g->symbols[s].max));
        json_object_set_new(ranges, name, r);
    }
    json_t *ep = json_object(), *opset = json_object(), *version = json_object(), *verifiers = json_array();
    json_object_set_new(opset, "aten", json_integer(10));
    json_object_set_new(version, "major", json_integer(SCHEMA_MAJOR));
    json_object_set_new(version, "minor", json_integer(SCHEMA_MINOR));
    json_array_append_new(verifiers, json_string("TRAINING"));
    json_object_set_new(ep, "graph_module", module);
    json_object_set_new(ep, "opset_version", opset);
    json_object_set_new(ep, "range_constraints", ranges);
    json_object_set_new(ep, "schema_version", version);
    json_object_set_new(ep, "verifiers", verifiers);
    json_object_set_new(ep, "torch_version", json_string("2.15.0"));
    json_object_set_new(ep, "guards_code", json_array());
    return ep;
}

/* The parameters' (or the constants') config: each name → its file and tensor meta. */
static json_t *tensors_config(const hfx_aten_program *p, hfx_aten_input_kind kind) {
    json_t *config = json_object();
    int k = 0;
    for (int i = 0; i < p->n_inputs; i++) {
        const hfx_aten_input *in = &p->inputs[i];
        if (in->kind != kind) continue;
        char path[32];
        snprintf(path, sizeof path, "%s_%d", kind == HFX_INPUT_PARAMETER ? "weight" : "tensor", k++);
        json_t *e = json_object();
        json_object_set_new(e, "path_name", json_string(path));
        json_object_set_new(e, "is_param", json_boolean(kind == HFX_INPUT_PARAMETER));
        json_object_set_new(e, "use_pickle", json_false());
        json_object_set_new(e, "tensor_meta", tensor_meta(p, &p->values[in->value], kind == HFX_INPUT_PARAMETER));
        json_object_set_new(config, in->target, e);
    }
    return one("config", config);
}

/* Each tensor input of `kind` as the entry <root>/<folder>/<prefix>_<k>, streamed. */
static hfx_status tensor_entries(hfx_zip *z, const hfx_aten_program *p, hfx_aten_input_kind kind, const char *root,
                                 hfx_error *err) {
    char name[512];
    int k = 0;
    hfx_status st = HFX_OK;
    for (int i = 0; !st && i < p->n_inputs; i++) {
        const hfx_aten_input *in = &p->inputs[i];
        if (in->kind != kind) continue;
        const hfx_aten_value *v = &p->values[in->value];
        uint64_t bytes = hfx_dtype_size(v->dtype);
        for (int d = 0; d < v->rank; d++) bytes *= (uint64_t)v->dims[d].c; /* stored tensors have fixed shapes */
        if (kind == HFX_INPUT_PARAMETER) snprintf(name, sizeof name, "%s/data/weights/weight_%d", root, k++);
        else snprintf(name, sizeof name, "%s/data/constants/tensor_%d", root, k++);
        st = hfx_zip_begin(z, name, err);
        if (!st) st = hfx_bulk_stream(hfx_zip_bulk(z), in->init, in->bytes, bytes, err);
        if (!st) st = hfx_zip_end(z, err);
    }
    return st;
}

/* ---- sample inputs: a torch.save archive of ((inputs...), {}) ---- */

/* Pickle (protocol 2) opcodes torch.save's files use. */
static void pk_global(hfx_buf *b, const char *module, const char *name) {
    hfx_buf_printf(b, "c%s\n%s\n", module, name);
}

static void pk_text(hfx_buf *b, const char *s) {
    uint32_t n = (uint32_t)strlen(s);
    uint8_t h[5] = {'X', (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    hfx_buf_append(b, h, 5);
    hfx_buf_append(b, s, n);
}

static void pk_int(hfx_buf *b, int64_t v) { /* BININT: sizes and strides stay below 2^31 */
    uint32_t u = (uint32_t)(int32_t)v;
    uint8_t h[5] = {'J', (uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    hfx_buf_append(b, h, 5);
}

static const char *storage_type(hfx_dtype dt) {
    switch (dt) {
    case HFX_DTYPE_I64: return "LongStorage";
    case HFX_DTYPE_I32: return "IntStorage";
    case HFX_DTYPE_F32: return "FloatStorage";
    case HFX_DTYPE_F16: return "HalfStorage";
    case HFX_DTYPE_BF16: return "BFloat16Storage";
    case HFX_DTYPE_BOOL: return "BoolStorage";
    default: return NULL;
    }
}

/* A tensor of `sizes` (contiguous) held by storage `key`: torch._utils._rebuild_tensor_v2. */
static void pk_tensor(hfx_buf *b, const char *storage, int key, int rank, const int64_t *sizes) {
    int64_t numel = 1, strides[HFX_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) strides[d] = numel, numel *= sizes[d];
    char k[16];
    snprintf(k, sizeof k, "%d", key);
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    hfx_buf_puts(b, "((");
    pk_text(b, "storage");
    pk_global(b, "torch", storage);
    pk_text(b, k);
    pk_text(b, "cpu");
    pk_int(b, numel);
    hfx_buf_puts(b, "tQ"); /* the storage tuple, as a persistent id */
    pk_int(b, 0);
    hfx_buf_puts(b, "(");
    for (int d = 0; d < rank; d++) pk_int(b, sizes[d]);
    hfx_buf_puts(b, "t(");
    for (int d = 0; d < rank; d++) pk_int(b, strides[d]);
    hfx_buf_puts(b, "t\x89"); /* requires_grad False */
    pk_global(b, "collections", "OrderedDict");
    hfx_buf_puts(b, ")RtR"); /* OrderedDict(), the arguments' tuple, the call */
}

/* The example inputs torch.export keeps (AOTInductor compiles from them): each user input at the
 * symbols' hinted sizes, zero-filled, saved the way torch.save writes ((args...), {}). */
static hfx_status sample_inputs(const hfx_aten_program *p, hfx_outdir *out, char **data, size_t *len,
                                hfx_error *err) {
    *data = NULL;
    *len = 0;
    hfx_buf pkl = {0};
    hfx_buf_puts(&pkl, "\x80\x02(");
    int64_t sizes[HFX_MAX_RANK], bytes[64];
    int n = 0;
    for (int i = 0; i < p->n_inputs; i++) {
        const hfx_aten_input *in = &p->inputs[i];
        const hfx_aten_value *v = &p->values[in->value];
        if (in->kind != HFX_INPUT_USER) continue;
        const char *storage = storage_type(v->dtype);
        if (!storage || n == 64) {
            hfx_buf_free(&pkl);
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: no sample input of this type", v->name);
        }
        int64_t numel = 1;
        for (int d = 0; d < v->rank; d++) {
            sizes[d] = v->dims[d].c;
            for (int t = 0; t < v->dims[d].n; t++) sizes[d] += v->dims[d].coef[t] * p->hints[v->dims[d].sym[t]];
            numel *= sizes[d];
        }
        pk_tensor(&pkl, storage, n, v->rank, sizes);
        bytes[n++] = numel * (int64_t)hfx_dtype_size(v->dtype);
    }
    hfx_buf_puts(&pkl, "t}\x86."); /* (args), {}: the pair; stop */
    FILE *f = open_memstream(data, len);
    hfx_zip *z = NULL;
    hfx_status st = pkl.oom ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory")
                    : !f  ? hfx_fail(err, HFX_ERR_NOMEM, "out of memory")
                          : hfx_zip_open(out, f, 1 << 16, &z, err);
    if (!st) st = hfx_zip_add(z, "archive/data.pkl", pkl.data, pkl.len, err);
    static const char *const records[][2] = {{"archive/.format_version", "1"}, {"archive/.storage_alignment", "64"},
                                             {"archive/byteorder", "little"}};
    for (size_t i = 0; !st && i < sizeof records / sizeof records[0]; i++)
        st = hfx_zip_add(z, records[i][0], records[i][1], strlen(records[i][1]), err);
    for (int k = 0; !st && k < n; k++) {
        char name[48];
        snprintf(name, sizeof name, "archive/data/%d", k);
        st = hfx_zip_begin(z, name, err);
        if (!st) hfx_bulk_pad_to(hfx_zip_bulk(z), hfx_bulk_offset(hfx_zip_bulk(z)) + (uint64_t)bytes[k]); /* zeros */
        if (!st) st = hfx_zip_end(z, err);
    }
    if (!st) st = hfx_zip_add(z, "archive/version", "3\n", 2, err);
    if (!st) st = hfx_zip_add(z, "archive/.data/serialization_id", "0000000000000000000000000000000000000000", 40, err);
    if (z) st = hfx_zip_close(z, st, "sample inputs", err);
    if (f && fclose(f) != 0 && !st) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_buf_free(&pkl);
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}

/* json as an archive entry; consumes j. */
static hfx_status add_json(hfx_zip *z, const char *name, json_t *j, hfx_error *err) {
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    hfx_status st = text ? hfx_zip_add(z, name, text, strlen(text), err) : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    free(text);
    return st;
}

hfx_status hfx_pt2_write(const hfx_aten_program *p, const char *root, hfx_outdir *out, const char *file,
                         hfx_error *err) {
    if (p->oom) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int i = 0; i < p->n_inputs; i++)
        for (int d = 0; d < p->values[p->inputs[i].value].rank; d++)
            if (p->inputs[i].kind != HFX_INPUT_USER && !hfx_dim_is_const(p->values[p->inputs[i].value].dims[d]))
                return hfx_fail(err, HFX_ERR_INTERNAL, "%s: a stored tensor with a dynamic shape",
                                p->values[p->inputs[i].value].name);
    for (int i = 0; i < p->n_values; i++)
        if (!p->values[i].symint && !scalar_type(p->values[i].dtype))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s tensors have no torch.export type", p->values[i].name,
                            hfx_dtype_name(p->values[i].dtype));
    FILE *f;
    hfx_zip *z = NULL;
    hfx_status st = hfx_outdir_create(out, file, &f, err);
    if (st) return st;
    st = hfx_zip_open(out, f, CHUNK, &z, err);
    if (!st) st = tensor_entries(z, p, HFX_INPUT_PARAMETER, root, err);
    if (!st) st = tensor_entries(z, p, HFX_INPUT_CONSTANT, root, err);
    char name[512];
    struct {
        const char *path;
        json_t *json;
        const char *text;
    } rest[] = {
        {"data/weights/model_weights_config.json", st ? NULL : tensors_config(p, HFX_INPUT_PARAMETER), NULL},
        {"data/constants/model_constants_config.json", st ? NULL : tensors_config(p, HFX_INPUT_CONSTANT), NULL},
        {"models/model.json", st ? NULL : exported_program(p), NULL},
        {"data/sample_inputs/model.pt", NULL, NULL}, /* sample_inputs(), below */
        {"archive_format", NULL, "pt2"},
        {"archive_version", NULL, "0"},
        {".data/version", NULL, "6\n"},
        {"byteorder", NULL, "little"},
        {".data/serialization_id", NULL, "0000000000000000000000000000000000000000"},
    };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) {
        snprintf(name, sizeof name, "%s/%s", root, rest[i].path);
        if (!st && rest[i].text) st = hfx_zip_add(z, name, rest[i].text, strlen(rest[i].text), err);
        else if (!st && rest[i].json) st = add_json(z, name, rest[i].json, err), rest[i].json = NULL;
        else if (!st) {
            char *data;
            size_t len;
            st = sample_inputs(p, out, &data, &len, err);
            if (!st) st = hfx_zip_add(z, name, data, len, err);
            free(data);
        }
        json_decref(rest[i].json);
    }
    if (z) st = hfx_zip_close(z, st, file, err);
    hfx_status cst = hfx_outdir_close(out, f, file, st ? NULL : err);
    return st ? st : cst;
}
