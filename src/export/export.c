/* hfx_export: pick the dims, build the graph, write it with the chosen backend, and write the
 * files that travel with it — all inside one output-directory transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/status.h"
#include "export/config.h"
#include "export/model.h"
#include "export/outdir.h"
#include "fmt/onnx/onnx.h"

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
    hfx_progress_fn progress;
    void *progress_user;
};

hfx_status hfx_exporter_from_config(const hfx_export_config *cfg, hfx_exporter **out,
                                    hfx_error *err) {
    hfx_exporter *e = calloc(1, sizeof *e);
    if (!e || !(e->cfg = hfx_export_config_clone(cfg))) {
        free(e);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    *out = e;
    return HFX_OK;
}

void hfx_exporter_set_progress(hfx_exporter *e, hfx_progress_fn fn, void *user) {
    e->progress = fn;
    e->progress_user = user;
}

void hfx_exporter_free(hfx_exporter *e) {
    if (!e) return;
    hfx_export_config_free(e->cfg);
    free(e);
}

/* ---- dims ---- */

/* The batch and sequence dims of the forward graph: static from the sample inputs (default
 * 2 × 16), symbolic with `dynamic`, or as `dynamic_shapes` names them. The three inputs share
 * both axes, so a spec that names them differently is refused. */
static hfx_status choose_dims(const hfx_export_config *cfg, const hfx_sample_inputs *s,
                              hfx_graph *g, hfx_build_opts *o, hfx_error *err) {
    int64_t sample[2] = {2, 16};
    for (int i = 0; s && i < s->n; i++)
        if (strcmp(s->items[i].name, "input_ids") == 0) {
            if (s->items[i].rank != 2)
                return hfx_fail(err, HFX_ERR_INVALID, "sample input 'input_ids' must be [batch, sequence]");
            sample[0] = s->items[i].shape[0];
            sample[1] = s->items[i].shape[1];
        }
    if (sample[0] < 1 || sample[1] < 1)
        return hfx_fail(err, HFX_ERR_INVALID, "sample batch size and sequence length must be ≥ 1");
    static const char *const axis_names[2] = {"batch_size", "sequence_length"};
    const json_t *spec = hfx_cfg_dynamic_shapes(cfg);
    if (!spec) {
        for (int a = 0; a < 2; a++) {
            hfx_dim d = hfx_cfg_dynamic(cfg) ? hfx_dim_sym(hfx_graph_symbol(g, axis_names[a], 1, INT32_MAX))
                                             : hfx_dim_const(sample[a]);
            if (a == 0) o->batch = d;
            else o->seq = d;
        }
        return HFX_OK;
    }
    static const char *const inputs[3] = {"input_ids", "attention_mask", "position_ids"};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)spec, key, v) {
        bool known = false;
        for (int i = 0; i < 3; i++) known |= strcmp(key, inputs[i]) == 0;
        if (!known)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "export config: dynamic_shapes names input '%s', which this model does not take "
                            "(inputs: input_ids, attention_mask, position_ids)", key);
        const char *axis;
        json_t *x;
        json_object_foreach(v, axis, x) if (strcmp(axis, "0") != 0 && strcmp(axis, "1") != 0)
            return hfx_fail(err, HFX_ERR_INVALID, "export config: dynamic_shapes['%s'] has axis %s; these inputs are rank 2", key, axis);
    }
    for (int a = 0; a < 2; a++) {
        char axis[2] = {(char)('0' + a), 0};
        const json_t *chosen = NULL;
        const char *chosen_from = NULL;
        for (int i = 0; i < 3; i++) {
            const json_t *x = json_object_get(json_object_get(spec, inputs[i]), axis);
            if (!x || json_is_null(x)) continue;
            if (chosen && (!json_equal((json_t *)json_object_get(chosen, "name"), (json_t *)json_object_get(x, "name"))))
                return hfx_fail(err, HFX_ERR_INVALID,
                                "export config: dynamic_shapes gives axis %d of '%s' and '%s' different names; they are one dim",
                                a, chosen_from, inputs[i]);
            chosen = x;
            chosen_from = inputs[i];
        }
        hfx_dim d = hfx_dim_const(sample[a]);
        if (chosen) {
            const json_t *mn = json_object_get(chosen, "min"), *mx = json_object_get(chosen, "max");
            d = hfx_dim_sym(hfx_graph_symbol(g, json_string_value(json_object_get(chosen, "name")),
                                             json_is_integer(mn) ? json_integer_value(mn) : 1,
                                             json_is_integer(mx) ? json_integer_value(mx) : INT32_MAX));
        }
        if (a == 0) o->batch = d;
        else o->seq = d;
    }
    return HFX_OK;
}

/* ---- side files ---- */

