package blockio

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"

	"relayout/catalog"
)

// Map maps the whole named file read-only and returns its bytes (nil for an
// empty file), counted as one read of the file's size. A metadata file a
// reader decodes again and again (BP5's md.0: every array of a step decodes
// every writer's record) is then read from the page cache in place, neither
// copied nor held in memory of its own: on the virtual machines measured,
// fresh anonymous memory costs about 1.5 ms a MiB the first time it is
// written, a mapped page of the page cache a few percent of that (23.5 MB:
// 2 ms touched through a mapping, 35 ms read into a fresh buffer).
//
// The mapping lasts until Unmap or Close. Bytes past the end of a file that
// shrinks while mapped fault when read: read a mapping only inside Guarded,
// which turns that fault into a corruption error. An error from mmap itself
// (a file system that cannot map) is returned for the caller to read the
// file instead.
func (p *Files) Map(ctx context.Context, name string) ([]byte, error) {
	of, err := p.get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer p.release(of)
	if of.size == 0 {
		return nil, nil
	}
	if int64(int(of.size)) != of.size {
		return nil, fmt.Errorf("blockio: %s: %d bytes cannot be mapped", name, of.size)
	}
	m, err := unix.Mmap(int(of.f.Fd()), 0, int(of.size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("blockio: %s: mmap: %w", name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		unix.Munmap(m)
		return nil, fmt.Errorf("blockio: %s: file pool is closed", name)
	}
	p.maps = append(p.maps, m)
	p.readCalls.Add(1)
	p.readBytes.Add(of.size)
	return m, nil
}

// Unmap ends a mapping Map returned (nil: nothing to do).
func (p *Files) Unmap(m []byte) error {
	if m == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.maps {
		if unsafe.SliceData(x) == unsafe.SliceData(m) {
			p.maps = append(p.maps[:i], p.maps[i+1:]...)
			return unix.Munmap(x)
		}
	}
	return nil
}

// unmapAllLocked ends every mapping (Close).
func (p *Files) unmapAllLocked() error {
	var first error
	for _, m := range p.maps {
		if err := unix.Munmap(m); err != nil && first == nil {
			first = err
		}
	}
	p.maps = nil
	return first
}

// Guarded runs fn, which reads mapping m of the named file (Map), with a
// fault in it turned into a corruption error naming the file and the offset
// reached: the file shrank after it was mapped. Any other panic, a fault
// elsewhere (a nil pointer) included, goes on.
func Guarded(name string, m []byte, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(interface{ Addr() uintptr })
		base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
		if !ok || base == 0 || f.Addr() < base || f.Addr()-base >= uintptr(len(m)) {
			panic(r)
		}
		err = catalog.Corrupt("blockio", name, int64(f.Addr()-base), "the file changed while it was read (shorter than the %d bytes mapped)", len(m))
	}()
	return fn()
}

// Forget lets the whole pages of m[off:off+n] (a mapping Map returned) go
// from the process: they stay in the page cache, and reading them again
// maps them again. A reader that is done with part of a mapping forgets it,
// so that the process's resident memory holds what it reads now, not
// everything it has read (the bound the read-and-discard buffers had).
func Forget(m []byte, off, n int64) {
	if m == nil || off < 0 || n <= 0 || off >= int64(len(m)) {
		return
	}
	page := int64(os.Getpagesize())
	end := min(off+n, int64(len(m)))
	lo, hi := (off+page-1)&^(page-1), end&^(page-1)
	if end == int64(len(m)) {
		hi = (end + page - 1) &^ (page - 1) // the last page, mapped past the end
	}
	if hi <= lo {
		return
	}
	unix.Madvise(unsafe.Slice(unsafe.SliceData(m[lo:]), hi-lo), unix.MADV_DONTNEED)
}
