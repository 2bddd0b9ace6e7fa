/* The vendor library's convolution as an operator path (CUDA: cuDNN's engines, through the
 * component's src/cuda/vendor_conv.h), and AUTO's floor on CUDA: wino's own operator and the
 * vendor's timed on the same zeros at create, the faster kept, the choice remembered per layer
 * for the rest of the process. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "cuda/vendor_conv.h"

/* Writes an operator's reason (cut to its size: the text is for people). */
static void set_reason(char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof ((wino_conv2d *)0)->reason, fmt, ap);
    va_end(ap);
}

struct vendor_state {
    const struct wino_cuda_vendor_ops *ops;
    struct wino_cuda_vendor *v;
};

static enum wino_status run_vendor(const wino_conv2d *op, const struct wino_conv2d_io *io)
{
    const struct vendor_state *s = op->state;
    return s->ops->run(s->v, io->in, io->in2, io->out, io->workspace, io->workspace_bytes,
                       io->stream);
}

static enum wino_status reshape_vendor(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                       const struct wino_conv_sizes *sizes, size_t *bytes)
{
    const struct vendor_state *s = op->state;
    return s->ops->reshape(s->v, d, sizes, bytes);
}

static void release_vendor(wino_conv2d *op)
{
    struct vendor_state *s = op->state;
    if (s)
        s->ops->destroy(s->v);
    free(s);
}

static enum wino_status set_weights_vendor(wino_conv2d *op, const void *weights, void *stream)
{
    const struct vendor_state *s = op->state;
    return s->ops->set_weights(s->v, weights, stream);
}

static const struct wino_conv2d_path vendor_path = {run_vendor, reshape_vendor,
                                                    wino_variant_none, release_vendor,
                                                    set_weights_vendor};

enum wino_status wino_vendor_create(enum wino_conv2d_kind kind,
                                    const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes, const void *weights,
                                    const struct wino_context *ctx,
                                    const struct wino_conv2d_options *o, wino_conv2d **op)
{
    const struct wino_cuda_vendor_ops *ops = wino_cuda_vendor();
    if (!ops)
        return WINO_UNSUPPORTED;
    if (o->tile_m || o->matrices || o->variant)
        return wino_fail(WINO_INVALID_ARGUMENT, "tile_m, matrices and variant are Winograd's: "
                                                "leave them 0 for the vendor's convolution");
    struct wino_conv2d *c = calloc(1, sizeof *c);
    struct vendor_state *s = calloc(1, sizeof *s);
    if (!c || !s) {
        free(c);
        free(s);
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    }
    c->path = &vendor_path;
    c->state = s;
    c->kind = kind;
    c->desc = *desc;
    c->sizes = *sizes;
    c->algo = o->algo == WINO_ALGO_DIRECT ? WINO_ALGO_DIRECT : WINO_ALGO_VENDOR;
    c->backend = WINO_BACKEND_CUDA;
    c->stream = ctx->stream;
    s->ops = ops;
    /* AUTO's choice keeps the workspace within twice the data (x, y and w), as wino's own
     * operators do; an explicit request takes whatever the fastest engine needs */
    const size_t max_workspace =
        o->algo == WINO_ALGO_AUTO ? 2 * wino_dtype_size(desc->dtype) *
                                        (sizes->x_elems + sizes->y_elems + sizes->w_elems)
                                  : 0;
    const struct wino_cuda_vendor_request rq = {.kind = kind,
                                                .direct_only = o->algo == WINO_ALGO_DIRECT,
                                                .tf32 = o->tf32,
                                                .accumulate = o->accumulate,
                                                .bias = o->bias,
                                                .relu = o->relu,
                                                .max_workspace = max_workspace};
    const enum wino_status st = ops->create(desc, sizes, weights, ctx, &rq, &s->v,
                                            &c->workspace_bytes);
    if (st) {
        wino_conv2d_destroy(c);
        return st;
    }
    ops->describe(s->v, c->reason, sizeof c->reason);
    *op = c;
    return WINO_SUCCESS;
}

