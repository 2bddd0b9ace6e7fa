/* GPU check of the generated CUDA device transforms: every default tile's input, filter and
 * output transform runs on the device over random tiles and is compared with the exact matrices
 * (rounded to double) applied on the host. Outputs are poisoned with NaN first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "wino_gen.h"

#include "cuda/generated/wino_f32_transforms_f2x2_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f8x8_2x2.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f8x8_3x3.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f7x7_4x4.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f6x6_5x5.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f5x5_6x6.cuh"
#include "cuda/generated/wino_f32_transforms_f2x2_7x7.cuh"
#include "cuda/generated/wino_f32_transforms_f3x3_7x7.cuh"
#include "cuda/generated/wino_f32_transforms_f4x4_7x7.cuh"

/* The default tiles: F(m x m, r x r) with r in 2..7, m in 2..8, alpha <= 10. */
#define DEFAULT_TILES(X) \
    X(f2x2_2x2, 2, 2, 3) \
    X(f3x3_2x2, 3, 2, 4) \
    X(f4x4_2x2, 4, 2, 5) \
    X(f5x5_2x2, 5, 2, 6) \
    X(f6x6_2x2, 6, 2, 7) \
    X(f7x7_2x2, 7, 2, 8) \
    X(f8x8_2x2, 8, 2, 9) \
    X(f2x2_3x3, 2, 3, 4) \
    X(f3x3_3x3, 3, 3, 5) \
    X(f4x4_3x3, 4, 3, 6) \
    X(f5x5_3x3, 5, 3, 7) \
    X(f6x6_3x3, 6, 3, 8) \
    X(f7x7_3x3, 7, 3, 9) \
    X(f8x8_3x3, 8, 3, 10) \
    X(f2x2_4x4, 2, 4, 5) \
    X(f3x3_4x4, 3, 4, 6) \
    X(f4x4_4x4, 4, 4, 7) \
    X(f5x5_4x4, 5, 4, 8) \
    X(f6x6_4x4, 6, 4, 9) \
    X(f7x7_4x4, 7, 4, 10) \
    X(f2x2_5x5, 2, 5, 6) \
    X(f3x3_5x5, 3, 5, 7) \
    X(f4x4_5x5, 4, 5, 8) \
    X(f5x5_5x5, 5, 5, 9) \
    X(f6x6_5x5, 6, 5, 10) \
    X(f2x2_6x6, 2, 6, 7) \
    X(f3x3_6x6, 3, 6, 8) \
    X(f4x4_6x6, 4, 6, 9) \
    X(f5x5_6x6, 5, 6, 10) \
    X(f2x2_7x7, 2, 7, 8) \
    X(f3x3_7x7, 3, 7, 9) \
    X(f4x4_7x7, 4, 7, 10)

typedef void (*transform_kernel)(const float *in, float *out, int n);

/* One kernel per tile and stage: thread t transforms tile t (row-major, contiguous). */
#define DEFINE_KERNELS(T, M, R, A)                                                              \
    __global__ void input_##T(const float *in, float *out, int n)                              \
    {                                                                                           \
        int t = blockIdx.x * blockDim.x + threadIdx.x;                                          \
        if (t >= n)                                                                             \
            return;                                                                             \
        float d[A][A], v[A][A];                                                                 \
        for (int i = 0; i < A * A; i++)                                                         \
            d[i / A][i % A] = in[(size_t)t * A * A + i];                                        \
        wino_f32_input_transform_##T(d, v);                                                     \
        for (int i = 0; i < A * A; i++)                                                         \
            out[(size_t)t * A * A + i] = v[i / A][i % A];                                       \
    }                                                                                           \
    __global__ void filter_##T(const float *in, float *out, int n)                             \
    {                                                                                           \
        int t = blockIdx.x * blockDim.x + threadIdx.x;                                          \
        if (t >= n)                                                                             \
            return;                                                                             \
        float g[R][R], u[A][A];                                                                 \
        for (int i = 0; i < R * R; i++)                                                         \
            g[i / R][i % R] = in[(size_t)t * R * R + i];                                        \
        wino_f32_filter_transform_##T(g, u);                                                    \
        for (int i = 0; i < A * A; i++)                                                         \
            out[(size_t)t * A * A + i] = u[i / A][i % A];                                       \
    }                                                                                           \
    __global__ void output_##T(const float *in, float *out, int n)                             \
    {                                                                                           \
        int t = blockIdx.x * blockDim.x + threadIdx.x;                                          \
        if (t >= n)                                                                             \
            return;                                                                             \
        float mm[A][A], y[M][M];                                                                \
        for (int i = 0; i < A * A; i++)                                                         \
            mm[i / A][i % A] = in[(size_t)t * A * A + i];                                       \
        wino_f32_output_transform_##T(mm, y);                                                   \
        for (int i = 0; i < M * M; i++)                                                         \
            out[(size_t)t * M * M + i] = y[i / M][i % M];                                       \
    }
