#include "cuda/device_common.h"

#include <algorithm>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "cuda/component_error.h"

static struct shared_blas *blas_of_device; /* one per device, or NULL when out of memory */
static int blas_devices;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_init(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
        cudaGetLastError();
        return;
    }
    blas_of_device = (struct shared_blas *)calloc((size_t)count, sizeof *blas_of_device);
    if (!blas_of_device)
        return;
    for (int i = 0; i < count; i++)
        pthread_mutex_init(&blas_of_device[i].lock, NULL);
    blas_devices = count;
}

enum wino_status shared_of(int device, struct shared_blas **out)
{
    pthread_once(&blas_once, blas_init);
    if (device < 0 || device >= blas_devices) /* check_context saw the device: calloc failed */
        return wino_fail(WINO_OUT_OF_MEMORY, "no memory for the handles of the devices");
    *out = &blas_of_device[device];
    return WINO_SUCCESS;
}

enum wino_status shared_blas_of(int device, struct shared_blas **out)
{
    struct shared_blas *b = NULL;
    const enum wino_status st = shared_of(device, &b);
    if (st)
        return st;
    pthread_mutex_lock(&b->lock);
    cublasStatus_t created = CUBLAS_STATUS_SUCCESS;
    if (!b->handle && (created = cublasCreate(&b->handle)) != CUBLAS_STATUS_SUCCESS)
        b->handle = NULL;
    pthread_mutex_unlock(&b->lock);
    if (created != CUBLAS_STATUS_SUCCESS)
        return wino_fail(WINO_DEVICE_ERROR, "cublasCreate on device %d failed: %s", device,
                         cublasGetStatusString(created));
    *out = b;
    return WINO_SUCCESS;
}

enum wino_status cuda_failed(cudaError_t e, const char *call, const char *file, int line)
{
    return wino_fail(WINO_DEVICE_ERROR, "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
}

enum wino_status enter_device(int device, struct device_scope *scope)
{
    CUDA_TRY(cudaGetDevice(&scope->previous));
    CUDA_TRY(cudaSetDevice(device));
    return WINO_SUCCESS;
}
void leave_device(const struct device_scope *scope)
{
    cudaSetDevice(scope->previous);
}
enum wino_status enter_run_device(int device, struct device_scope *scope)
{
    CUDA_TRY(cudaGetDevice(&scope->previous));
    if (scope->previous != device)
        CUDA_TRY(cudaSetDevice(device));
    return WINO_SUCCESS;
}
void leave_run_device(int device, const struct device_scope *scope)
{
    if (scope->previous != device)
        cudaSetDevice(scope->previous);
}

enum wino_status check_context(const struct wino_context *ctx)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return wino_fail(WINO_UNSUPPORTED, "no CUDA device is available");
    }
    if (ctx->device < 0 || ctx->device >= count)
        return wino_fail(WINO_INVALID_ARGUMENT, "CUDA device %d does not exist (%d devices)",
                         ctx->device, count);
    if (ctx->stream) {
        int device = -1;
        CUDA_TRY(cudaStreamGetDevice((cudaStream_t)ctx->stream, &device));
        if (device != ctx->device)
            return wino_fail(WINO_INVALID_ARGUMENT,
                             "the context's stream belongs to device %d, not to device %d",
                             device, ctx->device);
    }
    return WINO_SUCCESS;
}

enum wino_status check_device_pointer(const void *p, int device, const char *what)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return wino_fail(WINO_INVALID_ARGUMENT, "%s is not a pointer CUDA knows", what);
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s is host memory; the CUDA backend needs device memory", what);
    if (a.device != device)
        return wino_fail(WINO_INVALID_ARGUMENT, "%s is memory of device %d, not of device %d",
                         what, a.device, device);
    return WINO_SUCCESS;
}

enum wino_status check_stream(const void *stream, int device, const char *what)
{
    int of = -1;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (!stream)
        return WINO_SUCCESS;
    /* CUDA refuses cudaStreamGetDevice while a graph is being captured: a capturing stream
     * is taken as it is (the capture fails if it is another device's) */
    if (cudaStreamIsCapturing((cudaStream_t)stream, &capture) == cudaSuccess &&
        capture != cudaStreamCaptureStatusNone)
        return WINO_SUCCESS;
    cudaGetLastError();
    const cudaError_t e = cudaStreamGetDevice((cudaStream_t)stream, &of);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return wino_fail(WINO_INVALID_ARGUMENT, "%s is not a stream CUDA knows: %s", what,
                         cudaGetErrorString(e));
    }
    if (of != device)
        return wino_fail(WINO_INVALID_ARGUMENT, "%s belongs to device %d, not to device %d",
                         what, of, device);
    return WINO_SUCCESS;
}

