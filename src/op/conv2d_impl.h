/* The operator behind the public wino_conv2d handle, shared by the files that create it.
 *
 * An operator is tagged twice: its kind (forward, backward-data, backward-filter: what the
 * caller asked) and its path (how it computes: CPU direct, the CPU Winograd engine, ..., the
 * CUDA and OpenCL components). The path is a small table of operations chosen at create,
 * defined beside the state it drives (conv2d.c: the CPU FP32 forward paths; conv2d_int8.c: CPU
 * INT8; conv2d_cuda.c: CUDA; conv2d_opencl.c: OpenCL; conv2d_backward.c: the training paths),
 * so the shared entry points (run, reshape, variant, destroy) check their arguments once and
 * hold no per-path branches. */
#ifndef WINO_OP_CONV2D_IMPL_H
#define WINO_OP_CONV2D_IMPL_H

#include "base/conv_desc.h"
#include "cpu/direct_f32.h"
#include "cpu/winograd_f32.h"
#include "cpu/winograd_s8.h"
#include "cpu/winograd_scalar.h"
#include "cuda/conv2d_cuda.h"
#include "wino.h"

struct wino_conv2d_path;

struct wino_conv2d {
    const struct wino_conv2d_path *path; /* set at create, before any state it releases */
    struct wino_conv2d_desc desc;
    struct wino_conv_sizes sizes;
    enum wino_algo algo;
    struct wino_f32_direct direct;    /* DIRECT */
    float *bias;                      /* K values copied from the options, or NULL */
    int relu;
    struct wino_f32_engine engine;    /* WINOGRAD with generated transforms (engine.U != NULL) */
    struct wino_f32_winograd winograd; /* WINOGRAD on the scalar path otherwise */
    struct wino_s8_engine *int8;      /* INT8 Winograd, or NULL */
    struct wino_cuda_conv *cuda;      /* on the CUDA backend, or NULL */
    enum wino_backend backend;        /* CUDA, OpenCL: run_stream takes the device's streams */
    void *stream;                     /* CUDA, OpenCL: the context's stream (command queue),
                                       * wino_conv2d_run's */
    int tile_m;                       /* Winograd's tile (0 otherwise; INT8: see int8) */
    size_t workspace_bytes;
    enum wino_conv2d_kind kind;
    struct wino_conv2d_backward *backward; /* backward-data / -filter state, or NULL */
    void *state;                      /* a path's own state (CUDA backward-filter, OpenCL), or
                                       * NULL */
    int unshaped;                     /* created without sizes: run() waits for a reshape */
    char reason[320];                 /* why it runs what it runs, or "" (wino_conv2d_reason) */
};

/* What a run reads and writes: forward x -> y, backward-data dy -> dx, backward-filter
 * (x, dy) -> dw; the workspace as checked against the operator's size; the CUDA stream. */
struct wino_conv2d_io {
    const void *in, *in2;
    void *out;
    void *workspace;
    size_t workspace_bytes;
    void *stream;
};

struct wino_conv2d_path {
    /* Computes io (arguments checked, the operator shaped). */
    enum wino_status (*run)(const wino_conv2d *op, const struct wino_conv2d_io *io);
    /* Makes op serve d (checked, sizes its sizes) and sets *workspace_bytes; on failure op stays
     * as it was. The shared part (desc, sizes, workspace size) is wino_conv2d_reshape's. */
    enum wino_status (*reshape)(wino_conv2d *op, const struct wino_conv2d_desc *d,
                                const struct wino_conv_sizes *sizes, size_t *workspace_bytes);
    enum wino_variant (*variant)(const wino_conv2d *op);
    void (*release)(wino_conv2d *op); /* the path's state (op itself is freed by destroy) */
    /* Takes new weights (checked non-NULL; stream NULL on the CPU); NULL when the path takes
     * its weights at create only. On failure op keeps the weights it had. */
    enum wino_status (*set_weights)(wino_conv2d *op, const void *weights, void *stream);
};

/* The paths of the CUDA component (conv2d_cuda.c), used by the FP32/FP16 and INT8 creates. */
extern const struct wino_conv2d_path wino_path_cuda;

