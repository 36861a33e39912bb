package rewriter

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/internal/h5"
	"relayout/internal/limits"
	"relayout/planner"
)

// JoinParts gives every prepared file in stage its final stage name:
// files without chunked datasets are renamed as they are (the shards synced
// their pwrites); the others are copied, the shards' chunks (parts: shard
// i's part file is parts[i]) written into
// the copy with H5Dwrite_chunk, and the copy synced and renamed. A file
// already under its stage name was joined by an earlier (killed) commit.
// An in-memory job, which is redone whole after a crash, has its chunks
// written into the prepared file itself instead of a copy, and its files
// are left unsynced, for package job's syncStage, and the directory to the manifest's
// synced rename. joined (nil: none) is handed each file's stage path as
// soon as it is under it, so that syncStage syncs the files without
// chunks (mere renames, first) while the chunks of others are joined.
func JoinParts(ctx context.Context, job *Plan, stage string, parts []string, recs map[int]UnitRecord, joined func(path string)) error {
	if joined == nil {
		joined = func(string) {}
	}
	if len(parts) != job.Shards {
		return fmt.Errorf("rewriter: commit: %d part files for %d shards", len(parts), job.Shards)
	}
	return joinParts(ctx, stage, parts, job, recs, job.mem != nil, joined)
}

