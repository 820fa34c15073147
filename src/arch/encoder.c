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
#include "arch/relative.h"
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
    HEAD_DEBERTA_CLASSIFIER, /* classifier(pooler_hidden_act(pooler.dense(first token))) */
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

/* T5-style relative positions (relative.h) shared by every layer: the table's name and the bucketing the model
 * hard-codes (MPNet: 32 buckets up to a distance of 128, whatever size the config gives its table). */
typedef struct relative_names {
    const char *table;       /* [relative_attention_num_buckets, heads] */
    int64_t buckets, max_distance;
} relative_names;

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
    bool deberta;            /* DeBERTa-v2: token types, positions and disentangled relative attention as the
                                config says; padded queries masked too; embeddings zeroed at padding */
    const char *words, *positions, *types, *embed_norm;
    const char *layer;       /* "encoder.layer.%lld" */
    const char *q, *k, *v, *o, *attn_norm, *mlp_in, *mlp_out, *mlp_norm, *final_norm;
    const char *qa;          /* the QA head's linear */
    mlm_names mlm;
    relative_names relative; /* a bias on every layer's scores by bucketed distance (NULL table: none) */
    const char *base_output; /* the bare model's output class (transformers.modeling_outputs') */
} encoder_layout;

static const encoder_layout bert_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-12, true, true, false, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.token_type_embeddings",
    "embeddings.LayerNorm", "encoder.layer.%lld", "attention.self.query", "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
    "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.decoder",
     "cls.predictions.bias", false, NULL},
    {NULL, 0, 0},
    "BaseModelOutputWithPoolingAndCrossAttentions"};

static const encoder_layout roberta_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-12, true, true, false, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.token_type_embeddings",
    "embeddings.LayerNorm", "encoder.layer.%lld", "attention.self.query", "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
    "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias", true, NULL},
    {NULL, 0, 0},
    "BaseModelOutputWithPoolingAndCrossAttentions"};

/* DistilBERT: BERT without token types, its own names, LayerNorm eps fixed at 1e-12. */
static const encoder_layout distilbert_layout = {
    "dim", "n_layers", "n_heads", "hidden_dim", "activation", NULL,
    1e-12, false, true, false, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", NULL, "embeddings.LayerNorm",
    "transformer.layer.%lld", "attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
    "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm", NULL, "qa_outputs",
    {"vocab_transform", "vocab_layer_norm", "vocab_projector", NULL, false, NULL},
    {NULL, 0, 0},
    "BaseModelOutput"};

/* ModernBERT: pre-norm, fused Wqkv, GeGLU, rotary with a base per layer type, local (sliding)
 * and global layers, biases and LayerNorm biases by config; heads read `head` first. */
static const encoder_layout modernbert_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_activation", "norm_eps",
    1e-5, false, false, true, true, true, true, true, false,
    "embeddings.tok_embeddings", NULL, NULL, "embeddings.norm",
    "layers.%lld", "attn.Wqkv", NULL, NULL, "attn.Wo", "attn_norm", "mlp.Wi", "mlp.Wo", "mlp_norm", "final_norm",
    "classifier",
    {"head.dense", "head.norm", "decoder", NULL, false, "classifier_activation"},
    {NULL, 0, 0},
    "BaseModelOutput"};

/* MPNet: RoBERTa's positions (padding index 1) without token types, attention.attn.q/k/v/o, and T5's bidirectional
 * relative position bias from one table shared by every layer. */
static const encoder_layout mpnet_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-12, false, true, false, false, false, false, false, false,
    "embeddings.word_embeddings", "embeddings.position_embeddings", NULL, "embeddings.LayerNorm", "encoder.layer.%lld",
    "attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "attention.LayerNorm",
    "intermediate.dense", "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias", true, NULL},
    {"encoder.relative_attention_bias.weight", 32, 128},
    "BaseModelOutputWithPooling"};

/* DeBERTa-v2/v3: BERT's post-norm blocks with query_proj/key_proj/value_proj and disentangled
 * attention (content-to-position and position-to-content scores from relative embeddings). */
