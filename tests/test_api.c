/* Public API: every entry point refuses bad input with the right status (and a reason), and the
 * operator lifecycle computes correct convolutions on random shapes (outputs poisoned first). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_check.h"
#include "wino_gen.h"

static int expect(enum wino_status got, enum wino_status want, const char *what)
{
    if (got == want && (got == WINO_SUCCESS || wino_last_error()[0]))
        return 1;
    printf("  %s: got %d (%s), want %d; reason \"%s\"\n", what, (int)got,
           wino_status_string(got), (int)want, wino_last_error());
    return 0;
}

static int test_status_strings(void)
{
    int ok = 1;
    for (int s = 0; s <= WINO_INTERNAL_ERROR; s++)
        ok &= wino_status_string((enum wino_status)s) != NULL &&
              strlen(wino_status_string((enum wino_status)s)) > 0;
    ok &= strcmp(wino_status_string(WINO_INVALID_ARGUMENT), wino_status_string(WINO_UNSUPPORTED)) != 0;
    ok &= strlen(wino_status_string((enum wino_status)99)) > 0;
    return ok && wino_version()[0];
}

static int test_tile_bad_input(void)
{
    wino_tile *t = NULL;
    const enum wino_status bad = WINO_INVALID_ARGUMENT;
    int ok = 1;
    ok &= expect(wino_tile_create(0, 3, NULL, 0, &t), bad, "m = 0");
    ok &= expect(wino_tile_create(4, 0, NULL, 0, &t), bad, "r = 0");
    ok &= expect(wino_tile_create(-1, 3, NULL, 0, &t), bad, "m < 0");
    ok &= expect(wino_tile_create(15, 3, NULL, 0, &t), bad, "alpha 17");
    ok &= expect(wino_tile_create(INT_MAX, INT_MAX, NULL, 0, &t), bad, "huge m, r");
    ok &= expect(wino_tile_create(4, 3, NULL, 0, NULL), bad, "tile NULL");
    ok &= expect(wino_tile_create(4, 3, NULL, 0x80, &t), bad, "unknown flag");
    const char *points[] = {"0,1,-1,2", "0,1,-1,2,-2,3", "0,1,1,2,-2", "0,1,-1,2,1/0",
                            "0,1,-1,abc,2", "0,1,-1,2,-2,inf", "", "0,,1,-1,2", "0,1,-1,2,-2,",
                            "0,1,-1,2,2/1", "0,1,-1,2,- 2", "0,1,-1,2,1/"};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
        ok &= expect(wino_tile_create(4, 3, points[i], 0, &t), bad, points[i]);
    ok &= t == NULL;
    ok &= expect(wino_tile_create(4, 3, " 0, 1 ,-1,+2,-4/2", 0, &t), WINO_SUCCESS, "spaces, +");
    int rows, cols;
    char buf[8];
    double d[64];
    size_t need = 0;
    struct wino_op_counts c;
    ok &= expect(wino_tile_matrix_shape(NULL, WINO_MATRIX_AT, &rows, &cols), bad, "shape NULL");
    ok &= expect(wino_tile_matrix_shape(t, (enum wino_matrix)7, &rows, &cols), bad, "matrix 7");
    ok &= expect(wino_tile_matrix_shape(t, WINO_MATRIX_G, NULL, &cols), bad, "rows NULL");
    ok &= expect(wino_tile_entry_string(t, WINO_MATRIX_G, 6, 0, buf, sizeof buf, &need), bad,
                 "row out of range");
    ok &= expect(wino_tile_entry_string(t, WINO_MATRIX_G, 0, -1, buf, sizeof buf, &need), bad,
                 "col out of range");
    ok &= expect(wino_tile_entry_string(t, WINO_MATRIX_G, 1, 0, buf, 2, &need), bad,
                 "buffer too small") && need == 5; /* "-1/6" */
    ok &= expect(wino_tile_entry_string(NULL, WINO_MATRIX_G, 0, 0, buf, 8, NULL), bad, "tile NULL");
    ok &= expect(wino_tile_point_string(t, 5, buf, sizeof buf, NULL), bad, "point index 5");
    ok &= expect(wino_tile_point_string(t, 3, buf, sizeof buf, NULL), WINO_SUCCESS, "point 3") &&
          !strcmp(buf, "2");
    ok &= expect(wino_tile_matrix_double(t, WINO_MATRIX_AT, NULL), bad, "out NULL");
    ok &= expect(wino_tile_matrix_double(NULL, WINO_MATRIX_AT, d), bad, "tile NULL");
    ok &= expect(wino_tile_op_counts(NULL, WINO_TRANSFORM_INPUT, &c, &c), bad, "tile NULL");
    ok &= expect(wino_tile_op_counts(t, (enum wino_transform)3, &c, &c), bad, "transform 3");
    ok &= expect(wino_tile_emit(NULL, WINO_EMIT_C, NULL, 0, &need), bad, "tile NULL");
    ok &= expect(wino_tile_emit(t, (enum wino_emit_lang)3, NULL, 0, &need), bad, "lang 3");
    ok &= expect(wino_tile_emit(t, WINO_EMIT_C, NULL, 0, NULL), bad, "buf and needed NULL");
    ok &= wino_tile_m(NULL) == 0 && wino_tile_alpha(NULL) == 0 && wino_tile_r(NULL) == 0;
    wino_tile_destroy(t);
    wino_tile_destroy(NULL);
    return ok;
}

