/* Shared pieces of `wino bench`: layer sets, helpers of every backend, and the runner interface
 * through which every timed implementation (wino, oneDNN, OpenBLAS; on CUDA wino and cuDNN, see
 * tools/bench_cuda.h; on OpenCL wino) is driven the same way by tools/cmd_bench.c,
 * tools/cmd_bench_cuda.c and tools/bench_wino_opencl.c. */
#ifndef WINO_TOOLS_BENCH_H
#define WINO_TOOLS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "wino.h"

/* ---- layers (tools/bench_layers.c) ---- */

#define BENCH_NAME_MAX 64
#define BENCH_INLINE_MAX 16 /* --layer options per command */

struct bench_layer {
    char name[BENCH_NAME_MAX];
    int n, c, h, w, k, r, s, pad, stride;
};

/* The layers a command names: --set NAME|FILE (a set file has one layer a line,
 * `name N C H W K R S pad stride`; blank lines and text after '#' are ignored), --sets-dir DIR
 * and --layer "N C H W K R S pad stride" (repeatable, a name may come first). */
struct bench_layer_args {
    const char *set;      /* NULL: not given */
    const char *sets_dir; /* NULL: set names are looked up beside the binary */
    struct bench_layer inline_layers[BENCH_INLINE_MAX];
    int inline_count;
};

/* The rows of a verb's option table (tools/cli.h) for struct bench_layer_args *a, in modes. */
#define BENCH_LAYER_OPTIONS(a, in_modes)                                                         \
    {"--set", CLI_STRING, &(a)->set, in_modes, 0, 0, NULL, NULL},                                \
        {"--sets-dir", CLI_STRING, &(a)->sets_dir, in_modes, 0, 0, NULL, NULL},                   \
        {"--layer", CLI_CALL, (a), in_modes, 0, 0, NULL, bench_layer_option}

/* Their lines in a verb's usage. */
#define BENCH_LAYER_USAGE                                                                         \
    "  --set NAME|FILE  a layer set: NAME.txt of the sets installed with wino (bench/sets),\n"   \
    "                   or a file (a path with '/' or ending in .txt); lines\n"                   \
    "                   `name N C H W K R S pad stride`\n"                                         \
    "  --layer L        one more layer \"N C H W K R S pad stride\" (a name may come first);\n"    \
    "                   repeatable\n"                                                             \
    "  --sets-dir DIR   look set names up in DIR instead\n"

/* The CLI_CALL handler of --layer: parses value into the next inline layer of the
 * struct bench_layer_args at dest. */
int bench_layer_option(void *dest, const char *value, char *why, size_t cap);

/* The layers of a: the set's (default_set when neither --set nor --layer was given; NULL: one
 * of them is required), then the inline ones, as a malloc'ed array (free() it). name receives
 * the set's name for reports ("inline" for --layer alone). On a missing file, a malformed line
 * or a layer the library refuses, prints one line "wino VERB: ..." and returns 2 (bad usage). */
int bench_load_layers(const char *verb, const struct bench_layer_args *a, const char *default_set,
                      struct bench_layer **layers, int *count, char *name, size_t name_cap);

/* The descriptor of a layer: NCHW, FP32, symmetric padding, square stride, no dilation. */
struct wino_conv2d_desc bench_layer_desc(const struct bench_layer *layer);

/* ---- options of `wino bench`, every backend (parsed by tools/cmd_bench.c) ---- */

/* the index of --backend cpu|cuda|opencl: its mode */
enum bench_backend { BENCH_CPU, BENCH_CUDA, BENCH_OPENCL };
/* the index of --dtype f32|f16|int8|bf16 */
enum bench_dtype { BENCH_F32, BENCH_F16, BENCH_INT8, BENCH_BF16 };
/* The convolution timed, the index of --op: forward (y from x, w), backward-data (dx from dy,
 * w) or backward-filter (dw from x, dy). */
enum bench_op { BENCH_FWD, BENCH_BWD_DATA, BENCH_BWD_FILTER };
#define BENCH_OP_CHOICES "fwd|bwd-data|bwd-filter"

