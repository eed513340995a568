package ntlm

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/crypto/md4" //nolint:staticcheck // NTLM's NT hash is MD4 by definition (MS-NLMP 3.3.1)
)

// Errors of an exchange.
var (
	ErrMalformed   = errors.New("ntlm: malformed message")
	ErrAnonymous   = errors.New("ntlm: anonymous logon refused")
	ErrLogon       = errors.New("ntlm: logon failure")
	ErrUnsupported = errors.New("ntlm: NTLMv1 or LM response refused")
)

var signature = []byte("NTLMSSP\x00")

// Negotiate flags (MS-NLMP 2.2.2.5) the server looks at or sets.
const (
	FlagUnicode          uint32 = 0x00000001
	FlagRequestTarget    uint32 = 0x00000004
	FlagSign             uint32 = 0x00000010
	FlagSeal             uint32 = 0x00000020
	FlagNTLM             uint32 = 0x00000200
	FlagAlwaysSign       uint32 = 0x00008000
	FlagTargetTypeServer uint32 = 0x00020000
	FlagExtendedSecurity uint32 = 0x00080000
	FlagTargetInfo       uint32 = 0x00800000
	FlagVersion          uint32 = 0x02000000
	Flag128              uint32 = 0x20000000
	FlagKeyExchange      uint32 = 0x40000000
	Flag56               uint32 = 0x80000000
)

// IsNTLMSSP reports whether b starts like a raw NTLMSSP message.
func IsNTLMSSP(b []byte) bool { return bytes.HasPrefix(b, signature) }

// Challenge is the server's state between its CHALLENGE and the client's
// AUTHENTICATE.
type Challenge struct {
	ServerChallenge [8]byte
	Flags           uint32
	Message         []byte // the CHALLENGE message sent
}

// Names are what the server calls itself in the CHALLENGE's target info.
type Names struct {
	Computer string // NetBIOS computer name, e.g. "BLOBSHARE"
	Domain   string // NetBIOS domain name, e.g. "WORKGROUP"
}

// NewChallenge answers a NEGOTIATE message with a CHALLENGE carrying
// serverChallenge (8 random bytes from the caller) and the time now.
func NewChallenge(negotiate []byte, serverChallenge [8]byte, now time.Time, names Names) (*Challenge, error) {
	if len(negotiate) < 16 || !IsNTLMSSP(negotiate) || binary.LittleEndian.Uint32(negotiate[8:]) != 1 {
		return nil, ErrMalformed
	}
	cf := binary.LittleEndian.Uint32(negotiate[12:])
	flags := FlagUnicode | FlagRequestTarget | FlagNTLM | FlagAlwaysSign | FlagTargetTypeServer |
		FlagExtendedSecurity | FlagTargetInfo | FlagVersion
	flags |= cf & (FlagSign | FlagSeal | Flag128 | Flag56 | FlagKeyExchange)

	target := utf16le(names.Computer)
	var info bytes.Buffer
	av := func(id uint16, v []byte) {
		var h [4]byte
		binary.LittleEndian.PutUint16(h[:], id)
		binary.LittleEndian.PutUint16(h[2:], uint16(len(v)))
		info.Write(h[:])
		info.Write(v)
	}
	av(2, utf16le(names.Domain))   // MsvAvNbDomainName
	av(1, utf16le(names.Computer)) // MsvAvNbComputerName
	av(4, utf16le(strings.ToLower(names.Domain)))
	av(3, utf16le(strings.ToLower(names.Computer)))
	var ts [8]byte
	binary.LittleEndian.PutUint64(ts[:], FileTime(now))
	av(7, ts[:]) // MsvAvTimestamp
	av(0, nil)   // MsvAvEOL

	const header = 56
	m := make([]byte, header, header+len(target)+info.Len())
	copy(m, signature)
	binary.LittleEndian.PutUint32(m[8:], 2)
	putFields(m[12:], len(target), header)
	binary.LittleEndian.PutUint32(m[20:], flags)
	copy(m[24:32], serverChallenge[:])
	putFields(m[40:], info.Len(), header+len(target))
	copy(m[48:], []byte{10, 0, 0x61, 0x4a, 0, 0, 0, 15}) // version 10.0.19041, NTLMSSP revision 15
	m = append(m, target...)
	m = append(m, info.Bytes()...)
	return &Challenge{ServerChallenge: serverChallenge, Flags: flags, Message: m}, nil
}

// Result is a successful AUTHENTICATE.
type Result struct {
	User, Domain, Workstation string
	// SessionKey is the exported session key (16 bytes), the base of SMB
	// signing keys.
	SessionKey []byte
	// Flags are the flags both sides agreed on (the AUTHENTICATE's).
	Flags uint32
}

