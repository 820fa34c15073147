/* MobileNet-V5's encoder (timm's MobileNetV5Encoder, "mobilenetv5_300m_enc": Gemma 3n's vision tower, held by
 * transformers' TimmWrapperModel). Its layout is not in config.json but in timm's source, by the architecture's name:
 * `stages` below is that block list, as timm writes it ("uir_r1_a3_k5_s2_e6_c256": a universal inverted residual with
 * a 3 × 3 depthwise start, a 5 × 5 depthwise middle of stride 2, expansion 6, 256 channels), scaled by the
 * config's model_args.channel_multiplier as timm rounds channels. The blocks:
 * - er (edge residual): a full k × k convolution expanding e times, RMSNorm + GELU, a 1 × 1 projection, RMSNorm;
 * - uir: an optional depthwise start (RMSNorm), a 1 × 1 expansion (RMSNorm + GELU), an optional depthwise middle
 *   (RMSNorm + GELU), a 1 × 1 projection (RMSNorm), a per-channel layer scale;
 * - mqa (mobile multi-query attention): RMSNorm, h query heads of d over one key and one value head (each behind a
 *   depthwise k × k convolution of stride v and an RMSNorm where v > 1), a 1 × 1 output, the layer scale;
 * each with its input added where it keeps the channels and the resolution. Convolutions pad as TensorFlow's "same"
 * (a strided one's odd padding on the bottom and right). The stem is a 3 × 3 convolution of stride 2 with a bias,
 * RMSNorm + GELU; the multi-scale fusion adapter concatenates the last two stages' outputs (the smaller upsampled to
 * the larger by nearest neighbours), runs a uir without depthwise convolutions or skip into 2048 channels, averages
 * down to 16 × 16 and normalizes. RMSNorm here is timm's over the channels of NCHW maps (ε 1e-6, f32); GELU is the
 * tanh form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/vision.h"
#include "base/status.h"

enum { OUT_CHANNELS = 2048, OUT_GRID = 16 };

/* mobilenetv5_300m_enc's stages, as timm's _gen_mobilenet_v5 lists them */
static const char *const stage0[] = {"er_r1_k3_s2_e4_c128", "er_r1_k3_s1_e4_c128", "er_r1_k3_s1_e4_c128", NULL};
static const char *const stage1[] = {"uir_r1_a3_k5_s2_e6_c256", "uir_r1_a5_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256",
                                     "uir_r1_a5_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256", NULL};
#define UIR640 "uir_r1_a0_k0_s1_e2_c640"
#define MQA640 "mqa_r1_k3_h12_v2_s1_d64_c640"
static const char *const stage2[] = {
    "uir_r1_a5_k5_s2_e6_c640", "uir_r1_a5_k0_s1_e4_c640", "uir_r1_a5_k0_s1_e4_c640", "uir_r1_a5_k0_s1_e4_c640",
    "uir_r1_a5_k0_s1_e4_c640", "uir_r1_a5_k0_s1_e4_c640", "uir_r1_a5_k0_s1_e4_c640", "uir_r1_a5_k0_s1_e4_c640",
    "uir_r1_a0_k0_s1_e1_c640", MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640,
    UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640, UIR640, MQA640,
    UIR640, MQA640, UIR640, NULL};
#define UIR1280 "uir_r1_a0_k0_s1_e2_c1280"
#define MQA1280 "mqa_r1_k3_h16_s1_d96_c1280"
static const char *const stage3[] = {
    "uir_r1_a5_k5_s2_e6_c1280", MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280,
    UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280,
    MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280, UIR1280, MQA1280,
    UIR1280, MQA1280, UIR1280, NULL};
static const char *const *const stages[] = {stage0, stage1, stage2, stage3};

typedef struct block {
    char type[4];        /* "er", "uir", "mqa" */
    int64_t a, k, s, e10, c, h, v, d; /* timm's letters (e10: the expansion × 10) */
} block;

