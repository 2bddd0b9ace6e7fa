/* INT8 GEMM (src/cpu/gemm_s8.h): every ISA this machine runs (scalar always) against a plain
 * int64 reference, exact equality. Awkward and random sizes (m, n, k = 1, odd, k not a multiple
 * of 4 or 64, k up to 1100 and the largest k the contract allows), padded and misaligned A with
 * random bytes past k (they must be ignored), padded ldb and ldc, extreme values (A = 0 or 255,
 * B = -128 or 127) for the +128 offset compensation. C is poisoned before every checked call;
 * its row padding (ldc > n) holds a sentinel that must survive. Buffers are allocated to their
 * exact sizes so that ASan catches any access past them. Two threads also detect the ISA
 * concurrently (the AMX permission request runs once) and run a GEMM each. The chunked GEMM
 * (VNNI, AMX) reads A's 64-byte chunks at random offsets of one exactly sized buffer, with A
 * as int8 + 128 or uint8, and tells of each row once it holds its result. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_s8.h"
#include "test_util.h"

static const int32_t POISON = (int32_t)0x5a5a5a5a, SENTINEL = (int32_t)0x13572468;

enum fill { FILL_RANDOM, FILL_MIN, FILL_MAX };

struct gemm_case {
    int m, n, k;
    ptrdiff_t lda, ldb, ldc;
    int a_offset;      /* A starts this many bytes past a malloc'd (16-byte aligned) pointer */
    enum fill fa, fb;  /* A: 0 / 255, B: -128 / 127 for FILL_MIN / FILL_MAX */
};

