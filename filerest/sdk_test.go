package filerest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

var ctxBG = context.Background()

func errCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want %s", what, code)
	}
	if got := errCode(err); got != code {
		t.Fatalf("%s: error code %q (%v), want %q", what, got, err, code)
	}
}

func TestSDKShares(t *testing.T) {
	e := newEnv(t)
	s := e.share("alpha")
	if _, err := s.Create(ctxBG, &share.CreateOptions{Quota: to.Ptr(int32(10)), Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Create(ctxBG, nil)
	wantCode(t, "create twice", err, string(fileerror.ShareAlreadyExists))
	e.mustShare("beta")

	props, err := s.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if props.Quota == nil || *props.Quota != 10 || props.ETag == nil || props.LastModified == nil {
		t.Fatalf("share props %+v", props)
	}
	if v := props.Metadata["K"]; v == nil || *v != "v" {
		if v = props.Metadata["k"]; v == nil || *v != "v" {
			t.Fatalf("share metadata %v", props.Metadata)
		}
	}
	if _, err := s.SetProperties(ctxBG, &share.SetPropertiesOptions{Quota: to.Ptr(int32(20))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetMetadata(ctxBG, &share.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("1"), "b": to.Ptr("2")}}); err != nil {
		t.Fatal(err)
	}
	props, err = s.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *props.Quota != 20 || len(props.Metadata) != 2 {
		t.Fatalf("after set: quota %d metadata %v", *props.Quota, props.Metadata)
	}

	var names []string
	pager := e.svc.NewListSharesPager(&service.ListSharesOptions{Include: service.ListSharesInclude{Metadata: true}, MaxResults: to.Ptr(int32(1))})
	for pager.More() {
		page, err := pager.NextPage(ctxBG)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range page.Shares {
			names = append(names, *sh.Name)
			if *sh.Name == "alpha" && len(sh.Metadata) != 2 {
				t.Errorf("listed metadata %v", sh.Metadata)
			}
		}
	}
	if strings.Join(names, ",") != "alpha,beta" {
		t.Fatalf("listed shares %v", names)
	}
	pager = e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: to.Ptr("be")})
	page, err := pager.NextPage(ctxBG)
	if err != nil || len(page.Shares) != 1 || *page.Shares[0].Name != "beta" {
		t.Fatalf("prefix listing: %v %v", page.Shares, err)
	}

	if _, err := s.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetProperties(ctxBG, nil)
	wantCode(t, "get deleted share", err, string(fileerror.ShareNotFound))
	_, err = e.share("Bad_Name").Create(ctxBG, nil)
	wantCode(t, "bad share name", err, "InvalidResourceName")
}

func TestSDKDirectories(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	d := e.dir("share", "dir")
	cr, err := d.Create(ctxBG, &directory.CreateOptions{Metadata: map[string]*string{"m": to.Ptr("1")}})
	if err != nil {
		t.Fatal(err)
	}
	if cr.FileAttributes == nil || !strings.Contains(*cr.FileAttributes, "Directory") || cr.ID == nil || cr.FileCreationTime == nil {
		t.Fatalf("create dir response %+v", cr)
	}
	_, err = d.Create(ctxBG, nil)
	wantCode(t, "create existing dir", err, string(fileerror.ResourceAlreadyExists))
	_, err = e.dir("share", "missing/sub").Create(ctxBG, nil)
	wantCode(t, "create under missing parent", err, string(fileerror.ParentNotFound))

	gp, err := d.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Metadata) != 1 || gp.ID == nil || *gp.ID != *cr.ID {
		t.Fatalf("dir props %+v", gp)
	}
	if _, err := e.dir("share", "").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("root dir props: %v", err)
	}
	when := time.Date(2020, 5, 6, 7, 8, 9, 123456700, time.UTC)
	sp, err := d.SetProperties(ctxBG, &directory.SetPropertiesOptions{FileSMBProperties: &file.SMBProperties{
		Attributes: &file.NTFSFileAttributes{Hidden: true}, CreationTime: &when,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*sp.FileAttributes, "Hidden") || !sp.FileCreationTime.Equal(when) {
		t.Fatalf("set dir props: %s %v", *sp.FileAttributes, sp.FileCreationTime)
	}
	if _, err := d.SetMetadata(ctxBG, &directory.SetMetadataOptions{Metadata: map[string]*string{"x": to.Ptr("y"), "z": to.Ptr("w")}}); err != nil {
		t.Fatal(err)
	}
	gp, _ = d.GetProperties(ctxBG, nil)
	if len(gp.Metadata) != 2 {
		t.Fatalf("metadata after set %v", gp.Metadata)
	}

	// Listing: interleaved, sorted, paged, with prefix and include.
	for _, n := range []string{"b.txt", "a.txt", "c.txt"} {
		e.mustFile("share", "dir/"+n, []byte(n))
	}
	if _, err := e.dir("share", "dir/bsub").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	pager := d.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{
		MaxResults: to.Ptr(int32(2)),
		Include:    directory.ListFilesInclude{Timestamps: true, ETag: true, Attributes: true, PermissionKey: true},
	})
	for pager.More() {
		page, err := pager.NextPage(ctxBG)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Segment.Files {
			got = append(got, "f:"+*f.Name)
			if f.Properties == nil || f.Properties.ContentLength == nil || *f.Properties.ContentLength != 5 || f.Properties.ETag == nil || f.Attributes == nil || f.ID == nil {
				t.Errorf("file entry %+v", f)
			}
		}
		for _, dd := range page.Segment.Directories {
			got = append(got, "d:"+*dd.Name)
		}
	}
	if len(got) != 4 {
		t.Fatalf("listed %v", got)
	}
	page, err := d.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{Prefix: to.Ptr("b")}).NextPage(ctxBG)
	if err != nil || len(page.Segment.Files)+len(page.Segment.Directories) != 2 {
		t.Fatalf("prefix listing %+v %v", page.Segment, err)
	}

	_, err = d.Delete(ctxBG, nil)
	wantCode(t, "delete non-empty dir", err, string(fileerror.DirectoryNotEmpty))
	if _, err := e.dir("share", "dir/bsub").Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.dir("share", "dir/bsub").GetProperties(ctxBG, nil)
	wantCode(t, "deleted dir", err, string(fileerror.ResourceNotFound))

	// Rename a directory.
	if _, err := e.dir("share", "dir").Rename(ctxBG, "renamed", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.file("share", "renamed/a.txt").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("file after dir rename: %v", err)
	}
}

