/* The OpenCL component's table, loaded on first use (src/op/opencl_loader.c). */
#ifndef WINO_OP_OPENCL_LOADER_H
#define WINO_OP_OPENCL_LOADER_H

#include "opencl/opencl_component.h"

/* The table, or NULL with the reason recorded for wino_last_error() (WINO_UNSUPPORTED). */
const struct wino_opencl_ops *wino_opencl_component(void);

#endif
