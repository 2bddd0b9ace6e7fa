/* NHWC tensors for Hopper's tensor memory accelerator (the warp-specialized kernels). */
#ifndef WINO_CUDA_TENSOR_MAP_H
#define WINO_CUDA_TENSOR_MAP_H

#include <cuda.h>
#include <cuda_runtime.h>

/* An NHWC tensor at `at` (n x rows x cols x channels elements of `type`, elem_bytes each; a
 * row of channels a multiple of 16 bytes, `at` on a 16-byte boundary) in boxes of box_channels x
 * box_cols x box_rows x 1, laid out in shared memory with `swizzle`, zeros outside the tensor.
 * cudaErrorNotSupported where the driver has no cuTensorMapEncodeTiled. */
cudaError_t wino_nhwc_tensor_map(CUtensorMap *map, CUtensorMapDataType type, size_t elem_bytes,
                                 const void *at, int n, int rows, int cols, int channels,
                                 int box_channels, int box_cols, int box_rows,
                                 CUtensorMapSwizzle swizzle);

#endif
