# Writes OUT, a C file holding the OpenCL texts of src/opencl (KERNELS: winograd_float.cl;
# TILES: the generated wino_f32_transforms_fMxM_RxR.cl) as NUL-terminated char arrays, and
# wino_opencl_tile_source(m, r) (src/opencl/opencl_sources.h). Run by the build:
#   cmake -DOUT=file -DKERNELS=file -DTILES="a;b;..." -P embed_opencl.cmake
function(embed_array storage name file out_var)
  file(READ ${file} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
         bytes "${bytes}")
  set(${out_var} "${storage}const char ${name}[] = {\n    ${bytes}0x00};\n" PARENT_SCOPE)
endfunction()

set(text "/* Generated at build time by cmake/embed_opencl.cmake from src/opencl. Do not edit. */\n")
string(APPEND text "#include <stddef.h>\n\n#include \"opencl/opencl_sources.h\"\n\n")
embed_array("" wino_opencl_winograd_float ${KERNELS} array)
string(APPEND text "${array}\n")
set(table "")
foreach(tile ${TILES})
  get_filename_component(base ${tile} NAME_WE)
  if(NOT base MATCHES "^wino_f32_transforms_f([0-9]+)x[0-9]+_([0-9]+)x[0-9]+$")
    message(FATAL_ERROR "embed_opencl: unexpected tile file ${tile}")
  endif()
  embed_array("static " ${base} ${tile} array)
  string(APPEND text "${array}")
  string(APPEND table "        {${CMAKE_MATCH_1}, ${CMAKE_MATCH_2}, ${base}},\n")
endforeach()
string(APPEND text "
const char *wino_opencl_tile_source(int m, int r)
{
    static const struct {
        int m, r;
        const char *text;
    } tiles[] = {
${table}    };
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
        if (tiles[i].m == m && tiles[i].r == r)
            return tiles[i].text;
    return NULL;
}
")
file(WRITE ${OUT}.new "${text}")
configure_file(${OUT}.new ${OUT} COPYONLY)
