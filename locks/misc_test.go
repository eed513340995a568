package locks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Open refuses a bad owner id and a bad path with a typed error, never a
// panic (the Table's own bad input is the lockstest suite's BadInput).
func TestOpenBadInput(t *testing.T) {
	t.Run("bad owner id", func(t *testing.T) {
		if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "x.db"), Options{Owner: "../evil"}); !errors.Is(err, ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("bad path", func(t *testing.T) {
		if _, err := Open(t.Context(), "", Options{}); !errors.Is(err, ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
}

func TestParseWords(t *testing.T) {
	acc := []struct {
		in   string
		want Access
		err  bool
	}{
		{"read", rd, false},
		{"read,write", rd | wr, false},
		{" Read , EXECUTE ", rd | ex, false},
		{"append,delete,read_attributes", ap | del | attr, false},
		{"read_attributes", attr, false},
		{"", 0, true},
		{"read,", 0, true},
		{"rw", 0, true},
		{"none", 0, true},
	}
	for _, c := range acc {
		got, err := ParseAccess(c.in)
		if (err != nil) != c.err || got != c.want || (err != nil && !errors.Is(err, ErrInvalidParameter)) {
			t.Errorf("ParseAccess(%q) = %v, %v", c.in, got, err)
		}
		if err == nil {
			if back, err := ParseAccess(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q: %v %v", c.in, got.String(), back, err)
			}
		}
	}
	share := []struct {
		in   string
		want ShareMode
		err  bool
	}{
		{"none", ShareNone, false},
		{"read", ShareRead, false},
		{"read,write,delete", ShareAll, false},
		{"Delete,write", ShareWrite | ShareDelete, false},
		{"", 0, true},
		{"none,read", 0, true},
		{"execute", 0, true},
	}
	for _, c := range share {
		got, err := ParseShareMode(c.in)
		if (err != nil) != c.err || got != c.want || (err != nil && !errors.Is(err, ErrInvalidParameter)) {
			t.Errorf("ParseShareMode(%q) = %v, %v", c.in, got, err)
		}
		if err == nil {
			if back, err := ParseShareMode(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q: %v %v", c.in, got.String(), back, err)
			}
		}
	}
	for _, c := range []struct {
		off, n int64
		want   error
	}{{-1, 1, ErrInvalidParameter}, {0, -5, ErrInvalidParameter}, {0, 0, nil}, {1 << 62, 1 << 62, nil}} {
		if _, err := NewRange(c.off, c.n); !errIs(err, c.want) {
			t.Errorf("NewRange(%d, %d): %v, want %v", c.off, c.n, err, c.want)
		}
	}
	if s := Access(0x80 | 1).String(); s != "read,0x80" {
		t.Errorf("String of a bad mask: %q", s)
	}
}

// Table.Close and SQL in a transaction (Forget and Remove failures are the
// lockstest suite's Lifecycle).
func TestLifecycle(t *testing.T) {
	t.Run("Close closes the owner's handles and runs delete-on-close", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "locks.db")
		rm := &removeLog{}
		tab, err := Open(t.Context(), path, Options{Remove: rm.remove})
		must(t, err)
		watcher := openTable(t, path, Options{})
		f := newFile()
		mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareNone, DeleteOnClose: true})
		must(t, tab.Close(context.Background()))
		must(t, tab.Close(context.Background())) // idempotent
		if len(rm.removed()) != 1 || rm.removed()[0] != f {
			t.Fatalf("removed %v", rm.removed())
		}
		if _, err := open(t, watcher, OpenRequest{File: f, Access: rd, Share: ShareNone}); err != nil {
			t.Fatal(err)
		}
		if err := tab.Update(t.Context(), func(*Tx) error { return nil }); !errors.Is(err, ErrHandleClosed) {
			t.Fatalf("Update after Close: %v", err)
		}
		if err := tab.View(t.Context(), func(*Tx) error { return nil }); !errors.Is(err, ErrHandleClosed) {
			t.Fatalf("View after Close: %v", err)
		}
		var n int
		must(t, watcher.DB().QueryRow(`SELECT count(*) FROM lk_owners WHERE owner = ?`, string(tab.Owner())).Scan(&n))
		if n != 0 {
			t.Fatal("owner still registered")
		}
	})
	t.Run("namespace SQL in the same transaction", func(t *testing.T) {
		tab := openTable(t, "", Options{})
		if _, err := tab.DB().Exec(`CREATE TABLE ns(file INTEGER PRIMARY KEY, name TEXT)`); err != nil {
			t.Fatal(err)
		}
		f := newFile()
		err := update(t, tab, func(tx *Tx) error {
			if _, err := tx.SQL().ExecContext(tx.Context(), `INSERT INTO ns VALUES(?, 'a')`, int64(f)); err != nil {
				return err
			}
			if _, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: ShareAll}); err != nil {
				return err
			}
			return errors.New("abort")
		})
		if err == nil || err.Error() != "abort" {
			t.Fatal(err)
		}
		var n int
		must(t, tab.DB().QueryRow(`SELECT count(*) FROM ns`).Scan(&n))
		var hs []Handle
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(f); return err }))
		if n != 0 || len(hs) != 0 {
			t.Fatalf("rolled back transaction left %d rows, %d handles", n, len(hs))
		}
	})
}

