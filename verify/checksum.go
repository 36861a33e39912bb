package verify

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// The positional checksum: an array's elements as the coefficients of a
// polynomial, evaluated at a point x drawn at random for each check.
//
// Word j of an array's row-major little-endian elements (element e, word
// w of it: j = e*W + w, W words of at most 32 bits an element: one for
// 1-, 2- and 4-byte types, two for 8-byte ones) is the coefficient of x^j,
// in the field of integers modulo the prime p = 2^61 - 1:
//
//	S(x) = sum_j word_j * x^j = sum_e X^e * phi(v_e)   (X = x^W, phi(v) = sum_w word_w x^w)
//
// The sum does not depend on the order the elements come in, so both
// sides are summed in the order they are read:
//
//	output, band after band (rows lo..hi of dimension 0, first element E):
//	    S_out = sum_bands X^E * poly(band)           poly(b) = sum_k phi(b_k) X^k
//	input, block after block in file order, row after row of each block
//	(a row: n elements along the last dimension, first element e0):
//	    S_in  = sum_rows X^e0 * (poly(row) - f * geo(n))     geo(n) = sum_{k<n} X^k
//
// f = phi(fill value): the term taken off each covered row makes every
// covered element count its value less the fill's, so that with F = sum of
// X^e over all N elements (geo(N)), the output equals the input, holes
// holding the fill value, exactly when
//
//	S_out = S_in + f * geo(N)          (as polynomials: coefficient by coefficient)
//
// provided no element is covered twice (the blocks are checked disjoint
// first: on a grid of cells, quick.go's disjoint) and the fill is recorded when there
// are holes. Two different arrays give the same polynomial only if they
// are equal, and two different polynomials of degree < D agree at a random
// point with probability at most D/p: below 2^-30 for 2^31 words (a 16 GiB
// array), 2^-35 for a 256^3 float64 one. When the sums differ (or the
// blocks overlap), the array is compared again element by element (the
// exact path: joint.go, order.go), which finds the first difference or, for
// overlapping blocks, checks each of them.
//
// Arithmetic is lazy: values stay below 2^63 between operations and are
// reduced to [0, p) only to be compared (mul's bounds).

// mersenne61 is the prime p = 2^61 - 1.
const mersenne61 = 1<<61 - 1

// mul is a*b folded below 2^61 + 8, for a < 2^63 and b < 2^61 + 8 (a
// product below 2^125 - 2^122: the sum of its two folds stays in 64 bits).
func mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return fold(lo&mersenne61 + (lo>>61 | hi<<3))
}

// fold is v modulo p, below 2^61 + 8.
func fold(v uint64) uint64 { return v&mersenne61 + v>>61 }

// reduce is v modulo p in [0, p).
func reduce(v uint64) uint64 {
	v = fold(v)
	if v >= mersenne61 {
		v -= mersenne61
	}
	return v
}

// field holds, for one point x and W words per element, X = x^W and the
// powers of X by table: X^e for e < 2^48 in three multiplications.
type field struct {
	x, X   uint64
	words  int // W
	pow    [4][4096]uint64
	xpow   [chunk]uint64 // x * X^k: the high words of 8-byte elements
	invXm1 uint64        // 1/(X-1), for geo
}

// newField makes the field of point x for W words an element (x^W != 1).
func newField(x uint64, words int) *field {
	f := &field{x: x, X: 1, words: words}
	for range words {
		f.X = reduce(mul(f.X, x))
	}
	base := f.X
	for t := range f.pow {
		f.pow[t][0] = 1
		for i := 1; i < len(f.pow[t]); i++ {
			f.pow[t][i] = reduce(mul(f.pow[t][i-1], base))
		}
		base = reduce(mul(f.pow[t][4095], base)) // base^4096
	}
	for k := range f.xpow {
		f.xpow[k] = reduce(mul(f.pow[0][k], x))
	}
	f.invXm1 = powMod(f.X+mersenne61-1, mersenne61-2)
	return f
}

// powMod is b^e modulo p (square and multiply: the tables need an inverse).
func powMod(b, e uint64) uint64 {
	r := uint64(1)
	b = reduce(b)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = reduce(mul(r, b))
		}
		b = reduce(mul(b, b))
	}
	return r
}

// maxIndex bounds the element indexes of the tables.
const maxIndex = 1 << 48

// powX is X^e (e < maxIndex), folded.
func (f *field) powX(e int64) uint64 {
	u := uint64(e)
	return mul(mul(f.pow[0][u&4095], f.pow[1][u>>12&4095]), mul(f.pow[2][u>>24&4095], f.pow[3][u>>36&4095]))
}

