/* The public wino_tile object: an exact 1D Toom-Cook algorithm plus its derived products. */
#ifndef WINO_GEN_TILE_H
#define WINO_GEN_TILE_H

#include "gen/toom_cook.h"
#include "wino.h"

struct wino_tile {
    wino_toom toom;
};

#endif
