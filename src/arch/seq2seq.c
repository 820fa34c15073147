/* The encoder-decoder family: BART and its descendants (mBART, Marian, M2M100/NLLB) as one
 * template and a descriptor per model. An encoder of bidirectional layers, a decoder of causal
 * self-attention, cross-attention over the encoder's output and an MLP, the LM head (with
 * final_logits_bias where the model has one).
 *
 * Components (docs/GENERATION.md, "Encoder-decoder models"): a plain forward (`model`: input_ids
 * and attention_mask for the encoder, decoder_input_ids, logits out), and for generation the
 * `encoder`, the decoder's `prefill` (the self-attention cache started, the cross-attention keys
 * and values computed once from encoder_hidden_states) and its `decode` step (the self-attention
 * cache grown or written at cache_position, the cross-attention cache read only). Names follow
 * optimum's seq2seq layout: past_key_values.{i}.decoder.key / present.{i}.encoder.value. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/nn.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef enum {
    POS_LEARNED,         /* a table of max_position_embeddings + offset rows (BART, mBART) */
    POS_SINUSOID_TABLE,  /* a sinusoid table (Marian): the checkpoint's when it stores one, else computed
                            as transformers makes it (float64, then float32) */
    POS_SINUSOID         /* computed: sin of the first half, cos of the second, positions counting real tokens
                            from padding_idx + 1 and zero at padding (M2M100, NLLB) */
} position_kind;

/* How one model differs from BART. */
typedef struct seq2seq_desc {
    const char *architecture;
    position_kind positions;
    int64_t offset;   /* added to a position before the table lookup (BART's 2) */
    bool pre_norm;    /* norms before each block and a final norm after the last layer (mBART, M2M100) */
    bool embed_norm;  /* layernorm_embedding after the embeddings (BART, mBART) */
    bool logits_bias; /* final_logits_bias added to the logits (BART, mBART, Marian) */
} seq2seq_desc;

typedef struct seq2seq_cfg {
    int64_t vocab, dec_vocab, hidden, enc_layers, dec_layers, enc_heads, dec_heads, enc_ffn, dec_ffn;
    int64_t max_position, pad;
    hfx_activation act;
    bool scale_embedding, tied, shared; /* shared: share_encoder_decoder_embeddings (Marian), which needs
                                           one vocabulary */
    float inv_freq[4096];               /* POS_SINUSOID: exp(k·−ln(10⁴)/(half − 1)) in float32, k < half */
} seq2seq_cfg;

static const float LN_EPS = 1e-5f; /* nn.LayerNorm's default: every norm of these models */

static hfx_status seq2seq_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    (void)arena;
    const seq2seq_desc *d = desc_;
    seq2seq_cfg *m = cfg;
    const char *act;
    hfx_status st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, "d_model", 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, "encoder_layers", 0, 4096, &m->enc_layers, err)) ||
        (st = hfx_cfg_int_in(c, "decoder_layers", 1, 4096, &m->dec_layers, err)) ||
        (st = hfx_cfg_int_in(c, "encoder_attention_heads", 1, 4096, &m->enc_heads, err)) ||
        (st = hfx_cfg_int_in(c, "decoder_attention_heads", 1, 4096, &m->dec_heads, err)) ||
        (st = hfx_cfg_int_in(c, "encoder_ffn_dim", 1, 1 << 24, &m->enc_ffn, err)) ||
        (st = hfx_cfg_int_in(c, "decoder_ffn_dim", 1, 1 << 24, &m->dec_ffn, err)) ||
        (st = hfx_cfg_int_in(c, "max_position_embeddings", 1, 1 << 24, &m->max_position, err)) ||
        (st = hfx_cfg_str_or(c, "activation_function", "gelu", &act, err)) ||
        (st = hfx_cfg_bool_or(c, "scale_embedding", false, &m->scale_embedding, err)) ||
        (st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (st = hfx_cfg_bool_or(c, "share_encoder_decoder_embeddings", true, &m->shared, err)) ||
        (st = hfx_cfg_int_in_or(c, "decoder_vocab_size", m->vocab, 1, INT32_MAX, &m->dec_vocab, err)) ||
        (st = hfx_cfg_int_in_or(c, "pad_token_id", 1, 0, INT32_MAX, &m->pad, err)))
        return st;
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: activation_function '%s' is not supported (supported: %s)",
                        c.where, act, hfx_activation_names());
    if (m->hidden % m->enc_heads || m->hidden % m->dec_heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: d_model %lld is not a multiple of the attention heads (%lld, %lld)",
                        c.where, (long long)m->hidden, (long long)m->enc_heads, (long long)m->dec_heads);
    if (m->shared && m->dec_vocab != m->vocab)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: decoder_vocab_size %lld differs from vocab_size %lld with shared "
                        "embeddings", c.where, (long long)m->dec_vocab, (long long)m->vocab);
    if (d->positions == POS_SINUSOID) {
        int64_t half = m->hidden / 2;
        if (half < 2 || half > (int64_t)(sizeof m->inv_freq / sizeof m->inv_freq[0]))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: d_model %lld: sinusoidal positions need 4 ≤ d_model ≤ 8192",
                            c.where, (long long)m->hidden);
        /* torch: exp(arange(half).float() · −(ln 10⁴ / (half − 1))), the factor a float32 scalar */
        float step = (float)(-(log(10000.0) / (double)(half - 1)));
        for (int64_t k = 0; k < half; k++) m->inv_freq[k] = expf((float)k * step);
    }
    return HFX_OK;
}

