/* The contrastive image-text family: CLIPModel and SiglipModel. A vision tower (vision.c's) pools
 * each image, a text tower of the same lineage's layers pools each text, both are normalized, and
 * their scaled cosine similarities are the logits:
 *
 *   input_ids [B, S], attention_mask [B, S], pixel_values [N, C, image, image]
 *   → logits_per_image [N, B], logits_per_text [B, N], text_embeds [B, P], image_embeds [N, P]
 *
 * The text tower: token and learned position embeddings, the lineage's layers (CLIP's causal,
 * SigLIP's bidirectional, padding masked in both), a final LayerNorm, then the pooled token (CLIP:
 * the first end-of-text token, or with a legacy eos_token_id of 2 the highest id; SigLIP: the last
 * token) through the text projection (CLIP's, no bias) or head (SigLIP's, biased). The image
 * embedding is the tower's pooled one, through CLIP's visual projection. Logits are
 * exp(logit_scale) · cos, plus SigLIP's logit_bias. */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/mask.h"
#include "arch/vision.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef struct dual_layout {
    const char *vision_type;     /* the lineage's vision tower model_type, whose layers the text tower has */
    bool causal;                 /* the text tower's attention (CLIP) */
    bool pool_eos;               /* pool the end-of-text token (CLIP); else the last token (SigLIP) */
    const char *text_head;       /* the pooled text's projection under text_model. (SigLIP's "head", biased) */
    const char *text_projection; /* ... or at the top (CLIP's "text_projection", no bias) */
    const char *image_projection; /* the pooled image's projection (CLIP's "visual_projection"); NULL: none */
    bool logit_bias;             /* a learned bias after the scale (SigLIP) */
    bool naflex;                 /* the images as SigLIP 2's NaFlex tower takes them (vision_naflex.c): patches of any
                                    aspect ratio, their mask and grids */
} dual_layout;

static const dual_layout clip_dual = {"clip_vision_model", true, true, NULL, "text_projection", "visual_projection",
                                      false, false};
static const dual_layout siglip_dual = {"siglip_vision_model", false, false, "head", NULL, NULL, true, false};
static const dual_layout siglip2_dual = {"siglip2_vision_model", false, false, "head", NULL, NULL, true, true};

typedef enum {
    DUAL_BOTH,           /* CLIPModel, SiglipModel: both towers and their similarities */
    DUAL_TEXT,           /* CLIPTextModel, SiglipTextModel: last_hidden_state, pooler_output */
    DUAL_TEXT_PROJECTED  /* CLIPTextModelWithProjection: text_embeds, last_hidden_state */
} dual_part;

typedef struct dual_desc {
    const char *architecture;
    const dual_layout *layout;
    dual_part part;
} dual_desc;

typedef struct dual_cfg {
    hfx_vision_tower vision, text; /* the text tower: its text_config read as the lineage's layers */
    int64_t vocab, positions, eos, projection, text_out;
    int64_t grid;                  /* a NaFlex tower's position grid side */
} dual_cfg;

static hfx_status dual_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const dual_desc *d = desc_;
    const dual_layout *L = d->layout;
    dual_cfg *m = cfg;
    hfx_cfg text, vision;
    hfx_status st;
    text = c; /* a text tower alone: its own config.json */
    if ((d->part == DUAL_BOTH && ((st = hfx_cfg_object(c, "text_config", arena, &text, err)) ||
                                  (st = hfx_cfg_object(c, "vision_config", arena, &vision, err)) ||
                                  (st = hfx_vision_tower_parse(L->vision_type, vision, HFX_TOWER_IMAGE, &m->vision, err)))) ||
        (st = hfx_vision_tower_parse(L->vision_type, text, HFX_TOWER_IMAGE, &m->text, err)) ||
        (d->part == DUAL_BOTH && L->naflex && (st = hfx_naflex_grid(vision, &m->grid, err))) ||
        (st = hfx_cfg_int_in(text, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(text, "max_position_embeddings", 1, 1 << 20, &m->positions, err)))
        return st;
    if (L->pool_eos && (st = hfx_cfg_int_in_or(text, "eos_token_id", 2, 0, m->vocab - 1, &m->eos, err))) return st;
    if (L->text_projection) { /* CLIP: both towers projected to projection_dim */
        if ((st = hfx_cfg_int_in_or(c, "projection_dim", 512, 1, 1 << 20, &m->projection, err))) return st;
        m->text_out = m->projection;
    } else if (d->part != DUAL_BOTH) { /* SigLIP's text tower alone: its head's width */
        return hfx_cfg_int_in_or(text, "projection_size", m->text.cfg.hidden, 1, 1 << 20, &m->text_out, err);
    } else { /* SigLIP: the text head's width must be the image embedding's */
        if ((st = hfx_cfg_int_in_or(text, "projection_size", m->text.cfg.hidden, 1, 1 << 20, &m->text_out, err)))
            return st;
        m->projection = m->vision.cfg.hidden;
        if (m->text_out != m->projection)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: projection_size %lld differs from the vision tower's hidden_size "
                                                  "%lld: the two embeddings cannot be compared",
                            text.where, (long long)m->text_out, (long long)m->projection);
    }
    return HFX_OK;
}

