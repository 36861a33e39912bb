package job

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/rewriter"
)

// A sharded job splits relayout run into three steps that may run in different
// processes on different nodes sharing OUT (relayout plan -o, rewrite
// --shard I/N, commit; relayout run --resume runs all three in one process):
//
//	OUT/.relayout/job.json            the job: datasets, work units, shard of each unit
//	OUT/.relayout/catalog.db          the input catalog, built once by plan
//	OUT/.relayout/stage/.<f>.h5.tmp   each variable's file, HDF5 structure written by plan:
//	                                  contiguous and merged datasets and raw chunks of
//	                                  covered arrays allocated early at known offsets,
//	                                  compressed or sparse chunked datasets created empty
//	OUT/.relayout/stage/series.h5     the series file (external links), written by plan
//	OUT/.relayout/parts/shard-I-of-N.part     encoded chunks written by shard I
//	OUT/.relayout/journal/shard-I-of-N.log    finished units of shard I (journal.go)
//	OUT/.relayout/lock, lock.shard-I-of-N     flocks (lock.go)
//
// The job keeps the work directory: it empties it and writes job.json
// (Job: the rewriter's Plan with the job's identity, options and input
// files) last, so that a crash before leaves no job and the next plan
// starts over; it opens each shard's journal and part file for the
// rewriter (rewriter.Shard), and commits (commit.go, commitlog.go). The
// rewriter writes the stage's files and the part files: a work unit is a
// box of one dataset of at most UnitBytes, and no shard ever touches HDF5
// metadata (rewriter/shard.go). Commit joins the chunks into a copy of
// each file with H5Dwrite_chunk (a copy, so that a commit killed half-way
// leaves the prepared file intact and is simply redone), renames each file
// to its final stage name, checks every unit against the journal and
// (unless told not to) every element against the input, writes the
// manifest and moves the files to OUT.

// JobSchema names the job.json format.
const JobSchema = "relayout-job/1"

// File names under OUT/.relayout.
const (
	JobFile        = "job.json"
	committedFile  = "committed"
	committingFile = "committing"
)

// ErrIncomplete reports that some shard has not finished its units.
var ErrIncomplete = errors.New("job not finished")

// Job is OUT/.relayout/job.json: the rewriter's plan (its fields inline)
// with what the job is: its id, input, options and input files.
type Job struct {
	Schema    string    `json:"schema"`
	ID        string    `json:"id"`
	Input     string    `json:"input"`
	Vars      []string  `json:"vars,omitempty"` // the reader's variable selection
	Signature string    `json:"signature"`      // the options planned with, compared on resume
	Created   time.Time `json:"created"`
	rewriter.Plan
	// LegacyNoDigest is the NoDigest of a job.json written before Digest
	// (LoadJob reads it as Digest NoDigest).
	LegacyNoDigest bool `json:"no_digest,omitempty"`
	// Inputs are the input files as planned (sizes, modification times),
	// recorded by the commit so that a rerun can tell the output is current.
	Inputs []InputFile `json:"inputs,omitempty"`
}

// newJob is the job of plan, prepared from created on, with a fresh id.
func newJob(plan *rewriter.Plan, created time.Time, input string, vars []string, signature string, inputs []InputFile) *Job {
	var id [8]byte
	rand.Read(id[:])
	return &Job{Schema: JobSchema, ID: hex.EncodeToString(id[:]), Input: input, Vars: vars, Signature: signature,
		Created: created.UTC().Truncate(time.Second), Plan: *plan, Inputs: inputs}
}

// clearWork empties work's job state (job, commit records, parts,
// journals, stage) and makes the directories a job writes into.
func clearWork(work string, keepCommitted bool) error {
	for _, n := range []string{JobFile, committedFile, committingFile, "parts", "journal", "stage"} {
		if n == committedFile && keepCommitted {
			continue
		}
		if err := os.RemoveAll(filepath.Join(work, n)); err != nil {
			return fmt.Errorf("job: prepare: %w", err)
		}
	}
	for _, d := range []string{"stage", "parts", "journal"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return fmt.Errorf("job: prepare: %w", err)
		}
	}
	return nil
}

