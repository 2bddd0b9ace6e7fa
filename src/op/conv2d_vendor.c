/* The vendor library's convolution as an operator path (CUDA: cuDNN's engines, through the
 * component's src/cuda/vendor_conv.h), and AUTO's choice on CUDA: wino's own operator with each
 * tile it times and the vendor's, timed on the same zeros at create, the fastest kept, the
 * choice remembered per layer for the rest of the process and kept in the tuning cache. */
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op/conv2d_impl.h"
#include "base/error.h"
#include "cuda/vendor_conv.h"
#include "op/tuning_cache.h"

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

/* ---- AUTO's choice ------------------------------------------------------------------------- */

/* A layer's choice, remembered for the process (the most recent CHOICES layers): keyed by the
 * device's ordinal and the layer (its device name left empty: no CUDA call on this path). */
struct remembered {
    int device;
    struct wino_cuda_layer layer;
    struct wino_cuda_choice choice;
};
#define CHOICES 256
static struct remembered choices[CHOICES];
static int choices_used, choices_next;
static pthread_mutex_t choices_lock = PTHREAD_MUTEX_INITIALIZER;

static struct remembered key_of(const struct wino_cuda_auto *a)
{
    struct remembered k;
    memset(&k, 0, sizeof k); /* the padding too: keys are compared with memcmp */
    k.device = a->ctx->device;
    k.layer.kind = a->kind;
    k.layer.desc = *a->desc;
    k.layer.tf32 = a->o->tf32;
    k.layer.accumulate = a->o->accumulate;
    k.layer.bias = a->o->bias != NULL;
    k.layer.relu = a->o->relu;
    return k;
}

/* 1 with *c filled for a layer chosen before in the process, else 0. */
static int recall(const struct remembered *key, struct wino_cuda_choice *c)
{
    const size_t compared = offsetof(struct remembered, choice);
    int found = 0;
    pthread_mutex_lock(&choices_lock);
    for (int i = 0; i < choices_used && !found; i++)
        if (!memcmp(&choices[i], key, compared)) {
            *c = choices[i].choice;
            found = 1;
        }
    pthread_mutex_unlock(&choices_lock);
    return found;
}

static void remember(const struct remembered *key, const struct wino_cuda_choice *c)
{
    pthread_mutex_lock(&choices_lock);
    memcpy(&choices[choices_next], key, sizeof *key); /* the padding too */
    choices[choices_next].choice = *c;
    choices_next = (choices_next + 1) % CHOICES;
    if (choices_used < CHOICES)
        choices_used++;
    pthread_mutex_unlock(&choices_lock);
}

/* The key of ctx's device in the tuning cache: "GPU NAME / cuDNN X.Y.Z" ("/ no cuDNN"), so that
 * another GPU or vendor library never follows this one's choices. */
