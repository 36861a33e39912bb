package fsinfo

import (
	"encoding/binary"
	"fmt"
)

// lov_user_md_v1 as LL_IOC_LOV_SETSTRIPE takes it: packed, host byte order,
// 32 bytes.
//
//	offset  size  field              value written
//	     0     4  lmm_magic          0x0BD10BD0 (LOV_USER_MAGIC_V1)
//	     4     4  lmm_pattern        0x1 (LOV_PATTERN_RAID0)
//	     8    16  lmm_oi             0 (object id and sequence)
//	    24     4  lmm_stripe_size    bytes, a multiple of 64 KiB
//	    28     2  lmm_stripe_count   1-2000
//	    30     2  lmm_stripe_offset  0xFFFF (the MDS chooses the first OST)
const (
	LovUserMagicV1   = 0x0BD10BD0
	LovPatternRAID0  = 0x1
	StripeOffsetAny  = 0xFFFF
	lovUserMdV1Bytes = 32
)

// EncodeLovUserMdV1 encodes the striping request in byte order bo (the
// host's: binary.NativeEndian).
func EncodeLovUserMdV1(count int, size int64, bo binary.ByteOrder) ([lovUserMdV1Bytes]byte, error) {
	var b [lovUserMdV1Bytes]byte
	if count < 1 || count > MaxStripeCount {
		return b, fmt.Errorf("fsinfo: stripe count %d: want 1-%d", count, MaxStripeCount)
	}
	if size < MinStripeSize || size%MinStripeSize != 0 || size > 1<<32-MinStripeSize {
		return b, fmt.Errorf("fsinfo: stripe size %d: want a multiple of 64 KiB below 4 GiB", size)
	}
	bo.PutUint32(b[0:], LovUserMagicV1)
	bo.PutUint32(b[4:], LovPatternRAID0)
	// b[8:24] lmm_oi stays zero.
	bo.PutUint32(b[24:], uint32(size))
	bo.PutUint16(b[28:], uint16(count))
	bo.PutUint16(b[30:], StripeOffsetAny)
	return b, nil
}

// iow is the Linux _IOW(typ, nr, size) request number for an architecture
// whose write direction is write at bit dirShift (1<<30 on x86, arm, riscv,
// s390; 4<<29 on powerpc, mips and sparc).
func iow(write, dirShift, typ, nr, size uintptr) uintptr {
	return write<<dirShift | size<<16 | typ<<8 | nr
}
