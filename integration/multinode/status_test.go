package multinode

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// statusNode is one node of `status --meta … --json`.
type statusNode struct {
	ID        string `json:"id"`
	PID       int    `json:"pid"`
	Program   string `json:"program"`
	Endpoints string `json:"endpoints"`
	Alive     bool   `json:"alive"`
	Dead      string `json:"dead"`
}

// status runs `blobshare status --meta meta` with extra flags.
func status(t *testing.T, meta string, extra ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"status", "--meta", meta}, extra...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return string(out)
}

func statusNodes(t *testing.T, meta string) []statusNode {
	t.Helper()
	var r struct {
		Nodes   []statusNode `json:"nodes"`
		Handles []any        `json:"handles"`
	}
	if err := json.Unmarshal([]byte(status(t, meta, "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Handles == nil {
		t.Error("status --json on a shared --meta: no handles array")
	}
	return r.Nodes
}

// TestStatusShowsNodes: `status --meta` lists the serve nodes registered
// on the database, with their pid and endpoints, alive; a node stopped
// cleanly leaves the list; a node SIGKILLed shows KILLED as soon as the
// database has noticed its session end (its session lock is free), long
// before its heartbeat would expire (10 s, pgdb's TestNodeRegistry).
func TestStatusShowsNodes(t *testing.T) {
	nodes, conn := startNodes(t, pg, 2, "")
	meta := metaURL(t, conn)
	listed := statusNodes(t, meta)
	if len(listed) != 2 {
		t.Fatalf("status lists %d nodes, want 2: %+v", len(listed), listed)
	}
	for i, n := range nodes {
		j := slices.IndexFunc(listed, func(s statusNode) bool { return s.PID == n.Pid() })
		if j < 0 || !listed[j].Alive || listed[j].Program != "blobshare serve" ||
			listed[j].Endpoints != fmt.Sprintf("queue=%s table=%s", n.QueueURL, n.TableURL) {
			t.Errorf("node %d (pid %d) listed as %+v", i, n.Pid(), listed)
		}
	}
	text := status(t, meta)
	if !strings.Contains(text, "NODE") || strings.Count(text, " alive\n") != 2 {
		t.Errorf("status text:\n%s", text)
	}

	if err := nodes[1].Stop(); err != nil {
		t.Fatal(err)
	}
	if listed := statusNodes(t, meta); len(listed) != 1 || listed[0].PID != nodes[0].Pid() {
		t.Fatalf("after node 1 stopped: %+v", listed)
	}

	killed := time.Now()
	if err := nodes[0].Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-nodes[0].Done
	for {
		listed := statusNodes(t, meta)
		if len(listed) != 1 {
			t.Fatalf("after node 0 was killed: %+v", listed)
		}
		if !listed[0].Alive {
			if listed[0].Dead != "session lock free" {
				t.Errorf("the killed node is dead because %q, want the session lock free", listed[0].Dead)
			}
			break
		}
		if time.Since(killed) > 5*time.Second {
			t.Fatal("the killed node still shows alive 5 s later")
		}
		time.Sleep(10 * time.Millisecond) // the database notices the session end: nothing to wait on here
	}
	t.Logf("the killed node shows dead %v after the kill", time.Since(killed).Round(time.Millisecond))
	if text := status(t, meta); !strings.Contains(text, "KILLED") {
		t.Errorf("status text after the kill:\n%s", text)
	}
}
