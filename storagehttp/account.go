package storagehttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// The development storage account every Azure emulator accepts, and its
// well-known public key.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// ValidAccountName reports whether a is a storage account name: 3–24
// lowercase letters and digits.
func ValidAccountName(a string) bool {
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

// AccountSigner is the Signer of a service's account: the development
// account and key stand in for empty ones; a bad name or a key that is
// not base64 is an error naming the account.
func AccountSigner(account, key string) (Signer, error) {
	if account == "" {
		account = DevAccount
	}
	if key == "" {
		key = DevKey
	}
	if !ValidAccountName(account) {
		return Signer{}, fmt.Errorf("account %q: must be 3-24 lowercase letters and digits", account)
	}
	sg, err := NewSigner(account, key)
	if err != nil {
		return Signer{}, fmt.Errorf("account key for %q is not valid base64: %w", account, err)
	}
	return sg, nil
}

// Endpoint is what every service's HTTP surface is built from: the
// middleware every service runs around its dispatcher, and the one way a
// service answers an error. The zero values mean time.Now, no limits,
// slog.Default(), no authentication and XML errors.
type Endpoint struct {
	// Service names the service in logs ("blob", "file", "queue",
	// "table").
	Service string
	Now     func() time.Time
	Limits  Limits
	Log     *slog.Logger
	// Auth is the authenticator chain (nil: every request passes).
	Auth []Authenticator
	// Errors chooses the error format per request (ErrorFormat); nil
	// answers XML errors.
	Errors func(*http.Request) ErrorRenderer
}

// Handler wraps dispatch in the middleware, outermost first: request ids
// and the Date header, the error format, limits, panic recovery,
// authentication and the x-ms-version check.
func (e Endpoint) Handler(dispatch http.Handler) http.Handler {
	now := e.Now
	if now == nil {
		now = time.Now
	}
	var h http.Handler = e.Limits.Wrap(Recover(e.logger(), Authenticate(e.Auth, e.logger(), CheckVersion(dispatch))))
	if e.Errors != nil {
		h = ErrorFormat(e.Errors, h)
	}
	return RequestID(now, h)
}

func (e Endpoint) logger() *slog.Logger {
	if e.Log == nil {
		return slog.Default()
	}
	return e.Log
}

// Fail answers e for err, the error it was made from, and logs err when
// the answer is a server-side failure (5xx): the client sees the code,
// the log keeps the cause.
func (e Endpoint) Fail(w http.ResponseWriter, r *http.Request, se *Error, err error) {
	if se.Status >= 500 {
		e.logger().Error(e.Service+": request failed", "request_id", InfoFrom(r.Context()).ID,
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	WriteError(w, r, se)
}

// WithOAuth puts bearer tokens for the account's service first in chain,
// as Azurite's --oauth basic accepts them (OAuth).
func WithOAuth(account, service string, chain []Authenticator) []Authenticator {
	return append([]Authenticator{OAuth{Account: account, Service: service}}, chain...)
}
