/* The CUDA component's src/base/error.h: wino_fail() and wino_ok() forward to the runtime's
 * services (src/component/component_error.h), so that the component needs no part of
 * libwino. */
#ifndef WINO_CUDA_COMPONENT_ERROR_H
#define WINO_CUDA_COMPONENT_ERROR_H

#include "component/component_error.h"
#include "cuda/cuda_component.h"

#endif
