/* The Hugging Face checkpoint a GGUF file holds, as transformers' GGUF loader reads it
 * (`from_pretrained(dir, gguf_file=...)`): config.json from the file's metadata (the keys transformers maps, the
 * class its architecture names, tie_word_embeddings when there is no `output.weight`), and every tensor under
 * transformers' name, its shape in torch's order, its blocks decoded while read and llama.cpp's rotary row order of
 * the query and key projections undone while read — nothing is converted here.
 *
 * A file whose architecture hfx does not map, a tensor it would not place, metadata that changes the model in ways
 * transformers' loader drops (rope scaling, per-layer head counts), and tensor types hfx does not decode are
 * refused by name: nothing silently becomes another model. */
#ifndef HFX_HF_GGUF_MODEL_H
#define HFX_HF_GGUF_MODEL_H

#include <jansson.h>

#include "base/mapping.h"
#include "hf/gguf.h"
#include "hf/safetensors.h"

/* config.json's object (*config, a new reference) and the tensors (*tensors: n of them from `arena`, in file order)
 * of the parsed file f, mapped by m. */
hfx_status hfx_gguf_model(const hfx_gguf *f, const hfx_mapping *m, hfx_arena *arena, json_t **config,
                          hfx_tensor_info **tensors, size_t *n, hfx_error *err);

/* The tokenizer files transformers builds from f's tokenizer metadata, as JSON texts (owned by the caller):
 * tokenizer.json and tokenizer_config.json; both NULL when the file has no tokenizer hfx converts (byte-level BPE
 * vocabularies of known pre-tokenizers only, for now). A token that is not UTF-8 or a merge that is not a pair is
 * HFX_ERR_INVALID naming its index. */
hfx_status hfx_gguf_tokenizer(const hfx_gguf *f, char **tokenizer_json, char **config_json, hfx_error *err);

#endif
