/* The NCHW <-> NHWC copies' transpose (src/cpu/layout_f32.h) on the ISA this machine runs:
 * every element moved exactly, over sizes that cut the 32 x 32 blocks and the 8 x 8 and 16 x 16
 * register blocks at every offset, batches of matrices, 1 and 2 threads, and non-temporal
 * stores; the bytes past the output stay untouched. */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/layout_f32.h"
#include "test_util.h"

#define GUARD 64 /* floats past the output that must keep their sentinel */

static int transpose_exact(int n, size_t rows, size_t cols, int threads, int stream)
{
    const size_t all = (size_t)n * rows * cols;
    float *in = test_alloc64(sizeof(float) * all);
    float *out = test_alloc64(sizeof(float) * (all + GUARD));
    int ok = in && out;
    for (size_t e = 0; ok && e < all; e++)
        in[e] = (float)e;
    for (size_t e = 0; ok && e < all + GUARD; e++)
        out[e] = -1.0f;
    if (ok)
        wino_f32_transpose_batched(in, out, n, rows, cols, threads, stream);
    for (int b = 0; ok && b < n; b++)
        for (size_t i = 0; ok && i < rows; i++)
            for (size_t j = 0; ok && j < cols; j++)
                ok = out[(size_t)b * rows * cols + j * rows + i] ==
                     in[(size_t)b * rows * cols + i * cols + j];
    for (size_t e = all; ok && e < all + GUARD; e++)
        ok = out[e] == -1.0f;
    if (!ok)
        printf("transpose of %d x %zu x %zu, %d threads, stream %d: wrong\n", n, rows, cols,
               threads, stream);
    free(in);
    free(out);
    return ok;
}

int main(void)
{
    struct test_counts c = {0, 0};
    int ok = 1;
    for (size_t rows = 1; rows <= 41; rows++)
        for (size_t cols = 1; cols <= 41; cols++)
            ok &= transpose_exact(1, rows, cols, 1, 0);
    test_check(&c, ok, "transpose of every size 1..41 x 1..41");
    static const size_t sizes[][2] = {{64, 3136}, {3136, 64}, {3, 50176}, {72, 100}, {256, 49},
                                      {49, 256}, {17, 129}, {128, 8}};
    ok = 1;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int threads = 1; threads <= 2; threads++)
            for (int stream = 0; stream <= 1; stream++)
                ok &= transpose_exact(1 + (int)(s % 3), sizes[s][0], sizes[s][1], threads,
                                      stream);
    test_check(&c, ok, "batched layer-sized transposes, 1 and 2 threads, non-temporal stores");
    return test_report(&c);
}
