/* libFuzzer entry point: a pre-quantized checkpoint's weights. The first byte picks a quantization_config (FP8 in
 * tiles, FP8 with one scale, MXFP4, compressed-tensors packed 4-bit groups with zero points, packed 3-bit channels,
 * naive int8, FP8 channels); the rest is a safetensors file. hfx_prequant_apply must accept or refuse any such pair
 * without reading outside the input; what it accepts must decode whole (every value of a small tensor, the first
 * and last runs of a large one) and, where a quantized linear could hold it, split into blocks. See README.md. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/blocks.h"
#include "hf/prequant.h"
#include "hf/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const configs[] = {
    "{\"quant_method\": \"fp8\", \"weight_block_size\": [2, 4]}",
    "{\"quant_method\": \"fp8\", \"weight_block_size\": null}",
    "{\"quant_method\": \"mxfp4\"}",
    "{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", \"config_groups\": {\"g\": {\"weights\": "
    "{\"num_bits\": 4, \"type\": \"int\", \"symmetric\": false, \"strategy\": \"group\", \"group_size\": 8}}}}",
    "{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", \"config_groups\": {\"g\": {\"weights\": "
    "{\"num_bits\": 3, \"type\": \"int\", \"symmetric\": false, \"strategy\": \"channel\"}}}}",
    "{\"quant_method\": \"compressed-tensors\", \"format\": \"naive-quantized\", \"config_groups\": {\"g\": {\"weights\": "
    "{\"num_bits\": 8, \"type\": \"int\", \"symmetric\": true, \"strategy\": \"tensor\"}}}}",
    "{\"quant_method\": \"compressed-tensors\", \"format\": \"float-quantized\", \"config_groups\": {\"g\": {\"weights\": "
    "{\"num_bits\": 8, \"type\": \"float\", \"symmetric\": true, \"strategy\": \"channel\"}}}}",
};

static int by_name(const void *a, const void *b) {
    return strcmp(((const hfx_tensor_info *)a)->name, ((const hfx_tensor_info *)b)->name);
}

/* every value of a small tensor, the first and last runs of a large one; the first and last blocks as stored */
static float decode(const hfx_tensor_info *t) {
    enum { RUN = 4096 };
    static float out[RUN];
    uint64_t numel = hfx_numel(t->rank, t->shape), n = numel < RUN ? numel : RUN;
    hfx_blocks_decode(t->blocks, t->data, 0, n, out);
    float sink = n ? out[n - 1] : 0.0f;
    if (numel > n) hfx_blocks_decode(t->blocks, t->data, numel - n, n, out), sink += out[0];
    const hfx_block_grid *g = t->blocks->grid;
    if (g && hfx_grid_int_bits(g) && g->tile_cols <= RUN && numel) {
        uint8_t codes[RUN], zero;
        float scale;
        uint64_t rows = numel / g->cols;
        hfx_grid_split(g, t->data, 0, 0, &scale, &zero, codes);
        hfx_grid_split(g, t->data, rows - 1, g->cols / g->tile_cols - 1, &scale, &zero, codes);
        sink += scale + zero + codes[0];
    }
    return sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    json_t *q = json_loads(configs[data[0] % (sizeof configs / sizeof configs[0])], 0, NULL);
    json_t *config = json_object();
    hfx_arena *arena = hfx_arena_new();
    if (!q || !config || !arena) abort();
    json_object_set_new(config, "quantization_config", q);
    hfx_safetensors st;
    hfx_error err;
    volatile float sink = 0;
    if (hfx_safetensors_parse(data + 1, size - 1, "fuzz.safetensors", arena, &st, &err) == HFX_OK) {
        size_t n = st.n_tensors;
        if (n) qsort(st.tensors, n, sizeof *st.tensors, by_name);
        const char *method;
        if (hfx_prequant_apply(config, "fuzz/config.json", arena, st.tensors, &n, &method, &err) == HFX_OK) {
            for (size_t i = 0; i < n; i++)
                if (st.tensors[i].blocks) sink += decode(&st.tensors[i]);
        } else if (!memchr(err.message, '\0', sizeof err.message)) {
            __builtin_trap();
        }
    }
    (void)sink;
    json_decref(config);
    hfx_arena_free(arena);
    return 0;
}
