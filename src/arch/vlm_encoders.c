/* Each multimodal lineage's encoder (vlm.h): the tower's states as the lineage picks them, through its projector into
 * the language model's width — LLaVA's MLP over chosen hidden states, Idefics3's and InternVL's pixel shuffle, Gemma 3's
 * average pool, PaliGemma's linear, Mistral3's patch merger, LFM2-VL's unshuffle of NaFlex tiles, Llama 4's adapter,
 * the audio lineages' projectors — and the config each reads. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/vlm.h"
#include "base/status.h"

/* vision_feature_layer: one hidden_states index or a list of them, negative from the end (`fallback` where there is
 * none). */
static hfx_status parse_feature_layers(hfx_cfg c, int64_t fallback, vlm_cfg *m, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, "vision_feature_layer");
    int64_t n_states = m->vision.cfg.layers + 1;
    bool list = json_is_array(v);
    size_t n = list ? json_array_size(v) : 1;
    if ((list && (n < 1 || n > MAX_FEATURE_LAYERS)) || (!list && v && !json_is_null(v) && !json_is_integer(v)))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'vision_feature_layer' must be an integer or a list of 1 to %d "
                                              "integers", c.where, MAX_FEATURE_LAYERS);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = list ? json_array_get(v, i) : v;
        int64_t k = !e || json_is_null(e) ? fallback : json_is_integer(e) ? json_integer_value(e) : INT64_MIN;
        if (k < 0 && k >= -n_states) k += n_states;
        if (k < 0 || k >= n_states)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: vision_feature_layer%s is not the index of one of the vision "
                                                  "tower's %lld hidden states", c.where, list ? " (an entry)" : "",
                            (long long)n_states);
        m->feature_layers[i] = k;
    }
    m->n_features = (int)n;
    return HFX_OK;
}

/* projector_hidden_act (GELU where the config names none): every MLP projector's activation. */
static hfx_status parse_projector_act(hfx_cfg c, vlm_cfg *m, hfx_error *err) {
    const char *act;
    hfx_status st = hfx_cfg_str_or(c, "projector_hidden_act", "gelu", &act, err);
    if (st) return st;
    if (!hfx_activation_from_name(act, &m->projector_act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: projector_hidden_act '%s' is not supported (%s)", c.where, act,
                        hfx_activation_names());
    return HFX_OK;
}

/* A pixel shuffle's factor from its ratio (InternVL's downsample_ratio, Llama 4's pixel_shuffle_ratio: 0.5 → 2) under
 * `key` of `c`, default 0.5: a whole number dividing the tower's side in patches. */
static hfx_status shuffle_factor(hfx_cfg c, const char *key, vlm_cfg *m, hfx_error *err) {
    double ratio;
    int64_t side = m->vision.cfg.image / m->vision.cfg.patch;
    hfx_status st = hfx_cfg_num_or(c, key, 0.5, &ratio, err);
    if (st) return st;
    m->scale = ratio > 0 && ratio <= 1 ? (int64_t)(1 / ratio + 0.5) : 0;
    if (!m->scale || fabs(1 / ratio - (double)m->scale) > 1e-9 || side % m->scale)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s %g: the pixel shuffle needs 1/ratio a whole number dividing "
                                                  "the tower's %lld × %lld patches", c.where, key, ratio,
                        (long long)side, (long long)side);
    return HFX_OK;
}

/* InternVL's: one hidden state (vision_feature_layer -1: the last one, through the final norm unless the tower pools
 * by its mean), the class token dropped, the pixel shuffle's factor 1/downsample_ratio. */
static hfx_status parse_internvl(hfx_cfg c, hfx_cfg vision, vlm_cfg *m, hfx_error *err) {
    hfx_status st;
    const char *strategy;
    bool mean_pooling;
    if (json_is_array(json_object_get(c.obj, "vision_feature_layer")))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: vision_feature_layer as a list: InternVL reads one layer's "
                                                  "states", c.where);
    if ((st = parse_feature_layers(c, -1, m, err)) ||
        (st = hfx_cfg_str_or(c, "vision_feature_select_strategy", "default", &strategy, err)) ||
        (st = shuffle_factor(c, "downsample_ratio", m, err)) ||
        (st = hfx_cfg_bool_or(vision, "use_mean_pooling", true, &mean_pooling, err)))
        return st;
    if (strcmp(strategy, "default") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: vision_feature_select_strategy '%s': InternVL's pixel shuffle "
                                                  "places the patches alone (supported: default)", c.where, strategy);
    /* transformers reads last_hidden_state for -1 alone; any other index is a bare hidden state */
    int64_t raw = -1;
    if (hfx_cfg_has(c, "vision_feature_layer") && (st = hfx_cfg_int_or(c, "vision_feature_layer", -1, &raw, err)))
        return st;
    m->final_norm = raw == -1 && !mean_pooling;
    m->drop_first = true;
    return HFX_OK;
}

/* Llama 4's adapter (its pixel shuffle and MLP, in vision_config) and projector. */
static hfx_status parse_llama4(hfx_cfg vision, vlm_cfg *m, hfx_error *err) {
    hfx_status st;
    int64_t out, D = m->vision.cfg.hidden;
    if ((st = shuffle_factor(vision, "pixel_shuffle_ratio", m, err)) ||
        (st = hfx_cfg_int_in_or(vision, "projector_input_dim", 4096, 1, 1 << 20, &m->projector_width, err)) ||
        (st = hfx_cfg_int_in_or(vision, "projector_output_dim", 4096, 1, 1 << 20, &m->adapter_out, err)) ||
        (st = hfx_cfg_int_in_or(vision, "vision_output_dim", 7680, 1, 1 << 20, &out, err)))
        return st;
    if (m->vision.cfg.intermediate != D * m->scale * m->scale || out != m->adapter_out ||
        m->projector_width != m->adapter_out)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the adapter reads the shuffled hidden_size %lld × %lld as "
                                              "intermediate_size (%lld), its fc2 projector_input_dim (%lld) as "
                                              "projector_output_dim (%lld), and the projector that as "
                                              "vision_output_dim (%lld)", vision.where, (long long)D,
                        (long long)(m->scale * m->scale), (long long)m->vision.cfg.intermediate,
                        (long long)m->projector_width, (long long)m->adapter_out, (long long)out);
    return HFX_OK;
}

