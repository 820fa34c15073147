/* libFuzzer entry: a checkpoint directory whose JSON files are the input — config.json,
 * generation_config.json or the shard index, chosen by the first byte — beside the real weights
 * of examples/tiny-llama (HFX_FUZZ_WEIGHTS, a path to its model.safetensors). hfx_model_open
 * parses every JSON file and the architecture's config; it must accept or refuse, never crash,
 * leak or read out of bounds. Each process works in a directory of its own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfx/hfx.h"
#include "put_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const targets[3] = {"config.json", "generation_config.json", "model.safetensors.index.json"};

/* The example's file `name`, read once. */
static const char *example(const char *name, size_t *n) {
    char path[512];
    const char *weights = getenv("HFX_FUZZ_WEIGHTS");
    if (!weights) abort(); /* make fuzz sets it */
    snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(weights, '/') - weights), weights, name);
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    static char buf[2][1 << 16];
    static size_t len[2];
    int k = strcmp(name, "config.json") == 0 ? 0 : 1;
    if (!len[k]) len[k] = fread(buf[k], 1, sizeof buf[k], f);
    fclose(f);
    *n = len[k];
    return buf[k];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[256];
    if (!dir[0]) { /* one directory per process, the weights linked in once */
        snprintf(dir, sizeof dir, "/tmp/hfx-fuzz-ckpt-%d", (int)getpid());
        char cmd[768];
        snprintf(cmd, sizeof cmd, "mkdir -p %s && ln -sf %s %s/model.safetensors", dir, getenv("HFX_FUZZ_WEIGHTS"), dir);
        if (system(cmd) != 0) abort();
    }
    if (size < 1) return 0;
    int which = data[0] % 3;
    size_t n;
    const char *cfg = example("config.json", &n);
    put(dir, "config.json", which == 0 ? (const void *)(data + 1) : cfg, which == 0 ? size - 1 : n);
    const char *gen = example("generation_config.json", &n);
    put(dir, "generation_config.json", which == 1 ? (const void *)(data + 1) : gen, which == 1 ? size - 1 : n);
    char index[512];
    snprintf(index, sizeof index, "%s/%s", dir, targets[2]);
    if (which == 2) put(dir, targets[2], data + 1, size - 1);
    else unlink(index);
    hfx_model *model = NULL;
    hfx_error err;
    if (hfx_model_open(dir, &model, &err) == HFX_OK) {
        FILE *null = fopen("/dev/null", "w");
        if (null) hfx_model_describe(model, null), fclose(null);
        hfx_model_close(model);
    } else if (!memchr(err.message, '\0', sizeof err.message)) {
        __builtin_trap();
    }
    return 0;
}
