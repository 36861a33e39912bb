package catalog

// Report is the per-variable account of a relayout job (relayout commit
// --report FILE.json, run --report, and the manifest's "report"). Schema
// "relayout-report/1", see README.md.
type Report struct {
	Schema    string           `json:"schema"`
	Input     string           `json:"input"`
	Output    string           `json:"output"`
	Shards    int              `json:"shards"`
	Units     int              `json:"units"`
	Seconds   float64          `json:"seconds"` // wall time of the step that wrote the report
	Verified  string           `json:"verified"`
	Variables []ReportVariable `json:"variables"`
}

// ReportVariable is one variable's line of the report.
type ReportVariable struct {
	Name         string  `json:"name"`
	File         string  `json:"file"`
	Datasets     int     `json:"datasets"`
	BlocksIn     int     `json:"blocks_in"`     // input blocks read
	BlocksOut    int     `json:"blocks_out"`    // contiguous datasets plus chunks written
	BytesIn      int64   `json:"bytes_in"`      // stored bytes of the input blocks
	BytesOut     int64   `json:"bytes_out"`     // size of the output file
	LogicalBytes int64   `json:"logical_bytes"` // elements times element size
	Seconds      float64 `json:"seconds"`       // time spent on its units, summed over shards
	// IO summarizes the data path: bytes read from the input (counted per
	// unit, a block read by two units counts twice), bytes written to the
	// output and part files.
	IO           ReportIO `json:"io"`
	Verification string   `json:"verification"` // "ok", "sha256 ok", "blake3 ok", "xxh64 ok", "shape ok" or "DIFF ..."
	Shards       []int    `json:"shards"`       // shards that wrote its units
}

// ReportIO is a variable's I/O summary.
type ReportIO struct {
	ReadBytes    int64 `json:"read_bytes"`
	WrittenBytes int64 `json:"written_bytes"`
	Units        int   `json:"units"`
}
