package blob

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// authenticators is the Blob service's chain: SharedKey and SharedKey
// Lite with the Blob/Queue strings-to-sign, account SAS with 'b' in ss,
// and blob service SAS (sr=c and sr=b).
func authenticators(sg storagehttp.Signer) []storagehttp.Authenticator {
	return []storagehttp.Authenticator{
		storagehttp.SharedKey{Signer: sg, StringToSign: storagehttp.StringToSign, LiteStringToSign: storagehttp.LiteStringToSign},
		storagehttp.SAS{Signer: sg, Service: 'b', ServiceStringToSign: blobServiceSAS},
	}
}

// blobServiceSAS is the blob service-SAS string-to-sign (version
// 2018-11-09 and later; 2020-12-06 added the encryption scope): sp, st,
// se, "/blob/<account>/<container>[/<blob>]", si, sip, spr, sv, sr, the
// snapshot time, [ses,] rscc, rscd, rsce, rscl, rsct. The grant's
// Resource is "c:<container>" or "b:<container>/<blob>", as signed.
func blobServiceSAS(account string, r *http.Request, q url.Values) (sts, resource string, err error) {
	p, perr := parsePath(r.URL.EscapedPath())
	if perr != nil || p.container == "" {
		return "", "", storagehttp.AuthFailed("A blob service SAS must address a container or a blob.")
	}
	if p.scope == scopeContainer && q.Get("restype") != "container" {
		p.container, p.blob = "$root", p.container
	}
	canonical := "/blob/" + account + "/" + p.container
	switch q.Get("sr") {
	case "c":
		resource = "c:" + p.container
	case "b":
		if p.blob == "" {
			return "", "", storagehttp.AuthFailed("A blob SAS (sr=b) must address a blob.")
		}
		canonical += "/" + p.blob
		resource = "b:" + p.container + "/" + p.blob
	default:
		return "", "", storagehttp.AuthFailed("The signed resource (sr) must be c or b.")
	}
	sv := q.Get("sv")
	if sv < "2018-11-09" {
		return "", "", storagehttp.AuthFailed("Service SAS versions before 2018-11-09 are not supported.")
	}
	fields := []string{q.Get("sp"), q.Get("st"), q.Get("se"), canonical, q.Get("si"), q.Get("sip"), q.Get("spr"), sv,
		q.Get("sr"), q.Get("sst")}
	if sv >= "2020-12-06" {
		fields = append(fields, q.Get("ses"))
	}
	fields = append(fields, q.Get("rscc"), q.Get("rscd"), q.Get("rsce"), q.Get("rscl"), q.Get("rsct"))
	return strings.Join(fields, "\n"), resource, nil
}

// checkSAS checks a SAS grant against the chosen operation: an account
// SAS by resource type and permission letters; a service SAS by its
// resource (the container, or the one blob) and letters.
func checkSAS(g *storagehttp.SASGrant, rt *route, p resourcePath) error {
	letters := rt.perm
	if !g.Account {
		letters = rt.sasPerm
		kind, name, _ := strings.Cut(g.Resource, ":")
		ok := false
		switch kind {
		case "c":
			ok = p.container != "" && name == p.container
		case "b":
			ok = p.scope == scopeBlob && name == p.container+"/"+p.blob
		}
		if !ok {
			return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationFailure,
				"This request is not authorized to perform this operation.")
		}
	}
	if letters == "" {
		return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationPermissionMismatch,
			"This request is not authorized to perform this operation using this permission.")
	}
	var err error
	for i := 0; i < len(letters); i++ {
		if err = g.CheckScope(letters[i], rt.rtype); err == nil {
			return nil
		}
	}
	return err
}
