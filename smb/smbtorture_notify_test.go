package smb_test

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// smbdNotify configures smbd as the oracle of smb2.notify: leases as for
// the caching suites, and its internal notifier (notifyd) instead of
// inotify, as Samba's own selftest runs smb2.notify (kernel change notify
// = no): blobshare has no kernel notifier either.
var smbdNotify = append(slices.Clone(smbdWithLeases), "kernel change notify = no")

// TestSmbtortureNotify runs every test of testdata/smbtorture-notify-pass.txt
// — the tests of smb2.notify that Samba's smbd passes here and blobshare
// passes too — against blobshare, and fails on any failure. With
// BLOBSHARE_TORTURE_NOTIFY_SURVEY=1 it runs the suite whole against
// blobshare and smbd (smbdNotify) instead and prints the tests both pass
// (the list to keep), those only smbd passes and those only blobshare
// passes; BLOBSHARE_TORTURE_NOTIFY_RUN="smb2.notify.x ..." runs those
// tests alone and prints smbtorture's output.
func TestSmbtortureNotify(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	if _, err := exec.LookPath("smbtorture"); err != nil {
		requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	}
	const suite = "smb2.notify"
	if os.Getenv("BLOBSHARE_TORTURE_NOTIFY_SMBD") == "1" {
		// smbd alone, twice: the tests it passes both times.
		d := startSmbd(t, t.TempDir(), smbdNotify...)
		first, _ := d.torture(t, suite, nil)
		second, _ := d.torture(t, suite, nil)
		var pass, flaky, fail []string
		for _, name := range slices.Sorted(maps.Keys(first)) {
			switch {
			case first[name] == "success" && second[name] == "success":
				pass = append(pass, name)
			case first[name] == "success" || second[name] == "success":
				flaky = append(flaky, name)
			default:
				fail = append(fail, name+" ("+first[name]+")")
			}
		}
		t.Logf("smbd passes %d twice:\n%s", len(pass), strings.Join(pass, "\n"))
		t.Logf("smbd passes once %d:\n%s", len(flaky), strings.Join(flaky, "\n"))
		t.Logf("smbd fails %d:\n%s", len(fail), strings.Join(fail, "\n"))
		return
	}
	e := newEnv(t)
	e.mustShare("share")
	if os.Getenv("BLOBSHARE_TORTURE_NOTIFY_SURVEY") == "1" {
		d := startSmbd(t, t.TempDir(), smbdNotify...)
		start := time.Now()
		ours, _ := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, nil)
		t.Logf("blobshare: %v", time.Since(start))
		start = time.Now()
		theirs, _ := d.torture(t, suite, nil)
		t.Logf("smbd: %v", time.Since(start))
		logSurvey(t, ours, theirs)
		return
	}
	if only := os.Getenv("BLOBSHARE_TORTURE_NOTIFY_RUN"); only != "" {
		for _, name := range strings.Fields(only) {
			res, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, []string{name})
			t.Logf("%s: %s\n%s", name, res[name], testOutput(out, name))
		}
		return
	}
	pass := readTestList(t, "smbtorture-notify-pass.txt")
	run := slices.Sorted(maps.Keys(pass))
	results, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, run)
	for _, name := range run {
		t.Run(name, func(t *testing.T) {
			if got := results[name]; got != "success" {
				t.Errorf("smbtorture %s: %q, smbd passes it\n%s", name, got, testOutput(out, name))
			}
		})
	}
}
