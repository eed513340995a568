package ntlm

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rc4"
	"encoding/binary"
	"time"
)

// Client is the client side of an NTLMv2 exchange (MS-NLMP 3.1.5), for
// tests and tools that speak to the server without a full SMB client.
type Client struct {
	User, Password, Domain, Workstation string
}

const clientFlags = FlagUnicode | FlagRequestTarget | FlagNTLM | FlagAlwaysSign | FlagExtendedSecurity |
	FlagKeyExchange | FlagSign | Flag128

// Negotiate is the client's NEGOTIATE message.
func (c Client) Negotiate() []byte {
	m := make([]byte, 32)
	copy(m, signature)
	binary.LittleEndian.PutUint32(m[8:], 1)
	binary.LittleEndian.PutUint32(m[12:], clientFlags)
	return m
}

// Authenticate answers a CHALLENGE message with an AUTHENTICATE message
// and returns the exported session key it chose (16 random bytes).
func (c Client) Authenticate(challenge []byte, now time.Time) (msg, sessionKey []byte, err error) {
	if len(challenge) < 48 || !IsNTLMSSP(challenge) || binary.LittleEndian.Uint32(challenge[8:]) != 2 {
		return nil, nil, ErrMalformed
	}
	infoLen := int(binary.LittleEndian.Uint16(challenge[40:]))
	infoOff := int(binary.LittleEndian.Uint32(challenge[44:]))
	if infoOff > len(challenge) || infoLen > len(challenge)-infoOff {
		return nil, nil, ErrMalformed
	}
	var cc [8]byte
	sessionKey = make([]byte, 16)
	if _, err := rand.Read(cc[:]); err != nil {
		return nil, nil, err
	}
	if _, err := rand.Read(sessionKey); err != nil {
		return nil, nil, err
	}
	temp := []byte{1, 1, 0, 0, 0, 0, 0, 0}
	temp = binary.LittleEndian.AppendUint64(temp, FileTime(now))
	temp = append(temp, cc[:]...)
	temp = append(temp, 0, 0, 0, 0)
	temp = append(temp, challenge[infoOff:infoOff+infoLen]...)
	temp = append(temp, 0, 0, 0, 0)
	key := NTOWFv2(c.Password, c.User, c.Domain)
	mac := hmac.New(md5.New, key)
	mac.Write(challenge[24:32])
	mac.Write(temp)
	proof := mac.Sum(nil)
	mac = hmac.New(md5.New, key)
	mac.Write(proof)
	ciph, err := rc4.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, nil, err
	}
	enc := make([]byte, 16)
	ciph.XORKeyStream(enc, sessionKey)

	nt := append(proof, temp...)
	payload := [][]byte{make([]byte, 24), nt, utf16le(c.Domain), utf16le(c.User), utf16le(c.Workstation), enc}
	const header = 88 // fields, flags, version and MIC
	m := make([]byte, header)
	copy(m, signature)
	binary.LittleEndian.PutUint32(m[8:], 3)
	off := header
	for i, p := range payload {
		putFields(m[12+8*i:], len(p), off)
		off += len(p)
	}
	binary.LittleEndian.PutUint32(m[60:], clientFlags)
	for _, p := range payload {
		m = append(m, p...)
	}
	return m, sessionKey, nil
}
