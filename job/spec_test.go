package job

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// TestSignatureRoundTrip: a spec's signature is tagged with SpecSchema and
// reads back into the same spec; a signature written before the tag (the
// JSON of the old jobSpec) reads as SpecSchema and decides the same output.
func TestSignatureRoundTrip(t *testing.T) {
	cost := planner.DefaultCostParams()
	for _, s := range []Spec{
		{Input: "/data/in", Layout: Contiguous},
		{Input: "/data/in", Vars: []string{"E/*"}, Layout: Chunked, Chunks: []int64{2, 2, 2}, Deflate: 3, Shards: 4, UnitBytes: 1 << 20, NetCDF: true, Strict: true},
		{Input: "/data/in", Layout: Auto, Readers: 64, Cost: &cost},
		{Input: "/data/in", Layout: Chunked, ChunkAuto: true, Readers: 8, Deflate: 4},
		{Input: "/data/in", Layout: Merged, Scope: "node", RanksPerNode: 4, Digest: catalog.NoDigest},
		{Input: "/data/in", Layout: Contiguous, Digest: catalog.XXH64},
	} {
		sig := s.Signature()
		if !strings.HasPrefix(sig, `{"spec":"`+SpecSchema+`",`) {
			t.Errorf("signature not tagged first: %s", sig)
		}
		got, err := parseSignature(sig)
		if err != nil {
			t.Fatal(err)
		}
		want := s
		want.Schema = SpecSchema
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		if d := signatureDiff(sig, got.Signature()); d != "" {
			t.Errorf("a signature differs from itself: %s", d)
		}
	}
	// The old jobSpec's JSON (no "spec" tag) of a plain contiguous run.
	old := `{"input":"/data/in","layout":"contiguous","storage":{"StripeCount":0,"StripeSize":0,"NoStripe":false,"Align":0,"AlignThreshold":0},"shards":0}`
	now := Spec{Input: "/data/in", Layout: Contiguous}.Signature()
	if d := signatureDiff(old, now); d != "" {
		t.Errorf("an untagged signature of the same options differs: %s", d)
	}
	if s, err := parseSignature(old); err != nil || s.Schema != SpecSchema || s.Layout != Contiguous {
		t.Errorf("untagged signature: %+v %v", s, err)
	}
	// --digest none before Spec.Digest: "no_digest":true reads as
	// Digest NoDigest and decides the same output; another digest differs.
	oldNone := `{"input":"/data/in","layout":"contiguous","storage":{"StripeCount":0,"StripeSize":0,"NoStripe":false,"Align":0,"AlignThreshold":0},"shards":1,"no_digest":true}`
	none := Spec{Input: "/data/in", Layout: Contiguous, Shards: 1, Digest: catalog.NoDigest}
	if d := signatureDiff(oldNone, none.Signature()); d != "" || !sameJob(oldNone, none.Signature()) {
		t.Errorf("an old --digest none signature differs from Digest none: %s", d)
	}
	if s, err := parseSignature(oldNone); err != nil || s.Digest != catalog.NoDigest {
		t.Errorf("old --digest none signature: %+v %v", s, err)
	}
	xxh := none
	xxh.Digest = catalog.XXH64
	if d := signatureDiff(oldNone, xxh.Signature()); d != `digest was "none", now "xxh64"` {
		t.Errorf("none -> xxh64: diff %q", d)
	}
	xxh.Digest = catalog.SHA256
	if d := signatureDiff(xxh.Signature(), none.Signature()); d != `digest was null, now "none"` {
		t.Errorf("sha256 -> none: diff %q", d)
	}
	if _, err := parseSignature(`{"spec":"relayout-job-spec/99"}`); err == nil {
		t.Error("a signature of an unknown version accepted")
	}
}

// TestSignatureDiff: shards and unit size do not decide the output (run
// and run --resume recognise each other's output); every other option
// does, named with both values. sameJob also compares how work is cut.
func TestSignatureDiff(t *testing.T) {
	base := Spec{Input: "/in", Layout: Contiguous}
	resume := base
	resume.Shards, resume.UnitBytes = 1, 256<<10
	if d := signatureDiff(base.Signature(), resume.Signature()); d != "" {
		t.Errorf("shards/unit size decide the output: %s", d)
	}
	if sameJob(base.Signature(), resume.Signature()) {
		t.Error("jobs cut differently count as the same job")
	}
	if !sameJob(resume.Signature(), resume.Signature()) {
		t.Error("a job differs from itself")
	}
	chunked := base
	chunked.Layout, chunked.Chunks, chunked.Deflate = Chunked, []int64{2, 2, 2}, 4
	d := signatureDiff(base.Signature(), chunked.Signature())
	for _, want := range []string{`layout was "contiguous", now "chunked"`, `chunks was null, now [2,2,2]`, `deflate was null, now 4`} {
		if !strings.Contains(d, want) {
			t.Errorf("diff %q lacks %q", d, want)
		}
	}
	if d := signatureDiff("not json", base.Signature()); !strings.Contains(d, "recorded options") {
		t.Errorf("unreadable signature: %q", d)
	}
}

