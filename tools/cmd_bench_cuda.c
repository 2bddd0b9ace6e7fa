/* `wino bench --backend cuda`: times wino's CUDA operators against every legacy cuDNN algorithm
 * of the op (forward, or with --op backward-data / backward-filter; NHWC and NCHW) on a named
 * layer set in one process, after checking each one's output against the FP64 reference; CUDA
 * events around single runs, median; per row the floor max(bytes / bandwidth, FLOPs / peak) and
 * how close the row comes to it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_cuda.h"

#ifndef WINO_HAVE_CUDA

#define NO_CUDA "--backend cuda: this build has no CUDA"

void bench_cuda_usage(FILE *out)
{
    fprintf(out, "wino bench " NO_CUDA "\n");
}

int bench_cuda_run(const struct bench_args *a, const struct bench_layer *layers, int count)
{
    (void)a;
    (void)layers;
    (void)count;
    return cli_usage_error("bench", NO_CUDA);
}

#else

#include <cuda_runtime.h>

#include "cli.h"
#include "cpu/layout_f32.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"

/* Largest relative L1 error against the FP64 reference that counts as right. FP32: cuDNN's sums
 * stay near 1e-6 but its FFT algorithms reach 6e-4; wino's Winograd error grows with the tile
 * (F(8,3) is the worst, about 1e-5). FP16: half
 * inputs and outputs. INT8 cuDNN: 7-bit inputs and 8-bit weights and outputs give a few percent;
 * more would mean a setup bug (an all-zero output is 1). */
#define BOUND_WINO_F32 1e-3
#define BOUND_CUDNN_F32 1e-3
#define BOUND_F16 2e-2
/* BF16 keeps 8 significant bits to FP16's 11: eight times the rounding of its inputs. */
#define BOUND_BF16 1.6e-1
#define BOUND_CUDNN_INT8 0.2

/* Dense peak arithmetic per SM per clock on Hopper (sm_90), the floors' compute side: FP32 on the
 * CUDA cores 128 FMA = 256 flop; FP16 tensor cores 4096 flop (H100 SXM: 132 SMs x 1.83 GHz x 4096
 * = 989 TFLOP/s); INT8 tensor cores 8192 op. Other GPUs get the same rates: rough floors. */
#define PEAK_F32_PER_SM_CLK 256.0
#define PEAK_F16_PER_SM_CLK 4096.0
#define PEAK_INT8_PER_SM_CLK 8192.0

#define BANDWIDTH_BYTES (512u << 20) /* per device-to-device copy that measures the bandwidth */
#define MAX_TILE_M 8                 /* the largest generated Winograd tile */
#define MAX_ROWS 48
static const int int8_tiles[] = {2, 4, 6};

struct cuda_args {
    const char *set;
    long batch, reps, warmup, device; /* batch 0 = as in the set file */
    int csv;
    enum wino_dtype dtype; /* F32, F16, BF16, or U8 for --dtype int8 */
    int op;                /* enum bench_op */
};

/* The GPU and what every layer shares. */
struct gpu {
    cudaStream_t stream;
    char name[256];
    int sms, clock_khz, major, minor;
    double bandwidth; /* bytes per ms, read + write */
    double peak;      /* flop (INT8: op) per ms at the bench's dtype */
    double peak_per_sm_clk;
    char no_cudnn[160]; /* why cuDNN is not timed, or "" */
};

/* One layer's data on the host and the device. Only the first and the last image are checked
 * against the reference, and in large layers only some output channels (first, last and evenly
 * spread between): each is an independent convolution, and the FP64 reference of a whole large
 * layer would take minutes on the host. The backward ops are checked as the CPU bench checks
 * them (tools/bench_check.c, on NCHW copies): slices of images and channels. */
struct layer_run {
    struct bench_layer layer;
    struct cuda_problem pb;
    float *x, *w, *y;  /* host: NHWC, KRSC, and a whole output (dx NHWC, dw KRSC) */
    float *dy, *out;   /* backward: dy NPQK; the output in NCHW / KCRS order for the check */
    void *d_dy;
    struct bench_check check; /* backward */
    double *ref;       /* checked images' FP64 reference, NHWC with only the checked channels */
    int *kept;         /* the checked output channels, ascending */
    int kc;            /* their count */
    void *d_x, *d_w;   /* F32 / F16 device copies */
    size_t x_n, w_n, y_n, img; /* img: output elements of one image */
    int checked;       /* 1 or 2 images */
    double gflop;      /* direct-convolution FLOPs / 1e9 */
};

/* One (layer, implementation) result. */
struct row {
    char impl[24], tile[24], info[160], choice[200];
    const char *layout, *variant; /* "NHWC" / "NCHW"; wino's "fused" / "non-fused", or "" */
    enum { ROW_OK, ROW_SKIPPED, ROW_WRONG, ROW_ERROR } status;
    int wino; /* 1: one of wino's rows, 0: cuDNN's */
    int library; /* the library's choice (wino-auto) or its vendor path (cudnn-graph): outside
                 * best-measured and the vs-cuDNN column */
    int m;    /* wino's Winograd tile m (0 for cuDNN and backward-filter) */
    double ms, err, bound, floor_ms, prepare_ms;
    size_t workspace;
};

/* ---- helpers shared with the runners (bench_cuda.h) ---- */

static char last_error[320];

int bench_cuda_record(const char *call, const char *file, int line, const char *why)
{
    const char *base = strrchr(file, '/');
    snprintf(last_error, sizeof last_error, "%.*s at %s:%d: %s", (int)strcspn(call, "("), call,
             base ? base + 1 : file, line, why);
    return 1;
}

const char *bench_cuda_last_error(void) { return last_error; }

int bench_cuda_runtime_failed(int err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return 0;
    char why[200];
    snprintf(why, sizeof why, "%s (%s)", cudaGetErrorString((cudaError_t)err),
             cudaGetErrorName((cudaError_t)err));
    return bench_cuda_record(call, file, line, why);
}

uint16_t bench_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN (quiet) */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even; a carry may raise the exponent */
    return (uint16_t)(u >> 16);
}

float bench_bf16_to_f32(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t bench_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN stays NaN (quiet) */
        return sign | 0x7e00u;
    if (a >= 0x477ff000u) /* >= 65520 = 65504 + half a step: rounds to infinity */
        return sign | 0x7c00u;
    if (a < 0x33000000u) /* < 2^-25: rounds to zero (2^-25 itself ties to even zero) */
        return sign;
    uint32_t bits, rem, halfway;
    if (a < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        const uint32_t shift = 126u - (a >> 23), mant = (a & 0x7fffffu) | 0x800000u;
        bits = mant >> shift;
        rem = mant & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1u);
    } else { /* rebias the exponent (127 -> 15), drop 13 mantissa bits */
        const uint32_t v = a - (112u << 23);
        bits = v >> 13;
        rem = v & 0x1fffu;
        halfway = 0x1000u;
    }
    bits += rem > halfway || (rem == halfway && (bits & 1u)); /* a carry may raise the exponent */
    return (uint16_t)(sign | bits);
}