static const char *const side_files[] = {
    "generation_config.json", "tokenizer.json", "tokenizer_config.json",
    "special_tokens_map.json", "added_tokens.json", "vocab.json", "vocab.txt", "merges.txt",
    "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja",
    "chat_template.json"};

static hfx_status copy_side_files(hfx_outdir *out, const char *src_dir, hfx_error *err) {
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/config.json", src_dir);
    hfx_status st = hfx_outdir_copy(out, "config.json", path, err);
    for (size_t i = 0; !st && i < sizeof side_files / sizeof side_files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", src_dir, side_files[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            st = hfx_outdir_copy(out, side_files[i], path, err);
    }
    return st;
}

/* The graph's own description of itself (the seed's export metadata). */
static json_t *metadata(const hfx_graph *g, const char *arch, hfx_dtype dt) {
    json_t *md = json_object(), *ins = json_array(), *outs = json_array();
    for (int i = 0; i < g->n_inputs; i++) json_array_append_new(ins, json_string(g->inputs[i]->name));
    for (int i = 0; i < g->n_outputs; i++) json_array_append_new(outs, json_string(g->outputs[i]->name));
    json_object_set_new(md, "schema_version", json_integer(1));
    json_object_set_new(md, "architecture", json_string(arch));
    json_object_set_new(md, "dtype", json_string(dt == HFX_DTYPE_F16 ? "float16" : dt == HFX_DTYPE_BF16 ? "bfloat16" : "float32"));
    json_object_set_new(md, "input_names", ins);
    json_object_set_new(md, "output_names", outs);
    json_object_set_new(md, "producer", json_string("hfx " HFX_VERSION_STRING));
    return md;
}

static hfx_status write_json(hfx_outdir *out, const char *name, json_t *obj, hfx_error *err) {
    char *text = obj ? json_dumps(obj, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    if (!text) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    size_t n = strlen(text);
    hfx_status st = hfx_outdir_write(out, name, text, n, err);
    free(text);
    return st;
}

hfx_status hfx_export(hfx_exporter *e, hfx_model *model, const hfx_sample_inputs *samples,
                      const hfx_export_config *cfg, const char *out_dir, hfx_error *err) {
    if (!cfg) cfg = e->cfg;
    if (strcmp(hfx_cfg_format(cfg), hfx_cfg_format(e->cfg)) != 0)
        return hfx_fail(err, HFX_ERR_INVALID, "export config format '%s' does not match the exporter's '%s'",
                        hfx_cfg_format(cfg), hfx_cfg_format(e->cfg));
    hfx_graph *g = hfx_graph_new();
    if (!g) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_build_opts o = {.dtype = hfx_cfg_dtype(cfg)};
    hfx_status st = choose_dims(cfg, samples, g, &o, err);
    if (!st) st = hfx_arch_build_forward(model->arch, model->ck, &o, g, err);
    if (!st) st = hfx_graph_verify(g, err);
    json_t *md = st ? NULL : metadata(g, hfx_model_architecture(model), o.dtype);
    if (!st) {
        char *text = json_dumps(md, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        else hfx_graph_set_meta(g, "transformers_export_metadata", text);
        free(text);
    }
    hfx_outdir *out = NULL;
    if (!st) st = hfx_outdir_open(out_dir, &out, err);
    if (!st) {
        hfx_outdir_set_progress(out, e->progress, e->progress_user);
        hfx_onnx_options oo = {hfx_cfg_opset(cfg) ? hfx_cfg_opset(cfg) : HFX_ONNX_OPSET_DEFAULT,
                               hfx_cfg_external_data(cfg), "model"};
        st = hfx_onnx_write(g, &oo, out, err);
        if (!st) st = copy_side_files(out, hfx_checkpoint_dir(model->ck), err);
        if (!st) {
            char *text = hfx_export_config_to_json(cfg);
            st = text ? hfx_outdir_write(out, "export_config.json", text, strlen(text), err)
                      : hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
            free(text);
        }
        if (!st) {
            json_t *manifest = json_object(), *comps = json_object(), *comp = json_object();
            json_object_set_new(comp, "file", json_string("model.onnx"));
            json_object_set_new(comp, "role", json_string("model"));
            json_object_set(comp, "metadata", md);
            json_object_set_new(comps, "model", comp);
            json_object_set_new(manifest, "schema_version", json_integer(1));
            json_object_set_new(manifest, "export_format", json_string(hfx_cfg_format(cfg)));
            json_object_set_new(manifest, "components", comps);
            st = write_json(out, "export.json", manifest, err);
            json_decref(manifest);
        }
        if (!st) st = hfx_outdir_commit(out, err);
        else hfx_outdir_abort(out);
    }
    json_decref(md);
    hfx_graph_free(g);
    return st;
}
