/* `wino bench --backend cuda` runner for cuDNN's legacy convolutions: forward
 * (cudnnConvolutionForward), backward-data (cudnnConvolutionBackwardData, dx from dy and w) and
 * backward-filter (cudnnConvolutionBackwardFilter, dw from x and dy), one algorithm per runner,
 * so that every algorithm the layer accepts gets a row of its own rather than only the one
 * cuDNN's heuristics or Find would pick. Operands are prepared (transposed, quantized, uploaded)
 * and the algorithm run once for a trial at prepare; the timed run() is the convolution
 * alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda.h"
#include "int8_data.h"

#ifdef WINO_HAVE_CUDNN

#include <cuda_runtime.h>
#include <cudnn.h>

#include "cpu/layout_f32.h"

static cudnnHandle_t handle; /* one for the whole bench, on the bench's stream */
static char version[32];

/* Records a failing cuDNN call with its status name, as BENCH_CUDA_FAILED does. */
static int cudnn_failed(cudnnStatus_t s, const char *call, const char *file, int line)
{
    return s != CUDNN_STATUS_SUCCESS &&
           bench_cuda_record(call, file, line, cudnnGetErrorString(s));
}
#define CUDNN_FAILED(call) cudnn_failed((call), #call, __FILE__, __LINE__)

struct cudnn_state {
    cudnnTensorDescriptor_t xd, yd; /* x (dx for backward-data) and y (dy for the backward) */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    int op;                      /* enum bench_op */
    int algo;                    /* a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t of op */
    const void *x, *w, *dy;      /* the inputs: the problem's, or x_own / w_own / dy_own */
    void *x_own, *w_own, *dy_own;
    void *y, *ws;                /* the output (y, dx or dw) and the workspace */
    size_t ws_bytes, y_elems;
    float alpha, beta;           /* y = alpha * conv(x, w) + beta * y */
    enum wino_dtype y_type;      /* F32, F16 or S8 */
    float y_scale;               /* S8: real value of one output step */
    int nchw;
    int out0, out1, out_inner;   /* the output as out0 x out1 x out_inner in NCHW / KCRS order */
    void *stream;
};

int bench_cudnn_available(void) { return 1; }
int bench_cudnn_algo_count(int op)
{
    return op == BENCH_BWD_DATA     ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
           : op == BENCH_BWD_FILTER ? CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT
                                         : CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
}
const char *bench_cudnn_version(void) { return version; }

