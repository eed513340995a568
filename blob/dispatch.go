package blob

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// scope says which kind of URL an operation addresses.
type scope uint8

const (
	scopeService   scope = iota // /<account>/
	scopeContainer              // /<account>/<container>
	scopeBlob                   // /<account>/<container>/<blob…>
)

// resourcePath is a parsed request path.
type resourcePath struct {
	account, container, blob string
	scope                    scope
}

// parsePath splits the escaped path into account, container and blob
// name (the rest of the path, "/" included, unescaped). Names are checked
// by blobsvc; here only the shape: anything else is 400 InvalidUri.
//
// host is the host the request addressed: a production-style host
// (<account>.blob.…) names the account and the path starts at the
// container (storagehttp.PathStyle).
func parsePath(host, escaped string) (resourcePath, error) {
	var p resourcePath
	escaped = storagehttp.PathStyle(host, "blob", escaped)
	if !strings.HasPrefix(escaped, "/") {
		return p, errInvalidURI()
	}
	parts := strings.SplitN(escaped[1:], "/", 3)
	for i, part := range parts {
		v, err := url.PathUnescape(part)
		if err != nil {
			return p, errInvalidURI()
		}
		parts[i] = v
	}
	p.account = parts[0]
	switch {
	case len(parts) == 1 || (len(parts) == 2 && parts[1] == ""):
		p.scope = scopeService
	case len(parts) == 2:
		p.container, p.scope = parts[1], scopeContainer
	default:
		if parts[1] == "" {
			return p, errInvalidURI()
		}
		p.container, p.blob, p.scope = parts[1], parts[2], scopeBlob
		if p.blob == "" { // "/account/container/": the container
			p.scope = scopeContainer
		}
	}
	return p, nil
}

func errInvalidURI() *storagehttp.Error {
	return storagehttp.NewError(http.StatusBadRequest, storagehttp.CodeInvalidURI,
		"The requested URI does not represent any resource on the server.")
}

// call is one dispatched request, as handlers see it.
type call struct {
	r    *http.Request
	q    url.Values
	path resourcePath
}

type handlerFunc func(w http.ResponseWriter, c *call) error

// route is one row of the dispatch table: scope, method, restype and comp
// choose the operation.
type route struct {
	name    string
	scope   scope
	method  string
	restype string
	comp    string
	// perm and rtype: the account-SAS permission letters (any one
	// suffices) and resource type ('s' service, 'c' container, 'o'
	// blob); sasPerm: the service-SAS letters, "" when a service SAS
	// cannot do it (container properties, metadata and leases among
	// them: "You cannot grant permissions to read or write container
	// properties or metadata, nor to lease a container, with a container
	// SAS. Use an account SAS instead.").
	perm    string
	rtype   byte
	sasPerm string
	// snapshotOK: the operation takes ?snapshot= (reads and Delete Blob).
	snapshotOK bool
	// anon: an unsigned request may do it in a container whose public
	// access level is "blob" or "container" ('b') or only "container"
	// ('c'); 0: never.
	anon byte
	h    handlerFunc
}

