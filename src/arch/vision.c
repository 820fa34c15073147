/* The vision family: ViT-style image encoders as one template, a layout per model family (ViT,
 * CLIP's and SigLIP's vision towers) and a descriptor per head. pixel_values [B, channels, H, W]
 * (H and W the config's image_size) are cut into patches by the patch embedding — a Conv2d whose
 * kernel equals its stride, written as the exact linear it is over the flattened patches — a class
 * token goes in front (not SigLIP's), learned positions are added (CLIP: then a LayerNorm), and N
 * pre-norm layers of bidirectional attention and an MLP follow, then a final LayerNorm (ViT's,
 * SigLIP's). Heads: ViT's pooler (an activation of a dense layer on the class token) and image
 * classifier (a linear on it); CLIP's pooled class token (its post-LayerNorm) and image embedding
 * (that, projected); SigLIP's attention pooling (a learned probe attending over the tokens).
 *
 * Component: a plain forward, `model` (pixel_values → last_hidden_state and pooler_output, or
 * logits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/nn.h"
#include "arch/rope.h"
#include "arch/vision.h"
#include "arch/weights.h"
#include "base/half.h"
#include "base/mapping.h"
#include "base/status.h"
#include "hf/config.h"

/* The config keys of a tower's sizes, where a lineage's are not ViT's. */
typedef struct tower_keys {
    const char *hidden, *layers, *heads;
    const char *channels; /* NULL: 3, whatever the config says (an audio tower has none) */
    const char *eps; /* NULL: the layout's eps_default, whatever the config says (the model hard-codes it) */
    const char *intermediate, *act; /* NULL: "intermediate_size", "hidden_act"; act "": the layout's act_default
                                       whatever the config says (Llama 4's tower hard-codes GELU) */
} tower_keys;

static const tower_keys vit_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_channels",
                                    "layer_norm_eps", NULL, NULL};

/* Config keys and tensor names (under the model's prefix: "vit." in a head model) of a lineage. */
struct vision_layout {
    const char *prefix;                       /* "vit": where a head model keeps the encoder */
    const char *patch, *cls, *positions;      /* the patch projection, class token (NULL: none), positions */
    bool patch_bias;                          /* the patch projection has a bias (not CLIP's) */
    bool flat_tokens;                         /* class token [hidden] and positions [tokens, hidden] (an
                                                 nn.Embedding's), not [1, 1, hidden] and [1, tokens, hidden] */
    const char *pre_norm;                     /* a LayerNorm before the layers (CLIP's pre_layrnorm); NULL: none */
    const char *layer;                        /* "encoder.layer.%lld" */
    const char *q, *k, *v, *o, *norm1, *norm2, *fc1, *fc2;
    const char *final_norm;                   /* over every token after the layers (ViT); NULL: none */
    const char *post_norm;                    /* over the pooled class token (CLIP); NULL: none */
    const char *pooler, *classifier;          /* ViT's heads */
    const char *projection;                   /* CLIP's image projection (no bias) */
    const char *map_head;                     /* SigLIP's attention-pooling head: a learned probe attending
                                                 over the tokens (nn.MultiheadAttention), then LayerNorm
                                                 and the MLP, residual */
    const char *act_default;                  /* the activation hidden_act defaults to */
    double eps_default;                       /* layer_norm_eps's default */
    const char *layer_scale1, *layer_scale2;  /* per-channel scales of the attention's and the MLP's
                                                 outputs (DINOv2's lambda1); NULL: none */
    bool mlp_ratio;                           /* the MLP is hidden · mlp_ratio wide (no intermediate_size);
                                                 use_swiglu_ffn picks gate/up/down SiLU at ⅔ of it, ×8 */
    bool resample_positions;                  /* positions resampled (bicubic) to the image the processor
                                                 makes when it differs from the config's (DINOv2) */
    const char *unused;                       /* a tensor no forward reads (DINOv2's mask_token) */
    bool classify_mean;                       /* the classifier reads the class token ⊕ the patches' mean */
    const tower_keys *keys;                   /* NULL: ViT's */
    const char *qkv;                          /* q, k and v as one projection [3·hidden, hidden] (q, k, v
                                                 then unused) */
    bool rms_norm;                            /* RMSNorms (a weight, no bias) where the others have LayerNorms */
    bool gated_mlp;                           /* down(act(gate(x)) · up(x)), biased as bias[4] says */
    const char *gated_key;                    /* the config key that switches the gated MLP on (DINOv2's
                                                 use_swiglu_ffn: SiLU at ⅔ of the width; DINOv3's use_gated_mlp:
                                                 hidden_act) */
    const char *bias_keys[5];                 /* config keys of the q, k, v, o and MLP biases (DINOv3's query_bias,
                                                 ...); NULL: qkv_bias for q/k/v, o and the MLP always */
    bool bias_defaults[5];                    /* ... their defaults */
    const char *registers;                    /* register tokens [1, R, hidden] after the class token, R the
                                                 config's num_register_tokens (DINOv3); NULL: none */
    bool rope_2d;                             /* the patches turned by a 2-D rotary of their centers' coordinates
                                                 in [-1, 1] (DINOv3: rope_theta; the class and register tokens
                                                 not turned) */
    bool rope_pairs;                          /* ... or of their column and row + 1, pairs of a head turning
                                                 (Llama 4's: rope_parameters' rope_theta; the class token not) */
    bool patch_linear;                        /* the patch embedding a Linear [hidden, C·P·P] over the unfolded
                                                 patches (Llama 4's) rather than a Conv2d's [hidden, C, P, P] */
    bool cls_last;                            /* the class token after the patches (Llama 4's), not before */
    unsigned no_bias;                         /* bits (1 << j, j as in bias[]) of the projections without a bias
                                                 whatever the config says: Whisper's key, every one of Pixtral's */
    const char *mlp;                          /* the gated MLP's prefix under the layer (NULL: "mlp") */
    const char *norm_type_key;                /* the config key naming the norms, "layer_norm" or "rms_norm"
                                                 (InternViT's norm_type); NULL: rms_norm says */
    const char *qk_norm_key;                  /* the config key that RMS-normalises q and k over every head at once
                                                 (InternViT's use_qk_norm), by these norms (eps 1e-6): */
    const char *q_norm, *k_norm;
    const char *positions_key;                /* the config key that turns the learned positions off (InternViT's
                                                 use_absolute_position_embeddings); NULL: always there */
};

static const vision_layout vit_layout = {
    .prefix = "vit", .patch = "embeddings.patch_embeddings.projection", .cls = "embeddings.cls_token",
    .positions = "embeddings.position_embeddings", .patch_bias = true, .layer = "encoder.layer.%lld",
    .q = "attention.attention.query", .k = "attention.attention.key", .v = "attention.attention.value",
    .o = "attention.output.dense", .norm1 = "layernorm_before", .norm2 = "layernorm_after", .fc1 = "intermediate.dense",
    .fc2 = "output.dense", .final_norm = "layernorm", .pooler = "pooler.dense", .classifier = "classifier",
    .act_default = "gelu", .eps_default = 1e-12};

static const vision_layout clip_layout = {
    .prefix = "vision_model", .patch = "embeddings.patch_embedding", .cls = "embeddings.class_embedding",
    .positions = "embeddings.position_embedding.weight", .flat_tokens = true, .pre_norm = "pre_layrnorm",
    .layer = "encoder.layers.%lld", .q = "self_attn.q_proj", .k = "self_attn.k_proj", .v = "self_attn.v_proj",
    .o = "self_attn.out_proj", .norm1 = "layer_norm1", .norm2 = "layer_norm2", .fc1 = "mlp.fc1", .fc2 = "mlp.fc2",
    .post_norm = "post_layernorm", .projection = "visual_projection", .act_default = "quick_gelu",
    .eps_default = 1e-5};

static const vision_layout dinov2_layout = {
    .prefix = "dinov2", .patch = "embeddings.patch_embeddings.projection", .cls = "embeddings.cls_token",
    .positions = "embeddings.position_embeddings", .patch_bias = true, .layer = "encoder.layer.%lld",
    .q = "attention.attention.query", .k = "attention.attention.key", .v = "attention.attention.value",
    .o = "attention.output.dense", .norm1 = "norm1", .norm2 = "norm2", .fc1 = "mlp.fc1", .fc2 = "mlp.fc2",
    .final_norm = "layernorm", .classifier = "classifier", .act_default = "gelu", .eps_default = 1e-6,
    .layer_scale1 = "layer_scale1.lambda1", .layer_scale2 = "layer_scale2.lambda1", .mlp_ratio = true,
    .resample_positions = true, .unused = "embeddings.mask_token", .classify_mean = true,
    .gated_key = "use_swiglu_ffn"};

