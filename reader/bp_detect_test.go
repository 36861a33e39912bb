package reader

import (
	"path/filepath"
	"testing"

	"relayout/internal/testkit"
)

// TestOpenBP checks that reader.Open routes BP4 directories and BP3 files
// (with sub-files) to reader/bp and applies the selection to mapped names.
func TestOpenBP(t *testing.T) {
	root := testkit.SharedData(t, "")
	for _, c := range []struct{ path, format, sel, first string }{
		{"bp4/generated-lb/lb-bp4.bp", "bp4", "fields/*", "fields/Bx"},
		{"bp3/heat-adios2/heat.bp", "bp3", "", "T"},
		{"bp4/picongpu-lwfa/pic_n2.bp", "openpmd-bp4", "E", "E/x"},
	} {
		var opts Options
		if c.sel != "" {
			opts.Vars = []string{c.sel}
		}
		ds, err := Open(filepath.Join(root, c.path), opts)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if ds.Info().Format != c.format {
			t.Errorf("%s: format %q, want %q", c.path, ds.Info().Format, c.format)
		}
		if v := vars(t, ds); len(v) == 0 || v[0] != c.first {
			t.Errorf("%s: variables %v, want %s first", c.path, v, c.first)
		}
		ds.Close()
	}
}
