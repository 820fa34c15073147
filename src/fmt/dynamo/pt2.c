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

/* An expression's text, in a fixed buffer: a product of at most HFX_MAX_RANK dims of at most
 * HFX_DIM_TERMS terms each fits (so no allocation can fail here and leave a wrong text). */
typedef struct expr_text {
    char s[64 + HFX_MAX_RANK * (8 + HFX_DIM_TERMS * 96 + 32)];
    size_t n;
} expr_text;

static void put_text(expr_text *e, const char *text) {
    int k = snprintf(e->s + e->n, sizeof e->s - e->n, "%s", text);
    if (k > 0) e->n = e->n + (size_t)k < sizeof e->s ? e->n + (size_t)k : sizeof e->s - 1;
}

static void put_int(expr_text *e, const char *before, long long v, const char *after) {
    char text[96];
    snprintf(text, sizeof text, "%s%lld%s", before, v, after);
    put_text(e, text);
}

static void put_affine(const hfx_aten_program *p, expr_text *b, hfx_dim d);

/* Symbol `s` as sympy reads it: torch's name (s<id>) with its assumptions, so every occurrence parses to the same
 * symbol; a derived one as what it is, (FloorDiv(of, div) + add) over those (torch's FloorDiv). */
static void put_symbol(const hfx_aten_program *p, expr_text *b, int s) {
    const hfx_symbol *d = &p->g->symbols[s];
    if (d->div <= 0) {
        put_int(b, "Symbol('s", s, "', positive=True, integer=True)");
        return;
    }
    put_text(b, "(FloorDiv(");
    put_affine(p, b, d->of);
    put_int(b, ", ", (long long)d->div, ")");
    if (d->add) put_int(b, " + ", (long long)d->add, "");
    put_text(b, ")");
}

/* A symbolic dim's terms and constant: "a*sym + sym + c". */
static void put_affine(const hfx_aten_program *p, expr_text *b, hfx_dim d) {
    for (int t = 0; t < d.n; t++) {
        if (t) put_text(b, " + ");
        if (d.coef[t] != 1) put_int(b, "", (long long)d.coef[t], "*");
        put_symbol(p, b, d.sym[t]);
    }
    if (d.c) put_int(b, " + ", (long long)d.c, "");
}

/* A product of affine dims as a sympy expression (its hint in *hint); false when constant. */
static bool product_text(const hfx_aten_program *p, const hfx_dim *dims, int n, expr_text *b, int64_t *hint,
                         int64_t *constant) {
    int64_t c = 1, h = 1;
    bool any = false;
    for (int d = 0; d < n; d++) {
        h *= hfx_dim_at(dims[d], p->hints);
        if (!dims[d].n) {
            c *= dims[d].c;
            continue;
        }
        put_text(b, any ? "*(" : "(");
        any = true;
        put_affine(p, b, dims[d]);
        put_text(b, ")");
    }
    if (any && c != 1) put_int(b, "*", (long long)c, "");
    *hint = h;
    *constant = c;
    return any;
}

