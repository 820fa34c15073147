/* The Python system's call of a generation program (pt2.h: hfx_pt2_seed_call), as
 * transformers.exporters' DynamoExporter records it with transformers 5.24: forward(**kwargs)
 * with the graph's inputs as keywords in the order of the model's forward; a static-cache mask of a model
 * with layer_types as a dict per layer type (None where the graph takes none, a prefill); the
 * cache a transformers.cache_utils StaticCache or DynamicCache, flattened the way
 * exporter_dynamo.register_pytree_node flattens any object: its leaves the tensors found in its
 * layers' __dict__, its context a JSON image of the object with each tensor as its leaf index.
 * The result is a ModelOutput holding the first output (logits, or a language model's last_hidden_state) and the
 * cache, or a module's one tensor (lm_head); keywords the caller passes as None (a multimodal model's call of its
 * language model: input_ids=None) are constant inputs of the program.
 *
 * The sample inputs pickle the same objects with the same __dict__, so the template the seed's
 * documented decode loop copies from `example_inputs` flattens to exactly this input spec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "fmt/dynamo/pt2.h"

#define CACHE_MODULE "transformers.cache_utils"

/* What one __dict__ entry of a cache layer holds. */
typedef enum attr_value {
    V_NONE, V_FALSE, V_TRUE,
    V_KEYS, V_VALUES, V_COUNTER, V_CONV, V_SSM, /* tensors: the cache's leaves, in this order */
    V_MAX_LEN, V_CPU, V_BATCH, V_HEADS, V_VALUE_DIM, V_KEY_DIM, V_ONE, V_DTYPE, V_KERNEL,
    /* a linear attention layer's dicts per state index (one state: {0: ...}) */
    V_ITEMS_NONE, V_ITEMS_FALSE, V_ITEMS_TRUE, V_ITEMS_CONV, V_ITEMS_SSM, V_ITEMS_HAS_SSM, V_ITEMS_KERNEL
} attr_value;

typedef struct attr {
    const char *name;
    attr_value value;
} attr;

/* The layer classes' __dict__ in transformers' insertion order, in pieces a class joins: before its first update (the
 * prefill's input) and after (every other cache). A hybrid layer (LinearAttentionAnd*AttentionLayer) runs its
 * attention half's __init__ first, then the linear half's, whose `device` entry its attention half later sets. */
static const attr dynamic_empty[] = {{"keys", V_NONE}, {"values", V_NONE}, {"is_initialized", V_FALSE}};
static const attr dynamic_filled[] = {{"keys", V_KEYS}, {"values", V_VALUES}, {"is_initialized", V_TRUE}};
static const attr static_empty[] = {{"keys", V_NONE}, {"values", V_NONE}, {"is_initialized", V_FALSE},
                                    {"max_cache_len", V_MAX_LEN}, {"cumulative_length", V_COUNTER}};
static const attr static_filled[] = {{"keys", V_KEYS}, {"values", V_VALUES}, {"is_initialized", V_TRUE},
                                     {"max_cache_len", V_MAX_LEN}, {"cumulative_length", V_COUNTER}};
static const attr device[] = {{"device", V_CPU}};
static const attr dummy[] = {{"is_initialized", V_TRUE}, {"keys", V_NONE}, {"values", V_NONE}};
static const attr static_sizes[] = {{"batch_size", V_BATCH}, {"num_heads", V_HEADS}, {"v_head_dim", V_VALUE_DIM},
                                    {"k_head_dim", V_KEY_DIM}};
static const attr linear_empty[] = {{"number_of_states", V_ONE}, {"conv_states", V_ITEMS_NONE},
                                    {"recurrent_states", V_ITEMS_NONE}, {"is_conv_states_initialized", V_ITEMS_FALSE},
                                    {"is_recurrent_states_initialized", V_ITEMS_FALSE},
                                    {"has_previous_state", V_ITEMS_FALSE}, {"conv_kernel_size", V_ITEMS_NONE},
                                    {"device", V_NONE}, {"dtype", V_NONE}, {"record_past", V_FALSE}};
static const attr linear_filled[] = {{"number_of_states", V_ONE}, {"conv_states", V_ITEMS_CONV},
                                     {"recurrent_states", V_ITEMS_SSM}, {"is_conv_states_initialized", V_ITEMS_TRUE},
                                     {"is_recurrent_states_initialized", V_ITEMS_HAS_SSM},
                                     {"has_previous_state", V_ITEMS_TRUE}, {"conv_kernel_size", V_ITEMS_KERNEL},
                                     {"device", V_CPU}, {"dtype", V_DTYPE}, {"record_past", V_FALSE}};

typedef struct attrs {
    const attr *a;
    int n;
} attrs;

typedef struct layer_class {
    const char *layer;  /* the class */
    attrs parts[3];     /* its __dict__, piece by piece */
} layer_class;

/* What a layer caches: attention's keys and values, a linear attention's states (a convolution's, and a recurrent
 * one or none), both, or nothing (an MLP or MoE layer's, or one reading another's keys: transformers' DummyLayer). */
enum { KIND_ATTENTION, KIND_LINEAR, KIND_BOTH, KIND_NONE, N_KINDS };

