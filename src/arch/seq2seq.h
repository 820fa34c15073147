/* The encoder-decoder family's shared parts (seq2seq.c: the template, its lineages' layouts and descriptors;
 * seq2seq_parse.c: what a config says; seq2seq_audio.c: the encoders' audio front ends): what a lineage and a
 * model are made of, the builders' context, and the blocks the files share. */
#ifndef HFX_ARCH_SEQ2SEQ_H
#define HFX_ARCH_SEQ2SEQ_H

#include "arch/arch.h"
#include "arch/nn.h"
#include "arch/rope.h"
#include "arch/vision.h"
#include "arch/weights.h"
#include "hf/config.h"

/* How a lineage tells the layers where each token is. */
typedef enum {
    POS_LEARNED,         /* a table of max_position_embeddings + offset rows (BART, mBART) */
    POS_SINUSOID_TABLE,  /* a sinusoid table (Marian): the checkpoint's when it stores one, else computed
                            as transformers makes it (float64, then float32) */
    POS_SINUSOID,        /* computed: sin of the first half, cos of the second, positions counting real tokens
                            from padding_idx + 1 and zero at padding (M2M100, NLLB) */
    POS_RELATIVE,        /* none added: a bias on the attention scores by bucketed distance (T5) */
    POS_ROTARY           /* none added: q and k of every self-attention turned by their positions, pairs
                            interleaved, the first partial_rotary_factor of each head (Moonshine) */
} position_kind;

/* Which linears and norms have a bias. */
typedef enum {
    BIAS_ALL,            /* every linear and norm (BART) */
    BIAS_ALL_BUT_KEY,    /* ... but the attention's key projection (Whisper) */
    BIAS_NONE,           /* none (T5) */
    BIAS_MLP_AND_QKV_BY_CONFIG /* the MLP's linears; q, k and v where config.attention_bias says; no norm
                                  or output projection (Moonshine) */
} bias_scheme;

/* An MLP's first linear: one activated, two (T5's gated-*: act(wi_0 x)·(wi_1 x)), or one of twice the
 * width whose second half, activated, gates its first (Moonshine's decoder). */
typedef enum { MLP_ONE, MLP_HALVES } mlp_form;

/* What the encoder reads. */
typedef enum {
    SRC_TOKENS,          /* input_ids and attention_mask */
    SRC_LOG_MEL,         /* Whisper: input_features [B, mels, 2·max_source_positions] through two Conv1d + GELU
                            (the second of stride 2) and a stored position table; no padding anywhere */
    SRC_WAVEFORM,        /* Moonshine: input_values and attention_mask [B, samples] through three Conv1d
                            (127/64 + tanh + GroupNorm, 7/3 + GELU, 3/2 + GELU), the mask every 384th sample */
    SRC_IMAGE_TEXT       /* Florence-2: inputs_embeds [B,S,hidden] and attention_mask, the caller's: embed_tokens'
                            embeddings with image_encoder's features (DaViT's, vision_davit.c) written over the
                            image tokens' */
} source_kind;

/* What differs between the lineages: config keys, tensor names, the shape of the blocks. Names are
 * "<stack>.<layer>.<sublayer>.<leaf>". */
typedef struct seq2seq_layout {
    const char *hidden, *enc_layers, *dec_layers, *enc_heads, *dec_heads, *enc_ffn, *dec_ffn; /* config keys */
    const char *enc_stack, *dec_stack;  /* "model.encoder" */
    const char *layer;                  /* "layers.%lld" */
    const char *self_attn, *cross_attn; /* "self_attn", "encoder_attn" */
    const char *proj[4];                /* q, k, v, out */
    const char *self_norm, *cross_norm, *enc_mlp_norm, *dec_mlp_norm;
    const char *enc_mlp, *dec_mlp;      /* the MLP's own prefix under the layer (NULL: none) */
    const char *fc_in, *fc_out;         /* "fc1", "fc2"; a gated MLP: fc_in "_0" (activated) and "_1" */
    const char *final_norm;             /* under the stack, after the last layer (pre-norm) */
    const char *dec_final_norm;         /* the decoder's, where its name differs (NULL: final_norm) */
    const char *shared;                 /* the table both stacks and the head tie to */
    const char *head;                   /* the LM head's weight: "lm_head.weight" */
    const char *positions_rows;         /* the config key of the decoder's position table rows */
    bool rms_norm;                      /* T5's norm: x·rsqrt(mean(x²) + ε)·w, no bias, no mean */
    bias_scheme bias;
    bool relative;                      /* relative position buckets, unscaled attention scores, heads of d_kv */
    const char *act_keys[2];            /* the encoder's and decoder's activation (NULL: activation_function) */
    mlp_form dec_mlp_form;              /* the decoder MLP's first linear (the encoder's is MLP_ONE) */
    const char *vision_tower, *projector; /* SRC_IMAGE_TEXT: the image encoder's prefixes ("model.vision_tower.") */
    const char *encoder_output;         /* the ModelOutput class the encoder stack returns (the seed profile's
                                           encoder_outputs); NULL: BaseModelOutput */
} seq2seq_layout;

