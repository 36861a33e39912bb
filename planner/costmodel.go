package planner

import (
	"fmt"
	"math"
)

// Check refuses cost parameters the model cannot use: latency must be
// positive and finite, bandwidths positive and finite, the sieve window
// non-negative, and the library fields (libcost.go) non-negative and finite.
func (c CostParams) Check() error {
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case !ok(c.Latency):
		return fmt.Errorf("planner: cost model latency %g s, want > 0", c.Latency)
	case !ok(c.ReaderBW):
		return fmt.Errorf("planner: cost model reader bandwidth %g B/s, want > 0", c.ReaderBW)
	case !ok(c.AggBW):
		return fmt.Errorf("planner: cost model aggregate bandwidth %g B/s, want > 0", c.AggBW)
	case c.Sieve < 0:
		return fmt.Errorf("planner: cost model sieve window %d bytes, want >= 0", c.Sieve)
	case c.SieveBuf < 0 || c.ChunkCache < 0 || c.Page < 0:
		return fmt.Errorf("planner: cost model sieve buffer %d, chunk cache %d, page %d bytes, want >= 0", c.SieveBuf, c.ChunkCache, c.Page)
	case c.CPUShare < 0 || c.CPUShare > 1 || math.IsNaN(c.CPUShare):
		return fmt.Errorf("planner: cost model CPU share %g, want 0 to 1", c.CPUShare)
	}
	for _, f := range []struct {
		what string
		v    float64
	}{
		{"call cost %g s", c.CallCost}, {"random-read bandwidth %g B/s", c.RandomBW}, {"cores %g", c.Cores},
		{"chunk cost %g s", c.ChunkCost}, {"chunk byte cost %g s", c.ChunkByteCost}, {"fresh-memory cost %g s a byte", c.FreshByteCost},
		{"random-read overlap %g", c.RandomOverlap}, {"copy bandwidth %g B/s", c.CopyBW},
	} {
		if f.v < 0 || math.IsInf(f.v, 0) || math.IsNaN(f.v) {
			return fmt.Errorf("planner: cost model "+f.what+", want >= 0", f.v)
		}
	}
	return nil
}

// CostDoc is a cost model as a document: the --cost-model file that
// relayout calibrate writes and plan --json's cost_model. The library
// fields are absent under the paper's model.
type CostDoc struct {
	LatencySeconds  float64 `json:"latency_s"`
	ReaderBandwidth float64 `json:"reader_bytes_per_s"`
	AggBandwidth    float64 `json:"aggregate_bytes_per_s"`
	SieveBytes      int64   `json:"sieve_bytes"`
	// The library read model (a calibrated --cost-model; libcost.go).
	SieveBufferBytes int64   `json:"sieve_buffer_bytes,omitempty"`
	ChunkCacheBytes  int64   `json:"chunk_cache_bytes,omitempty"`
	PageBytes        int64   `json:"page_bytes,omitempty"`
	CallSeconds      float64 `json:"call_s,omitempty"`
	RandomBandwidth  float64 `json:"random_bytes_per_s,omitempty"`
	CopyBandwidth    float64 `json:"copy_bytes_per_s,omitempty"`
	ChunkSeconds     float64 `json:"chunk_s,omitempty"`
	ChunkByteSeconds float64 `json:"chunk_byte_s,omitempty"`
	FreshByteSeconds float64 `json:"fresh_byte_s,omitempty"`
	RandomOverlap    float64 `json:"random_overlap,omitempty"`
	Cores            float64 `json:"cores,omitempty"`
	CPUShare         float64 `json:"cpu_share,omitempty"`
}

// Params is the cost model the document describes (unchecked: see Check).
func (d CostDoc) Params() CostParams {
	return CostParams{Latency: d.LatencySeconds, ReaderBW: d.ReaderBandwidth, AggBW: d.AggBandwidth, Sieve: d.SieveBytes,
		SieveBuf: d.SieveBufferBytes, ChunkCache: d.ChunkCacheBytes, Page: d.PageBytes, CallCost: d.CallSeconds,
		RandomBW: d.RandomBandwidth, CopyBW: d.CopyBandwidth, ChunkCost: d.ChunkSeconds, ChunkByteCost: d.ChunkByteSeconds, FreshByteCost: d.FreshByteSeconds, RandomOverlap: d.RandomOverlap, Cores: d.Cores, CPUShare: d.CPUShare}
}

// Doc is the cost model's document.
func (c CostParams) Doc() CostDoc {
	return CostDoc{c.Latency, c.ReaderBW, c.AggBW, c.Sieve, c.SieveBuf, c.ChunkCache, c.Page,
		c.CallCost, c.RandomBW, c.CopyBW, c.ChunkCost, c.ChunkByteCost, c.FreshByteCost, c.RandomOverlap, c.Cores, c.CPUShare}
}