static const encoder_layout deberta_layout = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "layer_norm_eps",
    1e-7, true, true, false, false, false, false, false, true,
    "embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.token_type_embeddings",
    "embeddings.LayerNorm", "encoder.layer.%lld", "attention.self.query_proj", "attention.self.key_proj",
    "attention.self.value_proj", "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
    "output.dense", "output.LayerNorm", NULL, "qa_outputs",
    {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.decoder",
     "cls.predictions.bias", false, NULL},
    {NULL, 0, 0},
    "BaseModelOutput"};

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
    /* DeBERTa-v2 */
    bool types, positions;   /* a token type table (type_vocab_size > 0), absolute positions added */
    int64_t embed_size;      /* the tables' width; an embed_proj to hidden when it differs */
    bool rel, c2p, p2c, share_key, rel_norm; /* relative attention and its terms */
    int64_t span;            /* relative embeddings: 2·span rows */
    int64_t rel_clamp;       /* past this distance every index below saturates */
    int64_t *c2p_index, *p2c_index; /* [2·rel_clamp + 1] by distance i − j + rel_clamp: the clamped
                                       bucket + span, and span − bucket; arena */
    hfx_activation pooler_act;
    int64_t rel_rows;        /* relative_names: the table's rows (relative_attention_num_buckets) */
    int64_t *rel_buckets;    /* [2·max_distance + 1]: the bucket by distance j − i, clamped; arena */
} encoder_cfg;

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

/* transformers' make_log_bucket_position for one distance, in float32 as torch computes it */
static int64_t log_bucket(int64_t rel, int64_t bucket_size, int64_t max_position) {
    int64_t mid = bucket_size / 2, sign = rel > 0 ? 1 : rel < 0 ? -1 : 0;
    int64_t abs_pos = rel < mid && rel > -mid ? mid - 1 : (rel < 0 ? -rel : rel);
    if (abs_pos <= mid) return rel;
    float ratio = logf((float)abs_pos / (float)mid) / logf((float)((double)(max_position - 1) / (double)mid));
    float log_pos = ceilf(ratio * (float)(mid - 1)) + (float)mid;
    return (int64_t)(log_pos * (float)sign);
}

/* DeBERTa-v2's embeddings and relative attention settings, and the index tables of its two
 * position terms by distance (the buckets are a function of i − j alone). */
