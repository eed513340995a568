package filerest_test

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
)

func listDeleted(t *testing.T, e *env) []*service.Share {
	t.Helper()
	page, err := e.svc.NewListSharesPager(&service.ListSharesOptions{Include: service.ListSharesInclude{Deleted: true}}).NextPage(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	return page.Shares
}

func TestShareSoftDeleteAndRestore(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock), func(c *filerest.Config) { c.ShareDeleteRetention = 7 * 24 * time.Hour })
	e.mustShare("keep")
	e.mustFile("keep", "f.txt", []byte("still here"))
	if _, err := e.share("keep").Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.file("keep", "f.txt").GetProperties(ctxBG, nil)
	wantCode(t, "a file of a soft-deleted share", err, "ShareNotFound")
	shares := listDeleted(t, e)
	if len(shares) != 1 || !deref(shares[0].Deleted) || deref(shares[0].Version) == "" ||
		shares[0].Properties.DeletedTime == nil || deref(shares[0].Properties.RemainingRetentionDays) != 7 {
		t.Fatalf("deleted share listing %+v", shares)
	}
	version := *shares[0].Version
	// Without include=deleted it is not listed.
	if page, _ := e.svc.NewListSharesPager(nil).NextPage(ctxBG); len(page.Shares) != 0 {
		t.Fatalf("plain listing shows %d shares", len(page.Shares))
	}

	// A new share may take the name; restoring then conflicts.
	e.mustShare("keep")
	_, err = e.svc.RestoreShare(ctxBG, "keep", version, nil)
	wantCode(t, "restore over a live share", err, "ShareAlreadyExists")
	if _, err := e.share("keep").Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if got := listDeleted(t, e); len(got) != 2 {
		t.Fatalf("two deleted shares of one name: %d", len(got))
	}
	_, err = e.svc.RestoreShare(ctxBG, "keep", "0000000000000000", nil)
	wantCode(t, "restore an unknown version", err, "ShareNotFound")

	clock.Advance(3 * 24 * time.Hour)
	if _, err := e.svc.RestoreShare(ctxBG, "keep", version, nil); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got, err := download(t, e.file("keep", "f.txt")); err != nil || string(got) != "still here" {
		t.Fatalf("restored content %q %v", got, err)
	}
	if got := listDeleted(t, e); len(got) != 2 || deref(got[0].Deleted) || !deref(got[1].Deleted) {
		t.Fatalf("after restore: live share then the other deleted one, got %d", len(got))
	}

	// Past the retention a deleted share is gone for good.
	clock.Advance(5 * 24 * time.Hour)
	if got := listDeleted(t, e); len(got) != 1 || deref(got[0].Deleted) {
		t.Fatalf("after the retention: %d shares", len(got))
	}
}

// Without retention, Delete Share deletes at once and nothing is listed
// as deleted.
func TestShareHardDeleteByDefault(t *testing.T) {
	e := newEnv(t)
	e.mustShare("gone")
	if _, err := e.share("gone").Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	if got := listDeleted(t, e); len(got) != 0 {
		t.Fatalf("deleted shares without retention: %d", len(got))
	}
	_, err := e.svc.RestoreShare(ctxBG, "gone", "0000000000000000", nil)
	wantCode(t, "restore without soft delete", err, "ShareNotFound")
}
