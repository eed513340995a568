package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/rest"
)

// blobClient is the azblob SDK on a serve's Blob endpoint.
func blobClient(t *testing.T, s *servetest.Server) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
		rest.DevKey+";BlobEndpoint="+s.BlobURL+";", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSecondServeRefusesBlob: two real serve processes on one --data. The
// first claims Blob; a second with the Blob endpoint on exits non-zero at
// start with one line naming the holder's pid, the data directory and
// --blob-addr off, and leaves the first's commit in progress (an intent
// of its owner session) alone; the first goes on serving what it had; a
// second with --blob-addr off serves the rest beside it. After the first
// is SIGKILLed (its owner session dies with it), a new serve claims Blob,
// resolves the dead first's intent, and finds the blobs the first stored.
func TestSecondServeRefusesBlob(t *testing.T) {
	ctx := context.Background()
	bin := blobshareBinary(t)
	data := t.TempDir()
	first, err := servetest.Start(bin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Stop() })
	body := []byte("stored through the first serve")
	if _, err := blobClient(t, first).CreateContainer(ctx, "kept", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := blobClient(t, first).UploadBuffer(ctx, "kept", "b.txt", body, nil); err != nil {
		t.Fatal(err)
	}

	// A commit of the first in progress: its intent, owned by the first's
	// session (the claim's owner), for a Put Blob of b.txt that has not
	// committed its content yet (the intent is the current row).
	db := openBlobDB(t, data)
	var firstOwner, doc string
	if err := db.QueryRowContext(ctx, `SELECT owner FROM bs_claim`).Scan(&firstOwner); err != nil {
		t.Fatalf("the first serve's claim: %v", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT doc FROM bs_blobs WHERE container = 'kept' AND name = 'b.txt'`).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO bs_intents(container, name, drop_uncommitted, doc, owner) VALUES('kept', 'b.txt', 0, ?, ?)`, doc, firstOwner); err != nil {
		t.Fatal(err)
	}

	second := exec.Command(bin, "serve", "--data", data, "--addr", "127.0.0.1:0", "--smb", "127.0.0.1:0",
		"--queue-addr", "127.0.0.1:0", "--blob-addr", "127.0.0.1:0")
	var stdout, stderr bytes.Buffer
	second.Stdout, second.Stderr = &stdout, &stderr
	if err := second.Run(); err == nil {
		t.Fatalf("a second serve with Blob on the same --data started and exited 0:\n%s", stderr.String())
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
		t.Errorf("second serve printed %q (stdout %q), want exactly one line on stderr", msg, stdout.String())
	}
	for _, want := range []string{data, "--blob-addr off", "process " + strconv.Itoa(first.Pid())} {
		if !strings.Contains(msg, want) {
			t.Errorf("second serve's line %q lacks %q", msg, want)
		}
	}

	// The refused serve left the live first's commit alone.
	if n := countIntents(t, db, firstOwner); n != 1 {
		t.Fatalf("the first serve's intent after the refused second: %d rows, want 1", n)
	}

	// The first still serves Blob, and a second without Blob runs beside it.
	if _, err := blobClient(t, first).UploadBuffer(ctx, "kept", "after.txt", body, nil); err != nil {
		t.Fatalf("first serve after the refused second: %v", err)
	}
	rest2, err := servetest.Start(bin, data, "--blob-addr", "off")
	if err != nil {
		t.Fatalf("serve --blob-addr off beside the first: %v", err)
	}
	if rest2.BlobURL != "off" {
		t.Errorf("second serve's Blob endpoint %q, want off", rest2.BlobURL)
	}
	if err := rest2.Stop(); err != nil {
		t.Fatalf("stop the serve without Blob: %v", err)
	}

	// SIGKILL: no clean release, the kernel drops the flock.
	if _, err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	third, err := servetest.Start(bin, data)
	if err != nil {
		t.Fatalf("serve after the first was killed: %v", err)
	}
	t.Cleanup(func() { third.Stop() })
	// The new claimant resolved the dead first's intent (its content
	// never committed: dropped) before serving.
	if n := countIntents(t, db, firstOwner); n != 0 {
		t.Errorf("the killed serve's intent after the next serve started: %d rows, want 0", n)
	}
	for _, name := range []string{"b.txt", "after.txt"} {
		resp, err := blobClient(t, third).DownloadStream(ctx, "kept", name, nil)
		if err != nil {
			t.Fatalf("download %s through the new claimant: %v", name, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s = %q, %v; want %q", name, got, err, body)
		}
	}
}

// openBlobDB opens the data directory's blob.db beside the running serves.
func openBlobDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlstore.FileName)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// countIntents counts owner's commit intents in blob.db.
func countIntents(t *testing.T, db *sql.DB, owner string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM bs_intents WHERE owner = ?`, owner).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
