/* madvise(MADV_DONTNEED) is a Linux/BSD call, outside POSIX: ask for it before any include. */
#define _DEFAULT_SOURCE
/* Reading initializers: walk the strided views of the parts in row-major order, converting each
 * run of elements to the initializer's dtype. The bytes come straight from the mmap, so memory
 * stays bounded by the caller's chunk. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/half.h"
#include "base/status.h"
#include "ir/init.h"
#include "ir/transpose.h"

uint64_t hfx_init_numel(const hfx_init *init) { return hfx_numel(init->rank, init->shape); }

uint64_t hfx_init_nbytes(const hfx_init *init) { return hfx_dtype_nbytes(init->dtype, hfx_init_numel(init)); }

bool hfx_init_is_mapped(const hfx_init *init) {
    if (init->quant) return hfx_init_is_mapped(init->quant_of);
    for (int i = 0; i < init->n_parts; i++)
        if (!init->parts[i].mapping) return false;
    return init->n_parts > 0;
}

hfx_status hfx_init_check_files(const hfx_init *init, hfx_error *err) {
    if (init->quant) return hfx_init_check_files(init->quant_of, err);
    for (int i = 0; i < init->n_parts; i++) {
        const hfx_mapping *m = init->parts[i].mapping;
        if (m && (i == 0 || m != init->parts[i - 1].mapping) && !hfx_mapping_intact(m))
            return hfx_fail(err, HFX_ERR_IO, "%s: the file shrank below %llu bytes while '%s' was being exported from it",
                            m->path, (unsigned long long)m->size, init->source);
    }
    return HFX_OK;
}

bool hfx_init_same(const hfx_init *a, const hfx_init *b) {
    if (a == b) return true;
    if (a->quant || b->quant) /* the same part of the same weight, quantized alike */
        return a->quant && b->quant && a->quant_part == b->quant_part && a->dtype == b->dtype &&
               a->quant->rule == b->quant->rule && a->quant->bits == b->quant->bits &&
               a->quant->block == b->quant->block && a->quant->symmetric == b->quant->symmetric &&
               a->quant->scale_dtype == b->quant->scale_dtype && a->quant->layout == b->quant->layout &&
               a->quant->reduce_range == b->quant->reduce_range && a->quant->from_blocks == b->quant->from_blocks &&
               hfx_init_same(a->quant_of, b->quant_of);
    if (a->dtype != b->dtype || a->rank != b->rank || a->n_parts != b->n_parts ||
        memcmp(a->shape, b->shape, sizeof a->shape) != 0)
        return false;
    for (int i = 0; i < a->n_parts; i++) {
        const hfx_init_part *p = &a->parts[i], *q = &b->parts[i];
        if (p->base != q->base || p->src_dtype != q->src_dtype || p->blocks != q->blocks || p->rank != q->rank ||
            p->offset != q->offset || memcmp(p->shape, q->shape, sizeof p->shape) ||
            memcmp(p->strides, q->strides, sizeof p->strides))
            return false;
    }
    return true;
}

static uint64_t part_numel(const hfx_init_part *p) {
    uint64_t n = 1;
    for (int i = 0; i < p->rank; i++) n *= (uint64_t)p->shape[i];
    return n;
}

/* The address of source element e of a part (for a block part: of the block holding it; `end`: of the first
 * block past element e − 1, so [at(a), at(b, end)) covers elements [a, b)) */
static const uint8_t *element_at(const hfx_init_part *p, int64_t e, bool end) {
    if (!p->blocks) return p->base + (uint64_t)e * hfx_dtype_size(p->src_dtype);
    uint64_t b = (uint64_t)e / p->blocks->block + (end && (uint64_t)e % p->blocks->block ? 1 : 0);
    return p->base + b * p->blocks->bytes;
}

/* n source elements of a block part from element `at`, `stride` apart, into contiguous dst as ddt: runs of stride
 * 1 decode whole blocks; a strided run decodes the block of each element */
static void convert_blocks(const hfx_init_part *p, int64_t at, int64_t stride, hfx_dtype ddt, uint8_t *dst,
                           uint64_t n) {
    float buf[HFX_BLOCK_MAX];
    size_t ds = hfx_dtype_size(ddt);
    for (uint64_t i = 0; i < n;) {
        uint64_t k = stride == 1 ? (n - i < HFX_BLOCK_MAX ? n - i : HFX_BLOCK_MAX) : 1;
        hfx_blocks_decode(p->blocks, p->base, (uint64_t)(at + (int64_t)i * stride), k, buf);
        for (uint64_t j = 0; j < k; j++) hfx_float_store(ddt, dst + (i + j) * ds, buf[j]);
        i += k;
    }
}

