#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np, RTLD_DEFAULT (Linux) */

#include "cpu/thread_pool.h"

#include <pthread.h>

#ifdef __linux__
#include <dlfcn.h>
#include <sched.h>
#include <string.h>
#endif

/* Pause instructions an idle worker (or a caller waiting for the last chunks) spins before it
 * sleeps: 25 to 50 microseconds (26 measured on an AMD EPYC), enough to catch the next loop of
 * the same run() without a wake-up, short enough to cost nothing measurable when another
 * process needs the CPU. */
#define SPIN 1000

static void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

struct job {
    wino_parallel_fn *fn;
    void *arg;
    long n, grain;
    long next;  /* the first unclaimed item (atomic) */
    int seats;  /* workers that may still join */
    int joined; /* workers that joined: their participant numbers are 1 .. joined */
    int active; /* joined workers still running chunks (atomic; changed under the lock) */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* workers sleep here between jobs */
    pthread_cond_t done; /* the caller sleeps here until the last worker leaves its job */
    struct job *job;     /* the open job, or NULL */
    unsigned long generation; /* jobs posted so far (atomic: idle workers spin on it) */
    int workers;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL,
          0, 0};

static void run_chunks(struct job *j, int worker)
{
    for (;;) {
        const long begin = __atomic_fetch_add(&j->next, j->grain, __ATOMIC_RELAXED);
        if (begin >= j->n)
            return;
        j->fn(j->arg, begin, j->n - begin < j->grain ? j->n : begin + j->grain, worker);
    }
}

/* With the lock held: whether a job this worker has not seen yet has a free seat. */
static int job_waiting(unsigned long seen)
{
    return pool.job && pool.job->seats > 0 && pool.generation != seen;
}

static void *worker_main(void *unused)
{
    (void)unused;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        if (!job_waiting(seen)) {
            pthread_mutex_unlock(&pool.lock);
            for (int i = 0; i < SPIN && __atomic_load_n(&pool.generation, __ATOMIC_RELAXED) == seen;
                 i++)
                cpu_relax();
            pthread_mutex_lock(&pool.lock);
            while (!job_waiting(seen))
                pthread_cond_wait(&pool.wake, &pool.lock);
        }
        struct job *j = pool.job;
        seen = pool.generation;
        j->seats--;
        const int worker = ++j->joined;
        __atomic_add_fetch(&j->active, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&pool.lock);
        run_chunks(j, worker);
        pthread_mutex_lock(&pool.lock);
        /* the last use of j: once active is 0 its caller may return */
        if (__atomic_sub_fetch(&j->active, 1, __ATOMIC_ACQ_REL) == 0)
            pthread_cond_broadcast(&pool.done); /* callers of closed jobs may wait together */
    }
    return NULL;
}

#ifdef __linux__
/* Whether a pool of `threads` should start its workers on *cpus, the calling thread's CPUs and
 * the OpenMP runtime's places: when the caller has fewer CPUs than threads. libgomp binds the
 * main thread to one place when it loads (OMP_PROC_BIND, OMP_PLACES); its places are the CPUs
 * the process had then, so they spread the workers yet keep them inside a taskset. */
static int spread_cpus(cpu_set_t *cpus, int threads)
{
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) >= threads)
        return 0;
    void *symbols[3] = {dlsym(RTLD_DEFAULT, "omp_get_num_places"),
                        dlsym(RTLD_DEFAULT, "omp_get_place_num_procs"),
                        dlsym(RTLD_DEFAULT, "omp_get_place_proc_ids")};
    int (*num_places)(void), (*num_procs)(int);
    void (*proc_ids)(int, int *);
    if (!symbols[0] || !symbols[1] || !symbols[2])
        return 0;
    memcpy(&num_places, &symbols[0], sizeof num_places); /* ISO C has no such cast */
    memcpy(&num_procs, &symbols[1], sizeof num_procs);
    memcpy(&proc_ids, &symbols[2], sizeof proc_ids);
    *cpus = mine;
    for (int place = 0, places = num_places(); place < places; place++) {
        int ids[CPU_SETSIZE];
        const int n = num_procs(place);
        if (n < 0 || n > CPU_SETSIZE)
            return 0;
        proc_ids(place, ids);
        for (int i = 0; i < n; i++)
            if (ids[i] >= 0 && ids[i] < CPU_SETSIZE)
                CPU_SET(ids[i], cpus);
    }
    return CPU_COUNT(cpus) > CPU_COUNT(&mine);
}
#endif

/* With the lock held: starts workers until there are `want` (or the system refuses one). */
static void start_workers(int want)
{
#ifdef __linux__
    cpu_set_t cpus;
    const int spread = pool.workers < want && spread_cpus(&cpus, want + 1);
#endif
    while (pool.workers < want) {
        pthread_t t;
        pthread_attr_t attr;
        int failed = pthread_attr_init(&attr);
        if (!failed) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            failed = pthread_create(&t, &attr, worker_main, NULL);
            pthread_attr_destroy(&attr);
        }
        if (failed)
            return;
#ifdef __linux__
        if (spread) /* the worker waits for the lock we hold; on failure it keeps our CPUs */
            pthread_setaffinity_np(t, sizeof cpus, &cpus);
#endif
        pool.workers++;
    }
}

void wino_thread_pool_reserve(int threads)
{
    pthread_mutex_lock(&pool.lock);
    start_workers(threads - 1);
    pthread_mutex_unlock(&pool.lock);
}

void wino_parallel_for(int threads, long n, long grain, wino_parallel_fn *fn, void *arg)
{
    struct job j = {fn, arg, n, grain < 1 ? 1 : grain, 0, 0, 0, 0};
    if (n <= 0)
        return;
    if (threads <= 1 || n <= j.grain) {
        fn(arg, 0, n, 0);
        return;
    }
    const long chunks = (n + j.grain - 1) / j.grain;
    j.seats = (int)(chunks - 1 < threads - 1 ? chunks - 1 : threads - 1);
    pthread_mutex_lock(&pool.lock);
    if (pool.job == NULL)
        start_workers(threads - 1); /* normally done at create: see wino_thread_pool_reserve */
    const int shared = pool.job == NULL && pool.workers > 0;
    if (shared) {
        pool.job = &j;
        __atomic_add_fetch(&pool.generation, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&pool.wake);
    }
    pthread_mutex_unlock(&pool.lock);
    run_chunks(&j, 0); /* every chunk is claimed when it returns */
    if (!shared)
        return;
    pthread_mutex_lock(&pool.lock);
    pool.job = NULL; /* closed: no worker joins any more, those in it finish their chunks */
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < SPIN && __atomic_load_n(&j.active, __ATOMIC_ACQUIRE); i++)
        cpu_relax();
    if (!__atomic_load_n(&j.active, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&pool.lock);
    while (__atomic_load_n(&j.active, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}
