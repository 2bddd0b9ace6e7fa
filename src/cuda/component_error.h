/* The CUDA component's src/base/error.h: wino_fail() and wino_ok() forward to the runtime's
 * services (src/cuda/cuda_component.h), so that the component needs no part of libwino. */
#ifndef WINO_CUDA_COMPONENT_ERROR_H
#define WINO_CUDA_COMPONENT_ERROR_H

#include "cuda/cuda_component.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Keeps services for wino_fail() and wino_ok(): 1, or 0 (kept nothing) when they are of
 * another ABI. */
int wino_cuda_use_services(const struct wino_cuda_services *services);

#ifdef __cplusplus
}
#endif

#endif