/* ---- building blocks ---- */

typedef struct s2s_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const seq2seq_desc *d;
    const seq2seq_cfg *m;
    const hfx_build_opts *o;
    hfx_value *lowest, *zero; /* the additive mask's values (f32) */
} s2s_ctx;

/* "<stack>.layers.<i>.<leaf>" (stack "model.encoder" or "model.decoder") into buf. */
static const char *layer_name(char *buf, size_t size, const char *stack, int64_t i, const char *leaf) {
    snprintf(buf, size, "%s.layers.%lld.%s", stack, (long long)i, leaf);
    return buf;
}

/* x·Wᵀ + b with `name`.weight [out, in] and `name`.bias [out]. */
static hfx_value *dense(s2s_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    hfx_value *w = hfx_weight(c->w, 2, (int64_t[]){out, in}, "%s.weight", name);
    hfx_value *b = hfx_weight(c->w, 1, &out, "%s.bias", name);
    return hfx_linear(c->g, x, w, b);
}

static hfx_value *layer_norm(s2s_ctx *c, hfx_value *x, const char *name) {
    int64_t H = c->m->hidden;
    return hfx_layer_norm(c->g, x, hfx_weight(c->w, 1, &H, "%s.weight", name), hfx_weight(c->w, 1, &H, "%s.bias", name),
                          LN_EPS);
}

/* [B,S,heads·hd] → [B,heads,S,hd] */
static hfx_value *split_heads(s2s_ctx *c, hfx_value *x, int64_t heads) {
    int64_t hd = c->m->hidden / heads;
    x = hfx_reshape(c->g, x, 4, (hfx_dim[]){x->dims[0], x->dims[1], hfx_dim_const(heads), hfx_dim_const(hd)});
    return hfx_transpose(c->g, x, 4, (int64_t[]){0, 2, 1, 3});
}

/* The additive bias [B,1,1,T] of a padding mask [B,T]: 0 where the key is real, the float32
 * minimum where it is padding (transformers' create_bidirectional_mask). */
static hfx_value *padding_bias(s2s_ctx *c, hfx_value *mask) {
    hfx_graph *g = c->g;
    hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1);
    return hfx_where(g, keep, c->zero, c->lowest);
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
 * projected by `prefix`.out_proj: [B,S,hidden]. */
static hfx_value *attend(s2s_ctx *c, hfx_value *q, hfx_value *k, hfx_value *v, hfx_value *bias, int64_t heads,
                         const char *prefix) {
    hfx_graph *g = c->g;
    int64_t H = c->m->hidden;
    double scale = 1.0 / sqrt((double)(H / heads));
    hfx_value *a = hfx_attention(g, q, k, v, bias, scale, 0.0, 0);
    a = hfx_transpose(g, a, 4, (int64_t[]){0, 2, 1, 3});
    a = hfx_reshape(g, a, 3, (hfx_dim[]){q->dims[0], q->dims[2], hfx_dim_const(H)});
    char n[192];
    snprintf(n, sizeof n, "%s.out_proj", prefix);
    return dense(c, a, H, H, n);
}