/* A path's variant when it has none to report: WINO_VARIANT_AUTO. */
enum wino_variant wino_variant_none(const wino_conv2d *op);

/* The failure of a reshape whose workspace size overflows. */
enum wino_status wino_reshape_overflow(void);

/* The descriptor create plans for: desc itself, or, when its sizes are unknown (n = h = w = 0),
 * *nominal, a copy with n = 1 and h, w = 56 (or the dilated filter's extent when larger). */
const struct wino_conv2d_desc *wino_desc_for_planning(const struct wino_conv2d_desc *desc,
                                                      struct wino_conv2d_desc *nominal);

/* The end of every create: st, after marking a created *op unshaped when it was planned on
 * nominal sizes. */
enum wino_status wino_conv2d_shaped(enum wino_status st, wino_conv2d **op, int unshaped);

/* Checks the fields of options that mean the same on every backend. */
enum wino_status wino_conv2d_check_options(const struct wino_conv2d_options *options);

/* The first checks of a backend's create: desc (its sizes into *sizes) and the options, *o
 * pointing at options or, for NULL, the defaults. */
enum wino_status wino_conv2d_check_create(const struct wino_conv2d_desc *desc,
                                          const struct wino_conv2d_options *options,
                                          const struct wino_conv2d_options **o,
                                          struct wino_conv_sizes *sizes);

/* A new Winograd operator of a GPU backend (ctx's backend and stream) on path, or NULL when
 * out of memory (src/op/conv2d_cuda.c). */
struct wino_conv2d *wino_gpu_winograd_new(const struct wino_conv2d_desc *desc,
                                          const struct wino_conv_sizes *sizes, int tile_m,
                                          const struct wino_context *ctx,
                                          const struct wino_conv2d_path *path);

/* Checks the backend, device and threads of ctx (NULL is the default CPU context). */
enum wino_status wino_context_check(const struct wino_context *ctx);

/* Why Winograd F(tile_m, r) cannot serve desc, or NULL when it can. */
const char *wino_winograd_refusal(const struct wino_conv2d_desc *desc, int tile_m);

/* The tile of a GPU backend (CUDA, OpenCL) when the options leave it to wino: F(4x4, 3x3) and
 * smaller filters' m = 4 keep the GEMMs large; bigger filters take m = 2, whose alpha stays
 * small enough for one thread's registers. */
int wino_gpu_default_tile_m(const struct wino_conv2d_desc *desc);

/* wino_conv2d_create for ctx->backend == WINO_BACKEND_OPENCL (src/op/conv2d_opencl.c). */
enum wino_status wino_conv2d_create_opencl(const struct wino_conv2d_desc *desc,
                                           const void *weights, const struct wino_context *ctx,
                                           const struct wino_conv2d_options *options,
                                           wino_conv2d **op);

/* Checks run()'s workspace against the operator's size and its 64-byte alignment. */
enum wino_status wino_conv2d_check_workspace(const wino_conv2d *op, const void *workspace,
                                             size_t workspace_bytes);

/* wino_conv2d_create for ctx->backend == WINO_BACKEND_CUDA (src/op/conv2d_cuda.c). */
enum wino_status wino_conv2d_create_cuda(const struct wino_conv2d_desc *desc,
                                         const void *weights, const struct wino_context *ctx,
                                         const struct wino_conv2d_options *options,
                                         wino_conv2d **op);

/* wino_conv2d_backward_filter_create for ctx->backend == WINO_BACKEND_CUDA, for a descriptor
 * and options that passed the backward-filter checks (src/op/conv2d_filter_cuda.c); and what
 * wino_conv2d_backward_filter_info reports of such an operator. */
enum wino_status wino_backward_filter_create_cuda(const struct wino_conv2d_desc *desc,
                                                  const struct wino_conv_sizes *sizes,
                                                  const struct wino_context *ctx,
                                                  const struct wino_conv2d_options *options,
                                                  wino_conv2d **op);
void wino_backward_filter_cuda_info(const wino_conv2d *op, struct wino_winrs_info *info);

