/* Self-attention in a decoder layer: q/k/v projections (separate, fused, per head, gated), q/k norms,
 * clipping, rotary, the cache, soft-caps and sinks, the output projection. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* x [B,S,heads,hd] normalized over hd, times each head's weight [heads, hd] (no bias) */
static hfx_value *head_weighted_norm(layer_ctx *c, hfx_value *x, int64_t heads, int64_t hd, const char *prefix) {
    hfx_graph *g = c->g;
    char probe[192];
    snprintf(probe, sizeof probe, "%s.norms.0.weight", prefix);
    hfx_value *w;
    if (hfx_weight_exists(c->w, probe)) { /* StableLM: nn.LayerNorm(hd, bias=False) per head */
        hfx_value **ws = hfx_arena_alloc(g->arena, (size_t)heads * sizeof *ws);
        if (!ws) {
            hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
            return x;
        }
        for (int64_t h = 0; h < heads; h++) ws[h] = hfx_weight(c->w, 1, &hd, "%s.norms.%lld.weight", prefix, (long long)h);
        w = hfx_const_stack(g, (int)heads, ws);
    } else {
        w = hfx_weight(c->w, 2, (int64_t[]){heads, hd}, "%s.weight", prefix);
    }
    if (c->m->norm == HFX_NORM_LAYER_WEIGHT) /* Cohere: in f32, the weight too, cast back */
        return hfx_cast(g, hfx_op2(g, HFX_OP_MUL, hfx_layer_norm(g, hfx_cast(g, x, HFX_DTYPE_F32), NULL, NULL, c->m->eps),
                                   hfx_cast(g, w, HFX_DTYPE_F32)), x->dtype);
    return hfx_op2(g, HFX_OP_MUL, hfx_layer_norm(g, x, NULL, NULL, c->m->eps), w);
}

/* q [B,S,heads·hd], k and v [B,S,kv_heads·hd] (and the output gate, like q) from h [B,S,hidden]:
 * separate projections, or views of one fused weight, or q_proj's rows per head [query_h; gate_h];
 * the values k's projection itself where the layer has no v_proj. k and v stay NULL in a layer that
 * attends to an earlier layer's keys and values. */
