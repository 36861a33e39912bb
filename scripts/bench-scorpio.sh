#!/usr/bin/env bash
# make bench-scorpio: E3SM's SCORPIO ADIOS output into one netCDF-4 time series per variable
# (issue 42), relayout against SCORPIO's own converter adios2pio-nm and the cp floor, side by side
# in one run: the page cache dropped before every timed command, the command order shuffled every
# round, medians of BENCH_RUNS rounds, peak RSS, and the bytes relayout read against the bytes stored.
#
# Input (issue 42's synthetic case): scripts/gen_scorpio_maps.py writes a BENCH_NCOL-column map
# (default 100000) dealt in shuffled runs of BENCH_RUN (4) columns over 16 tasks and the matching
# lev x ncol map (BENCH_LEV, 72; each task's entries level-major like E3SM's 2-D maps), then
# ../shared/peers' scorpio_gen writes BENCH_FRAMES (12, at most 20) frames on BENCH_NP (16) ranks
# with iotype adios (about 1.1 GB), and once with iotype pnetcdf: the reference. Gate before any
# timing: relayout's output equals the reference (e2e/netcdf_check.py OUT REF), and adios2pio-nm's
# output equals it too except for its known fill-value bug (scorpio_check.py compare --holes-may-differ).
# Commands: cp -r --reflink=never + sync (the floor); adios2pio-nm on BENCH_PEER_NP (2) ranks
#   --pio-format=pnetcdf, as the PROVENANCE files run it, + sync (its gate run is timed as well;
#   when that takes more than BENCH_PEER_MAX seconds (120) the rounds leave it out and the table
#   gives that one run); relayout run (verifies), relayout run --no-verify, and relayout run
#   --max-mem BENCH_MAXMEM (512MiB, verifies).
# Caches: `sync; echo 3 > /proc/sys/vm/drop_caches` before every timed command (root), else the
# input's pages dropped with posix_fadvise. Peak RSS is /usr/bin/time's: of the largest process
# (for adios2pio-nm, one of its ranks, not their sum).
# After the rounds, one relayout run -v with --cpuprofile (BENCH_PROFILE=0: not) puts its io: lines
# and `go tool pprof -top` in the log.
# The full log goes to bench/history/<date>-bench-scorpio.md (BENCH_HISTORY; empty: stdout only);
# BENCH_DIR=DIR BENCH_KEEP=1 keeps the input and maps in DIR.
set -euo pipefail
RUNS=${BENCH_RUNS:-3}
BIN=$(cd "$(dirname "${BIN:-bin/relayout}")" && pwd)/$(basename "${BIN:-bin/relayout}")
PEERS=$(cd "${PEERS:-../shared/peers}" && pwd)
NCOL=${BENCH_NCOL:-100000}
FRAMES=${BENCH_FRAMES:-12}
NP=${BENCH_NP:-16}
PEER_NP=${BENCH_PEER_NP:-2}
PEER_MAX=${BENCH_PEER_MAX:-120}
MAXMEM=${BENCH_MAXMEM:-512MiB}
HISTORY=${BENCH_HISTORY-bench/history/$(date -u +%Y-%m-%d)-bench-scorpio.md}
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-bench-scorpio.XXXXXX")}
mkdir -p "$DIR"
trap '[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$DIR"' EXIT # BENCH_KEEP=1: keep the input (profiling)
LOG=$DIR/log; : >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }
[ -f "$PEERS/env.sh" ] || { echo "bench-scorpio: $PEERS/env.sh not found: the benchmark needs ../shared/peers" >&2; exit 1; }
# shellcheck disable=SC1091
. "$PEERS/env.sh"
for tool in mpirun scorpio_gen adios2pio-nm; do
  command -v "$tool" >/dev/null || { echo "bench-scorpio: $tool not found (../shared/peers, openmpi-bin)" >&2; exit 1; }
done
NAME=bench.eam.h0.0001-01.nc
MPI="mpirun --allow-run-as-root --oversubscribe"
load() { cut -d' ' -f1-3 /proc/loadavg; }

