/* The .pte file (program.h): a FlatBuffers Program (identifier "ET12") whose first bytes after
 * the identifier are ExecuTorch's extended header ("eh00": header length, program size, offset of
 * the first segment, segment bytes), then, at a 128-byte boundary, the constant segment: each
 * stored tensor at a 16-byte boundary, streamed from the checkpoint. The flatbuffer holds only
 * the plan (values, calls, operators), so it is small and built in memory; the tensors' offsets
 * in the segment are known from their sizes before any of them is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/executorch/flatbuf.h"
#include "fmt/executorch/program.h"
#include "io/bulk.h"

enum {
    HEADER = 32,            /* the extended header's length */
    SEGMENT_ALIGN = 128,    /* the first segment's offset (ExecuTorch's default) */
    TENSOR_ALIGN = 16,      /* each constant's offset in the segment (ExecuTorch's ALIGNMENT) */
    CHUNK = 1 << 20
};

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static hfx_fb_ref ints32(hfx_fb *b, const int *v, int n) { return hfx_fb_vector(b, v, (size_t)n, 4, 4); }

static hfx_fb_ref tensor(hfx_fb *b, const hfx_et_value *v) {
    int32_t sizes[HFX_MAX_RANK];
    uint8_t order[HFX_MAX_RANK];
    for (int d = 0; d < v->rank; d++) sizes[d] = (int32_t)v->sizes[d], order[d] = (uint8_t)d;
    hfx_fb_ref rs = hfx_fb_vector(b, sizes, (size_t)v->rank, 4, 4), ro = hfx_fb_vector(b, order, (size_t)v->rank, 1, 1);
    hfx_fb_ref alloc = 0;
    if (v->planned) {
        hfx_fb_begin(b);
        hfx_fb_u32(b, 0, 1); /* memory id 1: the planned arena (0 holds the constants) */
        hfx_fb_u32(b, 1, (uint32_t)v->offset);
        hfx_fb_u32(b, 2, (uint32_t)(v->offset >> 32));
        alloc = hfx_fb_end(b);
    }
    static const uint8_t codes[] = {[HFX_DTYPE_U8] = 0, [HFX_DTYPE_I8] = 1, [HFX_DTYPE_I16] = 2, [HFX_DTYPE_I32] = 3,
                                    [HFX_DTYPE_I64] = 4, [HFX_DTYPE_F16] = 5, [HFX_DTYPE_F32] = 6, [HFX_DTYPE_F64] = 7,
                                    [HFX_DTYPE_BOOL] = 11, [HFX_DTYPE_BF16] = 15};
    hfx_fb_begin(b);
    hfx_fb_u8(b, 0, codes[v->dtype]);
    hfx_fb_ref_field(b, 2, rs);
    hfx_fb_ref_field(b, 3, ro);
    hfx_fb_u32(b, 5, v->buffer);
    hfx_fb_ref_field(b, 6, alloc);
    hfx_fb_u8(b, 8, v->dynamic ? 1 : 0); /* DYNAMIC_BOUND */
    return hfx_fb_end(b);
}

static hfx_fb_ref evalue(hfx_fb *b, const hfx_et_value *v) {
    hfx_fb_ref val;
    switch (v->kind) {
    case HFX_ET_TENSOR: val = tensor(b, v); break;
    case HFX_ET_INT_LIST: {
        int64_t items[HFX_MAX_RANK];
        for (int i = 0; i < v->n && i < HFX_MAX_RANK; i++) items[i] = v->items[i];
        hfx_fb_ref r = hfx_fb_vector(b, items, (size_t)v->n, 8, 8);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 0, r);
        val = hfx_fb_end(b);
        break;
    }
    case HFX_ET_TENSOR_LIST:
    case HFX_ET_OPTIONAL_TENSOR_LIST: {
        hfx_fb_ref r = ints32(b, v->items, v->n);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 0, r);
        val = hfx_fb_end(b);
        break;
    }
    default: /* Null, Int, Bool, Double: one scalar field (or none) */
        hfx_fb_begin(b);
        if (v->kind == HFX_ET_INT) hfx_fb_i64(b, 0, v->i);
        else if (v->kind == HFX_ET_BOOL) hfx_fb_u8(b, 0, (uint8_t)(v->i != 0));
        else if (v->kind == HFX_ET_DOUBLE) hfx_fb_f64(b, 0, v->f);
        val = hfx_fb_end(b);
    }
    hfx_fb_begin(b);
    hfx_fb_u8(b, 0, (uint8_t)v->kind);
    hfx_fb_ref_field(b, 1, val);
    return hfx_fb_end(b);
}

