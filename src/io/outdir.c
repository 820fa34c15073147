/* The output-directory transaction (outdir.h): lock, stage, swap. */
#define _GNU_SOURCE /* renameat2, RENAME_EXCHANGE */
#include "io/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/status.h"

enum { MAX_FILES = 64, MAX_PREVIOUS = 256, MAX_DEPTH = 32, MAX_CREATED = 32 };

static const char STAGE_INSIDE[] = ".hfx-stage-"; /* staging inside the directory */
static const char OLD_TMP[] = ".hfx-tmp-";        /* temporaries of hfx before staging */

struct hfx_outdir {
    char *dir;                     /* the directory, resolved (owned) */
    char *parent, *base;           /* its parent and its name in it (owned) */
    int dir_fd, parent_fd, stage_fd; /* dir_fd holds the lock */
    char stage[NAME_MAX + 1];      /* the staging directory's name (in parent, or in dir) */
    bool inside;                   /* staging inside dir: commit moves files one by one */
    char *created[MAX_CREATED];    /* directories this export created, outermost first (owned) */
    int n_created;
    char *files[MAX_FILES];        /* staged top-level names, in order (owned) */
    bool is_dir[MAX_FILES];        /* files[i] is a folder of staged files ("1_Pooling") */
    int n;
    char *previous[MAX_PREVIOUS];  /* the previous export's files (owned) */
    int n_previous;
    const char *manifest;          /* static string, or NULL */
    const atomic_int *cancel;
    hfx_progress_fn progress;
    void *progress_user;
    uint64_t done, total;
};

static bool plain_name(const char *name) {
    return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/') &&
           strlen(name) <= NAME_MAX;
}

static bool listed(char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

/* A refusal of the system: out of memory (ENOMEM, as fdopen or opendir give it) is
 * HFX_ERR_NOMEM like every other, anything else `st`. */
static hfx_status refused(hfx_error *err, hfx_status st, int e, const char *what, const char *name) {
    if (e == ENOMEM) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    return hfx_fail(err, st, "%s: %s: %s", name, what, strerror(e));
}

static bool cancelled(const hfx_outdir *o) { return o->cancel && atomic_load(o->cancel) != 0; }

hfx_status hfx_outdir_check_cancel(const hfx_outdir *o, hfx_error *err) {
    return cancelled(o) ? hfx_fail(err, HFX_ERR_CANCELLED, "%s: export cancelled", o->dir) : HFX_OK;
}

/* ---- file-tree helpers: never follow a symlink, never leave the tree ---- */

/* Remove `name` under dirfd: a file, a symlink, or a directory with everything in it. */
static int remove_tree(int dirfd, const char *name, int depth) {
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode)) return unlinkat(dirfd, name, 0);
    if (depth > MAX_DEPTH) return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    /* a read-only folder of ours (a kept one, carried with its mode) is emptied only once writable */
    if (fd >= 0 && sb.st_uid == geteuid() && (sb.st_mode & 0300) != 0300) fchmod(fd, (sb.st_mode & 07777) | 0700);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && remove_tree(fd, e->d_name, depth + 1)) rc = -1;
    closedir(d);
    return unlinkat(dirfd, name, AT_REMOVEDIR) || rc ? -1 : 0;
}

/* Copy the regular file `name` from sfd to dfd (where a hard link is refused). */
static int copy_file(int sfd, int dfd, const char *name, mode_t mode) {
    int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int out = in >= 0 ? openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777) : -1;
    char buf[1 << 16];
    ssize_t k = 0;
    while (out >= 0 && (k = read(in, buf, sizeof buf)) > 0)
        for (ssize_t off = 0; off < k;) {
            ssize_t w = write(out, buf + off, (size_t)(k - off));
            if (w <= 0) {
                k = -1;
                break;
            }
            off += w;
        }
    int rc = in < 0 || out < 0 || k < 0 ? -1 : 0;
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0) rc = -1;
    return rc;
}

