package verify

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"relayout/catalog"
	"relayout/internal/h5"
)

// Copies: a netCDF time series file holds, beside its variable, copies of
// the coordinate and ancillary variables it needs (ManifestDataset.Var).
// The copy of an array is checked against that array's own dataset once
// that one has been compared with the input element by element: the same
// element type, shape and fill value, and the same bytes read through the
// HDF5 library, band by band; its recorded digest must be the array's.
// Equal to what equals the input, the copy equals the input.

// copyBandBytes bounds the bytes of one band read from each side.
const copyBandBytes = 4 << 20

// checkCopies checks every copy of m (after the arrays themselves passed)
// and prints a line for each file holding copies. ok is false on a
// difference.
func (r *run) checkCopies(ctx context.Context, m *catalog.Manifest, log io.Writer) (bool, error) {
	ok := true
	c := &copyCheck{run: r, own: map[string]*h5.File{}, hdrs: map[catalog.Key]*catalog.Array{}}
	defer c.close()
	for i := range m.Variables {
		mv := &m.Variables[i]
		n := 0
		var diff error
		var cf *h5.File
		for j := range mv.Datasets {
			d := &mv.Datasets[j]
			if !mv.IsCopy(d) {
				continue
			}
			n++
			if cf == nil {
				var err error
				if cf, err = h5.Open(filepath.Join(r.dir, filepath.FromSlash(mv.File))); err != nil {
					return false, fmt.Errorf("verify: %w", err)
				}
			}
			if diff == nil {
				var err error
				if diff, err = c.check(ctx, cf, mv, d); err != nil {
					cf.Close()
					return false, err
				}
			}
		}
		if cf != nil {
			cf.Close()
		}
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("OK  %s  %d coordinate and ancillary variables copied, equal to theirs", mv.File, n)
		if diff != nil {
			ok, line = false, "DIFF "+diff.Error()
		}
		if _, err := fmt.Fprintln(log, line); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// copyCheck is checkCopies' state: the files of the arrays copied and the
// input's headers, each opened or read once for every file holding a copy
// (an E3SM history stream's 414 files hold 2,500 copies of a few arrays).
type copyCheck struct {
	*run
	own  map[string]*h5.File            // by manifest file name
	hdrs map[catalog.Key]*catalog.Array // input array headers
}

func (c *copyCheck) close() {
	for _, f := range c.own {
		f.Close()
	}
}

// header is the input's array k, without its blocks.
func (c *copyCheck) header(ctx context.Context, k catalog.Key) (*catalog.Array, error) {
	if a := c.hdrs[k]; a != nil {
		return a, nil
	}
	err := c.in.EachArrayHeader(ctx, k.Var, func(a *catalog.Array) error {
		c.hdrs[a.Key()] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if c.hdrs[k] == nil {
		return nil, fmt.Errorf("verify: %s step %d level %d: %w", k.Var, k.Step, k.Level, catalog.ErrNotFound)
	}
	return c.hdrs[k], nil
}

// ownFile is the open output file name (relative to the output directory).
func (c *copyCheck) ownFile(name string) (*h5.File, error) {
	if f := c.own[name]; f != nil {
		return f, nil
	}
	f, err := h5.Open(filepath.Join(c.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	c.own[name] = f
	return f, nil
}

// check compares copy d of variable mv's file cf with the dataset of the
// array it holds. A difference is returned as diff; err is for I/O.
func (c *copyCheck) check(ctx context.Context, cf *h5.File, mv *catalog.ManifestVariable, d *catalog.ManifestDataset) (diff, err error) {
	r := c.run
	k := mv.Key(d)
	own, found := r.out[k]
	if !found {
		return difff("%s:%s is a copy of %s step %d level %d, which the output does not hold", mv.File, d.Path, k.Var, k.Step, k.Level), nil
	}
	a, err := c.header(ctx, k)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(d.Shape, a.Shape) {
		return difff("%s:%s (copy of %s): shape %v, input %v", mv.File, d.Path, k.Var, d.Shape, a.Shape), nil
	}
	if kind := r.digestKind; kind != catalog.NoDigest && d.Sum(kind) != "" {
		want := own.d.Sum(kind)
		if s, ok := r.digests[k]; ok {
			want = s
		}
		if d.Sum(kind) != want {
			return difff("%s:%s (copy of %s): %s %s, the array's is %s", mv.File, d.Path, k.Var, kind, d.Sum(kind), want), nil
		}
	}
	of, err := c.ownFile(own.v.File)
	if err != nil {
		return nil, err
	}
	ci, err := cf.Dataset(d.Path)
	if err != nil {
		return difff("%s:%s (copy of %s): %v", mv.File, d.Path, k.Var, err), nil
	}
	oi, err := of.Dataset(own.d.Path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	dt := a.DType.LittleEndian()
	if !slices.Equal(ci.Unlimited, oi.Unlimited) {
		return difff("%s:%s (copy of %s): unlimited along %v, its dataset %s:%s along %v", mv.File, d.Path, k.Var,
			axesOf(ci.Unlimited), own.v.File, own.d.Path, axesOf(oi.Unlimited)), nil
	}
	if ci.DType != oi.DType || ci.DType != dt || !slices.Equal(ci.Shape, oi.Shape) || !bytes.Equal(ci.Fill, oi.Fill) {
		return difff("%s:%s (copy of %s): %s %v fill %s, its dataset %s:%s %s %v fill %s", mv.File, d.Path, k.Var,
			ci.DType, ci.Shape, hex.EncodeToString(ci.Fill), own.v.File, own.d.Path, oi.DType, oi.Shape, hex.EncodeToString(oi.Fill)), nil
	}
	if a.Elements() == 0 {
		return nil, nil
	}
	cr, err := cf.OpenSlabReader(d.Path, dt, 0)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer cr.Close()
	or, err := of.OpenSlabReader(own.d.Path, dt, 0)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer or.Close()
	// Bands of whole rows along dimension 0 (a scalar: the element).
	shape := a.Shape
	rowBytes := int64(dt.Size)
	for _, n := range shape[min(1, len(shape)):] {
		rowBytes *= n
	}
	rows := int64(1)
	if len(shape) > 0 {
		rows = max(1, min(shape[0], copyBandBytes/max(rowBytes, 1)))
	}
	lower, count := make([]int64, len(shape)), slices.Clone(shape)
	var cb, ob []byte
	for lo := int64(0); len(shape) == 0 || lo < shape[0]; lo += rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := int64(1)
		if len(shape) > 0 {
			lower[0], count[0] = lo, min(rows, shape[0]-lo)
			n = count[0]
		}
		if need := int(n * rowBytes); cap(cb) < need {
			cb, ob = make([]byte, need), make([]byte, need)
		} else {
			cb, ob = cb[:need], ob[:need]
		}
		if err := cr.Read(lower, count, cb); err != nil {
			return nil, fmt.Errorf("verify: %s:%s: %w", mv.File, d.Path, err)
		}
		if err := or.Read(lower, count, ob); err != nil {
			return nil, fmt.Errorf("verify: %s:%s: %w", own.v.File, own.d.Path, err)
		}
		r.stats.outBytes.Add(2 * int64(len(cb)))
		r.stats.outReads.Add(2)
		if i := firstByteDiff(cb, ob); i >= 0 {
			e := int64(i / dt.Size)
			return difff("%s:%s (copy of %s) at element %d of rows %d..%d: %s, its dataset %s:%s has %s", mv.File, d.Path, k.Var,
				e, lower[0], lower[0]+n, hex.EncodeToString(cb[e*int64(dt.Size):(e+1)*int64(dt.Size)]), own.v.File, own.d.Path,
				hex.EncodeToString(ob[e*int64(dt.Size):(e+1)*int64(dt.Size)])), nil
		}
		if len(shape) == 0 {
			break
		}
	}
	return nil, nil
}

// firstByteDiff is the index of the first byte where a and b (of one
// length) differ, or -1.
func firstByteDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
