/* The encoder-decoder family: BART and its descendants (mBART, Marian, M2M100/NLLB), T5 (MT5,
 * UMT5) and Whisper as one template, a layout per lineage (config keys, tensor names, norms,
 * biases, position scheme) and a descriptor per model. An encoder of bidirectional layers (Whisper's
 * behind two convolutions over log-mel features, Moonshine's behind three over the waveform), a decoder of
 * causal self-attention,
 * cross-attention over the encoder's output and an MLP, the LM head (with final_logits_bias where
 * the model has one), or BART's sequence-classification head.
 *
 * Components (docs/GENERATION.md, "Encoder-decoder models"): a plain forward (`model`: input_ids
 * and attention_mask — Whisper: input_features; Moonshine: input_values and attention_mask — for the
 * encoder, decoder_input_ids, logits out), and for generation the
 * `encoder`, the decoder's `prefill` (the self-attention cache started, the cross-attention keys
 * and values computed once from encoder_hidden_states) and its `decode` step (the self-attention
 * cache grown or written at cache_position, the cross-attention cache read only). Names follow
 * optimum's seq2seq layout: past_key_values.{i}.decoder.key / present.{i}.encoder.value.
 *
 * A multi-token decode is the `encoder` and one `decoder` for prompt and steps, in one of two
 * layouts. Where the format keeps state inside the model (OpenVINO), as optimum-intel writes it and
 * OpenVINO GenAI's WhisperPipeline runs it: the encoder's output alone, the decoder taking
 * encoder_hidden_states, its self-attention cache in variables and the cross-attention keys and
 * values computed by the first call after a reset and kept (HFX_STATE_ONCE). Elsewhere, as
 * onnxruntime-genai runs Whisper: the encoder also returns every layer's cross-attention keys and
 * values (present.{i}.encoder.*), which the decoder reads like its growing self-attention past
 * (empty for the prompt). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/seq2seq.h"

#include "arch/io_names.h"
#include "arch/nn.h"
#include "arch/relative.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

/* ---- each lineage's layout (seq2seq.h) ---- */

/* BART's keys and leaves, its stacks under `top` ("model"), its head `head` */
#define BART_NAMES(top, head)                                                                                          \
    "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",               \
        "encoder_ffn_dim", "decoder_ffn_dim", top ".encoder", top ".decoder", "layers.%lld", "self_attn", "encoder_attn", \
        {"q_proj", "k_proj", "v_proj", "out_proj"}, "self_attn_layer_norm", "encoder_attn_layer_norm",                   \
        "final_layer_norm", "final_layer_norm", NULL, NULL, "fc1", "fc2", "layer_norm", NULL, top ".shared.weight",     \
        head, "max_position_embeddings", false, BIAS_ALL, false, {NULL, NULL}, MLP_ONE
static const seq2seq_layout bart_layout = {BART_NAMES("model", "lm_head.weight"), NULL, NULL, NULL};
/* Florence-2: BART under model.language_model, beside its vision tower and projector */
static const seq2seq_layout florence2_layout = {BART_NAMES("model.language_model", "lm_head.weight"),
                                                "model.vision_tower", "model.multi_modal_projector", NULL};

/* Whisper: BART's names, the decoder's own table (no model.shared), the head proj_out, a key
 * projection without bias. */
static const seq2seq_layout whisper_layout = {
    "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",
    "encoder_ffn_dim", "decoder_ffn_dim",
    "model.encoder", "model.decoder", "layers.%lld", "self_attn", "encoder_attn", {"q_proj", "k_proj", "v_proj", "out_proj"},
    "self_attn_layer_norm", "encoder_attn_layer_norm", "final_layer_norm", "final_layer_norm", NULL, NULL, "fc1", "fc2",
    "layer_norm", NULL, "model.decoder.embed_tokens.weight", "proj_out.weight", "max_target_positions", false,
    BIAS_ALL_BUT_KEY, false, {NULL, NULL}, MLP_ONE, NULL, NULL, NULL};

static const seq2seq_layout t5_layout = {
    "d_model", "num_layers", "num_decoder_layers", "num_heads", "num_heads", "d_ff", "d_ff",
    "encoder", "decoder", "block.%lld", "layer.0.SelfAttention", "layer.1.EncDecAttention", {"q", "k", "v", "o"},
    "layer.0.layer_norm", "layer.1.layer_norm", "layer.1.layer_norm", "layer.2.layer_norm", "layer.1.DenseReluDense",
    "layer.2.DenseReluDense", "wi", "wo", "final_layer_norm", NULL, "shared.weight", "lm_head.weight", NULL, true, BIAS_NONE,
    true, {NULL, NULL}, MLP_ONE, NULL, NULL, "BaseModelOutputWithPastAndCrossAttentions"};

/* Moonshine: Llama-like names (input_layernorm, o_proj; the decoder's cross-attention norm is
 * post_attention_layernorm, its MLP's final_layernorm), LayerNorms without bias, each stack's
 * activation, the decoder's MLP gated by its first linear's second half. */
static const seq2seq_layout moonshine_layout = {
    "hidden_size", "encoder_num_hidden_layers", "decoder_num_hidden_layers", "encoder_num_attention_heads",
    "decoder_num_attention_heads", "intermediate_size", "intermediate_size",
    "model.encoder", "model.decoder", "layers.%lld", "self_attn", "encoder_attn", {"q_proj", "k_proj", "v_proj", "o_proj"},
    "input_layernorm", "post_attention_layernorm", "post_attention_layernorm", "final_layernorm", "mlp", "mlp", "fc1",
    "fc2", "layer_norm", "norm", "model.decoder.embed_tokens.weight", "proj_out.weight", "max_position_embeddings", false,
    BIAS_MLP_AND_QKV_BY_CONFIG, false, {"encoder_hidden_act", "decoder_hidden_act"}, MLP_HALVES, NULL, NULL,
    "MoonshineEncoderModelOutput"};

/* ---- building blocks ---- */


/* "<stack>.<layer i>.<leaf>" (leaf NULL: the layer's own prefix) into buf. */
static const char *layer_name(s2s_ctx *c, char *buf, size_t size, const char *stack, int64_t i, const char *leaf) {
    int k = snprintf(buf, size, "%s.", stack);
    if (k > 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, c->d->layout->layer, (long long)i);
    if (leaf && k > 0 && (size_t)k < size) snprintf(buf + k, size - (size_t)k, ".%s", leaf);
    return buf;
}

/* x·Wᵀ (+ b) with `name`.weight [out, in] (and `name`.bias [out] where the layout has biases), and a LoRA adapter's
 * update where one beside the checkpoint targets it. */
static hfx_value *dense_b(s2s_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name, bool bias) {
    return hfx_linear_named(c->w, x, in, out, bias, "%s", name);
}


/* nn.LayerNorm (weight, and bias where the layout has one), or T5's: x·rsqrt(mean(x²) + ε) in float32, then
 * the weight. */
static hfx_value *layer_norm(s2s_ctx *c, hfx_value *x, const char *name) {
    int64_t H = c->m->hidden;
    hfx_value *w = hfx_weight(c->w, 1, &H, "%s.weight", name);
    if (c->d->layout->rms_norm) return hfx_rms_norm(c->g, x, w, c->m->eps, 0.0);
    return hfx_layer_norm(c->g, x, w, c->m->norm_bias ? hfx_weight(c->w, 1, &H, "%s.bias", name) : NULL, c->m->eps);
}

/* [B,S,heads·hd] → [B,heads,S,hd] */
static hfx_value *split_heads(s2s_ctx *c, hfx_value *x, int64_t heads, int64_t hd) {
    x = hfx_reshape(c->g, x, 4, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(heads), hfx_dim_const(hd)});
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

/* `prefix`.<q|k|v>(x) as [B,heads,S,hd] */
static hfx_value *project(s2s_ctx *c, hfx_value *x, const char *prefix, int which, int64_t heads, int64_t hd) {
    const seq2seq_layout *L = c->d->layout;
    char n[192];
    snprintf(n, sizeof n, "%s.%s", prefix, L->proj[which]);
    return split_heads(c, dense_b(c, x, c->m->hidden, heads * hd, n, which == 1 ? c->m->key_bias : c->m->qkv_bias), heads,
                       hd);
}

/* The additive bias [B,1,1,T] of a padding mask [B,T]: 0 where the key is real, the float32
 * minimum where it is padding (transformers' create_bidirectional_mask). */
hfx_value *hfx_s2s_padding_bias(s2s_ctx *c, hfx_value *mask) {
    hfx_graph *g = c->g;
    hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1);
    return hfx_where(g, keep, c->zero, c->lowest);
}

/* An all-visible bias [1,1,1,T] (Whisper: every source is 2·max_source_positions frames long). */
hfx_value *hfx_s2s_no_mask(s2s_ctx *c, int64_t T) {
    float *zeros = calloc((size_t)T, sizeof *zeros);
    if (!zeros) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return c->zero;
    }
    hfx_value *bias = hfx_const_bytes(c->g, HFX_DTYPE_F32, 4, (int64_t[]){1, 1, 1, T}, zeros);
    free(zeros);
    return bias;
}

/* The causal bias [1,1,S,T] of queries at cache slots `q_slots` [S] over T keys at slots 0..T−1:
 * a key is visible at a slot no later than the query's (the decoder has no padding). */
static hfx_value *causal_bias(s2s_ctx *c, hfx_value *q_slots, hfx_value *k) {
    hfx_graph *g = c->g;
    hfx_value *t = hfx_dim_of(g, k, 2);
    hfx_value *kv = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), t, hfx_const_i64(g, 1), k->dims[2]), 0); /* [1,T] */
    hfx_value *q = hfx_transpose(g, hfx_unsqueeze(g, q_slots, 0), 2, (int64_t[]){1, 0});                        /* [S,1] */
    hfx_value *visible = hfx_op2(g, HFX_OP_LESS_EQUAL, kv, q);                                                    /* [S,T] */
    return hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_where(g, visible, c->zero, c->lowest), 0), 0);
}

