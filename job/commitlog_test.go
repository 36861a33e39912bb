package job

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/reader"
	"relayout/rewriter"
)

// stageFiles makes work/stage with a manifest naming n variable files, each
// holding its own name, and returns the manifest.
func stageFiles(t *testing.T, work string, n int) *catalog.Manifest {
	t.Helper()
	stage := filepath.Join(work, "stage")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &catalog.Manifest{Tool: "relayout", Version: "t"}
	for i := range n {
		name := string(rune('a'+i)) + ".h5"
		if err := os.WriteFile(filepath.Join(stage, name), []byte("new "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		m.Variables = append(m.Variables, catalog.ManifestVariable{Name: name, File: name, Datasets: []catalog.ManifestDataset{}})
	}
	return m
}

// TestRollForwardAtEveryRename interrupts a commit before each of its
// renames (as a SIGKILL there would: the record durable, the earlier
// renames done, the later not), over an OUT holding an older file of the
// same name, then rolls forward — twice, as a rerun killed during the
// roll-forward would — and expects the same OUT every time.
func TestRollForwardAtEveryRename(t *testing.T) {
	const files = 3
	for cut := 0; cut <= files+1; cut++ {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		work := filepath.Join(out, ".relayout")
		m := stageFiles(t, work, files)
		if err := os.WriteFile(filepath.Join(out, "b.h5"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := writeManifest(filepath.Join(work, "stage"), m); err != nil {
			t.Fatal(err)
		}
		rec := CommitRecord{Schema: CommitSchema, Signature: "s", Inputs: []InputFile{}}
		for _, n := range []string{"a.h5", "b.h5", "c.h5", catalog.ManifestName} {
			rec.Renames = append(rec.Renames, Rename{From: "stage/" + n, To: n})
		}
		b, err := encodeCommitRecord(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFileAtomic(work, committingFile, b); err != nil {
			t.Fatal(err)
		}
		for _, rn := range rec.Renames[:cut] {
			if err := os.Rename(filepath.Join(work, rn.From), filepath.Join(out, rn.To)); err != nil {
				t.Fatal(err)
			}
		}
		if committed(work, out) && cut <= files {
			t.Fatalf("cut %d: committed before the manifest's rename", cut)
		}
		for range 2 {
			rolled, err := rollForward(work, out)
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			_ = rolled
		}
		if !committed(work, out) || committing(work) {
			t.Fatalf("cut %d: committed %v committing %v", cut, committed(work, out), committing(work))
		}
		entries, _ := os.ReadDir(out)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{".relayout", "a.h5", "b.h5", "c.h5", catalog.ManifestName}; !slices.Equal(names, want) {
			t.Fatalf("cut %d: OUT holds %v, want %v", cut, names, want)
		}
		for _, n := range []string{"a.h5", "b.h5", "c.h5"} {
			if got, _ := os.ReadFile(filepath.Join(out, n)); string(got) != "new "+n {
				t.Fatalf("cut %d: %s holds %q", cut, n, got)
			}
		}
		if rolled, err := rollForward(work, out); rolled || err != nil {
			t.Fatalf("cut %d: a finished commit rolled forward again: %v %v", cut, rolled, err)
		}
	}
}

// TestCommitRecordDamage: a damaged record is refused as corrupt, naming
// the file and offset; a record naming paths outside stage/ or OUT too.
func TestCommitRecordDamage(t *testing.T) {
	dir := t.TempDir()
	rec := CommitRecord{Schema: CommitSchema, Renames: []Rename{{From: "stage/a.h5", To: "a.h5"}}}
	good, err := encodeCommitRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeCommitRecord("x", good); err != nil {
		t.Fatal(err)
	}
	flip := slices.Clone(good)
	flip[len(flip)-2] ^= 1
	evil, _ := encodeCommitRecord(&CommitRecord{Schema: CommitSchema, Renames: []Rename{{From: "stage/../../x", To: "a.h5"}}})
	evil2, _ := encodeCommitRecord(&CommitRecord{Schema: CommitSchema, Renames: []Rename{{From: "stage/a", To: "../a"}}})
	for name, b := range map[string][]byte{"short": good[:5], "cut": good[:len(good)-1], "flip": flip, "escape": evil, "escape out": evil2} {
		path := filepath.Join(dir, "committing")
		_, err := decodeCommitRecord(path, b)
		if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), ": offset ") {
			t.Errorf("%s: %v, want a corrupt-input error naming the file and offset", name, err)
		}
	}
}

// FuzzCommitRecord: any bytes give a record or ErrCorrupt, never a panic.
func FuzzCommitRecord(f *testing.F) {
	rec := CommitRecord{Schema: CommitSchema, Signature: `{"layout":"contiguous"}`,
		Inputs:  []InputFile{{Name: "data.0", Size: 10, MTimeNs: 5}},
		Renames: []Rename{{From: "stage/a.h5", To: "a.h5"}, {From: "stage/relayout.json", To: "relayout.json"}}}
	good, _ := encodeCommitRecord(&rec)
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return // memory cap: records are small
		}
		r, err := decodeCommitRecord("fuzz", b)
		if err != nil {
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("%v: not ErrCorrupt", err)
			}
			return
		}
		for _, rn := range r.Renames {
			if strings.Contains(rn.To, "/") || strings.Contains(strings.TrimPrefix(rn.From, "stage/"), "/") {
				t.Fatalf("accepted rename %+v", rn)
			}
		}
	})
}

