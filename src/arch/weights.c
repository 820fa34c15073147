#include "arch/weights.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/nn.h"
#include "base/half.h"
#include "base/mapping.h"
#include "base/status.h"

hfx_status hfx_weights_init(hfx_weights *w, const hfx_checkpoint *ck, hfx_graph *g,
                            hfx_dtype dtype, const char *architecture, hfx_error *err) {
    w->ck = ck;
    w->g = g;
    w->dtype = dtype;
    w->architecture = architecture;
    w->rename = w->stored = NULL;
    w->alias = NULL;
    w->used = calloc(hfx_checkpoint_tensor_count(ck) + 1, 1);
    return w->used ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
}

void hfx_weights_free(hfx_weights *w) {
    free(w->used);
    w->used = NULL;
}

static void shape_text(char *buf, size_t n, int rank, const int64_t *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* `asked` through the first rule of `table` that matches (NULL: none matches) into buf */
static const char *renamed_by(const hfx_weight_rename *table, const char *asked, char *buf, size_t size) {
    for (const hfx_weight_rename *r = table; r && r->from; r++)
        if (strncmp(asked, r->from, strlen(r->from)) == 0) {
            snprintf(buf, size, "%s%s", r->to, asked + strlen(r->from));
            return buf;
        }
    return NULL;
}

/* The checkpoint's name for `asked` (the first matching rename rule applied, then, where the checkpoint has no such
 * tensor, the first stored form it has) into buf. */
static const char *renamed(const hfx_weights *w, const char *asked, char *buf, size_t size) {
    const char *name = renamed_by(w->rename, asked, buf, size);
    if (!name) name = asked;
    if (!w->stored || hfx_checkpoint_index_of(w->ck, name) >= 0) return name;
    char alt[640];
    for (const hfx_weight_rename *r = w->stored; r->from; r++) {
        const char *at = strstr(name, r->from);
        if (!at) continue;
        int n = snprintf(alt, sizeof alt, "%.*s%s%s", (int)(at - name), name, r->to, at + strlen(r->from));
        if (n > 0 && (size_t)n < sizeof alt && (size_t)n < size && hfx_checkpoint_index_of(w->ck, alt) >= 0) {
            memcpy(buf, alt, (size_t)n + 1);
            return buf;
        }
    }
    return name;
}

/* The tensor `asked` names (renames applied: its name in *name, in buf) and its index (-1: none, then NULL). */
static const hfx_tensor_info *lookup(const hfx_weights *w, const char *asked, char *buf, size_t size, const char **name,
                                     long *index) {
    *name = renamed(w, asked, buf, size);
    *index = hfx_checkpoint_index_of(w->ck, *name);
    return *index >= 0 ? hfx_checkpoint_tensor_at(w->ck, (size_t)*index) : NULL;
}

/* A stand-in of the expected shape after a failure: later shape checks stay quiet; the graph has already failed, so
 * its bytes are never written. */
static hfx_value *stand_in(hfx_weights *w, hfx_dtype dtype, int rank, const int64_t *shape) {
    static const int64_t zero = 0; /* (as wide as any dtype's one element) */
    hfx_value *v = hfx_const_bytes(w->g, dtype, 0, NULL, &zero);
    v->rank = rank;
    for (int d = 0; d < rank; d++) v->dims[d] = hfx_dim_const(shape[d]);
    return v;
}

/* Whether t has `rank` dims equal to `shape`; if not (or missing), the graph fails naming it. */
static bool shaped(hfx_weights *w, const hfx_tensor_info *t, const char *name, int rank, const int64_t *shape) {
    bool ok = t && t->rank == rank;
    for (int d = 0; ok && d < rank; d++) ok = t->shape[d] == shape[d];
    if (!t) {
        hfx_graph_fail(w->g, HFX_ERR_INVALID, "%s: tensor '%s' (needed by %s) is missing",
                       hfx_checkpoint_dir(w->ck), name, w->architecture);
    } else if (!ok) {
        char want[160], got[160];
        shape_text(want, sizeof want, rank, shape);
        shape_text(got, sizeof got, t->rank, t->shape);
        hfx_graph_fail(w->g, HFX_ERR_INVALID,
                       "%s: tensor '%s' has shape %s, but config.json implies %s", t->file, name,
                       got, want);
    }
    return ok;
}

/* Tensor i (t, named `name`; NULL: missing), of that shape, a float as dtype (each its own check and message). */
static hfx_value *weight_at(hfx_weights *w, hfx_dtype dtype, int rank, const int64_t *shape, const hfx_tensor_info *t,
                            const char *name, long i) {
    bool ok = shaped(w, t, name, rank, shape);
    if (ok && t->dtype != HFX_DTYPE_F32 && t->dtype != HFX_DTYPE_F16 && t->dtype != HFX_DTYPE_BF16) {
        hfx_graph_fail(w->g, HFX_ERR_UNSUPPORTED,
                       "%s: tensor '%s' has dtype %s; weights must be F32, F16 or BF16", t->file,
                       name, hfx_dtype_name(t->dtype));
        ok = false;
    }
    if (!ok) return stand_in(w, dtype, rank, shape);
    w->used[i] = 1;
    hfx_value *v = t->blocks ? hfx_const_blocks(w->g, t->name, t->mapping, t->data, t->blocks, t->rank, t->shape, dtype)
                             : hfx_const_mapped(w->g, t->name, t->mapping, t->data, t->dtype, t->rank, t->shape, dtype);
    return t->rotary_heads ? hfx_const_rotary_rows(w->g, v, t->rotary_heads) : v; /* (a GGUF file's) */
}

/* The tensor `asked` names (renames applied), of that shape, a float as dtype. */
static hfx_value *weight_as(hfx_weights *w, hfx_dtype dtype, int rank, const int64_t *shape, const char *asked) {
    char buf[640];
    const char *name;
    long i;
    const hfx_tensor_info *t = lookup(w, asked, buf, sizeof buf, &name, &i);
    return weight_at(w, dtype, rank, shape, t, name, i);
}

hfx_value *hfx_weight(hfx_weights *w, int rank, const int64_t *shape, const char *fmt, ...) {
    char asked[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(asked, sizeof asked, fmt, ap);
    va_end(ap);
    return weight_as(w, w->dtype, rank, shape, asked);
}

hfx_value *hfx_linear_named(hfx_weights *w, hfx_value *x, int64_t in, int64_t out, bool bias, const char *fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    hfx_value *wt = hfx_weight(w, 2, (int64_t[]){out, in}, "%s.weight", name);
    hfx_value *y = hfx_linear(w->g, x, wt, bias ? hfx_weight(w, 1, &out, "%s.bias", name) : NULL);
    return hfx_weight_lora(w, x, y, in, out, name);
}

hfx_value *hfx_layer_norm_named(hfx_weights *w, hfx_value *x, int64_t n, double eps, const char *fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return hfx_layer_norm(w->g, x, hfx_weight(w, 1, &n, "%s.weight", name), hfx_weight(w, 1, &n, "%s.bias", name), eps);
}

/* The adapter's lora_A tensor for the linear `linear` (its index, -1: none) and its name's stem into stem: the
 * checkpoint's name of the linear, else (an adapter saved under another transformers' module paths) each alias's */
static long lora_tensor(const hfx_weights *w, const char *linear, char *stem, size_t size) {
    char asked[512], buf[640];
    snprintf(asked, sizeof asked, "%s.weight", linear);
    const char *names[9] = {renamed(w, asked, buf, sizeof buf)};
    char alt[8][640];
    int n = 1;
    for (const hfx_weight_rename *const *a = w->alias; a && *a && n < 9; a++)
        if ((names[n] = renamed_by(*a, asked, alt[n - 1], sizeof alt[n - 1]))) n++;
    for (int i = 0; i < n; i++) {
        char a[832];
        int k = (int)strlen(names[i]) - (int)strlen(".weight");
        snprintf(stem, size, "lora.base_model.model.%.*s", k, names[i]);
        snprintf(a, sizeof a, "%s.lora_A.weight", stem);
        long ia = hfx_checkpoint_index_of(w->ck, a);
        if (ia >= 0) return ia;
    }
    return -1;
}

hfx_value *hfx_weight_lora_update(hfx_weights *w, hfx_value *x, int64_t in, int64_t out, const char *linear) {
    double scale = hfx_checkpoint_lora_scale(w->ck);
    char stem[800], b[832];
    long ia = scale != 0 ? lora_tensor(w, linear, stem, sizeof stem) : -1;
    if (ia < 0) return NULL; /* not a targeted linear */
    const hfx_tensor_info *ta = hfx_checkpoint_tensor_at(w->ck, (size_t)ia);
    int64_t r = ta->rank == 2 ? ta->shape[0] : 0;
    if (r < 1) {
        hfx_graph_fail(w->g, HFX_ERR_INVALID, "%s: tensor '%s' must be [r, %lld]", ta->file, ta->name, (long long)in);
        return NULL;
    }
    snprintf(b, sizeof b, "%s.lora_B.weight", stem); /* (the adapter's own names: no renames) */
    long ib = hfx_checkpoint_index_of(w->ck, b);
    hfx_value *low = hfx_linear(w->g, x, weight_at(w, w->dtype, 2, (int64_t[]){r, in}, ta, ta->name, ia), NULL);
    hfx_value *up = hfx_linear(w->g, low, weight_at(w, w->dtype, 2, (int64_t[]){out, r},
                                                    ib >= 0 ? hfx_checkpoint_tensor_at(w->ck, (size_t)ib) : NULL, b, ib),
                               NULL);
    return hfx_op2(w->g, HFX_OP_MUL, up, hfx_const_scalar(w->g, up->dtype, scale));
}

hfx_value *hfx_weight_lora(hfx_weights *w, hfx_value *x, hfx_value *y, int64_t in, int64_t out, const char *linear) {
    hfx_value *update = hfx_weight_lora_update(w, x, in, out, linear);
    return update ? hfx_op2(w->g, HFX_OP_ADD, y, update) : y;
}

hfx_value *hfx_weight_lora_part(hfx_graph *g, hfx_value *y, hfx_value *update, int64_t start, int64_t len) {
    if (!update) return y;
    return hfx_op2(g, HFX_OP_ADD, y, hfx_slice(g, update, update->rank - 1, start, start + len));
}

hfx_value *hfx_weight_f32(hfx_weights *w, int rank, const int64_t *shape, const char *name) {
    return weight_as(w, HFX_DTYPE_F32, rank, shape, name);
}

/* The tensor `asked` names, of that shape, as I64 values read now (each its own check and message). */
static const hfx_tensor_info *integers(hfx_weights *w, int rank, const int64_t *shape, const char *asked, char *buf,
                                       size_t size, const char **name, long *i) {
    const hfx_tensor_info *t = lookup(w, asked, buf, size, name, i);
    if (!shaped(w, t, *name, rank, shape)) return NULL;
    if (t->dtype != HFX_DTYPE_I64) {
        hfx_graph_fail(w->g, HFX_ERR_INVALID, "%s: tensor '%s' has dtype %s, not I64", t->file, *name,
                       hfx_dtype_name(t->dtype));
        return NULL;
    }
    if (t->mapping && !hfx_mapping_intact(t->mapping)) {
        hfx_graph_fail(w->g, HFX_ERR_IO, "%s: changed size while being read", t->file);
        return NULL;
    }
    return t;
}

hfx_value *hfx_weight_indices(hfx_weights *w, int64_t bound, int rank, const int64_t *shape, const char *asked) {
    char buf[640];
    const char *name;
    long i;
    const hfx_tensor_info *t = integers(w, rank, shape, asked, buf, sizeof buf, &name, &i);
    bool ok = t != NULL;
    for (uint64_t k = 0; ok && k < t->nbytes / 8; k++) {
        int64_t v;
        memcpy(&v, t->data + k * 8, 8);
        if (v < 0 || v >= bound) {
            hfx_graph_fail(w->g, HFX_ERR_INVALID, "%s: tensor '%s' element %llu is %lld, not an index in [0, %lld)",
                           t->file, name, (unsigned long long)k, (long long)v, (long long)bound);
            ok = false;
        }
    }
    if (!ok) return stand_in(w, HFX_DTYPE_I64, rank, shape);
    w->used[i] = 1;
    return hfx_const_mapped(w->g, t->name, t->mapping, t->data, t->dtype, t->rank, t->shape, HFX_DTYPE_I64);
}

bool hfx_weight_i64_values(hfx_weights *w, const char *asked, int64_t n, int64_t *values) {
    char buf[640];
    const char *name;
    long i;
    if (!hfx_weight_exists(w, asked)) return true;
    const hfx_tensor_info *t = integers(w, 1, &n, asked, buf, sizeof buf, &name, &i);
    for (int64_t k = 0; t && k < n; k++) memcpy(&values[k], t->data + k * 8, 8);
    if (t) w->used[i] = 1;
    return t != NULL;
}

bool hfx_weight_float_values(hfx_weights *w, int64_t n, float *values, const char *asked) {
    char buf[640];
    const char *name;
    long i;
    const hfx_tensor_info *t = lookup(w, asked, buf, sizeof buf, &name, &i);
    if (!shaped(w, t, name, 1, &n)) return false;
    if (t->dtype != HFX_DTYPE_F32 && t->dtype != HFX_DTYPE_F16 && t->dtype != HFX_DTYPE_BF16) {
        hfx_graph_fail(w->g, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; weights must be F32, F16 or BF16",
                       t->file, name, hfx_dtype_name(t->dtype));
        return false;
    }
    if (t->mapping && !hfx_mapping_intact(t->mapping)) { /* a file truncated since it was opened */
        hfx_graph_fail(w->g, HFX_ERR_IO, "%s: changed size while being read", t->file);
        return false;
    }
    if (t->blocks)
        hfx_blocks_decode(t->blocks, t->data, 0, (uint64_t)n, values);
    else
        for (int64_t k = 0; k < n; k++)
            values[k] = hfx_float_load(t->dtype, t->data + (size_t)k * hfx_dtype_size(t->dtype));
    w->used[i] = 1;
    return true;
}

bool hfx_weight_exists(const hfx_weights *w, const char *name) {
    char buf[640];
    return hfx_checkpoint_index_of(w->ck, renamed(w, name, buf, sizeof buf)) >= 0;
}

int hfx_weight_rank(const hfx_weights *w, const char *name) {
    char buf[640];
    long i = hfx_checkpoint_index_of(w->ck, renamed(w, name, buf, sizeof buf));
    return i >= 0 ? hfx_checkpoint_tensor_at(w->ck, (size_t)i)->rank : -1;
}

int64_t hfx_weight_dim(const hfx_weights *w, const char *name, int axis) {
    char buf[640];
    long i = hfx_checkpoint_index_of(w->ck, renamed(w, name, buf, sizeof buf));
    if (i < 0) return -1;
    const hfx_tensor_info *t = hfx_checkpoint_tensor_at(w->ck, (size_t)i);
    return axis >= 0 && axis < t->rank ? t->shape[axis] : -1;
}

void hfx_weight_ignore(hfx_weights *w, const char *name) {
    char buf[640];
    long i = hfx_checkpoint_index_of(w->ck, renamed(w, name, buf, sizeof buf));
    if (i >= 0) w->used[i] = 1;
}

void hfx_weights_ignore_stack(hfx_weights *w, const char *stack) {
    size_t n = strlen(stack);
    for (size_t t = 0; t < hfx_checkpoint_tensor_count(w->ck); t++) {
        const char *name = hfx_checkpoint_tensor_at(w->ck, t)->name;
        if (strncmp(name, stack, n) == 0 && (name[n] == '.' || name[n] == 0)) w->used[t] = 1;
    }
}

void hfx_weights_ignore_layers_from(hfx_weights *w, const char *layer_fmt, long long first) {
    const char *hole = strstr(layer_fmt, "%lld");
    if (!hole) return;
    size_t head = (size_t)(hole - layer_fmt);
    const char *tail = hole + 4;
    size_t tail_len = strlen(tail);
    for (size_t t = 0; t < hfx_checkpoint_tensor_count(w->ck); t++) {
        const char *name = hfx_checkpoint_tensor_at(w->ck, t)->name, *p = name + head;
        if (strncmp(name, layer_fmt, head) != 0 || *p < '0' || *p > '9') continue;
        long long k = 0;
        for (; *p >= '0' && *p <= '9' && k < first; p++) k = k * 10 + (*p - '0');
        while (*p >= '0' && *p <= '9') p++; /* a longer number is past `first` too */
        if (k >= first && strncmp(p, tail, tail_len) == 0 && p[tail_len] == '.') w->used[t] = 1;
    }
}

void hfx_weights_ignore_rest(hfx_weights *w) {
    memset(w->used, 1, hfx_checkpoint_tensor_count(w->ck));
}

/* Buffers older checkpoints saved that no computation reads: rotary tables, the causal-mask
 * buffers of GPT-2 / GPT-NeoX attention (the graph builds its own mask) and BERT's position and
 * token type id buffers (the graph's inputs and arange). */
static bool known_unused(const char *name) {
    if (strchr(name, '/')) return true; /* a sentence-transformers module's (hfx_checkpoint_add_module): read where the
                                           export pools through it */
    static const char *const suffixes[] = {"rotary_emb.inv_freq", ".attn.bias", ".attn.masked_bias",
                                           ".attention.bias", ".attention.masked_bias",
                                           "embeddings.position_ids", "embeddings.token_type_ids"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t k = strlen(suffixes[i]);
        if (n >= k && strcmp(name + n - k, suffixes[i]) == 0) return true;
    }
    return false;
}

hfx_status hfx_weights_finish(hfx_weights *w, hfx_error *err) {
    char list[1024] = "";
    size_t k = 0, leftovers = 0;
    for (size_t i = 0; i < hfx_checkpoint_tensor_count(w->ck); i++) {
        const hfx_tensor_info *t = hfx_checkpoint_tensor_at(w->ck, i);
        if (w->used[i] || known_unused(t->name)) continue;
        if (leftovers++ < 5 && k < sizeof list)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", leftovers > 1 ? ", " : "",
                                  t->name);
    }
    if (!leftovers) return HFX_OK;
    return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                    "%s: %zu tensor(s) that %s does not use: %s%s — hfx refuses to drop weights "
                    "silently (is config.json right for this checkpoint?)",
                    hfx_checkpoint_dir(w->ck), leftovers, w->architecture, list,
                    leftovers > 5 ? ", ..." : "");
}
