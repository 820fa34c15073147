/* libFuzzer entry: arbitrary bytes as tokenizer.json, or as tokenizer_config.json beside a fixed
 * tokenizer.json (the first byte chooses), in a checkpoint directory with examples/tiny-llama's
 * config and weights (HFX_FUZZ_WEIGHTS). hfx_tokenizer_load must convert or give a reason, never
 * crash, leak or read out of bounds; a converted tokenizer is written as OpenVINO's tokenizer
 * graphs into an output transaction that is then abandoned (nothing reaches the disk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/tokenizer.h"
#include "fmt/openvino/openvino.h"
#include "io/outdir.h"
#include "put_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A byte-level BPE with every kind of part, for the tokenizer_config.json case. */
static const char FIXED[] =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true}], \"normalizer\": {\"type\": \"NFC\"},"
    " \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}, \"post_processor\":"
    " {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}, {\"Sequence\": {\"id\": \"A\"}}],"
    " \"special_tokens\": {\"<s>\": {\"ids\": [0]}}}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"<s>\": 0, \"a\": 1,"
    " \"b\": 2, \"ab\": 3}, \"merges\": [\"a b\"]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[256], out[300];
    if (!dir[0]) { /* one directory per process, the example linked in once */
        const char *weights = getenv("HFX_FUZZ_WEIGHTS");
        if (!weights) abort(); /* make fuzz sets it */
        snprintf(dir, sizeof dir, "/tmp/hfx-fuzz-tok-%d", (int)getpid());
        snprintf(out, sizeof out, "%s/out", dir);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "mkdir -p %s && ln -sf %s %s/model.safetensors && ln -sf %.*s/config.json %s/",
                 dir, weights, dir, (int)(strrchr(weights, '/') - weights), weights, dir);
        if (system(cmd) != 0) abort();
    }
    if (size < 1) return 0;
    bool config = data[0] & 1;
    put(dir, "tokenizer.json", config ? FIXED : (const char *)data + 1, config ? strlen(FIXED) : size - 1);
    if (config) put(dir, "tokenizer_config.json", data + 1, size - 1);
    else {
        char path[512];
        snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
        unlink(path);
    }
    hfx_checkpoint *ck;
    hfx_error err;
    if (hfx_checkpoint_open(dir, &ck, &err)) abort(); /* the example itself is fine */
    hfx_tokenizer *t = NULL;
    char why[1024];
    if (hfx_tokenizer_load(ck, &t, why, sizeof why, &err) == HFX_OK && t) {
        hfx_outdir *o;
        if (hfx_outdir_open(out, NULL, &o, &err) == HFX_OK) {
            hfx_ov_write_tokenizer(t, o, &err);
            hfx_outdir_abort(o);
        }
    } else if (!t && !memchr(why, '\0', sizeof why)) {
        __builtin_trap();
    }
    hfx_tokenizer_free(t);
    hfx_checkpoint_close(ck);
    return 0;
}
