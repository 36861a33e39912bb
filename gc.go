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

// gcHeadroom is what the process may hold beyond --max-mem (which
// charges the data buffers and the catalog's kept block lists): the HDF5
// and SQLite caches, the garbage of the block lists decoded per pass and
// the rest of the process. Issue 19's bound on peak RSS is --max-mem +
// 64 MiB; what Go does not allocate (HDF5's C heap, SQLite's pages,
// thread stacks) takes the rest.
const gcHeadroom = 16 << 20

// tuneGC sets the collector for a verb running under the memory budget
// maxMem: gcPercent, with a soft memory limit of maxMem + gcHeadroom less
// the unit buffers mapped outside the Go heap at the time
// (membudget.LimitProcess), so that neither the larger ratio nor the
// heap's garbage beside the buffers lets the process outgrow what the
// budget and the headroom hold (the collector then runs as often as it
// must). GOGC or GOMEMLIMIT in the environment are left as the user set
// them.
func tuneGC(maxMem int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	membudget.LimitProcess(maxMem + gcHeadroom)
}
