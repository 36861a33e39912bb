package main

import (
	"os"

	"relayout/internal/membudget"
)

// tuneGC sets the collector for a verb running under the memory budget
// maxMem: a soft memory limit of maxMem less the unit buffers mapped
// outside the Go heap at the time (membudget.LimitProcess), so that the
// heap's garbage beside the buffers cannot let the Go heap and the buffers
// together outgrow maxMem (the collector then runs as often as it must).
// What Go does not allocate (HDF5's C heap, SQLite's pages, thread stacks,
// the binary) is left the 64 MiB issue 19 allows beyond --max-mem: with
// 16 MiB more for the Go heap, a million 4³ blocks at --max-mem 256MiB
// peaked at 323–332 MiB, and at 309–319 MiB without, for 1.05× the time
// there (none at the default 1 GiB; bench/RESULTS.md, session 16).
//
// The growth ratio stays Go's 100. A ratio of 200 (half as many cycles
// over the block lists) once cost 6-10% less CPU on 351,537 blocks; since
// the catalog keeps the readers' lists uncopied it costs more: every page
// the heap grows by is a fault, which costs several microseconds on the
// virtual machines measured. 833,480 BP5 blocks: 100 against 200 0.92×
// the wall time, peak RSS 490 MiB against 640; 351,537 blocks 0.99×; the
// 1.5 GB BP4 case 1.00× (bench/RESULTS.md, session 17). GOGC or
// GOMEMLIMIT in the environment are left as the user set them.
func tuneGC(maxMem int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	membudget.LimitProcess(maxMem)
}
