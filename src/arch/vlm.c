/* The vision-language family: a vision tower (vision.c's), a projector into the language model's
 * width, and a decoder-only language model (decoder.c's template, the descriptor its text_config's
 * model_type names). The merge of image features into the text — transformers' masked_scatter over
 * the image token's positions — stays with the caller, as in the Python system's split, so every
 * graph has fixed-rank inputs:
 *
 *   image_encoder  pixel_values [N, C, S, S] → image_features [N, tokens, text hidden]
 *   embed_tokens   input_ids [B, S] → inputs_embeds [B, S, text hidden]
 *   decode         inputs_embeds (the text's, image features written over the image tokens'),
 *                  attention_mask, position_ids and the cache → logits and the cache
 *                  (and `prefill` before a one-token decode, as a causal LM's)
 *
 * A descriptor per model says where its parts are (vlm_names: the Hub's and transformers 5's tensor
 * names) and how its lineage makes features (vlm_kind, vlm.h; each lineage's encoder and projector in
 * vlm_encoders.c): LLaVA's chosen hidden states and MLP (LLaVA-Next's tiles too), Idefics3's (SmolVLM's) and
 * InternVL's pixel shuffle, Gemma 3's average pool, PaliGemma's linear, the grid towers of Qwen2-VL's lineage and
 * Mistral3, LFM2-VL's NaFlex tiles, Llama 4's adapter. Gemma 3's and PaliGemma's language models also take
 * token_type_ids (mask.c's blocks).
 *
 * Audio language models (Qwen2-Audio, Voxtral, Audio Flamingo 3) are the same split with an audio tower
 * (audio_tower.c) in the encoder's place, their own family for the component's name:
 *
 *   audio_encoder  input_features [N, mels, frames] (and the feature mask where the lineage reads one)
 *                  → audio_features [N, tokens, text hidden] (and audio_feature_lengths [N]: each clip's
 *                  real tokens, the first of its row, which the caller writes over the audio tokens) */
#include <stdio.h>
#include <string.h>

#include "arch/vlm.h"
#include "base/status.h"

static const vlm_names llava_hub = {
    {"vision_tower.vision_model.", "vision_tower."}, "multi_modal_projector",
    {{"model.", "language_model.model."}, {"lm_head.", "language_model.lm_head."}},
    {"vision_tower", "multi_modal_projector", "language_model"}, NULL};
/* Llama 4: the Hub's names are transformers 5's (its model holds the three parts at the top) */
static const vlm_names llama4_hub = {
    {"vision_model."}, "multi_modal_projector",
    {{"model.", "language_model.model."}, {"lm_head.", "language_model.lm_head."}},
    {"vision_model", "multi_modal_projector", "language_model"}, NULL};
static const vlm_names llava_v5 = {
    {"model.vision_tower.vision_model.", "model.vision_tower."}, "model.multi_modal_projector",
    {{"model.", "model.language_model."}},
    {"model.vision_tower", "model.multi_modal_projector", "model.language_model", "lm_head"}, NULL};
/* LLaVA-Next: LLaVA's names and the newline vector */
static const vlm_names llava_next_hub = {
    {"vision_tower.vision_model.", "vision_tower."}, "multi_modal_projector",
    {{"model.", "language_model.model."}, {"lm_head.", "language_model.lm_head."}},
    {"vision_tower", "multi_modal_projector", "language_model"}, "image_newline"};
static const vlm_names llava_next_v5 = {
    {"model.vision_tower.vision_model.", "model.vision_tower."}, "model.multi_modal_projector",
    {{"model.", "model.language_model."}},
    {"model.vision_tower", "model.multi_modal_projector", "model.language_model", "lm_head"}, "model.image_newline"};
/* Gemma 4 and Gemma 3n: transformers 5's names (the Hub's are the same) */
static const vlm_names gemma_v5 = {
    {"model.vision_tower."}, "model.embed_vision", {{"model.", "model.language_model."}},
    {"model.vision_tower", "model.embed_vision", "model.language_model", "lm_head"}, NULL};

/* Phi-4-multimodal: the text model's names are the decoder's own */
static const vlm_names phi4mm = {{"model.embed_tokens_extend.image_embed.img_processor."}, NULL, {{NULL, NULL}},
                                 {"model.embed_tokens_extend.image_embed", NULL, "model", "lm_head"}, NULL};

/* The audio lineages' names: the Hub's, transformers 5's */
static const vlm_names audio_hub = {
    {"audio_tower."}, "multi_modal_projector",
    {{"model.", "language_model.model."}, {"lm_head.", "language_model.lm_head."}},
    {"audio_tower", "multi_modal_projector", "language_model"}, NULL};
static const vlm_names audio_v5 = {
    {"model.audio_tower."}, "model.multi_modal_projector", {{"model.", "model.language_model."}},
    {"model.audio_tower", "model.multi_modal_projector", "model.language_model", "lm_head"}, NULL};

/* Granite Speech: the Hub's (transformers 4's), transformers 5's */
static const vlm_names granite_speech_hub = {
    {"encoder."}, "projector", {{"model.", "language_model.model."}, {"lm_head.", "language_model.lm_head."}},
    {"encoder", "projector", "language_model"}, NULL};
static const vlm_names granite_speech_v5 = {
    {"model.encoder."}, "model.projector", {{"model.", "model.language_model."}},
    {"model.encoder", "model.projector", "model.language_model", "lm_head"}, NULL};

/* Idefics3 and SmolVLM: the Hub's names are transformers 5's */
static const vlm_names idefics3_hub = {
    {"model.vision_model."}, "model.connector", {{"model.", "model.text_model."}},
    {"model.vision_model", "model.connector", "model.text_model", "lm_head"}, NULL};

/* Qwen2-VL and Qwen2.5-VL: the Hub's names (the language model's are the decoder's own), then
 * transformers 5's; the merger is inside the tower */
static const vlm_names qwen2_vl_hub = {{"visual."}, NULL, {{NULL, NULL}}, {"visual", NULL, "model", "lm_head"}, NULL};
static const vlm_names qwen2_vl_v5 = {
    {"model.visual."}, NULL, {{"model.", "model.language_model."}},
    {"model.visual", NULL, "model.language_model", "lm_head"}, NULL};

