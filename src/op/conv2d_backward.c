/* The training operators (include/wino.h, "Training convolutions"): backward-data and
 * backward-filter, created, run and described here; the shared wino_conv2d entry points
 * (workspace_size, algo, variant, destroy, run for backward-data) reach them through the
 * operator's kind. Paths: backward-data by the forward Winograd engine on rotated filters, or
 * direct (src/cpu/backward_data_f32.h); backward-filter by WinRS (src/cpu/winrs_f32.h), or
 * direct (src/cpu/backward_filter_f32.h). FP32 on the CPU; on CUDA, backward-data by the CUDA
 * forward engine on filters rotated on the device (FP32, FP16). */
#include <stdlib.h>
#include <string.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "base/threads.h"
#include "cpu/backward_data_f32.h"
#include "cpu/backward_filter_f32.h"
#include "cpu/backward_layout.h"
#include "cpu/bwd_filter_2d_f32.h"
#include "cpu/winrs_f32.h"

struct wino_conv2d_backward {
    struct wino_conv2d *forward;                  /* backward-data by Winograd: conv on dy */
    struct wino_f32_backward_data data;           /* backward-data, direct */
    struct wino_f32_backward_filter_direct filter; /* backward-filter, direct */
    struct wino_f32_winrs winrs;                  /* backward-filter, WinRS */
    struct wino_f32_bwd_filter_2d tiles2d;        /* backward-filter, F(3x3, 4x4 or 5x5) */
    int threads, accumulate;                      /* as at create, for reshape */
    float *weights; /* backward-data, direct: w as given, for reshape (its plan depends on H, W) */
    void *rotated;  /* backward-data by Winograd on CUDA: the forward operator's filters, kept
                     * for wino_conv2d_set_weights */
    int device;     /* ... and their device */
};

/* The four training paths (defined at the end of this file). */
static const struct wino_conv2d_path data_winograd, data_direct, filter_winrs, filter_2d,
    filter_direct;

/* The forward convolution whose output is dx: dy (N x K x P x Q) with the rotated filters, C
 * outputs, padding R-1-pad. */
static struct wino_conv2d_desc data_forward_desc(const struct wino_conv2d_desc *d, int p, int q)
{
    struct wino_conv2d_desc f = *d;
    f.c = d->k;
    f.h = p;
    f.w = q;
    f.k = d->c;
    f.pad_h = d->r - 1 - d->pad_h;
    f.pad_w = d->s - 1 - d->pad_w;
    return f;
}

/* Checks shared by both kinds and backends: the descriptor, the options. */
static enum wino_status check_gradient(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv2d_options *o,
                                       struct wino_conv_sizes *sizes)
{
    enum wino_status st = wino_conv_desc_check(desc, sizes);
    if (st)
        return st;
    struct wino_conv2d_options shared = *o;
    shared.accumulate = 0; /* checked by the kinds */
    if ((st = wino_conv2d_check_options(&shared)))
        return st;
    if (o->bias || o->relu)
        return wino_fail(WINO_INVALID_ARGUMENT, "bias and relu do not apply to gradients");
    return WINO_SUCCESS;
}

/* What the CPU computes: FP32, without the CUDA-only variant. */
static enum wino_status check_cpu_dtype(const struct wino_conv2d_desc *desc,
                                        const struct wino_conv2d_options *o)
{
    if (desc->dtype == WINO_DTYPE_F16 || desc->dtype == WINO_DTYPE_BF16)
        return wino_fail(WINO_UNSUPPORTED, "FP16 and BF16 training convolutions run on the CUDA "
                                           "backend; the CPU computes FP32");
    if (desc->dtype != WINO_DTYPE_F32)
        return wino_fail(WINO_UNSUPPORTED, "training convolutions are FP32 on the CPU");
    if (o->algo == WINO_ALGO_VENDOR)
        return wino_fail(WINO_UNSUPPORTED, "WINO_ALGO_VENDOR runs on the CUDA backend");
    if (o->variant == WINO_VARIANT_FUSED_OUTPUT || o->variant == WINO_VARIANT_ROWS)
        return wino_fail(WINO_UNSUPPORTED, "the fused-output and ROWS variants are the CUDA "
                                           "backend's forward ones");
    return WINO_SUCCESS;
}

/* Why backward-data cannot run as a forward Winograd convolution, or NULL. */
static const char *data_winograd_refusal(const struct wino_conv2d_desc *d,
                                         const struct wino_conv2d_options *o)
{
    if (d->pad_h > d->r - 1 || d->pad_w > d->s - 1)
        return "Winograd backward-data needs pad_h <= R-1 and pad_w <= S-1";
    return wino_winograd_refusal(d, o->tile_m ? o->tile_m : 2);
}

