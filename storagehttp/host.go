package storagehttp

import (
	"context"
	"net"
	"net/http"
	"strings"
)

// AccountFromHost returns the account a production-style host names.
// Azure addresses an account by its host, https://<account>.<service>.core.windows.net,
// and the URL path then starts at the container, share, queue or table;
// Azurite accepts the same form under any domain
// (http://<account>.blob.localhost:10000). A host is production-style when
// its second label is the service's name ("blob", "queue", "file",
// "table") and it has at least three labels; the port, if any, does not
// count. Any other host (an IP address, localhost, a one-label name) is
// path-style: the first path segment names the account, as on Azurite's
// default endpoints.
func AccountFromHost(host, service string) (account string, ok bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	labels := strings.SplitN(host, ".", 3)
	if len(labels) < 3 || labels[0] == "" || labels[2] == "" || !strings.EqualFold(labels[1], service) {
		return "", false
	}
	return strings.ToLower(labels[0]), true
}

// pathStyleOnlyKey marks a request PathStyleOnly served.
type pathStyleOnlyKey struct{}

// PathStyleOnly serves h with every request's account read from its path
// whatever its host (Azurite's --disableProductStyleUrl: "Force parsing
// storage account name from request URI path, instead of from request
// host"): RequestHost is then "" for them.
func PathStyleOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pathStyleOnlyKey{}, true)))
	})
}

func pathStyleOnly(r *http.Request) bool { return r.Context().Value(pathStyleOnlyKey{}) != nil }

// RequestHost is the host a request addressed, for AccountFromHost and
// PathStyle: its Host header, or the host of its URL for a request built
// from a URL (a copy source); "" under PathStyleOnly.
func RequestHost(r *http.Request) string {
	if pathStyleOnly(r) {
		return ""
	}
	if r.Host != "" {
		return r.Host
	}
	return r.URL.Host
}

// PathStyle returns an escaped URL path in path-style form,
// "/<account>/…": the path as it is when host is path-style, with
// "/<account>" put in front when host names the account
// (AccountFromHost). The services parse only path-style paths. The
// SharedKey canonicalized resource is "/<account>" followed by the path
// as sent either way (CanonicalizedResource), so signatures are checked
// against the request's own path, never this one.
func PathStyle(host, service, escaped string) string {
	account, ok := AccountFromHost(host, service)
	if !ok || !strings.HasPrefix(escaped, "/") && escaped != "" {
		return escaped
	}
	if escaped == "" {
		escaped = "/"
	}
	return "/" + account + escaped
}

// ServiceEndpoint is the account's URL as the client addressed it, for
// the ServiceEndpoint attribute of listings:
// "<scheme>://<host>/" on a production-style host,
// "<scheme>://<host>/<account>/" on a path-style one.
func ServiceEndpoint(r *http.Request, service, account string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if _, ok := AccountFromHost(RequestHost(r), service); ok {
		return scheme + "://" + r.Host + "/"
	}
	return scheme + "://" + r.Host + "/" + account + "/"
}
