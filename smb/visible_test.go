package smb_test

import (
	"context"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
)

// TestGoSMB2WriteVisibleToREST: a WRITE the server answered is in the share
// at once for FileREST, as on Azure Files and smbd, with no FLUSH and the
// handle still open: Get File reads it, Get File Properties and List
// report its size, List Ranges its range, and Copy File copies it.
func TestGoSMB2WriteVisibleToREST(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sh := e.mustShare("data")
	if _, err := sh.NewRootDirectoryClient().NewSubdirectoryClient("d").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	e.restPut(t, "d/log.txt", []byte("old!"))
	c := e.dial("data")
	w, err := c.OpenFile(`d\log.txt`, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	want := "old!"
	for i, chunk := range []string{"new!", " and more", " appended"} {
		off := int64(0)
		if i > 0 {
			off = int64(len(want))
		}
		if _, err := w.WriteAt([]byte(chunk), off); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		want = want[:off] + chunk + want[min(int(off)+len(chunk), len(want)):]
		got, err := e.restRead(ctx, "d/log.txt", file.HTTPRange{})
		if err != nil || string(got) != want {
			t.Fatalf("after write %d REST Get File reads %q (%v), want %q", i, got, err, want)
		}
		// Each check below meets a write of its own not yet committed.
		if _, err := w.WriteAt([]byte(chunk[:1]), off); err != nil {
			t.Fatal(err)
		}
		props, err := e.file("data", "d/log.txt").GetProperties(ctx, nil)
		if err != nil || props.ContentLength == nil || *props.ContentLength != int64(len(want)) {
			t.Fatalf("after write %d Get File Properties: %v, want size %d", i, err, len(want))
		}
		if _, err := w.WriteAt([]byte(chunk[:1]), off); err != nil {
			t.Fatal(err)
		}
		list, err := sh.NewRootDirectoryClient().NewSubdirectoryClient("d").NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{}).NextPage(ctx)
		if err != nil || len(list.Segment.Files) != 1 || list.Segment.Files[0].Properties == nil ||
			*list.Segment.Files[0].Properties.ContentLength != int64(len(want)) {
			t.Fatalf("after write %d List: %+v, %v; want one file of %d bytes", i, list.Segment, err, len(want))
		}
		if _, err := w.WriteAt([]byte(chunk[:1]), off); err != nil {
			t.Fatal(err)
		}
		ranges, err := e.file("data", "d/log.txt").GetRangeList(ctx, nil)
		if err != nil || len(ranges.Ranges) != 1 || *ranges.Ranges[0].End != int64(len(want))-1 {
			t.Fatalf("after write %d List Ranges: %+v, %v; want [0, %d]", i, ranges.Ranges, err, len(want)-1)
		}
	}
	if _, err := w.WriteAt([]byte("N"), 0); err != nil {
		t.Fatal(err)
	}
	want = "N" + want[1:]
	dst := e.file("data", "copy.txt")
	if _, err := dst.StartCopyFromURL(ctx, e.file("data", "d/log.txt").URL(), nil); err != nil {
		t.Fatalf("Copy File: %v", err)
	}
	if got, err := e.restRead(ctx, "copy.txt", file.HTTPRange{}); err != nil || string(got) != want {
		t.Fatalf("Copy File of a file with an answered WRITE copied %q (%v), want %q", got, err, want)
	}
}
