//go:build cgo

package h5

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
)

// checkAgainstOracle compares everything the read API reports about path with
// h5py's view of the same file, and checks that the reported file offsets hold
// the bytes h5py reads.
func checkAgainstOracle(t *testing.T, path string) (*File, oracleFile) {
	t.Helper()
	want := oracle(t, path)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	raw, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	type seen struct {
		path string
		ds   bool
	}
	var got []seen
	if err := f.Walk(func(p string, ds bool) error { got = append(got, seen{p, ds}); return nil }); err != nil {
		t.Fatal(err)
	}
	var exp []seen
	for _, o := range want.Objs {
		exp = append(exp, seen{o.Path, o.Dataset})
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("Walk:\n got %v\nwant %v", got, exp)
	}

	checkAttrs(t, f, "/", want.RootAttrs)
	for _, o := range want.Objs {
		checkAttrs(t, f, o.Path, o.Attrs)
		if !o.Dataset {
			continue
		}
		info, err := f.Dataset(o.Path)
		if err != nil {
			t.Fatalf("Dataset(%s): %v", o.Path, err)
		}
		ctx := path + ":" + o.Path
		storage, err := f.StorageSize(o.Path)
		if err != nil {
			t.Fatalf("StorageSize(%s): %v", o.Path, err)
		}
		if info.Path != o.Path || !reflect.DeepEqual(info.Shape, nonNil(o.Shape)) || info.Layout != o.Layout ||
			!reflect.DeepEqual(info.Chunk, nonNilOrNil(o.Chunk)) || storage != o.Storage || info.ObjAddr != o.ObjAddr {
			t.Errorf("%s: got path %s shape %v layout %s chunk %v storage %d objaddr %d; want shape %v layout %s chunk %v storage %d objaddr %d",
				ctx, info.Path, info.Shape, info.Layout, info.Chunk, storage, info.ObjAddr, o.Shape, o.Layout, o.Chunk, o.Storage, o.ObjAddr)
		}
		wantNumeric := len(o.DType) >= 3 && strings.ContainsAny(o.DType[1:2], "iuf") && o.DType != "<f16" && o.DType != "<f2"
		if info.Numeric != wantNumeric || (wantNumeric && info.DType.NumPy() != o.DType) {
			t.Errorf("%s: got numeric %v dtype %v (%s); want %s", ctx, info.Numeric, info.DType, info.TypeDesc, o.DType)
		}
		if o.Layout == "contiguous" && info.Address != o.Offset {
			t.Errorf("%s: Address %d, want %d", ctx, info.Address, o.Offset)
		}
		if len(info.Filters) != len(o.Filters) {
			t.Errorf("%s: filters %v, want %v", ctx, info.Filters, o.Filters)
		} else {
			for i, fl := range o.Filters {
				if info.Filters[i].ID != fl.ID || !reflect.DeepEqual(info.Filters[i].Params, nonNil(fl.Params)) {
					t.Errorf("%s: filter %d = %+v, want %+v", ctx, i, info.Filters[i], fl)
				}
			}
		}
		if hex.EncodeToString(info.Fill) != o.Fill {
			t.Errorf("%s: fill %x, want %s", ctx, info.Fill, o.Fill)
		}
		if o.Raw != "" && (o.Layout == "contiguous" || o.Layout == "compact") {
			b, err := f.ReadRaw(o.Path)
			if err != nil {
				t.Errorf("%s: ReadRaw: %v", ctx, err)
			} else if hex.EncodeToString(b) != o.Raw {
				t.Errorf("%s: ReadRaw differs from h5py", ctx)
			}
			// The contiguous address must hold exactly those bytes.
			if o.Layout == "contiguous" && info.Address >= 0 && len(info.Filters) == 0 {
				buf := make([]byte, len(o.Raw)/2)
				if _, err := raw.ReadAt(buf, info.Address); err != nil && err != io.EOF {
					t.Fatal(err)
				}
				if hex.EncodeToString(buf) != o.Raw {
					t.Errorf("%s: bytes at Address %d differ from h5py's data", ctx, info.Address)
				}
			}
		}
		if o.Layout != "chunked" {
			if err := f.Chunks(o.Path, func(Chunk) error { return nil }); !errors.Is(err, catalog.ErrUnsupported) {
				t.Errorf("%s: Chunks on %s layout: %v, want ErrUnsupported", ctx, o.Layout, err)
			}
			continue
		}
		var chunks []Chunk
		if err := f.Chunks(o.Path, func(c Chunk) error { chunks = append(chunks, c); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(chunks) != len(o.Chunks) {
			t.Fatalf("%s: %d chunks, want %d", ctx, len(chunks), len(o.Chunks))
		}
		for i, c := range chunks {
			w := o.Chunks[i]
			if !reflect.DeepEqual(c.Offset, w.Offset) || c.FilterMask != w.Mask || c.Address != w.Addr || c.Size != w.Size {
				t.Errorf("%s: chunk %d = %+v, want %+v", ctx, i, c, w)
			}
			if w.SHA != "" {
				buf := make([]byte, c.Size)
				if _, err := raw.ReadAt(buf, c.Address); err != nil {
					t.Fatal(err)
				}
				if s := sha256.Sum256(buf); hex.EncodeToString(s[:]) != w.SHA {
					t.Errorf("%s: chunk %d: bytes at %d differ from h5py read_direct_chunk", ctx, i, c.Address)
				}
			}
		}
	}
	return f, want
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func nonNilOrNil[T any](v []T) []T {
	if len(v) == 0 {
		return nil
	}
	return v
}

func checkAttrs(t *testing.T, f *File, obj string, want map[string]oracleAttr) {
	t.Helper()
	got, err := f.Attrs(obj)
	if err != nil {
		t.Fatalf("Attrs(%s): %v", obj, err)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d attrs %v, want %d %v", obj, len(got), got, len(want), want)
		return
	}
	for i, a := range got {
		if i > 0 && got[i-1].Name >= a.Name {
			t.Errorf("%s: attrs not sorted: %q before %q", obj, got[i-1].Name, a.Name)
		}
		w, ok := want[a.Name]
		if !ok || w.Type != a.Type || w.Scalar != a.Scalar {
			t.Errorf("%s: attr %+v, want %+v", obj, a, w)
			continue
		}
		var vals []string
		switch {
		case a.Type == "string":
			vals = a.Strings
		case strings.HasPrefix(a.Type, "int"):
			for _, v := range a.Ints {
				vals = append(vals, strconv.FormatInt(v, 10))
			}
		case strings.HasPrefix(a.Type, "uint"):
			for _, v := range a.Uints {
				vals = append(vals, strconv.FormatUint(v, 10))
			}
		case strings.HasPrefix(a.Type, "float"):
			if len(a.Floats) != len(w.Values) {
				break
			}
			for i, v := range a.Floats {
				wv, err := strconv.ParseFloat(w.Values[i], 64)
				if err != nil {
					t.Fatal(err)
				}
				if v != wv && !(math.IsNaN(v) && math.IsNaN(wv)) {
					t.Errorf("%s: attr %s[%d] = %v, want %v", obj, a.Name, i, v, wv)
				}
			}
			continue
		}
		if !reflect.DeepEqual(nonNil(vals), nonNil(w.Values)) {
			t.Errorf("%s: attr %s = %q, want %q", obj, a.Name, vals, w.Values)
		}
	}
}

func TestRealFiles(t *testing.T) {
	d := dataDir(t)
	for _, name := range []string{
		"hdf5/openpmd-femm/example-femm-3d.h5",
		"hdf5/openpmd-femm/example-femm-thetaMode.h5",
		"hdf5/fbpic/data00000000.h5",
		"hdf5/adios2-hdf5-engine-types_np.h5",
	} {
		t.Run(filepath.Base(name), func(t *testing.T) { checkAgainstOracle(t, filepath.Join(d, name)) })
	}
}

// TestFemmSpecifics pins the facts the brief names explicitly, on top of the
// oracle comparison: the chunk geometry and the long double attribute.
func TestFemmSpecifics(t *testing.T) {
	path := filepath.Join(dataDir(t), "hdf5/openpmd-femm/example-femm-3d.h5")
	f, want := checkAgainstOracle(t, path)
	info, err := f.Dataset("/data/1/meshes/B/x")
	if err != nil {
		t.Fatal(err)
	}
	if info.Layout != "chunked" || !reflect.DeepEqual(info.Chunk, []int64{32, 16, 16}) ||
		!reflect.DeepEqual(info.Shape, []int64{47, 47, 47}) || info.DType.NumPy() != "<f8" {
		t.Errorf("B/x: %+v", info)
	}
	attrs, err := f.Attrs("/data/1/meshes/B/x")
	if err != nil {
		t.Fatal(err)
	}
	var pos *catalog.Attr
	for i := range attrs {
		if attrs[i].Name == "position" {
			pos = &attrs[i]
		}
	}
	w := want.Objs[0]
	for _, o := range want.Objs {
		if o.Path == "/data/1/meshes/B/x" {
			w = o
		}
	}
	if pos == nil || pos.Type != "float64" || len(pos.Floats) != 3 || w.Attrs["position"].Type != "float64" {
		t.Errorf("position attribute (128-bit long double): got %+v", pos)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.h5")
	if err := os.WriteFile(junk, []byte("this is not an HDF5 file at all, just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(junk)
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(fmt.Sprint(err), junk) {
		t.Errorf("Open(non-HDF5) = %v, want ErrCorrupt naming the file", err)
	}
	missing := filepath.Join(dir, "missing.h5")
	if _, err := Open(missing); !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(fmt.Sprint(err), missing) {
		t.Errorf("Open(missing) = %v, want ErrNotFound naming the file", err)
	}

	src := filepath.Join(dataDir(t), "hdf5/openpmd-femm/example-femm-3d.h5")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{len(data) / 2, len(data) - 1, 4096} {
		trunc := filepath.Join(dir, fmt.Sprintf("trunc%d.h5", n))
		if err := os.WriteFile(trunc, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(trunc)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(fmt.Sprint(err), trunc) {
			t.Errorf("Open(truncated to %d) = %v, want ErrCorrupt naming the file", n, err)
		} else {
			t.Logf("truncated to %d: %v", n, err)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	f, err := Open(filepath.Join(dataDir(t), "hdf5/openpmd-femm/example-femm-3d.h5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range []string{"/nope", "/data/nope/x", "/data/1/meshes/B"} {
		if _, err := f.Dataset(p); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Dataset(%s) = %v, want ErrNotFound", p, err)
		}
	}
	if _, err := f.Attrs("/data/2"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("Attrs(/data/2) = %v, want ErrNotFound", err)
	}
	f.Close()
	if _, err := f.Dataset("/data/1/meshes/B/x"); err == nil {
		t.Error("Dataset after Close succeeded")
	}
}

// synthScript writes a small file exercising what the real data lacks: a user
// block, filters, fill values, big-endian and odd types, compact layout,
// soft/external links and every attribute flavour.
const synthScript = `
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'w', userblock_size=512)
f.attrs['vlen'] = 'variable'
f.attrs['vlens'] = np.array(['a', 'bb', ''], dtype=h5py.string_dtype())
f.attrs['fixed'] = np.bytes_('fixed')
f.attrs.create('fixeds', np.array([b'x', b'yy'], dtype='S4'))
f.attrs['ld'] = np.array([1.5, -2.25], dtype=np.longdouble)
f.attrs['f16'] = np.float16(0.5)
f.attrs['u8'] = np.uint8(200)
f.attrs['i16be'] = np.array([-3, 4], dtype='>i2')
f.attrs['u64'] = np.uint64(2**64 - 1)
f.attrs['flag'] = True
f.attrs['cmp'] = np.array([(1, 2.0)], dtype=[('a', 'i4'), ('b', 'f8')])
f.attrs['empty'] = h5py.Empty('f8')
f.attrs['mat'] = np.arange(6, dtype='f4').reshape(2, 3)
g = f.create_group('b/nested')
g.attrs['n'] = np.int64(-5)
z = np.arange(40 * 30, dtype='<f8').reshape(40, 30)
f.create_dataset('b/gz', data=z, chunks=(16, 16), compression='gzip', shuffle=True, fletcher32=True)
f.create_dataset('b/be', data=np.arange(50, dtype='>i4'))
f.create_dataset('b/fill', shape=(100,), dtype='<u2', chunks=(10,), fillvalue=7)
f['b/fill'][15:25] = 3
f.create_dataset('b/unalloc', shape=(10,), dtype='f4')
dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
dcpl.set_layout(h5py.h5d.COMPACT)
sp = h5py.h5s.create_simple((4,))
h5py.h5d.create(f.id, b'a_compact', h5py.h5t.STD_I16LE, sp, dcpl=dcpl).write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([1, -2, 3, -4], dtype='<i2'))
f.create_dataset('c/half', data=np.ones(5, dtype='f2'))
f.create_dataset('c/ld', data=np.ones(3, dtype=np.longdouble))
f.create_dataset('c/str', data=np.array([b'ab', b'cd'], dtype='S2'))
f.create_dataset('c/vstr', data=np.array(['ab', 'cde'], dtype=h5py.string_dtype()))
f.create_dataset('c/scalar', data=np.int8(-3))
f.create_dataset('c/zero', shape=(0, 3), dtype='f8')
f['c/soft'] = h5py.SoftLink('/b')
f['c/ext'] = h5py.ExternalLink('other.h5', '/x')
f['c/hard_loop'] = f['c']
f.close()
`

func TestSyntheticFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synth.h5")
	runPython(t, synthScript, path)
	f, want := checkAgainstOracle(t, path)
	if f.base != 512 {
		t.Errorf("user block: base %d, want 512", f.base)
	}
	got := map[string]*DatasetInfo{}
	for _, o := range want.Objs {
		if o.Dataset {
			info, err := f.Dataset(o.Path)
			if err != nil {
				t.Fatal(err)
			}
			got[o.Path] = info
		}
	}
	if gz := got["/b/gz"]; gz == nil || len(gz.Filters) != 3 || gz.Filters[0].Name != "shuffle" || gz.Filters[1].Name != "deflate" || gz.Filters[2].Name != "fletcher32" {
		t.Errorf("/b/gz filters: %+v", gz)
	}
	if fl := got["/b/fill"]; fl == nil || !reflect.DeepEqual(fl.Fill, []byte{7, 0}) {
		t.Errorf("/b/fill: %+v", fl)
	}
	if u := got["/b/unalloc"]; u == nil || u.Address != -1 || u.Layout != "contiguous" {
		t.Errorf("/b/unalloc: %+v", u)
	}
	for p, desc := range map[string]string{"/c/half": "float16", "/c/ld": "float128", "/c/str": "string", "/c/vstr": "variable-length string"} {
		if i := got[p]; i == nil || i.Numeric || !strings.HasPrefix(i.TypeDesc, desc) {
			t.Errorf("%s: %+v, want non-numeric %q", p, i, desc)
		}
	}
	if _, err := f.ReadRaw("/c/vstr"); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("ReadRaw(vlen strings) = %v", err)
	}
	attrs, err := f.Attrs("/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range attrs {
		names = append(names, a.Name)
	}
	// bool (enum), compound and the null-dataspace attribute are skipped.
	if w := []string{"f16", "fixed", "fixeds", "i16be", "ld", "mat", "u64", "u8", "vlen", "vlens"}; !reflect.DeepEqual(names, w) {
		t.Errorf("root attrs %v, want %v", names, w)
	}
}
