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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// durableEnv serves one data directory over SMB (caching on) and
// FileREST, as `blobshare serve` does, and returns the SMB address, an
// azfile client per path of share "data", the lock table and the fs.
func durableEnv(t *testing.T) (string, func(path string) *file.Client, *locks.Table, *fs.FileSystem) {
	t.Helper()
	fsys, table := newTestFSTable(t)
	addr := newTestServer(t, fsys, func(c *Config) { c.Caching, c.BreakTimeout = table, 5*time.Second })
	h, err := filerest.New(filerest.Config{FS: fsys, Key: testKeyB64, Caching: table, CacheWait: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	return addr, svc.NewShareClient("data").NewRootDirectoryClient().NewFileClient, table, fsys
}

// dh2q asks a durable handle v2 with timeout (ms) and CreateGuid guid.
func dh2q(guid byte, timeoutMs uint32) []byte {
	d := make([]byte, 32)
	le.PutUint32(d, timeoutMs)
	d[16] = guid
	return createContext("DH2Q", d)
}

// dh2c reconnects durable handle id created with CreateGuid guid.
func dh2c(id fileID, guid byte) []byte {
	d := make([]byte, 36)
	id.put(d)
	d[16] = guid
	return createContext("DH2C", d)
}

// durableTimeoutOf is the DH2Q response's timeout, or -1 without one.
func durableTimeoutOf(t *testing.T, body []byte) int64 {
	t.Helper()
	off, n := le.Uint32(body[80:]), le.Uint32(body[84:])
	if n == 0 {
		return -1
	}
	ctxs, err := parseCreateContexts(body[off-headerSize : off-headerSize+n])
	if err != nil {
		t.Fatalf("response contexts: %v", err)
	}
	d, ok := ctxs["DH2Q"]
	if !ok || len(d) != 8 {
		return -1
	}
	return int64(le.Uint32(d))
}

const (
	accRead     = 0x00120089 // FILE_GENERIC_READ
	shareRead   = 1
	lockFailNow = lockFailImmediately
)

// durableLevelII opens name on a (3.0) as a durable v2 handle with a batch
// oplock (read-write, sharing read only), locks its first 10 bytes, and
// has another client's read open break the oplock to level II (acknowledged,
// then closed): what is left holds no Handle caching, so nothing breaks it
// and it blocks by its share mode and its lock alone.
func durableLevelII(t *testing.T, a *rawClient, addr, name string, guid byte, timeoutMs uint32) fileID {
	t.Helper()
	id := a.send(cmdCreate, createReq(name, byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2q(guid, timeoutMs)))
	st, body := a.final(id)
	r := parseCreateResp(t, st, body)
	if r.st != ntstatus.Success || r.oplock != byte(locks.OplockBatch) {
		t.Fatalf("%s: durable open %+v, want a batch oplock", name, r)
	}
	if got := durableTimeoutOf(t, body); got != int64(timeoutMs) {
		t.Fatalf("%s: DH2Q response timeout %d, want %d (granted as asked)", name, got, timeoutMs)
	}
	if st := a.write(r.id, 0, []byte("0123456789abcdef")); st != ntstatus.Success {
		t.Fatalf("%s: write: %v", name, st)
	}
	if st := a.lock(r.id, 0, 0, 10, lockExclusive|lockFailNow); st != ntstatus.Success {
		t.Fatalf("%s: lock: %v", name, st)
	}
	b := leaseClient(t, addr, guid+100, dialect300)
	idB := b.send(cmdCreate, createReq(name, 0, accRead, shareAll, dispOpen, nil))
	b.pending(idB)
	if note := a.breakNote(); note[2] != byte(locks.OplockLevelII) {
		t.Fatalf("%s: break %x, want to level II", name, note)
	}
	if st, _ := a.call(cmdOplockBreak, oplockAck(r.id, byte(locks.OplockLevelII))); st != ntstatus.Success {
		t.Fatalf("%s: ack: %v", name, st)
	}
	st, body = b.final(idB)
	rb := parseCreateResp(t, st, body)
	if rb.st != ntstatus.Success {
		t.Fatalf("%s: second open: %v", name, rb.st)
	}
	if st := b.closeFile(rb.id); st != ntstatus.Success {
		t.Fatalf("%s: close: %v", name, st)
	}
	return r.id
}

// dropAndWait drops a's connection and waits until the server has kept
// the durable open id of file name disconnected (the lock table says so).
func dropAndWait(t *testing.T, a *rawClient, table *locks.Table, file fs.FileID, id fileID) {
	t.Helper()
	a.nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var d locks.DurableOpen
		var ok bool
		err := table.View(context.Background(), func(tx *locks.Tx) error {
			hs, err := tx.Handles(file)
			if err != nil {
				return err
			}
			for _, h := range hs {
				if d, ok, err = tx.DurableOf(file, h.ID); err != nil || ok {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ok && !d.Disconnected.IsZero() {
			if d.Version != 2 {
				t.Fatalf("durable open %+v, want version 2", d)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("durable open %v never disconnected", id)
		}
		time.Sleep(5 * time.Millisecond) // polls the condition, bounded above
	}
}

// fileOf is the fs id of name in share "data".
func fileOf(t *testing.T, fsys *fs.FileSystem, name string) fs.FileID {
	t.Helper()
	ctx := context.Background()
	root, err := fsys.GetShare(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fsys.Lookup(ctx, root.ID, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return a.ID
}

// TestDurableHandleAcrossDisconnect: a reconnect naming nothing is
// STATUS_OBJECT_NAME_NOT_FOUND and opens nothing. A durable v2 handle survives its
// dropped TCP connection. While disconnected it keeps its share mode and
// byte-range lock: REST Put Range gets 409 SharingViolation, another SMB
// client's write open STATUS_SHARING_VIOLATION and its lock of the range
// STATUS_LOCK_NOT_GRANTED, the mount's open for write a sharing violation. A reconnect (DH2C) on a new connection and
// session gets the same open back, with its lock (which it then unlocks).
// Dropped again, it is gone after Force Close Handles (REST then
// succeeds, a reconnect names nothing); another is gone after its timeout.
// A disconnected durable handle that still caches its handle (batch) is
// closed by the break a REST call needs, which then succeeds.
func TestDurableHandleAcrossDisconnect(t *testing.T) {
	ctx := context.Background()
	addr, fileClient, table, fsys := durableEnv(t)
	putRange := func(name string) error {
		_, err := fileClient(name).UploadRange(ctx, 0, streaming.NopCloser(strings.NewReader("REST")), nil)
		return err
	}

	a := leaseClient(t, addr, 1, dialect300)
	// A reconnect naming no durable open answers
	// STATUS_OBJECT_NAME_NOT_FOUND and opens nothing, not even with a
	// disposition that would create its name.
	for _, reconnect := range [][]byte{dh2c(fileID{Persistent: 77, Volatile: 78}, 9), createContext("DHnC", make([]byte, 16))} {
		if st, _ := a.final(a.send(cmdCreate, createReq("new.txt", byte(locks.OplockBatch), accRW, shareAll, dispOpenIf, reconnect))); st != ntstatus.ObjectNameNotFound {
			t.Fatalf("reconnect naming nothing: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
		}
	}
	if _, err := fileClient("new.txt").GetProperties(ctx, nil); err == nil {
		t.Fatal("a reconnect naming nothing created its name")
	}
	id := durableLevelII(t, a, addr, "d.txt", 1, 60000)
	file := fileOf(t, fsys, "d.txt")
	dropAndWait(t, a, table, file, id)

	if status, code := restCode(t, putRange("d.txt")); status != 409 || code != "SharingViolation" {
		t.Fatalf("Put Range against a disconnected durable handle: %d %s, want 409 SharingViolation", status, code)
	}
	c := leaseClient(t, addr, 9, dialect300)
	if r := c.createCaching("d.txt", 0, accRW, shareAll, dispOpen, nil); r.st != ntstatus.SharingViolation {
		t.Fatalf("SMB write open against a disconnected durable handle: %v, want STATUS_SHARING_VIOLATION", r.st)
	}
	rc := c.createCaching("d.txt", 0, accRead, shareAll, dispOpen, nil)
	if rc.st != ntstatus.Success {
		t.Fatalf("SMB read open beside the durable handle: %v", rc.st)
	}
	if st := c.lock(rc.id, 0, 0, 10, lockExclusive|lockFailNow); st != ntstatus.LockNotGranted {
		t.Fatalf("lock of the durable handle's range: %v, want STATUS_LOCK_NOT_GRANTED", st)
	}
	if st := c.closeFile(rc.id); st != ntstatus.Success {
		t.Fatal(st)
	}

	// The mount's open (fs.Open as fusefs opens a file for writing).
	if h, err := fsys.Open(ctx, file, fs.OpenOptions{Access: locks.AccessWrite, Share: locks.ShareAll, POSIX: true}); !errors.Is(err, locks.ErrSharingViolation) {
		if h != nil {
			h.Close(ctx)
		}
		t.Fatalf("mount open for write against a disconnected durable handle: %v, want a sharing violation", err)
	}

	// Reconnect: the same open, with its lock.
	a2 := leaseClient(t, addr, 1, dialect300)
	st, body := a2.final(a2.send(cmdCreate, createReq("d.txt", byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2c(id, 1))))
	r := parseCreateResp(t, st, body)
	// Its level II oplock went while it was away: C's LOCK broke Read
	// caching (MS-FSA 2.1.4.12, no acknowledgment needed).
	if r.st != ntstatus.Success || r.id.Persistent != id.Persistent || r.oplock != byte(locks.OplockNone) {
		t.Fatalf("reconnect: %+v, want persistent id %d, its oplock broken to none", r, id.Persistent)
	}
	if st := a2.lock(r.id, 0, 0, 10, lockUnlock); st != ntstatus.Success {
		t.Fatalf("unlock of the reconnected open's lock: %v", st)
	}
	if st := a2.lock(r.id, 0, 0, 10, lockExclusive|lockFailNow); st != ntstatus.Success {
		t.Fatalf("lock again: %v", st)
	}

	// Force Close Handles while disconnected: gone.
	dropAndWait(t, a2, table, file, r.id)
	if status, _ := restCode(t, putRange("d.txt")); status != 409 {
		t.Fatalf("Put Range before Force Close: %d, want 409", status)
	}
	fc, err := fileClient("d.txt").ForceCloseHandles(ctx, "*", nil)
	if err != nil || fc.NumberOfHandlesClosed == nil || *fc.NumberOfHandlesClosed != 1 {
		t.Fatalf("Force Close Handles: %+v %v, want 1 closed", fc, err)
	}
	if err := putRange("d.txt"); err != nil {
		t.Fatalf("Put Range after Force Close: %v", err)
	}
	a3 := leaseClient(t, addr, 1, dialect300)
	if st, _ := a3.final(a3.send(cmdCreate, createReq("d.txt", byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2c(r.id, 1)))); st != ntstatus.ObjectNameNotFound {
		t.Fatalf("reconnect after Force Close: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
	}

	// The timeout: gone when it passes, not before.
	const timeout = 700 * time.Millisecond
	id = durableLevelII(t, a3, addr, "t.txt", 3, uint32(timeout.Milliseconds()))
	tfile := fileOf(t, fsys, "t.txt")
	start := time.Now()
	dropAndWait(t, a3, table, tfile, id)
	if status, code := restCode(t, putRange("t.txt")); status != 409 || code != "SharingViolation" {
		t.Fatalf("Put Range before the timeout: %d %s, want 409 SharingViolation", status, code)
	}
	for putRange("t.txt") != nil {
		if time.Since(start) > timeout+10*time.Second {
			t.Fatal("the durable handle outlived its timeout")
		}
		time.Sleep(20 * time.Millisecond) // polls the condition, bounded above
	}
	if el := time.Since(start); el < timeout {
		t.Fatalf("Put Range succeeded %v after the disconnect, before the %v timeout", el, timeout)
	}
	a4 := leaseClient(t, addr, 1, dialect300)
	if st, _ := a4.final(a4.send(cmdCreate, createReq("t.txt", byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2c(id, 3)))); st != ntstatus.ObjectNameNotFound {
		t.Fatalf("reconnect after the timeout: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
	}

	// Still caching its handle (batch): the break REST needs cannot reach
	// it, so it is closed and REST proceeds (MS-SMB2 3.3.4.6).
	st, body = a4.final(a4.send(cmdCreate, createReq("b.txt", byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2q(4, 60000))))
	rb := parseCreateResp(t, st, body)
	if rb.st != ntstatus.Success || rb.oplock != byte(locks.OplockBatch) || durableTimeoutOf(t, body) != 60000 {
		t.Fatalf("durable batch open: %+v", rb)
	}
	if st := a4.write(rb.id, 0, []byte("0123456789")); st != ntstatus.Success {
		t.Fatalf("write: %v", st)
	}
	bfile := fileOf(t, fsys, "b.txt")
	dropAndWait(t, a4, table, bfile, rb.id)
	if err := putRange("b.txt"); err != nil {
		t.Fatalf("Put Range against a disconnected batch durable handle: %v, want success after closing it", err)
	}
	a5 := leaseClient(t, addr, 1, dialect300)
	if st, _ := a5.final(a5.send(cmdCreate, createReq("b.txt", byte(locks.OplockBatch), accRW, shareRead, dispOpenIf, dh2c(rb.id, 4)))); st != ntstatus.ObjectNameNotFound {
		t.Fatalf("reconnect after the break closed it: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
	}
}

// TestCreateReplay: a DH2Q CREATE's CreateGuid names its open for the
// client (MS-SMB2 3.3.5.9.10). The same CREATE again without the replay
// flag is STATUS_DUPLICATE_OBJECTID; with it, it answers the same open
// (file id and create action), durable or not; once the open has served
// another request, a replay opens anew. A stale channel sequence number
// fails a WRITE with STATUS_FILE_NOT_AVAILABLE and lets a READ through
// (3.3.5.2.10).
func TestCreateReplay(t *testing.T) {
	addr, _, _, _ := durableEnv(t)
	a := leaseClient(t, addr, 1, dialect300)
	create := func(name string, oplock byte, guid byte) (ntstatus.Status, []byte) {
		t.Helper()
		return a.final(a.send(cmdCreate, createReq(name, oplock, accRW, shareAll, dispOpenIf, dh2q(guid, 0))))
	}
	replay := func(name string, oplock byte, guid byte) (ntstatus.Status, []byte) {
		t.Helper()
		a.flags |= flagReplayOperation
		defer func() { a.flags &^= flagReplayOperation }()
		return create(name, oplock, guid)
	}

	st, body := create("r.txt", byte(locks.OplockBatch), 5)
	r := parseCreateResp(t, st, body)
	if r.st != ntstatus.Success || r.oplock != byte(locks.OplockBatch) || le.Uint32(body[4:]) != actionCreated || durableTimeoutOf(t, body) != 60000 {
		t.Fatalf("durable create: %+v action %d timeout %d", r, le.Uint32(body[4:]), durableTimeoutOf(t, body))
	}
	if st, _ := create("r.txt", byte(locks.OplockBatch), 5); st != statusDuplicateObjectID {
		t.Fatalf("the same CreateGuid without the replay flag: %v, want STATUS_DUPLICATE_OBJECTID", st)
	}
	st, body = replay("r.txt", byte(locks.OplockBatch), 5)
	if rr := parseCreateResp(t, st, body); rr.st != ntstatus.Success || rr.id != r.id || le.Uint32(body[4:]) != actionCreated {
		t.Fatalf("replay: %+v action %d, want the same open %v, created", rr, le.Uint32(body[4:]), r.id)
	}

	// Not durable (no batch oplock), still replayable until used.
	st, body = create("n.txt", 0, 6)
	n := parseCreateResp(t, st, body)
	if n.st != ntstatus.Success || durableTimeoutOf(t, body) != -1 {
		t.Fatalf("plain create with DH2Q: %+v (durable timeout %d, want none)", n, durableTimeoutOf(t, body))
	}
	if st, body := replay("n.txt", 0, 6); parseCreateResp(t, st, body).id != n.id {
		t.Fatalf("replay of a non-durable open: %v, want %v", parseCreateResp(t, st, body), n.id)
	}
	a.chanSeq = 1
	if st := a.write(n.id, 0, []byte("x")); st != ntstatus.Success {
		t.Fatalf("write with a newer channel sequence: %v", st)
	}
	a.chanSeq = 0
	if st := a.write(n.id, 0, []byte("y")); st != ntstatus.FileNotAvailable {
		t.Fatalf("write with a stale channel sequence: %v, want STATUS_FILE_NOT_AVAILABLE", st)
	}
	if st := a.read(n.id, 0, 1); st != ntstatus.Success {
		t.Fatalf("read with a stale channel sequence: %v", st)
	}
	a.chanSeq = 1
	st, body = replay("n.txt", 0, 6)
	if again := parseCreateResp(t, st, body); again.st != ntstatus.Success || again.id == n.id || le.Uint32(body[4:]) != actionOpened {
		t.Fatalf("replay after the open was used: %+v action %d, want a new open", again, le.Uint32(body[4:]))
	}
}
