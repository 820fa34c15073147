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

hfx_value *hfx_dec_ffn(layer_ctx *c, int64_t i, hfx_value *h) {
    const hfx_decoder_cfg *m = c->m;
    if (c->d->moe && c->d->moe->shared == HFX_SHARED_LINEAR) /* the experts (if any) + the shared MLP, in transformers' order */
        return m->sparse[i] ? hfx_op2(c->g, HFX_OP_ADD, hfx_dec_moe(c, i, h), shared_linear_mlp(c, i, h))
                            : shared_linear_mlp(c, i, h);
    if (m->sparse[i]) return hfx_dec_moe(c, i, h);
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.mlp, name, p, sizeof p)
    if (c->d->mlp == HFX_MLP_PLAIN) {
        hfx_value *up = hfx_dec_proj(c, h, m->hidden, m->intermediate, m->bias.mlp, P(c->n.fc_in));
        return hfx_dec_proj(c, hfx_activate(c->g, m->act, up), m->intermediate, m->hidden, m->bias.mlp, P(c->n.fc_out));
    }
    hfx_value *gate, *up;
    if (c->d->mlp == HFX_MLP_GATED_FUSED) { /* one [gate; up] weight (Phi-3) */
        hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){2 * m->intermediate, m->hidden}, "%s.weight", P("gate_up_proj"));
        gate = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, 0, m->intermediate), NULL);
        up = hfx_linear(c->g, h, hfx_const_slice(c->g, w, 0, m->intermediate, m->intermediate), NULL);
    } else {
        gate = hfx_dec_proj(c, h, m->hidden, m->intermediate, m->bias.mlp, P(c->n.gate));
        up = hfx_dec_proj(c, h, m->hidden, m->intermediate, m->bias.mlp, P(c->n.up));
    }
    gate = hfx_dec_scaled(c->g, gate, m->mult.gate); /* Falcon-H1's mlp_multipliers */
    hfx_value *act = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, gate), up);
    return hfx_dec_scaled(c->g, hfx_dec_proj(c, act, m->intermediate, m->hidden, m->bias.mlp, P(c->n.down)), m->mult.down);
#undef P
}
