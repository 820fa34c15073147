/* The tokenizer files a GGUF file's metadata describes, as transformers builds them (AutoTokenizer with gguf_file):
 * tokenizer.json, tokenizer_config.json, and the generation config transformers derives from the special token
 * ids. Byte-level BPE vocabularies (tokenizer.ggml.model "gpt2") of the pre-tokenizers listed below (Qwen2's and
 * Llama 3's splits) are converted;
 * for any other the export carries no tokenizer (the graphs do not need one; runtimes that tokenize say it is
 * missing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "hf/gguf_model.h"

/* The split patterns the merges were learned over */
static const char QWEN2_SPLIT[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
                                  " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char LLAMA3_SPLIT[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
                                   " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* tokenizer.ggml.pre → its split (the pre-tokenizers transformers knows of these two kinds) and the class the
 * tokenizer_config.json names (Qwen's own; the generic fast tokenizer, as Llama 3's repositories name it) */
static const struct {
    const char *pre, *pattern, *tokenizer_class;
} splits[] = {
    {"qwen2", QWEN2_SPLIT, "Qwen2Tokenizer"},           {"deepseek-r1-qwen", QWEN2_SPLIT, "Qwen2Tokenizer"},
    {"kormo", QWEN2_SPLIT, "Qwen2Tokenizer"},           {"f2llmv2", QWEN2_SPLIT, "Qwen2Tokenizer"},
    {"megrez", QWEN2_SPLIT, "Qwen2Tokenizer"},          {"llama3", LLAMA3_SPLIT, "PreTrainedTokenizerFast"},
    {"llama-v3", LLAMA3_SPLIT, "PreTrainedTokenizerFast"}, {"llama-bpe", LLAMA3_SPLIT, "PreTrainedTokenizerFast"},
    {"falcon3", LLAMA3_SPLIT, "PreTrainedTokenizerFast"}, {"smaug-bpe", LLAMA3_SPLIT, "PreTrainedTokenizerFast"},
    {"dbrx", LLAMA3_SPLIT, "PreTrainedTokenizerFast"},
};

/* token types llama.cpp writes: control tokens are special added tokens, user-defined ones plain added tokens */
enum { TOKEN_CONTROL = 3, TOKEN_USER_DEFINED = 4 };

/* Whether code point c is one of the 256 characters byte-level BPE spells bytes with (printable Latin-1 as
 * itself, the other 68 bytes as U+0100..U+0143). */
static bool byte_char(uint32_t c) {
    return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255) || (c >= 256 && c < 256 + 68);
}

/* the character spelling byte b */
static uint32_t char_of_byte(unsigned b) {
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) return b;
    unsigned n = 0; /* the others, in byte order, from U+0100 */
    for (unsigned k = 0; k < b; k++) n += !((k >= 33 && k <= 126) || (k >= 161 && k <= 172) || (k >= 174 && k <= 255));
    return 256 + n;
}

static size_t put_utf8(uint32_t c, char *out) {
    if (c < 0x80) return out[0] = (char)c, 1;
    out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3F));
    return 2; /* (every character here is below U+0800) */
}

/* The code points of UTF-8 text s[0..n): false when it is not UTF-8 (or holds NUL). *all_bytes: every one is a
 * byte character. */
static bool utf8_chars(const char *s, uint64_t n, bool *all_bytes) {
    *all_bytes = true;
    for (uint64_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (!len || (uint64_t)len > n - i || b == 0) return false;
        uint32_t c = len == 1 ? b : b & (0x7F >> len);
        for (int k = 1; k < len; k++) {
            unsigned char t = (unsigned char)s[i + (uint64_t)k];
            if ((t & 0xC0) != 0x80) return false;
            c = c << 6 | (t & 0x3F);
        }
        *all_bytes &= byte_char(c);
        i += (uint64_t)len;
    }
    return true;
}

/* The vocabulary's spelling of token s: as stored when it is spelled in byte characters already, else its UTF-8
 * bytes each as its byte character (transformers' rule). NULL: not UTF-8. */
static json_t *spelled(const char *s, uint64_t n) {
    bool bytes;
    if (!utf8_chars(s, n, &bytes)) return NULL;
    if (bytes) return json_stringn(s, (size_t)n);
    char *buf = malloc((size_t)n * 2 + 1);
    if (!buf) return NULL;
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) k += put_utf8(char_of_byte((unsigned char)s[i]), buf + k);
    json_t *v = json_stringn(buf, k);
    free(buf);
    return v;
}

static bool special_id(const hfx_gguf *f, const char *key, uint64_t *id) {
    const hfx_gguf_kv *kv = hfx_gguf_find(f, key);
    double v;
    if (!kv || kv->type == HFX_GGUF_ARRAY || !hfx_gguf_number(kv, 0, &v) || v < 0 || v > 1e15) return false;
    *id = (uint64_t)v;
    return true;
}