func TestSDKFiles(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.file("share", "a b.txt")
	cr, err := f.Create(ctxBG, 10, &file.CreateOptions{
		HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/plain"), ContentLanguage: to.Ptr("en")},
		Metadata:    map[string]*string{"m": to.Ptr("1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cr.FileAttributes == nil || *cr.FileAttributes != "Archive" || cr.ETag == nil {
		t.Fatalf("create response attrs %v", cr.FileAttributes)
	}
	if _, err := f.UploadRange(ctxBG, 0, streamOf("hello"), nil); err != nil {
		t.Fatal(err)
	}
	// Put Range with a transactional MD5.
	sum := md5.Sum([]byte("world"))
	if _, err := f.UploadRange(ctxBG, 5, streamOf("world"), &file.UploadRangeOptions{
		TransactionalValidation: file.TransferValidationTypeMD5(sum[:]),
	}); err != nil {
		t.Fatal(err)
	}
	bad := md5.Sum([]byte("other"))
	_, err = f.UploadRange(ctxBG, 0, streamOf("xxxxx"), &file.UploadRangeOptions{TransactionalValidation: file.TransferValidationTypeMD5(bad[:])})
	wantCode(t, "md5 mismatch", err, "Md5Mismatch")

	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dl.Body)
	if string(body) != "helloworld" || *dl.ContentType != "text/plain" || *dl.ContentLanguage != "en" {
		t.Fatalf("download %q type %v", body, dl.ContentType)
	}
	dl, err = f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 3, Count: 4}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(dl.Body)
	if string(body) != "lowo" || dl.ContentRange == nil || *dl.ContentRange != "bytes 3-6/10" {
		t.Fatalf("ranged download %q %v", body, dl.ContentRange)
	}
	_, err = f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 10}})
	wantCode(t, "range past end", err, string(fileerror.InvalidRange))

	buf := make([]byte, 10)
	if _, err := f.DownloadBuffer(ctxBG, buf, nil); err != nil || string(buf) != "helloworld" {
		t.Fatalf("download buffer %q %v", buf, err)
	}

	// Properties, metadata, resize.
	gp, err := f.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *gp.ContentLength != 10 || len(gp.Metadata) != 1 || gp.FileCreationTime == nil || gp.LeaseState == nil {
		t.Fatalf("props %+v", gp)
	}
	if _, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"q": to.Ptr("r")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resize(ctxBG, 20, nil); err != nil {
		t.Fatal(err)
	}
	gp, _ = f.GetProperties(ctxBG, nil)
	if *gp.ContentLength != 20 || gp.ContentType == nil || *gp.ContentType != "text/plain" || gp.Metadata["Q"] == nil && gp.Metadata["q"] == nil {
		t.Fatalf("after resize %+v", gp)
	}
	if _, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("application/json")}}); err != nil {
		t.Fatal(err)
	}
	gp, _ = f.GetProperties(ctxBG, nil)
	if *gp.ContentType != "application/json" || gp.ContentLanguage != nil || *gp.ContentLength != 20 {
		t.Fatalf("after set headers type %v lang %v", gp.ContentType, gp.ContentLanguage)
	}

	// Clear a range and list ranges.
	big := e.mustFile("share", "big.bin", bytes.Repeat([]byte{7}, 3*4096))
	if _, err := big.ClearRange(ctxBG, file.HTTPRange{Offset: 0, Count: 4096}, nil); err != nil {
		t.Fatal(err)
	}
	lr, err := big.GetRangeList(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr.FileContentLength == nil || *lr.FileContentLength != 3*4096 {
		t.Fatalf("range list size %v", lr.FileContentLength)
	}
	dl, err = big.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(dl.Body)
	if !bytes.Equal(body[:4096], make([]byte, 4096)) || body[4096] != 7 {
		t.Fatalf("cleared range not zero")
	}

	// Copy within the account, then rename.
	cp := e.file("share", "copy.txt")
	if _, err := cp.StartCopyFromURL(ctxBG, f.URL(), nil); err != nil {
		t.Fatal(err)
	}
	gp, err = cp.GetProperties(ctxBG, nil)
	if err != nil || *gp.ContentLength != 20 {
		t.Fatalf("copy props %v %v", gp.ContentLength, err)
	}
	// Put Range from URL: the source is authorized by its own SAS.
	dst := e.mustFile("share", "dst.bin", make([]byte, 8))
	srcSAS, err := f.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.UploadRangeFromURL(ctxBG, srcSAS, 0, 2, 5, nil); err != nil {
		t.Fatal(err)
	}
	dl, _ = dst.DownloadStream(ctxBG, nil)
	body, _ = io.ReadAll(dl.Body)
	if string(body[2:7]) != "hello" {
		t.Fatalf("put range from url: %q", body)
	}

	if _, err := cp.Rename(ctxBG, "moved.txt", nil); err != nil {
		t.Fatal(err)
	}
	_, err = cp.GetProperties(ctxBG, nil)
	wantCode(t, "renamed source", err, string(fileerror.ResourceNotFound))
	if _, err := e.file("share", "moved.txt").GetProperties(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.file("share", "moved.txt").Rename(ctxBG, "dst.bin", nil)
	wantCode(t, "rename onto existing without replace", err, string(fileerror.ResourceAlreadyExists))
	if _, err := e.file("share", "moved.txt").Rename(ctxBG, "dst.bin", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)}); err != nil {
		t.Fatal(err)
	}

	if _, err := f.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.GetProperties(ctxBG, nil)
	wantCode(t, "deleted file (HEAD)", err, string(fileerror.ResourceNotFound))
	_, err = e.file("share", "nodir/x").Create(ctxBG, 1, nil)
	wantCode(t, "create in missing dir", err, string(fileerror.ParentNotFound))
}

