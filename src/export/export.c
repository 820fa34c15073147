/* hfx_export: pick the dims, build the graph, write it with the chosen backend, and write the
 * files that travel with it — all inside one output-directory transaction. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "text/tokenizer.h"
#include "base/status.h"
#include "export/config.h"
#include "export/genai.h"
#include "export/model.h"
#include "io/outdir.h"
#include "fmt/dynamo/pt2.h"
#include "fmt/format.h"

/* ---- sample inputs ---- */

enum { MAX_SAMPLES = 16 };

struct hfx_sample_inputs {
    int n;
    struct {
        char name[64];
        hfx_dtype dtype;
        int rank;
        int64_t shape[HFX_MAX_RANK];
    } items[MAX_SAMPLES];
};

hfx_sample_inputs *hfx_sample_inputs_new(void) { return calloc(1, sizeof(hfx_sample_inputs)); }

void hfx_sample_inputs_free(hfx_sample_inputs *s) { free(s); }

hfx_status hfx_sample_inputs_add(hfx_sample_inputs *s, const char *name, hfx_dtype dtype,
                                 int rank, const int64_t *shape, hfx_error *err) {
    if (strlen(name) >= sizeof s->items[0].name || rank < 0 || rank > HFX_MAX_RANK)
        return hfx_fail(err, HFX_ERR_INVALID, "sample input '%s': bad name or rank", name);
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0) return hfx_fail(err, HFX_ERR_INVALID, "sample input '%s': negative dim", name);
    int k;
    for (k = 0; k < s->n && strcmp(s->items[k].name, name) != 0; k++) {}
    if (k == MAX_SAMPLES) return hfx_fail(err, HFX_ERR_INVALID, "too many sample inputs");
    if (k == s->n) s->n++;
    snprintf(s->items[k].name, sizeof s->items[k].name, "%s", name);
    s->items[k].dtype = dtype;
    s->items[k].rank = rank;
    memcpy(s->items[k].shape, shape, (size_t)rank * sizeof *shape);
    return HFX_OK;
}

/* ---- exporters ---- */

struct hfx_exporter {
    hfx_export_config *cfg; /* owned copy */
    const hfx_format *fmt;  /* the registry's entry for cfg's export_format */
    atomic_int cancel;      /* set by hfx_exporter_cancel (a signal handler may): polled by writes */
    hfx_progress_fn progress;
    void *progress_user;
    char warnings[2048];    /* the last export's, one per line */
};

hfx_status hfx_exporter_from_config(const hfx_export_config *cfg, hfx_exporter **out,
                                    hfx_error *err) {
    const hfx_format *fmt = hfx_export_config_settings(cfg, NULL)->format; /* writable: checked by the parse */
    hfx_exporter *e = calloc(1, sizeof *e);
    if (!e || !(e->cfg = hfx_export_config_clone(cfg))) {
        free(e);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    e->fmt = fmt;
    *out = e;
    return HFX_OK;
}

void hfx_exporter_cancel(hfx_exporter *e) { atomic_store(&e->cancel, 1); }

void hfx_exporter_set_progress(hfx_exporter *e, hfx_progress_fn fn, void *user) {
    e->progress = fn;
    e->progress_user = user;
}

const char *hfx_exporter_warnings(const hfx_exporter *e) { return e->warnings; }

static void warn(hfx_exporter *e, const char *text) {
    size_t n = strlen(e->warnings);
    snprintf(e->warnings + n, sizeof e->warnings - n, "%s\n", text);
}

void hfx_exporter_free(hfx_exporter *e) {
    if (!e) return;
    hfx_export_config_free(e->cfg);
    free(e);
}

/* ---- dims ---- */

/* The batch and sequence dims of a graph: static from the sample inputs (default 2 × 16),
 * symbolic with `dynamic`, or as `dynamic_shapes` names them. The model's sequence inputs (the
 * family's list; samples are read from the first) share both axes, so a spec that names them
 * differently is refused. In the seed's profile the mask is [batch, 1, sequence, cache] (every
 * `attention_mask*` name): its axis 3, the static cache's length, sets *cache (else left as is). */
enum { AXIS_BATCH, AXIS_SEQ, AXIS_CACHE, AXIS_ROLES };

/* Which role axis `axis` of `input` plays, -1 for none. */
static int axis_role(const char *input, const char *axis, bool mask4) {
    if (mask4 && strncmp(input, "attention_mask", 14) == 0 && (input[14] == 0 || input[14] == '.'))
        return !strcmp(axis, "0") ? AXIS_BATCH : !strcmp(axis, "2") ? AXIS_SEQ : !strcmp(axis, "3") ? AXIS_CACHE : -1;
    return !strcmp(axis, "0") ? AXIS_BATCH : !strcmp(axis, "1") ? AXIS_SEQ : -1;
}

static hfx_status choose_dims(const hfx_settings *cfg, const hfx_sample_inputs *s, const char *const *inputs,
                              bool mask4, hfx_graph *g, hfx_build_opts *o, hfx_dim *cache, hfx_error *err) {
    int64_t sample[2] = {2, 16};
    /* the model's first input: [batch, sequence] token ids or a speech model's waveform samples, or
     * Whisper's [batch, mels, frames] features or an image model's [batch, channels, height, width]
     * pixels, whose batch is the sample's (the CLI names its sample input_ids either way) */
    int features = strcmp(inputs[0], "input_features") == 0 ? 3 : strcmp(inputs[0], "pixel_values") == 0 ? 4 : 0;
    for (int i = 0; s && i < s->n; i++) {
        const char *name = s->items[i].name;
        bool mine = strcmp(name, inputs[0]) == 0, generic = !mine && strcmp(name, "input_ids") == 0;
        if (!mine && !generic) continue;
        if (mine && features) {
            if (s->items[i].rank != features)
                return hfx_fail(err, HFX_ERR_INVALID, "sample input '%s' must be [batch, %s]", name,
                                features == 3 ? "mels, frames" : "channels, height, width");
            sample[0] = s->items[i].shape[0];
            continue;
        }
        if (s->items[i].rank != 2)
            return hfx_fail(err, HFX_ERR_INVALID, "sample input '%s' must be [batch, sequence]", name);
        sample[0] = s->items[i].shape[0];
        sample[1] = s->items[i].shape[1];
    }
    if (sample[0] < 1 || sample[1] < 1)
        return hfx_fail(err, HFX_ERR_INVALID, "sample batch size and sequence length must be ≥ 1");
    if (sample[0] > INT32_MAX / sample[1]) /* every tensor's element count then fits in int64 */
        return hfx_fail(err, HFX_ERR_INVALID, "sample batch size × sequence length (%lld × %lld) is over 2^31 tokens",
                        (long long)sample[0], (long long)sample[1]);
    static const char *const axis_names[2] = {"batch_size", "sequence_length"};
    if (!cfg->dynamic_shapes) {
        for (int a = 0; a < 2; a++) {
            hfx_dim d = cfg->dynamic ? hfx_dim_sym(hfx_graph_symbol(g, axis_names[a], 1, INT32_MAX))
                                     : hfx_dim_const(sample[a]);
            if (a == 0) o->batch = d;
            else o->seq = d;
        }
        return HFX_OK;
    }
    const hfx_axis_spec *chosen[AXIS_ROLES] = {0};
    const char *chosen_from[AXIS_ROLES] = {0}, *chosen_name[AXIS_ROLES] = {0};
    static const char *const role_names[AXIS_ROLES] = {"batch_size", "sequence_length", "max_cache_len"};
    for (int k = 0; k < cfg->n_shapes; k++) {
        const hfx_input_spec *in = &cfg->shapes[k];
        const char *key = in->input;
        bool known = mask4 && axis_role(key, "0", true) >= 0 && strncmp(key, "attention_mask", 14) == 0;
        for (int i = 0; inputs[i]; i++) known |= strcmp(key, inputs[i]) == 0;
        if (!known) { /* another input's dims (an image encoder's): bounds for the symbols they name */
            for (int x = 0; x < in->n_axes; x++)
                if (in->axes[x].name) hfx_graph_symbol(g, in->axes[x].name, in->axes[x].min, in->axes[x].max);
            continue; /* check_other_dims holds them to the graphs */
        }
        for (int x = 0; x < in->n_axes; x++) {
            const hfx_axis_spec *ax = &in->axes[x];
            int role = axis_role(key, ax->axis, mask4);
            if (role < 0)
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] has axis %s; %s", key,
                                ax->axis,
                                mask4 && !strncmp(key, "attention_mask", 14)
                                    ? "the mask is [batch, 1, sequence, cache]: axes 0, 2 and 3 can vary"
                                    : "these inputs are rank 2");
            if (!ax->dynamic) continue;
            const char *name = ax->name ? ax->name : role_names[role]; /* (unnamed: hfx's) */
            if (chosen[role] && strcmp(chosen_name[role], name) != 0)
                return hfx_fail(err, HFX_ERR_INVALID,
                                "export config: dynamic_shapes gives the %s axis of '%s' and '%s' different names; they "
                                "are one dim", role == AXIS_BATCH ? "batch" : role == AXIS_SEQ ? "sequence" : "cache",
                                chosen_from[role], key);
            chosen[role] = ax;
            chosen_from[role] = key;
            chosen_name[role] = name;
        }
    }
    for (int a = 0; a < AXIS_ROLES; a++) {
        hfx_dim d = hfx_dim_const(a < 2 ? sample[a] : 0);
        if (chosen[a]) d = hfx_dim_sym(hfx_graph_symbol(g, chosen_name[a], chosen[a]->min, chosen[a]->max));
        if (a == AXIS_BATCH) o->batch = d;
        else if (a == AXIS_SEQ) o->seq = d;
        else if (chosen[a] && cache) *cache = d;
    }
    return HFX_OK;
}

