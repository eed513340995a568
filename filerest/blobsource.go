package filerest

import (
	"io"
	"net/http"
	"net/url"

	"github.com/blobshare/blobshare/fs"
)

// BlobSource is the Blob service of the same account, as Put Range From
// URL reads a source on it (an x-ms-copy-source naming a blob: "The
// source can be a file or a blob in the same or another storage
// account"). It is a consumer-side interface so that FileREST does not
// depend on the Blob packages; cmd/blobshare wires the Blob endpoint in.
//
// An in-process read rather than an HTTP request to the Blob endpoint:
// the read goes through the Blob server's own source authorization (the
// source URL's SAS, x-ms-copy-source-authorization's bearer token, or a
// public container, exactly as the Blob service's From-URL operations
// check a source), so nothing is skipped, and there is no TLS trust, loop
// or port to arrange with ourselves.
type BlobSource interface {
	// Owns reports whether u names a blob this Blob service serves (a
	// production-style ACCOUNT.blob.… host, or the endpoint's own
	// path-style address).
	Owns(u *url.URL) bool
	// OpenSourceRange authorizes dst's read of source (the blob URL as
	// sent) and opens exactly length bytes from offset; every refusal is
	// a *storagehttp.Error ready to answer (403 or 404
	// CannotVerifyCopySource and the like).
	OpenSourceRange(dst *http.Request, source string, offset, length int64) (io.ReadCloser, error)
}

// isBlobSource reports whether a Put Range From URL source is a blob.
func (s *Server) isBlobSource(raw string) bool {
	if s.blobs == nil || len(raw) > maxCopySourceLen {
		return false
	}
	u, err := url.Parse(raw)
	return err == nil && u.IsAbs() && s.blobs.Owns(u)
}

// putRangeFromBlob writes req.Length bytes of the x-ms-copy-source blob,
// from srcOffset, into the file range req names, through verify (the
// x-ms-source-content-crc64 check) before anything commits.
func (s *Server) putRangeFromBlob(c *call, req fs.PutRangeRequest, srcOffset int64, verify func(io.Reader) io.Reader) (fs.Attr, error) {
	rc, err := s.blobs.OpenSourceRange(c.r, c.r.Header.Get("x-ms-copy-source"), srcOffset, req.Length)
	if err != nil {
		return fs.Attr{}, err
	}
	defer rc.Close()
	req.Body = verify(rc)
	return s.fs.PutRange(c.r.Context(), req)
}
