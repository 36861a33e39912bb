//go:build unix

package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"relayout/catalog"
)

// Open never blocks on a FIFO (no writer) and refuses everything that is
// not a regular file by name; symlinks to regular files are followed, even
// out of the directory.
func TestOpenDiscipline(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "real"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "plain"), []byte("abc"), 0o644)
	os.Symlink(filepath.Join(outside, "real"), filepath.Join(dir, "link-out"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(dir, "link-fifo"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	cases := []struct {
		name     string
		size     int64
		sentinel error
		mention  string
	}{
		{"plain", 3, nil, ""},
		{"link-out", 10, nil, ""},
		{"fifo", 0, catalog.ErrUnsupported, "named pipe (FIFO)"},
		{"link-fifo", 0, catalog.ErrUnsupported, "named pipe (FIFO)"},
		{"sub", 0, catalog.ErrUnsupported, "is a directory"},
		{"zero", 0, catalog.ErrUnsupported, "character device"},
		{"loop", 0, catalog.ErrCorrupt, "symlink loop"},
		{"dangling", 0, catalog.ErrNotFound, ""},
		{"missing", 0, catalog.ErrNotFound, ""},
		{strings.Repeat("n", 5000), 0, catalog.ErrCorrupt, "file name too long"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		f, size, err := Open(p)
		if c.sentinel == nil {
			if err != nil || size != c.size {
				t.Errorf("%s: size %d, %v", c.name[:min(len(c.name), 20)], size, err)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", c.name[:min(len(c.name), 20)])
			continue
		}
		if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v (want %v, naming the path and %q)", c.name[:min(len(c.name), 20)], err, c.sentinel, c.mention)
		}
		if _, err := CheckRegular(p); !errors.Is(err, c.sentinel) {
			t.Errorf("CheckRegular %s: %v", c.name[:min(len(c.name), 20)], err)
		}
	}
	// Directory entries of a series: regular or symlink to regular only.
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		err := CheckEntry(dir, de)
		ok := de.Name() == "plain" || de.Name() == "link-out"
		if (err == nil) != ok {
			t.Errorf("CheckEntry %s: %v", de.Name(), err)
		}
	}
}
