#include "hf/gguf_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

typedef struct name_pair {
    const char *gguf, *hf;
} name_pair;

/* Gemma 2's and 3's block names where they differ from the common table below: four norms a layer */
static const name_pair gemma_layers[] = {{"post_attention_norm", "post_attention_layernorm"},
                                         {"ffn_norm", "pre_feedforward_layernorm"},
                                         {"post_ffw_norm", "post_feedforward_layernorm"},
                                         {NULL, NULL}};
/* metadata a lineage maps beyond the common keys */
static const name_pair sliding_keys[] = {{"attention.sliding_window", "sliding_window"}, {NULL, NULL}};

/* What a GGUF architecture is to transformers: its model type and class, whether llama.cpp's converter stored the
 * query and key rows in its rotary order (its LlamaModel does; transformers' LlamaTensorProcessor undoes it),
 * whether transformers reads `rope.dimension_count` as head_dim, whether the norm weights are stored plus one
 * (llama.cpp's Gemma converter; transformers' Gemma2TensorProcessor subtracts it), the block names that differ
 * and the metadata it maps beyond the common keys. */
typedef struct gguf_arch {
    const char *gguf, *model_type, *architecture;
    bool rotary_rows, head_dim_from_rope, norms_plus_one;
    const name_pair *layers, *keys;
} gguf_arch;

static const gguf_arch archs[] = {
#define ARCH(g, t, c) .gguf = g, .model_type = t, .architecture = c
    {ARCH("llama", "llama", "LlamaForCausalLM"), .rotary_rows = true, .head_dim_from_rope = true},
    {ARCH("qwen2", "qwen2", "Qwen2ForCausalLM")},
    {ARCH("qwen3", "qwen3", "Qwen3ForCausalLM")},
    {ARCH("gemma2", "gemma2", "Gemma2ForCausalLM"), .norms_plus_one = true, .layers = gemma_layers,
     .keys = sliding_keys},
    {ARCH("gemma3", "gemma3_text", "Gemma3ForCausalLM"), .norms_plus_one = true, .layers = gemma_layers,
     .keys = sliding_keys},
};

/* "<arch>.<key>" metadata → config.json key, as transformers' GGUF_CONFIG_MAPPING has it for these architectures
 * (attention.key_length too: it is the head size wherever llama.cpp writes it) */
static const name_pair keys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"vocab_size", "vocab_size"},
    {"attention.key_length", "head_dim"},
    {NULL, NULL},
};

/* llama.cpp's tensor names → transformers' (".weight" / ".bias" kept): the model's, then each block's
 * ("blk.<i>.<name>" → "model.layers.<i>.<name>") */
static const name_pair model_names[] = {{"token_embd", "model.embed_tokens"}, {"output_norm", "model.norm"},
                                        {"output", "lm_head"}},
                       layer_names[] = {
      {"attn_norm", "input_layernorm"},   {"attn_q", "self_attn.q_proj"},      {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},     {"attn_output", "self_attn.o_proj"}, {"attn_q_norm", "self_attn.q_norm"},
      {"attn_k_norm", "self_attn.k_norm"}, {"ffn_norm", "post_attention_layernorm"}, {"ffn_gate", "mlp.gate_proj"},
      {"ffn_up", "mlp.up_proj"},          {"ffn_down", "mlp.down_proj"}, {NULL, NULL},
};

/* Metadata keys of these architectures that change the model and that transformers' loader does not read: a file
 * holding them is refused rather than exported as another model */
static const char *const dropped[] = {"rope.scaling.type", "rope.scaling.factor", "attention.sliding_window",
                                      "expert_count", "rope.dimension_sections"};

static const gguf_arch *find_arch(const hfx_gguf *f, char *name, size_t size, hfx_error *err) {
    const hfx_gguf_kv *kv = hfx_gguf_find(f, "general.architecture");
    const char *s;
    uint64_t n;
    if (!kv || kv->type != HFX_GGUF_STRING || !hfx_gguf_string(kv, 0, &s, &n) || n >= size) {
        hfx_fail(err, HFX_ERR_INVALID, "%s: general.architecture is missing or not a short string", f->path);
        return NULL;
    }
    memcpy(name, s, (size_t)n);
    name[n] = 0;
    /* (transformers calls a llama file whose general.name is "mistral" Mistral, then fails: gguf-py has no such
     * architecture; hfx exports it as the Llama it is) */
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (!strcmp(archs[i].gguf, name)) return &archs[i];
    char list[256];
    size_t k = 0;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0] && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", archs[i].gguf);
    hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: GGUF architecture '%s' is not one hfx maps to a Hugging Face model yet "
                                       "(it maps %s)", f->path, name, list);
    return NULL;
}

