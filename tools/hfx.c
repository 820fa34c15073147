/* hfx — the command line: `hfx export` and `hfx inspect`. Exit codes: 0 success, 2 bad input
 * (a message on stderr names the file and the problem), 1 anything else. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hfx/hfx.h"
#include "inspect.h"
#include "progress.h"

/* The export a SIGINT or SIGTERM cancels, and the signal that did (the process then ends by
 * that signal, after the export removed what it staged). */
static hfx_exporter *volatile running;
static volatile sig_atomic_t stopped_by;

static void on_stop_signal(int sig) {
    stopped_by = sig;
    if (running) hfx_exporter_cancel(running);
}

/* A checkpoint file truncated under its mapping after the export's last size check: say so and
 * end (only async-signal-safe calls here). The staging the export leaves is removed by the next
 * export into the same directory. */
static void on_bus_error(int sig) {
    static const char msg[] = "hfx: error: a checkpoint file shrank while it was being read (SIGBUS); "
                              "nothing was exported\n";
    (void)sig;
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(1);
}

/* Cancel instead of dying mid-write; restored once the export has returned. */
static void catch_stop_signals(bool on) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_stop_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on ? on_bus_error : SIG_DFL;
    sigaction(SIGBUS, &sa, NULL);
}

static int fail_with(const hfx_error *err) {
    fprintf(stderr, "hfx: error: %s\n", err->message);
    return err->status == HFX_ERR_INVALID || err->status == HFX_ERR_UNSUPPORTED ? 2 : 1;
}

static int usage_error(const char *cmd, const char *msg) {
    fprintf(stderr, "hfx %s: %s (see 'hfx %s --help')\n", cmd, msg, cmd);
    return 2;
}

/* `flag`'s value, one of the NULL-terminated `choices`, set as the config's string `key`; a usage
 * error "FLAG must be A, B or C" otherwise. */
static int set_choice(hfx_export_config *cfg, const char *key, const char *flag, const char *value,
                      const char *const *choices) {
    int n = 0;
    while (choices[n] && strcmp(choices[n], value) != 0) n++;
    if (!choices[n]) {
        char msg[256];
        size_t k = (size_t)snprintf(msg, sizeof msg, "%s must be ", flag);
        for (int i = 0; choices[i] && k < sizeof msg; i++)
            k += (size_t)snprintf(msg + k, sizeof msg - k, "%s%s", i == 0 ? "" : choices[i + 1] ? ", " : " or ", choices[i]);
        return usage_error("export", msg);
    }
    char json[64];
    hfx_error err = {0};
    snprintf(json, sizeof json, "\"%s\"", value);
    return hfx_export_config_set(cfg, key, json, &err) ? fail_with(&err) : 0;
}

static const char export_usage[] =
    "usage: hfx export MODEL OUT_DIR --format F [--for-generation] [options]\n"
    "\n"
    "MODEL is a checkpoint directory (config.json + safetensors) or a Hugging Face Hub id\n"
    "(\"Qwen/Qwen3-0.6B\") already in the local Hub cache; hfx never downloads. It is exported to OUT_DIR: the\n"
    "graphs (model.onnx + model.onnx_data, model.xml + model.bin, ...), export.json,\n"
    "export_config.json, config.json, generation_config.json and the tokenizer files found\n"
    "beside the checkpoint.\n"
    "\n"
    "  --format F            export format, one of:\n";

