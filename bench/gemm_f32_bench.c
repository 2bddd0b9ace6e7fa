/* Single-threaded FP32 GEMM benchmark (not a test): GFLOP/s of each ISA on Winograd-typical
 * shapes against the measured FMA peak of one core.
 *
 *   gcc -O2 -std=c99 -Iinclude -Isrc bench/gemm_f32_bench.c build/libwino.a -lgmp -lm -lpthread
 *   ./a.out [--quick] [--batch B] [--isa scalar|avx2|avx512|amx-bf16] [m n k]...
 *
 * Each shape is timed as in the Winograd element-wise stage: a batch of B (default 16) GEMMs with
 * distinct A, B and C (alpha^2 = 16 for F(2x2,3x3)), calls cycled through the batch (--batch 1:
 * the same GEMM repeated, operands cache resident); a sample is at least
 * ~20 ms of calls; the reported number is the median of 11 samples after a warm-up. "plain" packs
 * B inside the call, "packed" uses B packed beforehand (the filters, packed at create time).
 * The peak: 24 independent FMA chains (zmm for AVX-512, 12 ymm chains for AVX2) in registers. */
#define _POSIX_C_SOURCE 200112L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>

#include "cpu/gemm_f32.h"

#define MAXBATCH 16
#define SAMPLES 11

static int g_batch = MAXBATCH;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return v[n / 2];
}

/* ---- FMA peak ----------------------------------------------------------------------------- */

#define P24(X)                                                                                     \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)  \
        X(17) X(18) X(19) X(20) X(21) X(22) X(23)

__attribute__((target("avx512f,fma"), noinline)) static float peak_loop_avx512(long iters,
                                                                              float seed)
{
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    __m512 s;
    long i;
#define D(i) __m512 r##i = _mm512_set1_ps(seed + (float)i);
#define F(i) r##i = _mm512_fmadd_ps(r##i, x, y);
#define S(i) s = _mm512_add_ps(s, r##i);
    P24(D)
    for (i = 0; i < iters; i++) {
        P24(F)
        __asm__ volatile("" ::: "memory");
    }
    s = _mm512_setzero_ps();
    P24(S)
    return _mm512_reduce_add_ps(s);
#undef D
#undef F
#undef S
}

#define P12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx2,fma"), noinline)) static float peak_loop_avx2(long iters, float seed)
{
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    __m256 s;
    float out[8];
    long i;
#define D(i) __m256 r##i = _mm256_set1_ps(seed + (float)i);
#define F(i) r##i = _mm256_fmadd_ps(r##i, x, y);
#define S(i) s = _mm256_add_ps(s, r##i);
    P12(D)
    for (i = 0; i < iters; i++) {
        P12(F)
        __asm__ volatile("" ::: "memory");
    }
    s = _mm256_setzero_ps();
    P12(S)
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
#undef D
#undef F
#undef S
}

/* GFLOP/s, median of SAMPLES runs of ~30 ms. */
static double measure_peak(enum wino_isa isa)
{
    double t[SAMPLES];
    volatile float sink = 0.0f;
    const long iters = 2000000; /* 24 * 2M zmm FMAs ~ 25 ms at 2 GHz */
    int s;
    double flops;
    if (isa == WINO_ISA_AVX512)
        flops = (double)iters * 24.0 * 16.0 * 2.0;
    else
        flops = (double)(iters * 2) * 12.0 * 8.0 * 2.0;
    for (s = -2; s < SAMPLES; s++) {
        double t0 = now(), t1;
        sink += isa == WINO_ISA_AVX512 ? peak_loop_avx512(iters, 1.0f + (float)s)
                                       : peak_loop_avx2(iters * 2, 1.0f + (float)s);
        t1 = now();
        if (s >= 0)
            t[s] = flops / (t1 - t0) * 1e-9;
    }
    (void)sink;
    return median(t, SAMPLES);
}

/* ---- GEMM ---------------------------------------------------------------------------------- */