/* Rows [r0, r0 + rows) × columns [c0, c0 + ncols) of a block part whose axis 0 steps one source element (a
 * transposed view; its other axes, flattened, are the columns, each a source row or a view of rows), into
 * dst[rows][ncols] as ddt: each column's rows are one contiguous run of the source, decoded in blocks, a few columns
 * at a time so that their values go out row by row (a column written down dst would touch a line per value). */
static void block_columns(const hfx_init_part *p, int64_t r0, int64_t rows, int64_t c0, int64_t ncols, hfx_dtype ddt,
                          uint8_t *dst) {
    enum { COLS = 16 };
    float buf[COLS][HFX_BLOCK_MAX]; /* [column][row] of one square */
    size_t ds = hfx_dtype_size(ddt);
    for (int64_t cb = c0; cb < c0 + ncols; cb += COLS) {
        int64_t nc = c0 + ncols - cb < COLS ? c0 + ncols - cb : COLS, off[COLS];
        for (int64_t j = 0; j < nc; j++) { /* column cb + j's multi-index over axes 1.. */
            int64_t rest = cb + j;
            off[j] = p->offset + r0 * p->strides[0];
            for (int d = p->rank - 1; d >= 1; d--) {
                off[j] += rest % p->shape[d] * p->strides[d];
                rest /= p->shape[d];
            }
        }
        for (int64_t r = 0; r < rows; r += HFX_BLOCK_MAX) {
            int64_t k = rows - r < HFX_BLOCK_MAX ? rows - r : HFX_BLOCK_MAX;
            for (int64_t j = 0; j < nc; j++)
                hfx_blocks_decode(p->blocks, p->base, (uint64_t)(off[j] + r), (uint64_t)k, buf[j]);
            for (int64_t i = 0; i < k; i++) {
                uint8_t *o = dst + (uint64_t)((r + i) * ncols + cb - c0) * ds;
                if (ddt == HFX_DTYPE_F32)
                    for (int64_t j = 0; j < nc; j++) memcpy(o + (uint64_t)j * 4, &buf[j][i], 4);
                else
                    for (int64_t j = 0; j < nc; j++) hfx_float_store(ddt, o + (uint64_t)j * ds, buf[j][i]);
            }
        }
    }
}

/* Widen n contiguous source elements to float (exact for every float type). */
static void load_floats(hfx_dtype sdt, const uint8_t *src, float *dst, int64_t n) {
    if (sdt == HFX_DTYPE_BF16) {
        int64_t i = 0;
#ifdef __SSE2__
        /* a bfloat16 is a float's top half: interleave zeros below, eight at a time */
        for (const __m128i zero = _mm_setzero_si128(); i + 8 <= n; i += 8) {
            __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i));
            _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_unpacklo_epi16(zero, h));
            _mm_storeu_si128((__m128i *)(void *)(dst + i + 4), _mm_unpackhi_epi16(zero, h));
        }
#endif
        for (; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            uint32_t u = (uint32_t)h << 16;
            memcpy(&dst[i], &u, 4);
        }
    } else if (sdt == HFX_DTYPE_F32) {
        memcpy(dst, src, (size_t)n * 4);
    } else {
        for (int64_t i = 0; i < n; i++) dst[i] = hfx_float_load(sdt, src + (size_t)i * hfx_dtype_size(sdt));
    }
}

/* Narrow n floats into contiguous dst (round to nearest-even). */
static void store_floats(hfx_dtype ddt, const float *src, uint8_t *dst, int64_t n) {
    if (ddt == HFX_DTYPE_F32) {
        memcpy(dst, src, (size_t)n * 4);
    } else if (ddt == HFX_DTYPE_F16) {
        uint16_t half[256]; /* dst is bytes of any alignment: narrow into a block, then copy */
        for (int64_t i = 0; i < n; i += 256) {
            int64_t k = n - i < 256 ? n - i : 256;
            hfx_f32_to_f16_n(src + i, half, (size_t)k, true);
            memcpy(dst + 2 * i, half, (size_t)k * 2);
        }
    } else {
        for (int64_t i = 0; i < n; i++) hfx_float_store(ddt, dst + (size_t)i * hfx_dtype_size(ddt), src[i]);
    }
}

