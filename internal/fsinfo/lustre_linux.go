//go:build linux

package fsinfo

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

func statfs(path string) (uint32, int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if err == unix.ENOENT {
			return 0, 0, os.ErrNotExist
		}
		return 0, 0, err
	}
	return uint32(st.Type), int64(st.Bsize), nil
}

// oLovDelayCreate is Lustre's O_LOV_DELAY_CREATE (>= 2.4): O_NOCTTY|FASYNC,
// meaningless for a regular file elsewhere.
const oLovDelayCreate = unix.O_NOCTTY | unix.O_ASYNC

// llIocLovSetstripe is LL_IOC_LOV_SETSTRIPE = _IOW('f', 154, long).
var llIocLovSetstripe = iow(iocWrite, iocDirShift, 'f', 154, unsafe.Sizeof(long(0)))

type long = int // C long is the word size on Linux

// SetStripe creates path (which must not exist) with count stripes of size
// bytes, before any data is written: open with O_LOV_DELAY_CREATE, then
// LL_IOC_LOV_SETSTRIPE. The file exists afterwards even when the ioctl
// failed (the error then says so; the caller may keep the default layout).
// Only meaningful on Lustre: elsewhere the ioctl fails with ENOTTY.
func SetStripe(path string, count int, size int64) error {
	lum, err := EncodeLovUserMdV1(count, size, binary.NativeEndian)
	if err != nil {
		return err
	}
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|oLovDelayCreate, 0o644)
	if err != nil {
		return fmt.Errorf("fsinfo: %s: %w", path, err)
	}
	defer unix.Close(fd)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), llIocLovSetstripe, uintptr(unsafe.Pointer(&lum[0]))); errno != 0 {
		return fmt.Errorf("fsinfo: %s: LL_IOC_LOV_SETSTRIPE (%d x %d bytes): %w", path, count, size, errno)
	}
	return nil
}
