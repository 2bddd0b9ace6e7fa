/* Where the CPU pool's workers run (src/cpu/thread_pool.c), each case in a child process whose
 * pool is its own, with libgomp loaded under OMP_PROC_BIND=true and OMP_PLACES=threads (it binds
 * the main thread to one CPU as it loads):
 * 1. the process bound to one CPU first (taskset): the worker stays on that CPU;
 * 2. the process on all its CPUs: the worker runs on all of them, not on the main thread's one
 *    (on a machine of one CPU, on that CPU).
 * Linux with libgomp.so.1. Usage: test_thread_pool_affinity. */
#define _GNU_SOURCE /* CPU_SET, pthread_getaffinity_np, pthread_setaffinity_np */

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/thread_pool.h"
#include "test_util.h"

/* Each participant's CPU mask, recorded from inside the loop. */
static cpu_set_t masks[2];
static int recorded[2]; /* atomic */

static void record(void *arg, long begin, long end, int worker)
{
    (void)arg, (void)begin, (void)end;
    pthread_getaffinity_np(pthread_self(), sizeof masks[worker], &masks[worker]);
    __atomic_store_n(&recorded[worker], 1, __ATOMIC_RELEASE);
    /* each participant holds its chunk until the other has one: otherwise the first to come
     * (the caller, or the worker on a shared CPU) may run both chunks alone */
    while (!__atomic_load_n(&recorded[1 - worker], __ATOMIC_ACQUIRE))
        sched_yield();
}

static void print_cpus(const char *who, const cpu_set_t *cpus)
{
    printf("  %s:", who);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, cpus))
            printf(" %d", cpu);
    printf("\n");
}

/* In a child process: binds it to *bind (NULL: leaves it), loads libgomp, runs a 2-thread loop of
 * 2 chunks and exits 0 when the worker's CPUs are *expected and the caller's the one CPU libgomp
 * bound it to, 1 when not, 2 when the setup failed. */
static void child(const cpu_set_t *bind, const cpu_set_t *expected)
{
    alarm(60); /* a worker that never joins fails the case rather than hanging it */
    if (bind && pthread_setaffinity_np(pthread_self(), sizeof *bind, bind) != 0)
        _exit(2);
    if (setenv("OMP_PROC_BIND", "true", 1) != 0 || setenv("OMP_PLACES", "threads", 1) != 0 ||
        !dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL)) {
        printf("  libgomp.so.1 not loaded\n");
        _exit(2);
    }
    cpu_set_t bound;
    if (sched_getaffinity(0, sizeof bound, &bound) != 0 || CPU_COUNT(&bound) != 1) {
        printf("  libgomp did not bind the main thread to one CPU\n");
        _exit(2);
    }
    wino_thread_pool_reserve(2);
    wino_parallel_for(2, 2, 1, record, NULL);
    print_cpus("main thread as libgomp bound it", &bound);
    print_cpus("caller in the loop", &masks[0]);
    print_cpus("worker", &masks[1]);
    fflush(stdout);
    _exit(CPU_EQUAL(&masks[0], &bound) && CPU_EQUAL(&masks[1], expected) ? 0 : 1);
}

/* Runs child(bind, expected) in a child process: whether it exited 0. */
static int in_child(const cpu_set_t *bind, const cpu_set_t *expected)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0)
        child(bind, expected);
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int main(void)
{
    struct test_counts counts = {0, 0};
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        fprintf(stderr, "sched_getaffinity failed\n");
        return 2;
    }
    int last = CPU_SETSIZE - 1;
    while (last > 0 && !CPU_ISSET(last, &all))
        last--;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    printf("%d allowed CPUs\n", CPU_COUNT(&all));

    test_check(&counts, in_child(&one, &one),
               "a process bound to one CPU (taskset): the worker stays on it");
    test_check(&counts, in_child(NULL, &all),
               CPU_COUNT(&all) > 1 ? "a process on all its CPUs: the worker on all of them"
                                   : "a process on the machine's one CPU: the worker on it");
    return test_report(&counts);
}
