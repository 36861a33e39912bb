package rewriter

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/internal/limits"
	"relayout/planner"
)

// Options controls Prepare (and an in-memory job's RewriteShard).
type Options struct {
	Layout     string  // "contiguous", "chunked" or "" (see planner.ChooseLayout)
	ChunkShape []int64 // explicit chunk shape, or nil
	Chunks     []int64 // decomposition (chunks per dimension), or nil
	Deflate    int     // 1-9: chunks are shuffled and deflated at this level (chunked layout only); 0: raw
	Jobs       int     // slab workers per array; <= 0 means GOMAXPROCS
	MaxMem     int64   // bytes of slab buffers alive at once; <= 0 means limits.DefaultMaxMem
	Version    string  // relayout version, recorded in files and manifest
	// Digest is the algorithm of the manifest's digests (the zero value:
	// sha256) and, in a journaled job, of its units' digests; NoDigest
	// leaves them empty instead of hashing the arrays (the verify step still
	// compares every element).
	Digest catalog.Digest
	// NetCDF: give every dimension a coordinate variable (an HDF5 dimension
	// scale) so that netCDF-4 readers and xarray see named dimensions. Off
	// by default: an attached scale writes a DIMENSION_LIST attribute of
	// object references, which openPMD-api (0.16) cannot read, and it then
	// skips the whole record component.
	NetCDF bool
	// Progress receives the notes a user must see: a layout changed for an
	// array (a refined level's, a partly covered array's), striping not
	// applied. Nil: none.
	Progress io.Writer
	// Verbose receives the figures of each variable as an in-memory job
	// finishes its file ("E/x: 2 arrays, 4.0 MiB, 0.03 s"): relayout run -v.
	// Nil: none.
	Verbose io.Writer
	// Monitor, when set, follows the run (progress displays poll it); an in-memory Prepare
	// makes one otherwise. Its I/O profile goes into Manifest.IO.
	Monitor *Monitor

	// Limits are the sizes derived from MaxMem and Jobs (limits.For, with
	// a sharded job's unit size as Limits.UnitCap): the zero value is
	// computed from them by Prepare and RewriteShard (tests set some).
	Limits limits.Limits

	// LayoutFor, when set, chooses each array's layout instead of Layout,
	// ChunkShape and Chunks (e.g. planner.LayoutFor with the auto layout); the
	// result is checked like a chunk shape given by the user.
	LayoutFor func(a *catalog.Array) (planner.Layout, error)
	// Merge configures the merged layout (merged.go).
	Merge MergeOptions

	// FS is the file system of the output (fsinfo.Detect of OUT); the zero
	// value is treated as a local file system: nothing attempted.
	FS fsinfo.Info
	// Storage holds the user's striping and alignment overrides.
	Storage fsinfo.Override
	// Fill (--fill) keeps a partly covered array dense when its layout is
	// contiguous, holes written as the fill value; without it the array is
	// chunked and its holes cost nothing (planner.HoleLayout).
	Fill bool
	// NoViews (--no-views): no ParaView views (views.go).
	NoViews bool

	// unlimited names the input's unlimited dimensions when the output is
	// netCDF (catalog.DatasetInfo.Unlimited, set by Prepare): arrays over
	// them are chunked and extendible along them (recordLayout).
	unlimited []string

	// SyncEarly (an in-memory job): fdatasync each file in the background
	// while it is written (earlySync), for a run with nothing after its
	// rewrite but the sync of its files (no verification to hide it).
	SyncEarly bool
}

// RemoveTemps removes the temporary files a failed in-memory job left in
// its stage: no partial file stays, and none under a final
// name. A journaled job keeps them for its resume.
func RemoveTemps(stage string) {
	ents, _ := os.ReadDir(stage)
	for _, e := range ents {
		if n := e.Name(); n == seriesName || isView(n) || strings.HasPrefix(n, ".") && (strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".join")) {
			os.Remove(filepath.Join(stage, n))
		}
	}
}

// arrayErr wraps err as "rewriter: <var> step <s>[ level <l>]: err".
func arrayErr(k catalog.Key, err error) error {
	if k.Level > 0 {
		return fmt.Errorf("rewriter: %s step %d level %d: %w", k.Var, k.Step, k.Level, err)
	}
	return fmt.Errorf("rewriter: %s step %d: %w", k.Var, k.Step, err)
}
