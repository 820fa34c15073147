/* The export configuration: the seed's config dataclasses (OnnxConfig, ...) as one validated
 * JSON object. Internal accessors for the exporters. */
#ifndef HFX_EXPORT_CONFIG_H
#define HFX_EXPORT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "fmt/format.h"
#include "hf/sentence.h"
#include "hfx/hfx.h"

struct hfx_export_config {
    json_t *obj;         /* owned (borrowed in a component view); every key validated */
    bool per_component;  /* obj is {component name: config} */
};

const char *hfx_cfg_format(const hfx_export_config *c);
bool hfx_cfg_dynamic(const hfx_export_config *c);
const json_t *hfx_cfg_dynamic_shapes(const hfx_export_config *c); /* NULL when unset */
hfx_dtype hfx_cfg_dtype(const hfx_export_config *c);               /* default F32 */

hfx_export_config *hfx_export_config_clone(const hfx_export_config *c);

/* The config of component `name`: `c` itself for a single config, else a borrowed view filled
 * into *tmp; NULL when a per-component config lacks that component. */
const hfx_export_config *hfx_export_config_component(const hfx_export_config *c, const char *name,
                                                     hfx_export_config *tmp);

const char *hfx_cfg_cache(const hfx_export_config *c);            /* NULL when unset */
int64_t hfx_cfg_max_cache_len(const hfx_export_config *c);        /* 0 when unset */
int hfx_cfg_logits_to_keep(const hfx_export_config *c, int dflt);
bool hfx_cfg_is_set(const hfx_export_config *c, const char *key);    /* the key is set */
/* The value of each of f's options in c (its default where c does not set it), table order. */
void hfx_cfg_format_options(const hfx_export_config *c, const hfx_format *f, int64_t *out);
/* Mixture of experts as gathered experts (true) or all experts (false) for a graph that takes one
 * token per call (`single_token`) or not. */
bool hfx_cfg_moe_gather(const hfx_export_config *c, bool single_token);
/* "pooling" (a sentence embedding after an encoder): 0 auto (unset, null, "auto": the checkpoint's
 * modules.json decides), -1 "none", else the count of modes, filled into p->modes. */
int hfx_cfg_pooling(const hfx_export_config *c, hfx_pooling *p);
int hfx_cfg_pooling_of(const json_t *v, hfx_pooling *p); /* the same for a value; -2: not one */
/* "normalize": 1 or 0 as set, -1 unset. */
int hfx_cfg_normalize(const hfx_export_config *c);
/* "io": "seed" (transformers.exporters' names and cache contract); default optimum's. */
bool hfx_cfg_io_seed(const hfx_export_config *c);
/* Whether the config asks for quantized weights ("quantize"): 1, and how in plan (the format's
 * defaults where "group_size", "symmetric", "quantize_embeddings" or "quantize_lm_head" are
 * unset; "int8-dynamic": onnxruntime's dynamic quantization, per tensor unless "group_size" is
 * 0); 0 when not; -1 when one of those or "reduce_range" is set without "quantize"; -2 when
 * "reduce_range" is set without "int8-dynamic". */
int hfx_cfg_quant(const hfx_export_config *c, const hfx_format *f, hfx_quant_plan *plan);

#endif