enum wino_status wino_vendor_instead(enum wino_conv2d_kind kind,
                                     const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes, const void *weights,
                                     const struct wino_context *ctx,
                                     const struct wino_conv2d_options *o, const char *why,
                                     wino_conv2d **op)
{
    char own[120];
    snprintf(own, sizeof own, "%s", why);
    const enum wino_status st = wino_vendor_create(kind, desc, sizes, weights, ctx, o, op);
    if (st)
        return wino_fail(st, "%.110s; %.120s", own, wino_last_error());
    char described[sizeof ((wino_conv2d *)0)->reason];
    memcpy(described, (*op)->reason, sizeof described);
    set_reason((*op)->reason, "AUTO: %.100s; wino: %.80s", described, own);
    return WINO_SUCCESS;
}

/* ---- AUTO's floor -------------------------------------------------------------------------- */

/* What AUTO chose for a layer, remembered for the process (the most recent CHOICES layers). */
struct choice {
    enum wino_conv2d_kind kind;
    struct wino_conv2d_desc desc;
    int device, tf32, accumulate, bias, relu;
    int vendor; /* 1: the vendor's was faster */
};
#define CHOICES 256
static struct choice choices[CHOICES];
static int choices_used, choices_next;
static pthread_mutex_t choices_lock = PTHREAD_MUTEX_INITIALIZER;

static struct choice choice_key(enum wino_conv2d_kind kind, const struct wino_conv2d_desc *d,
                                const struct wino_context *ctx,
                                const struct wino_conv2d_options *o)
{
    struct choice c;
    memset(&c, 0, sizeof c); /* the padding too: keys are compared with memcmp */
    c.kind = kind;
    c.desc = *d;
    c.device = ctx->device;
    c.tf32 = o->tf32;
    c.accumulate = o->accumulate;
    c.bias = o->bias != NULL;
    c.relu = o->relu;
    return c;
}

/* 1 (vendor) or 0 (wino) for a layer chosen before, -1 for a new one. */
static int remembered(const struct choice *key)
{
    int found = -1;
    pthread_mutex_lock(&choices_lock);
    for (int i = 0; i < choices_used && found < 0; i++) {
        struct choice c = choices[i];
        c.vendor = 0;
        if (!memcmp(&c, key, sizeof c))
            found = choices[i].vendor;
    }
    pthread_mutex_unlock(&choices_lock);
    return found;
}

static void remember(const struct choice *key, int vendor)
{
    pthread_mutex_lock(&choices_lock);
    choices[choices_next] = *key;
    choices[choices_next].vendor = vendor;
    choices_next = (choices_next + 1) % CHOICES;
    if (choices_used < CHOICES)
        choices_used++;
    pthread_mutex_unlock(&choices_lock);
}

/* A timed run of an operator on scratch tensors (wino_cuda_time_run's callback). */
struct timed {
    const wino_conv2d *op;
    struct wino_conv2d_io io;
};
static enum wino_status run_timed(void *arg, void *stream)
{
    struct timed *t = arg;
    t->io.stream = stream;
    return t->op->path->run(t->op, &t->io);
}

/* The median ms of a and b (created for the same layer) on the same zeros. */
static enum wino_status time_both(const wino_conv2d *a, const wino_conv2d *b,
                                  const struct wino_context *ctx, double *ms_a, double *ms_b)
{
    const struct wino_conv_sizes *z = &a->sizes;
    const size_t e = wino_dtype_size(a->desc.dtype);
    const enum wino_conv2d_kind kind = a->kind;
    const size_t in = kind == WINO_CONV2D_BACKWARD_DATA ? z->y_elems : z->x_elems;
    const size_t in2 = kind == WINO_CONV2D_BACKWARD_FILTER ? z->y_elems : 0;
    const size_t out = kind == WINO_CONV2D_FORWARD         ? z->y_elems
                       : kind == WINO_CONV2D_BACKWARD_DATA ? z->x_elems
                                                           : z->w_elems;
    const size_t ws = a->workspace_bytes > b->workspace_bytes ? a->workspace_bytes
                                                              : b->workspace_bytes;
    void *p_in = NULL, *p_in2 = NULL, *p_out = NULL, *p_ws = NULL;
    enum wino_status st = wino_cuda_device_zeros(ctx, in * e, &p_in);
    if (!st && in2)
        st = wino_cuda_device_zeros(ctx, in2 * e, &p_in2);
    if (!st)
        st = wino_cuda_device_zeros(ctx, out * e, &p_out);
    if (!st && ws)
        st = wino_cuda_device_zeros(ctx, ws, &p_ws);
    struct timed ta = {a, {p_in, p_in2, p_out, p_ws, ws, NULL}};
    struct timed tb = {b, {p_in, p_in2, p_out, p_ws, ws, NULL}};
    if (!st)
        st = wino_cuda_time_run(ctx, run_timed, &ta, ms_a);
    if (!st)
        st = wino_cuda_time_run(ctx, run_timed, &tb, ms_b);
    wino_cuda_device_free(ctx, p_in);
    wino_cuda_device_free(ctx, p_in2);
    wino_cuda_device_free(ctx, p_out);
    wino_cuda_device_free(ctx, p_ws);
    return st;
}