say "bench-scorpio $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r); relayout $("$BIN" --version 2>/dev/null | head -1); load before: $(load)"
say ""
# The maps, the input and the reference, each written by the real writer.
/usr/bin/python3 scripts/gen_scorpio_maps.py "$DIR/maps" --ncol "$NCOL" --lev "${BENCH_LEV:-72}" --tasks 16 --run "${BENCH_RUN:-4}" | tee -a "$LOG"
mkdir -p "$DIR/in" "$DIR/ref"
t=$(date +%s.%N)
(cd "$DIR/in" && $MPI -np "$NP" scorpio_gen -t adios -n "$FRAMES" -m "$DIR/maps" -1 map1d.dat -2 map2d.dat -o "$NAME") | tee -a "$LOG"
say "input written in $(printf %.1f "$(echo "$(date +%s.%N) - $t" | bc -l)") s"
(cd "$DIR/ref" && $MPI -np "$NP" scorpio_gen -t pnetcdf -n "$FRAMES" -m "$DIR/maps" -1 map1d.dat -2 map2d.dat -o "$NAME") >/dev/null
IN_BYTES=$(du -cb "$DIR/in/$NAME.bp"/* | tail -1 | cut -f1)
DATA_BYTES=$(stat -c %s "$DIR/in/$NAME.bp/data.0")
say "input: $DIR/in/$NAME.bp, $IN_BYTES bytes ($(ls "$DIR/in/$NAME.bp" | tr '\n' ' '); data.0 $DATA_BYTES); reference (pnetcdf cdf2) $(stat -c %s "$DIR/ref/$NAME") bytes"

if [ -w /proc/sys/vm/drop_caches ]; then
  DROP="sync; echo 3 > /proc/sys/vm/drop_caches"
  drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
else
  DROP="posix_fadvise(DONTNEED) of the input's files"
  drop() { /usr/bin/python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$DIR/in/$NAME.bp"/*; }
fi
declare -A WALL RSS
timeit() { # name, command
  rm -rf "$DIR/out"; mkdir -p "$DIR/out"; sync; drop
  /usr/bin/time -f "%e %M" -o "$DIR/time" bash -c "$2" >"$DIR/stdout" 2>"$DIR/err" || { echo "$1 failed:"; cat "$DIR/err"; exit 1; }
  read -r w m <"$DIR/time"
  WALL[$1]+="$w "; RSS[$1]+="$m "
}
# Helpers for bash -c (exported): each syncs what it wrote.
syncout() { find "$DIR/out" -type f -exec sync {} +; }
cpsync() { cp -r --reflink=never "$DIR/in" "$DIR/out/in" && syncout; }
peer() { $MPI -np "$PEER_NP" adios2pio-nm --bp-file="$DIR/in/$NAME.bp" --nc-file="$DIR/out/$NAME" --pio-format=pnetcdf && syncout; }
export -f syncout cpsync peer; export DIR NAME MPI PEER_NP

# The gate: relayout's output and the peer's against the PnetCDF reference, before any timing.
say ""
rm -rf "$DIR/out"; drop
"$BIN" run -q "$DIR/in/$NAME.bp" -o "$DIR/out"
/usr/bin/python3 e2e/netcdf_check.py "$DIR/out" "$DIR/ref/$NAME" >"$DIR/check" 2>&1 || { cat "$DIR/check"; echo "bench-scorpio: relayout's output differs from the reference" >&2; exit 1; }
say "gate: relayout run equals the PnetCDF reference (e2e/netcdf_check.py: $(grep -c '^OK' "$DIR/check") OK lines, no difference)"
timeit adios2pio-nm "peer"
say "gate: adios2pio-nm on $PEER_NP ranks took ${WALL[adios2pio-nm]}s (caches dropped); its output against the reference (scorpio_check.py compare --holes-may-differ):"
/usr/bin/python3 "$PEERS/scorpio_check.py" compare --holes-may-differ "$DIR/out/$NAME" "$DIR/ref/$NAME" 2>&1 | sed 's/^/    /' | tee -a "$LOG"
PEER_ONCE=0
if [ "$(echo "${WALL[adios2pio-nm]} > $PEER_MAX" | bc)" = 1 ]; then
  PEER_ONCE=1; say "adios2pio-nm took more than ${PEER_MAX}s: timed once (this run), left out of the rounds"
else
  WALL[adios2pio-nm]=""; RSS[adios2pio-nm]="" # the gate run is not one of the rounds
fi
rm -rf "$DIR/ref"

CMDS=("cp -r + sync|cpsync"
  "relayout|$BIN run -q $DIR/in/$NAME.bp -o $DIR/out/r"
  "relayout --no-verify|$BIN run -q $DIR/in/$NAME.bp -o $DIR/out/r --no-verify"
  "relayout --max-mem $MAXMEM|$BIN run -q $DIR/in/$NAME.bp -o $DIR/out/r --max-mem $MAXMEM")
[ "$PEER_ONCE" = 1 ] || CMDS+=("adios2pio-nm|peer")
t0=$(date +%s)
LOADS=""
for r in $(seq "$RUNS"); do
  for i in $(shuf -i 0-$(( ${#CMDS[@]} - 1 )) --random-source=<(yes "round $r")); do
    line=${CMDS[$i]}
    timeit "${line%%|*}" "${line#*|}"
  done
  LOADS+="$(load | cut -d' ' -f1) "
done
[ "$PEER_ONCE" = 1 ] && CMDS+=("adios2pio-nm|peer")
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
med() { echo "${WALL[$1]}" | median; }
rss() { echo $(( $(echo "${RSS[$1]}" | median) / 1024 )); }
div() { printf %.2f "$(echo "$1 / $2" | bc -l)"; }
say ""
say "$RUNS rounds in $(( $(date +%s) - t0 )) s, caches dropped before every command ($DROP); load (1 min) after each round: $LOADS; after: $(load)"
say "all times, s: $(for line in "${CMDS[@]}"; do n=${line%%|*}; printf '%s: %s; ' "$n" "${WALL[$n]}"; done)"

# relayout's I/O: bytes read against stored, the stage seconds, the memory budget; one -v run each.
manifest() { /usr/bin/python3 -c '
import json, sys
io = json.load(open(sys.argv[1]))["io"]
print(io["read_bytes"], io.get("verify_read_bytes", 0), io["read_calls"], io["max_mem"], io["peak_mem"])' "$1"; }
say ""
declare -A RSS_V
for mm in "" "--max-mem $MAXMEM"; do
  rm -rf "$DIR/out"; drop
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$DIR/time" "$BIN" run -v "$DIR/in/$NAME.bp" -o "$DIR/out" $mm >"$DIR/v" 2>&1
  read -r w m <"$DIR/time"
  read -r rb vb rc bmax bpeak < <(manifest "$DIR/out/relayout.json")
  READ_RATIO=$(div "$rb" "$IN_BYTES")
  RSS_V[${mm:-default}]=$(( m / 1024 ))
  say "relayout run ${mm:-(default --max-mem 1GiB)}: ${w}s, peak RSS $(( m / 1024 )) MiB; read $rb bytes in $rc calls ($(div "$rb" "$IN_BYTES") of the $IN_BYTES stored; data.0 $DATA_BYTES), verify read $vb more ($(div "$vb" "$IN_BYTES")); buffers peak $(( bpeak >> 20 )) of a $(( bmax >> 20 )) MiB budget"
  grep -E '^(io:|done:|  )' "$DIR/v" | grep -v '^progress' | sed 's/^/    /' >>"$LOG"
done

if [ "${BENCH_PROFILE:-1}" = 1 ] && command -v "${GO:-go}" >/dev/null; then
  for nv in "--no-verify" ""; do
    rm -rf "$DIR/out"; drop
    # shellcheck disable=SC2086
    "$BIN" run -q "$DIR/in/$NAME.bp" -o "$DIR/out" $nv --cpuprofile "$DIR/cpu.prof"
    say ""
    say "CPU profile of relayout run ${nv:-(verifies)} (go tool pprof -top, the first 30 lines):"
    say '```'
    "${GO:-go}" tool pprof -top "$BIN" "$DIR/cpu.prof" 2>/dev/null | head -36 | tee -a "$LOG"
    say '```'
  done
fi

floor=$(med "cp -r + sync"); peerm=$(med adios2pio-nm)
say ""
say "**SCORPIO ADIOS** ($NCOL columns in shuffled runs of ${BENCH_RUN:-4} over 16 tasks, ${BENCH_LEV:-72} levels, $FRAMES frames, written by scorpio_gen on $NP ranks): $IN_BYTES bytes"
say ""
say "| command | wall s, median of $RUNS | ÷ cp+sync | adios2pio-nm ÷ it | peak RSS MiB |"
say "|---|---|---|---|---|"
for line in "${CMDS[@]}"; do
  n=${line%%|*}
  say "| $n | $(med "$n") | $(div "$(med "$n")" "$floor") | $(div "$peerm" "$(med "$n")") | $(rss "$n") |"
done
[ "$PEER_ONCE" = 1 ] && say "(adios2pio-nm: one run, more than ${PEER_MAX}s)"
# Issue 42's targets, from the medians above and the -v runs.
met() { if [ "$(echo "$1" | bc -l)" = 1 ]; then echo met; else echo "NOT met"; fi; }
rl=$(med relayout); mmed=$(med "relayout --max-mem $MAXMEM")
mmb=$(( $(numfmt --from=iec-i "${MAXMEM%B}") >> 20 ))
rd=$(rss relayout); rm5=$(rss "relayout --max-mem $MAXMEM")
say ""
say "targets: adios2pio-nm ÷ relayout $(div "$peerm" "$rl") (≥ 10: $(met "$peerm / $rl >= 10")); relayout ÷ cp+sync $(div "$rl" "$floor") (≤ 2: $(met "$rl / $floor <= 2")), --max-mem $MAXMEM $(div "$mmed" "$floor");" \
  "peak RSS $rd MiB at the default --max-mem 1GiB (≤ 1088: $(met "$rd <= 1088")), $rm5 MiB at --max-mem $MAXMEM (≤ $(( mmb + 64 )): $(met "$rm5 <= $mmb + 64"));" \
  "input bytes read once: read $READ_RATIO of the stored bytes ($(met "$READ_RATIO <= 1.01"))"
if [ -n "$HISTORY" ]; then
  mkdir -p "$(dirname "$HISTORY")"
  { echo "# $(date -u +%Y-%m-%d) — make bench-scorpio, BENCH_NCOL=$NCOL BENCH_FRAMES=$FRAMES BENCH_RUNS=$RUNS"; echo; cat "$LOG"; } >>"$HISTORY"
  echo "written to $HISTORY"
fi
