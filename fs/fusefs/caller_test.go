package fusefs

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestProcessName: the name of a running process is its comm; a process
// that has exited has none.
func TestProcessName(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := processName(uint32(os.Getpid())), strings.TrimSuffix(string(comm), "\n"); got != want || got == "" {
		t.Errorf("processName(self) = %q, want %q", got, want)
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if got := processName(uint32(c.Process.Pid)); got != "" {
		t.Errorf("processName of exited pid %d = %q, want \"\"", c.Process.Pid, got)
	}
}
