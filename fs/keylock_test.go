package fs

import (
	"errors"
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
