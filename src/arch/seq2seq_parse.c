/* The encoder-decoder family's config reading (seq2seq.h): each lineage's keys, heads, activations, biases and
 * positions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch/seq2seq.h"

#include "arch/nn.h"
#include "arch/relative.h"
#include "base/status.h"

static hfx_status parse_t5(const seq2seq_desc *d, hfx_cfg c, hfx_arena *arena, seq2seq_cfg *m, hfx_error *err) {
    const char *ff;
    hfx_status st;
    bool tie;
    if ((st = hfx_cfg_int_in(c, "d_kv", 1, 1 << 16, &m->enc_hd, err)) ||
        (st = hfx_cfg_str_or(c, "feed_forward_proj", "relu", &ff, err)) ||
        (st = hfx_cfg_num_or(c, "layer_norm_epsilon", 1e-6, &m->eps, err)) ||
        (st = hfx_cfg_int_in_or(c, "relative_attention_num_buckets", 32, 2, 1 << 16, &m->buckets, err)) ||
        (st = hfx_cfg_int_in_or(c, "relative_attention_max_distance", 128, 1, 1 << 20, &m->max_distance, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &tie, err)) ||
        (st = hfx_cfg_bool_or(c, "scale_decoder_outputs", tie, &m->scale_decoder_output, err)))
        return st;
    m->dec_hd = m->enc_hd;
    m->scale_decoder_output &= d->output_scale;
    /* "relu", "gelu", ... or "gated-<act>" ("gated-gelu" meaning gelu_new, as T5Config says) */
    m->gated = strncmp(ff, "gated-", 6) == 0;
    const char *act = m->gated ? ff + 6 : ff;
    if (strcmp(ff, "gated-gelu") == 0) act = "gelu_new";
    if (!hfx_activation_from_name(act, &m->act[0]))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: feed_forward_proj '%s' is not supported (supported: <act> or "
                        "gated-<act>, <act> one of %s)", c.where, ff, hfx_activation_names());
    m->act[1] = m->act[0];
    /* the logarithmic buckets span max_exact (a quarter of them, bidirectional) .. max_distance */
    if (m->buckets < 4 || m->max_distance <= m->buckets / 2)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: relative_attention_num_buckets %lld and relative_attention_max_distance "
                        "%lld: need at least 4 buckets and a max distance over half of them", c.where,
                        (long long)m->buckets, (long long)m->max_distance);
    int64_t n = 2 * m->max_distance + 1;
    m->enc_buckets = hfx_arena_alloc(arena, (size_t)n * sizeof *m->enc_buckets);
    m->dec_buckets = hfx_arena_alloc(arena, (size_t)n * sizeof *m->dec_buckets);
    if (!m->enc_buckets || !m->dec_buckets) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    /* past ±max_distance every bucket saturates, so the distance is clamped there */
    for (int64_t dist = -m->max_distance; dist <= m->max_distance; dist++) {
        m->enc_buckets[dist + m->max_distance] = hfx_relative_bucket(dist, true, m->buckets, m->max_distance);
        m->dec_buckets[dist + m->max_distance] = hfx_relative_bucket(dist, false, m->buckets, m->max_distance);
    }
    return HFX_OK;
}

/* The activations (each stack's, under the layout's keys) and which linears and norms have biases. */
static hfx_status parse_acts_and_biases(const seq2seq_layout *L, hfx_cfg c, seq2seq_cfg *m, hfx_error *err) {
    hfx_status st;
    for (int s = 0; s < 2 && !L->relative; s++) { /* (T5's: feed_forward_proj) */
        const char *key = L->act_keys[s] ? L->act_keys[s] : "activation_function", *act;
        if ((st = hfx_cfg_str_or(c, key, s && L->act_keys[s] ? "silu" : "gelu", &act, err))) return st;
        if (!hfx_activation_from_name(act, &m->act[s]))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)", c.where, key, act,
                            hfx_activation_names());
    }
    bool attention_bias = false;
    if (L->bias == BIAS_MLP_AND_QKV_BY_CONFIG && (st = hfx_cfg_bool_or(c, "attention_bias", false, &attention_bias, err)))
        return st;
    bool all = L->bias == BIAS_ALL || L->bias == BIAS_ALL_BUT_KEY;
    m->qkv_bias = all || attention_bias;
    m->key_bias = L->bias == BIAS_ALL || attention_bias;
    m->out_bias = m->norm_bias = all;
    m->mlp_bias = all || L->bias == BIAS_MLP_AND_QKV_BY_CONFIG;
    return HFX_OK;
}

