package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryRealDataset runs `run` and then `verify` on every readable input
// in ../shared/data, in the default layout (operators relayout cannot
// decode are refused by blosc_test.go's TestBloscRunVerify). Element-level oracles (h5py, bpls, yt) live in the
// per-format tests; this is the "every set goes through end to end" sweep.
func TestEveryRealDataset(t *testing.T) {
	inputs := []string{
		"bp3/heat-adios2/heat.bp",
		"bp3/multiblock-2.5.0/BP3Multiblock2D4x2.bp",
		"bp4/archive/Attribute.2.5.bp4.bp",
		"bp4/archive/Common.2.10.bp4.bp",
		"bp4/compressed-2.7.1/compressed_blosc_271.bp",
		"bp4/compressed-2.7.1/compressed_bzip2_271.bp",
		"bp4/compressed-2.7.1/notcompressed_271.bp",
		"bp4/generated-lb/lb-bp4.bp",
		"bp4/heat-2.7.1/heat.bp",
		"bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp",
		"bp4/picongpu-lwfa/pic_n2.bp",
		"bp5/archive/Attribute.2.10.bp5.bp",
		"bp5/archive/Attribute.i386.bp5.bp",
		"bp5/archive/Attribute.s390x.bp5.bp",
		"bp5/archive/Common.2.10.bp5.bp",
		"bp5/archive/Common.i386.bp5.bp",
		"bp5/archive/Common.s390x.bp5.bp",
		"bp5/generated-lb/lb-bp5.bp",
		"bp5/quokka-2d/plt00758.bp",
		"amrex/pelelmex-3d",
		"amrex/pelelmex-2d",
		"chombo/mushy-layer/plt000100.2d.hdf5",
		"chombo/mushy-layer/plt025000.2d.hdf5",
		"chombo/mushy-layer/chk000100.3d.hdf5",
		"netcdf/e3sm-io-f-cdf2/f_case_h1.nc",
		"netcdf/e3sm-io-f-cdf5/f_case_h1.nc",
		"netcdf/mpas-mesh-0rec", // a folder holding one classic file
		"netcdf/mpas-o-timeseries/timeSeries.nc",
	}
	for _, rel := range inputs {
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			in := sharedData(t, rel)
			out := filepath.Join(t.TempDir(), "out")
			mustRun(t, "run", in, "-o", out, "-q")
			m := readManifest(t, out)
			if len(m.Variables) == 0 {
				t.Fatal("no variable written")
			}
			mustRun(t, "verify", in, out)
			// plan and inspect work on every readable set too (issue 5).
			mustRun(t, "plan", in, "--json", "--readers", "8")
			svg := filepath.Join(t.TempDir(), "slice.svg")
			mustRun(t, "inspect", in, "--svg", svg, "--var", m.Variables[0].Name)
			if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
				t.Errorf("inspect wrote no SVG: %v", err)
			}
		})
	}
}
