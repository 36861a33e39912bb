package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// CorruptError is damaged input: the one error every reader returns for a
// file whose bytes contradict its format. It names the format, the file (as
// the user knows it: relative to the dataset root, or the path given), the
// byte offset of the damage (-1 when unknown) and what is wrong. It unwraps
// to ErrCorrupt, so errors.Is(err, ErrCorrupt) holds for it and for any
// error wrapping it; errors.As finds the fields.
//
// Build it with Corrupt.
type CorruptError struct {
	Format string // "bp4", "bp5", "hdf5", "amrex", ...; "" omitted
	File   string // the damaged file; "" omitted
	Offset int64  // byte offset in File, -1 when unknown (then omitted)
	What   string // what is wrong there
}

// Corrupt builds a *CorruptError; what and args are formatted as by
// fmt.Sprintf. Pass off -1 when the offset is unknown.
func Corrupt(format, file string, off int64, what string, args ...any) error {
	return &CorruptError{Format: format, File: file, Offset: max(off, -1), What: fmt.Sprintf(what, args...)}
}

// CorruptIn returns err naming file in its CorruptError when that names
// none (parsers that read an io.ReaderAt know offsets, not names), the
// context wrapped around it kept in front; other errors as they are.
func CorruptIn(err error, file string) error {
	ce := (*CorruptError)(nil)
	if !errors.As(err, &ce) || ce.File != "" {
		return err
	}
	named := &CorruptError{Format: ce.Format, File: file, Offset: ce.Offset, What: ce.What}
	if ctx, ok := strings.CutSuffix(err.Error(), ce.Error()); ok && ctx != "" {
		return fmt.Errorf("%s%w", ctx, named)
	}
	return named
}

// Error is "<format>: <file>: offset <n>: <what>: corrupt input", leaving
// out the parts that are empty or unknown.
func (e *CorruptError) Error() string {
	var b strings.Builder
	for _, s := range []string{e.Format, e.File} {
		if s != "" {
			b.WriteString(s)
			b.WriteString(": ")
		}
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, "offset %d: ", e.Offset)
	}
	if e.What != "" {
		b.WriteString(e.What)
		b.WriteString(": ")
	}
	b.WriteString(ErrCorrupt.Error())
	return b.String()
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
