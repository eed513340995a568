package locks

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDurableOpens: a durable open is a handle like any other, with a
// record of its durability. Disconnected, it keeps blocking (share mode)
// and can be reconnected once, by its owner only; a break that needs an
// acknowledgment closes it in the deciding transaction (its client cannot
// acknowledge) and the requester proceeds without waiting; a break that
// needs none leaves it open; while connected the same break is sent and
// waited for. Its record goes with the handle (close, Force Close, the
// owner's death).
func TestDurableOpens(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	path := t.TempDir() + "/db"
	tab := openTable(t, path, Options{Now: func() time.Time { return now }})
	other := openTable(t, path, Options{Now: func() time.Time { return now }})
	rw := AccessRead | AccessWrite
	d := Durable{Version: 2, CreateGuid: [16]byte{1}, ClientGuid: [16]byte{2}, Timeout: time.Minute}

	// durable opens file with a batch oplock (granted) and makes it
	// durable.
	durable := func(file FileID, share ShareMode) Handle { return durableOn(t, tab, file, share, d) }
	disconnect := func(file FileID, h Handle) { disconnectOn(t, tab, file, h, now) }
	reconnect := func(tab *Table, file FileID, h Handle) error {
		return update(t, tab, func(tx *Tx) error { _, err := tx.ReconnectDurable(file, h.ID); return err })
	}
	durableOf := func(file FileID, h Handle) (DurableOpen, bool) {
		var out DurableOpen
		var ok bool
		must(t, view(t, tab, func(tx *Tx) error {
			var err error
			out, ok, err = tx.DurableOf(file, h.ID)
			return err
		}))
		return out, ok
	}

	// Connected: a reconnect names nothing; the record says what was asked.
	h := durable(1, ShareRead)
	if err := reconnect(tab, 1, h); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("reconnect of a connected open: %v, want ErrHandleClosed", err)
	}
	if got, ok := durableOf(1, h); !ok || got.Durable.CreateGuid != d.CreateGuid || got.Timeout != time.Minute || !got.Disconnected.IsZero() {
		t.Fatalf("record %+v %v", got, ok)
	}
	disconnect(1, h)
	if got, _ := durableOf(1, h); !got.Disconnected.Equal(now) || !got.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("disconnected record %+v", got)
	}
	// Another process sees it disconnected (`blobshare status` reads this).
	must(t, Inspect(ctx, path, func(ctx context.Context, c *Conn) error {
		snap, err := ReadSnapshot(ctx, c, path)
		if err == nil {
			if got, ok := snap.Durable[h.ID]; !ok || got.File != 1 || !got.Disconnected.Equal(now) || got.Version != 2 {
				t.Errorf("snapshot's durable record %+v %v", got, ok)
			}
		}
		return err
	}))
	// Disconnected, it blocks: a write open of another process.
	if _, err := open(t, other, OpenRequest{File: 1, Access: rw, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
		t.Fatalf("open against a disconnected durable open: %v", err)
	}
	if err := reconnect(other, 1, h); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("reconnect by another owner: %v, want ErrHandleClosed", err)
	}
	if err := reconnect(tab, 1, h); err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	if err := reconnect(tab, 1, h); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("second reconnect: %v, want ErrHandleClosed", err)
	}

	// Connected, another open's break is sent and waited for.
	second := CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: ShareAll}
	if r := decideCache(t, tab, CacheCall{File: 1, Req: second}); !r.Wait || len(r.Breaks) != 1 {
		t.Fatalf("break of a connected durable open: %+v, want a wait", r)
	}
	takeBreaks(t, tab)
	// Disconnected with the break outstanding: the waiter decides again
	// and the open is closed, nothing left to wait for.
	disconnect(1, h)
	if r := decideCache(t, tab, CacheCall{File: 1, Req: second}); r.Wait {
		t.Fatalf("decision against a disconnected open with a break outstanding: %+v, want no wait", r)
	}
	if _, ok := durableOf(1, h); ok {
		t.Fatal("the disconnected open survived the break it could not answer")
	}
	if err := reconnect(tab, 1, h); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("reconnect after it was closed: %v", err)
	}
	mustOpen(t, other, OpenRequest{File: 1, Access: rw, Share: ShareAll})

	// A new break needing an acknowledgment: closed at once, in the
	// deciding transaction of another process.
	h2 := durable(2, ShareRead)
	disconnect(2, h2)
	r := decideCache(t, other, CacheCall{File: 2, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rw, Share: ShareAll}})
	if r.Wait {
		t.Fatalf("%+v, want no wait", r)
	}
	if hs := handlesOf(t, tab, 2); len(hs) != 0 {
		t.Fatalf("handles left: %+v", hs)
	}

	// A break needing none (level II to none on a write) leaves it.
	h3 := durable(3, ShareRead|ShareWrite)
	if r := decideCache(t, other, CacheCall{File: 3, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: ShareAll}}); !r.Wait {
		t.Fatalf("%+v, want a wait for batch → level II", r)
	}
	must(t, update(t, tab, func(tx *Tx) error { _, err := tx.AckOplockBreak(3, h3.ID, OplockLevelII); return err }))
	disconnect(3, h3)
	w := mustOpen(t, other, OpenRequest{File: 3, Access: rw, Share: ShareAll})
	if r := decideCache(t, other, CacheCall{File: 3, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpWrite, Handle: w.ID}}); r.Wait {
		t.Fatalf("write: %+v", r)
	}
	if _, ok := durableOf(3, h3); !ok {
		t.Fatal("a break needing no acknowledgment closed the disconnected open")
	}
	// Force Close takes it, record and all.
	must(t, update(t, other, func(tx *Tx) error {
		ok, err := tx.ForceClose(h3.ID)
		if !ok {
			t.Error("Force Close found nothing")
		}
		return err
	}))
	var n int
	must(t, view(t, tab, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_durable WHERE file = 3`, nil, &n)
	}))
	if n != 0 {
		t.Fatalf("%d durable records left after Force Close", n)
	}

	// The owner dies: its durable opens go with it (not persistent).
	dying, err := Open(ctx, path, Options{Now: func() time.Time { return now }})
	must(t, err)
	h4 := durableOn(t, dying, 4, 0, d)
	disconnectOn(t, dying, 4, h4, now)
	crash(t, dying) // drop the flock and the file, keep the rows
	if _, err := other.ReapDeadOwners(ctx); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, other, OpenRequest{File: 4, Access: rw, Share: ShareAll})
	must(t, view(t, other, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM lk_durable`, nil, &n)
	}))
	if n != 0 {
		t.Fatalf("%d durable records left after the owner died", n)
	}
}

