/* The vendor library's convolutions (src/cuda/vendor_conv.h): one cuDNN operation graph per
 * layer (a convolution node: forward, backward-data or backward-filter), its heuristic engine
 * configurations finalized into execution plans, the fastest kept after timing them, as
 * PyTorch does with cudnn.benchmark. Built only where CMake found cuDNN's headers
 * (WINO_CUDA_CUDNN); the library itself is opened with dlopen at the first create. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cuda/component_error.h"
#include "cuda/device_common.h"
#include "cuda/vendor_conv.h"

#if WINO_CUDA_CUDNN

#include <cudnn.h>

/* The functions of libcudnn.so.9 this file calls. */
static struct {
    decltype(&cudnnGetVersion) version;
    decltype(&cudnnCreate) create;
    decltype(&cudnnSetStream) set_stream;
    decltype(&cudnnGetErrorString) error_string;
    decltype(&cudnnBackendCreateDescriptor) make;
    decltype(&cudnnBackendDestroyDescriptor) drop;
    decltype(&cudnnBackendSetAttribute) set;
    decltype(&cudnnBackendGetAttribute) get;
    decltype(&cudnnBackendFinalize) finalize;
    decltype(&cudnnBackendExecute) execute;
} dnn;
static char dnn_failure[200]; /* why cuDNN could not be loaded, or "" */
static pthread_once_t dnn_once = PTHREAD_ONCE_INIT;

#define DNN_SYMBOL(field, name)                                                                 \
    (dnn.field = (decltype(dnn.field))dlsym(lib, name)) != NULL

static void dnn_load(void)
{
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so"};
    void *lib = NULL;
    for (int i = 0; i < 2 && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(dnn_failure, sizeof dnn_failure, "cuDNN 9 is not installed: %s", dlerror());
        return;
    }
    if (!(DNN_SYMBOL(version, "cudnnGetVersion") && DNN_SYMBOL(create, "cudnnCreate") &&
          DNN_SYMBOL(set_stream, "cudnnSetStream") &&
          DNN_SYMBOL(error_string, "cudnnGetErrorString") &&
          DNN_SYMBOL(make, "cudnnBackendCreateDescriptor") &&
          DNN_SYMBOL(drop, "cudnnBackendDestroyDescriptor") &&
          DNN_SYMBOL(set, "cudnnBackendSetAttribute") &&
          DNN_SYMBOL(get, "cudnnBackendGetAttribute") &&
          DNN_SYMBOL(finalize, "cudnnBackendFinalize") &&
          DNN_SYMBOL(execute, "cudnnBackendExecute"))) {
        snprintf(dnn_failure, sizeof dnn_failure, "libcudnn lacks the graph API: %s", dlerror());
        dnn.execute = NULL;
        return;
    }
    if (dnn.version() / 10000 != 9) {
        snprintf(dnn_failure, sizeof dnn_failure, "cuDNN %zu found, 9.x needed", dnn.version());
        dnn.execute = NULL;
    }
}

static enum wino_status dnn_available(void)
{
    pthread_once(&dnn_once, dnn_load);
    return dnn.execute ? WINO_SUCCESS
                       : wino_fail(WINO_UNSUPPORTED, "the vendor path: %s", dnn_failure);
}