/* Gemma 4's vision encoder, its audio encoder where the config has one (E2B's, E4B's), its media tokens and how its
 * language model sees the images */
static hfx_status gemma4_parse(hfx_cfg c, hfx_cfg text, hfx_cfg vision, hfx_arena *arena, vlm_cfg *m, hfx_error *err) {
    const json_t *audio = json_object_get(c.obj, "audio_config");
    const char *both_ways;
    hfx_status st;
    m->has_audio = audio && !json_is_null(audio);
    if (m->has_audio) {
        hfx_cfg ac;
        if ((st = hfx_cfg_object(c, "audio_config", arena, &ac, err)) ||
            (st = hfx_usm_audio_parse(HFX_USM_GEMMA4, ac, &m->usm_audio, err)))
            return st;
    }
    if ((st = hfx_gemma4_vision_parse(vision, &m->gemma4, err)) ||
        (st = hfx_cfg_str_or(text, "use_bidirectional_attention", "none", &both_ways, err)))
        return st;
    m->vision_blocks = strcmp(both_ways, "vision") == 0;
    /* its forward embeds the media tokens as the pad token (a generated one too) */
    static const char *const media[3] = {"image_token_id", "video_token_id", "audio_token_id"};
    static const int64_t defaults[3] = {258880, 258884, 258881};
    for (int k = 0; k < 3; k++)
        if ((st = hfx_cfg_int_in_or(c, media[k], defaults[k], 0, INT64_MAX, &m->placeholders[k], err))) return st;
    m->n_placeholders = 3;
    if ((st = hfx_cfg_int_in_or(text, "pad_token_id", 0, 0, m->text.vocab - 1, &m->pad_id, err))) return st;
    m->vision.cfg.hidden = m->gemma4.hidden, m->vision.cfg.layers = m->gemma4.layers;
    m->vision.cfg.patch = m->gemma4.patch, m->vision.cfg.channels = 3;
    return HFX_OK;
}

/* Whether the lineage's encoder is an audio one (its component audio_encoder, its token audio_token_id) */
static bool hears(const vlm_desc *d) { return d->kind == VLM_AUDIO || d->kind == VLM_GRANITE_SPEECH; }

/* Granite Speech: its encoder_config (`encoder`), projector_config and the top's window */
static hfx_status granite_speech_parse(hfx_cfg c, hfx_cfg encoder, hfx_arena *arena, vlm_cfg *m, hfx_error *err) {
    hfx_cfg projector;
    hfx_status st;
    if ((st = hfx_cfg_object(c, "projector_config", arena, &projector, err)) ||
        (st = hfx_granite_speech_parse(c, encoder, projector, &m->granite, err)) ||
        (st = hfx_cfg_bool_or(c, "has_lora_adapter", true, &m->lora, err)))
        return st;
    m->vision.cfg.hidden = m->granite.conformer.hidden, m->vision.cfg.layers = m->granite.layers;
    m->text.mult.logits_div = 1.0; /* its own lm_head, which Granite's logits_scaling does not divide */
    return HFX_OK;
}

/* The media token: transformers 5 names it image_token_id (audio_token_id), older configs image_token_index */
static hfx_status media_token(const vlm_desc *d, hfx_cfg c, vlm_cfg *m, hfx_error *err) {
    const char *key = hears(d) ? (hfx_cfg_has(c, "audio_token_id") ? "audio_token_id" : "audio_token_index")
                               : (hfx_cfg_has(c, "image_token_id") ? "image_token_id" : "image_token_index");
    return hfx_cfg_int_in_or(c, key, d->image_token_default, 0, m->text.vocab - 1, &m->image_token, err);
}

