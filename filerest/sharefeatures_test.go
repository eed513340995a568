package filerest_test

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

// Provisioned-share and SMB options are stored as given and reported by
// Get Share Properties and List Shares; Set Share Properties changes the
// ones it names.
func TestShareStoredProperties(t *testing.T) {
	e := newEnv(t)
	s := e.share("provisioned")
	if _, err := s.Create(ctxBG, &share.CreateOptions{
		ShareProvisionedIops: to.Ptr(int64(3000)), ShareProvisionedBandwidthMibps: to.Ptr(int64(125)),
		PaidBurstingEnabled: to.Ptr(true), PaidBurstingMaxIops: to.Ptr(int64(10000)),
		EnableSnapshotVirtualDirectoryAccess: to.Ptr(false),
	}); err != nil {
		t.Fatal(err)
	}
	p, err := s.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if deref(p.ProvisionedIops) != 3000 || deref(p.ProvisionedBandwidthMiBps) != 125 || !deref(p.PaidBurstingEnabled) ||
		deref(p.PaidBurstingMaxIops) != 10000 || p.EnableSnapshotVirtualDirectoryAccess == nil || *p.EnableSnapshotVirtualDirectoryAccess {
		t.Fatalf("stored properties: iops %v bw %v burst %v max %v snapdir %v", deref(p.ProvisionedIops), deref(p.ProvisionedBandwidthMiBps),
			deref(p.PaidBurstingEnabled), deref(p.PaidBurstingMaxIops), p.EnableSnapshotVirtualDirectoryAccess)
	}
	if _, err := s.SetProperties(ctxBG, &share.SetPropertiesOptions{ShareProvisionedIops: to.Ptr(int64(4000))}); err != nil {
		t.Fatalf("set provisioned IOPS: %v", err)
	}
	page, err := e.svc.NewListSharesPager(nil).NextPage(ctxBG)
	if err != nil || len(page.Shares) != 1 {
		t.Fatal(err)
	}
	lp := page.Shares[0].Properties
	if deref(lp.ProvisionedIops) != 4000 || deref(lp.ProvisionedBandwidthMiBps) != 125 || !deref(lp.PaidBurstingEnabled) {
		t.Fatalf("listed: iops %v bw %v burst %v", deref(lp.ProvisionedIops), deref(lp.ProvisionedBandwidthMiBps), deref(lp.PaidBurstingEnabled))
	}
	_, err = s.SetProperties(ctxBG, &share.SetPropertiesOptions{ShareProvisionedIops: to.Ptr(int64(-1))})
	wantCode(t, "negative IOPS", err, "InvalidHeaderValue")
}
