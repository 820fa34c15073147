/* The speech family: wav2vec 2.0-style encoders over the raw waveform, one template with a layout per lineage
 * (Wav2Vec2, HuBERT, UniSpeech, UniSpeech-SAT, WavLM, Data2VecAudio) and a descriptor per head.
 *
 * input_values [B, T] (16 kHz samples, normalized by the model's feature extractor) go through a stack of strided
 * Conv1d layers (the feature encoder: GELU after each, a GroupNorm of one channel per group after the first
 * where feat_extract_norm is "group", a LayerNorm after each where it is "layer") down to F frames, a LayerNorm
 * and a linear projection to the model's width, then a convolutional positional embedding (one wide grouped
 * Conv1d, its weight weight-normed; Data2VecAudio: a stack of narrower ones, each LayerNormed) added, and N
 * layers of bidirectional attention (WavLM's with a gated relative position bias) and an MLP: post-norm, a LayerNorm before the first, or (do_stable_layer_norm)
 * pre-norm with a LayerNorm after the last. Heads: CTC logits over the vocabulary per frame, the bare encoder's
 * last hidden state (and the normed conv features), an utterance classifier over the projected frames' mean.
 *
 * Where the feature extractor is "layer"-normed the processor also returns attention_mask [B, T] (1: a sample,
 * 0: padding), and the graph takes it: it becomes each row's frame count (the conv length formula applied to the
 * row's sample count), its padded frames zeroed before the positional convolution and hidden from attention, and
 * left out of the classifier's mean, as transformers does. The "group"-normed models take none (their
 * processor returns none: padding is zeros, read as silence).
 *
 * Component: a plain forward, `model`. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/conformer.h"
#include "arch/nn.h"
#include "arch/relative.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

#define MAX_CONV 16

/* A lineage's tensor names (under its prefix) and what differs in its graph. */
typedef struct speech_layout {
    const char *prefix;         /* "wav2vec2": where a head model keeps the encoder */
    bool extract_features;      /* the bare model also returns the normed conv features (not HuBERT's) */
    bool pos_conv_stack;        /* Data2VecAudio: num_conv_pos_embeddings convolutions of conv_pos_kernel_size, each
                                   with a LayerNorm without parameters, instead of one weight-normed one */
    bool optional_proj_norm;    /* HuBERT: feat_proj_layer_norm says whether the projection has its LayerNorm */
    bool pos_batch_norm;        /* HuBERT: conv_pos_batch_norm puts a BatchNorm before the positional convolution */
    const char *model_output;   /* the bare model's output class */
    bool relative;              /* WavLM: a relative position bias (T5's buckets over the frames, layer 0's table)
                                   on every layer's scores, gated per query and head by the layer's input */
    bool conformer;             /* Wav2Vec2-Conformer: conformer layers (conformer.h; their positions as the config
                                   says), the encoder's LayerNorm after the last; no positional convolution (its
                                   weights unused, as transformers leaves them) */
    const char *norms;          /* how the lineage norms whatever the config says: "layer" (Data2VecAudio: the feature
                                   encoder layer-normed, the layers post-norm); NULL: feat_extract_norm and
                                   do_stable_layer_norm */
} speech_layout;

static const speech_layout wav2vec2_layout = {.prefix = "wav2vec2", .extract_features = true,
                                              .model_output = "Wav2Vec2BaseModelOutput"};
static const speech_layout hubert_layout = {.prefix = "hubert", .optional_proj_norm = true, .pos_batch_norm = true,
                                            .model_output = "BaseModelOutput"};
static const speech_layout unispeech_layout = {.prefix = "unispeech", .extract_features = true,
                                               .model_output = "Wav2Vec2BaseModelOutput"};
static const speech_layout unispeech_sat_layout = {.prefix = "unispeech_sat", .extract_features = true,
                                                   .model_output = "Wav2Vec2BaseModelOutput"};
static const speech_layout wavlm_layout = {.prefix = "wavlm", .extract_features = true, .relative = true,
                                           .model_output = "Wav2Vec2BaseModelOutput"};
static const speech_layout wav2vec2_conformer_layout = {.prefix = "wav2vec2_conformer", .extract_features = true,
                                                        .conformer = true,
                                                        .model_output = "Wav2Vec2BaseModelOutput"};
static const speech_layout data2vec_audio_layout = {.prefix = "data2vec_audio", .extract_features = true,
                                                    .pos_conv_stack = true, .model_output = "Wav2Vec2BaseModelOutput",
                                                    .norms = "layer"};

typedef enum {
    HEAD_CTC,       /* logits [B, F, vocab] of lm_head */
    HEAD_MODEL,     /* last_hidden_state [B, F, hidden] (and extract_features [B, F, conv_dim[-1]]) */
    HEAD_CLASSIFIER /* logits [B, labels] of classifier(mean of projector(frames)) */
} speech_head;

