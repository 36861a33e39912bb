package job

import (
	"runtime/debug"

	"relayout/rewriter"
)

// releaseRewrite gives back what an in-memory job's rewrite holds once its
// shards are done, before the commit verifies the output under the same
// --max-mem: the budget's kept unit buffers (anonymous mappings, unmapped)
// and the Go heap the rewrite left as garbage (debug.FreeOSMemory collects
// and returns it at once instead of at the scavenger's pace). Without it
// the verifier's bands came on top of the rewrite's kept buffers: 1,194 MB
// peak RSS for --max-mem 1GiB on the 1.5 GB BP4 input of issue 19. (The
// input's idle run buffers stay: the verifier reads through the same
// source and reuses them.)
func releaseRewrite(job *rewriter.Job) {
	job.Release()
	debug.FreeOSMemory()
}

// limitGoMemory sets the Go runtime's soft memory limit to the budget
// (maxMem <= 0: the default) plus the 64 MiB that issue 19 allows peak RSS
// beyond it, so that the collector works harder before garbage (between
// collections the heap may grow to twice what is live) takes the process
// past the budget. The budget's own buffers are mostly outside it (the
// rewriter's units are anonymous mappings); what is in the Go heap (the
// verifier's bands and blocks, read runs) is charged to the same budget,
// so the limit only binds on garbage. At --max-mem 256MiB on issue 19's
// BP4 input: 7-10 MB less peak RSS. A lower limit set by the user
// (GOMEMLIMIT) is kept.
func limitGoMemory(maxMem int64) {
	if maxMem <= 0 {
		maxMem = rewriter.DefaultMaxMem
	}
	limit := maxMem + 64<<20
	if cur := debug.SetMemoryLimit(-1); cur < limit {
		return
	}
	debug.SetMemoryLimit(limit)
}
