#include "hf/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/status.h"
#include "hf/gguf_model.h"
#include "hf/prequant.h"

/* One weights file, mapped read-only for the checkpoint's lifetime. */
typedef struct mapped_file {
    const char *name;     /* plain file name, e.g. "model-00001-of-00002.safetensors" (arena) */
    const char *path;     /* dir/name, as in messages and hfx_tensor_info.file (arena) */
    uint8_t *map;         /* owned mapping of len bytes; NULL when not mapped (empty file) */
    size_t len;
    hfx_mapping mapping;  /* its descriptor (owned, kept open) and size: reads check it first */
    hfx_safetensors st;   /* its tensors point into map */
} mapped_file;

struct hfx_checkpoint {
    hfx_arena *arena;          /* owned: every name, path and tensor array below */
    const char *dir;           /* as given to open (arena) */
    const char *prefix;        /* dir without trailing '/', joined with file names (arena) */
    json_t *config;            /* owned: config.json, an object */
    const char *config_path;   /* "<dir>/config.json" (arena), for messages */
    json_t *generation;        /* owned: generation_config.json, NULL when absent */
    const char *config_text, *generation_text; /* a checkpoint in memory: the JSON texts (arena) */
    size_t n_files;
    mapped_file *files;        /* arena, n_files; sorted by name when sharded */
    size_t n_tensors;
    hfx_tensor_info *tensors;  /* arena, n_tensors, sorted by name (strcmp) */
    mapped_file *modules[8];   /* sentence-transformers modules' weight files (hfx_checkpoint_add_module) and a LoRA
                                  adapter's (hfx_checkpoint_add_lora), arena */
    size_t n_modules;
    double lora_scale;         /* the LoRA adapter's lora_alpha / r (√r: use_rslora); 0: none */
    bool gguf;                 /* read from a GGUF file: config.json from its metadata, no side files */
    const char *made[2];       /* a GGUF file's tokenizer.json and tokenizer_config.json texts (arena), or NULL */
    const char *quant_method;  /* the quantization_config whose weights are read dequantized (hf/prequant.h), or NULL */
};

static const char *const MADE_NAMES[2] = {"tokenizer.json", "tokenizer_config.json"};

static const char INDEX_NAME[] = "model.safetensors.index.json";
enum { MAX_JSON = 256 << 20 }; /* config.json, generation_config.json, the shard index */

static hfx_status nomem(hfx_error *err) {
    return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
}

/* dir/name in the arena; NULL when out of memory. */
static const char *join(hfx_checkpoint *ck, const char *name) {
    return hfx_arena_printf(ck->arena, "%s/%s", ck->prefix, name);
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Open `path` as a regular file; a missing file, a symlink loop or anything but a regular file is
 * HFX_ERR_INVALID (a broken checkpoint), any other refusal HFX_ERR_IO. O_NONBLOCK: a FIFO in its
 * place must not hang the open (it is refused right after). */
static hfx_status open_regular(const char *path, int *fd, struct stat *sb, hfx_error *err) {
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0) {
        int e = errno;
        return hfx_fail(err, e == ENOENT || e == ELOOP || e == ENOTDIR ? HFX_ERR_INVALID : HFX_ERR_IO, "%s: %s", path,
                        e == ENOENT ? "not found" : strerror(e));
    }
    hfx_status st = HFX_OK;
    if (fstat(*fd, sb) != 0)
        st = hfx_fail(err, HFX_ERR_IO, "%s: fstat: %s", path, strerror(errno));
    else if (!S_ISREG(sb->st_mode))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: not a regular file", path);
    if (st) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

/* The whole of the regular file at `path` (at most MAX_JSON bytes), NUL-terminated, owned by the
 * caller; *len without the NUL. */
static hfx_status read_text(const char *path, char **out, size_t *len, hfx_error *err) {
    *out = NULL;
    int fd;
    struct stat sb;
    hfx_status st = open_regular(path, &fd, &sb, err);
    if (st) return st;
    /* read whole, then parse (jansson's json_loadfd reads one byte per read()) */
    if ((uintmax_t)sb.st_size > MAX_JSON) {
        close(fd);
        return hfx_fail(err, HFX_ERR_INVALID, "%s: %jd bytes; a JSON config over %d MiB is refused", path,
                        (intmax_t)sb.st_size, MAX_JSON >> 20);
    }
    size_t size = (size_t)sb.st_size, n = 0;
    char *text = malloc(size + 1);
    int read_errno = 0;
    while (text && n < size) {
        ssize_t k = read(fd, text + n, size - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) read_errno = errno;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fd);
    if (!text) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (read_errno) {
        free(text);
        return hfx_fail(err, HFX_ERR_IO, "%s: read failed: %s", path, strerror(read_errno));
    }
    text[n] = 0;
    *out = text;
    *len = n;
    return HFX_OK;
}

/* Parse the JSON object at `path` into *out; a missing optional file leaves *out NULL. */
static hfx_status load_json(const char *path, int required, size_t flags, json_t **out, hfx_error *err) {
    *out = NULL;
    if (!required && !exists(path)) return HFX_OK;
    char *text;
    size_t n;
    hfx_status st = read_text(path, &text, &n, err);
    if (st) return st;
    json_error_t je;
    *out = json_loadb(text, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | flags, &je);
    free(text);
    if (!*out && json_error_code(&je) == json_error_out_of_memory) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    if (!*out)
        return hfx_fail(err, HFX_ERR_INVALID, "%s: malformed JSON at line %d, column %d: %s",
                        path, je.line, je.column, je.text);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return hfx_fail(err, HFX_ERR_INVALID, "%s: not a JSON object", path);
    }
    return HFX_OK;
}

