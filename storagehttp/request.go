package storagehttp

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// Header names every service reads or echoes.
const (
	VersionHeader         = "x-ms-version"
	ClientRequestIDHeader = "x-ms-client-request-id"
	RequestIDHeader       = "x-ms-request-id"
	ErrorCodeHeader       = "x-ms-error-code"
)

// maxClientRequestID bounds the echoed x-ms-client-request-id.
const maxClientRequestID = 1024

// Info is what the middleware learns about a request: its id, its start
// time (the clock every later decision of the request uses: error times,
// SAS windows, Date) and what authentication granted.
type Info struct {
	ID    string
	Start time.Time
	Grant Grant
	// render is the service's error renderer for this request (set by
	// ErrorFormat); nil renders XML.
	render ErrorRenderer
}

type infoKey struct{}

// nilRequestID identifies a request that did not pass through RequestID
// (handler unit tests).
const nilRequestID = "00000000-0000-0000-0000-000000000000"

// InfoFrom returns the request's Info. Outside RequestID it is a fresh one
// with the zero id and the current time.
func InfoFrom(ctx context.Context) *Info {
	if i, ok := ctx.Value(infoKey{}).(*Info); ok {
		return i
	}
	return &Info{ID: nilRequestID, Start: time.Now()}
}

// RequestID gives each request its id and start time (from now) and sets
// the headers every response carries: x-ms-request-id, Date, the request's
// x-ms-version (if valid) and x-ms-client-request-id (if ≤ 1 KiB) echoed,
// and Server.
func RequestID(now func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &Info{ID: uuid.NewString(), Start: now()}
		h := w.Header()
		h.Set(RequestIDHeader, info.ID)
		h.Set("Date", info.Start.UTC().Format(http.TimeFormat))
		if v := requestVersion(r); v != "" && ValidVersion(v) {
			h.Set(VersionHeader, v)
		}
		if v := r.Header.Get(ClientRequestIDHeader); v != "" && len(v) <= maxClientRequestID {
			h.Set(ClientRequestIDHeader, v)
		}
		h.Set("Server", "blobshare")
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
	})
}
