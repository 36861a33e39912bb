package rewriter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
	"relayout/planner"
)

// difference is a mismatch found by Verify: a result, not an error.
type difference struct{ msg string }

func (d *difference) Error() string { return d.msg }

// Verify compares every element of every array of in (fetched with inSrc)
// with the same (var, step, level) of out (fetched with outSrc), and the
// digest of each out array with the manifest m. Both sides go through the
// same slab assembly as Run. It prints one line per variable of in to w:
//
//	OK  B/x  2 steps  103823 elements  sha256 ok
//	DIFF B/x step 1 level 0 at [3,4,5]: in=1.5 out=2
//
// ok is false on any difference, including arrays missing from out; err is
// for I/O errors and corrupt inputs only.
func Verify(ctx context.Context, in *catalog.Store, inSrc catalog.Source, out *catalog.Store, outSrc catalog.Source,
	m *catalog.Manifest, w io.Writer) (ok bool, err error) {
	return VerifyBudget(ctx, in, inSrc, out, outSrc, m, w, DefaultMaxMem)
}

// VerifyBudget is Verify keeping its slab copies within about maxMem bytes
// (run's --max-mem): up to 2*jobs+1 slabs are alive, each assembled twice
// (input and output) on the Go heap, which the collector may let grow to
// twice its live size; slabs are sized for that.
func VerifyBudget(ctx context.Context, in *catalog.Store, inSrc catalog.Source, out *catalog.Store, outSrc catalog.Source,
	m *catalog.Manifest, w io.Writer, maxMem int64) (ok bool, err error) {
	if maxMem <= 0 {
		maxMem = DefaultMaxMem
	}
	vars, err := in.Variables()
	if err != nil {
		return false, fmt.Errorf("rewriter: verify: %w", err)
	}
	var sums map[catalog.Key]string
	if m != nil {
		sums = map[catalog.Key]string{}
		for _, v := range m.Variables {
			for _, d := range slices.Concat(v.Datasets, v.Constants) {
				sums[catalog.Key{Var: v.Name, Step: d.Step, Level: d.Level}] = d.SHA256
			}
		}
	}
	ok = true
	for _, v := range vars {
		line, err := verifyVariable(ctx, in, inSrc, out, outSrc, sums, v.Name, maxMem)
		var diff *difference
		switch {
		case errors.As(err, &diff):
			ok = false
			line = "DIFF " + diff.msg
		case err != nil:
			return false, err
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// verifyVariable returns the OK line of a variable, a *difference, or an error.
func verifyVariable(ctx context.Context, in *catalog.Store, inSrc catalog.Source, out *catalog.Store,
	outSrc catalog.Source, sums map[catalog.Key]string, name string, maxMem int64) (string, error) {
	steps := map[int64]bool{}
	var elements int64
	unrecorded := false // a dataset of the manifest without sha256 (run --digest none)
	err := in.EachArray(ctx, name, func(a *catalog.Array) error {
		if err := verifyArray(ctx, a, inSrc, out, outSrc, sums, maxMem); err != nil {
			return err
		}
		if sums != nil && sums[a.Key()] == "" {
			unrecorded = true
		}
		steps[a.Step] = true
		elements += a.Elements()
		return nil
	})
	if err != nil {
		return "", err
	}
	sha := "sha256 ok"
	switch {
	case sums == nil:
		sha = "sha256 not checked"
	case unrecorded:
		sha = "sha256 not recorded"
	}
	return fmt.Sprintf("OK  %s  %d steps  %d elements  %s", name, len(steps), elements, sha), nil
}

func where(k catalog.Key) string {
	return fmt.Sprintf("%s step %d level %d", k.Var, k.Step, k.Level)
}

func verifyArray(ctx context.Context, a *catalog.Array, inSrc catalog.Source, out *catalog.Store,
	outSrc catalog.Source, sums map[catalog.Key]string, maxMem int64) error {
	k := a.Key()
	if err := checkArray(a); err != nil {
		return arrayErr(k, err)
	}
	o, err := out.Array(k)
	if errors.Is(err, catalog.ErrNotFound) {
		return &difference{where(k) + ": missing from output"}
	}
	if err != nil {
		return arrayErr(k, err)
	}
	if err := checkArray(o); err != nil {
		return fmt.Errorf("rewriter: verify: output %s: %w", where(k), err)
	}
	if !slices.Equal(a.Shape, o.Shape) {
		return &difference{fmt.Sprintf("%s: shape in=%v out=%v", where(k), a.Shape, o.Shape)}
	}
	if a.DType.LittleEndian() != o.DType.LittleEndian() {
		return &difference{fmt.Sprintf("%s: dtype in=%v out=%v", where(k), a.DType.LittleEndian(), o.DType.LittleEndian())}
	}
	size := a.DType.Size
	jobs := runtime.GOMAXPROCS(0)
	slab := max(min(maxMem/int64(4*(2*jobs+1)), maxSlabBytes), 1)
	slabs := planner.Slabs(a.Shape, planner.Layout{Kind: planner.Contiguous}, size, slab)
	inFill, outFill := leFill(a), leFill(o)
	// Workers assemble a slab from both sides and compare them; the digest
	// runs on a goroutine of its own in slab order, and buffers go back to
	// a free list once hashed (fresh slabs per unit kept the collector and
	// the page-fault handler busy).
	free := make(chan []byte, 4*jobs+4)
	getBuf := func(n int64) []byte {
		select {
		case b := <-free:
			if int64(cap(b)) >= n {
				return b[:n]
			}
		default:
		}
		return make([]byte, n)
	}
	putBuf := func(b []byte) {
		select {
		case free <- b:
		default:
		}
	}
	h := sha256.New()
	hashq := make(chan pairBufs, 1)
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for p := range hashq {
			h.Write(p.out)
			putBuf(p.in)
			putBuf(p.out)
		}
	}()
	inReads, outReads := newSlabReads(inSrc, a, slabs), newSlabReads(outSrc, o, slabs)
	admit := func(ctx context.Context, i int) error {
		inReads.admit(ctx, i)
		outReads.admit(ctx, i)
		return nil
	}
	type result struct {
		pairBufs
		diff int // byte offset of the first difference, -1: equal
	}
	err = orderedAdmit(ctx, jobs, len(slabs), admit, nil, func(ctx context.Context, i int) (result, error) {
		n := slabs[i].Elements() * int64(size)
		r := result{pairBufs{getBuf(n), getBuf(n)}, -1}
		err := assembleInto(ctx, nil, inSrc, a, slabs[i], inReads.of(i), inFill, r.in, true, inReads.blocks.disjoint)
		inReads.drop(i)
		if err != nil {
			return r, fmt.Errorf("input: %w", err)
		}
		err = assembleInto(ctx, nil, outSrc, o, slabs[i], outReads.of(i), outFill, r.out, true, outReads.blocks.disjoint)
		outReads.drop(i)
		if err != nil {
			return r, fmt.Errorf("output: %w", err)
		}
		if !bytes.Equal(r.in, r.out) {
			r.diff = firstDiff(r.in, r.out)
		}
		return r, nil
	}, func(i int, r result) error {
		if r.diff >= 0 {
			e := r.diff / size
			return &difference{fmt.Sprintf("%s at %s: in=%s out=%s", where(k), formatIndex(unravel(slabs[i], int64(e))),
				formatElem(r.in[e*size:], a.DType), formatElem(r.out[e*size:], o.DType))}
		}
		hashq <- r.pairBufs
		return nil
	})
	close(hashq)
	<-hashed
	var diff *difference
	if errors.As(err, &diff) {
		return diff
	}
	if err != nil {
		return arrayErr(k, err)
	}
	if sums == nil {
		return nil
	}
	want, ok := sums[k]
	if !ok {
		return &difference{where(k) + ": not in the manifest"}
	}
	if want == "" {
		return nil // run --digest none: elements compared, no digest to check
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return &difference{fmt.Sprintf("%s: sha256 of output %s, manifest says %s", where(k), got, want)}
	}
	return nil
}

// pairBufs are one slab assembled from the input and from the output.
type pairBufs struct{ in, out []byte }

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

func formatIndex(idx []int64) string {
	s := make([]string, len(idx))
	for i, v := range idx {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// VerifySeries checks series.h5 of the output directory dir against the
// manifest: every file it reads through (SeriesFiles) exists beside it, and
// every dataset of the manifest that series.h5 presents as a virtual dataset
// maps the whole same-path dataset of the variable's file. A missing source
// of a virtual dataset reads as the fill value without an error, so this is
// what makes a moved or incomplete output loud. It prints one line to w.
func VerifySeries(dir string, m *catalog.Manifest, w io.Writer) (ok bool, err error) {
	if m == nil || m.Series == "" {
		return true, nil
	}
	var bad []string
	for _, f := range m.SeriesFiles {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || !fi.Mode().IsRegular() {
			bad = append(bad, fmt.Sprintf("%s needs %s, which is missing", m.Series, f))
		}
	}
	if len(bad) > 0 {
		_, err := fmt.Fprintf(w, "DIFF %s: %s\n", m.Series, strings.Join(bad, "; "))
		return false, err
	}
	sf, err := h5.Open(filepath.Join(dir, m.Series))
	if err != nil {
		return false, fmt.Errorf("rewriter: verify: %w", err)
	}
	defer sf.Close()
	mapped := 0
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			maps, err := sf.VirtualMappings(d.Path)
			if errors.Is(err, catalog.ErrUnsupported) || errors.Is(err, catalog.ErrNotFound) {
				continue // an external link (a value, an empty array) or left out (see skipped)
			}
			if err != nil {
				return false, fmt.Errorf("rewriter: verify: %w", err)
			}
			if len(maps) != 1 || maps[0].File != v.File || maps[0].Dataset != d.Path || !maps[0].Whole {
				bad = append(bad, fmt.Sprintf("%s:%s does not map the whole %s:%s", m.Series, d.Path, v.File, d.Path))
				continue
			}
			mapped++
		}
	}
	if len(bad) > 0 {
		_, err := fmt.Fprintf(w, "DIFF %s: %s\n", m.Series, strings.Join(bad, "; "))
		return false, err
	}
	_, err = fmt.Fprintf(w, "OK  %s  %d files, %d virtual datasets\n", m.Series, len(m.SeriesFiles), mapped)
	return true, err
}
