package blob_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// TestMultipleConditionHeaders sends Set Blob Metadata through the SDK
// with every combination of the four conditional headers. "Specifying
// conditional headers for Blob service operations", for write operations
// (all versions): only If-None-Match + If-Modified-Since and If-Match +
// If-Unmodified-Since may come together, any other pair or more is 400
// (MultipleConditionHeadersNotSupported), and the pair is "evaluated
// based on the criteria specified in" its ETag header. Reads (Get Blob
// Properties) take any combination. A list of ETags in one header is 400
// too ("requests to the Blob service can only include one ETag value").
func TestMultipleConditionHeaders(t *testing.T) {
	le := newLeaseEnv(t)
	ctx := context.Background()
	p, err := le.bb.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	past, future := p.LastModified.Add(-time.Hour), p.LastModified.Add(time.Hour)
	// met returns the headers of mask, each set to a value the current
	// blob meets, so that an allowed combination succeeds.
	met := func(mask int) (*blob.ModifiedAccessConditions, int) {
		cur, err := le.bb.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mac := &blob.ModifiedAccessConditions{}
		n := 0
		if mask&1 != 0 {
			mac.IfMatch, n = cur.ETag, n+1
		}
		if mask&2 != 0 {
			mac.IfNoneMatch, n = to.Ptr(azcoreETag(`"0x8D0000000000000"`)), n+1
		}
		if mask&4 != 0 {
			mac.IfModifiedSince, n = &past, n+1
		}
		if mask&8 != 0 {
			mac.IfUnmodifiedSince, n = &future, n+1
		}
		return mac, n
	}
	for mask := 1; mask < 16; mask++ {
		mac, n := met(mask)
		allowed := n == 1 || mask == 1|8 || mask == 2|4
		_, err = le.bb.SetMetadata(ctx, map[string]*string{"m": to.Ptr("v")}, &blob.SetMetadataOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac}})
		switch {
		case allowed && err != nil:
			t.Errorf("conditions %04b (allowed): %v", mask, err)
		case !allowed && (status(err) != http.StatusBadRequest || code(err) != "MultipleConditionHeadersNotSupported"):
			t.Errorf("conditions %04b: %v, want 400 MultipleConditionHeadersNotSupported", mask, err)
		}
		mac, _ = met(mask)
		if _, err := le.bb.GetProperties(ctx, &blob.GetPropertiesOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac}}); err != nil {
			t.Errorf("read with conditions %04b: %v", mask, err)
		}
	}

	// The pair is decided by its ETag header alone: a met If-Match with
	// an unmet If-Unmodified-Since succeeds, an unmet If-Match with a met
	// one fails.
	cur, _ := le.bb.GetProperties(ctx, nil)
	stale := azcoreETag(`"0x8D0000000000000"`)
	if _, err := le.bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: cur.ETag, IfUnmodifiedSince: &past}}}); err != nil {
		t.Errorf("If-Match met, If-Unmodified-Since not: %v", err)
	}
	if _, err := le.bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale, IfUnmodifiedSince: &future}}}); code(err) != "ConditionNotMet" {
		t.Errorf("If-Match unmet, If-Unmodified-Since met: %v", err)
	}
	cur, _ = le.bb.GetProperties(ctx, nil)
	if _, err := le.bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &stale, IfModifiedSince: &future}}}); err != nil {
		t.Errorf("If-None-Match met, If-Modified-Since not: %v", err)
	}
	cur, _ = le.bb.GetProperties(ctx, nil)
	if _, err := le.bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: cur.ETag, IfModifiedSince: &past}}}); code(err) != "ConditionNotMet" {
		t.Errorf("If-None-Match unmet, If-Modified-Since met: %v", err)
	}

	// Every kind of write refuses a disallowed pair, before anything
	// else (a missing blob included), and a list of ETags.
	bad := map[string]string{"If-Match": "*", "If-None-Match": "*"}
	date := time.Now().UTC().Format(http.TimeFormat)
	for _, w := range []struct {
		name, method, path, body string
		hdr                      map[string]string
	}{
		{"Put Blob", "PUT", "/ctr/new", "x", map[string]string{"x-ms-blob-type": "BlockBlob"}},
		{"Put Block List", "PUT", "/ctr/b?comp=blocklist", "<BlockList></BlockList>", nil},
		{"Set Blob Properties", "PUT", "/ctr/b?comp=properties", "", nil},
		{"Delete Blob", "DELETE", "/ctr/b", "", nil},
		{"Lease Blob", "PUT", "/ctr/b?comp=lease", "", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}},
		{"Copy Blob", "PUT", "/ctr/copy", "", map[string]string{"x-ms-copy-source": le.URL + "/ctr/b"}},
		{"Set Blob Tags", "PUT", "/ctr/b?comp=tags", "<Tags><TagSet></TagSet></Tags>", nil},
		{"Delete Container", "DELETE", "/ctr?restype=container", "", nil},
		{"Set Container Metadata", "PUT", "/ctr?restype=container&comp=metadata", "", nil},
	} {
		for _, hdr := range []map[string]string{bad, {"If-Match": `"0x1", "0x2"`}, {"If-Modified-Since": date, "If-Unmodified-Since": date}} {
			h := map[string]string{}
			for k, v := range w.hdr {
				h[k] = v
			}
			for k, v := range hdr {
				h[k] = v
			}
			if st, c, _ := rawRequest(t, le.env, w.method, w.path, h, w.body); st != http.StatusBadRequest || c != "MultipleConditionHeadersNotSupported" {
				t.Errorf("%s with %v: %d %s", w.name, hdr, st, c)
			}
		}
	}
	if _, err := le.bb.GetProperties(ctx, nil); err != nil {
		t.Fatalf("the refused requests changed the blob: %v", err)
	}
}

