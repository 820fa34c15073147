/* The multimodal families' shared parts (vlm.c: the families, their descriptors and naming schemes; vlm_encoders.c:
 * each lineage's encoder and projector): what a lineage is made of, and what its config says. */
#ifndef HFX_ARCH_VLM_H
#define HFX_ARCH_VLM_H

#include "arch/arch.h"
#include "arch/audio_tower.h"
#include "arch/decoder.h"
#include "arch/rope.h"
#include "arch/vision.h"
#include "arch/vision_grid.h"
#include "arch/weights.h"
#include "hf/config.h"

enum { MAX_FEATURE_LAYERS = 8 };

/* Where a lineage keeps its parts: the checkpoint's names as the Hub writes them, then as
 * transformers 5's modules name them (both occur). */
typedef struct vlm_names {
    const char *tower[4];       /* the vision tower's prefixes, first match wins */
    const char *projector;      /* "multi_modal_projector" */
    hfx_weight_rename text[3];  /* the language model's names: "model." → ... and "lm_head." → ... */
    const char *stacks[4];      /* the top-level stacks other components read: tower, projector, LM */
    const char *newline;        /* LLaVA-Next's image_newline [text hidden] (NULL: none), the image encoder's */
} vlm_names;

/* How a lineage turns the tower's states into features in the language model's width. */
typedef enum {
    VLM_LLAVA,   /* vision_feature_layer's hidden states (a list: concatenated), the first token dropped by
                    the "default" strategy, then linear_1 → projector_hidden_act → linear_2 */
    VLM_IDEFICS3, /* the last hidden state after the tower's post_layernorm, pixel-shuffled (scale_factor:
                    each s × s block of patches one token, s² times as wide), then one linear, no bias */
    VLM_GEMMA3,  /* the post-normed last state average-pooled to mm_tokens_per_image tokens, Gemma's RMSNorm,
                    a projection matrix [vision hidden, text hidden]; the language model sees each image's
                    tokens both ways (token_type_ids) */
    VLM_PALIGEMMA, /* the post-normed last state through one biased linear (multi_modal_projector.linear) into the
                    language model's width (projection_dim); the language model sees the whole prompt, image and
                    text, both ways (token_type_ids 0), the generated tokens causally (PaliGemma's prefix LM) */
    VLM_INTERNVL, /* vision_feature_layer's hidden states (the last through the tower's final norm where it has one),
                    the class token dropped, pixel-shuffled as Idefics3's (by 1/downsample_ratio), then LayerNorm,
                    linear_1 → projector_hidden_act → linear_2 */
    VLM_PIXTRAL, /* Pixtral's tower as a grid tower (vision_grid.c: any image size, its patches in Qwen2-VL's order
                    with image_grid_thw) without a merger; vision_feature_layer's states, then Mistral3's projector:
                    RMSNorm, each merge² block's states side by side channel by channel (unfold's order) through
                    merging_layer, linear_1 → projector_hidden_act → linear_2; plain positions */
    VLM_NAFLEX,  /* SigLIP 2's NaFlex tower (vision_naflex.c) over each image's patches (pixel_values [N, P, ·],
                    pixel_attention_mask, spatial_shapes), post-normed; each factor × factor block of an image's
                    patch grid one token (LFM2-VL's unshuffle, its tokens padded to P / factor²), LayerNorm (by
                    projector_use_layernorm), linear_1 → projector_hidden_act → linear_2 */
    VLM_LLAMA4,  /* Llama 4's tower's last state post-normed, its class token (last) dropped, pixel-shuffled by
                    1/pixel_shuffle_ratio, its adapter's fc1 → GELU → fc2 → GELU, then one unbiased linear */
    VLM_GEMMA4,  /* Gemma 4's vision encoder (vision_gemma4.c) over each image's patches and their (x, y) positions
                    (pixel_values [N, P, 3·patch²], image_position_ids [N, P, 2]), its pooled tokens through a
                    weight-less RMSNorm and one linear (embed_vision.embedding_projection); the language model's
                    sliding layers see each run of image tokens both ways (mm_token_type_ids as token_type_ids) */
    VLM_GEMMA3N, /* Gemma 3n (vlm_gemma3n.c): MobileNet-V5 (vision_mobilenet.c) and the USM audio encoder
                    (audio_usm.c), each through its embedder (embed_vision, embed_audio) into the text model; embed_tokens
                    embeds the ids of the vision and audio vocabularies by their embedders */
    VLM_PHI4MM,  /* Phi-4-multimodal (vlm_phi4mm.c): a SigLIP tower over each image's crops (positions bucketed over
                    each crop's real patches), its 2 × 2-averaged states through a GELU MLP, the separators' projections
                    beside them; its conformer audio encoder (audio_phi4.c) through either of two MLPs; the language
                    model Phi-3 over the top-level config */
    VLM_AUDIO,   /* an audio tower over log-mel windows, its projector the descriptor's (vlm_audio_projector) */
    VLM_GRANITE_SPEECH, /* Granite Speech's CTC conformer over stacked log-mel frames [N, T, input_dim] and its Q-Former
                    projector (audio_granite.c: encoder_config, projector_config); the audio token embedded as token 0
                    (its forward's), the language model's embedding multiplier on the merged embeddings */
    VLM_GRID     /* a grid tower (vision_grid.c: any image size, its merger the projector) over
                    pixel_values [num_patches, ·] and image_grid_thw; the language model's positions
                    M-RoPE's [3, B, S] (the descriptor's form); Qwen2-VL's text config may be the model's
                    own (the Hub's flat configs); Qwen3-VL's DeepStack features go into the first layers */
} vlm_kind;

