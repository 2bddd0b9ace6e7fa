/* FP32 GEMM (src/cpu/gemm_f32.h): every ISA this machine runs (scalar always; AMX-BF16 where
 * wino_f32_packed_gemm_isa has it, whose unpacked GEMM is the AVX-512 one) against a
 * double-precision naive GEMM, plain and pre-packed B, accumulate 0 and 1, awkward and random
 * sizes, large leading dimensions. C is poisoned with NaN before accumulate = 0 runs, and the
 * padding between rows (ldc > n) holds a sentinel that must survive. */
#define _POSIX_C_SOURCE 200112L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_f32.h"
#include "test_util.h"

static const float SENTINEL = 12345.0f;

struct gemm_case {
    int m, n, k;
    ptrdiff_t lda, ldb, ldc;
};

/* Returns the number of bad elements (0 = pass); prints the first few. */
static long check_c(const struct gemm_case *t, const float *c, const double *ref,
                    const double *bound, const float *c0, int acc, int amx, const char *what)
{
    long bad = 0;
    int i, j;
    /* An FP32 GEMM's worst case: k + 2 roundings of the sum. AMX-BF16: 6 k products summed in
     * FP32 (3 k epsilons), and the split's residuals and left-out products (2 more). */
    const double eps = (double)FLT_EPSILON * (amx ? 3.0 * t->k + 4 : (double)(t->k + 2));
    for (i = 0; i < t->m; i++) {
        for (j = 0; j < (int)t->ldc; j++) {
            const float got = c[(ptrdiff_t)i * t->ldc + j];
            int ok;
            if (j >= t->n) {
                ok = got == SENTINEL;
            } else {
                const size_t e = (size_t)i * (size_t)t->n + (size_t)j;
                const double want = ref[e] + (acc ? (double)c0[e] : 0.0);
                const double tol = eps * (bound[e] + (acc ? fabs((double)c0[e]) : 0.0)) + 1e-30;
                ok = isfinite(got) && fabs((double)got - want) <= tol;
                if (!ok && bad < 3)
                    printf("  %s: C[%d][%d] = %.9g, want %.9g (tol %.3g)\n", what, i, j,
                           (double)got, want, tol);
            }
            if (!ok) {
                if (j >= t->n && bad < 3)
                    printf("  %s: padding C[%d][%d] overwritten\n", what, i, j);
                bad++;
            }
        }
    }
    return bad;
}

/* C before a run: c0 (accumulate) or NaN, and the sentinel past n. */
static void poison_c(const struct gemm_case *t, float *c, const float *c0, int acc)
{
    for (int i = 0; i < t->m; i++)
        for (int j = 0; j < (int)t->ldc; j++)
            c[(ptrdiff_t)i * t->ldc + j] =
                j >= t->n ? SENTINEL : (acc ? c0[(size_t)i * (size_t)t->n + (size_t)j] : NAN);
}

static void run_case(struct test_counts *counts, struct test_rng *rng, const struct gemm_case *t,
                     enum wino_isa max_isa)
{
    const size_t asz = (size_t)(t->m ? t->m : 1) * (size_t)t->lda;
    const size_t bsz = (size_t)(t->k ? t->k : 1) * (size_t)t->ldb;
    const size_t csz = (size_t)t->m * (size_t)t->ldc;
    const size_t mn = (size_t)t->m * (size_t)t->n;
    float *a = test_alloc64(asz * sizeof(float)), *b = test_alloc64(bsz * sizeof(float));
    float *c = test_alloc64(csz * sizeof(float)), *c0 = test_alloc64(mn * sizeof(float));
    double *ref = test_alloc64(mn * sizeof(double)), *bound = test_alloc64(mn * sizeof(double));
    size_t e;
    int i, j, p, isa;

    for (e = 0; e < asz; e++)
        a[e] = (float)test_rng_sym(rng);
    for (e = 0; e < bsz; e++)
        b[e] = (float)test_rng_sym(rng);
    for (e = 0; e < mn; e++)
        c0[e] = (float)test_rng_sym(rng);
    for (i = 0; i < t->m; i++)
        for (j = 0; j < t->n; j++) {
            double s = 0.0, sa = 0.0;
            for (p = 0; p < t->k; p++) {
                const double x = (double)a[(ptrdiff_t)i * t->lda + p];
                const double y = (double)b[(ptrdiff_t)p * t->ldb + j];
                s += x * y;
                sa += fabs(x * y);
            }
            ref[(size_t)i * (size_t)t->n + (size_t)j] = s;
            bound[(size_t)i * (size_t)t->n + (size_t)j] = sa;
        }

