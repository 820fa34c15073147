/* The vision family's towers, for models that hold one (a VLM's image encoder): a tower is a
 * lineage's layout (CLIP's, SigLIP's) and its parsed vision_config. */
#ifndef HFX_ARCH_VISION_H
#define HFX_ARCH_VISION_H

#include "arch/arch.h"
#include "arch/nn.h"
#include "arch/weights.h"
#include "hf/config.h"

typedef struct hfx_vision_cfg {
    int64_t hidden, layers, heads, intermediate, image, patch, channels, pooler_size, labels, projection;
    double eps;
    hfx_activation act, pooler_act;
    bool qkv_bias;
    bool bias[5]; /* q, k, v, o and the MLP's projections biased (the layout's bias_keys; else qkv_bias, qkv_bias,
                     qkv_bias, true, true) */
    bool swiglu;  /* DINOv2's use_swiglu_ffn, DINOv3's use_gated_mlp */
    int64_t registers; /* DINOv3's register tokens after the class token (num_register_tokens) */
    double rope_theta; /* DINOv3's 2-D rotary base */
    int64_t grid; /* the side of the learned position grid: the config's image_size / patch_size (the
                     graph's image may differ where the lineage resamples its positions) */
    bool rms_norm;  /* RMSNorms (the layout's, or as its norm_type key says) */
    bool qk_norm;   /* q and k RMS-normed over every head (the layout's qk_norm_key) */
    bool positions; /* learned positions added (the layout has them and its positions_key does not turn them off) */
} hfx_vision_cfg;

typedef struct vision_layout vision_layout; /* a lineage's tensor names and defaults (vision.c) */

typedef struct hfx_vision_tower {
    const vision_layout *layout;
    hfx_vision_cfg cfg;
} hfx_vision_tower;

/* What a tower reads: fixed-size images, images of any size (a grid tower's), or log-mel audio (an audio
 * tower's: the same kind of layers behind convolutions). */
typedef enum { HFX_TOWER_IMAGE, HFX_TOWER_GRID, HFX_TOWER_AUDIO } hfx_tower_kind;

/* Read a tower's config (a VLM's vision_config) for its model_type: a fixed-size tower's
 * ("clip_vision_model", "siglip_vision_model", ...), a grid tower's (vision_grid.h: "qwen2_vl",
 * "qwen2_5_vl", ...) or an audio tower's layers (audio_tower.h: "qwen2_audio_encoder", ...) as `kind` says;
 * others are HFX_ERR_UNSUPPORTED, listing the kind's. */
hfx_status hfx_vision_tower_parse(const char *model_type, hfx_cfg c, hfx_tower_kind kind, hfx_vision_tower *out,
                                  hfx_error *err);

/* The tokens the tower sees per image: its patches and a class token where it has one. */
int64_t hfx_vision_tokens(const hfx_vision_tower *t);

/* The patch embedding's name under the tower's prefix ("embeddings.patch_embedding"), whose
 * ".weight" every checkpoint of the lineage has: how a host finds where the tower's names start. */
const char *hfx_vision_patch_name(const hfx_vision_tower *t);

/* Whether that patch embedding has a bias (".bias" beside its ".weight"). */
bool hfx_vision_patch_biased(const hfx_vision_tower *t);

/* The tower over pixels [B, channels, image, image] as far as hidden_states[upto] (0: the
 * embeddings, after any pre-norm; i: after layer i, 1 ≤ i ≤ layers), its tensors named under
 * `prefix`: returns hidden_states[upto] [B, tokens, hidden], and where `states` is given keeps
 * states[k] = hidden_states[k] for k ≤ upto. Failures are the graph's (NULL when it could not start). */
hfx_value *hfx_vision_tower_states(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, int64_t upto, hfx_value **states);

/* The pooled image embedding [B, hidden] of pixels [B, channels, image, image] after every layer:
 * CLIP's post-normed class token, SigLIP's attention pooling of its final norm; a lineage with
 * neither fails the graph. */
hfx_value *hfx_vision_tower_pooled(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels);

/* The tower's layers (t->cfg.layers of them, named under `prefix`) over x [B,T,hidden], attending
 * as `bias` says ([B|1, 1, T|1, T] f32: 0 visible, the float minimum not): a text tower of the
 * lineage has the same layers. */
hfx_value *hfx_vision_layers(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                             hfx_value *x, hfx_value *bias);

/* How a grid tower's tokens attend (vision_grid.c): the layers of such a tower see the tokens of
 * their image, or of their window, and turn q and k by the patches' 2-D positions. */
