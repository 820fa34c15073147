/* The Universal Speech Model's conformer as Gemma holds it: Gemma 4's audio encoder (Gemma4AudioModel) and Gemma 3n's
 * (Gemma3nAudioEncoder). Log-mel frames [N, T, mels] with their mask go through two strided Conv2d, each normalized
 * and ReLU'd (Gemma 4: 3×3 stride 2 over the masked frames, a LayerNorm over the channels; Gemma 3n: the configured
 * kernels and strides, its frames zero-padded after rather than around, a group norm whose statistics run cumulatively
 * over the frames), then one linear into the layers; each layer a half-step feed-forward, chunked local self-attention
 * (each chunk of queries over its own window of keys, relative positions by Transformer-XL's shift, a soft cap), a
 * light convolution (GLU, a causal depthwise Conv1d), the other feed-forward and an RMSNorm, activations clamped to
 * gradient_clipping; then Gemma 4's output_proj, or Gemma 3n's every reduction-th frame with the padded ones zeroed.
 * The frames past each clip's real ones are hidden from every key; the tower's real output frames come first. What
 * differs between the two lineages is one row of `lineages` below and the fields their configs give. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/audio_tower.h"
#include "base/status.h"

/* What a lineage names differently and does differently */
typedef struct usm_lineage {
    const char *layers, *ffn[2];           /* the layer list; its two feed-forwards */
    const char *pre_attn, *attn, *relative; /* the attention's input norm; its q/k/v/per_dim_scale; relative positions */
    const char *post, *post_attn, *out;    /* the attention's output projection and norm; the layer's last norm */
    const char *linear;                    /* what a linear's weight is under: ".linear" (Gemma 4's clippable) or "" */
    bool group_norm;                       /* the subsampling's norm: cumulative group norm (else a channel LayerNorm) */
    bool masked_convolutions;              /* the padded frames zeroed before each subsampling convolution */
    bool masked_lconv;                     /* ... and before each light convolution */
} usm_lineage;

static const usm_lineage lineages[] = {
    [HFX_USM_GEMMA4] = {"layers", {"feed_forward1", "feed_forward2"}, "norm_pre_attn", "self_attn", "self_attn.relative_k_proj",
                        "self_attn.post", "norm_post_attn", "norm_out", ".linear", false, true, false},
    [HFX_USM_GEMMA3N] = {"conformer", {"ffw_layer_start", "ffw_layer_end"}, "attention.pre_attn_norm", "attention.attn",
                         "attention.attn.relative_position_embedding.pos_proj", "attention.post", "attention.post_norm",
                         "norm", "", true, false, true},
};

/* `n` integers of the field `key` (a flat list, or a list of lists read in order) into out; missing: out unchanged */
static hfx_status ints_of(hfx_cfg c, const char *key, int n, int64_t *out, hfx_error *err) {
    const json_t *v = json_object_get(c.obj, key);
    if (!v || json_is_null(v)) return HFX_OK;
    int k = 0;
    bool ok = json_is_array(v);
    for (size_t i = 0; ok && i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        size_t m = json_is_array(e) ? json_array_size(e) : 1;
        for (size_t j = 0; ok && j < m; j++) {
            const json_t *x = json_is_array(e) ? json_array_get(e, j) : e;
            ok = json_is_integer(x) && k < n && json_integer_value(x) >= 1 && json_integer_value(x) <= 1 << 16;
            if (ok) out[k++] = json_integer_value(x);
        }
    }
    if (!ok || k != n)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s' must hold %d integers in [1, 65536]", c.where, key, n);
    return HFX_OK;
}

