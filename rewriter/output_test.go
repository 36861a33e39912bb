package rewriter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
	"relayout/verify"
)

// fileSource reads uncompressed blocks with pread from files under root.
type fileSource struct {
	catalog.Plain
	root string
}

func (s fileSource) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if b.Inline() != nil {
		return append([]byte(nil), b.Inline()...), nil
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

// ReadBlocks implements catalog.Source, a block at a time.
func (s fileSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) { return s.ReadBlock(ctx, b, dt) }, fn)
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
			// Fill: unallocated chunks read as the dataset's fill value.
			a := &catalog.Array{Var: v.Name, Step: d.Step, Level: d.Level, DType: info.DType, Shape: info.Shape, Offset: d.Offset, Fill: info.Fill}
			if info.Layout == "chunked" {
				err = f.Chunks(d.Path, func(c h5.Chunk) error {
					n := make([]int64, len(c.Offset))
					for i := range n {
						n[i] = min(info.Chunk[i], info.Shape[i]-c.Offset[i])
					}
					a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: c.Offset, Count: n},
						File: v.File, Offset: c.Address, Length: c.Size}.WithStored(info.Chunk, nil))
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

// verifyOutput checks the output in dir against the input with package
// verify (the independent verifier run and commit use) within maxMem (0:
// its default), returning what it printed.
func verifyOutput(t *testing.T, in *catalog.Store, inSrc catalog.Source, dir string, m *catalog.Manifest, maxMem int64) string {
	t.Helper()
	var w bytes.Buffer
	ok, err := verify.Output(context.Background(), in, inSrc, dir, m, verify.Options{MaxMem: maxMem, Log: &w})
	if err != nil || !ok {
		t.Fatalf("verify: ok=%v err=%v\n%s", ok, err, w.String())
	}
	return w.String()
}
