package main

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/d?search_path=s": "postgres://u:xxxxx@h:5432/d?search_path=s",
		"postgres://u@h/d":                           "postgres://u@h/d",
		"postgres:///d?host=/run/pg":                 "postgres:///d?host=/run/pg",
		"not a url":                                  "not a url",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMetaOnOtherCommands: mount and session take --meta and refuse a
// PostgreSQL one with one line (their namespace and lock table are not on
// PostgreSQL yet); status reads a PostgreSQL one (its nodes; here an
// unreachable one is one line); any command refuses a --meta that is no
// postgres:// URL, never echoing a password.
func TestMetaOnOtherCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mount", "--meta", "postgres://u@h/d", t.TempDir()}, "mount: --meta postgres: only the Queue, Table and Blob services"},
		{[]string{"session", "--meta", "postgresql://u@h/d"}, "session: --meta postgres: only the Queue, Table and Blob services"},
		{[]string{"status", "--meta", "postgres://u:secret@/d?host=/nonexistent-blobshare-socket-dir"}, "status: --meta postgres://u:xxxxx@/d?host=/nonexistent-blobshare-socket-dir: connect to"},
		{[]string{"status", "--meta", "mysql://u:pw@h/d"}, "status: --meta mysql://u:xxxxx@h/d: want postgres://"},
		{[]string{"serve", "--meta", "postgres://u@h/d", "--smb", "off"}, "--meta postgres: only the Queue, Table and Blob services keep their metadata in PostgreSQL so far; FileREST (--addr)"},
	} {
		err := Main(append([]string{"blobshare"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: %v, want one line containing %q", tc.args, err, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("connect: failed\n\tlookup h: no such host\r\n"); got != "connect: failed; lookup h: no such host" {
		t.Errorf("oneLine: %q", got)
	}
}