/* The vendor library's convolution of kind for desc (CUDA: cuDNN's fastest engine, timed at
 * create; src/op/conv2d_vendor.c) as an operator: algo WINO_ALGO_DIRECT (engines without
 * Winograd or FFT) or WINO_ALGO_VENDOR as o->algo says. weights: forward and backward-data. */
enum wino_status wino_vendor_create(enum wino_conv2d_kind kind,
                                    const struct wino_conv2d_desc *desc,
                                    const struct wino_conv_sizes *sizes, const void *weights,
                                    const struct wino_context *ctx,
                                    const struct wino_conv2d_options *o, wino_conv2d **op);

/* AUTO's choice on CUDA (src/op/conv2d_vendor.c) for a layer of kind that wino's kernels
 * serve: wino's own operators, one made by make for each of tiles (backward-filter: the one
 * tile 0, WinRS), and the vendor's are created one after another and timed on the same zeros,
 * and the fastest kept. The choice is remembered for the layer for the rest of the process and,
 * where ctx->tuning_cache names a file, kept there (src/op/tuning_cache.h); a choice found in
 * either is created without timing. */
#define WINO_CUDA_AUTO_TILES 8
struct wino_cuda_auto {
    enum wino_conv2d_kind kind;
    const struct wino_conv2d_desc *desc;
    const struct wino_conv_sizes *sizes;
    const void *weights; /* forward and backward-data: device memory; NULL for backward-filter */
    const struct wino_context *ctx;
    const struct wino_conv2d_options *o; /* AUTO, nothing fixed */
    int tiles[WINO_CUDA_AUTO_TILES], count;
    /* wino's own operator of the layer with tile_m (one of tiles). */
    enum wino_status (*make)(const struct wino_cuda_auto *a, int tile_m, wino_conv2d **op);
};
enum wino_status wino_cuda_auto_create(const struct wino_cuda_auto *a, wino_conv2d **op);

/* AUTO's candidates on CUDA: a 2D tile by its m, the ROWS variant's F(m, s) by
 * WINO_CUDA_ROWS_CANDIDATE + m (the two may share an m: F(4x4, 3x3) and ROWS F(4, 3)). */
#define WINO_CUDA_ROWS_CANDIDATE 100

/* The candidates that AUTO times for desc on CUDA into tiles (WINO_CUDA_AUTO_TILES room): the
 * 2D tiles m = 2 to 7 with generated transforms that wino's FP32 / FP16 kernels run for desc
 * (FP16: none larger than wino_gpu_default_tile_m), and with_rows (forward layers) the ROWS
 * variant's tile. Their count: 0 where wino's kernels do not serve desc (src/op/conv2d_cuda.c). */
int wino_cuda_auto_tiles(const struct wino_conv2d_desc *desc, int with_rows, int *tiles);

/* The ROWS variant's tile m (src/cuda/winograd_rows.h) when none is asked for: F(4, 3) in FP16
 * with 3-wide filters (the kernel of alpha 6, V in registers), else F(m, s) with alpha 8. */
int wino_cuda_rows_default_m(const struct wino_conv2d_desc *desc);

/* The ROWS tile m that AUTO times for desc: wino_cuda_rows_default_m on FP16 and BF16 NHWC
 * layers (where that is F(4, 3), the alpha 8 tile as well), else 0 for none. */
int wino_cuda_rows_tile_m(const struct wino_conv2d_desc *desc);

/* AUTO where wino's own kernels refuse the layer (why): the vendor's convolution, or the
 * refusal with the vendor's reason too. */
enum wino_status wino_vendor_instead(enum wino_conv2d_kind kind,
                                     const struct wino_conv2d_desc *desc,
                                     const struct wino_conv_sizes *sizes, const void *weights,
                                     const struct wino_context *ctx,
                                     const struct wino_conv2d_options *o, const char *why,
                                     wino_conv2d **op);

/* Whether the options leave every choice to wino (AUTO, no tile, variant or matrices): then
 * CUDA creates time wino's tiles and the vendor's convolution (wino_cuda_auto_create). */
int wino_options_leave_choice(const struct wino_conv2d_options *o);

#endif