/* The projector's settings: Gemma 3's pooling, Idefics3's pixel shuffle, InternVL's, LLaVA's MLP over chosen
 * hidden states. */
hfx_status hfx_vlm_parse_projector(const vlm_desc *d, hfx_cfg c, hfx_cfg text, hfx_cfg vision, vlm_cfg *m,
                                   hfx_error *err) {
    hfx_status st;
    const char *strategy;
    if (d->kind == VLM_GEMMA3) { /* AvgPool2d(kernel = stride = side / tokens per side) */
        int64_t side = m->vision.cfg.image / m->vision.cfg.patch, tokens;
        bool bidirectional;
        if ((st = hfx_cfg_int_in_or(c, "mm_tokens_per_image", 256, 1, 1 << 20, &tokens, err)) ||
            (st = hfx_cfg_bool_or(text, "use_bidirectional_attention", false, &bidirectional, err)))
            return st;
        m->tokens_side = (int64_t)(sqrt((double)tokens) + 0.5);
        m->scale = m->tokens_side * m->tokens_side == tokens ? side / m->tokens_side : 0;
        if (!m->scale || side / m->scale != m->tokens_side)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: mm_tokens_per_image %lld is not a square that pooling the vision "
                                                  "tower's %lld × %lld patches gives", c.where, (long long)tokens,
                            (long long)side, (long long)side);
        if (bidirectional)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: use_bidirectional_attention (an embedding model's) is not "
                                                      "a generator hfx exports", text.where);
        return HFX_OK;
    }
    if (d->kind == VLM_PIXTRAL) { /* one layer's states; the projector's activation and biases */
        if (json_is_array(json_object_get(c.obj, "vision_feature_layer")))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: vision_feature_layer as a list: Mistral3's projector norms "
                                                      "one layer's states", c.where);
        if ((st = parse_feature_layers(c, -1, m, err)) || (st = parse_projector_act(c, m, err)))
            return st;
        return hfx_cfg_bool_or(c, "multimodal_projector_bias", false, &m->projector_bias, err);
    }
    if (d->kind == VLM_LLAMA4) return parse_llama4(vision, m, err);
    if (d->kind == VLM_NAFLEX) { /* LFM2-VL's unshuffle and projector */
        if ((st = hfx_naflex_grid(vision, &m->naflex_grid, err)) ||
            (st = hfx_cfg_int_in_or(c, "downsample_factor", 2, 1, 16, &m->scale, err)) ||
            (st = hfx_cfg_int_in_or(c, "projector_hidden_size", 2560, 1, 1 << 20, &m->projector_width, err)) ||
            (st = hfx_cfg_bool_or(c, "projector_bias", true, &m->projector_bias, err)) ||
            (st = hfx_cfg_bool_or(c, "projector_use_layernorm", true, &m->projector_norm, err)))
            return st;
        return parse_projector_act(c, m, err);
    }
    if (d->kind == VLM_PALIGEMMA) { /* projection_dim: the top's, copied into vision_config */
        int64_t proj;
        if ((st = hfx_cfg_int_in_or(c, "projection_dim", m->text.hidden, 1, 1 << 20, &proj, err))) return st;
        if (proj != m->text.hidden)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: projection_dim %lld is not the language model's hidden_size "
                                                  "%lld", c.where, (long long)proj, (long long)m->text.hidden);
        return HFX_OK;
    }
    if (d->kind == VLM_IDEFICS3) {
        int64_t side = m->vision.cfg.image / m->vision.cfg.patch;
        if ((st = hfx_cfg_int_in_or(c, "scale_factor", 2, 1, 64, &m->scale, err))) return st;
        if (side % m->scale)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: scale_factor %lld does not divide the vision tower's %lld × %lld "
                                                  "patches", c.where, (long long)m->scale, (long long)side, (long long)side);
        return HFX_OK;
    }
    if (d->kind == VLM_INTERNVL)
        return (st = parse_internvl(c, vision, m, err)) ? st : parse_projector_act(c, m, err);
    if ((st = parse_feature_layers(c, -2, m, err)) ||
        (st = hfx_cfg_str_or(c, "vision_feature_select_strategy", "default", &strategy, err)) ||
        (st = parse_projector_act(c, m, err)) ||
        (st = hfx_cfg_bool_or(c, "multimodal_projector_bias", true, &m->projector_bias, err)))
        return st;
    if (strcmp(strategy, "default") != 0 && strcmp(strategy, "full") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: vision_feature_select_strategy '%s' (supported: default, full)",
                        c.where, strategy);
    if (m->any_size && (strcmp(strategy, "full") != 0 || m->n_features != 1))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: a Pixtral tower's features are one layer's states of every patch "
                                                  "(vision_feature_select_strategy full, one vision_feature_layer)",
                        c.where);
    m->drop_first = strcmp(strategy, "default") == 0;
    return HFX_OK;
}

