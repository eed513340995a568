package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/locks"
)

// runStatusJSON runs the real binary's `status --json` and decodes it.
func runStatusJSON(t *testing.T, data string) statusReport {
	t.Helper()
	out, err := exec.Command(blobshareBinary(t), "status", "--data", data, "--json").Output()
	if err != nil {
		t.Fatalf("status --json: %v", err)
	}
	var r statusReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("status --json printed %q: %v", out, err)
	}
	return r
}

func findHandle(r statusReport, path string) (handleReport, bool) {
	for _, h := range r.Handles {
		if h.Path == path {
			return h, true
		}
	}
	return handleReport{}, false
}

// TestStatusShowsEveryHolder: real processes hold files — a session with a
// byte-range lock, a second session that is then SIGKILLed, flock(1)
// holding a file open under flock on the mount of a running serve, an SMB
// client (go-smb2), a session whose heartbeat deadline has passed, and a
// lease taken over REST by the Go SDK — and `blobshare status` (the real
// binary, a process of its own) lists each with its share, path, access,
// share mode, protocol, client, owner process with its host (and for the
// mount the program that opened the file), locks (a flock as "(flock)",
// not its stored range), lease and delete-pending state; the killed
// session's handle shows as killed (flock free), the other as expired
// (heartbeat), and neither is cleaned up by looking.
func TestStatusShowsEveryHolder(t *testing.T) {
	requireFUSE(t)
	ctx := context.Background()
	data := t.TempDir()
	dd := seed(t, data)
	for _, p := range []string{"share/dir/doomed", "share/leased.txt", "share/mounted.txt", "share/frozen.txt"} {
		if _, err := dd.FS.CreateFile(ctx, fs.CreateFileRequest{Path: p, Size: 16}); err != nil {
			t.Fatal(err)
		}
	}
	if err := dd.Close(ctx); err != nil {
		t.Fatal(err)
	}

	mnt := t.TempDir()
	srv, err := servetest.Start(blobshareBinary(t), data, "--mount", mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop serve: %v", err)
		}
	})

	// A lease over REST, with the official SDK.
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + filerest.DevKey +
		";FileEndpoint=" + srv.RESTURL + ";"
	svc, err := service.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lease.NewFileClient(svc.NewShareClient("share").NewRootDirectoryClient().NewFileClient("leased.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	acq, err := lc.Acquire(ctx, nil)
	if err != nil {
		t.Fatalf("acquire lease: %v", err)
	}
	leaseID := *acq.LeaseID

	// A session holding two handles, one with a byte-range lock, one on
	// the leased file (read opens work under a lease).
	live := startSession(t, data)
	live.expect("open a share/dir/file access=read,write share=read", "ok ")
	live.expect("lock a 0 10 exclusive", "ok")
	live.expect("open l share/leased.txt access=read share=read,write,delete", "ok ")

	// A session whose heartbeat deadline will have passed by the
	// database's clock, as for a process frozen past its expiry (the
	// deadline is moved below instead of waiting for it).
	frozen := startSession(t, data)
	frozen.expect("open z share/frozen.txt access=read share=read", "ok ")

	// A session that marks a file delete-pending and is killed.
	doomed := startSession(t, data)
	doomed.expect("open d share/dir/doomed access=read,delete share=read,delete", "ok ")
	doomed.expect("dispose d true", "ok")
	// Both have started (each Open reaps the dead owners it finds): now
	// frozen's deadline passes and doomed is killed.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, dbName)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE lk_owners SET expires = 1 WHERE pid = ?`, frozen.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := doomed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	doomed.cmd.Wait()

	// A file held open on the mount by another program, flock(1), under
	// a shared flock; it says "locked" once it holds it, and lets go when
	// its stdin closes.
	holder := exec.Command("flock", "--shared", filepath.Join(srv.Mount, "share", "mounted.txt"), "-c", "echo locked; exec cat")
	holderIn, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	holderOut, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatalf("flock(1): %v", err)
	}
	defer func() { holderIn.Close(); holder.Wait() }()
	if line, err := bufio.NewReader(holderOut).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("flock(1) said %q, %v", line, err)
	}

	// A file held open by an SMB client (go-smb2) naming its workstation.
	nc, err := net.Dial("tcp", srv.SMBAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	smbSess, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: filerest.DevAccount, Password: filerest.DevKey, Workstation: "TESTPC"}}).Dial(nc)
	if err != nil {
		t.Fatalf("smb dial: %v", err)
	}
	defer smbSess.Logoff()
	smbShare, err := smbSess.Mount("share")
	if err != nil {
		t.Fatal(err)
	}
	defer smbShare.Umount()
	smbFile, err := smbShare.Create("smb.txt")
	if err != nil {
		t.Fatalf("smb create: %v", err)
	}
	defer smbFile.Close()

	r := runStatusJSON(t, data)
	hostname, _ := os.Hostname()

	h, ok := findHandle(r, "dir/file")
	switch {
	case !ok:
		t.Fatalf("no handle on dir/file in %+v", r.Handles)
	case h.Share != "share" || h.Access != "read,write" || h.ShareMode != "read" || h.Protocol != "session":
		t.Errorf("session handle: %+v", h)
	case h.Owner.PID != live.cmd.Process.Pid || !h.Owner.Alive || !strings.Contains(h.Owner.Command, "session") ||
		h.Owner.Host != hostname || h.Owner.Program != "blobshare session" || h.Owner.Dead != "":
		t.Errorf("session handle's owner: %+v, want pid %d alive running session on %s", h.Owner, live.cmd.Process.Pid, hostname)
	case len(h.Locks) != 1 || h.Locks[0].Offset != 0 || h.Locks[0].Length != 10 || h.Locks[0].Kind != "exclusive":
		t.Errorf("session handle's locks: %+v", h.Locks)
	case h.DeletePending || h.LeaseState != "available":
		t.Errorf("session handle's file state: %+v", h)
	}

	if h, ok := findHandle(r, "leased.txt"); !ok || h.LeaseState != "leased" || h.LeaseID != leaseID {
		t.Errorf("handle on the leased file: %+v (found %v), want lease %s", h, ok, leaseID)
	}
	if len(r.Leases) != 1 || r.Leases[0].Path != "leased.txt" || r.Leases[0].Share != "share" ||
		r.Leases[0].State != "leased" || r.Leases[0].ID != leaseID {
		t.Errorf("leases: %+v, want share/leased.txt leased with %s", r.Leases, leaseID)
	}

	if h, ok := findHandle(r, "dir/doomed"); !ok {
		t.Errorf("the killed session's handle is missing: %+v", r.Handles)
	} else if h.Owner.Alive || h.Owner.Dead != "flock free" || h.Owner.PID != doomed.cmd.Process.Pid || !h.DeletePending || h.Access != "read,delete" {
		t.Errorf("killed session's handle: %+v, want owner pid %d dead (flock free), delete pending", h, doomed.cmd.Process.Pid)
	}
	if h, ok := findHandle(r, "frozen.txt"); !ok {
		t.Errorf("the frozen session's handle is missing: %+v", r.Handles)
	} else if h.Owner.Alive || h.Owner.Dead != "heartbeat expired" || h.Owner.PID != frozen.cmd.Process.Pid || h.Owner.Host != hostname {
		t.Errorf("frozen session's handle: %+v, want owner pid %d dead (heartbeat expired)", h.Owner, frozen.cmd.Process.Pid)
	}

	if h, ok := findHandle(r, "mounted.txt"); !ok {
		t.Errorf("the mount's handle is missing: %+v", r.Handles)
	} else if h.Protocol != "fuse" || h.Owner.PID != srv.Pid() || !h.Owner.Alive || h.Access != "read" {
		t.Errorf("mount handle: %+v, want protocol fuse owned by serve (pid %d)", h, srv.Pid())
	} else if h.Program != "flock" || h.ProgramPID != holder.Process.Pid {
		t.Errorf("mount handle's program: %q pid %d, want flock pid %d (the program that opened it, not serve)", h.Program, h.ProgramPID, holder.Process.Pid)
	} else if host, _ := os.Hostname(); h.Client != host {
		t.Errorf("mount handle's client %q, want the host %q", h.Client, host)
	} else if len(h.Locks) != 1 || !h.Locks[0].Flock || h.Locks[0].POSIX || h.Locks[0].Kind != "shared" || h.Locks[0].Offset != 0 {
		t.Errorf("mount handle's flock: %+v, want one shared whole-file flock", h.Locks)
	}

	if h, ok := findHandle(r, "smb.txt"); !ok {
		t.Errorf("the SMB client's handle is missing: %+v", r.Handles)
	} else if h.Protocol != "smb" || h.Client != "TESTPC" || h.ClientIP != nc.LocalAddr().String() || h.Owner.PID != srv.Pid() {
		t.Errorf("SMB handle: protocol %q client %q address %q owner %d; want smb, TESTPC, %s, serve's pid %d",
			h.Protocol, h.Client, h.ClientIP, h.Owner.PID, nc.LocalAddr(), srv.Pid())
	}

	// The text form says the same, one line per handle, and names the
	// killed owner as such.
	out, err := exec.Command(blobshareBinary(t), "status", "--data", data).Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	text := string(out)
	for _, want := range []string{
		"pid " + strconv.Itoa(doomed.cmd.Process.Pid) + " KILLED on " + hostname + " (flock free",
		"pid " + strconv.Itoa(frozen.cmd.Process.Pid) + " EXPIRED on " + hostname + " (heartbeat expired",
		"pid " + strconv.Itoa(live.cmd.Process.Pid) + " on " + hostname + " (",
		"exclusive 0-9",
		"leased " + leaseID,
		"LEASED FILE",
		"shared (flock)",
		"flock (pid " + strconv.Itoa(holder.Process.Pid) + ") through pid " + strconv.Itoa(srv.Pid()),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "smb.txt") && !regexp.MustCompile(`\ssmb\s+TESTPC `+regexp.QuoteMeta(nc.LocalAddr().String())+`\s`).MatchString(line) {
			t.Errorf("status line of the SMB handle %q lacks protocol smb and client TESTPC %s", line, nc.LocalAddr())
		}
	}
	// A flock covers the whole file: no byte range to show.
	if strings.Contains(text, "18446744073709551614") {
		t.Errorf("status text shows a flock's stored range:\n%s", text)
	}
	// Looking reaped nothing: the killed handle is still there.
	if _, ok := findHandle(runStatusJSON(t, data), "dir/doomed"); !ok {
		t.Error("status reaped the killed session's handle")
	}
	live.expect("quit", "ok")
	if err := live.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestStatusUsageErrors: a missing data directory, or one without a
