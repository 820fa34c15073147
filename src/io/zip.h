/* A zip archive written front to back through the bulk writer, in the layout PyTorch's archives
 * (.pt2, torch.save) use: stored entries (no compression), each entry's data aligned to 64 bytes
 * by padding in an extra field, sizes and CRC-32 in a data descriptor after the data (so weights
 * stream without seeking back), a central directory with zip64 records. Big archives are
 * zip64 throughout; one entry must stay under 4 GiB. */
#ifndef HFX_IO_ZIP_H
#define HFX_IO_ZIP_H

#include <stdint.h>
#include <stdio.h>

#include "io/bulk.h"
#include "io/outdir.h"

typedef struct hfx_zip hfx_zip;

/* Start an archive in f (created by hfx_outdir_create), writing through a bulk writer of
 * `chunk` bytes. */
hfx_status hfx_zip_open(hfx_outdir *out, FILE *f, size_t chunk, hfx_zip **z, hfx_error *err);

/* Begin the entry `name` (a relative path, '/'-separated): its header, padded so its data starts
 * at a multiple of 64. */
hfx_status hfx_zip_begin(hfx_zip *z, const char *name, hfx_error *err);

/* The bulk writer the current entry's data goes through (hfx_bulk_stream, hfx_bulk_pad_to). */
hfx_bulk *hfx_zip_bulk(hfx_zip *z);

/* End the current entry: its data descriptor. An entry of 4 GiB or more is refused. */
hfx_status hfx_zip_end(hfx_zip *z, hfx_error *err);

/* An entry of `n` bytes from memory: begin, data, end. */
hfx_status hfx_zip_add(hfx_zip *z, const char *name, const void *data, size_t n, hfx_error *err);

/* Write the central directory and the end records, wait for every write, free z. After a failed
 * call, pass the failure's status as `failed`: z is freed and nothing more is written. `name`
 * names the file in messages. */
hfx_status hfx_zip_close(hfx_zip *z, hfx_status failed, const char *name, hfx_error *err);

#endif