/* The format's tokenizer graphs (OpenVINO GenAI's), when it has them: written from the
 * checkpoint's tokenizer.json, or the reason they are not, as a warning and in the manifest. */
static hfx_status write_tokenizer(hfx_exporter *e, const hfx_checkpoint *ck, hfx_outdir *out, json_t **entry,
                                  hfx_error *err) {
    *entry = NULL;
    if (!e->fmt->write_tokenizer) return HFX_OK;
    char why[1024];
    hfx_tokenizer *t;
    hfx_status st = hfx_tokenizer_load(ck, &t, why, sizeof why, err);
    if (st) return st;
    *entry = json_object();
    if (!t) {
        if (!why[0]) { /* no tokenizer.json */
            json_decref(*entry);
            *entry = NULL;
            return HFX_OK;
        }
        char line[1200];
        snprintf(line, sizeof line, "no OpenVINO tokenizer written: %s", why);
        warn(e, line);
        json_object_set_new(*entry, "converted", json_false());
        json_object_set_new(*entry, "reason", json_string(why));
        return HFX_OK;
    }
    st = e->fmt->write_tokenizer(t, out, err);
    json_object_set_new(*entry, "converted", json_true());
    json_object_set_new(*entry, "tokenizer", json_string("openvino_tokenizer.xml"));
    json_object_set_new(*entry, "detokenizer", json_string("openvino_detokenizer.xml"));
    if (t->note) {
        warn(e, t->note);
        json_object_set_new(*entry, "note", json_string(t->note));
    }
    hfx_tokenizer_free(t);
    return st;
}

/* ---- components ---- */

/* One graph to write: the family's declaration, how it is built, and its description. */
typedef struct component {
    const hfx_component *decl;    /* the family's (name, role, ...) */
    char file[96];                /* the graph's file name */
    const hfx_settings *cfg;      /* the component's settings (borrowed from the config) */
    hfx_build_opts opts;
    hfx_graph *g;                 /* owned */
    json_t *metadata;             /* owned */
    bool stateful;                /* the state lives inside the model (the format's state option) */
    int attention, fused;         /* attention nodes built, and kept whole by the format */
    hfx_quant_plan quant;         /* the weights' quantization, when `quantized` */
    hfx_quant_done quant_done;    /* and what took it */
    bool quantized;
} component;

/* ---- side files ---- */

static const char *const side_files[] = {
    "generation_config.json", "tokenizer.json", "tokenizer_config.json",
    "special_tokens_map.json", "added_tokens.json", "vocab.json", "vocab.txt", "merges.txt",
    "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja",
    "chat_template.json", "preprocessor_config.json", /* Whisper's feature extractor, an image processor */
    "processor_config.json"}; /* transformers 5's processors, each part's config nested (Gemma 4's image and audio) */

/* config.json's text with the fields the graphs add (hfx_graph.config) before its closing brace: the checkpoint's
 * bytes otherwise as they are. *out NULL: no field to add. A field the config has already is refused (two keys). */
static hfx_status config_with_fields(const hfx_checkpoint *ck, const component *cs, int n, char **out, hfx_error *err) {
    *out = NULL;
    size_t extra = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < cs[i].g->n_config; k++) {
            const hfx_meta *f = &cs[i].g->config[k];
            if (json_object_get(hfx_checkpoint_config(ck), f->key))
                return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: has \"%s\" already, which this export writes "
                                "(from the checkpoint's tensor)", hfx_checkpoint_dir(ck), f->key);
            extra += strlen(f->key) + strlen(f->value) + 8;
        }
    if (!extra) return HFX_OK;
    char *text = NULL;
    size_t len = 0;
    const char *given = hfx_checkpoint_json_text(ck, false);
    hfx_status st = given ? HFX_OK : hfx_checkpoint_side_text(ck, "config.json", &text, &len, err);
    if (st) return st;
    if (given) len = strlen(given);
    const char *src = given ? given : text;
    size_t close = len;
    while (close > 0 && src[close - 1] != '}') close--; /* (it parsed as an object: its last '}' closes it) */
    char *res = close ? malloc(close + extra + 4) : NULL; /* (the text before its "}", the fields, "\n}\n", NUL) */
    if (res) {
        size_t at = close - 1;
        memcpy(res, src, at);
        bool first = json_object_size(hfx_checkpoint_config(ck)) == 0; /* ("{}": no comma before the first) */
        for (int i = 0; i < n; i++)
            for (int k = 0; k < cs[i].g->n_config; k++, first = false)
                at += (size_t)sprintf(res + at, "%s\n  \"%s\": %s", first ? "" : ",", cs[i].g->config[k].key,
                                      cs[i].g->config[k].value);
        strcpy(res + at, "\n}\n");
    }
    free(text);
    if (!res) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    *out = res;
    return HFX_OK;
}

static hfx_status copy_side_files(hfx_outdir *out, const hfx_checkpoint *ck, const component *cs, int n_cs,
                                  hfx_error *err) {
    char *config = NULL; /* (NULL: the checkpoint's as it is) */
    hfx_status st = config_with_fields(ck, cs, n_cs, &config, err);
    bool added = config != NULL;
    if (!st && added) st = hfx_outdir_write(out, "config.json", config, strlen(config), err);
    free(config);
    const char *text = hfx_checkpoint_json_text(ck, false);
    if (text) { /* a model from memory or a GGUF file: its config texts, the tokenizer files a GGUF file's made */
        if (!st && !added) st = hfx_outdir_write(out, "config.json", text, strlen(text), err);
        const char *gen = hfx_checkpoint_json_text(ck, true);
        if (!st && gen) st = hfx_outdir_write(out, "generation_config.json", gen, strlen(gen), err);
        static const char *const made[] = {"tokenizer.json", "tokenizer_config.json"}; /* (a GGUF file's) */
        for (size_t i = 0; !st && i < sizeof made / sizeof made[0]; i++) {
            char *t = NULL;
            size_t len = 0;
            st = hfx_checkpoint_side_text(ck, made[i], &t, &len, err);
            if (!st && t) st = hfx_outdir_write(out, made[i], t, len, err);
            free(t);
        }
        return st;
    }
    const char *src_dir = hfx_checkpoint_dir(ck);
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/config.json", src_dir);
    if (!st && !added) st = hfx_outdir_copy(out, "config.json", path, err);
    for (size_t i = 0; !st && i < sizeof side_files / sizeof side_files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", src_dir, side_files[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            st = hfx_outdir_copy(out, side_files[i], path, err);
    }
    /* a sentence-transformers folder's pipeline: modules.json and each module's config */
    const char *st_files[16];
    char names[2048];
    int n = hfx_sentence_files(ck, st_files, 16, names, sizeof names);
    for (int i = 0; !st && i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", src_dir, st_files[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) st = hfx_outdir_copy(out, st_files[i], path, err);
    }
    return st;
}

/* dynamic_shapes entries for inputs other than the sequence inputs (an image encoder's) only bound
 * the symbols they name: each must be an input of one of the n graphs, its axes carrying symbols
 * of exactly those names (the family names them), or the export is refused. */
static hfx_status check_other_dims(const component *cs, int n, const char *const *inputs, hfx_error *err) {
    for (int c = 0; c < n; c++) {
        for (int k = 0; k < cs[c].cfg->n_shapes; k++) {
            const hfx_input_spec *spec = &cs[c].cfg->shapes[k];
            const char *key = spec->input;
            bool sequence = strncmp(key, "attention_mask", 14) == 0;
            for (int i = 0; inputs[i]; i++) sequence |= strcmp(key, inputs[i]) == 0;
            if (sequence) continue;
            const hfx_value *in = NULL;
            const hfx_graph *owner = NULL;
            for (int k2 = 0; k2 < n && !in; k2++)
                for (int i = 0; i < cs[k2].g->n_inputs && !in; i++)
                    if (strcmp(cs[k2].g->inputs[i]->name, key) == 0) in = cs[k2].g->inputs[i], owner = cs[k2].g;
            if (!in) {
                char names[256];
                size_t k2 = 0;
                names[0] = 0;
                for (int i = 0; inputs[i]; i++)
                    if (k2 < sizeof names) k2 += (size_t)snprintf(names + k2, sizeof names - k2, "%s%s", i ? ", " : "", inputs[i]);
                return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes names input '%s', which this model "
                                                      "does not take (inputs: %s)", key, names);
            }
            for (int x = 0; x < spec->n_axes; x++) {
                const char *axis = spec->axes[x].axis, *name = spec->axes[x].name;
                bool bounded = spec->axes[x].min != 1 || spec->axes[x].max != INT32_MAX;
                if (!name && !bounded) continue; /* (static, or dynamic as the family makes it) */
                char *end;
                long a = strtol(axis, &end, 10);
                hfx_dim d = *end == 0 && a >= 0 && a < in->rank ? in->dims[a] : hfx_dim_const(0);
                if (d.n != 1 || d.c != 0 || d.coef[0] != 1)
                    return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] has axis %s, which is not "
                                                          "one of its dynamic axes", key, axis);
                if (!name || strcmp(owner->symbols[d.sym[0]].name, name) != 0)
                    return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] axis %s: this model calls "
                                                          "that dim '%s'%s", key, axis, owner->symbols[d.sym[0]].name,
                                    name ? "" : " (bounds go with its name)");
            }
        }
    }
    return HFX_OK;
}

