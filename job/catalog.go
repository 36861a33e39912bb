package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"relayout/catalog"
	"relayout/reader"
	"relayout/rewriter"
	"relayout/verify"
)

// BuildCatalog opens path with its reader and streams every array into a
// fresh catalog database at dbPath. A --var that selects nothing is the
// reader's *reader.NoMatchError (main turns it into a usage error with
// suggestions).
func BuildCatalog(ctx context.Context, path, dbPath string, opts reader.Options) (reader.Dataset, *catalog.Store, error) {
	return BuildCatalogEach(ctx, path, dbPath, opts, 0, false, nil, nil)
}

// BuildCatalogEach is BuildCatalog that also hands each array to each (when
// not nil), in the catalog's order (variable, step, level: the order of
// Store.EachArray): what `relayout plan` plans as the catalog is built
// instead of reading every block list back. each runs on a goroutine of its
// own beside the reader and the store (see alongside), one array at a time,
// and has returned for every array when BuildCatalogEach returns. An error
// of each stops the build and is returned. The store keeps up to keep
// bytes of the block lists it stores (catalog.Store.KeepBlocks: a run's
// later passes then never decode them). A summary store (summary true:
// the catalog is only summarised or planned, then removed) stores none
// (catalog.Store.OmitBlockLists).
func BuildCatalogEach(ctx context.Context, path, dbPath string, opts reader.Options, keep int64, summary bool, each func(*catalog.Array) error, opened func(catalog.DatasetInfo)) (reader.Dataset, *catalog.Store, error) {
	ds, err := reader.Open(path, opts)
	if err != nil {
		return nil, nil, err
	}
	if opened != nil {
		opened(ds.Info())
	}
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		ds.Close()
		return nil, nil, err
	}
	store, err := catalog.CreateStore(dbPath)
	if err != nil {
		ds.Close()
		return nil, nil, err
	}
	store.KeepBlocks(keep)
	if summary {
		store.OmitBlockLists()
	}
	var emit func(*catalog.Array) error
	var wait func() error
	if each != nil {
		emit, wait = alongside(ctx, store.Put, each)
	} else {
		// The store's encoding and SQLite's pages beside the reader's
		// parsing of the next array (351,537 BP5 blocks: about as much
		// CPU each).
		emit, wait = alongside(ctx, func(*catalog.Array) error { return nil }, store.Put)
	}
	err = ds.Scan(ctx, emit)
	if werr := wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = checkIncomplete(path, ds.Info(), opts.Strict)
	}
	if err == nil {
		err = store.SetInfo(ds.Info()) // after Scan: the reader fills Skipped while scanning
	}
	if err != nil {
		store.Close()
		ds.Close()
		return nil, nil, err
	}
	return ds, store, nil
}

// alongside returns the emit of a Scan that hands each array to each, on a
// goroutine of its own and in order, and stores it with put, and the wait
// that ends that goroutine (always called, after the Scan) and returns the
// first error of each. The plan of an array costs about what reading and
// storing it do (351,537 BP5 blocks: 0.3 s of CPU each), so on two cores
// they overlap: while each has array i, the reader and the store go on
// with array i+1. An array goes to each first when each is idle (neither
// modifies it), else once it is stored; the hand-over waits for each to
// take it, so at most two arrays are in memory (one in each, one being
// read or stored). An error of each stops the Scan at its next array.
func alongside(ctx context.Context, put, each func(*catalog.Array) error) (emit func(*catalog.Array) error, wait func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	arrays := make(chan *catalog.Array)
	done := make(chan error, 1)
	go func() {
		for a := range arrays {
			if err := each(a); err != nil {
				cancel(err) // the next emit returns it: nothing takes its array
				done <- err
				return
			}
		}
		done <- nil
	}()
	emit = func(a *catalog.Array) error {
		select {
		case arrays <- a:
			return put(a)
		default:
		}
		if err := put(a); err != nil {
			return err
		}
		select {
		case arrays <- a:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	wait = func() error {
		close(arrays)
		err := <-done
		cancel(nil)
		return err
	}
	return emit, wait
}

// checkIncomplete warns on stderr about each part of the input that was
// written but is not indexed (a writer that died): the complete part is
// converted and the rest listed in the manifest's skipped. With --strict
// (strict) such an input is refused instead.
func checkIncomplete(path string, info catalog.DatasetInfo, strict bool) error {
	inc := catalog.IncompleteEntries(info.Skipped)
	if len(inc) == 0 {
		return nil
	}
	if strict {
		return fmt.Errorf("%s: %s (refused with --strict; without it the complete part is converted): %w",
			path, strings.TrimPrefix(inc[0], catalog.IncompletePrefix), catalog.ErrCorrupt)
	}
	for _, s := range inc {
		fmt.Fprintf(os.Stderr, "relayout: warning: %s: %s\n", path, strings.TrimPrefix(s, catalog.IncompletePrefix))
	}
	return nil
}

// VerifyOutput compares the input catalog with a relayout output directory
// (staged or committed; m nil: its manifest) through package verify, which
// shares no code with the writer: the output read through the HDF5 library,
// the input block by block. It is the one place run, relayout verify and
// the journaled commit call the verifier through. mon, when set, follows
// the bytes verified (the display's verify phase). With fill (m not nil),
// the digests the manifest lacks are filled from what the verifier read
// and compared equal to the input, once every element verified: the
// writer's own pass over the data (digest, or commit's journal check) is
// then not needed. What the verifier read (the input through inSrc, the
// output through HDF5) is printed to w as an "io: verify" line and, when
// m has an io section, recorded in it (catalog.ManifestIO's Verify fields).
// exact: every element compared, none by checksum (verify.Options.Exact);
// checksummed is the arrays compared by positional checksum otherwise;
// tap (nil: none) holds the input blocks summed during the rewrite.
func VerifyOutput(ctx context.Context, in *catalog.Store, inSrc catalog.Source, outDir string, m *catalog.Manifest,
	w io.Writer, maxMem int64, jobs int, mon *rewriter.Monitor, fill, exact bool, tap *verify.Tap) (ok bool, checksummed int, err error) {
	opts := verify.Options{MaxMem: maxMem, Jobs: jobs, Log: w, FillDigests: fill && m != nil, Exact: exact, Tap: tap}
	if mon != nil {
		opts.Progress = func(p verify.Progress) { mon.Track(p.Done, p.Total, p.Variable) }
	}
	res, err := verify.Check(ctx, in, inSrc, outDir, m, opts)
	if err != nil {
		return false, 0, err
	}
	vio := &catalog.ManifestIO{}
	if m != nil && m.IO != nil {
		vio = m.IO
	}
	vio.VerifyReadBytes, vio.VerifyReadCalls = res.IO.Input.ReadBytes, res.IO.Input.ReadCalls
	vio.VerifyOutputBytes, vio.VerifyOutputReads, vio.VerifySeconds = res.IO.OutputBytes, res.IO.OutputReads, res.IO.Seconds
	writeVerifyIOSummary(w, vio)
	if !res.OK || !opts.FillDigests {
		return res.OK, res.Checksummed, err
	}
	kind, err := m.DigestKind() // the algorithm of res.Digests
	if err != nil {
		return false, 0, err
	}
	for i := range m.Variables {
		mv := &m.Variables[i]
		for _, ds := range [][]catalog.ManifestDataset{mv.Datasets, mv.Constants} {
			for j := range ds {
				d := &ds[j]
				if d.Sum(kind) == "" {
					d.SetSum(kind, res.Digests[mv.Key(d)]) // a copy: its array's
				}
			}
		}
	}
	return true, res.Checksummed, nil
}
