/* wino_fail() and wino_ok() inside the CUDA component: the message is formatted here and handed
 * to the runtime's services, which keep it for wino_last_error(). Hidden like every symbol of
 * the component but wino_cuda_component. */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "cuda/component_error.h"

static const struct wino_cuda_services *services;

int wino_cuda_use_services(const struct wino_cuda_services *s)
{
    if (!s || s->abi != WINO_CUDA_ABI || !s->fail || !s->ok)
        return 0;
    services = s;
    return 1;
}

enum wino_status wino_fail(enum wino_status status, const char *fmt, ...)
{
    char message[256]; /* wino_last_error()'s length */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return services->fail(status, "%s", message);
}

enum wino_status wino_ok(void)
{
    return services->ok();
}
