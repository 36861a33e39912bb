package catalog

import (
	"encoding/json"
)

// IOCounters counts the read requests a Source issued to the file system.
type IOCounters struct {
	ReadCalls int64 // pread calls
	ReadBytes int64 // bytes they returned (gap bytes of coalesced runs included)
	// Blocks read through the HDF5 library (HDF5LibraryCodec: H5Dread of
	// the chunk's region, the slow path for plugin filters), their decoded
	// bytes and the nanoseconds those reads took (waiting for the library's
	// lock included). Not counted in ReadCalls and ReadBytes: HDF5 issues
	// those reads itself.
	LibraryBlocks int64
	LibraryBytes  int64
	LibraryNanos  int64
}

// Since is what was counted between base (an earlier reading of the same
// counters) and c.
func (c IOCounters) Since(base IOCounters) IOCounters {
	return IOCounters{
		ReadCalls: c.ReadCalls - base.ReadCalls, ReadBytes: c.ReadBytes - base.ReadBytes,
		LibraryBlocks: c.LibraryBlocks - base.LibraryBlocks, LibraryBytes: c.LibraryBytes - base.LibraryBytes,
		LibraryNanos: c.LibraryNanos - base.LibraryNanos,
	}
}

// ManifestIO is the I/O profile of a run (Manifest.IO), in the spirit of
// Darshan: bytes and request counts, and the time each pipeline stage took,
// summed over the workers (so stages that run in parallel can add up to more
// than the wall time).
//
// From says where the figures come from. Empty: the counters of the
// process that ran the whole job (relayout run): every field is known.
// "journal": a journaled job (run --resume; plan -o, rewrite, commit), whose
// shards ran in other processes, maybe several times (a killed shard
// resumed): the sums over its units' journal records, which know
// logical_bytes, read_bytes (the stored bytes of the input blocks each unit
// needed: a block that spans several units counts in each, and the gaps a
// coalesced read reads through count in none), write_bytes (the array data
// the shards wrote; commit's join of chunk parts into their files is not
// counted) and unit_seconds; what they cannot know (wall_seconds, request
// counts and their means, stage seconds, the memory budget) is left out.
type ManifestIO struct {
	From            string  `json:"from,omitempty"`
	WallSeconds     float64 `json:"wall_seconds"`
	LogicalBytes    int64   `json:"logical_bytes"` // bytes of the arrays rewritten
	ReadBytes       int64   `json:"read_bytes"`
	ReadCalls       int64   `json:"read_calls"`
	WriteBytes      int64   `json:"write_bytes"` // array data; HDF5 metadata not counted
	WriteCalls      int64   `json:"write_calls"`
	MeanReadBytes   int64   `json:"mean_read_bytes"`
	MeanWriteBytes  int64   `json:"mean_write_bytes"`
	FetchSeconds    float64 `json:"fetch_seconds"`    // pread and decode of input blocks
	AssembleSeconds float64 `json:"assemble_seconds"` // copy, byte swap, transpose into output units
	EncodeSeconds   float64 `json:"encode_seconds"`   // cutting chunks, shuffle+deflate
	WriteSeconds    float64 `json:"write_seconds"`    // pwrite and H5Dwrite_chunk
	SyncSeconds     float64 `json:"sync_seconds"`     // fsync of each output file
	MaxMem          int64   `json:"max_mem"`          // the data buffers' budget: --max-mem less the block lists and the reader's plans kept
	PeakMem         int64   `json:"peak_mem"`         // most of the budget charged at once
	Splits          int64   `json:"splits,omitempty"` // output units split below one row / chunk row to fit the budget
	// UnitSeconds (From "journal"): each unit's time since the previous
	// unit of its array was journaled, summed over the units (arrays in
	// flight and shards add up).
	UnitSeconds float64 `json:"unit_seconds,omitempty"`
	// Input blocks read through the HDF5 library (plugin filters relayout
	// does not decode natively: the slow path, one H5Dread at a time), their
	// decoded bytes and the seconds those reads took; part of FetchSeconds.
	LibraryReadBlocks  int64   `json:"library_read_blocks,omitempty"`
	LibraryReadBytes   int64   `json:"library_read_bytes,omitempty"`
	LibraryReadSeconds float64 `json:"library_read_seconds,omitempty"`
	// The verify phase (absent with --no-verify, for a journaled job
	// checked against its journal, and in manifests of older versions):
	// the bytes and read calls the input's Source counted while the
	// verifier fetched every block (gap bytes of coalesced runs included,
	// as ReadBytes), and the output bytes it read back through the HDF5
	// library (H5Dread of every array's bands, decoded: the logical bytes
	// of the arrays, not the compressed bytes the library read from disk)
	// in VerifyOutputReads calls.
	VerifyReadBytes   int64   `json:"verify_read_bytes,omitempty"`
	VerifyReadCalls   int64   `json:"verify_read_calls,omitempty"`
	VerifyOutputBytes int64   `json:"verify_output_bytes,omitempty"`
	VerifyOutputReads int64   `json:"verify_output_reads,omitempty"`
	VerifySeconds     float64 `json:"verify_seconds,omitempty"`
}

// journalUnknown are the keys of a ManifestIO that a journaled job cannot
// know (From "journal"): left out of its JSON rather than written as 0.
var journalUnknown = []string{"wall_seconds", "read_calls", "write_calls", "mean_read_bytes", "mean_write_bytes",
	"fetch_seconds", "assemble_seconds", "encode_seconds", "write_seconds", "sync_seconds", "max_mem", "peak_mem"}

// MarshalJSON writes every field of a run's profile (a 0 is a 0 measured),
// and leaves out of a journaled job's what its journal cannot know.
func (m ManifestIO) MarshalJSON() ([]byte, error) {
	type plain ManifestIO // without this method
	b, err := json.Marshal(plain(m))
	if err != nil || m.From != "journal" {
		return b, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, err
	}
	for _, k := range journalUnknown {
		delete(keys, k)
	}
	return json.Marshal(keys)
}

// CoalesceGap is the largest gap between neighbouring extents of one file
// that a coalescing Source reads through (one request, gap bytes dropped) rather
// than issuing a second request. Planners use it to predict what a set of
// blocks costs to read.
const CoalesceGap = 64 << 10

// Runs cuts blocks (sorted by file and offset) into the runs a coalescing
// Source reads with one request each: ascending neighbours in one file
// at most CoalesceGap apart, a run at most limit bytes long. fn gets the
// run's blocks [i, j) and its byte range [start, end) in blocks[i].File. A
// block with inline bytes or no extent is a run of its own with start ==
// end. The first error of fn stops the walk and is returned.
func Runs(blocks []*Block, limit int64, fn func(i, j int, start, end int64) error) error {
	for i := 0; i < len(blocks); {
		b := blocks[i]
		if b.Inline() != nil || b.Length <= 0 {
			if err := fn(i, i+1, 0, 0); err != nil {
				return err
			}
			i++
			continue
		}
		start, end := b.Offset, b.Offset+b.Length
		j := i + 1
		for ; j < len(blocks); j++ {
			n := blocks[j]
			if n.Inline() != nil || n.File != b.File || n.Offset < end || n.Offset-end > CoalesceGap ||
				n.Offset+n.Length-start > limit {
				break
			}
			end = n.Offset + n.Length
		}
		if err := fn(i, j, start, end); err != nil {
			return err
		}
		i = j
	}
	return nil
}
