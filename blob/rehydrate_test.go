package blob_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/blobshare/blobshare/blobsvc"
)

// TestSDKRehydrateFromArchive: Set Blob Tier from Archive to Hot, Cool
// or Cold starts a rehydration: the blob stays Archive, answers
// x-ms-archive-status rehydrate-pending-to-<tier> and its
// x-ms-rehydrate-priority on Get Blob Properties and in List Blobs
// (azblob's TestRehydrateStatus, TestSetStandardBlobTierWithRehydratePriority),
// refuses reads (409 BlobArchived) and another tier (409
// BlobBeingRehydrated), may be raised from Standard to High but not
// lowered, and takes its tier when the rehydration time has passed (by
// the service's clock), with that time as its tier change time.
func TestSDKRehydrateFromArchive(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "rehy", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("rehy")
	for _, tc := range []struct {
		to       blob.AccessTier
		priority *blob.RehydratePriority
		status   blob.ArchiveStatus
		want     string // the priority answered
	}{
		{blob.AccessTierHot, nil, blob.ArchiveStatusRehydratePendingToHot, "Standard"},
		{blob.AccessTierCool, to.Ptr(blob.RehydratePriorityStandard), blob.ArchiveStatusRehydratePendingToCool, "Standard"},
		{blob.AccessTierCold, to.Ptr(blob.RehydratePriorityHigh), blob.ArchiveStatusRehydratePendingToCold, "High"},
	} {
		t.Run(string(tc.to), func(t *testing.T) {
			bb := cc.NewBlockBlobClient("to-" + string(tc.to))
			if _, err := bb.Upload(ctx, rsc([]byte("cold data")), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := bb.SetTier(ctx, blob.AccessTierArchive, nil); err != nil {
				t.Fatal(err)
			}
			start := clock.Now()
			if _, err := bb.SetTier(ctx, tc.to, &blob.SetTierOptions{RehydratePriority: tc.priority}); err != nil {
				t.Fatal(err)
			}
			p, err := bb.GetProperties(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if *p.AccessTier != "Archive" || p.ArchiveStatus == nil || *p.ArchiveStatus != string(tc.status) || p.RehydratePriority == nil || *p.RehydratePriority != tc.want {
				t.Fatalf("pending: tier %v status %v priority %v", *p.AccessTier, p.ArchiveStatus, p.RehydratePriority)
			}
			item := listItem(t, cc, bb.URL())
			if item == nil || *item.Properties.AccessTier != blob.AccessTierArchive || item.Properties.ArchiveStatus == nil || *item.Properties.ArchiveStatus != tc.status {
				t.Fatalf("listed while pending: %+v", item)
			}
			if _, err := bb.DownloadStream(ctx, nil); code(err) != "BlobArchived" {
				t.Errorf("read while rehydrating: %v", err)
			}
			other := blob.AccessTierHot
			if tc.to == blob.AccessTierHot {
				other = blob.AccessTierCool
			}
			if _, err := bb.SetTier(ctx, other, nil); code(err) != "BlobBeingRehydrated" {
				t.Errorf("another tier while rehydrating: %v", err)
			}
			// The same tier: Standard raised to High, High never lowered.
			if _, err := bb.SetTier(ctx, tc.to, &blob.SetTierOptions{RehydratePriority: to.Ptr(blob.RehydratePriorityStandard)}); err != nil {
				t.Fatal(err)
			}
			if p, _ := bb.GetProperties(ctx, nil); *p.RehydratePriority != tc.want {
				t.Errorf("priority after asking Standard: %v, want %s", *p.RehydratePriority, tc.want)
			}
			if _, err := bb.SetTier(ctx, tc.to, &blob.SetTierOptions{RehydratePriority: to.Ptr(blob.RehydratePriorityHigh)}); err != nil {
				t.Fatal(err)
			}
			if p, _ := bb.GetProperties(ctx, nil); *p.RehydratePriority != "High" {
				t.Errorf("priority after asking High: %v", *p.RehydratePriority)
			}
			clock.Advance(blobsvc.DefaultRehydrateTime - time.Millisecond)
			if p, _ := bb.GetProperties(ctx, nil); *p.AccessTier != "Archive" {
				t.Errorf("rehydrated before its time: %v", *p.AccessTier)
			}
			clock.Advance(time.Millisecond)
			p, err = bb.GetProperties(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if *p.AccessTier != string(tc.to) || p.ArchiveStatus != nil || p.RehydratePriority != nil || !p.AccessTierChangeTime.Equal(start.Add(blobsvc.DefaultRehydrateTime).Truncate(time.Second)) {
				t.Errorf("rehydrated: tier %v status %v priority %v changed %v", *p.AccessTier, p.ArchiveStatus, p.RehydratePriority, p.AccessTierChangeTime)
			}
			if got := download(t, bb.BlobClient(), nil); string(got) != "cold data" {
				t.Errorf("rehydrated content %q", got)
			}
		})
	}

	// The time is the service's to set; a bad priority is 400.
	e.Svc.SetRehydrateTime(time.Hour)
	bb := cc.NewBlockBlobClient("slow")
	if _, err := bb.Upload(ctx, rsc([]byte("x")), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTierArchive)}); err != nil {
		t.Fatal(err)
	}
	if st, cd, _ := rawRequest(t, e, "PUT", "/rehy/slow?comp=tier", map[string]string{"x-ms-access-tier": "Hot", "x-ms-rehydrate-priority": "Urgent"}, ""); st != http.StatusBadRequest || cd != "InvalidHeaderValue" {
		t.Errorf("x-ms-rehydrate-priority: Urgent: %d %s", st, cd)
	}
	if _, err := bb.SetTier(ctx, blob.AccessTierHot, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(blobsvc.DefaultRehydrateTime)
	if p, _ := bb.GetProperties(ctx, nil); *p.AccessTier != "Archive" {
		t.Errorf("with a rehydration time of an hour, after %v: %v", blobsvc.DefaultRehydrateTime, *p.AccessTier)
	}
	clock.Advance(time.Hour)
	if p, _ := bb.GetProperties(ctx, nil); *p.AccessTier != "Hot" {
		t.Errorf("with a rehydration time of an hour, after it: %v", *p.AccessTier)
	}
}

// listItem lists the container and returns the item whose URL is u.
func listItem(t *testing.T, cc *container.Client, u string) *container.BlobItem {
	t.Helper()
	pager := cc.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			if cc.NewBlobClient(*it.Name).URL() == u {
				return it
			}
		}
	}
	return nil
}