static int test_desc_bad_input(void)
{
    const enum wino_status bad = WINO_INVALID_ARGUMENT;
    struct wino_conv2d_desc good = wino_conv2d_desc_make(1, 2, 5, 5, 3, 3, 3, 1, 1), d;
    int ok = expect(wino_conv2d_output_size(&good, NULL, NULL), WINO_SUCCESS, "good desc");
    int *fields[] = {&d.n, &d.c, &d.h, &d.w, &d.k, &d.r, &d.s, &d.stride_h, &d.stride_w,
                     &d.dilation_h, &d.dilation_w};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        d = good;
        *fields[i] = 0;
        ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "zero size field");
        d = good;
        *fields[i] = -3;
        ok &= expect(wino_conv2d_can_implement(&d, NULL), bad, "negative size field");
    }
    d = good, d.pad_h = -1;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "negative padding");
    d = good, d.r = 9, d.pad_h = 1;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "padding leaves no output");
    d = good, d.dilation_w = 4, d.pad_w = 0;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "dilation leaves no output");
    d = good, d.layout = (enum wino_layout)5;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "unknown layout");
    d = good, d.dtype = (enum wino_dtype)9;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "unknown dtype");
    d = good, d.n = d.c = d.h = d.w = 1 << 20;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "x size overflow");
    d = good, d.k = d.c = 1 << 30, d.r = d.s = 1 << 10, d.pad_h = d.pad_w = 1 << 10;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "w size overflow");
    d = good, d.h = INT_MAX, d.pad_h = INT_MAX / 2 + 1;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "padded extent overflow");
    /* planned without overflow (the fused variant's filter bytes, the GEMM's ISA; UBSan checks) */
    d = good, d.k = d.c = 1 << 20;
    ok &= expect(wino_conv2d_can_implement(&d, NULL), WINO_SUCCESS, "2^20 channels planned");
    d = good, d.r = 1 << 20, d.dilation_h = 1 << 12;
    ok &= expect(wino_conv2d_output_size(&d, NULL, NULL), bad, "dilated filter overflow");
    ok &= expect(wino_conv2d_output_size(NULL, NULL, NULL), bad, "desc NULL");
    int p = 0, q = 0;
    d = good, d.stride_h = 2, d.h = 8, d.w = 1, d.s = 1, d.pad_w = 0;
    ok &= expect(wino_conv2d_output_size(&d, &p, &q), WINO_SUCCESS, "stride 2") && p == 4 && q == 1;
    return ok;
}

