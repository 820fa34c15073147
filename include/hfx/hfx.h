/*
 * hfx — export Hugging Face Transformers checkpoints to deployable graphs.
 *
 * A checkpoint directory (config.json, generation_config.json, *.safetensors) is opened as an
 * hfx_model, an export configuration is parsed from the same JSON the Python system takes
 * (`export_format`, `dynamic`, `dynamic_shapes`, `opset_version`, `external_data`, ...), an
 * exporter is chosen from it, and hfx_export writes the artifacts into a directory.
 *
 * Conventions of this header:
 *  - Every handle is opaque; every *_free / *_close accepts NULL.
 *  - Functions that can fail return an hfx_status and, when `err` is not NULL, fill it with a
 *    one-line message that names the file, tensor, field or byte offset at fault.
 *  - The library keeps no global mutable state and never exits or aborts on bad input: separate
 *    handles may be used from separate threads at once.
 */
#ifndef HFX_HFX_H
#define HFX_HFX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HFX_VERSION_STRING "0.1.0"

/* Outcome of a call. HFX_ERR_INVALID (bad input: a file, a config value) is 2 so that a CLI can
 * hand it straight to exit(). */
typedef enum hfx_status {
    HFX_OK = 0,
    HFX_ERR_INTERNAL = 1,    /* a bug in hfx: please report the message */
    HFX_ERR_INVALID = 2,     /* bad input: malformed file, bad config value, wrong shape */
    HFX_ERR_UNSUPPORTED = 3, /* well-formed input that hfx does not handle (yet) */
    HFX_ERR_IO = 4,          /* the operating system refused a read or a write */
    HFX_ERR_NOMEM = 5,       /* an allocation failed */
    HFX_ERR_CANCELLED = 6    /* hfx_exporter_cancel was called: nothing was written */
} hfx_status;

/* Filled by a failing call when the caller passes one. */
typedef struct hfx_error {
    hfx_status status;
    char message[2048];
} hfx_error;

/* Element types, shared by checkpoints and exported graphs. */
typedef enum hfx_dtype {
    HFX_DTYPE_UNDEFINED = 0,
    HFX_DTYPE_F32,
    HFX_DTYPE_F16,
    HFX_DTYPE_BF16,
    HFX_DTYPE_F64,
    HFX_DTYPE_I64,
    HFX_DTYPE_I32,
    HFX_DTYPE_I16,
    HFX_DTYPE_I8,
    HFX_DTYPE_U8,
    HFX_DTYPE_BOOL,
    HFX_DTYPE_I4,   /* 4-bit integers, two to a byte, the first in the low nibble (quantized weights) */
    HFX_DTYPE_U4,
    HFX_DTYPE_F8E4M3, /* 8-bit floats (float8_e4m3fn, float8_e5m2, float8_e8m0fnu): a pre-quantized checkpoint's */
    HFX_DTYPE_F8E5M2, /* weights and scales, read together as float32 (never an exported graph's type) */
    HFX_DTYPE_F8E8M0,
    HFX_DTYPE_COUNT_
} hfx_dtype;

/* Short lowercase name ("f32", "bf16", ...); "undefined" for anything out of range. */
const char *hfx_dtype_name(hfx_dtype dtype);

/* Size of one element in bytes; 0 for HFX_DTYPE_UNDEFINED and for the sub-byte types (int4),
 * whose tensors are sized from their bit width. */
size_t hfx_dtype_size(hfx_dtype dtype);

/* Return the library version, HFX_VERSION_STRING. */
const char *hfx_version(void);

/* ---- Models ------------------------------------------------------------------------------ */

typedef struct hfx_model hfx_model;

/* Open the checkpoint directory `dir`: parse and validate config.json, generation_config.json
 * (optional) and every safetensors header (single file or shards + index), memory-map the data
 * and check that the architecture named in config.json is supported and that every tensor it
 * needs is present with the expected shape. Tensor bytes are not read here. On success *out
 * owns the mappings until hfx_model_close. */
hfx_status hfx_model_open(const char *dir, hfx_model **out, hfx_error *err);

/* The same for a model named by a Hugging Face Hub id ("Qwen/Qwen3-0.6B") when `model` is not a
 * directory: the snapshot of `revision` (NULL: "main"; a branch, tag or commit hash) in the local
 * Hub cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). Nothing is downloaded: a model
 * that is not cached is HFX_ERR_INVALID, naming every path tried. hfx_model_open(dir) is
 * hfx_model_open_at(dir, NULL). */
hfx_status hfx_model_open_at(const char *model, const char *revision, hfx_model **out, hfx_error *err);

