package filerest_test

import (
	"crypto/md5"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
)

func TestEdgeRangeMD5AndEmptyFiles(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("0123456789"))
	dl, err := f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 2, Count: 3}, RangeGetContentMD5: to.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	sum := md5.Sum([]byte("234"))
	if string(body) != "234" || string(dl.ContentMD5) != string(sum[:]) {
		t.Fatalf("ranged md5: %q %x", body, dl.ContentMD5)
	}

	empty := e.mustFile("share", "empty.txt", nil)
	dl, err = empty.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatalf("full read of an empty file: %v", err)
	}
	body, _ = io.ReadAll(dl.Body)
	dl.Body.Close()
	if len(body) != 0 || *dl.ContentLength != 0 {
		t.Fatalf("empty body %q", body)
	}
	_, err = empty.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 1}})
	wantCode(t, "ranged read of an empty file", err, string(fileerror.InvalidRange))

	// Abort Copy: copies are synchronous, so there is nothing to abort.
	_, err = f.AbortCopy(ctxBG, "00000000-0000-0000-0000-000000000000", nil)
	wantCode(t, "abort copy", err, "NoPendingCopyOperation")
}

func TestEdgeReadOnlyAttribute(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "ro.txt", []byte("data"))
	if _, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{
		Attributes: &file.NTFSFileAttributes{ReadOnly: true},
	}}); err != nil {
		t.Fatal(err)
	}
	gp, err := f.GetProperties(ctxBG, nil)
	if err != nil || !strings.Contains(*gp.FileAttributes, "ReadOnly") {
		t.Fatalf("attributes %v %v", gp.FileAttributes, err)
	}
	_, err = f.UploadRange(ctxBG, 0, streamOf("x"), nil)
	wantCode(t, "write to ReadOnly", err, "ReadOnlyAttribute")
	_, err = f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
	wantCode(t, "metadata on ReadOnly", err, "ReadOnlyAttribute")
}

func TestEdgeEncodedNames(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	names := []string{"a\uFFFFb.txt", "üñí €.txt", "with space & amp;.txt", "percent%41.txt"}
	for _, n := range names {
		e.mustFile("share", n, []byte("x"))
	}
	page, err := e.dir("share", "").NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{}).NextPage(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range page.Segment.Files {
		got[*f.Name] = true
	}
	for _, n := range names {
		if !got[n] {
			t.Errorf("listing lost %q: %v", n, got)
		}
	}
}

func TestEdgeCreateFileWithBody(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	r := e.do(t, "PUT", "/devstoreaccount1/share/b.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "8"}, []byte("abcd"))
	if r.status != 201 || r.header.Get("Content-MD5") == "" {
		t.Fatalf("create with body: %d %s", r.status, r.body)
	}
	r = e.do(t, "GET", "/devstoreaccount1/share/b.txt", nil, nil)
	if r.status != 200 || string(r.body) != "abcd\x00\x00\x00\x00" || r.header.Get("x-ms-type") != "File" {
		t.Fatalf("read back %d %q", r.status, r.body)
	}
	if ct, ok := r.header["Content-Type"]; !ok || ct[0] != "application/octet-stream" {
		t.Fatalf("default content type %v", ct)
	}
	// After Set File Properties without headers, no Content-Type at all.
	if r := e.do(t, "PUT", "/devstoreaccount1/share/b.txt?comp=properties", nil, nil); r.status != 200 {
		t.Fatalf("set properties %d %s", r.status, r.body)
	}
	r = e.do(t, "GET", "/devstoreaccount1/share/b.txt", nil, nil)
	if _, ok := r.header["Content-Type"]; ok {
		t.Fatalf("Content-Type after clearing: %v", r.header["Content-Type"])
	}
	r = e.do(t, "PUT", "/devstoreaccount1/share/c.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "2"}, []byte("abcd"))
	checkError(t, "body longer than the file", r, "PUT", 400, "InvalidHeaderValue")
}

func TestEdgeEncodedNameXML(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	e.mustFileRaw(t, "/devstoreaccount1/share/a%EF%BF%BFb", nil)
	r := e.do(t, "GET", "/devstoreaccount1/share?restype=directory&comp=list", nil, nil)
	if !strings.Contains(string(r.body), `<Name Encoded="true">a%EF%BF%BFb</Name>`) {
		t.Fatalf("listing %s", r.body)
	}
	if !strings.Contains(string(r.body), `<NextMarker></NextMarker></EnumerationResults>`) {
		t.Fatalf("listing must end with an empty NextMarker: %s", r.body)
	}
}

func TestEdgeStoredContentMD5(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	content := []byte("stored md5")
	sum := md5.Sum(content)
	f := e.file("share", "m.txt")
	if _, err := f.Create(ctxBG, int64(len(content)), &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: sum[:]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.UploadRange(ctxBG, 0, streamOf(string(content)), nil); err != nil {
		t.Fatal(err)
	}
	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	dl.Body.Close()
	if string(dl.ContentMD5) != string(sum[:]) {
		t.Fatalf("full read Content-MD5 %x, want the stored %x", dl.ContentMD5, sum)
	}
	dl, err = f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 3}})
	if err != nil {
		t.Fatal(err)
	}
	dl.Body.Close()
	if dl.ContentMD5 != nil || string(dl.FileContentMD5) != string(sum[:]) {
		t.Fatalf("ranged read: Content-MD5 %x, x-ms-content-md5 %x", dl.ContentMD5, dl.FileContentMD5)
	}
	// List Ranges limited to a range.
	lr, err := f.GetRangeList(ctxBG, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 0, Count: 4}})
	if err != nil || len(lr.Ranges) != 1 || *lr.Ranges[0].Start != 0 || *lr.Ranges[0].End > 3 {
		t.Fatalf("ranged list ranges: %+v %v", lr.Ranges, err)
	}
}

