/* The decoder-only template's graph: embeddings, each layer's blocks in the descriptor's layout
 * (attention.c, mla.c, decoder_mixers.c, ffn.c, moe.c), the final norm and the head; the family. */
#include "arch/decoder_blocks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/mask.h"
#include "arch/weights.h"
#include "base/status.h"

static hfx_status decoder_parse(const void *desc_, hfx_cfg c, hfx_arena *arena, void *cfg, hfx_error *err) {
    return hfx_decoder_parse(desc_, c, arena, cfg, err);
}

static hfx_decoder_names resolve_names(const hfx_decoder_desc *d) {
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
#undef TAKE
    return n;
}

/* x + block·residual_multiplier (Granite scales what each block adds). */
static hfx_value *residual(layer_ctx *c, hfx_value *x, hfx_value *block) {
    if (c->m->residual_mult != 1.0)
        block = hfx_op2(c->g, HFX_OP_MUL, block, hfx_const_scalar(c->g, block->dtype, c->m->residual_mult));
    return hfx_op2(c->g, HFX_OP_ADD, x, block);
}

static hfx_value *decoder_layer(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *cos,
                                hfx_value *sin, hfx_value *bias) {
    int64_t n = c->m->hidden;
    char p[160];
#define P(name) hfx_dec_name(c, i, NULL, name, p, sizeof p)
    switch (c->m->layout) {
    case HFX_LAYOUT_PARALLEL: { /* mlp(norm2(x)) + attn(norm1(x)) + x, in transformers' order */
        hfx_value *a = hfx_dec_mixer(c, i, hfx_dec_norm(c, x, n, P(c->n.norm1)), cos, sin, bias);
        hfx_value *f = hfx_dec_ffn(c, i, hfx_dec_norm(c, x, n, P(c->n.norm2)));
        return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, f, a), x);
    }
    case HFX_LAYOUT_PARALLEL_SHARED: { /* x + attn(h) + mlp(h), h = norm1(x) */
        hfx_value *h = hfx_dec_norm(c, x, n, P(c->n.norm1));
        hfx_value *a = hfx_dec_mixer(c, i, h, cos, sin, bias);
        return hfx_op2(c->g, HFX_OP_ADD, hfx_op2(c->g, HFX_OP_ADD, x, a), hfx_dec_ffn(c, i, h));
    }
    case HFX_LAYOUT_PRE:
        if (c->m->residual_f32 && c->o->dtype != HFX_DTYPE_F32) { /* the stream in f32, each block in the weights' dtype */
            hfx_value *block = hfx_dec_mixer(c, i, hfx_dec_norm(c, hfx_cast(c->g, x, c->o->dtype), n, P(c->n.norm1)), cos, sin, bias);
            x = hfx_op2(c->g, HFX_OP_ADD, hfx_cast(c->g, x, HFX_DTYPE_F32), hfx_cast(c->g, block, HFX_DTYPE_F32));
        } else {
            x = residual(c, x, hfx_dec_mixer(c, i, hfx_dec_norm(c, x, n, P(c->n.norm1)), cos, sin, bias));
        }
        return c->m->no_mlp ? x : residual(c, x, hfx_dec_ffn(c, i, hfx_dec_norm(c, x, n, P(c->n.norm2))));
    case HFX_LAYOUT_SANDWICH: {
        hfx_value *a = hfx_dec_mixer(c, i, hfx_dec_norm(c, x, n, P(c->n.norm1)), cos, sin, bias);
        x = residual(c, x, hfx_dec_norm(c, a, n, P(c->n.norm2)));
        hfx_value *f = hfx_dec_ffn(c, i, hfx_dec_norm(c, x, n, P(c->n.pre2)));
        return residual(c, x, hfx_dec_norm(c, f, n, P(c->n.post2)));
    }
    case HFX_LAYOUT_POST:
        x = residual(c, x, hfx_dec_norm(c, hfx_dec_mixer(c, i, x, cos, sin, bias), n, P(c->n.norm2)));
        return residual(c, x, hfx_dec_norm(c, hfx_dec_ffn(c, i, x), n, P(c->n.post2)));
    }
    return x;
#undef P
}

