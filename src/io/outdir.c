#include "io/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/status.h"

enum { MAX_FILES = 64 };

struct hfx_outdir {
    char *dir;                 /* owned */
    bool created;              /* this export made the directory */
    int n;
    char *final[MAX_FILES];    /* owned: final paths */
    char *tmp[MAX_FILES];      /* owned: temporary paths */
    hfx_progress_fn progress;
    void *progress_user;
    uint64_t done, total;
};

static char *join(const char *dir, const char *prefix, const char *name) {
    size_t n = strlen(dir) + strlen(prefix) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, prefix, name);
    return p;
}

hfx_status hfx_outdir_open(const char *dir, hfx_outdir **out, hfx_error *err) {
    hfx_outdir *o = calloc(1, sizeof *o);
    if (!o || !(o->dir = strdup(dir))) {
        free(o);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (mkdir(dir, 0777) != 0) {
            hfx_status st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot create output directory: %s",
                                     dir, strerror(errno));
            free(o->dir);
            free(o);
            return st;
        }
        o->created = true;
    } else if (!S_ISDIR(sb.st_mode)) {
        free(o->dir);
        free(o);
        return hfx_fail(err, HFX_ERR_INVALID, "%s: output path exists and is not a directory", dir);
    }
    *out = o;
    return HFX_OK;
}

static bool plain_name(const char *name) {
    return name[0] && name[0] != '.' && !strchr(name, '/');
}

/* The final and temporary paths of a new output file `name` (both malloc'd). */
static hfx_status new_paths(hfx_outdir *o, const char *name, char **final, char **tmp,
                            hfx_error *err) {
    if (!plain_name(name)) return hfx_fail(err, HFX_ERR_INTERNAL, "bad output file name '%s'", name);
    if (o->n == MAX_FILES) return hfx_fail(err, HFX_ERR_INTERNAL, "too many output files");
    *final = join(o->dir, "", name);
    *tmp = join(o->dir, ".hfx-tmp-", name);
    if (*final && *tmp) return HFX_OK;
    free(*final);
    free(*tmp);
    return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
}

hfx_status hfx_outdir_create(hfx_outdir *o, const char *name, FILE **f, hfx_error *err) {
    char *final = NULL, *tmp = NULL;
    hfx_status st0 = new_paths(o, name, &final, &tmp, err);
    if (st0) return st0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!*f) {
        hfx_status st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot write in the output directory: %s",
                                 tmp, strerror(errno));
        if (fd >= 0) close(fd), unlink(tmp);
        free(final);
        free(tmp);
        return st;
    }
    o->final[o->n] = final;
    o->tmp[o->n++] = tmp;
    return HFX_OK;
}

hfx_status hfx_outdir_close(hfx_outdir *o, FILE *f, const char *name, hfx_error *err) {
    int bad = ferror(f) | fflush(f) | fsync(fileno(f));
    bad |= fclose(f);
    if (bad) return hfx_fail(err, HFX_ERR_IO, "%s/%s: write failed: %s", o->dir, name, strerror(errno));
    return HFX_OK;
}

hfx_status hfx_outdir_write(hfx_outdir *o, const char *name, const void *data, size_t len,
                            hfx_error *err) {
    FILE *f;
    hfx_status st = hfx_outdir_create(o, name, &f, err);
    if (st) return st;
    if (len && fwrite(data, 1, len, f) != len) {
        fclose(f);
        return hfx_fail(err, HFX_ERR_IO, "%s/%s: write failed: %s", o->dir, name, strerror(errno));
    }
    return hfx_outdir_close(o, f, name, err);
}

hfx_status hfx_outdir_copy(hfx_outdir *o, const char *name, const char *src_path, hfx_error *err) {
    FILE *in = fopen(src_path, "rb");
    if (!in) return hfx_fail(err, HFX_ERR_IO, "%s: cannot read: %s", src_path, strerror(errno));
    FILE *f;
    hfx_status st = hfx_outdir_create(o, name, &f, err);
    if (st) {
        fclose(in);
        return st;
    }
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, f) != n) break;
    bool read_failed = ferror(in);
    fclose(in);
    st = hfx_outdir_close(o, f, name, err);
    if (st == HFX_OK && read_failed) st = hfx_fail(err, HFX_ERR_IO, "%s: read failed", src_path);
    return st;
}

hfx_status hfx_outdir_link(hfx_outdir *o, const char *existing, const char *name, hfx_error *err) {
    char *src = NULL;
    char *want = join(o->dir, "", existing);
    for (int i = 0; want && i < o->n; i++)
        if (strcmp(o->final[i], want) == 0) src = o->tmp[i];
    free(want);
    if (!src) return hfx_fail(err, HFX_ERR_INTERNAL, "link: '%s' was not written", existing);
    char *final = NULL, *tmp = NULL;
    hfx_status st = new_paths(o, name, &final, &tmp, err);
    if (st) return st;
    unlink(tmp);
    if (link(src, tmp) == 0) {
        o->final[o->n] = final;
        o->tmp[o->n++] = tmp;
        return HFX_OK;
    }
    free(final);
    free(tmp);
    return hfx_outdir_copy(o, name, src, err);
}

void hfx_outdir_set_progress(hfx_outdir *o, hfx_progress_fn fn, void *user) {
    o->progress = fn;
    o->progress_user = user;
}

void hfx_outdir_progress_total(hfx_outdir *o, uint64_t total) {
    o->total = total;
    o->done = 0;
    if (o->progress) o->progress(o->progress_user, 0, total);
}

void hfx_outdir_progress_add(hfx_outdir *o, uint64_t n) {
    o->done += n;
    if (o->progress) o->progress(o->progress_user, o->done, o->total);
}

static void release(hfx_outdir *o) {
    for (int i = 0; i < o->n; i++) {
        free(o->final[i]);
        free(o->tmp[i]);
    }
    free(o->dir);
    free(o);
}

hfx_status hfx_outdir_commit(hfx_outdir *o, hfx_error *err) {
    for (int i = 0; i < o->n; i++) {
        if (rename(o->tmp[i], o->final[i]) != 0) {
            hfx_status st = hfx_fail(err, HFX_ERR_IO, "%s: cannot rename into place: %s",
                                     o->final[i], strerror(errno));
            /* the files already renamed are complete; remove the rest */
            for (int j = i; j < o->n; j++) unlink(o->tmp[j]);
            release(o);
            return st;
        }
    }
    release(o);
    return HFX_OK;
}

void hfx_outdir_abort(hfx_outdir *o) {
    if (!o) return;
    for (int i = 0; i < o->n; i++) unlink(o->tmp[i]);
    if (o->created) rmdir(o->dir);
    release(o);
}
