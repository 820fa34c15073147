/* Phi-4-multimodal's encoders (Phi4MultimodalForCausalLM), around its Phi-3 text model (the decoder's, over the
 * top-level config). Both encoders live in model.embed_tokens_extend; the components:
 *
 *   image_encoder  pixel_values [N, 3, S, S] (each image's crops as its processor makes them: the global view, then the
 *                  HD crops) and image_attention_mask [N, S/p, S/p] (1 on each crop's real patches) → image_features
 *                  [N, (S/2p)², text hidden]: hidden_states[feature_layer] of the SigLIP tower (each crop's positions
 *                  bucketed over its real patches, its padded patches hidden as keys), every 2 × 2 patches averaged,
 *                  img_projection_up → GELU → img_projection_down; and image_separators [2, text hidden]: the same
 *                  projection of sub_img_feature_extensor (after each row of the HD crops' tokens) and of
 *                  global_img_feature_extensor (between the HD crops' tokens and the global view's). The projection is
 *                  per token, so the caller lays the projected tokens out as transformers lays out the tower's (by
 *                  image_sizes, the HD crops' real rows and columns, the separators), which depends on each image's
 *                  size: no fixed-shape graph holds it.
 *   audio_encoder  input_features [N, T, mels] and audio_attention_mask [N, T] → the conformer (audio_phi4.c), then
 *                  audio_features [N, ⌈T/8⌉, text hidden] through up_proj_for_speech → GELU → down_proj_for_speech, and
 *                  audio_features_with_image through the vision-speech pair, which transformers uses where the prompt
 *                  has images too; each clip's first audio_embed_sizes (its processor's) are its tokens.
 *   embed_tokens, prefill, decode: the text model's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/vlm.h"
#include "base/status.h"

static const char *const image_stack = "model.embed_tokens_extend.image_embed.";
static const char *const audio_stack = "model.embed_tokens_extend.audio_embed.";

hfx_status hfx_vlm_phi4mm_parse(hfx_cfg c, hfx_cfg vision, const char *vision_type, hfx_arena *arena, vlm_cfg *m,
                                hfx_error *err) {
    hfx_cfg audio;
    int64_t layer;
    hfx_status st = hfx_vision_tower_parse(vision_type, vision, HFX_TOWER_IMAGE, &m->vision, err);
    if (st) return st;
    int64_t L = m->vision.cfg.layers, side = m->vision.cfg.image / m->vision.cfg.patch;
    if ((st = hfx_cfg_object(c, "audio_config", arena, &audio, err)) ||
        (st = hfx_phi4_audio_parse(audio, &m->phi4_audio, err)) ||
        (st = hfx_cfg_int_in_or(vision, "feature_layer", -2, -(L + 1), L, &layer, err)) ||
        (st = hfx_cfg_int_in_or(vision, "image_token_id", 200010, 0, INT64_MAX, &m->image_token, err)))
        return st;
    if (side % 2 || (side & (side - 1)))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: image_size / patch_size is %lld patches a side: written for a "
                        "power of two (an odd side is padded by reflection first; for others the positions' buckets "
                        "hang on torch's rounding of arange)", vision.where, (long long)side);
    m->feature_layers[0] = layer < 0 ? L + 1 + layer : layer, m->n_features = 1;
    m->has_audio = true;
    return HFX_OK;
}

/* img_projection_up → GELU → img_projection_down (or the audio's pair `up`, `down`) over x [..., in] */
static hfx_value *projected(const vlm_cfg *m, hfx_weights *w, hfx_value *x, int64_t in, const char *stack,
                            const char *up, const char *down) {
    int64_t H = m->text.hidden;
    x = hfx_activate(w->g, HFX_ACT_GELU, hfx_linear_named(w, x, in, H, true, "%s%s", stack, up));
    return hfx_linear_named(w, x, H, H, true, "%s%s", stack, down);
}

/* Each crop's position ids [N, P] (P = side²) from its real patches `mask` [N, side, side] i64, as transformers'
 * Phi4MultimodalVisionEmbeddings buckets them: row i of a crop of h real rows at ⌊side · min(i · (1/h), 1 − 1e-6)⌋ in
 * float32 (the side a power of two: its boundaries k/side exact), the same for columns; 0 on padded patches. */
static hfx_value *positions(hfx_graph *g, int64_t side, hfx_value *mask) {
    hfx_dim N = mask->dims[0], S = hfx_dim_const(side);
    int64_t rows = 1, cols = 2, last = 2;
    float *index = hfx_arena_alloc(g->arena, (size_t)side * sizeof *index), *bounds;
    bounds = hfx_arena_alloc(g->arena, (size_t)side * sizeof *bounds);
    if (!index || !bounds) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < side; i++) index[i] = (float)i, bounds[i] = (float)(i + 1) / (float)side;
    hfx_value *idx = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &side, index);
    int64_t nb = side - 1;
    hfx_value *boundaries = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &nb, bounds); /* 1/side, ..., (side − 1)/side */
    hfx_value *bucket[2];
    for (int a = 0; a < 2; a++) { /* rows (real rows: the first column's), then columns (the first row's) */
        hfx_value *line = a == 0 ? hfx_slice(g, mask, 2, 0, 1) : hfx_slice(g, mask, 1, 0, 1);
        hfx_value *n = hfx_reduce(g, HFX_OP_REDUCE_SUM, line, 1, a == 0 ? &rows : &cols); /* [N, 1, 1] */
        hfx_value *step = hfx_reshape(g, hfx_op1(g, HFX_OP_RECIPROCAL, hfx_cast(g, n, HFX_DTYPE_F32)), 2,
                                      (hfx_dim[]){N, hfx_dim_const(1)});
        hfx_value *frac = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, idx, 0), step),
                                  hfx_const_f32(g, (float)(1.0 - 1e-6))); /* [N, side] */
        hfx_value *past = hfx_op2(g, HFX_OP_GREATER_EQUAL, hfx_unsqueeze(g, frac, 2), boundaries); /* [N, side, nb] */
        bucket[a] = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, past, HFX_DTYPE_I64), 1, &last); /* [N, side, 1] */
    }
    hfx_value *pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, bucket[0], hfx_const_i64(g, side)),
                             hfx_transpose(g, bucket[1], 3, (int64_t[]){0, 2, 1})); /* [N, side, side] */
    hfx_dim flat[2] = {N, hfx_dim_scale(S, side)};
    hfx_value *real = hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, mask, 2, flat), hfx_const_i64(g, 0));
    return hfx_where(g, real, hfx_reshape(g, pos, 2, flat), hfx_const_i64(g, 0));
}

