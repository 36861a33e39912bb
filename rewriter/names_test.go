package rewriter

import (
	"strings"
	"testing"
)

// Long variable names make file names of at most maxFileBase+".h5" bytes,
// deterministically, distinct for distinct names that share a long prefix.
func TestFileNamesLong(t *testing.T) {
	a, b := strings.Repeat("v", 5000), strings.Repeat("v", 4999)+"w"
	got := fileNames([]string{a, b, strings.Repeat("x", maxFileBase)}, ".h5")
	again := fileNames([]string{a, b, strings.Repeat("x", maxFileBase)}, ".h5")
	for i := range got {
		if got[i] != again[i] {
			t.Errorf("not deterministic: %q, %q", got[i], again[i])
		}
		if len(got[i]) > maxFileBase+len(".h5") || len("."+got[i]+".tmp") > 255 {
			t.Errorf("name %d: %d bytes", i, len(got[i]))
		}
	}
	if got[0] == got[1] || !strings.HasPrefix(got[0], strings.Repeat("v", maxFileBase-17)+"~") {
		t.Errorf("long names %q, %q", got[0], got[1])
	}
	if got[2] != strings.Repeat("x", maxFileBase)+".h5" {
		t.Errorf("a name of exactly maxFileBase bytes was changed: %q", got[2])
	}
}