/* The text tower over input_ids [B,S] and attention_mask [B,S]: its pooled output [B, hidden] (SigLIP:
 * through its head, [B, P]), and *last its last hidden state [B,S,hidden] (after the final norm). */
static hfx_value *text_tower(const dual_layout *L, const dual_cfg *m, hfx_graph *g, hfx_weights *w,
                             const hfx_build_opts *o, hfx_value *ids, hfx_value *mask, hfx_value **last) {
    int64_t h = m->text.cfg.hidden;
    hfx_value *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1), *len = hfx_dim_of(g, ids, 1);
    hfx_value *index = hfx_range(g, zero, len, one, o->seq); /* [S]: position ids and slots */
    /* a tower saved alone may have its names without the "text_model." its pair gives them */
    const char *p = hfx_weight_exists(w, "text_model.embeddings.token_embedding.weight") ? "text_model." : "";
    char n[128];
    snprintf(n, sizeof n, "%sfinal_layer_norm", p);
    hfx_value *x = hfx_gather(g, hfx_weight(w, 2, (int64_t[]){m->vocab, h}, "%sembeddings.token_embedding.weight", p),
                              ids, 0);
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){m->positions, h}, "%sembeddings.position_embedding.weight", p);
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, table, index, 0));
    hfx_value *bias;
    if (L->causal) {
        hfx_mask_builder mb;
        hfx_mask_init(g, &mb, mask, index);
        bias = hfx_mask_bias(g, &mb, 0); /* [B,1,S,S] */
    } else { /* every token sees every real token: [B,1,1,S] */
        hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1);
        bias = hfx_where(g, keep, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
    }
    x = hfx_vision_layers(&m->text, g, w, p, x, bias);
    x = *last = hfx_vision_norm(&m->text, g, w, n, x);
    hfx_value *pooled; /* [B, hidden] */
    if (L->pool_eos) {
        /* the first position holding the end-of-text id (legacy eos 2: the highest id), 0 when none,
         * as argmax does; picked by a one-hot sum, exact */
        int64_t axis = 1;
        hfx_value *target = m->eos == 2 ? hfx_reduce(g, HFX_OP_REDUCE_MAX, ids, 1, &axis) /* [B,1] */
                                        : hfx_const_i64(g, m->eos);
        hfx_value *is_eos = hfx_op2(g, HFX_OP_EQUAL, ids, target); /* [B,S] */
        hfx_value *where = hfx_where(g, is_eos, index, hfx_const_i64(g, INT32_MAX));
        hfx_value *first = hfx_op1(g, HFX_OP_NEG, hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_op1(g, HFX_OP_NEG, where), 1, &axis));
        first = hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, first, hfx_const_i64(g, INT32_MAX)), zero, first); /* [B,1] */
        hfx_value *pick = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, index, first), x->dtype); /* [B,S] */
        pooled = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, x, hfx_unsqueeze(g, pick, -1)), 1, &axis);
        pooled = hfx_reshape(g, pooled, 2, (hfx_dim[]){o->batch, hfx_dim_const(h)});
    } else {
        pooled = hfx_reshape(g, hfx_slice(g, x, 1, -1, INT64_MAX), 2, (hfx_dim[]){o->batch, hfx_dim_const(h)});
    }
    if (!L->text_head) return pooled;
    hfx_value *wt = hfx_weight(w, 2, (int64_t[]){m->text_out, h}, "%s%s.weight", p, L->text_head);
    return hfx_linear(g, pooled, wt, hfx_weight(w, 1, &m->text_out, "%s%s.bias", p, L->text_head));
}