/* torch's pytree spec of n leaves (treespec_dumps' format): the inputs as (args, kwargs), the
 * outputs as one leaf or a tuple. */
static char *pytree(int n, bool inputs) {
    static const char leaf[] = "{\"type\": null, \"context\": null, \"children_spec\": []}";
    size_t cap = 256 + (size_t)n * (sizeof leaf + 2);
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t k = (size_t)snprintf(s, cap, "[1, ");
    if (inputs) k += (size_t)snprintf(s + k, cap - k, "{\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [");
    if (inputs || n != 1) k += (size_t)snprintf(s + k, cap - k, "{\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [");
    for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%s", i ? ", " : "", leaf);
    if (inputs || n != 1) k += (size_t)snprintf(s + k, cap - k, "]}");
    if (inputs)
        k += (size_t)snprintf(s + k, cap - k, ", {\"type\": \"builtins.dict\", \"context\": \"[]\", \"children_spec\": []}]}");
    snprintf(s + k, cap - k, "]");
    return s;
}

/* An ExecutionPlan's parts, built before its table. */
typedef struct plan_parts {
    const char *name, *in_spec, *out_spec; /* the method's name, its pytree specs */
    hfx_fb_ref values, inputs, outputs, chains, operators, delegates, buffers;
} plan_parts;

/* The ExecutionPlan table (program.fbs: name, container_meta_type, values, inputs, outputs,
 * chains, operators, delegates, non_const_buffer_sizes). */
static hfx_fb_ref execution_plan(hfx_fb *b, const plan_parts *p) {
    hfx_fb_ref sin = hfx_fb_string(b, p->in_spec), sout = hfx_fb_string(b, p->out_spec);
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, sin);
    hfx_fb_ref_field(b, 1, sout);
    hfx_fb_ref meta = hfx_fb_end(b);
    hfx_fb_ref name = hfx_fb_string(b, p->name);
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, name);
    hfx_fb_ref_field(b, 1, meta);
    hfx_fb_ref_field(b, 2, p->values);
    hfx_fb_ref_field(b, 3, p->inputs);
    hfx_fb_ref_field(b, 4, p->outputs);
    hfx_fb_ref_field(b, 5, p->chains);
    hfx_fb_ref_field(b, 6, p->operators);
    hfx_fb_ref_field(b, 7, p->delegates);
    hfx_fb_ref_field(b, 8, p->buffers);
    return hfx_fb_end(b);
}

static hfx_fb_ref plan_with(hfx_fb *b, const hfx_et_program *e, const char *method, hfx_fb_ref *refs,
                            const char *in_spec, const char *out_spec);

static hfx_fb_ref plan(hfx_fb *b, const hfx_et_program *e, const char *method, bool *ok) {
    hfx_fb_ref *refs = malloc((size_t)(e->n_values + e->n_calls + e->n_ops + e->n_delegates + 1) * sizeof *refs);
    char *in_spec = pytree(e->n_inputs, true), *out_spec = pytree(e->n_outputs, false);
    hfx_fb_ref r = 0;
    if (refs && in_spec && out_spec) r = plan_with(b, e, method, refs, in_spec, out_spec);
    else *ok = false;
    free(refs), free(in_spec), free(out_spec);
    return r;
}