// prepareJob is plan -o (and run's prepare): it empties work's job state,
// has the rewriter prepare spec's plan into work/stage and, for a
// journaled job, writes work/job.json last (a crash before that leaves no
// job, and the next plan starts over). An in-memory job (p.InMemory) is
// never written.
// keepCommitted (run --append) keeps OUT's commit record: OUT stays a
// finished output until the new commit replaces the record.
func prepareJob(ctx context.Context, store *catalog.Store, src catalog.Source, work string, ropts rewriter.Options,
	spec Spec, inputs []InputFile, p rewriter.PrepareOptions, keepCommitted bool) (*Job, error) {
	if err := clearWork(work, keepCommitted); err != nil {
		return nil, err
	}
	created := time.Now()
	plan, err := rewriter.Prepare(ctx, store, src, stageDir(work), ropts, p)
	if err != nil {
		return nil, err
	}
	job := newJob(plan, created, spec.Input, spec.Vars, spec.Signature(), inputs)
	if p.InMemory {
		return job, nil
	}
	if err := saveJob(work, job); err != nil {
		return nil, err
	}
	return job, nil
}

// saveJob writes work/job.json, last of a prepare.
func saveJob(work string, job *Job) error {
	b, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("job: prepare: %w", err)
	}
	if err := writeFileAtomic(work, JobFile, b); err != nil {
		return fmt.Errorf("job: prepare: %w", err)
	}
	return nil
}

// LoadJob reads work/job.json; a missing job wraps catalog.ErrNotFound.
func LoadJob(work string) (*Job, error) {
	b, err := os.ReadFile(filepath.Join(work, JobFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("job: %s: no prepared job (run relayout plan IN -o OUT --shards N first): %w",
			filepath.Join(work, JobFile), catalog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	var j Job
	if err := json.Unmarshal(b, &j); err != nil || j.Schema != JobSchema {
		return nil, fmt.Errorf("job: %s: not a %s job: %w", filepath.Join(work, JobFile), JobSchema, catalog.ErrCorrupt)
	}
	if j.LegacyNoDigest {
		j.Digest, j.LegacyNoDigest = catalog.NoDigest, false
	}
	for i, u := range j.Units {
		if u.ID != i || u.Dataset < 0 || u.Dataset >= len(j.Datasets) || u.Shard < 0 || u.Shard >= j.Shards {
			return nil, fmt.Errorf("job: %s: unit %d (id %d, dataset %d, shard %d) does not fit the job: %w",
				filepath.Join(work, JobFile), i, u.ID, u.Dataset, u.Shard, catalog.ErrCorrupt)
		}
	}
	return &j, nil
}

// committed reports whether the job in work was committed to out.
func committed(work, out string) bool {
	_, err1 := os.Stat(filepath.Join(work, committedFile))
	_, err2 := os.Stat(filepath.Join(out, catalog.ManifestName))
	return err1 == nil && err2 == nil
}

// committing reports whether a commit began moving files to their final
// names (a killed commit; rollForward finishes the moves).
func committing(work string) bool {
	_, err := os.Stat(filepath.Join(work, committingFile))
	return err == nil
}

// shardName is "shard-I-of-N".
func shardName(shard, n int) string { return fmt.Sprintf("shard-%d-of-%d", shard, n) }

func journalPath(work string, shard, n int) string {
	return filepath.Join(work, "journal", shardName(shard, n)+".log")
}

func partPath(work string, shard, n int) string {
	return filepath.Join(work, "parts", shardName(shard, n)+".part")
}

// partPaths is the part file of every shard of job, by shard.
func partPaths(work string, job *Job) []string {
	p := make([]string, job.Shards)
	for s := range p {
		p[s] = partPath(work, s, job.Shards)
	}
	return p
}

// stageDir is work's stage: the output under its final names.
func stageDir(work string) string { return filepath.Join(work, "stage") }

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
	return fileio.SyncDir(dir)
}
