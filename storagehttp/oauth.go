package storagehttp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OAuth checks "Authorization: Bearer <JWT>" as Azurite's `--oauth basic`
// does: the token's issuer, audience and lifetime (nbf, exp) are checked,
// its signature and permissions are not (there is no Entra ID to ask). A
// token that passes is the account owner, as SharedKey is. The request
// must come over TLS: Azure Storage accepts bearer tokens only over HTTPS.
type OAuth struct {
	// Account is the account the token's audience may name.
	Account string
	// Service is the service's host label in an audience of the form
	// https://ACCOUNT.SERVICE.core.windows.net: "blob", "queue", "file"
	// or "table".
	Service string
	// FileIntent says which requests need x-ms-file-request-intent:
	// backup (FileREST's file and directory operations: "Required if
	// Authorization header specifies an OAuth token"); nil: none. Azure
	// answers share- and service-level operations with a token and no
	// intent (the azfile live tests TestShareGetSetPropertiesOAuth and
	// TestShareCreateDeleteUsingOAuth), and the SDK sends none there.
	FileIntent func(r *http.Request) bool
}

var _ Authenticator = OAuth{}

// CodeInvalidAuthenticationInfo is Azure's answer to a bearer token it
// cannot accept (401, with a WWW-Authenticate challenge).
const CodeInvalidAuthenticationInfo = "InvalidAuthenticationInfo"

// ValidTokenIssuers are the issuer prefixes a token may carry: the Entra
// ID token services of Azure's clouds (Azurite's list).
var ValidTokenIssuers = []string{
	"https://sts.windows.net/",
	"https://sts.microsoftonline.de/",
	"https://sts.chinacloudapi.cn/",
	"https://sts.windows-ppe.net",
}

// storageAppID is Azure Storage's application id, an audience tokens may
// name instead of https://storage.azure.com.
const storageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// storageSuffixes are the endpoint suffixes of Azure's clouds.
var storageSuffixes = []string{".core.windows.net", ".core.chinacloudapi.cn", ".core.usgovcloudapi.net", ".core.cloudapi.de"}

// tokenClaims are the JWT claims the check reads. aud may be a string or
// an array (RFC 7519 §4.1.3).
type tokenClaims struct {
	Iss string          `json:"iss"`
	Aud json.RawMessage `json:"aud"`
	Nbf *float64        `json:"nbf"`
	Exp *float64        `json:"exp"`
	Tid string          `json:"tid"`
	Oid string          `json:"oid"`
}

// Authenticate implements Authenticator.
func (a OAuth) Authenticate(r *http.Request, now time.Time) (Verdict, Grant, error) {
	h := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return NotMine, Grant{}, nil
	}
	if r.TLS == nil {
		// Azurite's answer; Azure documents only that OAuth needs HTTPS.
		return Fail, Grant{}, AuthFailed("Authentication scheme Bearer is not allowed with HTTP.")
	}
	claims, err := parseToken(strings.TrimSpace(token))
	if err != nil {
		return Fail, Grant{}, tokenError("", "The access token is not a well-formed JWT.", err)
	}
	switch {
	case claims.Nbf == nil || claims.Exp == nil:
		return Fail, Grant{}, tokenError(claims.Tid, "Lifetime validation failed. The token has no nbf or exp claim.", nil)
	case now.Before(unixTime(*claims.Nbf)):
		return Fail, Grant{}, tokenError(claims.Tid, "Lifetime validation failed. The token is not yet valid.", nil)
	case now.After(unixTime(*claims.Exp)):
		return Fail, Grant{}, tokenError(claims.Tid, "Lifetime validation failed. The token is expired.", nil)
	}
	if !validIssuer(claims.Iss) {
		return Fail, Grant{}, tokenError(claims.Tid, "Issuer validation failed. Issuer did not match.",
			fmt.Errorf("issuer %q", claims.Iss))
	}
	auds, err := audiences(claims.Aud)
	if err != nil || !a.anyAudience(auds) {
		return Fail, Grant{}, tokenError(claims.Tid, "Audience validation failed. Audience did not match.",
			fmt.Errorf("audience %s", claims.Aud))
	}
	if a.FileIntent != nil && a.FileIntent(r) {
		switch v := r.Header.Get("x-ms-file-request-intent"); {
		case v == "":
			return Fail, Grant{}, MissingHeader("x-ms-file-request-intent")
		case v != "backup":
			return Fail, Grant{}, InvalidHeader("x-ms-file-request-intent", v)
		}
	}
	return Pass, Grant{Token: &TokenIdentity{Oid: claims.Oid, Tid: claims.Tid}}, nil
}

// tokenError is 401 InvalidAuthenticationInfo with the reason as
// AuthenticationErrorDetail and Azure's challenge naming the token's
// tenant (or "common") and the storage resource.
func tokenError(tenant, reason string, cause error) *Error {
	if tenant == "" {
		tenant = "common"
	}
	e := NewError(http.StatusUnauthorized, CodeInvalidAuthenticationInfo,
		"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
		Detail{Name: "AuthenticationErrorDetail", Value: reason})
	e.Challenge = "Bearer authorization_uri=https://login.microsoftonline.com/" + tenant +
		"/oauth2/authorize resource_id=https://storage.azure.com"
	e.Err = cause
	return e
}

// parseToken decodes a JWT's claims (header.payload.signature, base64url
// without padding); the signature is not checked.
func parseToken(token string) (tokenClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return tokenClaims{}, fmt.Errorf("%d parts, want 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return tokenClaims{}, fmt.Errorf("payload: %w", err)
	}
	var c tokenClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return tokenClaims{}, fmt.Errorf("payload: %w", err)
	}
	return c, nil
}

func unixTime(secs float64) time.Time {
	return time.Unix(0, 0).Add(time.Duration(secs * float64(time.Second)))
}

func validIssuer(iss string) bool {
	for _, p := range ValidTokenIssuers {
		if strings.HasPrefix(iss, p) {
			return true
		}
	}
	return false
}

func audiences(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("aud is neither a string nor an array of strings")
	}
	return many, nil
}

func (a OAuth) anyAudience(auds []string) bool {
	for _, aud := range auds {
		if a.validAudience(aud) {
			return true
		}
	}
	return false
}

// validAudience accepts https://storage.azure.com, Azure Storage's
// application id, and https://ACCOUNT.SERVICE.<cloud suffix> naming this
// account and service (each URL with or without a trailing slash).
func (a OAuth) validAudience(aud string) bool {
	if aud == storageAppID {
		return true
	}
	u := strings.TrimSuffix(aud, "/")
	if u == "https://storage.azure.com" {
		return true
	}
	host, ok := strings.CutPrefix(u, "https://")
	if !ok {
		return false
	}
	for _, suffix := range storageSuffixes {
		if acct, ok := strings.CutSuffix(host, "."+a.Service+suffix); ok {
			return acct == a.Account
		}
	}
	return false
}