int bench_cudnn_init(void *stream, char *why, size_t cap)
{
    const size_t v = cudnnGetVersion(); /* 9.x: major * 10000 + minor * 100 + patch */
    snprintf(version, sizeof version, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    if (CUDNN_FAILED(cudnnCreate(&handle)) ||
        CUDNN_FAILED(cudnnSetStream(handle, (cudaStream_t)stream))) {
        snprintf(why, cap, "%s", bench_cuda_last_error());
        bench_cudnn_shutdown();
        return 1;
    }
    return 0;
}

void bench_cudnn_shutdown(void)
{
    if (handle)
        cudnnDestroy(handle); /* teardown: nothing left to report to */
    handle = NULL;
}

static const char *const fwd_names[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {
    "implicit_gemm", "implicit_precomp_gemm", "gemm",     "direct",
    "fft",           "fft_tiling",            "winograd", "winograd_nonfused"};
static const char *const bwd_data_names[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT] = {
    "algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"};
static const char *const bwd_filter_names[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT] = {
    "algo_0", "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused", "fft_tiling"};

static const char *algo_name(int op, int algo)
{
    return op == BENCH_BWD_DATA     ? bwd_data_names[algo]
           : op == BENCH_BWD_FILTER ? bwd_filter_names[algo]
                                         : fwd_names[algo];
}

/* One convolution of the state's op; cuDNN's status. */
static cudnnStatus_t convolve(struct cudnn_state *st)
{
    if (st->op == BENCH_BWD_DATA)
        return cudnnConvolutionBackwardData(handle, &st->alpha, st->wd, st->w, st->yd, st->dy,
                                            st->cd, (cudnnConvolutionBwdDataAlgo_t)st->algo,
                                            st->ws, st->ws_bytes, &st->beta, st->xd, st->y);
    if (st->op == BENCH_BWD_FILTER)
        return cudnnConvolutionBackwardFilter(handle, &st->alpha, st->xd, st->x, st->yd, st->dy,
                                              st->cd, (cudnnConvolutionBwdFilterAlgo_t)st->algo,
                                              st->ws, st->ws_bytes, &st->beta, st->wd, st->y);
    return cudnnConvolutionForward(handle, &st->alpha, st->xd, st->x, st->wd, st->w, st->cd,
                                   (cudnnConvolutionFwdAlgo_t)st->algo, st->ws, st->ws_bytes,
                                   &st->beta, st->yd, st->y);
}

static int cudnn_run(void *p)
{
    return CUDNN_FAILED(convolve((struct cudnn_state *)p));
}

static int cudnn_output(void *p, float *y)
{
    struct cudnn_state *st = p;
    if (!st->nchw)
        return bench_cuda_download_floats(st->stream, st->y, st->y_elems, st->y_type,
                                          st->y_scale, y);
    float *tmp = malloc(st->y_elems * sizeof *tmp);
    if (!tmp)
        return bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    const int rc = bench_cuda_download_floats(st->stream, st->y, st->y_elems, st->y_type,
                                              st->y_scale, tmp);
    if (!rc) /* NCHW -> NHWC (KCRS -> KRSC), the layout of the reference */
        wino_f32_transpose_batched(tmp, y, st->out0, (size_t)st->out1, (size_t)st->out_inner,
                                   1, 0);
    free(tmp);
    return rc;
}

static void cudnn_destroy(void *p)
{
    struct cudnn_state *st = p;
    if (!st)
        return;
    bench_cuda_free(st->x_own);
    bench_cuda_free(st->w_own);
    bench_cuda_free(st->dy_own);
    bench_cuda_free(st->y);
    bench_cuda_free(st->ws);
    /* teardown: nothing left to report to */
    if (st->xd)
        cudnnDestroyTensorDescriptor(st->xd);
    if (st->yd)
        cudnnDestroyTensorDescriptor(st->yd);
    if (st->wd)
        cudnnDestroyFilterDescriptor(st->wd);
    if (st->cd)
        cudnnDestroyConvolutionDescriptor(st->cd);
    free(st);
}

/* INT8 operands: x and w quantized on the host and uploaded; alpha maps the int32 sums to int8
 * steps of y_scale (or to real values for float output). */
static int upload_int8(const struct cuda_problem *pb, struct cudnn_state *st)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const size_t xn = (size_t)d->n * d->h * d->w * d->c, wn = (size_t)d->k * d->r * d->s * d->c;
    signed char *q = malloc(xn > wn ? xn : wn);
    if (!q)
        return bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    const float sx = int8_data_quantize_s8(pb->x, xn, q);
    int rc = bench_cuda_upload(q, xn, &st->x_own);
    const float sw = int8_data_quantize_s8(pb->w, wn, q);
    rc = rc || bench_cuda_upload(q, wn, &st->w_own);
    free(q);
    st->alpha = st->y_type == WINO_DTYPE_S8 ? sx * sw / pb->y_scale : sx * sw;
    return rc;
}

/* FP32 / FP16 NCHW operands: the problem's NHWC / KRSC / NPQK values transposed and
 * uploaded. */
static int upload_nchw(const struct cuda_problem *pb, struct cudnn_state *st)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const size_t hw = (size_t)d->h * d->w, rs = (size_t)d->r * d->s, pq = (size_t)pb->p * pb->q;
    const size_t xn = (size_t)d->n * hw * d->c, wn = (size_t)d->k * rs * d->c;
    const size_t yn = pb->dy ? (size_t)d->n * pq * d->k : 0;
    const size_t most = xn > wn ? (xn > yn ? xn : yn) : (wn > yn ? wn : yn);
    float *t = malloc(sizeof(float) * most);
    if (!t)
        return bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    wino_f32_transpose_batched(pb->x, t, d->n, hw, (size_t)d->c, 1, 0); /* NHWC -> NCHW */
    int rc = bench_cuda_upload_floats(t, xn, d->dtype, &st->x_own);
    wino_f32_transpose_batched(pb->w, t, d->k, rs, (size_t)d->c, 1, 0); /* KRSC -> KCRS */
    rc = rc || bench_cuda_upload_floats(t, wn, d->dtype, &st->w_own);
    if (yn) {
        wino_f32_transpose_batched(pb->dy, t, d->n, pq, (size_t)d->k, 1, 0); /* NPQK -> NKPQ */
        rc = rc || bench_cuda_upload_floats(t, yn, d->dtype, &st->dy_own);
    }
    free(t);
    return rc;
}

