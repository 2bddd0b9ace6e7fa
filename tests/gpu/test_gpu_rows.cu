/* The ROWS variant of the CUDA forward convolution (one-dimensional F(m, s) along the rows;
 * src/cuda/winograd_rows.cu with alpha 8, src/cuda/winograd_rows_registers.cu with F(4, 3)) against
 * the FP64 direct reference, FP16 and BF16 NHWC:
 *  - random layers: filters 2 to 7 wide (3 most often), C a multiple of 8 from 8 to 200, K 1 to
 *    150, maps 1 x 1 to 40 x 40, batch 1 to 3, padding 0 to s - 1 per side, bias and ReLU drawn;
 *    among them 1 x 1 maps with padding, one output channel, W not a multiple of m, and FP16
 *    3 x 3 filters with the alpha 8 tile F(6, 3) asked for;
 *  - medium layers: several blocks of tiles, of output channels and many channel steps, and
 *    more than a round of them (alpha 8: some whole, the rest split in a second launch);
 *  - the operator reports Winograd, the tile (wino's: F(4, 3) for FP16 3-wide filters, else
 *    m = 9 - s) and the ROWS variant; y is poisoned before each of two runs; relative L1 within
 *    the bound (FP16 4e-3, BF16 3e-2: first bounds, the measured worst errors are printed);
 *  - reshape to another batch and image size, set_weights, then the check again;
 *  - refusals with WINO_UNSUPPORTED: NCHW, C not a multiple of 8, FP32, tiles of other alphas,
 *    F(4, 3) in BF16;
 *  - AUTO on FP16 and BF16 NHWC layers runs (ROWS, a 2D tile or the vendor's) within bounds.
 * On a GPU other than Hopper every ROWS create must be refused; the test then checks that.
 * Usage: test_gpu_rows (WINO_TEST_SEED=N to replay; WINO_GPU_TEST_SMALL=1: 12 random layers
 * instead of 40, without the medium layers and AUTO's, for the sanitizers). */
#include "gpu_test_util.h"

static struct test_counts tc;
static uint64_t base_seed;
static double worst[2];
static int hopper;

static double bound(enum wino_dtype t) { return t == WINO_DTYPE_BF16 ? 3e-2 : 4e-3; }

static struct wino_conv2d_desc nhwc(int n, int c, int h, int w, int k, int s, int pad,
                                    enum wino_dtype t)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(n, c, h, w, k, s, s, pad, pad);
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = t;
    return d;
}

/* WINOGRAD with the ROWS variant, tile m (0: wino's) and relu. */
static struct wino_conv2d_options rows_options(int m, int relu)
{
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    o.algo = WINO_ALGO_WINOGRAD;
    o.variant = WINO_VARIANT_ROWS;
    o.tile_m = m;
    o.relu = relu;
    return o;
}

/* One layer with the ROWS variant and tile m (0: wino's), checked as the file comment says. */
static void rows_case(const struct wino_conv2d_desc *d, int m, int with_bias, int relu, int id,
                      struct test_rng *rng, cudaStream_t stream)
{
    const struct wino_conv2d_options o = rows_options(m, relu);
    const struct wino_context ctx = gpu_context(0, stream);
    const uint64_t seed = test_rng_next(rng);
    struct gpu_conv_result res;
    gpu_conv_check(d, &o, &ctx, with_bias, seed, &res);
    char shape[160];
    gpu_desc_string(d, shape, sizeof shape);
    if (!hopper) {
        gpu_checkf(&tc, res.status == WINO_UNSUPPORTED,
                   "case %d: %s refused off Hopper (%s: %s)", id, shape,
                   gpu_status_name(res.status), res.error);
        return;
    }
    const int t = d->dtype == WINO_DTYPE_BF16;
    if (!m)
        m = d->dtype == WINO_DTYPE_F16 && d->s == 3 ? 4 : 9 - d->s;
    if (res.status == WINO_SUCCESS && !isnan(res.err) && res.err > worst[t])
        worst[t] = res.err;
    gpu_checkf(&tc,
               res.status == WINO_SUCCESS && res.algo == WINO_ALGO_WINOGRAD && res.tile_m == m &&
                   res.variant == WINO_VARIANT_ROWS && res.workspace_bytes == 0 &&
                   res.err <= bound(d->dtype),
               "seed %llu case %d: %s%s%s, data seed %llu: %s %s (%s); reported algo %d tile %d "
               "variant %s workspace %zu; relative L1 %.3e, bound %.1e",
               (unsigned long long)base_seed, id, shape, with_bias ? " bias" : "",
               relu ? " relu" : "", (unsigned long long)seed, gpu_status_name(res.status),
               res.call, res.error, (int)res.algo, res.tile_m, gpu_variant_name(res.variant),
               res.workspace_bytes, res.err, bound(d->dtype));
}

