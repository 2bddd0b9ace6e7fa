/* A program outside wino's tree, built against an installed wino (tests/consumer/run.sh): one
 * small FP32 convolution, checked against the plain loop below; the library's version is its
 * header's. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wino.h>

enum { N = 1, C = 3, H = 9, W = 9, K = 4, R = 3, S = 3, PAD = 1 };

static float x[N][C][H][W], w[K][C][R][S], y[N][K][H][W];

/* y[n][k][p][q] = sum over c, i, j of x[n][c][p - PAD + i][q - PAD + j] w[k][c][i][j]. */
static double direct(int n, int k, int p, int q)
{
    double sum = 0;
    for (int c = 0; c < C; c++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < S; j++) {
                int h = p - PAD + i, v = q - PAD + j;
                if (h >= 0 && h < H && v >= 0 && v < W)
                    sum += (double)x[n][c][h][v] * w[k][c][i][j];
            }
    return sum;
}

static int fail(const char *what, enum wino_status st)
{
    printf("FAIL %s: %s (%s)\n", what, wino_status_string(st), wino_last_error());
    return 1;
}

int main(void)
{
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", WINO_VERSION_MAJOR, WINO_VERSION_MINOR,
             WINO_VERSION_PATCH);
    if (strcmp(wino_version(), header) != 0) {
        printf("FAIL the library is %s, its header %s\n", wino_version(), header);
        return 1;
    }
    srand(1);
    for (size_t i = 0; i < sizeof x / sizeof x[0][0][0][0]; i++)
        (&x[0][0][0][0])[i] = (float)rand() / RAND_MAX - 0.5f;
    for (size_t i = 0; i < sizeof w / sizeof w[0][0][0][0]; i++)
        (&w[0][0][0][0])[i] = (float)rand() / RAND_MAX - 0.5f;

    struct wino_conv2d_desc desc = wino_conv2d_desc_make(N, C, H, W, K, R, S, PAD, PAD);
    wino_conv2d *op = NULL;
    enum wino_status st = wino_conv2d_create(&desc, w, NULL, NULL, &op);
    if (st != WINO_SUCCESS)
        return fail("wino_conv2d_create", st);
    size_t bytes = 0;
    void *workspace = NULL;
    st = wino_conv2d_workspace_size(op, &bytes);
    if (st == WINO_SUCCESS && bytes > 0 && posix_memalign(&workspace, 64, bytes) != 0)
        st = WINO_OUT_OF_MEMORY;
    if (st == WINO_SUCCESS)
        st = wino_conv2d_run(op, x, y, workspace, bytes);
    free(workspace);
    wino_conv2d_destroy(op);
    if (st != WINO_SUCCESS)
        return fail("wino_conv2d_run", st);

    double worst = 0;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int p = 0; p < H; p++)
                for (int q = 0; q < W; q++)
                    worst = fmax(worst, fabs(y[n][k][p][q] - direct(n, k, p, q)));
    if (!(worst < 1e-4)) {
        printf("FAIL largest difference from the direct loop %g\n", worst);
        return 1;
    }
    printf("PASS wino %s: %dx%d convolution, largest difference %.2g\n", wino_version(), R, S,
           worst);
    return 0;
}