static hfx_status vlm_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const vlm_desc *d = desc_;
    vlm_cfg *m = cfg;
    hfx_cfg text = c, vision;
    hfx_status st;
    const char *text_type, *vision_type;
    /* Qwen2-VL's Hub configs keep the language model's settings at the top level */
    bool flat = (d->kind == VLM_GRID && !hfx_cfg_has(c, "text_config")) || d->kind == VLM_PHI4MM;
    if ((!flat && (st = hfx_cfg_object(c, "text_config", arena, &text, err))) ||
        (st = hfx_cfg_object(c, d->kind == VLM_AUDIO ? "audio_config" : d->kind == VLM_GRANITE_SPEECH ? "encoder_config"
                                                                                                : "vision_config",
                             arena, &vision, err)) ||
        (st = hfx_cfg_str_or(text, "model_type", d->text_default ? d->text_default : "llama", &text_type, err)) ||
        (st = hfx_cfg_str_or(vision, "model_type", d->vision_default, &vision_type, err)))
        return st;
    if (d->text_type) text_type = d->text_type;
    m->text_desc = d->text ? d->text : hfx_decoder_of_model_type(text_type);
    if (!m->text_desc)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: model_type '%s': hfx has no such causal LM for %s's language "
                                                  "model", text.where, text_type, d->architecture);
    const hfx_decoder_desc *t = m->text_desc;
    /* (Granite's embedding_multiplier scales inputs_embeds inside its model, as the decode component scales them) */
    if (t->embed_scale == HFX_EMBED_SQRT_HIDDEN || t->embed_scale == HFX_EMBED_FINAL_NORM ||
        t->embed_scale == HFX_EMBED_OWN_NORM || t->multipliers == HFX_MULT_SCALE_EMB_DEPTH ||
        (t->multipliers == HFX_MULT_EMBED_RESIDUAL_LOGITS && d->kind != VLM_GRANITE_SPEECH))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: model_type '%s' as %s's language model is not supported yet "
                                                  "(its embedding scales are not split from the text stack)",
                        text.where, text_type, d->architecture);
    if ((st = hfx_decoder_parse(m->text_desc, text, arena, &m->text, err))) return st;
    /* the head is tied where either config says so (transformers 5 moved the key to the top), or as the top says */
    bool tied = false;
    if (!flat && hfx_cfg_has(c, "tie_word_embeddings") &&
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", false, &tied, err)))
        return st;
    m->text.tied = d->tied_by_top ? tied : m->text.tied || tied;
    if (d->kind == VLM_PIXTRAL) {
        if ((st = hfx_grid_tower_parse(vision_type, vision, &m->grid, err)) ||
            (st = hfx_cfg_int_in_or(c, "spatial_merge_size", 2, 1, 64, &m->grid.merge, err)) || /* (the top's) */
            (st = hfx_cfg_num_or(text, "rms_norm_eps", 1e-5, &m->projector_eps, err)))
            return st;
        m->vision = m->grid.tower;
    } else if (d->kind == VLM_GRID) {
        if ((st = hfx_rope_parse_mrope(text, &d->mrope, &m->text.rope, err)) ||
            (st = hfx_grid_tower_parse(vision_type, vision, &m->grid, err)))
            return st;
        /* transformers adds as many as there are layers to add them to */
        m->deepstack = m->grid.n_deepstack < m->text.layers ? m->grid.n_deepstack : m->text.layers;
        if (m->deepstack && m->text.hyper.streams)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: DeepStack features into a language model with "
                                                      "hyper-connections are not written", c.where);
        m->vision = m->grid.tower;
        m->genai_parts = m->grid.merger && m->deepstack == m->grid.n_deepstack_mergers; /* (GenAI: as many as listed) */
        if (m->grid.out != m->text.hidden)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: the vision merger's width %lld is not the language model's "
                                                  "hidden_size %lld", vision.where, (long long)m->grid.out,
                            (long long)m->text.hidden);
    } else if (d->kind == VLM_AUDIO) {
        if ((st = hfx_vlm_parse_audio(d, c, vision, vision_type, m, err))) return st;
    } else if (d->kind == VLM_GRANITE_SPEECH) {
        if ((st = granite_speech_parse(c, vision, arena, m, err))) return st;
    } else if (d->kind == VLM_GEMMA4 || d->kind == VLM_GEMMA3N || d->kind == VLM_PHI4MM) {
        st = d->kind == VLM_GEMMA4    ? gemma4_parse(c, text, vision, arena, m, err)
             : d->kind == VLM_GEMMA3N ? hfx_vlm_gemma3n_parse(c, vision, arena, m, err)
                                      : hfx_vlm_phi4mm_parse(c, vision, vision_type, arena, m, err);
        if (st) return st;
    } else if (d->kind == VLM_LLAVA && vision_type && strcmp(vision_type, "pixtral") == 0) {
        if ((st = hfx_grid_tower_parse(vision_type, vision, &m->grid, err))) return st;
        m->grid.merge = 1; /* every patch a token */
        m->vision = m->grid.tower;
        m->any_size = true;
    } else if ((st = hfx_vision_tower_parse(vision_type, vision, HFX_TOWER_IMAGE, &m->vision, err))) {
        return st;
    }
    bool audio = hears(d);
    if (d->kind != VLM_PHI4MM && (st = media_token(d, c, m, err))) return st; /* (Phi-4-multimodal's: its towers') */
    if (d->kind == VLM_GRANITE_SPEECH) /* its forward embeds the audio tokens as token 0 */
        m->placeholders[0] = m->image_token, m->n_placeholders = 1, m->pad_id = 0;
    return d->kind == VLM_GRID || d->kind == VLM_GEMMA4 || d->kind == VLM_GEMMA3N || d->kind == VLM_PHI4MM || audio
               ? HFX_OK : hfx_vlm_parse_projector(d, c, text, vision, m, err);
}

/* The naming scheme this checkpoint uses (the first whose tower is there) and the tower's prefix. */
static const vlm_names *find_names(const vlm_desc *d, const vlm_cfg *m, const hfx_weights *w, const char **tower) {
    char n[256];
    for (const vlm_names *const *s = d->names; *s; s++)
        for (int i = 0; i < 4 && (*s)->tower[i]; i++) {
            snprintf(n, sizeof n, "%s%s.weight", (*s)->tower[i],
                     d->kind == VLM_GEMMA4           ? "patch_embedder.input_proj"
                     : d->kind == VLM_GEMMA3N        ? "timm_model.conv_stem.conv"
                     : d->kind == VLM_GRANITE_SPEECH ? "input_linear"
                                                     : hfx_vision_patch_name(&m->vision));
            if (hfx_weight_exists(w, n)) {
                *tower = (*s)->tower[i];
                return *s;
            }
        }
    *tower = d->names[0]->tower[0];
    return d->names[0]; /* its names are the ones missing, in the message */
}

/* Gemma 3n's image encoder over images of its processor's size (else MobileNet-V5's 768 × 768) */
static hfx_status gemma3n_image(const vlm_cfg *m, const hfx_checkpoint *ck, const hfx_build_opts *o, hfx_graph *g,
                                hfx_weights *w, const char *tower, hfx_error *err) {
    int64_t h, wd;
    hfx_status st = hfx_mobilenet_image_size(ck, &h, &wd, err);
    if (st) return st;
    if (h != wd)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s/preprocessor_config.json: Gemma 3n's images are square (not "
                                                  "%lld × %lld)", hfx_checkpoint_dir(ck), (long long)h, (long long)wd);
    hfx_vlm_build_gemma3n_image(m, o, g, w, tower, h);
    return HFX_OK;
}

/* The stacks of an encoder beside the image encoder (Gemma 4's and Gemma 3n's audio encoder's, Phi-4-multimodal's):
 * two, the second may be NULL */
static const char *const *second_encoder(const vlm_desc *d) {
    static const char *const gemma[2] = {"model.audio_tower", "model.embed_audio"};
    static const char *const phi4mm_audio[2] = {"model.embed_tokens_extend.audio_embed", NULL};
    return d->kind == VLM_PHI4MM ? phi4mm_audio : gemma;
}

/* The stacks the other components read into foreign[7] (NULL-terminated): the encoders' (the second one's too), LLaVA-
 * Next's newline, and `head` (NULL: none; the seed's lm_head graph reads it) */
static void foreign_stacks(const vlm_cfg *m, const vlm_names *names, const char *const *second, const char *head,
                           const char **foreign) {
    const char *const all[6] = {names->stacks[0], names->stacks[1], names->newline, m->has_audio ? second[0] : NULL,
                                m->has_audio ? second[1] : NULL, head};
    int n = 0;
    for (int i = 0; i < 6; i++)
        if (all[i]) foreign[n++] = all[i];
}

/* The checkpoint's name of the language model's head stack into buf: "lm_head" as the names rename it
 * ("language_model.lm_head") */