// joinParts is JoinParts into stage, inPlace for an in-memory job.
func joinParts(ctx context.Context, stage string, partPaths []string, job *Plan, recs map[int]UnitRecord, inPlace bool, joined func(string)) error {
	parts := map[int]*os.File{}
	defer func() {
		for _, f := range parts {
			f.Close()
		}
	}()
	byDS := job.unitsByDataset()
	var buf []byte
	for vi, mv := range job.Manifest.Variables {
		final := filepath.Join(stage, mv.File)
		if _, err := os.Stat(final); err == nil {
			joined(final)
			continue
		}
		tmp := filepath.Join(stage, "."+mv.File+".tmp")
		var chunked []int
		for di := range job.Datasets {
			if job.Datasets[di].VarIndex == vi && targetOf(&job.Datasets[di]).traits().encoded {
				chunked = append(chunked, di)
			}
		}
		if len(chunked) == 0 {
			if inPlace {
				// synced by syncStage
			} else if err := fileio.SyncFile(tmp); err != nil {
				return fmt.Errorf("rewriter: commit: %w", err)
			}
			if err := os.Rename(tmp, final); err != nil {
				return fmt.Errorf("rewriter: commit: %w", err)
			}
			joined(final)
			continue
		}
		join := filepath.Join(stage, "."+mv.File+".join")
		if inPlace {
			join = tmp
		} else if err := copyFile(tmp, join); err != nil {
			return fmt.Errorf("rewriter: commit: %s: %w", mv.Name, err)
		}
		var co h5.CreateOptions // the file's alignment, for its chunks
		if st := mv.Storage; st != nil {
			co = h5.CreateOptions{Alignment: st.Alignment, AlignThreshold: st.AlignThreshold}
		}
		w, err := h5.OpenRWWith(join, co)
		if err != nil {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
		for _, di := range chunked {
			if err := ctx.Err(); err != nil {
				w.Close()
				return err
			}
			d := &job.Datasets[di]
			od, err := w.OpenChunked(d.Path, h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Uint, Size: d.ElemSize},
				Shape: d.Shape, Chunk: d.Chunk, Deflate: d.Deflate, Shuffle: d.Shuffle})
			if err != nil {
				w.Close()
				return fmt.Errorf("rewriter: commit: %w", err)
			}
			for _, u := range byDS[di] {
				pf := parts[u.Shard]
				if pf == nil {
					if pf, err = os.Open(partPaths[u.Shard]); err != nil {
						w.Close()
						return fmt.Errorf("rewriter: commit: %w", err)
					}
					parts[u.Shard] = pf
				}
				for _, c := range recs[u.ID].Chunks {
					// One buffer for every chunk (H5Dwrite_chunk is done
					// with it when it returns): a fresh one each cost
					// 0.08 s of clearing on 126 MB of chunks.
					if int64(cap(buf)) < c.Len {
						buf = make([]byte, c.Len)
					}
					buf := buf[:c.Len]
					if _, err := pf.ReadAt(buf, c.Pos); err != nil {
						w.Close()
						return fmt.Errorf("rewriter: commit: %s at %d+%d: %w", pf.Name(), c.Pos, c.Len, err)
					}
					if err := od.WriteChunk(c.Offset, buf); err != nil {
						w.Close()
						return fmt.Errorf("rewriter: commit: %w", err)
					}
				}
			}
			od.Close()
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
		if inPlace {
			// synced by syncStage
		} else if err := fileio.SyncFile(join); err != nil {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
		if err := os.Rename(join, final); err != nil {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
		joined(final)
		os.Remove(tmp)
	}
	if inPlace {
		return nil
	}
	return fileio.SyncDir(stage)
}

// copyFile copies src to dst (copy_file_range: a reflink or an in-kernel
// copy on the same file system).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadBack reads a joined stage back, dataset by dataset, for the job's
// unit checks (package job's checkUnits: each unit against its journal
// record). It is not the check against the input: that is package
// verify's, which shares no code with this one. At most jobs units are
// read at once, each charged with its copy and its largest read to one
// memory budget of maxMem bytes (memBudget, as the shards are), shared by
// every dataset until Close.
type ReadBack struct {
	plan   *Plan
	outSrc catalog.Source
	lim    limits.Limits // of jobs and maxMem
	mem    *memBudget
	byDS   map[int][]*Unit
}

// ReadBack is a read back of j's joined stage through outSrc (the stage's
// reader); Close frees its budget.
func (j *Plan) ReadBack(outSrc catalog.Source, jobs int, maxMem int64) *ReadBack {
	lim := limits.For(maxMem, jobs)
	return &ReadBack{plan: j, outSrc: outSrc, lim: lim, mem: newMemBudget(lim.MaxMem), byDS: j.unitsByDataset()}
}

// Close frees the budget.
func (r *ReadBack) Close() { r.mem.close() }

// unitsByDataset is the job's units of each dataset, in job order.
func (j *Plan) unitsByDataset() map[int][]*Unit {
	byDS := map[int][]*Unit{}
	for i := range j.Units {
		byDS[j.Units[i].Dataset] = append(byDS[j.Units[i].Dataset], &j.Units[i])
	}
	return byDS
}

// CheckBudget refuses a commit budget of maxMem bytes (<= 0: the default)
// that cannot hold the job's largest unit with its read, as the shards'
// rewrite does (checkUnitBudget): commit reads the output back within the
// same one budget, whichever check it runs.
func (j *Plan) CheckBudget(maxMem int64) error {
	lim := limits.For(maxMem, 0)
	byDS := j.unitsByDataset()
	for di := range j.Datasets {
		if us := byDS[di]; len(us) == 0 {
			continue
		} else if err := checkUnitBudget(lim, j.largestUnit(us), false); err != nil {
			return arrayErr(j.Datasets[di].key(), err)
		}
	}
	return nil
}

// Dataset reads dataset di of the plan back from out (the stage's
// catalog) unit by unit, in plan order, and hands each unit with the
// digest (Plan.Digest) of its bytes to check; an error of check stops the
// read (a *Difference comes back as it is). A dataset missing from out or
// of another shape than planned is a *Difference. It returns the dataset's
// digest: none of the algorithms is combinable, so it is computed from
// this pass, or a second read-only one in row-major order where the units
// are tiles, boxes of chunks or cuboids (but a sparse dataset's, over its
// stored chunks: from this pass). A plan of --digest none
// (Plan.Digest NoDigest) has no digest to take: its datasets are only
// checked for presence and shape, and nothing is read ("").
func (r *ReadBack) Dataset(ctx context.Context, di int, out *catalog.Store, check func(u *Unit, sum string) error) (string, error) {
	job, d, us := r.plan, &r.plan.Datasets[di], r.byDS[di]
	mem := r.mem
	k := d.key()
	lim := r.lim
	if err := checkUnitBudget(lim, job.largestUnit(us), false); err != nil {
		return "", arrayErr(k, err)
	}
	o, err := out.Array(k)
	if errors.Is(err, catalog.ErrNotFound) {
		return "", &Difference{where(k) + ": missing from output"}
	}
	if err != nil {
		return "", arrayErr(k, err)
	}
	if err := checkArray(o); err != nil {
		return "", fmt.Errorf("rewriter: commit: output %s: %w", where(k), err)
	}
	if !slices.Equal(o.Shape, d.Shape) {
		return "", &Difference{fmt.Sprintf("%s: shape out=%v planned %v", where(k), o.Shape, d.Shape)}
	}
	h := job.Digest.New()
	if h == nil {
		return "", nil // no unit digest journaled, no digest wanted
	}
	outBlocks := indexBlocks(o)
	// Every unit is charged to the budget, with its largest read, before
	// its buffers exist.
	cost := make([]int64, len(us))
	admit := func(ctx context.Context, i int) error {
		n := job.box(us[i]).Elements() * int64(d.ElemSize)
		cost[i] = n + lim.ReadLimit
		return mem.acquire(ctx, cost[i])
	}
	release := func(i int) { mem.release(cost[i]) }
	boxes := make([]catalog.Box, len(us))
	for i, u := range us {
		boxes[i] = job.box(u)
	}
	rowMajor := rowMajorRun(d.Shape, boxes)
	err = orderedAdmit(ctx, lim.Jobs, len(us), admit, release, func(ctx context.Context, i int) ([]byte, error) {
		return assembleSlab(ctx, input{r.outSrc, lim.ReadLimit}, outBlocks, job.box(us[i]), leFill(o))
	}, func(i int, ob []byte) error {
		if err := check(us[i], job.Digest.Hex(ob)); err != nil {
			return err
		}
		switch {
		case rowMajor:
			h.Write(ob)
		case d.Sparse: // units of whole stored chunks in grid order (planner.SparseUnits)
			return eachChunk(boxes[i], d.Chunk, func(c []int64) error {
				off := make([]int64, len(c))
				for k := range c {
					off[k] = c[k] * d.Chunk[k]
				}
				hashStoredChunk(h, ob, boxes[i], d.Shape, d.Chunk, off, int64(d.ElemSize))
				return nil
			})
		}
		return nil
	})
	if err != nil {
		var diff *Difference
		if errors.As(err, &diff) {
			return "", diff
		}
		return "", arrayErr(k, err)
	}
	if rowMajor || d.Sparse { // a sparse dataset's digest is over its stored chunks, never its holes
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	// Tiles, boxes of chunks, cuboids: the digest takes a pass of its own
	// over the output in row-major units.
	hashUnits, _, err := units(o.Shape, planner.Layout{Kind: planner.Contiguous}, o.DType.Size, lim.UnitTarget)
	if err != nil {
		return "", arrayErr(k, err)
	}
	sum, err := hashArray(ctx, pipeEnv{mem: mem, readLimit: lim.ReadLimit}, r.outSrc, o, hashUnits, job.Digest, lim.Jobs)
	if err != nil {
		return "", arrayErr(k, err)
	}
	return sum, nil
}
