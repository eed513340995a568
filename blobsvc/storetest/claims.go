package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/blobsvc"
)

// BlobClaims: two stores on one database, each with its own owner
// session (two processes). A claim held by a live owner is refused to
// the other and to its own owner again, naming the holder; other blobs
// and the container have claims of their own; a released claim is free
// at once; a dead owner's is taken over (naming it), and the dead
// owner's store, waking, writes nothing of that blob any more while the
// blobs it holds no claim of stay writable.
func testBlobClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	pa := open(t)
	a := pa.Store
	pb := open(t)
	b := pb.Store
	if err := a.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}

	ca, err := a.ClaimBlob(ctx, "box", "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []blobsvc.Store{b, a} {
		var held *blobsvc.ClaimHeldError
		if _, err := s.ClaimBlob(ctx, "box", "x"); !errors.As(err, &held) || !errors.Is(err, blobsvc.ErrClaimHeld) {
			t.Fatalf("claim of a held blob: %v, want *ClaimHeldError", err)
		}
		if held.Owner != pa.Owner {
			t.Errorf("refusal names owner %s, want %s", held.Owner, pa.Owner)
		}
	}
	cy, err := b.ClaimBlob(ctx, "box", "y")
	if err != nil {
		t.Fatalf("claim of another blob: %v", err)
	}
	cbox, err := b.ClaimBlob(ctx, "box", "")
	if err != nil {
		t.Fatalf("claim of the container beside its blobs': %v", err)
	}
	if err := a.ReleaseClaim(ctx, ca); err != nil {
		t.Fatal(err)
	}
	cx, err := b.ClaimBlob(ctx, "box", "x")
	if err != nil || cx.From != "" {
		t.Fatalf("claim after release: %+v %v", cx, err)
	}
	if err := b.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "b1"}, false); err != nil {
		t.Fatalf("write under the claim: %v", err)
	}

	// B's process dies holding x, y and the container: A takes them over.
	pb.Kill()
	for _, name := range []string{"x", "y", ""} {
		c, err := a.ClaimBlob(ctx, "box", name)
		if err != nil {
			t.Fatalf("claim of %q held by a dead owner: %v", name, err)
		}
		if c.From != pb.Owner {
			t.Errorf("takeover of %q names %q, want the dead owner %s", name, c.From, pb.Owner)
		}
	}

	// B, still running as a zombie, is fenced on what it held.
	if err := a.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "y", ETag: "a1"}, false); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		do   func() error
	}{
		{"PutBlob", func() error { return b.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "late"}, false) }},
		{"PutIntent", func() error { return b.PutIntent(ctx, blobsvc.Blob{Container: "box", Name: "x"}, false) }},
		{"DeleteIntent", func() error { return b.DeleteIntent(ctx, "box", "y") }},
		{"DeleteBlob", func() error { return b.DeleteBlob(ctx, "box", "y") }},
		{"DeleteSnapshot", func() error { return b.DeleteSnapshot(ctx, "box", "y", "2020") }},
		{"SoftDelete", func() error {
			return b.SoftDelete(ctx, []blobsvc.Blob{{Container: "box", Name: "y"}}, nil)
		}},
		{"UpdateContainer", func() error { return b.UpdateContainer(ctx, blobsvc.Container{Name: "box", ETag: "late"}) }},
	} {
		if err := w.do(); !errors.Is(err, blobsvc.ErrClaimLost) {
			t.Errorf("%s under a claim taken over: %v, want ErrClaimLost", w.name, err)
		}
	}
	if got, err := a.Blob(ctx, "box", "x"); err != nil || got.ETag != "b1" {
		t.Errorf("x after the fenced writes: %+v %v, want ETag b1", got, err)
	}
	if got, err := a.Blob(ctx, "box", "y"); err != nil || got.ETag != "a1" {
		t.Errorf("y after the fenced writes: %+v %v, want ETag a1", got, err)
	}
	if c, err := a.Container(ctx, "box"); err != nil || c.ETag == "late" {
		t.Errorf("container after a fenced update: %+v %v", c, err)
	}
	// A blob B holds no claim of is written as one transaction.
	if err := b.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "z"}, false); err != nil {
		t.Errorf("write of an unclaimed blob: %v", err)
	}
	// B's releases do not free what A took over.
	for _, c := range []blobsvc.Claim{cx, cy, cbox} {
		if err := b.ReleaseClaim(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.ClaimBlob(ctx, "box", "x"); !errors.Is(err, blobsvc.ErrClaimHeld) {
		t.Errorf("claim after a stale release: %v, want ErrClaimHeld (A holds it)", err)
	}
}

// BlobClaimRaces: claimers in several stores (processes) race for
// one free claim, then for one a dead owner left, round after round:
// exactly one wins each time.
func testBlobClaimRaces(t *testing.T, open Opener) {
	ctx := context.Background()
	const procs, perProc, rounds = 3, 4, 20
	stores := make([]blobsvc.Store, procs)
	for i := range stores {
		stores[i] = open(t).Store
	}
	pdead := open(t)
	dead := pdead.Store
	for round := range rounds {
		takeover := round%2 == 1
		if takeover {
			if _, err := dead.ClaimBlob(ctx, "box", "race"); err != nil {
				t.Fatal(err)
			}
		}
		if takeover && round == 1 {
			pdead.Kill()
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []blobsvc.Claim
		start := make(chan struct{})
		for i := range procs * perProc {
			s := stores[i%procs]
			wg.Go(func() {
				<-start
				c, err := s.ClaimBlob(ctx, "box", "race")
				if errors.Is(err, blobsvc.ErrClaimHeld) {
					return
				}
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				won = append(won, c)
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d (takeover %v): %d claimers won, want 1", round, takeover, len(won))
		}
		if takeover && won[0].From != pdead.Owner {
			t.Errorf("round %d: the winner took over from %q, want the dead %s", round, won[0].From, pdead.Owner)
		}
		// The winner's store releases it (any store of its owner would
		// do; the token names it).
		for _, s := range stores {
			if err := s.ReleaseClaim(ctx, won[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ModifyBlob: ModifyBlob and ModifyContainer decide and write in one
// transaction: raced from three stores (processes), a change conditioned
// on the row's ETag wins exactly once per round; fn is not called while
// the blob's claim is held or it has a commit intent (ErrClaimHeld), nor
// for a missing row; an error of fn writes nothing.
func testModifyBlob(t *testing.T, open Opener) {
	ctx := context.Background()
	stores := make([]blobsvc.Store, 3)
	for i := range stores {
		stores[i] = open(t).Store
	}
	s := stores[0]
	if err := s.CreateContainer(ctx, blobsvc.Container{Name: "box", ETag: "c0"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "f", ETag: "e0"}, false); err != nil {
		t.Fatal(err)
	}
	errStale := errors.New("stale ETag")
	for round := range 10 {
		etag := fmt.Sprint("e", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		start := make(chan struct{})
		for i := range 9 {
			st := stores[i%3]
			wg.Go(func() {
				<-start
				_, err := st.ModifyBlob(ctx, "box", "f", func(b *blobsvc.Blob) error {
					if b.ETag != etag {
						return errStale
					}
					b.ETag = fmt.Sprint("e", round+1)
					return nil
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, errStale):
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins != 1 {
			t.Fatalf("round %d: %d conditioned changes won, want 1", round, wins)
		}
	}

	never := func(*blobsvc.Blob) error { t.Error("fn called"); return nil }
	c, err := stores[1].ClaimBlob(ctx, "box", "f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModifyBlob(ctx, "box", "f", never); !errors.Is(err, blobsvc.ErrClaimHeld) {
		t.Errorf("ModifyBlob of a claimed blob: %v, want ErrClaimHeld", err)
	}
	if err := stores[1].ReleaseClaim(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIntent(ctx, blobsvc.Blob{Container: "box", Name: "f"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModifyBlob(ctx, "box", "f", never); !errors.Is(err, blobsvc.ErrClaimHeld) {
		t.Errorf("ModifyBlob of a blob with an intent: %v, want ErrClaimHeld", err)
	}
	if err := s.DeleteIntent(ctx, "box", "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ModifyBlob(ctx, "box", "missing", never); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Errorf("ModifyBlob of a missing blob: %v, want ErrBlobNotFound", err)
	}
	if _, err := s.ModifyBlob(ctx, "box", "f", func(b *blobsvc.Blob) error { b.ETag = "lost"; return errStale }); !errors.Is(err, errStale) {
		t.Errorf("fn's error: %v", err)
	}
	if b, err := s.Blob(ctx, "box", "f"); err != nil || b.ETag != "e10" {
		t.Errorf("after a failed fn: %+v %v, want ETag e10", b, err)
	}

	if cc, err := s.ClaimBlob(ctx, "box", ""); err != nil {
		t.Fatal(err)
	} else {
		if _, err := stores[2].ModifyContainer(ctx, "box", func(*blobsvc.Container) error { t.Error("fn called"); return nil }); !errors.Is(err, blobsvc.ErrClaimHeld) {
			t.Errorf("ModifyContainer of a claimed container: %v, want ErrClaimHeld", err)
		}
		if err := s.ReleaseClaim(ctx, cc); err != nil {
			t.Fatal(err)
		}
	}
	got, err := stores[2].ModifyContainer(ctx, "box", func(c *blobsvc.Container) error { c.ETag = "c1"; return nil })
	if err != nil || got.ETag != "c1" {
		t.Fatalf("ModifyContainer: %+v %v", got, err)
	}
	if c, err := s.Container(ctx, "box"); err != nil || c.ETag != "c1" {
		t.Errorf("container after ModifyContainer: %+v %v", c, err)
	}
	if _, err := s.ModifyContainer(ctx, "nobox", func(*blobsvc.Container) error { return nil }); !errors.Is(err, blobsvc.ErrContainerNotFound) {
		t.Errorf("ModifyContainer of a missing container: %v", err)
	}
}

// ModifyBlobAgainstClaims: a ModifyBlob and a writer under the blob's
// claim (ClaimBlob, read the row, PutBlob, ReleaseClaim: what the
// service's lockBlob does), in other processes, both conditioned on the
// row's ETag, raced round after round: exactly one wins each round, so
// neither ever decides on a row the other is about to replace (on a
// server engine ModifyBlob takes the claim's key in its transaction).
func testModifyAgainstClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	modifier, claimer := open(t).Store, open(t).Store
	if err := modifier.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	if err := modifier.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "f", ETag: "e0"}, false); err != nil {
		t.Fatal(err)
	}
	errStale := errors.New("stale ETag")
	const rounds = 30
	for round := range rounds {
		etag, next := fmt.Sprint("e", round), fmt.Sprint("e", round+1)
		var wins []string
		var mu sync.Mutex
		won := func(who string) {
			mu.Lock()
			defer mu.Unlock()
			wins = append(wins, who)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			for {
				_, err := modifier.ModifyBlob(ctx, "box", "f", func(b *blobsvc.Blob) error {
					if b.ETag != etag {
						return errStale
					}
					b.ETag = next
					return nil
				})
				switch {
				case err == nil:
					won("modify")
				case errors.Is(err, blobsvc.ErrClaimHeld):
					continue // the service would take the claim; trying again is the same race
				case !errors.Is(err, errStale):
					t.Errorf("round %d: ModifyBlob: %v", round, err)
				}
				return
			}
		})
		wg.Go(func() {
			<-start
			var c blobsvc.Claim
			for {
				var err error
				if c, err = claimer.ClaimBlob(ctx, "box", "f"); err == nil {
					break
				}
				if !errors.Is(err, blobsvc.ErrClaimHeld) {
					t.Errorf("round %d: claim: %v", round, err)
					return
				}
			}
			defer func() {
				if err := claimer.ReleaseClaim(ctx, c); err != nil {
					t.Errorf("round %d: release: %v", round, err)
				}
			}()
			b, err := claimer.Blob(ctx, "box", "f")
			if err != nil {
				t.Errorf("round %d: read under the claim: %v", round, err)
				return
			}
			if b.ETag != etag {
				return
			}
			b.ETag = next
			if err := claimer.PutBlob(ctx, b, false); err != nil {
				t.Errorf("round %d: write under the claim: %v", round, err)
				return
			}
			won("claim")
		})
		close(start)
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("round %d: winners %q, want exactly one", round, wins)
		}
	}
	if b, err := claimer.Blob(ctx, "box", "f"); err != nil || b.ETag != fmt.Sprint("e", rounds) {
		t.Errorf("after %d rounds: %+v %v", rounds, b, err)
	}
}