/* fc2(act(fc1(x))) of layer `p` */
static hfx_value *mlp(s2s_ctx *c, hfx_value *x, const char *stack, int64_t i, int64_t ffn) {
    char n[192];
    hfx_value *h = dense(c, x, c->m->hidden, ffn, layer_name(n, sizeof n, stack, i, "fc1"));
    h = hfx_activate(c->g, c->m->act, h);
    return dense(c, h, ffn, c->m->hidden, layer_name(n, sizeof n, stack, i, "fc2"));
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

/* The token embeddings (scaled by √d_model where the config says) plus positions, and the
 * embedding norm: [B,S,hidden]. */
static hfx_value *embed(s2s_ctx *c, hfx_value *table, hfx_value *ids, hfx_value *past, const char *stack) {
    hfx_graph *g = c->g;
    hfx_value *x = hfx_gather(g, table, ids, 0);
    if (c->m->scale_embedding) /* a float32 scalar, as torch multiplies by a Python float */
        x = hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, c->o->dtype, (float)sqrt((double)c->m->hidden)));
    x = hfx_op2(g, HFX_OP_ADD, x, position_embeddings(c, ids, past, stack));
    if (c->d->embed_norm) {
        char n[96];
        snprintf(n, sizeof n, "%s.layernorm_embedding", stack);
        x = layer_norm(c, x, n);
    }
    return x;
}

/* ---- the encoder ---- */

typedef struct self_attn_arg {
    const char *stack;
    int64_t i, heads;
    hfx_value *bias;
} self_attn_arg;

static hfx_value *encoder_attention(s2s_ctx *c, hfx_value *h, void *arg_) {
    self_attn_arg *a = arg_;
    int64_t H = c->m->hidden;
    char n[192], p[160];
    layer_name(p, sizeof p, a->stack, a->i, "self_attn");
    hfx_value *qkv[3];
    static const char *const proj[3] = {"q_proj", "k_proj", "v_proj"};
    for (int j = 0; j < 3; j++) {
        snprintf(n, sizeof n, "%s.%s", p, proj[j]);
        qkv[j] = split_heads(c, dense(c, h, H, H, n), a->heads);
    }
    return attend(c, qkv[0], qkv[1], qkv[2], a->bias, a->heads, p);
}

typedef struct mlp_arg {
    const char *stack;
    int64_t i, ffn;
} mlp_arg;

static hfx_value *mlp_block(s2s_ctx *c, hfx_value *h, void *arg_) {
    mlp_arg *a = arg_;
    return mlp(c, h, a->stack, a->i, a->ffn);
}

/* The encoder's last hidden state [B,S,hidden] for ids and mask [B,S]. */
static hfx_value *encode(s2s_ctx *c, hfx_value *table, hfx_value *ids, hfx_value *mask) {
    const char *stack = "model.encoder";
    hfx_value *x = embed(c, table, ids, NULL, stack);
    hfx_value *bias = padding_bias(c, mask);
    char n[192];
    for (int64_t i = 0; i < c->m->enc_layers && !c->g->failed; i++) {
        self_attn_arg sa = {stack, i, c->m->enc_heads, bias};
        x = residual(c, x, layer_name(n, sizeof n, stack, i, "self_attn_layer_norm"), encoder_attention, &sa);
        mlp_arg ma = {stack, i, c->m->enc_ffn};
        x = residual(c, x, layer_name(n, sizeof n, stack, i, "final_layer_norm"), mlp_block, &ma);
    }
    if (c->d->pre_norm) x = layer_norm(c, x, "model.encoder.layer_norm");
    return x;
}

/* ---- the decoder ---- */

/* What the decoder's layers share: the caches they read and write, the biases. */
typedef struct dec_state {
    hfx_value *enc;           /* encoder_hidden_states [B,Tenc,hidden]; NULL: the cross cache is read */
    hfx_value *self_bias, *cross_bias;
    hfx_value *cache_position; /* static cache: the S slots written */
    hfx_dim enc_len;
    hfx_value **out;          /* per layer: self key, self value, cross key, cross value (outputs) */
    int *state;               /* their state declarations (self parts only) */
    hfx_value *past_key0;     /* a growing cache's layer-0 keys, read before the embeddings: the
                                 positions continue after them */
    int past_key0_state;
} dec_state;

