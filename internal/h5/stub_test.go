//go:build !cgo

package h5

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestStub: built without cgo, opening or creating a file fails with an
// error that wraps catalog.ErrUnsupported and says why.
func TestStub(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.h5")
	_, errOpen := Open(path)
	_, errCreate := Create(path)
	_, errRW := OpenRWWith(path, CreateOptions{})
	for _, err := range []error{errOpen, errCreate, errRW} {
		if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "built without cgo: HDF5 unavailable") || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v: want one naming %s, saying HDF5 is unavailable without cgo, wrapping ErrUnsupported", err, path)
		}
	}
	if ok, msg := FilterAvailable(1); ok || !strings.Contains(msg, "without cgo") {
		t.Errorf("FilterAvailable(1) = %v, %q", ok, msg)
	}
}