/* An audio lineage's tower (audio_config of model_type `type`) and projector. */
hfx_status hfx_vlm_parse_audio(const vlm_desc *d, hfx_cfg c, hfx_cfg audio, const char *type, vlm_cfg *m,
                               hfx_error *err) {
    hfx_status st;
    if ((st = hfx_audio_tower_parse(type, audio, &m->audio, err))) return st;
    m->vision = m->audio.layers;
    m->projector_bias = d->audio == AUDIO_LINEAR;
    m->stack = 1;
    if (d->audio == AUDIO_LINEAR) return HFX_OK;
    if (d->audio == AUDIO_TOWER_MLP) { /* the tower's activation, biases always */
        m->projector_bias = true;
        m->projector_act = m->vision.cfg.act;
        return HFX_OK;
    }
    if ((d->audio == AUDIO_MLP && (st = hfx_cfg_bool_or(c, "projector_bias", true, &m->projector_bias, err))) ||
        (st = parse_projector_act(c, m, err)))
        return st;
    if (d->audio == AUDIO_STACKED_MLP) {
        const hfx_vision_cfg *v = &m->vision.cfg;
        int64_t frames = hfx_audio_tower_frames(&m->audio);
        m->stack = v->intermediate / v->hidden;
        if (v->intermediate % v->hidden || frames % m->stack)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: intermediate_size %lld: the projector reads intermediate_size / "
                                                      "hidden_size (%lld) frames side by side, which must divide the "
                                                      "tower's %lld frames and intermediate_size itself", audio.where,
                            (long long)v->intermediate, (long long)v->hidden, (long long)frames);
    }
    return HFX_OK;
}

static hfx_value *dense(hfx_graph *g, hfx_weights *w, hfx_value *x, int64_t in, int64_t out, bool bias,
                        const char *prefix, const char *name) {
    (void)g;
    return hfx_linear_named(w, x, in, out, bias, "%s.%s", prefix, name);
}

/* The patches x [N, side², D] pixel-shuffled by s (Idefics3's and InternVL's) to [N, side²/s², D·s²]: rows of s
 * patches side by side, then s such rows. */
static hfx_value *pixel_shuffle(const vlm_cfg *m, hfx_graph *g, hfx_value *x) {
    int64_t D = m->vision.cfg.hidden, side = m->vision.cfg.image / m->vision.cfg.patch, s = m->scale;
    hfx_dim N = x->dims[0];
    x = hfx_reshape(g, x, 4, (hfx_dim[]){N, hfx_dim_const(side), hfx_dim_const(side / s), hfx_dim_const(D * s)});
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 1, 3}); /* [N, side/s, side, D·s] */
    x = hfx_reshape(g, x, 4, (hfx_dim[]){N, hfx_dim_const(side / s), hfx_dim_const(side / s), hfx_dim_const(D * s * s)});
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 1, 3});
    return hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(side * side / (s * s)), hfx_dim_const(D * s * s)});
}

/* Idefics3's features of the tower's last state x [N, T, D] (post-normed): pixel-shuffled and projected. */
static hfx_value *pixel_shuffle_features(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, const vlm_names *names,
                                         hfx_value *x) {
    int64_t in = m->vision.cfg.hidden * m->scale * m->scale;
    return dense(g, w, pixel_shuffle(m, g, x), in, m->text.hidden, false, names->projector, "modality_projection.proj");
}

/* InternVL's features of pixels [N, C, S, S] (parse_internvl's choice of state), through its projector:
 * [N, side²/s², text hidden]. */
static hfx_value *internvl_features(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, const vlm_names *names,
                                    const char *tower, hfx_value *pixels) {
    int64_t upto = m->feature_layers[0], in = m->vision.cfg.hidden * m->scale * m->scale, out = m->text.hidden;
    char n[256];
    hfx_value *x = hfx_vision_tower_states(&m->vision, g, w, tower, pixels, upto, NULL);
    if (g->failed) return x;
    int64_t D = m->vision.cfg.hidden;
    snprintf(n, sizeof n, "%slayernorm", tower);
    if (m->final_norm) /* a LayerNorm whatever the layers' norm_type */
        x = hfx_layer_norm_named(w, x, D, m->vision.cfg.eps, "%s", n);
    else
        hfx_vision_tower_skip_rest(&m->vision, w, tower, upto);
    x = pixel_shuffle(m, g, hfx_slice(g, x, 1, 1, INT64_MAX));
    snprintf(n, sizeof n, "%s.layer_norm", names->projector);
    x = hfx_layer_norm_named(w, x, in, 1e-5, "%s", n);
    x = dense(g, w, x, in, out, true, names->projector, "linear_1");
    return dense(g, w, hfx_activate(g, m->projector_act, x), out, out, true, names->projector, "linear_2");
}

/* Gemma 3's features of the tower's last state x [N, side², D] (post-normed): each k × k square of
 * patches averaged (AvgPool2d, kernel = stride = k, the rows and columns past t·k dropped) into
 * t × t tokens, Gemma's RMSNorm (1 + w) at the tower's eps, times the projection [D, text hidden]. */
