package storagehttp

import (
	"errors"
	"net/url"
	"testing"
)

func TestMatchRoute(t *testing.T) {
	type op struct {
		name string
		key  RouteKey[int]
	}
	routes := []op{
		{"List", RouteKey[int]{0, "GET", "", "list"}},
		{"Create", RouteKey[int]{1, "PUT", "container", ""}},
		{"Props", RouteKey[int]{1, "GET", "container", ""}},
		{"Lease", RouteKey[int]{1, "PUT", "container", "lease"}},
		{"Get", RouteKey[int]{2, "GET", "", ""}},
	}
	key := func(o *op) RouteKey[int] { return o.key }
	for _, tc := range []struct {
		at             int
		method, query  string
		want           string // the route chosen; "" when an error is due
		wantStatus     int
		wantCode, name string
	}{
		{at: 0, method: "GET", query: "comp=list", want: "List"},
		{at: 1, method: "GET", query: "restype=container", want: "Props"},
		{at: 1, method: "PUT", query: "restype=container&comp=lease", want: "Lease"},
		{at: 2, method: "GET", query: "", want: "Get"},
		// The same restype and comp exist with another method.
		{at: 1, method: "DELETE", query: "restype=container", wantStatus: 405, wantCode: CodeUnsupportedHTTPVerb},
		// comp is named before restype; a comp of another scope is unknown here.
		{at: 1, method: "GET", query: "restype=nosuch&comp=list", wantStatus: 400, wantCode: CodeInvalidQueryParameterValue, name: "comp"},
		{at: 1, method: "PUT", query: "restype=nosuch", wantStatus: 400, wantCode: CodeInvalidQueryParameterValue, name: "restype"},
		// Neither given and nothing at that scope takes the method.
		{at: 0, method: "GET", query: "", wantStatus: 405, wantCode: CodeUnsupportedHTTPVerb},
	} {
		q, _ := url.ParseQuery(tc.query)
		got, err := MatchRoute(routes, key, tc.at, tc.method, q)
		if tc.want != "" {
			if err != nil || got.name != tc.want {
				t.Errorf("%d %s ?%s: %v, %v; want %s", tc.at, tc.method, tc.query, got, err, tc.want)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.wantStatus || e.Code != tc.wantCode {
			t.Errorf("%d %s ?%s: %v; want %d %s", tc.at, tc.method, tc.query, err, tc.wantStatus, tc.wantCode)
			continue
		}
		if tc.name != "" && (len(e.Details) == 0 || e.Details[0].Value != tc.name) {
			t.Errorf("%d %s ?%s: details %v; want %s named", tc.at, tc.method, tc.query, e.Details, tc.name)
		}
	}
}
