#include "base/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define WINO_THREAD_LOCAL __thread
#else
#define WINO_THREAD_LOCAL
#endif

static WINO_THREAD_LOCAL char last_error[256];

enum wino_status wino_fail(enum wino_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

enum wino_status wino_ok(void)
{
    last_error[0] = '\0';
    return WINO_SUCCESS;
}

const char *wino_last_error(void)
{
    return last_error;
}

int wino_mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

const char *wino_status_string(enum wino_status status)
{
    switch (status) {
    case WINO_SUCCESS:
        return "success";
    case WINO_INVALID_ARGUMENT:
        return "invalid argument: the call broke a rule documented in wino.h";
    case WINO_UNSUPPORTED:
        return "unsupported: a valid request this build cannot serve (fall back to another path)";
    case WINO_OUT_OF_MEMORY:
        return "out of memory";
    case WINO_INSUFFICIENT_WORKSPACE:
        return "insufficient workspace: NULL, too small or not 64-byte aligned";
    case WINO_DEVICE_ERROR:
        return "device error: the GPU runtime reported a failure";
    case WINO_INTERNAL_ERROR:
        return "internal error in wino";
    }
    return "unknown status value";
}

/* The version macros of wino.h spelled out, so the library and its header cannot disagree. */
#define WINO_STRINGIFY_(x) #x
#define WINO_STRINGIFY(x) WINO_STRINGIFY_(x)

const char *wino_version(void)
{
    return WINO_STRINGIFY(WINO_VERSION_MAJOR) "." WINO_STRINGIFY(WINO_VERSION_MINOR) "."
        WINO_STRINGIFY(WINO_VERSION_PATCH);
}