struct speech_desc {
    const char *architecture;
    const speech_layout *layout;
    speech_head head;
};
typedef struct speech_desc speech_desc;

typedef struct speech_cfg {
    int64_t hidden, layers, heads, intermediate;
    int n_conv;
    int64_t conv_dim[MAX_CONV], conv_kernel[MAX_CONV], conv_stride[MAX_CONV];
    bool conv_bias, layer_norm_convs, stable, proj_norm, pos_batch_norm, masked;
    int64_t pos_kernel, pos_groups, pos_layers;
    double eps;
    hfx_activation act, feat_act;
    int64_t vocab, labels, projector;
    int64_t buckets, max_distance; /* WavLM's relative positions */
    int64_t *by_distance;          /* [2·max_distance + 1]: the bucket of distance j − i, clamped; arena */
    hfx_conformer conformer;       /* Wav2Vec2-Conformer's layers */
} speech_cfg;

/* (xielu's parameters are a decoder MLP's: not a speech tower's) */
static hfx_status activation_of(hfx_cfg c, const char *key, hfx_activation *out, hfx_error *err) {
    hfx_status st = hfx_cfg_activation(c, key, "gelu", out, err);
    if (!st && *out == HFX_ACT_XIELU)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s 'xielu' is not supported (supported: %s)", c.where, key,
                        hfx_activation_names());
    return st;
}

/* conv_dim, conv_kernel and conv_stride: lists of one length, of positive integers. */
static hfx_status conv_list(hfx_cfg c, const char *key, int64_t *out, int *n, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > MAX_CONV)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s must be a list of 1 to %d integers", c.where, key, MAX_CONV);
    if (*n && (int)json_array_size(v) != *n)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s has %zu entries, conv_dim %d", c.where, key,
                        json_array_size(v), *n);
    *n = (int)json_array_size(v);
    for (int i = 0; i < *n; i++) {
        const json_t *e = json_array_get(v, (size_t)i);
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 1 << 16)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: %s[%d] must be an integer in [1, 65536]", c.where, key, i);
        out[i] = json_integer_value(e);
    }
    return HFX_OK;
}

/* A config field that would change the graph in a way hfx does not build: refused by name. */
static hfx_status refuse_set(hfx_cfg c, const char *key, const char *why, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (v && !json_is_null(v) && !json_is_false(v))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s is set; %s", c.where, key, why);
    return HFX_OK;
}