struct bench_args {
    struct bench_layer_args layers;
    int backend, dtype, op;
    const char *tuning_cache;          /* CPU: for wino-auto; OpenCL: for wino-opencl-tuned
                                          (written by --tune); or NULL */
    long batch, threads, reps, warmup; /* batch 0: as in the set; threads 0, reps and warmup -1:
                                          the backend's default */
    long device;                       /* CUDA */
    long cl_device;                    /* OpenCL: -1 for bench_opencl_open's default */
    int tune;                          /* OpenCL: search each layer first (wino_opencl_tune) */
    long budget, candidates;           /* OpenCL --tune: seconds and candidates per layer */
    int csv;
    unsigned impls;                    /* CPU: bit i = implementation i selected */
    char set[BENCH_NAME_MAX];          /* the set's name, for reports */
};

/* ---- helpers of every backend (tools/bench_common.c) ---- */

/* The CSV header of DESIGN.md, and the columns every backend prints after it; the CUDA and
 * OpenCL benches append their own after those. */
#define BENCH_CSV_HEADER                                                                          \
    "set,layer,N,C,H,W,K,R,S,pad,dtype,backend,impl,tile,ms,eff_gflops,workspace_bytes,device"
#define BENCH_CSV_COLUMNS BENCH_CSV_HEADER ",stride,rel_l1,prepare_ms,variant,threads,choice"

/* The name of an op as --op and the CSV's op column spell it ("fwd", "bwd-data", ...). */
const char *bench_op_name(int op);

/* One row of BENCH_CSV_COLUMNS. */
struct bench_csv_row {
    const char *set;
    const struct bench_layer *layer; /* with the batch size that ran */
    const char *dtype, *backend, *impl, *tile;
    double ms, gflop;                /* gflop: direct-convolution GFLOP of the layer */
    size_t workspace_bytes;
    const char *device;
    double rel_l1;                   /* error against the FP64 reference */
    double prepare_ms;               /* creation and filter preparation, untimed in ms */
    const char *variant;             /* wino's Winograd variant, or "" */
    long threads;                    /* 0: not applicable (an empty field) */
    const char *choice;              /* wino-auto: what it chose and why; others "" */
};

/* Prints the row to stdout without a newline (the CUDA bench appends its columns). */
void bench_csv_row(const struct bench_csv_row *row);

/* Milliseconds of CLOCK_MONOTONIC. */
double bench_now_ms(void);

/* Largest relative L1 error of a dequantized INT8 output against the FP64 reference that still
 * counts as right: 8-bit steps alone give a few percent, Winograd's enlarged ranges more; an
 * all-zero output is 1. (wino's INT8 rows are also checked byte for byte.) */
#define BENCH_BOUND_INT8 0.9

/* n values uniform in (-1, 1), a pure function of seed (splitmix64). */
void bench_fill_uniform(float *v, size_t n, uint64_t seed);

/* INT8 inputs: x through a ReLU in place; returns the uint8 step max x / 255 (1 when all zero). */
float bench_relu_u8_scale(float *x, size_t n);

/* INT8 outputs: the int8 step max |y| / 127 of a reference output (1 when all zero). */
float bench_s8_scale(const double *y, size_t n);

/* wino's INT8 parameters for a layer (desc: NHWC, dtype ignored) at the 99.9th percentile,
 * calibrated on a window of at most BENCH_CALIBRATION_SIDE^2 pixels of the first image of x
 * (NHWC floats): percentiles need a sample, and calibration computes an FP64 reference of it.
 * w: K x R x S x C floats. */
#define BENCH_CALIBRATION_SIDE 16
enum wino_status bench_int8_calibrate(const struct wino_conv2d_desc *desc, int tile_m,
                                      const float *x, const float *w, float x_scale,
                                      struct wino_int8_params *q);

/* The median of v[0..n-1], n >= 1 (sorts v). */
double bench_median(double *v, long n);

/* ---- runners ---- */

/* What prepare functions return. */
enum bench_prep {
    BENCH_READY = 0,   /* the runner is filled in and must be destroyed */
    BENCH_SKIP = 1,    /* this implementation cannot do this layer: a note, no row */
    BENCH_FAIL = 2     /* an unexpected library error: an error line, exit status 1 */
};

