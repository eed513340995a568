package filerest_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// restOps are the REST operations of locking.md §1.4, each run against
// share/f.txt; they report the SDK error.
var restOps = []struct {
	name string
	run  func(e *env, f *file.Client) error
}{
	{"GetFile", func(e *env, f *file.Client) error {
		r, err := f.DownloadStream(ctxBG, nil)
		if err == nil {
			r.Body.Close()
		}
		return err
	}},
	{"ListRanges", func(e *env, f *file.Client) error { _, err := f.GetRangeList(ctxBG, nil); return err }},
	{"PutRange", func(e *env, f *file.Client) error { _, err := f.UploadRange(ctxBG, 0, streamOf("zz"), nil); return err }},
	{"SetProps", func(e *env, f *file.Client) error {
		_, err := f.SetHTTPHeaders(ctxBG, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("a/b")}})
		return err
	}},
	{"SetMetadata", func(e *env, f *file.Client) error {
		_, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
		return err
	}},
	{"Create", func(e *env, f *file.Client) error { _, err := f.Create(ctxBG, 4, nil); return err }},
	{"Delete", func(e *env, f *file.Client) error { _, err := f.Delete(ctxBG, nil); return err }},
	{"LeaseAcquire", func(e *env, f *file.Client) error {
		lc, err := lease.NewFileClient(f, nil)
		if err != nil {
			return err
		}
		_, err = lc.Acquire(ctxBG, nil)
		return err
	}},
	{"GetProps", func(e *env, f *file.Client) error { _, err := f.GetProperties(ctxBG, nil); return err }},
}

// TestShareModeMatrix checks locking.md §1.4 row by row: a handle with
// read+write access (or read only for the lease column's footnote) and
// the given share mode, against each REST operation.
func TestShareModeMatrix(t *testing.T) {
	const R, W, D = locks.ShareRead, locks.ShareWrite, locks.ShareDelete
	rows := []struct {
		share locks.ShareMode
		want  string // one letter per restOps entry: X conflict, o ok
	}{
		{locks.ShareNone, "XXXXXXXXo"},
		{R, "ooXXXXXXo"},
		{W, "XXoooXXXo"},
		{D, "XXXXXXXXo"},
		{R | W, "oooooXXXo"},
		{R | D, "ooXXXXXXo"},
		{W | D, "XXoooo" + "XXo"},
		{R | W | D, "oooooo" + "XXo"}, // Delete: any handle blocks; lease: the handle writes
	}
	for _, row := range rows {
		for i, op := range restOps {
			row, i, op := row, i, op
			t.Run(shareName(row.share)+"/"+op.name, func(t *testing.T) {
				e := newEnv(t)
				e.mustShare("share")
				f := e.mustFile("share", "f.txt", []byte("data"))
				e.open("share/f.txt", locks.AccessRead|locks.AccessWrite, row.share)
				err := op.run(e, f)
				if row.want[i] == 'X' {
					if !fileerror.HasCode(err, fileerror.SharingViolation) {
						t.Fatalf("want SharingViolation, got %v", err)
					}
				} else if err != nil {
					t.Fatalf("want success, got %v", err)
				}
			})
		}
	}
}

func shareName(m locks.ShareMode) string {
	var s []string
	for _, x := range []struct {
		b locks.ShareMode
		n string
	}{{locks.ShareRead, "R"}, {locks.ShareWrite, "W"}, {locks.ShareDelete, "D"}} {
		if m&x.b != 0 {
			s = append(s, x.n)
		}
	}
	if len(s) == 0 {
		return "None"
	}
	return strings.Join(s, "")
}

func TestSharingViolationClearsOnClose(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	h := e.open("share/f.txt", locks.AccessRead, locks.ShareRead)
	_, err := f.UploadRange(ctxBG, 0, streamOf("x"), nil)
	if !fileerror.HasCode(err, fileerror.SharingViolation) {
		t.Fatalf("put range with a read-only-sharing handle: %v", err)
	}
	if err := h.Close(ctxBG); err != nil {
		t.Fatal(err)
	}
	if _, err := f.UploadRange(ctxBG, 0, streamOf("x"), nil); err != nil {
		t.Fatalf("after close: %v", err)
	}
}

