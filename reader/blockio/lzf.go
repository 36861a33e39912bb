package blockio

// LZF, HDF5 filter 32000 (h5py's built-in "lzf" compression): each chunk is
// one raw LZF stream (liblzf's format, no header) of the whole chunk; a chunk
// LZF could not shrink is stored unfiltered (the filter is optional: the
// chunk's filter mask says so). The stream is a sequence of items, each
// starting with a control byte:
//
//	literal run    000LLLLL  then L+1 bytes copied to the output (L+1 = 1..32)
//	back reference LLLHHHHH [L2] OOOOOOOO
//	               length  = LLL + 2 (LLL 1..6), or L2 + 9 when LLL == 7
//	               distance = HHHHH<<8 | OOOOOOOO, plus 1: copy length bytes
//	               from that far back in the output (they may overlap the
//	               bytes being written: a run repeats)
//
// The output must be exactly the chunk's decoded size; nothing is allocated
// beyond it.

import (
	"fmt"

	"relayout/catalog"
)

// unlzf decodes an LZF stream that must produce exactly want bytes.
func unlzf(src []byte, want int64) ([]byte, error) {
	if want < 0 || want > int64(len(src))*(264/2)+264 {
		// An item of at most 3 input bytes yields at most 264 output
		// bytes: a stream cannot decode to more than that bound.
		return nil, catalog.Corrupt("lzf", "", -1, "%d bytes cannot decode to %d", len(src), want)
	}
	out := make([]byte, want)
	op := 0 // bytes decoded so far
	for ip := 0; ip < len(src); {
		at := ip
		ctrl := int(src[ip])
		ip++
		if ctrl < 32 { // literal run
			n := ctrl + 1
			if n > len(src)-ip {
				return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", "literal run past the end of the stream", at)
			}
			if n > len(out)-op {
				return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", fmt.Sprintf("output past %d bytes", want), at)
			}
			copy(out[op:], src[ip:ip+n])
			op += n
			ip += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(src) {
				return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", "truncated back reference", at)
			}
			n += int(src[ip])
			ip++
		}
		n += 2
		if ip >= len(src) {
			return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", "truncated back reference", at)
		}
		dist := (ctrl&0x1f)<<8 | int(src[ip]) + 1
		ip++
		if dist > op {
			return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", fmt.Sprintf("back reference %d bytes before the start of the output", dist-op), at)
		}
		if n > len(out)-op {
			return nil, catalog.Corrupt("lzf", "", -1, "%s at stream byte %d", fmt.Sprintf("output past %d bytes", want), at)
		}
		// The source may overlap the bytes being written (dist < n: a
		// repeating pattern); each copy takes at most dist bytes, which
		// are all written already.
		for from := op - dist; n > 0; {
			k := copy(out[op:op+n], out[from:op])
			op += k
			n -= k
		}
	}
	out = out[:op]
	if int64(len(out)) != want {
		return nil, catalog.Corrupt("lzf", "", -1, "stream decodes to %d bytes, want %d", len(out), want)
	}
	return out, nil
}
