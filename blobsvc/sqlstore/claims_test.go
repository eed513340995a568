package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/blobsvc/storetest"
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

// TestConformance runs blobsvc/storetest on SQLite: each process a
// store of one blob.db with an owner session of its own lock table;
// Kill closes the table (the owner deregisters: dead to the others at
// once, as at SIGKILL, whose flock the kernel drops).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dir := t.TempDir()
		return func(t *testing.T) storetest.Process {
			s, tbl := ownedAt(t, dir)
			return storetest.Process{Store: s, Owner: string(tbl.Owner()), Kill: func() {
				if err := tbl.Close(context.Background()); err != nil {
					t.Errorf("end the owner session: %v", err)
				}
			}}
		}
	})
}

func intentNames(t *testing.T, ins []blobsvc.Intent) []string {
	t.Helper()
	var out []string
	for _, in := range ins {
		out = append(out, in.Blob.Name)
	}
	return out
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
