package chunkindex

// Attribute messages (object header message type 0x000C), checked natively
// before the HDF5 library decodes them: HDF5 1.10 crashes (a NULL pointer in
// H5A__attr_release_table) when one attribute message of an object fails to
// decode while it builds the object's attribute table.
//
//	version 1: version(1) reserved(1) name size(2) datatype size(2) dataspace size(2)
//	           name, datatype, dataspace, each padded to a multiple of 8; data
//	version 2: version(1) flags(1) name size(2) datatype size(2) dataspace size(2)
//	           name, datatype, dataspace (no padding); data
//	version 3: as version 2, then name encoding(1) before the name
//
//	name: name size bytes including the terminating NUL
//	datatype: class and version(1) (low 4 bits class 0-10, high 4 bits version 1-5) ...
//	dataspace: version(1) (1 or 2) rank(1) (at most 32) ...

import (
	"bytes"
	"io"
)

const msgAttribute = 0x0C

// CheckAttributes walks the object header at objAddr (relative HDF5
// address, as H5Oget_info reports it) and checks every attribute message it
// holds: the sizes of its name, datatype and dataspace fit the message, the
// name is NUL-terminated, and the datatype and dataspace start with a known
// class, version and rank. Attributes in dense storage (a fractal heap) and
// shared messages are left to the library. Damage wraps catalog.ErrCorrupt
// and names the offset.
func CheckAttributes(r io.ReaderAt, size int64, objAddr uint64) error {
	f, err := openFile(r, size)
	if err != nil {
		return err
	}
	oh, err := f.addr(objAddr, "object header")
	if err != nil {
		return err
	}
	if oh == undef {
		return corrupt("object header address undefined")
	}
	f.onMessage = func(m message) error {
		if m.typ != msgAttribute || m.flags&msgFlagShared != 0 {
			return nil
		}
		return checkAttribute(m)
	}
	_, _, err = f.headerMessages(oh)
	return err
}

func checkAttribute(m message) error {
	b := m.data
	bad := func(what string, args ...any) error {
		return corrupt("attribute message at offset %d: "+what, append([]any{m.at}, args...)...)
	}
	if len(b) < 8 {
		return bad("%d bytes", len(b))
	}
	version := b[0]
	c := cursor{b: b, off: 2}
	nameLen, dtLen, dsLen := int(c.u16()), int(c.u16()), int(c.u16())
	pad := func(n int) int { return n }
	switch version {
	case 1:
		pad = func(n int) int { return (n + 7) &^ 7 }
	case 2:
	case 3:
		c.skip(1) // name character set
	default:
		return bad("version %d", version)
	}
	if nameLen < 1 || dtLen < 1 || dsLen < 1 {
		return bad("name, datatype or dataspace of size 0 (%d, %d, %d)", nameLen, dtLen, dsLen)
	}
	pos := c.off
	if pad(nameLen)+pad(dtLen)+pad(dsLen) > len(b)-pos {
		return bad("name %d, datatype %d and dataspace %d bytes in a %d-byte message", nameLen, dtLen, dsLen, len(b))
	}
	name := b[pos : pos+nameLen]
	if i := bytes.IndexByte(name, 0); i != nameLen-1 {
		return bad("name of %d bytes not NUL-terminated at its end", nameLen)
	}
	pos += pad(nameLen)
	dt := b[pos]
	if class, v := dt&0x0f, dt>>4; class > 10 || v < 1 || v > 5 {
		return bad("datatype class %d version %d", class, v)
	}
	pos += pad(dtLen)
	if v, rank := b[pos], int(b[min(pos+1, len(b)-1)]); v < 1 || v > 2 || rank > 32 {
		return bad("dataspace version %d rank %d", v, rank)
	}
	return nil
}