/* The LM head over the final hidden states: [B,S,hidden] → [B,S,vocab]. */
static hfx_value *lm_logits(layer_ctx *c, hfx_value *x, hfx_value *embed) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *head;
    if (m->tied) {
        head = embed;
        hfx_weight_ignore(c->w, c->n.lm_head); /* transformers ties it to the embeddings */
    } else {
        head = hfx_weight(c->w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", c->n.lm_head);
    }
    hfx_value *bias = NULL;
    if (c->d->lm_head_bias) { /* "<head>.bias" beside "<head>.weight" */
        char name[160];
        size_t n = strlen(c->n.lm_head), w = strlen(".weight");
        if (n > w && strcmp(c->n.lm_head + n - w, ".weight") == 0) n -= w;
        snprintf(name, sizeof name, "%.*s.bias", (int)n, c->n.lm_head);
        bias = hfx_weight(c->w, 1, &m->vocab, "%s", name);
    }
    hfx_value *logits = hfx_linear(g, x, head, bias);
    if (m->logits_mul != 1.0)
        logits = hfx_op2(g, HFX_OP_MUL, logits, hfx_const_scalar(g, c->o->dtype, m->logits_mul));
    if (m->logits_div != 1.0)
        logits = hfx_op2(g, HFX_OP_DIV, logits, hfx_const_scalar(g, c->o->dtype, m->logits_div));
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
    hfx_value *score = hfx_weight(c->w, 2, (int64_t[]){m->labels, m->hidden}, "score.weight");
    return hfx_linear(g, pooled, score, NULL);
}

/* x [B,S,hidden] times √hidden (Gemma's embedding scale: a float32 tensor, then in the weights'
 * dtype). */
static hfx_value *embed_scaled(hfx_graph *g, const hfx_decoder_cfg *m, const hfx_build_opts *o, hfx_value *x) {
    return hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, o->dtype, (float)sqrt((double)m->hidden)));
}

/* The weights a decoder reads: its own, or its host's (a dry run of the whole model), through the
 * host's renames and with the other components' stacks set aside; *w points at them. */
static hfx_status open_weights(const hfx_decoder_desc *d, const hfx_checkpoint *ck, const hfx_build_opts *o,
                               const hfx_decoder_host *host, hfx_graph *g, hfx_weights *own, hfx_weights **w,
                               hfx_error *err) {
    *w = host && host->weights ? host->weights : own;
    if (*w == own) {
        hfx_status st = hfx_weights_init(own, ck, g, o->dtype, host ? host->architecture : d->architecture, err);
        if (st) return st;
        for (const char *const *f = host ? host->foreign : NULL; f && *f; f++) hfx_weights_ignore_stack(own, *f);
        if (d->unused_stack) hfx_weights_ignore_stack(own, d->unused_stack);
    }
    if (host) (*w)->rename = host->rename;
    return HFX_OK;
}

/* The end of a build's reads: its own weights checked for leftovers and freed, the host's given
 * back with their names as they were. */
static hfx_status close_weights(hfx_weights *own, hfx_weights *w, hfx_status st, hfx_error *err) {
    if (w != own) {
        w->rename = NULL;
        return st;
    }
    if (st == HFX_OK) st = hfx_weights_finish(own, err);
    hfx_weights_free(own);
    return st;
}

