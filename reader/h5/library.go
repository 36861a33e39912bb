package h5

// The slow path: chunks whose filter pipeline has a filter relayout does
// not decode natively (HDF5 plugin filters: lz4, bzip2, zfp, ...) are
// read through the HDF5 library. HDF5 has no public call that applies a
// filter pipeline to a buffer, so such a block is H5Dread of its chunk's
// region (internal/h5 File.ReadRegion), one at a time under the library's
// lock; every other block keeps the native path (pread, then decode in Go).
//
//	block codecs [{hdf5-library, dataset: /B/x}]   box [32:64,0:40], stored [32,40]
//	      │
//	      ▼  H5Dread(/B/x, file selection = box, memory = stored shape, box at origin)
//	stored-shape buffer (the block's decoded size, charged by the caller's budget)
//
// Files are opened through the library on first use and kept open for the
// blocks that follow (a file is not reopened per block); at most
// maxLibraryFiles stay open, the least recently used idle one closed first,
// so that a file-based series of thousands of files does not exhaust the
// process's descriptors.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"relayout/catalog"
	ih5 "relayout/internal/h5"
	"relayout/reader/blockio"
)

// pluginDirExample is the directory Debian's HDF5 filter plugin packages
// install into, named in the way out of a missing-plugin error.
const pluginDirExample = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"

// nativeFilters reports whether relayout decodes every filter of the
// dataset's pipeline itself.
func nativeFilters(info *ih5.DatasetInfo) bool {
	for _, f := range info.Filters {
		if _, ok := codecNames[f.ID]; !ok {
			return false
		}
	}
	return true
}

// libraryCodecs is the codec list of the blocks of a dataset read through
// the HDF5 library.
func libraryCodecs(path string) []catalog.Codec {
	return []catalog.Codec{{Name: catalog.HDF5LibraryCodec, Dataset: path}}
}

// libraryBlock reports whether b is read through the HDF5 library.
func libraryBlock(b *catalog.Block) bool {
	return len(b.Codecs) == 1 && b.Codecs[0].Name == catalog.HDF5LibraryCodec
}

// maxLibraryFiles bounds the files kept open for library reads.
const maxLibraryFiles = 16

// library holds the HDF5 files opened for library reads and counts them.
type library struct {
	root string

	mu     sync.Mutex
	files  map[string]*libFile
	tick   uint64 // use counter, for least recently used
	closed bool

	blocks, bytes, nanos atomic.Int64
}

// libFile is a file open for library reads: refs readers use it now.
type libFile struct {
	f    *ih5.File
	refs int
	used uint64
}

func newLibrary(root string) *library { return &library{root: root, files: map[string]*libFile{}} }

// file returns the HDF5 file name (relative to the root) open through the
// library, opening it on first use; release must be called when done.
func (l *library) file(name string) (f *ih5.File, release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, fmt.Errorf("reader/h5: %s: dataset is closed", name)
	}
	lf, ok := l.files[name]
	if !ok {
		// Block file names come from catalogs, which are input too.
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, nil, catalog.Corrupt("hdf5", name, -1, "file name must be relative to the input root and inside it")
		}
		if len(l.files) >= maxLibraryFiles {
			l.closeIdle()
		}
		hf, err := ih5.Open(filepath.Join(l.root, filepath.FromSlash(name)))
		if err != nil {
			return nil, nil, err
		}
		lf = &libFile{f: hf}
		l.files[name] = lf
	}
	l.tick++
	lf.refs++
	lf.used = l.tick
	return lf.f, func() {
		l.mu.Lock()
		lf.refs--
		l.mu.Unlock()
	}, nil
}

// closeIdle closes the least recently used file nobody reads (lock held);
// when every file is in use, one more stays open for a while.
func (l *library) closeIdle() {
	var oldest string
	for name, lf := range l.files {
		if lf.refs == 0 && (oldest == "" || lf.used < l.files[oldest].used) {
			oldest = name
		}
	}
	if oldest != "" {
		l.files[oldest].f.Close()
		delete(l.files, oldest)
	}
}

