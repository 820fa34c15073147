/* Graph construction: values, nodes, inputs/outputs, constants. Shape rules are in shape.c. */
#include "ir/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static const char *const op_names[HFX_OP_COUNT_] = {
#define X(e, name, lo, hi, outs, std) [HFX_OP_##e] = name,
#include "ir/ops.def"
#undef X
};

static const int op_outputs[HFX_OP_COUNT_] = {
#define X(e, name, lo, hi, outs, std) [HFX_OP_##e] = outs,
#include "ir/ops.def"
#undef X
};

static const char *const op_standard[HFX_OP_COUNT_] = {
#define X(e, name, lo, hi, outs, std) [HFX_OP_##e] = std,
#include "ir/ops.def"
#undef X
};

const char *hfx_op_standard_name(hfx_op op) { return (unsigned)op < HFX_OP_COUNT_ ? op_standard[op] : NULL; }

const char *hfx_op_name(hfx_op op) {
    return (unsigned)op < HFX_OP_COUNT_ ? op_names[op] : "?";
}

int hfx_op_outputs(hfx_op op) { return (unsigned)op < HFX_OP_COUNT_ ? op_outputs[op] : 1; }

hfx_graph *hfx_graph_new(void) {
    hfx_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->arena = hfx_arena_new();
    if (!g->arena) {
        free(g);
        return NULL;
    }
    return g;
}

void hfx_graph_free(hfx_graph *g) {
    if (!g) return;
    hfx_arena_free(g->arena);
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->states);
    free(g);
}

hfx_status hfx_graph_fail(hfx_graph *g, hfx_status st, const char *fmt, ...) {
    if (g->failed) return g->err.status;
    g->failed = true;
    g->err.status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err.message, sizeof g->err.message, fmt, ap);
    va_end(ap);
    return st;
}

hfx_status hfx_graph_status(const hfx_graph *g, hfx_error *err) {
    if (!g->failed) return HFX_OK;
    if (err) *err = g->err;
    return g->err.status;
}

/* Append to one of the graph's owned pointer arrays. */
static bool push(void ***arr, int *n, int *cap, void *item) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        void **p = realloc(*arr, (size_t)nc * sizeof *p);
        if (!p) return false;
        *arr = p;
        *cap = nc;
    }
    (*arr)[(*n)++] = item;
    return true;
}

/* A fresh value; on allocation failure the graph fails and a static placeholder keeps the
 * builder going (its fields are never written through). */
static hfx_value *new_value(hfx_graph *g) {
    hfx_value *v = hfx_arena_alloc(g->arena, sizeof *v);
    if (!v || !push((void ***)&g->values, &g->n_values, &g->cap_values, v)) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory while building the graph");
        v = hfx_arena_alloc(g->arena, sizeof *v);
        if (!v) {
            static const hfx_value placeholder = {.dtype = HFX_DTYPE_F32};
            return (hfx_value *)&placeholder;
        }
        return v;
    }
    v->id = g->n_values - 1;
    return v;
}

/* A copy of `s` in the graph's arena; out of memory, the graph fails and "" stands in, so that
 * no name is ever NULL. */
static const char *copy_name(hfx_graph *g, const char *s) {
    const char *p = hfx_arena_strdup(g->arena, s);
    if (p) return p;
    hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
    return "";
}

int hfx_graph_symbol(hfx_graph *g, const char *name, int64_t min, int64_t max) {
    for (int i = 0; i < g->n_symbols; i++)
        if (strcmp(g->symbols[i].name, name) == 0) return i;
    if (g->n_symbols == (int)(sizeof g->symbols / sizeof g->symbols[0])) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "too many symbolic dims (at '%s')", name);
        return 0;
    }
    g->symbols[g->n_symbols] = (hfx_symbol){copy_name(g, name), min, max, 0, 0, {0}};
    return g->n_symbols++;
}

int hfx_graph_symbol_derived(hfx_graph *g, const char *name, hfx_dim of, int64_t div, int64_t add) {
    int64_t lo = of.c, hi = of.c;
    bool bounded = true;
    for (int t = 0; t < of.n; t++) {
        const hfx_symbol *s = &g->symbols[of.sym[t]];
        lo += of.coef[t] * (of.coef[t] > 0 ? s->min : s->max);
        hi += of.coef[t] * (of.coef[t] > 0 ? s->max : s->min);
        bounded = bounded && s->max < INT32_MAX && of.coef[t] > 0;
    }
    int s = hfx_graph_symbol(g, name, (lo > 0 ? lo : 0) / div + add, bounded ? hi / div + add : INT32_MAX);
    if (!g->failed) g->symbols[s].div = div, g->symbols[s].add = add, g->symbols[s].of = of;
    return s;
}

