/* The vendor library's convolutions inside the CUDA component (src/cuda/vendor_conv.cu): cuDNN
 * 9's graph (backend) API, the path PyTorch's conv2d takes. They serve what wino's kernels do
 * not (WINO_ALGO_DIRECT, strides, dilations, BF16 forward) and are the floor of AUTO
 * (src/op/conv2d_vendor.c). cuDNN is loaded at the first use, so the component needs it only
 * when this path runs. */
#ifndef WINO_CUDA_VENDOR_CONV_H
#define WINO_CUDA_VENDOR_CONV_H

#include <stddef.h>

#include "base/conv_desc.h"
#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wino_cuda_vendor;

/* What the caller asks of the vendor's convolution. */
struct wino_cuda_vendor_request {
    enum wino_conv2d_kind kind;
    int direct_only; /* engines without Winograd or FFT numerics (WINO_ALGO_DIRECT) */
    int tf32;        /* FP32: engines that round the inputs to TF32 are allowed */
    int accumulate;  /* backward-filter: dw += dW */
    const float *bias; /* forward: K values in host memory (copied), or NULL */
    int relu;          /* forward: y = max(0, y) after the bias */
    size_t max_workspace; /* engines needing more are passed over (0: no limit) */
};

struct wino_cuda_vendor_ops {
    /* Plans desc's convolution: of cuDNN's heuristic candidates whose numerics the request
     * allows and which the layer's 16-byte-aligned tensors run, each is timed on zeros in
     * scratch memory (median of 5 after a warm-up) and the fastest kept, beside a plan for
     * tensors aligned to their element only. weights (forward, backward-data): memory of
     * ctx->device, copied; NULL for backward-filter. WINO_UNSUPPORTED when cuDNN is not to be
     * had or runs no engine for the layer, with the reason. */
    enum wino_status (*create)(const struct wino_conv2d_desc *desc,
                               const struct wino_conv_sizes *sizes, const void *weights,
                               const struct wino_context *ctx,
                               const struct wino_cuda_vendor_request *request,
                               struct wino_cuda_vendor **vendor, size_t *workspace_bytes);
    /* Plans again (and times again) for desc with other N, H and W. On failure the operator
     * keeps its plans. */
    enum wino_status (*reshape)(struct wino_cuda_vendor *v, const struct wino_conv2d_desc *desc,
                                const struct wino_conv_sizes *sizes, size_t *workspace_bytes);
    /* Enqueues the convolution on stream (NULL: the device's default): forward in = x, out =
     * y; backward-data in = dy, out = dx; backward-filter in = x, in2 = dy, out = dw. */
    enum wino_status (*run)(struct wino_cuda_vendor *v, const void *in, const void *in2,
                            void *out, void *workspace, size_t workspace_bytes, void *stream);
    /* Enqueues the copy of new weights (forward, backward-data) on stream. */
    enum wino_status (*set_weights)(struct wino_cuda_vendor *v, const void *weights,
                                    void *stream);
    /* "cuDNN 9.19.0 engine 12: 0.041 ms, fastest of 6 timed", for wino_conv2d_reason. */
    void (*describe)(const struct wino_cuda_vendor *v, char *buf, size_t cap);
    /* The median ms of the kept plan at create or the last reshape. */
    double (*ms)(const struct wino_cuda_vendor *v);
    void (*destroy)(struct wino_cuda_vendor *v); /* NULL is fine */
    /* cuDNN's version as cudnnGetVersion gives it (91900 for 9.19.0), loading it on the first
     * call; 0 when it is not to be had. */
    size_t (*version)(void);
};

extern const struct wino_cuda_vendor_ops wino_cuda_vendor_ops;

/* The runtime's way to it: the loaded component's table, or NULL (WINO_UNSUPPORTED recorded:
 * no component) (src/op/cuda_loader.c). */
const struct wino_cuda_vendor_ops *wino_cuda_vendor(void);

#ifdef __cplusplus
}
#endif

#endif
