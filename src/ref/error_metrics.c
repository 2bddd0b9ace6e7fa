#include "ref/error_metrics.h"

#include <math.h>

double wino_rel_l1_f32(const float *got, const double *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        num += fabs((double)got[i] - ref[i]);
        den += fabs(ref[i]);
    }
    if (den == 0.0)
        return num == 0.0 ? 0.0 : INFINITY;
    return num / den;
}

double wino_mare_f32(const float *got, const double *ref, size_t n)
{
    double sum = 0.0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (ref[i] != 0.0) {
            sum += fabs((double)got[i] - ref[i]) / fabs(ref[i]);
            count++;
        } else if (got[i] != 0.0) {
            return isnan(got[i]) ? NAN : INFINITY;
        }
    return count ? sum / (double)count : 0.0;
}

double wino_max_abs_err_f32(const float *got, const double *ref, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        if (isnan(e))
            return NAN;
        if (e > worst)
            worst = e;
    }
    return worst;
}