static int test_operator_bad_input(void)
{
    const enum wino_status bad = WINO_INVALID_ARGUMENT, unsup = WINO_UNSUPPORTED;
    struct wino_conv2d_desc good = wino_conv2d_desc_make(1, 2, 6, 6, 3, 3, 3, 1, 1), d;
    float w[54] = {0}, x[72] = {0}, y[108];
    wino_conv2d *op = NULL;
    struct wino_context ctx = {.threads = -1};
    struct wino_conv2d_options o = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 4};
    int ok = 1;
    ok &= expect(wino_conv2d_create(&good, w, NULL, NULL, NULL), bad, "op NULL");
    ok &= expect(wino_conv2d_create(&good, NULL, NULL, NULL, &op), bad, "weights NULL");
    ok &= expect(wino_conv2d_create(NULL, w, NULL, NULL, &op), bad, "desc NULL");
    ok &= expect(wino_conv2d_create(&good, w, &ctx, NULL, &op), bad, "threads < 0");
    o.algo = (enum wino_algo)7;
    ok &= expect(wino_conv2d_create(&good, w, NULL, &o, &op), bad, "unknown algo");
    o.algo = WINO_ALGO_WINOGRAD, o.variant = (enum wino_variant)9;
    ok &= expect(wino_conv2d_can_implement(&good, &o), bad, "unknown variant");
    o.variant = WINO_VARIANT_FUSED_OUTPUT; /* the CUDA backend's */
    ok &= expect(wino_conv2d_can_implement(&good, &o), WINO_UNSUPPORTED,
                 "fused-output on the CPU");
    o.variant = WINO_VARIANT_ROWS; /* the CUDA backend's */
    ok &= expect(wino_conv2d_can_implement(&good, &o), WINO_UNSUPPORTED, "ROWS on the CPU");
    o.variant = WINO_VARIANT_FUSED, o.algo = WINO_ALGO_DIRECT, o.tile_m = 0;
    ok &= expect(wino_conv2d_can_implement(&good, &o), bad, "variant with DIRECT");
    o.variant = WINO_VARIANT_AUTO, o.algo = WINO_ALGO_WINOGRAD, o.relu = 2;
    ok &= expect(wino_conv2d_can_implement(&good, &o), bad, "relu 2");
    o.relu = 0, o.tile_m = -2;
    ok &= expect(wino_conv2d_can_implement(&good, &o), bad, "tile_m < 0");
    o.tile_m = 4, o.points = "0,1,-1,2,-2";
    ok &= expect(wino_conv2d_create(&good, w, NULL, &o, &op), unsup,
                 "points (deprecated: the runtime has no generator)");
    o.points = NULL;
    const double one = 1.0;
    const struct wino_tile_matrices half = {.m = 2, .r = 3, .at = &one, .g = NULL, .bt = &one};
    o.matrices = &half;
    ok &= expect(wino_conv2d_create(&good, w, NULL, &o, &op), bad, "tile matrices with NULL G");
    o.algo = WINO_ALGO_DIRECT;
    ok &= expect(wino_conv2d_can_implement(&good, &o), bad, "tile options with DIRECT");
    o.matrices = NULL;
    o.algo = WINO_ALGO_WINOGRAD, o.tile_m = 15;
    ok &= expect(wino_conv2d_create(&good, w, NULL, &o, &op), unsup, "alpha 17 tile");
    o.tile_m = 4;
    d = good, d.stride_w = 2;
    ok &= expect(wino_conv2d_create(&d, w, NULL, &o, &op), unsup, "Winograd with stride 2");
    d = good, d.dilation_h = 2;
    ok &= expect(wino_conv2d_can_implement(&d, &o), unsup, "Winograd with dilation 2");
    d = good, d.s = 2;
    ok &= expect(wino_conv2d_can_implement(&d, &o), unsup, "Winograd with R != S");
    d = good, d.dtype = WINO_DTYPE_S8;
    ok &= expect(wino_conv2d_can_implement(&d, NULL), unsup, "int8 not yet");

    ok &= expect(wino_conv2d_create(&good, w, NULL, &o, &op), WINO_SUCCESS, "create");
    size_t bytes = 0;
    enum wino_algo algo;
    int tm;
    ok &= expect(wino_conv2d_workspace_size(op, NULL), bad, "bytes NULL");
    ok &= expect(wino_conv2d_workspace_size(NULL, &bytes), bad, "op NULL");
    ok &= expect(wino_conv2d_workspace_size(op, &bytes), WINO_SUCCESS, "workspace") && bytes > 0;
    ok &= expect(wino_conv2d_algo(op, &algo, NULL), bad, "tile_m NULL");
    enum wino_variant variant;
    ok &= expect(wino_conv2d_variant(op, NULL), bad, "variant NULL");
    ok &= expect(wino_conv2d_variant(NULL, &variant), bad, "variant op NULL");
    /* a 6x6 image has 4 tiles of F(4x4, 3x3): too few for fused blocks on any thread count */
    ok &= expect(wino_conv2d_variant(op, &variant), WINO_SUCCESS, "variant") &&
          variant == WINO_VARIANT_NON_FUSED;
    ok &= expect(wino_conv2d_algo(op, &algo, &tm), WINO_SUCCESS, "algo") &&
          algo == WINO_ALGO_WINOGRAD && tm == 4;
    void *ws = NULL;
    if (posix_memalign(&ws, 64, bytes + 64))
        return 0;
    ok &= expect(wino_conv2d_run(NULL, x, y, ws, bytes), bad, "run op NULL");
    ok &= expect(wino_conv2d_run(op, NULL, y, ws, bytes), bad, "run x NULL");
    ok &= expect(wino_conv2d_run(op, x, NULL, ws, bytes), bad, "run y NULL");
    ok &= expect(wino_conv2d_run(op, x, y, NULL, bytes), WINO_INSUFFICIENT_WORKSPACE, "ws NULL");
    ok &= expect(wino_conv2d_run(op, x, y, ws, bytes - 1), WINO_INSUFFICIENT_WORKSPACE,
                 "ws too small");
    ok &= expect(wino_conv2d_run(op, x, y, (char *)ws + 4, bytes), WINO_INSUFFICIENT_WORKSPACE,
                 "ws misaligned");
    ok &= expect(wino_conv2d_run(op, x, y, ws, bytes), WINO_SUCCESS, "run");
    free(ws);
    wino_conv2d_destroy(op);
    wino_conv2d_destroy(NULL);
    return ok;
}