/* {"as_int": n} or {"as_expr": {"expr_str": ..., "hint": {"as_int": h}}} for the product of dims. */
static json_t *sym_int(const hfx_aten_program *p, const hfx_dim *dims, int n) {
    expr_text b = {.n = 0};
    int64_t hint, c;
    json_t *j = json_object();
    if (!product_text(p, dims, n, &b, &hint, &c)) {
        json_object_set_new(j, "as_int", json_integer(c));
    } else {
        json_t *e = json_object(), *h = json_object();
        json_object_set_new(e, "expr_str", json_string(b.s));
        json_object_set_new(h, "as_int", json_integer(hint));
        json_object_set_new(e, "hint", h);
        json_object_set_new(j, "as_expr", e);
    }
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

/* ---- treespecs ---- */

json_t *hfx_pt2_leaf_spec(void) { return hfx_pt2_spec_node(NULL, NULL, json_array()); }

json_t *hfx_pt2_spec_node(const char *type, json_t *context, json_t *children) {
    json_t *n = json_object();
    json_object_set_new(n, "type", type ? json_string(type) : json_null());
    json_object_set_new(n, "context", context ? context : type ? json_string("null") : json_null());
    json_object_set_new(n, "children_spec", children);
    return n;
}

json_t *hfx_pt2_dumps(json_t *j) {
    char *text = j ? json_dumps(j, JSON_ENSURE_ASCII) : NULL; /* no indent, not compact: ", " and ": " */
    json_decref(j);
    json_t *s = text ? json_string(text) : NULL;
    free(text);
    return s;
}

json_t *hfx_pt2_spec_text(json_t *node) { /* [treespec schema version 1, node] */
    json_t *spec = json_array();
    json_array_append_new(spec, json_integer(1));
    json_array_append_new(spec, node);
    return hfx_pt2_dumps(spec);
}

json_t *hfx_pt2_kwargs_spec(json_t *keys, json_t *children) {
    json_t *outer = json_array();
    json_array_append_new(outer, hfx_pt2_spec_node("builtins.tuple", NULL, json_array()));
    json_array_append_new(outer, hfx_pt2_spec_node("builtins.dict", hfx_pt2_dumps(keys), children));
    return hfx_pt2_spec_text(hfx_pt2_spec_node("builtins.tuple", NULL, outer));
}

json_t *hfx_pt2_tensor_arg(const hfx_aten_program *p, int value) { return named("as_tensor", p->values[value].name); }

/* User input i's sample tensor (after its name where `keyed`: a keyword's), its graph argument and its name. */
static void call_input(const hfx_aten_program *p, int i, bool keyed, hfx_pt2_call *call) {
    const hfx_aten_value *v = &p->values[p->inputs[i].value];
    int64_t sizes[HFX_MAX_RANK];
    hfx_aten_hinted_sizes(p, v, sizes);
    if (keyed) hfx_pickle_text(&call->sample, v->name);
    hfx_pickle_tensor(&call->sample, v->dtype, v->rank, sizes);
    json_array_append_new(call->graph_inputs, hfx_pt2_tensor_arg(p, p->inputs[i].value));
    json_array_append_new(call->arg_names, json_string(v->name));
}

static hfx_status call_done(hfx_pt2_call *call, hfx_error *err) {
    if (call->in_spec && call->out_spec && call->graph_inputs && call->arg_names) return HFX_OK;
    hfx_pt2_call_free(call);
    return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
}

hfx_status hfx_pt2_positional_call(const hfx_aten_program *p, hfx_pt2_call *call, hfx_error *err) {
    memset(call, 0, sizeof *call);
    json_t *args = json_array();
    call->graph_inputs = json_array();
    call->arg_names = json_array();
    hfx_pickle_begin(&call->sample);
    hfx_pickle_op(&call->sample, HFX_PK_MARK);
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].kind != HFX_INPUT_USER) continue;
        call_input(p, i, false, call);
        json_array_append_new(args, hfx_pt2_leaf_spec());
    }
    hfx_pickle_op(&call->sample, HFX_PK_TUPLE HFX_PK_EMPTY_DICT HFX_PK_TUPLE2); /* (args), {} */
    json_t *outer = json_array();
    json_array_append_new(outer, hfx_pt2_spec_node("builtins.tuple", NULL, args));
    json_array_append_new(outer, hfx_pt2_spec_node("builtins.dict", json_string("[]"), json_array()));
    call->in_spec = hfx_pt2_spec_text(hfx_pt2_spec_node("builtins.tuple", NULL, outer));
    int n_out = 0;
    for (int k = 0; k < p->n_outputs; k++) n_out += p->mutates[k] < 0;
    if (n_out == 1) {
        call->out_spec = hfx_pt2_spec_text(hfx_pt2_leaf_spec());
    } else {
        json_t *outs = json_array();
        for (int k = 0; k < n_out; k++) json_array_append_new(outs, hfx_pt2_leaf_spec());
        call->out_spec = hfx_pt2_spec_text(hfx_pt2_spec_node("builtins.tuple", NULL, outs));
    }
    return call_done(call, err);
}

json_t *hfx_pt2_flat_in_spec(json_t *names) {
    json_t *leaves = json_array();
    for (size_t i = 0; i < json_array_size(names); i++) json_array_append_new(leaves, hfx_pt2_leaf_spec());
    return hfx_pt2_kwargs_spec(names, leaves);
}

