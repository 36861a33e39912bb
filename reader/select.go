package reader

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"relayout/catalog"
)

// selector matches variable names against Options.Vars and remembers which
// patterns selected something, so that a typo is reported instead of
// producing an empty catalog.
type selector struct {
	pats []string
	mu   sync.Mutex
	used []bool
	seen map[string]bool // every name asked about, for error messages
}

func newSelector(pats []string) (*selector, error) {
	for _, p := range pats {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return nil, fmt.Errorf("reader: variable pattern %q: invalid glob", p)
		}
	}
	return &selector{pats: pats, used: make([]bool, len(pats)), seen: map[string]bool{}}, nil
}

// match reports whether name, or one of its parents ("B" for "B/x"), matches
// a pattern. No patterns select everything.
func (s *selector) match(name string) bool {
	if len(s.pats) == 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[name] = true
	hit := false
	for i, p := range s.pats {
		if matchName(p, name) {
			s.used[i] = true
			hit = true
		}
	}
	return hit
}

func matchName(pat, name string) bool {
	for n := name; ; {
		if ok, _ := path.Match(pat, n); ok {
			return true
		}
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			return false
		}
		n = n[:i]
	}
}

// unused returns the patterns that matched nothing so far.
func (s *selector) unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, p := range s.pats {
		if !s.used[i] {
			out = append(out, p)
		}
	}
	return out
}

// all lists the names seen, sorted.
func (s *selector) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.seen))
}

// NoMatchError is a pattern of Options.Vars that selects no variable, with
// the names the input has (for suggestions). It wraps catalog.ErrNotFound.
type NoMatchError struct {
	Path    string
	Pattern string
	Names   []string // every variable name seen, sorted
}

func (e *NoMatchError) Error() string {
	names := strings.Join(e.Names, ", ")
	if len(e.Names) > 20 {
		names = strings.Join(e.Names[:20], ", ") + fmt.Sprintf(", ... (%d in all)", len(e.Names))
	}
	return fmt.Sprintf("reader: %s: no variable matches %q (names seen: %s)", e.Path, e.Pattern, names)
}

func (e *NoMatchError) Unwrap() error { return catalog.ErrNotFound }
