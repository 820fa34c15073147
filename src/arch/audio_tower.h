/* The audio towers of audio language models (Qwen2-Audio, Voxtral, Audio Flamingo 3, Qwen3-ASR): Whisper's encoder — two
 * convolutions over log-mel features, a stored position table, Whisper's layers (vision.c's pre-norm stack), a final
 * LayerNorm — and, where the lineage has it, an average pool of every two frames before that norm; or Qwen3-ASR's:
 * three strided Conv2d over each chunk of log-mel frames, computed sinusoids restarting per chunk, the same layers
 * attending within windows of chunks. */
#ifndef HFX_ARCH_AUDIO_TOWER_H
#define HFX_ARCH_AUDIO_TOWER_H

#include "arch/conformer.h"
#include "arch/vision.h"

typedef enum {
    HFX_AUDIO_WHISPER, /* a window of 2·positions log-mel frames through two Conv1d, a stored position table */
    HFX_AUDIO_CHUNKED  /* Qwen3-ASR: chunks of 2·n_window frames, each through three Conv2d (3×3, stride 2, padding 1,
                          GELU) and conv_out to `positions` frames plus their sinusoids; n_window_infer / chunk chunks
                          side by side attend together */
} hfx_audio_form;

typedef struct hfx_audio_tower {
    hfx_vision_tower layers; /* the encoder's layers and sizes */
    hfx_audio_form form;
    int64_t mels;            /* num_mel_bins */
    int64_t positions;       /* max_source_positions: the frames after the strided convolution (the input's half);
                                chunked: the frames one chunk leaves */
    bool pool;               /* an average pool of two frames after the layers (Qwen2-Audio's, Audio Flamingo 3's) */
    int64_t chunk, per_window, channels; /* chunked: 2·n_window frames, the chunks of a window, downsample_hidden_size */
} hfx_audio_tower;

/* Read an audio tower's config (an audio LM's audio_config) for its model_type ("qwen2_audio_encoder",
 * "voxtral_encoder", "audioflamingo3_encoder", "qwen3_asr_encoder"); others are HFX_ERR_UNSUPPORTED, listing these. */
hfx_status hfx_audio_tower_parse(const char *model_type, hfx_cfg c, hfx_audio_tower *out, hfx_error *err);

/* The frames the tower outputs per clip: positions, halved where it pools; chunked: per window of chunks. */
int64_t hfx_audio_tower_frames(const hfx_audio_tower *t);

/* The tower's graph inputs for a batch of `batch` clips (windows), as hfx_audio_tower_states reads them: `features`
 * [N, mels, 2·positions] (chunked: [N, chunks per window, mels, chunk]) and, where mask_name is not NULL, the feature
 * mask [N, frames in] (i64). */
void hfx_audio_tower_inputs(const hfx_audio_tower *t, hfx_graph *g, hfx_dim batch, hfx_dtype dtype,
                            const char *mask_name, hfx_value **features, hfx_value **mask);

/* The tower over features [N, mels, 2·positions] (each clip's window, as the Whisper feature extractor pads it), its
 * tensors named under `prefix` ("audio_tower."): the last hidden state [N, frames, hidden]. With mask [N, 2·positions]
 * (i64, 1 where the clip's features are real) the keys past each clip's real frames are hidden from every layer and
 * *lengths receives each clip's real output frames [N] i64, as transformers counts them. Chunked: over each window of
 * chunks (hfx_audio_tower_inputs), its real frames first, the rest hidden (the mask is required). Failures are the
 * graph's. */
hfx_value *hfx_audio_tower_states(const hfx_audio_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *features, hfx_value *mask, hfx_value **lengths);

/* Sinusoids [rows, channels] as transformers computes them in float32 (Qwen3-ASR's positions, Gemma 4's relative
 * distances): sin then cos of t·e^(−j·ln(10⁴) / (channels/2 − 1)), row r's t = first + step·r; channels even. */
hfx_value *hfx_audio_sinusoids(hfx_graph *g, int64_t rows, int64_t channels, int64_t first, int64_t step,
                               hfx_dtype dtype);

/* The Universal Speech Model's conformer as Gemma 4 (Gemma4AudioModel) and Gemma 3n (Gemma3nAudioEncoder) hold it
 * (audio_usm.c): its audio_config. */
typedef enum { HFX_USM_GEMMA4, HFX_USM_GEMMA3N } hfx_usm_lineage;

