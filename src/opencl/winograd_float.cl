/* The OpenCL kernels of wino's Winograd convolution (FP32), built at run time for one layer by
 * src/opencl/conv2d_opencl.c: every size is a compile-time constant (-D), and the tile's
 * transforms are the generator's emission (src/opencl/generated) prepended to this text.
 *
 * Layer constants: N C H W K R PAD_H PAD_W P Q ALPHA TILE_M TILES_H TILES_W TILES (= N TILES_H
 * TILES_W), NHWC (0: NCHW), HALF (1: x, w and y in FP16), RELU, HAS_BIAS; INPUT_TRANSFORM, FILTER_TRANSFORM, OUTPUT_TRANSFORM
 * name the tile's functions.
 * Tensors: U[pos][K][C] (pos = alpha^2 positions); the non-fused kernels take the tiles in
 * chunks of at most CHUNK (so that V and M of a chunk can stay in the device's cache), the
 * chunk's tiles t0 .. t0 + tiles - 1 in V[pos][CHUNK][C] at the workspace's start and
 * M[pos][CHUNK][K] at M_OFFSET floats (a multiple of 64).
 * Kernel parameters (searched by the tuner, docs/opencl.md): GEMM_BM x GEMM_BN outputs (tiles x
 * output channels) per work-group, GEMM_RM x GEMM_RN per work-item, GEMM_BK channels per step,
 * GEMM_LOCAL (1: the operands staged in local memory); FUSED_FT tiles x FUSED_FK output channels
 * per fused work-group, FUSED_KPT channels per work-item, FUSED_FC channels per step. */

#define ALPHA2 (ALPHA * ALPHA)

/* The tensors' elements. FP16 through vload_half and vstore_half, which every OpenCL device has
 * (cl_khr_fp16 is needed only for arithmetic on half): the transforms and products stay FP32, and
 * y is rounded once, to nearest even. */
#if HALF
#define ELEM half
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define ELEM float
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

/* x's element (n, c, i, j), or 0 outside the image. */
float x_at(__global const ELEM *x, int n, int c, int i, int j)
{
    if (i < 0 || i >= H || j < 0 || j >= W)
        return 0.0f;
    return NHWC ? LOAD(x, (((size_t)n * H + i) * W + j) * C + c)
                : LOAD(x, (((size_t)n * C + c) * H + i) * W + j);
}

/* The input window of tile t (row-major over n, tile row, tile column) and channel c, after
 * the input transform. */
void transformed_input(__global const ELEM *x, int t, int c, float v[ALPHA][ALPHA])
{
    const int n = t / (TILES_H * TILES_W), th = t / TILES_W % TILES_H, tw = t % TILES_W;
    const int i0 = th * TILE_M - PAD_H, j0 = tw * TILE_M - PAD_W;
    float d[ALPHA][ALPHA];
    for (int a = 0; a < ALPHA; a++)
        for (int b = 0; b < ALPHA; b++)
            d[a][b] = x_at(x, n, c, i0 + a, j0 + b);
    INPUT_TRANSFORM(d, v);
}

/* Output transform of tile t, channel k from its alpha^2 products; bias, ReLU; writes the part
 * of the m x m tile inside the output. */
void write_output(const float mm[ALPHA][ALPHA], int t, int k, __global const float *bias,
                  __global ELEM *y)
{
    const int n = t / (TILES_H * TILES_W), th = t / TILES_W % TILES_H, tw = t % TILES_W;
    float o[TILE_M][TILE_M];
    OUTPUT_TRANSFORM(mm, o);
    const float b = HAS_BIAS ? bias[k] : 0.0f;
    for (int a = 0; a < TILE_M; a++)
        for (int e = 0; e < TILE_M; e++) {
            const int p = th * TILE_M + a, q = tw * TILE_M + e;
            if (p >= P || q >= Q)
                continue;
            float value = o[a][e] + b;
            if (RELU)
                value = fmax(value, 0.0f);
            if (NHWC)
                STORE(y, (((size_t)n * P + p) * Q + q) * K + k, value);
            else
                STORE(y, (((size_t)n * K + k) * P + p) * Q + q, value);
        }
}