static void head_stack(const vlm_names *names, char *buf, size_t size) {
    snprintf(buf, size, "lm_head");
    for (int i = 0; i < 3 && names->text[i].from; i++)
        if (!strcmp(names->text[i].from, "lm_head.") && names->text[i].to[0])
            snprintf(buf, size, "%.*s", (int)strlen(names->text[i].to) - 1, names->text[i].to);
}

/* How the language model sits in the model: its names (alias[4]: the other schemes', where a LoRA adapter's may be),
 * the stacks other components read, its blocks, DeepStack, media placeholders, GenAI's forms of its inputs in
 * OpenVINO's stateful layout, and the seed's split (its language model returns the final states and takes DeepStack's
 * features, its decode embeds the ids itself, M-RoPE positions carry the text positions as a first row, as
 * transformers 5 passes them) */
static hfx_decoder_host text_host(const vlm_desc *d, const vlm_cfg *m, const hfx_build_opts *o, const char *component,
                                  const vlm_names *names, const hfx_weight_rename **alias, const char *const *foreign) {
    hfx_mask_blocks blocks = d->kind == VLM_GEMMA3                        ? HFX_BLOCKS_IMAGE_RUNS
                             : d->kind == VLM_PALIGEMMA                   ? HFX_BLOCKS_PREFIX
                             : d->kind == VLM_GEMMA4 && m->vision_blocks ? HFX_BLOCKS_VISION_RUNS_WINDOWED
                                                                          : HFX_BLOCKS_NONE;
    int n_alias = 0;
    for (const vlm_names *const *s = d->names; *s && n_alias < 3; s++)
        if (*s != names) alias[n_alias++] = (*s)->text;
    bool genai = m->genai_parts && o->stateful;
    hfx_decoder_host host = {d->architecture, names->text,      alias,           foreign,
                             true,            blocks,           NULL,            false,
                             m->deepstack,    m->placeholders,  m->n_placeholders, m->pad_id,
                             genai,           genai && d->text_positions_first, o->stateful && m->text.ple.width > 0};
    if (o->io == HFX_IO_SEED) { /* (DeepStack's features: the language model's, as visual_pos_masks and their list) */
        host.base = host.embeds_in = strcmp(component, "language_model") == 0;
        const int64_t *sections = m->text.rope.mrope_section;
        host.text_position_row = sections[0] || sections[1] || sections[2];
        host.deepstack_at_positions = host.base && m->deepstack;
        if (!host.base) host.deepstack = 0;
    }
    return host;
}

/* The language model's graphs: hfx's prefill and decode, or the seed's split (language_model, lm_head, and its decode,
 * which also takes the processor's mm_token_type_ids where M-RoPE's positions are given: the model's step leaves them
 * unread, the seed's graph keeps the input its sample had). */
static hfx_status build_text(const vlm_cfg *m, const hfx_checkpoint *ck, const hfx_build_opts *o, const char *component,
                             const hfx_decoder_host *host, hfx_graph *g, hfx_error *err) {
    if (strcmp(component, "lm_head") == 0) return hfx_decoder_build_lm_head(m->text_desc, &m->text, ck, o, host, g, err);
    hfx_status st = hfx_decoder_build(m->text_desc, &m->text, ck, o, host, g, err);
    if (!st && o->io == HFX_IO_SEED && host->text_position_row && strcmp(component, "decode") == 0) {
        hfx_graph_input(g, "mm_token_type_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
        st = hfx_graph_status(g, err);
    }
    return st;
}

/* What the Python system's split (io "seed") would pass its language model that hfx does not write yet, or NULL: its
 * language_model takes inputs_embeds and positions alone (a mask only in a static cache's steps), its decode
 * input_ids */
static const char *seed_gap(const vlm_desc *d, const vlm_cfg *m) {
    if (d->kind == VLM_GEMMA3N || d->kind == VLM_PHI4MM) return "this model's split into its encoders";
    if (d->kind == VLM_GEMMA3 || d->kind == VLM_PALIGEMMA || m->vision_blocks)
        return "the masks its language model takes per layer type (the image tokens' or the prefix's blocks)";
    if (m->n_placeholders || m->text.ple.width) return "its media tokens' embeddings and per-layer inputs";
    if (m->lora) return "the LoRA adapter its forward switches on for media";
    if (!d->seed.output_class) return "this model's split (how transformers.exporters calls its parts is not recorded)";
    return NULL;
}

static hfx_status vlm_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                            hfx_graph *g, hfx_error *err) {
    const vlm_desc *d = desc_;
    const vlm_cfg *m = cfg_;
    const char *component = o->component ? o->component : "model";
    bool seed = o->io == HFX_IO_SEED;
    if (seed && seed_gap(d, m))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" does not cover %s yet; export with io \"optimum\"",
                        d->architecture, seed_gap(d, m));
    if (m->lora && hfx_checkpoint_lora_scale(ck) == 0) /* (transformers warns and runs another model) */
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: has_lora_adapter is true, but the folder has no LoRA "
                                              "adapter (adapter_config.json, adapter_model.safetensors), which "
                                              "transformers turns on for audio prompts",
                        hfx_checkpoint_dir(ck));
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    const char *tower;
    const vlm_names *names = find_names(d, m, &w, &tower);
    const char *const *audio_stacks = second_encoder(d);
    const char *foreign[7] = {0};
    char head[96];
    head_stack(names, head, sizeof head);
    foreign_stacks(m, names, audio_stacks, seed && strcmp(component, "language_model") == 0 ? head : NULL, foreign);
    const hfx_weight_rename *alias[4] = {0};
    hfx_decoder_host host = text_host(d, m, o, component, names, alias, foreign);
    if (host.blocks && o->cache == HFX_CACHE_STATIC && strcmp(component, "model") != 0) {
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: a static cache is not written for its blocks "
                                                  "(token_type_ids over the cache's slots) yet; export a dynamic cache",
                        d->architecture);
    }
    bool audio = hears(d);
    bool whole = strcmp(component, "model") == 0;
    bool per_layer_table = strcmp(component, "text_embeddings_per_layer") == 0; /* (the stateful layout's) */
    bool image = strcmp(component, audio ? "audio_encoder" : "image_encoder") == 0 || hfx_vlm_grid_part(component);
    bool second = m->has_audio && strcmp(component, "audio_encoder") == 0; /* Gemma 4's, beside its image encoder */
    if (image || second || whole) { /* the whole model: the dry run that checks every tensor (no export writes it) */
        if (!second && d->kind == VLM_GEMMA3N) st = gemma3n_image(m, ck, o, g, &w, tower, err);
        else if (!second && d->kind == VLM_PHI4MM) hfx_vlm_build_phi4mm_image(m, o, g, &w, tower);
        else if (!second) hfx_vlm_build_encoder(d, m, o, g, &w, names, tower);
        if (m->has_audio && !image && !g->failed && !st)
            (d->kind == VLM_GEMMA3N  ? hfx_vlm_build_gemma3n_audio
             : d->kind == VLM_PHI4MM ? hfx_vlm_build_phi4mm_audio
                                     : hfx_vlm_build_gemma4_audio)(m, o, g, &w);
        for (int i = 2; !whole && i < 4; i++) /* the language model is the other components' */
            if (names->stacks[i]) hfx_weights_ignore_stack(&w, names->stacks[i]);
        if (!whole) hfx_weights_ignore_stack(&w, "lora"); /* (its adapter too) */
        for (int i = 0; m->has_audio && !whole && i < 2; i++) { /* ... and the other encoder */
            const char *other = second ? names->stacks[i] : audio_stacks[i];
            if (other) hfx_weights_ignore_stack(&w, other);
        }
        host.weights = &w;
        if (whole && !g->failed) st = hfx_decoder_build(m->text_desc, &m->text, ck, o, &host, g, err);
        if (whole && d->kind == VLM_GEMMA3N && !st) /* embed_tokens' own tensors checked too (nodes of no output) */
            hfx_vlm_gemma3n_embeddings(m, g, &w, hfx_const_i64(g, 0));
        hfx_graph_set_meta(g, "architecture", d->architecture);
        if (st == HFX_OK) st = hfx_graph_status(g, err);
        if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    } else if (strcmp(component, "embed_tokens") == 0 && d->kind == VLM_GEMMA3N) {
        hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
        hfx_graph_output(g, hfx_vlm_gemma3n_embeddings(m, g, &w, ids), "inputs_embeds");
        hfx_weights_ignore_rest(&w); /* (the other components read the rest) */
        hfx_graph_set_meta(g, "architecture", d->architecture);
        st = hfx_graph_status(g, err);
        if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    } else if (strcmp(component, "embed_tokens") == 0 || per_layer_table) {
        st = hfx_decoder_build_embed(m->text_desc, &m->text, ck, o, &host, per_layer_table, g, err);
    } else if (strcmp(component, "prefill") == 0 || strcmp(component, "decode") == 0 ||
               strcmp(component, "language_model") == 0 || strcmp(component, "lm_head") == 0) {
        st = build_text(m, ck, o, component, &host, g, err);
    } else {
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: component '%s' is not one hfx builds", d->architecture, component);
    }
    hfx_weights_free(&w);
    return st;
}

