package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

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
//	      │  (at most Limits.VerifySlots in flight, each VerifyShare)
//	      ▼
//	 array ─► bands: HDF5 read ─► compare (Jobs goroutines) ─► sha256
//	      │
//	      ▼
//	 one line per variable, printed in catalog order once its arrays are done
//
// A variable whose array differs starts none of its later arrays; the
// difference reported is that of its first array (in step, level order)
// that differs, whatever finished first.

// The arrays verified at once (r.lim.VerifySlots) and each one's share of
// the budget (VerifyShare) are package limits': at most
// limits.VerifyMaxInFlight, fewer while a share would fall below
// limits.VerifyMinShare (a small --max-mem keeps its bands, one array at a
// time).

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
	slots, share := r.lim.VerifySlots, r.lim.VerifyShare
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

	// Every array's header first: an array's joint group (joint.go) holds
	// the arrays of later variables with its step, level and shape.
	runs := make([]*varRun, 0, len(vars))
	hdrs := make([][]*catalog.Array, len(vars))
	byKey := map[string][]pos{}
	for vi, vs := range vars {
		v := &varRun{name: vs.Name, done: make(chan struct{}), files: map[string]*h5.File{}, steps: map[int64]bool{}}
		runs = append(runs, v)
		queue <- v
		if err := r.in.EachArrayHeader(ctx, vs.Name, func(a *catalog.Array) error {
			if key := jointKey(a); key != "" {
				byKey[key] = append(byKey[key], pos{vi, len(hdrs[vi])})
			}
			hdrs[vi] = append(hdrs[vi], a)
			return nil
		}); err != nil {
			fail(err)
			break
		}
	}
	taken := map[pos]bool{}
launch:
	for vi, v := range runs {
		for seq, h := range hdrs[vi] {
			if ctx.Err() != nil {
				break launch
			}
			if v.failed.Load() {
				break // a difference: none of its later arrays
			}
			if taken[pos{vi, seq}] {
				continue
			}
			if _, found := r.out[h.Key()]; !found {
				v.setDiff(seq, difff("%s: missing from output (not in the manifest)", where(h.Key())))
				break
			}
			group := []pos{{vi, seq}}
			if key := jointKey(h); key != "" {
				rows := rowBytes(h)
				for _, p := range byKey[key] {
					if len(group) == maxJoint {
						break
					}
					o := hdrs[p.vi][p.seq]
					if _, found := r.out[o.Key()]; p.vi <= vi || taken[p] || !found || runs[p.vi].failed.Load() {
						continue
					}
					if 4*(rows+rowBytes(o)) > r.lim.VerifyJointRows {
						break // one row of every member, its buffers and stage: a tenth of the budget
					}
					rows += rowBytes(o)
					group = append(group, p)
				}
			}
			// A group takes one slot per member, at most all: only this
			// goroutine acquires slots, so groups cannot deadlock.
			tokens := min(len(group), slots)
			for range tokens {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					break launch
				}
			}
			for _, p := range group {
				taken[p] = true
				runs[p.vi].wg.Add(1)
			}
			go func() {
				defer func() {
					for range tokens {
						<-sem
					}
				}()
				r.group(ctx, runs, hdrs, group, share*int64(tokens), fail)
			}()
		}
	}
	for _, v := range runs {
		go func() { v.wg.Wait(); close(v.done) }()
	}
	close(queue)
	<-printed
	if fatal != nil {
		return false, fatal
	}
	return ok, nil
}

// pos is an array: the variable's index and the array's in it.
type pos struct{ vi, seq int }

// rowBytes is the bytes of one index of dimension 0 of array header a.
func rowBytes(a *catalog.Array) int64 {
	n := int64(a.DType.Size)
	for _, c := range a.Shape[1:] {
		n *= c
	}
	return n
}

// group verifies the arrays of a joint group (a single array: a group of
// one) within share bytes; each array's outcome goes to its variable.
func (r *run) group(ctx context.Context, runs []*varRun, hdrs [][]*catalog.Array, group []pos, share int64, fail func(error)) {
	reported := map[*catalog.Array]bool{} // a member compared again exactly is another *member
	outcome := func(v *varRun, seq int, a *catalog.Array, ref outRef, err error) {
		defer v.wg.Done()
		var diff *difference
		switch {
		case errors.As(err, &diff):
			v.setDiff(seq, err)
		case err != nil:
			fail(err)
		default:
			v.record(a, ref, r.digestKind)
		}
	}
	// The members' block lists decoded up to Jobs at once (about half a
	// microsecond a block): all are needed before the group's first band.
	arrays, errs := make([]*catalog.Array, len(group)), make([]error, len(group))
	var eg errgroup.Group
	eg.SetLimit(r.opts.Jobs)
	for i, p := range group {
		if !runs[p.vi].failed.Load() {
			eg.Go(func() error {
				arrays[i], errs[i] = r.in.Array(hdrs[p.vi][p.seq].Key())
				return nil
			})
		}
	}
	eg.Wait()
	var ms []*member
	for i, p := range group {
		v := runs[p.vi]
		k := hdrs[p.vi][p.seq].Key()
		ref := r.out[k]
		if v.failed.Load() {
			v.wg.Done()
			continue
		}
		a, err := arrays[i], errs[i] // loaded: failed is never cleared
		arrays[i] = nil
		if err != nil {
			outcome(v, p.seq, nil, ref, fmt.Errorf("verify: %w", err))
			continue
		}
		m, err := r.member(ctx, v, a, ref)
		if m == nil || err != nil {
			outcome(v, p.seq, a, ref, err)
			continue
		}
		m.v, m.seq = v, p.seq
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return
	}
	report := func(m *member, err error) {
		reported[m.a] = true
		outcome(m.v, m.seq, m.a, m.ref, err)
	}
	// The checksum path first (quick.go); what it cannot tell, exactly.
	exact, err := r.quick(ctx, ms, share, report)
	if err == nil && len(exact) > 0 {
		err = r.jointData(ctx, exact, share, report)
	}
	for _, m := range ms {
		if !reported[m.a] {
			outcome(m.v, m.seq, m.a, m.ref, cmp.Or(err, context.Canceled))
		}
	}
}

// member checks array a of variable v and opens its output dataset: nil
// (and no error) when nothing is left to compare.
func (r *run) member(ctx context.Context, v *varRun, a *catalog.Array, ref outRef) (*member, error) {
	f, err := r.file(v, ref.v)
	if err != nil {
		return nil, err
	}
	if done, err := r.checks(ctx, a, ref, f); done || err != nil {
		return nil, err
	}
	m, err := r.openMember(a, ref, f)
	switch {
	case m == nil || err != nil:
		return m, err
	case ref.d.DigestOf == catalog.DigestStoredChunks:
		return nil, r.sparse(ctx, m) // over its chunks, not its extent (sparse.go)
	case ref.d.DigestOf != "":
		return nil, fmt.Errorf("verify: manifest: %s: digest_of %q: %w", where(a.Key()), ref.d.DigestOf, catalog.ErrCorrupt)
	}
	return m, nil
}

// record counts array a, verified, in what its variable's OK line says
// (kind: the run's digest, whose recorded value it looks for).
func (v *varRun) record(a *catalog.Array, ref outRef, kind catalog.Digest) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if ref.d.Sum(kind) == "" {
		v.unrecorded = true
	}
	v.steps[a.Step] = true
	v.elements += a.Elements()
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
