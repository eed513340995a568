package storagehttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
)

// Limits bounds what a request may send before anything reads it.
type Limits struct {
	// MaxHeaderCount and MaxHeaderBytes bound the header lines and their
	// total size (name + value + 4 per line); beyond → 400
	// RequestHeaderFieldsTooLarge.
	MaxHeaderCount, MaxHeaderBytes int
	// MaxBody returns the body cap of r: a larger Content-Length is 413
	// RequestBodyTooLarge up front, and the body is wrapped in
	// http.MaxBytesReader so a lying client cannot send more.
	MaxBody func(r *http.Request) int64
}

// Wrap returns next behind the limits.
func (l Limits) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, size := 0, 0
		for k, vs := range r.Header {
			for _, v := range vs {
				n++
				size += len(k) + len(v) + 4
			}
		}
		if n > l.MaxHeaderCount || size > l.MaxHeaderBytes {
			WriteError(w, r, NewError(http.StatusBadRequest, CodeRequestHeaderTooLarge,
				"The request headers are too many or too large."))
			return
		}
		limit := l.MaxBody(r)
		if r.ContentLength > limit {
			WriteError(w, r, NewError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge,
				msgBodyTooLarge, Detail{Name: "MaxLimit", Value: fmt.Sprint(limit)}))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// Recover turns a panic in next into 500 InternalError and logs it with
// its stack. http.ErrAbortHandler is passed on (net/http's way to abort a
// response silently).
func Recover(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error("panic serving request", "request_id", InfoFrom(r.Context()).ID, "method", r.Method,
				"url", r.URL.String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			WriteError(w, r, NewError(http.StatusInternalServerError, CodeInternalError, msgInternal))
		}()
		next.ServeHTTP(w, r)
	})
}

// Authenticate runs the chain: the first authenticator that claims the
// request decides (its Grant is stored in the request's Info); if none
// does, 401 NoAuthenticationInformation. An empty chain (authentication
// turned off) passes every request.
func Authenticate(chain []Authenticator, log *slog.Logger, next http.Handler) http.Handler {
	if len(chain) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := InfoFrom(r.Context())
		for _, a := range chain {
			v, g, err := a.Authenticate(r, info.Start)
			switch v {
			case NotMine:
				continue
			case Fail:
				log.Debug("authentication failed", "request_id", info.ID, "err", err)
				e := Classify(err, nil)
				if e.Challenge != "" {
					w.Header().Set("WWW-Authenticate", e.Challenge)
				}
				WriteError(w, r, e)
				return
			case Pass:
				info.Grant = g
				next.ServeHTTP(w, r)
				return
			}
		}
		WriteError(w, r, NewError(http.StatusUnauthorized, CodeNoAuthenticationInformation,
			"Server failed to authenticate the request. Please refer to the information in the www-authenticate header."))
	})
}

// CheckVersion accepts any syntactically valid x-ms-version (newer ones
// included); a malformed one is 400 InvalidHeaderValue, and a SharedKey
// request without one is 400 MissingRequiredHeader.
func CheckVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := requestVersion(r)
		switch {
		case v == "" && strings.HasPrefix(r.Header.Get("Authorization"), "SharedKey"):
			WriteError(w, r, MissingHeader(VersionHeader))
			return
		case v != "" && !ValidVersion(v):
			WriteError(w, r, InvalidHeader(VersionHeader, v))
			return
		}
		next.ServeHTTP(w, r)
	})
}
