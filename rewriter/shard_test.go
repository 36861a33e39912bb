package rewriter

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestDamagedJobUnits: a job.json whose units do not fit its datasets
// (dataset, shard, box outside the shape, missing cuboid) is refused as
// corrupt before any byte is written.
func TestDamagedJobUnits(t *testing.T) {
	dir := t.TempDir()
	j := Job{Schema: JobSchema, ID: "x", Shards: 1,
		Datasets: []JobDataset{{Var: "v", Shape: []int64{4, 4}, ElemSize: 8, Kind: KindContiguous},
			{Var: "w", Shape: []int64{8, 8}, ElemSize: 8, Kind: KindMerged, Cuboids: []JobCuboid{{Lower: []int64{0, 0}, Count: []int64{4, 8}}}}},
		Units: []Unit{{ID: 0, Dataset: 0, Lo: 0, Rows: 4}}}
	for _, bad := range []func(j *Job){
		func(j *Job) { j.Units[0].Dataset = 2 },
		func(j *Job) { j.Units[0].Shard = 1 },
		func(j *Job) { j.Units[0].ID = 3 },
	} {
		c := j
		c.Units = append([]Unit(nil), j.Units...)
		bad(&c)
		b, _ := json.Marshal(c)
		if err := os.WriteFile(filepath.Join(dir, JobFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadJob(dir); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%+v: %v, want ErrCorrupt", c.Units[0], err)
		}
	}
	for _, u := range []Unit{
		{Dataset: 0, Lo: 2, Rows: 4},
		{Dataset: 0, Lower: []int64{0, 3}, Count: []int64{1, 2}},
		{Dataset: 0, Lower: []int64{0}, Count: []int64{1}},
		{Dataset: 1, Lower: []int64{0, 0}, Count: []int64{5, 8}},
		{Dataset: 1, Lower: []int64{0, 0}, Count: []int64{1, 8}, Cuboid: 1},
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

// TestJobDigest: job.json names the digest of its units ("digest", left
// out for sha256, so that jobs written before the choice read as sha256);
// the "no_digest" of a job written before reads as none.
func TestJobDigest(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		json string // the job's fields after the schema
		want catalog.Digest
	}{
		{``, catalog.SHA256},
		{`,"digest":"xxh64"`, catalog.XXH64},
		{`,"digest":"none"`, catalog.NoDigest},
		{`,"no_digest":true`, catalog.NoDigest},
	} {
		js := `{"schema":"` + JobSchema + `","id":"x","shards":1,"datasets":[],"units":[]` + c.json + `}`
		if err := os.WriteFile(filepath.Join(dir, JobFile), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := LoadJob(dir)
		if err != nil || j.Digest != c.want {
			t.Errorf("%s: digest %v, %v; want %v", js, j.Digest, err, c.want)
			continue
		}
		b, _ := json.Marshal(j)
		if strings.Contains(string(b), "no_digest") || strings.Contains(string(b), `"digest"`) != (c.want != catalog.SHA256) {
			t.Errorf("%s written back as %s", js, b)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, JobFile), []byte(`{"schema":"`+JobSchema+`","id":"x","shards":1,"digest":"md5"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadJob(dir); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("digest md5: %v, want ErrCorrupt", err)
	}
}
