package filerest_test

// Regression tests for the defects real clients found (issue 16): each
// asserts the documented Azure behaviour through the azfile SDK, or raw
// HTTP where the SDK cannot say it.

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func TestFidelityCopyCarriesSourceSMBProperties(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	base := time.Date(2023, 3, 31, 20, 0, 0, 0, time.UTC)
	src := e.mustFile("share", "src.txt", []byte("content"))
	if _, err := src.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{
		Attributes:    &file.NTFSFileAttributes{ReadOnly: true, Hidden: true},
		CreationTime:  to.Ptr(base.Add(time.Minute)),
		LastWriteTime: to.Ptr(base.Add(2 * time.Minute)),
		ChangeTime:    to.Ptr(base.Add(3 * time.Minute)),
	}}); err != nil {
		t.Fatal(err)
	}
	sp, err := src.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}

	// A ReadOnly source copied to a new destination, every property from
	// the source.
	dst := e.file("share", "dst.txt")
	cr, err := dst.StartCopyFromURL(ctxBG, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		CreationTime:       file.SourceCopyFileCreationTime{},
		LastWriteTime:      file.SourceCopyFileLastWriteTime{},
		ChangeTime:         file.SourceCopyFileChangeTime{},
		Attributes:         file.SourceCopyFileAttributes{},
		PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeSource),
	}})
	if err != nil {
		t.Fatalf("copy of a ReadOnly source to a new destination: %v", err)
	}
	dp, err := dst.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want *time.Time
	}{
		{"creation", dp.FileCreationTime, sp.FileCreationTime},
		{"last write", dp.FileLastWriteTime, sp.FileLastWriteTime},
		{"change", dp.FileChangeTime, sp.FileChangeTime},
	} {
		if c.got == nil || c.want == nil || !c.got.Equal(*c.want) {
			t.Errorf("%s time %v, want the source's %v", c.name, c.got, c.want)
		}
	}
	if *dp.FileAttributes != *sp.FileAttributes || *dp.FilePermissionKey != *sp.FilePermissionKey {
		t.Errorf("attributes %q key %q, want the source's %q %q", *dp.FileAttributes, *dp.FilePermissionKey, *sp.FileAttributes, *sp.FilePermissionKey)
	}
	// The copy record of the destination.
	if dp.CopyID == nil || *dp.CopyID != *cr.CopyID || dp.CopySource == nil || *dp.CopySource != src.URL() ||
		dp.CopyStatus == nil || *dp.CopyStatus != file.CopyStatusTypeSuccess || dp.CopyProgress == nil || *dp.CopyProgress != "7/7" ||
		dp.CopyCompletionTime == nil {
		t.Fatalf("copy properties id=%v source=%v status=%v progress=%v completion=%v (copy id %v)",
			deref(dp.CopyID), deref(dp.CopySource), dp.CopyStatus, deref(dp.CopyProgress), dp.CopyCompletionTime, *cr.CopyID)
	}
	dl, err := dst.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(body) != "content" || dl.CopyID == nil || *dl.CopyID != *cr.CopyID {
		t.Fatalf("Get File of the copy: %q copy id %v", body, dl.CopyID)
	}

	// The destination now exists and is ReadOnly: overwriting it needs
	// ignore-readonly.
	_, err = dst.StartCopyFromURL(ctxBG, src.URL(), nil)
	wantCode(t, "copy onto a ReadOnly destination", err, string(fileerror.ReadOnlyAttribute))
	if _, err := dst.StartCopyFromURL(ctxBG, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		IgnoreReadOnly:      to.Ptr(true),
		Attributes:          file.DestinationCopyFileAttributes{Temporary: true},
		SetArchiveAttribute: to.Ptr(true),
	}}); err != nil {
		t.Fatalf("copy with ignore-readonly: %v", err)
	}
	dp, err = dst.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := file.ParseNTFSFileAttributes(dp.FileAttributes)
	if err != nil || !attrs.Temporary || !attrs.Archive || attrs.ReadOnly {
		t.Fatalf("attributes after an override with set-archive: %q %v", *dp.FileAttributes, err)
	}
	// Without "source" the times are the copy's, not the source's.
	if dp.FileCreationTime.Equal(*sp.FileCreationTime) {
		t.Fatalf("creation time copied without being asked: %v", dp.FileCreationTime)
	}

	// Override without a permission is refused.
	_, err = dst.StartCopyFromURL(ctxBG, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeOverride),
	}})
	wantCode(t, "override without a permission", err, "MissingRequiredHeader")

	// Set File Properties ends the copy record (Azure drops x-ms-copy-*).
	if _, err := dst.SetHTTPHeaders(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	dp, err = dst.GetProperties(ctxBG, nil)
	if err != nil || dp.CopyID != nil || dp.CopyStatus != nil {
		t.Fatalf("copy record after Set File Properties: %v %v", dp.CopyID, err)
	}
}

