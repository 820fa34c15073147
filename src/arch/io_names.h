/* The one place state tensors get their names: what each I/O profile calls a family's caches
 * and recurrent states, as graph states, inputs and outputs. Builders declare what a state is
 * (its part, its layer); this module says what the profile names it, so that no builder spells a
 * profile's names and nothing downstream parses them.
 *
 *   optimum (hfx's default; onnxruntime-genai reads it): past_key_values.{i}.key in,
 *     present.{i}.key out (a static cache: input./output.past_key_values.{i}.key), an indexer's
 *     past_key_values.{i}.index_key alike; an
 *     encoder-decoder's parts decoder.key … encoder.value; recurrent layers past.{i}.conv / .ssm
 *     in, present.{i}.* out;
 *   seed (transformers.exporters'): its Cache object flattened, cache.layers.{i}.keys (an
 *     encoder-decoder's cache.self_attention_cache.layers.{i}.keys and cross_…), "input." going
 *     in, "output." coming out of a call that continues a cache (bare out of a prompt). */
#ifndef HFX_ARCH_IO_NAMES_H
#define HFX_ARCH_IO_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* What a state tensor is, whatever a profile calls it. */
typedef enum hfx_state_part {
    HFX_PART_KEY,         /* a layer's attention cache (an encoder-decoder's self-attention) */
    HFX_PART_VALUE,
    HFX_PART_CROSS_KEY,   /* an encoder-decoder's cross-attention cache */
    HFX_PART_CROSS_VALUE,
    HFX_PART_COUNTER,     /* the seed's static cache: the slots written so far */
    HFX_PART_WINDOW,      /* the seed's sliding layer in a growing cache: its window, carried through */
    HFX_PART_CONV,        /* a recurrent layer's convolution state */
    HFX_PART_SSM,         /* ... and its recurrent (SSM, delta-net) state */
    HFX_PART_INDEX_KEY,   /* a sparse attention layer's indexer keys, kept as its keys are */
    HFX_PART_PLE_CONV,    /* an n-gram layer's convolution state (Qwen4-Exp's PLE) */
    HFX_PART_NGRAM,       /* ... and its last token ids */
    HFX_PART_CROSS_COUNTER /* the seed's static cross-attention cache: the slots written so far */
} hfx_state_part;

/* Which name: the state's own, the graph input its earlier value comes in by, the output. */
typedef enum hfx_name_use { HFX_NAME_STATE, HFX_NAME_INPUT, HFX_NAME_OUTPUT } hfx_name_use;

/* The graph whose states are named. */
typedef struct hfx_state_naming {
    hfx_io_profile io;
    bool is_static;       /* a static cache */
    bool continues;       /* the call continues a cache an earlier call wrote (a step, not a prompt) */
    bool encoder_decoder; /* an encoder-decoder's caches (self and cross attention) */
} hfx_state_naming;

/* Layer `layer`'s state `part` named for `use`, into buf (truncated to size); returns buf. */
const char *hfx_state_name(const hfx_state_naming *n, int64_t layer, hfx_state_part part, hfx_name_use use, char *buf,
                           size_t size);

/* The same with the layer as "%d": the pattern onnxruntime-genai's config takes. */
const char *hfx_state_name_pattern(const hfx_state_naming *n, hfx_state_part part, hfx_name_use use, char *buf,
                                   size_t size);

#endif
