package netcdf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// realSets are the folders of ../shared/data/netcdf.
var realSets = []string{
	"e3sm-io-f-cdf2", "e3sm-io-f-cdf5", "e3sm-io-g-cdf2", "e3sm-io-g-cdf5",
	"mpas-mesh-0rec", "mpas-o-monthly", "mpas-o-timeseries",
}

// realFiles returns every real classic file, the gzipped ones gunzipped
// into a temporary folder.
func realFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	tmp := t.TempDir()
	for _, set := range realSets {
		dir := testkit.SharedData(t, "netcdf/"+set)
		des, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			p := filepath.Join(dir, de.Name())
			switch {
			case strings.HasSuffix(de.Name(), ".nc"):
				out = append(out, p)
			case strings.HasSuffix(de.Name(), ".nc.gz"):
				dst := filepath.Join(tmp, set+"-"+strings.TrimSuffix(de.Name(), ".gz"))
				testkit.Gunzip(t, p, dst)
				out = append(out, dst)
			}
		}
	}
	return out
}

// need skips (or fails under CI=true) when a tool is missing.
func need(t *testing.T, name string, args ...string) {
	t.Helper()
	if err := exec.Command(name, args...).Run(); err != nil {
		testkit.Unavailable(t, "%s unavailable (Debian pnetcdf-bin, python3-netcdf4): %v", name, err)
	}
}

func needPython(t *testing.T) { need(t, testkit.Python, "-c", "import netCDF4, numpy") }

// extent is a start and end offset as ncoffsets prints them.
type extent struct{ start, end int64 }

var (
	ncoVar   = regexp.MustCompile(`^\t(\w+)\s+([^\s(:]+)(\(.*\))?:$`)
	ncoStart = regexp.MustCompile(`start file offset =\s+(\d+)`)
	ncoEnd   = regexp.MustCompile(`end   file offset =\s+(\d+)`)
)

// ncoffsets runs `ncoffsets -r -s file` (PnetCDF) and returns each
// variable's extents: one for a fixed variable, one per record for a
// record variable, and its type name.
func ncoffsets(t *testing.T, file string) (map[string][]extent, map[string]string) {
	t.Helper()
	out, err := exec.Command("ncoffsets", "-r", "-s", file).CombinedOutput()
	if err != nil {
		t.Fatalf("ncoffsets %s: %v\n%s", file, err, out)
	}
	ext, types := map[string][]extent{}, map[string]string{}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := ncoVar.FindStringSubmatch(line); m != nil {
			cur = m[2]
			types[cur] = m[1]
			ext[cur] = []extent{}
			continue
		}
		if m := ncoStart.FindStringSubmatch(line); m != nil && cur != "" {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			ext[cur] = append(ext[cur], extent{start: n})
		}
		if m := ncoEnd.FindStringSubmatch(line); m != nil && cur != "" {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			ext[cur][len(ext[cur])-1].end = n
		}
	}
	return ext, types
}

// oracleAttr is nc_oracle.py's attribute.
type oracleAttr struct {
	Type   string            `json:"type"`
	Values []json.RawMessage `json:"values"`
}

type oracleDump struct {
	Global map[string]oracleAttr            `json:"global"`
	Vars   map[string]map[string]oracleAttr `json:"vars"`
	Types  map[string]string                `json:"types"`
	Fills  map[string]string                `json:"fills"`
	Dims   map[string][]string              `json:"dims"`
}

// oracle runs nc_oracle.py dump: attributes of file, and the values of
// vars (big-endian bytes) as netCDF-C reads them.
func oracle(t *testing.T, file string, vars ...string) (*oracleDump, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(testkit.Python, append([]string{"testdata/nc_oracle.py", "dump", file, dir}, vars...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nc_oracle.py dump %s: %v", file, err)
	}
	d := &oracleDump{}
	if err := json.Unmarshal(out, d); err != nil {
		t.Fatalf("nc_oracle.py output: %v", err)
	}
	vals := map[string][]byte{}
	for _, v := range vars {
		b, err := os.ReadFile(filepath.Join(dir, v+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		vals[v] = b
	}
	return d, vals
}

// sameAttr reports whether a catalog attribute equals the oracle's.
func sameAttr(a catalog.Attr, o oracleAttr) bool {
	if a.Type != o.Type {
		return false
	}
	switch {
	case a.Type == "string":
		var s string
		return len(o.Values) == 1 && json.Unmarshal(o.Values[0], &s) == nil && a.Strings[0] == s
	case a.Floats != nil:
		if len(a.Floats) != len(o.Values) {
			return false
		}
		for i, f := range a.Floats {
			var s string
			if json.Unmarshal(o.Values[i], &s) != nil {
				return false
			}
			g, err := strconv.ParseFloat(strings.Trim(s, "'"), 64)
			if s == "nan" {
				if f == f {
					return false
				}
				continue
			}
			if err != nil || g != f {
				return false
			}
		}
		return true
	case a.Ints != nil:
		if len(a.Ints) != len(o.Values) {
			return false
		}
		for i, v := range a.Ints {
			if string(o.Values[i]) != strconv.FormatInt(v, 10) {
				return false
			}
		}
		return true
	case a.Uints != nil:
		if len(a.Uints) != len(o.Values) {
			return false
		}
		for i, v := range a.Uints {
			if string(o.Values[i]) != strconv.FormatUint(v, 10) {
				return false
			}
		}
		return true
	}
	return len(o.Values) == 0
}

// assemble reads every block of a through src into the dense row-major
// array (big-endian, as stored), holes holding a.Fill.
func assemble(t *testing.T, src catalog.Source, a *catalog.Array) []byte {
	t.Helper()
	es := int64(a.DType.Size)
	n := a.Elements()
	out := make([]byte, n*es)
	for i := int64(0); i < n; i++ {
		copy(out[i*es:], a.Fill)
	}
	strides := make([]int64, len(a.Shape))
	s := int64(1)
	for k := len(a.Shape) - 1; k >= 0; k-- {
		strides[k] = s
		s *= a.Shape[k]
	}
	for i := range a.Blocks {
		b := &a.Blocks[i]
		data, err := catalog.ReadBlock(t.Context(), src, b, a.DType)
		if err != nil {
			t.Fatalf("%s block %d: %v", a.Var, i, err)
		}
		if len(a.Shape) == 0 {
			copy(out, data)
			continue
		}
		// Row by row (the last axis is contiguous in both).
		r := len(a.Shape) - 1
		row := b.Box.Count[r] * es
		idx := make([]int64, r)
		for j := int64(0); ; j++ {
			lin := b.Box.Lower[r]
			for k := range idx {
				lin += (b.Box.Lower[k] + idx[k]) * strides[k]
			}
			copy(out[lin*es:lin*es+row], data[j*row:(j+1)*row])
			k := r - 1
			for ; k >= 0; k-- {
				if idx[k]++; idx[k] < b.Box.Count[k] {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	return out
}

// execPython runs the Debian Python (netCDF4, numpy) on args.
func execPython(args ...string) ([]byte, error) {
	return exec.Command(testkit.Python, args...).CombinedOutput()
}
