#!/usr/bin/env bash
# make bench (second part; also `make bench-peers`): relayout against the real peers on inputs
# written at bench time by the real writers, side by side in one run, the page cache of every
# input dropped (posix_fadvise DONTNEED) before every timed command, the command order rotated
# every round. Prints per-command medians (wall seconds, peak RSS), the ratios issue 19's targets
# name, the bytes relayout read against the bytes stored (its manifest's io section) and the
# catalog and plan cost per block, and writes its full log to bench/history/<date>-bench-peers-N<N>-B<B>.md
# (bench/RESULTS.md holds the current figures, updated by hand from these logs).
#
# Inputs (N^3 meshes in B^3 blocks from W writer ranks after a load-balancing shuffle):
#   bp4, bp5  ADIOS2 2.12 through ../shared/peers/bp_gen.py: fields/Bx f8, fields/rho f4,
#             fields/id i4, fine/Ez f8 partly covered (about 17.5 bytes a cell: N=384 is 1 GiB),
#             BENCH_AGG aggregators (sub-files)
#   openpmd   an openPMD series written by openPMD-api (scripts/bench_openpmd.py, MPI build):
#             file-based BP4 bench_%06T.bp, 2 iterations of E/x f8 + rho f4 (N=384: 1.36 GB)
#   h5        the same series as openPMD-HDF5 (openPMD-api's chunking), written by openpmd-pipe
# Commands: cp -r --reflink=never + sync (the floor), adios2_reorganize BP -> BP4 + sync,
#   openpmd-pipe BP -> HDF5 + sync, h5repack -l CONTI + sync (each file), relayout run default
#   (verifies), --no-verify, both again with --digest blake3 and with --digest xxh64,
#   --layout chunked --chunks 4x4x4,
#   --layout auto. The peers get a sync
#   after them because relayout syncs its output before it returns.
#
#   BENCH_N (mesh edge, default 384), BENCH_B (block edge, default 8: 110,592 blocks per
#   variable at N=384), BENCH_W (writer ranks, default 8), BENCH_AGG (default 4), BENCH_RUNS
#   (default 3), BENCH_INPUTS (which of bp4 bp5 openpmd h5 to write and time, default all; h5
#   needs openpmd; the issue's own table: BENCH_N=448 BENCH_B=32 BENCH_AGG=2 BENCH_INPUTS=bp4), BENCH_DIR, BENCH_HISTORY (the folder of the logs, default bench/history; empty: the log on stdout only),
#   BENCH_NOTE (a sentence recorded beside the figures, e.g. what else ran on the machine),
#   PEERS (default ../shared/peers), BENCH_READ=0 (skip the read benchmark), READBENCH_N (its
#   input's mesh edge, default 192; its other knobs READBENCH_* are listed in scripts/bench-read.sh). Without the peers it says so and exits 0 (1
#   under CI=true).
# Space: the four inputs plus one output at a time, about 8 GB in BENCH_DIR at N=384 (2.4 GB at
# N=256). Time at N=256 on a 2-core machine under heavy load from other jobs: 2 min to write the
# inputs, 14 min for 3 rounds of the 22 commands (the benchmark log of 2026-12-01: git show 28c23df:bench/RESULTS.md).
set -euo pipefail
N=${BENCH_N:-384}; B=${BENCH_B:-8}; W=${BENCH_W:-8}; AGG=${BENCH_AGG:-4}; RUNS=${BENCH_RUNS:-3}
HISTORY=${BENCH_HISTORY-bench/history}
PEERS=${PEERS:-../shared/peers}
BIN=${BIN:-bin/relayout}
if [ ! -f "$PEERS/env.sh" ]; then
  echo "bench-peers: $PEERS/env.sh not found: the real peers (ADIOS2, openPMD-api) are not installed; skipped" >&2
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi
PEERS=$(cd "$PEERS" && pwd)
((N % B == 0)) || { echo "bench-peers: BENCH_N=$N is not a multiple of BENCH_B=$B" >&2; exit 2; }
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-bench-peers.XXXXXX")}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
LOG=$DIR/log; : >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }
elapsed() { printf %.1f "$(echo "$(date +%s.%N) - $1" | bc)"; }
MPIRUN=(mpirun -np "$W" --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The inputs, each written by its real writer. The MPI build of openPMD-api has other
# libraries and Python paths: it is sourced in a subshell of its own.
t0=$(date +%s.%N)
read -r -a INPUTS <<<"${BENCH_INPUTS:-bp4 bp5 openpmd h5}"
want() { [[ " ${INPUTS[*]} " == *" $1 "* ]]; }
for k in "${INPUTS[@]}"; do
  case $k in bp4|bp5|openpmd) ;; h5) want openpmd || { echo "bench-peers: BENCH_INPUTS: h5 needs openpmd" >&2; exit 2; } ;;
    *) echo "bench-peers: BENCH_INPUTS: unknown input $k (bp4 bp5 openpmd h5)" >&2; exit 2 ;; esac