float bench_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t u;
    if (e == 0) { /* zero or subnormal: exact as a float */
        const float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    u = e == 0x1f ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

size_t bench_dtype_size(enum wino_dtype t)
{
    return t == WINO_DTYPE_F32 ? 4 : t == WINO_DTYPE_F16 || t == WINO_DTYPE_BF16 ? 2 : 1;
}

int bench_cuda_alloc(size_t bytes, int poison, void **dev)
{
    *dev = NULL;
    if (!bytes)
        return 0;
    if (BENCH_CUDA_FAILED(cudaMalloc(dev, bytes))) {
        *dev = NULL;
        return 1;
    }
    /* the bench's stream is a blocking one: this orders with its work */
    if (poison && BENCH_CUDA_FAILED(cudaMemset(*dev, 0xFF, bytes))) {
        bench_cuda_free(*dev);
        *dev = NULL;
        return 1;
    }
    return 0;
}

int bench_cuda_poison(void *stream, void *dev, size_t bytes)
{
    return BENCH_CUDA_FAILED(cudaMemsetAsync(dev, 0xFF, bytes, (cudaStream_t)stream));
}

int bench_cuda_upload(const void *host, size_t bytes, void **dev)
{
    if (bench_cuda_alloc(bytes, 0, dev))
        return 1;
    if (bytes && BENCH_CUDA_FAILED(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice))) {
        bench_cuda_free(*dev);
        *dev = NULL;
        return 1;
    }
    return 0;
}

int bench_cuda_upload_floats(const float *v, size_t n, enum wino_dtype t, void **dev)
{
    if (t != WINO_DTYPE_F16 && t != WINO_DTYPE_BF16)
        return bench_cuda_upload(v, n * sizeof *v, dev);
    uint16_t *h = malloc(n * sizeof *h);
    if (!h)
        return bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    for (size_t i = 0; i < n; i++)
        h[i] = t == WINO_DTYPE_F16 ? bench_f32_to_f16(v[i]) : bench_f32_to_bf16(v[i]);
    const int rc = bench_cuda_upload(h, n * sizeof *h, dev);
    free(h);
    return rc;
}

