/* tokenizer.json → hfx_tokenizer. Each component of the file (normalizer, pre-tokenizer, model,
 * post-processor, decoder) becomes steps in the shape openvino_tokenizers' ops take; what the
 * steps mean is the `tokenizers` library's behaviour (its Rust sources are the specification).
 * Anything else is refused with the field that names it, so no tokenizer that would encode text
 * differently is ever written. */
#include "text/tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/status.h"

enum {
    MAX_STEPS = 64,           /* normalizer + pre-tokenizer steps; decoder steps */
    MAX_VOCAB = 1 << 24,      /* ids past this are refused (a vocabulary is < 1M in practice) */
    MAX_DEPTH = 8             /* nested Sequence components */
};

/* Unicode White_Space (Rust's char::is_whitespace, which `tokenizers` uses): PCRE2's \s without
 * UCP is ASCII only. */
#define WS "\\t\\n\\x{B}\\x{C}\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
/* BERT's punctuation: ASCII punctuation and symbols, and Unicode P* */
#define BERT_PUNCT "[!-/:-@\\[-`{-~]|\\p{P}"
/* GPT-2's pre-tokenizer regex (tokenizers' ByteLevel with use_regex) */
#define GPT2_SPLIT "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
/* the characters BERT pads with spaces (tokenizers' is_chinese_char) */
#define CJK "\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{20000}-\\x{2A6DF}\\x{2A700}-\\x{2B73F}\\x{2B740}-\\x{2B81F}" \
            "\\x{2B820}-\\x{2CEAF}\\x{F900}-\\x{FAFF}\\x{2F800}-\\x{2FA1F}"

typedef struct tk {
    hfx_tokenizer *t;
    hfx_arena *a;
    char *why;
    size_t why_size;
    bool failed, oom;
    bool byte_level;          /* a ByteLevel pre-tokenizer: the vocabulary is bytes spelled as chars */
    bool fused;               /* decoding: the tokens are one text by now (after Fuse) */
    hfx_tok_step steps[MAX_STEPS], first[MAX_STEPS], dsteps[MAX_STEPS];
    int n_steps, n_first, n_dsteps;
    hfx_tok_segment segs[HFX_TOK_MAX_SEGMENTS];
    int n_segs;
} tk;

/* Record why the tokenizer cannot be converted (the first reason wins); returns false. */
static bool no(tk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool no(tk *k, const char *fmt, ...) {
    if (!k->failed) {
        int n = snprintf(k->why, k->why_size, "tokenizer.json: ");
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < k->why_size) vsnprintf(k->why + n, k->why_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    k->failed = true;
    return false;
}

static bool oom(tk *k) {
    k->oom = k->failed = true;
    return false;
}

static void *alloc(tk *k, size_t n, size_t size) {
    void *p = n ? hfx_arena_alloc(k->a, n * size) : NULL;
    if (n && !p) oom(k);
    return p;
}

static const char *dup(tk *k, const char *s) {
    char *p = hfx_arena_strdup(k->a, s);
    if (!p) oom(k);
    return p;
}

static hfx_bytes bytes_of(tk *k, const void *p, size_t n) {
    uint8_t *d = alloc(k, n + 1, 1);
    if (d) memcpy(d, p, n);
    return (hfx_bytes){d, d ? (uint32_t)n : 0};
}

static const char *type_of(const json_t *o) {
    return json_string_value(json_object_get(o, "type"));
}

/* A string field, or NULL when absent, null or not a string. */
static const char *str(const json_t *o, const char *key) {
    return json_string_value(json_object_get(o, key));
}

/* A boolean field: absent or null gives dflt; anything else but a boolean is refused. */
static bool flag(tk *k, const json_t *o, const char *key, bool dflt, const char *where, bool *out) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return true;
    }
    if (!json_is_boolean(v)) return no(k, "%s.%s: not a boolean", where, key);
    *out = json_is_true(v);
    return true;
}

/* ---- text helpers ---- */

/* The next code point of valid UTF-8 (jansson only hands out valid UTF-8). */
static uint32_t next_cp(const uint8_t **s) {
    const uint8_t *p = *s;
    uint32_t c = *p++;
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra) c &= 0x3Fu >> extra;
    while (extra-- > 0) c = (c << 6) | (*p++ & 0x3Fu);
    *s = p;
    return c;
}

/* GPT-2's byte-level alphabet: the byte a character stands for, -1 for other characters. The
 * printable bytes stand for themselves; the others, in order, for U+0100 onwards. */
static int byte_of_char(uint32_t c) {
    if (c < 256) return (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE) ? (int)c : -1;
    uint32_t n = c - 256; /* the non-printable bytes in order: 0x00-0x20, 0x7F-0xA0, 0xAD */
    return n < 33 ? (int)n : n < 67 ? (int)(0x7F + n - 33) : n == 67 ? 0xAD : -1;
}

/* A byte-level token's bytes: each character's byte, other characters kept as their UTF-8 (as
 * the ByteLevel decoder does). */
static hfx_bytes from_byte_level(tk *k, const char *s, size_t n) {
    uint8_t *d = alloc(k, n + 1, 1);
    if (!d) return (hfx_bytes){0};
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    size_t m = 0;
    while (p < end) {
        const uint8_t *start = p;
        int b = byte_of_char(next_cp(&p));
        if (b >= 0) d[m++] = (uint8_t)b;
        else
            while (start < p) d[m++] = *start++;
    }
    return (hfx_bytes){d, (uint32_t)m};
}

/* `s` with every occurrence of `from` replaced by `to`. */
static hfx_bytes replace_all(tk *k, hfx_bytes s, const char *from, const char *to) {
    size_t fn = strlen(from), tn = strlen(to);
    if (!fn) return s;
    hfx_buf b = {0};
    for (uint32_t i = 0; i < s.n;) {
        if (i + fn <= s.n && memcmp(s.p + i, from, fn) == 0) {
            hfx_buf_append(&b, to, tn);
            i += (uint32_t)fn;
        } else {
            hfx_buf_append(&b, s.p + i, 1);
            i++;
        }
    }
    hfx_bytes r = b.oom ? (oom(k), (hfx_bytes){0}) : bytes_of(k, b.data ? (const char *)b.data : "", b.len);
    hfx_buf_free(&b);
    return r;
}

