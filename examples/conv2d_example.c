/* A first wino program: one FP32 convolution, checked at one output against a plain loop.
 * Build (README, "Use from your project"):
 *     cc examples/conv2d_example.c -I include build/libwino.a -lgmp -lm -lpthread
 * (a build with CUDA also needs -L/usr/local/cuda/lib64 -lcublas -lcudart -lstdc++). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "wino.h"

enum { N = 1, C = 8, H = 16, W = 16, K = 8, R = 3, S = 3, PAD = 1 };

int main(void)
{
    /* NCHW input, KCRS filter, stride 1, padding 1: the output is N x K x 16 x 16 */
    const struct wino_conv2d_desc desc = wino_conv2d_desc_make(N, C, H, W, K, R, S, PAD, PAD);
    static float x[N * C * H * W], w[K * C * R * S], y[N * K * H * W];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)(i % 5) * 0.2f - 0.4f;
    for (int i = 0; i < K * C * R * S; i++)
        w[i] = (float)(i % 7) * 0.1f - 0.3f;

    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *workspace = NULL;
    if (wino_conv2d_create(&desc, w, NULL, NULL, &op) != WINO_SUCCESS ||
        wino_conv2d_workspace_size(op, &bytes) != WINO_SUCCESS ||
        (bytes && !(workspace = aligned_alloc(64, (bytes + 63) / 64 * 64))) ||
        wino_conv2d_run(op, x, y, workspace, bytes) != WINO_SUCCESS) {
        fprintf(stderr, "wino: %s\n", wino_last_error());
        return 1;
    }
    enum wino_algo algo;
    int tile_m;
    wino_conv2d_algo(op, &algo, &tile_m);

    /* output (k, p, q) = (3, 5, 7) by the definition in wino.h */
    const int k = 3, p = 5, q = 7;
    double expect = 0.0;
    for (int c = 0; c < C; c++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < S; j++) {
                const int h = p - PAD + i, v = q - PAD + j;
                if (h >= 0 && h < H && v >= 0 && v < W)
                    expect += (double)x[(c * H + h) * W + v] * w[((k * C + c) * R + i) * S + j];
            }
    const float got = y[(k * H + p) * W + q];
    printf("wino %s: %s F(%dx%d, 3x3), y[0][3][5][7] = %.6f (direct loop: %.6f)\n",
           wino_version(), algo == WINO_ALGO_WINOGRAD ? "Winograd" : "direct", tile_m, tile_m,
           got, expect);
    wino_conv2d_destroy(op);
    free(workspace);
    return fabs(got - expect) <= 1e-4 * (1.0 + fabs(expect)) ? 0 : 1;
}
