#!/usr/bin/env bash
# make build's check (it never installs anything): can the C compiler cgo uses find HDF5's
# headers and link libhdf5 and libhdf5_hl with the flags cgo will pass? Those are what
# `pkg-config hdf5` prints (internal/h5 asks pkg-config; PKG_CONFIG names another program)
# plus CGO_CFLAGS and CGO_LDFLAGS (and the Debian directories gonum/hdf5 adds). On failure it says what to do and exits 1.
set -uo pipefail
cc=${CC:-$(go env CC 2>/dev/null || echo gcc)}
pc=${PKG_CONFIG:-pkg-config}
fail() {
  cat >&2 <<MSG
build: $1
  Debian/Ubuntu: run \`make deps\` (installs libhdf5-dev and pkg-config with apt-get, through sudo
    when not root), then \`make build\` again.
  Another Linux with HDF5 >= 1.10 from a module or Spack: \`module load hdf5\` or \`spack load hdf5\`
    (they put hdf5.pc on PKG_CONFIG_PATH), or point cgo at it by hand:
      PKG_CONFIG=true CGO_CFLAGS="-I\$HDF5_DIR/include" \\
      CGO_LDFLAGS="-L\$HDF5_DIR/lib -Wl,-rpath,\$HDF5_DIR/lib" make build
    A thread-safe serial HDF5 is wanted; with a parallel (MPI) build add CC=mpicc.
  (docs/install.md)
MSG
  exit 1
}
command -v "$cc" >/dev/null 2>&1 || fail "no C compiler \"$cc\" for cgo (Debian: apt-get install gcc; or set CC)"
flags=""
if [ "$pc" != true ]; then
  command -v "$pc" >/dev/null 2>&1 || fail "\"$pc\" not found: cgo asks it for HDF5's flags (or set PKG_CONFIG=true and CGO_CFLAGS/CGO_LDFLAGS)"
  flags=$("$pc" --cflags --libs hdf5 2>/dev/null) || fail "\`$pc hdf5\` knows no HDF5 (no hdf5.pc on PKG_CONFIG_PATH)"
fi
# gonum.org/v1/hdf5 adds these directories itself (its cgoflags.go).
case $(uname -m) in
  aarch64) multi=aarch64-linux-gnu ;;
  *) multi=x86_64-linux-gnu ;;
esac
gonum_c="-I/usr/local/include -I/usr/lib/$multi/hdf5/serial/include"
gonum_l="-L/usr/local/lib -L/usr/lib/$multi/hdf5/serial/"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The program also tells whether the library is thread-safe (it exits 3 when not).
cat >"$tmp/t.c" <<'C'
#include <hdf5.h>
#include <hdf5_hl.h>
int main(int argc, char **argv) {
  hbool_t ts = 0;
  if (argc > 1) return H5LTfind_dataset(0, "") < 0; /* never run: links libhdf5_hl */
  if (H5open() < 0 || H5is_library_threadsafe(&ts) < 0) return 1;
  return ts ? 0 : 3;
}
C
# shellcheck disable=SC2086 # flag lists are split into words on purpose
if ! "$cc" ${CGO_CFLAGS:-} $flags $gonum_c "$tmp/t.c" -o "$tmp/t" ${CGO_LDFLAGS:-} $flags $gonum_l -lhdf5_hl -lhdf5 2>"$tmp/err"; then
  head -5 "$tmp/err" >&2
  if grep -q 'hdf5.*\.h' "$tmp/err"; then
    fail "HDF5's headers (hdf5.h, hdf5_hl.h) were not found"
  fi
  fail "HDF5 (libhdf5, libhdf5_hl) could not be compiled against or linked"
fi
# Run it where it can run (a module's library may need the module loaded, or the rpath).
"$tmp/t" >/dev/null 2>&1
case $? in
  3) cat >&2 <<MSG
build: warning: this HDF5 is not thread-safe. relayout calls HDF5 from several goroutines (one
  lock per open file, none around the library) and relies on a build with --enable-threadsafe
  (Debian's libhdf5 is one; Spack: hdf5+threadsafe; a module's libhdf5.settings says
  "Threadsafety: yes"). Building anyway; expect crashes with this library.
MSG
  ;;
esac
exit 0