/* One block string of timm's ("uir_r1_a3_k5_s2_e6_c256") into b; false where it is not of that form. */
static bool decode(const char *text, block *b) {
    memset(b, 0, sizeof *b);
    b->v = 1;
    size_t n = strcspn(text, "_");
    if (n == 0 || n >= sizeof b->type) return false;
    memcpy(b->type, text, n);
    for (const char *p = text + n; *p == '_';) {
        char key = p[1];
        char *end;
        double v = strtod(p + 2, &end);
        if (end == p + 2) return false;
        switch (key) {
        case 'r': break; /* (every block of these stages repeats once) */
        case 'a': b->a = (int64_t)v; break;
        case 'k': b->k = (int64_t)v; break;
        case 's': b->s = (int64_t)v; break;
        case 'e': b->e10 = (int64_t)lround(v * 10); break;
        case 'c': b->c = (int64_t)v; break;
        case 'h': b->h = (int64_t)v; break;
        case 'v': b->v = (int64_t)v; break;
        case 'd': b->d = (int64_t)v; break;
        default: return false;
        }
        p = end;
    }
    return true;
}

/* timm's make_divisible(v, 8): the nearest multiple of 8, at least 8, never below 90 % of v */
static int64_t divisible(double v) {
    int64_t r = (int64_t)(v + 4) / 8 * 8;
    if (r < 8) r = 8;
    if (r < 0.9 * v) r += 8;
    return r;
}

hfx_status hfx_mobilenet_parse(hfx_cfg c, hfx_mobilenet *t, hfx_error *err) {
    const char *arch;
    hfx_status st;
    bool pooling;
    memset(t, 0, sizeof *t);
    t->multiplier = 1.0;
    if ((st = hfx_cfg_str_or(c, "architecture", "", &arch, err)) || (st = hfx_cfg_bool_or(c, "do_pooling", false, &pooling, err)))
        return st;
    if (strcmp(arch, "mobilenetv5_300m_enc") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: architecture '%s': of timm's models hfx builds MobileNet-V5's "
                                                  "encoder 'mobilenetv5_300m_enc' (Gemma 3n's vision tower) only",
                        c.where, arch);
    if (pooling)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: do_pooling true: MobileNet-V5's encoder has no pooling head (its "
                                                  "feature map is the output)", c.where);
    const json_t *args = json_object_get(c.obj, "model_args"), *v;
    const char *key;
    json_object_foreach((json_t *)args, key, v) {
        if (strcmp(key, "channel_multiplier") != 0 || !json_is_number(v) || !(json_number_value(v) > 0) ||
            json_number_value(v) > 8)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: model_args.%s: hfx takes channel_multiplier (a number in "
                                                      "(0, 8]) only", c.where, key);
        t->multiplier = json_number_value(v);
    }
    return HFX_OK;
}

typedef struct net_ctx {
    const hfx_mobilenet *t;
    hfx_graph *g;
    hfx_weights *w;
    const char *prefix; /* "timm_model." */
    char name[192];
} net_ctx;

/* "<prefix><stem>.<leaf>" (one buffer: each use copies it into a weight name first) */
static const char *at(net_ctx *c, const char *stem, const char *leaf) {
    snprintf(c->name, sizeof c->name, "%s%s.%s", c->prefix, stem, leaf);
    return c->name;
}

/* timm's RMSNorm over the channels of x [N,C,H,W] (f32): x / √(mean(x²) + 1e-6) · w */
static hfx_value *channel_rms(net_ctx *c, hfx_value *x, int64_t C, const char *stem, const char *leaf) {
    hfx_graph *g = c->g;
    int64_t axis = 1;
    hfx_value *w = hfx_reshape(g, hfx_weight_f32(c->w, 1, &C, at(c, stem, leaf)), 4,
                               (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(C), hfx_dim_const(1), hfx_dim_const(1)});
    hfx_value *f = hfx_cast(g, x, HFX_DTYPE_F32);
    hfx_value *ms = hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_MUL, f, f), 1, &axis);
    hfx_value *r = hfx_op1(g, HFX_OP_SQRT, hfx_op2(g, HFX_OP_ADD, ms, hfx_const_f32(g, 1e-6f)));
    return hfx_cast(g, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_DIV, f, r), w), x->dtype);
}