    for (isa = WINO_ISA_SCALAR; isa <= (int)max_isa; isa++) {
        long bad = 0;
        int acc, packed;
        char what[160];
        for (packed = 0; packed <= 1; packed++) {
            size_t sbytes = packed ? wino_f32_gemm_packed_scratch_bytes(isa, t->m, t->n, t->k)
                                   : wino_f32_gemm_scratch_bytes(isa, t->m, t->n, t->k);
            void *scratch = test_alloc64(sbytes);
            void *pb = NULL;
            if (packed) {
                pb = test_alloc64(wino_f32_gemm_packed_b_bytes(isa, t->k, t->n));
                wino_f32_gemm_pack_b(isa, t->k, t->n, b, t->ldb, pb);
            }
            for (acc = 0; acc <= 1; acc++) {
                poison_c(t, c, c0, acc);
                snprintf(what, sizeof what, "%s %s acc=%d", wino_isa_name(isa),
                         packed ? "packed" : "plain", acc);
                if (packed)
                    wino_f32_gemm_packed(isa, t->m, t->n, t->k, a, t->lda, pb, c, t->ldc, acc,
                                         scratch);
                else
                    wino_f32_gemm(isa, t->m, t->n, t->k, a, t->lda, b, t->ldb, c, t->ldc, acc,
                                  scratch);
                bad += check_c(t, c, ref, bound, c0, acc, packed && isa == WINO_ISA_AMX_BF16,
                               what);
            }
            free(pb);
            free(scratch);
        }
        if (isa == WINO_ISA_AMX_BF16) {
            /* A split once from A^T, B packed once, C in pieces: rows 0-15, then the rest in
             * columns 0-31 and 32 on (wino_f32_amx_multiply's offsets) */
            const int lt = t->m + 3;
            float *at = test_alloc64((size_t)(t->k ? t->k : 1) * (size_t)lt * sizeof(float));
            void *split = test_alloc64(wino_f32_amx_split_bytes(t->m, t->k));
            void *pb = test_alloc64(wino_f32_gemm_packed_b_bytes(isa, t->k, t->n));
            void *edge = test_alloc64(32 * 32 * sizeof(float));
            for (p = 0; p < t->k; p++)
                for (i = 0; i < t->m; i++)
                    at[(size_t)p * (size_t)lt + (size_t)i] = a[(ptrdiff_t)i * t->lda + p];
            wino_f32_amx_split_at(t->m, t->k, at, lt, split);
            wino_f32_gemm_pack_b(isa, t->k, t->n, b, t->ldb, pb);
            for (acc = 0; acc <= 1; acc++) {
                poison_c(t, c, c0, acc);
                const int top = t->m < 16 ? t->m : 16, left = t->n < 32 ? t->n : 32;
                wino_f32_amx_multiply(split, t->m, 0, top, pb, t->n, 0, t->n, t->k, c, t->ldc,
                                      acc, edge);
                float *rest = c + (ptrdiff_t)top * t->ldc;
                wino_f32_amx_multiply(split, t->m, top, t->m - top, pb, t->n, 0, left, t->k, rest,
                                      t->ldc, acc, edge);
                wino_f32_amx_multiply(split, t->m, top, t->m - top, pb, t->n, left, t->n - left,
                                      t->k, rest + left, t->ldc, acc, edge);
                snprintf(what, sizeof what, "amx-bf16 split A^T, in pieces, acc=%d", acc);
                bad += check_c(t, c, ref, bound, c0, acc, 1, what);
            }
            free(at);
            free(split);
            free(pb);
            free(edge);
        }
        snprintf(what, sizeof what, "%s m=%d n=%d k=%d lda=%ld ldb=%ld ldc=%ld (plain+packed, acc 0+1)",
                 wino_isa_name(isa), t->m, t->n, t->k, (long)t->lda, (long)t->ldb, (long)t->ldc);
        test_check(counts, bad == 0, what);
    }
    free(a);
    free(b);
    free(c);
    free(c0);
    free(ref);
    free(bound);
}

