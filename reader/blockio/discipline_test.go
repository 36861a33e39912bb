//go:build unix

package blockio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"relayout/catalog"
)

// TestFilesDiscipline: the block pool opens files through fileio's
// discipline (a symlink to a regular file is read, a FIFO refused without
// blocking) and keeps names from metadata inside its root.
func TestFilesDiscipline(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(outside, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := NewFiles(dir, 4)
	defer files.Close()
	if b, err := files.ReadAt(t.Context(), "link-out", 2, 3); err != nil || string(b) != "234" {
		t.Errorf("pool read through a symlink: %q %v", b, err)
	}
	if _, err := files.ReadAt(t.Context(), "fifo", 0, 1); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("pool read of a FIFO: %v", err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x"} {
		if _, err := files.Size(t.Context(), bad); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("name %q from metadata: %v", bad, err)
		}
	}
}