/* expect(), and the reason names what the caller needs to know (where BF16 runs, or which
 * dtypes the entry point takes). */
static int expect_reason(enum wino_status got, enum wino_status want, const char *word,
                         const char *what)
{
    if (!expect(got, want, what))
        return 0;
    if (strstr(wino_last_error(), word))
        return 1;
    printf("  %s: reason \"%s\" does not name %s\n", what, wino_last_error(), word);
    return 0;
}

/* BF16 runs on the CUDA backend only: every entry point of the CPU that creates, plans or times
 * an operator refuses it with a status and a reason, and creates nothing; so does
 * WINO_ALGO_VENDOR. */
static int test_bf16_refused_on_cpu(void)
{
    const enum wino_status unsup = WINO_UNSUPPORTED, bad = WINO_INVALID_ARGUMENT;
    struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, 6, 6, 3, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC, d.dtype = WINO_DTYPE_BF16;
    float w[54] = {0}, x[72] = {0};
    const struct wino_int8_params params = {0};
    struct wino_int8_params calibrated;
    struct wino_tuning_choice choice;
    wino_conv2d *op = NULL;
    int ok = 1;
    ok &= expect_reason(wino_conv2d_can_implement(&d, NULL), unsup, "BF16",
                        "BF16 forward can_implement");
    ok &= expect_reason(wino_conv2d_create(&d, w, NULL, NULL, &op), unsup, "BF16",
                        "BF16 forward create");
    ok &= expect_reason(wino_conv2d_backward_data_can_implement(&d, NULL, NULL), unsup,
                        "CUDA", "BF16 backward-data can_implement");
    ok &= expect_reason(wino_conv2d_backward_data_create(&d, w, NULL, NULL, &op), unsup,
                        "CUDA", "BF16 backward-data create");
    ok &= expect_reason(wino_conv2d_backward_filter_can_implement(&d, NULL, NULL), unsup,
                        "CUDA", "BF16 backward-filter can_implement");
    ok &= expect_reason(wino_conv2d_backward_filter_create(&d, NULL, NULL, &op), unsup, "CUDA",
                        "BF16 backward-filter create");
    ok &= expect_reason(wino_tune(&d, NULL, 1, &choice), unsup, "FP32", "BF16 tune");
    /* the INT8 entry points take a dtype of their own: BF16 there is a wrong argument */
    ok &= expect_reason(wino_conv2d_create_int8(&d, w, &params, NULL, NULL, &op), bad, "S8",
                        "BF16 INT8 create");
    ok &= expect_reason(wino_int8_calibrate(&d, 4, x, w, NULL, 0, 0.0f, WINO_CALIBRATE_MSE, 0.0,
                                            &calibrated),
                        bad, "F32", "BF16 INT8 calibrate");
    /* the vendor library's convolution is the CUDA backend's */
    const struct wino_conv2d_options vendor = {.algo = WINO_ALGO_VENDOR};
    d.dtype = WINO_DTYPE_F32;
    ok &= expect_reason(wino_conv2d_create(&d, w, NULL, &vendor, &op), unsup, "CUDA",
                        "WINO_ALGO_VENDOR forward on the CPU");
    ok &= expect_reason(wino_conv2d_backward_filter_create(&d, NULL, &vendor, &op), unsup,
                        "CUDA", "WINO_ALGO_VENDOR backward-filter on the CPU");
    ok &= wino_conv2d_reason(NULL)[0] == '\0';
    return ok && op == NULL;
}

