/* hfx export's flags: its own, and those the library's table of options declares. */
#include "export_flags.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's values: the command's own flags below 256, an option's flag OPTION_FLAG + 2i (its
 * "false" flag + 1). */
enum { OWN_FORMAT = 'f', OWN_CONFIG = 'c', OWN_REVISION = 'R', OWN_TASK = 'T', OWN_BATCH = 'b', OWN_SEQ = 's',
       OWN_GENERATION = 'G', OWN_MULTI = 'M', OWN_QUIET = 'q', OWN_HELP = 'h', OPTION_FLAG = 1000 };

/* The command's own flags and their help; `group` places one in the options' section whose name
 * begins so (NULL: the general flags). */
static const struct own_flag {
    const char *flag;
    int val;
    const char *group, *help;
} own_flags[] = {
    {"--revision R", OWN_REVISION, NULL, "with a Hub id: the branch, tag or commit (default main)"},
    {"--task T", OWN_TASK, NULL,
     "where config.json names no class (architectures null, as after loading a GGUF file): the task whose Auto "
     "class picks it from model_type (text-generation, feature-extraction, text-classification, ...)"},
    {"--config FILE.json", OWN_CONFIG, NULL,
     "export config with the Python exporters' keys (export_format, dynamic, dynamic_shapes, opset_version, "
     "external_data, ...)"},
    {"--batch-size N", OWN_BATCH, NULL, "sample batch size: fixes the batch axis of a static export (default 2)"},
    {"--sequence-length N", OWN_SEQ, NULL, "sample sequence length (default 16)"},
    {"--for-generation", OWN_GENERATION, "generation", "write prefill.onnx + decode.onnx (KV cache in and out)"},
    {"--multi-token-decode", OWN_MULTI, "generation",
     "one decode graph for prompt and steps: a symbolic query length with --dynamic (or the sequence in "
     "dynamic_shapes), else --sequence-length tokens a call over a static cache"},
};

static int usage(const char *msg) {
    fprintf(stderr, "hfx export: %s (see 'hfx export --help')\n", msg);
    return 2;
}

static int failed(const hfx_error *err) {
    fprintf(stderr, "hfx: error: %s\n", err->message);
    return err->status == HFX_ERR_INVALID || err->status == HFX_ERR_UNSUPPORTED ? 2 : 1;
}

/* A flag's name without its value's ("--cache C" → "cache"), into buf. */
static const char *flag_name(const char *flag, char *buf, size_t size) {
    size_t n = strcspn(flag + 2, " ");
    snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), flag + 2);
    return buf;
}

static int parse_count(const char *flag, const char *s, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > (1L << 30)) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s needs a positive integer, got '%.40s'", flag, s);
        return usage(msg);
    }
    *out = v;
    return 0;
}

int export_args_parse(int argc, char **argv, export_args *a) {
    static const struct option own[] = {
        {"format", required_argument, 0, OWN_FORMAT},   {"config", required_argument, 0, OWN_CONFIG},
        {"revision", required_argument, 0, OWN_REVISION}, {"task", required_argument, 0, OWN_TASK},
        {"batch-size", required_argument, 0, OWN_BATCH},
        {"sequence-length", required_argument, 0, OWN_SEQ}, {"for-generation", no_argument, 0, OWN_GENERATION},
        {"multi-token-decode", no_argument, 0, OWN_MULTI}, {"quiet", no_argument, 0, OWN_QUIET},
        {"help", no_argument, 0, OWN_HELP}};
    enum { N_OWN = sizeof own / sizeof own[0], MAX_FLAGS = N_OWN + 2 * EXPORT_MAX_OPTIONS };
    struct option opts[MAX_FLAGS + 1];
    char names[2 * EXPORT_MAX_OPTIONS][48];
    int n = 0;
    memset(a, 0, sizeof *a);
    a->batch = 2, a->seq = 16;
    for (; n < N_OWN; n++) opts[n] = own[n];
    while (a->n_options < EXPORT_MAX_OPTIONS && hfx_option_info_at(a->n_options, &a->options[a->n_options])) {
        const hfx_option_info *o = &a->options[a->n_options];
        bool is_bool = strcmp(o->type, "bool") == 0;
        for (int off = 0; off < 2; off++) {
            const char *flag = off ? o->flag_off : o->flag;
            if (!flag) continue;
            char *name = names[n - N_OWN];
            opts[n++] = (struct option){flag_name(flag, name, sizeof names[0]), is_bool ? no_argument : required_argument,
                                        0, OPTION_FLAG + 2 * a->n_options + off};
        }
        a->n_options++;
    }
    opts[n] = (struct option){0, 0, 0, 0};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case OWN_FORMAT: a->format = optarg; break;
        case OWN_CONFIG: a->config_path = optarg; break;
        case OWN_REVISION: a->revision = optarg; break;
        case OWN_TASK: a->task = optarg; break;
        case OWN_BATCH: if (parse_count("--batch-size", optarg, &a->batch)) return 2; break;
        case OWN_SEQ: if (parse_count("--sequence-length", optarg, &a->seq)) return 2; break;
        case OWN_GENERATION: a->for_generation = true; break;
        case OWN_MULTI: a->multi_token = true; break;
        case OWN_QUIET: a->quiet = true; break;
        case OWN_HELP: a->help = true; return 0;
        default: {
            int i = (c - OPTION_FLAG) / 2, off = (c - OPTION_FLAG) % 2;
            if (c < OPTION_FLAG || i >= a->n_options) return usage("unknown option");
            const hfx_option_info *o = &a->options[i];
            a->given[i] = strcmp(o->type, "bool") != 0 ? optarg : off ? "false" : "true";
            a->given_as[i] = off ? o->flag_off : o->flag;
        }
        }
    }
    if (argc - optind != 2) return usage("needs MODEL and OUT_DIR");
    a->model = argv[optind], a->out_dir = argv[optind + 1];
    return 0;
}

