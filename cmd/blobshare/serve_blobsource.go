package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/storagehttp"
)

// blobSourceLink is FileREST's way to the Blob endpoint of the same serve,
// for Put Range From URL with a blob source (filerest.BlobSource). FileREST
// starts first, so the link is set once Blob serves; until then, and with
// --blob-addr off, it owns no URL and a blob source is refused as a source
// outside the account's files.
type blobSourceLink struct {
	target atomic.Pointer[blobSourceTarget]
}

type blobSourceTarget struct {
	srv  *blob.Server
	port string // the Blob listener's port
	host string // and host ("" or an unspecified address: any)
}

var _ filerest.BlobSource = (*blobSourceLink)(nil)

// set points the link at srv listening on addr.
func (l *blobSourceLink) set(srv *blob.Server, addr net.Addr) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = ""
	}
	l.target.Store(&blobSourceTarget{srv: srv, port: port, host: host})
}

// Owns: a production-style ACCOUNT.blob.… host (what Azure's blob URLs
// are), or a path-style URL on the Blob listener's port (its own host, or
// a loopback name for a loopback listener).
func (l *blobSourceLink) Owns(u *url.URL) bool {
	t := l.target.Load()
	if t == nil {
		return false
	}
	if _, ok := storagehttp.AccountFromHost(u.Host, "blob"); ok {
		return true
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || port != t.port {
		return false
	}
	return t.host == "" || strings.EqualFold(host, t.host) || loopback(host) && loopback(t.host)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OpenSourceRange implements filerest.BlobSource.
func (l *blobSourceLink) OpenSourceRange(dst *http.Request, source string, offset, length int64) (io.ReadCloser, error) {
	t := l.target.Load()
	if t == nil {
		return nil, errors.New("blob source: the Blob endpoint is not serving")
	}
	return t.srv.OpenSourceRange(dst, source, offset, length)
}
