/* Gemma 3n's encoders and multimodal embedders (Gemma3nForConditionalGeneration), around its text model (the decoder's
 * Gemma3nForCausalLM). Each modality has an embedder (embed_vision, embed_audio) from its tower's width into the text
 * model's: a "soft" path for the tower's features (RMSNorm, embedding_projection, a weight-less RMSNorm) and a "hard"
 * one for the ids of its own vocabulary (vocab_size ids from vocab_offset: its embedding table, another RMSNorm, the
 * same projection and norm). The components:
 *
 *   image_encoder  pixel_values [N, 3, S, S] → MobileNet-V5 (vision_mobilenet.c): its 2048 × 16 × 16 map as 256
 *                  tokens × √2048 → the soft path → image_features [N, 256, text hidden]
 *   audio_encoder  input_features [N, T, mels], input_features_mask [N, T] (1 on real frames) → the USM conformer
 *                  (audio_usm.c) → the soft path, the padded frames and the rest of audio_soft_tokens_per_image the
 *                  hard embedding of the text vocabulary's last id → audio_features [N, audio_soft_tokens, text hidden]
 *                  and audio_feature_lengths [N] (all of them: the processor gives each clip that many tokens)
 *   embed_tokens   input_ids → the text table's embeddings × √hidden, each vision or audio vocabulary id's by its
 *                  embedder's hard path */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/vlm.h"
#include "base/status.h"

enum { VISION, AUDIO };
static const char *const embedders[2] = {"model.embed_vision", "model.embed_audio"};

/* One embedder's config: a tower's vocab_offset, vocab_size, hidden_size and rms_norm_eps */
static hfx_status embedder_parse(hfx_cfg c, int64_t dflt_offset, int64_t dflt_hidden, vlm_embedder *e, hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "vocab_offset", dflt_offset, 0, 1 << 30, &e->offset, err)) ||
        (st = hfx_cfg_int_in_or(c, "vocab_size", 128, 1, 1 << 20, &e->vocab, err)) ||
        (st = hfx_cfg_int_in_or(c, "hidden_size", dflt_hidden, 1, 1 << 16, &e->hidden, err)) ||
        (st = hfx_cfg_num_or(c, "rms_norm_eps", 1e-6, &e->eps, err)))
        return st;
    if (!(e->eps > 0 && e->eps < 1)) return hfx_fail(err, HFX_ERR_INVALID, "%s: rms_norm_eps out of range", c.where);
    return HFX_OK;
}

hfx_status hfx_vlm_gemma3n_parse(hfx_cfg c, hfx_cfg vision, hfx_arena *arena, vlm_cfg *m, hfx_error *err) {
    hfx_cfg audio;
    int64_t vision_tokens;
    hfx_status st;
    if ((st = hfx_cfg_object(c, "audio_config", arena, &audio, err)) ||
        (st = hfx_usm_audio_parse(HFX_USM_GEMMA3N, audio, &m->usm_audio, err)) ||
        (st = hfx_mobilenet_parse(vision, &m->mobilenet, err)) ||
        (st = embedder_parse(vision, 262144, 2048, &m->embedder[VISION], err)) ||
        (st = embedder_parse(audio, 262272, 1536, &m->embedder[AUDIO], err)) ||
        (st = hfx_cfg_int_in_or(c, "vision_soft_tokens_per_image", 256, 1, 1 << 20, &vision_tokens, err)) ||
        (st = hfx_cfg_int_in_or(c, "audio_soft_tokens_per_image", 188, 1, 1 << 20, &m->audio_tokens, err)))
        return st;
    if (m->embedder[VISION].hidden != 2048 || vision_tokens != 256)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: vision_config.hidden_size %lld and vision_soft_tokens_per_image %lld: "
                                              "MobileNet-V5's encoder gives 256 tokens of 2048", c.where,
                        (long long)m->embedder[VISION].hidden, (long long)vision_tokens);
    if (m->embedder[AUDIO].hidden != m->usm_audio.hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: audio_config.hidden_size %lld is the embedder's and the encoder's "
                                              "width", c.where, (long long)m->usm_audio.hidden);
    /* the audio padding is the audio vocabulary's embedding of the text vocabulary's last id */
    int64_t pad = m->text.vocab - 1 - m->embedder[AUDIO].offset;
    if (pad < 0 || pad >= m->embedder[AUDIO].vocab)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: text vocab_size %lld: its last id is not in the audio vocabulary "
                                              "(%lld ids from %lld), whose embedding of it pads each clip's features",
                        c.where, (long long)m->text.vocab, (long long)m->embedder[AUDIO].vocab,
                        (long long)m->embedder[AUDIO].offset);
    m->has_audio = true;
    m->vision.cfg.hidden = 2048, m->vision.cfg.channels = 3;
    return HFX_OK;
}

