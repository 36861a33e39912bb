package job

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUsage marks errors in the command line or in what the user asked of an
// output directory: the same command can never succeed (main: exit 2).
// Test with errors.Is; Usagef makes them.
var ErrUsage = errors.New("usage error")

// ErrVerifyFailed reports that verification found differences (main: exit 1).
var ErrVerifyFailed = errors.New("verification failed")

type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// Usagef is a usage error (errors.Is(err, ErrUsage)) whose message is the
// formatted text alone.
func Usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// HumanBytes is n in IEC units: "512B", "1.5KiB", "3.2MiB", "1.0GiB".
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// Dims is a shape or chunk shape as "64x64x64" ("scalar" when empty).
func Dims(v []int64) string {
	if len(v) == 0 {
		return "scalar"
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "x")
}
