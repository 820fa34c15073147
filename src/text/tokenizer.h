/* tokenizer.json (with tokenizer_config.json and chat_template.jinja beside it) → hfx_tokenizer,
 * the tokenizer as data that a format writes as graphs (ir/tokenizer.h). Reads the kinds the
 * supported models use: BPE (byte-level and SentencePiece-style with byte fallback), WordPiece
 * and Unigram, with their normalizers, pre-tokenizers, post-processors and decoders. */
#ifndef HFX_TEXT_TOKENIZER_H
#define HFX_TEXT_TOKENIZER_H

#include <stddef.h>

#include "hf/checkpoint.h"
#include "ir/tokenizer.h"

/* The checkpoint's tokenizer. *out is NULL when there is none to convert: no tokenizer.json (or a
 * checkpoint in memory) leaves `why` empty; a file or a step hfx cannot convert puts the reason,
 * naming the file and the JSON field, in `why`. Only running out of memory is an error. */
hfx_status hfx_tokenizer_load(const hfx_checkpoint *ck, hfx_tokenizer **out, char *why, size_t why_size,
                              hfx_error *err);

void hfx_tokenizer_free(hfx_tokenizer *t);

#endif