static const char export_help[] =
    "  --dynamic             symbolic batch and sequence axes\n"
    "  --revision R          with a Hub id: the branch, tag or commit (default main)\n"
    "  --config FILE.json    export config with the Python exporters' keys\n"
    "                        (export_format, dynamic, dynamic_shapes, opset_version, external_data)\n"
    "  --batch-size N        sample batch size: fixes the batch axis of a static export (default 2)\n"
    "  --sequence-length N   sample sequence length (default 16)\n"
    "  --opset N             ONNX opset, 17..23 (default 18)\n"
    "  --dtype D             fp32 (default), fp16 or bf16 weights and activations\n"
    "  --embed-weights       keep every weight inside model.onnx (models under 2 GB)\n"
    "\n"
    "generation (docs/GENERATION.md):\n"
    "  --for-generation      write prefill.onnx + decode.onnx (KV cache in and out)\n"
    "  --multi-token-decode  one decode.onnx with a symbolic query length instead (needs --dynamic\n"
    "                        or the sequence in dynamic_shapes)\n"
    "  --cache C             dynamic (default; grows by concatenation) or static (fixed buffers\n"
    "                        written in place); default from generation_config.json\n"
    "  --max-cache-len N     static cache length (default: generation_config.json max_cache_len);\n"
    "                        executorch: also the bound of the prompt and past lengths (needed)\n"
    "  --logits L            prefill logits: last (default) or all positions\n"
    "  --io P                optimum (default: past_key_values/present, onnxruntime-genai) or seed\n"
    "                        (transformers.exporters' names, counter and 4-D mask; its decode loops)\n"
    "\n"
    "openvino (docs/OPENVINO.md):\n"
    "  --stateless           generation with explicit cache inputs/outputs instead of the\n"
    "                        default ReadValue/Assign state (openvino_model.xml + beam_idx)\n"
    "  --compress-to-fp16    store float32 weights as float16 (decompressed at load)\n"
    "  --weight-layout L     ONNX: transposed (default: MatMul on [in, out], what onnxruntime's\n"
    "                        quantizers take) or stored (Gemm on the checkpoint's [out, in]:\n"
    "                        no transpose, constant memory)\n"
    "\n"
    "executorch (docs/GENERATION.md; dynamic dims need a max in dynamic_shapes):\n"
    "  --llm-runner          the layout of ExecuTorch's LLM runner: forward(tokens, input_pos), the\n"
    "                        cache in mutable buffers, its metadata methods (with --cache static\n"
    "                        --multi-token-decode --batch-size 1)\n"
    "\n"
    "quantization (docs/QUANTIZATION.md; ONNX: MatMulNBits; OpenVINO: NNCF's compressed weights;\n"
    "ExecuTorch: XNNPACK's quantized linears, activations int8 per token at run time):\n"
    "  --quantize Q          int4 or int8 weights for every linear layer, block-wise; or\n"
    "                        int8-dynamic (ONNX: onnxruntime's dynamic quantization, MatMulInteger;\n"
    "                        one scale per tensor, or per row with --group-size 0)\n"
    "  --reduce-range        int8-dynamic: 7-bit ranges (onnxruntime's reduce_range)\n"
    "  --quantize-embeddings Q  int4, int8 or none: the embedding tables (ONNX: int4 with\n"
    "                        GatherBlockQuantized, default none; OpenVINO: default int8)\n"
    "  --quantize-lm-head Q  int4, int8 or none: the head (ONNX: default as --quantize;\n"
    "                        OpenVINO: int8 for int4, or the table's when tied: NNCF's)\n"
    "  --group-size N        weights per block along the input axis; 0: a whole row (OpenVINO)\n"
    "                        defaults: ONNX 32; OpenVINO 128 (int4), a whole row (int8);\n"
    "                        ExecuTorch 32 (int4, a multiple of 32), a whole row (int8)\n"
    "  --sym, --asym         symmetric (ONNX's and ExecuTorch's default) or asymmetric, with zero\n"
    "                        points (OpenVINO's default)\n"
    "  --onnx-ops OPS        ONNX: contrib (default: MatMulNBits, GatherBlockQuantized) or\n"
    "                        standard (DequantizeLinear + MatMul, opset 21; tables stay float)\n"
    "  --accuracy-level N    ONNX MatMulNBits: 4 (default; int8 activations, fast on CPUs) or 0\n"
    "                        (float compute: exactly the dequantized weights' products)\n"
    "\n"
    "sentence embeddings (encoders; outputs token_embeddings and sentence_embedding):\n"
    "  --pooling P           auto (default: a sentence-transformers folder's modules.json and\n"
    "                        1_Pooling/config.json decide), none, or modes joined by commas:\n"
    "                        cls, max, mean, mean_sqrt_len_tokens, weightedmean, lasttoken\n"
    "  --normalize, --no-normalize  L2-normalize the sentence embedding (default: as modules.json\n"
    "                        says with auto, off otherwise)\n"
    "  --quiet               no progress bar\n"
    "  -h, --help            this text\n";

