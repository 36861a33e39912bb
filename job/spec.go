package job

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/planner"
)

// Layout is a target layout kind of a job. Its values are the strings of
// the flags, the signatures and the manifests ("contiguous", ...), so that
// outputs and jobs written before the type existed stay readable.
type Layout string

// The layout kinds.
const (
	Contiguous Layout = planner.Contiguous // one contiguous dataset per array
	Chunked    Layout = planner.Chunked    // chunks of ChunkShape, Chunks, or per array (ChunkAuto)
	Merged     Layout = planner.Merged     // the merged cuboids of Scope as write units
	Auto       Layout = planner.AutoLayout // chosen per array by the read-cost model for Readers
)

// DefaultLayout is the layout of run and plan when --layout is not given
// (and --compress is not: then Chunked with ChunkAuto). README: "Layouts".
const DefaultLayout = Contiguous

// Layouts are the kinds, in the order of the --layout help.
var Layouts = []Layout{Contiguous, Chunked, Merged, Auto}

// SpecSchema tags every job signature written since the signature was
// versioned; a signature without the tag is read as this version.
const SpecSchema = "relayout-job-spec/1"

// Spec is everything that decides a job's output, and how its work is cut
// (Shards, UnitBytes). Its JSON is the job's signature (Signature): a
// resume, a rerun or a commit with other options is refused naming the
// difference (signatureDiff). Budgets (Env.MaxMem, Env.Jobs) are not part
// of it: they change how fast, not what.
type Spec struct {
	Schema string   `json:"spec"` // SpecSchema (set by Signature)
	Input  string   `json:"input"`
	Vars   []string `json:"vars,omitempty"`
	Layout Layout   `json:"layout"`
	// ChunkShape or Chunks (a decomposition) with Chunked; neither with
	// ChunkAuto, when each array's chunk shape is planner.AutoChunk's.
	ChunkShape []int64 `json:"chunk_shape,omitempty"`
	Chunks     []int64 `json:"chunks,omitempty"`
	ChunkAuto  bool    `json:"chunk_auto,omitempty"`
	// Readers and Cost are the read-cost model of Auto and ChunkAuto
	// (Cost nil: the built-in figures).
	Readers int                 `json:"readers,omitempty"`
	Cost    *planner.CostParams `json:"cost_model,omitempty"`
	Deflate int                 `json:"deflate,omitempty"` // 1-9: shuffle+deflate of every chunk
	Storage fsinfo.Override     `json:"storage"`
	// Shards > 0 is a journaled job (plan -o, run --resume) cut into that
	// many shards of units of at most UnitBytes (0: the default); 0 is a
	// plain run.
	Shards    int   `json:"shards"`
	UnitBytes int64 `json:"unit_bytes,omitempty"`
	NetCDF    bool  `json:"netcdf,omitempty"`
	Strict    bool  `json:"strict,omitempty"` // refuse an incomplete input
	// Scope and RanksPerNode of Merged.
	Scope        string `json:"scope,omitempty"`
	RanksPerNode int    `json:"ranks_per_node,omitempty"`
	// Digest is the algorithm of the manifest's and the journals' digests
	// (run --digest). The zero value, SHA256, is left out of the JSON, so
	// that signatures written before the choice (sha256, or
	// "no_digest":true for none: allFields reads it as "digest":"none")
	// decide the same output; a resume with another digest is refused.
	Digest catalog.Digest `json:"digest,omitempty"`
	// Fill (--fill) writes a partly covered array dense when contiguous,
	// holes as explicit fill values; without it the array is chunked and
	// its holes cost no bytes (planner.HoleLayout).
	Fill bool `json:"fill,omitempty"`
	// NoViews (--no-views): no ParaView views. Left out of the JSON when
	// false, so that earlier signatures decide the same output.
	NoViews bool `json:"no_views,omitempty"`

	// Given is which flags the user set, for Validate (not in the
	// signature).
	Given Given `json:"-"`
	// Path is the input as the user gave it, which a plain run opens and
	// names in its messages and manifest ("": Input).
	Path string `json:"-"`
}

func (s Spec) path() string {
	if s.Path == "" {
		return s.Input
	}
	return s.Path
}