static int draw(struct test_rng *rng, int lo, int hi)
{
    return lo + (int)(test_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

static void random_cases(int count, int *id, struct test_rng *rng, cudaStream_t stream)
{
    static const int widths[] = {3, 3, 3, 2, 4, 5, 6, 7};
    for (int i = 0; i < count; i++) {
        const int s = widths[i % 8], kind = i % 5;
        const enum wino_dtype t = i % 2 ? WINO_DTYPE_BF16 : WINO_DTYPE_F16;
        int n = draw(rng, 1, 3), c = 8 * draw(rng, 1, 25), h = draw(rng, 1, 40);
        int w = draw(rng, 1, 40), k = draw(rng, 1, 150), pad = draw(rng, 0, s - 1);
        if (kind == 1) /* a 1 x 1 map with the widest padding */
            h = w = 1, pad = s - 1;
        if (kind == 2) /* one output channel, W one past a multiple of m */
            k = 1, w = (9 - s) * draw(rng, 1, 4) + 1;
        const struct wino_conv2d_desc d = nhwc(n, c, h, w, k, s, pad, t);
        /* now and then the alpha 8 tile where F(4, 3) is wino's */
        const int m = kind == 3 && s == 3 && t == WINO_DTYPE_F16 ? 6 : 0;
        int p = 0, q = 0;
        if (wino_conv2d_output_size(&d, &p, &q) != WINO_SUCCESS) { /* the filter does not fit */
            i--;
            continue;
        }
        rows_case(&d, m, (int)(test_rng_next(rng) % 2), (int)(test_rng_next(rng) % 2), (*id)++,
                  rng, stream);
    }
}

/* d reshaped to batch n and an h x width image, new weights, and the check of the reshaped layer
 * (the reference's weights: those of gpu_conv_check's draw for the same seed). */
static void reshape_case(struct wino_conv2d_desc d, int n, int h, int width, struct test_rng *rng,
                         cudaStream_t stream)
{
    struct wino_conv2d_desc e = d;
    e.n = n, e.h = h, e.w = width;
    const struct wino_conv2d_options o = rows_options(0, 0);
    const struct wino_context ctx = gpu_context(0, stream);
    const size_t wn = (size_t)d.k * d.c * 9, xn = (size_t)e.n * e.c * e.h * e.w;
    const size_t yn = (size_t)e.n * e.k * e.h * e.w;
    __half *hw = (__half *)malloc(wn * 2), *hx = (__half *)malloc(xn * 2),
           *hy = (__half *)malloc(yn * 2);
    float *w = (float *)malloc(wn * 4), *x = (float *)malloc(xn * 4), *y = (float *)malloc(yn * 4);
    double *ref = (double *)malloc(yn * 8);
    for (size_t i = 0; i < wn; i++)
        w[i] = gpu_round16(WINO_DTYPE_F16, (float)test_rng_sym(rng), hw, i);
    for (size_t i = 0; i < xn; i++)
        x[i] = gpu_round16(WINO_DTYPE_F16, (float)test_rng_sym(rng), hx, i);
    void *dzero = gpu_alloc(wn * 2), *dw = gpu_upload(hw, wn * 2), *dx = gpu_upload(hx, xn * 2);
    void *dy = gpu_alloc(yn * 2);
    CUDA_CHECK(cudaMemset(dzero, 0, wn * 2));
    wino_conv2d *op = NULL;
    size_t bytes = 1;
    enum wino_status st = wino_conv2d_create(&d, dzero, &ctx, &o, &op);
    if (!st)
        st = wino_conv2d_reshape(op, e.n, e.h, e.w, &bytes);
    if (!st)
        st = wino_conv2d_set_weights(op, dw, stream);
    if (!st) {
        CUDA_CHECK(cudaMemsetAsync(dy, 0xff, yn * 2, stream));
        st = wino_conv2d_run(op, dx, dy, NULL, 0);
    }
    double err = NAN;
    if (!st) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(hy, dy, yn * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < yn; i++)
            y[i] = __half2float(hy[i]);
        wino_ref_conv2d_fwd(&e, x, w, ref);
        err = wino_rel_l1_f32(y, ref, yn);
    }
    if (hopper)
        gpu_checkf(&tc, st == WINO_SUCCESS && bytes == 0 && err <= bound(WINO_DTYPE_F16),
                   "reshape %dx%dx%dx%d -> %dx%dx%dx%d and set_weights: %s (%s), workspace %zu, "
                   "relative L1 %.3e",
                   d.n, d.c, d.h, d.w, e.n, e.c, e.h, e.w, gpu_status_name(st),
                   st ? wino_last_error() : "", bytes, err);
    else
        gpu_checkf(&tc, st == WINO_UNSUPPORTED, "reshape case refused off Hopper");
    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaFree(dzero));
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(hw), free(hx), free(hy), free(w), free(x), free(y), free(ref);
}