/* U = G g G^T, one work-item per (k, c). */
__kernel void filter_transform(__global const ELEM *w, __global float *u)
{
    const size_t id = get_global_id(0);
    if (id >= (size_t)K * C)
        return;
    const int k = (int)(id / C), c = (int)(id % C);
    float g[R][R], t[ALPHA][ALPHA];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < R; j++)
            g[i][j] = NHWC ? LOAD(w, (((size_t)k * R + i) * R + j) * C + c)
                           : LOAD(w, (((size_t)k * C + c) * R + i) * R + j);
    FILTER_TRANSFORM(g, t);
    for (int pos = 0; pos < ALPHA2; pos++)
        u[((size_t)pos * K + k) * C + c] = t[pos / ALPHA][pos % ALPHA];
}

/* V = B^T d B of the chunk's tiles, one work-item per (tile, c): consecutive work-items write
 * consecutive c. */
__kernel void input_transform(__global const ELEM *x, __global float *ws, const int t0,
                              const int tiles)
{
    const size_t id = get_global_id(0);
    if (id >= (size_t)tiles * C)
        return;
    const int c = (int)(id % C), t = (int)(id / C);
    float v[ALPHA][ALPHA];
    transformed_input(x, t0 + t, c, v);
    for (int pos = 0; pos < ALPHA2; pos++)
        ws[((size_t)pos * CHUNK + t) * C + c] = v[pos / ALPHA][pos % ALPHA];
}

#define GEMM_WG_M (GEMM_BM / GEMM_RM)
#define GEMM_WG_N (GEMM_BN / GEMM_RN)
#define GEMM_THREADS (GEMM_WG_M * GEMM_WG_N)
/* A work-item's rows (columns) of its work-group's tile come in runs of GEMM_VM (GEMM_VN)
 * consecutive ones, the work-group's runs side by side: a run of 4 is one float4 of local
 * memory or of M, and neighbouring work-items read neighbouring vectors (no bank conflicts). */
#define GEMM_VM (GEMM_RM < 4 ? GEMM_RM : 4)
#define GEMM_VN (GEMM_RN < 4 ? GEMM_RN : 4)
#define GEMM_ROW(ly, i) ((i) / GEMM_VM * (GEMM_WG_M * GEMM_VM) + (ly) * GEMM_VM + (i) % GEMM_VM)
#define GEMM_COL(lx, j) ((j) / GEMM_VN * (GEMM_WG_N * GEMM_VN) + (lx) * GEMM_VN + (j) % GEMM_VN)
/* float4 loads along the channels where C allows them */
#define GEMM_VEC_C (C % 4 == 0)

#if GEMM_LOCAL
/* Staged rows are padded by 4 floats: the transposing stores of store_slice() then fall into
 * different banks, and every row stays 16-byte aligned. */
#define GEMM_LDA (GEMM_BM + 4)
#define GEMM_LDB (GEMM_BN + 4)
/* A slice of GEMM_BK channels is fetched in pieces of GEMM_VW channels (float4 where C allows),
 * each work-item holding GEMM_A_LOADS pieces of V's rows and GEMM_B_LOADS of U's. */
#if GEMM_VEC_C
#define GEMM_VW 4
typedef float4 gemm_piece;
#else
#define GEMM_VW 1
typedef float gemm_piece;
#endif
#define GEMM_PIECES (GEMM_BK / GEMM_VW) /* per row of a slice */
#define GEMM_A_LOADS ((GEMM_BM * GEMM_PIECES + GEMM_THREADS - 1) / GEMM_THREADS)
#define GEMM_B_LOADS ((GEMM_BN * GEMM_PIECES + GEMM_THREADS - 1) / GEMM_THREADS)