enum { SELF_K, SELF_V, CROSS_K, CROSS_V, DEC_PARTS };
static const char *const part_names[DEC_PARTS] = {"decoder.key", "decoder.value", "encoder.key", "encoder.value"};

/* Layer i's past self-attention keys or values [B,heads,past,hd] (a growing cache), declared as
 * state. */
static hfx_value *read_past(s2s_ctx *c, int64_t i, int part, int *state) {
    const hfx_build_opts *o = c->o;
    char name[128];
    snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, part_names[part]);
    *state = hfx_graph_state(c->g, name, HFX_STATE_APPEND, 2);
    int64_t heads = c->m->dec_heads;
    return hfx_state_read(c->g, *state, name, o->dtype, 4,
                          (hfx_dim[]){o->batch, hfx_dim_const(heads), o->past, hfx_dim_const(c->m->hidden / heads)});
}

/* This step's self-attention keys or values x [B,heads,S,hd] joined with layer i's cache. */
static hfx_value *self_cache(s2s_ctx *c, dec_state *s, int64_t i, hfx_value *x, int part) {
    const hfx_build_opts *o = c->o;
    if (o->cache == HFX_CACHE_NONE) return x;
    hfx_graph *g = c->g;
    char name[128], input[160];
    bool dynamic = o->cache == HFX_CACHE_DYNAMIC;
    int state;
    if (dynamic && o->has_past) {
        hfx_value *past = i == 0 && part == SELF_K ? s->past_key0 : read_past(c, i, part, &state);
        if (i == 0 && part == SELF_K) state = s->past_key0_state;
        x = hfx_concat(g, 2, (hfx_value *[]){past, x}, 2);
    } else {
        snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, part_names[part]);
        state = hfx_graph_state(g, name, dynamic ? HFX_STATE_APPEND : HFX_STATE_WRITE, 2);
    }
    if (!dynamic) {
        snprintf(input, sizeof input, "input.%s", name);
        hfx_value *cache = hfx_state_read(g, state, input, x->dtype, 4, (hfx_dim[]){o->batch, x->dims[1], o->max_cache, x->dims[3]});
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
    int64_t H = c->m->hidden, heads = c->m->dec_heads, i = a->i;
    char n[192], p[160];
    layer_name(p, sizeof p, "model.decoder", i, "self_attn");
    static const char *const proj[3] = {"q_proj", "k_proj", "v_proj"};
    hfx_value *qkv[3];
    for (int j = 0; j < 3; j++) {
        snprintf(n, sizeof n, "%s.%s", p, proj[j]);
        qkv[j] = split_heads(c, dense(c, h, H, H, n), heads);
    }
    hfx_value *k = self_cache(c, a->s, i, qkv[1], SELF_K), *v = self_cache(c, a->s, i, qkv[2], SELF_V);
    if (!a->s->self_bias) { /* every layer's queries and keys sit at the same slots */
        hfx_value *slots = a->s->cache_position;
        if (!slots) { /* past + arange(S): the past is what the cache held before this step */
            hfx_value *len = hfx_dim_of(c->g, qkv[0], 2), *past = hfx_op2(c->g, HFX_OP_SUB, hfx_dim_of(c->g, k, 2), len);
            slots = hfx_range(c->g, past, hfx_dim_of(c->g, k, 2), hfx_const_i64(c->g, 1), qkv[0]->dims[2]);
        }
        a->s->self_bias = causal_bias(c, slots, k);
    }
    return attend(c, qkv[0], k, v, a->s->self_bias, heads, p);
}

