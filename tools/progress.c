#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_init(progress_bar *p, const char *label, int quiet) {
    p->label = label;
    p->start = now();
    p->last = 0;
    p->enabled = !quiet && isatty(2);
}

void progress_update(void *user, uint64_t done, uint64_t total) {
    progress_bar *p = user;
    if (!p->enabled || total == 0) return;
    double t = now();
    if (done < total && t - p->last < 0.1) return;
    p->last = t;
    int width = 30, fill = (int)((double)done / (double)total * width);
    double rate = (double)done / (t - p->start + 1e-9) / 1e6;
    double eta = rate > 0 ? (double)(total - done) / 1e6 / rate : 0;
    fprintf(stderr, "\r%s [", p->label);
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %5.1f%% %7.1f MB/s ETA %4.0fs", 100.0 * (double)done / (double)total, rate, eta);
    fflush(stderr);
}

void progress_finish(progress_bar *p) {
    if (p->enabled && p->last > 0) fputc('\n', stderr);
}
