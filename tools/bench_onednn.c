/* `wino bench` runner for oneDNN 2.x (C API): convolution_direct or convolution_winograd,
 * forward_inference (f32, or u8 x s8 -> s8 with per-channel output scales), backward_data or
 * backward_weights (f32; their primitive descriptors take a forward_training one as the hint).
 * The primitive picks its preferred memory formats (format_tag_any); its two inputs are
 * reordered into them once, at prepare time, so the timed run() is the convolution alone, as a
 * framework that keeps tensors in oneDNN's layouts would see it. The scratchpad is
 * user-managed so its size can be reported as the workspace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "int8_data.h"

#ifdef WINO_HAVE_ONEDNN

#include <dnnl.h>
#include <dnnl_debug.h>
#ifdef WINO_HAVE_OPENMP
#include <omp.h>
#endif

/* The tensors of a convolution as oneDNN names them (the forward ones; a backward op reads or
 * writes their gradients). */
enum tensor { SRC, WEI, DST };

/* Per op: which tensor are its two inputs and its output, their execution arguments and the
 * primitive descriptor's queries of their formats. */
static const struct role {
    enum tensor tensor[3];
    int arg[3];
    dnnl_query_t query[3];
} roles[3] = {
    [BENCH_FWD] = {{SRC, WEI, DST},
                   {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                   {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md}},
    [BENCH_BWD_DATA] = {{DST, WEI, SRC},
                        {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                        {dnnl_query_diff_dst_md, dnnl_query_weights_md, dnnl_query_diff_src_md}},
    [BENCH_BWD_FILTER] = {{SRC, DST, WEI},
                          {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS},
                          {dnnl_query_src_md, dnnl_query_diff_dst_md, dnnl_query_diff_weights_md}}};

struct onednn_state {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t conv;
    dnnl_memory_t in[2], out, scratch; /* in the primitive's formats */
    int arg[3];                        /* execution arguments of in[0], in[1], out */
    dnnl_memory_desc_t out_user_md;    /* plain NCHW / OIHW */
    float y_scale;                     /* INT8: the real value of one output step */
    size_t y_elems;
};

int bench_onednn_available(void) { return 1; }

/* Debian's libdnnl uses OpenMP: its parallel regions take omp_get_max_threads() of the calling
 * thread. Without OpenMP headers at build time, OMP_NUM_THREADS in the environment decides. */
void bench_onednn_set_threads(int threads)
{
#ifdef WINO_HAVE_OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
}

static void onednn_destroy(void *p)
{
    struct onednn_state *st = p;
    if (!st)
        return;
    dnnl_memory_destroy(st->in[0]);
    dnnl_memory_destroy(st->in[1]);
    dnnl_memory_destroy(st->out);
    dnnl_memory_destroy(st->scratch);
    dnnl_primitive_destroy(st->conv);
    if (st->stream)
        dnnl_stream_destroy(st->stream);
    if (st->engine)
        dnnl_engine_destroy(st->engine);
    free(st);
}

/* Copies from one memory into another of a possibly different format (a oneDNN reorder), with
 * optional attributes (scales when quantizing; NULL for none). */
static dnnl_status_t reorder(struct onednn_state *st, dnnl_memory_t from, dnnl_memory_t to,
                             const_dnnl_primitive_attr_t attr)
{
    const dnnl_memory_desc_t *from_md, *to_md;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_status_t s = dnnl_memory_get_memory_desc(from, &from_md);
    if (s == dnnl_success)
        s = dnnl_memory_get_memory_desc(to, &to_md);
    if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(&pd, from_md, st->engine, to_md, st->engine, attr);
    if (s == dnnl_success)
        s = dnnl_primitive_create(&prim, pd);
    if (s == dnnl_success) {
        const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        s = dnnl_primitive_execute(prim, st->stream, 2, args);
    }
    if (s == dnnl_success)
        s = dnnl_stream_wait(st->stream);
    dnnl_primitive_destroy(prim);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Fills *mem (in the primitive's format md) from user data in the plain format user_md. */
static dnnl_status_t import(struct onednn_state *st, const dnnl_memory_desc_t *md,
                            const dnnl_memory_desc_t *user_md, const void *data,
                            const_dnnl_primitive_attr_t attr, dnnl_memory_t *mem)
{
    dnnl_memory_t user = NULL;
    dnnl_status_t s = dnnl_memory_create(mem, md, st->engine, DNNL_MEMORY_ALLOCATE);
    if (s == dnnl_success) /* oneDNN only reads a reorder's source: the cast is safe */
        s = dnnl_memory_create(&user, user_md, st->engine, (void *)(size_t)data);
    if (s == dnnl_success)
        s = reorder(st, user, *mem, attr);
    dnnl_memory_destroy(user);
    return s;
}

/* Fills a memory with NaN (INT8: with 127, far from a right answer everywhere) so that an
 * output the primitive leaves unwritten fails the check. */
static dnnl_status_t poison(dnnl_memory_t mem, int int8)
{
    const dnnl_memory_desc_t *md;
    void *data = NULL;
    dnnl_status_t s = dnnl_memory_get_memory_desc(mem, &md);
    if (s == dnnl_success)
        s = dnnl_memory_get_data_handle(mem, &data);
    if (s == dnnl_success && int8)
        memset(data, 127, dnnl_memory_desc_get_size(md));
    else if (s == dnnl_success)
        for (size_t i = 0; i < dnnl_memory_desc_get_size(md) / sizeof(float); i++)
            ((float *)data)[i] = NAN;
    return s;
}

static int onednn_run(void *p)
{
    struct onednn_state *st = p;
    const dnnl_exec_arg_t args[4] = {{st->arg[0], st->in[0]},
                                     {st->arg[1], st->in[1]},
                                     {st->arg[2], st->out},
                                     {DNNL_ARG_SCRATCHPAD, st->scratch}};
    return dnnl_primitive_execute(st->conv, st->stream, 4, args) != dnnl_success ||
           dnnl_stream_wait(st->stream) != dnnl_success;
}

static int onednn_output(void *p, float *y)
{
    struct onednn_state *st = p;
    dnnl_memory_t user = NULL;
    signed char *q = st->y_scale > 0.0f ? malloc(st->y_elems) : NULL;
    if (st->y_scale > 0.0f && !q)
        return 1;
    dnnl_status_t s = dnnl_memory_create(&user, &st->out_user_md, st->engine, q ? (void *)q : y);
    if (s == dnnl_success)
        s = reorder(st, st->out, user, NULL);
    for (size_t i = 0; q && i < st->y_elems; i++) /* INT8: back to real values */
        y[i] = st->y_scale * q[i];
    dnnl_memory_destroy(user);
    free(q);
    return s != dnnl_success;
}

/* INT8 operands in plain layouts: x as uint8 (x_scale), w as int8 with one scale per output
 * channel (max |w_k| / 127), the per-channel output scales x_scale * w_scale[k] / y_scale and
 * 1 / w_scale[k]. Returns 0, or -1 when out of memory. */
static int quantize_int8(const struct bench_problem *pb, unsigned char **xq, signed char **wq,
                         float **scales, float **inv_w)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const size_t xn = (size_t)d->n * d->c * d->h * d->w, wk = (size_t)d->c * d->r * d->s;
    *xq = malloc(xn);
    *wq = malloc(wk * (size_t)d->k);
    *scales = malloc(sizeof(float) * (size_t)d->k);
    *inv_w = malloc(sizeof(float) * (size_t)d->k);
    if (!*xq || !*wq || !*scales || !*inv_w)
        return -1;
    int8_data_quantize_u8(pb->x, xn, pb->x_scale, *xq);
    for (int k = 0; k < d->k; k++) {
        const float sw = int8_data_quantize_s8(pb->w + k * wk, wk, *wq + k * wk);
        (*scales)[k] = pb->x_scale * sw / pb->y_scale;
        (*inv_w)[k] = 1.0f / sw;
    }
    return 0;
}

/* "jit_fp32_wino_2x3:avx512_core" -> "F2x2_3x3"; "jit_int8_wino:..." (oneDNN's u8s8 Winograd,
 * which is F(2x2, 3x3) only) too; other names give "". */
static void tile_from_impl(const char *impl, char *tile, size_t cap)
{
    const char *w = strstr(impl, "wino_");
    int m, r;
    tile[0] = '\0';
    if (w && sscanf(w + 5, "%dx%d", &m, &r) == 2)
        bench_tile_name(tile, cap, m, r, r);
    else if (strstr(impl, "int8_wino"))
        bench_tile_name(tile, cap, 2, 3, 3);
}

/* The primitive descriptor of pb's op with algorithm alg on memory descriptors of any format
 * (any[SRC], any[WEI], any[DST]); backward ops get the forward_training one as their hint. */
static dnnl_status_t primitive_desc(const struct bench_problem *pb, dnnl_alg_kind_t alg,
                                    const dnnl_memory_desc_t *any, const_dnnl_primitive_attr_t attr,
                                    dnnl_engine_t engine, dnnl_primitive_desc_t *pd)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const dnnl_dims_t strides = {d->stride_h, d->stride_w}, pad_l = {d->pad_h, d->pad_w};
    /* oneDNN's right padding is whatever makes the output size come out as ours. */
    const dnnl_dims_t pad_r = {
        (int64_t)(pb->p - 1) * d->stride_h + d->r - d->h - d->pad_h,
        (int64_t)(pb->q - 1) * d->stride_w + d->s - d->w - d->pad_w};
    dnnl_convolution_desc_t fwd, bwd;
    dnnl_primitive_desc_t hint = NULL;
    dnnl_status_t s = dnnl_convolution_forward_desc_init(
        &fwd, pb->op == BENCH_FWD ? dnnl_forward_inference : dnnl_forward_training, alg,
        &any[SRC], &any[WEI], NULL, &any[DST], strides, pad_l, pad_r);
    if (s != dnnl_success || pb->op == BENCH_FWD)
        return s == dnnl_success ? dnnl_primitive_desc_create(pd, &fwd, attr, engine, NULL) : s;
    s = dnnl_primitive_desc_create(&hint, &fwd, NULL, engine, NULL);
    if (s == dnnl_success)
        s = pb->op == BENCH_BWD_DATA
                ? dnnl_convolution_backward_data_desc_init(&bwd, alg, &any[SRC], &any[WEI],
                                                           &any[DST], strides, pad_l, pad_r)
                : dnnl_convolution_backward_weights_desc_init(&bwd, alg, &any[SRC], &any[WEI],
                                                              NULL, &any[DST], strides, pad_l,
                                                              pad_r);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(pd, &bwd, attr, engine, hint);
    if (hint)
        dnnl_primitive_desc_destroy(hint);
    return s;
}

enum bench_prep bench_onednn_prepare(const struct bench_problem *pb, int winograd,
                                     struct bench_runner *out)
{
    const struct wino_conv2d_desc *d = &pb->desc;
    const dnnl_dims_t dims[3] = {[SRC] = {d->n, d->c, d->h, d->w},
                                 [WEI] = {d->k, d->c, d->r, d->s},
                                 [DST] = {d->n, d->k, pb->p, pb->q}};
    const dnnl_format_tag_t plain[3] = {[SRC] = dnnl_nchw, [WEI] = dnnl_oihw, [DST] = dnnl_nchw};
    const dnnl_data_type_t types[3] = {[SRC] = pb->int8 ? dnnl_u8 : dnnl_f32,
                                       [WEI] = pb->int8 ? dnnl_s8 : dnnl_f32,
                                       [DST] = pb->int8 ? dnnl_s8 : dnnl_f32};
    const struct role *role = &roles[pb->op];
    dnnl_memory_desc_t any[3], user[3];
    unsigned char *xq = NULL;
    signed char *wq = NULL;
    float *scales = NULL, *inv_w = NULL;
    dnnl_primitive_attr_t wattr = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    enum bench_prep result = BENCH_FAIL;
    const char *step = "out of memory";
    dnnl_status_t s = dnnl_success;

    memset(out, 0, sizeof *out);
    struct onednn_state *st = calloc(1, sizeof *st);
    if (!st)
        goto done;
#define TRY(call)                                                                                 \
    do {                                                                                          \
        step = #call;                                                                             \
        if ((s = (call)) != dnnl_success)                                                         \
            goto done;                                                                            \
    } while (0)
    TRY(dnnl_engine_create(&st->engine, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags));
    if (pb->int8 && quantize_int8(pb, &xq, &wq, &scales, &inv_w))
        goto done;
    for (int t = SRC; t <= DST; t++) {
        TRY(dnnl_memory_desc_init_by_tag(&any[t], 4, dims[t], types[t], dnnl_format_tag_any));
        TRY(dnnl_memory_desc_init_by_tag(&user[t], 4, dims[t], types[t], plain[t]));
    }
    TRY(dnnl_primitive_attr_create(&attr));
    TRY(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    if (pb->int8) /* one output scale per channel: dst dimension 1 */
        TRY(dnnl_primitive_attr_set_output_scales(attr, d->k, 1 << 1, scales));
    s = primitive_desc(pb, winograd ? dnnl_convolution_winograd : dnnl_convolution_direct, any,
                       attr, st->engine, &pd);
    if (s == dnnl_unimplemented) { /* e.g. Winograd for 5x5, stride 2 or without AVX-512 */
        snprintf(out->info, sizeof out->info, "oneDNN has no %s implementation for this layer",
                 winograd ? "Winograd" : "direct");
        result = BENCH_SKIP;
        goto done;
    }
    step = "the primitive descriptor";
    if (s != dnnl_success)
        goto done;
    const dnnl_memory_desc_t *scratch_md =
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    const void *data[3] = {[SRC] = pb->int8 ? (const void *)xq : pb->x,
                           [WEI] = pb->int8 && !winograd ? (const void *)wq : pb->w,
                           [DST] = pb->dy};
    if (pb->int8 && winograd) { /* its weight format is reachable only from f32, quantizing */
        TRY(dnnl_memory_desc_init_by_tag(&user[WEI], 4, dims[WEI], dnnl_f32, dnnl_oihw));
        TRY(dnnl_primitive_attr_create(&wattr));
        TRY(dnnl_primitive_attr_set_output_scales(wattr, d->k, 1 << 0, inv_w));
    }
    for (int i = 0; i < 2; i++) {
        const enum tensor t = role->tensor[i];
        TRY(import(st, dnnl_primitive_desc_query_md(pd, role->query[i], 0), &user[t], data[t],
                   t == WEI ? wattr : NULL, &st->in[i]));
    }
    TRY(dnnl_memory_create(&st->out, dnnl_primitive_desc_query_md(pd, role->query[2], 0),
                           st->engine, DNNL_MEMORY_ALLOCATE));
    TRY(poison(st->out, pb->int8));
    st->out_user_md = user[role->tensor[2]];
    memcpy(st->arg, role->arg, sizeof st->arg);
    st->y_scale = pb->int8 ? pb->y_scale : 0.0f;
    st->y_elems = bench_output_elems(pb);
    TRY(dnnl_memory_create(&st->scratch, scratch_md, st->engine, DNNL_MEMORY_ALLOCATE));
    TRY(dnnl_primitive_create(&st->conv, pd));
#undef TRY
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        impl = "?";
    if (!strncmp(impl, "ref", 3)) { /* its plain loops: minutes per run on a real layer */
        snprintf(out->info, sizeof out->info,
                 "oneDNN has only its reference implementation (%.40s) for this layer", impl);
        result = BENCH_SKIP;
        goto done;
    }
    snprintf(out->info, sizeof out->info, "%s", impl);
    if (winograd)
        tile_from_impl(impl, out->tile, sizeof out->tile);
    out->workspace_bytes = dnnl_memory_desc_get_size(scratch_md);
    out->state = st;
    out->run = onednn_run;
    out->output = onednn_output;
    out->destroy = onednn_destroy;
    st = NULL;
    result = BENCH_READY;
done:
    if (result == BENCH_FAIL && s != dnnl_success)
        snprintf(out->info, sizeof out->info, "oneDNN: %.80s: %s", step, dnnl_status2str(s));
    else if (result == BENCH_FAIL)
        snprintf(out->info, sizeof out->info, "oneDNN: %s", step);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    onednn_destroy(st);
    if (wattr)
        dnnl_primitive_attr_destroy(wattr);
    free(xq);
    free(wq);
    free(scales);
    free(inv_w);
    return result;
}

#else /* built without oneDNN: the impls are listed as unavailable */

int bench_onednn_available(void) { return 0; }
void bench_onednn_set_threads(int threads) { (void)threads; }
enum bench_prep bench_onednn_prepare(const struct bench_problem *pb, int winograd,
                                     struct bench_runner *out)
{
    (void)pb;
    (void)winograd;
    memset(out, 0, sizeof *out);
    snprintf(out->info, sizeof out->info, "built without oneDNN");
    return BENCH_SKIP;
}

#endif
