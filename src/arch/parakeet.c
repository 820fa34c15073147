/* The Parakeet family (FastConformer: transformers' ParakeetEncoder, ParakeetForCTC). Log-mel input_features
 * [B,T,mels] and their attention_mask [B,T] (ParakeetFeatureExtractor's) go through a Conv2d subsampling over time
 * and frequency (a strided convolution, then depthwise + pointwise pairs, each strided by
 * subsampling_conv_stride, ReLU after each; every padded time step zeroed after each convolution as transformers
 * masks it), a linear from channels × remaining mel bins to hidden_size (× √hidden_size where scale_input says),
 * then conformer layers (conformer.h: Transformer-XL relative positions, the convolution module zeroing padded
 * frames, queries and keys both masked) and, for CTC, a kernel-1 Conv1d head to the vocabulary.
 *
 * One component, `model`: input_features, attention_mask → logits [B,F,vocab] (ParakeetForCTC) or
 * last_hidden_state [B,F,hidden] (ParakeetEncoder), F the subsampled frames, every one as transformers computes it
 * (padded frames included). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/conformer.h"
#include "arch/nn.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

enum { MAX_SUBSAMPLING = 8 }; /* convolutions: log2(subsampling_factor) ≤ 8 */

typedef struct parakeet_desc {
    const char *architecture;
    bool ctc; /* the CTC head (ParakeetForCTC, whose encoder is config.encoder_config); else the bare encoder */
} parakeet_desc;

typedef struct parakeet_cfg {
    int64_t hidden, layers, mels, channels, kernel, stride, steps, vocab; /* steps: log2(subsampling_factor) */
    bool scale_input;
    hfx_conformer conformer;
} parakeet_cfg;

static const hfx_conformer_names parakeet_names = {
    {"feed_forward1", "feed_forward2"}, "linear1", "linear2", {"norm_feed_forward1", "norm_feed_forward2"},
    "norm_self_att", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"},
    "self_attn.relative_k_proj", {"self_attn.bias_u", "self_attn.bias_v"},
    "norm_conv", {"conv.pointwise_conv1", "conv.depthwise_conv", "conv.pointwise_conv2"}, "conv.norm", "norm_out"};

/* The encoder's config: its width, heads, activation, biases and subsampling. */
static hfx_status parse_encoder(hfx_cfg e, parakeet_cfg *m, hfx_error *err) {
    int64_t heads, intermediate, kernel, factor;
    hfx_activation a;
    bool linear_bias, conv_bias;
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(e, "hidden_size", 1024, 1, 1 << 16, &m->hidden, err)) ||
        (st = hfx_cfg_int_in_or(e, "num_hidden_layers", 24, 0, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in_or(e, "num_attention_heads", 8, 1, 4096, &heads, err)) ||
        (st = hfx_cfg_int_in_or(e, "intermediate_size", 4096, 1, 1 << 20, &intermediate, err)) ||
        (st = hfx_cfg_activation(e, "hidden_act", "silu", &a, err)) ||
        (st = hfx_cfg_bool_or(e, "attention_bias", true, &linear_bias, err)) ||
        (st = hfx_cfg_bool_or(e, "convolution_bias", true, &conv_bias, err)) ||
        (st = hfx_cfg_int_in_or(e, "conv_kernel_size", 9, 1, 1 << 12, &kernel, err)) ||
        (st = hfx_cfg_int_in_or(e, "subsampling_factor", 8, 2, 256, &factor, err)) ||
        (st = hfx_cfg_int_in_or(e, "subsampling_conv_channels", 256, 1, 1 << 16, &m->channels, err)) ||
        (st = hfx_cfg_int_in_or(e, "num_mel_bins", 80, 1, 1 << 12, &m->mels, err)) ||
        (st = hfx_cfg_int_in_or(e, "subsampling_conv_kernel_size", 3, 1, 63, &m->kernel, err)) ||
        (st = hfx_cfg_int_in_or(e, "subsampling_conv_stride", 2, 1, 16, &m->stride, err)) ||
        (st = hfx_cfg_bool_or(e, "scale_input", true, &m->scale_input, err)))
        return st;
    m->steps = 0;
    while ((int64_t)1 << (m->steps + 1) <= factor) m->steps++; /* int(math.log2(factor)) */
    if (m->hidden % heads || (m->hidden / heads) % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not num_attention_heads %lld heads of an even "
                        "width", e.where, (long long)m->hidden, (long long)heads);
    if (kernel % 2 == 0)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: conv_kernel_size %lld must be odd (\"same\" padding)", e.where,
                        (long long)kernel);
    m->conformer = (hfx_conformer){.hidden = m->hidden, .heads = heads, .intermediate = intermediate, .kernel = kernel,
                                   .act = a, .pos = HFX_CONFORMER_POS_RELATIVE, .names = &parakeet_names,
                                   .linear_bias = linear_bias, .conv_bias = conv_bias, .pow_freqs = true};
    return HFX_OK;
}

