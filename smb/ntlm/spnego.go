package ntlm

import (
	"bytes"
	"errors"
)

// ErrNoNTLM is a SPNEGO token that offers no NTLMSSP mechanism.
var ErrNoNTLM = errors.New("spnego: NTLMSSP not offered")

var (
	oidSPNEGO = []byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x02}                         // 1.3.6.1.5.5.2
	oidNTLM   = []byte{0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a} // 1.3.6.1.4.1.311.2.2.10
)

// SPNEGO negotiation states (RFC 4178 4.2.2).
const (
	AcceptCompleted  = 0
	AcceptIncomplete = 1
	Reject           = 2
)

// NegTokenInit is the server's initial token for the SMB2 NEGOTIATE
// response: SPNEGO offering NTLMSSP only.
func NegTokenInit() []byte {
	mechs := der(0x30, der(0x06, oidNTLM))
	init := der(0x30, der(0xa0, mechs))
	return der(0x60, der(0x06, oidSPNEGO), der(0xa0, init))
}

// NegTokenResp wraps an NTLM message (or none) in a SPNEGO response with
// the given state; the NTLMSSP mechanism is named while the exchange is
// incomplete.
func NegTokenResp(state int, token []byte) []byte {
	return NegTokenRespMIC(state, token, nil)
}

// NegTokenRespMIC is NegTokenResp with a mechListMIC (none when mic is
// nil).
func NegTokenRespMIC(state int, token, mic []byte) []byte {
	parts := [][]byte{der(0xa0, der(0x0a, []byte{byte(state)}))}
	if state == AcceptIncomplete {
		parts = append(parts, der(0xa1, der(0x06, oidNTLM)))
	}
	if token != nil {
		parts = append(parts, der(0xa2, der(0x04, token)))
	}
	if mic != nil {
		parts = append(parts, der(0xa3, der(0x04, mic)))
	}
	return der(0xa1, der(0x30, parts...))
}

// MechTypes returns the DER MechTypeList of a SPNEGO NegTokenInit (what a
// mechListMIC covers), nil for any other blob.
func MechTypes(blob []byte) []byte {
	tag, body, _, err := tlv(blob)
	if err != nil || tag != 0x60 {
		return nil
	}
	_, _, rest, err := tlv(body)
	if err != nil {
		return nil
	}
	t, inner, _, err := tlv(rest)
	if err != nil || t != 0xa0 {
		return nil
	}
	fields, err := sequenceFields(inner)
	if err != nil {
		return nil
	}
	return fields[0xa0]
}

// HasMechListMIC reports whether a SPNEGO NegTokenResp carries a
// mechListMIC.
func HasMechListMIC(blob []byte) bool {
	tag, body, _, err := tlv(blob)
	if err != nil || tag != 0xa1 {
		return false
	}
	fields, err := sequenceFields(body)
	return err == nil && fields[0xa3] != nil
}

// Unwrap returns the NTLM message inside a security blob: a raw NTLMSSP
// message as it is, the mechToken of a SPNEGO NegTokenInit (which must
// offer NTLMSSP), or the responseToken of a NegTokenResp. spnego says
// whether the blob was wrapped, so the answer is wrapped alike.
func Unwrap(blob []byte) (token []byte, spnego bool, err error) {
	if IsNTLMSSP(blob) {
		return blob, false, nil
	}
	tag, body, _, err := tlv(blob)
	if err != nil {
		return nil, false, err
	}
	switch tag {
	case 0x60: // [APPLICATION 0] { thisMech OID, [0] NegTokenInit }
		t, oid, rest, err := tlv(body)
		if err != nil || t != 0x06 || !bytes.Equal(oid, oidSPNEGO) {
			return nil, true, ErrMalformed
		}
		t, inner, _, err := tlv(rest)
		if err != nil || t != 0xa0 {
			return nil, true, ErrMalformed
		}
		fields, err := sequenceFields(inner)
		if err != nil {
			return nil, true, err
		}
		if !offersNTLM(fields[0xa0]) {
			return nil, true, ErrNoNTLM
		}
		tok, err := octets(fields[0xa2])
		return tok, true, err
	case 0xa1: // [1] NegTokenResp
		fields, err := sequenceFields(body)
		if err != nil {
			return nil, true, err
		}
		tok, err := octets(fields[0xa2])
		return tok, true, err
	}
	return nil, false, ErrMalformed
}

// sequenceFields reads SEQUENCE { [n] ... } into its context-tagged parts.
func sequenceFields(b []byte) (map[byte][]byte, error) {
	t, seq, _, err := tlv(b)
	if err != nil || t != 0x30 {
		return nil, ErrMalformed
	}
	out := map[byte][]byte{}
	for len(seq) > 0 {
		t, v, rest, err := tlv(seq)
		if err != nil {
			return nil, err
		}
		out[t] = v
		seq = rest
	}
	return out, nil
}

func offersNTLM(mechTypes []byte) bool {
	t, seq, _, err := tlv(mechTypes)
	if err != nil || t != 0x30 {
		return false
	}
	for len(seq) > 0 {
		t, oid, rest, err := tlv(seq)
		if err != nil {
			return false
		}
		if t == 0x06 && bytes.Equal(oid, oidNTLM) {
			return true
		}
		seq = rest
	}
	return false
}

func octets(b []byte) ([]byte, error) {
	if b == nil {
		return nil, ErrMalformed
	}
	t, v, _, err := tlv(b)
	if err != nil || t != 0x04 {
		return nil, ErrMalformed
	}
	return v, nil
}

// tlv splits one DER/BER element (single-byte tag, definite length of at
// most 4 length bytes) from b.
func tlv(b []byte) (tag byte, value, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, ErrMalformed
	}
	tag = b[0]
	n := int(b[1])
	i := 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return 0, nil, nil, ErrMalformed
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		i += k
	}
	if n < 0 || n > len(b)-i {
		return 0, nil, nil, ErrMalformed
	}
	return tag, b[i : i+n], b[i+n:], nil
}

// der encodes one element with a definite length.
func der(tag byte, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := []byte{tag}
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	case n < 0x10000:
		out = append(out, 0x82, byte(n>>8), byte(n))
	default:
		out = append(out, 0x84, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
