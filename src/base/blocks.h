/* llama.cpp's block-quantized element formats (ggml's types, as GGUF files store tensors): each
 * format packs `block` consecutive elements of a row into `bytes` bytes (codes and their scales),
 * and decodes to float exactly as gguf-py's dequantize does, operation for operation in float
 * arithmetic, so that a tensor read here equals transformers' GGUF load bit for bit.
 *
 * Only formats hfx can decode are listed; hfx_ggml_type_size also knows the sizes of the others
 * (so a file holding them can be validated and the tensor refused by name). */
#ifndef HFX_BASE_BLOCKS_H
#define HFX_BASE_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

enum { HFX_BLOCK_MAX = 256 }; /* the largest block, in elements (the "K" formats') */

typedef struct hfx_block_format {
    const char *name;     /* "Q4_K": ggml's name */
    uint32_t ggml_type;   /* its number in GGUF tensor infos */
    uint32_t block;       /* elements per block: 32 or 256 */
    uint32_t bytes;       /* bytes per block */
    /* The block at `src` (bytes bytes) as `block` floats into out. */
    void (*decode)(const uint8_t *src, float *out);
    /* Formats whose every value is scale · (code − 2^(bits−1)) with a float scale and unsigned codes of `bits` bits
     * (a symmetric block quantization, which quantized linears hold exactly): bits (0: not such a format), and the
     * block's scale and `block` codes, one a byte, in element order. */
    int symmetric_bits;
    void (*split)(const uint8_t *src, float *scale, uint8_t *codes);
} hfx_block_format;

/* The block format of ggml type `type`, or NULL when hfx does not decode it (plain types such as
 * F32 included: they are no blocks). */
const hfx_block_format *hfx_block_format_of(uint32_t type);

/* A plain float tensor (ggml's F32, F16 or BF16: `type` 0, 1 or 30) read as its values less one, as transformers
 * reads the norm weights llama.cpp's Gemma converter stored plus one; NULL for another type. A "block" of one. */
const hfx_block_format *hfx_block_format_less_one(uint32_t type);

/* ggml's name of type `type` ("Q4_K", "F16", ...), or NULL for a number ggml does not define. */
const char *hfx_ggml_type_name(uint32_t type);

/* Elements per block and bytes per block of ggml type `type` (plain types: 1 and the element's
 * size); false for a number ggml does not define. */
bool hfx_ggml_type_size(uint32_t type, uint32_t *block, uint32_t *bytes);

/* n consecutive elements starting at element `first` of a tensor of `f` blocks at `base`, as
 * floats into out (blocks decoded whole, the part wanted copied). */
void hfx_blocks_decode(const hfx_block_format *f, const uint8_t *base, uint64_t first, uint64_t n, float *out);

#endif
