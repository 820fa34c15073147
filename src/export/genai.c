/* genai_config.json: lets onnxruntime-genai run an export folder. Its decoder is one graph that
 * serves the prompt (empty past) and every step, with a growing cache — exactly the dynamic-cache
 * multi-token decode component — so the file is written for that layout only. */
#include "export/genai.h"

#include <string.h>

#include "base/status.h"
#include "hf/config.h"

static json_t *token_id(const json_t *gen, const json_t *cfg, const char *key) {
    const json_t *v = gen ? json_object_get(gen, key) : NULL;
    if (!v || json_is_null(v)) v = json_object_get(cfg, key);
    if (json_is_array(v)) v = json_array_get(v, 0); /* genai takes one id */
    return json_is_integer(v) ? json_integer(json_integer_value(v)) : json_integer(-1);
}

hfx_status hfx_genai_config(const json_t *config, const json_t *generation,
                            const hfx_layer_cache *layer0, int n_layers, const char *decoder_file,
                            json_t **out, hfx_error *err) {
    hfx_cfg c = {config, "config.json"};
    int64_t hidden, heads, vocab, context;
    const char *type;
    hfx_status st;
    if ((st = hfx_cfg_int(c, "hidden_size", &hidden, err)) ||
        (st = hfx_cfg_int(c, "num_attention_heads", &heads, err)) ||
        (st = hfx_cfg_int(c, "vocab_size", &vocab, err)) ||
        (st = hfx_cfg_int_or(c, "max_position_embeddings", 2048, &context, err)) ||
        (st = hfx_cfg_str_or(c, "model_type", "llama", &type, err)))
        return st;
    json_t *inputs = json_pack("{s:s, s:s, s:s, s:s, s:s}", "input_ids", "input_ids",
                               "attention_mask", "attention_mask", "position_ids", "position_ids",
                               "past_key_names", "past_key_values.%d.key", "past_value_names",
                               "past_key_values.%d.value");
    json_t *outputs = json_pack("{s:s, s:s, s:s}", "logits", "logits", "present_key_names",
                                "present.%d.key", "present_value_names", "present.%d.value");
    json_t *decoder = json_pack("{s:{s:s, s:[]}, s:s, s:I, s:I, s:o, s:o, s:I, s:i, s:I}",
                                "session_options", "log_id", "onnxruntime-genai", "provider_options",
                                "filename", decoder_file, "head_size", (json_int_t)layer0->key_dim,
                                "hidden_size", (json_int_t)hidden, "inputs", inputs, "outputs", outputs,
                                "num_attention_heads", (json_int_t)heads, "num_hidden_layers", n_layers,
                                "num_key_value_heads", (json_int_t)layer0->kv_heads);
    json_t *eos = token_id(generation, config, "eos_token_id"), *pad = token_id(generation, config, "pad_token_id");
    if (json_integer_value(pad) < 0) json_integer_set(pad, json_integer_value(eos)); /* as generate pads */
    json_t *model = json_pack("{s:o, s:I, s:o, s:o, s:o, s:s, s:I}", "bos_token_id",
                              token_id(generation, config, "bos_token_id"), "context_length",
                              (json_int_t)context, "decoder", decoder, "eos_token_id", eos,
                              "pad_token_id", pad, "type", type,
                              "vocab_size", (json_int_t)vocab);
    json_t *search = json_pack("{s:b, s:b, s:I, s:i, s:i, s:i, s:f, s:i, s:f}", "do_sample", 0,
                               "early_stopping", 1, "max_length", (json_int_t)context, "min_length", 0,
                               "num_beams", 1, "num_return_sequences", 1, "temperature", 1.0,
                               "top_k", 1, "top_p", 1.0);
    *out = model && search ? json_pack("{s:o, s:o}", "model", model, "search", search) : NULL;
    if (!*out) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    return HFX_OK;
}