#define N(a) (int)(sizeof a / sizeof a[0])
#define A(a) {a, N(a)}
static const layer_class classes[N_KINDS][2][2] = { /* [kind][static][filled] */
    [KIND_ATTENTION] = {{{"DynamicLayer", {A(dynamic_empty)}}, {"DynamicLayer", {A(dynamic_filled), A(device)}}},
                        {{"StaticLayer", {A(static_empty)}},
                         {"StaticLayer", {A(static_filled), A(device), A(static_sizes)}}}},
    [KIND_LINEAR] = {{{"LinearAttentionLayer", {A(linear_empty)}}, {"LinearAttentionLayer", {A(linear_filled)}}},
                     {{"LinearAttentionLayer", {A(linear_empty)}}, {"LinearAttentionLayer", {A(linear_filled)}}}},
    [KIND_BOTH] = {{{"LinearAttentionAndFullAttentionLayer", {A(dynamic_empty), A(linear_empty)}},
                    {"LinearAttentionAndFullAttentionLayer", {A(dynamic_filled), A(linear_filled)}}},
                   {{"LinearAttentionAndStaticFullAttentionLayer", {A(static_empty), A(linear_empty)}},
                    {"LinearAttentionAndStaticFullAttentionLayer",
                     {A(static_filled), A(linear_filled), A(static_sizes)}}}},
    [KIND_NONE] = {{{"DummyLayer", {A(dummy)}}, {"DummyLayer", {A(dummy)}}},
                   {{"DummyLayer", {A(dummy)}}, {"DummyLayer", {A(dummy)}}}}};
#undef A

/* Layer l's kind, or -1 where transformers' cache layer for it is not written here (a recurrent state without a
 * convolution, an n-gram layer's states, more than one state of a kind). */
static int layer_kind(const hfx_layer_cache *l) {
    if (!l->n_states) return l->kv_heads ? KIND_ATTENTION : KIND_NONE;
    bool conv = false, ssm = false;
    for (int s = 0; s < l->n_states; s++) {
        bool is_conv = !strcmp(l->states[s].name, "conv"), is_ssm = !strcmp(l->states[s].name, "ssm");
        if ((!is_conv && !is_ssm) || (is_conv && conv) || (is_ssm && ssm)) return -1;
        conv |= is_conv, ssm |= is_ssm;
    }
    if (!conv) return -1;
    return l->kv_heads ? KIND_BOTH : KIND_LINEAR;
}

static const char *const cache_class[2] = {"DynamicCache", "StaticCache"}; /* [static] */

/* A cache object being described (its context) and, for an input, pickled. */
typedef struct walk {
    const hfx_graph *g;
    hfx_aten_program *p;       /* with pk: the program whose values the leaves are */
    const hfx_seed_call *sc;
    hfx_pickle *pk;            /* the object's pickle (an input), or NULL (a result) */
    bool input;                /* the leaves are graph inputs (else outputs) */
    const hfx_value *const *ir; /* per leaf: the graph input or output it is */
    const int *leaves;         /* per leaf: its program value (inputs) */
    int n_leaves, next;
    int64_t batch;
    const char *prefix;        /* the cache's state names: "cache." or an EncoderDecoderCache half's */
    int64_t max_len;           /* a StaticLayer's max_cache_len: the slots, or (cross-attention) the encoder's length */
    const hfx_value *conv;     /* the layer's convolution state, once walked (its dtype and kernel) */
    hfx_status st;
    hfx_error *err;
} walk;

static json_t *tagged(const char *tag, const char *key, json_t *v) {
    json_t *o = json_object();
    json_object_set_new(o, "_t", json_string(tag));
    json_object_set_new(o, key, v);
    return o;
}

static const char *const part_name[] = {[V_KEYS] = "keys", [V_VALUES] = "values", [V_COUNTER] = "cumulative_length",
                                        [V_CONV] = "conv_states.0", [V_SSM] = "recurrent_states.0"};

/* The next leaf, which must be the graph's state <prefix>layers.<layer>.<part>. */
static json_t *leaf(walk *w, int layer, attr_value part) {
    int k = w->next++;
    char want[128];
    snprintf(want, sizeof want, "%slayers.%d.%s", w->prefix, layer, part_name[part]);
    const hfx_state *s = k < w->n_leaves ? hfx_graph_state_of(w->g, w->ir[k], w->input) : NULL;
    if (!s || strcmp(s->name, want) != 0) {
        if (!w->st)
            w->st = hfx_fail(w->err, HFX_ERR_INTERNAL, "io seed: leaf %d of the cache is %s, transformers' %s expects %s", k,
                             s ? s->name : "missing", cache_class[w->sc->is_static], want);
        return json_null();
    }
    if (part == V_CONV) w->conv = w->ir[k];
    if (w->pk) {
        int64_t sizes[HFX_MAX_RANK];
        const hfx_aten_value *v = &w->p->values[w->leaves[k]];
        hfx_aten_hinted_sizes(w->p, v, sizes);
        hfx_pickle_tensor(w->pk, v->dtype, v->rank, sizes);
    }
    return tagged("tensor", "i", json_integer(k));
}

static bool has_ssm(const hfx_layer_cache *l) {
    for (int s = 0; s < l->n_states; s++)
        if (!strcmp(l->states[s].name, "ssm")) return true;
    return false;
}

/* A linear attention layer's dict entry {0: x}: what x is. */
static attr_value item(const hfx_layer_cache *l, attr_value v) {
    switch (v) {
    case V_ITEMS_FALSE: return V_FALSE;
    case V_ITEMS_TRUE: return V_TRUE;
    case V_ITEMS_CONV: return V_CONV;
    case V_ITEMS_SSM: return has_ssm(l) ? V_SSM : V_NONE;
    case V_ITEMS_HAS_SSM: return has_ssm(l) ? V_TRUE : V_FALSE;
    case V_ITEMS_KERNEL: return V_KERNEL;
    default: return V_NONE;
    }
}