// routeTable lists every supported operation.
func (s *Server) routeTable() []route {
	return []route{
		{name: "ListContainers", scope: scopeService, method: "GET", comp: "list", perm: "l", rtype: 's', h: s.listContainers},
		{name: "GetServiceProperties", scope: scopeService, method: "GET", restype: "service", comp: "properties", perm: "r", rtype: 's', h: s.getServiceProperties},
		{name: "SetServiceProperties", scope: scopeService, method: "PUT", restype: "service", comp: "properties", perm: "w", rtype: 's', h: s.setServiceProperties},
		{name: "FindBlobsByTags", scope: scopeService, method: "GET", comp: "blobs", perm: "f", rtype: 's', h: s.findBlobsByTags},
		{name: "FindBlobsByTagsInContainer", scope: scopeContainer, method: "GET", restype: "container", comp: "blobs", perm: "f", rtype: 'c', sasPerm: "f", h: s.findBlobsByTags},
		{name: "SubmitBatch", scope: scopeService, method: "POST", comp: "batch", perm: "rwdlacuptf", rtype: 's', h: s.submitBatch},
		{name: "SubmitBatch", scope: scopeContainer, method: "POST", restype: "container", comp: "batch", perm: "rwdlacuptf", rtype: 'c', sasPerm: "racwdlt", h: s.submitBatch},
		{name: "GetUserDelegationKey", scope: scopeService, method: "POST", restype: "service", comp: "userdelegationkey", h: s.getUserDelegationKey},
		{name: "GetAccountInfo", scope: scopeService, method: "GET", restype: "account", comp: "properties", perm: "rwdlacup", rtype: 's', sasPerm: "racwdl", h: s.getAccountInfo},
		{name: "GetAccountInfo", scope: scopeService, method: "HEAD", restype: "account", comp: "properties", perm: "rwdlacup", rtype: 's', sasPerm: "racwdl", h: s.getAccountInfo},

		{name: "CreateContainer", scope: scopeContainer, method: "PUT", restype: "container", perm: "c", rtype: 'c', h: s.createContainer},
		{name: "GetContainerProperties", scope: scopeContainer, method: "GET", restype: "container", perm: "r", rtype: 'c', anon: 'c', h: s.getContainerProperties},
		{name: "GetContainerProperties", scope: scopeContainer, method: "HEAD", restype: "container", perm: "r", rtype: 'c', anon: 'c', h: s.getContainerProperties},
		{name: "GetContainerMetadata", scope: scopeContainer, method: "GET", restype: "container", comp: "metadata", perm: "r", rtype: 'c', anon: 'c', h: s.getContainerProperties},
		{name: "GetContainerMetadata", scope: scopeContainer, method: "HEAD", restype: "container", comp: "metadata", perm: "r", rtype: 'c', anon: 'c', h: s.getContainerProperties},
		{name: "SetContainerMetadata", scope: scopeContainer, method: "PUT", restype: "container", comp: "metadata", perm: "w", rtype: 'c', h: s.setContainerMetadata},
		{name: "DeleteContainer", scope: scopeContainer, method: "DELETE", restype: "container", perm: "d", rtype: 'c', h: s.deleteContainer},
		{name: "RestoreContainer", scope: scopeContainer, method: "PUT", restype: "container", comp: "undelete", perm: "c", rtype: 'c', h: s.restoreContainer},
		{name: "LeaseContainer", scope: scopeContainer, method: "PUT", restype: "container", comp: "lease", perm: "wd", rtype: 'c', h: s.leaseContainer},
		{name: "GetContainerACL", scope: scopeContainer, method: "GET", restype: "container", comp: "acl", perm: "r", rtype: 'c', h: s.getContainerACL},
		{name: "GetContainerACL", scope: scopeContainer, method: "HEAD", restype: "container", comp: "acl", perm: "r", rtype: 'c', h: s.getContainerACL},
		{name: "SetContainerACL", scope: scopeContainer, method: "PUT", restype: "container", comp: "acl", perm: "w", rtype: 'c', h: s.setContainerACL},
		{name: "ListBlobs", scope: scopeContainer, method: "GET", restype: "container", comp: "list", perm: "l", rtype: 'c', sasPerm: "l", anon: 'c', h: s.listBlobs},

		{name: "PutBlob", scope: scopeBlob, method: "PUT", perm: "wc", rtype: 'o', sasPerm: "wc", h: s.putBlob},
		{name: "GetBlob", scope: scopeBlob, method: "GET", perm: "r", rtype: 'o', sasPerm: "r", snapshotOK: true, anon: 'b', h: s.getBlob},
		{name: "GetBlobProperties", scope: scopeBlob, method: "HEAD", perm: "r", rtype: 'o', sasPerm: "r", snapshotOK: true, anon: 'b', h: s.getBlobProperties},
		{name: "SetBlobProperties", scope: scopeBlob, method: "PUT", comp: "properties", perm: "w", rtype: 'o', sasPerm: "w", h: s.setBlobProperties},
		{name: "GetBlobMetadata", scope: scopeBlob, method: "GET", comp: "metadata", perm: "r", rtype: 'o', sasPerm: "r", snapshotOK: true, anon: 'b', h: s.getBlobProperties},
		{name: "GetBlobMetadata", scope: scopeBlob, method: "HEAD", comp: "metadata", perm: "r", rtype: 'o', sasPerm: "r", snapshotOK: true, anon: 'b', h: s.getBlobProperties},
		{name: "SetBlobMetadata", scope: scopeBlob, method: "PUT", comp: "metadata", perm: "w", rtype: 'o', sasPerm: "w", h: s.setBlobMetadata},
		{name: "DeleteBlob", scope: scopeBlob, method: "DELETE", perm: "d", rtype: 'o', sasPerm: "d", snapshotOK: true, h: s.deleteBlob},
		{name: "SnapshotBlob", scope: scopeBlob, method: "PUT", comp: "snapshot", perm: "wc", rtype: 'o', sasPerm: "wc", h: s.snapshotBlob},
		{name: "LeaseBlob", scope: scopeBlob, method: "PUT", comp: "lease", perm: "wd", rtype: 'o', sasPerm: "wd", h: s.leaseBlob},
		{name: "PutBlock", scope: scopeBlob, method: "PUT", comp: "block", perm: "wc", rtype: 'o', sasPerm: "wc", h: s.putBlock},
		{name: "PutBlockList", scope: scopeBlob, method: "PUT", comp: "blocklist", perm: "wc", rtype: 'o', sasPerm: "wc", h: s.putBlockList},
		{name: "GetBlobTags", scope: scopeBlob, method: "GET", comp: "tags", perm: "t", rtype: 'o', sasPerm: "t", snapshotOK: true, h: s.getBlobTags},
		{name: "SetBlobTags", scope: scopeBlob, method: "PUT", comp: "tags", perm: "t", rtype: 'o', sasPerm: "t", h: s.setBlobTags},
		{name: "PutPage", scope: scopeBlob, method: "PUT", comp: "page", perm: "w", rtype: 'o', sasPerm: "w", h: s.putPage},
		{name: "GetPageRanges", scope: scopeBlob, method: "GET", comp: "pagelist", perm: "r", rtype: 'o', sasPerm: "r", snapshotOK: true, h: s.getPageRanges},
		{name: "SetBlobTier", scope: scopeBlob, method: "PUT", comp: "tier", perm: "w", rtype: 'o', sasPerm: "w", snapshotOK: true, h: s.setBlobTier},
		{name: "AppendBlock", scope: scopeBlob, method: "PUT", comp: "appendblock", perm: "wa", rtype: 'o', sasPerm: "wa", h: s.appendBlock},
		{name: "IncrementalCopyBlob", scope: scopeBlob, method: "PUT", comp: "incrementalcopy", perm: "w", rtype: 'o', sasPerm: "w", h: s.incrementalCopy},
		{name: "AbortCopyBlob", scope: scopeBlob, method: "PUT", comp: "copy", perm: "w", rtype: 'o', sasPerm: "w", h: s.abortCopy},
		{name: "SetBlobExpiry", scope: scopeBlob, method: "PUT", comp: "expiry", perm: "w", rtype: 'o', sasPerm: "w", h: s.setBlobExpiry},
		{name: "SealAppendBlob", scope: scopeBlob, method: "PUT", comp: "seal", perm: "w", rtype: 'o', sasPerm: "w", h: s.sealBlob},
		{name: "UndeleteBlob", scope: scopeBlob, method: "PUT", comp: "undelete", perm: "w", rtype: 'o', sasPerm: "w", h: s.undeleteBlob},
		{name: "GetBlockList", scope: scopeBlob, method: "GET", comp: "blocklist", perm: "r", rtype: 'o', sasPerm: "r", anon: 'b', h: s.getBlockList},
	}
}

