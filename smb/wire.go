package smb

import (
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf16"
)

// errMalformed is a request whose fixed part or buffers do not fit the
// message: answered STATUS_INVALID_PARAMETER.
var errMalformed = errors.New("smb: malformed request")

var le = binary.LittleEndian

// Protocol identifiers at the start of a message.
var (
	protoSMB2 = [4]byte{0xfe, 'S', 'M', 'B'}
	protoSMB1 = [4]byte{0xff, 'S', 'M', 'B'}
)

// headerSize is the SMB2 header's size; request and response bodies start
// there, and every offset in a body counts from the header's first byte.
const headerSize = 64

// Commands (MS-SMB2 2.2.1.2).
const (
	cmdNegotiate      uint16 = 0x00
	cmdSessionSetup   uint16 = 0x01
	cmdLogoff         uint16 = 0x02
	cmdTreeConnect    uint16 = 0x03
	cmdTreeDisconnect uint16 = 0x04
	cmdCreate         uint16 = 0x05
	cmdClose          uint16 = 0x06
	cmdFlush          uint16 = 0x07
	cmdRead           uint16 = 0x08
	cmdWrite          uint16 = 0x09
	cmdLock           uint16 = 0x0a
	cmdIoctl          uint16 = 0x0b
	cmdCancel         uint16 = 0x0c
	cmdEcho           uint16 = 0x0d
	cmdQueryDirectory uint16 = 0x0e
	cmdChangeNotify   uint16 = 0x0f
	cmdQueryInfo      uint16 = 0x10
	cmdSetInfo        uint16 = 0x11
	cmdOplockBreak    uint16 = 0x12
)

// Header flags.
const (
	flagResponse uint32 = 0x00000001
	flagAsync    uint32 = 0x00000002
	flagRelated  uint32 = 0x00000004
	flagSigned   uint32 = 0x00000008
)

// Dialects.
const (
	dialect202      uint16 = 0x0202
	dialect210      uint16 = 0x0210
	dialect300      uint16 = 0x0300
	dialect302      uint16 = 0x0302
	dialect311      uint16 = 0x0311
	dialectWildcard uint16 = 0x02ff
)

// header is the SMB2 sync or async header (MS-SMB2 2.2.1).
type header struct {
	CreditCharge uint16
	Status       uint32 // ChannelSequence/Reserved in requests
	Command      uint16
	Credits      uint16 // CreditRequest / CreditResponse
	Flags        uint32
	NextCommand  uint32
	MessageID    uint64
	AsyncID      uint64 // async header only
	TreeID       uint32 // sync header only
	SessionID    uint64
	Signature    [16]byte
}

// decodeHeader reads a header from the start of msg.
func decodeHeader(msg []byte) (header, error) {
	var h header
	if len(msg) < headerSize || [4]byte(msg[:4]) != protoSMB2 || le.Uint16(msg[4:]) != headerSize {
		return h, errMalformed
	}
	h.CreditCharge = le.Uint16(msg[6:])
	h.Status = le.Uint32(msg[8:])
	h.Command = le.Uint16(msg[12:])
	h.Credits = le.Uint16(msg[14:])
	h.Flags = le.Uint32(msg[16:])
	h.NextCommand = le.Uint32(msg[20:])
	h.MessageID = le.Uint64(msg[24:])
	if h.Flags&flagAsync != 0 {
		h.AsyncID = le.Uint64(msg[32:])
	} else {
		h.TreeID = le.Uint32(msg[36:])
	}
	h.SessionID = le.Uint64(msg[40:])
	copy(h.Signature[:], msg[48:64])
	return h, nil
}

// encode writes h into b[:headerSize].
func (h *header) encode(b []byte) {
	copy(b, protoSMB2[:])
	le.PutUint16(b[4:], headerSize)
	le.PutUint16(b[6:], h.CreditCharge)
	le.PutUint32(b[8:], h.Status)
	le.PutUint16(b[12:], h.Command)
	le.PutUint16(b[14:], h.Credits)
	le.PutUint32(b[16:], h.Flags)
	le.PutUint32(b[20:], h.NextCommand)
	le.PutUint64(b[24:], h.MessageID)
	if h.Flags&flagAsync != 0 {
		le.PutUint64(b[32:], h.AsyncID)
	} else {
		le.PutUint32(b[32:], 0)
		le.PutUint32(b[36:], h.TreeID)
	}
	le.PutUint64(b[40:], h.SessionID)
	copy(b[48:64], h.Signature[:])
}

// fileID is an SMB2_FILEID: the persistent and volatile halves.
type fileID struct{ Persistent, Volatile uint64 }

var relatedFileID = fileID{^uint64(0), ^uint64(0)}

func getFileID(b []byte) fileID { return fileID{le.Uint64(b), le.Uint64(b[8:])} }

func (f fileID) put(b []byte) {
	le.PutUint64(b, f.Persistent)
	le.PutUint64(b[8:], f.Volatile)
}

// buffer returns msg[off:off+n] when it lies inside msg past the header
// (offsets count from the header's start); n == 0 gives nil.
func buffer(msg []byte, off, n uint32) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if off < headerSize || uint64(off)+uint64(n) > uint64(len(msg)) {
		return nil, errMalformed
	}
	return msg[off : off+n], nil
}

// body checks that a request body has its fixed part (StructureSize, whose
// low bit marks a variable part) and returns it.
func body(msg []byte, structureSize uint16) ([]byte, error) {
	b := msg[headerSize:]
	fixed := int(structureSize &^ 1)
	if len(b) < fixed || le.Uint16(b) != structureSize {
		return nil, errMalformed
	}
	return b, nil
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		le.PutUint16(b[2*i:], c)
	}
	return b
}

func fromUTF16(b []byte) (string, error) {
	if len(b)%2 != 0 {
		return "", errMalformed
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), nil
}

// filetime is t as a Windows FILETIME (0 for the zero time).
func filetime(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano()/100 + 116444736000000000)
}

// fromFiletime is the inverse of filetime.
func fromFiletime(v uint64) time.Time {
	return time.Unix(0, (int64(v)-116444736000000000)*100).UTC()
}

func align4(n int) int { return (n + 3) &^ 3 }

func align8(n int) int { return (n + 7) &^ 7 }

// appendPad appends zeros to b up to a multiple of 8 bytes.
func appendPad(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}
