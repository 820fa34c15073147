/* genai_config.json: lets onnxruntime-genai run an export folder. Its decoder is one graph that
 * serves the prompt (empty past) and every step, with a growing cache — exactly the dynamic-cache
 * multi-token decode component — so the file is written for that layout only: a causal LM's
 * `decode`, or Whisper's `encoder` (which returns the cross-attention keys and values) and
 * `decoder`. The file maps onnxruntime-genai's nominal names to the graphs' own (optimum's), so
 * both layouts keep hfx's names. */
#include "export/genai.h"

#include <stdio.h>
#include <string.h>

#include "arch/io_names.h"
#include "base/status.h"
#include "hf/config.h"

static json_t *token_id(const json_t *gen, const json_t *cfg, const char *key) {
    const json_t *v = gen ? json_object_get(gen, key) : NULL;
    if (!v || json_is_null(v)) v = json_object_get(cfg, key);
    if (json_is_array(v)) v = json_array_get(v, 0); /* genai takes one id */
    return json_is_integer(v) ? json_integer(json_integer_value(v)) : json_integer(-1);
}

/* One session's section: its file, geometry and name maps (inputs and outputs are stolen). */
static json_t *session(const char *file, int64_t head_size, int64_t hidden, int64_t heads, int64_t layers,
                       int64_t kv_heads, json_t *inputs, json_t *outputs) {
    json_t *s = json_pack("{s:{s:s, s:[]}, s:s, s:I, s:I, s:o, s:o, s:I, s:I}", "session_options", "log_id",
                          "onnxruntime-genai", "provider_options", "filename", file, "head_size", (json_int_t)head_size,
                          "hidden_size", (json_int_t)hidden, "inputs", inputs, "outputs", outputs,
                          "num_attention_heads", (json_int_t)heads, "num_hidden_layers", (json_int_t)layers);
    if (s && kv_heads > 0) json_object_set_new(s, "num_key_value_heads", json_integer(kv_heads));
    return s;
}

/* The whole file around the model's sessions (`sessions`: "decoder" and, Whisper, "encoder"; stolen).
 * `growing`: say that past and present are separate tensors, the cache growing each step
 * (onnxruntime-genai's Whisper shares one buffer of max_length unless told). */
