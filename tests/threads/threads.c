/* Separate handles are usable from separate threads at once (hfx.h's promise): N exports of the
 * example checkpoint, each a different format or configuration, run in N threads of this process
 * through the C API, then again one after another; every file must be byte-identical between the
 * two. Built and run under ThreadSanitizer by `make tsan` (part of `make check`), so a data race
 * fails it even when the bytes happen to agree.
 *
 * usage: threads CHECKPOINT_DIR WORK_DIR   (exit 0: every file equal, no race) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hfx/hfx.h"

typedef struct job {
    const char *config;
    int generation;
    const char *ck;
    char out[1024];
    hfx_status st;
    hfx_error err;
} job;

static const struct {
    const char *config;
    int generation;
} kinds[] = {
    {"{\"export_format\": \"onnx\", \"dynamic\": true}", 0},
    {"{\"export_format\": \"onnx\", \"dynamic\": true, \"dtype\": \"float16\"}", 0},
    {"{\"export_format\": \"openvino\", \"dynamic\": true}", 0},
    {"{\"export_format\": \"onnx\", \"dynamic\": true}", 1},
    {"{\"export_format\": \"openvino\", \"dynamic\": true}", 1},
    {"{\"export_format\": \"onnx\", \"dynamic\": true, \"cache_implementation\": \"static\", \"max_cache_len\": 32}", 1},
    {"{\"export_format\": \"onnx\", \"dynamic\": true, \"io\": \"seed\", \"cache_implementation\": \"static\", "
     "\"max_cache_len\": 32}", 1},
};
enum { N = sizeof kinds / sizeof kinds[0] };

/* One export, start to end, with handles of its own. */
static void *run(void *arg) {
    job *j = arg;
    hfx_model *model = NULL;
    hfx_export_config *cfg = NULL;
    hfx_exporter *e = NULL;
    j->st = hfx_model_open(j->ck, &model, &j->err);
    if (!j->st) j->st = hfx_export_config_from_json(j->config, &cfg, &j->err);
    if (!j->st) j->st = hfx_exporter_from_config(cfg, &e, &j->err);
    if (!j->st)
        j->st = j->generation ? hfx_export_for_generation(e, model, NULL, NULL, NULL, 0, j->out, &j->err)
                              : hfx_export(e, model, NULL, NULL, j->out, &j->err);
    hfx_exporter_free(e);
    hfx_export_config_free(cfg);
    hfx_model_close(model);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || strlen(argv[2]) > 900) {
        fprintf(stderr, "usage: %s CHECKPOINT_DIR WORK_DIR\n", argv[0]);
        return 2;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", argv[2], argv[2]);
    if (system(cmd) != 0) return 1;
    static job jobs[2][N];
    for (int pass = 0; pass < 2; pass++) /* pass 0: all at once; pass 1: one by one */
        for (int i = 0; i < N; i++) {
            job *j = &jobs[pass][i];
            j->config = kinds[i].config;
            j->generation = kinds[i].generation;
            j->ck = argv[1];
            snprintf(j->out, sizeof j->out, "%s/%s-%d", argv[2], pass ? "alone" : "together", i);
        }
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        if (pthread_create(&t[i], NULL, run, &jobs[0][i]) != 0) return 1;
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++) run(&jobs[1][i]);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        for (int pass = 0; pass < 2; pass++)
            if (jobs[pass][i].st) {
                fprintf(stderr, "export %d (%s): %s\n", i, pass ? "alone" : "in a thread", jobs[pass][i].err.message);
                bad = 1;
            }
        snprintf(cmd, sizeof cmd, "diff -r '%s' '%s'", jobs[0][i].out, jobs[1][i].out);
        if (!bad && system(cmd) != 0) {
            fprintf(stderr, "export %d: the files written in a thread differ from those written alone\n", i);
            bad = 1;
        }
    }
    printf("threads: %d exports in %d threads, each byte-identical to the same export alone: %s\n", N, N,
           bad ? "NO" : "yes");
    return bad;
}
