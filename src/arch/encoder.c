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
#include "arch/weights.h"
#include "base/status.h"
#include "hf/config.h"

typedef enum {
    HEAD_NONE,
    HEAD_BERT_CLASSIFIER,    /* classifier(tanh(pooler(first token))) */
    HEAD_ROBERTA_CLASSIFIER, /* out_proj(tanh(dense(first token))) */
    HEAD_TOKEN_CLASSIFIER,   /* classifier on every token: logits [B,S,labels] */
    HEAD_QA,                 /* qa_outputs on every token, split: start_logits, end_logits [B,S] */
    HEAD_BERT_MLM,           /* cls.predictions: dense, hidden_act, LayerNorm, the tied decoder + bias */
    HEAD_ROBERTA_MLM         /* lm_head: dense, exact GELU, layer_norm, the tied decoder + bias */
} head_kind;

struct encoder_desc {
    const char *architecture;
    const char *prefix;       /* weights under "<prefix>." when saved from a head model */
    bool roberta_positions;   /* positions count real tokens from padding_idx + 1 */
    head_kind head;
};
typedef struct encoder_desc encoder_desc;

typedef struct encoder_cfg {
    int64_t vocab, hidden, layers, heads, intermediate, max_position, type_vocab, labels, pad_id;
    double eps;
    hfx_activation act;
    bool tied;               /* a masked-LM decoder reads the word embeddings */
} encoder_cfg;