/* d with the ROWS variant and tile m is refused with WINO_UNSUPPORTED. */
static void refused(struct wino_conv2d_desc d, int m, const char *what, cudaStream_t stream)
{
    const struct wino_conv2d_options o = rows_options(m, 0);
    const struct wino_context ctx = gpu_context(0, stream);
    const size_t bytes = (size_t)d.k * d.c * d.r * d.s * 4;
    void *w = gpu_alloc(bytes);
    CUDA_CHECK(cudaMemset(w, 0, bytes));
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_create(&d, w, &ctx, &o, &op);
    gpu_checkf(&tc, st == WINO_UNSUPPORTED && !op, "ROWS refuses %s: %s (%s)", what,
               gpu_status_name(st), wino_last_error());
    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaFree(w));
}

/* AUTO with nothing fixed on a 16-bit NHWC layer: whatever it chooses is within bounds. */
static void auto_case(const struct wino_conv2d_desc *d, struct test_rng *rng, cudaStream_t stream)
{
    struct wino_conv2d_options o;
    memset(&o, 0, sizeof o);
    const struct wino_context ctx = gpu_context(0, stream);
    struct gpu_conv_result res;
    gpu_conv_check(d, &o, &ctx, 1, test_rng_next(rng), &res);
    char shape[160];
    gpu_checkf(&tc, res.status == WINO_SUCCESS && res.err <= bound(d->dtype),
               "AUTO on %s: %s (%s); algo %d tile %d variant %s, relative L1 %.3e",
               gpu_desc_string(d, shape, sizeof shape), gpu_status_name(res.status), res.error,
               (int)res.algo, res.tile_m, gpu_variant_name(res.variant), res.err);
}

