package rewriter

import (
	"errors"
	"testing"

	"relayout/catalog"
)

// TestShardJobs: the units a shard keeps in flight (2*jobs+1, each with its
// buffer, its chunks when chunked, and a read) fit --max-mem; a budget too
// small for one at a time is refused as unsupported.
func TestShardJobs(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		jobs            int
		maxMem, unit    int64
		chunked         bool
		want            int
		wantUnsupported bool
	}{
		{8, 1 << 30, 16 * mib, false, 8, false},
		{64, 1 << 30, 16 * mib, false, 25, false}, // 20 MiB per unit: 51 of them, 2*25+1
		{8, 128 * mib, 16 * mib, true, 1, false},  // 36 MiB per unit: 3 in flight
		{8, 64 * mib, 16 * mib, true, 0, true},
		{1, 0, 16 * mib, false, 1, false}, // 0: the default budget
	} {
		got, err := shardJobs(tc.jobs, tc.maxMem, tc.unit, tc.chunked)
		if tc.wantUnsupported {
			if !errors.Is(err, catalog.ErrUnsupported) {
				t.Errorf("%+v: %d, %v; want ErrUnsupported", tc, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: %d, %v; want %d", tc, got, err, tc.want)
		}
		budget := tc.maxMem
		if budget <= 0 {
			budget = DefaultMaxMem
		}
		cost := tc.unit + shardReadLimit
		if tc.chunked {
			cost += tc.unit
		}
		if alive := int64(2*got+1) * cost; alive > budget {
			t.Errorf("%+v: %d jobs keep %d bytes alive, over %d", tc, got, alive, budget)
		}
	}
}
