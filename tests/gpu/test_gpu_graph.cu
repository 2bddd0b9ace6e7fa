/* run() only enqueues, so it can be captured in a CUDA graph: for FP32, FP16 and INT8 operators
 * with every variant (F(4x4, 3x3) and F(2x2, 3x3); cuBLAS's GEMMs in the non-fused ones), run()
 * is captured on a non-blocking stream (global capture mode: a synchronizing or allocating call
 * in run() would invalidate the capture), into an output the operator has not seen before; the
 * graph must hold kernel nodes only (no allocation, copy or memset), and its replays must give
 * the same bytes as an eager run(), also after the input changed in place between replays.
 * Usage: test_gpu_graph (WINO_TEST_SEED=N to replay). */
#include "gpu_test_util.h"

static struct test_counts tc;

/* The operator under test and its device buffers. */
struct graph_case {
    const char *label;
    wino_conv2d *op;
    void *dx, *ws;
    size_t x_bytes, y_bytes, ws_bytes;
    const void *x1, *x2; /* two host inputs of x_bytes */
};

/* run() eagerly into y: the output bytes in host memory (caller frees). */
static unsigned char *eager(const struct graph_case *g, cudaStream_t stream, void *dy)
{
    unsigned char *h = (unsigned char *)malloc(g->y_bytes);
    CUDA_CHECK(cudaMemsetAsync(dy, 0xff, g->y_bytes, stream));
    const enum wino_status st = wino_conv2d_run(g->op, g->dx, dy, g->ws, g->ws_bytes);
    gpu_checkf(&tc, st == WINO_SUCCESS, "%s: eager run: %s", g->label, wino_last_error());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(h, dy, g->y_bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* Replays exec into dy (poisoned first) and compares with want. */
static void replay_and_compare(const struct graph_case *g, cudaStream_t stream,
                               cudaGraphExec_t exec, void *dy, const unsigned char *want,
                               const char *when)
{
    unsigned char *got = (unsigned char *)malloc(g->y_bytes);
    CUDA_CHECK(cudaMemsetAsync(dy, 0x7f, g->y_bytes, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream)); /* twice: a replay must not depend on the last */
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(got, dy, g->y_bytes, cudaMemcpyDeviceToHost));
    size_t diff = 0;
    for (size_t i = 0; i < g->y_bytes; i++)
        diff += got[i] != want[i];
    gpu_checkf(&tc, diff == 0, "%s: graph replay %s: %zu of %zu output bytes differ from the "
               "eager run", g->label, when, diff, g->y_bytes);
    free(got);
}

static void check_graph(struct graph_case *g, cudaStream_t stream)
{
    void *dy_eager = gpu_alloc(g->y_bytes), *dy_graph = gpu_alloc(g->y_bytes);
    CUDA_CHECK(cudaMemcpy(g->dx, g->x1, g->x_bytes, cudaMemcpyHostToDevice));
    unsigned char *want = eager(g, stream, dy_eager);

    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const enum wino_status st = wino_conv2d_run(g->op, g->dx, dy_graph, g->ws, g->ws_bytes);
    char why[256];
    snprintf(why, sizeof why, "%s", st ? wino_last_error() : "");
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    gpu_checkf(&tc, st == WINO_SUCCESS && ended == cudaSuccess,
               "%s: run() under stream capture: %s %s; end of capture: %s", g->label,
               gpu_status_name(st), why, cudaGetErrorString(ended));
    size_t nodes = 0;
    if (ended == cudaSuccess && st == WINO_SUCCESS) {
        CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
        gpu_checkf(&tc, nodes > 0, "%s: the captured graph is empty", g->label);
        /* kernels only: an allocation (cuBLAS's workspace, say), copy or memset node would be
         * work that run() does besides enqueuing its kernels */
        cudaGraphNode_t *list = (cudaGraphNode_t *)malloc(nodes * sizeof *list);
        CUDA_CHECK(cudaGraphGetNodes(graph, list, &nodes));
        size_t others = 0;
        for (size_t i = 0; i < nodes; i++) {
            enum cudaGraphNodeType type;
            CUDA_CHECK(cudaGraphNodeGetType(list[i], &type));
            others += type != cudaGraphNodeTypeKernel;
        }
        free(list);
        gpu_checkf(&tc, others == 0, "%s: %zu of the %zu captured nodes are not kernels",
                   g->label, others, nodes);
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        replay_and_compare(g, stream, exec, dy_graph, want, "on the first input");
        /* the graph reads x when it runs: a new input in place gives the new output */
        CUDA_CHECK(cudaMemcpy(g->dx, g->x2, g->x_bytes, cudaMemcpyHostToDevice));
        free(want);
        want = eager(g, stream, dy_eager);
        replay_and_compare(g, stream, exec, dy_graph, want, "on a second input");
        printf("%s: %zu graph nodes, replays equal the eager runs\n", g->label, nodes);
    }
    (void)cudaGetLastError();
    if (exec)
        CUDA_CHECK(cudaGraphExecDestroy(exec));
    if (graph)
        CUDA_CHECK(cudaGraphDestroy(graph));
    free(want);
    CUDA_CHECK(cudaFree(dy_eager));
    CUDA_CHECK(cudaFree(dy_graph));
}

/* The operator's workspace and x buffers, then check_graph, then teardown. */
static void run_case(struct graph_case *g, enum wino_status created, cudaStream_t stream)
{
    gpu_checkf(&tc, created == WINO_SUCCESS, "%s: create: %s", g->label, wino_last_error());
    if (created != WINO_SUCCESS)
        return;
    enum wino_variant v = WINO_VARIANT_AUTO;
    if (wino_conv2d_workspace_size(g->op, &g->ws_bytes) || wino_conv2d_variant(g->op, &v)) {
        gpu_checkf(&tc, 0, "%s: %s", g->label, wino_last_error());
        return;
    }
    printf("%s: runs %s, workspace %zu bytes\n", g->label, gpu_variant_name(v), g->ws_bytes);
    g->ws = gpu_alloc(g->ws_bytes);
    g->dx = gpu_alloc(g->x_bytes);
    check_graph(g, stream);
    wino_conv2d_destroy(g->op);
    CUDA_CHECK(cudaFree(g->ws));
    CUDA_CHECK(cudaFree(g->dx));
}

static void fill_bytes(unsigned char *p, size_t n, struct test_rng *rng, int kind)
{
    for (size_t i = 0; i < n;) {
        if (kind == 0) { /* float in (-1, 1) */
            const float f = (float)test_rng_sym(rng);
            memcpy(p + i, &f, sizeof f);
            i += sizeof f;
        } else if (kind == 1) { /* half in (-1, 1) */
            const __half h = __float2half_rn((float)test_rng_sym(rng));
            memcpy(p + i, &h, sizeof h);
            i += sizeof h;
        } else { /* uint8 */
            p[i++] = (unsigned char)(test_rng_next(rng) & 0xff);
        }
    }
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    cudaStream_t stream, blocking = gpu_open_device(0);
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const struct wino_context ctx = gpu_context(0, stream);
    static const enum wino_variant variants[3] = {WINO_VARIANT_NON_FUSED, WINO_VARIANT_FUSED,
                                                  WINO_VARIANT_FUSED_OUTPUT};
    /* awkward sizes: edge tiles in both directions, channels not multiples of 8 */
    struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 37, 19, 23, 21, 3, 3, 1, 1);
    d.layout = WINO_LAYOUT_NHWC;
    int p = 0, q = 0;
    wino_conv2d_output_size(&d, &p, &q);
    const size_t xn = (size_t)d.n * d.h * d.w * d.c, wn = (size_t)d.k * 9 * d.c,
                 yn = (size_t)d.n * p * q * d.k;
    unsigned char *x1 = (unsigned char *)malloc(xn * 4), *x2 = (unsigned char *)malloc(xn * 4);
    unsigned char *w = (unsigned char *)malloc(wn * 4);
    float *bias = (float *)malloc(d.k * sizeof(float));
    for (int k = 0; k < d.k; k++)
        bias[k] = (float)test_rng_sym(&rng);

    for (int type = 0; type < 3; type++) /* FP32, FP16, INT8 */
        for (int m = 2; m <= 4; m += 2)
            for (int v = 0; v < 3; v++) {
                if (type == 0 && variants[v] == WINO_VARIANT_FUSED_OUTPUT)
                    continue; /* FP16 and INT8 only */
                const size_t es = type == 0 ? 4 : type == 1 ? 2 : 1;
                fill_bytes(x1, xn * es, &rng, type);
                fill_bytes(x2, xn * es, &rng, type);
                fill_bytes(w, wn * (type == 2 ? 4 : es), &rng, type == 2 ? 0 : type);
                char label[128];
                snprintf(label, sizeof label, "%s F(%dx%d,3x3) %s", type == 0 ? "FP32"
                         : type == 1 ? "FP16" : "INT8", m, m, gpu_variant_name(variants[v]));
                struct graph_case g = {label, NULL, NULL, NULL, xn * es, yn * es, 0, x1, x2};
                struct wino_conv2d_options o;
                memset(&o, 0, sizeof o);
                o.tile_m = m;
                o.variant = variants[v];
                o.bias = bias;
                o.relu = 1;
                void *dw = gpu_upload(w, wn * (type == 2 ? 4 : es));
                enum wino_status st;
                d.dtype = type == 0 ? WINO_DTYPE_F32 : type == 1 ? WINO_DTYPE_F16 : WINO_DTYPE_U8;
                if (type < 2) {
                    st = wino_conv2d_create(&d, dw, &ctx, &o, &g.op);
                } else {
                    struct wino_int8_params qp;
                    memset(&qp, 0, sizeof qp);
                    qp.x_scale = 1.0f / 255.0f;
                    qp.alpha_ta = 4.0f;
                    qp.alpha_tw = 2.0f;
                    qp.y_scale = 0.05f;
                    qp.y_dtype = WINO_DTYPE_S8;
                    o.relu = 0;
                    st = wino_conv2d_create_int8(&d, dw, &qp, &ctx, &o, &g.op);
                }
                CUDA_CHECK(cudaFree(dw));
                run_case(&g, st, stream);
            }
    free(x1), free(x2), free(w), free(bias);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaStreamDestroy(blocking));
    return gpu_report(&tc);
}
