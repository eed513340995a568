package locks

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// fakeClock is a database clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The one liveness decision, case by case.
func TestJudgeOwner(t *testing.T) {
	now := time.Unix(1000, 0)
	held := func() (bool, error) { return true, nil }
	free := func() (bool, error) { return false, nil }
	failing := func() (bool, error) { return true, errors.New("EIO") }
	for _, tc := range []struct {
		name    string
		row     ownerRow
		found   bool
		probe   func() (bool, error)
		want    DeathCause
		probeEr bool
	}{
		{"no row", ownerRow{}, false, held, CauseUnregistered, false},
		{"same host, flock held, deadline ahead", ownerRow{"h", now.Add(time.Second).UnixNano()}, true, held, CauseNone, false},
		{"same host, flock free (killed)", ownerRow{"h", now.Add(time.Second).UnixNano()}, true, free, CauseFlockFree, false},
		{"same host, flock held, deadline passed (frozen)", ownerRow{"h", now.UnixNano()}, true, held, CauseHeartbeatExpired, false},
		{"other host, deadline ahead: its flock is not probed", ownerRow{"other", now.Add(time.Second).UnixNano()}, true, free, CauseNone, false},
		{"other host, deadline passed", ownerRow{"other", now.Add(-time.Second).UnixNano()}, true, held, CauseHeartbeatExpired, false},
		{"row from before sessions: flock only", ownerRow{"", 0}, true, held, CauseNone, false},
		{"row from before sessions, flock free", ownerRow{"", 0}, true, free, CauseFlockFree, false},
		{"probe fails: alive", ownerRow{"h", now.Add(time.Second).UnixNano()}, true, failing, CauseNone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := judgeOwner(tc.row, tc.found, now, "h", tc.probe)
			var pe *probeError
			if got != tc.want || (err != nil) != tc.probeEr || (err != nil && !errors.As(err, &pe)) {
				t.Fatalf("judgeOwner = %q, %v; want %q (probe error %v)", got, err, tc.want, tc.probeEr)
			}
		})
	}
}

// An owner whose heartbeat lapsed (here: the database's clock moved past
// its deadline; both Tables are in this process, so their flocks hold each
// other alive and only the heartbeat can tell) is reaped by another
// owner's decision: its share-none handle goes and its delete-on-close
// completes. The lapsed Table stops deciding — its next write transaction
// fails with ErrSessionLost and changes nothing — and registers anew: the
// next decision succeeds as a new owner, and the old handles are gone.
// An owner that keeps beating stays alive past its first deadline.
func TestSessionExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	path := filepath.Join(t.TempDir(), "locks.db")
	rm := &removeLog{}
	// An interval of an hour: no heartbeat runs unless the test beats.
	opts := Options{Remove: rm.remove, SessionClock: clock.now, HeartbeatInterval: time.Hour, SessionExpiry: 2 * time.Hour}
	a := openTable(t, path, opts)
	b := openTable(t, path, opts)
	ctx := t.Context()

	ha := mustOpen(t, a, OpenRequest{File: 1, Access: rd | wr | AccessDelete, Share: ShareNone, DeleteOnClose: true})
	hb := mustOpen(t, b, OpenRequest{File: 2, Access: rd, Share: ShareNone})

	// a beats at +1h (deadline +3h); b does not (deadline +2h). (A
	// decision past the local deadline, one interval before the stored
	// one, renews too.)
	clock.add(time.Hour)
	must(t, a.heartbeat(ctx))
	clock.add(90 * time.Minute) // +2.5h: b expired, a not
	oldB := b.Owner()
	if _, err := open(t, a, OpenRequest{File: 2, Access: rd, Share: ShareAll}); err != nil {
		t.Fatalf("open against an expired owner's handle: %v (not reaped)", err)
	}
	var n int
	must(t, a.View(ctx, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_owners WHERE owner = ?`, []any{string(oldB)}, &n)
	}))
	if n != 0 {
		t.Fatalf("expired owner still registered")
	}

	// b wakes up: its decision fails and leaves nothing behind.
	_, err := open(t, b, OpenRequest{File: 3, Access: rd, Share: ShareNone})
	if !errors.Is(err, ErrSessionLost) {
		t.Fatalf("decision of a reaped owner: %v, want ErrSessionLost", err)
	}
	if !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("decision of a reaped owner: %v is not meta.ErrUnavailable: front ends would answer it as a 500", err)
	}
	must(t, a.View(ctx, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_handles WHERE owner = ? OR file = 3`, []any{string(oldB)}, &n)
	}))
	if n != 0 {
		t.Fatalf("%d handles of the reaped owner or its refused decision", n)
	}
	if b.Owner() == oldB {
		t.Fatal("b did not register as a new owner")
	}
	// a kept beating: alive past its first deadline.
	if _, err := open(t, b, OpenRequest{File: 1, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against a beating owner: %v, want a sharing violation", err)
	}
	// Registered again: it decides, as its new owner; the old handle is gone.
	h3 := mustOpen(t, b, OpenRequest{File: 3, Access: rd, Share: ShareNone})
	if h3.Owner != b.Owner() {
		t.Fatalf("new handle owned by %s, want %s", h3.Owner, b.Owner())
	}
	if _, err := closeH(t, b, hb.ID); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("close of a handle of the lost session: %v, want ErrHandleClosed", err)
	}

	// a's deadline (+4.5h: its decision at +2.5h renewed it, past its
	// local deadline) passes while b's holds: b reaps a by its decision,
	// and a's delete-on-close completes.
	clock.add(50 * time.Minute) // +3h20m
	must(t, b.heartbeat(ctx))   // b: +5h20m
	clock.add(80 * time.Minute) // +4h40m
	if _, err := open(t, b, OpenRequest{File: 1, Access: rd, Share: ShareAll}); err != nil && !errors.Is(err, ErrDeletePending) {
		t.Fatalf("open after a's expiry: %v", err)
	}
	if got := rm.removed(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("removed %v, want [1] (the expired owner's delete-on-close)", got)
	}
	if _, err := closeH(t, a, ha.ID); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("a after its expiry: %v, want ErrSessionLost", err)
	}
	if _, err := closeH(t, a, ha.ID); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("a registered again, old handle: %v, want ErrHandleClosed", err)
	}
}