/* The fields under Gemma 4's names */
static hfx_status parse_gemma4(hfx_cfg c, hfx_usm_audio *t, hfx_error *err) {
    const char *act;
    hfx_status st;
    t->channels[0] = 128, t->channels[1] = 32;
    if ((st = ints_of(c, "subsampling_conv_channels", 2, t->channels, err)) ||
        (st = hfx_cfg_int_in_or(c, "hidden_size", 1024, 1, 1 << 16, &t->hidden, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_hidden_layers", 12, 1, 1024, &t->layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_attention_heads", 8, 1, 1024, &t->heads, err)) ||
        (st = hfx_cfg_str_or(c, "hidden_act", "silu", &act, err)) ||
        (st = hfx_cfg_int_in_or(c, "conv_kernel_size", 5, 1, 1024, &t->kernel, err)) ||
        (st = hfx_cfg_num_or(c, "residual_weight", 0.5, &t->residual, err)) ||
        (st = hfx_cfg_int_in_or(c, "attention_chunk_size", 12, 1, 4096, &t->chunk, err)) ||
        (st = hfx_cfg_int_in_or(c, "attention_context_left", 13, 1, 4096, &t->left, err)) ||
        (st = hfx_cfg_int_in_or(c, "attention_context_right", 0, 0, 4096, &t->right, err)) ||
        (st = hfx_cfg_num_or(c, "attention_logit_cap", 50.0, &t->cap, err)) ||
        (st = hfx_cfg_num_or(c, "attention_invalid_logits_value", -1e9, &t->invalid, err)) ||
        (st = hfx_cfg_bool_or(c, "use_clipped_linears", true, &t->clipped, err)) ||
        (st = hfx_cfg_num_or(c, "rms_norm_eps", 1e-6, &t->eps, err)) ||
        (st = hfx_cfg_num_or(c, "gradient_clipping", 1e10, &t->clip, err)) ||
        (st = hfx_cfg_int_in_or(c, "output_proj_dims", 1536, 1, 1 << 16, &t->out, err)))
        return st;
    if (t->channels[0] % 4)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: subsampling_conv_channels [%lld, %lld]: the first must be a "
                                                  "multiple of 4 (the mel bins a quarter of it after the two strided "
                                                  "convolutions, as transformers sizes input_proj_linear)",
                        c.where, (long long)t->channels[0], (long long)t->channels[1]);
    if (!hfx_activation_from_name(act, &t->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: hidden_act '%s' is not supported (known: %s)", c.where, act,
                        hfx_activation_names());
    t->mels = t->channels[0];
    for (int k = 0; k < 2; k++) t->conv_kernel[k][0] = t->conv_kernel[k][1] = 3, t->conv_stride[k][0] = t->conv_stride[k][1] = 2;
    t->pad_before = 1, t->reduction = 1;
    t->key_scale = log(1.0 + exp(1.0)) / log(2.0);
    t->nearest = 1, t->farthest = t->left - 1 + (t->right > 1 ? t->right - 1 : 0);
    int64_t ctx = t->chunk + t->left - 1 + t->right;
    t->pos_first = ctx / 2, t->pos_rows = ctx / 2 + 1; /* distances ctx/2 down to 0 */
    return HFX_OK;
}

