package queue

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// scope says which kind of URL an operation addresses.
type scope uint8

const (
	scopeService  scope = iota // /<account>/
	scopeQueue                 // /<account>/<queue>
	scopeMessages              // /<account>/<queue>/messages
	scopeMessage               // /<account>/<queue>/messages/<id>
)

// resourcePath is a parsed request path.
type resourcePath struct {
	account, queue, messageID string
	scope                     scope
}

// parsePath splits the escaped path into account, queue, "messages" and
// message id. Queue names are checked by msgqueue; here only the shape:
// anything else is 400 InvalidUri.
//
// host is the host the request addressed: a production-style host
// (<account>.queue.…) names the account and the path starts at the
// queue (storagehttp.PathStyle).
func parsePath(host, escaped string) (resourcePath, error) {
	var p resourcePath
	escaped = storagehttp.PathStyle(host, "queue", escaped)
	if !strings.HasPrefix(escaped, "/") {
		return p, errInvalidURI()
	}
	parts := strings.Split(strings.TrimSuffix(escaped[1:], "/"), "/")
	for i, part := range parts {
		v, err := url.PathUnescape(part)
		if err != nil || (v == "" && i > 0) || strings.ContainsAny(v, "/\\") {
			return p, errInvalidURI()
		}
		parts[i] = v
	}
	p.account = parts[0]
	switch len(parts) {
	case 1:
		p.scope = scopeService
	case 2:
		p.queue, p.scope = parts[1], scopeQueue
	case 3, 4:
		if parts[2] != "messages" {
			return p, errInvalidURI()
		}
		p.queue, p.scope = parts[1], scopeMessages
		if len(parts) == 4 {
			p.messageID, p.scope = parts[3], scopeMessage
		}
	default:
		return p, errInvalidURI()
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
	// perm and rtype: the account-SAS permission letter and resource type
	// ('s' service, 'c' queue, 'o' messages); sasPerm: the queue
	// service-SAS permission letter, 0 when a service SAS cannot do it.
	perm, rtype, sasPerm byte
	h                    handlerFunc
}

// routeTable lists every supported operation.
func (s *Server) routeTable() []route {
	return []route{
		{name: "ListQueues", scope: scopeService, method: "GET", comp: "list", perm: 'l', rtype: 's', h: s.listQueues},
		{name: "GetServiceProperties", scope: scopeService, method: "GET", restype: "service", comp: "properties", perm: 'r', rtype: 's', h: s.getServiceProperties},
		{name: "SetServiceProperties", scope: scopeService, method: "PUT", restype: "service", comp: "properties", perm: 'w', rtype: 's', h: s.setServiceProperties},

		{name: "CreateQueue", scope: scopeQueue, method: "PUT", perm: 'c', rtype: 'c', h: s.createQueue},
		{name: "DeleteQueue", scope: scopeQueue, method: "DELETE", perm: 'd', rtype: 'c', h: s.deleteQueue},
		{name: "GetQueueMetadata", scope: scopeQueue, method: "GET", comp: "metadata", perm: 'r', rtype: 'c', sasPerm: 'r', h: s.getMetadata},
		{name: "GetQueueMetadata", scope: scopeQueue, method: "HEAD", comp: "metadata", perm: 'r', rtype: 'c', sasPerm: 'r', h: s.getMetadata},
		{name: "SetQueueMetadata", scope: scopeQueue, method: "PUT", comp: "metadata", perm: 'w', rtype: 'c', h: s.setMetadata},
		{name: "GetQueueACL", scope: scopeQueue, method: "GET", comp: "acl", perm: 'r', rtype: 'c', h: s.getACL},
		{name: "GetQueueACL", scope: scopeQueue, method: "HEAD", comp: "acl", perm: 'r', rtype: 'c', h: s.getACL},
		{name: "SetQueueACL", scope: scopeQueue, method: "PUT", comp: "acl", perm: 'w', rtype: 'c', h: s.setACL},

		{name: "PutMessage", scope: scopeMessages, method: "POST", perm: 'a', rtype: 'o', sasPerm: 'a', h: s.putMessage},
		{name: "GetMessages", scope: scopeMessages, method: "GET", perm: 'p', rtype: 'o', sasPerm: 'p', h: s.getMessages},
		{name: "ClearMessages", scope: scopeMessages, method: "DELETE", perm: 'd', rtype: 'o', h: s.clearMessages},
		{name: "DeleteMessage", scope: scopeMessage, method: "DELETE", perm: 'p', rtype: 'o', sasPerm: 'p', h: s.deleteMessage},
		{name: "UpdateMessage", scope: scopeMessage, method: "PUT", perm: 'u', rtype: 'o', sasPerm: 'u', h: s.updateMessage},
	}
}

// peekRoute is Get Messages with peekonly=true: another permission.
var peekRoute = route{name: "PeekMessages", scope: scopeMessages, method: "GET", perm: 'r', rtype: 'o', sasPerm: 'r'}

// dispatch picks the route, checks a SAS against it and runs the handler.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if p.account != s.account {
		s.fail(w, r, errInvalidURI())
		return
	}
	q := r.URL.Query()
	// List Queues and the service properties may be sent to
	// /<account>/<anything>?comp=list as well (Azurite and the SDKs agree on
	// /<account>/ but tolerate the other).
	if q.Get("comp") == "list" || q.Get("restype") == "service" {
		p.scope, p.queue = scopeService, ""
	}
	// The queue name is checked before anything else of the request, as
	// Azurite does (a bad name with bad parameters is a name error).
	if p.queue != "" {
		if err := msgqueue.ValidName(p.queue); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	rt, err := storagehttp.MatchRoute(s.routes, (*route).key, p.scope, r.Method, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if rt.name == "GetMessages" && strings.EqualFold(q.Get("peekonly"), "true") {
		peek := peekRoute
		peek.h = s.peekMessages
		rt = &peek
	}
	if g := storagehttp.InfoFrom(r.Context()).Grant.SAS; g != nil {
		if !g.Account && g.Resource != p.queue {
			s.fail(w, r, storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationFailure,
				"This request is not authorized to perform this operation."))
			return
		}
		if err := checkSAS(g, rt); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := rt.h(w, &call{r: r, q: q, path: p}); err != nil {
		s.fail(w, r, err)
	}
}

// key is what selects the route (storagehttp.MatchRoute).
func (rt *route) key() storagehttp.RouteKey[scope] {
	return storagehttp.RouteKey[scope]{Scope: rt.scope, Method: rt.method, Restype: rt.restype, Comp: rt.comp}
}