static void project_qkv(layer_ctx *c, int64_t i, const hfx_layer_shape *s, hfx_value *h, hfx_value **q, hfx_value **k,
                        hfx_value **v, hfx_value **gate) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_desc *d = c->d;
    hfx_graph *g = c->g;
    int64_t hd = s->head_dim, nq = m->heads * hd, nkv = s->kv_heads * hd, in = m->attn_width ? m->attn_width : m->hidden;
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    if (m->qkv != HFX_QKV_SEPARATE) { /* one fused weight: a view of it per projection, no copy */
        hfx_value *w = hfx_dec_weight_out_in(c, in, nq + 2 * nkv, P(c->n.qkv));
        hfx_value *b = m->bias.q ? hfx_weight(c->w, 1, (int64_t[]){nq + 2 * nkv}, "%s.bias", P(c->n.qkv)) : NULL;
        hfx_value *part[3];
        /* a LoRA adapter's update of [q; k; v] (the other layouts' rows are not contiguous: an adapter of theirs goes
           unread and is refused) */
        hfx_value *update = m->qkv == HFX_QKV_CONCAT ? hfx_weight_lora_update(c->w, h, in, nq + 2 * nkv, P(c->n.qkv))
                                                     : NULL;
        for (int j = 0; j < 3; j++) {
            hfx_value *wj, *bj = NULL;
            if (m->qkv == HFX_QKV_CONCAT) { /* rows [q; k; v] */
                int64_t start = j == 0 ? 0 : nq + (j - 1) * nkv, len = j == 0 ? nq : nkv;
                wj = hfx_const_slice(g, w, 0, start, len);
                if (b) bj = hfx_const_slice(g, b, 0, start, len);
                part[j] = hfx_weight_lora_part(g, hfx_linear(g, h, wj, bj), update, start, len);
                continue;
            } else if (m->qkv == HFX_QKV_GROUPED) { /* per key/value group: rows [its queries; k; v] */
                int64_t per_group = m->heads / s->kv_heads, group_rows = (per_group + 2) * hd;
                int64_t start = j == 0 ? 0 : (per_group + j - 1) * hd, len = j == 0 ? per_group * hd : hd;
                wj = hfx_const_group_rows(g, w, s->kv_heads, group_rows, start, len);
                if (b) bj = hfx_const_group_rows(g, b, s->kv_heads, group_rows, start, len);
            } else { /* per head h: rows [q_h; k_h; v_h] (MHA) */
                wj = hfx_const_interleaved_rows(g, w, m->heads, 3, j, hd);
                if (b) bj = hfx_const_interleaved_rows(g, b, m->heads, 3, j, hd);
            }
            part[j] = hfx_linear(g, h, wj, bj);
        }
        *q = part[0], *k = part[1], *v = part[2];
        return;
    }
    if (d->attention == HFX_ATTN_OUTPUT_GATED || d->attention == HFX_ATTN_OUTPUT_GATED_QSA) { /* q_proj's rows per head:
                                                                                             [query_h; gate_h] */
        hfx_value *w = hfx_dec_weight_out_in(c, in, 2 * nq, P("q_proj"));
        hfx_value *b = m->bias.q ? hfx_weight(c->w, 1, (int64_t[]){2 * nq}, "%s.bias", P("q_proj")) : NULL;
        *q = hfx_linear(g, h, hfx_const_interleaved_rows(g, w, m->heads, 2, 0, hd),
                       b ? hfx_const_interleaved_rows(g, b, m->heads, 2, 0, hd) : NULL);
        *gate = hfx_linear(g, h, hfx_const_interleaved_rows(g, w, m->heads, 2, 1, hd),
                          b ? hfx_const_interleaved_rows(g, b, m->heads, 2, 1, hd) : NULL);
    } else {
        *q = hfx_dec_proj(c, h, in, nq, m->bias.q, P("q_proj"));
        if (d->attention == HFX_ATTN_GATE_PROJ) *gate = hfx_dec_proj(c, h, in, nq, false, P("gate_proj"));
        if (m->head_gate) { /* transformers saves LFM3's g_proj as gate_proj, and reads either */
            const char *name = hfx_weight_exists(c->w, P("g_proj.weight")) ? "g_proj" : "gate_proj";
            *gate = hfx_unsqueeze(g, hfx_dec_proj(c, h, in, m->heads, false, P(name)), -1);
        }
    }
    if (s->kv_from != i) { /* transformers drops such a layer's k/v weights on load: so does hfx */
        static const char *const unused[] = {"k_proj.weight", "k_proj.bias", "v_proj.weight", "v_proj.bias",
                                             "k_norm.weight", "v_norm.weight"};
        for (size_t u = 0; u < sizeof unused / sizeof unused[0]; u++) hfx_weight_ignore(c->w, P(unused[u]));
        return;
    }
    *k = hfx_dec_proj(c, h, in, nkv, m->bias.k, P("k_proj"));
    *v = s->values_are_keys ? *k : hfx_dec_proj(c, h, in, s->kv_heads * s->v_dim, m->bias.v, P("v_proj"));
    if (c->adapter >= 0 && m->shared.qkv_adapters) { /* a shared block's use: its own low-rank additions */
        *q = hfx_dec_lora(c, *q, h, in, nq, P("linear_q_adapter_list"));
        *k = hfx_dec_lora(c, *k, h, in, nkv, P("linear_k_adapter_list"));
        *v = hfx_dec_lora(c, *v, h, in, nkv, P("linear_v_adapter_list"));
    }
#undef P
}

/* k [B,KV,S,hd] and v [B,S,KV,hd] joined with the layer's cache (v to [B,KV,S,hd] on the way); returns
 * the bias attention reads: the seed profile's causal one, made here at the first layer, or `bias`. */
static hfx_value *join_cache(layer_ctx *c, int64_t i, hfx_value *q, hfx_value **k, hfx_value **v, hfx_value *bias) {
    int64_t window = c->m->window[i];
    if (c->o->io == HFX_IO_SEED && c->o->cache != HFX_CACHE_NONE) {
        *v = hfx_dec_to_bhsd(c, *v);
        hfx_dec_seed_cache(c, i, k, v);
        if (window) { /* a dynamic cache's sliding layer: causal within the window */
            if (!c->seed_window_mask) c->seed_window_mask = hfx_dec_seed_causal_mask(c, q, *k, window);
            bias = c->seed_window_mask;
        } else {
            if (!c->seed_mask) c->seed_mask = hfx_dec_seed_causal_mask(c, q, *k, 0); /* a dynamic cache: causal */
            bias = c->seed_mask;
        }
    } else {
        *k = hfx_dec_kv_cache(c, i, *k, 0);
        *v = hfx_dec_kv_cache(c, i, hfx_dec_to_bhsd(c, *v), 1);
    }
    return bias;
}

