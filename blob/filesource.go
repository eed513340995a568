package blob

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// OpenSourceRange opens exactly length bytes from offset of the blob that
// source (a blob URL, production-style or path-style) names, for another
// service of the account reading it as a From-URL source (FileREST's Put
// Range From URL: "The source can be a file or a blob"). dst is that
// service's request: the source is authorized as this service's own
// From-URL operations authorize theirs (authorizeSource: the source URL's
// SAS checked by this service's SAS rules, a bearer token in
// x-ms-copy-source-authorization, or a public container), never by dst's
// own credentials. A source with a customer-provided key cannot be read
// (FileREST has no x-ms-source-encryption-* headers). Every failure is a
// *storagehttp.Error as Azure answers a source it cannot read: the
// source's status with CannotVerifyCopySource, or 400 for a range beyond
// the blob.
func (s *Server) OpenSourceRange(dst *http.Request, source string, offset, length int64) (io.ReadCloser, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, storagehttp.InvalidHeader("x-ms-copy-source", source)
	}
	p, err := parsePath(u.Host, u.EscapedPath())
	if err != nil || p.scope != scopeBlob {
		return nil, storagehttp.InvalidHeader("x-ms-copy-source", source)
	}
	if p.account != s.account {
		return nil, storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeCannotVerifyCopySource,
			"Copies from another account are not supported by this server.")
	}
	if u.Query().Has("versionid") {
		return nil, storagehttp.InvalidHeader("x-ms-copy-source", source)
	}
	src := blobsvc.CopySource{Container: p.container, Name: p.blob, Snapshot: u.Query().Get("snapshot"), URL: source}
	if err := s.authorizeSource(dst, src); err != nil {
		return nil, err
	}
	noKey := ""
	cond := blobsvc.Conditions{EncryptionKeySHA256: &noKey}
	_, rc, _, n, err := s.svc.OpenBlob(dst.Context(), src.Container, src.Name, src.Snapshot,
		&blobsvc.Range{Start: offset, End: offset + length - 1}, "", cond)
	if err != nil {
		if e := sourceCPKError(err); e != nil {
			return nil, e
		}
		e := toError(err, false)
		if e.Status >= 500 {
			return nil, fmt.Errorf("blob source %s/%s: %w", src.Container, src.Name, err)
		}
		return nil, storagehttp.NewError(e.Status, storagehttp.CodeCannotVerifyCopySource, e.Message)
	}
	if n != length {
		rc.Close()
		return nil, storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidHeaderValue,
			"The source range is beyond the end of the source blob.", storagehttp.Detail{Name: "HeaderName", Value: "x-ms-source-range"})
	}
	return rc, nil
}
