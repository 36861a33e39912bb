package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"relayout/catalog"
	"relayout/reader"
)

// workDir is OUT's work directory, OUT/.relayout (see doc.go).
func workDir(out string) string { return filepath.Join(out, ".relayout") }

// settleOut is the first step, under OUT's lock, of every command that
// writes OUT (run, run --resume, plan -o): it finishes a commit that was
// interrupted (rollForward), then, when OUT holds a finished
// output: with force, takes it apart so that this job replaces it (the old
// manifest first, uncommit, and the old job); otherwise reports
// done when that output was made with the same options from the same input
// files (sizes and modification times), and refuses (exit 2) naming the
// difference when not. sig is this command's job signature, in the input
// path inAbs; "" (plan -o) takes any finished output as done.
func settleOut(inAbs, out, sig string, force bool, logw io.Writer) (done bool, err error) {
	work := workDir(out)
	rolled, err := rollForward(work, out)
	if err != nil {
		return false, err
	}
	if rolled {
		fmt.Fprintf(logw, "%s: finished the commit a killed relayout had begun\n", out)
	}
	if !committed(work, out) {
		return false, nil
	}
	if force {
		if err := uncommit(work, out); err != nil {
			return false, err
		}
		if err := os.Remove(filepath.Join(work, JobFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return false, nil
	}
	if sig == "" {
		fmt.Fprintf(logw, "%s: done (committed already; nothing to do)\n", out)
		return true, nil
	}
	rec, _, err := readCommitRecord(work)
	if err != nil {
		return false, Usagef("%s holds a finished output without a readable commit record (%v): use --force to replace it", out, err)
	}
	if d := signatureDiff(rec.Signature, sig); d != "" {
		return false, Usagef("%s holds an output made with other options or input (%s): rerun with those, or use --force to replace it", out, d)
	}
	now, err := inputFiles(inAbs)
	if err != nil {
		return false, err
	}
	if d := inputsDiffer(rec.Inputs, now); d != "" {
		return false, Usagef("%s was made from input files that have changed since (%s): use --force to rewrite it", out, d)
	}
	fmt.Fprintf(logw, "%s: done (committed already with the same options and input files; nothing to do)\n", out)
	return true, nil
}

// lockOut takes OUT's exclusive lock (plan -o, commit, run), explaining a
// stale one left by a killed job.
func lockOut(out, cmd string, logw io.Writer) (*Lock, error) {
	l, err := lockExclusive(filepath.Join(workDir(out), "lock"), cmd)
	if err != nil {
		return nil, err
	}
	if msg := l.StaleMessage(); msg != "" {
		fmt.Fprintln(logw, "relayout:", msg)
	}
	return l, nil
}

// existingJob returns OUT's job when one exists: nil when none; an error
// when it was planned with other options (unless force: then nil, and the
// caller plans again).
func existingJob(out string, spec Spec, force bool) (*Job, error) {
	job, err := LoadJob(workDir(out))
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		if force {
			return nil, nil
		}
		return nil, err
	}
	if d := jobDiff(job.Signature, spec.Signature()); d != "" {
		if force {
			return nil, nil
		}
		return nil, Usagef("%s holds a job planned with other options or input (%s); rerun with the same options, or use --force to plan it again",
			out, d)
	}
	return job, nil
}

// checkOutput refuses an OUT inside the input (or equal to the input's own
// directory) and a non-empty OUT without force, unless OUT holds a
// relayout output, a commit of one in progress or a prepared job
// (settleOut and checkEmpty decide those under OUT's lock).
func checkOutput(in, out string, force bool) error {
	in = reader.InputPath(in)
	inAbs, err := RealPath(in)
	if err != nil {
		return fmt.Errorf("run: %s: %w", in, catalog.ErrNotFound)
	}
	outAbs, err := RealPath(out)
	if err != nil {
		return Usagef("run: -o %s: %v", out, err)
	}
	st, err := os.Stat(inAbs)
	if err != nil {
		// A pattern selecting a stream of history files: OUT must not be
		// one of them, nor the directory of one.
		matches := reader.GlobMatches(in)
		if len(matches) == 0 {
			return fmt.Errorf("run: %s: %w", in, catalog.ErrNotFound)
		}
		for _, m := range matches {
			// The folder the pattern names, and the one a link leads to.
			dir, err := RealPath(filepath.Dir(m))
			if err != nil {
				return fmt.Errorf("run: %s: %w", m, err)
			}
			mAbs, err := RealPath(m)
			if err != nil {
				return fmt.Errorf("run: %s: %w", m, err)
			}
			if outAbs == mAbs || outAbs == dir || outAbs == filepath.Dir(mAbs) {
				return Usagef("run: -o %s is the directory of the input's file %s: relayout never writes into its input", out, m)
			}
			if strings.HasPrefix(outAbs, mAbs+string(filepath.Separator)) {
				return Usagef("run: -o %s is inside the input's %s: relayout never writes into its input", out, m)
			}
		}
		return checkOutDir(out, force)
	}
	inDir := inAbs
	if !st.IsDir() {
		inDir = filepath.Dir(inAbs)
		if outAbs == inDir {
			return Usagef("run: -o %s is the input's own directory: relayout never writes into its input", out)
		}
		// A BP3 file NAME.bp keeps its sub-files in NAME.bp.dir/: part of
		// the input.
		if sub := inAbs + ".dir"; outAbs == sub || strings.HasPrefix(outAbs, sub+string(filepath.Separator)) {
			return Usagef("run: -o %s is inside %s.dir, the sub-file directory of the input %s: relayout never writes into its input", out, in, in)
		}
	} else if outAbs == inDir || strings.HasPrefix(outAbs, inDir+string(filepath.Separator)) {
		return Usagef("run: -o %s is inside the input %s: relayout never writes into its input", out, in)
	}
	if outAbs == inAbs {
		return Usagef("run: -o %s is the input", out)
	}
	return checkOutDir(out, force)
}

// checkOutDir accepts an OUT holding a relayout output, a commit of one in
// progress or a prepared job, and otherwise refuses a non-empty OUT
// without force (checkEmpty).
func checkOutDir(out string, force bool) error {
	for _, n := range []string{"committed", "committing", "job.json"} {
		if _, err := os.Stat(filepath.Join(workDir(out), n)); err == nil {
			return nil
		}
	}
	return checkEmpty(out, force)
}

// checkEmpty refuses an OUT with entries other than .relayout, unless force.
func checkEmpty(out string, force bool) error {
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Usagef("run: -o %s: %v", out, err)
	}
	for _, e := range entries {
		if e.Name() != ".relayout" && !force {
			return Usagef("run: -o %s is not empty (use --force to write into it)", out)
		}
	}
	return nil
}