/* `s` as a PCRE2 pattern matching it literally. */
static const char *quote(tk *k, const char *s, size_t n) {
    hfx_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0) hfx_buf_puts(&b, "\\x00");
        else {
            if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'))
                hfx_buf_puts(&b, "\\");
            hfx_buf_append(&b, &c, 1);
        }
    }
    hfx_buf_append(&b, "", 1);
    const char *r = b.oom ? (oom(k), NULL) : dup(k, (const char *)b.data);
    hfx_buf_free(&b);
    return r;
}

/* Whether PCRE2 (the engine of openvino_tokenizers' regex ops) compiles `pattern` in UTF mode: a
 * tokenizer.json regex it cannot read would fail only when the runtime loads the graph. */
static bool compiles(tk *k, const char *pattern, const char *where) {
    int code;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &at, NULL);
    if (re) {
        pcre2_code_free(re);
        return true;
    }
    if (code == 121) return oom(k); /* PCRE2's "failed to allocate heap memory" */
    PCRE2_UCHAR msg[160];
    if (pcre2_get_error_message(code, msg, sizeof msg) < 0) snprintf((char *)msg, sizeof msg, "error %d", code);
    return no(k, "%s: a regex PCRE2 (openvino_tokenizers' engine) does not compile: %s at offset %zu", where,
              (const char *)msg, (size_t)at);
}

/* A replacement text with no group references: '$' and '\' would be read as syntax. */
static bool plain_replacement(tk *k, const char *s, const char *where) {
    if (strpbrk(s, "$\\")) return no(k, "%s: a replacement holding '$' or '\\' is not converted", where);
    return true;
}

/* ---- steps ---- */

static bool add_step(tk *k, hfx_tok_step *list, int *n, hfx_tok_step s) {
    if (*n >= MAX_STEPS) return no(k, "more than %d normalizer, pre-tokenizer or decoder steps", MAX_STEPS);
    list[(*n)++] = s;
    return true;
}

static bool replace_step(tk *k, hfx_tok_step *list, int *n, const char *pattern, const char *replace) {
    return add_step(k, list, n, (hfx_tok_step){.kind = HFX_TOK_REPLACE, .pattern = dup(k, pattern), .replace = dup(k, replace)});
}

static bool split_step(tk *k, const char *pattern, const char *behaviour, bool invert) {
    return add_step(k, k->steps, &k->n_steps,
                    (hfx_tok_step){.kind = HFX_TOK_SPLIT, .pattern = dup(k, pattern), .behaviour = behaviour, .invert = invert});
}

static bool unicode_step(tk *k, const char *form, bool case_fold) {
    return add_step(k, k->steps, &k->n_steps, (hfx_tok_step){.kind = HFX_TOK_UNICODE, .form = form, .case_fold = case_fold});
}

/* A {"String": s} or {"Regex": r} pattern as PCRE2. */
static const char *pattern_of(tk *k, const json_t *o, const char *where) {
    const json_t *p = json_object_get(o, "pattern");
    const json_t *s = json_object_get(p, "String"), *r = json_object_get(p, "Regex");
    if (json_is_string(s)) return quote(k, json_string_value(s), json_string_length(s));
    if (json_is_string(r)) {
        char field[96];
        snprintf(field, sizeof field, "%s.pattern", where);
        return compiles(k, json_string_value(r), field) ? dup(k, json_string_value(r)) : NULL;
    }
    no(k, "%s.pattern: neither {\"String\": ...} nor {\"Regex\": ...}", where);
    return NULL;
}

/* A component of tokenizer.json: a Sequence of its kind (each in order, nested at most
 * MAX_DEPTH deep) or one step, which `one` converts by its "type". */
typedef bool (*component_fn)(tk *k, const json_t *o, const char *type);

static bool walk(tk *k, const json_t *o, int depth, const char *part, const char *list_key, component_fn one) {
    const char *type = type_of(o);
    if (!type) return no(k, "%s: no \"type\"", part);
    if (depth > MAX_DEPTH) return no(k, "%s: Sequence nested too deep", part);
    if (strcmp(type, "Sequence") != 0) return one(k, o, type);
    const json_t *list = json_object_get(o, list_key);
    if (!json_is_array(list)) return no(k, "%s.%s: not an array", part, list_key);
    for (size_t i = 0; i < json_array_size(list); i++)
        if (!walk(k, json_array_get(list, i), depth + 1, part, list_key, one)) return false;
    return true;
}

static bool normalizer(tk *k, const json_t *o, const char *type) {
    if (!strcmp(type, "NFC") || !strcmp(type, "NFD") || !strcmp(type, "NFKC") || !strcmp(type, "NFKD")) {
        const char *forms[] = {"nfc", "nfd", "nfkc", "nfkd"};
        const char *form = forms[(type[2] == 'K' ? 2 : 0) + (type[strlen(type) - 1] == 'D')];
        return unicode_step(k, form, false);
    }
    if (!strcmp(type, "Lowercase")) return unicode_step(k, "identity", true);
    if (!strcmp(type, "StripAccents")) return replace_step(k, k->steps, &k->n_steps, "\\p{Mn}", "");
    if (!strcmp(type, "Replace")) {
        const char *pattern = pattern_of(k, o, "normalizer(Replace)"), *content = str(o, "content");
        if (!pattern) return false;
        if (!content) return no(k, "normalizer(Replace).content: not a string");
        return plain_replacement(k, content, "normalizer(Replace).content") &&
               replace_step(k, k->steps, &k->n_steps, pattern, content);
    }
    if (!strcmp(type, "Prepend")) {
        const char *prepend = str(o, "prepend");
        if (!prepend) return no(k, "normalizer(Prepend).prepend: not a string");
        if (!plain_replacement(k, prepend, "normalizer(Prepend).prepend")) return false;
        char *r = hfx_arena_printf(k->a, "%s$1", prepend);
        return r ? replace_step(k, k->steps, &k->n_steps, "(?:^)([\\s\\S])", r) : oom(k);
    }
    if (!strcmp(type, "Strip")) {
        bool left = false, right = false;
        if (!flag(k, o, "strip_left", false, "normalizer(Strip)", &left) ||
            !flag(k, o, "strip_right", false, "normalizer(Strip)", &right))
            return false;
        return (!left || replace_step(k, k->steps, &k->n_steps, "^[" WS "]+", "")) &&
               (!right || replace_step(k, k->steps, &k->n_steps, "[" WS "]+$", ""));
    }
    if (!strcmp(type, "BertNormalizer")) {
        bool clean = true, chinese = true, lower = true, strip = true;
        const json_t *sa = json_object_get(o, "strip_accents");
        if (!flag(k, o, "clean_text", true, "normalizer(BertNormalizer)", &clean) ||
            !flag(k, o, "handle_chinese_chars", true, "normalizer(BertNormalizer)", &chinese) ||
            !flag(k, o, "lowercase", true, "normalizer(BertNormalizer)", &lower) ||
            !flag(k, o, "strip_accents", lower, "normalizer(BertNormalizer)", &strip))
            return false;
        (void)sa;
        /* tokenizers' bert.rs: drop NUL, U+FFFD and control characters (not \t \n \r), then map
         * whitespace to ' '; pad CJK ideographs; NFD + strip marks; lowercase */
        if (clean && (!replace_step(k, k->steps, &k->n_steps,
                                    "[\\x{0}-\\x{8}\\x{B}\\x{C}\\x{E}-\\x{1F}\\x{7F}-\\x{9F}\\p{Cf}\\p{Co}\\p{Cn}\\x{FFFD}]", "") ||
                      !replace_step(k, k->steps, &k->n_steps, "[" WS "]", " ")))
            return false;
        if (chinese && !replace_step(k, k->steps, &k->n_steps, "([" CJK "])", " $1 ")) return false;
        if (strip && (!unicode_step(k, "nfd", false) ||
                      !replace_step(k, k->steps, &k->n_steps, "\\p{Mn}", "")))
            return false;
        return !lower || unicode_step(k, "identity", true);
    }
    /* Precompiled (SentencePiece's character map) is refused until a test holds the
     * CharsMapNormalization op's reading of it to transformers' */
    return no(k, "normalizer type '%s' is not converted", type);
}

