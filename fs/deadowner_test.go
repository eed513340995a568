package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// killOwner makes e's process look dead to every other Table: its owner
// lock file goes, as when the kernel drops the flock of a SIGKILLed
// process, while its handle rows stay in the database.
func killOwner(t *testing.T, e *env) {
	t.Helper()
	p := filepath.Join(e.dir, "blobshare.db.owners", string(e.table.Owner()))
	if err := os.Remove(p); err != nil {
		t.Fatalf("remove owner file %s: %v", p, err)
	}
}

// List Handles and Force Close Handles as the first request after another
// process died never report or count the dead process's handles
// (reliability TestCrashBesideSurvivor rounds 1 and 3).
func TestHandlesOfDeadProcess(t *testing.T) {
	for _, tc := range []struct {
		name      string
		path      string
		recursive bool
	}{
		{"file", "data/d/a", false},
		{"directory", "data/d", true},
		{"share", "data", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := openEnv(t, dir)
			a.share("data")
			_, err := a.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "data/d"})
			mustNil(t, err, "mkdir")
			a.putFile("data/d/a", []byte("a"))
			mine := a.mustOpen("data/d/a", locks.AccessRead, allShare, DispositionOpen)
			defer mine.Close(ctxBG)
			b := openEnv(t, dir)
			b.mustOpen("data/d/a", rw, allShare, DispositionOpen)
			killOwner(t, b)

			hs, err := a.fs.ListHandles(ctxBG, tc.path, tc.recursive)
			mustNil(t, err, "list handles")
			if len(hs) != 1 || hs[0].ID != mine.ID() {
				t.Fatalf("list handles %s: %+v, want only handle %d", tc.path, hs, mine.ID())
			}
			n, err := a.fs.ForceCloseHandles(ctxBG, tc.path, 0, true, tc.recursive)
			mustNil(t, err, "force close")
			if n != 1 {
				t.Fatalf("force close %s closed %d, want 1 (the live handle)", tc.path, n)
			}
		})
	}
}

// Force Close Handles as the first request after another process died
// counts only live handles too.
func TestForceCloseFirstAfterDeath(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	a.share("data")
	a.putFile("data/f", []byte("f"))
	b := openEnv(t, dir)
	b.mustOpen("data/f", rw, allShare, DispositionOpen)
	b.mustOpen("data/f", locks.AccessRead, allShare, DispositionOpen)
	killOwner(t, b)
	n, err := a.fs.ForceCloseHandles(ctxBG, "data", 0, true, true)
	mustNil(t, err, "force close")
	if n != 0 {
		t.Fatalf("force close counted %d dead handles", n)
	}
	hs, err := a.fs.ListHandles(ctxBG, "data/f", false)
	mustNil(t, err, "list handles")
	if len(hs) != 0 {
		t.Fatalf("handles left %+v", hs)
	}
}
