package catalog

// JSON form of attribute values that JSON numbers cannot hold.
//
// An attribute's floats are a JSON list whose finite entries are numbers
// (exactly as encoding/json writes a float64, so catalogs and manifests of
// earlier versions read unchanged) and whose other entries are strings:
//
//	"floats": [1, "NaN", "Infinity", "-Infinity", "NaN:0x7ff4000000000001"]
//
//	"NaN"                  the canonical quiet NaN, bits 0x7ff8000000000000
//	"NaN:0x<16 hex>"       any other NaN, with its exact bits (sign, payload)
//	"Infinity"/"-Infinity" the infinities
//
// Every float64 value therefore round-trips bit for bit (-0 is written "-0").

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

const canonicalNaN = 0x7ff8000000000000

// jsonFloat is a float64 whose JSON form may be a string (see above).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	case math.IsNaN(v):
		if bits := math.Float64bits(v); bits != canonicalNaN {
			return fmt.Appendf(nil, `"NaN:0x%016x"`, bits), nil
		}
		return []byte(`"NaN"`), nil
	}
	return json.Marshal(v)
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		var v float64
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*f = jsonFloat(v)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseFloatToken(s)
	if err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

// ParseFloatToken reads the string form of a non-finite float ("NaN",
// "NaN:0x...", "Infinity", "-Infinity").
func ParseFloatToken(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.Float64frombits(canonicalNaN), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if hex, ok := strings.CutPrefix(s, "NaN:0x"); ok && len(hex) == 16 {
		bits, err := strconv.ParseUint(hex, 16, 64)
		if err == nil && math.IsNaN(math.Float64frombits(bits)) {
			return math.Float64frombits(bits), nil
		}
	}
	return 0, Corrupt("relayout", "", -1, "catalog value: bad float %q", s)
}

// attrJSON is Attr with Floats in their JSON form. attrFields has Attr's
// fields but not its methods, so every other field (Record, Species and
// any added later) is encoded by encoding/json as it stands; the outer
// Floats, being shallower, replaces the embedded one.
type attrFields Attr

type attrJSON struct {
	attrFields
	Floats []jsonFloat `json:"floats,omitempty"`
}

// MarshalJSON writes a's floats so that NaN and the infinities survive.
func (a Attr) MarshalJSON() ([]byte, error) {
	j := attrJSON{attrFields: attrFields(a)}
	j.attrFields.Floats = nil
	if a.Floats != nil {
		j.Floats = make([]jsonFloat, len(a.Floats))
		for i, v := range a.Floats {
			j.Floats[i] = jsonFloat(v)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes (and plain number lists).
func (a *Attr) UnmarshalJSON(b []byte) error {
	var j attrJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*a = Attr(j.attrFields)
	if j.Floats != nil {
		a.Floats = make([]float64, len(j.Floats))
		for i, v := range j.Floats {
			a.Floats[i] = float64(v)
		}
	}
	return nil
}
