/* Opening a model: checkpoint, architecture, and a dry-run build that checks every tensor the
 * architecture needs (no tensor bytes are read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/status.h"
#include "export/model.h"
#include "hf/hub.h"

static hfx_status open_checkpoint(hfx_checkpoint *ck, const char *task, hfx_model **out, hfx_error *err);

hfx_status hfx_model_open(const char *dir, hfx_model **out, hfx_error *err) {
    return hfx_model_open_at(dir, NULL, out, err);
}

hfx_status hfx_model_open_at(const char *model, const char *revision, hfx_model **out, hfx_error *err) {
    return hfx_model_open_task(model, revision, NULL, out, err);
}

hfx_status hfx_model_open_task(const char *model, const char *revision, const char *task, hfx_model **out,
                               hfx_error *err) {
    /* a directory is a checkpoint; otherwise a Hub id is looked up in the local cache */
    struct stat sb;
    char snapshot[4096];
    const char *dir = model;
    if ((revision || stat(model, &sb) != 0) && hfx_hub_is_repo_id(model)) {
        hfx_status st = hfx_hub_resolve(model, revision, snapshot, sizeof snapshot, err);
        if (st) return st;
        dir = snapshot;
    }
    hfx_checkpoint *ck;
    hfx_status st = hfx_checkpoint_open(dir, &ck, err);
    if (!st && (st = hfx_checkpoint_add_lora(ck, err))) hfx_checkpoint_close(ck);
    return st ? st : open_checkpoint(ck, task, out, err);
}

hfx_status hfx_model_open_memory(const char *config_json, const char *generation_config_json,
                                 const hfx_tensor *tensors, size_t n_tensors, hfx_model **out, hfx_error *err) {
    hfx_checkpoint *ck;
    hfx_status st = hfx_checkpoint_open_memory(config_json, generation_config_json, tensors, n_tensors, &ck, err);
    return st ? st : open_checkpoint(ck, NULL, out, err);
}

/* The model over an opened checkpoint (owned from here on): its architecture (the class config.json names, or the
 * one `task` picks where it names none), and a dry-run build that checks every tensor it needs. */
static hfx_status open_checkpoint(hfx_checkpoint *ck, const char *task, hfx_model **out, hfx_error *err) {
    hfx_model *m = calloc(1, sizeof *m);
    if (!m || !(m->arena = hfx_arena_new())) {
        free(m);
        hfx_checkpoint_close(ck);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    m->ck = ck;
    hfx_status st = hfx_arch_open(m->ck, task, m->arena, &m->arch, err);
    if (!st) {
        hfx_graph *g = hfx_graph_new();
        if (!g) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        else {
            hfx_build_opts o = {.dtype = HFX_DTYPE_F32,
                                .batch = hfx_dim_sym(hfx_graph_symbol(g, "batch_size", 1, INT32_MAX)),
                                .seq = hfx_dim_sym(hfx_graph_symbol(g, "sequence_length", 1, INT32_MAX))};
            st = hfx_arch_build_forward(m->arch, m->ck, &o, g, err);
            hfx_graph_free(g);
        }
    }
    if (st) {
        hfx_model_close(m);
        return st;
    }
    *out = m;
    return HFX_OK;
}

void hfx_model_close(hfx_model *m) {
    if (!m) return;
    hfx_checkpoint_close(m->ck);
    hfx_arena_free(m->arena);
    free(m);
}

const char *hfx_model_architecture(const hfx_model *m) { return hfx_arch_name(m->arch); }

void hfx_model_describe(const hfx_model *m, void *out_) {
    FILE *out = out_;
    /* parameters = distinct checkpoint tensors the graph reads (a tied head counts once) */
    uint64_t params = 0, bytes = 0;
    size_t n = hfx_checkpoint_tensor_count(m->ck);
    hfx_graph *g = hfx_graph_new();
    char *seen = calloc(n + 1, 1);
    if (g && seen) {
        hfx_build_opts o = {.dtype = HFX_DTYPE_F32, .batch = hfx_dim_const(1), .seq = hfx_dim_const(1)};
        hfx_error err;
        if (hfx_arch_build_forward(m->arch, m->ck, &o, g, &err) == HFX_OK) {
            for (int i = 0; i < g->n_values; i++) {
                const hfx_init *init = g->values[i]->init;
                long k = init ? hfx_checkpoint_index_of(m->ck, init->source) : -1;
                if (k < 0 || seen[k]) continue;
                seen[k] = 1;
                const hfx_tensor_info *t = hfx_checkpoint_tensor_at(m->ck, (size_t)k);
                params += hfx_numel(t->rank, t->shape);
            }
        }
    }
    free(seen);
    hfx_graph_free(g);
    for (size_t i = 0; i < n; i++) bytes += hfx_checkpoint_tensor_at(m->ck, i)->nbytes;
    fprintf(out, "checkpoint:   %s\n", hfx_checkpoint_dir(m->ck));
    fprintf(out, "architecture: %s\n", hfx_model_architecture(m));
    fprintf(out, "parameters:   %llu\n", (unsigned long long)params);
    fprintf(out, "tensors:      %zu (%llu bytes)\n", n, (unsigned long long)bytes);
    for (size_t i = 0; i < n; i++) {
        const hfx_tensor_info *t = hfx_checkpoint_tensor_at(m->ck, i);
        fprintf(out, "  %-60s %-7s [", t->name, t->blocks ? t->blocks->name : hfx_dtype_name(t->dtype));
        for (int d = 0; d < t->rank; d++) fprintf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        fprintf(out, "] %llu bytes\n", (unsigned long long)t->nbytes);
    }
}
