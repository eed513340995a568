package filerest

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/storagehttp"
)

// scope says which kind of URL an operation addresses.
type scope uint8

const (
	scopeService scope = 1 << iota // /<account>/
	scopeShare                     // /<account>/<share>
	scopePath                      // /<account>/<share>/<path>
)

// call is one dispatched request, as handlers see it.
type call struct {
	r     *http.Request
	q     url.Values
	path  resourcePath
	route *route
}

// fsPath is the fs path of the addressed entry: "share" or "share/dir/f".
func (c *call) fsPath() string {
	if len(c.path.Parts) == 0 {
		return c.path.Share
	}
	return c.path.Share + "/" + c.path.Path()
}

// handlerFunc is an operation. It returns an error instead of writing one.
type handlerFunc func(w http.ResponseWriter, c *call) error

// route is one row of the dispatch table: an operation is chosen by
// method, restype, comp and (where the API needs it) one deciding header.
type route struct {
	name    string
	method  string
	restype string
	comp    string
	// header decides between operations sharing method, restype and comp.
	// values nil: the header must be present; otherwise one of values
	// (case-insensitive). header "" matches anything.
	header string
	values []string
	scopes scope
	// SAS: the permission letter the operation needs and the account-SAS
	// resource type ('s' service, 'c' share/directory, 'o' file).
	perm, rtype byte
	h           handlerFunc
}

func (rt *route) headerMatches(h http.Header) bool {
	if rt.header == "" {
		return true
	}
	v := h.Get(rt.header)
	if rt.values == nil {
		return v != ""
	}
	for _, want := range rt.values {
		if strings.EqualFold(v, want) {
			return true
		}
	}
	return false
}