/* The text embedding [B, P] of the tower's pooled output: CLIP's text projection (no bias);
 * SigLIP's head is the tower's own. */
static hfx_value *text_embeds(const dual_layout *L, const dual_cfg *m, hfx_graph *g, hfx_weights *w, hfx_value *pooled) {
    if (!L->text_projection) return pooled;
    int64_t h = m->text.cfg.hidden;
    return hfx_linear(g, pooled, hfx_weight(w, 2, (int64_t[]){m->text_out, h}, "%s.weight", L->text_projection), NULL);
}

/* x [R, P] over its L2 norm. */
static hfx_value *normalized(hfx_graph *g, hfx_value *x) {
    int64_t axis = -1;
    hfx_value *sq = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, x, x), 1, &axis);
    return hfx_op2(g, HFX_OP_DIV, x, hfx_op1(g, HFX_OP_SQRT, sq));
}

/* The graph's metadata, its status and the weights' leftovers; the weights freed. */
static hfx_status finish(const dual_desc *d, hfx_graph *g, hfx_weights *w, hfx_error *err) {
    hfx_graph_set_meta(g, "architecture", d->architecture);
    hfx_status st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(w, err);
    hfx_weights_free(w);
    return st;
}

/* SigLIP 2's images: pixel_values [N,P,·], pixel_attention_mask [N,P] and spatial_shapes [N,2] (the graph's inputs in
 * its forward's order), P a symbol of its own where the export is dynamic; their pooled embeddings [N, hidden]. */
static hfx_value *naflex_image(const dual_cfg *m, const hfx_checkpoint *ck, const hfx_build_opts *o, hfx_graph *g,
                               hfx_weights *w, hfx_dim images) {
    const hfx_vision_cfg *v = &m->vision.cfg;
    hfx_build_opts patches = *o;
    if (!hfx_dim_is_const(o->seq)) patches.seq = hfx_dim_sym(hfx_graph_symbol(g, "num_patches", 1, INT32_MAX));
    hfx_dim P;
    hfx_error err;
    if (hfx_naflex_patches(ck, &patches, &P, &err)) {
        hfx_graph_fail(g, err.status, "%s", err.message);
        return NULL;
    }
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 3,
                                        (hfx_dim[]){images, P, hfx_dim_const(v->channels * v->patch * v->patch)});
    hfx_value *mask = hfx_graph_input(g, "pixel_attention_mask", HFX_DTYPE_I32, 2, (hfx_dim[]){images, P});
    hfx_value *shapes = hfx_graph_input(g, "spatial_shapes", HFX_DTYPE_I64, 2, (hfx_dim[]){images, hfx_dim_const(2)});
    hfx_value *pooled = NULL;
    hfx_naflex_tower(&m->vision, m->grid, g, w, "vision_model.", pixels, mask, shapes, &pooled);
    return pooled;
}

