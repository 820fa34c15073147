/* A sentence-transformers folder: the pipeline its modules.json declares (the transformer, then
 * Pooling, then optionally Dense modules and Normalize; or, a CrossEncoder over a causal LM, the
 * transformer then LogitScore), read so that an export can end in the sentence embedding
 * sentence-transformers' encode() returns, or in the scores its CrossEncoder's forward returns. Both layouts of the Pooling config are read: the
 * current {"pooling_mode": "mean" | [...]} and the legacy pooling_mode_*_tokens booleans. */
#ifndef HFX_HF_SENTENCE_H
#define HFX_HF_SENTENCE_H

#include <stdbool.h>

#include "hf/checkpoint.h"

/* sentence-transformers' pooling modes, by their names in its Pooling module. */
typedef enum hfx_pool_mode {
    HFX_POOL_CLS,             /* "cls": the first token the mask keeps */
    HFX_POOL_MAX,             /* "max": element-wise max over kept tokens */
    HFX_POOL_MEAN,            /* "mean": sum over kept tokens / their count */
    HFX_POOL_MEAN_SQRT_LEN,   /* "mean_sqrt_len_tokens": sum / sqrt(count) */
    HFX_POOL_WEIGHTED_MEAN,   /* "weightedmean": token i weighted by its position (1-based) */
    HFX_POOL_LAST_TOKEN,      /* "lasttoken": the last token the mask keeps */
    HFX_POOL_MODES_
} hfx_pool_mode;

/* A Dense module after the pooling: y = act(W·x + b), W [out, in] "<module>/linear.weight" and b "<module>/linear.bias"
 * from the module's own safetensors (hfx_checkpoint_add_module adds them to the checkpoint). */
typedef struct hfx_dense {
    char module[64];    /* its folder ("2_Dense") */
    long long in, out;
    bool bias, tanh;    /* activation_function: Identity or Tanh */
} hfx_dense;

#define HFX_MAX_DENSE 4

/* What an export appends to an encoder: n = 0 is none; several modes are concatenated in order. */
typedef struct hfx_pooling {
    int n;
    hfx_pool_mode modes[HFX_POOL_MODES_];
    int n_dense;        /* Dense modules after the pooling, in order (before Normalize) */
    hfx_dense dense[HFX_MAX_DENSE];
    bool normalize;     /* L2-normalize the concatenation (sentence-transformers' Normalize) */
    long long dim;      /* the Pooling config's embedding dimension; 0 when it names none */
    bool score;         /* LogitScore instead of a pooling (n = 0): a causal LM's scores [B,1] = logit[true_token] −
                           logit[false_token] at the last position (the folder pads on the left) */
    long long true_token, false_token; /* false_token −1: logit[true_token] alone */
} hfx_pooling;

/* The mode named `name` ("mean", ...); false when there is none of that name. */
bool hfx_pool_mode_from_name(const char *name, hfx_pool_mode *out);
const char *hfx_pool_mode_name(hfx_pool_mode mode);
/* "cls, max, mean, ..." */
const char *hfx_pool_mode_names(void);

/* Read the folder's modules.json and its Pooling, Dense and Normalize configs. *found is false (and *out
 * zeroed) when the checkpoint has no modules.json. A pipeline hfx cannot reproduce (the transformer in a
 * subfolder, a Dense module of another activation, an unknown module) is HFX_ERR_UNSUPPORTED naming the
 * module; a malformed file is HFX_ERR_INVALID naming the file and field. */
hfx_status hfx_sentence_pooling(const hfx_checkpoint *ck, bool *found, hfx_pooling *out, hfx_error *err);

/* The folder's own files that describe the pipeline, to carry into an export beside config.json:
 * modules.json, sentence_bert_config.json, config_sentence_transformers.json, then each module's
 * config as "<module path>/config.json", each once. Fills up to `max` relative paths (pointers into
 * `buf` or static) and returns their count: candidates, which the caller copies where they exist;
 * 0 without a readable modules.json. */
int hfx_sentence_files(const hfx_checkpoint *ck, const char **paths, int max, char *buf, size_t size);

#endif
