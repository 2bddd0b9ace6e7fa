#!/usr/bin/env bash
# The Python package's tests: a virtual environment (build/python-venv) with PyTorch, NumPy and
# pytest from PyPI, wino installed into it with `pip install .` from this tree (the C libraries
# built by scikit-build-core into the package), then pytest on tests/python. Called by
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
if ! [ -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo apt-get install -y python3-venv && python3 -m venv "$venv"
  }
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q numpy pytest torch "scikit-build-core>=0.10"
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/python" -m pip install -q --no-build-isolation .
# from outside the tree, so that `import wino` is the installed package, not python/wino
(cd /tmp && "$OLDPWD/$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python")
