package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
)

// azcopyPath is where `make test` (npm ci in integration/js) puts Microsoft's
// AzCopy: the npm package @azure-tools/azcopy-linux ships its Linux binary.
const azcopyPath = "js/node_modules/@azure-tools/azcopy-linux/dist/bin/azcopy_linux_amd64"

// azcopy runs AzCopy with its logs and job plans in a temporary directory.
type azcopy struct {
	bin, logs string
}

// newAzcopy finds AzCopy; npm installs it without the execute bit, so it
// runs from an executable copy. Under BLOBSHARE_REQUIRE_ALL=1 a missing
// AzCopy fails the test.
func newAzcopy(t *testing.T) *azcopy {
	t.Helper()
	src, err := os.Open(azcopyPath)
	if err != nil {
		if requireAll() {
			t.Fatalf("AzCopy not installed (make test runs npm ci in integration/js): %v", err)
		}
		t.Skipf("AzCopy not installed (make test runs npm ci in integration/js): %v", err)
	}
	defer src.Close()
	dir := t.TempDir()
	bin := filepath.Join(dir, "azcopy")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return &azcopy{bin: bin, logs: filepath.Join(dir, "logs")}
}

// run runs AzCopy with args and returns its output and whether it exited 0.
func (a *azcopy) run(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Env = append(os.Environ(), "AZCOPY_LOG_LOCATION="+a.logs, "AZCOPY_JOB_PLAN_LOCATION="+filepath.Join(a.logs, "plans"))
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("azcopy %v did not finish in 3 minutes:\n%s", args, out)
	}
	return string(out), err == nil
}

// mustRun runs AzCopy and fails the test unless it exits 0.
func (a *azcopy) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, ok := a.run(t, args...)
	if !ok {
		t.Fatalf("azcopy %v failed:\n%s\nlogs:\n%s", args, out, a.jobLogs(t))
	}
	return out
}

// jobLogs is the text of every AzCopy job log so far.
func (a *azcopy) jobLogs(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(a.logs, "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// writeTree writes files (slash-separated names) under dir, with times two
// days in the past, so that AzCopy's sync, which compares a local mtime
// with Last-Modified, compares unambiguously.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	past := time.Now().Add(-48 * time.Hour)
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
}

// summary reads one "Name: N" line of an AzCopy job summary.
func summary(t *testing.T, out, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in AzCopy's summary:\n%s", name, out)
	}
	return m[1]
}

