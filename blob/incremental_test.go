package blob_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
)

// waitIncremental polls Get Blob Properties of an incremental copy's
// destination until its copy is no longer pending (at most 10 s) and
// returns the last answer.
func waitIncremental(t *testing.T, dst *pageblob.Client) blob.GetPropertiesResponse {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := dst.GetProperties(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.CopyStatus == nil {
			t.Fatal("no x-ms-copy-status on an incremental copy blob")
		}
		if *p.CopyStatus != blob.CopyStatusTypePending {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatal("the incremental copy is still pending after 10 s")
		}
	}
}

// TestSDKIncrementalCopy: Incremental Copy Blob of a page blob snapshot
// answers 202 pending and completes into an incremental copy blob whose
// x-ms-copy-destination-snapshot holds the source snapshot's pages
// (azblob's TestIncrementalCopy); a later snapshot copies again into a
// new destination snapshot, an earlier one is 409
// IncrementalCopyOfEarlierSnapshotNotAllowed
// (TestIncrementalCopyErrorCode); the source must be a page blob
// snapshot (IncrementalCopySourceMustBeSnapshot, InvalidBlobType) of the
// destination's own source (IncrementalCopyBlobMismatch) reachable by a
// SAS or a public container; the destination takes only Get Blob
// Properties, Incremental Copy Blob and Delete Blob (409
// OperationNotAllowedOnIncrementalCopyBlob), its snapshots read as usual.
func TestSDKIncrementalCopy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "inc", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("inc")
	src := cc.NewPageBlobClient("disk")
	if _, err := src.Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	first := bytes.Repeat([]byte("1"), 1024)
	if _, err := src.UploadPages(ctx, rsc(first), blob.HTTPRange{Offset: 0, Count: 1024}, nil); err != nil {
		t.Fatal(err)
	}
	snap1, err := src.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.Repeat([]byte("2"), 512)
	if _, err := src.UploadPages(ctx, rsc(second), blob.HTTPRange{Offset: 2048, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	snap2, err := src.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The source is reached with a SAS of its own (the container is private).
	srcSAS, err := cc.GetSASURL(sas.ContainerPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	srcURL := func(name string) string {
		u, _, _ := bytes.Cut([]byte(srcSAS), []byte("?"))
		_, q, _ := bytes.Cut([]byte(srcSAS), []byte("?"))
		return string(u) + "/" + name + "?" + string(q)
	}

	dst := cc.NewPageBlobClient("backup")
	resp, err := dst.StartCopyIncremental(ctx, srcURL("disk"), *snap1.Snapshot, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.CopyStatus == nil || *resp.CopyStatus != blob.CopyStatusTypePending || resp.CopyID == nil || *resp.CopyID == "" {
		t.Fatalf("answer: status %v id %v, want pending and an id", resp.CopyStatus, resp.CopyID)
	}
	p := waitIncremental(t, dst)
	if *p.CopyStatus != blob.CopyStatusTypeSuccess || p.IsIncrementalCopy == nil || !*p.IsIncrementalCopy || p.DestinationSnapshot == nil || *p.CopyID != *resp.CopyID {
		t.Fatalf("after the copy: status %v incremental %v destination snapshot %v", *p.CopyStatus, p.IsIncrementalCopy, p.DestinationSnapshot)
	}
	dsnap1 := *p.DestinationSnapshot
	readSnap := func(snapshot string) []byte {
		sc, err := dst.WithSnapshot(snapshot)
		if err != nil {
			t.Fatal(err)
		}
		return download(t, sc.BlobClient(), nil)
	}
	want1 := append(append([]byte(nil), first...), make([]byte, 3072)...)
	if got := readSnap(dsnap1); !bytes.Equal(got, want1) {
		t.Errorf("destination snapshot after the first copy: %d bytes, %q…", len(got), got[:4])
	}

	// Only Get Blob Properties, Incremental Copy Blob and Delete Blob.
	forbidden := map[string]error{}
	_, forbidden["Get Blob"] = dst.DownloadStream(ctx, nil)
	_, forbidden["Set Blob Metadata"] = dst.SetMetadata(ctx, map[string]*string{"a": to.Ptr("b")}, nil)
	_, forbidden["Put Page"] = dst.UploadPages(ctx, rsc(first[:512]), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	_, forbidden["Snapshot Blob"] = dst.CreateSnapshot(ctx, nil)
	_, forbidden["Set Blob Tags"] = dst.SetTags(ctx, map[string]string{"a": "b"}, nil)
	_, forbidden["Create Page Blob"] = dst.Create(ctx, 512, nil)
	for op, err := range forbidden {
		if code(err) != "OperationNotAllowedOnIncrementalCopyBlob" {
			t.Errorf("%s on an incremental copy blob: %v", op, err)
		}
	}

	// A later snapshot: a new destination snapshot; the first stays.
	resp, err = dst.StartCopyIncremental(ctx, srcURL("disk"), *snap2.Snapshot, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = waitIncremental(t, dst)
	if *p.CopyStatus != blob.CopyStatusTypeSuccess || p.DestinationSnapshot == nil || *p.DestinationSnapshot == dsnap1 {
		t.Fatalf("second copy: status %v destination snapshot %v", *p.CopyStatus, p.DestinationSnapshot)
	}
	want2 := append([]byte(nil), want1...)
	copy(want2[2048:], second)
	if got := readSnap(*p.DestinationSnapshot); !bytes.Equal(got, want2) {
		t.Errorf("destination snapshot after the second copy differs from the source's second snapshot")
	}
	if got := readSnap(dsnap1); !bytes.Equal(got, want1) {
		t.Errorf("the first destination snapshot changed")
	}
	if _, err := dst.StartCopyIncremental(ctx, srcURL("disk"), *snap1.Snapshot, nil); code(err) != "IncrementalCopyOfEarlierSnapshotNotAllowed" {
		t.Errorf("copy of an earlier snapshot: %v", err)
	}

	// What the source and the destination must be.
	if _, err := cc.NewPageBlobClient("other").StartCopyIncremental(ctx, srcURL("disk"), "", nil); code(err) != "IncrementalCopySourceMustBeSnapshot" {
		t.Errorf("a source that is not a snapshot: %v", err)
	}
	bb := cc.NewBlockBlobClient("block")
	if _, err := bb.Upload(ctx, rsc([]byte("b")), nil); err != nil {
		t.Fatal(err)
	}
	bsnap, err := bb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewPageBlobClient("other").StartCopyIncremental(ctx, srcURL("block"), *bsnap.Snapshot, nil); code(err) != "InvalidBlobType" {
		t.Errorf("a block blob snapshot as source: %v", err)
	}
	if _, err := cc.NewPageBlobClient("block").StartCopyIncremental(ctx, srcURL("disk"), *snap2.Snapshot, nil); code(err) != "IncrementalCopyBlobMismatch" {
		t.Errorf("onto a blob that is no incremental copy: %v", err)
	}
	disk2 := cc.NewPageBlobClient("disk2")
	if _, err := disk2.Create(ctx, 512, nil); err != nil {
		t.Fatal(err)
	}
	snapOther, err := disk2.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.StartCopyIncremental(ctx, srcURL("disk2"), *snapOther.Snapshot, nil); code(err) != "IncrementalCopyBlobMismatch" {
		t.Errorf("from another source blob: %v", err)
	}
	if _, err := cc.NewPageBlobClient("other").StartCopyIncremental(ctx, cc.URL()+"/disk", *snap2.Snapshot, nil); status(err) != http.StatusForbidden {
		t.Errorf("a private source without a SAS: %v, want 403", err)
	}
	if _, err := cc.NewBlobClient("other").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("refused copies left a destination: %v", err)
	}

	// Listed as an incremental copy with its snapshots; deleted as usual.
	var listed []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("backup"), Include: container.ListBlobsInclude{Snapshots: true, Copy: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			if it.Properties.IncrementalCopy == nil || !*it.Properties.IncrementalCopy {
				t.Errorf("listed %s (snapshot %v) without IncrementalCopy", *it.Name, it.Snapshot)
			}
			listed = append(listed, *it.Name)
		}
	}
	if len(listed) != 3 {
		t.Errorf("listed %v, want the blob and its two snapshots", listed)
	}
	if _, err := dst.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Errorf("Delete Blob of an incremental copy blob: %v", err)
	}
}
