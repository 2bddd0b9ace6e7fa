/* The CUDA backend of wino_conv2d, in the CUDA component (src/cuda/cuda_component.h): the
 * filters are transformed once at create; run() enqueues on the caller's stream either the
 * non-fused stages (input transform, alpha^2 GEMMs in one strided-batched cuBLAS call, output
 * transform with bias, ReLU or INT8 requantization), or one fused kernel
 * (winograd_fused_kernels.cu), or the input transform and a kernel fusing the GEMMs with the
 * output transform. Which one: the caller's variant, or for AUTO the fastest,
 * timed at create (Mazaheri et al. (EuroSys'20) section 3.3, "WV"). The ROWS variant is a
 * one-dimensional tile in one kernel of its own (winograd_rows.cu). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cuda/component_error.h"
#include "cuda/cuda_component.h"
#include "cuda/rotate_filters.h"
#include "cuda/device_common.h"
#include "cuda/winograd_kernels.h"
#include "cuda/winograd_rows.h"

enum element { ELEMENT_F32, ELEMENT_F16, ELEMENT_BF16, ELEMENT_S8 }; /* BF16: ROWS only */

/* run()'s argument slots (device_common.h's seen_arguments). */
enum { SEEN_X, SEEN_Y, SEEN_WORKSPACE, SEEN_STREAM };

struct wino_cuda_conv {
    int device;
    cudaStream_t stream; /* the context's: create()'s work and its timing runs */
    struct shared_blas *blas;
    struct wino_cuda_shape shape;
    enum element element; /* of V and U */
    int tf32, relu;
    enum wino_variant variant; /* what run() launches: NON_FUSED, FUSED, FUSED_OUTPUT or ROWS */
    const struct wino_tile_matrices *line; /* ROWS: its one-dimensional tile, and its plan */
    struct wino_rows_plan rows;
    void *u;              /* U[pos][kp][cp] */
    float *bias;          /* K values on the device, or NULL */
    float *scale;         /* INT8: K requantization scales on the device (bias: K offsets) */
    struct wino_cuda_s8_consts s8;
    size_t v_bytes, m_bytes; /* the workspace parts: V, then M and cuBLAS's (non-fused) */
    struct seen_arguments seen; /* run() asks CUDA only about arguments not seen lately */
};

/* cuBLAS's own workspace, a part of the caller's (non-fused variant): set on the handle by each
 * run() so that cuBLAS allocates nothing there, in a CUDA graph capture neither. */
#define BLAS_WORKSPACE_BYTES ((size_t)4 << 20)

static int round_up(int v, int to)
{
    return (v + to - 1) / to * to;
}

/* The shape of desc with F(m, r), channels padded as the element type's GEMMs want them. */
static enum wino_status make_shape(const struct wino_conv2d_desc *d,
                                   const struct wino_conv_sizes *sz, int m, enum element e,
                                   struct wino_cuda_shape *s)
{
    const int pad = e == ELEMENT_S8 ? 16 : e == ELEMENT_F16 ? 8 : 4; /* 16-byte rows */
    memset(s, 0, sizeof *s);
    s->n = d->n, s->c = d->c, s->h = d->h, s->w = d->w, s->k = d->k;
    s->p = sz->p, s->q = sz->q, s->pad_h = d->pad_h, s->pad_w = d->pad_w;
    s->nhwc = d->layout == WINO_LAYOUT_NHWC;
    s->m = m, s->r = d->r, s->alpha = m + d->r - 1;
    s->tiles_h = (sz->p - 1) / m + 1, s->tiles_w = (sz->q - 1) / m + 1; /* no overflow */
    s->tiles = (long long)d->n * s->tiles_h * s->tiles_w;
    if (d->c > INT_MAX - 16 || d->k > INT_MAX - 16 || s->tiles > INT_MAX)
        return wino_fail(WINO_UNSUPPORTED, "CUDA Winograd: more than 2^31 tiles or channels");
    s->cp = round_up(d->c, pad), s->kp = round_up(d->k, pad);
    return WINO_SUCCESS;
}

static size_t element_size(enum element e)
{
    return e == ELEMENT_F32 ? 4 : e == ELEMENT_S8 ? 1 : 2;
}