/* Why wino's own CUDA backward-data (Winograd) cannot serve desc, or NULL (why: the
 * descriptor's refusal). */
static const char *data_cuda_refusal(const struct wino_conv2d_desc *desc, const char *why)
{
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16)
        return "CUDA backward-data: wino's kernels are FP32 and FP16";
    return why;
}

/* The CUDA plan: wino's Winograd, or the vendor's convolution (cuDNN) for WINO_ALGO_DIRECT and
 * WINO_ALGO_VENDOR, and for AUTO where Winograd refuses the layer; the forward operator's
 * create checks the rest (tile, variant, FP16's largest alpha). */
static enum wino_status data_plan_cuda(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv2d_options *o, const char *why,
                                       enum wino_algo *algo)
{
    const char *refusal = data_cuda_refusal(desc, why);
    if (o->algo == WINO_ALGO_DIRECT || o->algo == WINO_ALGO_VENDOR)
        *algo = o->algo;
    else if (!refusal)
        *algo = WINO_ALGO_WINOGRAD;
    else if (wino_options_leave_choice(o))
        *algo = WINO_ALGO_VENDOR;
    else
        return wino_fail(WINO_UNSUPPORTED, "%s", refusal);
    return WINO_SUCCESS;
}

static enum wino_status data_plan(const struct wino_conv2d_desc *desc,
                                  const struct wino_conv2d_options *options, int cuda,
                                  struct wino_conv_sizes *sizes, enum wino_algo *algo)
{
    static const struct wino_conv2d_options defaults;
    const struct wino_conv2d_options *o = options ? options : &defaults;
    enum wino_status st = check_gradient(desc, o, sizes);
    if (!st && !cuda)
        st = check_cpu_dtype(desc, o);
    if (st)
        return st;
    if (o->accumulate)
        return wino_fail(WINO_INVALID_ARGUMENT, "accumulate applies to backward-filter only");
    const char *why = data_winograd_refusal(desc, o);
    if (cuda)
        return data_plan_cuda(desc, o, why, algo);
    if (o->algo == WINO_ALGO_WINOGRAD && why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    const int auto_direct = desc->r == 1 || desc->c <= WINO_BWD_DATA_AUTO_DIRECT_MAX_C;
    *algo = o->algo == WINO_ALGO_DIRECT || why || (o->algo == WINO_ALGO_AUTO && auto_direct)
                ? WINO_ALGO_DIRECT
                : WINO_ALGO_WINOGRAD;
    if (*algo == WINO_ALGO_WINOGRAD) { /* the forward operator's own checks (tile, matrices) */
        const struct wino_conv2d_desc f = data_forward_desc(desc, sizes->p, sizes->q);
        return wino_conv2d_can_implement(&f, o);
    }
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_backward_data_can_implement(const struct wino_conv2d_desc *desc,
                                                         const struct wino_conv2d_options *options,
                                                         enum wino_algo *algo)
{
    wino_ok();
    struct wino_conv2d_desc nominal;
    desc = wino_desc_for_planning(desc, &nominal);
    struct wino_conv_sizes sizes;
    enum wino_algo a = WINO_ALGO_DIRECT;
    enum wino_status st = data_plan(desc, options, 0, &sizes, &a);
    if (!st && algo)
        *algo = a;
    return st;
}

/* The operator shell of a backward kind; NULL when out of memory. */
static struct wino_conv2d *backward_new(const struct wino_conv2d_desc *desc,
                                        const struct wino_conv_sizes *sizes,
                                        enum wino_conv2d_kind kind)
{
    struct wino_conv2d *op = calloc(1, sizeof *op);
    if (op && !(op->backward = calloc(1, sizeof *op->backward))) {
        free(op);
        op = NULL;
    }
    if (op) {
        op->desc = *desc;
        op->sizes = *sizes;
        op->kind = kind;
    }
    return op;
}

/* Shared entry checks of both creates: op and context. */
static enum wino_status check_create(const struct wino_context *ctx, wino_conv2d **op,
                                     const char *what)
{
    if (!op)
        return wino_fail(WINO_INVALID_ARGUMENT, "%s: op is NULL", what);
    *op = NULL;
    const enum wino_status st = wino_context_check(ctx);
    if (!st && ctx && ctx->backend == WINO_BACKEND_OPENCL)
        return wino_fail(WINO_UNSUPPORTED, "%s: the OpenCL backend runs forward convolutions "
                                           "only", what);
    return st;
}

/* The reason of a direct path's prepare failing (st), recorded. */
static enum wino_status direct_failure(enum wino_status st, const char *what)
{
    if (!st)
        return st;
    return wino_fail(st, "%s: %s", what,
                     st == WINO_OUT_OF_MEMORY ? "out of memory" : "C x R x S too large");
}

/* The end of both creates: hands out the operator, or releases it on failure (st). */
static enum wino_status create_done(struct wino_conv2d *o, enum wino_status st,
                                    wino_conv2d **op)
{
    if (st) {
        wino_conv2d_destroy(o);
        return st;
    }
    *op = o;
    return WINO_SUCCESS;
}

/* The forward operator's filters on the host: w rotated by 180 degrees with K and C swapped,
 * w'[c][k][R-1-i][S-1-j], in d's layout (f: the forward descriptor). */
static enum wino_status rotated_on_host(const struct wino_conv2d_desc *d,
                                        const struct wino_conv2d_desc *f, size_t elements,
                                        const float *w, void **out)
{
    float *rotated = malloc(sizeof(float) * elements);
    if (!rotated)
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_conv2d_backward_data_create: out of memory");
    const struct wino_strides4 from = wino_w_strides(d), to = wino_w_strides(f);
    for (int k = 0; k < d->k; k++)
        for (int c = 0; c < d->c; c++)
            for (int i = 0; i < d->r; i++)
                for (int j = 0; j < d->s; j++)
                    rotated[c * to.a + k * to.b + (d->r - 1 - i) * to.c + (d->s - 1 - j) * to.d] =
                        w[k * from.a + c * from.b + i * from.c + j * from.d];
    *out = rotated;
    return WINO_SUCCESS;
}

/* Fills the forward operator of a Winograd backward-data from the rotated filters (on CUDA
 * rotated on the device and kept for new weights; on the host dropped once create has
 * transformed them). */
static enum wino_status data_forward_create(struct wino_conv2d *op, const void *w,
                                            const struct wino_context *ctx,
                                            const struct wino_conv2d_options *options)
{
    const struct wino_conv2d_desc *d = &op->desc;
    const struct wino_conv2d_desc f = data_forward_desc(d, op->sizes.p, op->sizes.q);
    const int cuda = op->backend == WINO_BACKEND_CUDA;
    void *rotated = NULL;
    enum wino_status st = cuda ? wino_cuda_rotated_filters_create(d, w, ctx, &rotated)
                               : rotated_on_host(d, &f, op->sizes.w_elems, w, &rotated);
    if (st)
        return st;
    st = wino_conv2d_create(&f, rotated, ctx, options, &op->backward->forward);
    if (cuda) {
        op->backward->rotated = rotated;
        op->backward->device = ctx->device;
    } else {
        free(rotated);
    }
    if (st)
        return st;
    st = wino_conv2d_algo(op->backward->forward, &op->algo, &op->tile_m);
    if (!st)
        st = wino_conv2d_workspace_size(op->backward->forward, &op->workspace_bytes);
    return st;
}

static enum wino_status backward_data_create_planned(const struct wino_conv2d_desc *desc,
                                                     const void *weights,
                                                     const struct wino_context *ctx,
                                                     const struct wino_conv2d_options *options,
                                                     wino_conv2d **op);

/* AUTO's candidate on CUDA (struct wino_cuda_auto.make): Winograd with tile_m. */
static enum wino_status make_data(const struct wino_cuda_auto *a, int tile_m, wino_conv2d **op)
{
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = tile_m,
                                          .tf32 = a->o->tf32};
    return backward_data_create_planned(a->desc, a->weights, a->ctx, &o, op);
}

/* AUTO on CUDA where Winograd serves the layer: the tiles of its forward convolution on dy
 * timed against the vendor's. */
static enum wino_status data_auto_cuda(const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes, const void *weights,
                                       const struct wino_context *ctx,
                                       const struct wino_conv2d_options *o, wino_conv2d **op)
{
    const struct wino_conv2d_desc f = data_forward_desc(desc, sizes->p, sizes->q);
    struct wino_cuda_auto a = {WINO_CONV2D_BACKWARD_DATA, desc, sizes, weights, ctx, o, {0}, 0,
                               make_data};
    a.count = wino_cuda_auto_tiles(&f, 0, a.tiles);
    return a.count ? wino_cuda_auto_create(&a, op)
                   : wino_vendor_instead(WINO_CONV2D_BACKWARD_DATA, desc, sizes, weights, ctx, o,
                                         "CUDA: no generated tile for this filter", op);
}

static enum wino_status backward_data_create_planned(const struct wino_conv2d_desc *desc,
                                                     const void *weights,
                                                     const struct wino_context *ctx,
                                                     const struct wino_conv2d_options *options,
                                                     wino_conv2d **op)
{
    wino_ok();
    const char *what = "wino_conv2d_backward_data_create";
    enum wino_status st = check_create(ctx, op, what);
    if (st)
        return st;
    if (!weights)
        return wino_fail(WINO_INVALID_ARGUMENT, "%s: weights is NULL", what);
    const int cuda = ctx && ctx->backend == WINO_BACKEND_CUDA;
    struct wino_conv_sizes sizes;
    enum wino_algo algo = WINO_ALGO_DIRECT;
    if ((st = data_plan(desc, options, cuda, &sizes, &algo)))
        return st;
    static const struct wino_conv2d_options defaults;
    const struct wino_conv2d_options *opt = options ? options : &defaults;
    if (cuda && algo != WINO_ALGO_WINOGRAD)
        return opt->algo == WINO_ALGO_AUTO
                   ? wino_vendor_instead(WINO_CONV2D_BACKWARD_DATA, desc, &sizes, weights, ctx,
                                         opt, data_cuda_refusal(desc, data_winograd_refusal(
                                                                          desc, opt)),
                                         op)
                   : wino_vendor_create(WINO_CONV2D_BACKWARD_DATA, desc, &sizes, weights, ctx,
                                        opt, op);
    if (cuda && wino_options_leave_choice(opt))
        return data_auto_cuda(desc, &sizes, weights, ctx, opt, op);
    struct wino_conv2d *o = backward_new(desc, &sizes, WINO_CONV2D_BACKWARD_DATA);
    if (!o)
        return wino_fail(WINO_OUT_OF_MEMORY, "%s: out of memory", what);
    if (cuda) { /* wino_conv2d_run's stream, and run_stream's streams reach the forward op */
        o->backend = WINO_BACKEND_CUDA;
        o->stream = ctx->stream;
    }
    o->algo = algo;
    o->path = algo == WINO_ALGO_WINOGRAD ? &data_winograd : &data_direct;
    if (algo == WINO_ALGO_WINOGRAD) {
        st = data_forward_create(o, weights, ctx, options);
    } else {
        o->backward->threads = wino_context_threads(ctx);
        o->backward->weights = malloc(sizeof(float) * sizes.w_elems);
        st = o->backward->weights ? WINO_SUCCESS : WINO_OUT_OF_MEMORY;
        if (!st) {
            memcpy(o->backward->weights, weights, sizeof(float) * sizes.w_elems);
            st = wino_f32_backward_data_prepare(&o->backward->data, desc, weights,
                                                o->backward->threads);
        }
        st = direct_failure(st, what);
        o->workspace_bytes = wino_f32_backward_data_workspace_bytes(&o->backward->data);
    }
    return create_done(o, st, op);
}

enum wino_status wino_conv2d_backward_data_create(const struct wino_conv2d_desc *desc,
                                                  const void *weights,
                                                  const struct wino_context *ctx,
                                                  const struct wino_conv2d_options *options,
                                                  wino_conv2d **op)
{
    struct wino_conv2d_desc nominal;
    const struct wino_conv2d_desc *planned = wino_desc_for_planning(desc, &nominal);
    return wino_conv2d_shaped(backward_data_create_planned(planned, weights, ctx, options, op),
                              op, planned == &nominal);
}

/* Why WinRS cannot serve desc, or NULL. */
static const char *winrs_refusal(const struct wino_conv2d_desc *d)
{
    if (d->stride_h != 1 || d->stride_w != 1)
        return "WinRS needs stride 1";
    if (d->dilation_h != 1 || d->dilation_w != 1)
        return "WinRS needs dilation 1";
    return NULL;
}

/* The checks of a backward-filter descriptor and options on either backend (cuda: the dtype is
 * the CUDA path's to check). */
static enum wino_status filter_check(const struct wino_conv2d_desc *desc,
                                     const struct wino_conv2d_options *o,
                                     struct wino_conv_sizes *sizes, int cuda)
{
    enum wino_status st = check_gradient(desc, o, sizes);
    if (!st && !cuda)
        st = check_cpu_dtype(desc, o);
    if (st)
        return st;
    if (o->accumulate != 0 && o->accumulate != 1)
        return wino_fail(WINO_INVALID_ARGUMENT, "accumulate = %d must be 0 or 1",
                         o->accumulate);
    if (o->tile_m || o->points || o->matrices)
        return wino_fail(WINO_INVALID_ARGUMENT, "tile_m, points and matrices do not apply to "
                                                "backward-filter (WinRS chooses its kernels)");
    if (o->variant && !cuda)
        return wino_fail(WINO_INVALID_ARGUMENT, "variant does not apply to backward-filter on "
                                                "the CPU (it has one staging)");
    return WINO_SUCCESS;
}

/* Plans a backward-filter operator on the CPU: the algorithm, and for Winograd either the 2D tile
 * (*tiles2d = 1; AUTO on 3 x 3 filters of stride 1: 36 products per tile of 4 x 4, or 49 per
 * 5 x 5, where WinRS's F(3, 6) takes 64 per 4 x 4 pixels; measured 1.5-1.9x WinRS's speed on
 * ResNet-18's 3 x 3 layers at batch 8, docs/training.md; on layers of fewer than
 * WINO_BWD_2D_MIN_TILES tiles AUTO runs direct) or WinRS with its kernels and segments in
 * *winrs (to release by the caller on success). */
static enum wino_status filter_plan(const struct wino_conv2d_desc *desc,
                                    const struct wino_conv2d_options *options, int threads,
                                    struct wino_conv_sizes *sizes, enum wino_algo *algo,
                                    struct wino_f32_winrs *winrs, int *tiles2d)
{
    static const struct wino_conv2d_options defaults;
    const struct wino_conv2d_options *o = options ? options : &defaults;
    enum wino_status st = filter_check(desc, o, sizes, 0);
    if (st)
        return st;
    const char *why = winrs_refusal(desc);
    if (o->algo == WINO_ALGO_WINOGRAD && why)
        return wino_fail(WINO_UNSUPPORTED, "%s", why);
    *algo = WINO_ALGO_DIRECT;
    *tiles2d = 0;
    if (o->algo == WINO_ALGO_DIRECT || why)
        return WINO_SUCCESS;
    if (o->algo == WINO_ALGO_AUTO && wino_f32_bwd_filter_2d_takes(desc)) {
        if (wino_f32_bwd_filter_2d_tiles(desc, sizes->p, sizes->q) < WINO_BWD_2D_MIN_TILES)
            return WINO_SUCCESS; /* direct: too few tiles for their M */
        *algo = WINO_ALGO_WINOGRAD;
        *tiles2d = 1;
        return WINO_SUCCESS;
    }
    st = wino_f32_winrs_prepare(winrs, desc, threads, o->accumulate, NULL);
    if (st == WINO_OUT_OF_MEMORY || (st && o->algo == WINO_ALGO_WINOGRAD))
        return st;
    /* AUTO: WinRS when it saves multiplications over the direct Q x S per row */
    if (!st && o->algo == WINO_ALGO_AUTO &&
        wino_winrs_plan_cost(&winrs->plan, desc->s) >= (long)sizes->q * desc->s)
        wino_f32_winrs_release(winrs);
    else if (!st)
        *algo = WINO_ALGO_WINOGRAD;
    wino_ok(); /* a declined WinRS leaves the direct path, not an error */
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_backward_filter_can_implement(
    const struct wino_conv2d_desc *desc, const struct wino_conv2d_options *options,
    enum wino_algo *algo)
{
    wino_ok();
    struct wino_conv2d_desc nominal;
    desc = wino_desc_for_planning(desc, &nominal);
    struct wino_conv_sizes sizes;
    struct wino_f32_winrs winrs;
    enum wino_algo a = WINO_ALGO_DIRECT;
    int tiles2d = 0;
    enum wino_status st = filter_plan(desc, options, 1, &sizes, &a, &winrs, &tiles2d);
    if (!st && a == WINO_ALGO_WINOGRAD && !tiles2d)
        wino_f32_winrs_release(&winrs);
    if (!st && algo)
        *algo = a;
    return st;
}

static enum wino_status backward_filter_create_planned(const struct wino_conv2d_desc *desc,
                                                       const struct wino_context *ctx,
                                                       const struct wino_conv2d_options *options,
                                                       wino_conv2d **op)
{
    wino_ok();
    const char *what = "wino_conv2d_backward_filter_create";
    enum wino_status st = check_create(ctx, op, what);
    if (st)
        return st;
    struct wino_conv_sizes sizes;
    if (ctx && ctx->backend == WINO_BACKEND_CUDA) {
        static const struct wino_conv2d_options defaults;
        const struct wino_conv2d_options *o = options ? options : &defaults;
        st = filter_check(desc, o, &sizes, 1);
        return st ? st : wino_backward_filter_create_cuda(desc, &sizes, ctx, o, op);
    }
    enum wino_algo algo = WINO_ALGO_DIRECT;
    struct wino_f32_winrs winrs;
    int tiles2d = 0;
    const int threads = wino_context_threads(ctx);
    if ((st = filter_plan(desc, options, threads, &sizes, &algo, &winrs, &tiles2d)))
        return st;
    struct wino_conv2d *o = backward_new(desc, &sizes, WINO_CONV2D_BACKWARD_FILTER);
    if (!o) {
        if (algo == WINO_ALGO_WINOGRAD && !tiles2d)
            wino_f32_winrs_release(&winrs);
        return wino_fail(WINO_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    o->algo = algo;
    o->path = tiles2d ? &filter_2d : algo == WINO_ALGO_WINOGRAD ? &filter_winrs : &filter_direct;
    o->backward->threads = threads;
    o->backward->accumulate = options ? options->accumulate : 0;
    if (tiles2d) {
        struct wino_f32_bwd_filter_2d *e = &o->backward->tiles2d;
        st = wino_f32_bwd_filter_2d_prepare(e, desc, sizes.p, sizes.q, threads,
                                            o->backward->accumulate, WINO_2D_CHOOSE);
        o->tile_m = 3;
        o->workspace_bytes = wino_f32_bwd_filter_2d_workspace_bytes(e);
    } else if (algo == WINO_ALGO_WINOGRAD) {
        o->backward->winrs = winrs;
        o->tile_m = winrs.plan.n[0];
        o->workspace_bytes = wino_f32_winrs_workspace_bytes(&winrs);
    } else {
        st = direct_failure(wino_f32_backward_filter_direct_prepare(
                                &o->backward->filter, desc, threads,
                                options ? options->accumulate : 0),
                            what);
        o->workspace_bytes = wino_f32_backward_filter_direct_workspace_bytes(&o->backward->filter);
    }
    return create_done(o, st, op);
}

enum wino_status wino_conv2d_backward_filter_create(const struct wino_conv2d_desc *desc,
                                                    const struct wino_context *ctx,
                                                    const struct wino_conv2d_options *options,
                                                    wino_conv2d **op)
{
    struct wino_conv2d_desc nominal;
    const struct wino_conv2d_desc *planned = wino_desc_for_planning(desc, &nominal);
    return wino_conv2d_shaped(backward_filter_create_planned(planned, ctx, options, op),
                              op, planned == &nominal);
}

enum wino_status wino_conv2d_backward_filter_run(const wino_conv2d *op, const void *x,
                                                 const void *dy, void *dw, void *workspace,
                                                 size_t workspace_bytes)
{
    return wino_conv2d_backward_filter_run_stream(op, x, dy, dw, workspace, workspace_bytes,
                                                  op ? op->stream : NULL);
}

enum wino_status wino_conv2d_backward_filter_run_stream(const wino_conv2d *op, const void *x,
                                                        const void *dy, void *dw,
                                                        void *workspace, size_t workspace_bytes,
                                                        void *stream)
{
    wino_ok();
    if (!op || !x || !dy || !dw)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_conv2d_backward_filter_run: op, x, dy or dw is NULL");
    if (op->backend != WINO_BACKEND_CUDA && stream)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_backward_filter_run_stream: a CPU "
                                                "operator takes stream NULL only");
    if (op->kind != WINO_CONV2D_BACKWARD_FILTER)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_backward_filter_run: the operator "
                                                "is not a backward-filter one");
    if (op->unshaped)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_backward_filter_run: the operator "
                                                "was created without sizes: reshape it first");
    enum wino_status st = wino_conv2d_check_workspace(op, workspace, workspace_bytes);
    if (st)
        return st;
    const struct wino_conv2d_io io = {.in = x, .in2 = dy, .out = dw, .workspace = workspace,
                                      .workspace_bytes = workspace_bytes, .stream = stream};
    return op->path->run(op, &io);
}

enum wino_status wino_conv2d_backward_filter_info(const wino_conv2d *op,
                                                  struct wino_winrs_info *info)
{
    wino_ok();
    if (!op || !info)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_backward_filter_info: NULL argument");
    if (op->kind != WINO_CONV2D_BACKWARD_FILTER)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_backward_filter_info: the operator "
                                                "is not a backward-filter one");
    const struct wino_winrs_info none = {0};
    *info = none;
    if (op->backend == WINO_BACKEND_CUDA) {
        wino_backward_filter_cuda_info(op, info);
        return WINO_SUCCESS;
    }
    if (op->algo != WINO_ALGO_WINOGRAD) {
        info->segments = op->backward->filter.segments;
        return WINO_SUCCESS;
    }
    if (op->path == &filter_2d) { /* F(3x3, t x t): tiles of t x t of dy, all in one segment */
        const struct wino_f32_bwd_filter_2d *e = &op->backward->tiles2d;
        info->kernels = 1;
        info->n[0] = 3, info->r[0] = e->tile, info->alpha[0] = e->alpha;
        info->units[0] = e->tiles_w;
        info->segments = 1;
        info->segment_h = info->segment_w = e->tile;
        return WINO_SUCCESS;
    }
    const struct wino_f32_winrs *w = &op->backward->winrs;
    info->kernels = w->plan.kinds;
    for (int k = 0; k < w->plan.kinds; k++) {
        info->n[k] = w->plan.n[k];
        info->r[k] = w->plan.r[k];
        info->alpha[k] = w->plan.n[k] + w->plan.r[k] - 1;
        info->units[k] = w->plan.units[k];
    }
    info->segments = w->segments;
    info->segment_h = w->plan.segment_h;
    info->segment_w = w->plan.segment_w;
    return WINO_SUCCESS;
}

