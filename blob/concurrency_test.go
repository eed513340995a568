package blob_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

// leaseEnv is a server on a fake clock with container "c" and blob "b".
type leaseEnv struct {
	*env
	clock *fakeClock
	c     *azblob.Client
	bb    *blockblob.Client
}

func newLeaseEnv(t *testing.T) *leaseEnv {
	t.Helper()
	clk := newFakeClock()
	e := newEnv(t, clk.Now)
	c := e.client(t)
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("b")
	if _, err := bb.UploadBuffer(ctx, []byte("v1"), nil); err != nil {
		t.Fatal(err)
	}
	return &leaseEnv{env: e, clock: clk, c: c, bb: bb}
}

func (le *leaseEnv) lease(t *testing.T, id string) *lease.BlobClient {
	t.Helper()
	o := &lease.BlobClientOptions{}
	if id != "" {
		o.LeaseID = &id
	}
	lc, err := lease.NewBlobClient(le.bb, o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// update writes the blob's metadata, with the lease id if not "".
func (le *leaseEnv) update(leaseID string) error {
	o := &blob.SetMetadataOptions{}
	if leaseID != "" {
		o.AccessConditions = &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &leaseID}}
	}
	_, err := le.bb.SetMetadata(context.Background(), map[string]*string{"v": to.Ptr("x")}, o)
	return err
}

func (le *leaseEnv) state(t *testing.T) (string, string) {
	t.Helper()
	p, err := le.bb.GetProperties(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(*p.LeaseState), string(*p.LeaseStatus)
}

const (
	idA = "11111111-1111-1111-1111-111111111111"
	idB = "22222222-2222-2222-2222-222222222222"
)

// TestSeedSampleIfMatch is the seed's optimistic-concurrency sample:
// reader A keeps the ETag it read, writer B updates the blob, and A's
// If-Match update then gets 412 ConditionNotMet; A re-reads and wins.
func TestSeedSampleIfMatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	a, b := e.client(t), e.client(t)
	if _, err := a.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UploadBuffer(ctx, "ctr", "doc", []byte("original"), nil); err != nil {
		t.Fatal(err)
	}
	ba := a.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("doc")
	props, err := ba.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := *props.ETag
	if _, err := b.UploadBuffer(ctx, "ctr", "doc", []byte("B's update"), nil); err != nil {
		t.Fatal(err)
	}
	_, err = ba.UploadBuffer(ctx, []byte("A's update"), &blockblob.UploadBufferOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &seen}}})
	if status(err) != http.StatusPreconditionFailed || code(err) != "ConditionNotMet" {
		t.Fatalf("stale If-Match update: %v", err)
	}
	if got := download(t, ba.BlobClient(), nil); string(got) != "B's update" {
		t.Fatalf("content %q", got)
	}
	props, _ = ba.GetProperties(ctx, nil)
	fresh := *props.ETag
	if _, err := ba.UploadBuffer(ctx, []byte("A's update"), &blockblob.UploadBufferOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &fresh}}}); err != nil {
		t.Fatalf("fresh If-Match update: %v", err)
	}
}

