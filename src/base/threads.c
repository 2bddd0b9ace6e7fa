#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */

#include "base/threads.h"

#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include "cpu/thread_pool.h"

static int within_limits(long threads)
{
    return threads < 1 ? 1 : threads > WINO_MAX_THREADS ? WINO_MAX_THREADS : (int)threads;
}

int wino_default_threads(void)
{
    const char *env = getenv("OMP_NUM_THREADS");
    if (env) { /* "4" or a nested list "4,2": the outer level */
        char *end;
        const long n = strtol(env, &end, 10);
        if (end != env && n > 0)
            return within_limits(n);
    }
#ifdef __linux__
    cpu_set_t mask;
    if (!sched_getaffinity(0, sizeof mask, &mask))
        return within_limits(CPU_COUNT(&mask));
#endif
    return within_limits(sysconf(_SC_NPROCESSORS_ONLN));
}

int wino_context_threads(const struct wino_context *ctx)
{
    const int threads = ctx && ctx->threads ? ctx->threads : wino_default_threads();
    wino_thread_pool_reserve(threads);
    return threads;
}
