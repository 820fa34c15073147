/* The encoder template: BERT and its descendants (RoBERTa, XLM-RoBERTa). Embeddings (word +
 * token type + absolute position, LayerNorm), N post-norm layers of bidirectional attention and a
 * GELU MLP, the pooler (tanh of a dense layer on the first token) and the sequence-classification
 * heads. Outputs: last_hidden_state and pooler_output for the bare model, logits for a head. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/nn.h"
#include "arch/pooling.h"
#include "arch/rope.h"
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef enum {
    HEAD_NONE,
    HEAD_BERT_CLASSIFIER,    /* classifier(tanh(pooler(first token))) */
    HEAD_ROBERTA_CLASSIFIER, /* out_proj(tanh(dense(first token))) */
    HEAD_DISTIL_CLASSIFIER,  /* classifier(relu(pre_classifier(first token))) */
    HEAD_MODERN_CLASSIFIER,  /* classifier(head(first token, or the mean: classifier_pooling)) */
    HEAD_TOKEN_CLASSIFIER,   /* classifier on every token: logits [B,S,labels] */
    HEAD_QA,                 /* qa_outputs on every token, split: start_logits, end_logits [B,S] */
    HEAD_MASKED_LM           /* the layout's transform, then the decoder (tied: the word embeddings) */
} head_kind;

/* A masked-LM head: dense, activation, LayerNorm, then the decoder over the vocabulary. */
typedef struct mlm_names {
    const char *dense, *norm, *decoder;
    const char *bias;        /* the head's own bias, tied to the decoder's (NULL: the decoder's only) */
    bool exact_gelu;         /* RoBERTa's: gelu whatever hidden_act says */
    const char *act_key;     /* the activation's config key (NULL: hidden_act's) */
} mlm_names;

/* What differs between the BERT-style encoders: config keys, weight names, block structure. */
typedef struct encoder_layout {
    const char *hidden, *layers, *heads, *intermediate, *act, *eps; /* config keys (eps NULL: 1e-12) */
    double eps_default;
    bool token_types;        /* a token_type_ids input and table */
    bool learned_positions;  /* an absolute position table; else rotary (ModernBERT) */
    bool pre_norm;           /* norms before the blocks, a final norm, none before layer 0's attention */
    bool fused_qkv;          /* one q/k/v projection ([3·H, H]: q, k, v) */
    bool glu;                /* the MLP's input projection holds (input, gate): act(input)·gate */
    bool bias_keys;          /* biases as attention_bias / mlp_bias / norm_bias say (else all biased) */
    bool head_transform;     /* token, QA and sequence heads read `head` (dense, act, norm) first */
    const char *words, *positions, *types, *embed_norm;
    const char *layer;       /* "encoder.layer.%lld" */
    const char *q, *k, *v, *o, *attn_norm, *mlp_in, *mlp_out, *mlp_norm, *final_norm;
    const char *qa;          /* the QA head's linear */
    mlm_names mlm;
} encoder_layout;

static const encoder_layout bert_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-12, true, true, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.token_type_embeddings",
    "embeddings.LayerNorm", "encoder.layer.%lld", "attention.self.query", "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
    "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.decoder",
     "cls.predictions.bias", false, NULL}};

static const encoder_layout roberta_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-12, true, true, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.token_type_embeddings",
    "embeddings.LayerNorm", "encoder.layer.%lld", "attention.self.query", "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
    "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias", true, NULL}};

/* DistilBERT: BERT without token types, its own names, LayerNorm eps fixed at 1e-12. */
static const encoder_layout distilbert_layout = {
    "dim", "n_layers", "n_heads", "hidden_dim", "activation", NULL,
    1e-12, false, true, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", NULL, "embeddings.LayerNorm",
    "transformer.layer.%lld", "attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
    "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm", NULL, "qa_outputs",
    {"vocab_transform", "vocab_layer_norm", "vocab_projector", NULL, false, NULL}};

