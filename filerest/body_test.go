package filerest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/filerest"
)

// faultStore fails StageBlock with fault (when set), as a full or broken
// disk under the local store would, and counts the calls.
type faultStore struct {
	blobstore.Store
	fault  atomic.Pointer[error]
	stages atomic.Int64
}

func (s *faultStore) StageBlock(ctx context.Context, key, id string, r io.Reader) (int64, error) {
	s.stages.Add(1)
	if p := s.fault.Load(); p != nil {
		return 0, fmt.Errorf("stage %s/%s: %w", key, id, &os.PathError{Op: "write", Path: "/data/blobs/" + key, Err: *p})
	}
	return s.Store.StageBlock(ctx, key, id, r)
}

// TestStorageFullAnswers403 writes through the azfile SDK, with retries
// enabled, onto a store that fails: out of space (ENOSPC, EDQUOT) must be
// 403 ShareSizeLimitReached, which the SDK does not retry (the store sees
// one attempt); an I/O error stays 500 InternalError (retried).
func TestStorageFullAnswers403(t *testing.T) {
	var fsStore *faultStore
	e := newEnvStore(t, func(s blobstore.Store) blobstore.Store {
		fsStore = &faultStore{Store: s}
		return fsStore
	})
	e.mustShare("sss")
	opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{
		MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond, TryTimeout: time.Minute}}}
	svc, err := service.NewClientWithSharedKeyCredential(e.serviceURL(), e.cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	for _, tc := range []struct {
		name     string
		fault    error
		status   int
		code     string
		attempts int64 // StageBlock calls: 1 unless the SDK retried
	}{
		{"ENOSPC", syscall.ENOSPC, http.StatusForbidden, "ShareSizeLimitReached", 1},
		{"EDQUOT", syscall.EDQUOT, http.StatusForbidden, "ShareSizeLimitReached", 1},
		{"EIO", syscall.EIO, http.StatusInternalServerError, "InternalError", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := svc.NewShareClient("sss").NewRootDirectoryClient().NewFileClient("f-" + tc.name)
			if _, err := f.Create(ctxBG, size, nil); err != nil {
				t.Fatal(err)
			}
			fsStore.fault.Store(&tc.fault)
			defer fsStore.fault.Store(nil)
			fsStore.stages.Store(0)
			_, err := f.UploadRange(ctxBG, 0, streaming.NopCloser(bytes.NewReader(bytes.Repeat([]byte{'x'}, size))), nil)
			var re *azcore.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("upload on a failing store: %v, want an Azure error", err)
			}
			if re.StatusCode != tc.status || re.ErrorCode != tc.code {
				t.Errorf("upload on a failing store (%v): %d %s, want %d %s", tc.fault, re.StatusCode, re.ErrorCode, tc.status, tc.code)
			}
			if got := fsStore.stages.Load(); got != tc.attempts {
				t.Errorf("store saw %d attempts, want %d", got, tc.attempts)
			}
			// Once the disk is back, the same write succeeds.
			fsStore.fault.Store(nil)
			if _, err := f.UploadRange(ctxBG, 0, streaming.NopCloser(bytes.NewReader(bytes.Repeat([]byte{'y'}, size))), nil); err != nil {
				t.Fatalf("upload after the fault cleared: %v", err)
			}
		})
	}
}

// putRangeReq is a raw unauthenticated Put Range of body at off.
func putRangeHeaders(off, n int64, md5sum string) map[string]string {
	h := map[string]string{"x-ms-write": "update", "x-ms-range": fmt.Sprintf("bytes=%d-%d", off, off+n-1)}
	if md5sum != "" {
		h["Content-MD5"] = md5sum
	}
	return h
}

func b64md5(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// TestPutRangeMD5Streamed checks Content-MD5 on the small (read whole)
// and the streamed path, aligned and not: a mismatch is 400 Md5Mismatch
// and writes nothing; a match writes and echoes the sum.
func TestPutRangeMD5Streamed(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShare("sss")
	const size = 12 << 20
	orig := bytes.Repeat([]byte{'o'}, size)
	e.mustFile("sss", "f", orig)
	for _, tc := range []struct {
		name   string
		off, n int64
	}{
		{"small", 100, 100 << 10},
		{"small at the limit", 0, 256 << 10},
		{"streamed whole block", 4 << 20, 4 << 20},
		{"streamed unaligned", 1<<20 + 7, 4<<20 - 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte{'n'}, int(tc.n))
			path := "/" + e.account + "/sss/f?comp=range"
			r := e.do(t, http.MethodPut, path, putRangeHeaders(tc.off, tc.n, b64md5([]byte("other"))), body)
			checkError(t, "mismatch", r, http.MethodPut, http.StatusBadRequest, "Md5Mismatch")
			if got := e.read(t, "sss/f"); !bytes.Equal(got, orig) {
				t.Fatalf("a Put Range with a wrong Content-MD5 changed the file")
			}
			r = e.do(t, http.MethodPut, path, putRangeHeaders(tc.off, tc.n, b64md5(body)), body)
			if r.status != http.StatusCreated || r.header.Get("Content-MD5") != b64md5(body) {
				t.Fatalf("matching Content-MD5: %d %s, Content-MD5 %q", r.status, r.body, r.header.Get("Content-MD5"))
			}
			want := bytes.Clone(orig)
			copy(want[tc.off:], body)
			if got := e.read(t, "sss/f"); !bytes.Equal(got, want) {
				t.Fatalf("file content after the write differs")
			}
			copy(orig, want) // the next case starts from here
		})
	}
}

