package fs

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/locks"
)

// A namespace decision that leaves its key locks out fails with the
// audit's error, naming the decision's call site.
func TestLockAuditNamesDecision(t *testing.T) {
	skipInBenchRun(t)
	e := newEnv(t)
	sh := e.share("audit")
	// A second FileSystem on the same table whose mkdir leaves its lock out.
	store, err := local.New(filepath.Join(e.dir, "blobs"), local.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := New(ctxBG, Config{Table: e.table, Store: store, Logger: quietLogger(), SpillDir: e.dir, skipKeyLock: "mkdir"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bad.Close(ctxBG) })
	_, err = bad.Mkdir(ctxBG, sh, "d")
	if !errors.Is(err, locks.ErrKeyNotLocked) {
		t.Fatalf("mkdir without its key lock: %v, want locks.ErrKeyNotLocked", err)
	}
	if !strings.Contains(err.Error(), "mkdir") {
		t.Errorf("audit error %q does not name the decision", err)
	}
	if _, err := e.fs.Mkdir(ctxBG, sh, "d"); err != nil {
		t.Fatalf("mkdir with its key lock: %v", err)
	}
}

// skipInBenchRun skips a test of the lock audit in a benchmark run (go
// test -bench), where the lock table does not audit (locks/keylock.go).
func skipInBenchRun(t *testing.T) {
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		t.Skip("a benchmark run: the lock table does not audit key locks")
	}
}

// The lock audit bites in package fs too: with one namespace decision's
// key locks removed (Config.skipKeyLock), the tests that exercise that
// decision fail with the audit's error, and pass with every lock in
// place. Each case runs this test binary again with the knob set in the
// environment (openEnv reads it).
func TestLockAudit(t *testing.T) {
	if os.Getenv(skipKeyLockEnv) != "" {
		t.Skip("a child run of TestLockAudit")
	}
	if testing.Short() {
		t.Skip("runs the test binary once per decision")
	}
	cases := []struct {
		decision string // "" is the control: every lock in place
		tests    string
	}{
		{"", "^(TestCaseInsensitiveCasePreserving|TestRenameReplaceAtomic|TestSharesAndDirectories)$"},
		{"create", "^TestCaseInsensitiveCasePreserving$"},
		{"mkdir", "^TestCaseInsensitiveCasePreserving$"},
		{"unlink", "^TestUnlinkWhileOpen$"},
		{"rmdir", "^TestRmdirWithUnlinkedOpenFile$"},
		{"rename", "^(TestRenameReplaceAtomic|TestRenameOverOpenFile)$"},
		{"setattr", "^TestSetattrTimesThroughHandle$"},
		{"open", "^TestHandleWriteReadRanges$"},
		{"set attributes", "^TestRESTReadOnly$"},
		{"create share", "^TestLookupOutcomes$"},
		{"service properties", "^TestServiceProperties$"},
		{"create directory", "^TestStatAttributes$"},
		{"set properties", "^TestSharesAndDirectories$"},
		{"set metadata", "^TestSharesAndDirectories$"},
		{"delete directory", "^TestSharesAndDirectories$"},
		{"delete share", "^TestSharesAndDirectories$"},
		{"removeTree", "^TestSharesAndDirectories$"},
		{"create file", "^TestUnflushedWritesInvisibleToOthers$"},
		{"delete file", "^TestETagsNeverRepeat$"},
		{"commit", "^TestInlineSmallFiles$"},
		{"resolve intent", "^TestCrashIntentRecovery$"},
		{"create permission", "^TestPermissionOf$"},
		{"delete snapshot", "^TestSnapshotKeepsContentThroughGC$"},
	}
	for _, tc := range cases {
		name := tc.decision
		if name == "" {
			name = "control"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run", tc.tests, "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), skipKeyLockEnv+"="+tc.decision)
			out, err := cmd.CombinedOutput()
			if tc.decision == "" {
				if err != nil {
					t.Fatalf("%s with every key lock: %v\n%s", tc.tests, err, out)
				}
				if !strings.Contains(string(out), "--- PASS") {
					t.Fatalf("%s ran no test:\n%s", tc.tests, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s passed without %s's key locks: the audit did not bite\n%s", tc.tests, tc.decision, out)
			}
			if !strings.Contains(string(out), locks.ErrKeyNotLocked.Error()) {
				t.Fatalf("%s without %s's key locks failed, but not with the audit's error:\n%s", tc.tests, tc.decision, out)
			}
			if !strings.Contains(string(out), "--- FAIL") {
				t.Fatalf("%s without %s's key locks: no test failed:\n%s", tc.tests, tc.decision, out)
			}
		})
	}
}

// lockFound re-reads after locking and follows a name that moved between
// the lookup and the lock (on SQLite nothing can move there; the read
// function stands in for another node's rename): every id it met is
// locked, the entry returned is the one the name holds once its key is
// held, and a name that never holds still ends in errPathMoved.
func TestLockFoundFollowsMovedName(t *testing.T) {
	skipInBenchRun(t)
	e := newEnv(t)
	sh := e.share("relock")
	ids := func(seq ...FileID) func() (entry, error) {
		i := 0
		return func() (entry, error) {
			id := seq[min(i, len(seq)-1)]
			i++
			if id == 0 {
				return entry{}, ErrNotFound
			}
			return entry{id: id, parent: sh}, nil
		}
	}
	for _, tc := range []struct {
		name    string
		read    func() (entry, error)
		want    FileID // 0: ErrNotFound
		locked  []FileID
		wantErr error
	}{
		{"still", ids(101), 101, []FileID{sh, 101}, nil},
		{"renamed over", ids(101, 102), 102, []FileID{sh, 101, 102}, nil},
		{"created meanwhile", ids(0, 103), 103, []FileID{sh, 103}, nil},
		{"removed meanwhile", ids(104, 0), 0, []FileID{sh, 104}, ErrNotFound},
		{"never still", func() func() (entry, error) {
			n := FileID(200)
			return func() (entry, error) { n++; return entry{id: n, parent: sh}, nil }
		}(), 0, []FileID{sh, 201}, errPathMoved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.fs.update(ctxBG, func(tx *locks.Tx, q *q) ([]Change, error) {
				got, err := q.lockFound("test", sh, tc.read)
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("lockFound: %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil && got.id != tc.want {
					t.Errorf("lockFound found %d, want %d", got.id, tc.want)
				}
				for _, k := range tc.locked {
					if err := q.holds(k, "test"); err != nil {
						t.Errorf("key %d not held after lockFound: %v", k, err)
					}
				}
				if err := q.holds(999_999, "test"); !errors.Is(err, locks.ErrKeyNotLocked) {
					t.Errorf("an unlocked key passes the audit: %v", err)
				}
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
