package table

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// Well-known development account and key, the same as the other services'.
const (
	DevAccount = storagehttp.DevAccount
	DevKey     = storagehttp.DevKey
)

// Limits of the HTTP surface.
const (
	maxHeaderCount = 256
	maxHeaderBytes = 64 << 10
	// MaxBody is the largest request body: "Total payload ≤ 4 MiB" for a
	// batch, and an entity is at most 1 MiB of data (EGT, DM).
	MaxBody      = 4 << 20
	maxSmallBody = 64 << 10 // ACL and service-properties documents
)

// Config configures a Server.
type Config struct {
	// Service is the table semantics every operation goes through
	// (required).
	Service *tablesvc.Service
	// Account and Key: the storage account served and its base64 key;
	// empty means DevAccount / DevKey.
	Account, Key string
	// DisableAuth accepts every request without SharedKey or SAS.
	DisableAuth bool
	// OAuth accepts bearer tokens over TLS as Azurite's --oauth basic
	// does (storagehttp.OAuth), before SharedKey and SAS.
	OAuth bool
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the HTTP layer (Date headers, SAS windows);
	// nil means time.Now. Entity Timestamps are the Service's clock.
	Now func() time.Time
}

// Server is the Table service endpoint, an http.Handler.
type Server struct {
	svc      *tablesvc.Service
	account  string
	endpoint storagehttp.Endpoint
	handler  http.Handler
	routes   []route
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the storagehttp endpoint around the
// dispatcher, with OData JSON errors but for the XML operations.
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil {
		return nil, errors.New("table: Config.Service is required")
	}
	sg, err := storagehttp.AccountSigner(cfg.Account, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	s := &Server{svc: cfg.Service, account: sg.Account}
	var chain []storagehttp.Authenticator
	if !cfg.DisableAuth {
		chain = s.authenticators(sg)
		if cfg.OAuth {
			chain = storagehttp.WithOAuth(s.account, "table", chain)
		}
	}
	s.routes = s.routeTable()
	s.endpoint = storagehttp.Endpoint{Service: "table", Now: cfg.Now, Log: cfg.Logger, Auth: chain, Errors: errorRenderer,
		Limits: storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody}}
	s.handler = s.endpoint.Handler(http.HandlerFunc(s.dispatch))
	return s, nil
}

// ServeHTTP serves one Table service request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// maxBody caps request bodies: the XML documents are small, OData bodies
// (a batch of up to 100 entities) at most 4 MiB.
func maxBody(r *http.Request) int64 {
	if isXMLOperation(r) {
		return maxSmallBody
	}
	return MaxBody
}

// isXMLOperation: Get/Set Table ACL and the service properties and stats
// are not OData; their bodies and errors are XML.
func isXMLOperation(r *http.Request) bool {
	q := r.URL.Query()
	return q.Get("comp") == "acl" || q.Get("restype") == "service"
}

// errorRenderer chooses OData JSON errors except for the XML operations.
func errorRenderer(r *http.Request) storagehttp.ErrorRenderer {
	if isXMLOperation(r) {
		return nil
	}
	return storagehttp.WriteODataError
}

// fail renders err and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.endpoint.Fail(w, r, toError(err), err)
}
