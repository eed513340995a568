package blob

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// getUserDelegationKey answers Get User Delegation Key: a bearer token
// only, the key derived from the account key (storagehttp's
// ServeUserDelegationKey says how and why).
func (s *Server) getUserDelegationKey(w http.ResponseWriter, c *call) error {
	return s.signer.ServeUserDelegationKey(w, c.r, 'b', storagehttp.InfoFrom(c.r.Context()).Start)
}

// blobUserDelegationSAS is the user delegation SAS string-to-sign of the
// Blob service ("Create a user delegation SAS"), by signed version:
//
//	sp, st, se, "/blob/<account>/<container>[/<blob or directory>]",
//	skoid, sktid, skt, ske, sks, skv,
//	[saoid, suoid, scid,]        2020-02-10 and later
//	[skdutid, sduoid,]           2025-07-05 and later
//	sip, spr, sv, sr, the snapshot time,
//	[ses,]                       2020-12-06 and later
//	[srh canonical, srq canonical,] 2026-04-06 and later
//	rscc, rscd, rsce, rscl, rsct
//
// srh/srq (signed request headers and query parameters, "Dynamic User
// Delegation SAS") are not in Azure's table yet; the version is azblob's
// CHANGELOG (1.7.0-beta.1: "Added support for service version 2026-04-06
// … Added support for Dynamic User Delegation SAS"), and azblob v1.6.4
// signs 2026-02-06 without them. The resource (sr
// c, b or d, the canonicalized name) is read exactly as a service SAS's
// is (blobServiceSAS), so both kinds address the same things.
func blobUserDelegationSAS(account string, r *http.Request, q url.Values) (sts, resource string, err error) {
	_, resource, err = blobServiceSAS(account, r, q)
	if err != nil {
		return "", "", err
	}
	_, name, _ := strings.Cut(resource, ":")
	sv := q.Get("sv")
	fields := []string{q.Get("sp"), q.Get("st"), q.Get("se"), "/blob/" + account + "/" + name}
	fields = append(fields, storagehttp.UserDelegationFields(q)...)
	fields = append(fields, q.Get("sip"), q.Get("spr"), sv, q.Get("sr"), q.Get("sst"))
	if sv >= "2020-12-06" {
		fields = append(fields, q.Get("ses"))
	}
	if sv >= "2026-04-06" {
		h, p := storagehttp.SignedRequestFields(r, q)
		fields = append(fields, h, p)
	}
	fields = append(fields, q.Get("rscc"), q.Get("rscd"), q.Get("rsce"), q.Get("rscl"), q.Get("rsct"))
	return strings.Join(fields, "\n"), resource, nil
}

// createOnlyRoutes are the writes that make a blob: with a SAS that grants
// Create but not Write they may only make a new one ("Create (c): Write a
// new blob…"); on an existing blob Azure answers 403
// UnauthorizedBlobOverwrite (azblob's TestStageBlockWithUDSCreatePermission
// OverwriteFails and TestCommitBlockListWithUDSCreatePermissionOverwriteFails).
var createOnlyRoutes = map[string]bool{"PutBlob": true, "PutBlock": true, "PutBlockList": true}

// checkCreateOnly refuses a create-only SAS's write to a blob that exists.
func (s *Server) checkCreateOnly(r *http.Request, g *storagehttp.SASGrant, rt *route, p resourcePath) error {
	if g == nil || !createOnlyRoutes[rt.name] || strings.ContainsRune(g.Permissions, 'w') ||
		!strings.ContainsRune(g.Permissions, 'c') {
		return nil
	}
	_, err := s.svc.GetBlob(r.Context(), p.container, p.blob, "", "", blobsvc.Conditions{})
	switch {
	case errors.Is(err, blobsvc.ErrBlobNotFound), errors.Is(err, blobsvc.ErrContainerNotFound):
		return nil
	case err != nil:
		return err
	}
	return storagehttp.NewError(http.StatusForbidden, "UnauthorizedBlobOverwrite",
		"This request is not authorized to perform blob overwrites.")
}
