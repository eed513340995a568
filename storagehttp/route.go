package storagehttp

import "net/url"

// RouteKey is what selects an operation of a service whose operations are
// told apart by the kind of resource the URL names (Scope: the service's
// own type, such as service, container or blob), the HTTP method, and the
// restype and comp query parameters.
type RouteKey[S comparable] struct {
	Scope                 S
	Method, Restype, Comp string
}

// MatchRoute returns the route of routes (each keyed by key) that a
// request with method and query q at scope at selects. When no route at
// that scope takes the request's restype and comp, the answer names what
// is unknown: 400 InvalidQueryParameterValue for comp, else for restype,
// else (neither given) 405 UnsupportedHttpVerb; when some do but none with
// the method, 405 UnsupportedHttpVerb.
func MatchRoute[R any, S comparable](routes []R, key func(*R) RouteKey[S], at S, method string, q url.Values) (*R, error) {
	restype, comp := q.Get("restype"), q.Get("comp")
	known := false
	for i := range routes {
		k := key(&routes[i])
		if k.Scope != at || k.Restype != restype || k.Comp != comp {
			continue
		}
		if k.Method == method {
			return &routes[i], nil
		}
		known = true
	}
	switch {
	case known:
		return nil, UnsupportedVerb()
	case comp != "":
		return nil, InvalidQuery("comp", comp, "unknown or unsupported operation")
	case restype != "":
		return nil, InvalidQuery("restype", restype, "unknown resource type")
	}
	return nil, UnsupportedVerb()
}