// TestWriteMakesBrokenLeaseAvailable: Lease Blob's table "Outcomes of use
// attempts on blobs by lease state" has "Write, no lease specified" on
// Broken (A) and on Expired (A) as "Available, write succeeds". The old
// id is gone: renew and release with it answer 409
// LeaseIdMismatchWithLeaseOperation and a break 409
// LeaseNotPresentWithLeaseOperation (the Available column of "Outcomes of
// lease operations"), whether the write was Set Blob Metadata, Put Blob,
// Put Block (one of the writes Lease Blob lists), Set Blob Tags (as
// Azurite) or a Copy Blob onto the blob.
func TestWriteMakesBrokenLeaseAvailable(t *testing.T) {
	ctx := context.Background()
	writes := map[string]func(le *leaseEnv) error{
		"Set Blob Metadata": func(le *leaseEnv) error { return le.update("") },
		"Put Blob": func(le *leaseEnv) error {
			_, err := le.bb.UploadBuffer(ctx, []byte("v2"), nil)
			return err
		},
		"Put Block": func(le *leaseEnv) error {
			_, err := le.bb.StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("b1")), rsc([]byte("blk")), nil)
			return err
		},
		"Set Blob Tags": func(le *leaseEnv) error {
			_, err := le.bb.SetTags(ctx, map[string]string{"k": "v"}, nil)
			return err
		},
		"Copy Blob": func(le *leaseEnv) error {
			src := le.c.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("src")
			if _, err := src.UploadBuffer(ctx, []byte("copied"), nil); err != nil {
				return err
			}
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), nil)
			return err
		},
	}
	for name, write := range writes {
		for _, end := range []string{"broken", "expired"} {
			t.Run(name+" on a "+end+" lease", func(t *testing.T) {
				le := newLeaseEnv(t)
				if end == "broken" {
					if _, err := le.lease(t, idA).AcquireLease(ctx, -1, nil); err != nil {
						t.Fatal(err)
					}
					if _, err := le.lease(t, "").BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(0))}); err != nil {
						t.Fatal(err)
					}
				} else {
					if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); err != nil {
						t.Fatal(err)
					}
					le.clock.Advance(16 * time.Second)
				}
				if st, _ := le.state(t); st != end {
					t.Fatalf("lease %s, want %s", st, end)
				}
				if err := write(le); err != nil {
					t.Fatalf("write without a lease id: %v", err)
				}
				if st, status := le.state(t); st != "available" || status != "unlocked" {
					t.Fatalf("after the write: %s %s, want available", st, status)
				}
				if _, err := le.lease(t, idA).RenewLease(ctx, nil); status(err) != http.StatusConflict || code(err) != "LeaseIdMismatchWithLeaseOperation" {
					t.Errorf("renew with the old id: %v", err)
				}
				if _, err := le.lease(t, idA).ReleaseLease(ctx, nil); status(err) != http.StatusConflict || code(err) != "LeaseIdMismatchWithLeaseOperation" {
					t.Errorf("release with the old id: %v", err)
				}
				if _, err := le.lease(t, "").BreakLease(ctx, nil); status(err) != http.StatusConflict || code(err) != "LeaseNotPresentWithLeaseOperation" {
					t.Errorf("break: %v", err)
				}
				if err := le.update(idA); code(err) != "LeaseNotPresentWithBlobOperation" {
					t.Errorf("write with the old id: %v", err)
				}
				if _, err := le.lease(t, idB).AcquireLease(ctx, 15, nil); err != nil {
					t.Errorf("a new lease: %v", err)
				}
			})
		}
	}

	t.Run("a break of an expired lease makes it broken", func(t *testing.T) {
		// "Break, period=0" and "Break, period>0" on Expired (A): "Broken (A)".
		le := newLeaseEnv(t)
		if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); err != nil {
			t.Fatal(err)
		}
		le.clock.Advance(20 * time.Second)
		br, err := le.lease(t, "").BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(30))})
		if err != nil || *br.LeaseTime != 0 {
			t.Fatalf("break of the expired lease: %v", err)
		}
		if st, _ := le.state(t); st != "broken" {
			t.Fatalf("state %s, want broken", st)
		}
	})
}

