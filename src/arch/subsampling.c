/* NeMo's striding subsampling (conformer.h's hfx_nemo_subsample): Parakeet's and Phi-4-multimodal's audio encoders. */
#include <stdio.h>

#include "arch/conformer.h"
#include "base/status.h"

/* Each row's valid time steps after one strided convolution that made x [B,C,T',M] from n [B,1] (i64) of them: the
 * steps t < ⌊(n + 2p − k)/s⌋ + 1, i.e. (t + 1)·s ≤ n + 2p − k + s — compared, not divided (a runtime may round an
 * integer division in a fused chain) — [B,T'] bool; *n becomes their count [B,1]. */
static hfx_value *kept_after(const hfx_nemo_subsampling *s, hfx_graph *g, hfx_value *x, hfx_value **n) {
    int64_t k = s->kernel, p = (k - 1) / 2, axis = 1;
    hfx_value *one = hfx_const_i64(g, 1);
    hfx_value *room = hfx_op2(g, HFX_OP_ADD, *n, hfx_const_i64(g, 2 * p - k + s->stride)); /* [B,1] */
    hfx_value *t = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, x, 2), one, x->dims[2]);
    hfx_value *end = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, t, one), hfx_const_i64(g, s->stride));
    hfx_value *keep = hfx_op2(g, HFX_OP_LESS_EQUAL, hfx_unsqueeze(g, end, 0), room);
    *n = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_cast(g, keep, HFX_DTYPE_I64), 1, &axis);
    return keep;
}

/* x [B,C,T,M] with the time steps `keep` [B,T] does not keep zeroed (none where keep is NULL) */
static hfx_value *zero_padding(hfx_graph *g, hfx_value *x, hfx_value *keep) {
    if (!keep) return x;
    return hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, keep, 1), 3), x, hfx_const_scalar(g, x->dtype, 0.0));
}

/* One Conv2d of the stack, <prefix><convs>.<i>: [B,in,T,M] → [B,out,T',M'] */
static hfx_value *conv(const hfx_nemo_subsampling *s, hfx_graph *g, hfx_weights *w, const char *prefix, hfx_value *x,
                       int i, int64_t in_per_group, int64_t k, int64_t stride, int64_t groups, const char *frames) {
    int64_t p = (k - 1) / 2, out = s->channels;
    hfx_value *wt = hfx_weight(w, 4, (int64_t[]){out, in_per_group, k, k}, "%s%s.%d.weight", prefix, s->convs, i);
    hfx_value *b = hfx_weight(w, 1, &out, "%s%s.%d.bias", prefix, s->convs, i);
    return hfx_conv2d(g, x, wt, b, (int64_t[]){stride, stride}, (int64_t[]){p, p}, groups,
                      (const char *const[]){frames, NULL});
}

hfx_value *hfx_nemo_subsample(const hfx_nemo_subsampling *s, hfx_graph *g, hfx_weights *w, const char *prefix,
                              hfx_value *features, hfx_value *n, hfx_value **keep) {
    int64_t C = s->channels, k = s->kernel;
    char frames[32];
    hfx_value *x = hfx_unsqueeze(g, features, 1); /* [B,1,T,mels] */
    hfx_value *kept = NULL;
    for (int64_t step = 0; step < s->steps && !g->failed; step++) {
        snprintf(frames, sizeof frames, step == s->steps - 1 ? "frames" : "subsampled%lld_frames", (long long)step);
        int layer = step == 0 ? 0 : (int)(3 * step - 1); /* 0 (conv, ReLU), then (depthwise, pointwise, ReLU) */
        x = conv(s, g, w, prefix, x, layer, 1, k, s->stride, step ? C : 1, frames); /* one channel first; then depthwise */
        if (n) kept = kept_after(s, g, x, &n); /* (the pointwise convolution keeps the length) */
        x = zero_padding(g, x, kept);
        if (step > 0) x = zero_padding(g, conv(s, g, w, prefix, x, layer + 1, C, 1, 1, 1, NULL), kept);
        x = hfx_activate(g, HFX_ACT_RELU, x);
    }
    if (g->failed) return NULL;
    int64_t M = x->dims[3].c;
    x = hfx_transpose(g, x, 4, (int64_t[]){0, 2, 1, 3}); /* [B,F,C,M'] */
    x = hfx_reshape(g, x, 3, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(C * M)});
    if (keep) *keep = kept;
    return hfx_linear_named(w, x, C * M, s->hidden, true, "%s%s", prefix, s->linear);
}
