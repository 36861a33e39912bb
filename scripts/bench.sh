#!/usr/bin/env bash
# make bench: relayout against its floor (cp of the same bytes) and against h5repack,
# side by side in one run, page cache of the input dropped before every timed command,
# then the read benchmark (bench/readbench). Prints per-command medians (wall seconds,
# peak RSS) and the ratios, and writes its full log to bench/history/<date>-bench-N<N>-B<B>.md
# (bench/RESULTS.md holds the current figures, updated by hand from these logs).
#   BENCH_N (mesh edge, default 512: 1 GiB of float64), BENCH_B (block edge, default 32:
#   4,096 blocks), BENCH_W (ADIOS 1.x writers, default 8), BENCH_RUNS (default 3),
#   BENCH_READ_RUNS (default 3), BENCH_MAXMEM (default 256MiB), BENCH_DIR,
#   BENCH_HISTORY (the folder of the logs, default bench/history; empty: the log on stdout only), BENCH_BASE (a relayout binary
#   built from an earlier commit: timed side by side in the same rounds, with the ratios new ÷ base).
set -euo pipefail
N=${BENCH_N:-512}; B=${BENCH_B:-32}; W=${BENCH_W:-8}; RUNS=${BENCH_RUNS:-3}
READ_RUNS=${BENCH_READ_RUNS:-3}; MAXMEM=${BENCH_MAXMEM:-256MiB}
HISTORY=${BENCH_HISTORY-bench/history}
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-bench.XXXXXX")}
BIN=${BIN:-bin/relayout}
BASE=${BENCH_BASE:-}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
go build -o bin/readbench ./bench/readbench
LOG=$DIR/log; : >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }

# Input: N^3 float64 in B^3 blocks, dealt to W writers after a load-balancing shuffle,
# written by ADIOS 1.x (MPI_AGGREGATE, sub-filed BP3); values ((step*N+i)*N+j)*N+k.
nb=$((N / B))
mkdir -p "$DIR/in"
t0=$(date +%s.%N)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$W" --oversubscribe \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  /usr/bin/python3 testdata/adios1/write_bp3.py "$DIR/in/data.bp" --shape "$N,$N,$N" --blocks "$nb,$nb,$nb" \
  --regular --int-shape "" --steps 1 --aggregators "$W" --no-stats >/dev/null
rm -f "$DIR/in/data.bp.blocks.json"
IN_BYTES=$(du -sb "$DIR/in" | cut -f1)
say "input: sub-filed BP3 by ADIOS 1.x, ${N}^3 float64 in ${B}^3 blocks ($((nb*nb*nb)) blocks) over $W writers (shuffled), $W sub-files, $IN_BYTES bytes; generated in $(echo "$(date +%s.%N) - $t0" | bc | xargs printf %.1f)s"
# The chunked-HDF5 copy of the same data (B^3 chunks), for h5repack.
"$BIN" run --var rho "$DIR/in/data.bp" -o "$DIR/h5c" -q --no-verify --layout chunked --chunk-shape "$B,$B,$B"
H5C=$DIR/h5c/rho.h5
cpu=$(lscpu | awk -F: '/Model name/{gsub(/^ +/,"",$2); print $2; exit}')
say "machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r), $(df -T "$DIR" | awk 'NR==2{print $2}') at $DIR; $(h5repack --version 2>&1 | head -1)"

drop() { # posix_fadvise(DONTNEED) on every input file: cold reads for each command
  find "$DIR/in" "$DIR/h5c" -type f -exec dd if={} iflag=nocache count=0 status=none \;
}
declare -A WALL RSS
timeit() { # name, command...
  local name=$1; shift
  rm -rf "$DIR/out"; drop; sync
  /usr/bin/time -f "%e %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || { cat "$DIR/err"; exit 1; }
  read -r w m <"$DIR/time"
  WALL[$name]+="$w "; RSS[$name]+="$m "
}
cpsync() { cp -r --reflink=never "$DIR/in" "$DIR/out" && sync "$DIR"/out/* "$DIR"/out/*/* 2>/dev/null; }
repack() { mkdir -p "$DIR/out" && h5repack -l CONTI "$H5C" "$DIR/out/rho.h5"; }
repacksync() { repack && sync "$DIR/out/rho.h5"; }
export -f cpsync repack repacksync; export DIR H5C
# One command per line: name, then the command. Each round starts one line
# further down (the order rotates), so that no command always follows the
# same one: on this machine a run's speed depends on what ran before it
# (the file system is mounted with discard, and freed memory goes back to
# the host), by up to 2x.
CMDS=(
  "cp|cp -r --reflink=never $DIR/in $DIR/out"
  "cp+fsync|bash -c cpsync"
  "relayout|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify"
  "relayout-nodigest|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify --digest none"
  "relayout+verify|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q"
  "relayout-chunked|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify --layout chunked --chunks 4x4x4"
  "relayout-maxmem|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify --max-mem $MAXMEM"
  "relayout-h5c|$BIN run $H5C -o $DIR/out -q --no-verify"
  "h5repack|bash -c repack"
  "h5repack+fsync|bash -c repacksync"
)
if [ -n "$BASE" ]; then
  CMDS+=(
    "base|$BASE run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify"
    "base+verify|$BASE run --var rho $DIR/in/data.bp -o $DIR/out -q"
    "base-chunked|$BASE run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify --layout chunked --chunks 4x4x4"
  )