static int read_failed(hfx_error *err, const char *path, const char *why) {
    snprintf(err->message, sizeof err->message, "%.1800s: %s", path, why);
    err->status = HFX_ERR_INVALID;
    return -1;
}

/* A --config file: a regular file (a FIFO would block: opened non-blocking, then refused), at
 * most 16 MB, read whole, with no NUL byte (JSON text has none; what follows one would be
 * silently ignored). */
static int read_file(const char *path, char **out, hfx_error *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) return read_failed(err, path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (1 << 24)) {
        close(fd);
        return read_failed(err, path, "not a regular file of at most 16 MB");
    }
    size_t size = (size_t)sb.st_size, n = 0;
    char *buf = malloc(size + 1);
    while (buf && n < size) {
        ssize_t k = read(fd, buf + n, size - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fd);
    if (!buf || n != size) {
        free(buf);
        return read_failed(err, path, "cannot read");
    }
    const char *nul = memchr(buf, 0, n);
    if (nul) {
        char why[96];
        snprintf(why, sizeof why, "a NUL byte at offset %zu (not JSON text)", (size_t)(nul - buf));
        free(buf);
        return read_failed(err, path, why);
    }
    buf[n] = 0;
    *out = buf;
    return 0;
}

static int parse_count(const char *cmd, const char *flag, const char *s, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > (1L << 30)) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s needs a positive integer, got '%s'", flag, s);
        return usage_error(cmd, msg);
    }
    *out = v;
    return 0;
}

