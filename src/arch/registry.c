/* The one list of supported architectures: name → family + descriptor. */
#include <string.h>

#include "arch/arch.h"
#include "arch/decoder.h"
#include "base/status.h"

/* Llama and the families that differ from it only in data. */
static const hfx_decoder_desc llama = {"LlamaForCausalLM", HFX_BIAS_FROM_CONFIG, true, false, HFX_SLIDING_NONE};
static const hfx_decoder_desc mistral = {"MistralForCausalLM", HFX_BIAS_NONE, false, false, HFX_SLIDING_ALL};
static const hfx_decoder_desc qwen2 = {"Qwen2ForCausalLM", HFX_BIAS_QKV, false, false, HFX_SLIDING_LAYER_TYPES};
static const hfx_decoder_desc qwen3 = {"Qwen3ForCausalLM", HFX_BIAS_FROM_CONFIG, false, true, HFX_SLIDING_LAYER_TYPES};

static const struct entry {
    const char *name;
    const hfx_arch_family *family;
    const void *desc;
} registry[] = {
    {"LlamaForCausalLM", &hfx_decoder_family, &llama},
    {"MistralForCausalLM", &hfx_decoder_family, &mistral},
    {"Qwen2ForCausalLM", &hfx_decoder_family, &qwen2},
    {"Qwen3ForCausalLM", &hfx_decoder_family, &qwen3},
};

struct hfx_arch_model {
    const struct entry *entry;
    void *cfg; /* family-specific, arena-owned */
};

const char *hfx_arch_supported(void) {
    return "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";
}

hfx_status hfx_arch_open(const hfx_checkpoint *ck, hfx_arena *arena, const hfx_arch_model **out,
                         hfx_error *err) {
    const json_t *archs = json_object_get(hfx_checkpoint_config(ck), "architectures");
    const char *name = json_string_value(json_array_get(archs, 0));
    if (!name)
        return hfx_fail(err, HFX_ERR_INVALID,
                        "%s/config.json: field 'architectures' must be a list holding the model "
                        "class name (supported: %s)",
                        hfx_checkpoint_dir(ck), hfx_arch_supported());
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        if (strcmp(registry[i].name, name) != 0) continue;
        hfx_arch_model *m = hfx_arena_alloc(arena, sizeof *m);
        if (!m) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        m->entry = &registry[i];
        hfx_status st = registry[i].family->parse(registry[i].desc, ck, arena, &m->cfg, err);
        if (st) return st;
        *out = m;
        return HFX_OK;
    }
    return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                    "%s/config.json: architecture '%s' is not supported (supported: %s)",
                    hfx_checkpoint_dir(ck), name, hfx_arch_supported());
}

const char *hfx_arch_name(const hfx_arch_model *m) { return m->entry->name; }

hfx_status hfx_arch_build_forward(const hfx_arch_model *m, const hfx_checkpoint *ck,
                                  const hfx_build_opts *opts, hfx_graph *g, hfx_error *err) {
    return m->entry->family->build_forward(m->entry->desc, m->cfg, ck, opts, g, err);
}

int hfx_arch_cache_layers(const hfx_arch_model *m, hfx_layer_cache *layers, int max) {
    return m->entry->family->cache_layers ? m->entry->family->cache_layers(m->cfg, layers, max) : -1;
}
