/* The context check shared by every create, the GPU backends' shared parts of a create, and
 * wino_conv2d_create on the CUDA backend: what it accepts, before the backend (src/cuda) builds
 * the operator. */
#include <stdio.h>
#include <stdlib.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/tile_matrices.h"
#include "cuda/cuda_component.h"

enum wino_status wino_context_check(const struct wino_context *ctx)
{
    if (!ctx)
        return WINO_SUCCESS;
    if (ctx->threads < 0 || ctx->threads > WINO_MAX_THREADS)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "context threads = %d outside [0, %d] (0: the threads this process "
                         "may use)",
                         ctx->threads, WINO_MAX_THREADS);
    if (ctx->backend != WINO_BACKEND_CPU && ctx->backend != WINO_BACKEND_CUDA &&
        ctx->backend != WINO_BACKEND_OPENCL)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown backend %d", (int)ctx->backend);
    if (ctx->backend == WINO_BACKEND_CUDA && ctx->device < 0)
        return wino_fail(WINO_INVALID_ARGUMENT, "CUDA device %d must be >= 0", ctx->device);
    if (ctx->backend == WINO_BACKEND_OPENCL && (!ctx->cl_context || !ctx->cl_device ||
                                                !ctx->stream))
        return wino_fail(WINO_INVALID_ARGUMENT, "the OpenCL backend needs the context's "
                                                "cl_context, cl_device and stream (a "
                                                "cl_command_queue)");
    return WINO_SUCCESS;
}

/* The CUDA path, FP32, FP16 and INT8 alike: the component (src/op/cuda_loader.c). */
static enum wino_status run_cuda(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    return wino_cuda_conv_run(op->cuda, io->in, io->out, io->workspace, io->workspace_bytes,
                              io->stream);
}

static enum wino_status reshape_cuda(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                     const struct wino_conv_sizes *sizes, size_t *bytes)
{
    return wino_cuda_conv_reshape(op->cuda, d, sizes, bytes);
}

static enum wino_variant variant_cuda(const wino_conv2d *op)
{
    return wino_cuda_conv_variant(op->cuda);
}

static void release_cuda(wino_conv2d *op)
{
    wino_cuda_conv_destroy(op->cuda);
}

static enum wino_status set_weights_cuda(wino_conv2d *op, const void *weights, void *stream)
{
    return wino_cuda_conv_set_weights(op->cuda, weights, stream);
}

const struct wino_conv2d_path wino_path_cuda = {run_cuda, reshape_cuda, variant_cuda,
                                                release_cuda, set_weights_cuda};

/* The largest FP16 tile: measured relative L1 errors 8e-3 at alpha 8, 3e-2 to 3e-1 beyond. */
#define WINO_CUDA_F16_MAX_ALPHA 8

int wino_gpu_default_tile_m(const struct wino_conv2d_desc *d)
{
    return d->r <= 3 ? 4 : 2;
}

struct wino_conv2d *wino_gpu_winograd_new(const struct wino_conv2d_desc *desc,
                                          const struct wino_conv_sizes *sizes, int tile_m,
                                          const struct wino_context *ctx,
                                          const struct wino_conv2d_path *path)
{
    struct wino_conv2d *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->desc = *desc;
    c->sizes = *sizes;
    c->algo = WINO_ALGO_WINOGRAD;
    c->tile_m = tile_m;
    c->backend = ctx->backend;
    c->stream = ctx->stream;
    c->path = path;
    return c;
}

int wino_cuda_rows_default_m(const struct wino_conv2d_desc *d)
{
    return d->dtype == WINO_DTYPE_F16 && d->s == 3 ? 4 : WINO_ROWS_ALPHA + 1 - d->s;
}

int wino_cuda_rows_tile_m(const struct wino_conv2d_desc *d)
{
    return (d->dtype == WINO_DTYPE_F16 || d->dtype == WINO_DTYPE_BF16) &&
                   d->layout == WINO_LAYOUT_NHWC
               ? wino_cuda_rows_default_m(d)
               : 0;
}