/* ModernBERT: pre-norm, fused Wqkv, GeGLU, rotary with a base per layer type, local (sliding)
 * and global layers, biases and LayerNorm biases by config; heads read `head` first. */
static const encoder_layout modernbert_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_activation", "norm_eps",
    1e-5, false, false, true, true, true, true, true,
    "embeddings.tok_embeddings", NULL, NULL, "embeddings.norm",
    "layers.%lld", "attn.Wqkv", NULL, NULL, "attn.Wo", "attn_norm", "mlp.Wi", "mlp.Wo", "mlp_norm", "final_norm",
    "classifier",
    {"head.dense", "head.norm", "decoder", NULL, false, "classifier_activation"}};

struct encoder_desc {
    const char *architecture;
    const char *prefix;       /* weights under "<prefix>." when saved from a head model */
    bool roberta_positions;   /* positions count real tokens from padding_idx + 1 */
    head_kind head;
    const encoder_layout *layout;
};
typedef struct encoder_desc encoder_desc;

typedef struct encoder_cfg {
    int64_t vocab, hidden, layers, heads, intermediate, max_position, type_vocab, labels, pad_id;
    double eps;
    hfx_activation act, head_act;
    bool tied;               /* a masked-LM decoder reads the word embeddings */
    bool attn_bias, mlp_bias, norm_bias, head_bias, decoder_bias; /* ModernBERT's switches (else true) */
    bool mean_pooling;       /* ModernBERT's classifier_pooling "mean" (else the first token) */
    int64_t window;          /* ModernBERT: |i − j| ≤ window on local layers (local_attention / 2) */
    uint8_t *local;          /* [layers]: 1 for a sliding (local) layer; arena */
    hfx_rope rope, local_rope;
} encoder_cfg;

static hfx_status activation_of(hfx_cfg c, const char *key, hfx_activation *out, hfx_error *err) {
    const char *act;
    hfx_status st = hfx_cfg_str_or(c, key, "gelu", &act, err);
    if (st) return st;
    if (!hfx_activation_from_name(act, out))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)", c.where, key, act,
                        hfx_activation_names());
    return HFX_OK;
}

/* ModernBERT's per-layer pattern: layer_types, or every global_attn_every_n_layers-th global. */
static hfx_status parse_local_layers(hfx_cfg c, hfx_arena *arena, encoder_cfg *m, hfx_error *err) {
    m->local = hfx_arena_alloc(arena, (size_t)m->layers);
    if (!m->local) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    const json_t *types = json_object_get(c.obj, "layer_types");
    if (types && !json_is_null(types)) {
        if (!json_is_array(types) || (int64_t)json_array_size(types) != m->layers)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'layer_types': expected a list of %lld layer types", c.where,
                            (long long)m->layers);
        for (int64_t i = 0; i < m->layers; i++) {
            const char *t = json_string_value(json_array_get(types, (size_t)i));
            if (!t || (strcmp(t, "sliding_attention") != 0 && strcmp(t, "full_attention") != 0))
                return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: layer_types[%lld] must be \"sliding_attention\" or "
                                "\"full_attention\"", c.where, (long long)i);
            m->local[i] = strcmp(t, "sliding_attention") == 0;
        }
        return HFX_OK;
    }
    int64_t every;
    hfx_status st = hfx_cfg_int_in_or(c, "global_attn_every_n_layers", 3, 1, 4096, &every, err);
    for (int64_t i = 0; !st && i < m->layers; i++) m->local[i] = i % every != 0;
    return st;
}