// dispatch picks the route, checks a SAS against it and runs the handler.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if err != nil {
		s.fail(w, r, err, false)
		return
	}
	if p.account != s.account {
		s.fail(w, r, errInvalidURI(), false)
		return
	}
	q := r.URL.Query()
	restype := q.Get("restype")
	switch {
	case p.scope == scopeService && restype == "container" && q.Get("comp") != "list" && q.Get("comp") != "undelete":
		// A container operation without a container name (azblob's
		// NewContainerClient("")): Azure answers Create Container so
		// with 400 InvalidQueryParameterValue (the recording of
		// TestContainerCreateEmptyName); the root container's own
		// operations name it, $root.
		s.fail(w, r, storagehttp.InvalidQuery("restype", restype, "a container operation needs a container name"), false)
		return
	case p.scope == scopeService && restype == "container":
		// /<account>?restype=container&comp=list: the $root container
		// (comp=undelete checks its headers before refusing the missing
		// name, as Azure answers azblob's TestContainerRestoreFailures).
		p.container, p.scope = "$root", scopeContainer
	case p.scope == scopeContainer && restype != "container" && restype != "account" && restype != "service" && q.Get("comp") != "list":
		// /<account>/<name> without restype=container: blob <name> of
		// the $root container.
		p.container, p.blob, p.scope = "$root", p.container, scopeBlob
	}
	at := p.scope
	if restype == "account" {
		// Get Account Information may address the account, a container
		// or a blob; a SAS still has to cover what the URL names.
		at = scopeService
	}
	rt, err := storagehttp.MatchRoute(s.routes, (*route).key, at, r.Method, q)
	if err != nil {
		s.fail(w, r, err, p.scope == scopeContainer)
		return
	}
	if q.Has("versionid") {
		s.fail(w, r, storagehttp.InvalidQuery("versionid", q.Get("versionid"), "blob versions are not supported"), false)
		return
	}
	if q.Has("snapshot") && !rt.snapshotOK {
		s.fail(w, r, storagehttp.InvalidQuery("snapshot", q.Get("snapshot"), "not supported by this operation"), false)
		return
	}
	if g := storagehttp.InfoFrom(r.Context()).Grant.SAS; g != nil && g.Resource == anonymousResource && !g.Account {
		if err := s.checkAnonymous(r, rt, p); err != nil {
			s.fail(w, r, err, false)
			return
		}
	} else if g != nil {
		if err := checkSAS(g, rt, p); err != nil {
			s.fail(w, r, err, false)
			return
		}
		if err := s.checkCreateOnly(r, g, rt, p); err != nil {
			s.fail(w, r, err, false)
			return
		}
	}
	if err := storagehttp.CheckUnsupported(r.Header, unsupportedHeaders); err != nil {
		s.fail(w, r, err, false)
		return
	}
	if rt.name != "DeleteBlob" {
		if err := storagehttp.CheckUnsupported(r.Header, deleteOnlyHeaders); err != nil {
			s.fail(w, r, err, false)
			return
		}
	}
	if err := prepareCPK(w, r, rt); err != nil {
		s.fail(w, r, err, false)
		return
	}
	if err := rt.h(w, &call{r: r, q: q, path: p}); err != nil {
		s.fail(w, r, err, p.scope == scopeContainer)
	}
}

// key is what selects the route (storagehttp.MatchRoute).
func (rt *route) key() storagehttp.RouteKey[scope] {
	return storagehttp.RouteKey[scope]{Scope: rt.scope, Method: rt.method, Restype: rt.restype, Comp: rt.comp}
}
