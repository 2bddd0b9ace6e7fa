/*
 * wino.h -- the whole public API of wino, a C99 library for Winograd convolution.
 *
 * Conventions used throughout:
 *  - Every function returns an enum wino_status (or a plain value for pure queries that cannot
 *    fail). Nothing aborts and nothing prints. On failure, wino_last_error() gives a one-line
 *    explanation (thread-local), naming the argument at fault.
 *  - WINO_INVALID_ARGUMENT means the caller broke a rule written here; WINO_UNSUPPORTED means the
 *    request is valid but this build cannot do it (the caller may fall back to another library).
 *  - Sizes are int; every product of sizes is checked for overflow in size_t.
 *
 * Tensor layouts (all dense, row-major in the order their name spells):
 *  - WINO_LAYOUT_NCHW: input x is N x C x H x W, filter w is K x C x R x S, output y is N x K x P x Q.
 *  - WINO_LAYOUT_NHWC: input x is N x H x W x C, filter w is K x R x S x C, output y is N x P x Q x K.
 *  P = (H + 2*pad_h - dilation_h*(R-1) - 1) / stride_h + 1, Q likewise with W, pad_w, S.
 *  The operation is cross-correlation (what deep-learning frameworks call convolution):
 *  y[n,k,p,q] = sum_{c,i,j} x[n,c,p*stride_h - pad_h + i*dilation_h, q*stride_w - pad_w + j*dilation_w]
 *               * w[k,c,i,j], with x read as zero outside the image.
 */
#ifndef WINO_H
#define WINO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* WINO_API marks the library's functions: the libraries are compiled with hidden visibility and
 * WINO_BUILDING_LIBRARY defined, so a shared libwino or libwino_gen exports these alone. */
#if defined(WINO_BUILDING_LIBRARY) && defined(__GNUC__)
#define WINO_API __attribute__((visibility("default")))
#else
#define WINO_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

enum wino_status {
    WINO_SUCCESS = 0,
    WINO_INVALID_ARGUMENT = 1,     /* the caller broke a documented rule */
    WINO_UNSUPPORTED = 2,          /* valid request that this build cannot serve: fall back */
    WINO_OUT_OF_MEMORY = 3,        /* an allocation failed */
    WINO_INSUFFICIENT_WORKSPACE = 4, /* workspace NULL, too small or misaligned */
    WINO_DEVICE_ERROR = 5,         /* the GPU runtime reported an error */
    WINO_INTERNAL_ERROR = 6        /* a bug in wino: please report it with wino_last_error() */
};

/* A static, never-NULL English sentence describing a status value (also for unknown values). */
WINO_API const char *wino_status_string(enum wino_status status);

/* The calling thread's explanation of the last failing call ("" if none). Valid until the next
 * wino call on this thread. */
WINO_API const char *wino_last_error(void);

/* The version of this header; wino_version() gives the library's. A minor version adds to the
 * API and keeps every call of the previous one working; the major version is the shared
 * library's SONAME (libwino.so.MAJOR). */
#define WINO_VERSION_MAJOR 0
#define WINO_VERSION_MINOR 3
#define WINO_VERSION_PATCH 0

/* Library version as "MAJOR.MINOR.PATCH". */
WINO_API const char *wino_version(void);

/* ---------------------------------------------------------------------------------------------
 * Convolution
 * ------------------------------------------------------------------------------------------- */

enum wino_dtype {
    WINO_DTYPE_F32 = 0,
    WINO_DTYPE_F16 = 1,
    WINO_DTYPE_S8 = 2,
    WINO_DTYPE_U8 = 3,
    WINO_DTYPE_BF16 = 4 /* bfloat16 (torch.bfloat16: the top 16 bits of an FP32), since 0.2:
                         * the CUDA backward-filter runs it; other paths answer
                         * WINO_UNSUPPORTED */
};

enum wino_layout { WINO_LAYOUT_NCHW = 0, WINO_LAYOUT_NHWC = 1 };

enum wino_algo {
    WINO_ALGO_AUTO = 0,      /* wino chooses */
    WINO_ALGO_DIRECT = 1,    /* direct convolution (any valid descriptor); on CUDA the vendor
                              * library's (cuDNN) engines without Winograd or FFT numerics */
    WINO_ALGO_WINOGRAD = 2,  /* Winograd F(m x m, r x r); stride 1, dilation 1, R == S */
    WINO_ALGO_VENDOR = 3     /* CUDA: the vendor library's fastest engine for the layer (cuDNN 9's
                              * graph API, the path of PyTorch's conv2d, timed at create like
                              * cudnn.benchmark); FP32 (TF32 only with options.tf32), FP16, BF16;
                              * any valid descriptor. WINO_UNSUPPORTED on the CPU, for INT8, and
                              * where cuDNN 9 is not installed (libcudnn.so.9 is opened at the
                              * first such create) */
};

struct wino_conv2d_desc {
    int n, c, h, w;                /* input: batch, channels, height, width (all >= 1) */
    int k, r, s;                   /* output channels, filter height, filter width (>= 1) */
    int pad_h, pad_w;              /* zero padding on each side (>= 0) */
    int stride_h, stride_w;        /* >= 1 */
    int dilation_h, dilation_w;    /* >= 1 */
    enum wino_layout layout;
    enum wino_dtype dtype;         /* element type of x, w and y */
};

