package catalog

import (
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every float64 bit pattern an attribute can hold survives the catalog's
// JSON: NaN (canonical and with payloads or sign), the infinities, -0,
// subnormals and the extremes.
func TestAttrNonFiniteRoundTrip(t *testing.T) {
	vals := []float64{
		math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1,
		math.Float64frombits(0x7ff4000000000001), // signalling NaN with payload
		math.Float64frombits(0xfff8000000000000), // negative quiet NaN
		math.Float64frombits(0x7ff8dead0000beef),
		math.SmallestNonzeroFloat64, -math.MaxFloat64, math.MaxFloat64, 0.1, 1e-300,
		float64(float32(math.NaN())),
	}
	in := Attr{Name: "_FillValue", Type: "float64", Floats: vals}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"NaN"`) || !strings.Contains(string(b), `"-Infinity"`) {
		t.Errorf("JSON %s", b)
	}
	var out Attr
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Floats) != len(vals) {
		t.Fatalf("%d values back, want %d", len(out.Floats), len(vals))
	}
	for i, v := range vals {
		if math.Float64bits(out.Floats[i]) != math.Float64bits(v) {
			t.Errorf("value %d: bits %#x back, want %#x (JSON %s)", i, math.Float64bits(out.Floats[i]), math.Float64bits(v), b)
		}
	}
	// Finite values are written as encoding/json writes them (catalogs and
	// manifests of earlier versions read unchanged).
	plain := Attr{Name: "x", Type: "float64", Scalar: true, Floats: []float64{0.25}}
	if b, _ := json.Marshal(plain); string(b) != `{"name":"x","type":"float64","scalar":true,"floats":[0.25]}` {
		t.Errorf("finite attr JSON %s", b)
	}
	// Every field round-trips, the record mark included (it puts custom
	// record attributes back on the openPMD record group).
	full := Attr{Name: "custom_rec", Type: "int16", Ints: []int64{-3, 4}, Record: true, Species: true}
	if b, err := json.Marshal(full); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(out, full) {
		t.Errorf("%+v back from %s, want %+v (%v)", out, b, full, err)
	}
	for _, bad := range []string{`"nan"`, `"NaN:0x0000000000000001"`, `"Inf"`, `"NaN:0x7ff8"`} {
		var a Attr
		if err := json.Unmarshal([]byte(`{"name":"x","type":"float64","floats":[`+bad+`]}`), &a); err == nil {
			t.Errorf("%s accepted as a float", bad)
		}
	}
}

// Non-finite attributes go through the SQLite store (dataset and array
// attributes) bit for bit.
func TestStoreNonFiniteAttrs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nan := math.Float64frombits(0x7ff4000000000001)
	info := DatasetInfo{Path: "in.h5", Root: "/d", Format: "hdf5",
		Attrs: []Attr{{Name: "time", Type: "float64", Floats: []float64{1, math.NaN()}}}}
	if err := s.SetInfo(info); err != nil {
		t.Fatal(err)
	}
	a := sampleArray(3)
	a.Attrs = []Attr{{Name: "_FillValue", Type: "float64", Scalar: true, Floats: []float64{nan}},
		{Name: "valid_max", Type: "float64", Scalar: true, Floats: []float64{math.Inf(1)}}}
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	gotInfo, err := s.Info()
	if err != nil {
		t.Fatal(err)
	}
	if f := gotInfo.Attrs[0].Floats; len(f) != 2 || f[0] != 1 || !math.IsNaN(f[1]) {
		t.Errorf("dataset attrs back: %+v", gotInfo.Attrs)
	}
	got, err := s.Array(a.Key())
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(got.Attrs[0].Floats[0]) != 0x7ff4000000000001 || !math.IsInf(got.Attrs[1].Floats[0], 1) {
		t.Errorf("array attrs back: %+v", got.Attrs)
	}
}
