package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"

	"relayout/catalog"
	"relayout/internal/h5"
)

// Arrays in flight. Several arrays (of one variable or of the next ones)
// are verified at once, each with its share of the budget, so that the
// HDF5 reads of one (one call at a time in the process: the library's
// global lock) overlap the input reads, comparisons and sha256 of the
// others, and that the digests of several arrays are computed on several
// cores (one array's sha256 is sequential):
//
//	variables in catalog order ──► arrays in step, level order
//	      │  (at most slots() in flight, each MaxMem/slots())
//	      ▼
//	 array ─► bands: HDF5 read ─► compare (Jobs goroutines) ─► sha256
//	      │
//	      ▼
//	 one line per variable, printed in catalog order once its arrays are done
//
// A variable whose array differs starts none of its later arrays; the
// difference reported is that of its first array (in step, level order)
// that differs, whatever finished first.

// maxInFlight bounds the arrays verified at once.
const maxInFlight = 4

// minShare is the least budget an array in flight gets: below it, fewer
// arrays run at once (a small --max-mem keeps its bands, one array at a
// time).
const minShare = 32 << 20

// slots is the number of arrays verified at once.
func (r *run) slots() int {
	k := min(r.opts.Jobs, maxInFlight)
	for k > 1 && r.opts.MaxMem/int64(k) < minShare {
		k--
	}
	return max(k, 1)
}

// varRun is one variable being verified.
type varRun struct {
	name string
	wg   sync.WaitGroup // its arrays in flight
	done chan struct{}  // closed once all its arrays are done

	mu         sync.Mutex
	files      map[string]*h5.File
	diff       error // the difference of the array with the lowest seq
	diffSeq    int
	steps      map[int64]bool
	elements   int64
	unrecorded bool
	failed     atomic.Bool // a difference: start no more of its arrays
}

func (v *varRun) setDiff(seq int, err error) {
	v.mu.Lock()
	if v.diff == nil || seq < v.diffSeq {
		v.diff, v.diffSeq = err, seq
	}
	v.mu.Unlock()
	v.failed.Store(true)
}

func (v *varRun) closeFiles() {
	for _, f := range v.files {
		f.Close()
	}
}

// errStop ends a variable's EachArray after a difference.
var errStop = errors.New("stop")

// variables verifies every array of vars, printing one line per variable
// to log: ok is false on any difference.
func (r *run) variables(ctx context.Context, vars []catalog.VarSummary, log io.Writer) (bool, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var fatalOnce sync.Once
	var fatal error
	fail := func(err error) {
		fatalOnce.Do(func() { fatal = err })
		cancel(err)
	}
	slots := r.slots()
	share := r.opts.MaxMem / int64(slots)
	sem := make(chan struct{}, slots)

	// The printer: one line per variable, in order.
	queue := make(chan *varRun, len(vars))
	ok := true
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for v := range queue {
			<-v.done
			v.closeFiles()
			if ctx.Err() != nil {
				continue
			}
			var line string
			var diff *difference
			switch {
			case v.diff == nil:
				sha := r.digestKind.String() + " ok"
				switch {
				case r.digestKind == catalog.NoDigest:
					sha = "no digest (--digest none)"
				case v.unrecorded && r.opts.FillDigests:
					sha = r.digestKind.String() + " computed"
				case v.unrecorded:
					sha = r.digestKind.String() + " not recorded"
				}
				line = fmt.Sprintf("OK  %s  %d steps  %d elements  %s", v.name, len(v.steps), v.elements, sha)
			case errors.As(v.diff, &diff):
				ok = false
				line = "DIFF " + diff.msg
			default:
				fail(v.diff)
				continue
			}
			if _, err := fmt.Fprintln(log, line); err != nil {
				fail(err)
			}
		}
	}()

	for _, vs := range vars {
		if ctx.Err() != nil {
			break
		}
		v := &varRun{name: vs.Name, done: make(chan struct{}), files: map[string]*h5.File{}, steps: map[int64]bool{}}
		queue <- v
		seq := 0
		err := r.in.EachArray(ctx, vs.Name, func(a *catalog.Array) error {
			if v.failed.Load() {
				return errStop
			}
			s := seq
			seq++
			k := a.Key()
			ref, found := r.out[k]
			if !found {
				v.setDiff(s, difff("%s: missing from output (not in the manifest)", where(k)))
				return errStop
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			v.wg.Add(1)
			go func() {
				defer v.wg.Done()
				defer func() { <-sem }()
				if v.failed.Load() {
					return
				}
				err := r.arrayOf(ctx, v, a, ref, share)
				var diff *difference
				switch {
				case errors.As(err, &diff):
					v.setDiff(s, err)
				case err != nil:
					fail(err)
				}
			}()
			return nil
		})
		go func() { v.wg.Wait(); close(v.done) }()
		if err != nil && !errors.Is(err, errStop) {
			fail(err)
		}
	}
	close(queue)
	<-printed
	if fatal != nil {
		return false, fatal
	}
	return ok, nil
}

// arrayOf verifies array a of variable v and records what the OK line says.
func (r *run) arrayOf(ctx context.Context, v *varRun, a *catalog.Array, ref outRef, share int64) error {
	f, err := r.file(v, ref.v)
	if err != nil {
		return err
	}
	if err := r.array(ctx, a, ref, f, share); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if ref.d.Sum(r.digestKind) == "" {
		v.unrecorded = true
	}
	v.steps[a.Step] = true
	v.elements += a.Elements()
	return nil
}

// file opens the output file of manifest variable mv once per variable.
func (r *run) file(v *varRun, mv *catalog.ManifestVariable) (*h5.File, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f, ok := v.files[mv.File]; ok {
		return f, nil
	}
	if !filepath.IsLocal(filepath.FromSlash(mv.File)) {
		return nil, fmt.Errorf("verify: manifest: variable %q: file %q is not inside %s: %w", mv.Name, mv.File, r.dir, catalog.ErrCorrupt)
	}
	p := filepath.Join(r.dir, filepath.FromSlash(mv.File))
	f, err := h5.Open(p)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, difff("%s: output file %s is missing", mv.Name, p)
	}
	if err != nil {
		return nil, fmt.Errorf("verify: output: %w", err)
	}
	v.files[mv.File] = f
	return f, nil
}