// TestSeedSampleLease is the seed's pessimistic-concurrency sample with
// an injected clock: a 15-second lease; the holder's update succeeds, an
// update without the lease id gets 412 LeaseIdMissing (and with another
// id LeaseIdMismatchWithBlobOperation); after 15 s the lease has expired,
// an update with its id is 412 LeaseLost, and the update without an id
// succeeds and makes the lease available.
func TestSeedSampleLease(t *testing.T) {
	le := newLeaseEnv(t)
	ctx := context.Background()
	acq, err := le.lease(t, idA).AcquireLease(ctx, 15, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *acq.LeaseID != idA {
		t.Fatalf("lease id %s", *acq.LeaseID)
	}
	if err := le.update(idA); err != nil {
		t.Fatalf("holder's update: %v", err)
	}
	if err := le.update(""); status(err) != 412 || code(err) != "LeaseIdMissing" {
		t.Fatalf("update without lease: %v", err)
	}
	if err := le.update(idB); status(err) != 412 || code(err) != "LeaseIdMismatchWithBlobOperation" {
		t.Fatalf("update with another lease id: %v", err)
	}
	if _, err := le.bb.Delete(ctx, nil); code(err) != "LeaseIdMissing" {
		t.Fatalf("delete without lease: %v", err)
	}
	le.clock.Advance(14*time.Second + 999*time.Millisecond)
	if err := le.update(""); code(err) != "LeaseIdMissing" {
		t.Fatalf("update 1 ms before expiry: %v", err)
	}
	le.clock.Advance(time.Millisecond)
	if st, _ := le.state(t); st != "expired" {
		t.Fatalf("state at 15 s: %s", st)
	}
	if err := le.update(idA); code(err) != "LeaseLost" {
		t.Fatalf("update with the expired lease id: %v", err)
	}
	if err := le.update(""); err != nil {
		t.Fatalf("update after expiry: %v", err)
	}
	// "Write, no lease specified" on Expired (A): "Available, write
	// succeeds"; the expired id is forgotten with the write.
	if st, _ := le.state(t); st != "available" {
		t.Fatalf("state after a write on the expired lease: %s", st)
	}
	if err := le.update(idA); code(err) != "LeaseNotPresentWithBlobOperation" {
		t.Fatalf("update with the old lease id after a write: %v", err)
	}
}

// TestLeaseTiming covers the lease state machine with the injected
// clock: 60-second expiry, break periods 0-60 s, break of an infinite
// lease, renew of an expired lease nobody took, acquire of a broken lease,
// and that no lease operation changes the ETag.
func TestLeaseTiming(t *testing.T) {
	ctx := context.Background()

	t.Run("expiry after 60 s and renew of the expired lease", func(t *testing.T) {
		le := newLeaseEnv(t)
		if _, err := le.lease(t, idA).AcquireLease(ctx, 60, nil); err != nil {
			t.Fatal(err)
		}
		le.clock.Advance(59 * time.Second)
		if st, status := le.state(t); st != "leased" || status != "locked" {
			t.Fatalf("at 59 s: %s %s", st, status)
		}
		if _, err := le.lease(t, idB).AcquireLease(ctx, 15, nil); code(err) != "LeaseAlreadyPresent" {
			t.Fatalf("acquire by B while leased: %v", err)
		}
		le.clock.Advance(time.Second)
		if st, status := le.state(t); st != "expired" || status != "unlocked" {
			t.Fatalf("at 60 s: %s %s", st, status)
		}
		le.clock.Advance(100 * time.Second)
		if _, err := le.lease(t, idA).RenewLease(ctx, nil); err != nil {
			t.Fatalf("renew of an expired lease nobody took: %v", err)
		}
		if st, _ := le.state(t); st != "leased" {
			t.Fatalf("after renew: %s", st)
		}
		le.clock.Advance(59 * time.Second)
		if err := le.update(""); code(err) != "LeaseIdMissing" {
			t.Fatalf("renewed lease (60 s from renewal) does not hold: %v", err)
		}
	})

	t.Run("renew fails once the expired blob was written", func(t *testing.T) {
		le := newLeaseEnv(t)
		if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); err != nil {
			t.Fatal(err)
		}
		le.clock.Advance(20 * time.Second)
		if err := le.update(""); err != nil {
			t.Fatal(err)
		}
		// The write made the lease available (Lease Blob's table), so
		// the renew answers as on Available: 409
		// LeaseIdMismatchWithLeaseOperation.
		if _, err := le.lease(t, idA).RenewLease(ctx, nil); status(err) != http.StatusConflict || code(err) != "LeaseIdMismatchWithLeaseOperation" {
			t.Fatalf("renew after another write: %v", err)
		}
	})

	for _, period := range []int32{0, 1, 15, 30, 60} {
		t.Run("break infinite lease with period "+itoa(int64(period)), func(t *testing.T) {
			le := newLeaseEnv(t)
			if _, err := le.lease(t, idA).AcquireLease(ctx, -1, nil); err != nil {
				t.Fatal(err)
			}
			le.clock.Advance(time.Hour)
			if st, _ := le.state(t); st != "leased" {
				t.Fatalf("infinite lease after an hour: %s", st)
			}
			br, err := le.lease(t, "").BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(period)})
			if err != nil {
				t.Fatal(err)
			}
			if *br.LeaseTime != period {
				t.Fatalf("lease time %d, want %d", *br.LeaseTime, period)
			}
			if period > 0 {
				le.clock.Advance(time.Duration(period)*time.Second - time.Millisecond)
				if st, status := le.state(t); st != "breaking" || status != "locked" {
					t.Fatalf("just before the break: %s %s", st, status)
				}
				if err := le.update(""); code(err) != "LeaseIdMissing" {
					t.Fatalf("write without id while breaking: %v", err)
				}
				if err := le.update(idA); err != nil {
					t.Fatalf("holder's write while breaking: %v", err)
				}
				if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); code(err) != "LeaseIsBreakingAndCannotBeAcquired" {
					t.Fatalf("acquire while breaking: %v", err)
				}
				le.clock.Advance(time.Millisecond)
			}
			if st, status := le.state(t); st != "broken" || status != "unlocked" {
				t.Fatalf("after the break period: %s %s", st, status)
			}
			if _, err := le.lease(t, idA).RenewLease(ctx, nil); code(err) != "LeaseIsBrokenAndCannotBeRenewed" {
				t.Fatalf("renew of a broken lease: %v", err)
			}
			// "Write, no lease specified" on Broken (A): "Available,
			// write succeeds" (Lease Blob's table); the old id is gone.
			if err := le.update(""); err != nil {
				t.Fatalf("write after the break: %v", err)
			}
			if st, _ := le.state(t); st != "available" {
				t.Fatalf("after a write on the broken lease: %s", st)
			}
			if _, err := le.lease(t, idA).RenewLease(ctx, nil); code(err) != "LeaseIdMismatchWithLeaseOperation" {
				t.Fatalf("renew with the old id after a write: %v", err)
			}
			acq, err := le.lease(t, idB).AcquireLease(ctx, 20, nil)
			if err != nil || *acq.LeaseID != idB {
				t.Fatalf("acquire of a broken lease: %v", err)
			}
		})
	}

	t.Run("break of an infinite lease without a period is immediate", func(t *testing.T) {
		le := newLeaseEnv(t)
		if _, err := le.lease(t, idA).AcquireLease(ctx, -1, nil); err != nil {
			t.Fatal(err)
		}
		br, err := le.lease(t, "").BreakLease(ctx, nil)
		if err != nil || *br.LeaseTime != 0 {
			t.Fatalf("break: %v %v", err, br.LeaseTime)
		}
		if st, _ := le.state(t); st != "broken" {
			t.Fatalf("state %s", st)
		}
	})

	t.Run("break period longer than the rest of a fixed lease", func(t *testing.T) {
		le := newLeaseEnv(t)
		if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); err != nil {
			t.Fatal(err)
		}
		le.clock.Advance(5 * time.Second)
		br, err := le.lease(t, "").BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(60))})
		if err != nil || *br.LeaseTime != 10 {
			t.Fatalf("break: %v, lease time %v (want 10)", err, br.LeaseTime)
		}
		le.clock.Advance(10 * time.Second)
		if st, _ := le.state(t); st != "broken" {
			t.Fatalf("state %s", st)
		}
	})

	t.Run("change, release, and the ETag never moves", func(t *testing.T) {
		le := newLeaseEnv(t)
		p, _ := le.bb.GetProperties(ctx, nil)
		etag := *p.ETag
		if _, err := le.lease(t, idA).AcquireLease(ctx, 30, nil); err != nil {
			t.Fatal(err)
		}
		ch, err := le.lease(t, idA).ChangeLease(ctx, idB, nil)
		if err != nil || *ch.LeaseID != idB {
			t.Fatalf("change: %v", err)
		}
		if err := le.update(idA); code(err) != "LeaseIdMismatchWithBlobOperation" {
			t.Fatalf("old id after change: %v", err)
		}
		if _, err := le.lease(t, idA).ReleaseLease(ctx, nil); code(err) != "LeaseIdMismatchWithLeaseOperation" {
			t.Fatalf("release with the old id: %v", err)
		}
		if _, err := le.lease(t, idB).RenewLease(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := le.lease(t, idB).BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(10))}); err != nil {
			t.Fatal(err)
		}
		p, _ = le.bb.GetProperties(ctx, nil)
		if *p.ETag != etag {
			t.Fatalf("a lease operation changed the ETag: %s → %s", etag, *p.ETag)
		}
		if _, err := le.lease(t, idB).ReleaseLease(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if st, _ := le.state(t); st != "available" {
			t.Fatalf("after release: %s", st)
		}
		if _, err := le.lease(t, idB).ReleaseLease(ctx, nil); code(err) != "LeaseIdMismatchWithLeaseOperation" {
			t.Fatalf("release with no lease: %v", err)
		}
		if err := le.update(idB); code(err) != "LeaseNotPresentWithBlobOperation" {
			t.Fatalf("write with a lease id and no lease: %v", err)
		}
	})

	t.Run("bad durations and periods", func(t *testing.T) {
		le := newLeaseEnv(t)
		for _, d := range []int32{0, 14, 61} {
			if _, err := le.lease(t, idA).AcquireLease(ctx, d, nil); code(err) != "InvalidHeaderValue" {
				t.Fatalf("duration %d: %v", d, err)
			}
		}
		if _, err := le.lease(t, idA).AcquireLease(ctx, 15, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := le.lease(t, "").BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(61))}); code(err) != "InvalidHeaderValue" {
			t.Fatalf("break period 61: %v", err)
		}
	})
}