/* A descriptor for an N x C x H x W input, K x C x R x S filter, given padding, stride 1,
 * dilation 1, NCHW, FP32: a convenient starting point to edit. */
WINO_API struct wino_conv2d_desc wino_conv2d_desc_make(int n, int c, int h, int w, int k, int r,
                                                       int s, int pad_h, int pad_w);

/* Validates desc and returns the output height P and width Q (either pointer may be NULL). */
WINO_API enum wino_status wino_conv2d_output_size(const struct wino_conv2d_desc *desc, int *p,
                                                  int *q);

enum wino_backend {
    WINO_BACKEND_CPU = 0,   /* x86-64 (any other CPU runs the portable paths) */
    WINO_BACKEND_CUDA = 1,  /* an NVIDIA GPU: x, y, weights and workspace in device memory */
    WINO_BACKEND_OPENCL = 2 /* an OpenCL device (since 0.3): x, y, weights and workspace are
                             * cl_mem buffers of the context's cl_context; forward Winograd,
                             * FP32 and FP16 (FP32 arithmetic; docs/opencl.md) */
};

/* The most CPU threads an operator may use (struct wino_context.threads). */
#define WINO_MAX_THREADS 1024

/* Execution context: where and how a convolution runs. */
struct wino_context {
    int threads;              /* CPU threads, 0 to WINO_MAX_THREADS (more is
                               * WINO_INVALID_ARGUMENT). 0: the threads this process may use,
                               * read at create: OMP_NUM_THREADS when it starts with a positive
                               * number (at most WINO_MAX_THREADS), else the CPUs of the calling
                               * thread's affinity mask
                               * (sched_getaffinity, taskset). run() works on the calling
                               * thread and up to threads - 1 workers of one pool that create()
                               * starts and all operators share; it never waits for a worker
                               * that has not begun its share, so on a loaded machine run()
                               * slows down towards one thread's speed instead of stalling, and
                               * idle workers spin 25-50 us, then sleep. run() is reentrant:
                               * concurrent calls, on one operator or several, are safe with
                               * separate workspaces (while one holds the pool, the others run
                               * on their calling thread alone) */
    const char *tuning_cache; /* a file written by wino_tune (`wino tune`), or NULL. With
                               * WINO_ALGO_AUTO and no tile, points or variant given, create()
                               * uses the entry measured for this layer, ISA and thread count
                               * (wino_conv2d_create_int8 too, since 0.3: see there);
                               * a missing or corrupt file, a path that is not a regular file
                               * (never opened: a FIFO would block) and a stale entry (one that
                               * wino_tune could not have written, e.g. a tile it does not time)
                               * are ignored; wino_tuning_cache_check reports them. OpenCL
                               * (since 0.3): a database written by `wino tune --backend
                               * opencl`; create() takes the kernel parameters measured for
                               * this layer, tile, device and driver whatever the variant asked,
                               * and the variant too for WINO_VARIANT_AUTO; a missing or corrupt
                               * file and an entry of another device, or whose parameters the
                               * device cannot run, are ignored (docs/opencl.md). CUDA (since
                               * 0.3): the same file as the CPU's; AUTO with nothing fixed
                               * follows the entry of this layer, kind, options, GPU model and
                               * cuDNN version without timing, and where there is none (or a
                               * stale one) times its candidates and writes its choice there (a
                               * file that is corrupt or cannot be written is left as it is) */
    enum wino_backend backend; /* WINO_BACKEND_CPU by default */
    int device;               /* CUDA: the device ordinal */
    void *stream;             /* CUDA: the cudaStream_t that run() enqueues on (NULL: the
                               * default stream); it must belong to device. OpenCL: the
                               * cl_command_queue that run() enqueues on (required, in-order),
                               * of cl_context and cl_device */
    void *cl_context;         /* OpenCL (since 0.3): the cl_context of the buffers */
    void *cl_device;          /* OpenCL (since 0.3): the cl_device_id the kernels are built
                               * for */
};

/* The largest Winograd tile, alpha = m + r - 1. */
#define WINO_MAX_ALPHA 16

/* A 1D Winograd algorithm F(m, r) given by its matrices (see wino_gen.h), rounded to double and
 * row-major: at is A^T (m x alpha), g is G (alpha x r), bt is B^T (alpha x alpha), alpha =
 * m + r - 1 <= WINO_MAX_ALPHA. The runtime holds the tiles of the recorded points; this is how
 * a caller hands it other ones, made with libwino_gen's wino_tile_matrices_get. */
struct wino_tile_matrices {
    int m, r;
    const double *at;
    const double *g;
    const double *bt;
};

/* How a Winograd convolution is staged (Mazaheri et al. (EuroSys'20)'s WV parameter). */
enum wino_variant {
    WINO_VARIANT_AUTO = 0,        /* wino chooses */
    WINO_VARIANT_NON_FUSED = 1,   /* input transform of all tiles, then alpha^2 GEMMs, then output */
    WINO_VARIANT_FUSED = 2,       /* blocks of tiles pass all three stages while in cache */
    WINO_VARIANT_FUSED_OUTPUT = 3, /* CUDA FP16 / INT8: input transform of all tiles, then one
                                    * kernel for the GEMMs and the output transform (M on chip) */
    WINO_VARIANT_ROWS = 4          /* CUDA FP16 / BF16, NHWC, Hopper (since 0.3): one kernel of
                                    * one-dimensional F(m, s) along each output row with the
                                    * filter's rows in the products, alpha = m + s - 1 = 8, or
                                    * F(4, 3) in FP16 (tile_m 0: F(4, 3) for FP16 3 x 3 filters,
                                    * else m = 9 - s); docs/cuda-winograd.md */
};