static int count_op(const hfx_graph *g, hfx_op op) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i]->op == op;
    return n;
}

static const char *dtype_text(hfx_dtype dt) {
    return dt == HFX_DTYPE_F16 ? "float16" : dt == HFX_DTYPE_BF16 ? "bfloat16" : "float32";
}

static json_t *dim_json(hfx_dim d) { return hfx_dim_is_const(d) ? json_integer(d.c) : json_null(); }

/* {"bits", "group_size" (0: a whole row), "symmetric"}; null for a weight kept float */
static json_t *quant_json(const hfx_quant *q) {
    if (!q->bits) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "bits", json_integer(q->bits));
    json_object_set_new(o, "group_size", json_integer(q->block));
    json_object_set_new(o, "symmetric", json_boolean(q->symmetric));
    return o;
}

/* The cache section of the metadata: one entry per layer. */
static json_t *cache_json(const component *c, const hfx_model *model, int64_t max_cache_len) {
    const hfx_build_opts *o = &c->opts;
    int n = hfx_arch_cache_layers(model->arch, NULL, 0);
    hfx_layer_cache *layers = n > 0 ? malloc((size_t)n * sizeof *layers) : NULL;
    if (n > 0 && !layers) return NULL;
    if (n > 0) hfx_arch_cache_layers(model->arch, layers, n);
    json_t *cache = json_object(), *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_t *l = json_object();
        if (!layers[i].n_states && !layers[i].kv_heads) { /* it attends to an earlier layer's: it keeps nothing */
            json_array_append_new(arr, l);
            continue;
        }
        if (layers[i].n_states) { /* a recurrent layer: each state's dims after the batch */
            for (int k = 0; k < layers[i].n_states && k < 4; k++) {
                json_t *dims = json_array();
                for (int d = 0; d < layers[i].states[k].rank && d < 3; d++) /* the seed's conv state: the whole window */
                    json_array_append_new(dims, json_integer(layers[i].states[k].dims[d] +
                                                             (o->io == HFX_IO_SEED && k == 0 &&
                                                              d == layers[i].states[k].rank - 1)));
                json_object_set_new(l, layers[i].states[k].name, dims);
            }
            if (!layers[i].kv_heads) { /* the states alone (a layer that also attends: its cache too) */
                json_array_append_new(arr, l);
                continue;
            }
        }
        json_object_set_new(l, "heads", json_integer(layers[i].kv_heads));
        json_object_set_new(l, "key_dim", json_integer(layers[i].key_dim));
        json_object_set_new(l, "value_dim", json_integer(layers[i].value_dim));
        if (layers[i].index_dim) json_object_set_new(l, "index_dim", json_integer(layers[i].index_dim));
        json_object_set_new(l, "length", o->cache == HFX_CACHE_STATIC ? dim_json(o->max_cache) : json_null());
        json_object_set_new(l, "sliding_window", layers[i].sliding_window ? json_integer(layers[i].sliding_window) : json_null());
        json_array_append_new(arr, l);
    }
    free(layers);
    json_object_set_new(cache, "implementation", json_string(o->cache == HFX_CACHE_STATIC ? "static" : "dynamic"));
    json_object_set_new(cache, "max_cache_len", max_cache_len ? json_integer(max_cache_len) : json_null());
    json_object_set_new(cache, "layers", arr);
    return cache;
}

/* The fields transformers.exporters records per component, for an export in its profile and for a plain forward:
 * packages, export_config (its profile's only), export_dtype, export_device, kwargs (each input's rank, shape — null
 * where a dim is dynamic, since hfx traces no sample — and dtype; the cache's container) and the
 * empty constant lists. (The pytree specs: flat_specs for plain forwards, call_specs for generation graphs in the
 * seed's profile; docs/GENERATION.md.) */
static void seed_fields(json_t *md, const component *c, const hfx_model *model) {
    static const char *const torch_dtype[HFX_DTYPE_COUNT_] = {
        [HFX_DTYPE_F32] = "float32", [HFX_DTYPE_F16] = "float16", [HFX_DTYPE_BF16] = "bfloat16",
        [HFX_DTYPE_I64] = "int64", [HFX_DTYPE_I32] = "int32", [HFX_DTYPE_BOOL] = "bool"};
    const hfx_graph *g = c->g;
    json_t *packages = json_object(), *kwargs = json_object();
    json_object_set_new(packages, "hfx", json_string(HFX_VERSION_STRING));
    json_object_set_new(md, "packages", packages);
    if (c->opts.io == HFX_IO_SEED) /* (a plain forward's bytes stay the same whatever spelling of its config made it) */
        json_object_set_new(md, "export_config", json_deep_copy(c->cfg->json));
    json_object_set_new(md, "export_dtype", json_string(dtype_text(c->opts.dtype)));
    json_object_set_new(md, "export_device", json_string("cpu"));
    for (int i = 0; i < g->n_inputs; i++) {
        const hfx_value *v = g->inputs[i];
        if (hfx_graph_state_of(g, v, true)) continue; /* the cache, below */
        json_t *in = json_object(), *shape = json_array();
        for (int d = 0; d < v->rank; d++) json_array_append_new(shape, dim_json(v->dims[d]));
        json_object_set_new(in, "rank", json_integer(v->rank));
        json_object_set_new(in, "shape", shape);
        json_object_set_new(in, "dtype", json_string(torch_dtype[v->dtype] ? torch_dtype[v->dtype] : hfx_dtype_name(v->dtype)));
        const char *dot = strchr(v->name, '.');
        if (dot) { /* a leaf of a structured argument: "encoder_outputs.last_hidden_state" (a mask dict's,
                      "attention_mask.full_attention", is replaced below) */
            char arg[64];
            snprintf(arg, sizeof arg, "%.*s", (int)(dot - v->name < 63 ? dot - v->name : 63), v->name);
            json_t *parent = json_object_get(kwargs, arg);
            if (!parent) json_object_set_new(kwargs, arg, parent = json_pack("{s:{}}", "leaves"));
            json_object_set_new(json_object_get(parent, "leaves"), dot + 1, in);
            continue;
        }
        json_object_set_new(kwargs, v->name, in);
    }
    const char *key;
    json_t *arg;
    json_object_foreach(kwargs, key, arg) { /* a list's leaves ("deepstack_visual_embeds.0", ...): its container alone,
                                               as the seed records a list */
        json_t *leaves = json_object_get(arg, "leaves");
        const char *names[64];
        int n = 0;
        const char *leaf;
        json_t *unused;
        json_object_foreach(leaves, leaf, unused) {
            if (n < 64) names[n] = leaf;
            n++;
        }
        if (n > 0 && n <= 64 && hfx_pt2_entries_are_list(names, n)) {
            json_object_del(arg, "leaves");
            json_object_set_new(arg, "container", json_string("list"));
        }
    }
    /* a model whose config has layer_types passes a static cache's mask as a dict per type: the
     * graph's input where it takes one, None where it does not (the prefill) */
    int n_layers = c->opts.cache == HFX_CACHE_STATIC ? hfx_arch_cache_layers(model->arch, NULL, 0) : 0;
    hfx_layer_cache *layers = n_layers > 0 ? calloc((size_t)n_layers, sizeof *layers) : NULL;
    bool typed = false; /* (a recurrent layer has no attention type: the attention layers' name the masks) */
    if (layers && hfx_arch_cache_layers(model->arch, layers, n_layers) > 0)
        for (int i = 0; i < n_layers; i++) typed |= layers[i].layer_type != NULL;
    if (typed) {
        json_t *leaves = json_object();
        for (int i = 0; i < n_layers; i++) {
            if (!layers[i].layer_type || json_object_get(leaves, layers[i].layer_type)) continue;
            char name[96];
            snprintf(name, sizeof name, "attention_mask.%s", layers[i].layer_type);
            const hfx_value *v = NULL;
            for (int k = 0; k < g->n_inputs && !v; k++)
                if (!strcmp(g->inputs[k]->name, name)) v = g->inputs[k];
            json_t *leaf = json_object();
            if (!v) json_object_set_new(leaf, "container", json_string("NoneType"));
            else {
                json_t *shape = json_array();
                for (int d = 0; d < v->rank; d++) json_array_append_new(shape, dim_json(v->dims[d]));
                json_object_set_new(leaf, "rank", json_integer(v->rank));
                json_object_set_new(leaf, "shape", shape);
                json_object_set_new(leaf, "dtype", json_string(torch_dtype[v->dtype]));
            }
            json_object_set_new(leaves, layers[i].layer_type, leaf);
        }
        json_t *mask = json_object();
        json_object_set_new(mask, "leaves", leaves);
        json_object_set_new(kwargs, "attention_mask", mask);
    }
    free(layers);
    if (g->n_states) { /* an encoder-decoder's cache is two: self-attention and cross-attention */
        json_t *cache = json_object();
        bool two = g->state_holder == HFX_HOLDER_ENCODER_DECODER;
        json_object_set_new(cache, "container", json_string(two ? "EncoderDecoderCache"
                                                            : c->opts.cache == HFX_CACHE_STATIC ? "StaticCache"
                                                                                                : "DynamicCache"));
        json_object_set_new(kwargs, "cache", cache);
    }
    hfx_torch_signature sig = hfx_arch_component_signature(model->arch, c->decl->name);
    for (const char *const *a = sig.step_nones; a && *a && c->decl->reads_state; a++)
        if (!json_object_get(kwargs, *a)) json_object_set_new(kwargs, *a, json_pack("{s:s}", "container", "NoneType"));
    json_t *constants = json_object(); /* (the keywords passed as constants: constant inputs of the seed's program) */
    for (const hfx_keyword_constant *k = sig.constants; k && k->name && c->opts.io == HFX_IO_SEED; k++) {
        static const char *const container[] = {[HFX_CONSTANT_NONE] = "NoneType", [HFX_CONSTANT_FALSE] = "bool",
                                                [HFX_CONSTANT_INT] = "int"};
        json_object_set_new(kwargs, k->name, json_pack("{s:s}", "container", container[k->kind]));
        json_object_set_new(constants, k->name, k->kind == HFX_CONSTANT_NONE    ? json_null()
                                                : k->kind == HFX_CONSTANT_FALSE ? json_false()
                                                                                : json_integer(k->value));
    }
    json_object_set_new(md, "kwargs", kwargs);
    json_object_set_new(md, "in_constants", constants);
    json_object_set_new(md, "out_constants", json_array());
}