static hfx_status encoder_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    const encoder_desc *d = desc_;
    encoder_cfg *m = cfg;
    const char *act;
    hfx_status st;
    if ((st = hfx_cfg_int_in(c, "vocab_size", 1, INT32_MAX, &m->vocab, err)) ||
        (st = hfx_cfg_int_in(c, "hidden_size", 1, 1 << 20, &m->hidden, err)) ||
        (st = hfx_cfg_int_in(c, "num_hidden_layers", 1, 4096, &m->layers, err)) ||
        (st = hfx_cfg_int_in(c, "num_attention_heads", 1, 4096, &m->heads, err)) ||
        (st = hfx_cfg_int_in(c, "intermediate_size", 1, 1 << 24, &m->intermediate, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_position_embeddings", 512, 1, INT32_MAX, &m->max_position, err)) ||
        (st = hfx_cfg_int_in_or(c, "type_vocab_size", 2, 1, 1 << 20, &m->type_vocab, err)) ||
        (st = hfx_cfg_int_or(c, "pad_token_id", d->roberta_positions ? 1 : 0, &m->pad_id, err)) ||
        (st = hfx_cfg_num_or(c, "layer_norm_eps", 1e-12, &m->eps, err)) ||
        (st = hfx_cfg_str_or(c, "hidden_act", "gelu", &act, err)))
        return st;
    if (m->hidden % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld",
                        c.where, (long long)m->hidden, (long long)m->heads);
    if (!hfx_activation_from_name(act, &m->act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: hidden_act '%s' is not supported (supported: %s)", c.where,
                        act, hfx_activation_names());
    if ((st = hfx_cfg_num_labels(c, &m->labels, err))) return st;
    if (d->head == HEAD_QA && m->labels != 2) /* transformers splits the two columns: start, end */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: a question-answering head has num_labels 2 (start, end), not %lld",
                        c.where, (long long)m->labels);
    if ((st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &m->tied, err))) return st;
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

static hfx_value *dense(enc_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.weight", name);
    hfx_value *w = W(c, 2, (int64_t[]){out, in}, n);
    snprintf(n, sizeof n, "%s.bias", name);
    return hfx_linear(c->g, x, w, W(c, 1, &out, n));
}

static hfx_value *layer_norm(enc_ctx *c, hfx_value *x, const char *name) {
    char wn[256], bn[256];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    return hfx_layer_norm(c->g, x, W(c, 1, &c->m->hidden, wn), W(c, 1, &c->m->hidden, bn), c->m->eps);
}

/* A masked-LM head over every token: [B,S,H] → [B,S,vocab]. BERT: cls.predictions.transform
 * (dense, hidden_act, LayerNorm), RoBERTa: lm_head (dense, exact GELU, layer_norm); then the
 * decoder: tied (the default), the word embeddings and the head's `bias`; untied, its own
 * weight and bias. */
static hfx_value *masked_lm(enc_ctx *c, hfx_value *x, hfx_value *words, bool bert) {
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    const char *base = bert ? "cls.predictions" : "lm_head";
    char n[192], dn[192];
    snprintf(n, sizeof n, bert ? "%s.transform.dense" : "%s.dense", base);
    hfx_value *t = dense(c, x, m->hidden, m->hidden, n);
    t = hfx_activate(g, bert ? m->act : HFX_ACT_GELU, t);
    snprintf(n, sizeof n, bert ? "%s.transform.LayerNorm" : "%s.layer_norm", base);
    t = layer_norm(c, t, n);
    char head_bias[192], dec_bias[192];
    snprintf(dn, sizeof dn, "%s.decoder.weight", base);
    snprintf(head_bias, sizeof head_bias, "%s.bias", base);
    snprintf(dec_bias, sizeof dec_bias, "%s.decoder.bias", base);
    hfx_value *dec, *bias;
    if (m->tied) { /* transformers ties the decoder to the embeddings and its bias to the head's */
        dec = words;
        bool own = hfx_weight_exists(c->w, head_bias); /* old checkpoints may hold only the decoder's */
        bias = W(c, 1, &m->vocab, own ? head_bias : dec_bias);
        hfx_weight_ignore(c->w, dn);
        hfx_weight_ignore(c->w, own ? dec_bias : head_bias);
    } else { /* untied: the decoder's own weight and bias; the head's bias is unused */
        dec = W(c, 2, (int64_t[]){m->vocab, m->hidden}, dn);
        bias = W(c, 1, &m->vocab, dec_bias);
        hfx_weight_ignore(c->w, head_bias);
    }
    return hfx_linear(g, t, dec, bias);
}

/* [B,S,H] → [B,H]: the first token, which the pooler and the classifiers read */
static hfx_value *first_token(hfx_graph *g, hfx_value *x) { return hfx_gather(g, x, hfx_const_i64(g, 0), 1); }

static hfx_status encoder_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck,
                                const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    const encoder_desc *d = desc_;
    const encoder_cfg *m = cfg_;
    if (o->cache != HFX_CACHE_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s is an encoder: it has no generation components", d->architecture);
    if (o->pooling.n && d->head != HEAD_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s has a task head: a sentence embedding pools a bare encoder's "
                        "token embeddings", d->architecture);
    if (o->pooling.n && o->pooling.dim && o->pooling.dim != m->hidden)
        return hfx_fail(err, HFX_ERR_INVALID, "the Pooling config's embedding dimension %lld is not the model's "
                        "hidden_size %lld", o->pooling.dim, (long long)m->hidden);
    hfx_weights w;
    hfx_status st = hfx_weights_init(&w, ck, g, o->dtype, d->architecture, err);
    if (st) return st;
    /* weights saved from a head model live under the base model's prefix */
    char probe[128];
    snprintf(probe, sizeof probe, "%s.embeddings.word_embeddings.weight", d->prefix);
    const char *prefix = hfx_weight_exists(&w, probe) ? hfx_arena_printf(g->arena, "%s.", d->prefix) : "";
    if (!prefix) {
        hfx_weights_free(&w);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    enc_ctx c = {g, &w, m, prefix};
    int64_t H = m->hidden, hd = H / m->heads;
    hfx_dim bs[2] = {o->batch, o->seq};

    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
    hfx_value *types = hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *pos;
    if (d->roberta_positions) { /* cumsum(ids != pad)·(ids != pad) + pad: padding keeps pad_id */
        hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad_id))),
                                   HFX_DTYPE_I64);
        pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_cumsum(g, real, 1), real), hfx_const_i64(g, m->pad_id));
    } else { /* 0..S-1 for every row */
        hfx_value *len = hfx_dim_of(g, ids, 1);
        pos = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), o->seq), 0);
    }
    hfx_value *words = W(&c, 2, (int64_t[]){m->vocab, H}, "embeddings.word_embeddings.weight");
    hfx_value *x = hfx_gather(g, words, ids, 0);
    x = hfx_op2(g, HFX_OP_ADD, x,
                hfx_gather(g, W(&c, 2, (int64_t[]){m->type_vocab, H}, "embeddings.token_type_embeddings.weight"), types, 0));
    x = hfx_op2(g, HFX_OP_ADD, x,
                hfx_gather(g, W(&c, 2, (int64_t[]){m->max_position, H}, "embeddings.position_embeddings.weight"), pos, 0));
    x = layer_norm(&c, x, "embeddings.LayerNorm");

    /* bidirectional: a key is visible unless it is padding */
    hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1); /* [B,1,1,S] */
    hfx_value *bias = hfx_where(g, keep, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -3.4028234663852886e38f));
    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        char p[128], n[160];
        snprintf(p, sizeof p, "encoder.layer.%lld", (long long)i);
#define N(leaf) (snprintf(n, sizeof n, "%s.%s", p, leaf), n)
        hfx_dim heads4[4] = {o->batch, o->seq, hfx_dim_const(m->heads), hfx_dim_const(hd)};
        int64_t perm[4] = {0, 2, 1, 3};
        hfx_value *q = hfx_transpose(g, hfx_reshape(g, dense(&c, x, H, H, N("attention.self.query")), 4, heads4), 4, perm);
        hfx_value *k = hfx_transpose(g, hfx_reshape(g, dense(&c, x, H, H, N("attention.self.key")), 4, heads4), 4, perm);
        hfx_value *v = hfx_transpose(g, hfx_reshape(g, dense(&c, x, H, H, N("attention.self.value")), 4, heads4), 4, perm);
        hfx_value *a = hfx_attention(g, q, k, v, bias, 1.0 / sqrt((double)hd), 0, 0);
        a = hfx_reshape(g, hfx_transpose(g, a, 4, perm), 3, (hfx_dim[]){o->batch, o->seq, hfx_dim_const(H)});
        hfx_value *ao = dense(&c, a, H, H, N("attention.output.dense"));
        x = layer_norm(&c, hfx_op2(g, HFX_OP_ADD, ao, x), N("attention.output.LayerNorm"));
        hfx_value *f = hfx_activate(g, m->act, dense(&c, x, H, m->intermediate, N("intermediate.dense")));
        hfx_value *fo = dense(&c, f, m->intermediate, H, N("output.dense"));
        x = layer_norm(&c, hfx_op2(g, HFX_OP_ADD, fo, x), N("output.LayerNorm"));