/* Work-item lid's pieces of rows row0 .. row0 + count - 1 of the row-major [rows][C] matrix src,
 * channels c0 .. c0 + GEMM_BK - 1, into registers (zeros outside the matrix): the loads of the
 * next slice are in flight while the current one is multiplied. */
void load_slice(gemm_piece *regs, int loads, int count, __global const float *src, int row0,
                int rows, int c0, int lid)
{
#pragma unroll
    for (int l = 0; l < loads; l++) {
        const int e = lid + l * GEMM_THREADS, i = e / GEMM_PIECES, cc = e % GEMM_PIECES * GEMM_VW;
        regs[l] = (gemm_piece)(0.0f);
        if (i < count && row0 + i < rows && c0 + cc < C)
            regs[l] = *(__global const gemm_piece *)(src + (size_t)(row0 + i) * C + c0 + cc);
    }
}

/* The pieces of load_slice() transposed into dst[channel * ld + row]. */
void store_slice(__local float *dst, int ld, const gemm_piece *regs, int loads, int count, int lid)
{
#pragma unroll
    for (int l = 0; l < loads; l++) {
        const int e = lid + l * GEMM_THREADS, i = e / GEMM_PIECES, cc = e % GEMM_PIECES * GEMM_VW;
        if (i >= count)
            continue;
#if GEMM_VEC_C
        dst[cc * ld + i] = regs[l].x;
        dst[(cc + 1) * ld + i] = regs[l].y;
        dst[(cc + 2) * ld + i] = regs[l].z;
        dst[(cc + 3) * ld + i] = regs[l].w;
#else
        dst[cc * ld + i] = regs[l];
#endif
    }
}

/* A work-item's n values (n a constant) of a staged row: runs of 4 (float4 loads) run_stride
 * apart from first, or n consecutive ones when n < 4. */
void read_staged(__local const float *row, int first, int run_stride, int n, float *out)
{
    if (n < 4) {
#pragma unroll
        for (int i = 0; i < n; i++)
            out[i] = row[first + i];
        return;
    }
#pragma unroll
    for (int g = 0; g < n / 4; g++) {
        const float4 v = *(__local const float4 *)(row + first + g * run_stride);
        out[4 * g] = v.x;
        out[4 * g + 1] = v.y;
        out[4 * g + 2] = v.z;
        out[4 * g + 3] = v.w;
    }
}
#endif

/* M[pos] = V[pos] U[pos]^T for the chunk's tiles and every pos (the group's third index): a
 * work-group computes GEMM_BM tiles x GEMM_BN output channels, a work-item GEMM_RM x GEMM_RN of
 * them (GEMM_ROW, GEMM_COL). */