func TestSDKLargeUpload(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	data := make([]byte, 9<<20+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	f := e.mustFile("share", "large.bin", data)
	got := make([]byte, len(data))
	if _, err := f.DownloadBuffer(ctxBG, got, &file.DownloadBufferOptions{ChunkSize: 4 << 20, Concurrency: 4}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("round trip differs")
	}
}

type rsc struct{ *strings.Reader }

func (rsc) Close() error { return nil }

func streamOf(s string) rsc { return rsc{strings.NewReader(s)} }

func TestSDKServiceProperties(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.SetProperties(ctxBG, &service.SetPropertiesOptions{
		HourMetrics: &service.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"),
			RetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(3))}},
		CORS: []*service.CORSRule{{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("x"), ExposedHeaders: to.Ptr("y"), MaxAgeInSeconds: to.Ptr(int32(5))}},
	}); err != nil {
		t.Fatal(err)
	}
	p, err := e.svc.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.HourMetrics == nil || !*p.HourMetrics.Enabled || *p.HourMetrics.RetentionPolicy.Days != 3 || len(p.CORS) != 1 || *p.CORS[0].MaxAgeInSeconds != 5 {
		t.Fatalf("service properties %+v", p)
	}
	if p.MinuteMetrics == nil || *p.MinuteMetrics.Enabled {
		t.Fatalf("minute metrics should keep the default: %+v", p.MinuteMetrics)
	}

	// The document is stored with the shares: a second server on the same
	// database (another process, or serve after a restart) answers it.
	table, err := locks.Open(ctxBG, filepath.Join(e.dataDir, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		t.Fatal(err)
	}
	defer table.Close(ctxBG)
	store, err := local.New(filepath.Join(e.dataDir, "blobs"), local.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.New(ctxBG, fs.Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: e.dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close(ctxBG)
	h, err := filerest.New(filerest.Config{FS: fsys, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(h)
	defer other.Close()
	svc2, err := service.NewClientWithSharedKeyCredential(other.URL+"/"+filerest.DevAccount+"/", e.cred, e.serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	p2, err := svc2.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p2.HourMetrics == nil || !*p2.HourMetrics.Enabled || *p2.HourMetrics.RetentionPolicy.Days != 3 || len(p2.CORS) != 1 || *p2.CORS[0].AllowedOrigins != "*" {
		t.Fatalf("the second server answers %+v, want what the first stored", p2)
	}
}
