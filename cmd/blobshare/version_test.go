package main

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// TestTopLevelHelp: blobshare --help names every service and the mount.
func TestTopLevelHelp(t *testing.T) {
	out, err := exec.Command(blobshareBinary(t), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("blobshare --help: %v\n%s", err, out)
	}
	for _, word := range []string{"FileREST", "SMB", "Blob", "Queue", "Table", "mount", "--tls-cert"} {
		if !strings.Contains(string(out), word) {
			t.Errorf("--help does not name %s:\n%s", word, out)
		}
	}
}

// TestVersionString: the version comes from -ldflags when a release
// build set it, else from Go's build info, with the commit, its time and
// "modified" when the build info has them.
func TestVersionString(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "4d41cd0d4726e7c60e7e5291e6d50a06a7f29fe2"},
		{Key: "vcs.time", Value: "2026-11-28T08:58:02Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	for _, tt := range []struct {
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"dev", vcs, "(devel) (commit 4d41cd0d4726, 2026-11-28T08:58:02Z, modified)"},
		{"v1.2.3", vcs, "v1.2.3 (commit 4d41cd0d4726, 2026-11-28T08:58:02Z, modified)"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{"dev", nil, "(devel)"},
	} {
		if got := versionString(tt.ldflags, tt.info); got != tt.want {
			t.Errorf("versionString(%q, …) = %q, want %q", tt.ldflags, got, tt.want)
		}
	}
}