int bench_cuda_download(void *stream, const void *dev, size_t bytes, void *host)
{
    return BENCH_CUDA_FAILED(cudaStreamSynchronize((cudaStream_t)stream)) ||
           BENCH_CUDA_FAILED(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

int bench_cuda_download_floats(void *stream, const void *dev, size_t n, enum wino_dtype t,
                               float scale, float *out)
{
    if (t == WINO_DTYPE_F32)
        return bench_cuda_download(stream, dev, n * sizeof *out, out);
    unsigned char *raw = malloc(n * bench_dtype_size(t));
    if (!raw)
        return bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    const int rc = bench_cuda_download(stream, dev, n * bench_dtype_size(t), raw);
    for (size_t i = 0; !rc && i < n; i++)
        out[i] = t == WINO_DTYPE_F16    ? bench_f16_to_f32(((const uint16_t *)(void *)raw)[i])
                 : t == WINO_DTYPE_BF16 ? bench_bf16_to_f32(((const uint16_t *)(void *)raw)[i])
                 : t == WINO_DTYPE_S8   ? scale * (float)((const signed char *)raw)[i]
                                        : scale * (float)raw[i];
    free(raw);
    return rc;
}

void bench_cuda_free(void *dev)
{
    if (dev)
        (void)cudaFree(dev);
}

/* ---- options ---- */

static const char *dtype_name(enum wino_dtype t)
{
    return t == WINO_DTYPE_F32    ? "f32"
           : t == WINO_DTYPE_F16  ? "f16"
           : t == WINO_DTYPE_BF16 ? "bf16"
                                  : "int8";
}

void bench_cuda_usage(FILE *out)
{
    fprintf(out,
            "usage: wino bench --backend cuda --set NAME|FILE [--layer L ...]\n"
            "                  [--op fwd|bwd-data|bwd-filter] [--dtype f32|f16|int8|bf16]\n"
            "                  [--batch N] [--reps R] [--warmup W] [--device D] [--sets-dir DIR]\n"
            "                  [--csv]\n"
            "\n"
            "Times NHWC forward convolution of every layer of a set on one GPU (inputs and weights\n"
            "uniform in (-1, 1)) with wino's CUDA Winograd, one row per tile m in 2..%d and\n"
            "variant it accepts (wino-winograd: non-fused, wino-fused, wino-fused-out: the GEMMs\n"
            "fused with the output transform, wino-rows: the one-dimensional ROWS kernel of\n"
            "f16 and bf16 on Hopper), and with every legacy\n"
            "cuDNN forward algorithm it accepts (cudnn-algoN, N the cuDNN enum value) in NHWC and,\n"
            "for f32 and f16, NCHW. Each is first checked once against wino's FP64 reference on\n"
            "the first and last image of the batch, on the output channels that a 1 GFLOP budget\n"
            "allows per image (relative L1 error at most %g for wino and %g\n"
            "for cuDNN in f32, %g in f16); a wrong result is refused (stderr, exit 1). Time =\n"
            "median of R runs after W warm-ups, each between two CUDA events on one stream;\n"
            "filter transforms, cuDNN descriptors and workspace allocation are excluded.\n"
            "f32 runs without TF32 (cuDNN with FMA math); f16 accumulates in FP32 (cuDNN with\n"
            "tensor-op math). int8: inputs pass a ReLU; wino runs uint8 x, int8 y on its INT8\n"
            "tiles F(2,3), F(4,3), F(6,3), each checked byte for byte against the same call on\n"
            "the CPU backend; cuDNN runs int8 x and w (symmetric, one scale each) with int32\n"
            "sums (C and K multiples of 4).\n"
            "GFLOP/s count direct-convolution FLOPs 2*N*K*C*R*S*P*Q; `vs cuDNN` is cuDNN's best\n"
            "time at this dtype over this time (> 1: faster than cuDNN); floor_ms is\n"
            "max(bytes of x, w, y / measured copy bandwidth, FLOPs / peak) with the Winograd\n"
            "GEMM FLOPs 2*alpha^2*tiles*C*K for wino rows, of_floor = floor_ms / ms.\n"
            "best-measured is the fastest row of the layer, wino or cuDNN, and names it: a\n"
            "per-layer choice made by the bench, never a wino row.\n"
            "--op bwd-data (dx from dy and w) and bwd-filter (dw from x and dy), f32 or f16, time\n"
            "wino's backward operators (backward-data: the Winograd tiles and variants as above;\n"
            "backward-filter: wino's choice of WinRS kernels, fused (wino-winrs) and\n"
            "non-fused (wino-winrs-nonfused)) beside every legacy\n"
            "cudnnConvolutionBackwardData / cudnnConvolutionBackwardFilter algorithm, each\n"
            "checked on slices of images and channels of the FP64 reference (the CPU bench's\n"
            "check), dy uniform in (-1, 1) too.\n"
            "\n"
            "  --backend cuda   this GPU bench (cpu: wino bench --backend cpu --help)\n"
            BENCH_LAYER_USAGE
            "  --op OP          fwd (default), bwd-data or bwd-filter\n"
            "  --dtype T        f32 (default), f16, int8 (fwd only) or bf16 (bwd-filter only)\n"
            "  --batch N        override every layer's batch size\n"
            "  --reps R         timed runs per implementation (default 30)\n"
            "  --warmup W       untimed runs before them (default 5)\n"
            "  --device D       the CUDA device ordinal (default 0)\n"
            "  --csv            machine-readable rows, the CPU bench's columns (threads empty) then\n"
            "                   layout,floor_ms,of_floor,op\n"
            "  -h, --help       this text\n"
            "Options may also be written --name=value.\n"
            "%s",
            MAX_TILE_M, BOUND_WINO_F32, BOUND_CUDNN_F32, BOUND_F16,
            bench_cudnn_available() ? "" : "\nThis build has no cuDNN: wino is timed alone.\n");
}

/* ---- timing ---- */

/* The stream's gate (gate_wait): closed until the host has enqueued every timed run, or for at
 * most GATE_LIMIT_MS (a run that waits for the GPU itself must not wait for the gate). */
#define GATE_LIMIT_MS 2000.0

/* A host function on the stream: the work behind it waits until *open. */
static void CUDART_CB gate_wait(void *open)
{
    const double until = bench_now_ms() + GATE_LIMIT_MS;
    while (!__atomic_load_n((int *)open, __ATOMIC_ACQUIRE) && bench_now_ms() < until)
        ;
}

/* The median time in ms of reps runs of r, each between two events on stream, after warmup
 * untimed runs. Consecutive runs share an event, and the runs wait at a gate until the host has
 * enqueued them all, so that the GPU runs them back to back and the events time the GPU alone,
 * whatever the host spends on a run. Returns 0, or 1 with the error recorded. */
static int time_runs(const struct bench_runner *r, cudaStream_t stream, long warmup, long reps,
                     double *ms)
{
    cudaEvent_t *ev = calloc((size_t)reps + 1, sizeof *ev);
    double *t = malloc((size_t)reps * sizeof *t);
    long made = 0;
    int rc = 1, open = 0;
    if (!ev || !t) {
        bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
        goto done;
    }
    for (; made <= reps; made++)
        if (BENCH_CUDA_FAILED(cudaEventCreate(&ev[made])))
            goto done;
    for (long i = 0; i < warmup; i++)
        if (r->run(r->state))
            goto done;
    if (BENCH_CUDA_FAILED(cudaLaunchHostFunc(stream, gate_wait, &open)) ||
        BENCH_CUDA_FAILED(cudaEventRecord(ev[0], stream)))
        goto opened;
    for (long i = 0; i < reps; i++)
        if (r->run(r->state) || BENCH_CUDA_FAILED(cudaEventRecord(ev[i + 1], stream)))
            goto opened;
    __atomic_store_n(&open, 1, __ATOMIC_RELEASE);
    if (BENCH_CUDA_FAILED(cudaEventSynchronize(ev[reps])))
        goto done;
    for (long i = 0; i < reps; i++) {
        float e;
        if (BENCH_CUDA_FAILED(cudaEventElapsedTime(&e, ev[i], ev[i + 1])))
            goto done;
        t[i] = e;
    }
    *ms = bench_median(t, reps);
    rc = 0;
    goto done;
opened: /* a failure after the gate: open it, and let the stream drain before open goes */
    __atomic_store_n(&open, 1, __ATOMIC_RELEASE);
    (void)cudaStreamSynchronize(stream); /* teardown */
done:
    for (long i = 0; i < made; i++)
        (void)cudaEventDestroy(ev[i]); /* teardown */
    free(ev);
    free(t);
    return rc;
}

/* A device-to-device copy as a runner, to time the memory bandwidth like everything else. */
struct copy_state {
    void *src, *dst;
    cudaStream_t stream;
};

static int copy_run(void *p)
{
    const struct copy_state *c = p;
    return BENCH_CUDA_FAILED(
        cudaMemcpyAsync(c->dst, c->src, BANDWIDTH_BYTES, cudaMemcpyDeviceToDevice, c->stream));
}

/* g->bandwidth in bytes per ms: each copy reads and writes BANDWIDTH_BYTES; median of 10. */
static int measure_bandwidth(struct gpu *g)
{
    struct copy_state c = {NULL, NULL, g->stream};
    const struct bench_runner r = {&c, copy_run, NULL, NULL, 0, "", "", ""};
    double ms = 0.0;
    const int rc = bench_cuda_alloc(BANDWIDTH_BYTES, 1, &c.src) ||
                   bench_cuda_alloc(BANDWIDTH_BYTES, 0, &c.dst) ||
                   time_runs(&r, g->stream, 1, 10, &ms);
    bench_cuda_free(c.src);
    bench_cuda_free(c.dst);
    if (!rc)
        g->bandwidth = 2.0 * BANDWIDTH_BYTES / ms;
    return rc;
}

/* ---- the GPU ---- */

/* Selects the device, reads what the floors need, creates the stream and cuDNN's handle.
 * Returns 0, 1 (a CUDA error, printed) or 2 (no such device: bad usage, printed). */
static int open_gpu(const struct cuda_args *a, struct gpu *g)
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    memset(g, 0, sizeof *g);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
        fprintf(stderr, "wino bench: --backend cuda: no usable CUDA device (%s)\n",
                cudaGetErrorString(e));
        return 2;
    }
    if (bench_cuda_runtime_failed((int)e, "cudaGetDeviceCount", __FILE__, __LINE__)) {
        fprintf(stderr, "wino bench: %s\n", last_error);
        return 1;
    }
    if (a->device >= count) {
        fprintf(stderr, "wino bench: --device %ld: this machine has %d CUDA device%s\n",
                a->device, count, count == 1 ? "" : "s");
        return 2;
    }
    const int d = (int)a->device;
    struct cudaDeviceProp prop;
    if (BENCH_CUDA_FAILED(cudaSetDevice(d)) ||
        BENCH_CUDA_FAILED(cudaGetDeviceProperties(&prop, d)) ||
        BENCH_CUDA_FAILED(cudaDeviceGetAttribute(&g->clock_khz, cudaDevAttrClockRate, d)) ||
        BENCH_CUDA_FAILED(cudaStreamCreate(&g->stream)) || measure_bandwidth(g)) {
        fprintf(stderr, "wino bench: %s\n", last_error);
        return 1;
    }
    snprintf(g->name, sizeof g->name, "%s", prop.name);
    g->sms = prop.multiProcessorCount;
    g->major = prop.major;
    g->minor = prop.minor;
    g->peak_per_sm_clk = a->dtype == WINO_DTYPE_F32 ? PEAK_F32_PER_SM_CLK
                         : a->dtype == WINO_DTYPE_U8 ? PEAK_INT8_PER_SM_CLK
                                                     : PEAK_F16_PER_SM_CLK; /* BF16's too */
    g->peak = g->peak_per_sm_clk * g->sms * g->clock_khz; /* per ms: kHz = clocks per ms */
    /* without cuDNN (not built, or its handle refused) the reason goes in g->no_cudnn and wino
     * is timed alone */
    bench_cudnn_init(g->stream, g->no_cudnn, sizeof g->no_cudnn);
    return 0;
}