/* A plain forward's output class where the family records one, its inputs are flat tensors (none structured: a
 * cache, a mask per layer type) and its outputs that class's fields; NULL otherwise. */
static const char *flat_output_class(const component *c, const hfx_model *model) {
    const hfx_graph *g = c->g;
    /* a plain forward, or in the seed's profile a generation component without a cache, called as transformers
     * calls its submodule (an encoder-decoder's encoder: get_encoder()(**sources) returns BaseModelOutput) */
    bool plain = c->opts.cache == HFX_CACHE_NONE && strcmp(c->decl->role, "model") == 0;
    bool uncached = c->opts.io == HFX_IO_SEED && c->opts.cache != HFX_CACHE_NONE;
    hfx_torch_signature sig = plain ? hfx_arch_torch_signature(model->arch)
                                    : hfx_arch_component_signature(model->arch, c->decl->name);
    if (!(plain || uncached) || !sig.output_class || sig.bare || g->n_states) return NULL;
    for (int i = 0; i < g->n_inputs; i++)
        if (strchr(g->inputs[i]->name, '.')) return NULL;
    const char *names[64];
    if (g->n_outputs > 64) return NULL;
    for (int i = 0; i < g->n_outputs; i++) names[i] = g->outputs[i]->name;
    return hfx_pt2_output_fields(sig.output_class, names, g->n_outputs) ? sig.output_class : NULL;
}

/* The pytree specs torch.export records for such a forward(**kwargs) returning the output class's fields: in_spec
 * ((), {input: leaf, ...}) in the graph's input order, out_spec <class>(context: its outputs' names, a leaf each), which
 * transformers.exporters' loader reads to call the program as the model and to give back its output class (the .pt2
 * program's own call: hfx_pt2_keyword_call). */
static void flat_specs(json_t *md, const component *c, const hfx_model *model) {
    const hfx_graph *g = c->g;
    const char *output_class = flat_output_class(c, model);
    if (!output_class) return;
    json_t *keys = json_array(), *names = json_array();
    for (int i = 0; i < g->n_inputs; i++) json_array_append_new(keys, json_string(g->inputs[i]->name));
    for (int i = 0; i < g->n_outputs; i++) json_array_append_new(names, json_string(g->outputs[i]->name));
    json_object_set_new(md, "in_spec", hfx_pt2_flat_in_spec(keys));
    json_object_set_new(md, "out_spec", hfx_pt2_class_spec(output_class, names));
}

/* A generation graph's in the seed's profile: the specs of its call as the Python system's programs record them
 * (hfx_pt2_seed_specs: the keywords, the transformers cache object, the ModelOutput) into md, where hfx writes that
 * call (not for sliding-window layers, whose cache objects pin what hfx's graphs leave open: the .pt2 refuses them,
 * the other formats go without the specs). */
static hfx_status call_specs(json_t *md, const component *c, const hfx_seed_call *call, hfx_error *err) {
    json_t *in_spec, *out_spec;
    hfx_status st = hfx_pt2_seed_specs(c->g, call, &in_spec, &out_spec, err);
    if (st == HFX_ERR_UNSUPPORTED) return HFX_OK; /* (a call hfx does not write: no specs) */
    if (st) return st;
    if (json_object_set_new(md, "in_spec", in_spec) || json_object_set_new(md, "out_spec", out_spec))
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    return HFX_OK;
}

/* The graph's own description of itself (the seed's export metadata), also stored in the
 * artifact as metadata_props["transformers_export_metadata"]. NULL when out of memory. */
static json_t *metadata(const component *c, const hfx_model *model, int64_t max_cache_len) {
    const hfx_graph *g = c->g;
    const hfx_build_opts *o = &c->opts;
    json_t *md = json_object(), *ins = json_array(), *outs = json_array();
    for (int i = 0; i < g->n_inputs; i++) json_array_append_new(ins, json_string(g->inputs[i]->name));
    for (int i = 0; i < g->n_outputs; i++) json_array_append_new(outs, json_string(g->outputs[i]->name));
    json_object_set_new(md, "schema_version", json_integer(1));
    json_object_set_new(md, "architecture", json_string(hfx_model_architecture(model)));
    json_object_set_new(md, "role", json_string(c->decl->role));
    json_object_set_new(md, "dtype", json_string(dtype_text(o->dtype)));
    json_object_set_new(md, "input_names", ins);
    json_object_set_new(md, "output_names", outs);
    json_object_set_new(md, "batch_size", dim_json(o->batch));
    /* the graph's own: an encoder-decoder's fixed-shape prefill takes one decoder token whatever
     * the sources' length */
    hfx_dim seq = o->seq;
    for (int i = 0; i < g->n_inputs; i++)
        if (strcmp(g->inputs[i]->name, "input_ids") == 0 && g->inputs[i]->rank == 2) seq = g->inputs[i]->dims[1];
    json_object_set_new(md, "sequence_length", dim_json(seq));
    json_object_set_new(md, "producer", json_string("hfx " HFX_VERSION_STRING));
    /* the seed's fields: for its profile, and for every plain forward (its loader and runners read them) */
    bool plain = o->cache == HFX_CACHE_NONE && strcmp(c->decl->role, "model") == 0;
    if (o->io == HFX_IO_SEED || plain) seed_fields(md, c, model);
    flat_specs(md, c, model); /* (where it is called as a plain forward) */
    if (c->quantized) { /* which weights are stored quantized, and how */
        const hfx_quant_done *d = &c->quant_done;
        const char *from = hfx_checkpoint_quant_method(model->ck); /* (NULL: a GGUF file's blocks) */
        json_t *q = c->quant.linears.from_blocks ? json_pack("{ss}", "from", from ? from : "gguf") /* (each its own) */
                                                 : quant_json(&c->quant.linears);
        json_object_set_new(q, "linears", json_integer(d->linears + (d->has_head && d->head.bits)));
        if (d->has_head) json_object_set_new(q, "lm_head", quant_json(&d->head));
        if (d->has_table) json_object_set_new(q, "embeddings", quant_json(&d->table));
        json_object_set_new(md, "quantization", q);
    }
    /* attention as the runtime's fused op (OpenVINO's ScaledDotProductAttention), or written out
     * in primitives: OpenVINO GenAI's paged attention (continuous batching) needs "fused" */
    if (c->attention)
        json_object_set_new(md, "attention", json_string(c->fused == c->attention ? "fused"
                                                         : c->fused ? "mixed" : "decomposed"));
    if (o->cache != HFX_CACHE_NONE) {
        json_t *cache = cache_json(c, model, max_cache_len);
        if (!cache) {
            json_decref(md);
            return NULL;
        }
        json_object_set_new(md, "cache", cache);
        json_object_set_new(md, "logits_to_keep", json_integer(o->logits_last ? 1 : 0));
        json_object_set_new(md, "stateful", json_boolean(c->stateful));
        int64_t recompute = hfx_arch_recompute_at(model->arch);
        if (recompute) json_object_set_new(md, "recompute_cache_at_length", json_integer(recompute));
        int64_t piece = hfx_arch_prompt_piece(model->arch);
        if (piece) json_object_set_new(md, "prompt_piece", json_integer(piece));
    }
    return md;
}

