/* hfx — the command line: `hfx export` and `hfx inspect`. Exit codes: 0 success, 2 bad input
 * (a message on stderr names the file and the problem), 1 anything else. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_flags.h"
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

/* The export config: the --config file's, with --format's export_format (a key of the file the
 * new format refuses is an error); or --format's alone. *cfg is NULL on failure. */
static int load_config(const export_args *a, hfx_export_config **cfg) {
    hfx_error err = {0};
    char *text = NULL;
    *cfg = NULL;
    if (a->config_path) {
        if (read_file(a->config_path, &text, &err)) return fail_with(&err);
        hfx_status st = hfx_export_config_from_json(text, cfg, &err);
        free(text);
        if (st) {
            char msg[sizeof err.message];
            snprintf(msg, sizeof msg, "%s", err.message);
            snprintf(err.message, sizeof err.message, "%.500s: %.1500s", a->config_path, msg);
            return fail_with(&err);
        }
        if (!a->format) return 0;
        char value[64];
        snprintf(value, sizeof value, "\"%.50s\"", a->format);
        if (!hfx_export_config_set(*cfg, "export_format", value, &err)) return 0;
        char msg[sizeof err.message];
        snprintf(msg, sizeof msg, "%s", err.message);
        snprintf(err.message, sizeof err.message, "%.500s with --format %.50s: %.1400s", a->config_path, a->format, msg);
        hfx_export_config_free(*cfg);
        *cfg = NULL;
        return fail_with(&err);
    }
    if (!a->format) {
        char msg[300], names[256];
        size_t k = 0;
        names[0] = 0;
        for (int i = 0; hfx_format_name(i) && k < sizeof names; i++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", hfx_format_name(i));
        snprintf(msg, sizeof msg, "--format is required (%s)", names);
        return usage_error("export", msg);
    }
    /* the library checks the name (a character JSON would need escaped is no format's) */
    char json[160];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"export_format\": \"");
    for (const char *p = a->format; *p && k + 4 < sizeof json; p++)
        json[k++] = *p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? '?' : *p;
    snprintf(json + k, sizeof json - k, "\"}");
    if (!hfx_export_config_from_json(json, cfg, &err)) return 0;
    char msg[sizeof err.message];
    snprintf(msg, sizeof msg, "%s", err.message);
    snprintf(err.message, sizeof err.message, "--format '%.100s': %.1800s", a->format, msg);
    return fail_with(&err);
}

/* Run the export the arguments and cfg describe; its exit code. */
static int run_export(const export_args *a, const hfx_export_config *cfg) {
    hfx_error err = {0};
    hfx_model *model = NULL;
    hfx_exporter *exporter = NULL;
    hfx_sample_inputs *samples = hfx_sample_inputs_new();
    int rc = 0;
    if (hfx_model_open_task(a->model, a->revision, a->task, &model, &err)) rc = fail_with(&err);
    if (!rc && hfx_exporter_from_config(cfg, &exporter, &err)) rc = fail_with(&err);
    if (!rc) {
        int64_t shape[2] = {a->batch, a->seq};
        if (!samples || hfx_sample_inputs_add(samples, "input_ids", HFX_DTYPE_I64, 2, shape, &err) ||
            hfx_sample_inputs_add(samples, "attention_mask", HFX_DTYPE_I64, 2, shape, &err) ||
            hfx_sample_inputs_add(samples, "position_ids", HFX_DTYPE_I64, 2, shape, &err))
            rc = fail_with(&err);
    }
    if (!rc) {
        progress_bar bar;
        progress_init(&bar, "writing weights", a->quiet);
        hfx_exporter_set_progress(exporter, progress_update, &bar);
        running = exporter;
        catch_stop_signals(true);
        hfx_status st = a->for_generation ? hfx_export_for_generation(exporter, model, samples, cfg, NULL,
                                                                      a->multi_token, a->out_dir, &err)
                                          : hfx_export(exporter, model, samples, cfg, a->out_dir, &err);
        catch_stop_signals(false);
        running = NULL;
        progress_finish(&bar);
        if (stopped_by && st == HFX_ERR_CANCELLED) { /* nothing is left of it: end the way the signal asked */
            fprintf(stderr, "hfx: export to %s stopped by signal %d; nothing was written\n", a->out_dir, (int)stopped_by);
            raise(stopped_by);
        }
        if (st) rc = fail_with(&err);
        for (const char *w = hfx_exporter_warnings(exporter); !st && *w;) { /* shown even when quiet */
            const char *end = strchr(w, '\n');
            int len = end ? (int)(end - w) : (int)strlen(w);
            fprintf(stderr, "hfx: warning: %.*s\n", len, w);
            w += len + (end != NULL);
        }
        if (!st && !a->quiet) fprintf(stderr, "hfx: exported %s to %s\n", hfx_model_architecture(model), a->out_dir);
    }
    hfx_sample_inputs_free(samples);
    hfx_exporter_free(exporter);
    hfx_model_close(model);
    return rc;
}

static int cmd_export(int argc, char **argv) {
    export_args *a = malloc(sizeof *a);
    if (!a) return fail_with(&(hfx_error){HFX_ERR_NOMEM, "out of memory"});
    hfx_export_config *cfg = NULL;
    int rc = export_args_parse(argc, argv, a);
    if (!rc && a->help) export_help(a, stdout);
    else if (!rc && !(rc = load_config(a, &cfg)) && !(rc = export_args_apply(a, cfg))) rc = run_export(a, cfg);
    hfx_export_config_free(cfg);
    free(a);
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
    "PATH is a checkpoint directory or a GGUF file (prints architecture, parameter count and every\n"
    "tensor's dtype, shape and bytes), an export directory, an .onnx file or an OpenVINO .xml (prints\n"
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
    size_t n = strlen(path);
    bool gguf = exists && !is_dir && n > 5 && strcmp(path + n - 5, ".gguf") == 0; /* a checkpoint: described below */
    if (!gguf && ((exists && !is_dir) || (!exists && hfx_format_of_file(path))))
        return inspect_graph(path, &err) ? fail_with(&err) : 0;
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
