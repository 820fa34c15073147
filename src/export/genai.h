/* genai_config.json for onnxruntime-genai (see genai.c for when it is written). */
#ifndef HFX_EXPORT_GENAI_H
#define HFX_EXPORT_GENAI_H

#include <jansson.h>

#include "arch/arch.h"

/* Build the file's JSON from config.json, the generation config (may be NULL) and each layer's
 * cache geometry (layers[n_layers]), `recurrent_type` genai's model type for its recurrent layers
 * (hfx_arch_genai_type; NULL: none); *out is a new reference, or NULL with the reason in `why`
 * where onnxruntime-genai cannot run the model (keys and values of different widths; recurrent
 * layers of a kind it has no model type for). */
hfx_status hfx_genai_config(const json_t *config, const json_t *generation, const hfx_layer_cache *layers,
                            int n_layers, const char *recurrent_type, const char *decoder_file, json_t **out, char *why,
                            size_t why_size, hfx_error *err);

/* The same for Whisper (config.json's d_model, heads, layers, max_target_positions): the encoder
 * session returning the cross-attention keys and values and the decoder reading them, under the
 * multi-token decode's names; *out is a new reference, or NULL with the reason in `why` where
 * onnxruntime-genai cannot run the model (a window other than 30 seconds). */
hfx_status hfx_genai_whisper_config(const json_t *config, const json_t *generation, const char *encoder_file,
                                    const char *decoder_file, json_t **out, char *why, size_t why_size,
                                    hfx_error *err);

#endif
