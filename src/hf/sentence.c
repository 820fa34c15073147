/* A sentence-transformers folder's pipeline (sentence.h). */
#include "hf/sentence.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

static const char *const mode_names[HFX_POOL_MODES_] = {
    [HFX_POOL_CLS] = "cls",
    [HFX_POOL_MAX] = "max",
    [HFX_POOL_MEAN] = "mean",
    [HFX_POOL_MEAN_SQRT_LEN] = "mean_sqrt_len_tokens",
    [HFX_POOL_WEIGHTED_MEAN] = "weightedmean",
    [HFX_POOL_LAST_TOKEN] = "lasttoken",
};

/* The legacy boolean keys, in the order sentence-transformers collects them. */
static const struct {
    const char *key;
    hfx_pool_mode mode;
} legacy_keys[] = {
    {"pooling_mode_cls_token", HFX_POOL_CLS},
    {"pooling_mode_max_tokens", HFX_POOL_MAX},
    {"pooling_mode_mean_tokens", HFX_POOL_MEAN},
    {"pooling_mode_mean_sqrt_len_tokens", HFX_POOL_MEAN_SQRT_LEN},
    {"pooling_mode_weightedmean_tokens", HFX_POOL_WEIGHTED_MEAN},
    {"pooling_mode_lasttoken", HFX_POOL_LAST_TOKEN},
};

bool hfx_pool_mode_from_name(const char *name, hfx_pool_mode *out) {
    for (int i = 0; name && i < HFX_POOL_MODES_; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (hfx_pool_mode)i;
            return true;
        }
    return false;
}

const char *hfx_pool_mode_name(hfx_pool_mode mode) {
    return mode >= 0 && mode < HFX_POOL_MODES_ ? mode_names[mode] : "?";
}

const char *hfx_pool_mode_names(void) { return "cls, max, mean, mean_sqrt_len_tokens, weightedmean, lasttoken"; }

/* A module's folder as modules.json names it: "" (the root) or one plain name ("1_Pooling");
 * never a path that leaves the checkpoint. */
static bool safe_module_path(const char *p) {
    if (!p || strlen(p) > 128 || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) return false;
    for (const char *c = p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '-' || *c == '.'))
            return false;
    return true;
}

/* modules.json: a JSON array (hfx_checkpoint_side_json takes objects only). *out NULL: no file. */
static hfx_status load_modules(const hfx_checkpoint *ck, const char *where, json_t **out, hfx_error *err) {
    char *text;
    size_t len;
    *out = NULL;
    hfx_status st = hfx_checkpoint_side_text(ck, "modules.json", &text, &len, err);
    if (st || !text) return st;
    json_error_t je;
    json_t *a = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!a && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!a)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: malformed JSON at line %d, column %d: %s", where, je.line,
                        je.column, je.text);
    if (!json_is_array(a)) {
        json_decref(a);
        return hfx_fail(err, HFX_ERR_INVALID, "%s: not a JSON array of modules", where);
    }
    *out = a;
    return HFX_OK;
}

/* The class name at the end of a module's dotted type. */
static const char *class_of(const char *type) {
    const char *dot = strrchr(type, '.');
    return dot ? dot + 1 : type;
}

/* A module's config.json ("<path>/config.json"); *out NULL when it has none. */
static hfx_status module_config(const hfx_checkpoint *ck, const char *path, json_t **out, char *name, size_t size,
                                hfx_error *err) {
    snprintf(name, size, "%s/config.json", path);
    return hfx_checkpoint_side_json(ck, name, false, out, err);
}

/* The config of the module `kind` modules.json names at `path`, which it must have; where[size] receives its file
 * for messages. */
static hfx_status required_config(const hfx_checkpoint *ck, const char *path, const char *kind, json_t **c,
                                  char *where, size_t size, hfx_error *err) {
    char name[192];
    hfx_status st = module_config(ck, path, c, name, sizeof name, err);
    if (st) return st;
    snprintf(where, size, "%s/%s", hfx_checkpoint_dir(ck), name);
    if (!*c) return hfx_fail(err, HFX_ERR_INVALID, "%s: missing (modules.json names a %s module there)", where, kind);
    return HFX_OK;
}

