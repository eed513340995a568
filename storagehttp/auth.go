package storagehttp

import (
	"net/http"
	"strings"
	"time"
)

// Verdict is an authenticator's answer.
type Verdict int

const (
	NotMine Verdict = iota // the request does not use this scheme
	Pass                   // authenticated
	Fail                   // this scheme, but refused (the error says why)
)

// Grant is what a passing authenticator allows: a nil SAS means the
// account owner (SharedKey), otherwise a SAS whose permission letters and
// resource the service checks once it knows the operation.
type Grant struct {
	SAS *SASGrant
	// Token is who a bearer token names (OAuth); nil for other schemes.
	Token *TokenIdentity
}

// Authenticator is one link of the chain (Azurite's IAuthenticator). now
// is the request's start time.
type Authenticator interface {
	Authenticate(r *http.Request, now time.Time) (Verdict, Grant, error)
}

// SASGrant is what a valid SAS allows.
type SASGrant struct {
	// Account is true for an account SAS (ss/srt), false for a service SAS.
	Account bool
	// Permissions are the signed permission letters (sp).
	Permissions string
	// ResourceTypes are an account SAS's srt letters: s service,
	// c container (share, queue, directory), o object (file, blob, message).
	ResourceTypes string
	// Resource is a service SAS's signed resource (sr: "s", "f", "c", "b"),
	// or the service's own name for it when the service has no sr (queue).
	Resource string
}

// Allows reports whether the grant permits permission letter perm on a
// resource of account-SAS type rt ('s', 'c' or 'o'). A service SAS has no
// resource types: its scope is the service's to check.
func (g *SASGrant) Allows(perm, rt byte) bool {
	if !strings.ContainsRune(g.Permissions, rune(perm)) {
		return false
	}
	return !g.Account || strings.ContainsRune(g.ResourceTypes, rune(rt))
}

// CheckScope checks an account SAS's resource type and the permission
// letter against an operation: 403 AuthorizationResourceTypeMismatch or
// 403 AuthorizationPermissionMismatch.
func (g *SASGrant) CheckScope(perm, rt byte) error {
	if g.Account && !strings.ContainsRune(g.ResourceTypes, rune(rt)) {
		return NewError(http.StatusForbidden, CodeAuthorizationResourceType,
			"This request is not authorized to perform this operation using this resource type.")
	}
	if !g.Allows(perm, rt) {
		return NewError(http.StatusForbidden, CodeAuthorizationPermissionMismatch,
			"This request is not authorized to perform this operation using this permission.")
	}
	return nil
}