/* Map f->path read-only (f->map stays NULL for an empty file). */
static hfx_status map_only(mapped_file *f, hfx_error *err) {
    int fd;
    struct stat sb;
    hfx_status st = open_regular(f->path, &fd, &sb, err);
    if (st) return st;
    if ((uintmax_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: too large to map", f->path);
    }
    f->len = (size_t)sb.st_size;
    if (f->len) { /* mmap of 0 bytes fails: an empty file goes to the parser unmapped */
        void *p = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return hfx_fail(err, HFX_ERR_IO, "%s: mmap: %s", f->path, strerror(e));
        }
        f->map = p;
    }
    f->mapping = (hfx_mapping){fd, f->len, f->path}; /* kept open: readers re-check the size */
    return HFX_OK;
}

/* Map f->path read-only and parse its safetensors header into the arena. */
static hfx_status map_file(hfx_checkpoint *ck, mapped_file *f, hfx_error *err) {
    hfx_status st = map_only(f, err);
    if (st) return st;
    st = hfx_safetensors_parse(f->map, f->len, f->path, ck->arena, &f->st, err);
    for (size_t i = 0; !st && i < f->st.n_tensors; i++) f->st.tensors[i].mapping = &f->mapping;
    return st;
}

static int by_name(const void *pa, const void *pb) {
    return strcmp(((const hfx_tensor_info *)pa)->name, ((const hfx_tensor_info *)pb)->name);
}

/* Sort ck->tensors by name; a name twice is an error. */
static hfx_status sort_tensors(hfx_checkpoint *ck, hfx_error *err) {
    size_t n = ck->n_tensors;
    if (n) qsort(ck->tensors, n, sizeof *ck->tensors, by_name);
    for (size_t i = 1; i < n; i++) {
        const hfx_tensor_info *a = &ck->tensors[i - 1], *b = &ck->tensors[i];
        if (strcmp(a->name, b->name) == 0)
            return hfx_fail(err, HFX_ERR_INVALID, "%s: duplicate tensor '%s': also in %s",
                            b->file, a->name, a->file);
    }
    return HFX_OK;
}

/* Gather every file's tensors into ck->tensors, sorted by name; a name twice is an error. */
static hfx_status merge_tensors(hfx_checkpoint *ck, hfx_error *err) {
    size_t n = 0;
    for (size_t i = 0; i < ck->n_files; i++) n += ck->files[i].st.n_tensors;
    if (ck->n_files == 1) { /* sort the only file's array in place rather than copy it */
        ck->tensors = ck->files[0].st.tensors;
    } else if (n) {
        if (!(ck->tensors = hfx_arena_alloc(ck->arena, n * sizeof *ck->tensors)))
            return nomem(err);
        size_t k = 0;
        for (size_t i = 0; i < ck->n_files; i++) {
            const hfx_safetensors *s = &ck->files[i].st;
            if (s->n_tensors)
                memcpy(ck->tensors + k, s->tensors, s->n_tensors * sizeof *s->tensors);
            k += s->n_tensors;
        }
    }
    ck->n_tensors = n;
    return sort_tensors(ck, err);
}