hfx_value *hfx_graph_input(hfx_graph *g, const char *name, hfx_dtype dt, int rank,
                           const hfx_dim *dims) {
    hfx_value *v = new_value(g);
    v->name = copy_name(g, name);
    v->dtype = dt;
    v->rank = rank;
    for (int i = 0; i < rank; i++) v->dims[i] = dims[i];
    if (!push((void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, v))
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
    return v;
}

void hfx_graph_output(hfx_graph *g, hfx_value *v, const char *name) {
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v) { /* naming it would rename the input: a builder passes it through an op */
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "output '%s' is the graph input '%s' itself", name, v->name);
            return;
        }
    v->name = copy_name(g, name);
    if (!push((void ***)&g->outputs, &g->n_outputs, &g->cap_outputs, v))
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
}

int hfx_graph_state(hfx_graph *g, const char *name, hfx_state_update update, int axis) {
    if (g->n_states == g->cap_states) {
        int cap = g->cap_states ? 2 * g->cap_states : 16;
        hfx_state *p = realloc(g->states, (size_t)cap * sizeof *p);
        if (!p) {
            hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            return -1;
        }
        g->states = p;
        g->cap_states = cap;
    }
    g->states[g->n_states] = (hfx_state){copy_name(g, name), update, axis, NULL, NULL};
    return g->n_states++;
}

hfx_value *hfx_state_read(hfx_graph *g, int state, const char *input_name, hfx_dtype dt, int rank,
                          const hfx_dim *dims) {
    hfx_value *v = hfx_graph_input(g, input_name, dt, rank, dims);
    if (state < 0 || state >= g->n_states || g->states[state].in)
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "state %d read twice or undeclared (input '%s')", state, input_name);
    else
        g->states[state].in = v;
    return v;
}

void hfx_state_write(hfx_graph *g, int state, hfx_value *v, const char *output_name) {
    hfx_graph_output(g, v, output_name);
    if (state < 0 || state >= g->n_states || g->states[state].out)
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "state %d written twice or undeclared (output '%s')", state, output_name);
    else
        g->states[state].out = v;
}

const hfx_state *hfx_graph_state_of(const hfx_graph *g, const hfx_value *v, bool is_input) {
    for (int i = 0; i < g->n_states; i++)
        if ((is_input ? g->states[i].in : g->states[i].out) == v) return &g->states[i];
    return NULL;
}

void hfx_graph_set_meta(hfx_graph *g, const char *key, const char *value) {
    for (int i = 0; i < g->n_meta; i++)
        if (strcmp(g->meta[i].key, key) == 0) {
            g->meta[i].value = copy_name(g, value);
            return;
        }
    if (g->n_meta == (int)(sizeof g->meta / sizeof g->meta[0])) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "too many metadata entries (at '%s')", key);
        return;
    }
    g->meta[g->n_meta++] = (hfx_meta){copy_name(g, key), copy_name(g, value)};
}

void hfx_graph_add_config(hfx_graph *g, const char *key, const char *json) {
    if (g->n_config == (int)(sizeof g->config / sizeof g->config[0])) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "too many config.json fields (at '%s')", key);
        return;
    }
    g->config[g->n_config++] = (hfx_meta){copy_name(g, key), copy_name(g, json)};
}

/* ---- Constants ---- */

static hfx_value *const_value(hfx_graph *g, hfx_init *init) {
    hfx_value *v = new_value(g);
    v->dtype = init->dtype;
    v->rank = init->rank;
    for (int i = 0; i < init->rank; i++) v->dims[i] = hfx_dim_const(init->shape[i]);
    v->init = init;
    return v;
}

/* One-part initializer viewing `base` as a contiguous row-major tensor. */
static hfx_init *contiguous_init(hfx_graph *g, const uint8_t *base, hfx_dtype src, hfx_dtype dt,
                                 int rank, const int64_t *shape, const char *source) {
    hfx_init *init = hfx_arena_alloc(g->arena, sizeof *init);
    hfx_init_part *p = hfx_arena_alloc(g->arena, sizeof *p);
    if (!init || !p) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->base = base;
    p->src_dtype = src;
    p->rank = rank;
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; i--) {
        p->shape[i] = shape[i];
        p->strides[i] = stride;
        stride *= shape[i];
    }
    init->dtype = dt;
    init->rank = rank;
    for (int i = 0; i < rank; i++) init->shape[i] = shape[i];
    init->n_parts = 1;
    init->parts = p;
    init->source = source;
    return init;
}

