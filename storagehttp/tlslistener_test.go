package storagehttp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testTLSConfig is a server config with a fresh self-signed certificate
// for 127.0.0.1.
func testTLSConfig(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// TestTLSListener: over TLS the handler runs and sees the TLS state; a
// plain HTTP request on the same port is answered 400
// AccountRequiresHttps; a client that connects and says nothing holds up
// nobody; Close ends Serve.
func TestTLSListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := TLSListener(inner, testTLSConfig(t))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			t.Error("handler: no TLS state on a TLS request")
		}
		io.WriteString(w, "over tls")
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := inner.Addr().String()

	silent, err := net.Dial("tcp", addr) // says nothing while the others are served
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get("https://" + addr + "/devstoreaccount1/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "over tls" {
		t.Fatalf("https: %s %q", resp.Status, body)
	}

	resp, err = http.Get("http://" + addr + "/devstoreaccount1/?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != CodeAccountRequiresHTTPS ||
		!strings.Contains(string(body), "<Code>AccountRequiresHttps</Code><Message>The account being accessed does not support http.") {
		t.Fatalf("plain http: %s %v %q", resp.Status, resp.Header, body)
	}

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatalf("Serve after Close: %v", err)
	}
}