/* Describes x, w and the convolution (not y) in cuDNN's terms. */
static int describe_conv(const struct cuda_problem *pb, struct cudnn_state *st)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const int int8 = d->dtype == WINO_DTYPE_U8, f32 = d->dtype == WINO_DTYPE_F32;
    const cudnnTensorFormat_t fmt = st->nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    const cudnnDataType_t t = int8                          ? CUDNN_DATA_INT8
                              : d->dtype == WINO_DTYPE_F16  ? CUDNN_DATA_HALF
                              : d->dtype == WINO_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16
                                                            : CUDNN_DATA_FLOAT;
    /* FP32 on the FMA units: TF32 tensor cores would round the inputs to 10 mantissa bits */
    const cudnnMathType_t math = f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    return CUDNN_FAILED(cudnnCreateTensorDescriptor(&st->xd)) ||
           CUDNN_FAILED(cudnnCreateTensorDescriptor(&st->yd)) ||
           CUDNN_FAILED(cudnnCreateFilterDescriptor(&st->wd)) ||
           CUDNN_FAILED(cudnnCreateConvolutionDescriptor(&st->cd)) ||
           CUDNN_FAILED(cudnnSetTensor4dDescriptor(st->xd, fmt, t, d->n, d->c, d->h, d->w)) ||
           CUDNN_FAILED(cudnnSetFilter4dDescriptor(st->wd, t, fmt, d->k, d->c, d->r, d->s)) ||
           CUDNN_FAILED(cudnnSetConvolution2dDescriptor(
               st->cd, d->pad_h, d->pad_w, d->stride_h, d->stride_w, d->dilation_h,
               d->dilation_w, CUDNN_CROSS_CORRELATION,
               int8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT)) ||
           CUDNN_FAILED(cudnnSetConvolutionMathType(st->cd, math));
}

/* Describes y as type t; returns 0, or 1 with the error recorded. */
static int describe_output(const struct cuda_problem *pb, struct cudnn_state *st,
                           enum wino_dtype t)
{
    const cudnnDataType_t ct = t == WINO_DTYPE_S8     ? CUDNN_DATA_INT8
                               : t == WINO_DTYPE_F16  ? CUDNN_DATA_HALF
                               : t == WINO_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16
                                                      : CUDNN_DATA_FLOAT;
    st->y_type = t;
    return CUDNN_FAILED(cudnnSetTensor4dDescriptor(
        st->yd, st->nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, ct, pb->desc.n, pb->desc.k,
        pb->p, pb->q));
}

/* cuDNN's answer whether the algorithm takes the layer as described, and its workspace size. */
static cudnnStatus_t query_workspace(struct cudnn_state *st)
{
    if (st->op == BENCH_BWD_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle, st->wd, st->yd, st->cd, st->xd, (cudnnConvolutionBwdDataAlgo_t)st->algo,
            &st->ws_bytes);
    if (st->op == BENCH_BWD_FILTER)
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle, st->xd, st->yd, st->cd, st->wd, (cudnnConvolutionBwdFilterAlgo_t)st->algo,
            &st->ws_bytes);
    return cudnnGetConvolutionForwardWorkspaceSize(handle, st->xd, st->wd, st->cd, st->yd,
                                                   (cudnnConvolutionFwdAlgo_t)st->algo,
                                                   &st->ws_bytes);
}

/* Describes y: the problem's type, or for INT8 int8 and float where cuDNN refuses int8 output.
 * Returns 1 on an error (recorded), else 0 with the algorithm's refusal in *refusal
 * (CUDNN_STATUS_SUCCESS: none) and the output type for the table in note. */
static int choose_output(const struct cuda_problem *pb, struct cudnn_state *st,
                         cudnnStatus_t *refusal, char *note, size_t cap)
{
    const int int8 = pb->desc.dtype == WINO_DTYPE_U8;
    if (describe_output(pb, st, int8 ? WINO_DTYPE_S8 : pb->desc.dtype))
        return 1;
    *refusal = query_workspace(st);
    if (int8 && *refusal == CUDNN_STATUS_SUCCESS)
        snprintf(note, cap, ", int8 out");
    if (!int8 || *refusal == CUDNN_STATUS_SUCCESS)
        return 0;
    if (describe_output(pb, st, WINO_DTYPE_F32))
        return 1;
    if (query_workspace(st) == CUDNN_STATUS_SUCCESS) {
        snprintf(note, cap, ", float out (int8 out: %s)", cudnnGetErrorString(*refusal));
        *refusal = CUDNN_STATUS_SUCCESS;
    }
    return 0;
}

/* The workspace, where a huge one that does not fit is a refusal (1), not an error (2). */
static int alloc_workspace(struct cudnn_state *st, char *info, size_t cap)
{
    if (!st->ws_bytes)
        return 0;
    const cudaError_t e = cudaMalloc(&st->ws, st->ws_bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: clear it */
        st->ws = NULL;
        snprintf(info, cap, "workspace of %zu bytes does not fit in device memory", st->ws_bytes);
        return 1;
    }
    return bench_cuda_runtime_failed((int)e, "cudaMalloc(workspace)", __FILE__, __LINE__) ? 2
                                                                                            : 0;
}

/* One trial run: cuDNN may refuse an algorithm only when it runs. Leaves y poisoned again. */
static cudnnStatus_t trial_run(struct cudnn_state *st, size_t y_bytes, int *failed)
{
    const cudnnStatus_t s = convolve(st);
    *failed = s == CUDNN_STATUS_SUCCESS && bench_cuda_poison(st->stream, st->y, y_bytes);
    return s;
}