/* config[key] from the scalar metadata kv: an integer for integer types, a real for float ones */
static hfx_status set_number(const hfx_gguf *f, const hfx_gguf_kv *kv, json_t *config, const char *key,
                             hfx_error *err) {
    double v;
    if (kv->type == HFX_GGUF_ARRAY || !hfx_gguf_number(kv, 0, &v))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: metadata '%s' is not a number (%s)", f->path, kv->key,
                        kv->type == HFX_GGUF_ARRAY ? "an array: per-layer values hfx does not map"
                                                   : "of another type");
    bool real = kv->type == HFX_GGUF_F32 || kv->type == HFX_GGUF_F64;
    if (!real && (v < 0 || v > 9007199254740992.0))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: metadata '%s' is %g", f->path, kv->key, v);
    json_object_set_new(config, key, real ? json_real(v) : json_integer((json_int_t)v));
    return HFX_OK;
}

/* config[hf] from "<name>.<gguf>" for each pair of `table` the file has */
static hfx_status map_keys(const hfx_gguf *f, const char *name, const name_pair *table, json_t *config,
                           hfx_error *err) {
    char key[160];
    hfx_status st = HFX_OK;
    for (const name_pair *k = table; !st && k && k->gguf; k++) {
        snprintf(key, sizeof key, "%s.%s", name, k->gguf);
        const hfx_gguf_kv *kv = hfx_gguf_find(f, key);
        if (kv) st = set_number(f, kv, config, k->hf, err);
    }
    return st;
}

static hfx_status build_config(const hfx_gguf *f, const gguf_arch *a, const char *name, json_t *config,
                               hfx_error *err) {
    char key[160];
    json_object_set_new(config, "model_type", json_string(a->model_type));
    json_object_set_new(config, "architectures", json_pack("[s]", a->architecture));
    for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++) {
        snprintf(key, sizeof key, "%s.%s", name, dropped[i]);
        const hfx_gguf_kv *kv = hfx_gguf_find(f, key);
        bool mapped = false;
        for (const name_pair *k = a->keys; k && k->gguf; k++) mapped |= !strcmp(k->gguf, dropped[i]);
        if (kv && !mapped && !hfx_gguf_text_is(kv, "none"))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: metadata '%s' changes the model, and transformers' GGUF "
                                                      "loader (which hfx follows) does not read it", f->path, key);
    }
    hfx_status st = map_keys(f, name, keys, config, err);
    static const name_pair ids[] = {{"ggml.bos_token_id", "bos_token_id"},     {"ggml.eos_token_id", "eos_token_id"},
                                    {"ggml.unknown_token_id", "unk_token_id"}, {"ggml.padding_token_id", "pad_token_id"},
                                    {NULL, NULL}};
    if (!st) st = map_keys(f, "tokenizer", ids, config, err); /* (transformers maps them into the config) */
    if (!st) st = map_keys(f, name, a->keys, config, err);
    snprintf(key, sizeof key, "%s.rope.dimension_count", name);
    const hfx_gguf_kv *rope = hfx_gguf_find(f, key);
    if (!st && rope && a->head_dim_from_rope) st = set_number(f, rope, config, "head_dim", err);
    if (!st && !json_object_get(config, "vocab_size")) { /* transformers counts the tokenizer's tokens */
        const hfx_gguf_kv *tokens = hfx_gguf_find(f, "tokenizer.ggml.tokens");
        if (!tokens || tokens->type != HFX_GGUF_ARRAY)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: neither %s.vocab_size nor tokenizer.ggml.tokens says the "
                                                  "vocabulary's size", f->path, name);
        json_object_set_new(config, "vocab_size", json_integer((json_int_t)tokens->count));
    }
    return st;
}

