package catalog

import (
	"path/filepath"
	"strconv"
	"strings"
)

// SplitIteration cuts a file name of a file-based series, PREFIX<T>SUFFIX,
// around the last run of digits before its extension (".h5" and ".bp4" keep
// their digits): "openpmd_000100.bp" is ("openpmd_", 100, ".bp"). Every
// reader that tells iterations by file name uses this one rule.
func SplitIteration(name string) (prefix string, it int64, suffix string, ok bool) {
	end := strings.LastIndexAny(strings.TrimSuffix(name, filepath.Ext(name)), "0123456789")
	if end < 0 {
		return "", 0, "", false
	}
	start := end
	for start > 0 && name[start-1] >= '0' && name[start-1] <= '9' {
		start--
	}
	n, err := strconv.ParseInt(name[start:end+1], 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return name[:start], n, name[end+1:], true
}

// SeriesIterations returns the iteration of each name when there are two or
// more, all PREFIX<T>SUFFIX with one prefix and suffix and distinct T; else
// nil.
func SeriesIterations(names []string) []int64 {
	if len(names) < 2 {
		return nil
	}
	var pre, suf string
	seen := map[int64]bool{}
	out := make([]int64, len(names))
	for i, n := range names {
		p, it, s, ok := SplitIteration(n)
		if !ok || seen[it] || (i > 0 && (p != pre || s != suf)) {
			return nil
		}
		pre, suf, seen[it], out[i] = p, s, true, it
	}
	return out
}
