/* Multi-head latent attention (DeepSeek V2/V3): its widths and scale, and the block. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* transformers builds the latent norms (q_a_layernorm, kv_a_layernorm) without an epsilon: its RMSNorm's default,
 * whatever rms_norm_eps says */
#define LATENT_NORM_EPS 1e-6

/* Multi-head latent attention's widths; the rotary runs on qk_rope_head_dim dims (its head_dim). */
hfx_status hfx_dec_parse_mla(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_status st;
    if ((st = hfx_cfg_int_in_or(c, "q_lora_rank", 0, 0, 1 << 20, &m->mla.q_lora, err)) ||
        (st = hfx_cfg_int_in(c, "kv_lora_rank", 1, 1 << 20, &m->mla.kv_lora, err)) ||
        (st = hfx_cfg_int_in(c, "qk_nope_head_dim", 0, 4096, &m->mla.qk_nope, err)) ||
        (st = hfx_cfg_int_in(c, "qk_rope_head_dim", 2, 4096, &m->mla.qk_rope, err)) ||
        (st = hfx_cfg_int_in(c, "v_head_dim", 1, 4096, &m->mla.v_dim, err)) ||
        /* V3's rope_interleave (absent: true); V2 rotates pairs in place, MiniCPM3 halves as they come */
        (d->rope.interleave_key && (st = hfx_cfg_bool_or(c, d->rope.interleave_key, true, &m->mla.rope_deinterleave, err))))
        return st;
    if (!d->rope.interleave_key) m->mla.rope_deinterleave = false;
    m->mla.q_scale = m->mla.latent_scale = 1.0;
    if (d->latent.scaling == HFX_MLA_SCALE_LORA_RANKS) {
        if (!m->mla.q_lora)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: q_lora_rank must be set: the queries' scale is √(hidden_size / "
                                                  "q_lora_rank)", c.where);
        m->mla.q_scale = sqrt((double)m->hidden / (double)m->mla.q_lora);
        m->mla.latent_scale = sqrt((double)m->hidden / (double)m->mla.kv_lora);
    }
    m->mla.index_heads = m->mla.index_dim = m->mla.index_topk = 0;
    m->mla.index_shared = NULL;
    if (d->latent.keys != HFX_MLA_KEYS_ALL && (st = hfx_dec_parse_indexer(d, c, arena, m, err))) return st;
    if (m->mla.qk_rope % 2)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: qk_rope_head_dim %lld is odd: the rotary pairs dims", c.where,
                        (long long)m->mla.qk_rope);
    m->head_dim = m->mla.qk_rope;
    return HFX_OK;
}

/* (qk_nope + qk_rope)^-0.5, times mscale(factor, mscale_all_dim)² for a scaled rotary (YaRN). */
hfx_status hfx_dec_mla_scale(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err) {
    m->scale = 1.0 / sqrt((double)(m->mla.qk_nope + m->mla.qk_rope));
    if (m->rope.type == HFX_ROPE_DEFAULT) return HFX_OK;
    const json_t *p = json_object_get(c.obj, "rope_parameters");
    if (!json_is_object(p)) p = json_object_get(c.obj, "rope_scaling");
    hfx_cfg rc = {p, c.where};
    double mscale_all = 0;
    hfx_status st = json_is_object(p) ? hfx_cfg_num_or(rc, "mscale_all_dim", 0, &mscale_all, err) : HFX_OK;
    if (st) return st;
    if (mscale_all != 0 && m->rope.factor > 1) {
        double ms = 0.1 * mscale_all * log(m->rope.factor) + 1.0;
        m->scale *= ms * ms;
    }
    return HFX_OK;
}

hfx_value *hfx_dec_pairs_to_halves(layer_ctx *c, hfx_value *x) {
    int64_t d = x->dims[x->rank - 1].c;
    int64_t *order = hfx_arena_alloc(c->g->arena, (size_t)d * sizeof *order);
    if (!order) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return x;
    }
    for (int64_t j = 0; j < d; j++) order[j] = j < d / 2 ? 2 * j : 2 * (j - d / 2) + 1;
    hfx_value *idx = hfx_const_bytes(c->g, HFX_DTYPE_I64, 1, &d, order);
    return hfx_gather(c->g, x, idx, x->rank - 1);
}