static hfx_status parse_deberta(hfx_cfg c, hfx_arena *arena, encoder_cfg *m, hfx_error *err) {
    hfx_status st;
    int64_t types, buckets, max_rel, conv, pooler_size, head_size;
    const char *norm_rel, *pooler_act;
    bool legacy;
    if ((st = hfx_cfg_int_in_or(c, "type_vocab_size", 0, 0, 1 << 20, &types, err)) ||
        (st = hfx_cfg_bool_or(c, "position_biased_input", true, &m->positions, err)) ||
        (st = hfx_cfg_int_in_or(c, "embedding_size", m->hidden, 1, 1 << 20, &m->embed_size, err)) ||
        (st = hfx_cfg_bool_or(c, "relative_attention", false, &m->rel, err)) ||
        (st = hfx_cfg_int_in_or(c, "position_buckets", -1, -1, 1 << 20, &buckets, err)) ||
        (st = hfx_cfg_int_in_or(c, "max_relative_positions", -1, -1, 1 << 20, &max_rel, err)) ||
        (st = hfx_cfg_bool_or(c, "share_att_key", false, &m->share_key, err)) ||
        (st = hfx_cfg_str_or(c, "norm_rel_ebd", "none", &norm_rel, err)) ||
        (st = hfx_cfg_int_in_or(c, "conv_kernel_size", 0, 0, 1024, &conv, err)) ||
        (st = hfx_cfg_int_in_or(c, "pooler_hidden_size", m->hidden, 1, 1 << 20, &pooler_size, err)) ||
        (st = hfx_cfg_str_or(c, "pooler_hidden_act", "gelu", &pooler_act, err)) ||
        (st = hfx_cfg_int_in_or(c, "attention_head_size", m->hidden / m->heads, 1, 1 << 20, &head_size, err)) ||
        (st = hfx_cfg_bool_or(c, "legacy", true, &legacy, err)))
        return st;
    m->types = types > 0;
    m->type_vocab = types;
    if (conv > 0) /* DeBERTa-v2-xlarge's convolution after the first layer: not yet */
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: conv_kernel_size %lld (a convolution layer) is not supported yet",
                        c.where, (long long)conv);
    if (head_size != m->hidden / m->heads)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: attention_head_size %lld other than hidden_size / "
                        "num_attention_heads is not supported", c.where, (long long)head_size);
    if (pooler_size != m->hidden) /* transformers' pooler reads the first token's hidden state */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: pooler_hidden_size %lld is not hidden_size %lld", c.where,
                        (long long)pooler_size, (long long)m->hidden);
    if (!legacy)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: legacy false (the newer masked-LM head) is not supported yet",
                        c.where);
    if (!hfx_activation_from_name(pooler_act, &m->pooler_act))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: pooler_hidden_act '%s' is not supported (supported: %s)",
                        c.where, pooler_act, hfx_activation_names());
    m->rel_norm = strstr(norm_rel, "layer_norm") != NULL;
    /* pos_att_type: a list, or "p2c|c2p" */
    const json_t *pat = json_object_get(c.obj, "pos_att_type");
    if (json_is_string(pat)) {
        const char *s = json_string_value(pat);
        m->c2p = strstr(s, "c2p") != NULL, m->p2c = strstr(s, "p2c") != NULL;
    } else if (json_is_array(pat)) {
        size_t k;
        const json_t *v;
        json_array_foreach(pat, k, v) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, "c2p") != 0 && strcmp(s, "p2c") != 0))
                return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: pos_att_type[%zu] must be \"c2p\" or \"p2c\"", c.where, k);
            m->c2p |= strcmp(s, "c2p") == 0, m->p2c |= strcmp(s, "p2c") == 0;
        }
    } else if (pat && !json_is_null(pat)) {
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'pos_att_type': expected a list or a string", c.where);
    }
    if (!m->rel) return HFX_OK;
    if (max_rel < 1) max_rel = m->max_position;
    m->span = buckets > 0 ? buckets : max_rel;
    /* past D the indices saturate: the buckets (or distances) grow with |i − j| and are clamped */
    int64_t D = (max_rel > m->span ? max_rel : m->span) + 1;
    if (D > (1 << 20)) return hfx_fail(err, HFX_ERR_INVALID, "%s: max_relative_positions %lld too large", c.where,
                                      (long long)max_rel);
    m->rel_clamp = D;
    m->c2p_index = hfx_arena_alloc(arena, (size_t)(2 * D + 1) * sizeof *m->c2p_index);
    m->p2c_index = hfx_arena_alloc(arena, (size_t)(2 * D + 1) * sizeof *m->p2c_index);
    if (!m->c2p_index || !m->p2c_index) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t d = -D; d <= D; d++) {
        int64_t rel = buckets > 0 ? log_bucket(d, buckets, max_rel) : d, hi = 2 * m->span - 1;
        int64_t a = rel + m->span, b = m->span - rel;
        m->c2p_index[d + D] = a < 0 ? 0 : a > hi ? hi : a;
        m->p2c_index[d + D] = b < 0 ? 0 : b > hi ? hi : b;
    }
    return HFX_OK;
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
        (st = hfx_cfg_int_in_or(c, "type_vocab_size", 2, L->deberta ? 0 : 1, 1 << 20, &m->type_vocab, err)) ||
        (st = hfx_cfg_int_or(c, "pad_token_id", d->roberta_positions ? 1 : 0, &m->pad_id, err)) ||
        (st = hfx_cfg_activation(c, L->act, "gelu", &m->act, err)))
        return st;
    m->eps = L->eps_default;
    if (L->eps && (st = hfx_cfg_num_or(c, L->eps, L->eps_default, &m->eps, err))) return st;
    m->types = L->token_types, m->positions = L->learned_positions, m->embed_size = m->hidden;
    if (m->hidden % m->heads)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %lld is not a multiple of %s %lld", c.where, L->hidden,
                        (long long)m->hidden, L->heads, (long long)m->heads);
    if ((st = hfx_cfg_num_labels(c, &m->labels, err))) return st;
    if (d->head == HEAD_QA && m->labels != 2) /* transformers splits the two columns: start, end */
        return hfx_fail(err, HFX_ERR_INVALID, "%s: a question-answering head has num_labels 2 (start, end), not %lld",
                        c.where, (long long)m->labels);
    if ((st = hfx_cfg_bool_or(c, "tie_word_embeddings", true, &m->tied, err))) return st;
    m->head_act = m->act;
    if (L->mlm.act_key && (st = hfx_cfg_activation(c, L->mlm.act_key, "gelu", &m->head_act, err))) return st;
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
    if (L->deberta && (st = parse_deberta(c, arena, m, err))) return st;
    if (L->relative.table) {
        const relative_names *r = &L->relative;
        if ((st = hfx_cfg_int_in_or(c, "relative_attention_num_buckets", r->buckets, r->buckets, 1 << 16, &m->rel_rows,
                                    err)))
            return st;
        if (!(m->rel_buckets = hfx_arena_alloc(arena, (size_t)(2 * r->max_distance + 1) * sizeof *m->rel_buckets)))
            return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        for (int64_t dist = -r->max_distance; dist <= r->max_distance; dist++)
            m->rel_buckets[dist + r->max_distance] = hfx_relative_bucket(dist, true, r->buckets, r->max_distance);
    }
    if (!L->learned_positions) { /* rotary, a base per layer type; local layers see a window */
        int64_t local_attention, hd = m->hidden / m->heads;
        if ((st = hfx_cfg_int_in_or(c, "local_attention", 128, 0, INT32_MAX, &local_attention, err)) ||
            (st = parse_local_layers(c, arena, m, err)))
            return st;
        m->window = local_attention / 2;
        hfx_rope_source global = {"full_attention", 160000.0, "global_rope_theta", true, false, 0, NULL, NULL, false,
                                   false, false, false};
        hfx_rope_source local = {"sliding_attention", 10000.0, "local_rope_theta", true, false, 0, NULL, NULL, false,
                                  false, false, false};
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
    hfx_value *mask;    /* attention_mask [B,S] */
    hfx_dim batch, seq;
} enc_ctx;

