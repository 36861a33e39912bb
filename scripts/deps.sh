#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/debian-packages.txt when any
# is missing. Used by `make deps` (and so by `make demo` and `make test`).
set -euo pipefail
mapfile -t need < <(grep -v '^#' "$(dirname "$0")/debian-packages.txt" | grep -v '^$')
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