static int vlm_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const vlm_cfg *m = cfg_;
    return hfx_decoder_family.cache_layers(&m->text, layers, max);
}

static hfx_torch_signature vlm_torch_signature(const void *desc) {
    static const char *const args[] = {"inputs_embeds", "attention_mask", "position_ids", "cache", NULL};
    (void)desc;
    return (hfx_torch_signature){.args = args, .output_class = "CausalLMOutputWithPast"};
}

/* The prompt's graphs: hfx's prefill (the logits), or in the Python system's profile its split, the language model
 * (inputs_embeds → the final states and the cache) and the lm_head module apart */
#define PROMPT                                                                                                      \
    {.name = "prefill", .role = "prefill", .logits_to_keep = 1, .when = HFX_WHEN_NOT_SEED},                          \
    {.name = "language_model", .role = "language_model", .logits_to_keep = 0, .when = HFX_WHEN_SEED},                 \
    {.name = "lm_head", .role = "lm_head", .logits_to_keep = -1, .when = HFX_WHEN_SEED}
#define SINGLE_DECODE                                                                                                \
    {.name = "decode", .role = "decode", .single_token = true, .reads_state = true, .logits_to_keep = 1,             \
     .stateful_stem = "language"}
/* the seed's multi-token decode after its split prompt */
#define SEED_MULTI                                                                                                  \
    {.name = "language_model", .role = "language_model", .logits_to_keep = 0},                                        \
    {.name = "lm_head", .role = "lm_head", .logits_to_keep = -1},                                                     \
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0, .stateful_stem = "language"}

/* The seed's calls: its language model's keywords in the forward's order (the model passes some as None), the
 * lm_head module's input, the decode's keywords (the processor's token types last); hfx's own components (the
 * encoders, embed_tokens), which the seed leaves to the caller, called by their inputs' names, their tensors
 * returned */
static hfx_torch_signature vlm_component_signature(const void *desc_, const char *component) {
    static const char *const language_model[] = {"input_ids", "attention_mask", "position_ids", "cache",
                                                 "inputs_embeds", "image_sizes", NULL};
    static const char *const lm_head[] = {"input", NULL};
    static const char *const decode[] = {"input_ids", "attention_mask", "position_ids", "cache", "inputs_embeds",
                                         "mm_token_type_ids", NULL};
    const vlm_desc *d = desc_;
    const char *recorded = d->seed.output_class;
    if (!strcmp(component, "language_model"))
        return (hfx_torch_signature){.args = language_model,
                                     .output_class = !recorded             ? NULL
                                                     : d->seed.lm_output_class ? d->seed.lm_output_class
                                                                               : "BaseModelOutputWithPast",
                                     .constants = d->seed.lm_constants};
    if (!strcmp(component, "lm_head")) return (hfx_torch_signature){.args = lm_head, .bare = true};
    if (!strcmp(component, "decode")) return (hfx_torch_signature){.args = decode, .output_class = recorded};
    static const char *const by_name[] = {NULL};
    return (hfx_torch_signature){.args = by_name, .bare = true};
}

/* The stateful stems: the file stems of OpenVINO's stateful layout, optimum-intel's, which OpenVINO
 * GenAI's VLMPipeline reads */
static const hfx_component generation[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "vision_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    PROMPT,
    SINGLE_DECODE,
};
static const hfx_component seed_multi[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1},
    SEED_MULTI,
};
/* (the last entry where the language model has per-layer inputs: OpenVINO's stateful layout, optimum-intel's, computes
 * their tokens' half in a graph of its own, which GenAI's VLMPipeline runs on the ids and feeds the language model) */
