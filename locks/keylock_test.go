package locks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// LockKeys takes keys once each and keeps them sorted; a key taken again
// asks for no re-check; a read transaction cannot lock.
func TestLockKeys(t *testing.T) {
	tab := openTable(t, "", Options{})
	requireAudit(t, tab)
	ctx := context.Background()
	err := tab.Update(ctx, func(tx *Tx) error {
		recheck, err := tx.LockKeys(9, 3, 9, 5)
		if err != nil {
			return err
		}
		if !recheck {
			t.Error("first LockKeys(9, 3, 9, 5): recheck false, want true (test runs re-check new keys)")
		}
		if recheck, err = tx.LockKeys(5, 3); err != nil || recheck {
			t.Errorf("LockKeys of held keys: recheck %v, err %v; want false, nil", recheck, err)
		}
		if recheck, err = tx.LockKeys(4); err != nil || !recheck {
			t.Errorf("LockKeys(4): recheck %v, err %v; want true, nil", recheck, err)
		}
		if want := []FileID{3, 4, 5, 9}; !slices.Equal(tx.held, want) {
			t.Errorf("held %v, want %v", tx.held, want)
		}
		return nil
	})
	must(t, err)
	// Keys end with their transaction.
	must(t, tab.Update(ctx, func(tx *Tx) error {
		if len(tx.held) != 0 {
			t.Errorf("a new transaction holds %v", tx.held)
		}
		return nil
	}))
	if err := tab.View(ctx, func(tx *Tx) error { _, err := tx.LockKeys(1); return err }); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("LockKeys in a View: %v, want ErrInvalidParameter", err)
	}
}

// A decision whose key lock is left out fails with ErrKeyNotLocked,
// naming the file and the decision.
func TestLockAuditNamesDecision(t *testing.T) {
	tab := openTable(t, "", Options{skipKeyLock: "OpenHandle"})
	requireAudit(t, tab)
	f := newFile()
	_, err := open(t, tab, OpenRequest{File: f, Access: AccessRead, Share: ShareAll})
	if !errors.Is(err, ErrKeyNotLocked) {
		t.Fatalf("open without its key lock: %v, want ErrKeyNotLocked", err)
	}
	for _, want := range []string{"OpenHandle", "file " + itoa(uint64(f))} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("audit error %q does not name %q", err, want)
		}
	}
	tab.auditFailures.Store(0) // expected here; openTable's cleanup checks the count
	// A created file's open reads nothing: it needs no lock.
	if _, err := open(t, tab, OpenRequest{File: newFile(), Access: AccessRead, Share: ShareAll, Created: true}); err != nil {
		t.Errorf("open of a created file: %v", err)
	}
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// The lock audit bites: with one decision's key lock removed, the spec
// tests that exercise that decision fail with the audit's error, and the
// same tests pass with every lock in place. Each case runs this test
// binary again with the knob set in the environment (openTable reads it).
func TestLockAudit(t *testing.T) {
	if os.Getenv(skipKeyLockEnv) != "" {
		t.Skip("a child run of TestLockAudit")
	}
	if testing.Short() {
		t.Skip("runs the test binary once per decision")
	}
	// suite names tests of the lockstest suite, which run here as
	// subtests of TestConformance.
	suite := func(names string) string { return "^TestConformance$/^(" + names + ")$" }
	cases := []struct {
		decision string // "" is the control: every lock in place
		tests    string
	}{
		{"", suite("SharingCheckRows|ByteRangeConflictTable|LeaseStateMachine") + "|^TestCacheStoredBreaks$"},
		{"OpenHandle", suite("SharingCheckRows|SharingWorkedExamples")},
		{"CloseHandle", suite("DispositionTable")},
		{"Dispose", suite("DispositionTable")},
		{"UnlinkOpen", suite("UnlinkOpen")},
		{"Lock", suite("ByteRangeConflictTable")},
		{"Unlock", suite("ByteRangeModel")},
		{"SetPOSIXLock", suite("POSIXLocks")},
		{"Flock", suite("Flock")},
		{"Lease", suite("LeaseStateMachine|LeaseVsOpens")},
		{"ForceClose", suite("HandleListingAndForceClose")},
		{"CheckREST", suite("BadInput")},
		{"CheckIO", suite("ByteRangeConflictTable")},
		{"CloseQuiet", suite("CloseQuiet")},
		{"ReleasePOSIXLocks", suite("POSIXLocks")},
		{"Forget", suite("Lifecycle")},
		{"reapOwner", "^TestLifecycle$"},
		{"ownerCause", "^TestSessionExpiry$"},
		{"renew", "^TestSessionLostByHeartbeat$"},
		{"DecideCache", "^TestCacheStoredBreaks$"},
		{"AckOplockBreak", "^TestCacheStoredBreaks$"},
		{"AckLeaseBreak", "^TestCacheStoredBreaks$"},
		{"DropCache", "^TestCacheStoredBreaks$"},
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
				t.Fatalf("%s passed without %s's key lock: the audit did not bite\n%s", tc.tests, tc.decision, out)
			}
			if !strings.Contains(string(out), ErrKeyNotLocked.Error()) {
				t.Fatalf("%s without %s's key lock failed, but not with the audit's error:\n%s", tc.tests, tc.decision, out)
			}
			if !strings.Contains(string(out), "--- FAIL") {
				t.Fatalf("%s without %s's key lock: no test failed:\n%s", tc.tests, tc.decision, out)
			}
		})
	}
}

// A handle read before its file's key was locked and closed meanwhile is
// closed once only: the second close changes nothing (on SQLite the close
// in between is this transaction's own, standing in for another node's).
func TestCloseRowRechecksHandle(t *testing.T) {
	rm := &removeLog{}
	tab := openTable(t, "", Options{Remove: rm.remove})
	f := newFile()
	h := mustOpen(t, tab, OpenRequest{File: f, Access: AccessRead | AccessDelete, Share: ShareAll, DeleteOnClose: true})
	other := mustOpen(t, tab, OpenRequest{File: f, Access: AccessRead | AccessDelete, Share: ShareAll})
	must(t, update(t, tab, func(tx *Tx) error {
		stale, err := tx.Handle(h.ID)
		if err != nil {
			return err
		}
		if _, err := tx.CloseHandle(h.ID); err != nil { // marks f delete-pending
			return err
		}
		if err := tx.Dispose(other.ID, false, Facts{}); err != nil { // clears the mark again
			return err
		}
		tx.lockKeys("test", stale.File)
		if _, err := tx.closeRow(stale); !errors.Is(err, errHandleGone) {
			t.Errorf("closeRow of a handle closed meanwhile: %v, want errHandleGone", err)
		}
		if ok, err := tx.ForceClose(h.ID); ok || err != nil {
			t.Errorf("ForceClose of a closed handle: %v, %v; want false, nil", ok, err)
		}
		return nil
	}))
	if pending(t, tab, f) {
		t.Error("the stale close ran delete-on-close a second time")
	}
	if got := rm.removed(); len(got) != 0 {
		t.Errorf("removed %v, want nothing (a handle is still open)", got)
	}
}