enum wino_status check_seen(struct seen_arguments *s, int slot, const void *p, int is_stream,
                            int device, const char *what)
{
    for (int i = 0; i < SEEN_PER_SLOT; i++)
        if (__atomic_load_n(&s->seen[slot][i], __ATOMIC_RELAXED) == p)
            return WINO_SUCCESS;
    const enum wino_status st =
        is_stream ? check_stream(p, device, what) : check_device_pointer(p, device, what);
    if (!st) {
        const unsigned i = __atomic_fetch_add(&s->next[slot], 1u, __ATOMIC_RELAXED);
        __atomic_store_n(&s->seen[slot][i % SEEN_PER_SLOT], p, __ATOMIC_RELAXED);
    }
    return st;
}

/* The gate of median_run_ms, a host function on the stream: the work behind it waits until
 * *open, or for at most GATE_LIMIT (a run that waited for the GPU itself must not hang). */
#define GATE_LIMIT std::chrono::seconds(2)

static void CUDART_CB wait_at_gate(void *open)
{
    const auto until = std::chrono::steady_clock::now() + GATE_LIMIT;
    while (!__atomic_load_n((int *)open, __ATOMIC_ACQUIRE) &&
           std::chrono::steady_clock::now() < until)
        ;
}

float median_run_ms(cudaStream_t stream, enum wino_status (*run)(void *arg, void *stream),
                    void *arg)
{
    /* Each sample is RUNS runs back to back, as a network runs its layers, and every sample
     * waits behind a gate until the host has enqueued them all, so that the events time the
     * GPU alone. Timed as the host enqueued them, a run that costs the host more than the GPU
     * (a small layer's several launches and cuBLAS call) was timed at the host's pace: on
     * eurosys20 e07 (FP32, H100) AUTO recorded wino's F(2x2, 3x3) at 0.0525 ms, its fused
     * variant's GPU time, where the non-fused one takes 0.017 ms on the GPU, and took cuDNN's
     * engine of 0.05 ms. */
    enum { SAMPLES = 5, RUNS = 4 };
    cudaEvent_t ev[SAMPLES + 1];
    float ms[SAMPLES];
    int made = 0, open = 0;
    while (made <= SAMPLES && cudaEventCreate(&ev[made]) == cudaSuccess)
        made++;
    int ok = made == SAMPLES + 1 && !run(arg, stream); /* the warm-up */
    const int gated = ok && cudaLaunchHostFunc(stream, wait_at_gate, &open) == cudaSuccess;
    ok = gated && cudaEventRecord(ev[0], stream) == cudaSuccess;
    for (int i = 0; ok && i < SAMPLES; i++) {
        for (int r = 0; ok && r < RUNS; r++)
            ok = !run(arg, stream);
        ok = ok && cudaEventRecord(ev[i + 1], stream) == cudaSuccess;
    }
    __atomic_store_n(&open, 1, __ATOMIC_RELEASE);
    /* the gate's function has returned before open goes */
    ok = gated && cudaStreamSynchronize(stream) == cudaSuccess && ok;
    for (int i = 0; ok && i < SAMPLES; i++) {
        ok = cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]) == cudaSuccess;
        ms[i] /= RUNS;
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    if (!ok)
        return -1.0f;
    std::sort(ms, ms + SAMPLES);
    return ms[SAMPLES / 2];
}

enum wino_status device_zeros(const struct wino_context *ctx, size_t bytes, void **p)
{
    *p = NULL;
    struct device_scope scope;
    enum wino_status st = enter_device(ctx->device, &scope);
    if (st)
        return st;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaSuccess && (e = cudaMemset(*p, 0, bytes)) != cudaSuccess) {
        cudaFree(*p);
        *p = NULL;
    }
    leave_device(&scope);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return wino_fail(e == cudaErrorMemoryAllocation ? WINO_OUT_OF_MEMORY : WINO_DEVICE_ERROR,
                         "%zu bytes of device memory: %s", bytes, cudaGetErrorString(e));
    }
    return WINO_SUCCESS;
}

void device_free(const struct wino_context *ctx, void *p)
{
    struct device_scope scope;
    if (!p || enter_device(ctx->device, &scope))
        return;
    cudaFree(p);
    leave_device(&scope);
}

enum wino_status time_run(const struct wino_context *ctx,
                          enum wino_status (*run)(void *arg, void *stream), void *arg,
                          double *ms)
{
    struct device_scope scope;
    enum wino_status st = enter_device(ctx->device, &scope);
    if (st)
        return st;
    const float median = median_run_ms((cudaStream_t)ctx->stream, run, arg);
    leave_device(&scope);
    if (median < 0.0f) {
        cudaGetLastError();
        return wino_fail(WINO_DEVICE_ERROR, "a timed run failed");
    }
    *ms = median;
    return WINO_SUCCESS;
}

int compute_capability(int device)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
        return 0;
    return 10 * major + minor;
}

enum wino_status device_name(const struct wino_context *ctx, char *buf, size_t cap)
{
    const enum wino_status st = check_context(ctx);
    if (st)
        return st;
    cudaDeviceProp p;
    CUDA_TRY(cudaGetDeviceProperties(&p, ctx->device));
    snprintf(buf, cap, "%s", p.name);
    return WINO_SUCCESS;
}
