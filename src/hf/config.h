/* Typed reads of config.json fields, with messages that name the file and the field:
 * "config.json: field 'hidden_size': expected an integer, got a string". A field that is absent
 * or JSON null counts as missing (transformers writes nulls for unset options). */
#ifndef HFX_HF_CONFIG_H
#define HFX_HF_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "hfx/hfx.h"

typedef struct hfx_cfg {
    const json_t *obj;   /* borrowed: a JSON object */
    const char *where;   /* "path/config.json" or "path/config.json: rope_parameters" */
} hfx_cfg;

/* A nested config object (a composite model's "text_config") as an hfx_cfg whose messages name it
 * ("path/config.json: text_config"; that text from `arena`); not an object is HFX_ERR_INVALID. */
hfx_status hfx_cfg_object(hfx_cfg c, const char *key, hfx_arena *arena, hfx_cfg *out, hfx_error *err);

/* True when `key` is present and not null. */
bool hfx_cfg_has(hfx_cfg c, const char *key);

/* Required fields: missing is HFX_ERR_INVALID. */
hfx_status hfx_cfg_int(hfx_cfg c, const char *key, int64_t *out, hfx_error *err);
hfx_status hfx_cfg_num(hfx_cfg c, const char *key, double *out, hfx_error *err);

/* Optional fields: *out = dflt when missing. */
hfx_status hfx_cfg_int_or(hfx_cfg c, const char *key, int64_t dflt, int64_t *out, hfx_error *err);
hfx_status hfx_cfg_num_or(hfx_cfg c, const char *key, double dflt, double *out, hfx_error *err);
hfx_status hfx_cfg_bool_or(hfx_cfg c, const char *key, bool dflt, bool *out, hfx_error *err);
hfx_status hfx_cfg_str_or(hfx_cfg c, const char *key, const char *dflt, const char **out,
                          hfx_error *err);

/* An integer field within [lo, hi]: required, or dflt when missing. */
hfx_status hfx_cfg_int_in(hfx_cfg c, const char *key, int64_t lo, int64_t hi, int64_t *out, hfx_error *err);
hfx_status hfx_cfg_int_in_or(hfx_cfg c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out,
                             hfx_error *err);

/* A classification head's width as transformers derives config.num_labels: the size of a
 * non-empty `id2label`, else `num_labels`, else 2; within [1, 2^20]. */
hfx_status hfx_cfg_num_labels(hfx_cfg c, int64_t *out, hfx_error *err);

/* Require lo ≤ v ≤ hi for a field already read. */
hfx_status hfx_cfg_check_range(hfx_cfg c, const char *key, int64_t v, int64_t lo, int64_t hi,
                               hfx_error *err);

#endif
