/* `wino calibrate`: clipping factors and scales of INT8 Winograd layers from sample data
 * (wino_int8_calibrate), and with --study the error of INT8 Winograd F(2,3), F(4,3), F(6,3)
 * against the FP32 convolution for each way of clipping, beside INT8 direct convolution. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "int8_data.h"
#include "ref/conv_ref.h"
#include "wino.h"

static const char *const usage_text =
    "usage: wino calibrate [--set NAME|FILE] [--layer L ...] [--tile 2|4|6]\n"
    "                      [--method percentile|mse] [--percentile P] [--image FILE.ppm]\n"
    "                      [--seed S] [--csv] [--sets-dir DIR]\n"
    "       wino calibrate --study [--set NAME|FILE] [--layer L ...] [--image FILE.ppm]\n"
    "                      [--seed S] [--csv] [--sets-dir DIR]\n"
    "  For every 3x3 stride-1 layer of the set (default resnet18) on synthetic data shaped like a\n"
    "  trained network's (post-ReLU activations with spatial correlation, Laplace weights; see\n"
    "  tools/int8_data.h), prints the INT8 Winograd parameters wino_int8_calibrate finds for\n"
    "  tile F(M,3) (--tile, default 4) at the P-th percentile (default 99.9) or with the\n"
    "  least squared error (--method mse), and the SQNR of the calibrated layer against FP32.\n"
    "  Other layers are skipped (a note on stderr); a set without any is refused.\n"
    BENCH_LAYER_USAGE
    "  --image FILE.ppm  adds a first layer, 3 -> 64 channels, on this photograph (binary PPM)\n"
    "  --study           instead: every tile x {no clipping, 99.9th percentile, MSE} and INT8\n"
    "                    direct convolution (per-channel weight scales), SQNR and relative L2\n"
    "  --csv             machine-readable rows\n"
    "  A progress bar is drawn on stderr when stderr is a terminal. Options may also be written\n"
    "  --name=value.\n";
struct layer_data {
    struct wino_conv2d_desc desc; /* FP32 NHWC */
    float *x, *w;
    double *ref; /* the FP32 convolution, NHWC */
    size_t xn, yn;
};

static double sqnr_db(const double *ref, const double *y, size_t n, double *rel_l2)
{
    double s = 0.0, e = 0.0;
    for (size_t i = 0; i < n; i++) {
        s += ref[i] * ref[i];
        e += (y[i] - ref[i]) * (y[i] - ref[i]);
    }
    *rel_l2 = sqrt(e / s);
    return 10.0 * log10(s / (e > 0.0 ? e : 1e-300));
}

/* The INT8 Winograd layer through the public API, dequantized into y: WINO_SUCCESS, or the
 * status of the failing call (WINO_UNSUPPORTED: the layer could overflow int32). */
static enum wino_status run_int8_winograd(const struct layer_data *L, int m,
                                          const struct wino_int8_params *q, double *y)
{
    struct wino_conv2d_desc d = L->desc;
    d.dtype = WINO_DTYPE_U8; /* post-ReLU activations and photographs are >= 0 */
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = m};
    wino_conv2d *op = NULL;
    unsigned char *x = malloc(L->xn);
    signed char *yq = malloc(L->yn);
    void *ws = NULL;
    size_t bytes = 0;
    enum wino_status st = !x || !yq ? WINO_OUT_OF_MEMORY
                                    : wino_conv2d_create_int8(&d, L->w, q, NULL, &o, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    if (!st && bytes && posix_memalign(&ws, 64, bytes))
        st = WINO_OUT_OF_MEMORY;
    if (!st) {
        int8_data_quantize_u8(L->x, L->xn, q->x_scale, x);
        st = wino_conv2d_run(op, x, yq, ws, bytes);
        for (size_t i = 0; i < L->yn && !st; i++)
            y[i] = (double)q->y_scale * yq[i];
    }
    wino_conv2d_destroy(op);
    free(x), free(yq), free(ws);
    return st;
}

/* INT8 direct convolution: the same quantized input and output scale, weights int8 with one
 * scale per output channel, exact integer sums. Returns 0, or -1 when out of memory. */
