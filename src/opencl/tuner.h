/* The OpenCL tuner: a search of the kernel parameters and variant of one layer on one device
 * (Mazaheri et al. (EuroSys'20) section 3.3), brute force without bounds, a local search within
 * a time and candidate budget. */
#ifndef WINO_OPENCL_TUNER_H
#define WINO_OPENCL_TUNER_H

#include "opencl/opencl_component.h"
#include "opencl/program_cache.h"

/* Times, on random data, the default parameters of both variants, then the other valid
 * parameters of each variant (src/opencl/opencl_params.h: one variant's half varied, the
 * other's kept at the defaults), alternating between the variants, until search's bounds: in
 * turn an untried neighbour of the variant's best so far (one parameter changed) and the next
 * untried candidate of a fixed shuffled order (a local search and a sample of the whole
 * space); each candidate's program is built (not stored in the program cache),
 * run once and its output compared with the default's (a wrong one is refused), then timed:
 * the median of search->reps runs, each enqueued and waited for with clFinish (a candidate
 * whose first timed run takes twice its variant's best median so far is not run again). desc
 * is FP32 or FP16 with a default tile F(tile_m, r); queue is an in-order queue of context and
 * device. */
enum wino_status wino_opencl_tune_layer(cl_context context, cl_device_id device,
                                        cl_command_queue queue,
                                        const struct wino_conv2d_desc *desc, int tile_m,
                                        const struct wino_opencl_search *search,
                                        struct wino_opencl_tuning *result);

#endif