/* Convert n elements starting at src (stride in source elements) into contiguous dst. */
static void convert_run(hfx_dtype sdt, const uint8_t *src, int64_t stride, hfx_dtype ddt,
                        uint8_t *dst, uint64_t n) {
    size_t ss = hfx_dtype_size(sdt), ds = hfx_dtype_size(ddt);
    if (sdt == ddt) {
        if (stride == 1) {
            memcpy(dst, src, n * ss);
        } else {
            for (uint64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + (uint64_t)stride * i * ss, ss);
        }
        return;
    }
    if (stride == 1 && hfx_dtype_is_float(sdt) && hfx_dtype_is_float(ddt)) {
        /* contiguous: through a small float block, so both loops vectorize */
        float block[256];
        for (uint64_t i = 0; i < n; i += 256) {
            int64_t k = n - i < 256 ? (int64_t)(n - i) : 256;
            load_floats(sdt, src + i * ss, block, k);
            store_floats(ddt, block, dst + i * ds, k);
        }
        return;
    }
    /* strided (rare: a view that steps over elements): one at a time */
    for (uint64_t i = 0; i < n; i++)
        hfx_float_store(ddt, dst + i * ds, hfx_float_load(sdt, src + (uint64_t)stride * i * ss));
}

/* Whether a part reads a checkpoint file's mapping, whose pages the kernel can drop and re-read.
 * A tensor held in memory (hfx_model_open_memory: fd −1) is the caller's: MADV_DONTNEED would
 * zero anonymous memory, so its pages are never advised. */
static bool file_backed(const hfx_init_part *p) { return p->mapping && p->mapping->fd >= 0; }

static void drop_pages(const uint8_t *lo_p, const uint8_t *hi_p) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || hi_p <= lo_p) return;
    uintptr_t lo = (uintptr_t)lo_p, hi = (uintptr_t)hi_p;
    /* whole pages inside the range only: a page shared with the next elements stays */
    uintptr_t start = (lo + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t end = hi / (uintptr_t)page * (uintptr_t)page;
    if (end > start) (void)madvise((void *)start, end - start, MADV_DONTNEED); /* a hint */
}

enum { TILE_ROWS = 128, BLOCK = HFX_TRANSPOSE_SQUARE };

/* Rows [r0, r0 + rows) × columns [c0, c0 + ncols) of a rank-2 view whose columns are strided (a
 * transpose), into dst[rows][ncols]: out[r][c] = src[offset + r·strides[0] + c·strides[1]]. When
 * strides[0] is 1 each output column is a contiguous source run, and BLOCK × BLOCK squares go
 * through ir/transpose.c's kernels, which convert in registers; for a pair of dtypes they have
 * no kernel for, the square is transposed as bits into an L1 tile, converted in one run, and
 * copied out row by row. Either way the source is read and the output written in runs. */
