package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// restartWatchdog is watchdog for a cluster that Halt and Resume stop and
// start: every line read from the lifeline starts postgres again (once
// the previous one has exited: Halt waited for that), and EOF shuts the
// running one down (SIGQUIT) and removes the directory.
const restartWatchdog = `dir=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
pid=$!
while read -r _ <&3; do
	wait "$pid"
	"$@" </dev/null 3<&- &
	pid=$!
done
kill -QUIT "$pid" 2>/dev/null
wait "$pid"
rm -rf "$dir"`

// Private returns a cluster of t's own, started on its first Schema call
// and stopped when t ends, which t may stop and start again (Halt,
// Resume) without disturbing the binary's shared cluster.
func Private(t testing.TB) *Cluster {
	c := &Cluster{restartable: true}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// Halt shuts the server of a Private cluster down with `pg_ctl stop -m
// mode` (smart, fast or immediate) and returns once it has exited; its
// clients' connections are gone and new ones are refused until Resume.
func (c *Cluster) Halt(mode string) error {
	if !c.restartable || c.cmd == nil {
		return fmt.Errorf("pgtest: Halt needs a started Private cluster")
	}
	c.adminMu.Lock()
	if c.admin != nil {
		_ = c.admin.Close(context.Background())
		c.admin = nil
	}
	c.adminMu.Unlock()
	stop := exec.Command(filepath.Join(c.bindir, "pg_ctl"), "stop", "-D", filepath.Join(c.dir, "data"), "-m", mode, "-w", "-t", "60")
	stop.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	stop.Dir = c.dir
	if out, err := stop.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w\n%s", mode, err, out)
	}
	return nil
}

// Resume starts the server of a halted Private cluster again on the same
// data directory and returns once it accepts connections.
func (c *Cluster) Resume() error {
	if !c.restartable || c.cmd == nil {
		return fmt.Errorf("pgtest: Resume needs a started Private cluster")
	}
	if _, err := c.lifeline.Write([]byte("start\n")); err != nil {
		return fmt.Errorf("pgtest: resume: %w", err)
	}
	return c.connectAdmin()
}

// syncBuffer is the server's log, written by exec's copying goroutine
// while a failed start reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
