package locks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child side of the two-process tests: when BLOBSHARE_LOCKS_CHILD is
// set, TestHelperHolder opens the database named there, opens a handle as
// described, prints "ready <handle id>" and waits to be killed.
const childEnv = "BLOBSHARE_LOCKS_CHILD"

func TestHelperHolder(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("helper for the two-process tests; runs only as their child")
	}
	if path, ok := strings.CutPrefix(spec, "stress|"); ok {
		stressChild(path)
		return
	}
	if rest, ok := strings.CutPrefix(spec, "session|"); ok {
		sessionChild(rest)
		return
	}
	// spec: path|file|access|share|doc|lock
	parts := strings.Split(spec, "|")
	if len(parts) != 6 {
		fmt.Println("bad spec", spec)
		os.Exit(2)
	}
	file, _ := strconv.ParseUint(parts[1], 10, 64)
	acc, err1 := ParseAccess(parts[2])
	share, err2 := ParseShareMode(parts[3])
	if err := errors.Join(err1, err2); err != nil {
		fmt.Println("bad spec", err)
		os.Exit(2)
	}
	ctx := context.Background()
	tab, err := Open(ctx, parts[0], Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var h Handle
	err = tab.Update(ctx, func(tx *Tx) error {
		var err error
		if h, err = tx.OpenHandle(OpenRequest{File: FileID(file), Access: acc, Share: share, DeleteOnClose: parts[4] == "doc"}); err != nil {
			return err
		}
		if parts[5] == "lock" {
			return tx.Lock(h.ID, Range{0, 100}, LockExclusive)
		}
		return nil
	})
	if err != nil {
		fmt.Println("handle:", err)
		os.Exit(2)
	}
	fmt.Printf("ready %d\n", h.ID)
	select {} // hold until killed
}

// startHolder re-executes the test binary as a holder child and waits for
// its "ready" line.
func startHolder(t *testing.T, spec string) (*exec.Cmd, HandleID) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") || strings.Contains(sc.Text(), ":") {
				line <- sc.Text()
				return
			}
		}
		line <- "child exited"
	}()
	select {
	case l := <-line:
		id, err := strconv.ParseUint(strings.TrimPrefix(l, "ready "), 10, 64)
		if err != nil {
			t.Fatalf("child: %s", l)
		}
		return cmd, HandleID(id)
	case <-time.After(30 * time.Second):
		t.Fatal("child did not get ready in 30s")
	}
	return nil, 0
}

func killHolder(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // the kernel has dropped the child's flock once it is reaped
}

// A real second process holds a handle; our conflicting open is refused;
// after SIGKILL the same Table's open succeeds without reopening.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	rm := &removeLog{}
	tab := openTable(t, path, Options{Remove: rm.remove})

	t.Run("share mode held by a killed process", func(t *testing.T) {
		child, childHandle := startHolder(t, path+"|7|read,write|read||")
		// The child's handle is visible at once.
		var hs []Handle
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(7); return err }))
		if len(hs) != 1 || hs[0].ID != childHandle || hs[0].Owner == tab.Owner() {
			t.Fatalf("handles on file 7: %+v", hs)
		}
		_, err := open(t, tab, OpenRequest{File: 7, Access: AccessWrite, Share: ShareAll})
		var ce *ConflictError
		if !errors.Is(err, ErrSharingViolation) || !errors.As(err, &ce) || ce.Handles[0] != childHandle {
			t.Fatalf("open against the live child: %v", err)
		}
		if err := checkREST(t, tab, RESTRequest{File: 7, Op: OpPutRange, Range: Range{0, 1}}); !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("REST against the live child: %v", err)
		}
		killHolder(t, child)
		h, err := open(t, tab, OpenRequest{File: 7, Access: AccessWrite, Share: ShareAll})
		if err != nil {
			t.Fatalf("open after SIGKILL: %v", err)
		}
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(7); return err }))
		if len(hs) != 1 || hs[0].ID != h.ID {
			t.Fatalf("dead child's handle not reaped: %+v", hs)
		}
	})

	t.Run("REST check in a View reaps and retries", func(t *testing.T) {
		child, _ := startHolder(t, path+"|8|read|none||")
		if err := checkREST(t, tab, RESTRequest{File: 8, Op: OpGetFile, Range: WholeFile}); !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("live: %v", err)
		}
		killHolder(t, child)
		if err := checkREST(t, tab, RESTRequest{File: 8, Op: OpGetFile, Range: WholeFile}); err != nil {
			t.Fatalf("after SIGKILL: %v", err)
		}
	})

	t.Run("byte-range lock held by a killed process", func(t *testing.T) {
		child, _ := startHolder(t, path+"|9|read,write|read,write,delete||lock")
		h := mustOpen(t, tab, OpenRequest{File: 9, Access: rd | wr, Share: ShareAll})
		if err := checkIO(t, tab, h.ID, Range{10, 1}, false); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("live: %v", err)
		}
		killHolder(t, child)
		must(t, checkIO(t, tab, h.ID, Range{10, 1}, false))
	})

	t.Run("delete-on-close of a killed process completes at the next Open", func(t *testing.T) {
		child, _ := startHolder(t, path+"|10|delete|read,write,delete|doc|")
		killHolder(t, child)
		other := openTable(t, path, Options{Remove: rm.remove})
		got := rm.removed()
		if len(got) != 1 || got[0] != 10 {
			t.Fatalf("removed %v, want [10]", got)
		}
		// The owner file of the dead child is gone too.
		ents, err := os.ReadDir(path + ".owners")
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 2 {
			t.Fatalf("owner files %v, want the two live tables'", ents)
		}
		_ = other
	})
}