static hfx_value *W(enc_ctx *c, int rank, const int64_t *shape, const char *name) {
    return hfx_weight(c->w, rank, shape, "%s%s", c->prefix, name);
}

/* name.weight [out, in], and name.bias [out] unless `bias` is false; and a LoRA adapter's update where one beside the
 * checkpoint targets it */
static hfx_value *dense_b(enc_ctx *c, hfx_value *x, int64_t in, int64_t out, const char *name, bool bias) {
    return hfx_linear_named(c->w, x, in, out, bias, "%s%s", c->prefix, name);
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

/* DeBERTa's disentangled attention, what every layer shares: the relative embeddings (LayerNorm'd
 * when norm_rel_ebd says) and the index matrices of its two terms, [B,H,S,S]. */
typedef struct deberta_rel {
    hfx_value *emb;                 /* [2·span, H] */
    hfx_value *c2p_idx, *p2c_idx;   /* [B,heads,S,S] i64 */
} deberta_rel;

static void deberta_rel_init(enc_ctx *c, deberta_rel *r, hfx_value *arange /* [1,S] */) {
    hfx_graph *g = c->g;
    const encoder_cfg *m = c->m;
    int64_t H = m->hidden, D = m->rel_clamp, two_span = 2 * m->span, n = 2 * D + 1;
    r->emb = W(c, 2, (int64_t[]){two_span, H}, "encoder.rel_embeddings.weight");
    if (m->rel_norm) r->emb = layer_norm(c, r->emb, "encoder.LayerNorm");
    /* distance i − j, clamped where the indices saturate, as a row of the tables */
    hfx_value *col = hfx_transpose(g, arange, 2, (int64_t[]){1, 0}); /* [S,1] */
    hfx_value *dist = hfx_op2(g, HFX_OP_SUB, col, arange);             /* [S,S] */
    dist = hfx_op2(g, HFX_OP_MIN, hfx_op2(g, HFX_OP_MAX, dist, hfx_const_i64(g, -D)), hfx_const_i64(g, D));
    dist = hfx_op2(g, HFX_OP_ADD, dist, hfx_const_i64(g, D));
    /* [B,heads,S,S]: GatherElements takes indices of the data's full shape */
    hfx_value *len = hfx_dim_of(g, arange, 1);
    hfx_value *shape_parts[4] = {hfx_unsqueeze(g, hfx_dim_of(g, c->mask, 0), 0),
                                 hfx_unsqueeze(g, hfx_const_i64(g, m->heads), 0), hfx_unsqueeze(g, len, 0),
                                 hfx_unsqueeze(g, len, 0)};
    hfx_value *shape = hfx_concat(g, 4, shape_parts, 0);
    hfx_dim dims[4] = {c->batch, hfx_dim_const(m->heads), c->seq, c->seq};
    hfx_value *tables[2] = {hfx_const_bytes(g, HFX_DTYPE_I64, 1, &n, m->c2p_index),
                            hfx_const_bytes(g, HFX_DTYPE_I64, 1, &n, m->p2c_index)};
    /* table[dist] as GatherElements over the table repeated on every row: [S, 2D+1] → [S,S] (a
     * Gather by a 2-D dynamic index has no torch.export lowering) */
    hfx_value *rows_parts[2] = {hfx_unsqueeze(g, len, 0), hfx_unsqueeze(g, hfx_const_i64(g, n), 0)};
    hfx_value *rows_shape = hfx_concat(g, 2, rows_parts, 0);
    hfx_value **out[2] = {&r->c2p_idx, &r->p2c_idx};
    for (int t = 0; t < 2; t++) {
        hfx_value *rows = hfx_expand(g, hfx_unsqueeze(g, tables[t], 0), rows_shape, 2, (hfx_dim[]){c->seq, hfx_dim_const(n)});
        hfx_value *idx = hfx_gather_elements(g, rows, dist, 1);         /* [S,S] */
        *out[t] = hfx_expand(g, hfx_unsqueeze(g, hfx_unsqueeze(g, idx, 0), 0), shape, 4, dims);
    }
}

/* One layer's position terms [B,heads,S,S], already scaled: content-to-position (q against the
 * position keys at bucket(i − j)) and position-to-content (k against the position queries at
 * bucket(j − i), transposed). The projections are the layer's own (share_att_key) or pos_*_proj. */
static hfx_value *deberta_rel_bias(enc_ctx *c, const deberta_rel *r, const encoder_layout *L, const char *p,
                                   hfx_value *q, hfx_value *k, double scale) {
    hfx_graph *g = c->g;
    const encoder_cfg *m = c->m;
    int64_t H = m->hidden, hd = H / m->heads, two_span = 2 * m->span;
    hfx_value *sum = NULL;
    char n[192];
    for (int t = 0; t < 2; t++) {
        bool c2p = t == 0;
        if (c2p ? !m->c2p : !m->p2c) continue;
        snprintf(n, sizeof n, "%s.%s", p, m->share_key ? (c2p ? L->k : L->q)
                                                       : (c2p ? "attention.self.pos_key_proj" : "attention.self.pos_query_proj"));
        hfx_value *pos = dense(c, r->emb, H, H, n);                            /* [2span, H] */
        pos = hfx_reshape(g, pos, 3, (hfx_dim[]){hfx_dim_const(two_span), hfx_dim_const(m->heads), hfx_dim_const(hd)});
        pos = hfx_transpose(g, pos, 3, (int64_t[]){1, 2, 0});                   /* [heads, hd, 2span] */
        hfx_value *att = hfx_op2(g, HFX_OP_MATMUL, c2p ? q : k, pos);           /* [B,heads,S,2span] */
        att = hfx_gather_elements(g, att, c2p ? r->c2p_idx : r->p2c_idx, 3);    /* [B,heads,S,S] */
        if (!c2p) att = hfx_transpose(g, att, 4, (int64_t[]){0, 1, 3, 2});
        att = hfx_op2(g, HFX_OP_MUL, att, hfx_const_scalar(g, att->dtype, scale));
        sum = sum ? hfx_op2(g, HFX_OP_ADD, sum, att) : att;
    }
    return sum ? hfx_cast(g, sum, HFX_DTYPE_F32) : hfx_const_f32(g, 0.0f);
}

/* Token, type and position embeddings of ids [B,S] → [B,S,hidden], normed; *words the token table
 * (a masked-LM head reads it), *arange the positions 0..S−1 [1,S]. */
static hfx_value *encoder_embed(enc_ctx *c, const encoder_desc *d, hfx_value *ids, hfx_value *types, hfx_value **words,
                                hfx_value **arange) {
    const encoder_layout *L = d->layout;
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden;
    char n[192];
    hfx_value *mask = c->mask;
    hfx_value *len = hfx_dim_of(g, ids, 1);
    *arange = hfx_unsqueeze(g, hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), c->seq), 0); /* [1,S] */
    hfx_value *pos = *arange;
    if (d->roberta_positions) { /* cumsum(ids != pad)·(ids != pad) + pad: padding keeps pad_id */
        hfx_value *real = hfx_cast(g, hfx_op1(g, HFX_OP_NOT, hfx_op2(g, HFX_OP_EQUAL, ids, hfx_const_i64(g, m->pad_id))),
                                   HFX_DTYPE_I64);
        pos = hfx_op2(g, HFX_OP_ADD, hfx_op2(g, HFX_OP_MUL, hfx_cumsum(g, real, 1), real), hfx_const_i64(g, m->pad_id));
    }
    int64_t E = m->embed_size; /* the tables' width (DeBERTa's embedding_size) */
    snprintf(n, sizeof n, "%s.weight", L->words);
    *words = W(c, 2, (int64_t[]){m->vocab, E}, n);
    hfx_value *x = hfx_gather(g, *words, ids, 0);
    if (types) {
        snprintf(n, sizeof n, "%s.weight", L->types);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, W(c, 2, (int64_t[]){m->type_vocab, E}, n), types, 0));
    }
    if (m->positions) {
        snprintf(n, sizeof n, "%s.weight", L->positions);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, W(c, 2, (int64_t[]){m->max_position, E}, n), pos, 0));
    }
    if (E != H) x = dense_b(c, x, E, H, "embeddings.embed_proj", false);
    x = layer_norm(c, x, L->embed_norm);
    if (L->deberta) /* DeBERTa zeroes the embeddings of padding */
        x = hfx_op2(g, HFX_OP_MUL, x, hfx_unsqueeze(g, hfx_cast(g, mask, x->dtype), 2));
    return x;
}