static hfx_value *placeholder_const(hfx_graph *g) {
    static const int64_t one = 1;
    static const float zero = 0;
    hfx_init *init = contiguous_init(g, (const uint8_t *)&zero, HFX_DTYPE_F32, HFX_DTYPE_F32, 1,
                                     &one, "placeholder");
    if (!init) {
        hfx_value *v = new_value(g);
        v->dtype = HFX_DTYPE_F32;
        return v;
    }
    return const_value(g, init);
}

hfx_value *hfx_const_mapped(hfx_graph *g, const char *name, const hfx_mapping *m, const uint8_t *data,
                            hfx_dtype src, int rank, const int64_t *shape, hfx_dtype dt) {
    static const hfx_mapping unchecked = {-1, 0, "(memory)"};
    if (!m) m = &unchecked;
    const char *file = m->path;
    if (!(hfx_dtype_is_float(src) && hfx_dtype_is_float(dt)) && src != dt) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; hfx needs %s here",
                       file, name, hfx_dtype_name(src), hfx_dtype_name(dt));
        return placeholder_const(g);
    }
    hfx_init *init = contiguous_init(g, data, src, dt, rank, shape, name);
    if (init) init->parts[0].mapping = m;
    return init ? const_value(g, init) : placeholder_const(g);
}

hfx_value *hfx_const_bytes(hfx_graph *g, hfx_dtype dt, int rank, const int64_t *shape,
                           const void *data) {
    uint64_t n = hfx_dtype_nbytes(dt, hfx_numel(rank, shape));
    uint8_t *copy = hfx_arena_alloc(g->arena, n ? n : 1);
    if (!copy) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return placeholder_const(g);
    }
    if (n) memcpy(copy, data, n);
    hfx_init *init = contiguous_init(g, copy, dt, dt, rank, shape, "computed");
    return init ? const_value(g, init) : placeholder_const(g);
}

hfx_value *hfx_const_f32(hfx_graph *g, float v) {
    return hfx_const_bytes(g, HFX_DTYPE_F32, 0, NULL, &v);
}

hfx_value *hfx_const_i64(hfx_graph *g, int64_t v) {
    return hfx_const_bytes(g, HFX_DTYPE_I64, 0, NULL, &v);
}

hfx_value *hfx_const_scalar(hfx_graph *g, hfx_dtype dt, double v) {
    if (dt == HFX_DTYPE_I64) return hfx_const_i64(g, (int64_t)v);
    hfx_value *c = hfx_const_f32(g, (float)v);
    if (dt != HFX_DTYPE_F32) {
        /* same single-element view, read as dt */
        hfx_init *init = hfx_arena_alloc(g->arena, sizeof *init);
        if (!init) {
            hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            return c;
        }
        *init = *c->init;
        init->dtype = dt;
        return const_value(g, init);
    }
    return c;
}

static hfx_init *copy_init(hfx_graph *g, const hfx_init *src) {
    hfx_init *init = hfx_arena_alloc(g->arena, sizeof *init);
    hfx_init_part *parts = hfx_arena_alloc(g->arena, (size_t)src->n_parts * sizeof *parts);
    if (!init || !parts) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    *init = *src;
    memcpy(parts, src->parts, (size_t)src->n_parts * sizeof *parts);
    init->parts = parts;
    return init;
}

hfx_value *hfx_const_transpose2d(hfx_graph *g, hfx_value *c) {
    if (!c->init || c->rank != 2 || c->init->n_parts != 1) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "transpose2d needs a one-part rank-2 constant");
        return c;
    }
    hfx_init *init = copy_init(g, c->init);
    if (!init) return c;
    hfx_init_part *p = &init->parts[0];
    int64_t t;
    t = p->shape[0], p->shape[0] = p->shape[1], p->shape[1] = t;
    t = p->strides[0], p->strides[0] = p->strides[1], p->strides[1] = t;
    init->shape[0] = p->shape[0];
    init->shape[1] = p->shape[1];
    return const_value(g, init);
}

hfx_value *hfx_const_slice(hfx_graph *g, hfx_value *c, int axis, int64_t start, int64_t len) {
    if (!c->init || c->init->n_parts != 1 || axis < 0 || axis >= c->rank || start < 0 ||
        len < 0 || start + len > c->init->shape[axis]) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad constant slice of '%s'",
                       c->init ? c->init->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, c->init);
    if (!init) return c;
    hfx_init_part *p = &init->parts[0];
    p->offset += start * p->strides[axis];
    p->shape[axis] = len;
    init->shape[axis] = len;
    return const_value(g, init);
}