static hfx_value *decoder_cross_attention(s2s_ctx *c, hfx_value *h, void *arg_) {
    dec_layer_arg *a = arg_;
    dec_state *s = a->s;
    const hfx_build_opts *o = c->o;
    int64_t H = c->m->hidden, heads = c->m->dec_heads, hd = H / heads, i = a->i;
    hfx_graph *g = c->g;
    char n[192], p[160];
    layer_name(p, sizeof p, "model.decoder", i, "encoder_attn");
    snprintf(n, sizeof n, "%s.q_proj", p);
    hfx_value *q = split_heads(c, dense(c, h, H, H, n), heads), *k, *v;
    if (s->enc) { /* computed once from the encoder's output (and, generating, cached) */
        snprintf(n, sizeof n, "%s.k_proj", p);
        k = split_heads(c, dense(c, s->enc, H, H, n), heads);
        snprintf(n, sizeof n, "%s.v_proj", p);
        v = split_heads(c, dense(c, s->enc, H, H, n), heads);
        if (o->cache != HFX_CACHE_NONE) s->out[DEC_PARTS * i + CROSS_K] = k, s->out[DEC_PARTS * i + CROSS_V] = v;
    } else { /* read from the cache the prefill returned; its projections are not needed here */
        hfx_dim dims[4] = {o->batch, hfx_dim_const(heads), s->enc_len, hfx_dim_const(hd)};
        char name[128];
        snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, part_names[CROSS_K]);
        k = hfx_graph_input(g, name, o->dtype, 4, dims);
        snprintf(name, sizeof name, "past_key_values.%lld.%s", (long long)i, part_names[CROSS_V]);
        v = hfx_graph_input(g, name, o->dtype, 4, dims);
        static const char *const unused[] = {"k_proj.weight", "k_proj.bias", "v_proj.weight", "v_proj.bias"};
        for (size_t u = 0; u < sizeof unused / sizeof unused[0]; u++) {
            snprintf(n, sizeof n, "%s.%s", p, unused[u]);
            hfx_weight_ignore(c->w, n);
        }
    }
    return attend(c, q, k, v, s->cross_bias, heads, p);
}

/* The decoder's last hidden state [B,S,hidden] for ids [B,S]. */
static hfx_value *decode(s2s_ctx *c, dec_state *s, hfx_value *table, hfx_value *ids, hfx_value *past) {
    const char *stack = "model.decoder";
    hfx_value *x = embed(c, table, ids, past, stack);
    char n[192];
    for (int64_t i = 0; i < c->m->dec_layers && !c->g->failed; i++) {
        dec_layer_arg a = {s, i};
        x = residual(c, x, layer_name(n, sizeof n, stack, i, "self_attn_layer_norm"), decoder_self_attention, &a);
        x = residual(c, x, layer_name(n, sizeof n, stack, i, "encoder_attn_layer_norm"), decoder_cross_attention, &a);
        mlp_arg ma = {stack, i, c->m->dec_ffn};
        x = residual(c, x, layer_name(n, sizeof n, stack, i, "final_layer_norm"), mlp_block, &ma);
    }
    if (c->d->pre_norm) x = layer_norm(c, x, "model.decoder.layer_norm");
    return x;
}

/* logits [B,S,dec_vocab] = x·headᵀ (+ final_logits_bias) */
static hfx_value *lm_logits(s2s_ctx *c, hfx_value *x, hfx_value *dec_table) {
    const seq2seq_cfg *m = c->m;
    hfx_value *head = dec_table;
    if (!m->tied) head = hfx_weight(c->w, 2, (int64_t[]){m->dec_vocab, m->hidden}, "lm_head.weight");
    else if (hfx_weight_exists(c->w, "lm_head.weight")) hfx_weight_ignore(c->w, "lm_head.weight");
    hfx_value *bias = NULL;
    if (c->d->logits_bias && hfx_weight_exists(c->w, "final_logits_bias")) /* absent: zeros, as transformers loads it */
        bias = hfx_reshape(c->g, hfx_weight(c->w, 2, (int64_t[]){1, m->dec_vocab}, "final_logits_bias"), 1,
                           (hfx_dim[]){hfx_dim_const(m->dec_vocab)});
    return hfx_linear(c->g, x, head, bias);
}

/* Stack t's table (0 the encoder's, 1 the decoder's): its own (model.encoder.embed_tokens,
 * model.decoder.embed_tokens) where the checkpoint has one — transformers 5 saves them when the ties
 * are off (tie_word_embeddings false, Marian's share_encoder_decoder_embeddings false), older
 * checkpoints as copies — else the shared one, model.shared, which is then not needed. */
