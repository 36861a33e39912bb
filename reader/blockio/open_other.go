//go:build !unix

package blockio

import "os"

func openNonblock(path string) (*os.File, error) { return os.Open(path) }