json_t *hfx_pt2_class_spec(const char *output_class, json_t *names) {
    char type[160];
    json_t *leaves = json_array();
    for (size_t i = 0; i < json_array_size(names); i++) json_array_append_new(leaves, hfx_pt2_leaf_spec());
    return hfx_pt2_spec_text(hfx_pt2_spec_node(hfx_pt2_output_type(output_class, type, sizeof type),
                                               hfx_pt2_dumps(names), leaves));
}

hfx_status hfx_pt2_keyword_call(const hfx_aten_program *p, const char *output_class, hfx_pt2_call *call,
                                hfx_error *err) {
    memset(call, 0, sizeof *call);
    json_t *keys = json_array(), *names = json_array();
    call->graph_inputs = json_array();
    call->arg_names = json_array();
    hfx_pickle_begin(&call->sample);
    hfx_pickle_op(&call->sample, HFX_PK_EMPTY_TUPLE HFX_PK_EMPTY_DICT HFX_PK_MARK);
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].kind != HFX_INPUT_USER) continue;
        call_input(p, i, true, call);
        json_array_append_new(keys, json_string(p->values[p->inputs[i].value].name));
    }
    hfx_pickle_op(&call->sample, HFX_PK_SETITEMS HFX_PK_TUPLE2); /* (), {kwargs} */
    for (int k = 0; k < p->g->n_outputs; k++) json_array_append_new(names, json_string(p->g->outputs[k]->name));
    call->in_spec = hfx_pt2_flat_in_spec(keys);
    call->out_spec = hfx_pt2_class_spec(output_class, names);
    return call_done(call, err);
}

void hfx_pt2_call_free(hfx_pt2_call *call) {
    json_decref(call->in_spec), json_decref(call->out_spec);
    json_decref(call->graph_inputs), json_decref(call->arg_names), json_decref(call->constant_names);
    hfx_pickle_free(&call->sample);
    memset(call, 0, sizeof *call);
}

/* Every value's meta: tensors by name, symbolic ints by name. */
static void value_meta(const hfx_aten_program *p, json_t *tensors, json_t *symints) {
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
}

/* The graph's inputs and their specs in torch.export's order: parameters, constants, then the user
 * inputs as the call flattens them (a keyword passed as None: a constant input). */
static void graph_inputs(const hfx_aten_program *p, const hfx_pt2_call *call, json_t *inputs, json_t *in_specs) {
    static const hfx_aten_input_kind order[2] = {HFX_INPUT_PARAMETER, HFX_INPUT_CONSTANT};
    for (int kk = 0; kk < 2 * p->n_inputs; kk++) { /* torch.export's order: parameters, constants, user inputs */
        const hfx_aten_input *in = &p->inputs[kk % p->n_inputs];
        if (in->kind != order[kk / p->n_inputs]) continue;
        const char *name = p->values[in->value].name;
        json_array_append_new(inputs, named("as_tensor", name));
        bool param = in->kind == HFX_INPUT_PARAMETER;
        json_t *spec = json_object(), *par = json_object(), *arg = json_object();
        json_object_set_new(arg, "name", json_string(name));
        json_object_set_new(par, "arg", arg);
        json_object_set_new(par, param ? "parameter_name" : "tensor_constant_name", json_string(in->target));
        json_object_set_new(spec, param ? "parameter" : "tensor_constant", par);
        json_array_append_new(in_specs, spec);
    }
    size_t constants = 0;
    for (size_t i = 0; i < json_array_size(call->graph_inputs); i++) {
        json_t *arg = json_array_get(call->graph_inputs, i);
        json_array_append(inputs, arg);
        if (json_object_get(arg, "as_tensor")) {
            json_array_append_new(in_specs, one("user_input", one("arg", json_deep_copy(arg))));
            continue;
        }
        /* a constant (None, a bool, an int): the keyword it is (NULL past the list: a dict's None entry) */
        json_t *keyword = json_array_get(call->constant_names, constants++);
        if (!json_is_string(keyword)) continue;
        json_t *constant = json_object();
        json_object_set_new(constant, "name", json_copy(keyword));
        json_object_set_new(constant, "value", json_deep_copy(arg));
        json_array_append_new(in_specs, one("constant_input", constant));
    }
}

/* The graph's outputs and their specs in torch.export's order: input mutations, then user outputs. */
static void graph_outputs(const hfx_aten_program *p, json_t *outputs, json_t *out_specs) {
    for (int pass = 0; pass < 2; pass++)
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
            }
        }
}

