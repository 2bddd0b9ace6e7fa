/* WinRS backward-filter convolution on CUDA: the stages of src/cuda/winrs_cuda.h. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cuda/component_error.h"
#include "cuda/cuda_component.h"
#include "cuda/device_common.h"
#include "cuda/winrs_cuda.h"
#include "cuda/winrs_fused.h"
#include "cuda/winrs_tensors.cuh"

/* cuBLAS's own workspace at the end of the caller's, set on the handle by each run (so that
 * cuBLAS allocates nothing, in a CUDA graph capture neither). */
#define BLAS_WORKSPACE_BYTES ((size_t)4 << 20)

/* The chunk of units is sized so that U and V take about this share of x + dy + dw, and never
 * less than MIN_CHUNK_BYTES (a tiny layer still gets GEMMs of a useful depth). */
#define CHUNK_SHARE 0.15
#define MIN_CHUNK_BYTES ((size_t)16 << 20)

/* The fused kernels' buckets take at most this share of x + dy + dw. */
#define BUCKET_SHARE 0.5

/* The units of a chunk are split into groups, each summed into a bucket of M of its own (the
 * paper's segments): GEMMs small in K x C get alpha x groups batches, enough thread blocks for
 * the device, and each bucket sums 1/groups of the units, which the output transform adds with
 * Kahan summation. Groups are sized for about TARGET_BLOCKS 64 x 64 output blocks in all, at most
 * MAX_GROUPS, with at least MIN_GROUP_UNITS units each. */
#define TARGET_BLOCKS 512
#define MAX_GROUPS 64
#define MIN_GROUP_UNITS 64

struct wino_cuda_winrs {
    int device;
    struct shared_blas *blas;
    struct wino_conv2d_desc desc;
    struct wino_conv_sizes sizes;
    struct wino_cuda_winrs_plan plan;
    long chunk;                       /* units per chunk: groups x group_units */
    int groups;                       /* buckets of M (see MAX_GROUPS) */
    long group_units;                 /* units per group and chunk: the GEMMs' depth */
    size_t u_bytes, v_bytes, m_bytes; /* the workspace: U, V, M, then cuBLAS's */
    winrs_grid grid[WINO_CUDA_WINRS_MAX_PROBLEMS]; /* fused: per problem (winrs_fused.h) */
    /* fused, NCHW x and dy that the tensor-core kernel takes in NHWC: their NHWC copies at the
     * workspace's start (x's, then dy's at x_stage_bytes), staged_bytes in all (0: none) */
    size_t x_stage_bytes, staged_bytes;
    size_t bucket_bytes; /* fused: the buckets, after the staged copies */
};

/* An unsigned integer of B bytes: one vector of the transpose. */
template <int B> struct bytes_of;
template <> struct bytes_of<2> { typedef unsigned short type; };
template <> struct bytes_of<4> { typedef unsigned type; };
template <> struct bytes_of<8> { typedef uint2 type; };
template <> struct bytes_of<16> { typedef uint4 type; };

#define TRANSPOSE_TILE 64
#define TRANSPOSE_THREADS 256

/* out[b][j][i] = in[b][i][j] for rows x cols matrices: an NCHW tensor (rows C, cols H W) into
 * NHWC, through 64 x 64 tiles of shared memory, each thread moving V elements at a time along
 * a row of in and of out (rows and cols multiples of V, in and out aligned to V elements): with
 * 16-bit elements moved one at a time, too few bytes were in flight (about 0.9 TB/s on the
 * H100). In the tile, the vectors of row i are placed XOR-permuted by i's group of V rows, so
 * that the row-wise vector stores and the column-wise element reads fall on distinct banks.
 * Grid (ceil(cols / 64), ceil(rows / 64), batches). */
