package filerest_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func download(t *testing.T, f *file.Client) ([]byte, error) {
	t.Helper()
	dl, err := f.DownloadStream(ctxBG, nil)
	if err != nil {
		return nil, err
	}
	defer dl.Body.Close()
	return io.ReadAll(dl.Body)
}

func TestShareSnapshotsSDK(t *testing.T) {
	e := newEnv(t)
	s := e.share("snaps")
	if _, err := s.Create(ctxBG, &share.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("live")}}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("snapshot data. "), 400_000) // ~6 MiB: blob-backed, two blocks
	e.mustFile("snaps", "big.bin", big)
	e.mustFile("snaps", "a.txt", []byte("version 1"))
	if _, err := e.dir("snaps", "d").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	inner := e.share("snaps").NewDirectoryClient("d").NewFileClient("inner.txt")
	if _, err := inner.Create(ctxBG, 5, nil); err != nil {
		t.Fatal(err)
	}

	cs, err := s.CreateSnapshot(ctxBG, &share.CreateSnapshotOptions{Metadata: map[string]*string{"k": to.Ptr("snap")}})
	if err != nil || cs.Snapshot == nil {
		t.Fatalf("create snapshot: %v", err)
	}
	snap := *cs.Snapshot

	// The live share moves on.
	if _, err := e.file("snaps", "big.bin").UploadRange(ctxBG, 0, nopCloser(bytes.NewReader([]byte("CHANGED!"))), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.file("snaps", "a.txt").UploadBuffer(ctxBG, []byte("version 2"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	e.mustFile("snaps", "new.txt", []byte("after"))

	ss, err := s.WithSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	root := ss.NewRootDirectoryClient()
	if got, err := download(t, root.NewFileClient("big.bin")); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big.bin in the snapshot: %d bytes %v", len(got), err)
	}
	if got, err := download(t, root.NewFileClient("a.txt")); err != nil || string(got) != "version 1" {
		t.Fatalf("a.txt in the snapshot: %q %v", got, err)
	}
	if got, err := download(t, ss.NewDirectoryClient("d").NewFileClient("inner.txt")); err != nil || len(got) != 5 {
		t.Fatalf("deleted inner.txt in the snapshot: %q %v", got, err)
	}
	_, err = download(t, root.NewFileClient("new.txt"))
	wantCode(t, "a file created after the snapshot", err, "ResourceNotFound")
	if p, err := root.NewFileClient("a.txt").GetProperties(ctxBG, nil); err != nil || deref(p.ContentLength) != 9 {
		t.Fatalf("file properties in the snapshot: %v", err)
	}
	if _, err := ss.NewDirectoryClient("d").GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("directory properties in the snapshot: %v", err)
	}
	page, err := root.NewListFilesAndDirectoriesPager(nil).NextPage(ctxBG)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range page.Segment.Directories {
		names = append(names, *d.Name)
	}
	for _, f := range page.Segment.Files {
		names = append(names, *f.Name)
	}
	if len(names) != 3 || names[0] != "d" {
		t.Fatalf("snapshot listing %v", names)
	}
	sp, err := ss.GetProperties(ctxBG, nil)
	if err != nil || metaK(sp.Metadata) != "snap" {
		t.Fatalf("snapshot's share properties: %v %v", sp.Metadata, err)
	}
	if lp, _ := s.GetProperties(ctxBG, nil); metaK(lp.Metadata) != "live" {
		t.Fatalf("live share's metadata %v", lp.Metadata)
	}

	// Read-only: writes naming the snapshot are refused, nothing changes.
	_, err = root.NewFileClient("a.txt").Create(ctxBG, 1, nil)
	wantCode(t, "create file in a snapshot", err, "ShareSnapshotOperationNotSupported")
	_, err = root.NewFileClient("a.txt").Delete(ctxBG, nil)
	wantCode(t, "delete file in a snapshot", err, "ShareSnapshotOperationNotSupported")
	_, err = ss.SetMetadata(ctxBG, nil)
	wantCode(t, "set metadata of a snapshot", err, "ShareSnapshotOperationNotSupported")
	if got, _ := download(t, root.NewFileClient("a.txt")); string(got) != "version 1" {
		t.Fatalf("snapshot changed: %q", got)
	}

	// Listing shares with snapshots.
	pager := e.svc.NewListSharesPager(&service.ListSharesOptions{Include: service.ListSharesInclude{Snapshots: true}})
	lp, err := pager.NextPage(ctxBG)
	if err != nil || len(lp.Shares) != 2 || deref(lp.Shares[0].Snapshot) != snap || lp.Shares[1].Snapshot != nil {
		t.Fatalf("list shares with snapshots: %d %v", len(lp.Shares), err)
	}

	// Unknown and malformed snapshots.
	other, _ := s.WithSnapshot("2001-01-01T00:00:00.0000000Z")
	_, err = other.GetProperties(ctxBG, nil)
	wantCode(t, "a snapshot that does not exist", err, "ShareSnapshotNotFound")
	bad, _ := s.WithSnapshot("yesterday")
	_, err = bad.GetProperties(ctxBG, nil)
	wantCode(t, "a malformed snapshot", err, "InvalidQueryParameterValue")

	// Delete: not while snapshots exist, unless they go too.
	_, err = s.Delete(ctxBG, nil)
	wantCode(t, "delete a share with snapshots", err, "ShareHasSnapshots")
	snap2, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil || *snap2.Snapshot == snap {
		t.Fatalf("second snapshot %v %v", snap2.Snapshot, err)
	}
	if _, err := s.Delete(ctxBG, &share.DeleteOptions{ShareSnapshot: snap2.Snapshot}); err != nil {
		t.Fatalf("delete one snapshot: %v", err)
	}
	s2, _ := s.WithSnapshot(*snap2.Snapshot)
	_, err = s2.GetProperties(ctxBG, nil)
	wantCode(t, "a deleted snapshot", err, "ShareSnapshotNotFound")
	if _, err := ss.GetProperties(ctxBG, nil); err != nil {
		t.Fatalf("the other snapshot after deleting one: %v", err)
	}
	if _, err := s.Delete(ctxBG, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatalf("delete with its snapshots: %v", err)
	}
	e.mustShare("snaps")
	_, err = ss.GetProperties(ctxBG, nil)
	wantCode(t, "a snapshot of a deleted share, after the name is reused", err, "ShareSnapshotNotFound")
}