// routeTable lists every supported operation (filerest.md §4). Order
// matters only among rows with the same method, restype and comp: the
// first whose deciding header matches wins.
func (s *Server) routeTable() []route {
	const (
		svc  = scopeService
		sh   = scopeShare
		pth  = scopePath
		dirs = scopeShare | scopePath
	)
	return []route{
		{name: "ListShares", method: "GET", comp: "list", scopes: svc, perm: 'l', rtype: 's', h: s.listShares},
		{name: "GetUserDelegationKey", method: "POST", restype: "service", comp: "userdelegationkey", scopes: svc, rtype: 's', h: s.getUserDelegationKey},
		{name: "GetServiceProperties", method: "GET", restype: "service", comp: "properties", scopes: svc, perm: 'r', rtype: 's', h: s.getServiceProperties},
		{name: "SetServiceProperties", method: "PUT", restype: "service", comp: "properties", scopes: svc, perm: 'w', rtype: 's', h: s.setServiceProperties},

		{name: "CreateShare", method: "PUT", restype: "share", scopes: sh, perm: 'c', rtype: 'c', h: s.createShare},
		{name: "GetShareProperties", method: "GET", restype: "share", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareProperties},
		{name: "GetShareProperties", method: "HEAD", restype: "share", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareProperties},
		{name: "SetShareProperties", method: "PUT", restype: "share", comp: "properties", scopes: sh, perm: 'w', rtype: 'c', h: s.setShareProperties},
		{name: "GetShareMetadata", method: "GET", restype: "share", comp: "metadata", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareProperties},
		{name: "GetShareMetadata", method: "HEAD", restype: "share", comp: "metadata", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareProperties},
		{name: "SetShareMetadata", method: "PUT", restype: "share", comp: "metadata", scopes: sh, perm: 'w', rtype: 'c', h: s.setShareMetadata},
		{name: "GetShareStats", method: "GET", restype: "share", comp: "stats", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareStats},
		{name: "LeaseShare", method: "PUT", restype: "share", comp: "lease", header: "x-ms-lease-action", values: []string{"acquire", "renew", "change", "release", "break"}, scopes: sh, perm: 'w', rtype: 'c', h: s.leaseShare},
		{name: "GetShareACL", method: "GET", restype: "share", comp: "acl", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareACL},
		{name: "GetShareACL", method: "HEAD", restype: "share", comp: "acl", scopes: sh, perm: 'r', rtype: 'c', h: s.getShareACL},
		{name: "SetShareACL", method: "PUT", restype: "share", comp: "acl", scopes: sh, perm: 'w', rtype: 'c', h: s.setShareACL},
		{name: "CreatePermission", method: "PUT", restype: "share", comp: "filepermission", scopes: sh, perm: 'c', rtype: 'c', h: s.createPermission},
		{name: "GetPermission", method: "GET", restype: "share", comp: "filepermission", scopes: sh, perm: 'r', rtype: 'c', h: s.getPermission},
		{name: "RestoreShare", method: "PUT", restype: "share", comp: "undelete", scopes: sh, perm: 'w', rtype: 'c', h: s.restoreShare},
		{name: "SnapshotShare", method: "PUT", restype: "share", comp: "snapshot", scopes: sh, perm: 'c', rtype: 'c', h: s.createShareSnapshot},
		{name: "DeleteShare", method: "DELETE", restype: "share", scopes: sh, perm: 'd', rtype: 'c', h: s.deleteShare},

		{name: "CreateDirectory", method: "PUT", restype: "directory", scopes: pth, perm: 'c', rtype: 'c', h: s.createDirectory},
		{name: "GetDirectoryProperties", method: "GET", restype: "directory", scopes: dirs, perm: 'r', rtype: 'c', h: s.getDirectoryProperties},
		{name: "GetDirectoryProperties", method: "HEAD", restype: "directory", scopes: dirs, perm: 'r', rtype: 'c', h: s.getDirectoryProperties},
		{name: "SetDirectoryProperties", method: "PUT", restype: "directory", comp: "properties", scopes: dirs, perm: 'w', rtype: 'c', h: s.setDirectoryProperties},
		{name: "GetDirectoryMetadata", method: "GET", restype: "directory", comp: "metadata", scopes: dirs, perm: 'r', rtype: 'c', h: s.getDirectoryProperties},
		{name: "GetDirectoryMetadata", method: "HEAD", restype: "directory", comp: "metadata", scopes: dirs, perm: 'r', rtype: 'c', h: s.getDirectoryProperties},
		{name: "SetDirectoryMetadata", method: "PUT", restype: "directory", comp: "metadata", scopes: dirs, perm: 'w', rtype: 'c', h: s.setDirectoryMetadata},
		{name: "DeleteDirectory", method: "DELETE", restype: "directory", scopes: pth, perm: 'd', rtype: 'c', h: s.deleteDirectory},
		{name: "ListDirectoriesAndFiles", method: "GET", restype: "directory", comp: "list", scopes: dirs, perm: 'l', rtype: 'c', h: s.listDirectory},
		{name: "RenameDirectory", method: "PUT", restype: "directory", comp: "rename", header: "x-ms-file-rename-source", scopes: pth, perm: 'w', rtype: 'c', h: s.rename},

		{name: "CopyFile", method: "PUT", header: "x-ms-copy-source", scopes: pth, perm: 'w', rtype: 'o', h: s.copyFile},
		{name: "CreateFile", method: "PUT", header: "x-ms-type", values: []string{"file"}, scopes: pth, perm: 'c', rtype: 'o', h: s.createFile},
		{name: "PutRangeFromURL", method: "PUT", comp: "range", header: "x-ms-copy-source", scopes: pth, perm: 'w', rtype: 'o', h: s.putRangeFromURL},
		{name: "PutRange", method: "PUT", comp: "range", header: "x-ms-write", values: []string{"update", "clear"}, scopes: pth, perm: 'w', rtype: 'o', h: s.putRange},
		{name: "GetFile", method: "GET", scopes: pth, perm: 'r', rtype: 'o', h: s.getFile},
		{name: "GetFileProperties", method: "HEAD", scopes: pth, perm: 'r', rtype: 'o', h: s.getFileProperties},
		{name: "SetFileProperties", method: "PUT", comp: "properties", scopes: pth, perm: 'w', rtype: 'o', h: s.setFileProperties},
		{name: "GetFileMetadata", method: "GET", comp: "metadata", scopes: pth, perm: 'r', rtype: 'o', h: s.getFileProperties},
		{name: "GetFileMetadata", method: "HEAD", comp: "metadata", scopes: pth, perm: 'r', rtype: 'o', h: s.getFileProperties},
		{name: "SetFileMetadata", method: "PUT", comp: "metadata", scopes: pth, perm: 'w', rtype: 'o', h: s.setFileMetadata},
		{name: "DeleteFile", method: "DELETE", scopes: pth, perm: 'd', rtype: 'o', h: s.deleteFile},
		{name: "ListRanges", method: "GET", comp: "rangelist", scopes: pth, perm: 'r', rtype: 'o', h: s.listRanges},
		{name: "AbortCopy", method: "PUT", comp: "copy", header: "x-ms-copy-action", values: []string{"abort"}, scopes: pth, perm: 'w', rtype: 'o', h: s.abortCopy},
		{name: "LeaseFile", method: "PUT", comp: "lease", header: "x-ms-lease-action", values: []string{"acquire", "change", "release", "break"}, scopes: pth, perm: 'w', rtype: 'o', h: s.leaseFile},
		{name: "RenameFile", method: "PUT", comp: "rename", header: "x-ms-file-rename-source", scopes: pth, perm: 'w', rtype: 'o', h: s.rename},

		// No restype even for directories: the handler looks the path up.
		{name: "ListHandles", method: "GET", comp: "listhandles", scopes: dirs, perm: 'l', rtype: 'o', h: s.listHandles},
		{name: "ForceCloseHandles", method: "PUT", comp: "forceclosehandles", header: "x-ms-handle-id", scopes: dirs, perm: 'w', rtype: 'o', h: s.forceCloseHandles},
	}
}