static void close_gpu(struct gpu *g)
{
    bench_cudnn_shutdown();
    if (g->stream)
        (void)cudaStreamDestroy(g->stream); /* teardown */
}

/* After each implementation: 0 while the GPU is usable. A non-sticky error (a refused launch, a
 * failed allocation) is cleared; a sticky one (a faulting kernel) would fail every later call,
 * so the bench stops (error recorded). */
static int gpu_broken(void)
{
    (void)cudaGetLastError();
    return BENCH_CUDA_FAILED(cudaDeviceSynchronize());
}

/* ---- one layer ---- */

/* v rounded to what a tensor of type t holds (FP16, BF16; others unchanged). */
static void round_to(enum wino_dtype t, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = t == WINO_DTYPE_F16    ? bench_f16_to_f32(bench_f32_to_f16(v[i]))
               : t == WINO_DTYPE_BF16 ? bench_bf16_to_f32(bench_f32_to_bf16(v[i]))
                                      : v[i];
}

/* FP64 reference work per checked image above which only some output channels are checked. */
#define REFERENCE_FLOP_BUDGET 1e9

/* Chooses the checked channels: all, or as many as the budget allows (at least 3) spread over K. */
static int choose_channels(struct layer_run *lr)
{
    const struct wino_conv2d_desc *d = &lr->pb.desc;
    const double per_channel = 2.0 * lr->pb.p * lr->pb.q * d->c * d->r * d->s;
    int kc = (int)(REFERENCE_FLOP_BUDGET / per_channel);
    kc = kc < 3 ? 3 : kc > d->k ? d->k : kc;
    if (!(lr->kept = malloc((size_t)kc * sizeof *lr->kept)))
        return 1;
    for (int j = 0; j < kc; j++)
        lr->kept[j] = kc == 1 ? 0 : (int)((long long)j * (d->k - 1) / (kc - 1));
    lr->kc = kc;
    return 0;
}

/* The FP64 reference of the checked images (the first and, when N > 1, the last) and channels. */
static int reference(struct layer_run *lr)
{
    struct wino_conv2d_desc one = lr->pb.desc;
    const size_t image_in = (size_t)one.h * one.w * one.c, filter = (size_t)one.r * one.s * one.c;
    float *w = malloc((size_t)lr->kc * filter * sizeof *w);
    if (!w)
        return 1;
    for (int j = 0; j < lr->kc; j++) /* KRSC: each kept filter is contiguous */
        memcpy(w + j * filter, lr->w + (size_t)lr->kept[j] * filter, filter * sizeof *w);
    one.n = 1;
    one.k = lr->kc;
    const size_t out = (size_t)lr->pb.p * lr->pb.q * lr->kc;
    for (int j = 0; j < lr->checked; j++) {
        const size_t n = j ? (size_t)lr->pb.desc.n - 1 : 0;
        wino_ref_conv2d_fwd(&one, lr->x + n * image_in, w, lr->ref + j * out);
    }
    free(w);
    return 0;
}

/* The backward op's reference (tools/bench_check.c) from NCHW, KCRS and NKPQ copies of x, w and
 * dy. Returns 0, or 1 when out of memory. */
static int backward_reference(struct layer_run *lr)
{
    const struct wino_conv2d_desc *d = &lr->pb.desc;
    const size_t hw = (size_t)d->h * d->w, rs = (size_t)d->r * d->s,
                 pq = (size_t)lr->pb.p * lr->pb.q;
    struct bench_problem nchw;
    memset(&nchw, 0, sizeof nchw);
    nchw.desc = *d;
    nchw.desc.layout = WINO_LAYOUT_NCHW;
    nchw.desc.dtype = WINO_DTYPE_F32;
    nchw.p = lr->pb.p;
    nchw.q = lr->pb.q;
    nchw.op = lr->pb.op;
    float *x = malloc(lr->x_n * sizeof *x), *w = malloc(lr->w_n * sizeof *w),
          *dy = malloc(lr->y_n * sizeof *dy);
    int rc = !x || !w || !dy;
    if (!rc) {
        wino_f32_transpose_batched(lr->x, x, d->n, hw, (size_t)d->c, 1, 0);  /* NHWC -> NCHW */
        wino_f32_transpose_batched(lr->w, w, d->k, rs, (size_t)d->c, 1, 0);  /* KRSC -> KCRS */
        wino_f32_transpose_batched(lr->dy, dy, d->n, pq, (size_t)d->k, 1, 0); /* NPQK -> NKPQ */
        nchw.x = x, nchw.w = w, nchw.dy = dy;
        rc = bench_check_prepare(&nchw, &lr->check) != 0;
    }
    free(x);
    free(w);
    free(dy);
    return rc;
}

static void release_layer(struct layer_run *lr)
{
    free(lr->dy);
    free(lr->out);
    bench_cuda_free(lr->d_dy);
    bench_check_release(&lr->check);
    free(lr->x);
    free(lr->w);
    free(lr->y);
    free(lr->ref);
    free(lr->kept);
    bench_cuda_free(lr->d_x);
    bench_cuda_free(lr->d_w);
}