/* What the model puts on top of its stacks. */
typedef enum {
    S2S_HEAD_LM,         /* the LM head over the decoder (with final_logits_bias where the model has one) */
    S2S_HEAD_CLASSIFIER, /* *ForSequenceClassification: the decoder reads the sources shifted right, and
                            classification_head (dense, tanh, out_proj) reads the last EOS's state */
    S2S_HEAD_NONE,       /* the bare model (BartModel, T5Model, WhisperModel, ...): the decoder's last hidden state */
    S2S_HEAD_ENCODER     /* the encoder alone (T5EncoderModel): its last hidden state */
} seq2seq_head;

/* How one model differs within its lineage. */
typedef struct seq2seq_desc {
    const char *architecture;
    const seq2seq_layout *layout;
    position_kind positions;
    int64_t offset;   /* added to a position before the table lookup (BART's 2) */
    bool pre_norm;    /* norms before each block and a final norm after the last layer (mBART, M2M100, T5) */
    bool embed_norm;  /* layernorm_embedding after the embeddings (BART, mBART) */
    bool logits_bias; /* final_logits_bias added to the logits (BART, mBART, Marian) */
    bool bias_every_layer; /* every layer has its own relative attention bias (UMT5); else layer 0's serves all */
    bool output_scale; /* the decoder's output × d_model^-½ before the head where config.json's
                          scale_decoder_outputs (else tie_word_embeddings) says (T5, UMT5; MT5 never) */
    seq2seq_head head;
    source_kind source;
} seq2seq_desc;

typedef struct seq2seq_cfg {
    int64_t vocab, dec_vocab, hidden, enc_layers, dec_layers, enc_heads, dec_heads, enc_ffn, dec_ffn;
    int64_t enc_hd, dec_hd;   /* the heads' width (T5: d_kv; else d_model / heads) */
    int64_t max_position, pad, eos, start, labels; /* eos, start, labels: a classifier's */
    source_kind source;       /* the descriptor's (what a forward-only export's inputs are) */
    int64_t mels, source_positions; /* Whisper: num_mel_bins, max_source_positions (frames / 2) */
    double eps;
    hfx_activation act[2];    /* the encoder's MLP activation, the decoder's */
    bool gated;               /* T5's gated-*: act(wi_0 x)·(wi_1 x) */
    bool qkv_bias, key_bias, out_bias, mlp_bias, norm_bias; /* the layout's bias scheme, as the config sets it */
    hfx_rope rope;            /* POS_ROTARY */
    bool scale_embedding, tied, shared; /* shared: share_encoder_decoder_embeddings (Marian), which needs
                                           one vocabulary */
    bool scale_decoder_output; /* T5: the decoder's output × d_model^-0.5 before the head */
    int64_t buckets, max_distance; /* T5's relative positions */
    int64_t *enc_buckets, *dec_buckets; /* [2·max_distance + 1]: the bucket of distance j − i, clamped to
                                           ±max_distance (bidirectional, causal); arena */
    hfx_davit davit;          /* SRC_IMAGE_TEXT: the vision tower (vision_config) */
    int64_t image_token;      /* SRC_IMAGE_TEXT: image_token_id */
    float inv_freq[4096];     /* POS_SINUSOID: exp(k·−ln(10⁴)/(half − 1)) in float32, k < half */
} seq2seq_cfg;

/* What every builder of one graph reads. */
typedef struct s2s_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const seq2seq_desc *d;
    const seq2seq_cfg *m;
    const hfx_build_opts *o;
    hfx_value *lowest, *zero; /* the additive mask's values (f32) */
} s2s_ctx;

/* seq2seq_parse.c: config.json into the cfg of `desc` (the family's parse). */
hfx_status hfx_s2s_parse(const void *desc, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err);

/* seq2seq.c: the encoder's layers and final norm over x [B,S,hidden], keys masked by `bias` [B|1,1,1,S]. */
hfx_value *hfx_s2s_encoder_layers(s2s_ctx *c, hfx_value *x, hfx_value *bias);
/* The additive bias [B,1,1,T] of a padding mask [B,T] (i64): 0 where the key is real, the float32 minimum where it
 * is padding. */
hfx_value *hfx_s2s_padding_bias(s2s_ctx *c, hfx_value *mask);
/* An all-visible bias [1,1,1,T]. */
hfx_value *hfx_s2s_no_mask(s2s_ctx *c, int64_t T);

/* seq2seq_audio.c: Whisper's encoder over input_features [B, mels, 2·max_source_positions]: [B,P,hidden]. */
hfx_value *hfx_s2s_encode_log_mel(s2s_ctx *c, hfx_value *features);
/* Moonshine's encoder over input_values and attention_mask [B,N]: [B,F,hidden], and in *frame_mask the frames'
 * mask [B,F] (i64). */
hfx_value *hfx_s2s_encode_waveform(s2s_ctx *c, hfx_value *values, hfx_value *mask, hfx_value **frame_mask);
/* The frames of n samples through Moonshine's convolutions (0 where n is too short for one). */
int64_t hfx_s2s_waveform_frames(int64_t n);
/* The fewest samples that make one frame. */
int64_t hfx_s2s_waveform_receptive_field(void);

#endif
