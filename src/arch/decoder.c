/* The decoder-only template's graph: embeddings, each layer's blocks in the descriptor's layout
 * (attention.c, mla.c, decoder_mixers.c, ffn.c, moe.c), the final norm and the head; the family. */
#include "arch/decoder_blocks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/mask.h"
#include "arch/pooling.h"
#include "arch/weights.h"
#include "base/half.h"
#include "base/status.h"

static hfx_status decoder_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    return hfx_decoder_parse(desc_, c, arena, cfg, err);
}

static hfx_decoder_names resolve_names(const hfx_decoder_desc *d, hfx_layer_layout layout) {
    hfx_decoder_names n = {.embed = "model.embed_tokens.weight", .layer = "model.layers.%lld", .attn = "self_attn",
                           .qkv = "qkv_proj", .o = "o_proj", .fc_in = "c_fc", .fc_out = "c_proj",
                           .norm1 = "input_layernorm", .norm2 = "post_attention_layernorm", .final_norm = "model.norm",
                           .lm_head = "lm_head.weight", .pre2 = "pre_feedforward_layernorm",
                           .post2 = "post_feedforward_layernorm", .q_norm = "q_norm", .k_norm = "k_norm",
                           .mlp = "mlp", .gate = "gate_proj", .up = "up_proj", .down = "down_proj", .conv = "conv",
                           .ssm = "mixer"};
    const hfx_decoder_names *f = d->names;
    if (!f) return n;
#define TAKE(field) if (f->field) n.field = f->field
    TAKE(embed); TAKE(layer); TAKE(attn); TAKE(qkv); TAKE(o); TAKE(fc_in); TAKE(fc_out); TAKE(norm1);
    TAKE(norm2); TAKE(pos_embed); TAKE(final_norm); TAKE(lm_head); TAKE(pre2); TAKE(post2); TAKE(q_norm);
    TAKE(k_norm); TAKE(mlp); TAKE(gate); TAKE(up); TAKE(down); TAKE(conv); TAKE(ssm); TAKE(embed_alt);
    TAKE(project_in); TAKE(project_out); TAKE(embed_norm); TAKE(token_types); TAKE(head_dense); TAKE(head_norm);
    TAKE(lm_head_bias); TAKE(pooler); TAKE(class_dense); TAKE(class_out); TAKE(class_norm); TAKE(fused_mlp);
#undef TAKE
    if (layout == HFX_LAYOUT_PARALLEL && f->parallel_norm1) n.norm1 = f->parallel_norm1, n.norm2 = f->parallel_norm2;
    return n;
}

/* x + block·residual_multiplier (Granite scales what each block adds). */
static hfx_value *residual(layer_ctx *c, hfx_value *x, hfx_value *block) {
    if (c->m->mult.residual != 1.0)
        block = hfx_op2(c->g, HFX_OP_MUL, block, hfx_const_scalar(c->g, block->dtype, c->m->mult.residual));
    return hfx_op2(c->g, HFX_OP_ADD, x, block);
}

/* One layer per layout, each its blocks in transformers' order: x [B,S,hidden] → [B,S,hidden]. The
 * mixer is the layer's attention or recurrent block (decoder_mixers.c), the MLP dense or the
 * experts (ffn.c, moe.c). */
typedef struct layer_args {
    int64_t i;
    hfx_value *cos, *sin, *bias; /* the layer's rotary tables and attention bias */
} layer_args;

#define NAME(leaf) hfx_dec_name(c, a->i, NULL, leaf, p, sizeof p)
#define MIXER(h) hfx_dec_mixer(c, a->i, h, a->cos, a->sin, a->bias)
#define NORM(x, leaf) hfx_dec_norm(c, x, c->m->hidden, NAME(leaf))

/* mlp(norm2(x)) + attn(norm1(x)) + x (GPT-NeoX's use_parallel_residual) */
static hfx_value *layer_parallel(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    hfx_value *m = MIXER(NORM(x, c->n.norm1));
    hfx_value *f = hfx_dec_ffn(c, a->i, NORM(x, c->n.norm2));
    return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, f, m), x);
}

/* x + attn(h) + mlp(h), h = norm1(x) (Phi, Cohere, StableLM) */
static hfx_value *layer_parallel_shared(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    hfx_value *h = NORM(x, c->n.norm1);
    hfx_value *m = MIXER(h);
    return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, x, m), hfx_dec_ffn(c, a->i, h));
}

/* x += mixer(norm1(x)); x += mlp(norm2(x)); the stream in f32 where the model keeps it so (each block
 * in the weights' dtype), the MLP absent in a mixers-only model */
static hfx_value *layer_pre(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    bool bare = c->m->layout == HFX_LAYOUT_PRE_BARE_FIRST && a->i == 0; /* (layer 0's input norm an Identity) */
    if (c->m->residual_f32 && c->o->dtype != HFX_DTYPE_F32) {
        hfx_value *h = hfx_cast(c->g, x, c->o->dtype), *block = MIXER(bare ? h : NORM(h, c->n.norm1));
        x = hfx_op2(c->g, HFX_OP_ADD, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, block, HFX_DTYPE_F32));
    } else {
        x = residual(c, x, MIXER(bare ? x : NORM(x, c->n.norm1)));
    }
    return c->m->no_mlp ? x : residual(c, x, hfx_dec_ffn(c, a->i, NORM(x, c->n.norm2)));
}

/* x += post1(attn(norm1(x))); x += post2(mlp(pre2(x))) (Gemma 2/3, GLM-4); the post-norms identities where the
 * config turns them off (LFM3) */
static hfx_value *layer_sandwich(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    bool post = !c->m->no_post_norms;
    hfx_value *m = MIXER(NORM(x, c->n.norm1));
    x = residual(c, x, post ? NORM(m, c->n.norm2) : m);
    hfx_value *f = hfx_dec_ffn(c, a->i, NORM(x, c->n.pre2));
    return residual(c, x, post ? NORM(f, c->n.post2) : f);
}

/* x += norm1(attn(x)); x += norm2(mlp(x)) (OLMo-2, EXAONE 4) */
static hfx_value *layer_post(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    x = residual(c, x, NORM(MIXER(x), c->n.norm2));
    return residual(c, x, NORM(hfx_dec_ffn(c, a->i, x), c->n.post2));
}

/* x = norm1(x + attn(x)); x = norm2(x + mlp(x)) (OPT-350m's post-LN layers) */
static hfx_value *layer_post_ln(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    x = NORM(residual(c, x, MIXER(x)), c->n.norm1);
    return NORM(residual(c, x, hfx_dec_ffn(c, a->i, x)), c->n.norm2);
}

/* the attention layers post-normed, the recurrent ones pre-normed (OLMo-Hybrid) */
static hfx_value *layer_post_or_pre(layer_ctx *c, const layer_args *a, hfx_value *x) {
    return c->m->mixer && hfx_mixer_recurrent(c->m->mixer[a->i]) ? layer_pre(c, a, x) : layer_post(c, a, x);
}

/* the sandwich, the experts beside its MLP where the model has them, then the layer's own input and its
 * scalar (Gemma 4) */
static hfx_value *layer_sandwich_per_layer(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    hfx_value *m = MIXER(NORM(x, c->n.norm1)); /* (one name buffer: a statement per norm) */
    x = residual(c, x, NORM(m, c->n.norm2));
    hfx_value *f = hfx_dec_ffn(c, a->i, NORM(x, c->n.pre2));
    if (c->m->moe.experts) f = hfx_dec_moe_beside(c, a->i, x, f);
    return hfx_dec_per_layer_block(c, a->i, residual(c, x, NORM(f, c->n.post2)));
}

/* LongCat-Flash: a config layer's two sublayers, PRE's each (this is one of them), the experts over the first one's MLP
 * input added after the second's MLP */
static hfx_value *layer_paired_shortcut(layer_ctx *c, const layer_args *a, hfx_value *x) {
    long long part = (long long)(a->i % 2);
    char layer[96], attn[64], norm1[64], norm2[64], mlp[32], p[192];
    snprintf(layer, sizeof layer, c->n.layer, (long long)(a->i / 2)); /* (a name without conversions: printed as is) */
    snprintf(attn, sizeof attn, "%s.%lld", c->n.attn, part);
    snprintf(norm1, sizeof norm1, "%s.%lld", c->n.norm1, part);
    snprintf(norm2, sizeof norm2, "%s.%lld", c->n.norm2, part);
    snprintf(mlp, sizeof mlp, "mlps.%lld", part); /* (the dense MLPs' list; c->n.mlp names the experts' block) */
    layer_ctx s = *c;
    s.n.layer = layer, s.n.attn = attn;
    hfx_value *h = hfx_dec_norm(&s, x, c->m->hidden, hfx_dec_name(&s, a->i, NULL, norm1, p, sizeof p));
    x = residual(c, x, hfx_dec_mixer(&s, a->i, h, a->cos, a->sin, a->bias));
    h = hfx_dec_norm(&s, x, c->m->hidden, hfx_dec_name(&s, a->i, NULL, norm2, p, sizeof p));
    if (!part) c->shortcut = hfx_dec_moe(&s, a->i, h);
    s.n.mlp = mlp;
    x = residual(c, x, hfx_dec_ffn(&s, a->i, h));
    return part && c->shortcut ? hfx_op2(c->g, HFX_OP_ADD, x, c->shortcut) : x;
}