/* DINOv3's ViT: no learned positions (a 2-D rotary of the patches instead), register tokens after the class token,
 * q/k/v/o and MLP biases each by its own key (no key bias by default), layer scales, up/down (or gated) MLP, the
 * final norm; the graph takes the image its processor makes. */
static const vision_layout dinov3_layout = {
    .prefix = "model", .patch = "embeddings.patch_embeddings", .cls = "embeddings.cls_token", .patch_bias = true, .layer = "layer.%lld",
    .q = "attention.q_proj", .k = "attention.k_proj", .v = "attention.v_proj", .o = "attention.o_proj",
    .norm1 = "norm1", .norm2 = "norm2", .fc1 = "mlp.up_proj", .fc2 = "mlp.down_proj", .final_norm = "norm",
    .act_default = "gelu", .eps_default = 1e-5, .layer_scale1 = "layer_scale1.lambda1",
    .layer_scale2 = "layer_scale2.lambda1", .resample_positions = true, .unused = "embeddings.mask_token",
    .gated_key = "use_gated_mlp", .bias_keys = {"query_bias", "key_bias", "value_bias", "proj_bias", "mlp_bias"},
    .bias_defaults = {true, false, true, true, true}, .registers = "embeddings.register_tokens", .rope_2d = true};

/* InternVL's InternViT: ViT's shape under its own names (the class token and positions [1, tokens, hidden]), layer
 * scales, q/k/v biased by attention_bias, LayerNorms or RMSNorms by norm_type, q and k RMS-normed by use_qk_norm; its
 * final norm (without use_mean_pooling) is the host's to apply */
static const vision_layout internvl_layout = {
    .prefix = "vision_tower", .patch = "embeddings.patch_embeddings.projection", .cls = "embeddings.cls_token",
    .positions = "embeddings.position_embeddings", .patch_bias = true, .layer = "encoder.layer.%lld",
    .q = "attention.q_proj", .k = "attention.k_proj", .v = "attention.v_proj", .o = "attention.projection_layer",
    .norm1 = "layernorm_before", .norm2 = "layernorm_after", .fc1 = "mlp.fc1", .fc2 = "mlp.fc2",
    .final_norm = "layernorm", .act_default = "gelu", .eps_default = 1e-6, .layer_scale1 = "lambda_1",
    .layer_scale2 = "lambda_2", .bias_keys = {"attention_bias", "attention_bias", "attention_bias"},
    .norm_type_key = "norm_type", .qk_norm_key = "use_qk_norm", .q_norm = "attention.q_norm",
    .k_norm = "attention.k_norm", .positions_key = "use_absolute_position_embeddings"};

/* Llama 4's tower: an unfolded patch Linear, the class token last, learned positions [tokens, hidden], pre- and
 * post-LayerNorms, biased projections, an exact-GELU fc1/fc2 MLP, a 2-D rotary of pairs; its pixel-shuffle adapter is
 * the host's */
static const tower_keys llama4_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_channels", NULL,
                                       NULL, ""};
static const vision_layout llama4_layout = {
    .patch = "patch_embedding.linear", .patch_linear = true, .cls = "class_embedding", .cls_last = true,
    .positions = "positional_embedding_vlm", .flat_tokens = true, .pre_norm = "layernorm_pre",
    .layer = "model.layers.%lld", .q = "self_attn.q_proj", .k = "self_attn.k_proj", .v = "self_attn.v_proj",
    .o = "self_attn.o_proj", .norm1 = "input_layernorm", .norm2 = "post_attention_layernorm", .fc1 = "mlp.fc1",
    .fc2 = "mlp.fc2", .final_norm = "layernorm_post", .act_default = "gelu", .eps_default = 1e-5, .rope_pairs = true,
    .keys = &llama4_keys};

static const vision_layout siglip_layout = {
    .prefix = "vision_model", .patch = "embeddings.patch_embedding", .positions = "embeddings.position_embedding.weight",
    .patch_bias = true, .flat_tokens = true, .layer = "encoder.layers.%lld", .q = "self_attn.q_proj",
    .k = "self_attn.k_proj", .v = "self_attn.v_proj", .o = "self_attn.out_proj", .norm1 = "layer_norm1",
    .norm2 = "layer_norm2", .fc1 = "mlp.fc1", .fc2 = "mlp.fc2", .final_norm = "post_layernorm", .map_head = "head",
    .act_default = "gelu_pytorch_tanh", .eps_default = 1e-6};

/* Qwen2-VL's and Qwen2.5-VL's towers (vision_grid.c runs them over a grid of patches): no class
 * token or learned positions (2-D rotary instead), fused q/k/v, eps fixed at 1e-6. */
static const tower_keys qwen2_vl_keys = {"embed_dim", "depth", "num_heads", "in_channels", NULL, NULL, NULL};
static const tower_keys qwen2_5_vl_keys = {"hidden_size", "depth", "num_heads", "in_channels", NULL, NULL, NULL};
static const vision_layout qwen2_vl_layout = {
    .patch = "patch_embed.proj", .layer = "blocks.%lld", .qkv = "attn.qkv", .o = "attn.proj", .norm1 = "norm1",
    .norm2 = "norm2", .fc1 = "mlp.fc1", .fc2 = "mlp.fc2", .act_default = "quick_gelu", .eps_default = 1e-6,
    .mlp_ratio = true, .keys = &qwen2_vl_keys};
static const vision_layout qwen2_5_vl_layout = {
    .patch = "patch_embed.proj", .layer = "blocks.%lld", .qkv = "attn.qkv", .o = "attn.proj", .norm1 = "norm1",
    .norm2 = "norm2", .act_default = "silu", .eps_default = 1e-6, .keys = &qwen2_5_vl_keys, .rms_norm = true,
    .gated_mlp = true};

/* Pixtral's (vision_grid.c runs it over images of any size, its patches in Qwen2-VL's order): an unbiased patch
 * projection, ln_pre, RMSNorms at 1e-5, no linear biased, a gated MLP of hidden_act; 2-D axial rotary instead of
 * positions */
static const tower_keys pixtral_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_channels",
                                        NULL, NULL, NULL};
static const vision_layout pixtral_layout = {
    .patch = "patch_conv", .pre_norm = "ln_pre", .layer = "transformer.layers.%lld", .q = "attention.q_proj",
    .k = "attention.k_proj", .v = "attention.v_proj", .o = "attention.o_proj", .norm1 = "attention_norm",
    .norm2 = "ffn_norm", .mlp = "feed_forward", .act_default = "gelu", .eps_default = 1e-5, .rms_norm = true,
    .gated_mlp = true, .no_bias = 0x1f, .keys = &pixtral_keys};

/* Qwen3-VL's and Qwen3.5's: a biased patch projection (learned positions added in vision_grid.c), LayerNorms,
 * fused q/k/v, a biased fc1/fc2 MLP of intermediate_size */
static const vision_layout qwen3_vl_layout = {
    .patch = "patch_embed.proj", .patch_bias = true, .layer = "blocks.%lld", .qkv = "attn.qkv", .o = "attn.proj",
    .norm1 = "norm1", .norm2 = "norm2", .fc1 = "mlp.linear_fc1", .fc2 = "mlp.linear_fc2",
    .act_default = "gelu_pytorch_tanh", .eps_default = 1e-6, .keys = &qwen2_5_vl_keys};

/* The Whisper encoder's layers as audio language models hold them (audio_tower.c adds the convolutions, positions and
 * pooling): the same pre-norm stack, a key projection without bias, LayerNorms at nn.LayerNorm's eps; sizes under
 * Whisper's keys (Qwen2-Audio's configs) or transformers 5's (Voxtral's, Audio Flamingo 3's). The first convolution
 * stands for the patch embedding: a host finds the tower's prefix by it. */
static const tower_keys whisper_keys = {"d_model", "encoder_layers", "encoder_attention_heads", NULL, NULL,
                                        "encoder_ffn_dim", "activation_function"};
static const tower_keys whisper_v5_keys = {"hidden_size", "num_hidden_layers", "num_attention_heads", NULL, NULL,
                                           "intermediate_size", "activation_function"};
#define WHISPER_STACK                                                                                               \
    .patch_bias = true, .layer = "layers.%lld", .q = "self_attn.q_proj", .k = "self_attn.k_proj",                   \
    .v = "self_attn.v_proj", .o = "self_attn.out_proj", .norm1 = "self_attn_layer_norm", .norm2 = "final_layer_norm", \
    .fc1 = "fc1", .fc2 = "fc2", .act_default = "gelu", .eps_default = 1e-5