static hfx_value *pooled_features(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, const vlm_names *names,
                                  hfx_value *x) {
    int64_t D = m->vision.cfg.hidden, side = m->vision.cfg.image / m->vision.cfg.patch, k = m->scale,
            t = m->tokens_side;
    hfx_dim N = x->dims[0];
    x = hfx_reshape(g, x, 4, (hfx_dim[]){N, hfx_dim_const(side), hfx_dim_const(side), hfx_dim_const(D)});
    if (t * k != side) x = hfx_slice(g, hfx_slice(g, x, 1, 0, t * k), 2, 0, t * k);
    x = hfx_reshape(g, x, 6, (hfx_dim[]){N, hfx_dim_const(t), hfx_dim_const(k), hfx_dim_const(t), hfx_dim_const(k),
                                         hfx_dim_const(D)});
    x = hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 2, (int64_t[]){2, 4}); /* [N,t,1,t,1,D] */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(t * t), hfx_dim_const(D)});
    char n[160];
    snprintf(n, sizeof n, "%s.mm_soft_emb_norm.weight", names->projector);
    x = hfx_rms_norm(g, x, hfx_weight(w, 1, &D, "%s", n), m->vision.cfg.eps, 1.0);
    snprintf(n, sizeof n, "%s.mm_input_projection_weight", names->projector);
    hfx_value *proj = hfx_weight(w, 2, (int64_t[]){D, m->text.hidden}, "%s", n);
    return hfx_linear(g, x, hfx_const_transpose2d(g, proj), NULL);
}

/* Llama 4's features of tiles [N, C, S, S]: the tower's last state post-normed, the class token (last) dropped, the
 * pixel shuffle, the adapter (fc1 → GELU → fc2 → GELU, unbiased), the projector's linear: [N, side²/s², text hidden]. */
static hfx_value *llama4_features(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, const vlm_names *names,
                                  const char *tower, hfx_value *pixels) {
    const hfx_vision_cfg *v = &m->vision.cfg;
    int64_t in = v->intermediate, mid = m->projector_width, out = m->adapter_out, side = v->image / v->patch;
    char n[256];
    hfx_value *x = hfx_vision_tower_states(&m->vision, g, w, tower, pixels, v->layers, NULL);
    if (g->failed) return x;
    snprintf(n, sizeof n, "%slayernorm_post", tower);
    x = pixel_shuffle(m, g, hfx_slice(g, hfx_vision_norm(&m->vision, g, w, n, x), 1, 0, side * side));
    snprintf(n, sizeof n, "%svision_adapter.mlp", tower);
    x = hfx_activate(g, HFX_ACT_GELU, dense(g, w, x, in, mid, false, n, "fc1"));
    x = hfx_activate(g, HFX_ACT_GELU, dense(g, w, x, mid, out, false, n, "fc2")); /* (mid = out: parse_projector) */
    return dense(g, w, x, out, m->text.hidden, false, names->projector, "linear_1");
}

/* Mistral3's features of a grid of Pixtral patches: the chosen layer's states [N, E], RMS-normed, each merge² block's
 * side by side channel-major ([tokens, E, merge²], as torch's unfold lays them out), merged, projected; LLaVA's
 * (Pixtral-12B's): those states through LLaVA's projector, every patch a token. */
static hfx_value *pixtral_features(const vlm_desc *d, const vlm_cfg *m, hfx_graph *g, hfx_weights *w,
                                   const vlm_names *names, const char *tower, hfx_value *pixels, hfx_value *grid) {
    int64_t E = m->vision.cfg.hidden, mm = m->grid.merge * m->grid.merge, out = m->text.hidden;
    hfx_dim tokens;
    hfx_value *x = hfx_grid_tower_states(&m->grid, g, w, tower, pixels, grid, m->feature_layers[0], &tokens);
    if (g->failed) return NULL;
    if (d->kind == VLM_LLAVA) { /* Pixtral-12B's: LLaVA's projector over every patch's states */
        x = dense(g, w, x, E, out, m->projector_bias, names->projector, "linear_1");
        return dense(g, w, hfx_activate(g, m->projector_act, x), out, out, m->projector_bias, names->projector,
                     "linear_2");
    }
    char n[256];
    snprintf(n, sizeof n, "%s.norm.weight", names->projector);
    x = hfx_rms_norm(g, x, hfx_weight(w, 1, &E, "%s", n), m->projector_eps, 0.0);
    x = hfx_reshape(g, x, 3, (hfx_dim[]){tokens, hfx_dim_const(mm), hfx_dim_const(E)});
    x = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1});
    x = hfx_reshape(g, x, 2, (hfx_dim[]){tokens, hfx_dim_const(E * mm)});
    x = dense(g, w, x, E * mm, E, false, names->projector, "patch_merger.merging_layer");
    x = dense(g, w, x, E, out, m->projector_bias, names->projector, "linear_1");
    return dense(g, w, hfx_activate(g, m->projector_act, x), out, out, m->projector_bias, names->projector, "linear_2");
}

/* LFM2-VL's tokens of each image: for token t of an image of h × w patches (w / f tokens a row), its f × f block of
 * patches (rows t / (w/f)·f + i, columns t mod (w/f)·f + j), gathered row by row into [N, T, f²·D] (T = P / f²) over
 * the NaFlex states x [N, P, D]; tokens past the image's (h/f)·(w/f) read its first patch (the caller drops them, as
 * transformers does). *lengths [N] i64: each image's tokens. */
