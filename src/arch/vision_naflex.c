/* SigLIP 2's NaFlex image encoder (Siglip2VisionModel): images of any aspect ratio, each cut by its processor into
 * an h × w grid of patches (up to max_num_patches of them, padded to that count), SigLIP's tower over them.
 *
 * Inputs as Siglip2ImageProcessor gives them: pixel_values [B, P, channels·patch²] (the patches, flattened),
 * pixel_attention_mask [B, P] i32 (1: a patch, 0: padding) and spatial_shapes [B, 2] i64 (each image's h, w). The
 * patches go through a linear patch embedding; the learned positions, a G × G grid (G² = num_patches), are resized
 * to each image's h × w as F.interpolate(bilinear, antialias) does, written as transformers 5 writes it: per output
 * row and column a weight over the grid's rows and columns (a triangle filter as wide as the downscale, normalized),
 * their outer product times the grid, in float32; padded patches take position (0, 0). Then SigLIP's layers with
 * padded patches hidden, the post-LayerNorm, and the attention-pooling head over the real patches.
 *
 * Component: a plain forward, `model` (last_hidden_state, pooler_output). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/vision.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef struct naflex_desc {
    const char *architecture;
} naflex_desc;

typedef struct naflex_cfg {
    hfx_vision_tower tower;
    int64_t grid;      /* the position grid's side: √num_patches */
    bool head;         /* vision_use_head */
} naflex_cfg;

static hfx_status naflex_parse(const void *desc, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    naflex_cfg *m = cfg;
    hfx_status st;
    (void)desc, (void)arena;
    if ((st = hfx_vision_tower_parse("siglip2_vision_model", c, HFX_TOWER_IMAGE, &m->tower, err)) ||
        (st = hfx_naflex_grid(c, &m->grid, err)) || (st = hfx_cfg_bool_or(c, "vision_use_head", true, &m->head, err)))
        return st;
    return HFX_OK;
}

/* The patch count P of a fixed export: the processor's max_num_patches (preprocessor_config.json), else 256. */
static hfx_status max_patches(const hfx_checkpoint *ck, int64_t *out, hfx_error *err) {
    json_t *pre = NULL;
    hfx_status st = hfx_checkpoint_side_json(ck, "preprocessor_config.json", false, &pre, err);
    if (st) return st;
    const json_t *v = pre ? json_object_get(pre, "max_num_patches") : NULL;
    *out = json_is_integer(v) ? json_integer_value(v) : 256;
    json_decref(pre);
    if (*out < 1 || *out > 1 << 16)
        return hfx_fail(err, HFX_ERR_INVALID, "%s/preprocessor_config.json: max_num_patches %lld is out of range",
                        hfx_checkpoint_dir(ck), (long long)*out);
    return HFX_OK;
}

/* The grid table [G², hidden] resized to each image's spatial shape, shapes [B,2] i64, for P patches each: [B,P,hidden]
 * f32 (transformers' resize_positional_embeddings). */
