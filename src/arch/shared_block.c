/* Zamba2's shared transformer blocks (HFX_MIXERS_SHARED_BLOCKS_BY_TYPE): which layers are hybrid, which of the
 * num_mem_blocks weight sets and which LoRA adapters each one uses, and the block itself — attention over
 * [x; the embeddings] (2·hidden wide) and a gated MLP, whose output a linear of the layer's own adds to its Mamba2
 * mixer's input (decoder.c's HFX_LAYOUT_SHARED_BLOCKS). The uses share their weights only where transformers ties them:
 * with tie_word_embeddings, which switches every tie of the model; without it each hybrid layer has a block of its own. */
#include <stdio.h>
#include <string.h>

#include "arch/decoder_blocks.h"
#include "arch/weights.h"
#include "base/status.h"

/* Which weight set and adapters each hybrid layer uses: the j-th hybrid layer block j mod num_mem_blocks (stored under
 * the first layer that used it when tied), and adapters j. */
static hfx_status uses(hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err) {
    hfx_decoder_shared *s = &m->shared;
    s->use = hfx_arena_alloc(arena, (size_t)m->layers * sizeof *s->use);
    s->source = hfx_arena_alloc(arena, (size_t)s->blocks * sizeof *s->source);
    if (!s->use || !s->source) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < s->blocks; b++) s->source[b] = -1;
    int64_t j = 0;
    for (int64_t i = 0; i < m->layers; i++) {
        s->use[i] = m->mixer[i] == HFX_MIXER_SHARED_BLOCK ? j++ : -1;
        if (s->use[i] >= 0 && s->use[i] < s->blocks) s->source[s->use[i]] = i;
    }
    return HFX_OK;
}

hfx_status hfx_dec_parse_shared_blocks(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err) {
    static const hfx_layer_name names[] = {{"mamba", HFX_MIXER_MAMBA2}, /* (renamed by decoder_derived.c; its word) */
                                           {"linear_attention", HFX_MIXER_MAMBA2}, {"hybrid", HFX_MIXER_SHARED_BLOCK}};
    hfx_decoder_shared *s = &m->shared;
    hfx_status st;
    if ((st = hfx_dec_mixers_by_name(c, "layers_block_type", 3, names, m, err)) ||
        (st = hfx_cfg_int_in_or(c, "num_mem_blocks", 1, 1, 4096, &s->blocks, err)) ||
        (st = hfx_cfg_int_in_or(c, "adapter_rank", 128, 1, 1 << 16, &s->rank, err)) ||
        (st = hfx_cfg_bool_or(c, "use_shared_attention_adapter", false, &s->qkv_adapters, err)) ||
        (st = uses(arena, m, err)))
        return st;
    m->attn_width = 2 * m->hidden, m->no_mlp = true;
    if (s->qkv_adapters && (m->heads * m->head_dim != m->attn_width || m->kv_heads * m->head_dim != m->attn_width))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: use_shared_attention_adapter adds adapters 2·hidden_size (%lld) wide "
                                              "to q, k and v projections of %lld and %lld (num_attention_heads, "
                                              "num_key_value_heads · 2·hidden_size // num_attention_heads): "
                                              "transformers cannot run it", c.where, (long long)m->attn_width,
                        (long long)(m->heads * m->head_dim), (long long)(m->kv_heads * m->head_dim));
    return hfx_mamba2_parse(c, d->mixers.mamba2, m->hidden, m->eps, &m->ssm, err);
}

/* An untied block's adapter slots for the other uses of its weight set: transformers builds and loads them, no layer
 * reads them. */
static void ignore_other_slots(layer_ctx *c, const char *block, int64_t use) {
    static const char *const lists[] = {"self_attn.linear_q_adapter_list", "self_attn.linear_k_adapter_list",
                                        "self_attn.linear_v_adapter_list", "feed_forward.gate_up_proj_adapter_list"};
    const hfx_decoder_shared *s = &c->m->shared;
    int64_t uses = 0;
    for (int64_t i = 0; i < c->m->layers; i++) uses += s->use[i] >= 0;
    for (int64_t j = use % s->blocks; j < uses; j += s->blocks)
        for (size_t k = 0; j != use && k < sizeof lists / sizeof lists[0]; k++) {
            char name[192];
            snprintf(name, sizeof name, "%s.%s.%lld", block, lists[k], (long long)j);
            hfx_weights_ignore_stack(c->w, name);
        }
}

hfx_value *hfx_dec_shared_block(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *cos, hfx_value *sin,
                                hfx_value *bias) {
    const hfx_decoder_cfg *m = c->m;
    hfx_graph *g = c->g;
    int64_t use = m->shared.use[i], H = m->hidden;
    char block[128], own[128], p[192];
    if (hfx_dec_seed_profile(c)) {
        hfx_graph_fail(g, HFX_ERR_UNSUPPORTED, "%s: io \"seed\" has no names for the hybrid layers' caches yet; export "
                                               "with io \"optimum\"", c->d->architecture);
        return x;
    }
    int64_t source = m->tied ? m->shared.source[use % m->shared.blocks] : i;
    hfx_dec_name(c, source, NULL, "shared_transformer", block, sizeof block);
    hfx_dec_name(c, i, NULL, "shared_transformer", own, sizeof own);
    if (strcmp(own, block) != 0) hfx_weights_ignore_stack(c->w, own); /* transformers ties a later use's copy */
    else if (!m->tied) ignore_other_slots(c, block, use);
    /* the block's weights under its source layer: a layer name without a conversion, which hfx_dec_name prints as is */
    layer_ctx s = *c;
    s.n.layer = block, s.n.attn = "self_attn", s.n.mlp = "feed_forward", s.adapter = use;
    hfx_value *both[2] = {x, c->embeddings};
    hfx_value *h = hfx_dec_norm(&s, hfx_concat(g, 2, both, 2), 2 * H, hfx_dec_name(&s, i, NULL, "input_layernorm", p,
                                                                                   sizeof p)); /* [B,S,2·hidden] */
    h = hfx_dec_attention(&s, i, h, cos, sin, bias);                                          /* [B,S,hidden] */
    h = hfx_dec_ffn(&s, i, hfx_dec_norm(&s, h, H, hfx_dec_name(&s, i, NULL, "pre_ff_layernorm", p, sizeof p)));
    return hfx_dec_proj(c, h, H, H, false, hfx_dec_name(c, i, NULL, "linear", p, sizeof p));
}