/* Carry `name` from the directory sfd into dfd: files by hard link, symlinks recreated,
 * directories recreated and filled the same way. Sets *what on failure. */
static int carry(int sfd, int dfd, const char *name, int depth, const char **what) {
    struct stat sb;
    if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
    if (S_ISREG(sb.st_mode)) {
        if (linkat(sfd, name, dfd, name, 0) == 0) return 0;
        return copy_file(sfd, dfd, name, sb.st_mode);
    }
    if (S_ISLNK(sb.st_mode)) {
        char target[PATH_MAX];
        ssize_t k = readlinkat(sfd, name, target, sizeof target - 1);
        if (k < 0) return -1;
        target[k] = 0;
        return symlinkat(target, dfd, name);
    }
    if (!S_ISDIR(sb.st_mode) || depth > MAX_DEPTH) {
        *what = "a special file or a tree too deep to carry over";
        errno = EINVAL;
        return -1;
    }
    /* made writable to be filled, given the folder's own mode once full (a read-only one too) */
    if (mkdirat(dfd, name, 0700) != 0) return -1;
    int s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int d = s >= 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    DIR *dir = d >= 0 ? fdopendir(s) : NULL;
    int rc = dir ? 0 : -1;
    for (struct dirent *e; dir && (e = readdir(dir)) && !rc;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) rc = carry(s, d, e->d_name, depth + 1, what);
    if (!rc && fchmod(d, sb.st_mode & 07777) != 0) rc = -1;
    if (dir) closedir(dir);
    else if (s >= 0) close(s);
    if (d >= 0) close(d);
    return rc;
}

/* ---- open: resolve, create, lock, clean, stage ---- */

/* mkdir -p: the missing directories of `path`, each recorded so an abort can remove it. */
static hfx_status make_dirs(hfx_outdir *o, const char *path, hfx_error *err) {
    char *p = strdup(path);
    if (!p) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    hfx_status st = HFX_OK;
    for (char *s = p + 1; !st; s++) {
        bool end = *s == 0;
        if (*s != '/' && !end) continue;
        *s = 0;
        struct stat sb;
        if (stat(p, &sb) == 0) {
            if (!S_ISDIR(sb.st_mode))
                st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot create output directory: %s is not a directory", path, p);
        } else if (mkdir(p, 0777) == 0) {
            if (o->n_created < MAX_CREATED && !(o->created[o->n_created] = strdup(p))) {
                rmdir(p); /* unrecorded, an abort could not remove it */
                st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
            } else if (o->n_created < MAX_CREATED) {
                o->n_created++;
            }
        } else if (errno != EEXIST) { /* EEXIST: another process made it meanwhile */
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot create output directory: %s", p, strerror(errno));
        }
        if (end) break;
        *s = '/';
    }
    free(p);
    return st;
}

/* Lock the directory: flock on it, re-checked against the path (a committed swap replaces the
 * directory, and a waiter must lock the new one). Polls, so that a cancel ends the wait. */
static hfx_status lock_dir(hfx_outdir *o, hfx_error *err) {
    for (int tries = 0;; tries++) {
        int fd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return hfx_fail(err, HFX_ERR_INVALID, "%s: cannot open output directory: %s", o->dir, strerror(errno));
        while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                close(fd);
                return hfx_fail(err, HFX_ERR_IO, "%s: cannot lock the output directory: %s", o->dir, strerror(errno));
            }
            if (cancelled(o)) {
                close(fd);
                return hfx_outdir_check_cancel(o, err);
            }
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* another export is writing */
        }
        struct stat held, now;
        if (fstat(fd, &held) == 0 && stat(o->dir, &now) == 0 && held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
            o->dir_fd = fd;
            return HFX_OK;
        }
        close(fd);
        if (tries > 1000) return hfx_fail(err, HFX_ERR_IO, "%s: the output directory keeps being replaced", o->dir);
    }
}