/* The transformers name of GGUF tensor `gguf` into buf (a's block names first); false when hfx does not place it. */
static bool hf_name(const gguf_arch *a, const char *gguf, char *buf, size_t size) {
    const char *dot = strrchr(gguf, '.');
    if (!dot || (strcmp(dot, ".weight") && strcmp(dot, ".bias"))) return false;
    int stem = (int)(dot - gguf);
    for (size_t i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
        if ((int)strlen(model_names[i].gguf) == stem && !strncmp(gguf, model_names[i].gguf, (size_t)stem))
            return snprintf(buf, size, "%s%s", model_names[i].hf, dot) < (int)size;
    unsigned layer;
    int used = 0;
    if (sscanf(gguf, "blk.%u.%n", &layer, &used) != 1 || !used || used > stem || layer > 100000) return false;
    for (int pass = 0; pass < 2; pass++) /* the lineage's names, then the common ones */
        for (const name_pair *n = pass ? layer_names : a->layers; n && n->gguf; n++)
            if ((int)strlen(n->gguf) == stem - used && !strncmp(gguf + used, n->gguf, (size_t)(stem - used)))
                return snprintf(buf, size, "model.layers.%u.%s%s", layer, n->hf, dot) < (int)size;
    return false;
}

static int64_t config_int(const json_t *config, const char *key) {
    const json_t *v = json_object_get(config, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static hfx_status place_tensor(const hfx_gguf *f, const hfx_gguf_tensor *g, const gguf_arch *a, const json_t *config,
                               const hfx_mapping *m, hfx_arena *arena, hfx_tensor_info *t, hfx_error *err) {
    char name[256];
    if (!hf_name(a, g->name, name, sizeof name))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' is not one hfx places in %s (at byte %llu)",
                        f->path, g->name, a->architecture, (unsigned long long)g->file_offset);
    memset(t, 0, sizeof *t);
    t->name = hfx_arena_strdup(arena, name);
    if (!t->name) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    t->rank = g->n_dims;
    for (int d = 0; d < g->n_dims; d++) t->shape[d] = (int64_t)g->ne[g->n_dims - 1 - d]; /* torch's order */
    t->data = g->data;
    t->nbytes = g->nbytes;
    t->file = f->path;
    t->file_offset = g->file_offset;
    t->mapping = m;
    size_t n = strlen(g->name);
    if (a->norms_plus_one && n > 12 && !strcmp(g->name + n - 12, "_norm.weight")) { /* (transformers: "norm.weight") */
        t->blocks = hfx_block_format_less_one(g->ggml_type);
        t->dtype = HFX_DTYPE_F32;
        if (!t->blocks)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: norm '%s' is stored as %s; hfx reads a Gemma norm (stored "
                                                      "plus one) from F32, F16 or BF16 only", f->path, g->name,
                            hfx_ggml_type_name(g->ggml_type));
        return HFX_OK;
    }
    switch (g->ggml_type) {
    case 0: t->dtype = HFX_DTYPE_F32; break;
    case 1: t->dtype = HFX_DTYPE_F16; break;
    case 30: t->dtype = HFX_DTYPE_BF16; break;
    default:
        t->blocks = hfx_block_format_of(g->ggml_type);
        t->dtype = HFX_DTYPE_F32;
        if (!t->blocks)
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: tensor '%s' is stored as %s, which hfx does not decode yet",
                            f->path, g->name, hfx_ggml_type_name(g->ggml_type));
    }
    bool q = strstr(name, "self_attn.q_proj.weight") != NULL, k = strstr(name, "self_attn.k_proj.weight") != NULL;
    if (a->rotary_rows && (q || k)) {
        int64_t heads = config_int(config, q ? "num_attention_heads" : "num_key_value_heads");
        if (!heads && k) heads = config_int(config, "num_attention_heads");
        if (heads <= 0 || t->rank != 2 || t->shape[0] % (2 * heads))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s': %lld rows are not whole heads of rotary pairs for "
                                                  "%lld heads", f->path, g->name, (long long)t->shape[0],
                            (long long)heads);
        t->rotary_heads = heads;
    }
    return HFX_OK;
}

hfx_status hfx_gguf_model(const hfx_gguf *f, const hfx_mapping *m, hfx_arena *arena, json_t **config,
                          hfx_tensor_info **tensors, size_t *n, hfx_error *err) {
    *config = NULL;
    *tensors = NULL;
    *n = 0;
    char name[64];
    const gguf_arch *a = find_arch(f, name, sizeof name, err);
    if (!a) return err->status;
    json_t *c = json_object();
    if (!c) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = build_config(f, a, name, c, err);
    bool output = false;
    for (size_t i = 0; i < f->n_tensors; i++) output |= !strcmp(f->tensors[i].name, "output.weight");
    if (!st) json_object_set_new(c, "tie_word_embeddings", json_boolean(!output));
    hfx_tensor_info *t = hfx_arena_alloc(arena, (f->n_tensors ? f->n_tensors : 1) * sizeof *t);
    if (!st && !t) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < f->n_tensors; i++) st = place_tensor(f, &f->tensors[i], a, c, m, arena, &t[i], err);
    if (st) {
        json_decref(c);
        return st;
    }
    *config = c;
    *tensors = t;
    *n = f->n_tensors;
    return HFX_OK;
}