static hfx_status speech_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const speech_desc *d = desc_;
    const speech_layout *L = d->layout;
    speech_cfg *m = cfg;
    const char *norm = L->norms;
    hfx_status st;
    int n = 0;
    if ((st = hfx_cfg_int_in(c, "hidden_size", 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, "num_hidden_layers", 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, "num_attention_heads", 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_int_in(c, "intermediate_size", 1, 1 << 24, &m->intermediate, err)) ||
        (st = hfx_cfg_num_or(c, "layer_norm_eps", 1e-5, &m->eps, err)) ||
        (st = activation_of(c, "hidden_act", &m->act, err)) ||
        (st = activation_of(c, "feat_extract_activation", &m->feat_act, err)) ||
        (st = conv_list(c, "conv_dim", m->conv_dim, &n, err)) || (st = conv_list(c, "conv_kernel", m->conv_kernel, &n, err)) ||
        (st = conv_list(c, "conv_stride", m->conv_stride, &n, err)) ||
        (st = hfx_cfg_bool_or(c, "conv_bias", false, &m->conv_bias, err)) ||
        (!L->norms && (st = hfx_cfg_str_or(c, "feat_extract_norm", "group", &norm, err))) ||
        (!L->norms && (st = hfx_cfg_bool_or(c, "do_stable_layer_norm", false, &m->stable, err))) ||
        (st = hfx_cfg_int_in_or(c, "num_conv_pos_embeddings", L->pos_conv_stack ? 5 : 128, 1, 1 << 12, &m->pos_layers,
                                err)) ||
        (st = hfx_cfg_int_in_or(c, "num_conv_pos_embedding_groups", 16, 1, 1 << 12, &m->pos_groups, err)) ||
        (st = hfx_cfg_bool_or(c, "feat_proj_layer_norm", true, &m->proj_norm, err)) ||
        (st = hfx_cfg_bool_or(c, "conv_pos_batch_norm", false, &m->pos_batch_norm, err)) ||
        (st = refuse_set(c, "add_adapter", "hfx does not export the adapter after the encoder", err)) ||
        (st = refuse_set(c, "adapter_attn_dim", "hfx does not export per-language attention adapters", err)))
        return st;
    m->n_conv = n;
    if (L->pos_conv_stack) { /* num_conv_pos_embeddings counts the stack's layers; conv_pos_kernel_size is each one's */
        if ((st = hfx_cfg_int_in_or(c, "conv_pos_kernel_size", 19, 1, 1 << 12, &m->pos_kernel, err))) return st;
    } else {
        m->pos_kernel = m->pos_layers;
        m->pos_layers = 1;
    }
    if (!L->optional_proj_norm) m->proj_norm = true;
    if (!L->pos_batch_norm && m->pos_batch_norm)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: conv_pos_batch_norm is HuBERT's", c.where);
    if (strcmp(norm, "group") && strcmp(norm, "layer"))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: feat_extract_norm '%s' is not supported (group, layer)", c.where,
                        norm);
    m->layer_norm_convs = m->masked = strcmp(norm, "layer") == 0; /* (its processor returns attention_mask) */
    if (m->hidden % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld",
                        c.where, (long long)m->hidden, (long long)m->heads);
    if (m->hidden % m->pos_groups)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not a multiple of num_conv_pos_embedding_groups "
                        "%lld", c.where, (long long)m->hidden, (long long)m->pos_groups);
    if (d->head == HEAD_CLASSIFIER &&
        (st = refuse_set(c, "use_weighted_layer_sum", "hfx classifies the last layer's frames only", err)))
        return st;
    if (L->relative) {
        if ((st = hfx_cfg_int_in_or(c, "num_buckets", 320, 4, 1 << 16, &m->buckets, err)) ||
            (st = hfx_cfg_int_in_or(c, "max_bucket_distance", 800, 1, 1 << 16, &m->max_distance, err)))
            return st;
        if (m->max_distance <= m->buckets / 4) /* the logarithmic buckets span a quarter of them .. max_distance */
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: max_bucket_distance %lld must exceed a quarter of num_buckets "
                            "%lld", c.where, (long long)m->max_distance, (long long)m->buckets);
        size_t rows = (size_t)(2 * m->max_distance + 1);
        if (!(m->by_distance = hfx_arena_alloc(arena, rows * sizeof *m->by_distance)))
            return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        for (int64_t dist = -m->max_distance; dist <= m->max_distance; dist++)
            m->by_distance[dist + m->max_distance] = hfx_relative_bucket(dist, true, m->buckets, m->max_distance);
    }
    if (L->conformer) {
        m->conformer = (hfx_conformer){.hidden = m->hidden, .heads = m->heads, .intermediate = m->intermediate,
                                       .act = m->act, .linear_bias = true};
        if ((st = hfx_conformer_parse(c, &m->conformer, err))) return st;
    }
    if (d->head == HEAD_CTC) return hfx_cfg_int_in(c, "vocab_size", 1, 1 << 24, &m->vocab, err);
    if (d->head == HEAD_CLASSIFIER) {
        if ((st = hfx_cfg_num_labels(c, &m->labels, err))) return st;
        return hfx_cfg_int_in_or(c, "classifier_proj_size", 256, 1, 1 << 20, &m->projector, err);
    }
    return HFX_OK;
}

typedef struct speech_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const speech_cfg *m;
    char prefix[32];   /* "wav2vec2." */
    hfx_value *pad;    /* [B,1,1,F] f32: 0 for real frames, the float32 minimum for padding (zeros without a mask) */
    hfx_value *rel;    /* WavLM: the relative position bias [1,heads,F,F] f32 of layer 0's table */
} speech_ctx;

static hfx_value *dense(speech_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    return hfx_linear_named(c->w, x, in, out, true, "%s", name);
}

/* nn.LayerNorm over the last axis (of width n) of x, its weight and bias "<name>.weight"/".bias". */
static hfx_value *norm(speech_ctx *c, hfx_value *x, int64_t n, double eps, const char *name) {
    return hfx_layer_norm_named(c->w, x, n, eps, "%s", name);
}

/* x [B,C,F] through `name`'s LayerNorm over its channels (eps 1e-5, nn.LayerNorm's default), frames kept last. */
static hfx_value *channel_norm(speech_ctx *c, hfx_value *x, const char *name) {
    hfx_graph *g = c->g;
    hfx_value *t = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1});
    t = name ? norm(c, t, x->dims[1].c, 1e-5, name) : hfx_layer_norm(g, t, NULL, NULL, 1e-5);
    return hfx_transpose(g, t, 3, (int64_t[]){0, 2, 1});
}

/* A per-channel vector v [C] as [C,1], to scale x [B,C,F]. */
static hfx_value *column(speech_ctx *c, hfx_value *v) {
    return hfx_reshape(c->g, v, 2, (hfx_dim[]){v->dims[0], hfx_dim_const(1)});
}

