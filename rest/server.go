package rest

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/fs"
)

// DevAccount and DevKey are the well-known development account and its
// public key (filerest.md §1).
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Config configures a Server.
type Config struct {
	// FS is the file service every operation goes through (required).
	FS *fs.FileSystem
	// Account and Key: the storage account served and its base64 key.
	// Empty means DevAccount / DevKey.
	Account, Key string
	// DisableAuth accepts every request without SharedKey or SAS.
	DisableAuth bool
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock (Date headers, SAS windows, error times); nil
	// means time.Now.
	Now func() time.Time
	// BodyBudget bounds the request-body bytes all Put Range and Create
	// File requests together may hold in memory; a request beyond it waits
	// (with its context) until earlier ones finish. 0 means 64 MiB; values
	// below one block's worst case (8 MiB) still let one request run.
	BodyBudget int64
	// BodyReadTimeout is the read deadline for a Put Range or Create File
	// body once it has its budget (it replaces the http.Server's read
	// deadline for that body): a client that has not sent the whole body
	// by then fails and its budget is freed. 0 means 2 minutes; negative
	// means none.
	BodyReadTimeout time.Duration
	// SpillDir holds the unlinked temporary files of request bodies that
	// arrive while the body budget is spent; "" means os.TempDir().
	SpillDir string
}

// Server is the FileREST endpoint. It is an http.Handler; listening is the
// caller's business (blobshare serve wraps it in an http.Server).
type Server struct {
	fs      *fs.FileSystem
	account string
	log     *slog.Logger
	now     func() time.Time
	auth    []authenticator // nil when auth is disabled
	handler http.Handler
	routes  []route
	svc     serviceState

	bodies      *budget       // request-body bytes in memory (body.go)
	bodyTimeout time.Duration // 0: none
	spillDir    string        // "" means os.TempDir()
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the middleware chain (see doc.go).
func New(cfg Config) (*Server, error) {
	if cfg.FS == nil {
		return nil, errors.New("rest: Config.FS is required")
	}
	s := &Server{fs: cfg.FS, account: cfg.Account, log: cfg.Logger, now: cfg.Now}
	if s.account == "" {
		s.account = DevAccount
	}
	if err := validAccount(s.account); err != nil {
		return nil, fmt.Errorf("rest: account %q: must be 3-24 lowercase letters and digits", s.account)
	}
	key := cfg.Key
	if key == "" {
		key = DevKey
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("rest: account key for %q is not valid base64: %w", s.account, err)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if !cfg.DisableAuth {
		sg := signer{account: s.account, key: raw}
		s.auth = []authenticator{sharedKeyAuth{sg}, sasAuth{sg}}
	}
	if cfg.BodyBudget < 0 {
		return nil, fmt.Errorf("rest: BodyBudget %d: must not be negative", cfg.BodyBudget)
	}
	s.bodies = newBudget(cmp.Or(cfg.BodyBudget, defaultBodyBudget))
	switch {
	case cfg.BodyReadTimeout == 0:
		s.bodyTimeout = defaultBodyReadTimeout
	case cfg.BodyReadTimeout > 0:
		s.bodyTimeout = cfg.BodyReadTimeout
	}
	s.spillDir = cfg.SpillDir
	s.svc.props = defaultServiceProps()
	s.routes = s.routeTable()
	// The chain, outermost first (doc.go explains the order).
	s.handler = s.withRequestID(s.withLimits(s.withRecover(s.withAuth(s.withVersion(http.HandlerFunc(s.dispatch))))))
	return s, nil
}

// ServeHTTP serves one FileREST request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// reqInfo is what the middleware learns about a request.
type reqInfo struct {
	id    string
	start time.Time
	auth  authResult
}

type infoKey struct{}

func infoFrom(ctx context.Context) *reqInfo {
	if i, ok := ctx.Value(infoKey{}).(*reqInfo); ok {
		return i
	}
	return &reqInfo{id: "00000000-0000-0000-0000-000000000000", start: time.Now()}
}

// withRequestID gives the request its id and start time and sets the
// headers every response carries: x-ms-request-id, x-ms-version (the
// request's), Date, and the echoed x-ms-client-request-id.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &reqInfo{id: uuid.NewString(), start: s.now()}
		h := w.Header()
		h.Set("x-ms-request-id", info.id)
		h.Set("Date", info.start.UTC().Format(http.TimeFormat))
		if v := r.Header.Get(versionHeader); v != "" && validVersion(v) {
			h.Set(versionHeader, v)
		}
		if v := r.Header.Get(clientRequestIDHdr); v != "" && len(v) <= 1024 {
			h.Set(clientRequestIDHdr, v)
		}
		h.Set("Server", "blobshare")
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
	})
}