static enum wino_status dnn_failed(cudnnStatus_t s, const char *call, int line)
{
    return wino_fail(s == CUDNN_STATUS_NOT_SUPPORTED ? WINO_UNSUPPORTED : WINO_DEVICE_ERROR,
                     "vendor_conv.cu:%d: %s: %s", line, call, dnn.error_string(s));
}
#define DNN_TRY(call)                                                                          \
    do {                                                                                       \
        const cudnnStatus_t s_ = (call);                                                       \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                        \
            return dnn_failed(s_, #call, __LINE__);                                            \
    } while (0)

/* The device's cuDNN handle (in its shared_blas entry, device_common.h), created on first
 * use: it holds the stream of its next call, so a run sets it and enqueues under the entry's
 * lock, as the cuBLAS handle is used. */
static enum wino_status shared_dnn_of(int device, struct shared_blas **out)
{
    struct shared_blas *d = NULL;
    const enum wino_status st = shared_of(device, &d);
    if (st)
        return st;
    pthread_mutex_lock(&d->lock);
    cudnnStatus_t created = CUDNN_STATUS_SUCCESS;
    cudnnHandle_t h = NULL;
    if (!d->dnn && (created = dnn.create(&h)) == CUDNN_STATUS_SUCCESS)
        d->dnn = h;
    pthread_mutex_unlock(&d->lock);
    if (created != CUDNN_STATUS_SUCCESS)
        return dnn_failed(created, "cudnnCreate", __LINE__);
    *out = d;
    return WINO_SUCCESS;
}

static cudnnHandle_t dnn_handle(const struct shared_blas *d)
{
    return (cudnnHandle_t)d->dnn;
}

/* A backend descriptor destroyed with its scope. */
struct descriptor {
    cudnnBackendDescriptor_t d = NULL;
    descriptor() = default;
    descriptor(const descriptor &) = delete;
    descriptor &operator=(const descriptor &) = delete;
    ~descriptor()
    {
        if (d)
            dnn.drop(d);
    }
    cudnnStatus_t make(cudnnBackendDescriptorType_t type)
    {
        return dnn.make(type, &d);
    }
    /* Gives the descriptor away (the caller drops it). */
    cudnnBackendDescriptor_t release()
    {
        cudnnBackendDescriptor_t r = d;
        d = NULL;
        return r;
    }
};

static cudnnStatus_t set1(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                          cudnnBackendAttributeType_t type, const void *value)
{
    return dnn.set(d, name, type, 1, value);
}

/* The tensors' unique ids in the graph and the variant pack. */
enum { UID_IN = 1, UID_IN2 = 2, UID_OUT = 3 };

/* The dimensions (N, C, H, W order, as cuDNN wants them whatever the layout) and strides of a
 * tensor of n x c x h x w in layout. */
static void dims_of(int64_t n, int64_t c, int64_t h, int64_t w, int nhwc, int64_t dims[4],
                    int64_t strides[4])
{
    dims[0] = n, dims[1] = c, dims[2] = h, dims[3] = w;
    if (nhwc) {
        strides[0] = h * w * c, strides[1] = 1, strides[2] = w * c, strides[3] = c;
    } else {
        strides[0] = c * h * w, strides[1] = h * w, strides[2] = w, strides[3] = 1;
    }
}

static enum wino_status make_tensor(descriptor &t, int64_t uid, cudnnDataType_t type,
                                    const int64_t dims[4], const int64_t strides[4],
                                    int64_t alignment)
{
    DNN_TRY(t.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
    DNN_TRY(set1(t.d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type));
    DNN_TRY(dnn.set(t.d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    DNN_TRY(dnn.set(t.d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    DNN_TRY(set1(t.d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid));
    DNN_TRY(set1(t.d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment));
    DNN_TRY(dnn.finalize(t.d));
    return WINO_SUCCESS;
}

static enum wino_status make_convolution(descriptor &c, const struct wino_conv2d_desc *d)
{
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2, pad[2] = {d->pad_h, d->pad_w},
                  stride[2] = {d->stride_h, d->stride_w},
                  dilation[2] = {d->dilation_h, d->dilation_w};
    DNN_TRY(c.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
    DNN_TRY(set1(c.d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute));
    DNN_TRY(set1(c.d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode));
    DNN_TRY(set1(c.d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial));
    DNN_TRY(dnn.set(c.d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    DNN_TRY(dnn.set(c.d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    DNN_TRY(dnn.set(c.d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride));
    DNN_TRY(dnn.set(c.d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation));
    DNN_TRY(dnn.finalize(c.d));
    return WINO_SUCCESS;
}

/* The attributes of a convolution node of each kind: x (or dx), w (or dw), y (or dy), alpha,
 * beta, the convolution. */
struct node_kind {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, alpha, beta, conv;
};
static const struct node_kind node_kinds[3] = {
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC},
};

/* Which graph tensor each run() argument is: in, in2 and out by kind (the weights of forward
 * and backward-data are the operator's copy, bound as in2). */
static void uids_of(enum wino_conv2d_kind kind, int64_t *x, int64_t *w, int64_t *y)
{
    if (kind == WINO_CONV2D_FORWARD)
        *x = UID_IN, *w = UID_IN2, *y = UID_OUT;
    else if (kind == WINO_CONV2D_BACKWARD_DATA)
        *y = UID_IN, *w = UID_IN2, *x = UID_OUT;
    else
        *x = UID_IN, *y = UID_IN2, *w = UID_OUT;
}

static cudnnDataType_t data_type(enum wino_dtype t)
{
    return t == WINO_DTYPE_F16    ? CUDNN_DATA_HALF
           : t == WINO_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16
                                  : CUDNN_DATA_FLOAT;
}

/* The operation graph of the layer with tensors of the given byte alignment. */
static enum wino_status make_graph(descriptor &graph, const struct wino_conv2d_desc *d,
                                   const struct wino_conv_sizes *sz,
                                   const struct wino_cuda_vendor_request *rq,
                                   cudnnHandle_t handle, int64_t alignment)
{
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    const cudnnDataType_t type = data_type(d->dtype);
    int64_t dims[4], strides[4], ux, uw, uy;
    uids_of(rq->kind, &ux, &uw, &uy);
    descriptor x, w, y, conv, node;
    enum wino_status st;
    dims_of(d->n, d->c, d->h, d->w, nhwc, dims, strides);
    if ((st = make_tensor(x, ux, type, dims, strides, alignment)))
        return st;
    dims_of(d->k, d->c, d->r, d->s, nhwc, dims, strides);
    if ((st = make_tensor(w, uw, type, dims, strides, alignment)))
        return st;
    dims_of(d->n, d->k, sz->p, sz->q, nhwc, dims, strides);
    if ((st = make_tensor(y, uy, type, dims, strides, alignment)) ||
        (st = make_convolution(conv, d)))
        return st;
    const struct node_kind *k = &node_kinds[rq->kind];
    const float alpha = 1.0f, beta = rq->accumulate ? 1.0f : 0.0f;
    DNN_TRY(node.make(k->type));
    DNN_TRY(set1(node.d, k->x, CUDNN_TYPE_BACKEND_DESCRIPTOR, &x.d));
    DNN_TRY(set1(node.d, k->w, CUDNN_TYPE_BACKEND_DESCRIPTOR, &w.d));
    DNN_TRY(set1(node.d, k->y, CUDNN_TYPE_BACKEND_DESCRIPTOR, &y.d));
    DNN_TRY(set1(node.d, k->conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, &conv.d));
    DNN_TRY(set1(node.d, k->alpha, CUDNN_TYPE_FLOAT, &alpha));
    DNN_TRY(set1(node.d, k->beta, CUDNN_TYPE_FLOAT, &beta));
    DNN_TRY(dnn.finalize(node.d));
    DNN_TRY(graph.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
    DNN_TRY(set1(graph.d, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &node.d));
    DNN_TRY(set1(graph.d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle));
    DNN_TRY(dnn.finalize(graph.d));
    return WINO_SUCCESS;
}

/* Whether an engine's numerical notes are what the request allows, as PyTorch filters them:
 * never reduced-precision sums (wino accumulates in FP32) or down-converted inputs; for FP32
 * tensor cores (TF32) only when asked; no Winograd or FFT for direct. */
static int engine_allowed(cudnnBackendDescriptor_t cfg, const struct wino_cuda_vendor_request *rq,
                          int fp32, int64_t *index)
{
    descriptor engine;
    int64_t count = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (engine.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR) ||
        dnn.get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                &engine.d) ||
        dnn.get(engine.d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, index) ||
        dnn.get(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes))
        return 0;
    for (int64_t i = 0; i < count; i++) {
        const cudnnBackendNumericalNote_t n = notes[i];
        if (n == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
            n == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
            (n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && fp32 && !rq->tf32) ||
            (rq->direct_only &&
             (n == CUDNN_NUMERICAL_NOTE_FFT || n == CUDNN_NUMERICAL_NOTE_WINOGRAD ||
              n == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4 ||
              n == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6 ||
              n == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13)))
            return 0;
    }
    return 1;
}

/* The most candidates timed at create: cuDNN's heuristics rank the fast ones first. */
#define MAX_TIMED 8

/* An execution plan and what describes it. */
struct plan {
    cudnnBackendDescriptor_t plan;
    int64_t engine, workspace;
};

static void plan_drop(struct plan *p)
{
    if (p->plan)
        dnn.drop(p->plan);
    p->plan = NULL;
}

/* Up to max plans of graph's heuristic configurations (fp32: of FP32 tensors) (mode A, then the fallback list when
 * mode A gives none) that the request allows and that finalize, in the heuristics' order. */
static int plans_of(cudnnBackendDescriptor_t graph, cudnnHandle_t handle,
                    const struct wino_cuda_vendor_request *rq, int fp32, struct plan *out,
                    int max)
{
    int found = 0;
    const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    for (int m = 0; m < 2 && !found; m++) {
        descriptor heur;
        int64_t count = 0;
        if (heur.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) ||
            set1(heur.d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                 &graph) ||
            set1(heur.d, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &modes[m]) ||
            dnn.finalize(heur.d) ||
            dnn.get(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                    &count, NULL) ||
            count <= 0)
            continue;
        if (count > 64)
            count = 64;
        descriptor cfgs[64];
        cudnnBackendDescriptor_t raw[64];
        int64_t made = 0, got = 0;
        while (made < count && !cfgs[made].make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
            raw[made] = cfgs[made].d, made++;
        if (dnn.get(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                    &got, raw))
            continue;
        for (int64_t i = 0; i < got && found < max; i++) {
            struct plan p = {NULL, 0, 0};
            descriptor pl;
            if (!engine_allowed(raw[i], rq, fp32, &p.engine) ||
                pl.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) ||
                set1(pl.d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle) ||
                set1(pl.d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                     CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw[i]) ||
                dnn.finalize(pl.d) ||
                dnn.get(pl.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                        &count, &p.workspace) ||
                (rq->max_workspace && (size_t)p.workspace > rq->max_workspace))
                continue;
            p.plan = pl.release();
            out[found++] = p;
        }
    }
    return found;
}

static size_t round_to_64(size_t b)
{
    return (b + 63) / 64 * 64;
}

struct wino_cuda_vendor {
    int device;
    cudaStream_t stream; /* the context's: create's copies and timing runs */
    struct shared_blas *dnn; /* the device entry holding the cuDNN handle */
    struct wino_conv2d_desc desc;
    struct wino_conv_sizes sizes;
    struct wino_cuda_vendor_request request;
    void *weights;              /* forward, backward-data: the operator's copy */
    float *bias;                /* forward: K values on the device, or NULL */
    struct plan aligned, any;   /* for 16-byte-aligned tensors, and for the others */
    int timed;                  /* candidates timed at the last plan */
    double ms;                  /* the aligned plan's median */
    struct seen_arguments seen; /* run()'s checks */
};

enum { SEEN_IN, SEEN_IN2, SEEN_OUT, SEEN_STREAM };

static size_t element_bytes(const struct wino_cuda_vendor *v)
{
    return v->desc.dtype == WINO_DTYPE_F32 ? 4 : 2;
}

static size_t workspace_of(const struct wino_cuda_vendor *v)
{
    const int64_t w = v->aligned.workspace > v->any.workspace ? v->aligned.workspace
                                                              : v->any.workspace;
    return w ? round_to_64((size_t)w) : 0;
}

/* y += bias (per output channel), then ReLU, in y's type (forward's epilogue). */
template <typename T>
__global__ void bias_relu_kernel(T *y, size_t count, const float *bias, int k, long long plane,
                                 int nhwc, int relu)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        const int channel = nhwc ? (int)(i % (size_t)k) : (int)((i / (size_t)plane) % k);
        float v = (float)y[i] + (bias ? bias[channel] : 0.0f);
        y[i] = (T)(relu && v < 0.0f ? 0.0f : v);
    }
}

static cudaError_t launch_epilogue(const struct wino_cuda_vendor *v, void *y, cudaStream_t s)
{
    const struct wino_conv2d_desc *d = &v->desc;
    const size_t count = v->sizes.y_elems;
    const long long plane = (long long)v->sizes.p * v->sizes.q;
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    const unsigned blocks = (unsigned)((count + 255) / 256 < 4096 ? (count + 255) / 256 : 4096);
    if (d->dtype == WINO_DTYPE_F16)
        bias_relu_kernel<<<blocks, 256, 0, s>>>((__half *)y, count, v->bias, d->k, plane, nhwc,
                                                v->request.relu);
    else if (d->dtype == WINO_DTYPE_BF16)
        bias_relu_kernel<<<blocks, 256, 0, s>>>((__nv_bfloat16 *)y, count, v->bias, d->k, plane,
                                                nhwc, v->request.relu);
    else
        bias_relu_kernel<<<blocks, 256, 0, s>>>((float *)y, count, v->bias, d->k, plane, nhwc,
                                                v->request.relu);
    return cudaGetLastError();
}

/* Enqueues plan on stream with the run's tensors (the device current). */
static enum wino_status execute(struct wino_cuda_vendor *v, const struct plan *p, const void *in,
                                const void *in2, void *out, void *workspace, cudaStream_t stream)
{
    descriptor pack;
    void *pointers[3] = {(void *)in, (void *)in2, out};
    const int64_t uids[3] = {UID_IN, UID_IN2, UID_OUT};
    DNN_TRY(pack.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    DNN_TRY(dnn.set(pack.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                    pointers));
    DNN_TRY(dnn.set(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids));
    DNN_TRY(set1(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace));
    DNN_TRY(dnn.finalize(pack.d));
    pthread_mutex_lock(&v->dnn->lock);
    cudnnStatus_t s = dnn.set_stream(dnn_handle(v->dnn), stream);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dnn.execute(dnn_handle(v->dnn), p->plan, pack.d);
    pthread_mutex_unlock(&v->dnn->lock);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_failed(s, "cudnnBackendExecute", __LINE__);
    if (v->request.kind == WINO_CONV2D_FORWARD && (v->bias || v->request.relu)) {
        const cudaError_t e = launch_epilogue(v, out, stream);
        if (e != cudaSuccess)
            return cuda_failed(e, "the bias and ReLU epilogue", __FILE__, __LINE__);
    }
    return WINO_SUCCESS;
}

/* Timing of one candidate on scratch tensors (median_run_ms's callback). */
struct trial {
    struct wino_cuda_vendor *v;
    const struct plan *p;
    void *in, *in2, *out, *workspace;
};
static enum wino_status run_trial(void *arg, void *stream)
{
    const struct trial *t = (const struct trial *)arg;
    return execute(t->v, t->p, t->in, t->in2, t->out, t->workspace, (cudaStream_t)stream);
}

/* Scratch memory for the timing runs: zeros (with the operator's weights as in2 where it
 * holds them). */
struct scratch {
    void *in = NULL, *in2 = NULL, *out = NULL, *workspace = NULL;
    ~scratch()
    {
        cudaFree(in);
        cudaFree(in2);
        cudaFree(out);
        cudaFree(workspace);
    }
};

static enum wino_status scratch_for(const struct wino_cuda_vendor *v, const struct plan *plans,
                                    int count, struct scratch *s)
{
    const struct wino_conv_sizes *z = &v->sizes;
    const size_t e = element_bytes(v);
    const enum wino_conv2d_kind kind = v->request.kind;
    const size_t in = kind == WINO_CONV2D_BACKWARD_DATA ? z->y_elems : z->x_elems;
    const size_t out = kind == WINO_CONV2D_FORWARD         ? z->y_elems
                       : kind == WINO_CONV2D_BACKWARD_DATA ? z->x_elems
                                                           : z->w_elems;
    size_t ws = 0;
    for (int i = 0; i < count; i++)
        if ((size_t)plans[i].workspace > ws)
            ws = (size_t)plans[i].workspace;
    CUDA_TRY(cudaMalloc(&s->in, in * e));
    CUDA_TRY(cudaMemsetAsync(s->in, 0, in * e, v->stream));
    CUDA_TRY(cudaMalloc(&s->out, out * e));
    CUDA_TRY(cudaMemsetAsync(s->out, 0, out * e, v->stream));
    if (kind == WINO_CONV2D_BACKWARD_FILTER) {
        CUDA_TRY(cudaMalloc(&s->in2, z->y_elems * e));
        CUDA_TRY(cudaMemsetAsync(s->in2, 0, z->y_elems * e, v->stream));
    }
    if (ws)
        CUDA_TRY(cudaMalloc(&s->workspace, ws));
    return WINO_SUCCESS;
}

/* Plans v for its desc and sizes (the device current): the fastest aligned candidate, and
 * the first candidate for element-aligned tensors. On failure v keeps its plans. */
static enum wino_status plan_layer(struct wino_cuda_vendor *v)
{
    descriptor aligned_graph, any_graph;
    const cudnnHandle_t h = dnn_handle(v->dnn);
    enum wino_status st = make_graph(aligned_graph, &v->desc, &v->sizes, &v->request, h, 16);
    if (!st)
        st = make_graph(any_graph, &v->desc, &v->sizes, &v->request, h,
                        (int64_t)element_bytes(v));
    if (st)
        return st;
    struct plan candidates[MAX_TIMED], any = {NULL, 0, 0};
    const int fp32 = v->desc.dtype == WINO_DTYPE_F32;
    const int count = plans_of(aligned_graph.d, h, &v->request, fp32, candidates, MAX_TIMED);
    if (count == 0 || plans_of(any_graph.d, h, &v->request, fp32, &any, 1) == 0) {
        for (int i = 0; i < count; i++)
            plan_drop(&candidates[i]);
        return wino_fail(WINO_UNSUPPORTED, "the vendor path: cuDNN has no engine for this "
                                           "layer%s%s",
                         v->request.direct_only ? " without Winograd or FFT" : "",
                         v->request.max_workspace ? " within the workspace limit" : "");
    }
    int best = 0, timed = 0;
    float best_ms = -1.0f;
    {
        struct scratch s;
        st = scratch_for(v, candidates, count, &s);
        for (int i = 0; !st && i < count; i++) {
            struct trial t = {v, &candidates[i], s.in,
                              s.in2 ? s.in2 : v->weights, s.out, s.workspace};
            const float ms = median_run_ms(v->stream, run_trial, &t);
            if (ms >= 0.0f && (best_ms < 0.0f || ms < best_ms))
                best = i, best_ms = ms;
            timed += ms >= 0.0f;
        }
        wino_ok(); /* a candidate that fails to run is passed over */
        cudaGetLastError();
        if (!st && cudaStreamSynchronize(v->stream) != cudaSuccess)
            st = wino_fail(WINO_DEVICE_ERROR, "the vendor path: timing its engines failed");
    }
    if (!st && timed == 0)
        st = wino_fail(WINO_UNSUPPORTED, "the vendor path: none of cuDNN's %d engines for this "
                                         "layer ran", count);
    for (int i = 0; i < count; i++)
        if (st || i != best)
            plan_drop(&candidates[i]);
    if (st) {
        plan_drop(&any);
        return st;
    }
    plan_drop(&v->aligned);
    plan_drop(&v->any);
    v->aligned = candidates[best];
    v->any = any;
    v->timed = timed;
    v->ms = best_ms;
    return WINO_SUCCESS;
}

static void vendor_destroy(struct wino_cuda_vendor *v)
{
    if (!v)
        return;
    struct device_scope scope;
    const int entered = enter_device(v->device, &scope) == WINO_SUCCESS;
    plan_drop(&v->aligned);
    plan_drop(&v->any);
    cudaFree(v->weights);
    cudaFree(v->bias);
    if (entered)
        leave_device(&scope);
    free(v);
}

/* The parts of v that do not depend on N, H and W: the handle, the weights and bias. */
static enum wino_status vendor_open(struct wino_cuda_vendor *v, const void *weights)
{
    const struct wino_conv2d_desc *d = &v->desc;
    enum wino_status st = shared_dnn_of(v->device, &v->dnn);
    if (st)
        return st;
    if (v->request.kind != WINO_CONV2D_BACKWARD_FILTER) {
        const size_t bytes = v->sizes.w_elems * element_bytes(v);
        if (!weights)
            return wino_fail(WINO_INVALID_ARGUMENT, "the vendor path: weights is NULL");
        if ((st = check_device_pointer(weights, v->device, "weights")))
            return st;
        CUDA_TRY(cudaMalloc(&v->weights, bytes));
        CUDA_TRY(cudaMemcpyAsync(v->weights, weights, bytes, cudaMemcpyDeviceToDevice,
                                 v->stream));
    }
    if (v->request.bias) {
        CUDA_TRY(cudaMalloc((void **)&v->bias, sizeof(float) * d->k));
        CUDA_TRY(cudaMemcpyAsync(v->bias, v->request.bias, sizeof(float) * d->k,
                                 cudaMemcpyHostToDevice, v->stream));
        CUDA_TRY(cudaStreamSynchronize(v->stream)); /* the host bias may go after create */
    }
    v->request.bias = NULL; /* the caller's memory is not kept */
    return WINO_SUCCESS;
}

static enum wino_status vendor_create(const struct wino_conv2d_desc *desc,
                                      const struct wino_conv_sizes *sizes, const void *weights,
                                      const struct wino_context *ctx,
                                      const struct wino_cuda_vendor_request *request,
                                      struct wino_cuda_vendor **out, size_t *workspace_bytes)
{
    enum wino_status st = dnn_available();
    if (!st)
        st = check_context(ctx);
    if (st)
        return st;
    if (desc->dtype != WINO_DTYPE_F32 && desc->dtype != WINO_DTYPE_F16 &&
        desc->dtype != WINO_DTYPE_BF16)
        return wino_fail(WINO_UNSUPPORTED, "the vendor path: FP32, FP16 and BF16");
    if (request->tf32 && desc->dtype != WINO_DTYPE_F32)
        return wino_fail(WINO_INVALID_ARGUMENT, "tf32 applies to FP32 convolutions only");
    struct wino_cuda_vendor *v = (struct wino_cuda_vendor *)calloc(1, sizeof *v);
    if (!v)
        return wino_fail(WINO_OUT_OF_MEMORY, "out of memory");
    v->device = ctx->device;
    v->stream = (cudaStream_t)ctx->stream;
    v->desc = *desc;
    v->sizes = *sizes;
    v->request = *request;
    struct device_scope scope;
    if (!(st = enter_device(v->device, &scope))) {
        st = vendor_open(v, weights);
        if (!st)
            st = plan_layer(v);
        leave_device(&scope);
    }
    if (st) {
        vendor_destroy(v);
        return st;
    }
    *out = v;
    *workspace_bytes = workspace_of(v);
    return WINO_SUCCESS;
}

static enum wino_status vendor_reshape(struct wino_cuda_vendor *v,
                                       const struct wino_conv2d_desc *desc,
                                       const struct wino_conv_sizes *sizes,
                                       size_t *workspace_bytes)
{
    const struct wino_conv2d_desc old = v->desc;
    const struct wino_conv_sizes old_sizes = v->sizes;
    v->desc = *desc;
    v->sizes = *sizes;
    struct device_scope scope;
    enum wino_status st = enter_device(v->device, &scope);
    if (!st) {
        st = plan_layer(v);
        leave_device(&scope);
    }
    if (st) {
        v->desc = old;
        v->sizes = old_sizes;
        return st;
    }
    *workspace_bytes = workspace_of(v);
    return WINO_SUCCESS;
}

static int aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

static enum wino_status vendor_run(struct wino_cuda_vendor *v, const void *in, const void *in2,
                                   void *out, void *workspace, size_t bytes, void *stream)
{
    const int filter = v->request.kind == WINO_CONV2D_BACKWARD_FILTER;
    const size_t needed = workspace_of(v);
    enum wino_status st = check_seen(&v->seen, SEEN_IN, in, 0, v->device, "the input");
    if (!st && filter)
        st = check_seen(&v->seen, SEEN_IN2, in2, 0, v->device, "dy");
    if (!st)
        st = check_seen(&v->seen, SEEN_OUT, out, 0, v->device, "the output");
    if (!st && bytes < needed)
        st = wino_fail(WINO_INSUFFICIENT_WORKSPACE, "workspace of %zu bytes, %zu needed", bytes,
                       needed);
    if (!st)
        st = check_seen(&v->seen, SEEN_STREAM, stream, 1, v->device, "the stream");
    if (st)
        return st;
    if (!filter)
        in2 = v->weights;
    const struct plan *p =
        aligned16(in) && aligned16(in2) && aligned16(out) ? &v->aligned : &v->any;
    struct device_scope scope;
    if (!(st = enter_run_device(v->device, &scope))) {
        st = execute(v, p, in, in2, out, needed ? workspace : NULL, (cudaStream_t)stream);
        leave_run_device(v->device, &scope);
    }
    return st;
}

static enum wino_status vendor_set_weights(struct wino_cuda_vendor *v, const void *weights,
                                           void *stream)
{
    if (!v->weights)
        return wino_fail(WINO_INVALID_ARGUMENT, "a backward-filter operator holds no weights");
    enum wino_status st = check_device_pointer(weights, v->device, "weights");
    if (!st)
        st = check_seen(&v->seen, SEEN_STREAM, stream, 1, v->device, "the stream");
    struct device_scope scope;
    if (st || (st = enter_run_device(v->device, &scope)))
        return st;
    const cudaError_t e = cudaMemcpyAsync(v->weights, weights, v->sizes.w_elems * element_bytes(v),
                                          cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
    leave_run_device(v->device, &scope);
    return e == cudaSuccess ? WINO_SUCCESS : cuda_failed(e, "the weights' copy", __FILE__, __LINE__);
}

static void vendor_describe(const struct wino_cuda_vendor *v, char *buf, size_t cap)
{
    const size_t version = dnn.version();
    snprintf(buf, cap, "cuDNN %zu.%zu.%zu engine %lld: %.4f ms, the fastest of %d timed",
             version / 10000, version / 100 % 100, version % 100, (long long)v->aligned.engine,
             v->ms, v->timed);
}

static double vendor_ms(const struct wino_cuda_vendor *v)
{
    return v->ms;
}

static size_t vendor_version(void)
{
    pthread_once(&dnn_once, dnn_load);
    return dnn.execute ? dnn.version() : 0;
}

#else /* built without cuDNN's headers */

struct wino_cuda_vendor {
    int unused;
};

static enum wino_status vendor_create(const struct wino_conv2d_desc *, const struct wino_conv_sizes *,
                                      const void *, const struct wino_context *,
                                      const struct wino_cuda_vendor_request *,
                                      struct wino_cuda_vendor **, size_t *)
{
    return wino_fail(WINO_UNSUPPORTED, "the vendor path: this build of wino found no cuDNN "
                                       "headers");
}
static enum wino_status vendor_reshape(struct wino_cuda_vendor *, const struct wino_conv2d_desc *,
                                       const struct wino_conv_sizes *, size_t *)
{
    return WINO_INTERNAL_ERROR;
}
static enum wino_status vendor_run(struct wino_cuda_vendor *, const void *, const void *, void *,
                                   void *, size_t, void *)
{
    return WINO_INTERNAL_ERROR;
}
static enum wino_status vendor_set_weights(struct wino_cuda_vendor *, const void *, void *)
{
    return WINO_INTERNAL_ERROR;
}
static void vendor_describe(const struct wino_cuda_vendor *, char *buf, size_t cap)
{
    snprintf(buf, cap, "no vendor library");
}
static double vendor_ms(const struct wino_cuda_vendor *)
{
    return 0.0;
}
static void vendor_destroy(struct wino_cuda_vendor *v)
{
    free(v);
}
static size_t vendor_version(void)
{
    return 0;
}

#endif

const struct wino_cuda_vendor_ops wino_cuda_vendor_ops = {
    vendor_create, vendor_reshape,  vendor_run, vendor_set_weights,
    vendor_describe, vendor_ms, vendor_destroy, vendor_version};
