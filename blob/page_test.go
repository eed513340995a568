package blob_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// TestSDKPageBlobs: Create makes an all-zero page blob; Put Page writes
// 512-aligned ranges (across the 4 MiB chunks the content is kept in),
// Clear zeroes them and Get Page Ranges reports what is written; reads
// see zeros elsewhere; sequence-number conditions and actions; Resize
// cuts and extends (a cut-off page reads as zeros after extending again);
// misaligned ranges are 416 InvalidPageRange.
func TestSDKPageBlobs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "disks", nil); err != nil {
		t.Fatal(err)
	}
	pb := c.ServiceClient().NewContainerClient("disks").NewPageBlobClient("disk.vhd")
	const size = 10 << 20 // three chunks, the last one short
	if _, err := pb.Create(ctx, size, &pageblob.CreateOptions{SequenceNumber: to.Ptr(int64(7))}); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size) // the model
	put := func(off int64, data []byte) {
		t.Helper()
		if _, err := pb.UploadPages(ctx, rsc(data), blob.HTTPRange{Offset: off, Count: int64(len(data))}, nil); err != nil {
			t.Fatalf("put %d+%d: %v", off, len(data), err)
		}
		copy(want[off:], data)
	}
	put(0, bytes.Repeat([]byte("a"), 1024))
	put(4<<20-512, bytes.Repeat([]byte("b"), 1024)) // straddles chunks 0 and 1
	put(9<<20, bytes.Repeat([]byte("c"), 4096))
	if got := download(t, pb.BlobClient(), nil); !bytes.Equal(got, want) {
		t.Fatalf("content differs from the model (%d bytes)", len(got))
	}
	if got := download(t, pb.BlobClient(), &blob.HTTPRange{Offset: 4<<20 - 1024, Count: 2048}); !bytes.Equal(got, want[4<<20-1024:4<<20+1024]) {
		t.Fatalf("range across chunks differs")
	}
	ranges := func() string {
		t.Helper()
		resp, err := pb.NewGetPageRangesPager(nil).NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, r := range resp.PageList.PageRange {
			out = append(out, []byte(itoa(*r.Start)+"-"+itoa(*r.End)+" ")...)
		}
		return string(out)
	}
	if got := ranges(); got != "0-1023 4193792-4194815 9437184-9441279 " {
		t.Fatalf("page ranges %q", got)
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 512, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	copy(want[512:1024], make([]byte, 512))
	if got := ranges(); got != "0-511 4193792-4194815 9437184-9441279 " {
		t.Fatalf("page ranges after clear %q", got)
	}
	if got := download(t, pb.BlobClient(), &blob.HTTPRange{Offset: 0, Count: 2048}); !bytes.Equal(got, want[:2048]) {
		t.Fatalf("cleared pages do not read as zeros")
	}

	// Sequence numbers.
	props, _ := pb.GetProperties(ctx, nil)
	if *props.BlobSequenceNumber != 7 || *props.BlobType != blob.BlobTypePageBlob || *props.ContentLength != size {
		t.Fatalf("properties: seq %v type %v len %v", *props.BlobSequenceNumber, *props.BlobType, *props.ContentLength)
	}
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.UploadPagesOptions{
		SequenceNumberAccessConditions: &pageblob.SequenceNumberAccessConditions{IfSequenceNumberLessThan: to.Ptr(int64(7))}}); code(err) != "SequenceNumberConditionNotMet" {
		t.Fatalf("sequence condition: %v", err)
	}
	if _, err := pb.UpdateSequenceNumber(ctx, &pageblob.UpdateSequenceNumberOptions{ActionType: to.Ptr(pageblob.SequenceNumberActionTypeIncrement)}); err != nil {
		t.Fatal(err)
	}
	if props, _ := pb.GetProperties(ctx, nil); *props.BlobSequenceNumber != 8 {
		t.Fatalf("after increment: %d", *props.BlobSequenceNumber)
	}

	// Resize: cut into chunk 2's written pages, then extend again.
	if _, err := pb.Resize(ctx, 9<<20+1024, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Resize(ctx, size, nil); err != nil {
		t.Fatal(err)
	}
	copy(want[9<<20+1024:], make([]byte, size-(9<<20+1024)))
	if got := download(t, pb.BlobClient(), nil); !bytes.Equal(got, want) {
		t.Fatalf("after shrink and extend the content differs from the model")
	}
	if got := ranges(); got != "0-511 4193792-4194815 9437184-9438207 " {
		t.Fatalf("page ranges after resize %q", got)
	}

	// Hostile ranges.
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 100)), blob.HTTPRange{Offset: 0, Count: 100}, nil); code(err) != "InvalidPageRange" {
		t.Fatalf("unaligned page write: %v", err)
	}
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Offset: size, Count: 512}, nil); code(err) != "InvalidPageRange" {
		t.Fatalf("page write past the end: %v", err)
	}
	bb := c.ServiceClient().NewContainerClient("disks").NewBlockBlobClient("block")
	if _, err := bb.UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServiceClient().NewContainerClient("disks").NewPageBlobClient("block").ClearPages(ctx, blob.HTTPRange{Offset: 0, Count: 512}, nil); code(err) != "InvalidBlobType" {
		t.Fatalf("page write to a block blob: %v", err)
	}
}

