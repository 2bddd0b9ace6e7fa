#!/usr/bin/env bash
# The link lines of README's "Use from your project" build and run examples/conv2d_example.c
# against the library of this build (the directory of the wino binary given): the static line
# for libwino.a, the shared one for libwino.so.
# Usage: bash tests/test_use_from_project.sh PATH_TO_WINO   (from the repository root)
set -u
build=$(dirname "${1:?usage: test_use_from_project.sh PATH_TO_WINO}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the README's line ending in "# $1", after -I wino/include, with the paths of this build
line() {
    sed -n "s|^cc app\.c -I wino/include \(.*[^ ]\)  *# $1\$|\1|p" README.md |
        sed "s|wino/build|$build|g"
}
if [ -e "$build/libwino.a" ]; then
    kind=static
    flags=$(line "static (the default build)")
    symbols=$(nm -A "$build/libwino.a" 2>/dev/null)
else
    kind=shared
    flags=$(line "-DBUILD_SHARED_LIBS=ON")
    symbols=$(nm -D "$build/libwino.so" 2>/dev/null)
fi
if [ -z "$flags" ]; then
    echo "FAIL README has no $kind link line"
    echo "0 passed, 1 failed"
    exit 1
fi
# a sanitizer build of the library (CI's second pass) needs the sanitizer runtimes as well
grep -q ' U __asan_report' <<<"$symbols" && flags="$flags -fsanitize=address,undefined"
# shellcheck disable=SC2086
if cc examples/conv2d_example.c -I include $flags -o "$tmp/example" && "$tmp/example"; then
    echo "PASS the README's $kind link line"
    echo "1 passed, 0 failed"
else
    echo "FAIL the README's $kind link line (cc ... $flags)"
    echo "0 passed, 1 failed"
    exit 1
fi