static hfx_value *unshuffled(const vlm_cfg *m, hfx_graph *g, hfx_value *x, hfx_value *shapes, hfx_value **lengths) {
    int64_t f = m->scale, D = m->vision.cfg.hidden;
    hfx_dim N = x->dims[0], P = x->dims[1];
    hfx_dim T = hfx_dim_is_const(P) ? hfx_dim_const(P.c / (f * f))
                                    : hfx_dim_sym(hfx_graph_symbol_derived(g, "num_image_tokens", P, f * f, 0));
    hfx_value *fv = hfx_const_i64(g, f), *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
    hfx_value *h = hfx_slice(g, shapes, 1, 0, 1), *w = hfx_slice(g, shapes, 1, 1, 2); /* [N,1] */
    hfx_value *per_row = hfx_op2(g, HFX_OP_DIV, w, fv);
    *lengths = hfx_reshape(g, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, h, fv), per_row), 1, &N);
    hfx_value *t = hfx_unsqueeze(g, hfx_range(g, zero, hfx_op2(g, HFX_OP_DIV, hfx_dim_of(g, x, 1), hfx_const_i64(g, f * f)),
                                              one, T), 0);                                           /* [1,T] */
    hfx_value *top = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, t, per_row), fv);                  /* [N,T] */
    hfx_value *left = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_SUB, t, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, t, per_row),
                                                                                per_row)), fv);
    hfx_value *offset = hfx_range(g, zero, fv, one, hfx_dim_const(f));                                /* [f] */
    hfx_value *rows = hfx_op2(g, HFX_OP_ADD, hfx_unsqueeze(g, hfx_unsqueeze(g, top, 2), 3),
                              hfx_reshape(g, offset, 4, (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(1), hfx_dim_const(f),
                                                                    hfx_dim_const(1)}));             /* [N,T,f,1] */
    hfx_value *cols = hfx_op2(g, HFX_OP_ADD, hfx_unsqueeze(g, hfx_unsqueeze(g, left, 2), 3), offset); /* [N,T,1,f] */
    hfx_value *index = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, rows, hfx_unsqueeze(g, hfx_unsqueeze(g, w, 2), 3)),
                               cols);                                                                 /* [N,T,f,f] */
    hfx_value *real = hfx_op2(g, HFX_OP_LESS, t, hfx_unsqueeze(g, *lengths, 1));                      /* [N,T] */
    index = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, real, 2), 3), index, zero);
    /* the patches along each image's own axis: gather_elements over [N, T·f², D] */
    hfx_dim TF = hfx_dim_scale(T, f * f);
    index = hfx_unsqueeze(g, hfx_reshape(g, index, 2, (hfx_dim[]){N, TF}), 2); /* [N,T·f²,1] */
    hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, index, 0), 0),
                                                         hfx_unsqueeze(g, hfx_dim_of(g, index, 1), 0),
                                                         hfx_unsqueeze(g, hfx_const_i64(g, D), 0)}, 0);
    index = hfx_expand(g, index, shape, 3, (hfx_dim[]){N, TF, hfx_dim_const(D)});
    hfx_value *picked = hfx_gather_elements(g, x, index, 1);
    return hfx_reshape(g, picked, 3, (hfx_dim[]){N, T, hfx_dim_const(f * f * D)});
}

/* x [N, T, D] whose image n has its own rows first, lengths[n] of them → [Σ lengths, D], image after image: row j is
 * image i's (the images that end at or before j) row j − start(i) */
static hfx_value *real_rows(hfx_graph *g, hfx_value *x, hfx_value *lengths, int64_t D) {
    int64_t axis = 0;
    hfx_value *total = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, lengths, 1, &axis), 0, NULL);
    hfx_dim S = hfx_dim_sym(hfx_graph_symbol(g, "num_image_tokens", 1, INT32_MAX));
    hfx_value *j = hfx_range(g, hfx_const_i64(g, 0), total, hfx_const_i64(g, 1), S);               /* [S] */
    hfx_value *within, *image = hfx_segment_of(g, j, lengths, &within);
    hfx_value *row = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, image, hfx_dim_of(g, x, 1)), within); /* [S] */
    hfx_dim rows = hfx_dim_sym(hfx_graph_symbol(g, "num_padded_tokens", 1, INT32_MAX));
    return hfx_gather(g, hfx_reshape(g, x, 2, (hfx_dim[]){rows, hfx_dim_const(D)}), row, 0);
}

/* A padded image encoder's outputs: image_features [N, T, D] and image_feature_lengths [N]; in OpenVINO's stateful
 * layout (optimum-intel's, which GenAI's VLMPipeline reads: one output, the features it scatters) image_features
 * [num_image_tokens, D], the real rows alone, image after image */
static void padded_outputs(const hfx_build_opts *o, hfx_graph *g, hfx_value *x, hfx_value *lengths, int64_t D) {
    if (o->stateful) {
        hfx_graph_output(g, real_rows(g, x, lengths, D), "image_features");
        return;
    }
    hfx_graph_output(g, x, "image_features");
    hfx_graph_output(g, lengths, "image_feature_lengths");
}

/* Gemma 4's image encoder: pixel_values [N, P, 3·patch²] and image_position_ids [N, P, 2] → image_features [N, P/k²,
 * text hidden] and image_feature_lengths [N] (each image's real tokens, first; padded_outputs' form), the pooled
 * tokens through the embedder's weight-less RMSNorm and its projection. */
static void build_gemma4_encoder(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                 const vlm_names *names, const char *tower) {
    const hfx_gemma4_vision *t = &m->gemma4;
    hfx_dim N = hfx_dim_sym(hfx_graph_symbol(g, "num_images", 1, INT32_MAX));
    hfx_dim P = hfx_dim_sym(hfx_graph_symbol(g, "num_patches", 1, INT32_MAX));
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 3,
                                        (hfx_dim[]){N, P, hfx_dim_const(3 * t->patch * t->patch)});
    hfx_value *positions = hfx_graph_input(g, "image_position_ids", HFX_DTYPE_I64, 3, (hfx_dim[]){N, P, hfx_dim_const(2)});
    hfx_value *lengths = NULL, *x = hfx_gemma4_vision_tower(t, g, w, tower, pixels, positions, &lengths);
    if (g->failed) return;
    x = dense(g, w, hfx_rms_plain(g, x, t->eps), t->hidden, m->text.hidden, false, names->projector,
              "embedding_projection");
    padded_outputs(o, g, x, lengths, m->text.hidden);
}

