package blob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestBlobNamesOutsideXML follows azblob's
// TestContainerListBlobsInvalidBlobName and
// TestContainerListHierarchyBlobsInvalidBlobName: a blob name with
// U+FFFF is stored, read back, and listed (flat and by prefix) under
// Name Encoded="true", which the SDK decodes; a page boundary at such a
// name resumes there.
func TestBlobNamesOutsideXML(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "names", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("names")
	name := "dir1/dir2/file\uFFFF.blob"
	for _, n := range []string{"a", name, "dir1/dir2/file\uFFFE+ x"} {
		if _, err := cc.NewBlockBlobClient(n).Upload(ctx, rsc([]byte(n)), nil); err != nil {
			t.Fatalf("upload %q: %v", n, err)
		}
	}
	if got := download(t, cc.NewBlobClient(name), nil); string(got) != name {
		t.Errorf("read back %q", got)
	}
	var flat []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr[int32](1)})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			flat = append(flat, *it.Name)
		}
	}
	if want := []string{"a", "dir1/dir2/file\uFFFE+ x", name}; strings.Join(flat, "|") != strings.Join(want, "|") {
		t.Errorf("flat listing, a page each: %q, want %q", flat, want)
	}
	page, err := cc.NewListBlobsHierarchyPager(".b", nil).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Segment.BlobPrefixes) != 1 || *page.Segment.BlobPrefixes[0].Name != "dir1/dir2/file\uFFFF.b" {
		t.Errorf("prefixes: %+v", page.Segment.BlobPrefixes)
	}
	st, _, body := rawRequest(t, e, "GET", "/names?restype=container&comp=list&prefix=dir1/dir2/file%EF%BF%BF", nil, "")
	if st != 200 || !strings.Contains(body, `<Name Encoded="true">dir1%2Fdir2%2Ffile%EF%BF%BF.blob</Name>`) {
		t.Errorf("raw listing: %d %s", st, body)
	}
}

// TestSDKListBlobsStartFromEndBefore: List Blobs takes startFrom
// (inclusive; azblob's StartFrom, TestContainerListBlobsFlatStartFrom and
// TestContainerListBlobsHierarchyStartFrom), also across pages, and
// endBefore (exclusive). azblob v1.8.3 sends endBefore only with its
// Apache Arrow listings, so that one goes by hand.
func TestSDKListBlobsStartFromEndBefore(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "range", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("range")
	for _, n := range []string{"a", "b1", "b2", "c/x", "c/y", "d", "e"} {
		if _, err := cc.NewBlockBlobClient(n).Upload(ctx, rsc([]byte(n)), nil); err != nil {
			t.Fatal(err)
		}
	}
	flat := func(o *container.ListBlobsFlatOptions) string {
		var out []string
		pager := cc.NewListBlobsFlatPager(o)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Segment.BlobItems {
				out = append(out, *it.Name)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		o    container.ListBlobsFlatOptions
		want string
	}{
		{container.ListBlobsFlatOptions{StartFrom: to.Ptr("b2")}, "b2 c/x c/y d e"},
		{container.ListBlobsFlatOptions{StartFrom: to.Ptr("b"), MaxResults: to.Ptr[int32](1)}, "b1 b2 c/x c/y d e"},
		{container.ListBlobsFlatOptions{Prefix: to.Ptr("c/"), StartFrom: to.Ptr("c/y")}, "c/y"},
	} {
		if got := flat(&tc.o); got != tc.want {
			t.Errorf("startFrom %v: %q, want %q", *tc.o.StartFrom, got, tc.want)
		}
	}
	page, err := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{StartFrom: to.Ptr("b2")}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range page.Segment.BlobPrefixes {
		got = append(got, *p.Name)
	}
	for _, it := range page.Segment.BlobItems {
		got = append(got, *it.Name)
	}
	if strings.Join(got, " ") != "c/ b2 d e" {
		t.Errorf("hierarchy from b2: %q", got)
	}
	for q, want := range map[string]string{
		"endBefore=c%2Fy":           "a b1 b2 c/x",
		"startFrom=b&endBefore=d":   "b1 b2 c/x c/y",
		"startFrom=b2&endBefore=b2": "",
	} {
		st, _, body := rawRequest(t, e, "GET", "/range?restype=container&comp=list&"+q, nil, "")
		var names []string
		for _, part := range strings.Split(body, "<Name>")[1:] {
			names = append(names, part[:strings.Index(part, "</Name>")])
		}
		if st != 200 || strings.Join(names, " ") != want {
			t.Errorf("%s: %d %q, want %q", q, st, names, want)
		}
	}
}