/* h = norm1(x); x = α·h + β·mixer(h); h = norm2(x); x = α'·h + β'·mlp(h), α and β the mixer kind's (MiniMax) */
static hfx_value *layer_normed_residual(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    const hfx_decoder_mults *k = &c->m->mult;
    bool linear = c->m->mixer && c->m->mixer[a->i] == HFX_MIXER_LIGHTNING;
    hfx_value *h = NORM(x, c->n.norm1);
    x = hfx_op2(c->g, HFX_OP_ADD, hfx_dec_scaled(c->g, h, linear ? k->linear_alpha : k->full_alpha),
                hfx_dec_scaled(c->g, MIXER(h), linear ? k->linear_beta : k->full_beta));
    h = NORM(x, c->n.norm2);
    return hfx_op2(c->g, HFX_OP_ADD, hfx_dec_scaled(c->g, h, k->mlp_alpha),
                   hfx_dec_scaled(c->g, hfx_dec_ffn(c, a->i, h), k->mlp_beta));
}

/* PRE's mixer alone; a hybrid layer's input first gains the shared block's contribution, which the residual does not
 * (Zamba2: x += mamba(norm(x + linear(block(x, embeddings))))), its norm and mixer under mamba_decoder */
static hfx_value *layer_shared_blocks(layer_ctx *c, const layer_args *a, hfx_value *x) {
    if (c->m->mixer[a->i] != HFX_MIXER_SHARED_BLOCK) return layer_pre(c, a, x);
    layer_ctx s = *c;
    s.n.norm1 = "mamba_decoder.input_layernorm", s.n.ssm = "mamba_decoder.mamba";
    hfx_value *in = hfx_op2(c->g, HFX_OP_ADD, x, hfx_dec_shared_block(c, a->i, x, a->cos, a->sin, a->bias));
    char p[160];
    hfx_value *h = hfx_dec_norm(&s, in, c->m->hidden, hfx_dec_name(&s, a->i, NULL, s.n.norm1, p, sizeof p));
    return residual(c, x, hfx_dec_mixer(&s, a->i, h, NULL, NULL, NULL));
}

/* hyper-connections: each sublayer reads the streams' mix and adds its output to each stream by its weight (HY V4) */
static hfx_value *layer_hyper(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    hfx_value *post, *comb, *h = hfx_dec_hyper_read(c, a->i, x, "attn_hc", &post, &comb);
    x = hfx_dec_hyper_write(c, x, post, comb, MIXER(NORM(h, c->n.norm1)));
    h = hfx_dec_hyper_read(c, a->i, x, "ffn_hc", &post, &comb);
    return hfx_dec_hyper_write(c, x, post, comb, hfx_dec_ffn(c, a->i, NORM(h, c->n.norm2)));
}

/* gated residuals: the n-gram layers' contribution first, then each sublayer reads the streams' gated mix and adds its
 * output to each stream by its weight (Qwen4-Exp) */
static hfx_value *layer_hyper_gated(layer_ctx *c, const layer_args *a, hfx_value *x) {
    if (c->m->ngram.index && c->m->ngram.index[a->i] >= 0) x = hfx_dec_ngram_block(c, a->i, x);
    hfx_value *inject, *h = hfx_dec_gated_read(c, a->i, x, "attn_hyper_connection", &inject);
    x = hfx_dec_gated_write(c, x, inject, MIXER(h));
    h = hfx_dec_gated_read(c, a->i, x, "mlp_hyper_connection", &inject);
    return hfx_dec_gated_write(c, x, inject, hfx_dec_ffn(c, a->i, h));
}

/* alternating updates: the sandwich on the active stream's prediction, with LAuReL's residual beside its attention
 * ((x + attn + laurel) / √2), then every stream corrected by the layer's output (Gemma 3n) */
static hfx_value *layer_altup(layer_ctx *c, const layer_args *a, hfx_value *x) {
    char p[160];
    hfx_graph *g = c->g;
    hfx_value *active, *pred = hfx_dec_altup_predict(c, a->i, x, &active);
    hfx_value *h = NORM(active, c->n.norm1);
    hfx_value *laurel = hfx_dec_laurel(c, a->i, h), *m = MIXER(h);
    hfx_value *y = hfx_op2(g, HFX_OP_ADD, active, NORM(m, c->n.norm2));
    y = hfx_op2(g, HFX_OP_DIV, hfx_op2(g, HFX_OP_ADD, y, laurel), hfx_const_scalar(g, y->dtype, sqrt(2.0)));
    hfx_value *f = hfx_dec_ffn(c, a->i, NORM(y, c->n.pre2));
    y = hfx_op2(g, HFX_OP_ADD, y, NORM(f, c->n.post2));
    return hfx_dec_altup_correct(c, a->i, pred, y);
}

#undef NAME
#undef MIXER
#undef NORM

static hfx_value *(*const layer_of_layout[])(layer_ctx *, const layer_args *, hfx_value *) = {
    [HFX_LAYOUT_PRE] = layer_pre,
    [HFX_LAYOUT_PRE_BARE_FIRST] = layer_pre,
    [HFX_LAYOUT_PARALLEL] = layer_parallel,
    [HFX_LAYOUT_SANDWICH] = layer_sandwich,
    [HFX_LAYOUT_POST] = layer_post,
    [HFX_LAYOUT_PARALLEL_SHARED] = layer_parallel_shared,
    [HFX_LAYOUT_POST_LN] = layer_post_ln,
    [HFX_LAYOUT_PRE_OR_POST_LN] = layer_pre, /* (the parse settles it: PRE or POST_LN) */
    [HFX_LAYOUT_SANDWICH_PER_LAYER] = layer_sandwich_per_layer,
    [HFX_LAYOUT_POST_OR_PRE_BY_MIXER] = layer_post_or_pre,
    [HFX_LAYOUT_SANDWICH_BY_CONFIG] = layer_sandwich, /* (the parse says which norms) */
    [HFX_LAYOUT_PARALLEL_OR_PRE] = layer_pre, /* (the parse settles it) */
    [HFX_LAYOUT_NORMED_RESIDUAL] = layer_normed_residual,
    [HFX_LAYOUT_PAIRED_SHORTCUT] = layer_paired_shortcut,
    [HFX_LAYOUT_HYPER] = layer_hyper,
    [HFX_LAYOUT_HYPER_SINKHORN] = layer_hyper, /* (hyper.c reads which) */
    [HFX_LAYOUT_HYPER_GATED] = layer_hyper_gated,
    [HFX_LAYOUT_SHARED_BLOCKS] = layer_shared_blocks,
    [HFX_LAYOUT_ALTUP] = layer_altup,
};
_Static_assert(sizeof layer_of_layout / sizeof layer_of_layout[0] == HFX_LAYOUT_ALTUP + 1,
               "a layer function for every layout");

static hfx_value *decoder_layer(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *cos, hfx_value *sin,
                                hfx_value *bias) {
    layer_args a = {i, cos, sin, bias};
    x = layer_of_layout[c->m->layout](c, &a, x);
    int64_t r = c->m->rwkv.rescale; /* RWKV's eval forward halves the stream after every rescale_every-th block */
    return r && (i + 1) % r == 0 ? hfx_dec_scaled(c->g, x, 0.5) : x;
}

/* BERT's prediction-head transform of x [..., hidden]: norm(act(dense(x))) (`dense` biased as the config says). */
static hfx_value *head_transform(layer_ctx *c, hfx_value *x, const char *dense, const char *norm) {
    const hfx_decoder_cfg *m = c->m;
    hfx_value *t = hfx_dec_proj(c, x, m->hidden, m->hidden, m->head_dense_bias, dense);
    return hfx_dec_norm(c, hfx_activate(c->g, m->head_act, t), m->hidden, norm);
}

/* The lm_head module itself over x [B,S,embed_dim]: its Linear (tied to the table `embed` where transformers ties it)
 * and its bias → [B,S,head_rows]. */
static hfx_value *lm_head_linear(layer_ctx *c, hfx_value *x, hfx_value *embed) {
    const hfx_decoder_cfg *m = c->m;
    hfx_value *head;
    if (m->tied) {
        head = embed;
        hfx_weight_ignore(c->w, c->n.lm_head); /* transformers ties it to the embeddings */
    } else {
        head = hfx_weight(c->w, 2, (int64_t[]){m->head_rows, m->embed_dim}, "%s", c->n.lm_head);
    }
    hfx_value *bias = NULL;
    if (m->bias.head && c->n.lm_head_bias) { /* the head's own bias, which transformers ties the decoder's to */
        char tied[160];
        size_t n = strlen(c->n.lm_head), w = strlen(".weight");
        if (n > w && strcmp(c->n.lm_head + n - w, ".weight") == 0) n -= w;
        snprintf(tied, sizeof tied, "%.*s.bias", (int)n, c->n.lm_head);
        if (hfx_weight_exists(c->w, tied)) hfx_weight_ignore(c->w, tied);
        bias = hfx_weight(c->w, 1, &m->head_rows, "%s", c->n.lm_head_bias);
    } else if (m->bias.head) { /* "<head>.bias" beside "<head>.weight" */
        char name[160];
        size_t n = strlen(c->n.lm_head), w = strlen(".weight");
        if (n > w && strcmp(c->n.lm_head + n - w, ".weight") == 0) n -= w;
        snprintf(name, sizeof name, "%.*s.bias", (int)n, c->n.lm_head);
        bias = hfx_weight(c->w, 1, &m->head_rows, "%s", name);
    }
    return hfx_linear(c->g, x, head, bias);
}