/* Operator options (all-zero = defaults). */
struct wino_conv2d_options {
    enum wino_algo algo;       /* WINO_ALGO_AUTO by default */
    int tile_m;                /* Winograd output tile m (0 = wino chooses) */
    const char *points;        /* deprecated since 0.2 (the runtime no longer holds the exact
                                * generator): must be NULL, else WINO_UNSUPPORTED. Migration:
                                * wino_tile_create(m, r, points, 0, &t) and
                                * wino_tile_matrices_get (libwino_gen, wino_gen.h), then pass
                                * the result as matrices */
    enum wino_variant variant; /* Winograd staging; on CUDA, FUSED (and FUSED_OUTPUT for FP16)
                                * exist for F(2x2, 3x3) and F(4x4, 3x3), ROWS for FP16 and
                                * BF16 forward NHWC layers on Hopper, and AUTO times the
                                * variants at create (and ROWS beside the 2D tiles) */
    const float *bias;         /* K per-output-channel values added to y (NULL = none); copied
                                * at create */
    int relu;                  /* 1: y = max(0, y) after the bias */
    int tf32;                  /* CUDA FP32: 1 lets the alpha^2 GEMMs round their inputs to TF32
                                * on tensor cores (faster, about 1e-3 relative error) */
    int accumulate;            /* backward-filter only (0 elsewhere): 1 adds the gradient to
                                * the dw given to run (dw += dW, beta = 1, for gradient
                                * accumulation); 0 overwrites it */
    const struct wino_tile_matrices *matrices; /* Winograd with other points than the recorded
                                * ones (NULL = recorded best; m and r must match tile_m and the
                                * filter; copied at create). They run on the portable scalar
                                * path (FP32, CPU only), and only when the tile is sound in
                                * FP32, else WINO_UNSUPPORTED with the reason: every entry of
                                * A^T, G and B^T is 0 or a normal float (|x| in [FLT_MIN,
                                * FLT_MAX]), and the error bound 2^-24 kappa^2 / r^2 <= 2, with
                                * kappa = max_i sum_j |A^T[i][j]| sum_k |G[j][k]|
                                * sum_l |B^T[j][l]| (the worst-case FP32 error of a tile
                                * relative to r^2 max|x| max|w|; the recorded tiles' median
                                * errors are 1.5 to 700 times smaller). The recorded points of
                                * every tile pass (largest bound 1.29, F(16, 1));
                                * 0,1,-1,1000000 for F(3, 3) (bound 1e5) does not. See
                                * docs/points.md */
};

typedef struct wino_conv2d wino_conv2d;

/* ---------------------------------------------------------------------------------------------
 * Tuning: measure instead of guess (Mazaheri et al. (EuroSys'20) section 3.3)
 * ------------------------------------------------------------------------------------------- */

struct wino_tuning_choice {
    enum wino_algo algo;       /* WINO_ALGO_DIRECT or WINO_ALGO_WINOGRAD */
    int tile_m;                /* Winograd output tile (0 for direct) */
    enum wino_variant variant; /* Winograd variant (AUTO for direct and for INT8) */
    double ms;                 /* its median time */
};

/* Times every candidate for desc on this machine with ctx->threads; reps >= 1 timed runs each
 * (median), spread over up to 3 sweeps of all the candidates (so that a passing slowdown of the
 * machine does not fall on one alone), on random data. FP32: direct, and Winograd with each generated tile m in 2..6 in
 * both variants. INT8 (since 0.3; desc->dtype WINO_DTYPE_S8 or U8, NHWC, ctx on the CPU
 * backend): wino_conv2d_create_int8's INT8 direct convolution and, for 3 x 3 filters of stride
 * 1 and dilation 1, its Winograd tiles m = 2, 4 and 6 (variant AUTO), with weights uniform in
 * (-1, 1) quantized over their whole range (alpha_tw: their largest transformed value for each
 * tile, as a calibration sets it; x_scale 1/64, alpha_ta 16, y_scale 1/4, int8 output, no
 * ReLU): a tile that create refuses for such weights (the int32 bounds: F(6,3) beyond a few
 * dozen channels) is skipped, as it would be refused for a calibrated layer. Stores the
 * fastest in ctx->tuning_cache
 * (created or updated atomically: a new file renamed over the old) when that is not NULL, keyed
 * by the ISA of the kernels timed, the thread count and desc, and returns it in *choice
 * (optional).
 * WINO_UNSUPPORTED for other types, INT8 in NCHW or on another backend, and when no candidate
 * can run the layer. */
WINO_API enum wino_status wino_tune(const struct wino_conv2d_desc *desc,
                                    const struct wino_context *ctx, int reps,
                                    struct wino_tuning_choice *choice);