/* The ExecutionPlan of one method; `refs` scratch for every vector of references it builds. */
static hfx_fb_ref plan_with(hfx_fb *b, const hfx_et_program *e, const char *method, hfx_fb_ref *refs,
                            const char *in_spec, const char *out_spec) {
    for (int i = 0; i < e->n_values; i++) refs[i] = evalue(b, &e->values[i]);
    hfx_fb_ref values = hfx_fb_vector_refs(b, refs, (size_t)e->n_values);
    for (int c = 0; c < e->n_calls; c++) {
        const hfx_et_call *call = &e->calls[c];
        hfx_fb_ref args = ints32(b, call->args, call->n);
        hfx_fb_begin(b); /* KernelCall {op_index, args} or DelegateCall {delegate_index, args} */
        hfx_fb_i32(b, 0, call->delegate >= 0 ? call->delegate : call->op);
        hfx_fb_ref_field(b, 1, args);
        hfx_fb_ref kc = hfx_fb_end(b);
        hfx_fb_begin(b);
        hfx_fb_u8(b, 0, call->delegate >= 0 ? 2 : 1); /* InstructionArguments: DelegateCall, KernelCall */
        hfx_fb_ref_field(b, 1, kc);
        refs[c] = hfx_fb_end(b);
    }
    hfx_fb_ref instructions = hfx_fb_vector_refs(b, refs, (size_t)e->n_calls);
    hfx_fb_ref cin = ints32(b, e->inputs, e->n_inputs), cout = ints32(b, e->outputs, e->n_outputs);
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 0, cin);
    hfx_fb_ref_field(b, 1, cout);
    hfx_fb_ref_field(b, 2, instructions);
    hfx_fb_ref chain = hfx_fb_end(b);
    hfx_fb_ref chains = hfx_fb_vector_refs(b, &chain, 1);
    for (int i = 0; i < e->n_ops; i++) {
        hfx_fb_ref name = hfx_fb_string(b, e->ops[i].name), overload = hfx_fb_string(b, e->ops[i].overload);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 0, name);
        hfx_fb_ref_field(b, 1, overload);
        refs[i] = hfx_fb_end(b);
    }
    hfx_fb_ref operators = hfx_fb_vector_refs(b, refs, (size_t)e->n_ops);
    /* each delegate's payload is segment 1 + its index (hfx_et_write) */
    for (int d = 0; d < e->n_delegates; d++) {
        hfx_fb_ref id = hfx_fb_string(b, "XnnpackBackend");
        hfx_fb_begin(b);
        hfx_fb_u8(b, 0, 1); /* DataLocation SEGMENT */
        hfx_fb_u32(b, 1, (uint32_t)(1 + d));
        hfx_fb_ref processed = hfx_fb_end(b);
        hfx_fb_ref specs = hfx_fb_vector_refs(b, NULL, 0);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 0, id);
        hfx_fb_ref_field(b, 1, processed);
        hfx_fb_ref_field(b, 2, specs);
        refs[d] = hfx_fb_end(b);
    }
    hfx_fb_ref delegates = hfx_fb_vector_refs(b, refs, (size_t)e->n_delegates);
    int64_t sizes[2] = {0, (int64_t)e->arena_size}; /* memory id 0 is reserved (constants) */
    hfx_fb_ref buffers = hfx_fb_vector(b, sizes, 2, 8, 8);
    hfx_fb_ref pin = ints32(b, e->inputs, e->n_inputs), pout = ints32(b, e->outputs, e->n_outputs);
    return execution_plan(b, &(plan_parts){method, in_spec, out_spec, values, pin, pout, chains, operators,
                                           delegates, buffers});
}

