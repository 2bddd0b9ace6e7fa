/* The CUDA backend is a component that libwino loads on the first CUDA call
 * (src/op/cuda_loader.c). Without one (WINO_CUDA_LIBRARY naming a missing file, or a library
 * that is not a component) every CUDA entry answers WINO_UNSUPPORTED with a message naming the
 * file, from any number of threads at once, and the CPU backend works as before; run_stream
 * takes stream NULL only on a CPU operator. Each case runs in a child process of its own, since
 * a process loads the component once. */
#define _POSIX_C_SOURCE 200809L /* fork, setenv */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "wino.h"

static struct test_counts counts;

/* 1 when status is WINO_UNSUPPORTED and wino_last_error() holds every one of the texts. */
static int unsupported_naming(enum wino_status st, const char *text1, const char *text2)
{
    const char *why = wino_last_error();
    const int ok = st == WINO_UNSUPPORTED && strstr(why, text1) && (!text2 || strstr(why, text2));
    if (!ok)
        printf("  got %s: \"%s\"\n", wino_status_string(st), why);
    return ok;
}

static const float weights[4 * 4 * 3 * 3];

static enum wino_status create_on_cuda(wino_conv2d **op)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 4, 8, 8, 4, 3, 3, 1, 1);
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_CUDA;
    return wino_conv2d_create(&d, weights, &ctx, NULL, op);
}

struct racer {
    enum wino_status status;
    char why[256];
};

static void *race(void *arg)
{
    struct racer *r = arg;
    wino_conv2d *op = NULL;
    r->status = create_on_cuda(&op);
    snprintf(r->why, sizeof r->why, "%s", wino_last_error());
    wino_conv2d_destroy(op);
    return NULL;
}

/* A missing file: FP32 and INT8 creates refused, naming it, twice; the CPU still runs. */
static int missing_component(const char *path)
{
    int ok = 1;
    wino_conv2d *op = NULL;
    for (int i = 0; i < 2; i++) {
        ok &= unsupported_naming(create_on_cuda(&op), path, "No such file");
        ok &= op == NULL;
    }
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 4, 8, 8, 4, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_S8;
    struct wino_int8_params params;
    memset(&params, 0, sizeof params);
    params.x_scale = params.alpha_ta = params.alpha_tw = params.y_scale = 1.0f;
    params.y_dtype = WINO_DTYPE_S8;
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_CUDA;
    ok &= unsupported_naming(wino_conv2d_create_int8(&d, weights, &params, &ctx, NULL, &op), path,
                             NULL);

    /* the CPU backend in the same process */
    const struct wino_conv2d_desc cpu = wino_conv2d_desc_make(1, 4, 8, 8, 4, 3, 3, 1, 1);
    static float x[4 * 8 * 8], y[4 * 8 * 8];
    size_t bytes = 0;
    ok &= wino_conv2d_create(&cpu, weights, NULL, NULL, &op) == WINO_SUCCESS &&
          wino_conv2d_workspace_size(op, &bytes) == WINO_SUCCESS;
    void *workspace = test_alloc64(bytes);
    if (ok) {
        ok &= wino_conv2d_run_stream(op, x, y, workspace, bytes, NULL) == WINO_SUCCESS;
        int not_a_stream;
        ok &= wino_conv2d_run_stream(op, x, y, workspace, bytes, &not_a_stream) ==
                  WINO_INVALID_ARGUMENT &&
              strstr(wino_last_error(), "stream NULL");
    }
    free(workspace);
    wino_conv2d_destroy(op);
    return ok;
}

/* A library that loads but exports no component. */
static int not_a_component(const char *path)
{
    wino_conv2d *op = NULL;
    return unsupported_naming(create_on_cuda(&op), path, "not a wino CUDA component");
}

/* Eight threads ask for the component at once: each gets the refusal, with the message. */
static int first_calls_race(const char *path)
{
    enum { THREADS = 8 };
    pthread_t t[THREADS];
    struct racer r[THREADS];
    int ok = 1;
    for (int i = 0; i < THREADS; i++)
        ok &= pthread_create(&t[i], NULL, race, &r[i]) == 0;
    for (int i = 0; ok && i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; ok && i < THREADS; i++) {
        ok &= r[i].status == WINO_UNSUPPORTED && strstr(r[i].why, path) != NULL;
        if (!ok)
            printf("  thread %d: %s: \"%s\"\n", i, wino_status_string(r[i].status), r[i].why);
    }
    return ok;
}

/* Runs check(path) in a child with WINO_CUDA_LIBRARY=path: 1 when it returned 1 (a crash or
 * any other end fails). */
static int in_child(int (*check)(const char *), const char *path)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        setenv("WINO_CUDA_LIBRARY", path, 1);
        const int ok = check(path);
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 0;
    if (WIFSIGNALED(status))
        printf("  the child ended by signal %d\n", WTERMSIG(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
    const char *missing = "/nonexistent-wino-dir/libwino_cuda.so.0";
    test_check(&counts, in_child(missing_component, missing),
               "a missing component: CUDA creates (FP32, INT8) answer WINO_UNSUPPORTED naming "
               "the file; the CPU runs, run_stream takes NULL only");
    test_check(&counts, in_child(not_a_component, "libm.so.6"),
               "a library that is no component: WINO_UNSUPPORTED naming it");
    test_check(&counts, in_child(first_calls_race, missing),
               "eight threads' first CUDA calls at once: each WINO_UNSUPPORTED with the reason");
    return test_report(&counts);
}
