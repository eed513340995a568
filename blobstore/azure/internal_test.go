package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/blobshare/blobshare/blobstore"
)

func TestBlockIDEncoding(t *testing.T) {
	ids := []string{"a", "blk-0001", strings.Repeat("Z", blobstore.MaxBlockIDLen), "_-_"}
	var length int
	for i, id := range ids {
		enc := encodeID(id)
		if i == 0 {
			length = len(enc)
		} else if len(enc) != length {
			t.Errorf("encodeID(%q) has length %d, others %d: Azure needs equal lengths", id, len(enc), length)
		}
		dec, err := decodeID(enc)
		if err != nil || dec != id {
			t.Errorf("decodeID(encodeID(%q)) = %q, %v", id, dec, err)
		}
	}
	for _, bad := range []string{"!!!", "YQ==" /* "a" without padding to 64 */ + "x", "Li4u" /* "..." */} {
		if _, err := decodeID(bad); err == nil {
			t.Errorf("decodeID(%q) accepted a foreign id", bad)
		}
	}
}

func TestConvert(t *testing.T) {
	resp := func(status int, code string) error {
		return &azcore.ResponseError{StatusCode: status, ErrorCode: code}
	}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{resp(404, "BlobNotFound"), blobstore.ErrNotFound},
		{resp(404, "ContainerNotFound"), blobstore.ErrNotFound},
		{resp(400, "InvalidBlockList"), blobstore.ErrNotFound},
		{resp(412, "ConditionNotMet"), blobstore.ErrPreconditionFailed},
		{resp(409, "BlobAlreadyExists"), blobstore.ErrPreconditionFailed},
		{resp(400, "InvalidBlockId"), blobstore.ErrInvalidKey},
		{resp(400, "OutOfRangeInput"), blobstore.ErrInvalidKey},
		{resp(416, "InvalidRange"), blobstore.ErrInvalidRange},
		{resp(404, "SomethingNew"), blobstore.ErrNotFound},
		{resp(412, "SomethingNew"), blobstore.ErrPreconditionFailed},
	} {
		got := convert(fmt.Errorf("op: %w", tc.err))
		if !errors.Is(got, tc.want) {
			t.Errorf("convert(%v) = %v, want %v", tc.err, got, tc.want)
		}
		var re *azcore.ResponseError
		if !errors.As(got, &re) {
			t.Errorf("convert(%v) lost the *azcore.ResponseError", tc.err)
		}
	}
	other := resp(http.StatusInternalServerError, "InternalError")
	if got := convert(other); got != other {
		t.Errorf("convert(500) = %v, want it unchanged", got)
	}
	if convert(nil) != nil {
		t.Error("convert(nil) != nil")
	}
	if got := convert(context.Canceled); !errors.Is(got, context.Canceled) {
		t.Errorf("convert(context.Canceled) = %v", got)
	}
}

func TestNewBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"NoContainer", Config{Account: "a", Key: "k"}},
		{"ShortContainer", Config{Account: "a", Key: "k", Container: "ab"}},
		{"UpperContainer", Config{Account: "a", Key: "k", Container: "Abc"}},
		{"DoubleHyphen", Config{Account: "a", Key: "k", Container: "a--b"}},
		{"TrailingHyphen", Config{Account: "a", Key: "k", Container: "abc-"}},
		{"LongContainer", Config{Account: "a", Key: "k", Container: strings.Repeat("a", 64)}},
		{"NoCredentials", Config{Container: "abc"}},
		{"KeyWithoutAccount", Config{Key: "k", Container: "abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(context.Background(), tc.cfg); !errors.Is(err, ErrBadConfig) {
				t.Fatalf("New(%+v) = %v, want ErrBadConfig", tc.cfg, err)
			}
		})
	}
	for _, ok := range []string{"abc", "a-b-c", "0day", strings.Repeat("z", 63)} {
		if err := validContainer(ok); err != nil {
			t.Errorf("validContainer(%q) = %v", ok, err)
		}
	}
}