static hfx_status write_json(hfx_outdir *out, const char *name, const json_t *obj, hfx_error *err) {
    char *text = obj ? json_dumps(obj, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    if (!text) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = hfx_outdir_write(out, name, text, strlen(text), err);
    free(text);
    return st;
}

static const char MANIFEST[] = "export.json";

/* The files the export already in the directory wrote, from its manifest: its "files" list, or
 * for an export of an hfx that did not write one, the files such an export can write. Tells the
 * transaction what is hfx's to replace and what is the user's to keep. */
static hfx_status previous_export(hfx_outdir *out, hfx_error *err) {
    char *text;
    hfx_status st = hfx_outdir_read_existing(out, MANIFEST, 16 << 20, &text, err);
    json_error_t je;
    json_t *m = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : NULL;
    free(text);
    if (text && !m && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (st || !json_is_object(m) || !json_is_object(json_object_get(m, "components"))) {
        json_decref(m);
        return st; /* no manifest of ours: every file there is the user's */
    }
    const char *names[256];
    int n = 0;
    const json_t *files = json_object_get(m, "files");
    size_t i;
    json_t *v;
    if (json_is_array(files)) {
        json_array_foreach(files, i, v) if (n < 256 && json_is_string(v)) names[n++] = json_string_value(v);
    } else {
        static const char *const fixed[] = {"export.json", "export_config.json", "genai_config.json", "config.json",
                                            "model.onnx_data"};
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) names[n++] = fixed[k];
        for (size_t k = 0; k < sizeof side_files / sizeof side_files[0]; k++) names[n++] = side_files[k];
    }
    /* each component's graph, and an OpenVINO graph's weights beside it */
    char bins[64][96];
    int n_bins = 0;
    const char *key;
    json_object_foreach(json_object_get(m, "components"), key, v) {
        const char *file = json_string_value(json_object_get(v, "file"));
        if (!file || n >= 254) continue;
        names[n++] = file;
        size_t len = strlen(file);
        if (n_bins < 64 && len > 4 && len < 90 && strcmp(file + len - 4, ".xml") == 0) {
            snprintf(bins[n_bins], sizeof bins[n_bins], "%.*s.bin", (int)(len - 4), file);
            names[n++] = bins[n_bins++];
        }
    }
    st = hfx_outdir_set_previous(out, names, n, err);
    json_decref(m);
    return st;
}

/* One component built, quantized as asked, decomposed for the format, verified and described;
 * what the format's writer takes of it in *fg (and, for the torch-side formats, the Python
 * system's view of a generation graph in *call). */
static hfx_status prepare_component(const hfx_exporter *e, const hfx_model *model, component *c,
                                    int64_t max_cache_len, const hfx_special_tokens *tokens,
                                    const hfx_layer_cache *layers, int n_layers, hfx_format_graph *fg,
                                    hfx_seed_call *call, hfx_error *err) {
    const hfx_format *fmt = e->fmt;
    hfx_status st = hfx_arch_build_forward(model->arch, model->ck, &c->opts, c->g, err);
    int quantize = st ? 0 : hfx_settings_quant(c->cfg, fmt, &c->quant);
    c->quantized = quantize > 0;
    if (quantize == -1)
        st = hfx_fail(err, HFX_ERR_INVALID, "export config: 'group_size', 'symmetric', 'reduce_range', "
                                            "'quantize_embeddings' and 'quantize_lm_head' shape quantized weights; "
                                            "set 'quantize' (--quantize int4|int8|int8-dynamic) too");
    if (quantize == -2)
        st = hfx_fail(err, HFX_ERR_INVALID, "export config: 'reduce_range' shapes onnxruntime's dynamic "
                                            "quantization: set 'quantize' to \"int8-dynamic\"");
    if (quantize == -3)
        st = hfx_fail(err, HFX_ERR_INVALID, "export config: quantize \"stored\" keeps the checkpoint's own blocks: "
                                            "'group_size', 'symmetric', 'reduce_range', 'quantize_embeddings' and "
                                            "'quantize_lm_head' do not apply");
    bool dynamic = quantize > 0 && c->quant.linears.rule == HFX_QUANT_RULE_ORT_DYNAMIC;
    bool blocks = quantize > 0 && c->quant.linears.from_blocks;
    if (quantize > 0 && !fmt->quant.supported)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED,
                      "export_format '%s' cannot write quantized weights yet (onnx, openvino, executorch and dynamo can)", fmt->name);
    else if (dynamic && !fmt->quant.dynamic)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "export_format '%s' has no dynamic int8 form (onnxruntime's "
                                                "MatMulInteger, onnx only): --quantize int8", fmt->name);
    else if (blocks && c->quant.linears.rule != HFX_QUANT_RULE_ORT && c->quant.linears.rule != HFX_QUANT_RULE_NNCF)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "quantize \"stored\": export_format '%s' cannot hold a checkpoint's "
                                                "quantized blocks as they are yet: onnx and openvino can", fmt->name);
    else if (quantize > 0)
        st = hfx_quantize_weights(c->g, &c->quant, &c->quant_done, err);
    if (!st && blocks && !c->quant_done.linears && !(c->quant_done.has_head && c->quant_done.head.bits))
        st = hfx_fail(err, HFX_ERR_INVALID, "quantize \"stored\": no linear of %s is stored in a form a quantized "
                                            "linear holds exactly (a GGUF file's Q4_0, Q8_0; compressed-tensors' 4- "
                                            "and 8-bit integers in groups of a power of two of at least 16, or per "
                                            "channel)", hfx_checkpoint_dir(model->ck));
    c->attention = count_op(c->g, HFX_OP_ATTENTION);
    if (!st) st = hfx_decompose(c->g, fmt->keeps, err); /* what the format does not write itself */
    c->fused = count_op(c->g, HFX_OP_ATTENTION);
    if (!st) st = hfx_graph_verify(c->g, err);
    if (st) return st;
    hfx_torch_signature sig = hfx_arch_component_signature(model->arch, c->decl->name);
    fg->output_class = flat_output_class(c, model); /* (a keyword call over flat tensors: no cache object) */
    if (c->opts.io == HFX_IO_SEED && c->opts.cache != HFX_CACHE_NONE && layers && sig.args && !fg->output_class) {
        *call = (hfx_seed_call){.output_class = sig.output_class, .forward_args = sig.args,
                                .is_static = c->opts.cache == HFX_CACHE_STATIC, .filled = c->decl->reads_state,
                                .max_cache_len = max_cache_len, .n_layers = n_layers, .layers = layers,
                                .constants = sig.constants, .step_nones = c->decl->reads_state ? sig.step_nones : NULL,
                                .bare = sig.bare, .encoder_outputs = sig.encoder_outputs};
        fg->seed_call = call;
    }
    c->metadata = metadata(c, model, max_cache_len);
    if (c->metadata && fg->seed_call) st = call_specs(c->metadata, c, fg->seed_call, err);
    char *text = c->metadata && !st ? json_dumps(c->metadata, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (!st && !text) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!st) hfx_graph_set_meta(c->g, "transformers_export_metadata", text);
    free(text);
    if (!st) st = hfx_graph_status(c->g, err); /* (the metadata's copy can fail: the graph says so) */
    fg->g = c->g;
    fg->file = c->file;
    fg->tokens = tokens;
    fg->max_cache_len = c->opts.cache == HFX_CACHE_STATIC ? max_cache_len : 0;
    fg->own_weights = c->opts.io == HFX_IO_SEED; /* the seed writes prefill.onnx.data, decode.onnx.data */
    memcpy(fg->opt, c->cfg->opt, sizeof fg->opt);
    return st;
}

/* export.json: the export's components, each with its file, role and metadata; the generation
 * settings, the tokenizer's graphs, the sentence embedding; every file of the export. */
static hfx_status write_manifest(hfx_outdir *out, const hfx_format *fmt, const component *cs, int n,
                                 json_t *generation, json_t *tokenizer, hfx_error *err) {
    json_t *manifest = json_object(), *comps = json_object(), *files = json_array();
    for (int i = 0; hfx_outdir_file(out, i); i++) json_array_append_new(files, json_string(hfx_outdir_file(out, i)));
    json_array_append_new(files, json_string(MANIFEST));
    for (int i = 0; i < n; i++) {
        json_t *entry = json_object();
        json_object_set_new(entry, "file", json_string(cs[i].file));
        json_object_set_new(entry, "role", json_string(cs[i].decl->role));
        json_object_set(entry, "metadata", cs[i].metadata);
        json_object_set_new(comps, cs[i].decl->name, entry);
    }
    json_object_set_new(manifest, "schema_version", json_integer(1));
    json_object_set_new(manifest, "export_format", json_string(fmt->name));
    if (generation) json_object_set(manifest, "generation", generation);
    json_object_set_new(manifest, "components", comps);
    if (tokenizer) json_object_set(manifest, "tokenizer", tokenizer);
    const hfx_pooling *pool = &cs[0].opts.pooling;
    if (cs[0].opts.states_only) { /* what the embedding pipeline's config should say (the folder's pooling) */
        json_t *p = json_object();
        if (pool->n) json_object_set_new(p, "pooling_type", json_string(hfx_pool_mode_name(pool->modes[0])));
        if (pool->n) json_object_set_new(p, "normalize", json_boolean(pool->normalize));
        json_object_set_new(manifest, "embedding_pipeline", p);
    } else if (pool->n) { /* what sentence_embedding is: modes concatenated in order, then normalized or not */
        json_t *p = json_object(), *modes = json_array();
        for (int i = 0; i < pool->n; i++) json_array_append_new(modes, json_string(hfx_pool_mode_name(pool->modes[i])));
        json_object_set_new(p, "pooling_mode", modes);
        if (pool->n_dense) { /* then these linears, in order */
            json_t *dense = json_array();
            for (int i = 0; i < pool->n_dense; i++)
                json_array_append_new(dense, json_pack("{s:s, s:I, s:I, s:b, s:s}", "module", pool->dense[i].module,
                                                       "in_features", (json_int_t)pool->dense[i].in, "out_features",
                                                       (json_int_t)pool->dense[i].out, "bias", pool->dense[i].bias,
                                                       "activation", pool->dense[i].tanh ? "tanh" : "identity"));
            json_object_set_new(p, "dense", dense);
        }
        json_object_set_new(p, "normalize", json_boolean(pool->normalize));
        json_object_set_new(manifest, "sentence_embedding", p);
    }
    json_object_set_new(manifest, "files", files); /* every file of the export, this one included */
    hfx_status st = write_json(out, MANIFEST, manifest, err);
    json_decref(manifest);
    return st;
}

/* Build, verify and describe every component, then write them all, the side files and the
 * manifest in one output-directory transaction. */
