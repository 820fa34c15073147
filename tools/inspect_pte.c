/* `hfx inspect` of an ExecuTorch program (.pte): its extended header, then a bounds-checked walk
 * of the Program flatbuffer (program.fbs) that prints each execution plan — its inputs, outputs,
 * values, instructions (kernel and delegate calls), operators, delegates and planned arena —
 * without reading the segments after it. Every offset read from the file is checked against the
 * flatbuffer's length before use. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inspect.h"

enum { MAX_PROGRAM = 256 << 20 }; /* a program's flatbuffer (its plan, not its weights) */

typedef struct fb {
    const uint8_t *p;
    uint64_t n;
    int bad; /* a read fell outside [0, n): the byte offset of the first, + 1 */
} fb;

static uint64_t le(fb *b, uint64_t at, int width) {
    if (at > b->n || (uint64_t)width > b->n - at) {
        if (!b->bad) b->bad = (int)(at < INT32_MAX ? at + 1 : INT32_MAX);
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v |= (uint64_t)b->p[at + i] << (8 * i);
    return v;
}

/* Where a table's field is, 0 when absent (or the table is bad). */
static uint64_t field(fb *b, uint64_t table, int id) {
    if (!table) return 0;
    int32_t back = (int32_t)le(b, table, 4);
    uint64_t vt = (uint64_t)((int64_t)table - back);
    uint64_t vlen = le(b, vt, 2);
    if (b->bad || 4 + 2 * (uint64_t)id + 2 > vlen) return 0;
    uint64_t off = le(b, vt + 4 + 2 * (uint64_t)id, 2);
    return off ? table + off : 0;
}

/* The table or vector a reference field points at, 0 when absent. */
static uint64_t deref(fb *b, uint64_t at) { return at ? at + le(b, at, 4) : 0; }

static uint64_t vec_len(fb *b, uint64_t vec) { return vec ? le(b, vec, 4) : 0; }

/* Element i of a vector of tables. */
static uint64_t vec_table(fb *b, uint64_t vec, uint64_t i) { return deref(b, vec + 4 + 4 * i); }

static void print_plan(fb *b, uint64_t plan, FILE *out) {
    uint64_t name = deref(b, field(b, plan, 0));
    uint64_t name_len = vec_len(b, name);
    if (name_len > 256) name_len = 256;
    char text[257] = "?";
    for (uint64_t i = 0; name && i < name_len; i++) text[i] = (char)le(b, name + 4 + i, 1), text[i + 1] = 0;
    uint64_t values = deref(b, field(b, plan, 2)), ins = deref(b, field(b, plan, 3)), outs = deref(b, field(b, plan, 4));
    uint64_t chains = deref(b, field(b, plan, 5)), ops = deref(b, field(b, plan, 6));
    uint64_t delegates = deref(b, field(b, plan, 7)), sizes = deref(b, field(b, plan, 8));
    uint64_t n_instr = 0, n_delegate_calls = 0;
    for (uint64_t c = 0; c < vec_len(b, chains) && c < 1024 && !b->bad; c++) {
        uint64_t instrs = deref(b, field(b, vec_table(b, chains, c), 2));
        uint64_t n = vec_len(b, instrs);
        n_instr += n;
        for (uint64_t i = 0; i < n && i < (1u << 24) && !b->bad; i++) {
            uint64_t type = field(b, vec_table(b, instrs, i), 0);
            n_delegate_calls += type && le(b, type, 1) == 2; /* InstructionArguments: DelegateCall */
        }
    }
    uint64_t arena = 0;
    for (uint64_t i = 0; i < vec_len(b, sizes) && i < 64; i++) arena += le(b, sizes + 4 + 8 * i, 8);
    if (!vec_len(b, values) || !n_instr) {
        fprintf(out, "  %-24s a constant method: no calls, %llu values\n", text, (unsigned long long)vec_len(b, values));
        return;
    }
    fprintf(out, "  %-24s %llu inputs, %llu outputs, %llu values, %llu instructions (%llu delegate calls), "
                 "%llu operators, %llu delegates, planned arena %llu bytes\n",
            text, (unsigned long long)vec_len(b, ins), (unsigned long long)vec_len(b, outs),
            (unsigned long long)vec_len(b, values), (unsigned long long)n_instr, (unsigned long long)n_delegate_calls,
            (unsigned long long)vec_len(b, ops), (unsigned long long)vec_len(b, delegates), (unsigned long long)arena);
}

int inspect_pte(const char *path, FILE *out, hfx_error *err) {
    struct stat sb;
    FILE *f = NULL;
    uint8_t head[40];
    const char *why = NULL;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) why = "not a regular file";
    else if (!(f = fopen(path, "rb"))) why = "cannot open";
    else if (fread(head, 1, sizeof head, f) != sizeof head || memcmp(head + 4, "ET12", 4) != 0)
        why = "not an ExecuTorch program (no \"ET12\" identifier at byte 4)";
    else if (memcmp(head + 8, "eh00", 4) != 0) why = "no extended header (\"eh00\" at byte 8)";
    fb b = {head, sizeof head, 0};
    uint64_t size = why ? 0 : le(&b, 16, 8), base = why ? 0 : le(&b, 24, 8), segments = why ? 0 : le(&b, 32, 8);
    if (!why && (size < 40 || size > (uint64_t)sb.st_size || size > MAX_PROGRAM))
        why = "the extended header's program size is outside the file";
    else if (!why && segments && (base < size || base > (uint64_t)sb.st_size || segments > (uint64_t)sb.st_size - base))
        why = "the extended header's segments are outside the file";
    uint8_t *data = why ? NULL : malloc(size);
    if (!why && !data) why = "out of memory";
    if (!why && (fseek(f, 0, SEEK_SET) != 0 || fread(data, 1, size, f) != size)) why = "read failed";
    if (f) fclose(f);
    if (why) {
        free(data);
        if (err) {
            err->status = HFX_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "%.1500s: %s", path, why);
        }
        return -1;
    }
    b = (fb){data, size, 0};
    uint64_t root = le(&b, 0, 4);
    uint64_t plans = deref(&b, field(&b, root, 1));
    uint64_t n_plans = vec_len(&b, plans), n_segments = vec_len(&b, deref(&b, field(&b, root, 4)));
    if (!b.bad)
        fprintf(out, "executorch program: %s (%jd bytes: a %llu-byte program, %llu segments of %llu bytes at %llu)\n",
                path, (intmax_t)sb.st_size, (unsigned long long)size, (unsigned long long)n_segments,
                (unsigned long long)segments, (unsigned long long)base);
    for (uint64_t i = 0; i < n_plans && i < 1024 && !b.bad; i++) print_plan(&b, vec_table(&b, plans, i), out);
    free(data);
    if (b.bad) {
        if (err) {
            err->status = HFX_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "%.1500s: malformed program: an offset near byte %d points "
                     "outside its %llu bytes", path, b.bad - 1, (unsigned long long)size);
        }
        return -1;
    }
    return 0;
}
