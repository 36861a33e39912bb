package job

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader"
)

// Committing a job moves its finished, verified stage to OUT by renames.
// The renames are journaled as one commit record, made durable before the
// first of them, so that a commit killed at any instant — between any two
// renames — is finished (rolled forward) by whichever relayout command next
// takes OUT's lock (run, run --resume, plan -o, commit):
//
//	OUT/.relayout/committing   the commit record of a commit in progress
//	OUT/.relayout/committed    the same bytes, renamed from committing once
//	                           every rename is durable: the job is done
//
//	+-----------+-----------+--------------------------------+
//	| len  u32  | crc  u32  | payload (len bytes)            |  one record
//	+-----------+-----------+--------------------------------+
//
// Little-endian; crc is CRC-32C of the payload, a CommitRecord in JSON:
//
//	{"schema": "relayout-commit/1", "job": ID, "signature": options,
//	 "inputs": [{"name", "size", "mtime_ns"}...],        input files when planned
//	 "renames": [{"from": "stage/x.h5", "to": "x.h5"}...],  manifest last
//	 "removes": ["x_0001_0003.nc"...]}                   run --append: after the renames
//
// "from" is relative to OUT/.relayout (always under stage/), "to" is a name
// directly in OUT. The record is written to a temporary file, fsynced,
// renamed to committing and the directory fsynced, so it is either whole or
// absent. Rolling forward takes the renames in order: a "from" that still
// exists is renamed over "to" (replacing a file of that name, as --force
// promises); a missing "from" whose "to" exists was renamed before the
// kill. Then the files "removes" names (OUT's files the new manifest no longer names) are
// removed, a missing one being removed before the kill; OUT is fsynced and committing renamed to
// committed. Doing it
// twice does nothing more, so a rerun after a kill during the roll-forward
// is as good as one after a kill during the first attempt. The manifest is
// the last rename: a reader that finds OUT/relayout.json finds every file
// it names. committed keeps the job's signature and input files, so that a
// rerun of the same command can tell a finished output from another job's.

// CommitSchema names the commit record's format.
const CommitSchema = "relayout-commit/1"

// CommitRecord is the payload of OUT/.relayout/committing and committed.
type CommitRecord struct {
	Schema    string      `json:"schema"`
	Job       string      `json:"job,omitempty"`
	Signature string      `json:"signature"`
	Inputs    []InputFile `json:"inputs"`
	Renames   []Rename    `json:"renames"`
	// Removes are files directly in OUT that the new manifest no longer
	// names (run --append: a time series file named by its record range,
	// replaced by one of a wider range), removed after the renames, the
	// manifest's included: a reader never finds a manifest naming a file
	// that is gone.
	Removes []string `json:"removes,omitempty"`
}

// Rename is one move of the commit: work/From to out/To.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// InputFile is one input file as the job found it.
type InputFile struct {
	Name    string `json:"name"` // relative to the input path ("." for a file input)
	Size    int64  `json:"size"`
	MTimeNs int64  `json:"mtime_ns"`
}

// killHook is RELAYOUT_TEST_KILL_AT=rename:N (tests only): the process
// kills itself with SIGKILL just before the commit's rename N (0-based; N
// equal to the number of renames: after the last, before committed).
// RELAYOUT_TEST_KILL_AT=commit (killHookAt("commit")) kills it once the
// stage is written and verified, just before the commit record.
func killHook(i int) {
	v, ok := strings.CutPrefix(os.Getenv("RELAYOUT_TEST_KILL_AT"), "rename:")
	if !ok {
		return
	}
	if n, err := strconv.Atoi(v); err == nil && n == i {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns
	}
}

// killHookAt is RELAYOUT_TEST_KILL_AT=point (tests only): SIGKILL at the
// named point.
func killHookAt(point string) {
	if os.Getenv("RELAYOUT_TEST_KILL_AT") == point {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns
	}
}