/* The nodes, each a call of its aten (or other) target. */
static json_t *graph_nodes(const hfx_aten_program *p) {
    json_t *nodes = json_array();
    for (int i = 0; i < p->n_nodes; i++) {
        const hfx_aten_node *n = &p->nodes[i];
        const hfx_aten_info *info = hfx_aten_info_of(n->op);
        char target[160];
        if (info->module && info->overload) snprintf(target, sizeof target, "%s.%s.%s", info->module, info->op, info->overload);
        else if (info->module) snprintf(target, sizeof target, "%s.%s", info->module, info->op);
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
    return nodes;
}

/* The range of each symbol some tensor's size names (the others are left out). */
static json_t *range_constraints(const hfx_aten_program *p) {
    json_t *ranges = json_object();
    bool used[16] = {0};
    for (int i = 0; i < p->n_values; i++)
        for (int d = 0; d < p->values[i].rank; d++)
            for (int t = 0; t < p->values[i].dims[d].n; t++) used[p->values[i].dims[d].sym[t] & 15] = true;
    for (int s = 0; s < p->g->n_symbols; s++) {
        if (!used[s] || p->g->symbols[s].div > 0) continue; /* (a derived symbol is an expression of the others) */
        char name[24];
        snprintf(name, sizeof name, "s%d", s);
        json_t *r = json_object();
        json_object_set_new(r, "min_val", json_integer(p->g->symbols[s].min));
        json_object_set_new(r, "max_val", p->g->symbols[s].max >= INT32_MAX ? json_null()
                                                                           : json_integer(p->g->symbols[s].max));
        json_object_set_new(ranges, name, r);
    }
    return ranges;
}

static json_t *exported_program(const hfx_aten_program *p, const hfx_pt2_call *call) {
    json_t *graph = json_object(), *inputs = json_array(), *outputs = json_array();
    json_t *tensors = json_object(), *symints = json_object(), *in_specs = json_array(), *out_specs = json_array();
    value_meta(p, tensors, symints);
    graph_inputs(p, call, inputs, in_specs);
    graph_outputs(p, outputs, out_specs);
    json_t *nodes = graph_nodes(p);
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
    json_object_set(root_sig, "in_spec", call->in_spec);
    json_object_set(root_sig, "out_spec", call->out_spec);
    json_object_set(root_sig, "forward_arg_names", call->arg_names);
    json_object_set_new(root, "fqn", json_string(""));
    json_object_set_new(root, "signature", root_sig);
    json_array_append_new(call_graph, root);

    json_t *module = json_object();
    json_object_set_new(module, "graph", graph);
    json_object_set_new(module, "signature", signature);
    json_object_set_new(module, "module_call_graph", call_graph);
    json_object_set_new(module, "metadata", json_object());
    json_object_set_new(module, "treespec_namedtuple_fields", json_object());

    json_t *ranges = range_constraints(p);
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

/* The sample inputs' archive (a scratch file) copied into the entry `name`. */
static hfx_status add_sample(hfx_zip *z, const char *name, hfx_pickle *pk, hfx_outdir *out, const char *file,
                             hfx_error *err) {
    FILE *f;
    hfx_status st = hfx_pickle_save(pk, out, file, &f, err);
    if (st) return st;
    uint8_t *buf = malloc(CHUNK);
    st = buf ? hfx_zip_begin(z, name, err) : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (size_t n; !st && (n = fread(buf, 1, CHUNK, f)) > 0;) st = hfx_bulk_stream(hfx_zip_bulk(z), NULL, buf, n, err);
    if (!st && ferror(f)) st = hfx_fail(err, HFX_ERR_IO, "%s: reading the sample inputs back failed", file);
    if (!st) st = hfx_zip_end(z, err);
    free(buf);
    fclose(f);
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

hfx_status hfx_pt2_write(const hfx_aten_program *p, hfx_pt2_call *call, const char *root, hfx_outdir *out,
                         const char *file, hfx_error *err) {
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
        {"models/model.json", st ? NULL : exported_program(p, call), NULL},
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
        else if (!st) st = add_sample(z, name, &call->sample, out, file, err);
        json_decref(rest[i].json);
    }
    if (z) st = hfx_zip_close(z, st, file, err);
    hfx_status cst = hfx_outdir_close(out, f, file, st ? NULL : err);
    return st ? st : cst;
}