/* Entry `v` of layer i's __dict__: its context, and its pickle. */
static json_t *entry(walk *w, int i, attr_value v) {
    const hfx_layer_cache *l = &w->sc->layers[i];
    hfx_pickle *pk = w->pk;
    if (v >= V_ITEMS_NONE) { /* a dict {0: ...} */
        if (pk) hfx_pickle_op(pk, HFX_PK_EMPTY_DICT HFX_PK_MARK), hfx_pickle_int(pk, 0);
        json_t *pair = json_pack("[io]", 0, entry(w, i, item(l, v)));
        if (pk) hfx_pickle_op(pk, HFX_PK_SETITEMS);
        return tagged("items", "v", json_pack("[o]", pair));
    }
    if (v == V_NONE || v == V_FALSE || v == V_TRUE) {
        if (pk) hfx_pickle_op(pk, v == V_NONE ? HFX_PK_NONE : v == V_TRUE ? HFX_PK_TRUE : HFX_PK_FALSE);
        return v == V_NONE ? json_null() : json_boolean(v == V_TRUE);
    }
    if (v <= V_SSM) return leaf(w, i, v);
    if (v == V_CPU) {
        if (pk) hfx_pickle_cpu(pk);
        return tagged("device", "s", json_string("cpu"));
    }
    if (v == V_DTYPE) { /* the convolution state's, as transformers takes it */
        hfx_dtype dt = w->conv ? w->conv->dtype : HFX_DTYPE_F32;
        const char *name = dt == HFX_DTYPE_F16 ? "float16" : dt == HFX_DTYPE_BF16 ? "bfloat16" : "float32";
        if (pk) hfx_pickle_global(pk, "torch", name);
        return tagged("dtype", "n", json_string(name));
    }
    int64_t n = v == V_MAX_LEN ? w->max_len : v == V_BATCH ? w->batch : v == V_HEADS ? l->kv_heads
                : v == V_VALUE_DIM ? l->value_dim : v == V_KEY_DIM ? l->key_dim : v == V_ONE ? 1
                : w->conv && w->conv->rank > 0 ? w->conv->dims[w->conv->rank - 1].c : 0; /* V_KERNEL: its window */
    if (pk) hfx_pickle_int(pk, n);
    return json_integer(n);
}

/* Layer `i`'s object: its context, and its pickle (cls.__new__(cls), then its __dict__). */
static json_t *layer_object(walk *w, const layer_class *c, int i) {
    json_t *state = json_object();
    if (w->pk) {
        hfx_pickle_global(w->pk, CACHE_MODULE, c->layer);
        hfx_pickle_op(w->pk, HFX_PK_EMPTY_TUPLE HFX_PK_NEWOBJ HFX_PK_EMPTY_DICT HFX_PK_MARK);
    }
    w->conv = NULL;
    for (int part = 0; part < 3; part++)
        for (int a = 0; a < c->parts[part].n; a++) {
            if (w->pk) hfx_pickle_text(w->pk, c->parts[part].a[a].name);
            json_object_set_new(state, c->parts[part].a[a].name, entry(w, i, c->parts[part].a[a].value));
        }
    if (w->pk) hfx_pickle_op(w->pk, HFX_PK_SETITEMS HFX_PK_BUILD);
    char path[96];
    snprintf(path, sizeof path, CACHE_MODULE ":%s", c->layer);
    json_t *o = tagged("obj", "p", json_string(path));
    json_object_set_new(o, "s", state);
    return o;
}

/* An encoder-decoder's encoder length as its cross-attention cache holds it (a StaticCache's slots there, a Python int
 * in the call's spec): the length of its first cross-attention keys, or where that varies (*fixed false) the most
 * the graph takes (what a StaticCache holding any of them is sized to; a .pt2 refuses it: torch checks the spec at
 * each call). */
static int64_t encoder_length(const hfx_graph *g, bool *fixed) {
    *fixed = false;
    for (int i = 0; i < g->n_states; i++) {
        const hfx_state *s = &g->states[i];
        if (strcmp(s->name, "cache.cross_attention_cache.layers.0.keys") != 0 || !s->out || s->out->rank != 4) continue;
        hfx_dim d = s->out->dims[2];
        *fixed = hfx_dim_is_const(d);
        return *fixed ? d.c : d.n == 1 && d.sym[0] < g->n_symbols ? g->symbols[d.sym[0]].max : 0;
    }
    return 0;
}

/* One transformers Cache object (a DynamicCache or StaticCache over the layers, its states named w->prefix...): its
 * context, and its pickle. */
static json_t *cache_object(walk *w, bool filled) {
    const char *cache = cache_class[w->sc->is_static];
    char path[96];
    snprintf(path, sizeof path, CACHE_MODULE ":%s", cache);
    if (w->pk) {
        hfx_pickle_global(w->pk, CACHE_MODULE, cache);
        hfx_pickle_op(w->pk, HFX_PK_EMPTY_TUPLE HFX_PK_NEWOBJ HFX_PK_EMPTY_DICT HFX_PK_MARK);
        hfx_pickle_text(w->pk, "layers");
        hfx_pickle_op(w->pk, HFX_PK_EMPTY_LIST HFX_PK_MARK);
    }
    json_t *layers = json_array();
    for (int i = 0; i < w->sc->n_layers; i++) {
        int kind = layer_kind(&w->sc->layers[i]);
        if (kind < 0) kind = KIND_ATTENTION; /* (refused by check_covered before) */
        json_array_append_new(layers, layer_object(w, &classes[kind][w->sc->is_static][filled], i));
    }
    if (w->pk) {
        hfx_pickle_op(w->pk, HFX_PK_APPENDS);
        hfx_pickle_text(w->pk, "layer_class_to_replicate");
        hfx_pickle_op(w->pk, HFX_PK_NONE);
        hfx_pickle_text(w->pk, "offloading");
        hfx_pickle_op(w->pk, HFX_PK_FALSE HFX_PK_SETITEMS HFX_PK_BUILD);
    }
    json_t *state = json_object(), *ctx = tagged("obj", "p", json_string(path));
    json_object_set_new(state, "layers", layers);
    json_object_set_new(state, "layer_class_to_replicate", json_null());
    json_object_set_new(state, "offloading", json_false());
    json_object_set_new(ctx, "s", state);
    return ctx;
}