/* tokenizers' SplitDelimiterBehavior, as openvino_tokenizers spells it. */
static const char *behaviour_of(tk *k, const char *b, const char *where) {
    static const char *const names[][2] = {{"Isolated", "isolate"}, {"Removed", "remove"},
                                           {"MergedWithPrevious", "mergedwithprevious"},
                                           {"MergedWithNext", "mergedwithnext"}, {"Contiguous", "contiguous"}};
    for (size_t i = 0; b && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(b, names[i][0])) return names[i][1];
    no(k, "%s.behavior '%s' is not converted", where, b ? b : "(missing)");
    return NULL;
}

static bool pre_tokenizer(tk *k, const json_t *o, const char *type) {
    if (!strcmp(type, "ByteLevel")) {
        bool prefix = false, regex = true;
        if (!flag(k, o, "add_prefix_space", false, "pre_tokenizer(ByteLevel)", &prefix) ||
            !flag(k, o, "use_regex", true, "pre_tokenizer(ByteLevel)", &regex))
            return false;
        k->byte_level = true;
        if (prefix && !replace_step(k, k->steps, &k->n_steps, "^([^ ])", " $1")) return false;
        return !regex || split_step(k, GPT2_SPLIT, "isolate", false);
    }
    if (!strcmp(type, "Split")) {
        const char *pattern = pattern_of(k, o, "pre_tokenizer(Split)");
        const char *behaviour = pattern ? behaviour_of(k, str(o, "behavior"), "pre_tokenizer(Split)") : NULL;
        bool invert = false;
        if (!behaviour || !flag(k, o, "invert", false, "pre_tokenizer(Split)", &invert)) return false;
        if (!*pattern) return no(k, "pre_tokenizer(Split).pattern: empty");
        return split_step(k, pattern, behaviour, invert);
    }
    if (!strcmp(type, "Metaspace")) {
        const char *rep = str(o, "replacement"), *scheme = str(o, "prepend_scheme");
        bool split = true, legacy_prefix = true;
        if (!rep) rep = "\xE2\x96\x81";
        if (!flag(k, o, "split", true, "pre_tokenizer(Metaspace)", &split) ||
            !flag(k, o, "add_prefix_space", true, "pre_tokenizer(Metaspace)", &legacy_prefix))
            return false;
        if (!scheme) scheme = legacy_prefix ? "always" : "never";
        if (!plain_replacement(k, rep, "pre_tokenizer(Metaspace).replacement")) return false;
        const char *q = quote(k, rep, strlen(rep));
        if (!q || !replace_step(k, k->steps, &k->n_steps, " ", rep)) return false;
        if (!strcmp(scheme, "always")) {
            /* prepend unless the piece already starts with the replacement */
            char *p = hfx_arena_printf(k->a, "(^)(?!%s)", q), *r = hfx_arena_printf(k->a, "%s", rep);
            if (!p || !r) return oom(k);
            if (!replace_step(k, k->steps, &k->n_steps, p, r)) return false;
        } else if (!strcmp(scheme, "first")) {
            /* the first piece of the text only: on the whole input, before added tokens split
             * it, where a leading space becomes the replacement anyway */
            char *r = hfx_arena_printf(k->a, "%s", rep);
            if (!r) return oom(k);
            if (!replace_step(k, k->first, &k->n_first, "^(?![ ]|$)", r)) return false; /* + added tokens: first_piece_only */
        } else if (strcmp(scheme, "never"))
            return no(k, "pre_tokenizer(Metaspace).prepend_scheme '%s' is not converted", scheme);
        return !split || split_step(k, q, "mergedwithnext", false);
    }
    if (!strcmp(type, "Whitespace")) return split_step(k, "\\w+|[^\\w\\s]+", "remove", true);
    if (!strcmp(type, "WhitespaceSplit")) return split_step(k, "[" WS "]+", "remove", false);
    if (!strcmp(type, "BertPreTokenizer"))
        return split_step(k, "[" WS "]+", "remove", false) && split_step(k, BERT_PUNCT, "isolate", false);
    if (!strcmp(type, "Punctuation")) {
        const char *b = behaviour_of(k, str(o, "behavior") ? str(o, "behavior") : "Isolated", "pre_tokenizer(Punctuation)");
        return b && split_step(k, BERT_PUNCT, b, false);
    }
    if (!strcmp(type, "Digits")) {
        bool each = false;
        if (!flag(k, o, "individual_digits", false, "pre_tokenizer(Digits)", &each)) return false;
        return split_step(k, "[\\p{Nd}\\p{Nl}\\p{No}]", each ? "isolate" : "contiguous", false);
    }
    return no(k, "pre_tokenizer type '%s' is not converted", type);
}