/* The layer's queries, keys and values [B,H|KV,S,hd] from h [B,S,hidden]: projected, clipped, normed
 * and rotated as the lineage does (k and v NULL in a layer that reads an earlier layer's). */
static void queries_keys_values(layer_ctx *c, int64_t i, const hfx_layer_shape *s, hfx_value *h, hfx_value *cos,
                                hfx_value *sin, hfx_value **q, hfx_value **k, hfx_value **v, hfx_value **gate) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_desc *d = c->d;
    hfx_graph *g = c->g;
    int64_t hd = s->head_dim;
    bool own = s->kv_from == i;
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    project_qkv(c, i, s, h, q, k, v, gate);
    if (m->qk_norm == HFX_QK_NORM_WHOLE) { /* over the whole projection (OLMo-2, OLMoE) */
        *q = hfx_dec_norm(c, *q, m->heads * hd, P(c->n.q_norm));
        if (own) *k = hfx_dec_norm(c, *k, s->kv_heads * hd, P(c->n.k_norm));
    }
    if (m->clip_qkv > 0) { /* clamp_(-c, c), after the norms (OLMoE; OLMo has none) */
        hfx_value **x[3] = {q, k, v};
        for (int j = 0; j < (own ? 3 : 1); j++) {
            hfx_value *lo = hfx_const_scalar(g, (*x[j])->dtype, -m->clip_qkv), *hi = hfx_const_scalar(g, (*x[j])->dtype, m->clip_qkv);
            *x[j] = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, *x[j], lo), hi);
        }
    }
    *q = hfx_dec_split_heads(c, *q, m->heads, hd);
    if (own) {
        *k = hfx_dec_split_heads(c, hfx_dec_scaled(g, *k, m->mult.key), s->kv_heads, hd); /* Falcon-H1's key_multiplier */
        *v = hfx_dec_split_heads(c, hfx_dec_scaled(g, *v, m->value_scale), s->kv_heads, s->v_dim); /* MiMo's scale */
    }
    if (m->qk_norm == HFX_QK_NORM_PER_HEAD || m->qk_norm == HFX_QK_NORM_PER_HEAD_AND_V) { /* over head_dim, per head,
                                                                                             before rotary */
        *q = hfx_dec_norm(c, *q, hd, P(c->n.q_norm));
        if (own) *k = hfx_dec_norm(c, *k, hd, P(c->n.k_norm));
        if (own && m->qk_norm == HFX_QK_NORM_PER_HEAD_AND_V) *v = hfx_dec_rms_plain(c, *v);
    }
    if (m->qk_norm == HFX_QK_NORM_HEAD_WEIGHTS) {
        *q = head_weighted_norm(c, *q, m->heads, hd, P(c->n.q_norm));
        if (own) *k = head_weighted_norm(c, *k, s->kv_heads, hd, P(c->n.k_norm));
    }
    *q = hfx_dec_to_bhsd(c, *q);
    if (own) *k = hfx_dec_to_bhsd(c, *k);
    if (cos && !m->no_rope[i]) { /* rotary; learned absolute positions were added to the embeddings instead */
        hfx_dtype dt = (*q)->dtype; /* ERNIE 4.5 rotates in f32 (its cos/sin are f32 too) */
        bool f32 = d->rope.pairs == HFX_ROTARY_PAIRS_F32;
        for (int j = 0; j < (own ? 2 : 1); j++) {
            hfx_value **x = j ? k : q;
            if (f32) *x = hfx_cast(g, *x, HFX_DTYPE_F32);
            *x = hfx_cast(g, hfx_rope_apply(g, *x, cos, sin, m->rope.interleaved), dt);
        }
    }
    if (m->qk_norm == HFX_QK_NORM_AFTER_ROPE) { /* [B,H,S,hd] over hd, after rotary */
        *q = hfx_dec_norm(c, *q, hd, P(c->n.q_norm));
        if (own) *k = hfx_dec_norm(c, *k, hd, P(c->n.k_norm));
    }
    if (m->qk_norm == HFX_QK_NORM_L2_ROPE_LAYERS && !m->no_rope[i]) {
        *q = hfx_dec_rms_plain(c, *q);
        if (own) *k = hfx_dec_rms_plain(c, *k);
    }
#undef P
}

/* Self-attention over h [B,S,hidden] → [B,S,hidden], grouped heads broadcast in the attention op; a
 * layer that shares an earlier layer's keys and values attends to what that layer did, under its
 * own type's mask. */
