package filerest_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func TestSASAccount(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	e.mustFile("share", "f.txt", []byte("hello"))
	expiry := time.Now().Add(time.Hour)

	tests := []struct {
		name  string
		rt    sas.AccountResourceTypes
		perms sas.AccountPermissions
		read  string // error code expected reading f.txt ("" = success)
		list  string // error code expected listing shares
	}{
		{"read+list all types", sas.AccountResourceTypes{Service: true, Container: true, Object: true}, sas.AccountPermissions{Read: true, List: true}, "", ""},
		{"no read permission", sas.AccountResourceTypes{Service: true, Container: true, Object: true}, sas.AccountPermissions{List: true}, "AuthorizationPermissionMismatch", ""},
		{"object type missing", sas.AccountResourceTypes{Service: true}, sas.AccountPermissions{Read: true, List: true}, "AuthorizationResourceTypeMismatch", ""},
		{"service type missing", sas.AccountResourceTypes{Object: true}, sas.AccountPermissions{Read: true, List: true}, "", "AuthorizationResourceTypeMismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := e.svc.GetSASURL(tt.rt, tt.perms, expiry, nil)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := service.NewClientWithNoCredential(u, e.serviceOptions())
			if err != nil {
				t.Fatal(err)
			}
			f := svc.NewShareClient("share").NewRootDirectoryClient().NewFileClient("f.txt")
			_, err = f.GetProperties(ctxBG, nil)
			checkCode(t, "read", err, tt.read)
			_, err = svc.NewListSharesPager(nil).NextPage(ctxBG)
			checkCode(t, "list", err, tt.list)
		})
	}

	// Expired.
	u, err := e.svc.GetSASURL(sas.AccountResourceTypes{Service: true, Container: true, Object: true},
		sas.AccountPermissions{Read: true}, time.Now().Add(-time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := service.NewClientWithNoCredential(u, e.serviceOptions())
	_, err = svc.NewShareClient("share").NewRootDirectoryClient().NewFileClient("f.txt").GetProperties(ctxBG, nil)
	checkCode(t, "expired", err, "AuthenticationFailed")
}

func TestSASService(t *testing.T) {
	e := newEnv(t)
	sc := e.mustShare("share")
	fc := e.mustFile("share", "f.txt", []byte("hello"))
	e.mustFile("share", "g.txt", []byte("other"))
	expiry := time.Now().Add(time.Hour)
	opts := &file.ClientOptions{ClientOptions: e.clientOptions()}

	// File SAS, read only: read works, write is refused, another file is refused.
	u, err := fc.GetSASURL(sas.FilePermissions{Read: true}, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := file.NewClientWithNoCredential(u, opts)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatalf("read with file SAS: %v", err)
	}
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("read %q", body)
	}
	_, err = f.UploadRange(ctxBG, 0, streamOf("x"), nil)
	checkCode(t, "write with read-only file SAS", err, "AuthorizationPermissionMismatch")

	// Share SAS with read+write: works on every file of the share.
	su, err := sc.GetSASURL(sas.SharePermissions{Read: true, Write: true, List: true}, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := share.NewClientWithNoCredential(su, &share.ClientOptions{ClientOptions: e.clientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	g := sh.NewRootDirectoryClient().NewFileClient("g.txt")
	if _, err := g.UploadRange(ctxBG, 0, streamOf("O"), nil); err != nil {
		t.Fatalf("write with share SAS: %v", err)
	}
	if _, err := sh.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil).NextPage(ctxBG); err != nil {
		t.Fatalf("list with share SAS: %v", err)
	}
	_, err = g.Delete(ctxBG, nil)
	checkCode(t, "delete without d", err, "AuthorizationPermissionMismatch")
}

func checkCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if errCode(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

func TestSASFileScope(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	fc := e.mustFile("share", "f.txt", []byte("hello"))
	e.mustFile("share", "g.txt", []byte("other"))
	u, err := fc.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same token on another file does not verify.
	other := strings.Replace(u, "/f.txt?", "/g.txt?", 1)
	g, _ := file.NewClientWithNoCredential(other, &file.ClientOptions{ClientOptions: e.clientOptions()})
	_, err = g.GetProperties(ctxBG, nil)
	checkCode(t, "file SAS used on another file", err, "AuthenticationFailed")
}

func TestSharedKeyMetadataOrderOverTheWire(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", nil)
	md := map[string]*string{"a1": to.Ptr("1"), "a_1": to.Ptr("2"), "ab": to.Ptr("3"), "Z_9": to.Ptr("4")}
	if _, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: md}); err != nil {
		t.Fatalf("signature with a1 + a_1 rejected: %v", err)
	}
}
