/* Granite Speech's audio encoder (transformers' GraniteSpeechCTCEncoder and GraniteSpeechEncoderProjector): the
 * stacked log-mel frames [N, T, input_dim] through input_linear and conformer layers (conformer.c) whose attention is
 * Shaw's within blocks of context_size frames; after the middle layer (num_layers / 2) the frames gain out_mid of the
 * softmax of their CTC logits (out), as the encoder conditions itself. Then the projector: the frames zero-padded to
 * whole windows of window_size, each window read by window_size / downsample_rate learned queries through BLIP-2's
 * Q-Former (self-attention over the queries, cross-attention to the window every cross_attention_frequency layers,
 * the queries' feed-forward; post-LayerNorms), and one linear into the language model's width. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/audio_tower.h"
#include "base/status.h"

static const hfx_conformer_names granite_names = {
    {"ff1", "ff2"}, "up_proj", "down_proj", {"ff1.pre_norm", "ff2.pre_norm"},
    "attn.pre_norm", {"attn.to_q", "attn.to_kv", NULL, "attn.to_out"}, "attn.rel_pos_emb", {NULL, NULL},
    "conv.norm", {"conv.up_conv", "conv.depth_conv.conv", "conv.down_conv"}, "conv.batch_norm", "post_norm"};

static hfx_status parse_encoder(hfx_cfg e, hfx_granite_speech_encoder *t, hfx_error *err) {
    int64_t mult, expansion, head_dim;
    hfx_conformer *cf = &t->conformer;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(e, "input_dim", 160, 1, 1 << 16, &t->input_dim, err)) ||
        (st = hfx_cfg_int_in_or(e, "num_layers", 10, 1, 1024, &t->layers, err)) ||
        (st = hfx_cfg_int_in_or(e, "hidden_dim", 1024, 1, 1 << 16, &cf->hidden, err)) ||
        (st = hfx_cfg_int_in_or(e, "feedforward_mult", 4, 1, 64, &mult, err)) ||
        (st = hfx_cfg_int_in_or(e, "num_heads", 8, 1, 1024, &cf->heads, err)) ||
        (st = hfx_cfg_int_in_or(e, "dim_head", cf->hidden / cf->heads, 1, 1 << 16, &head_dim, err)) ||
        (st = hfx_cfg_int_in_or(e, "output_dim", 42, 1, 1 << 20, &t->ctc, err)) ||
        (st = hfx_cfg_int_in_or(e, "context_size", 200, 1, 1 << 14, &cf->block, err)) ||
        (st = hfx_cfg_int_in_or(e, "max_pos_emb", 512, 1, 1 << 16, &cf->max_distance, err)) ||
        (st = hfx_cfg_int_in_or(e, "conv_kernel_size", 15, 1, 1 << 12, &cf->kernel, err)) ||
        (st = hfx_cfg_int_in_or(e, "conv_expansion_factor", 2, 1, 64, &expansion, err)))
        return st;
    if (head_dim * cf->heads != cf->hidden)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: dim_head %lld × num_heads %lld is not hidden_dim %lld (an inner "
                                                  "width of its own is not written)", e.where, (long long)head_dim,
                        (long long)cf->heads, (long long)cf->hidden);
    if (cf->block > cf->max_distance) /* (transformers raises) */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: context_size %lld exceeds max_pos_emb %lld", e.where,
                        (long long)cf->block, (long long)cf->max_distance);
    cf->intermediate = cf->hidden * mult, cf->conv_inner = cf->hidden * expansion;
    cf->act = HFX_ACT_SILU, cf->pos = HFX_CONFORMER_POS_SHAW_BLOCKS, cf->names = &granite_names;
    cf->linear_bias = true, cf->qkv_unbiased = true, cf->conv_bias = true, cf->depthwise_unbiased = true;
    return HFX_OK;
}

