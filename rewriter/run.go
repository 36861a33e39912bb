package rewriter

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"relayout/catalog"
)

// Options controls Run.
type Options struct {
	Layout     string  // "contiguous", "chunked" or "" (see planner.ChooseLayout)
	ChunkShape []int64 // explicit chunk shape, or nil
	Chunks     []int64 // decomposition (chunks per dimension), or nil
	Deflate    int     // 1-9: chunks are shuffled and deflated at this level (chunked layout only); 0: raw
	Jobs       int     // slab workers per array; <= 0 means GOMAXPROCS
	MaxMem     int64   // bytes of slab buffers alive at once; <= 0 means DefaultMaxMem
	Version    string  // relayout version, recorded in files and manifest
	Progress   io.Writer
}

// DefaultMaxMem is the slab memory budget when Options.MaxMem is unset.
const DefaultMaxMem = 1 << 30

func (o Options) jobs() int {
	if o.Jobs <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Jobs
}

// maxSlabBytes caps a slab well below the memory budget: smaller slabs let
// the workers assemble one array in parallel while earlier slabs are hashed
// and written, and keep the peak RSS low. Large enough that per-slab costs
// (one write call, a scan of the block list) stay negligible.
const maxSlabBytes = 32 << 20

// budget is the size of one slab: the ordered pipeline keeps up to about
// 2*jobs slabs alive (jobs being assembled, jobs+1 waiting their turn).
func (o Options) budget() int64 {
	mem := o.MaxMem
	if mem <= 0 {
		mem = DefaultMaxMem
	}
	return min(max(mem/int64(2*o.jobs()), 1), maxSlabBytes)
}

// Run writes every variable of store, whose blocks src fetches, into one
// HDF5 file per variable in stage, then stage/relayout.json, and returns the
// manifest. Each file appears under its final name only once complete and
// synced; the manifest is written last.
func Run(ctx context.Context, store *catalog.Store, src catalog.Source, stage string, opts Options) (*catalog.Manifest, error) {
	info, err := store.Info()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	vars, err := store.Variables()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	if err := checkPlan(ctx, store, vars, opts); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = v.Name
	}
	files := FileNames(names)
	m := &catalog.Manifest{
		Tool:      "relayout",
		Version:   opts.Version,
		Input:     catalog.ManifestInput{Path: info.Path, Format: info.Format},
		Variables: []catalog.ManifestVariable{},
		Skipped:   info.Skipped,
	}
	root := rootAttrs(info, opts.Version)
	for i, v := range vars {
		start := time.Now()
		mv, st, err := writeVariable(ctx, store, src, stage, files[i], v, root, opts)
		if err != nil {
			return nil, err
		}
		m.Variables = append(m.Variables, mv)
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "%s: %d arrays, %.1f MB, %.2f s\n",
				v.Name, st.arrays, float64(st.bytes)/1e6, time.Since(start).Seconds())
		}
	}
	if err := writeManifest(stage, m); err != nil {
		return nil, err
	}
	return m, nil
}

// rootAttrs are the input's root attributes plus relayout's own, which
// replace same-named input attributes (an input that is itself a relayout
// output).
func rootAttrs(info catalog.DatasetInfo, version string) []catalog.Attr {
	var out []catalog.Attr
	for _, a := range info.Attrs {
		if a.Name != "relayout_version" && a.Name != "relayout_source" {
			out = append(out, a)
		}
	}
	return append(out,
		catalog.Attr{Name: "relayout_version", Type: "string", Scalar: true, Strings: []string{version}},
		catalog.Attr{Name: "relayout_source", Type: "string", Scalar: true, Strings: []string{info.Path}})
}

// arrayErr wraps err as "rewriter: <var> step <s>[ level <l>]: err".
func arrayErr(k catalog.Key, err error) error {
	if k.Level > 0 {
		return fmt.Errorf("rewriter: %s step %d level %d: %w", k.Var, k.Step, k.Level, err)
	}
	return fmt.Errorf("rewriter: %s step %d: %w", k.Var, k.Step, err)
}

// syncDir makes renames inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeFileAtomic writes data to dir/name through a synced temporary file.
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}