/* A constant method's plan: its values, returned; no inputs, no calls, no memory. */
static hfx_fb_ref constant_plan(hfx_fb *b, const hfx_et_constant_method *m) {
    hfx_fb_ref refs[8];
    int index[8];
    int n = m->n < 8 ? m->n : 8;
    for (int i = 0; i < n; i++) {
        hfx_et_value v = {.kind = m->is_bool ? HFX_ET_BOOL : HFX_ET_INT, .i = m->values[i]};
        refs[i] = evalue(b, &v);
        index[i] = i;
    }
    hfx_fb_ref values = hfx_fb_vector_refs(b, refs, (size_t)n);
    hfx_fb_ref none = hfx_fb_vector_refs(b, NULL, 0);
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 2, none); /* no instructions */
    hfx_fb_ref chain = hfx_fb_end(b);
    hfx_fb_ref chains = hfx_fb_vector_refs(b, &chain, 1);
    int64_t sizes[1] = {0};
    hfx_fb_ref buffers = hfx_fb_vector(b, sizes, 1, 8, 8);
    hfx_fb_ref pin = ints32(b, NULL, 0), pout = ints32(b, index, n);
    /* the returns' pytree: one leaf, or a list of them */
    static const char leaf[] = "{\"type\": null, \"context\": null, \"children_spec\": []}";
    char spec[8 * sizeof leaf + 128];
    size_t k = (size_t)snprintf(spec, sizeof spec, "[1, %s", n == 1 ? "" : "{\"type\": \"builtins.list\", \"context\": "
                                                                        "\"null\", \"children_spec\": [");
    for (int i = 0; i < n; i++) k += (size_t)snprintf(spec + k, sizeof spec - k, "%s%s", i ? ", " : "", leaf);
    snprintf(spec + k, sizeof spec - k, "%s]", n == 1 ? "" : "]}");
    return execution_plan(b, &(plan_parts){m->name, "", spec, values, pin, pout, chains, none, none, buffers});
}

/* The segments after the program: 0 the constants, then each delegate's payload, then each
 * tensor a delegate reads as named data (once, however many read it), each at a 128-byte
 * boundary from the segment base. */
typedef struct segment_ref {
    uint64_t offset, size;
    uint8_t *payload;           /* a delegate's (owned), or NULL */
    const hfx_aten_input *data; /* named data: its bytes, and its key (the tensor's name) */
} segment_ref;

/* `t` as named data: a segment of its own, added when new. */
static void named(segment_ref *segs, int *n, const hfx_aten_input *t, uint64_t size) {
    for (int i = 0; i < *n; i++)
        if (segs[i].data && (segs[i].data == t || !strcmp(segs[i].data->target, t->target))) return;
    segs[(*n)++] = (segment_ref){0, size, NULL, t};
}

/* Where each byte beyond the flatbuffer goes: the constants in segment 0, then each delegate's
 * payload and the named data its weights are. */
typedef struct pte_layout {
    uint64_t *offsets;                 /* [buffers + 1]: each constant's offset in segment 0; [0] "no data" */
    const hfx_et_value **constants;    /* [buffers + 1]: the constant of each buffer index */
    segment_ref *segs;                 /* [1 + 4 · delegates]: a payload and up to 3 named data each */
    int n_segs;
    uint64_t total;                    /* the segments' bytes, aligned */
} pte_layout;

