package chunkindex

import (
	"bytes"

	"relayout/catalog"
)

// Object header message types used here.
const (
	msgDataspace    = 0x01
	msgLayout       = 0x08
	msgContinuation = 0x10
)

const msgFlagShared = 0x02

// message is one object header message: its type, flags and body.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
	at    int64 // absolute offset of the body, for messages
}

// headerMessages returns the dataspace and layout messages of the object
// header at absolute offset oh, following continuation messages.
func (f *file) headerMessages(oh int64) (space, layout *message, err error) {
	type span struct{ off, n int64 }
	var queue []span
	visited := map[int64]bool{}
	count := 0
	take := func(m message) error {
		count++
		if count > maxHeaderMsgs {
			return catalog.Corrupt("hdf5", "", int64(oh), "object header: more than %d messages", maxHeaderMsgs)
		}
		if f.onMessage != nil {
			if err := f.onMessage(m); err != nil {
				return err
			}
		}
		switch m.typ {
		case msgDataspace:
			if space == nil {
				space = &m
			}
		case msgLayout:
			if layout == nil {
				layout = &m
			}
		case msgContinuation:
			if len(m.data) < f.so+f.sl {
				return catalog.Corrupt("hdf5", "", int64(m.at), "continuation message: %d bytes", len(m.data))
			}
			c := cursor{b: m.data}
			a, err := f.addr(c.u(f.so), "object header continuation")
			if err != nil {
				return err
			}
			n := c.u(f.sl)
			if a == undef || n > uint64(f.size) {
				return catalog.Corrupt("hdf5", "", int64(m.at), "continuation message: block %d+%d outside the file", a, n)
			}
			queue = append(queue, span{a, int64(n)})
		}
		return nil
	}

	pre, err := f.read(oh, min(16, f.size-oh), "object header")
	if err != nil {
		return nil, nil, err
	}
	v2 := bytes.HasPrefix(pre, []byte("OHDR"))
	if v2 {
		if err := f.headerV2(oh, take); err != nil {
			return nil, nil, err
		}
	} else {
		if len(pre) < 16 {
			return nil, nil, catalog.Corrupt("hdf5", "", int64(oh), "object header: truncated")
		}
		if pre[0] != 1 {
			return nil, nil, catalog.Corrupt("hdf5", "", int64(oh), "object header: version %d, no OHDR signature", pre[0])
		}
		c := cursor{b: pre, off: 8}
		n := int64(c.u32())
		queue = append(queue, span{oh + 16, n})
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if visited[s.off] {
			return nil, nil, catalog.Corrupt("hdf5", "", int64(oh), "object header: continuation block at offset %d visited twice", s.off)
		}
		visited[s.off] = true
		if len(visited) > maxOHChunks {
			return nil, nil, catalog.Corrupt("hdf5", "", int64(oh), "object header: more than %d continuation blocks", maxOHChunks)
		}
		b, err := f.read(s.off, s.n, "object header block")
		if err != nil {
			return nil, nil, err
		}
		if v2 {
			if len(b) < 8 || !bytes.HasPrefix(b, []byte("OCHK")) {
				return nil, nil, catalog.Corrupt("hdf5", "", int64(s.off), "object header continuation block: bad signature")
			}
			if err = checksum(b, len(b)-4, s.off, "object header continuation block"); err == nil {
				err = f.messagesV2(b[4:len(b)-4], s.off+4, pre[5], take)
			}
		} else {
			err = f.messagesV1(b, s.off, take)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return space, layout, nil
}

// messagesV1 decodes version 1 messages: type(2) size(2) flags(1) reserved(3) body.
func (f *file) messagesV1(b []byte, at int64, take func(message) error) error {
	c := cursor{b: b}
	for c.left() >= 8 {
		start := c.off
		typ, n, flags := c.u16(), int(c.u16()), c.u8()
		c.skip(3)
		if n > c.left() {
			return catalog.Corrupt("hdf5", "", int64(at+int64(start)), "object header message: size %d past the end of its block", n)
		}
		m := message{typ: typ, flags: flags, data: b[c.off : c.off+n], at: at + int64(c.off)}
		c.skip(n)
		if err := take(m); err != nil {
			return err
		}
	}
	return nil
}

// headerV2 decodes the version 2 prefix and the first chunk's messages.
func (f *file) headerV2(oh int64, take func(message) error) error {
	head, err := f.read(oh, min(6+16+4+8, f.size-oh), "object header")
	if err != nil {
		return err
	}
	if len(head) < 7 || head[4] != 2 {
		return catalog.Corrupt("hdf5", "", int64(oh), "object header: truncated or bad version")
	}
	flags := head[5]
	pos := 6
	if flags&0x20 != 0 {
		pos += 16 // access, modification, change, birth times
	}
	if flags&0x10 != 0 {
		pos += 4 // attribute phase change values
	}
	w := 1 << (flags & 3)
	if len(head) < pos+w {
		return catalog.Corrupt("hdf5", "", int64(oh), "object header: truncated")
	}
	n := int64(le(head[pos : pos+w]))
	pos += w
	if n < 0 || n > f.size {
		return catalog.Corrupt("hdf5", "", int64(oh), "object header: chunk size %d", n)
	}
	all, err := f.read(oh, int64(pos)+n+4, "object header chunk") // prefix, messages, checksum
	if err != nil {
		return err
	}
	if err := checksum(all, pos+int(n), oh, "object header"); err != nil {
		return err
	}
	return f.messagesV2(all[pos:pos+int(n)], oh+int64(pos), flags, take)
}

// messagesV2 decodes version 2 messages: type(1) size(2) flags(1)
// [creation order(2)] body. A tail shorter than a message header is a gap.
func (f *file) messagesV2(b []byte, at int64, ohFlags uint8, take func(message) error) error {
	hl := 4
	if ohFlags&0x04 != 0 {
		hl = 6
	}
	c := cursor{b: b}
	for c.left() >= hl {
		start := c.off
		typ, n, flags := uint16(c.u8()), int(c.u16()), c.u8()
		c.skip(hl - 4)
		if n > c.left() {
			return catalog.Corrupt("hdf5", "", int64(at+int64(start)), "object header message: size %d past the end of its block", n)
		}
		m := message{typ: typ, flags: flags, data: b[c.off : c.off+n], at: at + int64(c.off)}
		c.skip(n)
		if err := take(m); err != nil {
			return err
		}
	}
	return nil
}

// dataspace holds current and maximum dimensions (maximum = current when
// the message has none; ^0 = unlimited).
type dataspace struct {
	dims, max []uint64
}

func (f *file) parseDataspace(m *message) (*dataspace, error) {
	if m == nil {
		return nil, catalog.Corrupt("hdf5", "", -1, "object header: no dataspace message")
	}
	if m.flags&msgFlagShared != 0 {
		return nil, unsupported("dataspace message at offset %d: shared messages", m.at)
	}
	b := m.data
	if len(b) < 4 {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "dataspace message: truncated")
	}
	version, rank, flags := b[0], int(b[1]), b[2]
	pos := 0
	switch version {
	case 1:
		pos = 8
	case 2:
		pos = 4
	default:
		return nil, unsupported("dataspace message at offset %d: version %d", m.at, version)
	}
	if rank > maxRank {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "dataspace message: rank %d", rank)
	}
	need := pos + rank*f.sl
	if flags&1 != 0 {
		need += rank * f.sl
	}
	if len(b) < need {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "dataspace message: truncated")
	}
	c := cursor{b: b, off: pos}
	ds := &dataspace{dims: make([]uint64, rank), max: make([]uint64, rank)}
	for i := range ds.dims {
		ds.dims[i] = c.u(f.sl)
	}
	for i := range ds.max {
		if flags&1 != 0 {
			ds.max[i] = c.u(f.sl)
			if f.sl < 8 && ds.max[i] == 1<<(8*f.sl)-1 {
				ds.max[i] = ^uint64(0)
			}
		} else {
			ds.max[i] = ds.dims[i]
		}
	}
	return ds, nil
}
