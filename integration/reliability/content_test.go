package reliability

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Every byte a crash test writes is recognisable: a 20-byte header (magic,
// file id, slot, version, length) and a pseudo-random fill derived from the
// header. decodeRecord regenerates the whole record from its header, so a
// torn mix of two versions, a stale block or a shifted range never passes.

const recMagic = "BSr1"

const recHeader = 20

// record returns the content of version ver of slot slot of file file,
// length n (n ≥ recHeader).
func record(file, slot, ver uint32, n int) []byte {
	b := make([]byte, n)
	copy(b, recMagic)
	binary.LittleEndian.PutUint32(b[4:], file)
	binary.LittleEndian.PutUint32(b[8:], slot)
	binary.LittleEndian.PutUint32(b[12:], ver)
	binary.LittleEndian.PutUint32(b[16:], uint32(n))
	r := rand.New(rand.NewPCG(uint64(file)<<32|uint64(slot), uint64(ver)*0x9e3779b97f4a7c15+uint64(n)))
	for i := recHeader; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
	return b
}

// decodeRecord identifies b: version 0 when it is all zeros (never
// written), else the version its header names, checked byte for byte
// against the regenerated record. It fails on anything else.
func decodeRecord(b []byte, file, slot uint32) (uint32, error) {
	if isZero(b) {
		return 0, nil
	}
	if len(b) < recHeader || string(b[:4]) != recMagic {
		return 0, fmt.Errorf("file %d slot %d: not a record (starts %q)", file, slot, head(b))
	}
	gf := binary.LittleEndian.Uint32(b[4:])
	gs := binary.LittleEndian.Uint32(b[8:])
	ver := binary.LittleEndian.Uint32(b[12:])
	n := binary.LittleEndian.Uint32(b[16:])
	if gf != file || gs != slot || int(n) != len(b) {
		return 0, fmt.Errorf("file %d slot %d: header names file %d slot %d length %d (have %d bytes)", file, slot, gf, gs, n, len(b))
	}
	if want := record(file, slot, ver, len(b)); !bytes.Equal(b, want) {
		i := 0
		for i < len(b) && b[i] == want[i] {
			i++
		}
		return 0, fmt.Errorf("file %d slot %d version %d: torn, differs from byte %d of %d", file, slot, ver, i, len(b))
	}
	return ver, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func head(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}
