package blob

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// Well-known development account and key (Azurite's, the same as
// FileREST's and the Queue service's).
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Limits of the HTTP surface.
const (
	maxHeaderCount = 256
	maxHeaderBytes = 64 << 10
	// maxContentBody bounds Put Blob and Put Block bodies (Azure's 5000
	// MiB single-shot Put Blob); they are streamed, never buffered.
	maxContentBody = 5000 << 20
	maxSmallBody   = 64 << 10 // service properties and other documents
)

// Config configures a Server.
type Config struct {
	// Service is the blob semantics every operation goes through
	// (required).
	Service *blobsvc.Service
	// Account and Key: the storage account served and its base64 key;
	// empty means DevAccount / DevKey.
	Account, Key string
	// DisableAuth accepts every request without SharedKey or SAS.
	DisableAuth bool
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the HTTP layer (Date headers, SAS windows);
	// nil means time.Now. Lease and Last-Modified times are the
	// Service's.
	Now func() time.Time
}

// Server is the Blob service endpoint, an http.Handler.
type Server struct {
	svc     *blobsvc.Service
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
		return nil, errors.New("blob: Config.Service is required")
	}
	s := &Server{svc: cfg.Service, account: cfg.Account, log: cfg.Logger}
	if s.account == "" {
		s.account = DevAccount
	}
	if !validAccount(s.account) {
		return nil, fmt.Errorf("blob: account %q: must be 3-24 lowercase letters and digits", s.account)
	}
	key := cfg.Key
	if key == "" {
		key = DevKey
	}
	sg, err := storagehttp.NewSigner(s.account, key)
	if err != nil {
		return nil, fmt.Errorf("blob: account key for %q is not valid base64: %w", s.account, err)
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
		chain = s.authenticators(sg)
	}
	s.routes = s.routeTable()
	limits := storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody}
	s.handler = storagehttp.RequestID(now, limits.Wrap(storagehttp.Recover(s.log,
		storagehttp.Authenticate(chain, s.log, storagehttp.CheckVersion(http.HandlerFunc(s.dispatch))))))
	return s, nil
}

// ServeHTTP serves one Blob service request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// maxBody caps request bodies: content for PUT, small documents else.
func maxBody(r *http.Request) int64 {
	if r.Method == http.MethodPut {
		return maxContentBody
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
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, forContainer bool) {
	e := toError(err, forContainer)
	if e.Status >= 500 {
		s.log.Error("blob: request failed", "request_id", storagehttp.InfoFrom(r.Context()).ID,
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	storagehttp.WriteError(w, r, e)
}
