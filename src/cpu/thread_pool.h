/* The CPU paths' parallel loops: one pool of worker threads per process, shared by every
 * operator. A loop is cut into chunks that the calling thread and the workers claim one at a
 * time; the caller never waits for a worker that has not claimed a chunk, so on a loaded machine
 * (a worker not scheduled in time) the caller simply does more of the work. Idle workers spin
 * briefly, then sleep on a condition variable: they leave the CPUs to other processes. */
#ifndef WINO_CPU_THREAD_POOL_H
#define WINO_CPU_THREAD_POOL_H

#ifdef __cplusplus
extern "C" {
#endif

/* One chunk of a loop: items [begin, end) run by participant `worker` (0 the calling thread,
 * 1 .. threads - 1 the workers that joined), which no other participant of the same loop shares:
 * it selects per-thread buffers. */
typedef void wino_parallel_fn(void *arg, long begin, long end, int worker);

/* Starts workers until the pool has threads - 1 of them (threads <= WINO_MAX_THREADS), or the
 * system refuses one: the loops then run with fewer. Called when an operator is created
 * (wino_context_threads), so that run() normally starts no thread; a loop starts the workers
 * it misses itself. */
void wino_thread_pool_reserve(int threads);

/* fn over [0, n) in chunks of grain items, on the calling thread and up to threads - 1 workers;
 * returns when every chunk is done. When another thread's loop holds the pool, this one runs
 * on the calling thread alone. */
void wino_parallel_for(int threads, long n, long grain, wino_parallel_fn *fn, void *arg);

/* Items per block for `items` cut into blocks of at most `most`: where that makes at least a
 * block per thread, the blocks are made equal and their count a multiple of the threads (196
 * items in blocks of 64 or 80 leave a thread idle for a block; four blocks of 49 do not). Never
 * more than `most`. */
static inline long wino_balanced_block(long items, long most, int threads)
{
    const long blocks = (items + most - 1) / most;
    if (blocks < threads)
        return most;
    const long balanced = (blocks + threads - 1) / threads * threads;
    return (items + balanced - 1) / balanced;
}

#ifdef __cplusplus
}
#endif

#endif
