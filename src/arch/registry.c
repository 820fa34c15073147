/* The one list of supported architectures: name → family + descriptor. */
#include <string.h>

#include "arch/arch.h"
#include "arch/decoder.h"
#include "base/status.h"

/* The decoder-only families, as differences from Llama (decoder.h says what each field means).
 * Fields: architecture, attention bias rule, mlp_bias key, q/k norm, sliding rule, sliding pattern,
 * norm, layout, gated MLP, activation key, default activation, legacy gelu = tanh, eps key,
 * default tie, √hidden embeddings, Granite multipliers, attention scale, soft-caps, local rope,
 * default rope theta. */
#define DECODER(arch, bias, mlp_bias, qk, sliding, pattern, norm, layout, gated, act_key, act, gelu_tanh, eps, tied, \
                sqrt_embed, granite, scale, softcaps, local_rope, theta)                                          \
    static const hfx_decoder_desc arch##_desc = {#arch, bias, mlp_bias, qk, sliding, pattern, norm, layout, gated,   \
                                                 act_key, act, gelu_tanh, eps, tied, sqrt_embed, granite, scale,  \
                                                 softcaps, local_rope, theta};

DECODER(LlamaForCausalLM, HFX_BIAS_FROM_CONFIG, true, HFX_QK_NORM_NONE, HFX_SLIDING_NONE, 0, HFX_NORM_RMS,
        HFX_LAYOUT_PRE, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, false, HFX_SCALE_HEAD_DIM,
        false, false, 0)
DECODER(MistralForCausalLM, HFX_BIAS_NONE, false, HFX_QK_NORM_NONE, HFX_SLIDING_ALL, 0, HFX_NORM_RMS,
        HFX_LAYOUT_PRE, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, false, HFX_SCALE_HEAD_DIM,
        false, false, 0)
DECODER(Qwen2ForCausalLM, HFX_BIAS_QKV, false, HFX_QK_NORM_NONE, HFX_SLIDING_MAX_WINDOW, 0, HFX_NORM_RMS,
        HFX_LAYOUT_PRE, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, false, HFX_SCALE_HEAD_DIM,
        false, false, 0)
DECODER(Qwen3ForCausalLM, HFX_BIAS_FROM_CONFIG, false, HFX_QK_NORM_PER_HEAD, HFX_SLIDING_MAX_WINDOW, 0, HFX_NORM_RMS,
        HFX_LAYOUT_PRE, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, false, HFX_SCALE_HEAD_DIM,
        false, false, 0)
DECODER(GraniteForCausalLM, HFX_BIAS_FROM_CONFIG, true, HFX_QK_NORM_NONE, HFX_SLIDING_NONE, 0, HFX_NORM_RMS,
        HFX_LAYOUT_PRE, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, true,
        HFX_SCALE_ATTN_MULTIPLIER, false, false, 0)
DECODER(Olmo2ForCausalLM, HFX_BIAS_FROM_CONFIG, false, HFX_QK_NORM_WHOLE, HFX_SLIDING_NONE, 0, HFX_NORM_RMS,
        HFX_LAYOUT_POST, true, "hidden_act", "silu", false, "rms_norm_eps", false, false, false, HFX_SCALE_HEAD_DIM,
        false, false, 0)
DECODER(Starcoder2ForCausalLM, HFX_BIAS_USE_BIAS, false, HFX_QK_NORM_NONE, HFX_SLIDING_ALL, 0, HFX_NORM_LAYER,
        HFX_LAYOUT_PRE, false, "hidden_act", "gelu_pytorch_tanh", false, "norm_epsilon", true, false, false,
        HFX_SCALE_HEAD_DIM, false, false, 0)
DECODER(GemmaForCausalLM, HFX_BIAS_FROM_CONFIG, false, HFX_QK_NORM_NONE, HFX_SLIDING_NONE, 0, HFX_NORM_RMS_OFFSET,
        HFX_LAYOUT_PRE, true, "hidden_act", "gelu_pytorch_tanh", true, "rms_norm_eps", true, true, false,
        HFX_SCALE_HEAD_DIM, false, false, 0)
DECODER(Gemma2ForCausalLM, HFX_BIAS_FROM_CONFIG, false, HFX_QK_NORM_NONE, HFX_SLIDING_PATTERN, 2, HFX_NORM_RMS_OFFSET,
        HFX_LAYOUT_SANDWICH, true, "hidden_activation", "gelu_pytorch_tanh", false, "rms_norm_eps", true, true, false,
        HFX_SCALE_QUERY_PRE_ATTN, true, false, 0)
DECODER(Gemma3ForCausalLM, HFX_BIAS_FROM_CONFIG, false, HFX_QK_NORM_PER_HEAD, HFX_SLIDING_PATTERN, 6,
        HFX_NORM_RMS_OFFSET, HFX_LAYOUT_SANDWICH, true, "hidden_activation", "gelu_pytorch_tanh", false,
        "rms_norm_eps", true, true, false, HFX_SCALE_QUERY_PRE_ATTN, true, true, 1000000.0)

static const struct entry {
    const char *name;
    const hfx_arch_family *family;
    const void *desc;
} registry[] = {
    {"LlamaForCausalLM", &hfx_decoder_family, &LlamaForCausalLM_desc},
    {"MistralForCausalLM", &hfx_decoder_family, &MistralForCausalLM_desc},
    {"Qwen2ForCausalLM", &hfx_decoder_family, &Qwen2ForCausalLM_desc},
    {"Qwen3ForCausalLM", &hfx_decoder_family, &Qwen3ForCausalLM_desc},
    {"GraniteForCausalLM", &hfx_decoder_family, &GraniteForCausalLM_desc},
    {"Olmo2ForCausalLM", &hfx_decoder_family, &Olmo2ForCausalLM_desc},
    {"Starcoder2ForCausalLM", &hfx_decoder_family, &Starcoder2ForCausalLM_desc},
    {"GemmaForCausalLM", &hfx_decoder_family, &GemmaForCausalLM_desc},
    {"Gemma2ForCausalLM", &hfx_decoder_family, &Gemma2ForCausalLM_desc},
    {"Gemma3ForCausalLM", &hfx_decoder_family, &Gemma3ForCausalLM_desc},
};

struct hfx_arch_model {
    const struct entry *entry;
    void *cfg; /* family-specific, arena-owned */
};

const char *hfx_arch_supported(void) {
    return "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
           "GraniteForCausalLM, Olmo2ForCausalLM, Starcoder2ForCausalLM, GemmaForCausalLM, "
           "Gemma2ForCausalLM, Gemma3ForCausalLM";
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