static int run_int8_direct(const struct layer_data *L, const struct wino_int8_params *q,
                           double *y)
{
    const struct wino_conv2d_desc *d = &L->desc;
    const int C = d->c, K = d->k, P = d->h + 2 * d->pad_h - 2, Q = d->w + 2 * d->pad_w - 2;
    const size_t wk = (size_t)9 * C;
    unsigned char *xq = malloc(L->xn);
    int *wq = malloc(sizeof(int) * wk);
    if (!xq || !wq) {
        free(xq), free(wq);
        return -1;
    }
    int8_data_quantize_u8(L->x, L->xn, q->x_scale, xq);
    for (int k = 0; k < K; k++) {
        float wmax = 0.0f;
        for (size_t i = 0; i < wk; i++)
            wmax = fmaxf(wmax, fabsf(L->w[k * wk + i]));
        const double sw = wmax > 0.0f ? wmax / 127.0 : 1.0;
        for (size_t i = 0; i < wk; i++)
            wq[i] = (int)rint(L->w[k * wk + i] / sw);
        for (int n = 0; n < d->n; n++)
            for (int p = 0; p < P; p++)
                for (int qq = 0; qq < Q; qq++) {
                    long long acc = 0;
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++) {
                            const int h = p - d->pad_h + i, w = qq - d->pad_w + j;
                            if (h < 0 || h >= d->h || w < 0 || w >= d->w)
                                continue;
                            const unsigned char *xp = xq + (((size_t)n * d->h + h) * d->w + w) * C;
                            const int *wp = wq + (size_t)(i * 3 + j) * C;
                            for (int c = 0; c < C; c++)
                                acc += (long long)xp[c] * wp[c];
                        }
                    double r = rint((double)acc * q->x_scale * sw / q->y_scale);
                    r = r > 127.0 ? 127.0 : r < -127.0 ? -127.0 : r;
                    y[(((size_t)n * P + p) * Q + qq) * K + k] = q->y_scale * r;
                }
    }
    free(xq), free(wq);
    return 0;
}

static int make_layer(const struct bench_layer *bl, const float *image, uint64_t seed,
                      struct layer_data *L)
{
    memset(L, 0, sizeof *L);
    L->desc = wino_conv2d_desc_make(bl->n, bl->c, bl->h, bl->w, bl->k, 3, 3, bl->pad, bl->pad);
    L->desc.layout = WINO_LAYOUT_NHWC;
    const int P = bl->h + 2 * bl->pad - 2, Q = bl->w + 2 * bl->pad - 2;
    L->xn = (size_t)bl->n * bl->h * bl->w * bl->c;
    L->yn = (size_t)bl->n * P * Q * bl->k;
    L->x = malloc(sizeof(float) * L->xn);
    L->w = malloc(sizeof(float) * 9 * (size_t)bl->c * bl->k);
    L->ref = malloc(sizeof(double) * L->yn);
    if (!L->x || !L->w || !L->ref)
        return -1;
    if (image)
        memcpy(L->x, image, sizeof(float) * L->xn);
    else
        int8_data_activations(seed, bl->n, bl->h, bl->w, bl->c, L->x);
    int8_data_weights(seed + 1, bl->k, bl->c, L->w);
    wino_ref_conv2d_fwd(&L->desc, L->x, L->w, L->ref);
    return 0;
}

static void free_layer(struct layer_data *L)
{
    free(L->x), free(L->w), free(L->ref);
}

/* A run over the layers: where the output goes and how far it is, for the progress bar. */
struct job {
    const char *set;
    int csv;
    struct cli_progress bar;
    long done, total; /* steps: a layer's preparation, then each calibrated configuration */
};

/* The progress bar before the next step. */
static void step(struct job *j, const char *layer, const char *what)
{
    char label[96];
    snprintf(label, sizeof label, "calibrate %-12.40s %-24.40s", layer, what);
    cli_progress_draw(&j->bar, label, j->done++, j->total, NULL);
}

/* One output line of the study: a table row or a CSV row (NaN: the layer was refused). */
static void report(struct job *j, const char *layer, const char *input, const char *what,
                   const char *clip, double db, double rel)
{
    cli_progress_clear(&j->bar);
    if (j->csv)
        printf("%s,%s,%s,%s,%s,%.2f,%.4g\n", j->set, layer, input, what, clip, db, rel);
    else
        printf("  %-12s %-12s %-10s %-16s %8.2f dB  %.3g\n", layer, input, what, clip, db, rel);
    fflush(stdout);
}

