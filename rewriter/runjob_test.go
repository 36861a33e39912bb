package rewriter

import (
	"context"
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
	job, err := prepare(ctx, store, src, work, stage, opts, PrepareOptions{Shards: 1, InMemory: true})
	if err == nil {
		defer job.Release()
		_, err = RewriteShard(ctx, store, src, work, job, 0, opts.Jobs, opts.MaxMem, opts.Monitor)
	}
	var recs map[int]JournalRecord
	if err == nil {
		recs, err = JobRecords(work, job)
	}
	if err == nil {
		err = JoinParts(ctx, work, job, recs, nil)
	}
	if err != nil {
		removeTemps(stage)
		return nil, err
	}
	job.PipelineDigests()
	if err := writeManifest(stage, &job.Manifest); err != nil {
		return nil, err
	}
	return &job.Manifest, nil
}