/* The LM head over the final hidden states: [B,S,hidden] → [B,S,vocab]. */
static hfx_value *lm_logits(layer_ctx *c, hfx_value *x, hfx_value *embed) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    if (m->embed_dim != m->hidden) /* OPT: back to the embeddings' width */
        x = hfx_dec_proj(c, x, m->hidden, m->embed_dim, false, c->n.project_out);
    if (c->d->head == HFX_HEAD_LM_TRANSFORM) /* GTE, NomicBERT: dense, activation, LayerNorm before the decoder */
        x = head_transform(c, x, c->n.head_dense, c->n.head_norm);
    hfx_value *logits = lm_head_linear(c, x, embed);
    if (m->mult.logits != 1.0)
        logits = hfx_op2(g, HFX_OP_MUL, logits, hfx_const_scalar(g, c->o->dtype, m->mult.logits));
    if (m->mult.logits_div != 1.0)
        logits = hfx_op2(g, HFX_OP_DIV, logits, hfx_const_scalar(g, c->o->dtype, m->mult.logits_div));
    if (m->final_softcap > 0) { /* cap·tanh(logits / cap) */
        hfx_value *cap = hfx_const_scalar(g, c->o->dtype, m->final_softcap);
        logits = hfx_op2(g, HFX_OP_MUL, hfx_op1(g, HFX_OP_TANH, hfx_op2(g, HFX_OP_DIV, logits, cap)), cap);
    }
    return logits;
}

/* A sequence classifier's logits [B, labels]: `score` on the hidden state of each row's
 * rightmost token that is not pad_token_id (transformers' argmax of index·(id != pad), which is
 * that index, or 0 when the row is all padding), or of the last token when the config has no pad
 * token. The row is picked before `score`, by a one-hot sum: equal to scoring every position and
 * picking after. */
static hfx_value *classify(layer_ctx *c, hfx_value *x, hfx_value *ids) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *pooled; /* [B,hidden] */
    if (m->pad_id < 0) {
        pooled = hfx_slice(g, x, 1, -1, INT64_MAX);
    } else {
        hfx_value *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
        hfx_value *index = hfx_range(g, zero, hfx_dim_of(g, ids, 1), one, c->seq);                 /* [S] */
        hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad_id))),
                                   HFX_DTYPE_I64);                                                 /* [B,S] */
        int64_t axis = -1;
        hfx_value *last = hfx_reduce(g, HFX_OP_REDUCE_MAX, hfx_op2(g, HFX_OP_MUL, index, real), 1, &axis); /* [B,1] */
        hfx_value *pick = hfx_cast(g, hfx_op2(g, HFX_OP_EQUAL, index, last), x->dtype);           /* [B,S] */
        int64_t seq_axis = 1;
        pooled = hfx_reduce(g, HFX_OP_REDUCE_SUM, hfx_op2(g, HFX_OP_MUL, x, hfx_unsqueeze(g, pick, -1)), 1, &seq_axis);
    }
    pooled = hfx_reshape(g, pooled, 2, (hfx_dim[]){c->batch, hfx_dim_const(m->hidden)});
    if (c->d->head == HFX_HEAD_TRANSFORM_CLASSIFIER) /* (per token: the same as transforming every token first) */
        return hfx_dec_proj(c, head_transform(c, pooled, c->n.class_dense, c->n.class_norm), m->hidden, m->labels,
                            m->head_dense_bias, c->n.class_out);
    hfx_value *score = hfx_weight(c->w, 2, (int64_t[]){m->labels, m->hidden}, "score.weight");
    return hfx_linear(g, pooled, score, NULL);
}

/* An encoder's sequence classification (HFX_HEAD_POOLED_CLASSIFIER) of its final states x [B,S,hidden]: logits
 * [B, labels] of classifier(GELU(dense(·))) over the first token or the masked mean, or the masked mean of every
 * token's (transformers' sum over the mask / its count). */
static hfx_value *pooled_classify(layer_ctx *c, hfx_value *x, hfx_value *mask) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden, L = m->labels;
    hfx_pooling mean = {.n = 1, .modes = {HFX_POOL_MEAN}};
    if (m->class_pooling == HFX_CLASS_BOS)
        x = hfx_gather(g, x, hfx_const_i64(g, 0), 1); /* [B,hidden]: the first token, padding or not */
    else if (m->class_pooling == HFX_CLASS_MEAN)
        x = hfx_sentence_embedding(g, NULL, &mean, x, mask, c->batch, H);
    x = hfx_linear(g, x, hfx_weight(c->w, 2, (int64_t[]){H, H}, "dense.weight"), hfx_weight(c->w, 1, &H, "dense.bias"));
    x = hfx_linear(g, hfx_activate(g, HFX_ACT_GELU, x), hfx_weight(c->w, 2, (int64_t[]){L, H}, "classifier.weight"),
                   hfx_weight(c->w, 1, &L, "classifier.bias"));
    return m->class_pooling == HFX_CLASS_LATE ? hfx_sentence_embedding(g, NULL, &mean, x, mask, c->batch, L) : x;
}

/* tanh(dense(the first token)) of x [B,S,hidden]: [B,hidden] (BERT's pooler) */
static hfx_value *first_token_pooled(layer_ctx *c, hfx_value *x, const char *dense) {
    x = hfx_gather(c->g, x, hfx_const_i64(c->g, 0), 1);
    return hfx_op1(c->g, HFX_OP_TANH, hfx_dec_proj(c, x, c->m->hidden, c->m->hidden, true, dense));
}

/* BERT's task heads over an encoder's final states x [B,S,hidden] (HFX_HEAD_POOLER_CLASSIFIER,
 * HFX_HEAD_TOKEN_CLASSIFIER): classifier(tanh(dense(the first token))) [B, labels], or classifier on every token
 * [B,S,labels]. */
static hfx_value *bert_classify(layer_ctx *c, hfx_value *x) {
    const hfx_decoder_cfg *m = c->m;
    int64_t H = m->hidden, L = m->labels;
    if (c->d->head != HFX_HEAD_POOLER_CLASSIFIER) return hfx_dec_proj(c, x, H, L, true, "classifier");
    x = first_token_pooled(c, x, c->n.class_dense ? c->n.class_dense : c->n.pooler);
    return hfx_dec_proj(c, x, H, L, true, c->n.class_out ? c->n.class_out : "classifier");
}

/* x [B,S,hidden] times √hidden (Gemma's embedding scale: a float32 tensor, then in the weights'
 * dtype). */
static hfx_value *embed_scaled(hfx_graph *g, const hfx_decoder_cfg *m, const hfx_build_opts *o, hfx_value *x) {
    return hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, o->dtype, (float)sqrt((double)m->hidden)));
}

/* The weights a decoder reads: its own, or its host's (a dry run of the whole model), through the
 * host's renames and with the other components' stacks set aside (and, a decoder alone, the layers
 * past num_hidden_layers transformers drops); *w points at them. */
static hfx_status open_weights(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                               const hfx_build_opts *o,
                               const hfx_decoder_host *host, hfx_graph *g, hfx_weights *own, hfx_weights **w,
                               hfx_error *err) {
    *w = host && host->weights ? host->weights : own;
    if (*w == own) {
        hfx_status st = hfx_weights_init(own, ck, g, o->dtype, host ? host->architecture : d->architecture, err);
        if (st) return st;
        for (const char *const *f = host ? host->foreign : NULL; f && *f; f++) hfx_weights_ignore_stack(own, *f);
        if (d->unused_stack) hfx_weights_ignore_stack(own, d->unused_stack);
        if (!host) hfx_weights_ignore_layers_from(own, resolve_names(d, m->layout).layer, m->layers);
    }
    if (host) (*w)->rename = host->rename, (*w)->alias = host->alias;
    (*w)->stored = d->names ? d->names->stored : NULL;
    return HFX_OK;
}

/* The end of a build's reads: its own weights checked for leftovers and freed, the host's given
 * back with their names as they were. */
static hfx_status close_weights(hfx_weights *own, hfx_weights *w, hfx_status st, hfx_error *err) {
    if (w != own) {
        w->rename = w->stored = NULL;
        w->alias = NULL;
        return st;
    }
    if (st == HFX_OK) st = hfx_weights_finish(own, err);
    hfx_weights_free(own);
    return st;
}

/* What the layers hold: recurrent layers (their state as cache), attention layers, attention
 * layers with rotary. */
typedef struct layer_kinds {
    bool states, attends, rotary;
} layer_kinds;

static layer_kinds scan_layers(const hfx_decoder_cfg *m) {
    layer_kinds k = {false, false, false};
    for (int64_t i = 0; i < m->layers; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        bool attention = hfx_mixer_attends(kind);
        k.states |= hfx_mixer_recurrent(kind), k.attends |= attention;
        k.rotary |= attention && !(m->no_rope && m->no_rope[i]);
    }
    return k;
}

/* The names the checkpoint has: the embedding's older name, or the family's without its optional
 * prefix (GPT-2 on the Hub has no "transformer."). */
static void checkpoint_names(layer_ctx *c) {
    const char *opt = c->d->names ? c->d->names->optional_prefix : NULL;
    size_t opt_len = opt ? strlen(opt) : 0;
    hfx_decoder_names *n = &c->n;
    if (n->embed_alt && !hfx_weight_exists(c->w, n->embed) && hfx_weight_exists(c->w, n->embed_alt)) n->embed = n->embed_alt;
    if (opt && !hfx_weight_exists(c->w, n->embed) && hfx_weight_exists(c->w, n->embed + opt_len)) {
        const char **fields[] = {&n->embed, &n->layer, &n->pos_embed, &n->final_norm};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            if (*fields[f] && strncmp(*fields[f], opt, opt_len) == 0) *fields[f] += opt_len;
    }
}