func handlesOf(t *testing.T, tab *Table, file FileID) []Handle {
	t.Helper()
	var hs []Handle
	must(t, view(t, tab, func(tx *Tx) error {
		var err error
		hs, err = tx.Handles(file)
		return err
	}))
	return hs
}

// durableOn opens file on tab with a batch oplock (granted) and makes it
// durable.
func durableOn(t *testing.T, tab *Table, file FileID, share ShareMode, d Durable) Handle {
	t.Helper()
	rw := AccessRead | AccessWrite
	h := mustOpen(t, tab, OpenRequest{File: file, Access: rw, Share: share})
	r := decideCache(t, tab, CacheCall{File: file, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rw, Share: share, Handle: h.ID, RequestOplock: OplockBatch}})
	if r.GrantOplock != OplockBatch {
		t.Fatalf("grant %+v, want batch", r)
	}
	must(t, update(t, tab, func(tx *Tx) error { return tx.MakeDurable(file, h.ID, d) }))
	return h
}

// disconnectOn marks durable h disconnected at now.
func disconnectOn(t *testing.T, tab *Table, file FileID, h Handle, now time.Time) {
	t.Helper()
	must(t, update(t, tab, func(tx *Tx) error {
		exp, err := tx.DisconnectDurable(file, h.ID, now)
		if err == nil && !exp.Equal(now.Add(time.Minute)) {
			t.Errorf("expires %v, want now + the timeout", exp)
		}
		return err
	}))
}
