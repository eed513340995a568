package blob_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestAnonymousAccess: unsigned requests read what the container's public
// access level opens — blobs under "blob", blobs, container properties
// and listings under "container" — and get 404 ResourceNotFound for a
// private resource, 401 NoAuthenticationInformation for anything else.
func TestAnonymousAccess(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	owner := e.client(t)
	levels := map[string]*container.PublicAccessType{"blobonly": to.Ptr(container.PublicAccessTypeBlob),
		"wideopen": to.Ptr(container.PublicAccessTypeContainer), "private": nil}
	for name, level := range levels {
		if _, err := owner.CreateContainer(ctx, name, &azblob.CreateContainerOptions{Access: level}); err != nil {
			t.Fatal(err)
		}
		if _, err := owner.UploadBuffer(ctx, name, "pic.png", []byte("png"), nil); err != nil {
			t.Fatal(err)
		}
	}
	anon, err := azblob.NewClientWithNoCredential(e.URL+"/", &azblob.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	read := func(c string) error {
		resp, err := anon.DownloadStream(ctx, c, "pic.png", nil)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	list := func(c string) error {
		_, err := anon.NewListBlobsFlatPager(c, nil).NextPage(ctx)
		return err
	}
	if err := read("blobonly"); err != nil {
		t.Errorf("anonymous read under blob access: %v", err)
	}
	if err := read("wideopen"); err != nil {
		t.Errorf("anonymous read under container access: %v", err)
	}
	if err := list("wideopen"); err != nil {
		t.Errorf("anonymous listing under container access: %v", err)
	}
	if err := list("blobonly"); status(err) != http.StatusNotFound || code(err) != "ResourceNotFound" {
		t.Errorf("anonymous listing under blob access: %v", err)
	}
	if err := read("private"); status(err) != http.StatusNotFound || code(err) != "ResourceNotFound" {
		t.Errorf("anonymous read of a private blob: %v", err)
	}
	if err := read("nosuch"); code(err) != "ResourceNotFound" {
		t.Errorf("anonymous read in a missing container: %v", err)
	}
	if _, err := anon.UploadBuffer(ctx, "wideopen", "new.png", []byte("x"), nil); status(err) != http.StatusUnauthorized || code(err) != "NoAuthenticationInformation" {
		t.Errorf("anonymous write: %v", err)
	}
	if _, err := anon.DeleteBlob(ctx, "wideopen", "pic.png", nil); status(err) != http.StatusUnauthorized {
		t.Errorf("anonymous delete: %v", err)
	}
}
