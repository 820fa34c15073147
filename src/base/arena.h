/* Arena: a bump allocator that owns everything a graph or a parsed file needs and frees it at
 * once. Allocation failure returns NULL (never aborts); callers report HFX_ERR_NOMEM. */
#ifndef HFX_BASE_ARENA_H
#define HFX_BASE_ARENA_H

#include <stddef.h>

typedef struct hfx_arena hfx_arena;

hfx_arena *hfx_arena_new(void);
void hfx_arena_free(hfx_arena *arena);

/* `size` zeroed bytes aligned to 16; NULL when out of memory. */
void *hfx_arena_alloc(hfx_arena *arena, size_t size);

/* Copy of `s` (NULL gives NULL). */
char *hfx_arena_strdup(hfx_arena *arena, const char *s);

/* printf into the arena. */
char *hfx_arena_printf(hfx_arena *arena, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