/* A shard name from the weight_map must name a file directly inside the directory. */
static int plain_name(const char *s) {
    return s[0] != '\0' && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* One (tensor, shard) pair of the weight_map; both borrowed from the index JSON. */
typedef struct map_entry {
    const char *tensor, *shard;
} map_entry;

static int by_shard(const void *pa, const void *pb) {
    return strcmp(((const map_entry *)pa)->shard, ((const map_entry *)pb)->shard);
}

/* Check the weight_map's values and list them in e[0..n), sorted by shard name. */
static hfx_status read_weight_map(const char *index, json_t *wm, map_entry *e, hfx_error *err) {
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(wm, key, v) {
        if (!json_is_string(v))
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: weight_map entry for tensor '%s' is not a string", index, key);
        if (!plain_name(json_string_value(v)))
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: weight_map maps tensor '%s' to '%s', which is not a plain file "
                            "name inside the checkpoint directory",
                            index, key, json_string_value(v));
        e[i++] = (map_entry){key, json_string_value(v)};
    }
    qsort(e, i, sizeof *e, by_shard);
    return HFX_OK;
}

/* Create ck->files from the distinct shard names of e[0..n) (sorted by shard) and map each. */
static hfx_status open_shards(hfx_checkpoint *ck, const char *index, const map_entry *e, size_t n,
                              hfx_error *err) {
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) distinct += i == 0 || strcmp(e[i].shard, e[i - 1].shard) != 0;
    if (!(ck->files = hfx_arena_alloc(ck->arena, distinct * sizeof *ck->files))) return nomem(err);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(e[i].shard, e[i - 1].shard) == 0) continue;
        mapped_file *f = &ck->files[ck->n_files++];
        f->name = hfx_arena_strdup(ck->arena, e[i].shard);
        if (!f->name || !(f->path = join(ck, e[i].shard))) return nomem(err);
        if (!exists(f->path))
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: weight_map maps tensor '%s' to shard '%s', but %s does not exist",
                            index, e[i].tensor, e[i].shard, f->path);
        hfx_status st = map_file(ck, f, err);
        if (st) return st;
    }
    return HFX_OK;
}

static int file_by_name(const void *key, const void *elem) {
    return strcmp(key, ((const mapped_file *)elem)->name);
}

/* Every weight_map entry names the shard that holds the tensor, and every shard tensor is in
 * the weight_map. Runs after merge_tensors, so each name is held by exactly one shard. */
static hfx_status cross_check(hfx_checkpoint *ck, const char *index, json_t *wm,
                              hfx_error *err) {
    const char *key;
    json_t *v;
    json_object_foreach(wm, key, v) {
        const mapped_file *f = bsearch(json_string_value(v), ck->files, ck->n_files,
                                       sizeof *ck->files, file_by_name);
        const hfx_tensor_info *t = hfx_checkpoint_find(ck, key);
        if (!t)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: weight_map maps tensor '%s' to shard %s, which does not hold it",
                            index, key, f->path);
        if (strcmp(t->file, f->path) != 0)
            return hfx_fail(err, HFX_ERR_INVALID,
                            "%s: weight_map maps tensor '%s' to shard %s, but it is in %s", index,
                            key, f->path, t->file);
    }
    if (json_object_size(wm) == ck->n_tensors) return HFX_OK;
    for (size_t i = 0; i < ck->n_tensors; i++)
        if (!json_object_get(wm, ck->tensors[i].name))
            return hfx_fail(err, HFX_ERR_INVALID, "%s: tensor '%s' is not in the weight_map of %s",
                            ck->tensors[i].file, ck->tensors[i].name, index);
    return hfx_fail(err, HFX_ERR_INTERNAL, "%s: weight_map and shards disagree", index);
}