/* JetMoE's mixture of attention heads (HFX_ATTN_MIXTURE) over h [B,S,hidden] → [B,S,hidden]: every expert's queries,
 * each token's k picked by one-hot products (exact: the others weigh 0) and ordered so that query head h·k + j (expert
 * slot j, key head h) reads key head h as grouped heads do; the outputs back through the same experts, gated. */
static hfx_value *mixture_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                    hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t E = m->moe.experts, K = m->moe.top_k, KV = m->kv_heads, hd = m->head_dim, D = KV * hd, H = m->hidden;
    hfx_dim B = c->batch, S = c->seq;
    char p[160];
#define P(name) hfx_dec_name(c, i, c->n.attn, name, p, sizeof p)
    hfx_value *router = hfx_weight(c->w, 2, (int64_t[]){E, H}, "%s", P("experts.router.layer.weight"));
    hfx_value *top, *idx;
    hfx_top_k(g, hfx_cast(g, hfx_linear(g, h, router, NULL), HFX_DTYPE_F32), K, &top, &idx);
    hfx_value *gates = hfx_cast(g, hfx_softmax(g, top, -1), h->dtype);                              /* [B,S,K] */
    hfx_value *pick = hfx_one_hot(g, idx, E, h->dtype);                                             /* [B,S,K,E] */
    static const int64_t swap_last[3] = {0, 2, 1};
    hfx_value *w_in = hfx_weight(c->w, 3, (int64_t[]){E, D, H}, "%s", P("experts.input_linear.weight"));
    hfx_value *h5 = hfx_unsqueeze(g, hfx_unsqueeze(g, h, 2), 2);                                   /* [B,S,1,1,H] */
    hfx_value *q = hfx_op2(g, HFX_OP_MATMUL, h5, hfx_const_permute(g, w_in, swap_last));            /* [B,S,E,1,D] */
    q = hfx_op2(g, HFX_OP_MATMUL, pick, hfx_reshape(g, q, 4, (hfx_dim[]){B, S, hfx_dim_const(E), hfx_dim_const(D)}));
    q = hfx_reshape(g, q, 5, (hfx_dim[]){B, S, hfx_dim_const(K), hfx_dim_const(KV), hfx_dim_const(hd)});
    q = hfx_reshape(g, hfx_transpose(g, q, 5, (int64_t[]){0, 3, 2, 1, 4}), 4,
                    (hfx_dim[]){B, hfx_dim_const(KV * K), S, hfx_dim_const(hd)});                  /* [B,KV·K,S,hd] */
    hfx_value *kv = hfx_weight(c->w, 2, (int64_t[]){2 * D, H}, "%s", P("kv_proj.weight"));
    hfx_value *k = hfx_dec_to_bhsd(c, hfx_dec_split_heads(c, hfx_linear(g, h, hfx_const_slice(g, kv, 0, 0, D), NULL), KV, hd));
    hfx_value *v = hfx_dec_split_heads(c, hfx_linear(g, h, hfx_const_slice(g, kv, 0, D, D), NULL), KV, hd);
    if (cos) q = hfx_rope_apply(g, q, cos, sin, m->rope.interleaved), k = hfx_rope_apply(g, k, cos, sin, m->rope.interleaved);
    bias = join_cache(c, i, q, &k, &v, bias);
    c->kv_seen[2 * i] = k, c->kv_seen[2 * i + 1] = v;
    hfx_value *a = hfx_attention(g, q, k, v, bias, m->scale, 0, m->window[i]);                     /* [B,KV·K,S,hd] */
    a = hfx_reshape(g, a, 5, (hfx_dim[]){B, hfx_dim_const(KV), hfx_dim_const(K), S, hfx_dim_const(hd)});
    a = hfx_reshape(g, hfx_transpose(g, a, 5, (int64_t[]){0, 3, 2, 1, 4}), 4,
                    (hfx_dim[]){B, S, hfx_dim_const(K), hfx_dim_const(D)});                         /* [B,S,K,D] */
    /* each slot's gated output placed at its expert [B,S,E,D], through every expert's output_linear, summed */
    hfx_value *z = hfx_op2(g, HFX_OP_MATMUL, hfx_transpose(g, pick, 4, (int64_t[]){0, 1, 3, 2}),
                           hfx_op2(g, HFX_OP_MUL, a, hfx_unsqueeze(g, gates, -1)));
    hfx_value *w_out = hfx_weight(c->w, 3, (int64_t[]){E, H, D}, "%s", P("experts.output_linear.weight"));
    hfx_value *y = hfx_op2(g, HFX_OP_MATMUL, hfx_unsqueeze(g, z, 3), hfx_const_permute(g, w_out, swap_last)); /* [B,S,E,1,H] */
    int64_t axes[2] = {2, 3};
    y = hfx_reshape(g, hfx_reduce(g, HFX_OP_REDUCE_SUM, y, 2, axes), 3, (hfx_dim[]){B, S, hfx_dim_const(H)});
    return hfx_op2(g, HFX_OP_ADD, y, hfx_weight(c->w, 1, &H, "%s", P("experts.bias")));
