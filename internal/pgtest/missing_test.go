package pgtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingPostgres: without server binaries a test is skipped, and
// under BLOBSHARE_REQUIRE_ALL=1 it fails. The test runs itself as a child
// process (PGTEST_MISSING_CHILD=1) with the search pointed at nothing.
func TestMissingPostgres(t *testing.T) {
	if os.Getenv("PGTEST_MISSING_CHILD") == "1" {
		c := &Cluster{lookIn: []string{t.TempDir()}}
		c.Schema(t)
		t.Log("PGTEST_REACHED_AFTER_SCHEMA")
		return
	}
	for _, tc := range []struct {
		requireAll string
		fails      bool
		word       string
	}{{"", false, "--- SKIP"}, {"1", true, "--- FAIL"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingPostgres$", "-test.v")
		cmd.Env = append(os.Environ(), "PGTEST_MISSING_CHILD=1", RequireAllEnv+"="+tc.requireAll)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.word) ||
			!strings.Contains(string(out), "postgresql server not installed") ||
			strings.Contains(string(out), "PGTEST_REACHED_AFTER_SCHEMA") {
			t.Errorf("%s=%q: exit %v, want failure %v and %q:\n%s", RequireAllEnv, tc.requireAll, err, tc.fails, tc.word, out)
		}
	}
}