/* The fields under Gemma 3n's names (conf_*, sscp_*) */
static hfx_status parse_gemma3n(hfx_cfg c, hfx_usm_audio *t, hfx_error *err) {
    hfx_status st;
    t->channels[0] = 128, t->channels[1] = 32;
    for (int k = 0; k < 2; k++) t->conv_kernel[k][0] = t->conv_kernel[k][1] = 3, t->conv_stride[k][0] = t->conv_stride[k][1] = 2;
    if ((st = ints_of(c, "sscp_conv_channel_size", 2, t->channels, err)) ||
        (st = ints_of(c, "sscp_conv_kernel_size", 4, &t->conv_kernel[0][0], err)) ||
        (st = ints_of(c, "sscp_conv_stride_size", 4, &t->conv_stride[0][0], err)) ||
        (st = hfx_cfg_int_in_or(c, "input_feat_size", 128, 1, 1 << 16, &t->mels, err)) ||
        (st = hfx_cfg_int_in_or(c, "hidden_size", 1536, 1, 1 << 16, &t->hidden, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_num_hidden_layers", 12, 1, 1024, &t->layers, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_num_attention_heads", 8, 1, 1024, &t->heads, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_conv_kernel_size", 5, 1, 1024, &t->kernel, err)) ||
        (st = hfx_cfg_num_or(c, "conf_residual_weight", 0.5, &t->residual, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_attention_chunk_size", 12, 1, 4096, &t->chunk, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_attention_context_left", 13, 1, 4096, &t->left, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_attention_context_right", 0, 0, 4096, &t->right, err)) ||
        (st = hfx_cfg_num_or(c, "conf_attention_logit_cap", 50.0, &t->cap, err)) ||
        (st = hfx_cfg_int_in_or(c, "conf_reduction_factor", 4, 1, 4096, &t->reduction, err)) ||
        (st = hfx_cfg_num_or(c, "rms_norm_eps", 1e-6, &t->eps, err)) ||
        (st = hfx_cfg_num_or(c, "sscp_conv_group_norm_eps", 1e-3, &t->group_eps, err)) ||
        (st = hfx_cfg_num_or(c, "gradient_clipping", 1e10, &t->clip, err)))
        return st;
    if (!(t->group_eps > 0 && t->group_eps < 1))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: sscp_conv_group_norm_eps out of range", c.where);
    int64_t f = t->mels;
    for (int k = 0; k < 2; k++) { /* the frequency axis: padded by one each side, then the kernel's windows */
        if (f + 2 < t->conv_kernel[k][1])
            return hfx_fail(err, HFX_ERR_INVALID, "%s: input_feat_size %lld leaves %lld bins before convolution %d, fewer "
                                                  "than its kernel's %lld (sscp_conv_kernel_size)",
                            c.where, (long long)t->mels, (long long)f, k, (long long)t->conv_kernel[k][1]);
        f = (f + 2 - t->conv_kernel[k][1]) / t->conv_stride[k][1] + 1;
    }
    t->act = HFX_ACT_SILU, t->invalid = -FLT_MAX, t->key_scale = 1.0, t->pad_before = 0;
    t->nearest = 0, t->farthest = t->left - 1 + t->right;
    t->pos_first = t->left - 1, t->pos_rows = t->left + t->right; /* distances left − 1 down to −right */
    return HFX_OK;
}

hfx_status hfx_usm_audio_parse(hfx_usm_lineage lineage, hfx_cfg c, hfx_usm_audio *t, hfx_error *err) {
    hfx_status st;
    memset(t, 0, sizeof *t);
    t->lineage = lineage;
    if ((st = lineage == HFX_USM_GEMMA3N ? parse_gemma3n(c, t, err) : parse_gemma4(c, t, err))) return st;
    if (t->hidden % t->heads || t->hidden % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not an even multiple of %s %lld (its relative "
                                              "positions' sinusoids are half sines, half cosines)", c.where,
                        (long long)t->hidden, lineage == HFX_USM_GEMMA3N ? "conf_num_attention_heads" : "num_attention_heads",
                        (long long)t->heads);
    if (!(t->cap > 0) || !(t->eps > 0 && t->eps < 1) || !(t->clip > 0) || !isfinite(t->residual) || !isfinite(t->invalid))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: the attention's logit cap or invalid logits value, rms_norm_eps, "
                                              "gradient_clipping or the residual weight out of range", c.where);
    return HFX_OK;
}

typedef struct audio_ctx {
    const hfx_usm_audio *t;
    const usm_lineage *l;
    hfx_graph *g;
    hfx_weights *w;
    const char *prefix;
    hfx_dim N, T; /* clips, the layers' frames */
} audio_ctx;

/* Gemma's RMSNorm `<prefix><name>.weight` over x's last axis at eps */
static hfx_value *norm(audio_ctx *c, hfx_value *x, double eps, const char *name) {
    int64_t D = c->t->hidden;
    return hfx_rms_norm(c->g, x, hfx_weight(c->w, 1, &D, "%s%s.weight", c->prefix, name), eps, 0.0);
}

static hfx_value *linear(audio_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    if (c->t->clipped) return hfx_gemma4_linear(c->g, c->w, true, x, in, out, c->prefix, name);
    return hfx_linear(c->g, x, hfx_weight(c->w, 2, (int64_t[]){out, in}, "%s%s%s.weight", c->prefix, name, c->l->linear),
                      NULL);
}

/* x clamped to ±gradient_clipping (none where that is beyond the float range, as min(clip, finfo.max) is) */
static hfx_value *clipped(audio_ctx *c, hfx_value *x) {
    if (c->t->clip >= FLT_MAX) return x;
    hfx_value *lo = hfx_const_scalar(c->g, x->dtype, -c->t->clip), *hi = hfx_const_scalar(c->g, x->dtype, c->t->clip);
    return hfx_op2(c->g, HFX_OP_MIN, hfx_op2(c->g, HFX_OP_MAX, x, lo), hi);
}

/* Gemma 3n's cumulative group norm over x [N, T, F, C]: at each frame the mean and variance of every element up to it
 * (the variance summing each frame's squared distances from that frame's running mean, as transformers does), f32 */
static hfx_value *cumulative_group_norm(audio_ctx *c, hfx_value *x, hfx_value *weight) {
    hfx_graph *g = c->g;
    int64_t axes[2] = {2, 3}, per_frame = x->dims[2].c * x->dims[3].c;
    hfx_value *t = hfx_range(g, hfx_const_i64(g, 1), hfx_op2(g, HFX_OP_ADD, hfx_dim_of(g, x, 1), hfx_const_i64(g, 1)),
                             hfx_const_i64(g, 1), x->dims[1]);
    hfx_value *count = hfx_op2(g, HFX_OP_MUL, hfx_cast(g, t, HFX_DTYPE_F32), hfx_const_f32(g, (float)per_frame));
    count = hfx_reshape(g, count, 4, (hfx_dim[]){hfx_dim_const(1), x->dims[1], hfx_dim_const(1), hfx_dim_const(1)});
    hfx_value *f = hfx_cast(g, x, HFX_DTYPE_F32);
    hfx_value *mean = hfx_op2(g, HFX_OP_DIV, hfx_cumsum(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, f, 2, axes), 1), count);
    hfx_value *d = hfx_op2(g, HFX_OP_SUB, f, mean);
    hfx_value *var = hfx_op2(g, HFX_OP_DIV, hfx_cumsum(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, d, d), 2,
                                                                     axes), 1), count);
    hfx_value *r = hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, var, hfx_const_f32(g, (float)c->t->group_eps)));
    return hfx_cast(g, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, d, r), hfx_cast(g, weight, HFX_DTYPE_F32)), x->dtype);
}