enum wino_status wino_conv2d_kind(const wino_conv2d *op, enum wino_conv2d_kind *kind)
{
    wino_ok();
    if (!op || !kind)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_conv2d_kind: NULL argument");
    *kind = op->kind;
    return WINO_SUCCESS;
}

/* ---- the training paths ---- */

static void release_backward(wino_conv2d *op)
{
    struct wino_conv2d_backward *b = op->backward;
    if (!b)
        return;
    free(b->weights);
    const struct wino_context device = {.backend = WINO_BACKEND_CUDA, .device = b->device};
    wino_cuda_device_free(&device, b->rotated);
    wino_conv2d_destroy(b->forward);
    wino_f32_backward_data_release(&b->data);
    wino_f32_backward_filter_direct_release(&b->filter);
    wino_f32_winrs_release(&b->winrs);
    free(b);
}

/* backward-data by Winograd: the forward operator on dy with the rotated filters, on the run's
 * stream (NULL on the CPU) */
static enum wino_status run_data_winograd(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    return wino_conv2d_run_stream(op->backward->forward, io->in, io->out, io->workspace,
                                  io->workspace_bytes, io->stream);
}

static enum wino_status reshape_data_winograd(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                              const struct wino_conv_sizes *sizes, size_t *bytes)
{
    const struct wino_conv2d_desc f = data_forward_desc(d, sizes->p, sizes->q);
    return wino_conv2d_reshape(op->backward->forward, f.n, f.h, f.w, bytes);
}