/* V and M of one chunk of tiles together, which bounds the workspace; but at least twice U,
 * which every chunk's GEMMs read again. Chunks that stay in the L2 cache (24 MiB) measured up
 * to 25% slower on an H100: their extra launches cost more than the memory traffic saved. */
#define CHUNK_BYTES ((size_t)128 << 20)

/* The chunk of tiles s->tn and the workspace: V (element type) then M (float or int32) of a
 * chunk, each 256-byte aligned. */
static void plan_workspace(enum element e, struct wino_cuda_shape *s, size_t *v_bytes,
                           size_t *m_bytes)
{
    const size_t a2 = (size_t)s->alpha * s->alpha;
    const size_t per_tile = a2 * ((size_t)s->cp * element_size(e) + (size_t)s->kp * 4);
    const size_t u_bytes = a2 * (size_t)s->kp * s->cp * element_size(e);
    size_t fit = (CHUNK_BYTES > 2 * u_bytes ? CHUNK_BYTES : 2 * u_bytes) / per_tile;
    const size_t widest = (size_t)(s->cp > s->kp ? s->cp : s->kp);
    if (fit > INT_MAX / widest) /* the kernels index a chunk's tiles x channels in 32 bits */
        fit = INT_MAX / widest;
    s->tn = (int)(fit < 1 ? 1 : fit < (size_t)s->tiles ? fit : (size_t)s->tiles);
    *v_bytes = (a2 * s->tn * (size_t)s->cp * element_size(e) + 255) / 256 * 256;
    *m_bytes = (a2 * s->tn * (size_t)s->kp * 4 + 255) / 256 * 256 + BLAS_WORKSPACE_BYTES;
}

static enum wino_status upload(void **dst, const void *src, size_t bytes)
{
    CUDA_TRY(cudaMalloc(dst, bytes));
    CUDA_TRY(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return WINO_SUCCESS;
}

/* The parts every operator has: device and the context's stream. */
static enum wino_status open_conv(const struct wino_context *ctx, struct wino_cuda_conv **out)
{
    enum wino_status st = check_context(ctx);
    if (st)
        return st;
    struct wino_cuda_conv *c = (struct wino_cuda_conv *)calloc(1, sizeof *c);
    if (!c)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    c->device = ctx->device;
    c->stream = (cudaStream_t)ctx->stream;
    *out = c;
    return WINO_SUCCESS;
}

/* The ROWS variant's operator: U in its own layout, no workspace. */
static enum wino_status create_rows(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes, const void *weights,
                                    int tile_m, const struct wino_tile_matrices *line,
                                    const float *bias, int relu, struct wino_cuda_conv *c)
{
    c->element = desc->dtype == WINO_DTYPE_BF16 ? ELEMENT_BF16 : ELEMENT_F16;
    c->relu = relu, c->line = line;
    c->variant = WINO_VARIANT_ROWS;
    const char *why = wino_rows_refusal(desc, c->device);
    if (why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    if ((why = wino_rows_tile_refusal(desc, tile_m)))
        return wino_fail(WINO_UNSUPPORTED, "%s (tile_m = %d, s = %d)", why, tile_m, desc->s);
    if (!line || line->m != tile_m || line->r != desc->s)
        return wino_fail(WINO_UNSUPPORTED, "the ROWS variant: no recorded tile F(%d, %d)", tile_m,
                         desc->s);
    int sms = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->device));
    enum wino_status st = wino_rows_plan_of(desc, sizes, tile_m, line->at, line->g, line->bt,
                                            relu, sms, &c->rows);
    if (st)
        return wino_fail(st, "the ROWS variant: more than 2^31 tiles");
    if ((st = check_device_pointer(weights, c->device, "weights")))
        return st;
    CUDA_TRY(cudaMalloc(&c->u, wino_rows_u_bytes(&c->rows)));
    if (bias && (st = upload((void **)&c->bias, bias, sizeof(float) * (size_t)desc->k)))
        return st;
    CUDA_TRY(wino_rows_setup(&c->rows));
    CUDA_TRY(wino_rows_filter_transform(&c->rows, weights, c->u, c->stream));
    CUDA_TRY(cudaStreamSynchronize(c->stream));
    return WINO_SUCCESS;
}

