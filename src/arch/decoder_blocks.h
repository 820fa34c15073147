/* The decoder template's blocks, shared by its files: the build context a layer's blocks read and
 * write, and the builders each file offers (what each computes is said where it is defined). */
#ifndef HFX_ARCH_DECODER_BLOCKS_H
#define HFX_ARCH_DECODER_BLOCKS_H

#include "arch/decoder.h"

typedef struct layer_ctx {
    hfx_graph *g;
    hfx_weights *w;
    const hfx_decoder_desc *d;
    const hfx_decoder_cfg *m;
    const hfx_build_opts *o;
    hfx_dim batch, seq;
    hfx_decoder_names n;        /* the checkpoint's tensor names, Llama's where the family has none */
    hfx_value *cache_position;  /* static cache: [S] slots written this step */
    hfx_value **cache_out;      /* (layers, CACHE_PARTS): key, value (and the seed's write counter) cache
                                   outputs, then a recurrent mixer's states, named at the end */
    int *cache_state;           /* (layers, CACHE_PARTS): their state declarations */
    hfx_value *seed_mask;       /* seed profile: the attention bias [B|1,1,S,T], made at the first layer
                                   (from the 4-D mask input, or from the cache it sees) */
    hfx_value *seed_window_mask; /* ... and the sliding layers' (a dynamic cache's: within the window; a static
                                    one's: from its mask input) */
    hfx_dim seed_window_slots;  /* a static cache's sliding layers: their cache's slots W ... */
    hfx_dim seed_window_keys;   /* ... and the keys they attend to, T ≥ W (hfx_dec_seed_cache) */
    hfx_value *new_mask;        /* recurrent layers: [B,S,1] 1 at this call's real tokens, 0 at padding */
    hfx_value *positions;       /* [B,S] the tokens' positions (RG-LRU resets where 0); NULL without them */
    hfx_value *q_temperature;   /* [B,1,S,1] f32: the queries' scale by position (hfx_query_temperature); NULL: none */
    hfx_value **kv_seen;        /* (layers, 2): the keys and values [B,KV,T,hd] each attention layer attended to,
                                   for the layers that share them (hfx_layer_shape.kv_from) */
    hfx_value *per_layer_inputs; /* [B,S,layers,width]: each layer's own input (per_layer_inputs.c); NULL: none */
    hfx_value *embeddings;      /* [B,S,hidden] the layers' input (Zamba2's shared blocks read it again) */
    int64_t adapter;            /* within a shared block's use: its LoRA adapters' index; -1 elsewhere */
    hfx_value *shortcut;        /* HFX_LAYOUT_PAIRED_SHORTCUT: the experts' output [B,S,hidden] over the pair's first
                                   sublayer, for its second */
    hfx_value *index_kept;      /* an indexer's shared layers: [B,1,S,T] bool, the keys the last full indexer picked */
    hfx_value *ids;             /* [B,S] the input ids (HFX_ROUTER_SCORED's hashed layers route by them); NULL: embeddings
                                   in */
    hfx_value *shift_past;      /* RWKV: the channel mix's previous input [B,1,hidden] as the time mix read it with its
                                   own; NULL: a prompt */
} layer_ctx;

/* per layer: keys, values, and the seed profile's write counter (static cache) or window tensor (a dynamic cache's
 * sliding layer); then its states by part (hfx_dec_state_part): a recurrent mixer's conv and ssm, an n-gram layer's
 * ple_conv and ngram */
enum { SEED_PARTS = 3, STATE_SLOT = 3, STATE_PARTS = 4, CACHE_PARTS = STATE_SLOT + STATE_PARTS };

typedef struct hfx_state_names {
    char state[96], input[104], output[104];
} hfx_state_names;

/* decoder_blocks.c */
const char *hfx_dec_name(const layer_ctx *c, int64_t i, const char *block, const char *leaf, char *buf, size_t size);
hfx_value *hfx_dec_weight_out_in(layer_ctx *c, int64_t in, int64_t out, const char *prefix);
hfx_value *hfx_dec_proj(layer_ctx *c, hfx_value *x, int64_t in, int64_t out, bool bias, const char *prefix);
hfx_value *hfx_dec_scaled(hfx_graph *g, hfx_value *x, double k);
hfx_value *hfx_dec_split_heads(layer_ctx *c, hfx_value *x, int64_t n, int64_t d);
hfx_value *hfx_dec_to_bhsd(layer_ctx *c, hfx_value *x);
hfx_value *hfx_dec_norm(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix);
/* ... at epsilon eps (the final norm's, where it differs from the layers'). */
hfx_value *hfx_dec_norm_eps(layer_ctx *c, hfx_value *x, int64_t n, const char *prefix, double eps);
hfx_value *hfx_dec_rms_plain(layer_ctx *c, hfx_value *x);
/* y + the LoRA adapter c->adapter of `list` ("<list>.<adapter>.0.weight" [rank, in], ".1.weight" [out, rank]) on h
 * (y NULL: the adapter's output alone). */
hfx_value *hfx_dec_lora(layer_ctx *c, hfx_value *y, hfx_value *h, int64_t in, int64_t out, const char *list);