// A session found lost by the heartbeat (not by a decision) fences the
// Table as well: the next decision fails once, then it decides again.
func TestSessionLostByHeartbeat(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	path := filepath.Join(t.TempDir(), "locks.db")
	opts := Options{SessionClock: clock.now, HeartbeatInterval: time.Hour, SessionExpiry: 2 * time.Hour}
	a := openTable(t, path, opts)
	b := openTable(t, path, opts)
	ctx := t.Context()
	clock.add(90 * time.Minute)
	must(t, b.heartbeat(ctx)) // b's deadline: +3.5h
	clock.add(90 * time.Minute)
	must(t, a.heartbeat(ctx)) // renews nothing: a's session expired at +2h
	if _, err := b.ReapDeadOwners(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, a, OpenRequest{File: 1, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("first decision after the heartbeat found the session lost: %v", err)
	}
	mustOpen(t, a, OpenRequest{File: 1, Access: rd, Share: ShareAll})
}

// A database whose lock tables are at version 2 (before sessions) opens:
// migration 3 adds the session columns, an owner row of that build keeps
// no deadline and is judged by its flock alone.
func TestSchemaMigrationSessions(t *testing.T) {
	const v2 = `CREATE TABLE lk_owners (owner TEXT PRIMARY KEY, pid INTEGER NOT NULL, started INTEGER NOT NULL);
CREATE TABLE lk_handles (file INTEGER NOT NULL, id INTEGER NOT NULL, owner TEXT NOT NULL, access INTEGER NOT NULL, share INTEGER NOT NULL,
	open_share INTEGER NOT NULL, delete_on_close INTEGER NOT NULL, session INTEGER NOT NULL, client_name TEXT NOT NULL,
	client_ip TEXT NOT NULL, open_time INTEGER NOT NULL, PRIMARY KEY (file, id)) WITHOUT ROWID;
CREATE TABLE lk_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE lk_files (file INTEGER PRIMARY KEY, delete_pending INTEGER NOT NULL DEFAULT 0, lease_state INTEGER NOT NULL DEFAULT 0, lease_id TEXT NOT NULL DEFAULT '');
CREATE TABLE lk_locks (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, handle INTEGER NOT NULL, lkey INTEGER NOT NULL, off INTEGER NOT NULL,
	len INTEGER NOT NULL, kind INTEGER NOT NULL, posix INTEGER NOT NULL);
CREATE INDEX lk_locks_file ON lk_locks(file, handle);
INSERT INTO lk_meta(name, value) VALUES('schema', 2);
INSERT INTO lk_owners(owner, pid, started) VALUES('old-build', 1, 0);
INSERT INTO lk_handles VALUES(5, 1, 'old-build', 1, 0, 0, 0, 0, '', '', 0);`
	dir := t.TempDir()
	path := filepath.Join(dir, "blobshare.db")
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	_, err = db.Exec(v2)
	must(t, err)
	must(t, db.Close())
	// The old build's owner file is held (by this process: alive).
	oldLock, err := lockOwnerFile(ownersDir(path), "old-build")
	must(t, err)
	tab := openTable(t, path, Options{})
	if _, err := open(t, tab, OpenRequest{File: 5, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against the old build's live owner: %v", err)
	}
	var version int64
	must(t, tab.View(t.Context(), func(tx *Tx) error {
		return tx.queryRow(`SELECT value FROM lk_meta WHERE name = 'schema'`, nil, &version)
	}))
	if version != SchemaVersion {
		t.Fatalf("version %d after migration, want %d", version, SchemaVersion)
	}
	for _, table := range []string{"lk_owners", "lk_opcache", "lk_smbleases", "lk_breaks", "lk_durable"} {
		assertSameColumns(t, path, table)
	}
	must(t, oldLock.Release()) // the old build's process dies
	mustOpen(t, tab, OpenRequest{File: 5, Access: rd, Share: ShareAll})
}

// assertSameColumns compares table's columns in the migrated database at
// path with those a fresh database gets.
func assertSameColumns(t *testing.T, path, table string) {
	t.Helper()
	cols := func(p string) string {
		db, err := sql.Open("sqlite", "file:"+p)
		must(t, err)
		defer db.Close()
		rows, err := db.Query(`SELECT name, type, "notnull", coalesce(dflt_value, '') FROM pragma_table_info(?) ORDER BY cid`, table)
		must(t, err)
		defer rows.Close()
		var out string
		for rows.Next() {
			var n, ty, d string
			var nn int
			must(t, rows.Scan(&n, &ty, &nn, &d))
			out += n + " " + ty + " " + strconv.Itoa(nn) + " " + d + "; "
		}
		must(t, rows.Err())
		return out
	}
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	tab, err := Open(context.Background(), fresh, Options{})
	must(t, err)
	must(t, tab.Close(context.Background()))
	if got, want := cols(path), cols(fresh); got != want {
		t.Fatalf("%s after migration:\n%s\nfresh:\n%s", table, got, want)
	}
}

// An owner registered from another host has no lock file here: only its
// heartbeat deadline tells. While the deadline is ahead its share-none
// handle refuses opens (no flock probe can call it dead); once it has
// passed, the next conflicting decision reaps it.
func TestOwnerOnAnotherHost(t *testing.T) {
	tab := openTable(t, "", Options{})
	far := time.Now().Add(time.Hour).UnixNano()
	must(t, update(t, tab, func(tx *Tx) error {
		if _, err := tx.exec(`INSERT INTO lk_owners(owner, pid, started, host, program, expires) VALUES('node-b', 42, 0, 'other-host', 'blobshare serve', ?)`, far); err != nil {
			return err
		}
		_, err := tx.exec(`INSERT INTO lk_handles VALUES(9, 999999, 'node-b', 1, 0, 0, 0, 0, '', '', 0)`)
		return err
	}))
	if _, err := open(t, tab, OpenRequest{File: 9, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against a live owner of another host: %v, want a sharing violation", err)
	}
	if n, err := tab.ReapDeadOwners(t.Context()); err != nil || n != 0 {
		t.Fatalf("reaped %d, %v: a live owner of another host", n, err)
	}
	must(t, update(t, tab, func(tx *Tx) error {
		_, err := tx.exec(`UPDATE lk_owners SET expires = 1 WHERE owner = 'node-b'`)
		return err
	}))
	if _, err := open(t, tab, OpenRequest{File: 9, Access: rd, Share: ShareAll}); err != nil {
		t.Fatalf("open after the other host's owner expired: %v", err)
	}
}
