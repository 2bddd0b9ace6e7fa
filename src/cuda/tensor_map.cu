/* NHWC tensor maps (tensor_map.h) through the driver's cuTensorMapEncodeTiled, which the
 * runtime hands out: the component links no libcuda. */
#include "cuda/tensor_map.h"

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                    const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static encode_tiled_fn find_encode_tiled(void)
{
    void *p = NULL;
    cudaDriverEntryPointQueryResult found;
    return cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                            cudaEnableDefault, &found) == cudaSuccess &&
                   found == cudaDriverEntryPointSuccess
               ? (encode_tiled_fn)p
               : NULL;
}
static encode_tiled_fn encode_tiled(void)
{
    static const encode_tiled_fn fn = find_encode_tiled(); /* once, thread-safe */
    return fn;
}

cudaError_t wino_nhwc_tensor_map(CUtensorMap *map, CUtensorMapDataType type, size_t elem_bytes,
                                 const void *at, int n, int rows, int cols, int channels,
                                 int box_channels, int box_cols, int box_rows,
                                 CUtensorMapSwizzle swizzle)
{
    const encode_tiled_fn encode = encode_tiled();
    if (!encode)
        return cudaErrorNotSupported;
    const cuuint64_t size[4] = {(cuuint64_t)channels, (cuuint64_t)cols, (cuuint64_t)rows,
                                (cuuint64_t)n};
    const cuuint64_t stride[3] = {(cuuint64_t)channels * elem_bytes,
                                  (cuuint64_t)channels * cols * elem_bytes,
                                  (cuuint64_t)channels * cols * rows * elem_bytes};
    const cuuint32_t boxes[4] = {(cuuint32_t)box_channels, (cuuint32_t)box_cols,
                                 (cuuint32_t)box_rows, 1};
    const cuuint32_t steps[4] = {1, 1, 1, 1};
    return encode(map, type, 4, (void *)at, size, stride, boxes, steps,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS
               ? cudaSuccess
               : cudaErrorInvalidValue;
}