static enum wino_status device_key(const struct wino_context *ctx, char *buf, size_t cap)
{
    char name[256];
    const enum wino_status st = wino_cuda_device_name(ctx, name, sizeof name);
    if (st)
        return st;
    const struct wino_cuda_vendor_ops *v = wino_cuda_vendor();
    const size_t version = v ? v->version() : 0;
    if (version)
        snprintf(buf, cap, "%s / cuDNN %zu.%zu.%zu", name, version / 10000, version / 100 % 100,
                 version % 100);
    else
        snprintf(buf, cap, "%s / no cuDNN", name);
    return WINO_SUCCESS;
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

/* Zeroed tensors of the layer's kind on which every candidate is timed, and a workspace grown
 * to the largest one asks. */
struct scratch {
    const struct wino_context *ctx;
    void *in, *in2, *out, *ws;
    size_t ws_bytes;
};

static enum wino_status scratch_open(struct scratch *z, const struct wino_cuda_auto *a)
{
    const struct wino_conv_sizes *s = a->sizes;
    const size_t e = wino_dtype_size(a->desc->dtype);
    const size_t in = a->kind == WINO_CONV2D_BACKWARD_DATA ? s->y_elems : s->x_elems;
    const size_t in2 = a->kind == WINO_CONV2D_BACKWARD_FILTER ? s->y_elems : 0;
    const size_t out = a->kind == WINO_CONV2D_FORWARD         ? s->y_elems
                       : a->kind == WINO_CONV2D_BACKWARD_DATA ? s->x_elems
                                                              : s->w_elems;
    memset(z, 0, sizeof *z);
    z->ctx = a->ctx;
    enum wino_status st = wino_cuda_device_zeros(a->ctx, in * e, &z->in);
    if (!st && in2)
        st = wino_cuda_device_zeros(a->ctx, in2 * e, &z->in2);
    if (!st)
        st = wino_cuda_device_zeros(a->ctx, out * e, &z->out);
    return st;
}

static void scratch_close(struct scratch *z)
{
    wino_cuda_device_free(z->ctx, z->in);
    wino_cuda_device_free(z->ctx, z->in2);
    wino_cuda_device_free(z->ctx, z->out);
    wino_cuda_device_free(z->ctx, z->ws);
}

/* The median ms of op on the scratch tensors, -1 when it could not be timed. */
static double scratch_time(struct scratch *z, const wino_conv2d *op)
{
    if (op->workspace_bytes > z->ws_bytes) {
        wino_cuda_device_free(z->ctx, z->ws);
        z->ws_bytes = 0;
        if (wino_cuda_device_zeros(z->ctx, op->workspace_bytes, &z->ws))
            return -1.0;
        z->ws_bytes = op->workspace_bytes;
    }
    struct timed t = {op, {z->in, z->in2, z->out, z->ws, z->ws_bytes, NULL}};
    double ms = -1.0;
    return wino_cuda_time_run(z->ctx, run_timed, &t, &ms) ? -1.0 : ms;
}

/* Whether a median ms beats the best so far (-1: none timed). */
static int faster(double ms, double best)
{
    return ms >= 0.0 && (best < 0.0 || ms < best);
}

/* "Winograd F(4x4, 3x3)" or "WinRS": wino's own operator of tile_m, for a reason. */
static const char *own_name(const struct wino_cuda_auto *a, int tile_m, char *buf, size_t cap)
{
    if (a->kind == WINO_CONV2D_BACKWARD_FILTER)
        return "WinRS";
    if (!tile_m)
        return "no tile";
    if (tile_m >= WINO_CUDA_ROWS_CANDIDATE)
        snprintf(buf, cap, "Winograd ROWS F(%d, %d)", tile_m - WINO_CUDA_ROWS_CANDIDATE,
                 a->desc->s);
    else
        snprintf(buf, cap, "Winograd F(%dx%d, %dx%d)", tile_m, tile_m, a->desc->r, a->desc->s);
    return buf;
}

/* The vendor's operator of the layer; AUTO's keeps its workspace within twice the data
 * (wino_vendor_create). */
static enum wino_status vendor_of(const struct wino_cuda_auto *a, wino_conv2d **op)
{
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_AUTO, .tf32 = a->o->tf32,
                                          .accumulate = a->o->accumulate, .bias = a->o->bias,
                                          .relu = a->o->relu};
    return wino_vendor_create(a->kind, a->desc, a->sizes, a->weights, a->ctx, &o, op);
}

/* "0.0213 ms", or "not timed" for -1, for a reason. */
static const char *ms_text(double ms, char *buf, size_t cap)
{
    if (ms < 0.0)
        return "not timed";
    snprintf(buf, cap, "%.4f ms", ms);
    return buf;
}

/* Creates a choice made before as *op, its reason saying where it was found (source). */
static enum wino_status follow(const struct wino_cuda_auto *a, const struct wino_cuda_choice *c,
                               const char *source, wino_conv2d **op)
{
    wino_conv2d *made = NULL;
    const enum wino_status st = c->vendor ? vendor_of(a, &made) : a->make(a, c->tile_m, &made);
    if (st)
        return st;
    char name[48], own_ms[24], vendor_ms[24], described[sizeof made->reason];
    const char *own = own_name(a, c->tile_m, name, sizeof name);
    memcpy(described, made->reason, sizeof described);
    ms_text(c->wino_ms, own_ms, sizeof own_ms);
    ms_text(c->vendor_ms, vendor_ms, sizeof vendor_ms);
    if (c->vendor)
        set_reason(made->reason, "AUTO: the vendor's (%.120s), %s (the vendor's at %s, wino's %s "
                   "at %s)", described, source, vendor_ms, own, own_ms);
    else
        set_reason(made->reason, "AUTO: %s, %s (at %s, the vendor's at %s)", own, source,
                   own_ms, vendor_ms);
    *op = made;
    return WINO_SUCCESS;
}

/* " (m 2: 0.0250, 3: 0.0213 ms)": the times of wino's tiles (-1: not timed), for a reason. */
static void tiles_text(const struct wino_cuda_auto *a, const double *ms, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    if (a->kind == WINO_CONV2D_BACKWARD_FILTER)
        return;
    for (int i = 0; i < a->count && used < cap; i++) {
        const int rows = a->tiles[i] >= WINO_CUDA_ROWS_CANDIDATE;
        used += (size_t)snprintf(buf + used, cap - used, "%s%s%d: %.4f", i ? ", " : " (m ",
                                 rows ? "ROWS " : "",
                                 a->tiles[i] - (rows ? WINO_CUDA_ROWS_CANDIDATE : 0), ms[i]);
    }
    if (used < cap)
        snprintf(buf + used, cap - used, " ms)");
}

