package storagehttp

import (
	"net/http"
	"net/url"
)

// CodeCannotVerifyCopySource is the answer of every From-URL operation
// whose source cannot be read: not authorized, or in another account.
const CodeCannotVerifyCopySource = "CannotVerifyCopySource"

// AuthorizeCopySource checks that the source URL of a From-URL operation
// (Put Range From URL, Put Block From URL, Append Block From URL, Put Page
// From URL, Copy Blob From URL) carries its own authorization, as Azure
// requires: the destination request's credentials do not reach the
// source, even in the same account. The source URL must carry a shared
// access signature that the SAS authenticator a accepts as if the
// destination request's client had sent a GET for the source URL at that
// request's start time, and that grants read on an object; or, when the
// SAS authenticator has a SourceToken (--oauth basic), the bearer token of
// x-ms-copy-source-authorization ("Bearer TOKEN"), checked as a request
// for the source would be. Any refusal is 403 CannotVerifyCopySource
// naming header.
func (a SAS) AuthorizeCopySource(dst *http.Request, header, source string) error {
	refused := func(reason string) error {
		return NewError(http.StatusForbidden, CodeCannotVerifyCopySource,
			"The source of the copy could not be authorized: "+reason, Detail{Name: "HeaderName", Value: header})
	}
	u, err := url.Parse(source)
	if err != nil {
		return refused("malformed URL")
	}
	hasSig := u.Query().Get("sig") != ""
	srcAuth := dst.Header.Get("x-ms-copy-source-authorization")
	switch {
	case !hasSig && srcAuth != "" && a.SourceToken != nil:
		src := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"Authorization": {srcAuth}},
			RemoteAddr: dst.RemoteAddr, TLS: dst.TLS}).WithContext(dst.Context())
		if v, _, err := a.SourceToken.Authenticate(src, InfoFrom(dst.Context()).Start); v != Pass || err != nil {
			return refused("the source's bearer token does not verify")
		}
		return nil
	case !hasSig && srcAuth != "":
		return refused("only a shared access signature is supported for the source")
	case !hasSig:
		return refused("no shared access signature on the source URL")
	}
	src := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}, RemoteAddr: dst.RemoteAddr, TLS: dst.TLS}).WithContext(dst.Context())
	v, g, err := a.Authenticate(src, InfoFrom(dst.Context()).Start)
	if v != Pass || err != nil || g.SAS == nil {
		return refused("the source's shared access signature does not verify")
	}
	if !g.SAS.Allows('r', 'o') {
		return refused("the source's shared access signature does not grant read")
	}
	return nil
}