/* x [N,C,H,W] with `n` zero rows after its last along `axis` (2 or 3) */
static hfx_value *zeros_after(net_ctx *c, hfx_value *x, int axis, int64_t n) {
    hfx_graph *g = c->g;
    hfx_dim dims[4];
    hfx_value *shape[4];
    for (int a = 0; a < 4; a++) {
        dims[a] = a == axis ? hfx_dim_const(n) : x->dims[a];
        shape[a] = hfx_unsqueeze(g, a == axis ? hfx_const_i64(g, n) : hfx_dim_of(g, x, a), 0);
    }
    hfx_value *zeros = hfx_expand(g, hfx_const_scalar(g, x->dtype, 0.0), hfx_concat(g, 4, shape, 0), 4, dims);
    return hfx_concat(g, 2, (hfx_value *[]){x, zeros}, axis);
}

/* A k × k convolution `<stem>.weight` (bias `<stem>.bias` where `bias`) of stride s and `groups` over x [N,in,H,W] into
 * `out` channels, padded "same": ⌈H/s⌉ × ⌈W/s⌉, the odd unit of padding after */
static hfx_value *conv(net_ctx *c, hfx_value *x, int64_t in, int64_t out, int64_t k, int64_t s, int64_t groups,
                       const char *stem, bool bias) {
    int64_t pad[2];
    for (int a = 0; a < 2; a++) {
        int64_t i = x->dims[2 + a].c, o = (i + s - 1) / s, total = (o - 1) * s + k - i;
        if (total < 0) total = 0;
        pad[a] = total / 2;
        if (total % 2) x = zeros_after(c, x, 2 + a, 1);
    }
    hfx_value *w = hfx_weight(c->w, 4, (int64_t[]){out, in / groups, k, k}, "%s", at(c, stem, "weight"));
    hfx_value *b = bias ? hfx_weight(c->w, 1, &out, "%s", at(c, stem, "bias")) : NULL;
    return hfx_conv2d(c->g, x, w, b, (int64_t[]){s, s}, pad, groups, (const char *const[]){NULL, NULL});
}

/* ConvNormAct: the convolution `<stem>.conv`, RMSNorm `<stem>.bn`, GELU where `act` */
static hfx_value *conv_norm(net_ctx *c, hfx_value *x, int64_t in, int64_t out, int64_t k, int64_t s, int64_t groups,
                            const char *stem, bool act) {
    char n[160];
    snprintf(n, sizeof n, "%.150s.conv", stem);
    x = conv(c, x, in, out, k, s, groups, n, false);
    x = channel_rms(c, x, out, stem, "bn.weight");
    return act ? hfx_activate(c->g, HFX_ACT_GELU_TANH, x) : x;
}

static hfx_value *layer_scaled(net_ctx *c, hfx_value *x, int64_t C, const char *stem) {
    hfx_value *gamma = hfx_reshape(c->g, hfx_weight(c->w, 1, &C, "%s", at(c, stem, "layer_scale.gamma")), 4,
                                   (hfx_dim[]){hfx_dim_const(1), hfx_dim_const(C), hfx_dim_const(1), hfx_dim_const(1)});
    return hfx_op2(c->g, HFX_OP_MUL, x, gamma);
}

/* edge residual: [N,in,H,W] → [N,out,H/s,W/s] */
static hfx_value *edge_residual(net_ctx *c, const block *b, hfx_value *x, int64_t in, int64_t out, const char *stem) {
    int64_t mid = divisible((double)in * (double)b->e10 / 10.0);
    char n[160];
    snprintf(n, sizeof n, "%s.conv_exp", stem);
    hfx_value *h = hfx_activate(c->g, HFX_ACT_GELU_TANH,
                                channel_rms(c, conv(c, x, in, mid, b->k, b->s, 1, n, false), mid, stem, "bn1.weight"));
    snprintf(n, sizeof n, "%s.conv_pwl", stem);
    h = channel_rms(c, conv(c, h, mid, out, 1, 1, 1, n, false), out, stem, "bn2.weight");
    return in == out && b->s == 1 ? hfx_op2(c->g, HFX_OP_ADD, h, x) : h;
}

