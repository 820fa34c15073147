#include "inspect.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Append to buf[0..size) at *k, never past its end: a text longer than the room is cut, and *k
 * stays < size (snprintf returns what it would have written, which must not move *k further). */
static void append(char *buf, size_t size, size_t *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void append(char *buf, size_t size, size_t *k, const char *fmt, ...) {
    if (*k + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf + *k, size - *k, fmt, ap);
    va_end(ap);
    if (r > 0) *k += (size_t)r < size - 1 - *k ? (size_t)r : size - 1 - *k;
}

/* A length-prefixed string's length for "%.*s": at most 256 bytes shown. */
static int shown(size_t len) { return len > 256 ? 256 : (int)len; }

typedef struct reader {
    const uint8_t *p, *end, *base;
    int bad;
} reader;

static uint64_t varint(reader *r) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) break;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}

/* Next field: returns 0 at the end; for LEN fields sets *sub to the payload. */
static int next(reader *r, uint32_t *field, int *wire, reader *sub, uint64_t *value) {
    if (r->bad || r->p >= r->end) return 0;
    uint64_t key = varint(r);
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0: *value = varint(r); break;
    case 1: if (r->end - r->p < 8) r->bad = 1; else r->p += 8; break;
    case 5: if (r->end - r->p < 4) r->bad = 1; else r->p += 4; break;
    case 2: {
        uint64_t n = varint(r);
        if (r->bad || n > (uint64_t)(r->end - r->p)) {
            r->bad = 1;
            return 0;
        }
        *sub = (reader){r->p, r->p + n, r->base, 0};
        r->p += n;
        break;
    }
    default: r->bad = 1;
    }
    return !r->bad;
}

static const char *elem_name(uint64_t t) {
    static const char *const names[] = {"?", "float32", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                        "string", "bool", "float16", "float64", "uint32", "uint64",
                                        "complex64", "complex128", "bfloat16"};
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void print_value_info(reader vi, FILE *out) {
    uint32_t f;
    int w;
    reader s = {0}, t = {0}, tt = {0}, sh = {0}, d = {0};
    uint64_t v;
    char name[256] = "?", shape[512] = "";
    uint64_t elem = 0;
    while (next(&vi, &f, &w, &s, &v)) {
        if (f == 1 && w == 2) snprintf(name, sizeof name, "%.*s", shown((size_t)(s.end - s.p)), (const char *)s.p);
        if (f != 2 || w != 2) continue;
        while (next(&s, &f, &w, &t, &v)) {
            if (f != 1 || w != 2) continue;
            while (next(&t, &f, &w, &tt, &v)) {
                if (f == 1 && w == 0) elem = v;
                if (f != 2 || w != 2) continue;
                size_t k = 0;
                while (next(&tt, &f, &w, &sh, &v)) {
                    if (f != 1 || w != 2) continue;
                    while (next(&sh, &f, &w, &d, &v)) {
                        if (f == 1 && w == 0) append(shape, sizeof shape, &k, "%s%llu", k ? ", " : "", (unsigned long long)v);
                        if (f == 2 && w == 2)
                            append(shape, sizeof shape, &k, "%s%.*s", k ? ", " : "", shown((size_t)(d.end - d.p)),
                                   (const char *)d.p);
                    }
                }
            }
        }
    }
    fprintf(out, "  %-28s %-8s [%s]\n", name, elem_name(elem), shape);
}

typedef struct op_count {
    char name[64];
    int n;
} op_count;

static int by_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    return x->n != y->n ? y->n - x->n : strcmp(x->name, y->name);
}

int inspect_onnx(const char *path, FILE *out, hfx_error *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block: refused below */
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
        if (fd >= 0) close(fd);
        snprintf(err->message, sizeof err->message, "%s: cannot read (not a checkpoint directory, export directory or .onnx file)", path);
        err->status = HFX_ERR_INVALID;
        return -1;
    }
    uint8_t *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err->message, sizeof err->message, "%s: cannot map", path);
        err->status = HFX_ERR_IO;
        return -1;
    }
    reader r = {map, map + sb.st_size, map, 0}, s = {0}, g = {0};
    uint32_t f;
    int w;
    uint64_t v;
    op_count ops[128] = {{{0}, 0}};
    int n_ops = 0, n_nodes = 0, n_inits = 0;
    uint64_t opset = 0, ir = 0;
    fprintf(out, "onnx model: %s\n", path);
    reader inputs[64], outputs[64];
    int n_in = 0, n_out = 0;
    while (next(&r, &f, &w, &s, &v)) {
        if (f == 1 && w == 0) ir = v;
        if (f == 8 && w == 2) {
            reader o = s, x = {0};
            while (next(&o, &f, &w, &x, &v)) if (f == 2 && w == 0) opset = v;
        }
        if (f != 7 || w != 2) continue;
        while (next(&s, &f, &w, &g, &v)) {
            if (f == 11 && w == 2 && n_in < 64) inputs[n_in++] = g;
            if (f == 12 && w == 2 && n_out < 64) outputs[n_out++] = g;
            if (f == 5 && w == 2) n_inits++;
            if (f != 1 || w != 2) continue;
            n_nodes++;
            reader node = g, x = {0};
            while (next(&node, &f, &w, &x, &v)) {
                if (f != 4 || w != 2) continue;
                size_t len = (size_t)(x.end - x.p);
                int k;
                for (k = 0; k < n_ops; k++)
                    if (strlen(ops[k].name) == len && memcmp(ops[k].name, x.p, len) == 0) break;
                if (k == n_ops && n_ops < 128) snprintf(ops[n_ops++].name, sizeof ops[0].name, "%.*s", shown(len), (const char *)x.p);
                if (k < 128) ops[k].n++;
            }
        }
    }
    int bad = r.bad;
    long offset = (long)(r.p - r.base);
    if (!bad) {
        fprintf(out, "ir_version %llu, opset %llu, %d nodes, %d initializers\n", (unsigned long long)ir,
                (unsigned long long)opset, n_nodes, n_inits);
        fprintf(out, "inputs:\n");
        for (int i = 0; i < n_in; i++) print_value_info(inputs[i], out);
        fprintf(out, "outputs:\n");
        for (int i = 0; i < n_out; i++) print_value_info(outputs[i], out);
        qsort(ops, (size_t)n_ops, sizeof ops[0], by_count);
        fprintf(out, "ops:\n");
        for (int i = 0; i < n_ops; i++) fprintf(out, "  %-24s %d\n", ops[i].name, ops[i].n);
    }
    munmap(map, (size_t)sb.st_size);
    if (bad) {
        snprintf(err->message, sizeof err->message, "%s: malformed protobuf near byte %ld", path, offset);
        err->status = HFX_ERR_INVALID;
        return -1;
    }
    return 0;
}