static hfx_status read_pooling(const hfx_checkpoint *ck, const char *path, hfx_pooling *p, hfx_error *err) {
    char where[4200];
    json_t *c;
    hfx_status st = required_config(ck, path, "Pooling", &c, where, sizeof where, err);
    if (st) return st;
    const json_t *mode = json_object_get(c, "pooling_mode");
    p->n = 0;
    if (mode && !json_is_null(mode)) { /* current layout: a name or a list of names */
        size_t n = json_is_array(mode) ? json_array_size(mode) : 1;
        if ((!json_is_array(mode) && !json_is_string(mode)) || n == 0 || n > HFX_POOL_MODES_)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: field 'pooling_mode': expected a mode name or a list of 1 to %d",
                          where, HFX_POOL_MODES_);
        for (size_t i = 0; !st && i < n; i++) {
            const json_t *v = json_is_array(mode) ? json_array_get(mode, i) : mode;
            if (!hfx_pool_mode_from_name(json_string_value(v), &p->modes[p->n++]))
                st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: field 'pooling_mode': '%s' is not a pooling mode (%s)",
                              where, json_is_string(v) ? json_string_value(v) : "(not a string)", hfx_pool_mode_names());
        }
    } else { /* legacy layout: booleans; none set means mean, as sentence-transformers reads it */
        for (size_t i = 0; !st && i < sizeof legacy_keys / sizeof legacy_keys[0]; i++) {
            const json_t *v = json_object_get(c, legacy_keys[i].key);
            if (v && !json_is_boolean(v) && !json_is_null(v))
                st = hfx_fail(err, HFX_ERR_INVALID, "%s: field '%s': expected true or false", where, legacy_keys[i].key);
            else if (json_is_true(v)) p->modes[p->n++] = legacy_keys[i].mode;
        }
        if (!st && p->n == 0) p->modes[p->n++] = HFX_POOL_MEAN;
    }
    const json_t *dim = json_object_get(c, "embedding_dimension");
    if (!dim || json_is_null(dim)) dim = json_object_get(c, "word_embedding_dimension");
    if (!st && dim && !json_is_null(dim)) {
        if (!json_is_integer(dim) || json_integer_value(dim) < 1)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: the embedding dimension must be a positive integer", where);
        else p->dim = json_integer_value(dim);
    }
    json_decref(c);
    return st;
}

/* A Dense module's config: in_features, out_features, bias (default true), activation_function Identity or Tanh. */
static hfx_status read_dense(const hfx_checkpoint *ck, const char *path, hfx_pooling *p, hfx_error *err) {
    char where[4200];
    json_t *c;
    if (p->n_dense == HFX_MAX_DENSE)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s/modules.json: more than %d Dense modules", hfx_checkpoint_dir(ck),
                        HFX_MAX_DENSE);
    if (!path[0] || strlen(path) >= sizeof p->dense[0].module)
        return hfx_fail(err, HFX_ERR_INVALID, "%s/modules.json: a Dense module needs a folder of its own (path '%s')",
                        hfx_checkpoint_dir(ck), path);
    hfx_status st = required_config(ck, path, "Dense", &c, where, sizeof where, err);
    if (st) return st;
    hfx_dense *d = &p->dense[p->n_dense];
    const json_t *in = json_object_get(c, "in_features"), *out = json_object_get(c, "out_features");
    const json_t *bias = json_object_get(c, "bias"), *act = json_object_get(c, "activation_function");
    const char *a = act && !json_is_null(act) ? json_string_value(act) : "torch.nn.modules.linear.Identity";
    if (!json_is_integer(in) || !json_is_integer(out) || json_integer_value(in) < 1 || json_integer_value(out) < 1 ||
        json_integer_value(in) > 1 << 20 || json_integer_value(out) > 1 << 20)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: in_features and out_features must be positive integers", where);
    else if (bias && !json_is_boolean(bias))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: field 'bias': expected true or false", where);
    else if (!a || (strcmp(class_of(a), "Identity") != 0 && strcmp(class_of(a), "Tanh") != 0))
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: activation_function '%s' is not supported (Identity, Tanh)", where,
                      a ? a : "(not a string)");
    if (!st) {
        snprintf(d->module, sizeof d->module, "%s", path);
        d->in = json_integer_value(in), d->out = json_integer_value(out);
        d->bias = !bias || json_is_true(bias);
        d->tanh = strcmp(class_of(a), "Tanh") == 0;
        p->n_dense++;
    }
    json_decref(c);
    return st;
}

/* Normalize acts on the sentence embedding unless its config says otherwise (token-level
 * normalization, for multi-vector models, is not what an embedding export produces). */
static hfx_status read_normalize(const hfx_checkpoint *ck, const char *path, hfx_error *err) {
    char name[192];
    json_t *c = NULL;
    hfx_status st = path[0] ? module_config(ck, path, &c, name, sizeof name, err) : HFX_OK;
    if (st || !c) return st;
    const char *in = json_string_value(json_object_get(c, "module_input_name"));
    const char *out = json_string_value(json_object_get(c, "module_output_name"));
    if ((in && strcmp(in, "sentence_embedding") != 0) || (out && strcmp(out, "sentence_embedding") != 0))
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED,
                      "%s/%s: a Normalize module over '%s' is not supported (only the sentence embedding's)",
                      hfx_checkpoint_dir(ck), name, in && strcmp(in, "sentence_embedding") != 0 ? in : out);
    json_decref(c);
    return st;
}

