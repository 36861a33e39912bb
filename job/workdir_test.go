package job

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/rewriter"
)

// TestDamagedJobUnits: a job.json whose units do not fit its datasets
// (dataset, shard, unit id) is refused as corrupt before any byte is
// written (rewriter's TestDamagedPlanUnits: boxes outside the shape,
// missing cuboids).
func TestDamagedJobUnits(t *testing.T) {
	dir := t.TempDir()
	j := Job{Schema: JobSchema, ID: "x", Plan: rewriter.Plan{Shards: 1,
		Datasets: []rewriter.Dataset{{Var: "v", Shape: []int64{4, 4}, ElemSize: 8, Kind: "contiguous"},
			{Var: "w", Shape: []int64{8, 8}, ElemSize: 8, Kind: "merged", Cuboids: []rewriter.Cuboid{{Lower: []int64{0, 0}, Count: []int64{4, 8}}}}},
		Units: []rewriter.Unit{{ID: 0, Dataset: 0, Lo: 0, Rows: 4}}}}
	for _, bad := range []func(j *Job){
		func(j *Job) { j.Units[0].Dataset = 2 },
		func(j *Job) { j.Units[0].Shard = 1 },
		func(j *Job) { j.Units[0].ID = 3 },
	} {
		c := j
		c.Units = append([]rewriter.Unit(nil), j.Units...)
		bad(&c)
		b, _ := json.Marshal(c)
		if err := os.WriteFile(filepath.Join(dir, JobFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadJob(dir); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%+v: %v, want ErrCorrupt", c.Units[0], err)
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
