package fileio

// The one way relayout opens an input file (every format reader, the block
// pool, and internal/h5 before it hands a path to H5Fopen):
//
//	open(path, O_RDONLY|O_NONBLOCK|O_CLOEXEC)   a FIFO without a writer does not block
//	fcntl(fd, F_SETFL, flags &^ O_NONBLOCK)     ordinary blocking reads from here on
//	fstat(fd)                                   what was opened, not what the name was
//	regular file?  no -> close, refuse          FIFO, device, directory, socket
//
// Symlinks: open follows them, so a symlink that resolves to a regular file is
// read like that file wherever it points; one that resolves to anything else,
// dangles or loops is refused with its name. Names taken from metadata are
// kept inside the dataset root by the callers (Files.resolve, InsideRoot).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"relayout/catalog"
)

// Open opens path for reading under the discipline above. The error names
// path and wraps catalog.ErrNotFound (missing), catalog.ErrUnsupported (not
// a regular file, unreadable) or catalog.ErrCorrupt (a symlink loop, a name
// too long): all of them input problems.
func Open(path string) (*os.File, int64, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, 0, openError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blockio: %s: %w", path, err)
	}
	if err := regular(path, st); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// CheckRegular opens and closes path under the discipline and returns its
// size: for files another library (HDF5) will open by name.
func CheckRegular(path string) (int64, error) {
	f, size, err := Open(path)
	if err != nil {
		return 0, err
	}
	f.Close()
	return size, nil
}

// ReadFile reads a whole (metadata) file under the discipline, refusing
// files larger than max bytes before allocating.
func ReadFile(path string, max int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > max {
		return nil, fmt.Errorf("blockio: %s: %d bytes, more than the %d a metadata file may have: %w", path, size, max, catalog.ErrUnsupported)
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("blockio: %s: %w", path, err)
	}
	return buf[:n], nil
}

// IsRegular reports whether path (following symlinks) is a regular file,
// without opening it.
func IsRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// CheckEntry applies the discipline to a directory entry found by listing a
// dataset directory: a regular file or a symlink that resolves to one is
// accepted; anything else is refused with its name (a series never loses a
// file silently).
func CheckEntry(dir string, de fs.DirEntry) error {
	if de.Type().IsRegular() {
		return nil
	}
	p := filepath.Join(dir, de.Name())
	st, err := os.Stat(p)
	if err != nil {
		return openError(p, err)
	}
	return regular(p, st)
}

// InsideRoot joins a relative file name taken from metadata to root and
// refuses names that leave it ("..", absolute paths). Symlinks below root are
// followed by Open like any other file.
func InsideRoot(root, name string) (string, error) {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return "", catalog.Corrupt("", root, -1, "file name %q from metadata must be relative to the input root", name)
	}
	clean := filepath.Clean(filepath.FromSlash(name))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", catalog.Corrupt("", root, -1, "file name %q from metadata leaves the input root", name)
	}
	return filepath.Join(root, clean), nil
}

func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("blockio: %s: is %s, not a regular file (relayout reads regular files, or symlinks to them, only): %w",
		path, what, catalog.ErrUnsupported)
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("blockio: %s: %w", path, catalog.ErrNotFound)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("blockio: %s: a part of the path is not a directory: %w", path, catalog.ErrNotFound)
	case errors.Is(err, syscall.ELOOP):
		return catalog.Corrupt("", path, -1, "too many levels of symbolic links (a symlink loop)")
	case errors.Is(err, syscall.ENAMETOOLONG):
		return catalog.Corrupt("", path, -1, "file name too long")
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("blockio: %s: permission denied: %w", path, catalog.ErrUnsupported)
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.EOPNOTSUPP):
		return fmt.Errorf("blockio: %s: not a regular file (a socket or device): %w", path, catalog.ErrUnsupported)
	}
	return fmt.Errorf("blockio: %s: %w", path, err)
}

// SyncFile makes the file at path durable (fsync), reporting the first of
// the sync's and the close's errors.
func SyncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir makes the entries of directory dir durable (a rename or create
// in it), as fsync of the directory does.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
