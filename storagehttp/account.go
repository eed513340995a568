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

// Chain wraps a service's dispatcher in the middleware every service runs,
// outermost first: request ids and the Date header (now), limits, panic
// recovery, authentication (nil chain: every request passes) and the
// x-ms-version check.
func Chain(now func() time.Time, limits Limits, log *slog.Logger, auth []Authenticator, dispatch http.Handler) http.Handler {
	if now == nil {
		now = time.Now
	}
	return RequestID(now, limits.Wrap(Recover(log, Authenticate(auth, log, CheckVersion(dispatch)))))
}