/* Why wino's own FP32 / FP16 Winograd (BF16 too with the ROWS variant) cannot serve desc with
 * F(tile_m, r), or NULL; *status is the refusal's status. */
static const char *own_refusal(const struct wino_conv2d_desc *desc,
                               const struct wino_conv2d_options *o, int tile_m, char *buf,
                               size_t cap, enum wino_status *status)
{
    *status = WINO_UNSUPPORTED;
    const int rows = o->variant == WINO_VARIANT_ROWS;
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16 &&
        !(rows && desc->dtype == WINO_DTYPE_BF16))
        return "CUDA: wino's kernels are FP32 and FP16, and BF16 with the ROWS variant (INT8 "
               "through wino_conv2d_create_int8; BF16 is otherwise the vendor's: "
               "WINO_ALGO_VENDOR)";
    if (rows && desc->dtype == WINO_DTYPE_F32)
        return "the ROWS variant is FP16 and BF16";
    if (o->tf32 && desc->dtype != WINO_DTYPE_F32) {
        *status = WINO_INVALID_ARGUMENT;
        return "tf32 applies to FP32 convolutions only";
    }
    if (o->matrices)
        return "CUDA: Winograd runs the generated tiles only (recorded points, options.matrices "
               "NULL)";
    const char *why = wino_winograd_refusal(desc, tile_m);
    if (why)
        return why;
    if (!rows && desc->dtype == WINO_DTYPE_F16 && tile_m + desc->r - 1 > WINO_CUDA_F16_MAX_ALPHA) {
        snprintf(buf, cap, "FP16 Winograd with alpha = %d > %d loses the result to rounding "
                 "(over 2%% relative error; docs/cuda-winograd.md): take a smaller tile",
                 tile_m + desc->r - 1, WINO_CUDA_F16_MAX_ALPHA);
        return buf;
    }
    return NULL;
}

/* The tiles AUTO times: m = 2 to 7. F(8x8, 3x3) (alpha 10) was never the fastest tile on the
 * eurosys20 set (bench/results/2026-11-24_cuda-f32_eurosys20_b5_vendor_h100.csv) and has the
 * largest error. */
#define AUTO_MIN_M 2
#define AUTO_MAX_M 7

int wino_cuda_auto_tiles(const struct wino_conv2d_desc *desc, int with_rows, int *tiles)
{
    static const struct wino_conv2d_options chosen_by_wino; /* AUTO, nothing fixed */
    static const struct wino_conv2d_options rows = {.variant = WINO_VARIANT_ROWS};
    int count = 0;
    for (int m = AUTO_MIN_M; m <= AUTO_MAX_M; m++) {
        char buf[160];
        enum wino_status st;
        /* FP16 takes no tile larger than the default (3x3: F(4x4), alpha 6): its error grows to
         * 5e-3 at alpha 7 and 8e-3 at alpha 8 (docs/cuda-winograd.md, Numerics), which AUTO
         * does not trade for speed */
        if (desc->dtype == WINO_DTYPE_F16 && m > wino_gpu_default_tile_m(desc))
            continue;
        /* the component is built from the CPU's list of generated tiles (wino gen
         * --write-defaults writes both) */
        if (wino_f32_engine_has_tile(m, desc->r) &&
            !own_refusal(desc, &chosen_by_wino, m, buf, sizeof buf, &st))
            tiles[count++] = m;
    }
    /* the ROWS tile, and where that is F(4, 3) the alpha 8 one too: on small maps (7 x 7, or
     * 32 x 32 with 512 channels) the F(4, 3) kernel's boxes of 64 tiles are mostly empty */
    const int m = wino_cuda_rows_tile_m(desc), alpha8 = WINO_ROWS_ALPHA + 1 - desc->s;
    const int rows_m[2] = {m, m && m != alpha8 ? alpha8 : 0};
    for (int i = 0; i < 2 && with_rows; i++) {
        char buf[160];
        enum wino_status st;
        if (rows_m[i] && wino_recorded_tile(rows_m[i], desc->s) &&
            !own_refusal(desc, &rows, rows_m[i], buf, sizeof buf, &st))
            tiles[count++] = WINO_CUDA_ROWS_CANDIDATE + rows_m[i];
    }
    return count;
}

