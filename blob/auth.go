package blob

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// authenticators is the Blob service's chain: SharedKey and SharedKey
// Lite with the Blob/Queue strings-to-sign, account SAS with 'b' in ss,
// blob service SAS (sr=c and sr=b, with stored access policies), and
// unsigned requests last.
func (s *Server) authenticators(sg storagehttp.Signer, sas storagehttp.SAS) []storagehttp.Authenticator {
	return []storagehttp.Authenticator{
		storagehttp.SharedKey{Signer: sg, StringToSign: storagehttp.StringToSign, LiteStringToSign: storagehttp.LiteStringToSign},
		sas,
		anonymous{},
	}
}

// blobSAS checks account SAS with 'b' in ss and blob service SAS (sr=c
// and sr=b, with stored access policies).
func (s *Server) blobSAS(sg storagehttp.Signer) storagehttp.SAS {
	return storagehttp.SAS{Signer: sg, Service: 'b', ServiceStringToSign: blobServiceSAS, StoredPolicy: s.storedPolicy,
		UserDelegationStringToSign: blobUserDelegationSAS}
}

// authorizeSource checks the source of a From-URL operation (Copy Blob
// From URL, Put Blob, Put Block, Append Block and Put Page From URL), or
// of a Copy Blob authorized by a SAS: Azure reads it with the source
// URL's own authorization, never the destination request's, so a source
// in a container without public access needs a SAS on its URL
// (storagehttp.SAS.AuthorizeCopySource). With authentication off nothing
// is checked.
func (s *Server) authorizeSource(r *http.Request, src blobsvc.CopySource) error {
	if s.sas == nil {
		return nil
	}
	ct, err := s.svc.GetContainer(r.Context(), src.Container, "")
	switch {
	case err == nil && ct.PublicAccess != blobsvc.AccessPrivate:
		return nil
	case err != nil && !errors.Is(err, blobsvc.ErrContainerNotFound):
		return err
	}
	return s.sas.AuthorizeCopySource(r, "x-ms-copy-source", src.URL)
}

// storedPolicy resolves a service SAS's si from the ACL of the container
// the request addresses (Set Container ACL).
func (s *Server) storedPolicy(r *http.Request, id string) (storagehttp.AccessPolicy, bool, error) {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if err != nil || p.container == "" {
		return storagehttp.AccessPolicy{}, false, nil
	}
	if p.scope == scopeContainer && r.URL.Query().Get("restype") != "container" {
		p.container = "$root"
	}
	ct, err := s.svc.GetContainer(r.Context(), p.container, "")
	if err != nil {
		return storagehttp.AccessPolicy{}, false, nil
	}
	pol, ok := acl.Find(ct.ACL, id)
	if !ok {
		return storagehttp.AccessPolicy{}, false, nil
	}
	ap, err := storagehttp.StoredAccessPolicy(pol, "unreadable")
	return ap, err == nil, err
}

// anonymousResource marks the grant of an unsigned request: it may only
// read what a container's public access level opens (checkAnonymous).
const anonymousResource = "anonymous"

// anonymous claims requests with neither an Authorization header nor a
// SAS signature, last in the chain.
type anonymous struct{}

func (anonymous) Authenticate(r *http.Request, _ time.Time) (storagehttp.Verdict, storagehttp.Grant, error) {
	if r.Header.Get("Authorization") != "" || r.URL.Query().Get("sig") != "" {
		return storagehttp.NotMine, storagehttp.Grant{}, nil
	}
	return storagehttp.Pass, storagehttp.Grant{SAS: &storagehttp.SASGrant{Resource: anonymousResource}}, nil
}

// checkAnonymous lets an unsigned request through only for the reads a
// container's public access level opens: blob reads under "blob" or
// "container", container reads and List Blobs under "container". Other
// operations are 401 NoAuthenticationInformation; a read the level does
// not open is 404 ResourceNotFound, as Azure hides private resources.
func (s *Server) checkAnonymous(r *http.Request, rt *route, p resourcePath) error {
	if rt.anon == 0 {
		return storagehttp.NewError(http.StatusUnauthorized, storagehttp.CodeNoAuthenticationInformation,
			"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.")
	}
	notFound := storagehttp.NewError(http.StatusNotFound, "ResourceNotFound", "The specified resource does not exist.")
	ct, err := s.svc.GetContainer(r.Context(), p.container, "")
	if err != nil {
		return notFound
	}
	switch {
	case ct.PublicAccess == blobsvc.AccessContainer:
		return nil
	case ct.PublicAccess == blobsvc.AccessBlob && rt.anon == 'b':
		return nil
	}
	return notFound
}

// blobServiceSAS is the blob service-SAS string-to-sign (version
// 2018-11-09 and later; 2020-12-06 added the encryption scope): sp, st,
// se, "/blob/<account>/<container>[/<blob>]", si, sip, spr, sv, sr, the
// snapshot time, [ses,] rscc, rscd, rsce, rscl, rsct. The grant's
// Resource is "c:<container>", "b:<container>/<blob>" or
// "d:<container>/<directory>", as signed.
func blobServiceSAS(account string, r *http.Request, q url.Values) (sts, resource string, err error) {
	p, perr := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
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
	case "d":
		// A directory SAS signs "/blob/<account>/<container>/<dir>",
		// sdd its depth ("the number of directories within the root
		// folder of the directory specified in the canonicalizedResource
		// field"): the directory is the first sdd segments of the blob
		// path the request addresses. That path may be the directory's
		// own ("foo" under the directory foo, sdd=1: azblob's
		// TestDirectorySASAllPermissions creates both foo and foo/test
		// with one SAS for foo) or any below it.
		depth, err := strconv.Atoi(q.Get("sdd"))
		if err != nil || depth < 1 {
			return "", "", storagehttp.AuthFailed("A directory SAS (sr=d) needs sdd, the directory's depth (1 or more).")
		}
		segs := strings.Split(p.blob, "/")
		if p.blob == "" || len(segs) < depth {
			return "", "", storagehttp.AuthFailed("A directory SAS (sr=d) must address its directory or a blob under it.")
		}
		dir := strings.Join(segs[:depth], "/")
		canonical += "/" + dir
		resource = "d:" + p.container + "/" + dir
	default:
		return "", "", storagehttp.AuthFailed("The signed resource (sr) must be c, b or d.")
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
		case "d":
			path := p.container + "/" + p.blob
			ok = p.scope == scopeBlob && (path == name || strings.HasPrefix(path, name+"/"))
		}
		// An operation no service SAS can do (Create Container, container
		// properties) is AuthorizationFailure, as azblob's
		// TestSASContainerClient and TestSASContainerClient2 expect; a
		// permission the SAS lacks is AuthorizationPermissionMismatch.
		if !ok || letters == "" {
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