static hfx_status encoder_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const encoder_desc *d = desc_;
    const encoder_layout *L = d->layout;
    encoder_cfg *m = cfg;
    hfx_status st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, L->hidden, 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, L->layers, 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, L->heads, 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_int_in(c, L->intermediate, 1, 1 << 24, &m->intermediate, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_position_embeddings", 512, 1, INT32_MAX, &m->max_position, err)) ||
        (st = hfx_cfg_int_in_or(c, "type_vocab_size", 2, 1, 1 << 20, &m->type_vocab, err)) ||
        (st = hfx_cfg_int_or(c, "pad_token_id", d->roberta_positions ? 1 : 0, &m->pad_id, err)) ||
        (st = activation_of(c, L->act, &m->act, err)))
        return st;
    m->eps = L->eps_default;
    if (L->eps && (st = hfx_cfg_num_or(c, L->eps, L->eps_default, &m->eps, err))) return st;
    if (m->hidden % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %lld is not a multiple of %s %lld", c.where, L->hidden,
                        (long long)m->hidden, L->heads, (long long)m->heads);
    if ((st = hfx_cfg_num_labels(c, &m->labels, err))) return st;
    if (d->head == HEAD_QA && m->labels != 2) /* transformers splits the two columns: start, end */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: a question-answering head has num_labels 2 (start, end), not %lld",
                        c.where, (long long)m->labels);
    if ((st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &m->tied, err))) return st;
    m->head_act = m->act;
    if (L->mlm.act_key && (st = activation_of(c, L->mlm.act_key, &m->head_act, err))) return st;
    m->attn_bias = m->mlp_bias = m->norm_bias = m->head_bias = m->decoder_bias = true;
    if (L->bias_keys &&
        ((st = hfx_cfg_bool_or(c, "attention_bias", false, &m->attn_bias, err)) ||
         (st = hfx_cfg_bool_or(c, "mlp_bias", false, &m->mlp_bias, err)) ||
         (st = hfx_cfg_bool_or(c, "norm_bias", false, &m->norm_bias, err)) ||
         (st = hfx_cfg_bool_or(c, "classifier_bias", false, &m->head_bias, err)) ||
         (st = hfx_cfg_bool_or(c, "decoder_bias", true, &m->decoder_bias, err))))
        return st;
    if (d->head == HEAD_MODERN_CLASSIFIER) {
        const char *pooling;
        if ((st = hfx_cfg_str_or(c, "classifier_pooling", "cls", &pooling, err))) return st;
        if (strcmp(pooling, "cls") != 0 && strcmp(pooling, "mean") != 0)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: classifier_pooling '%s' is not supported (cls, mean)", c.where,
                            pooling);
        m->mean_pooling = strcmp(pooling, "mean") == 0;
    }
    if (!L->learned_positions) { /* rotary, a base per layer type; local layers see a window */
        int64_t local_attention, hd = m->hidden / m->heads;
        if ((st = hfx_cfg_int_in_or(c, "local_attention", 128, 0, INT32_MAX, &local_attention, err)) ||
            (st = parse_local_layers(c, arena, m, err)))
            return st;
        m->window = local_attention / 2;
        hfx_rope_source global = {"full_attention", 160000.0, "global_rope_theta", true, false, 0, NULL, false, false};
        hfx_rope_source local = {"sliding_attention", 10000.0, "local_rope_theta", true, false, 0, NULL, false, false};
        if ((st = hfx_rope_parse(c, &global, hd, m->max_position, arena, &m->rope, err)) ||
            (st = hfx_rope_parse(c, &local, hd, m->max_position, arena, &m->local_rope, err)))
            return st;
    }
    return HFX_OK;
}

typedef struct enc_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const encoder_cfg *m;
    const char *prefix; /* "" or "bert." / "roberta." */
} enc_ctx;

static hfx_value *W(enc_ctx *c, int rank, const int64_t *shape, const char *name) {
    return hfx_weight(c->w, rank, shape, "%s%s", c->prefix, name);
}

/* name.weight [out, in], and name.bias [out] unless `bias` is false */
static hfx_value *dense_b(enc_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name, bool bias) {
    char n[256];
    snprintf(n, sizeof n, "%s.weight", name);
    hfx_value *w = W(c, 2, (int64_t[]){out, in}, n);
    snprintf(n, sizeof n, "%s.bias", name);
    return hfx_linear(c->g, x, w, bias ? W(c, 1, &out, n) : NULL);
}

static hfx_value *dense(enc_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    return dense_b(c, x, in, out, name, true);
}