static hfx_status run_export(hfx_exporter *e, hfx_model *model, component *cs, int n,
                             const hfx_export_config *whole, json_t *generation,
                             int64_t max_cache_len, const json_t *genai, const hfx_special_tokens *tokens,
                             const char *out_dir, hfx_error *err) {
    const hfx_format *fmt = e->fmt;
    hfx_status st = HFX_OK;
    hfx_format_graph *gs = calloc((size_t)n, sizeof *gs);
    /* the Python system's view of each generation graph (its call and cache objects), for the
     * torch-side formats */
    hfx_seed_call *calls = calloc((size_t)n, sizeof *calls);
    int n_layers = hfx_arch_cache_layers(model->arch, NULL, 0);
    hfx_layer_cache *layers = n_layers > 0 ? calloc((size_t)n_layers, sizeof *layers) : NULL;
    if (!gs || !calls || (n_layers > 0 && !layers)) {
        free(gs), free(calls), free(layers);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    if (layers) hfx_arch_cache_layers(model->arch, layers, n_layers);
    for (int i = 0; i < n && !st; i++) {
        st = prepare_component(e, model, &cs[i], max_cache_len, tokens, layers, n_layers, &gs[i], &calls[i], err);
        if (st && n > 1) hfx_error_prefix(err, "component '%s'", cs[i].decl->name);
    }
    if (!st) st = check_other_dims(cs, n, hfx_arch_sequence_inputs(model->arch), err);
    /* options that shape what components share (one weights file) must agree */
    for (int k = 0; k < fmt->n_options && !st; k++)
        for (int i = 1; i < n && !st; i++)
            if (fmt->options[k].shared && gs[i].opt[k] != gs[0].opt[k])
                st = hfx_fail(err, HFX_ERR_INVALID, "export config: components disagree on %s; they share one weights file",
                              fmt->options[k].key);
    /* the state option as each graph has it: the seed's prefill returns the state its decode keeps */
    int state_k = fmt->state_option ? hfx_format_option_index(fmt, fmt->state_option) : -1;
    for (int i = 0; i < n && !st && state_k >= 0; i++) gs[i].opt[state_k] = cs[i].stateful;
    hfx_outdir *out = NULL;
    if (!st) st = hfx_outdir_open(out_dir, &e->cancel, &out, err);
    if (st) {
        free(gs), free(calls), free(layers);
        return st;
    }
    hfx_outdir_set_manifest(out, MANIFEST);
    st = previous_export(out, err);
    hfx_outdir_set_progress(out, e->progress, e->progress_user);
    if (!st) st = fmt->write(gs, n, out, err);
    free(gs), free(calls), free(layers);
    if (!st) st = copy_side_files(out, model->ck, cs, n, err);
    json_t *tokenizer = NULL;
    if (!st) st = write_tokenizer(e, model->ck, out, &tokenizer, err);
    if (!st) {
        char *text = hfx_export_config_to_json(whole);
        st = text ? hfx_outdir_write(out, "export_config.json", text, strlen(text), err)
                  : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        free(text);
    }
    if (!st && genai) st = write_json(out, "genai_config.json", genai, err);
    if (!st) st = write_manifest(out, fmt, cs, n, generation, tokenizer, err);
    json_decref(tokenizer);
    if (!st) return hfx_outdir_commit(out, err);
    hfx_outdir_abort(out);
    return st;
}

static void free_components(component *cs, int n) {
    for (int i = 0; i < n; i++) {
        hfx_graph_free(cs[i].g);
        json_decref(cs[i].metadata);
    }
}

/* The component's config (per-component maps name each), its graph and its file name. */
static hfx_status start_component(const hfx_exporter *e, const hfx_component *decl, const hfx_export_config *cfg,
                                  bool stateful, bool seed, int n_components, component *c,
                                  hfx_error *err) {
    c->decl = decl;
    /* the seed's profile keeps state inside the graphs that read it; its prefill returns it */
    c->stateful = stateful && (!seed || decl->reads_state);
    c->cfg = hfx_export_config_settings(cfg, decl->name);
    hfx_file_layout files = seed ? HFX_FILES_SEED : stateful ? HFX_FILES_STATEFUL : HFX_FILES_PLAIN;
    hfx_format_file_name(e->fmt, files, decl->name, decl->stateful_stem, n_components == 1, c->file, sizeof c->file);
    if (!c->cfg) return HFX_OK; /* the caller lists every missing one */
    c->g = hfx_graph_new();
    if (!c->g) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    c->opts.dtype = c->cfg->dtype;
    c->opts.component = decl->name;
    c->opts.moe_gather = hfx_settings_moe_gather(c->cfg, decl->single_token);
    return HFX_OK;
}

/* The sentence embedding a forward export ends in, from the config's "pooling" and "normalize";
 * "auto" (the default) follows the checkpoint's modules.json where the architecture pools. */
static hfx_status resolve_pooling(hfx_exporter *e, const hfx_model *model, const hfx_settings *cfg,
                                  hfx_pooling *out, hfx_error *err) {
    hfx_pooling asked_modes = cfg->pool;
    int asked = cfg->pooling, normalize = cfg->normalize;
    bool pools = hfx_arch_pools(model->arch);
    const char *arch = hfx_model_architecture(model);
    memset(out, 0, sizeof *out);
    if (asked > 0) {
        if (!pools)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: 'pooling': %s has no sentence embedding in hfx "
                                                      "(a bare encoder's token embeddings are pooled)", arch);
        *out = asked_modes;
        out->normalize = normalize == 1;
        return HFX_OK;
    }
    bool found = false;
    if (asked == 0 && pools) {
        hfx_status st = hfx_sentence_pooling(model->ck, &found, out, err);
        for (int i = 0; !st && i < out->n_dense; i++) /* the Dense modules' weights, read beside the model's */
            st = hfx_checkpoint_add_module(model->ck, out->dense[i].module, err);
        if (st) {
            hfx_error_prefix(err, "pooling \"auto\" (set \"none\" to export the encoder alone)");
            return st;
        }
    } else if (asked == 0 && hfx_sentence_files(model->ck, (const char *[1]){0}, 1, (char[8]){0}, 8) > 0) {
        char line[256];
        snprintf(line, sizeof line, "modules.json's pooling is not applied: %s ends in its own outputs", arch);
        warn(e, line);
    }
    if (found && out->score && normalize == 1)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'normalize': the folder ends in a LogitScore's scores, "
                        "not an embedding");
    if (!found && normalize == 1)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'normalize' needs a pooling mode%s",
                        asked < 0 ? " (pooling is \"none\")" : " (the checkpoint has no sentence-transformers modules.json)");
    if (found && normalize >= 0) out->normalize = normalize == 1;
    return HFX_OK;
}

/* The format's embedding-pipeline layout (hfx_format.embedding_option): the bare encoder's last_hidden_state alone
 * in `stateful_file`; the pipeline pools, so a sentence-transformers folder's pooling is only recorded (export.json),
 * and must be one it has. */
static hfx_status embedding_layout(const hfx_exporter *e, const hfx_model *model, const hfx_settings *cfg,
                                   component *c, hfx_error *err) {
    const char *opt = e->fmt->embedding_option, *arch = hfx_model_architecture(model);
    if (!hfx_arch_pools(model->arch))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s': %s is not a bare encoder (whose token "
                        "embeddings an embedding pipeline pools)", opt, arch);
    if (cfg->pooling > 0 || cfg->normalize == 1)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: '%s': the pipeline pools and normalizes (its own "
                        "config says how): give no pooling or normalize", opt);
    bool found = false;
    hfx_status st = cfg->pooling == 0 ? hfx_sentence_pooling(model->ck, &found, &c->opts.pooling, err) : HFX_OK;
    if (st) return st;
    const hfx_pooling *p = &c->opts.pooling;
    if (found && p->score)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s': the folder is a CrossEncoder (modules.json: "
                        "LogitScore), not an embedding model", opt);
    if (found && (p->n != 1 || p->n_dense ||
                  (p->modes[0] != HFX_POOL_CLS && p->modes[0] != HFX_POOL_MEAN && p->modes[0] != HFX_POOL_LAST_TOKEN)))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "export config: '%s': the folder's pipeline (modules.json: %s%s) is "
                        "not one the embedding pipeline runs (one of cls, mean, lasttoken, then Normalize or not)",
                        opt, p->n == 1 ? hfx_pool_mode_name(p->modes[0]) : "several pooling modes",
                        p->n_dense ? ", Dense modules" : "");
    c->opts.states_only = true;
    snprintf(c->file, sizeof c->file, "%s", e->fmt->stateful_file);
    return HFX_OK;
}

hfx_status hfx_export(hfx_exporter *e, hfx_model *model, const hfx_sample_inputs *samples,
                      const hfx_export_config *cfg, const char *out_dir, hfx_error *err) {
    if (!cfg) cfg = e->cfg;
    if (hfx_export_config_settings(cfg, NULL)->format != e->fmt)
        return hfx_fail(err, HFX_ERR_INVALID, "export config format '%s' does not match the exporter's '%s'",
                        hfx_export_config_settings(cfg, NULL)->format->name, e->fmt->name);
    hfx_component_set set = hfx_arch_components(model->arch, HFX_EXPORT_FORWARD);
    if (set.n == 0) /* a VLM: the image merge between its graphs is the caller's */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s has no single forward graph in hfx: export it for generation "
                                                  "(--for-generation), as its components",
                        hfx_model_architecture(model));
    if (set.n != 1)
        return hfx_fail(err, HFX_ERR_INTERNAL, "%s declares %d forward graphs; hfx_export writes one",
                        hfx_model_architecture(model), set.n);
    component c = {0};
    e->warnings[0] = 0;
    hfx_status st = start_component(e, &set.items[0], cfg, false, false, 1, &c, err);
    if (!st && !c.cfg)
        st = hfx_fail(err, HFX_ERR_INVALID, "export config: per-component config lacks component '%s'", set.items[0].name);
    /* a state option (OpenVINO's stateful) is a no-op here, as in the seed: a forward has no state */
    if (!st) st = choose_dims(c.cfg, samples, hfx_arch_sequence_inputs(model->arch), false, c.g, &c.opts, NULL, err);
    int k = e->fmt->embedding_option ? hfx_format_option_index(e->fmt, e->fmt->embedding_option) : -1;
    if (!st && k >= 0 && c.cfg->opt[k]) st = embedding_layout(e, model, c.cfg, &c, err);
    else if (!st) st = resolve_pooling(e, model, c.cfg, &c.opts.pooling, err);
    if (!st) st = run_export(e, model, &c, 1, cfg, NULL, 0, NULL, NULL, out_dir, err);
    free_components(&c, 1);
    return st;
}
/* ---- export_for_generation ---- */

