/* What a backend component (the CUDA and the OpenCL one: shared libraries that libwino loads
 * at their first call) and libwino trade for error reporting: libwino's wino_fail() and
 * wino_ok(), so that wino_last_error() shows the component's messages while the component
 * links no part of libwino. src/component/component_error.c, compiled into each component,
 * defines the component's own wino_fail() and wino_ok() on top of them. */
#ifndef WINO_COMPONENT_COMPONENT_ERROR_H
#define WINO_COMPONENT_COMPONENT_ERROR_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wino_component_services {
    int abi; /* the component interface's ABI number (WINO_CUDA_ABI, WINO_OPENCL_ABI) */
    enum wino_status (*fail)(enum wino_status status, const char *fmt, ...);
    enum wino_status (*ok)(void);
};

/* Keeps services for wino_fail() and wino_ok(): 1, or 0 (kept nothing) when they are of
 * another ABI than abi. */
int wino_component_use_services(const struct wino_component_services *services, int abi);

#ifdef __cplusplus
}
#endif

#endif