/* The queries [B,S,H·qk]: from a low-rank projection (q_a, RMSNorm, q_b; *q_resid the normed low-rank part, which the
 * indexer reads too) or q_proj; HFX_MLA_GATE_FROM_QUERY's with each head's gate beside, *q_gate [B,S,H·V]. */
static hfx_value *queries(layer_ctx *c, int64_t i, hfx_value *h, hfx_value **q_resid, hfx_value **q_gate) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->heads, qk = m->mla.qk_nope + m->mla.qk_rope, V = m->mla.v_dim, L = m->mla.q_lora;
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    *q_resid = *q_gate = NULL;
    if (!L) return hfx_dec_proj(c, h, m->hidden, H * qk, false, P("q_proj"));
    hfx_value *qa = hfx_dec_proj(c, h, m->hidden, L, m->bias.q, P("q_a_proj"));
    *q_resid = hfx_dec_norm_eps(c, qa, L, P("q_a_layernorm"), LATENT_NORM_EPS);
    if (c->d->latent.gate != HFX_MLA_GATE_FROM_QUERY) return hfx_dec_proj(c, *q_resid, L, H * qk, false, P("q_b_proj"));
    hfx_value *both[2] = {*q_resid, qa};
    hfx_value *q = hfx_dec_split_heads(c, hfx_dec_proj(c, hfx_concat(g, 2, both, 2), 2 * L, H * (qk + V), false,
                                                       P("q_gate_proj")), H, qk + V); /* [B,S,H,qk+V] */
#undef P
    *q_gate = hfx_reshape(g, hfx_slice(g, q, 3, qk, qk + V), 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H * V)});
    return hfx_reshape(g, hfx_slice(g, q, 3, 0, qk), 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H * qk)});
}

/* Multi-head latent attention (DeepSeek V2/V3): the queries (above); one shared latent kv_a → (RMSNorm'd latent
 * [B,1,S,R], rotary key part [B,1,S,r]), which is what the cache holds; kv_b expands the latent of every cached position
 * into per-head keys (no-rope part) and values, and the rotary key part is shared by all heads. */