// Given records the flags given on the command line whose mere presence
// Validate checks against the layout.
type Given struct {
	Layout       bool // --layout (else DefaultLayout, or Chunked with ChunkAuto after --compress)
	Readers      bool // --readers (run: only with the auto layouts)
	Scope        bool // --scope (run: only with merged)
	RanksPerNode bool // --ranks-per-node (run: only with merged)
	CostModel    bool // --cost-model (run: only with the auto layouts)
}

// Signature is the spec's JSON, tagged with SpecSchema.
func (s Spec) Signature() string {
	s.Schema = SpecSchema
	b, _ := json.Marshal(s)
	return string(b)
}

// parseSignature reads a signature (of any version so far) back into a Spec.
func parseSignature(sig string) (Spec, error) {
	var s Spec
	if err := json.Unmarshal([]byte(sig), &s); err != nil {
		return s, err
	}
	var legacy struct {
		NoDigest bool `json:"no_digest"` // --digest none before Digest
	}
	if json.Unmarshal([]byte(sig), &legacy) == nil && legacy.NoDigest {
		s.Digest = catalog.NoDigest
	}
	if s.Schema == "" {
		s.Schema = SpecSchema
	}
	if s.Schema != SpecSchema {
		return s, fmt.Errorf("job signature schema %q, want %q", s.Schema, SpecSchema)
	}
	return s, nil
}

// outputFields is a signature's options that decide the output, as a map:
// how the work was cut (shards, unit size) is left out, so that run and run
// --resume of the same options recognise each other's output. A signature
// written before the tag counts as SpecSchema.
func outputFields(sig string) (map[string]any, error) {
	m, err := allFields(sig)
	if err != nil {
		return nil, err
	}
	delete(m, "shards")
	delete(m, "unit_bytes")
	return m, nil
}

func allFields(sig string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(sig), &m); err != nil {
		return nil, err
	}
	if _, ok := m["spec"]; !ok {
		m["spec"] = SpecSchema
	}
	if m["no_digest"] == true { // --digest none before Spec.Digest
		m["digest"] = catalog.NoDigest.String()
	}
	delete(m, "no_digest")
	return m, nil
}

// signatureDiff names the options in which two signatures differ ("" when
// they decide the same output).
func signatureDiff(was, now string) string {
	a, err1 := outputFields(was)
	b, err2 := outputFields(now)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("recorded options %s", was)
	}
	return fieldsDiff(a, b)
}

// jobDiff names the options in which two signatures plan different jobs
// (the output, or how it is cut: shards, unit size); "" for the same job.
func jobDiff(was, now string) string {
	a, err1 := allFields(was)
	b, err2 := allFields(now)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("recorded options %s", was)
	}
	return fieldsDiff(a, b)
}

// sameJob reports whether two signatures plan the same job: the same
// output cut the same way.
func sameJob(was, now string) bool { return jobDiff(was, now) == "" }

func fieldsDiff(a, b map[string]any) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			wj, _ := json.Marshal(a[k])
			nj, _ := json.Marshal(b[k])
			diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", k, wj, nj))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// Validate settles the defaults that depend on other flags and checks the
