/* An output format as data: its name, the export-config keys it reads (with defaults and
 * validation), how it names its files, what it can do, and its one entry point that lowers and
 * writes a set of component graphs. The registry (registry.c) is the one list of formats; the
 * exporter, the config parser and the CLI consult it instead of comparing format names.
 * Adding a format: a folder src/fmt/<name>/ that defines an hfx_format, and one registry line. */
#ifndef HFX_FMT_FORMAT_H
#define HFX_FMT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/outdir.h"
#include "ir/cache.h"
#include "ir/graph.h"
#include "ir/tokenizer.h"

enum { HFX_FORMAT_MAX_OPTIONS = 12 };

typedef enum hfx_option_kind {
    HFX_OPTION_BOOL,  /* true or false; dflt 0 or 1 */
    HFX_OPTION_INT,   /* an integer in [min, max], or null for dflt */
    HFX_OPTION_TRUE,  /* only true is accepted: `why` completes "'<key>' <why>" (HFX_ERR_UNSUPPORTED) */
    HFX_OPTION_REFUSED, /* never accepted: `why` completes "'<key>' <why>" (HFX_ERR_INVALID) */
    HFX_OPTION_CHOICE,  /* null or one of `choices`; its value is the 1-based index (0: null) */
    HFX_OPTION_NULL,    /* only null is accepted: `why` completes "'<key>' <why>" (HFX_ERR_UNSUPPORTED) */
    HFX_OPTION_SHAPES,  /* dynamic_shapes: {input: {axis: {"name", "min", "max"} or null}} */
    HFX_OPTION_POOLING  /* "auto", "none", a pooling mode or a list of them (hf/sentence.h) */
} hfx_option_kind;

/* The help section of the quantization keys, common and a format's. */
#define HFX_GROUP_QUANT                                                                                     \
    "quantization (docs/QUANTIZATION.md; ONNX: MatMulNBits; OpenVINO: NNCF's compressed weights;\n"        \
    "ExecuTorch: XNNPACK's quantized linears, activations int8 per token at run time)"

/* Where a command-line flag of an option may be given. */
typedef enum hfx_option_scope {
    HFX_SCOPE_ANY,
    HFX_SCOPE_GENERATION, /* only with --for-generation */
    HFX_SCOPE_FORWARD     /* only without it */
} hfx_option_scope;

/* One export-config key: its value's kind and checks, what it means unset, and how the Python
 * system's config classes, the command line and its help show it. The common keys are one table
 * (export/options.def); a format's own keys are its descriptor's. */
typedef struct hfx_format_option {
    const char *key;   /* the Python system's name: "opset_version" */
    hfx_option_kind kind;
    int64_t dflt, min, max;
    bool shared;       /* every component must agree: they share what it shapes (one weights file) */
    const char *why;
    const char *const *choices; /* HFX_OPTION_CHOICE: NULL-terminated */
    const char *requires;       /* a boolean key (default true) that must not be false when this is set */
    bool not_null;              /* null is refused (a format's keys all take null: their default) */
    /* a field of the Python system's config class: its default there as JSON text; NULL: hfx's own
     * key. A common key's field belongs to every format's class, or to `seed_format`'s only. */
    const char *seed_default;
    const char *seed_format;
    /* hfx export: the flag that sets it, with its value's name ("--cache C"; a bool's flag sets
     * true), a bool's flag that sets false ("--asym"), the words the flag takes and the JSON each
     * sets ("last=1 all=0"; NULL: the value as it is), where it may be given, its help section and
     * one help line. */
    const char *flag, *flag_off, *flag_words;
    hfx_option_scope scope;
    const char *group;
    const char *help;
} hfx_format_option;

/* A generation export's special tokens (generation_config.json, else config.json), for formats
 * whose runtime runs a generation loop of its own from what the artifact says (ExecuTorch's LLM
 * runner reads them from the program's constant methods). */
typedef struct hfx_special_tokens {
    int64_t bos;     /* -1: none */
    int64_t eos[8];
    int n_eos;
} hfx_special_tokens;

/* One graph to write, with its component's resolved option values. */
typedef struct hfx_format_graph {
    const hfx_graph *g;
    const char *file;                    /* its file name, from hfx_format_graph_file */
    int64_t opt[HFX_FORMAT_MAX_OPTIONS]; /* the value of each of the format's options, table order */
    bool own_weights;                    /* its weights in "<file>.data", not shared with the others */
    const hfx_seed_call *seed_call;      /* a generation graph in the Python system's profile: how its
                                            torch callers call it; NULL otherwise */
    const char *output_class;            /* a plain forward of flat inputs and outputs: the model's output class
                                            ("CausalLMOutputWithPast"), which a torch program returns, called with
                                            keywords as the model; NULL: positional, its tensors returned */
    const hfx_special_tokens *tokens;    /* a generation graph's special tokens; NULL otherwise */
    int64_t max_cache_len;               /* a static-cache generation graph's length (--max-cache-len): what
                                            bounds its calls' positions; 0 otherwise */
} hfx_format_graph;

