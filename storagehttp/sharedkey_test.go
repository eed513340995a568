package storagehttp

import (
	"net/http"
	"testing"
	"time"
)

// TestLiteStringToSign checks the SharedKey Lite form against the example
// of Azure's "Authorize with Shared Key" page (Blob and Queue services).
func TestLiteStringToSign(t *testing.T) {
	r, _ := http.NewRequest("PUT", "http://testaccount1.blob.core.windows.net/mycontainer/hello.txt?timeout=30", nil)
	r.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	r.Header.Set("x-ms-date", "Sun, 20 Sep 2009 20:36:40 GMT")
	r.Header.Set("x-ms-meta-m1", "v1")
	r.Header.Set("x-ms-meta-m2", "v2")
	want := "PUT\n\ntext/plain; charset=UTF-8\n\nx-ms-date:Sun, 20 Sep 2009 20:36:40 GMT\nx-ms-meta-m1:v1\nx-ms-meta-m2:v2\n/testaccount1/mycontainer/hello.txt"
	if got := LiteStringToSign("testaccount1", r); got != want {
		t.Fatalf("LiteStringToSign =\n%q\nwant\n%q", got, want)
	}
	r2, _ := http.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/q?comp=metadata&timeout=5", nil)
	if got := LiteCanonicalizedResource("devstoreaccount1", r2.URL); got != "/devstoreaccount1/devstoreaccount1/q?comp=metadata" {
		t.Fatalf("LiteCanonicalizedResource = %q", got)
	}
}

// TestSharedKeyLiteOptIn: a service without LiteStringToSign refuses the
// scheme; one with it accepts a Lite signature and refuses a tampered one.
func TestSharedKeyLiteOptIn(t *testing.T) {
	sg := Signer{Account: "devstoreaccount1", Key: []byte("key")}
	req := func() *http.Request {
		r, _ := http.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/q?comp=metadata", nil)
		r.Header.Set("x-ms-date", "Sun, 20 Sep 2009 20:36:40 GMT")
		r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+sg.Sign(LiteStringToSign(sg.Account, r)))
		return r
	}
	tests := []struct {
		name   string
		auth   SharedKey
		tamper bool
		want   Verdict
	}{
		{"lite refused", SharedKey{Signer: sg, StringToSign: StringToSign}, false, Fail},
		{"lite accepted", SharedKey{Signer: sg, StringToSign: StringToSign, LiteStringToSign: LiteStringToSign}, false, Pass},
		{"lite tampered", SharedKey{Signer: sg, StringToSign: StringToSign, LiteStringToSign: LiteStringToSign}, true, Fail},
	}
	for _, tt := range tests {
		r := req()
		if tt.tamper {
			r.Header.Set("x-ms-meta-x", "1")
		}
		if v, _, err := tt.auth.Authenticate(r, time.Now()); v != tt.want {
			t.Errorf("%s: verdict %v (%v), want %v", tt.name, v, err, tt.want)
		}
	}
}