static void *xalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* One short peak sample (GFLOP/s) of the widest FMA the isa has. */
static double peak_sample(enum wino_isa isa)
{
    volatile float sink;
    const long iters = 200000; /* ~2-3 ms */
    const double t0 = now();
    double flops;
    if (isa == WINO_ISA_AVX512) {
        sink = peak_loop_avx512(iters, 1.0f);
        flops = (double)iters * 24.0 * 16.0 * 2.0;
    } else {
        sink = peak_loop_avx2(iters, 1.0f);
        flops = (double)iters * 12.0 * 8.0 * 2.0;
    }
    (void)sink;
    return flops / (now() - t0) * 1e-9;
}

/* Returns GFLOP/s (median); *frac: median over samples of GFLOP/s / the peak sample taken right
 * before it (the machine is shared: this cancels slow changes in the load). */
static double bench_gemm(enum wino_isa isa, int m, int n, int k, int packed, int quick,
                         enum wino_isa peak_isa, double *frac)
{
    float *a[MAXBATCH], *b[MAXBATCH], *c[MAXBATCH];
    void *pb[MAXBATCH];
    void *scratch;
    size_t sbytes;
    double t[SAMPLES], r[SAMPLES];
    const double flop = 2.0 * m * n * k;
    long calls = 1, it;
    int i, s;
    const int samples = quick ? 5 : SAMPLES;
    const double min_sample = quick ? 0.005 : 0.02;
    for (i = 0; i < g_batch; i++) {
        size_t e;
        a[i] = xalloc((size_t)m * k * sizeof(float));
        b[i] = xalloc((size_t)k * n * sizeof(float));
        c[i] = xalloc((size_t)m * n * sizeof(float));
        for (e = 0; e < (size_t)m * k; e++)
            a[i][e] = (float)((e * 7 + (size_t)i) % 13) * 0.1f - 0.6f;
        for (e = 0; e < (size_t)k * n; e++)
            b[i][e] = (float)((e * 5 + (size_t)i) % 11) * 0.1f - 0.5f;
        memset(c[i], 0, (size_t)m * n * sizeof(float));
        pb[i] = NULL;
        if (packed) {
            pb[i] = xalloc(wino_f32_gemm_packed_b_bytes(isa, k, n));
            wino_f32_gemm_pack_b(isa, k, n, b[i], n, pb[i]);
        }
    }
    sbytes = packed ? wino_f32_gemm_packed_scratch_bytes(isa, m, n, k)
                    : wino_f32_gemm_scratch_bytes(isa, m, n, k);
    scratch = xalloc(sbytes);
    /* calibrate: calls per sample */
    for (;;) {
        double t0 = now(), dt;
        for (it = 0; it < calls; it++) {
            const int j = (int)(it % g_batch);
            if (packed)
                wino_f32_gemm_packed(isa, m, n, k, a[j], k, pb[j], c[j], n, 0, scratch);
            else
                wino_f32_gemm(isa, m, n, k, a[j], k, b[j], n, c[j], n, 0, scratch);
        }
        dt = now() - t0;
        if (dt >= min_sample)
            break;
        calls = dt <= 0.0 ? calls * 16 : (long)(calls * (min_sample * 1.2 / dt)) + 1;
    }
    for (s = 0; s < samples; s++) {
        const double pk = peak_isa > WINO_ISA_SCALAR ? peak_sample(peak_isa) : 0.0;
        double t0 = now();
        for (it = 0; it < calls; it++) {
            const int j = (int)(it % g_batch);
            if (packed)
                wino_f32_gemm_packed(isa, m, n, k, a[j], k, pb[j], c[j], n, 0, scratch);
            else
                wino_f32_gemm(isa, m, n, k, a[j], k, b[j], n, c[j], n, 0, scratch);
        }
        t[s] = flop * (double)calls / (now() - t0) * 1e-9;
        r[s] = pk > 0.0 ? t[s] / pk : 0.0;
    }
    *frac = median(r, samples);
    for (i = 0; i < g_batch; i++) {
        free(a[i]);
        free(b[i]);
        free(c[i]);
        free(pb[i]);
    }
    free(scratch);
    return median(t, samples);
}

