/* One version: wino_version() is wino.h's WINO_VERSION_MAJOR.MINOR.PATCH, and so is the version
 * CMake gives the libraries (their VERSION, SONAME, wino.pc, winoConfigVersion.cmake). */
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "wino.h"

int main(void)
{
    struct test_counts c = {0, 0};
    char header[64];
    snprintf(header, sizeof header, "%d.%d.%d", WINO_VERSION_MAJOR, WINO_VERSION_MINOR,
             WINO_VERSION_PATCH);
    test_check(&c, strcmp(wino_version(), header) == 0, "wino_version() is wino.h's version");
    test_check(&c, strcmp(WINO_PROJECT_VERSION, header) == 0, "CMake's version is wino.h's");
    if (c.failed)
        printf("  wino_version() %s, wino.h %s, CMake %s\n", wino_version(), header,
               WINO_PROJECT_VERSION);
    return test_report(&c);
}