/* attention.c */
hfx_value *hfx_dec_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin, hfx_value *bias);

/* mla.c */
hfx_status hfx_dec_parse_mla(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err);
hfx_status hfx_dec_mla_scale(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err);
hfx_value *hfx_dec_mla_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                 hfx_value *bias);
/* x [..., d] with its rotary pairs (0,1), (2,3), ... regrouped as halves: evens, then odds */
hfx_value *hfx_dec_pairs_to_halves(layer_ctx *c, hfx_value *x);

/* indexer.c */
hfx_status hfx_dec_parse_indexer(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                 hfx_error *err);
/* The attention bias [B,1,S,T] with the keys the indexer does not pick at −FLT_MAX (q_resid [B,S,q_lora]: the queries'
 * normed low-rank part). */
hfx_value *hfx_dec_indexed_bias(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *q_resid, hfx_value *cos,
                                hfx_value *sin, hfx_value *bias);
/* index [B,S,T] f32 → [B,S,T] bool: each row's k largest (every key while T ≤ k), without data-dependent shapes. */
hfx_value *hfx_dec_top_keys(hfx_graph *g, hfx_value *index, int64_t k);

/* compressed.c (HFX_ATTN_COMPRESSED: DeepSeek V4) */
hfx_status hfx_dec_parse_compressed(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                    hfx_error *err);
hfx_value *hfx_dec_compressed_attention(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin,
                                        hfx_value *bias);

/* ffn.c */
hfx_value *hfx_dec_ffn(layer_ctx *c, int64_t i, hfx_value *h);

/* moe.c */
hfx_status hfx_dec_parse_moe(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                             hfx_error *err);
hfx_value *hfx_dec_moe(layer_ctx *c, int64_t i, hfx_value *h);
hfx_value *hfx_dec_moe_beside(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *mlp);

/* decoder_mixers.c */
/* The keys transformers' config class derives when config.json leaves them out, where the template's own readers
 * would take something else (decoder_derived.c): a new JSON object of them (empty: none), NULL when out of memory. */
json_t *hfx_dec_derived_keys(const hfx_decoder_desc *d, hfx_cfg c);
/* A layer kind by its layer_types word. */
typedef struct hfx_layer_name {
    const char *name;
    hfx_mixer_kind kind;
} hfx_layer_name;
/* Each layer's mixer from layer_types (the view's: decoder_derived.c may have made it) by the n words `names` gives,
 * any other refused naming `field` (the key config.json has it under) and the words. */
hfx_status hfx_dec_mixers_by_name(hfx_cfg c, const char *field, int n, const hfx_layer_name *names, hfx_decoder_cfg *m,
                                  hfx_error *err);
hfx_status hfx_dec_parse_short_conv(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                    hfx_error *err);
hfx_status hfx_dec_parse_attention_free(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                        hfx_error *err);
hfx_status hfx_dec_parse_hybrid_layers(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err);
hfx_status hfx_dec_parse_parallel_mamba(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                        hfx_error *err);
hfx_layer_cache hfx_decoder_layer_cache(const hfx_decoder_cfg *m, int64_t i);
/* A recurrent state's part by its name: 0 the convolution's ("conv"), 1 the recurrent one ("ssm"). */
int hfx_dec_state_part(const hfx_layer_state *s);
hfx_value *hfx_dec_mixer(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin, hfx_value *bias);
/* RWKV-4's channel mix of layer i as its MLP, its token shift the layer's state the time mix read (and left half of). */
hfx_value *hfx_dec_channel_mix(layer_ctx *c, int64_t i, hfx_value *h);
/* y, block i's output, divided by 2^(i / rescale_every) (RWKV's eval-mode weights; rescale_every 0: y). */
hfx_value *hfx_dec_rescaled(layer_ctx *c, int64_t i, hfx_value *y);

/* shared_block.c */
hfx_status hfx_dec_parse_shared_blocks(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                       hfx_error *err);
hfx_value *hfx_dec_shared_block(layer_ctx *c, int64_t i, hfx_value *x, hfx_value *cos, hfx_value *sin, hfx_value *bias);

/* hyper.c: HFX_LAYOUT_HYPER's and HFX_LAYOUT_HYPER_SINKHORN's streams. parse: hc_mult, hc_magnitude, hc_eps,
 * hc_sinkhorn_iters. expand: [B,S,D] → [B,S,N,D]. read: the sublayer `block`'s ("attn_hc") input [B,S,D] from the streams
 * x [B,S,N,D], *post [B,S,N] f32, the weights write adds its output to each stream by, and *comb [B,S,N,N] f32 the
 * streams' mixing matrix (NULL: HYPER's, none). write: (combᵀ·)x + post·y → [B,S,N,D]. head: the streams → [B,S,D]. */
hfx_status hfx_dec_parse_hyper(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err);
hfx_value *hfx_dec_hyper_expand(layer_ctx *c, hfx_value *x);
hfx_value *hfx_dec_hyper_read(layer_ctx *c, int64_t i, hfx_value *x, const char *block, hfx_value **post,
                              hfx_value **comb);