static int cmd_export(int argc, char **argv) {
    static const struct option opts[] = {
        {"format", required_argument, 0, 'f'},   {"dynamic", no_argument, 0, 'd'},
        {"config", required_argument, 0, 'c'},   {"batch-size", required_argument, 0, 'b'},
        {"sequence-length", required_argument, 0, 's'}, {"opset", required_argument, 0, 'o'},
        {"dtype", required_argument, 0, 't'},    {"embed-weights", no_argument, 0, 'e'},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        {"for-generation", no_argument, 0, 'G'}, {"multi-token-decode", no_argument, 0, 'M'},
        {"cache", required_argument, 0, 'C'},    {"max-cache-len", required_argument, 0, 'L'},
        {"logits", required_argument, 0, 'K'},    {"stateless", no_argument, 0, 'S'},
        {"compress-to-fp16", no_argument, 0, 'F'}, {"llm-runner", no_argument, 0, 'U'}, {"revision", required_argument, 0, 'R'},
        {"io", required_argument, 0, 'I'},       {"quantize", required_argument, 0, 'Q'},
        {"group-size", required_argument, 0, 'g'}, {"sym", no_argument, 0, 'y'},
        {"asym", no_argument, 0, 'a'},           {"accuracy-level", required_argument, 0, 'A'},
        {"quantize-embeddings", required_argument, 0, 'E'}, {"quantize-lm-head", required_argument, 0, 'H'},
        {"onnx-ops", required_argument, 0, 'O'}, {"reduce-range", no_argument, 0, 'r'},
        {"weight-layout", required_argument, 0, 'W'}, {"pooling", required_argument, 0, 'P'},
        {"normalize", no_argument, 0, 'N'},     {"no-normalize", no_argument, 0, 'n'},
        {0, 0, 0, 0}};
    const char *format = NULL, *config_path = NULL, *opset = NULL, *dtype = NULL, *cache = NULL,
               *logits = NULL, *revision = NULL, *io = NULL, *quantize = NULL, *accuracy = NULL,
               *quantize_tables = NULL, *quantize_head = NULL, *onnx_ops = NULL, *weight_layout = NULL,
               *pooling = NULL;
    int llm_runner = 0;
    int normalize = -1, dynamic = 0, quiet = 0, embed = 0, for_generation = 0, multi_token = 0, stateless = 0,
        compress = 0, symmetric = -1, reduce_range = 0, c;
    long batch = 2, seq = 16, max_cache_len = 0, group_size = -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'd': dynamic = 1; break;
        case 'c': config_path = optarg; break;
        case 'b': if (parse_count("export", "--batch-size", optarg, &batch)) return 2; break;
        case 's': if (parse_count("export", "--sequence-length", optarg, &seq)) return 2; break;
        case 'o': opset = optarg; break;
        case 't': dtype = optarg; break;
        case 'e': embed = 1; break;
        case 'q': quiet = 1; break;
        case 'G': for_generation = 1; break;
        case 'M': multi_token = 1; break;
        case 'C': cache = optarg; break;
        case 'L': if (parse_count("export", "--max-cache-len", optarg, &max_cache_len)) return 2; break;
        case 'K': logits = optarg; break;
        case 'S': stateless = 1; break;
        case 'U': llm_runner = 1; break;
        case 'F': compress = 1; break;
        case 'R': revision = optarg; break;
        case 'I': io = optarg; break;
        case 'Q': quantize = optarg; break;
        case 'g': /* 0: a whole row (per channel) */
            if (strcmp(optarg, "0") == 0) group_size = 0;
            else if (parse_count("export", "--group-size", optarg, &group_size)) return 2;
            break;
        case 'y': symmetric = 1; break;
        case 'a': symmetric = 0; break;
        case 'A': accuracy = optarg; break;
        case 'E': quantize_tables = optarg; break;
        case 'H': quantize_head = optarg; break;
        case 'O': onnx_ops = optarg; break;
        case 'r': reduce_range = 1; break;
        case 'W': weight_layout = optarg; break;
        case 'P': pooling = optarg; break;
        case 'N': normalize = 1; break;
        case 'n': normalize = 0; break;
        case 'h':
            fputs(export_usage, stdout);
            for (int i = 0; hfx_format_name(i); i++) printf("                          %-10s %s\n", hfx_format_name(i), hfx_format_summary(i));
            fputs(export_help, stdout);
            return 0;
        default: return usage_error("export", "unknown option");
        }
    }
    if (argc - optind != 2) return usage_error("export", "needs MODEL and OUT_DIR");
    const char *model_dir = argv[optind], *out_dir = argv[optind + 1];

    hfx_error err = {0};
    hfx_export_config *cfg = NULL;
    char *text = NULL;
    if (config_path) {
        if (read_file(config_path, &text, &err)) return fail_with(&err);
        if (hfx_export_config_from_json(text, &cfg, &err)) {
            free(text);
            char msg[sizeof err.message];
            snprintf(msg, sizeof msg, "%s", err.message);
            snprintf(err.message, sizeof err.message, "%.500s: %.1500s", config_path, msg);
            return fail_with(&err);
        }
        free(text);
    } else {
        char names[256];
        size_t k = 0;
        int known = 0;
        names[0] = 0;
        for (int i = 0; hfx_format_name(i); i++) {
            known |= format && strcmp(format, hfx_format_name(i)) == 0;
            if (k < sizeof names) k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", hfx_format_name(i));
        }
        if (!format) {
            char msg[300];
            snprintf(msg, sizeof msg, "--format is required (%s)", names);
            return usage_error("export", msg);
        }
        if (!known) {
            snprintf(err.message, sizeof err.message, "--format '%.100s' is not available (available: %s)", format, names);
            err.status = HFX_ERR_INVALID;
            return fail_with(&err);
        }
        char json[128];
        snprintf(json, sizeof json, "{\"export_format\": \"%s\"}", format);
        if (hfx_export_config_from_json(json, &cfg, &err)) return fail_with(&err);
    }
    int rc = 0;
    char value[64];
    if (format && config_path) {
        snprintf(value, sizeof value, "\"%.50s\"", format);
        if (hfx_export_config_set(cfg, "export_format", value, &err)) { /* a key of the file the format refuses */
            char msg[sizeof err.message];
            snprintf(msg, sizeof msg, "%s", err.message);
            snprintf(err.message, sizeof err.message, "%.500s with --format %.50s: %.1400s", config_path, format, msg);
            rc = fail_with(&err);
        }
    }
    if (!rc && dynamic && hfx_export_config_set(cfg, "dynamic", "true", &err)) rc = fail_with(&err);
    if (!rc && opset) {
        char *end;
        long v = strtol(opset, &end, 10);
        snprintf(value, sizeof value, "%ld", *opset && !*end ? v : -1);
        if (hfx_export_config_set(cfg, "opset_version", value, &err)) rc = fail_with(&err);
    }
    if (!rc && dtype) {
        const char *name = strcmp(dtype, "fp32") == 0 ? "float32" : strcmp(dtype, "fp16") == 0 ? "float16"
                         : strcmp(dtype, "bf16") == 0 ? "bfloat16" : NULL;
        if (!name) rc = usage_error("export", "--dtype must be fp32, fp16 or bf16");
        else {
            snprintf(value, sizeof value, "\"%s\"", name);
            if (hfx_export_config_set(cfg, "dtype", value, &err)) rc = fail_with(&err);
        }
    }
    if (!rc && embed && hfx_export_config_set(cfg, "external_data", "false", &err)) rc = fail_with(&err);
    if (!rc && stateless && !for_generation)
        rc = usage_error("export", "--stateless needs --for-generation: a plain forward keeps no state");
    if (!rc && stateless && hfx_export_config_set(cfg, "stateful", "false", &err)) rc = fail_with(&err);
    if (!rc && compress && hfx_export_config_set(cfg, "compress_to_fp16", "true", &err)) rc = fail_with(&err);
    if (!rc && llm_runner && !for_generation)
        rc = usage_error("export", "--llm-runner needs --for-generation: the runner generates");
    if (!rc && llm_runner && hfx_export_config_set(cfg, "llm_runner", "true", &err)) rc = fail_with(&err);
    if (!rc && (multi_token || cache || max_cache_len || logits) && !for_generation)
        rc = usage_error("export", "--multi-token-decode, --cache, --max-cache-len and --logits need --for-generation");
    if (!rc && cache)
        rc = set_choice(cfg, "cache_implementation", "--cache", cache, (const char *const[]){"dynamic", "static", NULL});
    if (!rc && io) rc = set_choice(cfg, "io", "--io", io, (const char *const[]){"seed", "optimum", NULL});
    if (!rc && io && !for_generation)
        rc = usage_error("export", "--io names generation graphs' inputs: it needs --for-generation");
    if (!rc && max_cache_len) {
        snprintf(value, sizeof value, "%ld", max_cache_len);
        if (hfx_export_config_set(cfg, "max_cache_len", value, &err)) rc = fail_with(&err);
    }
    static const char *const bits_or_none[] = {"int4", "int8", "none", NULL};
    if (!rc && quantize)
        rc = set_choice(cfg, "quantize", "--quantize", quantize, (const char *const[]){"int4", "int8", "int8-dynamic", NULL});
    if (!rc && quantize_tables)
        rc = set_choice(cfg, "quantize_embeddings", "--quantize-embeddings", quantize_tables, bits_or_none);
    if (!rc && quantize_head) rc = set_choice(cfg, "quantize_lm_head", "--quantize-lm-head", quantize_head, bits_or_none);
    if (!rc && reduce_range && hfx_export_config_set(cfg, "reduce_range", "true", &err)) rc = fail_with(&err);
    if (!rc && weight_layout)
        rc = set_choice(cfg, "weight_layout", "--weight-layout", weight_layout,
                        (const char *const[]){"transposed", "stored", NULL});
    if (!rc && onnx_ops)
        rc = set_choice(cfg, "onnx_ops", "--onnx-ops", onnx_ops, (const char *const[]){"contrib", "standard", NULL});
    if (!rc && pooling) { /* "mean" or "cls,mean": a JSON string or list; the config checks the names */
        char json[256];
        size_t k = 0;
        bool list = strchr(pooling, ',') != NULL;
        k += (size_t)snprintf(json + k, sizeof json - k, "%s\"", list ? "[" : "");
        for (const char *p = pooling; *p && k + 8 < sizeof json; p++) {
            if (*p == ',') k += (size_t)snprintf(json + k, sizeof json - k, "\", \"");
            else if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) json[k++] = '?'; /* not a mode name */
            else json[k++] = *p;
        }
        snprintf(json + k, sizeof json - k, "\"%s", list ? "]" : "");
        if (hfx_export_config_set(cfg, "pooling", json, &err)) rc = fail_with(&err);
    }
    if (!rc && normalize >= 0 && hfx_export_config_set(cfg, "normalize", normalize ? "true" : "false", &err))
        rc = fail_with(&err);
    if (!rc && (pooling || normalize >= 0) && for_generation)
        rc = usage_error("export", "--pooling and --normalize shape a forward export's sentence embedding, not --for-generation");
    if (!rc && group_size >= 0) {
        snprintf(value, sizeof value, "%ld", group_size);
        if (hfx_export_config_set(cfg, "group_size", value, &err)) rc = fail_with(&err);
    }
    if (!rc && symmetric >= 0 && hfx_export_config_set(cfg, "symmetric", symmetric ? "true" : "false", &err))
        rc = fail_with(&err);
    if (!rc && accuracy) {
        if (strlen(accuracy) != 1 || accuracy[0] < '0' || accuracy[0] > '4')
            rc = usage_error("export", "--accuracy-level must be 0 to 4");
        else if (hfx_export_config_set(cfg, "accuracy_level", accuracy, &err))
            rc = fail_with(&err);
    }
    if (!rc && logits) {
        if (strcmp(logits, "last") != 0 && strcmp(logits, "all") != 0)
            rc = usage_error("export", "--logits must be last or all");
        else if (hfx_export_config_set(cfg, "logits_to_keep", strcmp(logits, "last") == 0 ? "1" : "0", &err))
            rc = fail_with(&err);
    }

    hfx_model *model = NULL;
    hfx_exporter *exporter = NULL;
    hfx_sample_inputs *samples = hfx_sample_inputs_new();
    if (!rc && hfx_model_open_at(model_dir, revision, &model, &err)) rc = fail_with(&err);
    if (!rc && hfx_exporter_from_config(cfg, &exporter, &err)) rc = fail_with(&err);
    if (!rc) {
        int64_t shape[2] = {batch, seq};
        if (!samples || hfx_sample_inputs_add(samples, "input_ids", HFX_DTYPE_I64, 2, shape, &err) ||
            hfx_sample_inputs_add(samples, "attention_mask", HFX_DTYPE_I64, 2, shape, &err) ||
            hfx_sample_inputs_add(samples, "position_ids", HFX_DTYPE_I64, 2, shape, &err))
            rc = fail_with(&err);
    }
    if (!rc) {
        progress_bar bar;
        progress_init(&bar, "writing weights", quiet);
        hfx_exporter_set_progress(exporter, progress_update, &bar);
        running = exporter;
        catch_stop_signals(true);
        hfx_status st = for_generation
                            ? hfx_export_for_generation(exporter, model, samples, cfg, NULL, multi_token, out_dir, &err)
                            : hfx_export(exporter, model, samples, cfg, out_dir, &err);
        catch_stop_signals(false);
        running = NULL;
        progress_finish(&bar);
        if (stopped_by && st == HFX_ERR_CANCELLED) { /* nothing is left of it: end the way the signal asked */
            fprintf(stderr, "hfx: export to %s stopped by signal %d; nothing was written\n", out_dir, (int)stopped_by);
            raise(stopped_by);
        }
        if (st) rc = fail_with(&err);
        for (const char *w = hfx_exporter_warnings(exporter); !st && *w;) { /* shown even when quiet */
            const char *end = strchr(w, '\n');
            int len = end ? (int)(end - w) : (int)strlen(w);
            fprintf(stderr, "hfx: warning: %.*s\n", len, w);
            w += len + (end != NULL);
        }
        if (!st && !quiet) fprintf(stderr, "hfx: exported %s to %s\n", hfx_model_architecture(model), out_dir);
    }
    hfx_sample_inputs_free(samples);
    hfx_exporter_free(exporter);
    hfx_model_close(model);
    hfx_export_config_free(cfg);
    return rc;
}