static hfx_status open_sharded(hfx_checkpoint *ck, const char *index, hfx_error *err) {
    json_t *root;
    hfx_status st = load_json(index, 1, 0, &root, err);
    if (st) return st;
    json_t *wm = json_object_get(root, "weight_map");
    size_t n = json_object_size(wm);
    map_entry *e = NULL;
    if (!json_is_object(wm) || n == 0)
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: \"weight_map\" is missing, empty or not an object",
                      index);
    else if (!(e = malloc(n * sizeof *e)))
        st = nomem(err);
    if (!st) st = read_weight_map(index, wm, e, err);
    if (!st) st = open_shards(ck, index, e, n, err);
    if (!st) st = merge_tensors(ck, err);
    if (!st) st = cross_check(ck, index, wm, err);
    free(e);
    json_decref(root);
    return st;
}

static hfx_status open_single(hfx_checkpoint *ck, const char *path, hfx_error *err) {
    if (!(ck->files = hfx_arena_alloc(ck->arena, sizeof *ck->files))) return nomem(err);
    ck->n_files = 1;
    ck->files[0].name = "model.safetensors";
    ck->files[0].path = path;
    hfx_status st = map_file(ck, &ck->files[0], err);
    return st ? st : merge_tensors(ck, err);
}

static hfx_status open_weights(hfx_checkpoint *ck, hfx_error *err) {
    const char *single = join(ck, "model.safetensors"), *index = join(ck, INDEX_NAME);
    const char *bin = join(ck, "pytorch_model.bin");
    const char *bin_index = join(ck, "pytorch_model.bin.index.json");
    if (!single || !index || !bin || !bin_index) return nomem(err);
    if (exists(single)) return open_single(ck, single, err);
    if (exists(index)) return open_sharded(ck, index, err);
    if (exists(bin) || exists(bin_index))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED,
                        "%s: no model.safetensors or %s (pytorch_model.bin is present but not "
                        "supported: convert the checkpoint to safetensors)",
                        ck->dir, INDEX_NAME);
    return hfx_fail(err, HFX_ERR_INVALID, "%s: no model.safetensors or %s", ck->dir, INDEX_NAME);
}

/* The GGUF file at `path` as the checkpoint transformers' GGUF loader makes of it (hf/gguf_model.h). */
static hfx_status open_gguf(hfx_checkpoint *ck, const char *path, hfx_error *err) {
    if (!(ck->files = hfx_arena_alloc(ck->arena, sizeof *ck->files))) return nomem(err);
    memset(ck->files, 0, sizeof *ck->files);
    ck->n_files = 1;
    mapped_file *f = &ck->files[0];
    f->name = f->path = path;
    ck->gguf = true;
    ck->config_path = hfx_arena_printf(ck->arena, "%s (its metadata)", path);
    if (!ck->config_path) return nomem(err);
    hfx_status st = map_only(f, err);
    hfx_gguf g;
    if (!st) st = hfx_gguf_parse(f->map, f->len, path, ck->arena, &g, err);
    if (!st) st = hfx_gguf_model(&g, &f->mapping, ck->arena, &ck->config, &ck->tensors, &ck->n_tensors, err);
    if (st) return st;
    char *text = json_dumps(ck->config, JSON_INDENT(2)); /* (what an export writes as its config.json) */
    ck->config_text = text ? hfx_arena_strdup(ck->arena, text) : NULL;
    free(text);
    /* the generation config transformers derives from the config: its special token ids */
    ck->generation = json_object();
    static const char *const ids[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (size_t i = 0; ck->generation && i < sizeof ids / sizeof ids[0]; i++) {
        json_t *v = json_object_get(ck->config, ids[i]);
        if (v) json_object_set(ck->generation, ids[i], v);
    }
    text = ck->generation ? json_dumps(ck->generation, JSON_INDENT(2)) : NULL;
    ck->generation_text = text ? hfx_arena_strdup(ck->arena, text) : NULL;
    free(text);
    char *made[2];
    if ((st = hfx_gguf_tokenizer(&g, &made[0], &made[1], err))) return st;
    for (int i = 0; i < 2; i++) {
        ck->made[i] = made[i] ? hfx_arena_strdup(ck->arena, made[i]) : NULL;
        if (made[i] && !ck->made[i]) st = nomem(err);
        free(made[i]);
    }
    if (st) return st;
    return ck->config_text && ck->generation_text ? sort_tensors(ck, err) : nomem(err);
}

static bool gguf_name(const char *name) {
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".gguf") == 0;
}

