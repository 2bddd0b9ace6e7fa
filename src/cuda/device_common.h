/* What the CUDA component's operators share (src/cuda/device_common.cu): one cuBLAS handle per
 * device, CUDA errors turned into a status, the device made current for a call, and the checks
 * of a context, of device pointers and of streams. */
#ifndef WINO_CUDA_DEVICE_COMMON_H
#define WINO_CUDA_DEVICE_COMMON_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <pthread.h>

#include "wino.h"

/* One cuBLAS handle per device, shared by every operator of the process: created by the first
 * create() on the device, never destroyed (the component is never unloaded; the driver frees
 * it at exit). A handle holds the stream and workspace of its next call, so a run sets both and
 * enqueues its GEMM under the device's lock: runs on other streams wait for the enqueue only,
 * never for the GEMM. */
struct shared_blas {
    pthread_mutex_t lock;
    cublasHandle_t handle; /* NULL until the first create() on the device */
    void *dnn;             /* the vendor path's cudnnHandle_t (src/cuda/vendor_conv.cu), held
                            * and used under the same lock, or NULL */
};

/* The entry of device (locks initialized, handles as created so far). */
enum wino_status shared_of(int device, struct shared_blas **out);
/* The entry of device, the current device, with its cuBLAS handle created on first use. */
enum wino_status shared_blas_of(int device, struct shared_blas **out);

/* WINO_DEVICE_ERROR naming the call, file and line. */
enum wino_status cuda_failed(cudaError_t e, const char *call, const char *file, int line);
#define CUDA_TRY(call)                                                                         \
    do {                                                                                       \
        const cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                                 \
            return cuda_failed(e_, #call, __FILE__, __LINE__);                                 \
    } while (0)

/* Makes the operator's device current for the scope of a call and restores the caller's. */
struct device_scope {
    int previous;
};
enum wino_status enter_device(int device, struct device_scope *scope);
void leave_device(const struct device_scope *scope);
/* run()'s: cudaSetDevice only when another device is current (run() only enqueues). */
enum wino_status enter_run_device(int device, struct device_scope *scope);
void leave_run_device(int device, const struct device_scope *scope);

/* run()'s memo of the pointers and streams it accepted, per argument slot (e.g. x, y,
 * workspace, stream): the last SEEN_PER_SLOT of each, so that a few threads that run one
 * operator with their own buffers and streams are checked once each. Relaxed atomics: a run on
 * another thread may miss an entry and check again, never see a torn one. */
#define SEEN_SLOTS 4
#define SEEN_PER_SLOT 4
struct seen_arguments {
    const void *seen[SEEN_SLOTS][SEEN_PER_SLOT];
    unsigned next[SEEN_SLOTS]; /* the entry the next accepted one replaces */
};
/* The check of slot's argument p (a stream when is_stream, else device memory of device),
 * skipped when p is one that the slot accepted lately. */
enum wino_status check_seen(struct seen_arguments *s, int slot, const void *p, int is_stream,
                            int device, const char *what);

/* The milliseconds of a run of run(arg, stream) on stream after a warm-up: the median of 5
 * samples of 4 runs back to back, all enqueued before the GPU starts them (the GPU's time, not
 * the host's); a negative value when one failed (its error is left for the caller to clear).
 * Not on a stream being captured. */
float median_run_ms(cudaStream_t stream, enum wino_status (*run)(void *arg, void *stream),
                    void *arg);

/* The component's operations on plain device memory and timing, for the runtime's choice of
 * an algorithm (src/op/conv2d_vendor.c): zeroed memory of ctx's device (synchronized), its
 * release (NULL is fine), and median_run_ms on ctx's stream in ms. */
enum wino_status device_zeros(const struct wino_context *ctx, size_t bytes, void **p);
void device_free(const struct wino_context *ctx, void *p);
enum wino_status time_run(const struct wino_context *ctx,
                          enum wino_status (*run)(void *arg, void *stream), void *arg,
                          double *ms);
/* The name of ctx's device (cudaDeviceProp.name, e.g. "NVIDIA H100 80GB HBM3") into buf. */
/* The device's compute capability as 10 major + minor (90 for Hopper, where sm_90a code runs),
 * 0 where it cannot be read. */
int compute_capability(int device);

enum wino_status device_name(const struct wino_context *ctx, char *buf, size_t cap);

/* A device that exists, and a stream (if any) of that device. */
enum wino_status check_context(const struct wino_context *ctx);

/* WINO_SUCCESS when p is memory of the device; a clear refusal for host memory. */
enum wino_status check_device_pointer(const void *p, int device, const char *what);

/* WINO_SUCCESS when stream is one of the device's; NULL, the default stream, is always (run()
 * makes the device current), and so is a stream capturing a CUDA graph (CUDA does not let its
 * device be asked then). */
enum wino_status check_stream(const void *stream, int device, const char *what);

#endif
