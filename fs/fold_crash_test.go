package fs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

const foldCrashEnv = "BLOBSHARE_FS_FOLD_CRASH_CHILD"

// TestFoldMountCrash: a process killed (SIGKILL) while the mount's changes
// fold — creating files as tar -x does (create, release), then removing
// them as rm -rf does, CommitFolded (an fsync) every 10th — leaves a
// namespace that is a prefix of what it acknowledged, never short of what
// it committed, and a lock table without its handles once it is reaped.
func TestFoldMountCrash(t *testing.T) {
	if dir := os.Getenv(foldCrashEnv); dir != "" {
		foldCrashChild(t, dir)
		return
	}
	dir := t.TempDir()
	e := openEnv(t, dir)
	share := e.share("crash")
	e.close()
	e.fs = nil

	cmd := exec.Command(os.Args[0], "-test.run=^TestFoldMountCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), foldCrashEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	mustNil(t, err, "pipe")
	mustNil(t, cmd.Start(), "start child")
	const n, kill = 300, 450 // kill during the removals
	acked, synced := -1, -1  // step numbers: 0..n-1 creates, n..2n-1 removals
	sc := bufio.NewScanner(out)
	for acked < kill && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		i, err := strconv.Atoi(f[1])
		mustNil(t, err, "child output")
		switch f[0] {
		case "acked":
			acked = i
		case "synced":
			synced = i
		}
	}
	mustNil(t, cmd.Process.Signal(syscall.SIGKILL), "kill")
	_ = cmd.Wait()
	if acked < kill {
		t.Fatalf("the child stopped after step %d", acked)
	}

	e2 := openEnv(t, dir) // reaps the dead child's handles
	present := map[int]bool{}
	list, err := e2.fs.ReadDir(ctxBG, share)
	mustNil(t, err, "readdir")
	for _, a := range list {
		i, err := strconv.Atoi(strings.TrimPrefix(a.Name, "f"))
		mustNil(t, err, "name "+a.Name)
		present[i] = true
	}
	// After step s (a prefix of the steps survived): the creates up to
	// min(s, n-1) happened, and the removals of f0 .. f(s-n).
	s := -1
	for step := 0; step < 2*n; step++ {
		want := map[int]bool{}
		for i := 0; i <= min(step, n-1); i++ {
			want[i] = true
		}
		for i := 0; i <= step-n; i++ {
			delete(want, i)
		}
		if equalSets(want, present) {
			s = step
			break
		}
	}
	if len(present) == 0 && synced < 0 {
		s = -1 // nothing survived and nothing was synced: a prefix too
	} else if s < 0 {
		t.Fatalf("the namespace (%d files) is no prefix of the acknowledged steps", len(present))
	}
	if s < synced {
		t.Fatalf("the namespace ends at step %d; step %d was synced", s, synced)
	}
	if s > acked+20 {
		// The child may have gone on past what was read here, not far.
		t.Logf("the namespace ends at step %d, %d steps after the last one read", s, s-acked)
	}
	for i := range n {
		if a, err := e2.fs.Lookup(ctxBG, share, "f"+strconv.Itoa(i)); err == nil {
			var hs []locks.Handle
			mustNil(t, e2.table.View(ctxBG, func(tx *locks.Tx) error {
				var err error
				hs, err = tx.Handles(a.ID)
				return err
			}), "handles")
			if len(hs) != 0 {
				t.Fatalf("f%d keeps %d handles of the dead process", i, len(hs))
			}
		}
	}
	t.Logf("acknowledged step %d (synced %d); the namespace ends at step %d", acked, synced, s)
}

func equalSets(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// foldCrashChild creates f0..f299 in share "crash" the mount's way and
// then removes them, printing each acknowledged step and each sync, with
// folds that stay open for 20 ms so that a kill finds one open.
func foldCrashChild(t *testing.T, dir string) {
	e := openFoldEnv(t, dir, 20*time.Millisecond)
	a, err := e.fs.Lookup(ctxBG, RootID, "crash")
	mustNil(t, err, "share")
	w := bufio.NewWriter(os.Stdout)
	step := 0
	ack := func() {
		fmt.Fprintf(w, "acked %d\n", step)
		if step%10 == 9 {
			mustNil(t, e.fs.CommitFolded(), "commit folded")
			fmt.Fprintf(w, "synced %d\n", step)
		}
		w.Flush()
		step++
	}
	for i := range 300 {
		h, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: a.ID, Name: "f" + strconv.Itoa(i), Exclusive: true,
			Open: OpenOptions{Access: rw, Share: allShare, POSIX: true}})
		mustNil(t, err, "create")
		mustNil(t, h.Release(ctxBG, nil), "release")
		ack()
	}
	for i := range 300 {
		mustNil(t, e.fs.Unlink(ctxBG, a.ID, "f"+strconv.Itoa(i)), "unlink")
		ack()
	}
	select {} // wait for the kill
}
