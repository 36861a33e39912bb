package catalog

import (
	"encoding/json"
	"testing"
)

// A run's profile keeps every key, zeros included (an input that needed no
// reads has read_calls 0, not no read_calls); a journaled job's leaves out
// what its journal cannot know and keeps what it summed.
func TestManifestIOKeys(t *testing.T) {
	keys := func(io ManifestIO) map[string]any {
		b, err := json.Marshal(&Manifest{IO: &io})
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ IO map[string]any }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m.IO
	}
	run := keys(ManifestIO{LogicalBytes: 8, WallSeconds: 0.5})
	for _, k := range journalUnknown {
		if _, ok := run[k]; !ok {
			t.Errorf("a run's io has no %q: %v", k, run)
		}
	}
	if run["read_calls"] != 0.0 || run["logical_bytes"] != 8.0 {
		t.Errorf("run io = %v", run)
	}
	journal := keys(ManifestIO{From: "journal", LogicalBytes: 8, ReadBytes: 6, WriteBytes: 8, UnitSeconds: 1.5, WallSeconds: 3})
	for _, k := range journalUnknown {
		if _, ok := journal[k]; ok {
			t.Errorf("a journaled job's io has %q: %v", k, journal)
		}
	}
	if journal["from"] != "journal" || journal["read_bytes"] != 6.0 || journal["unit_seconds"] != 1.5 {
		t.Errorf("journal io = %v", journal)
	}
	var back ManifestIO
	if b, _ := json.Marshal(ManifestIO{From: "journal", ReadBytes: 6}); json.Unmarshal(b, &back) != nil || back.ReadBytes != 6 || back.From != "journal" {
		t.Errorf("journal io does not read back: %+v", back)
	}
}