/* The graph's inputs and what the layers derive from them. */
typedef struct decoder_inputs {
    hfx_value *ids;       /* [B,S] token ids, or NULL ... */
    hfx_value *x;         /* ... the caller's [B,S,hidden] embeddings (a VLM's, images spliced in) */
    hfx_value *attn_mask; /* [B, mask_len] (not in the seed profile) */
    hfx_value *pos;       /* [B,S], or M-RoPE's [3,B,S]; NULL without positions */
    hfx_value *slots;     /* [S] the cache slots this call's tokens take */
    hfx_dim mask_len;     /* what attention sees: the prompt, the past plus the new tokens, or the static
                             cache's M slots */
    hfx_value *types;     /* token_type_ids [B,S] where the token-type table has several rows (NomicBERT) */
} decoder_inputs;

/* An encoder's or a sentence embedding's positions [B,S]: 0, 1, ... in every row, padding counted, as
 * sentence-transformers calls the model (no position_ids: transformers' default, the cache positions). */
static hfx_value *sentence_positions(hfx_graph *g, hfx_value *tokens, const hfx_build_opts *o) {
    hfx_value *range = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, tokens, 1), hfx_const_i64(g, 1), o->seq);
    hfx_value *shape = hfx_concat(g, 2, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, tokens, 0), 0),
                                                       hfx_unsqueeze(g, hfx_dim_of(g, tokens, 1), 0)}, 0);
    return hfx_expand(g, hfx_unsqueeze(g, range, 0), shape, 2, (hfx_dim[]){o->batch, o->seq});
}

/* ids [B,S] with the host's placeholder tokens read as its placeholder_as (Gemma 4's media tokens as its pad) */
static hfx_value *media_as_pad(hfx_graph *g, const hfx_decoder_host *host, hfx_value *ids) {
    for (int k = 0; host && k < host->n_placeholders; k++)
        ids = hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, host->placeholders[k])),
                        hfx_const_i64(g, host->placeholder_as), ids);
    return ids;
}

/* The per-layer inputs' tokens' half [B,S,layers,width]: from ids, the given embeddings' ids (input_ids, media tokens
 * as the host embeds them), or given (per_layer_inputs: the host's per_layer_in) */
static hfx_value *per_layer_tokens(layer_ctx *c, const hfx_decoder_host *host, bool embeds_in, hfx_value *ids) {
    const hfx_decoder_cfg *m = c->m;
    if (host && host->per_layer_in) {
        hfx_weight_ignore(c->w, HFX_DEC_PER_LAYER_TABLE); /* (the graph of that half reads it) */
        return hfx_graph_input(c->g, "per_layer_inputs", c->o->dtype, 4,
                               (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->layers), hfx_dim_const(m->ple.width)});
    }
    if (embeds_in)
        ids = media_as_pad(c->g, host, hfx_graph_input(c->g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){c->batch, c->seq}));
    return hfx_dec_per_layer_tokens(c, ids);
}

/* M-RoPE's positions [3, B, S]: temporal, height and width (the caller's, as transformers' get_rope_index makes them);
 * with text_row GenAI's Qwen3.5 form [4, B, S], a row of text positions first, which the rotary does not read */
static hfx_value *mrope_positions(hfx_graph *g, const hfx_build_opts *o, bool text_row) {
    hfx_value *p = hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 3,
                                   (hfx_dim[]){hfx_dim_const(text_row ? 4 : 3), o->batch, o->seq});
    return text_row ? hfx_slice(g, p, 0, 1, 4) : p;
}

/* The bias [B|1,1,S,T] a seed mask input gives attention: a boolean's 0 where true, the lowest float elsewhere;
 * eager attention's additive floats as they are. */
static hfx_value *seed_mask_bias(hfx_graph *g, hfx_value *mask) {
    if (mask->dtype == HFX_DTYPE_BOOL) return hfx_where(g, mask, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
    return mask->dtype == HFX_DTYPE_F32 ? mask : hfx_cast(g, mask, HFX_DTYPE_F32);
}

/* The sliding layers' window in a static cache (0: none), the same for all of them (transformers passes one mask);
 * fails g where they differ. */
static int64_t seed_window(layer_ctx *c, bool *full) {
    const hfx_decoder_cfg *m = c->m;
    int64_t window = 0;
    *full = false;
    for (int64_t i = 0; i < m->layers; i++) {
        if (!hfx_mixer_attends(m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION)) continue;
        if (!m->window[i]) *full = true;
        else if (window && m->window[i] != window)
            hfx_graph_fail(c->g, HFX_ERR_UNSUPPORTED, "io seed: a static cache's sliding layers have windows %lld and "
                           "%lld; transformers passes one sliding mask", (long long)window, (long long)m->window[i]);
        else window = m->window[i];
    }
    return window;
}

/* The seed's static-cache masks, generate()'s per layer type: a full-attention layer's [B,1,S,M] in a step (a
 * prefill's is causal over the cache's slots, made by hfx_dec_seed_cache — except under eager attention, which
 * never skips a mask); a sliding layer's [B,1,S,T] in every call, T the keys it attends to (hfx_dec_seed_cache).
 * Booleans, or eager attention's additive floats; named attention_mask.<type> where transformers' config has
 * layer_types, else attention_mask. */
static void seed_static_masks(layer_ctx *c) {
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    bool full, eager = c->d->scores.eager_only;
    int64_t window = seed_window(c, &full);
    hfx_dtype dt = eager ? o->dtype : HFX_DTYPE_BOOL;
    if (full && window && !c->m->layer_types) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "io seed: a static cache over full and sliding layers needs the "
                                               "masks transformers names by layer_types, which this config has not");
        return;
    }
    if (full && (o->reads_state || eager)) {
        hfx_dim dims[4] = {o->batch, hfx_dim_const(1), o->seq, o->max_cache};
        const char *name = c->m->layer_types ? "attention_mask.full_attention" : "attention_mask";
        c->seed_mask = seed_mask_bias(g, hfx_graph_input(g, name, dt, 4, dims));
    }
    if (!window) return;
    /* W: min(window, M) slots (a step's cache: as many as it holds); T: W in a one-token step, else up to S more */
    bool fixed = hfx_dim_is_const(o->max_cache), one = hfx_dim_is_const(o->seq) && o->seq.c == 1;
    int64_t slots = fixed && o->max_cache.c < window ? o->max_cache.c : window;
    int64_t most = hfx_dim_is_const(o->seq) ? o->seq.c : g->symbols[o->seq.sym[0]].max;
    if (fixed || !o->reads_state) c->seed_window_slots = hfx_dim_const(slots);
    else c->seed_window_slots = hfx_dim_sym(hfx_graph_symbol(g, "sliding_window_slots", 1, window));
    if (one && o->reads_state) c->seed_window_keys = c->seed_window_slots;
    else if (hfx_dim_is_const(o->seq) && !o->reads_state)
        c->seed_window_keys = hfx_dim_const(o->seq.c > slots ? o->seq.c : slots);
    else c->seed_window_keys = hfx_dim_sym(hfx_graph_symbol(g, "sliding_window_keys", 1, window + most));
    hfx_dim sliding[4] = {o->batch, hfx_dim_const(1), o->seq, c->seed_window_keys};
    const char *name = c->m->layer_types ? "attention_mask.sliding_attention" : "attention_mask";
    c->seed_window_mask = seed_mask_bias(g, hfx_graph_input(g, name, dt, 4, sliding));
}

static decoder_inputs graph_inputs(layer_ctx *c, const hfx_decoder_host *host, bool embeds_in, bool attends) {
    const hfx_build_opts *o = c->o;
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    bool seed = hfx_dec_seed_profile(c);
    decoder_inputs in = {.mask_len = o->seq};
    if (o->cache == HFX_CACHE_STATIC) in.mask_len = o->max_cache;
    else if (o->cache == HFX_CACHE_DYNAMIC && o->has_past) {
        bool ok;
        in.mask_len = hfx_dim_add(o->past, o->seq, &ok);
    }
    hfx_dim bs[2] = {o->batch, o->seq};
    hfx_dim embeds_dims[3] = {o->batch, o->seq, hfx_dim_const(m->hidden)};
    bool embeds_last = embeds_in && seed; /* the seed's call: the forward takes inputs_embeds after the positions */
    if (embeds_in && !embeds_last) in.x = hfx_graph_input(g, "inputs_embeds", o->dtype, 3, embeds_dims);
    else if (!embeds_in) in.ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    if (seed) { /* the seed's inputs: a static cache's 4-D masks */
        if (o->cache == HFX_CACHE_STATIC && attends) seed_static_masks(c);
    } else {
        in.attn_mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, in.mask_len});
    }
    if (!embeds_in && m->token_types > 1) in.types = hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, bs);
    bool mrope = m->rope.mrope_section[0] || m->rope.mrope_section[1] || m->rope.mrope_section[2];
    /* an encoder's (attending both ways: no cache, no generation), and a sentence embedding's, are the forward's
       default, as its callers call it (no position_ids) */
    bool encoder = c->d->scores.mask == HFX_MASK_BOTH_WAYS || m->both_ways;
    in.pos = hfx_decoder_mixers_only(c->d) ? NULL /* no positions: Mamba2's forward takes none */
             : o->pooling.n || o->pooling.score || encoder ? sentence_positions(g, in.ids ? in.ids : in.x, o)
             : mrope ? mrope_positions(g, o, host && host->text_position_row)
                     : hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 2, bs);
    if (embeds_last) in.x = hfx_graph_input(g, "inputs_embeds", o->dtype, 3, embeds_dims);
    if (!seed && o->cache == HFX_CACHE_STATIC) {
        c->cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &o->seq);
        in.slots = c->cache_position;
    } else if (!seed) {
        in.slots = hfx_mask_slots_after_past(g, in.attn_mask, o->seq, hfx_dim_of(g, in.ids ? in.ids : in.x, 1));
    }
    return in;
}