// metaK is metadata "k" whatever case the SDK gave the key.
func metaK(md map[string]*string) string {
	for k, v := range md {
		if strings.EqualFold(k, "k") {
			return deref(v)
		}
	}
	return ""
}

type readSeekNopCloser struct{ io.ReadSeeker }

func (readSeekNopCloser) Close() error { return nil }

func nopCloser(r io.ReadSeeker) io.ReadSeekCloser { return readSeekNopCloser{r} }

// List Ranges with prevsharesnapshot: the ranges changed since the
// snapshot (at block granularity for blob-backed files), and those
// cleared; between two snapshots too; a recreated file is 409.
func TestRangeDiff(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("diffs")
	const mib = 1 << 20
	big := bytes.Repeat([]byte{7}, 10*mib) // blocks [0,4), [4,8), [8,10) MiB
	f := e.mustFile("diffs", "big", big)
	small := e.mustFile("diffs", "small", bytes.Repeat([]byte{1}, 2000))
	gen := e.mustFile("diffs", "gen", []byte("first"))
	s1, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.UploadRange(ctxBG, 5*mib, nopCloser(bytes.NewReader([]byte("changed"))), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ClearRange(ctxBG, file.HTTPRange{Offset: 0, Count: 4 * mib}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := small.UploadRange(ctxBG, 1000, nopCloser(bytes.NewReader([]byte("x"))), nil); err != nil {
		t.Fatal(err)
	}
	type rg struct{ s, e int64 }
	got := func(r file.GetRangeListResponse) (ranges, cleared []rg) {
		for _, x := range r.Ranges {
			ranges = append(ranges, rg{*x.Start, *x.End})
		}
		for _, x := range r.ClearRanges {
			cleared = append(cleared, rg{*x.Start, *x.End})
		}
		return
	}
	check := func(what string, r file.GetRangeListResponse, wantR, wantC []rg) {
		t.Helper()
		gr, gc := got(r)
		if fmt.Sprint(gr) != fmt.Sprint(wantR) || fmt.Sprint(gc) != fmt.Sprint(wantC) {
			t.Fatalf("%s: ranges %v cleared %v, want %v and %v", what, gr, gc, wantR, wantC)
		}
	}
	r, err := f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	// The ranges written since, to the byte (Azure reports written
	// ranges, not blocks or changed bytes).
	check("big since s1", r, []rg{{5 * mib, 5*mib + 6}}, []rg{{0, 4*mib - 1}})
	r, err = small.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	check("small since s1", r, []rg{{1000, 1000}}, nil)

	// Between two snapshots: the same answer, from the snapshots alone.
	s2, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.UploadRange(ctxBG, 9*mib, nopCloser(bytes.NewReader([]byte("later"))), nil); err != nil {
		t.Fatal(err)
	}
	ss2, _ := s.WithSnapshot(*s2.Snapshot)
	r, err = ss2.NewRootDirectoryClient().NewFileClient("big").GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	check("big between s1 and s2", r, []rg{{5 * mib, 5*mib + 6}}, []rg{{0, 4*mib - 1}})
	// Plain ranges of a snapshot.
	r, err = ss2.NewRootDirectoryClient().NewFileClient("big").GetRangeList(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("ranges of big in s2", r, []rg{{4 * mib, 10*mib - 1}}, nil)

	// A file recreated since the snapshot; a file the snapshot lacks.
	if _, err := gen.Delete(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	e.mustFile("diffs", "gen", []byte("second"))
	_, err = gen.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
	wantCode(t, "diff of a recreated file", err, "FileGenerationMismatch")
	_, err = e.mustFile("diffs", "new", []byte("n")).GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot})
	wantCode(t, "diff of a file the snapshot lacks", err, "ResourceNotFound")
	_, err = f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: to.Ptr("2001-01-01T00:00:00.0000000Z")})
	wantCode(t, "diff against a missing snapshot", err, "ShareSnapshotNotFound")
}

