/* Allocation-failure injection, swept over whole exports (Lua's and SQLite's way of proving that
 * every allocation failure is handled). This program replaces malloc/calloc/realloc/free (glibc
 * lets a program do that; hfx, jansson and libc's own calls all come here) with counting wrappers
 * around glibc's allocator. An export is run once to count its allocations T; then, for each N
 * in 1..T (every `stride`-th N), the same export runs with allocation N failing, and must:
 *   - return HFX_ERR_NOMEM (and an "out of memory" message), never crash — or, where the
 *     allocation had a fallback (a copy for a hard link, the caller's thread for the writer's),
 *     succeed with exactly the files of the clean run;
 *   - leave no allocation behind that it made (a table of live blocks is kept);
 *   - leave nothing on disk: the output directory absent, no staging beside it.
 * Exports: ONNX and OpenVINO, plain and generation, the seed profile's static cache (ONNX, and
 * torch.export with its cache objects), a plain .pt2, int4 weights (MatMulNBits; OpenVINO's
 * compressed weights), and OpenVINO's tokenizer graphs, of
 * examples/tiny-llama; a GGUF file (tests/alloc/tiny-qwen2.gguf) to ONNX generation graphs and its tokenizer; and a
 * compressed-tensors checkpoint (tests/alloc/tiny-llama-w4a16) read dequantized and with --quantize stored.
 *
 * jansson's own allocations are counted but never failed: jansson does not survive them (a
 * failed growth of its string buffer yields a truncated string, not an error — seen here as
 * "architecture 'LlamaForCausalM' is not supported"), so failing them would test jansson. hfx's
 * checks of what jansson returns are still exercised wherever hfx itself allocates.
 *
 * usage: alloc_sweep CHECKPOINT_DIR WORK_DIR [STRIDE [GGUF_FILE [PREQUANT_DIR]]]   (exit 0: every case held) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "hfx/hfx.h"

/* ---- the allocator: glibc's, counted ---- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

enum { TABLE = 1 << 20 }; /* live blocks made while counting (open addressing; mmap'd, not malloc'd) */

static struct {
    bool counting;
    long count, fail_at; /* the fail_at-th allocation (1-based) fails; 0: none */
    void **live;         /* TABLE slots; NULL empty, (void *)1 deleted */
    long *born;          /* TABLE slots: which allocation made each live block */
    long n_live;
    bool overflow;
} A;

