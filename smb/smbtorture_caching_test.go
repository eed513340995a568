package smb_test

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/smb"
)

// cachingSuites are the smbtorture suites of oplocks and leases (issue 30).
var cachingSuites = []string{"smb2.oplock", "smb2.lease"}

// smbdWithLeases configures smbd as the oracle of the caching suites: its
// defaults (oplocks, level 2 oplocks, smb2 leases on), no kernel oplocks.
var smbdWithLeases = []string{"smb2 leases = yes", "kernel oplocks = no"}

// TestSmbtortureCaching runs every test of
// testdata/smbtorture-caching-pass.txt — the tests of smb2.oplock and
// smb2.lease that Samba's smbd passes here and blobshare passes too —
// against blobshare, and fails on any failure. With
// BLOBSHARE_TORTURE_CACHING_SURVEY=1 it runs both suites whole against
// blobshare and smbd (smbdWithLeases) instead and prints the tests both
// pass (the list to keep), those only smbd passes and those only
// blobshare passes; BLOBSHARE_TORTURE_CACHING_RUN="suite.test ..." runs
// those tests alone and prints smbtorture's output (to iterate on one);
// BLOBSHARE_TORTURE_CACHING_OFF=1 runs both suites against blobshare
// without caching (the baseline) and prints what passes.
func TestSmbtortureCaching(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	tortureKept(t, cachingSuites, "smbtorture-caching-pass.txt", "BLOBSHARE_TORTURE_CACHING", smbdWithLeases)
}

// tortureKept runs the kept list (testdata/list) of suites against
// blobshare, or with the knobs prefix+"_SURVEY", prefix+"_RUN" and
// prefix+"_OFF" (see TestSmbtortureCaching) surveys them against smbd
// configured with globals, runs a few tests, or the baseline.
func tortureKept(t *testing.T, suites []string, list, prefix string, globals []string) {
	if _, err := exec.LookPath("smbtorture"); err != nil {
		requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	}
	if os.Getenv(prefix+"_OFF") == "1" {
		// The baseline: blobshare granting no oplock or lease (no
		// lock table for caching), both suites whole.
		e := newEnv(t, func(c *smb.Config) { c.Caching = nil })
		e.mustShare("share")
		var passed []string
		for _, suite := range suites {
			res, _ := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, nil)
			for name, r := range res {
				if r == "success" {
					passed = append(passed, name)
				}
			}
		}
		slices.Sort(passed)
		t.Logf("blobshare without caching passes %d:\n%s", len(passed), strings.Join(passed, "\n"))
		return
	}
	e := newEnv(t)
	e.mustShare("share")
	if os.Getenv(prefix+"_SURVEY") == "1" {
		d := startSmbd(t, t.TempDir(), globals...)
		ours, theirs := map[string]string{}, map[string]string{}
		for _, suite := range suites {
			o, _ := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, nil)
			th, _ := d.torture(t, suite, nil)
			maps.Copy(ours, o)
			maps.Copy(theirs, th)
		}
		logSurvey(t, ours, theirs)
		return
	}
	if only := os.Getenv(prefix + "_RUN"); only != "" {
		// Iterate on a few tests: run them and print smbtorture's output.
		for _, name := range strings.Fields(only) {
			suite := name[:strings.LastIndex(name, ".")]
			res, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, []string{name})
			t.Logf("%s: %s\n%s", name, res[name], testOutput(out, name))
		}
		return
	}
	pass := readTestList(t, list)
	for _, suite := range suites {
		var run []string
		for _, name := range slices.Sorted(maps.Keys(pass)) {
			if strings.HasPrefix(name, suite+".") {
				run = append(run, name)
			}
		}
		if len(run) == 0 {
			continue
		}
		results, out := runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, run)
		for _, name := range run {
			t.Run(name, func(t *testing.T) {
				if got := results[name]; got != "success" {
					t.Errorf("smbtorture %s: %q, smbd passes it\n%s", name, got, testOutput(out, name))
				}
			})
		}
	}
}

// logSurvey logs which tests of a survey both smbd and blobshare pass
// (the candidates for a kept list), which only smbd passes (with
// blobshare's result) and which only blobshare passes.
func logSurvey(t *testing.T, ours, theirs map[string]string) {
	t.Helper()
	var both, smbdOnly, oursOnly []string
	for _, name := range slices.Sorted(maps.Keys(theirs)) {
		switch {
		case theirs[name] == "success" && ours[name] == "success":
			both = append(both, name)
		case theirs[name] == "success":
			smbdOnly = append(smbdOnly, name+" ("+ours[name]+")")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ours)) {
		if ours[name] == "success" && theirs[name] != "success" {
			oursOnly = append(oursOnly, name)
		}
	}
	t.Logf("both pass %d:\n%s", len(both), strings.Join(both, "\n"))
	t.Logf("only smbd passes %d:\n%s", len(smbdOnly), strings.Join(smbdOnly, "\n"))
	t.Logf("only blobshare passes %d:\n%s", len(oursOnly), strings.Join(oursOnly, "\n"))
}