#define STUDY_STEPS 10 /* 3 tiles x 3 clips, then direct */

/* Every layer of the study quantizes x with max |x| / 255 and y with max |y| / 127; only the
 * clipping of the transformed activations and weights differs. */
static int study_layer(struct job *j, const char *name, const char *input,
                       const struct layer_data *L)
{
    double *y = malloc(sizeof(double) * L->yn), rel = 0.0, db;
    static const char *const clips[3] = {"none (max)", "99.9th pct", "MSE-optimal"};
    int rc = !y;
    struct wino_int8_params q, full;
    for (int m = 2; m <= 6 && !rc; m += 2)
        for (int c = 0; c < 3 && !rc; c++) {
            char what[16], doing[48];
            snprintf(what, sizeof what, "F%dx%d_3x3", m, m);
            snprintf(doing, sizeof doing, "%s %s", what, clips[c]);
            step(j, name, doing);
            rc = wino_int8_calibrate(&L->desc, m, L->x, L->w, NULL, 0, 0.0f,
                                     WINO_CALIBRATE_PERCENTILE, 100.0, &full) ||
                 wino_int8_calibrate(&L->desc, m, L->x, L->w, NULL, 0, 0.0f,
                                     c == 2 ? WINO_CALIBRATE_MSE : WINO_CALIBRATE_PERCENTILE,
                                     c == 0 ? 100.0 : 99.9, &q);
            q.clip_c = full.clip_c;
            q.y_scale = full.y_scale;
            const enum wino_status st = rc ? WINO_INVALID_ARGUMENT : run_int8_winograd(L, m, &q, y);
            if (st == WINO_UNSUPPORTED) /* the int32 bound: a gap in the table, not an error */
                report(j, name, input, what, clips[c], NAN, NAN);
            else if (!(rc = st != WINO_SUCCESS)) {
                db = sqnr_db(L->ref, y, L->yn, &rel);
                report(j, name, input, what, clips[c], db, rel);
            }
        }
    if (!rc)
        step(j, name, "direct");
    if (!rc && !(rc = run_int8_direct(L, &full, y))) { /* the same input and output scales */
        db = sqnr_db(L->ref, y, L->yn, &rel);
        report(j, name, input, "direct", "per-channel w", db, rel);
    }
    if (rc) {
        cli_progress_clear(&j->bar);
        fprintf(stderr, "wino calibrate: %s: %s\n", name, wino_last_error());
    }
    free(y);
    return rc;
}

static int calibrate_layer(struct job *j, const char *name, const struct layer_data *L, int m,
                           enum wino_calibration method, double pct)
{
    struct wino_int8_params q;
    double *y = malloc(sizeof(double) * L->yn), rel = 0.0;
    step(j, name, "calibrate, run");
    int rc = !y || wino_int8_calibrate(&L->desc, m, L->x, L->w, NULL, 0, 0.0f, method, pct, &q) ||
             run_int8_winograd(L, m, &q, y) != WINO_SUCCESS;
    cli_progress_clear(&j->bar);
    if (!rc) {
        const double db = sqnr_db(L->ref, y, L->yn, &rel);
        printf(j->csv ? "%s,%d,%g,%g,%g,%g,%g,%.2f\n"
                      : "  %-12s F(%d,3)  x_scale %-10.4g alpha_ta %-10.4g alpha_tw %-10.4g "
                        "c %-10.4g y_scale %-10.4g SQNR %.2f dB\n",
               name, m, (double)q.x_scale, (double)q.alpha_ta, (double)q.alpha_tw,
               (double)q.clip_c, (double)q.y_scale, db);
        fflush(stdout);
    } else {
        fprintf(stderr, "wino calibrate: %s: %s\n", name, wino_last_error());
    }
    free(y);
    return rc;
}

/* The CLI_CALL handler of --percentile: a number in (0, 100]. */
static int parse_percentile(void *dest, const char *value, char *why, size_t cap)
{
    char *end;
    const double p = strtod(value, &end);
    if (!*value || *end || !(p > 0.0 && p <= 100.0)) {
        snprintf(why, cap, "a number in (0, 100]");
        return 1;
    }
    *(double *)dest = p;
    return 0;
}