void hfx_vlm_build_gemma4_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w) {
    const hfx_usm_audio *t = &m->usm_audio;
    hfx_dim T = hfx_dim_sym(hfx_graph_symbol(g, "audio_frames", 1, INT32_MAX));
    hfx_value *features = hfx_graph_input(g, "input_features", o->dtype, 3, (hfx_dim[]){o->batch, T, hfx_dim_const(t->mels)});
    hfx_value *mask = hfx_graph_input(g, "input_features_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, T});
    hfx_value *real = NULL, *x = hfx_usm_audio_tower(t, g, w, "model.audio_tower.", features, mask, &real);
    if (g->failed) return;
    hfx_value *lengths = hfx_usm_real_frames(g, real);
    x = dense(g, w, hfx_rms_plain(g, x, t->eps), t->out, m->text.hidden, false, "model.embed_audio", "embedding_projection");
    hfx_graph_output(g, x, "audio_features");
    hfx_graph_output(g, lengths, "audio_feature_lengths");
}

/* LFM2-VL's image encoder: pixel_values [N, P, C·p²], pixel_attention_mask [N, P], spatial_shapes [N, 2] →
 * image_features [N, P / f², text hidden] and image_feature_lengths [N] (each image's real tokens, first;
 * padded_outputs' form). */
static void build_naflex_encoder(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                 const vlm_names *names, const char *tower) {
    const hfx_vision_cfg *v = &m->vision.cfg;
    int64_t f = m->scale, in = v->hidden * f * f, mid = m->projector_width, out = m->text.hidden;
    hfx_dim N = hfx_dim_sym(hfx_graph_symbol(g, "num_images", 1, INT32_MAX));
    hfx_dim P = hfx_dim_sym(hfx_graph_symbol(g, "num_patches", 1, INT32_MAX));
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 3,
                                        (hfx_dim[]){N, P, hfx_dim_const(v->channels * v->patch * v->patch)});
    hfx_value *mask = hfx_graph_input(g, "pixel_attention_mask", HFX_DTYPE_I32, 2, (hfx_dim[]){N, P});
    hfx_value *shapes = hfx_graph_input(g, "spatial_shapes", HFX_DTYPE_I64, 2, (hfx_dim[]){N, hfx_dim_const(2)});
    hfx_value *x = hfx_naflex_tower(&m->vision, m->naflex_grid, g, w, tower, pixels, mask, shapes, NULL);
    char n[256];
    snprintf(n, sizeof n, "%shead", tower); /* the pooling head, where vision_use_head built one: unread */
    hfx_weights_ignore_stack(w, n);
    if (g->failed) return;
    hfx_value *lengths;
    x = unshuffled(m, g, x, shapes, &lengths);
    snprintf(n, sizeof n, "%s.layer_norm", names->projector);
    if (m->projector_norm)
        x = hfx_layer_norm_named(w, x, in, 1e-5, "%s", n);
    x = dense(g, w, x, in, mid, m->projector_bias, names->projector, "linear_1");
    x = dense(g, w, hfx_activate(g, m->projector_act, x), mid, out, m->projector_bias, names->projector, "linear_2");
    padded_outputs(o, g, x, lengths, out);
}

/* input_features [N, mels, 2·positions] (and the feature mask) → audio_features [N, tokens, text hidden] (and
 * audio_feature_lengths [N]): the tower's last state through the lineage's projector. */
static void build_audio_encoder(const vlm_desc *d, const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g,
                                hfx_weights *w, const vlm_names *names, const char *tower) {
    int64_t D = m->vision.cfg.hidden, out = m->text.hidden, in = D * m->stack;
    hfx_value *features, *mask, *lengths = NULL;
    hfx_audio_tower_inputs(&m->audio, g, o->batch, o->dtype, d->feature_mask, &features, &mask);
    hfx_value *x = hfx_audio_tower_states(&m->audio, g, w, tower, features, mask, &lengths);
    if (g->failed) return;
    if (m->stack > 1) { /* consecutive frames side by side: [N, frames/stack, D·stack] */
        int64_t tokens = hfx_audio_tower_frames(&m->audio) / m->stack;
        x = hfx_reshape(g, x, 3, (hfx_dim[]){x->dims[0], hfx_dim_const(tokens), hfx_dim_const(in)});
    }
    if (d->audio == AUDIO_LINEAR) {
        x = dense(g, w, x, D, out, true, names->projector, "linear");
    } else { /* (Qwen3-ASR's first linear keeps the tower's width) */
        int64_t mid = d->audio == AUDIO_TOWER_MLP ? D : out;
        x = dense(g, w, x, in, mid, m->projector_bias, names->projector, "linear_1");
        x = dense(g, w, hfx_activate(g, m->projector_act, x), mid, out, m->projector_bias, names->projector, "linear_2");
    }
    hfx_graph_output(g, x, "audio_features");
    if (lengths) hfx_graph_output(g, lengths, "audio_feature_lengths");
}

bool hfx_vlm_grid_part(const char *component) { return strncmp(component, "vision_embeddings", 17) == 0; }

/* The Qwen-VL lineages' towers as optimum-intel splits them (OpenVINO GenAI's VLMPipeline reads the graphs):
 * component "vision_embeddings", hidden_states [num_patches, C·T·P·P] (the pixel rows) → last_hidden_state
 * [num_patches, hidden], the patch embedding; Qwen3-VL's "vision_embeddings_pos", input [4, num_patches] i64 (each
 * patch's four bilinear taps) → [4, num_patches, hidden] of the learned position table; "vision_embeddings_merger",
 * hidden_states [num_patches, hidden], attention_mask [1, N, N] f32, (with windows: window_attention_mask [1, N, N]
 * f32, window_index [num_image_tokens] i64,) rotary_pos_emb [N, head / 2] f32 → last_hidden_state [num_image_tokens,
 * text hidden] (and DeepStack's deepstack_feature_lists [n, num_image_tokens, text hidden]); vision_grid.h's
 * hfx_grid_parts says what each holds. The tower under `tower`; failures are the graph's. */