/* What a format does with quantized weights (hfx_attrs.quant on linears and Gathers). */
typedef struct hfx_format_quant {
    bool supported;
    hfx_quant_rule rule;       /* whose arithmetic its quantized linears follow */
    hfx_quant_rule table_rule; /* and its quantized embedding tables */
    int64_t block4, block8;    /* the default block (group) size for 4 and 8 bits; 0: a whole row */
    bool symmetric;            /* the default */
    /* NNCF's default precision: int8 (the 8-bit defaults) for the embedding tables, and for the
     * head unless it is tied to them (then it reads the table's); otherwise tables stay float
     * and the head is quantized like the other linears */
    bool int8_tables_and_head;
    bool dynamic; /* writes onnxruntime's dynamic int8 form (HFX_QUANT_RULE_ORT_DYNAMIC) */
} hfx_format_quant;

typedef struct hfx_format {
    const char *name;        /* export_format: "onnx" */
    const char *summary;     /* one line for help texts */
    const char *graph_ext;   /* a component `c` is written to c + graph_ext: ".onnx" */
    const hfx_format_option *options;
    int n_options;
    /* The option that keeps generation state (caches) inside the model instead of in inputs and
     * outputs (OpenVINO's "stateful"); NULL when the format has none. A stateful export is one
     * graph serving prompt and steps, written to `stateful_file`; with an encoder before it, each
     * component `c` is written to seed_prefix + c + "_model" + graph_ext (optimum-intel's names:
     * openvino_encoder_model.xml, openvino_decoder_model.xml). */
    const char *state_option;
    const char *stateful_file;
    /* a boolean option that writes a bare encoder's forward as the runtime's text-embedding pipeline loads it:
     * `stateful_file`, last_hidden_state its one output (the pipeline pools); NULL: the format has none */
    const char *embedding_option;
    /* A multi-token decode with a dynamic cache also gets onnxruntime-genai's genai_config.json. */
    bool genai_config;
    /* Plans memory for the largest size of every dynamic dim (ExecuTorch): in generation graphs
     * max_cache_len bounds the sequence and past lengths that nothing else bounds, and is the
     * static cache's fixed length. */
    bool bounded_dims;
    /* Writes the Python system's I/O profile ("io": "seed"), each graph's weights in a file of its
     * own as that system does (hfx_format_graph.own_weights). */
    bool seed_io;
    /* In that profile a component `c` is written to seed_prefix + c + graph_ext (OpenVINO:
     * "openvino_prefill.xml"); with the state option on, the graphs that read state keep it in
     * the model (the seed's stateful decode) and the others stay stateless. */
    const char *seed_prefix;
    hfx_format_quant quant;
    /* The high-level IR nodes it writes itself; the exporter runs the decomposition pass with
     * it before `write`, which then sees only these and primitive ops. */
    hfx_keep_fn keeps;
    /* Lower and write the graphs into `out` (temporary names until the export commits). Weights
     * several graphs read are stored once. NULL: a format of the Python system hfx lacks. */
    hfx_status (*write)(const hfx_format_graph *gs, int n, hfx_outdir *out, hfx_error *err);
    /* Write the tokenizer as the format's runtime takes text (OpenVINO GenAI's tokenizer and
     * detokenizer graphs); NULL: the format has none, the tokenizer files are only copied. */
    hfx_status (*write_tokenizer)(const hfx_tokenizer *t, hfx_outdir *out, hfx_error *err);
} hfx_format;

/* The format named `name`, or NULL. Formats with write == NULL are listed (the Python system
 * has them) but cannot be exported to. */
const hfx_format *hfx_format_find(const char *name);

/* The i-th registered format, NULL past the end. */
const hfx_format *hfx_format_at(int i);

/* Comma-separated names of the formats that can be written ("onnx, openvino"), or, with `all`,
 * of every registered one, into buf (truncated to size); returns buf. */
const char *hfx_format_names(bool all, char *buf, size_t size);

/* Index of `key` in f's option table, -1 when the format has no such key. */
int hfx_format_option_index(const hfx_format *f, const char *key);

/* How a component's graphs are laid out in files (the format's names for each). */
typedef enum hfx_file_layout {
    HFX_FILES_PLAIN,    /* c + graph_ext: "decode.onnx" */
    HFX_FILES_SEED,     /* the Python system's profile: seed_prefix + c + graph_ext: "openvino_decode.xml" */
    HFX_FILES_STATEFUL  /* state kept inside: stateful_file when it is the only graph, else optimum-intel's
                           seed_prefix + stem + "_model" + graph_ext: "openvino_encoder_model.xml" */
} hfx_file_layout;

/* The file a component named `name` is written to ("stem": the file stem of the stateful layout,
 * NULL for `name`; `alone`: the export's only graph). Truncated to `size`. */
void hfx_format_file_name(const hfx_format *f, hfx_file_layout layout, const char *name, const char *stem, bool alone,
                          char *buf, size_t size);

#endif