/* "A, B or C" of the NULL-terminated words, after `lead`, into buf. */
static const char *either(const char *lead, const char *const *words, int n, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "%s", lead);
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", words[i]);
    return buf;
}

/* The JSON that flag value `v` of option o sets, into json; 0, or a usage error's exit code. */
static int value_json(const hfx_option_info *o, const char *flag, const char *v, char *json, size_t size) {
    char msg[320], lead[64];
    snprintf(lead, sizeof lead, "%.40s must be ", flag);
    if (o->flag_words) { /* "last=1 all=0": the words the flag takes, each one's JSON */
        const char *words[16], *jsons[16];
        char buf[256], *save = NULL;
        int n = 0;
        snprintf(buf, sizeof buf, "%s", o->flag_words);
        for (char *w = strtok_r(buf, " ", &save); w && n < 16; w = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(w, '=');
            if (!eq) continue;
            *eq = 0;
            words[n] = w, jsons[n++] = eq + 1;
        }
        for (int i = 0; i < n; i++)
            if (strcmp(words[i], v) == 0) {
                snprintf(json, size, "%s", jsons[i]);
                return 0;
            }
        return usage(either(lead, words, n, msg, sizeof msg));
    }
    if (strcmp(o->type, "bool") == 0) {
        snprintf(json, size, "%s", v);
        return 0;
    }
    if (strcmp(o->type, "choice") == 0) {
        int n = 0;
        while (o->choices[n] && strcmp(o->choices[n], v) != 0) n++;
        if (!o->choices[n]) {
            for (n = 0; o->choices[n];) n++;
            return usage(either(lead, o->choices, n, msg, sizeof msg));
        }
        snprintf(json, size, "\"%s\"", v);
        return 0;
    }
    if (strcmp(o->type, "int") == 0) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (!*v || *end || x < o->min || x > o->max) {
            if (o->min == 1 && o->max >= INT32_MAX) snprintf(msg, sizeof msg, "%s needs a positive integer, got '%.40s'", flag, v);
            else snprintf(msg, sizeof msg, "%s needs an integer in [%lld, %lld], got '%.40s'", flag, (long long)o->min,
                          (long long)o->max, v);
            return usage(msg);
        }
        snprintf(json, size, "%lld", x);
        return 0;
    }
    /* pooling: "mean" or "cls,mean", a JSON string or list; the config checks the names */
    size_t k = 0;
    bool list = strchr(v, ',') != NULL;
    k += (size_t)snprintf(json + k, size - k, "%s\"", list ? "[" : "");
    for (const char *p = v; *p && k + 8 < size; p++) {
        if (*p == ',') k += (size_t)snprintf(json + k, size - k, "\", \"");
        else if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) json[k++] = '?'; /* not a mode name */
        else json[k++] = *p;
    }
    snprintf(json + k, size - k, "\"%s", list ? "]" : "");
    return 0;
}

