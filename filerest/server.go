package filerest

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/storagehttp"
)

// DevAccount and DevKey are the well-known development account and its
// public key (filerest.md §1), as every service has them.
const (
	DevAccount = storagehttp.DevAccount
	DevKey     = storagehttp.DevKey
)

// Config configures a Server.
type Config struct {
	// FS is the file service every operation goes through (required).
	FS *fs.FileSystem
	// Caching is FS's lock table: with it, operations break SMB clients'
	// oplocks and leases as Azure Files does (cache.go); nil breaks none.
	Caching *locks.Table
	// CacheWait, when positive, bounds a wait for a blocking break below
	// the request's timeout (tests; 0 means the timeout alone, ≤ 30 s).
	CacheWait time.Duration
	// Account and Key: the storage account served and its base64 key.
	// Empty means DevAccount / DevKey.
	Account, Key string
	// DisableAuth accepts every request without SharedKey or SAS.
	DisableAuth bool
	// OAuth accepts bearer tokens over TLS as Azurite's --oauth basic
	// does (storagehttp.OAuth: issuer, audience and lifetime checked, the
	// signature not), before SharedKey and SAS.
	OAuth bool
	// Blobs is the Blob service Put Range From URL reads a blob source
	// from (blobsource.go); nil: a blob source is refused as a source
	// outside the account's files.
	Blobs BlobSource
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
	// ShareDeleteRetention > 0 soft-deletes shares: Delete Share keeps a
	// share that long for Restore Share and List Shares include=deleted
	// (Azure's share soft delete, set on the account). 0 deletes at once.
	ShareDeleteRetention time.Duration
}

// Server is the FileREST endpoint. It is an http.Handler; listening is the
// caller's business (blobshare serve wraps it in an http.Server).
type Server struct {
	fs      *fs.FileSystem
	account string
	log     *slog.Logger
	now     func() time.Time
	handler http.Handler
	routes  []route
	// sas verifies the SAS of a copy source (Put Range From URL); nil
	// when authentication is off.
	sas *storagehttp.SAS
	// signer derives user delegation keys (Get User Delegation Key).
	signer storagehttp.Signer
	blobs  BlobSource // Put Range From URL's blob sources; nil: none

	bodies      *budget       // request-body bytes in memory (body.go)
	bodyTimeout time.Duration // 0: none
	spillDir    string        // "" means os.TempDir()
	retain      time.Duration // share soft delete; 0: off
	deleted     deletedShares // shares being deleted (sharedelete.go)

	caching      *locks.Table  // nil: no SMB caching is broken (cache.go)
	cacheWaitMax time.Duration // Config.CacheWait
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds the middleware chain (see doc.go).
func New(cfg Config) (*Server, error) {
	if cfg.FS == nil {
		return nil, errors.New("rest: Config.FS is required")
	}
	s := &Server{fs: cfg.FS, account: cfg.Account, log: cfg.Logger, now: cfg.Now, blobs: cfg.Blobs, caching: cfg.Caching, cacheWaitMax: cfg.CacheWait}
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
	if cfg.ShareDeleteRetention < 0 {
		return nil, fmt.Errorf("rest: ShareDeleteRetention %v: must not be negative", cfg.ShareDeleteRetention)
	}
	s.retain = cfg.ShareDeleteRetention
	s.routes = s.routeTable()
	// The chain, outermost first (doc.go explains the order).
	var chain []storagehttp.Authenticator
	if !cfg.DisableAuth {
		sg := storagehttp.Signer{Account: s.account, Key: raw}
		s.signer = sg
		chain = s.authenticators(sg)
		if cfg.OAuth {
			chain = append([]storagehttp.Authenticator{storagehttp.OAuth{Account: s.account, Service: "file", FileIntent: needsIntent}}, chain...)
		}
		sas := s.fileSAS(sg)
		if cfg.OAuth {
			// A copy source's bearer token (x-ms-copy-source-authorization);
			// the intent is the destination request's.
			sas.SourceToken = storagehttp.OAuth{Account: s.account, Service: "file"}
		}
		s.sas = &sas
	}
	s.handler = storagehttp.Endpoint{Service: "file", Now: s.now, Log: s.log, Auth: chain,
		Limits: storagehttp.Limits{MaxHeaderCount: maxHeaderCount, MaxHeaderBytes: maxHeaderBytes, MaxBody: maxBody},
	}.Handler(http.HandlerFunc(s.dispatch))
	return s, nil
}

// ServeHTTP serves one FileREST request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// maxBody caps request bodies: 4 MiB for PUT (Put Range update, Create
// File), small XML bodies otherwise.
func maxBody(r *http.Request) int64 {
	if r.Method == http.MethodPut {
		if storagehttp.HasStructuredBody(r) {
			return maxPutRange + storagehttp.MaxStructuredOverhead // the data's cap plus the framing's most
		}
		return maxPutRange
	}
	return maxSmallBody
}

// fail renders err (any error) and logs server-side failures.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if e.Code == CodeShareSizeLimitReached {
		s.log.Warn("rest: storage full", "request_id", storagehttp.InfoFrom(r.Context()).ID, "method", r.Method,
			"path", r.URL.Path, "err", err)
	}
	if e.Status >= 500 {
		s.log.Error("rest: request failed", "request_id", storagehttp.InfoFrom(r.Context()).ID, "method", r.Method,
			"path", r.URL.Path, "err", err)
	}
	storagehttp.WriteError(w, r, e)
}