hfx_status hfx_decoder_build(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                             const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g, hfx_error *err) {
    hfx_weights own, *w;
    hfx_status st = open_weights(d, ck, o, host, g, &own, &w, err);
    if (st) return st;
    bool embeds_in = host && host->embeds_in;
    hfx_value **cache_out = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_out);
    int *cache_state = calloc((size_t)m->layers * CACHE_PARTS + 1, sizeof *cache_state);
    if (!cache_out || !cache_state) {
        free(cache_out);
        free(cache_state);
        close_weights(&own, w, HFX_OK, err);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    layer_ctx c = {g, w, d, m, o, o->batch, o->seq, resolve_names(d), NULL, cache_out, cache_state, NULL, NULL, NULL};
    bool seed = o->io == HFX_IO_SEED && o->cache != HFX_CACHE_NONE;
    bool states = false, attends = false, rotary = false; /* recurrent layers (their state as cache), attention
                                                            layers, attention layers with rotary */
    for (int64_t i = 0; i < m->layers; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        bool attention = kind == HFX_MIXER_ATTENTION || kind == HFX_MIXER_PARALLEL;
        states |= kind != HFX_MIXER_ATTENTION, attends |= attention;
        rotary |= attention && !(m->no_rope && m->no_rope[i]);
    }
    for (int64_t i = 0; seed && o->cache == HFX_CACHE_STATIC && i < m->layers; i++)
        if (m->window[i]) {
            free(cache_out);
            free(cache_state);
            close_weights(&own, w, HFX_OK, err);
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" with a static cache does not cover sliding-window "
                                                      "layers yet (the seed keeps a window-sized cache per sliding layer); "
                                                      "export with a dynamic cache or io \"optimum\"",
                            d->architecture);
        }
    const char *opt = d->names ? d->names->optional_prefix : NULL;
    size_t opt_len = opt ? strlen(opt) : 0;
    if (c.n.embed_alt && !hfx_weight_exists(w, c.n.embed) && hfx_weight_exists(w, c.n.embed_alt)) c.n.embed = c.n.embed_alt;
    if (opt && !hfx_weight_exists(w, c.n.embed) && hfx_weight_exists(w, c.n.embed + opt_len)) {
        const char **fields[] = {&c.n.embed, &c.n.layer, &c.n.pos_embed, &c.n.final_norm};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            if (*fields[f] && strncmp(*fields[f], opt, opt_len) == 0) *fields[f] += opt_len;
    }

    /* attention_mask spans what attention sees: the prompt, the past plus the new tokens, or the
     * static cache's M slots */
    hfx_dim mask_len = o->seq;
    if (o->cache == HFX_CACHE_STATIC) mask_len = o->max_cache;
    else if (o->cache == HFX_CACHE_DYNAMIC && o->has_past) {
        bool ok;
        mask_len = hfx_dim_add(o->past, o->seq, &ok);
    }
    hfx_dim bs[2] = {o->batch, o->seq};
    /* [B,S] token ids, or the caller's [B,S,hidden] embeddings (a VLM's, images spliced in) */
    hfx_value *ids = embeds_in ? NULL : hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, bs);
    hfx_value *x = embeds_in ? hfx_graph_input(g, "inputs_embeds", o->dtype, 3,
                                               (hfx_dim[]){o->batch, o->seq, hfx_dim_const(m->hidden)})
                             : NULL;
    hfx_value *attn_mask = NULL, *pos, *slots = NULL;
    if (seed) { /* the seed's inputs: a 4-D boolean mask in a static-cache step only */
        if (o->cache == HFX_CACHE_STATIC && o->reads_state && attends) {
            hfx_value *mask4 = hfx_graph_input(g, m->layer_types ? "attention_mask.full_attention" : "attention_mask",
                                               HFX_DTYPE_BOOL, 4,
                                               (hfx_dim[]){o->batch, hfx_dim_const(1), o->seq, o->max_cache});
            c.seed_mask = hfx_where(g, mask4, hfx_const_f32(g, 0.0f), hfx_const_f32(g, -FLT_MAX));
        }
    } else {
        attn_mask = hfx_graph_input(g, "attention_mask", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, mask_len});
    }
    /* [B,S], or M-RoPE's [3,B,S]: temporal, height and width positions (the caller's, as
     * transformers' get_rope_index makes them) */
    bool mrope = m->rope.mrope_section[0] || m->rope.mrope_section[1] || m->rope.mrope_section[2];
    pos = d->attention_free ? NULL /* no positions: Mamba2's forward takes none */
          : mrope ? hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 3, (hfx_dim[]){hfx_dim_const(3), o->batch, o->seq})
                  : hfx_graph_input(g, "position_ids", HFX_DTYPE_I64, 2, bs);
    if (!seed && o->cache == HFX_CACHE_STATIC) {
        c.cache_position = hfx_graph_input(g, "cache_position", HFX_DTYPE_I64, 1, &o->seq);
        slots = c.cache_position;
    } else if (!seed) {
        slots = hfx_mask_slots_after_past(g, attn_mask, o->seq, hfx_dim_of(g, ids ? ids : x, 1));
    }

    /* the table, read here also by a tied head; the embed_tokens component reads it otherwise */
    hfx_value *embed = NULL;
    if (!embeds_in || m->tied) embed = hfx_weight(w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", c.n.embed);
    else hfx_weight_ignore(w, c.n.embed);
    if (!embeds_in) x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden] */
    /* Gemma's scale: here, unless the caller's embeddings already carry it (Gemma 3's scaled table) */
    if (d->embed_sqrt_hidden && !(embeds_in && d->embed_scale_in_table)) x = embed_scaled(g, m, o, x);
    if (m->embed_mult != 1.0) x = hfx_op2(g, HFX_OP_MUL, x, hfx_const_scalar(g, o->dtype, m->embed_mult));

    hfx_value *cos = NULL, *sin = NULL, *local_cos = NULL, *local_sin = NULL;
    if (d->learned_positions) {
        hfx_value *wpe = hfx_weight(w, 2, (int64_t[]){m->max_position, m->hidden}, "%s", c.n.pos_embed);
        x = hfx_op2(g, HFX_OP_ADD, x, hfx_gather(g, wpe, pos, 0));
    } else if (rotary) {
        hfx_rope_cos_sin(g, &m->rope, pos, d->rope_f32 ? HFX_DTYPE_F32 : o->dtype, &cos, &sin);
    }
    if (d->local_rope) hfx_rope_cos_sin(g, &m->local_rope, pos, o->dtype, &local_cos, &local_sin);
    hfx_mask_builder mb;
    if (!seed && attends) hfx_mask_init(g, &mb, attn_mask, slots);
    if (states && !seed) /* [B,S,1]: which of this call's tokens are real (the mask at their slots) */
        c.new_mask = hfx_unsqueeze(g, hfx_cast(g, hfx_gather(g, attn_mask, slots, 1), o->dtype), -1);
    if (!seed && host && host->image_blocks)
        hfx_mask_add_blocks(g, &mb, hfx_graph_input(g, "token_type_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, mask_len}));
    hfx_value *full_bias = NULL, *window_bias = NULL;
    int64_t bias_window = -1;

    for (int64_t i = 0; i < m->layers && !g->failed; i++) {
        hfx_value *bias = NULL; /* the seed profile's is made in the first layer (seed_cache) */
        bool sliding = m->window[i] != 0;
        if (m->mixer && m->mixer[i] != HFX_MIXER_ATTENTION && m->mixer[i] != HFX_MIXER_PARALLEL) {
            /* no attention bias: the layer's own state */
        } else if (!seed && !sliding) {
            if (!full_bias) full_bias = hfx_mask_bias(g, &mb, 0);
            bias = full_bias;
        } else if (!seed) {
            if (bias_window != m->window[i]) { /* one window size per model in practice */
                window_bias = hfx_mask_bias(g, &mb, m->window[i]);
                bias_window = m->window[i];
            }
            bias = window_bias;
        }
        bool local = d->local_rope && sliding;
        x = decoder_layer(&c, i, x, local ? local_cos : cos, local ? local_sin : sin, bias);
    }
    if (o->logits_last) x = hfx_slice(g, x, 1, -1, INT64_MAX); /* [B,1,hidden]: transformers' logits_to_keep=1 */
    x = hfx_dec_norm(&c, hfx_cast(g, x, o->dtype), m->hidden, c.n.final_norm); /* an f32 residual stream: cast back */
    hfx_graph_output(g, d->seq_classifier ? classify(&c, x, ids) : lm_logits(&c, x, embed), "logits");
    for (int64_t i = 0; i < m->layers && o->cache != HFX_CACHE_NONE && !g->failed; i++) {
        hfx_mixer_kind kind = m->mixer ? m->mixer[i] : HFX_MIXER_ATTENTION;
        if (kind != HFX_MIXER_ATTENTION) { /* a recurrent layer's states */
            for (int k = 0; k < (kind == HFX_MIXER_SHORT_CONV ? 1 : 2); k++)
                hfx_state_write(g, cache_state[CACHE_PARTS * i + STATE_SLOT + k],
                                cache_out[CACHE_PARTS * i + STATE_SLOT + k], hfx_dec_state_names(&c, i, k).output);
            if (kind != HFX_MIXER_PARALLEL) continue; /* (Falcon-H1's layers attend too) */
        }
        bool third = seed && (o->cache == HFX_CACHE_STATIC || m->window[i]); /* the counter, or the window */
        for (int kv = 0; kv < (third ? 3 : 2); kv++) {
            char name[128];
            if (seed) { /* a prefill's new cache is cache.layers.*; what a step updates output.cache.layers.* */
                const char *const parts[3] = {"keys", "values",
                                              o->cache == HFX_CACHE_STATIC ? "cumulative_length" : "_sliding_window_tensor"};
                bool updated = kv == 2 || (o->cache == HFX_CACHE_DYNAMIC ? o->has_past : o->reads_state);
                snprintf(name, sizeof name, "%scache.layers.%lld.%s", updated ? "output." : "", (long long)i, parts[kv]);
            } else if (o->cache == HFX_CACHE_DYNAMIC) {
                snprintf(name, sizeof name, "present.%lld.%s", (long long)i, kv ? "value" : "key");
            } else {
                snprintf(name, sizeof name, "output.past_key_values.%lld.%s", (long long)i, kv ? "value" : "key");
            }
            hfx_state_write(g, cache_state[CACHE_PARTS * i + kv], cache_out[CACHE_PARTS * i + kv], name);
        }
    }
    hfx_graph_set_meta(g, "architecture", host ? host->architecture : d->architecture);

    st = hfx_graph_status(g, err);
    st = close_weights(&own, w, st, err);
    free(cache_out);
    free(cache_state);
    return st;
}

hfx_status hfx_decoder_build_embed(const hfx_decoder_desc *d, const hfx_decoder_cfg *m, const hfx_checkpoint *ck,
                                   const hfx_build_opts *o, const hfx_decoder_host *host, hfx_graph *g,
                                   hfx_error *err) {
    hfx_weights own, *w;
    hfx_status st = open_weights(d, ck, o, host, g, &own, &w, err);
    if (st) return st;
    hfx_decoder_names n = resolve_names(d);
    hfx_value *ids = hfx_graph_input(g, "input_ids", HFX_DTYPE_I64, 2, (hfx_dim[]){o->batch, o->seq});
    hfx_value *embed = hfx_weight(w, 2, (int64_t[]){m->vocab, m->hidden}, "%s", n.embed);
    hfx_value *x = hfx_gather(g, embed, ids, 0); /* [B,S,hidden], and the table's own scale */
    hfx_graph_output(g, d->embed_sqrt_hidden && d->embed_scale_in_table ? embed_scaled(g, m, o, x) : x, "inputs_embeds");
    if (w == &own) hfx_weights_ignore_rest(w); /* the language model's component checks every other weight */
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
    return m->rope.type == HFX_ROPE_LONGROPE ? m->rope.switch_len + 1 : 0;
}

static hfx_torch_signature decoder_torch_signature(const void *desc) {
    static const char *const llama[] = {"input_ids", "attention_mask", "position_ids", "cache", NULL};
    const hfx_decoder_desc *d = desc;
    return (hfx_torch_signature){d->forward_args ? d->forward_args : llama,
                                 d->output_class ? d->output_class : "CausalLMOutputWithPast", d->step_nones};
}

/* A causal LM exports its forward pass, or a prompt graph and a one-token step that reads the
 * cache the previous call wrote, or one graph for both (docs/GENERATION.md). */
/* The prompt piece (hfx_arch_prompt_piece): the scan's chunk of the model's recurrent layers —
 * Mamba2's chunk_size, 64 for a gated delta-net (transformers' chunk), 16 for Mamba (its decays
 * are [B, inner, state, S, S]); 0 without them (LFM2's convolutions cost what attention does). */
static int64_t decoder_prompt_piece(const void *cfg_) {
    const hfx_decoder_cfg *m = cfg_;
    int64_t piece = 0;
    for (int64_t i = 0; m->mixer && i < m->layers; i++) {
        int64_t p = m->mixer[i] == HFX_MIXER_MAMBA2 || m->mixer[i] == HFX_MIXER_PARALLEL ? m->ssm.chunk
                    : m->mixer[i] == HFX_MIXER_DELTA                                  ? 64
                    : m->mixer[i] == HFX_MIXER_MAMBA1                                 ? 16
                                                                                      : 0;
        if (p && (!piece || p < piece)) piece = p;
    }
    return piece;
}

static const hfx_component forward[] = {{"model", "model", false, false, -1, NULL}};
static const hfx_component generation[] = {{"prefill", "prefill", false, false, 1, NULL}, {"decode", "decode", true, true, 1, NULL}};
static const hfx_component one_graph[] = {{"decode", "decode", false, true, 0, NULL}};
static const hfx_component generation_multi[] = {{"prefill", "prefill", false, false, 0, NULL}, {"decode", "decode", false, true, 0, NULL}};
static const char *const sequence_inputs[] = {"input_ids", "attention_mask", "position_ids", NULL};

static hfx_torch_signature classifier_torch_signature(const void *desc) {
    static const char *const args[] = {"input_ids", "attention_mask", "position_ids", NULL};
    (void)desc;
    return (hfx_torch_signature){args, "SequenceClassifierOutputWithPast", NULL};
}

const hfx_arch_family hfx_decoder_classifier_family = {
    sizeof(hfx_decoder_cfg), decoder_parse, decoder_build_forward, NULL, NULL,
    {[HFX_EXPORT_FORWARD] = {forward, 1}}, sequence_inputs, classifier_torch_signature, NULL, NULL, NULL};

const hfx_arch_family hfx_decoder_family = {
    sizeof(hfx_decoder_cfg), decoder_parse, decoder_build_forward, decoder_cache_layers, decoder_recompute_at,
    {[HFX_EXPORT_FORWARD] = {forward, 1}, [HFX_EXPORT_GENERATION] = {generation, 2},
     [HFX_EXPORT_GENERATION_ONE_GRAPH] = {one_graph, 1}, [HFX_EXPORT_GENERATION_MULTI] = {generation_multi, 2}},
    sequence_inputs, decoder_torch_signature, NULL, NULL, decoder_prompt_piece};