// TestCopyConditionCodes: an unmet destination condition of Copy Blob
// and Put Blob From URL is 412 ConditionNotMet (Azure's answer in the
// azure-sdk-for-go recording of October 2024, x-ms-version 2024-08-04;
// blob/doc.go "Copies") and an unmet x-ms-source-if-* condition 412
// SourceConditionNotMet; Put
// Blob From URL whose source answers 304 (If-None-Match matching, or
// not modified since) is CannotVerifyCopySource with that status, as the
// azblob live test TestPutBlobFromUrlSourceIfNoneMatchFalse expects.
// Nothing is written on any of them.
func TestCopyConditionCodes(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	cc := le.c.ServiceClient().NewContainerClient("ctr")
	src := cc.NewBlockBlobClient("src")
	if _, err := src.UploadBuffer(ctx, []byte("source"), nil); err != nil {
		t.Fatal(err)
	}
	sp, _ := src.GetProperties(ctx, nil)
	dp, _ := le.bb.GetProperties(ctx, nil)
	stale := azcoreETag(`"0x8D0000000000000"`)
	later := dp.LastModified.Add(time.Hour)
	srcURL := withReadSAS(t, cc, src.URL())

	cases := []struct {
		name   string
		run    func() error
		status int
		code   string
	}{
		{"Copy Blob, destination If-Match stale", func() error {
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}})
			return err
		}, 412, "ConditionNotMet"},
		{"Copy Blob, destination If-None-Match current", func() error {
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: dp.ETag}}})
			return err
		}, 412, "ConditionNotMet"},
		{"Copy Blob, destination not modified since", func() error {
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &later}}})
			return err
		}, 412, "ConditionNotMet"},
		{"Copy Blob, source If-None-Match current", func() error {
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{
				SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfNoneMatch: sp.ETag}})
			return err
		}, 412, "SourceConditionNotMet"},
		{"Copy Blob, source not modified since", func() error {
			_, err := le.bb.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{
				SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfModifiedSince: &later}})
			return err
		}, 412, "SourceConditionNotMet"},
		{"Copy Blob From URL, source If-Match stale", func() error {
			_, err := le.bb.CopyFromURL(ctx, srcURL, &blob.CopyFromURLOptions{
				SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: &stale}})
			return err
		}, 412, "SourceConditionNotMet"},
		{"Put Blob From URL, destination If-Match stale", func() error {
			_, err := le.bb.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}})
			return err
		}, 412, "ConditionNotMet"},
		{"Put Blob From URL, source If-Match stale", func() error {
			_, err := le.bb.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{
				SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: &stale}})
			return err
		}, 412, "SourceConditionNotMet"},
		{"Put Blob From URL, source If-None-Match current", func() error {
			_, err := le.bb.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{
				SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfNoneMatch: sp.ETag}})
			return err
		}, 304, "CannotVerifyCopySource"},
	}
	for _, tc := range cases {
		if err := tc.run(); status(err) != tc.status || code(err) != tc.code {
			t.Errorf("%s: %v, want %d %s", tc.name, err, tc.status, tc.code)
		}
	}
	after, err := le.bb.GetProperties(ctx, nil)
	if err != nil || *after.ETag != *dp.ETag {
		t.Fatalf("a refused copy changed the destination: %v", err)
	}
}