hfx_value *hfx_dec_mla_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->heads, nope = m->mla.qk_nope, rope = m->mla.qk_rope, qk = nope + rope, R = m->mla.kv_lora, V = m->mla.v_dim;
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *q_resid, *q_gate, *q = queries(c, i, h, &q_resid, &q_gate);
    q = hfx_dec_to_bhsd(c, hfx_dec_split_heads(c, hfx_dec_scaled(g, q, m->mla.q_scale), H, qk)); /* [B,H,S,qk] */
    hfx_value *q_pass = hfx_slice(g, q, 3, 0, nope), *q_rot = hfx_slice(g, q, 3, nope, qk);
    hfx_value *ckv = hfx_dec_proj(c, h, m->hidden, R + rope, m->bias.q, P("kv_a_proj_with_mqa")); /* [B,S,R+r] */
    hfx_value *latent = hfx_dec_norm_eps(c, hfx_slice(g, ckv, 2, 0, R), R, P("kv_a_layernorm"), LATENT_NORM_EPS);
    latent = hfx_unsqueeze(g, hfx_dec_scaled(g, latent, m->mla.latent_scale), 1); /* [B,1,S,R] */
    hfx_value *k_rot = hfx_unsqueeze(g, hfx_slice(g, ckv, 2, R, R + rope), 1); /* [B,1,S,r] */
    if (cos) { /* (Kimi's latent attention has none: its "rotary" part passes as it is) */
        if (m->mla.rope_deinterleave) q_rot = hfx_dec_pairs_to_halves(c, q_rot), k_rot = hfx_dec_pairs_to_halves(c, k_rot);
        q_rot = hfx_rope_apply(g, q_rot, cos, sin, m->rope.interleaved);
        k_rot = hfx_rope_apply(g, k_rot, cos, sin, m->rope.interleaved);
    }
    if (c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE) {
        hfx_dec_seed_cache(c, i, &latent, &k_rot);
        if (!c->seed_mask) c->seed_mask = hfx_dec_seed_causal_mask(c, q, latent, 0);
        bias = c->seed_mask;
    } else {
        latent = hfx_dec_kv_cache(c, i, latent, 0);                           /* [B,1,T,R] */
        k_rot = hfx_dec_kv_cache(c, i, k_rot, 1);                             /* [B,1,T,r] */
    }
    if (c->d->latent.keys != HFX_MLA_KEYS_ALL) bias = hfx_dec_indexed_bias(c, i, h, q_resid, cos, sin, bias);
    hfx_dim T = latent->dims[2];
    hfx_value *kv = hfx_dec_proj(c, hfx_reshape(g, latent, 3, (hfx_dim[]){c->batch, T, hfx_dim_const(R)}), R, H * (nope + V),
                         false, P("kv_b_proj"));
    kv = hfx_dec_to_bhsd(c, hfx_reshape(g, kv, 4, (hfx_dim[]){c->batch, T, hfx_dim_const(H), hfx_dim_const(nope + V)}));
    hfx_value *k_nope = hfx_slice(g, kv, 3, 0, nope), *v = hfx_slice(g, kv, 3, nope, nope + V); /* [B,H,T,·] */
    /* the shared rotary part broadcast over the heads: + 0 of [1,H,1,1] (exact) */
    int64_t zeros_shape[4] = {1, H, 1, 1};
    float *zeros = hfx_arena_alloc(g->arena, (size_t)H * sizeof *zeros);
    if (!zeros) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return h;
    }
    memset(zeros, 0, (size_t)H * sizeof *zeros);
    hfx_value *heads0 = hfx_cast(g, hfx_const_bytes(g, HFX_DTYPE_F32, 4, zeros_shape, zeros), k_rot->dtype);
    hfx_value *k_rot_h = hfx_op2(g, HFX_OP_ADD, k_rot, heads0);
    hfx_value *qs[2] = {q_pass, q_rot}, *ks[2] = {k_nope, k_rot_h};
    hfx_value *qc = hfx_concat(g, 2, qs, 3);
    if (c->q_temperature) qc = hfx_op2(g, HFX_OP_MUL, qc, hfx_cast(g, c->q_temperature, qc->dtype)); /* (Mistral 4) */
    hfx_value *kc = hfx_concat(g, 2, ks, 3), *a; /* [B,H,S,V] */
    if (c->d->latent.sinks == HFX_MLA_SINKS_LEARNED) {
        hfx_value *sinks = hfx_cast(g, hfx_weight(c->w, 1, &H, "%s", P("sinks")), HFX_DTYPE_F32);
        a = hfx_attention_with_sinks(g, qc, kc, v, bias, sinks, m->scale, m->window[i]);
    } else {
        a = hfx_attention(g, qc, kc, v, bias, m->scale, 0, m->window[i]);
    }
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3}); /* [B,S,H,V] */
    if (m->head_gate) { /* HFX_MLA_GATE_PER_HEAD: sigmoid in f32, back to the weights' dtype */
        hfx_value *gate = hfx_cast(g, hfx_dec_proj(c, h, m->hidden, H, false, P("g_proj")), HFX_DTYPE_F32);
        a = hfx_op2(g, HFX_OP_MUL, a, hfx_unsqueeze(g, hfx_cast(g, hfx_op1(g, HFX_OP_SIGMOID, gate), a->dtype), -1));
    } else if (c->d->latent.gate == HFX_MLA_GATE_ELEMENTWISE) {
        hfx_value *gate = hfx_dec_split_heads(c, hfx_dec_proj(c, h, m->hidden, H * V, false, P("gate_proj")), H, V);
        a = hfx_op2(g, HFX_OP_MUL, a, hfx_op1(g, HFX_OP_SIGMOID, gate)); /* [B,S,H,V] */
    }
    a = hfx_reshape(g, a, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(H * V)});
    if (q_gate) /* HFX_MLA_GATE_FROM_QUERY: sigmoid in f32, the product back to the weights' dtype */
        a = hfx_cast(g, hfx_op2(g, HFX_OP_MUL, hfx_cast(g, a, HFX_DTYPE_F32),
                                hfx_op1(g, HFX_OP_SIGMOID, hfx_cast(g, q_gate, HFX_DTYPE_F32))), a->dtype);
    return hfx_dec_proj(c, a, H * V, m->hidden, m->bias.o, P(c->n.o));
#undef P
}
