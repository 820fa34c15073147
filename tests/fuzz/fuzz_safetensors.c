/* libFuzzer entry point: hfx_safetensors_parse must accept or reject any byte string without
 * reading outside it, leaking or tripping a sanitizer. See README.md for the build command. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hf/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hfx_arena *arena = hfx_arena_new();
    if (!arena) return 0;
    hfx_safetensors st;
    hfx_error err;
    if (hfx_safetensors_parse(data, size, "fuzz.safetensors", arena, &st, &err) == HFX_OK) {
        /* a success must describe tensors that lie inside the input */
        for (size_t i = 0; i < st.n_tensors; i++) {
            const hfx_tensor_info *t = &st.tensors[i];
            if (t->file_offset > size || t->nbytes > size - t->file_offset || !t->name)
                __builtin_trap();
            volatile uint8_t sink = t->nbytes ? t->data[t->nbytes - 1] : 0;
            (void)sink;
        }
    } else if (!memchr(err.message, '\0', sizeof err.message)) {
        __builtin_trap();
    }
    hfx_arena_free(arena);
    return 0;
}