/* The segments' offsets and sizes; false when a delegate's payload cannot be made (out of memory). */
static bool lay_out(const hfx_et_program *e, pte_layout *l) {
    l->offsets[0] = 0;
    uint64_t segment = 0;
    for (int i = 0; i < e->n_values; i++) {
        const hfx_et_value *v = &e->values[i];
        if (v->kind != HFX_ET_TENSOR || !v->buffer) continue;
        segment = align_up(segment, TENSOR_ALIGN);
        l->offsets[v->buffer] = segment;
        l->constants[v->buffer] = v;
        segment += hfx_et_nbytes(v);
    }
    bool ok = true;
    l->segs[0].size = segment;
    l->n_segs = 1 + e->n_delegates; /* the payloads: 1 .. n_delegates */
    for (int d = 0; d < e->n_delegates; d++) {
        const hfx_et_delegate *x = &e->delegates[d];
        if (x->quant) {
            named(l->segs, &l->n_segs, x->codes, hfx_init_nbytes(x->codes->init));
            named(l->segs, &l->n_segs, x->scales, hfx_init_nbytes(x->scales->init));
        } else {
            named(l->segs, &l->n_segs, x->weight, (uint64_t)(x->n * x->k) * 4); /* float32 */
        }
        if (x->bias) named(l->segs, &l->n_segs, x->bias, (uint64_t)x->n * 4);
        size_t len = 0;
        ok = ok && hfx_et_xnnpack_payload(e, x, &l->segs[1 + d].payload, &len);
        l->segs[1 + d].size = len;
    }
    l->total = 0;
    for (int i = 0; i < l->n_segs; i++) {
        l->segs[i].offset = align_up(l->total, SEGMENT_ALIGN);
        l->total = l->segs[i].offset + l->segs[i].size;
    }
    return ok;
}

/* The program's segment tables: every segment's place, segment 0's constant offsets, and the
 * named data's keys. */
static bool segment_tables(hfx_fb *b, const hfx_et_program *e, const pte_layout *l, hfx_fb_ref *segments,
                           hfx_fb_ref *constant_segment, hfx_fb_ref *named_data) {
    hfx_fb_ref *refs = malloc((size_t)l->n_segs * sizeof *refs);
    bool ok = refs != NULL;
    for (int i = 0; ok && i < l->n_segs; i++) {
        hfx_fb_begin(b);
        hfx_fb_i64(b, 0, (int64_t)l->segs[i].offset);
        hfx_fb_i64(b, 1, (int64_t)l->segs[i].size);
        refs[i] = hfx_fb_end(b);
    }
    if (ok) *segments = hfx_fb_vector_refs(b, refs, (size_t)l->n_segs);
    hfx_fb_ref offs = hfx_fb_vector(b, l->offsets, (size_t)e->n_buffers + 1, 8, 8);
    hfx_fb_begin(b);
    hfx_fb_ref_field(b, 1, offs); /* segment 0 */
    *constant_segment = hfx_fb_end(b);
    int k = 0;
    for (int i = 0; ok && i < l->n_segs; i++) {
        if (!l->segs[i].data) continue;
        hfx_fb_ref key = hfx_fb_string(b, l->segs[i].data->target);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 0, key);
        hfx_fb_u32(b, 1, (uint32_t)i);
        refs[k++] = hfx_fb_end(b);
    }
    if (ok && k) *named_data = hfx_fb_vector_refs(b, refs, (size_t)k);
    free(refs);
    return ok;
}