static hfx_value *layer_norm(enc_ctx *c, hfx_value *x, const char *name) {
    char wn[256], bn[256];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    return hfx_layer_norm(c->g, x, W(c, 1, &c->m->hidden, wn), c->m->norm_bias ? W(c, 1, &c->m->hidden, bn) : NULL,
                          c->m->eps);
}

/* ModernBERT's prediction head: norm(act(dense(x))), before each of its task heads */
static hfx_value *head_transform(enc_ctx *c, hfx_value *x) {
    hfx_value *t = dense_b(c, x, c->m->hidden, c->m->hidden, "head.dense", c->m->head_bias);
    return layer_norm(c, hfx_activate(c->g, c->m->head_act, t), "head.norm");
}

/* A masked-LM head over every token: [B,S,H] → [B,S,vocab]: the layout's transform (dense,
 * activation, LayerNorm), then the decoder. Tied (the default) it reads the word embeddings and
 * the head's own bias where the layout has one (old checkpoints may hold only the decoder's);
 * untied, its own weight and bias. */
static hfx_value *masked_lm(enc_ctx *c, hfx_value *x, hfx_value *words, const mlm_names *names) {
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *t = dense_b(c, x, m->hidden, m->hidden, names->dense, m->head_bias);
    t = hfx_activate(g, names->exact_gelu ? HFX_ACT_GELU : m->head_act, t);
    t = layer_norm(c, t, names->norm);
    char dn[192], dec_bias[192];
    snprintf(dn, sizeof dn, "%s.weight", names->decoder);
    snprintf(dec_bias, sizeof dec_bias, "%s.bias", names->decoder);
    const char *head_bias = names->bias;
    hfx_value *dec, *bias = NULL;
    if (m->tied) { /* transformers ties the decoder to the embeddings and its bias to the head's */
        dec = words;
        bool own = head_bias && hfx_weight_exists(c->w, head_bias);
        if (m->decoder_bias) bias = W(c, 1, &m->vocab, own ? head_bias : dec_bias);
        hfx_weight_ignore(c->w, dn);
        if (own) hfx_weight_ignore(c->w, dec_bias);
        else if (head_bias) hfx_weight_ignore(c->w, head_bias);
    } else { /* untied: the decoder's own weight and bias; the head's bias is unused */
        dec = W(c, 2, (int64_t[]){m->vocab, m->hidden}, dn);
        if (m->decoder_bias) bias = W(c, 1, &m->vocab, dec_bias);
        if (head_bias) hfx_weight_ignore(c->w, head_bias);
    }
    return hfx_linear(g, t, dec, bias);
}

/* [B,S,H] → [B,H]: the first token, which the pooler and the classifiers read */
static hfx_value *first_token(hfx_graph *g, hfx_value *x) { return hfx_gather(g, x, hfx_const_i64(g, 0), 1); }

/* q, k, v [B,heads,S,hd] of layer `p` */
static void project_qkv(enc_ctx *c, const encoder_layout *L, hfx_value *x, const char *p, const hfx_build_opts *o,
                        hfx_value **q, hfx_value **k, hfx_value **v) {
    hfx_graph *g = c->g;
    const encoder_cfg *m = c->m;
    int64_t H = m->hidden, hd = H / m->heads;
    int64_t perm[4] = {0, 2, 1, 3};
    hfx_dim heads4[4] = {o->batch, o->seq, hfx_dim_const(m->heads), hfx_dim_const(hd)};
    char n[192];
    if (L->fused_qkv) { /* [B,S,3H] viewed as [B,S,3,heads,hd]: q, k, v */
        snprintf(n, sizeof n, "%s.%s", p, L->q);
        hfx_value *qkv = dense_b(c, x, H, 3 * H, n, m->attn_bias);
        hfx_value **out[3] = {q, k, v};
        for (int i = 0; i < 3; i++)
            *out[i] = hfx_transpose(g, hfx_reshape(g, hfx_slice(g, qkv, 2, i * H, (i + 1) * H), 4, heads4), 4, perm);
        return;
    }
    const char *names[3] = {L->q, L->k, L->v};
    hfx_value **out[3] = {q, k, v};
    for (int i = 0; i < 3; i++) {
        snprintf(n, sizeof n, "%s.%s", p, names[i]);
        *out[i] = hfx_transpose(g, hfx_reshape(g, dense_b(c, x, H, H, n, m->attn_bias), 4, heads4), 4, perm);
    }
}