/* Attention of q [B,heads,S,hd] over k, v [B,heads,T,hd] with `bias`, the heads merged and
 * projected by `prefix`'s output projection: [B,S,hidden]. BART scales the scores by hd^-½;
 * T5 does not (its initialization folds the scale into q). */
static hfx_value *attend(s2s_ctx *c, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias, const char *prefix) {
    hfx_graph *g = c->g;
    int64_t heads = q->dims[1].c, hd = q->dims[3].c, H = c->m->hidden;
    double scale = c->d->layout->relative ? 1.0 : 1.0 / sqrt((double)hd);
    hfx_value *a = hfx_attention(g, q, k, v, bias, scale, 0.0, 0);
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){q->dims[0], q->dims[2], hfx_dim_const(heads * hd)});
    char n[192];
    snprintf(n, sizeof n, "%s.%s", prefix, c->d->layout->proj[3]);
    return dense_b(c, a, heads * hd, H, n, c->m->out_bias);
}

/* The MLP of the layer named `layer` (its own prefix `sub` under it, if any) of stack `dec` (0 the encoder's):
 * fc_out(act(fc_in x)); gated: fc_out(act(fc_in_0 x)·fc_in_1 x); or halves: fc_out(act(h₂)·h₁), h = fc_in x. */
static hfx_value *mlp(s2s_ctx *c, hfx_value *x, const char *layer, const char *sub, int64_t ffn, int dec) {
    const seq2seq_layout *L = c->d->layout;
    const seq2seq_cfg *m = c->m;
    hfx_graph *g = c->g;
    char p[192], n[224];
    snprintf(p, sizeof p, sub ? "%s.%s" : "%s", layer, sub);
    hfx_value *h;
    if (m->gated) {
        snprintf(n, sizeof n, "%s.%s_0", p, L->fc_in);
        h = hfx_activate(g, m->act[dec], dense_b(c, x, m->hidden, ffn, n, m->mlp_bias));
        snprintf(n, sizeof n, "%s.%s_1", p, L->fc_in);
        h = hfx_op2(g, HFX_OP_MUL, h, dense_b(c, x, m->hidden, ffn, n, m->mlp_bias));
    } else if (dec && L->dec_mlp_form == MLP_HALVES) {
        snprintf(n, sizeof n, "%s.%s", p, L->fc_in);
        hfx_value *both = dense_b(c, x, m->hidden, 2 * ffn, n, m->mlp_bias); /* [B,S,2·ffn] */
        h = hfx_op2(g, HFX_OP_MUL, hfx_activate(g, m->act[dec], hfx_slice(g, both, -1, ffn, 2 * ffn)),
                    hfx_slice(g, both, -1, 0, ffn));
    } else {
        snprintf(n, sizeof n, "%s.%s", p, L->fc_in);
        h = hfx_activate(g, m->act[dec], dense_b(c, x, m->hidden, ffn, n, m->mlp_bias));
    }
    snprintf(n, sizeof n, "%s.%s", p, L->fc_out);
    return dense_b(c, h, ffn, m->hidden, n, m->mlp_bias);
}

/* The relative bias of the stack's layer i (layer 0's for every layer unless each has its own). */
static hfx_value *layer_relative_bias(s2s_ctx *c, const char *stack, int64_t i, const int64_t *buckets, hfx_value *q_pos,
                                      hfx_value *k, hfx_value **shared) {
    if (*shared && !c->d->bias_every_layer) return *shared;
    const seq2seq_layout *L = c->d->layout;
    char n[224], sub[96];
    snprintf(sub, sizeof sub, "%s.relative_attention_bias.weight", L->self_attn);
    int64_t heads = stack == L->enc_stack ? c->m->enc_heads : c->m->dec_heads;
    hfx_value *table = hfx_weight(c->w, 2, (int64_t[]){c->m->buckets, heads}, "%s",
                                  layer_name(c, n, sizeof n, stack, c->d->bias_every_layer ? i : 0, sub));
    *shared = hfx_relative_bias(c->g, table, buckets, c->m->max_distance, q_pos, hfx_dim_of(c->g, k, 2), k->dims[2]);
    return *shared;
}

/* x + block(x) with the block's norm where the layout puts it: before the block (pre-norm) or
 * after the sum (post-norm). `norm` names the LayerNorm; `block` runs on what it is given. */
typedef hfx_value *(*block_fn)(s2s_ctx *c, hfx_value *x, void *arg);
static hfx_value *residual(s2s_ctx *c, hfx_value *x, const char *norm, block_fn block, void *arg) {
    if (c->d->pre_norm) return hfx_op2(c->g, HFX_OP_ADD, x, block(c, layer_norm(c, x, norm), arg));
    return layer_norm(c, hfx_op2(c->g, HFX_OP_ADD, x, block(c, x, arg)), norm);
}

/* Marian's table [rows, hidden]: pos / 10000^(2·(j // 2) / hidden) in float64, the sines of the
 * even j in the first half (its ceiling), the cosines of the odd j after them, rounded to float32. */
static hfx_value *sinusoid_table(s2s_ctx *c, int64_t rows) {
    int64_t dim = c->m->hidden, first = (dim + 1) / 2;
    float *t = malloc((size_t)(rows * dim) * sizeof *t);
    if (!t) {
        hfx_graph_fail(c->g, HFX_ERR_NOMEM, "out of memory");
        return hfx_const_f32(c->g, 0.0f);
    }
    for (int64_t p = 0; p < rows; p++)
        for (int64_t j = 0; j < dim; j++) {
            double angle = (double)p / pow(10000.0, 2.0 * (double)(j / 2) / (double)dim);
            int64_t col = j % 2 == 0 ? j / 2 : first + j / 2;
            t[p * dim + col] = (float)(j % 2 == 0 ? sin(angle) : cos(angle));
        }
    hfx_value *v = hfx_cast(c->g, hfx_const_bytes(c->g, HFX_DTYPE_F32, 2, (int64_t[]){rows, dim}, t), c->o->dtype);
    free(t);
    return v;
}

/* The positions' embeddings [B|1,S,hidden] of the S tokens `ids` [B,S] after `past` earlier
 * ones (an i64 scalar; NULL: none). */
static hfx_value *position_embeddings(s2s_ctx *c, hfx_value *ids, hfx_value *past, const char *stack) {
    hfx_graph *g = c->g;
    const seq2seq_cfg *m = c->m;
    hfx_dim seq = ids->dims[1];
    hfx_value *start = past ? past : hfx_const_i64(g, 0);
    if (c->d->positions != POS_SINUSOID) { /* past + arange(S) (+ offset), looked up in the table */
        hfx_value *len = hfx_dim_of(g, ids, 1);
        hfx_value *pos = hfx_range(g, start, hfx_op2(g, HFX_OP_ADD, start, len), hfx_const_i64(g, 1), seq);
        if (c->d->offset) pos = hfx_op2(g, HFX_OP_ADD, pos, hfx_const_i64(g, c->d->offset));
        int64_t rows = m->max_position + c->d->offset;
        char name[96];
        snprintf(name, sizeof name, "%s.embed_positions.weight", stack);
        hfx_value *table = c->d->positions == POS_SINUSOID_TABLE && !hfx_weight_exists(c->w, name)
                               ? sinusoid_table(c, rows)
                               : hfx_weight(c->w, 2, (int64_t[]){rows, m->hidden}, "%s", name);
        return hfx_unsqueeze(g, hfx_gather(g, table, pos, 0), 0);
    }
    /* M2M100: (cumsum(real) + past)·real + pad, then [sin(p·f), cos(p·f)], zero at padding */
    hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad))),
                               HFX_DTYPE_I64);
    hfx_value *pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_op2(g, HFX_OP_ADD, hfx_cumsum(g, real, 1), start),
                                                    real),
                             hfx_const_i64(g, m->pad));
    int64_t half = m->hidden / 2;
    hfx_value *freq = hfx_const_bytes(g, HFX_DTYPE_F32, 1, &half, m->inv_freq);
    hfx_value *angle = hfx_op2(g, HFX_OP_MUL, hfx_unsqueeze(g, hfx_cast(g, pos, HFX_DTYPE_F32), 2), freq); /* [B,S,half] */
    hfx_value *parts[3] = {hfx_op1(g, HFX_OP_SIN, angle), hfx_op1(g, HFX_OP_COS, angle), NULL};
    int n = 2;
    if (m->hidden % 2) { /* an odd width ends in a zero column */
        hfx_value *z = hfx_op2(g, HFX_OP_MUL, hfx_slice(g, angle, 2, 0, 1), c->zero);
        parts[n++] = z;
    }
    hfx_value *emb = hfx_concat(g, n, parts, 2);
    emb = hfx_op2(g, HFX_OP_MUL, emb, hfx_unsqueeze(g, hfx_cast(g, real, HFX_DTYPE_F32), 2));
    return hfx_cast(g, emb, c->o->dtype);
}

/* The tokens' embeddings [B,S,hidden] of `table`, scaled by √d_model where the config says. */
static hfx_value *token_embeddings(s2s_ctx *c, hfx_value *table, hfx_value *ids) {
    hfx_value *x = hfx_gather(c->g, table, ids, 0);
    if (c->m->scale_embedding) /* a float32 scalar, as torch multiplies by a Python float */
        x = hfx_op2(c->g, HFX_OP_MUL, x, hfx_const_scalar(c->g, c->o->dtype, (float)sqrt((double)c->m->hidden)));
    return x;
}