// stressChild opens and closes random handles on file 1 and checks inside
// each granting transaction that the table holds no conflicting pair. It
// exits 1 on a violation, 2 on any other error.
func stressChild(path string) {
	ctx := context.Background()
	tab, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	accesses := []Access{AccessRead, AccessWrite, AccessDelete, AccessRead | AccessWrite}
	shares := []ShareMode{ShareNone, ShareRead, ShareWrite, ShareRead | ShareWrite, ShareAll, ShareAll}
	seed := uint64(os.Getpid())
	granted := 0
	for i := range 150 {
		seed = seed*6364136223846793005 + 1442695040888963407
		req := OpenRequest{File: 1, Access: accesses[(seed>>33)%4], Share: shares[(seed>>40)%6]}
		var h Handle
		err := tab.Update(ctx, func(tx *Tx) error {
			var err error
			if h, err = tx.OpenHandle(req); err != nil {
				return err
			}
			return noConflictingHandles(tx, 1)
		})
		if errors.Is(err, ErrSharingViolation) {
			continue
		}
		if err != nil {
			fmt.Println("iteration", i, err)
			os.Exit(1)
		}
		granted++
		if err := tab.Update(ctx, func(tx *Tx) error { _, err := tx.CloseHandle(h.ID); return err }); err != nil {
			fmt.Println("close:", err)
			os.Exit(2)
		}
	}
	if err := tab.Close(ctx); err != nil {
		fmt.Println("close table:", err)
		os.Exit(2)
	}
	fmt.Println("granted", granted)
	os.Exit(0)
}

// Three processes open and close conflicting handles on one file; every
// granting transaction checks that the table holds no conflicting pair.
func TestProcessesNeverGrantConflicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	openTable(t, path, Options{}) // create the schema once
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=stress|"+path)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i])
		} else {
			t.Logf("child %d: %s", i, strings.TrimSpace(outs[i].String()))
		}
	}
}

func TestOtherLiveOwners(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	a, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	if others, err := a.OtherLiveOwners(ctx); err != nil || len(others) != 0 {
		t.Fatalf("alone: others = %v, %v", others, err)
	}
	b, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	others, err := a.OtherLiveOwners(ctx)
	if err != nil || len(others) != 1 || others[0] != b.Owner() {
		t.Fatalf("with b open: others = %v, %v; want [%s]", others, err, b.Owner())
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if others, err := a.OtherLiveOwners(ctx); err != nil || len(others) != 0 {
		t.Fatalf("after b closed: others = %v, %v", others, err)
	}
}

// Database paths are file names, not URIs: '#', '?' and '%' in a directory
// name must not cut the path short or open another database.
func TestOpenPathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	for _, dir := range []string{"a#1", "a?b=c", "100%25", "plain"} {
		path := filepath.Join(base, dir, "blobshare.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		tab, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		if err := tab.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("database not created at %s: %v", path, err)
		}
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("stray file %s beside the data directories", e.Name())
		}
	}
}
