/* Memory planning (program.h): liveness of each tensor over the chain's calls, then a greedy
 * placement, largest first, at the lowest offset free over the tensor's lifetime. */
#include <stdlib.h>

#include "fmt/executorch/program.h"

enum { ALIGN = 16 };

uint64_t hfx_et_nbytes(const hfx_et_value *v) {
    uint64_t n = 1;
    for (int d = 0; d < v->rank; d++) n *= (uint64_t)v->sizes[d];
    return hfx_dtype_nbytes(v->dtype, n);
}

static void touch(hfx_et_program *e, int v, int at) {
    hfx_et_value *x = &e->values[v];
    if (x->kind == HFX_ET_TENSOR_LIST || x->kind == HFX_ET_OPTIONAL_TENSOR_LIST) {
        for (int i = 0; i < x->n; i++)
            if (x->items[i] >= 0) touch(e, x->items[i], at);
        return;
    }
    if (x->kind != HFX_ET_TENSOR) return;
    if (x->first < 0 || at < x->first) x->first = at;
    if (at > x->last) x->last = at;
}

typedef struct block {
    int v;
    uint64_t size;
} block;

static int larger_first(const void *a, const void *b) {
    const block *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->v - y->v; /* deterministic */
}

static bool overlap(const hfx_et_value *a, const hfx_et_value *b) { return a->first <= b->last && b->first <= a->last; }

/* The tensors the arena holds, largest first, each at the lowest offset free over its lifetime. */
static void place(hfx_et_program *e, hfx_et_alloc alloc, block *blocks, int *placed) {
    int n = 0;
    for (int i = 0; i < e->n_values; i++) {
        hfx_et_value *x = &e->values[i];
        if (x->kind != HFX_ET_TENSOR || x->buffer || x->last < 0) continue;
        bool is_in = false, is_out = false;
        for (int k = 0; k < e->n_inputs; k++) is_in |= e->inputs[k] == i;
        for (int k = 0; k < e->n_outputs; k++) is_out |= e->outputs[k] == i;
        if (is_in ? !alloc.graph_input : is_out && !alloc.graph_output) continue; /* a mutated input is an input */
        blocks[n++] = (block){i, (hfx_et_nbytes(x) + ALIGN - 1) / ALIGN * ALIGN};
    }
    qsort(blocks, (size_t)n, sizeof *blocks, larger_first);
    int n_placed = 0;
    for (int b = 0; b < n; b++) {
        hfx_et_value *x = &e->values[blocks[b].v];
        uint64_t off = 0;
        for (int k = 0; k < n_placed; k++) { /* placed blocks in offset order */
            const hfx_et_value *y = &e->values[placed[k]];
            if (!overlap(x, y)) continue;
            uint64_t ysize = (hfx_et_nbytes(y) + ALIGN - 1) / ALIGN * ALIGN;
            if (off + blocks[b].size <= y->offset) break;
            if (y->offset + ysize > off) off = y->offset + ysize;
        }
        x->planned = true;
        x->offset = off;
        if (off + blocks[b].size > e->arena_size) e->arena_size = off + blocks[b].size;
        int k = n_placed++;
        while (k > 0 && e->values[placed[k - 1]].offset > off) placed[k] = placed[k - 1], k--;
        placed[k] = blocks[b].v;
    }
}

void hfx_et_plan(hfx_et_program *e, hfx_et_alloc alloc) {
    for (int i = 0; i < e->n_values; i++) {
        e->values[i].first = e->values[i].last = -1;
        e->values[i].planned = false;
    }
    for (int c = 0; c < e->n_calls; c++)
        for (int a = 0; a < e->calls[c].n; a++) touch(e, e->calls[c].args[a], c);
    /* outputs are alive until after the last call, inputs from before the first (after the
     * outputs: an input that is also an output, a cache updated in place, lives throughout) */
    for (int i = 0; i < e->n_outputs; i++) touch(e, e->outputs[i], e->n_calls);
    for (int i = 0; i < e->n_inputs; i++) {
        hfx_et_value *x = &e->values[e->inputs[i]];
        x->first = -1; /* even when no call reads it: the caller's data is copied in */
        if (x->last < 0) x->last = 0;
    }
    for (int i = 0; i < e->n_values; i++) /* a mutable buffer holds its content between calls */
        if (e->values[i].persistent) e->values[i].first = -1, e->values[i].last = e->n_calls;
    e->arena_size = 0;
    block *blocks = malloc((size_t)(e->n_values ? e->n_values : 1) * sizeof *blocks);
    int *placed = malloc((size_t)(e->n_values ? e->n_values : 1) * sizeof *placed); /* by offset */
    if (blocks && placed) place(e, alloc, blocks, placed);
    else e->oom = true;
    free(blocks), free(placed);
}
