package sqlmeta

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// TestUpdateRetriesBusy: a write transaction that meets another
// process's write lock (a second DB on the file, inside Update) waits and
// commits once the lock goes; until then its context's end is the answer.
func TestUpdateRetriesBusy(t *testing.T) {
	d := openDB(t, "")
	ctx := context.Background()
	other, err := Open(d.Path(), Options{})
	must(t, err)
	defer other.Close()
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- other.Update(ctx, func(tx *Tx) error {
			_, err := tx.Exec(`INSERT INTO kv VALUES('other', 1)`)
			close(held)
			<-release
			return err
		})
	}()
	<-held
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := d.Update(short, func(tx *Tx) error { return nil }); err == nil || short.Err() == nil {
		t.Fatalf("Update while another writer holds the lock: %v before its context ended", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	must(t, d.Update(ctx, func(tx *Tx) error {
		select {
		case <-release:
		default:
			t.Error("the transaction began while another writer held the lock")
		}
		_, err := tx.Exec(`INSERT INTO kv VALUES('mine', 2)`)
		return err
	}))
	must(t, <-done)
	var n int
	must(t, d.View(ctx, func(tx *Tx) error { return tx.QueryRow(`SELECT count(*) FROM kv`).Scan(&n) }))
	if n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}

// TestHooks: OnCommit runs after a commit and never after a rollback;
// OnRollback runs when fn or the commit fails; a read runs no OnCommit.
// A closed DB answers meta.ErrClosed.
func TestHooks(t *testing.T) {
	d := openDB(t, "")
	ctx := context.Background()
	var log []string
	must(t, d.Update(ctx, func(tx *Tx) error {
		tx.OnCommit(func() { log = append(log, "commit") })
		tx.OnRollback(func() { log = append(log, "rollback") })
		_, err := tx.Exec(`INSERT INTO kv VALUES('a', 1)`)
		return err
	}))
	boom := errors.New("boom")
	if err := d.Update(ctx, func(tx *Tx) error {
		tx.OnCommit(func() { log = append(log, "commit 2") })
		tx.OnRollback(func() { log = append(log, "rollback 2") })
		_, err := tx.Exec(`INSERT INTO kv VALUES('b', 1)`)
		must(t, err)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	if err := d.Update(ctx, func(tx *Tx) error {
		tx.OnRollback(func() { log = append(log, "rollback 3") })
		_, err := tx.Exec(`INSERT INTO kv VALUES('a', 2)`)
		return err
	}); !errors.Is(err, meta.ErrPrimaryKeyViolation) {
		t.Fatalf("Update: %v, want a classified primary key violation", err)
	}
	must(t, d.View(ctx, func(tx *Tx) error {
		tx.OnCommit(func() { log = append(log, "view") })
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM kv`).Scan(&n); err != nil || n != 1 {
			t.Errorf("the rolled-back row is there: %d rows, %v", n, err)
		}
		return nil
	}))
	if want := []string{"commit", "rollback 2", "rollback 3"}; !equal(log, want) {
		t.Fatalf("hooks ran %v, want %v", log, want)
	}
	must(t, d.Close())
	for name, f := range map[string]func(context.Context, func(*Tx) error) error{"Update": d.Update, "View": d.View, "Peek": d.Peek} {
		if err := f(ctx, func(*Tx) error { return nil }); !errors.Is(err, meta.ErrClosed) {
			t.Errorf("%s after Close: %v, want meta.ErrClosed", name, err)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