static hfx_status invalid(const hfx_gguf *f, const char *what, uint64_t i, hfx_error *err) {
    return hfx_fail(err, HFX_ERR_INVALID, "%s: %s %llu is not valid UTF-8 (or not a pair \"a b\")", f->path, what,
                    (unsigned long long)i);
}

/* model.vocab, model.merges and added_tokens */
static hfx_status bpe(const hfx_gguf *f, const hfx_gguf_kv *tokens, const hfx_gguf_kv *types,
                      const hfx_gguf_kv *merges, json_t *model, json_t *added, hfx_error *err) {
    json_t *vocab = json_object(), *pairs = json_array();
    json_object_set_new(model, "vocab", vocab);
    json_object_set_new(model, "merges", pairs);
    uint64_t at = 0, n;
    const char *s;
    for (uint64_t i = 0; i < tokens->count; i++) {
        hfx_gguf_next_string(tokens, &at, &s, &n);
        json_t *v = spelled(s, n);
        if (!v) return invalid(f, "tokenizer.ggml.tokens item", i, err);
        json_object_set_new(vocab, json_string_value(v), json_integer((json_int_t)i));
        double type = 0;
        bool as_is;
        if (types && hfx_gguf_number(types, i, &type) &&
            ((type == TOKEN_CONTROL && utf8_chars(s, n, &as_is) && as_is) || type == TOKEN_USER_DEFINED))
            json_array_append_new(added, json_pack("{sIsssbsbsbsbsb}", "id", (json_int_t)i, "content",
                                                   json_string_value(v), "single_word", 0, "lstrip", 0, "rstrip", 0,
                                                   "normalized", 0, "special", type == TOKEN_CONTROL));
        json_decref(v);
    }
    at = 0;
    for (uint64_t i = 0; i < merges->count; i++) {
        hfx_gguf_next_string(merges, &at, &s, &n);
        const char *space = memchr(s, ' ', (size_t)n);
        json_t *a = space ? json_stringn(s, (size_t)(space - s)) : NULL;
        json_t *b = space ? json_stringn(space + 1, (size_t)(n - (uint64_t)(space - s) - 1)) : NULL;
        if (!a || !b || memchr(space + 1, ' ', (size_t)(n - (uint64_t)(space - s) - 1))) {
            json_decref(a);
            json_decref(b);
            return invalid(f, "tokenizer.ggml.merges item", i, err);
        }
        json_array_append_new(pairs, json_pack("[oo]", a, b));
    }
    return HFX_OK;
}

/* The special token the id at `key` names: its id and text (in the file) */
static bool special_token(const hfx_gguf *f, const hfx_gguf_kv *tokens, const char *key, uint64_t *id, const char **s,
                          uint64_t *n) {
    return special_id(f, key, id) && hfx_gguf_string(tokens, *id, s, n);
}

/* Whether the file says to put the BOS token before each sequence */
static bool adds_bos(const hfx_gguf *f) {
    const hfx_gguf_kv *add = hfx_gguf_find(f, "tokenizer.ggml.add_bos_token");
    double v = 0;
    return add && hfx_gguf_number(add, 0, &v) && v != 0;
}

/* tokenizer_config.json: the special tokens by text, add_bos_token, the chat template, the class */
static json_t *tokenizer_config(const hfx_gguf *f, const hfx_gguf_kv *tokens, const char *cls) {
    static const struct {
        const char *config, *key;
    } specials[] = {{"bos_token", "tokenizer.ggml.bos_token_id"}, {"eos_token", "tokenizer.ggml.eos_token_id"},
                    {"pad_token", "tokenizer.ggml.padding_token_id"}, {"unk_token", "tokenizer.ggml.unknown_token_id"}};
    json_t *c = json_object();
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        uint64_t id, n;
        const char *s;
        bool ok = special_token(f, tokens, specials[i].key, &id, &s, &n);
        json_object_set_new(c, specials[i].config, ok ? json_stringn(s, (size_t)n) : json_null());
    }
    json_object_set_new(c, "add_bos_token", json_boolean(adds_bos(f)));
    const hfx_gguf_kv *chat = hfx_gguf_find(f, "tokenizer.chat_template");
    const char *s;
    uint64_t n;
    if (chat && chat->type == HFX_GGUF_STRING && hfx_gguf_string(chat, 0, &s, &n))
        json_object_set_new(c, "chat_template", json_stringn(s, (size_t)n));
    json_object_set_new(c, "tokenizer_class", json_string(cls));
    return c;
}

/* The template transformers' tokenizer applies: the sequences alone, or each after the BOS token where the file
 * says to add it (tokenizer.ggml.add_bos_token) */
