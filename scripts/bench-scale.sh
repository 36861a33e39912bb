#!/usr/bin/env bash
# make bench-scale: time per GiB and peak RSS of relayout run from 256 MiB to
# 8 GiB inputs (issue 6's and issue 19's linear-scaling and bounded-memory
# targets: --no-verify, and the default run that verifies), against
# cp of the same bytes measured in the same loop. Inputs are written by
# ADIOS 1.x as make bench's (sub-filed BP3, 8 writers, shuffled 32^3 blocks;
# ceil(N/32) blocks per dimension), one size at a time, deleted after use.
#   BENCH_SIZES (mesh edges, default "322 406 512 645 812 1024": 0.25, 0.5, 1, 2, 4, 8 GiB),
#   BENCH_RUNS (interleaved rounds per size, default 3), BENCH_MAXMEM (default 256MiB),
#   BENCH_DIR, BENCH_HISTORY (the folder of the logs, default bench/history; empty: the log on
#   stdout only). The full log goes to bench/history/<date>-bench-scale.md; bench/RESULTS.md holds
#   the current figures, updated by hand from it.
set -euo pipefail
SIZES=${BENCH_SIZES:-322 406 512 645 812 1024}; RUNS=${BENCH_RUNS:-3}; MAXMEM=${BENCH_MAXMEM:-256MiB}
HISTORY=${BENCH_HISTORY-bench/history}
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-scale.XXXXXX")}
BIN=${BIN:-bin/relayout}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
LOG=$DIR/log; : >"$LOG"
cpsync() { cp -r --reflink=never "$DIR/in" "$DIR/out" && sync "$DIR"/out/* "$DIR"/out/*/* 2>/dev/null; }
export -f cpsync; export DIR
say() { echo "$@" | tee -a "$LOG"; }
cpu=$(lscpu | awk -F: '/Model name/{gsub(/^ +/,"",$2); print $2; exit}')
say "machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r), $(df -T "$DIR" | awk 'NR==2{print $2}') at $DIR"
say "commands per size, $RUNS interleaved rounds (order rotated), input page cache dropped before each: cp -r --reflink=never IN OUT;"
say "the same followed by sync of the copies (cp+fsync: relayout syncs its output); relayout run IN/data.bp -o OUT -q --no-verify --var rho;"
say "the same with --max-mem $MAXMEM; relayout run IN/data.bp -o OUT -q --var rho (the default: verifies). Medians; CPU is user + system"
say "seconds (the figure this machine's noise moves least)"
say ""
say "| N | input | cp (s) | cp+fsync (s) | relayout --no-verify (s) | s/GiB | CPU s/GiB | ÷ cp | ÷ cp+fsync | peak RSS MiB | --max-mem $MAXMEM (s) | s/GiB | ÷ cp | peak RSS MiB (max) | read calls | default, verifies (s) | s/GiB | CPU s/GiB | ÷ cp+fsync | peak RSS MiB |"
say "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
maxof() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
for N in $SIZES; do
  nb=$(( (N + 31) / 32 ))
  rm -rf "$DIR/in" "$DIR/out"; mkdir -p "$DIR/in"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 8 --oversubscribe \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    /usr/bin/python3 testdata/adios1/write_bp3.py "$DIR/in/data.bp" --shape "$N,$N,$N" --blocks "$nb,$nb,$nb" \
    --regular --int-shape "" --steps 1 --aggregators 8 --no-stats >/dev/null
  rm -f "$DIR/in/data.bp.blocks.json"
  bytes=$((N * N * N * 8))
  declare -A W=() M=() C=()
  timeit() { # name, command...
    local name=$1; shift
    rm -rf "$DIR/out"; sync
    find "$DIR/in" -type f -exec dd if={} iflag=nocache count=0 status=none \;
    /usr/bin/time -f "%e %M %U %S" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || { cat "$DIR/err"; exit 1; }
    read -r w m u s <"$DIR/time"
    W[$name]+="$w "; M[$name]+="$m "; C[$name]+="$(echo "$u + $s" | bc) "
  }
  # The order rotates every round (see bench.sh: a run's speed here depends
  # on what ran before it).
  CMDS=("cp|cp -r --reflink=never $DIR/in $DIR/out"
        "cpf|bash -c cpsync"
        "rl|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify"
        "mm|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q --no-verify --max-mem $MAXMEM"
        "rv|$BIN run --var rho $DIR/in/data.bp -o $DIR/out -q")
  for r in $(seq "$RUNS"); do
    for k in $(seq 0 $(( ${#CMDS[@]} - 1 ))); do
      line=${CMDS[$(( (k + r - 1) % ${#CMDS[@]} ))]}
      # shellcheck disable=SC2086 # the command is split into words on purpose
      timeit "${line%%|*}" ${line#*|}
    done
  done
  rm -rf "$DIR/out"  # the read calls of one --max-mem run
  "$BIN" run --var rho "$DIR/in/data.bp" -o "$DIR/out" -q --no-verify --max-mem "$MAXMEM"
  calls=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['io']['read_calls'])" "$DIR/out/relayout.json")
  c=$(echo "${W[cp]}" | median); cf=$(echo "${W[cpf]}" | median); r=$(echo "${W[rl]}" | median); m=$(echo "${W[mm]}" | median)
  v=$(echo "${W[rv]}" | median)
  gib=$(echo "$bytes / 1073741824" | bc -l)
  say "| $N | $((bytes >> 20)) MiB | $c | $cf | $r | $(printf %.2f "$(echo "$r / $gib" | bc -l)") | $(printf %.2f "$(echo "$(echo "${C[rl]}" | median) / $gib" | bc -l)") | $(printf %.2f "$(echo "$r / $c" | bc -l)") | $(printf %.2f "$(echo "$r / $cf" | bc -l)") | $(( $(echo "${M[rl]}" | median) / 1024 )) | $m | $(printf %.2f "$(echo "$m / $gib" | bc -l)") | $(printf %.2f "$(echo "$m / $c" | bc -l)") | $(( $(echo "${M[mm]}" | median) / 1024 )) ($(( $(echo "${M[mm]}" | maxof) / 1024 ))) | $calls | $v | $(printf %.2f "$(echo "$v / $gib" | bc -l)") | $(printf %.2f "$(echo "$(echo "${C[rv]}" | median) / $gib" | bc -l)") | $(printf %.2f "$(echo "$v / $cf" | bc -l)") | $(( $(echo "${M[rv]}" | median) / 1024 )) |"
  rm -rf "$DIR/in" "$DIR/out"
done
if [ -n "$HISTORY" ]; then
  mkdir -p "$HISTORY"
  out=$HISTORY/$(date -u +%Y-%m-%d-%H%M)-bench-scale.md
  { echo "# $(date -u +%Y-%m-%d) — make bench-scale (issues 6 and 19), BENCH_SIZES=\"$SIZES\""; echo; cat "$LOG"; } >"$out"
  echo "log written to $out (copy the figures that changed into bench/RESULTS.md)"
fi