static enum wino_status create_float(const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes, const void *weights,
                                     int tile_m, const float *bias, int relu, int tf32,
                                     struct wino_cuda_conv *c)
{
    c->element = desc->dtype == WINO_DTYPE_F16 ? ELEMENT_F16 : ELEMENT_F32;
    c->tf32 = tf32, c->relu = relu;
    enum wino_status st = make_shape(desc, sizes, tile_m, c->element, &c->shape);
    if (!st && !wino_cuda_has_tile(tile_m, desc->r))
        st = wino_fail(WINO_UNSUPPORTED, "no generated CUDA transforms for F(%d, %d)", tile_m,
                       desc->r);
    if (!st)
        st = check_device_pointer(weights, c->device, "weights");
    if (st)
        return st;
    const struct wino_cuda_shape *s = &c->shape;
    const size_t u_bytes =
        (size_t)s->alpha * s->alpha * s->kp * s->cp * element_size(c->element);
    CUDA_TRY(cudaMalloc(&c->u, u_bytes));
    if (bias && (st = upload((void **)&c->bias, bias, sizeof(float) * (size_t)desc->k)))
        return st;
    CUDA_TRY(wino_cuda_filter_transform(s, c->element == ELEMENT_F16, weights, c->u, c->stream));
    CUDA_TRY(cudaStreamSynchronize(c->stream));
    plan_workspace(c->element, &c->shape, &c->v_bytes, &c->m_bytes);
    return WINO_SUCCESS;
}

static enum wino_status create_int8(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes,
                                    const struct wino_int8_layer *L, struct wino_cuda_conv *c)
{
    c->element = ELEMENT_S8;
    enum wino_status st = make_shape(desc, sizes, L->tile.m, ELEMENT_S8, &c->shape);
    if (st)
        return st;
    const struct wino_cuda_shape *s = &c->shape;
    c->s8.f_a = L->f_a, c->s8.lo = L->lo, c->s8.hi = L->hi;
    c->s8.x_signed = L->x_signed, c->s8.y_signed = L->y_signed;
    /* Uq[pos][c][k] on the host -> U[pos][kp][cp], zero padded */
    const size_t a2 = (size_t)s->alpha * s->alpha, plane = (size_t)s->kp * s->cp;
    int8_t *u = (int8_t *)calloc(a2 * plane, 1);
    if (!u)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    for (size_t pos = 0; pos < a2; pos++)
        for (int ch = 0; ch < s->c; ch++)
            for (int k = 0; k < s->k; k++)
                u[pos * plane + (size_t)k * s->cp + ch] = L->uq[(pos * s->c + ch) * s->k + k];
    st = upload(&c->u, u, a2 * plane);
    free(u);
    if (!st)
        st = upload((void **)&c->scale, L->scale, sizeof(float) * (size_t)s->k);
    if (!st)
        st = upload((void **)&c->bias, L->bias, sizeof(float) * (size_t)s->k);
    plan_workspace(c->element, &c->shape, &c->v_bytes, &c->m_bytes);
    return st;
}

static enum wino_status copy_to_host(const struct wino_context *ctx, const void *src,
                                     size_t bytes, void *dst)
{
    enum wino_status st = check_context(ctx);
    if (!st)
        st = check_device_pointer(src, ctx->device, "weights");
    if (!st)
        CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return st;
}

/* M[pos] = V[pos] U[pos]^T for every position of a chunk, in one call on stream; cuBLAS's
 * workspace follows M. */
