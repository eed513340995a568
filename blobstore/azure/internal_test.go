package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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

// keptBlocks accounts the bytes of its copies: reservations count until
// put or unreserve, a replaced, committed or expired copy frees its bytes,
// and nothing is kept past keptMax.
func TestKeptBlocksBound(t *testing.T) {
	var k keptBlocks
	file := func() *os.File {
		f, err := tempFile()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if !k.reserve(keptMax - 10) {
		t.Fatal("reserve up to the bound refused")
	}
	if k.reserve(11) {
		t.Fatal("reserve past the bound accepted")
	}
	k.put("k", "a", file(), keptMax-10)
	if !k.reserve(10) {
		t.Fatal("reserve of the rest refused")
	}
	k.put("k", "b", file(), 10)
	if k.reserve(1) {
		t.Fatal("reserve past the bound accepted")
	}
	if !k.any("k", []string{"x", "b"}) || k.any("other", []string{"a"}) {
		t.Fatal("any does not find what is kept")
	}
	rd, done, ok := k.open("k", "a")
	if !ok || rd.Size() != keptMax-10 {
		t.Fatalf("open: %v, %v", rd, ok)
	}
	k.committed("k", []string{"a"})
	if _, _, ok := k.open("k", "a"); ok {
		t.Fatal("a committed copy is still kept")
	}
	buf := make([]byte, 1)
	if _, err := rd.ReadAt(buf, 0); errors.Is(err, os.ErrClosed) { // empty: io.EOF while open
		t.Fatal("a copy was closed while being read")
	}
	done()
	if _, err := rd.ReadAt(buf, 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a dropped copy is still open after its last reader: %v", err)
	}
	if !k.reserve(keptMax - 10) {
		t.Fatal("committed copy's bytes not freed")
	}
	k.unreserve(keptMax - 10)
	// Replacing b's copy frees the old one's bytes.
	if !k.reserve(10) {
		t.Fatal("reserve refused")
	}
	k.put("k", "b", file(), 10)
	if !k.reserve(keptMax - 10) {
		t.Fatal("replaced copy's bytes not freed")
	}
	// Expired copies go at the next reservation.
	k.mu.Lock()
	k.m[keptRef{"k", "b"}].at = time.Now().Add(-2 * keptTTL)
	k.oldest = k.m[keptRef{"k", "b"}].at // no later than any copy's time
	k.mu.Unlock()
	k.unreserve(keptMax - 10)
	if !k.reserve(keptMax) || k.any("k", []string{"b"}) {
		t.Fatal("an expired copy was not dropped")
	}
}
