package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/rest"
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
// byte-range lock, a second session that is then SIGKILLed, a program
// holding a file open on the mount of a running serve, a session whose
// heartbeat deadline has passed, and a lease taken
// over REST by the Go SDK — and `blobshare status` (the real binary, a
// process of its own) lists each with its share, path, access, share mode,
// protocol, owner process, locks, lease and delete-pending state; the
// killed session's handle shows as killed (flock free), the other as
// expired (heartbeat), each with its host, and neither is cleaned up by
// looking.
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
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + rest.DevKey +
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

	// A file held open on the mount by this process, under flock.
	f, err := os.Open(filepath.Join(srv.Mount, "share", "mounted.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatalf("flock: %v", err)
	}

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
	} else if len(h.Locks) != 1 || !h.Locks[0].Flock || h.Locks[0].POSIX || h.Locks[0].Kind != "shared" || h.Locks[0].Offset != 0 {
		t.Errorf("mount handle's flock: %+v, want one shared whole-file flock", h.Locks)
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
		"(flock)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
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
