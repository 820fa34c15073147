/* A checkpoint directory opened read-only: config.json, generation_config.json (optional) and
 * the weights, either `model.safetensors` or shards listed by `model.safetensors.index.json`.
 * Every file is memory-mapped and validated at open; tensor bytes are only touched when a
 * writer copies them out.
 *
 * Shards: the index's "weight_map" (tensor name → shard file name) must agree with the shard
 * headers exactly: every mapped tensor is in the shard it names, every tensor of every shard is
 * mapped, no tensor appears twice, and shard names are plain file names inside the directory. */
#ifndef HFX_HF_CHECKPOINT_H
#define HFX_HF_CHECKPOINT_H

#include <jansson.h>

#include "hf/config.h"
#include "hf/safetensors.h"

typedef struct hfx_checkpoint hfx_checkpoint;

/* Open `dir`. On success *out owns the mappings, the parsed JSON and all names. Errors name the
 * file and the problem: a missing or malformed config.json, no weights file, a bad header, a
 * disagreement between index and shards.
 *
 * `dir` may also be a GGUF file (a name ending ".gguf"), or a folder without config.json that holds
 * exactly one: the checkpoint is then what transformers' GGUF loader makes of it
 * (hf/gguf_model.h), with no side files. */
hfx_status hfx_checkpoint_open(const char *dir, hfx_checkpoint **out, hfx_error *err);

/* A checkpoint in memory: the JSON texts (copied) and the tensors (their data borrowed until
 * close), checked as a directory's are; its dir is "(memory)". */
hfx_status hfx_checkpoint_open_memory(const char *config_json, const char *generation_json, const hfx_tensor *tensors,
                                      size_t n, hfx_checkpoint **out, hfx_error *err);

/* A checkpoint in memory's config.json text (generation false) or generation_config.json text
 * (true; NULL when none), or the config.json made of a GGUF file's metadata; NULL for a checkpoint
 * read from a directory. */
const char *hfx_checkpoint_json_text(const hfx_checkpoint *ck, bool generation);

void hfx_checkpoint_close(hfx_checkpoint *ck);

/* The directory path as given to open. */
const char *hfx_checkpoint_dir(const hfx_checkpoint *ck);

/* config.json (a JSON object, borrowed). */
const json_t *hfx_checkpoint_config(const hfx_checkpoint *ck);

/* config.json for typed reads, its messages naming "<dir>/config.json". */
hfx_cfg hfx_checkpoint_cfg(const hfx_checkpoint *ck);

/* The quantization_config method whose weights this checkpoint reads as transformers' dequantizing loader makes them
 * (hf/prequant.h: "fp8"), or NULL: none, or one hfx does not read (which an export refuses). */
const char *hfx_checkpoint_quant_method(const hfx_checkpoint *ck);

/* generation_config.json (borrowed), or NULL when the file does not exist. */
const json_t *hfx_checkpoint_generation_config(const hfx_checkpoint *ck);

/* The JSON object in the file `name` beside config.json (tokenizer.json, ...): *out (owned by
 * the caller) is NULL when there is no such file or the checkpoint is in memory. A file that is
 * not a regular file, too large or not a JSON object is an error naming it. `reals`: every number
 * is read as a double (tokenizer_config.json's model_max_length overflows int64). */
hfx_status hfx_checkpoint_side_json(const hfx_checkpoint *ck, const char *name, bool reals, json_t **out,
                                    hfx_error *err);

/* The bytes of the file `name` beside config.json, NUL-terminated (*out owned by the caller, NULL
 * when there is none), under the same rules. */
hfx_status hfx_checkpoint_side_text(const hfx_checkpoint *ck, const char *name, char **out, size_t *len,
                                    hfx_error *err);

/* Number of tensors over all shards. */
size_t hfx_checkpoint_tensor_count(const hfx_checkpoint *ck);

/* Add the tensors of a sentence-transformers module's weights, "<module>/model.safetensors" under the checkpoint's
 * folder, as "<module>/<name>" (a '/' no model tensor has). Once per module: a second call finds them there. A
 * module saved as pytorch_model.bin, or none, is an error naming the file. Tensors found earlier stay valid. */
hfx_status hfx_checkpoint_add_module(hfx_checkpoint *ck, const char *module, hfx_error *err);

/* A PEFT LoRA adapter saved beside the model (adapter_config.json and adapter_model.safetensors, as peft and
 * transformers' from_pretrained read them): its tensors added as "lora.<name>" ("lora.base_model.model.<linear>.lora_A
 * .weight"), its scale kept (hfx_checkpoint_lora_scale). No adapter_config.json: nothing. An adapter hfx does not apply
 * (DoRA, per-module ranks, a bias, modules saved whole) is HFX_ERR_UNSUPPORTED naming the field. */
hfx_status hfx_checkpoint_add_lora(hfx_checkpoint *ck, hfx_error *err);

/* The adapter's lora_alpha / r (/ √r with use_rslora): what B·A·x is scaled by; 0 without one. */
double hfx_checkpoint_lora_scale(const hfx_checkpoint *ck);

/* Tensor i in name order (strcmp), 0 ≤ i < count. */
const hfx_tensor_info *hfx_checkpoint_tensor_at(const hfx_checkpoint *ck, size_t i);

/* The tensor called `name`, or NULL. O(log n). */
const hfx_tensor_info *hfx_checkpoint_find(const hfx_checkpoint *ck, const char *name);

/* Its position in name order (for callers that track which tensors they used), or -1. */
long hfx_checkpoint_index_of(const hfx_checkpoint *ck, const char *name);

#endif