/* Checks a tuning cache: WINO_SUCCESS when it is a readable regular file, well formed, and every
 * entry is one that wino_tune (CPU) or a CUDA create with AUTO could have written (so create()
 * follows it); WINO_UNSUPPORTED when it does not exist; WINO_INVALID_ARGUMENT when it is not a
 * regular file (a FIFO, device or directory: never read), is corrupt or of another format
 * version, or holds a stale entry that create() ignores: a second entry of the same key; for
 * the CPU an unknown ISA, threads outside [1, WINO_MAX_THREADS], an invalid layer or one
 * neither FP32 nor INT8, or a choice wino_tune does not time (direct with a tile or variant;
 * FP32 Winograd other than m = 2..6 with generated transforms, NON_FUSED or FUSED, for a layer
 * Winograd serves; INT8, of an NHWC layer with the INT8 ISA (0 scalar, 1 AVX2, 2 AVX-512 VNNI,
 * 3 AMX), Winograd other than m = 2, 4, 6, variant AUTO, for a 3 x 3 filter of stride 1 and
 * dilation 1); for CUDA an
 * unknown kind, an invalid layer or one not FP32, FP16 or BF16, options the kind does not take,
 * a choice not timed, or a tile that AUTO does not time for the layer. wino_last_error() names
 * the first line at fault and why. */
WINO_API enum wino_status wino_tuning_cache_check(const char *path);

/* Answers whether wino_conv2d_create would succeed for these arguments, with no side effects:
 * WINO_SUCCESS, WINO_INVALID_ARGUMENT or WINO_UNSUPPORTED (with wino_last_error() saying why).
 * options may be NULL (defaults). */
WINO_API enum wino_status wino_conv2d_can_implement(const struct wino_conv2d_desc *desc,
                                                    const struct wino_conv2d_options *options);

/* Creates the operator: validates, plans, and copies/transforms the filter weights (laid out as
 * the descriptor's layout says) so the caller may free them afterwards. ctx and options may be
 * NULL (defaults).
 * On the CUDA backend: desc->dtype FP32, FP16 or BF16 (x, weights and y all of that type;
 * 16-bit types accumulate in FP32). wino's own kernels are Winograd with the generated tiles,
 * FP32 and FP16; WINO_ALGO_DIRECT and WINO_ALGO_VENDOR run the vendor library's engines (see
 * enum wino_algo). With WINO_ALGO_AUTO and no tile, matrices or variant given, create() builds
 * wino's Winograd with each tile F(m x m, r x r) it times (m = 2 to 7 with generated
 * transforms; FP16 none larger than the default, F(4x4, 3x3) for 3x3 filters) and the vendor's
 * convolution where cuDNN 9 is installed, one after another, times each on the same zeros and
 * keeps the fastest (the choice is remembered for the layer for the rest of the process, and
 * kept in ctx->tuning_cache when it names a file), and takes the vendor's alone where wino's
 * kernels refuse the layer (strides, dilations, BF16, 1x1 filters); wino_conv2d_algo tells
 * which (WINO_ALGO_VENDOR, or WINOGRAD and the tile), wino_conv2d_reason why. The vendor's bias
 * and ReLU run as a kernel after cuDNN's (16-bit y rounded twice). Weights in memory of
 * ctx->device; create() returns once the weights
 * are transformed, run() only enqueues its kernels on ctx->stream (a failing kernel shows at the
 * caller's next synchronization): no allocation, synchronization or attribute call, so it may be
 * captured in a CUDA graph. Host pointers and a stream of another device are refused with
 * WINO_INVALID_ARGUMENT (run() asks CUDA about x, y and the workspace the first time it sees each
 * pointer); a build or machine without CUDA answers WINO_UNSUPPORTED. */
WINO_API enum wino_status wino_conv2d_create(const struct wino_conv2d_desc *desc,
                                             const void *weights, const struct wino_context *ctx,
                                             const struct wino_conv2d_options *options,
                                             wino_conv2d **op);

/* Workspace bytes run() needs for the operator's current sizes (may be 0; 0 before the first
 * reshape of an operator created without sizes). */
WINO_API enum wino_status wino_conv2d_workspace_size(const wino_conv2d *op, size_t *bytes);

/* Operator lifecycle for frameworks: create -> reshape -> run, many times.
 * create() validates, plans and transforms the weights once, for the sizes desc->n, h and w; an
 * operator that will see several input sizes is created with the typical (or largest) ones, or
 * with n = h = w = 0 ("sizes unknown": planned as for n = 1, h = w = 56) and then reshaped
 * before its first run. reshape() sets the batch and image sizes of the following runs and
 * returns their workspace size (*workspace_bytes, optional); the algorithm, tile, variant and
 * transformed weights stay those of create(), so a reshape is cheap (no weight transform, no
 * timing). An operator created with sizes is already shaped for them. Sizes that give an empty
 * output (h + 2 pad_h < the dilated filter height) or whose products overflow are refused with
 * WINO_INVALID_ARGUMENT and leave the operator as it was; an operator that cannot change sizes
 * (none today) answers WINO_UNSUPPORTED. reshape() must not run concurrently with a run() of
 * the same operator; runs after it may be concurrent as before. run() of an operator never
 * shaped returns WINO_INVALID_ARGUMENT. Applies to every kind (forward, INT8, backward). */
WINO_API enum wino_status wino_conv2d_reshape(wino_conv2d *op, int n, int h, int w,
                                              size_t *workspace_bytes);

/* Computes y from x. workspace must be 64-byte aligned and at least workspace_size bytes (it may
 * be NULL when that size is 0). run() allocates nothing. */
WINO_API enum wino_status wino_conv2d_run(const wino_conv2d *op, const void *x, void *y,
                                          void *workspace, size_t workspace_bytes);