/* Gemma's RMSNorm of x [..., n] (f32): `<stack>.<norm>.weight` scales it, or nothing where norm is NULL */
static hfx_value *norm(hfx_graph *g, hfx_weights *w, hfx_value *x, int64_t n, double eps, const char *stack,
                       const char *name) {
    if (!name) return hfx_rms_plain(g, x, eps);
    return hfx_rms_norm(g, x, hfx_weight(w, 1, &n, "%s.%s.weight", stack, name), eps, 0.0);
}

/* An embedder's path from its normed input x [..., hidden]: projection and the weight-less norm */
static hfx_value *projected(const vlm_cfg *m, int k, hfx_graph *g, hfx_weights *w, hfx_value *x) {
    const vlm_embedder *e = &m->embedder[k];
    int64_t out = m->text.hidden;
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){out, e->hidden}, "%s.embedding_projection.weight", embedders[k]),
                   NULL);
    return norm(g, w, x, out, e->eps, embedders[k], NULL);
}

/* The hard path of embedder k over ids [...] i64 of its vocabulary */
static hfx_value *hard(const vlm_cfg *m, int k, hfx_graph *g, hfx_weights *w, hfx_value *ids) {
    const vlm_embedder *e = &m->embedder[k];
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){e->vocab, e->hidden}, "%s.embedding.weight", embedders[k]);
    hfx_value *x = hfx_gather(g, table, hfx_op2(g, HFX_OP_SUB, ids, hfx_const_i64(g, e->offset)), 0);
    return projected(m, k, g, w, norm(g, w, x, e->hidden, e->eps, embedders[k], "hard_embedding_norm"));
}

/* The soft path of embedder k over a tower's features x [..., hidden] */
static hfx_value *soft(const vlm_cfg *m, int k, hfx_graph *g, hfx_weights *w, hfx_value *x) {
    const vlm_embedder *e = &m->embedder[k];
    return projected(m, k, g, w, norm(g, w, x, e->hidden, e->eps, embedders[k], "soft_embedding_norm"));
}

hfx_value *hfx_vlm_gemma3n_embeddings(const vlm_cfg *m, hfx_graph *g, hfx_weights *w, hfx_value *ids) {
    int64_t V = m->text.vocab, D = m->text.hidden;
    hfx_value *table = hfx_weight(w, 2, (int64_t[]){V, D}, "model.language_model.embed_tokens.weight");
    /* Gemma3nTextScaledWordEmbedding: × √hidden in the table's dtype */
    hfx_value *x = hfx_op2(g, HFX_OP_MUL, hfx_gather(g, table, ids, 0), hfx_const_scalar(g, table->dtype, sqrt((double)D)));
    for (int k = VISION; k <= AUDIO; k++) { /* vision ids from its offset up to audio's; audio ids from its up */
        const vlm_embedder *e = &m->embedder[k];
        hfx_value *in = hfx_op2(g, HFX_OP_GREATER_EQUAL, ids, hfx_const_i64(g, e->offset));
        if (k == VISION)
            in = hfx_op2(g, HFX_OP_AND, in, hfx_op2(g, HFX_OP_LESS, ids, hfx_const_i64(g, m->embedder[AUDIO].offset)));
        hfx_value *own = hfx_where(g, in, ids, hfx_const_i64(g, e->offset + e->vocab - 1)); /* (its forward's filler) */
        x = hfx_where(g, hfx_unsqueeze(g, in, -1), hfx_cast(g, hard(m, k, g, w, own), x->dtype), x);
    }
    return x;
}