hfx_value *hfx_const_select(hfx_graph *g, hfx_value *c, int axis, int64_t index) {
    if (!c->init || c->init->n_parts != 1 || c->init->parts[0].rank != c->rank || c->rank < 2 || axis < 0 ||
        axis >= c->rank || index < 0 || index >= c->init->shape[axis]) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad constant selection of '%s'", c->init ? c->init->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, c->init);
    if (!init) return c;
    hfx_init_part *p = &init->parts[0];
    p->offset += index * p->strides[axis];
    for (int d = axis; d + 1 < p->rank; d++) {
        p->shape[d] = p->shape[d + 1];
        p->strides[d] = p->strides[d + 1];
        init->shape[d] = init->shape[d + 1];
    }
    p->rank--;
    init->rank--;
    return const_value(g, init);
}

hfx_value *hfx_const_flatten(hfx_graph *g, hfx_value *c, int axis) {
    const hfx_init *src = c->init;
    bool ok = src && src->n_parts == 1 && src->parts[0].rank == src->rank && axis >= 0 && axis < src->rank;
    for (int d = axis; ok && d + 1 < src->rank; d++) /* each axis steps over the whole of the next */
        ok = src->parts[0].strides[d] == src->parts[0].strides[d + 1] * src->parts[0].shape[d + 1];
    if (!ok) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "cannot flatten constant '%s'", src ? src->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, src);
    if (!init) return c;
    hfx_init_part *p = &init->parts[0];
    int64_t n = 1;
    for (int d = axis; d < src->rank; d++) n *= src->shape[d];
    p->shape[axis] = init->shape[axis] = n;
    p->strides[axis] = src->parts[0].strides[src->rank - 1];
    p->rank = init->rank = axis + 1;
    return const_value(g, init);
}

/* Part q's rows gain an axis in p: [groups, len, rest...], the group stride spanning group_rows rows, from row start. */
static void part_row_groups(hfx_init_part *p, const hfx_init_part *q, int64_t groups, int64_t group_rows, int64_t start,
                            int64_t len) {
    p->rank = q->rank + 1;
    p->shape[0] = groups;
    p->strides[0] = q->strides[0] * group_rows;
    p->shape[1] = len;
    p->strides[1] = q->strides[0];
    for (int d = 1; d < q->rank; d++) {
        p->shape[d + 1] = q->shape[d];
        p->strides[d + 1] = q->strides[d];
    }
    p->offset = q->offset + start * q->strides[0];
}

hfx_value *hfx_const_blocks(hfx_graph *g, const char *name, const hfx_mapping *m, const uint8_t *data,
                            const hfx_block_format *blocks, int rank, const int64_t *shape, hfx_dtype dt) {
    hfx_value *v = hfx_const_mapped(g, name, m, data, HFX_DTYPE_F32, rank, shape, dt);
    if (v->init && v->init->n_parts == 1 && v->init->source == name) v->init->parts[0].blocks = blocks;
    return v;
}

hfx_value *hfx_const_rotary_rows(hfx_graph *g, hfx_value *c, int64_t heads) {
    const hfx_init *src = c->init;
    if (!src || src->n_parts != 1 || src->rank != 2 || src->parts[0].rank != 2 || heads < 1 ||
        src->shape[0] % (2 * heads)) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad rotary row view of '%s'", src ? src->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, src);
    if (!init) return c;
    const hfx_init_part *q = &src->parts[0];
    hfx_init_part *p = &init->parts[0];
    int64_t half = src->shape[0] / heads / 2;
    /* row h·2·half + k·half + j (torch's) is stored row h·2·half + 2j + k: [heads, 2, half, in] */
    p->rank = 4;
    p->shape[0] = heads, p->strides[0] = 2 * half * q->strides[0];
    p->shape[1] = 2, p->strides[1] = q->strides[0];
    p->shape[2] = half, p->strides[2] = 2 * q->strides[0];
    p->shape[3] = q->shape[1], p->strides[3] = q->strides[1];
    return const_value(g, init);
}

hfx_value *hfx_const_split_rows(hfx_graph *g, hfx_value *c, int64_t n) {
    const hfx_init *src = c->init;
    if (!src || src->n_parts != 1 || src->parts[0].rank != src->rank || src->rank < 1 || src->rank + 1 > HFX_MAX_RANK ||
        n < 1 || src->shape[0] % n) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "cannot split the rows of constant '%s'", src ? src->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, src);
    if (!init) return c;
    int64_t rows = src->shape[0] / n;
    part_row_groups(&init->parts[0], &src->parts[0], n, rows, 0, rows);
    for (int d = src->rank; d >= 2; d--) init->shape[d] = src->shape[d - 1]; /* the value gains the axis too */
    init->shape[0] = n, init->shape[1] = rows, init->rank = src->rank + 1;
    return const_value(g, init);
}

hfx_value *hfx_const_interleaved_rows(hfx_graph *g, hfx_value *c, int64_t groups, int64_t parts,
                                      int64_t which, int64_t len) {
    if (which < 0 || which >= parts) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad interleaved view of '%s'", c->init ? c->init->source : "?");
        return c;
    }
    return hfx_const_group_rows(g, c, groups, parts * len, which * len, len);
}