/* How an audio lineage projects its tower's frames into the language model's width. */
typedef enum {
    AUDIO_LINEAR,      /* one biased linear (Qwen2-Audio's multi_modal_projector.linear) */
    AUDIO_MLP,         /* linear_1 → projector_hidden_act → linear_2, biased as projector_bias says (Audio Flamingo 3) */
    AUDIO_STACKED_MLP, /* the same without biases over every audio intermediate_size / hidden_size consecutive frames
                          side by side (Voxtral: 4 frames a token) */
    AUDIO_TOWER_MLP    /* linear_1 in the tower's width → the tower's activation_function → linear_2 into the language
                          model's, both biased (Qwen3-ASR) */
} vlm_audio_projector;

/* How the Python system's split (io "seed") calls the model's parts, as transformers 5.24's forwards do */
typedef struct vlm_seed_call {
    const char *output_class;    /* the decode's output class (NULL: the calls are not recorded in hfx: io "seed"
                                    refused) */
    const hfx_keyword_constant *lm_constants; /* ended by a NULL name: the keywords the model passes its language
                                                 model as constants (None; LLaVA-OneVision's logits_to_keep=0) */
    const char *lm_output_class; /* what its language model returns; NULL: BaseModelOutputWithPast */
} vlm_seed_call;

typedef struct vlm_desc {
    const char *architecture;
    const vlm_names *const *names; /* NULL-terminated: the naming schemes its checkpoints use */
    vlm_kind kind;
    const char *vision_default;    /* vision_config's (audio_config's) model_type when it names none */
    const char *text_default;      /* text_config's model_type when it names none (NULL: "llama") */
    int64_t image_token_default;
    const char *text_type;         /* the language model's model_type whatever text_config says (NULL: its own) */
    const hfx_decoder_desc *text;  /* the language model's descriptor where it has no causal LM of its own */
    hfx_mrope_form mrope;          /* VLM_GRID: the language model's M-RoPE */
    bool tied_by_top;              /* the head is tied as the top-level config says alone (default false), whatever
                                      text_config says: the Qwen3-VL lineage's configs do not forward the text's, as
                                      LLaVA's and Qwen2-VL's do */
    bool text_positions_first;     /* VLM_GRID: OpenVINO GenAI's path feeds position_ids [4, B, S], a row of text
                                      positions before M-RoPE's three (Qwen3.5's), to the stateful layout's language
                                      model */
    vlm_audio_projector audio;     /* VLM_AUDIO: its projector */
    const char *feature_mask;      /* VLM_AUDIO: the input naming each clip's real features, whose keys past them the
                                      tower hides (Qwen2-Audio's feature_attention_mask); NULL: whole windows */
    vlm_seed_call seed;
} vlm_desc;

/* Gemma 3n's embedder of one modality (a tower's config's fields) */
typedef struct vlm_embedder {
    int64_t offset, vocab; /* its vocabulary: vocab ids from offset */
    int64_t hidden;        /* the tower's width (hidden_size) */
    double eps;            /* rms_norm_eps */
} vlm_embedder;