static void build_grid_part(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w, const char *tower,
                            const char *component) {
    const hfx_grid_tower *t = &m->grid;
    const hfx_vision_cfg *v = &t->tower.cfg;
    hfx_dim n = hfx_dim_sym(hfx_graph_symbol(g, "num_patches", 1, INT32_MAX));
    if (strcmp(component, "vision_embeddings_merger") != 0) { /* (the merger's graph reads the rest) */
        bool pos = strcmp(component, "vision_embeddings_pos") == 0;
        int64_t row = v->channels * t->temporal * v->patch * v->patch;
        hfx_value *x = pos ? hfx_graph_input(g, "input", HFX_DTYPE_I64, 2, (hfx_dim[]){hfx_dim_const(4), n})
                           : hfx_graph_input(g, "hidden_states", o->dtype, 2, (hfx_dim[]){n, hfx_dim_const(row)});
        hfx_graph_output(g, pos ? hfx_grid_tower_position_table(t, g, w, tower, x) : hfx_grid_tower_patches(t, g, w, tower, x),
                         pos ? "position_embeddings" : "last_hidden_state");
        hfx_weights_ignore_rest(w);
        return;
    }
    char other[256];
    snprintf(other, sizeof other, "%s%s", tower, hfx_vision_patch_name(&t->tower));
    hfx_weights_ignore_stack(w, other); /* (the patch embedding's graph reads it, and the position table's its own) */
    snprintf(other, sizeof other, "%spos_embed", tower);
    hfx_weights_ignore_stack(w, other);
    hfx_dim square[3] = {hfx_dim_const(1), n, n};
    hfx_grid_parts in = {0};
    in.states = hfx_graph_input(g, "hidden_states", o->dtype, 2, (hfx_dim[]){n, hfx_dim_const(v->hidden)});
    in.mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_F32, 3, square);
    if (t->window) {
        hfx_dim tokens = hfx_dim_sym(hfx_graph_symbol(g, "num_image_tokens", 1, INT32_MAX));
        in.window_mask = hfx_graph_input(g, "window_attention_mask", HFX_DTYPE_F32, 3, square);
        in.window_index = hfx_graph_input(g, "window_index", HFX_DTYPE_I64, 1, &tokens);
    }
    int64_t half = v->hidden / v->heads / 2;
    in.rotary = hfx_graph_input(g, "rotary_pos_emb", HFX_DTYPE_F32, 2, (hfx_dim[]){n, hfx_dim_const(half)});
    hfx_value *stacked = NULL;
    hfx_value *x = hfx_grid_tower_merged_parts(t, g, w, tower, &in, (int)m->deepstack, &stacked);
    if (x) hfx_graph_output(g, x, "last_hidden_state");
    if (x && stacked) hfx_graph_output(g, stacked, "deepstack_feature_lists");
}

/* LLaVA-Next's image_newline [n] as config.json's "image_newline": a list of its values (each as many digits as
 * bring its float back), where optimum-intel writes it and GenAI's VLMPipeline reads it; failures are the graph's */
static void newline_in_config(hfx_graph *g, hfx_weights *w, const char *name, int64_t n) {
    float *v = malloc((size_t)n * sizeof *v);
    char *text = malloc((size_t)n * 18 + 3); /* "[", n × ("-d.dddddddde-dd" + ", "), "]" */
    if (!v || !text) hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
    else if (hfx_weight_float_values(w, n, v, name)) {
        size_t at = 0;
        text[at++] = '[';
        for (int64_t i = 0; i < n && isfinite(v[i]); i++)
            at += (size_t)snprintf(text + at, 18, "%s%.9g", i ? ", " : "", (double)v[i]);
        snprintf(text + at, 2, "]");
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(v[i])) {
                hfx_graph_fail(g, HFX_ERR_INVALID, "%s: tensor '%s' element %lld is not finite (config.json cannot "
                               "hold it)", hfx_checkpoint_dir(w->ck), name, (long long)i);
                break;
            }
        hfx_graph_add_config(g, "image_newline", text);
    }
    free(v);
    free(text);
}

/* pixel_values → image_features [N, tokens, text hidden], as the lineage makes them (vlm_kind); a
 * grid tower's: pixel_values [num_patches, ·] and image_grid_thw → [num_image_tokens, text hidden]. */
