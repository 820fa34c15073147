/* The ATen program builder (aten.h): values, calls, parameters and inputs in growable tables. A
 * failed allocation sets `oom`; every later call is then a no-op returning value 0, and the writer
 * reports the failure. */
#include "fmt/aten.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hfx_aten_info infos[HFX_OPS_COUNT_] = {
#define X(id, op, overload, args, returns) [HFX_ATEN_##id] = {op, overload, args, returns, NULL},
#include "fmt/aten.def"
#undef X
    [HFX_SYM_ADD] = {"add", NULL, "a:int b:int", "int", "_operator"},
    [HFX_SYM_SUB] = {"sub", NULL, "a:int b:int", "int", "_operator"},
    [HFX_SYM_MUL] = {"mul", NULL, "a:int b:int", "int", "_operator"},
    [HFX_SYM_FLOORDIV] = {"floordiv", NULL, "a:int b:int", "int", "_operator"},
    [HFX_QD_DEQUANTIZE_PER_CHANNEL] = {"dequantize_per_channel", "default",
                                       "input:Tensor scales:Tensor zero_points:Optional[Tensor] axis:int quant_min:int "
                                       "quant_max:int dtype:int *out_dtype:Optional[int]=",
                                       "Tensor", "torch.ops.quantized_decomposed"},
    [HFX_QD_DEQUANTIZE_PER_CHANNEL_GROUP] = {"dequantize_per_channel_group", "default",
                                             "input:Tensor scales:Tensor zero_points:Optional[Tensor] quant_min:int "
                                             "quant_max:int dtype:int group_size:int output_dtype:int",
                                             "Tensor", "torch.ops.quantized_decomposed"},
};

const hfx_aten_info *hfx_aten_info_of(hfx_aten_op op) { return op < HFX_OPS_COUNT_ ? &infos[op] : NULL; }

/* Room for one more element in a table of `size`-byte elements. */
static bool grow(hfx_aten_program *p, void **items, int n, int *cap, size_t size) {
    if (p->oom) return false;
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 64;
    void *q = realloc(*items, (size_t)c * size);
    if (!q) {
        p->oom = true;
        return false;
    }
    *items = q;
    *cap = c;
    return true;
}

hfx_aten_program *hfx_aten_program_new(const hfx_graph *g, const int64_t *hints) {
    hfx_aten_program *p = calloc(1, sizeof *p);
    if (!p || !(p->arena = hfx_arena_new())) {
        free(p);
        return NULL;
    }
    p->g = g;
    if (g->n_symbols) {
        p->hints = hfx_arena_alloc(p->arena, (size_t)g->n_symbols * sizeof *p->hints);
        if (!p->hints) {
            hfx_aten_program_free(p);
            return NULL;
        }
        memcpy(p->hints, hints, (size_t)g->n_symbols * sizeof *p->hints);
    }
    return p;
}

void hfx_aten_program_free(hfx_aten_program *p) {
    if (!p) return;
    free(p->values);
    free(p->nodes);
    free(p->inputs);
    free(p->outputs);
    free(p->mutates);
    hfx_arena_free(p->arena);
    free(p);
}