DEFAULT_TILES(DEFINE_KERNELS)

#define CUDA_OK(call)                                                                           \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__,    \
                   #call);                                                                      \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

enum { TILES = 4099 }; /* not a multiple of the block size: the tail is exercised */

/* Runs kernel k on TILES random tiles of in_dim x in_dim and checks out = L X L^T elementwise
 * against the double product, within 1e-5 of sum |L| |X| |L^T| (FP32 rounding of the recipe). */
static int check(const char *name, int m, int r, enum wino_matrix which, transform_kernel k,
                 unsigned seed)
{
    wino_tile *tile = NULL;
    if (wino_tile_create(m, r, NULL, 0, &tile)) {
        printf("%s: %s\n", name, wino_last_error());
        return 0;
    }
    int rows, cols;
    wino_tile_matrix_shape(tile, which, &rows, &cols);
    double *L = (double *)malloc(sizeof(double) * rows * cols);
    wino_tile_matrix_double(tile, which, L);
    const size_t nin = (size_t)TILES * cols * cols, nout = (size_t)TILES * rows * rows;
    float *x = (float *)malloc(nin * sizeof(float)), *y = (float *)malloc(nout * sizeof(float));
    srand(seed);
    for (size_t i = 0; i < nin; i++)
        x[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
    float *dx, *dy;
    CUDA_OK(cudaMalloc(&dx, nin * sizeof(float)));
    CUDA_OK(cudaMalloc(&dy, nout * sizeof(float)));
    CUDA_OK(cudaMemcpy(dx, x, nin * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dy, 0xff, nout * sizeof(float))); /* NaN poison */
    k<<<(TILES + 127) / 128, 128>>>(dx, dy, TILES);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(y, dy, nout * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaFree(dx));
    CUDA_OK(cudaFree(dy));
    double worst = 0.0;
    int ok = 1;
    for (int t = 0; t < TILES && ok; t++) {
        const float *X = x + (size_t)t * cols * cols;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < rows; j++) {
                double exact = 0.0, scale = 0.0;
                for (int a = 0; a < cols; a++)
                    for (int b = 0; b < cols; b++) {
                        exact += L[i * cols + a] * X[a * cols + b] * L[j * cols + b];
                        scale += fabs(L[i * cols + a] * X[a * cols + b] * L[j * cols + b]);
                    }
                double err = fabs((double)y[(size_t)t * rows * rows + i * rows + j] - exact);
                if (!(err <= 1e-5 * scale + 1e-30)) {
                    printf("  %s tile %d (%d,%d): got %.9g, exact %.9g\n", name, t, i, j,
                           y[(size_t)t * rows * rows + i * rows + j], exact);
                    ok = 0;
                    break;
                }
                if (scale > 0 && err / scale > worst)
                    worst = err / scale;
            }
    }
    printf("%s: %s (worst error / scale %.2e)\n", name, ok ? "PASS" : "FAIL", worst);
    free(L), free(x), free(y);
    wino_tile_destroy(tile);
    return ok;
}

int main(void)
{
    int passed = 0, failed = 0;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s\n", prop.name);
#define RUN_CHECKS(T, M, R, A)                                                                  \
    (check("input  " #T, M, R, WINO_MATRIX_BT, input_##T, 1u) ? passed++ : failed++);         \
    (check("filter " #T, M, R, WINO_MATRIX_G, filter_##T, 2u) ? passed++ : failed++);         \
    (check("output " #T, M, R, WINO_MATRIX_AT, output_##T, 3u) ? passed++ : failed++);
    DEFAULT_TILES(RUN_CHECKS)
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
