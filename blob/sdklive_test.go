package blob_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// The cases of this file are what the azblob SDK's own live tests (and
// the recordings of real Azure they replay) expect of conditions and
// ranges, each checked through the SDK.

// newPageBlob creates container "pages" and a 5120-byte page blob with
// its first page written, as the SDK's setupGetPageRangesTest does.
func newPageBlob(t *testing.T, e *env) *pageblob.Client {
	t.Helper()
	ctx := context.Background()
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "pages", nil); err != nil {
		t.Fatal(err)
	}
	pb := c.ServiceClient().NewContainerClient("pages").NewPageBlobClient("pb")
	if _, err := pb.Create(ctx, 5120, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	return pb
}

// pageRanges lists the page ranges of pb through the pager.
func pageRanges(ctx context.Context, pb *pageblob.Client, o *pageblob.GetPageRangesOptions) ([][2]int64, error) {
	var out [][2]int64
	pager := pb.NewGetPageRangesPager(o)
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return out, err
		}
		for _, r := range resp.PageRange {
			out = append(out, [2]int64{*r.Start, *r.End})
		}
	}
	return out, nil
}

// TestGetPageRangesConditions: Get Page Ranges is a read for its
// conditions: an unmet If-Modified-Since or a matching If-None-Match is
// 304 (x-ms-error-code ConditionNotMet, as in the recording of
// TestBlobGetPageRangesIfModifiedSinceFalse), an unmet If-Match or
// If-Unmodified-Since 412 ConditionNotMet; never a 5xx.
func TestGetPageRangesConditions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	pb := newPageBlob(t, e)
	p, err := pb.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	later, earlier := p.LastModified.Add(10*time.Second), p.LastModified.Add(-10*time.Second)
	stale := azcoreETag(`"0x8D0000000000000"`)
	for _, tc := range []struct {
		name   string
		mac    blob.ModifiedAccessConditions
		status int
	}{
		{"If-Modified-Since unmet", blob.ModifiedAccessConditions{IfModifiedSince: &later}, http.StatusNotModified},
		{"If-None-Match unmet", blob.ModifiedAccessConditions{IfNoneMatch: p.ETag}, http.StatusNotModified},
		{"If-Match unmet", blob.ModifiedAccessConditions{IfMatch: &stale}, http.StatusPreconditionFailed},
		{"If-Unmodified-Since unmet", blob.ModifiedAccessConditions{IfUnmodifiedSince: &earlier}, http.StatusPreconditionFailed},
		{"If-Modified-Since met", blob.ModifiedAccessConditions{IfModifiedSince: &earlier}, http.StatusOK},
		{"If-None-Match met", blob.ModifiedAccessConditions{IfNoneMatch: &stale}, http.StatusOK},
	} {
		mac := tc.mac
		ranges, err := pageRanges(ctx, pb, &pageblob.GetPageRangesOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &mac}})
		if tc.status == http.StatusOK {
			if err != nil || len(ranges) != 1 {
				t.Errorf("%s: %v %v", tc.name, ranges, err)
			}
			continue
		}
		if status(err) != tc.status || code(err) != "ConditionNotMet" {
			t.Errorf("%s: %v, want %d ConditionNotMet", tc.name, err, tc.status)
		}
	}
}

// TestPageRangesRange: a range with a negative start is ignored (the
// recording of TestBlobGetPageRangesInvalidRange: "bytes=-2-497" answers
// the whole list), a range past the written pages answers them
// (TestBlobGetPageRangesNotPageAligned), and the ranges are clipped to
// the range asked widened to whole pages (TestPutGetPages: bytes=0-1022
// answers 0-1023).
func TestPageRangesRange(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	pb := newPageBlob(t, e)
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 2048)), blob.HTTPRange{Offset: 1024, Count: 2048}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rng  blob.HTTPRange
		want [][2]int64
	}{
		{"negative offset", blob.HTTPRange{Offset: -2, Count: 500}, [][2]int64{{0, 511}, {1024, 3071}}},
		{"not page aligned", blob.HTTPRange{Count: 2000}, [][2]int64{{0, 511}, {1024, 2047}}},
		{"one byte short of a page", blob.HTTPRange{Offset: 1024, Count: 1023}, [][2]int64{{1024, 2047}}},
		{"starting inside a page", blob.HTTPRange{Offset: 1100, Count: 100}, [][2]int64{{1024, 1535}}},
		{"inside a written range", blob.HTTPRange{Offset: 1536, Count: 512}, [][2]int64{{1536, 2047}}},
		{"between the written ranges", blob.HTTPRange{Offset: 512, Count: 512}, nil},
	} {
		got, err := pageRanges(ctx, pb, &pageblob.GetPageRangesOptions{Range: tc.rng})
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestPageRangesDiffRange: a page-range diff with a range that cuts
// pages compares whole pages and reports them clipped to the range asked
// widened to whole pages (it read past the last page and failed before);
// a range with a negative start is ignored, not 400 (azblob's
// TestBlobDiffPageRangeInvalidRange: Offset -22, Count 14).
func TestPageRangesDiffRange(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	pb := newPageBlob(t, e)
	snap, err := pb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 2048)
	for i := range data {
		data[i] = 1
	}
	if _, err := pb.UploadPages(ctx, rsc(data), blob.HTTPRange{Count: 2048}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rng  blob.HTTPRange
		want [][2]int64
	}{
		{blob.HTTPRange{Count: 2000}, [][2]int64{{0, 2047}}},
		{blob.HTTPRange{Offset: 256, Count: 1000}, [][2]int64{{0, 1535}}},
		{blob.HTTPRange{Offset: 1024, Count: 4096}, [][2]int64{{1024, 2047}}},
		{blob.HTTPRange{Offset: -22, Count: 14}, [][2]int64{{0, 2047}}},
	} {
		var got [][2]int64
		pager := pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: snap.Snapshot, Range: tc.rng})
		for pager.More() {
			resp, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%+v: %v", tc.rng, err)
			}
			for _, r := range resp.PageRange {
				got = append(got, [2]int64{*r.Start, *r.End})
			}
		}
		if len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
			t.Errorf("diff in %+v: %v, want %v", tc.rng, got, tc.want)
		}
	}
}