/* GroupNorm with one channel per group over x [B,C,F]: each channel normalized over its frames (eps 1e-5),
 * then scaled and shifted per channel. */
static hfx_value *group_norm(speech_ctx *c, hfx_value *x, const char *name) {
    int64_t C = x->dims[1].c;
    return hfx_group_norm(c->g, x, C, hfx_weight(c->w, 1, &C, "%s.weight", name), hfx_weight(c->w, 1, &C, "%s.bias", name),
                          1e-5);
}

/* The feature encoder over input_values [B,T]: its convolutions, [B, F, conv_dim[-1]]. */
static hfx_value *feature_encoder(speech_ctx *c, hfx_value *samples) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *x = hfx_unsqueeze(g, samples, 1); /* [B,1,T] */
    int64_t in = 1;
    char n[128], frames[32];
    for (int i = 0; i < m->n_conv && !g->failed; i++) {
        snprintf(n, sizeof n, "%sfeature_extractor.conv_layers.%d", c->prefix, i);
        hfx_value *w = hfx_weight(c->w, 3, (int64_t[]){m->conv_dim[i], in, m->conv_kernel[i]}, "%s.conv.weight", n);
        hfx_value *b = m->conv_bias ? hfx_weight(c->w, 1, &m->conv_dim[i], "%s.conv.bias", n) : NULL;
        if (i == m->n_conv - 1) snprintf(frames, sizeof frames, "frames");
        else snprintf(frames, sizeof frames, "conv%d_frames", i);
        x = hfx_conv1d(g, x, w, b, m->conv_stride[i], 0, 1, frames);
        snprintf(n + strlen(n), sizeof n - strlen(n), ".layer_norm");
        if (m->layer_norm_convs) x = channel_norm(c, x, n);
        else if (i == 0) x = group_norm(c, x, n);
        x = hfx_activate(g, m->feat_act, x);
        in = m->conv_dim[i];
    }
    return hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1});
}

/* Each row's frame mask [B,F] bool from attention_mask [B,T], for features x [B,F,·]: its sample count through
 * every convolution's ⌊(n − kernel)/stride⌋ + 1 (none where that is below one), frames before it kept. */
static hfx_value *frame_mask(speech_ctx *c, hfx_value *mask, hfx_value *x) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t axis = 1;
    hfx_value *n = hfx_reduce(g, HFX_OP_REDUCE_SUM, mask, 1, &axis); /* [B,1] */
    for (int i = 0; i < m->n_conv; i++) { /* (a non-negative dividend: the IR's integer division floors it) */
        n = hfx_op2(g, HFX_OP_ADD, n, hfx_const_i64(g, m->conv_stride[i] - m->conv_kernel[i]));
        n = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_MAX, n, hfx_const_i64(g, 0)), hfx_const_i64(g, m->conv_stride[i]));
    }
    hfx_value *frames = hfx_gather(g, hfx_shape_of(g, x), hfx_const_i64(g, 1), 0);
    hfx_value *idx = hfx_range(g, hfx_const_i64(g, 0), frames, hfx_const_i64(g, 1), x->dims[1]);
    return hfx_op2(g, HFX_OP_LESS, hfx_unsqueeze(g, idx, 0), n); /* [B,F] */
}

/* The positional convolution's weight [H, H/groups, k] from its weight norm: g·v/‖v‖, the norm over every axis
 * but the kernel's (nn.utils.weight_norm(dim=2)), in float32. transformers 5 saves v and g as
 * parametrizations.weight.original1 and original0; older checkpoints as weight_v and weight_g. */
static hfx_value *normed_weight(speech_ctx *c, const char *conv, int64_t k) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    char gn[224], vn[224];
    snprintf(gn, sizeof gn, "%s.parametrizations.weight.original0", conv);
    snprintf(vn, sizeof vn, "%s.parametrizations.weight.original1", conv);
    if (!hfx_weight_exists(c->w, gn)) {
        snprintf(gn, sizeof gn, "%s.weight_g", conv);
        snprintf(vn, sizeof vn, "%s.weight_v", conv);
    }
    hfx_value *gain = hfx_weight_f32(c->w, 3, (int64_t[]){1, 1, k}, gn);
    hfx_value *v = hfx_weight_f32(c->w, 3, (int64_t[]){m->hidden, m->hidden / m->pos_groups, k}, vn);
    int64_t axes[2] = {0, 1};
    hfx_value *len = hfx_op1(g, HFX_OP_SQRT, hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, v, v), 2, axes));
    hfx_value *w = hfx_op2(g, HFX_OP_MUL, v, hfx_op2(g, HFX_OP_DIV, gain, len));
    return c->w->dtype == HFX_DTYPE_F32 ? w : hfx_cast(g, w, c->w->dtype);
}