// A rolled-back open leaves no trace, not even in the id→file hint.
func TestRolledBackOpen(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	var id HandleID
	err := update(t, tab, func(tx *Tx) error {
		h, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: ShareNone})
		id = h.ID
		if err != nil {
			return err
		}
		return errors.New("namespace refused")
	})
	if err == nil {
		t.Fatal("no error")
	}
	if _, ok := tab.handleFile(id); ok {
		t.Fatal("hint kept for a rolled-back handle")
	}
	if _, err := closeH(t, tab, id); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("close of rolled-back handle: %v", err)
	}
	mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareNone})
}

// A writer waiting for another owner's transaction gives up when its
// context ends, with the context's error; a cancelled context never starts.
func TestUpdateWaitsAndHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	b := openTable(t, path, Options{})
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.OpenHandle(OpenRequest{File: 1, Access: rd, Share: ShareAll}); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := b.Update(ctx, func(tx *Tx) error {
		_, err := tx.OpenHandle(OpenRequest{File: 1, Access: wr, Share: ShareAll})
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("while another owner writes: %v, want DeadlineExceeded", err)
	}
	close(release)
	must(t, <-done)
	// Once the writer is done, the same Update goes through.
	if _, err := open(t, b, OpenRequest{File: 1, Access: wr, Share: ShareAll}); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := b.Update(cctx, func(*Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

// Read transactions share at most maxReaders connections: more concurrent
// Views wait for one to come back (all of them finish), and a View that
// cannot get one before its context ends fails with the context's error.
func TestViewsShareReaderConnections(t *testing.T) {
	tab := openTable(t, "", Options{})
	ctx := context.Background()
	hold := make(chan struct{})
	var started sync.WaitGroup
	done := make(chan error, maxReaders)
	for range maxReaders {
		started.Add(1)
		go func() {
			done <- tab.View(ctx, func(tx *Tx) error {
				started.Done()
				<-hold
				_, err := tx.Handles(1)
				return err
			})
		}()
	}
	started.Wait()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := tab.View(short, func(*Tx) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("View with every reader busy: %v, want DeadlineExceeded", err)
	}
	// A writer is never short of a connection while readers are busy.
	if _, err := open(t, tab, OpenRequest{File: 1, Access: rd, Share: ShareAll}); err != nil {
		t.Fatalf("Update with every reader busy: %v", err)
	}
	close(hold)
	for range maxReaders {
		must(t, <-done)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*maxReaders)
	for range 4 * maxReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- tab.View(ctx, func(tx *Tx) error {
				// Holding the connection a while is the point: more
				// Views than connections must queue for one.
				time.Sleep(time.Millisecond)
				hs, err := tx.Handles(1)
				if err == nil && len(hs) != 1 {
					err = fmt.Errorf("%d handles on file 1, want 1", len(hs))
				}
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
}

// TestPeek: a Peek (and a PeekStatement, its one statement outside a
// transaction) reads the committed state, cannot change it, leaves no
// transaction open on the writer connection it borrowed, and never waits for
// a write transaction of its own process: while one runs it takes a reader
// connection. Each fn below runs one statement (Handles of a file whose
// handles are all this owner's).
func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		name string
		peek func(tab *Table, ctx context.Context, fn func(tx *Tx) error) error
	}{
		{"Peek", (*Table).Peek},
		{"PeekStatement", (*Table).PeekStatement},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := openTable(t, "", Options{})
			ctx := context.Background()
			h, err := open(t, tab, OpenRequest{File: 7, Access: rd, Share: ShareAll})
			must(t, err)
			err = tc.peek(tab, ctx, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && (len(hs) != 1 || hs[0].ID != h.ID) {
					t.Errorf("Handles in a peek: %+v, want the one handle %d", hs, h.ID)
				}
				return err
			})
			must(t, err)
			err = tc.peek(tab, ctx, func(tx *Tx) error {
				_, err := tx.OpenHandle(OpenRequest{File: 7, Access: rd, Share: ShareAll})
				return err
			})
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("OpenHandle in a peek: %v, want ErrInvalidParameter", err)
			}

			inWrite, release := make(chan struct{}), make(chan struct{})
			wrote := make(chan error, 1)
			go func() {
				wrote <- tab.Update(ctx, func(tx *Tx) error {
					if _, err := tx.CloseHandle(h.ID); err != nil {
						return err
					}
					close(inWrite)
					<-release
					return nil
				})
			}()
			<-inWrite
			short, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err = tc.peek(tab, short, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && len(hs) != 1 {
					t.Errorf("peek during a write sees %d handles, want the committed 1", len(hs))
				}
				return err
			})
			close(release)
			if err != nil {
				t.Fatalf("peek while a write transaction runs: %v", err)
			}
			must(t, <-wrote)
			must(t, tc.peek(tab, ctx, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && len(hs) != 0 {
					t.Errorf("peek after the close: %d handles, want 0", len(hs))
				}
				return err
			}))
		})
	}
}
