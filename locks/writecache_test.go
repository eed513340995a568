package locks

import (
	"context"
	"testing"
	"time"
)

// TestWriteBreakable: a write to a file is worth a caching decision only
// while an oplock or lease on that file still caches and is not already
// breaking to none: not for an uncached open or another file's lease, yes
// for an RH lease and a level II oplock, no longer once the lease's break
// to none is out (it only waits for its acknowledgment) nor after the
// level II oplock went to none at once.
func TestWriteBreakable(t *testing.T) {
	ctx := context.Background()
	tab := openTable(t, "", Options{Now: func() time.Time { return time.Unix(1000, 0) }})
	const file, other = FileID(7), FileID(8)
	share := ShareRead | ShareWrite
	breakable := func(f FileID) bool {
		t.Helper()
		ok, err := tab.WriteBreakable(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	plain := mustOpen(t, tab, OpenRequest{File: file, Access: AccessRead | AccessWrite, Share: share})
	if breakable(file) {
		t.Fatal("an uncached open: breakable")
	}
	lh := mustOpen(t, tab, OpenRequest{File: file, Access: AccessRead, Share: share})
	id := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{2}}
	if r := decideCache(t, tab, CacheCall{File: file, LeaseVersion: 2, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen,
		Access: AccessRead, Share: share, Handle: lh.ID, Lease: &id, RequestLease: CacheRH}}); r.Grant != CacheRH {
		t.Fatalf("lease grant %+v, want RH", r)
	}
	oh := mustOpen(t, tab, OpenRequest{File: other, Access: AccessRead, Share: share})
	if r := decideCache(t, tab, CacheCall{File: other, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen,
		Access: AccessRead, Share: share, Handle: oh.ID, RequestOplock: OplockLevelII}}); r.GrantOplock != OplockLevelII {
		t.Fatalf("oplock grant %+v, want level II", r)
	}
	if !breakable(file) || !breakable(other) {
		t.Fatal("an RH lease, a level II oplock: not breakable")
	}
	write := func(f FileID, h HandleID) CacheResult {
		return decideCache(t, tab, CacheCall{File: f, Req: CacheRequest{Who: RequesterMount, Kind: CacheOpWrite, Handle: h}})
	}
	if r := write(file, plain.ID); r.Wait || len(r.Breaks) != 1 || r.Breaks[0].To != CacheNone || !r.Breaks[0].AckRequired {
		t.Fatalf("write against RH: %+v, want one break to none, acknowledged later, no wait", r)
	}
	if breakable(file) {
		t.Fatal("a lease breaking to none: still breakable")
	}
	if r := write(other, 0); r.Wait || len(r.Breaks) != 1 || r.Breaks[0].AckRequired {
		t.Fatalf("write against level II: %+v, want one break to none at once", r)
	}
	if breakable(other) {
		t.Fatal("a level II oplock broken to none: still breakable")
	}
}

// BenchmarkWriteBreakable: the cost a write through the mount or session
// pays when nothing on its file is cached (one read statement).
func BenchmarkWriteBreakable(b *testing.B) {
	tab := openTable(b, "", Options{})
	ctx := context.Background()
	for b.Loop() {
		if ok, err := tab.WriteBreakable(ctx, 7); err != nil || ok {
			b.Fatal(ok, err)
		}
	}
}
