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
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
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
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the HTTP layer (Date headers, SAS windows);
	// nil means time.Now. The message clock is the Service's.
	Now func() time.Time
}

// Server is the Queue service endpoint, an http.Handler.
type Server struct {
	svc     *msgqueue.Service
	account string
	log     *slog.Logger
	handler http.Handler
	routes  []route
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the storagehttp middleware chain around
// the dispatcher (order in storagehttp's doc).
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, errors.New("queue: Config.Service is required")
	}
	s := &Server{svc: cfg.Service, account: cfg.Account, log: cfg.Logger}
	if s.account == "" {
		s.account = DevAccount
	}
	if !validAccount(s.account) {
		return nil, fmt.Errorf("queue: account %q: must be 3-24 lowercase letters and digits", s.account)
	}
	key := cfg.Key
	if key == "" {
		key = DevKey
	}
	sg, err := storagehttp.NewSigner(s.account, key)
	if err != nil {
		return nil, fmt.Errorf("queue: account key for %q is not valid base64: %w", s.account, err)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	var chain []storagehttp.Authenticator
	if !cfg.DisableAuth {
		chain = authenticators(sg)
	}
	s.routes = s.routeTable()
	limits := storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody}
	s.handler = storagehttp.RequestID(now, limits.Wrap(storagehttp.Recover(s.log,
		storagehttp.Authenticate(chain, s.log, storagehttp.CheckVersion(http.HandlerFunc(s.dispatch))))))
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

func validAccount(a string) bool {
	if len(a) < 3 || len(a) > 24 {
		return false
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// fail renders err and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if e.Status >= 500 {
		s.log.Error("queue: request failed", "request_id", storagehttp.InfoFrom(r.Context()).ID,
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	storagehttp.WriteError(w, r, e)
}