static enum wino_variant variant_data_winograd(const wino_conv2d *op)
{
    enum wino_variant v = WINO_VARIANT_AUTO;
    wino_conv2d_variant(op->backward->forward, &v);
    return v;
}

/* New weights: rotated (on CUDA on stream, into the filters kept), then the forward
 * operator's. */
static enum wino_status set_weights_data_winograd(wino_conv2d *op, const void *w, void *stream)
{
    struct wino_conv2d_backward *b = op->backward;
    if (op->backend == WINO_BACKEND_CUDA) {
        const enum wino_status st =
            wino_cuda_rotate_filters(&op->desc, w, b->rotated, b->device, stream);
        return st ? st : wino_conv2d_set_weights(b->forward, b->rotated, stream);
    }
    const struct wino_conv2d_desc f = data_forward_desc(&op->desc, op->sizes.p, op->sizes.q);
    void *rotated = NULL;
    enum wino_status st = rotated_on_host(&op->desc, &f, op->sizes.w_elems, w, &rotated);
    if (!st)
        st = wino_conv2d_set_weights(b->forward, rotated, NULL);
    free(rotated);
    return st;
}

static const struct wino_conv2d_path data_winograd = {run_data_winograd, reshape_data_winograd,
                                                      variant_data_winograd, release_backward,
                                                      set_weights_data_winograd};

