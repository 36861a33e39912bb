package rewriter

import (
	"fmt"
	"strconv"
	"strings"

	"relayout/catalog"
)

// Difference is a mismatch a read back finds (ReadBack.Dataset: a dataset
// missing from the output or of another shape, or what the caller's check
// of a unit refuses): a result, not an I/O error. Msg names what differs.
type Difference struct{ Msg string }

func (d *Difference) Error() string { return d.Msg }

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
