/* The runtime's side of the OpenCL component (src/opencl/opencl_component.h): loads
 * libwino_opencl.so.MAJOR once, at the first OpenCL create from any thread, as the CUDA
 * component is loaded (src/op/component_loader.h; WINO_OPENCL_LIBRARY names a file instead of
 * the search). Without a component (a build without OpenCL, no ICD loader, another ABI) every
 * create answers WINO_UNSUPPORTED with what was tried and why it failed. Never unloaded:
 * operators live in it. */
#include "base/error.h"
#include "op/component_loader.h"
#include "op/opencl_loader.h"

static const struct wino_component_services services = {WINO_OPENCL_ABI, wino_fail, wino_ok};
static struct wino_component opencl = {"OpenCL", "WINO_OPENCL_LIBRARY", WINO_OPENCL_LIBRARY_NAME,
                                       WINO_OPENCL_ENTRY, &services, PTHREAD_ONCE_INIT, NULL,
                                       ""};

static void load(void)
{
    wino_component_load(&opencl);
}

const struct wino_opencl_ops *wino_opencl_component(void)
{
    return wino_component_table(&opencl, load);
}