// read returns a file's content through the fs core.
func (e *env) read(t *testing.T, path string) []byte {
	t.Helper()
	r := e.do(t, http.MethodGet, "/"+e.account+"/"+path, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("get %s: %d %s", path, r.status, r.body)
	}
	return r.body
}

// stalledPut sends a Put Range of n bytes whose body stops sent bytes
// in, and returns the connection (closed in Cleanup).
func (e *env) stalledPut(t *testing.T, path string, off, n, sent int64) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "PUT /%s/%s?comp=range HTTP/1.1\r\nHost: x\r\nx-ms-version: 2026-06-06\r\nx-ms-write: update\r\n"+
		"x-ms-range: bytes=%d-%d\r\nContent-Length: %d\r\n\r\n", e.account, path, off, off+n-1, n)
	if _, err := c.Write(bytes.Repeat([]byte{'s'}, int(sent))); err != nil {
		t.Fatal(err)
	}
	return c
}

// readStatus reads one response's status and error code from c.
func readStatus(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the stalled request's response: %v", err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("x-ms-error-code")
}

// TestStalledBodyTimesOut: a Put Range whose body stalls fails with 400
// after BodyReadTimeout and writes nothing, for a small and a streamed
// body.
func TestStalledBodyTimesOut(t *testing.T) {
	e := newEnv(t, noAuth, func(c *filerest.Config) { c.BodyReadTimeout = 300 * time.Millisecond })
	e.mustShare("sss")
	orig := bytes.Repeat([]byte{'o'}, 8<<20)
	e.mustFile("sss", "f", orig)
	for _, tc := range []struct {
		name      string
		off, n    int64
		sentBytes int64
	}{
		{"small", 10, 1000, 999},
		{"streamed", 0, 4 << 20, 3 << 20},
		{"nothing sent", 0, 4 << 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.stalledPut(t, "sss/f", tc.off, tc.n, tc.sentBytes)
			status, code := readStatus(t, c)
			if status != http.StatusBadRequest || code != "InvalidInput" {
				t.Errorf("stalled body: %d %s, want 400 InvalidInput", status, code)
			}
			if got := e.read(t, "sss/f"); !bytes.Equal(got, orig) {
				t.Errorf("a stalled Put Range changed the file")
			}
		})
	}
}

// TestBodyBudgetSpills: with the body budget held by a stalled upload, a
// second upload is read into a spill file instead of memory, waits for
// the budget, and completes once the stalled one times out; a spilled
// body with a wrong Content-MD5 writes nothing.
func TestBodyBudgetSpills(t *testing.T) {
	e := newEnv(t, noAuth, func(c *filerest.Config) {
		c.BodyBudget = 1 // every charge is clamped to 1: one body at a time
		// The stalled body ends by this timeout; the one behind it must
		// arrive well within it, also on a loaded machine (500 ms failed
		// once while four builds ran).
		c.BodyReadTimeout = 2 * time.Second
		c.SpillDir = t.TempDir()
	})
	e.mustShare("sss")
	const size = 8 << 20
	orig := bytes.Repeat([]byte{'o'}, size)
	e.mustFile("sss", "f", orig)
	body := bytes.Repeat([]byte{'n'}, 4<<20)
	for _, tc := range []struct {
		name   string
		md5sum string
		status int
		code   string
	}{
		{"wrong Content-MD5", b64md5([]byte("other")), http.StatusBadRequest, "Md5Mismatch"},
		{"matching Content-MD5", b64md5(body), http.StatusCreated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stalled := e.stalledPut(t, "sss/f", 0, 4<<20, 1<<20)
			time.Sleep(100 * time.Millisecond) // let it take the budget
			r := e.do(t, http.MethodPut, "/"+e.account+"/sss/f?comp=range", putRangeHeaders(4<<20, 4<<20, tc.md5sum), body)
			if r.status != tc.status || r.header.Get("x-ms-error-code") != tc.code {
				t.Fatalf("upload behind a stalled one: %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if status, code := readStatus(t, stalled); status != http.StatusBadRequest {
				t.Errorf("stalled upload: %d %s, want 400", status, code)
			}
			want := orig
			if tc.status == http.StatusCreated {
				want = append(bytes.Clone(orig[:4<<20]), body...)
			}
			if got := e.read(t, "sss/f"); !bytes.Equal(got, want) {
				t.Errorf("content after the spilled upload is wrong")
			}
		})
	}
}

// TestCreateFileBodyPaths: a Create File body is written on the small and
// the streamed path alike, its MD5 echoed, the rest of the file zeros.
func TestCreateFileBodyPaths(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShare("sss")
	for _, tc := range []struct {
		name       string
		body, size int
	}{
		{"small", 1000, 5000},
		{"streamed", 3<<20 + 5, 9 << 20},
		{"streamed whole block", 4 << 20, 4 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte{'c'}, tc.body)
			name := strings.ReplaceAll(tc.name, " ", "-")
			r := e.do(t, http.MethodPut, "/"+e.account+"/sss/"+name,
				map[string]string{"x-ms-type": "file", "x-ms-content-length": fmt.Sprint(tc.size)}, body)
			if r.status != http.StatusCreated || r.header.Get("Content-MD5") != b64md5(body) {
				t.Fatalf("create with a %d-byte body: %d %s, Content-MD5 %q", tc.body, r.status, r.body, r.header.Get("Content-MD5"))
			}
			want := make([]byte, tc.size)
			copy(want, body)
			if got := e.read(t, "sss/"+name); !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes, want %d with the body first", len(got), len(want))
			}
		})
	}
}
