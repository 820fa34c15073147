/* Dense feed-forward blocks: the plain MLP, the gated one (separate or fused gate/up), Granite 4.0's
 * shared MLP; a sparse layer's experts are moe.c's. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* Granite 4.0's shared MLP: input_linear [gate; up] of shared_intermediate_size, output_linear. */
static hfx_value *shared_linear_mlp(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    int64_t S = m->moe.shared_intermediate, H = m->hidden;
    char p[160];
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * S, H}, "%s", hfx_dec_name(c, i, "shared_mlp", "input_linear.weight", p, sizeof p));
    hfx_value *gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, S), NULL);
    hfx_value *up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, S, S), NULL);
    hfx_value *a = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
    return hfx_dec_proj(c, a, S, H, false, hfx_dec_name(c, i, "shared_mlp", "output_linear", p, sizeof p));
}

/* xIELU (Apertus) on x, its parameters the MLP's act_fn.alpha_p, alpha_n [1] and beta, eps []:
 * x > 0: αp·x² + β·x; else (expm1(min(x, ε)) − x)·αn + β·x, αp = softplus(alpha_p),
 * αn = β + softplus(alpha_n). */
static hfx_value *xielu(layer_ctx *c, int64_t i, hfx_value *x) {
    hfx_graph *g = c->g;
    char p[160];
    int64_t one = 1;
#define W(leaf, rank) hfx_cast(g, hfx_weight(c->w, rank, &one, "%s", hfx_dec_name(c, i, c->n.mlp, leaf, p, sizeof p)), x->dtype)
    hfx_value *ap = hfx_softplus(g, W("act_fn.alpha_p", 1)), *beta = W("act_fn.beta", 0), *eps = W("act_fn.eps", 0);
    hfx_value *an = hfx_op2(g, HFX_OP_ADD, beta, hfx_softplus(g, W("act_fn.alpha_n", 1)));
#undef W
    hfx_value *bx = hfx_op2(g, HFX_OP_MUL, beta, x);
    hfx_value *pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_MUL, ap, x), x), bx);
    hfx_value *em1 = hfx_op2(g, HFX_OP_SUB, hfx_op1(g, HFX_OP_EXP, hfx_op2(g, HFX_OP_MIN, x, eps)),
                             hfx_const_scalar(g, x->dtype, 1.0));
    hfx_value *neg = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_SUB, em1, x), an), bx);
    return hfx_where(g, hfx_op2(g, HFX_OP_GREATER, x, hfx_const_scalar(g, x->dtype, 0.0)), pos, neg);
}

/* The MLP's activation: a learned one reads its weights */
static hfx_value *mlp_act(layer_ctx *c, int64_t i, hfx_value *x) {
    return c->m->act == HFX_ACT_XIELU ? xielu(c, i, x) : hfx_activate(c->g, c->m->act, x);
}

/* Φ⁻¹(p), the standard normal's quantile, as torch's Normal(0, 1).icdf computes it in f32: erfinv(2p − 1)·√2, erfinv by
 * Newton's steps on erf (from 0 they rise monotonically to the root: erf is concave on x ≥ 0). */
static float normal_quantile(double p) {
    float y = 2.0f * (float)p - 1.0f;
    double target = fabs((double)y), x = 0;
    for (int k = 0; k < 200 && target > 0; k++) {
        double step = (erf(x) - target) / (2.0 / sqrt(3.14159265358979323846) * exp(-x * x));
        x -= step;
        if (!(fabs(step) > 1e-15 * (1 + x))) break;
    }
    float e = (float)(y < 0 ? -x : x);
    return e * (float)sqrt(2.0);
}

/* Gemma 3n's Gaussian top-k: relu(x − (mean + σ·Φ⁻¹(sparsity))) over the last axis, σ the population deviation; the
 * share `sparsity` of a normally spread x falls to 0. */
static hfx_value *gaussian_top_k(hfx_graph *g, hfx_value *x, double sparsity) {
    int64_t axis = -1;
    hfx_value *mean = hfx_reduce(g, HFX_OP_REDUCE_MEAN, x, 1, &axis);
    hfx_value *dev = hfx_op2(g, HFX_OP_SUB, x, mean);
    hfx_value *sigma = hfx_op1(g, HFX_OP_SQRT, hfx_reduce(g, HFX_OP_REDUCE_MEAN, hfx_op2(g, HFX_OP_MUL, dev, dev), 1, &axis));
    hfx_value *cutoff = hfx_op2(g, HFX_OP_ADD, mean,
                                hfx_op2(g, HFX_OP_MUL, sigma, hfx_const_scalar(g, x->dtype, normal_quantile(sparsity))));
    return hfx_activate(g, HFX_ACT_RELU, hfx_op2(g, HFX_OP_SUB, x, cutoff));
}

