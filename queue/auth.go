package queue

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/storagehttp"
)

// authenticators is the Queue service's chain: SharedKey and SharedKey
// Lite with the Blob/Queue strings-to-sign, account SAS with 'q' in ss,
// and queue service SAS, which may name a stored access policy of its
// queue (si).
func (s *Server) authenticators(sg storagehttp.Signer) []storagehttp.Authenticator {
	return []storagehttp.Authenticator{
		storagehttp.SharedKey{Signer: sg, StringToSign: storagehttp.StringToSign, LiteStringToSign: storagehttp.LiteStringToSign},
		storagehttp.SAS{Signer: sg, Service: 'q', ServiceStringToSign: queueServiceSAS, StoredPolicy: s.queuePolicy},
	}
}

// queuePolicy resolves a service SAS's si from the ACL of the queue the
// request addresses (Set Queue ACL). A missing queue or policy is "no
// such policy": the SAS then fails to authenticate.
func (s *Server) queuePolicy(r *http.Request, id string) (storagehttp.AccessPolicy, bool, error) {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if err != nil || p.queue == "" {
		return storagehttp.AccessPolicy{}, false, nil
	}
	ids, err := s.svc.ACL(r.Context(), p.queue)
	if err != nil {
		return storagehttp.AccessPolicy{}, false, nil
	}
	pol, ok := acl.Find(ids, id)
	if !ok {
		return storagehttp.AccessPolicy{}, false, nil
	}
	ap, err := storagehttp.StoredAccessPolicy(pol, "unreadable")
	return ap, err == nil, err
}

// queueServiceSAS is the queue service-SAS string-to-sign (version
// 2015-04-05 and later): sp, st, se, "/queue/<account>/<queue>", si, sip,
// spr, sv. The grant's Resource is the queue named by the URL, which the
// signature covers.
func queueServiceSAS(account string, r *http.Request, q url.Values) (sts, resource string, err error) {
	p, perr := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if perr != nil || p.queue == "" {
		return "", "", storagehttp.AuthFailed("A queue SAS must address a queue.")
	}
	sts = strings.Join([]string{q.Get("sp"), q.Get("st"), q.Get("se"), "/queue/" + account + "/" + p.queue,
		q.Get("si"), q.Get("sip"), q.Get("spr"), q.Get("sv")}, "\n")
	return sts, p.queue, nil
}

// checkSAS checks a SAS grant against the chosen operation: an account
// SAS by its resource type and permission, a service SAS by the
// operation's service-SAS permission. An operation no service SAS may do
// whatever its permissions (creating, deleting or listing queues, setting
// metadata or the ACL) is 403 AuthorizationFailure, as Azure answers it
// (the SDK's live tests TestQueueGetSASURL/2); a permission the SAS lacks
// is AuthorizationPermissionMismatch.
func checkSAS(g *storagehttp.SASGrant, rt *route) error {
	if g.Account {
		return g.CheckScope(rt.perm, rt.rtype)
	}
	if rt.sasPerm == 0 {
		return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationFailure,
			"This request is not authorized to perform this operation.")
	}
	return g.CheckScope(rt.sasPerm, rt.rtype)
}