/* As wino_conv2d_run, for a CUDA operator, enqueued on stream (a cudaStream_t of the operator's
 * device; NULL: the default stream) instead of the context's: one operator may serve several
 * streams, concurrently from several threads (with a workspace per concurrent run). A stream of
 * another device is refused with WINO_INVALID_ARGUMENT. A CPU operator takes stream NULL only. */
WINO_API enum wino_status wino_conv2d_run_stream(const wino_conv2d *op, const void *x, void *y,
                                                 void *workspace, size_t workspace_bytes,
                                                 void *stream);

/* Gives a forward or backward-data operator new filter weights, laid out, typed and placed as
 * its create took them, keeping everything else (plan, tile, variant, workspace size): for
 * training, where the weights change every step. Since 0.3. On the CPU (stream NULL) the
 * filters are transformed before it returns. On CUDA it enqueues the transform (backward-data:
 * the rotation, then the transform) on stream (a cudaStream_t of the operator's device; NULL:
 * the default stream) and nothing else: no allocation, no synchronization; runs enqueued on
 * that stream after it use the new weights, and the caller orders runs on other streams after
 * it (events) and keeps weights unchanged until the transform has run. On OpenCL (since 0.3)
 * the same with a cl_mem of weights, on stream, a cl_command_queue of the operator's context
 * and device (NULL: the context's queue). Not concurrent with a run of op.
 * WINO_INVALID_ARGUMENT for a backward-filter operator (it holds no weights),
 * WINO_UNSUPPORTED for INT8 operators and Winograd with caller matrices (create anew); on
 * failure op keeps its weights. */
WINO_API enum wino_status wino_conv2d_set_weights(wino_conv2d *op, const void *weights,
                                                  void *stream);

/* The algorithm and tile the operator uses (tile_m is 0 for non-Winograd algorithms). */
WINO_API enum wino_status wino_conv2d_algo(const wino_conv2d *op, enum wino_algo *algo,
                                           int *tile_m);
/* The Winograd variant the operator uses: FUSED or NON_FUSED for the generated-transform engine,
 * AUTO for the portable scalar path and for non-Winograd algorithms. */
WINO_API enum wino_status wino_conv2d_variant(const wino_conv2d *op, enum wino_variant *variant);
/* Why the operator runs what wino_conv2d_algo reports, as text owned by op: on CUDA the vendor's
 * engine and the times AUTO compared at create (e.g. "AUTO: Winograd F(3x3, 3x3) at 0.0212 ms
 * (m 2: 0.0250, 3: 0.0212, 4: 0.0255, 5: 0.0301, 6: 0.0244, 7: 0.0280 ms), over the vendor's at
 * 0.0530 ms (cuDNN 9.19.0 engine 12: 0.0527 ms, the fastest of 6 timed)"), or where the choice
 * came from (the process's memory, the tuning cache) with its times; a generic sentence where
 * nothing was timed. "" for NULL. */
WINO_API const char *wino_conv2d_reason(const wino_conv2d *op);

WINO_API void wino_conv2d_destroy(wino_conv2d *op); /* NULL is fine */