/* The reader of each format's graph files, by the library's format name. */
static const struct {
    const char *format;
    int (*inspect)(const char *path, FILE *out, hfx_error *err);
} inspectors[] = {{"onnx", inspect_onnx}, {"openvino", inspect_openvino}, {"dynamo", inspect_pt2},
                  {"executorch", inspect_pte}};

/* One graph file, read by its format's inspector (ONNX when the name says nothing). */
static int inspect_graph(const char *path, hfx_error *err) {
    const char *format = hfx_format_of_file(path);
    for (size_t i = 0; format && i < sizeof inspectors / sizeof inspectors[0]; i++)
        if (strcmp(format, inspectors[i].format) == 0) return inspectors[i].inspect(path, stdout, err);
    return inspect_onnx(path, stdout, err);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every graph file of an export directory, in name order. */
static int inspect_export_dir(const char *dir, hfx_error *err) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err->message, sizeof err->message, "%.1900s: cannot list", dir);
        err->status = HFX_ERR_INVALID;
        return -1;
    }
    char *names[64];
    int n = 0, rc = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;)
        if (hfx_format_of_file(e->d_name) && (names[n] = strdup(e->d_name))) n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n && !rc; i++) {
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        if (i) putchar('\n');
        rc = inspect_graph(file, err);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    return rc;
}