/* hfx_model_open_at for a task, as optimum names them ("text-generation", "feature-extraction", ...; NULL: none):
 * where config.json's `architectures` is missing or null (what transformers writes for a model loaded from a GGUF
 * file), the class transformers' Auto class for the task builds from its model_type is exported; where it names a
 * class, the task must be that class's (else HFX_ERR_INVALID). Without a task, a config naming no class exports the
 * only class hfx has for its model_type, and lists the tasks to choose from when there are several. */
hfx_status hfx_model_open_task(const char *model, const char *revision, const char *task, hfx_model **out,
                               hfx_error *err);

/* One tensor of a state dict held in memory (hfx_model_open_memory): `shape` elements of `dtype`,
 * row-major and contiguous at `data`. Borrowed. */
typedef struct hfx_tensor {
    const char *name;      /* the checkpoint name: "model.layers.0.self_attn.q_proj.weight" */
    hfx_dtype dtype;
    int rank;              /* ≤ 8 */
    const int64_t *shape;
    const void *data;
} hfx_tensor;

/* A model from memory: config.json's text, generation_config.json's text (NULL: none) and its
 * tensors — a loaded model's state dict, with no checkpoint written first. The tensors' data is
 * borrowed, not copied: it must stay alive and unchanged until hfx_model_close. Checked as
 * hfx_model_open checks a directory (names unique, every tensor the architecture needs, shapes);
 * an export writes config.json and generation_config.json from the texts. */
hfx_status hfx_model_open_memory(const char *config_json, const char *generation_config_json,
                                 const hfx_tensor *tensors, size_t n_tensors, hfx_model **out, hfx_error *err);

/* Release a model and its mappings. */
void hfx_model_close(hfx_model *model);

/* The architecture string of config.json ("LlamaForCausalLM"); owned by the model. */
const char *hfx_model_architecture(const hfx_model *model);

/* Print a human summary (architecture, parameter count, per-tensor dtype/shape/bytes) to `out`,
 * which is a FILE* passed as void* so that this header needs no <stdio.h>. */
void hfx_model_describe(const hfx_model *model, void *out);

/* ---- Export configuration ------------------------------------------------------------------ */

typedef struct hfx_export_config hfx_export_config;

/* Parse an export config written as JSON with the Python system's field names, e.g.
 * {"export_format": "onnx", "dynamic": true, "opset_version": 18}. `export_format` is required;
 * unknown keys and out-of-range values are errors (HFX_ERR_INVALID) naming the key. */
hfx_status hfx_export_config_from_json(const char *json_text, hfx_export_config **out,
                                       hfx_error *err);

/* Set one field from its JSON text (`key` "dynamic", `json_value` "true"), with the same checks
 * as hfx_export_config_from_json. Used by the CLI for flags that override a config file. */
hfx_status hfx_export_config_set(hfx_export_config *cfg, const char *key, const char *json_value,
                                 hfx_error *err);

/* The config serialized as JSON (what export_config.json holds); a malloc'd string the caller
 * frees, or NULL when out of memory. */
char *hfx_export_config_to_json(const hfx_export_config *cfg);

void hfx_export_config_free(hfx_export_config *cfg);

/* ---- Export options ------------------------------------------------------------------------ */

/* One export-config key as the library checks it. The common keys' table and each format's own
 * keys are the one list behind hfx_export_config_from_json, the CLI's flags and `hfx export
 * --help`, and the Python package's config classes. Strings are static. */
typedef struct hfx_option_info {
    const char *key;            /* "max_cache_len" */
    /* "bool", "int" (in [min, max]), "choice" (one of choices), "true" (only true), "refused"
     * (never accepted), "null" (only null), "shapes" (dynamic_shapes' {input: {axis: {"name",
     * "min", "max"}}}), "pooling" ("auto", "none", a pooling mode or a list of modes) */
    const char *type;
    const char *const *choices; /* "choice": the allowed strings, NULL-terminated; NULL otherwise */
    int64_t min, max;           /* "int": the range */
    int nullable;               /* null is accepted: the key is then as if unset */
    const char *format;         /* the format whose own key it is; NULL: every format takes it */
    char default_json[32];      /* what an unset key means, as JSON; "null": decided by the export */
    /* a field of the Python system's config class, with its default there as JSON; NULL: a key of
     * hfx's own. A key every format takes is a field of every format's class, or, when
     * seed_format is set, of that format's only. */
    const char *seed_default;
    const char *seed_format;
    const char *flag;           /* hfx export's flag that sets it, with its value's name ("--cache C"); NULL: none */
    const char *flag_off;       /* a bool's flag that sets it false ("--asym"); NULL: none */
    const char *flag_words;     /* the words the flag takes and the JSON each sets ("last=1 all=0"); NULL: the value */
    int scope;                  /* where its flags are given: 0 any export, 1 only for generation, 2 only a forward one */
    const char *group;          /* its help section ("generation (docs/GENERATION.md)"); NULL: the general options */
    const char *help;           /* one line; NULL for keys without a flag */
} hfx_option_info;

