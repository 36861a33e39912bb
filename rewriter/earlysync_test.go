package rewriter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEarlySync: a sync starts once earlySyncBytes are written, not
// before; a failed fdatasync (a pipe cannot be synced) is the run's error,
// naming the file; a nil earlySync does nothing.
func TestEarlySync(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.h5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s earlySync
	s.wrote(f, earlySyncBytes-1)
	if got := s.pending.Load(); got != earlySyncBytes-1 {
		t.Fatalf("pending %d before the threshold, want %d", got, earlySyncBytes-1)
	}
	s.wrote(f, 1)
	if err := s.wait(); err != nil {
		t.Fatalf("sync of a file: %v", err)
	}
	if got := s.pending.Load(); got != 0 || s.busy.Load() {
		t.Fatalf("after a sync: pending %d busy %v, want 0 false", got, s.busy.Load())
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var p earlySync
	p.wrote(w, earlySyncBytes)
	err = p.wait()
	if err == nil || !strings.Contains(err.Error(), w.Name()) || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("sync of a pipe: %v, want EINVAL naming %s", err, w.Name())
	}

	var none *earlySync
	none.wrote(f, 1<<40)
	if err := none.wait(); err != nil {
		t.Fatal(err)
	}
}