/* The token embeddings into in->x [B,S,hidden], scaled as the lineage does; returns the table
 * (read here also by a tied head; the embed_tokens component reads it otherwise), or NULL. */
static hfx_value *embed_tokens(layer_ctx *c, bool embeds_in, decoder_inputs *in) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *embed = NULL;
    if (!embeds_in || m->tied) embed = hfx_weight(c->w, 2, (int64_t[]){m->vocab, m->embed_dim}, "%s", c->n.embed);
    else hfx_weight_ignore(c->w, c->n.embed);
    if (!embeds_in) in->x = hfx_gather(g, embed, in->ids, 0);
    if (!embeds_in && m->embed_dim != m->hidden) /* OPT: the embeddings projected to the layers' width */
        in->x = hfx_dec_proj(c, in->x, m->embed_dim, m->hidden, false, c->n.project_in);
    /* Gemma's scale: here, unless the caller's embeddings already carry it (Gemma 3's scaled table) */
    hfx_embed_scale s = c->d->embed_scale;
    if (s == HFX_EMBED_SQRT_HIDDEN || (s == HFX_EMBED_SQRT_HIDDEN_IN_TABLE && !embeds_in))
        in->x = embed_scaled(g, m, c->o, in->x);
    if (m->mult.embed != 1.0) in->x = hfx_op2(g, HFX_OP_MUL, in->x, hfx_const_scalar(g, c->o->dtype, m->mult.embed));
    if (s == HFX_EMBED_FINAL_NORM) in->x = hfx_dec_norm(c, in->x, m->hidden, c->n.final_norm);
    if (!embeds_in && m->token_types) { /* each token's type row (one row: every token's, transformers' default ids 0) */
        hfx_value *types = hfx_weight(c->w, 2, (int64_t[]){m->token_types, m->hidden}, "%s", c->n.token_types);
        in->x = hfx_op2(g, HFX_OP_ADD, in->x, hfx_gather(g, types, in->types ? in->types : hfx_const_i64(g, 0), 0));
    }
    if (s == HFX_EMBED_OWN_NORM) in->x = hfx_dec_norm(c, in->x, m->hidden, c->n.embed_norm);
    return embed;
}

/* Rotary tables [.., S, rotary dims]: the full-attention layers', and the sliding layers' own. */
typedef struct rotary_tables {
    hfx_value *cos, *sin, *local_cos, *local_sin;
    hfx_value **layer_cos, **layer_sin; /* (layers) where each layer has its own base (m->layer_rope); else NULL */
} rotary_tables;

/* The queries' scale by position, 1 + β·ln(1 + ⌊p / n⌋) [B|1,1,S,1] f32: p the position (Ministral 3) or the
 * cache slot + 1 (Llama 4); p ≥ 0, so ⌊⌋ is integer division. */
static hfx_value *query_temperature(layer_ctx *c, const decoder_inputs *in) {
    hfx_graph *g = c->g;
    bool slots = c->d->scores.temperature == HFX_QTEMP_NOPE_FLOOR;
    if (slots && !in->slots) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" does not cover attn_temperature_tuning yet (it needs the "
                                               "cache positions); export with io \"optimum\"", c->d->architecture);
        return NULL;
    }
    hfx_value *p = slots ? hfx_unsqueeze(g, hfx_op2(g, HFX_OP_ADD, in->slots, hfx_const_i64(g, 1)), 0) : in->pos; /* [B|1,S] */
    hfx_value *steps = hfx_op2(g, HFX_OP_DIV, p, hfx_const_i64(g, c->m->q_temp_step));
    hfx_value *one = hfx_const_scalar(g, HFX_DTYPE_F32, 1.0);
    hfx_value *t = hfx_op1(g, HFX_OP_LOG, hfx_op2(g, HFX_OP_ADD, hfx_cast(g, steps, HFX_DTYPE_F32), one));
    t = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, t, hfx_const_scalar(g, HFX_DTYPE_F32, c->m->q_temp_beta)), one);
    return hfx_unsqueeze(g, hfx_unsqueeze(g, t, 1), 3);
}

/* Each rotary layer's tables where the layers have their own bases: one pair per distinct base. */
static void layer_tables(layer_ctx *c, const decoder_inputs *in, rotary_tables *r) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    r->layer_cos = hfx_arena_alloc(g->arena, 2 * (size_t)m->layers * sizeof *r->layer_cos);
    if (!r->layer_cos) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return;
    }
    r->layer_sin = r->layer_cos + m->layers;
    for (int64_t i = 0; i < m->layers; i++) {
        r->layer_cos[i] = r->layer_sin[i] = NULL;
        if (m->no_rope[i]) continue;
        for (int64_t j = 0; j < i && !r->layer_cos[i]; j++)
            if (r->layer_cos[j] && hfx_rope_same(&m->layer_rope[j], &m->layer_rope[i]))
                r->layer_cos[i] = r->layer_cos[j], r->layer_sin[i] = r->layer_sin[j];
        if (!r->layer_cos[i]) hfx_rope_cos_sin(g, &m->layer_rope[i], in->pos, c->o->dtype, &r->layer_cos[i], &r->layer_sin[i]);
    }
}

/* Positions into x: learned embeddings added, or the rotary tables the layers read. */
static rotary_tables positions(layer_ctx *c, const decoder_inputs *in, bool rotary, hfx_value **x) {
    const hfx_decoder_desc *d = c->d;
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    rotary_tables r = {NULL, NULL, NULL, NULL, NULL, NULL};
    if (d->positions == HFX_POSITIONS_LEARNED || d->positions == HFX_POSITIONS_LEARNED_OFFSET2) {
        int64_t offset = d->positions == HFX_POSITIONS_LEARNED_OFFSET2 ? 2 : 0;
        hfx_value *wpe = hfx_weight(c->w, 2, (int64_t[]){m->max_position + offset, m->hidden}, "%s", c->n.pos_embed);
        hfx_value *rows = offset ? hfx_op2(g, HFX_OP_ADD, in->pos, hfx_const_i64(g, offset)) : in->pos;
        *x = hfx_op2(g, HFX_OP_ADD, *x, hfx_gather(g, wpe, rows, 0));
    } else if (rotary) {
        hfx_dtype dt = d->rope.pairs == HFX_ROTARY_PAIRS_F32 ? HFX_DTYPE_F32 : c->o->dtype;
        hfx_rope_cos_sin(g, &m->rope, in->pos, dt, &r.cos, &r.sin);
        if (d->rope.pairs == HFX_ROTARY_HALVES_BACKWARD) r.sin = hfx_op1(g, HFX_OP_NEG, r.sin); /* −θ */
    }
    if (m->q_temp_beta != 0) c->q_temperature = query_temperature(c, in);
    if (d->rope.local) hfx_rope_cos_sin(g, &m->local_rope, in->pos, c->o->dtype, &r.local_cos, &r.local_sin);
    if (m->layer_rope && rotary) layer_tables(c, in, &r);
    return r;
}

/* ALiBi's slopes for `heads` heads. transformers' _get_alibi_slopes (Bloom, Falcon) in f32: powers 1..p of
 * 2^(-2^-(log2 p - 3)), p the largest power of two ≤ heads, then the odd powers of 2^(-2^-(log2 2p - 3)) for the
 * rest. MPT's: 1 / 2^(i · max_bias / p) for i = 1..p, p the smallest power of two ≥ heads, the even i first (slopes
 * 2, 4, ..., then 1, 3, ...) when p > heads. Falcon rounds them to bf16. */
static void alibi_slopes(const hfx_decoder_alibi *a, int64_t heads, float *out) {
    int64_t p = 1;
    if (a->max_bias > 0) {
        while (p < heads) p *= 2;
        float step = (float)(a->max_bias / (double)p);
        for (int64_t h = 0; h < heads; h++) {
            int64_t i = p == heads ? h : h < p / 2 ? 2 * h + 1 : 2 * (h - p / 2); /* 0-based: i + 1 is the power */
            out[h] = 1.0f / powf(2.0f, (float)(i + 1) * step);
        }
        return;
    }
    while (p * 2 <= heads) p *= 2;
    float base = (float)pow(2.0, -pow(2.0, -(log2((double)p) - 3)));
    for (int64_t h = 0; h < p; h++) out[h] = powf(base, (float)(h + 1));
    float extra = (float)pow(2.0, -pow(2.0, -(log2((double)(2 * p)) - 3)));
    for (int64_t h = p; h < heads; h++) out[h] = powf(extra, (float)(2 * (h - p) + 1));
    if (a->bf16)
        for (int64_t h = 0; h < heads; h++) out[h] = hfx_bf16_to_f32(hfx_f32_to_bf16(out[h]));
}

/* Each key's index as ALiBi counts it, f32: [B,1,1,T] its index among its row's real tokens ((cumsum(mask) − 1)·mask),
 * or (MPT, max_bias set) [1,1,1,T] its slot less the last one, padding counted. */