template <typename T, int V>
__global__ void __launch_bounds__(TRANSPOSE_THREADS)
    transpose_batched(const T *in, T *out, int rows, int cols)
{
    constexpr int TILE = TRANSPOSE_TILE, VECS = TILE / V; /* vectors a tile row */
    typedef typename bytes_of<V * sizeof(T)>::type vec;
    __shared__ __align__(16) T tile[TILE][TILE];
    const size_t base = (size_t)blockIdx.z * rows * cols;
    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
#pragma unroll
    for (int v = threadIdx.x; v < TILE * VECS; v += TRANSPOSE_THREADS) {
        const int i = v / VECS, jv = v % VECS;
        if (i0 + i < rows && j0 + jv * V < cols)
            *(vec *)&tile[i][(jv ^ (i / V)) * V] =
                *(const vec *)&in[base + (size_t)(i0 + i) * cols + j0 + jv * V];
    }
    __syncthreads();
#pragma unroll
    for (int v = threadIdx.x; v < TILE * VECS; v += TRANSPOSE_THREADS) {
        const int j = v / VECS, iv = v % VECS; /* out's row j, its vector iv */
        if (j0 + j < cols && i0 + iv * V < rows) {
            T e[V];
#pragma unroll
            for (int k = 0; k < V; k++) /* tile row iv V + k, whose group of V rows is iv */
                e[k] = tile[iv * V + k][((j / V) ^ iv) * V + j % V];
            vec packed;
            memcpy(&packed, e, sizeof packed);
            *(vec *)&out[base + (size_t)(j0 + j) * rows + i0 + iv * V] = packed;
        }
    }
}

/* The transpose with vectors of V elements, where the sizes and addresses allow them. */
template <typename T, int V>
static bool transpose_by(const T *in, T *out, int batches, int channels, long pixels,
                         cudaStream_t stream)
{
    const size_t bytes = V * sizeof(T);
    if (pixels % V || channels % V || (uintptr_t)in % bytes || (uintptr_t)out % bytes)
        return false;
    const dim3 grid((unsigned)((pixels + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE),
                    (unsigned)((channels + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE),
                    (unsigned)batches);
    transpose_batched<T, V><<<grid, TRANSPOSE_THREADS, 0, stream>>>(in, out, channels,
                                                                     (int)pixels);
    return true;
}

/* The widest vectors of at most V elements that the sizes and addresses allow (one element
 * always does). */
template <typename T, int V = 16 / (int)sizeof(T)>
static void transpose_nchw(const T *in, T *out, int batches, int channels, long pixels,
                           cudaStream_t stream)
{
    if constexpr (V > 1) {
        if (transpose_by<T, V>(in, out, batches, channels, pixels, stream))
            return;
        transpose_nchw<T, V / 2>(in, out, batches, channels, pixels, stream);
    } else {
        transpose_by<T, 1>(in, out, batches, channels, pixels, stream);
    }
}

/* U[a][u][k] = sum_l G[a][l] dy[n][k][p][q + l] for the chunk's units u0 .. u0 + lc. */
template <typename T>
__global__ void transform_dy(dims d, wino_cuda_winrs_problem pr, const T *dy, T *u_out,
                             long u0, long lc, long chunk)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= chunk * d.k)
        return;
    const int k = (int)(t % d.k);
    const long u = t / d.k, unit = u0 + u, row = unit / pr.units;
    const int n = (int)(row / d.p), p = (int)(row % d.p);
    const int q = pr.q0 + (int)(unit % pr.units) * pr.r, alpha = pr.n + pr.r - 1;
    float g[WINO_MAX_ALPHA];
    for (int l = 0; l < pr.r; l++) /* zero beyond the chunk's lc units and the row */
        g[l] = u < lc && q + l < d.q ? load(dy, dy_at(d, n, k, p, q + l)) : 0.0f;
    for (int a = 0; a < alpha; a++) {
        float acc = 0.0f;
        for (int l = 0; l < pr.r; l++)
            acc += pr.g[a * pr.r + l] * g[l];
        store(u_out, ((size_t)a * chunk + u) * d.k + k, acc);
    }
}

/* V[i][t][a][u][c] = sum_b B^T[a][b] x[n][c][p + i - pad_h][q + j0 + t n + b - pad_w] (zero
 * outside the image) for every filter row i and tile t. */
template <typename T>
__global__ void transform_x(dims d, wino_cuda_winrs_problem pr, const T *x, T *v_out, long u0,
                            long lc, long chunk)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)d.r * pr.tiles * chunk * d.c)
        return;
    const int c = (int)(t % d.c);
    const long u = t / d.c % chunk;
    const int it = (int)(t / d.c / chunk), i = it / pr.tiles, tile = it % pr.tiles;
    const long unit = u0 + u, row = unit / pr.units;
    const int n = (int)(row / d.p), p = (int)(row % d.p);
    const int q = pr.q0 + (int)(unit % pr.units) * pr.r, alpha = pr.n + pr.r - 1;
    const int h = p + i - d.pad_h, w0 = q + pr.j0 + tile * pr.n - d.pad_w;
    float win[WINO_MAX_ALPHA];
    for (int b = 0; b < alpha; b++) {
        const int w = w0 + b;
        win[b] = u < lc && h >= 0 && h < d.h && w >= 0 && w < d.w ? load(x, x_at(d, n, c, h, w))
                                                                    : 0.0f;
    }
    for (int a = 0; a < alpha; a++) {
        float acc = 0.0f;
        for (int b = 0; b < alpha; b++)
            acc += pr.bt[a * alpha + b] * win[b];
        store(v_out, (((size_t)it * alpha + a) * chunk + u) * d.c + c, acc);
    }
}