/* backward-data, direct: one GEMM per stride phase */
static enum wino_status run_data_direct(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_f32_backward_data_run(&op->backward->data, &op->desc, op->sizes.p, op->sizes.q, io->in,
                               io->out, io->workspace);
    return WINO_SUCCESS;
}

/* The direct plan of d prepared again from weights w; on failure op is as it was. */
static enum wino_status data_direct_prepare_again(wino_conv2d *op,
                                                  const struct wino_conv2d_desc *d,
                                                  const float *w, const char *what)
{
    struct wino_conv2d_backward *b = op->backward;
    struct wino_f32_backward_data fresh;
    enum wino_status st = wino_f32_backward_data_prepare(&fresh, d, w, b->threads);
    if (st) {
        wino_f32_backward_data_release(&fresh);
        return direct_failure(st, what);
    }
    wino_f32_backward_data_release(&b->data);
    b->data = fresh;
    return WINO_SUCCESS;
}

/* Its phases depend on H and W: prepared again from the weights kept at create. */
static enum wino_status reshape_data_direct(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                            const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    const enum wino_status st =
        data_direct_prepare_again(op, d, op->backward->weights, "wino_conv2d_reshape");
    if (!st)
        *bytes = wino_f32_backward_data_workspace_bytes(&op->backward->data);
    return st;
}

