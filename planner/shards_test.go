package planner

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestAssignShardsBalanced(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{1, 2, 3, 4, 7, 16} {
		var units []ShardUnit
		var total int64
		for i := range 2000 {
			b := int64(1+rng.IntN(1<<20)) + 1<<19 // 0.5-1.5 MiB, unequal
			units = append(units, ShardUnit{Bytes: b, Source: fmt.Sprintf("data.%d", rng.IntN(5)), Order: i})
			total += b
		}
		got := AssignShards(units, n)
		per := make([]int64, n)
		sources := map[string]map[int]bool{}
		for i, s := range got {
			if s < 0 || s >= n {
				t.Fatalf("n=%d: shard %d out of range", n, s)
			}
			per[s] += units[i].Bytes
			if sources[units[i].Source] == nil {
				sources[units[i].Source] = map[int]bool{}
			}
			sources[units[i].Source][s] = true
		}
		mean := float64(total) / float64(n)
		for s, b := range per {
			if d := (float64(b) - mean) / mean; d > 0.10 || d < -0.10 {
				t.Errorf("n=%d: shard %d has %d bytes, %.1f%% off the mean %.0f", n, s, b, 100*d, mean)
			}
		}
		// Each sub-file is read by a run of consecutive shards no longer than
		// its share of the bytes requires (plus the one it starts in).
		for src, shards := range sources {
			var b int64
			for i := range units {
				if units[i].Source == src {
					b += units[i].Bytes
				}
			}
			if limit := int(float64(b)/mean) + 2; len(shards) > limit {
				t.Errorf("n=%d: %s (%d bytes) read by %d shards, want at most %d", n, src, b, len(shards), limit)
			}
		}
	}
}

func TestAssignShardsFewUnits(t *testing.T) {
	got := AssignShards([]ShardUnit{{Bytes: 10}, {Bytes: 10}, {Bytes: 10}, {Bytes: 10}}, 4)
	for i, s := range got {
		if s != i {
			t.Fatalf("equal units: %v, want 0 1 2 3", got)
		}
	}
	if got := AssignShards([]ShardUnit{{Bytes: 0}, {Bytes: 0}}, 2); got[0] != 0 || got[1] != 1 {
		t.Fatalf("empty units: %v", got)
	}
}
