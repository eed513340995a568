package smb

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// restCaching serves one data directory over SMB (caching on, breaks
// timing out after breakTimeout) and FileREST (waiting at most restWait
// for a blocking break), as `blobshare serve` does, and returns the SMB
// address and an azfile client of share "data".
func restCaching(t *testing.T, breakTimeout, restWait time.Duration) (string, func(path string) *file.Client) {
	t.Helper()
	addr, root := restCachingRoot(t, breakTimeout, restWait)
	return addr, root.NewFileClient
}

// restCachingRoot is restCaching with the share's root directory client.
func restCachingRoot(t *testing.T, breakTimeout, restWait time.Duration) (string, *directory.Client) {
	t.Helper()
	fsys, table := newTestFSTable(t)
	addr := newTestServer(t, fsys, func(c *Config) {
		c.Caching, c.BreakTimeout = table, breakTimeout
	})
	h, err := filerest.New(filerest.Config{FS: fsys, Key: testKeyB64, Caching: table, CacheWait: restWait, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cred, err := service.NewSharedKeyCredential(filerest.DevAccount, testKeyB64)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential(srv.URL+"/"+filerest.DevAccount+"/", cred,
		&service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	return addr, svc.NewShareClient("data").NewRootDirectoryClient()
}

// testKeyB64 is the account key the REST side checks (base64); the SMB
// side takes the key as typed, testKey.
var testKeyB64 = filerest.DevKey

func restCode(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want a REST error, got %v", err)
	}
	return re.StatusCode, re.ErrorCode
}

// TestRESTBreaksSMBLeases is Azure's table against a real SMB lease: Get
// File against RWH breaks Write and waits for the client's flush, then
// returns the flushed bytes; Put Range against RH breaks it to none
// without waiting; Delete File breaks Handle first, then succeeds when the
// client only cached the handle and answers 409 SharingViolation when it
// keeps it open; a client that never acknowledges makes Get File answer
// ClientCacheFlushDelay within the request's wait.
func TestRESTBreaksSMBLeases(t *testing.T) {
	ctx := context.Background()
	addr, fileClient := restCaching(t, 10*time.Second, 2*time.Second)
	a := leaseClient(t, addr, 1, dialect210)

	// Get File against RWH: the client writes (its flush), then acks.
	r := a.createCaching("g.txt", oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(1, locks.CacheRWH, false, 0))
	if r.st != ntstatus.Success || r.lease != locks.CacheRWH {
		t.Fatalf("lease: %+v", r)
	}
	type got struct {
		data []byte
		err  error
	}
	done := make(chan got, 1)
	go func() {
		resp, err := fileClient("g.txt").DownloadStream(ctx, nil)
		if err != nil {
			done <- got{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- got{b, err}
	}()
	note := a.breakNote()
	if locks.CacheState(le.Uint32(note[24:])) != locks.CacheRWH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheRH || le.Uint32(note[4:])&leaseBreakAckRequired == 0 {
		t.Fatalf("Get File's break %x, want RWH → RH, ack required", note)
	}
	select {
	case g := <-done:
		t.Fatalf("Get File answered before the acknowledgment: %q %v", g.data, g.err)
	default:
	}
	if st := a.write(r.id, 0, []byte("flushed")); st != ntstatus.Success {
		t.Fatalf("write: %v", st)
	}
	if st, _ := a.call(cmdOplockBreak, leaseAck(1, locks.CacheRH)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	if g := <-done; g.err != nil || string(g.data) != "flushed" {
		t.Fatalf("Get File after the flush: %q %v, want the flushed bytes", g.data, g.err)
	}

	// Put Range against RH: broken to none (the client acknowledges the
	// loss of Handle caching, MS-SMB2 3.3.4.7), not waited for: the
	// Put Range has answered before anyone acknowledged.
	if _, err := fileClient("g.txt").UploadRange(ctx, 0, streaming.NopCloser(strings.NewReader("FLUSHED")), nil); err != nil {
		t.Fatalf("Put Range: %v", err)
	}
	note = a.breakNote()
	if locks.CacheState(le.Uint32(note[24:])) != locks.CacheRH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheNone {
		t.Fatalf("Put Range's break %x, want RH → none", note)
	}
	if st, _ := a.call(cmdOplockBreak, leaseAck(1, locks.CacheNone)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}

	// Delete File: the handle is only cached (closed on the break).
	d := a.createCaching("d.txt", oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(2, locks.CacheRH, false, 0))
	if d.st != ntstatus.Success || d.lease != locks.CacheRH {
		t.Fatalf("RH lease: %+v", d)
	}
	del := make(chan error, 1)
	go func() { _, err := fileClient("d.txt").Delete(ctx, nil); del <- err }()
	note = a.breakNote()
	if locks.CacheState(le.Uint32(note[28:])) != locks.CacheR || le.Uint32(note[4:])&leaseBreakAckRequired == 0 {
		t.Fatalf("Delete's break %x, want RH → R, ack required", note)
	}
	if st := a.closeFile(d.id); st != ntstatus.Success {
		t.Fatalf("close: %v", st)
	}
	if err := <-del; err != nil {
		t.Fatalf("Delete File of a handle the client only cached: %v", err)
	}
	// ... and really held: 409 once the break is acknowledged.
	k := a.createCaching("k.txt", oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(3, locks.CacheRH, false, 0))
	if k.st != ntstatus.Success || k.lease != locks.CacheRH {
		t.Fatalf("RH lease: %+v", k)
	}
	go func() { _, err := fileClient("k.txt").Delete(ctx, nil); del <- err }()
	a.breakNote()
	if st, _ := a.call(cmdOplockBreak, leaseAck(3, locks.CacheR)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	if status, code := restCode(t, <-del); status != 409 || code != "SharingViolation" {
		t.Fatalf("Delete File of a held handle: %d %s, want 409 SharingViolation", status, code)
	}

	// Nobody acknowledges: ClientCacheFlushDelay within the wait.
	n := a.createCaching("n.txt", oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(4, locks.CacheRWH, false, 0))
	if n.st != ntstatus.Success || n.lease != locks.CacheRWH {
		t.Fatalf("lease: %+v", n)
	}
	start := time.Now()
	_, err := fileClient("n.txt").DownloadStream(ctx, nil)
	status, code := restCode(t, err)
	if status != 500 || code != filerest.CodeClientCacheFlushDelay {
		t.Fatalf("Get File against a client that never acknowledges: %d %s", status, code)
	}
	if el := time.Since(start); el < 2*time.Second || el > 8*time.Second {
		t.Fatalf("ClientCacheFlushDelay after %v, want after the 2 s wait", el)
	}
	a.breakNote()
}
