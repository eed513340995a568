package table

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// call is one dispatched request, as handlers see it.
type call struct {
	r      *http.Request
	q      url.Values
	path   resourcePath
	method string // after X-HTTP-Method tunnelling
	sas    sasScope
}

type handlerFunc func(w http.ResponseWriter, c *call) error

// route is one row of the dispatch table. acct and rtype: the account-SAS
// permission letters (any of) and resource type ('s' service, 'c' tables,
// 'o' entities); a table SAS cannot do these. Entity operations (entity
// true) check any SAS themselves: the letters depend on If-Match, the key
// range on the entity.
type route struct {
	name                 string
	scope                scope
	method, restype, cmp string
	acct                 string
	rtype                byte
	entity               bool
	h                    handlerFunc
}

// routeTable lists every supported operation.
func (s *Server) routeTable() []route {
	return []route{
		{name: "GetTableServiceProperties", scope: scopeService, method: "GET", restype: "service", cmp: "properties", acct: "r", rtype: 's', h: s.getServiceProperties},
		{name: "SetTableServiceProperties", scope: scopeService, method: "PUT", restype: "service", cmp: "properties", acct: "w", rtype: 's', h: s.setServiceProperties},

		{name: "QueryTables", scope: scopeTables, method: "GET", acct: "l", rtype: 'c', h: s.queryTables},
		{name: "CreateTable", scope: scopeTables, method: "POST", acct: "cw", rtype: 'c', h: s.createTable},
		{name: "DeleteTable", scope: scopeTable, method: "DELETE", acct: "d", rtype: 'c', h: s.deleteTable},
		// Get/Set Table ACL need the account key (Azure and Azurite: no SAS).
		{name: "GetTableACL", scope: scopeEntities, method: "GET", cmp: "acl", rtype: 'c', h: s.getACL},
		{name: "SetTableACL", scope: scopeEntities, method: "PUT", cmp: "acl", rtype: 'c', h: s.setACL},

		{name: "QueryEntities", scope: scopeEntities, method: "GET", entity: true, h: s.queryEntities},
		{name: "InsertEntity", scope: scopeEntities, method: "POST", entity: true, h: s.insertEntity},
		{name: "GetEntity", scope: scopeEntity, method: "GET", entity: true, h: s.getEntity},
		{name: "UpdateEntity", scope: scopeEntity, method: "PUT", entity: true, h: s.updateEntity},
		{name: "MergeEntity", scope: scopeEntity, method: "MERGE", entity: true, h: s.mergeEntity},
		{name: "MergeEntity", scope: scopeEntity, method: "PATCH", entity: true, h: s.mergeEntity},
		{name: "DeleteEntity", scope: scopeEntity, method: "DELETE", entity: true, h: s.deleteEntity},

		{name: "EntityGroupTransaction", scope: scopeBatch, method: "POST", entity: true, h: s.batch},
	}
}

// key is what selects the route (storagehttp.MatchRoute).
func (rt *route) key() storagehttp.RouteKey[scope] {
	return storagehttp.RouteKey[scope]{Scope: rt.scope, Method: rt.method, Restype: rt.restype, Comp: rt.cmp}
}

// effectiveMethod applies X-HTTP-Method tunnelling: POST only
// (XMethodNotUsingPost), one value (XMethodIncorrectCount), MERGE, PATCH,
// PUT or DELETE (XMethodIncorrectValue).
func effectiveMethod(r *http.Request) (string, error) {
	vs := r.Header.Values("X-HTTP-Method")
	if len(vs) == 0 {
		return r.Method, nil
	}
	if r.Method != http.MethodPost {
		return "", storagehttp.NewError(http.StatusBadRequest, CodeXMethodNotUsingPost,
			"The request uses X-HTTP-Method with an HTTP verb other than POST.")
	}
	if len(vs) > 1 || strings.Contains(vs[0], ",") {
		return "", storagehttp.NewError(http.StatusBadRequest, CodeXMethodIncorrectCount,
			"More than one X-HTTP-Method is specified.")
	}
	switch m := strings.TrimSpace(vs[0]); m {
	case "MERGE", "PATCH", "PUT", "DELETE":
		return m, nil
	}
	return "", storagehttp.NewError(http.StatusBadRequest, CodeXMethodIncorrectValue,
		"The specified X-HTTP-Method is invalid.")
}

// dispatch picks the route, checks a SAS against it and runs the handler.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if err := s.route(w, r); err != nil {
		s.fail(w, r, err)
	}
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePath(storagehttp.RequestHost(r), r.URL.EscapedPath())
	if err != nil {
		return err
	}
	if p.account != s.account {
		return errInvalidURI()
	}
	q := r.URL.Query()
	if q.Get("restype") == "service" {
		p = resourcePath{account: p.account, scope: scopeService}
	}
	method, err := effectiveMethod(r)
	if err != nil {
		return err
	}
	// The table name is checked before anything else of the request, as
	// Azurite does (validated on every request addressing a table).
	if p.scope == scopeEntities || p.scope == scopeEntity || p.scope == scopeTable {
		if err := tablesvc.ValidTableName(p.table); err != nil {
			return err
		}
	}
	rt, err := storagehttp.MatchRoute(s.routes, (*route).key, p.scope, method, q)
	if err != nil {
		return err
	}
	c := &call{r: r, q: q, path: p, method: method, sas: scopeOf(r)}
	if !rt.entity && c.sas.g != nil {
		if err := c.sas.checkTable(p.table); err != nil {
			return err
		}
		if err := c.sas.checkAny(rt.acct, rt.rtype, false); err != nil {
			return err
		}
	}
	return rt.h(w, c)
}
