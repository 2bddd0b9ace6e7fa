#!/bin/bash
# The INT8 Winograd error study of docs/int8-error-study.md: every 3x3 layer of ResNet-18 on
# synthetic post-ReLU data, plus a first layer on a real photograph (astronaut.png of Debian's
# python3-skimage, NASA, public domain), F(2,3) / F(4,3) / F(6,3) with three clipping methods and
# INT8 direct convolution against FP32. Writes OUT.csv and OUT.png (matplotlib for the plot).
# Usage: scripts/int8-study.sh OUT   (after building into build/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/int8-study.sh OUT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
png=/usr/lib/python3/dist-packages/skimage/data/astronaut.png
if [ ! -f "$png" ]; then # not installed: take the file out of the Debian package
    (cd "$tmp" && apt-get download python3-skimage >/dev/null && dpkg -x python3-skimage_*.deb x)
    png=$tmp/x/usr/lib/python3/dist-packages/skimage/data/astronaut.png
fi
# 512 x 512 RGB -> 256 x 256 (2 x 2 means) as binary PPM
python3 - "$png" "$tmp/photo.ppm" <<'PY'
import sys
import matplotlib.image as mi
a = mi.imread(sys.argv[1])[:, :, :3]
a = (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) / 4
h, w, _ = a.shape
with open(sys.argv[2], "wb") as f:
    f.write(b"P6\n%d %d\n255\n" % (w, h))
    f.write(bytes(int(round(v * 255)) for v in a.reshape(-1)))
PY
./build/wino calibrate --study --image "$tmp/photo.ppm" --csv >"$out.csv"
python3 scripts/plot_int8_study.py "$out.csv" "$out.png"