func TestInputsDiffer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "md.0"), []byte("abc"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "data.0"), []byte("abcd"), 0o644)
	was, err := inputFiles(dir)
	if err != nil || len(was) != 2 || was[0].Name != "md.0" || was[1].Name != "sub/data.0" || was[1].Size != 4 {
		t.Fatalf("%+v %v", was, err)
	}
	if d := inputsDiffer(was, was); d != "" {
		t.Fatal(d)
	}
	os.WriteFile(filepath.Join(dir, "sub", "data.0"), []byte("abcde"), 0o644)
	os.Remove(filepath.Join(dir, "md.0"))
	now, _ := inputFiles(dir)
	if d := inputsDiffer(was, now); !strings.Contains(d, "sub/data.0: 5 bytes, was 4") || !strings.Contains(d, "md.0 is gone") {
		t.Fatal(d)
	}
}

// stageOutput writes the in-memory rewrite of input in (every variable,
// manifest of the given version) into stage, as a run's commit finds it:
// the rewriter's Prepare, its one shard, JoinParts, the pipeline's digests
// and the manifest in the stage.
func stageOutput(t *testing.T, in, stage, version string) *catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	ds, store, err := BuildCatalog(ctx, in, filepath.Join(t.TempDir(), "catalog.db"), reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	defer store.Close()
	plan, err := rewriter.Prepare(ctx, store, ds, stage, rewriter.Options{Version: version}, rewriter.PrepareOptions{Shards: 1, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Release()
	part := filepath.Join(t.TempDir(), "shard-0-of-1.part")
	if _, err := rewriter.RewriteShard(ctx, store, ds, plan, stage, rewriter.Shard{Part: part}, 2, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := rewriter.JoinParts(ctx, plan, stage, []string{part}, plan.Finished(), nil); err != nil {
		t.Fatal(err)
	}
	plan.PipelineDigests()
	if err := writeManifest(stage, &plan.Manifest); err != nil {
		t.Fatal(err)
	}
	return &plan.Manifest
}

func TestCommit(t *testing.T) {
	in := sample(t)
	dir := t.TempDir()
	work, out := filepath.Join(dir, "out", ".relayout"), filepath.Join(dir, "out")
	stage := filepath.Join(work, "stage")
	m := stageOutput(t, in, stage, "test-1")
	if err := commitStage(work, out, m, CommitRecord{Signature: "sig"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"E.x.h5", "E.y.h5", "E.z.h5", "rho.h5", "series.h5", catalog.ManifestName} {
		if _, err := os.Stat(filepath.Join(out, n)); err != nil {
			t.Errorf("out: %v", err)
		}
		if _, err := os.Stat(filepath.Join(stage, n)); err == nil {
			t.Errorf("%s still in stage", n)
		}
	}
	if _, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if !committed(work, out) || committing(work) {
		t.Fatalf("committed %v, committing %v after the commit", committed(work, out), committing(work))
	}
	// A second run committed over the first replaces its files (the
	// caller decided --force up front: uncommit removed the manifest).
	if err := uncommit(work, out); err != nil {
		t.Fatal(err)
	}
	if committed(work, out) {
		t.Fatal("committed after uncommit")
	}
	if _, err := os.Stat(filepath.Join(out, catalog.ManifestName)); err == nil {
		t.Fatal("manifest left by uncommit")
	}
	m = stageOutput(t, in, stage, "test-2")
	if err := commitStage(work, out, m, CommitRecord{Signature: "sig2"}); err != nil {
		t.Fatal(err)
	}
	got, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil || got.Version != "test-2" {
		t.Fatalf("manifest after the replacing commit: %+v, %v", got, err)
	}
	rec, pending, err := readCommitRecord(work)
	// 4 files, series.h5, 2 views (steps 0 and 5) and the manifest.
	if err != nil || pending || rec.Signature != "sig2" || len(rec.Renames) != 8 || rec.Renames[5].To != "view_0.hdf" || rec.Renames[7].To != catalog.ManifestName {
		t.Fatalf("commit record %+v pending %v: %v", rec, pending, err)
	}
}
