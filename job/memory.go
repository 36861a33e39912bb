package job

import (
	"runtime/debug"
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
func releaseRewrite(job *Job) {
	job.Release()
	debug.FreeOSMemory()
}