#define WHISPER_LAYERS WHISPER_STACK, .patch = "conv1", .final_norm = "layer_norm", .no_bias = 1u << 1
static const vision_layout whisper_layout = {WHISPER_LAYERS, .keys = &whisper_keys};
static const vision_layout whisper_v5_layout = {WHISPER_LAYERS, .keys = &whisper_v5_keys};
/* Qwen3-ASR's: Whisper's layers with a biased key projection, its first Conv2d the patch embedding, ln_post last */
static const vision_layout qwen3_asr_layout = {WHISPER_STACK, .patch = "conv2d1", .final_norm = "ln_post",
                                               .keys = &whisper_keys};

typedef enum {
    HEAD_POOLER,     /* ViT: last_hidden_state, pooler_output = act(dense(class token)) where it has one;
                        SigLIP: its attention-pooling head's output where it has one */
    HEAD_CLASSIFIER, /* ViT: logits = classifier(class token) */
    HEAD_POOLED,     /* CLIP: last_hidden_state, pooler_output = post_norm(class token) */
    HEAD_PROJECTED,  /* CLIP: image_embeds = projection(post_norm(class token)), last_hidden_state */
    HEAD_FIRST       /* DINOv2: last_hidden_state, pooler_output = its class token */
} vision_head;

struct vision_desc {
    const char *architecture;
    const vision_layout *layout;
    vision_head head;
};
typedef struct vision_desc vision_desc;

typedef hfx_vision_cfg vision_cfg;

/* image_size and patch_size: one number, or [height, width] of equal values (a square). */
static hfx_status square(hfx_cfg c, const char *key, int64_t fallback, int64_t *out, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (json_is_array(v) && json_array_size(v) == 2 && json_is_integer(json_array_get(v, 0)) &&
        json_equal(json_array_get(v, 0), json_array_get(v, 1))) {
        *out = json_integer_value(json_array_get(v, 0));
        if (*out < 1 || *out > 1 << 16) return hfx_fail(err, HFX_ERR_INVALID, "%s: %s is out of range", c.where, key);
        return HFX_OK;
    }
    if (json_is_array(v))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s must be one number or a square [h, w]", c.where, key);
    return hfx_cfg_int_in_or(c, key, fallback, 1, 1 << 16, out, err);
}

/* The MLP's width: intermediate_size, or (DINOv2) int(hidden · mlp_ratio), which its SwiGLU
 * (use_swiglu_ffn) takes two thirds of, rounded up to a multiple of 8. */
static hfx_status intermediate(const vision_layout *L, hfx_cfg c, vision_cfg *m, hfx_error *err) {
    hfx_status st;
    const char *key = L->keys && L->keys->intermediate ? L->keys->intermediate : "intermediate_size";
    if (L->gated_key && (st = hfx_cfg_bool_or(c, L->gated_key, false, &m->swiglu, err))) return st;
    if (!L->mlp_ratio) return hfx_cfg_int_in(c, key, 1, 1 << 24, &m->intermediate, err);
    double ratio;
    if ((st = hfx_cfg_num_or(c, "mlp_ratio", 4.0, &ratio, err))) return st;
    if (!(ratio > 0 && ratio * (double)m->hidden < (double)(1 << 24)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: mlp_ratio %g is out of range", c.where, ratio);
    m->intermediate = (int64_t)((double)m->hidden * ratio);
    if (m->swiglu) m->intermediate = ((int64_t)((double)m->intermediate * 2 / 3) + 7) / 8 * 8;
    if (m->intermediate < 1) return hfx_fail(err, HFX_ERR_INVALID, "%s: mlp_ratio %g leaves no MLP", c.where, ratio);
    return HFX_OK;
}

/* What a lineage's config switches: the norms' kind, q/k norms, learned positions. */
static hfx_status parse_switches(const vision_layout *L, hfx_cfg c, vision_cfg *m, hfx_error *err) {
    hfx_status st;
    const char *type;
    m->rms_norm = L->rms_norm;
    m->positions = L->positions != NULL;
    if ((L->qk_norm_key && (st = hfx_cfg_bool_or(c, L->qk_norm_key, false, &m->qk_norm, err))) ||
        (L->positions_key && (st = hfx_cfg_bool_or(c, L->positions_key, true, &m->positions, err))))
        return st;
    if (!L->norm_type_key) return HFX_OK;
    if ((st = hfx_cfg_str_or(c, L->norm_type_key, "layer_norm", &type, err))) return st;
    if (strcmp(type, "layer_norm") != 0 && strcmp(type, "rms_norm") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' (supported: layer_norm, rms_norm)", c.where,
                        L->norm_type_key, type);
    m->rms_norm = strcmp(type, "rms_norm") == 0;
    return HFX_OK;
}

static hfx_status parse_tower(const vision_layout *L, hfx_cfg c, vision_cfg *m, hfx_error *err) {
    const tower_keys *k = L->keys ? L->keys : &vit_keys;
    hfx_status st;
    m->eps = L->eps_default;
    if ((st = hfx_cfg_int_in(c, k->hidden, 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, k->layers, 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, k->heads, 1, 4096, &m->heads, err)) ||
        (st = intermediate(L, c, m, err)) ||
        (st = k->channels ? hfx_cfg_int_in_or(c, k->channels, 3, 1, 64, &m->channels, err) : (m->channels = 3, HFX_OK)) ||
        (st = square(c, "image_size", 224, &m->image, err)) || (st = square(c, "patch_size", 16, &m->patch, err)) ||
        (k->eps && (st = hfx_cfg_num_or(c, k->eps, L->eps_default, &m->eps, err))) ||
        (st = hfx_cfg_bool_or(c, "qkv_bias", true, &m->qkv_bias, err)) ||
        (st = k->act && !k->act[0] ? (hfx_activation_from_name(L->act_default, &m->act), HFX_OK)
                                   : hfx_cfg_activation(c, k->act ? k->act : "hidden_act", L->act_default, &m->act, err)) ||
        (st = hfx_cfg_activation(c, "pooler_act", "tanh", &m->pooler_act, err)) ||
        (st = hfx_cfg_int_in_or(c, "pooler_output_size", m->hidden, 1, 1 << 20, &m->pooler_size, err)))
        return st;
    if (m->hidden % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %lld is not a multiple of %s %lld", c.where, k->hidden,
                        (long long)m->hidden, k->heads, (long long)m->heads);
    for (int j = 0; j < 5; j++) {
        m->bias[j] = (j < 3 ? m->qkv_bias : true) && !(L->no_bias >> j & 1u);
        if (L->bias_keys[j] && (st = hfx_cfg_bool_or(c, L->bias_keys[j], L->bias_defaults[j], &m->bias[j], err)))
            return st;
    }
    if (L->registers && (st = hfx_cfg_int_in_or(c, "num_register_tokens", 0, 0, 1 << 12, &m->registers, err))) return st;
    if ((st = parse_switches(L, c, m, err))) return st;
    if (L->rope_2d || L->rope_pairs) { /* (transformers 5 keeps the base in rope_parameters) */
        const json_t *rope = json_object_get(c.obj, "rope_parameters");
        hfx_cfg r = {json_is_object(rope) ? rope : c.obj, c.where};
        if ((st = hfx_cfg_num_or(r, "rope_theta", L->rope_pairs ? 10000.0 : 100.0, &m->rope_theta, err))) return st;
        if (!(m->rope_theta > 0) || (m->hidden / m->heads) % 4)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: the 2-D rotary needs rope_theta > 0 and a head width that is a "
                            "multiple of 4", c.where);
    }
    if (m->image % m->patch)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: image_size %lld is not a multiple of patch_size %lld", c.where,
                        (long long)m->image, (long long)m->patch);
    int64_t side = m->grid = m->image / m->patch;
    if (side * side >= 1 << 20) /* attention scores are tokens² per head: a bound far above any real model */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: image_size %lld in patches of %lld makes %lld patches; hfx takes "
                        "fewer than 2^20", c.where, (long long)m->image, (long long)m->patch, (long long)(side * side));
    return HFX_OK;
}

static hfx_status vision_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const vision_desc *d = desc_;
    vision_cfg *m = cfg;
    hfx_status st = parse_tower(d->layout, c, m, err);
    (void)arena;
    if (st) return st;
    if (d->head == HEAD_CLASSIFIER && (st = hfx_cfg_num_labels(c, &m->labels, err))) return st;
    if (d->head == HEAD_PROJECTED && (st = hfx_cfg_int_in(c, "projection_dim", 1, 1 << 20, &m->projection, err)))
        return st;
    return HFX_OK;
}