/* The attention biases [B,1,S|1,S] every layer reads: bidirectional, a key visible unless it is
 * padding (DeBERTa: padded queries too), and on local layers within the window; the rotary tables
 * and DeBERTa's relative positions. */
typedef struct encoder_masks {
    hfx_value *bias, *local_bias;
    deberta_rel rel;
    hfx_value *cos, *sin, *local_cos, *local_sin;
} encoder_masks;

static encoder_masks encoder_attention_inputs(enc_ctx *c, const encoder_layout *L, hfx_value *arange, hfx_dtype dt) {
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *mask = c->mask;
    encoder_masks r = {0};
    /* bidirectional: a key is visible unless it is padding (and, on local layers, |i − j| ≤ window) */
    hfx_value *keep = hfx_unsqueeze(g, hfx_unsqueeze(g, hfx_cast(g, mask, HFX_DTYPE_BOOL), 1), 1); /* [B,1,1,S] */
    hfx_value *lowest = hfx_const_f32(g, -3.4028234663852886e38f), *zero = hfx_const_f32(g, 0.0f);
    if (L->deberta) /* padded queries are masked too: mask_i · mask_j */
        keep = hfx_op2(g, HFX_OP_AND, keep, hfx_transpose(g, keep, 4, (int64_t[]){0, 1, 3, 2}));
    r.bias = hfx_where(g, keep, zero, lowest);
    if (m->rel) deberta_rel_init(c, &r.rel, arange);
    if (L->relative.table) { /* [B,heads,S,S]: the same bias on every layer */
        const relative_names *rn = &L->relative;
        hfx_value *len = hfx_dim_of(g, arange, 1);
        hfx_value *pos = hfx_range(g, hfx_const_i64(g, 0), len, hfx_const_i64(g, 1), c->seq);
        hfx_value *table = W(c, 2, (int64_t[]){m->rel_rows, m->heads}, rn->table);
        r.bias = hfx_op2(g, HFX_OP_ADD, r.bias,
                         hfx_relative_bias(g, table, m->rel_buckets, rn->max_distance, pos, len, c->seq));
    }
    if (!L->learned_positions) {
        hfx_rope_cos_sin(g, &m->rope, arange, dt, &r.cos, &r.sin);
        hfx_rope_cos_sin(g, &m->local_rope, arange, dt, &r.local_cos, &r.local_sin);
        hfx_value *qi = hfx_transpose(g, arange, 2, (int64_t[]){1, 0}), *win = hfx_const_i64(g, m->window); /* [S,1] */
        hfx_value *near = hfx_op2(g, HFX_OP_AND, hfx_op2(g, HFX_OP_LESS_EQUAL, hfx_op2(g, HFX_OP_SUB, qi, arange), win),
                                  hfx_op2(g, HFX_OP_LESS_EQUAL, hfx_op2(g, HFX_OP_SUB, arange, qi), win)); /* [S,S] */
        r.local_bias = hfx_where(g, hfx_op2(g, HFX_OP_AND, keep, near), zero, lowest);        /* [B,1,S,S] */
    }
    return r;
}

