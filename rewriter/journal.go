package rewriter

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

// ChunkRef locates one encoded chunk a shard wrote to its part file.
type ChunkRef struct {
	Offset []int64 `json:"o"` // chunk's first element in the dataset
	Pos    int64   `json:"p"` // byte position in the part file
	Len    int64   `json:"l"`
}

// JournalRecord is one finished unit (or the shard's final record).
type JournalRecord struct {
	Job       string     `json:"job,omitempty"` // header record only
	Unit      int        `json:"u"`
	Sum       string     `json:"sha,omitempty"` // digest (Job.Digest) of the unit's logical bytes (row-major little-endian)
	Chunks    []ChunkRef `json:"c,omitempty"`
	PartEnd   int64      `json:"pe,omitempty"` // part file length after this unit
	Nanos     int64      `json:"ns,omitempty"`
	BlocksIn  int        `json:"bi,omitempty"`
	ReadBytes int64      `json:"rb,omitempty"`
	Written   int64      `json:"wb,omitempty"`
	Done      bool       `json:"done,omitempty"` // the shard finished every unit
}

// Journal appends records to one shard's journal file.
type Journal struct {
	f       *os.File
	pending []JournalRecord
	last    time.Time
	// Sync makes the data of pending records durable before they are
	// written (fsync of output and part files).
	Sync       func() error
	BatchUnits int
	BatchEvery time.Duration
}

// ReplayJournal reads path's valid records (header excluded). A missing file
// or one for another job (header mismatch) yields none. The file is
// truncated after the last valid record.
func ReplayJournal(path, job string) ([]JournalRecord, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rewriter: journal: %w", err)
	}
	defer f.Close()
	recs, good, err := readRecords(f)
	if err != nil {
		return nil, fmt.Errorf("rewriter: journal %s: %w", path, err)
	}
	if len(recs) == 0 || recs[0].Job != job {
		return nil, f.Truncate(0)
	}
	if err := f.Truncate(good); err != nil {
		return nil, fmt.Errorf("rewriter: journal %s: %w", path, err)
	}
	return recs[1:], nil
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

// OpenJournal opens path for appending; a new or emptied file gets the
// header naming job.
func OpenJournal(path, job string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("rewriter: journal: %w", err)
	}
	j := &Journal{f: f, last: time.Now(), BatchUnits: 64, BatchEvery: time.Second}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		if err := j.write([]JournalRecord{{Job: job}}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return j, nil
}

// Add queues rec and flushes the batch when it is large or old enough.
func (j *Journal) Add(rec JournalRecord) error {
	j.pending = append(j.pending, rec)
	if len(j.pending) >= j.BatchUnits || time.Since(j.last) >= j.BatchEvery {
		return j.Flush()
	}
	return nil
}

// Flush makes the pending units' data durable, then their records.
func (j *Journal) Flush() error {
	if len(j.pending) == 0 {
		return nil
	}
	if j.Sync != nil {
		if err := j.Sync(); err != nil {
			return fmt.Errorf("rewriter: journal: sync data: %w", err)
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
			return fmt.Errorf("rewriter: journal: %w", err)
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(p)))
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(p, crcTable))
		buf = append(buf, p...)
	}
	if _, err := j.f.Write(buf); err != nil {
		return fmt.Errorf("rewriter: journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("rewriter: journal: %w", err)
	}
	return nil
}

// Close flushes and closes.
func (j *Journal) Close() error {
	err := j.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}