hfx_value *hfx_const_group_rows(hfx_graph *g, hfx_value *c, int64_t groups, int64_t group_rows, int64_t start,
                                int64_t len) {
    const hfx_init *src = c->init;
    if (!src || src->n_parts != 1 || src->rank < 1 || src->rank + 1 > HFX_MAX_RANK ||
        src->parts[0].rank != src->rank || groups < 1 || groups * group_rows != src->shape[0] || start < 0 ||
        len < 1 || start + len > group_rows) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad grouped view of '%s'", src ? src->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, src);
    if (!init) return c;
    /* the value keeps rank: its axis 0 is groups·len, read in row-major order */
    part_row_groups(&init->parts[0], &src->parts[0], groups, group_rows, start, len);
    init->shape[0] = groups * len;
    return const_value(g, init);
}

hfx_value *hfx_const_stack(hfx_graph *g, int n, hfx_value *const *cs) {
    if (n < 1 || !cs[0]->init || cs[0]->rank + 1 > HFX_MAX_RANK) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "bad constant stack");
        return n > 0 ? cs[0] : placeholder_const(g);
    }
    const hfx_init *first = cs[0]->init;
    hfx_init *init = hfx_arena_alloc(g->arena, sizeof *init);
    hfx_init_part *parts = hfx_arena_alloc(g->arena, (size_t)n * sizeof *parts);
    if (!init || !parts) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return cs[0];
    }
    *init = *first;
    init->rank = first->rank + 1;
    init->shape[0] = n;
    for (int d = 0; d < first->rank; d++) init->shape[d + 1] = first->shape[d];
    for (int i = 0; i < n; i++) {
        const hfx_init *c = cs[i]->init;
        bool same = c && c->n_parts == 1 && c->dtype == first->dtype && c->rank == first->rank &&
                    memcmp(c->shape, first->shape, sizeof c->shape) == 0 && c->parts[0].rank == c->rank;
        if (!same) {
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "stacked constants differ (at '%s')", c ? c->source : "?");
            return cs[0];
        }
        /* each part gains a leading axis of 1 */
        const hfx_init_part *q = &c->parts[0];
        hfx_init_part *p = &parts[i];
        *p = *q;
        p->rank = q->rank + 1;
        p->shape[0] = 1;
        p->strides[0] = 0;
        for (int d = 0; d < q->rank; d++) {
            p->shape[d + 1] = q->shape[d];
            p->strides[d + 1] = q->strides[d];
        }
    }
    init->n_parts = n;
    init->parts = parts;
    return const_value(g, init);
}

hfx_value *hfx_const_concat_rows(hfx_graph *g, int n, hfx_value *const *cs) {
    const hfx_init *first = n > 0 ? cs[0]->init : NULL;
    hfx_init *init = first ? hfx_arena_alloc(g->arena, sizeof *init) : NULL;
    hfx_init_part *parts = first ? hfx_arena_alloc(g->arena, (size_t)n * sizeof *parts) : NULL;
    if (!init || !parts) {
        hfx_graph_fail(g, first ? HFX_ERR_NOMEM : HFX_ERR_INTERNAL, first ? "out of memory" : "bad constant concat");
        return n > 0 ? cs[0] : placeholder_const(g);
    }
    *init = *first;
    init->shape[0] = 0;
    for (int i = 0; i < n; i++) {
        const hfx_init *c = cs[i]->init;
        bool same = c && c->n_parts == 1 && c->dtype == first->dtype && c->rank == first->rank && !c->quant &&
                    c->parts[0].rank == c->rank && memcmp(c->shape + 1, first->shape + 1, sizeof c->shape - sizeof c->shape[0]) == 0;
        if (!same) {
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "concatenated constants differ (at '%s')", c ? c->source : "?");
            return cs[0];
        }
        parts[i] = c->parts[0];
        init->shape[0] += c->shape[0];
    }
    init->n_parts = n;
    init->parts = parts;
    return const_value(g, init);
}

hfx_value *hfx_const_permute(hfx_graph *g, hfx_value *c, const int64_t *perm) {
    const hfx_init *src = c->init;
    /* parts are concatenated on axis 0, so a permutation must keep axis 0 where it is unless
     * there is a single part */
    bool ok = src && (src->n_parts == 1 || perm[0] == 0);
    for (int i = 0; ok && i < src->n_parts; i++) ok = src->parts[i].rank == src->rank;
    if (!ok) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "cannot permute constant '%s'", src ? src->source : "?");
        return c;
    }
    hfx_init *init = copy_init(g, src);
    if (!init) return c;
    for (int i = 0; i < src->n_parts; i++)
        for (int d = 0; d < src->rank; d++) {
            init->parts[i].shape[d] = src->parts[i].shape[perm[d]];
            init->parts[i].strides[d] = src->parts[i].strides[perm[d]];
        }
    for (int d = 0; d < src->rank; d++) init->shape[d] = src->shape[perm[d]];
    return const_value(g, init);
}

