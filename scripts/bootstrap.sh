#!/usr/bin/env bash
# Installs the Debian packages wino needs to build and test, when they are missing.
set -euo pipefail
# ocl-icd-opencl-dev and opencl-headers build the OpenCL component; pocl-opencl-icd is the
# OpenCL device (the CPU) its tests run on.
needed=(build-essential cmake libgmp-dev python3 libdnnl-dev libopenblas-dev
        ocl-icd-opencl-dev opencl-headers pocl-opencl-icd)
missing=()
for pkg in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