/* An encoder-decoder's EncoderDecoderCache: its self-attention cache, its cross-attention one (a StaticCache's slots
 * there are the encoder's length), and is_updated, {layer: whether its cross-attention cache is filled}. */
static json_t *encoder_decoder_object(walk *w, bool filled, int64_t source_length) {
    static const char *const halves[2] = {"self_attention_cache", "cross_attention_cache"};
    if (w->pk) {
        hfx_pickle_global(w->pk, CACHE_MODULE, "EncoderDecoderCache");
        hfx_pickle_op(w->pk, HFX_PK_EMPTY_TUPLE HFX_PK_NEWOBJ HFX_PK_EMPTY_DICT HFX_PK_MARK);
    }
    json_t *state = json_object(), *updated = json_array();
    for (int h = 0; h < 2; h++) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "cache.%s.", halves[h]);
        w->prefix = prefix;
        w->max_len = h ? source_length : w->sc->max_cache_len;
        if (w->pk) hfx_pickle_text(w->pk, halves[h]);
        json_object_set_new(state, halves[h], cache_object(w, filled));
    }
    w->prefix = NULL;
    if (w->pk) {
        hfx_pickle_text(w->pk, "is_updated");
        hfx_pickle_op(w->pk, HFX_PK_EMPTY_DICT HFX_PK_MARK);
    }
    for (int i = 0; i < w->sc->n_layers; i++) {
        if (w->pk) hfx_pickle_int(w->pk, i), hfx_pickle_bool(w->pk, filled);
        json_array_append_new(updated, json_pack("[ib]", i, filled));
    }
    if (w->pk) hfx_pickle_op(w->pk, HFX_PK_SETITEMS HFX_PK_SETITEMS HFX_PK_BUILD);
    json_object_set_new(state, "is_updated", tagged("items", "v", updated));
    json_t *ctx = tagged("obj", "p", json_string(CACHE_MODULE ":EncoderDecoderCache"));
    json_object_set_new(ctx, "s", state);
    return ctx;
}

/* The cache argument's treespec node: its class, its context as text, a leaf per tensor. */
static json_t *cache_node(walk *w, bool filled) {
    const char *cache = cache_class[w->sc->is_static];
    bool two = w->g->state_holder == HFX_HOLDER_ENCODER_DECODER;
    json_t *ctx;
    if (two) {
        bool fixed;
        ctx = encoder_decoder_object(w, filled, encoder_length(w->g, &fixed));
    } else {
        w->prefix = "cache.";
        w->max_len = w->sc->max_cache_len;
        ctx = cache_object(w, filled);
    }
    if (w->next != w->n_leaves && !w->st)
        w->st = hfx_fail(w->err, HFX_ERR_INTERNAL, "io seed: the graph has %d cache tensors, transformers' %s holds %d",
                         w->n_leaves, two ? "EncoderDecoderCache" : cache, w->next);
    char path[96];
    snprintf(path, sizeof path, CACHE_MODULE ":%s", two ? "EncoderDecoderCache" : cache);
    json_t *children = json_array();
    for (int k = 0; k < w->n_leaves; k++) json_array_append_new(children, hfx_pt2_leaf_spec());
    return hfx_pt2_spec_node(path, hfx_pt2_dumps(ctx), children);
}

enum { MAX_KWARGS = 8, MAX_ENTRIES = 8 };

static const hfx_keyword_constant none_constant = {.name = "", .kind = HFX_CONSTANT_NONE};

/* A constant argument of the program's call (None, False, an int): its sample, its graph input, and the keyword it is
 * (NULL: a structured keyword's entry, no spec of its own). */
static void call_constant(hfx_pt2_call *call, const hfx_keyword_constant *k, const char *keyword) {
    if (k->kind == HFX_CONSTANT_INT) hfx_pickle_int(&call->sample, k->value);
    else hfx_pickle_op(&call->sample, k->kind == HFX_CONSTANT_NONE ? HFX_PK_NONE : HFX_PK_FALSE);
    json_t *arg = k->kind == HFX_CONSTANT_NONE    ? json_pack("{s:b}", "as_none", 1)
                  : k->kind == HFX_CONSTANT_FALSE ? json_pack("{s:b}", "as_bool", 0)
                                                  : json_pack("{s:I}", "as_int", (json_int_t)k->value);
    json_array_append_new(call->graph_inputs, arg);
    json_array_append_new(call->constant_names, keyword ? json_string(keyword) : json_null());
}

typedef struct kwarg {
    char key[64];
    bool cache, dict;
    const hfx_keyword_constant *constant; /* a constant input of the program (None, False, an int), or NULL */
    int input;                         /* a tensor: its graph input (-1: none, a constant keyword) */
    int n;                             /* a dict: its entries */
    char sub[MAX_ENTRIES][48];
    int sub_input[MAX_ENTRIES];        /* -1: None */
} kwarg;

static kwarg *add_kwarg(kwarg *kw, int *n, const char *key) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(kw[i].key, key)) return &kw[i];
    if (*n == MAX_KWARGS) return NULL;
    kwarg *k = &kw[(*n)++];
    memset(k, 0, sizeof *k);
    k->input = -1;
    snprintf(k->key, sizeof k->key, "%s", key);
    return k;
}

/* The seed's name of a graph input: `prefix` + `name` with '.' as '_' ("attention_mask_full_attention"). */
static const char *seed_name(hfx_aten_program *p, const char *prefix, const char *name) {
    char text[160];
    snprintf(text, sizeof text, "%s%s", prefix, name);
    for (char *c = text; *c; c++)
        if (*c == '.') *c = '_';
    char *s = hfx_arena_alloc(p->arena, strlen(text) + 1);
    if (!s) {
        p->oom = true;
        return "";
    }
    return strcpy(s, text);
}

