package job

import (
	"bytes"
	"io"
	"sync"
)

// RouteLines is a writer that passes whole lines to w, except those
// starting with one of prefixes, which go to other (io.Discard: dropped).
// A line is routed once its newline is written; writes may come from
// several goroutines.
func RouteLines(w, other io.Writer, prefixes ...string) io.Writer {
	return &lineRouter{w: w, other: other, prefixes: prefixes}
}

type lineRouter struct {
	mu       sync.Mutex
	w, other io.Writer
	prefixes []string
	partial  []byte
}

func (r *lineRouter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := r.partial[:i+1]
		to := r.w
		for _, pre := range r.prefixes {
			if bytes.HasPrefix(line, []byte(pre)) {
				to = r.other
				break
			}
		}
		if _, err := to.Write(line); err != nil {
			return 0, err
		}
		r.partial = r.partial[i+1:]
	}
}