/* The embeddings x [B,S,hidden] of the tokens `ids` [B,S] (or, where the positions count only, x itself) plus their
 * positions, and the embedding norm. */
static hfx_value *embedded(s2s_ctx *c, hfx_value *x, hfx_value *ids, hfx_value *past, const char *stack) {
    hfx_graph *g = c->g;
    if (c->d->positions != POS_RELATIVE && c->d->positions != POS_ROTARY)
        x = hfx_op2(g, HFX_OP_ADD, x, position_embeddings(c, ids, past, stack));
    if (c->d->embed_norm) {
        char n[96];
        snprintf(n, sizeof n, "%s.layernorm_embedding", stack);
        x = layer_norm(c, x, n);
    }
    return x;
}

/* The token embeddings plus positions, and the embedding norm: [B,S,hidden]. */
static hfx_value *embed(s2s_ctx *c, hfx_value *table, hfx_value *ids, hfx_value *past, const char *stack) {
    return embedded(c, token_embeddings(c, table, ids), ids, past, stack);
}

/* What follows a stack's last layer: its final norm, in the pre-norm layout. */
static hfx_value *stack_end(s2s_ctx *c, hfx_value *x, const char *stack) {
    const seq2seq_layout *L = c->d->layout;
    if (!c->d->pre_norm) return x;
    char n[96];
    snprintf(n, sizeof n, "%s.%s", stack, stack == L->dec_stack && L->dec_final_norm ? L->dec_final_norm : L->final_norm);
    return layer_norm(c, x, n);
}

/* ---- the encoder ---- */

typedef struct self_attn_arg {
    int64_t i;
    hfx_value *bias;          /* the padding bias [B,1,1,S] */
    hfx_value *positions;     /* T5: the queries' positions [S] (0..S−1) */
    hfx_value *rel;           /* T5: layer 0's relative bias, once made */
    hfx_value *cos, *sin;     /* POS_ROTARY: [1,1,S,rotated] */
} self_attn_arg;

/* q or k [B,heads,S,hd] turned by the rotary's cos and sin (NULL: positions are not rotary). */
static hfx_value *turn(s2s_ctx *c, hfx_value *x, hfx_value *cos, hfx_value *sin) {
    return cos ? hfx_rope_apply(c->g, x, cos, sin, c->m->rope.interleaved) : x;
}

static hfx_value *encoder_attention(s2s_ctx *c, hfx_value *h, void *arg_) {
    self_attn_arg *a = arg_;
    const seq2seq_layout *L = c->d->layout;
    int64_t heads = c->m->enc_heads, hd = c->m->enc_hd;
    char p[192];
    layer_name(c, p, sizeof p, L->enc_stack, a->i, L->self_attn);
    hfx_value *q = turn(c, project(c, h, p, 0, heads, hd), a->cos, a->sin);
    hfx_value *k = turn(c, project(c, h, p, 1, heads, hd), a->cos, a->sin), *v = project(c, h, p, 2, heads, hd);
    hfx_value *bias = a->bias;
    if (c->d->positions == POS_RELATIVE)
        bias = hfx_op2(c->g, HFX_OP_ADD, layer_relative_bias(c, L->enc_stack, a->i, c->m->enc_buckets, a->positions, k,
                                                             &a->rel), bias);
    return attend(c, q, k, v, bias, p);
}

typedef struct mlp_arg {
    const char *stack, *sub;
    int64_t i, ffn;
    int dec; /* 1: the decoder's */
} mlp_arg;

static hfx_value *mlp_block(s2s_ctx *c, hfx_value *h, void *arg_) {
    mlp_arg *a = arg_;
    char n[192];
    return mlp(c, h, layer_name(c, n, sizeof n, a->stack, a->i, NULL), a->sub, a->ffn, a->dec);
}

/* The encoder's layers and final norm over x [B,S,hidden], keys masked by `bias`. */
hfx_value *hfx_s2s_encoder_layers(s2s_ctx *c, hfx_value *x, hfx_value *bias) {
    const seq2seq_layout *L = c->d->layout;
    const char *stack = L->enc_stack;
    hfx_graph *g = c->g;
    self_attn_arg sa = {0, bias, NULL, NULL, NULL, NULL};
    if (c->d->positions == POS_RELATIVE || c->d->positions == POS_ROTARY)
        sa.positions = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, x, 1), hfx_const_i64(g, 1), x->dims[1]);
    if (c->d->positions == POS_ROTARY)
        hfx_rope_cos_sin(g, &c->m->rope, hfx_unsqueeze(g, sa.positions, 0), c->o->dtype, &sa.cos, &sa.sin);
    char n[192];
    for (int64_t i = 0; i < c->m->enc_layers && !g->failed; i++) {
        sa.i = i;
        x = residual(c, x, layer_name(c, n, sizeof n, stack, i, L->self_norm), encoder_attention, &sa);
        mlp_arg ma = {stack, L->enc_mlp, i, c->m->enc_ffn, 0};
        x = residual(c, x, layer_name(c, n, sizeof n, stack, i, L->enc_mlp_norm), mlp_block, &ma);
    }
    return stack_end(c, x, stack);
}

/* The encoder's last hidden state [B,S,hidden] for ids and mask [B,S]. */
static hfx_value *encode(s2s_ctx *c, hfx_value *table, hfx_value *ids, hfx_value *mask) {
    return hfx_s2s_encoder_layers(c, embed(c, table, ids, NULL, c->d->layout->enc_stack), hfx_s2s_padding_bias(c, mask));
}

/* ---- the decoder ---- */

/* What the decoder's layers share: the caches they read and write, the biases. */
typedef struct dec_state {
    hfx_value *enc;           /* encoder_hidden_states [B,Tenc,hidden]; NULL: the cross cache is read */
    hfx_value *self_bias, *cross_bias;
    hfx_value *rel;           /* T5: the self-attention's relative bias, once made */
    hfx_value *q_slots;       /* the queries' cache slots = positions [S] */
    hfx_value *cache_position; /* static cache: the S slots written */
    hfx_dim enc_len;
    hfx_value **out;          /* per layer: self key, self value, cross key, cross value (outputs) */
    int *state;               /* their state declarations (the self-attention parts; the cross-attention
                                 ones too in the seed's decode, which returns its whole cache) */
    hfx_value *past_key0;     /* a growing cache's layer-0 keys, read before the embeddings: the
                                 positions continue after them */
    int past_key0_state;
    hfx_value **in;           /* per layer and part: the cache inputs, read up front in the seed's order
                                 (every self-attention part, then every cross-attention one); NULL:
                                 each read where it is used */
    hfx_value *cos, *sin;     /* POS_ROTARY: the queries' [1,1,S,rotated] */
} dec_state;

/* Each layer's cache parts; the counters (cumulative_length) only in the seed's static cache. */
enum { SELF_K, SELF_V, SELF_N, CROSS_K, CROSS_V, CROSS_N, DEC_PARTS };

/* What a cache name is for: the state, the graph input, the graph output. */
enum { AS_STATE, AS_INPUT, AS_OUTPUT };

/* Layer i's cache tensor `part` named `as` one of the above, as the profile names an
 * encoder-decoder's caches (io_names.h). */
static const char *cache_name(const s2s_ctx *c, char *buf, size_t size, int64_t i, int part, int as) {
    static const hfx_state_part parts[DEC_PARTS] = {HFX_PART_KEY,       HFX_PART_VALUE,       HFX_PART_COUNTER,
                                                    HFX_PART_CROSS_KEY, HFX_PART_CROSS_VALUE, HFX_PART_CROSS_COUNTER};
    static const hfx_name_use uses[] = {[AS_STATE] = HFX_NAME_STATE, [AS_INPUT] = HFX_NAME_INPUT,
                                        [AS_OUTPUT] = HFX_NAME_OUTPUT};
    hfx_state_naming n = {.io = c->o->io, .is_static = c->o->cache == HFX_CACHE_STATIC,
                          .continues = c->o->reads_state, .encoder_decoder = true};
    return hfx_state_name(&n, i, parts[part], uses[as], buf, size);
}

/* Layer i's past self-attention keys or values [B,heads,past,hd] (a growing cache), declared as
 * state. */
static hfx_value *read_past(s2s_ctx *c, int64_t i, int part, int *state) {
    const hfx_build_opts *o = c->o;
    char name[128], input[128];
    *state = hfx_graph_state(c->g, cache_name(c, name, sizeof name, i, part, AS_STATE), HFX_STATE_APPEND, 2);
    return hfx_state_read(c->g, *state, cache_name(c, input, sizeof input, i, part, AS_INPUT), o->dtype, 4,
                          (hfx_dim[]){o->batch, hfx_dim_const(c->m->dec_heads), o->past, hfx_dim_const(c->m->dec_hd)});
}

/* Whether the graph keeps the seed's static cache: transformers' StaticCache inside its EncoderDecoderCache. */
static bool seed_static(const s2s_ctx *c) { return c->o->io == HFX_IO_SEED && c->o->cache == HFX_CACHE_STATIC; }

/* The seed's EncoderDecoderCache in its order — every layer's self-attention parts, then every layer's
 * cross-attention ones — which its decode step takes and returns: the cross-attention part unchanged (a value
 * of its own: an output may not be an input). A static cache (StaticLayer) has each layer's write counter after
 * its keys and values, and its prefill takes the counters alone (its caches start empty). Declares every part's
 * state into s->state, reads what the call takes into s->in, the returned cross part into s->out. */