void hfx_vlm_build_gemma3n_image(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w,
                                 const char *tower, int64_t size) {
    hfx_dim N = hfx_dim_sym(hfx_graph_symbol(g, "num_images", 1, INT32_MAX));
    hfx_value *pixels = hfx_graph_input(g, "pixel_values", o->dtype, 4,
                                        (hfx_dim[]){N, hfx_dim_const(3), hfx_dim_const(size), hfx_dim_const(size)});
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%stimm_model.", tower);
    hfx_value *x = hfx_mobilenet_features(&m->mobilenet, g, w, prefix, pixels); /* [N, 2048, 16, 16] */
    if (g->failed) return;
    x = hfx_transpose(g, hfx_reshape(g, x, 3, (hfx_dim[]){N, hfx_dim_const(2048), hfx_dim_const(256)}), 3,
                      (int64_t[]){0, 2, 1});
    x = hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, x->dtype, sqrt(2048.0)));
    hfx_graph_output(g, soft(m, VISION, g, w, x), "image_features");
    hfx_weight_ignore(w, "model.embed_vision.embedding.weight"); /* (embed_tokens' hard path) */
    hfx_weight_ignore(w, "model.embed_vision.hard_embedding_norm.weight");
}

void hfx_vlm_build_gemma3n_audio(const vlm_cfg *m, const hfx_build_opts *o, hfx_graph *g, hfx_weights *w) {
    const hfx_usm_audio *t = &m->usm_audio;
    hfx_dim T = hfx_dim_sym(hfx_graph_symbol(g, "audio_frames", 1, INT32_MAX)), N = o->batch;
    hfx_value *features = hfx_graph_input(g, "input_features", o->dtype, 3, (hfx_dim[]){N, T, hfx_dim_const(t->mels)});
    hfx_value *mask = hfx_graph_input(g, "input_features_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){N, T});
    hfx_value *real = NULL, *x = hfx_usm_audio_tower(t, g, w, "model.audio_tower.", features, mask, &real);
    if (g->failed) return;
    x = soft(m, AUDIO, g, w, x); /* [N, T', text hidden] */
    hfx_value *pad = hard(m, AUDIO, g, w, hfx_const_i64(g, m->text.vocab - 1)); /* [text hidden] */
    x = hfx_where(g, hfx_unsqueeze(g, real, -1), x, hfx_cast(g, pad, x->dtype));
    /* then the padding's embedding up to audio_soft_tokens_per_image, and no further (the feature extractor's 30 s
     * leave 188 of the encoder's frames, as many as the default's) */
    int64_t n = m->audio_tokens, D = m->text.hidden;
    hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                        hfx_unsqueeze(g, hfx_const_i64(g, n), 0),
                                                        hfx_unsqueeze(g, hfx_const_i64(g, D), 0)}, 0);
    hfx_value *rest = hfx_expand(g, hfx_cast(g, pad, x->dtype), shape, 3, (hfx_dim[]){N, hfx_dim_const(n), hfx_dim_const(D)});
    hfx_value *first = hfx_range(g, hfx_const_i64(g, 0), hfx_const_i64(g, n), hfx_const_i64(g, 1), hfx_dim_const(n));
    x = hfx_gather(g, hfx_concat(g, 2, (hfx_value *[]){x, rest}, 1), first, 1);
    hfx_graph_output(g, x, "audio_features");
    hfx_value *lengths = hfx_expand(g, hfx_const_i64(g, n), hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0), 1, &N);
    hfx_graph_output(g, lengths, "audio_feature_lengths");
}
