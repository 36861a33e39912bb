package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/rewriter"
)

// syncStage syncs the variable files of an in-memory job's stage as
// JoinParts hands them over on files (their stage paths), until files is
// closed; its engine and JoinParts leave them unsynced: the caller runs it
// beside JoinParts and the verification, the disk writing back while
// chunks are joined and the verifier reads from the page cache, and
// commits once it returns. A journaled job's files were synced before
// their journal records: nothing to do but drain files. The first error is
// returned once files is closed.
func syncStage(job *Job, files <-chan string) error {
	var first error
	for path := range files {
		if !job.InMemory() || first != nil {
			continue
		}
		if err := fileio.SyncFile(path); err != nil {
			first = fmt.Errorf("job: commit: %w", err)
		}
	}
	return first
}

// stageManifest writes the job's manifest (sha256 still empty) into
// work/stage, so the stage reads back like a relayout output. An in-memory
// job's is written unsynced: its commit writes the manifest again, synced,
// and a sync here would wait for the whole output being written back (an
// ext4 fsync commits the journal, with the data written before it): 0.19 s
// on small5 before its verification could start.
func stageManifest(work string, job *Job) error {
	if !job.InMemory() {
		return writeManifest(stageDir(work), &job.Manifest)
	}
	b, err := job.Manifest.Encode()
	if err == nil {
		err = os.WriteFile(filepath.Join(stageDir(work), catalog.ManifestName), b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("job: manifest: %w", err)
	}
	return nil
}

// checkUnits reads every dataset of the joined stage back (out, through its
// reader: the rewriter's ReadBack), unit by unit: each unit's digest
// (Plan.Digest) must equal the one its shard journaled (damage between the
// shard's write and the commit). It is not the check against the input:
// that is package verify's, which shares no code with the rewriter. The
// dataset digests ReadBack takes go into job.Manifest. One line per
// variable goes to w; ok is false when something differs. At most jobs
// units are read at once, each charged with its copy and its largest read
// to one memory budget of maxMem bytes (as the shards are). A job of
// --digest none (Plan.Digest NoDigest) journaled no digest: its datasets
// are only checked for presence and shape, and get no digest.
func checkUnits(ctx context.Context, job *Job, recs map[int]rewriter.UnitRecord, out *catalog.Store, outSrc catalog.Source,
	jobs int, maxMem int64, w io.Writer) (map[string]string, bool, error) {
	rb := job.ReadBack(outSrc, jobs, maxMem)
	defer rb.Close()
	result := map[string]string{}
	ok := true
	for vi, mv := range job.Manifest.Variables {
		var line string
		var elements int64
		for di := range job.Datasets {
			d := &job.Datasets[di]
			if d.VarIndex != vi {
				continue
			}
			sum, err := rb.Dataset(ctx, di, out, func(u *rewriter.Unit, got string) error {
				if want := recs[u.ID].Sum; got != want {
					return &rewriter.Difference{Msg: fmt.Sprintf("%s rows %d+%d (unit %d of %s): %v of output %s, journal says %s",
						where(d), u.Lo, u.Rows, u.ID, shardName(u.Shard, job.Shards), job.Digest, got, want)}
				}
				return nil
			})
			var diff *rewriter.Difference
			if errors.As(err, &diff) {
				line = "DIFF " + diff.Msg
				break
			}
			if err != nil {
				return nil, false, err
			}
			job.Manifest.Variables[vi].Datasets[d.Entry].SetSum(job.Digest, sum)
			elements += catalog.Box{Count: d.Shape}.Elements()
		}
		if line == "" && job.Digest == catalog.NoDigest {
			line = fmt.Sprintf("OK  %s  %d elements  every dataset present (--digest none: no unit digest to check)", mv.Name, elements)
			result[mv.Name] = "shape ok"
		} else if line == "" {
			line = fmt.Sprintf("OK  %s  %d elements  %v of every unit equals the journal", mv.Name, elements, job.Digest)
			result[mv.Name] = job.Digest.String() + " ok"
		} else {
			ok = false
			result[mv.Name] = line
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return nil, false, err
		}
	}
	return result, ok, nil
}

// where names dataset d as the checks do: "<var> step <s> level <l>".
func where(d *rewriter.Dataset) string {
	return fmt.Sprintf("%s step %d level %d", d.Var, d.Step, d.Level)
}

// buildReport is the job's report from its journals and check results.
func buildReport(work, out string, job *Job, recs map[int]rewriter.UnitRecord, checks map[string]string, verified string, start time.Time) *catalog.Report {
	r := &catalog.Report{Schema: "relayout-report/1", Input: job.Input, Output: out, Shards: job.Shards,
		Units: len(job.Units), Verified: verified, Variables: []catalog.ReportVariable{}}
	for vi, mv := range job.Manifest.Variables {
		rv := catalog.ReportVariable{Name: mv.Name, File: mv.File, Verification: checks[mv.Name], Shards: []int{}}
		if fi, err := os.Stat(filepath.Join(stageDir(work), mv.File)); err == nil {
			rv.BytesOut = fi.Size()
		} else if fi, err := os.Stat(filepath.Join(out, mv.File)); err == nil {
			rv.BytesOut = fi.Size()
		}
		shards := map[int]bool{}
		for di := range job.Datasets {
			d := &job.Datasets[di]
			if d.VarIndex != vi {
				continue
			}
			rv.Datasets++
			rv.BlocksIn += d.BlocksIn
			rv.BytesIn += d.BytesIn
			rv.LogicalBytes += catalog.Box{Count: d.Shape}.Elements() * int64(d.ElemSize)
			rv.BlocksOut += d.StoredBlocks() // and the chunks the shards wrote to part files, below
		}
		for _, u := range job.Units {
			if job.Datasets[u.Dataset].VarIndex != vi {
				continue
			}
			rec := recs[u.ID]
			shards[u.Shard] = true
			rv.Seconds += float64(rec.Nanos) / 1e9
			rv.IO.ReadBytes += rec.ReadBytes
			rv.IO.WrittenBytes += rec.Written
			rv.IO.Units++
			rv.BlocksOut += len(rec.Chunks)
		}
		for s := range job.Shards {
			if shards[s] {
				rv.Shards = append(rv.Shards, s)
			}
		}
		r.Variables = append(r.Variables, rv)
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// writeIOSummary prints a manifest's I/O profile, Darshan-like (the
// rewrite's; writeVerifyIOSummary prints the verify phase's).
func writeIOSummary(w io.Writer, p *catalog.ManifestIO) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "io: %.1f MiB of arrays in %.2fs (%.0f MiB/s)\n", mb(p.LogicalBytes), p.WallSeconds, mb(p.LogicalBytes)/max(p.WallSeconds, 1e-9))
	fmt.Fprintf(w, "io: read  %.1f MiB in %d calls (mean %.1f KiB)\n", mb(p.ReadBytes), p.ReadCalls, float64(p.MeanReadBytes)/1024)
	if p.LibraryReadBlocks > 0 {
		fmt.Fprintf(w, "io: read  %.1f MiB in %d blocks through the HDF5 library in %.2fs (plugin filters: the slow path, one read at a time)\n",
			mb(p.LibraryReadBytes), p.LibraryReadBlocks, p.LibraryReadSeconds)
	}
	fmt.Fprintf(w, "io: write %.1f MiB in %d calls (mean %.1f KiB)\n", mb(p.WriteBytes), p.WriteCalls, float64(p.MeanWriteBytes)/1024)
	fmt.Fprintf(w, "io: stage seconds (summed over workers): fetch %.2f, assemble %.2f, encode %.2f, write %.2f, sync %.2f\n",
		p.FetchSeconds, p.AssembleSeconds, p.EncodeSeconds, p.WriteSeconds, p.SyncSeconds)
	split := ""
	if p.Splits > 0 {
		split = fmt.Sprintf(", %d arrays split below one row or chunk row", p.Splits)
	}
	fmt.Fprintf(w, "io: buffers peak %.1f MiB of their budget %.1f MiB (--max-mem less the block lists and plans kept)%s\n", mb(p.PeakMem), mb(p.MaxMem), split)
}

// writeVerifyIOSummary prints the verify phase of an I/O profile (its
// Verify fields), in writeIOSummary's style: what the verifier read of
// the input and of the output.
func writeVerifyIOSummary(w io.Writer, p *catalog.ManifestIO) {
	mean := 0.0
	if p.VerifyReadCalls > 0 {
		mean = float64(p.VerifyReadBytes) / float64(p.VerifyReadCalls) / 1024
	}
	fmt.Fprintf(w, "io: verify read %.1f MiB of input in %d calls (mean %.1f KiB), %.1f MiB of output through HDF5 in %d reads, in %.2fs\n",
		mb(p.VerifyReadBytes), p.VerifyReadCalls, mean, mb(p.VerifyOutputBytes), p.VerifyOutputReads, p.VerifySeconds)
}