void hfx_vlm_build_phi4mm_image(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                const char *tower) {
    const hfx_vision_tower *t = &m->vision;
    int64_t S = t->cfg.image, p = t->cfg.patch, side = S / p, P = side * side, D = t->cfg.hidden, half = side / 2;
    hfx_dim N = hfx_dim_sym(hfx_graph_symbol(g, "num_crops", 1, INT32_MAX));
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 4, (hfx_dim[]){N, hfx_dim_const(t->cfg.channels),
                                                                               hfx_dim_const(S), hfx_dim_const(S)});
    hfx_value *mask = hfx_graph_input(g, "image_attention_mask", HFX_DTYPE_I64, 3,
                                      (hfx_dim[]){N, hfx_dim_const(side), hfx_dim_const(side)});
    hfx_value *kernel = hfx_weight(w, 4, (int64_t[]){D, t->cfg.channels, p, p}, "%s%s.weight", tower,
                                   hfx_vision_patch_name(t));
    hfx_value *x = hfx_conv2d(g, pixels, kernel, hfx_weight(w, 1, &D, "%s%s.bias", tower, hfx_vision_patch_name(t)),
                              (int64_t[]){p, p}, (int64_t[]){0, 0}, 1, (const char *const[]){NULL, NULL});
    x = hfx_transpose(g, hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(D), hfx_dim_const(P)}), 3,
                      (int64_t[]){0, 2, 1}); /* [N, P, D] */
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){P, D}, "%sembeddings.position_embedding.weight", tower);
    x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, table, positions(g, side, mask), 0));
    /* the padded patches hidden as keys: [N, 1, 1, P] */
    hfx_value *real = hfx_op2(g, HFX_OP_GREATER, hfx_reshape(g, mask, 2, (hfx_dim[]){N, hfx_dim_const(P)}),
                              hfx_const_i64(g, 0));
    hfx_value *bias = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, real, 1), 1), hfx_const_f32(g, 0.0f),
                                hfx_const_f32(g, -3.4028234663852886e38f));
    hfx_vision_attend a = {.bias = hfx_cast(g, bias, x->dtype)};
    int64_t upto = m->feature_layers[0];
    if (upto > 0) x = hfx_vision_layers_attending(t, g, w, tower, x, &a, upto, NULL);
    hfx_vision_tower_skip_rest(t, w, tower, upto);
    if (g->failed) return;
    /* every 2 × 2 patches averaged (AvgPool2d(2)): [N, half², D] */
    x = hfx_reshape(g, x, 6, (hfx_dim[]){N, hfx_dim_const(half), hfx_dim_const(2), hfx_dim_const(half), hfx_dim_const(2),
                                         hfx_dim_const(D)});
    x = hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 2, (int64_t[]){2, 4});
    x = hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(half * half), hfx_dim_const(D)});
    hfx_graph_output(g, projected(m, w, x, D, image_stack, "img_projection_up", "img_projection_down"), "image_features");
    hfx_value *sub = hfx_weight(w, 4, (int64_t[]){1, 1, 1, D}, "%ssub_img_feature_extensor", image_stack);
    hfx_value *glob = hfx_weight(w, 3, (int64_t[]){1, 1, D}, "%sglobal_img_feature_extensor", image_stack);
    hfx_dim row[2] = {hfx_dim_const(1), hfx_dim_const(D)};
    hfx_value *both = hfx_concat(g, 2, (hfx_value *[]){hfx_reshape(g, sub, 2, row), hfx_reshape(g, glob, 2, row)}, 0);
    hfx_graph_output(g, projected(m, w, hfx_cast(g, both, x->dtype), D, image_stack, "img_projection_up",
                                  "img_projection_down"),
                     "image_separators");
}

void hfx_vlm_build_phi4mm_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w) {
    const hfx_phi4_audio *t = &m->phi4_audio;
    hfx_dim T = hfx_dim_sym(hfx_graph_symbol(g, "audio_frames", 1, INT32_MAX)), N = o->batch;
    hfx_value *features = hfx_graph_input(g, "input_features", o->dtype, 3, (hfx_dim[]){N, T, hfx_dim_const(t->mels)});
    hfx_value *mask = hfx_graph_input(g, "audio_attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){N, T});
    char encoder[96];
    snprintf(encoder, sizeof encoder, "%sencoder.", audio_stack);
    hfx_value *x = hfx_phi4_audio_tower(t, g, w, encoder, features, mask);
    if (g->failed) return;
    hfx_graph_output(g, projected(m, w, x, t->hidden, audio_stack, "up_proj_for_speech", "down_proj_for_speech"),
                     "audio_features");
    hfx_graph_output(g, projected(m, w, x, t->hidden, audio_stack, "up_proj_for_vision_speech",
                                  "down_proj_for_vision_speech"),
                     "audio_features_with_image");
}