fi
for r in $(seq "$RUNS"); do
  for k in $(seq 0 $(( ${#CMDS[@]} - 1 ))); do
    line=${CMDS[$(( (k + r - 1) % ${#CMDS[@]} ))]}
    # shellcheck disable=SC2086 # the command is split into words on purpose
    timeit "${line%%|*}" ${line#*|}
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
cpw=$(echo "${WALL[cp]}" | median)
say ""
say "| command | wall (s), median of $RUNS | peak RSS (MB) | ÷ cp |"
say "|---|---|---|---|"
for n in cp cp+fsync relayout relayout-nodigest relayout+verify relayout-chunked relayout-maxmem relayout-h5c h5repack h5repack+fsync; do
  w=$(echo "${WALL[$n]}" | median); m=$(echo "${RSS[$n]}" | median)
  say "| $n | $w | $((m/1024)) | $(printf %.2f "$(echo "$w / $cpw" | bc -l)") |"
done
ratio() { printf %.2f "$(echo "$(echo "${WALL[$1]}" | median) / $(echo "${WALL[$2]}" | median)" | bc -l)"; }
say ""
say "- relayout (contiguous) ÷ cp = $(ratio relayout cp); ÷ cp+fsync = $(ratio relayout cp+fsync)"
say "- relayout --digest none (no sha256) ÷ cp = $(ratio relayout-nodigest cp); ÷ cp+fsync = $(ratio relayout-nodigest cp+fsync)"
say "- relayout as run by default (rewrite, then compare every element with the input) ÷ cp = $(ratio relayout+verify cp); ÷ cp+fsync = $(ratio relayout+verify cp+fsync)"
say "- relayout --chunks 4x4x4 ÷ cp = $(ratio relayout-chunked cp); ÷ cp+fsync = $(ratio relayout-chunked cp+fsync)"
say "- relayout ÷ h5repack -l CONTI on the ${B}^3-chunked HDF5 copy = $(ratio relayout-h5c h5repack); ÷ h5repack+fsync = $(ratio relayout-h5c h5repack+fsync)"
say "- relayout --max-mem $MAXMEM: peak RSS $(( $(echo "${RSS[relayout-maxmem]}" | median) / 1024 )) MB, wall ÷ cp = $(ratio relayout-maxmem cp)"
say "- commands: relayout run IN/data.bp -o OUT -q --no-verify [--digest none | --layout chunked --chunks 4x4x4 | --max-mem $MAXMEM]; relayout run IN/data.bp -o OUT -q (+verify); relayout run H5C/rho.h5 -o OUT -q --no-verify; h5repack -l CONTI H5C/rho.h5 OUT/rho.h5"
if [ -n "$BASE" ]; then
  say "- against the base binary $BASE ($("$BASE" --version 2>/dev/null | head -1)), same rounds: relayout ÷ base = $(ratio relayout base); +verify ÷ base+verify = $(ratio relayout+verify base+verify); chunked ÷ base-chunked = $(ratio relayout-chunked base-chunked); peak RSS $(( $(echo "${RSS[relayout]}" | median) / 1024 )) vs $(( $(echo "${RSS[base]}" | median) / 1024 )) MB, +verify $(( $(echo "${RSS[relayout+verify]}" | median) / 1024 )) vs $(( $(echo "${RSS[base+verify]}" | median) / 1024 )) MB"
fi
say "(medians of $RUNS interleaved runs each, the order rotated every round, input page cache dropped before every run)"

# I/O profile of one relayout run, and the read benchmark on the outputs.
rm -rf "$DIR/out" "$DIR/outc"; drop
"$BIN" run --var rho "$DIR/in/data.bp" -o "$DIR/out" --no-verify --progress none 2>&1 | grep '^io:' | sed 's/^/    /' | tee -a "$LOG"
"$BIN" run --var rho "$DIR/in/data.bp" -o "$DIR/outc" -q --no-verify --layout chunked --chunks 4x4x4
say ""
say "Read benchmark (bench/readbench, $READ_RUNS runs per case, caches dropped per file before each;"
say "out: contiguous, outc: --chunks 4x4x4, h5c: --chunk-shape $B,$B,$B, the original's blocks in row-major chunk order):"
say '```'
bin/readbench --var rho --runs "$READ_RUNS" "$DIR/in/data.bp" "$DIR/out" "$DIR/outc" "$DIR/h5c" | tee -a "$LOG"
say '```'
if [ -n "$HISTORY" ]; then
  mkdir -p "$HISTORY"
  out=$HISTORY/$(date -u +%Y-%m-%d-%H%M)-bench-N$N-B$B.md
  { echo "# $(date -u +%Y-%m-%d) — make bench (issue 6), BENCH_N=$N BENCH_B=$B BENCH_W=$W"; echo; cat "$LOG"; } >"$out"
  echo "log written to $out (copy the figures that changed into bench/RESULTS.md)"
fi
