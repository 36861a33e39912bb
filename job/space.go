package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"relayout/catalog"
	"relayout/planner"
)

// DiskFullError is a write that failed for want of space (ENOSPC, EDQUOT,
// SQLite's "database or disk is full"), or a run refused up front because
// OUT's file system cannot hold the output: it names the directory and the
// way out. It maps to exit 1 (may succeed later).
type DiskFullError struct {
	err        error
	dir        string
	need, free int64 // need 0: unknown
	rerun      string
}

func (e *DiskFullError) Error() string {
	if e.need > e.free {
		return fmt.Sprintf("%v\nrelayout: %s has %d bytes (%s) free, the output needs about %d (%s): free %d bytes (%s) in %s, then %s",
			e.err, e.dir, e.free, HumanBytes(e.free), e.need, HumanBytes(e.need), e.need-e.free, HumanBytes(e.need-e.free), e.dir, e.rerun)
	}
	return fmt.Sprintf("%v\nrelayout: the file system of %s is full (%d bytes, %s, free): free space in %s, then %s",
		e.err, e.dir, e.free, HumanBytes(e.free), e.dir, e.rerun)
}

func (e *DiskFullError) Unwrap() error { return e.err }

// isDiskFull reports whether err is a write that ran out of space. HDF5's
// messages keep only the text of errno, SQLite its own code 13.
func isDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "no space left on device") || strings.Contains(s, "disk is full") ||
		strings.Contains(s, "disk quota exceeded")
}

// withDiskHint turns a disk-full err of a job writing into out into a
// DiskFullError naming out's directory, its free space and need (0:
// unknown); other errors pass unchanged.
func withDiskHint(err error, out string, need int64, rerun string) error {
	var de *DiskFullError
	if !isDiskFull(err) || errors.As(err, &de) {
		return err
	}
	dir := existingDir(out)
	free, _ := freeBytes(dir)
	return &DiskFullError{err: err, dir: dir, need: need, free: free, rerun: rerun}
}

// checkSpace refuses, before anything is written, an output of need bytes
// that OUT's file system cannot hold.
func checkSpace(out string, need int64, rerun string) error {
	if need <= 0 {
		return nil
	}
	dir := existingDir(out)
	free, err := freeBytes(dir)
	if err != nil || free >= need {
		return nil // unknown: the writes will tell
	}
	return &DiskFullError{err: fmt.Errorf("run: %s: not enough space for the output", out), dir: dir, need: need, free: free, rerun: rerun}
}

// contiguousBytes is the size of an output written contiguously: every
// array's logical bytes (contiguous datasets are allocated whole), but for
// a refined AMR level only what its boxes cover (always chunked sparsely),
// and, unless fill (--fill: holes written dense), for a sparse array
// (planner's sparse.go: a netCDF-4 variable of 2^40 elements with one chunk
// written) only its touched chunks. An ordinary partly covered array's
// holes are counted although its output leaves them unallocated (an upper
// bound: the planner's chunk shape is not known per array here). A
// variable's blocks are loaded only when it is large enough to hold a
// sparse array (planner.SparseMinBytes).
func contiguousBytes(ctx context.Context, store *catalog.Store, vars []catalog.VarSummary, fill bool) (int64, error) {
	var n int64
	for _, v := range vars {
		b := v.Bytes - v.ConstantBytes - v.HoleBytes // constant records are attributes; sparse AMR levels store their boxes
		if !fill && b >= planner.SparseMinBytes {
			err := store.EachArray(ctx, v.Name, func(a *catalog.Array) error {
				if stored, ok := planner.SparseBytes(a); ok && !a.Constant && a.Level == 0 {
					b -= a.Bytes() - stored
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
		n += b
	}
	return n, nil
}

func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// existingDir is the longest existing directory prefix of p.
func existingDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	for cur := abs; ; cur = filepath.Dir(cur) {
		var st unix.Stat_t
		if unix.Stat(cur, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return cur
		}
		if cur == filepath.Dir(cur) {
			return cur
		}
	}
}