/* HuBERT's BatchNorm1d (running statistics, eps 1e-5) over the channels of x [B,H,F]. */
static hfx_value *batch_norm(speech_ctx *c, hfx_value *x, const char *name) {
    const int64_t *h = &c->m->hidden;
    char n[224];
    snprintf(n, sizeof n, "%s.num_batches_tracked", name);
    hfx_weight_ignore(c->w, n);
    return hfx_batch_norm(c->g, x, column(c, hfx_weight(c->w, 1, h, "%s.running_mean", name)),
                          column(c, hfx_weight(c->w, 1, h, "%s.running_var", name)),
                          column(c, hfx_weight(c->w, 1, h, "%s.weight", name)),
                          column(c, hfx_weight(c->w, 1, h, "%s.bias", name)), 1e-5);
}

/* The convolutional positional embedding of x [B,F,H]: [B,F,H]. Each convolution pads k/2 frames at each end and
 * drops its last output where k is even (the same length back). */
static hfx_value *positions(speech_ctx *c, const speech_layout *L, hfx_value *x) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t k = m->pos_kernel;
    char n[160];
    hfx_value *y = hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1}); /* [B,H,F] */
    hfx_value *kept = NULL; /* an even kernel's frames [F] i64 of its F + 1 outputs */
    if (k % 2 == 0)
        kept = hfx_range(g, hfx_const_i64(g, 0), hfx_gather(g, hfx_shape_of(g, x), hfx_const_i64(g, 1), 0),
                         hfx_const_i64(g, 1), x->dims[1]);
    if (m->pos_batch_norm) {
        snprintf(n, sizeof n, "%sencoder.pos_conv_embed.batch_norm", c->prefix);
        y = batch_norm(c, y, n);
    }
    for (int64_t i = 0; i < m->pos_layers && !g->failed; i++) {
        if (L->pos_conv_stack) snprintf(n, sizeof n, "%sencoder.pos_conv_embed.layers.%lld.conv", c->prefix, (long long)i);
        else snprintf(n, sizeof n, "%sencoder.pos_conv_embed.conv", c->prefix);
        hfx_value *w = L->pos_conv_stack || m->pos_batch_norm /* (HuBERT's with a BatchNorm has no weight norm) */
                           ? hfx_weight(c->w, 3, (int64_t[]){m->hidden, m->hidden / m->pos_groups, k}, "%s.weight", n)
                           : normed_weight(c, n, k);
        y = hfx_conv1d(g, y, w, hfx_weight(c->w, 1, &m->hidden, "%s.bias", n), 1, k / 2, m->pos_groups, NULL);
        if (kept) y = hfx_gather(g, y, kept, 2);
        if (L->pos_conv_stack) y = channel_norm(c, y, NULL);
        y = hfx_activate(g, m->feat_act, y);
    }
    return hfx_transpose(g, y, 3, (int64_t[]){0, 2, 1});
}

/* t [B,F,H] as heads [B,heads,F,hd]. */
static hfx_value *split_heads(speech_ctx *c, hfx_value *t) {
    int64_t H = c->m->heads, hd = c->m->hidden / H;
    t = hfx_reshape(c->g, t, 4, (hfx_dim[]){t->dims[0], t->dims[1], hfx_dim_const(H), hfx_dim_const(hd)});
    return hfx_transpose(c->g, t, 4, (int64_t[]){0, 2, 1, 3});
}

/* WavLM's gated relative bias of a layer with input x [B,F,H]: each head's slice of x through gru_rel_pos_linear
 * (→ 8, summed in two groups of 4) and a sigmoid gives gates a, b; the query's bias row scaled by a·(b·const − 1) + 2:
 * [B,heads,F,F] f32. */
static hfx_value *gated_relative(speech_ctx *c, hfx_value *x, const char *layer) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->heads, hd = m->hidden / H;
    char n[192];
    snprintf(n, sizeof n, "%s.attention.gru_rel_pos_linear", layer);
    hfx_value *p = dense(c, split_heads(c, x), hd, 8, n); /* [B,heads,F,8] */
    p = hfx_reshape(g, p, 5, (hfx_dim[]){x->dims[0], hfx_dim_const(H), x->dims[1], hfx_dim_const(2), hfx_dim_const(4)});
    int64_t last = 4;
    p = hfx_op1(g, HFX_OP_SIGMOID, hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, p, 1, &last), 4,
                                              (hfx_dim[]){x->dims[0], hfx_dim_const(H), x->dims[1], hfx_dim_const(2)}));
    hfx_value *a = hfx_slice(g, p, 3, 0, 1), *b = hfx_slice(g, p, 3, 1, 2); /* [B,heads,F,1] */
    hfx_value *k = hfx_weight(c->w, 4, (int64_t[]){1, H, 1, 1}, "%s.attention.gru_rel_pos_const", layer);
    hfx_value *gate = hfx_op2(g, HFX_OP_MUL, a, hfx_op2(g, HFX_OP_SUB, hfx_op2(g, HFX_OP_MUL, b, k),
                                                        hfx_const_scalar(g, x->dtype, 1.0)));
    gate = hfx_op2(g, HFX_OP_ADD, gate, hfx_const_scalar(g, x->dtype, 2.0));
    return hfx_op2(g, HFX_OP_MUL, hfx_cast(g, gate, HFX_DTYPE_F32), c->rel);
}