/* One random convolution through the API against the FP64 reference. */
static int check_random_conv(struct test_rng *rng, enum wino_algo algo, int case_id)
{
    struct wino_conv2d_desc d;
    d.n = 1 + (int)(test_rng_next(rng) % 2);
    d.c = 1 + (int)(test_rng_next(rng) % 5);
    d.k = 1 + (int)(test_rng_next(rng) % 5);
    d.h = 1 + (int)(test_rng_next(rng) % 13);
    d.w = 1 + (int)(test_rng_next(rng) % 13);
    d.r = 1 + (int)(test_rng_next(rng) % 5);
    d.s = algo == WINO_ALGO_WINOGRAD ? d.r : 1 + (int)(test_rng_next(rng) % 5);
    d.pad_h = (int)(test_rng_next(rng) % (unsigned)(d.r + 2));
    d.pad_w = (int)(test_rng_next(rng) % (unsigned)(d.s + 2));
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    if (algo == WINO_ALGO_DIRECT) {
        d.stride_h = 1 + (int)(test_rng_next(rng) % 3);
        d.dilation_w = 1 + (int)(test_rng_next(rng) % 2);
    }
    d.layout = (test_rng_next(rng) & 1) ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
    d.dtype = WINO_DTYPE_F32;
    if (wino_conv2d_output_size(&d, NULL, NULL))
        return 1; /* no output for this draw: nothing to check */
    const int m = algo == WINO_ALGO_WINOGRAD ? 2 + (int)(test_rng_next(rng) % 5) : 0;
    struct wino_conv2d_options o = {.algo = algo, .tile_m = m};
    /* Bounds: FP32 rounding of the direct sum; Winograd F(m, r) error grows with alpha
     * (docs/points.md), these tiles stay far below 1e-4 on (-1,1) data. */
    const double err = conv_check(&d, &o, NULL, rng, case_id % 2, NULL);
    if (err <= (algo == WINO_ALGO_WINOGRAD ? 1e-4 : 1e-6))
        return 1;
    conv_check_report(case_id, algo == WINO_ALGO_WINOGRAD ? "winograd" : "direct", &d, err);
    return 0;
}

static int test_random_convs(uint64_t seed)
{
    struct test_rng rng = {seed};
    int ok = 1;
    for (int i = 0; i < 150; i++) {
        ok &= check_random_conv(&rng, WINO_ALGO_WINOGRAD, i);
        ok &= check_random_conv(&rng, WINO_ALGO_DIRECT, i);
    }
    return ok;
}

int main(void)
{
    uint64_t seed = test_seed();
    struct test_counts c = {0, 0};
    test_check(&c, test_status_strings(), "status strings");
    test_check(&c, test_tile_bad_input(), "generator API refuses bad input");
    test_check(&c, test_desc_bad_input(), "descriptor validation");
    test_check(&c, test_operator_bad_input(), "operator lifecycle refuses bad input");
    test_check(&c, test_bf16_refused_on_cpu(), "BF16 refused on the CPU, with reasons");
    test_check(&c, test_random_convs(seed), "random convolutions match the FP64 reference");
    return test_report(&c);
}