/* ---------------------------------------------------------------------------------------------
 * Training convolutions: backward-data and backward-filter
 *
 * desc describes the layer's FORWARD convolution y = conv(x, w) (x: N x C x H x W, w: K x C x R x
 * S, y: N x K x P x Q, laid out as desc->layout says); dy, the gradient of y, has the shape of y.
 *   backward-data:   dx[n,c,h,v] = sum over k, i, j and the (p, q) with h = p*stride_h - pad_h +
 *                    i*dilation_h and v = q*stride_w - pad_w + j*dilation_w of dy[n,k,p,q] *
 *                    w[k,c,i,j]: the shape of x, every element written (0 where no output
 *                    reads the pixel);
 *   backward-filter: dw[k,c,i,j] = sum over n, p, q of dy[n,k,p,q] * x[n, c, p*stride_h - pad_h
 *                    + i*dilation_h, q*stride_w - pad_w + j*dilation_w] (x zero outside the
 *                    image): the shape of w.
 * They are wino_conv2d operators of another kind (wino_conv2d_kind): wino_conv2d_workspace_size,
 * wino_conv2d_algo, wino_conv2d_variant and wino_conv2d_destroy apply to them as to the forward
 * one, and every valid descriptor is served (FP32 on the CPU):
 *  - backward-data, WINO_ALGO_WINOGRAD: the forward Winograd engine run on dy with the filters
 *    rotated by 180 degrees and their channels swapped (w'[c][k][R-1-i][S-1-j]), padding
 *    R-1-pad_h and S-1-pad_w; it needs stride 1, dilation 1, R == S, pad_h <= R-1 and
 *    pad_w <= S-1. options->tile_m, points and variant mean what they mean for that forward
 *    convolution (N x K x P x Q in, C out), and a tuning cache entry for it is followed.
 *    WINO_ALGO_DIRECT (any descriptor): one GEMM per stride phase over the taps that reach the
 *    phase's input pixels (no multiplications by inserted zeros).
 *  - backward-filter, WINO_ALGO_WINOGRAD: WinRS (Zhang et al., ICPP'25): each row of dy is split
 *    into units of width r, each unit correlated with its window of x by a 1D Winograd kernel
 *    Omega_alpha(n, r) = F(n, r) (n: a tile of the filter-gradient row, alpha = n + r - 1 <= 16,
 *    transforms from the generator's recorded points), the alpha products summed over all units
 *    of a segment of dy as alpha GEMMs over the channels, and the segments' partial results
 *    (buckets) reduced with Kahan summation. It needs stride 1 and dilation 1 (any R, S up to
 *    4096, any padding); wino_conv2d_backward_filter_info tells the kernels and segments.
 *    WINO_ALGO_DIRECT (any descriptor): im2col(x)^T x dy as GEMMs.
 * WINO_ALGO_AUTO takes WINO_ALGO_WINOGRAD where it applies and saves multiplications (backward-
 * data: R > 1 and, on the CPU, C > 4, where the direct path's GEMMs are R S C wide and faster;
 * backward-filter: WinRS's plan needs fewer than direct, so not for S == 1), WINO_ALGO_DIRECT
 * otherwise.
 * Options: bias and relu must be left 0 (a gradient has no epilogue); for backward-filter
 * tile_m, points and matrices must be left 0 too (WinRS picks its kernels), variant too on the
 * CPU, and accumulate may be 1. FP16, BF16 and INT8 are not served on the CPU (WINO_UNSUPPORTED).
 * On the CUDA backend both kinds serve every valid descriptor in FP32, FP16 and BF16: wino's own
 * kernels where they apply, the vendor library's engines (cuDNN) for WINO_ALGO_DIRECT and
 * WINO_ALGO_VENDOR, and for AUTO as for the forward operator (the fastest of wino's and the
 * vendor's, timed at create: backward-data times the tiles of its forward convolution on dy,
 * backward-filter WinRS; the choice kept in ctx->tuning_cache too; the vendor's alone where
 * wino's refuse; wino_conv2d_reason tells). wino's
 * backward-data is Winograd, FP32 and FP16, with weights, dy and dx in memory of ctx->device:
 * the filters are rotated on the device and a CUDA forward Winograd operator (wino_conv2d_create
 * with the same ctx and options) is created on them, so it takes what that operator takes
 * (tile_m, variant, tf32) and runs on the stream of wino_conv2d_run (the context's) or
 * wino_conv2d_run_stream; it needs stride 1, dilation 1, R == S and pad at most R-1
 * (wino_conv2d_backward_data_can_implement answers for the CPU). wino's backward-filter on CUDA
 * is WinRS, FP32, FP16 and BF16 (16-bit operands on tensor cores, FP32 accumulation and
 * transforms), stride 1 and dilation 1, x, dy and dw in memory of ctx->device, run on the
 * context's stream; options->accumulate as on the CPU (the vendor's too). options->variant: WINO_VARIANT_FUSED runs one kernel
 * per kind of units that fetches, transforms, multiplies (FP32 on CUDA cores, FP16 and BF16 on
 * tensor cores) and transforms back on chip, with kernels of alpha <= 8 and a workspace of buckets
 * only (at most half of x + dy + dw); WINO_VARIANT_NON_FUSED runs the transforms and cuBLAS
 * batched GEMMs apart through a workspace, with kernels up to alpha 16 (FP32; FP16 and BF16 up to
 * alpha 8); AUTO takes FUSED for K x C of at most four blocks of 64 x 64 channels or maps of dy of
 * at most 64 pixels, NON_FUSED elsewhere unless it needs more than twice x + dy + dw as workspace,
 * at create (wino_conv2d_variant tells). BF16 runs as FP16 does (16-bit operands, FP32 transforms
 * and accumulation). wino_conv2d_backward_filter_info reports the kernels and, as segments, the
 * partial sums added with Kahan summation (fused: the most segments of any kind of units;
 * non-fused: the groups of units), segment_h and _w 0.
 * ------------------------------------------------------------------------------------------- */

enum wino_conv2d_kind {
    WINO_CONV2D_FORWARD = 0,        /* y from x (wino_conv2d_create, wino_conv2d_create_int8) */
    WINO_CONV2D_BACKWARD_DATA = 1,  /* dx from dy (wino_conv2d_backward_data_create) */
    WINO_CONV2D_BACKWARD_FILTER = 2 /* dw from x and dy (wino_conv2d_backward_filter_create) */
};

/* The kind of an operator. */
WINO_API enum wino_status wino_conv2d_kind(const wino_conv2d *op, enum wino_conv2d_kind *kind);

/* Answers whether wino_conv2d_backward_data_create would succeed on the CPU for these arguments,
 * with no side effects: WINO_SUCCESS, WINO_INVALID_ARGUMENT or WINO_UNSUPPORTED (with
 * wino_last_error() saying why). On success *algo (optional) receives the algorithm create
 * would use without a tuning cache (WINO_ALGO_WINOGRAD or WINO_ALGO_DIRECT). options may be
 * NULL (defaults). */
WINO_API enum wino_status wino_conv2d_backward_data_can_implement(
    const struct wino_conv2d_desc *desc, const struct wino_conv2d_options *options,
    enum wino_algo *algo);

/* Creates the backward-data operator of desc's convolution: validates, plans, and copies and
 * rearranges the filter weights w (K x C x R x S as desc->layout says) so the caller may free
 * them. ctx and options may be NULL (defaults). Run it with wino_conv2d_run(op, dy, dx,
 * workspace, workspace_bytes): dy has y's shape and layout, dx x's. */
WINO_API enum wino_status wino_conv2d_backward_data_create(
    const struct wino_conv2d_desc *desc, const void *weights, const struct wino_context *ctx,
    const struct wino_conv2d_options *options, wino_conv2d **op);