done
if want bp4; then (. "$PEERS/env.sh"; "${MPIRUN[@]}" /usr/bin/python3 "$PEERS/bp_gen.py" BP4 "$DIR/bp4" "$N" "$B" --aggregators "$AGG" >/dev/null); fi
if want bp5; then (. "$PEERS/env.sh"; "${MPIRUN[@]}" /usr/bin/python3 "$PEERS/bp_gen.py" BP5 "$DIR/bp5" "$N" "$B" --aggregators "$AGG" >/dev/null); fi
if want openpmd; then (export PEERS_MPI=1; . "$PEERS/env.sh"; "${MPIRUN[@]}" /usr/bin/python3 scripts/bench_openpmd.py "$DIR/openpmd" "$N" "$B" --aggregators "$AGG" >/dev/null); fi
. "$PEERS/env.sh"
if want h5; then openpmd-pipe --infile "$DIR/openpmd/bench_%06T.bp" --outfile "$DIR/h5/bench_%06T.h5" >/dev/null; fi
say "inputs: ${N}^3 meshes in ${B}^3 blocks from $W writer ranks after a load-balancing shuffle, $AGG aggregators; generated in $(elapsed "$t0")s"
declare -A IN_BYTES BLOCKS STORED
for k in "${INPUTS[@]}"; do
  IN_BYTES[$k]=$(du -sb "$DIR/$k" | cut -f1)
  read -r BLOCKS[$k] STORED[$k] < <("$BIN" catalog --json "$DIR/$k" | /usr/bin/python3 -c '
import json, sys
vs = json.load(sys.stdin)["variables"]
print(sum(v["blocks"] for v in vs), sum(v["stored_bytes"] for v in vs))')
done
want bp4 && say "- bp4: ADIOS2 BP4 (bp_gen.py), ${IN_BYTES[bp4]} bytes, ${BLOCKS[bp4]} blocks"
want bp5 && say "- bp5: ADIOS2 BP5 (bp_gen.py), ${IN_BYTES[bp5]} bytes, ${BLOCKS[bp5]} blocks"
want openpmd && say "- openpmd: openPMD-api file-based BP4 series (scripts/bench_openpmd.py), ${IN_BYTES[openpmd]} bytes, ${BLOCKS[openpmd]} blocks"
want h5 && say "- h5: the openpmd series converted by openpmd-pipe (openPMD-HDF5, openPMD-api's chunks), ${IN_BYTES[h5]} bytes, ${BLOCKS[h5]} chunks"
cpu=$(lscpu | awk -F: '/Model name/{gsub(/^ +/,"",$2); print $2; exit}')
say "machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r), $(df -T "$DIR" | awk 'NR==2{print $2}') at $DIR; load average before the timings: $(cut -d' ' -f1-3 /proc/loadavg)"
say "peers: adios2_reorganize (ADIOS2 $(bpls --version 2>&1 | grep -o '[0-9][0-9]*\.[0-9][0-9.]*' | head -1)) and openpmd-pipe from $PEERS (openPMD-api $(/usr/bin/python3 -c 'import openpmd_api; print(openpmd_api.__version__)')), $(h5repack --version 2>&1 | head -1)"
[ -n "${BENCH_NOTE:-}" ] && say "note: $BENCH_NOTE"

drop() { # posix_fadvise(DONTNEED) on every input file: cold reads for each command
  find "${INPUTS[@]/#/$DIR/}" -type f -exec dd if={} iflag=nocache count=0 status=none \;
}
declare -A WALL RSS
timeit() { # name, command line (run by bash -c; the exported helpers below are known there)
  local name=$1
  rm -rf "$DIR/out"; drop; sync
  /usr/bin/time -f "%e %M" -o "$DIR/time" bash -c "$2" >/dev/null 2>"$DIR/err" || { echo "$name failed:"; cat "$DIR/err"; exit 1; }
  read -r w m <"$DIR/time"
  WALL[$name]+="$w "; RSS[$name]+="$m "
}
# Helpers for bash -c (exported): each syncs what it wrote.
cpsync() { cp -r --reflink=never "$DIR/$1" "$DIR/out" && find "$DIR/out" -type f -exec sync {} +; }
reorg() { adios2_reorganize "$DIR/$1" "$DIR/out/r.bp" BPFile "" BP4 "" && find "$DIR/out" -type f -exec sync {} +; }
pipe() { openpmd-pipe --infile "$DIR/openpmd/bench_%06T.bp" --outfile "$DIR/out/bench_%06T.h5" && sync "$DIR"/out/*.h5; }
repack() { mkdir -p "$DIR/out" && for f in "$DIR"/h5/*.h5; do h5repack -l CONTI "$f" "$DIR/out/${f##*/}" || return 1; done && sync "$DIR"/out/*.h5; }
export -f cpsync reorg pipe repack; export DIR
RL="$BIN run -q"
# Each input's peer: its name in the tables | its command line.
declare -A PEER=([bp4]="adios2_reorganize+sync|reorg bp4" [bp5]="adios2_reorganize+sync|reorg bp5"
  [openpmd]="openpmd-pipe+sync|pipe" [h5]="h5repack+sync|repack")
CMDS=()
for k in "${INPUTS[@]}"; do
  CMDS+=("$k:cp+sync|cpsync $k" "$k:${PEER[$k]}")
  CMDS+=("$k:relayout|$RL $DIR/$k -o $DIR/out" "$k:relayout --no-verify|$RL $DIR/$k -o $DIR/out --no-verify"
    "$k:relayout --digest blake3|$RL $DIR/$k -o $DIR/out --digest blake3"
    "$k:relayout --no-verify --digest blake3|$RL $DIR/$k -o $DIR/out --no-verify --digest blake3"
    "$k:relayout --digest xxh64|$RL $DIR/$k -o $DIR/out --digest xxh64"
    "$k:relayout --no-verify --digest xxh64|$RL $DIR/$k -o $DIR/out --no-verify --digest xxh64")
  if [ "$k" != h5 ]; then
    CMDS+=("$k:relayout --layout chunked --chunks 4x4x4|$RL $DIR/$k -o $DIR/out --layout chunked --chunks 4x4x4"
      "$k:relayout --layout auto|$RL $DIR/$k -o $DIR/out --layout auto")
  fi
done
t0=$(date +%s.%N)
# Every round runs every command once in an order of its own (a shuffle seeded by the round),
# so that no command always follows the same one: a run's speed depends on what ran before it.
for r in $(seq "$RUNS"); do
  for i in $(shuf -i 0-$(( ${#CMDS[@]} - 1 )) --random-source=<(yes "round $r")); do
    line=${CMDS[$i]}
    timeit "${line%%|*}" "${line#*|}"
  done
done
say "timed $RUNS rounds of ${#CMDS[@]} commands in $(elapsed "$t0")s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
med() { echo "${WALL[$1]}" | median; }
rss() { echo $(( $(echo "${RSS[$1]}" | median) / 1024 )); }
div() { printf %.2f "$(echo "$1 / $2" | bc -l)"; }
peer() { echo "$1:${PEER[$1]%%|*}"; } # the name of input $1's peer command
# ratios K DEFAULT NOVERIFY: the table cells of issue 19's wall-time targets for input K and two
# of its relayout commands (names after "K:"): DEFAULT ÷ cp+sync, NOVERIFY ÷ cp+sync, peer ÷
# DEFAULT, peer ÷ NOVERIFY (medians); the target tables (sha256, blake3, xxh64) are made of them.
ratios() {
  local f p d nv
  f=$(med "$1:cp+sync"); p=$(med "$(peer "$1")"); d=$(med "$1:$2"); nv=$(med "$1:$3")
  echo "| $(div "$d" "$f") | $(div "$nv" "$f") | $(div "$p" "$d") | $(div "$p" "$nv") |"
}

# The I/O profile of one default run per input (untimed): bytes read against bytes stored,
# and the catalog and plan cost per block.
declare -A READ CALLS CAT PLAN
for k in "${INPUTS[@]}"; do
  rm -rf "$DIR/out"; drop
  "$BIN" run -q "$DIR/$k" -o "$DIR/out" --no-verify
  read -r READ[$k] CALLS[$k] < <(/usr/bin/python3 -c '
import json, sys
io = json.load(open(sys.argv[1]))["io"]
print(io["read_bytes"], io["read_calls"])' "$DIR/out/relayout.json")
  # catalog and plan, alternated RUNS times (a single cold run moved by ±10% between rounds)
  cats="" plans=""
  for _ in $(seq "$RUNS"); do
    drop; t=$(date +%s.%N); "$BIN" catalog "$DIR/$k" >/dev/null; cats+=" $(echo "$(date +%s.%N) - $t" | bc)"
    drop; t=$(date +%s.%N); "$BIN" plan "$DIR/$k" >/dev/null; plans+=" $(echo "$(date +%s.%N) - $t" | bc)"
  done
  CAT[$k]=$(echo "$cats" | median); PLAN[$k]=$(echo "$plans" | median)
done
rm -rf "$DIR/out"

for k in "${INPUTS[@]}"; do
  floor=$(med "$k:cp+sync")
  say ""
  say "**$k** (${IN_BYTES[$k]} bytes, ${BLOCKS[$k]} blocks)"
  say ""
  say "| command | wall s, median of $RUNS | ÷ cp+sync | peak RSS MB |"
  say "|---|---|---|---|"
  for line in "${CMDS[@]}"; do
    n=${line%%|*}
    [ "${n%%:*}" = "$k" ] || continue
    say "| ${n#*:} | $(med "$n") | $(div "$(med "$n")" "$floor") | $(rss "$n") |"
  done
done
say ""
say "Ratios the targets of issue 19 name (median wall; target in brackets):"
say ""
say "| input | default ÷ cp+sync (≤ 1.3) | --no-verify ÷ cp+sync (≤ 1.1) | peer ÷ default (≥ 2) | peer ÷ --no-verify (≥ 2.5) | RSS default ÷ peer (≤ 0.1) |"
say "|---|---|---|---|---|---|"
for k in "${INPUTS[@]}"; do
  p=$(peer "$k")
  say "| $k (vs ${p#*:}) $(ratios "$k" relayout "relayout --no-verify") $(div "$(rss "$k:relayout")" "$(rss "$p")") |"
done
say ""
for d in blake3 xxh64; do
  say "The same with --digest $d ($d instead of sha256 per dataset in the manifest):"
  say ""
  say "| input | default ÷ cp+sync (≤ 1.3) | --no-verify ÷ cp+sync (≤ 1.1) | peer ÷ default (≥ 2) | peer ÷ --no-verify (≥ 2.5) |"
  say "|---|---|---|---|---|"
  for k in "${INPUTS[@]}"; do
    p=$(peer "$k")
    say "| $k (vs ${p#*:}) $(ratios "$k" "relayout --digest $d" "relayout --no-verify --digest $d")"
  done
  say ""
done
say "Bytes read against bytes stored (one relayout run --no-verify per input, its manifest's io; target ≤ 1.05),"
say "and the catalog and plan cost per block (relayout catalog and relayout plan, caches dropped, medians of $RUNS; target ≤ 1 µs):"
say ""
say "| input | blocks | stored bytes | read bytes | read calls | read ÷ stored | catalog s | µs/block | plan s | µs/block |"
say "|---|---|---|---|---|---|---|---|---|---|"
for k in "${INPUTS[@]}"; do
  say "| $k | ${BLOCKS[$k]} | ${STORED[$k]} | ${READ[$k]} | ${CALLS[$k]} | $(printf %.3f "$(echo "${READ[$k]} / ${STORED[$k]}" | bc -l)") | $(printf %.2f "${CAT[$k]}") | $(printf %.2f "$(echo "${CAT[$k]} * 1000000 / ${BLOCKS[$k]}" | bc -l)") | $(printf %.2f "${PLAN[$k]}") | $(printf %.2f "$(echo "${PLAN[$k]} * 1000000 / ${BLOCKS[$k]}" | bc -l)") |"
done
say ""
say "(medians of $RUNS rounds, every command once a round in a shuffled order, the page cache of"
say "every input dropped before every command; the peers are followed by a sync of what they wrote, as relayout syncs"
say "its output; relayout's chunked and auto runs verify, as run does by default)"
# The read benchmark through adios2.FileReader and h5py, and the check of --layout auto
# (scripts/bench-read.sh: calibrate, auto for READBENCH_AUTO readers, predicted vs measured).
if [ "${BENCH_READ:-1}" != 0 ]; then
  t=$(date +%s.%N)
  say ""
  # On a BP5 input of its own, READBENCH_N^3 (default 192: a few minutes), unless that is N.
  RN=${READBENCH_N:-192}; RIN=$DIR/bp5
  if [ "$RN" != "$N" ] || ! want bp5; then
    RIN=$DIR/read-in.bp
    (. "$PEERS/env.sh"; "${MPIRUN[@]}" /usr/bin/python3 "$PEERS/bp_gen.py" BP5 "$RIN" "$RN" "$B" --aggregators "$AGG" >/dev/null)
  fi
  say "Read benchmark (scripts/readbench.py via scripts/bench-read.sh) of ${READBENCH_VAR:-fields/Bx} in a BP5 input"
  say "by bp_gen.py, ${RN}^3 in ${B}^3 blocks from $W writers, $AGG sub-files:"
  say ""
  READBENCH_BLOCK=${READBENCH_BLOCK:-$B,$B,$B} PEERS=$PEERS BIN=$BIN scripts/bench-read.sh "$RIN" "$DIR/read" | tee -a "$LOG"
  rm -rf "$DIR/read" "$DIR/read-in.bp"
  say "(read benchmark: $(elapsed "$t")s)"
fi
if [ -n "$HISTORY" ]; then
  mkdir -p "$HISTORY"
  out=$HISTORY/$(date -u +%Y-%m-%d-%H%M)-bench-peers-N$N-B$B.md
  { echo "# $(date -u +%Y-%m-%d) — make bench: the real peers on real ADIOS2 and openPMD output (issue 19), BENCH_N=$N BENCH_B=$B BENCH_W=$W BENCH_AGG=$AGG${BENCH_INPUTS:+ BENCH_INPUTS=\"$BENCH_INPUTS\"}"; echo; cat "$LOG"; } >"$out"
  echo "log written to $out (copy the figures that changed into bench/RESULTS.md)"
fi