/* Where the forward takes keyword k (unknown ones last, in the graph's order). */
static int rank(const hfx_seed_call *sc, const kwarg *k) { return hfx_seed_call_rank(sc, k->key, strlen(k->key)); }

/* The program's user inputs permuted into the keywords' flattened order (value_of[i]: graph input i's value). */
static hfx_status reorder_user_inputs(hfx_aten_program *p, const kwarg *kw, int n_kw, const int *leaves, int n_leaves,
                                      const int *value_of, hfx_error *err) {
    int n = 0, k = 0, *order = malloc(sizeof(int) * (size_t)(p->n_inputs + 1));
    hfx_aten_input *users = malloc(sizeof *users * (size_t)(p->n_inputs + 1));
    hfx_status st = order && users ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n_kw; i++) {
        if (kw[i].cache)
            for (int l = 0; l < n_leaves; l++) order[n++] = value_of[leaves[l]];
        else if (kw[i].dict)
            for (int e = 0; e < kw[i].n; e++) {
                if (kw[i].sub_input[e] >= 0) order[n++] = value_of[kw[i].sub_input[e]];
            }
        else if (!kw[i].constant)
            order[n++] = value_of[kw[i].input];
    }
    for (int i = 0; !st && i < p->n_inputs; i++)
        if (p->inputs[i].kind == HFX_INPUT_USER) users[k++] = p->inputs[i];
    if (!st && k != n) st = hfx_fail(err, HFX_ERR_INTERNAL, "io seed: %d user inputs, %d in the call", k, n);
    for (int i = 0, t = 0; !st && i < p->n_inputs; i++) {
        if (p->inputs[i].kind != HFX_INPUT_USER) continue;
        for (int u = 0; u < k; u++)
            if (users[u].value == order[t]) p->inputs[i] = users[u];
        t++;
    }
    free(order), free(users);
    return st;
}

/* The layers and components whose transformers cache objects hfx does not write: refused. */
static hfx_status check_covered(const hfx_seed_call *sc, const hfx_graph *g, hfx_error *err) {
    if (hfx_seed_call_slides(sc))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "io \"seed\" for torch.export does not cover sliding-window layers: transformers' "
                        "DynamicSlidingWindowLayer and StaticSlidingWindowLayer keep their token count as a Python "
                        "int that the program's input spec pins, so its decode accepts only the sample's length; "
                        "export with io \"optimum\"");
    bool attends = false, states = false;
    for (int i = 0; i < sc->n_layers; i++) attends |= sc->layers[i].kv_heads > 0, states |= sc->layers[i].n_states > 0;
    for (int i = 0; i < sc->n_layers; i++) {
        if (sc->is_static && attends && states)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                            "io \"seed\" for torch.export with a static cache does not cover recurrent layers beside "
                            "attention yet (the seed's mask is then a dict per layer_types entry, the recurrent ones' "
                            "too, keyed in the order a Python set iterates); export a growing cache, or io "
                            "\"optimum\"");
        if (layer_kind(&sc->layers[i]) < 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                            "io \"seed\" for torch.export covers recurrent layers with one convolution state and at "
                            "most one recurrent state (transformers' LinearAttentionLayer); layer %d keeps others; "
                            "export with io \"optimum\" (ONNX and OpenVINO take io \"seed\")", i);
    }
    /* an encoder's call (final states, no cache) is the keyword call of a plain forward, not this one */
    if (g->n_outputs > 0 && strcmp(g->outputs[0]->name, "last_hidden_state") == 0 && !g->n_states)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "io seed: a component without a cache has no cache call");
    return HFX_OK;
}

/* What a program's call cannot hold where the descriptive specs can: a static cross-attention cache over sources of
 * varying length (its spec pins one, and torch checks the spec at each call). */
static hfx_status check_callable(const hfx_seed_call *sc, const hfx_graph *g, hfx_error *err) {
    bool fixed = true;
    if (sc->is_static && g->state_holder == HFX_HOLDER_ENCODER_DECODER) encoder_length(g, &fixed);
    if (!fixed)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "io \"seed\" for torch.export with a static cache of an encoder-decoder: transformers' "
                        "cross-attention StaticCache keeps the encoder's length as a Python int that the program's "
                        "input spec pins, so the sources' length must be fixed; export with static shapes (no "
                        "--dynamic: the sample's length), or a growing cache");
    return HFX_OK;
}

/* The call as planned from the graph: its keywords, and the cache's tensors as its leaves. */
typedef struct call_plan {
    kwarg kw[MAX_KWARGS];
    int n_kw;
    int *leaves;                 /* [graph inputs]: the cache leaves' graph inputs (indices), in order */
    int n_leaves;
    const hfx_value **ir_in;     /* [graph inputs]: the cache leaves' graph inputs */
    const hfx_value **ir_out;    /* [graph outputs]: the outputs after the logits (the cache after the call) */
    int *value_of;               /* [graph inputs]: each one's program value (a program's call only) */
    int64_t batch;               /* the sample's batch */
} call_plan;

/* Graph input i as a keyword: a cache leaf, an entry of a dict ("attention_mask.full_attention"), or a tensor of its
 * own (a program's values renamed as the seed's program names them). */
