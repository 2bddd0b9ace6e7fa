# FindGMP: the GNU multiple-precision library (libgmp-dev), which wino's exact generator
# (libwino_gen) links. Sets GMP_FOUND and defines the imported target GMP::GMP.
# GMP_INCLUDE_DIR and GMP_LIBRARY may be given on the command line (e.g. a static libgmp.a).
# Installed beside winoConfig.cmake: a static libwino_gen needs it in the consumer's build too.
find_path(GMP_INCLUDE_DIR gmp.h)
find_library(GMP_LIBRARY gmp)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  GMP REQUIRED_VARS GMP_LIBRARY GMP_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "install libgmp-dev (scripts/bootstrap.sh does)")
if(GMP_FOUND AND NOT TARGET GMP::GMP)
  add_library(GMP::GMP UNKNOWN IMPORTED)
  set_target_properties(GMP::GMP PROPERTIES IMPORTED_LOCATION "${GMP_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${GMP_INCLUDE_DIR}")
endif()
mark_as_advanced(GMP_INCLUDE_DIR GMP_LIBRARY)
