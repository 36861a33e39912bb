#!/usr/bin/env bash
# The read benchmark through the libraries users read with, and the check of `--layout auto`
# (issue 19): `relayout calibrate` on the bench directory, then `relayout run --layout auto
# --readers R --cost-model CM` for each R of READBENCH_AUTO, beside contiguous, merged and
# chunked shapes of the same variable; every layout read by scripts/readbench.py (the original
# through adios2.FileReader, the outputs through h5py, R reader processes, caches dropped), then
# bench/readpredict sets the cost model's prediction of the same reads beside the measurements:
# predicted and measured ranking per reader count, and whether auto measures within 10% of the
# best layout. Prints markdown (scripts/bench-peers.sh records it in its log under bench/history/).
#
#   scripts/bench-read.sh IN WORKDIR      IN: an ADIOS2 BP dataset (bp_gen.py), WORKDIR: scratch
#   READBENCH_VAR (default fields/Bx), READBENCH_BLOCK (the input's block shape, e.g. 8,8,8),
#   READBENCH_RUNS (default 3), READBENCH_READERS (default 1,8), READBENCH_AUTO (the --readers of
#   the auto runs, default 1,8), READBENCH_CHUNKS (chunk shapes besides the input's block shape and
#   --chunks 4x4x4, e.g. "16,16,16 32,32,32"; default none), READBENCH_PATTERNS (default all of
#   readbench.py's), READBENCH_CHECK=1 (compare every layout's values with the original's, untimed),
#   READBENCH_OWN=0 (skip the same layouts through relayout's own readers, bench/readbench),
#   READBENCH_REUSE=1 (keep the layouts already in WORKDIR but the auto ones, and its cost model:
#   to compare a changed model on the same files), READBENCH_LAYOUTS (the layouts besides the
#   original and auto, default "contiguous merged blocks 4x4x4 extra": blocks is the READBENCH_BLOCK
#   chunks, extra the READBENCH_CHUNKS ones), READBENCH_MODE (how readbench.py starts its reader
#   processes: spawn, the default, fresh interpreters that import their library before the clock
#   starts; fork, forked from the benchmark's interpreter at the start, their copy-on-write faults
#   timed: about 25 ms a measurement on this machine, the benchmark's mode until session 22).
# Time at N=256 (128 MiB a variable), default knobs, 2-core machine: about 3 minutes.
set -euo pipefail
IN=$1; W=$2
V=${READBENCH_VAR:-fields/Bx}; RUNS=${READBENCH_RUNS:-3}
READERS=${READBENCH_READERS:-1,8}; AUTO=${READBENCH_AUTO:-1,8}; EXTRA=${READBENCH_CHUNKS:-}
PATTERNS=${READBENCH_PATTERNS:-whole,xy,xz,yz,sub,2x1x1,line}
MODE=${READBENCH_MODE:-spawn}
BIN=${BIN:-bin/relayout}
PEERS=${PEERS:-../shared/peers}
go build -o bin/readpredict ./bench/readpredict
mkdir -p "$W"
REUSE=${READBENCH_REUSE:-0}
if [ "$REUSE" = 1 ] && [ -f "$W/cost-model.json" ]; then
  echo "    (cost model kept from an earlier run: $W/cost-model.json)"
else
  "$BIN" calibrate "$W" -o "$W/cost-model.json" | sed 's/^/    /'
fi
RL=("$BIN" run "$IN" --var "$V" -q --no-verify)
# The element size from the catalog; READBENCH_BLOCK (the input's block shape, e.g. 8,8,8: the
# chunks that keep its granularity) is given by the caller, who wrote the input.
blk=${READBENCH_BLOCK:-}
ELEM=$("$BIN" catalog --json "$IN" | /usr/bin/python3 -c '
import json, sys
print([v for v in json.load(sys.stdin)["variables"] if v["name"] == sys.argv[1]][0]["dtype"][2:])' "$V")
LAYOUTS=("original=$IN")
add() { # name, run flags...
  local n=$1; shift
  if [ "$REUSE" != 1 ] || [ ! -f "$W/$n/relayout.json" ] || [[ $n == auto-* ]]; then
    rm -rf "${W:?}/$n"
    "${RL[@]}" -o "$W/$n" "$@"
  fi
  LAYOUTS+=("$n=$W/$n")
}
for l in ${READBENCH_LAYOUTS:-contiguous merged blocks 4x4x4 extra}; do
  case $l in
  contiguous) add contiguous ;;
  merged) add merged --layout merged ;;
  blocks) if [ -n "$blk" ]; then add "chunks-$(tr , x <<<"$blk")" --layout chunked --chunk-shape "$blk"; fi ;;
  4x4x4) add chunks-4x4x4 --layout chunked --chunks 4x4x4 ;;
  extra) for c in $EXTRA; do add "chunks-$(tr , x <<<"$c")" --layout chunked --chunk-shape "$c"; done ;;
  esac
done
for r in ${AUTO//,/ }; do
  add "auto-R$r" --layout auto --readers "$r" --cost-model "$W/cost-model.json"
  p=$("$BIN" plan "$IN" --var "$V" --layout auto --readers "$r" --cost-model "$W/cost-model.json")
  echo "- \`--layout auto --readers $r --cost-model\` chose: $(grep -m1 'layout:' <<<"$p" | sed 's/^ *layout: //')"
  echo "  - $(grep -m1 'auto ranking' <<<"$p" | sed 's/^ *//')"
done
echo
echo '```'
(. "$PEERS/env.sh"; /usr/bin/python3 scripts/readbench.py --var "$V" --runs "$RUNS" --readers "$READERS" \
  --patterns "$PATTERNS" --mode "$MODE" ${READBENCH_CHECK:+--check} --json "$W/readbench.json" "${LAYOUTS[@]}")
echo '```'
if [ "${READBENCH_OWN:-1}" != 0 ]; then
  echo
  echo "The same layouts through relayout's own readers (bench/readbench: the blocks or chunks a part touches,"
  echo "coalesced; contiguous outputs by plain preads with HDF5's sieve rule; readers split along the longest axis):"
  echo
  echo '```'
  go build -o bin/readbench ./bench/readbench
  paths=(); for l in "${LAYOUTS[@]}"; do paths+=("${l#*=}"); done
  bin/readbench --var "$V" --runs "$RUNS" --readers "$READERS" "${paths[@]}"
  echo '```'
fi
echo
echo "Predicted (the planner's PredictRead of the same parts, calibrated cost model) against measured:"
echo
echo '```'
bin/readpredict --cost-model "$W/cost-model.json" --elem "$ELEM" "$W/readbench.json" | sed -n '/^# cost/,/^$/p' | sed '/^$/d'
echo '```'
bin/readpredict --cost-model "$W/cost-model.json" --elem "$ELEM" "$W/readbench.json" | sed -n '/^$/,$p'
echo
# auto within 10% of the best of the rewritten layouts (the original excluded: not a choice).
/usr/bin/python3 - "$W/readbench.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in sorted({t["readers"] for t in d["totals"]}):
    for stat, what in (("seconds", "medians"), ("min_seconds", "fastest runs")):
        tot = {t["layout"]: t[stat] for t in d["totals"] if t["readers"] == r and t["layout"] != "original"}
        best = min(tot, key=tot.get)
        for a in sorted(k for k in tot if k.startswith("auto-")):
            q = tot[a] / tot[best]
            print(f"- {r} readers, sum of the {what}: {a} {tot[a]:.4f} s against the best rewritten layout {best} "
                  f"{tot[best]:.4f} s: ×{q:.3f} ({'within' if q <= 1.10 else 'NOT within'} 10%)")
EOF
