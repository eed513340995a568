package smb_test

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
)

// TestSmbtortureDirLease runs testdata/smbtorture-dirlease-pass.txt — the
// directory lease tests of smbtorture's smb2.lease — against blobshare
// and fails on any failure. smbd 4.17 skips them (it announces no
// directory leasing); BLOBSHARE_TORTURE_DIRLEASE_SMBD=1 runs them against
// smbd too and logs what it answers, to see that it still does.
func TestSmbtortureDirLease(t *testing.T) {
	if _, err := exec.LookPath("smbtorture"); err != nil {
		requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	}
	run := slices.Sorted(maps.Keys(readTestList(t, "smbtorture-dirlease-pass.txt")))
	if os.Getenv("BLOBSHARE_TORTURE_DIRLEASE_SMBD") == "1" {
		d := startSmbd(t, t.TempDir(), smbdWithLeases...)
		res, out := d.torture(t, "smb2.lease", run)
		for _, name := range run {
			t.Logf("smbd %s: %s\n%s", name, res[name], testOutput(out, name))
		}
		return
	}
	e := newEnv(t)
	e.mustShare("share")
	results, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, "smb2.lease", run)
	for _, name := range run {
		t.Run(name, func(t *testing.T) {
			if got := results[name]; got != "success" {
				t.Errorf("smbtorture %s: %q\n%s", name, got, testOutput(out, name))
			}
		})
	}
	if t.Failed() {
		t.Logf("smbtorture output:\n%s", strings.TrimSpace(out))
	}
}