/* As wino_conv2d_backward_data_can_implement, for wino_conv2d_backward_filter_create. */
WINO_API enum wino_status wino_conv2d_backward_filter_can_implement(
    const struct wino_conv2d_desc *desc, const struct wino_conv2d_options *options,
    enum wino_algo *algo);

/* Creates the backward-filter operator of desc's convolution (it holds no tensor). ctx and
 * options may be NULL (defaults); options->accumulate chooses dw = dW or dw += dW. */
WINO_API enum wino_status wino_conv2d_backward_filter_create(
    const struct wino_conv2d_desc *desc, const struct wino_context *ctx,
    const struct wino_conv2d_options *options, wino_conv2d **op);

/* Computes dw (w's shape and layout) from x and dy. workspace as for wino_conv2d_run: 64-byte
 * aligned, at least wino_conv2d_workspace_size bytes (NULL when that is 0); run() allocates
 * nothing. dw must not overlap x, dy or the workspace. */
WINO_API enum wino_status wino_conv2d_backward_filter_run(const wino_conv2d *op, const void *x,
                                                          const void *dy, void *dw, void *workspace,
                                                          size_t workspace_bytes);

/* As wino_conv2d_backward_filter_run, on stream (a cudaStream_t of the operator's device; NULL:
 * the default stream) instead of the context's: one operator may serve several streams,
 * concurrently from several threads with a workspace per concurrent run. A CPU operator takes
 * stream NULL only. Since 0.3. */
WINO_API enum wino_status wino_conv2d_backward_filter_run_stream(const wino_conv2d *op,
                                                                 const void *x, const void *dy,
                                                                 void *dw, void *workspace,
                                                                 size_t workspace_bytes,
                                                                 void *stream);

/* What a backward-filter operator runs. For WINO_ALGO_DIRECT kernels is 0. */
struct wino_winrs_info {
    int kernels;   /* 1 or 2 kernels Omega_alpha(n, r) share each row of dy (0: direct) */
    int n[2];      /* filter-gradient tile width of each: a filter row of S taps is covered by
                    * S / n tiles of n and, when n does not divide S, one of S mod n */
    int r[2];      /* unit width of each (columns of dy per unit) */
    int alpha[2];  /* n + r - 1 */
    int units[2];  /* units of each per row of dy: units[0] r[0] + units[1] r[1] = Q */
    int segments;  /* segments of dy computed apart: the workspace holds segments - 1
                    * partial filter gradients, summed with Kahan summation at the end */
    int segment_h, segment_w; /* the usual segment shape (rows x columns of dy) */
};

/* Fills *info for a backward-filter operator (WINO_INVALID_ARGUMENT for another kind). */
WINO_API enum wino_status wino_conv2d_backward_filter_info(const wino_conv2d *op,
                                                           struct wino_winrs_info *info);

/* ---------------------------------------------------------------------------------------------
 * INT8 Winograd F(m x m, 3 x 3), m in {2, 4, 6} (Mori et al., Electronics 2024): the
 * transformed activations and weights are clipped to +-alpha_ta and +-alpha_tw in the Winograd
 * domain and quantized to int8; integer transforms, int8 GEMMs with int32 accumulation, one
 * requantization. The bit-exact specification: docs/int8-winograd.md.
 * ------------------------------------------------------------------------------------------- */

/* Quantizing the input: wino takes x already quantized. The rule that calibration assumes and
 * that the caller should apply to a real activation a is
 *     x = clamp(rintf(a / x_scale), lo, hi)   (rintf: round half to even, in float)
 * with [lo, hi] = [-128, 127] for WINO_DTYPE_S8 and [0, 255] for WINO_DTYPE_U8 (torch.round and
 * CUDA's __float2int_rn round the same way). */
struct wino_int8_params {
    float x_scale;           /* s_x > 0: the real input is x_scale * x (x: desc->dtype S8 or U8) */
    float alpha_ta;          /* > 0: clip of the transformed activations B^T x B (real units) */
    float alpha_tw;          /* > 0: clip of the transformed weights G w G^T (real units) */
    const float *alpha_tw_k; /* K per-output-channel clips instead of alpha_tw (NULL = none) */
    float w_scale;           /* 0: weights are float; > 0: weights are int8, real = w_scale * w */
    float y_scale;           /* s_y > 0: the real output is y_scale * y */
    enum wino_dtype y_dtype; /* WINO_DTYPE_S8 or WINO_DTYPE_U8 (U8 needs options->relu) */
    float clip_c;            /* PACT clip c > 0 of the real output, or 0 for none */
};