static hfx_status whole(const json_t *config, const json_t *generation, json_t *sessions, const char *type,
                        int64_t vocab, int64_t context, bool growing, json_t **out, hfx_error *err) {
    json_t *eos = token_id(generation, config, "eos_token_id"), *pad = token_id(generation, config, "pad_token_id");
    if (json_integer_value(pad) < 0) json_integer_set(pad, json_integer_value(eos)); /* as generate pads */
    json_t *model = json_pack("{s:o, s:I, s:o, s:o, s:s, s:I}", "bos_token_id",
                              token_id(generation, config, "bos_token_id"), "context_length", (json_int_t)context,
                              "eos_token_id", eos, "pad_token_id", pad, "type", type, "vocab_size", (json_int_t)vocab);
    if (model && json_object_update(model, sessions)) json_decref(model), model = NULL;
    json_decref(sessions);
    json_t *search = json_pack("{s:b, s:b, s:I, s:i, s:i, s:i, s:f, s:i, s:f}", "do_sample", 0,
                               "early_stopping", 1, "max_length", (json_int_t)context, "min_length", 0,
                               "num_beams", 1, "num_return_sequences", 1, "temperature", 1.0,
                               "top_k", 1, "top_p", 1.0);
    if (search && growing) json_object_set_new(search, "past_present_share_buffer", json_false());
    *out = model && search ? json_pack("{s:o, s:o}", "model", model, "search", search) : NULL;
    if (!*out) {
        json_decref(model);
        json_decref(search);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    return HFX_OK;
}

/* The name pattern genai reads for a state part ("present.%d.key"): optimum's, from io_names.c. */
typedef struct genai_names {
    char text[8][64];
    int n;
} genai_names;

static const char *pattern(genai_names *b, bool encoder_decoder, hfx_state_part part, hfx_name_use use) {
    const hfx_state_naming optimum = {.io = HFX_IO_OPTIMUM, .encoder_decoder = encoder_decoder};
    return b->n < 8 ? hfx_state_name_pattern(&optimum, part, use, b->text[b->n++], sizeof b->text[0]) : "";
}

/* The decoder-only model types onnxruntime-genai (0.18) knows by name. hfx's graph carries every detail of
 * the architecture and genai only feeds inputs and caches, so any other model runs as its generic "decoder"
 * (a type genai does not know is refused when it loads the model). */
static const char *genai_model_type(const char *model_type) {
    static const char *const known[] = {
        "chatglm", "ernie4_5", "gemma", "gemma2", "gemma3_text", "gemma4_text", "gpt2", "gptoss", "granite",
        "granitemoehybrid", "hunyuandensev1", "internlm2", "lfm2", "lfm2_moe", "llama", "mistral", "mistral3_text",
        "nemotron", "olmo", "phi3", "phi3small", "phimoe", "qwen2", "qwen3", "qwen3_5_text", "qwen3_5_moe_text",
        "smollm3", NULL};
    for (const char *const *k = known; *k; k++)
        if (strcmp(*k, model_type) == 0) return model_type;
    return "decoder";
}

hfx_status hfx_genai_config(const json_t *config, const json_t *generation, const hfx_layer_cache *layers,
                            int n_layers, const char *recurrent_type, const char *decoder_file, json_t **out, char *why,
                            size_t why_size, hfx_error *err) {
    hfx_cfg c = {config, "config.json"};
    int64_t hidden, heads, vocab, context;
    const char *type;
    hfx_status st;
    *out = NULL;
    if ((st = hfx_cfg_int(c, "hidden_size", &hidden, err)) ||
        (st = hfx_cfg_int_or(c, "num_attention_heads", 1, &heads, err)) ||
        (st = hfx_cfg_int(c, "vocab_size", &vocab, err)) ||
        (st = hfx_cfg_int_or(c, "max_position_embeddings", 2048, &context, err)) ||
        (st = hfx_cfg_str_or(c, "model_type", "llama", &type, err)))
        return st;
    /* the attention layers' geometry (genai takes one); the recurrent layers' states */
    const hfx_layer_cache *attends = NULL;
    bool conv = false, ssm = false;
    for (int i = 0; i < n_layers; i++) {
        if (layers[i].kv_heads > 0 && !attends) attends = &layers[i];
        for (int k = 0; k < layers[i].n_states; k++) {
            conv |= strcmp(layers[i].states[k].name, "conv") == 0;
            ssm |= strcmp(layers[i].states[k].name, "ssm") == 0;
        }
    }
    for (int i = 0; attends && i < n_layers; i++)
        if ((layers[i].kv_heads && (layers[i].kv_heads != attends->kv_heads || layers[i].key_dim != attends->key_dim ||
                                    layers[i].value_dim != attends->value_dim || layers[i].index_dim)) ||
            (!layers[i].kv_heads && !layers[i].n_states)) { /* (an index key is a third cache part genai has no name for) */
            snprintf(why, why_size, "onnxruntime-genai takes one cache geometry for every layer, and this model's "
                                    "layers cache keys and values of different shapes (or none of their own)");
            return HFX_OK;
        }
    if (attends && attends->key_dim != attends->value_dim) { /* multi-head latent attention */
        snprintf(why, why_size, "onnxruntime-genai takes one head size, and this model caches keys and values of "
                                "different widths");
        return HFX_OK;
    }
    if ((conv || ssm) && !(type = recurrent_type)) {
        snprintf(why, why_size, "onnxruntime-genai has no model type for this model's recurrent layers (convolution "
                                "or SSM state)");
        return HFX_OK;
    }
    if (!conv && !ssm) type = genai_model_type(type);
    /* (genai feeds the inputs the graph has: Mamba's take no positions) */
    json_t *inputs = json_pack("{s:s, s:s, s:s}", "input_ids", "input_ids", "attention_mask", "attention_mask",
                               "position_ids", "position_ids");
    json_t *outputs = json_pack("{s:s}", "logits", "logits");
    genai_names b = {.n = 0};
    if (inputs && outputs && attends) {
        json_object_set_new(inputs, "past_key_names", json_string(pattern(&b, false, HFX_PART_KEY, HFX_NAME_INPUT)));
        json_object_set_new(inputs, "past_value_names", json_string(pattern(&b, false, HFX_PART_VALUE, HFX_NAME_INPUT)));
        json_object_set_new(outputs, "present_key_names", json_string(pattern(&b, false, HFX_PART_KEY, HFX_NAME_OUTPUT)));
        json_object_set_new(outputs, "present_value_names",
                            json_string(pattern(&b, false, HFX_PART_VALUE, HFX_NAME_OUTPUT)));
    }
    if (inputs && outputs && conv) {
        json_object_set_new(inputs, "past_conv_names", json_string(pattern(&b, false, HFX_PART_CONV, HFX_NAME_INPUT)));
        json_object_set_new(outputs, "present_conv_names", json_string(pattern(&b, false, HFX_PART_CONV, HFX_NAME_OUTPUT)));
    }
    if (inputs && outputs && ssm) {
        json_object_set_new(inputs, "past_recurrent_names", json_string(pattern(&b, false, HFX_PART_SSM, HFX_NAME_INPUT)));
        json_object_set_new(outputs, "present_recurrent_names",
                            json_string(pattern(&b, false, HFX_PART_SSM, HFX_NAME_OUTPUT)));
    }
    /* no layer attends (Mamba): genai still reads a head geometry; one head of the whole width */
    json_t *decoder = session(decoder_file, attends ? attends->key_dim : hidden, hidden, attends ? heads : 1, n_layers,
                              attends ? attends->kv_heads : 1, inputs, outputs);
    if (decoder && strcmp(type, "lfm2") == 0) { /* genai's LFM2 cache reads the pattern and the state's length */
        json_t *types = json_array();
        int64_t kept = 0;
        for (int i = 0; types && i < n_layers; i++) {
            json_array_append_new(types, json_string(layers[i].n_states ? "conv" : "full_attention"));
            if (layers[i].n_states) kept = layers[i].states[0].dims[1];
        }
        json_object_set_new(decoder, "layer_types", types);
        json_object_set_new(decoder, "conv_cache_size", json_integer(kept));
    }
    json_t *sessions = json_pack("{s:o}", "decoder", decoder);
    return whole(config, generation, sessions, type, vocab, context, false, out, err);
}

hfx_status hfx_genai_whisper_config(const json_t *config, const json_t *generation, const char *encoder_file,
                                    const char *decoder_file, json_t **out, char *why, size_t why_size,
                                    hfx_error *err) {
    hfx_cfg c = {config, "config.json"};
    int64_t hidden, enc_heads, dec_heads, enc_layers, dec_layers, vocab, context, positions;
    hfx_status st;
    *out = NULL;
    if ((st = hfx_cfg_int(c, "max_source_positions", &positions, err))) return st;
    if (positions != 1500) { /* its AudioEncoderState takes exactly 3,000 frames */
        snprintf(why, why_size, "onnxruntime-genai runs Whisper on 30-second windows (3,000 frames, "
                 "max_source_positions 1500); this model's max_source_positions is %lld", (long long)positions);
        return HFX_OK;
    }
    if ((st = hfx_cfg_int(c, "d_model", &hidden, err)) ||
        (st = hfx_cfg_int(c, "encoder_attention_heads", &enc_heads, err)) ||
        (st = hfx_cfg_int(c, "decoder_attention_heads", &dec_heads, err)) ||
        (st = hfx_cfg_int(c, "encoder_layers", &enc_layers, err)) ||
        (st = hfx_cfg_int(c, "decoder_layers", &dec_layers, err)) ||
        (st = hfx_cfg_int(c, "vocab_size", &vocab, err)) ||
        (st = hfx_cfg_int_or(c, "max_target_positions", 448, &context, err)))
        return st;
    if (enc_heads <= 0 || dec_heads <= 0)
        return hfx_fail(err, HFX_ERR_INVALID, "config.json: attention heads must be positive");
    json_t *enc_in = json_pack("{s:s}", "audio_features", "input_features");
    genai_names b = {.n = 0};
    json_t *enc_out = json_pack("{s:s, s:s, s:s}", "encoder_hidden_states", "last_hidden_state",
                                "cross_present_key_names", pattern(&b, true, HFX_PART_CROSS_KEY, HFX_NAME_OUTPUT),
                                "cross_present_value_names", pattern(&b, true, HFX_PART_CROSS_VALUE, HFX_NAME_OUTPUT));
    json_t *dec_in = json_pack("{s:s, s:s, s:s, s:s, s:s}", "input_ids", "input_ids", "past_key_names",
                               pattern(&b, true, HFX_PART_KEY, HFX_NAME_INPUT), "past_value_names",
                               pattern(&b, true, HFX_PART_VALUE, HFX_NAME_INPUT), "cross_past_key_names",
                               pattern(&b, true, HFX_PART_CROSS_KEY, HFX_NAME_INPUT), "cross_past_value_names",
                               pattern(&b, true, HFX_PART_CROSS_VALUE, HFX_NAME_INPUT));
    json_t *dec_out = json_pack("{s:s, s:s, s:s}", "logits", "logits", "present_key_names",
                                pattern(&b, true, HFX_PART_KEY, HFX_NAME_OUTPUT), "present_value_names",
                                pattern(&b, true, HFX_PART_VALUE, HFX_NAME_OUTPUT));
    json_t *sessions = json_pack(
        "{s:o, s:o}", "encoder",
        session(encoder_file, hidden / enc_heads, hidden, enc_heads, enc_layers, 0, enc_in, enc_out), "decoder",
        session(decoder_file, hidden / dec_heads, hidden, dec_heads, dec_layers, dec_heads, dec_in, dec_out));
    return whole(config, generation, sessions, "whisper", vocab, context, true, out, err);
}