// RealPath resolves symlinks of the longest existing prefix of p, so that an
// OUT that does not exist yet can still be compared with the input.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if cur == filepath.Dir(cur) {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

// interrupted adds to the error of an interrupted job what OUT/.relayout
// holds and how to go on (the error still wraps context.Canceled);
// journaled: the finished units are kept (run --resume).
func interrupted(ctx context.Context, err error, out string, journaled bool) error {
	if err == nil || (ctx.Err() == nil && !errors.Is(err, context.Canceled)) {
		return err
	}
	work := workDir(out)
	var size int64
	filepath.WalkDir(work, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	if committed(work, out) {
		return err
	}
	if _, e := os.Stat(filepath.Join(work, "committing")); e == nil {
		return fmt.Errorf("%w\nthe commit to %s had begun: rerun the same command (or relayout commit %s) to finish it", err, out, out)
	}
	how := "rerun the same command to start again (relayout run --resume keeps finished work across interruptions)"
	if journaled {
		how = "rerun the same command to continue: the units already written are kept"
	}
	return fmt.Errorf("%w\nnothing was committed to %s; %s holds the unfinished job (%s): %s, or delete %s", err, out, work, HumanBytes(size), how, work)
}

// interruptedShard adds to the error of an interrupted shard (a signal:
// Slurm's time limit, scancel, Ctrl-C) what its journal keeps and how to
// go on, which a batch job's log otherwise lacks; the error still wraps
// context.Canceled.
func interruptedShard(ctx context.Context, err error, out string, job *Job, shard int) error {
	if err == nil || (ctx.Err() == nil && !errors.Is(err, context.Canceled)) {
		return err
	}
	total := 0
	for _, u := range job.Units {
		if u.Shard == shard {
			total++
		}
	}
	done := journaledUnits(journalPath(workDir(out), shard, job.Shards), job.ID)
	return fmt.Errorf("%w\n%s of %s stopped with %d of its %d units journaled, which are kept (nothing is committed): rerun the shard to continue (relayout rewrite %s --shard %d/%d; under Slurm resubmit its array index alone, sbatch --array=%d, or scontrol requeue the task), then relayout commit %s",
		err, shardName(shard, job.Shards), out, done, total, out, shard, job.Shards, shard, out)
}
