/* sync_file_range is Linux-only: ask for it before any include. */
#define _GNU_SOURCE
#include "io/bulk.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/status.h"

enum {
    NBUF = 3,                  /* one being filled, one being written, one spare for jitter */
    WRITE_BEHIND = 32 << 20,   /* start writeback every this many bytes */
};

struct hfx_bulk {
    hfx_outdir *out;
    FILE *f;
    size_t chunk;
    uint8_t *buf[NBUF];
    size_t len[NBUF];          /* bytes queued in each buffer */
    int head, tail, queued;    /* ring: head is written next, tail filled next */
    bool threaded, closing, failed;
    int write_errno;
    uint64_t submitted;        /* the caller's side: file offset after every byte queued so far */
    bool crc_on;               /* keep a CRC-32 of what is queued (a zip entry's data) */
    uint32_t crc;
    uint64_t pos, flushed;     /* the writer's side: bytes written, and how far writeback has started */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Write one buffer (the writer thread, or the caller's when unthreaded): 0 or an errno. Only
 * this function touches the file, pos and flushed while the writer runs. It writes to the
 * descriptor, not through stdio: the stream's buffer would be allocated on the writer's first
 * write, in the writer's thread, and the buffers here are already large. */
static int write_buffer(hfx_bulk *b, const uint8_t *data, size_t n) {
    int fd = fileno(b->f);
    while (n) {
        ssize_t k = write(fd, data, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        data += k, n -= (size_t)k, b->pos += (uint64_t)k;
    }
#ifdef SYNC_FILE_RANGE_WRITE
    /* Only a hint to start the disk now: errors surface at the final fsync. */
    if (b->pos - b->flushed >= WRITE_BEHIND) {
        sync_file_range(fileno(b->f), (off_t)b->flushed, (off_t)(b->pos - b->flushed),
                        SYNC_FILE_RANGE_WRITE);
        b->flushed = b->pos;
    }
#endif
    return 0;
}

static void *writer(void *arg) {
    hfx_bulk *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (b->queued == 0 && !b->closing) pthread_cond_wait(&b->cv, &b->mu);
        if (b->queued == 0) break; /* closing, and everything is written */
        int i = b->head;
        bool skip = b->failed;
        pthread_mutex_unlock(&b->mu);
        int e = skip ? 0 : write_buffer(b, b->buf[i], b->len[i]);
        pthread_mutex_lock(&b->mu);
        if (e) b->failed = true, b->write_errno = e;
        b->head = (b->head + 1) % NBUF;
        b->queued--;
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

hfx_status hfx_bulk_open(hfx_outdir *out, FILE *f, size_t chunk, hfx_bulk **bp, hfx_error *err) {
    if (fflush(f) != 0) /* stdio's part first: the writer writes to the descriptor */
        return hfx_fail(err, HFX_ERR_IO, "a write before the weights failed: %s", strerror(errno));
    hfx_bulk *b = calloc(1, sizeof *b);
    if (!b) return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    b->out = out;
    b->f = f;
    b->chunk = chunk;
    off_t at = lseek(fileno(f), 0, SEEK_CUR); /* the descriptor's: stdio's may be stale after an earlier writer */
    b->submitted = b->pos = b->flushed = at > 0 ? (uint64_t)at : 0;
    for (int i = 0; i < NBUF; i++) {
        if (!(b->buf[i] = malloc(chunk))) {
            for (int j = 0; j < i; j++) free(b->buf[j]);
            free(b);
            return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
        }
    }
    if (pthread_mutex_init(&b->mu, NULL) == 0) {
        if (pthread_cond_init(&b->cv, NULL) == 0) {
            b->threaded = pthread_create(&b->thread, NULL, writer, b) == 0;
            if (!b->threaded) pthread_cond_destroy(&b->cv);
        }
        if (!b->threaded) pthread_mutex_destroy(&b->mu);
    }
    *bp = b;
    return HFX_OK;
}

/* A free buffer of `chunk` bytes to fill (waits for the writer to free one); NULL once a write
 * has failed: stop, and hfx_bulk_close reports it. */
static uint8_t *next_buffer(hfx_bulk *b) {
    if (!b->threaded) return b->failed ? NULL : b->buf[0];
    pthread_mutex_lock(&b->mu);
    while (b->queued == NBUF) pthread_cond_wait(&b->cv, &b->mu);
    uint8_t *p = b->failed ? NULL : b->buf[b->tail];
    pthread_mutex_unlock(&b->mu);
    return p;
}

static void queue(hfx_bulk *b, size_t n) {
    if (!b->threaded) {
        int e = b->failed ? 0 : write_buffer(b, b->buf[0], n);
        if (e) b->failed = true, b->write_errno = e;
        return;
    }
    pthread_mutex_lock(&b->mu);
    b->len[b->tail] = n;
    b->tail = (b->tail + 1) % NBUF;
    b->queued++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Queue the first n bytes of p, the buffer next_buffer returned last. */
static void submit(hfx_bulk *b, const uint8_t *p, size_t n) {
    if (b->crc_on) b->crc = (uint32_t)crc32(b->crc, p, (uInt)n); /* chunks stay far below 4 GiB */
    queue(b, n);
    b->submitted += n;
    hfx_outdir_progress_add(b->out, n);
}

hfx_status hfx_bulk_stream(hfx_bulk *b, const hfx_init *src, const uint8_t *bytes, uint64_t nbytes,
                           hfx_error *err) {
    bool packed = src && hfx_dtype_is_packed(src->dtype); /* elements without an address of their own */
    if (packed && !src->quant)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "'%s': writing packed %s weights is not supported yet",
                        src->source, hfx_dtype_name(src->dtype));
    size_t es = src && !packed ? hfx_dtype_size(src->dtype) : 1; /* a quantized part's packed codes: bytes */
    uint64_t step = b->chunk / es, total = nbytes / es; /* in elements */
    hfx_status st = HFX_OK;
    for (uint64_t done = 0; done < total && st == HFX_OK; done += step) {
        if ((st = hfx_outdir_check_cancel(b->out, err))) break;
        if (src && (st = hfx_init_check_files(src, err))) break; /* a truncated file would raise SIGBUS */
        uint64_t k = total - done < step ? total - done : step;
        uint8_t *chunk = next_buffer(b);
        if (!chunk) break;
        if (src)
            st = hfx_init_read(src, done, k, chunk, err);
        else
            memcpy(chunk, bytes + done, k);
        if (st) break;
        submit(b, chunk, k * es);
        if (src) hfx_init_release_range(src, done, k);
    }
    if (src) hfx_init_release(src);
    return st;
}

void hfx_bulk_pad_to(hfx_bulk *b, uint64_t offset) {
    while (b->submitted < offset) {
        size_t k = offset - b->submitted < b->chunk ? (size_t)(offset - b->submitted) : b->chunk;
        uint8_t *p = next_buffer(b);
        if (!p) return;
        memset(p, 0, k);
        submit(b, p, k); /* progress counts file bytes, padding included */
    }
}

void hfx_bulk_crc_start(hfx_bulk *b) {
    b->crc_on = true;
    b->crc = (uint32_t)crc32(0, Z_NULL, 0);
}

uint32_t hfx_bulk_crc(const hfx_bulk *b) { return b->crc; }

uint64_t hfx_bulk_offset(const hfx_bulk *b) { return b->submitted; }

hfx_status hfx_bulk_close(hfx_bulk *b, const char *name, hfx_error *err) {
    if (b->threaded) {
        pthread_mutex_lock(&b->mu);
        b->closing = true;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->thread, NULL);
        pthread_cond_destroy(&b->cv);
        pthread_mutex_destroy(&b->mu);
    }
    hfx_status st = HFX_OK;
    if (b->failed)
        st = hfx_fail(err, HFX_ERR_IO, "%s: write failed: %s", name,
                      strerror(b->write_errno));
    for (int i = 0; i < NBUF; i++) free(b->buf[i]);
    free(b);
    return st;
}