// TestSDKPageRangesDiff: Get Page Ranges with prevsnapshot reports the
// pages written since the snapshot as PageRange and the pages cleared
// since as ClearRange.
func TestSDKPageRangesDiff(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "diffs", nil); err != nil {
		t.Fatal(err)
	}
	pb := c.ServiceClient().NewContainerClient("diffs").NewPageBlobClient("d")
	if _, err := pb.Create(ctx, 16384, nil); err != nil {
		t.Fatal(err)
	}
	page := func(b byte) io.ReadSeekCloser { return rsc(bytes.Repeat([]byte{b}, 512)) }
	for _, off := range []int64{0, 2048, 4096} {
		if _, err := pb.UploadPages(ctx, page('x'), blob.HTTPRange{Offset: off, Count: 512}, nil); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := pb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, page('y'), blob.HTTPRange{Offset: 2048, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, page('z'), blob.HTTPRange{Offset: 8192, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.ClearPages(ctx, blob.HTTPRange{Offset: 4096, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap.Snapshot}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var changed, cleared []string
	for _, r := range resp.PageList.PageRange {
		changed = append(changed, itoa(*r.Start)+"-"+itoa(*r.End))
	}
	for _, r := range resp.PageList.ClearRange {
		cleared = append(cleared, itoa(*r.Start)+"-"+itoa(*r.End))
	}
	if got := strings.Join(changed, " ") + " | " + strings.Join(cleared, " "); got != "2048-2559 8192-8703 | 4096-4607" {
		t.Fatalf("diff %q", got)
	}

	// A page rewritten with the bytes it had is reported: Azure lists the
	// pages written since the snapshot, not the bytes that differ (the
	// azblob TestBlobDiffPageRange* recordings).
	if _, err := pb.UploadPages(ctx, page('x'), blob.HTTPRange{Offset: 0, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	resp, err = pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap.Snapshot}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.PageList.PageRange) == 0 || *resp.PageList.PageRange[0].Start != 0 || *resp.PageList.PageRange[0].End != 511 {
		t.Errorf("a page rewritten with its own bytes is not in the diff: %+v", resp.PageList.PageRange)
	}
	// Against a later snapshot nothing has changed.
	snap2, err := pb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap2.Snapshot}).NextPage(ctx)
	if err != nil || len(resp.PageList.PageRange)+len(resp.PageList.ClearRange) != 0 {
		t.Errorf("diff against the latest snapshot: %v %+v", err, resp.PageList)
	}
	missing := "2020-01-01T00:00:00.0000000Z"
	if _, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: &missing}).NextPage(ctx); code(err) != "PreviousSnapshotNotFound" {
		t.Errorf("a missing prevsnapshot: %v, want PreviousSnapshotNotFound", err)
	}
	// The blob created again: its old snapshots are of another blob.
	if _, err := pb.Create(ctx, 16384, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap.Snapshot}).NextPage(ctx); code(err) != "BlobOverwritten" {
		t.Errorf("a prevsnapshot of an earlier creation: %v, want BlobOverwritten", err)
	}
}

// TestSDKPutPageFromURL: Put Page From URL copies a source range of
// another blob of the account into pages.
func TestSDKPutPageFromURL(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "pfu", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("pfu")
	src := cc.NewBlockBlobClient("src")
	data := bytes.Repeat([]byte("s"), 1024)
	if _, err := src.UploadBuffer(ctx, data, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPagesFromURL(ctx, withReadSAS(t, cc, src.URL()), 512, 1024, 512, nil); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 4096)
	copy(want[1024:1536], data[512:1024])
	if got := download(t, pb.BlobClient(), nil); !bytes.Equal(got, want) {
		t.Fatalf("page from URL content differs")
	}
}
