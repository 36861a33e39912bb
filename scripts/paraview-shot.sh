#!/usr/bin/env bash
# The README's ParaView picture: relayout run on the Quokka 2-D BP5 output of ../shared/data, then
# ParaView 5.11 (Debian's paraview, headless under xvfb-run) renders gasDensity from the run's
# view_758.hdf (virtual datasets over gasDensity.h5: no copy) to docs/img/quokka-2d-paraview.png.
#   scripts/paraview-shot.sh [IN] [OUT.png]
set -euo pipefail
IN=${1:-../shared/data/bp5/quokka-2d}
PNG=${2:-docs/img/quokka-2d-paraview.png}
BIN=${BIN:-bin/relayout}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/relayout-shot.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
"$BIN" run -q "$IN" -o "$DIR/out"
xvfb-run -a pvpython scripts/paraview-shot.py "$DIR/out/view_758.hdf" gasDensity "$PNG"