static void transpose_tile(const hfx_init_part *p, int64_t r0, int64_t rows, int64_t c0, int64_t ncols,
                           hfx_dtype ddt, uint8_t *dst) {
    if (p->blocks) {
        block_columns(p, r0, rows, c0, ncols, ddt, dst);
        return;
    }
    size_t ss = hfx_dtype_size(p->src_dtype), ds = hfx_dtype_size(ddt);
    int64_t c_end = c0 + ncols;
    bool same = p->src_dtype == ddt;
    if (p->strides[0] == 1 && (ss == 2 || ss == 4) && (ds == 2 || ds == 4) &&
        (same || (hfx_dtype_is_float(p->src_dtype) && hfx_dtype_is_float(ddt)))) {
        /* [BLOCK rows][BLOCK columns] of source elements, then of converted ones, for pairs
         * without a kernel; zeroed on first use so columns past a short square's end convert as
         * zeros, not as stale bytes */
        uint8_t tile[BLOCK * BLOCK * 4], converted[BLOCK * BLOCK * 4];
        bool tile_zeroed = false;
        for (int64_t cb = c0; cb < c_end; cb += BLOCK) {
            int nc = (int)(c_end - cb < BLOCK ? c_end - cb : BLOCK);
            for (int64_t rb = r0; rb < r0 + rows; rb += BLOCK) {
                int nr = (int)(r0 + rows - rb < BLOCK ? r0 + rows - rb : BLOCK);
                const uint8_t *src = p->base + (uint64_t)(p->offset + rb + cb * p->strides[1]) * ss;
                uint8_t *out = dst + (uint64_t)((rb - r0) * ncols + (cb - c0)) * ds;
                {
                    /* the next square's runs and output lines are a row apart, patterns the
                     * hardware prefetchers miss (and the output's lines are cold): ask for them */
                    int64_t nrb = rb + BLOCK, ncb = cb;
                    if (nrb >= r0 + rows) nrb = r0, ncb = cb + BLOCK;
                    if (ncb < c_end) {
                        int64_t kc = c_end - ncb < BLOCK ? c_end - ncb : BLOCK, kr = r0 + rows - nrb < BLOCK ? r0 + rows - nrb : BLOCK;
                        const uint8_t *ns = p->base + (uint64_t)(p->offset + nrb + ncb * p->strides[1]) * ss;
                        uint8_t *no = dst + (uint64_t)((nrb - r0) * ncols + (ncb - c0)) * ds;
                        for (int64_t c = 0; c < kc; c++)
                            for (uint64_t b = 0; b < (uint64_t)kr * ss; b += 64) __builtin_prefetch(ns + (uint64_t)(c * p->strides[1]) * ss + b);
                        for (int64_t r = 0; r < kr; r++)
                            for (uint64_t b = 0; b < (uint64_t)kc * ds; b += 64) __builtin_prefetch(no + (uint64_t)(r * ncols) * ds + b, 1);
                    }
                }
                if (hfx_transpose_square(src, p->strides[1], p->src_dtype, out, ncols, ddt, nr, nc)) continue;
                /* a pair without a converting kernel: the bits into the tile, then converted */
                if (!tile_zeroed) memset(tile, 0, sizeof tile), tile_zeroed = true;
                hfx_transpose_square(src, p->strides[1], p->src_dtype, tile, BLOCK, p->src_dtype, nr, nc);
                if (ddt == HFX_DTYPE_F32) { /* widening: straight into dst, which is float-aligned */
                    for (int r = 0; r < nr; r++)
                        load_floats(p->src_dtype, tile + (size_t)r * BLOCK * ss, (float *)(void *)(out + (uint64_t)(r * ncols) * ds), nc);
                    continue;
                }
                /* narrowing: the whole square in one run (whole rows, the tail columns too) */
                convert_run(p->src_dtype, tile, 1, ddt, converted, (uint64_t)nr * BLOCK);
                for (int r = 0; r < nr; r++)
                    memcpy(out + (uint64_t)(r * ncols) * ds, converted + (size_t)r * BLOCK * ds, (size_t)nc * ds);
            }
        }
        return;
    }
    /* any other layout: element by element, columns in blocks so the rows × block of output
     * being written stays in L1 */
    for (int64_t cb = c0; cb < c_end; cb += BLOCK)
    for (int64_t c = cb; c < c_end && c < cb + BLOCK; c++) {
        const uint8_t *src = p->base + (uint64_t)(p->offset + r0 * p->strides[0] + c * p->strides[1]) * ss;
        uint8_t *o = dst + (uint64_t)(c - c0) * ds;
        for (int64_t r = 0; r < rows; r++) {
            const uint8_t *e = src + (uint64_t)(r * p->strides[0]) * ss;
            if (same)
                memcpy(o + (uint64_t)(r * ncols) * ds, e, ss);
            else
                hfx_float_store(ddt, o + (uint64_t)(r * ncols) * ds, hfx_float_load(p->src_dtype, e));
        }
    }
}

/* The one part of a transposed view (see hfx_init_is_transposed), or NULL. */
static const hfx_init_part *transposed_part(const hfx_init *init) {
    if (init->quant || init->rank != 2 || init->n_parts != 1) return NULL;
    const hfx_init_part *p = &init->parts[0];
    bool convertible = p->src_dtype == init->dtype ||
                       (hfx_dtype_is_float(p->src_dtype) && hfx_dtype_is_float(init->dtype));
    if (!p->mapping || p->rank != 2 || p->strides[0] != 1 || p->strides[1] < p->shape[0] ||
        hfx_dtype_is_packed(p->src_dtype) || !convertible)
        return NULL;
    return p;
}

