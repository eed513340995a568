package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/integration/servetest"
)

// TestMountLogsRefusedNames: on the mount of `serve --debug`, mkdir of a
// share name Azure refuses answers EINVAL (all errno can say), and the log
// says which name and which rule, so the user need not guess; a valid
// share name beside it is created.
func TestMountLogsRefusedNames(t *testing.T) {
	requireFUSE(t)
	data, mnt := t.TempDir(), t.TempDir()
	srv, err := servetest.Start(blobshareBinary(t), data, "--mount", mnt, "--debug")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	refused := []struct{ name, rule string }{
		{"x", `share name \"x\" must have 3-63 characters`},
		{"My_Share", `share name \"My_Share\": character`},
		{"a--b", `share name \"a--b\": misplaced hyphen`},
	}
	for _, tt := range refused {
		if err := os.Mkdir(filepath.Join(mnt, tt.name), 0o755); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("mkdir %s: %v, want EINVAL", tt.name, err)
		}
	}
	if err := os.Mkdir(filepath.Join(mnt, "ok-share"), 0o755); err != nil {
		t.Fatalf("mkdir of a valid share: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	log := srv.Stderr.String()
	for _, tt := range refused {
		found := false
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "level=DEBUG") && strings.Contains(line, `msg="fusefs: name refused"`) &&
				strings.Contains(line, "name="+tt.name+" ") && strings.Contains(line, tt.rule) {
				found = true
			}
		}
		if !found {
			t.Errorf("no debug line saying why %q was refused (%s):\n%s", tt.name, tt.rule, log)
		}
	}
}