/* A folder without config.json: the GGUF file it holds, if one (two are an error naming them: the user picks) */
static hfx_status no_config(hfx_checkpoint *ck, const char *config, hfx_error *err) {
    DIR *d = opendir(ck->prefix[0] ? ck->prefix : "/");
    const char *gguf[2] = {NULL, NULL};
    for (struct dirent *e; d && !gguf[1] && (e = readdir(d));)
        if (gguf_name(e->d_name)) gguf[gguf[0] ? 1 : 0] = hfx_arena_strdup(ck->arena, e->d_name);
    if (d) closedir(d);
    if (gguf[1])
        return hfx_fail(err, HFX_ERR_INVALID, "%s: not found, and the folder holds several GGUF files (%s, %s, ...): "
                                              "give the one to export", config, gguf[0], gguf[1]);
    if (gguf[0]) {
        const char *path = join(ck, gguf[0]);
        return path ? open_gguf(ck, path, err) : nomem(err);
    }
    return hfx_fail(err, HFX_ERR_INVALID, "%s: not found", config);
}

/* Fill ck from the directory: the directory itself, the two JSON files, then the weights. */
static hfx_status open_all(hfx_checkpoint *ck, const char *dir, hfx_error *err) {
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return hfx_fail(err, errno == ENOENT ? HFX_ERR_INVALID : HFX_ERR_IO, "%s: %s", dir,
                        strerror(errno));
    if (S_ISREG(sb.st_mode) && gguf_name(dir)) { /* a GGUF file given itself; side files are none */
        if (!(ck->dir = ck->prefix = hfx_arena_strdup(ck->arena, dir))) return nomem(err);
        return open_gguf(ck, ck->dir, err);
    }
    if (!S_ISDIR(sb.st_mode))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: not a directory (a checkpoint folder) or a .gguf file", dir);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--; /* "ck/" and "ck" give the same messages */
    ck->dir = hfx_arena_strdup(ck->arena, dir);
    /* "/" joins as "/config.json", not "//config.json" */
    const char *keep = len == 1 && dir[0] == '/' ? "" : dir;
    ck->prefix = hfx_arena_printf(ck->arena, "%.*s", (int)len, keep);
    const char *config = join(ck, "config.json"), *gen = join(ck, "generation_config.json");
    if (!ck->dir || !ck->prefix || !config || !gen) return nomem(err);
    ck->config_path = config;
    struct stat cs;
    if (stat(config, &cs) != 0 && errno == ENOENT) return no_config(ck, config, err);
    hfx_status st = load_json(config, 1, 0, &ck->config, err);
    if (!st) st = load_json(gen, 0, 0, &ck->generation, err);
    if (!st) st = open_weights(ck, err);
    return st ? st : hfx_prequant_apply(ck->config, config, ck->arena, ck->tensors, &ck->n_tensors, &ck->quant_method,
                                        err);
}

hfx_status hfx_checkpoint_open(const char *dir, hfx_checkpoint **out, hfx_error *err) {
    *out = NULL;
    hfx_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck || !(ck->arena = hfx_arena_new())) {
        free(ck);
        return nomem(err);
    }
    hfx_status st = open_all(ck, dir, err);
    if (st) {
        hfx_checkpoint_close(ck);
        return st;
    }
    *out = ck;
    return HFX_OK;
}

/* The tensors of the safetensors file at `path` (arena) added to the checkpoint's as "<prefix><name>", once (its
 * mapping closed with the checkpoint). */
