package job

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// appendManifest is a manifest of variable E/x (file fx) with a dataset of
// shape shape at each of steps, and a constant phi at step 0.
func appendManifest(fx string, shape []int64, steps ...int64) *catalog.Manifest {
	v := catalog.ManifestVariable{Name: "E/x", DType: "<f8", File: fx}
	for _, s := range steps {
		v.Datasets = append(v.Datasets, catalog.ManifestDataset{Step: s, Path: "/data/" + string(rune('0'+s)) + "/E/x",
			Shape: shape, Offset: make([]int64, len(shape)), SHA256: "sum" + string(rune('0'+s))})
	}
	c := catalog.ManifestVariable{Name: "phi", DType: "<f8", File: "phi.h5",
		Constants: []catalog.ManifestDataset{{Path: "/data/0/phi", Shape: []int64{2}, Offset: []int64{0}}}}
	return &catalog.Manifest{Tool: "relayout", Variables: []catalog.ManifestVariable{v, c}}
}

// TestAppendCheckPlan: what OUT holds must be planned again alike; a new
// step is added, a dataset grown along its first axis extended (its old
// file, named otherwise now, to be removed); a step removed, a reshaped
// array, a variable gone or retyped, and nothing new are refused as usage
// errors naming the array.
func TestAppendCheckPlan(t *testing.T) {
	old := appendManifest("E.x.h5", []int64{4, 3}, 0, 1)
	a := &appendState{old: old, kind: catalog.SHA256, changed: "f2 is new"}
	if err := a.checkPlan("out", appendManifest("E.x.h5", []int64{4, 3}, 0, 1, 2)); err != nil {
		t.Fatal(err)
	}
	if len(a.added) != 1 || a.added[0].Step != 2 || a.added[0].Var != "E/x" || len(a.removes) != 0 {
		t.Errorf("a new step: added %+v removes %v", a.added, a.removes)
	}
	grown := appendManifest("E.x_0_6.h5", []int64{6, 3}, 0, 1)
	if err := a.checkPlan("out", grown); err != nil {
		t.Fatal(err)
	}
	if len(a.added) != 2 || !slices.Equal(a.added[0].ExtendedFrom, []int64{4, 3}) || !slices.Equal(a.removes, []string{"E.x.h5"}) {
		t.Errorf("grown records: added %+v removes %v", a.added, a.removes)
	}
	retyped := appendManifest("E.x.h5", []int64{4, 3}, 0, 1, 2)
	retyped.Variables[0].DType = "<f4"
	noPhi := appendManifest("E.x.h5", []int64{4, 3}, 0, 1, 2)
	noPhi.Variables = noPhi.Variables[:1]
	for name, c := range map[string]struct {
		m    *catalog.Manifest
		want string
	}{
		"step removed": {appendManifest("E.x.h5", []int64{4, 3}, 0, 2), "E/x step 1 (/data/1/E/x) is in E.x.h5 but no longer in the input"},
		"reshaped":     {appendManifest("E.x.h5", []int64{4, 4}, 0, 1, 2), "E/x step 0 (/data/0/E/x) is of shape 4x4"},
		"shrunk":       {appendManifest("E.x.h5", []int64{3, 3}, 0, 1, 2), "is of shape 3x3"},
		"retyped":      {retyped, "variable E/x is <f4 in the input, <f8 in E.x.h5"},
		"variable":     {noPhi, "variable phi is in phi.h5 but no longer in the input"},
		"nothing new":  {appendManifest("E.x.h5", []int64{4, 3}, 0, 1), "the input has no array out lacks"},
	} {
		err := a.checkPlan("out", c.m)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f2 is new") {
			t.Errorf("%s: %v, want a refusal naming %q and the changed files", name, err, c.want)
		}
	}
}

// TestAppendCheckDigests: an array OUT holds whose digest is other now is
// refused naming it; equal digests record the append after OUT's.
func TestAppendCheckDigests(t *testing.T) {
	old := appendManifest("E.x.h5", []int64{4, 3}, 0, 1)
	old.Appends = []catalog.ManifestAppend{{Datasets: []catalog.ManifestAppendedKey{{Var: "E/x", Step: 1}}}}
	a := &appendState{old: old, kind: catalog.SHA256, changed: "f2 is new", inputs: []string{"f2"}}
	m := appendManifest("E.x.h5", []int64{4, 3}, 0, 1, 2)
	if err := a.checkPlan("out", m); err != nil {
		t.Fatal(err)
	}
	if err := a.checkDigests("out", t.TempDir(), m); err != nil {
		t.Fatal(err)
	}
	if len(m.Appends) != 2 || m.Appends[1].Datasets[0].Step != 2 || !slices.Equal(m.Appends[1].Inputs, []string{"f2"}) {
		t.Errorf("appends %+v, want OUT's and this one's", m.Appends)
	}
	m = appendManifest("E.x.h5", []int64{4, 3}, 0, 1, 2)
	m.Variables[0].Datasets[1].SHA256 = "other"
	err := a.checkDigests("out", t.TempDir(), m)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "E/x step 1 (/data/1/E/x) has other values in the input than in E.x.h5") {
		t.Errorf("a changed array: %v", err)
	}
}

// TestRollForwardRemoves: the files a commit record removes go after the
// renames (the manifest's included), once; a missing one was removed
// before a kill; a record removing a path outside OUT is corrupt.
func TestRollForwardRemoves(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	work := filepath.Join(out, ".relayout")
	m := stageFiles(t, work, 1)
	if err := writeManifest(filepath.Join(work, "stage"), m); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"old_0_3.nc", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(out, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := CommitRecord{Schema: CommitSchema, Inputs: []InputFile{}, Removes: []string{"old_0_3.nc", "gone.nc"},
		Renames: []Rename{{From: "stage/a.h5", To: "a.h5"}, {From: "stage/" + catalog.ManifestName, To: catalog.ManifestName}}}
	b, err := encodeCommitRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(work, committingFile, b); err != nil {
		t.Fatal(err)
	}
	if rolled, err := rollForward(work, out); !rolled || err != nil {
		t.Fatalf("rollForward: %v %v", rolled, err)
	}
	for n, want := range map[string]bool{"old_0_3.nc": false, "keep.txt": true, "a.h5": true, catalog.ManifestName: true} {
		if _, err := os.Stat(filepath.Join(out, n)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", n, err == nil, want)
		}
	}
	evil, _ := encodeCommitRecord(&CommitRecord{Schema: CommitSchema, Removes: []string{"../x"}})
	if _, err := decodeCommitRecord("committing", evil); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("a record removing ../x: %v, want corrupt", err)
	}
	manifest, _ := encodeCommitRecord(&CommitRecord{Schema: CommitSchema, Removes: []string{catalog.ManifestName}})
	if _, err := decodeCommitRecord("committing", manifest); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("a record removing the manifest: %v, want corrupt", err)
	}
}