/* One subsampling step k over x [N, Cin, T, F] and its frames' mask [N, T] (i64): the convolution (its frames padded
 * around or after), the norm, ReLU → [N, Cout, T', F']; *mask every stride-th frame's. */
static hfx_value *subsample(audio_ctx *c, hfx_value *x, hfx_value **mask, int64_t in, int64_t out, int k,
                            const char *frames) {
    const hfx_usm_audio *t = c->t;
    hfx_graph *g = c->g;
    int64_t kt = t->conv_kernel[k][0], kf = t->conv_kernel[k][1], st = t->conv_stride[k][0], sf = t->conv_stride[k][1];
    if (c->l->masked_convolutions) {
        hfx_value *m = hfx_cast(g, *mask, x->dtype);
        x = hfx_op2(g, HFX_OP_MUL, x, hfx_unsqueeze(g, hfx_unsqueeze(g, m, 1), -1));
    }
    if (!t->pad_before && kt > 1) { /* kt − 1 zero frames after (Gemma 3n's), none before */
        hfx_value *shape = hfx_concat(g, 4, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, in), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, kt - 1), 0),
                                                            hfx_unsqueeze(g, hfx_dim_of(g, x, 3), 0)}, 0);
        hfx_value *zeros = hfx_expand(g, hfx_const_scalar(g, x->dtype, 0.0), shape, 4,
                                      (hfx_dim[]){x->dims[0], hfx_dim_const(in), hfx_dim_const(kt - 1), x->dims[3]});
        x = hfx_concat(g, 2, (hfx_value *[]){x, zeros}, 2);
    }
    hfx_value *kw = hfx_weight(c->w, 4, (int64_t[]){out, in, kt, kf}, "%ssubsample_conv_projection.%s%d.conv.weight",
                               c->prefix, c->l->group_norm ? "conv_" : "layer", k);
    x = hfx_conv2d(g, x, kw, NULL, (int64_t[]){st, sf}, (int64_t[]){t->pad_before, 1}, 1, (const char *const[]){frames, NULL});
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 3, 1}); /* [N, T', F', C] */
    hfx_value *nw = hfx_weight(c->w, 1, &out, "%ssubsample_conv_projection.%s%d.norm.weight", c->prefix,
                               c->l->group_norm ? "conv_" : "layer", k);
    x = c->l->group_norm ? cumulative_group_norm(c, x, nw) : hfx_layer_norm(g, x, nw, NULL, t->eps);
    x = hfx_transpose(g, hfx_activate(g, HFX_ACT_RELU, x), 4, (int64_t[]){0, 3, 1, 2});
    hfx_value *every = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, *mask, 1), hfx_const_i64(g, st), x->dims[2]);
    *mask = hfx_gather(g, *mask, every, 1);
    return x;
}

/* a half-step feed-forward: x + residual_weight · post(down(act(up(pre(clip x))))) clipped */
static hfx_value *feed_forward(audio_ctx *c, hfx_value *x, const char *L, int which) {
    int64_t D = c->t->hidden;
    char n[192];
    const char *f = c->l->ffn[which];
    snprintf(n, sizeof n, "%s.%s.pre_layer_norm", L, f);
    hfx_value *h = norm(c, clipped(c, x), 1e-6, n); /* (its norms at RMSNorm's default eps) */
    snprintf(n, sizeof n, "%s.%s.ffw_layer_1", L, f);
    h = hfx_activate(c->g, c->t->act, linear(c, h, D, 4 * D, n));
    snprintf(n, sizeof n, "%s.%s.ffw_layer_2", L, f);
    h = clipped(c, linear(c, h, 4 * D, D, n));
    snprintf(n, sizeof n, "%s.%s.post_layer_norm", L, f);
    h = hfx_op2(c->g, HFX_OP_MUL, norm(c, h, 1e-6, n), hfx_const_scalar(c->g, h->dtype, c->t->residual));
    return hfx_op2(c->g, HFX_OP_ADD, h, x);
}

/* x [N,H,T,hd] padded along its frames with zeros: `before` rows first, then up to `total` rows (total_v at run
 * time) */