/* Data, reference and device copies of layer `index` (seeds as in the CPU bench). Returns 0, or
 * 1 after an error line. */
static int setup_layer(const struct cuda_args *a, const struct gpu *g, const struct bench_layer *l,
                       int index, struct layer_run *lr)
{
    memset(lr, 0, sizeof *lr);
    lr->layer = *l;
    if (a->batch)
        lr->layer.n = (int)a->batch;
    struct cuda_problem *pb = &lr->pb;
    pb->desc = bench_layer_desc(&lr->layer);
    pb->desc.layout = WINO_LAYOUT_NHWC;
    pb->desc.dtype = a->dtype;
    pb->op = a->op;
    pb->device = (int)a->device;
    pb->stream = g->stream;
    if (wino_conv2d_output_size(&pb->desc, &pb->p, &pb->q) != WINO_SUCCESS) {
        fprintf(stderr, "wino bench: %s: %s\n", l->name, wino_last_error());
        return 1;
    }
    const struct wino_conv2d_desc *d = &pb->desc;
    const int forward = a->op == BENCH_FWD;
    lr->x_n = (size_t)d->n * d->h * d->w * d->c;
    lr->w_n = (size_t)d->k * d->r * d->s * d->c;
    lr->img = (size_t)pb->p * pb->q * d->k;
    lr->y_n = (size_t)d->n * lr->img;
    lr->checked = d->n > 1 ? 2 : 1;
    lr->gflop = 2e-9 * d->n * d->k * d->c * d->r * d->s * pb->p * pb->q;
    const size_t out_n = a->op == BENCH_BWD_DATA     ? lr->x_n
                         : a->op == BENCH_BWD_FILTER ? lr->w_n
                                                     : lr->y_n;
    lr->x = malloc(lr->x_n * sizeof *lr->x);
    lr->w = malloc(lr->w_n * sizeof *lr->w);
    lr->y = malloc(out_n * sizeof *lr->y);
    int no_memory = !lr->x || !lr->w || !lr->y;
    if (forward) {
        no_memory |= choose_channels(lr);
        lr->ref = malloc((size_t)lr->checked * pb->p * pb->q * lr->kc * sizeof *lr->ref);
        no_memory |= !lr->ref;
    } else {
        lr->dy = malloc(lr->y_n * sizeof *lr->dy);
        lr->out = malloc(out_n * sizeof *lr->out);
        no_memory |= !lr->dy || !lr->out;
    }
    if (no_memory) {
        fprintf(stderr, "wino bench: %s: out of memory\n", l->name);
        return 1;
    }
    bench_fill_uniform(lr->x, lr->x_n, 2 * (uint64_t)index + 1);
    bench_fill_uniform(lr->w, lr->w_n, 2 * (uint64_t)index + 2);
    if (!forward) /* dy as the CPU bench draws it */
        bench_fill_uniform(lr->dy, lr->y_n, ((uint64_t)index << 32) + 3);
    round_to(a->dtype, lr->x, lr->x_n); /* the reference sees what the GPU sees */
    round_to(a->dtype, lr->w, lr->w_n);
    if (!forward)
        round_to(a->dtype, lr->dy, lr->y_n);
    if (a->dtype == WINO_DTYPE_U8)
        pb->x_scale = bench_relu_u8_scale(lr->x, lr->x_n);
    if (forward ? reference(lr) : backward_reference(lr)) {
        fprintf(stderr, "wino bench: %s: out of memory\n", l->name);
        return 1;
    }
    if (a->dtype == WINO_DTYPE_U8) /* the output step from the checked outputs */
        pb->y_scale = bench_s8_scale(lr->ref, (size_t)lr->checked * pb->p * pb->q * lr->kc);
    else if (bench_cuda_upload_floats(lr->x, lr->x_n, a->dtype, &lr->d_x) ||
             bench_cuda_upload_floats(lr->w, lr->w_n, a->dtype, &lr->d_w) ||
             (!forward && bench_cuda_upload_floats(lr->dy, lr->y_n, a->dtype, &lr->d_dy))) {
        fprintf(stderr, "wino bench: %s: %s\n", l->name, last_error);
        return 1;
    }
    pb->x = lr->x;
    pb->w = lr->w;
    pb->dy = lr->dy;
    pb->d_x = lr->d_x;
    pb->d_w = lr->d_w;
    pb->d_dy = lr->d_dy;
    return 0;
}

/* Relative L1 error of the checked outputs of lr->y (gathered to its front first, in the
 * reference's order: images, then positions, then the kept channels). Backward: lr->y in NCHW
 * (KCRS) order against bench_check's slices. */
static double checked_error(struct layer_run *lr)
{
    const struct wino_conv2d_desc *d = &lr->pb.desc;
    if (lr->pb.op == BENCH_BWD_DATA)
        wino_f32_transpose_batched(lr->y, lr->out, d->n, (size_t)d->h * d->w, (size_t)d->c, 1, 0);
    else if (lr->pb.op == BENCH_BWD_FILTER)
        wino_f32_transpose_batched(lr->y, lr->out, d->k, (size_t)d->r * d->s, (size_t)d->c, 1, 0);
    if (lr->pb.op != BENCH_FWD)
        return bench_check_error(&lr->check, lr->out);
    const size_t positions = (size_t)lr->pb.p * lr->pb.q, k = (size_t)lr->pb.desc.k;
    size_t to = 0;
    for (int j = 0; j < lr->checked; j++) {
        const size_t image = j ? (size_t)lr->pb.desc.n - 1 : 0;
        for (size_t pq = 0; pq < positions; pq++)
            for (int c = 0; c < lr->kc; c++) /* to <= the source index: in place is safe */
                lr->y[to++] = lr->y[(image * positions + pq) * k + (size_t)lr->kept[c]];
    }
    return wino_rel_l1_f32(lr->y, lr->ref, to);
}

/* max(bytes / bandwidth, FLOPs / peak) in ms: x, w and y once at the dtype; the direct FLOPs, or
 * for a Winograd tile m the alpha^2 GEMMs' 2 * alpha^2 * tiles * C * K. */
static double floor_ms(const struct gpu *g, const struct layer_run *lr, int m)
{
    const struct wino_conv2d_desc *d = &lr->pb.desc;
    const double bytes =
        (double)(lr->x_n + lr->w_n + lr->y_n) * (double)bench_dtype_size(d->dtype);
    double flops = 1e9 * lr->gflop;
    if (m) { /* backward-data: the forward tiles cover dx (H x W) */
        const int bwd = lr->pb.op == BENCH_BWD_DATA, oh = bwd ? d->h : lr->pb.p,
                  ow = bwd ? d->w : lr->pb.q;
        const double alpha = m + d->r - 1,
                     tiles = (double)d->n * ((oh + m - 1) / m) * ((ow + m - 1) / m);
        flops = 2.0 * alpha * alpha * tiles * d->c * d->k;
    }
    const double t_mem = bytes / g->bandwidth, t_math = flops / g->peak;
    return t_mem > t_math ? t_mem : t_math;
}