/* The MLP: act(in(x)) or, GLU, act(input)·gate of in(x)'s halves; then out. */
static hfx_value *mlp(enc_ctx *c, const encoder_layout *L, hfx_value *x, const char *p) {
    const encoder_cfg *m = c->m;
    char n[192];
    snprintf(n, sizeof n, "%s.%s", p, L->mlp_in);
    int64_t I = m->intermediate;
    hfx_value *f = dense_b(c, x, m->hidden, L->glu ? 2 * I : I, n, m->mlp_bias);
    if (L->glu) f = hfx_op2(c->g, HFX_OP_MUL, hfx_activate(c->g, m->act, hfx_slice(c->g, f, 2, 0, I)),
                            hfx_slice(c->g, f, 2, I, 2 * I));
    else f = hfx_activate(c->g, m->act, f);
    snprintf(n, sizeof n, "%s.%s", p, L->mlp_out);
    return dense_b(c, f, I, m->hidden, n, m->mlp_bias);
}

static hfx_status encoder_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck,
                                const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    const encoder_desc *d = desc_;
    const encoder_layout *L = d->layout;
    const encoder_cfg *m = cfg_;
    if (o->cache != HFX_CACHE_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s is an encoder: it has no generation components", d->architecture);
    if (o->pooling.n && d->head != HEAD_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s has a task head: a sentence embedding pools a bare encoder's "
                        "token embeddings", d->architecture);
    if (o->pooling.n && o->pooling.dim && o->pooling.dim != m->hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "the Pooling module's config (modules.json): embedding dimension %lld "
                        "is not config.json's %s %lld", o->pooling.dim, L->hidden, (long long)m->hidden);
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    /* weights saved from a head model live under the base model's prefix */
    char probe[192];
    snprintf(probe, sizeof probe, "%s.%s.weight", d->prefix, L->words);
    const char *prefix = hfx_weight_exists(&w, probe) ? hfx_arena_printf(g->arena, "%s.", d->prefix) : "";
    if (!prefix) {
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    enc_ctx c = {g, &w, m, prefix};
    int64_t H = m->hidden, hd = H / m->heads;
    hfx_dim bs[2] = {o->batch, o->seq};
    char n[192];

    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
    hfx_value *types = L->token_types ? hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, bs) : NULL;
    hfx_value *len = hfx_dim_of(g, ids, 1);
    hfx_value *arange = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), o->seq), 0); /* [1,S] */
    hfx_value *pos = arange;
    if (d->roberta_positions) { /* cumsum(ids != pad)·(ids != pad) + pad: padding keeps pad_id */
        hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad_id))),
                                   HFX_DTYPE_I64);
        pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_cumsum(g, real, 1), real), hfx_const_i64(g, m->pad_id));
    }
    snprintf(n, sizeof n, "%s.weight", L->words);
    hfx_value *words = W(&c, 2, (int64_t[]){m->vocab, H}, n);
    hfx_value *x = hfx_gather(g, words, ids, 0);
    if (types) {
        snprintf(n, sizeof n, "%s.weight", L->types);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, W(&c, 2, (int64_t[]){m->type_vocab, H}, n), types, 0));
    }
    if (L->learned_positions) {
        snprintf(n, sizeof n, "%s.weight", L->positions);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, W(&c, 2, (int64_t[]){m->max_position, H}, n), pos, 0));
    }
    x = layer_norm(&c, x, L->embed_norm);

    /* bidirectional: a key is visible unless it is padding (and, on local layers, |i − j| ≤ window) */
    hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1); /* [B,1,1,S] */
    hfx_value *lowest = hfx_const_f32(g, -3.4028234663852886e38f), *zero = hfx_const_f32(g, 0.0f);
    hfx_value *bias = hfx_where(g, keep, zero, lowest), *local_bias = NULL;
    hfx_value *cos = NULL, *sin = NULL, *local_cos = NULL, *local_sin = NULL;
    if (!L->learned_positions) {
        hfx_rope_cos_sin(g, &m->rope, arange, o->dtype, &cos, &sin);
        hfx_rope_cos_sin(g, &m->local_rope, arange, o->dtype, &local_cos, &local_sin);
        hfx_value *qi = hfx_transpose(g, arange, 2, (int64_t[]){1, 0}), *win = hfx_const_i64(g, m->window); /* [S,1] */
        hfx_value *near = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_LESS_EQUAL, hfx_op2(g, HFX_OP_SUB, qi, arange), win),
                                  hfx_op2(g, HFX_OP_LESS_EQUAL, hfx_op2(g, HFX_OP_SUB, arange, qi), win)); /* [S,S] */
        local_bias = hfx_where(g, hfx_op2(g, HFX_OP_AND, keep, near), zero, lowest);        /* [B,1,S,S] */
    }
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        char p[128];
        snprintf(p, sizeof p, L->layer, (long long)i);
