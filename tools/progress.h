/* A progress bar on stderr, drawn only when stderr is a terminal, at most ~10 times a second. */
#ifndef HFX_TOOLS_PROGRESS_H
#define HFX_TOOLS_PROGRESS_H

#include <stdint.h>

typedef struct progress_bar {
    const char *label;
    double start, last;
    int enabled;
} progress_bar;

void progress_init(progress_bar *p, const char *label, int quiet);
/* hfx_progress_fn-compatible callback; user = progress_bar*. */
void progress_update(void *user, uint64_t done, uint64_t total);
void progress_finish(progress_bar *p);

#endif