/* Creates and times every candidate (wino's tiles, then the vendor's), one alive beside the
 * fastest so far: *op becomes the fastest, *c what was measured. A candidate refused or out of
 * memory is passed over; any other failure (the caller's arguments, the device) ends it. Where
 * nothing could be timed, wino's default tile is kept. */
static enum wino_status choose(const struct wino_cuda_auto *a, struct wino_cuda_choice *c,
                               wino_conv2d **op)
{
    struct scratch z;
    const int can_time = !scratch_open(&z, a);
    const int fallback = wino_gpu_default_tile_m(a->desc);
    double ms[WINO_CUDA_AUTO_TILES];
    wino_conv2d *best = NULL;
    enum wino_status failed = WINO_SUCCESS;
    char failure[160] = "";
    *c = (struct wino_cuda_choice){0, 0, -1.0, -1.0};
    for (int i = 0; i < a->count; i++) {
        wino_conv2d *own = NULL;
        const enum wino_status st = a->make(a, a->tiles[i], &own);
        ms[i] = -1.0;
        if (st && st != WINO_UNSUPPORTED && st != WINO_OUT_OF_MEMORY) {
            wino_conv2d_destroy(best);
            scratch_close(&z);
            return st;
        }
        if (st && !failed) {
            failed = st;
            snprintf(failure, sizeof failure, "%s", wino_last_error());
        }
        if (st)
            continue;
        if (can_time)
            ms[i] = scratch_time(&z, own);
        if (!best || faster(ms[i], c->wino_ms) ||
            (c->wino_ms < 0.0 && ms[i] < 0.0 && a->tiles[i] == fallback)) {
            wino_conv2d_destroy(best);
            best = own;
            c->tile_m = a->tiles[i];
            c->wino_ms = ms[i];
        } else {
            wino_conv2d_destroy(own);
        }
    }
    wino_conv2d *vendor = NULL;
    char described[sizeof ((wino_conv2d *)0)->reason], name[48], tiles[160];
    if (vendor_of(a, &vendor))
        snprintf(described, sizeof described, "%s", wino_last_error());
    else
        memcpy(described, vendor->reason, sizeof described);
    if (vendor && can_time)
        c->vendor_ms = scratch_time(&z, vendor);
    scratch_close(&z);
    if (!best && !vendor)
        return wino_fail(failed, "%.150s; the vendor's: %.150s", failure, described);
    c->vendor = vendor && (!best || faster(c->vendor_ms, c->wino_ms));
    char own_ms[24], vendor_ms[24];
    const char *own = own_name(a, c->tile_m, name, sizeof name);
    tiles_text(a, ms, tiles, sizeof tiles);
    ms_text(c->wino_ms, own_ms, sizeof own_ms);
    ms_text(c->vendor_ms, vendor_ms, sizeof vendor_ms);
    if (c->vendor)
        set_reason(vendor->reason, "AUTO: the vendor's at %s (%.120s), over wino's %s at %s%s",
                   vendor_ms, described, own, own_ms, tiles);
    else if (vendor)
        set_reason(best->reason, "AUTO: %s at %s%s, over the vendor's at %s (%.120s)", own,
                   own_ms, tiles, vendor_ms, described);
    else
        set_reason(best->reason, "AUTO: %s at %s%s; the vendor's is not to be had: %.120s", own,
                   own_ms, tiles, described);
    *op = c->vendor ? vendor : best;
    wino_conv2d_destroy(c->vendor ? best : vendor);
    return WINO_SUCCESS;
}

int wino_options_leave_choice(const struct wino_conv2d_options *o)
{
    return o->algo == WINO_ALGO_AUTO && !o->tile_m && !o->points && !o->matrices &&
           o->variant == WINO_VARIANT_AUTO;
}

enum wino_status wino_cuda_auto_create(const struct wino_cuda_auto *a, wino_conv2d **op)
{
    const struct remembered key = key_of(a);
    struct wino_cuda_choice c;
    if (recall(&key, &c) &&
        !follow(a, &c, "the fastest when this layer was timed earlier in the process", op))
        return wino_ok();
    const char *path = a->ctx->tuning_cache;
    struct wino_cuda_layer layer = key.layer;
    const int on_disk = path && !device_key(a->ctx, layer.device, sizeof layer.device);
    if (on_disk && wino_cuda_choice_lookup(path, &layer, &c) &&
        !follow(a, &c, "the fastest as the tuning cache recorded", op)) {
        remember(&key, &c);
        return wino_ok();
    }
    const enum wino_status st = choose(a, &c, op);
    if (st)
        return st;
    if ((c.vendor ? c.vendor_ms : c.wino_ms) >= 0.0) { /* a choice measured */
        remember(&key, &c);
        if (on_disk) /* a cache that cannot be written stays as it is: no error of create() */
            wino_cuda_choice_store(path, &layer, &c);
    }
    return wino_ok();
}