/* Moonshine's heads (head_dim where the config names one, both stacks alike) and rotary: transformers
 * builds both stacks' attention from one config it updates in passing, so heads that differ between the
 * stacks, or key/value heads other than the heads (its queries are viewed as key/value heads), are refused. */
static hfx_status parse_rotary(hfx_cfg c, hfx_arena *arena, seq2seq_cfg *m, hfx_error *err) {
    static const hfx_rope_source moonshine_rope = {.theta_key = "rope_theta", .default_theta = 10000.0, .scaling = true,
                                                  .partial = true, .default_partial = 0.9,
                                                  .partial_key = "partial_rotary_factor"};
    const char *kv_keys[2] = {"encoder_num_key_value_heads", "decoder_num_key_value_heads"};
    int64_t heads[2] = {m->enc_heads, m->dec_heads}, kv;
    hfx_status st;
    for (int s = 0; s < 2; s++) {
        if ((st = hfx_cfg_int_in_or(c, kv_keys[s], heads[s], 1, 4096, &kv, err))) return st;
        if (kv != heads[s] || heads[s] != heads[0])
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: encoder_num_attention_heads %lld, decoder_num_attention_heads %lld "
                            "and %s %lld: Moonshine's attention needs one head count for queries, keys and values in "
                            "both stacks (transformers reshapes its queries by the key/value heads and builds the decoder "
                            "with the encoder's heads)", c.where, (long long)heads[0], (long long)heads[1], kv_keys[s],
                            (long long)kv);
    }
    int64_t max_position;
    if ((st = hfx_cfg_int_in_or(c, "head_dim", m->hidden / m->enc_heads, 1, 1 << 16, &m->enc_hd, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_position_embeddings", 512, 1, 1 << 30, &max_position, err)))
        return st;
    m->dec_hd = m->enc_hd;
    if ((st = hfx_rope_parse(c, &moonshine_rope, m->enc_hd, max_position, arena, &m->rope, err))) return st;
    m->rope.interleaved = true;
    return HFX_OK;
}

/* Whisper's and Moonshine's: no scaled embeddings (Whisper's modules compute embed_scale and never apply it);
 * Whisper's input size. */
static hfx_status parse_audio(const seq2seq_desc *d, hfx_cfg c, seq2seq_cfg *m, hfx_error *err) {
    hfx_status st;
    m->scale_embedding = false;
    if (d->source == SRC_LOG_MEL &&
        ((st = hfx_cfg_int_in(c, "num_mel_bins", 1, 1 << 16, &m->mels, err)) ||
         (st = hfx_cfg_int_in(c, "max_source_positions", 1, 1 << 20, &m->source_positions, err))))
        return st;
    return HFX_OK;
}

/* Florence-2: its vision_config (DaViT), and its text_config (BART's keys) into *text for the rest of the parse. */
static hfx_status parse_image_text(hfx_cfg c, hfx_arena *arena, seq2seq_cfg *m, hfx_cfg *text, hfx_error *err) {
    hfx_cfg vision;
    hfx_status st;
    if ((st = hfx_cfg_object(c, "text_config", arena, text, err)) ||
        (st = hfx_cfg_object(c, "vision_config", arena, &vision, err)) || (st = hfx_davit_parse(vision, &m->davit, err)))
        return st;
    return hfx_cfg_int_in_or(c, "image_token_id", 51289, 0, INT32_MAX, &m->image_token, err);
}

hfx_status hfx_s2s_parse(const void *desc_, hfx_cfg top, hfx_arena *arena, void *cfg, hfx_error *err) {
    const seq2seq_desc *d = desc_;
    const seq2seq_layout *L = d->layout;
    seq2seq_cfg *m = cfg;
    hfx_cfg c = top;
    hfx_status st;
    if (d->source == SRC_IMAGE_TEXT && (st = parse_image_text(top, arena, m, &c, err))) return st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, L->hidden, 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, L->enc_layers, 0, 4096, &m->enc_layers, err)) ||
        /* T5's num_decoder_layers defaults to num_layers (T5Config); BART's decoder_layers is its own */
        (st = L->relative ? hfx_cfg_int_in_or(c, L->dec_layers, m->enc_layers, 1, 4096, &m->dec_layers, err)
                          : hfx_cfg_int_in(c, L->dec_layers, 1, 4096, &m->dec_layers, err)) ||
        (st = hfx_cfg_int_in(c, L->enc_heads, 1, 4096, &m->enc_heads, err)) ||
        (st = hfx_cfg_int_in(c, L->dec_heads, 1, 4096, &m->dec_heads, err)) ||
        (st = hfx_cfg_int_in(c, L->enc_ffn, 1, 1 << 24, &m->enc_ffn, err)) ||
        (st = hfx_cfg_int_in(c, L->dec_ffn, 1, 1 << 24, &m->dec_ffn, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (st = hfx_cfg_int_in_or(c, "decoder_vocab_size", m->vocab, 1, INT32_MAX, &m->dec_vocab, err)) ||
        (st = hfx_cfg_int_in_or(c, "pad_token_id", L->relative ? 0 : 1, 0, INT32_MAX, &m->pad, err)) ||
        (st = parse_acts_and_biases(L, c, m, err)))
        return st;
    m->source = d->source;
    if (L->relative) return parse_t5(d, c, arena, m, err);
    if (d->head == S2S_HEAD_CLASSIFIER && ((st = hfx_cfg_int_in(c, "eos_token_id", 0, INT32_MAX, &m->eos, err)) ||
                          (st = hfx_cfg_int_in(c, "decoder_start_token_id", 0, INT32_MAX, &m->start, err)) ||
                          (st = hfx_cfg_num_labels(c, &m->labels, err))))
        return st;
    if ((st = hfx_cfg_int_in(c, L->positions_rows, 1, 1 << 24, &m->max_position, err)) ||
        (st = hfx_cfg_bool_or(c, "scale_embedding", false, &m->scale_embedding, err)) ||
        (st = hfx_cfg_bool_or(c, "share_encoder_decoder_embeddings", true, &m->shared, err)) ||
        ((d->source == SRC_LOG_MEL || d->source == SRC_WAVEFORM) && (st = parse_audio(d, c, m, err))))
        return st;
    if (d->source == SRC_IMAGE_TEXT && m->image_token >= m->vocab)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: image_token_id %lld is outside text_config's vocabulary of %lld",
                        top.where, (long long)m->image_token, (long long)m->vocab);
    if (d->source == SRC_IMAGE_TEXT && m->davit.projection != m->hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: vision_config.projection_dim %lld is not text_config's d_model %lld "
                        "(the image features are the encoder's tokens)", top.where, (long long)m->davit.projection,
                        (long long)m->hidden);
    m->eps = 1e-5; /* nn.LayerNorm's default: every norm of these models */
    if (m->hidden % m->enc_heads || m->hidden % m->dec_heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %lld is not a multiple of the attention heads (%lld, %lld)",
                        c.where, L->hidden, (long long)m->hidden, (long long)m->enc_heads, (long long)m->dec_heads);
    m->enc_hd = m->hidden / m->enc_heads, m->dec_hd = m->hidden / m->dec_heads;
    if (d->positions == POS_ROTARY && (st = parse_rotary(c, arena, m, err))) return st;
    if (m->shared && m->dec_vocab != m->vocab)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: decoder_vocab_size %lld differs from vocab_size %lld with shared "
                        "embeddings", c.where, (long long)m->dec_vocab, (long long)m->vocab);
    if (d->positions == POS_SINUSOID) {
        int64_t half = m->hidden / 2;
        if (half < 2 || half > (int64_t)(sizeof m->inv_freq / sizeof m->inv_freq[0]))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: d_model %lld: sinusoidal positions need 4 ≤ d_model ≤ 8192",
                            c.where, (long long)m->hidden);
        /* torch: exp(arange(half).float() · −(ln 10⁴ / (half − 1))), the factor a float32 scalar */
        float step = (float)(-(log(10000.0) / (double)(half - 1)));
        for (int64_t k = 0; k < half; k++) m->inv_freq[k] = expf((float)k * step);
    }
    return HFX_OK;
}
