/* The parallel loops of the backward paths, in one form: fn(arg, begin, end, worker) over items
 * [0, n), worker (0 .. threads - 1) selecting the caller's per-thread buffers, one item at a
 * time as threads free up (items differ in size). Run by the CPU thread pool
 * (src/cpu/thread_pool.h). */
#ifndef WINO_CPU_BACKWARD_PARALLEL_H
#define WINO_CPU_BACKWARD_PARALLEL_H

#include "cpu/thread_pool.h"

typedef wino_parallel_fn wino_backward_items_fn;

static inline void wino_backward_parallel(int threads, long n, wino_backward_items_fn *fn,
                                          void *arg)
{
    wino_parallel_for(threads, n, 1, fn, arg);
}

#endif
