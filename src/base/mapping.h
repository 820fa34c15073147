/* A read-only file mapping that stays checkable: the descriptor is kept open so that a reader
 * can ask, before touching the pages, whether the file still has the size it was mapped with.
 * A file truncated under a mapping raises SIGBUS on access; checking first turns that into an
 * error for every truncation that happens before the check. */
#ifndef HFX_BASE_MAPPING_H
#define HFX_BASE_MAPPING_H

#include <stdbool.h>
#include <stdint.h>

typedef struct hfx_mapping {
    int fd;             /* open for as long as the mapping lives; -1: nothing to check */
    uint64_t size;      /* the file's size when it was mapped */
    const char *path;   /* for messages */
} hfx_mapping;

/* Whether the file is still at least as long as when it was mapped (an fstat). */
bool hfx_mapping_intact(const hfx_mapping *m);

#endif
