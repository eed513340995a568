package smb_test

import (
	"bytes"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/smb"
)

// TestSmbclientEncryption: smbclient with encryption required
// (--client-protection=encrypt, which fails unless the server encrypts)
// puts and gets a file with a checksum on SMB 3.0 and 3.0.2 (AES-128-CCM)
// and 3.1.1 with each cipher (AES-128-CCM, AES-128-GCM); and with signing
// required on 3.1.1 with each signing algorithm (AES-GMAC, AES-CMAC,
// HMAC-SHA256) negotiated in the signing capabilities context.
func TestSmbclientEncryption(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	up, sum := randomFile(t, 3<<20+12345)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"3.0 CCM", []string{"--client-protection=encrypt", "--option=client max protocol=SMB3_00"}},
		{"3.0.2 CCM", []string{"--client-protection=encrypt", "--option=client max protocol=SMB3_02"}},
		{"3.1.1 CCM", []string{"--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-128-ccm"}},
		{"3.1.1 GCM", []string{"--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-128-gcm"}},
		{"3.1.1 GMAC signing", []string{"--option=client smb3 signing algorithms=aes-128-gmac"}},
		{"3.1.1 CMAC signing", []string{"--option=client smb3 signing algorithms=aes-128-cmac"}},
		{"3.1.1 HMAC-SHA256 signing", []string{"--option=client smb3 signing algorithms=hmac-sha-256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			down := filepath.Join(t.TempDir(), "down.bin")
			name := strings.ReplaceAll(tc.name, " ", "_") + ".bin"
			out, err := e.smbclient(t, "data", tc.args, "put "+up+" "+name, "get "+name+" "+down, "ls")
			if err != nil {
				t.Fatalf("smbclient: %v\n%s", err, out)
			}
			if got := fileSHA256(t, down); got != sum {
				t.Fatalf("get returned different bytes\n%s", out)
			}
		})
	}
}

// TestEncryptionRequired: with Config.EncryptData (serve --smb-encrypt) a
// client that can encrypt is told to (the session flag) and does — smbclient
// without asking, go-smb2 on 3.0.2 (CCM) and 3.1.1 (GCM), each writing and
// reading back — while a client that cannot encrypt (SMB 2.1) gets
// STATUS_ACCESS_DENIED (requests in the clear: TestEncryptDataRefusesClear).
func TestEncryptionRequired(t *testing.T) {
	e := newEnv(t, func(c *smb.Config) { c.EncryptData = true })
	e.mustShare("data")
	out, err := e.smbclient(t, "data", nil, "mkdir plain-asked", "ls")
	if err != nil || !strings.Contains(out, "plain-asked") {
		t.Fatalf("smbclient following the session's encryption flag: %v\n%s", err, out)
	}
	out, _ = e.smbclient(t, "data", []string{"--option=client max protocol=SMB2_10"}, "ls")
	if !strings.Contains(out, "NT_STATUS_ACCESS_DENIED") {
		t.Fatalf("an SMB 2.1 client where encryption is required: want NT_STATUS_ACCESS_DENIED\n%s", out)
	}
	data := make([]byte, 1<<20+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	for name, dialect := range map[string]uint16{"3.0.2": 0x0302, "3.1.1": 0x0311} {
		t.Run("go-smb2 "+name, func(t *testing.T) {
			s, err := e.sessionDialect(filerest.DevAccount, filerest.DevKey, dialect)
			if err != nil {
				t.Fatalf("session setup: %v", err)
			}
			sh, err := s.Mount("data")
			if err != nil {
				t.Fatalf("mount: %v", err)
			}
			defer sh.Umount()
			fname := "enc-" + name + ".bin"
			if err := sh.WriteFile(fname, data, 0o644); err != nil {
				t.Fatalf("write: %v", err)
			}
			got, err := sh.ReadFile(fname)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, %v; want the %d written", len(got), err, len(data))
			}
		})
	}
}
