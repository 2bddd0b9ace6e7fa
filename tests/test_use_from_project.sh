#!/usr/bin/env bash
# The link line of README's "Use from your project" builds and runs examples/conv2d_example.c
# against the library of this build (the directory of the wino binary given).
# Usage: bash tests/test_use_from_project.sh PATH_TO_WINO   (from the repository root)
set -u
build=$(dirname "${1:?usage: test_use_from_project.sh PATH_TO_WINO}")
lib=$build/libwino.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the README's lines, with the paths of this build
flags() { sed -n "s|^cc app\.c -I wino/include wino/build/libwino\.a \(.*[^ ]\)  *# $1\$|\1|p" README.md; }
cpu=$(flags "built without CUDA")
cuda=$(flags "built with CUDA")
if [ -z "$cpu" ] || [ -z "$cuda" ]; then
    echo "FAIL README has no link lines"
    echo "0 passed, 1 failed"
    exit 1
fi
line=$cpu
symbols=$(nm -A "$lib" 2>/dev/null)
grep -q ' U cublasCreate' <<<"$symbols" && line=$cuda
# a sanitizer build of the library (CI's second pass) needs the sanitizer runtimes as well
grep -q ' U __asan_report' <<<"$symbols" && line="$line -fsanitize=address,undefined"
# shellcheck disable=SC2086
if cc examples/conv2d_example.c -I include "$lib" $line -o "$tmp/example" &&
    "$tmp/example"; then
    echo "1 passed, 0 failed"
else
    echo "FAIL the README's link line (cc ... $line)"
    echo "0 passed, 1 failed"
    exit 1
fi
