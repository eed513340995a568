package smb_test

import (
	"bufio"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// The smbtorture suites in scope (issue 15: share modes, locks,
// delete-on-close, create, rename, read/write, directories,
// getinfo/setinfo).
var tortureSuites = []string{
	"smb2.sharemode", "smb2.deny", "smb2.lock", "smb2.delete-on-close-perms", "smb2.create",
	"smb2.rename", "smb2.read", "smb2.rw", "smb2.dir", "smb2.mkdir", "smb2.getinfo", "smb2.setinfo",
}

// tortureTimeout bounds one smbtorture run (one suite's tests): generous,
// for runs under the race detector (smb2.dir's thousands of files).
const tortureTimeout = 8 * time.Minute

// readTestList reads a testdata list: one test per line (a name may hold
// spaces), '#' comments; with reasons, "name<TAB>reason".
func readTestList(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		test, reason, _ := strings.Cut(line, "\t")
		out[strings.TrimSpace(test)] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runTorture runs smbtorture on //addr/share with the given tests of one
// suite (the whole suite when tests is empty) and returns each test's
// subunit result ("success", "failure", "error", "skip"...) by full name,
// and the whole output.
func runTorture(t *testing.T, addr, share, user, password, suite string, tests []string) (map[string]string, string) {
	t.Helper()
	bin, err := exec.LookPath("smbtorture")
	requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), tortureTimeout)
	defer cancel()
	args := []string{"//" + host + "/" + share, "-p", port, "-U", user + "%" + password}
	if len(tests) == 0 {
		args = append(args, suite)
	}
	args = append(args, tests...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	if ctx.Err() != nil {
		t.Fatalf("smbtorture %s %v: timed out after %v\n%s", suite, tests, tortureTimeout, out)
	}
	_ = err // smbtorture exits 1 when a test fails; the subunit lines say which
	results := map[string]string{}
	// Subunit lines name a test by its last component ("success: valid-request");
	// the suite prefix is the same for every test of one run.
	for _, line := range strings.Split(out, "\n") {
		kind, rest, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch kind {
		case "success", "failure", "error", "skip", "xfail", "uxsuccess":
		default:
			continue
		}
		name := strings.TrimSuffix(strings.TrimSpace(rest), "[")
		results[suite+"."+strings.TrimSpace(name)] = kind
	}
	return results, out
}

// suiteOf is the suite a test name belongs to.
func suiteOf(t *testing.T, name string) string {
	for _, s := range tortureSuites {
		if strings.HasPrefix(name, s+".") {
			return s
		}
	}
	t.Fatalf("test %q is in none of the suites %v", name, tortureSuites)
	return ""
}

// TestSmbtorture runs every smbtorture test Samba's smbd passes on this
// machine (testdata/smbtorture-smbd-pass.txt) against blobshare and fails
// on any failure.
func TestSmbtorture(t *testing.T) {
	t.Parallel() // a run is mostly smbtorture waiting (break timeouts, sleeps): the suites run side by side
	if _, err := exec.LookPath("smbtorture"); err != nil {
		requireTool(t, "smbtorture (Debian samba-testsuite)", err)
	}
	pass := readTestList(t, "smbtorture-smbd-pass.txt")
	tests := slices.Sorted(maps.Keys(pass))
	e := newEnv(t)
	e.mustShare("share")
	for _, suite := range tortureSuites {
		var group []string
		for _, name := range tests {
			if suiteOf(t, name) == suite {
				group = append(group, name)
			}
		}
		run := group
		var results map[string]string
		var out string
		if len(run) > 0 {
			results, out = runTorture(t, e.smbAddr, "share", filerest.DevAccount, filerest.DevKey, suite, run)
		}
		for _, name := range group {
			t.Run(name, func(t *testing.T) {
				if got := results[name]; got != "success" {
					t.Errorf("smbtorture %s: %q, smbd passes it\n%s", name, got, testOutput(out, name))
				}
			})
		}
	}
}

// smbdWithoutOplocks are the smb.conf lines that make smbd grant every
// oplock and lease request none, as blobshare did before issue 30.
var smbdWithoutOplocks = []string{"oplocks = no", "level2 oplocks = no", "smb2 leases = no", "kernel oplocks = no"}

// failedCheck is the source location of the first failed check in one
// test's smbtorture output: of a line "../../source4/torture/smb2/lock.c:3205:
// (...): wrong value for ...", "source4/torture/smb2/lock.c:3205"; "" if
// there is none.
func failedCheck(out string) string {
	if m := checkLocation.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// checkLocation matches the file and line smbtorture's check macros print
// (__location__, then a colon) before their message; a debug header's
// "file.c:123(function)" does not match.
var checkLocation = regexp.MustCompile(`(source4/torture/[\w/.-]+\.c:\d+):`)

// testOutput cuts one test's part out of smbtorture's output, or returns
// the whole output when it has no part for the test (for error messages).
func testOutput(out, name string) string {
	if part, ok := testSection(out, name); ok {
		return part
	}
	return out
}

// testSection is the part of smbtorture's output between the test's
// "test: <name>" line and the next test's, and whether there is one.
func testSection(out, name string) (string, bool) {
	leaf := name[strings.LastIndex(name, ".")+1:]
	start := strings.Index(out, "test: "+leaf+"\n")
	if start < 0 {
		return "", false
	}
	rest := out[start+len("test: "+leaf+"\n"):]
	if end := strings.Index(rest, "\ntest: "); end >= 0 {
		rest = rest[:end]
	}
	return rest, true
}

// TestSmbtortureSmbdOracle runs the in-scope suites against Samba's smbd
// (started by startSmbd) and checks that the tests it passes are exactly
// testdata/smbtorture-smbd-pass.txt, printing the list it found; then,
// for the record, which of them smbd passes when it grants no oplocks. It
// needs root and smbd; it runs only with BLOBSHARE_SMBD_ORACLE=1, since the
// list is what it produced on this machine.
func TestSmbtortureSmbdOracle(t *testing.T) {
	if os.Getenv("BLOBSHARE_SMBD_ORACLE") != "1" {
		t.Skip("set BLOBSHARE_SMBD_ORACLE=1 to rebuild the smbd pass list")
	}
	passes := func(globals ...string) []string {
		d := startSmbd(t, t.TempDir(), globals...)
		var passed []string
		for _, s := range tortureSuites {
			res, _ := d.torture(t, s, nil)
			for name, kind := range res {
				if kind == "success" {
					passed = append(passed, name)
				}
			}
		}
		slices.Sort(passed)
		return passed
	}
	compare := func(what string, passed []string, want map[string]string) {
		for _, name := range passed {
			if _, ok := want[name]; !ok {
				t.Errorf("%s passes %s, which is not on its list", what, name)
			}
			delete(want, name)
		}
		for name := range want {
			t.Errorf("%s: %s is on its list but smbd does not pass it", what, name)
		}
	}
	passed := passes()
	t.Logf("smbd passes %d tests:\n%s", len(passed), strings.Join(passed, "\n"))
	compare("smbd", passed, readTestList(t, "smbtorture-smbd-pass.txt"))

	passed = passes(smbdWithoutOplocks...)
	t.Logf("smbd granting no oplocks passes %d tests:\n%s", len(passed), strings.Join(passed, "\n"))
}

// torture is runTorture against d.
func (d *smbdServer) torture(t *testing.T, suite string, tests []string) (map[string]string, string) {
	t.Helper()
	return runTorture(t, d.addr, d.share, d.user, d.password, suite, tests)
}
