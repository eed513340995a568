package storagehttp

import (
	"bytes"
	"crypto/hmac"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/blobshare/blobshare/acl"
)

// SAS checks account SAS tokens (ss, srt) and, when the service supplies
// ServiceStringToSign, service SAS tokens.
type SAS struct {
	Signer Signer
	// Service is the service's letter in an account SAS's ss: 'b' blob,
	// 'q' queue, 't' table, 'f' file.
	Service byte
	// ServiceStringToSign returns the string-to-sign of a service SAS on r
	// and the resource it grants (SASGrant.Resource), or an error (an
	// *Error, usually AuthFailed) when the token or URL does not fit the
	// service. nil: only account SAS.
	ServiceStringToSign func(account string, r *http.Request, q url.Values) (sts, resource string, err error)
	// StoredPolicy resolves the stored access policy si of the resource a
	// service SAS on r addresses (ok false: there is no such policy).
	// nil: a SAS naming a stored access policy is refused.
	StoredPolicy func(r *http.Request, si string) (p AccessPolicy, ok bool, err error)
	// SourceToken checks the bearer token of a copy source's
	// x-ms-copy-source-authorization (AuthorizeCopySource); nil refuses
	// it (no --oauth).
	SourceToken Authenticator
	// UserDelegationStringToSign returns the string-to-sign of a user
	// delegation SAS (skoid…) on r and the resource it grants, as
	// ServiceStringToSign does for a service SAS; the signature is checked
	// with the key derived from the SAS's sk fields (userDelegationKey).
	// nil: user delegation SAS are refused.
	UserDelegationStringToSign func(account string, r *http.Request, q url.Values) (sts, resource string, err error)
}

// AccessPolicy is a stored access policy: zero fields are left to the SAS
// that names it. A field may be given by the policy or by the SAS, not by
// both.
type AccessPolicy struct {
	Start, Expiry time.Time
	Permission    string
}

var _ Authenticator = SAS{}

// Authenticate implements Authenticator.
func (a SAS) Authenticate(r *http.Request, now time.Time) (Verdict, Grant, error) {
	q := r.URL.Query()
	if q.Get("sig") == "" {
		return NotMine, Grant{}, nil
	}
	si := q.Get("si")
	if si != "" && (a.StoredPolicy == nil || q.Get("ss") != "" || q.Get("srt") != "") {
		return Fail, Grant{}, AuthFailed("Stored access policies are not supported for this SAS.")
	}
	if q.Get("skoid") != "" && a.UserDelegationStringToSign == nil {
		return Fail, Grant{}, AuthFailed("User delegation SAS is not supported by this service.")
	}
	sv := q.Get("sv")
	if !ValidVersion(sv) {
		return Fail, Grant{}, AuthFailed("The signed version (sv) is missing or invalid.")
	}
	var sts string
	var g SASGrant
	signer := a.Signer
	switch {
	case q.Get("skoid") != "":
		k, err := a.userDelegationKey(q, now)
		if err != nil {
			return Fail, Grant{}, err
		}
		s, res, err := a.UserDelegationStringToSign(a.Signer.Account, r, q)
		if err != nil {
			return Fail, Grant{}, err
		}
		signer, sts = k, s
		g = SASGrant{Permissions: q.Get("sp"), Resource: res}
	case q.Get("ss") != "" || q.Get("srt") != "":
		if !strings.ContainsRune(q.Get("ss"), rune(a.Service)) {
			return Fail, Grant{}, NewError(http.StatusForbidden, CodeAuthorizationServiceMismatch,
				"This request is not authorized to perform this operation using this service.")
		}
		fields := []string{a.Signer.Account, q.Get("sp"), q.Get("ss"), q.Get("srt"), q.Get("st"), q.Get("se"),
			q.Get("sip"), q.Get("spr"), sv}
		// Version 2020-12-06 added the encryption scope; both forms
		// end with a newline.
		if sv >= "2020-12-06" {
			fields = append(fields, q.Get("ses"))
		}
		sts = strings.Join(append(fields, ""), "\n")
		g = SASGrant{Account: true, Permissions: q.Get("sp"), ResourceTypes: q.Get("srt")}
	case a.ServiceStringToSign != nil:
		s, res, err := a.ServiceStringToSign(a.Signer.Account, r, q)
		if err != nil {
			return Fail, Grant{}, err
		}
		sts = s
		g = SASGrant{Permissions: q.Get("sp"), Resource: res}
	default:
		return Fail, Grant{}, AuthFailed("The SAS token names no known resource (sr or ss/srt).")
	}
	if !hmac.Equal([]byte(signer.Sign(sts)), []byte(q.Get("sig"))) {
		return Fail, Grant{}, AuthFailed("Signature did not match. String to sign used was " + strings.ReplaceAll(sts, "\n", "\\n"))
	}
	if si != "" {
		merged, err := a.applyPolicy(r, q, si)
		if err != nil {
			return Fail, Grant{}, err
		}
		q = merged
		g.Permissions = q.Get("sp")
	}
	if err := checkSASWindow(q, now); err != nil {
		return Fail, Grant{}, err
	}
	if q.Get("spr") == "https" && r.TLS == nil {
		return Fail, Grant{}, NewError(http.StatusForbidden, CodeAuthorizationProtocolMismatch,
			"This request is not authorized to perform this operation using this protocol.")
	}
	if sip := q.Get("sip"); sip != "" && !ipInRange(r.RemoteAddr, sip) {
		return Fail, Grant{}, NewError(http.StatusForbidden, CodeAuthorizationSourceIPMismatch,
			"This request is not authorized to perform this operation using this source IP.")
	}
	if err := a.checkDelegatedUser(r, q, now); err != nil {
		return Fail, Grant{}, err
	}
	return Pass, Grant{SAS: &g}, nil
}

// checkSASWindow checks st ≤ now ≤ se (times as signed: ISO 8601), with
// five minutes of tolerance for the start.
func checkSASWindow(q url.Values, now time.Time) error {
	// Azure answers the common AuthenticationFailed message and puts the
	// reason in AuthenticationErrorDetail, as for a bad signature.
	expired := AuthFailed("Signed expiry time must be after signed start time and the current time must be within the window.")
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

// parseSASTime accepts the ISO 8601 forms SAS tokens carry (the forms of
// a stored access policy's times, acl.TimeLayouts).
func parseSASTime(v string) (time.Time, error) {
	for _, layout := range acl.TimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, InvalidHeader("se", v)
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

// applyPolicy returns q with the fields the stored access policy si
// supplies (sp, st, se). A missing policy, or a field both the policy and
// the SAS give, is 403 AuthenticationFailed.
func (a SAS) applyPolicy(r *http.Request, q url.Values, si string) (url.Values, error) {
	p, ok, err := a.StoredPolicy(r, si)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, AuthFailed("The stored access policy " + si + " does not exist.")
	}
	merged := url.Values{}
	for k, v := range q {
		merged[k] = v
	}
	for _, f := range []struct {
		name  string
		value string
	}{
		{"sp", p.Permission},
		{"st", formatPolicyTime(p.Start)},
		{"se", formatPolicyTime(p.Expiry)},
	} {
		if f.value == "" {
			continue
		}
		if q.Get(f.name) != "" {
			return nil, AuthFailed("The field " + f.name + " is given by both the SAS and the stored access policy " + si + ".")
		}
		merged.Set(f.name, f.value)
	}
	return merged, nil
}

func formatPolicyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
