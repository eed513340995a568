package sqlmeta

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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// foldInsert folds the insert of kv row (name, value).
func foldInsert(t *testing.T, d *DB, name string, value int) {
	t.Helper()
	must(t, d.UpdateFolded(t.Context(), func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO kv(name, value) VALUES(?, ?)`, name, value)
		return err
	}))
}

// kvNames are the names in kv, in order, read by read (View or Peek).
func kvNames(t *testing.T, read func(context.Context, func(*Tx) error) error) []string {
	t.Helper()
	var names []string
	must(t, read(t.Context(), func(tx *Tx) error {
		names = names[:0]
		rows, err := tx.Query(`SELECT name FROM kv ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			names = append(names, n)
		}
		return rows.Err()
	}))
	return names
}

// openFolding opens a DB with kv whose folds stay open for delay.
func openFolding(t *testing.T, path string, delay time.Duration) *DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "meta.db")
	}
	openDB(t, path).Close()
	d, err := Open(path, Options{Name: "fold", FoldDelay: delay})
	must(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

// TestFoldVisibleInProcess: folded changes, not yet committed (the fold's
// deadline is an hour away), are seen at once by a Peek (inside the fold)
// and by a View, a REST request's read (which commits them first) — and
// by another process only after that commit.
func TestFoldVisibleInProcess(t *testing.T) {
	d := openFolding(t, "", time.Hour)
	other, err := Open(d.Path(), Options{Name: "other"})
	must(t, err)
	defer other.Close()
	foldInsert(t, d, "a", 1)
	foldInsert(t, d, "b", 2)
	if got := kvNames(t, other.View); len(got) != 0 {
		t.Fatalf("another process sees %v before the fold committed", got)
	}
	if got := kvNames(t, d.Peek); !equal(got, []string{"a", "b"}) {
		t.Fatalf("Peek inside the fold: %v, want [a b]", got)
	}
	if got := kvNames(t, other.View); len(got) != 0 {
		t.Fatalf("a Peek committed the fold: another process sees %v", got)
	}
	if got := kvNames(t, d.View); !equal(got, []string{"a", "b"}) {
		t.Fatalf("View after folded changes: %v, want [a b]", got)
	}
	if got := kvNames(t, other.View); !equal(got, []string{"a", "b"}) {
		t.Fatalf("another process after this one's View: %v, want [a b]", got)
	}
	// An Update of this process decides after the folded changes.
	foldInsert(t, d, "c", 3)
	must(t, d.Update(t.Context(), func(tx *Tx) error {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM kv`).Scan(&n); err != nil {
			return err
		}
		if n != 3 {
			t.Errorf("Update sees %d rows, want 3 (the folded one included)", n)
		}
		return nil
	}))
}

// TestFoldFailedFnUndoesOnlyItself: a folded fn that fails (its own
// error, or a constraint its statement broke) is undone alone — the
// changes folded before and after it commit — and its OnRollback runs
// while the others' OnCommit run.
func TestFoldFailedFnUndoesOnlyItself(t *testing.T) {
	d := openFolding(t, "", time.Hour)
	boom := errors.New("boom")
	var log []string
	cases := []struct {
		name string
		fn   func(tx *Tx) error
		want error
	}{
		{"a", func(tx *Tx) error { _, err := tx.Exec(`INSERT INTO kv VALUES('a', 1)`); return err }, nil},
		{"b fails", func(tx *Tx) error {
			if _, err := tx.Exec(`INSERT INTO kv VALUES('b', 1)`); err != nil {
				return err
			}
			if _, err := tx.Exec(`UPDATE kv SET value = 9 WHERE name = 'a'`); err != nil {
				return err
			}
			return boom
		}, boom},
		{"a again", func(tx *Tx) error { _, err := tx.Exec(`INSERT INTO kv VALUES('a', 2)`); return err }, meta.ErrPrimaryKeyViolation},
		{"c", func(tx *Tx) error { _, err := tx.Exec(`INSERT INTO kv VALUES('c', 1)`); return err }, nil},
	}
	for _, c := range cases {
		err := d.UpdateFolded(t.Context(), func(tx *Tx) error {
			tx.OnCommit(func() { log = append(log, "commit "+c.name) })
			tx.OnRollback(func() { log = append(log, "rollback "+c.name) })
			return c.fn(tx)
		})
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	want := []string{"commit a", "rollback b fails", "rollback a again", "commit c"}
	if !equal(log, want) {
		t.Fatalf("hooks ran %v, want %v", log, want)
	}
	must(t, d.CommitFolded())
	other, err := Open(d.Path(), Options{Name: "other"})
	must(t, err)
	defer other.Close()
	if got := kvNames(t, other.View); !equal(got, []string{"a", "c"}) {
		t.Fatalf("committed %v, want [a c]", got)
	}
	var v int
	must(t, other.View(t.Context(), func(tx *Tx) error { return tx.QueryRow(`SELECT value FROM kv WHERE name='a'`).Scan(&v) }))
	if v != 1 {
		t.Fatalf("a = %d: the failed fn's update survived", v)
	}
}

// TestFoldOtherProcess: another process (a second DB on the file) sees
// folded changes once the deadline commits them, each fn's changes whole
// (its two rows together or neither), and its write transaction, which
// waits on SQLite's busy handler while the fold holds the write lock,
// decides after them.
func TestFoldOtherProcess(t *testing.T) {
	d := openFolding(t, "", 20*time.Millisecond)
	other, err := Open(d.Path(), Options{Name: "other"})
	must(t, err)
	defer other.Close()
	const n = 30
	done := make(chan error, 1)
	go func() {
		for i := range n {
			err := d.UpdateFolded(context.Background(), func(tx *Tx) error {
				for _, side := range []string{"x", "y"} {
					if _, err := tx.Exec(`INSERT INTO kv VALUES(?, ?)`, fmt.Sprintf("%s%02d", side, i), i); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	deadline := time.Now().Add(10 * time.Second)
	for seen := 0; seen < 2*n; {
		var x, y int
		must(t, other.View(t.Context(), func(tx *Tx) error {
			return tx.QueryRow(`SELECT count(*) FILTER (WHERE name LIKE 'x%'), count(*) FILTER (WHERE name LIKE 'y%') FROM kv`).Scan(&x, &y)
		}))
		if x != y {
			t.Fatalf("another process sees half a folded change: %d x rows, %d y rows", x, y)
		}
		seen = x + y
		if time.Now().After(deadline) {
			t.Fatalf("another process sees %d of %d rows 10 s later", seen, 2*n)
		}
		time.Sleep(time.Millisecond) // polling: the other process has no event to wait on
	}
	must(t, <-done)
	foldInsert(t, d, "z", 1)
	// The other process's write waits for the fold (busy handler) and
	// sees it.
	must(t, other.Update(t.Context(), func(tx *Tx) error {
		var c int
		if err := tx.QueryRow(`SELECT count(*) FROM kv WHERE name = 'z'`).Scan(&c); err != nil {
			return err
		}
		if c != 1 {
			t.Errorf("another process's write transaction does not see the folded row")
		}
		return nil
	}))
}

// TestCommitFolded: CommitFolded (an fsync through the mount) commits at
// once: another process sees the change right after, not a deadline later.
func TestCommitFolded(t *testing.T) {
	d := openFolding(t, "", time.Hour)
	other, err := Open(d.Path(), Options{Name: "other"})
	must(t, err)
	defer other.Close()
	foldInsert(t, d, "a", 1)
	must(t, d.CommitFolded())
	if got := kvNames(t, other.View); !equal(got, []string{"a"}) {
		t.Fatalf("another process after CommitFolded: %v, want [a]", got)
	}
	must(t, d.CommitFolded()) // nothing open: nothing to do
	foldInsert(t, d, "b", 2)
	must(t, d.Close()) // Close commits too
	if got := kvNames(t, other.View); !equal(got, []string{"a", "b"}) {
		t.Fatalf("another process after Close: %v, want [a b]", got)
	}
}

const foldChildEnv = "BLOBSHARE_SQLMETA_FOLD_CHILD"

// TestFoldCrash: a process killed (SIGKILL) while folding leaves a prefix
// of its acknowledged changes: every change it committed (CommitFolded,
// every 7th) and maybe some after, never a gap, never a torn one.
func TestFoldCrash(t *testing.T) {
	if os.Getenv(foldChildEnv) != "" {
		foldCrashChild(t, os.Getenv(foldChildEnv))
		return
	}
	path := filepath.Join(t.TempDir(), "meta.db")
	openDB(t, path).Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFoldCrash$")
	cmd.Env = append(os.Environ(), foldChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	sc := bufio.NewScanner(out)
	acked, committed := -1, -1
	for sc.Scan() && acked < 200 {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		i, err := strconv.Atoi(f[1])
		must(t, err)
		switch f[0] {
		case "acked":
			acked = i
		case "committed":
			committed = i
		}
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	if acked < 200 {
		t.Fatalf("child stopped after %d acknowledged changes", acked+1)
	}
	d := openDB(t, path)
	var n, sum, pairs int
	must(t, d.View(t.Context(), func(tx *Tx) error {
		return tx.QueryRow(`SELECT count(*), coalesce(sum(value), 0), count(*) FILTER (WHERE name LIKE 'p%') FROM kv`).Scan(&n, &sum, &pairs)
	}))
	// Rows i0000..i(k-1) and their pairs p…: a prefix when the k rows
	// hold 0..k-1.
	k := n / 2
	if pairs != k || n%2 != 0 {
		t.Fatalf("torn change: %d rows, %d of them pairs", n, pairs)
	}
	if sum != 2*(k*(k-1)/2) {
		t.Fatalf("%d changes survive but not 0..%d (sum %d)", k, k-1, sum)
	}
	if k <= committed {
		t.Fatalf("%d changes survive; change %d was committed", k, committed)
	}
	t.Logf("%d acknowledged (%d committed) before the kill, %d survive", acked+1, committed+1, k)
}

// foldCrashChild folds changes into path until killed, printing each
// acknowledgement and each CommitFolded.
func foldCrashChild(t *testing.T, path string) {
	d, err := Open(path, Options{Name: "child", FoldDelay: 50 * time.Millisecond})
	must(t, err)
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		must(t, d.UpdateFolded(context.Background(), func(tx *Tx) error {
			for _, p := range []string{"i", "p"} {
				if _, err := tx.Exec(`INSERT INTO kv VALUES(?, ?)`, fmt.Sprintf("%s%06d", p, i), i); err != nil {
					return err
				}
			}
			return nil
		}))
		fmt.Fprintf(w, "acked %d\n", i)
		if i%7 == 6 {
			must(t, d.CommitFolded())
			fmt.Fprintf(w, "committed %d\n", i)
		}
		w.Flush()
	}
}

// TestFoldReadsNeverMiss: a read of this process that begins after a
// folded change was acknowledged sees it, whether it runs inside the fold
// (Peek), on a reader while another fold holds the writer, or while the
// deadline's COMMIT is under way (a stress: readers of each kind run
// while the writer folds and the deadline commits every 50 µs).
func TestFoldReadsNeverMiss(t *testing.T) {
	d := openFolding(t, "", 50*time.Microsecond)
	const n = 1500
	var acked atomic.Int64
	acked.Store(-1)
	stop := make(chan struct{})
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	for _, read := range []func(context.Context, func(*Tx) error) error{d.Peek, d.PeekStatement, d.View} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				want := acked.Load() + 1
				var c int64
				if err := read(context.Background(), func(tx *Tx) error {
					return tx.QueryRow(`SELECT count(*) FROM kv`).Scan(&c)
				}); err != nil {
					errs <- err
					return
				}
				if c < want {
					errs <- fmt.Errorf("a read begun after %d changes were acknowledged sees %d rows", want, c)
					return
				}
			}
		}()
	}
	for i := range n {
		foldInsert(t, d, fmt.Sprintf("r%05d", i), i)
		acked.Store(int64(i))
		if len(errs) > 0 {
			break
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestUpdateJoinsFold: an Update while a fold is open runs in it and
// commits it with its own changes; a failing one is undone alone (its
// OnRollback runs) and the folded changes still commit.
func TestUpdateJoinsFold(t *testing.T) {
	d := openFolding(t, "", time.Hour)
	other, err := Open(d.Path(), Options{Name: "other"})
	must(t, err)
	defer other.Close()
	boom := errors.New("boom")
	var log []string
	foldInsert(t, d, "a", 1)
	if err := d.Update(t.Context(), func(tx *Tx) error {
		tx.OnCommit(func() { log = append(log, "commit 1") })
		tx.OnRollback(func() { log = append(log, "rollback 1") })
		if _, err := tx.Exec(`INSERT INTO kv VALUES('b', 1)`); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failing Update in a fold: %v, want its error", err)
	}
	if got := kvNames(t, other.View); !equal(got, []string{"a"}) {
		t.Fatalf("after a failed Update in a fold another process sees %v, want [a]", got)
	}
	foldInsert(t, d, "c", 1)
	must(t, d.Update(t.Context(), func(tx *Tx) error {
		tx.OnCommit(func() { log = append(log, "commit 2") })
		_, err := tx.Exec(`INSERT INTO kv VALUES('d', 1)`)
		return err
	}))
	if got := kvNames(t, other.View); !equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("after an Update in a fold another process sees %v, want [a c d]", got)
	}
	if want := []string{"rollback 1", "commit 2"}; !equal(log, want) {
		t.Fatalf("hooks ran %v, want %v", log, want)
	}
}