static void *xalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int rand_int(struct test_rng *rng, int lo, int hi)
{
    return lo + (int)(test_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* Packs B, runs one GEMM on a poisoned C (m rows of ldc, the last row only n long) and compares
 * with ref; returns the number of wrong elements (prints the first few). */
static long run_isa(enum wino_s8_isa isa, const struct gemm_case *t, const uint8_t *a,
                    const int8_t *b, const int64_t *ref)
{
    const size_t csz = (size_t)(t->m - 1) * (size_t)t->ldc + (size_t)t->n;
    void *pb = test_alloc64(wino_s8_gemm_packed_b_bytes(isa, t->k, t->n));
    void *scratch = test_alloc64(wino_s8_gemm_scratch_bytes(isa, t->m, t->n, t->k));
    int32_t *c = xalloc(csz * sizeof(int32_t));
    long bad = 0;
    size_t e;
    int i, j;
    wino_s8_gemm_pack_b(isa, t->k, t->n, b, t->ldb, pb);
    for (e = 0; e < csz; e++)
        c[e] = (ptrdiff_t)(e % (size_t)t->ldc) < t->n ? POISON : SENTINEL;
    wino_s8_gemm(isa, t->m, t->n, t->k, a, t->lda, pb, c, t->ldc, scratch);
    for (i = 0; i < t->m; i++)
        for (j = 0; j < (i == t->m - 1 ? t->n : (int)t->ldc); j++) {
            const int32_t got = c[(ptrdiff_t)i * t->ldc + j];
            const int64_t want = j < t->n ? ref[(size_t)i * (size_t)t->n + (size_t)j] : SENTINEL;
            if ((int64_t)got != want) {
                if (bad < 3)
                    printf("  %s: C[%d][%d] = %ld, want %lld%s\n", wino_s8_isa_name(isa), i, j,
                           (long)got, (long long)want, j < t->n ? "" : " (row padding)");
                bad++;
            }
        }
    free(pb);
    free(scratch);
    free(c);
    return bad;
}

static void run_case(struct test_counts *counts, struct test_rng *rng, const struct gemm_case *t,
                     enum wino_s8_isa max_isa)
{
    const size_t asz = (size_t)t->m * (size_t)t->lda;
    const size_t bsz = (size_t)(t->k - 1) * (size_t)t->ldb + (size_t)t->n;
    uint8_t *abuf = xalloc((size_t)t->a_offset + asz), *a = abuf + t->a_offset;
    int8_t *b = xalloc(bsz);
    int64_t *ref = xalloc((size_t)t->m * (size_t)t->n * sizeof(int64_t));
    size_t e;
    int i, j, p, isa;

    /* Bytes past k in each row of A and the padding of B are random in every case. */
    for (e = 0; e < asz; e++)
        a[e] = (uint8_t)test_rng_next(rng);
    for (e = 0; e < bsz; e++)
        b[e] = (int8_t)(uint8_t)test_rng_next(rng);
    for (i = 0; i < t->m; i++)
        for (p = 0; p < t->k && t->fa != FILL_RANDOM; p++)
            a[(ptrdiff_t)i * t->lda + p] = t->fa == FILL_MIN ? 0 : 255;
    for (p = 0; p < t->k; p++)
        for (j = 0; j < t->n && t->fb != FILL_RANDOM; j++)
            b[(ptrdiff_t)p * t->ldb + j] = t->fb == FILL_MIN ? -128 : 127;
    for (i = 0; i < t->m; i++)
        for (j = 0; j < t->n; j++) {
            int64_t s = 0;
            for (p = 0; p < t->k; p++)
                s += ((int64_t)a[(ptrdiff_t)i * t->lda + p] - 128) *
                     (int64_t)b[(ptrdiff_t)p * t->ldb + j];
            ref[(size_t)i * (size_t)t->n + (size_t)j] = s;
        }

    for (isa = WINO_S8_SCALAR; isa <= (int)max_isa; isa++) {
        char what[200];
        const long bad = run_isa((enum wino_s8_isa)isa, t, a, b, ref);
        static const char *const fill_name[] = {"random", "min", "max"};
        snprintf(what, sizeof what, "%s m=%d n=%d k=%d lda=%ld ldb=%ld ldc=%ld a+%d A %s B %s",
                 wino_s8_isa_name((enum wino_s8_isa)isa), t->m, t->n, t->k, (long)t->lda,
                 (long)t->ldb, (long)t->ldc, t->a_offset, fill_name[t->fa], fill_name[t->fb]);
        test_check(counts, bad == 0, what);
    }
    free(abuf);
    free(b);
    free(ref);
}

/* Tight strides: lda = wino_s8_gemm_lda(k), ldb = n, ldc = n. */
static struct gemm_case tight(int m, int n, int k, enum fill fa, enum fill fb)
{
    struct gemm_case t;
    t.m = m;
    t.n = n;
    t.k = k;
    t.lda = (ptrdiff_t)wino_s8_gemm_lda(k);
    t.ldb = n;
    t.ldc = n;
    t.a_offset = 0;
    t.fa = fa;
    t.fb = fb;
    return t;
}

/* What a chunked GEMM's rows_done saw: the next row it expects, and the ranges that came out
 * of order or whose rows of C were not yet the reference's. */
struct rows_seen {
    const int32_t *c;
    const int64_t *ref;
    int n, next;
    long bad;
};

static void check_rows_done(void *ctx, int i0, int rows)
{
    struct rows_seen *s = ctx;
    s->bad += i0 != s->next || rows < 1;
    for (size_t e = (size_t)i0 * (size_t)s->n; e < (size_t)(i0 + rows) * (size_t)s->n; e++)
        s->bad += (int64_t)s->c[e] != s->ref[e];
    s->next = i0 + rows;
}

/* wino_s8_gemm_chunked on isa: A's chunks at random offsets into one buffer, rows overlapping
 * (lda below k), k not a multiple of 64, the buffer exactly as long as the contract asks (the
 * chunks of the rows up to m rounded up to 16 readable), against the int64 reference; A read
 * as uint8 (wino_s8_gemm_unsigned_a) where unsigned_a; every row told done once, in order,
 * when it holds its result. */
static void chunked_case(struct test_counts *counts, struct test_rng *rng, enum wino_s8_isa isa,
                         int m, int n, int kt, int unsigned_a)
{
    const int k = 64 * kt - rand_int(rng, 0, 63), rows = (m + 15) / 16 * 16;
    const ptrdiff_t lda = rand_int(rng, 1, 96);
    const size_t reach = (size_t)rand_int(rng, 64, 4000); /* offsets below reach - 64 */
    const size_t bytes = (size_t)(rows - 1) * (size_t)lda + reach;
    int32_t *chunk = xalloc(sizeof(int32_t) * (size_t)kt);
    uint8_t *a = xalloc(bytes);
    int8_t *b = xalloc((size_t)k * (size_t)n);
    int64_t *ref = xalloc(sizeof(int64_t) * (size_t)m * (size_t)n);
    int32_t *c = xalloc(sizeof(int32_t) * (size_t)m * (size_t)n);
    void *pb = test_alloc64(wino_s8_gemm_packed_b_bytes(isa, k, n));
    void *scratch = test_alloc64(wino_s8_gemm_scratch_bytes(isa, m, n, k));
    for (int t = 0; t < kt; t++)
        chunk[t] = rand_int(rng, 0, (int)reach - 64);
    for (size_t e = 0; e < bytes; e++)
        a[e] = (uint8_t)test_rng_next(rng);
    for (size_t e = 0; e < (size_t)k * (size_t)n; e++)
        b[e] = (int8_t)(uint8_t)test_rng_next(rng);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            int64_t sum = 0;
            for (int p = 0; p < k; p++)
                sum += ((int64_t)a[i * lda + chunk[p / 64] + p % 64] - (unsigned_a ? 0 : 128)) *
                       b[p * n + j];
            ref[(size_t)i * (size_t)n + (size_t)j] = sum;
        }
    wino_s8_gemm_pack_b(isa, k, n, b, n, pb);
    if (unsigned_a)
        wino_s8_gemm_unsigned_a(pb, n);
    for (size_t e = 0; e < (size_t)m * (size_t)n; e++)
        c[e] = POISON;
    struct rows_seen seen = {c, ref, n, 0, 0};
    const struct wino_s8_rows_done done = {check_rows_done, &seen};
    wino_s8_gemm_chunked(isa, m, n, k, a, lda, chunk, pb, c, n, scratch, &done);
    long bad = seen.bad + (seen.next != m);
    for (size_t e = 0; e < (size_t)m * (size_t)n; e++)
        bad += (int64_t)c[e] != ref[e];
    char what[200];
    snprintf(what, sizeof what,
             "%s chunked m=%d n=%d k=%d lda=%ld, %d chunks within %zu bytes, A %s, rows done",
             wino_s8_isa_name(isa), m, n, k, (long)lda, kt, reach,
             unsigned_a ? "uint8" : "int8 + 128");
    test_check(counts, bad == 0, what);
    free(chunk), free(a), free(b), free(ref), free(c), free(pb), free(scratch);
}

/* Thread body: detect the ISA (concurrently with the other thread) and run one GEMM with it. */
struct thread_job {
    enum wino_s8_isa isa;
    long bad;
};

static void *thread_main(void *arg)
{
    struct thread_job *job = arg;
    enum { M = 37, N = 45, K = 150 };
    const ptrdiff_t lda = (ptrdiff_t)wino_s8_gemm_lda(K);
    int8_t b[K * N];
    uint8_t *a;
    int64_t ref[M * N];
    struct gemm_case t = tight(M, N, K, FILL_RANDOM, FILL_RANDOM);
    int i, j, p;
    job->isa = wino_s8_isa();
    a = xalloc((size_t)M * (size_t)lda);
    for (i = 0; i < M * (int)lda; i++)
        a[i] = (uint8_t)(i * 37 + 11);
    for (i = 0; i < K * N; i++)
        b[i] = (int8_t)(i * 13 - 7);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            int64_t s = 0;
            for (p = 0; p < K; p++)
                s += ((int64_t)a[i * lda + p] - 128) * b[p * N + j];
            ref[i * N + j] = s;
        }
    job->bad = run_isa(job->isa, &t, a, b, ref);
    free(a);
    return NULL;
}