static hfx_value *resized_positions(hfx_graph *g, hfx_value *table, hfx_value *shapes, hfx_dim P, hfx_value *p_len,
                                    int64_t G) {
    hfx_value *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
    hfx_value *pos = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_range(g, zero, p_len, one, P), 0), 2); /* [1,P,1] i64 */
    hfx_value *h = hfx_unsqueeze(g, hfx_slice(g, shapes, 1, 0, 1), 1), *w = hfx_unsqueeze(g, hfx_slice(g, shapes, 1, 1, 2), 1);
    hfx_value *rows = hfx_op2(g, HFX_OP_DIV, pos, w);                                              /* [B,P,1] */
    hfx_value *cols = hfx_op2(g, HFX_OP_SUB, pos, hfx_op2(g, HFX_OP_MUL, rows, w));
    hfx_value *inside = hfx_op2(g, HFX_OP_LESS, pos, hfx_op2(g, HFX_OP_MUL, h, w));                 /* [B,P,1] */
    hfx_value *index = hfx_concat(g, 2, (hfx_value *[]){rows, cols}, 2);                           /* [B,P,2] */
    index = hfx_cast(g, hfx_where(g, inside, index, zero), HFX_DTYPE_F32);
    hfx_value *sizes = hfx_cast(g, hfx_unsqueeze(g, shapes, 1), HFX_DTYPE_F32);                     /* [B,1,2] */
    hfx_value *scale = hfx_op2(g, HFX_OP_DIV, hfx_const_f32(g, (float)G), sizes);
    hfx_value *support = hfx_op2(g, HFX_OP_MAX, scale, hfx_const_f32(g, 1.0f));
    hfx_value *center = hfx_op2(g, HFX_OP_SUB, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, index, hfx_const_f32(g, 0.5f)),
                                                       scale), hfx_const_f32(g, 0.5f));         /* [B,P,2] */
    float src[4096];
    if (G > 4096) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "SigLIP 2: a position grid over 4096 wide");
        return NULL;
    }
    for (int64_t i = 0; i < G; i++) src[i] = (float)i;
    hfx_value *source = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &G, src);
    hfx_value *dist = hfx_op1(g, HFX_OP_NEG, hfx_op2(g, HFX_OP_SUB, source, hfx_unsqueeze(g, center, 3))); /* [B,P,2,G] */
    dist = hfx_op2(g, HFX_OP_MAX, dist, hfx_op1(g, HFX_OP_NEG, dist)); /* |source − center| */
    hfx_value *wt = hfx_op2(g, HFX_OP_SUB, hfx_const_f32(g, 1.0f), hfx_op2(g, HFX_OP_DIV, dist, hfx_unsqueeze(g, support, 3)));
    wt = hfx_op2(g, HFX_OP_MAX, wt, hfx_const_f32(g, 0.0f));
    int64_t last = 3;
    wt = hfx_op2(g, HFX_OP_DIV, wt, hfx_reduce(g, HFX_OP_REDUCE_SUM, wt, 1, &last));
    hfx_dim B = shapes->dims[0], gd = hfx_dim_const(G);
    hfx_value *wr = hfx_reshape(g, hfx_slice(g, wt, 2, 0, 1), 4, (hfx_dim[]){B, P, gd, hfx_dim_const(1)});
    hfx_value *wc = hfx_reshape(g, hfx_slice(g, wt, 2, 1, 2), 4, (hfx_dim[]){B, P, hfx_dim_const(1), gd});
    hfx_value *both = hfx_reshape(g, hfx_op2(g, HFX_OP_MUL, wr, wc), 3, (hfx_dim[]){B, P, hfx_dim_const(G * G)});
    return hfx_op2(g, HFX_OP_MATMUL, both, hfx_cast(g, table, HFX_DTYPE_F32)); /* [B,P,hidden] */
}

hfx_value *hfx_naflex_tower(const hfx_vision_tower *t, int64_t grid, hfx_graph *g, hfx_weights *w, const char *prefix,
                            hfx_value *pixels, hfx_value *mask, hfx_value *shapes, hfx_value **pooled) {
    const hfx_vision_cfg *v = &t->cfg;
    int64_t in = v->channels * v->patch * v->patch, H = v->hidden;
    char n[160];
    snprintf(n, sizeof n, "%sembeddings.patch_embedding", prefix);
    hfx_value *x = hfx_linear(g, pixels, hfx_weight(w, 2, (int64_t[]){H, in}, "%s.weight", n),
                              hfx_weight(w, 1, &H, "%s.bias", n));
    snprintf(n, sizeof n, "%sembeddings.position_embedding.weight", prefix);
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){grid * grid, H}, "%s", n);
    hfx_value *pos = resized_positions(g, table, shapes, pixels->dims[1], hfx_dim_of(g, pixels, 1), grid);
    if (pos) x = hfx_op2(g, HFX_OP_ADD, x, hfx_cast(g, pos, x->dtype));
    hfx_value *keep = hfx_op2(g, HFX_OP_EQUAL, hfx_cast(g, mask, HFX_DTYPE_I64), hfx_const_i64(g, 0));
    hfx_value *bias = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, keep, 1), 1), hfx_const_f32(g, -FLT_MAX),
                                hfx_const_f32(g, 0.0f)); /* [B,1,1,P]: padded patches hidden */
    x = hfx_vision_layers_attending(t, g, w, prefix, x, &(hfx_vision_attend){.bias = bias}, t->cfg.layers, NULL);
    snprintf(n, sizeof n, "%spost_layernorm", prefix);
    x = hfx_vision_norm(t, g, w, n, x);
    if (pooled) *pooled = hfx_vision_map_pool(t, g, w, prefix, x, bias);
    return x;
}