hfx_value *hfx_dec_hyper_write(layer_ctx *c, hfx_value *x, hfx_value *post, hfx_value *comb, hfx_value *y);
hfx_value *hfx_dec_hyper_head(layer_ctx *c, hfx_value *x);
/* HFX_LAYOUT_HYPER_GATED's: read the sublayer `block`'s ("attn_hyper_connection") input [B,S,D] from the streams
 * x [B,S,N,D] and *inject [B,S,N], the weights write adds its output y [B,S,D] to each stream by. grouped_norm: x
 * [B,S,N,D] RMS-normed per stream, times (1 + `<prefix>.weight` [N·D]) in f32, back in x's dtype. */
hfx_value *hfx_dec_gated_read(layer_ctx *c, int64_t i, hfx_value *x, const char *block, hfx_value **inject);
hfx_value *hfx_dec_gated_write(layer_ctx *c, hfx_value *x, hfx_value *inject, hfx_value *y);
hfx_value *hfx_dec_grouped_norm(layer_ctx *c, hfx_value *x, const char *prefix);

/* altup.c: HFX_LAYOUT_ALTUP's streams. parse: altup_num_inputs, altup_active_idx, altup_correct_scale, laurel_rank.
 * expand: [B,S,D] → [B,S,N,D]; head: the streams → [B,S,D], before the final norm. predict: layer i's predictions
 * [B,S,N,D] of the streams x, and in *active the active one's [B,S,D]; correct: the predictions corrected by the layer's
 * output y [B,S,D], its per-layer term added to streams 1.. where the model has per-layer inputs. laurel: h + norm(right(
 * left(h))) [B,S,D]. */
hfx_status hfx_dec_parse_altup(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err);
hfx_value *hfx_dec_altup_expand(layer_ctx *c, hfx_value *x);
hfx_value *hfx_dec_altup_head(layer_ctx *c, hfx_value *x);
hfx_value *hfx_dec_altup_predict(layer_ctx *c, int64_t i, hfx_value *x, hfx_value **active);
hfx_value *hfx_dec_altup_correct(layer_ctx *c, int64_t i, hfx_value *pred, hfx_value *y);
hfx_value *hfx_dec_laurel(layer_ctx *c, int64_t i, hfx_value *h);

/* ngram.c: Qwen4-Exp's n-gram layers. parse: ple_layer_ids and the hashes' keys (after the mixers: the layers must be
 * delta-nets). block: x [B,S,N,D] plus layer i's n-gram contribution to each stream (c->ids hashed). */
hfx_status hfx_dec_parse_ngram(hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m, hfx_error *err);
hfx_value *hfx_dec_ngram_block(layer_ctx *c, int64_t i, hfx_value *x);

/* qsa.c: Qwen4-Exp's block indexer (HFX_ATTN_OUTPUT_GATED_QSA). parse: the indexer_* keys. bias: the attention bias
 * [B,1,S,T] with the keys the indexer does not pick at −FLT_MAX; h [B,S,hidden] the attention's input, cos/sin the
 * queries' rotary tables. It caches its raw keys, with their positions, at the layer's index_key slot. */
hfx_status hfx_dec_parse_qsa(hfx_cfg c, hfx_decoder_cfg *m, hfx_error *err);
hfx_value *hfx_dec_qsa_bias(layer_ctx *c, int64_t i, hfx_value *h, hfx_value *cos, hfx_value *sin, hfx_value *bias);

/* decoder_shapes.c */
hfx_status hfx_dec_parse_shapes(const hfx_decoder_desc *d, hfx_cfg c, hfx_arena *arena, hfx_decoder_cfg *m,
                                hfx_error *err);

/* per_layer_inputs.c; the per-layer table's name (the decoder's names: a host renames them) */
#define HFX_DEC_PER_LAYER_TABLE "model.embed_tokens_per_layer.weight"
hfx_value *hfx_dec_per_layer_tokens(layer_ctx *c, hfx_value *ids);
hfx_value *hfx_dec_per_layer_inputs(layer_ctx *c, hfx_value *tokens, hfx_value *embeds);
hfx_value *hfx_dec_per_layer_block(layer_ctx *c, int64_t i, hfx_value *x);
/* layer i's term from x [B,S,hidden]: norm(proj(act(gate(x)) · its input)) [B,S,hidden] (c->per_layer_inputs set) */
hfx_value *hfx_dec_per_layer_term(layer_ctx *c, int64_t i, hfx_value *x);

/* decoder_cache.c */
hfx_value *hfx_dec_kv_cache(layer_ctx *c, int64_t i, hfx_value *x, int slot); /* slot 0: keys, 1: values */
void hfx_dec_seed_cache(layer_ctx *c, int64_t i, hfx_value **k, hfx_value **v);
hfx_value *hfx_dec_seed_causal_mask(layer_ctx *c, hfx_value *q, hfx_value *k, int64_t window);
bool hfx_dec_continues(const layer_ctx *c);
bool hfx_dec_seed_profile(const layer_ctx *c);
hfx_state_names hfx_dec_state_names(const layer_ctx *c, int64_t i, int k);
void hfx_dec_write_caches(layer_ctx *c);

#endif
