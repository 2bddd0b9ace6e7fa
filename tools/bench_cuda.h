/* `wino bench --backend cuda`: the command (tools/cmd_bench_cuda.c), its runners for wino
 * (tools/bench_wino_cuda.c) and cuDNN (tools/bench_cudnn.c), and the CUDA helpers they share.
 * No CUDA header is needed here: streams are void * (a cudaStream_t), so that every file of tools/
 * compiles with or without WINO_HAVE_CUDA. */
#ifndef WINO_TOOLS_BENCH_CUDA_H
#define WINO_TOOLS_BENCH_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "wino.h"

/* `wino bench --backend cuda` (tools/cmd_bench_cuda.c): its usage, and the bench of the layers
 * with the options that tools/cmd_bench.c parsed. Returns the exit status. */
void bench_cuda_usage(FILE *out);
int bench_cuda_run(const struct bench_args *a, const struct bench_layer *layers, int count);

/* One layer on the GPU, shared by every implementation. The runners use struct bench_runner
 * (bench.h) with two differences: run() only enqueues one execution on `stream`, and output()
 * waits for the stream and writes the op's output as float: y or dx as NHWC (y dequantized for
 * INT8), dw as KRSC. */
struct cuda_problem {
    struct wino_conv2d_desc desc; /* NHWC; dtype F32 or F16, or U8 for INT8 inference */
    int p, q;                     /* output height and width */
    int op;                       /* enum bench_op: fwd (x, w -> y), bwd-data (dy, w -> dx),
                                   * bwd-filter (x, dy -> dw); the backward ones F32 / F16 */
    int device;
    void *stream;                 /* cudaStream_t of wino and cuDNN alike */
    const float *x, *w, *dy;      /* host values, NHWC, KRSC and NPQK (dy: backward ops only,
                                   * else NULL): for F16 already rounded to half, for INT8
                                   * x >= 0 (post-ReLU) and w real */
    const void *d_x, *d_w, *d_dy; /* F32 / F16: device copies at the dtype (NULL for INT8) */
    float x_scale, y_scale;       /* INT8: real value of one uint8 input step, one int8 output step */
};

/* ---- helpers (tools/cmd_bench_cuda.c) ---- */

/* Failures are recorded as one line "CALL (FILE:LINE): WHY" that the bench prints with the layer
 * and implementation in front. Returns 1. */
int bench_cuda_record(const char *call, const char *file, int line, const char *why);
const char *bench_cuda_last_error(void);
/* err is a cudaError_t: returns 0 for cudaSuccess, else records the call and returns 1. */
int bench_cuda_runtime_failed(int err, const char *call, const char *file, int line);
#define BENCH_CUDA_FAILED(call) bench_cuda_runtime_failed((int)(call), #call, __FILE__, __LINE__)

/* IEEE binary16 bits from a float, rounded to nearest even (overflow to infinity), and back. */
uint16_t bench_f32_to_f16(float f);
float bench_f16_to_f32(uint16_t h);
uint16_t bench_f32_to_bf16(float f); /* round to nearest even */
float bench_bf16_to_f32(uint16_t h);
/* Bytes of one element of type t. */
size_t bench_dtype_size(enum wino_dtype t);

/* cudaMalloc of bytes (NULL for 0); poison != 0 fills it with 0xFF bytes (NaN for float and half)
 * so that an output left unwritten fails the check. Returns 0, or 1 with the error recorded. */
int bench_cuda_alloc(size_t bytes, int poison, void **dev);
/* Fills bytes of device memory with 0xFF bytes in stream order (poisons an output again). */
int bench_cuda_poison(void *stream, void *dev, size_t bytes);
/* Allocates device memory and copies bytes of host data into it. */
int bench_cuda_upload(const void *host, size_t bytes, void **dev);
/* The same for n floats stored as t: F16 (rounded to nearest even), else as they are (F32). */
int bench_cuda_upload_floats(const float *v, size_t n, enum wino_dtype t, void **dev);
/* Waits for stream, then copies bytes of device memory to the host. */
int bench_cuda_download(void *stream, const void *dev, size_t bytes, void *host);
/* Waits for stream, then converts n device elements of type t to float: F32 and F16 as they are,
 * S8 and U8 times scale. */
int bench_cuda_download_floats(void *stream, const void *dev, size_t n, enum wino_dtype t,
                               float scale, float *out);
/* cudaFree for teardown: a failure there repeats one already reported, so it is not checked. */
void bench_cuda_free(void *dev);

/* ---- runners ---- */

/* wino's FP32 / FP16 operator of pb->op (tools/bench_wino_cuda.c): forward and backward-data
 * Winograd F(tile_m x tile_m, r x s) with the variant asked, backward-filter with wino's own
 * choice (tile_m 0, variant AUTO). BENCH_SKIP (reason in info) when creation answers
 * WINO_UNSUPPORTED or the operator runs another tile or variant than asked. */
enum bench_prep bench_wino_cuda_prepare(const struct cuda_problem *pb, int tile_m,
                                        enum wino_variant variant, struct bench_runner *out);

/* The library's own choice for pb (algo WINO_ALGO_AUTO: wino's kernel or the vendor's engine,
 * timed at create; the tile column names what runs, "vendor" for cuDNN's) or the vendor path
 * alone (WINO_ALGO_VENDOR: cuDNN's graph-API engines); the reason in info. */
enum bench_prep bench_wino_cuda_prepare_choice(const struct cuda_problem *pb,
                                               enum wino_algo algo, struct bench_runner *out);

/* wino's INT8 Winograd F(tile_m, 3) with the variant asked: uint8 x, int8 y, clips calibrated
 * at the 99.9th percentile on the layer's own input. prepare checks the GPU output byte for byte
 * against the same call on the CPU backend (BENCH_FAIL when they differ). */
enum bench_prep bench_wino_cuda_int8_prepare(const struct cuda_problem *pb, int tile_m,
                                             enum wino_variant variant,
                                             struct bench_runner *out);

/* cuDNN's legacy cudnnConvolutionForward, cudnnConvolutionBackwardData or
 * cudnnConvolutionBackwardFilter (pb->op) with algorithm algo (0 .. bench_cudnn_algo_count(op)-1)
 * in NCHW (nchw = 1, its own transposed copies of the inputs) or NHWC (tools/bench_cudnn.c).
 * FP32 with FMA math (no TF32), FP16 with tensor-op math and FP32 accumulation, INT8 (NHWC only)
 * as int8 x and w (symmetric, one scale each) with int32 accumulation and int8 output, or float
 * output where cuDNN refuses int8 (info says which). BENCH_SKIP with the cuDNN status name in
 * info when the algorithm refuses the layer. */
int bench_cudnn_available(void); /* 0: built without cuDNN */
int bench_cudnn_algo_count(int op); /* the legacy algorithms of an enum bench_op */
/* Creates the cuDNN handle on stream; returns 0, or 1 with the reason in why (also when built
 * without cuDNN): the bench then goes on without it. */
int bench_cudnn_init(void *stream, char *why, size_t cap);
/* "9.19.0", or "" without cuDNN. */
const char *bench_cudnn_version(void);
void bench_cudnn_shutdown(void);
enum bench_prep bench_cudnn_prepare(const struct cuda_problem *pb, int algo, int nchw,
                                    struct bench_runner *out);

#endif
