/* Status helpers: every failing entry point records a one-line reason for wino_last_error(). */
#ifndef WINO_BASE_ERROR_H
#define WINO_BASE_ERROR_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WINO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WINO_PRINTF(f, a)
#endif

/* Records the reason (printf-style) and returns status. wino_fail and wino_ok are exported by a
 * shared libwino beside the functions of wino.h (WINO_API): libwino_gen reports through them, so
 * that one wino_last_error() explains the calls of both libraries. */
WINO_API enum wino_status wino_fail(enum wino_status status, const char *fmt, ...)
    WINO_PRINTF(2, 3);
/* Clears the reason at the start of a public call; returns WINO_SUCCESS. */
WINO_API enum wino_status wino_ok(void);

/* *out = a * b, returning 0, or -1 on size_t overflow (then *out is untouched). */
int wino_mul_size(size_t a, size_t b, size_t *out);

#ifdef __cplusplus
}
#endif

#endif