// dispatch picks the route and runs its handler; unknown combinations get
// the Azure error that names what is wrong.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	allowDot, _ := parseBoolHeader(r.Header, "x-ms-allow-trailing-dot")
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath(), allowDot)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if p.Account != s.account {
		s.fail(w, r, storagehttp.NewError(http.StatusBadRequest, CodeInvalidURI,
			"The requested URI does not represent any resource on the server.", Detail{Name: "Reason", Value: "unknown account"}))
		return
	}
	rt, err := s.match(r, q, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if g := storagehttp.InfoFrom(r.Context()).Grant.SAS; g != nil {
		if err := checkSASScope(g, rt, p); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := checkSnapshotParam(q, rt); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := storagehttp.CheckUnsupported(r.Header, unsupportedHeaders); err != nil {
		s.fail(w, r, err)
		return
	}
	c := &call{r: r, q: q, path: p, route: rt}
	err = rt.h(w, c)
	if err != nil {
		s.fail(w, r, err)
	}
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.log.Debug("rest: request", "op", rt.name, "path", c.fsPath(), "request_id", storagehttp.InfoFrom(r.Context()).ID, "err", err)
	}
}

// match finds the route for the request.
func (s *Server) match(r *http.Request, q url.Values, p resourcePath) (*route, error) {
	restype, comp := q.Get("restype"), q.Get("comp")
	var sameKey []*route
	knownRestype, knownComp := restype == "", comp == ""
	for i := range s.routes {
		rt := &s.routes[i]
		if rt.restype == restype {
			knownRestype = true
		}
		if rt.comp == comp {
			knownComp = true
		}
		if rt.restype == restype && rt.comp == comp {
			sameKey = append(sameKey, rt)
		}
	}
	if !knownComp {
		return nil, storagehttp.InvalidQuery("comp", comp, "unknown operation")
	}
	if !knownRestype {
		return nil, storagehttp.InvalidQuery("restype", restype, "unknown resource type")
	}
	if len(sameKey) == 0 {
		return nil, storagehttp.InvalidQuery("comp", comp, "not valid for restype "+restype)
	}
	var byMethod []*route
	for _, rt := range sameKey {
		if rt.method == r.Method {
			byMethod = append(byMethod, rt)
		}
	}
	if len(byMethod) == 0 {
		return nil, storagehttp.NewError(http.StatusMethodNotAllowed, CodeUnsupportedHTTPVerb,
			"The resource doesn't support the specified HTTP verb.")
	}
	at := scopePath
	switch {
	case p.Share == "":
		at = scopeService
	case len(p.Parts) == 0:
		at = scopeShare
	}
	var deciding *route
	for _, rt := range byMethod {
		if rt.scopes&at == 0 {
			continue
		}
		if rt.headerMatches(r.Header) {
			return rt, nil
		}
		if deciding == nil {
			deciding = rt
		}
	}
	if deciding == nil {
		return nil, errInvalidURI("the operation does not apply to this kind of resource")
	}
	// A deciding header is missing or has a value no operation takes.
	// PUT on a file path asks for x-ms-type, Put Range for x-ms-write.
	name := deciding.header
	switch {
	case deciding.comp == "range":
		name = "x-ms-write"
	case deciding.header == "x-ms-copy-source":
		name = "x-ms-type"
	}
	if v := r.Header.Get(name); v != "" {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return nil, storagehttp.MissingHeader(name)
}

// checkSASScope checks a SAS grant against the chosen operation: the
// account-SAS resource type and permission letter (storagehttp), that a
// service SAS never reaches the share's own operations (Get Share
// Properties, metadata, ACL, stats, lease …: those need Shared Key or an
// account SAS), and that a file SAS (sr=f) addresses a file, not its share.
func checkSASScope(g *storagehttp.SASGrant, rt *route, p resourcePath) error {
	if !g.Account && (rt.restype == "share" || g.Resource == "f" && len(p.Parts) == 0) {
		return storagehttp.NewError(http.StatusForbidden, CodeAuthorizationFailure,
			"This request is not authorized to perform this operation.")
	}
	return g.CheckScope(rt.perm, rt.rtype)
}

// snapshotReads are the operations that may address a share snapshot
// (sharesnapshot=): reads, listings, its lease and deleting it.
var snapshotReads = map[string]bool{
	"GetShareProperties": true, "GetShareMetadata": true, "DeleteShare": true, "LeaseShare": true,
	"GetDirectoryProperties": true, "GetDirectoryMetadata": true, "ListDirectoriesAndFiles": true,
	"GetFile": true, "GetFileProperties": true, "GetFileMetadata": true, "ListRanges": true,
}

// checkSnapshotParam validates sharesnapshot= (a UTC time) and refuses it
// on operations a read-only snapshot does not take. Snapshot Share ignores
// it, valid or not, and snapshots the share: Azure does (the azfile SDK's
// live test TestShareCreateSnapshotNegativeSnapshotOfSnapshot: "this would
// not fail, snapshot would be ignored").
func checkSnapshotParam(q url.Values, rt *route) error {
	v, ok := q["sharesnapshot"]
	if !ok || v[0] == "" || rt.name == "SnapshotShare" {
		return nil
	}
	if _, err := fs.ParseSnapshot(v[0]); err != nil {
		return storagehttp.InvalidQuery("sharesnapshot", v[0], "not a share snapshot time")
	}
	if !snapshotReads[rt.name] {
		return storagehttp.NewError(http.StatusBadRequest, "ShareSnapshotOperationNotSupported",
			"The operation is not supported on a share snapshot.")
	}
	return nil
}