/* universal inverted residual (the fusion adapter's too: `skip` false, no layer scale where `scaled` is false) */
static hfx_value *inverted_residual(net_ctx *c, const block *b, hfx_value *x, int64_t in, int64_t out, const char *stem,
                                    bool skip, bool scaled) {
    int64_t mid = divisible((double)in * (double)b->e10 / 10.0);
    char n[160];
    hfx_value *h = x;
    if (b->a) {
        snprintf(n, sizeof n, "%s.dw_start", stem);
        h = conv_norm(c, h, in, in, b->a, b->k ? 1 : b->s, in, n, false);
    }
    snprintf(n, sizeof n, "%s.pw_exp", stem);
    h = conv_norm(c, h, in, mid, 1, 1, 1, n, true);
    if (b->k) {
        snprintf(n, sizeof n, "%s.dw_mid", stem);
        h = conv_norm(c, h, mid, mid, b->k, b->s, mid, n, true);
    }
    snprintf(n, sizeof n, "%s.pw_proj", stem);
    h = conv_norm(c, h, mid, out, 1, 1, 1, n, false);
    if (scaled) h = layer_scaled(c, h, out, stem);
    return skip && in == out && b->s == 1 ? hfx_op2(c->g, HFX_OP_ADD, h, x) : h;
}

/* one of the attention's key or value paths `<stem>.attn.<which>`: [N,C,H,W] → [N,1,P,d] */
static hfx_value *kv_path(net_ctx *c, const block *b, hfx_value *x, int64_t C, const char *stem, const char *which) {
    hfx_graph *g = c->g;
    char n[160];
    if (b->v > 1) {
        snprintf(n, sizeof n, "%s.attn.%s.down_conv", stem, which);
        x = conv(c, x, C, C, b->k, b->v, C, n, false);
        snprintf(n, sizeof n, "%s.attn.%s", stem, which);
        x = channel_rms(c, x, C, n, "norm.weight");
    }
    snprintf(n, sizeof n, "%s.attn.%s.proj", stem, which);
    x = conv(c, x, C, b->d, 1, 1, 1, n, false); /* [N,d,H',W'] */
    hfx_dim P = hfx_dim_const(x->dims[2].c * x->dims[3].c);
    x = hfx_reshape(g, x, 3, (hfx_dim[]){x->dims[0], hfx_dim_const(b->d), P});
    return hfx_unsqueeze(g, hfx_transpose(g, x, 3, (int64_t[]){0, 2, 1}), 1);
}

/* mobile multi-query attention over x [N,C,H,W] into `out` channels */
static hfx_value *mobile_attention(net_ctx *c, const block *b, hfx_value *x, int64_t C, int64_t out, const char *stem) {
    hfx_graph *g = c->g;
    int64_t H = x->dims[2].c, W = x->dims[3].c, heads = b->h, d = b->d;
    char n[160];
    hfx_value *h = channel_rms(c, x, C, stem, "norm.weight");
    snprintf(n, sizeof n, "%s.attn.query.proj", stem);
    hfx_value *q = conv(c, h, C, heads * d, 1, 1, 1, n, false); /* [N, heads·d, H, W] */
    q = hfx_reshape(g, q, 4, (hfx_dim[]){x->dims[0], hfx_dim_const(heads), hfx_dim_const(d), hfx_dim_const(H * W)});
    q = hfx_transpose(g, q, 4, (int64_t[]){0, 1, 3, 2});       /* [N, heads, HW, d] */
    hfx_value *k = kv_path(c, b, h, C, stem, "key"), *v = kv_path(c, b, h, C, stem, "value");
    hfx_value *o = hfx_attend_any_rank(g, q, k, v, NULL, 1.0 / sqrt((double)d)); /* [N, heads, HW, d] */
    o = hfx_transpose(g, o, 4, (int64_t[]){0, 1, 3, 2});       /* [N, heads, d, HW]: channels heads-major */
    o = hfx_reshape(g, o, 4, (hfx_dim[]){x->dims[0], hfx_dim_const(heads * d), hfx_dim_const(H), hfx_dim_const(W)});
    snprintf(n, sizeof n, "%s.attn.output.proj", stem);
    o = layer_scaled(c, conv(c, o, heads * d, out, 1, 1, 1, n, false), out, stem);
    return out == C && b->s == 1 ? hfx_op2(g, HFX_OP_ADD, o, x) : o;
}

/* x [N,C,h,w] resized to [N,C,H,W] by nearest neighbours (torch's: source index ⌊i · h / H⌋) */
static hfx_value *nearest(net_ctx *c, hfx_value *x, int64_t H, int64_t W) {
    for (int a = 0; a < 2; a++) {
        int64_t from = x->dims[2 + a].c, to = a ? W : H;
        int64_t *idx = hfx_arena_alloc(c->g->arena, (size_t)to * sizeof *idx);
        if (!idx) {
            hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
            return x;
        }
        for (int64_t i = 0; i < to; i++) idx[i] = (int64_t)floor((double)i * ((double)from / (double)to));
        x = hfx_gather(c->g, x, hfx_const_bytes(c->g, HFX_DTYPE_I64, 1, &to, idx), 2 + a);
    }
    return x;
}

