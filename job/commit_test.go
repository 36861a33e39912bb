package job

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"relayout/rewriter"
)

// TestCheckUnits: commit's unit check of a journaled job (checkUnits, on
// the rewriter's read back of the joined stage) passes every unit whose
// digest equals its journal record, with a line per variable and the
// dataset digests in the manifest, and reports a unit whose record says
// another digest as a DIFF naming the unit, its shard and both digests.
func TestCheckUnits(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	env := Env{Log: &log, Verbose: &log, Jobs: 1, MaxMem: 64 << 20, Version: "test", Verb: "plan"}
	spec := specOf(t, in, Spec{Readers: DefaultReaders, Shards: 2, UnitBytes: 1024})
	job, err := Prepare(ctx, out, spec, env)
	if err != nil || job == nil {
		t.Fatalf("prepare: %v %v\n%s", job, err, log.String())
	}
	for s := range 2 {
		if err := RewriteShard(ctx, out, Shard{I: s, N: 2, From: "--shard"}, env); err != nil {
			t.Fatal(err)
		}
	}
	work := workDir(out)
	recs, err := jobRecords(work, job)
	if err != nil {
		t.Fatal(err)
	}
	if err := rewriter.JoinParts(ctx, &job.Plan, stageDir(work), partPaths(work, job), recs, nil); err != nil {
		t.Fatal(err)
	}
	if err := stageManifest(work, job); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	checks, ok, err := journalCheck(ctx, out, job, recs, env)
	if err != nil || !ok || len(checks) != len(job.Manifest.Variables) {
		t.Fatalf("check: ok=%v %v %v\n%s", ok, checks, err, log.String())
	}
	for _, v := range job.Manifest.Variables {
		if checks[v.Name] != "sha256 ok" || !strings.Contains(log.String(), "OK  "+v.Name+"  ") {
			t.Errorf("%s: %q\n%s", v.Name, checks[v.Name], log.String())
		}
		for _, d := range v.Datasets {
			if d.SHA256 == "" {
				t.Errorf("%s step %d: no digest in the manifest", v.Name, d.Step)
			}
		}
	}
	bad := maps.Clone(recs)
	r := bad[0]
	r.Sum = strings.Repeat("0", len(r.Sum))
	bad[0] = r
	log.Reset()
	checks, ok, err = journalCheck(ctx, out, job, bad, env)
	if err != nil || ok {
		t.Fatalf("check of a damaged record: ok=%v %v\n%s", ok, err, log.String())
	}
	u := job.Units[0]
	v := job.Manifest.Variables[job.Datasets[u.Dataset].VarIndex].Name
	want := "DIFF " + where(&job.Datasets[u.Dataset])
	if !strings.HasPrefix(checks[v], want) || !strings.Contains(checks[v], "(unit 0 of "+shardName(u.Shard, 2)+")") ||
		!strings.Contains(checks[v], "journal says "+r.Sum) || !strings.Contains(log.String(), checks[v]) {
		t.Fatalf("damaged record: %q\n%s", checks[v], log.String())
	}
}