// TestValidate: the cross-flag checks are usage errors naming the flags;
// --compress alone picks the chunked layout with automatic chunks.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		spec Spec
		want string // substring of the error; "" for none
	}{
		{"default", Spec{Readers: 8}, ""},
		{"unknown layout", Spec{Layout: "tiled", Given: Given{Layout: true}}, `run: --layout "tiled": want contiguous, chunked, merged or auto`},
		{"chunked without chunks", Spec{Layout: Chunked, Given: Given{Layout: true}}, "run: --layout chunked needs exactly one of --chunk-shape or --chunks"},
		{"chunked with both", Spec{Layout: Chunked, ChunkShape: []int64{4}, Chunks: []int64{2}, Given: Given{Layout: true}}, "needs exactly one of"},
		{"chunks without chunked", Spec{Chunks: []int64{2, 2}}, "run: --chunk-shape and --chunks need --layout chunked"},
		{"compress contiguous", Spec{Layout: Contiguous, Deflate: 4, Given: Given{Layout: true}}, "run: --compress needs --layout chunked or auto"},
		{"compress merged", Spec{Layout: Merged, Scope: "rank", Deflate: 4, Given: Given{Layout: true}}, "--compress needs"},
		{"readers without auto", Spec{Readers: 8, Given: Given{Readers: true}}, "run: --readers and --cost-model need --layout auto"},
		{"readers range", Spec{Layout: Auto, Readers: 2000, Given: Given{Layout: true, Readers: true}}, "run: --readers 2000: want 1 to 1024"},
		{"scope without merged", Spec{Given: Given{Scope: true}}, "run: --scope and --ranks-per-node need --layout merged"},
		{"bad scope", Spec{Layout: Merged, Scope: "galaxy"}, "run: --scope:"},
		{"node scope", Spec{Layout: Merged, Scope: "node"}, "run: --scope node needs --ranks-per-node >= 1"},
		{"resume digest none", Spec{Shards: 1, Digest: catalog.NoDigest}, ""}, // journals without unit sha256
		{"unit size", Spec{UnitBytes: 1 << 20}, "run: --unit-size needs --resume"},
		{"auto", Spec{Layout: Auto, Readers: 64, Given: Given{Layout: true, Readers: true}}, ""},
		{"compress alone", Spec{Deflate: 4, Readers: 8}, ""},
	} {
		s := c.spec
		err := s.Validate("run")
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a usage error containing %q", c.name, err, c.want)
		}
	}
	s := Spec{Deflate: 4, Readers: 8}
	if err := s.Validate("run"); err != nil || s.Layout != Chunked || !s.ChunkAuto || s.Readers != 8 {
		t.Errorf("--compress alone: %+v %v", s, err)
	}
	if o := s.PlanOptions(); o.Layout != planner.Chunked || !o.AutoChunks || o.ChunkShape != nil {
		t.Errorf("--compress alone plans %+v", o)
	}
	s = Spec{Readers: 8}
	if err := s.Validate("run"); err != nil || s.Layout != DefaultLayout || s.Readers != 0 || s.ChunkAuto {
		t.Errorf("default: %+v %v (readers only recorded for the auto layouts)", s, err)
	}
	s = Spec{Layout: Merged, Scope: "node", RanksPerNode: 2, Shards: 2}
	if err := s.Validate("plan"); err != nil || s.Scope != "node" || s.RanksPerNode != 2 {
		t.Errorf("plan -o merged: %+v %v (shards write the merged layout too)", s, err)
	}
	s = Spec{Layout: Merged, Scope: "node", Shards: 2}
	if err := s.Validate("plan"); err == nil || !strings.Contains(err.Error(), "--scope node needs --ranks-per-node") {
		t.Errorf("plan -o merged --scope node without ranks per node: %v", err)
	}
}