/* the multi-scale fusion adapter over the last two stages' outputs: [N, 2048, 16, 16] */
static hfx_value *fusion(net_ctx *c, hfx_value *hi, int64_t c_hi, hfx_value *lo, int64_t c_lo) {
    hfx_graph *g = c->g;
    int64_t H = hi->dims[2].c, W = hi->dims[3].c;
    if (H % OUT_GRID || W % OUT_GRID) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "MobileNet-V5: the image leaves a %lld × %lld map before its fusion "
                                               "adapter, which averages whole blocks down to 16 × 16 only (timm "
                                               "interpolates otherwise): give an image size of a multiple of 256",
                       (long long)H, (long long)W);
        return hi;
    }
    hfx_value *x = hfx_concat(g, 2, (hfx_value *[]){hi, nearest(c, lo, H, W)}, 1);
    block ffn = {.type = "uir", .s = 1, .e10 = 20};
    x = inverted_residual(c, &ffn, x, c_hi + c_lo, OUT_CHANNELS, "msfa.ffn", false, false);
    if (H != OUT_GRID || W != OUT_GRID) { /* average each (H/16) × (W/16) block */
        int64_t kh = H / OUT_GRID, kw = W / OUT_GRID, axes[2] = {3, 5};
        x = hfx_reshape(g, x, 6, (hfx_dim[]){x->dims[0], hfx_dim_const(OUT_CHANNELS), hfx_dim_const(OUT_GRID),
                                             hfx_dim_const(kh), hfx_dim_const(OUT_GRID), hfx_dim_const(kw)});
        x = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 2, axes), 4,
                        (hfx_dim[]){x->dims[0], hfx_dim_const(OUT_CHANNELS), hfx_dim_const(OUT_GRID), hfx_dim_const(OUT_GRID)});
    }
    return channel_rms(c, x, OUT_CHANNELS, "msfa", "norm.weight");
}

hfx_status hfx_mobilenet_image_size(const hfx_checkpoint *ck, int64_t *height, int64_t *width, hfx_error *err) {
    hfx_status st = hfx_processor_image_size(ck, height, width, err);
    if (!st && !*height) *height = *width = 768; /* (timm's input_size for it) */
    return st;
}

hfx_value *hfx_mobilenet_features(const hfx_mobilenet *t, hfx_graph *g, hfx_weights *w, const char *prefix,
                                  hfx_value *pixels) {
    net_ctx c = {t, g, w, prefix, {0}};
    int64_t in = t->multiplier < 1.0 ? 64 : divisible(64 * t->multiplier); /* (timm fixes the stem below 1) */
    hfx_value *x = conv(&c, pixels, 3, in, 3, 2, 1, "conv_stem.conv", true);
    x = hfx_activate(g, HFX_ACT_GELU_TANH, channel_rms(&c, x, in, "conv_stem", "bn.weight"));
    hfx_value *last[2] = {NULL, NULL};
    int64_t width[2] = {0, 0};
    char stem[48];
    for (int s = 0; s < 4 && !g->failed; s++) {
        for (int i = 0; stages[s][i] && !g->failed; i++) {
            block b;
            if (!decode(stages[s][i], &b)) {
                hfx_graph_fail(g, HFX_ERR_INTERNAL, "MobileNet-V5: block '%s' unread", stages[s][i]);
                return x;
            }
            int64_t out = divisible((double)b.c * t->multiplier);
            snprintf(stem, sizeof stem, "blocks.%d.%d", s, i);
            x = b.type[0] == 'e'   ? edge_residual(&c, &b, x, in, out, stem)
                : b.type[0] == 'u' ? inverted_residual(&c, &b, x, in, out, stem, true, true)
                                   : mobile_attention(&c, &b, x, in, out, stem);
            in = out;
        }
        if (s >= 2) last[s - 2] = x, width[s - 2] = in;
    }
    return g->failed ? x : fusion(&c, last[0], width[0], last[1], width[1]);
}