func TestDeletePending(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	e.mustFile("share", "other.txt", nil)
	h := e.open("share/f.txt", locks.AccessRead|locks.AccessDelete, locks.ShareAll)
	if err := h.Dispose(ctxBG, true); err != nil {
		t.Fatal(err)
	}
	for _, op := range restOps {
		err := op.run(e, f)
		if errCode(err) != "SMBDeletePending" {
			t.Errorf("%s on a delete-pending file: %v, want SMBDeletePending", op.name, err)
		}
		// The SDK knows the condition as DeletePending (locking.md A1).
		if fileerror.HasCode(err, fileerror.DeletePending) {
			t.Errorf("%s: unexpectedly DeletePending", op.name)
		}
	}
	// Left out of listings.
	page, err := e.dir("share", "").NewListFilesAndDirectoriesPager(nil).NextPage(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Segment.Files) != 1 || *page.Segment.Files[0].Name != "other.txt" {
		t.Fatalf("listing while pending: %d files", len(page.Segment.Files))
	}
	if err := h.Close(ctxBG); err != nil {
		t.Fatal(err)
	}
	_, err = f.GetProperties(ctxBG, nil)
	if !fileerror.HasCode(err, fileerror.ResourceNotFound) {
		t.Fatalf("after last close: %v, want ResourceNotFound", err)
	}
}

func TestFileLockConflict(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", make([]byte, 100))
	h := e.open("share/f.txt", locks.AccessRead|locks.AccessWrite, locks.ShareAll)
	if err := h.Lock(ctxBG, locks.Range{Offset: 10, Length: 10}, locks.LockExclusive); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		run      func() error
		conflict bool
	}{
		{"ranged read overlapping", func() error {
			r, err := f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 15, Count: 10}})
			if err == nil {
				r.Body.Close()
			}
			return err
		}, true},
		{"ranged read missing the lock", func() error {
			r, err := f.DownloadStream(ctxBG, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 50, Count: 10}})
			if err == nil {
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			return err
		}, false},
		{"whole read", func() error {
			r, err := f.DownloadStream(ctxBG, nil)
			if err == nil {
				r.Body.Close()
			}
			return err
		}, true},
		{"write overlapping", func() error { _, err := f.UploadRange(ctxBG, 19, streamOf("ab"), nil); return err }, true},
		{"write elsewhere", func() error { _, err := f.UploadRange(ctxBG, 20, streamOf("ab"), nil); return err }, false},
		{"clear overlapping", func() error {
			_, err := f.ClearRange(ctxBG, file.HTTPRange{Offset: 0, Count: 12}, nil)
			return err
		}, true},
		{"list ranges", func() error { _, err := f.GetRangeList(ctxBG, nil); return err }, false},
	}
	for _, tt := range tests {
		err := tt.run()
		if tt.conflict && !fileerror.HasCode(err, fileerror.FileLockConflict) {
			t.Errorf("%s: %v, want FileLockConflict", tt.name, err)
		}
		if !tt.conflict && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestLeases(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	idA, idB := "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002"
	la, err := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: to.Ptr(idA)})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.GetProperties(ctxBG, nil)
	acq, err := la.Acquire(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *acq.LeaseID != idA || *acq.ETag != *before.ETag {
		t.Fatalf("acquire: id %s etag %s (before %s)", *acq.LeaseID, *acq.ETag, *before.ETag)
	}
	gp, _ := f.GetProperties(ctxBG, nil)
	if *gp.LeaseState != lease.StateTypeLeased || *gp.LeaseStatus != lease.StatusTypeLocked || *gp.LeaseDuration != lease.DurationTypeInfinite {
		t.Fatalf("lease headers %v %v %v", *gp.LeaseState, *gp.LeaseStatus, gp.LeaseDuration)
	}
	lb, _ := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: to.Ptr(idB)})
	_, err = lb.Acquire(ctxBG, nil)
	wantCode(t, "acquire with another id", err, "LeaseAlreadyPresent")

	_, err = f.SetMetadata(ctxBG, nil)
	wantCode(t, "write without lease id", err, "LeaseIdMissing")
	_, err = f.SetMetadata(ctxBG, &file.SetMetadataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idB)}})
	wantCode(t, "write with wrong lease id", err, "LeaseIdMismatchWithFileOperation")
	if _, err := f.SetMetadata(ctxBG, &file.SetMetadataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idA)}}); err != nil {
		t.Fatalf("write with the lease id: %v", err)
	}
	_, err = f.GetProperties(ctxBG, &file.GetPropertiesOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idB)}})
	wantCode(t, "read with wrong lease id", err, "LeaseIdMismatchWithFileOperation")
	if _, err := f.GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("read without lease id: %v", err)
	}
	_, err = f.Delete(ctxBG, nil)
	wantCode(t, "delete leased without id", err, "LeaseIdMissing")

	// An SMB-style open for write is refused while leased; read is fine.
	_, _, err = e.fs.OpenByPath(ctxBG, openReq("share/f.txt", locks.AccessWrite))
	if !errors.Is(err, locks.ErrSharingViolation) {
		t.Fatalf("write open while leased: %v", err)
	}

	ch, err := la.Change(ctxBG, idB, nil)
	if err != nil || *ch.LeaseID != idB {
		t.Fatalf("change: %v", err)
	}
	br, err := lb.Break(ctxBG, nil)
	if err != nil || br.ETag == nil {
		t.Fatalf("break: %v", err)
	}
	gp, _ = f.GetProperties(ctxBG, nil)
	if *gp.LeaseState != lease.StateTypeBroken {
		t.Fatalf("state after break %v", *gp.LeaseState)
	}
	if _, err := lb.Release(ctxBG, nil); err != nil {
		t.Fatalf("release broken: %v", err)
	}
	_, err = lb.Release(ctxBG, nil)
	wantCode(t, "release with no lease", err, "LeaseNotPresentWithLeaseOperation")
	_, err = f.SetMetadata(ctxBG, &file.SetMetadataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idA)}})
	wantCode(t, "lease id without lease", err, "LeaseNotPresentWithFileOperation")
}