// flags against each other, as verb (run, plan) has them: --compress
// without --layout picks the chunked layout with a chunk shape per array
// (ChunkAuto); the errors wrap ErrUsage (exit 2).
func (s *Spec) Validate(verb string) error {
	if s.Layout == "" {
		s.Layout = DefaultLayout
	}
	if !s.Given.Layout && s.Deflate > 0 && s.Layout == DefaultLayout && s.ChunkShape == nil && s.Chunks == nil {
		s.Layout, s.ChunkAuto = Chunked, true
	}
	known := false
	for _, l := range Layouts {
		known = known || s.Layout == l
	}
	if !known {
		return Usagef("%s: --layout %q: want contiguous, chunked, merged or auto", verb, s.Layout)
	}
	if s.Layout != Merged && (s.Given.Scope || s.Given.RanksPerNode) {
		return Usagef("%s: --scope and --ranks-per-node need --layout merged", verb)
	}
	if s.Layout == Merged {
		sc, err := planner.ParseScope(s.Scope)
		if err != nil {
			return Usagef("%s: --scope: %v", verb, err)
		}
		if s.RanksPerNode < 0 || (sc == planner.ScopeNode && s.RanksPerNode < 1) {
			return Usagef("%s: --scope node needs --ranks-per-node >= 1", verb)
		}
	} else {
		s.Scope, s.RanksPerNode = "", 0
	}
	autoCost := s.Layout == Auto || s.ChunkAuto
	if (s.Given.Readers || s.Given.CostModel) && !autoCost {
		return Usagef("%s: --readers and --cost-model need --layout auto", verb)
	}
	if s.Readers < 1 || s.Readers > planner.MaxReaders {
		if autoCost || s.Given.Readers {
			return Usagef("%s: --readers %d: want 1 to %d", verb, s.Readers, planner.MaxReaders)
		}
	}
	if s.Cost != nil {
		if err := s.Cost.Check(); err != nil {
			return Usagef("%s: --cost-model: %v", verb, err)
		}
	}
	if !autoCost {
		s.Readers, s.Cost = 0, nil
	}
	if s.Layout == Chunked && !s.ChunkAuto && (s.ChunkShape == nil) == (s.Chunks == nil) {
		return Usagef("%s: --layout chunked needs exactly one of --chunk-shape or --chunks", verb)
	}
	if s.Layout != Chunked && (s.ChunkShape != nil || s.Chunks != nil) {
		return Usagef("%s: --chunk-shape and --chunks need --layout chunked", verb)
	}
	if s.Deflate < 0 || s.Deflate > 9 {
		return Usagef("%s: --compress level %d: must be 1-9", verb, s.Deflate)
	}
	if s.Deflate > 0 && (s.Layout == Contiguous || s.Layout == Merged) {
		return Usagef("%s: --compress needs --layout chunked or auto (HDF5 filters apply to chunks; auto compresses the arrays it chunks), or no --layout (then relayout picks the chunks)", verb)
	}
	if s.Shards < 0 {
		return Usagef("%s: --shards must be at least 1", verb)
	}
	if s.Shards == 0 && s.UnitBytes != 0 {
		return Usagef("run: --unit-size needs --resume (a plain run has no work units)")
	}
	if err := s.Storage.Check(); err != nil {
		return Usagef("%s: %v", verb, err)
	}
	return nil
}

// PlanOptions are the planner's options of the layout the job writes:
// relayout plan previews with them what relayout run writes.
func (s Spec) PlanOptions() planner.PlanOptions {
	o := planner.PlanOptions{Layout: string(s.Layout), ChunkShape: s.ChunkShape, Chunks: s.Chunks,
		Readers: s.Readers, Cost: s.Cost, AutoChunks: s.ChunkAuto, RanksPerNode: s.RanksPerNode, Fill: s.Fill}
	if o.Readers == 0 {
		o.Readers = DefaultReaders
	}
	if sc, err := planner.ParseScope(s.Scope); err == nil && s.Scope != "" {
		o.Scope = sc
	}
	return o
}

// DefaultReaders is the --readers default of plan, inspect and the auto
// layouts of run.
const DefaultReaders = 8

// manifestOptions are the manifest's options of a job planned with spec;
// maxMem and jobs of a plain run (0 for a sharded job: each shard had its own).
func manifestOptions(spec Spec, maxMem int64, jobs int) *catalog.ManifestOptions {
	o := &catalog.ManifestOptions{Layout: string(spec.Layout), ChunkShape: spec.ChunkShape, Chunks: spec.Chunks,
		Vars: spec.Vars, Compression: "none", Digest: spec.Digest.String(), NetCDF: spec.NetCDF, Readers: spec.Readers,
		Scope: spec.Scope, RanksPerNode: spec.RanksPerNode, MaxMem: maxMem, Jobs: jobs, Fill: spec.Fill, NoViews: spec.NoViews}
	if spec.Deflate > 0 {
		o.Compression = fmt.Sprintf("deflate:%d", spec.Deflate)
	}
	if spec.Shards > 0 {
		o.Shards, o.MaxMem, o.Jobs = spec.Shards, 0, 0
	}
	return o
}