func TestFidelityFileReadOnDirectoryIsNotFound(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	if _, err := e.dir("share", "d").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	f := e.file("share", "d")
	_, err := f.GetProperties(ctxBG, nil)
	wantCode(t, "Get File Properties on a directory", err, string(fileerror.ResourceNotFound))
	_, err = f.DownloadStream(ctxBG, nil)
	wantCode(t, "Get File on a directory", err, string(fileerror.ResourceNotFound))
}

func TestFidelityStoredContentMD5AnyLength(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.file("share", "m.txt")
	stored := []byte("not-an-md5-at-all")
	if _, err := f.Create(ctxBG, 4, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: stored}}); err != nil {
		t.Fatalf("create with a %d-byte x-ms-content-md5: %v", len(stored), err)
	}
	p, err := f.GetProperties(ctxBG, nil)
	if err != nil || string(p.ContentMD5) != string(stored) {
		t.Fatalf("stored MD5 %q %v, want %q", p.ContentMD5, err, stored)
	}
	if _, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: []byte{1, 2, 3}}}); err != nil {
		t.Fatalf("set a 3-byte x-ms-content-md5: %v", err)
	}
}

func TestFidelityCreateFileBodyMD5Mismatch(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	r := e.do(t, "PUT", "/devstoreaccount1/share/b.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "4",
		"x-ms-version": "2026-02-06"}, []byte("keep"))
	if r.status != 201 {
		t.Fatalf("create with body: %d %s", r.status, r.body)
	}
	// Replacing it with a body whose Content-MD5 is wrong fails and
	// leaves the file as it was.
	r = e.do(t, "PUT", "/devstoreaccount1/share/b.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "4",
		"x-ms-version": "2026-02-06", "Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="}, []byte("lost"))
	checkError(t, "create with a wrong Content-MD5", r, "PUT", 400, "Md5Mismatch")
	r = e.do(t, "GET", "/devstoreaccount1/share/b.txt", nil, nil)
	if r.status != 200 || string(r.body) != "keep" {
		t.Fatalf("after the refused create: %d %q", r.status, r.body)
	}
	// The right sum is accepted.
	r = e.do(t, "PUT", "/devstoreaccount1/share/b.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "4",
		"x-ms-version": "2026-02-06", "Content-MD5": "CY9rzUYh03PK3k6DJie09g=="}, []byte("test"))
	if r.status != 201 || r.header.Get("Content-MD5") != "CY9rzUYh03PK3k6DJie09g==" {
		t.Fatalf("create with a right Content-MD5: %d %s %q", r.status, r.body, r.header.Get("Content-MD5"))
	}
}

