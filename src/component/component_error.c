/* wino_fail() and wino_ok() inside a backend component: the message is formatted here and
 * handed to the runtime's services, which keep it for wino_last_error(). Hidden like every
 * symbol of the component but its entry. */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "component/component_error.h"

static const struct wino_component_services *services;

int wino_component_use_services(const struct wino_component_services *s, int abi)
{
    if (!s || s->abi != abi || !s->fail || !s->ok)
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
