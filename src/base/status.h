/* Errors: one helper that fills an hfx_error and returns its status, so a failing path reads
 * `return hfx_fail(err, HFX_ERR_INVALID, "%s: ...", path);`. */
#ifndef HFX_BASE_STATUS_H
#define HFX_BASE_STATUS_H

#include "hfx/hfx.h"

#if defined(__GNUC__)
#define HFX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HFX_PRINTF(a, b)
#endif

/* Fill *err (when not NULL) with `status` and the formatted message; return `status`. */
hfx_status hfx_fail(hfx_error *err, hfx_status status, const char *fmt, ...) HFX_PRINTF(3, 4);

/* The first-error-wins form for passes that keep going after a failure (the lowerings): when
 * *sticky is already set, nothing changes; otherwise record `status` in *sticky and *err. */
hfx_status hfx_fail_once(hfx_status *sticky, hfx_error *err, hfx_status status, const char *fmt, ...)
    HFX_PRINTF(4, 5);

/* Prefix err->message with "context: " (used to add the component or file name on the way up). */
void hfx_error_prefix(hfx_error *err, const char *fmt, ...) HFX_PRINTF(2, 3);

#endif