static enum wino_status gemms(const struct wino_cuda_conv *c, const struct wino_cuda_shape *s,
                              const void *v, void *m, cudaStream_t stream)
{
    const long long a2 = (long long)s->alpha * s->alpha;
    const float one = 1.0f, zero = 0.0f;
    const int one_i = 1, zero_i = 0;
    const int s8 = c->element == ELEMENT_S8;
    const cudaDataType in = s8 ? CUDA_R_8I : c->element == ELEMENT_F16 ? CUDA_R_16F : CUDA_R_32F;
    const cublasComputeType_t compute = s8       ? CUBLAS_COMPUTE_32I
                                        : c->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
    char *blas_ws = (char *)m + c->m_bytes - BLAS_WORKSPACE_BYTES;
    cublasHandle_t h = c->blas->handle;
    pthread_mutex_lock(&c->blas->lock);
    /* the stream first: cublasSetStream resets the handle's workspace */
    cublasStatus_t b = cublasSetStream(h, stream);
    if (b == CUBLAS_STATUS_SUCCESS)
        b = cublasSetWorkspace(h, blas_ws, BLAS_WORKSPACE_BYTES);
    if (b == CUBLAS_STATUS_SUCCESS)
        b = cublasGemmStridedBatchedEx(
            h, CUBLAS_OP_T, CUBLAS_OP_N, s->kp, s->tn, s->cp,
            s8 ? (const void *)&one_i : (const void *)&one, c->u, in, s->cp,
            (long long)s->kp * s->cp, v, in, s->cp, (long long)s->tn * s->cp,
            s8 ? (const void *)&zero_i : (const void *)&zero, m, s8 ? CUDA_R_32I : CUDA_R_32F,
            s->kp, (long long)s->tn * s->kp, (int)a2, compute, CUBLAS_GEMM_DEFAULT);
    pthread_mutex_unlock(&c->blas->lock);
    if (b != CUBLAS_STATUS_SUCCESS)
        return wino_fail(WINO_DEVICE_ERROR, "cuBLAS batched GEMM failed: %s",
                         cublasGetStatusString(b));
    return WINO_SUCCESS;
}

/* The fused kernel for the tiles of s: from x (v NULL) or from the chunk's V. */
static enum wino_status run_fused(const struct wino_cuda_conv *c, const struct wino_cuda_shape *s,
                                  const void *v, const void *x, void *y, cudaStream_t stream)
{
    CUDA_TRY(c->element == ELEMENT_S8
                 ? wino_cuda_s8_fused(s, &c->s8, (const signed char *)c->u,
                                      (const signed char *)v, x, c->scale, c->bias, y, stream)
                 : wino_cuda_fused(s, c->element == ELEMENT_F16, c->u, v, x, c->bias, c->relu, y,
                                   stream));
    return WINO_SUCCESS;
}

/* The three stages for the chunk of tiles s->t0 .. s->t0 + s->tn - 1 (FUSED_OUTPUT: the input
 * transform, then the fused kernel). */
static enum wino_status run_chunk(const struct wino_cuda_conv *c, const struct wino_cuda_shape *s,
                                  const void *x, void *y, void *v, void *m, cudaStream_t stream)
{
    const int fused_output = c->variant == WINO_VARIANT_FUSED_OUTPUT;
    if (c->element == ELEMENT_S8) {
        CUDA_TRY(wino_cuda_s8_input_transform(s, &c->s8, x, (signed char *)v, stream));
        if (fused_output)
            return run_fused(c, s, v, x, y, stream);
        enum wino_status st = gemms(c, s, v, m, stream);
        if (st)
            return st;
        CUDA_TRY(wino_cuda_s8_output_transform(s, &c->s8, (const int *)m, c->scale, c->bias, y,
                                               stream));
        return WINO_SUCCESS;
    }
    const int half = c->element == ELEMENT_F16;
    CUDA_TRY(wino_cuda_input_transform(s, half, x, v, stream));
    if (fused_output)
        return run_fused(c, s, v, x, y, stream);
    enum wino_status st = gemms(c, s, v, m, stream);
    if (st)
        return st;
    CUDA_TRY(wino_cuda_output_transform(s, half, (const float *)m, c->bias, c->relu, y, stream));
    return WINO_SUCCESS;
}

static enum wino_status run_stages(const struct wino_cuda_conv *c, const void *x, void *y,
                                   char *workspace, cudaStream_t stream)
{
    if (c->variant == WINO_VARIANT_ROWS) {
        CUDA_TRY(wino_rows_run(&c->rows, c->u, x, c->bias, y, stream));
        return WINO_SUCCESS;
    }
    if (c->variant == WINO_VARIANT_FUSED) { /* all tiles in one launch */
        struct wino_cuda_shape all = c->shape;
        all.t0 = 0, all.tn = (int)all.tiles;
        return run_fused(c, &all, NULL, x, y, stream);
    }
    struct wino_cuda_shape s = c->shape;
    enum wino_status st = WINO_SUCCESS;
    for (s.t0 = 0; s.t0 < c->shape.tiles && !st; s.t0 += c->shape.tn) {
        const long long left = c->shape.tiles - s.t0;
        s.tn = left < c->shape.tn ? (int)left : c->shape.tn;
        st = run_chunk(c, &s, x, y, workspace, workspace + c->v_bytes, stream);
    }
    return st;
}