static hfx_value *attention(speech_ctx *c, hfx_value *x, const char *layer) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t h = m->hidden;
    char n[192];
    hfx_value *bias = c->rel ? hfx_op2(g, HFX_OP_ADD, gated_relative(c, x, layer), c->pad) : c->pad;
    hfx_value *qkv[3];
    static const char *const names[3] = {"q_proj", "k_proj", "v_proj"};
    for (int j = 0; j < 3; j++) {
        snprintf(n, sizeof n, "%s.attention.%s", layer, names[j]);
        qkv[j] = split_heads(c, dense(c, x, h, h, n));
    }
    hfx_value *a = hfx_attention(g, qkv[0], qkv[1], qkv[2], bias, 1.0 / sqrt((double)(h / m->heads)), 0.0, 0);
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(h)});
    snprintf(n, sizeof n, "%s.attention.out_proj", layer);
    return dense(c, a, h, h, n);
}

static hfx_value *feed_forward(speech_ctx *c, hfx_value *x, const char *layer) {
    const speech_cfg *m = c->m;
    char n[192];
    snprintf(n, sizeof n, "%s.feed_forward.intermediate_dense", layer);
    hfx_value *y = hfx_activate(c->g, m->act, dense(c, x, m->hidden, m->intermediate, n));
    snprintf(n, sizeof n, "%s.feed_forward.output_dense", layer);
    return dense(c, y, m->intermediate, m->hidden, n);
}

/* The encoder over the projected frames x [B,F,H] (padded frames already zeroed), attending as `bias`
 * [B,1,1,F] says (zeros where every frame is real). */
/* Wav2Vec2-Conformer's encoder over the frames x [B,F,H]: its conformer layers, then its LayerNorm. */
static hfx_value *conformer_encoder(speech_ctx *c, hfx_value *x) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    char n[160];
    snprintf(n, sizeof n, "%sencoder.pos_conv_embed", c->prefix); /* (built, never called) */
    hfx_weights_ignore_stack(c->w, n);
    hfx_conformer_inputs in;
    hfx_value *inv_freq = NULL; /* the rotary's, where saved (a persistent buffer, which transformers loads) */
    snprintf(n, sizeof n, "%sencoder.embed_positions.inv_freq", c->prefix);
    if (m->conformer.pos == HFX_CONFORMER_POS_ROTARY && hfx_weight_exists(c->w, n))
        inv_freq = hfx_weight_f32(c->w, 1, (int64_t[]){m->hidden / m->heads / 2}, n);
    hfx_conformer_prepare(&m->conformer, g, x, c->pad, inv_freq, &in);
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        snprintf(n, sizeof n, "%sencoder.layers.%lld", c->prefix, (long long)i);
        x = hfx_conformer_layer(&m->conformer, g, c->w, n, &in, x);
    }
    snprintf(n, sizeof n, "%sencoder.layer_norm", c->prefix);
    return norm(c, x, m->hidden, m->eps, n);
}

static hfx_value *encoder(speech_ctx *c, const speech_layout *L, hfx_value *x) {
    const speech_cfg *m = c->m;
    hfx_graph *g = c->g;
    char n[160], layer[128];
    if (L->conformer) return conformer_encoder(c, x);
    x = hfx_op2(g, HFX_OP_ADD, x, positions(c, L, x));
    if (L->relative) { /* layer 0's table serves every layer */
        snprintf(n, sizeof n, "%sencoder.layers.0.attention.rel_attn_embed.weight", c->prefix);
        hfx_value *table = hfx_weight(c->w, 2, (int64_t[]){m->buckets, m->heads}, "%s", n);
        hfx_value *frames = hfx_dim_of(g, x, 1);
        hfx_value *q = hfx_range(g, hfx_const_i64(g, 0), frames, hfx_const_i64(g, 1), x->dims[1]);
        c->rel = hfx_relative_bias(g, table, m->by_distance, m->max_distance, q, frames, x->dims[1]);
    }
    snprintf(n, sizeof n, "%sencoder.layer_norm", c->prefix);
    if (!m->stable) x = norm(c, x, m->hidden, m->eps, n);
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        snprintf(layer, sizeof layer, "%sencoder.layers.%lld", c->prefix, (long long)i);
        char n1[192], n2[192];
        snprintf(n1, sizeof n1, "%s.layer_norm", layer);
        snprintf(n2, sizeof n2, "%s.final_layer_norm", layer);
        if (m->stable) { /* pre-norm */
            x = hfx_op2(g, HFX_OP_ADD, x, attention(c, norm(c, x, m->hidden, m->eps, n1), layer));
            x = hfx_op2(g, HFX_OP_ADD, x, feed_forward(c, norm(c, x, m->hidden, m->eps, n2), layer));
        } else { /* post-norm */
            x = norm(c, hfx_op2(g, HFX_OP_ADD, x, attention(c, x, layer)), m->hidden, m->eps, n1);
            x = norm(c, hfx_op2(g, HFX_OP_ADD, x, feed_forward(c, x, layer)), m->hidden, m->eps, n2);
        }
    }
    return m->stable ? norm(c, x, m->hidden, m->eps, n) : x;
}