/* "Winograd F(4x4, 3x3)", "WinRS", "direct" for a reason. */
static const char *own_name(const wino_conv2d *op, char *buf, size_t cap)
{
    if (op->algo != WINO_ALGO_WINOGRAD)
        return "direct";
    if (op->kind == WINO_CONV2D_BACKWARD_FILTER)
        return "WinRS";
    snprintf(buf, cap, "Winograd F(%dx%d, %dx%d)", op->tile_m, op->tile_m, op->desc.r,
             op->desc.r);
    return buf;
}

int wino_options_leave_choice(const struct wino_conv2d_options *o)
{
    return o->algo == WINO_ALGO_AUTO && !o->tile_m && !o->points && !o->matrices &&
           o->variant == WINO_VARIANT_AUTO;
}

enum wino_status wino_vendor_floor(enum wino_conv2d_kind kind,
                                   const struct wino_conv2d_desc *desc,
                                   const struct wino_conv_sizes *sizes, const void *weights,
                                   const struct wino_context *ctx,
                                   const struct wino_conv2d_options *o, wino_conv2d **op)
{
    wino_conv2d *own = *op;
    const struct choice key = choice_key(kind, desc, ctx, o);
    const int before = remembered(&key);
    char name[48];
    if (before == 0) {
        set_reason(own->reason, "AUTO: %s, faster than the vendor's when "
                 "this layer was timed earlier in the process", own_name(own, name, sizeof name));
        return WINO_SUCCESS;
    }
    const struct wino_conv2d_options vendor_options = {.algo = WINO_ALGO_AUTO, .tf32 = o->tf32,
                                                       .accumulate = o->accumulate,
                                                       .bias = o->bias, .relu = o->relu};
    wino_conv2d *vendor = NULL;
    if (wino_vendor_create(kind, desc, sizes, weights, ctx, &vendor_options, &vendor)) {
        set_reason(own->reason, "AUTO: %s; the vendor's is not to be had: "
                 "%.120s", own_name(own, name, sizeof name), wino_last_error());
        wino_ok();
        return WINO_SUCCESS;
    }
    double own_ms = 0.0, vendor_ms = 0.0;
    const int vendor_wins =
        before == 1 || (!time_both(own, vendor, ctx, &own_ms, &vendor_ms) && vendor_ms < own_ms);
    wino_ok(); /* a failed timing keeps wino's own */
    char described[sizeof ((wino_conv2d *)0)->reason];
    memcpy(described, vendor->reason, sizeof described);
    if (before == 1)
        set_reason(vendor->reason, "AUTO: %.150s; faster than wino's when "
                 "this layer was timed earlier in the process", described);
    else if (vendor_wins)
        set_reason(vendor->reason, "AUTO: %.120s, over wino's %s at %.4f ms",
                 described, own_name(own, name, sizeof name), own_ms);
    else
        set_reason(own->reason, "AUTO: %s at %.4f ms, over the vendor's %.120s",
                 own_name(own, name, sizeof name), own_ms, described);
    if (before < 0)
        remember(&key, vendor_wins);
    vendor->algo = WINO_ALGO_VENDOR;
    if (vendor_wins) {
        wino_conv2d_destroy(own);
        *op = vendor;
    } else {
        wino_conv2d_destroy(vendor);
    }
    return WINO_SUCCESS;
}