static hfx_value *alibi_index(hfx_graph *g, const hfx_decoder_alibi *a, const decoder_inputs *in) {
    hfx_value *index;
    if (a->max_bias > 0) { /* MPT */
        hfx_value *one = hfx_const_i64(g, 1);
        hfx_value *start = hfx_op2(g, HFX_OP_SUB, one, hfx_dim_of(g, in->attn_mask, 1));
        index = hfx_unsqueeze(g, hfx_range(g, start, one, one, in->mask_len), 0);                      /* [1,T] */
    } else {
        index = hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_SUB, hfx_cumsum(g, in->attn_mask, 1), hfx_const_i64(g, 1)),
                        in->attn_mask);                                                                /* [B,T] */
    }
    return hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, index, HFX_DTYPE_F32), 1), 1);
}

/* The mask's bias [B,1,S,T] plus ALiBi's [B|1,H,1,T]: slope_h · each key's index, as transformers builds it: Bloom
 * rounds it to the weights' dtype, Falcon to bf16 and divides it by √head_dim, MPT adds it in f32 → [B,H,S,T]. */
static hfx_value *with_alibi(layer_ctx *c, const decoder_inputs *in, hfx_value *bias) {
    hfx_graph *g = c->g;
    const hfx_decoder_alibi *a = &c->m->alibi;
    int64_t H = c->m->heads, shape[4] = {1, H, 1, 1};
    float *slopes = hfx_arena_alloc(g->arena, (size_t)H * sizeof *slopes);
    if (!slopes) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return bias;
    }
    alibi_slopes(a, H, slopes);
    hfx_value *alibi = hfx_op2(g, HFX_OP_MUL, alibi_index(g, a, in), hfx_const_bytes(g, HFX_DTYPE_F32, 4, shape, slopes));
    if (a->bf16) {
        alibi = hfx_cast(g, hfx_cast(g, alibi, HFX_DTYPE_BF16), c->o->dtype);
        alibi = hfx_op2(g, HFX_OP_DIV, alibi, hfx_const_scalar(g, alibi->dtype, sqrt((double)c->m->head_dim)));
    } else if (!(a->max_bias > 0)) {
        alibi = hfx_cast(g, alibi, c->o->dtype);
    }
    return hfx_op2(g, HFX_OP_ADD, bias, hfx_cast(g, alibi, bias->dtype));
}

/* DeepStack's features [n, B, S, hidden] as transformers' language model takes them (GenAI's Qwen3-VL path feeds them
 * alike): visual_pos_masks (its image tokens) and deepstack_visual_embeds [n, V, hidden] (their features, in that
 * order; with `as_list`, n inputs deepstack_visual_embeds.{i} [V, hidden], the list the seed's call passes); 0 at the
 * other tokens. Token (b, s) of x [B, S, hidden] is the mask's flat element b·S + s whatever shape the mask comes in
 * ([B, S]; [1, B·S] from GenAI's paged path, whose states are [B·S, 1, hidden]; [B, 1] of zeros at a step without
 * images: clamped into it). */
static hfx_value *deepstack_at_positions(hfx_graph *g, const hfx_build_opts *o, int64_t n, int64_t hidden, bool as_list,
                                         hfx_value *x) {
    hfx_value *mask = hfx_graph_input(g, "visual_pos_masks", HFX_DTYPE_BOOL, 2, (hfx_dim[]){o->batch, o->seq});
    hfx_dim v = hfx_dim_sym(hfx_graph_symbol(g, "num_visual_tokens", 1, INT32_MAX));
    hfx_dim len = hfx_dim_sym(hfx_graph_symbol(g, "visual_pos_masks_len", 1, INT32_MAX));
    hfx_value *embeds = NULL;
    if (as_list) {
        hfx_value *layers[64];
        for (int64_t i = 0; i < n && i < 64; i++) {
            char name[48];
            snprintf(name, sizeof name, "deepstack_visual_embeds.%lld", (long long)i);
            hfx_value *layer = hfx_graph_input(g, name, o->dtype, 2, (hfx_dim[]){v, hfx_dim_const(hidden)});
            layers[i] = hfx_unsqueeze(g, layer, 0);
        }
        if (n > 64) hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "DeepStack over %lld layers (at most 64)", (long long)n);
        else embeds = hfx_concat(g, (int)n, layers, 0);
    } else {
        embeds = hfx_graph_input(g, "deepstack_visual_embeds", o->dtype, 3,
                                 (hfx_dim[]){hfx_dim_const(n), v, hfx_dim_const(hidden)});
    }
    if (!embeds) return NULL;
    hfx_value *zero = hfx_const_i64(g, 0), *one = hfx_const_i64(g, 1);
    hfx_value *flat = hfx_reshape(g, hfx_cast(g, mask, HFX_DTYPE_I64), 1, &len);
    hfx_value *rows = hfx_range(g, zero, hfx_dim_of(g, x, 0), one, o->batch);
    hfx_value *cols = hfx_range(g, zero, hfx_dim_of(g, x, 1), one, o->seq);
    hfx_value *at = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, rows, 1), hfx_dim_of(g, x, 1)),
                            hfx_unsqueeze(g, cols, 0)); /* [B, S] */
    at = hfx_op2(g, HFX_OP_MIN, at, hfx_op2(g, HFX_OP_SUB, hfx_dim_of(g, flat, 0), one));
    hfx_value *image = hfx_op2(g, HFX_OP_EQUAL, hfx_gather(g, flat, at, 0), one);
    hfx_value *row = hfx_op2(g, HFX_OP_MAX, hfx_op2(g, HFX_OP_SUB, hfx_gather(g, hfx_cumsum(g, flat, 0), at, 0), one),
                             zero); /* the image tokens before it: its row of the features */
    return hfx_where(g, hfx_unsqueeze(g, hfx_unsqueeze(g, image, 0), 3), hfx_gather(g, embeds, row, 1),
                     hfx_const_scalar(g, o->dtype, 0.0));
}

/* Every layer over x [B,S,hidden], each attention layer with its mask's bias [B,1,S,T] (one per
 * window size, built on first use; the seed profile's are made by its cache, decoder_cache.c). */
static hfx_value *decoder_layers(layer_ctx *c, const decoder_inputs *in, const rotary_tables *r, layer_kinds k,
                                 const hfx_decoder_host *host, hfx_value *x) {
    hfx_mask_blocks blocks = host ? host->blocks : HFX_BLOCKS_NONE;
    int64_t deepstack = host ? host->deepstack : 0;
    const hfx_decoder_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    bool seed = hfx_dec_seed_profile(c);
    hfx_mask_builder mb;
    if (!seed && k.attends) {
        hfx_mask_init(g, &mb, in->attn_mask, in->slots);
        mb.unwritten_slots = o->cache == HFX_CACHE_STATIC;
        if (c->d->scores.mask == HFX_MASK_BOTH_WAYS || m->both_ways) hfx_mask_both_ways(g, &mb);
    }
    if (k.states && !seed) /* [B,S,1]: which of this call's tokens are real (the mask at their slots) */
        c->new_mask = hfx_unsqueeze(g, hfx_cast(g, hfx_gather(g, in->attn_mask, in->slots, 1), o->dtype), -1);
    c->positions = in->pos, c->embeddings = x, c->ids = in->ids;
    if (!seed && blocks)
        hfx_mask_add_blocks(g, &mb, hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, in->mask_len}),
                            blocks);
    hfx_value *full_bias = NULL, *window_bias = NULL, *chunk_bias = NULL;
    bool alibi_done = false;
    if (seed && m->alibi.on)
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" does not cover ALiBi yet (it needs the 2-D attention "
                                               "mask); export with io \"optimum\"", c->d->architecture);
    int64_t bias_window = -1;
    if (m->hyper.streams) x = hfx_dec_hyper_expand(c, x); /* [B,S,N,hidden] */
    if (m->altup.streams) x = hfx_dec_altup_expand(c, x);
    bool where_then_add = c->d->scores.mask == HFX_MASK_WHERE_THEN_ADD;
    hfx_value *stacked = NULL; /* [n, B, S, hidden]: DeepStack's features, added after the first n layers */
    if (deepstack > 0)
        stacked = host->deepstack_at_positions
                      ? deepstack_at_positions(g, o, deepstack, m->hidden, seed, x)
                      : hfx_graph_input(g, "deepstack_embeds", o->dtype, 4,
                                        (hfx_dim[]){hfx_dim_const(deepstack), o->batch, o->seq, hfx_dim_const(m->hidden)});
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        hfx_value *bias = NULL;
        bool sliding = m->window[i] != 0;
        if (m->mixer && !hfx_mixer_attends(m->mixer[i])) {
            /* no attention bias: the layer's own state */
        } else if (m->chunked && m->chunked[i]) {
            if (seed) hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" does not cover chunked attention layers yet; "
                                                             "export with io \"optimum\"", c->d->architecture);
            else if (!chunk_bias) chunk_bias = hfx_mask_bias_chunked(g, &mb, m->chunk);
            bias = chunk_bias;
        } else if (!seed && !sliding) {
            if (!full_bias) full_bias = where_then_add ? hfx_mask_bias_where_then_add(g, &mb, 0) : hfx_mask_bias(g, &mb, 0);
            if (m->alibi.on && !g->failed && !alibi_done) /* (full layers: no ALiBi model has windows) */
                full_bias = with_alibi(c, in, full_bias), alibi_done = true;
            bias = full_bias;
        } else if (!seed) {
            if (bias_window != m->window[i]) { /* one window size per model in practice */
                window_bias = where_then_add ? hfx_mask_bias_where_then_add(g, &mb, m->window[i])
                                             : hfx_mask_bias(g, &mb, m->window[i]);
                bias_window = m->window[i];
            }
            bias = window_bias;
        }
        bool local = c->d->rope.local && sliding;
        hfx_value *cos = r->layer_cos ? r->layer_cos[i] : local ? r->local_cos : r->cos;
        hfx_value *sin = r->layer_sin ? r->layer_sin[i] : local ? r->local_sin : r->sin;
        x = decoder_layer(c, i, x, cos, sin, bias);
        if (i < deepstack) /* (an exact add: 0 where the token is not an image's) */
            x = hfx_op2(g, HFX_OP_ADD, x, hfx_cast(g, hfx_reshape(g, hfx_slice(g, stacked, 0, i, i + 1), 3,
                                                                  (hfx_dim[]){o->batch, o->seq, hfx_dim_const(m->hidden)}),
                                                   x->dtype));
    }
    return m->hyper.streams ? hfx_dec_hyper_head(c, x) : m->altup.streams ? hfx_dec_altup_head(c, x) : x;
}

