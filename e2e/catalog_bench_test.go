package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/reader"
)

// The 100,000-block dataset: rho of 100x80x50 float64 in 50x40x25 regular
// blocks of 2x2x2 at each of 2 steps, written by 4 ADIOS 1.x ranks through
// MPI_AGGREGATE into 2 sub-files, with ADIOS's default min/max statistics.
var bench100kArgs = []string{"--shape", "100,80,50", "--blocks", "50,40,25", "--steps", "2", "--int-shape", "", "--regular"}

const bench100kBlocks = 2 * 50 * 40 * 25

// bench100k returns the dataset, generating it (about 10 s) into a cache
// directory under os.TempDir() named by the writer script and its arguments,
// so repeated benchmark runs reuse it. Remove $TMPDIR/relayout-bench-bp3-* to
// reclaim the space (about 90 MB).
func bench100k(b *testing.B) string {
	b.Helper()
	needADIOS1(b)
	script, err := os.ReadFile(writeBP3Script)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.Sum256(append(script, strings.Join(bench100kArgs, "\x00")...))
	dir := filepath.Join(os.TempDir(), "relayout-bench-bp3-"+hex.EncodeToString(h[:6]))
	bp := filepath.Join(dir, "blocks100k.bp")
	if _, err := os.Stat(bp + ".blocks.json"); err == nil { // written last, by rank 0
		return bp
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "relayout-bench-gen-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	writeBP3(b, tmp, "blocks100k.bp", bench100kArgs...)
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return bp
}

// BenchmarkCatalog100kBlocks times building the catalog of a 100,000-block
// BP3 dataset in process, as `relayout catalog` and `run` do: reader.Open, then
// Scan streaming every array into a fresh SQLite catalog.Store ("store"), and
// the reader alone with blocks counted and dropped ("scan"). Bytes are the
// size of the global metadata file (NAME.bp), which holds the block index.
//
//	go test ./e2e -run '^$' -bench Catalog100k -benchtime 5x
func BenchmarkCatalog100kBlocks(b *testing.B) {
	bp := bench100k(b)
	st, err := os.Stat(bp)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// catalogue does what job.BuildCatalog (job/catalog.go) does; a nil store
	// leaves the reader alone.
	catalogue := func(b *testing.B, store *catalog.Store) int {
		ds, err := reader.Open(bp, reader.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer ds.Close()
		blocks := 0
		err = ds.Scan(ctx, func(a *catalog.Array) error {
			blocks += len(a.Blocks)
			if store == nil {
				return nil
			}
			return store.Put(a)
		})
		if err == nil && store != nil {
			err = store.SetInfo(ds.Info())
		}
		if err != nil {
			b.Fatal(err)
		}
		return blocks
	}
	check := func(b *testing.B, blocks int) {
		// rho's blocks plus ADIOS's own timer arrays (5 blocks a step).
		if blocks < bench100kBlocks || blocks > bench100kBlocks+10 {
			b.Fatalf("catalogued %d blocks, want %d (+ ADIOS timers)", blocks, bench100kBlocks)
		}
		b.ReportMetric(float64(blocks), "blocks/op")
	}
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		var blocks int
		for b.Loop() {
			blocks = catalogue(b, nil)
		}
		check(b, blocks)
	})
	b.Run("store", func(b *testing.B) {
		db := filepath.Join(b.TempDir(), "catalog.db")
		b.SetBytes(st.Size())
		b.ReportAllocs()
		var blocks int
		for b.Loop() {
			store, err := catalog.CreateStore(db)
			if err != nil {
				b.Fatal(err)
			}
			blocks = catalogue(b, store)
			if err := store.Close(); err != nil {
				b.Fatal(err)
			}
		}
		check(b, blocks)
	})
}
