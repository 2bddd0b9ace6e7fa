/* A program outside wino's tree using the installed generator (libwino_gen): the exact F(4, 3)
 * of the recorded points has alpha 6, A^T's first entry 1, and its matrices reach double. */
#include <stdio.h>
#include <string.h>

#include <wino_gen.h>

int main(void)
{
    wino_tile *tile = NULL;
    enum wino_status st = wino_tile_create(4, 3, NULL, WINO_TILE_DEFAULT, &tile);
    char entry[32] = "";
    double at[4 * 6];
    if (st == WINO_SUCCESS)
        st = wino_tile_entry_string(tile, WINO_MATRIX_AT, 0, 0, entry, sizeof entry, NULL);
    if (st == WINO_SUCCESS)
        st = wino_tile_matrix_double(tile, WINO_MATRIX_AT, at);
    int ok = st == WINO_SUCCESS && wino_tile_alpha(tile) == 6 && !strcmp(entry, "1") &&
             at[0] == 1.0;
    wino_tile_destroy(tile);
    if (!ok) {
        printf("FAIL F(4, 3): %s (%s), A^T[0][0] \"%s\"\n", wino_status_string(st),
               wino_last_error(), entry);
        return 1;
    }
    printf("PASS wino_gen %s: F(4, 3), alpha 6\n", wino_version());
    return 0;
}