#define PER_LAYER_TOKENS                                                                                     \
    {.name = "text_embeddings_per_layer", .role = "per_layer_embeddings", .logits_to_keep = -1,               \
     .stateful_stem = "text_embeddings_per_layer", .when = HFX_WHEN_STATEFUL}
static const hfx_component one_graph[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "vision_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0, .stateful_stem = "language"},
    PER_LAYER_TOKENS,
};
/* an audio LM's: the encoder's other name and file */
static const hfx_component audio_generation[] = {
    {.name = "audio_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "audio_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    PROMPT,
    SINGLE_DECODE,
};
static const hfx_component audio_seed_multi[] = {
    {.name = "audio_encoder", .role = "modality_encoder", .logits_to_keep = -1},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1},
    SEED_MULTI,
};
static const hfx_component audio_one_graph[] = {
    {.name = "audio_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "audio_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0, .stateful_stem = "language"},
};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", "position_ids", NULL};

#define VLM_COMMON                                                                                                \
    .cfg_size = sizeof(vlm_cfg), .parse = vlm_parse, .build_forward = vlm_build, .cache_layers = vlm_cache_layers, \
    .sequence_inputs = sequence_inputs, .torch_signature = vlm_torch_signature,                                      \
    .component_signature = vlm_component_signature, .genai = HFX_GENAI_NONE

const hfx_arch_family hfx_audio_lm_family = {
    VLM_COMMON,
    .exports = {[HFX_EXPORT_GENERATION] = {audio_generation, 6},
                [HFX_EXPORT_GENERATION_ONE_GRAPH] = {audio_one_graph, 3},
                [HFX_EXPORT_GENERATION_MULTI] = {audio_seed_multi, 5}},
};

/* Gemma 4 with its audio encoder: both encoders */
static const hfx_component two_encoders[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "vision_embeddings"},
    {.name = "audio_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "audio_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    PROMPT,
    SINGLE_DECODE,
};
static const hfx_component two_encoders_one_graph[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "vision_embeddings"},
    {.name = "audio_encoder", .role = "modality_encoder", .logits_to_keep = -1, .stateful_stem = "audio_embeddings"},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0, .stateful_stem = "language"},
    PER_LAYER_TOKENS,
};

/* The Qwen-VL lineages' in OpenVINO's stateful layout: optimum-intel's split of the tower (the patch embedding; the
 * layers and merger over the attention masks, rotary and window order the caller computes from the grids), which
 * GenAI's VLMPipeline reads in the image encoder's place; Qwen3-VL's and Qwen3.5's learned position table a graph of
 * its own (GenAI weighs its taps): the first entry, which the others' set starts after */
static const hfx_component grid_parts_one_graph[] = {
    {.name = "vision_embeddings_pos", .role = "position_table", .logits_to_keep = -1,
     .stateful_stem = "vision_embeddings_pos", .when = HFX_WHEN_STATEFUL},
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1, .when = HFX_WHEN_NOT_STATEFUL},
    {.name = "vision_embeddings", .role = "patch_embedding", .logits_to_keep = -1, .stateful_stem = "vision_embeddings",
     .when = HFX_WHEN_STATEFUL},
    {.name = "vision_embeddings_merger", .role = "vision_merger", .logits_to_keep = -1,
     .stateful_stem = "vision_embeddings_merger", .when = HFX_WHEN_STATEFUL},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1, .stateful_stem = "text_embeddings"},
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0, .stateful_stem = "language"},
};

extern const hfx_arch_family hfx_vlm_family;

/* the family's components, Gemma 4's with its audio encoder beside its image one, the Qwen-VL lineages' split where
 * stateful */
static hfx_component_set vlm_components(const void *cfg_, hfx_export_kind kind) {
    const vlm_cfg *m = cfg_;
    if (m->genai_parts && kind == HFX_EXPORT_GENERATION_ONE_GRAPH)
        return m->grid.position_rows ? (hfx_component_set){grid_parts_one_graph, 6}
                                     : (hfx_component_set){grid_parts_one_graph + 1, 5};
    if (m->has_audio && kind == HFX_EXPORT_GENERATION) return (hfx_component_set){two_encoders, 7};
    bool per_layer = m->text.ple.width > 0;
    if (m->has_audio && kind == HFX_EXPORT_GENERATION_ONE_GRAPH)
        return (hfx_component_set){two_encoders_one_graph, per_layer ? 5 : 4};
    if (kind == HFX_EXPORT_GENERATION_ONE_GRAPH) return (hfx_component_set){one_graph, per_layer ? 4 : 3};
    return hfx_vlm_family.exports[kind];
}

const hfx_arch_family hfx_vlm_family = {
    VLM_COMMON,
    .exports = {[HFX_EXPORT_GENERATION] = {generation, 6}, [HFX_EXPORT_GENERATION_ONE_GRAPH] = {one_graph, 3},
                [HFX_EXPORT_GENERATION_MULTI] = {seed_multi, 5}},
    .components_of = vlm_components,
};

static const hfx_keyword_constant mask_none[] = {{.name = "attention_mask"}, {.name = NULL}};
static const hfx_keyword_constant ids_and_mask_none[] = {{.name = "input_ids"}, {.name = "attention_mask"},
                                                         {.name = NULL}};
static const hfx_keyword_constant internvl_none[] = {{.name = "attention_mask"}, {.name = "image_sizes"},
                                                     {.name = NULL}}; /* (and no input_ids) */
static const hfx_keyword_constant onevision_constants[] = {
    {.name = "attention_mask"}, {.name = "logits_to_keep", .kind = HFX_CONSTANT_INT, .value = 0}, {.name = NULL}};
/* a MoE language model's call also says it returns no router logits */
static const hfx_keyword_constant moe_constants[] = {
    {.name = "input_ids"}, {.name = "attention_mask"}, {.name = "output_router_logits", .kind = HFX_CONSTANT_FALSE},
    {.name = NULL}};
