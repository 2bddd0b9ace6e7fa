/* How many CPU threads an operator uses: the one place that resolves struct wino_context's
 * threads (policy in include/wino.h). */
#ifndef WINO_BASE_THREADS_H
#define WINO_BASE_THREADS_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The threads this process may use: OMP_NUM_THREADS when it starts with a positive number,
 * else the CPUs of the calling thread's affinity mask (the online CPUs where that is unknown);
 * within [1, WINO_MAX_THREADS]. */
int wino_default_threads(void);

/* ctx->threads, or wino_default_threads() for a NULL context or threads 0 (ctx checked by
 * wino_context_check), with the thread pool's workers started for them: what every create
 * calls. */
int wino_context_threads(const struct wino_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
