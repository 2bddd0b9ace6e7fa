/* Small helpers shared by the C tests: seeded RNG, pass/fail counting, the closing line. */
#ifndef WINO_TESTS_TEST_UTIL_H
#define WINO_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L
/* 64-byte aligned memory (NULL for 0 bytes); exits with status 2 when out of memory. Tests
 * that use it define _POSIX_C_SOURCE before their includes. */
static inline void *test_alloc64(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    if (posix_memalign(&p, 64, bytes) != 0) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}
#endif

struct test_rng {
    uint64_t s;
};

/* xorshift64*: deterministic per seed, good enough for test data. */
static inline uint64_t test_rng_next(struct test_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

/* Uniform in (-1, 1). */
static inline double test_rng_sym(struct test_rng *r)
{
    return ((double)(test_rng_next(r) >> 11) + 0.5) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Seed from WINO_TEST_SEED, else a fixed default; printed so failures can be replayed. */
static inline uint64_t test_seed(void)
{
    const char *s = getenv("WINO_TEST_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 10) : 20261122ULL;
    if (!seed)
        seed = 1;
    printf("seed %llu (set WINO_TEST_SEED to replay)\n", (unsigned long long)seed);
    return seed;
}

struct test_counts {
    int passed, failed;
};

static inline void test_check(struct test_counts *c, int ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    if (ok)
        c->passed++;
    else
        c->failed++;
}

/* Writes text to path, replacing it; 1 on success. */
static inline int test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0;
    if (f)
        ok &= fclose(f) == 0;
    return ok;
}

/* Lines of a text file (0 when it cannot be read). */
static inline int test_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        lines += ch == '\n';
    if (f)
        fclose(f);
    return lines;
}

/* Prints the closing line and returns the exit status. */
static inline int test_report(const struct test_counts *c)
{
    printf("%d passed, %d failed\n", c->passed, c->failed);
    return c->failed ? 1 : 0;
}

#endif