int main(void)
{
    struct test_counts counts = {0, 0};
    struct test_rng rng;
    enum wino_s8_isa max_isa;
    static const int fixed[][3] = {
        {1, 1, 1},     {1, 1, 4},     {1, 16, 64},  {2, 3, 5},     {13, 17, 3},  {14, 32, 64},
        {15, 33, 65},  {16, 16, 16},  {17, 31, 63}, {28, 64, 128}, {29, 65, 129}, {31, 47, 7},
        {32, 32, 64},  {33, 48, 100}, {47, 1, 250}, {1, 129, 127}, {49, 64, 64},  {3, 512, 19},
        {64, 80, 1000}, {5, 7, 1100}, {100, 15, 2}, {127, 130, 66},
    };
    struct thread_job jobs[2];
    pthread_t threads[2];
    int started[2];
    size_t f;
    int r, ok;
    char name[96];

    rng.s = test_seed();

    /* Concurrent first detection from two threads, then a GEMM in each. */
    for (r = 0; r < 2; r++)
        started[r] = pthread_create(&threads[r], NULL, thread_main, &jobs[r]) == 0;
    for (r = 0; r < 2; r++)
        if (started[r])
            pthread_join(threads[r], NULL);
    max_isa = wino_s8_isa();
    ok = started[0] && started[1] && jobs[0].isa == max_isa && jobs[1].isa == max_isa && jobs[0].bad == 0 &&
         jobs[1].bad == 0;
    snprintf(name, sizeof name, "two threads: both detect %s, exact GEMM in each",
             wino_s8_isa_name(max_isa));
    test_check(&counts, ok, name);

    printf("best int8 isa: %s; testing:", wino_s8_isa_name(max_isa));
    for (r = WINO_S8_SCALAR; r <= (int)max_isa; r++)
        printf(" %s", wino_s8_isa_name((enum wino_s8_isa)r));
    printf("\n");
    if (max_isa < WINO_S8_AVX2)
        printf("NOTE: AVX2 not available on this CPU/OS: its kernels are NOT tested\n");
    if (max_isa < WINO_S8_VNNI)
        printf("NOTE: AVX512-VNNI not available on this CPU/OS: its kernels are NOT tested\n");
    if (max_isa < WINO_S8_AMX)
        printf("NOTE: AMX-INT8 not available on this CPU/OS (or permission refused): its "
               "kernels are NOT tested\n");

    test_check(&counts, !strcmp(wino_s8_isa_name(WINO_S8_SCALAR), "scalar") &&
                            !strcmp(wino_s8_isa_name(WINO_S8_AVX2), "avx2") &&
                            !strcmp(wino_s8_isa_name(WINO_S8_VNNI), "avx512-vnni") &&
                            !strcmp(wino_s8_isa_name(WINO_S8_AMX), "amx"),
               "wino_s8_isa_name");
    test_check(&counts, wino_s8_gemm_lda(1) == 64 && wino_s8_gemm_lda(64) == 64 &&
                            wino_s8_gemm_lda(65) == 128 && wino_s8_gemm_lda(1000) == 1024,
               "wino_s8_gemm_lda rounds k up to 64");

    for (f = 0; f < sizeof fixed / sizeof fixed[0]; f++) {
        const struct gemm_case t =
            tight(fixed[f][0], fixed[f][1], fixed[f][2], FILL_RANDOM, FILL_RANDOM);
        run_case(&counts, &rng, &t, max_isa);
    }
    /* Extremes for the offset compensation, including the largest k of the contract
     * (k * 255 * 128 <= 2^31 - 1). */
    {
        static const int shapes[][3] = {{33, 35, 67}, {16, 32, 1024}, {2, 17, 65793}};
        static const enum fill fills[][2] = {
            {FILL_MIN, FILL_MIN}, {FILL_MIN, FILL_MAX}, {FILL_MAX, FILL_MIN}, {FILL_MAX, FILL_MAX},
            {FILL_MIN, FILL_RANDOM}, {FILL_MAX, FILL_RANDOM}, {FILL_RANDOM, FILL_MIN},
            {FILL_RANDOM, FILL_MAX}};
        size_t s, q;
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (q = 0; q < sizeof fills / sizeof fills[0]; q++) {
                if (shapes[s][2] > 10000 && q >= 4)
                    break; /* the four corner fills suffice for the huge k */
                const struct gemm_case t =
                    tight(shapes[s][0], shapes[s][1], shapes[s][2], fills[q][0], fills[q][1]);
                run_case(&counts, &rng, &t, max_isa);
            }
    }
    /* Winograd-like shapes, m * lda past the VNNI kernel's 512 KiB row blocks (and the AVX2
     * kernel's 256 KiB of widened rows), and packed B past the AMX kernel's 1 MiB column blocks
     * (64 panels of k = 1000, then 5). */
    {
        static const int shapes[][3] = {
            {196, 256, 256}, {49, 512, 512}, {1100, 40, 520}, {20, 1100, 1000}};
        for (f = 0; f < sizeof shapes / sizeof shapes[0]; f++) {
            const struct gemm_case t =
                tight(shapes[f][0], shapes[f][1], shapes[f][2], FILL_RANDOM, FILL_RANDOM);
            run_case(&counts, &rng, &t, max_isa);
        }
    }
    /* The chunked GEMM, on the ISAs that have it. */
    for (r = WINO_S8_VNNI; r <= (int)max_isa; r++) {
        /* the last: packed B past the AMX kernel's 1 MiB column block, rows told at the end */
        static const int shapes[][3] = {{1, 1, 1},   {15, 17, 3}, {16, 32, 9},  {17, 45, 2},
                                        {33, 64, 4}, {64, 70, 9}, {5, 129, 18}, {40, 1100, 16}};
        for (f = 0; f < sizeof shapes / sizeof shapes[0]; f++)
            chunked_case(&counts, &rng, (enum wino_s8_isa)r, shapes[f][0], shapes[f][1],
                         shapes[f][2], (int)(f % 2));
    }
    /* Random shapes, padded strides, misaligned A. */
    for (r = 0; r < 40; r++) {
        struct gemm_case t;
        t.m = rand_int(&rng, 1, 300);
        t.n = rand_int(&rng, 1, 200);
        t.k = rand_int(&rng, 1, r % 5 ? 300 : 1100);
        t.lda = (ptrdiff_t)wino_s8_gemm_lda(t.k) + (r % 3 ? rand_int(&rng, 0, 100) : 0);
        t.ldb = t.n + (r % 2 ? rand_int(&rng, 0, 40) : 0);
        t.ldc = t.n + (r % 4 ? rand_int(&rng, 0, 40) : 0);
        t.a_offset = r % 2 ? rand_int(&rng, 1, 63) : 0;
        t.fa = FILL_RANDOM;
        t.fb = FILL_RANDOM;
        run_case(&counts, &rng, &t, max_isa);
    }
    return test_report(&counts);
}
