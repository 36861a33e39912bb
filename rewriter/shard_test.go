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
		opts := Options{Jobs: tc.jobs, MaxMem: tc.maxMem}.withLimits()
		err := checkUnitBudget(opts.Limits, tc.unit, tc.twice)
		if tc.wantUnsupported != errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("%+v: %v", tc, err)
		}
		if err == nil {
			need := tc.unit + opts.Limits.ReadLimit
			if tc.twice {
				need += tc.unit
			}
			if need > opts.Limits.MaxMem {
				t.Errorf("%+v: passed, but one unit needs %d of %d", tc, need, opts.Limits.MaxMem)
			}
		}
	}
}

// TestDamagedPlanUnits: units that do not fit their datasets (a box
// outside the shape, of another rank, a missing cuboid, a dataset of a
// kind this version does not know) are refused as
// corrupt before any byte is written (package job's TestDamagedJobUnits
// checks the units' ids, datasets and shards when job.json is read).
func TestDamagedPlanUnits(t *testing.T) {
	j := Plan{Shards: 1,
		Datasets: []Dataset{{Var: "v", Shape: []int64{4, 4}, ElemSize: 8, Kind: kindContiguous},
			{Var: "w", Shape: []int64{8, 8}, ElemSize: 8, Kind: kindMerged, Cuboids: []Cuboid{{Lower: []int64{0, 0}, Count: []int64{4, 8}}}},
			{Var: "x", Shape: []int64{4, 4}, ElemSize: 8, Kind: "tiles"}},
		Units: []Unit{{ID: 0, Dataset: 0, Lo: 0, Rows: 4}}}
	for _, u := range []Unit{
		{Dataset: 0, Lo: 2, Rows: 4},
		{Dataset: 0, Lower: []int64{0, 3}, Count: []int64{1, 2}},
		{Dataset: 0, Lower: []int64{0}, Count: []int64{1}},
		{Dataset: 1, Lower: []int64{0, 0}, Count: []int64{5, 8}},
		{Dataset: 1, Lower: []int64{0, 0}, Count: []int64{1, 8}, Cuboid: 1},
		{Dataset: 2, Lo: 0, Rows: 4},
	} {
		if err := j.checkUnit(&u, j.Datasets[u.Dataset].Shape); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%+v: %v, want ErrCorrupt", u, err)
		}
	}
	for _, u := range []Unit{{Dataset: 0, Lo: 1, Rows: 3}, {Dataset: 1, Lower: []int64{2, 0}, Count: []int64{2, 8}}} {
		if err := j.checkUnit(&u, j.Datasets[u.Dataset].Shape); err != nil {
			t.Errorf("%+v: %v", u, err)
		}
	}
}