/* The file: the flatbuffer with its extended header, then the segments streamed at their offsets. */
static hfx_status write_file(const hfx_et_program *e, const pte_layout *l, uint8_t *data, size_t len,
                             hfx_outdir *out, const char *file, hfx_error *err) {
    bool has_segments = e->n_buffers || e->n_delegates;
    uint64_t base = has_segments ? align_up(len, SEGMENT_ALIGN) : 0;
    uint8_t *h = data + 8;
    memcpy(h, "eh00", 4);
    hfx_fb_put_le(h + 4, HEADER, 4);
    hfx_fb_put_le(h + 8, len, 8);
    hfx_fb_put_le(h + 16, base, 8);
    hfx_fb_put_le(h + 24, has_segments ? l->total : 0, 8);
    FILE *f = NULL;
    hfx_status st = hfx_outdir_create(out, file, &f, err);
    if (st) return st;
    hfx_outdir_progress_total(out, l->total);
    if (fwrite(data, 1, len, f) != len) st = hfx_fail(err, HFX_ERR_IO, "%s: write failed", file);
    hfx_bulk *bulk = NULL;
    if (!st && has_segments) st = hfx_bulk_open(out, f, CHUNK, &bulk, err);
    for (uint32_t k = 1; !st && bulk && k <= e->n_buffers; k++) {
        const hfx_et_value *v = l->constants[k];
        hfx_bulk_pad_to(bulk, base + l->offsets[k]);
        st = hfx_bulk_stream(bulk, v->constant->init, v->constant->bytes, hfx_et_nbytes(v), err);
    }
    for (int i = 1; !st && bulk && i < l->n_segs; i++) {
        const segment_ref *s = &l->segs[i];
        hfx_bulk_pad_to(bulk, base + s->offset);
        st = s->payload ? hfx_bulk_stream(bulk, NULL, s->payload, s->size, err)
                        : hfx_bulk_stream(bulk, s->data->init, s->data->bytes, s->size, err);
    }
    if (bulk) {
        hfx_status wst = hfx_bulk_close(bulk, file, st ? NULL : err);
        if (!st) st = wst;
    }
    hfx_status cst = hfx_outdir_close(out, f, file, st ? NULL : err);
    return st ? st : cst;
}

hfx_status hfx_et_write(const hfx_et_program *e, const char *method, const hfx_et_constant_method *consts,
                        int n_consts, hfx_outdir *out, const char *file, hfx_error *err) {
    enum { MAX_CONSTANT_METHODS = 15 };
    if (n_consts > MAX_CONSTANT_METHODS)
        return hfx_fail(err, HFX_ERR_INTERNAL, "executorch: %s: %d constant methods (at most %d)", file, n_consts,
                        MAX_CONSTANT_METHODS);
    pte_layout l = {.offsets = malloc(((size_t)e->n_buffers + 1) * sizeof *l.offsets),
                    .constants = malloc(((size_t)e->n_buffers + 1) * sizeof *l.constants),
                    .segs = calloc((size_t)(1 + 4 * e->n_delegates), sizeof *l.segs)};
    hfx_fb *b = hfx_fb_new();
    bool ok = l.offsets && l.constants && l.segs && b && lay_out(e, &l);
    hfx_fb_ref eps[1 + MAX_CONSTANT_METHODS];
    eps[0] = ok ? plan(b, e, method, &ok) : 0;
    for (int i = 0; i < n_consts && ok; i++) eps[1 + i] = constant_plan(b, &consts[i]);
    hfx_fb_ref segments = 0, constant_segment = 0, named_data = 0, root = 0;
    if (ok) {
        hfx_fb_ref plans = hfx_fb_vector_refs(b, eps, (size_t)(1 + n_consts)), none = hfx_fb_vector_refs(b, NULL, 0);
        if (e->n_buffers || e->n_delegates) ok = segment_tables(b, e, &l, &segments, &constant_segment, &named_data);
        hfx_fb_begin(b);
        hfx_fb_ref_field(b, 1, plans);
        hfx_fb_ref_field(b, 2, none);
        hfx_fb_ref_field(b, 3, none);
        hfx_fb_ref_field(b, 4, segments);
        hfx_fb_ref_field(b, 5, constant_segment);
        hfx_fb_ref_field(b, 7, named_data);
        root = hfx_fb_end(b);
    }
    uint8_t *data;
    size_t len;
    hfx_status st = HFX_OK;
    if (!ok || !hfx_fb_finish(b, root, "ET12", HEADER, &data, &len))
        st = hfx_fail(err, HFX_ERR_NOMEM, "executorch: %s: the program is over 2 GiB or out of memory", file);
    if (!st) st = write_file(e, &l, data, len, out, file, err);
    for (int i = 0; l.segs && i < l.n_segs; i++) free(l.segs[i].payload);
    free(l.offsets), free(l.constants), free(l.segs), hfx_fb_free(b);
    return st;
}
