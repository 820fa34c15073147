/* Grid towers: image encoders that take any image size (Qwen2-VL's, Qwen2.5-VL's, Qwen3-VL's), their patches
 * flattened into rows with each image's grid beside them (vision_grid.c). */
#ifndef HFX_ARCH_VISION_GRID_H
#define HFX_ARCH_VISION_GRID_H

#include "arch/vision.h"

enum { HFX_GRID_MAX_LAYERS = 4096, /* vision.c's bound on a tower's layers */
       HFX_GRID_MAX_DEEPSTACK = 64 };

/* A lineage's merger parts, under the merger's prefix ("merger.", "deepstack_merger_list.{k}."). */
typedef struct hfx_grid_merger_names {
    const char *norm, *fc1, *fc2; /* "ln_q", "mlp.0", "mlp.2" (Qwen2-VL's) */
} hfx_grid_merger_names;

typedef struct hfx_grid_tower {
    hfx_vision_tower tower;
    int64_t merge;    /* spatial_merge_size: each merge × merge block of patches becomes one token */
    int64_t temporal; /* temporal_patch_size: frames per patch; 0: no frames (Pixtral's Conv2d patch embedding) */
    int64_t window;   /* Qwen2.5-VL: a window's side in merged tokens; 0: no windowed layers */
    int64_t out;      /* the merger's output width (the language model's) */
    double theta;     /* the 2-D rotary's base */
    const hfx_grid_merger_names *merger; /* NULL: none (Pixtral's: its host projects the states) */
    bool odd_columns; /* the 2-D rotary's frequencies: Pixtral's axial form, rows turned by the even ones of a whole
                         head's (1/θ^(2i/hd), i even) and columns by the odd ones; else Qwen's, both by half a
                         head's 1/θ^(2i/(hd/2)) */
    int64_t position_rows; /* Qwen3-VL: num_position_embeddings, a learned square grid of positions resampled
                              (bilinear, corners aligned) to each image's patches; 0: none */
    int64_t position_side; /* ⌊√position_rows⌋: the grid's side */
    /* DeepStack (Qwen3-VL): after layer deepstack_layer[k] (ascending), the states go through
       deepstack_merger_list.{deepstack_merger[k]} (normed after the merge) into feature k */
    int n_deepstack;
    int64_t deepstack_layer[HFX_GRID_MAX_DEEPSTACK];
    int deepstack_merger[HFX_GRID_MAX_DEEPSTACK];
    int n_deepstack_mergers; /* the checkpoint's deepstack mergers (deepstack_visual_indexes' length) */
    bool full[HFX_GRID_MAX_LAYERS]; /* with windows: the layers that see their whole image */
} hfx_grid_tower;

/* Read a grid tower's vision_config for its model_type ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_5" and their
 * MoE forms, or transformers 5's "..._vision"; "pixtral", whose merge is its host's: spatial_merge_size is read from
 * `c` there too); others are HFX_ERR_UNSUPPORTED. */
hfx_status hfx_grid_tower_parse(const char *model_type, hfx_cfg c, hfx_grid_tower *out, hfx_error *err);

/* The tower and its merger, tensors named under `prefix` ("visual."), over pixel_values
 * [num_patches, channels·temporal·patch²] (in the processor's order: each merge² block of patches
 * consecutive) and image_grid_thw [num_images, 3] i64 (each image's frames, rows and columns in
 * patches): image_features [num_image_tokens, out], every image's tokens one after another; with
 * deepstack (not NULL) and deepstack_used > 0, *deepstack = the first deepstack_used DeepStack features
 * [deepstack_used, num_image_tokens, out] (the later ones' mergers are read as unused). Failures are the
 * graph's. */
hfx_value *hfx_grid_tower_features(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                   hfx_value *pixels, hfx_value *grid, int deepstack_used, hfx_value **deepstack);

/* The tower without a merger over the same inputs: the states after layer `upto` (1 ≤ upto ≤ layers; the later
 * layers read as unused), [num_patches, hidden] in the processor's order (a host with its own projector: Mistral3),
 * and *tokens the symbol of num_patches / merge². */
hfx_value *hfx_grid_tower_states(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                 hfx_value *pixels, hfx_value *grid, int64_t upto, hfx_dim *tokens);

/* optimum-intel's split of the Qwen-VL lineages' towers, which OpenVINO GenAI's VLMPipeline runs: the patch
 * embedding alone, over pixel rows [num_patches, channels·temporal·patch²] (GenAI's preprocessing, one image at a
 * time) → [num_patches, hidden]; Qwen3-VL's learned position table's rows `taps` [...] i64 → [..., hidden] (GenAI
 * weighs the bilinear taps and adds them to the patch embedding). */
hfx_value *hfx_grid_tower_patches(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *pixels);
hfx_value *hfx_grid_tower_position_table(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                         hfx_value *taps);

/* ...and the rest, over what the caller computes from the grids (GenAI's inputs_embedder): */
typedef struct hfx_grid_parts {
    hfx_value *states;       /* [N, hidden]: the patch embedding's rows (Qwen3-VL's: its learned positions added),
                                every image's in the processor's order */
    hfx_value *mask;         /* [1, N, N] f32: 0 where a patch sees another (its own image's frame), −inf not */
    hfx_value *rotary;       /* [N, head / 2] f32: each patch's row angles, then its column's (hfx_grid_tower's θ) */
    hfx_value *window_mask;  /* with windows: [1, N, N] f32 over the window order, as mask */
    hfx_value *window_index; /* with windows: [num_image_tokens] i64, the merged tokens in window order; NULL
                                without */
} hfx_grid_parts;

/* The layers over those (in window order where the tower has windows, as transformers runs them) and the merger:
 * image_features [num_image_tokens, out] in the processor's order; DeepStack's features as hfx_grid_tower_features
 * makes them. Failures are the graph's. */
hfx_value *hfx_grid_tower_merged_parts(const hfx_grid_tower *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                       const hfx_grid_parts *in, int deepstack_used, hfx_value **deepstack);

#endif
