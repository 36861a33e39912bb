#!/usr/bin/env bash
# make bench-climate: climate history files into one time series per variable (issue 40),
# relayout against the climate peers side by side in one run: the page cache of every input
# dropped before every timed command, the command order shuffled every round, medians of
# BENCH_RUNS rounds, peak RSS, and the bytes relayout read against the bytes stored.
#
# Inputs (BENCH_INPUTS, default "eam mpas"):
#   eam   12 monthly CDF-2 history files written through netCDF-C (scripts/gen_history.py:
#         123 record variables, 20 of them 72x96x144 float32, 1.0 GiB; BENCH_FORMAT picks the
#         kind, e.g. NETCDF3_64BIT_DATA for CDF-5; BENCH_FILES, BENCH_LEV scale it)
#   e3sm  12 E3SM-IO F-case h0 files (CDF-5, PnetCDF, the real 16-task decomposition; needs
#         ../shared/peers; BENCH_E3SM_RECORDS is its -r, though its h0 file keeps one record),
#         their time values made increasing
#   mpas  the 12 real monthly MPAS-Ocean history files of ../shared/data/netcdf/mpas-o-monthly
# Commands: cp -r --reflink=never + sync (the floor); ncclimo --split of every variable (NCO,
#   its default parallelism) + sync; ncrcat -v VAR for every variable, one after another, + sync
#   (what ncclimo runs per variable); nccopy -k nc4 of every file (each de-interleaved, no
#   time series) + sync; relayout run (verifies) and relayout run --no-verify; with BIN_BASE (a
#   relayout binary built from another commit) also that binary's two runs, in the same rounds,
#   so that a change is measured side by side ("relayout (base)").
# The full log goes to bench/history/<date>-bench-climate.md (BENCH_HISTORY; empty: stdout only).
set -euo pipefail
RUNS=${BENCH_RUNS:-3}
BIN=${BIN:-bin/relayout}
PEERS=${PEERS:-../shared/peers}
DATA=${DATA:-../shared/data}
HISTORY=${BENCH_HISTORY-bench/history/$(date -u +%Y-%m-%d)-bench-climate.md}
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-bench-climate.XXXXXX")}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
LOG=$DIR/log; : >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }
for tool in ncclimo ncrcat nccopy; do
  command -v "$tool" >/dev/null || { echo "bench-climate: $tool not found (Debian nco, netcdf-bin)" >&2; exit 1; }
done
read -r -a INPUTS <<<"${BENCH_INPUTS:-eam mpas}"

# The inputs, each written by its real writer (or the real files, copied once).
declare -A IN_BYTES NFILES
for k in "${INPUTS[@]}"; do
  mkdir -p "$DIR/$k"
  case $k in
  eam)
    /usr/bin/python3 scripts/gen_history.py "$DIR/eam" --files "${BENCH_FILES:-12}" --lev "${BENCH_LEV:-72}" \
      --format "${BENCH_FORMAT:-NETCDF3_64BIT_OFFSET}" ;;
  e3sm)
    [ -f "$PEERS/env.sh" ] || { echo "bench-climate: $PEERS/env.sh not found: e3sm needs the peers" >&2; exit 1; }
    PEERS=$(cd "$PEERS" && pwd) # the writer runs in the input's folder
    R=${BENCH_E3SM_RECORDS:-4}
    ( . "$PEERS/env.sh"; cd "$DIR/e3sm"
      for m in $(seq -w 1 12); do
        mpirun --allow-run-as-root --oversubscribe -np 16 e3sm_io "$PEERS/e3sm-io/map_f_case_16p.nc" -k -r "$R" \
          -a pnetcdf -x canonical -o "tmp$m.nc" >/dev/null
        mv "tmp${m}_h0.nc" "e3sm.eam.h0.0001-$m.nc"; rm -f tmp"${m}"_*.nc
      done )
    # e3sm_io writes the same times into every file: month m's records get m*R + r.
    /usr/bin/python3 - "$DIR/e3sm" "$R" <<'EOF'
import glob, sys, netCDF4
files, R = sorted(glob.glob(sys.argv[1] + "/*.nc")), int(sys.argv[2])
for m, f in enumerate(files):
    with netCDF4.Dataset(f, "r+") as d:
        d["time"][:] = [m * R + r for r in range(len(d.dimensions["time"]))]