bool hfx_init_is_transposed(const hfx_init *init) { return transposed_part(init) != NULL; }

hfx_status hfx_init_read_block(const hfx_init *init, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                               void *dst, hfx_error *err) {
    if (init->rank != 2 || r0 < 0 || c0 < 0 || nr < 0 || nc < 0 || r0 + nr > init->shape[0] ||
        c0 + nc > init->shape[1])
        return hfx_fail(err, HFX_ERR_INTERNAL, "block read of '%s' outside its shape", init->source);
    const hfx_init_part *p = transposed_part(init);
    uint8_t *out = dst;
    size_t ds = hfx_dtype_size(init->dtype);
    if (!p) { /* any other view: row by row */
        for (int64_t r = 0; r < nr; r++) {
            hfx_status st = hfx_init_read(init, (uint64_t)((r0 + r) * init->shape[1] + c0), (uint64_t)nc,
                                          out + (uint64_t)(r * nc) * ds, err);
            if (st) return st;
        }
        return HFX_OK;
    }
    transpose_tile(p, r0, nr, c0, nc, init->dtype, out);
    return HFX_OK;
}

void hfx_init_advise_columns(const hfx_init *init, int64_t c0, int64_t nc, bool needed) {
    const hfx_init_part *p = transposed_part(init);
    long page = sysconf(_SC_PAGESIZE);
    if (!p || !file_backed(p) || nc <= 0 || page <= 0) return;
    /* column c is the source row at offset + c·strides[1], shape[0] elements long */
    const uint8_t *lo = element_at(p, p->offset + c0 * p->strides[1], false);
    const uint8_t *hi = element_at(p, p->offset + (c0 + nc - 1) * p->strides[1] + p->shape[0], true);
    if (!needed) { /* whole pages only: the first and last may hold the neighbours' bytes, still to come */
        drop_pages(lo, hi);
        return;
    }
    uintptr_t start = (uintptr_t)lo / (uintptr_t)page * (uintptr_t)page;
    (void)madvise((void *)start, (uintptr_t)hi - start, MADV_WILLNEED); /* a hint */
}

hfx_status hfx_init_read(const hfx_init *init, uint64_t first, uint64_t count, void *dst,
                         hfx_error *err) {
    if (first + count > hfx_init_numel(init) || first + count < first)
        return hfx_fail(err, HFX_ERR_INTERNAL, "read of '%s' past its end", init->source);
    if (init->quant) return hfx_quant_read(init, first, count, dst, err);
    if (hfx_dtype_is_packed(init->dtype))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "'%s': element reads of %s are not supported (packed type)",
                        init->source, hfx_dtype_name(init->dtype));
    uint8_t *out = dst;
    size_t ds = hfx_dtype_size(init->dtype);
    uint64_t part_start = 0;
    for (int pi = 0; pi < init->n_parts && count > 0; pi++) {
        const hfx_init_part *p = &init->parts[pi];
        uint64_t pn = part_numel(p);
        if (first >= part_start + pn) {
            part_start += pn;
            continue;
        }
        if (p->src_dtype != init->dtype && !(hfx_dtype_is_float(p->src_dtype) && hfx_dtype_is_float(init->dtype)))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "cannot convert '%s' from %s to %s",
                            init->source, hfx_dtype_name(p->src_dtype),
                            hfx_dtype_name(init->dtype));
        /* multi-index of the first element within this part */
        uint64_t local = first - part_start, rem = local;
        int64_t idx[HFX_MAX_RANK] = {0};
        for (int d = p->rank - 1; d >= 0; d--) {
            idx[d] = p->shape[d] ? (int64_t)(rem % (uint64_t)p->shape[d]) : 0;
            rem = p->shape[d] ? rem / (uint64_t)p->shape[d] : 0;
        }
        uint64_t left = pn - local < count ? pn - local : count;
        size_t ss = hfx_dtype_size(p->src_dtype);
        /* a block part read transposed (axis 0 steps one source element; the others, of any rank, enumerate
         * source rows): in tiles as below, each column's run decoded once, not a block per element */
        int64_t columns = p->rank >= 2 ? (int64_t)(part_numel(p) / (uint64_t)(p->shape[0] ? p->shape[0] : 1)) : 0;
        bool block_tiles = p->blocks && p->rank > 2 && p->strides[0] == 1 && p->strides[p->rank - 1] != 1;
        while (left > 0) {
            bool row_start = true;
            for (int d = 1; d < p->rank; d++) row_start &= idx[d] == 0;
            /* a transposed matrix, whole rows wanted: gather a tile of rows at once, so each
             * source row is read contiguously instead of one element per cache line */
            if (((p->rank == 2 && p->strides[1] != 1) || block_tiles) && row_start && left >= (uint64_t)columns) {
                int64_t rows = (int64_t)(left / (uint64_t)columns);
                if (rows > TILE_ROWS) rows = TILE_ROWS;
                if (rows > p->shape[0] - idx[0]) rows = p->shape[0] - idx[0];
                transpose_tile(p, idx[0], rows, 0, columns, init->dtype, out);
                uint64_t n = (uint64_t)rows * (uint64_t)columns;
                out += n * ds;
                left -= n;
                count -= n;
                first += n;
                idx[0] += rows;
                continue;
            }
            int64_t off = p->offset;
            for (int d = 0; d < p->rank; d++) off += idx[d] * p->strides[d];
            int last = p->rank - 1;
            uint64_t run = last >= 0 ? (uint64_t)(p->shape[last] - idx[last]) : 1;
            if (run > left) run = left;
            if (p->blocks)
                convert_blocks(p, off, last >= 0 ? p->strides[last] : 1, init->dtype, out, run);
            else
                convert_run(p->src_dtype, p->base + (uint64_t)off * ss, last >= 0 ? p->strides[last] : 1,
                            init->dtype, out, run);
            out += run * ds;
            left -= run;
            count -= run;
            first += run;
            /* advance the multi-index by `run` */
            if (last >= 0) {
                idx[last] += (int64_t)run;
                for (int d = last; d > 0 && idx[d] >= p->shape[d]; d--) {
                    idx[d] = 0;
                    idx[d - 1]++;
                }
            }
        }
        part_start += pn;
    }
    return HFX_OK;
}

