package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/planner"
	"relayout/reader"
	"relayout/rewriter"
)

// jobSpec is what a sharded job (plan -o, run --resume) is planned with.
// Its JSON is the job's signature: a resume with other options is refused.
type jobSpec struct {
	Input      string   `json:"input"`
	Vars       []string `json:"vars,omitempty"`
	Layout     string   `json:"layout"`
	ChunkShape []int64  `json:"chunk_shape,omitempty"`
	Chunks     []int64  `json:"chunks,omitempty"`
	Readers    int      `json:"readers,omitempty"`
	// Cost is the --cost-model of the auto layout (absent: built-in).
	Cost      *planner.CostParams `json:"cost_model,omitempty"`
	Deflate   int                 `json:"deflate,omitempty"`
	Storage   fsinfo.Override     `json:"storage"`
	Shards    int                 `json:"shards"`
	UnitBytes int64               `json:"unit_bytes,omitempty"`
	NetCDF    bool                `json:"netcdf,omitempty"`
	Strict    bool                `json:"strict,omitempty"` // --strict: refuse an incomplete input
	// Options of a plain run (absent from sharded jobs).
	Scope        string `json:"scope,omitempty"`
	RanksPerNode int    `json:"ranks_per_node,omitempty"`
	NoDigest     bool   `json:"no_digest,omitempty"`
}

func (s jobSpec) signature() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// outputFields is a signature's options that decide the output, as a map:
// how the work was cut (shards, unit size) is left out, so that run and run
// --resume of the same options recognise each other's output.
func outputFields(sig string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(sig), &m); err != nil {
		return nil, err
	}
	delete(m, "shards")
	delete(m, "unit_bytes")
	return m, nil
}

