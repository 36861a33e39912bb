package catalog

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of b that mincore says are in memory.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+4095)/4096)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// Populate maps every whole page of a fresh region in one call, whatever
// the slice's element type, keeps what the slice holds, and leaves slices
// under populateMin alone.
func TestPopulate(t *testing.T) {
	const size = 4 << 20
	probe, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(probe)
	if err := unix.Madvise(probe, unix.MADV_POPULATE_WRITE); errors.Is(err, unix.EINVAL) {
		t.Skip("kernel without MADV_POPULATE_WRITE (before 5.14)")
	}
	fresh := func() []byte {
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(b) })
		if n := resident(t, b); n != 0 {
			t.Fatalf("a fresh mapping has %d pages in memory", n)
		}
		return b
	}

	b := fresh()
	b[100], b[size-1] = 7, 9
	// As a list of blocks over the same memory, of length 0: its capacity counts.
	blocks := unsafe.Slice((*Block)(unsafe.Pointer(&b[0])), size/int(unsafe.Sizeof(Block{})))[:0]
	Populate(blocks)
	if n := resident(t, b); n < size/4096-1 {
		t.Errorf("%d of %d pages in memory after Populate", n, size/4096)
	}
	if b[100] != 7 || b[size-1] != 9 || b[200] != 0 {
		t.Errorf("Populate changed the contents: %d %d %d", b[100], b[size-1], b[200])
	}

	small := fresh()[: populateMin-1 : populateMin-1]
	Populate(small)
	if n := resident(t, small); n != 0 {
		t.Errorf("a slice under populateMin: %d pages populated", n)
	}
	Populate([]int64(nil)) // nothing to do, no fault
}