static void read_seed_cache(s2s_ctx *c, dec_state *s, hfx_value **in) {
    const hfx_build_opts *o = c->o;
    hfx_graph *g = c->g;
    bool fixed = o->cache == HFX_CACHE_STATIC;
    s->in = in;
    for (int cross = 0; cross < 2; cross++)
        for (int64_t i = 0; i < c->m->dec_layers; i++)
            for (int part = cross ? CROSS_K : SELF_K; part <= (cross ? CROSS_N : SELF_N); part++) {
                bool counter = part == SELF_N || part == CROSS_N;
                if (counter && !fixed) continue;
                int at = DEC_PARTS * (int)i + part;
                char name[128], input[128];
                hfx_state_update update = counter || cross ? HFX_STATE_REPLACE
                                          : fixed          ? HFX_STATE_WRITE
                                                           : HFX_STATE_APPEND;
                s->state[at] = hfx_graph_state(g, cache_name(c, name, sizeof name, i, part, AS_STATE), update, 2);
                if (!counter && !o->reads_state) continue; /* a static prefill's caches start empty */
                hfx_dim dims[4] = {o->batch, hfx_dim_const(c->m->dec_heads),
                                   cross ? s->enc_len : fixed ? o->max_cache : o->past, hfx_dim_const(c->m->dec_hd)};
                in[at] = hfx_state_read(g, s->state[at], cache_name(c, input, sizeof input, i, part, AS_INPUT),
                                        counter ? HFX_DTYPE_I64 : o->dtype, counter ? 0 : 4, dims);
                if (cross && o->reads_state)
                    s->out[at] = hfx_op2(g, HFX_OP_ADD, in[at], hfx_const_scalar(g, in[at]->dtype, 0.0));
            }
}

/* The seed's static self-attention cache of layer i: x [B,heads,S,hd] written at the slots the layer's own
 * counter says into the M slots a step reads or a prefill starts as zeros; the counter advanced by S. */
static hfx_value *seed_static_self(s2s_ctx *c, dec_state *s, int64_t i, hfx_value *x, int part) {
    hfx_graph *g = c->g;
    int at = DEC_PARTS * (int)i;
    hfx_value *counter = s->in[at + SELF_N], *slots = NULL;
    s->out[at + part] = hfx_static_layer_write(g, c->o->reads_state ? s->in[at + part] : NULL, x, counter,
                                               c->o->max_cache, &slots);
    s->out[at + SELF_N] = hfx_op2(g, HFX_OP_ADD, counter, hfx_dim_of(g, x, 2)); /* after its readers */
    return s->out[at + part];
}

/* This step's self-attention keys or values x [B,heads,S,hd] joined with layer i's cache. */
static hfx_value *self_cache(s2s_ctx *c, dec_state *s, int64_t i, hfx_value *x, int part) {
    const hfx_build_opts *o = c->o;
    if (o->cache == HFX_CACHE_NONE) return x;
    if (seed_static(c)) return seed_static_self(c, s, i, x, part);
    hfx_graph *g = c->g;
    char name[128], input[128];
    bool dynamic = o->cache == HFX_CACHE_DYNAMIC;
    int state;
    if (dynamic && o->has_past) {
        hfx_value *past;
        if (s->in) past = s->in[DEC_PARTS * i + part], state = s->state[DEC_PARTS * i + part];
        else if (i == 0 && part == SELF_K) past = s->past_key0, state = s->past_key0_state;
        else past = read_past(c, i, part, &state);
        x = hfx_concat(g, 2, (hfx_value *[]){past, x}, 2);
    } else {
        state = hfx_graph_state(g, cache_name(c, name, sizeof name, i, part, AS_STATE),
                                dynamic ? HFX_STATE_APPEND : HFX_STATE_WRITE, 2);
    }
    if (!dynamic) {
        hfx_value *cache = hfx_state_read(g, state, cache_name(c, input, sizeof input, i, part, AS_INPUT), x->dtype, 4,
                                          (hfx_dim[]){o->batch, x->dims[1], o->max_cache, x->dims[3]});
        x = hfx_cache_write(g, cache, x, s->cache_position);
    }
    s->out[DEC_PARTS * i + part] = x;
    s->state[DEC_PARTS * i + part] = state;
    return x;
}

typedef struct dec_layer_arg {
    dec_state *s;
    int64_t i;
} dec_layer_arg;

static hfx_value *decoder_self_attention(s2s_ctx *c, hfx_value *h, void *arg_) {
    dec_layer_arg *a = arg_;
    dec_state *s = a->s;
    const seq2seq_layout *L = c->d->layout;
    int64_t heads = c->m->dec_heads, hd = c->m->dec_hd, i = a->i;
    char p[192];
    layer_name(c, p, sizeof p, L->dec_stack, i, L->self_attn);
    hfx_value *q = turn(c, project(c, h, p, 0, heads, hd), s->cos, s->sin);
    hfx_value *k = self_cache(c, s, i, turn(c, project(c, h, p, 1, heads, hd), s->cos, s->sin), SELF_K);
    hfx_value *v = self_cache(c, s, i, project(c, h, p, 2, heads, hd), SELF_V);
    if (!s->self_bias) /* every layer's queries and keys sit at the same slots */
        s->self_bias = causal_bias(c, s->q_slots, k);
    hfx_value *bias = s->self_bias;
    if (c->d->positions == POS_RELATIVE)
        bias = hfx_op2(c->g, HFX_OP_ADD, layer_relative_bias(c, L->dec_stack, i, c->m->dec_buckets, s->q_slots, k, &s->rel),
                       bias);
    return attend(c, q, k, v, bias, p);
}

static hfx_value *decoder_cross_attention(s2s_ctx *c, hfx_value *h, void *arg_) {
    dec_layer_arg *a = arg_;
    dec_state *s = a->s;
    const hfx_build_opts *o = c->o;
    const seq2seq_layout *L = c->d->layout;
    int64_t heads = c->m->dec_heads, hd = c->m->dec_hd, i = a->i;
    hfx_graph *g = c->g;
    char n[224], p[192];
    layer_name(c, p, sizeof p, L->dec_stack, i, L->cross_attn);
    hfx_value *q = project(c, h, p, 0, heads, hd), *k, *v;
    if (s->enc) { /* computed once from the encoder's output (and, generating, cached) */
        k = project(c, s->enc, p, 1, heads, hd);
        v = project(c, s->enc, p, 2, heads, hd);
        if (o->cache != HFX_CACHE_NONE) s->out[DEC_PARTS * i + CROSS_K] = k, s->out[DEC_PARTS * i + CROSS_V] = v;
        if (seed_static(c)) /* (the seed's prefill writes k and v at its counter's slots of an empty cache as long as
                               the encoder's output: they are that cache while the counter starts at 0) */
            s->out[DEC_PARTS * i + CROSS_N] =
                hfx_op2(g, HFX_OP_ADD, s->in[DEC_PARTS * i + CROSS_N], hfx_dim_of(g, k, 2));
    } else { /* read from the cache the prefill returned; its projections are not needed here */
        hfx_dim dims[4] = {o->batch, hfx_dim_const(heads), s->enc_len, hfx_dim_const(hd)};
        char name[128];
        if (s->in) { /* the seed's, read up front */
            k = s->in[DEC_PARTS * i + CROSS_K];
            v = s->in[DEC_PARTS * i + CROSS_V];
        } else {
            k = hfx_graph_input(g, cache_name(c, name, sizeof name, i, CROSS_K, AS_INPUT), o->dtype, 4, dims);
            v = hfx_graph_input(g, cache_name(c, name, sizeof name, i, CROSS_V, AS_INPUT), o->dtype, 4, dims);
        }
        for (int j = 1; j <= 2; j++)
            for (int b = 0; b < 2; b++) {
                snprintf(n, sizeof n, "%s.%s.%s", p, L->proj[j], b ? "bias" : "weight");
                hfx_weight_ignore(c->w, n);
            }
    }
    return attend(c, q, k, v, s->cross_bias, p);
}

/* The decoder's last hidden state [B,S,hidden] for ids [B,S] after `past` cached tokens. */
static hfx_value *decode(s2s_ctx *c, dec_state *s, hfx_value *table, hfx_value *ids, hfx_value *past) {
    const seq2seq_layout *L = c->d->layout;
    const char *stack = L->dec_stack;
    hfx_graph *g = c->g;
    hfx_value *start = past ? past : hfx_const_i64(g, 0);
    s->q_slots = s->cache_position ? s->cache_position
                                   : hfx_range(g, start, hfx_op2(g, HFX_OP_ADD, start, hfx_dim_of(g, ids, 1)),
                                               hfx_const_i64(g, 1), ids->dims[1]);
    if (c->d->positions == POS_ROTARY)
        hfx_rope_cos_sin(g, &c->m->rope, hfx_unsqueeze(g, s->q_slots, 0), c->o->dtype, &s->cos, &s->sin);
    hfx_value *x = embed(c, table, ids, past, stack);
    char n[192];
    for (int64_t i = 0; i < c->m->dec_layers && !g->failed; i++) {
        dec_layer_arg a = {s, i};
        x = residual(c, x, layer_name(c, n, sizeof n, stack, i, L->self_norm), decoder_self_attention, &a);
        x = residual(c, x, layer_name(c, n, sizeof n, stack, i, L->cross_norm), decoder_cross_attention, &a);
        mlp_arg ma = {stack, L->dec_mlp, i, c->m->dec_ffn, 1};
        x = residual(c, x, layer_name(c, n, sizeof n, stack, i, L->dec_mlp_norm), mlp_block, &ma);
    }
    return stack_end(c, x, stack);
}

/* logits [B,S,dec_vocab] = x·headᵀ (+ final_logits_bias). The head is lm_head.weight where the
 * checkpoint has one — transformers 5 ties it to the table only when it is absent — else the
 * decoder's table; T5's decoder output is scaled by d_model^-½ first where its config says. */