/* dW[k][c][i][j0 + t n + jj] (+)= sum_a A^T[jj][a] sum_g M[i][t][a][g][c][k], the buckets g
 * summed with Kahan summation. */
template <typename T>
__global__ void transform_out(dims d, wino_cuda_winrs_problem pr, const float *m, int groups,
                              T *dw, int overwrite)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    const long taps = (long)pr.tiles * pr.n;
    if (t >= (long)d.k * d.c * d.r * taps)
        return;
    const int k = (int)(t % d.k), c = (int)(t / d.k % d.c);
    const long rest = t / d.k / d.c;
    const int i = (int)(rest / taps), jt = (int)(rest % taps), tile = jt / pr.n, jj = jt % pr.n;
    const int alpha = pr.n + pr.r - 1;
    const size_t kc = (size_t)d.k * d.c;
    const float *mt = m + (size_t)(i * pr.tiles + tile) * alpha * groups * kc + (size_t)c * d.k + k;
    float acc = 0.0f;
    for (int a = 0; a < alpha; a++) {
        float sum = 0.0f, lost = 0.0f;
        for (int g = 0; g < groups; g++) {
            const float y = mt[((size_t)a * groups + g) * kc] - lost, t2 = sum + y;
            lost = (t2 - sum) - y;
            sum = t2;
        }
        acc += pr.at[jj * alpha + a] * sum;
    }
    const size_t at = dw_at(d, k, c, i, pr.j0 + jt);
    store(dw, at, overwrite ? acc : load(dw, at) + acc);
}

static size_t element_bytes(const struct wino_cuda_winrs *w)
{
    return w->desc.dtype == WINO_DTYPE_F32 ? 4 : 2;
}

/* Whether the fused kernels stage w's NCHW x and dy in NHWC: where the tensor-core kernel takes
 * them so (and the transposes' grids fit). The staging costs x + dy of workspace and a copy of
 * each, and buys the tensor-core kernel where the NCHW kernels multiply on CUDA cores (FP32) or
 * read their operands in scattered pieces (16 bits). Decided at plan time (staged_bytes). */