static const vlm_names *const llava_names[] = {&llava_hub, &llava_v5, NULL};
static const vlm_names *const idefics3_names[] = {&idefics3_hub, NULL};
static const vlm_names *const llava_next_names[] = {&llava_next_hub, &llava_next_v5, NULL};
static const vlm_names *const qwen2_vl_names[] = {&qwen2_vl_hub, &qwen2_vl_v5, NULL};
const vlm_desc hfx_llava = {.architecture = "LlavaForConditionalGeneration",
                            .names = llava_names,
                            .kind = VLM_LLAVA,
                            .vision_default = "clip_vision_model",
                            .image_token_default = 32000,
                            .seed = {"LlavaCausalLMOutputWithPast", mask_none, NULL}};
/* LLaVA-Next: LLaVA's encoder over any-resolution tiles (the packing, unpadding and newlines the caller's) */
const vlm_desc hfx_llava_next = {.architecture = "LlavaNextForConditionalGeneration",
                                 .names = llava_next_names,
                                 .kind = VLM_LLAVA,
                                 .vision_default = "clip_vision_model",
                                 .image_token_default = 32000,
                                 .seed = {"LlavaNextCausalLMOutputWithPast", mask_none, NULL}};
/* LLaVA-OneVision: LLaVA-Next's (its packing also shrinks a grid of too many features: the caller's), SigLIP */
const vlm_desc hfx_llava_onevision = {.architecture = "LlavaOnevisionForConditionalGeneration",
                                      .names = llava_next_names,
                                      .kind = VLM_LLAVA,
                                      .vision_default = "siglip_vision_model",
                                      .image_token_default = 151646,
                                      .seed = {"LlavaOnevisionCausalLMOutputWithPast", onevision_constants, NULL}};
const vlm_desc hfx_gemma3 = {.architecture = "Gemma3ForConditionalGeneration",
                             .names = llava_names,
                             .kind = VLM_GEMMA3,
                             .vision_default = "siglip_vision_model",
                             .image_token_default = 262144};
/* Gemma 4: its own vision encoder (vision_gemma4.c), an embedder into Gemma 4's text model */
static const vlm_names *const gemma4_names[] = {&gemma_v5, NULL};
const vlm_desc hfx_gemma4 = {.architecture = "Gemma4ForConditionalGeneration",
                             .names = gemma4_names,
                             .kind = VLM_GEMMA4,
                             .vision_default = "gemma4_vision",
                             .text_default = "gemma4_text",
                             .image_token_default = 258880};
/* Gemma 3n: MobileNet-V5 and the USM conformer, each through its embedder into Gemma 3n's text model */
static const vlm_names *const gemma3n_names[] = {&gemma_v5, NULL};
static const vlm_names *const phi4mm_names[] = {&phi4mm, NULL};
/* Phi-4-multimodal: the language model over the top-level config (Phi-3's), the encoders in embed_tokens_extend */
const vlm_desc hfx_phi4mm = {.architecture = "Phi4MultimodalForCausalLM",
                             .names = phi4mm_names,
                             .kind = VLM_PHI4MM,
                             .vision_default = "phi4_multimodal_vision",
                             .text_type = "phi3"};
const vlm_desc hfx_gemma3n = {.architecture = "Gemma3nForConditionalGeneration",
                              .names = gemma3n_names,
                              .kind = VLM_GEMMA3N,
                              .vision_default = "gemma3n_vision",
                              .text_default = "gemma3n_text",
                              .image_token_default = 262145};
const vlm_desc hfx_idefics3 = {.architecture = "Idefics3ForConditionalGeneration",
                               .names = idefics3_names,
                               .kind = VLM_IDEFICS3,
                               .vision_default = "idefics3_vision",
                               .image_token_default = 128257,
                               .seed = {"Idefics3CausalLMOutputWithPast", mask_none, NULL}};
const vlm_desc hfx_smolvlm = {.architecture = "SmolVLMForConditionalGeneration",
                              .names = idefics3_names,
                              .kind = VLM_IDEFICS3,
                              .vision_default = "smolvlm_vision",
                              .image_token_default = 49190,
                              .seed = {"SmolVLMCausalLMOutputWithPast", mask_none, NULL}};
const vlm_desc hfx_qwen2_vl = {.architecture = "Qwen2VLForConditionalGeneration",
                               .names = qwen2_vl_names,
                               .kind = VLM_GRID,
                               .vision_default = "qwen2_vl",
                               .image_token_default = 151655,
                               .text_type = "qwen2",
                               .mrope = {{16, 24, 24}, false},
                               .seed = {"MultimodalCausalLMOutputWithPast", ids_and_mask_none, NULL}};
const vlm_desc hfx_qwen2_5_vl = {.architecture = "Qwen2_5_VLForConditionalGeneration",
                                 .names = qwen2_vl_names,
                                 .kind = VLM_GRID,
                                 .vision_default = "qwen2_5_vl",
                                 .image_token_default = 151655,
                                 .text_type = "qwen2",
                                 .mrope = {{16, 24, 24}, false},
                                 .seed = {"MultimodalCausalLMOutputWithPast", ids_and_mask_none, NULL}};
/* Qwen3-VL: the Qwen3 language model (q/k norms) under its own model_type "qwen3_vl_text" */
const vlm_desc hfx_qwen3_vl = {.architecture = "Qwen3VLForConditionalGeneration",
                               .names = qwen2_vl_names,
                               .kind = VLM_GRID,
                               .vision_default = "qwen3_vl_vision",
                               .image_token_default = 151655,
                               .text_type = "qwen3",
                               .tied_by_top = true,
                               .mrope = {{24, 20, 20}, true},
                               .seed = {"MultimodalCausalLMOutputWithPast", ids_and_mask_none, NULL}};
extern const hfx_decoder_desc hfx_qwen3_vl_moe_text; /* (registry.c) */
/* Qwen3-VL-MoE: Qwen3-VL's with Qwen3-MoE's layers, its router always renormalising */
const vlm_desc hfx_qwen3_vl_moe = {.architecture = "Qwen3VLMoeForConditionalGeneration",
                                   .names = qwen2_vl_names,
                                   .kind = VLM_GRID,
                                   .vision_default = "qwen3_vl_moe_vision",
                                   .image_token_default = 151655,
                                   .text = &hfx_qwen3_vl_moe_text,
                                   .tied_by_top = true,
                                   .mrope = {{24, 20, 20}, true},
                                   .seed = {"Qwen3VLMoeCausalLMOutputWithPast", moe_constants,
                                            "MoeModelOutputWithPast"}};
