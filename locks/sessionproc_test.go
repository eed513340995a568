package locks

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sessionChild is the child of TestSessionFrozenProcess: spec is
// "path|interval ms|expiry ms". It opens the Table, opens file 21 with
// share none, prints "ready <handle> <owner>", then answers commands on
// stdin, one line each: "open F" (read+write, share none) and "close H"
// print "ok <handle> <owner>" or "err <sentinel> <owner>".
func sessionChild(spec string) {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		fmt.Println("bad spec", spec)
		os.Exit(2)
	}
	interval, err1 := strconv.Atoi(parts[1])
	expiry, err2 := strconv.Atoi(parts[2])
	if err := errors.Join(err1, err2); err != nil {
		fmt.Println("bad spec", err)
		os.Exit(2)
	}
	ctx := context.Background()
	tab, err := Open(ctx, parts[0], Options{
		HeartbeatInterval: time.Duration(interval) * time.Millisecond,
		SessionExpiry:     time.Duration(expiry) * time.Millisecond,
		Logger:            quietLogger(),
	})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	h, err := childOpen(tab, 21)
	if err != nil {
		fmt.Println("handle:", err)
		os.Exit(2)
	}
	fmt.Printf("ready %d %s\n", h.ID, h.Owner)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseUint(arg, 10, 64)
		var id HandleID
		switch cmd {
		case "open":
			var h Handle
			h, err = childOpen(tab, FileID(n))
			id = h.ID
		case "close":
			err = tab.Update(ctx, func(tx *Tx) error { _, err := tx.CloseHandle(HandleID(n)); return err })
			id = HandleID(n)
		}
		switch {
		case err == nil:
			fmt.Printf("ok %d %s\n", id, tab.Owner())
		case errors.Is(err, ErrSessionLost):
			fmt.Printf("err session-lost %s\n", tab.Owner())
		case errors.Is(err, ErrHandleClosed):
			fmt.Printf("err handle-closed %s\n", tab.Owner())
		case errors.Is(err, ErrSharingViolation):
			fmt.Printf("err sharing-violation %s\n", tab.Owner())
		default:
			fmt.Printf("err other:%v %s\n", strings.ReplaceAll(err.Error(), " ", "_"), tab.Owner())
		}
	}
	os.Exit(0)
}

func childOpen(tab *Table, f FileID) (Handle, error) {
	var h Handle
	err := tab.Update(context.Background(), func(tx *Tx) error {
		var err error
		h, err = tx.OpenHandle(OpenRequest{File: f, Access: rd | wr, Share: ShareNone})
		return err
	})
	return h, err
}

// sessionProc is a running sessionChild.
type sessionProc struct {
	cmd   *exec.Cmd
	in    io.Writer
	lines chan string
}

func (p *sessionProc) ask(t *testing.T, line string) []string {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, line); err != nil {
		t.Fatal(err)
	}
	return p.next(t)
}

func (p *sessionProc) next(t *testing.T) []string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("child exited")
		}
		return strings.Fields(l)
	case <-time.After(30 * time.Second):
		t.Fatal("child did not answer in 30s")
	}
	return nil
}

// stopOutsideWrite SIGSTOPs the child at a moment it holds no write
// transaction (its heartbeat commits every interval; a child frozen inside
// one would hold SQLite's write lock, and nobody could reap it — on SQLite
// nobody could write at all): after each stop a BEGIN IMMEDIATE with no
// busy wait tells, and a child caught inside one is resumed and stopped
// again.
func stopOutsideWrite(t *testing.T, cmd *exec.Cmd, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	must(t, err)
	defer db.Close()
	for range 100 {
		must(t, cmd.Process.Signal(syscall.SIGSTOP))
		c, err := db.Conn(t.Context())
		must(t, err)
		_, err = c.ExecContext(t.Context(), "BEGIN IMMEDIATE")
		if err == nil {
			_, err = c.ExecContext(t.Context(), "ROLLBACK")
			c.Close()
			must(t, err)
			return
		}
		c.Close()
		must(t, cmd.Process.Signal(syscall.SIGCONT))
		time.Sleep(time.Millisecond) // let it finish its transaction
	}
	t.Fatal("child always stopped inside a write transaction")
}

// A process frozen (SIGSTOP) past its session's expiry is reaped by
// another process's decision, although its flock is still held; resumed,
// its next decision fails with ErrSessionLost and is not applied, then it
// is a new owner and decides again; its old handle is gone.
func TestSessionFrozenProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	tab := openTable(t, path, Options{})
	const interval, expiry = 100 * time.Millisecond, 1500 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=session|"+path+"|"+strconv.Itoa(int(interval.Milliseconds()))+"|"+strconv.Itoa(int(expiry.Milliseconds())))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	p := &sessionProc{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	ready := p.next(t)
	if len(ready) != 3 || ready[0] != "ready" {
		t.Fatalf("child: %q", ready)
	}
	oldHandle, oldOwner := ready[1], OwnerID(ready[2])

	if _, err := open(t, tab, OpenRequest{File: 21, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against the live child: %v", err)
	}
	stopOutsideWrite(t, cmd, path)
	// Wait for the child's deadline, as the database has it, to pass.
	var expires int64
	must(t, tab.View(t.Context(), func(tx *Tx) error {
		return tx.queryRow(`SELECT expires FROM lk_owners WHERE owner = ?`, []any{string(oldOwner)}, &expires)
	}))
	time.Sleep(time.Until(time.Unix(0, expires)) + 10*time.Millisecond)
	h, err := open(t, tab, OpenRequest{File: 21, Access: rd, Share: ShareAll})
	if err != nil {
		t.Fatalf("open against the frozen child past its expiry: %v (not reaped)", err)
	}
	var n int
	must(t, tab.View(t.Context(), func(tx *Tx) error {
		return tx.queryRow(`SELECT (SELECT count(*) FROM lk_owners WHERE owner = ?1) + (SELECT count(*) FROM lk_handles WHERE owner = ?1)`,
			[]any{string(oldOwner)}, &n)
	}))
	if n != 0 {
		t.Fatalf("frozen owner still has %d rows", n)
	}

	must(t, cmd.Process.Signal(syscall.SIGCONT))
	if got := p.ask(t, "open 22"); len(got) != 3 || got[1] != "session-lost" {
		t.Fatalf("first decision after waking: %q, want err session-lost", got)
	}
	must(t, tab.View(t.Context(), func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_handles WHERE file = 22 OR owner = ?`, []any{string(oldOwner)}, &n)
	}))
	if n != 0 {
		t.Fatalf("the fenced decision was applied: %d handles", n)
	}
	got := p.ask(t, "open 22")
	if len(got) != 3 || got[0] != "ok" || OwnerID(got[2]) == oldOwner {
		t.Fatalf("decision after registering again: %q", got)
	}
	newOwner := OwnerID(got[2])
	if got := p.ask(t, "close "+oldHandle); len(got) != 3 || got[1] != "handle-closed" {
		t.Fatalf("close of the old handle: %q, want err handle-closed", got)
	}
	if got := p.ask(t, "open 21"); len(got) != 3 || got[1] != "sharing-violation" {
		t.Fatalf("open against our handle: %q, want err sharing-violation", got)
	}
	var hs []Handle
	must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(22); return err }))
	if len(hs) != 1 || hs[0].Owner != newOwner {
		t.Fatalf("handles on file 22: %+v, want one of %s", hs, newOwner)
	}
	mustClose(t, tab, h.ID)
	in.(io.Closer).Close()
	must(t, cmd.Wait())
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
