package rewriter

import (
	"errors"
	"testing"

	"relayout/catalog"
)

// TestCheckUnitBudget: a shard (and commit's check) refuses, as
// unsupported and naming --max-mem, units that cannot fit the one memory
// budget one at a time with their largest read (and their second copy:
// encoded chunks, or the input beside the output); units that fit pass,
// and the default budget applies when none is given.
func TestCheckUnitBudget(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		jobs            int
		maxMem, unit    int64
		twice           bool
		wantUnsupported bool
	}{
		{8, 1 << 30, 16 * mib, false, false},
		{64, 1 << 30, 16 * mib, true, false},
		{2, 64 << 10, 64 << 10, false, true}, // e2e: rewrite --max-mem 64KiB
		{2, 16 * mib, 64 << 10, true, false},
		{2, 32 * mib, 16 * mib, true, true},
		{1, 0, 16 * mib, false, false}, // 0: the default budget
	} {
		opts := Options{Jobs: tc.jobs, MaxMem: tc.maxMem}
		err := checkUnitBudget(opts, tc.unit, tc.twice)
		if tc.wantUnsupported != errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("%+v: %v", tc, err)
		}
		if err == nil {
			need := tc.unit + opts.readLimit()
			if tc.twice {
				need += tc.unit
			}
			if need > opts.maxMem() {
				t.Errorf("%+v: passed, but one unit needs %d of %d", tc, need, opts.maxMem())
			}
		}
	}
}
