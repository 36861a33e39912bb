package rewriter

import (
	"fmt"
	"strconv"
	"strings"

	"relayout/catalog"
)

// difference is a mismatch found by a check (the commit's journal check,
// the comparison of overlapping blocks): a result, not an I/O error.
type difference struct{ msg string }

func (d *difference) Error() string { return d.msg }

func where(k catalog.Key) string {
	return fmt.Sprintf("%s step %d level %d", k.Var, k.Step, k.Level)
}

// firstDiff is the index of the first byte where a and b differ (len(a)
// when b starts with a).
func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

func formatIndex(idx []int64) string {
	s := make([]string, len(idx))
	for i, v := range idx {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(s, ",") + "]"
}
