/* Placeholder table until the point search has been run: classic small-integer and reciprocal
 * points. */
#include "gen/point_db.h"

#include <stddef.h>

static const char *const classic[17] = {
    NULL, "", "0", "0,1", "0,1,-1", "0,1,-1,2", "0,1,-1,2,-2", "0,1,-1,2,-2,1/2",
    "0,1,-1,2,-2,1/2,-1/2", "0,1,-1,2,-2,1/2,-1/2,3", "0,1,-1,2,-2,1/2,-1/2,3,-3",
    "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3", "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3,-1/3",
    "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3,-1/3,4", "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3,-1/3,4,-4",
    "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3,-1/3,4,-4,1/4",
    "0,1,-1,2,-2,1/2,-1/2,3,-3,1/3,-1/3,4,-4,1/4,-1/4"};

const char *wino_point_db_points(int alpha)
{
    return alpha >= 1 && alpha <= 16 ? classic[alpha] : NULL;
}

const struct wino_point_record *wino_point_db_record(int alpha)
{
    (void)alpha;
    return NULL;
}