typedef struct vision_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const vision_layout *L;
    const vision_cfg *m;
    const char *prefix; /* "vit." where the checkpoint keeps the encoder under it, else "" */
    hfx_value *visible; /* the attention bias [1,1,1,T]: zeros, every token seeing every other */
    const hfx_vision_attend *attend; /* a grid tower's biases and rotary (NULL: visible, no rotary) */
    hfx_vision_attend rotary;        /* DINOv3's: `visible` and the 2-D rotary of its patches (attend points here) */
} vision_ctx;

static hfx_value *dense(vision_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias, const char *name) {
    return hfx_linear_named(c->w, x, in, out, bias, "%s", name);
}

static hfx_value *norm(vision_ctx *c, hfx_value *x, const char *name) {
    int64_t h = x->dims[x->rank - 1].c; /* the tower's width, or a merger's (DeepStack's norm after the merge) */
    if (c->m->rms_norm) return hfx_rms_norm(c->g, x, hfx_weight(c->w, 1, &h, "%s.weight", name), c->m->eps, 0.0);
    return hfx_layer_norm_named(c->w, x, h, c->m->eps, "%s", name);
}

/* The patch embedding of pixels [B,C,H,W]: [B, N, hidden], N = (H/P)·(W/P) in row-major patch
 * order. Conv2d(kernel = stride = P) is a linear over each patch's C·P·P values, which the
 * reshape and transpose gather in the weight's (c, kh, kw) order. */
static hfx_value *patches(vision_ctx *c, hfx_value *pixels) {
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t P = m->patch, n = m->image / P, C = m->channels;
    char name[160];
    snprintf(name, sizeof name, "%s%s", c->prefix, c->L->patch);
    hfx_dim B = pixels->dims[0];
    hfx_value *x = hfx_reshape(g, pixels, 6, (hfx_dim[]){B, hfx_dim_const(C), hfx_dim_const(n), hfx_dim_const(P),
                                                         hfx_dim_const(n), hfx_dim_const(P)});
    x = hfx_transpose(g, x, 6, (int64_t[]){0, 2, 4, 1, 3, 5}); /* [B, n, n, C, P, P] */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){B, hfx_dim_const(n * n), hfx_dim_const(C * P * P)});
    hfx_value *w = c->L->patch_linear ? hfx_weight(c->w, 2, (int64_t[]){m->hidden, C * P * P}, "%s.weight", name)
                                      : hfx_const_flatten(g, hfx_weight(c->w, 4, (int64_t[]){m->hidden, C, P, P},
                                                                        "%s.weight", name), 1);
    hfx_value *b = c->L->patch_bias ? hfx_weight(c->w, 1, (int64_t[]){m->hidden}, "%s.bias", name) : NULL;
    return hfx_linear(g, x, w, b);
}

/* t [B,S,hidden] as heads [B,H,S,hd]. */
static hfx_value *split_heads(vision_ctx *c, hfx_value *t) {
    int64_t H = c->m->heads, hd = c->m->hidden / H;
    t = hfx_reshape(c->g, t, 4, (hfx_dim[]){t->dims[0], t->dims[1], hfx_dim_const(H), hfx_dim_const(hd)});
    return hfx_transpose(c->g, t, 4, (int64_t[]){0, 2, 1, 3});
}

/* Attention of queries q [B,H,S,hd] over every token's keys and values, heads merged back and
 * projected by `out`: [B,S,hidden]. */
static hfx_value *attend(vision_ctx *c, hfx_value *q, hfx_value *k, hfx_value *v, const char *out) {
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *a = hfx_attention(g, q, k, v, c->visible, 1.0 / sqrt((double)(m->hidden / m->heads)), 0.0, 0);
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){q->dims[0], q->dims[2], hfx_dim_const(m->hidden)});
    return dense(c, a, m->hidden, m->hidden, m->bias[3], out);
}

/* x [B,H,T,hd] turned by the grid tower's 2-D rotary, in float32 as transformers does. */
static hfx_value *rotate(vision_ctx *c, hfx_value *x) {
    hfx_dtype dt = x->dtype;
    if (dt != HFX_DTYPE_F32) x = hfx_cast(c->g, x, HFX_DTYPE_F32);
    x = hfx_rope_apply(c->g, x, c->attend->cos, c->attend->sin, c->attend->pairs);
    return dt != HFX_DTYPE_F32 ? hfx_cast(c->g, x, dt) : x;
}

/* Layer i's attention over x [B,T,hidden], seeing the tokens c->visible says. */
static hfx_value *attention(vision_ctx *c, hfx_value *x, const char *layer) {
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t h = m->hidden;
    char n[256];
    hfx_value *qkv[3];
    const char *names[3] = {c->L->q, c->L->k, c->L->v};
    if (c->L->qkv) { /* one projection: q's rows, then k's, then v's */
        snprintf(n, sizeof n, "%s.%s.weight", layer, c->L->qkv);
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){3 * h, h}, "%s", n);
        snprintf(n, sizeof n, "%s.%s.bias", layer, c->L->qkv);
        hfx_value *b = m->qkv_bias ? hfx_weight(c->w, 1, (int64_t[]){3 * h}, "%s", n) : NULL;
        for (int j = 0; j < 3; j++)
            qkv[j] = split_heads(c, hfx_linear(g, x, hfx_const_slice(g, w, 0, j * h, h),
                                               b ? hfx_const_slice(g, b, 0, j * h, h) : NULL));
    } else {
        for (int j = 0; j < 3; j++) {
            snprintf(n, sizeof n, "%s.%s", layer, names[j]);
            hfx_value *y = dense(c, x, h, h, m->bias[j], n);
            if (m->qk_norm && j < 2) /* over every head at once, at the norm's own eps */
                y = hfx_rms_norm(g, y, hfx_weight(c->w, 1, &h, "%s.%s.weight", layer, j ? c->L->k_norm : c->L->q_norm),
                                 1e-6, 0.0);
            qkv[j] = split_heads(c, y);
        }
    }
    if (c->attend && c->attend->cos) {
        qkv[0] = rotate(c, qkv[0]);
        qkv[1] = rotate(c, qkv[1]);
    }
    snprintf(n, sizeof n, "%s.%s", layer, c->L->o);
    return attend(c, qkv[0], qkv[1], qkv[2], n);
}

/* DINOv2's SwiGLU MLP: down(silu(gate(x)) · up(x)), every projection biased. The Hub stores gate
 * and up as one `weights_in` [2·I, hidden] (gate's rows first) and down as `weights_out`;
 * transformers 5 names them gate_proj, up_proj and down_proj. */
static hfx_value *swiglu(vision_ctx *c, hfx_value *x, const char *layer) {
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t h = m->hidden, I = m->intermediate;
    char n[256];
    snprintf(n, sizeof n, "%s.mlp.weights_in.weight", layer);
    hfx_value *gate, *up;
    if (hfx_weight_exists(c->w, n)) {
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * I, h}, "%s", n);
        snprintf(n, sizeof n, "%s.mlp.weights_in.bias", layer);
        hfx_value *b = hfx_weight(c->w, 1, (int64_t[]){2 * I}, "%s", n);
        gate = hfx_linear(g, x, hfx_const_slice(g, w, 0, 0, I), hfx_const_slice(g, b, 0, 0, I));
        up = hfx_linear(g, x, hfx_const_slice(g, w, 0, I, I), hfx_const_slice(g, b, 0, I, I));
        snprintf(n, sizeof n, "%s.mlp.weights_out", layer);
    } else {
        const char *mlp = c->L->mlp ? c->L->mlp : "mlp";
        snprintf(n, sizeof n, "%s.%s.gate_proj", layer, mlp);
        gate = dense(c, x, h, I, m->bias[4], n);
        snprintf(n, sizeof n, "%s.%s.up_proj", layer, mlp);
        up = dense(c, x, h, I, m->bias[4], n);
        snprintf(n, sizeof n, "%s.%s.down_proj", layer, mlp);
    }
    /* DINOv2's (the lineage of mlp_ratio) is SiLU whatever hidden_act says */
    hfx_activation act = c->L->mlp_ratio && !c->L->gated_mlp ? HFX_ACT_SILU : m->act;
    return dense(c, hfx_op2(g, HFX_OP_MUL, hfx_activate(g, act, gate), up), I, h, m->bias[4], n);
}