/* Encoder layer i over x [B,S,hidden]: attention (rotary, relative positions) and the MLP, post- or
 * pre-normed. */
static hfx_value *encoder_layer(enc_ctx *c, const encoder_layout *L, const hfx_build_opts *o, const encoder_masks *r,
                                int64_t i, hfx_value *x) {
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t H = m->hidden, hd = H / m->heads;
    char n[192];
    char p[128];
    snprintf(p, sizeof p, L->layer, (long long)i);
#define N(leaf) (snprintf(n, sizeof n, "%s.%s", p, leaf), n)
    int64_t perm[4] = {0, 2, 1, 3};
    bool local = !L->learned_positions && m->local[i];
    /* pre-norm: layer 0 reads the embeddings' norm directly (its attn_norm is Identity) */
    hfx_value *h = L->pre_norm && i > 0 ? layer_norm(c, x, N(L->attn_norm)) : x;
    hfx_value *q, *k, *v;
    project_qkv(c, L, h, p, o, &q, &k, &v);
    if (!L->learned_positions) {
        q = hfx_rope_apply(g, q, local ? r->local_cos : r->cos, local ? r->local_sin : r->sin, false);
        k = hfx_rope_apply(g, k, local ? r->local_cos : r->cos, local ? r->local_sin : r->sin, false);
    }
    double scale = 1.0 / sqrt((double)hd);
    hfx_value *layer_bias = local ? r->local_bias : r->bias;
    if (L->deberta) { /* scores over √(d · (1 + one per position term)), plus those terms */
        scale = 1.0 / sqrt((double)hd * (double)(1 + m->c2p + m->p2c));
        if (m->rel) layer_bias = hfx_op2(g, HFX_OP_ADD, r->bias, deberta_rel_bias(c, &r->rel, L, p, q, k, scale));
    }
    hfx_value *a = hfx_attention(g, q, k, v, layer_bias, scale, 0, 0);
    a = hfx_reshape(g, hfx_transpose(g, a, 4, perm), 3, (hfx_dim[]){o->batch, o->seq, hfx_dim_const(H)});
    hfx_value *ao = dense_b(c, a, H, H, N(L->o), m->attn_bias);
    if (L->pre_norm) {
        x = hfx_op2(g, HFX_OP_ADD, x, ao);
        x = hfx_op2(g, HFX_OP_ADD, x, mlp(c, L, layer_norm(c, x, N(L->mlp_norm)), p));
    } else {
        x = layer_norm(c, hfx_op2(g, HFX_OP_ADD, ao, x), N(L->attn_norm));
        x = layer_norm(c, hfx_op2(g, HFX_OP_ADD, mlp(c, L, x, p), x), N(L->mlp_norm));
    }
#undef N
    return x;
}

