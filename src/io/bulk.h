/* Writing a file's bulk bytes (the weights) on a second thread. Copying a chunk into the page
 * cache (write) costs about as much CPU as converting it, so the caller converts the next chunk
 * into one buffer while a writer thread writes the previous one; the writer also starts the
 * disk's writeback as it goes, so the final fsync has little left to wait for. Progress is
 * reported from the caller's thread. Where no thread can be started, writes happen in the
 * caller's thread instead: same bytes, same errors. */
#ifndef HFX_IO_BULK_H
#define HFX_IO_BULK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/outdir.h"
#include "ir/graph.h"

typedef struct hfx_bulk hfx_bulk;

/* Start writing to f at its current position, in buffers of `chunk` bytes. The caller must not
 * touch f until hfx_bulk_close. */
hfx_status hfx_bulk_open(hfx_outdir *out, FILE *f, size_t chunk, hfx_bulk **b, hfx_error *err);

/* Queue a weight's nbytes: read from `src` (converted, transposed) chunk by chunk, releasing its
 * checkpoint pages as each chunk is done, or copied from `bytes` when src is NULL. A failed
 * read is returned; a failed write stops the stream quietly (hfx_bulk_close reports it). */
hfx_status hfx_bulk_stream(hfx_bulk *b, const hfx_init *src, const uint8_t *bytes, uint64_t nbytes,
                           hfx_error *err);

/* Queue zero bytes up to file offset `offset` (alignment padding); nothing when the bytes queued
 * already reach it. */
void hfx_bulk_pad_to(hfx_bulk *b, uint64_t offset);

/* From now on keep the CRC-32 (zip's polynomial, zlib's crc32) of every byte queued, starting
 * from empty; hfx_bulk_crc reads it. */
void hfx_bulk_crc_start(hfx_bulk *b);
uint32_t hfx_bulk_crc(const hfx_bulk *b);

/* The file offset after every byte queued so far. */
uint64_t hfx_bulk_offset(const hfx_bulk *b);

/* How many checkpoint bytes a transposed weight's panel may keep resident (default 24 MiB): the
 * panel's width in source rows, so the length of the runs each output row gets per panel. Tests
 * set it small to reach many panels with tiny weights. */
void hfx_bulk_set_panel_source(hfx_bulk *b, uint64_t bytes);

/* Wait for every queued write and free b. HFX_ERR_IO naming `name` when a write failed. */
hfx_status hfx_bulk_close(hfx_bulk *b, const char *name, hfx_error *err);

#endif
