//go:build !linux

package fsinfo

import (
	"fmt"
	"os"
)

func statfs(path string) (uint32, int64, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, 0, err
	}
	return 0, 0, nil // unknown: classified as local
}

// SetStripe is Linux-only.
func SetStripe(path string, count int, size int64) error {
	return fmt.Errorf("fsinfo: %s: Lustre striping needs Linux", path)
}
