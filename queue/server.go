package queue

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// Well-known development account and key, the same as FileREST's.
const (
	DevAccount = storagehttp.DevAccount
	DevKey     = storagehttp.DevKey
)

// Limits of the HTTP surface.
const (
	maxHeaderCount = 256
	maxHeaderBytes = 64 << 10
	// maxMessageBody bounds a Put/Update Message body: 64 KiB of text,
	// XML-escaped (up to 6 bytes per character), plus the envelope.
	maxMessageBody = 6*msgqueue.MaxMessageBytes + 1<<10
	maxSmallBody   = 64 << 10 // ACL and service-properties documents
)

// Config configures a Server.
type Config struct {
	// Service is the queue semantics every operation goes through
	// (required).
	Service *msgqueue.Service
	// Account and Key: the storage account served and its base64 key;
	// empty means DevAccount / DevKey.
	Account, Key string
	// DisableAuth accepts every request without SharedKey or SAS.
	DisableAuth bool
	// OAuth accepts bearer tokens over TLS as Azurite's --oauth basic
	// does (storagehttp.OAuth: issuer, audience and lifetime checked, the
	// signature not), before SharedKey and SAS.
	OAuth bool
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the HTTP layer (Date headers, SAS windows);
	// nil means time.Now. The message clock is the Service's.
	Now func() time.Time
}

// Server is the Queue service endpoint, an http.Handler.
type Server struct {
	svc      *msgqueue.Service
	account  string
	endpoint storagehttp.Endpoint
	handler  http.Handler
	routes   []route
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the storagehttp middleware chain around
// the dispatcher (order in storagehttp's doc).
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, errors.New("queue: Config.Service is required")
	}
	sg, err := storagehttp.AccountSigner(cfg.Account, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	s := &Server{svc: cfg.Service, account: sg.Account}
	var chain []storagehttp.Authenticator
	if !cfg.DisableAuth {
		chain = s.authenticators(sg)
		if cfg.OAuth {
			chain = storagehttp.WithOAuth(s.account, "queue", chain)
		}
	}
	s.routes = s.routeTable()
	s.endpoint = storagehttp.Endpoint{Service: "queue", Now: cfg.Now, Log: cfg.Logger, Auth: chain,
		Limits: storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody}}
	s.handler = s.endpoint.Handler(http.HandlerFunc(s.dispatch))
	return s, nil
}

// ServeHTTP serves one Queue service request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// maxBody caps request bodies: messages may be XML-escaped 64 KiB texts.
func maxBody(r *http.Request) int64 {
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		return maxMessageBody
	}
	return maxSmallBody
}

// fail renders err and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.endpoint.Fail(w, r, toError(err), err)
}