typedef struct hfx_usm_audio {
    hfx_usm_lineage lineage;
    int64_t hidden, layers, heads;
    int64_t mels;                /* the log-mel bins it reads (Gemma 4: subsampling_conv_channels[0], a quarter of them
                                    after the convolutions being what its input projection takes; 3n: input_feat_size) */
    int64_t channels[2];         /* the two subsampling convolutions' channels */
    int64_t conv_kernel[2][2], conv_stride[2][2]; /* their (frames, bins) kernels and strides (Gemma 4: 3×3, 2×2) */
    int64_t pad_before;          /* the frames' zero padding before each (Gemma 4: 1 each side; 3n: kernel − 1 after) */
    int64_t kernel;              /* the light convolution's, causal */
    int64_t chunk, left, right;  /* the attention's chunk and its context left (own frame included) and right */
    int64_t nearest, farthest;   /* a chunk's query q sees window key k where nearest ≤ k − q ≤ farthest */
    int64_t pos_first, pos_rows; /* the relative distances' sinusoids: pos_rows of them from pos_first down by one */
    int64_t out;                 /* output_proj_dims (Gemma 4); 0: none */
    int64_t reduction;           /* conf_reduction_factor: every reduction-th frame kept at the end (3n; 1: all) */
    double cap, invalid;         /* the attention's logit cap; the hidden keys' logit */
    double key_scale;            /* the keys' factor (Gemma 4: ln(1 + e)/ln 2; 3n: 1) */
    double residual;             /* the feed-forwards' share */
    double eps, clip, group_eps; /* rms_norm_eps; gradient_clipping (the activations' bound); 3n's group norm's eps */
    hfx_activation act;          /* hidden_act (3n: silu) */
    bool clipped;                /* Gemma 4's use_clipped_linears */
} hfx_usm_audio;

/* Read the encoder's config under the lineage's names; bad fields name themselves. */
hfx_status hfx_usm_audio_parse(hfx_usm_lineage lineage, hfx_cfg c, hfx_usm_audio *out, hfx_error *err);

/* The encoder under `prefix` over features [N, T, mels] and their mask [N, T] i64 (1 on each clip's real frames, first):
 * [N, T', output_proj_dims or hidden_size] (T' = ⌈⌈T/s₀⌉/s₁⌉ by the time strides, then ⌈T'/reduction⌉), each clip's
 * real frames first, and *real [N, T'] bool marking them (Gemma 3n's padded frames zeroed). Failures are the graph's. */
hfx_value *hfx_usm_audio_tower(const hfx_usm_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                               hfx_value *features, hfx_value *mask, hfx_value **real);

/* Each clip's real frames [N] i64, from hfx_usm_audio_tower's *real. */
hfx_value *hfx_usm_real_frames(hfx_graph *g, hfx_value *real);

/* Granite Speech's encoder and projector (audio_granite.c): its encoder_config, projector_config (BLIP-2's Q-Former)
 * and the top config's window_size and downsample_rate. */
typedef struct hfx_granite_qformer {
    int64_t hidden, layers, heads, intermediate, cross_every, encoder_hidden;
    double eps;
    hfx_activation act;
} hfx_granite_qformer;

typedef struct hfx_granite_speech_encoder {
    hfx_conformer conformer;     /* the layers: Shaw's block attention, silu, the convolution module's inner width */
    int64_t input_dim, layers;
    int64_t ctc;                 /* output_dim: the middle CTC head's classes */
    int64_t window, downsample;  /* the projector's windows of frames and each window's queries (window / downsample) */
    hfx_granite_qformer qformer;
} hfx_granite_speech_encoder;

hfx_status hfx_granite_speech_parse(hfx_cfg c, hfx_cfg encoder, hfx_cfg projector, hfx_granite_speech_encoder *out,
                                    hfx_error *err);

/* The encoder under `encoder` ("model.encoder.") and the projector under `projector` ("model.projector.") over
 * features [N, T, input_dim] (the processor's; no mask: a batch's padded frames are attended to, as in transformers):
 * [N, ⌈T/window⌉·window/downsample, out]. Failures are the graph's. */
hfx_value *hfx_granite_speech_tower(const hfx_granite_speech_encoder *t, hfx_graph *g, hfx_weights *w, const char *encoder,
                                    const char *projector, hfx_value *features, int64_t out);

/* Phi-4-multimodal's audio encoder (audio_phi4.c: Phi4MultimodalAudioModel): its audio_config. */
typedef struct hfx_phi4_audio {
    int64_t hidden, layers, heads, intermediate;
    int64_t mels;                      /* input_size */
    hfx_nemo_subsampling subsampling;  /* nemo_conv_channels, log2(time_reduction) strided 3 × 3 convolutions */
    int64_t kernel, multiplier;        /* the depthwise convolution's kernel_size and depthwise_multiplier */
    int64_t chunk, left;               /* chunk_size (≤ 0: none) and left_chunk: the streaming window's */
    int64_t max_distance;              /* bias_max_distance: the distance bias's clip */
    bool symmetric;                    /* bias_symmetric: a row per |distance| */
    hfx_activation act, conv_act, glu_act; /* activation, conv_activation, conv_glu_type */
} hfx_phi4_audio;

hfx_status hfx_phi4_audio_parse(hfx_cfg c, hfx_phi4_audio *out, hfx_error *err);

/* The encoder under `prefix` over features [N, T, mels] and the mask [N, T] (1 on each clip's real features, first;
 * any integer or bool dtype): [N, ⌈T/time_reduction⌉, hidden], as transformers computes it given that mask (one clip of
 * all ones: as it computes it given none, what its processor passes for one clip). Failures are the graph's (NULL). */
hfx_value *hfx_phi4_audio_tower(const hfx_phi4_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                hfx_value *features, hfx_value *mask);

#endif
