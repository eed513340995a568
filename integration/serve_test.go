package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
)

const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// serviceClient is an azfile client for the server, authorized by SharedKey
// through the connection string users are told to use.
func serviceClient(t *testing.T, s *server) *service.Client {
	t.Helper()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + devKey +
		";FileEndpoint=" + s.RESTURL + ";"
	c, err := service.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServeAnswersTheSDKAndStopsCleanly(t *testing.T) {
	s := startServe(t, t.TempDir())
	if !strings.HasPrefix(s.RESTURL, "http://127.0.0.1:") {
		t.Fatalf("serve listens on %s; want 127.0.0.1", s.RESTURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := serviceClient(t, s)
	if _, err := svc.CreateShare(ctx, "first", nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	pager := svc.NewListSharesPager(nil)
	var names []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list shares: %v", err)
		}
		for _, sh := range page.Shares {
			names = append(names, *sh.Name)
		}
	}
	if len(names) != 1 || names[0] != "first" {
		t.Fatalf("shares = %v, want [first]", names)
	}
	// Cleanup sends SIGTERM and fails unless serve exits 0.
}

func TestServeKeepsDataAcrossRestarts(t *testing.T) {
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	s := startServe(t, data)
	if _, err := serviceClient(t, s).CreateShare(ctx, "kept", nil); err != nil {
		t.Fatal(err)
	}
	stopServe(t, s)

	s2 := startServe(t, data)
	props, err := serviceClient(t, s2).NewShareClient("kept").GetProperties(ctx, nil)
	if err != nil {
		t.Fatalf("share after restart: %v", err)
	}
	if props.ETag == nil {
		t.Fatal("share after restart has no ETag")
	}
}

// A user error is one line on standard error and a non-zero exit; never a
// stack trace.
func TestServeUserErrorsAreOneLine(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // a word the message must contain
	}{
		{"port in use", []string{"serve", "--data", t.TempDir(), "--addr", busyPort(t)}, "address already in use"},
		{"bad address", []string{"serve", "--data", t.TempDir(), "--addr", "nonsense"}, "--addr"},
		{"mount point missing", []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--mount", "/nonexistent/mnt"}, "mount"},
		{"bad share mode", []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--share-mode", "read,bogus"}, "share-mode"},
		{"data is a file", []string{"serve", "--data", notDir, "--addr", "127.0.0.1:0"}, "data"},
		{"queue port in use", []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--queue-addr", busyPort(t)}, "--queue-addr"},
		{"blob port in use", []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--queue-addr", "127.0.0.1:0", "--blob-addr", busyPort(t)}, "--blob-addr"},
		{"table port in use", []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--queue-addr", "127.0.0.1:0", "--blob-addr", "127.0.0.1:0", "--table-addr", busyPort(t)}, "--table-addr"},
		{"unknown flag", []string{"serve", "--no-such-flag"}, "no-such-flag"},
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runBlobshare(t, 30*time.Second, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0; want failure. stderr:\n%s", stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("stderr has %d lines; want 1:\n%s", len(lines), stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
				t.Fatalf("stderr shows a crash: %s", stderr)
			}
		})
	}
}