func TestFidelityShareAccessTier(t *testing.T) {
	e := newEnv(t)
	s := e.share("tiered")
	if _, err := s.Create(ctxBG, &share.CreateOptions{AccessTier: to.Ptr(share.AccessTierCool)}); err != nil {
		t.Fatal(err)
	}
	p, err := s.GetProperties(ctxBG, nil)
	if err != nil || deref(p.AccessTier) != "Cool" {
		t.Fatalf("tier after create %v %v", deref(p.AccessTier), err)
	}
	if _, err := s.SetProperties(ctxBG, &share.SetPropertiesOptions{AccessTier: to.Ptr(share.AccessTierHot)}); err != nil {
		t.Fatal(err)
	}
	p, err = s.GetProperties(ctxBG, nil)
	if err != nil || deref(p.AccessTier) != "Hot" || deref(p.Quota) != 5120 {
		t.Fatalf("after setting the tier: tier %v quota %v %v", deref(p.AccessTier), deref(p.Quota), err)
	}
	page, err := e.svc.NewListSharesPager(nil).NextPage(ctxBG)
	if err != nil || len(page.Shares) != 1 || deref(page.Shares[0].Properties.AccessTier) != "Hot" {
		t.Fatalf("listing %+v %v", page.Shares, err)
	}
	_, err = s.SetProperties(ctxBG, &share.SetPropertiesOptions{AccessTier: to.Ptr(share.AccessTier("Frozen"))})
	wantCode(t, "unknown tier", err, "InvalidHeaderValue")
}

func TestFidelityRenameDirectoryOntoFile(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	mkdir := func(name string) *directory.Client {
		d := e.dir("share", name)
		if _, err := d.Create(ctxBG, nil); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := mkdir("d")
	e.mustFile("share", "target", []byte("x"))
	_, err := d.Rename(ctxBG, "target", nil)
	wantCode(t, "rename onto a file without replace", err, string(fileerror.ResourceAlreadyExists))
	if _, err := d.Rename(ctxBG, "target", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true)}); err != nil {
		t.Fatalf("rename onto a file with replace-if-exists: %v", err)
	}
	if _, err := e.dir("share", "target").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("the directory under the file's name: %v", err)
	}

	// A ReadOnly file needs ignore-readonly.
	d2 := mkdir("d2")
	ro := e.mustFile("share", "ro", []byte("x"))
	if _, err := ro.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}}); err != nil {
		t.Fatal(err)
	}
	_, err = d2.Rename(ctxBG, "ro", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantCode(t, "rename onto a ReadOnly file", err, string(fileerror.ReadOnlyAttribute))
	if _, err := d2.Rename(ctxBG, "ro", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true), IgnoreReadOnly: to.Ptr(true)}); err != nil {
		t.Fatalf("rename onto a ReadOnly file with ignore-readonly: %v", err)
	}

	// A leased file needs its lease id.
	d3 := mkdir("d3")
	leased := e.mustFile("share", "leased", []byte("x"))
	lc, err := lease.NewFileClient(leased, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d3.Rename(ctxBG, "leased", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true)}); err == nil {
		t.Fatal("rename onto a leased file without its lease id succeeded")
	}
	if _, err := d3.Rename(ctxBG, "leased", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true),
		DestinationLeaseAccessConditions: &directory.DestinationLeaseAccessConditions{DestinationLeaseID: lc.LeaseID()}}); err != nil {
		t.Fatalf("rename onto a leased file with its lease id: %v", err)
	}
}