/* ---- the model ---- */

static bool set_vocab(tk *k, int64_t id, const char *s, size_t n, const char *where) {
    hfx_tokenizer *t = k->t;
    if (id < 0 || id >= t->n_vocab) return no(k, "%s: id %lld out of range", where, (long long)id);
    if (t->vocab[id].p) return no(k, "%s: two tokens have id %lld", where, (long long)id);
    t->dvocab[id] = bytes_of(k, s, n); /* as spelled: the decoder steps start from this */
    t->vocab[id] = k->byte_level ? from_byte_level(k, s, n) : t->dvocab[id];
    return !k->oom;
}

/* The largest id in the model's vocabulary and the added tokens. */
static bool count_ids(tk *k, const json_t *model, const json_t *added, int64_t *max_id) {
    *max_id = -1;
    const json_t *vocab = json_object_get(model, "vocab");
    if (k->t->model == HFX_TOK_UNIGRAM) {
        if (!json_is_array(vocab)) return no(k, "model.vocab: not an array");
        *max_id = (int64_t)json_array_size(vocab) - 1;
    } else {
        if (!json_is_object(vocab)) return no(k, "model.vocab: not an object");
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)vocab, key, v) {
            if (!json_is_integer(v)) return no(k, "model.vocab['%s']: not an integer", key);
            if (json_integer_value(v) > *max_id) *max_id = json_integer_value(v);
        }
    }
    for (size_t i = 0; i < json_array_size(added); i++) {
        const json_t *id = json_object_get(json_array_get(added, i), "id");
        if (!json_is_integer(id)) return no(k, "added_tokens[%zu].id: not an integer", i);
        if (json_integer_value(id) > *max_id) *max_id = json_integer_value(id);
    }
    if (*max_id >= MAX_VOCAB) return no(k, "token id %lld: over %d is refused", (long long)*max_id, MAX_VOCAB);
    /* ids are dense in practice (the vocabulary, then the added tokens): a few entries naming a
     * huge id would make every table that large */
    size_t entries = json_array_size(added) + (json_is_array(vocab) ? json_array_size(vocab) : json_object_size(vocab));
    if ((uint64_t)*max_id > 2 * (uint64_t)entries + 4096)
        return no(k, "token id %lld with only %zu tokens: ids this sparse are refused", (long long)*max_id, entries);
    if (*max_id < 0) return no(k, "model.vocab: empty");
    return true;
}

static int32_t find_token(const hfx_tokenizer *t, const char *s) {
    size_t n = strlen(s);
    for (int32_t i = 0; i < t->n_vocab; i++)
        if (t->vocab[i].n == n && memcmp(t->vocab[i].p, s, n) == 0) return i;
    return -1;
}

static bool model_bpe(tk *k, const json_t *m) {
    hfx_tokenizer *t = k->t;
    const json_t *vocab = json_object_get(m, "vocab"), *merges = json_object_get(m, "merges");
    const json_t *dropout = json_object_get(m, "dropout");
    if (dropout && !json_is_null(dropout) && !(json_is_number(dropout) && json_number_value(dropout) == 0))
        return no(k, "model.dropout: a random tokenization is not converted");
    const char *prefix = str(m, "continuing_subword_prefix"), *suffix = str(m, "end_of_word_suffix");
    if ((prefix && *prefix) || (suffix && *suffix))
        return no(k, "model: BPE with continuing_subword_prefix or end_of_word_suffix is not converted");
    bool ignore_merges = false;
    if (!flag(k, m, "fuse_unk", false, "model", &t->fuse_unk) ||
        !flag(k, m, "byte_fallback", false, "model", &t->byte_fallback) ||
        !flag(k, m, "ignore_merges", false, "model", &ignore_merges))
        return false;
    if (ignore_merges)
        t->note = "tokenizer.json: model.ignore_merges is true, and the BPETokenizer op always merges: a word that "
                  "is a vocabulary entry but is not reached by merging tokenizes differently (as with "
                  "openvino_tokenizers' own converter)";
    t->unk_token = dup(k, str(m, "unk_token") ? str(m, "unk_token") : "");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)vocab, key, v) {
        if (!set_vocab(k, json_integer_value(v), key, strlen(key), "model.vocab")) return false;
    }
    if (!json_is_array(merges)) return no(k, "model.merges: not an array");
    size_t n = json_array_size(merges);
    t->n_merges = (int32_t)n;
    t->merge_left = alloc(k, n, sizeof *t->merge_left);
    t->merge_right = alloc(k, n, sizeof *t->merge_right);
    if (n && (!t->merge_left || !t->merge_right)) return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(merges, i);
        const char *l, *r;
        size_t ln, rn;
        if (json_is_string(e)) { /* "left right" */
            l = json_string_value(e);
            const char *sp = strchr(l, ' ');
            if (!sp || strchr(sp + 1, ' ')) return no(k, "model.merges[%zu]: not two tokens separated by one space", i);
            ln = (size_t)(sp - l);
            r = sp + 1;
            rn = strlen(r);
        } else if (json_is_array(e) && json_array_size(e) == 2 && json_is_string(json_array_get(e, 0)) &&
                   json_is_string(json_array_get(e, 1))) {
            l = json_string_value(json_array_get(e, 0));
            ln = json_string_length(json_array_get(e, 0));
            r = json_string_value(json_array_get(e, 1));
            rn = json_string_length(json_array_get(e, 1));
        } else
            return no(k, "model.merges[%zu]: neither \"a b\" nor [\"a\", \"b\"]", i);
        t->merge_left[i] = k->byte_level ? from_byte_level(k, l, ln) : bytes_of(k, l, ln);
        t->merge_right[i] = k->byte_level ? from_byte_level(k, r, rn) : bytes_of(k, r, rn);
        if (k->oom) return false;
    }
    return true;
}

