/* sync_file_range is Linux-only: ask for it before any include. */
#define _GNU_SOURCE
#include "io/bulk.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "base/status.h"

enum {
    NBUF = 3,                  /* one being filled, one being written, one spare for jitter */
    WRITE_BEHIND = 32 << 20,   /* start writeback every this many bytes */
    PANEL_SOURCE = 24 << 20,   /* default checkpoint bytes a transposed weight's panel keeps resident */
    HUGE_PAGE = 2 << 20,
};

/* What the writer does with one filled buffer: its len bytes go to the file in segments of seg
 * bytes, the first at offset `at` and each next one `stride` bytes further (a run when seg ==
 * len). A transposed weight is written this way, a panel of columns at a time. */
typedef struct job {
    size_t len, seg;
    uint64_t at, stride;
    uint64_t settled;          /* once this job is written, every byte below is final */
} job;

struct hfx_bulk {
    hfx_outdir *out;
    FILE *f;
    size_t chunk;
    uint64_t panel_source;     /* checkpoint bytes a transposed weight's panel may keep resident */
    uint8_t *buf[NBUF];
    job jobs[NBUF];            /* what to do with each queued buffer */
    int head, tail, queued;    /* ring: head is written next, tail filled next */
    bool threaded, closing, failed;
    int write_errno;
    uint64_t submitted;        /* the caller's side: file offset after every byte queued so far */
    bool crc_on;               /* keep a CRC-32 of what is queued (a zip entry's data) */
    uint32_t crc;
    uint64_t flushed;          /* the writer's side: how far writeback has started */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Write one buffer (the writer thread, or the caller's when unthreaded): 0 or an errno. Only
 * this function touches the file and `flushed` while the writer runs. It writes to the
 * descriptor at explicit offsets, not through stdio: the stream's buffer would be allocated on
 * the writer's first write, in the writer's thread, and the buffers here are already large. */
static int write_job(hfx_bulk *b, const uint8_t *data, const job *j) {
    int fd = fileno(b->f);
    for (size_t done = 0; done < j->len; done += j->seg) {
        const uint8_t *p = data + done;
        size_t n = j->len - done < j->seg ? j->len - done : j->seg;
        uint64_t at = j->at + done / j->seg * j->stride;
        while (n) {
            ssize_t k = pwrite(fd, p, n, (off_t)at);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return k < 0 ? errno : EIO;
            p += k, n -= (size_t)k, at += (uint64_t)k;
        }
    }
#ifdef SYNC_FILE_RANGE_WRITE
    /* Only a hint to start the disk now: errors surface at the final fsync. Never below bytes
     * still to be written, or a page would go to disk twice. */
    if (j->settled > b->flushed && j->settled - b->flushed >= WRITE_BEHIND) {
        sync_file_range(fd, (off_t)b->flushed, (off_t)(j->settled - b->flushed), SYNC_FILE_RANGE_WRITE);
        b->flushed = j->settled;
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
        int e = skip ? 0 : write_job(b, b->buf[i], &b->jobs[i]);
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
    b->panel_source = PANEL_SOURCE;
    off_t at = lseek(fileno(f), 0, SEEK_CUR); /* the descriptor's: stdio's may be stale after an earlier writer */
    b->submitted = b->flushed = at > 0 ? (uint64_t)at : 0;
    /* one region for the buffers, in whole huge pages where the kernel gives them: a transposed
     * weight's panel writes its pieces a row apart, and with 4 KiB pages every row would cost a
     * TLB miss */
    size_t region = (NBUF * chunk + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *mem = NULL;
    if (posix_memalign(&mem, HUGE_PAGE, region) != 0) {
        free(b);
        return hfx_fail(err, HFX_ERR_NOMEM, "out of memory");
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(mem, region, MADV_HUGEPAGE); /* a hint */
#endif
    for (int i = 0; i < NBUF; i++) b->buf[i] = (uint8_t *)mem + (size_t)i * chunk;
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

static void queue(hfx_bulk *b, const job *j) {
    if (!b->threaded) {
        int e = b->failed ? 0 : write_job(b, b->buf[0], j);
        if (e) b->failed = true, b->write_errno = e;
        return;
    }
    pthread_mutex_lock(&b->mu);
    b->jobs[b->tail] = *j;
    b->tail = (b->tail + 1) % NBUF;
    b->queued++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Queue the first n bytes of p, the buffer next_buffer returned last, to go after every byte
 * queued so far. */
static void submit(hfx_bulk *b, const uint8_t *p, size_t n) {
    if (b->crc_on) b->crc = (uint32_t)crc32(b->crc, p, (uInt)n); /* chunks stay far below 4 GiB */
    queue(b, &(job){.len = n, .seg = n, .at = b->submitted, .stride = n, .settled = b->submitted + n});
    b->submitted += n;
    hfx_outdir_progress_add(b->out, n);
}

/* A transposed weight (hfx_init_is_transposed), out [rows, cols] = W^T, in panels of P columns:
 * each panel reads P whole rows of W, sequentially in the checkpoint, and releases them once
 * read, so resident memory stays near PANEL_SOURCE whatever the weight's size. A panel's output
 * is P elements of every output row: buffers of J such pieces go to the file as segments a row
 * apart (the output row's bytes are final when the last panel has written its piece). */
static hfx_status stream_transposed(hfx_bulk *b, const hfx_init *src, hfx_error *err) {
    int64_t rows = src->shape[0], cols = src->shape[1];
    size_t es = hfx_dtype_size(src->dtype), ss = hfx_dtype_size(src->parts[0].src_dtype);
    int64_t panel = (int64_t)(b->panel_source / ((uint64_t)rows * ss));
    if (panel > (int64_t)(b->chunk / es)) panel = (int64_t)(b->chunk / es); /* a piece fits a buffer */
    if (panel > 64) panel &= ~(int64_t)63; /* whole squares of the transposing kernel */
    if (panel < 1) panel = 1;
    if (panel > cols) panel = cols;
    int64_t per_buffer = (int64_t)(b->chunk / ((uint64_t)panel * es)); /* output rows' pieces per job */
    if (per_buffer > 64) per_buffer &= ~(int64_t)63; /* whole cache lines of each source row per job */
    uint64_t base = b->submitted, end = base + hfx_init_nbytes(src);
    hfx_status st = HFX_OK;
    hfx_init_advise_columns(src, 0, panel, true);
    for (int64_t c0 = 0; c0 < cols && st == HFX_OK; c0 += panel) {
        int64_t pc = cols - c0 < panel ? cols - c0 : panel;
        if ((st = hfx_outdir_check_cancel(b->out, err)) || (st = hfx_init_check_files(src, err))) break;
        if (c0 + pc < cols) /* the disk reads the next panel while this one is transposed */
            hfx_init_advise_columns(src, c0 + pc, cols - c0 - pc < panel ? cols - c0 - pc : panel, true);
        for (int64_t r0 = 0; r0 < rows && st == HFX_OK; r0 += per_buffer) {
            int64_t nr = rows - r0 < per_buffer ? rows - r0 : per_buffer;
            /* as often as the in-order path asks: a file truncated mid-panel would raise SIGBUS */
            if (r0 && ((st = hfx_outdir_check_cancel(b->out, err)) || (st = hfx_init_check_files(src, err)))) break;
            uint8_t *chunk = next_buffer(b);
            if (!chunk) return HFX_OK; /* a write failed: hfx_bulk_close reports it */
            if ((st = hfx_init_read_block(src, r0, nr, c0, pc, chunk, err))) break;
            size_t n = (size_t)(nr * pc) * es;
            bool last = c0 + pc == cols && r0 + nr == rows;
            queue(b, &(job){.len = n, .seg = pc == cols ? n : (size_t)pc * es, .at = base + (uint64_t)(r0 * cols + c0) * es,
                            .stride = (uint64_t)cols * es, .settled = last ? end : base});
            hfx_outdir_progress_add(b->out, n);
        }
        hfx_init_advise_columns(src, c0, pc, false);
    }
    b->submitted = end;
    return st;
}

hfx_status hfx_bulk_stream(hfx_bulk *b, const hfx_init *src, const uint8_t *bytes, uint64_t nbytes,
                           hfx_error *err) {
    bool packed = src && hfx_dtype_is_packed(src->dtype); /* elements without an address of their own */
    if (packed && !src->quant)
        return hfx_fail(err, HFX_ERR_UNSUPPORTED, "'%s': writing packed %s weights is not supported yet",
                        src->source, hfx_dtype_name(src->dtype));
    /* a transposed weight in panels, but in order for a zip entry, whose CRC needs the bytes in order */
    if (src && !b->crc_on && hfx_init_is_transposed(src) && nbytes == hfx_init_nbytes(src) && nbytes > 0 &&
        b->chunk >= hfx_dtype_size(src->dtype)) {
        hfx_status st = stream_transposed(b, src, err);
        hfx_init_release(src);
        return st;
    }
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

void hfx_bulk_set_panel_source(hfx_bulk *b, uint64_t bytes) { b->panel_source = bytes; }

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
    /* the stream goes on after the last byte queued, as if it had been written in order */
    if (!b->failed && lseek(fileno(b->f), (off_t)b->submitted, SEEK_SET) < 0)
        b->failed = true, b->write_errno = errno;
    if (b->failed)
        st = hfx_fail(err, HFX_ERR_IO, "%s: write failed: %s", name,
                      strerror(b->write_errno));
    free(b->buf[0]); /* the region */
    free(b);
    return st;
}
