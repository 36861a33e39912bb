//go:build !cgo

package h5

// Without cgo there is no HDF5: every name of the package exists with the
// same signature, and whatever would call the library fails with an error
// wrapping catalog.ErrUnsupported ("relayout was built without cgo: HDF5
// unavailable"). So every package of the module builds with CGO_ENABLED=0;
// a binary built so catalogs and plans non-HDF5 inputs and fails at the
// first call here (any HDF5 input, and every output). A File, Writer,
// OutDataset or SlabReader is never returned; their methods exist only to
// be compiled against.

import (
	"fmt"

	"relayout/catalog"
)

// noHDF5 is the error of every call that needs the library: what about
// names the file or object asked for.
func noHDF5(what string) error {
	return fmt.Errorf("h5: %s: relayout was built without cgo: HDF5 unavailable (rebuild with CGO_ENABLED=1 and HDF5's headers and library: make build): %w", what, catalog.ErrUnsupported)
}

// File is an HDF5 file opened read-only (never, without cgo).
type File struct{ path string }

// Open fails: HDF5 is unavailable without cgo.
func Open(path string) (*File, error) { return nil, noHDF5(path) }

func (f *File) Path() string { return f.path }
func (f *File) Close() error { return nil }
func (f *File) Walk(fn func(path string, isDataset bool) error) error {
	return noHDF5(f.path)
}
func (f *File) Attrs(obj string) ([]catalog.Attr, error) { return nil, noHDF5(f.path + ": " + obj) }
func (f *File) Dataset(path string) (*DatasetInfo, error) {
	return nil, noHDF5(f.path + ": " + path)
}
func (f *File) DimensionNames(path string) ([]string, error) {
	return nil, noHDF5(f.path + ": " + path)
}
func (f *File) Chunks(path string, fn func(Chunk) error) error { return noHDF5(f.path + ": " + path) }
func (f *File) StorageSize(path string) (int64, error)         { return 0, noHDF5(f.path + ": " + path) }
func (f *File) ReadRaw(path string) ([]byte, error)            { return nil, noHDF5(f.path + ": " + path) }
func (f *File) IntCompound(obj, attr string) (names []string, rows [][]int64, err error) {
	return nil, nil, noHDF5(f.path + ": " + obj)
}
func (f *File) ReadRegion(path string, lower, count, stored []int64, dst []byte) error {
	return noHDF5(f.path + ": " + path)
}
func (f *File) ReadHyperslab(path string, lower, count []int64, dt catalog.DType, dst []byte) error {
	return noHDF5(f.path + ": " + path)
}
func (f *File) OpenSlabReader(path string, dt catalog.DType, cacheBytes int64) (*SlabReader, error) {
	return nil, noHDF5(f.path + ": " + path)
}
func (f *File) VirtualMappings(path string) ([]VirtualMapping, error) {
	return nil, noHDF5(f.path + ": " + path)
}

// SlabReader reads hyperslabs of one dataset (never, without cgo).
type SlabReader struct{}

func (r *SlabReader) Shape() []int64                              { return nil }
func (r *SlabReader) Read(lower, count []int64, dst []byte) error { return noHDF5("slab reader") }
func (r *SlabReader) Close() error                                { return nil }

// FilterAvailable reports every filter unavailable without cgo.
func FilterAvailable(id int) (ok bool, msg string) {
	return false, noHDF5(fmt.Sprintf("filter %d", id)).Error()
}

// PluginPath is empty without cgo.
func PluginPath() []string { return nil }

// Writer creates one HDF5 output file (never, without cgo).
type Writer struct{ path string }

// Create, CreateWith, OpenRW and OpenRWWith fail: HDF5 is unavailable
// without cgo.
func Create(path string) (*Writer, error)                         { return nil, noHDF5(path) }
func CreateWith(path string, o CreateOptions) (*Writer, error)    { return nil, noHDF5(path) }
func OpenRW(path string) (*Writer, error)                         { return nil, noHDF5(path) }
func OpenRWWith(path string, o CreateOptions) (*Writer, error)    { return nil, noHDF5(path) }
func (w *Writer) Close() error                                    { return nil }
func (w *Writer) SetAttrs(obj string, attrs []catalog.Attr) error { return noHDF5(w.path + ": " + obj) }
func (w *Writer) CreateDataset(path string, spec DatasetSpec) (*OutDataset, error) {
	return nil, noHDF5(w.path + ": " + path)
}
func (w *Writer) OpenChunked(path string, spec DatasetSpec) (*OutDataset, error) {
	return nil, noHDF5(w.path + ": " + path)
}
func (w *Writer) CreateVirtual(path string, spec DatasetSpec, srcs []VirtualSource) error {
	return noHDF5(w.path + ": " + path)
}
func (w *Writer) ExternalLink(link, target, obj string) error { return noHDF5(w.path + ": " + link) }
func (w *Writer) AttachScale(dset string, dim int, scale, name string) error {
	return noHDF5(w.path + ": " + dset)
}
func (w *Writer) MakeScale(path, name string) error { return noHDF5(w.path + ": " + path) }

// OutDataset is a dataset being written (never, without cgo).
type OutDataset struct{ path string }

func (d *OutDataset) Address() int64                               { return -1 }
func (d *OutDataset) ObjAddr() uint64                              { return 0 }
func (d *OutDataset) WriteChunk(offset []int64, data []byte) error { return noHDF5(d.path) }
func (d *OutDataset) Close() error                                 { return nil }