hfx_status hfx_naflex_patches(const hfx_checkpoint *ck, const hfx_build_opts *o, hfx_dim *out, hfx_error *err) {
    int64_t P0;
    hfx_status st = max_patches(ck, &P0, err);
    if (!st) *out = hfx_dim_is_const(o->seq) ? hfx_dim_const(P0) : o->seq; /* (dynamic: any patch count) */
    return st;
}

hfx_status hfx_naflex_grid(hfx_cfg c, int64_t *grid, hfx_error *err) {
    int64_t n;
    hfx_status st = hfx_cfg_int_in_or(c, "num_patches", 256, 1, 1 << 20, &n, err);
    if (st) return st;
    *grid = (int64_t)sqrt((double)n);
    while (*grid * *grid > n) (*grid)--;
    while ((*grid + 1) * (*grid + 1) <= n) (*grid)++;
    if (*grid * *grid != n)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: num_patches %lld is not a square (the position grid's)", c.where,
                        (long long)n);
    return HFX_OK;
}

static hfx_status naflex_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                               hfx_graph *g, hfx_error *err) {
    const naflex_desc *d = desc_;
    const naflex_cfg *m = cfg_;
    const hfx_vision_cfg *v = &m->tower.cfg;
    hfx_dim P;
    hfx_status st = hfx_naflex_patches(ck, o, &P, err);
    if (st) return st;
    hfx_weights w;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    const char *prefix = hfx_weight_exists(&w, "vision_model.embeddings.patch_embedding.weight") ? "vision_model." : "";
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 3,
                                        (hfx_dim[]){o->batch, P, hfx_dim_const(v->channels * v->patch * v->patch)});
    hfx_value *mask = hfx_graph_input(g, "pixel_attention_mask", HFX_DTYPE_I32, 2, (hfx_dim[]){o->batch, P});
    hfx_value *shapes = hfx_graph_input(g, "spatial_shapes", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, hfx_dim_const(2)});
    hfx_value *pooled = NULL;
    hfx_value *x = hfx_naflex_tower(&m->tower, m->grid, g, &w, prefix, pixels, mask, shapes, m->head ? &pooled : NULL);
    hfx_graph_output(g, x, "last_hidden_state");
    if (pooled) hfx_graph_output(g, pooled, "pooler_output");
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static hfx_torch_signature naflex_torch_signature(const void *desc) {
    static const char *const args[] = {"pixel_values", "pixel_attention_mask", "spatial_shapes", NULL};
    (void)desc;
    return (hfx_torch_signature){.args = args, .output_class = "BaseModelOutputWithPooling"};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
/* (pixel_values and the mask share the batch and the patch count: the export's sequence axis) */
static const char *const naflex_inputs[] = {"pixel_values", "pixel_attention_mask", NULL};

const hfx_arch_family hfx_naflex_family = {
    .cfg_size = sizeof(naflex_cfg),
    .parse = naflex_parse,
    .build_forward = naflex_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = naflex_inputs,
    .torch_signature = naflex_torch_signature,
};

const naflex_desc hfx_siglip2_vision_model = {"Siglip2VisionModel"};