/* ---- OpenVINO IR ---- */

/* The value of attribute `name` in the tag that starts at `tag` (up to its '>'), copied into
 * `out`; empty when absent. */
static void xml_attr(const char *tag, const char *end, const char *name, char *out, size_t n) {
    out[0] = 0;
    size_t len = strlen(name);
    for (const char *p = tag; p + len + 2 < end; p++) {
        if ((p == tag || p[-1] == ' ') && strncmp(p, name, len) == 0 && p[len] == '=' && p[len + 1] == '"') {
            const char *v = p + len + 2, *q = memchr(v, '"', (size_t)(end - v));
            if (q) snprintf(out, n, "%.*s", shown((size_t)(q - v)), v);
            return;
        }
    }
}

int inspect_openvino(const char *path, FILE *out, hfx_error *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block: refused below */
    struct stat sb;
    char *text = NULL;
    size_t size = 0, n = 0;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < (1L << 30)) {
        size = (size_t)sb.st_size;
        text = malloc(size + 1);
        while (text && n < size) {
            ssize_t k = read(fd, text + n, size - n);
            if (k <= 0) break;
            n += (size_t)k;
        }
        if (text && n == size) text[size] = 0;
        else free(text), text = NULL;
    }
    if (fd >= 0) close(fd);
    if (!text) {
        snprintf(err->message, sizeof err->message, "%s: cannot read", path);
        err->status = HFX_ERR_INVALID;
        return -1;
    }
    op_count ops[128] = {{{0}, 0}};
    int n_ops = 0, n_layers = 0;
    char inputs[4096] = "", outputs[4096] = "", variables[16] = "";
    size_t ki = 0, ko = 0;
    int n_vars = 0;
    for (const char *p = strstr(text, "<layer "); p; p = strstr(p + 1, "<layer ")) {
        const char *end = strchr(p, '>');
        if (!end) break;
        char type[64], name[256], extra[256];
        xml_attr(p, end, "type", type, sizeof type);
        xml_attr(p, end, "name", name, sizeof name);
        n_layers++;
        int k;
        for (k = 0; k < n_ops && strcmp(ops[k].name, type) != 0; k++) {}
        if (k == n_ops && n_ops < 128) snprintf(ops[n_ops++].name, sizeof ops[0].name, "%s", type);
        if (k < 128) ops[k].n++;
        if (strcmp(type, "Parameter") == 0 || strcmp(type, "Result") == 0) {
            const char *data = strstr(end, "<data "), *data_end = data ? strchr(data, '>') : NULL;
            const char *next = strstr(end, "</layer>");
            extra[0] = 0;
            if (data && data_end && next && data < next) {
                char shape[200], et[32];
                xml_attr(data, data_end, "shape", shape, sizeof shape);
                xml_attr(data, data_end, "element_type", et, sizeof et);
                snprintf(extra, sizeof extra, "%-8s [%s]", et, shape);
            }
            if (strcmp(type, "Result") == 0) xml_attr(p, end, "output_names", name, sizeof name);
            char *buf = strcmp(type, "Parameter") == 0 ? inputs : outputs;
            size_t *kk = strcmp(type, "Parameter") == 0 ? &ki : &ko;
            append(buf, 4096, kk, "  %-28s %s\n", name, extra);
        }
        if (strcmp(type, "ReadValue") == 0) n_vars++;
    }
    snprintf(variables, sizeof variables, "%d", n_vars);
    fprintf(out, "openvino model: %s\n%d layers, %s state variables\ninputs:\n%soutputs:\n%sops:\n", path, n_layers,
            variables, inputs, outputs);
    qsort(ops, (size_t)n_ops, sizeof ops[0], by_count);
    for (int i = 0; i < n_ops; i++) fprintf(out, "  %-28s %d\n", ops[i].name, ops[i].n);
    free(text);
    return 0;
}

int inspect_pt2(const char *path, FILE *out, hfx_error *err) {
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (err) {
            err->status = HFX_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "%s: not a regular file", path);
        }
        return -1;
    }
    fprintf(out, "torch.export program: %s (%jd bytes)\n", path, (intmax_t)sb.st_size);
    fprintf(out, "  read it with torch.export.load(path); hfx inspect lists ONNX and OpenVINO graphs\n");
    return 0;
}