static hfx_value *padded(audio_ctx *c, hfx_value *x, int64_t before, hfx_dim total, hfx_value *total_v) {
    hfx_graph *g = c->g;
    bool ok;
    hfx_dim after = hfx_dim_add(total, hfx_dim_add(hfx_dim_scale(c->T, -1), hfx_dim_const(-before), &ok), &ok);
    hfx_value *after_v = hfx_op2(g, HFX_OP_SUB, total_v, hfx_op2(g, HFX_OP_ADD, hfx_dim_of(g, x, 2), hfx_const_i64(g, before)));
    hfx_value *zero = hfx_const_scalar(g, x->dtype, 0.0);
    hfx_value *parts[3];
    int n = 0;
    if (before) {
        hfx_value *shape = hfx_concat(g, 4, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                            hfx_unsqueeze(g, hfx_dim_of(g, x, 1), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, before), 0),
                                                            hfx_unsqueeze(g, hfx_dim_of(g, x, 3), 0)}, 0);
        parts[n++] = hfx_expand(g, zero, shape, 4, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(before), x->dims[3]});
    }
    parts[n++] = x;
    hfx_value *shape = hfx_concat(g, 4, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, x, 0), 0),
                                                        hfx_unsqueeze(g, hfx_dim_of(g, x, 1), 0),
                                                        hfx_unsqueeze(g, after_v, 0),
                                                        hfx_unsqueeze(g, hfx_dim_of(g, x, 3), 0)}, 0);
    parts[n++] = hfx_expand(g, zero, shape, 4, (hfx_dim[]){x->dims[0], x->dims[1], after, x->dims[3]});
    return hfx_concat(g, n, parts, 2);
}

typedef struct blocks {
    hfx_dim nb;            /* chunks of queries */
    hfx_value *nb_v;       /* ... at run time */
    hfx_value *keys;       /* [nb·context] i64: each chunk's window in the left-padded frames */
    hfx_value *visible;    /* [N, heads·nb, chunk, context] bool */
    hfx_value *pos;        /* [pos_rows, hidden]: the relative distances' sinusoids, pos_first down */
} blocks;

/* A chunk's band [C, ctx] of bool: query q sees window key k where nearest ≤ k − q ≤ farthest; 0 when out of memory */
static hfx_value *band(audio_ctx *c, int64_t C, int64_t ctx) {
    uint8_t *b = hfx_arena_alloc(c->g->arena, (size_t)(C * ctx));
    if (!b) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t q = 0; q < C; q++)
        for (int64_t k = 0; k < ctx; k++) b[q * ctx + k] = k - q >= c->t->nearest && k - q <= c->t->farthest;
    return hfx_const_bytes(c->g, HFX_DTYPE_BOOL, 2, (int64_t[]){C, ctx}, b);
}

/* What every layer's attention reads, from the frames' mask [N,T] (i64) */
static blocks prepare(audio_ctx *c, hfx_value *mask, hfx_dim T, hfx_dtype dtype) {
    const hfx_usm_audio *t = c->t;
    hfx_graph *g = c->g;
    int64_t C = t->chunk, ctx = t->chunk + t->left - 1 + t->right, H = t->heads;
    blocks b = {0};
    b.nb = hfx_blocks_of(g, T, C, "audio_chunks");
    hfx_value *Tv = hfx_dim_of(g, mask, 1), *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
    b.nb_v = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, Tv, hfx_const_i64(g, C - 1)), hfx_const_i64(g, C));
    hfx_value *n = hfx_range(g, zero, b.nb_v, one, b.nb);                                   /* [nb] */
    hfx_value *o = hfx_range(g, zero, hfx_const_i64(g, ctx), one, hfx_dim_const(ctx));     /* [ctx] */
    hfx_value *at = hfx_op2(g, HFX_OP_ADD, hfx_unsqueeze(g, hfx_op2(g, HFX_OP_MUL, n, hfx_const_i64(g, C)), 1),
                            hfx_unsqueeze(g, o, 0));                                        /* [nb,ctx] padded index */
    hfx_dim flat = hfx_dim_scale(b.nb, ctx);
    b.keys = hfx_reshape(g, at, 1, &flat);
    /* key j = padded index − (left − 1): real, a clip's, and in the query's band */
    hfx_value *j = hfx_op2(g, HFX_OP_SUB, at, hfx_const_i64(g, t->left - 1));
    hfx_value *inside = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_GREATER_EQUAL, j, zero), hfx_op2(g, HFX_OP_LESS, j, Tv));
    hfx_value *safe = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, j, zero), hfx_op2(g, HFX_OP_SUB, Tv, one));
    hfx_value *real = hfx_gather(g, hfx_op2(g, HFX_OP_GREATER, mask, zero), hfx_reshape(g, safe, 1, &flat), 1); /* [N, nb·ctx] */
    real = hfx_reshape(g, real, 4, (hfx_dim[]){c->N, b.nb, hfx_dim_const(1), hfx_dim_const(ctx)});
    hfx_value *within = band(c, C, ctx);
    hfx_value **heads = hfx_arena_alloc(g->arena, (size_t)H * sizeof *heads);
    if (!within || !heads) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return b;
    }
    hfx_value *vis = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_AND, real, hfx_unsqueeze(g, hfx_unsqueeze(g, inside, 1), 0)),
                             within); /* [N,nb,C,ctx] */
    for (int64_t h = 0; h < H; h++) heads[h] = vis;
    b.visible = H > 1 ? hfx_concat(g, (int)H, heads, 1) : vis; /* [N, H·nb, C, ctx], heads major */
    b.pos = hfx_audio_sinusoids(g, t->pos_rows, t->hidden, t->pos_first, -1, dtype);
    return b;
}