/* ---- Op constructors ---- */

void hfx_node_add_outputs(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in, const hfx_attrs *a,
                          hfx_value **outs) {
    static const hfx_attrs none;
    if (!a) a = &none;
    int n_out = hfx_op_outputs(op);
    for (int k = 0; k < n_out; k++) outs[k] = new_value(g);
    hfx_error err;
    if (hfx_infer_shape(g, op, n_in, in, a, outs, &err) != HFX_OK) {
        hfx_graph_fail(g, err.status, "%s", err.message);
        for (int k = 0; k < n_out; k++) {
            outs[k]->dtype = n_in > 0 && in[0] ? in[0]->dtype : HFX_DTYPE_F32;
            outs[k]->rank = 0;
        }
        return;
    }
    hfx_node *node = hfx_arena_alloc(g->arena, sizeof *node);
    if (!node || !push((void ***)&g->nodes, &g->n_nodes, &g->cap_nodes, node)) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory while building the graph");
        return;
    }
    node->id = g->n_nodes - 1;
    node->op = op;
    node->n_in = n_in;
    for (int i = 0; i < n_in; i++) node->in[i] = in[i];
    node->n_out = n_out;
    for (int k = 0; k < n_out; k++) {
        node->out[k] = outs[k];
        outs[k]->producer = node;
    }
    node->attrs = *a;
}

hfx_value *hfx_node_add(hfx_graph *g, hfx_op op, int n_in, hfx_value *const *in, const hfx_attrs *a) {
    hfx_value *outs[HFX_MAX_OUTPUTS];
    hfx_node_add_outputs(g, op, n_in, in, a, outs);
    return outs[0];
}

hfx_value *hfx_op1(hfx_graph *g, hfx_op op, hfx_value *x) { return hfx_node_add(g, op, 1, &x, NULL); }

hfx_value *hfx_op2(hfx_graph *g, hfx_op op, hfx_value *a, hfx_value *b) {
    hfx_value *in[2] = {a, b};
    return hfx_node_add(g, op, 2, in, NULL);
}

hfx_value *hfx_where(hfx_graph *g, hfx_value *c, hfx_value *a, hfx_value *b) {
    hfx_value *in[3] = {c, a, b};
    return hfx_node_add(g, HFX_OP_WHERE, 3, in, NULL);
}

hfx_value *hfx_cast(hfx_graph *g, hfx_value *x, hfx_dtype to) {
    if (x->dtype == to) return x;
    hfx_attrs a = {.to = to};
    return hfx_node_add(g, HFX_OP_CAST, 1, &x, &a);
}

hfx_value *hfx_linear(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias) {
    hfx_value *in[3] = {x, w, bias};
    return hfx_node_add(g, HFX_OP_LINEAR, bias ? 3 : 2, in, NULL);
}

hfx_value *hfx_rms_norm(hfx_graph *g, hfx_value *x, hfx_value *w, double eps, double offset) {
    hfx_attrs a = {.f0 = eps, .f1 = offset};
    hfx_value *in[2] = {x, w};
    return hfx_node_add(g, HFX_OP_RMS_NORM, 2, in, &a);
}

hfx_value *hfx_softmax(hfx_graph *g, hfx_value *x, int axis) {
    hfx_attrs a = {.axis = axis};
    return hfx_node_add(g, HFX_OP_SOFTMAX, 1, &x, &a);
}

hfx_value *hfx_attention(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v,
                         hfx_value *bias, double scale, double softcap, int64_t window) {
    hfx_attrs a = {.f0 = scale, .f1 = softcap, .window = window};
    hfx_value *in[4] = {q, k, v, bias};
    return hfx_node_add(g, HFX_OP_ATTENTION, 4, in, &a);
}

hfx_value *hfx_attention_with_sinks(hfx_graph *g, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias,
                                    hfx_value *sinks, double scale, int64_t window) {
    hfx_attrs a = {.f0 = scale, .window = window};
    hfx_value *in[5] = {q, k, v, bias, sinks};
    return hfx_node_add(g, HFX_OP_ATTENTION, 5, in, &a);
}

hfx_value *hfx_reduce(hfx_graph *g, hfx_op op, hfx_value *x, int n_axes, const int64_t *axes) {
    hfx_attrs a = {.n_ints = n_axes};
    memcpy(a.ints, axes, (size_t)n_axes * sizeof *axes);
    return hfx_node_add(g, op, 1, &x, &a);
}

