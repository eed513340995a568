package sqlmeta

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// inDatabaseFile counts the kv rows named like prefix% in the database
// file alone: a copy of it without its -wal sees only what checkpoints have
// written back. (A copy taken during a checkpoint may be torn: an error.)
func inDatabaseFile(t *testing.T, path, prefix string) (int, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+cp)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM kv WHERE name LIKE ?`, prefix+"%").Scan(&n)
	return n, err
}

func TestBackgroundCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		commits int // checkpointEvery wakes at once; 1 waits for checkpointIdle
	}{
		{"after checkpointEvery commits", checkpointEvery},
		{"when idle", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "meta.db")
			d := openDB(t, path)
			commitRows(t, d, "row", tc.commits)
			// Far below the connections' own threshold (see
			// TestCommitsDoNotCheckpoint), only the checkpointer writes
			// the rows back.
			deadline := time.Now().Add(10 * time.Second)
			for {
				n, err := inDatabaseFile(t, path, "row")
				if err == nil && n == tc.commits {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("database file holds %d of %d committed rows (%v) after 10 s", n, tc.commits, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// Commits leave the checkpoint to the goroutine: every connection's own
// automatic checkpoint is the safety net, far above what the goroutine lets
// the log grow to.
func TestCommitsDoNotCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	d := openDB(t, path)
	// Open's own commits (the schema) reach the file first.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := inDatabaseFile(t, path, "row")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("schema not checkpointed after 10 s: %v", err)
		}
	}
	d.ckpt.close()
	// With the checkpointer stopped nothing runs in the background: a
	// checkpoint could only happen inside a commit (SQLite's automatic
	// one), so the file can be checked as soon as the commits return.
	commitRows(t, d, "row", 2*checkpointEvery)
	if n, err := inDatabaseFile(t, path, "row"); err != nil || n != 0 {
		t.Errorf("without the checkpointer, the database file holds %d committed rows (%v), want 0", n, err)
	}
	for _, peek := range []bool{false, true} {
		if err := d.read(context.Background(), peek, false, func(tx *Tx) error {
			var pages int
			if err := tx.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
				return err
			}
			if pages != walSafetyNetPages {
				t.Errorf("peek=%v: wal_autocheckpoint = %d, want %d", peek, pages, walSafetyNetPages)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCloseStopsCheckpointer(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "meta.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A commit arms the idle timer; Close must not leave it or the
	// goroutine behind.
	if err := d.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.Exec(`CREATE TABLE x(y INTEGER)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.ckpt.done:
	case <-time.After(5 * time.Second):
		t.Fatal("checkpointer still running after Close")
	}
}