static void build_image_encoder(const vlm_desc *d, const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g,
                                hfx_weights *w, const vlm_names *names, const char *tower) {
    const hfx_vision_cfg *v = &m->vision.cfg;
    if (d->kind == VLM_GRID && o->component && hfx_vlm_grid_part(o->component)) {
        build_grid_part(m, o, g, w, tower, o->component);
        return;
    }
    if (d->kind == VLM_GRID || d->kind == VLM_PIXTRAL || m->any_size) {
        int64_t row = v->channels * (m->grid.temporal ? m->grid.temporal : 1) * v->patch * v->patch;
        hfx_dim patches = hfx_dim_sym(hfx_graph_symbol(g, "num_patches", 1, INT32_MAX));
        hfx_dim images = hfx_dim_sym(hfx_graph_symbol(g, "num_images", 1, INT32_MAX));
        hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 2, (hfx_dim[]){patches, hfx_dim_const(row)});
        hfx_value *grid = hfx_graph_input(g, "image_grid_thw", HFX_DTYPE_I64, 2, (hfx_dim[]){images, hfx_dim_const(3)});
        hfx_value *stacked = NULL;
        hfx_value *x = d->kind != VLM_GRID ? pixtral_features(d, m, g, w, names, tower, pixels, grid)
                                              : hfx_grid_tower_features(&m->grid, g, w, tower, pixels, grid,
                                                                        (int)m->deepstack, &stacked);
        if (x) hfx_graph_output(g, x, "image_features");
        if (x && stacked) hfx_graph_output(g, stacked, "deepstack_features"); /* [n, tokens, text hidden] */
        return;
    }
    if (d->kind == VLM_NAFLEX) {
        build_naflex_encoder(m, o, g, w, names, tower);
        return;
    }
    if (d->kind == VLM_GEMMA4) {
        build_gemma4_encoder(m, o, g, w, names, tower);
        return;
    }
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 4,
                                        (hfx_dim[]){o->batch, hfx_dim_const(v->channels), hfx_dim_const(v->image),
                                                    hfx_dim_const(v->image)});
    if (d->kind == VLM_LLAMA4 || d->kind == VLM_INTERNVL) {
        hfx_value *x = d->kind == VLM_LLAMA4 ? llama4_features(m, g, w, names, tower, pixels)
                                             : internvl_features(m, g, w, names, tower, pixels);
        if (!g->failed) hfx_graph_output(g, x, "image_features");
        return;
    }
    if (d->kind != VLM_LLAVA) { /* the tower's post-normed last state */
        char n[256];
        hfx_value *last = hfx_vision_tower_states(&m->vision, g, w, tower, pixels, v->layers, NULL);
        if (g->failed) return;
        snprintf(n, sizeof n, "%spost_layernorm", tower);
        hfx_value *x = hfx_vision_norm(&m->vision, g, w, n, last);
        x = d->kind == VLM_IDEFICS3 ? pixel_shuffle_features(m, g, w, names, x)
            : d->kind == VLM_GEMMA3 ? pooled_features(m, g, w, names, x)
                                    : dense(g, w, x, v->hidden, m->text.hidden, true, names->projector, "linear");
        snprintf(n, sizeof n, "%shead", tower); /* SigLIP's pooling head, where vision_use_head built one: unread */
        hfx_weights_ignore_stack(w, n);
        hfx_graph_output(g, x, "image_features");
        return;
    }
    int64_t upto = 0;
    hfx_value *states[4097] = {0}; /* hidden_states: layers ≤ 4096 (vision.c) */
    for (int i = 0; i < m->n_features; i++) upto = m->feature_layers[i] > upto ? m->feature_layers[i] : upto;
    hfx_vision_tower_states(&m->vision, g, w, tower, pixels, upto, states);
    if (g->failed) return;
    hfx_value *picked[MAX_FEATURE_LAYERS];
    for (int i = 0; i < m->n_features; i++) {
        picked[i] = states[m->feature_layers[i]];
        if (m->drop_first) picked[i] = hfx_slice(g, picked[i], 1, 1, INT64_MAX);
    }
    hfx_value *x = m->n_features == 1 ? picked[0] : hfx_concat(g, m->n_features, picked, 2);
    int64_t in = v->hidden * m->n_features, out = m->text.hidden;
    x = dense(g, w, x, in, out, m->projector_bias, names->projector, "linear_1");
    x = dense(g, w, hfx_activate(g, m->projector_act, x), out, out, m->projector_bias, names->projector, "linear_2");
    hfx_graph_output(g, x, "image_features");
    if (names->newline && o->stateful) /* (optimum-intel's form, which GenAI's VLMPipeline reads) */
        newline_in_config(g, w, names->newline, out);
    else if (names->newline) /* LLaVA-Next's: what the caller puts after each row of an image's tiles (× 1: a node's
                                output, as a graph's outputs are, not the weight itself) */
        hfx_graph_output(g, hfx_op2(g, HFX_OP_MUL, hfx_weight(w, 1, &out, "%s", names->newline),
                                    hfx_const_scalar(g, w->dtype, 1.0)), "image_newline");
    /* the tower's layers past the last one picked and its post-norm feed nothing, as in transformers */
    hfx_vision_tower_skip_rest(&m->vision, w, tower, upto);
}

/* Granite Speech's audio encoder: input_features [N, T, input_dim] → audio_features [N, tokens, text hidden], every
 * clip's windows (the caller keeps each clip's real tokens, as the processor's input_features_mask says). */
static void build_granite_encoder(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                  const vlm_names *names, const char *tower) {
    hfx_dim T = hfx_dim_sym(hfx_graph_symbol(g, "audio_frames", 1, INT32_MAX));
    hfx_value *features = hfx_graph_input(g, "input_features", o->dtype, 3,
                                          (hfx_dim[]){o->batch, T, hfx_dim_const(m->granite.input_dim)});
    const char *projector = hfx_arena_printf(g->arena, "%s.", names->projector);
    if (!projector) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return;
    }
    hfx_value *x = hfx_granite_speech_tower(&m->granite, g, w, tower, projector, features, m->text.hidden);
    if (!g->failed) hfx_graph_output(g, x, "audio_features");
}

void hfx_vlm_build_encoder(const vlm_desc *d, const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                           const vlm_names *names, const char *tower) {
    if (d->kind == VLM_AUDIO) build_audio_encoder(d, m, o, g, w, names, tower);
    else if (d->kind == VLM_GRANITE_SPEECH) build_granite_encoder(m, o, g, w, names, tower);
    else build_image_encoder(d, m, o, g, w, names, tower);
}