// database, is one line, and nothing is created.
func TestStatusUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"missing --data":    {[]string{"status", "--data", missing}, "does not exist"},
		"empty directory":   {[]string{"status", "--data", t.TempDir()}, "holds no blobshare database"},
		"stray argument":    {[]string{"status", "--data", t.TempDir(), "x"}, "unexpected arguments"},
		"flag after a word": {[]string{"status", "x", "--json"}, "unexpected arguments"},
	} {
		t.Run(name, func(t *testing.T) {
			err := runApp(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("status created %s (%v)", missing, err)
	}
}

// TestStatusReportDurable: a durable SMB open is reported as durable with
// its timeout, and while its client is away with when it disconnected and
// until when it is kept, in the JSON and in the text table.
func TestStatusReportDurable(t *testing.T) {
	disc := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	d := &locks.DurableOpen{Durable: locks.Durable{Version: 2, Timeout: time.Minute}, Disconnected: disc, Expires: disc.Add(time.Minute)}
	h := fs.OpenHandle{Handle: locks.Handle{ID: 7, ClientName: locks.ClientName(locks.ProtocolSMB, "WS1")}, ShareName: "s", Path: "f", Durable: d}
	r := newStatusReport(fs.Status{Handles: []fs.OpenHandle{h, {Handle: locks.Handle{ID: 8}, ShareName: "s", Path: "g"}}}, "host", func(int) string { return "" })
	got := r.Handles[0].Durable
	if got == nil || got.Version != 2 || got.TimeoutMS != 60000 || got.Disconnected == nil || !got.Disconnected.Equal(disc) || !got.Expires.Equal(disc.Add(time.Minute)) {
		t.Fatalf("durable report %+v", got)
	}
	if r.Handles[1].Durable != nil {
		t.Fatalf("a plain handle reported durable: %+v", r.Handles[1].Durable)
	}
	var b strings.Builder
	if err := r.writeText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "smb durable, disconnected until 2026-11-28T15:01:00Z"; !strings.Contains(b.String(), want) {
		t.Fatalf("text %q lacks %q", b.String(), want)
	}
	js, err := json.Marshal(r.Handles[0])
	if err != nil || !strings.Contains(string(js), `"durable":{"version":2,"timeout_ms":60000,"disconnected":"2026-11-28T15:00:00Z","expires":"2026-11-28T15:01:00Z"}`) {
		t.Fatalf("json %s %v", js, err)
	}
}