void hfx_init_release_range(const hfx_init *init, uint64_t first, uint64_t count) {
    if (init->quant) { /* the weight rows the part's elements came from */
        uint64_t src_first, src_count;
        hfx_quant_source_range(init, first, count, &src_first, &src_count);
        if (src_count) hfx_init_release_range(init->quant_of, src_first, src_count);
        return;
    }
    uint64_t part_start = 0;
    for (int i = 0; i < init->n_parts && count > 0; i++) {
        const hfx_init_part *p = &init->parts[i];
        uint64_t pn = part_numel(p);
        if (first < part_start + pn && first + count > part_start && file_backed(p)) {
            /* row-major contiguous view: element e sits at offset + e in the source */
            bool contiguous = true;
            int64_t stride = 1;
            for (int d = p->rank - 1; d >= 0 && contiguous; d--) {
                if (p->shape[d] > 1 && p->strides[d] != stride) contiguous = false;
                stride *= p->shape[d];
            }
            if (contiguous) {
                uint64_t a = first > part_start ? first - part_start : 0;
                uint64_t b = first + count - part_start < pn ? first + count - part_start : pn;
                drop_pages(element_at(p, p->offset + (int64_t)a, true), element_at(p, p->offset + (int64_t)b, false));
            }
        }
        part_start += pn;
    }
}

void hfx_init_release(const hfx_init *init) {
    if (init->quant) {
        hfx_init_release(init->quant_of);
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    for (int i = 0; i < init->n_parts; i++) {
        const hfx_init_part *p = &init->parts[i];
        if (!file_backed(p)) continue;
        /* the span of source elements the view can reach */
        int64_t last = p->offset;
        bool empty = false;
        for (int d = 0; d < p->rank; d++) {
            if (p->shape[d] == 0) empty = true;
            else last += (p->shape[d] - 1) * p->strides[d];
        }
        if (empty) continue;
        uintptr_t lo = (uintptr_t)element_at(p, p->offset, false);
        uintptr_t hi = (uintptr_t)element_at(p, last + 1, true);
        uintptr_t start = lo / (uintptr_t)page * (uintptr_t)page;
        /* a hint: failure only means the pages stay resident */
        (void)madvise((void *)start, hi - start, MADV_DONTNEED);
    }
}