enum bench_prep bench_cudnn_prepare(const struct cuda_problem *pb, int algo, int nchw,
                                    struct bench_runner *out)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const int int8 = d->dtype == WINO_DTYPE_U8;
    memset(out, 0, sizeof *out);
    if (!handle) {
        snprintf(out->info, sizeof out->info, "cuDNN is not initialized");
        return BENCH_SKIP;
    }
    if (int8 && (nchw || d->c % 4 || d->k % 4)) {
        snprintf(out->info, sizeof out->info, "cuDNN INT8 needs NHWC and C, K multiples of 4");
        return BENCH_SKIP;
    }
    struct cudnn_state *st = calloc(1, sizeof *st);
    if (!st) {
        bench_cuda_record("calloc", __FILE__, __LINE__, "out of memory");
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
        return BENCH_FAIL;
    }
    st->op = pb->op;
    st->algo = algo;
    st->nchw = nchw;
    st->stream = pb->stream;
    if (pb->op == BENCH_BWD_DATA) /* dx: N x C x HW */
        st->out0 = d->n, st->out1 = d->c, st->out_inner = d->h * d->w;
    else if (pb->op == BENCH_BWD_FILTER) /* dw: K x C x RS */
        st->out0 = d->k, st->out1 = d->c, st->out_inner = d->r * d->s;
    else /* y: N x K x PQ */
        st->out0 = d->n, st->out1 = d->k, st->out_inner = pb->p * pb->q;
    st->y_elems = (size_t)st->out0 * st->out1 * st->out_inner;
    st->alpha = 1.0f;
    st->y_scale = pb->y_scale;
    st->x = pb->d_x;
    st->w = pb->d_w;
    st->dy = pb->d_dy;
    enum bench_prep result = BENCH_FAIL;
    char note[96] = "";
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    int failed = 0;
    if (describe_conv(pb, st) ||
        (pb->op == BENCH_FWD ? choose_output(pb, st, &s, note, sizeof note)
                                  : describe_output(pb, st, d->dtype)))
        goto done;
    if (pb->op != BENCH_FWD) /* dy described as y; the output is dx or dw */
        s = query_workspace(st);
    if (s != CUDNN_STATUS_SUCCESS) {
        snprintf(out->info, sizeof out->info, "%s", cudnnGetErrorString(s));
        result = BENCH_SKIP;
        goto done;
    }
    if ((int8 && upload_int8(pb, st)) || (!int8 && nchw && upload_nchw(pb, st)))
        goto done;
    if (st->x_own) {
        st->x = st->x_own;
        st->w = st->w_own;
        st->dy = st->dy_own;
    }
    const size_t y_bytes = st->y_elems * bench_dtype_size(st->y_type);
    if (bench_cuda_alloc(y_bytes, 1, &st->y))
        goto done;
    const int ws = alloc_workspace(st, out->info, sizeof out->info);
    if (ws) {
        result = ws == 1 ? BENCH_SKIP : BENCH_FAIL;
        goto done;
    }
    s = trial_run(st, y_bytes, &failed);
    if (failed)
        goto done;
    if (s != CUDNN_STATUS_SUCCESS) {
        snprintf(out->info, sizeof out->info, "%s (when run)", cudnnGetErrorString(s));
        result = BENCH_SKIP;
        goto done;
    }
    snprintf(out->info, sizeof out->info, "%s%s", algo_name(pb->op, algo), note);
    out->workspace_bytes = st->ws_bytes;
    out->state = st;
    out->run = cudnn_run;
    out->output = cudnn_output;
    out->destroy = cudnn_destroy;
    st = NULL;
    result = BENCH_READY;
done:
    if (result == BENCH_FAIL)
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
    cudnn_destroy(st);
    return result;
}

#else /* built without cuDNN: wino is timed alone */

int bench_cudnn_available(void) { return 0; }
int bench_cudnn_algo_count(int op)
{
    (void)op;
    return 0;
}
const char *bench_cudnn_version(void) { return ""; }
void bench_cudnn_shutdown(void) {}

int bench_cudnn_init(void *stream, char *why, size_t cap)
{
    (void)stream;
    snprintf(why, cap, "this build has no cuDNN (not found at build time)");
    return 1;
}

enum bench_prep bench_cudnn_prepare(const struct cuda_problem *pb, int algo, int nchw,
                                    struct bench_runner *out)
{
    (void)pb;
    (void)algo;
    (void)nchw;
    memset(out, 0, sizeof *out);
    snprintf(out->info, sizeof out->info, "this build has no cuDNN");
    return BENCH_SKIP;
}

#endif