#undef P
}

hfx_value *hfx_dec_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos,
                                  hfx_value *sin, hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    const hfx_decoder_desc *d = c->d;
    hfx_graph *g = c->g;
    if (d->attention == HFX_ATTN_LATENT) return hfx_dec_mla_attention(c, i, h, cos, sin, bias);
    if (d->attention == HFX_ATTN_MIXTURE) return mixture_attention(c, i, h, cos, sin, bias);
    if (d->attention == HFX_ATTN_COMPRESSED) return hfx_dec_compressed_attention(c, i, h, cos, sin, bias);
    hfx_layer_shape s = hfx_dec_shape(m, i);
    int64_t window = m->window[i];
    hfx_value *q, *k = NULL, *v = NULL, *gate = NULL;
    queries_keys_values(c, i, &s, h, cos, sin, &q, &k, &v, &gate);
    if (c->q_temperature && (d->scores.temperature != HFX_QTEMP_NOPE_FLOOR || m->no_rope[i]))
        q = hfx_op2(g, HFX_OP_MUL, q, hfx_cast(g, c->q_temperature, q->dtype));
    if (d->attention == HFX_ATTN_OUTPUT_GATED_QSA) bias = hfx_dec_qsa_bias(c, i, h, cos, sin, bias);
    if (s.kv_from == i) {
        bias = join_cache(c, i, q, &k, &v, bias);
        c->kv_seen[2 * i] = k, c->kv_seen[2 * i + 1] = v;
    } else if (hfx_dec_seed_profile(c)) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" does not cover layers that attend to another layer's "
                                               "keys and values (num_kv_shared_layers) yet; export with io \"optimum\"",
                       d->architecture);
        return h;
    } else {
        k = c->kv_seen[2 * s.kv_from], v = c->kv_seen[2 * s.kv_from + 1];
    }
    double scale = m->scale_by_layer ? m->scale / (double)(i + 1) : m->scale;
    hfx_value *a; /* [B,H,S,v_dim] */
    if (d->attention == HFX_ATTN_SINKS || (d->attention == HFX_ATTN_SINKS_SLIDING && window)) {
        char sp[160];
        const char *leaf = hfx_weight_exists(c->w, hfx_dec_name(c, i, c->n.attn, "attention_sink_bias", sp, sizeof sp))
                               ? "attention_sink_bias" : "sinks"; /* (the Hub's name, which transformers renames) */
        hfx_value *sinks = hfx_weight(c->w, 1, &m->heads, "%s", hfx_dec_name(c, i, c->n.attn, leaf, sp, sizeof sp));
        a = hfx_attention_with_sinks(g, q, k, v, bias, hfx_cast(g, sinks, HFX_DTYPE_F32), scale, window);
    } else {
        a = hfx_attention(g, q, k, v, bias, scale, m->attn_softcap, window);
    }
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    if (gate && m->head_gate) a = hfx_op2(g, HFX_OP_MUL, a, hfx_op1(g, HFX_OP_SIGMOID, gate)); /* [B,S,H,1]: per head */
    int64_t width = m->heads * s.v_dim; /* the heads' outputs, values wide */
    a = hfx_reshape(g, a, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(width)});
    if (gate && !m->head_gate) a = hfx_op2(g, HFX_OP_MUL, a, hfx_op1(g, HFX_OP_SIGMOID, gate));
    char p[160];
    if (d->attention == HFX_ATTN_SUB_NORMED)
        a = hfx_dec_norm(c, a, width, hfx_dec_name(c, i, c->n.attn, "attn_sub_norm", p, sizeof p));
    return hfx_dec_proj(c, a, width, m->hidden, m->bias.o, hfx_dec_name(c, i, c->n.attn, c->n.o, p, sizeof p));
}