/* Creates an INT8 Winograd convolution: desc->dtype is the input type (WINO_DTYPE_S8 or U8),
 * NHWC, 3 x 3 filter, stride 1, dilation 1; weights (K x 3 x 3 x C) float or int8 as
 * params->w_scale says. options (may be NULL): tile_m 2, 4 or 6 (0: 4), bias (K real values),
 * relu; points must be left 0, and variant too on the CPU. algo WINO_ALGO_DIRECT, or AUTO on
 * any other shape (any R x S, stride, dilation; weights K x R x S x C; tile_m ignored), creates
 * the CPU's INT8 direct convolution instead: alpha_tw then clips the weights themselves,
 * alpha_ta is unused (docs/int8-winograd.md, "Direct"). On the CPU, AUTO with no tile, points
 * or variant given follows the entry that wino_tune wrote into ctx->tuning_cache for this layer,
 * INT8 ISA and thread count (since 0.3): direct, or Winograd with the entry's tile, whatever
 * the shape rule above says (without an entry, or with a stale one, the rule holds). The
 * parameters depend on what runs: alpha_ta and alpha_tw clip the transformed values of one
 * tile, and the weights themselves for direct, so a caller who passes a tuning cache calibrates
 * for what wino_int8_auto_choice answers (Winograd: wino_int8_calibrate with its tile; direct:
 * alpha_tw of the weights themselves); a tile that these
 * weights would overflow is refused (WINO_UNSUPPORTED), never replaced by another behind the
 * calibration. wino_conv2d_algo reports what runs (WINOGRAD and the tile, or DIRECT and 0),
 * wino_conv2d_reason whether the cache chose it. Run it with
 * wino_conv2d_run (x and y int8 or uint8 in NHWC). On the CUDA backend weights, x and y are in
 * device memory, variant may be FUSED or FUSED_OUTPUT (tile_m 2 or 4) or NON_FUSED (AUTO: the
 * fastest, timed at create), and the results are the same bits as on the CPU. WINO_UNSUPPORTED when a
 * configuration could overflow an int32 step (the message gives the bound),
 * WINO_INVALID_ARGUMENT for bad scales or clips, for derived constants out of float range, and
 * for float weights or a bias that are not finite (the message names the first index). */
WINO_API enum wino_status wino_conv2d_create_int8(const struct wino_conv2d_desc *desc,
                                                  const void *weights,
                                                  const struct wino_int8_params *params,
                                                  const struct wino_context *ctx,
                                                  const struct wino_conv2d_options *options,
                                                  wino_conv2d **op);

/* What wino_conv2d_create_int8 with WINO_ALGO_AUTO and no tile, points or variant would run
 * for desc and ctx (may be NULL), with no side effects: *algo WINO_ALGO_WINOGRAD and *tile_m
 * its tile, or WINO_ALGO_DIRECT and 0; on the CPU the tuning cache's entry when
 * ctx->tuning_cache holds a valid one for this layer, INT8 ISA and thread count, else the
 * shape rule (F(4x4, 3x3) for 3 x 3 filters of stride 1 and dilation 1, direct otherwise); on
 * CUDA F(4x4, 3x3). Calibrate for that tile before creating. WINO_INVALID_ARGUMENT for NULL
 * pointers, an invalid desc or ctx and a dtype other than S8 or U8; WINO_UNSUPPORTED for NCHW,
 * the OpenCL backend and, on CUDA, other shapes. Since 0.3. */
WINO_API enum wino_status wino_int8_auto_choice(const struct wino_conv2d_desc *desc,
                                                const struct wino_context *ctx,
                                                enum wino_algo *algo, int *tile_m);

/* The matrices of the INT8 tile F(tile_m, 3), tile_m 2, 4 or 6, exactly as the INT8 engines
 * use them (docs/int8-winograd.md): integer A'^T (its columns times the shifts) and B'^T, and
 * G' (rounded to double from the exact rationals), for emulating the pipeline elsewhere (e.g.
 * Winograd-aware training). As wino_tile_matrices_get (wino_gen.h): storage receives A'^T, G'
 * and B'^T row-major one after the other (m alpha + 3 alpha + alpha^2 doubles; storage_count
 * says how many it holds, WINO_INSUFFICIENT_WORKSPACE when too few) and *matrices points into
 * it. WINO_UNSUPPORTED for another tile_m. Since 0.3. */
WINO_API enum wino_status wino_int8_tile_matrices(int tile_m, double *storage,
                                                  size_t storage_count,
                                                  struct wino_tile_matrices *matrices);

enum wino_calibration {
    WINO_CALIBRATE_PERCENTILE = 0, /* clips at a percentile of |value| (Mori et al.: 99.9) */
    WINO_CALIBRATE_MSE = 1         /* clips minimizing the mean squared quantization error */
};

/* Calibrates params for an INT8 Winograd layer from sample inputs: desc as for
 * wino_conv2d_create_int8 but with desc->dtype WINO_DTYPE_F32, samples desc->n float NHWC
 * images of real activations, weights float (K x 3 x 3 x C), bias (K, may be NULL) and relu as
 * the layer will run. x_scale: the input scale the layer will see (0: max |x| / 127, or / 255
 * when every sample is >= 0). Sets x_scale, alpha_ta (of |B^T x B| on the quantized samples),
 * alpha_tw (of |G w G^T|), clip_c and y_scale (of the layer's float output, y_scale = c / 127,
 * or / 255 with relu, y_dtype to match); leaves alpha_tw_k NULL and w_scale 0. percentile in
 * (0, 100] for WINO_CALIBRATE_PERCENTILE (ignored for MSE). WINO_INVALID_ARGUMENT (params left
 * unchanged) for a sample, weight or bias that is not finite (the message names the first
 * index) and when a clipping factor or scale falls outside the float range. */
WINO_API enum wino_status wino_int8_calibrate(const struct wino_conv2d_desc *desc, int tile_m,
                                              const float *samples, const float *weights,
                                              const float *bias, int relu, float x_scale,
                                              enum wino_calibration method, double percentile,
                                              struct wino_int8_params *params);

#ifdef __cplusplus
}
#endif

#endif /* WINO_H */
