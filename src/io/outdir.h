/* An output directory written as one transaction.
 *
 * hfx_outdir_open locks the directory (creating it, and missing parents, when needed): a second
 * export into the same directory waits until the first has committed or aborted. Files are
 * written into a private staging directory (a random name, created exclusively; every file in it
 * is created O_EXCL|O_NOFOLLOW, so nothing planted in the output directory can redirect a
 * write). hfx_outdir_commit then swaps the staging directory for the output directory in one
 * rename (RENAME_EXCHANGE): a reader sees the previous export whole or the new one whole, never a
 * mix. The files the user keeps in the directory are carried over (hard links); the previous
 * export's files (hfx_outdir_set_previous) that the new one does not write are gone with it.
 *
 * Where the swap is impossible or not the user's to make — the parent is not writable, the
 * directory is a mount point, the file system has no RENAME_EXCHANGE, or the directory's owner
 * or group is not one the staging directory can take (another user's directory stays theirs) —
 * the staging directory lives inside the output directory and commit moves the files in one by
 * one, the manifest last, then removes the previous export's leftovers; a reader that goes
 * through the manifest still sees one export. Before anything moves, commit refuses what it
 * could not finish: another user's file in a sticky directory.
 *
 * A directory the user cannot write is refused at open, before anything is staged (even where
 * its writable parent would let the swap replace it).
 *
 * hfx_outdir_abort removes the staging directory (and the directory and parents this export
 * created, when empty). Staging left by a killed export is removed by the next one. */
#ifndef HFX_IO_OUTDIR_H
#define HFX_IO_OUTDIR_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "hfx/hfx.h"

typedef struct hfx_outdir hfx_outdir;

/* Lock `dir` (created with its missing parents when absent) and open a staging directory.
 * `cancel`, when not NULL, is polled while waiting for the lock and by long writes: once it is
 * non-zero they stop with HFX_ERR_CANCELLED. */
hfx_status hfx_outdir_open(const char *dir, const atomic_int *cancel, hfx_outdir **out, hfx_error *err);

/* The previous export's manifest `name` in the directory, read whole (at most `max` bytes) into
 * a malloc'd NUL-terminated buffer the caller frees; *text = NULL when there is none. */
hfx_status hfx_outdir_read_existing(hfx_outdir *o, const char *name, size_t max, char **text,
                                    hfx_error *err);

/* The files of the directory that the previous export wrote: replaced or removed at commit,
 * never carried over. Names that are not plain file names are ignored. */
hfx_status hfx_outdir_set_previous(hfx_outdir *o, const char *const *names, int n, hfx_error *err);

/* The file that makes an export whole ("export.json"): written last when files must be moved
 * in one by one. */
void hfx_outdir_set_manifest(hfx_outdir *o, const char *name);

/* Open a new staged file for final name `name`: a plain file name, or "folder/file" one level
 * down (sentence-transformers' "1_Pooling/config.json"); the folder is then one of the export's
 * names, replaced whole at commit. */
hfx_status hfx_outdir_create(hfx_outdir *o, const char *name, FILE **f, hfx_error *err);

/* An anonymous read-write file in the staging directory (same disk as the export, never part
 * of it): for bytes written once and copied into a file of the export. Close it with fclose. */
hfx_status hfx_outdir_scratch(hfx_outdir *o, FILE **f, hfx_error *err);

/* Close a file from hfx_outdir_create, reporting write errors (disk full) with its name. With
 * `err` NULL the file is closed and any error ignored (an earlier one is being reported). */
hfx_status hfx_outdir_close(hfx_outdir *o, FILE *f, const char *name, hfx_error *err);

/* Write a whole file. */
hfx_status hfx_outdir_write(hfx_outdir *o, const char *name, const void *data, size_t len,
                            hfx_error *err);

/* Copy `src_path` to `name` (streamed). */
hfx_status hfx_outdir_copy(hfx_outdir *o, const char *name, const char *src_path, hfx_error *err);

/* Give the already written file `existing` a second name `name` (a hard link; a copy where the
 * file system has none). */
hfx_status hfx_outdir_link(hfx_outdir *o, const char *existing, const char *name, hfx_error *err);

/* The i-th file written so far (staging order); NULL past the end. */
const char *hfx_outdir_file(const hfx_outdir *o, int i);

/* HFX_ERR_CANCELLED (with a message) once the export was cancelled, else HFX_OK. */
hfx_status hfx_outdir_check_cancel(const hfx_outdir *o, hfx_error *err);

/* Progress of the bulk bytes: total expected (set once), then each chunk written. */
void hfx_outdir_progress_total(hfx_outdir *o, uint64_t total);
void hfx_outdir_progress_add(hfx_outdir *o, uint64_t n);
void hfx_outdir_set_progress(hfx_outdir *o, hfx_progress_fn fn, void *user);

/* Make the staged export the directory's content (see above), unlock, and free `o`. On failure
 * the directory is as it was before the export. */
hfx_status hfx_outdir_commit(hfx_outdir *o, hfx_error *err);

/* Remove the staged files (and what this export created), unlock, and free `o`. */
void hfx_outdir_abort(hfx_outdir *o);

#endif