static hfx_value *mlp(vision_ctx *c, hfx_value *x, const char *layer) {
    const vision_cfg *m = c->m;
    char n[256];
    if (m->swiglu || c->L->gated_mlp) return swiglu(c, x, layer);
    snprintf(n, sizeof n, "%s.%s", layer, c->L->fc1);
    hfx_value *h = hfx_activate(c->g, m->act, dense(c, x, m->hidden, m->intermediate, m->bias[4], n));
    snprintf(n, sizeof n, "%s.%s", layer, c->L->fc2);
    return dense(c, h, m->intermediate, m->hidden, m->bias[4], n);
}

/* The first token's state [B, hidden] of x [B,T,hidden] (the class token; the pooled probe). */
static hfx_value *first_token(hfx_graph *g, hfx_value *x) {
    return hfx_gather(g, x, hfx_const_i64(g, 0), 1);
}

/* t [1,1,hidden] repeated for each of x's [B,T,hidden] rows: [B,1,hidden] (a class token, a probe). */
static hfx_value *batch_of(vision_ctx *c, hfx_value *t, hfx_value *x) {
    hfx_graph *g = c->g;
    hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                         hfx_unsqueeze(g, hfx_const_i64(g, 1), 0),
                                                         hfx_unsqueeze(g, hfx_const_i64(g, c->m->hidden), 0)}, 0);
    return hfx_expand(g, t, shape, 3, (hfx_dim[]){x->dims[0], hfx_dim_const(1), hfx_dim_const(c->m->hidden)});
}

/* SigLIP's attention pooling of x [B,T,hidden]: its probe [1,1,hidden] attends over every token
 * (nn.MultiheadAttention: q, k, v rows of one in_proj [3·hidden, hidden]), then probe + MLP of its
 * LayerNorm; [B, hidden]. */
static hfx_value *map_pool(vision_ctx *c, hfx_value *x) {
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t h = m->hidden;
    char n[256], head[96];
    snprintf(head, sizeof head, "%s%s", c->prefix, c->L->map_head);
    snprintf(n, sizeof n, "%s.attention.in_proj_weight", head);
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){3 * h, h}, "%s", n);
    snprintf(n, sizeof n, "%s.attention.in_proj_bias", head);
    hfx_value *b = hfx_weight(c->w, 1, (int64_t[]){3 * h}, "%s", n);
    hfx_value *probe = batch_of(c, hfx_weight(c->w, 3, (int64_t[]){1, 1, h}, "%s.probe", head), x); /* [B,1,h] */
    hfx_value *from[3] = {probe, x, x}, *qkv[3];
    for (int j = 0; j < 3; j++) {
        hfx_value *rows = hfx_const_slice(g, w, 0, j * h, h), *bias = hfx_const_slice(g, b, 0, j * h, h);
        qkv[j] = split_heads(c, hfx_linear(g, from[j], rows, bias));
    }
    snprintf(n, sizeof n, "%s.attention.out_proj", head);
    hfx_value *a = attend(c, qkv[0], qkv[1], qkv[2], n); /* [B,1,hidden] */
    snprintf(n, sizeof n, "%s.layernorm", head);
    a = hfx_op2(g, HFX_OP_ADD, a, mlp(c, norm(c, a, n), head)); /* the MLP's names are under the head's */
    return first_token(g, a);
}

/* The tower's context: its names under `prefix` ("vision_model." in CLIPVisionModel, "" in a
 * bare ViT, "vision_tower." in a VLM) and the attention bias of every token seeing every other. */
static vision_ctx open_tower(hfx_graph *g, hfx_weights *w, const vision_layout *L, const vision_cfg *m,
                             const char *prefix) {
    int64_t tokens = hfx_vision_tokens(&(hfx_vision_tower){L, *m});
    float *zeros = calloc((size_t)tokens, sizeof *zeros);
    if (!zeros) hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
    vision_ctx c = {g, w, L, m, prefix,
                    zeros ? hfx_const_bytes(g, HFX_DTYPE_F32, 4, (int64_t[]){1, 1, 1, tokens}, zeros) : NULL, NULL,
                    {0}};
    free(zeros);
    return c;
}

/* A block's output times its per-channel scale "<layer>.<scale>" [hidden] (DINOv2's layer scale);
 * as it is where the lineage has none. */
static hfx_value *scaled(vision_ctx *c, hfx_value *x, const char *layer, const char *scale) {
    if (!scale) return x;
    return hfx_op2(c->g, HFX_OP_MUL, x, hfx_weight(c->w, 1, &c->m->hidden, "%s.%s", layer, scale));
}

/* Layers 0..upto-1 over x [B,T,hidden] (each attending as c->visible says); states[i + 1] = the
 * output of layer i where states is given. */
static hfx_value *layers(vision_ctx *c, hfx_value *x, int64_t upto, hfx_value **states) {
    const vision_layout *L = c->L;
    char n[256];
    for (int64_t i = 0; i < upto && !c->g->failed; i++) {
        char layer[128], norm_name[192];
        snprintf(n, sizeof n, "%s%s", c->prefix, L->layer);
        snprintf(layer, sizeof layer, n, (long long)i);
        if (c->attend) /* a grid tower: its windowed layers see their window, the others their image */
            c->visible = c->attend->window_bias && !c->attend->full[i] ? c->attend->window_bias : c->attend->bias;
        snprintf(norm_name, sizeof norm_name, "%s.%s", layer, L->norm1);
        x = hfx_op2(c->g, HFX_OP_ADD, scaled(c, attention(c, norm(c, x, norm_name), layer), layer, L->layer_scale1), x);
        snprintf(norm_name, sizeof norm_name, "%s.%s", layer, L->norm2);
        x = hfx_op2(c->g, HFX_OP_ADD, scaled(c, mlp(c, norm(c, x, norm_name), layer), layer, L->layer_scale2), x);
        if (states) states[i + 1] = x;
    }
    return x;
}

/* The pooled image embedding [B, hidden] of the last hidden state x [B,T,hidden]: CLIP's
 * post-normed class token, SigLIP's attention pooling of its final norm (NULL: the lineage pools
 * with none of these). */
static hfx_value *pooled(vision_ctx *c, hfx_value *x) {
    char n[256];
    if (c->L->post_norm) {
        snprintf(n, sizeof n, "%s%s", c->prefix, c->L->post_norm);
        return norm(c, first_token(c->g, x), n);
    }
    if (!c->L->map_head) return NULL;
    snprintf(n, sizeof n, "%s%s", c->prefix, c->L->final_norm);
    return map_pool(c, norm(c, x, n));
}

/* torch's bicubic weights (A = -0.75) of the four samples around a point t ∈ [0, 1) past the
 * second. */
static void cubic_weights(float t, float w[4]) {
    const float A = -0.75f;
    float x1 = t + 1, x2 = 1 - t, x3 = 2 - t;
    w[0] = ((A * x1 - 5 * A) * x1 + 8 * A) * x1 - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
    w[3] = ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A;
}

/* src [n, n, h] (row-major grid, channels last) resampled to dst [k, k, h] as torch's
 * interpolate(mode="bicubic", align_corners=False, size=(k, k)) does: source coordinate
 * (i + 0.5)·n/k − 0.5, four taps each way, indices clamped to the grid, in float32. */
static void bicubic(const float *src, int64_t n, int64_t k, int64_t h, float *dst) {
    float scale = (float)n / (float)k;
    for (int64_t y = 0; y < k; y++) {
        float ry = scale * ((float)y + 0.5f) - 0.5f, fy = floorf(ry), wy[4];
        cubic_weights(ry - fy, wy);
        for (int64_t x = 0; x < k; x++) {
            float rx = scale * ((float)x + 0.5f) - 0.5f, fx = floorf(rx), wx[4];
            cubic_weights(rx - fx, wx);
            float *out = dst + (y * k + x) * h;
            for (int64_t ch = 0; ch < h; ch++) {
                float acc = 0;
                for (int a = 0; a < 4; a++) {
                    int64_t sy = (int64_t)fy - 1 + a;
                    sy = sy < 0 ? 0 : sy >= n ? n - 1 : sy;
                    float row = 0;
                    for (int b = 0; b < 4; b++) {
                        int64_t sx = (int64_t)fx - 1 + b;
                        sx = sx < 0 ? 0 : sx >= n ? n - 1 : sx;
                        row += src[(sy * n + sx) * h + ch] * wx[b];
                    }
                    acc += row * wy[a];
                }
                out[ch] = acc;
            }
        }
    }
}