/* The task head over the final hidden states x [B,S,hidden] and its outputs. */
static void encoder_head(enc_ctx *c, const encoder_desc *d, const hfx_build_opts *o, hfx_value *x, hfx_value *words) {
    const encoder_layout *L = d->layout;
    const encoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *mask = c->mask;
    int64_t H = m->hidden;
    hfx_dim bs[2] = {o->batch, o->seq};
    char n[192];
    char pooler[160];
    snprintf(pooler, sizeof pooler, "%spooler.dense.weight", c->prefix);
    enc_ctx top = *c; /* a head's own weights are not under the base model's prefix */
    top.prefix = "";
    if (d->head != HEAD_NONE && d->head != HEAD_BERT_CLASSIFIER) { /* no pooler in these: a checkpoint's is unused */
        snprintf(n, sizeof n, "%spooler.dense.bias", c->prefix);
        hfx_weight_ignore(c->w, pooler);
        hfx_weight_ignore(c->w, n);
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
        if (o->pooling.n || o->states_only) { /* the pooler unused: pooled here (optimum's names for a
                                                 sentence-transformers export), or by the runtime's pipeline */
            snprintf(n, sizeof n, "%spooler.dense.bias", c->prefix);
            hfx_weight_ignore(c->w, pooler);
            hfx_weight_ignore(c->w, n);
            hfx_graph_output(g, x, o->states_only ? "last_hidden_state" : "token_embeddings");
            if (o->states_only) break;
            hfx_graph_output(g, hfx_sentence_embedding(g, c->w, &o->pooling, x, mask, o->batch, H), "sentence_embedding");
            break;
        }
        hfx_graph_output(g, x, "last_hidden_state");
        if (hfx_weight_exists(c->w, pooler))
            hfx_graph_output(g, hfx_op1(g, HFX_OP_TANH, dense(c, first_token(g, x), H, H, "pooler.dense")), "pooler_output");
        break;
    case HEAD_BERT_CLASSIFIER: { /* classifier(tanh(pooler(first token))) */
        hfx_value *pooled = hfx_op1(g, HFX_OP_TANH, dense(c, first_token(g, x), H, H, "pooler.dense"));
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
    case HEAD_DEBERTA_CLASSIFIER: { /* classifier(act(pooler.dense(first token))) */
        hfx_value *pooled = hfx_activate(g, m->pooler_act, dense(&top, first_token(g, x), H, H, "pooler.dense"));
        hfx_graph_output(g, dense(&top, pooled, H, m->labels, "classifier"), "logits");
        break;
    }
    case HEAD_MODERN_CLASSIFIER: { /* the first token, or the mask-weighted mean (a row without any kept
                                      token: zeros, where transformers divides 0 by 0); then head, classifier */
        static const hfx_pooling mean = {.n = 1, .modes = {HFX_POOL_MEAN}};
        hfx_value *pooled = m->mean_pooling ? hfx_sentence_embedding(g, NULL, &mean, x, mask, o->batch, H) : first_token(g, x);
        hfx_graph_output(g, dense(&top, head_transform(&top, pooled), H, m->labels, "classifier"), "logits");
        break;
    }
    }
}

static hfx_status encoder_build(const void *desc_, const void *cfg_, const hfx_checkpoint *ck,
                                const hfx_build_opts *o, hfx_graph *g, hfx_error *err) {
    const encoder_desc *d = desc_;
    const encoder_layout *L = d->layout;
    const encoder_cfg *m = cfg_;
    if (o->cache != HFX_CACHE_NONE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s is an encoder: it has no generation components", d->architecture);
    if (o->pooling.score)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: modules.json's LogitScore reads a causal LM's logits, which an "
                        "encoder has not", d->architecture);
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
    enc_ctx c = {g, &w, m, prefix, NULL, o->batch, o->seq};
    hfx_dim bs[2] = {o->batch, o->seq};
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, bs);
    hfx_value *types = m->types ? hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, bs) : NULL;
    c.mask = mask, c.batch = o->batch, c.seq = o->seq;
    hfx_value *words, *arange;
    hfx_value *x = encoder_embed(&c, d, ids, types, &words, &arange);
    encoder_masks r = encoder_attention_inputs(&c, L, arange, o->dtype);
    for (int64_t i = 0; i < m->layers && !g->failed; i++) x = encoder_layer(&c, L, o, &r, i, x);
    if (L->final_norm) x = layer_norm(&c, x, L->final_norm);
    encoder_head(&c, d, o, x, words);
    hfx_graph_set_meta(g, "architecture", d->architecture);
    st = hfx_graph_status(g, err);
    if (st == HFX_OK) st = hfx_weights_finish(&w, err);
    hfx_weights_free(&w);
    return st;
}