typedef struct hfx_vision_attend {
    hfx_value *bias;        /* [1,1,T,T] f32: 0 visible, the float minimum not */
    hfx_value *window_bias; /* the same for windowed layers, NULL where every layer uses `bias` */
    const bool *full;       /* per layer (with window_bias): true where the layer attends through `bias` */
    hfx_value *cos, *sin;   /* [1,1,T,head_dim] rotary of each token, or NULL */
    bool pairs;             /* the rotary turns pairs (2i, 2i+1) (Llama 4's), not halves */
} hfx_vision_attend;

/* hfx_vision_layers as far as layer `upto` (1 ≤ upto ≤ layers), each layer attending as `a` says; states (NULL: not
 * wanted) [layers + 1] receives each layer's output at [i + 1]. */
hfx_value *hfx_vision_layers_attending(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                       hfx_value *x, const hfx_vision_attend *a, int64_t upto, hfx_value **states);

/* The lineage's norm before the layers (CLIP's pre_layrnorm, Pixtral's ln_pre) under the tower's prefix, or NULL. */
const char *hfx_vision_pre_norm(const hfx_vision_tower *t);

/* The tower's attention-pooling head (SigLIP's: a probe attending over x [B,T,hidden], its keys hidden as `bias`
 * [B,1,1,T] f32 says) under `prefix`: [B, hidden]. */
hfx_value *hfx_vision_map_pool(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                               hfx_value *x, hfx_value *bias);

/* SigLIP 2's NaFlex tower (vision_naflex.c), SigLIP's layers under `prefix` over patches of any aspect ratio:
 * pixels [B,P,channels·patch²], mask [B,P] i32 (0: padding), shapes [B,2] i64 (each image's patch grid), the position
 * grid grid × grid resized to each: the post-normed states [B,P,hidden], and where `pooled` is given the attention
 * pooling over the real patches [B,hidden]. */
hfx_value *hfx_naflex_tower(const hfx_vision_tower *t, int64_t grid, hfx_graph *g, hfx_weights *w, const char *prefix,
                            hfx_value *pixels, hfx_value *mask, hfx_value *shapes, hfx_value **pooled);
/* The side of a NaFlex tower's position grid: √num_patches of its config `c`. */
hfx_status hfx_naflex_grid(hfx_cfg c, int64_t *grid, hfx_error *err);
/* Its patch count: the export's sequence dim where dynamic, else the processor's max_num_patches (256 without one). */
hfx_status hfx_naflex_patches(const hfx_checkpoint *ck, const hfx_build_opts *o, hfx_dim *out, hfx_error *err);

/* Gemma 4's vision encoder (vision_gemma4.c): its vision_config. */
typedef struct hfx_gemma4_vision {
    int64_t hidden, intermediate, layers, heads, kv_heads, head_dim;
    int64_t patch;               /* patch_size: a patch is 3·patch² values */
    int64_t kernel;              /* pooling_kernel_size: k × k patches a token */
    int64_t positions;           /* position_embedding_size: the x and y tables' rows */
    double eps, theta;           /* rms_norm_eps; the axial rotary's rope_theta */
    hfx_activation act;          /* hidden_activation */
    bool clipped;                /* use_clipped_linears: each linear's input and output clamped to its buffers */
    bool standardize;            /* the pooled tokens less std_bias, times std_scale */
} hfx_gemma4_vision;

hfx_status hfx_gemma4_vision_parse(hfx_cfg c, hfx_gemma4_vision *out, hfx_error *err);

/* The encoder under `prefix` over pixels [N, P, 3·patch²] (as the processor makes them: in [0, 1]) and positions
 * [N, P, 2] i64 ((x, y); (−1, −1) padding): [N, P/k², hidden] in pixels' dtype, each image's real tokens first and
 * *lengths [N] i64 counting them (its real patches / k²). Failures are the graph's. */
hfx_value *hfx_gemma4_vision_tower(const hfx_gemma4_vision *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, hfx_value *positions, hfx_value **lengths);

/* A Gemma4ClippableLinear `<prefix><name>` ([out, in] at .linear.weight, no bias) over x: with `clipped`
 * (use_clipped_linears) its input and output clamped to its scalar buffers input_min/max, output_min/max. */
hfx_value *hfx_gemma4_linear(hfx_graph *g, hfx_weights *w, bool clipped, hfx_value *x, int64_t in, int64_t out,
                             const char *prefix, const char *name);

