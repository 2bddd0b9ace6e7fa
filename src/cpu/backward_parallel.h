/* The parallel loops of the backward paths, in one form: fn(arg, begin, end, worker) over items
 * [0, n), worker (0 .. threads - 1) selecting the caller's per-thread buffers, one item at a
 * time as threads free up (items differ in size). Run by OpenMP here; any pool with the same
 * contract can take its place in this one function. */
#ifndef WINO_CPU_BACKWARD_PARALLEL_H
#define WINO_CPU_BACKWARD_PARALLEL_H

#include <omp.h>

typedef void wino_backward_items_fn(void *arg, long begin, long end, int worker);

static inline void wino_backward_parallel(int threads, long n, wino_backward_items_fn *fn,
                                          void *arg)
{
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (long i = 0; i < n; i++)
        fn(arg, i, i + 1, omp_get_thread_num());
}

#endif
