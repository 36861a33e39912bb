package membudget

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"relayout/catalog"
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
//
// The mapping starts on a huge-page boundary, so that catalog.Populate gets
// it transparent huge pages before mapping its pages in bulk: on a virtual
// machine with shadow page tables the first access from user space to each
// 4 KiB page costs microseconds even after the kernel populated it (a 64
// MiB buffer: 91 ms for the first pass over it, 5 ms for the next), and a
// 2 MiB page pays that once (5 ms for the first pass). Where the kernel has
// no huge pages to give, the pages are the usual ones, populated the same
// way (buffers under Populate's threshold fault in as they are written).
func Map(n int64) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	size := pageRound(n)
	// Room to slide the start to a huge-page boundary; the slack either
	// side is unmapped again.
	raw, err := unix.MmapPtr(-1, 0, nil, uintptr(size+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("a %d-byte buffer: %w", n, err)
	}
	head := (hugePage - uintptr(raw)%hugePage) % hugePage
	if head > 0 {
		_ = unix.MunmapPtr(raw, head)
	}
	base := unsafe.Add(raw, head)
	if tail := uintptr(hugePage) - head; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(base, size), tail)
	}
	b := unsafe.Slice((*byte)(base), size)
	catalog.Populate(b) // huge pages where whole ones fit, populated
	moveMapped(size)
	return b[:n:n], nil
}

// hugePage is what Map aligns to: catalog.Populate's huge page (elsewhere
// than x86-64 and arm64 with 4 KiB pages the alignment is merely unused).
const hugePage = catalog.HugePage

// pageRound is n rounded up to the system's page size.
func pageRound(n int64) int64 {
	pg := int64(os.Getpagesize())
	return (n + pg - 1) / pg * pg
}

// Unmap releases a buffer of Map.
func Unmap(b []byte) {
	if cap(b) == 0 {
		return
	}
	size := pageRound(int64(cap(b)))
	if err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(size)); err == nil {
		moveMapped(-size)
	}
}

func moveMapped(d int64) {
	offHeap.mu.Lock()
	defer offHeap.mu.Unlock()
	offHeap.mapped += d
	setHeapLimit()
}
