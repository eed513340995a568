package filerest

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/storagehttp"
)

// authenticators is FileREST's link of the storagehttp chain: SharedKey
// with the Blob/Queue/File string-to-sign (SharedKey Lite refused, as
// FileREST always has), then account SAS (ss must name 'f') and service
// SAS with sr=s (share) or sr=f (file).
func (s *Server) authenticators(sg storagehttp.Signer) []storagehttp.Authenticator {
	return []storagehttp.Authenticator{
		storagehttp.SharedKey{Signer: sg, StringToSign: storagehttp.StringToSign},
		s.fileSAS(sg),
	}
}

// fileSAS checks FileREST's SAS tokens: of a request, and of the source
// URL of Put Range From URL. A service SAS may name a stored access
// policy of its share (si).
func (s *Server) fileSAS(sg storagehttp.Signer) storagehttp.SAS {
	return storagehttp.SAS{Signer: sg, Service: 'f', ServiceStringToSign: fileServiceSAS, StoredPolicy: s.sharePolicy}
}

// sharePolicy resolves the stored access policy si of the share r names.
func (s *Server) sharePolicy(r *http.Request, si string) (storagehttp.AccessPolicy, bool, error) {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath(), true)
	if err != nil || p.Share == "" {
		return storagehttp.AccessPolicy{}, false, nil
	}
	pol, err := s.fs.SharePolicy(r.Context(), p.Share, si)
	switch {
	case errors.Is(err, fs.ErrNotFound), errors.Is(err, fs.ErrShareNotFound), errors.Is(err, fs.ErrInvalidName):
		return storagehttp.AccessPolicy{}, false, nil
	case err != nil:
		return storagehttp.AccessPolicy{}, false, err
	}
	return storagehttp.AccessPolicy{Start: pol.Start, Expiry: pol.Expiry, Permission: pol.Permission}, true, nil
}

// fileServiceSAS is the File service-SAS string-to-sign: the signed
// fields, the canonicalized name "/file/<account>/<share>[/<path>]" and
// the five response-header overrides.
func fileServiceSAS(account string, r *http.Request, q url.Values) (sts, resource string, err error) {
	sr := q.Get("sr")
	if sr != "s" && sr != "f" {
		return "", "", storagehttp.AuthFailed("The SAS token names no known resource (sr or ss/srt).")
	}
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath(), true)
	if err != nil || p.Share == "" {
		return "", "", storagehttp.AuthFailed("A service SAS must address a share or a file.")
	}
	name := "/file/" + account + "/" + p.Share
	if sr == "f" {
		if len(p.Parts) == 0 {
			return "", "", storagehttp.AuthFailed("A file SAS must address a file.")
		}
		name += "/" + p.Path()
	}
	sts = strings.Join([]string{q.Get("sp"), q.Get("st"), q.Get("se"), name, q.Get("si"), q.Get("sip"),
		q.Get("spr"), q.Get("sv"), q.Get("rscc"), q.Get("rscd"), q.Get("rsce"), q.Get("rscl"), q.Get("rsct")}, "\n")
	return sts, sr, nil
}

// needsIntent says whether a request with a bearer token must carry
// x-ms-file-request-intent: a file or directory operation (a path below
// the share, or the share's root directory, restype=directory) does;
// share- and service-level operations do not.
func needsIntent(r *http.Request) bool {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath(), true)
	if err != nil {
		return true // the request fails anyway; ask for everything
	}
	return p.Share != "" && (len(p.Parts) > 0 || r.URL.Query().Get("restype") == "directory")
}