/* A sentence-transformers CrossEncoder's scores over the causal LM (LogitScore): the logits at the last position (the
 * folder pads on the left) of the true token, less those of the false one where it has one: [B,1]. */
static hfx_value *logit_score(layer_ctx *c, hfx_value *x, hfx_value *embed) {
    const hfx_pooling *p = &c->o->pooling;
    hfx_graph *g = c->g;
    if (p->true_token >= c->m->head_rows || p->false_token >= c->m->head_rows) {
        hfx_graph_fail(g, HFX_ERR_INVALID, "the LogitScore module's token ids (%lld, %lld) are past the head's %lld "
                                           "logits", p->true_token, p->false_token, (long long)c->m->head_rows);
        return x;
    }
    hfx_value *last = hfx_op2(g, HFX_OP_SUB, hfx_dim_of(g, x, 1), hfx_const_i64(g, 1));
    x = hfx_unsqueeze(g, hfx_gather(g, x, last, 1), 1); /* [B,1,hidden] */
    hfx_value *logits = hfx_reshape(g, lm_logits(c, x, embed), 2, (hfx_dim[]){c->o->batch, hfx_dim_const(c->m->head_rows)});
    hfx_value *score = hfx_gather(g, logits, hfx_const_bytes(g, HFX_DTYPE_I64, 1, (int64_t[]){1},
                                                             (int64_t[]){p->true_token}), 1);
    if (p->false_token < 0) return score;
    hfx_value *against = hfx_gather(g, logits, hfx_const_bytes(g, HFX_DTYPE_I64, 1, (int64_t[]){1},
                                                               (int64_t[]){p->false_token}), 1);
    return hfx_op2(g, HFX_OP_SUB, score, against);
}

/* The graph, top to bottom: inputs → embeddings (+ positions) → layers → final norm → head, then
 * the caches and states each layer left. */
/* The outputs of the final states x [B,S,hidden]: a CrossEncoder's scores, a sentence embedding (and the token embeddings), the base model's
 * states (and its pooler's), or the head's logits. */
static void graph_outputs(layer_ctx *c, const decoder_inputs *in, bool base, hfx_value *x, hfx_value *embed) {
    const hfx_decoder_desc *d = c->d;
    const hfx_decoder_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    if (o->pooling.score && !o->states_only) { /* a CrossEncoder over the causal LM */
        if (base || d->head != HFX_HEAD_LM)
            hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: modules.json's LogitScore reads a causal LM's logits, which "
                                                   "this model has not", d->architecture);
        else
            hfx_graph_output(g, logit_score(c, x, embed), "scores");
    } else if (o->pooling.n && !o->states_only) { /* a sentence-transformers folder: the base model's states, pooled
                                                (optimum's names) */
        if (!m->tied && !base) hfx_weight_ignore(c->w, c->n.lm_head);
        for (int k = 0; c->n.pooler && k < 2; k++) { /* a pooler is unused */
            char pooler[160];
            snprintf(pooler, sizeof pooler, "%s.%s", c->n.pooler, k ? "bias" : "weight");
            if (hfx_weight_exists(c->w, pooler)) hfx_weight_ignore(c->w, pooler);
        }
        hfx_graph_output(g, x, "token_embeddings");
        hfx_graph_output(g, hfx_sentence_embedding(g, c->w, &o->pooling, x, in->attn_mask, o->batch, m->hidden),
                         "sentence_embedding");
    } else if (base || o->states_only) {
        if (!m->tied && !base) hfx_weight_ignore(c->w, c->n.lm_head); /* (a causal LM's folder: its head unused) */
        hfx_graph_output(g, x, "last_hidden_state");
        char pooler[160];
        snprintf(pooler, sizeof pooler, "%s.weight", c->n.pooler ? c->n.pooler : "");
        bool pools = c->n.pooler && hfx_weight_exists(c->w, pooler); /* saved with its pooler (add_pooling_layer) */
        if (pools && !o->states_only) hfx_graph_output(g, first_token_pooled(c, x, c->n.pooler), "pooler_output");
        for (int k = 0; pools && o->states_only && k < 2; k++) { /* (the pipeline pools: unused) */
            snprintf(pooler, sizeof pooler, "%s.%s", c->n.pooler, k ? "bias" : "weight");
            if (hfx_weight_exists(c->w, pooler)) hfx_weight_ignore(c->w, pooler);
        }
    } else if (d->head == HFX_HEAD_QA) { /* qa_outputs [B,S,2]: start, end */
        hfx_value *se = hfx_dec_proj(c, x, m->hidden, 2, true, "qa_outputs");
        hfx_dim bs[2] = {o->batch, o->seq};
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 0, 1), 2, bs), "start_logits");
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 1, 2), 2, bs), "end_logits");
    } else {
        hfx_graph_output(g, d->head == HFX_HEAD_CLASSIFIER || d->head == HFX_HEAD_TRANSFORM_CLASSIFIER
                                ? classify(c, x, in->ids)
                            : d->head == HFX_HEAD_POOLED_CLASSIFIER ? pooled_classify(c, x, in->attn_mask)
                            : d->head == HFX_HEAD_POOLER_CLASSIFIER || d->head == HFX_HEAD_TOKEN_CLASSIFIER
                                ? bert_classify(c, x)
                                : lm_logits(c, x, embed),
                         "logits");
    }
}

hfx_status hfx_decoder_build(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                             const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g, hfx_error *err) {
    if (m->both_ways && o->cache != HFX_CACHE_NONE) /* a later token changes the earlier ones' states */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s is set: a model attending both ways has no generation "
                        "components", d->architecture, d->scores.both_ways_key);
    hfx_weights own, *w;
    hfx_status st = open_weights(d, m, ck, o, host, g, &own, &w, err);
    if (st) return st;
    bool embeds_in = host && host->embeds_in;
    hfx_value **cache_out = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_out);
    hfx_value **kv_seen = calloc((size_t)m->layers * 2, sizeof *kv_seen);
    int *cache_state = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_state);
    bool nomem = !cache_out || !cache_state || !kv_seen;
    if (nomem) {
        free(cache_out);
        free(kv_seen);
        free(cache_state);
        close_weights(&own, w, HFX_OK, err);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    layer_ctx c = {.g = g, .w = w, .d = d, .m = m, .o = o, .batch = o->batch, .seq = o->seq, .n = resolve_names(d, m->layout),
                   .cache_out = cache_out, .cache_state = cache_state, .kv_seen = kv_seen, .adapter = -1};
    layer_kinds kinds = scan_layers(m);
    checkpoint_names(&c);
    decoder_inputs in = graph_inputs(&c, host, embeds_in, kinds.attends);
    hfx_value *embed = embed_tokens(&c, embeds_in, &in);
    if (m->ple.width) /* with given embeddings, their tokens' ids beside them (a VLM's: its media tokens as it embeds
                         them) for the per-layer table, or that table's rows (GenAI's form) */
        c.per_layer_inputs = hfx_dec_per_layer_inputs(&c, per_layer_tokens(&c, host, embeds_in, in.ids), in.x);
    rotary_tables rot = positions(&c, &in, kinds.rotary, &in.x);
    hfx_value *x = decoder_layers(&c, &in, &rot, kinds, host, in.x);
    if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX); /* [B,1,hidden]: transformers' logits_to_keep=1 */
    x = hfx_cast(g, x, o->dtype); /* an f32 residual stream: cast back */
    if (!m->no_final_norm) x = hfx_dec_norm_eps(&c, x, m->hidden, c.n.final_norm, m->final_eps);
    graph_outputs(&c, &in, host && host->base, x, embed);
    hfx_dec_write_caches(&c);
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);

    st = hfx_graph_status(g, err);
    st = close_weights(&own, w, st, err);
    free(cache_out);
    free(kv_seen);
    free(cache_state);
    return st;
}

hfx_status hfx_decoder_build_embed(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                   const hfx_build_opts *o, const hfx_decoder_host *host, bool per_layer,
                                   hfx_graph *g, hfx_error *err) {
    hfx_weights own, *w;
    hfx_status st = open_weights(d, m, ck, o, host, g, &own, &w, err);
    if (st) return st;
    hfx_decoder_names n = resolve_names(d, m->layout);
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
    ids = media_as_pad(g, host, ids);
    if (per_layer) {
        layer_ctx c = {.g = g, .w = w, .d = d, .m = m, .o = o, .batch = o->batch, .seq = o->seq, .n = n, .adapter = -1};
        hfx_graph_output(g, hfx_dec_per_layer_tokens(&c, ids), "per_layer_inputs");
    } else {
        hfx_value *embed = hfx_weight(w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", n.embed);
        hfx_value *x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden], and the table's own scale */
        hfx_graph_output(g, d->embed_scale == HFX_EMBED_SQRT_HIDDEN_IN_TABLE ? embed_scaled(g, m, o, x) : x,
                         "inputs_embeds");
    }
    if (w == &own) hfx_weights_ignore_rest(w); /* the language model's component checks every other weight */
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);
    return close_weights(&own, w, hfx_graph_status(g, err), err);
}