/* The learned positions [1|·, tokens, hidden] added to the embeddings: the table as stored, or
 * (DINOv2, an image other than the config's) its patch grid resampled to the image's, the class
 * token's row kept — computed here in float32, as transformers interpolates, then in the graph's
 * dtype. */
static hfx_value *positions(vision_ctx *c, const char *name) {
    const vision_cfg *m = c->m;
    const vision_layout *L = c->L;
    hfx_graph *g = c->g;
    int64_t cls = L->cls != NULL, stored = m->grid * m->grid + cls, side = m->image / m->patch, h = m->hidden;
    hfx_value *table = L->flat_tokens ? hfx_weight(c->w, 2, (int64_t[]){stored, h}, "%s", name)
                                      : hfx_weight(c->w, 3, (int64_t[]){1, stored, h}, "%s", name);
    if (side == m->grid || g->failed) return table;
    const hfx_tensor_info *t = hfx_checkpoint_find(c->w->ck, name);
    if (t->mapping && !hfx_mapping_intact(t->mapping)) { /* a file truncated since it was opened */
        hfx_graph_fail(g, HFX_ERR_IO, "%s: changed size while being read", t->file);
        return table;
    }
    size_t elem = hfx_dtype_size(t->dtype);
    int64_t tokens = side * side + cls;
    float *src = malloc((size_t)(stored * h) * sizeof *src), *dst = malloc((size_t)(tokens * h) * sizeof *dst);
    if (!src || !dst) {
        free(src);
        free(dst);
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return table;
    }
    for (int64_t i = 0; i < stored * h; i++) src[i] = hfx_float_load(t->dtype, t->data + (size_t)i * elem);
    memcpy(dst, src, (size_t)(cls * h) * sizeof *dst); /* the class token's position, as stored */
    bicubic(src + cls * h, m->grid, side, h, dst + cls * h);
    hfx_value *v = hfx_const_bytes(g, HFX_DTYPE_F32, 3, (int64_t[]){1, tokens, h}, dst);
    free(src);
    free(dst);
    return hfx_cast(g, v, c->w->dtype);
}

/* DINOv3's 2-D rotary [1,1,tokens,head_dim] (cos, sin) for an image of side×side patches, in float32 as transformers
 * computes it: each patch's center (y, x) in [-1, 1], angles 2π·coord·θ^(−4j/head_dim) for j < head_dim/4, y's then
 * x's, the half repeated; the class and register tokens in front unturned (cos 1, sin 0). */
static void rotary_2d(vision_ctx *c, int64_t side, hfx_value **cos_out, hfx_value **sin_out) {
    const vision_cfg *m = c->m;
    int64_t hd = m->hidden / m->heads, q = hd / 4, prefix = 1 + m->registers, tokens = prefix + side * side;
    float *cs = malloc((size_t)(tokens * hd) * 2 * sizeof *cs), inv[1024];
    if (!cs || q > 1024) {
        free(cs);
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        *cos_out = *sin_out = NULL;
        return;
    }
    float *sn = cs + tokens * hd, two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int64_t j = 0; j < q; j++) inv[j] = 1.0f / powf((float)m->rope_theta, (float)((double)j * (4.0 / (double)hd)));
    for (int64_t t = 0; t < tokens; t++) {
        float *ct = cs + t * hd, *st = sn + t * hd;
        for (int64_t j = 0; j < hd; j++) ct[j] = 1.0f, st[j] = 0.0f;
        if (t < prefix) continue;
        int64_t p = t - prefix;
        float coord[2] = {(float)(p / side) + 0.5f, (float)(p % side) + 0.5f}; /* (y, x) */
        for (int a = 0; a < 2; a++) coord[a] = 2.0f * (coord[a] / (float)side) - 1.0f;
        for (int64_t j = 0; j < 2 * q; j++) {
            float angle = two_pi * coord[j / q] * inv[j % q];
            ct[j] = ct[j + 2 * q] = cosf(angle);
            st[j] = st[j + 2 * q] = sinf(angle);
        }
    }
    int64_t shape[4] = {1, 1, tokens, hd};
    *cos_out = hfx_cast(c->g, hfx_const_bytes(c->g, HFX_DTYPE_F32, 4, shape, cs), c->w->dtype);
    *sin_out = hfx_cast(c->g, hfx_const_bytes(c->g, HFX_DTYPE_F32, 4, shape, sn), c->w->dtype);
    free(cs);
}

/* Llama 4's 2-D rotary [1,1,tokens,head_dim] (cos, sin) of side×side patches and the class token last, in float32
 * as transformers computes it: pair j < head_dim/4 of a patch at (row, column) turns by (column + 1)·θ^(−4j/head_dim),
 * pair head_dim/4 + j by (row + 1)·θ^(−4j/head_dim); each angle's cos and sin on both members of its pair; the class
 * token unturned. */
static void rotary_pairs(vision_ctx *c, int64_t side, hfx_value **cos_out, hfx_value **sin_out) {
    const vision_cfg *m = c->m;
    int64_t hd = m->hidden / m->heads, q = hd / 4, tokens = side * side + 1;
    float *cs = malloc((size_t)(tokens * hd) * 2 * sizeof *cs), inv[1024];
    if (!cs || q > 1024) {
        free(cs);
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        *cos_out = *sin_out = NULL;
        return;
    }
    float *sn = cs + tokens * hd;
    for (int64_t j = 0; j < q; j++) inv[j] = 1.0f / powf((float)m->rope_theta, (float)(2 * j) / (float)(hd / 2));
    for (int64_t t = 0; t < tokens; t++)
        for (int64_t j = 0; j < hd / 2; j++) {
            float at = t == tokens - 1 ? 0.0f : (float)(j < q ? t % side : t / side) + 1.0f;
            float angle = at * inv[j % q];
            cs[t * hd + 2 * j] = cs[t * hd + 2 * j + 1] = cosf(angle);
            sn[t * hd + 2 * j] = sn[t * hd + 2 * j + 1] = sinf(angle);
        }
    int64_t shape[4] = {1, 1, tokens, hd};
    *cos_out = hfx_cast(c->g, hfx_const_bytes(c->g, HFX_DTYPE_F32, 4, shape, cs), c->w->dtype);
    *sin_out = hfx_cast(c->g, hfx_const_bytes(c->g, HFX_DTYPE_F32, 4, shape, sn), c->w->dtype);
    free(cs);
}

/* The tower over pixels [B,C,S,S] up to hidden_states[upto] (0: the embeddings after any
 * pre-norm; i: after layer i), each kept in states[0..upto] where states is given: [B,T,hidden]. */
static hfx_value *tower(vision_ctx *c, hfx_value *pixels, int64_t upto, hfx_value **states) {
    const vision_layout *L = c->L;
    const vision_cfg *m = c->m;
    hfx_graph *g = c->g;
    char n[256];
    hfx_value *x = patches(c, pixels);
    if (L->cls) { /* the class token in front: [B, tokens, hidden] */
        snprintf(n, sizeof n, "%s%s", c->prefix, L->cls);
        hfx_value *cls = L->flat_tokens ? hfx_reshape(g, hfx_weight(c->w, 1, &m->hidden, "%s", n), 3,
                                                      (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(1),
                                                                  hfx_dim_const(m->hidden)})
                                        : hfx_weight(c->w, 3, (int64_t[]){1, 1, m->hidden}, "%s", n);
        hfx_value *parts[3] = {batch_of(c, cls, x), NULL, x};
        snprintf(n, sizeof n, "%s%s", c->prefix, L->registers ? L->registers : "");
        if (m->registers) { /* after the class token: [B, R, hidden] */
            hfx_value *reg = hfx_weight(c->w, 3, (int64_t[]){1, m->registers, m->hidden}, "%s", n);
            hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                                 hfx_unsqueeze(g, hfx_const_i64(g, m->registers), 0),
                                                                 hfx_unsqueeze(g, hfx_const_i64(g, m->hidden), 0)}, 0);
            parts[1] = hfx_expand(g, reg, shape, 3, (hfx_dim[]){x->dims[0], hfx_dim_const(m->registers),
                                                               hfx_dim_const(m->hidden)});
        } else if (L->registers && hfx_weight_exists(c->w, n)) {
            hfx_weight_ignore(c->w, n); /* [1, 0, hidden] */
        }
        x = parts[1] ? hfx_concat(g, 3, parts, 1)
            : L->cls_last ? hfx_concat(g, 2, (hfx_value *[]){x, parts[0]}, 1)
                          : hfx_concat(g, 2, (hfx_value *[]){parts[0], x}, 1);
    }
    if (m->positions) {
        snprintf(n, sizeof n, "%s%s", c->prefix, L->positions);
        x = hfx_op2(g, HFX_OP_ADD, x, positions(c, n));
    }
    if (L->rope_2d || L->rope_pairs) { /* every layer turns q and k by it */
        if (L->rope_pairs) rotary_pairs(c, m->image / m->patch, &c->rotary.cos, &c->rotary.sin);
        else rotary_2d(c, m->image / m->patch, &c->rotary.cos, &c->rotary.sin);
        c->rotary.pairs = L->rope_pairs;
        c->rotary.bias = c->visible;
        c->attend = &c->rotary;
    }
    if (L->pre_norm) {
        snprintf(n, sizeof n, "%s%s", c->prefix, L->pre_norm);
        x = norm(c, x, n);
    }
    if (states) states[0] = x;
    return layers(c, x, upto, states);
}