static size_t slot_of(void *p) { return ((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15u >> 44 & (TABLE - 1); }

static void track(void *p) {
    if (!p || !A.live) return;
    for (size_t i = slot_of(p), k = 0; k < TABLE; i = (i + 1) & (TABLE - 1), k++)
        if (A.live[i] == NULL || A.live[i] == (void *)1) {
            A.live[i] = p;
            A.born[i] = A.count;
            A.n_live++;
            return;
        }
    A.overflow = true;
}

static void untrack(void *p) {
    if (!p || !A.live) return;
    for (size_t i = slot_of(p), k = 0; k < TABLE && A.live[i]; i = (i + 1) & (TABLE - 1), k++)
        if (A.live[i] == p) {
            A.live[i] = (void *)1;
            A.n_live--;
            return;
        }
}

/* libjansson's mappings, read from /proc/self/maps before any counting (no allocation here). */
static struct {
    uintptr_t lo[16], hi[16];
    int n;
} J;

static void find_jansson(void) {
    static char maps[1 << 16];
    FILE *f = fopen("/proc/self/maps", "r");
    size_t k = f ? fread(maps, 1, sizeof maps - 1, f) : 0;
    if (f) fclose(f);
    maps[k] = 0;
    for (char *line = maps; line && *line && J.n < 16;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        unsigned long lo, hi;
        if (strstr(line, "libjansson") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) J.lo[J.n] = lo, J.hi[J.n++] = hi;
        line = end ? end + 1 : NULL;
    }
}

static bool in_jansson(void *caller) {
    for (int i = 0; i < J.n; i++)
        if ((uintptr_t)caller >= J.lo[i] && (uintptr_t)caller < J.hi[i]) return true;
    return false;
}

/* Whether this allocation (made from `caller`) is the one to fail. */
static bool failing(void *caller) {
    if (!A.counting || in_jansson(caller)) return false;
    A.count++;
    if (A.fail_at && A.count == A.fail_at) {
        errno = ENOMEM;
        return true;
    }
    return false;
}

void *malloc(size_t n) {
    if (failing(__builtin_return_address(0))) return NULL;
    void *p = __libc_malloc(n);
    if (A.counting) track(p);
    return p;
}

void *calloc(size_t k, size_t n) {
    if (failing(__builtin_return_address(0))) return NULL;
    void *p = __libc_calloc(k, n);
    if (A.counting) track(p);
    return p;
}

void *realloc(void *old, size_t n) {
    if (failing(__builtin_return_address(0))) return NULL;
    void *p = __libc_realloc(old, n);
    if (p && A.counting) {
        untrack(old);
        track(p);
    }
    return p;
}

int posix_memalign(void **out, size_t align, size_t n) { /* the bulk writer's buffers */
    if (failing(__builtin_return_address(0))) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    if (A.counting) track(p);
    *out = p;
    return 0;
}

void free(void *p) {
    untrack(p);
    __libc_free(p);
}

/* ---- one export ---- */

typedef struct scenario {
    const char *name, *config;
    bool generation;
    bool tokenizer; /* the checkpoint gets TOKENIZER_JSON beside it (OpenVINO writes its graphs) */
    const char *memory; /* an encoder-decoder held in memory (MEMORY_MODELS) instead of the checkpoint, or "gguf":
                           the GGUF file (the fourth argument), or "prequant": the pre-quantized checkpoint (the
                           fifth) */
} scenario;

/* The argument naming the scenario's checkpoint instead of the first (the GGUF file's, the pre-quantized one's),
 * else 0 */
static int checkpoint_arg(const scenario *s) {
    return !s->memory ? 0 : strcmp(s->memory, "gguf") == 0 ? 4 : strcmp(s->memory, "prequant") == 0 ? 5 : 0;
}

/* Tiny encoder-decoders built in memory (hfx_model_open_memory), their weights zeros: T5 (relative
 * position buckets, gated MLP) and Marian (its sinusoid table computed at export). One layer per
 * stack, d_model 8, 2 heads. */
enum { MEM_MAX_TENSORS = 64 };
static const char T5_CONFIG[] =
    "{\"architectures\": [\"T5ForConditionalGeneration\"], \"vocab_size\": 16, \"d_model\": 8, \"d_kv\": 4, "
    "\"d_ff\": 8, \"num_layers\": 1, \"num_heads\": 2, \"feed_forward_proj\": \"gated-gelu\", "
    "\"relative_attention_num_buckets\": 4, \"relative_attention_max_distance\": 4, \"decoder_start_token_id\": 0}";
static const char MARIAN_CONFIG[] =
    "{\"architectures\": [\"MarianMTModel\"], \"vocab_size\": 16, \"d_model\": 8, \"encoder_layers\": 1, "
    "\"decoder_layers\": 1, \"encoder_attention_heads\": 2, \"decoder_attention_heads\": 2, \"encoder_ffn_dim\": 8, "
    "\"decoder_ffn_dim\": 8, \"max_position_embeddings\": 16, \"scale_embedding\": true, \"pad_token_id\": 15, "
    "\"decoder_start_token_id\": 15}";

typedef struct memory_model {
    hfx_tensor t[MEM_MAX_TENSORS];
    char names[MEM_MAX_TENSORS][80];
    int64_t shapes[MEM_MAX_TENSORS][2];
    size_t n;
} memory_model;

static float ZEROS[16 * 16];

static void mem_add(memory_model *m, const char *name, int rank, int64_t d0, int64_t d1) {
    size_t i = m->n++;
    snprintf(m->names[i], sizeof m->names[i], "%s", name);
    m->shapes[i][0] = d0, m->shapes[i][1] = d1;
    m->t[i] = (hfx_tensor){m->names[i], HFX_DTYPE_F32, rank, m->shapes[i], ZEROS};
}

/* The state dict of the T5 or Marian config above. */
static void memory_weights(const char *which, memory_model *m) {
    m->n = 0;
    char n[80];
    if (strcmp(which, "t5") == 0) {
        mem_add(m, "shared.weight", 2, 16, 8);
        static const char *const stacks[2] = {"encoder", "decoder"};
        for (int s = 0; s < 2; s++) {
            const char *attn[2] = {"layer.0.SelfAttention", "layer.1.EncDecAttention"};
            for (int a = 0; a < 1 + s; a++) {
                for (const char *p = "qkvo"; *p; p++) {
                    snprintf(n, sizeof n, "%s.block.0.%s.%c.weight", stacks[s], attn[a], *p);
                    mem_add(m, n, 2, 8, 8);
                }
                snprintf(n, sizeof n, "%s.block.0.layer.%d.layer_norm.weight", stacks[s], a);
                mem_add(m, n, 1, 8, 0);
            }
            snprintf(n, sizeof n, "%s.block.0.layer.0.SelfAttention.relative_attention_bias.weight", stacks[s]);
            mem_add(m, n, 2, 4, 2);
            static const char *const ff[3] = {"wi_0", "wi_1", "wo"};
            for (int f = 0; f < 3; f++) {
                snprintf(n, sizeof n, "%s.block.0.layer.%d.DenseReluDense.%s.weight", stacks[s], 1 + s, ff[f]);
                mem_add(m, n, 2, 8, 8);
            }
            snprintf(n, sizeof n, "%s.block.0.layer.%d.layer_norm.weight", stacks[s], 1 + s);
            mem_add(m, n, 1, 8, 0);
            snprintf(n, sizeof n, "%s.final_layer_norm.weight", stacks[s]);
            mem_add(m, n, 1, 8, 0);
        }
        return;
    }
    mem_add(m, "model.shared.weight", 2, 16, 8);
    mem_add(m, "final_logits_bias", 2, 1, 16);
    static const char *const stacks[2] = {"model.encoder", "model.decoder"};
    for (int s = 0; s < 2; s++) {
        const char *attn[2] = {"self_attn", "encoder_attn"};
        for (int a = 0; a < 1 + s; a++) {
            static const char *const proj[4] = {"q_proj", "k_proj", "v_proj", "out_proj"};
            for (int p = 0; p < 4; p++)
                for (int b = 0; b < 2; b++) {
                    snprintf(n, sizeof n, "%s.layers.0.%s.%s.%s", stacks[s], attn[a], proj[p], b ? "bias" : "weight");
                    mem_add(m, n, 2 - b, 8, 8);
                }
            for (int b = 0; b < 2; b++) {
                snprintf(n, sizeof n, "%s.layers.0.%s_layer_norm.%s", stacks[s], attn[a], b ? "bias" : "weight");
                mem_add(m, n, 1, 8, 0);
            }
        }
        static const char *const leaves[6] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "final_layer_norm.weight",
                                              "final_layer_norm.bias"};
        for (int l = 0; l < 6; l++) {
            snprintf(n, sizeof n, "%s.layers.0.%s", stacks[s], leaves[l]);
            mem_add(m, n, l % 2 == 0 && l < 4 ? 2 : 1, 8, 8);
        }
    }
}

/* A small byte-level BPE with a split regex, added tokens, a template and a chat template:
 * every part of the tokenizer reader and writer allocates. */
static const char TOKENIZER_JSON[] =
    "{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true},"
    " {\"id\": 1, \"content\": \"<mask>\", \"special\": true, \"lstrip\": true}],"
    " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"},"
    " {\"type\": \"Replace\", \"pattern\": {\"String\": \"\\t\"}, \"content\": \" \"}]},"
    " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\","
    " \"pattern\": {\"Regex\": \"\\\\s+|\\\\w+\"}, \"behavior\": \"Isolated\", \"invert\": false},"
    " {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]},"
    " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
    " {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [0]}}},"
    " \"decoder\": {\"type\": \"ByteLevel\"},"
    " \"model\": {\"type\": \"BPE\", \"vocab\": {\"<s>\": 0, \"<mask>\": 1, \"a\": 2, \"b\": 3, \"\\u0120\": 4,"
    " \"ab\": 5, \"\\u0120a\": 6}, \"merges\": [\"a b\", [\"\\u0120\", \"a\"]]}}";
