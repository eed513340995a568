package locks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSnapshotShowsEverything: a snapshot taken from outside (Inspect, no
// owner registered) lists the handles of a live owner and of a crashed one
// — the latter marked dead and not reaped by looking — with byte-range
// locks, the delete-pending mark and leases.
func TestSnapshotShowsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	held, leased, doomed, pend := newFile(), newFile(), newFile(), newFile()
	h := mustOpen(t, a, OpenRequest{File: held, Access: rd | AccessWrite, Share: ShareRead, ClientName: ClientName(ProtocolSession, "host"), ClientIP: "127.0.0.1"})
	must(t, a.Update(ctx, func(tx *Tx) error { return tx.Lock(h.ID, Range{Offset: 5, Length: 10}, LockExclusive) }))
	var leaseID string
	must(t, a.Update(ctx, func(tx *Tx) error {
		var err error
		leaseID, err = tx.Lease(LeaseRequest{File: leased, Action: LeaseAcquire})
		return err
	}))
	p := mustOpen(t, a, OpenRequest{File: pend, Access: AccessDelete, Share: ShareAll})
	must(t, a.Update(ctx, func(tx *Tx) error { return tx.Dispose(p.ID, true, Facts{}) }))
	dead, crash := holdingOwner(t, path, doomed, true)
	crash()
	// A frozen owner: its flock is held, its heartbeat deadline passed.
	frozen := openTable(t, path, Options{Host: "h1", Program: "blobshare session"})
	must(t, a.Update(ctx, func(tx *Tx) error {
		_, err := tx.exec(`UPDATE lk_owners SET expires = 1 WHERE owner = ?`, string(frozen.Owner()))
		return err
	}))

	var snap Snapshot
	must(t, Inspect(ctx, path, func(ctx context.Context, c *Conn) error {
		var err error
		snap, err = ReadSnapshot(ctx, c, path)
		return err
	}))
	ids := []HandleID{}
	for _, sh := range snap.Handles {
		ids = append(ids, sh.ID)
	}
	if want := []HandleID{h.ID, p.ID, dead.ID}; !slices.Equal(ids, want) {
		t.Fatalf("handles %v, want %v", ids, want)
	}
	if !snap.Handles[2].DeleteOnClose {
		t.Errorf("the crashed owner's delete-on-close handle: %+v", snap.Handles[2])
	}
	if st := snap.Files[pend]; !st.DeletePending {
		t.Errorf("the disposed file is not delete-pending: %+v", st)
	}
	if p, client := snap.Handles[0].Protocol(); p != ProtocolSession || client != "host" {
		t.Errorf("protocol of %q = %q, %q", snap.Handles[0].ClientName, p, client)
	}
	if o := snap.Owners[a.Owner()]; !o.Alive || !o.Registered || o.PID != os.Getpid() || o.Host != thisHost() ||
		o.Program != thisProgram() || o.Cause != CauseNone || !o.Expires.After(o.Started) {
		t.Errorf("live owner: %+v", o)
	}
	if o := snap.Owners[dead.Owner]; o.Alive || o.Cause != CauseFlockFree {
		t.Errorf("crashed owner: %+v, want dead by a free flock", o)
	}
	if o := snap.Owners[frozen.Owner()]; o.Alive || o.Cause != CauseHeartbeatExpired || o.Host != "h1" || o.Program != "blobshare session" {
		t.Errorf("frozen owner: %+v, want dead by an expired heartbeat", o)
	}
	if ls := snap.Locks[h.ID]; len(ls) != 1 || ls[0].Range != (Range{5, 10}) || ls[0].Kind != LockExclusive {
		t.Errorf("locks of %d: %+v", h.ID, ls)
	}
	if st := snap.Files[leased]; st.Lease.State != LeaseLeased || st.Lease.ID != leaseID {
		t.Errorf("leased file: %+v, want lease %s", st, leaseID)
	}
	if _, ok := snap.Files[held]; ok {
		t.Errorf("a file with neither lease nor pending delete is listed: %+v", snap.Files[held])
	}
	// Looking changed nothing: the crashed owner's handle is still stored.
	var n int
	must(t, a.View(ctx, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_handles WHERE owner = ?`, []any{string(dead.Owner)}, &n)
	}))
	if n != 1 {
		t.Errorf("%d rows of the crashed owner after the snapshot, want 1", n)
	}
}

// TestInspectMissingDatabase: no database is os.ErrNotExist, and Inspect
// creates none.
func TestInspectMissingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	err := Inspect(context.Background(), path, func(context.Context, *Conn) error { return nil })
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Inspect of a missing database: %v", err)
	}
}

// TestClientNameParts: a ClientName gives back its protocol, host and the
// program WithProgram recorded, whatever the program's name holds.
func TestClientNameParts(t *testing.T) {
	for _, tt := range []struct {
		name          string
		proto         Protocol
		host, program string
		pid           int
	}{
		{ClientName(ProtocolMount, "myhost"), ProtocolMount, "myhost", "", 0},
		{WithProgram(ClientName(ProtocolMount, "myhost"), "cat", 4711), ProtocolMount, "myhost", "cat", 4711},
		{WithProgram(ClientName(ProtocolMount, "myhost"), "Web Content[x]", 12), ProtocolMount, "myhost", "Web Content[x]", 12},
		{WithProgram(ClientName(ProtocolMount, "myhost"), "", 9), ProtocolMount, "myhost", "", 9},
		{ClientName(ProtocolSMB, "TESTPC"), ProtocolSMB, "TESTPC", "", 0},
		{ClientName(ProtocolSMB, ""), ProtocolSMB, "", "", 0},
		{"legacy name", "", "legacy name", "", 0},
		{"fuse:host oops[notapid]", ProtocolMount, "host oops[notapid]", "", 0},
	} {
		h := Handle{ClientName: tt.name}
		p, _ := h.Protocol()
		prog, pid := h.Program()
		if p != tt.proto || h.Host() != tt.host || prog != tt.program || pid != tt.pid {
			t.Errorf("%q: protocol %q host %q program %q pid %d; want %q %q %q %d",
				tt.name, p, h.Host(), prog, pid, tt.proto, tt.host, tt.program, tt.pid)
		}
	}
}