/* [N,T,H·hd] as [N,H,T,hd] */
static hfx_value *by_head(audio_ctx *c, hfx_value *x) {
    int64_t H = c->t->heads, hd = c->t->hidden / H;
    x = hfx_reshape(c->g, x, 4, (hfx_dim[]){c->N, c->T, hfx_dim_const(H), hfx_dim_const(hd)});
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

/* The relative part of the scores: each query of qb [N, H·nb, C, hd] against every distance's projected sinusoid,
 * shifted into place by Transformer-XL's pad-and-reshape: [N, H·nb, C, ctx] f32 */
static hfx_value *relative_scores(audio_ctx *c, const blocks *b, hfx_value *qb, hfx_dim span, const char *L) {
    const hfx_usm_audio *t = c->t;
    hfx_graph *g = c->g;
    int64_t D = t->hidden, H = t->heads, hd = D / H, C = t->chunk, ctx = C + t->left - 1 + t->right, P = t->pos_rows;
    hfx_dim hnb = hfx_dim_scale(b->nb, H);
    hfx_value *rel = hfx_linear(g, b->pos, hfx_weight(c->w, 2, (int64_t[]){D, D}, "%s%s.%s.weight", c->prefix, L,
                                                      c->l->relative), NULL);
    rel = hfx_transpose(g, hfx_reshape(g, hfx_cast(g, rel, HFX_DTYPE_F32), 3, (hfx_dim[]){hfx_dim_const(P), hfx_dim_const(H),
                                                                                          hfx_dim_const(hd)}),
                        3, (int64_t[]){1, 2, 0}); /* [H,hd,P] */
    hfx_value *qflat = hfx_reshape(g, qb, 4, (hfx_dim[]){c->N, hfx_dim_const(H), span, hfx_dim_const(hd)});
    hfx_value *bd = hfx_reshape(g, hfx_op2(g, HFX_OP_MATMUL, qflat, rel), 4,
                                (hfx_dim[]){c->N, hnb, hfx_dim_const(C), hfx_dim_const(P)});
    if (ctx + 1 > P) {
        hfx_value *shape = hfx_concat(g, 4, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, bd, 0), 0),
                                                            hfx_unsqueeze(g, hfx_dim_of(g, bd, 1), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, C), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, ctx + 1 - P), 0)}, 0);
        hfx_value *pad = hfx_expand(g, hfx_const_f32(g, 0.0f), shape, 4,
                                    (hfx_dim[]){c->N, hnb, hfx_dim_const(C), hfx_dim_const(ctx + 1 - P)});
        bd = hfx_concat(g, 2, (hfx_value *[]){bd, pad}, 3);
    } /* (P ≤ ctx + 1 in both lineages) */
    bd = hfx_slice(g, hfx_reshape(g, bd, 3, (hfx_dim[]){c->N, hnb, hfx_dim_const(C * (ctx + 1))}), 2, 0, C * ctx);
    return hfx_reshape(g, bd, 4, (hfx_dim[]){c->N, hnb, hfx_dim_const(C), hfx_dim_const(ctx)});
}