/* The fewest samples that make one frame: the feature encoder's receptive field (saturating at 2^40: more than any
 * export takes). */
static int64_t receptive_field(const speech_cfg *m) {
    int64_t n = 1;
    for (int i = m->n_conv - 1; i >= 0 && n < (int64_t)1 << 40; i--) n = (n - 1) * m->conv_stride[i] + m->conv_kernel[i];
    return n < (int64_t)1 << 40 ? n : (int64_t)1 << 40;
}

static hfx_status speech_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                               hfx_graph *g, hfx_error *err) {
    const speech_desc *d = desc_;
    const speech_layout *L = d->layout;
    const speech_cfg *m = cfg_;
    hfx_status st;
    char what[1200];
    snprintf(what, sizeof what, "the feature encoder (%s/config.json's conv_kernel and conv_stride)",
             hfx_checkpoint_dir(ck));
    if ((st = hfx_samples_at_least(g, o->seq, receptive_field(m), what, err))) return st;
    hfx_weights w;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    speech_ctx c = {g, &w, m, "", NULL, NULL};
    char n[160];
    snprintf(n, sizeof n, "%s.feature_extractor.conv_layers.0.conv.weight", L->prefix);
    if (hfx_weight_exists(&w, n)) snprintf(c.prefix, sizeof c.prefix, "%s.", L->prefix);
    hfx_value *samples = hfx_graph_input(g, "input_values", o->dtype, 2, (hfx_dim[]){o->batch, o->seq});
    hfx_value *mask = m->masked ? hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq})
                                : NULL;
    hfx_value *features = feature_encoder(&c, samples); /* [B,F,C] */
    int64_t C = m->conv_dim[m->n_conv - 1];
    snprintf(n, sizeof n, "%sfeature_projection.layer_norm", c.prefix);
    hfx_value *normed = m->proj_norm ? norm(&c, features, C, m->eps, n) : features;
    snprintf(n, sizeof n, "%sfeature_projection.projection", c.prefix);
    hfx_value *x = dense(&c, normed, C, m->hidden, n);
    hfx_value *keep = mask ? frame_mask(&c, mask, x) : NULL; /* [B,F] */
    if (keep) {
        x = hfx_where(g, hfx_unsqueeze(g, keep, 2), x, hfx_const_scalar(g, x->dtype, 0.0));
        c.pad = hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, keep, 1), 1), hfx_const_f32(g, 0.0f),
                         hfx_const_f32(g, -3.4028234663852886e38f));
    } else {
        hfx_value *zero = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, x, 2, 0, 1), hfx_const_scalar(g, x->dtype, 0.0)); /* [B,F,1] */
        c.pad = hfx_unsqueeze(g, hfx_transpose(g, hfx_cast(g, zero, HFX_DTYPE_F32), 3, (int64_t[]){0, 2, 1}), 1);
    }
    x = encoder(&c, L, x);
    if (d->head == HEAD_CTC) {
        hfx_graph_output(g, dense(&c, x, m->hidden, m->vocab, "lm_head"), "logits");
    } else if (d->head == HEAD_CLASSIFIER) {
        hfx_value *p = dense(&c, x, m->hidden, m->projector, "projector"); /* [B,F,P] */
        int64_t axis = 1;
        hfx_value *pooled;
        if (keep) { /* the real frames' mean */
            hfx_value *k = hfx_cast(g, hfx_unsqueeze(g, keep, 2), p->dtype);
            hfx_value *sum = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, p, k), 1, &axis);
            pooled = hfx_op2(g, HFX_OP_DIV, sum, hfx_reduce(g, HFX_OP_REDUCE_SUM, k, 1, &axis));
        } else {
            pooled = hfx_reduce(g, HFX_OP_REDUCE_MEAN, p, 1, &axis);
        }
        pooled = hfx_reshape(g, pooled, 2, (hfx_dim[]){o->batch, hfx_dim_const(m->projector)});
        hfx_graph_output(g, dense(&c, pooled, m->projector, m->labels, "classifier"), "logits");
    } else {
        hfx_graph_output(g, x, "last_hidden_state");
        if (L->extract_features) hfx_graph_output(g, normed, "extract_features");
    }
    snprintf(n, sizeof n, "%smasked_spec_embed", c.prefix); /* (training's time masking) */
    if (hfx_weight_exists(&w, n)) hfx_weight_ignore(&w, n);
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static const char *const samples_only[] = {"input_values", NULL};
static const char *const samples_masked[] = {"input_values", "attention_mask", NULL};