func TestListAndForceCloseHandles(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	if _, err := e.dir("share", "d").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	f := e.mustFile("share", "d/f.txt", []byte("data"))
	e.mustFile("share", "d/g.txt", []byte("data"))
	h1 := e.open("share/d/f.txt", locks.AccessRead|locks.AccessWrite, locks.ShareRead)
	h2 := e.open("share/d/g.txt", locks.AccessRead, locks.ShareAll)

	resp, err := f.ListHandles(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Handles) != 1 {
		t.Fatalf("file handles: %d", len(resp.Handles))
	}
	hd := resp.Handles[0]
	if *hd.ID != itoa(uint64(h1.ID())) || *hd.Path != "d/f.txt" || *hd.ClientIP != "10.0.0.7" || *hd.SessionID != "42" || hd.OpenTime == nil {
		t.Fatalf("handle %+v", hd)
	}
	var rights []string
	for _, r := range hd.AccessRightList {
		rights = append(rights, string(*r))
	}
	if strings.Join(rights, ",") != "Read,Write" {
		t.Fatalf("access rights %v", rights)
	}
	dresp, err := e.dir("share", "d").ListHandles(ctxBG, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	if err != nil || len(dresp.Handles) != 2 {
		t.Fatalf("recursive dir handles: %v %v", dresp.Handles, err)
	}
	rresp, err := e.dir("share", "").ListHandles(ctxBG, &directory.ListHandlesOptions{Recursive: to.Ptr(true), MaxResults: to.Ptr(int32(1))})
	if err != nil || len(rresp.Handles) != 1 || rresp.NextMarker == nil || *rresp.NextMarker == "" {
		t.Fatalf("paged root handles: %v %v", rresp, err)
	}

	// Force close by id: the owner's next use fails with ErrHandleClosed.
	fc, err := f.ForceCloseHandles(ctxBG, *hd.ID, nil)
	if err != nil || *fc.NumberOfHandlesClosed != 1 || *fc.NumberOfHandlesFailedToClose != 0 {
		t.Fatalf("force close: %+v %v", fc, err)
	}
	if _, err := h1.ReadAt(ctxBG, make([]byte, 1), 0); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("read through a force-closed handle: %v", err)
	}
	// Its share mode is gone: a write now works.
	if _, err := f.UploadRange(ctxBG, 0, streamOf("x"), nil); err != nil {
		t.Fatalf("write after force close: %v", err)
	}
	fc, err = f.ForceCloseHandles(ctxBG, "999999", nil)
	if err != nil || *fc.NumberOfHandlesClosed != 0 {
		t.Fatalf("force close unknown id: %v %v", fc, err)
	}
	dfc, err := e.dir("share", "d").ForceCloseHandles(ctxBG, "*", &directory.ForceCloseHandlesOptions{Recursive: to.Ptr(true)})
	if err != nil || *dfc.NumberOfHandlesClosed != 1 {
		t.Fatalf("force close all under d: %v %v", dfc, err)
	}
	if err := h2.Close(ctxBG); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("close of a force-closed handle: %v", err)
	}
	resp, err = f.ListHandles(ctxBG, nil)
	if err != nil || len(resp.Handles) != 0 {
		t.Fatalf("handles after force close: %v %v", resp.Handles, err)
	}
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestMountStyleHandle opens a file through the mount view (id-based, as
// FUSE does) and sees it in List Handles, then force-closes it.
func TestMountStyleHandle(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	sh, err := e.fs.Lookup(ctxBG, fs.RootID, "share")
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := e.fs.Create(ctxBG, fs.CreateRequest{Parent: sh.ID, Name: "m.txt", Open: fs.OpenOptions{
		Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareRead | locks.ShareWrite, ClientName: "fuse",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctxBG)
	if _, err := h.WriteAt(ctxBG, []byte("via mount"), 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Flush(ctxBG); err != nil {
		t.Fatal(err)
	}
	// What the mount wrote is what REST reads (the handle shares Read).
	dl, err := e.file("share", "m.txt").DownloadStream(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(got) != "via mount" {
		t.Fatalf("REST read %q", got)
	}
	resp, err := e.dir("share", "").ListHandles(ctxBG, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	if err != nil || len(resp.Handles) != 1 || *resp.Handles[0].Path != "m.txt" || *resp.Handles[0].ClientName != "fuse" {
		t.Fatalf("handles %v %v", resp.Handles, err)
	}
	f := e.file("share", "m.txt")
	// The mount handle does not share Delete: REST Delete File is refused.
	_, err = f.Delete(ctxBG, nil)
	if !fileerror.HasCode(err, fileerror.SharingViolation) {
		t.Fatalf("delete while open on the mount: %v", err)
	}
	if _, err := e.dir("share", "").ForceCloseHandles(ctxBG, "*", &directory.ForceCloseHandlesOptions{Recursive: to.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt(ctxBG, []byte("x"), 0); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("write through a force-closed mount handle: %v", err)
	}
	if _, err := f.Delete(ctxBG, nil); err != nil {
		t.Fatalf("delete after force close: %v", err)
	}
}

func TestLeaseStateMachineDetails(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	idA, idB := "aaaaaaaa-0000-0000-0000-00000000000a", "bbbbbbbb-0000-0000-0000-00000000000b"

	// Acquire without a proposed id: the service makes one up.
	l0, _ := lease.NewFileClient(f, nil)
	acq, err := l0.Acquire(ctxBG, nil)
	if err != nil || acq.LeaseID == nil || len(*acq.LeaseID) != 36 {
		t.Fatalf("acquire without id: %v %v", acq.LeaseID, err)
	}
	gen := *acq.LeaseID
	lg, _ := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: to.Ptr(gen)})
	if _, err := lg.Acquire(ctxBG, nil); err != nil {
		t.Fatalf("re-acquire with the same id (idempotent): %v", err)
	}
	if _, err := lg.Change(ctxBG, idA, nil); err != nil {
		t.Fatal(err)
	}
	la, _ := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: to.Ptr(idA)})
	// Retry of a change already made (B→A with A current) succeeds.
	lb, _ := lease.NewFileClient(f, &lease.FileClientOptions{LeaseID: to.Ptr(idB)})
	if _, err := lb.Change(ctxBG, idA, nil); err != nil {
		t.Fatalf("change retry: %v", err)
	}
	// Put Range needs the id; Create File over the leased file keeps the lease.
	_, err = f.UploadRange(ctxBG, 0, streamOf("x"), nil)
	wantCode(t, "put range without lease id", err, "LeaseIdMissing")
	if _, err := f.UploadRange(ctxBG, 0, streamOf("x"), &file.UploadRangeOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idA)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Create(ctxBG, 2, &file.CreateOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idA)}}); err != nil {
		t.Fatal(err)
	}
	gp, _ := f.GetProperties(ctxBG, nil)
	if *gp.LeaseState != lease.StateTypeLeased || *gp.ContentLength != 2 {
		t.Fatalf("after create over leased file: %v size %d", *gp.LeaseState, *gp.ContentLength)
	}
	// A lease id on Create File for a file that does not exist → 412.
	_, err = e.file("share", "new.txt").Create(ctxBG, 1, &file.CreateOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(idA)}})
	wantCode(t, "create new with lease id", err, "LeaseNotPresentWithFileOperation")
	// Break on an available file → 409.
	if _, err := la.Release(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_, err = la.Break(ctxBG, nil)
	wantCode(t, "break without lease", err, "LeaseNotPresentWithLeaseOperation")
	// Lease acquire against a read-only handle sharing everything: ok (§1.5).
	h := e.open("share/f.txt", locks.AccessRead, locks.ShareAll)
	if _, err := la.Acquire(ctxBG, nil); err != nil {
		t.Fatalf("acquire with a read handle sharing all: %v", err)
	}
	if _, err := la.Release(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	_ = h.Close(ctxBG)
	// ... but not against a read handle that does not share Write.
	e.open("share/f.txt", locks.AccessRead, locks.ShareRead|locks.ShareDelete)
	_, err = la.Acquire(ctxBG, nil)
	if !fileerror.HasCode(err, fileerror.SharingViolation) {
		t.Fatalf("acquire against a handle denying write: %v", err)
	}
}

// TestWorkedExamples are "Manage file locks"' examples (locking.md §1.4):
// handle Read + share Write → Get File fails; handle Write + share Read →
// Put Range fails.
func TestWorkedExamples(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	h := e.open("share/f.txt", locks.AccessRead, locks.ShareWrite)
	_, err := f.DownloadStream(ctxBG, nil)
	if !fileerror.HasCode(err, fileerror.SharingViolation) {
		t.Fatalf("get file: %v", err)
	}
	_ = h.Close(ctxBG)
	e.open("share/f.txt", locks.AccessWrite, locks.ShareRead)
	_, err = f.UploadRange(ctxBG, 0, streamOf("x"), nil)
	if !fileerror.HasCode(err, fileerror.SharingViolation) {
		t.Fatalf("put range: %v", err)
	}
	// Share modes never block Get File Properties or listing.
	if _, err := f.GetProperties(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
}

// TestDeleteOnClose: a delete-on-close handle changes nothing while open
// (MS-FSA, locking.md A8); when it closes the file is gone (404).
func TestDeleteOnClose(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	f := e.mustFile("share", "f.txt", []byte("data"))
	h, _, err := e.fs.OpenByPath(ctxBG, fs.OpenPathRequest{Path: "share/f.txt", Open: fs.OpenOptions{
		Access: locks.AccessRead | locks.AccessDelete, Share: locks.ShareAll, DeleteOnClose: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("while a delete-on-close handle is open: %v", err)
	}
	if err := h.Close(ctxBG); err != nil {
		t.Fatal(err)
	}
	_, err = f.GetProperties(ctxBG, nil)
	if !fileerror.HasCode(err, fileerror.ResourceNotFound) {
		t.Fatalf("after close: %v", err)
	}
}