// signatureDiff names the options in which two signatures differ ("" when
// they decide the same output).
func signatureDiff(was, now string) string {
	a, err1 := outputFields(was)
	b, err2 := outputFields(now)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("recorded options %s", was)
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			wj, _ := json.Marshal(a[k])
			nj, _ := json.Marshal(b[k])
			diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", k, wj, nj))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// settleOut is the first step, under OUT's lock, of every command that
// writes OUT (run, run --resume, plan -o): it finishes a commit that was
// interrupted (rewriter.RollForward), then, when OUT holds a finished
// output: with force, takes it apart so that this job replaces it (the old
// manifest first, rewriter.Uncommit, and the old job); otherwise reports
// done when that output was made with the same options from the same input
// files (sizes and modification times), and refuses (exit 2) naming the
// difference when not. sig is this command's job signature, in the input
// path inAbs; "" (plan -o) takes any finished output as done.
func settleOut(inAbs, out, sig string, force bool, logw io.Writer) (done bool, err error) {
	work := workDir(out)
	rolled, err := rewriter.RollForward(work, out)
	if err != nil {
		return false, err
	}
	if rolled {
		fmt.Fprintf(logw, "%s: finished the commit a killed relayout had begun\n", out)
	}
	if !rewriter.Committed(work, out) {
		return false, nil
	}
	if force {
		if err := rewriter.Uncommit(work, out); err != nil {
			return false, err
		}
		if err := os.Remove(filepath.Join(work, rewriter.JobFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return false, nil
	}
	if sig == "" {
		fmt.Fprintf(logw, "%s: done (committed already; nothing to do)\n", out)
		return true, nil
	}
	rec, _, err := rewriter.ReadCommitRecord(work)
	if err != nil {
		return false, usagef("%s holds a finished output without a readable commit record (%v): use --force to replace it", out, err)
	}
	if d := signatureDiff(rec.Signature, sig); d != "" {
		return false, usagef("%s holds an output made with other options or input (%s): rerun with those, or use --force to replace it", out, d)
	}
	now, err := rewriter.InputFiles(inAbs)
	if err != nil {
		return false, err
	}
	if d := rewriter.InputsDiffer(rec.Inputs, now); d != "" {
		return false, usagef("%s was made from input files that have changed since (%s): use --force to rewrite it", out, d)
	}
	fmt.Fprintf(logw, "%s: done (committed already with the same options and input files; nothing to do)\n", out)
	return true, nil
}

func workDir(out string) string { return filepath.Join(out, ".relayout") }

// lockOut takes OUT's exclusive lock (plan -o, commit, run), explaining a
// stale one left by a killed job.
func lockOut(out, cmd string, logw io.Writer) (*rewriter.Lock, error) {
	l, err := rewriter.LockExclusive(filepath.Join(workDir(out), "lock"), cmd)
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
func existingJob(out string, spec jobSpec, force bool) (*rewriter.Job, error) {
	job, err := rewriter.LoadJob(workDir(out))
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		if force {
			return nil, nil
		}
		return nil, err
	}
	if job.Signature != spec.signature() {
		if force {
			return nil, nil
		}
		return nil, usagef("%s holds a job planned with other options or input (%s); rerun with the same options, or use --force to plan it again",
			out, job.Signature)
	}
	return job, nil
}

// prepareJob builds the catalog into OUT/.relayout/catalog.db and prepares
// the job (relayout plan -o). The caller holds OUT's lock.
func prepareJob(ctx context.Context, out string, spec jobSpec, logw io.Writer) (*rewriter.Job, error) {
	work := workDir(out)
	os.Remove(filepath.Join(work, rewriter.JobFile)) // a half-prepared job is never resumed
	ds, store, err := buildCatalog(ctx, spec.Input, filepath.Join(work, "catalog.db"), reader.Options{Vars: spec.Vars, Strict: spec.Strict})
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	defer store.Close()
	if spec.Layout == "contiguous" {
		// Contiguous datasets are allocated whole at prepare: an output
		// the file system cannot hold is refused before it is allocated.
		vars, err := store.Variables()
		if err != nil {
			return nil, err
		}
		if err := checkSpace(out, contiguousBytes(vars), "rerun the same command"); err != nil {
			return nil, err
		}
	}
	return prepareWith(ctx, out, spec, ds, store, logw)
}

// prepareWith prepares the job from the catalog store already built in
// OUT/.relayout/catalog.db.
func prepareWith(ctx context.Context, out string, spec jobSpec, ds reader.Dataset, store *catalog.Store, logw io.Writer) (*rewriter.Job, error) {
	work := workDir(out)
	start := time.Now()
	vars, err := store.Variables()
	if err != nil {
		return nil, err
	}
	if len(vars) == 0 {
		return nil, fmt.Errorf("plan: %s: no variable to rewrite: %w", spec.Input, catalog.ErrNotFound)
	}
	if spec.Layout == planner.Chunked {
		if err := chunkNotes(ctx, store, spec.ChunkShape, spec.Chunks, logw); err != nil {
			return nil, err
		}
	}
	outFS, err := fsinfo.Detect(out)
	if err != nil {
		return nil, err
	}
	ropts := rewriter.Options{Layout: spec.Layout, ChunkShape: spec.ChunkShape, Chunks: spec.Chunks,
		Deflate: spec.Deflate, Version: version, FS: outFS, Storage: spec.Storage, NetCDF: spec.NetCDF}
	if spec.Layout == planner.AutoLayout {
		ropts.Layout, ropts.LayoutFor = "", autoLayouts(spec.Readers, spec.Cost, io.Discard)
	}
	if spec.Layout == planner.Merged {
		sc, err := planner.ParseScope(spec.Scope)
		if err != nil {
			return nil, usagef("plan: --scope: %v", err)
		}
		ropts.Merge = rewriter.MergeOptions{Scope: sc, RanksPerNode: spec.RanksPerNode}
	}
	inputs, err := rewriter.InputFiles(spec.Input)
	if err != nil {
		return nil, err
	}
	job, err := rewriter.Prepare(ctx, store, ds, work, ropts, rewriter.PrepareOptions{
		Input: spec.Input, Vars: spec.Vars, Signature: spec.signature(), Shards: spec.Shards, UnitBytes: spec.UnitBytes,
		Inputs: inputs})
	if err != nil {
		return nil, err
	}
	var total int64
	for _, u := range job.Units {
		total += u.Bytes
	}
	fmt.Fprintf(logw, "prepared %s: %d variables, %d datasets, %d units of up to %s (%s) for %d shard(s) in %.2fs\n",
		out, len(vars), len(job.Datasets), len(job.Units), humanBytes(job.UnitBytes), humanBytes(total), job.Shards, time.Since(start).Seconds())
	return job, nil
}

// openJobInput opens the catalog plan built and the input it describes.
func openJobInput(out string, job *rewriter.Job) (reader.Dataset, *catalog.Store, error) {
	store, err := catalog.OpenStore(filepath.Join(workDir(out), "catalog.db"))
	if err != nil {
		return nil, nil, err
	}
	ds, err := reader.Open(job.Input, reader.Options{Vars: job.Vars})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return ds, store, nil
}

// rewriteShard runs one shard of OUT's job. The caller holds the locks.
func rewriteShard(ctx context.Context, out string, job *rewriter.Job, shard, jobs int, maxMem int64, logw io.Writer) error {
	ds, store, err := openJobInput(out, job)
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	start := time.Now()
	st, err := rewriter.RewriteShard(ctx, store, ds, workDir(out), job, shard, jobs, maxMem, nil)
	if err != nil {
		return err
	}
	name := rewriter.ShardName(shard, job.Shards)
	if st.Skipped == st.Units {
		fmt.Fprintf(logw, "%s: done (%d units, all finished before)\n", name, st.Units)
		return nil
	}
	fmt.Fprintf(logw, "%s: %d units (%d finished before), %s in %.2fs\n", name, st.Units, st.Skipped, humanBytes(st.Bytes), time.Since(start).Seconds())
	return nil
}

// commitJob is relayout commit without the lock (held by the caller, who
// has rolled forward any interrupted commit: settleOut, or runCommit).
func commitJob(ctx context.Context, out string, job *rewriter.Job, verify bool, reportPath string, jobs int, maxMem int64, logw io.Writer) error {
	start := time.Now()
	work := workDir(out)
	recs, err := rewriter.JobRecords(work, job)
	if err != nil {
		return err
	}
	if err := rewriter.JoinParts(ctx, work, job, recs); err != nil {
		return err
	}
	ds, store, err := openJobInput(out, job)
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	if err := rewriter.StageManifest(work, job); err != nil {
		return err
	}
	stage := filepath.Join(work, "stage")
	outDB := filepath.Join(work, "verify.db")
	outDS, outStore, err := buildCatalog(ctx, stage, outDB, reader.Options{})
	if err != nil {
		return err
	}
	checks, ok, err := rewriter.CheckUnits(ctx, job, recs, store, ds, outStore, outDS, verify, jobs, maxMem, logw)
	outStore.Close()
	outDS.Close()
	os.Remove(outDB)
	if err != nil {
		return err
	}
	verified := "every unit's sha256 equals its journal record"
	if verify {
		verified = "every element equals the input; " + verified
	}
	if !ok {
		verified = "FAILED"
	}
	job.Manifest.Report = rewriter.BuildReport(work, out, job, recs, checks, verified, start)
	if reportPath != "" {
		if err := writeReport(reportPath, job.Manifest.Report); err != nil {
			return err
		}
	}
	if !ok {
		return fmt.Errorf("%w: output left in %s, nothing committed to %s", errVerifyFailed, stage, out)
	}
	job.Manifest.Schema = catalog.ManifestSchema
	var spec jobSpec
	if json.Unmarshal([]byte(job.Signature), &spec) == nil {
		job.Manifest.Options = manifestOptions(spec, 0, 0)
	}
	job.Manifest.Started, job.Manifest.Finished = utcSecond(job.Created), utcSecond(time.Now())
	job.Manifest.Verified = &verify
	rec := rewriter.CommitRecord{Job: job.ID, Signature: job.Signature, Inputs: job.Inputs}
	if err := rewriter.CommitStage(work, out, &job.Manifest, rec); err != nil {
		return err
	}
	fmt.Fprintf(logw, "committed: %d variables to %s (%d units from %d shard(s)) in %.2fs\n",
		len(job.Manifest.Variables), out, len(job.Units), job.Shards, time.Since(start).Seconds())
	return nil
}

func writeReport(path string, r *catalog.Report) error {
	b, err := jsonIndent(r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// shardFromEnv finds this process's shard in the launcher's environment:
// a Slurm array task, then an MPI launcher's rank (Open MPI, then PMI:
// MPICH/Hydra, Intel MPI, srun --mpi=pmi2), then a Slurm job step's task.
// The MPI launchers come before SLURM_PROCID because mpirun inside an sbatch
// script inherits the batch step's SLURM_PROCID=0 in every rank.
func shardFromEnv(getenv func(string) string) (shard, n int, from string, err error) {
	pairs := []struct{ id, count string }{
		{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"},
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"SLURM_PROCID", "SLURM_NTASKS"},
	}
	for _, p := range pairs {
		is, ns := getenv(p.id), getenv(p.count)
		if is == "" || ns == "" {
			continue
		}
		i, err1 := strconv.Atoi(is)
		c, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || c < 1 {
			return 0, 0, "", usagef("rewrite: %s=%q %s=%q: not a shard", p.id, is, p.count, ns)
		}
		if p.id == "SLURM_ARRAY_TASK_ID" {
			if m, err := strconv.Atoi(getenv("SLURM_ARRAY_TASK_MIN")); err == nil {
				i -= m // --array=1-4 numbers tasks from 1
			}
		}
		if i < 0 || i >= c {
			return 0, 0, "", usagef("rewrite: %s=%d is not in [0, %s=%d) (an array with gaps or steps? use --shard I/N)", p.id, i, p.count, c)
		}
		return i, c, p.id + "/" + p.count, nil
	}
	return 0, 0, "", usagef("rewrite: no --shard I/N and no launcher environment (SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)")
}

// parseShard parses "I/N".
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("--shard %q: want I/N with 0 <= I < N, e.g. 2/4", s)
	}
	return i, n, nil
}
