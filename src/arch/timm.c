/* transformers' TimmWrapperModel over the timm models hfx builds: MobileNet-V5's encoder (Gemma 3n's vision tower,
 * model_type gemma3n_vision; vision_mobilenet.c). Others are refused by their timm architecture's name.
 *
 * One component, `model`: pixel_values [B, 3, H, W] (the processor's fixed size: preprocessor_config.json, else
 * 768 × 768, MobileNet-V5's input) → last_hidden_state [B, 2048, 16, 16], the feature map as TimmWrapperModel
 * returns it without pooling. */
#include "arch/arch.h"
#include "arch/vision.h"
#include "arch/weights.h"
#include "base/status.h"

static hfx_status timm_parse(const void *desc, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    (void)desc, (void)arena;
    return hfx_mobilenet_parse(c, cfg, err);
}

static hfx_status timm_build(const void *desc, const void *cfg, const hfx_checkpoint *ck, const hfx_build_opts *o,
                             hfx_graph *g, hfx_error *err) {
    hfx_weights w;
    int64_t h, wd;
    hfx_status st = hfx_mobilenet_image_size(ck, &h, &wd, err);
    if (st) return st;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, (const char *)desc, err))) return st;
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 4,
                                        (hfx_dim[]){o->batch, hfx_dim_const(3), hfx_dim_const(h), hfx_dim_const(wd)});
    hfx_value *x = hfx_mobilenet_features(cfg, g, &w, "timm_model.", pixels);
    if (!g->failed) hfx_graph_output(g, x, "last_hidden_state");
    hfx_graph_set_meta(g, "architecture", (const char *)desc);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static const char *const pixels_in[] = {"pixel_values", NULL};

static hfx_torch_signature timm_torch_signature(const void *desc) {
    (void)desc;
    return (hfx_torch_signature){.args = pixels_in, .output_class = "BaseModelOutputWithPooling"};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};

const hfx_arch_family hfx_timm_family = {
    .cfg_size = sizeof(hfx_mobilenet),
    .parse = timm_parse,
    .build_forward = timm_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = pixels_in,
    .torch_signature = timm_torch_signature,
};

const char hfx_timm_wrapper_model[] = "TimmWrapperModel";