// withLimits refuses oversized header sets and bodies before anything
// reads them: more than maxHeaderCount header lines or maxHeaderBytes of
// header text → 431/400, a Put Range update or Create File body over 4 MiB
// → 413 RequestBodyTooLarge, and every body is capped at 4 MiB (small
// bodies of other operations much lower) so a lying client cannot stream
// more.
func (s *Server) withLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, size := 0, 0
		for k, vs := range r.Header {
			for _, v := range vs {
				n++
				size += len(k) + len(v) + 4
			}
		}
		if n > maxHeaderCount || size > maxHeaderBytes {
			writeError(w, r, newError(http.StatusBadRequest, CodeRequestHeaderTooLarge,
				"The request headers are too many or too large."))
			return
		}
		limit := int64(maxSmallBody)
		if r.Method == http.MethodPut {
			limit = maxPutRange
		}
		if r.ContentLength > limit {
			writeError(w, r, newError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge,
				"The request body is too large and exceeds the maximum permissible limit.",
				Detail{"MaxLimit", fmt.Sprint(limit)}))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// withRecover turns a panic in anything below into 500 InternalError and
// logs it with the stack. http.ErrAbortHandler is passed on.
func (s *Server) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("rest: panic", "request_id", infoFrom(r.Context()).id, "method", r.Method,
				"url", r.URL.String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			writeError(w, r, newError(http.StatusInternalServerError, CodeInternalError,
				"Server encountered an internal error. Please try again after some time."))
		}()
		next.ServeHTTP(w, r)
	})
}

// withAuth runs the authenticator chain: the first that claims the
// request decides; if none does, 401 NoAuthenticationInformation.
func (s *Server) withAuth(next http.Handler) http.Handler {
	if s.auth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		for _, a := range s.auth {
			v, res, err := a.authenticate(r, info.start)
			switch v {
			case notMine:
				continue
			case fail:
				s.log.Debug("rest: authentication failed", "request_id", info.id, "err", err)
				writeError(w, r, toError(err))
				return
			case pass:
				info.auth = res
				next.ServeHTTP(w, r)
				return
			}
		}
		writeError(w, r, newError(http.StatusUnauthorized, CodeNoAuthenticationInformation,
			"Server failed to authenticate the request. Please refer to the information in the www-authenticate header."))
	})
}

// withVersion accepts any syntactically valid x-ms-version (newer ones
// included); a malformed one is 400 InvalidHeaderValue. SharedKey
// requests must send one.
func (s *Server) withVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(versionHeader)
		switch {
		case v == "" && strings.HasPrefix(r.Header.Get("Authorization"), "SharedKey "):
			writeError(w, r, errMissingHeader(versionHeader))
			return
		case v != "" && !validVersion(v):
			writeError(w, r, errInvalidHeader(versionHeader, v))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fail renders err (any error) and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if e.Code == CodeShareSizeLimitReached {
		s.log.Warn("rest: storage full", "request_id", infoFrom(r.Context()).id, "method", r.Method,
			"path", r.URL.Path, "err", err)
	}
	if e.Status >= 500 {
		s.log.Error("rest: request failed", "request_id", infoFrom(r.Context()).id, "method", r.Method,
			"path", r.URL.Path, "err", err)
	}
	writeError(w, r, e)
}