static int rand_int(struct test_rng *rng, int lo, int hi)
{
    return lo + (int)(test_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

int main(void)
{
    struct test_counts counts = {0, 0};
    struct test_rng rng;
    const enum wino_isa max_isa = wino_f32_packed_gemm_isa();
    static const int fixed[][3] = {
        {1, 1, 1},     {1, 1, 7},    {2, 3, 1},    {13, 31, 1},  {14, 32, 16}, {15, 33, 17},
        {28, 64, 256}, {29, 65, 257}, {6, 16, 5},  {7, 17, 3},   {5, 15, 2},   {97, 101, 103},
        {3, 512, 19},  {31, 7, 600},  {64, 48, 513}, {100, 47, 37}, {1, 1100, 3}, {17, 1057, 9},
        {200, 96, 64}, {41, 16, 512}, {16, 16, 16}, {2, 2, 300},  {127, 1, 129}, {1, 129, 127},
    };
    size_t f;
    int r;
    char name[64];

    rng.s = test_seed();
    printf("cpu isa: %s, packed GEMM: %s\n", wino_isa_name(wino_cpu_isa()),
           wino_isa_name(max_isa));
    test_check(&counts, wino_cpu_isa() >= WINO_ISA_SCALAR && wino_cpu_isa() <= WINO_ISA_AVX512,
               "wino_cpu_isa in range");
    test_check(&counts, max_isa == wino_cpu_isa() ||
                            (max_isa == WINO_ISA_AMX_BF16 && wino_cpu_isa() == WINO_ISA_AVX512),
               "wino_f32_packed_gemm_isa: the vector ISA, or AMX-BF16 beside AVX-512");
    test_check(&counts, !strcmp(wino_isa_name(WINO_ISA_SCALAR), "scalar") &&
                            !strcmp(wino_isa_name(WINO_ISA_AVX2), "avx2") &&
                            !strcmp(wino_isa_name(WINO_ISA_AVX512), "avx512") &&
                            !strcmp(wino_isa_name(WINO_ISA_AMX_BF16), "amx-bf16"),
               "wino_isa_name");

    for (f = 0; f < sizeof fixed / sizeof fixed[0]; f++) {
        struct gemm_case t;
        t.m = fixed[f][0];
        t.n = fixed[f][1];
        t.k = fixed[f][2];
        t.lda = t.k;
        t.ldb = t.n;
        t.ldc = t.n;
        run_case(&counts, &rng, &t, max_isa);
    }
    /* Every micro-panel row count: m cut into nearly equal panels of at most 14 rows, with A
     * small (B panels outermost) and large (row panels outermost). */
    for (r = 1; r <= 30; r++) {
        struct gemm_case t = {r, 40, 19, 19, 40, 40};
        run_case(&counts, &rng, &t, max_isa);
        t.m = 40 + r;
        t.n = 33;
        t.k = 300;
        t.lda = 300;
        t.ldb = 33;
        t.ldc = 33;
        run_case(&counts, &rng, &t, max_isa);
    }
    /* Large and 4 KiB-aliasing leading dimensions. */
    {
        struct gemm_case t = {33, 45, 70, 1024, 1024 + 3, 1024 + 17};
        run_case(&counts, &rng, &t, max_isa);
        t.m = 20;
        t.n = 40;
        t.k = 300;
        t.lda = 4096;
        t.ldb = 2048;
        t.ldc = 4096 + 1;
        run_case(&counts, &rng, &t, max_isa);
    }
    /* Random shapes (Winograd-like ranges, scaled down), random padding of the strides. */
    for (r = 0; r < 24; r++) {
        struct gemm_case t;
        t.m = rand_int(&rng, 1, 160);
        t.n = rand_int(&rng, 1, 140);
        t.k = rand_int(&rng, 1, 320);
        t.lda = t.k + (r % 3 ? rand_int(&rng, 0, 40) : 0);
        t.ldb = t.n + (r % 2 ? rand_int(&rng, 0, 40) : 0);
        t.ldc = t.n + (r % 4 ? rand_int(&rng, 0, 40) : 0);
        run_case(&counts, &rng, &t, max_isa);
    }
    /* Degenerate: k = 0 writes zeros (accumulate 0) or leaves C (accumulate 1); m or n = 0 is
     * a no-op. */
    {
        int isa, ok = 1;
        for (isa = WINO_ISA_SCALAR; isa <= (int)max_isa; isa++) {
            float c[6] = {NAN, NAN, NAN, 1.0f, 2.0f, 3.0f};
            float a[1] = {1.0f}, b[1] = {1.0f};
            wino_f32_gemm(isa, 1, 3, 0, a, 1, b, 3, c, 3, 0, NULL);
            wino_f32_gemm(isa, 1, 3, 0, a, 1, b, 3, c + 3, 3, 1, NULL);
            ok &= c[0] == 0.0f && c[1] == 0.0f && c[2] == 0.0f && c[3] == 1.0f && c[5] == 3.0f;
            wino_f32_gemm(isa, 0, 3, 1, a, 1, b, 3, c, 3, 0, NULL);
            wino_f32_gemm(isa, 1, 0, 1, a, 1, b, 3, c + 3, 3, 0, NULL);
            ok &= c[0] == 0.0f && c[3] == 1.0f;
        }
        snprintf(name, sizeof name, "k = 0 and empty m, n");
        test_check(&counts, ok, name);
    }
    return test_report(&counts);
}
