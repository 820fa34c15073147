/* An output directory written as one transaction: files are created under temporary names
 * (".hfx-tmp-<name>") and only renamed to their real names by hfx_outdir_commit, so a failed
 * export leaves nothing behind (hfx_outdir_abort removes the temporaries, and the directory too
 * when this export created it). */
#ifndef HFX_IO_OUTDIR_H
#define HFX_IO_OUTDIR_H

#include <stdint.h>
#include <stdio.h>

#include "hfx/hfx.h"

typedef struct hfx_outdir hfx_outdir;

/* Create `dir` when missing (parents must exist) and check it is writable. */
hfx_status hfx_outdir_open(const char *dir, hfx_outdir **out, hfx_error *err);

/* Open a new temporary file for final name `name` (a plain file name). */
hfx_status hfx_outdir_create(hfx_outdir *o, const char *name, FILE **f, hfx_error *err);

/* Close a file from hfx_outdir_create, reporting write errors (disk full) with its name. */
hfx_status hfx_outdir_close(hfx_outdir *o, FILE *f, const char *name, hfx_error *err);

/* Write a whole file. */
hfx_status hfx_outdir_write(hfx_outdir *o, const char *name, const void *data, size_t len,
                            hfx_error *err);

/* Copy `src_path` to `name` (streamed). */
hfx_status hfx_outdir_copy(hfx_outdir *o, const char *name, const char *src_path, hfx_error *err);

/* Give the already written file `existing` a second name `name` (a hard link; a copy where the
 * file system has none). */
hfx_status hfx_outdir_link(hfx_outdir *o, const char *existing, const char *name, hfx_error *err);

/* Progress of the bulk bytes: total expected (set once), then each chunk written. */
void hfx_outdir_progress_total(hfx_outdir *o, uint64_t total);
void hfx_outdir_progress_add(hfx_outdir *o, uint64_t n);
void hfx_outdir_set_progress(hfx_outdir *o, hfx_progress_fn fn, void *user);

/* Rename every temporary to its final name (fsync'd first), then free `o`. */
hfx_status hfx_outdir_commit(hfx_outdir *o, hfx_error *err);

/* Remove every temporary (and the directory if this export created it), then free `o`. */
void hfx_outdir_abort(hfx_outdir *o);

#endif
