package main

import (
	"os"
	"runtime/debug"

	"relayout/internal/membudget"
)

// gcPercent is the collector's growth ratio for the verbs that move data
// (GOGC 200 instead of Go's 100). Their heap is mostly pointer-free
// buffers charged to --max-mem, beside the catalog's block lists, which
// every cycle scans again: on 351,537 blocks of 4³ half as many cycles cost
// 6-10% less CPU, for peak RSS that grows with the lists (+100 MiB there
// with --no-verify, +240 MiB on a million blocks; bench/RESULTS.md).
const gcPercent = 200

// tuneGC sets the collector for a verb running under the memory budget
// maxMem: gcPercent, with a soft memory limit of maxMem less the unit
// buffers mapped outside the Go heap at the time (membudget.LimitProcess),
// so that neither the larger ratio nor the heap's garbage beside the
// buffers lets the Go heap and the buffers together outgrow maxMem (the
// collector then runs as often as it must). What Go does not allocate
// (HDF5's C heap, SQLite's pages, thread stacks, the binary) is left the
// 64 MiB issue 19 allows beyond --max-mem: with 16 MiB more for the Go
// heap, a million 4³ blocks at --max-mem 256MiB peaked at 323–332 MiB, and
// at 309–319 MiB without, for 1.05× the time there (none at the default
// 1 GiB; bench/RESULTS.md, session 16). GOGC or GOMEMLIMIT in the
// environment are left as the user set them.
func tuneGC(maxMem int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	membudget.LimitProcess(maxMem)
}