static hfx_status plan_input(const hfx_graph *g, hfx_aten_program *p, call_plan *c, int i, hfx_error *err) {
    const hfx_value *v = g->inputs[i];
    const char *dot = strchr(v->name, '.');
    kwarg *k;
    if (hfx_graph_state_of(g, v, true)) {
        k = add_kwarg(c->kw, &c->n_kw, "cache");
        if (k) k->cache = true;
        char leaf_name[24];
        snprintf(leaf_name, sizeof leaf_name, "%d", c->n_leaves);
        if (p) p->values[c->value_of[i]].name = seed_name(p, "cache_", leaf_name);
        c->ir_in[c->n_leaves] = v;
        c->leaves[c->n_leaves++] = i;
    } else if (dot) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(dot - v->name), v->name);
        k = add_kwarg(c->kw, &c->n_kw, key);
        if (k && k->n < MAX_ENTRIES) {
            k->dict = true;
            snprintf(k->sub[k->n], sizeof k->sub[k->n], "%s", dot + 1);
            k->sub_input[k->n++] = i;
            if (p) p->values[c->value_of[i]].name = seed_name(p, "", v->name);
        } else {
            k = NULL;
        }
    } else {
        k = add_kwarg(c->kw, &c->n_kw, v->name);
        if (k) k->input = i;
    }
    return k ? HFX_OK : hfx_fail(err, HFX_ERR_INTERNAL, "io seed: too many inputs for the call's keywords");
}

/* The keywords, in the forward's order (GPT-2 takes the cache second), with a program's user inputs permuted into the
 * order the call flattens. */
static hfx_status plan_keywords(const hfx_graph *g, hfx_aten_program *p, const hfx_seed_call *sc, call_plan *c,
                                hfx_error *err) {
    hfx_status st = HFX_OK;
    for (int i = 0; i < g->n_inputs && !st; i++) st = plan_input(g, p, c, i, err);
    /* a growing cache's prefill takes an empty one: a keyword without leaves (a module's call takes none) */
    if (!st && !sc->bare && !add_kwarg(c->kw, &c->n_kw, "cache"))
        st = hfx_fail(err, HFX_ERR_INTERNAL, "io seed: too many inputs");
    /* the keywords passed as constants */
    for (const hfx_keyword_constant *a = sc->constants; !st && a && a->name; a++) {
        kwarg *k = add_kwarg(c->kw, &c->n_kw, a->name);
        if (!k) st = hfx_fail(err, HFX_ERR_INTERNAL, "io seed: too many inputs");
        else if (!k->cache && !k->dict && k->input < 0) k->constant = a;
    }
    for (const char *const *a = sc->step_nones; !st && a && *a; a++) { /* ... and as None at a step */
        kwarg *k = add_kwarg(c->kw, &c->n_kw, *a);
        if (!k) st = hfx_fail(err, HFX_ERR_INTERNAL, "io seed: too many inputs");
        else if (!k->cache && !k->dict && k->input < 0) k->constant = &none_constant;
    }
    for (int i = 0; i < c->n_kw; i++) c->kw[i].cache |= !strcmp(c->kw[i].key, "cache");
    /* a static cache's prefill of a layer_types model: the seed passes the mask dict, all None */
    bool has_mask = false;
    for (int i = 0; i < c->n_kw; i++) has_mask |= !strcmp(c->kw[i].key, "attention_mask");
    kwarg *mask = !st && sc->is_static && !has_mask && sc->n_layers && sc->layers[0].layer_type
                      ? add_kwarg(c->kw, &c->n_kw, "attention_mask") : NULL;
    for (int i = 0; mask && i < sc->n_layers && mask->n < MAX_ENTRIES; i++) {
        if (!sc->layers[i].layer_type) continue; /* (a recurrent layer's) */
        bool seen = false;
        for (int e = 0; e < mask->n; e++) seen |= !strcmp(mask->sub[e], sc->layers[i].layer_type);
        if (seen) continue;
        mask->dict = true;
        snprintf(mask->sub[mask->n], sizeof mask->sub[0], "%s", sc->layers[i].layer_type);
        mask->sub_input[mask->n++] = -1;
    }
    for (int i = 1; i < c->n_kw; i++)
        for (int j = i; j > 0 && rank(sc, &c->kw[j]) < rank(sc, &c->kw[j - 1]); j--) {
            kwarg t = c->kw[j];
            c->kw[j] = c->kw[j - 1];
            c->kw[j - 1] = t;
        }
    return st || !p ? st : reorder_user_inputs(p, c->kw, c->n_kw, c->leaves, c->n_leaves, c->value_of, err);
}

static bool lone_symbol(hfx_dim d) { return d.n == 1 && d.c == 0 && d.coef[0] == 1; }

/* The sample's sizes: batch 1 (a StaticCache's batch_size is part of its spec) or the least the batch takes, and (a
 * program's hints) the cache at its configured length. */
static void plan_sample_sizes(const hfx_graph *g, hfx_aten_program *p, const hfx_seed_call *sc, call_plan *c) {
    c->batch = 1;
    const kwarg *first = NULL; /* the first tensor keyword */
    for (int i = 0; i < c->n_kw && !first; i++)
        if (!c->kw[i].cache && !c->kw[i].dict && !c->kw[i].constant) first = &c->kw[i];
    if (first) {
        const hfx_value *ids = g->inputs[first->input];
        /* (M-RoPE's positions [rows, batch, sequence]: the batch second) */
        int axis = !strcmp(first->key, "position_ids") && ids->rank == 3 ? 1 : 0;
        if (ids->rank > axis && lone_symbol(ids->dims[axis])) {
            int64_t least = g->symbols[ids->dims[axis].sym[0]].min;
            c->batch = least > 1 ? least : 1;
            if (p) p->hints[ids->dims[axis].sym[0]] = c->batch;
        } else if (ids->rank > axis && hfx_dim_is_const(ids->dims[axis])) {
            c->batch = ids->dims[axis].c;
        }
    }
    for (int k = 0; p && k < c->n_leaves && sc->is_static; k++) {
        const hfx_aten_value *v = &p->values[c->value_of[c->leaves[k]]];
        if (v->rank == 4 && lone_symbol(v->dims[2])) p->hints[v->dims[2].sym[0]] = sc->max_cache_len;
    }
}