static enum wino_status set_weights_data_direct(wino_conv2d *op, const void *w, void *stream)
{
    (void)stream;
    const enum wino_status st =
        data_direct_prepare_again(op, &op->desc, w, "wino_conv2d_set_weights");
    if (!st)
        memcpy(op->backward->weights, w, sizeof(float) * op->sizes.w_elems);
    return st;
}

static const struct wino_conv2d_path data_direct = {run_data_direct, reshape_data_direct,
                                                    wino_variant_none, release_backward,
                                                    set_weights_data_direct};

/* backward-filter by WinRS */
static enum wino_status run_filter_winrs(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_f32_winrs_run(&op->backward->winrs, &op->desc, op->sizes.p, op->sizes.q, io->in,
                       io->in2, io->out, io->workspace);
    return WINO_SUCCESS;
}

/* Kernels and segments depend on Q and on the rows of dy: planned again. */
static enum wino_status reshape_filter_winrs(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                             const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    struct wino_conv2d_backward *b = op->backward;
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD,
                                          .accumulate = b->accumulate};
    struct wino_conv_sizes planned;
    enum wino_algo algo;
    struct wino_f32_winrs fresh;
    int tiles2d = 0;
    enum wino_status st = filter_plan(d, &o, b->threads, &planned, &algo, &fresh, &tiles2d);
    if (st)
        return st;
    wino_f32_winrs_release(&b->winrs);
    b->winrs = fresh;
    op->tile_m = b->winrs.plan.n[0];
    *bytes = wino_f32_winrs_workspace_bytes(&b->winrs);
    return WINO_SUCCESS;
}