#define N(leaf) (snprintf(n, sizeof n, "%s.%s", p, leaf), n)
        int64_t perm[4] = {0, 2, 1, 3};
        bool local = !L->learned_positions && m->local[i];
        /* pre-norm: layer 0 reads the embeddings' norm directly (its attn_norm is Identity) */
        hfx_value *h = L->pre_norm && i > 0 ? layer_norm(&c, x, N(L->attn_norm)) : x;
        hfx_value *q, *k, *v;
        project_qkv(&c, L, h, p, o, &q, &k, &v);
        if (!L->learned_positions) {
            q = hfx_rope_apply(g, q, local ? local_cos : cos, local ? local_sin : sin, false);
            k = hfx_rope_apply(g, k, local ? local_cos : cos, local ? local_sin : sin, false);
        }
        hfx_value *a = hfx_attention(g, q, k, v, local ? local_bias : bias, 1.0 / sqrt((double)hd), 0, 0);
        a = hfx_reshape(g, hfx_transpose(g, a, 4, perm), 3, (hfx_dim[]){o->batch, o->seq, hfx_dim_const(H)});
        hfx_value *ao = dense_b(&c, a, H, H, N(L->o), m->attn_bias);
        if (L->pre_norm) {
            x = hfx_op2(g, HFX_OP_ADD, x, ao);
            x = hfx_op2(g, HFX_OP_ADD, x, mlp(&c, L, layer_norm(&c, x, N(L->mlp_norm)), p));
        } else {
            x = layer_norm(&c, hfx_op2(g, HFX_OP_ADD, ao, x), N(L->attn_norm));
            x = layer_norm(&c, hfx_op2(g, HFX_OP_ADD, mlp(&c, L, x, p), x), N(L->mlp_norm));
        }