static const char TOKENIZER_CONFIG[] = "{\"bos_token\": \"<s>\", \"eos_token\": {\"content\": \"<s>\"},"
                                       " \"chat_template\": \"{{ messages }}\", \"model_max_length\": 1e30}";

static const scenario scenarios[] = {
    {"onnx", "{\"export_format\": \"onnx\", \"dynamic\": true}", false, false, NULL},
    {"onnx-generation", "{\"export_format\": \"onnx\", \"dynamic\": true}", true, false, NULL},
    {"openvino", "{\"export_format\": \"openvino\", \"dynamic\": true}", false, false, NULL},
    {"openvino-generation", "{\"export_format\": \"openvino\", \"dynamic\": true}", true, false, NULL},
    {"onnx-seed-static", "{\"export_format\": \"onnx\", \"dynamic\": true, \"io\": \"seed\", "
                         "\"cache_implementation\": \"static\", \"max_cache_len\": 32}", true, false, NULL},
    {"openvino-tokenizer", "{\"export_format\": \"openvino\", \"dynamic\": true}", false, true, NULL},
    {"onnx-stored", "{\"export_format\": \"onnx\", \"dynamic\": true, \"weight_layout\": \"stored\"}", true,
                    false, NULL},
    {"onnx-int4-asym", "{\"export_format\": \"onnx\", \"dynamic\": true, \"quantize\": \"int4\", "
                       "\"symmetric\": false, \"quantize_embeddings\": \"int4\"}", true, false, NULL},
    {"onnx-int4-standard", "{\"export_format\": \"onnx\", \"dynamic\": true, \"quantize\": \"int4\", "
                           "\"onnx_ops\": \"standard\", \"opset_version\": 21}", false, false, NULL},
    {"onnx-int8-dynamic", "{\"export_format\": \"onnx\", \"dynamic\": true, \"quantize\": \"int8-dynamic\"}",
                          true, false, NULL},
    {"openvino-int4", "{\"export_format\": \"openvino\", \"dynamic\": true, \"quantize\": \"int4\", "
                      "\"group_size\": 32}", true, false, NULL},
    {"dynamo", "{\"export_format\": \"dynamo\", \"dynamic\": true}", false, false, NULL},
    /* PT2E's weight-only form: int4 codes unpacked in the program, dequantized by quantized_decomposed */
    {"dynamo-int4", "{\"export_format\": \"dynamo\", \"dynamic\": true, \"quantize\": \"int4\"}", false, false,
     NULL},
    {"dynamo-seed-static", "{\"export_format\": \"dynamo\", \"dynamic\": true, \"io\": \"seed\", "
                           "\"cache_implementation\": \"static\", \"max_cache_len\": 32}", true, false, NULL},
    /* ExecuTorch: XNNPACK delegates (the default backend), a static cache written in place */
    {"executorch", "{\"export_format\": \"executorch\", \"dynamic_shapes\": {\"input_ids\": "
                   "{\"0\": {\"name\": \"batch\", \"max\": 4}, \"1\": {\"name\": \"sequence\", \"max\": 32}}}}",
     false, false, NULL},
    {"executorch-static", "{\"export_format\": \"executorch\", \"backend\": \"portable\", "
                          "\"cache_implementation\": \"static\", \"max_cache_len\": 32}", true, false, NULL},
    /* and XNNPACK's quantized linears (blockwise int4, their codes and scales computed as they stream) */
    {"executorch-int4", "{\"export_format\": \"executorch\", \"quantize\": \"int4\", "
                        "\"cache_implementation\": \"static\", \"max_cache_len\": 32}", true, false, NULL},
    /* encoder-decoders: T5's generation components, Marian's forward (its table computed) */
    {"t5-generation", "{\"export_format\": \"onnx\", \"dynamic\": true, \"cache_implementation\": \"static\", "
                      "\"max_cache_len\": 16}", true, false, "t5"},
    {"marian-onnx", "{\"export_format\": \"onnx\", \"dynamic\": true}", false, false, "marian"},
    {"marian-openvino", "{\"export_format\": \"openvino\", \"dynamic\": true}", false, false, "marian"},
    /* optimum-intel's stateful encoder and decoder (the cross-attention cache a variable its first
     * call fills), and the seed's profile (its EncoderDecoderCache flattened) */
    {"marian-openvino-generation", "{\"export_format\": \"openvino\", \"dynamic\": true}", true, false, "marian"},
    {"marian-onnx-seed", "{\"export_format\": \"onnx\", \"dynamic\": true, \"io\": \"seed\"}", true, false,
     "marian"},
    /* ... and in torch.export: the EncoderDecoderCache and encoder_outputs objects pickled and described */
    {"marian-dynamo-seed", "{\"export_format\": \"dynamo\", \"dynamic\": true, \"io\": \"seed\"}", true, false,
     "marian"},
    /* a GGUF file: its metadata as a config, its blocks decoded while written, its tokenizer files made */
    {"gguf-onnx-generation", "{\"export_format\": \"onnx\", \"dynamic\": true}", true, false, "gguf"},
    /* compressed-tensors: packed int4 groups with zero points, read dequantized, and kept as MatMulNBits */
    {"prequant-openvino", "{\"export_format\": \"openvino\", \"dynamic\": true}", false, false, "prequant"},
    {"prequant-onnx-stored", "{\"export_format\": \"onnx\", \"dynamic\": true, \"quantize\": \"stored\"}", true,
                             false, "prequant"},
};

