package main

import (
	"net/http"
	"testing"

	"github.com/blobshare/blobshare/integration/servetest"
)

// TestServeAddrOff: --addr off turns FileREST off like every other
// endpoint flag (cli-contract.md); the other services serve.
func TestServeAddrOff(t *testing.T) {
	srv, err := servetest.Start(blobshareBinary(t), t.TempDir(), "--addr", "off", "--smb", "off")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if srv.RESTURL != "off" {
		t.Fatalf("rest=%s in the serving line, want off", srv.RESTURL)
	}
	resp, err := http.Get(srv.BlobURL + "?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Blob without credentials answered %d, want it serving (401/403)", resp.StatusCode)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
}