/* wino's own forward operator of desc with F(tile_m, r), its variant o->variant. */
static enum wino_status own_create(const struct wino_conv2d_desc *desc,
                                   const struct wino_conv_sizes *sizes, const void *weights,
                                   const struct wino_context *ctx,
                                   const struct wino_conv2d_options *o, int tile_m,
                                   wino_conv2d **op)
{
    struct wino_conv2d *c = wino_gpu_winograd_new(desc, sizes, tile_m, ctx, &wino_path_cuda);
    if (!c)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_create: out of memory");
    const struct wino_tile_matrices *line =
        o->variant == WINO_VARIANT_ROWS ? wino_recorded_tile(tile_m, desc->s) : NULL;
    const enum wino_status st =
        wino_cuda_conv_create(desc, sizes, weights, ctx, tile_m, line, o->variant, o->bias,
                              o->relu, o->tf32, &c->cuda, &c->workspace_bytes);
    if (st) {
        free(c);
        return st;
    }
    *op = c;
    return WINO_SUCCESS;
}

/* AUTO's candidate (struct wino_cuda_auto.make): a 2D tile, or the ROWS variant's. */
static enum wino_status make_own(const struct wino_cuda_auto *a, int candidate, wino_conv2d **op)
{
    struct wino_conv2d_options o = *a->o;
    int tile_m = candidate;
    if (candidate >= WINO_CUDA_ROWS_CANDIDATE)
        o.variant = WINO_VARIANT_ROWS, tile_m -= WINO_CUDA_ROWS_CANDIDATE;
    return own_create(a->desc, a->sizes, a->weights, a->ctx, &o, tile_m, op);
}

enum wino_status wino_conv2d_create_cuda(const struct wino_conv2d_desc *desc,
                                         const void *weights, const struct wino_context *ctx,
                                         const struct wino_conv2d_options *options,
                                         wino_conv2d **op)
{
    const struct wino_conv2d_options *o;
    struct wino_conv_sizes sizes;
    enum wino_status st = wino_conv2d_check_create(desc, options, &o, &sizes);
    if (st)
        return st;
    if (o->algo == WINO_ALGO_DIRECT || o->algo == WINO_ALGO_VENDOR)
        return wino_vendor_create(WINO_CONV2D_FORWARD, desc, &sizes, weights, ctx, o, op);
    const int tile_m = o->tile_m                         ? o->tile_m
                       : o->variant == WINO_VARIANT_ROWS ? wino_cuda_rows_default_m(desc)
                                                         : wino_gpu_default_tile_m(desc);
    char buf[160];
    const char *why = own_refusal(desc, o, tile_m, buf, sizeof buf, &st);
    if (why && (st != WINO_UNSUPPORTED || !wino_options_leave_choice(o)))
        return wino_fail(st, "%s", why);
    if (!wino_options_leave_choice(o))
        return own_create(desc, &sizes, weights, ctx, o, tile_m, op);
    struct wino_cuda_auto a = {WINO_CONV2D_FORWARD, desc, &sizes, weights, ctx, o, {0}, 0,
                               make_own};
    a.count = wino_cuda_auto_tiles(desc, 1, a.tiles);
    if (!a.count)
        return wino_vendor_instead(WINO_CONV2D_FORWARD, desc, &sizes, weights, ctx, o,
                                   why ? why : "CUDA: no generated tile for this filter", op);
    return wino_cuda_auto_create(&a, op);
}