static bool model_wordpiece(tk *k, const json_t *m) {
    hfx_tokenizer *t = k->t;
    const char *key, *unk = str(m, "unk_token"), *prefix = str(m, "continuing_subword_prefix");
    const json_t *v, *max = json_object_get(m, "max_input_chars_per_word");
    json_object_foreach((json_t *)json_object_get(m, "vocab"), key, v) {
        if (!set_vocab(k, json_integer_value(v), key, strlen(key), "model.vocab")) return false;
    }
    t->subword_prefix = dup(k, prefix ? prefix : "##");
    t->max_word_chars = json_is_integer(max) && json_integer_value(max) > 0 && json_integer_value(max) < INT32_MAX
                            ? (int32_t)json_integer_value(max) : 100;
    t->unk_id = unk ? find_token(t, unk) : -1;
    if (t->unk_id < 0) return no(k, "model.unk_token: not in the vocabulary");
    return true;
}

static bool model_unigram(tk *k, const json_t *m) {
    hfx_tokenizer *t = k->t;
    const json_t *vocab = json_object_get(m, "vocab"), *unk = json_object_get(m, "unk_id");
    if (!flag(k, m, "byte_fallback", false, "model", &t->byte_fallback)) return false;
    t->scores = alloc(k, (size_t)t->n_vocab, sizeof *t->scores);
    if (!t->scores) return false;
    for (size_t i = 0; i < json_array_size(vocab); i++) {
        const json_t *e = json_array_get(vocab, i), *s = json_array_get(e, 0), *p = json_array_get(e, 1);
        if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_string(s) || !json_is_number(p) ||
            !isfinite(json_number_value(p)))
            return no(k, "model.vocab[%zu]: not [token, score]", i);
        if (!set_vocab(k, (int64_t)i, json_string_value(s), json_string_length(s), "model.vocab")) return false;
        t->scores[i] = (float)json_number_value(p);
    }
    if (json_is_integer(unk)) {
        if (json_integer_value(unk) < 0 || json_integer_value(unk) >= (int64_t)json_array_size(vocab))
            return no(k, "model.unk_id: out of range");
        t->unk_id = (int32_t)json_integer_value(unk);
    } else if (unk && !json_is_null(unk))
        return no(k, "model.unk_id: not an integer");
    return true;
}

/* Added tokens: matched in the raw text first; each sits in the vocabulary at its id. */
static bool added_tokens(tk *k, const json_t *added) {
    hfx_tokenizer *t = k->t;
    size_t n = json_array_size(added);
    t->added = alloc(k, n, sizeof *t->added);
    t->added_id = alloc(k, n, sizeof *t->added_id);
    t->added_lstrip = alloc(k, n, sizeof *t->added_lstrip);
    t->added_rstrip = alloc(k, n, sizeof *t->added_rstrip);
    t->skip_ids = alloc(k, n, sizeof *t->skip_ids);
    if (n && (!t->added || !t->added_id || !t->added_lstrip || !t->added_rstrip || !t->skip_ids)) return false;
    float max_score = -INFINITY;
    for (int32_t i = 0; t->scores && i < t->n_vocab; i++)
        if (t->vocab[i].p && t->scores[i] > max_score) max_score = t->scores[i];
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(added, i), *c = json_object_get(a, "content");
        int64_t id = json_integer_value(json_object_get(a, "id"));
        bool special = false, single = false;
        char where[48];
        snprintf(where, sizeof where, "added_tokens[%zu]", i);
        if (!json_is_string(c) || !json_string_length(c)) return no(k, "%s.content: not a non-empty string", where);
        if (!flag(k, a, "special", false, where, &special) || !flag(k, a, "lstrip", false, where, &t->added_lstrip[i]) ||
            !flag(k, a, "rstrip", false, where, &t->added_rstrip[i]) || !flag(k, a, "single_word", false, where, &single))
            return false;
        if (single) return no(k, "%s.single_word: not converted", where);
        /* the literal text, in the vocabulary too (replacing a model token of the same id) */
        if (id < 0 || id >= t->n_vocab) return no(k, "%s.id: %lld out of range", where, (long long)id);
        t->added[i] = bytes_of(k, json_string_value(c), json_string_length(c));
        t->added_id[i] = (int32_t)id;
        t->vocab[id] = t->dvocab[id] = t->added[i];
        if (t->scores) {
            /* openvino_tokenizers' Unigram op: an added token must outscore its pieces */
            float s = max_score * (float)json_string_length(c) - 0.1f;
            if (!isfinite(t->scores[id]) || s > t->scores[id]) t->scores[id] = s;
        }
        if (special) t->skip_ids[t->n_skip++] = (int32_t)id;
    }
    t->n_added = (int32_t)n;
    hfx_bytes empty = bytes_of(k, "", 0); /* one for every id nothing names */
    for (int32_t i = 0; i < t->n_vocab; i++)
        if (!t->vocab[i].p) {
            t->vocab[i] = t->dvocab[i] = empty;
            if (t->scores) t->scores[i] = max_score > -INFINITY ? -1e9f : 0;
        }
    return !k->oom;
}

/* Added tokens as PCRE2 alternatives, in reverse byte order (so "<a>x" comes before "<a>" and
 * wins), grouped by whether they take the spaces beside them (lstrip/rstrip). */
static int desc_bytes(const void *a, const void *b) {
    const hfx_bytes *x = *(const hfx_bytes *const *)a, *y = *(const hfx_bytes *const *)b;
    uint32_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, n);
    return c ? -c : (x->n < y->n) - (x->n > y->n);
}

static bool added_pattern(tk *k) {
    const hfx_tokenizer *t = k->t;
    const hfx_bytes **sorted = alloc(k, (size_t)t->n_added + 1, sizeof *sorted);
    if (!sorted) return false;
    hfx_buf b = {0};
    for (int group = 0; group < 4; group++) {
        bool l = group & 1, r = group & 2;
        int n = 0;
        for (int32_t i = 0; i < t->n_added; i++)
            if (t->added_lstrip[i] == l && t->added_rstrip[i] == r) sorted[n++] = &t->added[i];
        if (!n) continue;
        qsort(sorted, (size_t)n, sizeof *sorted, desc_bytes);
        hfx_buf_puts(&b, b.len ? "|" : "");
        hfx_buf_puts(&b, l ? "(?:\\s*)(" : "(");
        for (int i = 0; i < n; i++) {
            const char *q = quote(k, (const char *)sorted[i]->p, sorted[i]->n);
            if (!q) break;
            hfx_buf_puts(&b, i ? "|" : "");
            hfx_buf_puts(&b, q);
        }
        hfx_buf_puts(&b, r ? ")(?:\\s*)" : ")");
    }
    if (!b.len) hfx_buf_puts(&b, "[^\\s\\S]"); /* no added tokens: a class nothing matches */
    hfx_buf_append(&b, "", 1);
    if (!b.oom && !k->oom && compiles(k, (const char *)b.data, "added_tokens"))
        k->t->added_pattern = dup(k, (const char *)b.data);
    bool grew = !b.oom;
    hfx_buf_free(&b); /* (clears b) */
    return grew ? !k->failed : oom(k);
}

