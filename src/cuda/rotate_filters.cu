/* backward-data's rotated filters (rotate_filters.h). The rotation is a permutation of the
 * elements, so one kernel moves 2- or 4-byte words whatever they hold (FP16 or FP32): one
 * thread per element of w, read in storage order (coalesced); the scattered writes cost nothing
 * next to the filter transform that follows at create. */
#include <stdint.h>

#include "base/error.h"
#include "cuda/device_common.h"
#include "cuda/rotate_filters.h"

template <typename T>
__global__ void rotate(const T *w, T *rotated, int k_count, int c_count, int r, int s, int nhwc,
                       long long elements)
{
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= elements)
        return;
    long long rest = e;
    int k, c, i, j;
    if (nhwc) { /* w[k][i][j][c] -> rotated[c][R-1-i][S-1-j][k] */
        c = (int)(rest % c_count), rest /= c_count;
        j = (int)(rest % s), rest /= s;
        i = (int)(rest % r), k = (int)(rest / r);
        rotated[(((long long)c * r + (r - 1 - i)) * s + (s - 1 - j)) * k_count + k] = w[e];
    } else { /* w[k][c][i][j] -> rotated[c][k][R-1-i][S-1-j] */
        j = (int)(rest % s), rest /= s;
        i = (int)(rest % r), rest /= r;
        c = (int)(rest % c_count), k = (int)(rest / c_count);
        rotated[(((long long)c * k_count + k) * r + (r - 1 - i)) * s + (s - 1 - j)] = w[e];
    }
}

/* Enqueues the rotation of weights into rotated on stream (the current device's). */
static enum wino_status launch_rotate(const struct wino_conv2d_desc *d, const void *weights,
                                      void *rotated, cudaStream_t stream)
{
    const int half = d->dtype == WINO_DTYPE_F16, threads = 256;
    const long long elements = (long long)d->k * d->c * d->r * d->s;
    const long long blocks = (elements + threads - 1) / threads;
    if (blocks > INT32_MAX)
        return wino_fail(WINO_UNSUPPORTED, "CUDA backward-data: more than 2^39 filter elements");
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    if (half)
        rotate<<<(unsigned)blocks, threads, 0, stream>>>((const uint16_t *)weights,
                                                         (uint16_t *)rotated, d->k, d->c, d->r,
                                                         d->s, nhwc, elements);
    else
        rotate<<<(unsigned)blocks, threads, 0, stream>>>((const uint32_t *)weights,
                                                         (uint32_t *)rotated, d->k, d->c, d->r,
                                                         d->s, nhwc, elements);
    CUDA_TRY(cudaGetLastError());
    return WINO_SUCCESS;
}

/* Allocates *rotated on the current device and fills it on stream; returns once written. */
static enum wino_status rotate_into(const struct wino_conv2d_desc *d, const void *weights,
                                    cudaStream_t stream, void **rotated)
{
    CUDA_TRY(cudaMalloc(rotated, (size_t)d->k * d->c * d->r * d->s *
                                     (d->dtype == WINO_DTYPE_F16 ? 2 : 4)));
    const enum wino_status st = launch_rotate(d, weights, *rotated, stream);
    if (st)
        return st;
    CUDA_TRY(cudaStreamSynchronize(stream));
    return WINO_SUCCESS;
}

enum wino_status rotated_filters_create(const struct wino_conv2d_desc *desc, const void *weights,
                                        const struct wino_context *ctx, void **rotated)
{
    *rotated = NULL;
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16)
        return wino_fail(WINO_UNSUPPORTED, "CUDA backward-data: FP32 and FP16 filters only");
    enum wino_status st = check_context(ctx);
    struct device_scope scope;
    if (st || (st = enter_device(ctx->device, &scope)))
        return st;
    st = check_device_pointer(weights, ctx->device, "weights");
    if (!st && (st = rotate_into(desc, weights, (cudaStream_t)ctx->stream, rotated))) {
        cudaFree(*rotated);
        *rotated = NULL;
    }
    leave_device(&scope);
    return st;
}

enum wino_status rotate_filters(const struct wino_conv2d_desc *desc, const void *weights,
                                void *rotated, int device, void *stream)
{
    enum wino_status st = check_device_pointer(weights, device, "weights");
    if (!st)
        st = check_stream(stream, device, "the stream");
    struct device_scope scope;
    if (!st && !(st = enter_run_device(device, &scope))) {
        st = launch_rotate(desc, weights, rotated, (cudaStream_t)stream);
        leave_run_device(device, &scope);
    }
    return st;
}