/* Fill *out with the i-th export option: the keys every format takes first, then each format's
 * own (hfx_format_name order). Return 1, or 0 past the end (out untouched). */
int hfx_option_info_at(int i, hfx_option_info *out);

/* ---- Sample inputs --------------------------------------------------------------------------- */

/* Named example shapes. They fix the shapes of a static export (`dynamic` false) and their
 * presence selects optional inputs. No data is held: only names, dtypes and shapes. */
typedef struct hfx_sample_inputs hfx_sample_inputs;

hfx_sample_inputs *hfx_sample_inputs_new(void);

/* Add (or replace) input `name` with the given dtype and shape (rank ≤ 8, dims ≥ 0). */
hfx_status hfx_sample_inputs_add(hfx_sample_inputs *inputs, const char *name, hfx_dtype dtype,
                                 int rank, const int64_t *shape, hfx_error *err);

void hfx_sample_inputs_free(hfx_sample_inputs *inputs);

/* ---- Formats ------------------------------------------------------------------------------- */

/* The i-th export format this build writes ("onnx", "openvino"), in registry order; NULL past
 * the end. Static strings. */
const char *hfx_format_name(int i);

/* A one-line description of the i-th format; NULL past the end. */
const char *hfx_format_summary(int i);

/* The format whose graph files are named like `path` ("x/decode.onnx" → "onnx"), or NULL. */
const char *hfx_format_of_file(const char *path);

/* ---- Exporters ------------------------------------------------------------------------------ */

typedef struct hfx_exporter hfx_exporter;

/* Called while weights are written: `done` of `total` bytes. May be called from the exporting
 * thread only; must not call back into hfx. */
typedef void (*hfx_progress_fn)(void *user, uint64_t done, uint64_t total);

/* Create the exporter for cfg's export_format (the seed's AutoHfExporter.from_config). Formats
 * that are not built yet are HFX_ERR_UNSUPPORTED, with the list of those that are. */
hfx_status hfx_exporter_from_config(const hfx_export_config *cfg, hfx_exporter **out,
                                    hfx_error *err);

/* Ask a running export to stop: it removes what it staged and returns HFX_ERR_CANCELLED, leaving
 * the output directory as it was. Safe to call from another thread or from a signal handler
 * (it only sets a flag, which the export polls between chunks of its writes). */
void hfx_exporter_cancel(hfx_exporter *exporter);

/* The warnings of the exporter's last export, one per line ("" when none): what it wrote with a
 * known difference, or left out (an OpenVINO export whose tokenizer.json hfx cannot convert gets
 * no openvino_tokenizer.xml, and says why here and in export.json). Valid until the next export
 * or hfx_exporter_free. */
const char *hfx_exporter_warnings(const hfx_exporter *exporter);

/* Report write progress through `fn` (NULL: none). */
void hfx_exporter_set_progress(hfx_exporter *exporter, hfx_progress_fn fn, void *user);

void hfx_exporter_free(hfx_exporter *exporter);

/* Export the model's plain forward pass into `out_dir` (created when missing): the graph
 * (e.g. model.onnx + model.onnx.data), export.json, export_config.json, config.json,
 * generation_config.json and the tokenizer files found beside the checkpoint. `cfg` may be NULL
 * to use the exporter's own; `sample_inputs` may be NULL for the defaults (batch 2, sequence 16).
 * The export is one transaction (docs/ARCHITECTURE.md): a second export into the same out_dir
 * waits for the first; files are staged privately and swapped in whole, so a reader sees the
 * previous export or this one, never a mix; the previous export's files this one does not write
 * are removed, other files in out_dir are kept; on failure out_dir is as it was. The same inputs
 * give byte-identical files. */
hfx_status hfx_export(hfx_exporter *exporter, hfx_model *model,
                      const hfx_sample_inputs *sample_inputs, const hfx_export_config *cfg,
                      const char *out_dir, hfx_error *err);

/* Export the components a decode loop needs (docs/GENERATION.md): `prefill` and `decode`, or with
 * `multi_token_decode` a single `decode` whose query length is symbolic. The cache is dynamic
 * (past_key_values in, present out) or static (input./output. pairs of fixed size, written in
 * place), chosen by cfg's `cache_implementation`/`max_cache_len`, else by the generation config
 * (`generation_config_json`, or the checkpoint's generation_config.json when NULL). `cfg` may also
 * be a map {component name: config}; a component it lacks is an error listing the missing ones.
 * Shared weights are stored once; files are committed as in hfx_export. */
hfx_status hfx_export_for_generation(hfx_exporter *exporter, hfx_model *model,
                                     const hfx_sample_inputs *sample_inputs,
                                     const hfx_export_config *cfg,
                                     const char *generation_config_json, int multi_token_decode,
                                     const char *out_dir, hfx_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HFX_HFX_H */
