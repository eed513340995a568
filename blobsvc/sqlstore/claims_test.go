package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/locks"
)

// openTable opens a lock table in dir: one owner session, as one process.
func openTable(t *testing.T, dir string) *locks.Table {
	t.Helper()
	tbl, err := locks.Open(context.Background(), filepath.Join(dir, "blobshare.db"), locks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close(context.Background()) })
	return tbl
}

func openAt(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ownedAt opens the store at path as a process of its own: with the owner
// session of a new lock table in dir.
func ownedAt(t *testing.T, dir string) (*sqlstore.Store, *locks.Table) {
	t.Helper()
	tbl := openTable(t, dir)
	s := openAt(t, filepath.Join(dir, sqlstore.FileName))
	s.UseOwners(sqlstore.TableOwners(tbl))
	return s, tbl
}

func intentNames(t *testing.T, ins []blobsvc.Intent) []string {
	t.Helper()
	var out []string
	for _, in := range ins {
		out = append(out, in.Blob.Name)
	}
	return out
}

// TestBlobClaims: two stores on one blob.db, each with its own owner
// session (two processes). A claim held by a live owner is refused to
// the other and to its own owner again, naming the holder; other blobs
// and the container have claims of their own; a released claim is free
// at once; a dead owner's is taken over (naming it), and the dead
// owner's store, waking, writes nothing of that blob any more while the
// blobs it holds no claim of stay writable.
func TestBlobClaims(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, tableA := ownedAt(t, dir)
	b, tableB := ownedAt(t, dir)
	if err := a.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}

	ca, err := a.ClaimBlob(ctx, "box", "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sqlstore.Store{b, a} {
		var held *blobsvc.ClaimHeldError
		if _, err := s.ClaimBlob(ctx, "box", "x"); !errors.As(err, &held) || !errors.Is(err, blobsvc.ErrClaimHeld) {
			t.Fatalf("claim of a held blob: %v, want *ClaimHeldError", err)
		}
		if held.Owner != string(tableA.Owner()) {
			t.Errorf("refusal names owner %s, want %s", held.Owner, tableA.Owner())
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
	if err := tableB.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x", "y", ""} {
		c, err := a.ClaimBlob(ctx, "box", name)
		if err != nil {
			t.Fatalf("claim of %q held by a dead owner: %v", name, err)
		}
		if c.From != string(tableB.Owner()) {
			t.Errorf("takeover of %q names %q, want the dead owner %s", name, c.From, tableB.Owner())
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

// TestBlobClaimRaces: claimers in several stores (processes) race for
// one free claim, then for one a dead owner left, round after round:
// exactly one wins each time.
func TestBlobClaimRaces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const procs, perProc, rounds = 3, 4, 20
	stores := make([]*sqlstore.Store, procs)
	for i := range stores {
		stores[i], _ = ownedAt(t, dir)
	}
	dead, deadTable := ownedAt(t, dir)
	for round := range rounds {
		takeover := round%2 == 1
		if takeover {
			if _, err := dead.ClaimBlob(ctx, "box", "race"); err != nil {
				t.Fatal(err)
			}
		}
		if takeover && round == 1 {
			if err := deadTable.Close(ctx); err != nil {
				t.Fatal(err)
			}
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
		if takeover && won[0].From != string(deadTable.Owner()) {
			t.Errorf("round %d: the winner took over from %q, want the dead %s", round, won[0].From, deadTable.Owner())
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

// TestIntentsOfDeadOwners: Intents lists the intents of dead owners and
// those without an owner (older databases), never a live owner's; any
// process's Recover resolves them under each blob's claim, and leaves a
// live owner's commit in progress alone.
func TestIntentsOfDeadOwners(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlstore.FileName)
	a, tableA := ownedAt(t, dir)
	b, _ := ownedAt(t, dir)
	live, _ := ownedAt(t, dir)
	if err := a.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*sqlstore.Store{"dead": a, "live": live, "legacy": a} {
		if err := s.PutIntent(ctx, blobsvc.Blob{Container: "box", Name: name, ContentKey: "k-" + name}, false); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE bs_intents SET owner = '' WHERE name = 'legacy'`); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Intents(ctx); err != nil || !slices.Equal(intentNames(t, got), []string{"legacy"}) {
		t.Fatalf("intents while every owner lives: %v %v, want the legacy one only", intentNames(t, got), err)
	}
	if err := tableA.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := b.Intents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := intentNames(t, got); !slices.Equal(names, []string{"dead", "legacy"}) {
		t.Fatalf("intents to recover %v, want [dead legacy] (never the live owner's)", names)
	}
	if in, ok, err := b.Intent(ctx, "box", "live"); err != nil || !ok || in.Blob.ContentKey != "k-live" {
		t.Fatalf("Intent of one blob: %+v %v %v", in, ok, err)
	}
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	// No content was committed for either: recovery drops them.
	if n, err := blobsvc.New(b, content, nil).Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover: %d %v", n, err)
	}
	var left []string
	rows, err := raw.QueryContext(ctx, `SELECT name FROM bs_intents ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		left = append(left, n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"live"}) {
		t.Fatalf("intents after recovery %v, want [live]: a live owner's commit is never touched", left)
	}
	var claims int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM bs_blob_claims`).Scan(&claims); err != nil || claims != 0 {
		t.Fatalf("claims left by recovery: %d %v", claims, err)
	}
}

// TestIntentsBeforeOwners: a blob.db made before intents had owners gets
// the owner column on Open, and its intents (left by a process that is
// gone: nothing older wrote owners) are recovered by the next process.
func TestIntentsBeforeOwners(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlstore.FileName)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		`CREATE TABLE bs_intents (container TEXT NOT NULL, name TEXT NOT NULL, drop_uncommitted INTEGER NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (container, name))`,
		`INSERT INTO bs_intents VALUES('box', 'old', 1, '{"Container":"box","Name":"old"}')`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := ownedAt(t, dir)
	got, err := s.Intents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Blob.Name != "old" || !got[0].DropUncommitted {
		t.Fatalf("intents of the old database: %+v, want box/old dropping its staged blocks", got)
	}
}

// TestSoloStore: a store nobody gave an owner session counts itself
// alone: a claim left by another owner is a dead one's.
func TestSoloStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlstore.FileName)
	gone, s := openAt(t, path), openAt(t, path)
	if _, err := gone.ClaimBlob(ctx, "box", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := gone.ClaimBlob(ctx, "box", "x"); !errors.Is(err, blobsvc.ErrClaimHeld) {
		t.Fatalf("second claim of the same store: %v, want ErrClaimHeld", err)
	}
	if c, err := s.ClaimBlob(ctx, "box", "x"); err != nil || c.From == "" {
		t.Fatalf("claim of another solo store's: %+v %v, want a takeover", c, err)
	}
}

// TestModifyBlob: ModifyBlob and ModifyContainer decide and write in one
// transaction: raced from three stores (processes), a change conditioned
// on the row's ETag wins exactly once per round; fn is not called while
// the blob's claim is held or it has a commit intent (ErrClaimHeld), nor
// for a missing row; an error of fn writes nothing.
func TestModifyBlob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := make([]*sqlstore.Store, 3)
	for i := range stores {
		stores[i], _ = ownedAt(t, dir)
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