/* WORK-tokenizer: the checkpoint's files linked, with TOKENIZER_JSON beside them; NULL on failure. */
static const char *with_tokenizer(const char *ck, const char *work, char *dir, size_t n) {
    char cmd[4400];
    snprintf(dir, n, "%s-tokenizer", work);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s' && ln -s \"$(realpath '%s')\"/* '%s'/", dir, dir, ck, dir);
    if (system(cmd) != 0) return NULL;
    const char *names[2] = {"tokenizer.json", "tokenizer_config.json"}, *texts[2] = {TOKENIZER_JSON, TOKENIZER_CONFIG};
    for (int i = 0; i < 2; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        if (!f || fputs(texts[i], f) < 0 || fclose(f) != 0) return NULL;
    }
    return dir;
}

/* The export, start to end, through the public API; its status. */
static hfx_status run(const char *ck, const scenario *s, const char *out, hfx_error *err) {
    hfx_model *model = NULL;
    hfx_export_config *cfg = NULL;
    hfx_exporter *e = NULL;
    static memory_model mem; /* borrowed by the model until it closes */
    hfx_status st;
    if (s->memory && !checkpoint_arg(s)) {
        memory_weights(s->memory, &mem);
        st = hfx_model_open_memory(strcmp(s->memory, "t5") == 0 ? T5_CONFIG : MARIAN_CONFIG, NULL, mem.t, mem.n, &model,
                                   err);
    } else {
        st = hfx_model_open(ck, &model, err);
    }
    if (!st) st = hfx_export_config_from_json(s->config, &cfg, err);
    if (!st) st = hfx_exporter_from_config(cfg, &e, err);
    if (!st)
        st = s->generation ? hfx_export_for_generation(e, model, NULL, NULL, NULL, 0, out, err)
                           : hfx_export(e, model, NULL, NULL, out, err);
    hfx_exporter_free(e);
    hfx_export_config_free(cfg);
    hfx_model_close(model);
    return st;
}