static hfx_value *lm_logits(s2s_ctx *c, hfx_value *x, hfx_value *dec_table) {
    const seq2seq_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *head = dec_table;
    const char *name = c->d->layout->head;
    if (hfx_weight_exists(c->w, name) || (!m->tied && !c->d->layout->relative))
        head = hfx_weight(c->w, 2, (int64_t[]){m->dec_vocab, m->hidden}, "%s", name);
    if (m->scale_decoder_output) /* a float32 scalar, as torch multiplies by a Python float */
        x = hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, x->dtype, (float)(1.0 / sqrt((double)m->hidden))));
    hfx_value *bias = NULL;
    if (c->d->logits_bias && hfx_weight_exists(c->w, "final_logits_bias")) /* absent: zeros, as transformers loads it */
        bias = hfx_reshape(g, hfx_weight(c->w, 2, (int64_t[]){1, m->dec_vocab}, "final_logits_bias"), 1,
                           (hfx_dim[]){hfx_dim_const(m->dec_vocab)});
    return hfx_linear(g, x, head, bias);
}

/* A sequence classifier's logits [B,labels]: classification_head on the decoder's state at each
 * row's last EOS of the sources (transformers requires every row to hold the same number of EOS;
 * a row without one reads its last position here, where transformers raises). */
static hfx_value *classify(s2s_ctx *c, hfx_value *x, hfx_value *ids) {
    hfx_graph *g = c->g;
    int64_t H = c->m->hidden;
    hfx_value *len = hfx_dim_of(g, ids, 1);
    hfx_value *cols = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), ids->dims[1]), 0);
    hfx_value *at_eos = hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, c->m->eos));
    hfx_value *col = hfx_where(g, at_eos, cols, hfx_const_i64(g, -1));
    int64_t last_axis = 1;
    col = hfx_reduce(g, HFX_OP_REDUCE_MAX, col, 1, &last_axis);                 /* [B,1]: the last EOS, or −1 */
    col = hfx_where(g, hfx_op2(g, HFX_OP_LESS, col, hfx_const_i64(g, 0)), hfx_op2(g, HFX_OP_SUB, len, hfx_const_i64(g, 1)), col);
    hfx_value *shape = hfx_concat(g, 3, (hfx_value *[]){hfx_unsqueeze(g, hfx_dim_of(g, ids, 0), 0),
                                                        hfx_unsqueeze(g, hfx_const_i64(g, 1), 0),
                                                        hfx_unsqueeze(g, hfx_const_i64(g, H), 0)}, 0);
    hfx_value *idx = hfx_expand(g, hfx_unsqueeze(g, col, 2), shape, 3, (hfx_dim[]){ids->dims[0], hfx_dim_const(1),
                                                                                    hfx_dim_const(H)});
    hfx_value *h = hfx_gather_elements(g, x, idx, 1);                             /* [B,1,H] */
    h = hfx_reshape(g, h, 2, (hfx_dim[]){ids->dims[0], hfx_dim_const(H)});
    h = hfx_op1(g, HFX_OP_TANH, dense_b(c, h, H, H, "classification_head.dense", true));
    return dense_b(c, h, H, c->m->labels, "classification_head.out_proj", true);
}

/* shift_tokens_right: decoder_start_token_id, then the sources but their last column (-100 read as
 * padding), what a classifier's decoder reads: column j takes column max(j − 1, 0), column 0 the
 * start id. */
static hfx_value *shift_right(s2s_ctx *c, hfx_value *ids) {
    hfx_graph *g = c->g;
    hfx_value *cols = hfx_range(g, hfx_const_i64(g, 0), hfx_dim_of(g, ids, 1), hfx_const_i64(g, 1), ids->dims[1]);
    hfx_value *prev = hfx_op2(g, HFX_OP_MAX, hfx_op2(g, HFX_OP_SUB, cols, hfx_const_i64(g, 1)), hfx_const_i64(g, 0));
    hfx_value *shifted = hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, cols, hfx_const_i64(g, 0)), hfx_const_i64(g, c->m->start),
                                   hfx_gather(g, ids, prev, 1));
    return hfx_where(g, hfx_op2(g, HFX_OP_EQUAL, shifted, hfx_const_i64(g, -100)), hfx_const_i64(g, c->m->pad), shifted);
}

/* Stack t's table (0 the encoder's, 1 the decoder's): its own (<stack>.embed_tokens) where the
 * checkpoint has one — transformers 5 saves them when the ties are off (tie_word_embeddings false,
 * Marian's share_encoder_decoder_embeddings false), older checkpoints as copies — else the shared
 * one, which is then not needed. */
static hfx_value *table(s2s_ctx *c, int t) {
    const seq2seq_layout *L = c->d->layout;
    char own[96];
    snprintf(own, sizeof own, "%s.embed_tokens.weight", t ? L->dec_stack : L->enc_stack);
    int64_t rows = t ? c->m->dec_vocab : c->m->vocab;
    bool has_own = hfx_weight_exists(c->w, own);
    if (has_own) hfx_weight_ignore(c->w, L->shared);
    return hfx_weight(c->w, 2, (int64_t[]){rows, c->m->hidden}, "%s", has_own ? own : L->shared);
}


/* A bare model saved on its own (BartModel, WhisperModel, MoonshineModel) has its stacks at the top ("encoder.", not
 * "model.encoder."): where the layout's are under "model." and the checkpoint's first layer is not, the builder's
 * names lose that prefix. */
static void bare_names(const seq2seq_desc *d, const seq2seq_cfg *m, hfx_weights *w) {
    static const hfx_weight_rename top[] = {{"model.", ""}, {NULL, NULL}};
    const seq2seq_layout *L = d->layout;
    if (d->head != S2S_HEAD_NONE || strncmp(L->dec_stack, "model.", 6) != 0) return;
    char probe[192], layer[64];
    snprintf(layer, sizeof layer, L->layer, (long long)0);
    snprintf(probe, sizeof probe, "%s.%s.%s.weight", L->dec_stack, layer, L->self_norm);
    if (m->dec_layers > 0 && !hfx_weight_exists(w, probe) && hfx_weight_exists(w, probe + 6)) w->rename = top;
}

/* The bound of the lengths the family names itself (the encoder's in a decoder component, the
 * decoder's in a plain forward): the sequence's, which the export config's dynamic_shapes sets
 * (a format that plans memory at the largest size needs one). */
static int64_t length_bound(const hfx_graph *g, const hfx_build_opts *o) {
    hfx_dim d = hfx_dim_is_const(o->source_seq) && o->source_seq.c ? o->source_seq : o->seq;
    if (d.n == 1 && d.c == 0 && d.coef[0] == 1) return g->symbols[d.sym[0]].max;
    return INT32_MAX;
}

/* A waveform encoder's frames at most: those of the samples' bound (the export's sequence axis before a decode
 * step fixed it). */
static int64_t frames_bound(const hfx_graph *g, const hfx_build_opts *o) {
    hfx_dim d = o->source_seq;
    return hfx_s2s_waveform_frames(d.n == 1 && d.c == 0 && d.coef[0] == 1 ? g->symbols[d.sym[0]].max : INT32_MAX);
}

/* The decoder's length: at most the bound above, and at most its position table's rows where it
 * has one (Whisper's max_target_positions: a sequence past it has no position). */
static int64_t decoder_bound(const s2s_ctx *c) {
    int64_t bound = length_bound(c->g, c->o), rows = c->m->max_position + c->d->offset;
    bool table = c->d->positions == POS_LEARNED || c->d->positions == POS_SINUSOID_TABLE;
    return table && rows < bound ? rows : bound;
}

/* Every decoder layer's cross-attention keys and values [B,heads,enc_len,hd] of the encoder's output
 * `enc`, as outputs present.{i}.encoder.key / .value (the encoder of a stateless multi-token decode). */
static void encoder_cross_cache(s2s_ctx *c, hfx_value *enc) {
    const seq2seq_layout *L = c->d->layout;
    char p[192], name[128];
    const hfx_state_naming optimum = {.io = HFX_IO_OPTIMUM, .encoder_decoder = true}; /* genai's names, whatever io */
    for (int64_t i = 0; i < c->m->dec_layers && !c->g->failed; i++) {
        layer_name(c, p, sizeof p, L->dec_stack, i, L->cross_attn);
        for (int j = 1; j <= 2; j++) {
            hfx_state_name(&optimum, i, j == 1 ? HFX_PART_CROSS_KEY : HFX_PART_CROSS_VALUE, HFX_NAME_OUTPUT, name,
                           sizeof name);
            hfx_graph_output(c->g, project(c, enc, p, j, c->m->dec_heads, c->m->dec_hd), name);
        }
    }
}

/* The encoder's graph (its output, and the cross-attention cache where the format computes it
 * there), or the whole forward pass (encoder, decoder over decoder_input_ids, head). */