// geo is sum_{k<n} X^k, reduced.
func (f *field) geo(n int64) uint64 {
	return reduce(mul(f.powX(n)+mersenne61-1, f.invXm1))
}

// phi is the value of one little-endian element of size bytes (1, 2, 4 or
// 8): its words as coefficients of 1, x.
func (f *field) phi(e []byte) uint64 {
	switch len(e) {
	case 1:
		return uint64(e[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(e))
	case 4:
		return uint64(binary.LittleEndian.Uint32(e))
	}
	v := binary.LittleEndian.Uint64(e)
	return reduce(v&0xffffffff + mul(v>>32, f.x))
}

// chunk is the elements of a run whose terms poly sums before reducing.
const chunk = 256

// poly is sum_k phi(v_k) X^k over the little-endian elements of data
// (size bytes each), below 2^62. A run is summed chunk by chunk: within a
// chunk each word times its power from a table (below 2^93) is added to a
// 128-bit sum without reduction (no product waits on another), the
// chunks then combined by Horner's rule in X^chunk.
func (f *field) poly(data []byte, size int) uint64 {
	step := chunk * size
	if len(data) <= step {
		return f.chunkSum(data, size)
	}
	var h uint64
	for lo := (len(data) - 1) / step * step; lo >= 0; lo -= step {
		h = fold(mul(h, f.pow[0][chunk]) + f.chunkSum(data[lo:min(lo+step, len(data))], size))
	}
	return h
}

// chunkSum is sum_k phi(v_k) X^k over at most chunk elements, folded.
func (f *field) chunkSum(data []byte, size int) uint64 {
	n := len(data) / size
	return dot(data, size, f.pow[0][:n], f.xpow[:n])
}

// dot is sum_k phi'(v_k) over the little-endian elements of data (size
// bytes each, len(t) of them), phi' weighing the low word by t[k] and an
// 8-byte element's high word by tx[k] (t and tx reduced), folded: two
// 128-bit sums of products below 2^93, no reduction in the loop (exact
// for up to 2^30 elements), the products of one element's two words
// independent.
func dot(data []byte, size int, t, tx []uint64) uint64 {
	n := len(t)
	var h0, l0, h1, l1, c uint64
	switch size {
	case 8:
		tx = tx[:n]
		for k, tk := range t {
			v := binary.LittleEndian.Uint64(data)
			data = data[8:]
			ph, pl := bits.Mul64(v&0xffffffff, tk)
			l0, c = bits.Add64(l0, pl, 0)
			h0 += ph + c
			ph, pl = bits.Mul64(v>>32, tx[k])
			l1, c = bits.Add64(l1, pl, 0)
			h1 += ph + c
		}
	case 4:
		data = data[:4*n]
		for k := range t {
			ph, pl := bits.Mul64(uint64(binary.LittleEndian.Uint32(data[4*k:])), t[k])
			l0, c = bits.Add64(l0, pl, 0)
			h0 += ph + c
		}
	case 2:
		data = data[:2*n]
		for k := range t {
			ph, pl := bits.Mul64(uint64(binary.LittleEndian.Uint16(data[2*k:])), t[k])
			l0, c = bits.Add64(l0, pl, 0)
			h0 += ph + c
		}
	default:
		data = data[:n]
		for k := range t {
			ph, pl := bits.Mul64(uint64(data[k]), t[k])
			l0, c = bits.Add64(l0, pl, 0)
			h0 += ph + c
		}
	}
	lo, c := bits.Add64(l0, l1, 0)
	hi := h0 + h1 + c // below 2^125: hi:lo >> 61 fits 64 bits
	return fold(lo&mersenne61 + fold(lo>>61|hi<<3))
}

// blockTable is X^(offset in the array) of every element of a block of
// one count, row-major (and times x, for the high words of 8-byte
// elements): a block stored as its region (storedAsRegion) is then one
// dot product of its bytes, X^(its first element) times that, whatever
// its rows (a 4^3 block: 16 rows of 4 elements, each a polynomial and a
// weight, cost twice as much).
type blockTable struct {
	count []int64
	t, tx []uint64
	sum   uint64 // of t: the weights a fill value gets
}

// maxTable bounds a block table's elements.
const maxTable = 4096

// blockTable makes the table of blocks of count in an array of row-major
// strides rs.
func (f *field) blockTable(count []int64, rs rowSteps) *blockTable {
	n := int64(1)
	for _, c := range count {
		n *= c
	}
	bt := &blockTable{count: count, t: make([]uint64, n), tx: make([]uint64, n)}
	rank := len(count)
	g := make([]int64, rank)
	for k := range bt.t {
		var e int64
		for d := range rank {
			e += g[d] * rs.stride[d]
		}
		bt.t[k] = reduce(f.powX(e))
		bt.tx[k] = reduce(mul(bt.t[k], f.x))
		bt.sum = reduce(bt.sum + bt.t[k])
		for d := rank - 1; d >= 0; d-- {
			if g[d]++; g[d] < count[d] {
				break
			}
			g[d] = 0
		}
	}
	return bt
}

// fields are a check's fields: one random point, a field per word count
// (made once, when first needed).
type fields struct {
	x    uint64
	once [3]sync.Once
	f    [3]*field
}

func newFields() *fields {
	// x in [2, p-2]: x^W != 1 for W = 1, 2 (the only roots of x^2 = 1 are
	// 1 and p-1).
	return &fields{x: 2 + rand.Uint64N(mersenne61-3)}
}

// of is the field of elements of size bytes (1, 2, 4 or 8).
func (fs *fields) of(size int) *field {
	w := (size + 3) / 4
	fs.once[w].Do(func() { fs.f[w] = newField(fs.x, w) })
	return fs.f[w]
}

// quickSize reports whether elements of size bytes have a field.
func quickSize(size int) bool { return size == 1 || size == 2 || size == 4 || size == 8 }

// tableSum is the input term of a block of bt's count stored as its
// region (data, little-endian) at lower: X^(its first element) times the
// dot product of its elements with the table, less the fill's share
// (fill: phi of the fill value) of each element.
func (f *field) tableSum(bt *blockTable, data []byte, fill uint64, rs rowSteps, lower []int64) uint64 {
	s := dot(data, len(data)/len(bt.t), bt.t, bt.tx)
	if fill != 0 {
		s += mersenne61 - reduce(mul(fill, bt.sum))
	}
	return mul(s, f.powX(firstIndex(lower, rs)))
}

// rowSteps are an array's row-major element strides and X to each.
type rowSteps struct {
	stride []int64
	weight []uint64
}

// firstIndex is the row-major index of lower in an array of strides rs.
func firstIndex(lower []int64, rs rowSteps) int64 {
	var e int64
	for d, l := range lower {
		e += l * rs.stride[d]
	}
	return e
}

func (f *field) rowSteps(shape []int64) rowSteps {
	rs := rowSteps{stride: make([]int64, len(shape)), weight: make([]uint64, len(shape))}
	n := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		rs.stride[d] = n
		rs.weight[d] = f.powX(n)
		n *= shape[d]
	}
	return rs
}

