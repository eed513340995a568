package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/integration/servetest"
)

// TestREADMEGoProgram runs the README's Go program as written, with the
// README's setup commands in an empty module of its own, against a real
// `blobshare serve`, only pointed at the test server's port, and checks
// that it wrote what it says.
func TestREADMEGoProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) != 1 {
		t.Fatalf("the README has %d Go blocks, want 1", len(blocks))
	}
	const endpoint = "http://127.0.0.1:10003/devstoreaccount1"
	src := string(blocks[0][1])
	if !strings.Contains(src, endpoint) {
		t.Fatalf("the README's program does not use %s", endpoint)
	}

	data := t.TempDir()
	srv, err := servetest.Start(blobshareBinary(t), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })

	// As a user runs it: in an empty directory outside blobshare's
	// module, with the setup commands the README gives, verbatim. Only
	// the environment of this machine's Go (its module cache and proxy)
	// is shared; no -mod=mod, which would hide a missing go.sum entry.
	setup := regexp.MustCompile("`(go mod init demo [^`]*)`").FindSubmatch(readme)
	if setup == nil {
		t.Fatal("the README gives no `go mod init demo ...` setup for its program")
	}
	dir := t.TempDir()
	main := strings.ReplaceAll(src, endpoint, srv.RESTURL)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	for run := 1; run <= 2; run++ { // a second run finds the share already there
		cmd := exec.Command("sh", "-c", string(setup[1]))
		if run == 2 {
			cmd = exec.Command("go", "run", ".")
		}
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil && run == 1 && bytes.Contains(out, []byte("dial tcp")) && os.Getenv("BLOBSHARE_REQUIRE_ALL") != "1" {
			t.Skipf("the module proxy is unreachable: %s", out)
		}
		if err != nil || !strings.Contains(string(out), "wrote 12 bytes to docs/report.txt") {
			t.Fatalf("run %d of the README's program (%s): %v\n%s", run, cmd, err, out)
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	dd, err := openDataDir(context.Background(), dataDirOptions{Path: data})
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close(context.Background())
	r, err := dd.FS.GetFile(context.Background(), fs.GetFileRequest{Path: "docs/report.txt", Length: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, _ := io.ReadAll(r); string(got) != "hello, share" {
		t.Fatalf("docs/report.txt holds %q", got)
	}
}

// TestDocsLinksStayInRepo: every link of the README and of docs/ points to
// a file of the repository that exists (no link leaves the repository, none
// is broken).
func TestDocsLinksStayInRepo(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "/") {
				t.Errorf("%s links outside the repository: %s", f, m[1])
				continue
			}
			if target == "" {
				continue // an anchor in the same page
			}
			p := filepath.Join(filepath.Dir(f), target)
			if rel, err := filepath.Rel("../..", p); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links outside the repository: %s", f, m[1])
			} else if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to a missing file: %s", f, m[1])
			}
		}
	}
}