/* Metaspace's "first" prepends to the text's first piece only: not when the text starts with an
 * added token (that is the first piece, and the model never sees it). */
static bool first_piece_only(tk *k) {
    if (!k->n_first) return true;
    hfx_buf b = {0};
    hfx_buf_puts(&b, "^(?![ ]|$");
    for (int32_t i = 0; i < k->t->n_added; i++) {
        const char *q = quote(k, (const char *)k->t->added[i].p, k->t->added[i].n);
        if (!q) break;
        hfx_buf_puts(&b, k->t->added_lstrip[i] ? "|\\s*" : "|");
        hfx_buf_puts(&b, q);
    }
    hfx_buf_append(&b, ")", 2);
    if (!b.oom && !k->oom && compiles(k, (const char *)b.data, "pre_tokenizer(Metaspace)"))
        k->first[0].pattern = dup(k, (const char *)b.data);
    bool grew = !b.oom;
    hfx_buf_free(&b); /* (clears b) */
    return grew ? !k->failed : oom(k);
}

/* ---- post-processor: the single-sequence template ---- */

static bool add_segment(tk *k, hfx_tok_segment *segs, int *n, hfx_tok_segment s) {
    if (*n >= HFX_TOK_MAX_SEGMENTS) return no(k, "post_processor: more than %d template pieces", HFX_TOK_MAX_SEGMENTS);
    segs[(*n)++] = s;
    return true;
}

static bool one_token(tk *k, hfx_tok_segment *segs, int *n, const json_t *pair, const char *where) {
    const json_t *id = json_array_get(pair, 1);
    if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) >= k->t->n_vocab)
        return no(k, "%s: not [token, id] with an id in the vocabulary", where);
    int32_t *ids = alloc(k, 1, sizeof *ids);
    if (!ids) return false;
    ids[0] = (int32_t)json_integer_value(id);
    return add_segment(k, segs, n, (hfx_tok_segment){.ids = ids, .n_ids = 1});
}

/* Rewrite k->segs through one post-processor: the sequence piece is replaced by the template. */
static bool post_processor(tk *k, const json_t *o, const char *type) {
    hfx_tok_segment out[HFX_TOK_MAX_SEGMENTS];
    int n = 0;
    if (!strcmp(type, "ByteLevel")) return true; /* offsets only */
    if (!strcmp(type, "BertProcessing") || !strcmp(type, "RobertaProcessing")) {
        if (!one_token(k, out, &n, json_object_get(o, "cls"), "post_processor.cls")) return false;
        for (int i = 0; i < k->n_segs; i++)
            if (!add_segment(k, out, &n, k->segs[i])) return false;
        if (!one_token(k, out, &n, json_object_get(o, "sep"), "post_processor.sep")) return false;
    } else if (!strcmp(type, "TemplateProcessing")) {
        const json_t *single = json_object_get(o, "single"), *specials = json_object_get(o, "special_tokens");
        if (!json_is_array(single)) return no(k, "post_processor.single: not an array");
        for (size_t i = 0; i < json_array_size(single); i++) {
            const json_t *item = json_array_get(single, i);
            const json_t *seq = json_object_get(item, "Sequence"), *sp = json_object_get(item, "SpecialToken");
            if (seq) {
                if (!str(seq, "id") || strcmp(str(seq, "id"), "A"))
                    return no(k, "post_processor.single[%zu]: a sequence other than A", i);
                for (int j = 0; j < k->n_segs; j++)
                    if (!add_segment(k, out, &n, k->segs[j])) return false;
                continue;
            }
            const char *name = str(sp, "id");
            const json_t *ids = json_object_get(json_object_get(specials, name ? name : ""), "ids");
            if (!name || !json_is_array(ids) || !json_array_size(ids))
                return no(k, "post_processor.single[%zu]: a special token without ids in special_tokens", i);
            size_t m = json_array_size(ids);
            if (m > HFX_TOK_MAX_SEGMENT_IDS)
                return no(k, "post_processor.special_tokens['%s'].ids: over %d ids", name, HFX_TOK_MAX_SEGMENT_IDS);
            int32_t *v = alloc(k, m, sizeof *v);
            if (!v) return false;
            for (size_t j = 0; j < m; j++) {
                const json_t *id = json_array_get(ids, j);
                if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) >= k->t->n_vocab)
                    return no(k, "post_processor.special_tokens['%s'].ids[%zu]: not an id in the vocabulary", name, j);
                v[j] = (int32_t)json_integer_value(id);
            }
            if (!add_segment(k, out, &n, (hfx_tok_segment){.ids = v, .n_ids = (int)m})) return false;
        }
    } else
        return no(k, "post_processor type '%s' is not converted", type);
    memcpy(k->segs, out, (size_t)n * sizeof *out);
    k->n_segs = n;
    return true;
}

/* ---- decoder ---- */

