package membudget

import (
	"fmt"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"
)

// Buffers outside the Go heap, and the collector's limit beside them.
//
// The rewriter's unit buffers are anonymous mappings (Map): a budget then
// bounds them exactly, and the collector neither counts them when it paces
// itself nor keeps a freed one as heap it has yet to return to the system
// (Go-heap buffers put peak RSS 100+ MiB over --max-mem on 4 GiB inputs).
// A buffer of Map is zeroed, and must be passed to Unmap once, when nothing
// refers to it any more. But the collector's soft limit (debug.SetMemoryLimit)
// counts only the Go heap, so a fixed limit of --max-mem plus headroom let
// the heap's garbage grow to that limit on top of the mapped buffers: peak
// RSS 434 MiB for --max-mem 256MiB on 351,537 blocks (bench/RESULTS.md).
// LimitProcess instead keeps the limit at the process's total less the
// bytes mapped now, moved at every Map and Unmap: the heap and the buffers
// together stay under the total, the collector running more often only
// while the buffers are large.

var offHeap struct {
	mu     sync.Mutex
	mapped int64 // bytes of the live mappings of Map
	total  int64 // LimitProcess's total; 0: the limit is not set here
}

// minHeapLimit is the least the collector's limit is set to, whatever is
// mapped: under it the collector would run without pause while the heap's
// live part (block lists, the catalog's pages) alone is near it.
const minHeapLimit = 64 << 20

// LimitProcess keeps the Go collector's soft memory limit at total bytes
// less those mapped by Map (at least minHeapLimit), from now on.
func LimitProcess(total int64) {
	offHeap.mu.Lock()
	defer offHeap.mu.Unlock()
	offHeap.total = total
	setHeapLimit()
}

// setHeapLimit sets the collector's limit for the bytes mapped now (when
// LimitProcess was called). The caller holds offHeap.mu.
func setHeapLimit() {
	if offHeap.total > 0 {
		debug.SetMemoryLimit(max(offHeap.total-offHeap.mapped, minHeapLimit))
	}
}

// Map returns n zeroed bytes in an anonymous mapping, outside the Go heap;
// Unmap must be called on it once, when nothing refers to it any more.
func Map(n int64) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("a %d-byte buffer: %w", n, err)
	}
	moveMapped(int64(cap(b)))
	return b, nil
}

// Unmap releases a buffer of Map.
func Unmap(b []byte) {
	if cap(b) == 0 {
		return
	}
	if err := unix.Munmap(b[:cap(b)]); err == nil {
		moveMapped(-int64(cap(b)))
	}
}

func moveMapped(d int64) {
	offHeap.mu.Lock()
	defer offHeap.mu.Unlock()
	offHeap.mapped += d
	setHeapLimit()
}