// inputFiles lists the regular files of the input path (a file or a
// directory, walked without following symlinked directories) with their
// sizes and modification times, sorted by name.
func inputFiles(path string) ([]InputFile, error) {
	if matches := reader.GlobMatches(path); matches != nil {
		// A pattern selecting a stream of history files: the files it
		// matches now (a folder's, such as SCORPIO's NAME.nc.bp, each
		// under the folder's name), named as they match.
		var files []InputFile
		for _, m := range matches {
			fs, err := inputFiles(m)
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				f.Name = filepath.ToSlash(filepath.Join(m, f.Name))
				files = append(files, f)
			}
		}
		return files, nil
	}
	path = reader.InputPath(path)
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("job: input %s: %w", path, err)
	}
	if !st.IsDir() {
		return []InputFile{{Name: ".", Size: st.Size(), MTimeNs: st.ModTime().UnixNano()}}, nil
	}
	var files []InputFile
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Stat(p) // follows a symlinked file
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		files = append(files, InputFile{Name: filepath.ToSlash(rel), Size: fi.Size(), MTimeNs: fi.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("job: input %s: %w", path, err)
	}
	slices.SortFunc(files, func(a, b InputFile) int { return strings.Compare(a.Name, b.Name) })
	return files, nil
}

// inputsDiffer describes how the input files now differ from those a job
// recorded ("" when they match): the first few files added, removed or
// changed in size or modification time.
func inputsDiffer(was, now []InputFile) string {
	old := map[string]InputFile{}
	for _, f := range was {
		old[f.Name] = f
	}
	var diffs []string
	for _, f := range now {
		o, ok := old[f.Name]
		delete(old, f.Name)
		switch {
		case !ok:
			diffs = append(diffs, f.Name+" is new")
		case o.Size != f.Size:
			diffs = append(diffs, fmt.Sprintf("%s: %d bytes, was %d", f.Name, f.Size, o.Size))
		case o.MTimeNs != f.MTimeNs:
			diffs = append(diffs, fmt.Sprintf("%s: modified %s, was %s", f.Name,
				time.Unix(0, f.MTimeNs).UTC().Format(time.RFC3339Nano), time.Unix(0, o.MTimeNs).UTC().Format(time.RFC3339Nano)))
		}
	}
	var gone []string
	for n := range old {
		gone = append(gone, n)
	}
	slices.Sort(gone)
	for _, n := range gone {
		diffs = append(diffs, n+" is gone")
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

func encodeCommitRecord(r *CommitRecord) ([]byte, error) {
	p, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(p)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(p, crcTable))
	return append(b, p...), nil
}

// decodeCommitRecord parses a commit record read from path; damage wraps
// catalog.ErrCorrupt, naming the file and the offset.
func decodeCommitRecord(path string, b []byte) (*CommitRecord, error) {
	if len(b) < 8 {
		return nil, catalog.Corrupt("relayout", path, 0, "commit record shorter than its header")
	}
	n := binary.LittleEndian.Uint32(b[:4])
	if int64(n) != int64(len(b)-8) {
		return nil, catalog.Corrupt("relayout", path, 0, "commit record of length %d, the file holds %d bytes after the header", n, len(b)-8)
	}
	p := b[8:]
	if crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(b[4:8]) {
		return nil, catalog.Corrupt("relayout", path, 4, "commit record: CRC mismatch")
	}
	var r CommitRecord
	if err := json.Unmarshal(p, &r); err != nil {
		return nil, catalog.Corrupt("relayout", path, 8, "commit record: %v", err)
	}
	if r.Schema != CommitSchema {
		return nil, catalog.Corrupt("relayout", path, 8, "commit record: schema %q, want %q", r.Schema, CommitSchema)
	}
	for _, rn := range r.Renames {
		from, ok := strings.CutPrefix(rn.From, "stage/")
		if !ok || !validStageName(from) || !(validFileName(rn.To) || rn.To == catalog.ManifestName) {
			return nil, catalog.Corrupt("relayout", path, 8, "commit record: rename %q -> %q outside the stage or OUT", rn.From, rn.To)
		}
	}
	for _, n := range r.Removes {
		if !validFileName(n) {
			return nil, catalog.Corrupt("relayout", path, 8, "commit record: remove %q outside OUT", n)
		}
	}
	return &r, nil
}

// validFileName reports whether name can be a file directly in OUT.
func validFileName(name string) bool {
	return name != "" && filepath.Base(name) == name && name != "." && name != ".." &&
		name != catalog.ManifestName && !strings.ContainsRune(name, os.PathSeparator)
}

func validStageName(n string) bool {
	return n != "" && filepath.Base(n) == n && n != "." && n != ".."
}

// readCommitRecord reads work's commit record: the pending one (pending
// true) or that of the committed job. A missing record wraps
// catalog.ErrNotFound.
func readCommitRecord(work string) (rec *CommitRecord, pending bool, err error) {
	for _, name := range []string{committingFile, committedFile} {
		path := filepath.Join(work, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("job: %w", err)
		}
		r, err := decodeCommitRecord(path, b)
		return r, name == committingFile, err
	}
	return nil, false, fmt.Errorf("job: %s: no commit record: %w", work, catalog.ErrNotFound)
}

// commitStage journals and performs the commit of work/stage to out: the
// manifest m is written into the stage, then the commit record (job id,
// signature and input files from rec, the renames: every file m names, the
// manifest last), then the renames are rolled forward. Files of the same
// name in out are replaced.
func commitStage(work, out string, m *catalog.Manifest, rec CommitRecord) error {
	stage := filepath.Join(work, "stage")
	if err := writeManifest(stage, m); err != nil {
		return err
	}
	names := manifestFiles(m)
	rec.Schema = CommitSchema
	rec.Renames = nil
	if rec.Inputs == nil {
		rec.Inputs = []InputFile{}
	}
	for _, n := range append(names, catalog.ManifestName) {
		if n != catalog.ManifestName && !validFileName(n) {
			return catalog.Corrupt("relayout", catalog.ManifestName, -1, "commit: file name %q", n)
		}
		rec.Renames = append(rec.Renames, Rename{From: "stage/" + n, To: n})
	}
	b, err := encodeCommitRecord(&rec)
	if err != nil {
		return fmt.Errorf("job: commit: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("job: commit: %w", err)
	}
	if err := writeFileAtomic(work, committingFile, b); err != nil {
		return fmt.Errorf("job: commit: %w", err)
	}
	_, err = rollForward(work, out)
	return err
}

// rollForward finishes the commit recorded in work/committing, if any
// (true when there was one). The caller holds OUT's lock.
func rollForward(work, out string) (bool, error) {
	path := filepath.Join(work, committingFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("job: commit: %w", err)
	}
	rec, err := decodeCommitRecord(path, b)
	if err != nil {
		return true, err
	}
	for i, rn := range rec.Renames {
		killHook(i)
		from, to := filepath.Join(work, filepath.FromSlash(rn.From)), filepath.Join(out, rn.To)
		_, ferr := os.Lstat(from)
		switch {
		case ferr == nil:
			if err := os.Rename(from, to); err != nil {
				return true, fmt.Errorf("job: commit: %w", err)
			}
		case errors.Is(ferr, os.ErrNotExist):
			if _, err := os.Lstat(to); err != nil {
				return true, fmt.Errorf("job: commit: %s: neither staged (%s) nor in %s (removed by hand?); rerun with --force: %w",
					rn.To, from, out, catalog.ErrNotFound)
			}
			// renamed before a kill
		default:
			return true, fmt.Errorf("job: commit: %w", ferr)
		}
	}
	killHook(len(rec.Renames))
	for _, n := range rec.Removes {
		// After the manifest's rename: no manifest names it now.
		if err := os.Remove(filepath.Join(out, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return true, fmt.Errorf("job: commit: %w", err)
		}
	}
	if err := fileio.SyncDir(out); err != nil {
		return true, fmt.Errorf("job: commit: %w", err)
	}
	if err := os.Rename(path, filepath.Join(work, committedFile)); err != nil {
		return true, fmt.Errorf("job: commit: %w", err)
	}
	if err := fileio.SyncDir(work); err != nil {
		return true, fmt.Errorf("job: commit: %w", err)
	}
	os.RemoveAll(filepath.Join(work, "parts"))
	return true, nil
}

// uncommit undoes the finished state of out before a --force rerun
// replaces it: the manifest goes first (a reader no longer takes out for a
// complete output), then the committed record. Files of the old output stay
// until the new commit replaces those of the same name.
func uncommit(work, out string) error {
	if err := os.Remove(filepath.Join(out, catalog.ManifestName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("job: %w", err)
	}
	if err := fileio.SyncDir(out); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	for _, n := range []string{committedFile, committingFile} {
		if err := os.Remove(filepath.Join(work, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("job: %w", err)
		}
	}
	return fileio.SyncDir(work)
}
