#include "hf/hub.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/status.h"

static bool id_char(char c) { return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.'; }

/* one segment: 1..96 id characters, not starting with '.' or '-', no ".." */
static bool segment(const char *s, size_t n) {
    if (n == 0 || n > 96 || s[0] == '.' || s[0] == '-') return false;
    for (size_t i = 0; i < n; i++)
        if (!id_char(s[i]) || (s[i] == '.' && i + 1 < n && s[i + 1] == '.')) return false;
    return true;
}

bool hfx_hub_is_repo_id(const char *name) {
    const char *slash = strchr(name, '/');
    if (!slash) return segment(name, strlen(name));
    return !strchr(slash + 1, '/') && segment(name, (size_t)(slash - name)) && segment(slash + 1, strlen(slash + 1));
}

static bool is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_commit(const char *s) {
    size_t n = strlen(s);
    if (n != 40) return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return false;
    return true;
}

/* The commit a ref names: the first line of refs/<revision>, a 40-hex hash. */
static bool read_ref(const char *path, char *hash, size_t size) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[128];
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0) return false;
    buf[k] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (!is_commit(buf) || strlen(buf) >= size) return false;
    snprintf(hash, size, "%s", buf);
    return true;
}

hfx_status hfx_hub_resolve(const char *repo_id, const char *revision, char *out, size_t size, hfx_error *err) {
    if (!revision) revision = "main";
    if (!hfx_hub_is_repo_id(repo_id) || strstr(revision, "..") || revision[0] == '/' || !*revision ||
        strlen(revision) > 200)
        return hfx_fail(err, HFX_ERR_INVALID, "'%s' (revision '%s') is neither a directory nor a Hub repo id", repo_id,
                        revision);
    /* huggingface_hub's order of cache roots */
    char roots[4][1024];
    int n_roots = 0;
    const char *e;
    if ((e = getenv("HF_HUB_CACHE")) && *e) snprintf(roots[n_roots++], sizeof roots[0], "%s", e);
    else if ((e = getenv("HF_HOME")) && *e) snprintf(roots[n_roots++], sizeof roots[0], "%s/hub", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e) snprintf(roots[n_roots++], sizeof roots[0], "%s/huggingface/hub", e);
    else if ((e = getenv("HOME")) && *e) snprintf(roots[n_roots++], sizeof roots[0], "%s/.cache/huggingface/hub", e);
    char folder[256];
    snprintf(folder, sizeof folder, "models--%s", repo_id);
    for (char *p = folder; (p = strchr(p, '/'));) { /* org/name → org--name */
        memmove(p + 2, p + 1, strlen(p + 1) + 1);
        p[0] = p[1] = '-';
        p += 2;
    }
    char tried[3400] = "";
    for (int r = 0; r < n_roots; r++) {
        char hash[64], ref[1600], snap[1600];
        bool have = is_commit(revision);
        if (have) snprintf(hash, sizeof hash, "%.40s", revision);
        snprintf(ref, sizeof ref, "%.1000s/%.256s/refs/%.200s", roots[r], folder, revision);
        if (!have) have = read_ref(ref, hash, sizeof hash);
        snprintf(snap, sizeof snap, "%.1000s/%.256s/snapshots/%.40s", roots[r], folder, have ? hash : "<hash>");
        if (have && is_dir(snap)) {
            if (strlen(snap) >= size) return hfx_fail(err, HFX_ERR_INVALID, "%s: path too long", snap);
            snprintf(out, size, "%s", snap);
            return HFX_OK;
        }
        size_t k = strlen(tried);
        snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", have ? snap : ref);
    }
    return hfx_fail(err, HFX_ERR_INVALID,
                    "%s: no such directory, and Hub repo '%s' at revision '%s' is not in the local cache (tried: %s). "
                    "hfx does not download: fetch it first, e.g. `hf download %s%s%s`, or give a checkpoint directory",
                    repo_id, repo_id, revision, n_roots ? tried : "no cache directory: HOME is unset", repo_id,
                    strcmp(revision, "main") ? " --revision " : "", strcmp(revision, "main") ? revision : "");
}