/* `base` turned into a Python identifier, with a suffix when the name is taken. */
static const char *unique_name(hfx_aten_program *p, const char *base) {
    char clean[200];
    size_t n = 0;
    for (const char *s = base; *s && n + 1 < sizeof clean; s++)
        clean[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ? *s : '_';
    clean[n] = 0;
    if (!n || (clean[0] >= '0' && clean[0] <= '9')) snprintf(clean, sizeof clean, "v_%s", base);
    /* linear in the values: programs are thousands of values, named once each */
    int taken = 0;
    size_t len = strlen(clean);
    for (int i = 0; i < p->n_values; i++)
        if (!strncmp(p->values[i].name, clean, len) &&
            (p->values[i].name[len] == 0 || (p->values[i].name[len] == '_' && p->values[i].name[len + 1] >= '0' &&
                                             p->values[i].name[len + 1] <= '9')))
            taken++;
    char *name = taken ? hfx_arena_printf(p->arena, "%s_%d", clean, taken) : hfx_arena_strdup(p->arena, clean);
    if (!name) p->oom = true;
    return name;
}

int hfx_aten_tensor(hfx_aten_program *p, const char *name, hfx_dtype dtype, int rank, const hfx_dim *dims) {
    if (rank < 0 || rank > HFX_MAX_RANK || !grow(p, (void **)&p->values, p->n_values, &p->cap_values, sizeof *p->values))
        return 0;
    const char *n = unique_name(p, name);
    if (!n) return 0;
    hfx_aten_value *v = &p->values[p->n_values];
    memset(v, 0, sizeof *v);
    v->name = n;
    v->dtype = dtype;
    v->rank = rank;
    for (int d = 0; d < rank; d++) v->dims[d] = dims[d];
    return p->n_values++;
}

static int add_input(hfx_aten_program *p, hfx_aten_input in) {
    if (!grow(p, (void **)&p->inputs, p->n_inputs, &p->cap_inputs, sizeof *p->inputs)) return 0;
    p->inputs[p->n_inputs++] = in;
    return in.value;
}

int hfx_aten_parameter(hfx_aten_program *p, const char *target, hfx_dtype dtype, int rank, const hfx_dim *dims,
                       const hfx_init *init, const uint8_t *bytes) {
    char base[200];
    snprintf(base, sizeof base, "p_%s", target);
    int v = hfx_aten_tensor(p, base, dtype, rank, dims);
    const char *t = hfx_arena_strdup(p->arena, target);
    if (!t) p->oom = true;
    return add_input(p, (hfx_aten_input){HFX_INPUT_PARAMETER, v, t, init, bytes});
}

int hfx_aten_user_input(hfx_aten_program *p, const char *name, hfx_dtype dtype, int rank, const hfx_dim *dims) {
    int v = hfx_aten_tensor(p, name, dtype, rank, dims);
    return add_input(p, (hfx_aten_input){HFX_INPUT_USER, v, NULL, NULL, NULL});
}

/* A node of `op` with `args` (n of them) whose one output is the value `out`; returns out. */
static int add_node(hfx_aten_program *p, hfx_aten_op op, const hfx_aten_arg *args, int n, int out) {
    if (!grow(p, (void **)&p->nodes, p->n_nodes, &p->cap_nodes, sizeof *p->nodes)) return 0;
    hfx_aten_node *node = &p->nodes[p->n_nodes++];
    memset(node, 0, sizeof *node);
    node->op = op;
    for (int i = 0; i < n; i++) node->args[i] = args[i];
    node->out[0] = out;
    node->n_out = 1;
    return out;
}

int hfx_aten_call(hfx_aten_program *p, hfx_aten_op op, const hfx_aten_arg *args, int n, hfx_dtype dtype, int rank,
                  const hfx_dim *dims) {
    bool sym = op >= HFX_SYM_ADD && op <= HFX_SYM_FLOORDIV; /* SymInt operators: hfx_aten_sym_op */
    if (sym || op >= HFX_OPS_COUNT_ || n > HFX_ATEN_MAX_ARGS) {
        p->oom = true; /* a builder bug, reported as a failed program */
        return 0;
    }
    return add_node(p, op, args, n, hfx_aten_tensor(p, infos[op].op, dtype, rank, dims));
}

int hfx_aten_extra_output(hfx_aten_program *p, hfx_dtype dtype, int rank, const hfx_dim *dims) {
    if (p->oom || !p->n_nodes || p->nodes[p->n_nodes - 1].n_out >= 2) {
        p->oom = true; /* a builder bug, reported as a failed program */
        return 0;
    }
    hfx_aten_node *node = &p->nodes[p->n_nodes - 1];
    int v = hfx_aten_tensor(p, infos[node->op].op, dtype, rank, dims);
    node->out[node->n_out++] = v; /* (hfx_aten_tensor grows the values, not the nodes) */
    return v;
}

int hfx_aten_constant(hfx_aten_program *p, hfx_dtype dtype, int rank, const hfx_dim *dims, const hfx_init *init,
                      const uint8_t *bytes) {
    char name[48];
    snprintf(name, sizeof name, "c_lifted_tensor_%d", p->n_constants);
    int v = hfx_aten_tensor(p, name, dtype, rank, dims);
    const char *t = hfx_arena_printf(p->arena, "lifted_tensor_%d", p->n_constants++);
    if (!t) p->oom = true;
    return add_input(p, (hfx_aten_input){HFX_INPUT_CONSTANT, v, t, init, bytes});
}

/* A new SymInt value named `name` with expression `expr`, produced by a node of `op`. */
static int sym_node(hfx_aten_program *p, const char *name, hfx_aten_op op, const hfx_aten_arg *args, int n,
                    hfx_dim expr) {
    int out = hfx_aten_tensor(p, name, HFX_DTYPE_I64, 0, NULL);
    if (p->oom) return 0;
    p->values[out].symint = true;
    p->values[out].expr = expr;
    return add_node(p, op, args, n, out);
}

int hfx_aten_sym_size(hfx_aten_program *p, int tensor, int dim) {
    if (p->oom || tensor >= p->n_values || dim < 0 || dim >= p->values[tensor].rank) {
        p->oom = true;
        return 0;
    }
    hfx_aten_arg args[2] = {hfx_arg_tensor(tensor), hfx_arg_int(dim)};
    return sym_node(p, "sym_size_int", HFX_ATEN_SYM_SIZE, args, 2, p->values[tensor].dims[dim]);
}

static hfx_aten_arg size_arg(hfx_aten_size s) { return s.value >= 0 ? hfx_arg_symint(s.value) : hfx_arg_int(s.c); }

int hfx_aten_sym_op(hfx_aten_program *p, hfx_aten_op op, hfx_aten_size a, hfx_aten_size b, hfx_dim expr) {
    if (op < HFX_SYM_ADD || op >= HFX_OPS_COUNT_) {
        p->oom = true;
        return 0;
    }
    hfx_aten_arg args[2] = {size_arg(a), size_arg(b)};
    return sym_node(p, infos[op].op, op, args, 2, expr);
}

void hfx_aten_output(hfx_aten_program *p, int value, int mutated) {
    int cap = p->cap_outputs;
    if (!grow(p, (void **)&p->outputs, p->n_outputs, &p->cap_outputs, sizeof *p->outputs)) return;
    if (p->cap_outputs != cap || !p->mutates) { /* the parallel table follows the outputs' */
        int *m = realloc(p->mutates, (size_t)p->cap_outputs * sizeof *m);
        if (!m) {
            p->oom = true;
            return;
        }
        p->mutates = m;
    }
    p->mutates[p->n_outputs] = mutated;
    p->outputs[p->n_outputs++] = value;
}

void hfx_aten_hinted_sizes(const hfx_aten_program *p, const hfx_aten_value *v, int64_t *sizes) {
    for (int d = 0; d < v->rank; d++) sizes[d] = hfx_dim_at(v->dims[d], p->hints);
}

hfx_aten_arg hfx_arg_tensor(int value) { return (hfx_aten_arg){.kind = HFX_ARG_TENSOR, .value = value}; }
hfx_aten_arg hfx_arg_int(int64_t i) { return (hfx_aten_arg){.kind = HFX_ARG_INT, .i = i}; }
hfx_aten_arg hfx_arg_float(double f) { return (hfx_aten_arg){.kind = HFX_ARG_FLOAT, .f = f}; }
hfx_aten_arg hfx_arg_bool(bool b) { return (hfx_aten_arg){.kind = HFX_ARG_BOOL, .i = b}; }

hfx_aten_arg hfx_arg_symint(int value) { return (hfx_aten_arg){.kind = HFX_ARG_SYMINT, .value = value}; }

hfx_aten_arg hfx_arg_sizes(hfx_aten_program *p, int n, const hfx_aten_size *v) {
    hfx_aten_size *s = n ? hfx_arena_alloc(p->arena, (size_t)n * sizeof *s) : NULL;
    if (n && !s) p->oom = true;
    if (s) memcpy(s, v, (size_t)n * sizeof *s);
    return (hfx_aten_arg){.kind = HFX_ARG_INTS, .sizes = s, .n = s ? n : 0};
}

hfx_aten_arg hfx_arg_ints(hfx_aten_program *p, int n, const int64_t *v) {
    hfx_aten_size *s = n ? hfx_arena_alloc(p->arena, (size_t)n * sizeof *s) : NULL;
    if (n && !s) p->oom = true;
    for (int i = 0; s && i < n; i++) s[i] = (hfx_aten_size){-1, v[i]};
    return (hfx_aten_arg){.kind = HFX_ARG_INTS, .sizes = s, .n = s ? n : 0};
}
