#!/usr/bin/env bash
# Installs the Debian packages relayout builds and tests with, when missing.
# Used by `make deps` (and so by `make demo`, `make test` and .ci/run).
set -euo pipefail
need=(libhdf5-dev pkg-config hdf5-tools python3-h5py python3-numpy sqlite3 time bc
      libadios-bin python3-adios python3-mpi4py openmpi-bin python3-yt netcdf-bin librsvg2-bin
      slurm-wlm munge)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