#undef N
    }
    if (L->final_norm) x = layer_norm(&c, x, L->final_norm);
    char pooler[160];
    snprintf(pooler, sizeof pooler, "%spooler.dense.weight", c.prefix);
    enc_ctx top = c; /* a head's own weights are not under the base model's prefix */
    top.prefix = "";
    if (d->head != HEAD_NONE && d->head != HEAD_BERT_CLASSIFIER) { /* no pooler in these: a checkpoint's is unused */
        snprintf(n, sizeof n, "%spooler.dense.bias", c.prefix);
        hfx_weight_ignore(&w, pooler);
        hfx_weight_ignore(&w, n);
    }
    hfx_value *t = L->head_transform && d->head != HEAD_NONE && d->head != HEAD_MASKED_LM &&
                           d->head != HEAD_MODERN_CLASSIFIER
                       ? head_transform(&top, x)
                       : x; /* the token-level heads' input */
    switch (d->head) {
    case HEAD_TOKEN_CLASSIFIER:
        hfx_graph_output(g, dense(&top, t, H, m->labels, "classifier"), "logits");
        break;
    case HEAD_QA: {
        hfx_value *se = dense(&top, t, H, 2, L->qa); /* [B,S,2] */
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 0, 1), 2, bs), "start_logits");
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 1, 2), 2, bs), "end_logits");
        break;
    }
    case HEAD_MASKED_LM:
        hfx_graph_output(g, masked_lm(&top, x, words, &L->mlm), "logits");
        break;
    case HEAD_NONE:
        if (o->pooling.n) { /* optimum's names for a sentence-transformers export; the pooler is unused */
            snprintf(n, sizeof n, "%spooler.dense.bias", c.prefix);
            hfx_weight_ignore(&w, pooler);
            hfx_weight_ignore(&w, n);
            hfx_graph_output(g, x, "token_embeddings");
            hfx_graph_output(g, hfx_sentence_embedding(g, &o->pooling, x, mask, o->batch, H), "sentence_embedding");
            break;
        }
        hfx_graph_output(g, x, "last_hidden_state");
        if (hfx_weight_exists(&w, pooler))
            hfx_graph_output(g, hfx_op1(g, HFX_OP_TANH, dense(&c, first_token(g, x), H, H, "pooler.dense")), "pooler_output");
        break;
    case HEAD_BERT_CLASSIFIER: { /* classifier(tanh(pooler(first token))) */
        hfx_value *pooled = hfx_op1(g, HFX_OP_TANH, dense(&c, first_token(g, x), H, H, "pooler.dense"));
        hfx_graph_output(g, dense(&top, pooled, H, m->labels, "classifier"), "logits");
        break;
    }
    case HEAD_ROBERTA_CLASSIFIER: { /* out_proj(tanh(dense(first token))); no pooler */
        hfx_value *r = hfx_op1(g, HFX_OP_TANH, dense(&top, first_token(g, x), H, H, "classifier.dense"));
        hfx_graph_output(g, dense(&top, r, H, m->labels, "classifier.out_proj"), "logits");
        break;
    }
    case HEAD_DISTIL_CLASSIFIER: { /* classifier(relu(pre_classifier(first token))) */
        hfx_value *r = hfx_activate(g, HFX_ACT_RELU, dense(&top, first_token(g, x), H, H, "pre_classifier"));
        hfx_graph_output(g, dense(&top, r, H, m->labels, "classifier"), "logits");
        break;
    }
    case HEAD_MODERN_CLASSIFIER: { /* the first token, or the mask-weighted mean; then head, classifier */
        static const hfx_pooling mean = {1, {HFX_POOL_MEAN}, false, 0};
        hfx_value *pooled = m->mean_pooling ? hfx_sentence_embedding(g, &mean, x, mask, o->batch, H) : first_token(g, x);
        hfx_graph_output(g, dense(&top, head_transform(&top, pooled), H, m->labels, "classifier"), "logits");
        break;
    }
    }
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

/* An encoder exports its forward pass only. */
static const hfx_component forward[] = {{"model", "model", false, false, -1}};
static const char *const typed_inputs[] = {"input_ids", "attention_mask", "token_type_ids", NULL};
static const char *const untyped_inputs[] = {"input_ids", "attention_mask", NULL};

/* The bare model's token embeddings are what sentence-transformers pools; a head's are not. */
static bool encoder_pools(const void *desc) { return ((const encoder_desc *)desc)->head == HEAD_NONE; }

/* Two families that differ only in their inputs: with token types (BERT, RoBERTa) or without. */
const hfx_arch_family hfx_encoder_family = {sizeof(encoder_cfg), encoder_parse, encoder_build, NULL, NULL,
                                            {[HFX_EXPORT_FORWARD] = {forward, 1}}, typed_inputs, NULL,
                                            encoder_pools};