int main(void)
{
    base_seed = test_seed();
    struct test_rng rng = {base_seed};
    cudaStream_t stream = gpu_open_device(0);
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    hopper = prop.major == 9 && prop.minor == 0;
    printf("device %s (sm_%d%d), seed %llu\n", prop.name, prop.major, prop.minor,
           (unsigned long long)base_seed);
    int id = 0;
    const int small = getenv("WINO_GPU_TEST_SMALL") != NULL;
    random_cases(small ? 12 : 40, &id, &rng, stream);
    if (!small) {
        const struct {
            struct wino_conv2d_desc d;
            int m;
        } medium[] = {
            {nhwc(2, 64, 56, 56, 64, 3, 1, WINO_DTYPE_F16), 0},
            {nhwc(2, 64, 56, 56, 64, 3, 1, WINO_DTYPE_F16), 6},
            {nhwc(1, 256, 14, 14, 200, 3, 1, WINO_DTYPE_BF16), 0},
            {nhwc(4, 128, 28, 28, 128, 3, 1, WINO_DTYPE_F16), 0},
            {nhwc(1, 512, 20, 70, 72, 3, 1, WINO_DTYPE_F16), 0},
            {nhwc(1, 64, 33, 45, 96, 5, 2, WINO_DTYPE_F16), 0},
            /* 135 clusters of 18 steps, sized so that on 132 SMs the round model
             * (choose_launches) takes one round of whole blocks, then the other three in
             * clusters of 4 blocks with shares of 1 and 2 of the 6 chunks (a second launch) */
            {nhwc(3, 96, 56, 56, 320, 3, 1, WINO_DTYPE_F16), 6},
        };
        for (size_t i = 0; i < sizeof medium / sizeof medium[0]; i++)
            rows_case(&medium[i].d, medium[i].m, (int)(i % 2), (int)(i % 3 == 0), id++, &rng,
                      stream);
    }
    /* F(4, 3)'s blocks of 64 output channels take layers whose blocks fill three quarters of
     * the SMs (132 on an H100 or H200), 32 smaller ones: these take 64 (128 and 144 blocks),
     * K % 64 != 0 and K % 8 != 0 too */
    const struct wino_conv2d_desc wide[2] = {nhwc(8, 16, 32, 64, 72, 3, 1, WINO_DTYPE_F16),
                                             nhwc(8, 32, 48, 48, 100, 3, 1, WINO_DTYPE_F16)};
    for (int i = 0; i < (small ? 1 : 2); i++)
        rows_case(&wide[i], 0, 1, i == 0, id++, &rng, stream);
    reshape_case(nhwc(2, 24, 17, 19, 70, 3, 1, WINO_DTYPE_F16), 3, 9, 30, &rng, stream);
    /* reshape keeps the blocks' output channels (U's layout): 32 to a layer that a create
     * would give 64, and back */
    reshape_case(nhwc(1, 16, 8, 8, 72, 3, 1, WINO_DTYPE_F16), 8, 32, 64, &rng, stream);
    reshape_case(nhwc(8, 16, 32, 64, 72, 3, 1, WINO_DTYPE_F16), 1, 9, 13, &rng, stream);
    struct wino_conv2d_desc d = nhwc(1, 16, 8, 8, 8, 3, 1, WINO_DTYPE_F16);
    d.layout = WINO_LAYOUT_NCHW;
    refused(d, 0, "NCHW", stream);
    refused(nhwc(1, 12, 8, 8, 8, 3, 1, WINO_DTYPE_F16), 0, "C = 12", stream);
    refused(nhwc(1, 16, 8, 8, 8, 3, 1, WINO_DTYPE_F32), 0, "FP32", stream);
    refused(nhwc(1, 16, 8, 8, 8, 3, 1, WINO_DTYPE_F16), 3, "F(3, 3) (alpha 5)", stream);
    refused(nhwc(1, 16, 8, 8, 8, 5, 1, WINO_DTYPE_F16), 2, "F(2, 5) (alpha 6, 5 wide)", stream);
    refused(nhwc(1, 16, 8, 8, 8, 3, 1, WINO_DTYPE_BF16), 4, "F(4, 3) in BF16", stream);
    if (hopper && !small) { /* (AUTO times cuDNN's engines too: slow under the sanitizers) */
        const struct wino_conv2d_desc a = nhwc(2, 64, 20, 20, 64, 3, 1, WINO_DTYPE_F16);
        const struct wino_conv2d_desc b = nhwc(2, 64, 20, 20, 64, 3, 1, WINO_DTYPE_BF16);
        auto_case(&a, &rng, stream);
        auto_case(&b, &rng, stream);
    }
    printf("worst relative L1: FP16 %.3e, BF16 %.3e\n", worst[0], worst[1]);
    return gpu_report(&tc);
}
