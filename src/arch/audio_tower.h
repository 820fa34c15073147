/* The audio towers of audio language models (Qwen2-Audio, Voxtral, Audio Flamingo 3): Whisper's encoder — two
 * convolutions over log-mel features, a stored position table, Whisper's layers (vision.c's pre-norm stack), a final
 * LayerNorm — and, where the lineage has it, an average pool of every two frames before that norm. */
#ifndef HFX_ARCH_AUDIO_TOWER_H
#define HFX_ARCH_AUDIO_TOWER_H

#include "arch/vision.h"

typedef struct hfx_audio_tower {
    hfx_vision_tower layers; /* the encoder's layers and sizes */
    int64_t mels;            /* num_mel_bins */
    int64_t positions;       /* max_source_positions: the frames after the strided convolution (the input's half) */
    bool pool;               /* an average pool of two frames after the layers (Qwen2-Audio's, Audio Flamingo 3's) */
} hfx_audio_tower;

/* Read an audio tower's config (an audio LM's audio_config) for its model_type ("qwen2_audio_encoder",
 * "voxtral_encoder", "audioflamingo3_encoder"); others are HFX_ERR_UNSUPPORTED, listing these. */
hfx_status hfx_audio_tower_parse(const char *model_type, hfx_cfg c, hfx_audio_tower *out, hfx_error *err);

/* The frames the tower outputs per clip: positions, halved where it pools. */
int64_t hfx_audio_tower_frames(const hfx_audio_tower *t);

/* The tower over features [N, mels, 2·positions] (each clip's window, as the Whisper feature extractor pads it), its
 * tensors named under `prefix` ("audio_tower."): the last hidden state [N, frames, hidden]. With mask [N, 2·positions]
 * (i64, 1 where the clip's features are real) the keys past each clip's real frames are hidden from every layer and
 * *lengths receives each clip's real output frames [N] i64, as transformers counts them. Failures are the graph's. */
hfx_value *hfx_audio_tower_states(const hfx_audio_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *features, hfx_value *mask, hfx_value **lengths);

#endif