// TestLeaseIDOnMissingBlob: a lease id on Put Blob or Copy Blob to a
// blob that does not exist is 412 LeaseNotPresentWithBlobOperation
// ("Write using (A)" on Available "Fails (412)") and creates nothing.
func TestLeaseIDOnMissingBlob(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	cc := le.c.ServiceClient().NewContainerClient("ctr")
	id := idA
	lac := &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &id}}
	put := cc.NewBlockBlobClient("put")
	if _, err := put.Upload(ctx, rsc([]byte("x")), &blockblob.UploadOptions{AccessConditions: lac}); status(err) != 412 || code(err) != "LeaseNotPresentWithBlobOperation" {
		t.Errorf("Put Blob with a lease id: %v", err)
	}
	cp := cc.NewBlockBlobClient("copy")
	if _, err := cp.StartCopyFromURL(ctx, le.bb.URL(), &blob.StartCopyFromURLOptions{AccessConditions: lac}); status(err) != 412 || code(err) != "LeaseNotPresentWithBlobOperation" {
		t.Errorf("Copy Blob with a lease id: %v", err)
	}
	for _, b := range []*blockblob.Client{put, cp} {
		if _, err := b.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
			t.Errorf("%s after the refused write: %v", b.URL(), err)
		}
	}
}

// TestPutPageIfMatchOnMissingBlob: Put Page with If-Match on a blob that
// does not exist is 404 BlobNotFound, not a failed condition.
func TestPutPageIfMatchOnMissingBlob(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	pb := le.c.ServiceClient().NewContainerClient("ctr").NewPageBlobClient("nopage")
	etag := azcoreETag(`"0x8D0000000000000"`)
	_, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Count: 512}, &pageblob.UploadPagesOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}})
	if status(err) != http.StatusNotFound || code(err) != "BlobNotFound" {
		t.Fatalf("Put Page with If-Match on a missing blob: %v", err)
	}
}

// TestPutBlobDiscardsStagedBlocks: "All uncommitted blocks are also
// discarded when a new blob of the same name is created using a single
// step", so a Put Block List naming a block staged before a Put Blob is
// 400 InvalidBlockList, and Get Block List shows no uncommitted block.
func TestPutBlobDiscardsStagedBlocks(t *testing.T) {
	ctx := context.Background()
	le := newLeaseEnv(t)
	id := base64.StdEncoding.EncodeToString([]byte("block-1"))
	if _, err := le.bb.StageBlock(ctx, id, rsc([]byte("staged")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := le.bb.UploadBuffer(ctx, []byte("single step"), nil); err != nil {
		t.Fatal(err)
	}
	bl, err := le.bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
	if err != nil || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("uncommitted blocks after Put Blob: %v %d", err, len(bl.UncommittedBlocks))
	}
	if _, err := le.bb.CommitBlockList(ctx, []string{id}, nil); status(err) != http.StatusBadRequest || code(err) != "InvalidBlockList" {
		t.Fatalf("Put Block List naming a discarded block: %v", err)
	}
	got, err := le.bb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(got.Body)
	got.Body.Close()
	if buf.String() != "single step" {
		t.Fatalf("content %q", buf.String())
	}
}