static size_t workspace_bytes(const struct wino_cuda_conv *c)
{
    return c->variant == WINO_VARIANT_FUSED || c->variant == WINO_VARIANT_ROWS ? 0
           : c->variant == WINO_VARIANT_FUSED_OUTPUT ? c->v_bytes
                                                     : c->v_bytes + c->m_bytes;
}

/* The check of run()'s argument slot (SEEN_X ...) for p. */
static enum wino_status check_run_argument(struct wino_cuda_conv *c, int slot, const void *p,
                                           const char *what)
{
    return check_seen(&c->seen, slot, p, slot == SEEN_STREAM, c->device, what);
}

static enum wino_status conv_run(struct wino_cuda_conv *c, const void *x, void *y,
                                 void *workspace, size_t bytes, void *stream)
{
    enum wino_status st = check_run_argument(c, SEEN_X, x, "x");
    if (!st)
        st = check_run_argument(c, SEEN_Y, y, "y");
    if (!st && bytes < workspace_bytes(c))
        st = wino_fail(WINO_INSUFFICIENT_WORKSPACE, "workspace of %zu bytes, %zu needed", bytes,
                       workspace_bytes(c));
    if (!st && workspace_bytes(c))
        st = check_run_argument(c, SEEN_WORKSPACE, workspace, "workspace");
    if (!st)
        st = check_run_argument(c, SEEN_STREAM, stream, "the stream");
    struct device_scope scope;
    if (!st && !(st = enter_run_device(c->device, &scope))) {
        st = run_stages(c, x, y, (char *)workspace, (cudaStream_t)stream);
        leave_run_device(c->device, &scope);
    }
    return st;
}

/* New FP32 / FP16 filters, transformed into U on stream and nothing else: the runs enqueued
 * after it on that stream read them. */
static enum wino_status conv_set_weights(struct wino_cuda_conv *c, const void *weights,
                                         void *stream)
{
    if (c->element == ELEMENT_S8)
        return wino_fail(WINO_UNSUPPORTED, "an INT8 operator takes its weights at create only "
                                           "(they are quantized on the host)");
    enum wino_status st = check_device_pointer(weights, c->device, "weights");
    if (!st)
        st = check_run_argument(c, SEEN_STREAM, stream, "the stream");
    struct device_scope scope;
    if (st || (st = enter_run_device(c->device, &scope)))
        return st;
    const cudaError_t e =
        c->variant == WINO_VARIANT_ROWS
            ? wino_rows_filter_transform(&c->rows, weights, c->u, (cudaStream_t)stream)
            : wino_cuda_filter_transform(&c->shape, c->element == ELEMENT_F16, weights, c->u,
                                         (cudaStream_t)stream);
    leave_run_device(c->device, &scope);
    return e == cudaSuccess ? WINO_SUCCESS
                            : cuda_failed(e, "the filter transform", __FILE__, __LINE__);
}

static enum wino_variant conv_variant(const struct wino_cuda_conv *conv)
{
    return conv->variant;
}

/* New batch and image sizes: the tile counts, the chunk and the workspace follow them; U, the
 * variant and the fused kernels' setup depend on C, K and the tile alone. Host work only. */