EOF
    ;;
  mpas)
    cp "$DATA"/netcdf/mpas-o-monthly/mpaso.hist.*.nc "$DIR/mpas/" ;;
  *) echo "bench-climate: unknown input $k" >&2; exit 2 ;;
  esac
  IN_BYTES[$k]=$(du -cb "$DIR/$k"/*.nc | tail -1 | cut -f1)
  NFILES[$k]=$(ls "$DIR/$k"/*.nc | wc -l)
done

drop() { local k; for k in "${INPUTS[@]}"; do /usr/bin/python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$DIR/$k"/*.nc; done; }
declare -A WALL RSS
timeit() { # name, command
  rm -rf "$DIR/out"; mkdir -p "$DIR/out"; sync; drop
  /usr/bin/time -f "%e %M" -o "$DIR/time" bash -c "$2" >/dev/null 2>"$DIR/err" || { echo "$1 failed:"; cat "$DIR/err"; exit 1; }
  read -r w m <"$DIR/time"
  WALL[$1]+="$w "; RSS[$1]+="$m "
}
# Helpers for bash -c (exported): each syncs what it wrote.
syncout() { find "$DIR/out" -type f -exec sync {} +; }
cpsync() { cp -r --reflink=never "$DIR/$1" "$DIR/out/in" && syncout; }
# ncclimo checks the file count against the years (12 monthly files a year) and splits every
# variable of rank >= 2.
climo() { local n; n=$(ls "$DIR/$1"/*.nc | wc -l)
  ls "$DIR/$1"/*.nc | ncclimo --split -s 1 -e $(( (n + 11) / 12 )) -o "$DIR/out" >/dev/null && syncout; }
recvars() { /usr/bin/python3 -c '
import sys, netCDF4
d = netCDF4.Dataset(sys.argv[1])
print(" ".join(n for n, v in d.variables.items() if v.dimensions and d.dimensions[v.dimensions[0]].isunlimited()))' \
  "$(ls "$DIR/$1"/*.nc | head -1)"; }
rcat() { for v in $(recvars "$1"); do ncrcat -O -v "$v" "$DIR/$1"/*.nc "$DIR/out/$v.nc" || return 1; done && syncout; }
copy4() { for f in "$DIR/$1"/*.nc; do nccopy -k nc4 "$f" "$DIR/out/${f##*/}" || return 1; done && syncout; }
export -f syncout cpsync climo recvars rcat copy4; export DIR
CMDS=()
for k in "${INPUTS[@]}"; do
  CMDS+=("$k:cp+sync|cpsync $k" "$k:ncclimo --split+sync|climo $k" "$k:ncrcat -v VAR (each)+sync|rcat $k"
    "$k:nccopy -k nc4 (each file)+sync|copy4 $k"
    "$k:relayout|$BIN run -q $DIR/$k -o $DIR/out/r" "$k:relayout --no-verify|$BIN run -q $DIR/$k -o $DIR/out/r --no-verify")
  if [ -n "${BIN_BASE:-}" ]; then
    CMDS+=("$k:relayout (base)|$BIN_BASE run -q $DIR/$k -o $DIR/out/r"
      "$k:relayout --no-verify (base)|$BIN_BASE run -q $DIR/$k -o $DIR/out/r --no-verify")
  fi
done
t0=$(date +%s)
for r in $(seq "$RUNS"); do
  for i in $(shuf -i 0-$(( ${#CMDS[@]} - 1 )) --random-source=<(yes "round $r")); do
    line=${CMDS[$i]}
    timeit "${line%%|*}" "${line#*|}"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
med() { echo "${WALL[$1]}" | median; }
rss() { echo $(( $(echo "${RSS[$1]}" | median) / 1024 )); }
div() { printf %.2f "$(echo "$1 / $2" | bc -l)"; }
say "bench-climate $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $RUNS rounds in $(( $(date +%s) - t0 )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for k in "${INPUTS[@]}"; do
  floor=$(med "$k:cp+sync"); climo=$(med "$k:ncclimo --split+sync")
  rm -rf "$DIR/out"; drop
  "$BIN" run -q "$DIR/$k" -o "$DIR/out" --no-verify
  read -r rb sb < <(/usr/bin/python3 -c '
import json, sys
io = json.load(open(sys.argv[1]))["io"]
print(io["read_bytes"], io.get("stored_bytes", 0))' "$DIR/out/relayout.json")
  say ""
  say "**$k**: ${NFILES[$k]} files, ${IN_BYTES[$k]} bytes; relayout read $rb bytes ($(div "$rb" "${IN_BYTES[$k]}") of the files)"
  say ""
  say "| command | wall s, median of $RUNS | ÷ cp+sync | ncclimo ÷ it | peak RSS MB |"
  say "|---|---|---|---|---|"
  for line in "${CMDS[@]}"; do
    n=${line%%|*}
    [ "${n%%:*}" = "$k" ] || continue
    say "| ${n#*:} | $(med "$n") | $(div "$(med "$n")" "$floor") | $(div "$climo" "$(med "$n")") | $(rss "$n") |"
  done
done
if [ -n "$HISTORY" ]; then
  mkdir -p "$(dirname "$HISTORY")"
  { echo "# $(date -u +%Y-%m-%d) — make bench-climate, BENCH_INPUTS=\"${INPUTS[*]}\""; echo; cat "$LOG"; } >>"$HISTORY"
  echo "written to $HISTORY"
fi
