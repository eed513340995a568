package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/filerest"
)

// statusHandle is the part of `blobshare status --json` these tests read.
type statusHandle struct {
	Path  string `json:"path"`
	Owner struct {
		PID   int    `json:"pid"`
		Alive bool   `json:"alive"`
		Dead  string `json:"dead"`
	} `json:"owner"`
	Locks []struct {
		Offset uint64 `json:"offset"`
	} `json:"locks"`
}

// handlesOf runs `blobshare status --json` on data and returns the handles
// whose owner is process pid.
func handlesOf(t *testing.T, data string, pid int) []statusHandle {
	t.Helper()
	code, out, errOut := runBlobshare(t, time.Minute, "status", "--data", data, "--json")
	if code != 0 {
		t.Fatalf("status exited %d: %s", code, errOut)
	}
	var st struct {
		Handles []statusHandle `json:"handles"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var mine []statusHandle
	for _, h := range st.Handles {
		if h.Owner.PID == pid {
			mine = append(mine, h)
		}
	}
	return mine
}

// TestTwoServeKillHolder: serve B is SIGKILLed while SMB clients hold, through
// it, a share-none handle and a byte-range lock. The very next conflicting
// request through serve A succeeds — the dead owner is reaped at first
// contact, by its free flock, not after its heartbeat's 10 s expiry —
// `blobshare status` no longer lists B's handles, and what was written
// through B and acknowledged before the kill (an SMB write flushed, a
// FileREST Put Range) is intact.
func TestTwoServeKillHolder(t *testing.T) {
	a, b := twoServes(t)
	ctx := context.Background()
	shA, shB := shareOf(t, a), shareOf(t, b)
	putFile(t, shA, "none.txt", []byte("held share-none"))
	putFile(t, shA, "locked.bin", bytes.Repeat([]byte{'.'}, 300))

	// Written through B and acknowledged: 1 MiB over SMB (go-smb2, flushed,
	// the handle left open) and 200 KiB over FileREST.
	smbData := bytes.Repeat([]byte("written through B over SMB "), 40000)
	restData := bytes.Repeat([]byte("put through B "), 15000)
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: filerest.DevAccount, Password: filerest.DevKey}}
	sess, err := d.Dial(mustDial(t, b.SMBAddr))
	if err != nil {
		t.Fatalf("SMB logon to B: %v", err)
	}
	fsB, err := sess.Mount("data")
	if err != nil {
		t.Fatalf("mount through B: %v", err)
	}
	w, err := fsB.OpenFile("smb.bin", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("SMB create through B: %v", err)
	}
	// go-smb2 closes a File its finalizer finds unreachable: the handle
	// must stay open until B is killed.
	defer runtime.KeepAlive(w)
	if _, err := w.Write(smbData); err != nil {
		t.Fatalf("SMB write through B: %v", err)
	}
	if err := w.Sync(); err != nil {
		t.Fatalf("SMB flush through B: %v", err)
	}
	putFile(t, shB, "rest.bin", restData)

	c := dialSmbctl(t, b.SMBAddr, "data")
	c.expect("ok", "open n none.txt %s 0 %s %s", smbReadWrite, smbOpen, smbNonDir)
	c.expect("ok", "open l locked.bin %s 7 %s %s", smbReadWrite, smbOpen, smbNonDir)
	c.expect("ok", "lock l 100 100 %s", lockExclNow)
	// Through A, both refuse while B lives.
	fNone := shA.NewRootDirectoryClient().NewFileClient("none.txt")
	fLocked := shA.NewRootDirectoryClient().NewFileClient("locked.bin")
	if _, err := fNone.DownloadStream(ctx, nil); outcome(err) != sharingViolation {
		t.Fatalf("Get File through A while B holds share-none: %s, want %s", outcome(err), sharingViolation)
	}
	if hs := handlesOf(t, a.Data, b.Pid()); len(hs) != 3 {
		var paths []string
		for _, h := range hs {
			paths = append(paths, h.Path)
		}
		_, out, _ := runBlobshare(t, time.Minute, "status", "--data", a.Data)
		t.Fatalf("status lists %d handles of B (%q), want 3 (smb.bin, none.txt, locked.bin)\n%s", len(hs), paths, out)
	}

	if wedged, err := b.Kill(); err != nil {
		t.Fatalf("SIGKILL of B: %v (%s)", err, wedged)
	}
	for _, h := range handlesOf(t, a.Data, b.Pid()) {
		if h.Owner.Alive || h.Owner.Dead != "flock free" {
			t.Fatalf("status after the kill, before anyone met B's handles: %s alive=%v dead=%q, want dead by its free flock", h.Path, h.Owner.Alive, h.Owner.Dead)
		}
	}

	start := time.Now()
	resp, err := fNone.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("the first Get File through A after B's kill: %s, want success", outcome(err))
	}
	resp.Body.Close()
	if _, err := fLocked.UploadRange(ctx, 120, streaming.NopCloser(bytes.NewReader([]byte("over the lock"))), nil); err != nil {
		t.Fatalf("Put Range through A over B's lock after the kill: %s, want success", outcome(err))
	}
	// At first contact: well inside the 10 s heartbeat expiry, which would
	// free them too, but later.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the two requests took %v: B's handles were not reaped at first contact", took)
	}
	if left := handlesOf(t, a.Data, b.Pid()); len(left) != 0 {
		t.Fatalf("status still lists %d handles of the killed B: %+v", len(left), left)
	}
	if got := readFile(t, shA, "smb.bin"); !bytes.Equal(got, smbData) {
		t.Fatalf("smb.bin through A: %d bytes, want the %d written and flushed through B", len(got), len(smbData))
	}
	if got := readFile(t, shA, "rest.bin"); !bytes.Equal(got, restData) {
		t.Fatalf("rest.bin through A: %d bytes, want the %d put through B", len(got), len(restData))
	}
	want := bytes.Repeat([]byte{'.'}, 300)
	copy(want[120:], "over the lock")
	if got := readFile(t, shA, "locked.bin"); !bytes.Equal(got, want) {
		t.Fatalf("locked.bin through A: %q", got)
	}
}

// mustDial connects to addr over TCP; the test closes it at its end.
func mustDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}
