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

	"relayout/catalog"
)

const msgAttribute = 0x0C

// CheckAttributes walks the object header at objAddr (relative HDF5
// address, as H5Oget_info reports it) and checks every attribute message it
// holds: the sizes of its name, datatype and dataspace fit the message, the
// name is NUL-terminated, and the datatype and dataspace start with a known
// class, version and rank. Attributes in dense storage (a fractal heap) and
// shared messages are left to the library. Damage wraps catalog.ErrCorrupt
// and names the offset.
//
// It returns the names of the attributes stored in the header (compact
// storage), in header order, so that a caller can open them by name: the
// library's by-index access builds a table of every attribute first, and
// crashes when one of them fails to decode (a damaged datatype).
func CheckAttributes(r io.ReaderAt, size int64, objAddr uint64) ([]string, error) {
	f, err := openFile(r, size)
	if err != nil {
		return nil, err
	}
	oh, err := f.addr(objAddr, "object header")
	if err != nil {
		return nil, err
	}
	if oh == undef {
		return nil, catalog.Corrupt("hdf5", "", -1, "object header address undefined")
	}
	var names []string
	f.onMessage = func(m message) error {
		if m.typ != msgAttribute || m.flags&msgFlagShared != 0 {
			return nil
		}
		name, err := checkAttribute(m)
		names = append(names, name)
		return err
	}
	_, _, err = f.headerMessages(oh)
	return names, err
}

func checkAttribute(m message) (string, error) {
	b := m.data
	var name string
	if len(b) < 8 {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: %d bytes", len(b))
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
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: version %d", version)
	}
	if nameLen < 1 || dtLen < 1 || dsLen < 1 {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: name, datatype or dataspace of size 0 (%d, %d, %d)", nameLen, dtLen, dsLen)
	}
	pos := c.off
	if pad(nameLen)+pad(dtLen)+pad(dsLen) > len(b)-pos {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: name %d, datatype %d and dataspace %d bytes in a %d-byte message", nameLen, dtLen, dsLen, len(b))
	}
	raw := b[pos : pos+nameLen]
	if i := bytes.IndexByte(raw, 0); i != nameLen-1 {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: name of %d bytes not NUL-terminated at its end", nameLen)
	}
	name = string(raw[:nameLen-1])
	pos += pad(nameLen)
	dt := b[pos]
	if class, v := dt&0x0f, dt>>4; class > 10 || v < 1 || v > 5 {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: datatype class %d version %d", class, v)
	}
	elemSize := uint64(0)
	if dtLen >= 8 {
		elemSize = uint64(b[pos+4]) | uint64(b[pos+5])<<8 | uint64(b[pos+6])<<16 | uint64(b[pos+7])<<24
	}
	pos += pad(dtLen)
	ds := b[pos : pos+dsLen]
	if v, rank := ds[0], int(ds[min(1, len(ds)-1)]); v < 1 || v > 2 || rank > 32 {
		return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: dataspace version %d rank %d", v, rank)
	}
	dataAt := pos + pad(dsLen)
	// Dimensions (size-of-lengths bytes each; 8 in every file relayout
	// has seen, other widths left to the library) within their maxima,
	// and the data they describe within the message.
	if sl := 8; len(ds) >= 4 {
		rank, flags := int(ds[1]), ds[2]
		hdr := 8 // version 1: version, rank, flags, 5 reserved
		if ds[0] == 2 {
			hdr = 4 // version, rank, flags, type
			if ds[3] == 2 {
				return name, nil // null dataspace: no data
			}
		}
		if hdr+rank*sl > len(ds) {
			return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: dataspace of rank %d in %d bytes", rank, len(ds))
		}
		hasMax := flags&1 != 0 && hdr+2*rank*sl <= len(ds)
		n := uint64(1)
		for i := 0; i < rank; i++ {
			d := le(ds[hdr+i*sl : hdr+(i+1)*sl])
			if hasMax {
				if mx := le(ds[hdr+(rank+i)*sl : hdr+(rank+i+1)*sl]); mx != ^uint64(0) && d > mx {
					return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: dimension %d of %d elements, its maximum is %d", i, d, mx)
				}
			}
			var ok bool
			if n, ok = mulCheck(n, d, uint64(len(b))); !ok {
				return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: dataspace of more elements than the message holds")
			}
		}
		if need, ok := mulCheck(n, elemSize, uint64(len(b))); elemSize > 0 && (!ok || need > uint64(len(b)-min(dataAt, len(b)))) {
			return name, catalog.Corrupt("hdf5", "", int64(m.at), "attribute message: %d elements of %d bytes, %d bytes of data in the message", n, elemSize, len(b)-min(dataAt, len(b)))
		}
	}
	return name, nil
}
