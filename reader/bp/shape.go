package bp

// Detection by shape, for a dataset whose index is too damaged for the
// detection by content (IsBP5, IsBP4, IsBP3):
//
//	DIR/                        BP5   mmd.0 beside md.idx or md.0
//	  md.idx  md.0  mmd.0             (md.idx, mmd.0 or md.0 may be the
//	  data.0 ... data.N               damaged or missing part)
//	DIR/                        BP4   md.idx and md.0, or md.0 and data.0,
//	  md.idx  md.0                    without mmd.0 (BP5 when md.idx's
//	  data.0 ... data.N               version byte 37 says 5)
//	NAME.bp  NAME.bp.dir/       BP3   a .bp file beside its sub-file folder
//
// Open on such a path then reports what is broken (a catalog.CorruptError
// naming the file and offset) instead of "not a recognised format".

import (
	"os"
	"path/filepath"
	"strings"

	"relayout/internal/fileio"
)

// Shape names the BP format path has by its files alone ("BP5", "BP4",
// "BP3"), "" when it has none of these shapes. Entries are looked at with
// Lstat (a FIFO or a symlink loop in place of a file still counts: Open
// refuses it by name); only md.idx's version byte is read, from a regular
// file.
func Shape(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if !st.IsDir() {
		if strings.HasSuffix(path, ".bp") {
			if dst, err := os.Stat(path + ".dir"); err == nil && dst.IsDir() {
				return "BP3"
			}
		}
		return ""
	}
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(path, name))
		return err == nil
	}
	idx, md := has("md.idx"), has("md.0")
	switch {
	case has("mmd.0") && (idx || md):
		return "BP5"
	case idx && md || md && has("data.0"):
		if idx && versionByte(filepath.Join(path, "md.idx")) == 5 {
			return "BP5"
		}
		return "BP4"
	}
	return ""
}

// versionByte is byte 37 of a BP4/BP5 md.idx (the BP format version), -1
// when it cannot be read.
func versionByte(path string) int {
	f, _, err := fileio.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 37); err != nil {
		return -1
	}
	return int(b[0])
}

// OpenShaped opens path as the format Shape names, whatever its index
// header says, so that the damage is reported by the format's own checks.
func OpenShaped(path, format string, cfg Config) (*Dataset, error) {
	switch format {
	case "BP5":
		return openBP5(path, cfg)
	case "BP4":
		return openBP4(path, cfg)
	}
	return openBP3(path, cfg)
}