static hfx_status dual_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                             hfx_graph *g, hfx_error *err) {
    const dual_desc *d = desc_;
    const dual_layout *L = d->layout;
    const dual_cfg *m = cfg_;
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    const hfx_vision_cfg *v = &m->vision.cfg;
    hfx_dim bs[2] = {o->batch, o->seq};
    hfx_value *last;
    if (d->part != DUAL_BOTH) { /* a text tower alone */
        hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
        hfx_value *pooled = text_tower(L, m, g, &w, o, ids, hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs),
                                       &last);
        if (d->part == DUAL_TEXT_PROJECTED) hfx_graph_output(g, text_embeds(L, m, g, &w, pooled), "text_embeds");
        hfx_graph_output(g, last, "last_hidden_state");
        if (d->part == DUAL_TEXT) hfx_graph_output(g, pooled, "pooler_output");
        return finish(d, g, &w, err);
    }
    /* the forward's order; images are another batch than texts: their own dim where the export's
     * are symbolic */
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_dim images = hfx_dim_is_const(o->batch) ? o->batch
                                                : hfx_dim_sym(hfx_graph_symbol(g, "image_batch_size", 1, INT32_MAX));
    hfx_value *image = L->naflex ? naflex_image(m, ck, o, g, &w, images) : NULL;
    hfx_value *pixels = L->naflex ? NULL
                                  : hfx_graph_input(g, "pixel_values", o->dtype, 4,
                                                    (hfx_dim[]){images, hfx_dim_const(v->channels),
                                                                hfx_dim_const(v->image), hfx_dim_const(v->image)});
    hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
    hfx_value *text = normalized(g, text_embeds(L, m, g, &w, text_tower(L, m, g, &w, o, ids, mask, &last)));
    if (!L->naflex) image = hfx_vision_tower_pooled(&m->vision, g, &w, "vision_model.", pixels);
    if (image && L->image_projection)
        image = hfx_linear(g, image, hfx_weight(&w, 2, (int64_t[]){m->projection, v->hidden}, "%s.weight",
                                                L->image_projection), NULL);
    if (image) {
        image = normalized(g, image);
        hfx_value *per_text = hfx_op2(g, HFX_OP_MATMUL, text, hfx_transpose(g, image, 2, (int64_t[]){1, 0})); /* [B,N] */
        /* CLIP's logit_scale is a scalar, SigLIP's a [1] */
        bool vector = L->logit_bias;
        hfx_value *scale = vector ? hfx_weight(&w, 1, (int64_t[]){1}, "logit_scale") : hfx_weight(&w, 0, NULL, "logit_scale");
        per_text = hfx_op2(g, HFX_OP_MUL, per_text, hfx_op1(g, HFX_OP_EXP, scale));
        if (L->logit_bias) per_text = hfx_op2(g, HFX_OP_ADD, per_text, hfx_weight(&w, 1, (int64_t[]){1}, "logit_bias"));
        hfx_graph_output(g, hfx_transpose(g, per_text, 2, (int64_t[]){1, 0}), "logits_per_image");
        hfx_graph_output(g, per_text, "logits_per_text");
        hfx_graph_output(g, text, "text_embeds");
        hfx_graph_output(g, image, "image_embeds");
    }
    return finish(d, g, &w, err);
}

static hfx_torch_signature dual_torch_signature(const void *desc_) {
    const dual_desc *d = desc_;
    static const char *const both[] = {"input_ids", "pixel_values", "attention_mask", NULL};
    static const char *const text[] = {"input_ids", "attention_mask", NULL};
    if (d->part == DUAL_TEXT) return (hfx_torch_signature){.args = text, .output_class = "BaseModelOutputWithPooling"};
    if (d->part == DUAL_TEXT_PROJECTED)
        return (hfx_torch_signature){.args = text, .output_class = "CLIPTextModelOutput"};
    static const char *const naflex[] = {"input_ids", "pixel_values", "pixel_attention_mask", "spatial_shapes",
                                         "attention_mask", NULL};
    if (d->layout->naflex) return (hfx_torch_signature){.args = naflex, .output_class = "Siglip2Output"};
    return (hfx_torch_signature){.args = both, .output_class = d->layout == &clip_dual ? "CLIPOutput" : "SiglipOutput"};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", NULL};

const hfx_arch_family hfx_dual_family = {
    .cfg_size = sizeof(dual_cfg),
    .parse = dual_parse,
    .build_forward = dual_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = sequence_inputs,
    .torch_signature = dual_torch_signature,
};

const dual_desc hfx_clip_model = {.architecture = "CLIPModel", .layout = &clip_dual, .part = DUAL_BOTH};
const dual_desc hfx_siglip_model = {.architecture = "SiglipModel", .layout = &siglip_dual, .part = DUAL_BOTH};
const dual_desc hfx_clip_text_model = {.architecture = "CLIPTextModel", .layout = &clip_dual, .part = DUAL_TEXT};
const dual_desc hfx_clip_text_projection = {.architecture = "CLIPTextModelWithProjection", .layout = &clip_dual,
                                            .part = DUAL_TEXT_PROJECTED};
const dual_desc hfx_siglip_text_model = {.architecture = "SiglipTextModel", .layout = &siglip_dual, .part = DUAL_TEXT};
const dual_desc hfx_siglip2_model = {.architecture = "Siglip2Model", .layout = &siglip2_dual, .part = DUAL_BOTH};
const dual_desc hfx_siglip2_text_model = {.architecture = "Siglip2TextModel", .layout = &siglip2_dual,
                                          .part = DUAL_TEXT};