// TestContainerLease: a container lease guards Delete Container only.
func TestContainerLease(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	e := newEnv(t, clk.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "leased", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("leased")
	lc, err := lease.NewContainerClient(cc, &lease.ContainerClientOptions{LeaseID: to.Ptr(idA)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.AcquireLease(ctx, 20, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.SetMetadata(ctx, &container.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatalf("set metadata without the lease: %v", err)
	}
	if _, err := cc.NewBlockBlobClient("x").UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Fatalf("blob write in a leased container: %v", err)
	}
	if _, err := cc.Delete(ctx, nil); status(err) != 412 || code(err) != "LeaseIdMissing" {
		t.Fatalf("delete without the lease: %v", err)
	}
	other := idB
	if _, err := cc.Delete(ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{
		LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: &other}}}); code(err) != "LeaseIdMismatchWithContainerOperation" {
		t.Fatalf("delete with another id: %v", err)
	}
	props, _ := cc.GetProperties(ctx, nil)
	if *props.LeaseState != "leased" || *props.LeaseDuration != "fixed" {
		t.Fatalf("container lease %v %v", *props.LeaseState, props.LeaseDuration)
	}
	clk.Advance(20 * time.Second)
	props, _ = cc.GetProperties(ctx, nil)
	if *props.LeaseState != "expired" {
		t.Fatalf("after 20 s: %v", *props.LeaseState)
	}
	if _, err := lc.AcquireLease(ctx, -1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Delete(ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{
		LeaseAccessConditions: &container.LeaseAccessConditions{LeaseID: to.Ptr(idA)}}}); err != nil {
		t.Fatalf("delete with the lease: %v", err)
	}
}

// TestConditionalRequests: 304 for GET/HEAD with a matching
// If-None-Match or an unchanged If-Modified-Since; 412 ConditionNotMet
// for a failed If-Match / If-Unmodified-Since, for If-None-Match: * on an
// existing blob (create-only) and If-Match on a missing one.
func TestConditionalRequests(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	e := newEnv(t, clk.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("b")
	up, err := bb.UploadBuffer(ctx, []byte("v1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := *up.ETag
	written := clk.Now()
	cond := func(m blob.ModifiedAccessConditions) *blob.AccessConditions {
		return &blob.AccessConditions{ModifiedAccessConditions: &m}
	}
	other := azcoreETag(`"0xDEADBEEF"`)
	star := azcoreETag("*")
	later, earlier := written.Add(time.Hour), written.Add(-time.Hour)

	reads := []struct {
		name string
		m    blob.ModifiedAccessConditions
		want int // 0: 200
	}{
		{"If-None-Match same", blob.ModifiedAccessConditions{IfNoneMatch: &etag}, 304},
		{"If-None-Match other", blob.ModifiedAccessConditions{IfNoneMatch: &other}, 0},
		{"If-Modified-Since later", blob.ModifiedAccessConditions{IfModifiedSince: &later}, 304},
		{"If-Modified-Since earlier", blob.ModifiedAccessConditions{IfModifiedSince: &earlier}, 0},
		{"If-Match other", blob.ModifiedAccessConditions{IfMatch: &other}, 412},
		{"If-Match same", blob.ModifiedAccessConditions{IfMatch: &etag}, 0},
		{"If-Unmodified-Since earlier", blob.ModifiedAccessConditions{IfUnmodifiedSince: &earlier}, 412},
		{"If-Unmodified-Since later", blob.ModifiedAccessConditions{IfUnmodifiedSince: &later}, 0},
		{"If-None-Match *", blob.ModifiedAccessConditions{IfNoneMatch: &star}, 400},
	}
	for _, tc := range reads {
		resp, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: cond(tc.m)})
		if tc.want == 304 {
			// The SDK turns a 304 into an empty response carrying the
			// error code (blob.Client.DownloadStream).
			if err != nil || resp.ErrorCode == nil || *resp.ErrorCode != "ConditionNotMet" || resp.Body != nil {
				t.Errorf("GET %s: %v, error code %v; want 304", tc.name, err, resp.ErrorCode)
			}
		} else if status(err) != tc.want || err == nil && resp.ErrorCode != nil {
			t.Errorf("GET %s: %v, want %d", tc.name, err, tc.want)
		}
		if resp.Body != nil {
			resp.Body.Close()
		}
		_, err = bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: cond(tc.m)})
		if status(err) != tc.want {
			t.Errorf("HEAD %s: %v, want %d", tc.name, err, tc.want)
		}
	}
	writes := []struct {
		name string
		m    blob.ModifiedAccessConditions
		ok   bool
	}{
		{"If-Match other", blob.ModifiedAccessConditions{IfMatch: &other}, false},
		{"If-None-Match same", blob.ModifiedAccessConditions{IfNoneMatch: &etag}, false},
		// Only creating writes refuse If-None-Match: * on an existing blob
		// (409, below); others ignore it, as Azure does.
		{"If-None-Match *", blob.ModifiedAccessConditions{IfNoneMatch: &star}, true},
		{"If-Modified-Since later", blob.ModifiedAccessConditions{IfModifiedSince: &later}, false},
		{"If-Unmodified-Since earlier", blob.ModifiedAccessConditions{IfUnmodifiedSince: &earlier}, false},
		{"If-Unmodified-Since later", blob.ModifiedAccessConditions{IfUnmodifiedSince: &later}, true},
	}

	for _, tc := range writes {
		_, err := bb.SetMetadata(ctx, map[string]*string{"k": to.Ptr("v")}, &blob.SetMetadataOptions{AccessConditions: cond(tc.m)})
		if tc.ok != (err == nil) || !tc.ok && code(err) != "ConditionNotMet" {
			t.Errorf("Set Metadata %s: %v", tc.name, err)
		}
	}
	fresh := c.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("new")
	if _, err := fresh.UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{AccessConditions: cond(blob.ModifiedAccessConditions{IfMatch: &star})}); code(err) != "ConditionNotMet" {
		t.Errorf("If-Match * on a missing blob: %v", err)
	}
	if _, err := fresh.UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{AccessConditions: cond(blob.ModifiedAccessConditions{IfNoneMatch: &star})}); err != nil {
		t.Errorf("create-only upload: %v", err)
	}
	if _, err := fresh.UploadBuffer(ctx, []byte("y"), &blockblob.UploadBufferOptions{AccessConditions: cond(blob.ModifiedAccessConditions{IfNoneMatch: &star})}); status(err) != 409 || code(err) != "BlobAlreadyExists" {
		t.Errorf("second create-only upload: %v", err)
	}
}

func azcoreETag(s string) azcore.ETag { return azcore.ETag(s) }