func TestFidelityErrorCodes(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	e.mustFileRaw(t, "/devstoreaccount1/share/f", []byte("x"))
	for _, c := range []struct {
		name, method, path string
		headers            map[string]string
		status             int
		code               string
	}{
		{"negative maxresults", "GET", "/devstoreaccount1/share?restype=directory&comp=list&maxresults=-1", nil, 400, "OutOfRangeQueryParameterValue"},
		{"zero maxresults on shares", "GET", "/devstoreaccount1/?comp=list&maxresults=0", nil, 400, "OutOfRangeQueryParameterValue"},
		{"negative quota", "PUT", "/devstoreaccount1/other?restype=share", map[string]string{"x-ms-share-quota": "-1"}, 400, "InvalidHeaderValue"},
		{"abort copy, no copy", "PUT", "/devstoreaccount1/share/f?comp=copy&copyid=6b9ab2a6-1b8e-4bb4-9d5c-8a4d2d0b5a0e", map[string]string{"x-ms-copy-action": "abort"}, 409, "NoPendingCopyOperation"},
		{"abort copy, malformed id", "PUT", "/devstoreaccount1/share/f?comp=copy&copyid=nope", map[string]string{"x-ms-copy-action": "abort"}, 400, "InvalidQueryParameterValue"},
		{"None with ReadOnly", "PUT", "/devstoreaccount1/share/g", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0", "x-ms-file-attributes": "None|ReadOnly"}, 400, "InvalidHeaderValue"},
		{"ReadOnly with none", "PUT", "/devstoreaccount1/share/f?comp=properties", map[string]string{"x-ms-file-attributes": "ReadOnly | none"}, 400, "InvalidHeaderValue"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, c.method, c.path, c.headers, nil)
			checkError(t, c.name, r, c.method, c.status, c.code)
		})
	}
	r := e.do(t, "GET", "/devstoreaccount1/share/g", nil, nil)
	checkError(t, "file refused for its attributes must not exist", r, "GET", 404, "ResourceNotFound")
}

func TestFidelityShareSASCannotReadShareProperties(t *testing.T) {
	e := newEnv(t)
	sc := e.mustShare("share")
	e.mustFile("share", "f.txt", []byte("hello"))
	u, err := sc.GetSASURL(sas.SharePermissions{Read: true, Write: true, List: true, Create: true, Delete: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := share.NewClientWithNoCredential(u, &share.ClientOptions{ClientOptions: e.clientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sh.GetProperties(ctxBG, nil)
	wantCode(t, "Get Share Properties with a share SAS", err, "AuthorizationFailure")
	_, err = sh.SetMetadata(ctxBG, nil)
	wantCode(t, "Set Share Metadata with a share SAS", err, "AuthorizationFailure")
	// Files and directories of the share stay reachable.
	if _, err := sh.NewRootDirectoryClient().NewFileClient("f.txt").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("file properties with a share SAS: %v", err)
	}
	if _, err := sh.NewRootDirectoryClient().GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("root directory properties with a share SAS: %v", err)
	}
	// An account SAS with the container resource type still may.
	acct, err := e.svc.GetSASURL(sas.AccountResourceTypes{Container: true}, sas.AccountPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	asvc, err := service.NewClientWithNoCredential(acct, e.serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asvc.NewShareClient("share").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("share properties with an account SAS: %v", err)
	}
}

func TestFidelityPutRangeFromURLNeedsSourceAuthorization(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	src := e.mustFile("share", "src", []byte("hello"))
	dst := e.mustFile("share", "dst", make([]byte, 5))
	_, err := dst.UploadRangeFromURL(ctxBG, src.URL(), 0, 0, 5, nil)
	wantCode(t, "source without a SAS", err, "CannotVerifyCopySource")
	writeOnly, err := src.GetSASURL(sas.FilePermissions{Write: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dst.UploadRangeFromURL(ctxBG, writeOnly, 0, 0, 5, nil)
	wantCode(t, "source SAS without read", err, "CannotVerifyCopySource")
	forged := strings.Replace(writeOnly, "sp=w", "sp=r", 1)
	_, err = dst.UploadRangeFromURL(ctxBG, forged, 0, 0, 5, nil)
	wantCode(t, "source SAS that does not verify", err, "CannotVerifyCopySource")
	dl, err := dst.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(body) != "\x00\x00\x00\x00\x00" {
		t.Fatalf("refused copies wrote %q", body)
	}
	readable, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.UploadRangeFromURL(ctxBG, readable, 0, 0, 5, nil); err != nil {
		t.Fatalf("source with a read SAS: %v", err)
	}
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