/* Anything the export left in the work directory. */
static int leftovers(const char *work, char *what, size_t n) {
    DIR *d = opendir(work);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !found++) snprintf(what, n, "%s", e->d_name);
    if (d) closedir(d);
    return found;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CHECKPOINT_DIR WORK_DIR [STRIDE [GGUF_FILE]]\n", argv[0]);
        return 2;
    }
    const char *work = argv[2];
    long stride = argc > 3 ? atol(argv[3]) : 1;
    if (stride < 1) stride = 1;
    A.live = mmap(NULL, TABLE * sizeof *A.live, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    A.born = mmap(NULL, TABLE * sizeof *A.born, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (A.live == MAP_FAILED || A.born == MAP_FAILED) return 1;
    mkdir(work, 0777);
    json_t *touch = json_object(); /* libjansson is mapped by now; find it */
    json_decref(touch);
    find_jansson();
    if (!J.n) {
        fprintf(stderr, "alloc-sweep: libjansson is not mapped; cannot tell its allocations\n");
        return 1;
    }
    char out[1024], what[256];
    if (strlen(work) > 900) return 2; /* the paths below are built from it */
    snprintf(out, sizeof out, "%s/out", work);
    int bad = 0;
    for (size_t si = 0; si < sizeof scenarios / sizeof scenarios[0]; si++) {
        const scenario *s = &scenarios[si];
        hfx_error err;
        char tok_dir[1100];
        int arg = checkpoint_arg(s);
        if (arg && argc <= arg) continue; /* (no such file given) */
        const char *ck = arg ? argv[arg] : s->tokenizer ? with_tokenizer(argv[1], work, tok_dir, sizeof tok_dir)
                                                           : argv[1];
        if (!ck) return 1;
        char cmd[4200], ref[4200], same[8600], keep[13000];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
        snprintf(ref, sizeof ref, "%s-%s", work, s->name); /* beside the work directory */
        snprintf(same, sizeof same, "diff -r '%s' '%s' >/dev/null", ref, out);
        /* a first, uncounted run: glibc keeps the writer thread's stack (and the TLS block it
         * allocates once) in its cache, which is not an allocation of the export */
        if (run(ck, s, out, &err) || system(cmd) != 0) return 1;
        /* a clean run counts the allocations (and must succeed and leak nothing) */
        A.count = 0, A.fail_at = 0, A.counting = true;
        hfx_status st = run(ck, s, out, &err);
        A.counting = false;
        long total = A.count;
        if (st || A.n_live || A.overflow) {
            fprintf(stderr, "%s: the clean export failed (%s) or left %ld blocks:", s->name, st ? err.message : "ok",
                    A.n_live);
            for (size_t i = 0; i < TABLE; i++)
                if (A.live[i] && A.live[i] != (void *)1) fprintf(stderr, " allocation %ld", A.born[i]);
            fprintf(stderr, "\n");
            return 1;
        }
        snprintf(keep, sizeof keep, "rm -rf '%s' && mv '%s' '%s'", ref, out, ref);
        if (system(keep) != 0) return 1;
        long cases = 0, wrong = 0;
        for (long n = 1; n <= total; n += stride, cases++) {
            memset(&err, 0, sizeof err);
            A.count = 0, A.fail_at = n, A.counting = true;
            st = run(ck, s, out, &err);
            A.counting = false;
            const char *why = NULL;
            what[0] = 0;
            /* a success means the failed allocation had a fallback (a copy instead of a link):
             * fine, as long as nothing leaked */
            if (st != HFX_OK && st != HFX_ERR_NOMEM) why = "returned another status than HFX_ERR_NOMEM";
            else if (st != HFX_OK && !strstr(err.message, "out of memory")) why = "said something else than out of memory";
            if (A.n_live) why = "leaked";
            if (st == HFX_OK) {
                if (!why && system(same) != 0) why = "succeeded with other files than the clean run";
                if (system(cmd) != 0) return 1;
            } else if (!why && leftovers(work, what, sizeof what)) {
                why = "left a file";
                if (system(cmd) != 0) return 1;
            }
            if (why) {
                if (wrong++ < 10)
                    fprintf(stderr, "%s: allocation %ld of %ld failing: the export %s %s(status %d: %s; %ld blocks live)\n",
                            s->name, n, total, why, what, (int)st, err.message, A.n_live);
                bad = 1;
            }
            /* forget what leaked so that the next case counts its own */
            memset(A.live, 0, TABLE * sizeof *A.live);
            A.n_live = 0;
        }
        printf("alloc-sweep: %s: %ld allocations, %ld failures injected (every %ld), %ld wrong\n", s->name, total,
               cases, stride, wrong);
    }
    return bad;
}