/* Remove staging that a killed export left (we hold the lock: no live export owns any). */
static void remove_stale(hfx_outdir *o) {
    char sibling[NAME_MAX + 2];
    snprintf(sibling, sizeof sibling, ".%.200s.hfx-stage-", o->base); /* as make_stage names them */
    int fds[2] = {o->parent_fd, o->dir_fd};
    const char *prefixes[2][2] = {{sibling, NULL}, {STAGE_INSIDE, OLD_TMP}};
    for (int k = 0; k < 2; k++) {
        int fd = fds[k] >= 0 ? dup(fds[k]) : -1;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            if (fd >= 0) close(fd);
            continue;
        }
        rewinddir(d); /* a dup shares the position of every earlier listing */
        for (struct dirent *e; (e = readdir(d));)
            for (int p = 0; p < 2; p++)
                if (prefixes[k][p] && strncmp(e->d_name, prefixes[k][p], strlen(prefixes[k][p])) == 0)
                    remove_tree(fds[k], e->d_name, 0);
        closedir(d);
    }
}

/* A new staging directory, exclusively created under a random name in `fd`. */
static int make_stage(hfx_outdir *o, int fd, const char *prefix) {
    for (int tries = 0; tries < 16; tries++) {
        uint64_t r[2] = {0, 0};
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) r[0] = (uint64_t)getpid() * 0x9e3779b97f4a7c15u ^ (uint64_t)time(NULL), r[1] = (uint64_t)tries;
        snprintf(o->stage, sizeof o->stage, "%s%016llx%016llx", prefix, (unsigned long long)r[0], (unsigned long long)r[1]);
        if (mkdirat(fd, o->stage, 0777) == 0) {
            o->stage_fd = openat(fd, o->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (o->stage_fd >= 0) return 0;
            unlinkat(fd, o->stage, AT_REMOVEDIR);
            o->stage[0] = 0;
            return -1;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

/* The staging directory has the output directory's owner and group. */
static bool same_owner(const hfx_outdir *o) {
    struct stat s, d;
    return fstat(o->stage_fd, &s) == 0 && fstat(o->dir_fd, &d) == 0 && s.st_uid == d.st_uid && s.st_gid == d.st_gid;
}

static void release(hfx_outdir *o) {
    if (o->stage_fd >= 0) close(o->stage_fd);
    if (o->parent_fd >= 0) close(o->parent_fd);
    if (o->dir_fd >= 0) close(o->dir_fd); /* unlocks */
    for (int i = 0; i < o->n; i++) free(o->files[i]);
    for (int i = 0; i < o->n_previous; i++) free(o->previous[i]);
    for (int i = 0; i < o->n_created; i++) free(o->created[i]);
    free(o->dir);
    free(o->parent);
    free(o->base);
    free(o);
}

/* The directories this export created, innermost first, when still empty. */
static void remove_created(hfx_outdir *o) {
    for (int i = o->n_created - 1; i >= 0; i--) rmdir(o->created[i]);
}

hfx_status hfx_outdir_open(const char *dir, const atomic_int *cancel, hfx_outdir **out, hfx_error *err) {
    *out = NULL;
    hfx_outdir *o = calloc(1, sizeof *o);
    if (!o) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    o->dir_fd = o->parent_fd = o->stage_fd = -1;
    o->cancel = cancel;
    hfx_status st = HFX_OK;
    struct stat sb;
    if (!*dir) st = hfx_fail(err, HFX_ERR_INVALID, "the output directory name is empty");
    else if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: output path exists and is not a directory", dir);
    if (!st) st = make_dirs(o, dir, err);
    /* the directory's real path: its parent is where the swap happens, even through a symlink */
    char real[PATH_MAX];
    if (!st && !realpath(dir, real)) st = hfx_fail(err, HFX_ERR_INVALID, "%s: %s", dir, strerror(errno));
    if (!st) {
        char *slash = strrchr(real, '/');
        o->dir = strdup(real);
        o->base = strdup(slash[1] ? slash + 1 : "/");
        o->parent = slash == real ? strdup("/") : strndup(real, (size_t)(slash - real));
        if (!o->dir || !o->base || !o->parent) st = hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
    if (!st) st = lock_dir(o, err);
    if (!st) {
        /* the swap needs a writable parent on the same file system (not a mount point) */
        struct stat ps, ds;
        o->parent_fd = strcmp(o->dir, "/") ? open(o->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        bool same_fs = o->parent_fd >= 0 && fstat(o->parent_fd, &ps) == 0 && fstat(o->dir_fd, &ds) == 0 &&
                       ps.st_dev == ds.st_dev;
        remove_stale(o);
        char prefix[NAME_MAX + 2];
        snprintf(prefix, sizeof prefix, ".%.200s.hfx-stage-", o->base);
        /* the user may write beside a directory that is not theirs to replace: refuse before
         * anything is staged (root passes: it may write anywhere) */
        if (faccessat(o->dir_fd, ".", W_OK | X_OK, AT_EACCESS) != 0)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot write in the output directory: %s", o->dir, strerror(errno));
        o->inside = !same_fs || st || make_stage(o, o->parent_fd, prefix) != 0;
        /* the swap makes the staging directory the output directory: only when it can carry the
         * directory's owner and group (else another user's directory would become ours) */
        if (!o->inside && !same_owner(o) && fchown(o->stage_fd, ds.st_uid, ds.st_gid) != 0) {
            unlinkat(o->parent_fd, o->stage, AT_REMOVEDIR);
            close(o->stage_fd);
            o->stage_fd = -1;
            o->stage[0] = 0;
            o->inside = true;
        }
        if (!st && o->inside && make_stage(o, o->dir_fd, STAGE_INSIDE) != 0)
            st = hfx_fail(err, HFX_ERR_INVALID, "%s: cannot write in the output directory: %s", o->dir, strerror(errno));
    }
    if (st) {
        remove_created(o);
        release(o);
        return st;
    }
    *out = o;
    return HFX_OK;
}

/* ---- staging ---- */

hfx_status hfx_outdir_read_existing(hfx_outdir *o, const char *name, size_t max, char **text, hfx_error *err) {
    *text = NULL;
    int fd = plain_name(name) ? openat(o->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > max) {
        if (fd >= 0) close(fd);
        return HFX_OK; /* none, or not one hfx wrote */
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    ssize_t k = buf ? read(fd, buf, (size_t)sb.st_size) : -1;
    close(fd);
    if (!buf) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (k < 0) {
        free(buf);
        return HFX_OK;
    }
    buf[k] = 0;
    *text = buf;
    return HFX_OK;
}

hfx_status hfx_outdir_set_previous(hfx_outdir *o, const char *const *names, int n, hfx_error *err) {
    for (int i = 0; i < n; i++) {
        if (!names[i] || !plain_name(names[i]) || listed(o->previous, o->n_previous, names[i])) continue;
        if (o->n_previous == MAX_PREVIOUS) break;
        if (!(o->previous[o->n_previous] = strdup(names[i]))) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        o->n_previous++;
    }
    return HFX_OK;
}

void hfx_outdir_set_manifest(hfx_outdir *o, const char *name) { o->manifest = name; }

const char *hfx_outdir_file(const hfx_outdir *o, int i) { return i >= 0 && i < o->n ? o->files[i] : NULL; }

static int index_of(char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

/* Record a new staged name (refusing odd names and repeats): a plain file name, or "folder/file"
 * (one level), whose folder is staged once and becomes the unit the commit moves. On success
 * *dir_fd is where to create the file (the staging directory or the folder in it; close it when
 * it is not o->stage_fd) and *leaf its name there. */
static hfx_status add_name(hfx_outdir *o, const char *name, int *dir_fd, const char **leaf, hfx_error *err) {
    const char *slash = strchr(name, '/');
    char top[NAME_MAX + 1];
    size_t k = slash ? (size_t)(slash - name) : strlen(name);
    if (k > NAME_MAX) return hfx_fail(err, HFX_ERR_INTERNAL, "bad output file name '%s'", name);
    memcpy(top, name, k);
    top[k] = 0;
    *leaf = slash ? slash + 1 : name;
    if (!plain_name(top) || top[0] == '.' || !plain_name(*leaf) || (*leaf)[0] == '.')
        return hfx_fail(err, HFX_ERR_INTERNAL, "bad output file name '%s'", name);
    int i = index_of(o->files, o->n, top);
    if (i >= 0 && (!slash || !o->is_dir[i])) /* a repeated file, or a file and a folder of one name */
        return hfx_fail(err, HFX_ERR_INTERNAL, "output file '%s' written twice", name);
    if (i < 0) {
        if (o->n == MAX_FILES) return hfx_fail(err, HFX_ERR_INTERNAL, "too many output files");
        if (slash && mkdirat(o->stage_fd, top, 0777) != 0) return refused(err, HFX_ERR_IO, errno, "cannot create", top);
        if (!(o->files[o->n] = strdup(top))) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        o->is_dir[o->n++] = slash != NULL;
    }
    *dir_fd = o->stage_fd;
    if (slash && (*dir_fd = openat(o->stage_fd, top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return refused(err, HFX_ERR_IO, errno, "cannot open", top);
    return HFX_OK;
}

hfx_status hfx_outdir_create(hfx_outdir *o, const char *name, FILE **f, hfx_error *err) {
    *f = NULL;
    hfx_status st = hfx_outdir_check_cancel(o, err);
    int at = -1;
    const char *leaf = name;
    if (!st) st = add_name(o, name, &at, &leaf, err);
    if (st) return st;
    int fd = openat(at, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int e = errno;
    if (at != o->stage_fd) close(at);
    *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!*f) {
        if (fd >= 0) e = errno;
        if (fd >= 0) close(fd);
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", o->dir, name);
        return refused(err, HFX_ERR_IO, e, "cannot create", path);
    }
    return HFX_OK;
}

hfx_status hfx_outdir_scratch(hfx_outdir *o, FILE **f, hfx_error *err) {
    *f = NULL;
    hfx_status st = hfx_outdir_check_cancel(o, err);
    if (st) return st;
    int fd = openat(o->stage_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) { /* no O_TMPFILE here */
        char name[64];
        for (int tries = 0; fd < 0 && tries < 16; tries++) {
            uint32_t r = 0;
            if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint32_t)tries * 2654435761u;
            snprintf(name, sizeof name, ".hfx-scratch-%08x", r);
            fd = openat(o->stage_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd >= 0) unlinkat(o->stage_fd, name, 0); /* open until closed, never listed */
    }
    *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!*f) {
        int e = errno;
        if (fd >= 0) close(fd);
        return refused(err, HFX_ERR_IO, e, "cannot create a scratch file", o->dir);
    }
    return HFX_OK;
}

hfx_status hfx_outdir_close(hfx_outdir *o, FILE *f, const char *name, hfx_error *err) {
    /* the first failure's errno: a later call would overwrite it */
    int e = 0;
    if (ferror(f)) e = errno ? errno : EIO;
    if (fflush(f) != 0 && !e) e = errno;
    if (fsync(fileno(f)) != 0 && !e) e = errno;
    if (fclose(f) != 0 && !e) e = errno;
    if (!e || !err) return HFX_OK;
    return hfx_fail(err, HFX_ERR_IO, "%s/%s: write failed: %s", o->dir, name, strerror(e));
}

hfx_status hfx_outdir_write(hfx_outdir *o, const char *name, const void *data, size_t len, hfx_error *err) {
    FILE *f;
    hfx_status st = hfx_outdir_create(o, name, &f, err);
    if (st) return st;
    if (len && fwrite(data, 1, len, f) != len) {
        int e = errno ? errno : EIO;
        hfx_outdir_close(o, f, name, NULL);
        return hfx_fail(err, HFX_ERR_IO, "%s/%s: write failed: %s", o->dir, name, strerror(e));
    }
    return hfx_outdir_close(o, f, name, err);
}

hfx_status hfx_outdir_copy(hfx_outdir *o, const char *name, const char *src_path, hfx_error *err) {
    int fd = open(src_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0) close(fd);
        return hfx_fail(err, HFX_ERR_INVALID, "%s: cannot read: %s", src_path, e == EINVAL ? "not a regular file" : strerror(e));
    }
    FILE *in = fdopen(fd, "rb");
    if (!in) {
        int e = errno;
        close(fd);
        return refused(err, HFX_ERR_IO, e, "cannot read", src_path);
    }
    FILE *f;
    hfx_status st = hfx_outdir_create(o, name, &f, err);
    if (st) {
        fclose(in);
        return st;
    }
    char buf[1 << 16];
    size_t n;
    int e = 0;
    while (!e && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, f) != n) e = errno ? errno : EIO;
    bool read_failed = ferror(in);
    fclose(in);
    if (e) {
        hfx_outdir_close(o, f, name, NULL);
        return hfx_fail(err, HFX_ERR_IO, "%s/%s: write failed: %s", o->dir, name, strerror(e));
    }
    st = hfx_outdir_close(o, f, name, err);
    if (st == HFX_OK && read_failed) st = hfx_fail(err, HFX_ERR_IO, "%s: read failed", src_path);
    return st;
}

hfx_status hfx_outdir_link(hfx_outdir *o, const char *existing, const char *name, hfx_error *err) {
    int i = index_of(o->files, o->n, existing);
    if (i < 0 || o->is_dir[i]) return hfx_fail(err, HFX_ERR_INTERNAL, "link: '%s' was not written", existing);
    if (strchr(name, '/')) return hfx_fail(err, HFX_ERR_INTERNAL, "link: '%s' is not a plain file name", name);
    int at;
    const char *leaf;
    hfx_status st = add_name(o, name, &at, &leaf, err);
    if (st) return st;
    if (linkat(o->stage_fd, existing, o->stage_fd, name, 0) == 0) return HFX_OK;
    free(o->files[--o->n]); /* copy instead: copy() records the name again */
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/%s/%s", o->inside ? o->dir : o->parent, o->stage, existing);
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

/* ---- commit ---- */

/* Which entries of the directory stay: not hfx's staging, not the previous export's, not a
 * name the new export writes. */
static bool keeps(const hfx_outdir *o, const char *name) {
    return strcmp(name, ".") && strcmp(name, "..") && strncmp(name, STAGE_INSIDE, strlen(STAGE_INSIDE)) &&
           strncmp(name, OLD_TMP, strlen(OLD_TMP)) && !listed(o->previous, o->n_previous, name) &&
           !listed(o->files, o->n, name);
}

/* A file the new export writes must not replace a directory or anything but a file or link; a
 * folder it writes replaces only a folder. */
static hfx_status check_conflicts(hfx_outdir *o, hfx_error *err) {
    /* in a sticky directory not ours, another user's entry cannot be replaced or removed: found
     * now, before anything moves, rather than half-way through (root may replace anything) */
    struct stat ds;
    bool guarded = fstat(o->dir_fd, &ds) == 0 && (ds.st_mode & S_ISVTX) && ds.st_uid != geteuid() && geteuid() != 0;
    for (int k = 0; guarded && k < o->n + o->n_previous; k++) {
        const char *name = k < o->n ? o->files[k] : o->previous[k - o->n];
        struct stat sb;
        if (fstatat(o->dir_fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_uid != geteuid())
            return hfx_fail(err, HFX_ERR_INVALID, "%s/%s: belongs to another user in a sticky directory; the export cannot replace it",
                            o->dir, name);
    }
    for (int i = 0; i < o->n; i++) {
        struct stat sb;
        if (fstatat(o->dir_fd, o->files[i], &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (o->is_dir[i] && !S_ISDIR(sb.st_mode))
            return hfx_fail(err, HFX_ERR_INVALID, "%s/%s: exists and is not a folder; the export writes a folder of that name",
                            o->dir, o->files[i]);
        if (!o->is_dir[i] && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
            return hfx_fail(err, HFX_ERR_INVALID, "%s/%s: exists and is not a file; the export writes a file of that name",
                            o->dir, o->files[i]);
    }
    return HFX_OK;
}

/* Hard-link what the user keeps in the directory into the staging directory. */
static hfx_status carry_user_files(hfx_outdir *o, hfx_error *err) {
    int fd = dup(o->dir_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        return refused(err, HFX_ERR_IO, e, "cannot list", o->dir);
    }
    rewinddir(d); /* a dup shares the position of every earlier listing */
    hfx_status st = HFX_OK;
    for (struct dirent *e; !st && (e = readdir(d));) {
        const char *what = NULL;
        if (keeps(o, e->d_name) && carry(o->dir_fd, o->stage_fd, e->d_name, 0, &what) != 0)
            st = hfx_fail(err, HFX_ERR_IO, "%s/%s: cannot keep it across the export: %s", o->dir, e->d_name,
                          what ? what : strerror(errno));
    }
    closedir(d);
    return st;
}

/* The fallback: each staged file renamed into the directory, the manifest last, then the
 * previous export's files the new one did not write removed. */
static hfx_status move_in(hfx_outdir *o, hfx_error *err) {
    int from = o->inside ? o->dir_fd : o->parent_fd;
    int sfd = o->stage_fd;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < o->n; i++) {
            bool is_manifest = o->manifest && strcmp(o->files[i], o->manifest) == 0;
            if (is_manifest != (pass == 1)) continue;
            /* a folder replaces the previous one whole (rename takes only an empty one's place) */
            if (o->is_dir[i] && remove_tree(o->dir_fd, o->files[i], 0) != 0)
                return hfx_fail(err, HFX_ERR_IO, "%s/%s: cannot replace: %s", o->dir, o->files[i], strerror(errno));
            if (renameat(sfd, o->files[i], o->dir_fd, o->files[i]) != 0)
                return hfx_fail(err, HFX_ERR_IO, "%s/%s: cannot move into place: %s", o->dir, o->files[i], strerror(errno));
        }
    for (int i = 0; i < o->n_previous; i++)
        if (!listed(o->files, o->n, o->previous[i])) remove_tree(o->dir_fd, o->previous[i], 0);
    remove_tree(from, o->stage, 0);
    return HFX_OK;
}

hfx_status hfx_outdir_commit(hfx_outdir *o, hfx_error *err) {
    hfx_status st = hfx_outdir_check_cancel(o, err);
    if (!st) st = check_conflicts(o, err);
    if (!st && !o->inside) {
        st = carry_user_files(o, err);
        struct stat sb;
        if (!st && fstat(o->dir_fd, &sb) == 0) fchmod(o->stage_fd, sb.st_mode & 07777);
        if (!st && fsync(o->stage_fd) == 0 &&
            renameat2(o->parent_fd, o->stage, o->parent_fd, o->base, RENAME_EXCHANGE) == 0) {
            /* the previous content now sits under the staging name */
            remove_tree(o->parent_fd, o->stage, 0);
            fsync(o->parent_fd);
            release(o);
            return HFX_OK;
        }
        if (!st) { /* no RENAME_EXCHANGE here: move in one by one; drop the carried copies first */
            int fd = dup(o->stage_fd);
            DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
            if (d) rewinddir(d);
            for (struct dirent *e; d && (e = readdir(d));)
                if (keeps(o, e->d_name)) remove_tree(o->stage_fd, e->d_name, 0);
            if (d) closedir(d);
            else if (fd >= 0) close(fd);
        }
    }
    if (!st) st = move_in(o, err);
    if (!st) {
        fsync(o->dir_fd);
        release(o);
        return HFX_OK;
    }
    hfx_outdir_abort(o);
    return st;
}

void hfx_outdir_abort(hfx_outdir *o) {
    if (!o) return;
    if (o->stage[0]) remove_tree(o->inside ? o->dir_fd : o->parent_fd, o->stage, 0);
    if (o->dir_fd >= 0) close(o->dir_fd), o->dir_fd = -1;
    remove_created(o);
    release(o);
}
