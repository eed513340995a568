package filerest

// The white-box tests of this package were written when the HTTP
// plumbing lived here; these names map them onto storagehttp, where it
// lives now, so that the same assertions keep checking FileREST's
// behaviour.

import (
	"net/http"
	"net/url"
	"time"

	"github.com/blobshare/blobshare/storagehttp"
)

type verdict = storagehttp.Verdict

const (
	notMine = storagehttp.NotMine
	pass    = storagehttp.Pass
	fail    = storagehttp.Fail
)

const timeLayout7 = storagehttp.TimeLayout7

type signer struct {
	account string
	key     []byte
}

func (s signer) sign(sts string) string {
	return storagehttp.Signer{Account: s.account, Key: s.key}.Sign(sts)
}

// sharedKeyAuth is FileREST's SharedKey link (authenticators).
type sharedKeyAuth struct{ s signer }

func (a sharedKeyAuth) authenticate(r *http.Request, now time.Time) (verdict, storagehttp.Grant, error) {
	sg := storagehttp.Signer{Account: a.s.account, Key: a.s.key}
	return (&Server{}).authenticators(sg)[0].Authenticate(r, now)
}

func sharedKeyStringToSign(account string, r *http.Request) string {
	return storagehttp.StringToSign(account, r)
}

func canonicalizedResource(account string, u *url.URL) string {
	return storagehttp.CanonicalizedResource(account, u)
}

func compareHeaderNames(a, b string) int { return storagehttp.CompareHeaderNames(a, b) }
func formatTime7(t time.Time) string     { return storagehttp.FormatTime7(t) }
func validVersion(v string) bool         { return storagehttp.ValidVersion(v) }

func decodeXMLBody(r *http.Request, v any) error {
	return storagehttp.DecodeXMLBody(r, v, maxSmallBody)
}

func writeError(w http.ResponseWriter, r *http.Request, e *Error) { storagehttp.WriteError(w, r, e) }
func errInvalidHeader(name, value string) *Error                  { return storagehttp.InvalidHeader(name, value) }

func parseMetadata(h http.Header) (map[string]string, error) { return storagehttp.ParseMetadata(h) }
func validIdentifier(s string) bool                          { return storagehttp.ValidIdentifier(s) }
