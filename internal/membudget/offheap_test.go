package membudget

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// Map and Unmap count the bytes mapped, and LimitProcess keeps the
// collector's limit at its total less them (never below minHeapLimit).
func TestOffHeapLimit(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	defer func() {
		offHeap.mu.Lock()
		offHeap.total = 0
		offHeap.mu.Unlock()
		debug.SetMemoryLimit(was)
	}()
	mapped := func() int64 {
		offHeap.mu.Lock()
		defer offHeap.mu.Unlock()
		return offHeap.mapped
	}
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	base := mapped()
	const total = 160 << 20
	LimitProcess(total)
	if got := limit(); got != total-base {
		t.Fatalf("limit %d with nothing mapped, want %d", got, total-base)
	}
	b, err := Map(32 << 20)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b { // zeroed, writable
		if b[i] != 0 {
			t.Fatalf("byte %d of a new mapping is %d", i, b[i])
		}
	}
	b[len(b)-1] = 1
	if got := mapped() - base; got != 32<<20 {
		t.Fatalf("mapped %d after one 32 MiB Map", got)
	}
	if got := limit(); got != total-base-32<<20 {
		t.Fatalf("limit %d with 32 MiB mapped, want %d", got, total-base-32<<20)
	}
	big, err := Map(96 << 20) // past the total: the floor holds
	if err != nil {
		t.Fatal(err)
	}
	if got := limit(); got != minHeapLimit {
		t.Fatalf("limit %d with more mapped than the total, want the floor %d", got, int64(minHeapLimit))
	}
	Unmap(big)
	Unmap(b)
	Unmap(nil)
	if got := mapped(); got != base {
		t.Fatalf("mapped %d after Unmap, want %d", got, base)
	}
	if got := limit(); got != total-base {
		t.Fatalf("limit %d after Unmap, want %d", got, total-base)
	}
}

// TestMapAligned: a buffer of Map starts on a huge-page boundary, holds
// exactly the bytes asked (zeroed, writable to the last), and Unmap
// returns every page of it (the mapped count back where it was), for
// sizes below, at and between huge pages.
func TestMapAligned(t *testing.T) {
	mapped := func() int64 {
		offHeap.mu.Lock()
		defer offHeap.mu.Unlock()
		return offHeap.mapped
	}
	base := mapped()
	for _, n := range []int64{1, 4095, 4097, 1 << 20, hugePage, hugePage + 1, 3*hugePage + 12345} {
		b, err := Map(n)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != n || int64(cap(b)) != n {
			t.Fatalf("Map(%d): len %d cap %d", n, len(b), cap(b))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%hugePage != 0 {
			t.Errorf("Map(%d) at %#x, not on a %d-byte boundary", n, p, hugePage)
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("Map(%d): byte %d is %d", n, i, b[i])
			}
			b[i] = byte(i)
		}
		if got, want := mapped()-base, pageRound(n); got != want {
			t.Errorf("Map(%d): %d bytes counted mapped, want %d", n, got, want)
		}
		Unmap(b)
		if got := mapped() - base; got != 0 {
			t.Errorf("Map(%d) then Unmap: %d bytes still counted", n, got)
		}
	}
}