static enum wino_status conv_reshape(struct wino_cuda_conv *c, const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes, size_t *bytes)
{
    if (c->variant == WINO_VARIANT_ROWS) {
        const struct wino_rows_plan *was = &c->rows;
        const struct wino_tile_matrices *t = c->line;
        if (desc->c != was->c || desc->k != was->k || desc->r != was->r || desc->s != was->s ||
            desc->pad_h != was->pad_h || desc->pad_w != was->pad_w ||
            desc->layout != WINO_LAYOUT_NHWC)
            return wino_fail(WINO_INTERNAL_ERROR, "CUDA reshape: only N, H and W may change");
        const int outs = was->outs;
        if (wino_rows_plan_of(desc, sizes, t->m, t->at, t->g, t->bt, c->relu, was->sms,
                              &c->rows))
            return wino_fail(WINO_UNSUPPORTED, "the ROWS variant: more than 2^31 tiles");
        if (c->rows.alpha != ROWS_ALPHA)
            wino_rows6_set_outs(&c->rows, outs); /* U's layout stays */
        *bytes = 0;
        return WINO_SUCCESS;
    }
    const struct wino_cuda_shape *old = &c->shape;
    if (desc->c != old->c || desc->k != old->k || desc->r != old->r ||
        (desc->layout == WINO_LAYOUT_NHWC) != old->nhwc || desc->pad_h != old->pad_h ||
        desc->pad_w != old->pad_w)
        return wino_fail(WINO_INTERNAL_ERROR, "CUDA reshape: only N, H and W may change");
    struct wino_cuda_shape s;
    size_t v_bytes = 0, m_bytes = 0;
    const enum wino_status st = make_shape(desc, sizes, old->m, c->element, &s);
    if (st)
        return st;
    plan_workspace(c->element, &s, &v_bytes, &m_bytes);
    c->shape = s, c->v_bytes = v_bytes, c->m_bytes = m_bytes;
    *bytes = workspace_bytes(c);
    return WINO_SUCCESS;
}

/* One timed run of choose_fastest (median_run_ms's callback). */
struct timed_run {
    const struct wino_cuda_conv *c;
    const void *x;
    void *y;
    char *workspace;
};
static enum wino_status run_timed(void *arg, void *stream)
{
    const struct timed_run *t = (const struct timed_run *)arg;
    return run_stages(t->c, t->x, t->y, t->workspace, (cudaStream_t)stream);
}

/* AUTO: runs each of the count variants on zeros in scratch device memory and keeps the
 * fastest; where that memory is not to be had, the first (non-fused, which needs no timing to be
 * correct). */
static void choose_fastest(struct wino_cuda_conv *c, const struct wino_conv_sizes *sz,
                           const enum wino_variant *variants, int count)
{
    const size_t e = element_size(c->element);
    void *x = NULL, *y = NULL, *ws = NULL;
    float best = -1.0f;
    enum wino_variant chosen = variants[0];
    if (cudaMalloc(&x, sz->x_elems * e) == cudaSuccess &&
        cudaMalloc(&y, sz->y_elems * e) == cudaSuccess &&
        cudaMalloc(&ws, c->v_bytes + c->m_bytes) == cudaSuccess &&
        cudaMemsetAsync(x, 0, sz->x_elems * e, c->stream) == cudaSuccess)
        for (int i = 0; i < count; i++) {
            c->variant = variants[i];
            struct timed_run t = {c, x, y, (char *)ws};
            const float ms = median_run_ms(c->stream, run_timed, &t);
            if (ms >= 0.0f && (best < 0.0f || ms < best))
                best = ms, chosen = variants[i];
        }
    wino_ok(); /* the failed runs above leave no error behind */
    cudaGetLastError();
    cudaFree(x);
    cudaFree(y);
    cudaFree(ws);
    c->variant = chosen;
}

/* Sets c->variant from the caller's. */
static enum wino_status choose_variant(struct wino_cuda_conv *c, enum wino_variant variant,
                                       const struct wino_conv_sizes *sz)
{
    if (variant == WINO_VARIANT_ROWS) /* made so by create_rows, for FP16 and BF16 */
        return c->variant == WINO_VARIANT_ROWS
                   ? WINO_SUCCESS
                   : wino_fail(WINO_UNSUPPORTED, "the ROWS variant is FP16 and BF16");
    const struct wino_cuda_shape *s = &c->shape;
    const int fused = wino_cuda_has_fused(s->m, s->r), output = fused && c->element != ELEMENT_F32;
    if ((variant == WINO_VARIANT_FUSED && !fused) ||
        (variant == WINO_VARIANT_FUSED_OUTPUT && !output))
        return wino_fail(WINO_UNSUPPORTED, "CUDA: the fused kernels exist for F(2x2, 3x3) and "
                                           "F(4x4, 3x3) (fused output: FP16 and INT8), not for "
                                           "F(%dx%d, %dx%d) %s",
                         s->m, s->m, s->r, s->r, c->element == ELEMENT_F32 ? "FP32" : "");
    const enum wino_variant all[3] = {WINO_VARIANT_NON_FUSED, WINO_VARIANT_FUSED,
                                      WINO_VARIANT_FUSED_OUTPUT};
    if (fused)
        CUDA_TRY(c->element == ELEMENT_S8 ? wino_cuda_s8_fused_setup(s, &c->s8)
                                          : wino_cuda_fused_setup(s, c->element == ELEMENT_F16));
    c->variant = variant == WINO_VARIANT_AUTO ? WINO_VARIANT_NON_FUSED : variant;
    if (variant == WINO_VARIANT_AUTO && fused)
        choose_fastest(c, sz, all, output ? 3 : 2);
    return WINO_SUCCESS;
}