// read returns the decoded bytes of a library block b (its stored shape,
// Box at the origin, in dt's byte order), into dst when it is not nil,
// adding the time H5Dread takes to *timer (nil: untimed).
func (l *library) read(ctx context.Context, b *catalog.Block, dt catalog.DType, dst []byte, timer *int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ds := b.Codecs[0].Dataset
	where := fmt.Sprintf("block %v at offset %d (dataset %s, read through the HDF5 library)", b.Box, b.Offset, ds)
	want, err := blockio.StoredBytes(b, dt)
	if err != nil {
		return nil, fmt.Errorf("reader/h5: %s: %s: stored size: %w", b.File, where, err)
	}
	if !strings.HasPrefix(ds, "/") || b.Inline() != nil || b.StoredLower() != nil || b.Order != catalog.RowMajor {
		return nil, catalog.Corrupt("hdf5", b.File, b.Offset, "%s: not a chunk of an HDF5 dataset", where)
	}
	f, release, err := l.file(b.File)
	if err != nil {
		return nil, err
	}
	defer release()
	if dst == nil {
		dst = make([]byte, want)
	} else if int64(len(dst)) != want {
		return nil, catalog.Corrupt("hdf5", b.File, b.Offset, "%s: %d bytes, want %d", where, want, len(dst))
	}
	start := time.Now()
	err = f.ReadRegion(ds, b.Box.Lower, b.Box.Count, b.StoredShape(), dst)
	took := int64(time.Since(start))
	l.nanos.Add(took)
	if timer != nil {
		atomic.AddInt64(timer, took)
	}
	if err != nil {
		return nil, fmt.Errorf("reader/h5: %s: %s: H5Dread: %w", b.File, where, err)
	}
	l.blocks.Add(1)
	l.bytes.Add(want)
	return dst, nil
}

func (l *library) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	var first error
	for name, lf := range l.files {
		if err := lf.f.Close(); err != nil && first == nil {
			first = err
		}
		delete(l.files, name)
	}
	return first
}

// ReadBlocks implements catalog.Source: library blocks are read one by one
// through HDF5 (into their destinations, when given), the rest coalesced by
// the native path.
func (d *Dataset) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	if err := r.Check(); err != nil {
		return err
	}
	var rest catalog.Reads
	var idx []int // rest.Blocks[k] is r.Blocks[idx[k]]
	for i, b := range r.Blocks {
		if !libraryBlock(b) {
			if idx != nil {
				rest.Blocks, idx = append(rest.Blocks, b), append(idx, i)
			}
			continue
		}
		if idx == nil {
			rest.Blocks, idx = append([]*catalog.Block(nil), r.Blocks[:i]...), make([]int, i, len(r.Blocks))
			for k := range idx {
				idx[k] = k
			}
		}
		data, err := d.lib.read(ctx, b, r.DType(i), r.Dst(i), r.Timer)
		if err == nil {
			err = fn(i, data)
		}
		if err != nil {
			return err
		}
	}
	if idx == nil {
		return d.source.ReadBlocks(ctx, r, fn)
	}
	if len(rest.Blocks) == 0 {
		return nil
	}
	rest.Limit, rest.Timer = r.Limit, r.Timer
	rest.DTypes = make([]catalog.DType, len(idx))
	if r.Into != nil {
		rest.Into = make([][]byte, len(idx))
	}
	for k, i := range idx {
		rest.DTypes[k] = r.DType(i)
		if r.Into != nil {
			rest.Into[k] = r.Into[i]
		}
	}
	return d.source.ReadBlocks(ctx, rest, func(k int, data []byte) error { return fn(idx[k], data) })
}

// IOStats implements catalog.Source: the native path's preads and the
// blocks read through the HDF5 library.
func (d *Dataset) IOStats() catalog.IOCounters {
	c := d.source.IOStats()
	c.LibraryBlocks, c.LibraryBytes, c.LibraryNanos = d.lib.blocks.Load(), d.lib.bytes.Load(), d.lib.nanos.Load()
	return c
}

// Close closes the files of both paths.
func (d *Dataset) Close() error {
	err := d.lib.close()
	if serr := d.source.Close(); err == nil {
		err = serr
	}
	return err
}

// filterAvailable refuses a filter relayout does not decode that the HDF5
// library cannot apply either, naming it and the way out.
func filterAvailable(file, path string, f ih5.Filter) error {
	ok, msg := ih5.FilterAvailable(f.ID)
	if ok {
		return nil
	}
	searched := strings.Join(ih5.PluginPath(), ":")
	if searched == "" {
		searched = "none"
	}
	if msg != "" {
		msg = "; HDF5 reported while searching: " + msg
	}
	return fmt.Errorf("reader/h5: %s: dataset %s: filter %s (id %d) is not available to the HDF5 library (relayout decodes deflate, shuffle, fletcher32, lzf and blosc itself and other filters through HDF5 plugins; plugin directories searched: %s%s): set HDF5_PLUGIN_PATH to the directory holding the plugin, e.g. %s: %w",
		file, path, f.Name, f.ID, searched, msg, pluginDirExample, catalog.ErrUnsupported)
}