int main(int argc, char **argv)
{
    static const int default_shapes[][3] = {
        /* m (tiles), n (out ch), k (in ch) */
        {16, 16, 16},    {196, 64, 64},   {784, 64, 64},   {1568, 64, 64},  {3000, 64, 64},
        {392, 128, 128}, {1568, 128, 128}, {196, 256, 256}, {784, 256, 256}, {49, 512, 512},
        {256, 512, 512}, {1000, 512, 512}, {3000, 32, 256}, {100, 500, 300},
    };
    int shapes[64][3];
    int nshapes = 0, quick = 0, i, only = -1;
    /* the packed GEMM's best (AMX-BF16 where there is one; its plain GEMM is AVX-512's); the
     * %peak of every row is against the FMA peak of the vector ISA */
    enum wino_isa best = wino_f32_packed_gemm_isa(), isa;
    const enum wino_isa vector_isa = wino_cpu_isa();
    double peak512 = 0.0, peak2 = 0.0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
            ++i;
            only = 0;
            for (int t = WINO_ISA_SCALAR; t <= WINO_ISA_AMX_BF16; t++)
                only = !strcmp(argv[i], wino_isa_name((enum wino_isa)t)) ? t : only;
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            g_batch = atoi(argv[++i]);
            if (g_batch < 1 || g_batch > MAXBATCH)
                g_batch = MAXBATCH;
        } else if (i + 2 < argc && nshapes < 64) {
            shapes[nshapes][0] = atoi(argv[i]);
            shapes[nshapes][1] = atoi(argv[i + 1]);
            shapes[nshapes][2] = atoi(argv[i + 2]);
            nshapes++;
            i += 2;
        }
    }
    if (!nshapes) {
        nshapes = (int)(sizeof default_shapes / sizeof default_shapes[0]);
        memcpy(shapes, default_shapes, sizeof default_shapes);
    }

    printf("packed GEMM isa: %s; single thread; batch of %d distinct GEMMs; median of %d samples\n",
           wino_isa_name(best), g_batch, quick ? 5 : SAMPLES);
    if (vector_isa >= WINO_ISA_AVX2) {
        peak2 = measure_peak(WINO_ISA_AVX2);
        printf("FMA peak avx2 (12 ymm chains):    %7.1f GFLOP/s\n", peak2);
    }
    if (vector_isa >= WINO_ISA_AVX512) {
        peak512 = measure_peak(WINO_ISA_AVX512);
        printf("FMA peak avx512 (24 zmm chains):  %7.1f GFLOP/s\n", peak512);
    }
    printf("GFLOP/s; %%peak = median of (GEMM sample / FMA-peak sample taken just before it),\n"
           "best of plain and packed, against the widest FMA peak of the machine\n");
    printf("%-8s %5s %5s %5s  %10s %10s %8s\n", "isa", "m", "n", "k", "plain", "packed",
           "%peak");
    for (isa = WINO_ISA_SCALAR; isa <= best; isa++) {
        const enum wino_isa peak_isa = vector_isa;
        if (only >= 0 && (int)isa != only)
            continue;
        for (i = 0; i < nshapes; i++) {
            const int m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
            double g0, g1, f0, f1;
            if (isa == WINO_ISA_SCALAR && (double)m * n * k > 3e7 && !quick && only < 0)
                continue; /* scalar: small shapes only (minutes otherwise) */
            g0 = bench_gemm(isa, m, n, k, 0, quick, peak_isa, &f0);
            g1 = bench_gemm(isa, m, n, k, 1, quick, peak_isa, &f1);
            printf("%-8s %5d %5d %5d  %10.1f %10.1f %7.1f%%\n", wino_isa_name(isa), m, n, k, g0,
                   g1, 100.0 * (f0 > f1 ? f0 : f1));
            fflush(stdout);
        }
    }
    return 0;
}
