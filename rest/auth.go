package rest

import (
	"bytes"
	"crypto/hmac"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// verdict is an authenticator's answer.
type verdict int

const (
	notMine verdict = iota // the request does not use this scheme
	pass                   // authenticated
	fail                   // this scheme, but refused (err says why)
)

// authResult is what a passing authenticator grants: nil perms means the
// account owner (SharedKey), otherwise a SAS whose permission letters and
// resource scope the dispatcher checks against the operation.
type authResult struct {
	sas *sasGrant
}

// authenticator is one link of the chain (Azurite's IAuthenticator).
type authenticator interface {
	authenticate(r *http.Request, now time.Time) (verdict, authResult, error)
}

// sharedKeyAuth checks "Authorization: SharedKey account:signature".
type sharedKeyAuth struct{ s signer }

func (a sharedKeyAuth) authenticate(r *http.Request, _ time.Time) (verdict, authResult, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return notMine, authResult{}, nil
	}
	scheme, cred, _ := strings.Cut(h, " ")
	switch scheme {
	case "SharedKey":
	case "SharedKeyLite", "Bearer":
		return fail, authResult{}, errAuthFailed("The authorization scheme " + scheme + " is not supported.")
	default:
		return fail, authResult{}, errAuthFailed("The Authorization header is malformed.")
	}
	acct, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || acct != a.s.account {
		return fail, authResult{}, errAuthFailed("The account in the Authorization header is not this account.")
	}
	if r.Header.Get("x-ms-date") == "" && r.Header.Get("Date") == "" {
		return fail, authResult{}, errAuthFailed("Request date header not specified.")
	}
	want := a.s.sign(sharedKeyStringToSign(a.s.account, r))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return fail, authResult{}, errAuthFailed("The MAC signature found in the HTTP request is not the same as any computed signature.")
	}
	return pass, authResult{}, nil
}

// sasGrant is what a valid SAS allows.
type sasGrant struct {
	account       bool   // account SAS (else service SAS)
	perms         string // sp
	resourceTypes string // account SAS srt: s, c, o
	shareOnly     bool   // service SAS with sr=s
}

// allows reports whether the grant permits permission letter perm on a
// resource of account-SAS type rt ('s' service, 'c' share/directory, 'o' file).
func (g *sasGrant) allows(perm byte, rt byte) bool {
	if !strings.ContainsRune(g.perms, rune(perm)) {
		return false
	}
	if g.account && !strings.ContainsRune(g.resourceTypes, rune(rt)) {
		return false
	}
	return true
}

// sasAuth checks account SAS (ss, srt) and service SAS (sr) tokens.
type sasAuth struct{ s signer }

func (a sasAuth) authenticate(r *http.Request, now time.Time) (verdict, authResult, error) {
	q := r.URL.Query()
	if q.Get("sig") == "" {
		return notMine, authResult{}, nil
	}
	if q.Get("si") != "" {
		return fail, authResult{}, errAuthFailed("Stored access policies are not supported.")
	}
	if q.Get("skoid") != "" {
		return fail, authResult{}, errAuthFailed("User delegation SAS is not supported.")
	}
	sv := q.Get("sv")
	if !validVersion(sv) {
		return fail, authResult{}, errAuthFailed("The signed version (sv) is missing or invalid.")
	}
	var sts string
	var g sasGrant
	switch {
	case q.Get("ss") != "" || q.Get("srt") != "":
		if !strings.Contains(q.Get("ss"), "f") {
			return fail, authResult{}, newError(http.StatusForbidden, CodeAuthorizationServiceMismatch,
				"This request is not authorized to perform this operation using this service.")
		}
		sts = strings.Join([]string{a.s.account, q.Get("sp"), q.Get("ss"), q.Get("srt"), q.Get("st"), q.Get("se"),
			q.Get("sip"), q.Get("spr"), sv, q.Get("ses"), ""}, "\n")
		g = sasGrant{account: true, perms: q.Get("sp"), resourceTypes: q.Get("srt")}
	case q.Get("sr") == "s" || q.Get("sr") == "f":
		p, err := parsePath(r.URL.EscapedPath(), true)
		if err != nil || p.Share == "" {
			return fail, authResult{}, errAuthFailed("A service SAS must address a share or a file.")
		}
		name := "/file/" + a.s.account + "/" + p.Share
		if q.Get("sr") == "f" {
			if len(p.Parts) == 0 {
				return fail, authResult{}, errAuthFailed("A file SAS must address a file.")
			}
			name += "/" + p.Path()
		}
		sts = strings.Join([]string{q.Get("sp"), q.Get("st"), q.Get("se"), name, q.Get("si"), q.Get("sip"),
			q.Get("spr"), sv, q.Get("rscc"), q.Get("rscd"), q.Get("rsce"), q.Get("rscl"), q.Get("rsct")}, "\n")
		g = sasGrant{perms: q.Get("sp"), shareOnly: q.Get("sr") == "s"}
	default:
		return fail, authResult{}, errAuthFailed("The SAS token names no known resource (sr or ss/srt).")
	}
	if !hmac.Equal([]byte(a.s.sign(sts)), []byte(q.Get("sig"))) {
		return fail, authResult{}, errAuthFailed("Signature did not match. String to sign used was " + strings.ReplaceAll(sts, "\n", "\\n"))
	}
	if err := checkSASWindow(q, now); err != nil {
		return fail, authResult{}, err
	}
	if q.Get("spr") == "https" {
		if r.TLS == nil {
			return fail, authResult{}, newError(http.StatusForbidden, CodeAuthorizationProtocolMismatch,
				"This request is not authorized to perform this operation using this protocol.")
		}
	}
	if sip := q.Get("sip"); sip != "" && !ipInRange(r.RemoteAddr, sip) {
		return fail, authResult{}, newError(http.StatusForbidden, CodeAuthorizationSourceIPMismatch,
			"This request is not authorized to perform this operation using this source IP.")
	}
	return pass, authResult{sas: &g}, nil
}

// checkSASWindow checks st ≤ now ≤ se (times as signed: ISO 8601).
func checkSASWindow(q url.Values, now time.Time) error {
	expired := newError(http.StatusForbidden, CodeAuthenticationFailed,
		"Signed expiry time must be after signed start time and the current time must be within the window.")
	se, err := parseSASTime(q.Get("se"))
	if err != nil || now.After(se) {
		return expired
	}
	if st := q.Get("st"); st != "" {
		t, err := parseSASTime(st)
		if err != nil || now.Before(t.Add(-5*time.Minute)) {
			return expired
		}
	}
	return nil
}

// parseSASTime accepts the ISO 8601 forms SAS tokens carry.
func parseSASTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errInvalidHeader("se", v)
}

// ipInRange reports whether the host of remote is within "a" or "a-b".
func ipInRange(remote, sip string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	lo, hi, _ := strings.Cut(sip, "-")
	l, h := net.ParseIP(lo), net.ParseIP(hi)
	if ip == nil || l == nil {
		return false
	}
	if h == nil {
		return ip.Equal(l)
	}
	ip16, l16, h16 := ip.To16(), l.To16(), h.To16()
	return bytes.Compare(ip16, l16) >= 0 && bytes.Compare(ip16, h16) <= 0
}