static const struct wino_conv2d_path filter_winrs = {run_filter_winrs, reshape_filter_winrs,
                                                     wino_variant_none, release_backward, NULL};

/* backward-filter by the 2D tile F(3x3, 4x4) or F(3x3, 5x5) */
static enum wino_status run_filter_2d(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_f32_bwd_filter_2d_run(&op->backward->tiles2d, &op->desc, op->sizes.p, op->sizes.q,
                               io->in, io->in2, io->out, io->workspace);
    return WINO_SUCCESS;
}

/* The tiles and chunks depend on N, P and Q: planned again. */
static enum wino_status reshape_filter_2d(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                          const struct wino_conv_sizes *sizes, size_t *bytes)
{
    struct wino_conv2d_backward *b = op->backward;
    const enum wino_status st =
        wino_f32_bwd_filter_2d_prepare(&b->tiles2d, d, sizes->p, sizes->q, b->threads,
                                       b->accumulate, WINO_2D_CHOOSE);
    *bytes = wino_f32_bwd_filter_2d_workspace_bytes(&b->tiles2d);
    return st;
}

static const struct wino_conv2d_path filter_2d = {run_filter_2d, reshape_filter_2d,
                                                  wino_variant_none, release_backward, NULL};

/* backward-filter, direct: im2col(x)^T x dy */
static enum wino_status run_filter_direct(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    wino_f32_backward_filter_direct_run(&op->backward->filter, &op->desc, op->sizes.p,
                                        op->sizes.q, io->in, io->in2, io->out, io->workspace);
    return WINO_SUCCESS;
}

static enum wino_status reshape_filter_direct(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                              const struct wino_conv_sizes *sizes, size_t *bytes)
{
    (void)sizes;
    struct wino_conv2d_backward *b = op->backward;
    struct wino_f32_backward_filter_direct fresh;
    enum wino_status st =
        wino_f32_backward_filter_direct_prepare(&fresh, d, b->threads, b->accumulate);
    if (st) {
        wino_f32_backward_filter_direct_release(&fresh);
        return direct_failure(st, "wino_conv2d_reshape");
    }
    wino_f32_backward_filter_direct_release(&b->filter);
    b->filter = fresh;
    *bytes = wino_f32_backward_filter_direct_workspace_bytes(&b->filter);
    return WINO_SUCCESS;
}

static const struct wino_conv2d_path filter_direct = {run_filter_direct, reshape_filter_direct,
                                                      wino_variant_none, release_backward, NULL};