hfx_status hfx_processor_image_size(const hfx_checkpoint *ck, int64_t *height, int64_t *width, hfx_error *err) {
    json_t *pre = NULL, *nested = NULL;
    *height = *width = 0;
    hfx_status st = hfx_checkpoint_side_json(ck, "preprocessor_config.json", false, &pre, err);
    /* a processor of several parts as transformers 5 saves it: the image processor's in processor_config.json (the
     * feature extractor's in preprocessor_config.json) */
    if (!st && (!pre || (!json_object_get(pre, "size") && !json_object_get(pre, "crop_size"))))
        st = hfx_checkpoint_side_json(ck, "processor_config.json", false, &nested, err);
    const json_t *image = json_object_get(nested, "image_processor");
    if (!st && json_is_object(image)) {
        json_decref(pre);
        pre = json_incref((json_t *)image);
    }
    json_decref(nested);
    if (st || !pre) {
        json_decref(pre);
        return st;
    }
    const json_t *crop = json_object_get(pre, "crop_size"), *size = json_object_get(pre, "size");
    const json_t *from = json_is_object(crop) && !json_is_false(json_object_get(pre, "do_center_crop")) ? crop : size;
    json_t *hh = json_object_get(from, "height"), *ww = json_object_get(from, "width");
    if (json_is_integer(hh) && json_is_integer(ww)) {
        *height = json_integer_value(hh), *width = json_integer_value(ww);
        if (*height < 1 || *height > 1 << 16 || *width < 1 || *width > 1 << 16)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s/preprocessor_config.json: an image of %lld × %lld pixels is out of "
                                                "range", hfx_checkpoint_dir(ck), (long long)*height, (long long)*width);
    } else if (json_is_object(from)) {
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s/preprocessor_config.json: hfx exports images of a fixed size: give "
                                                "crop_size (or size) as height and width", hfx_checkpoint_dir(ck));
    }
    json_decref(pre);
    return st;
}

/* The square image the checkpoint's processor makes, where the lineage resamples its positions to it; else (or
 * without one) the config's image_size. */
static hfx_status processed_size(const vision_layout *L, const hfx_checkpoint *ck, vision_cfg *m, hfx_error *err) {
    int64_t h = 0, w = 0;
    hfx_status st = L->resample_positions ? hfx_processor_image_size(ck, &h, &w, err) : HFX_OK;
    if (st || !h) return st;
    if (h != w)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s/preprocessor_config.json: hfx exports square images of a fixed "
                                                  "size for this tower: give equal height and width (not %lld × %lld)",
                        hfx_checkpoint_dir(ck), (long long)h, (long long)w);
    if (h < m->patch || h % m->patch || (h / m->patch) * (h / m->patch) >= 1 << 20)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s/preprocessor_config.json: images of %lld pixels are not whole "
                                                  "patches of %lld (or are too many of them)",
                        hfx_checkpoint_dir(ck), (long long)h, (long long)m->patch);
    m->image = h;
    return HFX_OK;
}

/* The classifier's input [B, hidden] or [B, 2·hidden] of the last state x: the class token, or
 * (DINOv2) the class token and the mean of the patch tokens side by side. */
static hfx_value *classifier_input(vision_ctx *c, hfx_value *x) {
    if (!c->L->classify_mean) return first_token(c->g, x);
    int64_t axis = 1;
    hfx_value *mean = hfx_reduce(c->g, HFX_OP_REDUCE_MEAN, hfx_slice(c->g, x, 1, 1, INT64_MAX), 1, &axis);
    hfx_value *both[2] = {first_token(c->g, x), hfx_reshape(c->g, mean, 2, (hfx_dim[]){x->dims[0],
                                                                                      hfx_dim_const(c->m->hidden)})};
    return hfx_concat(c->g, 2, both, 1);
}