static hfx_status add_tensor_file(hfx_checkpoint *ck, const char *path, const char *prefix, hfx_error *err) {
    size_t k = strlen(prefix);
    for (size_t i = 0; i < ck->n_tensors; i++)
        if (strncmp(ck->tensors[i].name, prefix, k) == 0) return HFX_OK; /* added before */
    if (ck->n_modules == sizeof ck->modules / sizeof ck->modules[0])
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: more side files with weights than hfx reads (8)", ck->dir);
    mapped_file *f = hfx_arena_alloc(ck->arena, sizeof *f);
    if (!f) return nomem(err);
    memset(f, 0, sizeof *f);
    f->name = path, f->path = path, f->mapping.fd = -1;
    hfx_status st = map_file(ck, f, err);
    ck->modules[ck->n_modules++] = f; /* (closed with the checkpoint, mapped or not) */
    if (st) return st;
    size_t n = ck->n_tensors + f->st.n_tensors;
    hfx_tensor_info *all = hfx_arena_alloc(ck->arena, (n ? n : 1) * sizeof *all);
    if (!all) return nomem(err);
    if (ck->n_tensors) memcpy(all, ck->tensors, ck->n_tensors * sizeof *all);
    for (size_t i = 0; i < f->st.n_tensors; i++) {
        all[ck->n_tensors + i] = f->st.tensors[i];
        if (!(all[ck->n_tensors + i].name = hfx_arena_printf(ck->arena, "%s%s", prefix, f->st.tensors[i].name)))
            return nomem(err);
    }
    ck->tensors = all; /* (the earlier array stays in the arena: what was found in it stays valid) */
    ck->n_tensors = n;
    return sort_tensors(ck, err);
}

hfx_status hfx_checkpoint_add_module(hfx_checkpoint *ck, const char *module, hfx_error *err) {
    const char *path = hfx_arena_printf(ck->arena, "%s/%s/model.safetensors", ck->prefix, module);
    const char *bin = hfx_arena_printf(ck->arena, "%s/%s/pytorch_model.bin", ck->prefix, module);
    const char *prefix = hfx_arena_printf(ck->arena, "%s/", module);
    if (!path || !bin || !prefix) return nomem(err);
    if (!exists(path))
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: not found%s", path,
                        exists(bin) ? " (pytorch_model.bin is there, which hfx does not read: save the module as "
                                      "safetensors)" : "");
    return add_tensor_file(ck, path, prefix, err);
}

/* adapter_config.json's LoRA settings: the ones that change its arithmetic beyond r and lora_alpha are refused. */
static hfx_status lora_scale(const json_t *a, const char *path, double *scale, hfx_error *err) {
    const char *type = json_string_value(json_object_get(a, "peft_type"));
    const json_t *r = json_object_get(a, "r"), *alpha = json_object_get(a, "lora_alpha");
    if (!type || strcmp(type, "LORA") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: peft_type '%s': hfx applies LoRA adapters only", path,
                        type ? type : "?");
    if (!json_is_integer(r) || json_integer_value(r) < 1 || json_integer_value(r) > 1 << 16 || !json_is_number(alpha))
        return hfx_fail(err, HFX_ERR_INVALID, "%s: field 'r' must be a positive integer and 'lora_alpha' a number", path);
    static const char *const off[] = {"use_dora", "fan_in_fan_out", "lora_bias"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (json_is_true(json_object_get(a, off[i])))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s is true: not written (plain LoRA only)", path, off[i]);
    static const char *const empty[] = {"rank_pattern", "alpha_pattern", "modules_to_save", "layers_to_transform"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        const json_t *v = json_object_get(a, empty[i]);
        if (v && !json_is_null(v) && !(json_is_object(v) && json_object_size(v) == 0) &&
            !(json_is_array(v) && json_array_size(v) == 0))
            return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: %s is set: not written (one rank and alpha for every "
                                                      "targeted linear)", path, empty[i]);
    }
    const char *bias = json_string_value(json_object_get(a, "bias"));
    if (bias && strcmp(bias, "none") != 0)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "%s: bias '%s': not written (\"none\" only)", path, bias);
    double rank = (double)json_integer_value(r);
    *scale = json_number_value(alpha) / (json_is_true(json_object_get(a, "use_rslora")) ? sqrt(rank) : rank);
    return HFX_OK;
}

hfx_status hfx_checkpoint_add_lora(hfx_checkpoint *ck, hfx_error *err) {
    json_t *a = NULL;
    hfx_status st = hfx_checkpoint_side_json(ck, "adapter_config.json", false, &a, err);
    if (st || !a) return st;
    const char *config = join(ck, "adapter_config.json"), *path = join(ck, "adapter_model.safetensors");
    const char *bin = join(ck, "adapter_model.bin");
    double scale = 0;
    if (!config || !path || !bin) st = nomem(err);
    if (!st) st = lora_scale(a, config, &scale, err);
    json_decref(a);
    if (!st && !exists(path))
        st = hfx_fail(err, HFX_ERR_INVALID, "%s: not found (adapter_config.json names a LoRA adapter)%s", path,
                      exists(bin) ? ": adapter_model.bin is there, which hfx does not read" : "");
    if (!st) st = add_tensor_file(ck, path, "lora.", err);
    if (!st) ck->lora_scale = scale;
    return st;
}

