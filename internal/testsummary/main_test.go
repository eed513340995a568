package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummarizesARealRun runs the real `go test -json` on a sample module
// (testdata/sample: passing, failing, skipped tests, subtests, a package
// that does not build, one without tests) through run, twice into one
// state file, and checks the counts, the output go test would print
// without -json, the exit status and the closing line.
func TestSummarizesARealRun(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go not in PATH: %v", err)
	}
	sample, err := filepath.Abs(filepath.Join("testdata", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "counts.json")
	var out, errOut bytes.Buffer
	err = run([]string{"-state", state, "--", "go", "test", "-C", sample, "-count=1", "-json", "./..."}, &out, &errOut)
	if !errors.Is(err, errFailed) {
		t.Fatalf("run = %v, want errFailed (a test failed)\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"boom-visible",       // a failed test's output
		"--- FAIL: TestFail", // its verdict line
		"sub-boom-visible",   // a failed subtest's output
		"--- FAIL: TestParentFails/bad",
		"FAIL\tsample/good", // the failed package's line
		"?   \tsample/notests\t[no test files]",
		"not an int", // the build error
		"FAIL\tsample/broken",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, hidden := range []string{"hidden-log", "=== RUN", "--- PASS"} {
		if strings.Contains(text, hidden) {
			t.Errorf("output shows %q of a passing test (go test without -v does not):\n%s", hidden, text)
		}
	}
	// Passed: TestPass, TestPassLogs, TestParent; failed: TestFail,
	// TestParentFails and the package that did not build; skipped: TestSkip.
	assertLine(t, state, "3 passed, 3 failed, 1 skipped")

	// A second, passing run adds to the same state.
	out.Reset()
	if err := run([]string{"-state", state, "--", "go", "test", "-C", sample, "-count=1", "-json", "-run", "^TestPass$", "./good"}, &out, &errOut); err != nil {
		t.Fatalf("passing run: %v\n%s", err, out.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "ok  \tsample/good\t") || strings.Count(got, "\n") != 1 {
		t.Errorf("passing run printed %q, want one ok line", got)
	}
	assertLine(t, state, "4 passed, 3 failed, 1 skipped")

	// A command that fails without any test event counts once.
	out.Reset()
	if err := run([]string{"-state", state, "--", "go", "test", "-json", "-no-such-flag"}, &out, &errOut); !errors.Is(err, errFailed) {
		t.Fatalf("failing command: %v", err)
	}
	assertLine(t, state, "4 passed, 4 failed, 1 skipped")
}

func assertLine(t *testing.T, state, want string) {
	t.Helper()
	var out bytes.Buffer
	if err := run([]string{"-state", state, "-print"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want+"\n" {
		t.Errorf("closing line %q, want %q", got, want)
	}
}