static const char inspect_help[] =
    "usage: hfx inspect PATH\n"
    "\n"
    "PATH is a checkpoint directory (prints architecture, parameter count and every tensor's\n"
    "dtype, shape and bytes), an export directory, an .onnx file or an OpenVINO .xml (prints\n"
    "inputs, outputs and an op histogram of every graph), or an ExecuTorch .pte (prints each\n"
    "method's inputs, outputs, calls, delegates and planned memory).\n";

static int cmd_inspect(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(inspect_help, stdout);
        return 0;
    }
    if (argc != 2) return usage_error("inspect", "needs one PATH");
    const char *path = argv[1];
    struct stat sb;
    hfx_error err = {0};
    int exists = stat(path, &sb) == 0, is_dir = exists && S_ISDIR(sb.st_mode);
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%s/export.json", path);
    if ((exists && !is_dir) || (!exists && hfx_format_of_file(path))) return inspect_graph(path, &err) ? fail_with(&err) : 0;
    /* an export directory (it has export.json): every graph file in it, else a checkpoint */
    if (stat(manifest, &sb) == 0) return inspect_export_dir(path, &err) ? fail_with(&err) : 0;
    hfx_model *model;
    if (hfx_model_open(path, &model, &err)) return fail_with(&err);
    hfx_model_describe(model, stdout);
    hfx_model_close(model);
    return 0;
}

static const char main_help[] =
    "usage: hfx COMMAND [options]\n"
    "\n"
    "hfx exports Hugging Face Transformers checkpoints to deployable graphs, without Python.\n"
    "\n"
    "commands:\n"
    "  export    write a checkpoint as ONNX, OpenVINO IR, a torch.export program (.pt2) or an\n"
    "            ExecuTorch program (.pte) (hfx export --help)\n"
    "  inspect   describe a checkpoint or an exported model (hfx inspect --help)\n"
    "\n"
    "  --version   print the version\n";

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("hfx %s\n", hfx_version());
        return 0;
    }
    if (strcmp(argv[1], "export") == 0) return cmd_export(argc - 1, argv + 1);
    if (strcmp(argv[1], "inspect") == 0) return cmd_inspect(argc - 1, argv + 1);
    fprintf(stderr, "hfx: unknown command '%s' (see 'hfx --help')\n", argv[1]);
    return 2;
}