static hfx_status vision_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                               hfx_graph *g, hfx_error *err) {
    const vision_desc *d = desc_;
    const vision_layout *L = d->layout;
    vision_cfg sized = *(const vision_cfg *)cfg_, *m = &sized;
    hfx_status st = processed_size(L, ck, m, err);
    if (st) return st;
    hfx_weights w;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    char prefix[64], n[256];
    snprintf(prefix, sizeof prefix, "%s.", L->prefix);
    snprintf(n, sizeof n, "%s%s.weight", prefix, L->patch); /* every layout has one */
    vision_ctx c = open_tower(g, &w, L, m, hfx_weight_exists(&w, n) ? prefix : "");
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 4,
                                        (hfx_dim[]){o->batch, hfx_dim_const(m->channels), hfx_dim_const(m->image),
                                                    hfx_dim_const(m->image)});
    hfx_value *x = tower(&c, pixels, m->layers, NULL);
    if (L->final_norm) {
        snprintf(n, sizeof n, "%s%s", c.prefix, L->final_norm);
        x = norm(&c, x, n);
    }
    if (d->head == HEAD_POOLED || d->head == HEAD_PROJECTED) {
        hfx_value *pool = pooled(&c, x);
        if (d->head == HEAD_PROJECTED)
            hfx_graph_output(g, dense(&c, pool, m->hidden, m->projection, false, L->projection), "image_embeds");
        hfx_graph_output(g, x, "last_hidden_state");
        if (d->head == HEAD_POOLED) hfx_graph_output(g, pool, "pooler_output");
    } else if (d->head == HEAD_CLASSIFIER) {
        int64_t in = m->hidden * (L->classify_mean ? 2 : 1);
        hfx_graph_output(g, dense(&c, classifier_input(&c, x), in, m->labels, true, L->classifier), "logits");
    } else if (d->head == HEAD_FIRST) {
        hfx_graph_output(g, x, "last_hidden_state");
        hfx_graph_output(g, first_token(g, x), "pooler_output");
    } else {
        hfx_graph_output(g, x, "last_hidden_state");
        snprintf(n, sizeof n, "%s%s.%s", c.prefix, L->map_head ? L->map_head : L->pooler,
                 L->map_head ? "probe" : "weight");
        bool pools = hfx_weight_exists(&w, n); /* saved without its pooler (add_pooling_layer, vision_use_head) */
        if (pools && L->map_head) {
            hfx_graph_output(g, map_pool(&c, x), "pooler_output");
        } else if (pools) {
            snprintf(n, sizeof n, "%s%s", c.prefix, L->pooler);
            hfx_value *pooled = dense(&c, first_token(g, x), m->hidden, m->pooler_size, true, n);
            hfx_graph_output(g, hfx_activate(g, m->pooler_act, pooled), "pooler_output");
        }
    }
    if (L->unused) {
        snprintf(n, sizeof n, "%s%s", c.prefix, L->unused);
        hfx_weight_ignore(&w, n);
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static hfx_torch_signature vision_torch_signature(const void *desc_) {
    const vision_desc *d = desc_;
    static const char *const args[] = {"pixel_values", NULL};
    return (hfx_torch_signature){.args = args, .output_class = d->head == HEAD_CLASSIFIER   ? "ImageClassifierOutput"
                                       : d->head == HEAD_PROJECTED ? "CLIPVisionModelOutput"
                                                                   : "BaseModelOutputWithPooling"};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
static const char *const image_inputs[] = {"pixel_values", NULL};

const hfx_arch_family hfx_vision_family = {
    .cfg_size = sizeof(vision_cfg),
    .parse = vision_parse,
    .build_forward = vision_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = image_inputs,
    .torch_signature = vision_torch_signature,
};

/* ---- for models that hold a vision tower ---- */

int64_t hfx_vision_tokens(const hfx_vision_tower *t) {
    int64_t side = t->cfg.image / t->cfg.patch;
    return side * side + (t->layout->cls != NULL) + t->cfg.registers;
}

hfx_status hfx_vision_tower_parse(const char *model_type, hfx_cfg c, hfx_tower_kind kind, hfx_vision_tower *out,
                                  hfx_error *err) {
    static const struct {
        const char *model_type;
        const vision_layout *layout;
        hfx_tower_kind kind;
    } towers[] = {{"clip_vision_model", &clip_layout, HFX_TOWER_IMAGE}, {"siglip_vision_model", &siglip_layout, HFX_TOWER_IMAGE},
                  /* SigLIP 2's NaFlex tower (vision_naflex.c): SigLIP's layers, names and head */
                  {"siglip2_vision_model", &siglip_layout, HFX_TOWER_IMAGE},
                  /* Idefics3's and SmolVLM's: SigLIP's tower, for full images (the positions of a padded
                     one are not written) */
                  {"idefics3_vision", &siglip_layout, HFX_TOWER_IMAGE}, {"smolvlm_vision", &siglip_layout, HFX_TOWER_IMAGE},
                  /* Phi-4-multimodal's: SigLIP's (its positions over each crop's real patches are vlm_phi4mm.c's) */
                  {"phi4_multimodal_vision", &siglip_layout, HFX_TOWER_IMAGE},
                  {"internvl_vision", &internvl_layout, HFX_TOWER_IMAGE},
                  {"llama4_vision_model", &llama4_layout, HFX_TOWER_IMAGE},
                  /* grid towers (vision_grid.c): transformers 5's names and the Hub's */
                  {"qwen2_vl_vision", &qwen2_vl_layout, HFX_TOWER_GRID}, {"qwen2_vl", &qwen2_vl_layout, HFX_TOWER_GRID},
                  {"qwen2_5_vl_vision", &qwen2_5_vl_layout, HFX_TOWER_GRID}, {"qwen2_5_vl", &qwen2_5_vl_layout, HFX_TOWER_GRID},
                  {"qwen3_vl_vision", &qwen3_vl_layout, HFX_TOWER_GRID}, {"qwen3_vl", &qwen3_vl_layout, HFX_TOWER_GRID},
                  {"qwen3_vl_moe_vision", &qwen3_vl_layout, HFX_TOWER_GRID}, {"qwen3_vl_moe", &qwen3_vl_layout, HFX_TOWER_GRID},
                  {"qwen3_5_vision", &qwen3_vl_layout, HFX_TOWER_GRID}, {"qwen3_5", &qwen3_vl_layout, HFX_TOWER_GRID},
                  {"qwen3_5_moe_vision", &qwen3_vl_layout, HFX_TOWER_GRID}, {"qwen3_5_moe", &qwen3_vl_layout, HFX_TOWER_GRID},
                  {"pixtral", &pixtral_layout, HFX_TOWER_GRID},
                  /* audio towers' layers (audio_tower.c): Whisper's under its keys and under transformers 5's */
                  {"qwen2_audio_encoder", &whisper_layout, HFX_TOWER_AUDIO},
                  {"voxtral_encoder", &whisper_v5_layout, HFX_TOWER_AUDIO},
                  {"audioflamingo3_encoder", &whisper_v5_layout, HFX_TOWER_AUDIO},
                  {"qwen3_asr_encoder", &qwen3_asr_layout, HFX_TOWER_AUDIO}};
    static const char *const supported[] = {
        [HFX_TOWER_IMAGE] = "clip_vision_model, siglip_vision_model, idefics3_vision, smolvlm_vision, phi4_multimodal_vision, "
                            "internvl_vision, llama4_vision_model",
        [HFX_TOWER_GRID] = "qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, qwen3_5, qwen3_5_moe, pixtral",
        [HFX_TOWER_AUDIO] = "qwen2_audio_encoder, voxtral_encoder, audioflamingo3_encoder, qwen3_asr_encoder"};
    for (size_t i = 0; model_type && i < sizeof towers / sizeof towers[0]; i++)
        if (strcmp(model_type, towers[i].model_type) == 0 && towers[i].kind == kind) {
            memset(out, 0, sizeof *out);
            out->layout = towers[i].layout;
            return parse_tower(towers[i].layout, c, &out->cfg, err);
        }
    return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: model_type '%s' is not %s tower hfx builds here (supported: %s)",
                    c.where, model_type ? model_type : "(none)", kind == HFX_TOWER_AUDIO ? "an audio" : "a vision",
                    supported[kind]);
}

const char *hfx_vision_patch_name(const hfx_vision_tower *t) { return t->layout->patch; }

bool hfx_vision_patch_biased(const hfx_vision_tower *t) { return t->layout->patch_bias; }

hfx_value *hfx_vision_tower_states(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, int64_t upto, hfx_value **states) {
    vision_ctx c = open_tower(g, w, t->layout, &t->cfg, prefix);
    return c.visible ? tower(&c, pixels, upto, states) : NULL;
}

void hfx_vision_tower_skip_rest(const hfx_vision_tower *t, hfx_weights *w, const char *prefix, int64_t upto) {
    const vision_layout *L = t->layout;
    char fmt[160], n[192];
    snprintf(fmt, sizeof fmt, "%s%s", prefix, L->layer);
    for (int64_t i = upto; i < t->cfg.layers; i++) {
        snprintf(n, sizeof n, fmt, (long long)i);
        hfx_weights_ignore_stack(w, n);
    }
    const char *after[] = {L->final_norm, L->post_norm, L->map_head, L->projection};
    for (size_t i = 0; i < sizeof after / sizeof after[0]; i++)
        if (after[i]) {
            snprintf(n, sizeof n, "%s%s", prefix, after[i]);
            hfx_weights_ignore_stack(w, n);
        }
}

hfx_value *hfx_vision_layers(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                             hfx_value *x, hfx_value *bias) {
    vision_ctx c = {g, w, t->layout, &t->cfg, prefix, bias, NULL, {0}};
    return layers(&c, x, t->cfg.layers, NULL);
}

hfx_value *hfx_vision_layers_attending(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                       hfx_value *x, const hfx_vision_attend *a, int64_t upto, hfx_value **states) {
    vision_ctx c = {g, w, t->layout, &t->cfg, prefix, a->bias, a, {0}};
    return layers(&c, x, upto, states);
}

const char *hfx_vision_pre_norm(const hfx_vision_tower *t) { return t->layout->pre_norm; }

bool hfx_vision_rms_norm(const hfx_vision_tower *t) { return t->cfg.rms_norm; }

hfx_value *hfx_vision_tower_pooled(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels) {
    vision_ctx c = open_tower(g, w, t->layout, &t->cfg, prefix);
    if (!c.visible) return NULL;
    hfx_value *last = tower(&c, pixels, t->cfg.layers, NULL);
    hfx_value *p = g->failed ? NULL : pooled(&c, last);
    if (!p && !g->failed) hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "this vision tower has no pooled embedding");
    return p;
}

hfx_value *hfx_vision_map_pool(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                               hfx_value *x, hfx_value *bias) {
    vision_ctx c = {g, w, t->layout, &t->cfg, prefix, bias, NULL, {0}};
    if (!t->layout->map_head) {
        hfx_graph_fail(g, HFX_ERR_INTERNAL, "this vision tower has no attention-pooling head");
        return x;
    }
    return map_pool(&c, x);
}

hfx_value *hfx_vision_norm(const hfx_vision_tower *t, hfx_graph *g, hfx_weights *w, const char *name, hfx_value *x) {
    vision_ctx c = {g, w, t->layout, &t->cfg, "", NULL, NULL, {0}};
    return norm(&c, x, name);
}

const vision_desc hfx_vit_model = {"ViTModel", &vit_layout, HEAD_POOLER};
const vision_desc hfx_vit_classifier = {"ViTForImageClassification", &vit_layout, HEAD_CLASSIFIER};
const vision_desc hfx_clip_vision_model = {"CLIPVisionModel", &clip_layout, HEAD_POOLED};
const vision_desc hfx_clip_vision_projection = {"CLIPVisionModelWithProjection", &clip_layout, HEAD_PROJECTED};
const vision_desc hfx_dinov2_model = {"Dinov2Model", &dinov2_layout, HEAD_FIRST};
const vision_desc hfx_dinov3_model = {"DINOv3ViTModel", &dinov3_layout, HEAD_FIRST};
const vision_desc hfx_dinov2_classifier = {"Dinov2ForImageClassification", &dinov2_layout, HEAD_CLASSIFIER};
const vision_desc hfx_siglip_vision_model = {"SiglipVisionModel", &siglip_layout, HEAD_POOLER};
