package storetest

import (
	"encoding/binary"
	"io"
)

// Data returns a reader of size deterministic pseudo-random bytes derived
// from seed. Byte i depends only on (seed, i), so any range of the stream
// can be regenerated with DataAt. Cheap: about one multiply-xor per 8 bytes.
func Data(seed uint64, size int64) io.Reader {
	return &dataReader{seed: seed, end: size}
}

// DataAt returns bytes [off, off+n) of Data(seed, ...).
func DataAt(seed uint64, off, n int64) []byte {
	b := make([]byte, n)
	r := &dataReader{seed: seed, pos: off, end: off + n}
	_, _ = io.ReadFull(r, b)
	return b
}

type dataReader struct {
	seed     uint64
	pos, end int64
}

func word(seed uint64, i int64) uint64 {
	// splitmix64 of the word index mixed with the seed.
	z := seed*0x9e3779b97f4a7c15 + uint64(i)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *dataReader) Read(p []byte) (int, error) {
	if r.pos >= r.end {
		return 0, io.EOF
	}
	if int64(len(p)) > r.end-r.pos {
		p = p[:r.end-r.pos]
	}
	n := 0
	for n < len(p) {
		wi := r.pos / 8
		within := int(r.pos % 8)
		if within == 0 && len(p)-n >= 8 {
			binary.LittleEndian.PutUint64(p[n:], word(r.seed, wi))
			n += 8
			r.pos += 8
			continue
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], word(r.seed, wi))
		c := copy(p[n:], w[within:])
		n += c
		r.pos += int64(c)
	}
	return n, nil
}