// TestDownloadNegativeOffset: Get Blob with "bytes=-1-" (the SDK's
// Offset -1) answers the whole blob, as Azure does
// (TestBlobDownloadDataNegativeOffset).
func TestDownloadNegativeOffset(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	resp, err := le.bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: -1}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "v1" {
		t.Fatalf("content %q", b)
	}
}

// TestSetTagsBlobConditions: Set Blob Tags evaluates the SDK's
// BlobModifiedAccessConditions, which it sends as x-ms-blob-if-match,
// -none-match, -modified-since and -unmodified-since (the azblob test
// TestGetSetTagsWithBlobModifiedAccessConditions); a failed one changes
// no tag.
func TestSetTagsBlobConditions(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	p, err := le.bb.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	past := p.LastModified.Add(-time.Hour)
	set := func(v string, c blob.BlobModifiedAccessConditions) error {
		_, err := le.bb.SetTags(ctx, map[string]string{"env": v}, &blob.SetTagsOptions{BlobModifiedAccessConditions: &c})
		return err
	}
	if err := set("a", blob.BlobModifiedAccessConditions{IfMatch: p.ETag}); err != nil {
		t.Fatalf("If-Match current: %v", err)
	}
	if err := set("b", blob.BlobModifiedAccessConditions{IfNoneMatch: p.ETag}); status(err) != http.StatusPreconditionFailed || code(err) != "ConditionNotMet" {
		t.Fatalf("If-None-Match current: %v", err)
	}
	if err := set("c", blob.BlobModifiedAccessConditions{IfModifiedSince: &past}); err != nil {
		t.Fatalf("If-Modified-Since past: %v", err)
	}
	if err := set("d", blob.BlobModifiedAccessConditions{IfUnmodifiedSince: &past}); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("If-Unmodified-Since past: %v", err)
	}
	stale := azcoreETag(`"0x8D0000000000000"`)
	if err := set("e", blob.BlobModifiedAccessConditions{IfMatch: &stale}); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("If-Match stale: %v", err)
	}
	tags, err := le.bb.GetTags(ctx, nil)
	if err != nil || len(tags.BlobTagSet) != 1 || *tags.BlobTagSet[0].Value != "c" {
		t.Fatalf("tags after the refused sets: %v", err)
	}
}

// TestSequenceNumberConditionNegative: a sequence-number condition of -1
// on Put Page or Clear Pages is 400 InvalidInput (the azblob recordings
// of TestBlobPutPagesIfSequenceNumber*NegOne and
// TestBlobClearPagesIfSequenceNumber*NegOne).
func TestSequenceNumberConditionNegative(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	pb := newPageBlob(t, e)
	neg := to.Ptr(int64(-1))
	for name, c := range map[string]pageblob.SequenceNumberAccessConditions{
		"le": {IfSequenceNumberLessThanOrEqualTo: neg},
		"lt": {IfSequenceNumberLessThan: neg},
		"eq": {IfSequenceNumberEqualTo: neg},
	} {
		_, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Count: 512}, &pageblob.UploadPagesOptions{SequenceNumberAccessConditions: &c})
		if status(err) != http.StatusBadRequest || code(err) != "InvalidInput" {
			t.Errorf("Put Page with %s -1: %v", name, err)
		}
		_, err = pb.ClearPages(ctx, blob.HTTPRange{Count: 512}, &pageblob.ClearPagesOptions{SequenceNumberAccessConditions: &c})
		if status(err) != http.StatusBadRequest || code(err) != "InvalidInput" {
			t.Errorf("Clear Pages with %s -1: %v", name, err)
		}
	}
}

// TestSetPropertiesClearsContentType: Set Blob Properties without a
// content type clears it, and the blob then has none: Get Blob Properties
// and Get Blob send no Content-Type (TestBlobSetPropertiesEmptyValue).
func TestSetPropertiesClearsContentType(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	if _, err := le.bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("my_type")}, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := le.bb.GetProperties(ctx, nil); err != nil || p.ContentType == nil || *p.ContentType != "my_type" {
		t.Fatalf("content type set: %v", err)
	}
	if _, err := le.bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{}, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := le.bb.GetProperties(ctx, nil); err != nil || p.ContentType != nil {
		t.Fatalf("content type after clearing: %v %v", err, p.ContentType)
	}
	resp, err := le.bb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ContentType != nil {
		t.Fatalf("Get Blob's Content-Type %q", *resp.ContentType)
	}
}