/* One tensor of the call (graph input i): its sample, and its graph input. */
static void call_tensor(hfx_aten_program *p, const call_plan *c, hfx_pt2_call *call, int i) {
    int64_t sizes[HFX_MAX_RANK];
    const hfx_aten_value *v = &p->values[c->value_of[i]];
    hfx_aten_hinted_sizes(p, v, sizes);
    hfx_pickle_tensor(&call->sample, v->dtype, v->rank, sizes);
    json_array_append_new(call->graph_inputs, hfx_pt2_tensor_arg(p, c->value_of[i]));
}

/* Whether a structured keyword's entries are a list's: "0", "1", ... in order (DeepStack's features), not a dict's. */
bool hfx_pt2_entries_are_list(const char *const *keys, int n) {
    for (int e = 0; e < n; e++) {
        char index[16];
        snprintf(index, sizeof index, "%d", e);
        if (strcmp(keys[e], index) != 0) return false;
    }
    return n > 0;
}

/* A structured keyword (the mask per layer type, a dict; DeepStack's features, a list; encoder_outputs, a
 * ModelOutput): its spec node; with a program's call, its entries' samples and inputs. */
static json_t *call_dict(hfx_aten_program *p, const hfx_seed_call *sc, const call_plan *c, hfx_pt2_call *call,
                         const kwarg *k) {
    json_t *sub = json_array(), *dict_children = json_array();
    const char *keys[MAX_ENTRIES];
    for (int e = 0; e < k->n; e++) keys[e] = k->sub[e];
    const char *output_class = !strcmp(k->key, "encoder_outputs") ? sc->encoder_outputs : NULL;
    bool list = !output_class && hfx_pt2_entries_are_list(keys, k->n);
    char cls[160] = "";
    if (output_class) hfx_pt2_output_type(output_class, cls, sizeof cls);
    if (call && output_class) { /* cls(), then its entries set as a dict's (ModelOutput.__setitem__ sets both) */
        char module[160];
        snprintf(module, sizeof module, "%.*s", (int)(strrchr(cls, '.') - cls), cls);
        hfx_pickle_global(&call->sample, module, output_class);
        hfx_pickle_op(&call->sample, HFX_PK_EMPTY_TUPLE HFX_PK_REDUCE HFX_PK_MARK);
    } else if (call) {
        hfx_pickle_op(&call->sample, list ? HFX_PK_EMPTY_LIST HFX_PK_MARK : HFX_PK_EMPTY_DICT HFX_PK_MARK);
    }
    for (int e = 0; e < k->n; e++) {
        json_array_append_new(sub, json_string(k->sub[e]));
        json_array_append_new(dict_children, hfx_pt2_leaf_spec());
        if (!call) continue;
        if (!list) hfx_pickle_text(&call->sample, k->sub[e]);
        if (k->sub_input[e] < 0) call_constant(call, &none_constant, NULL);
        else call_tensor(p, c, call, k->sub_input[e]);
    }
    if (call) hfx_pickle_op(&call->sample, list ? HFX_PK_APPENDS : HFX_PK_SETITEMS);
    if (list) {
        json_decref(sub);
        return hfx_pt2_spec_node("builtins.list", NULL, dict_children);
    }
    return hfx_pt2_spec_node(output_class ? cls : "builtins.dict", hfx_pt2_dumps(sub), dict_children);
}

/* The spec of ((), {kwargs}) into *in_spec, and with a program's call (not NULL) its sample and graph inputs. */
static hfx_status write_call_inputs(const hfx_graph *g, hfx_aten_program *p, const hfx_seed_call *sc, call_plan *c,
                                    hfx_pt2_call *call, json_t **in_spec, hfx_error *err) {
    if (call) {
        hfx_pickle_begin(&call->sample);
        hfx_pickle_op(&call->sample, HFX_PK_EMPTY_TUPLE HFX_PK_EMPTY_DICT HFX_PK_MARK);
        call->graph_inputs = json_array();
        call->arg_names = json_array();
        call->constant_names = json_array();
    }
    json_t *keys = json_array(), *children = json_array();
    walk w = {.g = g, .p = p, .sc = sc, .pk = call ? &call->sample : NULL, .input = true, .ir = c->ir_in,
              .leaves = c->leaves, .n_leaves = c->n_leaves, .batch = c->batch, .err = err};
    hfx_status st = HFX_OK;
    for (int i = 0; i < c->n_kw && !st; i++) {
        const kwarg *k = &c->kw[i];
        json_array_append_new(keys, json_string(k->key));
        if (call) {
            json_array_append_new(call->arg_names, json_string(k->key));
            hfx_pickle_text(&call->sample, k->key);
        }
        if (k->cache) {
            json_array_append_new(children, cache_node(&w, sc->filled));
            for (int l = 0; call && l < c->n_leaves; l++)
                json_array_append_new(call->graph_inputs, hfx_pt2_tensor_arg(p, c->value_of[c->leaves[l]]));
            st = w.st;
        } else if (k->dict) {
            json_array_append_new(children, call_dict(p, sc, c, call, k));
        } else if (k->constant) { /* a constant input of the program: no tensor */
            if (call) call_constant(call, k->constant, k->key);
            json_array_append_new(children, hfx_pt2_leaf_spec());
        } else {
            if (call) call_tensor(p, c, call, k->input);
            json_array_append_new(children, hfx_pt2_leaf_spec());
        }
    }
    if (call) hfx_pickle_op(&call->sample, HFX_PK_SETITEMS HFX_PK_TUPLE2);
    *in_spec = hfx_pt2_kwargs_spec(keys, children);
    return st;
}

