package rewriter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
)

// fileSource reads uncompressed blocks with pread from files under root.
type fileSource struct{ root string }

func (s fileSource) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if b.Inline != nil {
		return append([]byte(nil), b.Inline...), nil
	}
	if len(b.Codecs) != 0 {
		return nil, fmt.Errorf("fileSource: codecs: %w", catalog.ErrUnsupported)
	}
	f, err := os.Open(filepath.Join(s.root, b.File))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, b.Length)
	_, err = f.ReadAt(buf, b.Offset)
	return buf, err
}

// catalogOutput catalogs a relayout output directory through internal/h5
// (contiguous address or chunk list), skipping variables in omit.
func catalogOutput(t *testing.T, dir string, m *catalog.Manifest, omit string) *catalog.Store {
	t.Helper()
	st, err := catalog.CreateStore(filepath.Join(t.TempDir(), "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SetInfo(catalog.DatasetInfo{Path: dir, Root: dir, Format: "relayout"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Variables {
		if v.Name == omit {
			continue
		}
		f, err := h5.Open(filepath.Join(dir, v.File))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range v.Datasets {
			info, err := f.Dataset(d.Path)
			if err != nil {
				t.Fatal(err)
			}
			a := &catalog.Array{Var: v.Name, Step: d.Step, Level: d.Level, DType: info.DType, Shape: info.Shape, Offset: d.Offset}
			if info.Layout == "chunked" {
				err = f.Chunks(d.Path, func(c h5.Chunk) error {
					n := make([]int64, len(c.Offset))
					for i := range n {
						n[i] = min(info.Chunk[i], info.Shape[i]-c.Offset[i])
					}
					a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: c.Offset, Count: n},
						Stored: info.Chunk, File: v.File, Offset: c.Address, Length: c.Size})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				a.Blocks = []catalog.Block{{Box: catalog.Box{Lower: make([]int64, len(info.Shape)), Count: info.Shape},
					File: v.File, Offset: info.Address, Length: a.Bytes()}}
			}
			if err := st.Put(a); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	return st
}

func TestVerify(t *testing.T) {
	for _, layout := range []Options{{}, {Chunks: []int64{2, 2, 2}}} {
		vars := inputVars()
		if layout.Chunks != nil {
			vars = vars[:3] // B/x only: the decomposition is 3-D
		}
		dir := t.TempDir()
		in, inSrc := buildInput(t, dir, vars)
		stage := filepath.Join(dir, "stage")
		layout.Jobs, layout.MaxMem, layout.Version = 2, 16000, "test-1" // tiny; a column-major block is read whole
		m, err := Run(context.Background(), in, inSrc, stage, layout)
		if err != nil {
			t.Fatal(err)
		}
		out := catalogOutput(t, stage, m, "")
		outSrc := fileSource{stage}
		var w bytes.Buffer
		ok, err := Verify(context.Background(), in, inSrc, out, outSrc, m, &w)
		if err != nil || !ok {
			t.Fatalf("clean output: ok=%v err=%v\n%s", ok, err, w.String())
		}
		want := "OK  B/x  2 steps  2646 elements  sha256 ok\n" // 2*13*11*9 + 6*4*3
		if layout.Chunks == nil {
			want += "OK  E x  1 steps  20 elements  sha256 ok\n" +
				"OK  rho  1 steps  70 elements  sha256 ok\n" +
				"OK  t  2 steps  2 elements  sha256 ok\n"
		}
		if w.String() != want {
			t.Fatalf("report\n%s\nwant\n%s", w.String(), want)
		}

		// A manifest digest that does not match.
		bad := *m
		bad.Variables = append([]catalog.ManifestVariable(nil), m.Variables...)
		bad.Variables[0].Datasets = append([]catalog.ManifestDataset(nil), m.Variables[0].Datasets...)
		bad.Variables[0].Datasets[2].SHA256 = strings.Repeat("0", 64)
		w.Reset()
		ok, err = Verify(context.Background(), in, inSrc, out, outSrc, &bad, &w)
		if err != nil || ok || !strings.HasPrefix(w.String(), "DIFF B/x step 2 level 1: sha256 of output ") {
			t.Fatalf("bad digest: ok=%v err=%v\n%s", ok, err, w.String())
		}
	}
}

func TestVerifyDetectsDamage(t *testing.T) {
	dir := t.TempDir()
	vars := inputVars()
	in, inSrc := buildInput(t, dir, vars)
	stage := filepath.Join(dir, "stage")
	// A tiny budget, but a column-major block (5,720 bytes, read whole) must fit.
	m, err := Run(context.Background(), in, inSrc, stage, Options{Jobs: 2, MaxMem: 16000, Version: "test-1"})
	if err != nil {
		t.Fatal(err)
	}
	out := catalogOutput(t, stage, m, "t")
	outSrc := fileSource{stage}

	// Flip one byte of element [3,4,5] of B/x step 1 (contiguous, row-major
	// little-endian): the low mantissa byte, so the value changes slightly.
	path := filepath.Join(stage, "B.x.h5")
	f, err := h5.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Dataset("/data/1/meshes/B/x")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pos := info.Address + ((3*11+4)*9+5)*8
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[pos] ^= 0x01
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	ok, err := Verify(context.Background(), in, inSrc, out, outSrc, m, &w)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatalf("damaged output verified ok:\n%s", w.String())
	}
	// Element [3,4,5] of step 1 is ((1*13+3)*11+4)*9+5 + 0.25 = 1625.25.
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "DIFF B/x step 1 level 0 at [3,4,5]: in=1625.25 out=1625.2500000000002") {
		t.Fatalf("report:\n%s", w.String())
	}
	if lines[1] != "OK  E x  1 steps  20 elements  sha256 ok" || lines[3] != "DIFF t step 1 level 0: missing from output" {
		t.Fatalf("report:\n%s", w.String())
	}
}

func TestCommit(t *testing.T) {
	dir := t.TempDir()
	in, inSrc := buildInput(t, dir, inputVars())
	work, out := filepath.Join(dir, "out", ".relayout"), filepath.Join(dir, "out")
	stage := filepath.Join(work, "stage")
	m, err := Run(context.Background(), in, inSrc, stage, Options{Version: "test-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := CommitStage(work, out, m, CommitRecord{Signature: "sig"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"B.x.h5", "E_x.h5", "rho.h5", "t.h5", catalog.ManifestName} {
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
	if !Committed(work, out) || Committing(work) {
		t.Fatalf("committed %v, committing %v after the commit", Committed(work, out), Committing(work))
	}
	// A second run committed over the first replaces its files (the
	// caller decided --force up front: Uncommit removed the manifest).
	if err := Uncommit(work, out); err != nil {
		t.Fatal(err)
	}
	if Committed(work, out) {
		t.Fatal("committed after Uncommit")
	}
	if _, err := os.Stat(filepath.Join(out, catalog.ManifestName)); err == nil {
		t.Fatal("manifest left by Uncommit")
	}
	if m, err = Run(context.Background(), in, inSrc, stage, Options{Version: "test-2"}); err != nil {
		t.Fatal(err)
	}
	if err := CommitStage(work, out, m, CommitRecord{Signature: "sig2"}); err != nil {
		t.Fatal(err)
	}
	got, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil || got.Version != "test-2" {
		t.Fatalf("manifest after the replacing commit: %+v, %v", got, err)
	}
	rec, pending, err := ReadCommitRecord(work)
	if err != nil || pending || rec.Signature != "sig2" || len(rec.Renames) != 6 || rec.Renames[5].To != catalog.ManifestName {
		t.Fatalf("commit record %+v pending %v: %v", rec, pending, err)
	}
}
