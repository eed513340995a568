package rest_test

// SDK-level tests of the share features clients expect (issue 16).

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func TestShareStatsAndQuota(t *testing.T) {
	e := newEnv(t)
	s := e.share("small")
	if _, err := s.Create(ctxBG, &share.CreateOptions{Quota: to.Ptr(int32(1))}); err != nil {
		t.Fatal(err)
	}
	usage := func() int64 {
		t.Helper()
		st, err := s.GetStatistics(ctxBG, nil)
		if err != nil || st.ShareUsageBytes == nil {
			t.Fatalf("share stats: %v", err)
		}
		return *st.ShareUsageBytes
	}
	if u := usage(); u != 0 {
		t.Fatalf("usage of an empty share %d", u)
	}
	e.mustFile("small", "a", []byte("hello"))
	if _, err := e.dir("small", "d").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	const half = 512 << 20
	deep := e.share("small").NewDirectoryClient("d").NewFileClient("big")
	if _, err := deep.Create(ctxBG, half, nil); err != nil {
		t.Fatal(err)
	}
	if u := usage(); u != half+5 {
		t.Fatalf("usage %d, want %d (sizes of every file, nested ones too)", u, half+5)
	}

	// Writes past the quota (1 GiB) answer 403 ShareSizeLimitReached and
	// change nothing.
	_, err := e.file("small", "c").Create(ctxBG, half, nil)
	wantCode(t, "create past the quota", err, "ShareSizeLimitReached")
	if _, err := e.file("small", "c").GetProperties(ctxBG, nil); err == nil {
		t.Fatal("the refused file exists")
	}
	_, err = deep.Resize(ctxBG, half+half, nil)
	wantCode(t, "resize past the quota", err, "ShareSizeLimitReached")
	_, err = e.dir("small", "").NewFileClient("copy").StartCopyFromURL(ctxBG, deep.URL(), nil)
	wantCode(t, "copy past the quota", err, "ShareSizeLimitReached")
	if u := usage(); u != half+5 {
		t.Fatalf("usage after refused writes %d", u)
	}
	// Up to the quota is fine, shrinking always is.
	if _, err := deep.Resize(ctxBG, 1<<30-5, nil); err != nil {
		t.Fatalf("resize to exactly the quota: %v", err)
	}
	if _, err := deep.Resize(ctxBG, 10, nil); err != nil {
		t.Fatalf("shrink: %v", err)
	}
	// A bigger quota makes room.
	if _, err := s.SetProperties(ctxBG, &share.SetPropertiesOptions{Quota: to.Ptr(int32(2))}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.file("small", "c").Create(ctxBG, 1<<30+half, nil); err != nil {
		t.Fatalf("create within the raised quota: %v", err)
	}
	// Deleting frees usage.
	if _, err := deep.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.share("small").NewDirectoryClient("d").Delete(ctxBG, &directory.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := usage(); u != 1<<30+half+5 {
		t.Fatalf("usage after delete %d", u)
	}
}

// NFS shares get one answer: 400 InvalidHeaderValue naming the header,
// on create and on Set Share Properties.
func TestNFSSharesRefused(t *testing.T) {
	e := newEnv(t)
	_, err := e.share("nfsshare").Create(ctxBG, &share.CreateOptions{EnabledProtocols: to.Ptr("NFS")})
	wantCode(t, "NFS share", err, "InvalidHeaderValue")
	_, err = e.share("nfsshare").Create(ctxBG, &share.CreateOptions{RootSquash: to.Ptr(share.RootSquashRootSquash)})
	wantCode(t, "root squash", err, "InvalidHeaderValue")
	if _, err := e.share("nfsshare").GetProperties(ctxBG, nil); err == nil {
		t.Fatal("a refused NFS share exists")
	}
	s := e.mustShare("smbshare")
	_, err = s.SetProperties(ctxBG, &share.SetPropertiesOptions{RootSquash: to.Ptr(share.RootSquashNoRootSquash)})
	wantCode(t, "root squash on an SMB share", err, "InvalidHeaderValue")
	if _, err := e.share("smb2").Create(ctxBG, &share.CreateOptions{EnabledProtocols: to.Ptr("SMB")}); err != nil {
		t.Fatalf("SMB named explicitly: %v", err)
	}
}
