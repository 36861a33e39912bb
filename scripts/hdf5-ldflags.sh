#!/usr/bin/env bash
# Prints the CGO_LDFLAGS the Makefile builds and tests with: the caller's ($1, the CGO_LDFLAGS
# make started with; default "-g -O2"),
# plus, where HDF5's static archives lie beside its shared library (Debian's libhdf5-dev ships
# libhdf5.a and libhdf5_hl.a) and a program links against them, a directory holding only those
# two (bin/hdf5-static, links to them), searched first: cgo's -lhdf5 and -lhdf5_hl then take
# the archives, followed by the shared libraries they need (szip, aec, zlib, libm).
#
# Why: the shared libhdf5 of Debian loads 37 more libraries (curl, TLS, Kerberos, LDAP for its
# S3 driver, which relayout never uses). Every relayout command paid for them at start: 60-85 ms
# with the page cache dropped, against 25-55 ms linked statically (an H5open-only C program:
# 47-68 ms against 21-25 ms), 6% of `relayout plan` on 351,537 blocks (the benchmark log,
# session 19: git show 28c23df:bench/RESULTS.md). Anywhere else (a module's or Spack's HDF5, PKG_CONFIG=true with flags by hand)
# the caller's flags are printed unchanged and the build links HDF5 as it finds it.
set -uo pipefail
set -f # flags hold globs for the linker (H5*), not for the shell
flags=${1:--g -O2}
pc=${PKG_CONFIG:-pkg-config}
plain() { echo "$flags"; exit 0; }
[ "$pc" != true ] || plain
libdir=""
for l in $("$pc" --libs-only-L hdf5 2>/dev/null); do
  [ -f "${l#-L}/libhdf5.a" ] && [ -f "${l#-L}/libhdf5_hl.a" ] && { libdir=${l#-L}; break; }
done
[ -n "$libdir" ] || plain
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/bin/hdf5-static
cc=${CC:-$(go env CC 2>/dev/null || echo gcc)}
# make expands CGO_LDFLAGS for every recipe line: the answer is kept in $dir/ldflags, with what
# it was worked out from, and printed again while that holds and the archives are not newer.
key="$flags|$libdir|$cc|${CGO_CFLAGS:-}"
if [ -f "$dir/ldflags" ] && [ "$dir/ldflags" -nt "$libdir/libhdf5.a" ] && [ "$(head -n 1 "$dir/ldflags")" = "$key" ]; then
  tail -n +2 "$dir/ldflags"
  exit 0
fi
mkdir -p "$dir" || plain
ln -sf "$libdir/libhdf5.a" "$dir/libhdf5.a" && ln -sf "$libdir/libhdf5_hl.a" "$dir/libhdf5_hl.a" || plain
# The archives' own needs, as shared libraries; listed before them on the link line (cgo puts
# CGO_LDFLAGS first), so kept even by a linker that drops libraries not needed yet. The HDF5
# functions are exported: a filter plugin (a shared object linked against the shared libhdf5,
# which loads it beside the binary) then calls the library the binary holds, one library with
# one state, not a second copy of its own.
static="-L$dir -Wl,--no-as-needed -lsz -laec -lz -lm -ldl -Wl,--export-dynamic-symbol=H5*"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/t.c" <<'C'
#include <hdf5.h>
#include <hdf5_hl.h>
int main(int argc, char **argv) {
  if (argc > 1) return H5LTfind_dataset(0, "") < 0;
  return H5open() < 0;
}
C
# shellcheck disable=SC2086 # flag lists are split into words on purpose
"$cc" ${CGO_CFLAGS:-} $("$pc" --cflags hdf5) "$tmp/t.c" -o "$tmp/t" $flags $static -lhdf5 -lhdf5_hl -lhdf5 2>/dev/null &&
  "$tmp/t" || plain
printf '%s\n%s\n' "$key" "$flags $static" >"$dir/ldflags"
echo "$flags $static"
