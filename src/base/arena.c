#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunks form a singly linked list; each allocation takes from the newest chunk, and a request
 * larger than the default chunk gets a chunk of its own. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

struct hfx_arena {
    chunk *head; /* owned */
};

enum { CHUNK_DEFAULT = 64 * 1024 };

hfx_arena *hfx_arena_new(void) { return calloc(1, sizeof(hfx_arena)); }

void hfx_arena_free(hfx_arena *arena) {
    if (!arena) return;
    for (chunk *c = arena->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(arena);
}

void *hfx_arena_alloc(hfx_arena *arena, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    chunk *c = arena->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CHUNK_DEFAULT ? size : CHUNK_DEFAULT;
        if (cap > SIZE_MAX - sizeof(chunk)) return NULL;
        chunk *n = malloc(sizeof(chunk) + cap);
        if (!n) return NULL;
        n->used = 0;
        n->cap = cap;
        if (c && size > CHUNK_DEFAULT) { /* keep the partly used chunk at the head */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            arena->head = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *hfx_arena_strdup(hfx_arena *arena, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = hfx_arena_alloc(arena, n);
    if (p) memcpy(p, s, n);
    return p;
}

char *hfx_arena_printf(hfx_arena *arena, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = hfx_arena_alloc(arena, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
