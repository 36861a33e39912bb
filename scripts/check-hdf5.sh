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
    With a parallel (MPI) HDF5 build, add CC=mpicc.
  (README.md, "Install")
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
printf '#include <hdf5.h>\n#include <hdf5_hl.h>\nint main(void) { return H5open() < 0 || H5LTfind_dataset(0, "") < 0; }\n' >"$tmp/t.c"
# shellcheck disable=SC2086 # flag lists are split into words on purpose
if ! "$cc" ${CGO_CFLAGS:-} $flags $gonum_c "$tmp/t.c" -o "$tmp/t" ${CGO_LDFLAGS:-} $flags $gonum_l -lhdf5_hl -lhdf5 2>"$tmp/err"; then
  head -5 "$tmp/err" >&2
  if grep -q 'hdf5.*\.h' "$tmp/err"; then
    fail "HDF5's headers (hdf5.h, hdf5_hl.h) were not found"
  fi
  fail "HDF5 (libhdf5, libhdf5_hl) could not be compiled against or linked"
fi