/* the chunked local attention of layer L over h [N,T,D] (f32 inside, as transformers computes it) */
static hfx_value *attention(audio_ctx *c, const blocks *b, hfx_value *h, const char *L) {
    const hfx_usm_audio *t = c->t;
    hfx_graph *g = c->g;
    int64_t D = t->hidden, H = t->heads, hd = D / H, C = t->chunk, ctx = C + t->left - 1 + t->right;
    char n[192];
#define NAME(leaf) (snprintf(n, sizeof n, "%s.%s.%s", L, c->l->attn, leaf), n)
    hfx_value *q = hfx_cast(g, linear(c, h, D, D, NAME("q_proj")), HFX_DTYPE_F32);
    hfx_value *k = hfx_cast(g, linear(c, h, D, D, NAME("k_proj")), HFX_DTYPE_F32);
    hfx_value *v = hfx_cast(g, linear(c, h, D, D, NAME("v_proj")), HFX_DTYPE_F32);
    /* q · hd^−½/ln 2 · softplus(per_dim_scale) over each head's dims; k · key_scale */
    hfx_value *scale = hfx_softplus(g, hfx_weight_f32(c->w, 1, &hd, hfx_arena_printf(g->arena, "%s%s", c->prefix,
                                                                                        NAME("per_dim_scale"))));
#undef NAME
    q = hfx_op2(g, HFX_OP_MUL, q, hfx_const_f32(g, (float)(pow((double)hd, -0.5) / log(2.0))));
    q = hfx_reshape(g, q, 4, (hfx_dim[]){c->N, c->T, hfx_dim_const(H), hfx_dim_const(hd)});
    q = hfx_transpose(g, hfx_op2(g, HFX_OP_MUL, q, scale), 4, (int64_t[]){0, 2, 1, 3}); /* [N,H,T,hd] */
    if (t->key_scale != 1.0) k = hfx_op2(g, HFX_OP_MUL, k, hfx_const_f32(g, (float)t->key_scale));
    hfx_dim span = hfx_dim_scale(b->nb, C), hnb = hfx_dim_scale(b->nb, H);
    hfx_value *span_v = hfx_op2(g, HFX_OP_MUL, b->nb_v, hfx_const_i64(g, C));
    /* queries: each chunk of C, [N, H·nb, C, hd] */
    hfx_value *qb = hfx_reshape(g, padded(c, q, 0, span, span_v), 4, (hfx_dim[]){c->N, hnb, hfx_dim_const(C), hfx_dim_const(hd)});
    /* keys and values: each chunk's window of ctx in the frames padded left − 1 before, [N, H·nb, ctx, hd] */
    bool ok;
    hfx_dim all = hfx_dim_add(span, hfx_dim_const(t->left - 1 + t->right), &ok);
    hfx_value *all_v = hfx_op2(g, HFX_OP_ADD, span_v, hfx_const_i64(g, t->left - 1 + t->right));
    hfx_dim win[4] = {c->N, hnb, hfx_dim_const(ctx), hfx_dim_const(hd)};
    hfx_value *kb = hfx_reshape(g, hfx_gather(g, padded(c, by_head(c, k), t->left - 1, all, all_v), b->keys, 2), 4, win);
    hfx_value *vb = hfx_reshape(g, hfx_gather(g, padded(c, by_head(c, v), t->left - 1, all, all_v), b->keys, 2), 4, win);
    hfx_value *ac = hfx_op2(g, HFX_OP_MATMUL, qb, hfx_transpose(g, kb, 4, (int64_t[]){0, 1, 3, 2})); /* [N,H·nb,C,ctx] */
    hfx_value *bd = relative_scores(c, b, qb, span, L);
    hfx_value *cap = hfx_const_f32(g, (float)t->cap);
    hfx_value *s = hfx_op2(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_TANH, hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, ac, bd), cap)), cap);
    s = hfx_where(g, b->visible, s, hfx_const_f32(g, (float)t->invalid));
    hfx_value *a = hfx_op2(g, HFX_OP_MATMUL, hfx_softmax(g, s, -1), vb); /* [N,H·nb,C,hd] */
    a = hfx_transpose(g, hfx_reshape(g, a, 4, (hfx_dim[]){c->N, hfx_dim_const(H), span, hfx_dim_const(hd)}), 4,
                      (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){c->N, span, hfx_dim_const(D)});
    hfx_value *frames = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, h, 1), hfx_const_i64(g, 1), c->T);
    a = hfx_cast(g, hfx_gather(g, a, frames, 1), h->dtype); /* the real frames' (the chunks' padding dropped) */
    snprintf(n, sizeof n, "%s.%s", L, c->l->post);
    return linear(c, a, D, D, n);
}

/* the light convolution: x + end(act(norm(clip(causal depthwise conv(glu(start(pre(x)))))))) */
static hfx_value *light_conv(audio_ctx *c, hfx_value *x, const char *L) {
    const hfx_usm_audio *t = c->t;
    hfx_graph *g = c->g;
    int64_t D = t->hidden, K = t->kernel;
    char n[192];
#define NAME(leaf) (snprintf(n, sizeof n, "%s.lconv1d.%s", L, leaf), n)
    hfx_value *h = norm(c, x, t->eps, NAME("pre_layer_norm")); /* (a name a statement) */
    h = linear(c, h, D, 2 * D, NAME("linear_start"));
    h = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, h, 2, 0, D), hfx_op1(g, HFX_OP_SIGMOID, hfx_slice(g, h, 2, D, 2 * D)));
    h = hfx_transpose(g, h, 3, (int64_t[]){0, 2, 1}); /* [N,D,T] */
    if (K > 1) { /* causal: K − 1 zeros before */
        hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, h, 0), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, D), 0),
                                                            hfx_unsqueeze(g, hfx_const_i64(g, K - 1), 0)}, 0);
        hfx_value *zeros = hfx_expand(g, hfx_const_scalar(g, h->dtype, 0.0), shape, 3,
                                      (hfx_dim[]){c->N, hfx_dim_const(D), hfx_dim_const(K - 1)});
        h = hfx_concat(g, 2, (hfx_value *[]){zeros, h}, 2);
    }
    h = hfx_conv1d(g, h, hfx_weight(c->w, 3, (int64_t[]){D, 1, K}, "%s%s", c->prefix, NAME("depthwise_conv1d.weight")),
                   NULL, 1, 0, D, NULL);
    h = clipped(c, hfx_transpose(g, h, 3, (int64_t[]){0, 2, 1}));
    h = hfx_activate(g, t->act, norm(c, h, t->eps, NAME("conv_norm")));
    return hfx_op2(g, HFX_OP_ADD, linear(c, h, D, D, NAME("linear_end")), x);