int export_args_apply(const export_args *a, hfx_export_config *cfg) {
    for (int i = 0; i < a->n_options; i++) {
        const hfx_option_info *o = &a->options[i];
        if (!a->given[i]) continue;
        char flag[48], msg[160], json[256];
        snprintf(flag, sizeof flag, "--%s", flag_name(a->given_as[i], (char[40]){0}, 40));
        if (o->scope == 1 && !a->for_generation) {
            snprintf(msg, sizeof msg, "%s needs --for-generation: it shapes generation graphs", flag);
            return usage(msg);
        }
        if (o->scope == 2 && a->for_generation) {
            snprintf(msg, sizeof msg, "%s shapes a forward export, not --for-generation", flag);
            return usage(msg);
        }
        int rc = value_json(o, flag, a->given[i], json, sizeof json);
        hfx_error err = {0};
        if (rc) return rc;
        if (hfx_export_config_set(cfg, o->key, json, &err)) return failed(&err);
    }
    return 0;
}

/* ---- help ---- */

/* `text` from column 24, wrapped before column 110; the first line after `used` columns. */
static void wrapped(FILE *out, const char *text, int used) {
    enum { INDENT = 24, WIDTH = 110 };
    if (used > INDENT - 2) fputs("  ", out), used += 2;
    else fprintf(out, "%*s", INDENT - used, ""), used = INDENT;
    bool fresh = true; /* nothing of text on this line yet */
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        if (!fresh && used + 1 + (int)n > WIDTH) fprintf(out, "\n%*s", INDENT, ""), used = INDENT;
        else if (!fresh) fputc(' ', out), used++;
        fprintf(out, "%.*s", (int)n, p);
        used += (int)n, fresh = false;
        p += n;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

static void option_help(FILE *out, const hfx_option_info *o) {
    char flags[96];
    if (o->flag && o->flag_off) snprintf(flags, sizeof flags, "%s, %s", o->flag, o->flag_off);
    else snprintf(flags, sizeof flags, "%s", o->flag ? o->flag : o->flag_off);
    int used = fprintf(out, "  %s", flags);
    wrapped(out, o->help ? o->help : "", used);
}

static bool same_group(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

void export_help(const export_args *a, FILE *out) {
    fputs("usage: hfx export MODEL OUT_DIR --format F [--for-generation] [options]\n"
          "\n"
          "MODEL is a checkpoint directory (config.json + safetensors), a llama.cpp GGUF file (or a folder holding\n"
          "one: read as transformers' GGUF loader reads it, its tokenizer files made from its metadata) or a Hugging\n"
          "Face Hub id (\"Qwen/Qwen3-0.6B\") already in the local Hub cache; hfx never downloads. It is exported to\n"
          "OUT_DIR: the graphs (model.onnx + model.onnx.data, model.xml + model.bin, ...), export.json,\n"
          "export_config.json, config.json, generation_config.json and the tokenizer files found\n"
          "beside the checkpoint.\n"
          "\n"
          "  --format F            export format, one of:\n",
          out);
    for (int i = 0; hfx_format_name(i); i++)
        fprintf(out, "                          %-10s %s\n", hfx_format_name(i), hfx_format_summary(i));
    /* each section in the order the table first names it, the general one first */
    const char *groups[EXPORT_MAX_OPTIONS + 1] = {NULL};
    int n_groups = 1;
    for (int i = 0; i < a->n_options; i++) {
        const hfx_option_info *o = &a->options[i];
        bool seen = false;
        for (int g = 0; g < n_groups && !seen; g++) seen = same_group(groups[g], o->group);
        if ((o->flag || o->flag_off) && !seen) groups[n_groups++] = o->group;
    }
    for (int g = 0; g < n_groups; g++) {
        if (groups[g]) fprintf(out, "\n%s:\n", groups[g]);
        for (size_t k = 0; k < sizeof own_flags / sizeof own_flags[0]; k++) {
            const struct own_flag *f = &own_flags[k];
            if (same_group(f->group, groups[g]) ||
                (f->group && groups[g] && strncmp(groups[g], f->group, strlen(f->group)) == 0))
                wrapped(out, f->help, fprintf(out, "  %s", f->flag));
        }
        for (int i = 0; i < a->n_options; i++)
            if ((a->options[i].flag || a->options[i].flag_off) && same_group(a->options[i].group, groups[g]))
                option_help(out, &a->options[i]);
    }
    fputs("\n  --quiet               no progress bar\n"
          "  -h, --help            this text\n",
          out);
}
