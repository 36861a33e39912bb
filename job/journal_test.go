package job

import (
	"os"
	"path/filepath"
	"testing"

	"relayout/rewriter"
)

func TestJournalReplayTruncatedLastRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shard.log")
	j, err := openJournal(path, "job1")
	if err != nil {
		t.Fatal(err)
	}
	for u := range 5 {
		if err := j.Add(rewriter.UnitRecord{Unit: u, Sum: "ab"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	full, _ := os.Stat(path)
	// Cut the last record in half, as a crash in the middle of a write would.
	if err := os.Truncate(path, full.Size()-7); err != nil {
		t.Fatal(err)
	}
	recs, err := replayJournal(path, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[3].Unit != 3 {
		t.Fatalf("replay after a cut record: %d records %+v, want units 0-3", len(recs), recs)
	}
	// The damaged tail is gone and appending continues cleanly.
	j, err = openJournal(path, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Add(rewriter.UnitRecord{Unit: 4, Sum: "cd"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	recs, _ = replayJournal(path, "job1")
	if len(recs) != 5 || recs[4].Sum != "cd" {
		t.Fatalf("after resume: %+v", recs)
	}
	// A corrupted byte in the middle stops replay at that record.
	b, _ := os.ReadFile(path)
	b[len(b)-3] ^= 0xff
	os.WriteFile(path, b, 0o644)
	if recs, _ = replayJournal(path, "job1"); len(recs) != 4 {
		t.Fatalf("bad crc: %d records, want 4", len(recs))
	}
	// A journal of another job is discarded.
	if recs, _ = replayJournal(path, "job2"); len(recs) != 0 {
		t.Fatalf("other job: %d records", len(recs))
	}
}