#undef NAME
}

/* x [N,T,D] with the padded frames (keep [N,T,1] of x's dtype: 1 on real ones) zeroed */
static hfx_value *zero_padded(audio_ctx *c, hfx_value *x, hfx_value *keep) { return hfx_op2(c->g, HFX_OP_MUL, x, keep); }

static hfx_value *layer(audio_ctx *c, const blocks *b, hfx_value *keep, int64_t i, hfx_value *x) {
    char L[64], n[192];
    snprintf(L, sizeof L, "%s.%lld", c->l->layers, (long long)i);
#define NAME(leaf) (snprintf(n, sizeof n, "%s.%s", L, leaf), n)
    x = feed_forward(c, x, L, 0);
    hfx_value *h = attention(c, b, norm(c, clipped(c, x), 1e-6, NAME(c->l->pre_attn)), L);
    x = hfx_op2(c->g, HFX_OP_ADD, norm(c, clipped(c, h), 1e-6, NAME(c->l->post_attn)), x);
    if (c->l->masked_lconv) x = zero_padded(c, x, keep);
    x = feed_forward(c, light_conv(c, x, L), L, 1);
    return norm(c, clipped(c, x), 1e-6, NAME(c->l->out));
#undef NAME
}

/* Gemma 3n's end: every reduction-th frame and its mask, the padded frames zeroed */
static hfx_value *reduced(audio_ctx *c, hfx_value *x, hfx_value **mask) {
    hfx_graph *g = c->g;
    int64_t r = c->t->reduction;
    if (r > 1) {
        hfx_dim kept = hfx_blocks_of(g, c->T, r, "audio_frames_reduced");
        hfx_value *every = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, x, 1), hfx_const_i64(g, r), kept);
        x = hfx_gather(g, x, every, 1);
        *mask = hfx_gather(g, *mask, every, 1);
    }
    return zero_padded(c, x, hfx_unsqueeze(g, hfx_cast(g, *mask, x->dtype), 2));
}

hfx_value *hfx_usm_audio_tower(const hfx_usm_audio *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                               hfx_value *features, hfx_value *mask, hfx_value **real) {
    audio_ctx c = {t, &lineages[t->lineage], g, w, prefix, features->dims[0], features->dims[1]};
    int64_t c0 = t->channels[0], c1 = t->channels[1], D = t->hidden;
    hfx_value *m = mask, *x = hfx_unsqueeze(g, features, 1); /* [N,1,T,mels] */
    x = subsample(&c, x, &m, 1, c0, 0, "audio_frames_half");
    x = subsample(&c, x, &m, c0, c1, 1, "audio_frames_quarter"); /* [N,c1,T',F'] */
    if (g->failed) return x;
    int64_t in = x->dims[3].c * c1;
    if (t->lineage == HFX_USM_GEMMA4 && x->dims[3].c != c0 / 4) {
        hfx_graph_fail(g, HFX_ERR_INVALID, "Gemma 4's audio encoder: %lld mel bins leave %lld after its convolutions, "
                                           "and its input projection reads subsampling_conv_channels[0] / 4 = %lld",
                       (long long)t->mels, (long long)x->dims[3].c, (long long)(c0 / 4));
        return x;
    }
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 3, 1});
    c.T = x->dims[1];
    x = hfx_reshape(g, x, 3, (hfx_dim[]){c.N, c.T, hfx_dim_const(in)});
    x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){D, in}, "%ssubsample_conv_projection.input_proj_linear.weight",
                                    prefix), NULL);
    blocks b = prepare(&c, m, c.T, x->dtype);
    hfx_value *keep = hfx_unsqueeze(g, hfx_cast(g, hfx_op2(g, HFX_OP_GREATER, m, hfx_const_i64(g, 0)), x->dtype), 2);
    for (int64_t i = 0; i < t->layers && !g->failed; i++) x = layer(&c, &b, keep, i, x);
    if (t->out)
        x = hfx_linear(g, x, hfx_weight(w, 2, (int64_t[]){t->out, D}, "%soutput_proj.weight", prefix),
                       hfx_weight(w, 1, &t->out, "%soutput_proj.bias", prefix));
    else
        x = reduced(&c, x, &m);
    *real = hfx_op2(g, HFX_OP_GREATER, m, hfx_const_i64(g, 0));
    return x;
}

hfx_value *hfx_usm_real_frames(hfx_graph *g, hfx_value *real) {
    int64_t axis = 1;
    hfx_value *n = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, real, HFX_DTYPE_I64), 1, &axis);
    return hfx_reshape(g, n, 1, &real->dims[0]);
}
