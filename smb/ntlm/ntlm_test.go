package ntlm

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

// MS-NLMP 4.2.4.1.1: NTOWFv2("Password", "User", "Domain").
func TestNTOWFv2Vector(t *testing.T) {
	got := hex.EncodeToString(NTOWFv2("Password", "User", "Domain"))
	if want := "0c868a403bfd7a93a3001ef22ef02e3f"; got != want {
		t.Fatalf("NTOWFv2 = %s, want %s", got, want)
	}
}

// clientAuthenticate builds an AUTHENTICATE message as a client does from
// a CHALLENGE (MS-NLMP 3.3.2), with key exchange.
func clientAuthenticate(t *testing.T, ch []byte, user, domain, password string, exported []byte) []byte {
	t.Helper()
	serverChallenge := ch[24:32]
	infoLen := int(binary.LittleEndian.Uint16(ch[40:]))
	infoOff := int(binary.LittleEndian.Uint32(ch[44:]))
	info := ch[infoOff : infoOff+infoLen]
	temp := []byte{1, 1, 0, 0, 0, 0, 0, 0}
	temp = binary.LittleEndian.AppendUint64(temp, 0)
	temp = append(temp, []byte("clientch")...)
	temp = append(temp, 0, 0, 0, 0)
	temp = append(temp, info...)
	temp = append(temp, 0, 0, 0, 0)
	key := NTOWFv2(password, user, domain)
	mac := hmac.New(md5.New, key)
	mac.Write(serverChallenge)
	mac.Write(temp)
	proof := mac.Sum(nil)
	nt := append(append([]byte{}, proof...), temp...)
	mac = hmac.New(md5.New, key)
	mac.Write(proof)
	base := mac.Sum(nil)
	enc := make([]byte, 16)
	c, _ := rc4.NewCipher(base)
	c.XORKeyStream(enc, exported)

	payload := [][]byte{make([]byte, 24), nt, utf16le(domain), utf16le(user), utf16le("WS"), enc}
	m := make([]byte, 88)
	copy(m, signature)
	binary.LittleEndian.PutUint32(m[8:], 3)
	off := len(m)
	for i, p := range payload {
		putFields(m[12+8*i:], len(p), off)
		off += len(p)
	}
	binary.LittleEndian.PutUint32(m[60:], FlagUnicode|FlagNTLM|FlagExtendedSecurity|FlagKeyExchange|FlagSign|Flag128)
	for _, p := range payload {
		m = append(m, p...)
	}
	return m
}

func negotiateMsg() []byte {
	m := make([]byte, 32)
	copy(m, signature)
	binary.LittleEndian.PutUint32(m[8:], 1)
	binary.LittleEndian.PutUint32(m[12:], FlagUnicode|FlagNTLM|FlagExtendedSecurity|FlagKeyExchange|FlagSign|Flag128)
	return m
}

func TestAuthenticate(t *testing.T) {
	accounts := func(user string) (string, bool) {
		if user == "devstoreaccount1" || user == "DEVSTOREACCOUNT1" {
			return "secret==", true
		}
		return "", false
	}
	exported := bytes.Repeat([]byte{0x5a}, 16)
	tests := []struct {
		name, user, domain, password string
		wantErr                      error
	}{
		{"right key, empty domain", "devstoreaccount1", "", "secret==", nil},
		{"right key, any domain", "DEVSTOREACCOUNT1", "WORKGROUP", "secret==", nil},
		{"wrong key", "devstoreaccount1", "", "secret=", ErrLogon},
		{"unknown user", "someone", "", "secret==", ErrLogon},
		{"anonymous", "", "", "", ErrAnonymous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc [8]byte
			copy(sc[:], "serverch")
			ch, err := NewChallenge(negotiateMsg(), sc, time.Unix(1700000000, 0), Names{Computer: "BLOBSHARE", Domain: "WORKGROUP"})
			if err != nil {
				t.Fatal(err)
			}
			msg := clientAuthenticate(t, ch.Message, tt.user, tt.domain, tt.password, exported)
			if tt.user == "" {
				for i := 2; i < 6; i++ { // empty NT response and user
					putFields(msg[12+8*(i-1):], 0, 88)
				}
			}
			res, err := ch.Authenticate(msg, accounts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && !bytes.Equal(res.SessionKey, exported) {
				t.Fatalf("session key %x, want %x", res.SessionKey, exported)
			}
		})
	}
}

func TestSPNEGORoundTrip(t *testing.T) {
	tok := negotiateMsg()
	// A client's NegTokenInit (as go-smb2 and smbclient send it).
	init := der(0x60, der(0x06, oidSPNEGO), der(0xa0, der(0x30,
		der(0xa0, der(0x30, der(0x06, oidNTLM))),
		der(0xa2, der(0x04, tok)))))
	got, wrapped, err := Unwrap(init)
	if err != nil || !wrapped || !bytes.Equal(got, tok) {
		t.Fatalf("Unwrap(init) = %x, %v, %v", got, wrapped, err)
	}
	got, wrapped, err = Unwrap(NegTokenResp(AcceptIncomplete, tok))
	if err != nil || !wrapped || !bytes.Equal(got, tok) {
		t.Fatalf("Unwrap(resp) = %x, %v, %v", got, wrapped, err)
	}
	got, wrapped, err = Unwrap(tok)
	if err != nil || wrapped || !bytes.Equal(got, tok) {
		t.Fatalf("Unwrap(raw) = %x, %v, %v", got, wrapped, err)
	}
	krb := der(0x60, der(0x06, oidSPNEGO), der(0xa0, der(0x30,
		der(0xa0, der(0x30, der(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02}))),
		der(0xa2, der(0x04, tok)))))
	if _, _, err := Unwrap(krb); !errors.Is(err, ErrNoNTLM) {
		t.Fatalf("Kerberos-only token: err = %v, want ErrNoNTLM", err)
	}
	if _, _, err := Unwrap(NegTokenInit()[:10]); err == nil {
		t.Fatal("truncated token accepted")
	}
}

func FuzzUnwrap(f *testing.F) {
	f.Add(NegTokenInit())
	f.Add(NegTokenResp(AcceptIncomplete, negotiateMsg()))
	f.Add(negotiateMsg())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = Unwrap(b)
	})
}

func FuzzNTLM(f *testing.F) {
	var sc [8]byte
	ch, _ := NewChallenge(negotiateMsg(), sc, time.Unix(0, 0), Names{Computer: "X", Domain: "Y"})
	f.Add(negotiateMsg())
	f.Add(ch.Message)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = NewChallenge(b, sc, time.Unix(0, 0), Names{})
		_, _ = ch.Authenticate(b, func(string) (string, bool) { return "k", true })
	})
}
