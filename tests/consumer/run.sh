#!/usr/bin/env bash
# Installs the build BUILD_DIR to PREFIX (a new or empty directory) and builds this directory's programs
# against it as a project outside wino's tree would: with pkg-config (wino, wino-gen) and with
# CMake's find_package (wino::wino, wino::gen), then runs them. Checks too that
#  - find_package refuses a wino of the next major version;
#  - the CPU-only program loads neither GMP nor any CUDA library (ldd);
#  - a shared libwino exports the functions of wino.h (and the error recorders of
#    src/base/error.h that libwino_gen uses) and nothing else, libwino_gen those of wino_gen.h.
# Usage: tests/consumer/run.sh BUILD_DIR PREFIX      (CI: .ci/run, for a static and a shared build)
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: tests/consumer/run.sh BUILD_DIR PREFIX" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1
prefix=$2
failed=0
fail() {
  echo "consumer: FAIL $*"
  failed=1
}

mkdir -p "$prefix" && prefix=$(cd "$prefix" && pwd) || exit 2
if [ -n "$(ls -A "$prefix")" ]; then
  echo "consumer: PREFIX $prefix is not empty" >&2
  exit 2
fi
if ! cmake --install "$build" --prefix "$prefix" >/dev/null; then
  echo "consumer: FAIL install"
  exit 1
fi
pc=$(find "$prefix" -name wino.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "consumer: FAIL no wino.pc under $prefix"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$libdir/pkgconfig
shared=0
[ -e "$libdir/libwino.so" ] && shared=1
for f in include/wino.h include/wino_gen.h bin/wino share/wino/sets/resnet18.txt \
  share/man/man1/wino.1 share/doc/wino/README.md share/doc/wino/install.md \
  lib*/cmake/wino/winoConfig.cmake lib*/cmake/wino/winoConfigVersion.cmake; do
  # shellcheck disable=SC2086 # the lib* pattern
  ls "$prefix"/$f >/dev/null 2>&1 || fail "not installed: $f"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pkg-config: a static library brings its Libs.private (--static)
pc_libs=(--libs)
[ "$shared" = 1 ] || pc_libs+=(--static)
cflags=(-std=c99 -Wall -Wextra -Wpedantic -Werror)
# shellcheck disable=SC2046 # pkg-config's words
${CC:-cc} "${cflags[@]}" "$here/consumer.c" $(pkg-config --cflags "${pc_libs[@]}" wino) -lm \
  -Wl,-rpath,"$libdir" -o "$work/consumer_pc" || fail "pkg-config wino: build"
# shellcheck disable=SC2046
${CC:-cc} "${cflags[@]}" "$here/gen_consumer.c" $(pkg-config --cflags "${pc_libs[@]}" wino-gen) \
  -Wl,-rpath,"$libdir" -o "$work/gen_consumer_pc" || fail "pkg-config wino-gen: build"

# find_package, asking for this major.minor version
version=$(pkg-config --modversion wino)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
if ! { cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWINO_WANTED="$major.$minor" && cmake --build "$work/cmake"; } >"$work/cmake.log" 2>&1; then
  cat "$work/cmake.log"
  fail "find_package(wino $major.$minor): build"
fi
cmake -S "$here" -B "$work/cmake-next" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWINO_WANTED="$((major + 1)).0" >"$work/cmake-next.log" 2>&1 &&
  fail "find_package(wino $((major + 1)).0) accepted wino $version"

for program in consumer_pc gen_consumer_pc cmake/consumer cmake/gen_consumer; do
  [ -x "$work/$program" ] || continue
  "$work/$program" || fail "$program did not run"
done

# what the CPU-only program loads
for program in consumer_pc cmake/consumer; do
  [ -x "$work/$program" ] || continue
  loaded=$(ldd "$work/$program" | grep -E 'libgmp|libcudart|libcublas|libcuda\.|libnvrtc')
  [ -z "$loaded" ] || fail "$program loads $(echo "$loaded" | awk '{printf "%s ", $1}')"
done

# what a shared library exports: the functions its header declares WINO_API, nothing else
declared() { sed -n 's/^WINO_API[^(]*[ *]\(wino_[a-z0-9_]*\)(.*/\1/p' "$@" | sort -u; }
exports() {
  local lib=$1
  shift
  declared "$@" >"$work/declared"
  nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$work/exported"
  local extra missing
  extra=$(comm -13 "$work/declared" "$work/exported" | tr '\n' ' ')
  missing=$(comm -23 "$work/declared" "$work/exported" | tr '\n' ' ')
  [ -z "$extra" ] || fail "$(basename "$lib") exports what its header does not declare: $extra"
  [ -z "$missing" ] || fail "$(basename "$lib") lacks functions its header declares: $missing"
}
if [ "$shared" = 1 ]; then
  exports "$libdir/libwino.so" "$prefix/include/wino.h" "$root/src/base/error.h"
  exports "$libdir/libwino_gen.so" "$prefix/include/wino_gen.h"
  soname=$(objdump -p "$libdir/libwino.so" | awk '$1 == "SONAME" {print $2}')
  [ "$soname" = "libwino.so.$major" ] || fail "libwino.so's SONAME is $soname, not libwino.so.$major"
fi

kind=static
[ "$shared" = 1 ] && kind=shared
if [ "$failed" = 0 ]; then
  echo "consumer: PASS ($kind wino $version installed to $prefix)"
else
  echo "consumer: FAILED ($kind wino $version installed to $prefix)"
fi
exit "$failed"