static void conv_destroy(struct wino_cuda_conv *c)
{
    if (!c)
        return;
    struct device_scope scope;
    const int entered = enter_device(c->device, &scope) == WINO_SUCCESS;
    cudaFree(c->u);
    cudaFree(c->bias);
    cudaFree(c->scale);
    if (entered)
        leave_device(&scope);
    free(c);
}

/* Builds the operator in the context's device: the parts every operator has, the device's
 * cuBLAS handle, then make (FP32 / FP16 or INT8), then the variant. */
template <typename Make>
static enum wino_status create(const struct wino_context *ctx, enum wino_variant variant,
                               const struct wino_conv_sizes *sizes, Make make,
                               struct wino_cuda_conv **conv, size_t *bytes)
{
    struct wino_cuda_conv *c = NULL;
    struct device_scope scope;
    enum wino_status st = open_conv(ctx, &c);
    if (!st && !(st = enter_device(ctx->device, &scope))) {
        st = shared_blas_of(ctx->device, &c->blas);
        if (!st)
            st = make(c);
        if (!st)
            st = choose_variant(c, variant, sizes);
        leave_device(&scope);
    }
    if (st) {
        conv_destroy(c);
        return st;
    }
    *conv = c;
    *bytes = workspace_bytes(c);
    return WINO_SUCCESS;
}

static enum wino_status conv_create(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes, const void *weights,
                                    const struct wino_context *ctx, int tile_m,
                                    const struct wino_tile_matrices *line,
                                    enum wino_variant variant, const float *bias, int relu,
                                    int tf32, struct wino_cuda_conv **conv,
                                    size_t *workspace_bytes)
{
    return create(
        ctx, variant, sizes,
        [=](struct wino_cuda_conv *c) {
            return variant == WINO_VARIANT_ROWS
                       ? create_rows(desc, sizes, weights, tile_m, line, bias, relu, c)
                       : create_float(desc, sizes, weights, tile_m, bias, relu, tf32, c);
        },
        conv, workspace_bytes);
}

static enum wino_status conv_create_int8(const struct wino_conv2d_desc *desc,
                                         const struct wino_conv_sizes *sizes,
                                         const struct wino_int8_layer *layer,
                                         const struct wino_context *ctx,
                                         enum wino_variant variant, struct wino_cuda_conv **conv,
                                         size_t *workspace_bytes)
{
    return create(
        ctx, variant, sizes,
        [=](struct wino_cuda_conv *c) { return create_int8(desc, sizes, layer, c); }, conv,
        workspace_bytes);
}

/* The component's one export (default visibility; everything else is hidden). */
extern "C" __attribute__((visibility("default"))) const void *
wino_cuda_component(const struct wino_component_services *services)
{
    static const struct wino_cuda_ops ops = {WINO_CUDA_ABI,   conv_create,  conv_create_int8,
                                             copy_to_host,    conv_reshape, conv_run,
                                             conv_set_weights, conv_variant, conv_destroy,
                                             rotated_filters_create, rotate_filters,
                                             &wino_cuda_winrs_ops, &wino_cuda_vendor_ops,
                                             device_zeros,    device_free,  time_run,
                                             device_name};
    return wino_component_use_services(services, WINO_CUDA_ABI) ? &ops : NULL;
}
