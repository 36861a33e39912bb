//go:build linux && (ppc || ppc64 || ppc64le || mips || mipsle || mips64 || mips64le || sparc64)

package fsinfo

const (
	iocWrite    = 4
	iocDirShift = 29
)