static hfx_value *table(s2s_ctx *c, int t) {
    static const char *const own[2] = {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"};
    int64_t rows = t ? c->m->dec_vocab : c->m->vocab;
    bool has_own = hfx_weight_exists(c->w, own[t]);
    if (has_own) hfx_weight_ignore(c->w, "model.shared.weight");
    return hfx_weight(c->w, 2, (int64_t[]){rows, c->m->hidden}, "%s", has_own ? own[t] : "model.shared.weight");
}

/* Weights a component does not read: the other stack's (the encoder's in a decoder component and
 * the other way round), and the head in the encoder. */
static void ignore_stack(s2s_ctx *c, const char *prefix) {
    const hfx_checkpoint *ck = c->w->ck;
    size_t n = strlen(prefix);
    for (size_t t = 0; t < hfx_checkpoint_tensor_count(ck); t++) {
        const char *name = hfx_checkpoint_tensor_at(ck, t)->name;
        if (strncmp(name, prefix, n) == 0) hfx_weight_ignore(c->w, name);
    }
}

/* The bound of the lengths the family names itself (the encoder's in a decoder component, the
 * decoder's in a plain forward): the sequence's, which the export config's dynamic_shapes sets
 * (a format that plans memory at the largest size needs one). */
static int64_t length_bound(const hfx_graph *g, const hfx_build_opts *o) {
    hfx_dim d = hfx_dim_is_const(o->source_seq) && o->source_seq.c ? o->source_seq : o->seq;
    if (d.n == 1 && d.c == 0 && d.coef[0] == 1) return g->symbols[d.sym[0]].max;
    return INT32_MAX;
}

static hfx_status seq2seq_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck, const hfx_build_opts *o,
                                hfx_graph *g, hfx_error *err) {
    const seq2seq_desc *d = desc_;
    const seq2seq_cfg *m = cfg_;
    const char *component = o->component ? o->component : "model";
    bool encoder = strcmp(component, "encoder") == 0, forward = strcmp(component, "model") == 0;
    if (o->io == HFX_IO_SEED && o->cache != HFX_CACHE_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" (transformers.exporters' EncoderDecoderCache) is not "
                        "written for encoder-decoder models yet; export with io \"optimum\"", d->architecture);
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    size_t n_out = (size_t)m->dec_layers * DEC_PARTS;
    hfx_value **outs = calloc(n_out, sizeof *outs);
    int *states = calloc(n_out, sizeof *states);
    if (!outs || !states) {
        free(outs);
        free(states);
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    s2s_ctx c = {g, &w, d, m, o, hfx_const_f32(g, -FLT_MAX), hfx_const_f32(g, 0.0f)};
    bool symbolic = !hfx_dim_is_const(o->seq) || !hfx_dim_is_const(o->batch);
    /* the encoder's length where a decoder component reads its output: its own symbol, or the
     * sample's length in a static export */
    hfx_dim enc_len = symbolic ? hfx_dim_sym(hfx_graph_symbol(g, "encoder_sequence_length", 1, length_bound(g, o)))
                               : o->source_seq;

    if (encoder || forward) {
        hfx_dim bs[2] = {o->batch, o->seq};
        hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
        hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
        hfx_value *enc = encode(&c, table(&c, 0), ids, mask);
        if (encoder) {
            hfx_graph_output(g, enc, "last_hidden_state");
            ignore_stack(&c, "model.decoder.");
            hfx_weight_ignore(&w, "lm_head.weight");
            hfx_weight_ignore(&w, "final_logits_bias");
        } else {
            hfx_dim dec_len = symbolic ? hfx_dim_sym(hfx_graph_symbol(g, "decoder_sequence_length", 1, length_bound(g, o)))
                                       : o->seq;
            hfx_value *dec_ids = hfx_graph_input(g, "decoder_input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, dec_len});
            dec_state s = {enc, NULL, padding_bias(&c, mask), NULL, o->seq, outs, states, NULL, -1};
            hfx_value *dec_table = table(&c, 1);
            hfx_graph_output(g, lm_logits(&c, decode(&c, &s, dec_table, dec_ids, NULL), dec_table), "logits");
            hfx_graph_output(g, enc, "encoder_last_hidden_state");
        }
    } else {
        bool has_past = o->cache == HFX_CACHE_DYNAMIC && o->has_past, reads_cross = o->reads_state;
        hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
        hfx_value *enc_mask = hfx_graph_input(g, "encoder_attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, enc_len});
        hfx_value *enc = reads_cross ? NULL
                                     : hfx_graph_input(g, "encoder_hidden_states", o->dtype, 3,
                                                       (hfx_dim[]){o->batch, enc_len, hfx_dim_const(m->hidden)});
        dec_state s = {enc, NULL, padding_bias(&c, enc_mask), NULL, enc_len, outs, states, NULL, -1};
        hfx_value *past = NULL; /* the tokens before this step's: their count */
        if (o->cache == HFX_CACHE_STATIC) {
            s.cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &o->seq);
            past = hfx_gather(g, s.cache_position, hfx_const_i64(g, 0), 0); /* the first slot written */
        } else if (has_past) {
            s.past_key0 = read_past(&c, 0, SELF_K, &s.past_key0_state);
            past = hfx_dim_of(g, s.past_key0, 2);
        }
        ignore_stack(&c, "model.encoder.");
        hfx_value *dec_table = table(&c, 1);
        hfx_value *x = decode(&c, &s, dec_table, ids, past);
        if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX);
        hfx_graph_output(g, lm_logits(&c, x, dec_table), "logits");
        for (int64_t i = 0; i < m->dec_layers && !g->failed; i++)
            for (int p = 0; p < DEC_PARTS; p++) {
                char name[128];
                bool cross = p >= CROSS_K;
                if (cross && reads_cross) continue; /* read only: the prefill returned it */
                if (o->cache == HFX_CACHE_DYNAMIC || cross)
                    snprintf(name, sizeof name, "present.%lld.%s", (long long)i, part_names[p]);
                else
                    snprintf(name, sizeof name, "output.past_key_values.%lld.%s", (long long)i, part_names[p]);
                if (cross) hfx_graph_output(g, outs[DEC_PARTS * i + p], name);
                else hfx_state_write(g, states[DEC_PARTS * i + p], outs[DEC_PARTS * i + p], name);
            }
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    free(outs);
    free(states);
    return st;
}

static int seq2seq_cache_layers(const void *cfg_, hfx_layer_cache *layers, int max) {
    const seq2seq_cfg *m = cfg_;
    for (int64_t i = 0; i < m->dec_layers && i < max; i++)
        layers[i] = (hfx_layer_cache){m->dec_heads, m->hidden / m->dec_heads, m->hidden / m->dec_heads, 0, NULL};
    return (int)m->dec_layers;
}

static hfx_torch_signature seq2seq_torch_signature(const void *desc) {
    (void)desc;
    static const char *const args[] = {"input_ids", "attention_mask", "decoder_input_ids", NULL};
    return (hfx_torch_signature){args, "Seq2SeqLMOutput"};
}

/* name, role, one token per call, reads what an earlier call wrote, logits kept by default */
static const hfx_component forward[] = {{"model", "model", false, false, -1}};
static const hfx_component generation[] = {{"encoder", "encoder", false, false, -1},
                                           {"prefill", "prefill", false, false, 1},
                                           {"decode", "decode", true, true, 1}};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", NULL};

const hfx_arch_family hfx_seq2seq_family = {
    sizeof(seq2seq_cfg), seq2seq_parse, seq2seq_build, seq2seq_cache_layers, NULL,
    {[HFX_EXPORT_FORWARD] = {forward, 1}, [HFX_EXPORT_GENERATION] = {generation, 3}},
    sequence_inputs, seq2seq_torch_signature, NULL, NULL};

/*                          architecture                    positions            offset pre  embed-norm logits-bias */
const seq2seq_desc hfx_bart = {"BartForConditionalGeneration", POS_LEARNED, 2, false, true, true};
const seq2seq_desc hfx_mbart = {"MBartForConditionalGeneration", POS_LEARNED, 2, true, true, true};
const seq2seq_desc hfx_marian = {"MarianMTModel", POS_SINUSOID_TABLE, 0, false, false, true};
const seq2seq_desc hfx_m2m100 = {"M2M100ForConditionalGeneration", POS_SINUSOID, 0, true, false, false};