__kernel __attribute__((reqd_work_group_size(GEMM_WG_N, GEMM_WG_M, 1))) void
gemm(__global float *ws, __global const float *u, const int tiles)
{
    const int pos = (int)get_group_id(2);
    const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
    const int t0 = (int)get_group_id(1) * GEMM_BM, k0 = (int)get_group_id(0) * GEMM_BN;
    __global const float *a = ws + (size_t)pos * CHUNK * C;
    __global const float *b = u + (size_t)pos * K * C;
    float acc[GEMM_RM][GEMM_RN];
#pragma unroll
    for (int i = 0; i < GEMM_RM; i++)
#pragma unroll
        for (int j = 0; j < GEMM_RN; j++)
            acc[i][j] = 0.0f;
#if GEMM_LOCAL
    /* Two buffers: slice s is multiplied from one while slice s + 1, already in registers, is
     * stored into the other; one barrier a slice. */
    __local float as[2][GEMM_BK * GEMM_LDA] __attribute__((aligned(16)));
    __local float bs[2][GEMM_BK * GEMM_LDB] __attribute__((aligned(16)));
    const int lid = ly * GEMM_WG_N + lx;
    gemm_piece ra[GEMM_A_LOADS], rb[GEMM_B_LOADS];
    load_slice(ra, GEMM_A_LOADS, GEMM_BM, a, t0, tiles, 0, lid);
    load_slice(rb, GEMM_B_LOADS, GEMM_BN, b, k0, K, 0, lid);
    store_slice(as[0], GEMM_LDA, ra, GEMM_A_LOADS, GEMM_BM, lid);
    store_slice(bs[0], GEMM_LDB, rb, GEMM_B_LOADS, GEMM_BN, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int c0 = 0, now = 0; c0 < C; c0 += GEMM_BK, now ^= 1) {
        const int more = c0 + GEMM_BK < C;
        if (more) {
            load_slice(ra, GEMM_A_LOADS, GEMM_BM, a, t0, tiles, c0 + GEMM_BK, lid);
            load_slice(rb, GEMM_B_LOADS, GEMM_BN, b, k0, K, c0 + GEMM_BK, lid);
        }
#pragma unroll
        for (int cc = 0; cc < GEMM_BK; cc++) {
            float ar[GEMM_RM], br[GEMM_RN];
            read_staged(as[now] + cc * GEMM_LDA, ly * GEMM_VM, GEMM_WG_M * 4, GEMM_RM, ar);
            read_staged(bs[now] + cc * GEMM_LDB, lx * GEMM_VN, GEMM_WG_N * 4, GEMM_RN, br);
#pragma unroll
            for (int i = 0; i < GEMM_RM; i++)
#pragma unroll
                for (int j = 0; j < GEMM_RN; j++)
                    acc[i][j] = fma(ar[i], br[j], acc[i][j]);
        }
        if (more) {
            store_slice(as[now ^ 1], GEMM_LDA, ra, GEMM_A_LOADS, GEMM_BM, lid);
            store_slice(bs[now ^ 1], GEMM_LDB, rb, GEMM_B_LOADS, GEMM_BN, lid);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    /* rows past the end read row 0 (their results are not written) */
    __global const float *ar[GEMM_RM], *br[GEMM_RN];
#pragma unroll
    for (int i = 0; i < GEMM_RM; i++) {
        const int t = t0 + GEMM_ROW(ly, i);
        ar[i] = a + (size_t)(t < tiles ? t : 0) * C;
    }
#pragma unroll
    for (int j = 0; j < GEMM_RN; j++) {
        const int k = k0 + GEMM_COL(lx, j);
        br[j] = b + (size_t)(k < K ? k : 0) * C;
    }
#if GEMM_VEC_C
    for (int c = 0; c < C; c += 4) {
        float4 av[GEMM_RM], bv[GEMM_RN];
#pragma unroll
        for (int i = 0; i < GEMM_RM; i++)
            av[i] = *(__global const float4 *)(ar[i] + c);
#pragma unroll
        for (int j = 0; j < GEMM_RN; j++)
            bv[j] = *(__global const float4 *)(br[j] + c);
#pragma unroll
        for (int i = 0; i < GEMM_RM; i++)
#pragma unroll
            for (int j = 0; j < GEMM_RN; j++)
                acc[i][j] = fma(av[i].w, bv[j].w,
                                fma(av[i].z, bv[j].z,
                                    fma(av[i].y, bv[j].y, fma(av[i].x, bv[j].x, acc[i][j]))));
    }
#else
    for (int c = 0; c < C; c++)
#pragma unroll
        for (int i = 0; i < GEMM_RM; i++)
#pragma unroll
            for (int j = 0; j < GEMM_RN; j++)
                acc[i][j] = fma(ar[i][c], br[j][c], acc[i][j]);
#endif
#endif
    __global float *m = ws + M_OFFSET + (size_t)pos * CHUNK * K;
#pragma unroll
    for (int i = 0; i < GEMM_RM; i++) {
        const int t = t0 + GEMM_ROW(ly, i);
        if (t >= tiles)
            continue;
#pragma unroll
        for (int j = 0; j < GEMM_RN; j += GEMM_VN) {
            const int k = k0 + GEMM_COL(lx, j);
#if GEMM_VN == 4 && K % 4 == 0
            /* k is a multiple of 4: the run is inside M's row, and aligned */
            if (k < K)
                *(__global float4 *)(m + (size_t)t * K + k) =
                    (float4)(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
#else
            for (int e = 0; e < GEMM_VN; e++)
                if (k + e < K)
                    m[(size_t)t * K + k + e] = acc[i][j + e];
#endif
        }
    }
}

/* Y = A^T M A of the chunk's tiles, bias, ReLU: one work-item per (tile, k), consecutive
 * work-items consecutive k. */
__kernel void output_transform(__global const float *ws, __global const float *bias,
                               __global ELEM *y, const int t0, const int tiles)
{
    const size_t id = get_global_id(0);
    if (id >= (size_t)tiles * K)
        return;
    const int k = (int)(id % K), t = (int)(id / K);
    __global const float *m = ws + M_OFFSET;
    float mm[ALPHA][ALPHA];
    for (int pos = 0; pos < ALPHA2; pos++)
        mm[pos / ALPHA][pos % ALPHA] = m[((size_t)pos * CHUNK + t) * K + k];
    write_output(mm, t0 + t, k, bias, y);
}

#define FUSED_WG (FUSED_FT * (FUSED_FK / FUSED_KPT))

/* All three stages in one kernel: a work-group takes FUSED_FT tiles x FUSED_FK output channels,
 * transforms its tiles' windows for FUSED_FC channels at a time into local memory, and each
 * work-item accumulates the alpha^2 products of one tile and FUSED_KPT output channels in
 * private memory, then transforms them back and writes y. Nothing goes through global memory
 * but x, U and y. */
__kernel __attribute__((reqd_work_group_size(FUSED_WG, 1, 1))) void
fused(__global const ELEM *x, __global const float *u, __global const float *bias,
      __global ELEM *y)
{
    __local float vs[ALPHA2][FUSED_FC][FUSED_FT];
    const int l = (int)get_local_id(0), lt = l % FUSED_FT, lk = l / FUSED_FT;
    const int t0 = (int)get_group_id(0) * FUSED_FT, k0 = (int)get_group_id(1) * FUSED_FK;
    float acc[FUSED_KPT][ALPHA2];
    for (int j = 0; j < FUSED_KPT; j++)
        for (int pos = 0; pos < ALPHA2; pos++)
            acc[j][pos] = 0.0f;
    for (int c0 = 0; c0 < C; c0 += FUSED_FC) {
        for (int e = l; e < FUSED_FT * FUSED_FC; e += FUSED_WG) {
            const int tt = e % FUSED_FT, cc = e / FUSED_FT, t = t0 + tt, c = c0 + cc;
            float v[ALPHA][ALPHA];
            if (t < TILES && c < C)
                transformed_input(x, t, c, v);
            else
                for (int pos = 0; pos < ALPHA2; pos++)
                    v[pos / ALPHA][pos % ALPHA] = 0.0f;
            for (int pos = 0; pos < ALPHA2; pos++)
                vs[pos][cc][tt] = v[pos / ALPHA][pos % ALPHA];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int cc = 0; cc < FUSED_FC && c0 + cc < C; cc++)
            for (int j = 0; j < FUSED_KPT; j++) {
                const int k = k0 + lk + j * (FUSED_FK / FUSED_KPT);
                if (k >= K)
                    continue;
                __global const float *uk = u + (size_t)k * C + c0 + cc;
                for (int pos = 0; pos < ALPHA2; pos++)
                    acc[j][pos] = fma(vs[pos][cc][lt], uk[(size_t)pos * K * C], acc[j][pos]);
            }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int t = t0 + lt;
    for (int j = 0; j < FUSED_KPT; j++) {
        const int k = k0 + lk + j * (FUSED_FK / FUSED_KPT);
        if (t >= TILES || k >= K)
            continue;
        float mm[ALPHA][ALPHA];
        for (int pos = 0; pos < ALPHA2; pos++)
            mm[pos / ALPHA][pos % ALPHA] = acc[j][pos];
        write_output(mm, t, k, bias, y);
    }
}