/* Qwen3.5: its hybrid language model (delta-net and gated attention layers), a Qwen3-VL tower without DeepStack */
const vlm_desc hfx_qwen3_5 = {.architecture = "Qwen3_5ForConditionalGeneration",
                              .names = qwen2_vl_names,
                              .kind = VLM_GRID,
                              .vision_default = "qwen3_5_vision",
                              .image_token_default = 248056,
                              .tied_by_top = true,
                              .mrope = {{11, 11, 10}, true},
                              .text_positions_first = true,
                              .seed = {"MultimodalCausalLMOutputWithPast", ids_and_mask_none, NULL}};
const vlm_desc hfx_qwen3_5_moe = {.architecture = "Qwen3_5MoeForConditionalGeneration",
                                  .names = qwen2_vl_names,
                                  .kind = VLM_GRID,
                                  .vision_default = "qwen3_5_moe_vision",
                                  .image_token_default = 248056,
                                  .tied_by_top = true,
                                  .mrope = {{11, 11, 10}, true},
                                  .text_positions_first = true,
                                  .seed = {"Qwen3_5MoeCausalLMOutputWithPast", moe_constants,
                                           "MoeModelOutputWithPast"}};

/* PaliGemma (1 and 2): SigLIP's tower post-normed, one linear into Gemma or Gemma 2, the prompt a prefix */
const vlm_desc hfx_paligemma = {.architecture = "PaliGemmaForConditionalGeneration",
                                .names = llava_names,
                                .kind = VLM_PALIGEMMA,
                                .vision_default = "siglip_vision_model",
                                .text_default = "gemma",
                                .image_token_default = 256000};

/* Mistral3: Pixtral's tower over images of any size, its projector's patch merger, (mostly) Mistral */
const vlm_desc hfx_mistral3 = {.architecture = "Mistral3ForConditionalGeneration",
                               .names = llava_names,
                               .kind = VLM_PIXTRAL,
                               .vision_default = "pixtral",
                               .text_default = "mistral",
                               .image_token_default = 10,
                               .seed = {"Mistral3CausalLMOutputWithPast", mask_none, NULL}};

/* LFM2-VL: SigLIP 2's NaFlex tower, the unshuffle and an MLP into LFM2 */
const vlm_desc hfx_lfm2_vl = {.architecture = "Lfm2VlForConditionalGeneration",
                              .names = llava_names,
                              .kind = VLM_NAFLEX,
                              .vision_default = "siglip2_vision_model",
                              .text_default = "lfm2",
                              .image_token_default = 396,
                              .seed = {"Lfm2VlCausalLMOutputWithPast", mask_none, NULL}};

/* Llama 4: its tower of tiles, the pixel-shuffle adapter, Llama 4's MoE language model */
static const vlm_names *const llama4_names[] = {&llama4_hub, NULL};
const vlm_desc hfx_llama4 = {.architecture = "Llama4ForConditionalGeneration",
                             .names = llama4_names,
                             .kind = VLM_LLAMA4,
                             .vision_default = "llama4_vision_model",
                             .text_default = "llama4_text",
                             .image_token_default = 200092};

/* InternVL: InternViT's tower, the pixel shuffle and an MLP into (mostly) Qwen2 */
const vlm_desc hfx_internvl = {.architecture = "InternVLForConditionalGeneration",
                               .names = llava_names,
                               .kind = VLM_INTERNVL,
                               .vision_default = "internvl_vision",
                               .text_default = "qwen2",
                               .image_token_default = 151667,
                               .seed = {"InternVLCausalLMOutputWithPast", internvl_none, NULL}};

/* Audio language models: Whisper's encoder as the tower (audio_tower.c) */
static const vlm_names *const audio_names[] = {&audio_hub, &audio_v5, NULL};
/* Qwen2-Audio: the pooled tower over each clip's real frames, one linear into Qwen2 */
const vlm_desc hfx_qwen2_audio = {.architecture = "Qwen2AudioForConditionalGeneration",
                                  .names = audio_names,
                                  .kind = VLM_AUDIO,
                                  .vision_default = "qwen2_audio_encoder",
                                  .text_default = "qwen2",
                                  .image_token_default = 151646,
                                  .audio = AUDIO_LINEAR,
                                  .feature_mask = "feature_attention_mask"};
/* Voxtral: whole 30-second windows, four frames a token through an unbiased MLP into Llama */
const vlm_desc hfx_voxtral = {.architecture = "VoxtralForConditionalGeneration",
                              .names = audio_names,
                              .kind = VLM_AUDIO,
                              .vision_default = "voxtral_encoder",
                              .image_token_default = 24,
                              .audio = AUDIO_STACKED_MLP};
/* Audio Flamingo 3: Qwen2-Audio's tower, an MLP into Qwen2 */
const vlm_desc hfx_audioflamingo3 = {.architecture = "AudioFlamingo3ForConditionalGeneration",
                                     .names = audio_names,
                                     .kind = VLM_AUDIO,
                                     .vision_default = "audioflamingo3_encoder",
                                     .text_default = "qwen2",
                                     .image_token_default = 151669,
                                     .audio = AUDIO_MLP,
                                     .feature_mask = "input_features_mask"};
/* Granite Speech: its conformer and Q-Former into Granite */
static const vlm_names *const granite_speech_names[] = {&granite_speech_v5, &granite_speech_hub, NULL};
const vlm_desc hfx_granite_speech = {.architecture = "GraniteSpeechForConditionalGeneration",
                                     .names = granite_speech_names,
                                     .kind = VLM_GRANITE_SPEECH,
                                     .vision_default = "granite_speech_encoder",
                                     .text_default = "granite",
                                     .image_token_default = 49155};
/* Qwen3-ASR: windows of chunks through a Conv2d front end and Whisper's layers, an MLP into Qwen3 */
const vlm_desc hfx_qwen3_asr = {.architecture = "Qwen3ASRForConditionalGeneration",
                                .names = audio_names,
                                .kind = VLM_AUDIO,
                                .vision_default = "qwen3_asr_encoder",
                                .text_default = "qwen3",
                                .image_token_default = 151676,
                                .audio = AUDIO_TOWER_MLP,
                                .feature_mask = "input_features_mask"};