// TestAzCopy drives Microsoft's AzCopy, unchanged, against `serve` as a user
// of Azure Files does, with an account SAS: copy a tree up (files of 0 B,
// 1 B and over 4 MiB, nested directories), sync again and see nothing
// re-copied, sync a change and a local deletion, copy the share down and
// compare byte for byte, copy share to share on the server. Then the point
// of blobshare: a file a Windows-style handle holds with share none makes
// AzCopy's upload of it fail with 409 SharingViolation, and after the close
// the same command succeeds.
func TestAzCopy(t *testing.T) {
	az := newAzcopy(t)
	s := startServe(t, t.TempDir(), "--blob-addr", "off", "--queue-addr", "off", "--smb", "off")
	ctx := testCtx(t)
	svc := serviceClient(t, s)
	for _, name := range []string{"tree", "copy"} {
		if _, err := svc.NewShareClient(name).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := svc.GetSASURL(sas.AccountResourceTypes{Service: true, Container: true, Object: true},
		sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Create: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(signed, "?")
	url := func(path string) string { return s.RESTURL + "/" + path + "?" + token }

	// A local tree (its times in the past: writeTree).
	src := t.TempDir()
	big := make([]byte, 5<<20+123)
	rand.Read(big)
	files := map[string][]byte{
		"empty":              {},
		"one":                {'x'},
		"docs/readme.txt":    []byte("hello from azcopy\n"),
		"docs/deep/big.bin":  big,
		"docs/deep/gone.txt": []byte("deleted locally later"),
	}
	writeTree(t, src, files)
	download := func(share, name string) ([]byte, error) {
		resp, err := svc.NewShareClient(share).NewRootDirectoryClient().NewFileClient(name).DownloadStream(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	checkShare := func(share string, want map[string][]byte) {
		t.Helper()
		for name, data := range want {
			got, err := download(share, name)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s/%s over FileREST: %d bytes, %v; want %d bytes", share, name, len(got), err, len(data))
			}
		}
	}

	out := az.mustRun(t, "copy", src+"/*", url("tree"), "--recursive", "--from-to", "LocalFile")
	if got := summary(t, out, "Number of File Transfers Completed"); got != "5" {
		t.Fatalf("copy up: %s files completed, want 5:\n%s", got, out)
	}
	checkShare("tree", files)

	out = az.mustRun(t, "sync", src, url("tree"), "--recursive", "--from-to", "LocalFile")
	if got := summary(t, out, "Number of Copy Transfers for Files"); got != "0" {
		t.Errorf("a second sync of an unchanged tree copied %s files, want 0:\n%s\n%s", got, out, az.jobLogs(t))
	}

	files["docs/readme.txt"] = []byte("changed locally\n")
	if err := os.WriteFile(filepath.Join(src, "docs/readme.txt"), files["docs/readme.txt"], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(src, "docs/deep/gone.txt")); err != nil {
		t.Fatal(err)
	}
	delete(files, "docs/deep/gone.txt")
	out = az.mustRun(t, "sync", src, url("tree"), "--recursive", "--from-to", "LocalFile", "--delete-destination", "true")
	if got := summary(t, out, "Number of Copy Transfers for Files"); got != "1" {
		t.Errorf("sync of one changed file copied %s, want 1:\n%s", got, out)
	}
	if got := summary(t, out, "Number of Deletions at Destination"); got != "1" {
		t.Errorf("sync of one local deletion deleted %s, want 1:\n%s", got, out)
	}
	checkShare("tree", files)
	if _, err := download("tree", "docs/deep/gone.txt"); !fileerror.HasCode(err, fileerror.ResourceNotFound) {
		t.Errorf("a file deleted locally and synced: %v, want ResourceNotFound", err)
	}

	down := t.TempDir()
	az.mustRun(t, "copy", url("tree"), down, "--recursive", "--from-to", "FileLocal")
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(down, "tree", name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("copied down %s: %d bytes, %v; want %d bytes", name, len(got), err, len(data))
		}
	}

	// Share to share: AzCopy has the server copy each file (Put Range From
	// URL with the source's SAS), keeping SMB times and the permission
	// (the security descriptor, under the destination share's own key).
	az.mustRun(t, "copy", url("tree/docs"), url("copy"), "--recursive", "--from-to", "FileFile",
		"--preserve-smb-info=true", "--preserve-permissions=true")
	checkShare("copy", map[string][]byte{"docs/readme.txt": files["docs/readme.txt"], "docs/deep/big.bin": big})
	for _, name := range []string{"docs/readme.txt", "docs/deep/big.bin"} {
		from, err := svc.NewShareClient("tree").NewRootDirectoryClient().NewFileClient(name).GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		to, err := svc.NewShareClient("copy").NewRootDirectoryClient().NewFileClient(name).GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *from.FilePermissionKey == "" || to.FilePermissionKey == nil {
			t.Errorf("%s: permission keys %v / %v", name, from.FilePermissionKey, to.FilePermissionKey)
		} else {
			fromPerm, err := svc.NewShareClient("tree").GetPermission(ctx, *from.FilePermissionKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			toPerm, err := svc.NewShareClient("copy").GetPermission(ctx, *to.FilePermissionKey, nil)
			if err != nil || *toPerm.Permission != *fromPerm.Permission {
				t.Errorf("%s: copied with permission %v (%v), the source has %q", name, toPerm.Permission, err, *fromPerm.Permission)
			}
		}
		if !from.FileLastWriteTime.Equal(*to.FileLastWriteTime) || !from.FileCreationTime.Equal(*to.FileCreationTime) {
			t.Errorf("%s: copied with times %v / %v, the source has %v / %v", name,
				to.FileCreationTime, to.FileLastWriteTime, from.FileCreationTime, from.FileLastWriteTime)
		}
	}

	// A program holds one.txt open with share none, as a Windows program
	// can: AzCopy's upload of it fails with 409 SharingViolation.
	sess := startSession(t, s.Data)
	if a := sess.do(t, "open h tree/one access=read,write share=none"); !strings.HasPrefix(a, "ok ") {
		t.Fatalf("session open: %q", a)
	}
	if err := os.WriteFile(filepath.Join(src, "one"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := az.run(t, "copy", filepath.Join(src, "one"), url("tree/one"), "--from-to", "LocalFile")
	if ok {
		t.Fatalf("AzCopy uploaded a file another handle holds with share none:\n%s", out)
	}
	if logs := az.jobLogs(t); !strings.Contains(logs, "SharingViolation") {
		t.Errorf("AzCopy's log does not name SharingViolation:\n%s\n%s", out, logs)
	}
	if a := sess.do(t, "close h"); a != "ok" {
		t.Fatalf("session close: %q", a)
	}
	az.mustRun(t, "copy", filepath.Join(src, "one"), url("tree/one"), "--from-to", "LocalFile")
	checkShare("tree", map[string][]byte{"one": []byte("y")})
}

// TestAzCopyBlob drives AzCopy against the Blob endpoint with an account
// SAS, as a user of Azurite would: upload a tree (a 9 MiB file in 4 MiB
// blocks among small ones), sync it unchanged (nothing copied), copy it
// container to container on the server (Put Blob From URL and Put Block
// From URL, each reading its source with the SAS AzCopy passes), download
// it and compare byte for byte, then remove it.
func TestAzCopyBlob(t *testing.T) {
	az := newAzcopy(t)
	s := startServe(t, t.TempDir(), "--queue-addr", "off", "--smb", "off")
	ctx := testCtx(t)
	svc := blobClient(t, s.BlobURL).ServiceClient()
	// AzCopy creates no container for an IP-style URL (against Azurite
	// neither): the containers exist first.
	for _, name := range []string{"site", "mirror"} {
		if _, err := svc.NewContainerClient(name).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := svc.GetSASURL(blobsas.AccountResourceTypes{Service: true, Container: true, Object: true},
		blobsas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Create: true, Add: true, Tag: true},
		time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(signed, "?")
	url := func(path string) string { return s.BlobURL + "/" + path + "?" + token }

	src := t.TempDir()
	big := make([]byte, 9<<20+7)
	rand.Read(big)
	files := map[string][]byte{"index.html": []byte("<h1>hi</h1>"), "img/logo.bin": big, "img/empty": {}}
	writeTree(t, src, files)

	out := az.mustRun(t, "copy", src+"/*", url("site"), "--recursive", "--from-to", "LocalBlob", "--block-size-mb", "4")
	if got := summary(t, out, "Number of File Transfers Completed"); got != "3" {
		t.Fatalf("upload: %s files completed, want 3:\n%s", got, out)
	}
	out = az.mustRun(t, "sync", src, url("site"), "--recursive", "--from-to", "LocalBlob")
	if got := summary(t, out, "Number of Copy Transfers for Files"); got != "0" {
		t.Errorf("a second sync of an unchanged tree copied %s files, want 0:\n%s", got, out)
	}
	out = az.mustRun(t, "copy", url("site"), url("mirror"), "--recursive", "--from-to", "BlobBlob")
	if got := summary(t, out, "Number of File Transfers Completed"); got != "3" {
		t.Fatalf("server-side copy: %s files completed, want 3:\n%s\n%s", got, out, az.jobLogs(t))
	}
	down := t.TempDir()
	az.mustRun(t, "copy", url("mirror"), down, "--recursive", "--from-to", "BlobLocal")
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(down, "mirror", name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("downloaded %s: %d bytes, %v; want %d bytes", name, len(got), err, len(data))
		}
	}
	az.mustRun(t, "remove", url("mirror"), "--recursive", "--from-to", "BlobTrash")
	pager := svc.NewContainerClient("mirror").NewListBlobsFlatPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Segment.BlobItems) != 0 {
		t.Errorf("after azcopy remove: %v, %d blobs left", err, len(page.Segment.BlobItems))
	}
}