typedef struct vlm_cfg {
    const hfx_decoder_desc *text_desc;
    hfx_decoder_cfg text;
    hfx_vision_tower vision;
    hfx_grid_tower grid;    /* VLM_GRID's tower (and `vision` a copy of its layers') */
    hfx_audio_tower audio;  /* VLM_AUDIO's tower (and `vision` a copy of its layers') */
    hfx_gemma4_vision gemma4; /* VLM_GEMMA4's encoder (and `vision.cfg` its widths) */
    hfx_usm_audio usm_audio; /* VLM_GEMMA4's audio encoder, where audio_config has one (has_audio); VLM_GEMMA3N's */
    hfx_mobilenet mobilenet; /* VLM_GEMMA3N's vision tower */
    hfx_phi4_audio phi4_audio; /* VLM_PHI4MM's audio encoder */
    vlm_embedder embedder[2]; /* VLM_GEMMA3N's vision and audio embedders */
    int64_t audio_tokens;   /* VLM_GEMMA3N: audio_soft_tokens_per_image, each clip's features */
    hfx_granite_speech_encoder granite;    /* VLM_GRANITE_SPEECH's encoder and projector */
    bool lora;              /* has_lora_adapter: the checkpoint's LoRA adapter (hfx_checkpoint_add_lora) required, as
                               transformers applies it to audio prompts (the decoder's linears add it wherever it
                               targets them) */
    bool has_audio;
    bool vision_blocks;     /* VLM_GEMMA4: use_bidirectional_attention "vision" (the image runs both ways) */
    int64_t placeholders[3]; /* VLM_GEMMA4: the image, video and audio token ids, embedded as pad_id */
    int n_placeholders;
    int64_t pad_id;
    int64_t stack;          /* AUDIO_STACKED_MLP: the frames side by side in a token */
    int64_t feature_layers[MAX_FEATURE_LAYERS]; /* hidden_states indices, 0..vision layers */
    int n_features;
    bool drop_first;        /* vision_feature_select_strategy "default": the first token is not a feature */
    hfx_activation projector_act;
    bool projector_bias;
    int64_t scale;          /* VLM_IDEFICS3's scale_factor; VLM_GEMMA3's pooling kernel */
    int64_t tokens_side;    /* VLM_GEMMA3: √mm_tokens_per_image */
    int64_t image_token;
    int64_t deepstack;      /* VLM_GRID: the DeepStack features the language model adds (its first layers') */
    bool final_norm;        /* VLM_INTERNVL: the features are the last state through the tower's final norm */
    bool any_size;          /* VLM_LLAVA: its vision_config a Pixtral tower (Pixtral-12B's), a grid tower of any image
                               size whose every patch is a token, LLaVA's projector over its states */
    double projector_eps;   /* VLM_PIXTRAL: its projector's RMSNorm's (the language model's rms_norm_eps) */
    int64_t naflex_grid;    /* VLM_NAFLEX: the tower's position grid's side */
    int64_t projector_width; /* VLM_NAFLEX: linear_1's output (projector_hidden_size); VLM_LLAMA4: the adapter's fc1's
                                (projector_input_dim) */
    int64_t adapter_out;    /* VLM_LLAMA4: the adapter's fc2's output (projector_output_dim) */
    bool projector_norm;    /* VLM_NAFLEX: projector_use_layernorm */
    bool genai_parts;       /* VLM_GRID: a tower OpenVINO's stateful layout writes as optimum-intel splits it (the
                               Qwen-VL lineages'), which GenAI's VLMPipeline reads */
} vlm_cfg;

/* A lineage's projector and feature choice (everything its encoder reads from config.json beyond the tower): c the
 * model's config, text its text_config, vision its vision_config. */
hfx_status hfx_vlm_parse_projector(const vlm_desc *d, hfx_cfg c, hfx_cfg text, hfx_cfg vision, vlm_cfg *m,
                                   hfx_error *err);

/* An audio lineage's tower (audio_config, of model_type `type`) and projector. */
hfx_status hfx_vlm_parse_audio(const vlm_desc *d, hfx_cfg c, hfx_cfg audio, const char *type, vlm_cfg *m,
                               hfx_error *err);

/* Whether `component` is one of the graphs of optimum-intel's split of a grid tower ("vision_embeddings",
 * "vision_embeddings_pos", "vision_embeddings_merger"), which hfx_vlm_build_encoder builds. */
bool hfx_vlm_grid_part(const char *component);

/* The image (audio) encoder: its inputs, the tower under `tower`, the lineage's projector, its outputs (Qwen2-VL's and
 * Qwen2.5-VL's components "vision_embeddings" and "vision_embeddings_merger": their tower as optimum-intel splits it,
 * GENERATION.md). Failures are the graph's. */
void hfx_vlm_build_encoder(const vlm_desc *d, const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                           const vlm_names *names, const char *tower);

/* Gemma 4's audio encoder: input_features [N, T, mels] and input_features_mask [N, T] → audio_features [N, T/4, text
 * hidden] and audio_feature_lengths [N] (each clip's real tokens, first), through the embedder (embed_audio). */
void hfx_vlm_build_gemma4_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w);

/* Gemma 3n (vlm_gemma3n.c): its towers' and embedders' configs (c the model's, vision its vision_config; after the
 * text model's); its image encoder over pixel_values [N, 3, size, size], the tower under `tower`; its audio encoder;
 * embed_tokens' embeddings of ids [...] → [..., text hidden]: the text table's (× √hidden), the vision and audio
 * vocabularies' by their embedders. */
hfx_status hfx_vlm_gemma3n_parse(hfx_cfg c, hfx_cfg vision, hfx_arena *arena, vlm_cfg *m, hfx_error *err);
void hfx_vlm_build_gemma3n_image(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                 const char *tower, int64_t size);
void hfx_vlm_build_gemma3n_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w);
hfx_value *hfx_vlm_gemma3n_embeddings(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, hfx_value *ids);

/* Phi-4-multimodal (vlm_phi4mm.c): its towers' configs (c the model's, vision its vision_config of model_type
 * vision_type; after the text model's); its image encoder over crops, the tower under `tower`; its audio encoder. */
hfx_status hfx_vlm_phi4mm_parse(hfx_cfg c, hfx_cfg vision, const char *vision_type, hfx_arena *arena, vlm_cfg *m,
                                hfx_error *err);
void hfx_vlm_build_phi4mm_image(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                const char *tower);
void hfx_vlm_build_phi4mm_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w);

#endif
