package rewriter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"relayout/catalog"
)

// Run is the in-memory job of relayout run as the tests drive it: every
// variable of store into one HDF5 file per variable in stage, then
// stage/relayout.json; the job's own files (part file) live in a work
// directory beside stage, removed at the end. It is job.Run's one path
// without OUT: Prepare (InMemory), the one shard, JoinParts, the
// pipeline's digests; a failure leaves no partial file in stage.
func Run(ctx context.Context, store *catalog.Store, src catalog.Source, stage string, opts Options) (*catalog.Manifest, error) {
	work := filepath.Join(filepath.Dir(stage), "."+filepath.Base(stage)+".run")
	defer os.RemoveAll(work)
	part := filepath.Join(work, "parts", "shard-0-of-1.part")
	job, err := Prepare(ctx, store, src, stage, opts, PrepareOptions{Shards: 1, InMemory: true})
	if err == nil {
		defer job.Release()
		_, err = RewriteShard(ctx, store, src, job, stage, Shard{Part: part}, opts.Jobs, opts.MaxMem, opts.Monitor)
	}
	if err == nil {
		err = allFinished(job, job.Finished())
	}
	if err == nil {
		err = JoinParts(ctx, job, stage, []string{part}, job.Finished(), nil)
	}
	if err != nil {
		RemoveTemps(stage)
		return nil, err
	}
	job.PipelineDigests()
	if err := writeManifest(stage, &job.Manifest); err != nil {
		return nil, err
	}
	return &job.Manifest, nil
}

// writeManifest writes m into stage as relayout.json, as a commit's stage
// holds it (package job writes it there, synced).
func writeManifest(stage string, m *catalog.Manifest) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stage, catalog.ManifestName), b, 0o644)
}

// allFinished refuses recs that lack a unit of job (what package job's
// jobRecords refuses as ErrIncomplete).
func allFinished(job *Plan, recs map[int]UnitRecord) error {
	for _, u := range job.Units {
		if _, ok := recs[u.ID]; !ok {
			return fmt.Errorf("unit %d of shard %d not finished", u.ID, u.Shard)
		}
	}
	return nil
}

// memJournal is a shard's journal kept in memory (the journal file is
// package job's): the records of a batch are kept (in recs) when it is
// flushed, after the engine's sync, as the file's are written.
type memJournal struct {
	sync    func() error
	pending []UnitRecord
	recs    map[int]UnitRecord
}

func (j *memJournal) SetSync(sync func() error) { j.sync = sync }
func (j *memJournal) Add(r UnitRecord) error    { j.pending = append(j.pending, r); return nil }

func (j *memJournal) Flush() error {
	if j.sync != nil {
		if err := j.sync(); err != nil {
			return err
		}
	}
	for _, r := range j.pending {
		j.recs[r.Unit] = r
	}
	j.pending = nil
	return nil
}

// checkUnits is the commit's unit check as the tests drive it (package
// job's checkUnits): every dataset of the joined stage read back, each
// unit's digest equal to its record's, the dataset digests into the
// plan's manifest; what differs goes to w.
func checkUnits(ctx context.Context, job *Plan, recs map[int]UnitRecord, out *catalog.Store, outSrc catalog.Source,
	jobs int, maxMem int64, w io.Writer) (bool, error) {
	rb := job.ReadBack(outSrc, jobs, maxMem)
	defer rb.Close()
	ok := true
	for di := range job.Datasets {
		d := &job.Datasets[di]
		sum, err := rb.Dataset(ctx, di, out, func(u *Unit, got string) error {
			if want := recs[u.ID].Sum; got != want {
				return &Difference{fmt.Sprintf("%s unit %d: %v of output %s, record says %s", where(d.key()), u.ID, job.Digest, got, want)}
			}
			return nil
		})
		var diff *Difference
		if errors.As(err, &diff) {
			fmt.Fprintln(w, "DIFF", diff.Msg)
			ok = false
			continue
		}
		if err != nil {
			return false, err
		}
		job.Manifest.Variables[d.VarIndex].Datasets[d.Entry].SetSum(job.Digest, sum)
	}
	return ok, nil
}