func TestEdgeNamespaceSemantics(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "Case.TXT", []byte("abcdef"))

	// Case-insensitive, case-preserving.
	gp, err := e.file("share", "case.txt").GetProperties(ctxBG, nil)
	if err != nil || *gp.ContentLength != 6 {
		t.Fatalf("case-insensitive lookup: %v", err)
	}
	page, _ := e.dir("share", "").NewListFilesAndDirectoriesPager(nil).NextPage(ctxBG)
	if len(page.Segment.Files) != 1 || *page.Segment.Files[0].Name != "Case.TXT" {
		t.Fatalf("case not preserved: %v", page.Segment.Files)
	}
	// A directory cannot take a file's name (in any case).
	_, err = e.dir("share", "CASE.txt").Create(ctxBG, nil)
	wantCode(t, "directory over a file name", err, "ResourceAlreadyExists")

	// Resize: shrink drops data, grow exposes zeros.
	if _, err := f.Resize(ctxBG, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resize(ctxBG, 5, nil); err != nil {
		t.Fatal(err)
	}
	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(b) != "abc\x00\x00" {
		t.Fatalf("after shrink and grow: %q", b)
	}

	// Create File over an existing file: zeros of the new length.
	if _, err := f.Create(ctxBG, 4, nil); err != nil {
		t.Fatal(err)
	}
	dl, _ = f.DownloadStream(ctxBG, nil)
	b, _ = io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(b) != "\x00\x00\x00\x00" {
		t.Fatalf("after create over: %q", b)
	}

	// Rename onto an existing directory fails even with replace.
	if _, err := e.dir("share", "d").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.Rename(ctxBG, "d", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantCode(t, "rename onto a directory", err, "ResourceAlreadyExists")
	// Rename File on a directory source is a type mismatch.
	_, err = e.file("share", "d").Rename(ctxBG, "e", nil)
	wantCode(t, "rename file on a directory", err, "ResourceTypeMismatch")
}

func TestEdgeLastWriteTimePreserve(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("abcdef"))
	when := time.Date(2021, 2, 3, 4, 5, 6, 700, time.UTC)
	if _, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{LastWriteTime: &when}}); err != nil {
		t.Fatal(err)
	}
	resp, err := f.UploadRange(ctxBG, 0, streamOf("x"), &file.UploadRangeOptions{LastWrittenMode: to.Ptr(file.LastWrittenModePreserve)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FileLastWriteTime == nil || !resp.FileLastWriteTime.Equal(when) {
		t.Fatalf("preserve: last write %v, want %v", resp.FileLastWriteTime, when)
	}
	resp, err = f.UploadRange(ctxBG, 0, streamOf("y"), &file.UploadRangeOptions{LastWrittenMode: to.Ptr(file.LastWrittenModeNow)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FileLastWriteTime == nil || !resp.FileLastWriteTime.After(when) {
		t.Fatalf("now: last write %v", resp.FileLastWriteTime)
	}
}
