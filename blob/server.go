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
	DevAccount = storagehttp.DevAccount
	DevKey     = storagehttp.DevKey
)

// Limits of the HTTP surface.
const (
	maxHeaderCount = 256
	maxHeaderBytes = 64 << 10
	// maxContentBody bounds Put Blob and Put Block bodies (Azure's 5000
	// MiB single-shot Put Blob); they are streamed, never buffered.
	maxContentBody = 5000 << 20
	maxSmallBody   = 64 << 10 // service properties and other documents
	maxBatchBody   = 4 << 20  // Blob Batch: 256 sub-requests, headers only
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
	// OAuth accepts bearer tokens over TLS as Azurite's --oauth basic
	// does (storagehttp.OAuth: issuer, audience and lifetime checked, the
	// signature not), before SharedKey and SAS.
	OAuth bool
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
	// sas verifies the SAS on a From-URL operation's source; nil when
	// authentication is off.
	sas *storagehttp.SAS
	// signer derives user delegation keys (Get User Delegation Key).
	signer storagehttp.Signer
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the storagehttp middleware chain around
// the dispatcher (order in storagehttp's doc).
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, errors.New("blob: Config.Service is required")
	}
	sg, err := storagehttp.AccountSigner(cfg.Account, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	s := &Server{svc: cfg.Service, account: sg.Account, log: cfg.Logger, signer: sg}
	if s.log == nil {
		s.log = slog.Default()
	}
	var chain []storagehttp.Authenticator
	if !cfg.DisableAuth {
		sas := s.blobSAS(sg)
		if cfg.OAuth {
			// A From-URL source's bearer token (x-ms-copy-source-authorization).
			sas.SourceToken = storagehttp.OAuth{Account: s.account, Service: "blob"}
		}
		s.sas = &sas
		chain = s.authenticators(sg, sas)
		if cfg.OAuth {
			// A request carrying both a SAS and a bearer token is the
			// SAS's (a user delegation SAS with sduoid needs the token as
			// well, and checks it itself); a token alone is OAuth's.
			chain = append([]storagehttp.Authenticator{storagehttp.SASWithBearer{SAS: sas},
				storagehttp.OAuth{Account: s.account, Service: "blob"}}, chain...)
		}
	}
	s.routes = s.routeTable()
	limits := storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody}
	s.handler = storagehttp.Endpoint{Service: "blob", Now: cfg.Now, Limits: limits, Log: s.log, Auth: chain}.Handler(http.HandlerFunc(s.dispatch))
	return s, nil
}

// ServeHTTP serves one Blob service request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// maxBody caps request bodies: content for PUT, small documents else.
func maxBody(r *http.Request) int64 {
	if r.Method == http.MethodPut {
		if storagehttp.HasStructuredBody(r) { // the content's cap plus the framing's most
			return maxContentBody + storagehttp.MaxStructuredOverhead
		}
		return maxContentBody
	}
	if r.Method == http.MethodPost && r.URL.Query().Get("comp") == "batch" {
		return maxBatchBody
	}
	return maxSmallBody
}

// fail renders err and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, forContainer bool) {
	w.Header().Del(hdrKeySHA256) // answered on success only (prepareCPK)
	e := toError(err, forContainer)
	if e.Status >= 500 {
		s.log.Error("blob: request failed", "request_id", storagehttp.InfoFrom(r.Context()).ID,
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	storagehttp.WriteError(w, r, e)
}
