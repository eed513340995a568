package storagehttp

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAccountFromHost(t *testing.T) {
	for _, tc := range []struct {
		host, service, account string
		ok                     bool
	}{
		{"myacct.blob.core.windows.net", "blob", "myacct", true},
		{"myacct.blob.core.windows.net:443", "blob", "myacct", true},
		{"devstoreaccount1.blob.localhost:10000", "blob", "devstoreaccount1", true},
		{"MyAcct.Queue.core.windows.net", "queue", "myacct", true},
		{"myacct.file.core.windows.net", "file", "myacct", true},
		{"myacct.blob.core.windows.net", "queue", "", false}, // another service's host
		{"127.0.0.1:10000", "blob", "", false},
		{"localhost:10000", "blob", "", false},
		{"[::1]:10000", "blob", "", false},
		{"blob.core", "blob", "", false},
		{"myacct.blob", "blob", "", false},
		{".blob.core.windows.net", "blob", "", false},
		{"", "blob", "", false},
	} {
		account, ok := AccountFromHost(tc.host, tc.service)
		if account != tc.account || ok != tc.ok {
			t.Errorf("AccountFromHost(%q, %q) = %q, %v; want %q, %v", tc.host, tc.service, account, ok, tc.account, tc.ok)
		}
	}
}

func TestPathStyle(t *testing.T) {
	for _, tc := range []struct{ host, escaped, want string }{
		{"acct.blob.core.windows.net", "/c/b%20x", "/acct/c/b%20x"},
		{"acct.blob.core.windows.net", "/", "/acct/"},
		{"acct.blob.core.windows.net", "", "/acct/"},
		{"acct.blob.core.windows.net", "*", "*"}, // not a path: left for the parser to refuse
		{"127.0.0.1:10000", "/acct/c", "/acct/c"},
	} {
		if got := PathStyle(tc.host, "blob", tc.escaped); got != tc.want {
			t.Errorf("PathStyle(%q, %q) = %q, want %q", tc.host, tc.escaped, got, tc.want)
		}
	}
}

// The SharedKey resource of a production-style request is the account
// followed by the path as sent: what the SDKs sign.
func TestCanonicalizedResourceProductionStyle(t *testing.T) {
	r := httptest.NewRequest("GET", "https://acct.blob.core.windows.net/cont/blob?comp=metadata", nil)
	if got, want := CanonicalizedResource("acct", r.URL), "/acct/cont/blob\ncomp:metadata"; got != want {
		t.Errorf("CanonicalizedResource = %q, want %q", got, want)
	}
}

// Under PathStyleOnly a production-style host names no account.
func TestPathStyleOnly(t *testing.T) {
	var host, endpoint string
	h := PathStyleOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, endpoint = RequestHost(r), ServiceEndpoint(r, "blob", "acct")
	}))
	r := httptest.NewRequest("GET", "/acct/c", nil)
	r.Host = "acct.blob.localhost:10000"
	h.ServeHTTP(httptest.NewRecorder(), r)
	if host != "" || endpoint != "http://acct.blob.localhost:10000/acct/" {
		t.Errorf("RequestHost %q, ServiceEndpoint %q; want \"\" and the path-style endpoint", host, endpoint)
	}
	if got := RequestHost(r); got != r.Host {
		t.Errorf("RequestHost outside PathStyleOnly = %q, want %q", got, r.Host)
	}
}

func TestServiceEndpoint(t *testing.T) {
	for _, tc := range []struct {
		host string
		tls  bool
		want string
	}{
		{"acct.queue.core.windows.net", true, "https://acct.queue.core.windows.net/"},
		{"127.0.0.1:10001", false, "http://127.0.0.1:10001/acct/"},
		{"127.0.0.1:10001", true, "https://127.0.0.1:10001/acct/"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := ServiceEndpoint(r, "queue", "acct"); got != tc.want {
			t.Errorf("ServiceEndpoint(%s, tls %v) = %q, want %q", tc.host, tc.tls, got, tc.want)
		}
	}
}