/* The cache the components use: the export config first, then the generation config. */
static hfx_status resolve_cache(const hfx_settings *cfg, const json_t *gen, bool *is_static,
                                int64_t *max_len, hfx_error *err) {
    *is_static = cfg->cache == HFX_CACHE_IS_STATIC;
    const json_t *impl = gen && !cfg->cache ? json_object_get(gen, "cache_implementation") : NULL;
    if (impl && !json_is_null(impl) && !json_is_string(impl))
        return hfx_fail(err, HFX_ERR_INVALID, "generation_config: 'cache_implementation' must be a string");
    /* generation_config's value is transformers' runtime default ("hybrid" for Gemma 2, ...):
     * only "static" asks for a fixed-size cache there (the export config's is one of its choices) */
    if (impl && json_is_string(impl)) *is_static = strcmp(json_string_value(impl), "static") == 0;
    *max_len = cfg->max_cache_len;
    if (!*max_len && gen) {
        const json_t *v = json_object_get(gen, "max_cache_len");
        if (v && !json_is_null(v) &&
            (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX))
            return hfx_fail(err, HFX_ERR_INVALID, "generation_config: 'max_cache_len' must be an integer in [1, %d]",
                            INT32_MAX);
        if (json_is_integer(v)) *max_len = json_integer_value(v);
    }
    if (*is_static && !*max_len)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "a static cache needs its length: --max-cache-len N, \"max_cache_len\" in the export config, "
                        "or max_cache_len in generation_config.json");
    return HFX_OK;
}

/* The ids of special-token `key` as generate() reads them: generation_config.json's value when it
 * has the key (null: none), else config.json's; an id or a list of them, up to `max` kept, any
 * that is not a non-negative integer left out. Returns how many. */
static int token_ids(const json_t *gen, const json_t *config, const char *key, int64_t *ids, int max) {
    const json_t *v = gen ? json_object_get(gen, key) : NULL;
    if (!v) v = json_object_get(config, key);
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    int k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        const json_t *id = json_is_array(v) ? json_array_get(v, i) : v;
        if (json_is_integer(id) && json_integer_value(id) >= 0) ids[k++] = json_integer_value(id);
    }
    return k;
}

static void special_tokens(const json_t *gen, const json_t *config, hfx_special_tokens *t) {
    *t = (hfx_special_tokens){.bos = -1};
    token_ids(gen, config, "bos_token_id", &t->bos, 1);
    t->n_eos = token_ids(gen, config, "eos_token_id", t->eos, (int)(sizeof t->eos / sizeof t->eos[0]));
}

/* A format that plans memory for the largest size (ExecuTorch) needs every dim bounded: no
 * prompt, past or cache holds more than max_cache_len positions, so that bounds a length dim
 * (a lone symbol) that nothing else bounds tighter. */
static void bound_by_cache(hfx_graph *g, hfx_dim d, int64_t max_len) {
    if (d.n == 1 && d.c == 0 && d.coef[0] == 1 && g->symbols[d.sym[0]].max > max_len) g->symbols[d.sym[0]].max = max_len;
}

/* Whether the format keeps this export's state inside the model: its state option, read from
 * the first component config there is (the option is shared, so any one says it). */
static bool state_inside(const hfx_exporter *e, const hfx_model *model, const hfx_export_config *cfg) {
    if (!e->fmt->state_option) return false;
    int k = hfx_format_option_index(e->fmt, e->fmt->state_option);
    for (int kind = HFX_EXPORT_GENERATION; kind <= HFX_EXPORT_GENERATION_ONE_GRAPH; kind++) {
        hfx_component_set set = hfx_arch_components(model->arch, (hfx_export_kind)kind);
        for (int i = 0; i < set.n; i++) {
            const hfx_settings *c = hfx_export_config_settings(cfg, set.items[i].name);
            if (c) return c->opt[k] != 0;
        }
    }
    return false;
}

/* generation_config.json as given (NULL: the checkpoint's), parsed into *owned. */
static hfx_status generation_config(const hfx_model *model, const char *text, const json_t **gen, json_t **owned,
                                    hfx_error *err) {
    *owned = NULL;
    *gen = hfx_checkpoint_generation_config(model->ck);
    if (!text) return HFX_OK;
    json_error_t je;
    *gen = *owned = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!*owned && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (*owned && json_is_object(*owned)) return HFX_OK;
    hfx_status st = hfx_fail(err, HFX_ERR_INVALID, "generation config: line %d: %s", je.line,
                             *owned ? "must be a JSON object" : je.text);
    json_decref(*owned);
    *owned = NULL;
    return st;
}

/* Which graphs a generation export writes: the state inside them or passed in and out, the seed's
 * profile or optimum's, one graph for prompt and steps or a prefill and a decode. */
typedef struct gen_layout {
    bool stateful;          /* the format keeps the cache inside (OpenVINO's variables) */
    bool seed;              /* io "seed" */
    int multi_token_decode; /* the decode takes any number of tokens */
    hfx_export_kind kind;
} gen_layout;

static hfx_status choose_layout(const hfx_exporter *e, const hfx_model *model, const hfx_export_config *cfg,
                                int multi_token_decode, gen_layout *l, hfx_error *err) {
    /* a stateful model (OpenVINO's variables) is one graph serving the prompt and every step,
     * its growing cache inside: the one-graph layout */
    l->stateful = state_inside(e, model, cfg);
    if (l->stateful && hfx_arch_components(model->arch, HFX_EXPORT_GENERATION_ONE_GRAPH).n == 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "%s: a stateful %s export keeps the cache inside one graph that serves prompt and steps, which "
                        "hfx does not write for this model yet; export its separate graphs with \"%s\": false in the "
                        "export config",
                        hfx_model_architecture(model), e->fmt->name, e->fmt->state_option);
    l->multi_token_decode = multi_token_decode || l->stateful;
    /* the seed's profile keeps its prefill graph beside a multi-token decode */
    const hfx_settings *first = hfx_export_config_settings(cfg, "decode");
    l->seed = first && first->io_seed;
    if (l->seed && !e->fmt->seed_io)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "io \"seed\" is not available for export_format '%s' yet",
                        e->fmt->name);
    l->kind = !l->multi_token_decode ? HFX_EXPORT_GENERATION
              : l->seed             ? HFX_EXPORT_GENERATION_MULTI
                                    : HFX_EXPORT_GENERATION_ONE_GRAPH;
    /* the seed's stateful profile of a model it decodes one token at a time (an encoder-decoder):
     * its prefill and its single-token decode, the state kept in the decode */
    if (l->kind == HFX_EXPORT_GENERATION_MULTI && l->stateful && !multi_token_decode &&
        !hfx_arch_components(model->arch, l->kind).n) {
        l->kind = HFX_EXPORT_GENERATION;
        l->multi_token_decode = 0;
    }
    return HFX_OK;
}

/* Every component started; a per-component map must name them all. */
static hfx_status start_components(const hfx_exporter *e, hfx_component_set set, const hfx_export_config *cfg,
                                   const gen_layout *l, component *cs, hfx_error *err) {
    char missing[256] = "", names[256] = "";
    hfx_status st = HFX_OK;
    for (int i = 0; i < set.n && !st; i++) {
        st = start_component(e, &set.items[i], cfg, l->stateful, l->seed, set.n, &cs[i], err);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", set.items[i].name);
        if (!cs[i].cfg)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", *missing ? ", " : "",
                     set.items[i].name);
    }
    if (!st && *missing)
        st = hfx_fail(err, HFX_ERR_INVALID, "export config: the per-component config lacks: %s (components: %s)",
                      missing, names);
    return st;
}

/* A component's settings that generation refuses or that must agree with the others'. */
static hfx_status check_generation_settings(const hfx_exporter *e, const component *c, const gen_layout *l,
                                            bool is_static, int64_t max_len, hfx_error *err) {
    if (e->fmt->bounded_dims && !max_len)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s plans memory for the largest size of every dim: generation needs max_cache_len, the "
                        "most positions the cache holds (--max-cache-len N, \"max_cache_len\" in the export config, "
                        "or max_cache_len in generation_config.json)",
                        e->fmt->name);
    if (l->stateful && is_static)
        return hfx_fail(err, HFX_ERR_INVALID, "a stateful %s model keeps a growing cache in its variables; "
                                              "export a static cache with %s false",
                        e->fmt->name, e->fmt->state_option);
    if (c->cfg->io_seed != l->seed)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: components disagree on io; it names every graph's inputs");
    if (c->cfg->pooling > 0 || c->cfg->normalize == 1)
        return hfx_fail(err, HFX_ERR_INVALID, "export config: 'pooling' and 'normalize' shape a forward export's "
                                              "sentence embedding, not generation graphs");
    /* static shapes freeze the query length at the sample's (as the seed's static export does): a fixed multi-token
       graph over a static cache, each call that many tokens (the caller pads the last); a growing cache's varies */
    if (l->multi_token_decode && !l->stateful && !c->cfg->dynamic && !c->cfg->dynamic_shapes && !is_static)
        return hfx_fail(err, HFX_ERR_INVALID, "multi_token_decode with a growing cache needs dynamic shapes "
                                              "(--dynamic): its query and cache lengths vary; with static shapes, a "
                                              "static cache (--cache static) and a fixed query length (the sample's)");
    return HFX_OK;
}