double hfx_checkpoint_lora_scale(const hfx_checkpoint *ck) { return ck->lora_scale; }

static const char MEMORY[] = "(memory)";

/* JSON text as an object, for a checkpoint in memory; `what` names it in messages. */
static hfx_status parse_text(const char *text, const char *what, json_t **out, hfx_error *err) {
    json_error_t je;
    *out = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!*out && json_error_code(&je) == json_error_out_of_memory) return nomem(err);
    if (!*out) return hfx_fail(err, HFX_ERR_INVALID, "%s: malformed JSON at line %d, column %d: %s", what, je.line,
                               je.column, je.text);
    if (!json_is_object(*out)) return hfx_fail(err, HFX_ERR_INVALID, "%s: not a JSON object", what);
    return HFX_OK;
}

static hfx_status open_memory(hfx_checkpoint *ck, const char *config, const char *generation, const hfx_tensor *ts,
                              size_t n, hfx_error *err) {
    ck->dir = ck->prefix = MEMORY;
    ck->config_path = "(memory)/config.json";
    if (!config) return hfx_fail(err, HFX_ERR_INVALID, "(memory): config.json's text is missing");
    if (!(ck->config_text = hfx_arena_strdup(ck->arena, config)) ||
        (generation && !(ck->generation_text = hfx_arena_strdup(ck->arena, generation))))
        return nomem(err);
    hfx_status st = parse_text(config, ck->config_path, &ck->config, err);
    if (!st && generation) st = parse_text(generation, "(memory)/generation_config.json", &ck->generation, err);
    if (st) return st;
    if (n > SIZE_MAX / sizeof *ck->tensors || !(ck->tensors = hfx_arena_alloc(ck->arena, (n ? n : 1) * sizeof *ck->tensors)))
        return nomem(err);
    for (size_t i = 0; i < n; i++) {
        const hfx_tensor *t = &ts[i];
        hfx_tensor_info *ti = &ck->tensors[i];
        uint64_t count = 1;
        bool ok = t->name && t->rank >= 0 && t->rank <= HFX_MAX_RANK && (t->rank == 0 || t->shape) &&
                  (t->data || count == 0) && hfx_dtype_size(t->dtype) > 0;
        for (int d = 0; ok && d < t->rank; d++)
            ok = t->shape[d] >= 0 && !__builtin_mul_overflow(count, (uint64_t)t->shape[d], &count);
        uint64_t nbytes = ok ? hfx_dtype_nbytes(t->dtype, count) : 0;
        if (!ok || nbytes == UINT64_MAX || (!t->data && nbytes))
            return hfx_fail(err, HFX_ERR_INVALID, "(memory): tensor %zu ('%s'): a bad dtype, rank, shape or data", i,
                            t->name ? t->name : "?");
        *ti = (hfx_tensor_info){.name = hfx_arena_strdup(ck->arena, t->name), .dtype = t->dtype, .rank = t->rank,
                                .data = t->data, .nbytes = nbytes, .file = MEMORY};
        if (!ti->name) return nomem(err);
        for (int d = 0; d < t->rank; d++) ti->shape[d] = t->shape[d];
    }
    ck->n_tensors = n;
    return sort_tensors(ck, err);
}

hfx_status hfx_checkpoint_open_memory(const char *config_json, const char *generation_json, const hfx_tensor *tensors,
                                      size_t n, hfx_checkpoint **out, hfx_error *err) {
    *out = NULL;
    hfx_checkpoint *ck = calloc(1, sizeof *ck);
    if (!ck || !(ck->arena = hfx_arena_new())) {
        free(ck);
        return nomem(err);
    }
    hfx_status st = open_memory(ck, config_json, generation_json, tensors, n, err);
    if (st) {
        hfx_checkpoint_close(ck);
        return st;
    }
    *out = ck;
    return HFX_OK;
}

