#include "base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vfail(hfx_error *err, hfx_status status, const char *fmt, va_list ap) {
    if (!err) return;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    err->status = status;
}

hfx_status hfx_fail(hfx_error *err, hfx_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(err, status, fmt, ap);
    va_end(ap);
    return status;
}

void hfx_error_prefix(hfx_error *err, const char *fmt, ...) {
    if (!err) return;
    char prefix[512], old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%.500s: %.1500s", prefix, old);
}

hfx_status hfx_fail_once(hfx_status *sticky, hfx_error *err, hfx_status status, const char *fmt, ...) {
    if (*sticky) return *sticky;
    *sticky = status;
    va_list ap;
    va_start(ap, fmt);
    vfail(err, status, fmt, ap);
    va_end(ap);
    return status;
}