// MechListMIC is the server's SPNEGO mechListMIC over mechTypes (the DER
// MechTypeList of the client's NegTokenInit): the NTLMSSP signature of
// sequence number 0 with the server-to-client signing key, its checksum
// sealed with the server-to-client sealing key under key exchange (MS-NLMP
// 3.4.4.2). Clients that asked for signing (smbclient with encryption)
// check it.
func (r Result) MechListMIC(mechTypes []byte) []byte {
	signKey := md5.Sum(append(append([]byte{}, r.SessionKey...), "session key to server-to-client signing key magic constant\x00"...))
	sealKey := md5.Sum(append(append([]byte{}, r.SessionKey...), "session key to server-to-client sealing key magic constant\x00"...))
	var seq [4]byte // sequence number 0
	mac := hmac.New(md5.New, signKey[:])
	mac.Write(seq[:])
	mac.Write(mechTypes)
	checksum := mac.Sum(nil)[:8]
	if r.Flags&FlagKeyExchange != 0 {
		if ciph, err := rc4.NewCipher(sealKey[:]); err == nil {
			ciph.XORKeyStream(checksum, checksum)
		}
	}
	out := []byte{1, 0, 0, 0}
	out = append(out, checksum...)
	return append(out, seq[:]...)
}

// Authenticate checks an AUTHENTICATE message against the challenge.
// password returns the password for a user name (any domain), ok=false
// for an unknown user. Errors: ErrMalformed, ErrAnonymous, ErrUnsupported,
// ErrLogon.
func (c *Challenge) Authenticate(msg []byte, password func(user string) (string, bool)) (Result, error) {
	if len(msg) < 64 || !IsNTLMSSP(msg) || binary.LittleEndian.Uint32(msg[8:]) != 3 {
		return Result{}, ErrMalformed
	}
	field := func(at int) ([]byte, error) {
		n := int(binary.LittleEndian.Uint16(msg[at:]))
		off := int(binary.LittleEndian.Uint32(msg[at+4:]))
		if n == 0 {
			return nil, nil
		}
		if off < 0 || off > len(msg) || n > len(msg)-off {
			return nil, ErrMalformed
		}
		return msg[off : off+n], nil
	}
	var fs [6][]byte
	for i := range fs {
		b, err := field(12 + 8*i)
		if err != nil {
			return Result{}, err
		}
		fs[i] = b
	}
	nt, domainB, userB, wsB, encKey := fs[1], fs[2], fs[3], fs[4], fs[5]
	flags := binary.LittleEndian.Uint32(msg[60:])
	dec := decodeUTF16
	if flags&FlagUnicode == 0 {
		dec = func(b []byte) string { return string(b) }
	}
	r := Result{User: dec(userB), Domain: dec(domainB), Workstation: dec(wsB), Flags: flags & c.Flags}
	if r.User == "" || len(nt) == 0 {
		return Result{}, ErrAnonymous
	}
	if len(nt) < 16+28 {
		return Result{}, ErrUnsupported // 24 bytes: NTLMv1
	}
	pw, ok := password(r.User)
	if !ok {
		return Result{}, ErrLogon
	}
	key := NTOWFv2(pw, r.User, r.Domain)
	proof, temp := nt[:16], nt[16:]
	mac := hmac.New(md5.New, key)
	mac.Write(c.ServerChallenge[:])
	mac.Write(temp)
	want := mac.Sum(nil)
	if !hmac.Equal(want, proof) {
		return Result{}, ErrLogon
	}
	mac = hmac.New(md5.New, key)
	mac.Write(proof)
	sessionBase := mac.Sum(nil) // KeyExchangeKey for NTLMv2
	r.SessionKey = sessionBase
	if flags&FlagKeyExchange != 0 && c.Flags&FlagKeyExchange != 0 {
		if len(encKey) != 16 {
			return Result{}, ErrMalformed
		}
		ciph, err := rc4.NewCipher(sessionBase)
		if err != nil {
			return Result{}, err
		}
		r.SessionKey = make([]byte, 16)
		ciph.XORKeyStream(r.SessionKey, encKey)
	}
	return r, nil
}

// NTOWFv2 is MS-NLMP 3.3.2's key: HMAC-MD5 over the upper-cased user and
// the domain, keyed by MD4 of the UTF-16LE password.
func NTOWFv2(password, user, domain string) []byte {
	h := md4.New()
	h.Write(utf16le(password))
	mac := hmac.New(md5.New, h.Sum(nil))
	mac.Write(utf16le(strings.ToUpper(user) + domain))
	return mac.Sum(nil)
}

// FileTime is t as 100 ns ticks since 1601-01-01 UTC (a Windows FILETIME).
func FileTime(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano()/100 + 116444736000000000)
}

func putFields(b []byte, n, off int) {
	binary.LittleEndian.PutUint16(b, uint16(n))
	binary.LittleEndian.PutUint16(b[2:], uint16(n))
	binary.LittleEndian.PutUint32(b[4:], uint32(off))
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

func decodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