/* Whether the lineage's norms are RMSNorms (a weight only) rather than LayerNorms. */
bool hfx_vision_rms_norm(const hfx_vision_tower *t);

/* The lineage's norm `name` (its .weight and .bias; an RMSNorm's .weight) over x's last axis, at the tower's eps. */
hfx_value *hfx_vision_norm(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *name, hfx_value *x);

/* Mark what follows hidden_states[upto] (the later layers, the final norms and heads) as
 * deliberately unused: a host that reads an inner layer's states drops them, as transformers does. */
void hfx_vision_tower_skip_rest(const hfx_vision_tower *t, hfx_weights *w, const char *prefix, int64_t upto);

/* The image the checkpoint's processor makes (preprocessor_config.json, or processor_config.json's image_processor
 * where transformers 5 saved a processor of several parts nested: its crop_size where it crops, else its size, as
 * height and width): 0 × 0 where the checkpoint has no image processor config. */
hfx_status hfx_processor_image_size(const hfx_checkpoint *ck, int64_t *height, int64_t *width, hfx_error *err);

enum { HFX_DAVIT_STAGES = 8 };

/* DaViT (vision_davit.c), Florence-2's vision tower: stages of a strided convolution (its LayerNorm before or after)
 * and blocks of a spatial block (windowed attention) then a channel block (attention across channel groups), each
 * sub-block behind a depthwise 3 × 3 convolution added to its input; its vision_config. */
typedef struct hfx_davit {
    int stages;
    int64_t in_channels;
    int64_t dim[HFX_DAVIT_STAGES], heads[HFX_DAVIT_STAGES], groups[HFX_DAVIT_STAGES], depth[HFX_DAVIT_STAGES];
    int64_t kernel[HFX_DAVIT_STAGES], stride[HFX_DAVIT_STAGES], padding[HFX_DAVIT_STAGES];
    bool prenorm[HFX_DAVIT_STAGES]; /* patch_prenorm: the stage's LayerNorm before its convolution (over its input) */
    int64_t window;                 /* window_size */
    double mlp_ratio;               /* a stage's MLP is int(dim · mlp_ratio) wide */
    bool qkv_bias;
    hfx_activation act;             /* activation_function */
    int64_t projection;             /* projection_dim: Florence-2's image features' width */
    int64_t positions, temporal;    /* max_position_embeddings (rows and columns), max_temporal_embeddings */
} hfx_davit;

hfx_status hfx_davit_parse(hfx_cfg c, hfx_davit *out, hfx_error *err);

/* The last stage's grid *h × *w of an image of height × width; false where a stage's convolution is wider than its
 * (padded) input. */
bool hfx_davit_grid(const hfx_davit *t, int64_t height, int64_t width, int64_t *h, int64_t *w);

/* Florence-2's image features: the tower under `tower` over pixels [N, in_channels, H, W] (H, W constant, a size
 * hfx_davit_grid accepts, its last grid within max_position_embeddings), then its
 * projector under `projector` (learned row and column positions, the first frame's temporal embedding, the mean of
 * every token before the tokens, image_projection and its LayerNorm): [N, 1 + h·w, projection]. Failures are the
 * graph's. */
hfx_value *hfx_florence2_features(const hfx_davit *t, hfx_graph *g, hfx_weights *w, const char *tower,
                                  const char *projector, hfx_value *pixels);

/* MobileNet-V5's encoder (vision_mobilenet.c; timm's "mobilenetv5_300m_enc", Gemma 3n's vision tower) as
 * transformers' TimmWrapperModel holds it: its config (vision_config) names the architecture and may scale its
 * channels (model_args.channel_multiplier). */
typedef struct hfx_mobilenet {
    double multiplier; /* model_args.channel_multiplier (1: none) */
} hfx_mobilenet;

/* Read the config: another timm architecture, a pooling head (do_pooling) or other model_args are
 * HFX_ERR_UNSUPPORTED, by name. */
hfx_status hfx_mobilenet_parse(hfx_cfg c, hfx_mobilenet *out, hfx_error *err);

/* The images it is exported for: the processor's (hfx_processor_image_size), else MobileNet-V5's 768 × 768. */
hfx_status hfx_mobilenet_image_size(const hfx_checkpoint *ck, int64_t *height, int64_t *width, hfx_error *err);

/* The encoder's feature map under `prefix` ("timm_model.") over pixels [N, 3, H, W] (H, W constant, multiples of 256):
 * [N, 2048, 16, 16]. Failures are the graph's. */
hfx_value *hfx_mobilenet_features(const hfx_mobilenet *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *pixels);

#endif