static json_t *post_processor(const hfx_gguf *f, const hfx_gguf_kv *tokens) {
    uint64_t bos, n;
    const char *s;
    if (!(adds_bos(f) && special_token(f, tokens, "tokenizer.ggml.bos_token_id", &bos, &s, &n)))
        return json_pack("{ss s[{s{sssi}}] s[{s{sssi}} {s{sssi}}] s{}}", "type", "TemplateProcessing", "single",
                         "Sequence", "id", "A", "type_id", 0, "pair", "Sequence", "id", "A", "type_id", 0, "Sequence",
                         "id", "B", "type_id", 1, "special_tokens");
    json_t *token = json_stringn(s, (size_t)n);
    if (!token) return NULL;
    json_t *p = json_pack("{ss s[{s{sOsi}} {s{sssi}}] s[{s{sOsi}} {s{sssi}} {s{sOsi}} {s{sssi}}] s{s{sOs[I]s[O]}}}",
                          "type", "TemplateProcessing", "single", "SpecialToken", "id", token, "type_id", 0,
                          "Sequence", "id", "A", "type_id", 0, "pair", "SpecialToken", "id", token, "type_id", 0,
                          "Sequence", "id", "A", "type_id", 0, "SpecialToken", "id", token, "type_id", 1, "Sequence",
                          "id", "B", "type_id", 1, "special_tokens", json_string_value(token), "id", token, "ids",
                          (json_int_t)bos, "tokens", token);
    json_decref(token);
    return p;
}

hfx_status hfx_gguf_tokenizer(const hfx_gguf *f, char **tokenizer_json, char **config_json, hfx_error *err) {
    *tokenizer_json = *config_json = NULL;
    const hfx_gguf_kv *tokens = hfx_gguf_find(f, "tokenizer.ggml.tokens");
    const hfx_gguf_kv *merges = hfx_gguf_find(f, "tokenizer.ggml.merges");
    const hfx_gguf_kv *types = hfx_gguf_find(f, "tokenizer.ggml.token_type");
    const hfx_gguf_kv *pre = hfx_gguf_find(f, "tokenizer.ggml.pre");
    int split = -1;
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++)
        if (hfx_gguf_text_is(pre, splits[i].pre)) split = (int)i;
    bool strings = tokens && tokens->type == HFX_GGUF_ARRAY && tokens->item_type == HFX_GGUF_STRING && merges &&
                   merges->type == HFX_GGUF_ARRAY && merges->item_type == HFX_GGUF_STRING;
    if (!hfx_gguf_text_is(hfx_gguf_find(f, "tokenizer.ggml.model"), "gpt2") || split < 0 || !strings) return HFX_OK;
    if (types && (types->type != HFX_GGUF_ARRAY || types->count != tokens->count)) types = NULL;
    json_t *t = json_object(), *model = json_object(), *added = json_array();
    json_object_set_new(t, "version", json_string("1.0"));
    json_object_set_new(t, "truncation", json_null());
    json_object_set_new(t, "padding", json_null());
    json_object_set_new(t, "added_tokens", added);
    json_object_set_new(t, "normalizer", json_null());
    json_object_set_new(t, "pre_tokenizer",
                        json_pack("{ss s[{ss s{ss} ss sb} {ss sb sb sb}]}", "type", "Sequence", "pretokenizers",
                                  "type", "Split", "pattern", "Regex", splits[split].pattern, "behavior", "Isolated",
                                  "invert", 0, "type", "ByteLevel", "add_prefix_space", 0, "trim_offsets", 1,
                                  "use_regex", 0));
    json_object_set_new(t, "post_processor", post_processor(f, tokens));
    json_object_set_new(t, "decoder", json_pack("{ss sb sb sb}", "type", "ByteLevel", "add_prefix_space", 1,
                                                "trim_offsets", 1, "use_regex", 1));
    json_object_set_new(t, "model", model);
    json_object_set_new(model, "type", json_string("BPE"));
    json_object_set_new(model, "dropout", json_null());
    json_object_set_new(model, "unk_token", json_null());
    json_object_set_new(model, "continuing_subword_prefix", json_string(""));
    json_object_set_new(model, "end_of_word_suffix", json_string(""));
    json_object_set_new(model, "fuse_unk", json_false());
    json_object_set_new(model, "byte_fallback", json_false());
    json_object_set_new(model, "ignore_merges", json_false());
    hfx_status st = bpe(f, tokens, types, merges, model, added, err);
    json_t *c = st ? NULL : tokenizer_config(f, tokens, splits[split].tokenizer_class);
    if (!st) {
        *tokenizer_json = json_dumps(t, JSON_COMPACT);
        *config_json = c ? json_dumps(c, JSON_INDENT(2)) : NULL;
        if (!*tokenizer_json || !*config_json) {
            free(*tokenizer_json);
            free(*config_json);
            *tokenizer_json = *config_json = NULL;
            st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        }
    }
    json_decref(c);
    json_decref(t);
    return st;
}
