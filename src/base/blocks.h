/* llama.cpp's block-quantized element formats (ggml's types, as GGUF files store tensors): each
 * format packs `block` consecutive elements of a row into `bytes` bytes (codes and their scales),
 * and decodes to float exactly as gguf-py's dequantize does, operation for operation in float
 * arithmetic, so that a tensor read here equals transformers' GGUF load bit for bit.
 *
 * Also the tiled scales of Hub checkpoints (hfx_block_grid): codes in the tensor, their scales in another, one per
 * tile of the matrix, decoded as transformers' dequantizing loaders do.
 *
 * Only formats hfx can decode are listed; hfx_ggml_type_size also knows the sizes of the others
 * (so a file holding them can be validated and the tensor refused by name). */
#ifndef HFX_BASE_BLOCKS_H
#define HFX_BASE_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

enum { HFX_BLOCK_MAX = 256 }; /* the largest block, in elements (the "K" formats') */

#include "base/dtype.h"

/* How a grid's codes (or zero points) are stored. */
typedef enum hfx_grid_codes {
    HFX_GRID_F8E4M3,  /* float8_e4m3fn, a byte each */
    HFX_GRID_F8E5M2,  /* float8_e5m2 */
    HFX_GRID_E2M1,    /* FP4, two a byte, the first in the low nibble */
    HFX_GRID_I8,      /* signed bytes */
    HFX_GRID_I32,     /* signed 32-bit integers (zero points only) */
    HFX_GRID_PACKED   /* `bits`-bit integers stored plus 2^(bits − 1), packed densely into little-endian 32-bit words
                         from each row's first word (compressed-tensors' pack_to_int32: code k of a row at bit
                         k · bits) */
} hfx_grid_codes;

/* Matrices [rows, cols] of codes (a tensor's last two axes, its leading ones counting matrices) whose value is
 * (code − zero point) · scale, the scale (and zero point) those of the element's tile of tile_rows × tile_cols in
 * the matrix's grid of [grid_rows = ⌈rows / tile_rows⌉, grid_cols = ⌈cols / tile_cols⌉] (the last tiles partial).
 * float32 arithmetic: the code widened, one subtraction and one product (exact for every grid below), then rounded
 * to round_to, the dtype the reference dequantizes in. Hub checkpoints' FP8 weight and weight_scale_inv, MXFP4's
 * blocks and scales, compressed-tensors' packed integers. */
typedef struct hfx_block_grid {
    hfx_grid_codes codes;
    int bits;                   /* HFX_GRID_PACKED: 1..8 */
    hfx_dtype scales;           /* F32, F16 or BF16; F8E8M0 or U8: exponents e, 2^(e − 127) */
    const uint8_t *scale_data;  /* [matrices, grid_rows, grid_cols] (bounds checked by who made the grid) */
    const uint8_t *zero_data;   /* NULL: no zero points; else [matrices, grid_rows, grid_cols] as zero_codes (I8, I32),
                                   or HFX_GRID_PACKED: each column of the grid's rows packed as the codes are,
                                   [matrices, ⌈grid_rows · bits / 32⌉ words, grid_cols] */
    hfx_grid_codes zero_codes;
    hfx_dtype round_to;         /* F32, F16 or BF16 */
    uint64_t rows, cols, tile_rows, tile_cols, grid_rows, grid_cols;
    bool transposed;            /* read as [..., cols, rows]: each matrix transposed */
} hfx_block_grid;

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
    /* non-NULL: a tensor's grid (no decode; block 1 and bytes 1, or 2 and 1 for FP4): its values depend on where
     * they are */
    const hfx_block_grid *grid;
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

/* The bits of a grid a quantized linear holds exactly as stored, 4 or 8 (integer codes whose tiles' columns divide the
 * rows: a scale and zero point per run of tile_cols codes of each row, rows read as stored), else 0. */
int hfx_grid_int_bits(const hfx_block_grid *g);

/* Block b (tile_cols codes) of row `row` (counting every matrix's rows) of a grid hfx_grid_int_bits accepts: its scale
 * (as float), zero point and codes, unsigned (the stored integer + 2^(bits − 1); no zero points: 2^(bits − 1)). */
void hfx_grid_split(const hfx_block_grid *g, const uint8_t *base, uint64_t row, uint64_t b, float *scale, uint8_t *zero,
                    uint8_t *codes);

/* The one-byte float `code` of dtype F8E4M3 (no infinities, S.1111.111 NaN) or F8E5M2 as a float (exact). */
float hfx_f8_to_f32(hfx_dtype dt, uint8_t code);

/* n consecutive elements starting at element `first` of a tensor of `f` blocks at `base`, as
 * floats into out (blocks decoded whole, the part wanted copied). */
void hfx_blocks_decode(const hfx_block_format *f, const uint8_t *base, uint64_t first, uint64_t n, float *out);

#endif