const hfx_arch_family hfx_untyped_encoder_family = {sizeof(encoder_cfg), encoder_parse, encoder_build, NULL, NULL,
                                                    {[HFX_EXPORT_FORWARD] = {forward, 1}}, untyped_inputs, NULL,
                                                    encoder_pools};

#define ENC(sym, arch, prefix, roberta, head, layout) \
    const encoder_desc sym = {arch, prefix, roberta, head, &layout};
ENC(hfx_bert_model, "BertModel", "bert", false, HEAD_NONE, bert_layout)
ENC(hfx_bert_classifier, "BertForSequenceClassification", "bert", false, HEAD_BERT_CLASSIFIER, bert_layout)
ENC(hfx_bert_token_classifier, "BertForTokenClassification", "bert", false, HEAD_TOKEN_CLASSIFIER, bert_layout)
ENC(hfx_bert_qa, "BertForQuestionAnswering", "bert", false, HEAD_QA, bert_layout)
ENC(hfx_bert_mlm, "BertForMaskedLM", "bert", false, HEAD_MASKED_LM, bert_layout)
ENC(hfx_roberta_model, "RobertaModel", "roberta", true, HEAD_NONE, roberta_layout)
ENC(hfx_roberta_classifier, "RobertaForSequenceClassification", "roberta", true, HEAD_ROBERTA_CLASSIFIER, roberta_layout)
ENC(hfx_roberta_token_classifier, "RobertaForTokenClassification", "roberta", true, HEAD_TOKEN_CLASSIFIER, roberta_layout)
ENC(hfx_roberta_qa, "RobertaForQuestionAnswering", "roberta", true, HEAD_QA, roberta_layout)
ENC(hfx_roberta_mlm, "RobertaForMaskedLM", "roberta", true, HEAD_MASKED_LM, roberta_layout)
ENC(hfx_xlmr_model, "XLMRobertaModel", "roberta", true, HEAD_NONE, roberta_layout)
ENC(hfx_xlmr_classifier, "XLMRobertaForSequenceClassification", "roberta", true, HEAD_ROBERTA_CLASSIFIER, roberta_layout)
ENC(hfx_xlmr_token_classifier, "XLMRobertaForTokenClassification", "roberta", true, HEAD_TOKEN_CLASSIFIER, roberta_layout)
ENC(hfx_xlmr_qa, "XLMRobertaForQuestionAnswering", "roberta", true, HEAD_QA, roberta_layout)
ENC(hfx_xlmr_mlm, "XLMRobertaForMaskedLM", "roberta", true, HEAD_MASKED_LM, roberta_layout)
ENC(hfx_distilbert_model, "DistilBertModel", "distilbert", false, HEAD_NONE, distilbert_layout)
ENC(hfx_distilbert_classifier, "DistilBertForSequenceClassification", "distilbert", false, HEAD_DISTIL_CLASSIFIER,
    distilbert_layout)
ENC(hfx_distilbert_token_classifier, "DistilBertForTokenClassification", "distilbert", false, HEAD_TOKEN_CLASSIFIER,
    distilbert_layout)
ENC(hfx_distilbert_qa, "DistilBertForQuestionAnswering", "distilbert", false, HEAD_QA, distilbert_layout)
ENC(hfx_distilbert_mlm, "DistilBertForMaskedLM", "distilbert", false, HEAD_MASKED_LM, distilbert_layout)
ENC(hfx_modernbert_model, "ModernBertModel", "model", false, HEAD_NONE, modernbert_layout)
ENC(hfx_modernbert_classifier, "ModernBertForSequenceClassification", "model", false, HEAD_MODERN_CLASSIFIER,
    modernbert_layout)
ENC(hfx_modernbert_token_classifier, "ModernBertForTokenClassification", "model", false, HEAD_TOKEN_CLASSIFIER,
    modernbert_layout)
ENC(hfx_modernbert_qa, "ModernBertForQuestionAnswering", "model", false, HEAD_QA, modernbert_layout)
ENC(hfx_modernbert_mlm, "ModernBertForMaskedLM", "model", false, HEAD_MASKED_LM, modernbert_layout)