/* LogitScore's config: true_token_id, false_token_id (null: none), over the causal logits. */
static hfx_status read_logit_score(const hfx_checkpoint *ck, const char *path, hfx_pooling *p, hfx_error *err) {
    char where[4200];
    json_t *c;
    hfx_status st = required_config(ck, path, "LogitScore", &c, where, sizeof where, err);
    if (st) return st;
    const json_t *t = json_object_get(c, "true_token_id"), *f = json_object_get(c, "false_token_id");
    const char *in = json_string_value(json_object_get(c, "module_input_name"));
    if (!json_is_integer(t) || json_integer_value(t) < 0 || json_integer_value(t) > INT32_MAX)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: field 'true_token_id': expected a token id", where);
    else if (f && !json_is_null(f) && (!json_is_integer(f) || json_integer_value(f) < 0 ||
                                       json_integer_value(f) > INT32_MAX))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: field 'false_token_id': expected a token id or null", where);
    else if (in && strcmp(in, "causal_logits") != 0)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: a LogitScore over '%s' is not supported (only the causal logits)",
                      where, in);
    if (!st) {
        p->score = true;
        p->true_token = json_integer_value(t);
        p->false_token = json_is_integer(f) ? json_integer_value(f) : -1;
    }
    json_decref(c);
    return st;
}

hfx_status hfx_sentence_pooling(const hfx_checkpoint *ck, bool *found, hfx_pooling *out, hfx_error *err) {
    memset(out, 0, sizeof *out);
    *found = false;
    char where[4200];
    snprintf(where, sizeof where, "%s/modules.json", hfx_checkpoint_dir(ck));
    json_t *a;
    hfx_status st = load_modules(ck, where, &a, err);
    if (st || !a) return st;
    *found = true;
    enum { WANT_TRANSFORMER, WANT_POOLING, WANT_NORMALIZE, DONE } stage = WANT_TRANSFORMER;
    size_t i;
    json_t *m;
    json_array_foreach(a, i, m) {
        const char *type = json_string_value(json_object_get(m, "type"));
        const char *path = json_string_value(json_object_get(m, "path"));
        if (!json_is_object(m) || !type || !path) {
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: module %zu: expected an object with string 'type' and 'path'", where, i);
            break;
        }
        if (!(path[0] == 0 || safe_module_path(path))) {
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: module %zu: path '%s' is not a folder name inside the checkpoint",
                          where, i, path);
            break;
        }
        const char *cls = class_of(type);
        if (stage == WANT_TRANSFORMER && strcmp(cls, "Transformer") == 0) {
            if (path[0]) { /* the model hfx reads is the root's config.json and safetensors */
                st = hfx_fail(err, HFX_ERR_UNSUPPORTED,
                              "%s: the transformer module lives in '%s/', not beside modules.json; export that folder "
                              "(or set pooling to \"none\")", where, path);
                break;
            }
            stage = WANT_POOLING;
        } else if (stage == WANT_POOLING && strcmp(cls, "Pooling") == 0) {
            if ((st = read_pooling(ck, path, out, err))) break;
            stage = WANT_NORMALIZE;
        } else if (stage == WANT_POOLING && strcmp(cls, "LogitScore") == 0) {
            if ((st = read_logit_score(ck, path, out, err))) break;
            stage = DONE;
        } else if (stage == WANT_NORMALIZE && strcmp(cls, "Dense") == 0) {
            if ((st = read_dense(ck, path, out, err))) break;
        } else if (stage == WANT_NORMALIZE && strcmp(cls, "Normalize") == 0) {
            if ((st = read_normalize(ck, path, err))) break;
            out->normalize = true;
            stage = DONE;
        } else {
            st = hfx_fail(err, HFX_ERR_UNSUPPORTED,
                          "%s: module %zu (%s) is not supported: hfx reproduces Transformer, Pooling, then optionally "
                          "Dense modules and Normalize, or Transformer and LogitScore (set pooling to \"none\" to export "
                          "the transformer alone)", where, i, type);
            break;
        }
    }
    if (!st && stage == WANT_TRANSFORMER)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: no Transformer module", where);
    if (!st && stage == WANT_POOLING)
        st = hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: no Pooling module after the transformer: nothing to pool with", where);
    json_decref(a);
    if (st) memset(out, 0, sizeof *out);
    return st;
}

int hfx_sentence_files(const hfx_checkpoint *ck, const char **paths, int max, char *buf, size_t size) {
    static const char *const top[] = {"modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"};
    hfx_error ignored = {0};
    json_t *a = NULL;
    if (load_modules(ck, "modules.json", &a, &ignored) || !a) return 0;
    int n = 0;
    size_t used = 0;
    for (size_t i = 0; i < sizeof top / sizeof top[0] && n < max; i++) paths[n++] = top[i];
    size_t k;
    json_t *m;
    json_array_foreach(a, k, m) {
        const char *path = json_string_value(json_object_get(m, "path"));
        if (!path || !path[0] || !safe_module_path(path) || n == max) continue;
        int len = snprintf(buf + used, size - used, "%s/config.json", path);
        if (len < 0 || (size_t)len >= size - used) break;
        bool again = false;
        for (int j = 0; j < n; j++) again |= strcmp(paths[j], buf + used) == 0;
        if (again) continue;
        paths[n++] = buf + used;
        used += (size_t)len + 1;
    }
    json_decref(a);
    return n;
}