static void build_encoder_or_forward(s2s_ctx *c, hfx_value **outs, int *states, bool encoder, bool cross_in_encoder,
                                     bool symbolic) {
    hfx_graph *g = c->g;
    const seq2seq_desc *d = c->d;
    const seq2seq_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    hfx_dim bs[2] = {o->batch, o->seq};
    hfx_value *ids = NULL, *mask = NULL, *enc;
    if (d->source == SRC_LOG_MEL) {
        hfx_dim dims[3] = {o->batch, hfx_dim_const(m->mels), hfx_dim_const(2 * m->source_positions)};
        enc = hfx_s2s_encode_log_mel(c, hfx_graph_input(g, "input_features", o->dtype, 3, dims));
    } else if (d->source == SRC_WAVEFORM) {
        hfx_value *values = hfx_graph_input(g, "input_values", o->dtype, 2, bs);
        enc = hfx_s2s_encode_waveform(c, values, hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs), &mask);
    } else if (d->source == SRC_IMAGE_TEXT) { /* the caller's embeddings (embed_tokens' and the image's) */
        hfx_value *x = hfx_graph_input(g, "inputs_embeds", o->dtype, 3, (hfx_dim[]){o->batch, o->seq,
                                                                                   hfx_dim_const(m->hidden)});
        mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
        enc = hfx_s2s_encoder_layers(c, embedded(c, x, x, NULL, d->layout->enc_stack), hfx_s2s_padding_bias(c, mask));
        char own[96];
        snprintf(own, sizeof own, "%s.embed_tokens.weight", d->layout->enc_stack);
        hfx_weight_ignore(c->w, own); /* the table: embed_tokens' */
        hfx_weight_ignore(c->w, d->layout->shared);
    } else {
        ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
        mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
        enc = encode(c, table(c, 0), ids, mask);
    }
    if (encoder || d->head == S2S_HEAD_ENCODER) {
        hfx_graph_output(g, enc, "last_hidden_state");
        if (d->source == SRC_WAVEFORM) /* what the decoder masks its cross-attention by */
            hfx_graph_output(g, mask, "encoder_attention_mask");
        hfx_weights_ignore_stack(c->w, d->layout->dec_stack);
        if (cross_in_encoder) encoder_cross_cache(c, enc);
        hfx_weight_ignore(c->w, d->layout->head);
        hfx_weight_ignore(c->w, "final_logits_bias");
    } else {
        dec_state s = {enc, NULL, mask ? hfx_s2s_padding_bias(c, mask) : hfx_s2s_no_mask(c, m->source_positions), NULL, NULL,
                       NULL, o->seq, outs, states, NULL, -1, NULL, NULL, NULL};
        hfx_value *dec_table = table(c, 1);
        if (d->head == S2S_HEAD_CLASSIFIER) {
            hfx_graph_output(g, classify(c, decode(c, &s, dec_table, shift_right(c, ids), NULL), ids), "logits");
        } else {
            hfx_dim dec_len = symbolic ? hfx_dim_sym(hfx_graph_symbol(g, "decoder_sequence_length", 1, decoder_bound(c)))
                                       : o->seq;
            hfx_value *dec_ids = hfx_graph_input(g, "decoder_input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, dec_len});
            hfx_value *x = decode(c, &s, dec_table, dec_ids, NULL);
            if (d->head == S2S_HEAD_NONE) hfx_graph_output(g, x, "last_hidden_state");
            else hfx_graph_output(g, lm_logits(c, x, dec_table), "logits");
        }
        hfx_graph_output(g, enc, "encoder_last_hidden_state");
    }
}

/* The decoder's cache outputs. optimum's order: layer by layer, self then cross; the seed's: every
 * layer's self-attention cache, then every layer's cross-attention cache. */
static void write_decoder_caches(s2s_ctx *c, hfx_value **outs, int *states, bool reads_cross, bool one_graph) {
    hfx_graph *g = c->g;
    const seq2seq_cfg *m = c->m;
    bool seed = c->o->io == HFX_IO_SEED;
    int group_parts = seed ? CROSS_K : DEC_PARTS;
    for (int group = 0; group < (seed ? 2 : 1); group++)
        for (int64_t i = 0; i < m->dec_layers && !g->failed; i++)
            for (int p = group * group_parts; p < (group + 1) * group_parts; p++) {
                char name[128], state[128];
                bool cross = p >= CROSS_K;
                if ((p == SELF_N || p == CROSS_N) && !seed_static(c)) continue;
                if (cross && reads_cross && !seed) continue; /* read only: the prefill returned it */
                cache_name(c, name, sizeof name, i, p, AS_OUTPUT);
                hfx_value *v = outs[DEC_PARTS * i + p];
                if (cross && one_graph) /* kept where the first call put it */
                    hfx_state_write(g, hfx_graph_state(g, name, HFX_STATE_ONCE, 2), v, name);
                else if (cross && seed && !reads_cross && !seed_static(c)) /* its prefill starts its cache */
                    hfx_state_write(g, hfx_graph_state(g, cache_name(c, state, sizeof state, i, p, AS_STATE),
                                                       HFX_STATE_REPLACE, 2), v, name);
                else if (cross && !seed) hfx_graph_output(g, v, name);
                else hfx_state_write(g, states[DEC_PARTS * i + p], v, name);
            }
}

/* The caches a decoder step reads up front, and the count of tokens before its own: an optimum static cache's first
 * slot written (its cache_position input), the seed's layer-0 counter (transformers' get_seq_length; its slots then
 * the queries'), a growing cache's length; NULL: none (a prefill). */
static hfx_value *read_caches(s2s_ctx *c, dec_state *s, hfx_value **seed_in, hfx_value *ids, bool has_past) {
    hfx_graph *g = c->g;
    const hfx_build_opts *o = c->o;
    bool seed = o->io == HFX_IO_SEED;
    if (seed_static(c)) {
        read_seed_cache(c, s, seed_in);
        hfx_value *past = seed_in[SELF_N];
        s->cache_position = hfx_range(g, past, hfx_op2(g, HFX_OP_ADD, past, hfx_dim_of(g, ids, 1)), hfx_const_i64(g, 1),
                                      ids->dims[1]);
        return past;
    }
    if (o->cache == HFX_CACHE_STATIC) {
        s->cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &ids->dims[1]);
        return hfx_gather(g, s->cache_position, hfx_const_i64(g, 0), 0); /* the first slot written */
    }
    if (has_past && seed) {
        read_seed_cache(c, s, seed_in);
        return hfx_dim_of(g, seed_in[SELF_K], 2);
    }
    if (has_past) {
        s->past_key0 = read_past(c, 0, SELF_K, &s->past_key0_state);
        return hfx_dim_of(g, s->past_key0, 2);
    }
    return NULL;
}

/* A generation component of the decoder: the prefill (which computes the cross-attention cache) or
 * a step (which reads it), or one graph for both. */
static void build_decoder_step(s2s_ctx *c, hfx_value **outs, int *states, hfx_value **seed_in, bool one_graph,
                               bool symbolic) {
    hfx_graph *g = c->g;
    const seq2seq_desc *d = c->d;
    const seq2seq_cfg *m = c->m;
    const hfx_build_opts *o = c->o;
    /* a decode step reads the cross-attention cache the prefill returned; one graph computes it */
    bool has_past = o->cache == HFX_CACHE_DYNAMIC && o->has_past,
         reads_cross = o->reads_state && !(one_graph && o->stateful);
    /* the encoder's length: its own symbol, or the sample's length in a static export (Moonshine: its frames) */
    bool frames_fixed = d->source == SRC_WAVEFORM && hfx_dim_is_const(o->source_seq);
    hfx_dim enc_len = d->source == SRC_LOG_MEL ? hfx_dim_const(m->source_positions)
                      : frames_fixed ? hfx_dim_const(hfx_s2s_waveform_frames(o->source_seq.c))
                      : symbolic || d->source == SRC_WAVEFORM
                          ? hfx_dim_sym(hfx_graph_symbol(g, "encoder_sequence_length", 1,
                                                         d->source == SRC_WAVEFORM ? frames_bound(g, o)
                                                                                   : length_bound(g, o)))
                          : o->source_seq;
    /* a fixed-shape prefill takes the decoder's one start token (the sample's length is the sources');
     * Whisper's, its prompt (start, language, task, no-timestamps): the sample's length */
    hfx_dim seq = symbolic || reads_cross || d->source == SRC_LOG_MEL ? o->seq : hfx_dim_const(1);
    if (d->source == SRC_WAVEFORM && !hfx_dim_is_const(seq)) { /* the export's sequence is the samples: not these */
        int64_t bound = decoder_bound(c); /* ... and where the cache's length is fixed, at most that */
        if (hfx_dim_is_const(o->max_cache) && o->max_cache.c > 0 && o->max_cache.c < bound) bound = o->max_cache.c;
        seq = hfx_dim_sym(hfx_graph_symbol(g, "decoder_sequence_length", 1, bound));
    }
    /* the seed's names and order: its forward's keyword arguments, the encoder's output among them
     * (its decode only passes that through: the cross-attention cache is in its cache input) */
    bool seed = o->io == HFX_IO_SEED;
    if (seed) g->state_holder = HFX_HOLDER_ENCODER_DECODER; /* its caches, declared below */
    hfx_value *ids = NULL, *enc_mask = NULL, *enc = NULL, *seed_enc = NULL, *self_mask = NULL;
    hfx_dim ids_dims[2] = {o->batch, seq}, mask_dims[2] = {o->batch, enc_len},
            enc_dims[3] = {o->batch, enc_len, hfx_dim_const(m->hidden)};
    if (!seed) ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, ids_dims);
    if (d->source != SRC_LOG_MEL) /* Whisper's sources have no padding */
        enc_mask = hfx_graph_input(g, seed ? "attention_mask" : "encoder_attention_mask", HFX_DTYPE_I64, 2, mask_dims);
    if (seed) {
        ids = hfx_graph_input(g, "decoder_input_ids", HFX_DTYPE_I64, 2, ids_dims);
        if (seed_static(c) && (reads_cross || d->source != SRC_LOG_MEL)) /* (a Whisper prompt's: none, causal) */
            self_mask = hfx_graph_input(g, "decoder_attention_mask", HFX_DTYPE_BOOL, 4,
                                        (hfx_dim[]){o->batch, hfx_dim_const(1), seq, o->max_cache});
        seed_enc = hfx_graph_input(g, "encoder_outputs.last_hidden_state", o->dtype, 3, enc_dims);
        if (!reads_cross) enc = seed_enc;
    } else if (!reads_cross) {
        enc = hfx_graph_input(g, "encoder_hidden_states", o->dtype, 3, enc_dims);
    }
    dec_state s = {.enc = enc,
                   .self_bias = self_mask ? hfx_where(g, self_mask, c->zero, c->lowest) : NULL,
                   .cross_bias = enc_mask ? hfx_s2s_padding_bias(c, enc_mask) : hfx_s2s_no_mask(c, m->source_positions),
                   .enc_len = enc_len, .out = outs, .state = states, .past_key0_state = -1};
    hfx_value *past = read_caches(c, &s, seed_in, ids, has_past);
    hfx_weights_ignore_stack(c->w, d->layout->enc_stack);
    hfx_value *dec_table = table(c, 1);
    hfx_value *x = decode(c, &s, dec_table, ids, past);
    if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX);
    hfx_graph_output(g, lm_logits(c, x, dec_table), "logits");
    write_decoder_caches(c, outs, states, reads_cross, one_graph);
    if (seed) /* passed through, as the seed's Seq2SeqLMOutput returns it */
        hfx_graph_output(g, hfx_op2(g, HFX_OP_ADD, seed_enc, hfx_const_scalar(g, o->dtype, 0.0)),
                         "encoder_last_hidden_state");
}