static const char *const *speech_inputs(const void *cfg) {
    return ((const speech_cfg *)cfg)->masked ? samples_masked : samples_only;
}

static hfx_torch_signature speech_torch_signature(const void *desc_) {
    const speech_desc *d = desc_;
    return (hfx_torch_signature){.args = samples_masked, .output_class = d->head == HEAD_CTC          ? "CausalLMOutput"
                                                 : d->head == HEAD_CLASSIFIER ? "SequenceClassifierOutput"
                                                                              : d->layout->model_output};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};

const hfx_arch_family hfx_speech_family = {
    .cfg_size = sizeof(speech_cfg),
    .parse = speech_parse,
    .build_forward = speech_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = samples_masked,
    .sequence_inputs_of = speech_inputs,
    .torch_signature = speech_torch_signature,
};

#define SPEECH(id, arch, layout, head) const speech_desc id = {arch, &layout, head};
SPEECH(hfx_wav2vec2_ctc, "Wav2Vec2ForCTC", wav2vec2_layout, HEAD_CTC)
SPEECH(hfx_wav2vec2_model, "Wav2Vec2Model", wav2vec2_layout, HEAD_MODEL)
SPEECH(hfx_wav2vec2_classifier, "Wav2Vec2ForSequenceClassification", wav2vec2_layout, HEAD_CLASSIFIER)
SPEECH(hfx_hubert_ctc, "HubertForCTC", hubert_layout, HEAD_CTC)
SPEECH(hfx_hubert_model, "HubertModel", hubert_layout, HEAD_MODEL)
SPEECH(hfx_hubert_classifier, "HubertForSequenceClassification", hubert_layout, HEAD_CLASSIFIER)
SPEECH(hfx_unispeech_ctc, "UniSpeechForCTC", unispeech_layout, HEAD_CTC)
SPEECH(hfx_unispeech_model, "UniSpeechModel", unispeech_layout, HEAD_MODEL)
SPEECH(hfx_unispeech_classifier, "UniSpeechForSequenceClassification", unispeech_layout, HEAD_CLASSIFIER)
SPEECH(hfx_unispeech_sat_ctc, "UniSpeechSatForCTC", unispeech_sat_layout, HEAD_CTC)
SPEECH(hfx_unispeech_sat_model, "UniSpeechSatModel", unispeech_sat_layout, HEAD_MODEL)
SPEECH(hfx_unispeech_sat_classifier, "UniSpeechSatForSequenceClassification", unispeech_sat_layout, HEAD_CLASSIFIER)
SPEECH(hfx_wavlm_ctc, "WavLMForCTC", wavlm_layout, HEAD_CTC)
SPEECH(hfx_wavlm_model, "WavLMModel", wavlm_layout, HEAD_MODEL)
SPEECH(hfx_wavlm_classifier, "WavLMForSequenceClassification", wavlm_layout, HEAD_CLASSIFIER)
SPEECH(hfx_wav2vec2_conformer_ctc, "Wav2Vec2ConformerForCTC", wav2vec2_conformer_layout, HEAD_CTC)
SPEECH(hfx_wav2vec2_conformer_model, "Wav2Vec2ConformerModel", wav2vec2_conformer_layout, HEAD_MODEL)
SPEECH(hfx_wav2vec2_conformer_classifier, "Wav2Vec2ConformerForSequenceClassification", wav2vec2_conformer_layout,
       HEAD_CLASSIFIER)
SPEECH(hfx_data2vec_audio_ctc, "Data2VecAudioForCTC", data2vec_audio_layout, HEAD_CTC)
SPEECH(hfx_data2vec_audio_model, "Data2VecAudioModel", data2vec_audio_layout, HEAD_MODEL)
SPEECH(hfx_data2vec_audio_classifier, "Data2VecAudioForSequenceClassification", data2vec_audio_layout,
       HEAD_CLASSIFIER)
#undef SPEECH