/* The result's spec: ModelOutput(<first output>=..., cache=<the cache after the call>), or a module's bare tensor. */
static hfx_status write_call_result(const hfx_graph *g, const hfx_seed_call *sc, call_plan *c, json_t **out_spec,
                                    hfx_error *err) {
    for (int k = 1; k < g->n_outputs; k++) c->ir_out[k - 1] = g->outputs[k];
    if (g->n_outputs < 1) return hfx_fail(err, HFX_ERR_INTERNAL, "io seed: the graph has no outputs");
    if (sc->bare) { /* its tensor, or a tuple of them */
        json_t *leaves = json_array();
        for (int k = 0; k < g->n_outputs; k++) json_array_append_new(leaves, hfx_pt2_leaf_spec());
        *out_spec = hfx_pt2_spec_text(g->n_outputs == 1 ? (json_decref(leaves), hfx_pt2_leaf_spec())
                                                         : hfx_pt2_spec_node("builtins.tuple", NULL, leaves));
        return HFX_OK;
    }
    /* the cache's tensors follow the first output; what follows them is the class's later fields (an
     * encoder-decoder's encoder_last_hidden_state) */
    int n_cache = 0;
    while (1 + n_cache < g->n_outputs && hfx_graph_state_of(g, g->outputs[1 + n_cache], false)) n_cache++;
    walk r = {.g = g, .sc = sc, .ir = c->ir_out, .n_leaves = n_cache, .batch = c->batch, .err = err};
    json_t *out_children = json_array();
    json_array_append_new(out_children, hfx_pt2_leaf_spec());
    json_array_append_new(out_children, cache_node(&r, true));
    char cls[160];
    hfx_pt2_output_type(sc->output_class, cls, sizeof cls);
    json_t *fields = json_array();
    json_array_append_new(fields, json_string(g->outputs[0]->name));
    json_array_append_new(fields, json_string("cache"));
    for (int k = 1 + n_cache; k < g->n_outputs; k++) {
        json_array_append_new(fields, json_string(g->outputs[k]->name));
        json_array_append_new(out_children, hfx_pt2_leaf_spec());
    }
    *out_spec = hfx_pt2_spec_text(hfx_pt2_spec_node(cls, hfx_pt2_dumps(fields), out_children));
    return r.st;
}

/* The plan of g's call, its specs, and with a program (not NULL) the program's call. */
static hfx_status plan_call(const hfx_graph *g, hfx_aten_program *p, const hfx_seed_call *sc, hfx_pt2_call *call,
                            json_t **in_spec, json_t **out_spec, hfx_error *err) {
    call_plan c = {.leaves = calloc((size_t)g->n_inputs + 1, sizeof(int)),
                   .ir_in = calloc((size_t)g->n_inputs + 1, sizeof(hfx_value *)),
                   .ir_out = calloc((size_t)g->n_outputs + 1, sizeof(hfx_value *)),
                   .value_of = calloc((size_t)g->n_inputs + 1, sizeof(int))};
    hfx_status st = c.leaves && c.ir_in && c.ir_out && c.value_of ? HFX_OK : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int i = 0, u = 0; !st && p && i < p->n_inputs; i++)
        if (p->inputs[i].kind == HFX_INPUT_USER) c.value_of[u++] = p->inputs[i].value;
    if (!st) st = plan_keywords(g, p, sc, &c, err);
    if (!st) plan_sample_sizes(g, p, sc, &c);
    if (!st) st = write_call_inputs(g, p, sc, &c, call, in_spec, err);
    if (!st) st = write_call_result(g, sc, &c, out_spec, err);
    free(c.leaves), free(c.ir_in), free(c.ir_out), free(c.value_of);
    return st;
}

hfx_status hfx_pt2_seed_call(hfx_aten_program *p, const hfx_seed_call *sc, hfx_pt2_call *call, hfx_error *err) {
    memset(call, 0, sizeof *call);
    const hfx_graph *g = p->g;
    hfx_status st = check_covered(sc, g, err);
    if (!st) st = check_callable(sc, g, err);
    if (!st && !sc->output_class && !sc->bare)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "io \"seed\" for torch.export: the Python system's call of this "
                                                "model's component is not recorded in hfx yet; export with io "
                                                "\"optimum\" (ONNX and OpenVINO take io \"seed\")");
    if (st) return st;
    int n_users = 0, n_out = 0;
    for (int i = 0; i < p->n_inputs; i++) n_users += p->inputs[i].kind == HFX_INPUT_USER;
    for (int k = 0; k < p->n_outputs; k++) n_out += p->mutates[k] < 0;
    if (n_users != g->n_inputs || n_out != g->n_outputs)
        return hfx_fail(err, HFX_ERR_INTERNAL, "io seed: the program's user inputs or outputs are not the graph's");
    st = plan_call(g, p, sc, call, &call->in_spec, &call->out_spec, err);
    if (!st && (p->oom || !call->in_spec || !call->out_spec || !call->graph_inputs || !call->arg_names ||
                !call->constant_names))
        st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (st) hfx_pt2_call_free(call);
    return st;
}

hfx_status hfx_pt2_seed_specs(const hfx_graph *g, const hfx_seed_call *sc, json_t **in_spec, json_t **out_spec,
                              hfx_error *err) {
    *in_spec = *out_spec = NULL;
    hfx_status st = check_covered(sc, g, err);
    if (!st && (!g->n_outputs || (!sc->output_class && !sc->bare)))
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "io seed: the call is not recorded");
    if (!st) st = plan_call(g, NULL, sc, NULL, in_spec, out_spec, err);
    if (!st && (!*in_spec || !*out_spec)) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (st) json_decref(*in_spec), json_decref(*out_spec), *in_spec = *out_spec = NULL;
    return st;
}