/* INT8 Winograd F(m, 3) needs a 3x3 filter and stride 1. */
static int eligible(const struct bench_layer *l)
{
    return l->r == 3 && l->s == 3 && l->stride == 1;
}

int wino_cmd_calibrate(int argc, char **argv)
{
    struct bench_layer_args layer_args;
    const char *image = NULL;
    long seed = 1;
    double pct = 99.9;
    int tile = 1, method = 0, study = 0, csv = 0; /* tile, method: indices of their choices */
    enum { CALIBRATE = 1, STUDY = 2 };
    memset(&layer_args, 0, sizeof layer_args);
    const struct cli_option options[] = {
        BENCH_LAYER_OPTIONS(&layer_args, 0),
        {"--image", CLI_STRING, &image, 0, 0, 0, NULL, NULL},
        {"--seed", CLI_LONG, &seed, 0, 0, 1L << 30, NULL, NULL},
        {"--csv", CLI_FLAG, &csv, 0, 0, 0, NULL, NULL},
        {"--tile", CLI_CHOICE, &tile, CALIBRATE, 0, 0, "2|4|6", NULL},
        {"--method", CLI_CHOICE, &method, CALIBRATE, 0, 0, "percentile|mse", NULL},
        {"--percentile", CLI_CALL, &pct, CALIBRATE, 0, 0, NULL, parse_percentile},
        {"--study", CLI_FLAG, &study, STUDY, 0, 0, NULL, NULL},
        {NULL, CLI_FLAG, NULL, 0, 0, 0, NULL, NULL}};
    const int parsed = cli_parse_verb("calibrate", options, argc, argv, usage_text);
    if (parsed >= 0)
        return parsed;
    struct bench_layer *layers;
    char set[BENCH_NAME_MAX];
    int count, usable = 0;
    int rc = bench_load_layers("calibrate", &layer_args, "resnet18", &layers, &count, set,
                               sizeof set);
    if (rc)
        return rc;
    for (int i = 0; i < count; i++)
        usable += eligible(&layers[i]);
    if (!usable && !image) {
        free(layers);
        return cli_usage_error("calibrate", "no layer of %s has a 3x3 filter and stride 1: "
                                            "nothing to calibrate",
                               set);
    }
    int ih = 0, iw = 0;
    float *photo = image ? int8_data_read_ppm(image, &ih, &iw) : NULL;
    if (image && !photo) {
        free(layers);
        return 2;
    }
    if (usable < count)
        fprintf(stderr, "wino calibrate: note: %d of the %d layers of %s skipped (INT8 Winograd "
                        "needs a 3x3 filter and stride 1)\n",
                count - usable, count, set);
    struct job job = {set, csv, {0, 0, "", 0}, 0, 0};
    job.total = (long)(usable + (photo != NULL)) * (study ? 1 + STUDY_STEPS : 2);
    cli_progress_start(&job.bar);
    if (csv)
        printf(study ? "set,layer,input,algo,clip,sqnr_db,rel_l2\n"
                     : "layer,tile,x_scale,alpha_ta,alpha_tw,clip_c,y_scale,sqnr_db\n");
    for (int i = -1; i < count && !rc; i++) {
        struct bench_layer bl;
        const char *input = "synthetic";
        if (i < 0) { /* the photograph as a first layer */
            if (!photo)
                continue;
            bl = (struct bench_layer){"photo", 1, 3, ih, iw, 64, 3, 3, 1, 1};
            input = "photograph";
        } else {
            bl = layers[i];
            if (!eligible(&bl))
                continue;
        }
        struct layer_data L;
        step(&job, bl.name, "data and FP32 reference");
        rc = make_layer(&bl, i < 0 ? photo : NULL, (uint64_t)seed * 1000 + (uint64_t)(i + 1), &L);
        if (rc) {
            cli_progress_clear(&job.bar);
            fprintf(stderr, "wino calibrate: out of memory\n");
        } else if (study)
            rc = study_layer(&job, bl.name, input, &L);
        else
            rc = calibrate_layer(&job, bl.name, &L, 2 * (tile + 1),
                                 method ? WINO_CALIBRATE_MSE : WINO_CALIBRATE_PERCENTILE, pct);
        free_layer(&L);
    }
    cli_progress_clear(&job.bar);
    free(photo);
    free(layers);
    return rc ? 1 : 0;
}