/* tokenizers' WordPiece cleanup (and transformers' clean_up_tokenization_spaces) */
static bool cleanup_steps(tk *k) {
    static const char *const pairs[][2] = {{" \\.", "."}, {" \\?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
                                           {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
                                           {" 've", "'ve"}, {" 're", "'re"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (!replace_step(k, k->dsteps, &k->n_dsteps, pairs[i][0], pairs[i][1])) return false;
    return true;
}

static bool strip_text(tk *k, const char *content, int64_t start, int64_t stop) {
    const char *q = quote(k, content, strlen(content));
    if (!q) return false;
    if (start > 0) {
        char *p = hfx_arena_printf(k->a, "^(?:%s){0,%lld}", q, (long long)start);
        if (!p || !replace_step(k, k->dsteps, &k->n_dsteps, p, "")) return p ? false : oom(k);
    }
    if (stop > 0) {
        char *p = hfx_arena_printf(k->a, "(?:%s){0,%lld}$", q, (long long)stop);
        if (!p || !replace_step(k, k->dsteps, &k->n_dsteps, p, "")) return p ? false : oom(k);
    }
    return true;
}

/* One decoder; k->fused says whether the tokens are one text yet (steps before Fuse act on each
 * token, which for the steps converted here is the same as acting on its vocabulary entry). */
static bool decoder(tk *k, const json_t *o, const char *type) {
    hfx_tokenizer *t = k->t;
    bool *fused = &k->fused;
    if (!strcmp(type, "Fuse")) {
        *fused = true;
        return true;
    }
    if (!strcmp(type, "ByteFallback")) {
        if (*fused) return no(k, "decoder: ByteFallback after Fuse is not converted");
        t->decode_byte_fallback = true;
        return true;
    }
    if (!strcmp(type, "ByteLevel")) {
        if (*fused) return no(k, "decoder: ByteLevel after Fuse is not converted");
        for (int32_t i = 0; i < t->n_vocab; i++) {
            t->dvocab[i] = from_byte_level(k, (const char *)t->dvocab[i].p, t->dvocab[i].n);
            if (k->oom) return false;
        }
        return true;
    }
    if (!strcmp(type, "Replace")) {
        const json_t *p = json_object_get(json_object_get(o, "pattern"), "String");
        const char *content = str(o, "content");
        if (!json_is_string(p) || !content) return no(k, "decoder(Replace): only a String pattern is converted");
        if (*fused) {
            const char *q = quote(k, json_string_value(p), json_string_length(p));
            return q && plain_replacement(k, content, "decoder(Replace).content") &&
                   replace_step(k, k->dsteps, &k->n_dsteps, q, content);
        }
        for (int32_t i = 0; i < t->n_vocab; i++) {
            t->dvocab[i] = replace_all(k, t->dvocab[i], json_string_value(p), content);
            if (k->oom) return false;
        }
        return true;
    }
    if (!strcmp(type, "Strip")) {
        const char *content = str(o, "content");
        const json_t *start = json_object_get(o, "start"), *stop = json_object_get(o, "stop");
        if (!content || !json_is_integer(start) || !json_is_integer(stop) || json_integer_value(start) < 0 ||
            json_integer_value(stop) < 0 || json_integer_value(start) > 64 || json_integer_value(stop) > 64)
            return no(k, "decoder(Strip): content, start or stop malformed");
        if (!*fused) return no(k, "decoder: Strip on each token (before Fuse) is not converted");
        return strip_text(k, content, json_integer_value(start), json_integer_value(stop));
    }
    if (!strcmp(type, "Metaspace")) {
        const char *rep = str(o, "replacement"), *scheme = str(o, "prepend_scheme");
        bool legacy_prefix = true;
        if (!flag(k, o, "add_prefix_space", true, "decoder(Metaspace)", &legacy_prefix)) return false;
        if (!rep) rep = "\xE2\x96\x81";
        if (!scheme) scheme = legacy_prefix ? "always" : "never";
        if (*fused) return no(k, "decoder: Metaspace after Fuse is not converted");
        for (int32_t i = 0; i < t->n_vocab; i++) {
            t->dvocab[i] = replace_all(k, t->dvocab[i], rep, " ");
            if (k->oom) return false;
        }
        *fused = true;
        return strcmp(scheme, "never") == 0 || strip_text(k, " ", 1, 0);
    }
    if (!strcmp(type, "WordPiece")) {
        const char *prefix = str(o, "prefix");
        bool cleanup = true;
        if (!flag(k, o, "cleanup", true, "decoder(WordPiece)", &cleanup)) return false;
        if (!prefix) prefix = "##";
        if (*fused) return no(k, "decoder: WordPiece after Fuse is not converted");
        size_t pn = strlen(prefix);
        for (int32_t i = 0; i < t->n_vocab; i++) {
            hfx_bytes v = t->dvocab[i];
            if (pn && v.n >= pn && memcmp(v.p, prefix, pn) == 0) {
                t->dvocab[i] = (hfx_bytes){v.p + pn, v.n - (uint32_t)pn};
            } else {
                uint8_t *d = alloc(k, v.n + 2, 1);
                if (!d) return false;
                d[0] = ' ';
                memcpy(d + 1, v.p, v.n);
                t->dvocab[i] = (hfx_bytes){d, v.n + 1};
            }
        }
        *fused = true;
        return strip_text(k, " ", 1, 0) && (!cleanup || cleanup_steps(k));
    }
    return no(k, "decoder type '%s' is not converted", type);
}

/* No decoder: tokenizers joins the tokens with single spaces. */
static bool join_with_spaces(tk *k) {
    hfx_tokenizer *t = k->t;
    for (int32_t i = 0; i < t->n_vocab; i++) {
        hfx_bytes v = t->dvocab[i];
        uint8_t *d = alloc(k, v.n + 2, 1);
        if (!d) return false;
        d[0] = ' ';
        memcpy(d + 1, v.p, v.n);
        t->dvocab[i] = (hfx_bytes){d, v.n + 1};
    }
    return strip_text(k, " ", 1, 0);
}

/* ---- tokenizer_config.json ---- */

/* A special token of tokenizer_config.json ("bos_token": "<s>" or {"content": "<s>"}) → its id. */
static int64_t config_token(const hfx_tokenizer *t, const json_t *cfg, const char *key) {
    const json_t *v = json_object_get(cfg, key);
    const char *s = json_is_string(v) ? json_string_value(v) : str(v, "content");
    return s ? find_token(t, s) : -1;
}

static bool chat_template(tk *k, const hfx_checkpoint *ck, const json_t *cfg, hfx_status *st) {
    const json_t *ct = json_object_get(cfg, "chat_template");
    if (json_is_string(ct)) {
        k->t->chat_template = dup(k, json_string_value(ct));
        return true;
    }
    for (size_t i = 0; json_is_array(ct) && i < json_array_size(ct); i++) {
        const json_t *e = json_array_get(ct, i);
        if (str(e, "name") && !strcmp(str(e, "name"), "default") && str(e, "template")) {
            k->t->chat_template = dup(k, str(e, "template"));
            return true;
        }
    }
    char *text;
    size_t len;
    hfx_error e = {0};
    *st = hfx_checkpoint_side_text(ck, "chat_template.jinja", &text, &len, &e);
    if (*st == HFX_ERR_NOMEM) return oom(k);
    if (*st) { /* unreadable: no template, said in the note */
        *st = HFX_OK;
        return no(k, "chat_template.jinja: %s", e.message);
    }
    if (text && strlen(text) == len) k->t->chat_template = dup(k, text);
    free(text);
    return true;
}

/* ---- the whole file ---- */

static bool convert(tk *k, const hfx_checkpoint *ck, const json_t *root, const json_t *cfg, hfx_status *st) {
    hfx_tokenizer *t = k->t;
    const json_t *model = json_object_get(root, "model"), *added = json_object_get(root, "added_tokens");
    const json_t *norm = json_object_get(root, "normalizer"), *pre = json_object_get(root, "pre_tokenizer");
    const json_t *post = json_object_get(root, "post_processor"), *dec = json_object_get(root, "decoder");
    const char *type = str(model, "type");
    if (!type) return no(k, "model.type: missing");
    if (!strcmp(type, "BPE")) t->model = HFX_TOK_BPE;
    else if (!strcmp(type, "WordPiece")) t->model = HFX_TOK_WORDPIECE;
    else if (!strcmp(type, "Unigram")) t->model = HFX_TOK_UNIGRAM;
    else return no(k, "model type '%s' is not converted", type);
    if (added && !json_is_array(added)) return no(k, "added_tokens: not an array");
    if (norm && !json_is_null(norm) && !walk(k, norm, 0, "normalizer", "normalizers", normalizer)) return false;
    if (pre && !json_is_null(pre) && !walk(k, pre, 0, "pre_tokenizer", "pretokenizers", pre_tokenizer)) return false;

    int64_t max_id;
    if (!count_ids(k, model, added, &max_id)) return false;
    t->n_vocab = (int32_t)max_id + 1;
    t->vocab = alloc(k, (size_t)t->n_vocab, sizeof *t->vocab);
    t->dvocab = alloc(k, (size_t)t->n_vocab, sizeof *t->dvocab);
    if (!t->vocab || !t->dvocab) return false;
    t->unk_id = -1;
    if (!(t->model == HFX_TOK_BPE ? model_bpe(k, model) : t->model == HFX_TOK_WORDPIECE ? model_wordpiece(k, model)
                                                                                        : model_unigram(k, model)))
        return false;
    if (!added_tokens(k, added) || !added_pattern(k) || !first_piece_only(k)) return false;

    if (dec && !json_is_null(dec)) {
        if (!walk(k, dec, 0, "decoder", "decoders", decoder)) return false;
    } else if (!join_with_spaces(k)) /* no decoder: tokenizers joins the tokens with spaces */
        return false;

    k->segs[0] = (hfx_tok_segment){.sequence = true};
    k->n_segs = 1;
    if (post && !json_is_null(post) && !walk(k, post, 0, "post_processor", "processors", post_processor)) return false;
    if (!json_is_null(json_object_get(cfg, "clean_up_tokenization_spaces")) &&
        json_is_true(json_object_get(cfg, "clean_up_tokenization_spaces")) && !cleanup_steps(k))
        return false;

    t->bos_id = config_token(t, cfg, "bos_token");
    t->eos_id = config_token(t, cfg, "eos_token");
    t->pad_id = config_token(t, cfg, "pad_token");
    if (!chat_template(k, ck, cfg, st)) return false;

    t->steps = alloc(k, (size_t)k->n_steps, sizeof *t->steps);
    t->first = alloc(k, (size_t)k->n_first, sizeof *t->first);
    t->dsteps = alloc(k, (size_t)k->n_dsteps, sizeof *t->dsteps);
    t->segments = alloc(k, (size_t)k->n_segs, sizeof *t->segments);
    if (k->oom) return false;
    if (k->n_steps) memcpy(t->steps, k->steps, (size_t)k->n_steps * sizeof *t->steps);
    if (k->n_first) memcpy(t->first, k->first, (size_t)k->n_first * sizeof *t->first);
    if (k->n_dsteps) memcpy(t->dsteps, k->dsteps, (size_t)k->n_dsteps * sizeof *t->dsteps);
    if (k->n_segs) memcpy(t->segments, k->segs, (size_t)k->n_segs * sizeof *t->segments);
    t->n_steps = k->n_steps;
    t->n_first = k->n_first;
    t->n_dsteps = k->n_dsteps;
    t->n_segments = k->n_segs;
    return true;
}

hfx_status hfx_tokenizer_load(const hfx_checkpoint *ck, hfx_tokenizer **out, char *why, size_t why_size,
                              hfx_error *err) {
    *out = NULL;
    if (why_size) why[0] = 0;
    json_t *root = NULL, *cfg = NULL;
    hfx_error e = {0};
    hfx_status st = hfx_checkpoint_side_json(ck, "tokenizer.json", false, &root, &e);
    if (st == HFX_ERR_NOMEM) return hfx_fail(err, st, "out of memory");
    if (st) { /* unreadable or malformed: said, not fatal to the export */
        snprintf(why, why_size, "%s", e.message);
        return HFX_OK;
    }
    if (!root) return HFX_OK;
    st = hfx_checkpoint_side_json(ck, "tokenizer_config.json", true, &cfg, &e);
    if (st == HFX_ERR_NOMEM) {
        json_decref(root);
        return hfx_fail(err, st, "out of memory");
    }
    if (st) {
        snprintf(why, why_size, "%s", e.message);
        json_decref(root);
        return HFX_OK;
    }
    hfx_arena *a = hfx_arena_new();
    hfx_tokenizer *t = a ? hfx_arena_alloc(a, sizeof *t) : NULL;
    if (!t) {
        hfx_arena_free(a);
        json_decref(root);
        json_decref(cfg);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    t->arena = a;
    tk k = {.t = t, .a = a, .why = why, .why_size = why_size};
    st = HFX_OK;
    bool ok = convert(&k, ck, root, cfg, &st);
    json_decref(root);
    json_decref(cfg);
    if (k.oom) {
        hfx_arena_free(a);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    if (!ok) {
        hfx_arena_free(a);
        return HFX_OK;
    }
    *out = t;
    return HFX_OK;
}

void hfx_tokenizer_free(hfx_tokenizer *t) {
    if (t) hfx_arena_free(t->arena);
}