/* "wino-winograd F4x4_3x3" (or "m=4" before the tile is known), "cudnn-algo1 NCHW". */
static void row_label(const struct row *r, char *buf, size_t cap)
{
    if (r->m && r->tile[0])
        snprintf(buf, cap, "%s %s", r->impl, r->tile);
    else if (r->m)
        snprintf(buf, cap, "%s m=%d", r->impl, r->m);
    else
        snprintf(buf, cap, "%s %s", r->impl, r->layout);
}

/* Checks and times one prepared implementation into *row (impl, layout, m and bound set by the
 * caller) and destroys it. Returns 1 when the row failed (error line printed), else 0. */
static int check_and_time(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                          enum bench_prep prep, struct bench_runner *r, struct row *row)
{
    char label[64];
    snprintf(row->info, sizeof row->info, "%s", r->info);
    snprintf(row->tile, sizeof row->tile, "%s", r->tile);
    row->workspace = r->workspace_bytes;
    row_label(row, label, sizeof label);
    if (prep == BENCH_SKIP) {
        row->status = ROW_SKIPPED;
        return 0;
    }
    if (prep == BENCH_FAIL) {
        fprintf(stderr, "wino bench: %s %s: %s\n", lr->layer.name, label, r->info);
        row->status = ROW_ERROR;
        return 1;
    }
    int failed = r->run(r->state) || r->output(r->state, lr->y);
    if (!failed) {
        row->err = checked_error(lr);
        if (!(row->err <= row->bound)) {
            fprintf(stderr,
                    "wino bench: %s %s: wrong result (relative L1 error %.3g > %g), not timed\n",
                    lr->layer.name, label, row->err, row->bound);
            snprintf(row->info, sizeof row->info, "relative L1 error %.3g > %g", row->err,
                     row->bound);
            row->status = ROW_WRONG;
            r->destroy(r->state);
            return 1;
        }
        failed = time_runs(r, g->stream, a->warmup, a->reps, &row->ms);
    }
    r->destroy(r->state);
    if (failed) {
        fprintf(stderr, "wino bench: %s %s: %s\n", lr->layer.name, label, last_error);
        snprintf(row->info, sizeof row->info, "%.150s", last_error);
        row->status = ROW_ERROR;
        return 1;
    }
    row->floor_ms = floor_ms(g, lr, row->m);
    return 0;
}

/* Everything one layer's rows share: the layer, where they go and why some are missing. */
struct layer_rows {
    struct row rows[MAX_ROWS];
    int n;
    int failed;          /* a row was wrong or failed */
    char wino_why[160];  /* why wino has no row at all (its first refusal), or "" */
};

/* A new row for impl; NULL when the table is full (cannot happen with MAX_ROWS). */
static struct row *new_row(struct layer_rows *t, const char *impl, const char *layout, int wino,
                           int m, double bound)
{
    if (t->n == MAX_ROWS)
        return NULL;
    struct row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->impl, sizeof r->impl, "%s", impl);
    r->layout = layout;
    r->variant = "";
    r->wino = wino;
    r->m = m;
    r->bound = bound;
    return r;
}

static int winrs_row(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                     struct layer_rows *t, double bound, enum wino_variant variant)
{
    struct bench_runner r;
    const int fused = variant == WINO_VARIANT_FUSED;
    struct row *row =
        new_row(t, fused ? "wino-winrs" : "wino-winrs-nonfused", "NHWC", 1, 0, bound);
    if (!row)
        return 0;
    row->variant = fused ? "fused" : "non-fused";
    const double t0 = bench_now_ms();
    const enum bench_prep prep = bench_wino_cuda_prepare(&lr->pb, 0, variant, &r);
    row->prepare_ms = bench_now_ms() - t0;
    t->failed |= check_and_time(a, g, lr, prep, &r, row);
    if (gpu_broken())
        return 1;
    if (row->status == ROW_SKIPPED) {
        t->n--;
        fprintf(stderr, "wino bench: note: %s %s skipped: %s\n", lr->layer.name,
                fused ? "wino-winrs" : "wino-winrs-nonfused", r.info);
        snprintf(t->wino_why, sizeof t->wino_why, "%s", r.info);
    }
    return 0;
}

/* wino's backward-filter rows: its own choice of kernels (WinRS), with the fused kernels
 * (wino-winrs, the default) and the non-fused stages (wino-winrs-nonfused); a refusal is a
 * note. */
static int winrs_rows(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                      struct layer_rows *t, double bound)
{
    for (int v = 0; v < 2; v++)
        if (winrs_row(a, g, lr, t, bound, v ? WINO_VARIANT_NON_FUSED : WINO_VARIANT_FUSED))
            return 1;
    return 0;
}

/* wino's rows: per variant, the tiles m = 2, 3, ... (INT8: 2, 4, 6) until creation refuses
 * one (a note: larger tiles need more range and memory still, fused kernels exist for F(2,3)
 * and F(4,3) only, and the ROWS kernel for one tile, alpha 8). */