// List Ranges with prevsharesnapshot of a file renamed or moved since the
// snapshot: 409 PreviousSnapshotNotFound (as Azure answers, the path
// being new to the snapshot), unless x-ms-file-support-rename: true asks
// to compare the file with its old self. A path the snapshot never had
// stays 404; a header that is no boolean is 400.
func TestRangeDiffRenamed(t *testing.T) {
	e := newEnv(t, noAuth) // the SDK's signatures pass; raw requests need none
	s := e.mustShare("renames")
	if _, err := e.dir("renames", "sub").Create(ctxBG, nil); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	for _, n := range []string{"small", "big", "moved", "late"} {
		size := 3000
		if n == "big" {
			size = 6 * mib
		}
		e.mustFile("renames", n, bytes.Repeat([]byte{5}, size))
	}
	s1, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := s.NewRootDirectoryClient()
	rename := func(from, to string) *file.Client {
		t.Helper()
		if _, err := root.NewFileClient(from).Rename(ctxBG, to, nil); err != nil {
			t.Fatalf("rename %s to %s: %v", from, to, err)
		}
		return e.file("renames", to)
	}
	small := rename("small", "small2")
	big := rename("big", "big2")
	moved := rename("moved", "sub/moved")
	if _, err := big.UploadRange(ctxBG, 5*mib, nopCloser(bytes.NewReader([]byte("changed"))), nil); err != nil {
		t.Fatal(err)
	}
	// Renamed after a second snapshot: a diff between the two snapshots
	// sees the file under its old name in both, a diff from s1 to the live
	// file does not.
	s2, err := s.CreateSnapshot(ctxBG, nil)
	if err != nil {
		t.Fatal(err)
	}
	late := rename("late", "late2")
	ss2, err := s.WithSnapshot(*s2.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	bigIn2 := ss2.NewRootDirectoryClient().NewFileClient("big2") // renamed between s1 and s2

	type rg struct{ s, e int64 }
	list := func(r file.GetRangeListResponse) (out []rg) {
		for _, x := range r.Ranges {
			out = append(out, rg{*x.Start, *x.End})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		f     *file.Client
		prev  *string
		want  []rg // with x-ms-file-support-rename: true
		noRen string
	}{
		{"renamed small file", small, s1.Snapshot, nil, "PreviousSnapshotNotFound"},
		{"renamed big file, written since", big, s1.Snapshot, []rg{{5 * mib, 5*mib + 6}}, "PreviousSnapshotNotFound"},
		{"moved to another directory", moved, s1.Snapshot, nil, "PreviousSnapshotNotFound"},
		{"renamed after the second snapshot", late, s2.Snapshot, nil, "PreviousSnapshotNotFound"},
		{"renamed between two snapshots, target a snapshot", bigIn2, s1.Snapshot, []rg{{5 * mib, 5*mib + 6}}, "PreviousSnapshotNotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: tc.prev})
			wantCode(t, "without x-ms-file-support-rename", err, tc.noRen)
			_, err = tc.f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: tc.prev, SupportRename: to.Ptr(false)})
			wantCode(t, "with x-ms-file-support-rename: false", err, tc.noRen)
			r, err := tc.f.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: tc.prev, SupportRename: to.Ptr(true)})
			if err != nil {
				t.Fatalf("with x-ms-file-support-rename: true: %v", err)
			}
			if got := list(r); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("changed ranges %v, want %v", got, tc.want)
			}
		})
	}
	// Between the snapshots, "late" had not moved yet.
	if _, err := ss2.NewRootDirectoryClient().NewFileClient("late").GetRangeList(ctxBG,
		&file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot}); err != nil {
		t.Fatalf("diff of late between s1 and s2: %v", err)
	}
	_, err = e.mustFile("renames", "fresh", []byte("f")).GetRangeList(ctxBG,
		&file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, SupportRename: to.Ptr(true)})
	wantCode(t, "a file the snapshot never had, following renames", err, "ResourceNotFound")
	_, err = small.GetRangeList(ctxBG, &file.GetRangeListOptions{PrevShareSnapshot: s1.Snapshot, Range: file.HTTPRange{Offset: 0, Count: 512}})
	wantCode(t, "renamed, with a range", err, "PreviousSnapshotNotFound")
	r := e.do(t, "GET", "/devstoreaccount1/renames/small2?comp=rangelist&prevsharesnapshot="+*s1.Snapshot,
		map[string]string{"x-ms-file-support-rename": "yes"}, nil)
	checkError(t, "x-ms-file-support-rename: yes", r, "GET", 400, "InvalidHeaderValue")
}