/* One prepared implementation of one layer. run() is the only timed call. */
struct bench_runner {
    void *state;
    int (*run)(void *state);                   /* one execution to completion; 0 = success */
    int (*output)(void *state, float *y);      /* the last output into y (the op's: y or dx as
                                                  NCHW, dw as KCRS); 0 = success */
    void (*destroy)(void *state);
    size_t workspace_bytes;                    /* scratch memory the run needs besides x, w, y */
    char tile[24];                             /* "F4x4_3x3" or "" */
    char variant[16];                          /* wino's "fused", "non-fused", ... or "" */
    char info[160];                            /* table text (e.g. oneDNN's impl name); on
                                                  BENCH_SKIP / BENCH_FAIL: the reason */
};

/* Inputs shared by every implementation of one layer. x, w and dy are NCHW / KCRS / NKPQ,
 * FP32; op says which two of them are the inputs. */
struct bench_problem {
    struct wino_conv2d_desc desc;
    int p, q;                                   /* output height and width */
    int op;                                     /* enum bench_op */
    const float *x, *w, *dy;
    int threads;
    const char *tuning_cache; /* for wino's automatic choice, or NULL */
    /* INT8 inference (--dtype int8): x (>= 0) runs as uint8 with scale x_scale, y as int8 with
     * scale y_scale; each implementation quantizes the weights its own way. output() gives the
     * dequantized y. */
    int int8;
    float x_scale, y_scale;
};

/* Writes "F{m}x{m}_{r}x{s}" into buf. */
void bench_tile_name(char *buf, size_t cap, int m, int r, int s);

/* Times r as every bench but CUDA's does: warmup untimed runs (and, when warmup > 0, at least
 * 10 ms of them), then reps runs, each between two CLOCK_MONOTONIC readings (run() returns once
 * its execution is complete); *ms is their median, times holds reps doubles of scratch. Returns
 * 0, or 1 when a run failed. */
int bench_time_runs(const struct bench_runner *r, long warmup, long reps, double *times,
                    double *ms);

/* Prepare functions fill *out; the caller prints out->info when they return SKIP or FAIL. */

/* out's tile, variant and info from what wino's operator op (forward or backward-data) runs,
 * for an r x s filter (tools/bench_wino.c). */
void bench_wino_describe(const wino_conv2d *op, int r, int s, struct bench_runner *out);

/* wino through its public API (tools/bench_wino.c). algo is WINO_ALGO_*; tile_m as in
 * struct wino_conv2d_options. */
enum bench_prep bench_wino_prepare(const struct bench_problem *pb, enum wino_algo algo, int tile_m,
                                   struct bench_runner *out);

/* wino's backward-data or backward-filter operator (pb->op) through its public API
 * (tools/bench_wino_backward.c); algo and tile_m as in struct wino_conv2d_options (tile_m:
 * backward-data's forward tile; backward-filter takes 0, WinRS choosing its kernels). */
enum bench_prep bench_wino_backward_prepare(const struct bench_problem *pb, enum wino_algo algo,
                                            int tile_m, struct bench_runner *out);

/* wino's INT8 operator of algo (tools/bench_wino_int8.c): WINO_ALGO_WINOGRAD F(tile_m, 3),
 * WINO_ALGO_DIRECT its INT8 direct convolution, WINO_ALGO_AUTO what the library chooses with
 * pb->tuning_cache (tile_m ignored), calibrated for what wino_int8_auto_choice answers.
 * Winograd's alpha_ta and alpha_tw are calibrated at the 99.9th percentile on the layer's own
 * input, direct's weights clipped at their largest magnitude; prepare checks the result against
 * the integer specification byte for byte. */
enum bench_prep bench_wino_int8_prepare(const struct bench_problem *pb, enum wino_algo algo,
                                        int tile_m, struct bench_runner *out);