static int stages_nchw(const struct wino_cuda_winrs *w)
{
    dims d = dims_of(&w->desc, &w->sizes);
    if (d.nhwc)
        return 0;
    d.nhwc = 1;
    return winrs_fused_nhwc_takes(d, element_bytes(w)) && d.n <= 65535 &&
           (d.c + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE <= 65535 &&
           (d.k + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE <= 65535; /* the transposes' grids */
}

/* The fused kernels' view of w's tensors: x and dy in NHWC where they are staged, dw as given. */
static dims fused_dims(const struct wino_cuda_winrs *w)
{
    dims d = dims_of(&w->desc, &w->sizes);
    d.nhwc |= w->staged_bytes != 0;
    return d;
}

static size_t aligned(double bytes)
{
    const size_t align = 256;
    return ((size_t)bytes + align - 1) / align * align;
}

/* The fused kernels' segments, their buckets within BUCKET_SHARE of the data, and the staged
 * copies of NCHW x and dy. */
static void plan_fused(struct wino_cuda_winrs *w, double data_bytes)
{
    const int staged = stages_nchw(w);
    const double es = (double)element_bytes(w);
    w->x_stage_bytes = staged ? aligned(es * w->sizes.x_elems) : 0;
    w->staged_bytes = staged ? w->x_stage_bytes + aligned(es * w->sizes.y_elems) : 0;
    const dims d = fused_dims(w);
    w->bucket_bytes = 0;
    for (int i = 0; i < w->plan.problems; i++) {
        w->grid[i] = winrs_fused_grid(d, w->plan.p[i], element_bytes(w), w->device,
                                      BUCKET_SHARE * data_bytes);
        const size_t bytes = winrs_fused_bucket_bytes(d, w->grid[i]);
        w->bucket_bytes = bytes > w->bucket_bytes ? bytes : w->bucket_bytes;
    }
}

/* The workspace parts for w's descriptor and plan: the fused kernels' buckets, or the groups,
 * the chunk of units, U, V and M of the non-fused stages. */
static enum wino_status plan_workspace(struct wino_cuda_winrs *w)
{
    const struct wino_conv2d_desc *d = &w->desc;
    const double es = (double)element_bytes(w);
    const double data = es * ((double)w->sizes.x_elems + w->sizes.y_elems + w->sizes.w_elems);
    if (w->plan.fused) {
        plan_fused(w, data);
        return WINO_SUCCESS;
    }
    double per_unit = 0.0, m = 0.0, most_units = 0.0, least_alpha = WINO_MAX_ALPHA;
    for (int i = 0; i < w->plan.problems; i++) {
        const struct wino_cuda_winrs_problem *pr = &w->plan.p[i];
        const double alpha = pr->n + pr->r - 1, its = (double)d->r * pr->tiles;
        per_unit = fmax(per_unit, es * alpha * (d->k + its * d->c));
        m = fmax(m, 4.0 * its * alpha * d->k * d->c);
        most_units = fmax(most_units, (double)d->n * w->sizes.p * pr->units);
        least_alpha = fmin(least_alpha, alpha);
    }
    const double budget = fmax(CHUNK_SHARE * data, (double)MIN_CHUNK_BYTES);
    const double blocks = ceil(d->k / 64.0) * ceil(d->c / 64.0);
    double groups = ceil(TARGET_BLOCKS / (least_alpha * blocks));
    groups = fmin(groups, fmin((double)MAX_GROUPS, floor(most_units / MIN_GROUP_UNITS)));
    groups = fmax(1.0, fmin(groups, floor(budget / m))); /* the buckets within the budget */
    double chunk = fmin(fmax(floor(budget / per_unit), groups), most_units);
    const double group_units = ceil(chunk / groups);
    chunk = group_units * groups;
    if (!(chunk * per_unit + m * groups < 1e15))
        return wino_fail(WINO_INVALID_ARGUMENT, "WinRS on CUDA: the workspace size overflows");
    w->groups = (int)groups;
    w->group_units = (long)group_units;
    w->chunk = (long)chunk;
    double u = 0.0, v = 0.0;
    for (int i = 0; i < w->plan.problems; i++) {
        const struct wino_cuda_winrs_problem *pr = &w->plan.p[i];
        const double alpha = pr->n + pr->r - 1;
        u = fmax(u, es * alpha * chunk * d->k);
        v = fmax(v, es * d->r * pr->tiles * alpha * chunk * d->c);
    }
    m *= groups;
    w->u_bytes = aligned(u);
    w->v_bytes = aligned(v);
    w->m_bytes = aligned(m);
    return WINO_SUCCESS;
}

static size_t workspace_bytes(const struct wino_cuda_winrs *w)
{
    if (w->plan.fused)
        return w->staged_bytes + w->bucket_bytes;
    return w->u_bytes + w->v_bytes + w->m_bytes + BLAS_WORKSPACE_BYTES;
}

static enum wino_status winrs_create(const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes,
                                     const struct wino_context *ctx,
                                     const struct wino_cuda_winrs_plan *plan,
                                     struct wino_cuda_winrs **out, size_t *bytes)
{
    *out = NULL;
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16 &&
        desc->dtype != WINO_DTYPE_BF16)
        return wino_fail(WINO_UNSUPPORTED, "WinRS on CUDA: FP32, FP16 and BF16 only");
    enum wino_status st = check_context(ctx);
    if (st)
        return st;
    struct wino_cuda_winrs *w = (struct wino_cuda_winrs *)calloc(1, sizeof *w);
    if (!w)
        return wino_fail(WINO_OUT_OF_MEMORY, "WinRS on CUDA: out of memory");
    w->device = ctx->device;
    w->desc = *desc;
    w->sizes = *sizes;
    w->plan = *plan;
    struct device_scope scope;
    if (!(st = enter_device(w->device, &scope))) {
        st = shared_blas_of(w->device, &w->blas);
        const cudaError_t e = st ? cudaSuccess : winrs_fused_prepare();
        if (e != cudaSuccess)
            st = cuda_failed(e, "winrs_fused_prepare()", __FILE__, __LINE__);
        leave_device(&scope);
    }
    if (!st)
        st = plan_workspace(w);
    if (st) {
        free(w);
        return st;
    }
    *out = w;
    *bytes = workspace_bytes(w);
    return WINO_SUCCESS;
}

static enum wino_status winrs_reshape(struct wino_cuda_winrs *w,
                                      const struct wino_conv2d_desc *desc,
                                      const struct wino_conv_sizes *sizes,
                                      const struct wino_cuda_winrs_plan *plan, size_t *bytes)
{
    struct wino_cuda_winrs shaped = *w;
    shaped.desc = *desc;
    shaped.sizes = *sizes;
    shaped.plan = *plan;
    const enum wino_status st = plan_workspace(&shaped);
    if (st)
        return st;
    *w = shaped;
    *bytes = workspace_bytes(w);
    return WINO_SUCCESS;
}

static unsigned blocks_of(long threads)
{
    return (unsigned)((threads + 255) / 256);
}

/* The GEMMs of one chunk: for every filter row and tile it, bucket g of M[it][a] (K x C) (+)=
 * U[a]'s group g^T V[it][a]'s group g, as one strided batch over (a, g): the groups lie one after
 * the other in the chunk, so batch a G + g starts at (a G + g) group_units units. */
static cublasStatus_t chunk_gemms(const struct wino_cuda_winrs *w,
                                  const struct wino_cuda_winrs_problem *pr, const void *u,
                                  const char *v, float *m, int first_chunk)
{
    const struct wino_conv2d_desc *d = &w->desc;
    const int alpha = pr->n + pr->r - 1;
    const cudaDataType type = d->dtype == WINO_DTYPE_F16    ? CUDA_R_16F
                              : d->dtype == WINO_DTYPE_BF16 ? CUDA_R_16BF
                                                            : CUDA_R_32F;
    const size_t es = element_bytes(w), kc = (size_t)d->k * d->c;
    const long long lg = w->group_units;
    const float one = 1.0f, beta = first_chunk ? 0.0f : 1.0f;
    cublasStatus_t b = CUBLAS_STATUS_SUCCESS;
    for (int it = 0; it < d->r * pr->tiles && b == CUBLAS_STATUS_SUCCESS; it++)
        b = cublasGemmStridedBatchedEx(
            w->blas->handle, CUBLAS_OP_N, CUBLAS_OP_T, d->k, d->c, (int)lg, &one, u, type, d->k,
            lg * d->k, v + (size_t)it * alpha * w->chunk * d->c * es, type, d->c, lg * d->c,
            &beta, m + (size_t)it * alpha * w->groups * kc, CUDA_R_32F, d->k, (long long)kc,
            alpha * w->groups, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return b;
}

template <typename T>
static enum wino_status enqueue(const struct wino_cuda_winrs *w, const T *x, const T *dy, T *dw,
                                char *ws, cudaStream_t stream)
{
    const dims d = dims_of(&w->desc, &w->sizes);
    if (w->plan.fused) {
        const dims fd = fused_dims(w);
        if (w->staged_bytes) {
            T *x_nhwc = (T *)ws, *dy_nhwc = (T *)(ws + w->x_stage_bytes);
            transpose_nchw(x, x_nhwc, d.n, d.c, (long)d.h * d.w, stream);
            transpose_nchw(dy, dy_nhwc, d.n, d.k, (long)d.p * d.q, stream);
            CUDA_TRY(cudaGetLastError());
            x = x_nhwc, dy = dy_nhwc;
        }
        for (int i = 0; i < w->plan.problems; i++) {
            const struct wino_cuda_winrs_problem &pr = w->plan.p[i];
            if ((long)d.n * d.p * pr.units == 0 || pr.tiles == 0)
                continue;
            CUDA_TRY(winrs_fused_enqueue(fd, pr, w->grid[i], x, dy, dw,
                                         (float *)(ws + w->staged_bytes),
                                         pr.first && !w->plan.accumulate, stream));
        }
        return WINO_SUCCESS;
    }
    T *u = (T *)ws, *v = (T *)(ws + w->u_bytes);
    float *m = (float *)(ws + w->u_bytes + w->v_bytes);
    for (int i = 0; i < w->plan.problems; i++) {
        const struct wino_cuda_winrs_problem &pr = w->plan.p[i];
        const long units = (long)d.n * d.p * pr.units;
        if (units == 0 || pr.tiles == 0)
            continue;
        for (long u0 = 0; u0 < units; u0 += w->chunk) {
            const long lc = units - u0 < w->chunk ? units - u0 : w->chunk;
            transform_dy<T><<<blocks_of(w->chunk * d.k), 256, 0, stream>>>(d, pr, dy, u, u0, lc,
                                                                           w->chunk);
            transform_x<T><<<blocks_of((long)d.r * pr.tiles * w->chunk * d.c), 256, 0, stream>>>(
                d, pr, x, v, u0, lc, w->chunk);
            const cublasStatus_t b = chunk_gemms(w, &pr, u, (const char *)v, m, u0 == 0);
            if (b != CUBLAS_STATUS_SUCCESS)
                return wino_fail(WINO_DEVICE_ERROR, "WinRS on CUDA: cuBLAS batched GEMM "
                                                    "failed: %s", cublasGetStatusString(b));
        }
        const long outs = (long)d.k * d.c * d.r * pr.tiles * pr.n;
        transform_out<T><<<blocks_of(outs), 256, 0, stream>>>(
            d, pr, m, w->groups, dw, pr.first && !w->plan.accumulate);
    }
    CUDA_TRY(cudaGetLastError());
    return WINO_SUCCESS;
}

/* enqueue for w's dtype. */
static enum wino_status enqueue_typed(const struct wino_cuda_winrs *w, const void *x,
                                      const void *dy, void *dw, char *ws, cudaStream_t stream)
{
    if (w->desc.dtype == WINO_DTYPE_F16)
        return enqueue(w, (const __half *)x, (const __half *)dy, (__half *)dw, ws, stream);
    if (w->desc.dtype == WINO_DTYPE_BF16)
        return enqueue(w, (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)dy,
                       (__nv_bfloat16 *)dw, ws, stream);
    return enqueue(w, (const float *)x, (const float *)dy, (float *)dw, ws, stream);
}

static enum wino_status winrs_run(struct wino_cuda_winrs *w, const void *x, const void *dy,
                                  void *dw, void *workspace, size_t bytes, void *stream_arg)
{
    const cudaStream_t stream = (cudaStream_t)stream_arg;
    enum wino_status st = check_stream(stream, w->device, "the stream");
    if (!st)
        st = check_device_pointer(x, w->device, "x");
    if (!st)
        st = check_device_pointer(dy, w->device, "dy");
    if (!st)
        st = check_device_pointer(dw, w->device, "dw");
    if (!st && bytes < workspace_bytes(w))
        st = wino_fail(WINO_INSUFFICIENT_WORKSPACE, "workspace of %zu bytes, %zu needed", bytes,
                       workspace_bytes(w));
    if (!st && workspace_bytes(w))
        st = check_device_pointer(workspace, w->device, "workspace");
    struct device_scope scope;
    if (st || (st = enter_run_device(w->device, &scope)))
        return st;
    char *ws = (char *)workspace;
    if (w->plan.fused) { /* no cuBLAS */
        st = enqueue_typed(w, x, dy, dw, ws, stream);
        leave_run_device(w->device, &scope);
        return st;
    }
    pthread_mutex_lock(&w->blas->lock);
    /* the stream first: cublasSetStream resets the handle's workspace */
    cublasStatus_t b = cublasSetStream(w->blas->handle, stream);
    if (b == CUBLAS_STATUS_SUCCESS)
        b = cublasSetWorkspace(w->blas->handle, ws + workspace_bytes(w) - BLAS_WORKSPACE_BYTES,
                               BLAS_WORKSPACE_BYTES);
    if (b != CUBLAS_STATUS_SUCCESS)
        st = wino_fail(WINO_DEVICE_ERROR, "WinRS on CUDA: cuBLAS setup failed: %s",
                       cublasGetStatusString(b));
    else
        st = enqueue_typed(w, x, dy, dw, ws, stream);
    pthread_mutex_unlock(&w->blas->lock);
    leave_run_device(w->device, &scope);
    return st;
}

static void winrs_destroy(struct wino_cuda_winrs *w)
{
    free(w);
}

static int winrs_segments(const struct wino_cuda_winrs *w)
{
    if (!w->plan.fused)
        return w->groups;
    int most = 1;
    for (int i = 0; i < w->plan.problems; i++)
        most = w->grid[i].segments > most ? w->grid[i].segments : most;
    return most;
}

const struct wino_cuda_winrs_ops wino_cuda_winrs_ops = {winrs_create, winrs_reshape, winrs_run,
                                                        winrs_destroy, winrs_segments};
