#!/usr/bin/env bash
# make bench: relayout against its floor (cp of the same bytes) and against h5repack,
# side by side in one run, page cache of the input dropped before every timed command.
# Prints per-command medians (wall seconds, peak RSS) and the ratios to quote.
#   BENCH_N (mesh edge, default 256), BENCH_CHUNK (default 32), BENCH_RUNS (default 3), BENCH_DIR.
set -euo pipefail
N=${BENCH_N:-256}; C=${BENCH_CHUNK:-32}; RUNS=${BENCH_RUNS:-3}
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/var/tmp}/relayout-bench.XXXXXX")}
BIN=${BIN:-bin/relayout}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
"$BIN" generate "$DIR/in" --shape "$N,$N,$N" --chunk "$C,$C,$C" --steps 0 >/dev/null
IN_BYTES=$(du -sb "$DIR/in" | cut -f1)
echo "input: $DIR/in, $(ls "$DIR/in" | wc -l) file(s), $IN_BYTES bytes, 4 variables of ${N}^3 float64 in ${C}^3 chunks (scattered order)"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r), $(df -T "$DIR" | awk 'NR==2{print $2}') at $DIR"

drop() { # posix_fadvise(DONTNEED) on every input file: cold reads for each command
  find "$DIR/in" -type f -exec dd if={} iflag=nocache count=0 status=none \;
}
declare -A WALL RSS
timeit() { # name, command...
  local name=$1; shift
  rm -rf "$DIR/out"; drop; sync
  /usr/bin/time -f "%e %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" || { cat "$DIR/err"; exit 1; }
  read -r w m <"$DIR/time"
  WALL[$name]+="$w "; RSS[$name]+="$m "
}
repack() {
  mkdir -p "$DIR/out"
  for f in "$DIR"/in/*.h5; do h5repack -l CONTI "$f" "$DIR/out/$(basename "$f")"; done
}
cpsync() { cp -r --reflink=never "$DIR/in" "$DIR/out" && sync "$DIR"/out/*; }
repacksync() { repack && sync "$DIR"/out/*; }
export -f repack cpsync repacksync; export DIR
for r in $(seq "$RUNS"); do
  timeit cp cp -r --reflink=never "$DIR/in" "$DIR/out"
  timeit relayout "$BIN" run "$DIR/in" -o "$DIR/out" -q --no-verify
  timeit relayout+verify "$BIN" run "$DIR/in" -o "$DIR/out" -q
  timeit h5repack bash -c repack
  timeit cp+fsync bash -c cpsync
  timeit h5repack+fsync bash -c repacksync
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
printf "%-16s %10s %12s %10s\n" command "wall(s)" "peakRSS(MB)" "÷cp"
cpw=$(echo "${WALL[cp]}" | median)
for n in cp cp+fsync relayout relayout+verify h5repack h5repack+fsync; do
  w=$(echo "${WALL[$n]}" | median); m=$(echo "${RSS[$n]}" | median)
  printf "%-16s %10s %12d %10.2f\n" "$n" "$w" "$((m/1024))" "$(echo "$w / $cpw" | bc -l)"
done
# relayout syncs each output file once (durable on return); cp and h5repack do not,
# so the fair floors are the +fsync rows.
rw=$(echo "${WALL[relayout]}" | median)
for base in cp+fsync h5repack+fsync h5repack; do
  bw=$(echo "${WALL[$base]}" | median)
  printf "relayout ÷ %-15s %.2f\n" "$base:" "$(echo "$rw / $bw" | bc -l)"
done
echo "(medians of $RUNS interleaved runs each, input page cache dropped before every run)"