hfx_value *hfx_dec_ffn(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    if (c->d->moe && c->d->moe->shared == HFX_SHARED_LINEAR && m->moe.shared_intermediate) /* the experts (if any) + the
                                                                                              shared MLP, in order */
        return m->sparse[i] ? hfx_op2(c->g, HFX_OP_ADD, hfx_dec_moe(c, i, h), shared_linear_mlp(c, i, h))
                            : shared_linear_mlp(c, i, h);
    if (c->d->mlp == HFX_MLP_CHANNEL_MIX) return hfx_dec_channel_mix(c, i, h);
    if (m->sparse[i]) return hfx_dec_moe(c, i, h);
    int64_t I = hfx_dec_shape(m, i).intermediate; /* the layer's own width (Gemma 4's double-wide layers) */
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.mlp, name, p, sizeof p)
#define FUSED(dflt) (c->n.fused_mlp ? c->n.fused_mlp : dflt)
    if (c->d->mlp == HFX_MLP_PLAIN) {
        hfx_value *up = hfx_dec_proj(c, h, m->hidden, I, m->bias.mlp, P(c->n.fc_in));
        return hfx_dec_proj(c, mlp_act(c, i, up), I, m->hidden, m->bias.mlp, P(c->n.fc_out));
    }
    hfx_value *gate, *up;
    if (c->d->mlp == HFX_MLP_GATED_FUSED) { /* one [gate; up] weight (Phi-3) */
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * I, m->hidden}, "%s.weight", P(FUSED("gate_up_proj")));
        hfx_value *b = m->bias.mlp ? hfx_weight(c->w, 1, (int64_t[]){2 * I}, "%s.bias", P(FUSED("gate_up_proj"))) : NULL;
        hfx_value *update = hfx_weight_lora_update(c->w, h, m->hidden, 2 * I, P(FUSED("gate_up_proj")));
        gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, I), b ? hfx_const_slice(c->g, b, 0, 0, I) : NULL);
        up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, I, I), b ? hfx_const_slice(c->g, b, 0, I, I) : NULL);
        gate = hfx_weight_lora_part(c->g, gate, update, 0, I), up = hfx_weight_lora_part(c->g, up, update, I, I);
        if (c->adapter >= 0) { /* a shared block's use: its low-rank addition to [gate; up] */
            hfx_value *lora = hfx_dec_lora(c, NULL, h, m->hidden, 2 * I, P("gate_up_proj_adapter_list"));
            gate = hfx_op2(c->g, HFX_OP_ADD, gate, hfx_slice(c->g, lora, 2, 0, I));
            up = hfx_op2(c->g, HFX_OP_ADD, up, hfx_slice(c->g, lora, 2, I, 2 * I));
        }
    } else if (c->d->mlp == HFX_MLP_UP_GATE_FUSED) { /* one [up; gate] weight (GTE) */
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * I, m->hidden}, "%s.weight", P(FUSED("up_gate_proj")));
        hfx_value *b = m->bias.mlp ? hfx_weight(c->w, 1, (int64_t[]){2 * I}, "%s.bias", P(FUSED("up_gate_proj"))) : NULL;
        hfx_value *update = hfx_weight_lora_update(c->w, h, m->hidden, 2 * I, P(FUSED("up_gate_proj")));
        up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, I), b ? hfx_const_slice(c->g, b, 0, 0, I) : NULL);
        gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, I, I), b ? hfx_const_slice(c->g, b, 0, I, I) : NULL);
        up = hfx_weight_lora_part(c->g, up, update, 0, I), gate = hfx_weight_lora_part(c->g, gate, update, I, I);
    } else {
        gate = hfx_dec_proj(c, h, m->hidden, I, m->bias.mlp, P(c->n.gate));
        up = hfx_dec_proj(c, h, m->hidden, I, m->bias.mlp, P(c->n.up));
    }
    gate = hfx_dec_scaled(c->g, gate, m->mult.gate); /* Falcon-H1's mlp_multipliers */
    double sparsity = hfx_dec_shape(m, i).sparsity;
    if (sparsity > 0) gate = gaussian_top_k(c->g, gate, sparsity);
    hfx_value *act = hfx_op2(c->g, HFX_OP_MUL, mlp_act(c, i, gate), up);
    if (c->d->mlp == HFX_MLP_GATED_SUB_NORMED) act = hfx_dec_norm(c, act, I, P("ffn_sub_norm"));
    return hfx_dec_scaled(c->g, hfx_dec_proj(c, act, I, m->hidden, m->bias.down, P(c->n.down)), m->mult.down);
#undef FUSED
#undef P
}