/* Florence-2's image_encoder: pixel_values [N, channels, height, width] (the processor's size) → image_features
 * [N, 1 + tokens, hidden]; the language model is the other components'. */
static void build_image_encoder(s2s_ctx *c, int64_t height, int64_t width) {
    const seq2seq_layout *L = c->d->layout;
    const hfx_davit *t = &c->m->davit;
    hfx_graph *g = c->g;
    hfx_value *px = hfx_graph_input(g, "pixel_values", c->o->dtype, 4,
                                    (hfx_dim[]){c->o->batch, hfx_dim_const(t->in_channels), hfx_dim_const(height),
                                                hfx_dim_const(width)});
    const char *tower = hfx_arena_printf(g->arena, "%s.", L->vision_tower);
    const char *projector = hfx_arena_printf(g->arena, "%s.", L->projector);
    if (!tower || !projector) {
        hfx_graph_fail(g, HFX_ERR_NOMEM, "out of memory");
        return;
    }
    hfx_graph_output(g, hfx_florence2_features(t, g, c->w, tower, projector, px), "image_features");
}

/* embed_tokens: input_ids [B,S] → the encoder's token embeddings inputs_embeds [B,S,hidden] (scaled as the encoder
 * scales them), over which the caller writes the image features. */
static void build_embed_tokens(s2s_ctx *c) {
    hfx_value *ids = hfx_graph_input(c->g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){c->o->batch, c->o->seq});
    hfx_graph_output(c->g, token_embeddings(c, table(c, 0), ids), "inputs_embeds");
}

/* The layouts the family does not write for this model (HFX_ERR_UNSUPPORTED, naming what to export instead). */
static hfx_status refused(const seq2seq_desc *d, const hfx_build_opts *o, bool one_graph, hfx_error *err) {
    if (one_graph && o->cache == HFX_CACHE_STATIC)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: a multi-token decode of an encoder-decoder model keeps a "
                        "growing self-attention cache; export a static cache as encoder, prefill and decode",
                        d->architecture);
    if (o->io == HFX_IO_SEED && d->source == SRC_WAVEFORM)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\": transformers.exporters has no profile for it (its "
                        "decoder would take the samples' attention_mask); export io \"optimum\"", d->architecture);
    if (d->source == SRC_IMAGE_TEXT && o->io == HFX_IO_SEED)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" is not written for vision encoder-decoders "
                        "(transformers.exporters decomposes Florence-2 into its lm_head and decode only); export io "
                        "\"optimum\"", d->architecture);
    return HFX_OK;
}

/* The image Florence-2's processor makes (preprocessor_config.json's size, else its 768 × 768), within what the tower
 * takes. */
static hfx_status image_size(const hfx_checkpoint *ck, const seq2seq_cfg *m, int64_t *height, int64_t *width,
                             hfx_error *err) {
    int64_t gh, gw;
    hfx_status st = hfx_processor_image_size(ck, height, width, err);
    if (st) return st;
    if (!*height) *height = *width = 768;
    if (!hfx_davit_grid(&m->davit, *height, *width, &gh, &gw))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: images of %lld × %lld pixels (preprocessor_config.json's size, else "
                        "768) are smaller than a convolution of the vision tower (config.json's vision_config)",
                        hfx_checkpoint_dir(ck), (long long)*height, (long long)*width);
    if (gh > m->davit.positions || gw > m->davit.positions)
        return hfx_fail(err, HFX_ERR_INVALID, "%s/config.json: vision_config.max_position_embeddings %lld: the vision "
                        "tower's last grid is %lld × %lld for images of %lld × %lld pixels", hfx_checkpoint_dir(ck),
                        (long long)m->davit.positions, (long long)gh, (long long)gw, (long long)*height,
                        (long long)*width);
    return HFX_OK;
}

static hfx_status seq2seq_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                                hfx_graph *g, hfx_error *err) {
    const seq2seq_desc *d = desc_;
    const seq2seq_cfg *m = cfg_;
    const char *component = o->component ? o->component : "model";
    bool encoder = strcmp(component, "encoder") == 0, forward = strcmp(component, "model") == 0;
    /* one decoder for prompt and steps: the cross-attention cache computed by the encoder, or by the
     * decoder's first call where the format keeps it inside */
    bool one_graph = strcmp(component, "decoder") == 0, cross_in_encoder = encoder && o->one_graph && !o->stateful;
    bool image = strcmp(component, "image_encoder") == 0, embeds = strcmp(component, "embed_tokens") == 0;
    bool vision = d->source == SRC_IMAGE_TEXT; /* (its whole model: the dry run that checks every tensor) */
    hfx_status st = refused(d, o, one_graph, err);
    if (st) return st;
    int64_t height = 0, width = 0;
    if ((image || (vision && forward)) && (st = image_size(ck, m, &height, &width, err))) return st;
    if ((encoder || forward) && d->source == SRC_WAVEFORM &&
        (st = hfx_samples_at_least(g, o->seq, hfx_s2s_waveform_receptive_field(), "Moonshine's convolutions", err)))
        return st;
    hfx_weights w;
    if ((st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err))) return st;
    bare_names(d, m, &w);
    size_t n_out = (size_t)m->dec_layers * DEC_PARTS;
    hfx_value **outs = calloc(n_out, sizeof *outs), **seed_in = calloc(n_out, sizeof *seed_in);
    int *states = calloc(n_out, sizeof *states);
    if (!outs || !states || !seed_in) {
        free(outs);
        free(seed_in);
        free(states);
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    s2s_ctx c = {g, &w, d, m, o, hfx_const_f32(g, -FLT_MAX), hfx_const_f32(g, 0.0f)};
    bool symbolic = !hfx_dim_is_const(o->seq) || !hfx_dim_is_const(o->batch);

    const seq2seq_layout *L = d->layout;
    if (image || (vision && forward)) build_image_encoder(&c, height, width);
    if (embeds || (vision && forward)) build_embed_tokens(&c);
    if (image) { /* the language model is the other components' */
        hfx_weights_ignore_stack(&w, L->enc_stack);
        hfx_weights_ignore_stack(&w, L->dec_stack);
        hfx_weight_ignore(&w, L->shared);
        hfx_weight_ignore(&w, L->head);
    } else if (embeds) {
        hfx_weights_ignore_rest(&w);
    } else {
        if (vision && !forward) { /* the image encoder's */
            hfx_weights_ignore_stack(&w, L->vision_tower);
            hfx_weights_ignore_stack(&w, L->projector);
        }
        if (encoder || forward) build_encoder_or_forward(&c, outs, states, encoder, cross_in_encoder, symbolic);
        else build_decoder_step(&c, outs, states, seed_in, one_graph, symbolic);
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    free(outs);
    free(seed_in);
    free(states);
    return st;
}

static int seq2seq_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const seq2seq_cfg *m = cfg_;
    for (int64_t i = 0; i < m->dec_layers && i < max; i++)
        layers[i] = (hfx_layer_cache){m->dec_heads, m->dec_hd, m->dec_hd, 0, NULL, 0, {{0}}, 0};
    return (int)m->dec_layers;
}

/* transformers' forward of a generating encoder-decoder, by its sources: its keywords in order (the seed profile's
 * decoder graphs take encoder_outputs and the EncoderDecoderCache), returning Seq2SeqLMOutput. */
static hfx_torch_signature seq2seq_torch_signature(const void *desc) {
    const seq2seq_desc *d = desc;
#define DECODER_ARGS "decoder_input_ids", "decoder_attention_mask", "encoder_outputs", "cache", NULL
    static const char *const tokens[] = {"input_ids", "attention_mask", DECODER_ARGS};
    static const char *const features[] = {"input_features", "attention_mask", DECODER_ARGS};
    static const char *const samples[] = {"input_values", "attention_mask", DECODER_ARGS};
#undef DECODER_ARGS
    return (hfx_torch_signature){.args = d->source == SRC_LOG_MEL    ? features
                                         : d->source == SRC_WAVEFORM ? samples
                                                                     : tokens,
                                 .output_class = "Seq2SeqLMOutput"};
}

/* Each generation component's call: the encoder's is its submodule's (get_encoder()(**sources) returns the stack's
 * ModelOutput, which the decoder graphs take as encoder_outputs), the others the model's forward. */
