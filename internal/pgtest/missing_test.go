package pgtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestServerDiesWithTestBinary: a test binary SIGKILLed while its cluster
// runs leaves neither a server nor its directory behind (the watchdog's
// lifeline closes with the process). The child reports the postmaster's
// pid and directory, then waits to be killed.
func TestServerDiesWithTestBinary(t *testing.T) {
	if os.Getenv("PGTEST_KILLED_CHILD") == "1" {
		c := New()
		c.Schema(t)
		pid, err := os.ReadFile(filepath.Join(c.dir, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("POSTMASTER %s %s\n", strings.SplitN(string(pid), "\n", 2)[0], c.dir)
		select {} // until killed
	}
	if _, err := BinDir(); err != nil {
		t.Skip(err) // TestMissingPostgres covers the missing server
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTestBinary$")
	cmd.Env = append(os.Environ(), "PGTEST_KILLED_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "POSTMASTER %d %s", &pid, &dir); n == 2 {
			break
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child reported no postmaster")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil || dirExists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the test binary's SIGKILL: postmaster %d alive %v, %s exists %v",
				pid, syscall.Kill(pid, 0) == nil, dir, dirExists(dir))
		}
		time.Sleep(20 * time.Millisecond) // polling another process's exit: no event to wait on
	}
}

func dirExists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}
