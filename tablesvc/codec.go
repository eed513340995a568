package tablesvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// The stored form of an entity's properties (EncodeProps), shared by the
// stores so that they agree byte for byte:
//
//	version byte 1
//	uvarint count
//	count × { uvarint len, name bytes, type byte, value }
//
// with the value by type: String and Guid uvarint len + UTF-8 bytes; Int32
// and Int64 zig-zag varint; Double 8 bytes little-endian IEEE 754 (NaN
// payloads kept); Boolean one byte 0/1; DateTime varint Ticks; Binary
// uvarint len + bytes. Names and strings are not repeated or compressed:
// an entity is at most 1 MiB by DM's estimate and this form is never
// larger than that estimate plus a few bytes per property.
const codecVersion = 1

// ticksToUnix is the number of 100 ns ticks from 0001-01-01 to 1970-01-01.
const ticksToUnix = 62135596800 * 1e7

// Ticks is t as 100 ns ticks since 0001-01-01T00:00:00Z (.NET's
// DateTime.Ticks); it fits an int64 for every year up to 9999.
func Ticks(t time.Time) int64 {
	return t.Unix()*1e7 + int64(t.Nanosecond())/100 + ticksToUnix
}

// FromTicks is the inverse of Ticks, in UTC.
func FromTicks(n int64) time.Time {
	n -= ticksToUnix
	sec, rem := n/1e7, n%1e7
	if rem < 0 {
		sec, rem = sec-1, rem+1e7
	}
	return time.Unix(sec, rem*100).UTC()
}

// EncodeProps appends the stored form of props to dst.
func EncodeProps(dst []byte, props []Property) []byte {
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, uint64(len(props)))
	for _, p := range props {
		dst = binary.AppendUvarint(dst, uint64(len(p.Name)))
		dst = append(dst, p.Name...)
		v := p.Value
		dst = append(dst, byte(v.Type))
		switch v.Type {
		case String, Guid:
			dst = binary.AppendUvarint(dst, uint64(len(v.Str)))
			dst = append(dst, v.Str...)
		case Int32, Int64:
			dst = binary.AppendVarint(dst, v.Int)
		case Double:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Num))
		case Boolean:
			dst = append(dst, byte(b2i(v.Bool)))
		case DateTime:
			dst = binary.AppendVarint(dst, Ticks(v.Time))
		case Binary:
			dst = binary.AppendUvarint(dst, uint64(len(v.Bin)))
			dst = append(dst, v.Bin...)
		}
	}
	return dst
}

var errCorrupt = errors.New("corrupt stored properties")

// DecodeProps parses EncodeProps's form; a malformed input is an error,
// never a panic.
func DecodeProps(b []byte) ([]Property, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, fmt.Errorf("%w: version", errCorrupt)
	}
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each property takes at least 3 bytes
		return nil, fmt.Errorf("%w: count %d", errCorrupt, n)
	}
	props := make([]Property, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		var p Property
		p.Name = string(d.bytes())
		p.Value.Type = Type(d.byte())
		switch p.Value.Type {
		case String, Guid:
			p.Value.Str = string(d.bytes())
		case Int32, Int64:
			p.Value.Int = d.varint()
		case Double:
			p.Value.Num = math.Float64frombits(binary.LittleEndian.Uint64(d.take(8)))
		case Boolean:
			p.Value.Bool = d.byte() != 0
		case DateTime:
			p.Value.Time = FromTicks(d.varint())
		case Binary:
			p.Value.Bin = append([]byte{}, d.bytes()...)
		default:
			d.err = fmt.Errorf("%w: type %d", errCorrupt, p.Value.Type)
		}
		props = append(props, p)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return props, nil
}

// decoder reads the stored form; after the first error it returns zeros.
type decoder struct {
	b   []byte
	err error
}

var zero8 [8]byte

func (d *decoder) take(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		if d.err == nil {
			d.err = fmt.Errorf("%w: truncated", errCorrupt)
		}
		if n <= 8 {
			return zero8[:n]
		}
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte { return d.take(1)[0] }

func (d *decoder) bytes() []byte { return d.take(d.uvarint()) }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: varint", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: varint", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}
