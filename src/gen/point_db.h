/* The recipe database: the most accurate interpolation points found per alpha (docs/points.md). */
#ifndef WINO_GEN_POINT_DB_H
#define WINO_GEN_POINT_DB_H

struct wino_point_record {
    int alpha;
    const char *points;    /* alpha - 1 finite points, text form */
    double median_rel_l1;  /* median relative L1 error of FP32 F(alpha-2, 3) vs FP64 direct */
    long trials;           /* random trials behind that median */
    double search_seconds; /* wall time of the search on 2 cores */
};

/* The recorded points for 1 <= alpha <= WINO_MAX_ALPHA (never NULL in that range, else NULL). */
const char *wino_point_db_points(int alpha);
/* The search record for alpha, or NULL where no search was run (alpha < 4). */
const struct wino_point_record *wino_point_db_record(int alpha);

#endif
