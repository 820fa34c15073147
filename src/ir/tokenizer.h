/* A tokenizer as data: what a tokenizer.json declares, resolved into the pieces a backend's
 * string ops take (arch/tokenizer.c builds it; fmt/openvino/tokenizer.c writes it as
 * openvino_tokenizers' graphs). Text runs through
 *
 *   first steps (whole input) → split out added tokens → steps (each other piece) → model
 *   → template (special tokens around the sequence) → ids and mask
 *
 * and ids back through the decoder vocabulary → byte fallback → fuse → text steps → UTF-8 repair.
 * Byte strings are not NUL-terminated and may hold any byte; everything lives in `arena`. */
#ifndef HFX_IR_TOKENIZER_H
#define HFX_IR_TOKENIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"

typedef struct hfx_bytes {
    const uint8_t *p;
    uint32_t n;
} hfx_bytes;

typedef enum hfx_tok_step_kind {
    HFX_TOK_REPLACE, /* every match of the regex `pattern` becomes `replace` ($1: a group) */
    HFX_TOK_UNICODE, /* Unicode normalization `form` ("nfc", "nfkd", ... or "identity") and/or
                        case folding */
    HFX_TOK_SPLIT    /* split each piece at the regex `pattern`: `behaviour` is what becomes of
                        the matches ("isolate", "remove", "mergedwithprevious", ...) */
} hfx_tok_step_kind;

typedef struct hfx_tok_step {
    hfx_tok_step_kind kind;
    const char *pattern, *replace; /* PCRE2 syntax (openvino_tokenizers' engine) */
    const char *form;
    bool case_fold;
    const char *behaviour;
    bool invert;                   /* SPLIT: the matches are the pieces */
} hfx_tok_step;

typedef enum hfx_tok_model { HFX_TOK_BPE, HFX_TOK_WORDPIECE, HFX_TOK_UNIGRAM } hfx_tok_model;

/* Bounds every reader keeps (writers size their tables by them). */
enum { HFX_TOK_MAX_SEGMENTS = 16, HFX_TOK_MAX_SEGMENT_IDS = 64 };

/* One segment of the post-processor's template: the encoded text, or constant token ids. */
typedef struct hfx_tok_segment {
    bool sequence;
    const int32_t *ids;
    int n_ids;
} hfx_tok_segment;

typedef struct hfx_tokenizer {
    hfx_arena *arena; /* owns everything below */
    hfx_tok_model model;

    /* [n_vocab] by id, as the model op matches them (byte-level vocabularies as raw bytes);
     * added tokens sit at their ids; ids nothing names are empty strings */
    hfx_bytes *vocab;
    int32_t n_vocab;
    float *scores;                  /* UNIGRAM: [n_vocab] log probabilities */
    hfx_bytes *merge_left, *merge_right; /* BPE: [n_merges], in rank order */
    int32_t n_merges;

    /* added tokens, matched in the raw text before anything else */
    hfx_bytes *added;               /* [n_added] */
    int32_t *added_id;
    bool *added_lstrip, *added_rstrip;
    int32_t n_added;

    const char *added_pattern;      /* PCRE2 alternatives matching them (group 1: the token) */
    hfx_tok_step *first;            /* on the whole input, before added tokens are split out */
    int n_first;
    hfx_tok_step *steps;            /* normalizers, then pre-tokenizers, on the other pieces */
    int n_steps;

    const char *unk_token;          /* BPE */
    int32_t unk_id;                 /* WORDPIECE, UNIGRAM; -1: none */
    bool fuse_unk, byte_fallback;
    const char *subword_prefix;     /* WORDPIECE ("##") */
    int32_t max_word_chars;         /* WORDPIECE */

    hfx_tok_segment *segments;      /* the post-processor's single-sequence template (at most
                                       HFX_TOK_MAX_SEGMENTS, each of at most HFX_TOK_MAX_SEGMENT_IDS) */
    int n_segments;

    /* decoding */
    hfx_bytes *dvocab;              /* [n_vocab]: each id's bytes before fusing */
    bool decode_byte_fallback;      /* "<0xAB>" tokens become the byte 0xAB */
    hfx_tok_step *dsteps;           /* REPLACE steps on the fused text */
    int n_dsteps;
    int32_t *skip_ids;              /* special tokens, dropped when decoding */
    int32_t n_skip;

    int64_t bos_id, eos_id, pad_id; /* -1: none */
    const char *chat_template;      /* or NULL */
    const char *note;               /* where the graphs knowingly differ from transformers, or NULL */
} hfx_tokenizer;

#endif