static int wino_rows(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                     struct layer_rows *t)
{
    static const enum wino_variant variants[4] = {WINO_VARIANT_NON_FUSED, WINO_VARIANT_FUSED,
                                                  WINO_VARIANT_FUSED_OUTPUT, WINO_VARIANT_ROWS};
    static const char *const impls[4] = {"wino-winograd", "wino-fused", "wino-fused-out",
                                         "wino-rows"};
    static const char *const names[4] = {"non-fused", "fused", "fused-output", "rows"};
    static const int float_tiles[] = {2, 3, 4, 5, 6, 7, 8};
    const int int8 = a->dtype == WINO_DTYPE_U8;
    const int *tiles = int8 ? int8_tiles : float_tiles;
    const size_t count = int8 ? sizeof int8_tiles / sizeof int8_tiles[0]
                              : sizeof float_tiles / sizeof float_tiles[0];
    const double bound = int8                        ? BENCH_BOUND_INT8
                         : a->dtype == WINO_DTYPE_F16  ? BOUND_F16
                         : a->dtype == WINO_DTYPE_BF16 ? BOUND_BF16
                                                       : BOUND_WINO_F32;
    if (a->op == BENCH_BWD_FILTER)
        return winrs_rows(a, g, lr, t, bound);
    int refused = 0; /* the non-fused variant refused a smaller tile */
    for (size_t i = 0; i < count; i++)
        for (int v = 0; v < 4; v++) {
            struct bench_runner r;
            struct row *row;
            if ((!v && refused) || !(row = new_row(t, impls[v], "NHWC", 1, tiles[i], bound)))
                continue;
            row->variant = names[v];
            const double t0 = bench_now_ms();
            const enum bench_prep prep =
                int8 ? bench_wino_cuda_int8_prepare(&lr->pb, tiles[i], variants[v], &r)
                     : bench_wino_cuda_prepare(&lr->pb, tiles[i], variants[v], &r);
            row->prepare_ms = bench_now_ms() - t0;
            t->failed |= check_and_time(a, g, lr, prep, &r, row);
            if (gpu_broken())
                return 1;
            if (row->status != ROW_SKIPPED)
                continue;
            t->n--; /* a refusal is a note, not a row */
            if (v) /* the fused kernels exist for some tiles only (F(2,3), F(4,3)) */
                continue;
            fprintf(stderr, "wino bench: note: %s %s m=%d and larger skipped: %s\n",
                    lr->layer.name, impls[v], tiles[i], r.info);
            if (i == 0)
                snprintf(t->wino_why, sizeof t->wino_why, "%s", r.info);
            refused = 1;
        }
    return 0;
}

/* The library's own choice (wino-auto: AUTO, wino's kernel or cuDNN's engine as timed at
 * create, named in the tile column) and its vendor path alone (cudnn-graph: cuDNN 9's graph
 * API, the engines PyTorch's conv2d reaches), FP32 / FP16 / BF16. */
static int choice_rows(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                       struct layer_rows *t)
{
    static const char *const impls[2] = {"wino-auto", "cudnn-graph"};
    const double bound = a->dtype == WINO_DTYPE_F16    ? BOUND_F16
                         : a->dtype == WINO_DTYPE_BF16 ? BOUND_BF16
                                                       : BOUND_WINO_F32;
    if (a->dtype == WINO_DTYPE_U8)
        return 0;
    for (int i = 0; i < 2; i++) {
        struct bench_runner r;
        struct row *row = new_row(t, impls[i], "NHWC", 0, 0, bound);
        if (!row)
            return 0;
        row->library = 1;
        const double t0 = bench_now_ms();
        const enum bench_prep prep = bench_wino_cuda_prepare_choice(
            &lr->pb, i ? WINO_ALGO_VENDOR : WINO_ALGO_AUTO, &r);
        row->prepare_ms = bench_now_ms() - t0;
        t->failed |= check_and_time(a, g, lr, prep, &r, row);
        if (gpu_broken())
            return 1;
        memcpy(row->choice, row->info, sizeof row->info); /* what runs, and why */
        if (row->status == ROW_SKIPPED) {
            fprintf(stderr, "wino bench: note: %s %s skipped: %s\n", lr->layer.name, impls[i],
                    r.info);
            t->n--;
        }
    }
    return 0;
}

/* One row per cuDNN algorithm and layout; refusals stay as table notes. */
static int cudnn_rows(const struct cuda_args *a, const struct gpu *g, struct layer_run *lr,
                      struct layer_rows *t)
{
    const double bound = a->dtype == WINO_DTYPE_F32    ? BOUND_CUDNN_F32
                         : a->dtype == WINO_DTYPE_F16  ? BOUND_F16
                         : a->dtype == WINO_DTYPE_BF16 ? BOUND_BF16
                                                       : BOUND_CUDNN_INT8;
    const int layouts = a->dtype == WINO_DTYPE_U8 ? 1 : 2; /* cuDNN INT8 runs NHWC only */
    if (g->no_cudnn[0])
        return 0;
    for (int nchw = 0; nchw < layouts; nchw++)
        for (int algo = 0; algo < bench_cudnn_algo_count(a->op); algo++) {
            struct bench_runner r;
            char impl[24];
            snprintf(impl, sizeof impl, "cudnn-algo%d", algo);
            struct row *row = new_row(t, impl, nchw ? "NCHW" : "NHWC", 0, 0, bound);
            if (!row)
                return 0;
            const double t0 = bench_now_ms();
            const enum bench_prep prep = bench_cudnn_prepare(&lr->pb, algo, nchw, &r);
            row->prepare_ms = bench_now_ms() - t0;
            t->failed |= check_and_time(a, g, lr, prep, &r, row);
            if (gpu_broken())
                return 1;
        }
    return 0;
}

/* The best-measured row: the layer's fastest row, wino or cuDNN, and why. Returns 1 when
 * added. */
static int auto_row(const struct gpu *g, struct layer_rows *t)
{
    const struct row *wino = NULL, *cudnn = NULL;
    for (int i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        const struct row **best = r->wino ? &wino : &cudnn;
        if (r->status == ROW_OK && !r->library && (!*best || r->ms < (*best)->ms))
            *best = r;
    }
    const struct row *win = !wino ? cudnn : !cudnn || wino->ms <= cudnn->ms ? wino : cudnn;
    if (!win || t->n == MAX_ROWS)
        return 0;
    struct row *out = &t->rows[t->n++];
    *out = *win;
    snprintf(out->impl, sizeof out->impl, "best-measured");
    if (win == wino && cudnn)
        snprintf(out->choice, sizeof out->choice, "wino %s %s: %.2fx faster than %s %s",
                 wino->tile, wino->variant, cudnn->ms / wino->ms, cudnn->impl, cudnn->layout);
    else if (win == wino)
        snprintf(out->choice, sizeof out->choice, "wino %s %s: no cuDNN row (%.120s)", wino->tile,
                 wino->variant, g->no_cudnn[0] ? g->no_cudnn : "no algorithm ran");
    else if (wino)
        snprintf(out->choice, sizeof out->choice,
                 "%s %s: %.2fx faster than wino's best (%s %s)", cudnn->impl, cudnn->layout,
                 wino->ms / cudnn->ms, wino->tile, wino->variant);
    else
        snprintf(out->choice, sizeof out->choice, "%s %s: wino has no kernel here (%.120s)",
                 cudnn->impl, cudnn->layout, t->wino_why[0] ? t->wino_why : "its rows failed");
    return 1;
}

/* ---- output ---- */