hfx_value *hfx_reshape(hfx_graph *g, hfx_value *x, int rank, const hfx_dim *dims) {
    hfx_attrs a = {.rank = rank};
    if (rank > 0) memcpy(a.dims, dims, (size_t)rank * sizeof *dims); /* (a scalar: dims may be NULL) */
    return hfx_node_add(g, HFX_OP_RESHAPE, 1, &x, &a);
}

hfx_value *hfx_transpose(hfx_graph *g, hfx_value *x, int rank, const int64_t *perm) {
    hfx_attrs a = {.n_ints = rank};
    memcpy(a.ints, perm, (size_t)rank * sizeof *perm);
    return hfx_node_add(g, HFX_OP_TRANSPOSE, 1, &x, &a);
}

hfx_value *hfx_unsqueeze(hfx_graph *g, hfx_value *x, int64_t axis) {
    hfx_attrs a = {.n_ints = 1, .ints = {axis < 0 ? axis + x->rank + 1 : axis}};
    return hfx_node_add(g, HFX_OP_UNSQUEEZE, 1, &x, &a);
}

hfx_value *hfx_concat(hfx_graph *g, int n, hfx_value *const *xs, int axis) {
    hfx_attrs a = {.axis = axis};
    return hfx_node_add(g, HFX_OP_CONCAT, n, xs, &a);
}

hfx_value *hfx_slice(hfx_graph *g, hfx_value *x, int axis, int64_t start, int64_t end) {
    hfx_attrs a = {.axis = axis, .start = start, .end = end};
    return hfx_node_add(g, HFX_OP_SLICE, 1, &x, &a);
}

hfx_value *hfx_gather(hfx_graph *g, hfx_value *data, hfx_value *indices, int axis) {
    hfx_attrs a = {.axis = axis};
    hfx_value *in[2] = {data, indices};
    return hfx_node_add(g, HFX_OP_GATHER, 2, in, &a);
}

hfx_value *hfx_shape_of(hfx_graph *g, hfx_value *x) { return hfx_op1(g, HFX_OP_SHAPE, x); }

hfx_value *hfx_dim_of(hfx_graph *g, hfx_value *x, int axis) {
    return hfx_gather(g, hfx_shape_of(g, x), hfx_const_i64(g, axis), 0);
}

hfx_value *hfx_range(hfx_graph *g, hfx_value *start, hfx_value *limit, hfx_value *delta,
                     hfx_dim length) {
    hfx_attrs a = {.rank = 1, .dims = {length}};
    hfx_value *in[3] = {start, limit, delta};
    return hfx_node_add(g, HFX_OP_RANGE, 3, in, &a);
}

hfx_value *hfx_expand(hfx_graph *g, hfx_value *x, hfx_value *shape, int rank, const hfx_dim *dims) {
    hfx_attrs a = {.rank = rank};
    memcpy(a.dims, dims, (size_t)rank * sizeof *dims);
    hfx_value *in[2] = {x, shape};
    return hfx_node_add(g, HFX_OP_EXPAND, 2, in, &a);
}

hfx_value *hfx_cache_write(hfx_graph *g, hfx_value *cache, hfx_value *update, hfx_value *slots) {
    hfx_value *in[3] = {cache, update, slots};
    return hfx_node_add(g, HFX_OP_CACHE_WRITE, 3, in, NULL);
}

hfx_value *hfx_zeros_resized(hfx_graph *g, hfx_value *x, int axis, int64_t length) {
    hfx_value *sizes[HFX_MAX_RANK];
    hfx_dim dims[HFX_MAX_RANK];
    int rank = x->rank;
    for (int d = 0; d < rank; d++) {
        dims[d] = d == axis ? hfx_dim_const(length) : x->dims[d];
        hfx_value *size = hfx_dim_is_const(dims[d]) ? hfx_const_i64(g, dims[d].c) : hfx_dim_of(g, x, d);
        sizes[d] = hfx_unsqueeze(g, size, 0);
    }
    return hfx_expand(g, hfx_const_scalar(g, x->dtype, 0.0), hfx_concat(g, rank, sizes, 0), rank, dims);
}

hfx_value *hfx_top_k_mask(hfx_graph *g, hfx_value *x, int64_t k) {
    hfx_attrs a = {.k = k};
    return hfx_node_add(g, HFX_OP_TOP_K_MASK, 1, &x, &a);
}

hfx_value *hfx_cumsum(hfx_graph *g, hfx_value *x, int axis) {
    hfx_attrs a = {.axis = axis};
    return hfx_node_add(g, HFX_OP_CUMSUM, 1, &x, &a);
}

