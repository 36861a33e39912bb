package rewriter

import (
	"sync/atomic"
	"time"

	"relayout/catalog"
)

// Monitor follows a run: bytes done of the total, the variable being
// written, and the I/O profile (requests, bytes and time per stage). Run
// updates it from every worker; a progress display (progress.go) polls it.
// Reads are counted by the Source (catalog.Source.IOStats), writes here.
type Monitor struct {
	total, done atomic.Int64
	variable    atomic.Pointer[string]
	start       time.Time

	writeCalls, writeBytes atomic.Int64
	stage                  [numStages]atomic.Int64 // nanoseconds, summed over workers
	splits                 atomic.Int64

	src      catalog.Source
	readBase catalog.IOCounters
}

// Pipeline stages timed by the Monitor.
const (
	stageFetch = iota
	stageAssemble
	stageEncode
	stageWrite
	stageSync
	numStages
)

// NewMonitor returns a Monitor; pass it in Options.Monitor to watch a run.
func NewMonitor() *Monitor {
	m := &Monitor{start: time.Now()}
	empty := ""
	m.variable.Store(&empty)
	return m
}

// begin starts the clock and the read counters for a run over src.
func (m *Monitor) begin(src catalog.Source, total int64) {
	m.start = time.Now()
	m.total.Store(total)
	m.src = src
	m.readBase = readCounters(src)
}

func (m *Monitor) setVariable(name string) { m.variable.Store(&name) }

// Track sets the progress of work done outside Run (verification) that a
// display follows through this Monitor: done of total bytes, on variable.
func (m *Monitor) Track(done, total int64, variable string) {
	m.total.Store(total)
	m.done.Store(done)
	m.setVariable(variable)
}

// since adds the time since t to stage s.
func (m *Monitor) since(s int, t time.Time) { m.stage[s].Add(int64(time.Since(t))) }

// wrote counts one write call of n bytes.
func (m *Monitor) wrote(n int, t time.Time) {
	m.writeCalls.Add(1)
	m.writeBytes.Add(int64(n))
	m.since(stageWrite, t)
}

// Progress is a snapshot of a run for displays.
type Progress struct {
	Done, Total int64         // logical bytes written, to write
	Variable    string        // being written
	Elapsed     time.Duration // since the run started
}

// Rate is bytes per second so far.
func (p Progress) Rate() float64 {
	if s := p.Elapsed.Seconds(); s > 0 {
		return float64(p.Done) / s
	}
	return 0
}

// ETA is the time left at the current rate, or -1 when unknown.
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r <= 0 || p.Done == 0 {
		return -1
	}
	return time.Duration(float64(p.Total-p.Done) / r * float64(time.Second))
}

// Progress returns the current snapshot.
func (m *Monitor) Progress() Progress {
	return Progress{Done: m.done.Load(), Total: m.total.Load(), Variable: *m.variable.Load(), Elapsed: time.Since(m.start)}
}

// profile is the run's I/O summary for the manifest.
func (m *Monitor) profile(mem *memBudget) *catalog.ManifestIO {
	r := readCounters(m.src).Since(m.readBase)
	io := &catalog.ManifestIO{
		WallSeconds:  time.Since(m.start).Seconds(),
		LogicalBytes: m.done.Load(),
		ReadBytes:    r.ReadBytes,
		ReadCalls:    r.ReadCalls,
		WriteBytes:   m.writeBytes.Load(),
		WriteCalls:   m.writeCalls.Load(),
		Splits:       m.splits.Load(),

		LibraryReadBlocks:  r.LibraryBlocks,
		LibraryReadBytes:   r.LibraryBytes,
		LibraryReadSeconds: time.Duration(r.LibraryNanos).Seconds(),
	}
	if io.ReadCalls > 0 {
		io.MeanReadBytes = io.ReadBytes / io.ReadCalls
	}
	if io.WriteCalls > 0 {
		io.MeanWriteBytes = io.WriteBytes / io.WriteCalls
	}
	secs := func(s int) float64 { return time.Duration(m.stage[s].Load()).Seconds() }
	io.FetchSeconds, io.AssembleSeconds, io.EncodeSeconds = secs(stageFetch), secs(stageAssemble), secs(stageEncode)
	io.WriteSeconds, io.SyncSeconds = secs(stageWrite), secs(stageSync)
	if mem != nil {
		io.MaxMem, io.PeakMem = mem.size, mem.peak()
	}
	return io
}

// readCounters is src's read counters; zero for no source (a monitor that
// never began a run).
func readCounters(src catalog.Source) catalog.IOCounters {
	if src == nil {
		return catalog.IOCounters{}
	}
	return src.IOStats()
}