// TestSDKDeleteAccessTierConditions: Delete Blob's
// x-ms-access-tier-if-modified-since and -if-unmodified-since compare the
// tier's change time (azblob's TestBlobDeleteAccessTierIf*): unmet is 412
// AccessTierChangeTimeConditionNotMet and deletes nothing; a blob whose
// tier was never set counts from its creation; both at once are 400.
func TestSDKDeleteAccessTierConditions(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "atc", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("atc")
	for _, tc := range []struct {
		name      string
		tier      *blob.AccessTier // set on upload (nil: inferred)
		cond      blob.AccessTierConditions
		wantError string
	}{
		{"modified since before", to.Ptr(blob.AccessTierHot), blob.AccessTierConditions{IfModifiedSince: to.Ptr(clock.Now().Add(-10 * time.Second))}, ""},
		{"modified since after", to.Ptr(blob.AccessTierHot), blob.AccessTierConditions{IfModifiedSince: to.Ptr(clock.Now().Add(10 * time.Second))}, "AccessTierChangeTimeConditionNotMet"},
		{"unmodified since after", to.Ptr(blob.AccessTierCool), blob.AccessTierConditions{IfUnmodifiedSince: to.Ptr(clock.Now().Add(10 * time.Second))}, ""},
		{"unmodified since before", to.Ptr(blob.AccessTierCool), blob.AccessTierConditions{IfUnmodifiedSince: to.Ptr(clock.Now().Add(-10 * time.Second))}, "AccessTierChangeTimeConditionNotMet"},
		{"inferred tier, modified since before creation", nil, blob.AccessTierConditions{IfModifiedSince: to.Ptr(clock.Now().Add(-10 * time.Second))}, ""},
		{"inferred tier, unmodified since before creation", nil, blob.AccessTierConditions{IfUnmodifiedSince: to.Ptr(clock.Now().Add(-10 * time.Second))}, "AccessTierChangeTimeConditionNotMet"},
		{"both", to.Ptr(blob.AccessTierHot), blob.AccessTierConditions{IfModifiedSince: to.Ptr(clock.Now().Add(-10 * time.Second)), IfUnmodifiedSince: to.Ptr(clock.Now().Add(10 * time.Second))}, "MultipleConditionHeadersNotSupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := cc.NewBlockBlobClient("b")
			if _, err := bb.Upload(ctx, rsc([]byte("data")), &blockblob.UploadOptions{Tier: tc.tier}); err != nil {
				t.Fatal(err)
			}
			_, err := bb.Delete(ctx, &blob.DeleteOptions{AccessTierConditions: &tc.cond})
			if code(err) != tc.wantError {
				t.Fatalf("Delete Blob: %v, want %q", err, tc.wantError)
			}
			_, err = bb.GetProperties(ctx, nil)
			if tc.wantError == "" && code(err) != "BlobNotFound" {
				t.Errorf("met: the blob is still there (%v)", err)
			}
			if tc.wantError != "" && err != nil {
				t.Errorf("unmet: the blob went (%v)", err)
			}
		})
	}
}