static hfx_status parse_qformer(hfx_cfg q, const hfx_granite_speech_encoder *t, hfx_granite_qformer *f, hfx_error *err) {
    const char *type, *act;
    hfx_status st;
    if ((st = hfx_cfg_str_or(q, "model_type", "blip_2_qformer", &type, err)) ||
        (st = hfx_cfg_int_in_or(q, "hidden_size", 768, 1, 1 << 16, &f->hidden, err)) ||
        (st = hfx_cfg_int_in_or(q, "num_hidden_layers", 12, 1, 1024, &f->layers, err)) ||
        (st = hfx_cfg_int_in_or(q, "num_attention_heads", 12, 1, 1024, &f->heads, err)) ||
        (st = hfx_cfg_int_in_or(q, "intermediate_size", 3072, 1, 1 << 20, &f->intermediate, err)) ||
        (st = hfx_cfg_int_in_or(q, "cross_attention_frequency", 2, 1, 1024, &f->cross_every, err)) ||
        (st = hfx_cfg_int_in_or(q, "encoder_hidden_size", 1408, 1, 1 << 16, &f->encoder_hidden, err)) ||
        (st = hfx_cfg_num_or(q, "layer_norm_eps", 1e-12, &f->eps, err)) ||
        (st = hfx_cfg_str_or(q, "hidden_act", "gelu", &act, err)))
        return st;
    if (strcmp(type, "blip_2_qformer") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: model_type '%s': Granite Speech's projector is written for "
                                                  "blip_2_qformer", q.where, type);
    if (f->hidden % f->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld",
                        q.where, (long long)f->hidden, (long long)f->heads);
    if (f->encoder_hidden != t->conformer.hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: encoder_hidden_size %lld is not the encoder's hidden_dim %lld",
                        q.where, (long long)f->encoder_hidden, (long long)t->conformer.hidden);
    if (!hfx_activation_from_name(act, &f->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: hidden_act '%s' is not supported (known: %s)", q.where, act,
                        hfx_activation_names());
    if (!(f->eps > 0 && f->eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: layer_norm_eps %g out of range", q.where, f->eps);
    return HFX_OK;
}

hfx_status hfx_granite_speech_parse(hfx_cfg c, hfx_cfg encoder, hfx_cfg projector, hfx_granite_speech_encoder *t,
                                    hfx_error *err) {
    hfx_status st;
    memset(t, 0, sizeof *t);
    if ((st = parse_encoder(encoder, t, err)) || (st = parse_qformer(projector, t, &t->qformer, err)) ||
        (st = hfx_cfg_int_in_or(c, "window_size", 15, 1, 1 << 14, &t->window, err)) ||
        (st = hfx_cfg_int_in_or(c, "downsample_rate", 5, 1, 1 << 14, &t->downsample, err)))
        return st;
    if (t->window % t->downsample)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: window_size %lld is not a multiple of downsample_rate %lld (the "
                                                  "queries' tokens would not fill the windows)", c.where,
                        (long long)t->window, (long long)t->downsample);
    return HFX_OK;
}

typedef struct granite_ctx {
    const hfx_granite_speech_encoder *t;
    hfx_graph *g;
    hfx_weights *w;
    const char *prefix; /* "model.projector.qformer.encoder.layer.3." */
} granite_ctx;

static hfx_value *dense(granite_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    return hfx_linear_named(c->w, x, in, out, true, "%s%s", c->prefix, name);
}

static hfx_value *layer_norm(granite_ctx *c, hfx_value *x, int64_t n, const char *name) {
    return hfx_layer_norm_named(c->w, x, n, c->t->qformer.eps, "%s%s", c->prefix, name);
}

/* x [a, b, S, D] as heads [a, b, heads, S, D / heads] */
static hfx_value *heads(granite_ctx *c, hfx_value *x) {
    const hfx_granite_qformer *f = &c->t->qformer;
    int64_t hd = f->hidden / f->heads;
    x = hfx_reshape(c->g, x, 5, (hfx_dim[]){x->dims[0], x->dims[1], x->dims[2], hfx_dim_const(f->heads),
                                            hfx_dim_const(hd)});
    return hfx_transpose(c->g, x, 5, (int64_t[]){0, 1, 3, 2, 4});
}

/* Blip2QFormerAttention `name` of the queries x [a, b, Q, D] over `from` [N, nb, S, width] (x itself: NULL):
 * LayerNorm(x + dense(attention)), [N|a, nb|b, Q, D] */
static hfx_value *qformer_attention(granite_ctx *c, hfx_value *x, hfx_value *from, int64_t width, const char *name) {
    hfx_graph *g = c->g;
    int64_t D = c->t->qformer.hidden, hd = D / c->t->qformer.heads;
    char n[96];
    snprintf(n, sizeof n, "%s.attention.query", name);
    hfx_value *q = heads(c, dense(c, x, D, D, n));
    snprintf(n, sizeof n, "%s.attention.key", name);
    hfx_value *k = heads(c, dense(c, from ? from : x, from ? width : D, D, n));
    snprintf(n, sizeof n, "%s.attention.value", name);
    hfx_value *v = heads(c, dense(c, from ? from : x, from ? width : D, D, n));
    hfx_value *a = hfx_attend_any_rank(g, q, k, v, NULL, 1.0 / sqrt((double)hd)); /* [·, ·, heads, Q, hd] */
    a = hfx_transpose(g, a, 5, (int64_t[]){0, 1, 3, 2, 4});
    a = hfx_reshape(g, a, 4, (hfx_dim[]){a->dims[0], a->dims[1], a->dims[2], hfx_dim_const(D)});
    snprintf(n, sizeof n, "%s.output.dense", name);
    a = dense(c, a, D, D, n);
    snprintf(n, sizeof n, "%s.output.LayerNorm", name);
    return layer_norm(c, hfx_op2(g, HFX_OP_ADD, a, x), D, n);
}

/* The projector under `prefix` over the encoder's frames x [N, T, hidden]: [N, ⌈T/window⌉·window/downsample, out] */
static hfx_value *project(granite_ctx *c, const char *prefix, hfx_value *x, int64_t out) {
    const hfx_granite_speech_encoder *t = c->t;
    const hfx_granite_qformer *f = &t->qformer;
    hfx_graph *g = c->g;
    int64_t Wn = t->window, Q = t->window / t->downsample, D = f->hidden, E = f->encoder_hidden;
    hfx_dim N = x->dims[0], nb;
    /* the frames zero-padded to whole windows, the windows an axis of their own: [N, nb, window, E] */
    hfx_value *padded = hfx_pad_to_blocks(g, x, Wn, "audio_windows", &nb);
    hfx_value *win = hfx_reshape(g, padded, 4, (hfx_dim[]){N, nb, hfx_dim_const(Wn), hfx_dim_const(E)});
    /* the learned queries, normed: [1, 1, Q, D], broadcast over the windows by the first cross-attention */
    char base[160], n[192];
    snprintf(base, sizeof base, "%sqformer.", prefix);
    c->prefix = base;
    hfx_value *q = hfx_weight(c->w, 3, (int64_t[]){1, Q, D}, "%squery", prefix);
    q = layer_norm(c, hfx_reshape(g, q, 4, (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(1), hfx_dim_const(Q),
                                                       hfx_dim_const(D)}), D, "layernorm");
    for (int64_t i = 0; i < f->layers && !g->failed; i++) {
        snprintf(base, sizeof base, "%sqformer.encoder.layer.%lld.", prefix, (long long)i);
        q = qformer_attention(c, q, NULL, D, "attention");
        if (i % f->cross_every == 0) q = qformer_attention(c, q, win, E, "crossattention");
        hfx_value *h = hfx_activate(g, f->act, dense(c, q, D, f->intermediate, "intermediate_query.dense"));
        h = dense(c, h, f->intermediate, D, "output_query.dense");
        q = layer_norm(c, hfx_op2(g, HFX_OP_ADD, h, q), D, "output_query.LayerNorm");
        /* the text path's feed-forward (use_qformer_text_input): no text here */
        snprintf(n, sizeof n, "%sintermediate", base);
        hfx_weights_ignore_stack(c->w, n);
        snprintf(n, sizeof n, "%soutput", base);
        hfx_weights_ignore_stack(c->w, n);
    }
    q = hfx_reshape(g, q, 3, (hfx_dim[]){N, hfx_dim_scale(nb, Q), hfx_dim_const(D)});
    c->prefix = prefix;
    return dense(c, q, D, out, "linear");
}

hfx_value *hfx_granite_speech_tower(const hfx_granite_speech_encoder *t, hfx_graph *g, hfx_weights *w, const char *encoder,
                                    const char *projector, hfx_value *features, int64_t out) {
    granite_ctx c = {t, g, w, encoder};
    const hfx_conformer *cf = &t->conformer;
    int64_t H = cf->hidden;
    hfx_value *x = dense(&c, features, t->input_dim, H, "input_linear");
    hfx_conformer_inputs in;
    hfx_conformer_prepare(cf, g, x, NULL, NULL, &in);
    char n[192];
    for (int64_t i = 0; i < t->layers && !g->failed; i++) {
        snprintf(n, sizeof n, "%slayers.%lld", encoder, (long long)i);
        x = hfx_conformer_layer(cf, g, w, n, &in, x);
        if (i + 1 == t->layers / 2) { /* the CTC head's softmax, projected back in */
            hfx_value *p = hfx_softmax(g, dense(&c, x, H, t->ctc, "out"), -1);
            x = hfx_op2(g, HFX_OP_ADD, x, dense(&c, p, t->ctc, H, "out_mid"));
        }
    }
    if (t->layers / 2 == 0) { /* one layer: no middle, the CTC head unread (as in transformers) */
        snprintf(n, sizeof n, "%sout", encoder);
        hfx_weights_ignore_stack(w, n);
        snprintf(n, sizeof n, "%sout_mid", encoder);
        hfx_weights_ignore_stack(w, n);
    }
    return g->failed ? x : project(&c, projector, x, out);
}