/* The output length of one spatial axis t (kernel k, stride, padding) as hfx_conv1d describes it; false after failing g. */
static bool conv_length(hfx_graph *g, hfx_dim t, int64_t k, int64_t stride, int64_t padding, const char *frames,
                        hfx_dim *out) {
    int64_t shift = 2 * padding - k; /* T' = ⌊(T + shift)/stride⌋ + 1 */
    bool ok = true;
    if (hfx_dim_is_const(t)) {
        if (t.c + shift < 0) {
            hfx_graph_fail(g, HFX_ERR_INVALID, "conv: %lld samples are fewer than the kernel's %lld", (long long)t.c,
                           (long long)k);
            return false;
        }
        *out = hfx_dim_const((t.c + shift) / stride + 1);
    } else if (stride == 1) {
        *out = hfx_dim_add(t, hfx_dim_const(shift + 1), &ok);
    } else if (t.n == 1 && t.coef[0] == 1 && t.c >= 0 && frames) { /* one symbol, maybe zero-padded by t.c */
        hfx_symbol *s = &g->symbols[t.sym[0]];
        if (s->div == 0 && s->min + t.c < -shift) s->min = -shift - t.c;
        if (s->min + t.c < -shift) { /* a derived one's minimum follows its own: the caller raises that */
            hfx_graph_fail(g, HFX_ERR_INTERNAL, "conv: '%s' can be shorter than the kernel", s->name);
            return false;
        }
        *out = hfx_dim_sym(hfx_graph_symbol_derived(g, frames, hfx_dim_add(t, hfx_dim_const(shift + stride), &ok),
                                                    stride, 0));
    } else {
        ok = false;
    }
    if (!ok) hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "conv: a strided window over a length of several sizes");
    return ok;
}

/* The convolution node over `rank` spatial axes (hfx_conv1d, hfx_conv2d). */
static hfx_value *conv(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias, int rank, const int64_t *stride,
                       const int64_t *padding, int64_t groups, const char *const *frames) {
    hfx_attrs a = {.ints = {groups}, .n_ints = 1 + 2 * rank, .rank = rank};
    bool shapes = x->rank == 2 + rank && w->rank == 2 + rank && groups >= 1;
    for (int i = 0; shapes && i < rank; i++) shapes = hfx_dim_is_const(w->dims[2 + i]) && stride[i] >= 1 && padding[i] >= 0;
    if (!shapes) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "conv: needs x [B,Cin,*S], w [Cout,Cin/groups,*K] of %d spatial axes, "
                       "strides ≥ 1", rank);
        return x;
    }
    for (int i = 0; i < rank; i++) {
        a.ints[1 + 2 * i] = stride[i], a.ints[2 + 2 * i] = padding[i];
        if (!conv_length(g, x->dims[2 + i], w->dims[2 + i].c, stride[i], padding[i], frames[i], &a.dims[i])) return x;
    }
    hfx_value *in[3] = {x, w, bias};
    return hfx_node_add(g, HFX_OP_CONV, bias ? 3 : 2, in, &a);
}

hfx_value *hfx_conv1d(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias, int64_t stride, int64_t padding,
                      int64_t groups, const char *frames) {
    return conv(g, x, w, bias, 1, &stride, &padding, groups, &frames);
}

hfx_value *hfx_conv2d(hfx_graph *g, hfx_value *x, hfx_value *w, hfx_value *bias, const int64_t stride[2],
                      const int64_t padding[2], int64_t groups, const char *const frames[2]) {
    return conv(g, x, w, bias, 2, stride, padding, groups, frames);
}

void hfx_top_k(hfx_graph *g, hfx_value *x, int64_t k, hfx_value **values, hfx_value **indices) {
    hfx_attrs a = {.k = k};
    hfx_value *outs[HFX_MAX_OUTPUTS];
    hfx_node_add_outputs(g, HFX_OP_TOP_K, 1, &x, &a, outs);
    *values = outs[0];
    *indices = outs[1];
}

hfx_value *hfx_gather_elements(hfx_graph *g, hfx_value *data, hfx_value *indices, int axis) {
    hfx_attrs a = {.axis = axis};
    hfx_value *in[2] = {data, indices};
    return hfx_node_add(g, HFX_OP_GATHER_ELEMENTS, 2, in, &a);
}

hfx_value *hfx_scatter_elements(hfx_graph *g, hfx_value *data, hfx_value *indices, hfx_value *updates,
                                int axis) {
    hfx_attrs a = {.axis = axis};
    hfx_value *in[3] = {data, indices, updates};
    return hfx_node_add(g, HFX_OP_SCATTER_ELEMENTS, 3, in, &a);
}
