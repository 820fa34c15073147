/* Per-layer embeddings (Gemma 3n's and Gemma 4's PLE): each layer gets an input of its own, made once from the
 * tokens and their embeddings, which the layer gates its output with after its MLP. */
#include <math.h>
#include <stdio.h>

#include "arch/decoder_blocks.h"
#include "base/status.h"

/* [B,S,layers·width] → [B,S,layers,width] */
static hfx_value *per_layer_split(layer_ctx *c, hfx_value *x) {
    const hfx_decoder_cfg *m = c->m;
    return hfx_reshape(c->g, x, 4, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->layers), hfx_dim_const(m->ple.width)});
}

/* The tokens' half [B,S,layers,width], transformers' get_per_layer_inputs: table[ids]·√width, the table
 * embed_tokens_per_layer [vocab_per_layer, layers·width] and its scale in the weights' dtype (the scaled embedding's
 * buffer, cast). A table smaller than the vocabulary gives the ids past it (Gemma 3n's multimodal tokens) row 0. */
hfx_value *hfx_dec_per_layer_tokens(layer_ctx *c, hfx_value *ids) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    hfx_value *table = hfx_weight(c->w, 2, (int64_t[]){m->ple.vocab, m->layers * m->ple.width}, "%s",
                                  HFX_DEC_PER_LAYER_TABLE);
    if (m->ple.vocab < m->vocab)
        ids = hfx_where(g, hfx_op2(g, HFX_OP_LESS, ids, hfx_const_i64(g, m->ple.vocab)), ids, hfx_const_i64(g, 0));
    hfx_value *rows = hfx_op2(g, HFX_OP_MUL, hfx_gather(g, table, ids, 0),
                              hfx_const_scalar(g, c->o->dtype, (float)sqrt((double)m->ple.width)));
    return per_layer_split(c, rows);
}

/* Each layer's input [B,S,layers,width] from the tokens' half (hfx_dec_per_layer_tokens') and the embeddings, as
 * transformers' project_per_layer_inputs: (norm(embeds·W_proj / √hidden) + tokens) / √2, norm per layer over width. */
hfx_value *hfx_dec_per_layer_inputs(layer_ctx *c, hfx_value *tokens, hfx_value *embeds) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t all = m->layers * m->ple.width;
    hfx_value *proj = hfx_linear(g, embeds, hfx_weight(c->w, 2, (int64_t[]){all, m->hidden},
                                                       "model.per_layer_model_projection.weight"), NULL);
    proj = hfx_op2(g, HFX_OP_MUL, proj, hfx_const_scalar(g, proj->dtype, pow((double)m->hidden, -0.5)));
    proj = hfx_dec_norm(c, per_layer_split(c, proj), m->ple.width, "model.per_layer_projection_norm");
    hfx_value *sum = hfx_op2(g, HFX_OP_ADD, proj, tokens);
    return hfx_op2(g, HFX_OP_MUL, sum, hfx_const_scalar(g, sum->dtype, pow(2.0, -0.5)));
}

hfx_value *hfx_dec_per_layer_term(layer_ctx *c, int64_t i, hfx_value *x) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    char p[160];
#define NAME(leaf) hfx_dec_name(c, i, NULL, leaf, p, sizeof p)
    hfx_value *own = hfx_slice(g, c->per_layer_inputs, 2, i, i + 1); /* [B,S,1,width] */
    own = hfx_reshape(g, own, 3, (hfx_dim[]){c->batch, c->seq, hfx_dim_const(m->ple.width)});
    hfx_value *h = hfx_activate(g, m->act, hfx_dec_proj(c, x, m->hidden, m->ple.width, false, NAME("per_layer_input_gate")));
    h = hfx_dec_proj(c, hfx_op2(g, HFX_OP_MUL, h, own), m->ple.width, m->hidden, false, NAME("per_layer_projection"));
    return hfx_dec_norm(c, h, m->hidden, NAME("post_per_layer_input_norm"));
#undef NAME
}

/* After layer i's MLP: x += its per-layer term where the model has per-layer inputs; then x · layer_scalar (a [1]
 * buffer of the checkpoint). x [B,S,hidden]. */
hfx_value *hfx_dec_per_layer_block(layer_ctx *c, int64_t i, hfx_value *x) {
    char p[160];
    if (c->per_layer_inputs) x = hfx_op2(c->g, HFX_OP_ADD, x, hfx_dec_per_layer_term(c, i, x));
    int64_t one = 1;
    return hfx_op2(c->g, HFX_OP_MUL, x, hfx_weight(c->w, 1, &one, "%s", hfx_dec_name(c, i, NULL, "layer_scalar", p, sizeof p)));
}
