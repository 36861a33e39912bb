package blockio

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"relayout/catalog"
	"relayout/internal/fileio"
)

// DefaultMaxOpen is the pool size used when NewFiles is given max <= 0.
const DefaultMaxOpen = 64

// Files is a pool of read-only files below one root directory, opened lazily
// and closed least-recently-used first when more than Max would be open.
type Files struct {
	root string
	max  int

	mu      sync.Mutex
	open    map[string]*openFile
	idle    *list.List    // of *openFile with refs == 0, front = least recently used
	changed chan struct{} // closed and replaced whenever a file is released or closed
	closed  bool

	readCalls, readBytes atomic.Int64 // ReadAt calls that reached the file, and their bytes

	maps [][]byte // the mappings Map made and Unmap has not ended
}

// IOStats counts the preads issued through the pool so far.
func (p *Files) IOStats() catalog.IOCounters {
	return catalog.IOCounters{ReadCalls: p.readCalls.Load(), ReadBytes: p.readBytes.Load()}
}

type openFile struct {
	name string
	f    *os.File
	size int64
	refs int
	elem *list.Element // position in idle, nil while in use
}

// NewFiles returns a pool of files under root holding at most max open files.
func NewFiles(root string, max int) *Files {
	if max <= 0 {
		max = DefaultMaxOpen
	}
	return &Files{root: root, max: max, open: map[string]*openFile{}, idle: list.New(), changed: make(chan struct{})}
}

// Root is the directory block file names are relative to.
func (p *Files) Root() string { return p.root }

// resolve maps a block's file name to a path under root, refusing names that
// could reach outside it: catalogs and manifests are input, not trusted.
func (p *Files) resolve(name string) (string, error) {
	return fileio.InsideRoot(p.root, name)
}

// acquire returns the open file for name with its reference count raised.
func (p *Files) acquire(ctx context.Context, name string) (*openFile, error) {
	full, err := p.resolve(name)
	if err != nil {
		return nil, err
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("blockio: %s: file pool is closed", name)
		}
		if of, ok := p.open[name]; ok {
			if of.elem != nil {
				p.idle.Remove(of.elem)
				of.elem = nil
			}
			of.refs++
			p.mu.Unlock()
			return of, nil
		}
		if len(p.open) >= p.max && p.idle.Len() > 0 {
			victim := p.idle.Remove(p.idle.Front()).(*openFile)
			delete(p.open, victim.name)
			victim.f.Close()
		}
		if len(p.open) < p.max {
			// Reserve the slot before opening outside the lock so that
			// concurrent readers of the same file wait for this open.
			of := &openFile{name: name, refs: 1}
			p.open[name] = of
			p.mu.Unlock()
			f, size, err := openSized(full, name)
			p.mu.Lock()
			if err != nil {
				delete(p.open, name)
				p.broadcastLocked()
				p.mu.Unlock()
				return nil, err
			}
			of.f, of.size = f, size
			p.broadcastLocked()
			p.mu.Unlock()
			return of, nil
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func openSized(full, name string) (*os.File, int64, error) {
	return fileio.Open(full)
}

func (p *Files) release(of *openFile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	of.refs--
	// An entry whose open failed was already removed from the pool.
	if of.refs == 0 && p.open[of.name] == of {
		if p.closed {
			of.f.Close()
			delete(p.open, of.name)
		} else {
			of.elem = p.idle.PushBack(of)
		}
	}
	p.broadcastLocked()
}

func (p *Files) broadcastLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// ready blocks until a file reserved by another goroutine is opened: acquire
// returns entries whose f is still nil while another goroutine opens them.
func (p *Files) ready(ctx context.Context, of *openFile) error {
	for {
		p.mu.Lock()
		ok := of.f != nil
		_, present := p.open[of.name]
		wait := p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		if !present {
			return fmt.Errorf("blockio: %s: open failed in a concurrent reader", of.name)
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Size returns the size of the named file.
func (p *Files) Size(ctx context.Context, name string) (int64, error) {
	of, err := p.get(ctx, name)
	if err != nil {
		return 0, err
	}
	defer p.release(of)
	return of.size, nil
}

func (p *Files) get(ctx context.Context, name string) (*openFile, error) {
	of, err := p.acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := p.ready(ctx, of); err != nil {
		p.release(of)
		return nil, err
	}
	return of, nil
}

// ReadAt reads length bytes of the named file at off. The range is checked
// against the file size before any buffer is allocated.
func (p *Files) ReadAt(ctx context.Context, name string, off, length int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	of, err := p.get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer p.release(of)
	if off < 0 || length < 0 || off > of.size || length > of.size-off {
		return nil, catalog.Corrupt("blockio", name, off, "block of %d bytes past end of file (size %d)", length, of.size)
	}
	buf := make([]byte, length)
	catalog.Populate(buf) // read into in one go: no fault a page
	if err := p.readInto(of, name, off, buf, nil); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadAtInto reads len(buf) bytes of the named file at off into buf.
func (p *Files) ReadAtInto(ctx context.Context, name string, off int64, buf []byte) error {
	return p.readAtTimed(ctx, name, off, buf, nil)
}

// readAtTimed is ReadAtInto adding the time the pread takes to *timer
// (nil: untimed): a block read's (catalog.Reads.Timer).
func (p *Files) readAtTimed(ctx context.Context, name string, off int64, buf []byte, timer *int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	of, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	defer p.release(of)
	length := int64(len(buf))
	if off < 0 || off > of.size || length > of.size-off {
		return catalog.Corrupt("blockio", name, off, "block of %d bytes past end of file (size %d)", length, of.size)
	}
	return p.readInto(of, name, off, buf, timer)
}

func (p *Files) readInto(of *openFile, name string, off int64, buf []byte, timer *int64) error {
	length := len(buf)
	var start time.Time
	if timer != nil {
		start = time.Now()
	}
	n, err := of.f.ReadAt(buf, off)
	if timer != nil {
		atomic.AddInt64(timer, int64(time.Since(start)))
	}
	p.readCalls.Add(1)
	p.readBytes.Add(int64(n))
	if n == len(buf) {
		return nil
	}
	if err == io.EOF {
		// The file shrank after it was opened.
		return catalog.Corrupt("blockio", name, off, "block of %d bytes: short read (%d bytes)", length, n)
	}
	return fmt.Errorf("blockio: %s: read at offset %d: %w", name, off, err)
}

// CloseIdle closes the files not in use now; the pool stays usable and
// reopens them on demand (a series of many datasets keeps few open).
func (p *Files) CloseIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := p.idle.Front(); e != nil; e = e.Next() {
		of := e.Value.(*openFile)
		of.f.Close()
		delete(p.open, of.name)
	}
	p.idle.Init()
	p.broadcastLocked()
}

// Close closes every idle file; files in use are closed when released.
func (p *Files) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var first error
	for name, of := range p.open {
		if of.refs == 0 && of.f != nil {
			if err := of.f.Close(); err != nil && first == nil {
				first = err
			}
			delete(p.open, name)
		}
	}
	p.idle.Init()
	p.broadcastLocked()
	if err := p.unmapAllLocked(); err != nil && first == nil {
		first = err
	}
	return first
}
