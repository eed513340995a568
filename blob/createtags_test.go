package blob_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// TestSDKTagsOnEveryCreate: x-ms-tags on every operation that creates a
// blob (Put Blob, Put Block List after Put Block, Create Append Blob,
// Create Page Blob, Copy Blob, Copy Blob From URL, Put Blob From URL)
// are the new blob's tags, seen by Get Blob Tags and Find Blobs by Tags;
// a copy without x-ms-tags has none (x-ms-copy-source-tag-option's
// default, REPLACE), and with COPY it has the source's.
func TestSDKTagsOnEveryCreate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "created", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("created")
	tags := func(name string) map[string]string { return map[string]string{"made": name, "kind": "new"} }

	src := cc.NewBlockBlobClient("src")
	if _, err := src.UploadBuffer(ctx, []byte("source"), &blockblob.UploadBufferOptions{Tags: map[string]string{"from": "source"}}); err != nil {
		t.Fatal(err)
	}
	srcURL := withReadSAS(t, cc, src.URL())
	// x-ms-copy-source-tag-option, which azblob's CopyFromURLOptions
	// lacks, is set by a per-call policy (before the request is signed).
	tagOptionClient := func(opt string) *blob.Client {
		cl, err := azblob.NewClientFromConnectionString(e.ConnStr, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
			Retry:           policy.RetryOptions{MaxRetries: -1},
			PerCallPolicies: []policy.Policy{headerPolicy{"x-ms-copy-source-tag-option", opt}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return cl.ServiceClient().NewContainerClient("created").NewBlobClient("copyfromurl" + strings.ToLower(opt))
	}

	creates := []struct {
		name   string
		create func(name string) error
		want   map[string]string // nil: tags(name)
	}{
		{"putblob", func(n string) error {
			_, err := cc.NewBlockBlobClient(n).Upload(ctx, rsc([]byte("x")), &blockblob.UploadOptions{Tags: tags(n)})
			return err
		}, nil},
		{"blocklist", func(n string) error {
			bb := cc.NewBlockBlobClient(n)
			if _, err := bb.StageBlock(ctx, blockID(0), rsc([]byte("x")), nil); err != nil {
				return err
			}
			_, err := bb.CommitBlockList(ctx, []string{blockID(0)}, &blockblob.CommitBlockListOptions{Tags: tags(n)})
			return err
		}, nil},
		{"append", func(n string) error {
			_, err := cc.NewAppendBlobClient(n).Create(ctx, &appendblob.CreateOptions{Tags: tags(n)})
			return err
		}, nil},
		{"page", func(n string) error {
			_, err := cc.NewPageBlobClient(n).Create(ctx, 512, &pageblob.CreateOptions{Tags: tags(n)})
			return err
		}, nil},
		{"copy", func(n string) error {
			_, err := cc.NewBlobClient(n).StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{BlobTags: tags(n)})
			return err
		}, nil},
		{"copynotags", func(n string) error {
			_, err := cc.NewBlobClient(n).StartCopyFromURL(ctx, src.URL(), nil)
			return err
		}, map[string]string{}},
		{"copyfromurl", func(n string) error {
			_, err := cc.NewBlobClient(n).CopyFromURL(ctx, srcURL, &blob.CopyFromURLOptions{BlobTags: tags(n)})
			return err
		}, nil},
		{"copyfromurlnotags", func(n string) error {
			_, err := cc.NewBlobClient(n).CopyFromURL(ctx, srcURL, nil)
			return err
		}, map[string]string{}},
		{"copyfromurlcopy", func(n string) error {
			_, err := tagOptionClient("COPY").CopyFromURL(ctx, srcURL, &blob.CopyFromURLOptions{BlobTags: tags(n)})
			return err
		}, map[string]string{"from": "source"}},
		{"copyfromurlreplace", func(n string) error {
			_, err := tagOptionClient("REPLACE").CopyFromURL(ctx, srcURL, &blob.CopyFromURLOptions{BlobTags: tags(n)})
			return err
		}, nil},
		{"putblobfromurl", func(n string) error {
			_, err := cc.NewBlockBlobClient(n).UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{Tags: tags(n)})
			return err
		}, nil},
		{"putblobfromurlnotags", func(n string) error {
			_, err := cc.NewBlockBlobClient(n).UploadBlobFromURL(ctx, srcURL, nil)
			return err
		}, map[string]string{}},
	}
	var tagged []string
	for _, tc := range creates {
		if err := tc.create(tc.name); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := tc.want
		if want == nil {
			want = tags(tc.name)
			tagged = append(tagged, tc.name)
		}
		got, err := cc.NewBlobClient(tc.name).GetTags(ctx, nil)
		if err != nil {
			t.Errorf("%s: Get Blob Tags: %v", tc.name, err)
			continue
		}
		have := map[string]string{}
		for _, tag := range got.BlobTagSet {
			have[*tag.Key] = *tag.Value
		}
		if !sameTags(have, want) {
			t.Errorf("%s: tags %v, want %v", tc.name, have, want)
		}
	}

	// Find Blobs by Tags sees every blob created with tags.
	resp, err := cc.FilterBlobs(ctx, `"kind" = 'new'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, b := range resp.Blobs {
		found = append(found, *b.Name)
	}
	sort.Strings(found)
	sort.Strings(tagged)
	if strings.Join(found, " ") != strings.Join(tagged, " ") {
		t.Errorf("Find Blobs by Tags found %v, want %v", found, tagged)
	}
}

func sameTags(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// headerPolicy sets one request header on every request.
type headerPolicy struct{ name, value string }

func (p headerPolicy) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set(p.name, p.value)
	return req.Next()
}