/* An encoder exports its forward pass only. */
static const hfx_component forward[] = {{.name = "model", .role = "model", .logits_to_keep = -1}};
static const char *const typed_inputs[] = {"input_ids", "attention_mask", "token_type_ids", NULL};
static const char *const untyped_inputs[] = {"input_ids", "attention_mask", NULL};

/* The bare model's token embeddings are what sentence-transformers pools; a head's are not. */
static bool encoder_pools(const void *desc) { return ((const encoder_desc *)desc)->head == HEAD_NONE; }

/* What every encoder family shares; they differ in their inputs. */
/* The heads' output classes (the same for every lineage); a bare encoder's its lineage's (BERT's with pooling and
 * cross-attentions, DistilBERT's plain): encoder_layout.base_output. */
static hfx_torch_signature encoder_torch_signature(const void *desc_) {
    const encoder_desc *d = desc_;
    static const char *const args[] = {"input_ids", "attention_mask", "token_type_ids", NULL};
    const char *cls = d->head == HEAD_NONE              ? d->layout->base_output
                      : d->head == HEAD_TOKEN_CLASSIFIER ? "TokenClassifierOutput"
                      : d->head == HEAD_QA               ? "QuestionAnsweringModelOutput"
                      : d->head == HEAD_MASKED_LM        ? "MaskedLMOutput"
                                                          : "SequenceClassifierOutput";
    return (hfx_torch_signature){.args = args, .output_class = cls};
}

#define ENCODER_FAMILY                                                                                   \
    .cfg_size = sizeof(encoder_cfg), .parse = encoder_parse, .build_forward = encoder_build,             \
    .exports = {[HFX_EXPORT_FORWARD] = {forward, 1}}, .pools = encoder_pools,                           \
    .torch_signature = encoder_torch_signature

/* Two families that differ only in their inputs: with token types (BERT, RoBERTa) or without. */
const hfx_arch_family hfx_encoder_family = {
    ENCODER_FAMILY,
    .sequence_inputs = typed_inputs,
};
const hfx_arch_family hfx_untyped_encoder_family = {
    ENCODER_FAMILY,
    .sequence_inputs = untyped_inputs,
};

/* DeBERTa-v2: token types only where type_vocab_size > 0 (v3 has none). */
static const char *const *deberta_inputs(const void *cfg) {
    return ((const encoder_cfg *)cfg)->types ? typed_inputs : untyped_inputs;
}
const hfx_arch_family hfx_deberta_family = {
    ENCODER_FAMILY,
    .sequence_inputs = typed_inputs,
    .sequence_inputs_of = deberta_inputs,
};

#define ENC(sym, arch_, prefix_, roberta_, head_, layout_) \
    const encoder_desc sym = {.architecture = arch_, .prefix = prefix_, .roberta_positions = roberta_, .head = head_, \
                              .layout = &layout_};
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
ENC(hfx_mpnet_model, "MPNetModel", "mpnet", true, HEAD_NONE, mpnet_layout)
ENC(hfx_mpnet_classifier, "MPNetForSequenceClassification", "mpnet", true, HEAD_ROBERTA_CLASSIFIER, mpnet_layout)
ENC(hfx_mpnet_token_classifier, "MPNetForTokenClassification", "mpnet", true, HEAD_TOKEN_CLASSIFIER, mpnet_layout)
ENC(hfx_mpnet_qa, "MPNetForQuestionAnswering", "mpnet", true, HEAD_QA, mpnet_layout)
ENC(hfx_mpnet_mlm, "MPNetForMaskedLM", "mpnet", true, HEAD_MASKED_LM, mpnet_layout)
ENC(hfx_deberta_model, "DebertaV2Model", "deberta", false, HEAD_NONE, deberta_layout)
ENC(hfx_deberta_classifier, "DebertaV2ForSequenceClassification", "deberta", false, HEAD_DEBERTA_CLASSIFIER,
    deberta_layout)
ENC(hfx_deberta_token_classifier, "DebertaV2ForTokenClassification", "deberta", false, HEAD_TOKEN_CLASSIFIER,
    deberta_layout)
ENC(hfx_deberta_qa, "DebertaV2ForQuestionAnswering", "deberta", false, HEAD_QA, deberta_layout)
ENC(hfx_deberta_mlm, "DebertaV2ForMaskedLM", "deberta", false, HEAD_MASKED_LM, deberta_layout)