/* oneDNN (tools/bench_onednn.c): the primitive of pb->op (convolution forward_inference,
 * backward_data or backward_weights); winograd selects convolution_winograd over
 * convolution_direct. With pb->int8 (forward): u8 x s8 -> s8, weights with one scale per output
 * channel.
 * bench_onednn_available() is 0 when the CLI was built without oneDNN. */
int bench_onednn_available(void);
void bench_onednn_set_threads(int threads);
enum bench_prep bench_onednn_prepare(const struct bench_problem *pb, int winograd,
                                     struct bench_runner *out);

/* im2col + cblas_sgemm from OpenBLAS (tools/bench_openblas.c). */
int bench_openblas_available(void);
void bench_openblas_set_threads(int threads);
enum bench_prep bench_openblas_prepare(const struct bench_problem *pb, struct bench_runner *out);

/* ---- OpenCL (tools/bench_wino_opencl.c) ---- */

/* `wino bench --backend opencl`: its usage, and the bench of the layers with the options that
 * tools/cmd_bench.c parsed. Returns the exit status. */
void bench_opencl_usage(FILE *out);
int bench_opencl_run(const struct bench_args *a, const struct bench_layer *layers, int count);

/* The environment variable that names the OpenCL device when --cl-device does not. */
#define BENCH_CL_DEVICE_ENV "WINO_CL_DEVICE"
/* Defaults of an OpenCL search per layer (--budget, seconds, and --candidates; 0: no bound). */
#define BENCH_CL_BUDGET 20
#define BENCH_CL_CANDIDATES 0

/* An OpenCL device with a context and an in-order queue (cl_device_id, cl_context and
 * cl_command_queue as void *, so that callers need no OpenCL header). */
struct bench_opencl {
    void *device, *context, *queue;
    char name[256], platform[128], driver[128];
};

/* Opens the device of index (counted over every platform's devices in order; -1: the one
 * $WINO_CL_DEVICE names, else the first GPU, else the first device). Returns 0, 1 (an OpenCL
 * error) or 2 (no such device, or a build without OpenCL: bad usage), after one line
 * "wino VERB: ..." on stderr. */
int bench_opencl_open(const char *verb, long index, struct bench_opencl *cl);
void bench_opencl_close(struct bench_opencl *cl);

/* A search's bounds per layer as text: "20 s and no candidate bound". */
void bench_opencl_bounds_text(long budget, long candidates, char *buf, size_t cap);

/* What of p one variant runs, as text: "gemm 32x32/4x4 bk8 local" or "fused 16x16 kpt4 fc8". */
struct wino_opencl_params;
void bench_opencl_params_text(const struct wino_opencl_params *p, int fused, char *buf,
                              size_t cap);

/* ---- the check against the FP64 reference (tools/bench_check.c) ---- */

/* What of an op's output is compared with the FP64 reference. The output is seen as
 * d0 x d1 x inner floats (y: N x K x PQ, dx: N x C x HW, dw: K x C x RS); the blocks
 * (keep0[a], keep1[b]) are checked. The forward check is the whole output; a backward one,
 * where the whole FP64 reference would cost more than BENCH_REFERENCE_MACS, keeps fewer images
 * and channels (first, last and evenly spread between): each kept block is an independent
 * slice of the convolution, computed by the reference on sliced inputs. */
#define BENCH_REFERENCE_MACS 2.5e8
struct bench_check {
    int d0, d1, n0, n1; /* n0 of d0 and n1 of d1 kept */
    int *keep0, *keep1; /* ascending */
    size_t inner;
    double *ref;        /* n0 x n1 x inner */
    size_t elems;       /* n0 n1 inner */
};

/* The check of pb's op and its reference (x, w, dy as pb has them). Returns 0, or -1 when out
 * of memory. */
int bench_check_prepare(const struct bench_problem *pb, struct bench_check *c);
void bench_check_release(struct bench_check *c);

/* The relative L1 error of an op's whole output against the reference of the kept part;
 * out is overwritten (the kept blocks gathered to its front). */
double bench_check_error(const struct bench_check *c, float *out);

/* Elements of the whole output of pb's op. */
size_t bench_output_elems(const struct bench_problem *pb);

#endif