#undef N
    }
    char pooler[160];
    snprintf(pooler, sizeof pooler, "%spooler.dense.weight", c.prefix);
    enc_ctx top = c; /* a head's own weights are not under the base model's prefix */
    top.prefix = "";
    if (d->head >= HEAD_TOKEN_CLASSIFIER) { /* these heads' base model has no pooler: a checkpoint's is unused */
        char n[192];
        snprintf(n, sizeof n, "%spooler.dense.bias", c.prefix);
        hfx_weight_ignore(&w, pooler);
        hfx_weight_ignore(&w, n);
    }
    switch (d->head) {
    case HEAD_TOKEN_CLASSIFIER:
        hfx_graph_output(g, dense(&top, x, H, m->labels, "classifier"), "logits");
        break;
    case HEAD_QA: {
        hfx_value *se = dense(&top, x, H, 2, "qa_outputs"); /* [B,S,2] */
        hfx_dim bs2[2] = {o->batch, o->seq};
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 0, 1), 2, bs2), "start_logits");
        hfx_graph_output(g, hfx_reshape(g, hfx_slice(g, se, -1, 1, 2), 2, bs2), "end_logits");
        break;
    }
    case HEAD_BERT_MLM:
    case HEAD_ROBERTA_MLM:
        hfx_graph_output(g, masked_lm(&top, x, words, d->head == HEAD_BERT_MLM), "logits");
        break;
    case HEAD_NONE:
        if (o->pooling.n) { /* optimum's names for a sentence-transformers export; the pooler is unused */
            char n[192];
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
        hfx_value *t = hfx_op1(g, HFX_OP_TANH, dense(&top, first_token(g, x), H, H, "classifier.dense"));
        hfx_graph_output(g, dense(&top, t, H, m->labels, "classifier.out_proj"), "logits");
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
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", "token_type_ids", NULL};

/* The bare model's token embeddings are what sentence-transformers pools; a head's are not. */
static bool encoder_pools(const void *desc) { return ((const encoder_desc *)desc)->head == HEAD_NONE; }

const hfx_arch_family hfx_encoder_family = {sizeof(encoder_cfg), encoder_parse, encoder_build, NULL, NULL,
                                            {[HFX_EXPORT_FORWARD] = {forward, 1}}, sequence_inputs, NULL,
                                            encoder_pools};

const encoder_desc hfx_bert_model = {"BertModel", "bert", false, HEAD_NONE};
const encoder_desc hfx_bert_classifier = {"BertForSequenceClassification", "bert", false, HEAD_BERT_CLASSIFIER};
const encoder_desc hfx_roberta_model = {"RobertaModel", "roberta", true, HEAD_NONE};
const encoder_desc hfx_roberta_classifier = {"RobertaForSequenceClassification", "roberta", true,
                                             HEAD_ROBERTA_CLASSIFIER};
const encoder_desc hfx_xlmr_model = {"XLMRobertaModel", "roberta", true, HEAD_NONE};
const encoder_desc hfx_xlmr_classifier = {"XLMRobertaForSequenceClassification", "roberta", true,
                                          HEAD_ROBERTA_CLASSIFIER};
const encoder_desc hfx_bert_token_classifier = {"BertForTokenClassification", "bert", false, HEAD_TOKEN_CLASSIFIER};
const encoder_desc hfx_bert_qa = {"BertForQuestionAnswering", "bert", false, HEAD_QA};
const encoder_desc hfx_bert_mlm = {"BertForMaskedLM", "bert", false, HEAD_BERT_MLM};
const encoder_desc hfx_roberta_token_classifier = {"RobertaForTokenClassification", "roberta", true,
                                                   HEAD_TOKEN_CLASSIFIER};
const encoder_desc hfx_roberta_qa = {"RobertaForQuestionAnswering", "roberta", true, HEAD_QA};
const encoder_desc hfx_roberta_mlm = {"RobertaForMaskedLM", "roberta", true, HEAD_ROBERTA_MLM};
const encoder_desc hfx_xlmr_token_classifier = {"XLMRobertaForTokenClassification", "roberta", true,
                                                HEAD_TOKEN_CLASSIFIER};
const encoder_desc hfx_xlmr_qa = {"XLMRobertaForQuestionAnswering", "roberta", true, HEAD_QA};
const encoder_desc hfx_xlmr_mlm = {"XLMRobertaForMaskedLM", "roberta", true, HEAD_ROBERTA_MLM};