const char *hfx_checkpoint_json_text(const hfx_checkpoint *ck, bool generation) {
    return generation ? ck->generation_text : ck->config_text;
}

void hfx_checkpoint_close(hfx_checkpoint *ck) {
    if (!ck) return;
    for (size_t i = 0; i < ck->n_files + ck->n_modules; i++) {
        mapped_file *f = i < ck->n_files ? &ck->files[i] : ck->modules[i - ck->n_files];
        if (f->map) munmap(f->map, f->len);
        if (f->mapping.path && f->mapping.fd >= 0) close(f->mapping.fd);
    }
    json_decref(ck->config);
    json_decref(ck->generation);
    hfx_arena_free(ck->arena);
    free(ck);
}

const char *hfx_checkpoint_dir(const hfx_checkpoint *ck) { return ck->dir; }

const json_t *hfx_checkpoint_config(const hfx_checkpoint *ck) { return ck->config; }

hfx_cfg hfx_checkpoint_cfg(const hfx_checkpoint *ck) { return (hfx_cfg){ck->config, ck->config_path}; }

const char *hfx_checkpoint_quant_method(const hfx_checkpoint *ck) { return ck->quant_method; }

const json_t *hfx_checkpoint_generation_config(const hfx_checkpoint *ck) {
    return ck->generation;
}

size_t hfx_checkpoint_tensor_count(const hfx_checkpoint *ck) { return ck->n_tensors; }

const hfx_tensor_info *hfx_checkpoint_tensor_at(const hfx_checkpoint *ck, size_t i) {
    return i < ck->n_tensors ? &ck->tensors[i] : NULL;
}

static int name_cmp(const void *key, const void *elem) {
    return strcmp(key, ((const hfx_tensor_info *)elem)->name);
}

const hfx_tensor_info *hfx_checkpoint_find(const hfx_checkpoint *ck, const char *name) {
    if (!ck->n_tensors) return NULL;
    return bsearch(name, ck->tensors, ck->n_tensors, sizeof *ck->tensors, name_cmp);
}

long hfx_checkpoint_index_of(const hfx_checkpoint *ck, const char *name) {
    const hfx_tensor_info *t = hfx_checkpoint_find(ck, name);
    return t ? (long)(t - ck->tensors) : -1;
}

/* ---- side files (tokenizer.json, ...) ---- */

static hfx_status side_path(const hfx_checkpoint *ck, const char *name, char *path, size_t size, bool *found) {
    *found = false;
    if (ck->config_text || ck->gguf) return HFX_OK; /* in memory or a GGUF file: no side files */
    if ((size_t)snprintf(path, size, "%s/%s", ck->prefix, name) >= size) return HFX_OK;
    struct stat sb;
    *found = lstat(path, &sb) == 0;
    return HFX_OK;
}

/* A GGUF file's tokenizer file `name` made from its metadata, or NULL */
static const char *made_file(const hfx_checkpoint *ck, const char *name) {
    for (int i = 0; i < 2; i++)
        if (ck->made[i] && !strcmp(name, MADE_NAMES[i])) return ck->made[i];
    return NULL;
}

hfx_status hfx_checkpoint_side_json(const hfx_checkpoint *ck, const char *name, bool reals, json_t **out,
                                    hfx_error *err) {
    char path[4096];
    bool found;
    *out = NULL;
    const char *made = made_file(ck, name);
    if (made) {
        json_error_t je;
        *out = json_loads(made, reals ? JSON_DECODE_INT_AS_REAL : 0, &je);
        return *out ? HFX_OK : nomem(err); /* (text hfx wrote itself) */
    }
    side_path(ck, name, path, sizeof path, &found);
    return found ? load_json(path, 1, reals ? JSON_DECODE_INT_AS_REAL : 0, out, err) : HFX_OK;
}

hfx_status hfx_checkpoint_side_text(const hfx_checkpoint *ck, const char *name, char **out, size_t *len,
                                    hfx_error *err) {
    char path[4096];
    bool found;
    *out = NULL;
    *len = 0;
    const char *made = made_file(ck, name);
    if (made) {
        *len = strlen(made);
        *out = strdup(made);
        return *out ? HFX_OK : nomem(err);
    }
    side_path(ck, name, path, sizeof path, &found);
    return found ? read_text(path, out, len, err) : HFX_OK;
}
