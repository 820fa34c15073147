/* The export configuration: the seed's config dataclasses (OnnxConfig, ...) as one validated
 * JSON object, parsed once into typed settings (one per component of a per-component map) that
 * the exporter hands on to the builders (hfx_build_opts) and the writers (hfx_format_graph). */
#ifndef HFX_EXPORT_CONFIG_H
#define HFX_EXPORT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "fmt/format.h"
#include "hf/sentence.h"
#include "hfx/hfx.h"

/* The common keys, by their row in export/options.def. */
typedef enum hfx_key {
#define X(id, ...) HFX_KEY_##id,
#include "export/options.def"
#undef X
    HFX_KEY_COUNT
} hfx_key;

/* The row of common key `k` (HFX_KEY_*), NULL past the end. */
const hfx_format_option *hfx_key_option(int k);

/* A choice's value: its 1-based index in the row's choices, 0 when unset or null. */
enum { HFX_CACHE_UNSET, HFX_CACHE_IS_DYNAMIC, HFX_CACHE_IS_STATIC };
enum { HFX_MOE_AUTO, HFX_MOE_ALL = 2, HFX_MOE_GATHERED = 3 };
enum { HFX_QUANTIZE_NONE, HFX_QUANTIZE_INT4, HFX_QUANTIZE_INT8, HFX_QUANTIZE_INT8_DYNAMIC, HFX_QUANTIZE_GGUF,
       HFX_QUANTIZE_STORED };

/* dynamic_shapes, read: each input it names, with each of its axes symbolic (a dim's name and
 * bounds) or static (null in the config). */
enum { HFX_SHAPES_MAX_INPUTS = 16, HFX_SHAPES_MAX_AXES = 8 };
typedef struct hfx_axis_spec {
    const char *axis;  /* borrowed: the config's key ("1"), an axis number */
    const char *name;  /* borrowed: the dim's name; NULL for a static axis or a dynamic one without a name */
    int64_t min, max;  /* 1 and INT32_MAX where unset */
    bool dynamic;      /* an object ({"name", "min", "max"}, each optional: without a name, hfx's own for the axis,
                          as torch.export's Dim.AUTO / Dim.DYNAMIC); null: static */
} hfx_axis_spec;
typedef struct hfx_input_spec {
    const char *input; /* borrowed: the config's key ("input_ids") */
    int n_axes;
    hfx_axis_spec axes[HFX_SHAPES_MAX_AXES];
} hfx_input_spec;

/* One config (a component's), every key read: what an unset key means is filled in. */
typedef struct hfx_settings {
    const json_t *json;           /* the config as given (borrowed): what export metadata records */
    const hfx_format *format;     /* export_format: the registry's entry, one that writes */
    bool dynamic;
    bool dynamic_shapes;          /* dynamic_shapes is set (an object, maybe empty): its inputs below */
    int n_shapes;
    hfx_input_spec shapes[HFX_SHAPES_MAX_INPUTS];
    hfx_dtype dtype;              /* default F32 */
    int cache;                    /* cache_implementation: HFX_CACHE_* */
    int64_t max_cache_len;        /* 0 when unset */
    int logits_to_keep;           /* -1 when unset */
    bool io_seed;                 /* io "seed": transformers.exporters' names and cache contract */
    int moe;                      /* moe_experts: HFX_MOE_* */
    /* quantization: quantize (HFX_QUANTIZE_*); the bits quantize_embeddings and quantize_lm_head
     * ask for (4, 8, 0 for "none"); group_size, symmetric, reduce_range; -1 for each when unset */
    int quantize, tables_bits, head_bits;
    int64_t group_size;
    int symmetric, reduce_range;
    /* pooling: 0 auto (unset, null, "auto": the checkpoint's modules.json decides), -1 "none",
     * else the count of modes in `pool`; normalize 1 or 0 as set, -1 unset */
    int pooling;
    hfx_pooling pool;
    int normalize;
    int64_t opt[HFX_FORMAT_MAX_OPTIONS]; /* each of the format's options (its default where unset), table order */
} hfx_settings;

/* The settings of component `name` of a per-component config (NULL: the first), or of a single
 * config whatever the name; NULL when a per-component config lacks that component. */
const hfx_settings *hfx_export_config_settings(const hfx_export_config *c, const char *name);

hfx_export_config *hfx_export_config_clone(const hfx_export_config *c);

/* A "pooling" value: 0 for "auto", -1 for "none", the count of modes filled into p->modes, or -2
 * when it is none of these. */
int hfx_cfg_pooling_of(const json_t *v, hfx_pooling *p);

/* Mixture of experts as gathered experts (true) or all experts (false) for a graph that takes one
 * token per call (`single_token`) or not. */
bool hfx_settings_moe_gather(const hfx_settings *s, bool single_token);

/* Whether the settings ask for quantized weights: 1, and how in plan (the format's defaults where
 * group_size, symmetric, quantize_embeddings or quantize_lm_head are unset; "int8-dynamic":
 * onnxruntime's dynamic quantization, per tensor unless group_size is 0); 0 when not; -1 when
 * one of those or reduce_range is set without quantize; -2 when reduce_range is set without
 * "int8-dynamic". */
int hfx_settings_quant(const hfx_settings *s, const hfx_format *f, hfx_quant_plan *plan);

#endif