/* A component's build options for generation: its dims, its cache and its I/O. */
static hfx_status generation_opts(const hfx_exporter *e, const hfx_model *model, const hfx_sample_inputs *samples,
                                  const gen_layout *l, bool is_static, int64_t max_len, component *c, hfx_error *err) {
    hfx_build_opts *o = &c->opts;
    hfx_dim cache_dim = {0};
    bool seed = l->seed;
    bool mask4 = seed && is_static; /* the seed's mask is [batch, 1, seq, cache] (its decode's) */
    hfx_status st = choose_dims(c->cfg, samples, hfx_arch_sequence_inputs(model->arch), mask4, c->g, o, &cache_dim, err);
    if (st) return st;
    bool dynamic = c->cfg->dynamic || c->cfg->dynamic_shapes;
    o->source_seq = o->seq;
    if (c->decl->single_token) o->seq = hfx_dim_const(1);
    if (c->stateful && hfx_dim_is_const(o->seq)) /* prompt and steps: the query length varies */
        o->seq = hfx_dim_sym(hfx_graph_symbol(c->g, "sequence_length", 1, INT32_MAX));
    o->cache = is_static ? HFX_CACHE_STATIC : HFX_CACHE_DYNAMIC;
    o->io = seed ? HFX_IO_SEED : HFX_IO_OPTIMUM;
    o->reads_state = c->decl->reads_state;
    o->stateful = c->stateful;
    o->one_graph = l->multi_token_decode && !seed;
    o->has_past = !is_static && c->decl->reads_state;
    o->past = hfx_dim_sym(hfx_graph_symbol(c->g, "past_sequence_length", 0, INT32_MAX));
    /* the seed's static prefill starts a cache of the fixed length; its steps take any */
    o->max_cache = dynamic && !(seed && !c->decl->reads_state)
                       ? hfx_dim_sym(hfx_graph_symbol(c->g, "max_cache_len", 1, INT32_MAX))
                       : hfx_dim_const(max_len);
    if (c->decl->reads_state && !hfx_dim_is_const(cache_dim)) o->max_cache = cache_dim; /* named by dynamic_shapes */
    /* (waveform samples: the sequence is not the cache's positions, dynamic_shapes bounds it; the family bounds its
     * decoder's tokens by the cache) */
    bool waveform = strcmp(hfx_arch_sequence_inputs(model->arch)[0], "input_values") == 0;
    if (e->fmt->bounded_dims && max_len) {
        if (!waveform) bound_by_cache(c->g, o->seq, max_len);
        bound_by_cache(c->g, o->past, max_len);
        o->max_cache = hfx_dim_const(max_len); /* its memory is planned at M anyway */
    }
    /* the seed returns every position's logits */
    int keep = c->decl->logits_to_keep >= 0 && seed ? 0 : c->decl->logits_to_keep;
    o->logits_last = keep >= 0 && (c->cfg->logits_to_keep >= 0 ? c->cfg->logits_to_keep : keep) == 1;
    if (is_static && hfx_dim_is_const(o->seq) && o->seq.c > max_len)
        return hfx_fail(err, HFX_ERR_INVALID, "sequence length %lld is longer than max_cache_len %lld",
                        (long long)o->seq.c, (long long)max_len);
    return HFX_OK;
}

/* genai_config.json where onnxruntime-genai runs the export: one graph for prompt and steps with a
 * growing cache — a causal LM's, or Whisper's decoder after the encoder that computes the
 * cross-attention cache. *genai NULL (and a warning) where it runs none of this layout. */
static hfx_status genai_config(hfx_exporter *e, const hfx_model *model, const json_t *gen, const component *cs,
                               int n, json_t **genai, hfx_error *err) {
    char why[256] = "", line[300];
    hfx_status st = HFX_OK;
    hfx_genai_layout layout = hfx_arch_genai(model->arch);
    if (layout == HFX_GENAI_WHISPER && n == 2) {
        st = hfx_genai_whisper_config(hfx_checkpoint_config(model->ck), gen, cs[0].file, cs[1].file, genai, why,
                                      sizeof why, err);
    } else if (layout != HFX_GENAI_DECODER || n != 1) {
        snprintf(why, sizeof why, n == 2 ? "onnxruntime-genai runs no encoder-decoder model but Whisper"
                                         : "onnxruntime-genai runs no vision-language model of this layout");
    } else {
        int layers = hfx_arch_cache_layers(model->arch, NULL, 0);
        hfx_layer_cache *all = layers > 0 ? calloc((size_t)layers, sizeof *all) : NULL;
        if (!all) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        else hfx_arch_cache_layers(model->arch, all, layers);
        if (!st)
            st = hfx_genai_config(hfx_checkpoint_config(model->ck), gen, all, layers, hfx_arch_genai_type(model->arch),
                                  cs[0].file, genai, why, sizeof why, err);
        free(all);
    }
    if (!st && why[0]) {
        snprintf(line, sizeof line, "no genai_config.json: %s", why);
        warn(e, line);
    }
    return st;
}

/* Whether layout l writes a component declared for `when`. */
static bool written_in(hfx_component_when when, const gen_layout *l) {
    switch (when) {
    case HFX_WHEN_STATEFUL: return l->stateful;
    case HFX_WHEN_NOT_STATEFUL: return !l->stateful;
    case HFX_WHEN_SEED: return l->seed;
    case HFX_WHEN_NOT_SEED: return !l->seed;
    default: return true;
    }
}

/* The components of `set` layout l writes, copied into kept[max] (a set past max: returned as it is, refused by
 * the caller). */
static hfx_component_set in_layout(hfx_component_set set, const gen_layout *l, hfx_component *kept, int max) {
    int n = 0;
    if (set.n > max) return set;
    for (int i = 0; i < set.n; i++)
        if (written_in(set.items[i].when, l)) kept[n++] = set.items[i];
    return (hfx_component_set){kept, n};
}

hfx_status hfx_export_for_generation(hfx_exporter *e, hfx_model *model,
                                     const hfx_sample_inputs *samples, const hfx_export_config *cfg,
                                     const char *generation_config_json, int multi_token_decode,
                                     const char *out_dir, hfx_error *err) {
    if (!cfg) cfg = e->cfg;
    e->warnings[0] = 0;
    if (hfx_arch_components(model->arch, HFX_EXPORT_GENERATION).n == 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s cannot be exported for generation",
                        hfx_model_architecture(model));
    json_t *gen_owned = NULL;
    const json_t *gen = NULL;
    gen_layout l = {0};
    hfx_status st = generation_config(model, generation_config_json, &gen, &gen_owned, err);
    if (!st) st = choose_layout(e, model, cfg, multi_token_decode, &l, err);
    if (st) {
        json_decref(gen_owned);
        return st;
    }
    enum { MAX_COMPONENTS = 8 };
    hfx_component kept[MAX_COMPONENTS];
    hfx_component_set set = in_layout(hfx_arch_components(model->arch, l.kind), &l, kept, MAX_COMPONENTS);
    int n = set.n;
    component cs[MAX_COMPONENTS] = {{0}};
    if (n < 1 || n > MAX_COMPONENTS) {
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s has no %s export", hfx_model_architecture(model),
                      l.multi_token_decode ? "multi-token decode" : "generation");
        n = 0;
    }
    if (!st) st = start_components(e, set, cfg, &l, cs, err);
    /* one cache for every component: prefill fills what decode reads */
    bool is_static = false;
    int64_t max_len = 0;
    for (int i = 0; i < n && !st; i++) {
        bool comp_static = false;
        int64_t comp_len = 0;
        st = resolve_cache(cs[i].cfg, gen, &comp_static, &comp_len, err);
        if (!st && i > 0 && (comp_static != is_static || comp_len != max_len))
            st = hfx_fail(err, HFX_ERR_INVALID, "export config: components disagree on the cache; prefill fills what decode reads");
        is_static = comp_static;
        max_len = comp_len;
        if (!st) st = check_generation_settings(e, &cs[i], &l, is_static, max_len, err);
        if (!st) st = generation_opts(e, model, samples, &l, is_static, max_len, &cs[i], err);
    }
    json_t *generation = NULL, *genai = NULL;
    if (!st) {
        generation = json_object();
        json_object_set_new(generation, "cache_implementation", json_string(is_static ? "static" : "dynamic"));
        json_object_set_new(generation, "max_cache_len", max_len ? json_integer(max_len) : json_null());
        json_object_set_new(generation, "multi_token_decode", json_boolean(l.multi_token_decode));
        if (l.multi_token_decode && !is_static && !l.seed && e->fmt->genai_config)
            st = genai_config(e, model, gen, cs, n, &genai, err);
        hfx_special_tokens tokens;
        special_tokens(gen, hfx_checkpoint_config(model->ck), &tokens);
        if (!st) st = run_export(e, model, cs, n, cfg, generation, max_len, genai, &tokens, out_dir, err);
    }
    json_decref(genai);
    json_decref(generation);
    free_components(cs, n);
    json_decref(gen_owned);
    return st;
}
