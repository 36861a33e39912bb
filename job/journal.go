package job

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"relayout/rewriter"
)

// A shard's journal lists the work units it finished, so that a rerun of a
// killed shard skips them. One file per shard under OUT/.relayout/journal:
//
//	+-----------+-----------+---------------------+
//	| len  u32  | crc  u32  | payload (len bytes) |  record 0: header {"job": id}
//	+-----------+-----------+---------------------+
//	| len  u32  | crc  u32  | payload             |  record 1..n: JournalRecord (JSON)
//	+-----------+-----------+---------------------+
//
// Little-endian; crc is CRC-32C of the payload. Records are appended in
// batches: the unit's data is made durable first (fsync of the output files
// and the part file), then the batch of records is written and the journal
// fsynced, so a record never names data that a crash can lose. Replay stops
// at the first record that is short or fails its CRC (a batch cut by a
// crash) and truncates the file there: those units are simply redone.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// JournalRecord is one record of a journal: the header (Job), a finished
// unit (the engine's rewriter.UnitRecord, its fields inline) or the
// shard's final record (Done).
type JournalRecord struct {
	Job string `json:"job,omitempty"` // header record only
	rewriter.UnitRecord
	Done bool `json:"done,omitempty"` // the shard finished every unit
}

// Journal appends records to one shard's journal file; it is the
// rewriter.Journal RewriteShard records the shard's finished units in.
type Journal struct {
	f       *os.File
	pending []JournalRecord
	last    time.Time
	// sync makes the data of pending records durable before they are
	// written (fsync of output and part files): the engine's (SetSync).
	sync       func() error
	batchUnits int
	batchEvery time.Duration
}

// replayJournal reads path's valid records (header excluded). A missing file
// or one for another job (header mismatch) yields none. The file is
// truncated after the last valid record.
func replayJournal(path, job string) ([]JournalRecord, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job: journal: %w", err)
	}
	defer f.Close()
	recs, good, err := readRecords(f)
	if err != nil {
		return nil, fmt.Errorf("job: journal %s: %w", path, err)
	}
	if len(recs) == 0 || recs[0].Job != job {
		return nil, f.Truncate(0)
	}
	if err := f.Truncate(good); err != nil {
		return nil, fmt.Errorf("job: journal %s: %w", path, err)
	}
	return recs[1:], nil
}

// journaledUnits counts the units path's journal lists for job. Unlike
// replayJournal it only reads (a damaged tail is left for the rerun to
// cut).
func journaledUnits(path, job string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	recs, _, _ := readRecords(f)
	if len(recs) == 0 || recs[0].Job != job {
		return 0
	}
	units := map[int]bool{}
	for _, r := range recs[1:] {
		if !r.Done {
			units[r.Unit] = true
		}
	}
	return len(units)
}

// readRecords returns the records before the first damaged one and the
// byte length they span.
func readRecords(r io.Reader) ([]JournalRecord, int64, error) {
	br := bufio.NewReader(r)
	var recs []JournalRecord
	var good int64
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return recs, good, nil // EOF or a cut header
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if n > 64<<20 {
			return recs, good, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return recs, good, nil
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
			return recs, good, nil
		}
		var rec JournalRecord
		if err := json.Unmarshal(payload, &rec); err != nil {
			return recs, good, nil
		}
		recs = append(recs, rec)
		good += 8 + int64(n)
	}
}

// openJournal opens path for appending; a new or emptied file gets the
// header naming job.
func openJournal(path, job string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("job: journal: %w", err)
	}
	j := &Journal{f: f, last: time.Now(), batchUnits: 64, batchEvery: time.Second}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		if err := j.write([]JournalRecord{{Job: job}}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return j, nil
}

// SetSync sets what makes the data of pending records durable before
// they are written (nil: nothing).
func (j *Journal) SetSync(sync func() error) { j.sync = sync }

// Add queues the record of a finished unit and flushes the batch when it
// is large or old enough.
func (j *Journal) Add(rec rewriter.UnitRecord) error { return j.add(JournalRecord{UnitRecord: rec}) }

// Finish records that the shard finished every unit, and closes.
func (j *Journal) Finish() error {
	if err := j.add(JournalRecord{Done: true}); err != nil {
		return err
	}
	return j.Close()
}

func (j *Journal) add(rec JournalRecord) error {
	j.pending = append(j.pending, rec)
	if len(j.pending) >= j.batchUnits || time.Since(j.last) >= j.batchEvery {
		return j.Flush()
	}
	return nil
}

// Flush makes the pending units' data durable, then their records.
func (j *Journal) Flush() error {
	if len(j.pending) == 0 {
		return nil
	}
	if j.sync != nil {
		if err := j.sync(); err != nil {
			return fmt.Errorf("job: journal: sync data: %w", err)
		}
	}
	if err := j.write(j.pending); err != nil {
		return err
	}
	j.pending = j.pending[:0]
	j.last = time.Now()
	return nil
}

func (j *Journal) write(recs []JournalRecord) error {
	var buf []byte
	for _, r := range recs {
		p, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("job: journal: %w", err)
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(p)))
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(p, crcTable))
		buf = append(buf, p...)
	}
	if _, err := j.f.Write(buf); err != nil {
		return fmt.Errorf("job: journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("job: journal: %w", err)
	}
	return nil
}

// abandon closes the file without writing what is pending: records whose
// data the engine could not make durable.
func (j *Journal) abandon() {
	j.pending = nil
	j.f.Close()
}

// Close flushes and closes.
func (j *Journal) Close() error {
	err := j.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// jobRecords replays every shard's journal and returns the record of each
// finished unit (an in-memory job's, kept by its engine, has no journal).
// When units are missing the error wraps ErrIncomplete and names each
// unfinished shard and the command that finishes it.
func jobRecords(work string, job *Job) (map[int]rewriter.UnitRecord, error) {
	recs := map[int]rewriter.UnitRecord{}
	if job.InMemory() {
		recs = job.Finished() // an in-memory job: no journals
	}
	for s := 0; !job.InMemory() && s < job.Shards; s++ {
		rs, err := replayJournal(journalPath(work, s, job.Shards), job.ID)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if !r.Done && job.Units[min(max(r.Unit, 0), len(job.Units)-1)].Shard == s {
				recs[r.Unit] = r.UnitRecord
			}
		}
	}
	missing := make([]int, job.Shards)
	total := make([]int, job.Shards)
	for _, u := range job.Units {
		total[u.Shard]++
		if _, ok := recs[u.ID]; !ok {
			missing[u.Shard]++
		}
	}
	var msgs []error
	for s := range job.Shards {
		if missing[s] > 0 {
			msgs = append(msgs, fmt.Errorf("%s: %d of %d units not done (run: relayout rewrite OUT --shard %d/%d)",
				shardName(s, job.Shards), missing[s], total[s], s, job.Shards))
		}
	}
	if len(msgs) > 0 {
		return recs, fmt.Errorf("job: commit: %w: %w", ErrIncomplete, errors.Join(msgs...))
	}
	return recs, nil
}