hfx_status hfx_decoder_build_lm_head(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                     const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g,
                                     hfx_error *err) {
    if (m->embed_dim != m->hidden || d->head != HFX_HEAD_LM) /* (the module would not be the head's whole input) */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "%s: a separate lm_head graph is written for a head that reads the final states as they are",
                        host ? host->architecture : d->architecture);
    hfx_weights own, *w;
    hfx_status st = open_weights(d, m, ck, o, host, g, &own, &w, err);
    if (st) return st;
    layer_ctx c = {.g = g, .w = w, .d = d, .m = m, .o = o, .batch = o->batch, .seq = o->seq,
                   .n = resolve_names(d, m->layout), .adapter = -1};
    checkpoint_names(&c);
    hfx_value *x = hfx_graph_input(g, "input", o->dtype, 3, (hfx_dim[]){o->batch, o->seq, hfx_dim_const(m->hidden)});
    hfx_value *embed = m->tied ? hfx_weight(w, 2, (int64_t[]){m->vocab, m->embed_dim}, "%s", c.n.embed) : NULL;
    hfx_graph_output(g, lm_head_linear(&c, x, embed), "output");
    if (w == &own) hfx_weights_ignore_rest(w); /* (the language model's component checks every other weight) */
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);
    return close_weights(&own, w, hfx_graph_status(g, err), err);
}

static hfx_status decoder_build_forward(const void *desc_, const void *cfg_, const hfx_checkpoint *ck,
                                        const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    return hfx_decoder_build(desc_, cfg_, ck, o, NULL, g, err);
}

static int decoder_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const hfx_decoder_cfg *m = cfg_;
    for (int64_t i = 0; i < m->layers && i < max; i++) layers[i] = hfx_decoder_layer_cache(m, i);
    return (int)m->layers;
}

/* Phi-3's generate re-encodes everything at original_max_position_embeddings + 1 tokens, so that
 * keys cached with the short longrope factors are recomputed with the long ones. */
static int64_t decoder_recompute_at(const void *cfg_) {
    const hfx_decoder_cfg *m = cfg_;
    return m->rope.type == HFX_ROPE_LONGROPE || m->rope.type == HFX_ROPE_LONGROPE_MSCALE ? m->rope.switch_len + 1 : 0;
}

static hfx_torch_signature decoder_torch_signature(const void *desc) {
    static const char *const llama[] = {"input_ids", "attention_mask", "position_ids", "cache", NULL};
    const hfx_decoder_desc *d = desc;
    return (hfx_torch_signature){.args = d->forward_args ? d->forward_args : llama,
                                 .output_class = d->output_class ? d->output_class : "CausalLMOutputWithPast",
                                 .step_nones = d->step_nones};
}

/* A causal LM exports its forward pass, or a prompt graph and a one-token step that reads the
 * cache the previous call wrote, or one graph for both (docs/GENERATION.md). */
/* The prompt piece (hfx_arch_prompt_piece): the scan's chunk of the model's recurrent layers —
 * Mamba2's chunk_size, 64 for a gated delta-net (transformers' chunk) and RWKV (its exponents are [B, S, S, A]), 16
 * for Mamba (its decays are [B, inner, state, S, S]); 0 without them (LFM2's convolutions cost what attention does). */
static int64_t decoder_prompt_piece(const void *cfg_) {
    const hfx_decoder_cfg *m = cfg_;
    int64_t piece = 0;
    for (int64_t i = 0; m->mixer && i < m->layers; i++) {
        int64_t p = hfx_mixer_mamba2(m->mixer[i])                                   ? m->ssm.chunk
                    : m->mixer[i] == HFX_MIXER_DELTA                                  ? 64
                    : m->mixer[i] == HFX_MIXER_LIGHTNING                              ? m->lightning.block
                    : m->mixer[i] == HFX_MIXER_RWKV                                   ? 64
                    : m->mixer[i] == HFX_MIXER_MAMBA1 || m->mixer[i] == HFX_MIXER_RG_LRU ? 16
                                                                                      : 0;
        if (p && (!piece || p < piece)) piece = p;
    }
    return piece;
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
static const hfx_component generation[] = {
    {.name = "prefill", .role = "prefill", .logits_to_keep = 1},
    {.name = "decode", .role = "decode", .single_token = true, .reads_state = true, .logits_to_keep = 1},
};
static const hfx_component one_graph[] = {{.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0}};
static const hfx_component generation_multi[] = {
    {.name = "prefill", .role = "prefill", .logits_to_keep = 0},
    {.name = "decode", .role = "decode", .reads_state = true, .logits_to_keep = 0},
};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", "position_ids", NULL};
static const char *const typed_inputs[] = {"input_ids", "attention_mask", "token_type_ids", "position_ids", NULL};

/* An encoder's inputs: token_type_ids too where its token-type table has several rows (NomicBERT). */
static const char *const *encoder_inputs(const void *cfg) {
    return ((const hfx_decoder_cfg *)cfg)->token_types > 1 ? typed_inputs : sequence_inputs;
}

static hfx_torch_signature classifier_torch_signature(const void *desc) {
    (void)desc;
    return (hfx_torch_signature){.args = sequence_inputs,
                                 .output_class = "SequenceClassifierOutputWithPast"}; /* (no cache argument) */
}

const hfx_arch_family hfx_decoder_classifier_family = {
    .cfg_size = sizeof(hfx_decoder_cfg),
    .parse = decoder_parse,
    .build_forward = decoder_build_forward,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = sequence_inputs,
    .torch_signature = classifier_torch_signature,
};

static const char *decoder_genai_type(const void *desc) { return ((const hfx_decoder_desc *)desc)->genai_type; }

/* A causal LM's base model is what sentence-transformers pools (Qwen3-Embedding): its final states, no head. */
static bool decoder_pools(const void *desc) { return !hfx_decoder_mixers_only(desc); }

/* ---- the base model (hfx_decoder_base): the causal LM's template under its own names, a forward pass only ---- */

static hfx_status base_parse(const void *desc, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const hfx_decoder_base *b = desc;
    hfx_cfg sub = c;
    hfx_status st = b->config_key ? hfx_cfg_object(c, b->config_key, arena, &sub, err) : HFX_OK;
    return st ? st : hfx_decoder_parse(b->causal, sub, arena, cfg, err);
}

static hfx_status base_build_forward(const void *desc, const void *cfg, const hfx_checkpoint *ck,
                                     const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    const hfx_decoder_base *b = desc;
    const char *prefix = b->prefix ? b->prefix : "model.";
    const hfx_weight_rename names[] = {{prefix, ""}, {NULL, NULL}}; /* as the base model saves them */
    static const char *const head[] = {"lm_head", NULL};
    hfx_decoder_host host = {.architecture = b->architecture, .rename = names, .base = true};
    /* a causal LM's checkpoint read as its base model (--task feature-extraction): its names, the head unread, as
     * transformers' AutoModel loads it */
    for (size_t i = 0; i < hfx_checkpoint_tensor_count(ck); i++)
        if (strncmp(hfx_checkpoint_tensor_at(ck, i)->name, prefix, strlen(prefix)) == 0) {
            host.rename = NULL, host.foreign = head;
            break;
        }
    return hfx_decoder_build(b->causal, cfg, ck, o, &host, g, err);
}

static hfx_torch_signature base_torch_signature(const void *desc) {
    const hfx_decoder_base *b = desc;
    return (hfx_torch_signature){.args = sequence_inputs,
                                 .output_class = b->output_class ? b->output_class : "BaseModelOutputWithPast"};
}

static bool base_pools(const void *desc) { return decoder_pools(((const hfx_decoder_base *)desc)->causal); }

const hfx_arch_family hfx_decoder_base_family = {
    .cfg_size = sizeof(hfx_decoder_cfg),
    .parse = base_parse,
    .build_forward = base_build_forward,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = sequence_inputs,
    .sequence_inputs_of = encoder_inputs,
    .torch_signature = base_torch_signature,
    .pools = base_pools,
};

static hfx_torch_signature encoder_torch_signature(const void *desc) {
    return (hfx_torch_signature){.args = sequence_inputs,
                                 .output_class = ((const hfx_decoder_desc *)desc)->output_class};
}

const hfx_arch_family hfx_decoder_encoder_family = {
    .cfg_size = sizeof(hfx_decoder_cfg),
    .parse = decoder_parse,
    .build_forward = decoder_build_forward,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = sequence_inputs,
    .sequence_inputs_of = encoder_inputs,
    .torch_signature = encoder_torch_signature,
    .pools = decoder_pools,
};

const hfx_arch_family hfx_decoder_family = {
    .cfg_size = sizeof(hfx_decoder_cfg),
    .parse = decoder_parse,
    .build_forward = decoder_build_forward,
    .cache_layers = decoder_cache_layers,
    .recompute_at = decoder_recompute_at,
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}, [HFX_EXPORT_GENERATION] = {generation, 2},
                [HFX_EXPORT_GENERATION_ONE_GRAPH] = {one_graph, 1}, [HFX_EXPORT_GENERATION_MULTI] = {generation_multi, 2}},
    .sequence_inputs = sequence_inputs,
    .torch_signature = decoder_torch_signature,
    .prompt_piece = decoder_prompt_piece,
    .genai_type = decoder_genai_type,
    .pools = decoder_pools,
};
