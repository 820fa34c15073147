/* State names per I/O profile (io_names.h). */
#include "arch/io_names.h"

#include <stdio.h>

/* Each part's leaf: optimum's for decoders and encoder-decoders, the seed's cache layer field. */
enum { N_PARTS = HFX_PART_CROSS_COUNTER + 1 };
static const char *const optimum_leaf[N_PARTS] = {[HFX_PART_KEY] = "key", [HFX_PART_VALUE] = "value",
                                                  [HFX_PART_CONV] = "conv", [HFX_PART_SSM] = "ssm",
                                                  [HFX_PART_INDEX_KEY] = "index_key", [HFX_PART_PLE_CONV] = "ple_conv",
                                                  [HFX_PART_NGRAM] = "ngram"};
static const char *const optimum_seq2seq_leaf[N_PARTS] = {[HFX_PART_KEY] = "decoder.key", [HFX_PART_VALUE] = "decoder.value",
                                                   [HFX_PART_CROSS_KEY] = "encoder.key",
                                                   [HFX_PART_CROSS_VALUE] = "encoder.value"};
static const char *const seed_leaf[N_PARTS] = {[HFX_PART_KEY] = "keys",
                                        [HFX_PART_VALUE] = "values",
                                        [HFX_PART_CROSS_KEY] = "keys",
                                        [HFX_PART_CROSS_VALUE] = "values",
                                        [HFX_PART_COUNTER] = "cumulative_length",
                                        [HFX_PART_WINDOW] = "_sliding_window_tensor",
                                        [HFX_PART_CONV] = "conv_states.0",
                                        [HFX_PART_SSM] = "recurrent_states.0",
                                        [HFX_PART_INDEX_KEY] = "indexer_keys",
                                        [HFX_PART_PLE_CONV] = "conv_states.1",
                                        [HFX_PART_NGRAM] = "conv_states.2",
                                        [HFX_PART_CROSS_COUNTER] = "cumulative_length"};

static const char *name_with(const hfx_state_naming *n, const char *layer, hfx_state_part part, hfx_name_use use,
                             char *buf, size_t size) {
    if ((unsigned)part >= N_PARTS) part = HFX_PART_KEY;
    bool cross = part == HFX_PART_CROSS_KEY || part == HFX_PART_CROSS_VALUE || part == HFX_PART_CROSS_COUNTER;
    if (n->io == HFX_IO_SEED) {
        const char *field = seed_leaf[part] ? seed_leaf[part] : "?"; /* (no such part: a builder's bug, named) */
        /* a counter or a window is always the call's own new value */
        bool updated = n->continues || part == HFX_PART_COUNTER || part == HFX_PART_CROSS_COUNTER ||
                       part == HFX_PART_WINDOW;
        const char *prefix = use == HFX_NAME_INPUT ? "input." : use == HFX_NAME_OUTPUT && updated ? "output." : "";
        if (n->encoder_decoder)
            snprintf(buf, size, "%scache.%s_attention_cache.layers.%s.%s", prefix, cross ? "cross" : "self", layer,
                     field);
        else snprintf(buf, size, "%scache.layers.%s.%s", prefix, layer, field);
        return buf;
    }
    const char *leaf = n->encoder_decoder ? optimum_seq2seq_leaf[part] : optimum_leaf[part];
    if (!leaf) leaf = "?"; /* no such part in this profile: a builder's bug, named in the graph */
    bool recurrent = part == HFX_PART_CONV || part == HFX_PART_SSM || part == HFX_PART_PLE_CONV || part == HFX_PART_NGRAM;
    bool static_self = n->is_static && (part == HFX_PART_KEY || part == HFX_PART_VALUE || part == HFX_PART_INDEX_KEY);
    if (static_self && use != HFX_NAME_STATE) /* in and out of the slots */
        snprintf(buf, size, "%s.past_key_values.%s.%s", use == HFX_NAME_INPUT ? "input" : "output", layer, leaf);
    else
        snprintf(buf, size, "%s.%s.%s", use == HFX_NAME_OUTPUT ? "present" : recurrent ? "past" : "past_key_values", layer,
                 leaf);
    return buf;
}

const char *hfx_state_name(const hfx_state_naming *n, int64_t layer, hfx_state_part part, hfx_name_use use, char *buf,
                           size_t size) {
    char number[24];
    snprintf(number, sizeof number, "%lld", (long long)layer);
    return name_with(n, number, part, use, buf, size);
}

const char *hfx_state_name_pattern(const hfx_state_naming *n, hfx_state_part part, hfx_name_use use, char *buf,
                                   size_t size) {
    return name_with(n, "%d", part, use, buf, size);
}
