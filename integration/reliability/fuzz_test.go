package reliability

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// fuzzStack is the whole REST stack in process: rest over fs over a real
// SQLite lock table and a local blob store, in dir/data. Two handlers: one
// without authentication (so inputs reach every parser behind it) and one
// with it (the SharedKey and SAS parsers).
type fuzzStack struct {
	dir          string
	open, signed http.Handler
}

func newFuzzStack(f *testing.F) *fuzzStack {
	ctx := context.Background()
	dir := f.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		f.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	table, err := locks.Open(ctx, filepath.Join(data, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		f.Fatal(err)
	}
	store, err := local.New(filepath.Join(data, "blobs"), local.WithLogger(quiet))
	if err != nil {
		f.Fatal(err)
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: quiet, SpillDir: filepath.Join(data, "spill")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		fsys.Close(ctx)
		table.Close(ctx)
	})
	st := &fuzzStack{dir: dir}
	st.open, err = filerest.New(filerest.Config{FS: fsys, Account: devAccount, Key: devKey, DisableAuth: true, Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	st.signed, err = filerest.New(filerest.Config{FS: fsys, Account: devAccount, Key: devKey, Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	// Something to find: a share, a directory, a small and a blob file.
	for _, raw := range []string{
		"PUT /devstoreaccount1/fzz?restype=share HTTP/1.1\r\nHost: x\r\nx-ms-version: 2025-05-05\r\nContent-Length: 0\r\n\r\n",
		"PUT /devstoreaccount1/fzz/d?restype=directory HTTP/1.1\r\nHost: x\r\nx-ms-version: 2025-05-05\r\nContent-Length: 0\r\n\r\n",
		"PUT /devstoreaccount1/fzz/a HTTP/1.1\r\nHost: x\r\nx-ms-version: 2025-05-05\r\nx-ms-type: file\r\nx-ms-content-length: 100\r\nContent-Length: 0\r\n\r\n",
		"PUT /devstoreaccount1/fzz/d/b HTTP/1.1\r\nHost: x\r\nx-ms-version: 2025-05-05\r\nx-ms-type: file\r\nx-ms-content-length: 200000\r\nContent-Length: 0\r\n\r\n",
	} {
		rec := serveRaw(st.open, []byte(raw))
		if rec == nil || rec.Code >= 300 {
			f.Fatalf("setup %q failed: %v", raw, rec)
		}
	}
	return st
}

// reply records status and headers and keeps at most 64 KiB of the body:
// a fuzzed request may read terabytes of sparse zeros.
type reply struct {
	Code   int
	header http.Header
	Body   bytes.Buffer
	wrote  bool
}

func (r *reply) Header() http.Header { return r.header }

func (r *reply) WriteHeader(code int) {
	if !r.wrote {
		r.Code, r.wrote = code, true
	}
}

func (r *reply) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if room := 64<<10 - r.Body.Len(); room > 0 {
		r.Body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// serveRaw parses raw as an HTTP request and serves it; nil when net/http
// would not accept it as a request.
func serveRaw(h http.Handler, raw []byte) *reply {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil
	}
	req.RemoteAddr = "127.0.0.1:1"
	rec := &reply{Code: http.StatusOK, header: http.Header{}}
	h.ServeHTTP(rec, req)
	return rec
}

// FuzzRequest feeds raw HTTP requests (request line, headers, body) through
// every parser of the REST stack: dispatch, paths, query parameters,
// x-ms-* headers, ranges, metadata, SMB properties, XML bodies, SharedKey
// and SAS. Whatever the input: no 5xx (a deterministic refusal is a 4xx
// and a panic would be a 500), every refusal names its x-ms-error-code,
// and nothing appears beside the data directory. The corpus is in
// testdata/fuzz/FuzzRequest; `go test` runs it, and
//
//	go test ./integration/reliability -run '^$' -fuzz FuzzRequest -fuzztime 5m
//
// explores further.
func FuzzRequest(f *testing.F) {
	st := newFuzzStack(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, h := range map[string]http.Handler{"no-auth": st.open, "auth": st.signed} {
			rec := serveRaw(h, raw)
			if rec == nil {
				return
			}
			t.Logf("%s: %d %s", name, rec.Code, rec.Header().Get("x-ms-error-code"))
			if rec.Code >= 500 {
				t.Fatalf("%s: %d %s for %q\n%s", name, rec.Code, rec.Header().Get("x-ms-error-code"), raw, rec.Body.Bytes())
			}
			if rec.Code >= 400 && rec.Header().Get("x-ms-error-code") == "" {
				t.Fatalf("%s: %d without x-ms-error-code for %q", name, rec.Code, raw)
			}
		}
		ents, err := os.ReadDir(st.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "data" {
				t.Fatalf("%q created %s beside the data directory", raw, e.Name())
			}
		}
	})
}
