/* Error measures of a computed tensor against a double-precision reference. */
#ifndef WINO_REF_ERROR_METRICS_H
#define WINO_REF_ERROR_METRICS_H

#include <stddef.h>

/* sum|got - ref| / sum|ref| (elementwise relative L1); NaN in got gives NaN. 0 when both are 0. */
double wino_rel_l1_f32(const float *got, const double *ref, size_t n);
/* max |got - ref| (NaN if any element of got is NaN). */
double wino_max_abs_err_f32(const float *got, const double *ref, size_t n);

#endif
