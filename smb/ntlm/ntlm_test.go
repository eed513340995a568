package ntlm

import (
	"bytes"
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

func negotiateMsg() []byte { return Client{}.Negotiate() }

func TestAuthenticate(t *testing.T) {
	accounts := func(user string) (string, bool) {
		if user == "devstoreaccount1" || user == "DEVSTOREACCOUNT1" {
			return "secret==", true
		}
		return "", false
	}
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
			client := Client{User: tt.user, Domain: tt.domain, Password: tt.password, Workstation: "WS"}
			ch, err := NewChallenge(client.Negotiate(), sc, time.Unix(1700000000, 0), Names{Computer: "BLOBSHARE", Domain: "WORKGROUP"})
			if err != nil {
				t.Fatal(err)
			}
			msg, exported, err := client.Authenticate(ch.Message, time.Unix(1700000000, 0))
			if err != nil {
				t.Fatal(err)
			}
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