static hfx_torch_signature seq2seq_component_signature(const void *desc, const char *component) {
    const seq2seq_desc *d = desc;
    hfx_torch_signature sig = seq2seq_torch_signature(desc);
    const char *encoder_output = d->layout->encoder_output ? d->layout->encoder_output : "BaseModelOutput";
    if (!strcmp(component, "encoder")) sig.output_class = encoder_output;
    else sig.encoder_outputs = encoder_output;
    return sig;
}

static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
static const hfx_component generation[] = {
    {.name = "encoder", .role = "encoder", .logits_to_keep = -1},
    {.name = "prefill", .role = "prefill", .logits_to_keep = 1},
    {.name = "decode", .role = "decode", .single_token = true, .reads_state = true, .logits_to_keep = 1},
};
/* a multi-token decode: the decoder's logits at every position, as onnxruntime-genai sizes them */
static const hfx_component one_graph[] = {
    {.name = "encoder", .role = "encoder", .logits_to_keep = -1},
    {.name = "decoder", .role = "decode", .reads_state = true, .logits_to_keep = 0},
};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", NULL};

/* What the encoder-decoder families share; a generating one has a cache and every export kind. */
#define SEQ2SEQ_COMMON .cfg_size = sizeof(seq2seq_cfg), .parse = hfx_s2s_parse, .build_forward = seq2seq_build
#define SEQ2SEQ_GENERATING                                                                                   \
    SEQ2SEQ_COMMON, .cache_layers = seq2seq_cache_layers, .torch_signature = seq2seq_torch_signature,          \
    .component_signature = seq2seq_component_signature,                                                     \
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}, [HFX_EXPORT_GENERATION] = {generation, 3},              \
                [HFX_EXPORT_GENERATION_ONE_GRAPH] = {one_graph, 2}}

const hfx_arch_family hfx_seq2seq_family = {
    SEQ2SEQ_GENERATING,
    .sequence_inputs = sequence_inputs,
    .genai = HFX_GENAI_NONE,
};

static const char *const audio_inputs[] = {"input_features", "input_ids", NULL}; /* input_ids: the decoder's */

const hfx_arch_family hfx_seq2seq_audio_family = {
    SEQ2SEQ_GENERATING,
    .sequence_inputs = audio_inputs,
    .genai = HFX_GENAI_WHISPER,
};

/* the samples' axis: the decoder's tokens (input_ids) have their own, decoder_sequence_length */
static const char *const waveform_inputs[] = {"input_values", "attention_mask", NULL};

const hfx_arch_family hfx_seq2seq_waveform_family = {
    SEQ2SEQ_GENERATING,
    .sequence_inputs = waveform_inputs,
    .genai = HFX_GENAI_NONE,
};

/* Florence-2: the image encoder and the token embeddings before the encoder, whose inputs_embeds the caller makes
 * of them (the VLM family's split) */
static const hfx_component vision_generation[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1},
    {.name = "encoder", .role = "encoder", .logits_to_keep = -1},
    {.name = "prefill", .role = "prefill", .logits_to_keep = 1},
    {.name = "decode", .role = "decode", .single_token = true, .reads_state = true, .logits_to_keep = 1},
};
static const hfx_component vision_one_graph[] = {
    {.name = "image_encoder", .role = "modality_encoder", .logits_to_keep = -1},
    {.name = "embed_tokens", .role = "embed_tokens", .logits_to_keep = -1},
    {.name = "encoder", .role = "encoder", .logits_to_keep = -1},
    {.name = "decoder", .role = "decode", .reads_state = true, .logits_to_keep = 0},
};

const hfx_arch_family hfx_seq2seq_vision_family = {
    SEQ2SEQ_COMMON, .cache_layers = seq2seq_cache_layers,
    .exports = {[HFX_EXPORT_GENERATION] = {vision_generation, 5}, [HFX_EXPORT_GENERATION_ONE_GRAPH] = {vision_one_graph, 4}},
    .sequence_inputs = sequence_inputs,
    .torch_signature = seq2seq_torch_signature,
    .genai = HFX_GENAI_NONE,
};

/* The forward-only models' inputs and outputs: a classifier's (the sources), a bare model's (its encoder's inputs
 * and decoder_input_ids), an encoder's. */
static const char *const *forward_inputs(const void *cfg_) {
    const seq2seq_cfg *m = cfg_;
    return m->source == SRC_LOG_MEL ? audio_inputs : m->source == SRC_WAVEFORM ? waveform_inputs : sequence_inputs;
}

static hfx_torch_signature forward_torch_signature(const void *desc_) {
    const seq2seq_desc *d = desc_;
    static const char *const sources[] = {"input_ids", "attention_mask", NULL};
    static const char *const tokens[] = {"input_ids", "attention_mask", "decoder_input_ids", NULL};
    static const char *const features[] = {"input_features", "decoder_input_ids", NULL};
    static const char *const samples[] = {"input_values", "attention_mask", "decoder_input_ids", NULL};
    if (d->head == S2S_HEAD_CLASSIFIER)
        return (hfx_torch_signature){.args = sources, .output_class = "Seq2SeqSequenceClassifierOutput"};
    if (d->head == S2S_HEAD_ENCODER) return (hfx_torch_signature){.args = sources, .output_class = "BaseModelOutput"};
    return (hfx_torch_signature){.args = d->source == SRC_LOG_MEL    ? features
                                         : d->source == SRC_WAVEFORM ? samples
                                                                     : tokens,
                                 .output_class = "Seq2SeqModelOutput"};
}

const hfx_arch_family hfx_seq2seq_forward_family = {
    SEQ2SEQ_COMMON, .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}},
    .sequence_inputs = sequence_inputs,
    .sequence_inputs_of = forward_inputs,
    .torch_signature = forward_torch_signature,
    .genai = HFX_GENAI_NONE,
};

#define BART_LIKE .layout = &bart_layout, .positions = POS_LEARNED, .offset = 2, .embed_norm = true, .logits_bias = true
#define T5_LIKE .layout = &t5_layout, .positions = POS_RELATIVE, .pre_norm = true
const seq2seq_desc hfx_bart = {"BartForConditionalGeneration", BART_LIKE};
const seq2seq_desc hfx_mbart = {"MBartForConditionalGeneration", BART_LIKE, .pre_norm = true};
const seq2seq_desc hfx_bart_classifier = {"BartForSequenceClassification", .layout = &bart_layout, .positions = POS_LEARNED,
                                          .offset = 2, .embed_norm = true, .head = S2S_HEAD_CLASSIFIER};
const seq2seq_desc hfx_mbart_classifier = {"MBartForSequenceClassification", .layout = &bart_layout, .positions = POS_LEARNED,
                                           .offset = 2, .pre_norm = true, .embed_norm = true,
                                           .head = S2S_HEAD_CLASSIFIER};
const seq2seq_desc hfx_marian = {"MarianMTModel", .layout = &bart_layout, .positions = POS_SINUSOID_TABLE,
                                 .logits_bias = true};
const seq2seq_desc hfx_m2m100 = {"M2M100ForConditionalGeneration", .layout = &bart_layout, .positions = POS_SINUSOID,
                                 .pre_norm = true};
const seq2seq_desc hfx_t5 = {"T5ForConditionalGeneration", T5_LIKE, .output_scale = true};
const seq2seq_desc hfx_mt5 = {"MT5ForConditionalGeneration", T5_LIKE};
const seq2seq_desc hfx_umt5 = {"UMT5ForConditionalGeneration", T5_LIKE, .bias_every_layer = true, .output_scale = true};
const seq2seq_desc hfx_whisper = {"WhisperForConditionalGeneration", .layout = &whisper_layout, .positions = POS_LEARNED,
                                  .pre_norm = true, .source = SRC_LOG_MEL};
const seq2seq_desc hfx_florence2 = {"Florence2ForConditionalGeneration", .layout = &florence2_layout,
                                    .positions = POS_LEARNED, .offset = 2, .embed_norm = true, .source = SRC_IMAGE_TEXT};
const seq2seq_desc hfx_moonshine = {"MoonshineForConditionalGeneration", .layout = &moonshine_layout,
                                    .positions = POS_ROTARY, .pre_norm = true, .source = SRC_WAVEFORM};

/* The bare models and T5's encoders: their lineage's descriptor, another head */
const seq2seq_desc hfx_bart_model = {"BartModel", BART_LIKE, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_mbart_model = {"MBartModel", BART_LIKE, .pre_norm = true, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_marian_model = {"MarianModel", .layout = &bart_layout, .positions = POS_SINUSOID_TABLE,
                                       .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_m2m100_model = {"M2M100Model", .layout = &bart_layout, .positions = POS_SINUSOID, .pre_norm = true,
                                       .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_t5_model = {"T5Model", T5_LIKE, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_mt5_model = {"MT5Model", T5_LIKE, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_umt5_model = {"UMT5Model", T5_LIKE, .bias_every_layer = true, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_t5_encoder = {"T5EncoderModel", T5_LIKE, .head = S2S_HEAD_ENCODER};
const seq2seq_desc hfx_mt5_encoder = {"MT5EncoderModel", T5_LIKE, .head = S2S_HEAD_ENCODER};
const seq2seq_desc hfx_umt5_encoder = {"UMT5EncoderModel", T5_LIKE, .bias_every_layer = true, .head = S2S_HEAD_ENCODER};
const seq2seq_desc hfx_whisper_model = {"WhisperModel", .layout = &whisper_layout, .positions = POS_LEARNED,
                                        .pre_norm = true, .source = SRC_LOG_MEL, .head = S2S_HEAD_NONE};
const seq2seq_desc hfx_moonshine_model = {"MoonshineModel", .layout = &moonshine_layout, .positions = POS_ROTARY,
                                          .pre_norm = true, .source = SRC_WAVEFORM, .head = S2S_HEAD_NONE};