static void print_table(const struct layer_run *lr, const struct layer_rows *t, double cudnn_best,
                        int int8)
{
    const struct bench_layer *l = &lr->layer;
    printf("\n%s: N=%d C=%d H=%d W=%d K=%d R=%d S=%d pad=%d stride=%d -> %dx%d, %.3g %s\n",
           l->name, l->n, l->c, l->h, l->w, l->k, l->r, l->s, l->pad, l->stride, lr->pb.p,
           lr->pb.q, lr->gflop, int8 ? "GOP" : "GFLOP");
    printf("  %-14s %-9s %-6s %10s %9s %8s %12s %9s %9s %8s  %s\n", "impl", "tile", "layout",
           "ms", int8 ? "GOP/s" : "GFLOP/s", "vs cuDNN", "workspace_B", "rel_L1", "floor_ms",
           "of_floor", "info");
    for (int i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        printf("  %-14s %-9s %-6s ", r->impl, r->tile[0] ? r->tile : "-", r->layout);
        if (r->status != ROW_OK) {
            printf("%10s  %s\n",
                   r->status == ROW_SKIPPED ? "skipped"
                   : r->status == ROW_WRONG ? "WRONG"
                                            : "ERROR",
                   r->info);
            continue;
        }
        char ratio[16] = "-";
        if (cudnn_best > 0)
            snprintf(ratio, sizeof ratio, "%.2fx", cudnn_best / r->ms);
        printf("%10.4f %9.1f %8s %12zu %9.2e %9.4f %8.2f  %s%s\n", r->ms,
               lr->gflop / r->ms * 1e3, ratio, r->workspace, r->err, r->floor_ms,
               r->floor_ms / r->ms, r->choice[0] ? "choice: " : "",
               r->choice[0] ? r->choice : r->info);
    }
}

static void print_csv(const struct cuda_args *a, const struct gpu *g, const struct layer_run *lr,
                      const struct layer_rows *t)
{
    for (int i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        if (r->status != ROW_OK)
            continue; /* refusals are table notes, failures went to stderr */
        const struct bench_csv_row csv = {
            a->set,     &lr->layer, dtype_name(a->dtype), "cuda", r->impl, r->tile,
            r->ms,      lr->gflop,  r->workspace,         g->name, r->err, r->prepare_ms,
            r->variant, 0,          r->choice};
        bench_csv_row(&csv);
        printf(",%s,%.5g,%.3g,%s\n", r->layout, r->floor_ms, r->floor_ms / r->ms,
               bench_op_name(a->op));
    }
}

/* Runs every implementation on one layer. Returns 0, 1 when a row failed or was wrong, 2 when
 * the GPU is no longer usable (error printed). */
static int bench_layer(const struct cuda_args *a, const struct gpu *g, const struct bench_layer *l,
                       int index)
{
    struct layer_run lr;
    struct layer_rows *t = calloc(1, sizeof *t);
    int status = 1;
    if (!t)
        fprintf(stderr, "wino bench: %s: out of memory\n", l->name);
    else if (!setup_layer(a, g, l, index, &lr)) {
        const int broken = wino_rows(a, g, &lr, t) || cudnn_rows(a, g, &lr, t) ||
                           choice_rows(a, g, &lr, t);
        if (broken) {
            fprintf(stderr, "wino bench: %s: the GPU failed, stopping: %s\n", l->name,
                    last_error);
            status = 2;
        } else {
            auto_row(g, t);
            double cudnn_best = 0;
            for (int i = 0; i < t->n; i++)
                if (t->rows[i].status == ROW_OK && !t->rows[i].wino && !t->rows[i].library &&
                    strcmp(t->rows[i].impl, "best-measured") &&
                    (cudnn_best == 0 || t->rows[i].ms < cudnn_best))
                    cudnn_best = t->rows[i].ms;
            if (a->csv)
                print_csv(a, g, &lr, t);
            else
                print_table(&lr, t, cudnn_best, a->dtype == WINO_DTYPE_U8);
            fflush(stdout);
            status = t->failed;
        }
    }
    if (t)
        release_layer(&lr);
    free(t);
    return status;
}

static void print_header(const struct cuda_args *a, const struct gpu *g, int layers)
{
    char cudnn[200];
    if (g->no_cudnn[0])
        snprintf(cudnn, sizeof cudnn, "cuDNN unavailable: %s", g->no_cudnn);
    else
        snprintf(cudnn, sizeof cudnn, "cuDNN %s", bench_cudnn_version());
    FILE *out = a->csv ? stderr : stdout; /* CSV: stdout holds rows only */
    if (a->csv)
        printf("%s,layout,floor_ms,of_floor,op\n", BENCH_CSV_COLUMNS);
    else
        printf("wino bench: set %s (%d layers), cuda, %s %s NHWC, %s (%d SMs, %d MHz, sm_%d%d), "
               "%s, median of %ld after %ld warm-up%s\n",
               a->set, layers, bench_op_name(a->op), dtype_name(a->dtype), g->name, g->sms, g->clock_khz / 1000,
               g->major, g->minor, cudnn, a->reps, a->warmup, a->warmup == 1 ? "" : "s");
    if (a->csv && g->no_cudnn[0])
        fprintf(stderr, "wino bench: note: %s\n", cudnn);
    fprintf(out,
            "%sfloor = max(bytes / %.0f GB/s (device-to-device copy, read + write, median of "
            "10), %s / %.1f T%s/s (%g per SM per clock%s))\n",
            a->csv ? "wino bench: note: " : "  ", g->bandwidth * 1e-6,
            a->dtype == WINO_DTYPE_U8 ? "ops" : "FLOPs", g->peak * 1e-9,
            a->dtype == WINO_DTYPE_U8 ? "OP" : "FLOP", g->peak_per_sm_clk,
            g->major == 9 ? "" : "; Hopper's rates, this GPU is not sm_90: rough");
}

int bench_cuda_run(const struct bench_args *args, const struct bench_layer *layers, int count)
{
    static const enum wino_dtype dtypes[4] = {WINO_DTYPE_F32, WINO_DTYPE_F16, WINO_DTYPE_U8,
                                              WINO_DTYPE_BF16};
    const struct cuda_args a = {args->set,
                                args->batch,
                                args->reps < 0 ? 30 : args->reps,
                                args->warmup < 0 ? 5 : args->warmup,
                                args->device,
                                args->csv,
                                dtypes[args->dtype],
                                args->op};
    struct gpu g;
    int rc;
    if ((rc = open_gpu(&a, &g)) != 0) {
        close_gpu(&g);
        return rc;
    }
    print_header(&a, &g, count);
    int status = 0;
    for (int i = 0; i < count && status < 2; i++)
        status |= bench_layer(&a, &g, &layers[i], i);
    if (status < 2 && BENCH_CUDA_FAILED(cudaDeviceSynchronize())) {
        fprintf(stderr, "wino bench: %s\n", last_error);
        status = 1;
    }
    close_gpu(&g);
    return status ? 1 : 0;
}

#endif
