package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

func intentNames(t *testing.T, ins []blobsvc.Intent) []string {
	t.Helper()
	var out []string
	for _, in := range ins {
		out = append(out, in.Blob.Name)
	}
	return out
}

// TestWriterClaim: two stores on one blob.db, each with its own owner
// session. The second cannot claim while the first's owner lives (the
// refusal names the holder's owner and pid); when the first's owner is
// dead, the second claims, and recovery lists and resolves the dead
// owner's and the ownerless intents, never a live owner's commit in
// progress; the first, its claim taken over, writes no intent or blob row
// any more; a claim given up by Close is free at once.
func TestWriterClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlstore.FileName)
	tableA, tableB, tableC := openTable(t, dir), openTable(t, dir), openTable(t, dir)
	a, b := openAt(t, path), openAt(t, path)

	if _, err := a.Intents(ctx); !errors.Is(err, sqlstore.ErrNotClaimed) {
		t.Fatalf("Intents before claiming: %v, want ErrNotClaimed", err)
	}
	if err := a.Claim(ctx, sqlstore.TableOwners(tableA)); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := a.Claim(ctx, sqlstore.TableOwners(tableA)); err != nil {
		t.Fatalf("claiming again for the same owner: %v", err)
	}
	var claimed *sqlstore.ClaimedError
	if err := b.Claim(ctx, sqlstore.TableOwners(tableB)); !errors.As(err, &claimed) {
		t.Fatalf("second claim while the first owner lives: %v, want *ClaimedError", err)
	}
	if claimed.Pid != os.Getpid() || claimed.Owner != string(tableA.Owner()) {
		t.Errorf("refusal names pid %d owner %s, want %d %s", claimed.Pid, claimed.Owner, os.Getpid(), tableA.Owner())
	}
	if _, err := b.Intents(ctx); !errors.Is(err, sqlstore.ErrNotClaimed) {
		t.Fatalf("Intents of the refused store: %v, want ErrNotClaimed", err)
	}

	// Intents: "mine" by A (the claim holder), "live" by owner C (a commit
	// in progress of a live process, planted: no second writer exists
	// under the claim), "legacy" with no owner (a database from before
	// owners).
	if err := a.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mine", "live", "legacy"} {
		if err := a.PutIntent(ctx, blobsvc.Blob{Container: "box", Name: name, ContentKey: "k-" + name}, false); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for name, owner := range map[string]string{"live": string(tableC.Owner()), "legacy": ""} {
		if _, err := raw.ExecContext(ctx, `UPDATE bs_intents SET owner = ? WHERE name = ?`, owner, name); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.Intents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := intentNames(t, got); !slices.Equal(names, []string{"legacy"}) {
		t.Fatalf("the holder's intents to recover %v, want [legacy] (its own and C's are in progress)", names)
	}

	// A's process dies (its owner session ends) while its store is still
	// open: the claim is free without any clean-up.
	if err := tableA.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(ctx, sqlstore.TableOwners(tableB)); err != nil {
		t.Fatalf("claim after the holder's owner died: %v", err)
	}
	got, err = b.Intents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := intentNames(t, got); !slices.Equal(names, []string{"legacy", "mine"}) {
		t.Fatalf("the new holder's intents to recover %v, want [legacy mine] (never C's, alive)", names)
	}
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	// No content was committed for any of them: recovery drops them.
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

	// The old holder, its claim taken over, is fenced: every write fails
	// and changes nothing.
	if err := b.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "kept"}, false); err != nil {
		t.Fatal(err)
	}
	late := blobsvc.Blob{Container: "box", Name: "late"}
	for _, w := range []struct {
		name string
		do   func() error
	}{
		{"PutIntent", func() error { return a.PutIntent(ctx, late, false) }},
		{"PutBlob", func() error { return a.PutBlob(ctx, late, false) }},
		{"DeleteBlob", func() error { return a.DeleteBlob(ctx, "box", "kept") }},
		{"StageBlock", func() error {
			return a.StageBlock(ctx, "box", "late", blobsvc.Block{ID: "QQ==", StoreID: "s"}, time.Now())
		}},
		{"CreateContainer", func() error { return a.CreateContainer(ctx, blobsvc.Container{Name: "late"}) }},
		{"UpdateContainer", func() error { return a.UpdateContainer(ctx, blobsvc.Container{Name: "box"}) }},
		{"DeleteContainer", func() error { _, err := a.DeleteContainer(ctx, "box"); return err }},
		{"DeleteIntent", func() error { return a.DeleteIntent(ctx, "box", "live") }},
		{"Intents", func() error { _, err := a.Intents(ctx); return err }},
	} {
		if err := w.do(); !errors.Is(err, sqlstore.ErrClaimLost) {
			t.Errorf("%s of the store whose claim was taken: %v, want ErrClaimLost", w.name, err)
		}
	}
	if _, err := b.Blob(ctx, "box", "late"); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Errorf("a fenced write left a row: %v", err)
	}
	if _, err := b.Blob(ctx, "box", "kept"); err != nil {
		t.Errorf("a fenced delete removed a blob: %v", err)
	}
	if _, err := b.Container(ctx, "late"); !errors.Is(err, blobsvc.ErrContainerNotFound) {
		t.Errorf("a fenced create made a container: %v", err)
	}

	// Close gives the claim up: C, alive all along, takes it at once.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := openAt(t, path)
	if err := c.Claim(ctx, sqlstore.TableOwners(tableC)); err != nil {
		t.Fatalf("claim after the holder closed: %v", err)
	}
}

// TestIntentsBeforeOwners: a blob.db made before intents had owners gets
// the owner column on Open, and its intents (left by a process that is
// gone: nothing older wrote owners) are the claim holder's to recover.
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
	s := openAt(t, path)
	if err := s.Claim(ctx, sqlstore.TableOwners(openTable(t, dir))); err != nil {
		t.Fatal(err)
	}
	got, err := s.Intents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Blob.Name != "old" || !got[0].DropUncommitted {
		t.Fatalf("intents of the old database: %+v, want box/old dropping its staged blocks", got)
	}
}