static hfx_status parakeet_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const parakeet_desc *d = desc_;
    parakeet_cfg *m = cfg;
    hfx_cfg e = c;
    hfx_status st;
    if (d->ctc && ((st = hfx_cfg_object(c, "encoder_config", arena, &e, err)) ||
                   (st = hfx_cfg_int_in(c, "vocab_size", 1, 1 << 24, &m->vocab, err))))
        return st;
    return parse_encoder(e, m, err);
}

typedef struct parakeet_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const parakeet_cfg *m;
    const char *prefix; /* "encoder." (ParakeetForCTC) or "" */
} parakeet_ctx;

/* The subsampling over input_features [B,T,mels] with each row's frame count n [B,1]: [B,F,hidden], and in *keep
 * the real frames [B,F] bool. */
static hfx_value *subsample(parakeet_ctx *c, hfx_value *features, hfx_value *n, hfx_value **keep) {
    const parakeet_cfg *m = c->m;
    hfx_nemo_subsampling s = {m->channels, m->kernel, m->stride, m->steps, m->hidden, "subsampling.layers",
                              "subsampling.linear"};
    hfx_value *x = hfx_nemo_subsample(&s, c->g, c->w, c->prefix, features, n, keep);
    if (x && m->scale_input) x = hfx_op2(c->g, HFX_OP_MUL, x, hfx_const_scalar(c->g, x->dtype, sqrt((double)m->hidden)));
    return x;
}

/* The conformer layers over the subsampled frames x [B,F,hidden] whose real ones are `keep` [B,F], then the CTC head
 * (logits) or none (last_hidden_state): the graph's outputs. */
static void layers_and_head(parakeet_ctx *c, const parakeet_desc *d, hfx_value *x, hfx_value *keep) {
    const parakeet_cfg *m = c->m;
    hfx_graph *g = c->g;
    /* queries and keys both masked: [B,1,F,F]; a padded frame's row all masked, as transformers makes it */
    hfx_value *both = hfx_op2(g, HFX_OP_AND, hfx_unsqueeze(g, keep, 2), hfx_unsqueeze(g, keep, 1));
    hfx_conformer_inputs in;
    hfx_conformer_prepare(&m->conformer, g, x, hfx_where(g, hfx_unsqueeze(g, both, 1), hfx_const_f32(g, 0.0f),
                                                         hfx_const_f32(g, -3.4028234663852886e38f)), NULL, &in);
    in.keep = hfx_cast(g, hfx_unsqueeze(g, keep, 2), x->dtype);
    char name[96];
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        snprintf(name, sizeof name, "%slayers.%lld", c->prefix, (long long)i);
        x = hfx_conformer_layer(&m->conformer, g, c->w, name, &in, x);
    }
    if (d->ctc) {
        hfx_value *head = hfx_const_flatten(g, hfx_weight(c->w, 3, (int64_t[]){m->vocab, m->hidden, 1}, "ctc_head.weight"),
                                            1);
        hfx_graph_output(g, hfx_linear(g, x, head, hfx_weight(c->w, 1, &m->vocab, "ctc_head.bias")), "logits");
    } else {
        hfx_graph_output(g, x, "last_hidden_state");
    }
}

static hfx_status parakeet_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                                 hfx_graph *g, hfx_error *err) {
    const parakeet_desc *d = desc_;
    const parakeet_cfg *m = cfg_;
    hfx_weights w;
    hfx_status st;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    parakeet_ctx c = {g, &w, m, hfx_weight_exists(&w, "encoder.subsampling.layers.0.weight") ? "encoder." : ""};
    hfx_value *features = hfx_graph_input(g, "input_features", o->dtype, 3, (hfx_dim[]){o->batch, o->seq,
                                                                                          hfx_dim_const(m->mels)});
    hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
    int64_t axis = 1;
    hfx_value *keep = NULL, *n = hfx_reduce(g, HFX_OP_REDUCE_SUM, mask, 1, &axis); /* [B,1] */
    hfx_value *x = subsample(&c, features, n, &keep);
    if (keep) layers_and_head(&c, d, x, keep); /* (none where the subsampling failed the graph) */
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

static const char *const features_masked[] = {"input_features", "attention_mask", NULL};

static hfx_torch_signature parakeet_torch_signature(const void *desc_) {
    const parakeet_desc *d = desc_;
    return (hfx_torch_signature){.args = features_masked,
                                 .output_class = d->ctc ? "CausalLMOutput" : "ParakeetEncoderModelOutput"};
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};

const hfx_arch_family hfx_parakeet_family = {
    .cfg_size = sizeof(parakeet_cfg),
    .parse = parakeet_parse,
    .build_forward = parakeet_build,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = features_masked,
    .torch_signature = parakeet_torch_signature,
};

const parakeet_desc hfx_parakeet_ctc = {"ParakeetForCTC", true};
const parakeet_desc hfx_parakeet_encoder = {"ParakeetEncoder", false};