// blockSum is block b's input term (S_in above) over its region (its whole
// Box): data is its decoded stored bytes (placement p), fillTerm is
// f*geo(n) for its rows of n elements, rs the array's strides; scratch (a
// row, for rows gathered element by element) and g, wts (the rank) are the
// caller's.
func (f *field) blockSum(p placement, data []byte, fillTerm uint64, rs rowSteps, scratch []byte, g []int64, wts []uint64) (uint64, []byte) {
	box := p.b.Box
	rank := len(box.Lower)
	last := rank - 1
	size := int64(p.size)
	n := box.Count[last]
	wt := f.powX(firstIndex(box.Lower, rs))
	for d := range last {
		wts[d] = wt
	}
	copy(g, box.Lower)
	step := p.strides[last]
	minus := mersenne61 - fillTerm
	var acc uint64
	for {
		in0 := p.offset(g)
		var row []byte
		if step == 1 && !p.swap {
			row = data[in0*size : (in0+n)*size]
		} else {
			if int64(cap(scratch)) < n*size {
				scratch = make([]byte, n*size)
			}
			row = scratch[:n*size]
			for k := range n {
				i := (in0 + k*step) * size
				e, o := data[i:i+size], row[k*size:(k+1)*size]
				if p.swap {
					for j := range o {
						o[j] = e[len(e)-1-j]
					}
				} else {
					copy(o, e)
				}
			}
		}
		acc = fold(acc + mul(fold(f.poly(row, p.size))+minus, wt))
		// Next row: the odometer over dimensions 0..r-2; wts[d] is the
		// weight of the current index of dimensions 0..d (deeper ones at
		// their lower).
		d := last - 1
		for ; d >= 0; d-- {
			if g[d]++; g[d] < box.Lower[d]+box.Count[d] {
				wts[d] = mul(wts[d], rs.weight[d])
				break
			}
			g[d] = box.Lower[d]
		}
		if d < 0 {
			return acc, scratch
		}
		for dd := d + 1; dd < last; dd++ {
			wts[dd] = wts[d]
		}
		wt = wts[last-1]
	}
}
