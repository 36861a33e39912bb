package planner

import (
	"cmp"
	"slices"
)

// ShardUnit is one unit of rewrite work as shard assignment sees it: its
// size and the input file most of its bytes are read from.
type ShardUnit struct {
	Bytes  int64
	Source string // dominant input sub-file ("" when unknown)
	Order  int    // position in the job (variable, step, level, rows)
}

// AssignShards gives each unit a shard in [0, n). Units are ordered by
// source file, then job order, and the ordered list is cut into n runs of
// about equal bytes: each cut falls where the running total crosses k*T/n
// (T the total, a unit going to the side its midpoint falls on). So every
// shard gets T/n bytes give or take one unit (within 10% when units are at
// most a twentieth of a shard, which relayout plan's unit size ensures), and
// a sub-file's units form one run, read by as few shards as its size
// allows (ceil(bytes/(T/n))+1 at most).
func AssignShards(units []ShardUnit, n int) []int {
	out := make([]int, len(units))
	if n <= 1 || len(units) == 0 {
		return out
	}
	idx := make([]int, len(units))
	var total int64
	for i := range idx {
		idx[i] = i
		total += units[i].Bytes
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(units[a].Source, units[b].Source); c != 0 {
			return c
		}
		return cmp.Compare(units[a].Order, units[b].Order)
	})
	var run int64
	for k, i := range idx {
		mid := float64(run) + float64(units[i].Bytes)/2
		s := 0
		if total > 0 {
			s = int(mid * float64(n) / float64(total))
		} else {
			s = k * n / len(idx)
		}
		out[i] = min(max(s, 0), n-1)
		run += units[i].Bytes
	}
	return out
}

// UnitBytesFor is the work-unit size for total bytes over n shards: at most
// a 32nd of a shard (so shards balance within a few percent), clamped to
// [64KiB, want] (want: the caller's cap, e.g. 16MiB).
func UnitBytesFor(total int64, n int, want int64) int64 {
	u := total / int64(max(n, 1)) / 32
	return min(max(u, 64<<10), max(want, 64<<10))
}
