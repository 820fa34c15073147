/* libFuzzer entry point: a GGUF file's bytes. hfx_gguf_parse must accept or reject any byte string without reading
 * outside it, leaking or tripping a sanitizer; what it accepts must lie inside the input, its values must read back
 * (every number and string), every block it holds must decode, and the Hugging Face view of it (hf/gguf_model.h)
 * must accept or refuse it. See README.md for the build command. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/blocks.h"
#include "hf/gguf.h"
#include "hf/gguf_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hfx_arena *arena = hfx_arena_new();
    if (!arena) return 0;
    hfx_gguf g;
    hfx_error err;
    volatile double sink = 0;
    if (hfx_gguf_parse(data, size, "fuzz.gguf", arena, &g, &err) == HFX_OK) {
        for (size_t i = 0; i < g.n_kv; i++) {
            const hfx_gguf_kv *kv = &g.kv[i];
            uint64_t at = 0, len;
            const char *s;
            double v;
            for (uint64_t k = 0; k < kv->count; k++) {
                if (hfx_gguf_number(kv, k, &v)) sink += v;
                else if (hfx_gguf_next_string(kv, &at, &s, &len) && len) sink += (unsigned char)s[len - 1];
            }
        }
        for (size_t i = 0; i < g.n_tensors; i++) {
            const hfx_gguf_tensor *t = &g.tensors[i];
            if (t->file_offset > size || t->nbytes > size - t->file_offset || !t->name) __builtin_trap();
            const hfx_block_format *f = hfx_block_format_of(t->ggml_type);
            float out[HFX_BLOCK_MAX];
            if (f && t->nbytes >= f->bytes) { /* the first and the last block */
                hfx_blocks_decode(f, t->data, 0, f->block, out);
                hfx_blocks_decode(f, t->data, (t->nbytes / f->bytes - 1) * f->block, f->block, out);
                sink += out[0];
            }
        }
        hfx_mapping m = {-1, size, "fuzz.gguf"};
        json_t *config;
        hfx_tensor_info *tensors;
        size_t n;
        if (hfx_gguf_model(&g, &m, arena, &config, &tensors, &n, &err) == HFX_OK) json_decref(config);
        else if (!memchr(err.message, '\0', sizeof err.message)) __builtin_trap();
    } else if (!memchr(err.message, '\0', sizeof err.message)) {
        __builtin_trap();
    }
    (void)sink;
    hfx_arena_free(arena);
    return 0;
}
